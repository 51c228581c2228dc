/* store_io.h - moving results between stores and files: CSV and JSON-lines
 * export and the all-or-nothing JSON-lines import. (Merging two stores is
 * store_merge in store.h: it needs both stores' transactions.) Return
 * codes as in store.h. */
#ifndef STORE_IO_H
#define STORE_IO_H

#include <stdio.h>

#include "store.h"

typedef enum store_io_format { STORE_IO_CSV, STORE_IO_JSONL } store_io_format;

/* Writes every record whose key starts with prefix to out, one per line
 * (CSV with a header row; flat columns; a text cell starting with = + - @,
 * tab or CR is prefixed with ' so a spreadsheet does not run it as a
 * formula; numbers are written as numbers). Returns STORE_OK or an error.
 * A damaged record is skipped when s has a damaged-record handler
 * (store_on_damaged; store_damaged(s) counts them), else it is an error. */
int store_io_export(store *s, const char *prefix, store_io_format fmt, FILE *out);

/* Reads JSON lines (one record_to_json object per line; blank lines
 * skipped) and writes them in one transaction. Any bad line (a line over
 * 1 MiB, raw control characters, a \u0000 escape, or what
 * store_io_parse_line refuses) or a read error aborts with STORE_EINVAL,
 * "NAME:N: ..." in err (name, 1-based line), and nothing written; running
 * out of memory is STORE_ENOMEM, likewise with nothing written. A key given
 * on two lines: the later line wins. *n_out gets the number of records
 * written. */
int store_io_import(store *s, FILE *in, const char *name, long *n_out, char *err, size_t errlen);

/* One import line (len bytes, no NUL needed) into *r: JSON text without
 * raw control characters or \u0000, one object, a record
 * record_from_json accepts. 0, or -1 with the reason in why. */
int store_io_parse_line(const char *line, size_t len, record *r, char *why, size_t n);

#endif /* STORE_IO_H */
