/* store.c - the results store on LMDB (contract: store.h).
 *
 * One environment (a directory holding data.mdb and lock.mdb) with two named
 * databases: "results" (canonical key -> record JSON) and "meta" ("schema",
 * "created_by"). Every write goes through st_write(), which runs a callback
 * inside one write transaction and, when LMDB says the map is full, aborts,
 * grows the map and runs the callback again from scratch; so a callback must
 * be a pure function of its context. Reads never keep a transaction open
 * across calls, which is what makes map growth (a remap) and fork() safe.
 *
 * What a record is and how it reads and writes as JSON is record.c's; this
 * file only moves the JSON text in and out of LMDB.
 */
#include "store.h"

#include "file.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <lmdb.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "text.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

#define ST_MAP_INITIAL ((size_t)64 << 20)
#define ST_MAP_MIN ((size_t)32 << 10)
/* Doubling stops here: a results store this big is a bug, not data. */
#define ST_MAP_MAX ((size_t)1 << 40)
#define ST_ERR_LEN 1024
/* Records decoded per read transaction in store_scan (~1 KB each). */
#define ST_SCAN_BATCH 256
/* Attempts of one transaction: map growth doubles each time, so 40 covers
 * 32 KiB to 1 TiB with room for MDB_MAP_RESIZED races. */
#define ST_RETRY_MAX 48
/* LMDB's default largest key. */
#define ST_KEY_MAX STORE_KEY_MAX
/* What to do about a damaged store, for the end of every message that
 * says so. */
#define ST_DAMAGED_HINT                                                                            \
    "the store is damaged: restore it from a copy or an export (`fasweep import`), or "            \
    "`fasweep merge` what other stores hold into a new one; fasweep will not read it"

struct store {
    MDB_env *env;
    MDB_dbi results, meta;
    int read_only;
    char path[PATH_MAX];
    char err[ST_ERR_LEN];
    /* Damaged records: the handler, and the (path, key) hashes it was
     * called for (so each is reported once). */
    store_damaged_fn on_damaged;
    void *damaged_ctx;
    unsigned long long *damaged;
    long n_damaged, cap_damaged;
};

/* ---- error text ------------------------------------------------------------------------------ */

static int st_vfail(store *s, int code, const char *fmt, va_list ap)
{
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    return code;
}

/* Sets s->err; returns code so checks can end in `return st_fail(...)`. */
__attribute__((format(printf, 3, 4))) static int st_fail(store *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st_vfail(s, code, fmt, ap);
    va_end(ap);
    return code;
}

int store_set_error(store *s, int code, const char *fmt, ...)
{
    if (!s || !fmt)
        return code;
    va_list ap;
    va_start(ap, fmt);
    st_vfail(s, code, fmt, ap);
    va_end(ap);
    return code;
}

