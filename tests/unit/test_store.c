/* test_store.c - the LMDB results store: keys, the JSON record form and its
 * strict decoder, put/get/scan/count, resume (replace), schema versioning,
 * map growth from a tiny map, concurrent writer processes, damaged values
 * and the merge rule.
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
#include "tests/unit/testutil.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* A record with every field set to a value that is not its default, so a
 * field the encoder or decoder drops shows up as a difference. */
static void fill_full(store_record *r)
{
    memset(r, 0, sizeof *r);
    /* Key fields at their longest (size - 1). */
    memset(r->device, 'D', sizeof r->device - 1);
    memcpy(r->device, "NVIDIA ", 7);
    snprintf(r->problem, sizeof r->problem, "b4.h8.s512.d64.nc");
    snprintf(r->build, sizeof r->build, "3f9a0c1d2e4b5a69");
    snprintf(r->config, sizeof r->config, "d64.m128.n64.w4.s2.z1");
    snprintf(r->mode, sizeof r->mode, "cold");
    r->kind = STORE_KIND_BASELINE;
    r->status = STORE_ST_WRONG;
    snprintf(r->error, sizeof r->error, "rel_l2 \"too\" big,\tsee\\log\nline 2 \xc2\xb5s");
    r->time.median_us = 0.1 + 0.2; /* 0.30000000000000004: cJSON's printer drops the bit */
    r->time.min_us = 1.0 / 3.0;
    r->time.mean_us = 123456789.123456789;
    r->time.stdev_us = 4.9e-324; /* the smallest subnormal */
    r->time.cv = DBL_MAX;
    r->time.noise = -0.0078125;
    r->time.samples = 397;
    r->tflops = 312.75;
    r->gbps = 1e-300;
    r->rel_l2 = 2.5e-4;
    r->max_abs = 0.03125;
    r->regs = 168;
    r->smem_static = 4096;
    r->smem_dynamic = 9007199254740992L; /* 2^53 */
    r->local_bytes = 16;
    r->max_blocks_per_sm = 2;
    r->cta_cycles_mean = 81234.5;
    r->cta_cycles_max = 99999.25;
    r->waves = 1.0 + DBL_EPSILON;
    r->sm_imbalance = 1.0625;
    snprintf(r->gpu_uuid, sizeof r->gpu_uuid, "GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901");
    r->cc = 90;
    r->sm_count = 132;
    snprintf(r->driver, sizeof r->driver, "550.54.15");
    snprintf(r->runtime, sizeof r->runtime, "12.4");
    r->sm_clock_mhz = 1980;
    r->mem_clock_mhz = 2619;
    r->throttle_reasons = 0xffffffffffffffffULL; /* not a double */
    r->throttled = 1;
    snprintf(r->host, sizeof r->host, "node-17.cluster");
    snprintf(r->space_name, sizeof r->space_name, "h100");
    snprintf(r->space_hash, sizeof r->space_hash, "0123456789abcdef");
    snprintf(r->version, sizeof r->version, "0.1.0");
    r->timestamp = 1717171717.123456;
}

/* A small valid record: device/problem/config vary with the arguments. */
static void fill_simple(store_record *r, const char *device, const char *problem,
                        const char *config)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device, sizeof r->device, "%s", device);
    snprintf(r->problem, sizeof r->problem, "%s", problem);
    snprintf(r->build, sizeof r->build, "b0");
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->mode, sizeof r->mode, "hot");
    r->kind = STORE_KIND_KERNEL;
    r->status = STORE_ST_OK;
    r->time.median_us = 10.5;
    r->time.noise = 0.01;
    r->time.samples = 20;
    r->sm_clock_mhz = r->mem_clock_mhz = r->throttled = -1;
}

/* Same bits, or both NaN. */
static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

