/* test_measure.c - the sweep engine's arithmetic (sweep/stats.h): timing
 * summary, the noise formula and stop rule, block sizing, output errors
 * against the reference and the correctness gate, and the clock64 view.
 * No GPU needed: the inputs are made up here with known answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/fa_launch.h"
#include "kernels/ref_cpu.h"
#include "grid/space.h"
#include "sweep/stats.h"
#include "sweep/task.h"

#define EPS 1e-12

/* cmocka's assert_float_equal compares in float; these need double. */
#define assert_near(a, b, eps) assert_near_((a), (b), (eps), __FILE__, __LINE__)
static void assert_near_(double a, double b, double eps, const char *file, int line)
{
    if (fabs(a - b) <= eps)
        return;
    print_error("%.17g is not %.17g within %g\n", a, b, eps);
    _fail(file, line);
}

static space_measure rule(int min_s, int max_s, double noise, double max_seconds)
{
    return (space_measure){
        .min_samples = min_s, .max_samples = max_s, .noise = noise, .max_seconds = max_seconds};
}

/* ---- timing summary ------------------------------------------------------------------------- */

static void test_timing_odd(void **state)
{
    (void)state;
    double x[] = {5, 1, 4, 2, 3}; /* unsorted on purpose */
    record_timing t;
    stats_timing_of(x, 5, &t);
    assert_int_equal(t.samples, 5);
    assert_near(t.median_us, 3, EPS);
    assert_near(t.min_us, 1, EPS);
    assert_near(t.mean_us, 3, EPS);
    /* Sample variance of 1..5 is 2.5. */
    assert_near(t.stdev_us, sqrt(2.5), EPS);
    assert_near(t.cv, sqrt(2.5) / 3, EPS);
    assert_near(t.noise, 1.2533141373155001 * sqrt(2.5) / (sqrt(5.0) * 3), 1e-12);
    /* Sorted in place, as documented. */
    for (int i = 0; i < 5; i++)
        assert_near(x[i], i + 1, EPS);
}

static void test_timing_even(void **state)
{
    (void)state;
    double x[] = {10, 40, 20, 30};
    record_timing t;
    stats_timing_of(x, 4, &t);
    assert_near(t.median_us, 25, EPS); /* mean of the two middle samples */
    assert_near(t.mean_us, 25, EPS);
    assert_near(t.min_us, 10, EPS);
    /* deviations -15 -5 5 15: (225+25+25+225)/3 */
    assert_near(t.stdev_us, sqrt(500.0 / 3), 1e-12);
}

static void test_timing_outlier(void **state)
{
    (void)state;
    /* The median ignores one huge outlier; the mean does not. */
    double x[] = {8, 8, 8, 8, 1000};
    record_timing t;
    stats_timing_of(x, 5, &t);
    assert_near(t.median_us, 8, EPS);
    assert_true(t.mean_us > 200);
    assert_true(t.cv > 1);
}

static void test_timing_constant(void **state)
{
    (void)state;
    /* Identical samples: no spread, noise exactly 0 (so a stop rule of
     * noise <= 0.01 is met), and no precision loss from a large mean. */
    double x[] = {1e6 + 0.5, 1e6 + 0.5, 1e6 + 0.5};
    record_timing t;
    stats_timing_of(x, 3, &t);
    assert_near(t.stdev_us, 0, 0);
    assert_near(t.noise, 0, 0);
    assert_near(t.cv, 0, 0);
}

static void test_timing_small_n(void **state)
{
    (void)state;
    double one[] = {7};
    record_timing t;
    stats_timing_of(one, 1, &t);
    assert_int_equal(t.samples, 1);
    assert_near(t.median_us, 7, EPS);
    assert_near(t.min_us, 7, EPS);
    assert_near(t.stdev_us, 0, 0);
    assert_true(isnan(t.noise)); /* no estimate from one sample */
    stats_timing_of(NULL, 0, &t);
    assert_int_equal(t.samples, 0);
    assert_near(t.median_us, 0, 0);
    assert_true(isnan(t.noise));
}

