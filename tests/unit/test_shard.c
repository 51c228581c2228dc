/* test_shard.c - the plan partition: parse, Slurm detection, and that the
 * parts are disjoint, complete, deterministic and balanced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "grid/plan.h"
#include "grid/shard.h"
#include "grid/space.h"
#include "kernels/mma/mma.h"
#include "tests/unit/testspace.h"

/* A space with two problems of very different cost and a 3x3x2x2x2 grid
 * (on the heap: it is large); the caller frees it. */
static space *new_space(void)
{
    space *s = malloc(sizeof *s);
    assert_non_null(s);
    static const space_problem problems[] = {{4, 8, 512, 64, 0, 8, 0},
                                             {16, 16, 2048, 64, 0, 16, 0}};
    ts_space(s, 232448, problems, 2);
    static const int bm[] = {32, 64, 128}, bn[] = {32, 64, 128}, w[] = {2, 4}, st[] = {1, 2},
                     z[] = {0, 1};
    ts_axis(s, MMA_BLOCK_M, bm, 3);
    ts_axis(s, MMA_BLOCK_N, bn, 3);
    ts_axis(s, MMA_NUM_WARPS, w, 2);
    ts_axis(s, MMA_STAGES, st, 2);
    ts_axis(s, MMA_SWIZZLE, z, 2);
    s->measure.n_modes = 2;
    return s;
}

/* new_space() and its plan in *p. */
static space *planned_space(plan *p)
{
    space *s = new_space();
    assert_int_equal(plan_build(s, NULL, NULL, p), 0);
    return s;
}

static void test_parse(void **state)
{
    (void)state;
    shard sh;
    char err[256];
    assert_int_equal(shard_parse("0/4", &sh, err, sizeof err), 0);
    assert_int_equal(sh.index, 0);
    assert_int_equal(sh.count, 4);
    assert_int_equal(shard_parse("3/4", &sh, err, sizeof err), 0);
    assert_int_equal(sh.index, 3);
    const char *bad[] = {"4/4", "-1/4", "1/0",  "1",    "/4",   "1/",
                         "a/4", "1/4x", " 1/4", "1/+4", "1//4", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(shard_parse(bad[i], &sh, err, sizeof err), -1);
        assert_non_null(strstr(err, "I/N"));
    }
}

static void clear_env(void)
{
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    unsetenv("SLURM_ARRAY_TASK_MIN");
    unsetenv("SLURM_ARRAY_TASK_MAX");
    unsetenv("SLURM_PROCID");
    unsetenv("SLURM_NTASKS");
}

/* shard_from_env gives the part index of count (when it splits: want 1). */
static void expect_env_shard(int want, int index, int count)
{
    shard sh;
    char err[256];
    assert_int_equal(shard_from_env(&sh, err, sizeof err), want);
    if (want == 1) {
        assert_int_equal(sh.index, index);
        assert_int_equal(sh.count, count);
    }
}

static void test_env(void **state)
{
    (void)state;
    shard sh;
    char err[256];
    clear_env();
    assert_int_equal(shard_from_env(&sh, err, sizeof err), 0);
    assert_int_equal(sh.count, 1);
    /* array with MIN/MAX: ids 5..8 are parts 0..3 */
    setenv("SLURM_ARRAY_TASK_ID", "7", 1);
    setenv("SLURM_ARRAY_TASK_MIN", "5", 1);
    setenv("SLURM_ARRAY_TASK_MAX", "8", 1);
    expect_env_shard(1, 2, 4);
    /* array with COUNT only */
    clear_env();
    setenv("SLURM_ARRAY_TASK_ID", "1", 1);
    setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
    expect_env_shard(1, 1, 3);
    /* array id without a size is an error, not a silent whole plan */
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    assert_int_equal(shard_from_env(&sh, err, sizeof err), -1);
    assert_non_null(strstr(err, "--shard"));
    /* srun tasks */
    clear_env();
    setenv("SLURM_PROCID", "2", 1);
    setenv("SLURM_NTASKS", "5", 1);
    expect_env_shard(1, 2, 5);
    /* a single task is no split */
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "1", 1);
    expect_env_shard(0, 0, 0);
    clear_env();
}