#define EQ_STR(f) assert_string_equal(a->f, b->f)
#define EQ_INT(f) assert_int_equal(a->f, b->f)
#define EQ_DBL(f)                                                                                  \
    do {                                                                                           \
        if (!same_double(a->f, b->f)) {                                                            \
            print_error("%s: %.17g != %.17g\n", #f, a->f, b->f);                                   \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

static void assert_record_equal(const store_record *a, const store_record *b)
{
    EQ_STR(device);
    EQ_STR(problem);
    EQ_STR(build);
    EQ_STR(config);
    EQ_STR(mode);
    EQ_INT(kind);
    EQ_INT(status);
    EQ_STR(error);
    EQ_DBL(time.median_us);
    EQ_DBL(time.min_us);
    EQ_DBL(time.mean_us);
    EQ_DBL(time.stdev_us);
    EQ_DBL(time.cv);
    EQ_DBL(time.noise);
    EQ_INT(time.samples);
    EQ_DBL(tflops);
    EQ_DBL(gbps);
    EQ_DBL(rel_l2);
    EQ_DBL(max_abs);
    EQ_INT(regs);
    EQ_INT(smem_static);
    EQ_INT(local_bytes);
    EQ_INT(max_blocks_per_sm);
    assert_true(a->smem_dynamic == b->smem_dynamic);
    EQ_DBL(cta_cycles_mean);
    EQ_DBL(cta_cycles_max);
    EQ_DBL(waves);
    EQ_DBL(sm_imbalance);
    EQ_STR(gpu_uuid);
    EQ_INT(cc);
    EQ_INT(sm_count);
    EQ_STR(driver);
    EQ_STR(runtime);
    EQ_INT(sm_clock_mhz);
    EQ_INT(mem_clock_mhz);
    assert_true(a->throttle_reasons == b->throttle_reasons);
    EQ_INT(throttled);
    EQ_STR(host);
    EQ_STR(space_name);
    EQ_STR(space_hash);
    EQ_STR(version);
    EQ_DBL(timestamp);
}

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

static void key_of(const store_record *r, char *key)
{
    assert_int_equal(store_key(r, key, STORE_KEY_LEN), STORE_OK);
}

/* The record's JSON text, via cJSON's printer (caller frees). */
static char *json_text(const store_record *r)
{
    cJSON *j = store_record_to_json(r);
    assert_non_null(j);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(t);
    return t;
}

/* Writes key=val into a named database of the store at dir with raw LMDB,
 * as a damaged or future store would have it. */
static void raw_put(const char *dir, const char *db, const char *key, const char *val)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
    assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, MDB_CREATE, &dbi), 0);
    MDB_val k = {strlen(key), (void *)key}, v = {strlen(val), (void *)val};
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
}

/* The value of key in a named database, read with raw LMDB (caller frees;
 * NULL when absent). */
static char *raw_get(const char *dir, const char *db, const char *key)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    char *out = NULL;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 2), 0);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, 0, &dbi), 0);
    MDB_val k = {strlen(key), (void *)key}, v;
    if (mdb_get(txn, dbi, &k, &v) == 0)
        out = strndup(v.mv_data, v.mv_size);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return out;
}