static void test_noise_formula(void **state)
{
    (void)state;
    /* stdev 1 % of the median over 100 samples: 1.2533 * 0.01 / 10. */
    assert_near(stats_noise(100, 1, 100), 1.2533141373155001e-3, 1e-15);
    /* Four times the samples halve the noise. */
    assert_near(stats_noise(100, 1, 400), stats_noise(100, 1, 100) / 2, 1e-15);
    assert_true(isnan(stats_noise(100, 1, 1)));
    assert_true(isnan(stats_noise(0, 1, 10)));
    assert_true(isnan(stats_noise(-1, 1, 10)));
}

/* ---- stop rule and block size --------------------------------------------------------------- */

static void test_stop_rule(void **state)
{
    (void)state;
    const space_measure m = rule(10, 100, 0.01, 0.5);
    /* Quiet but too few samples: keep going. */
    assert_int_equal(stats_stop_rule(&m, 9, 0.001, 0.1), STATS_CONTINUE);
    /* Enough samples, quiet enough (the bound itself counts). */
    assert_int_equal(stats_stop_rule(&m, 10, 0.01, 0.1), STATS_CONVERGED);
    /* Enough samples, too noisy. */
    assert_int_equal(stats_stop_rule(&m, 50, 0.02, 0.1), STATS_CONTINUE);
    /* Cap on samples. */
    assert_int_equal(stats_stop_rule(&m, 100, 0.02, 0.1), STATS_MAX_SAMPLES);
    /* Converging at the cap reports convergence (checked first). */
    assert_int_equal(stats_stop_rule(&m, 100, 0.005, 0.1), STATS_CONVERGED);
    /* Budget spent, even below min_samples. */
    assert_int_equal(stats_stop_rule(&m, 3, 0.5, 0.5), STATS_BUDGET);
    assert_int_equal(stats_stop_rule(&m, 3, 0.5, 0.49), STATS_CONTINUE);
    /* NaN noise (fewer than two samples) never converges. */
    const space_measure one = rule(1, 100, 0.01, 10);
    assert_int_equal(stats_stop_rule(&one, 1, NAN, 0), STATS_CONTINUE);
    assert_string_equal(stats_stop_name(STATS_CONVERGED), "converged");
    assert_string_equal(stats_stop_name(STATS_BUDGET), "budget");
    assert_string_equal(stats_stop_name(STATS_MAX_SAMPLES), "max_samples");
    assert_string_equal(stats_stop_name(STATS_CONTINUE), "continue");
}

/* Drives the rule like the engine does, on a made-up noisy kernel. */
static void test_stop_rule_simulated(void **state)
{
    (void)state;
    const space_measure m = rule(10, 400, 0.01, 1e9);
    double x[400];
    unsigned s = 12345;
    int n = 0;
    stats_stop why = STATS_CONTINUE;
    record_timing t;
    while (why == STATS_CONTINUE) {
        s = s * 1103515245u + 12345u;
        /* 10 µs +- 5 % uniform jitter */
        x[n] = 10.0 * (0.95 + 0.1 * ((s >> 8) & 0xffff) / 65535.0);
        n++;
        double copy[400];
        memcpy(copy, x, sizeof(double) * (size_t)n);
        stats_timing_of(copy, n, &t);
        why = stats_stop_rule(&m, n, t.noise, 0);
    }
    /* stdev of U(-5%,+5%) is 2.9 %: 1.2533 * 0.029 / sqrt(n) <= 0.01 needs
     * n >= ~13, so it converges soon after min_samples, well before 400. */
    assert_int_equal(why, STATS_CONVERGED);
    assert_true(n >= 10 && n < 40);
    assert_true(t.noise <= 0.01);
    assert_near(t.median_us, 10, 0.3);
}

static void test_block_size(void **state)
{
    (void)state;
    /* Small kernels: a full block. */
    assert_int_equal(stats_block_size(10, 0.5, 400, 16), 16);
    /* Never more than what is left. */
    assert_int_equal(stats_block_size(10, 0.5, 5, 16), 5);
    /* 0.1 s budget / 4 = 25 ms; 10 ms launches: 2 fit. */
    assert_int_equal(stats_block_size(10000, 0.1, 400, 16), 2);
    /* Launches longer than the budget: still one. */
    assert_int_equal(stats_block_size(1e7, 0.1, 400, 16), 1);
    /* No estimate: a full block. */
    assert_int_equal(stats_block_size(0, 0.1, 400, 16), 16);
    assert_int_equal(stats_block_size(NAN, 0.1, 400, 16), 16);
    /* Nothing left still gives 1 (the caller never asks then). */
    assert_int_equal(stats_block_size(10, 0.1, 0, 16), 1);
}

