/* test_store.c - the LMDB results store: put/get/scan/count, resume
 * (replace), schema versioning, map growth from a tiny map, concurrent
 * writer processes, damaged values. (The record itself: test_record.c.)
 *
 * Every test works in its own directory from tu_tmpdir and removes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <errno.h>
#include <float.h>
#include <lmdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "tests/unit/testrec.h"
#include "tests/unit/teststore.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static store *open_rw(const char *dir)
{
    store *s = NULL;
    char err[1024] = "";
    const int rc = store_open(dir, 0, &s, err, sizeof err);
    if (rc != STORE_OK) {
        print_error("store_open(%s): %d %s\n", dir, rc, err);
        fail();
    }
    return s;
}

static void key_of(const record *r, char *key)
{
    assert_int_equal(record_key(r, key, RECORD_KEY_LEN), STORE_OK);
}

/* dir/name into buf. */
static char *sub(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(store_strerror(STORE_ESCHEMA), "store written by a newer fasweep");
    assert_string_equal(store_strerror(STORE_NOTFOUND), "no such record");
    assert_string_equal(store_strerror(-77), "unknown store error");
}

/* ---- put / get / count / scan -------------------------------------------------------------- */

static void test_put_get(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    assert_int_equal(store_count(s), 0);
    record r, back;
    fill_full(&r);
    r.rel_l2 = NAN; /* a NaN output's error */
    assert_int_equal(store_put(s, &r), STORE_OK);
    assert_int_equal(store_count(s), 1);
    char key[RECORD_KEY_LEN];
    key_of(&r, key);
    memset(&back, 0, sizeof back);
    assert_int_equal(store_get(s, key, &back), STORE_OK);
    assert_record_equal(&r, &back);

    /* The stored value is the record's JSON text. */
    store_close(s);
    char *raw = raw_get(dir, "results", key);
    char *want = json_text(&r);
    assert_non_null(raw);
    assert_string_equal(raw, want);
    free(raw);
    cJSON_free(want);

    /* It survives closing and reopening, read-only too. */
    char err[512];
    assert_int_equal(store_open(dir, 1, &s, err, sizeof err), STORE_OK);
    memset(&back, 0, sizeof back);
    assert_int_equal(store_get(s, key, &back), STORE_OK);
    assert_record_equal(&r, &back);
    assert_int_equal(store_get(s, "no|such|key|at|all", &back), STORE_NOTFOUND);
    assert_int_equal(store_get(s, "", &back), STORE_EINVAL);
    /* Read-only: writes are refused with a reason. */
    assert_int_equal(store_put(s, &r), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "read-only"));
    store_close(s);
}

static void test_put_invalid(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    record good[3], r;
    fill_simple(&good[0], "G", "p", "c0");
    fill_simple(&good[1], "G", "p", "c1");
    fill_simple(&good[2], "G", "p", "c2");

    good[1].device[0] = '\0';
    assert_int_equal(store_put_many(s, good, 3), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "record 2 of 3"));
    assert_non_null(strstr(store_last_error(s), "device is empty"));
    assert_int_equal(store_count(s), 0); /* all or nothing */

    r = good[0];
    r.status = (record_status)7;
    assert_int_equal(store_put(s, &r), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "status 7"));
    r = good[0];
    r.kind = (record_kind)3;
    assert_int_equal(store_put(s, &r), STORE_EINVAL);
    r = good[0];
    memset(r.host, 'h', sizeof r.host); /* no NUL */
    assert_int_equal(store_put(s, &r), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "host is not NUL-terminated"));
    r = good[0];
    snprintf(r.config, sizeof r.config, "a|b");
    assert_int_equal(store_put(s, &r), STORE_EINVAL);
    assert_int_equal(store_count(s), 0);

    assert_int_equal(store_put_many(s, good, 1), STORE_OK);
    assert_int_equal(store_put_many(s, NULL, 0), STORE_OK);
    assert_int_equal(store_count(s), 1);
    store_close(s);
}

