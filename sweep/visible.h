/* visible.h - CUDA_VISIBLE_DEVICES read as CUDA reads it, without CUDA (so without its
 * start-up): the one place of that rule in C (scripts/cuda_visible.sh is the scripts' copy,
 * which also checks UUIDs against nvidia-smi's).
 *
 * The value is a comma-separated list; each entry, blanks (space, tab) around it trimmed, is
 * an ordinal (decimal digits) or a UUID ("GPU-..." or "MIG-..."). CUDA sees the entries up
 * to the first that names no GPU: an ordinal not below the count of GPUs, or text that is
 * neither form. A UUID is taken as naming a GPU (only a driver can say which).
 */
#ifndef VISIBLE_H
#define VISIBLE_H

#include <stddef.h>

/* How many of v's entries CUDA would see among n GPUs (n 0: unknown, every ordinal taken),
 * at most n when n is known. */
int visible_count(const char *v, int n);

/* Entry k (from 0) of v, trimmed, into out (n bytes). 0, or -1 when v has no entry k or the
 * entry does not fit. */
int visible_entry(const char *v, int k, char *out, size_t n);

#endif /* VISIBLE_H */