/* ---- output errors and the gate ------------------------------------------------------------- */

static const space_tolerance tol = {5e-3, 3e-2};

/* The spin ahead of a block: the whole block's queuing when nothing says the GPU is slower
 * than the host (the rule before), a hot block's worth when it is, never under the minimum. */
static void test_spin(void **state)
{
    (void)state;
    /* no lower bound known: 1.5 x the block's queuing, as before */
    assert_true(fabs(stats_spin_us(3, 272, 0) - 1.5 * 3 * 272) < 1e-9);
    /* a 12 us kernel queued at 3 us a launch: the host gets ahead, 16 launches covered */
    assert_true(fabs(stats_spin_us(3, 272, 12) - 1.5 * 3 * STATS_SPIN_COVER_LAUNCHES) < 1e-9);
    /* a 3.5 us kernel queued at 3 us (4.5 with the margin): 1 us a launch behind */
    assert_true(fabs(stats_spin_us(3, 272, 3.5) - 272 * (4.5 - 3.5)) < 1e-9);
    /* small blocks and fast hosts: the minimum */
    assert_true(stats_spin_us(1, 4, 50) == STATS_SPIN_MIN_US);
    assert_true(stats_spin_us(0.5, 16, 0) == STATS_SPIN_MIN_US);
    /* never shorter than the old rule allowed where the GPU outruns the host */
    for (double g = 0; g < 10; g += 0.25)
        assert_true(stats_spin_us(8, 100, g) >= 100 * (1.5 * 8 - g));
}

static void test_errors_exact(void **state)
{
    (void)state;
    float ref[4] = {0.5f, -0.25f, 1.0f, 0.125f};
    uint16_t out[4];
    for (int i = 0; i < 4; i++) /* all exactly representable in fp16 */
        out[i] = ref_float_to_half(ref[i]);
    stats_errors e;
    stats_output_errors(out, FA_DTYPE_FP16, ref, 4, &e);
    assert_near(e.rel_l2, 0, 0);
    assert_near(e.max_abs, 0, 0);
    assert_int_equal(e.nonfinite, 0);
    assert_int_equal(e.first_bad, -1);
    char why[256];
    assert_int_equal(stats_gate(&e, &tol, why, sizeof why), 0);
    assert_string_equal(why, "");
}

static void test_errors_known(void **state)
{
    (void)state;
    /* out = ref + (0.5, 0, 0, 0): ||d|| = 0.5, ||ref|| = sqrt(1+1+1+1) = 2. */
    float ref[4] = {1, 1, -1, -1};
    uint16_t out[4] = {ref_float_to_half(1.5f), ref_float_to_half(1), ref_float_to_half(-1),
                       ref_float_to_half(-1)};
    stats_errors e;
    stats_output_errors(out, FA_DTYPE_FP16, ref, 4, &e);
    assert_near(e.rel_l2, 0.25, 1e-12);
    assert_near(e.max_abs, 0.5, 1e-12);
    char why[256];
    assert_int_equal(stats_gate(&e, &tol, why, sizeof why), 1);
    assert_non_null(strstr(why, "rel_l2 2.500e-01"));
    assert_non_null(strstr(why, "max_abs 5.000e-01"));
    /* A loose enough tolerance passes the same output. */
    const space_tolerance loose = {0.3, 0.6};
    assert_int_equal(stats_gate(&e, &loose, why, sizeof why), 0);
    /* Only one of the two over. */
    const space_tolerance l2_only = {0.3, 0.4};
    assert_int_equal(stats_gate(&e, &l2_only, why, sizeof why), 1);
    assert_non_null(strstr(why, "max_abs 5.000e-01 over the tolerance 4.000e-01"));
    assert_null(strstr(why, "rel_l2 2.500e-01 over"));
}

