/* test_store_io.c - export (CSV and JSON lines), all-or-nothing import and
 * merging stores by the merge rule.
 *
 * Every test works in its own directory from tu_tmpdir and removes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <lmdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/store_io.h"
#include "tests/unit/testrec.h"
#include "tests/unit/teststore.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static void fill(record *r, const char *device, const char *config)
{
    fill_simple(r, device, "b1.h2.s128.d64.nc", config);
    snprintf(r->build, sizeof r->build, "abc123");
    r->time.median_us = 12.5;
    r->timestamp = 1000;
}

static void count_damaged(const char *path, const char *key, const char *why, long count, void *ctx)
{
    (void)path;
    (void)key;
    (void)why;
    *(long *)ctx = count;
}

static store *open_at(const char *dir, const char *name)
{
    char path[600], err[1024] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    store *s = NULL;
    const int rc = store_open(path, 0, &s, err, sizeof err);
    if (rc != STORE_OK) {
        print_error("store_open(%s): %s\n", path, err);
        fail();
    }
    return s;
}

static void put(store *s, const record *r)
{
    if (store_put(s, r) != STORE_OK) {
        print_error("put: %s\n", store_last_error(s));
        fail();
    }
}

/* fill(r, device, config), then put it. */
static void fill_put(store *s, record *r, const char *device, const char *config)
{
    fill(r, device, config);
    put(s, r);
}

static void get(store *s, const record *like, record *out)
{
    char key[RECORD_KEY_LEN];
    assert_int_equal(record_key(like, key, sizeof key), STORE_OK);
    assert_int_equal(store_get(s, key, out), STORE_OK);
}

/* Exports s into a string (caller frees). */
static char *export_str(store *s, const char *prefix, store_io_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    const int rc = store_io_export(s, prefix, fmt, f);
    fclose(f);
    if (rc != STORE_OK) {
        print_error("export: %s\n", store_last_error(s));
        fail();
    }
    return buf;
}

/* Imports text into s; returns rc, fills n and err. */
static int import_str(store *s, const char *text, long *n, char *err, size_t errlen)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    const int rc = store_io_import(s, f, "in.jsonl", n, err, errlen);
    fclose(f);
    return rc;
}

static const char *csv_header =
    "device,problem,build,config,mode,kind,status,error,median_us,min_us,mean_us,stdev_us,cv,"
    "noise,samples,launches,ci_lo_us,ci_hi_us,round_us,tflops,gbps,rel_l2,max_abs,regs,smem_static,"
    "smem_dynamic,local_bytes,"
    "max_blocks_per_sm,cta_mean,cta_max,waves,sm_imbalance,sm_min_mhz,sm_median_mhz,sm_max_mhz,"
    "ref_mhz,blocks,discarded_blocks,below_threshold,gpu_uuid,cc,sm_count,driver,runtime,"
    "sm_clock_mhz,mem_clock_mhz,throttle_reasons,throttled,host,space_name,space_hash,version,"
    "timestamp,kernel_path,kernel_hash\n";

/* ---- export -------------------------------------------------------------------------------- */

static void test_export_csv(void **state)
{
    store *s = open_at(*state, "s");
    /* Empty store: the header alone. */
    char *out = export_str(s, "", STORE_IO_CSV);
    assert_string_equal(out, csv_header);
    free(out);

    record r;
    fill(&r, "GPU A", "c1");
    r.status = RECORD_ST_WRONG;
    snprintf(r.error, sizeof r.error, "rel_l2 0.5, \"max\"\nnext");
    r.rel_l2 = NAN;
    r.max_abs = 0.1 + 0.2;
    r.smem_dynamic = 49152;
    r.throttle_reasons = 0x24;
    r.throttled = 1;
    r.cc = 89;
    snprintf(r.host, sizeof r.host, "h,1");
    put(s, &r);
    fill_put(s, &r, "GPU B", "c2");

    out = export_str(s, "", STORE_IO_CSV);
    const char *row1 =
        "GPU A,b1.h2.s128.d64.nc,abc123,c1,hot,baseline,wrong,\"rel_l2 0.5, \"\"max\"\"\nnext\","
        "12.5,0,0,0,0,0.01,20,0,0,0,,0,0,,0.30000000000000004,0,0,49152,0,0,0,0,0,0,0,0,0,0,0,0,0,,"
        "89,"
        "0,,,-1,-1,0x24,1,\"h,1\",,,,1000,,\n";
    const char *row2 =
        "GPU B,b1.h2.s128.d64.nc,abc123,c2,hot,baseline,ok,,12.5,0,0,0,0,0.01,20,0,0,0,,"
        "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,,0,0,,,-1,-1,0x0,-1,,,,,1000,,\n";
    char want[4096];
    snprintf(want, sizeof want, "%s%s%s", csv_header, row1, row2);
    assert_string_equal(out, want);
    free(out);

    /* The prefix picks rows; the header stays. */
    out = export_str(s, "GPU B|", STORE_IO_CSV);
    snprintf(want, sizeof want, "%s%s", csv_header, row2);
    assert_string_equal(out, want);
    free(out);
    store_close(s);
}

