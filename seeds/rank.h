/* rank.h - ranking stored results: the Top-K of each group.
 *
 * A ranking covers one (device, problem, mode) group: records of different
 * GPU models, problems or modes are never ranked together. Kernel
 * records with status "ok" are ranked by median time, ties broken by lower
 * noise, then by config text. Baseline records are not ranked; the fastest
 * "ok" baseline of the group gives each entry's speedup. Records of kernel
 * variants (edited sources measured by `fasweep eval --kernel`, build
 * src-HASH: record_is_variant) are ranked only when the filter asks for
 * them, and are marked as such in every form.
 * Cost: one store scan; a group of n records keeps its k best in a heap,
 * O(n log k) comparisons and at most k records of memory, for any k.
 *
 * The forms of a ranking are modules of their own: the human table
 * (table.h), the seeds documents (doc.h), the seeds files and standalone
 * sources (write.h; a seed's source: source.h). Seeds format:
 * seeds/README.md and docs/seeds.md (docs/seeds.schema.json).
 */
#ifndef RANK_H
#define RANK_H

#include "../store/store.h"

typedef struct rank_filter {
    const char *device;  /* exact GPU name, or NULL for all */
    const char *problem; /* space_problem_format text, or NULL */
    const char *mode;    /* a mode of store/mode.h; NULL: every mode, one group each */
    int variants;        /* 1: rank kernel variants' records too; 0: count them only */
} rank_filter;

/* Begins with a group's name as group.h's group_name does (rank_topk finds
 * a record's group with group_table_slot). */
typedef struct rank_group {
    char device[64], problem[48], mode[8];
    record *top; /* up to k best ok kernel records, fastest first */
    int n_top;
    record best_baseline; /* valid when has_baseline */
    int has_baseline;
    long n_ok, n_failed; /* kernel records of the group by status */
    long n_variants;     /* ok variant records left out (filter's variants 0) */
} rank_group;

/* What the seeds say about each seed's kernel source, and where the
 * standalone sources go (`topk --emit-source DIR`). Set by the caller (the
 * template texts live in the binary, not in this layer); every field may
 * be NULL: then a seed's source has no sha256 and no file. */
typedef struct rank_sources {
    /* The text of a family's template (its fa_family.header path) as this
     * binary embeds it, or NULL when it has none. */
    const char *(*template_text)(const char *header);
    const char *build;         /* this binary's build id (fa_build_id()) */
    const char *dir;           /* --emit-source DIR, or NULL: no files */
    const char *store_path;    /* the store the seeds came from, for the eval command */
    const struct space *space; /* topk --space: the gate's tolerances and the eval
                                  command's --space (space_path); NULL: the defaults */
    const char *space_path;
} rank_sources;

typedef struct rank_result {
    rank_group *groups; /* ordered by device, problem, then mode (the table's order) */
    int n_groups;
    const rank_sources *src; /* NULL: none (rank_topk sets NULL) */
} rank_result;

/* Ranks every group matching f, keeping the k best of each. Returns
 * STORE_OK (an empty store gives zero groups) or a store error. */
int rank_topk(store *s, const rank_filter *f, int k, rank_result *out);
void rank_free(rank_result *r);

/* Speedup of r over g's best baseline (its median over r's), or 0 when
 * there is none (or either median is not positive). */
double rank_speedup(const rank_group *g, const record *r);

#endif /* RANK_H */
