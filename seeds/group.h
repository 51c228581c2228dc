/* group.h - one (device, problem, mode) group of the store, laid over the
 * grid of a space: every point of the grid with the planner's verdict and
 * the record that stands for it. The tuner exports (export/tuner.h) and the
 * report (report/report.h) are drawn from this.
 *
 * The record that stands for a config is its best "ok" kernel record in
 * the ranking order (record_rank_order: median, noise, config), over every
 * build but the kernel variants of `fasweep eval --kernel` (build ids
 * starting with RECORD_VARIANT_PREFIX: a variant is another kernel, not a
 * point of this grid); when none is ok, the newest failed one; when there
 * is none, the point was not measured (NULL).
 *
 * Without a space the grid is the product of the axis values the group's
 * records hold (sorted), and only the static rules that need no space
 * (every rule but smem) reject points.
 *
 * The grid is one kernel family's, its axes named by that family's table
 * (space_axis_name(g->family, a)): the space's own family or another it
 * sweeps ("families"), as asked; without a space the family of most of
 * the group's kernel records. Records of another family rank with the
 * group (seeds/rank.h) but stand for no cell.
 */
#ifndef GROUP_H
#define GROUP_H

#include <stddef.h>

#include "../kernels/family.h"
#include "../store/store.h"
#include "../grid/plan.h"
#include "../grid/space.h"

typedef struct group_filter {
    const char *device;  /* exact GPU name, or NULL for any */
    const char *problem; /* space_problem_format text, or NULL for any */
    const char *mode;    /* a mode of store/mode.h's table, or NULL for any */
} group_filter;

typedef struct group_cell {
    fa_config cfg;
    plan_reason reason; /* PLAN_OK when the rules accept it */
    long smem_bytes;    /* plan_smem_bytes(&cfg) */
    const record *rec;  /* the record standing for it, or NULL: not measured */
} group_cell;

/* The name a group struct begins with (group, rank_group of rank.h): the
 * device, problem text and mode its records share. */
typedef struct group_name {
    char device[64], problem[48], mode[8];
} group_name;

/* Whether struct type T begins with a group_name's fields, for
 * _Static_assert beside a struct that group_table_slot names. */
#define GROUP_NAMED(T)                                                                             \
    (offsetof(T, device) == 0 && offsetof(T, problem) == offsetof(group_name, problem) &&          \
     offsetof(T, mode) == offsetof(group_name, mode) &&                                            \
     sizeof(((T *)0)->mode) == sizeof(((group_name *)0)->mode))

/* The growing table of groups one store scan fills (group_load's groups,
 * rank_topk's): n structs of `size` bytes at items, each beginning with a
 * group_name (GROUP_NAMED), and beside each side_size bytes of the scan's
 * own at side (a capacity, a heap). Start it zeroed but for size and
 * side_size; items and side are malloc'd, the caller's to keep or free. */
typedef struct group_table {
    void *items, *side;
    size_t size, side_size;
    int n, cap;
} group_table;

/* The index of r's group in t; when it has none, a new one appended (its
 * struct and side bytes zeroed, named after r), the arrays grown by
 * doubling. -1 when out of memory (t stays valid). Searched from the last:
 * records arrive in key order. */
int group_table_slot(group_table *t, const record *r);

typedef struct group {
    char device[64], problem[48], mode[8];
    record *recs; /* every record of the group: kernels of every build, baselines */
    size_t n_recs;
    /* the grid (group_lay_out) */
    int family; /* the grid's kernel family (kernels/family.h index): it names the axes */
    int axis_len[SPACE_AXIS_COUNT];
    int axis[SPACE_AXIS_COUNT][SPACE_MAX_AXIS];
    group_cell *cells; /* the family's first axis outermost ... its last innermost, as the
                          planner */
    size_t n_cells;
    long smem_limit; /* the space's; 0 without one */
    int from_space;  /* 1: laid over a space's grid; 0: over the records' own axes */
    /* Why the group has no grid although it has records, or "": its
     * records hold more than SPACE_MAX_AXIS values on an axis and no space
     * gives its grid (group_lay_out). */
    char no_grid[96];
} group;

typedef struct group_set {
    group *groups; /* by device, problem, then mode in the table's order (mode.h) */
    int n;
} group_set;

/* Every group with a record matching f. Returns STORE_OK (no match gives
 * n == 0) or a store error. Free with group_set_free. */