/* CSV formula cells: a text cell a spreadsheet would run as a formula
 * (= + - @, tab, CR first) gets a leading ' (inside the quotes when the
 * cell is quoted); numbers, negative ones too, stay numbers. */
static void test_export_csv_formula(void **state)
{
    store *s = open_at(*state, "s");
    record r;
    fill(&r, "=HYPERLINK(\"x\")", "@SUM(A1)");
    r.status = RECORD_ST_WRONG;
    snprintf(r.error, sizeof r.error, "\t-2+3");
    snprintf(r.host, sizeof r.host, "+h");
    snprintf(r.driver, sizeof r.driver, "-1");
    r.rel_l2 = -0.5;
    r.regs = -3;
    put(s, &r);
    char *out = export_str(s, "", STORE_IO_CSV);
    const char *row = strchr(out, '\n') + 1;
    const char *head = "\"'=HYPERLINK(\"\"x\"\")\",b1.h2.s128.d64.nc,abc123,'@SUM(A1),hot,";
    if (strncmp(row, head, strlen(head)) != 0) {
        print_error("want: %s...\ngot:  %s", head, row);
        fail();
    }
    assert_non_null(strstr(row, ",wrong,'\t-2+3,12.5,"));
    assert_non_null(strstr(row, ",-0.5,"));
    assert_non_null(strstr(row, ",-3,"));
    assert_non_null(strstr(row, ",'-1,"));
    assert_non_null(strstr(row, ",'+h,"));
    free(out);
    store_close(s);
}

static void test_export_jsonl(void **state)
{
    store *s = open_at(*state, "s");
    record a, b;
    fill(&a, "GPU A", "c1");
    snprintf(a.error, sizeof a.error, "line1\nline2"); /* escaped: still one line */
    fill_put(s, &b, "GPU B", "c2");
    put(s, &a);
    char *out = export_str(s, "", STORE_IO_JSONL);
    char *la = json_text(&a), *lb = json_text(&b);
    char want[4096];
    snprintf(want, sizeof want, "%s\n%s\n", la, lb); /* key order */
    assert_string_equal(out, want);
    free(out);
    out = export_str(s, "GPU A|", STORE_IO_JSONL);
    snprintf(want, sizeof want, "%s\n", la);
    assert_string_equal(out, want);
    free(out);
    out = export_str(s, "GPU C|", STORE_IO_JSONL);
    assert_string_equal(out, "");
    free(out);
    cJSON_free(la);
    cJSON_free(lb);
    store_close(s);
}

/* An export read back into a fresh store gives the same records. */
static void test_export_import_round_trip(void **state)
{
    store *s = open_at(*state, "s");
    for (int i = 0; i < 300; i++) { /* more than one scan batch */
        record r;
        char cfg[16];
        snprintf(cfg, sizeof cfg, "c%03d", i);
        fill(&r, i % 2 ? "GPU A" : "GPU B", cfg);
        r.time.median_us = 1.0 / (i + 3);
        r.rel_l2 = i % 7 ? 1e-4 * i : NAN;
        r.throttle_reasons = 0x8000000000000000ULL >> (i % 64);
        put(s, &r);
    }
    char *text = export_str(s, "", STORE_IO_JSONL);
    store *t = open_at(*state, "t");
    long n = -1;
    char err[1024] = "";
    assert_int_equal(import_str(t, text, &n, err, sizeof err), STORE_OK);
    assert_int_equal(n, 300);
    char *again = export_str(t, "", STORE_IO_JSONL);
    assert_string_equal(text, again);
    free(text);
    free(again);
    store_close(s);
    store_close(t);
}