static void test_errors_nan_poison(void **state)
{
    (void)state;
    /* 0xFFFF (the poison the gate fills the output with) is a NaN: an
     * element the kernel never wrote must fail however small the rest is. */
    float ref[5] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
    uint16_t out[5];
    for (int i = 0; i < 5; i++)
        out[i] = ref_float_to_half(ref[i]);
    out[3] = 0xFFFF;
    stats_errors e;
    stats_output_errors(out, FA_DTYPE_FP16, ref, 5, &e);
    assert_int_equal(e.nonfinite, 1);
    assert_int_equal(e.first_bad, 3);
    assert_true(isnan(e.rel_l2));
    assert_true(isnan(e.max_abs));
    char why[256];
    assert_int_equal(stats_gate(&e, &tol, why, sizeof why), 1);
    assert_non_null(strstr(why, "1 of 5 outputs are NaN or inf (first at element 3)"));
}

static void test_errors_inf(void **state)
{
    (void)state;
    float ref[3] = {1, 2, 3};
    uint16_t out[3] = {0x7C00 /* +inf */, ref_float_to_half(2), 0xFC00 /* -inf */};
    stats_errors e;
    stats_output_errors(out, FA_DTYPE_FP16, ref, 3, &e);
    assert_int_equal(e.nonfinite, 2);
    assert_int_equal(e.first_bad, 0);
    char why[256];
    assert_int_equal(stats_gate(&e, &tol, why, sizeof why), 1);
    assert_non_null(strstr(why, "2 of 3 outputs"));
}

static void test_errors_fp16_rounding_passes(void **state)
{
    (void)state;
    /* An exact kernel still differs from fp32 by fp16 rounding of its
     * output (relative 2^-11 at most): that must pass the default gate. */
    enum { N = 1000 };
    float ref[N];
    uint16_t out[N];
    for (int i = 0; i < N; i++) {
        ref[i] = (float)sin(i * 0.37) * 0.8f;
        out[i] = ref_float_to_half(ref[i]);
    }
    stats_errors e;
    stats_output_errors(out, FA_DTYPE_FP16, ref, N, &e);
    assert_true(e.rel_l2 > 0 && e.rel_l2 < 5e-4);
    assert_true(e.max_abs > 0 && e.max_abs < 1e-3);
    char why[256];
    assert_int_equal(stats_gate(&e, &tol, why, sizeof why), 0);
}

static void test_gate_nan_error_fails(void **state)
{
    (void)state;
    /* A NaN error with no non-finite outputs (a NaN reference) fails too. */
    stats_errors e;
    memset(&e, 0, sizeof e);
    e.n = 1;
    e.first_bad = -1;
    e.rel_l2 = NAN;
    e.max_abs = 0;
    char why[256];
    assert_int_equal(stats_gate(&e, &tol, why, sizeof why), 1);
    assert_non_null(strstr(why, "rel_l2"));
}

static void test_half_to_double_exhaustive(void **state)
{
    (void)state;
    /* Every fp16 code against the reference conversion (kernels/ref_cpu.c). */
    long nan = 0;
    for (unsigned h = 0; h < 65536; h++) {
        const double fast = stats_half_to_double((uint16_t)h);
        const double slow = ref_half_to_float((uint16_t)h);
        if (isnan(slow)) {
            assert_true(isnan(fast));
            nan++;
            continue;
        }
        if (fast != slow || signbit(fast) != signbit(slow)) {
            print_error("code 0x%04x: %.17g, expected %.17g\n", h, fast, slow);
            fail();
        }
    }
    assert_int_equal(nan, 2 * 1023); /* exponent 31, non-zero mantissa, both signs */
    assert_near(stats_half_to_double(0x3C00), 1.0, 0);
    assert_near(stats_half_to_double(0x0001), 5.9604644775390625e-08, 0); /* 2^-24 */
    assert_near(stats_half_to_double(0x7BFF), 65504.0, 0);
}

/* ---- clock64 -------------------------------------------------------------------------------- */

/* ---- the checks: the physical floor, shared memory, check names ---------------------------- */

/* The lent H100 SXM as CUDA reports it: 132 SMs at 1980 MHz, HBM3 at
 * 2619 MHz on 5120 bits, 50 MB of L2. */
static void h100_peak(stats_peak *pk)
{
    stats_peak_of(90, 132, 1980000, 2619000, 5120, 50L << 20, pk);
}

