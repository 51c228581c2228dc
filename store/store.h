/* store.h - the persistent results store: one LMDB environment, one record
 * (record.h) per key DEVICE|PROBLEM|BUILD|CONFIG|MODE, the value the
 * record's JSON form (readable with mdb_dump).
 *
 * Every write is its own transaction, committed before the call returns:
 * a result is on disk as soon as store_put returns 0. A full map is grown
 * (doubled) and the write retried; a map grown by another process is
 * adopted. The map starts at 64 MiB; the environment variable
 * FASWEEP_STORE_MAPSIZE (bytes, >= 32768) sets the start size of a store
 * being created (for tests of the growth path).
 * A meta database holds the schema version; opening a store written by a
 * newer schema fails with STORE_ESCHEMA.
 *
 * Concurrency: LMDB's lock file lets several processes write one store at
 * once (writes are serialized, nothing is lost). The store must be on a
 * local file system: LMDB's locks and shared memory map do not work over
 * NFS. No call keeps a transaction open after it returns (store_scan reads
 * in batches and calls fn with none open), so a process may fork() while a
 * store is open and fn may write to the store it scans; but a forked child
 * must not use its parent's handle: it opens its own. One process must not
 * open one store twice (an LMDB rule; store_merge refuses a store into
 * itself). A handle is not thread-safe: one call at a time (map growth
 * remaps the file under any open transaction). It is opened MDB_NOTLS, so
 * a reader slot belongs to a transaction, not a thread: a handle may move
 * between threads, and threads leave no stale slots behind.
 *
 * Return codes (every int-returning function): STORE_OK (0) or one of the
 * negative STORE_E* values; store_strerror() names it. STORE_NOTFOUND (1)
 * only where a function says so.
 */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>

#include "record.h"

/* The store's format version (meta "schema"). */
#define STORE_SCHEMA_VERSION 1

#define STORE_OK 0
#define STORE_NOTFOUND 1
#define STORE_EIO (-1)     /* LMDB or the file system failed (see err text) */
#define STORE_ESCHEMA (-2) /* store written by a newer fasweep */
#define STORE_EINVAL (-3)  /* a record or argument is malformed */
#define STORE_ENOMEM (-4)

typedef struct store store; /* an open environment */

/* Opens (creating directory and files on first use) the store at path.
 * read_only: 1 opens without creating or writing. Returns STORE_OK and
 * *out, or an error with a message in err naming the path and what to do. */
int store_open(const char *path, int read_only, store **out, char *err, size_t errlen);
void store_close(store *s);

/* Writes r (replacing a record of the same key) in its own transaction.
 * A record record_check refuses is STORE_EINVAL. */
int store_put(store *s, const record *r);

/* Writes r only when the store holds no record of its key, or one that
 * r is better than (record_better), in one transaction; *written (may be
 * NULL) says whether it did. */
int store_put_if_better(store *s, const record *r, int *written);

/* Writes all n records in one transaction: all or none. */
int store_put_many(store *s, const record *r, size_t n);

/* Reads the record at key into *out: STORE_OK, STORE_NOTFOUND, or error. */
int store_get(store *s, const char *key, record *out);

/* Calls fn for every record whose key starts with prefix ("" for all), in
 * key order; stops early when fn returns non-zero. Returns STORE_OK or an
 * error. A record that fails to decode is an error (STORE_EINVAL) naming
 * its key in err. */
typedef int (*store_visit_fn)(const record *r, void *ctx);
int store_scan(store *s, const char *prefix, store_visit_fn fn, void *ctx);

/* Records in the store; -1 on error (store_last_error says why). */
long store_count(store *s);

typedef struct store_merge_stats {
    long added;    /* keys new to the destination */
    long replaced; /* clashes where the source record was better */
    long kept;     /* clashes where the destination's was kept */
} store_merge_stats;

/* Whether the paths a and b name one store: the same directory (by any
 * name, also when it does not exist yet), or directories whose data.mdb is
 * one file (a hard link). */
int store_same(const char *a, const char *b);

/* Merges the store at src_path into dst by record_better, in one
 * transaction (it reads src inside one LMDB write transaction on dst). src
 * is opened read-only. A src that is dst (store_same) is refused with
 * STORE_EINVAL. */
int store_merge(store *dst, const char *src_path, store_merge_stats *st, char *err, size_t errlen);

/* Text of the last error on s (path, LMDB message, what to do). */
const char *store_last_error(const store *s);
/* Sets that text (printf format) for a failure found outside store.c, e.g.
 * a write error in store_export. Returns code. */
int store_set_error(store *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *store_strerror(int code);

#endif /* STORE_H */
