/* test_rounds.c - intervals from rounds (store/rounds.h): the estimate, the
 * pooled residuals, the t widening, the bootstrap with its fixed seed, the
 * floor, and a simulated calibration: two independent "runs" of configs
 * under slow drift must land within each other's combined interval about
 * 95 % of the time (never far below, which is what overconfidence looks like).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "store/record.h"
#include "store/rounds.h"

static void test_estimate(void **st)
{
    (void)st;
    const double m[3] = {10, 11, 12};
    assert_true(fabs(rounds_estimate(m, 3) - 11) < 1e-12);
    assert_true(isnan(rounds_estimate(m, 0)));
    const double bad[2] = {10, -1};
    assert_true(isnan(rounds_estimate(bad, 2)));
}

static void test_pool_residuals(void **st)
{
    (void)st;
    const double m[4] = {9, 11, 10, 10};
    double pool[8];
    int n = 0;
    rounds_pool_add(m, 4, pool, &n);
    assert_int_equal(n, 4);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += pool[i];
    assert_true(fabs(sum) < 1e-12); /* residuals of one config sum to 0 */
    assert_true(fabs(pool[0] - (-0.1 * sqrt(4.0 / 3))) < 1e-12);
    rounds_pool_add(m, 1, pool, &n); /* one round: nothing to learn */
    assert_int_equal(n, 4);
}

static void test_t_table(void **st)
{
    (void)st;
    assert_true(fabs(rounds_t975(1) - 12.706) < 1e-9);
    assert_true(fabs(rounds_t975(11) - 2.228) < 1e-9); /* between rows: the larger */
    assert_true(rounds_t975(5000) == 1.96);
    assert_true(isnan(rounds_t975(0)));
}

static void test_interval_is_deterministic_and_shrinks(void **st)
{
    (void)st;
    double pool[200];
    int n = 0;
    for (int c = 0; c < 50; c++) {
        const double m[4] = {100 + c % 3, 101 - c % 2, 99 + c % 5 * 0.5, 100};
        rounds_pool_add(m, 4, pool, &n);
    }
    double lo1, hi1, lo2, hi2, lo4, hi4;
    assert_int_equal(rounds_interval(1, pool, n, 50, 0, &lo1, &hi1), 0);
    assert_int_equal(rounds_interval(1, pool, n, 50, 0, &lo2, &hi2), 0);
    assert_true(lo1 == lo2 && hi1 == hi2); /* the fixed seed */
    assert_true(lo1 < 0 && hi1 > 0);
    assert_int_equal(rounds_interval(4, pool, n, 50, 0, &lo4, &hi4), 0);
    /* four rounds: about half the width of one */
    const double r = (hi4 - lo4) / (hi1 - lo1);
    assert_true(r > 0.4 && r < 0.6);
}

/* A small pool of a wild spread (two workers on one GPU did it) puts lo below -1: the interval
 * in us then starts at the least time a record holds, never at zero or below, so the store
 * takes it (record.c refuses a lower end under RECORD_MIN_US). */
static void test_interval_us_never_below_the_least_time(void **st)
{
    (void)st;
    const double m[3] = {2, 40, 2};
    double pool[3], lo, hi, lo_us, hi_us;
    int n = 0;
    rounds_pool_add(m, 3, pool, &n);
    assert_int_equal(rounds_interval(3, pool, n, 1, 0.007, &lo, &hi), 0);
    assert_true(lo < -1); /* the case itself, or this test proves nothing */
    const double est = rounds_estimate(m, 3);
    rounds_interval_us(est, lo, hi, &lo_us, &hi_us);
    assert_true(lo_us == RECORD_MIN_US);
    assert_true(hi_us == est * (1 + hi) && hi_us > est);
    /* an ordinary interval is median * (1 + lo) .. median * (1 + hi), untouched */
    rounds_interval_us(100, -0.01, 0.02, &lo_us, &hi_us);
    assert_true(lo_us == 100 * (1 - 0.01) && hi_us == 100 * (1 + 0.02));
    /* no interval stays no interval */
    rounds_interval_us(100, NAN, NAN, &lo_us, &hi_us);
    assert_true(isnan(lo_us) && isnan(hi_us));
}