static void test_floor_peaks(void **state)
{
    (void)state;
    stats_peak pk;
    h100_peak(&pk);
    assert_near(pk.flops_per_s, 4096.0 * 132 * 1.98e9, 1); /* 1070 TFLOP/s */
    assert_near(pk.dram_bytes_per_s, 2 * 2619e6 * 640, 1); /* 3.35 TB/s */
    assert_true(stats_tensor_flops_per_clk(89) >= 1024);   /* L4: 121 TF / 58 / 2.04 GHz */
    assert_true(stats_tensor_flops_per_clk(80) >= 2048);   /* A100 */
    assert_true(stats_tensor_flops_per_clk(100) >= 8192);  /* B200 */
    assert_near(stats_tensor_flops_per_clk(61), 0, 0);     /* no tensor cores: no floor */
    stats_peak none;
    stats_peak_of(61, 28, 1500000, 0, 0, 0, &none);
    assert_near(stats_floor_us(&none, 1e12, 1e9, 1), 0, 0);
}

static void test_floor_check(void **state)
{
    (void)state;
    stats_peak pk;
    h100_peak(&pk);
    /* 4,8,512,64: 2.15 GFLOP, q k v 6.3 MB */
    const space_problem p = {4, 8, 512, 64, 0, 8, 0};
    const double flops = space_problem_flops(&p), in = space_problem_bytes(&p) * 0.75;
    const double floor = stats_floor_us(&pk, flops, in, 0);
    assert_near(floor, flops / pk.flops_per_s * 1e6, 1e-9); /* compute-bound, L2 holds it */
    char why[512] = "";
    /* the private-stream cheat the gate must catch: 0.12 us for 2.1 GFLOP */
    assert_int_equal(stats_floor_check(&pk, flops, in, 0, 0.12, why, sizeof why), 1);
    assert_string_equal(task_check_of(why), "floor");
    assert_non_null(strstr(why, "0.12 us"));
    /* the honest kernel: 8.04 us */
    why[0] = '\0';
    assert_int_equal(stats_floor_check(&pk, flops, in, 0, 8.04, why, sizeof why), 0);
    assert_string_equal(why, "");
    /* cold: every input byte from DRAM; a memory-bound shape is floored by bytes */
    const double mem = stats_floor_us(&pk, 1e6, 3.35e9, 1);
    assert_near(mem, 3.35e9 / pk.dram_bytes_per_s * 1e6, 1e-6);
    assert_true(stats_floor_us(&pk, 1e6, 3.35e9, 0) < mem); /* warm: L2 takes part */
    /* not a number: never implausible */
    assert_int_equal(stats_floor_check(&pk, flops, in, 0, NAN, why, sizeof why), 0);
}

static void test_smem_optin(void **state)
{
    (void)state;
    /* a gate no kernel can fool: 4 B of static shared memory on top of 48 KB of dynamic must
     * opt in (it was refused as "no CTA fits on an SM" in hot mode) */
    assert_int_equal(fa_smem_optin(49152, 4), 1);
    assert_int_equal(fa_smem_optin(49152, 0), 0);
    assert_int_equal(fa_smem_optin(49148, 4), 0);
    assert_int_equal(fa_smem_optin(100000, 0), 1);
}

static void test_check_names(void **state)
{
    (void)state;
    assert_string_equal(task_check_of("timed: rel_l2 1.4 over ..."), "timed");
    assert_string_equal(task_check_of("stream: the launch ..."), "stream");
    assert_string_equal(task_check_of("floor: median ..."), "floor");
    assert_null(task_check_of("timedout: no"));
    assert_null(task_check_of("rel_l2 1.2e-02 over the tolerance"));
    assert_null(task_check_of(""));
    assert_null(task_check_of(NULL));
    int n = 0;
    while (task_checks[n])
        n++;
    assert_int_equal(n, 8);
}

static void test_cta_clock(void **state)
{
    (void)state;
    /* 4 CTAs on 2 SMs: SM 0 runs 100 + 300 cycles, SM 5 runs 200 + 200. */
    const unsigned long long buf[] = {1000, 1100, 0, 2000, 2300, 0, 50, 250, 5, 400, 600, 5};
    stats_clock c;
    assert_int_equal(stats_cta_clock(buf, 4, 132, 2, &c), 0);
    assert_near(c.cta_mean, 200, EPS);
    assert_near(c.cta_max, 300, EPS);
    assert_int_equal(c.sms_used, 2);
    /* busiest SM 400 cycles, mean over used SMs 400: balanced. */
    assert_near(c.sm_imbalance, 1.0, EPS);
    assert_near(c.waves, 4.0 / 264, EPS);
}

