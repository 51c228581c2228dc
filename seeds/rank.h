/* rank.h - ranking stored results and writing Top-K seeds.
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
 * Seeds format: seeds/README.md and docs/seeds.md (docs/seeds.schema.json).
 */
#ifndef RANK_H
#define RANK_H

#include <stdio.h>

#include "../store/store.h"

typedef struct rank_filter {
    const char *device;  /* exact GPU name, or NULL for all */
    const char *problem; /* space_problem_format text, or NULL */
    const char *mode;    /* a mode of store/mode.h; NULL: every mode, one group each */
    int variants;        /* 1: rank kernel variants' records too; 0: count them only */
} rank_filter;

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

/* Prints the human table of every group to out. */
void rank_print(const rank_result *r, FILE *out);
/* The result as one JSON document (the --json form: {"schema":
 * RANK_TOPK_SCHEMA, "groups": [seeds-file documents]}); NULL when out of
 * memory. */
struct cJSON;
struct cJSON *rank_json(const rank_result *r);

/* Writes one seeds file per group under dir (created if missing), named
 * DEVICE_PROBLEM_MODE.json by group_file_names (seeds/README.md, "File
 * name": no hash unless two groups of r share a plain name; two groups
 * never share a file), each written to a temp file then renamed. Before
 * anything is written every name and every existing file is checked: names
 * that cannot be told apart, or a file there that holds another group's
 * seeds (group_file_foreign: the whole file is read), are an error and
 * nothing is written. Prints each path written to `paths` when non-NULL.
 * Returns 0, or -1 with one line in err (the groups, the file, errno text). */
int rank_write_seeds(const rank_result *r, const char *dir, FILE *paths, char *err, size_t errlen);

/* Writes r->src->dir/DEVICE_PROBLEM_MODE.RANK.cuh for every seed whose
 * source this binary has (its family's template, or a variant's file that
 * still hashes to the record's kernel_hash): the source text behind a
 * first line `// fasweep: problem=P config=C mode=M` that `fasweep eval
 * --kernel FILE` reads when --problem/--config are absent, then comment
 * lines saying where it came from. The seeds' source.file names them.
 * Prints each path to `paths` when non-NULL. Returns 0 (also when
 * r->src or its dir is NULL), or -1 with err naming the file. */
int rank_write_sources(const rank_result *r, FILE *paths, char *err, size_t errlen);

/* The first line of an emitted source, as rank_write_sources writes it:
 * "// fasweep: problem=P config=C mode=M". */
#define RANK_SOURCE_TAG "// fasweep:"

#endif /* RANK_H */
