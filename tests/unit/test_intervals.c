/* test_intervals.c - intervals on records (store/record.h, sweep/intervals.h):
 * the JSON fields and their validation, a record from before intervals, the
 * tie rule and the merge rule with intervals, rounds folded into a stored
 * record, and the interval pass over a store (fixed bootstrap seed, so the
 * numbers are exact from run to run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store/mode.h"
#include "store/record.h"
#include "store/rounds.h"
#include "store/store.h"
#include "sweep/intervals.h"
#include "tests/unit/teststore.h"

static record ok_rec(const char *config, double us)
{
    record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device, sizeof r.device, "NVIDIA H100");
    snprintf(r.problem, sizeof r.problem, "b4.h8.s512.d64.nc");
    snprintf(r.build, sizeof r.build, "0123456789abcdef");
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.mode, sizeof r.mode, "hot");
    r.status = RECORD_ST_OK;
    r.time.median_us = r.time.min_us = r.time.mean_us = us;
    r.time.noise = 0.001;
    r.time.samples = 20;
    r.time.ci_lo_us = r.time.ci_hi_us = NAN;
    r.clock.min_mhz = r.clock.median_mhz = r.clock.max_mhz = r.clock.ref_mhz = -1;
    r.clock.below = -1;
    r.sm_clock_mhz = r.mem_clock_mhz = r.throttled = -1;
    r.timestamp = 1e9;
    return r;
}

static record with_ci(record r, double lo, double hi)
{
    r.time.ci_lo_us = lo;
    r.time.ci_hi_us = hi;
    return r;
}

static void test_json_round_trip(void **st)
{
    (void)st;
    record r = with_ci(ok_rec("d64.m64.n64.w4.s2.z1", 10), 9.9, 10.2);
    r.time.round.n = 3;
    r.time.round.us[0] = 9.95, r.time.round.us[1] = 10.0, r.time.round.us[2] = 10.05;
    cJSON *j = record_to_json(&r);
    char *text = cJSON_PrintUnformatted(j);
    assert_non_null(strstr(text, "\"ci_lo_us\":9.9"));
    assert_non_null(strstr(text, "\"round_us\":[9.95,10,10.05]"));
    record back;
    char err[256];
    cJSON *p = cJSON_Parse(text);
    assert_int_equal(record_from_json(p, &back, err, sizeof err), 0);
    assert_true(back.time.ci_lo_us == 9.9 && back.time.ci_hi_us == 10.2);
    assert_int_equal(back.time.round.n, 3);
    assert_true(back.time.round.us[2] == 10.05);
    cJSON_Delete(p);
    cJSON_free(text);
    cJSON_Delete(j);
}

static int decode(const char *text, record *out, char *err, size_t n)
{
    cJSON *j = cJSON_Parse(text);
    const int rc = record_from_json(j, out, err, n);
    cJSON_Delete(j);
    return rc;
}

#define OLD                                                                                        \
    "{\"key\":{\"device\":\"G\",\"problem\":\"b1.h1.s64.d64.nc\",\"build\":\"b\",\"config\":"      \
    "\"d64.m64.n64.w4.s2.z1\",\"mode\":\"hot\"},\"kind\":\"kernel\",\"status\":\"ok\","

static void test_old_record_reads_without_interval(void **st)
{
    (void)st;
    record r;
    char err[256];
    assert_int_equal(
        decode(OLD "\"time\":{\"median_us\":10,\"noise\":0.001}}", &r, err, sizeof err), 0);
    assert_false(record_has_ci(&r));
    assert_int_equal(r.time.round.n, 0);
    /* never ranked as certain: whether it ties is unknown (not a tie, not
     * a difference), both ways */
    record far = with_ci(ok_rec("x", 100), 99, 101);
    assert_int_equal(record_tie(&r, &far), RECORD_TIE_UNKNOWN);
    assert_int_equal(record_tie(&far, &r), RECORD_TIE_UNKNOWN);
    assert_int_equal(record_tie(&r, &r), RECORD_TIE_UNKNOWN);
    assert_string_equal(record_tie_name(record_tie(&r, &far)), "unknown");
}

