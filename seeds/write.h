/* write.h - a ranking's files: one seeds file per group and the seeds'
 * standalone sources (`fasweep topk`, `topk --emit-source DIR`).
 *
 * Every file goes through store/file.h's writer: a temp file in the same
 * directory, synced, then renamed over the old one (a reader sees the old
 * file or the new one, never half). The directory and its parents are
 * created when missing ("--seeds-dir D exists but is not a directory"
 * when one is a file). File names: seeds/README.md, "File name".
 */
#ifndef WRITE_H
#define WRITE_H

#include <stddef.h>
#include <stdio.h>

#include "rank.h"

/* Writes one seeds file per group under dir (created if missing), named
 * DEVICE_PROBLEM_MODE.json by group_file_names (seeds/README.md, "File
 * name": no hash unless two groups of r share a plain name; two groups
 * never share a file), each the group's doc_seeds document. Before
 * anything is written every name and every existing file is checked: names
 * that cannot be told apart, or a file there that holds another group's
 * seeds (group_file_foreign: the whole file is read), are an error and
 * nothing is written. Prints each path written to `paths` when non-NULL.
 * Returns 0, or -1 with one line in err (the groups, the file, errno text). */
int write_seeds(const rank_result *r, const char *dir, FILE *paths, char *err, size_t errlen);

/* Writes r->src->dir/DEVICE_PROBLEM_MODE.RANK.cuh (source_file) for every
 * seed whose source this binary has (source_of: its family's template, or
 * a variant's file that still hashes to the record's kernel_hash), its
 * text source_emitted's: the SOURCE_TAG line `fasweep eval --kernel FILE`
 * reads, then where it came from, then the source. The seeds' source.file
 * names them. Prints each path to `paths` when non-NULL. Returns 0 (also
 * when r->src or its dir is NULL), or -1 with err naming the file. */
int write_sources(const rank_result *r, FILE *paths, char *err, size_t errlen);

#endif /* WRITE_H */