static void test_resume_replace(void **state)
{
    store *s = open_rw(*state);
    record r, back;
    char key[RECORD_KEY_LEN];
    fill_simple(&r, "G", "p", "c");
    assert_int_equal(store_put(s, &r), STORE_OK);
    r.time.median_us = 7.25;
    r.status = RECORD_ST_TIMEOUT;
    snprintf(r.error, sizeof r.error, "ran past 10 s");
    assert_int_equal(store_put(s, &r), STORE_OK);
    assert_int_equal(store_count(s), 1);
    key_of(&r, key);
    assert_int_equal(store_get(s, key, &back), STORE_OK);
    assert_true(back.time.median_us == 7.25);
    assert_int_equal(back.status, RECORD_ST_TIMEOUT);
    assert_string_equal(back.error, "ran past 10 s");
    /* Another mode is another key. */
    snprintf(r.mode, sizeof r.mode, "cold");
    assert_int_equal(store_put(s, &r), STORE_OK);
    assert_int_equal(store_count(s), 2);
    store_close(s);
}

typedef struct visit {
    char keys[64][RECORD_KEY_LEN];
    int n, stop_after;
} visit;

static int visit_fn(const record *r, void *ctx)
{
    visit *v = ctx;
    if (v->n < 64)
        record_key(r, v->keys[v->n], RECORD_KEY_LEN);
    v->n++;
    return v->stop_after > 0 && v->n >= v->stop_after;
}

/* Scans prefix into v (emptied first, stopping after stop_after records
 * when > 0); the number of records visited. */
static int scan_n(store *s, const char *prefix, visit *v, int stop_after)
{
    memset(v, 0, sizeof *v);
    v->stop_after = stop_after;
    assert_int_equal(store_scan(s, prefix, visit_fn, v), STORE_OK);
    return v->n;
}