static void test_validation(void **st)
{
    (void)st;
    record r;
    char err[256];
    /* an interval must hold the median */
    assert_int_equal(decode(OLD "\"time\":{\"median_us\":10,\"ci_lo_us\":10.5,\"ci_hi_us\":11}}",
                            &r, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "time.ci_lo_us"));
    /* both or neither */
    assert_int_equal(decode(OLD "\"time\":{\"median_us\":10,\"ci_lo_us\":9}}", &r, err, sizeof err),
                     -1);
    /* negative and non-finite rounds */
    assert_int_equal(
        decode(OLD "\"time\":{\"median_us\":10,\"round_us\":[10,-1]}}", &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "round_us"));
    assert_int_equal(decode(OLD "\"time\":{\"median_us\":10,\"round_us\":[1,2,3,4,5,6,7,8,9]}}", &r,
                            err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "more than 8 rounds"));
}

static void test_tie_rule(void **st)
{
    (void)st;
    const record a = with_ci(ok_rec("a", 10.0), 9.9, 10.1);
    /* 10.2 +- 0.1: |d| 0.2 > hypot(0.1, 0.1) = 0.141 -> different */
    const record b = with_ci(ok_rec("b", 10.2), 10.1, 10.3);
    assert_int_equal(record_tie(&a, &b), RECORD_TIE_NO);
    assert_string_equal(record_tie_name(record_tie(&a, &b)), "no");
    /* 10.12 +- 0.1: |d| 0.12 <= 0.141 -> a tie, both ways */
    const record c = with_ci(ok_rec("c", 10.12), 10.02, 10.22);
    assert_int_equal(record_tie(&a, &c), RECORD_TIE_YES);
    assert_int_equal(record_tie(&c, &a), RECORD_TIE_YES);
    assert_string_equal(record_tie_name(record_tie(&a, &c)), "yes");
    /* asymmetric intervals: the side facing the other counts */
    const record d = with_ci(ok_rec("d", 10.3), 9.95, 10.31); /* wide below */
    assert_int_equal(record_tie(&a, &d), RECORD_TIE_YES);
    assert_true(fabs(record_ci_half(&d, 10.0) - 0.35 / 10.3) < 1e-12);
}

static void test_merge_rule(void **st)
{
    (void)st;
    const record none = ok_rec("a", 10);
    const record wide = with_ci(ok_rec("a", 10), 9.5, 10.5);
    const record narrow = with_ci(ok_rec("a", 10), 9.9, 10.1);
    assert_int_equal(record_better(&wide, &none), 1);
    assert_int_equal(record_better(&none, &wide), 0);
    assert_int_equal(record_better(&narrow, &wide), 1);
    assert_int_equal(record_better(&wide, &narrow), 0);
}

static void test_combine(void **st)
{
    (void)st;
    record a = ok_rec("a", 10.0), b = ok_rec("a", 11.0), out, out2;
    a.clock.blocks = 2;
    b.clock.blocks = 3;
    intervals_combine(NULL, &a, &out);
    assert_int_equal(out.time.round.n, 1);
    assert_true(out.time.median_us == 10.0);
    intervals_combine(&out, &b, &out2);
    assert_int_equal(out2.time.round.n, 2);
    assert_true(out2.time.median_us == 10.5); /* the mean of the rounds */
    assert_int_equal(out2.time.samples, 40);
    assert_int_equal(out2.clock.blocks, 5);
    assert_false(record_has_ci(&out2)); /* the interval pass sets it */
    /* a failure in a later round fails the config */
    record bad = b;
    bad.status = RECORD_ST_WRONG;
    intervals_combine(&out2, &bad, &out);
    assert_int_equal(out.status, RECORD_ST_WRONG);
    assert_int_equal(out.time.round.n, 0);
    /* another build starts over */
    record other = b;
    snprintf(other.build, sizeof other.build, "fedcba9876543210");
    intervals_combine(&out2, &other, &out);
    assert_int_equal(out.time.round.n, 1);
    /* more than RECORD_MAX_ROUNDS: the oldest goes */
    record acc = out2;
    for (int i = 0; i < RECORD_MAX_ROUNDS; i++) {
        record r = ok_rec("a", 20.0 + i);
        intervals_combine(&acc, &r, &out);
        acc = out;
    }
    assert_int_equal(acc.time.round.n, RECORD_MAX_ROUNDS);
    assert_true(acc.time.round.us[0] == 20.0);
}

