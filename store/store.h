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
#define STORE_EDAMAGED (-5) /* a stored value does not decode: a damaged record (err names it) */

typedef struct store store; /* an open environment */

/* Opens (creating directory and files on first use) the store at path.
 * read_only: 1 opens without creating or writing. Returns STORE_OK and
 * *out, or an error with a message in err naming the path and what to do.
 * A read-only open of a store whose lock.mdb this user may not write (a
 * shared results store; or no lock.mdb in a directory it may not write)
 * reads without LMDB's lock file (MDB_NOLOCK): nothing is written there,
 * but a writer committing at the same time is not seen by the lock, so
 * such a read is only as safe as the store is quiet (a shared, finished
 * store is). */
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

/* In one transaction (no other writer can come between a read and its write): writes each
 * r[i] for which still(held, &r[i], ctx) is non-zero, held being the record the store holds
 * at its key now (NULL: none); a damaged record there is left alone. For a caller that
 * computed r from records it read earlier and must not overwrite what another process
 * wrote since. *written (may be NULL) counts the records written. */
typedef int (*store_still_fn)(const record *held, const record *r, void *ctx);
int store_put_many_if(store *s, const record *r, size_t n, store_still_fn still, void *ctx,
                      size_t *written);

/* Reads the record at key into *out: STORE_OK, STORE_NOTFOUND,
 * STORE_EDAMAGED (the value is there but does not decode; err says why),
 * or another error. */
int store_get(store *s, const char *key, record *out);

/* Damaged records: a value that does not decode (not JSON, a record
 * record_from_json refuses, key fields that are not its key). By default
 * a read that meets one fails with STORE_EDAMAGED naming its key. With a
 * handler set, store_scan skips it, store_merge skips a damaged source
 * record and replaces a damaged destination record, and
 * store_put_if_better replaces one; each calls fn(path, key, why, count,
 * ctx) once per (store path, key) for the life of the handle (a retried
 * transaction or a second scan does not repeat it), count being the
 * damaged records reported so far (1, 2, ...). key is printable text
 * (text_clean), why a short reason ("value is not JSON"). fn runs inside a
 * read transaction: it must not use the store. */
typedef void (*store_damaged_fn)(const char *path, const char *key, const char *why, long count,
                                 void *ctx);
void store_on_damaged(store *s, store_damaged_fn fn, void *ctx);
/* Damaged records reported through the handler so far (0 without one). */
long store_damaged(const store *s);

/* The longest key a store holds (a key is DEVICE|PROBLEM|BUILD|CONFIG|MODE). */
#define STORE_KEY_MAX 511

/* Deletes the record at key, in its own transaction, only when its value
 * does not decode (a damaged record), or whatever it holds when force is
 * 1. STORE_OK, STORE_NOTFOUND, STORE_EINVAL (it decodes and force is 0;
 * err says so), or an error. */
int store_remove(store *s, const char *key, int force);

/* Calls fn for every record whose key starts with prefix ("" for all), in
 * key order; stops early when fn returns non-zero. Returns STORE_OK or an
 * error. A record that fails to decode is skipped when a damaged-record
 * handler is set (store_on_damaged), else it ends the scan with
 * STORE_EDAMAGED naming its key in err (the records before it were
 * delivered). */
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
