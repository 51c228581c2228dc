/* test_record.c - the record (store/record.h): names, keys, the JSON form
 * and its strict decoder, the merge rule and the ranking order. No LMDB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/record.h"
#include "tests/unit/testrec.h"

/* ---- names, keys --------------------------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    const char *st[] = {"ok", "wrong", "crashed", "timeout", "compile_error", "implausible"};
    for (int i = 0; i < 6; i++) {
        record_status out = RECORD_ST_OK;
        assert_string_equal(record_status_name((record_status)i), st[i]);
        assert_int_equal(record_status_parse(st[i], &out), 0);
        assert_int_equal(out, i);
    }
    record_status so = RECORD_ST_TIMEOUT;
    assert_int_equal(record_status_parse("OK", &so), -1);
    assert_int_equal(record_status_parse("", &so), -1);
    assert_int_equal(record_status_parse(NULL, &so), -1);
    assert_int_equal(so, RECORD_ST_TIMEOUT);
    assert_string_equal(record_status_name((record_status)9), "invalid");

    record_kind k = RECORD_KIND_KERNEL;
    assert_int_equal(record_kind_parse("baseline", &k), 0);
    assert_int_equal(k, RECORD_KIND_BASELINE);
    assert_string_equal(record_kind_name(RECORD_KIND_KERNEL), "kernel");
    assert_int_equal(record_kind_parse("kernels", &k), -1);
    assert_string_equal(record_kind_name((record_kind)-1), "invalid");
}

static void test_key(void **state)
{
    (void)state;
    record r;
    char key[RECORD_KEY_LEN];
    fill_simple(&r, "NVIDIA H100 80GB HBM3", "b4.h8.s512.d64.nc", "d64.m128.n64.w4.s2.z1");
    assert_int_equal(record_key(&r, key, sizeof key), 0);
    assert_string_equal(key,
                        "NVIDIA H100 80GB HBM3|b4.h8.s512.d64.nc|b0|d64.m128.n64.w4.s2.z1|hot");

    /* Exactly fits, and one byte short. */
    const size_t len = strlen(key);
    char small[RECORD_KEY_LEN];
    assert_int_equal(record_key(&r, small, len + 1), 0);
    assert_string_equal(small, key);
    assert_int_equal(record_key(&r, small, len), -1);
    assert_int_equal(record_key(&r, NULL, 10), -1);
    assert_int_equal(record_key(NULL, small, sizeof small), -1);

    /* The longest key fields fit RECORD_KEY_LEN. */
    record big;
    fill_full(&big);
    memset(big.problem, 'p', sizeof big.problem - 1);
    memset(big.build, 'b', sizeof big.build - 1);
    memset(big.config, 'c', sizeof big.config - 1);
    snprintf(big.mode, sizeof big.mode, "cold"); /* the longest known mode */
    assert_int_equal(record_key(&big, key, sizeof key), 0);
    assert_int_equal(strlen(key), 63 + 47 + 39 + 63 + 4 + 4);

    struct {
        size_t off;
        const char *val;
    } bad[] = {
        {offsetof(record, device), ""},    {offsetof(record, problem), "a|b"},
        {offsetof(record, build), "x\ny"}, {offsetof(record, config), "c\x7f"},
        {offsetof(record, mode), "\t"},    {offsetof(record, mode), ""},
        {offsetof(record, config), "|"},   {offsetof(record, device), "A\x01"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        record b = r;
        strcpy((char *)&b + bad[i].off, bad[i].val);
        if (record_key(&b, key, sizeof key) != -1) {
            print_error("case %zu (\"%s\") was accepted\n", i, bad[i].val);
            fail();
        }
    }
    /* A field without its NUL is refused, never read past. */
    record u = r;
    memset(u.mode, 'h', sizeof u.mode);
    assert_int_equal(record_key(&u, key, sizeof key), -1);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void test_json_round_trip(void **state)
{
    (void)state;
    record r, back;
    char err[512] = "";
    fill_full(&r);

    /* Through the text (the store's value and the JSONL line). */
    char *t = json_text(&r);
    cJSON *j = cJSON_Parse(t);
    assert_non_null(j);
    memset(&back, 0x5a, sizeof back);
    assert_int_equal(record_from_json(j, &back, err, sizeof err), 0);
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
    assert_int_equal(cJSON_GetObjectItem(j, "schema")->valuedouble, RECORD_SCHEMA_VERSION);
    assert_non_null(strstr(t, "\"median_us\":0.30000000000000004"));
    /* 56 leaves: the 55 fields of record plus schema. */
    int leaves = 0;
    for (const cJSON *m = j->child; m; m = m->next)
        leaves += cJSON_IsObject(m) ? cJSON_GetArraySize(m) : 1;
    assert_int_equal(leaves, 56);
    cJSON_Delete(j);
    cJSON_free(t);

    /* Straight from the object, without printing. */
    j = record_to_json(&r);
    memset(&back, 0, sizeof back);
    assert_int_equal(record_from_json(j, &back, err, sizeof err), 0);
    assert_record_equal(&r, &back);
    cJSON_Delete(j);
}

static void test_json_non_finite(void **state)
{
    (void)state;
    record r, back;
    char err[256];
    fill_simple(&r, "G", "p", "c");
    r.status = RECORD_ST_WRONG;
    r.rel_l2 = NAN;
    r.max_abs = INFINITY;
    r.time.cv = -INFINITY;
    char *t = json_text(&r);
    assert_non_null(strstr(t, "\"errors\":{\"rel_l2\":null,\"max_abs\":null}"));
    cJSON *j = cJSON_Parse(t);
    assert_int_equal(record_from_json(j, &back, err, sizeof err), 0);
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
    const char *t = "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64."
                    "m64.n64.w4.s2.z1\","
                    "\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"crashed\"}";
    cJSON *j = cJSON_Parse(t);
    record r;
    char err[256] = "";
    memset(&r, 0x5a, sizeof r);
    assert_int_equal(record_from_json(j, &r, err, sizeof err), 0);
    cJSON_Delete(j);
    assert_string_equal(r.device, "G");
    assert_int_equal(r.status, RECORD_ST_CRASHED);
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
 * (and `keyx` inside "key"), through from_json; returns rc, err. Its status
 * is "wrong": an ok record would need its times too. */
static int decode(const char *keyx, const char *extra, char *err, size_t n)
{
    char t[1024];
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64."
             "n64.w4.s2.z1\","
             "\"mode\":\"hot\"%s},\"kind\":\"kernel\",\"status\":\"wrong\"%s}",
             keyx, extra);
    cJSON *j = cJSON_Parse(t);
    if (!j) {
        print_error("test JSON does not parse: %s\n", t);
        fail();
    }
    record r, ref;
    memset(&r, 0x5a, sizeof r);
    memcpy(&ref, &r, sizeof r);
    const int rc = record_from_json(j, &r, err, n);
    cJSON_Delete(j);
    if (rc != 0)
        assert_memory_equal(&r, &ref, sizeof r); /* untouched on failure */
    return rc;
}

static void expect_reject(const char *keyx, const char *extra, const char *want)
{
    char err[512] = "";
    const int rc = decode(keyx, extra, err, sizeof err);
    if (rc != -1 || strncmp(err, want, strlen(want)) != 0) {
        print_error("input: key +%s, top +%s\nwant: %s...\ngot:  %s (rc %d)\n", keyx, extra, want,
                    err, rc);
        fail();
    }
}

/* Top-level JSON added to a valid record, and the start of the error it
 * must get. */
static const struct {
    const char *extra, *want;
} record_rejects[] = {
    /* Unknown keys, at both levels. */
    {",\"time\":{\"medain_us\":1}", "time.medain_us: unknown key"},
    {",\"bogus\":1", "bogus: unknown key"},
    {",\"median_us\":1", "median_us: unknown key"}, /* belongs in time */
    {",\"env\":{\"time\":{}}", "env.time: unknown key"},
    /* Repeated keys. */
    {",\"tflops\":1,\"tflops\":2", "tflops: given twice"},
    {",\"time\":{},\"time\":{}", "time: given twice"},
    {",\"status\":\"ok\"", "status: given twice"},
    /* Wrong types. */
    {",\"time\":{\"samples\":\"7\"}",
     "time.samples: expected an integer from 0 to 2147483647, got \"7\""},
    {",\"time\":{\"samples\":2.5}", "time.samples: expected an integer"},
    {",\"time\":{\"samples\":-1}", "time.samples: expected an integer"},
    {",\"time\":{\"samples\":1e10}", "time.samples: expected an integer"},
    {",\"time\":{\"samples\":null}", "time.samples: expected an integer"},
    {",\"time\":{\"median_us\":\"1\"}",
     "time.median_us: expected a finite number or null, got \"1\""},
    {",\"tflops\":1e999", "tflops: expected a finite number or null, got inf"},
    {",\"time\":{\"median_us\":true}", "time.median_us: expected a finite"},
    {",\"time\":[1]", "time: expected an object, got an array"},
    {",\"error\":5", "error: expected a string, got 5"},
    {",\"env\":{\"throttled\":2}", "env.throttled: expected an integer from -1 to 1"},
    {",\"env\":{\"sm_clock_mhz\":-2}", "env.sm_clock_mhz: expected an integer"},
    {",\"env\":{\"throttle_reasons\":5}", "env.throttle_reasons: expected a hex string"},
    {",\"env\":{\"throttle_reasons\":\"0x\"}", "env.throttle_reasons: expected"},
    {",\"env\":{\"throttle_reasons\":\"12\"}", "env.throttle_reasons: expected"},
    {",\"env\":{\"throttle_reasons\":\"0x1ffffffffffffffff\"}", "env.throttle_reasons: expected"},
    {",\"env\":{\"throttle_reasons\":\"0xfg\"}", "env.throttle_reasons: expected"},
    {",\"resources\":{\"smem_dynamic\":1e300}", "resources.smem_dynamic: expected an integer"},
    {",\"schema\":2", "schema: record schema 2 is newer"},
    {",\"schema\":0", "schema: expected an integer from 1 to 1"},
};

static void test_from_json_rejects(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(decode("", "", err, sizeof err), 0);
    assert_int_equal(decode("", ",\"time\":{\"median_us\":1.5,\"samples\":3}", err, sizeof err), 0);
    for (size_t i = 0; i < sizeof record_rejects / sizeof *record_rejects; i++)
        expect_reject("", record_rejects[i].extra, record_rejects[i].want);
    /* In the key. */
    expect_reject(",\"gpu\":\"x\"", "", "key.gpu: unknown key");
    expect_reject(",\"mode\":\"cold\"", "", "key.mode: given twice");
}

/* The kernel family in the key: the default (mma, or empty) keeps the
 * five-field key and a JSON without key.family, byte for byte what it was
 * before families; another family has a six-field key and key.family,
 * and both round-trip; a record without key.family (an old store's) reads
 * as mma; a bad family is refused. */
static void test_family(void **state)
{
    (void)state;
    record r, back;
    char key[RECORD_KEY_LEN], key2[RECORD_KEY_LEN], err[256] = "";
    fill_simple(&r, "G", "p", "d64.m128.n64.w4.s2.z1");
    assert_string_equal(record_family(&r), "mma");
    assert_int_equal(record_key(&r, key, sizeof key), 0);
    assert_string_equal(key, "G|p|b0|d64.m128.n64.w4.s2.z1|hot");
    char *t0 = json_text(&r);
    assert_null(strstr(t0, "family"));
    /* "mma" spelled out: the same key, the same JSON. */
    snprintf(r.family, sizeof r.family, "mma");
    assert_int_equal(record_key(&r, key2, sizeof key2), 0);
    assert_string_equal(key2, key);
    char *t1 = json_text(&r);
    assert_string_equal(t1, t0);
    cJSON_free(t1);

    /* An old record (no key.family) reads as mma, to the same key. */
    cJSON *j = cJSON_Parse(t0);
    memset(&back, 0x5a, sizeof back);
    assert_int_equal(record_from_json(j, &back, err, sizeof err), 0);
    cJSON_Delete(j);
    cJSON_free(t0);
    assert_string_equal(back.family, "mma");
    assert_int_equal(record_key(&back, key2, sizeof key2), 0);
    assert_string_equal(key2, key);

    /* Another family: six fields, key.family, a round trip. */
    snprintf(r.family, sizeof r.family, "wgmma");
    assert_int_equal(record_key(&r, key2, sizeof key2), 0);
    assert_string_equal(key2, "G|p|b0|wgmma|d64.m128.n64.w4.s2.z1|hot");
    assert_string_not_equal(key2, key);
    char *t = json_text(&r);
    assert_non_null(strstr(t, "\"build\":\"b0\",\"family\":\"wgmma\",\"config\""));
    j = cJSON_Parse(t);
    cJSON_free(t);
    memset(&back, 0, sizeof back);
    assert_int_equal(record_from_json(j, &back, err, sizeof err), 0);
    cJSON_Delete(j);
    assert_record_equal(&r, &back);
    assert_string_equal(back.family, "wgmma");
    assert_int_equal(record_key(&back, key, sizeof key), 0);
    assert_string_equal(key, key2);

    /* Not a family name: refused by the key, the check and the decoder. */
    snprintf(r.family, sizeof r.family, "Wg|1");
    assert_int_equal(record_key(&r, key, sizeof key), -1);
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "key.family"));
    memset(r.family, 'a', sizeof r.family); /* no NUL */
    assert_int_equal(record_key(&r, key, sizeof key), -1);
    expect_reject(",\"family\":\"\"", "", "key.family: expected a kernel family name");
    expect_reject(",\"family\":7", "", "key.family: expected a kernel family name");
    expect_reject(",\"family\":\"abcdefghijklmnop\"", "",
                  "key.family: expected a kernel family name");
    expect_reject(",\"family\":\"WG\"", "",
                  "key.family: is not a kernel family name (lower-case letters, digits and '_')");
    expect_reject(",\"family\":\"mma\",\"family\":\"mma\"", "", "key.family: given twice");
    assert_int_equal(decode(",\"family\":\"mma\"", "", err, sizeof err), 0);
    assert_int_equal(decode(",\"family\":\"wgmma_2\"", "", err, sizeof err), 0);
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
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64.w4."
         "s2.z1\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"good\"}",
         "status: expected \"ok\", \"wrong\", \"crashed\", \"timeout\", \"compile_error\" or "
         "\"implausible\", got \"good\""},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64.w4."
         "s2.z1\",\"mode\":"
         "\"hot\"},\"kind\":\"kernal\",\"status\":\"ok\"}",
         "kind: expected \"kernel\" or \"baseline\", got \"kernal\""},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64.w4."
         "s2.z1\"},\"kind\":"
         "\"kernel\",\"status\":\"ok\"}",
         "key.mode: missing"},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64.w4."
         "s2.z1\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\"}",
         "status: missing"},
        {"{\"kind\":\"kernel\",\"status\":\"ok\"}", "key.device: missing"},
        {"{\"key\":{\"device\":\"\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64.w4."
         "s2.z1\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.device: is empty"},
        {"{\"key\":{\"device\":\"G|H\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64."
         "w4.s2.z1\",\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.device: holds '|'"},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\\n\",\"build\":\"b\",\"config\":\"d64.m64.n64."
         "w4.s2.z1\","
         "\"mode\":"
         "\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
         "key.problem: holds a control character (\\x0a)"},
        {"{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64.n64.w4."
         "s2.z1\",\"mode\":"
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
        record r;
        err[0] = '\0';
        const int rc = record_from_json(j, &r, err, sizeof err);
        cJSON_Delete(j);
        if (rc != -1 || strncmp(err, cases[i].want, strlen(cases[i].want)) != 0) {
            print_error("case %zu: %s\nwant: %s\ngot:  %s (rc %d)\n", i, t, cases[i].want, err, rc);
            fail();
        }
    }

    /* Text one byte too long for its field: refused, never cut. */
    char dev[80];
    memset(dev, 'G', 64);
    dev[64] = '\0';
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"%s\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64."
             "n64.w4.s2.z1\","
             "\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"wrong\"}",
             dev);
    cJSON *j = cJSON_Parse(t);
    record r;
    assert_int_equal(record_from_json(j, &r, err, sizeof err), -1);
    assert_string_equal(err, "key.device: text is 64 bytes, longer than the 63 this field holds");
    cJSON_Delete(j);
    dev[63] = '\0'; /* 63 fits */
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"%s\",\"problem\":\"p\",\"build\":\"b\",\"config\":\"d64.m64."
             "n64.w4.s2.z1\","
             "\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"wrong\"}",
             dev);
    j = cJSON_Parse(t);
    assert_int_equal(record_from_json(j, &r, err, sizeof err), 0);
    assert_string_equal(r.device, dev);
    cJSON_Delete(j);

    /* No input, no output, no error buffer: no crash. */
    assert_int_equal(record_from_json(NULL, &r, err, sizeof err), -1);
    assert_string_equal(err, "expected a JSON object (one record), got nothing");
    j = cJSON_CreateObject();
    assert_int_equal(record_from_json(j, NULL, err, sizeof err), -1);
    assert_int_equal(record_from_json(j, &r, NULL, 0), -1);
    cJSON_Delete(j);
}

