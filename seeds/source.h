/* source.h - a seed's kernel source: the text it was measured from, as far
 * as this binary knows it, and its standalone file (`topk --emit-source`;
 * docs/seeds.md, "source").
 *
 * An instance of a family's template has its family's template text as
 * this binary embeds it (rank_sources.template_text), the same as measured
 * when the record's build is this binary's. A kernel variant (`fasweep
 * eval --kernel`) has its own file, read again only when it is a regular
 * file of at most 4 MiB that still hashes (FNV-1a 64) to the record's
 * kernel_hash; then it is the text measured.
 *
 * A standalone source is the text behind a first line SOURCE_TAG
 * "problem=P config=C mode=M" that `fasweep eval --kernel FILE` reads when
 * --problem/--config are absent, then comment lines saying where it came
 * from (a text that already begins with a tag line has it replaced, not
 * stacked).
 */
#ifndef SOURCE_H
#define SOURCE_H

#include <stddef.h>

#include "rank.h"

/* The first line of an emitted source: "// fasweep: problem=P config=C
 * mode=M". */
#define SOURCE_TAG "// fasweep:"

/* The source a seed was measured from. */
typedef struct source_seed {
    char *text;       /* malloc'd (the caller frees it), or NULL: not available */
    const char *path; /* the template's path, or the variant's file */
    int same_build;   /* 1: text is what was measured (build matches, or the hash) */
} source_seed;

/* The source of record r, told by src (NULL: no template texts). */
source_seed source_of(const rank_sources *src, const record *r);

/* r's config as `fasweep eval --config` takes it: FAMILY:TEXT, but the
 * text alone for the default family. */
void source_config(const record *r, char *buf, size_t n);

/* The standalone source's path of seed i of g:
 * src->dir/DEVICE_PROBLEM_MODE.RANK.cuh (the group's file name,
 * group_file_name, with the rank i + 1). */
void source_file(const rank_sources *src, const rank_group *g, int i, char *buf, size_t n);

/* The text of seed i of g's standalone source (so->text not NULL): the tag
 * line, where it came from, then the source as measured. malloc'd, NULL
 * when out of memory. */
char *source_emitted(const rank_group *g, int i, const source_seed *so);

#endif /* SOURCE_H */