static void test_floor_and_small_pool(void **st)
{
    (void)st;
    const double m[3] = {100, 100, 100};
    double pool[3];
    int n = 0;
    rounds_pool_add(m, 3, pool, &n);
    double lo, hi;
    /* no spread at all: the floor alone */
    assert_int_equal(rounds_interval(3, pool, n, 1, 0.004, &lo, &hi), 0);
    assert_true(fabs(lo + 0.004) < 1e-12 && fabs(hi - 0.004) < 1e-12);
    /* one config, three rounds: 2 degrees of freedom, widened by t(2)/1.96 */
    const double m2[3] = {99, 100, 101};
    double pool2[3], lo2, hi2, pool3[300], lo3, hi3;
    int n2 = 0, n3 = 0;
    rounds_pool_add(m2, 3, pool2, &n2);
    for (int c = 0; c < 100; c++)
        rounds_pool_add(m2, 3, pool3, &n3);
    assert_int_equal(rounds_interval(3, pool2, n2, 1, 0, &lo2, &hi2), 0);
    assert_int_equal(rounds_interval(3, pool3, n3, 100, 0, &lo3, &hi3), 0);
    assert_true(hi2 > 1.8 * hi3); /* 4.303 / 1.96 = 2.2 */
    /* nothing to say */
    assert_int_equal(rounds_interval(3, pool2, 1, 1, 0, &lo, &hi), -1);
    assert_true(isnan(lo) && isnan(hi));
}

/* Box-Muller from a small LCG: the simulation is repeatable. */
static double sim_normal(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    const double u1 = ((*s >> 11) + 1.0) / 9007199254740993.0;
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    const double u2 = (*s >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* One run: C configs, R rounds, each round of each config off its truth by
 * a drift of relative sigma; out[c] the estimate, lo/hi its interval. */
static void sim_run(uint64_t *s, int C, int R, double sigma, double *est, double *lo, double *hi)
{
    double *pool = malloc(sizeof *pool * C * R), m[8];
    int n = 0;
    for (int c = 0; c < C; c++) {
        for (int r = 0; r < R; r++)
            m[r] = (100 + c) * (1 + sigma * sim_normal(s));
        est[c] = rounds_estimate(m, R);
        rounds_pool_add(m, R, pool, &n);
    }
    for (int c = 0; c < C; c++) {
        double l, h;
        assert_int_equal(rounds_interval(R, pool, n, C, 0, &l, &h), 0);
        lo[c] = est[c] * (1 + l);
        hi[c] = est[c] * (1 + h);
    }
    free(pool);
}

static void test_simulated_calibration(void **st)
{
    (void)st;
    enum { C = 400, R = 3 };
    static double ea[C], la[C], ha[C], eb[C], lb[C], hb[C];
    uint64_t s = 12345;
    sim_run(&s, C, R, 0.015, ea, la, ha);
    sim_run(&s, C, R, 0.015, eb, lb, hb);
    int within = 0;
    for (int c = 0; c < C; c++) {
        const double hA = ea[c] > eb[c] ? ea[c] - la[c] : ha[c] - ea[c];
        const double hB = eb[c] > ea[c] ? eb[c] - lb[c] : hb[c] - eb[c];
        within += fabs(ea[c] - eb[c]) <= sqrt(hA * hA + hB * hB);
    }
    const double share = (double)within / C;
    print_message("simulated share within the combined interval: %.3f\n", share);
    assert_true(share > 0.91 && share < 0.99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate),
        cmocka_unit_test(test_pool_residuals),
        cmocka_unit_test(test_t_table),
        cmocka_unit_test(test_interval_is_deterministic_and_shrinks),
        cmocka_unit_test(test_floor_and_small_pool),
        cmocka_unit_test(test_interval_us_never_below_the_least_time),
        cmocka_unit_test(test_simulated_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
