/* rank.h - ranking stored results and writing Top-K seeds.
 *
 * A ranking covers one (device, problem, mode) group: records of different
 * GPU models, problems or L2 modes are never ranked together. Kernel
 * records with status "ok" are ranked by median time, ties broken by lower
 * noise, then by config text. Baseline records are not ranked; the fastest
 * "ok" baseline of the group gives each entry's speedup.
 * Cost: one store scan; a group of n records keeps its k best in a heap,
 * O(n log k) comparisons and at most k records of memory, for any k.
 * Seeds format: seeds/README.md.
 */
#ifndef RANK_H
#define RANK_H

#include <stdio.h>

#include "../store/store.h"

typedef struct rank_filter {
    const char *device;  /* exact GPU name, or NULL for all */
    const char *problem; /* space_problem_format text, or NULL */
    const char *mode;    /* a mode of store/mode.h; NULL: mode_default() (hot) */
} rank_filter;

typedef struct rank_group {
    char device[64], problem[48], mode[8];
    record *top; /* up to k best ok kernel records, fastest first */
    int n_top;
    record best_baseline; /* valid when has_baseline */
    int has_baseline;
    long n_ok, n_failed; /* kernel records of the group by status */
} rank_group;

typedef struct rank_result {
    rank_group *groups; /* ordered by device, then problem */
    int n_groups;
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
/* Writes rank_json's document to out; 0, or -1. */
int rank_print_json(const rank_result *r, FILE *out);

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

#endif /* RANK_H */