/* 20 configs of mode `mode`, 3 rounds each spread by +-spread around their truth. */
static void put_group(store *s, const char *mode, double spread)
{
    for (int c = 0; c < 20; c++) {
        char cfg[32];
        snprintf(cfg, sizeof cfg, "d64.m%d.n64.w1.s2.z1", 16 * (c + 1));
        record acc, r = ok_rec(cfg, 100 + c);
        snprintf(r.mode, sizeof r.mode, "%s", mode);
        intervals_combine(NULL, &r, &acc);
        for (int k = 1; k < 3; k++) {
            record nr = ok_rec(cfg, (100 + c) * (k == 1 ? 1 + spread : 1 - spread)), out;
            snprintf(nr.mode, sizeof nr.mode, "%s", mode);
            intervals_combine(&acc, &nr, &out);
            acc = out;
        }
        assert_int_equal(store_put(s, &acc), STORE_OK);
    }
}

static void test_update_pass(void **state)
{
    const char *dir = *state;
    store *s;
    char err[512];
    assert_int_equal(store_open(dir, 0, &s, err, sizeof err), STORE_OK);
    put_group(s, "hot", 0.01); /* 20 configs, 3 rounds each, +-1 % around their truth */
    /* an old record of the group (no rounds) is left alone */
    record old = ok_rec("d64.m512.n64.w1.s2.z1", 50);
    old.timestamp = 1;
    assert_int_equal(store_put(s, &old), STORE_OK);
    long n = 0;
    const char *const hot[] = {"hot"};
    assert_int_equal(
        intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", hot, 1, 1e8, 0.003, &n), STORE_OK);
    assert_int_equal(n, 20);
    record r;
    assert_int_equal(
        store_get(s, "NVIDIA H100|b4.h8.s512.d64.nc|0123456789abcdef|d64.m96.n64.w1.s2.z1|hot", &r),
        STORE_OK);
    assert_true(record_has_ci(&r));
    const double half = (r.time.ci_hi_us - r.time.ci_lo_us) / 2 / r.time.median_us;
    /* rounds spread 1 %: the mean of 3 about 0.6 % (sd), so +-0.8..1.6 % */
    assert_true(half > 0.005 && half < 0.02);
    assert_int_equal(
        store_get(s, "NVIDIA H100|b4.h8.s512.d64.nc|0123456789abcdef|d64.m512.n64.w1.s2.z1|hot",
                  &r),
        STORE_OK);
    assert_false(record_has_ci(&r));
    /* the same data: the same interval (fixed seed), nothing rewritten */
    assert_int_equal(
        intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", hot, 1, 1e8, 0.003, &n), STORE_OK);
    assert_int_equal(n, 0);
    store_close(s);
}

static double half_width(store *s, const char *mode)
{
    char key[RECORD_KEY_LEN];
    snprintf(key, sizeof key,
             "NVIDIA H100|b4.h8.s512.d64.nc|0123456789abcdef|d64.m96.n64.w1.s2.z1|%s", mode);
    record r;
    assert_int_equal(store_get(s, key, &r), STORE_OK);
    assert_true(record_has_ci(&r));
    return (r.time.ci_hi_us - r.time.ci_lo_us) / 2 / r.time.median_us;
}

/* Several modes of a problem in one update: each mode's intervals from its own pool, the
 * same as one update per mode (which then has nothing to rewrite). */
static void test_update_modes(void **state)
{
    const char *dir = *state;
    store *s;
    char err[512];
    assert_int_equal(store_open(dir, 0, &s, err, sizeof err), STORE_OK);
    put_group(s, "hot", 0.01);
    put_group(s, "cold", 0.05);
    const char *const both[] = {"hot", "cold"}, *const hot[] = {"hot"}, *const cold[] = {"cold"};
    long n = 0;
    assert_int_equal(
        intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", both, 2, 1e8, 0.003, &n), STORE_OK);
    assert_int_equal(n, 40);
    const double h = half_width(s, "hot"), c = half_width(s, "cold");
    assert_true(h > 0.005 && h < 0.02);
    assert_true(c > 3 * h); /* cold's own pool, five times the spread */
    assert_int_equal(
        intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", hot, 1, 1e8, 0.003, &n), STORE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(
        intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", cold, 1, 1e8, 0.003, &n), STORE_OK);
    assert_int_equal(n, 0);
    /* more modes than the table has: refused, nothing written */
    const char *const many[MODE_COUNT + 1] = {"hot"};
    assert_int_equal(intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", many, MODE_COUNT + 1,
                                      1e8, 0.003, &n),
                     STORE_EINVAL);
    assert_int_equal(n, 0);
    store_close(s);
}

typedef struct counts_pool {
    double pool[30 * RECORD_MAX_ROUNDS];
    int np, groups;
} counts_pool;

static int counts_pool_visit(const record *r, void *ctx)
{
    counts_pool *cp = ctx;
    if (r->time.round.n >= 2) {
        rounds_pool_add(r->time.round.us, r->time.round.n, cp->pool, &cp->np);
        cp->groups++;
    }
    return 0;
}

/* Records of one group with 1, 2, 4 and 3 rounds: each gets the interval of its own count of
 * rounds from the group's pool (the update computes it once per count, not once per record;
 * here straight from rounds.h, record by record). */
static void test_update_counts(void **state)
{
    const char *dir = *state;
    store *s;
    char err[512];
    assert_int_equal(store_open(dir, 0, &s, err, sizeof err), STORE_OK);
    put_group(s, "hot", 0.01);
    static const int rounds[] = {1, 2, 4, 3, 2, 1};
    const int nc = (int)(sizeof rounds / sizeof rounds[0]);
    record mixed[sizeof rounds / sizeof rounds[0]];
    for (int c = 0; c < nc; c++) {
        char cfg[32];
        snprintf(cfg, sizeof cfg, "d64.m%d.n128.w1.s2.z1", 16 * (c + 1));
        record acc, r = ok_rec(cfg, 40 + 7 * c);
        intervals_combine(NULL, &r, &acc);
        for (int k = 1; k < rounds[c]; k++) {
            record nr = ok_rec(cfg, (40 + 7 * c) * (1 + 0.02 * (k % 2 ? 1 : -1) / k)), out;
            intervals_combine(&acc, &nr, &out);
            acc = out;
        }
        assert_int_equal(acc.time.round.n, rounds[c]);
        assert_int_equal(store_put(s, &acc), STORE_OK);
        mixed[c] = acc;
    }
    /* the pool: every record of the group with two rounds or more, in the store's order, as
     * the update makes it */
    counts_pool cp = {.np = 0, .groups = 0};
    assert_int_equal(store_scan(s, "NVIDIA H100|b4.h8.s512.d64.nc|", counts_pool_visit, &cp),
                     STORE_OK);
    assert_int_equal(cp.groups, 20 + 4);
    long n = 0;
    const char *const hot[] = {"hot"};
    assert_int_equal(
        intervals_update(s, "NVIDIA H100", "b4.h8.s512.d64.nc", hot, 1, 1e8, 0.003, &n), STORE_OK);
    assert_int_equal(n, 20 + nc);
    double half[RECORD_MAX_ROUNDS + 1] = {0};
    for (int c = 0; c < nc; c++) {
        char key[RECORD_KEY_LEN];
        snprintf(key, sizeof key, "NVIDIA H100|b4.h8.s512.d64.nc|0123456789abcdef|%s|hot",
                 mixed[c].config);
        record r;
        assert_int_equal(store_get(s, key, &r), STORE_OK);
        double lo, hi, lo_us, hi_us;
        assert_int_equal(rounds_interval(rounds[c], cp.pool, cp.np, cp.groups, 0.003, &lo, &hi), 0);
        rounds_interval_us(r.time.median_us, lo, hi, &lo_us, &hi_us);
        assert_true(r.time.ci_lo_us == lo_us && r.time.ci_hi_us == hi_us);
        half[rounds[c]] = (hi - lo) / 2;
    }
    /* and the counts' intervals differ: fewer rounds, wider */
    assert_true(half[1] > half[2] && half[2] > half[3] && half[3] > half[4]);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_old_record_reads_without_interval),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_tie_rule),
        cmocka_unit_test(test_merge_rule),
        cmocka_unit_test(test_combine),
        cmocka_unit_test_setup_teardown(test_update_pass, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_update_modes, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_update_counts, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