static void test_scan_prefix(void **state)
{
    store *s = open_rw(*state);
    /* "GPU A PCIe" sorts before "GPU A|" (' ' < '|'): a prefix scan must
     * skip neighbours on both sides; p10 must not match prefix p1|. */
    const char *devs[] = {"GPU B", "GPU A", "GPU A PCIe", "GPU AB"};
    const char *probs[] = {"p2", "p10", "p1"};
    const char *cfgs[] = {"c2", "c1"};
    for (int d = 0; d < 4; d++)
        for (int p = 0; p < 3; p++)
            for (int c = 0; c < 2; c++) {
                record r;
                fill_simple(&r, devs[d], probs[p], cfgs[c]);
                assert_int_equal(store_put(s, &r), STORE_OK);
            }
    assert_int_equal(store_count(s), 24);

    visit v;
    assert_int_equal(scan_n(s, "GPU A|p1|", &v, 0), 2);
    assert_string_equal(v.keys[0], "GPU A|p1|b0|c1|hot");
    assert_string_equal(v.keys[1], "GPU A|p1|b0|c2|hot");

    assert_int_equal(scan_n(s, "GPU A|", &v, 0), 6);
    for (int i = 0; i < v.n; i++)
        assert_int_equal(strncmp(v.keys[i], "GPU A|", 6), 0);
    /* Byte order: "p10|" < "p1|" ('0' < '|'). */
    assert_string_equal(v.keys[0], "GPU A|p10|b0|c1|hot");
    assert_string_equal(v.keys[2], "GPU A|p1|b0|c1|hot");
    assert_string_equal(v.keys[5], "GPU A|p2|b0|c2|hot");

    /* All of it, in key order. */
    assert_int_equal(scan_n(s, "", &v, 0), 24);
    for (int i = 1; i < v.n; i++)
        assert_true(strcmp(v.keys[i - 1], v.keys[i]) < 0);
    assert_string_equal(v.keys[0], "GPU A PCIe|p10|b0|c1|hot");
    assert_int_equal(scan_n(s, NULL, &v, 0), 24);

    /* Early stop; no match; a prefix longer than any key. */
    assert_int_equal(scan_n(s, "GPU", &v, 3), 3);
    assert_int_equal(scan_n(s, "GPU C", &v, 0), 0);
    char longp[700];
    memset(longp, 'G', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    assert_int_equal(store_scan(s, longp, visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 0);
    assert_int_equal(store_scan(s, "", NULL, NULL), STORE_EINVAL);
    store_close(s);
}

/* ---- schema, opening ----------------------------------------------------------------------- */

static void test_schema_meta(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    store_close(s);
    char *schema = raw_get(dir, "meta", "schema");
    char *by = raw_get(dir, "meta", "created_by");
    assert_non_null(schema);
    assert_non_null(by);
    assert_string_equal(schema, "1");
    assert_int_equal(strncmp(by, "fasweep ", 8), 0);
    free(schema);
    free(by);

    /* Reopening an existing store leaves its meta alone. */
    raw_put(dir, "meta", "created_by", "fasweep 0.0.9");
    s = open_rw(dir);
    store_close(s);
    by = raw_get(dir, "meta", "created_by");
    assert_string_equal(by, "fasweep 0.0.9");
    free(by);

    /* A newer schema: refused both ways, with what to do. */
    char err[1024];
    raw_put(dir, "meta", "schema", "99");
    s = (store *)&err; /* must be reset to NULL */
    assert_int_equal(store_open(dir, 0, &s, err, sizeof err), STORE_ESCHEMA);
    assert_null(s);
    assert_non_null(strstr(err, dir));
    assert_non_null(strstr(err, "schema version 99"));
    assert_non_null(strstr(err, "upgrade fasweep"));
    assert_int_equal(store_open(dir, 1, &s, err, sizeof err), STORE_ESCHEMA);
    assert_non_null(strstr(err, "99"));

    raw_put(dir, "meta", "schema", "1x");
    assert_int_equal(store_open(dir, 0, &s, err, sizeof err), STORE_EINVAL);
    assert_non_null(strstr(err, "\"1x\""));
    raw_put(dir, "meta", "schema", "0");
    assert_int_equal(store_open(dir, 1, &s, err, sizeof err), STORE_EINVAL);

    raw_put(dir, "meta", "schema", "1");
    s = open_rw(dir);
    store_close(s);
}

static void test_open_errors(void **state)
{
    const char *dir = *state;
    char path[600], err[1024];
    store *s = NULL;

    /* A regular file. */
    sub(path, sizeof path, dir, "file");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(store_open(path, 0, &s, err, sizeof err), STORE_EIO);
    assert_null(s);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "not a directory"));
    /* Under a regular file: mkdir fails, named. */
    sub(path, sizeof path, dir, "file/x");
    assert_int_equal(store_open(path, 0, &s, err, sizeof err), STORE_EIO);
    assert_non_null(strstr(err, "cannot create the store directory"));
    assert_non_null(strstr(err, "Not a directory"));

    /* Read-only and missing: a clear error, nothing created. */
    sub(path, sizeof path, dir, "missing");
    assert_int_equal(store_open(path, 1, &s, err, sizeof err), STORE_EIO);
    assert_non_null(strstr(err, "no results store here"));
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    /* An empty directory is no store either. */
    mkdir(path, 0755);
    assert_int_equal(store_open(path, 1, &s, err, sizeof err), STORE_EIO);
    assert_non_null(strstr(err, "no data.mdb"));

    /* Writable: parents made like mkdir -p, mode 0755 (under umask). */
    sub(path, sizeof path, dir, "a/b/c.lmdb");
    s = open_rw(path);
    store_close(s);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0700, 0700);
    sub(path, sizeof path, dir, "a/b/c.lmdb/data.mdb");
    assert_int_equal(stat(path, &st), 0);
    /* A trailing slash is the same directory. */
    sub(path, sizeof path, dir, "a/b/c.lmdb/");
    s = open_rw(path);
    store_close(s);

    /* Someone else's LMDB environment is not written into. */
    sub(path, sizeof path, dir, "foreign");
    mkdir(path, 0755);
    {
        MDB_env *env;
        MDB_txn *txn;
        MDB_dbi dbi;
        assert_int_equal(mdb_env_create(&env), 0);
        assert_int_equal(mdb_env_open(env, path, 0, 0644), 0);
        assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
        assert_int_equal(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
        MDB_val k = {5, "hello"}, v = {5, "world"};
        assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
        assert_int_equal(mdb_txn_commit(txn), 0);
        mdb_env_close(env);
    }
    assert_int_equal(store_open(path, 0, &s, err, sizeof err), STORE_EINVAL);
    assert_non_null(strstr(err, "not a fasweep results store"));
    assert_int_equal(store_open(path, 1, &s, err, sizeof err), STORE_EINVAL);
    assert_non_null(strstr(err, "not a fasweep results store"));

    /* A bad map size override is named. */
    setenv("FASWEEP_STORE_MAPSIZE", "12k", 1);
    sub(path, sizeof path, dir, "m");
    assert_int_equal(store_open(path, 0, &s, err, sizeof err), STORE_EINVAL);
    assert_non_null(strstr(err, "FASWEEP_STORE_MAPSIZE=12k"));
    setenv("FASWEEP_STORE_MAPSIZE", "100", 1);
    assert_int_equal(store_open(path, 0, &s, err, sizeof err), STORE_EINVAL);
    unsetenv("FASWEEP_STORE_MAPSIZE");

    assert_int_equal(store_open("", 0, &s, err, sizeof err), STORE_EINVAL);
    assert_int_equal(store_open(NULL, 0, &s, err, sizeof err), STORE_EINVAL);
    assert_int_equal(store_open(dir, 0, NULL, err, sizeof err), STORE_EINVAL);
    store_close(NULL);
}

