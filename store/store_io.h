/* store_io.h - moving results between stores and files: CSV and JSON-lines
 * export, all-or-nothing JSON-lines import, and merging other stores.
 * Return codes as in store.h. */
#ifndef STORE_IO_H
#define STORE_IO_H

#include <stdio.h>

#include "store.h"

typedef enum store_format { STORE_FMT_CSV, STORE_FMT_JSONL } store_format;

/* Writes every record whose key starts with prefix to out, one per line
 * (CSV with a header row; flat columns). Returns STORE_OK or an error. */
int store_export(store *s, const char *prefix, store_format fmt, FILE *out);

/* Reads JSON lines (one store_record_to_json object per line; blank lines
 * skipped) and writes them in one transaction. Any bad line aborts with
 * STORE_EINVAL, "NAME:N: ..." in err (name, 1-based line), and nothing
 * written. A key given on two lines: the later line wins. *n_out gets the
 * number of records written. */
int store_import_jsonl(store *s, FILE *in, const char *name, long *n_out, char *err, size_t errlen);

typedef struct store_merge_stats {
    long added;    /* keys new to the destination */
    long replaced; /* clashes where the source record was better */
    long kept;     /* clashes where the destination's was kept */
} store_merge_stats;

/* Merges the store at src_path into dst by store_record_better, in one
 * transaction. src is opened read-only. A src that is dst (the same
 * directory by any path) is refused with STORE_EINVAL. Defined in store.c:
 * it reads src inside one LMDB write transaction on dst. */
int store_merge(store *dst, const char *src_path, store_merge_stats *st, char *err, size_t errlen);

#endif /* STORE_IO_H */