/* Formats into a caller's (err, errlen), which may be NULL/0. */
__attribute__((format(printf, 3, 4))) static void st_put_err(char *err, size_t errlen,
                                                             const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* What to do about an LMDB or errno code, for the end of a message. */
static const char *st_hint(int rc)
{
    switch (rc) {
    case ENOSPC:
    case MDB_MAP_FULL:
        return "free disk space (or address space) for the store";
    case EACCES:
    case EPERM:
    case EROFS:
        return "check that you may read and write there, or pass another --store";
    case MDB_READERS_FULL:
        return "too many processes have the store open; wait for some to finish";
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
        return ST_DAMAGED_HINT;
    case MDB_VERSION_MISMATCH:
        return "it was written by an incompatible LMDB version; export it with that version";
    case MDB_TXN_FULL:
        return "too many records for one transaction; import or merge in smaller pieces";
    case MDB_INCOMPATIBLE:
        return "it is not a fasweep results store; pass another --store";
    default:
        return "check the disk and the store's permissions; the store must be on a local file "
               "system (LMDB does not work over NFS)";
    }
}

/* "PATH: what: LMDB text; hint" for an LMDB or errno failure. */
/* Free bytes on the file system of path, or -1 when unknown. */
static long long st_free_bytes(const char *path)
{
    struct statvfs v;
    return statvfs(path, &v) == 0 ? (long long)v.f_bavail * (long long)v.f_frsize : -1;
}

/* Whether a failed write was the disk filling up. LMDB reports a short
 * write as EIO, so EIO counts as full when the file system has less room
 * than a store's growth could need (the larger of 16 MiB and the store). */
static int st_disk_full(const store *s, int rc)
{
    if (rc == ENOSPC || rc == EDQUOT)
        return 1;
    if (rc != EIO)
        return 0;
    char data[PATH_MAX + 16];
    struct stat st;
    snprintf(data, sizeof data, "%s/data.mdb", s->path);
    const long long have = st_free_bytes(s->path);
    const long long size = stat(data, &st) == 0 ? (long long)st.st_size : 0;
    return have >= 0 && have < (size > (16LL << 20) ? size : 16LL << 20);
}

static int st_fail_mdb(store *s, int rc, const char *what)
{
    if (st_disk_full(s, rc))
        return st_fail(s, STORE_EIO,
                       "%s: %s: the disk is full (%lld KiB free); the store is unchanged: free "
                       "some space, or pass another --store",
                       s->path, what, st_free_bytes(s->path) / 1024);
    return st_fail(s, rc == ENOMEM ? STORE_ENOMEM : STORE_EIO, "%s: %s: %s; %s", s->path, what,
                   mdb_strerror(rc), st_hint(rc));
}

const char *store_strerror(int code)
{
    switch (code) {
    case STORE_OK:
        return "success";
    case STORE_NOTFOUND:
        return "no such record";
    case STORE_EIO:
        return "store I/O or LMDB error";
    case STORE_ESCHEMA:
        return "store written by a newer fasweep";
    case STORE_EINVAL:
        return "invalid record or argument";
    case STORE_ENOMEM:
        return "out of memory";
    case STORE_EDAMAGED:
        return "damaged record";
    default:
        return "unknown store error";
    }
}

const char *store_last_error(const store *s)
{
    return s ? s->err : "no store";
}

/* ---- transactions and map growth ----------------------------------------------------------- */

/* Begins a transaction; adopts a map another process grew meanwhile and
 * clears reader slots of dead processes when the table is full. */
static int st_begin(store *s, unsigned flags, MDB_txn **txn)
{
    int rc = 0;
    for (int i = 0; i < ST_RETRY_MAX; i++) {
        rc = mdb_txn_begin(s->env, NULL, flags, txn);
        if (rc == MDB_MAP_RESIZED) {
            /* Safe: no transaction of ours is open (see the file comment). */
            rc = mdb_env_set_mapsize(s->env, 0);
            if (rc)
                return rc;
            continue;
        }
        if (rc == MDB_READERS_FULL && i == 0) {
            int dead = 0;
            mdb_reader_check(s->env, &dead);
            if (dead > 0)
                continue;
        }
        return rc;
    }
    return rc;
}

/* Grows the map after MDB_MAP_FULL: to what another process already set
 * when that is bigger than ours, else to twice ours. */
static int st_grow(store *s)
{
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    const size_t mine = info.me_mapsize;
    int rc = mdb_env_set_mapsize(s->env, 0);
    if (rc)
        return rc;
    mdb_env_info(s->env, &info);
    if (info.me_mapsize > mine)
        return 0;
    if (mine >= ST_MAP_MAX)
        return MDB_MAP_FULL;
    return mdb_env_set_mapsize(s->env, mine * 2);
}

/* A write-transaction body: returns 0, an LMDB/errno code, or a STORE_E*
 * code after setting s->err. */
typedef int (*st_txn_fn)(store *s, MDB_txn *txn, void *ctx);

static int st_is_store_code(int rc)
{
    return rc <= STORE_EIO && rc >= STORE_EDAMAGED;
}

/* Runs fn in one write transaction and commits; all or nothing. */
static int st_write(store *s, const char *what, st_txn_fn fn, void *ctx)
{
    if (s->read_only)
        return st_fail(s, STORE_EINVAL, "%s: cannot %s: the store was opened read-only", s->path,
                       what);
    int rc = 0;
    for (int attempt = 0; attempt < ST_RETRY_MAX; attempt++) {
        MDB_txn *txn;
        rc = st_begin(s, 0, &txn);
        if (rc)
            return st_fail_mdb(s, rc, what);
        rc = fn(s, txn, ctx);
        if (rc == 0)
            rc = mdb_txn_commit(txn); /* frees txn, also on failure */
        else
            mdb_txn_abort(txn);
        if (rc == 0)
            return STORE_OK;
        if (st_is_store_code(rc))
            return rc;
        if (rc != MDB_MAP_FULL && rc != MDB_MAP_RESIZED)
            return st_fail_mdb(s, rc, what);
        rc = st_grow(s);
        if (rc)
            return st_fail_mdb(s, rc, "growing the map");
    }
    return st_fail_mdb(s, MDB_MAP_FULL, what);
}

/* ---- record values ------------------------------------------------------------------------- */

/* Why the value v stored under key k does not decode into *out (a short
 * reason in why), or 0 when it does. */
static int st_decode_why(const MDB_val *k, const MDB_val *v, record *out, char *why, size_t n)
{
    cJSON *j = cJSON_ParseWithLength(v->mv_data, v->mv_size);
    if (!j)
        return snprintf(why, n, "value is not JSON"), -1;
    int rc = record_from_json(j, out, why, n);
    cJSON_Delete(j);
    if (rc != 0)
        return -1;
    char own[RECORD_KEY_LEN];
    if (record_key(out, own, sizeof own) != 0 || strlen(own) != k->mv_size ||
        memcmp(own, k->mv_data, k->mv_size) != 0)
        return snprintf(why, n, "its key fields do not match its key"), -1;
    return 0;
}

/* Decodes the value v stored under key k into *out; an undecodable value
 * is STORE_EDAMAGED, naming the key and how to remove it. */
static int st_decode(store *s, const MDB_val *k, const MDB_val *v, record *out)
{
    char why[512];
    if (st_decode_why(k, v, out, why, sizeof why) == 0)
        return STORE_OK;
    char key[160];
    text_clean(k->mv_data, k->mv_size, 120, 0, key, sizeof key);
    return st_fail(s, STORE_EDAMAGED,
                   "%s: record %s: %s; the record is damaged: `fasweep remove '%s' --store %s` "
                   "deletes it (the other records read)",
                   s->path, key, why, key, s->path);
}

void store_on_damaged(store *s, store_damaged_fn fn, void *ctx)
{
    if (!s)
        return;
    s->on_damaged = fn;
    s->damaged_ctx = ctx;
}

long store_damaged(const store *s)
{
    return s ? s->n_damaged : 0;
}

/* FNV-1a 64 of path and key: how a reported damaged record is known. */
static unsigned long long st_damaged_hash(const char *path, const MDB_val *k)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (const char *p = path; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    h = (h ^ 0xffu) * 0x100000001b3ULL; /* a separator no path byte is */
    for (size_t i = 0; i < k->mv_size; i++)
        h = (h ^ ((const unsigned char *)k->mv_data)[i]) * 0x100000001b3ULL;
    return h;
}

/* Reports the damaged record k of the store at path through s's handler,
 * once per (path, key). Returns 1 when there is a handler (the caller
 * skips or replaces the record), 0 when there is none (it fails). */
static int st_note_damaged(store *s, const char *path, const MDB_val *k, const MDB_val *v)
{
    if (!s->on_damaged)
        return 0;
    const unsigned long long h = st_damaged_hash(path, k);
    for (long i = 0; i < s->n_damaged; i++)
        if (s->damaged[i] == h)
            return 1;
    if (s->n_damaged == s->cap_damaged) {
        const long cap = s->cap_damaged ? 2 * s->cap_damaged : 16;
        unsigned long long *p = realloc(s->damaged, (size_t)cap * sizeof *p);
        if (!p)
            return 1; /* not remembered: it may be reported again */
        s->damaged = p;
        s->cap_damaged = cap;
    }
    s->damaged[s->n_damaged++] = h;
    char key[160], why[512];
    record scratch;
    text_clean(k->mv_data, k->mv_size, 120, 0, key, sizeof key);
    if (st_decode_why(k, v, &scratch, why, sizeof why) == 0)
        snprintf(why, sizeof why, "does not decode");
    s->on_damaged(path, key, why, s->n_damaged, s->damaged_ctx);
    return 1;
}

/* Checks a record before it is written (record_check). */
static int st_check_record(store *s, const record *r, const char *what)
{
    char why[160];
    if (record_check(r, why, sizeof why) != 0)
        return st_fail(s, STORE_EINVAL, "%s: %s", what, why);
    return STORE_OK;
}

/* Writes r under its key in txn. */
static int st_put_txn(store *s, MDB_txn *txn, const record *r)
{
    char key[RECORD_KEY_LEN];
    if (record_key(r, key, sizeof key) != 0)
        return st_fail(s, STORE_EINVAL, "%s: record with an invalid key", s->path);
    cJSON *j = record_to_json(r);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!text)
        return st_fail(s, STORE_ENOMEM, "%s: out of memory encoding record %s", s->path, key);
    MDB_val k = {strlen(key), key}, v = {strlen(text), text};
    const int rc = mdb_put(txn, s->results, &k, &v, 0);
    cJSON_free(text);
    return rc;
}