static int setup_dir(void **state)
{
    char *dir = malloc(512);
    if (!dir || !tu_tmpdir(dir, 512)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int teardown_dir(void **state)
{
    tu_rmtree(*state);
    free(*state);
    unsetenv("FASWEEP_STORE_MAPSIZE");
    return 0;
}

/* dir/name into buf. */
static char *sub(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

/* ---- names, keys --------------------------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    const char *st[] = {"ok", "wrong", "crashed", "timeout"};
    for (int i = 0; i < 4; i++) {
        store_status out = STORE_ST_OK;
        assert_string_equal(store_status_name((store_status)i), st[i]);
        assert_int_equal(store_status_parse(st[i], &out), 0);
        assert_int_equal(out, i);
    }
    store_status so = STORE_ST_TIMEOUT;
    assert_int_equal(store_status_parse("OK", &so), -1);
    assert_int_equal(store_status_parse("", &so), -1);
    assert_int_equal(store_status_parse(NULL, &so), -1);
    assert_int_equal(so, STORE_ST_TIMEOUT);
    assert_string_equal(store_status_name((store_status)9), "invalid");

    store_kind k = STORE_KIND_KERNEL;
    assert_int_equal(store_kind_parse("baseline", &k), 0);
    assert_int_equal(k, STORE_KIND_BASELINE);
    assert_string_equal(store_kind_name(STORE_KIND_KERNEL), "kernel");
    assert_int_equal(store_kind_parse("kernels", &k), -1);
    assert_string_equal(store_kind_name((store_kind)-1), "invalid");

    assert_string_equal(store_strerror(STORE_ESCHEMA), "store written by a newer fasweep");
    assert_string_equal(store_strerror(STORE_NOTFOUND), "no such record");
    assert_string_equal(store_strerror(-77), "unknown store error");
}

static void test_key(void **state)
{
    (void)state;
    store_record r;
    char key[STORE_KEY_LEN];
    fill_simple(&r, "NVIDIA H100 80GB HBM3", "b4.h8.s512.d64.nc", "d64.m128.n64.w4.s2.z1");
    assert_int_equal(store_key(&r, key, sizeof key), STORE_OK);
    assert_string_equal(key,
                        "NVIDIA H100 80GB HBM3|b4.h8.s512.d64.nc|b0|d64.m128.n64.w4.s2.z1|hot");

    /* Exactly fits, and one byte short. */
    const size_t len = strlen(key);
    char small[STORE_KEY_LEN];
    assert_int_equal(store_key(&r, small, len + 1), STORE_OK);
    assert_string_equal(small, key);
    assert_int_equal(store_key(&r, small, len), STORE_EINVAL);
    assert_int_equal(store_key(&r, NULL, 10), STORE_EINVAL);
    assert_int_equal(store_key(NULL, small, sizeof small), STORE_EINVAL);

    /* The longest key fields fit STORE_KEY_LEN. */
    store_record big;
    fill_full(&big);
    memset(big.problem, 'p', sizeof big.problem - 1);
    memset(big.build, 'b', sizeof big.build - 1);
    memset(big.config, 'c', sizeof big.config - 1);
    memset(big.mode, 'm', sizeof big.mode - 1);
    assert_int_equal(store_key(&big, key, sizeof key), STORE_OK);
    assert_int_equal(strlen(key), 63 + 47 + 39 + 63 + 7 + 4);

    struct {
        size_t off;
        const char *val;
    } bad[] = {
        {offsetof(store_record, device), ""},    {offsetof(store_record, problem), "a|b"},
        {offsetof(store_record, build), "x\ny"}, {offsetof(store_record, config), "c\x7f"},
        {offsetof(store_record, mode), "\t"},    {offsetof(store_record, mode), ""},
        {offsetof(store_record, config), "|"},   {offsetof(store_record, device), "A\x01"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        store_record b = r;
        strcpy((char *)&b + bad[i].off, bad[i].val);
        if (store_key(&b, key, sizeof key) != STORE_EINVAL) {
            print_error("case %zu (\"%s\") was accepted\n", i, bad[i].val);
            fail();
        }
    }
    /* A field without its NUL is refused, never read past. */
    store_record u = r;
    memset(u.mode, 'h', sizeof u.mode);
    assert_int_equal(store_key(&u, key, sizeof key), STORE_EINVAL);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void test_json_round_trip(void **state)
{
    (void)state;
    store_record r, back;
    char err[512] = "";
    fill_full(&r);

    /* Through the text (the store's value and the JSONL line). */
    char *t = json_text(&r);
    cJSON *j = cJSON_Parse(t);
    assert_non_null(j);
    memset(&back, 0x5a, sizeof back);
    assert_int_equal(store_record_from_json(j, &back, err, sizeof err), STORE_OK);
    assert_record_equal(&r, &back);

    /* The documented shape. */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "key"), "mode")->valuestring,
                        "cold");
    assert_string_equal(cJSON_GetObjectItem(j, "status")->valuestring, "wrong");
    assert_string_equal(cJSON_GetObjectItem(j, "kind")->valuestring, "baseline");
    const cJSON *time = cJSON_GetObjectItem(j, "time");
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(time, "median_us")));
    assert_int_equal(cJSON_GetObjectItem(time, "samples")->valuedouble, 397);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "env"), "throttle_reasons")->valuestring,
        "0xffffffffffffffff");
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "cycles"), "sm_imbalance") != NULL);
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "resources"), "smem_dynamic") != NULL);
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "provenance"), "timestamp") != NULL);
    assert_int_equal(cJSON_GetObjectItem(j, "schema")->valuedouble, STORE_SCHEMA_VERSION);
    assert_non_null(strstr(t, "\"median_us\":0.30000000000000004"));
    /* 43 leaves: the 42 fields of store_record plus schema. */
    int leaves = 0;
    for (const cJSON *m = j->child; m; m = m->next)
        leaves += cJSON_IsObject(m) ? cJSON_GetArraySize(m) : 1;
    assert_int_equal(leaves, 43);
    cJSON_Delete(j);
    cJSON_free(t);

    /* Straight from the object, without printing. */
    j = store_record_to_json(&r);
    memset(&back, 0, sizeof back);
    assert_int_equal(store_record_from_json(j, &back, err, sizeof err), STORE_OK);
    assert_record_equal(&r, &back);
    cJSON_Delete(j);
}