/* A failed write is reported, not lost. */
static void test_export_write_error(void **state)
{
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        skip();
    store *s = open_at(*state, "s");
    record r;
    fill_put(s, &r, "GPU A", "c1");
    assert_int_equal(store_io_export(s, "", STORE_IO_JSONL, full), STORE_EIO);
    assert_non_null(strstr(store_last_error(s), "writing the output failed"));
    fclose(full);
    assert_int_equal(store_io_export(s, "", STORE_IO_CSV, NULL), STORE_EINVAL);
    assert_int_equal(store_io_export(s, "", (store_io_format)9, stdout), STORE_EINVAL);
    store_close(s);
}

/* ---- import -------------------------------------------------------------------------------- */

static void test_import_good(void **state)
{
    store *s = open_at(*state, "s");
    record a, b, c, back;
    fill(&a, "GPU A", "c1");
    fill(&b, "GPU A", "c2");
    fill(&c, "GPU A", "c1");
    c.time.median_us = 9.75; /* same key as a, later line: wins */
    char *la = json_text(&a), *lb = json_text(&b), *lc = json_text(&c);
    char text[8192];
    snprintf(text, sizeof text, "%s\n\n   \n%s\r\n%s", la, lb, lc); /* blank lines, CRLF, no EOL */
    long n = -1;
    char err[1024] = "";
    assert_int_equal(import_str(s, text, &n, err, sizeof err), STORE_OK);
    assert_string_equal(err, "");
    assert_int_equal(n, 3);
    assert_int_equal(store_count(s), 2);
    get(s, &a, &back);
    assert_true(back.time.median_us == 9.75);
    get(s, &b, &back);
    assert_true(back.time.median_us == 12.5);
    /* Hand-written: only the required fields. */
    const char *min = "{\"key\":{\"device\":\"GPU Z\",\"problem\":\"p\",\"build\":\"baseline\","
                      "\"config\":\"sdpa\",\"mode\":\"hot\"},\"kind\":\"baseline\",\"status\":"
                      "\"ok\",\"time\":{\"median_us\":5}}\n";
    assert_int_equal(import_str(s, min, &n, err, sizeof err), STORE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(store_count(s), 3);
    /* Empty input: nothing, fine. */
    assert_int_equal(import_str(s, "\n\n", &n, err, sizeof err), STORE_OK);
    assert_int_equal(n, 0);
    cJSON_free(la);
    cJSON_free(lb);
    cJSON_free(lc);
    store_close(s);
}

/* good, good, BAD, good: error names line 3, nothing at all written. */
static void expect_import_fails(store *s, const char *bad, const char *want)
{
    record a, b, c;
    fill(&a, "GPU N", "n1");
    fill(&b, "GPU N", "n2");
    fill(&c, "GPU N", "n4");
    char *la = json_text(&a), *lb = json_text(&b), *lc = json_text(&c);
    char text[8192];
    snprintf(text, sizeof text, "%s\n%s\n%s\n%s\n", la, lb, bad, lc);
    const long before = store_count(s);
    long n = 77;
    char err[1024] = "";
    const int rc = import_str(s, text, &n, err, sizeof err);
    if (rc != STORE_EINVAL || strncmp(err, want, strlen(want)) != 0) {
        print_error("bad line: %s\nwant: %s...\ngot:  %s (rc %d)\n", bad, want, err, rc);
        fail();
    }
    assert_int_equal(n, 0);
    assert_int_equal(store_count(s), before);
    record back;
    char key[RECORD_KEY_LEN];
    record_key(&a, key, sizeof key);
    assert_int_equal(store_get(s, key, &back), STORE_NOTFOUND);
    cJSON_free(la);
    cJSON_free(lb);
    cJSON_free(lc);
}

static void test_import_atomic(void **state)
{
    store *s = open_at(*state, "s");
    record old;
    fill_put(s, &old, "GPU O", "o1");

    expect_import_fails(s,
                        "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":"
                        "\"c\",\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\",\"time\":{"
                        "\"medain_us\":3}}",
                        "in.jsonl:3: time.medain_us: unknown key");
    expect_import_fails(s, "{\"key\":{", "in.jsonl:3: not valid JSON");
    expect_import_fails(s, "[1]", "in.jsonl:3: expected a JSON object");
    expect_import_fails(s,
                        "{\"key\":{\"device\":\"G|x\",\"problem\":\"p\",\"build\":\"b\",\"config\":"
                        "\"c\",\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"}",
                        "in.jsonl:3: key.device: holds '|'");
    expect_import_fails(s,
                        "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":"
                        "\"c\",\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\"} {}",
                        "in.jsonl:3: text after the JSON object");
    expect_import_fails(s,
                        "{\"key\":{\"device\":\"G\",\"problem\":\"p\",\"build\":\"b\",\"config\":"
                        "\"c\",\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"fine\"}",
                        "in.jsonl:3: status: expected");
    assert_int_equal(store_count(s), 1);

    /* A bad first line after blank lines: the real line number. */
    long n;
    char err[1024];
    assert_int_equal(import_str(s, "\n\n  x\n", &n, err, sizeof err), STORE_EINVAL);
    assert_int_equal(strncmp(err, "in.jsonl:3: not valid JSON (near \"x", 35), 0);
    /* A NUL inside a line is no valid record. */
    char nul[64] = "{}";
    FILE *f = fmemopen(nul, 5, "r"); /* "{}\0\0\0" */
    assert_int_equal(store_io_import(s, f, NULL, &n, err, sizeof err), STORE_EINVAL);
    assert_int_equal(strncmp(err, "input:1: ", 9), 0);
    fclose(f);
    assert_int_equal(store_count(s), 1);
    store_close(s);
}