/* Random byte edits of a valid record: the decoder must accept or reject
 * each cleanly (run under ASan+UBSan in make check); what it accepts must
 * encode and decode again to the same record. */
static void test_from_json_mutations(void **state)
{
    (void)state;
    record full;
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
        record r, again;
        char err[512];
        if (record_from_json(j, &r, err, sizeof err) == 0) {
            accepted++;
            cJSON *j2 = record_to_json(&r);
            assert_int_equal(record_from_json(j2, &again, err, sizeof err), 0);
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

/* ---- merge rule ---------------------------------------------------------------------------- */

static void test_better(void **state)
{
    (void)state;
    record a, b;
    fill_simple(&a, "G", "p", "c");
    b = a;
    /* ok beats any other status, whatever the rest says. */
    b.status = RECORD_ST_WRONG;
    b.timestamp = 9e9;
    b.time.noise = 0;
    assert_int_equal(record_better(&a, &b), 1);
    assert_int_equal(record_better(&b, &a), 0);
    b.status = RECORD_ST_CRASHED;
    assert_int_equal(record_better(&a, &b), 1);
    b.status = RECORD_ST_TIMEOUT;
    assert_int_equal(record_better(&b, &a), 0);

    /* Two ok: lower noise, then more samples, then newer. */
    b = a;
    a.time.noise = 0.01;
    b.time.noise = 0.02;
    b.time.samples = 1000;
    b.timestamp = 9e9;
    assert_int_equal(record_better(&a, &b), 1);
    assert_int_equal(record_better(&b, &a), 0);
    b.time.noise = 0.01;
    assert_int_equal(record_better(&b, &a), 1); /* samples 1000 > 20 */
    assert_int_equal(record_better(&a, &b), 0);
    b.time.samples = a.time.samples;
    assert_int_equal(record_better(&b, &a), 1); /* newer */
    assert_int_equal(record_better(&a, &b), 0);
    b.timestamp = a.timestamp;
    assert_int_equal(record_better(&a, &b), 0); /* equal: keep */
    assert_int_equal(record_better(&b, &a), 0);
    /* NaN noise (no estimate) loses. */
    b.time.noise = NAN;
    assert_int_equal(record_better(&a, &b), 1);
    assert_int_equal(record_better(&b, &a), 0);

    /* Two failures: the later attempt. */
    a.status = RECORD_ST_CRASHED;
    b.status = RECORD_ST_WRONG;
    a.timestamp = 100;
    b.timestamp = 200;
    assert_int_equal(record_better(&b, &a), 1);
    assert_int_equal(record_better(&a, &b), 0);
}

/* ---- ranking order ------------------------------------------------------------------------- */

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

/* The order is total on any input, NaN included: a before b exactly when
 * b is after a, and a NaN noise (a one-sample record) after any number.
 * (The copy of this order that `fasweep topk` had answered "after" both
 * ways for a NaN noise, so the seeds' order depended on the scan order.) */
static void test_rank_order(void **state)
{
    (void)state;
    const double med[] = {10.0, 10.0, 11.0, NAN};
    const double noise[] = {0.01, NAN, 0.001, 0.01};
    const char *cfg[] = {"c", "a", "b", "d"};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            const int ij = record_rank_order(med[i], noise[i], cfg[i], med[j], noise[j], cfg[j]);
            const int ji = record_rank_order(med[j], noise[j], cfg[j], med[i], noise[i], cfg[i]);
            if (sign(ij) != -sign(ji)) {
                print_error("pair %d %d: %d and %d\n", i, j, ij, ji);
                fail();
            }
            assert_int_equal(ij == 0, i == j);
        }
    /* Same median: the known noise first, then the NaN one, whatever the text. */
    assert_true(record_rank_order(10, 0.01, "z", 10, NAN, "a") < 0);
    assert_true(record_rank_order(10, NAN, "a", 10, 0.01, "z") > 0);
    /* A NaN median after every number; then noise, then text. */
    assert_true(record_rank_order(1e9, 0.5, "z", NAN, 0.0, "a") < 0);
    assert_true(record_rank_order(10, 0.01, "a", 10, 0.01, "b") < 0);
    assert_true(record_rank_order(9.99, 0.5, "z", 10, 0.0, "a") < 0);
    /* The tie rule (intervals): tests/unit/test_intervals.c. */
}

/* An ok record of kind `kind`, family `fam` (NULL: none given), config
 * `cfg` and time object members `time`, through from_json: rc, err. */
static int decode_ok(const char *kind, const char *fam, const char *cfg, const char *time,
                     char *err, size_t n)
{
    char t[1024], famx[64] = "";
    if (fam)
        snprintf(famx, sizeof famx, ",\"family\":\"%s\"", fam);
    snprintf(t, sizeof t,
             "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\"%s,\"config\":"
             "\"%s\",\"mode\":\"hot\"},\"kind\":\"%s\",\"status\":\"ok\",\"time\":{%s}}",
             famx, cfg, kind, time);
    cJSON *j = cJSON_Parse(t);
    assert_non_null(j);
    record r;
    err[0] = '\0';
    const int rc = record_from_json(j, &r, err, n);
    cJSON_Delete(j);
    return rc;
}

static void expect_ok_reject(const char *kind, const char *fam, const char *cfg, const char *time,
                             const char *want)
{
    char err[512];
    const int rc = decode_ok(kind, fam, cfg, time, err, sizeof err);
    if (rc != -1 || strstr(err, want) == NULL) {
        print_error("config %s, time {%s}\nwant: ...%s...\ngot:  %s (rc %d)\n", cfg, time, want,
                    err, rc);
        fail();
    }
}

/* A kernel record of config cfg with each row's time fields, {fields,
 * what the refusal names}, is refused naming it. */
static void expect_times_rejected(const char *cfg, const char *const (*bad)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_ok_reject("kernel", NULL, cfg, bad[i][0], bad[i][1]);
}

/* Record validation: a kernel record's config is a point of its family by
 * the planner's rules (the field named); times and spreads finite,
 * non-negative and consistent. The same rules on import, merge and eval:
 * from_json and record_check are one validation. */
static void test_validation_gaps(void **state)
{
    (void)state;
    char err[512];
    const char *t = "\"median_us\":150,\"min_us\":149,\"noise\":0.01,\"cv\":0.02";
    assert_int_equal(decode_ok("kernel", NULL, "d64.m64.n64.w4.s2.z1", t, err, sizeof err), 0);
    /* Configs: the planner's values, its text, its rules ({family, config, message}). */
    static const char *const bad_cfg[][3] = {
        {NULL, "d64.m-64.n64.w4.s2.z1", "key.config: "},
        {NULL, "d64.m-64.n64.w4.s2.z1", "BLOCK_M is -64"},
        {NULL, "d64.m99999999999.n64.w4.s2.z1",
         "key.config: \"d64.m99999999999.n64.w4.s2.z1\" is not a config of kernel family mma"},
        {NULL, "d64.m128.n64.w3.s2.z1", "NUM_WARPS is 3"},
        {NULL, "d64.m1024.n64.w4.s2.z1", "BLOCK_M is 1024"},
        {NULL, "d64.m128.n64.w4.s9.z1", "STAGES is 9"},
        {NULL, "d96.m128.n64.w4.s2.z1", "key.config: "},
        {NULL, "d64.m16.n64.w4.s2.z1", "key.config: "},
        {NULL, "d064.m128.n64.w4.s2.z1", "key.config: "},
        {NULL, "sdpa", "key.config: "},
        {"mma", "d64.m-64.n64.w4.s2.z1", "key.config: "},
        {"wgmma", "anything.goes", "key.config: "},
    };
    for (size_t i = 0; i < sizeof bad_cfg / sizeof *bad_cfg; i++)
        expect_ok_reject("kernel", bad_cfg[i][0], bad_cfg[i][1], t, bad_cfg[i][2]);
    /* A baseline keeps a free name; a family this build does not know
     * cannot be checked; the wgmma family's configs follow its rules. */
    assert_int_equal(decode_ok("baseline", NULL, "torch sdpa (flash)", t, err, sizeof err), 0);
    assert_int_equal(decode_ok("kernel", "futurefam", "anything.goes", t, err, sizeof err), 0);
    assert_int_equal(decode_ok("kernel", "wgmma", "d64.m128.n128.c2.s2.p2", t, err, sizeof err), 0);
    /* Times and spreads. */
    const char *cfg = "d64.m64.n64.w4.s2.z1";
    static const char *const bad_time[][2] = {
        {"\"median_us\":1e-320,\"min_us\":150", "time.median_us"},
        {"\"median_us\":1e-320", "time.median_us"},
        {"\"median_us\":100,\"min_us\":150",
         "time.min_us: 150 is slower than the median or mean 100"},
        {"\"median_us\":100,\"min_us\":90,\"mean_us\":80", "time.min_us"},
        {"\"median_us\":100,\"noise\":-1", "time.noise: "},
        {"\"median_us\":100,\"cv\":-1e308", "time.cv: "},
        {"\"median_us\":100,\"round_us\":[100,0]", "time.round_us"},
        {"\"median_us\":100,\"ci_lo_us\":101,\"ci_hi_us\":102", "time.ci_lo_us"},
    };
    expect_times_rejected(cfg, bad_time, sizeof bad_time / sizeof *bad_time);
    /* null spreads are "unknown", not bad */
    assert_int_equal(decode_ok("kernel", NULL, cfg, "\"median_us\":100,\"noise\":null,\"cv\":null",
                               err, sizeof err),
                     0);
    /* A failed record: its spreads are still checked, its times are not. */
    record r;
    fill_simple(&r, "G", "p", "c");
    r.status = RECORD_ST_CRASHED;
    r.time.noise = -0.5;
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "time.noise"));
    /* The engine's path (store_put, eval) refuses the same config. */
    fill_simple(&r, "G", "p", "d64.m-64.n64.w4.s2.z1");
    r.kind = RECORD_KIND_KERNEL;
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "key.config"));
}