typedef struct st_many {
    const record *r;
    size_t n;
} st_many;

static int st_put_many_txn(store *s, MDB_txn *txn, void *ctx)
{
    const st_many *m = ctx;
    for (size_t i = 0; i < m->n; i++) {
        const int rc = st_put_txn(s, txn, &m->r[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int store_put_many(store *s, const record *r, size_t n)
{
    if (!s)
        return STORE_EINVAL;
    if (n == 0)
        return STORE_OK;
    if (!r)
        return st_fail(s, STORE_EINVAL, "store_put_many: no records");
    for (size_t i = 0; i < n; i++) {
        char what[80];
        if (n == 1)
            snprintf(what, sizeof what, "store_put");
        else
            snprintf(what, sizeof what, "store_put_many: record %zu of %zu", i + 1, n);
        const int rc = st_check_record(s, &r[i], what);
        if (rc)
            return rc;
    }
    st_many m = {r, n};
    return st_write(s, "writing records", st_put_many_txn, &m);
}

/* The record txn holds at r's key into *held: STORE_OK, MDB_NOTFOUND (none), STORE_EDAMAGED (a
 * value that does not decode; *k and *v say which), or another error. key holds the key text
 * (RECORD_KEY_LEN) that *k points to. */
static int st_held(store *s, MDB_txn *txn, const record *r, char *key, MDB_val *k, MDB_val *v,
                   record *held)
{
    if (record_key(r, key, RECORD_KEY_LEN) != 0)
        return st_fail(s, STORE_EINVAL, "%s: record with an invalid key", s->path);
    k->mv_size = strlen(key);
    k->mv_data = key;
    const int rc = mdb_get(txn, s->results, k, v);
    return rc == 0 ? st_decode(s, k, v, held) : rc;
}

typedef struct st_many_if {
    const record *r;
    size_t n;
    store_still_fn still;
    void *ctx;
    size_t written;
} st_many_if;

static int st_put_many_if_txn(store *s, MDB_txn *txn, void *ctx)
{
    st_many_if *m = ctx;
    m->written = 0; /* a retry after the map grew starts over */
    for (size_t i = 0; i < m->n; i++) {
        char key[RECORD_KEY_LEN];
        MDB_val k, v;
        record held;
        int rc = st_held(s, txn, &m->r[i], key, &k, &v, &held);
        if (rc == STORE_EDAMAGED)
            continue; /* not the caller's to rewrite */
        if (rc != STORE_OK && rc != MDB_NOTFOUND)
            return rc;
        if (!m->still(rc == STORE_OK ? &held : NULL, &m->r[i], m->ctx))
            continue;
        if ((rc = st_put_txn(s, txn, &m->r[i])) != 0)
            return rc;
        m->written++;
    }
    return 0;
}

int store_put_many_if(store *s, const record *r, size_t n, store_still_fn still, void *ctx,
                      size_t *written)
{
    if (written)
        *written = 0;
    if (!s)
        return STORE_EINVAL;
    if (n == 0)
        return STORE_OK;
    if (!r || !still)
        return st_fail(s, STORE_EINVAL, "store_put_many_if: no records or no check");
    for (size_t i = 0; i < n; i++) {
        const int rc = st_check_record(s, &r[i], "store_put_many_if");
        if (rc)
            return rc;
    }
    st_many_if m = {r, n, still, ctx, 0};
    const int rc = st_write(s, "writing records", st_put_many_if_txn, &m);
    if (written && rc == STORE_OK)
        *written = m.written;
    return rc;
}

int store_put(store *s, const record *r)
{
    if (!s)
        return STORE_EINVAL;
    if (!r)
        return st_fail(s, STORE_EINVAL, "store_put: no record");
    return store_put_many(s, r, 1);
}

typedef struct st_if_better {
    const record *r;
    int written;
} st_if_better;

static int st_if_better_txn(store *s, MDB_txn *txn, void *ctx)
{
    st_if_better *b = ctx;
    b->written = 0;
    char key[RECORD_KEY_LEN];
    MDB_val k, v;
    record old;
    const int rc = st_held(s, txn, b->r, key, &k, &v, &old);
    /* A damaged record is replaced when the caller skips them. */
    if (rc == STORE_OK && !record_better(b->r, &old))
        return 0;
    if (rc != STORE_OK && rc != MDB_NOTFOUND &&
        !(rc == STORE_EDAMAGED && st_note_damaged(s, s->path, &k, &v)))
        return rc;
    b->written = 1;
    return st_put_txn(s, txn, b->r);
}

int store_put_if_better(store *s, const record *r, int *written)
{
    if (!s)
        return STORE_EINVAL;
    if (!r)
        return st_fail(s, STORE_EINVAL, "store_put_if_better: no record");
    int rc = st_check_record(s, r, "store_put_if_better");
    st_if_better b = {r, 0};
    if (rc == STORE_OK)
        rc = st_write(s, "writing a record", st_if_better_txn, &b);
    if (written)
        *written = rc == STORE_OK && b.written;
    return rc;
}

int store_get(store *s, const char *key, record *out)
{
    if (!s)
        return STORE_EINVAL;
    if (!key || !*key || strlen(key) > ST_KEY_MAX || !out)
        return st_fail(s, STORE_EINVAL, "store_get: key must be 1 to %d bytes", ST_KEY_MAX);
    MDB_txn *txn;
    int rc = st_begin(s, MDB_RDONLY, &txn);
    if (rc)
        return st_fail_mdb(s, rc, "reading a record");
    MDB_val k = {strlen(key), (void *)key}, v;
    rc = mdb_get(txn, s->results, &k, &v);
    if (rc == MDB_NOTFOUND) {
        mdb_txn_abort(txn);
        return STORE_NOTFOUND;
    }
    if (rc) {
        mdb_txn_abort(txn);
        return st_fail_mdb(s, rc, "reading a record");
    }
    record r;
    rc = st_decode(s, &k, &v, &r);
    mdb_txn_abort(txn);
    if (rc == STORE_OK)
        *out = r;
    return rc;
}

typedef struct st_remove {
    const char *key;
    int force;
    int found; /* 1 the key is there */
} st_remove;

/* Deletes the record at r->key when it is damaged, or at all with force. */
static int st_remove_txn(store *s, MDB_txn *txn, void *ctx)
{
    st_remove *r = ctx;
    MDB_val k = {strlen(r->key), (void *)r->key}, v;
    int rc = mdb_get(txn, s->results, &k, &v);
    r->found = rc == 0;
    if (rc)
        return rc == MDB_NOTFOUND ? 0 : rc;
    record rec;
    char why[512];
    if (!r->force && st_decode_why(&k, &v, &rec, why, sizeof why) == 0) {
        char key[160];
        text_clean(k.mv_data, k.mv_size, 120, 0, key, sizeof key);
        return st_fail(s, STORE_EINVAL,
                       "%s: record %s reads fine, so it is not removed; pass --force to remove "
                       "a readable record",
                       s->path, key);
    }
    return mdb_del(txn, s->results, &k, NULL);
}

int store_remove(store *s, const char *key, int force)
{
    if (!s)
        return STORE_EINVAL;
    if (!key || !*key || strlen(key) > ST_KEY_MAX)
        return st_fail(s, STORE_EINVAL, "store_remove: key must be 1 to %d bytes", ST_KEY_MAX);
    st_remove r = {key, force != 0, 0};
    const int rc = st_write(s, "removing a record", st_remove_txn, &r);
    if (rc == STORE_OK && !r.found)
        return STORE_NOTFOUND;
    return rc;
}

long store_count(store *s)
{
    if (!s)
        return -1;
    MDB_txn *txn;
    int rc = st_begin(s, MDB_RDONLY, &txn);
    if (rc)
        return st_fail_mdb(s, rc, "counting records"), -1;
    MDB_stat st;
    rc = mdb_stat(txn, s->results, &st);
    mdb_txn_abort(txn);
    if (rc)
        return st_fail_mdb(s, rc, "counting records"), -1;
    return (long)st.ms_entries;
}

/* ---- scanning ------------------------------------------------------------------------------ */

typedef struct st_batch {
    record *r;
    int n;
    int more;  /* the range may go on past the batch */
    int error; /* STORE_E* after the n good records, or 0 */
    char last[ST_KEY_MAX + 1];
} st_batch;

static int st_has_prefix(const MDB_val *k, const char *prefix, size_t plen)
{
    return k->mv_size >= plen && memcmp(k->mv_data, prefix, plen) == 0;
}

/* Reads up to ST_SCAN_BATCH records of the range after b->last (or from
 * the prefix when first) in one read transaction. */
static int st_read_batch(store *s, const char *prefix, int first, st_batch *b)
{
    const size_t plen = strlen(prefix);
    b->n = 0;
    b->more = 0;
    b->error = 0;
    MDB_txn *txn;
    MDB_cursor *cur;
    int rc = st_begin(s, MDB_RDONLY, &txn);
    if (rc)
        return st_fail_mdb(s, rc, "scanning records");
    rc = mdb_cursor_open(txn, s->results, &cur);
    if (rc) {
        mdb_txn_abort(txn);
        return st_fail_mdb(s, rc, "scanning records");
    }
    const char *from = first ? prefix : b->last;
    MDB_val k = {strlen(from), (void *)from}, v;
    rc = k.mv_size ? mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE)
                   : mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    /* Resuming: the key where the last batch ended was delivered already. */
    if (rc == 0 && !first && k.mv_size == strlen(b->last) &&
        memcmp(k.mv_data, b->last, k.mv_size) == 0)
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    while (rc == 0 && st_has_prefix(&k, prefix, plen)) {
        if (b->n == ST_SCAN_BATCH) {
            b->more = 1;
            break;
        }
        if (st_decode(s, &k, &v, &b->r[b->n]) != STORE_OK) {
            if (!st_note_damaged(s, s->path, &k, &v)) {
                b->error = STORE_EDAMAGED;
                break;
            }
        } else {
            b->n++;
        }
        const size_t len = k.mv_size < ST_KEY_MAX ? k.mv_size : ST_KEY_MAX;
        memcpy(b->last, k.mv_data, len);
        b->last[len] = '\0';
        rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return st_fail_mdb(s, rc, "scanning records");
    return STORE_OK;
}

int store_scan(store *s, const char *prefix, store_visit_fn fn, void *ctx)
{
    if (!s)
        return STORE_EINVAL;
    if (!fn)
        return st_fail(s, STORE_EINVAL, "store_scan: no visit function");
    if (!prefix)
        prefix = "";
    if (strlen(prefix) > ST_KEY_MAX)
        return STORE_OK; /* no key is that long */
    st_batch *b = calloc(1, sizeof *b);
    if (b)
        b->r = malloc(ST_SCAN_BATCH * sizeof *b->r);
    if (!b || !b->r) {
        if (b)
            free(b);
        return st_fail(s, STORE_ENOMEM, "store_scan: out of memory");
    }
    int rc = STORE_OK, first = 1, stop = 0;
    do {
        rc = st_read_batch(s, prefix, first, b);
        first = 0;
        /* fn runs with no transaction open: it may write to s. */
        for (int i = 0; rc == STORE_OK && i < b->n && !stop; i++)
            stop = fn(&b->r[i], ctx) != 0;
        if (rc == STORE_OK && !stop && b->error)
            rc = b->error;
    } while (rc == STORE_OK && !stop && b->more);
    free(b->r);
    free(b);
    return rc;
}

/* ---- opening ------------------------------------------------------------------------------- */

/* The start size of a new store's map: 64 MiB, or FASWEEP_STORE_MAPSIZE. */
static int st_initial_mapsize(size_t *out, char *err, size_t errlen)
{
    *out = ST_MAP_INITIAL;
    const char *e = getenv("FASWEEP_STORE_MAPSIZE");
    if (!e || !*e)
        return 0;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(e, &end, 10);
    if (errno || *end || e[0] == '-' || v < ST_MAP_MIN || v > ST_MAP_MAX) {
        st_put_err(
            err, errlen,
            "FASWEEP_STORE_MAPSIZE=%.40s: expected a size in bytes from %zu to %zu; unset it "
            "to use the default",
            e, ST_MAP_MIN, ST_MAP_MAX);
        return -1;
    }
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *out = ((size_t)v + page - 1) / page * page;
    return 0;
}

/* Checks the meta "schema" value v of an existing store. */
static int st_check_schema(store *s, const MDB_val *v)
{
    char text[32];
    text_clean(v->mv_data, v->mv_size, 20, 0, text, sizeof text);
    const size_t nd = v->mv_size;
    const char *p = v->mv_data;
    long ver = 0;
    int ok = nd > 0 && nd <= 9;
    for (size_t i = 0; ok && i < nd; i++) {
        ok = p[i] >= '0' && p[i] <= '9';
        ver = ver * 10 + (p[i] - '0');
    }
    if (!ok || ver < 1)
        return st_fail(s, STORE_EINVAL,
                       "%s: meta schema is \"%s\", not a schema version; it is damaged or not a "
                       "fasweep results store: pass another --store",
                       s->path, text);
    if (ver > STORE_SCHEMA_VERSION)
        return st_fail(s, STORE_ESCHEMA,
                       "%s: the store has schema version %ld, newer than this fasweep (%s) "
                       "reads (%d); upgrade fasweep to use it, or pass another --store",
                       s->path, ver, FASWEEP_VERSION, STORE_SCHEMA_VERSION);
    return STORE_OK;
}

static int st_put_meta(store *s, MDB_txn *txn, const char *key, const char *val)
{
    MDB_val k = {strlen(key), (void *)key}, v = {strlen(val), (void *)val};
    return mdb_put(txn, s->meta, &k, &v, 0);
}

/* Opens (creating on first use) both databases; writes the meta of a new
 * store, checks the schema of an existing one. */
static int st_setup_txn(store *s, MDB_txn *txn, void *ctx)
{
    (void)ctx;
    /* A new environment has an empty main database; one without our meta
     * but with other data belongs to someone else: do not write into it. */
    MDB_dbi main_db;
    MDB_stat ms;
    int rc = mdb_dbi_open(txn, "meta", 0, &s->meta);
    if (rc == MDB_NOTFOUND) {
        rc = mdb_dbi_open(txn, NULL, 0, &main_db);
        if (!rc)
            rc = mdb_stat(txn, main_db, &ms);
        if (!rc && ms.ms_entries > 0)
            return st_fail(s, STORE_EINVAL,
                           "%s: an LMDB environment but not a fasweep results store; pass "
                           "another --store",
                           s->path);
    }
    if (rc && rc != MDB_NOTFOUND)
        return rc;
    rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &s->meta);
    if (!rc)
        rc = mdb_dbi_open(txn, "results", MDB_CREATE, &s->results);
    if (rc)
        return rc;
    MDB_val k = {6, "schema"}, v;
    rc = mdb_get(txn, s->meta, &k, &v);
    if (rc == 0)
        return st_check_schema(s, &v);
    if (rc != MDB_NOTFOUND)
        return rc;
    char ver[16];
    snprintf(ver, sizeof ver, "%d", STORE_SCHEMA_VERSION);
    rc = st_put_meta(s, txn, "schema", ver);
    return rc ? rc : st_put_meta(s, txn, "created_by", "fasweep " FASWEEP_VERSION);
}

/* Read-only: the databases must exist already. */
static int st_setup_read_only(store *s)
{
    MDB_txn *txn;
    int rc = st_begin(s, MDB_RDONLY, &txn);
    if (rc)
        return st_fail_mdb(s, rc, "opening the store");
    rc = mdb_dbi_open(txn, "meta", 0, &s->meta);
    if (!rc)
        rc = mdb_dbi_open(txn, "results", 0, &s->results);
    MDB_val k = {6, "schema"}, v;
    if (!rc)
        rc = mdb_get(txn, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
        mdb_txn_abort(txn);
        return st_fail(s, STORE_EINVAL,
                       "%s: an LMDB environment but not a fasweep results store (no schema); "
                       "pass another --store",
                       s->path);
    }
    if (!rc)
        rc = st_check_schema(s, &v);
    if (rc) {
        mdb_txn_abort(txn);
        return st_is_store_code(rc) ? rc : st_fail_mdb(s, rc, "opening the store");
    }
    /* Commit, not abort: that keeps the database handles open. */
    rc = mdb_txn_commit(txn);
    return rc ? st_fail_mdb(s, rc, "opening the store") : STORE_OK;
}

/* Makes sure path is a directory (creating it when writable) and fills
 * s->path (its real path: store_merge compares stores by it, store_same).
 * *fresh: no data.mdb yet. */
static int st_prepare_dir(store *s, const char *path, int read_only, int *fresh, char *err,
                          size_t errlen)
{
    if (!read_only) {
        char failed[PATH_MAX];
        const int e = file_mkdirs(path, 0755, failed, sizeof failed);
        struct stat there;
        /* path itself not a directory: said below, as for a read-only open */
        if (e && !(e == ENOTDIR && stat(path, &there) == 0)) {
            st_put_err(err, errlen,
                       "%s: cannot create the store directory (mkdir %s: %s); pick a writable "
                       "--store PATH",
                       path, failed, strerror(e));
            return STORE_EIO;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        const int e = errno;
        st_put_err(err, errlen,
                   "%s: no results store here (%s); run `fasweep grid` first, or pass the store's "
                   "directory with --store or FASWEEP_STORE",
                   path, strerror(e));
        return STORE_EIO;
    }
    if (!S_ISDIR(st.st_mode)) {
        st_put_err(err, errlen,
                   "%s: not a directory; a store is a directory (holding data.mdb and lock.mdb): "
                   "pass a directory path with --store",
                   path);
        return STORE_EIO;
    }
    if (!realpath(path, s->path))
        snprintf(s->path, sizeof s->path, "%s", path);
    char data[PATH_MAX + 16];
    snprintf(data, sizeof data, "%s/data.mdb", path);
    struct stat dst;
    *fresh = stat(data, &dst) != 0;
    /* Read-only: an empty data.mdb holds no store. (A writer lets LMDB write
     * the first pages: another process may be creating the store now.) */
    if (!*fresh && dst.st_size == 0 && read_only) {
        st_put_err(err, errlen,
                   "%s: data.mdb is empty (0 bytes), so no store can be read there (LMDB writes "
                   "two meta pages first); %s",
                   path, ST_DAMAGED_HINT);
        return STORE_EIO;
    }
    if (*fresh && read_only) {
        st_put_err(err, errlen,
                   "%s: no results store here (no data.mdb); run `fasweep grid` first, or pass "
                   "the store's directory with --store or FASWEEP_STORE",
                   path);
        return STORE_EIO;
    }
    return STORE_OK;
}

/* Reading a page past the end of a memory-mapped file kills the process
 * with SIGBUS. The store's length is checked right after it is opened
 * (st_check_length); these catch the signal while that check itself
 * reads LMDB's meta pages, and, as a last resort, anywhere later, so no
 * command dies of a signal on a damaged store. */
static sigjmp_buf st_bus_jump;
static volatile sig_atomic_t st_bus_armed;
static char st_bus_msg[PATH_MAX + 256];

static void st_on_sigbus(int sig)
{
    (void)sig;
    if (st_bus_armed) {
        st_bus_armed = 0;
        siglongjmp(st_bus_jump, 1);
    }
    /* Async-signal-safe: write and _exit only. */
    ssize_t w = write(STDERR_FILENO, st_bus_msg, strlen(st_bus_msg));
    (void)w;
    _exit(1);
}

static void st_catch_sigbus(const char *path)
{
    snprintf(st_bus_msg, sizeof st_bus_msg,
             "fasweep: %s: reading the store's file failed (SIGBUS: it is shorter than LMDB "
             "expects); %s\n",
             path, ST_DAMAGED_HINT);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = st_on_sigbus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

/* The data file must be at least as long as LMDB's own record of its last
 * page says: a shorter one was cut short (a full disk, a copy stopped half
 * way, `truncate`), and reading its records would hit the end. */
static int st_check_length(store *s, const char *path, char *err, size_t errlen)
{
    MDB_envinfo info;
    MDB_stat ms;
    char data[PATH_MAX + 16];
    struct stat st;
    snprintf(data, sizeof data, "%s/data.mdb", path);
    int rc = 0;
    st_bus_armed = 1;
    if (sigsetjmp(st_bus_jump, 1) == 0) {
        rc = mdb_env_info(s->env, &info);
        if (!rc)
            rc = mdb_env_stat(s->env, &ms);
    } else {
        rc = MDB_INVALID; /* the meta pages themselves are past the end */
    }
    st_bus_armed = 0;
    if (rc) {
        st_put_err(err, errlen, "%s: cannot read the store's meta pages: %s; %s", path,
                   mdb_strerror(rc), ST_DAMAGED_HINT);
        return STORE_EIO;
    }
    if (stat(data, &st) != 0) {
        st_put_err(err, errlen, "%s: cannot stat data.mdb: %s", path, strerror(errno));
        return STORE_EIO;
    }
    const unsigned long long need = ((unsigned long long)info.me_last_pgno + 1) * ms.ms_psize;
    if ((unsigned long long)st.st_size < need) {
        st_put_err(err, errlen,
                   "%s: data.mdb is %lld bytes but LMDB's record of its last page says %llu: it "
                   "was cut short; %s",
                   path, (long long)st.st_size, need, ST_DAMAGED_HINT);
        return STORE_EIO;
    }
    return STORE_OK;
}

/* Whether a reader must go without LMDB's lock file: lock.mdb is there
 * but this user may not write it, or it is not there and cannot be made
 * (the directory is not writable). A shared results store, for one. */
static int st_lock_unwritable(const char *path)
{
    char lock[PATH_MAX + 16];
    snprintf(lock, sizeof lock, "%s/lock.mdb", path);
    if (access(lock, F_OK) == 0)
        return access(lock, R_OK | W_OK) != 0;
    return access(path, W_OK) != 0;
}

static int st_open_env(store *s, const char *path, int read_only, int fresh, char *err,
                       size_t errlen)
{
    size_t mapsize;
    if (fresh && st_initial_mapsize(&mapsize, err, errlen) != 0)
        return STORE_EINVAL;
    st_catch_sigbus(path);
    int rc = mdb_env_create(&s->env);
    if (!rc)
        rc = mdb_env_set_maxdbs(s->env, 2);
    /* An existing store keeps the map size written in it. */
    if (!rc && fresh)
        rc = mdb_env_set_mapsize(s->env, mapsize);
    if (!rc)
        rc = mdb_env_open(s->env, path,
                          MDB_NOTLS | (read_only ? MDB_RDONLY : 0) |
                              (read_only && st_lock_unwritable(path) ? MDB_NOLOCK : 0),
                          0644);
    if (rc) {
        st_put_err(err, errlen, "%s: cannot open the store: %s; %s", path, mdb_strerror(rc),
                   st_hint(rc));
        return rc == ENOMEM ? STORE_ENOMEM : STORE_EIO;
    }
    rc = st_check_length(s, path, err, errlen);
    if (rc != STORE_OK)
        return rc;
    int dead;
    mdb_reader_check(s->env, &dead); /* slots of killed processes */
    return STORE_OK;
}

int store_open(const char *path, int read_only, store **out, char *err, size_t errlen)
{
    st_put_err(err, errlen, "%s", "");
    if (!out)
        return st_put_err(err, errlen, "store_open: no output handle"), STORE_EINVAL;
    *out = NULL;
    if (!path || !*path || strlen(path) >= PATH_MAX - 16)
        return st_put_err(err, errlen, "store_open: store path is empty or too long"), STORE_EINVAL;
    store *s = calloc(1, sizeof *s);
    if (!s)
        return st_put_err(err, errlen, "%s: out of memory", path), STORE_ENOMEM;
    s->read_only = read_only != 0;
    int fresh = 0;
    int rc = st_prepare_dir(s, path, s->read_only, &fresh, err, errlen);
    if (rc == STORE_OK)
        rc = st_open_env(s, path, s->read_only, fresh, err, errlen);
    if (rc == STORE_OK) {
        rc = s->read_only ? st_setup_read_only(s)
                          : st_write(s, "creating the store", st_setup_txn, NULL);
        if (rc != STORE_OK)
            st_put_err(err, errlen, "%s", s->err);
    }
    if (rc != STORE_OK) {
        store_close(s);
        return rc;
    }
    *out = s;
    return STORE_OK;
}

void store_close(store *s)
{
    if (!s)
        return;
    if (s->env)
        mdb_env_close(s->env);
    free(s->damaged);
    free(s);
}

/* ---- merging ------------------------------------------------------ */

typedef struct st_merge {
    store *src;
    store_merge_stats st;
} st_merge;

/* One src record into dst's transaction by the merge rule. */
static int st_merge_one(store *dst, MDB_txn *txn, st_merge *m, const MDB_val *k, const record *a)
{
    MDB_val dv;
    MDB_val key = *k;
    int rc = mdb_get(txn, dst->results, &key, &dv);
    if (rc == MDB_NOTFOUND) {
        m->st.added++;
        return st_put_txn(dst, txn, a);
    }
    if (rc)
        return rc;
    record b;
    rc = st_decode(dst, &key, &dv, &b);
    /* A damaged destination record: the source's replaces it. */
    if (rc && !(rc == STORE_EDAMAGED && st_note_damaged(dst, dst->path, &key, &dv)))
        return rc;
    if (rc == STORE_OK && !record_better(a, &b)) {
        m->st.kept++;
        return 0;
    }
    m->st.replaced++;
    return st_put_txn(dst, txn, a);
}

static int st_merge_txn(store *dst, MDB_txn *txn, void *ctx)
{
    st_merge *m = ctx;
    memset(&m->st, 0, sizeof m->st); /* a retry after map growth starts over */
    MDB_txn *rt;
    MDB_cursor *cur;
    int rc = st_begin(m->src, MDB_RDONLY, &rt);
    if (rc)
        return st_fail(dst, STORE_EIO, "%s: reading the source: %s; %s", m->src->path,
                       mdb_strerror(rc), st_hint(rc));
    rc = mdb_cursor_open(rt, m->src->results, &cur);
    if (rc) {
        mdb_txn_abort(rt);
        return st_fail(dst, STORE_EIO, "%s: reading the source: %s; %s", m->src->path,
                       mdb_strerror(rc), st_hint(rc));
    }
    MDB_val k, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        record a;
        rc = st_decode(m->src, &k, &v, &a);
        if (rc == STORE_EDAMAGED && st_note_damaged(dst, m->src->path, &k, &v)) {
            rc = 0; /* skipped, reported */
            continue;
        }
        if (rc) {
            st_fail(dst, rc, "%s", m->src->err);
            break;
        }
        rc = st_merge_one(dst, txn, m, &k, &a);
        if (rc)
            break;
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(rt);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The absolute path path would have, also when it does not exist yet: the
 * real path of its deepest existing parent, then the rest as written. */
static void st_canonical(const char *path, char *out, size_t n)
{
    char tmp[PATH_MAX], real[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    size_t len = strlen(tmp);
    while (len > 1 && tmp[len - 1] == '/')
        tmp[--len] = '\0';
    if (realpath(tmp, real)) {
        snprintf(out, n, "%s", real);
        return;
    }
    char *slash = strrchr(tmp, '/');
    if (!slash) { /* a name in the current directory */
        char cwd[PATH_MAX];
        if (snprintf(out, n, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", tmp) >= (int)n)
            out[0] = '\0'; /* too long to be a store path anyway */
        return;
    }
    char parent[PATH_MAX];
    *slash = '\0';
    st_canonical(tmp[0] ? tmp : "/", parent, sizeof parent);
    if (snprintf(out, n, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, slash + 1) >= (int)n)
        out[0] = '\0';
}

static int st_same_inode(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int store_same(const char *a, const char *b)
{
    char ca[PATH_MAX], cb[PATH_MAX], da[PATH_MAX + 16], db[PATH_MAX + 16];
    st_canonical(a, ca, sizeof ca);
    st_canonical(b, cb, sizeof cb);
    snprintf(da, sizeof da, "%s/data.mdb", ca);
    snprintf(db, sizeof db, "%s/data.mdb", cb);
    return (ca[0] && strcmp(ca, cb) == 0) || st_same_inode(a, b) || st_same_inode(da, db);
}

int store_merge(store *dst, const char *src_path, store_merge_stats *st, char *err, size_t errlen)
{
    st_put_err(err, errlen, "%s", "");
    if (st)
        memset(st, 0, sizeof *st);
    if (!dst || !src_path || !*src_path)
        return st_put_err(err, errlen, "store_merge: no destination or source"), STORE_EINVAL;
    /* The same store by any name: LMDB forbids opening one environment
     * twice in a process (closing one drops the other's locks). */
    if (store_same(src_path, dst->path)) {
        st_put_err(err, errlen,
                   "%s: cannot merge a store into itself (it is the destination %s, or holds "
                   "the same data.mdb); pass another source",
                   src_path, dst->path);
        return st_fail(dst, STORE_EINVAL, "%s: cannot merge a store into itself", src_path);
    }
    st_merge m = {0};
    int rc = store_open(src_path, 1, &m.src, err, errlen);
    if (rc != STORE_OK)
        return st_fail(dst, rc, "%s", err ? err : "cannot open the merge source");
    rc = st_write(dst, "merging", st_merge_txn, &m);
    store_close(m.src);
    if (rc != STORE_OK) {
        st_put_err(err, errlen, "%s", dst->err);
        return rc;
    }
    if (st)
        *st = m.st;
    return STORE_OK;
}