static void test_json_non_finite(void **state)
{
    (void)state;
    store_record r, back;
    char err[256];
    fill_simple(&r, "G", "p", "c");
    r.status = STORE_ST_WRONG;
    r.rel_l2 = NAN;
    r.max_abs = INFINITY;
    r.time.cv = -INFINITY;
    char *t = json_text(&r);
    assert_non_null(strstr(t, "\"errors\":{\"rel_l2\":null,\"max_abs\":null}"));
    cJSON *j = cJSON_Parse(t);
    assert_int_equal(store_record_from_json(j, &back, err, sizeof err), STORE_OK);
    assert_true(isnan(back.rel_l2));
    assert_true(isnan(back.max_abs)); /* an infinity reads back as NaN: still not finite */
    assert_true(isnan(back.time.cv));
    assert_true(back.time.median_us == 10.5);
    cJSON_Delete(j);
    cJSON_free(t);
}

static void test_json_defaults(void **state)
{
    (void)state;
    const char *t = "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\","
                    "\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"crashed\"}";
    cJSON *j = cJSON_Parse(t);
    store_record r;
    char err[256] = "";
    memset(&r, 0x5a, sizeof r);
    assert_int_equal(store_record_from_json(j, &r, err, sizeof err), STORE_OK);
    cJSON_Delete(j);
    assert_string_equal(r.device, "G");
    assert_int_equal(r.status, STORE_ST_CRASHED);
    assert_string_equal(r.error, "");
    assert_true(r.time.median_us == 0 && r.tflops == 0 && r.timestamp == 0);
    assert_int_equal(r.time.samples, 0);
    assert_int_equal(r.regs, 0);
    assert_int_equal(r.sm_clock_mhz, -1);
    assert_int_equal(r.mem_clock_mhz, -1);
    assert_int_equal(r.throttled, -1);
    assert_true(r.throttle_reasons == 0);
    assert_string_equal(r.host, "");
}

/* A minimal valid record with `extra` spliced in before the closing brace
 * (and `keyx` inside "key"), through from_json; returns rc, err. */
static int decode(const char *keyx, const char *extra, char *err, size_t n)
{
    char t[1024];
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\","
             "\"mode\":\"hot\"%s},\"kind\":\"kernel\",\"status\":\"ok\"%s}",
             keyx, extra);
    cJSON *j = cJSON_Parse(t);
    if (!j) {
        print_error("test JSON does not parse: %s\n", t);
        fail();
    }
    store_record r, ref;
    memset(&r, 0x5a, sizeof r);
    memcpy(&ref, &r, sizeof r);
    const int rc = store_record_from_json(j, &r, err, n);
    cJSON_Delete(j);
    if (rc != STORE_OK)
        assert_memory_equal(&r, &ref, sizeof r); /* untouched on failure */
    return rc;
}

static void expect_reject(const char *keyx, const char *extra, const char *want)
{
    char err[512] = "";
    const int rc = decode(keyx, extra, err, sizeof err);
    if (rc != STORE_EINVAL || strncmp(err, want, strlen(want)) != 0) {
        print_error("input: key +%s, top +%s\nwant: %s...\ngot:  %s (rc %d)\n", keyx, extra, want,
                    err, rc);
        fail();
    }
}

