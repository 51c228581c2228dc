/* group.h - one (device, problem, mode) group of the store, laid over the
 * grid of a space: every point of the grid with the planner's verdict and
 * the record that stands for it. The tuner exports (seeds/tuner.h) and the
 * report (seeds/report.h) are drawn from this.
 *
 * The record that stands for a config is its best "ok" kernel record in
 * the ranking order (record_rank_order: median, noise, config), over every
 * build but the kernel variants of `fasweep eval --kernel` (build ids
 * starting with GROUP_VARIANT_PREFIX: a variant is another kernel, not a
 * point of this grid); when none is ok, the newest failed one; when there
 * is none, the point was not measured (NULL).
 *
 * Without a space the grid is the product of the axis values the group's
 * records hold (sorted), and only the static rules that need no space
 * (head_dim, warp_rows, chunks) reject points.
 *
 * The grid is one kernel family's (the space's, else the default, mma):
 * records of another family rank with the group (seeds/rank.h) but stand
 * for no cell.
 */
#ifndef GROUP_H
#define GROUP_H

#include <stddef.h>

#include "../kernels/family.h"
#include "../store/store.h"
#include "../grid/plan.h"
#include "../grid/space.h"

/* Build ids of kernel variants compiled by `fasweep eval --kernel`. */
#define GROUP_VARIANT_PREFIX "src-"

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

typedef struct group {
    char device[64], problem[48], mode[8];
    record *recs; /* every record of the group: kernels of every build, baselines */
    size_t n_recs;
    /* the grid (group_lay_out) */
    int family; /* the grid's kernel family (kernels/family.h index) */
    int axis_len[SPACE_AXIS_COUNT];
    int axis[SPACE_AXIS_COUNT][SPACE_MAX_AXIS];
    group_cell *cells; /* BLOCK_M outermost ... SWIZZLE innermost, as the planner */
    size_t n_cells;
    long smem_limit; /* the space's; 0 without one */
    int from_space;  /* 1: laid over a space's grid; 0: over the records' own axes */
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
 * Returns 1
 * when s held the problem, 0 when the records' axes were used, -1 when out
 * of memory or the records' axes do not fit SPACE_MAX_AXIS. */
int group_lay_out(group *g, const space *s);

/* Whether a build id is a kernel variant's. */
int group_is_variant(const char *build);

/* The file name of a group's file: DEVICE_PROBLEM_MODE then suffix
 * (".json"), a function of the group alone (never of a filter or of the
 * other groups), and one that two groups never share: a device name or
 * problem text that its slug does not give back (lower case, punctuation,
 * odd bytes) gets 8 hex digits of its hash too ("nvidia-l4" is "NVIDIA
 * L4"; "nvidia l4" is "nvidia-l4-1f0c2a9b"). Any '/' or other odd byte
 * becomes '-', so the name never leaves its directory. */
void group_file_name(const char *device, const char *problem, const char *mode, const char *suffix,
                     char *buf, size_t n);

/* The narrowest store key prefix for a device and problem (either may be
 * NULL): "", "DEVICE|" or "DEVICE|PROBLEM|". */
void group_key_prefix(const char *device, const char *problem, char *buf, size_t n);

#endif /* GROUP_H */