static void test_partition(void **state)
{
    (void)state;
    plan p;
    space *s = planned_space(&p);
    assert_true(p.n > 50);
    for (int n = 1; n <= 7; n++) {
        int *a = malloc(sizeof *a * p.n), *b = malloc(sizeof *b * p.n);
        double *load = calloc((size_t)n, sizeof *load);
        assert_int_equal(shard_assign(s, &p, n, a), 0);
        assert_int_equal(shard_assign(s, &p, n, b), 0);
        int *rejected = calloc((size_t)n, sizeof *rejected);
        double max_cost = 0;
        for (size_t i = 0; i < p.n; i++) {
            assert_int_equal(a[i], b[i]);       /* deterministic */
            assert_true(a[i] >= 0 && a[i] < n); /* every point in exactly one part */
            const double c = shard_point_cost(s, &p.points[i]);
            load[a[i]] += c;
            if (c > max_cost)
                max_cost = c;
            rejected[a[i]] += p.points[i].reason != PLAN_OK;
        }
        /* rejected points (cost 0) are spread evenly by count */
        assert_true(p.n_accepted < p.n);
        for (int k = 1; k < n; k++)
            assert_true(abs(rejected[k] - rejected[0]) <= 1);
        free(rejected);
        /* LPT: no part exceeds another by more than the costliest point */
        double lo = load[0], hi = load[0];
        for (int k = 1; k < n; k++) {
            lo = load[k] < lo ? load[k] : lo;
            hi = load[k] > hi ? load[k] : hi;
        }
        assert_true(hi - lo <= max_cost + 1e-9);
        /* the filtered plans are disjoint and their union is the plan */
        size_t total = 0, accepted = 0;
        for (int k = 0; k < n; k++) {
            plan q;
            assert_int_equal(plan_build(s, NULL, NULL, &q), 0);
            assert_int_equal(shard_filter(s, &q, (shard){k, n}), 0);
            total += q.n;
            accepted += q.n_accepted;
            for (size_t i = 0; i < q.n; i++) {
                size_t j = 0; /* find the point in p and check its owner */
                while (j < p.n && !(p.points[j].problem == q.points[i].problem &&
                                    fa_config_cmp(&p.points[j].cfg, &q.points[i].cfg) == 0))
                    j++;
                assert_true(j < p.n);
                assert_int_equal(a[j], k);
            }
            plan_free(&q);
        }
        assert_int_equal(total, p.n);
        assert_int_equal(accepted, p.n_accepted);
        free(a);
        free(b);
        free(load);
    }
    plan_free(&p);
    free(s);
}

/* shard_assign as it was before the heap: a scan of every part per point
 * (the least loaded, ties to the lower index). The heap must agree. */
static void scan_assign(const space *s, const plan *p, int count, int *owner)
{
    size_t *order = malloc(sizeof *order * p->n);
    double *cost = malloc(sizeof *cost * p->n), *load = calloc((size_t)count, sizeof *load);
    assert_true(order && cost && load);
    for (size_t i = 0; i < p->n; i++) {
        order[i] = i;
        cost[i] = shard_point_cost(s, &p->points[i]);
    }
    for (size_t i = 1; i < p->n; i++) /* insertion sort: cost down, then index */
        for (size_t j = i; j > 0 && cost[order[j - 1]] < cost[order[j]]; j--) {
            const size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int next = 0;
    for (size_t i = 0; i < p->n; i++) {
        const size_t x = order[i];
        int best = 0;
        if (cost[x] > 0) {
            for (int k = 1; k < count; k++)
                if (load[k] < load[best])
                    best = k;
        } else {
            best = next;
            next = (next + 1) % count;
        }
        load[best] += cost[x];
        owner[x] = best;
    }
    free(order);
    free(cost);
    free(load);
}

static void test_heap_matches_scan(void **state)
{
    (void)state;
    plan p;
    space *s = planned_space(&p);
    const int counts[] = {1, 2, 3, 5, 7, 16, 50, 143, 1000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int *a = malloc(sizeof *a * p.n), *b = malloc(sizeof *b * p.n);
        assert_int_equal(shard_assign(s, &p, counts[c], a), 0);
        scan_assign(s, &p, counts[c], b);
        for (size_t i = 0; i < p.n; i++)
            assert_int_equal(a[i], b[i]);
        free(a);
        free(b);
    }
    plan_free(&p);
    free(s);
}

/* 200000 accepted points over 100000 parts (the --shard limit): the scan
 * took over 10 s here (2e10 comparisons), the heap well under one. */
static void test_many_parts_fast(void **state)
{
    (void)state;
    space *s = new_space();
    plan p = {0};
    p.n = p.n_accepted = 200000;
    p.points = calloc(p.n, sizeof *p.points);
    assert_non_null(p.points);
    for (size_t i = 0; i < p.n; i++) {
        p.points[i].problem = (int)(i % 2);
        p.points[i].reason = PLAN_OK;
    }
    int *owner = malloc(sizeof *owner * p.n);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(shard_assign(s, &p, SHARD_MAX_COUNT, owner), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    assert_true(secs < 5.0);
    /* Every part got two points: one of each problem's cost. */
    int *n = calloc(SHARD_MAX_COUNT, sizeof *n);
    for (size_t i = 0; i < p.n; i++)
        n[owner[i]]++;
    for (int k = 0; k < SHARD_MAX_COUNT; k++)
        assert_int_equal(n[k], 2);
    free(n);
    free(owner);
    free(p.points);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),           cmocka_unit_test(test_env),
        cmocka_unit_test(test_partition),       cmocka_unit_test(test_heap_matches_scan),
        cmocka_unit_test(test_many_parts_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