/* ---- map growth ---------------------------------------------------------------------------- */

typedef struct copier {
    store *s;
    long n;
    int rc;
} copier;

/* Writes a copy of each record under another device while the scan runs:
 * allowed because no transaction is open during fn, and it grows the map
 * in between batches. */
static int copy_fn(const record *r, void *ctx)
{
    copier *c = ctx;
    record cp = *r;
    snprintf(cp.device, sizeof cp.device, "Z copy");
    c->rc = store_put(c->s, &cp);
    c->n++;
    return c->rc != STORE_OK;
}

static void test_map_growth(void **state)
{
    const char *dir = *state;
    char path[600];
    setenv("FASWEEP_STORE_MAPSIZE", "65536", 1);
    store *s = open_rw(sub(path, sizeof path, dir, "one"));
    record r, back;
    char cfg[32], key[RECORD_KEY_LEN];
    for (int i = 0; i < 2000; i++) {
        snprintf(cfg, sizeof cfg, "c%05d", i);
        fill_full(&r);
        snprintf(r.config, sizeof r.config, "%s", cfg);
        r.time.samples = i;
        const int rc = store_put(s, &r);
        if (rc != STORE_OK) {
            print_error("put %d: %s\n", i, store_last_error(s));
            fail();
        }
    }
    assert_int_equal(store_count(s), 2000);
    for (int i = 0; i < 2000; i += 199) {
        fill_full(&r);
        snprintf(r.config, sizeof r.config, "c%05d", i);
        r.time.samples = i;
        key_of(&r, key);
        assert_int_equal(store_get(s, key, &back), STORE_OK);
        assert_record_equal(&r, &back);
    }
    /* The data outgrew the 64 KiB it started with. */
    struct stat st;
    assert_int_equal(stat(sub(path, sizeof path, dir, "one/data.mdb"), &st), 0);
    assert_true(st.st_size > 20 * 65536);

    /* Writing while scanning (more than one scan batch). */
    copier c = {s, 0, STORE_OK};
    assert_int_equal(store_scan(s, "NVIDIA", copy_fn, &c), STORE_OK);
    assert_int_equal(c.rc, STORE_OK);
    assert_int_equal(c.n, 2000);
    assert_int_equal(store_count(s), 4000);
    store_close(s);

    /* One transaction that needs many doublings: put_many retries whole. */
    record *many = calloc(3000, sizeof *many);
    assert_non_null(many);
    for (int i = 0; i < 3000; i++) {
        fill_full(&many[i]);
        snprintf(many[i].config, sizeof many[i].config, "m%05d", i);
    }
    s = open_rw(sub(path, sizeof path, dir, "two"));
    assert_int_equal(store_put_many(s, many, 3000), STORE_OK);
    assert_int_equal(store_count(s), 3000);
    key_of(&many[2999], key);
    assert_int_equal(store_get(s, key, &back), STORE_OK);
    assert_record_equal(&many[2999], &back);
    store_close(s);
    free(many);

    /* A store reopened without the override keeps its grown map. */
    unsetenv("FASWEEP_STORE_MAPSIZE");
    s = open_rw(sub(path, sizeof path, dir, "one"));
    assert_int_equal(store_count(s), 4000);
    store_close(s);
}