static void test_from_json_rejects(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(decode("", "", err, sizeof err), STORE_OK);
    assert_int_equal(decode("", ",\"time\":{\"median_us\":1.5,\"samples\":3}", err, sizeof err),
                     STORE_OK);

    /* Unknown keys, at both levels. */
    expect_reject("", ",\"time\":{\"medain_us\":1}", "time.medain_us: unknown key");
    expect_reject("", ",\"bogus\":1", "bogus: unknown key");
    expect_reject(",\"gpu\":\"x\"", "", "key.gpu: unknown key");
    expect_reject("", ",\"median_us\":1", "median_us: unknown key"); /* belongs in time */
    expect_reject("", ",\"env\":{\"time\":{}}", "env.time: unknown key");
    /* Repeated keys. */
    expect_reject("", ",\"tflops\":1,\"tflops\":2", "tflops: given twice");
    expect_reject("", ",\"time\":{},\"time\":{}", "time: given twice");
    expect_reject("", ",\"status\":\"ok\"", "status: given twice");
    expect_reject(",\"mode\":\"cold\"", "", "key.mode: given twice");
    /* Wrong types. */
    expect_reject("", ",\"time\":{\"samples\":\"7\"}",
                  "time.samples: expected an integer from 0 to 2147483647, got \"7\"");
    expect_reject("", ",\"time\":{\"samples\":2.5}", "time.samples: expected an integer");
    expect_reject("", ",\"time\":{\"samples\":-1}", "time.samples: expected an integer");
    expect_reject("", ",\"time\":{\"samples\":1e10}", "time.samples: expected an integer");
    expect_reject("", ",\"time\":{\"samples\":null}", "time.samples: expected an integer");
    expect_reject("", ",\"time\":{\"median_us\":\"1\"}",
                  "time.median_us: expected a finite number or null, got \"1\"");
    expect_reject("", ",\"tflops\":1e999", "tflops: expected a finite number or null, got inf");
    expect_reject("", ",\"time\":{\"median_us\":true}", "time.median_us: expected a finite");
    expect_reject("", ",\"time\":[1]", "time: expected an object, got an array");
    expect_reject("", ",\"error\":5", "error: expected a string, got 5");
    expect_reject("", ",\"env\":{\"throttled\":2}",
                  "env.throttled: expected an integer from -1 to 1");
    expect_reject("", ",\"env\":{\"sm_clock_mhz\":-2}", "env.sm_clock_mhz: expected an integer");
    expect_reject("", ",\"env\":{\"throttle_reasons\":5}",
                  "env.throttle_reasons: expected a hex string");
    expect_reject("", ",\"env\":{\"throttle_reasons\":\"0x\"}", "env.throttle_reasons: expected");
    expect_reject("", ",\"env\":{\"throttle_reasons\":\"12\"}", "env.throttle_reasons: expected");
    expect_reject("", ",\"env\":{\"throttle_reasons\":\"0x1ffffffffffffffff\"}",
                  "env.throttle_reasons: expected");
    expect_reject("", ",\"env\":{\"throttle_reasons\":\"0xfg\"}", "env.throttle_reasons: expected");
    expect_reject("", ",\"resources\":{\"smem_dynamic\":1e300}",
                  "resources.smem_dynamic: expected an integer");
    expect_reject("", ",\"schema\":2", "schema: record schema 2 is newer");
    expect_reject("", ",\"schema\":0", "schema: expected an integer from 1 to 1");
}