static void test_cta_clock_imbalance(void **state)
{
    (void)state;
    /* 3 CTAs: two on SM 1 (100 each), one on SM 2 (100): sums 200 and 100,
     * mean 150, busiest 200: imbalance 4/3. */
    const unsigned long long buf[] = {0, 100, 1, 100, 200, 1, 0, 100, 2};
    stats_clock c;
    assert_int_equal(stats_cta_clock(buf, 3, 2, 1, &c), 0);
    assert_near(c.sm_imbalance, 200.0 / 150.0, 1e-12);
    assert_near(c.waves, 1.5, EPS);
}

static void test_cta_clock_invalid(void **state)
{
    (void)state;
    stats_clock c;
    /* An entry the kernel never wrote (zeros). */
    const unsigned long long unwritten[] = {0, 100, 0, 0, 0, 0};
    assert_int_equal(stats_cta_clock(unwritten, 2, 132, 1, &c), -1);
    assert_true(isnan(c.cta_mean) && isnan(c.sm_imbalance) && isnan(c.waves));
    /* End before start. */
    const unsigned long long backwards[] = {500, 100, 0};
    assert_int_equal(stats_cta_clock(backwards, 1, 132, 1, &c), -1);
    /* SM id out of range. */
    const unsigned long long bad_sm[] = {0, 100, STATS_MAX_SM};
    assert_int_equal(stats_cta_clock(bad_sm, 1, 132, 1, &c), -1);
    assert_int_equal(stats_cta_clock(NULL, 1, 132, 1, &c), -1);
    assert_int_equal(stats_cta_clock(bad_sm, 0, 132, 1, &c), -1);
    /* Occupancy 0: waves unknown, the rest still computed. */
    const unsigned long long ok[] = {0, 100, 3};
    assert_int_equal(stats_cta_clock(ok, 1, 132, 0, &c), 0);
    assert_true(isnan(c.waves));
    assert_near(c.cta_mean, 100, EPS);
}

/* The discard rule: a block under ref * (1 - tolerance) is not kept (unknown clocks are), and
 * the pauses before its retakes grow from an eighth of the longest to the longest. */
static void test_clock_rule(void **state)
{
    (void)state;
    assert_true(stats_clock_ok(1921, 1980, 0.03));
    assert_false(stats_clock_ok(1920, 1980, 0.03));
    assert_true(stats_clock_ok(NAN, 1980, 0.03));
    assert_true(stats_clock_ok(1500, NAN, 0.03));
    const double want[] = {12.5, 25, 50, 100, 100, 100};
    for (int d = 1; d <= 6; d++)
        assert_true(fabs(stats_clock_pause_ms(100, d) - want[d - 1]) < 1e-9);
    assert_true(fabs(stats_clock_pause_ms(1, 1) - 0.125) < 1e-12);
    assert_true(fabs(stats_clock_pause_ms(1, 9) - 1) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spin),
        cmocka_unit_test(test_timing_odd),
        cmocka_unit_test(test_timing_even),
        cmocka_unit_test(test_timing_outlier),
        cmocka_unit_test(test_timing_constant),
        cmocka_unit_test(test_timing_small_n),
        cmocka_unit_test(test_noise_formula),
        cmocka_unit_test(test_stop_rule),
        cmocka_unit_test(test_stop_rule_simulated),
        cmocka_unit_test(test_block_size),
        cmocka_unit_test(test_errors_exact),
        cmocka_unit_test(test_errors_known),
        cmocka_unit_test(test_errors_nan_poison),
        cmocka_unit_test(test_errors_inf),
        cmocka_unit_test(test_errors_fp16_rounding_passes),
        cmocka_unit_test(test_gate_nan_error_fails),
        cmocka_unit_test(test_half_to_double_exhaustive),
        cmocka_unit_test(test_floor_peaks),
        cmocka_unit_test(test_floor_check),
        cmocka_unit_test(test_smem_optin),
        cmocka_unit_test(test_check_names),
        cmocka_unit_test(test_cta_clock),
        cmocka_unit_test(test_cta_clock_imbalance),
        cmocka_unit_test(test_cta_clock_invalid),
        cmocka_unit_test(test_clock_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