/* ---- concurrent writers -------------------------------------------------------------------- */

#define WRITERS 4
#define PER_WRITER 300

/* One writer process: its own handle, PER_WRITER puts of its own keys.
 * No cmocka here (a failed assert would longjmp into the parent's copy). */
static int writer(const char *dir, int id, int start_fd)
{
    char c;
    if (read(start_fd, &c, 1) < 0) /* wait until every writer exists */
        return 2;
    store *s = NULL;
    char err[1024];
    if (store_open(dir, 0, &s, err, sizeof err) != STORE_OK) {
        fprintf(stderr, "writer %d: %s\n", id, err);
        return 1;
    }
    for (int i = 0; i < PER_WRITER; i++) {
        record r;
        char cfg[32];
        snprintf(cfg, sizeof cfg, "w%d.%04d", id, i);
        fill_full(&r);
        snprintf(r.config, sizeof r.config, "%s", cfg);
        if (store_put(s, &r) != STORE_OK) {
            fprintf(stderr, "writer %d put %d: %s\n", id, i, store_last_error(s));
            store_close(s);
            return 1;
        }
    }
    store_close(s);
    return 0;
}

/* Forks WRITERS processes that create (racing) and fill one store at once;
 * every record of every writer must be there. */
static void run_writers(const char *dir)
{
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    pid_t pids[WRITERS];
    fflush(NULL);
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            close(gate[1]);
            _exit(writer(dir, w, gate[0]));
        }
    }
    close(gate[0]);
    close(gate[1]); /* EOF: all start now */
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    store *s = open_rw(dir);
    assert_int_equal(store_count(s), WRITERS * PER_WRITER);
    record r, back;
    char key[RECORD_KEY_LEN];
    for (int w = 0; w < WRITERS; w++)
        for (int i = 0; i < PER_WRITER; i++) {
            fill_full(&r);
            snprintf(r.config, sizeof r.config, "w%d.%04d", w, i);
            key_of(&r, key);
            assert_int_equal(store_get(s, key, &back), STORE_OK);
            assert_record_equal(&r, &back);
        }
    store_close(s);
}

static void test_concurrent_writers(void **state)
{
    char path[600];
    run_writers(sub(path, sizeof path, *state, "default"));
}

/* The same with a tiny map: the writers grow it under each other, so each
 * meets MDB_MAP_FULL and maps another process grew (MDB_MAP_RESIZED). */
static void test_concurrent_writers_tiny_map(void **state)
{
    char path[600];
    setenv("FASWEEP_STORE_MAPSIZE", "65536", 1);
    run_writers(sub(path, sizeof path, *state, "tiny"));
}

/* Puts the record G|p|b0|CONFIG|hot (left in *r) into the store at DIR,
 * opened for it and closed after, so that raw_put can write beside it. */
static void put_closed(const char *dir, record *r, const char *config)
{
    store *s = open_rw(dir);
    fill_simple(r, "G", "p", config);
    assert_int_equal(store_put(s, r), STORE_OK);
    store_close(s);
}

/* ---- damaged values ------------------------------------------------------------------------ */