/* ---- merge --------------------------------------------------------------------------------- */

static void test_merge_rule(void **state)
{
    const char *dir = *state;
    store *dst = open_at(dir, "dst");
    store *src = open_at(dir, "src");
    /* Per key k1..k8: the status of the record in dst and in src (-1: none)
     * and the src record's noise, samples, timestamp and median (the rest
     * as fill: noise 0.01, 20 samples, timestamp 1000, median 12.5). */
    static const struct {
        int dst, src;
        double noise;
        int samples;
        double timestamp, median_us;
    } cases[] = {
        {RECORD_ST_WRONG, RECORD_ST_OK, 0.01, 20, 1000, 1.0},    /* k1: src ok -> replaced */
        {RECORD_ST_OK, RECORD_ST_OK, 0.02, 500, 5000, 2.0},      /* k2: src noisier -> kept */
        {RECORD_ST_OK, RECORD_ST_OK, 0.01, 40, 1000, 3.0},       /* k3: more samples -> replaced */
        {RECORD_ST_OK, RECORD_ST_OK, 0.01, 20, 999, 4.0},        /* k4: src older -> kept */
        {RECORD_ST_OK, RECORD_ST_OK, 0.01, 20, 1001, 5.0},       /* k5: src newer -> replaced */
        {RECORD_ST_OK, RECORD_ST_CRASHED, 0.01, 20, 9999, 12.5}, /* k6: src crashed -> kept */
        {-1, RECORD_ST_OK, 0.01, 20, 1000, 7.0},                 /* k7: only in src -> added */
        {RECORD_ST_OK, -1, 0, 0, 0, 0},                          /* k8: only in dst */
    };
    record r;
    for (int i = 0; i < 8; i++) {
        char cfg[16];
        snprintf(cfg, sizeof cfg, "k%d", i + 1);
        fill(&r, "G", cfg);
        if (cases[i].dst >= 0) {
            r.status = (record_status)cases[i].dst;
            put(dst, &r);
        }
        if (cases[i].src >= 0) {
            r.status = (record_status)cases[i].src;
            r.time.noise = cases[i].noise;
            r.time.samples = cases[i].samples;
            r.timestamp = cases[i].timestamp;
            r.time.median_us = cases[i].median_us;
            put(src, &r);
        }
    }
    store_close(src);

    char path[600], err[1024] = "";
    snprintf(path, sizeof path, "%s/src", dir);
    store_merge_stats st;
    memset(&st, 0x5a, sizeof st);
    assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_OK);
    assert_int_equal(st.added, 1);
    assert_int_equal(st.replaced, 3);
    assert_int_equal(st.kept, 3);
    assert_int_equal(store_count(dst), 8);

    const double want[] = {1.0, 12.5, 3.0, 12.5, 5.0, 12.5, 7.0, 12.5};
    for (int i = 0; i < 8; i++) {
        record back;
        char cfg[16];
        snprintf(cfg, sizeof cfg, "k%d", i + 1);
        fill(&r, "G", cfg);
        get(dst, &r, &back);
        if (back.time.median_us != want[i]) {
            print_error("%s: median %g, want %g\n", cfg, back.time.median_us, want[i]);
            fail();
        }
    }
    record back;
    fill(&r, "G", "k6");
    get(dst, &r, &back);
    assert_int_equal(back.status, RECORD_ST_OK);

    /* Merging again changes nothing: every clash is kept now. */
    assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_OK);
    assert_int_equal(st.added, 0);
    assert_int_equal(st.replaced, 0);
    assert_int_equal(st.kept, 7);
    store_close(dst);
}