/* Seeds vs schema, finite speedups: what import accepts, topk can write within
 * docs/seeds.schema.json, and no ratio of two records' times overflows. A
 * variant names its source (kernel_hash equal to its build's hash, a
 * kernel_path); a hash is lower-case hex; a timestamp has four year digits;
 * times lie in [1e-6, 1e9] us and an interval starts at 1e-6 us or later. */
static void test_seedable(void **state)
{
    (void)state;
    char err[512];
    record r;
    fill_simple(&r, "G", "p", "c");
    assert_int_equal(record_check(&r, err, sizeof err), 0);
    snprintf(r.build, sizeof r.build, "%s0123456789abcdef", RECORD_VARIANT_PREFIX);
    assert_true(record_is_variant(&r));
    assert_int_equal(record_check(&r, err, sizeof err), -1); /* no kernel_hash, no path */
    assert_non_null(strstr(err, "provenance.kernel_hash"));
    snprintf(r.kernel_hash, sizeof r.kernel_hash, "0123456789ABCDEF");
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "lower-case hex"));
    snprintf(r.kernel_hash, sizeof r.kernel_hash, "0123456789abcdee"); /* not the build's */
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    snprintf(r.kernel_hash, sizeof r.kernel_hash, "0123456789abcdef");
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "provenance.kernel_path"));
    snprintf(r.kernel_path, sizeof r.kernel_path, "/k.cuh");
    assert_int_equal(record_check(&r, err, sizeof err), 0);
    snprintf(r.build, sizeof r.build, "%sXYZ", RECORD_VARIANT_PREFIX);
    assert_int_equal(record_check(&r, err, sizeof err), -1);
    assert_non_null(strstr(err, "key.build"));
    fill_simple(&r, "G", "p", "c");
    const double ts[] = {-1, 253402300800.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
        r.timestamp = ts[i];
        assert_int_equal(record_check(&r, err, sizeof err), -1);
        assert_non_null(strstr(err, "provenance.timestamp"));
    }
    r.timestamp = 253402300799.0; /* 9999-12-31T23:59:59Z */
    assert_int_equal(record_check(&r, err, sizeof err), 0);
    const char *cfg = "d64.m64.n64.w4.s2.z1";
    static const char *const bad_time[][2] = {
        {"\"median_us\":1e308,\"mean_us\":1e308", "time.median_us"},
        {"\"median_us\":100,\"stdev_us\":1e300", "time.stdev_us"},
        {"\"median_us\":100,\"round_us\":[100,1e10]", "time.round_us"},
        {"\"median_us\":100,\"ci_lo_us\":1e-300,\"ci_hi_us\":102", "time.ci_lo_us"},
    };
    expect_times_rejected(cfg, bad_time, sizeof bad_time / sizeof *bad_time);
    /* The extremes it keeps: their ratios are finite. */
    assert_int_equal(decode_ok("kernel", NULL, cfg,
                               "\"median_us\":1e9,\"mean_us\":1e9,\"ci_lo_us\":1e-6,"
                               "\"ci_hi_us\":1e15",
                               err, sizeof err),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_family),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_non_finite),
        cmocka_unit_test(test_json_defaults),
        cmocka_unit_test(test_from_json_rejects),
        cmocka_unit_test(test_from_json_rejects_fields),
        cmocka_unit_test(test_from_json_mutations),
        cmocka_unit_test(test_better),
        cmocka_unit_test(test_rank_order),
        cmocka_unit_test(test_validation_gaps),
        cmocka_unit_test(test_seedable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