static void test_damaged_value(void **state)
{
    const char *dir = *state;
    record r;
    put_closed(dir, &r, "a");
    put_closed(dir, &r, "c");
    raw_put(dir, "results", "G|p|b0|b|hot", "{not json");
    /* Valid JSON whose key fields are another key's. */
    char *t = json_text(&r);
    raw_put(dir, "results", "G|p|b0|d|hot", t);
    cJSON_free(t);

    store *s = open_rw(dir);
    record back;
    /* Damaged, not missing and not a bad argument: its own code, and the
     * message names the key and how to remove it. */
    assert_int_equal(store_get(s, "G|p|b0|b|hot", &back), STORE_EDAMAGED);
    assert_non_null(strstr(store_last_error(s), "record G|p|b0|b|hot: value is not JSON"));
    assert_non_null(strstr(store_last_error(s), "fasweep remove 'G|p|b0|b|hot'"));
    assert_int_equal(store_get(s, "G|p|b0|d|hot", &back), STORE_EDAMAGED);
    assert_non_null(strstr(store_last_error(s), "do not match its key"));
    /* Without a handler a scan delivers what precedes the damage, then
     * fails naming it. */
    visit v = {0};
    assert_int_equal(store_scan(s, "G|", visit_fn, &v), STORE_EDAMAGED);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.keys[0], "G|p|b0|a|hot");
    assert_non_null(strstr(store_last_error(s), "G|p|b0|b|hot"));
    assert_int_equal(store_count(s), 4);
    store_close(s);
}

typedef struct damaged_log {
    char keys[8][160], why[8][160];
    long count[8];
    int n;
} damaged_log;

static void log_damaged(const char *path, const char *key, const char *why, long count, void *ctx)
{
    damaged_log *l = ctx;
    assert_non_null(path);
    if (l->n < 8) {
        snprintf(l->keys[l->n], sizeof l->keys[0], "%s", key);
        snprintf(l->why[l->n], sizeof l->why[0], "%s", why);
        l->count[l->n] = count;
    }
    l->n++;
}

/* Undecodable records: with a handler, a scan skips damaged records (each
 * reported once, with the count), so one bad value locks nothing;
 * store_put_if_better replaces a damaged record. */