static void test_from_json_rejects_fields(void **state)
{
    (void)state;
    char t[2048];
    char err[512];
    struct {
        const char *json; /* a whole record */
        const char *want;
    } cases[] = {
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"good\"}",
         "status: expected \"ok\", \"wrong\", \"crashed\" or \"timeout\", got \"good\""},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\",\"mode\":"
         "\"hot\"},\"kind\":\"kernal\",\"status\":\"ok\"}",
         "kind: expected \"kernel\" or \"baseline\", got \"kernal\""},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\"},\"kind\":"
         "\"kernel\",\"status\":\"ok\"}",
         "key.mode: missing"},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\"}",
         "status: missing"},
        {"{\"kind\":\"kernel\",\"status\":\"ok\"}", "key.device: missing"},
        {"{\"key\":{\"device\":\"\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.device: is empty"},
        {"{\"key\":{\"device\":\"G|H\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.device: holds '|'"},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\\n\",\"build\":\"b\",\"config\":\"c\","
         "\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.problem: holds a control character (\\x0a)"},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\",\"mode\":"
         "\"hotterer\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.mode: text is 8 bytes, longer than the 7 this field holds"},
        {"[1,2]", "expected a JSON object (one record), got an array"},
        {"\"x\"", "expected a JSON object (one record), got \"x\""},
        {"{\"key\":5,\"kind\":\"kernel\",\"status\":\"ok\"}", "key: expected an object, got 5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(t, sizeof t, "%s", cases[i].json);
        cJSON *j = cJSON_Parse(t);
        assert_non_null(j);
        store_record r;
        err[0] = '\0';
        const int rc = store_record_from_json(j, &r, err, sizeof err);
        cJSON_Delete(j);
        if (rc != STORE_EINVAL || strncmp(err, cases[i].want, strlen(cases[i].want)) != 0) {
            print_error("case %zu: %s\nwant: %s\ngot:  %s (rc %d)\n", i, t, cases[i].want, err, rc);
            fail();
        }
    }

    /* Text one byte too long for its field: refused, never cut. */
    char dev[80];
    memset(dev, 'G', 64);
    dev[64] = '\0';
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"%s\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\","
             "\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
             dev);
    cJSON *j = cJSON_Parse(t);
    store_record r;
    assert_int_equal(store_record_from_json(j, &r, err, sizeof err), STORE_EINVAL);
    assert_string_equal(err, "key.device: text is 64 bytes, longer than the 63 this field holds");
    cJSON_Delete(j);
    dev[63] = '\0'; /* 63 fits */
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"%s\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"c\","
             "\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
             dev);
    j = cJSON_Parse(t);
    assert_int_equal(store_record_from_json(j, &r, err, sizeof err), STORE_OK);
    assert_string_equal(r.device, dev);
    cJSON_Delete(j);

    /* No input, no output, no error buffer: no crash. */
    assert_int_equal(store_record_from_json(NULL, &r, err, sizeof err), STORE_EINVAL);
    assert_string_equal(err, "expected a JSON object (one record), got nothing");
    j = cJSON_CreateObject();
    assert_int_equal(store_record_from_json(j, NULL, err, sizeof err), STORE_EINVAL);
    assert_int_equal(store_record_from_json(j, &r, NULL, 0), STORE_EINVAL);
    cJSON_Delete(j);
}

/* Random byte edits of a valid record: the decoder must accept or reject
 * each cleanly (run under ASan+UBSan in make check); what it accepts must
 * encode and decode again to the same record. */
static void test_from_json_mutations(void **state)
{
    (void)state;
    store_record full;
    fill_full(&full);
    char *base = json_text(&full);
    const size_t len = strlen(base);
    const char alphabet[] = "{}[]\":,0123456789.eE+-xnulltruefalse \\a|";
    unsigned seed = 12345;
    int accepted = 0, parsed = 0;
    char *t = malloc(len + 1);
    assert_non_null(t);
    for (int iter = 0; iter < 4000; iter++) {
        memcpy(t, base, len + 1);
        const int edits = 1 + (int)(rand_r(&seed) % 3);
        for (int e = 0; e < edits; e++)
            t[rand_r(&seed) % len] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
        cJSON *j = cJSON_Parse(t);
        if (!j)
            continue;
        parsed++;
        store_record r, again;
        char err[512];
        if (store_record_from_json(j, &r, err, sizeof err) == STORE_OK) {
            accepted++;
            cJSON *j2 = store_record_to_json(&r);
            assert_int_equal(store_record_from_json(j2, &again, err, sizeof err), STORE_OK);
            assert_record_equal(&r, &again);
            cJSON_Delete(j2);
        } else {
            assert_true(err[0] != '\0');
        }
        cJSON_Delete(j);
    }
    free(t);
    cJSON_free(base);
    /* The edits must reach the decoder both ways for this to test anything. */
    assert_true(parsed > 100);
    assert_true(accepted > 10);
    assert_true(accepted < parsed);
}

/* ---- put / get / count / scan -------------------------------------------------------------- */