int group_load(store *s, const group_filter *f, group_set *out);
void group_set_free(group_set *set);
/* Frees one group's arrays (its struct stays). */
void group_free(group *g);

/* Lays g over the grid of s for g's problem when s applies to g (its
 * target.gpu is "any", or g's device name starts with it, case aside:
 * "NVIDIA H100" covers "NVIDIA H100 80GB HBM3"; or g's records were
 * measured under s: their provenance holds its hash) and holds g's
 * problem; otherwise (s NULL too) over the axis values its records hold.
 * Records holding more than SPACE_MAX_AXIS values on an axis (an import
 * may) give no grid: n_cells 0 and g->no_grid says why, so one odd group
 * does not stop a report or export of the others. Returns 1 when s held the
 * problem, 0 when the records' axes were used (or gave no grid), -1 when
 * out of memory. The grid is the space's own family's ("axes"); without
 * a space that applies, the family of most of g's kernel records. */
int group_lay_out(group *g, const space *s);

/* group_lay_out over the grid of kernel family `family` (an index,
 * kernels/family.h) that s sweeps: its own ("axes") or one of its
 * "families"; -1 is group_lay_out. A space with no grid of that family
 * does not apply (the records' axes of that family are used). */
int group_lay_out_family(group *g, const space *s, int family);

/* The grid of family `family` in s (its own when family is -1 or s's):
 * 0 and *out, or -1 when s is NULL or sweeps no grid of it. */
int group_space_grid(const space *s, int family, space_grid *out);

/* Longest file name group_file_names makes, its NUL included. */
#define GROUP_NAME_LEN 256

/* A group as its file names see it: device, problem text and mode. */
typedef struct group_id {
    const char *device, *problem, *mode;
} group_id;

/* The plain file name of a group's file: DEVICE_PROBLEM_MODE then suffix
 * (".json"), by the rule of seeds/README.md ("File name"): DEVICE is the
 * device name lowercased, every run of characters outside [a-z0-9]
 * squeezed into one '-', none at either end ("unknown" when nothing is
 * left); PROBLEM the same keeping '.' too; MODE the mode. No hash: the
 * name is read off the group. Any '/' or other odd byte becomes '-', so the
 * name never leaves its directory. */
void group_file_name(const char *device, const char *problem, const char *mode, const char *suffix,
                     char *buf, size_t n);

/* The file names of the n groups one run writes (ids, each group once):
 * each its plain name (group_file_name), except that every group whose
 * plain name another group of the run shares gets "_" and 16 hex digits of
 * the FNV-1a 64 hash of "DEVICE|PROBLEM|MODE" before the suffix (so
 * "nviDiA-=+L4-" and "nvIdiA_=,l4__" get two hashed names when written
 * together, and each its plain name when written alone). names[i] is ids[i]'s.
 * Returns 0; or -1 when two names are still one after that (a hash
 * collision, or a plain name equal to a hashed one) or out of memory, with
 * one line in err naming both groups; nothing is written then. */
int group_file_names(const group_id *ids, size_t n, const char *suffix,
                     char (*names)[GROUP_NAME_LEN], char *err, size_t errlen);

/* The guard before a group's file is replaced: whether the file at path
 * (followed through a link) is a regular file holding a JSON document of
 * another group than id. It reads and parses the whole file; the document
 * names its group at the top (seeds: "device", "problem"."text", "mode"),
 * under "fasweep" (a Kernel Tuner cache) or under "metadata" (T4), each
 * with device, problem and mode. Returns 1 with one line in err naming the
 * file and both groups ("...; move it away or pass another `dir_option`"),
 * or the file and why it could not be read (a file it cannot read may be
 * another group's: refused too); 0 when it may be replaced: no such file
 * (a dangling link too), a file of the same group, or a file that is not a
 * group's document (not JSON, cut short, another schema, not a regular
 * file: file_write deals with nodes). */
int group_file_foreign(const char *path, const group_id *id, const char *dir_option, char *err,
                       size_t errlen);

/* store_scan of the records of device and problem (either may be NULL:
 * any), in key order, over the narrowest key prefix: "", "DEVICE|" or
 * "DEVICE|PROBLEM|". Returns store_scan's status. */
int group_store_scan(store *s, const char *device, const char *problem, store_visit_fn visit,
                     void *ctx);

#endif /* GROUP_H */