static void test_damaged_skipped(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    record r;
    const char *cfgs[] = {"a", "c", "e"};
    for (int i = 0; i < 3; i++) {
        fill_simple(&r, "G", "p", cfgs[i]);
        assert_int_equal(store_put(s, &r), STORE_OK);
    }
    store_close(s);
    raw_put(dir, "results", "G|p|b0|b|hot", "{not json");
    raw_put(dir, "results", "G|p|b0|d|hot", "{\"kind\":\"kernel\"}");

    s = open_rw(dir);
    damaged_log log = {0};
    store_on_damaged(s, log_damaged, &log);
    visit v = {0};
    assert_int_equal(store_scan(s, "G|", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 3);
    assert_string_equal(v.keys[0], "G|p|b0|a|hot");
    assert_string_equal(v.keys[1], "G|p|b0|c|hot");
    assert_string_equal(v.keys[2], "G|p|b0|e|hot");
    assert_int_equal(log.n, 2);
    assert_string_equal(log.keys[0], "G|p|b0|b|hot");
    assert_string_equal(log.why[0], "value is not JSON");
    assert_int_equal(log.count[0], 1);
    assert_string_equal(log.keys[1], "G|p|b0|d|hot");
    assert_non_null(strstr(log.why[1], "key.device: missing"));
    assert_int_equal(log.count[1], 2);
    /* A second scan reports nothing new. */
    memset(&v, 0, sizeof v);
    assert_int_equal(store_scan(s, "", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 3);
    assert_int_equal(log.n, 2);
    assert_int_equal(store_damaged(s), 2);
    /* A record of a damaged key replaces it when it comes in. */
    fill_simple(&r, "G", "p", "b");
    int written = 0;
    assert_int_equal(store_put_if_better(s, &r, &written), STORE_OK);
    assert_int_equal(written, 1);
    record back;
    assert_int_equal(store_get(s, "G|p|b0|b|hot", &back), STORE_OK);
    store_close(s);
}

/* store_put_many_if's check: the record the store holds at the key now. */
static int still_samples(const record *held, const record *r, void *ctx)
{
    (void)ctx;
    return held && held->time.samples == r->time.samples;
}

/* store_put_many_if writes a record only where the check accepts what the store holds now
 * (another process's write since the caller read it is kept), leaves a missing or damaged
 * one alone when the check says so, and counts what it wrote. */
static void test_put_many_if(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    record r[3];
    const char *cfgs[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        fill_simple(&r[i], "G", "p", cfgs[i]);
        if (i < 2)
            assert_int_equal(store_put(s, &r[i]), STORE_OK);
    }
    /* "another process" adds samples to b after the caller read it */
    record later = r[1];
    later.time.samples = 40;
    assert_int_equal(store_put(s, &later), STORE_OK);
    for (int i = 0; i < 3; i++)
        r[i].time.median_us = 11.5; /* what the caller computed from its read */
    size_t written = 99;
    assert_int_equal(store_put_many_if(s, r, 3, still_samples, NULL, &written), STORE_OK);
    assert_int_equal(written, 1); /* a: unchanged since; b: changed; c: none there */
    record back;
    assert_int_equal(store_get(s, "G|p|b0|a|hot", &back), STORE_OK);
    assert_true(back.time.median_us == 11.5);
    assert_int_equal(store_get(s, "G|p|b0|b|hot", &back), STORE_OK);
    assert_int_equal(back.time.samples, 40);
    assert_true(back.time.median_us == 10.5);
    assert_int_equal(store_get(s, "G|p|b0|c|hot", &back), STORE_NOTFOUND);
    assert_int_equal(store_put_many_if(s, r, 0, still_samples, NULL, &written), STORE_OK);
    assert_int_equal(written, 0);
    assert_int_equal(store_put_many_if(s, r, 1, NULL, NULL, &written), STORE_EINVAL);
    store_close(s);
    /* a damaged value at a key is left alone */
    raw_put(dir, "results", "G|p|b0|c|hot", "{not json");
    s = open_rw(dir);
    damaged_log log = {0};
    store_on_damaged(s, log_damaged, &log);
    assert_int_equal(store_put_many_if(s, &r[2], 1, still_samples, NULL, &written), STORE_OK);
    assert_int_equal(written, 0);
    store_close(s);
}

/* store_remove deletes a damaged record, a readable one only by force. */
static void test_remove(void **state)
{
    const char *dir = *state;
    record r;
    put_closed(dir, &r, "a");
    raw_put(dir, "results", "G|p|b0|b|hot", "[1");
    store *s = open_rw(dir);
    assert_int_equal(store_remove(s, "G|p|b0|a|hot", 0), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "--force"));
    assert_int_equal(store_count(s), 2);
    assert_int_equal(store_remove(s, "G|p|b0|b|hot", 0), STORE_OK);
    assert_int_equal(store_count(s), 1);
    assert_int_equal(store_remove(s, "G|p|b0|b|hot", 0), STORE_NOTFOUND);
    assert_int_equal(store_remove(s, "G|p|b0|a|hot", 1), STORE_OK);
    assert_int_equal(store_count(s), 0);
    assert_int_equal(store_remove(s, "", 0), STORE_EINVAL);
    store_close(s);
    /* Read-only: refused. */
    assert_int_equal(store_open(dir, 1, &s, NULL, 0), STORE_OK);
    assert_int_equal(store_remove(s, "G|p|b0|a|hot", 1), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "read-only"));
    store_close(s);
}

TU_MAIN(cmocka_unit_test(test_strerror), STORE_TEST(test_put_get), STORE_TEST(test_put_invalid),
        STORE_TEST(test_resume_replace), STORE_TEST(test_scan_prefix), STORE_TEST(test_schema_meta),
        STORE_TEST(test_open_errors), STORE_TEST(test_map_growth),
        STORE_TEST(test_concurrent_writers), STORE_TEST(test_concurrent_writers_tiny_map),
        STORE_TEST(test_damaged_value), STORE_TEST(test_damaged_skipped),
        STORE_TEST(test_put_many_if), STORE_TEST(test_remove))