static void test_put_get(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    assert_int_equal(store_count(s), 0);
    store_record r, back;
    fill_full(&r);
    r.rel_l2 = NAN; /* a NaN output's error */
    assert_int_equal(store_put(s, &r), STORE_OK);
    assert_int_equal(store_count(s), 1);
    char key[STORE_KEY_LEN];
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
    store_record good[3], r;
    fill_simple(&good[0], "G", "p", "c0");
    fill_simple(&good[1], "G", "p", "c1");
    fill_simple(&good[2], "G", "p", "c2");

    good[1].device[0] = '\0';
    assert_int_equal(store_put_many(s, good, 3), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "record 2 of 3"));
    assert_non_null(strstr(store_last_error(s), "device is empty"));
    assert_int_equal(store_count(s), 0); /* all or nothing */

    r = good[0];
    r.status = (store_status)7;
    assert_int_equal(store_put(s, &r), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "status 7"));
    r = good[0];
    r.kind = (store_kind)3;
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
    store_record r, back;
    char key[STORE_KEY_LEN];
    fill_simple(&r, "G", "p", "c");
    assert_int_equal(store_put(s, &r), STORE_OK);
    r.time.median_us = 7.25;
    r.status = STORE_ST_TIMEOUT;
    snprintf(r.error, sizeof r.error, "ran past 10 s");
    assert_int_equal(store_put(s, &r), STORE_OK);
    assert_int_equal(store_count(s), 1);
    key_of(&r, key);
    assert_int_equal(store_get(s, key, &back), STORE_OK);
    assert_true(back.time.median_us == 7.25);
    assert_int_equal(back.status, STORE_ST_TIMEOUT);
    assert_string_equal(back.error, "ran past 10 s");
    /* Another mode is another key. */
    snprintf(r.mode, sizeof r.mode, "cold");
    assert_int_equal(store_put(s, &r), STORE_OK);
    assert_int_equal(store_count(s), 2);
    store_close(s);
}

typedef struct visit {
    char keys[64][STORE_KEY_LEN];
    int n, stop_after;
} visit;