static void test_merge_refusals(void **state)
{
    const char *dir = *state;
    store *dst = open_at(dir, "dst");
    record r;
    fill(&r, "G", "c");
    put(dst, &r);
    char path[700], err[1024];
    store_merge_stats st;

    /* Itself, by the same path, another spelling and a symlink. */
    const char *spell[] = {"%s/dst", "%s/dst/", "%s/./dst", "%s/dst/../dst", "%s/link"};
    snprintf(path, sizeof path, "%s/dst", dir);
    char link[700];
    snprintf(link, sizeof link, "%s/link", dir);
    assert_int_equal(symlink(path, link), 0);
    for (size_t i = 0; i < sizeof spell / sizeof *spell; i++) {
        snprintf(path, sizeof path, spell[i], dir);
        err[0] = '\0';
        assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_EINVAL);
        assert_non_null(strstr(err, "cannot merge a store into itself"));
        assert_non_null(strstr(store_last_error(dst), "into itself"));
    }
    /* A missing source: named, nothing created. */
    snprintf(path, sizeof path, "%s/nope", dir);
    assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_EIO);
    assert_non_null(strstr(err, "nope"));
    struct stat sb;
    assert_int_equal(stat(path, &sb), -1);
    /* A source with a damaged record: error naming it, and nothing of the
     * source written (a0 sorts before the damage and was already put). */
    store *src = open_at(dir, "src");
    fill(&r, "G", "a0");
    put(src, &r);
    fill(&r, "G", "d1");
    put(src, &r);
    store_close(src);
    char key[RECORD_KEY_LEN];
    record_key(&r, key, sizeof key);
    snprintf(path, sizeof path, "%s/src", dir);
    raw_put(path, "results", key, "{\"kind\":\"kernel\"}");
    assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_EDAMAGED);
    assert_non_null(strstr(err, key));
    assert_non_null(strstr(err, "key.device: missing"));
    assert_int_equal(store_count(dst), 1);
    assert_int_equal(st.added + st.replaced + st.kept, 0);
    /* With a damaged-record handler the damaged source
     * record is skipped and reported; the rest is merged. */
    long seen = 0;
    store_on_damaged(dst, count_damaged, &seen);
    assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_OK);
    assert_int_equal(seen, 1);
    assert_int_equal(st.added, 1); /* a0 */
    assert_int_equal(store_count(dst), 2);
    store_close(dst);

    /* A read-only destination. */
    snprintf(path, sizeof path, "%s/dst", dir);
    assert_int_equal(store_open(path, 1, &dst, err, sizeof err), STORE_OK);
    fill(&r, "G", "z");
    src = open_at(dir, "src2");
    put(src, &r);
    store_close(src);
    snprintf(path, sizeof path, "%s/src2", dir);
    assert_int_equal(store_merge(dst, path, &st, err, sizeof err), STORE_EINVAL);
    assert_non_null(strstr(err, "read-only"));
    store_close(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_export_csv),         STORE_TEST(test_export_csv_formula),
        STORE_TEST(test_export_jsonl),       STORE_TEST(test_export_import_round_trip),
        STORE_TEST(test_export_write_error), STORE_TEST(test_import_good),
        STORE_TEST(test_import_atomic),      STORE_TEST(test_merge_rule),
        STORE_TEST(test_merge_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