static int visit_fn(const store_record *r, void *ctx)
{
    visit *v = ctx;
    if (v->n < 64)
        store_key(r, v->keys[v->n], STORE_KEY_LEN);
    v->n++;
    return v->stop_after > 0 && v->n >= v->stop_after;
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
                store_record r;
                fill_simple(&r, devs[d], probs[p], cfgs[c]);
                assert_int_equal(store_put(s, &r), STORE_OK);
            }
    assert_int_equal(store_count(s), 24);

    visit v = {0};
    assert_int_equal(store_scan(s, "GPU A|p1|", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 2);
    assert_string_equal(v.keys[0], "GPU A|p1|b0|c1|hot");
    assert_string_equal(v.keys[1], "GPU A|p1|b0|c2|hot");

    memset(&v, 0, sizeof v);
    assert_int_equal(store_scan(s, "GPU A|", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 6);
    for (int i = 0; i < v.n; i++)
        assert_int_equal(strncmp(v.keys[i], "GPU A|", 6), 0);
    /* Byte order: "p10|" < "p1|" ('0' < '|'). */
    assert_string_equal(v.keys[0], "GPU A|p10|b0|c1|hot");
    assert_string_equal(v.keys[2], "GPU A|p1|b0|c1|hot");
    assert_string_equal(v.keys[5], "GPU A|p2|b0|c2|hot");

    /* All of it, in key order. */
    memset(&v, 0, sizeof v);
    assert_int_equal(store_scan(s, "", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 24);
    for (int i = 1; i < v.n; i++)
        assert_true(strcmp(v.keys[i - 1], v.keys[i]) < 0);
    assert_string_equal(v.keys[0], "GPU A PCIe|p10|b0|c1|hot");
    memset(&v, 0, sizeof v);
    assert_int_equal(store_scan(s, NULL, visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 24);

    /* Early stop; no match; a prefix longer than any key. */
    memset(&v, 0, sizeof v);
    v.stop_after = 3;
    assert_int_equal(store_scan(s, "GPU", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 3);
    memset(&v, 0, sizeof v);
    assert_int_equal(store_scan(s, "GPU C", visit_fn, &v), STORE_OK);
    assert_int_equal(v.n, 0);
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
static int copy_fn(const store_record *r, void *ctx)
{
    copier *c = ctx;
    store_record cp = *r;
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
    store_record r, back;
    char cfg[32], key[STORE_KEY_LEN];
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
    store_record *many = calloc(3000, sizeof *many);
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
        store_record r;
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
    store_record r, back;
    char key[STORE_KEY_LEN];
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

/* ---- damaged values ------------------------------------------------------------------------ */

static void test_damaged_value(void **state)
{
    const char *dir = *state;
    store *s = open_rw(dir);
    store_record r;
    fill_simple(&r, "G", "p", "a");
    assert_int_equal(store_put(s, &r), STORE_OK);
    fill_simple(&r, "G", "p", "c");
    assert_int_equal(store_put(s, &r), STORE_OK);
    store_close(s);
    raw_put(dir, "results", "G|p|b0|b|hot", "{not json");
    /* Valid JSON whose key fields are another key's. */
    char *t = json_text(&r);
    raw_put(dir, "results", "G|p|b0|d|hot", t);
    cJSON_free(t);

    s = open_rw(dir);
    store_record back;
    assert_int_equal(store_get(s, "G|p|b0|b|hot", &back), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "record G|p|b0|b|hot: value is not JSON"));
    assert_int_equal(store_get(s, "G|p|b0|d|hot", &back), STORE_EINVAL);
    assert_non_null(strstr(store_last_error(s), "do not match its key"));
    /* A scan delivers what precedes the damage, then fails naming it. */
    visit v = {0};
    assert_int_equal(store_scan(s, "G|", visit_fn, &v), STORE_EINVAL);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.keys[0], "G|p|b0|a|hot");
    assert_non_null(strstr(store_last_error(s), "G|p|b0|b|hot"));
    assert_int_equal(store_count(s), 4);
    store_close(s);
}

/* ---- merge rule ---------------------------------------------------------------------------- */

static void test_better(void **state)
{
    (void)state;
    store_record a, b;
    fill_simple(&a, "G", "p", "c");
    b = a;
    /* ok beats any other status, whatever the rest says. */
    b.status = STORE_ST_WRONG;
    b.timestamp = 9e9;
    b.time.noise = 0;
    assert_int_equal(store_record_better(&a, &b), 1);
    assert_int_equal(store_record_better(&b, &a), 0);
    b.status = STORE_ST_CRASHED;
    assert_int_equal(store_record_better(&a, &b), 1);
    b.status = STORE_ST_TIMEOUT;
    assert_int_equal(store_record_better(&b, &a), 0);

    /* Two ok: lower noise, then more samples, then newer. */
    b = a;
    a.time.noise = 0.01;
    b.time.noise = 0.02;
    b.time.samples = 1000;
    b.timestamp = 9e9;
    assert_int_equal(store_record_better(&a, &b), 1);
    assert_int_equal(store_record_better(&b, &a), 0);
    b.time.noise = 0.01;
    assert_int_equal(store_record_better(&b, &a), 1); /* samples 1000 > 20 */
    assert_int_equal(store_record_better(&a, &b), 0);
    b.time.samples = a.time.samples;
    assert_int_equal(store_record_better(&b, &a), 1); /* newer */
    assert_int_equal(store_record_better(&a, &b), 0);
    b.timestamp = a.timestamp;
    assert_int_equal(store_record_better(&a, &b), 0); /* equal: keep */
    assert_int_equal(store_record_better(&b, &a), 0);
    /* NaN noise (no estimate) loses. */
    b.time.noise = NAN;
    assert_int_equal(store_record_better(&a, &b), 1);
    assert_int_equal(store_record_better(&b, &a), 0);

    /* Two failures: the later attempt. */
    a.status = STORE_ST_CRASHED;
    b.status = STORE_ST_WRONG;
    a.timestamp = 100;
    b.timestamp = 200;
    assert_int_equal(store_record_better(&b, &a), 1);
    assert_int_equal(store_record_better(&a, &b), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_non_finite),
        cmocka_unit_test(test_json_defaults),
        cmocka_unit_test(test_from_json_rejects),
        cmocka_unit_test(test_from_json_rejects_fields),
        cmocka_unit_test(test_from_json_mutations),
        cmocka_unit_test_setup_teardown(test_put_get, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_put_invalid, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_resume_replace, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_scan_prefix, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_schema_meta, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_open_errors, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_map_growth, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_concurrent_writers, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_concurrent_writers_tiny_map, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_damaged_value, setup_dir, teardown_dir),
        cmocka_unit_test(test_better),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
