/* stats.c - timing summary, stop rule, output errors, clock64 view
 * (contract: stats.h). */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/fa_config.h"

static int stats_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_noise(double median, double stdev, int n)
{
    if (n < 2 || !(median > 0))
        return NAN;
    return STATS_MEDIAN_SE * stdev / (sqrt((double)n) * median);
}

void stats_timing_of(double *x, int n, record_timing *t)
{
    memset(t, 0, sizeof *t);
    t->noise = NAN;
    if (n <= 0 || !x)
        return;
    qsort(x, (size_t)n, sizeof *x, stats_cmp_double);
    t->samples = n;
    t->min_us = x[0];
    t->median_us = (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    t->mean_us = sum / n;
    if (n < 2)
        return;
    /* Two passes: the textbook one-pass formula loses digits when the
     * spread is tiny next to the mean, which is the normal case here. */
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - t->mean_us) * (x[i] - t->mean_us);
    t->stdev_us = sqrt(ss / (n - 1));
    t->cv = t->mean_us > 0 ? t->stdev_us / t->mean_us : 0;
    t->noise = stats_noise(t->median_us, t->stdev_us, n);
}

stats_stop stats_stop_rule(const space_measure *m, int n, double noise, double elapsed_s)
{
    if (n >= m->min_samples && !isnan(noise) && noise <= m->noise)
        return STATS_CONVERGED;
    if (n >= m->max_samples)
        return STATS_MAX_SAMPLES;
    if (elapsed_s >= m->max_seconds)
        return STATS_BUDGET;
    return STATS_CONTINUE;
}

static const stats_criterion stats_criteria[] = {
    {"stdrel",
     "relative standard error of the median <= measure.noise (after min_samples), or "
     "max_samples, or max_seconds of the config's own blocks",
     stats_stop_rule},
};

const stats_criterion *stats_criterion_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof stats_criteria / sizeof *stats_criteria; i++)
        if (strcmp(name, stats_criteria[i].name) == 0)
            return &stats_criteria[i];
    return NULL;
}

void stats_timing_for(mode_uncertainty u, double *x, int n, record_timing *t)
{
    /* No default: a new method is a compile error (-Wswitch) until it has its case. */
    switch (u) {
    case MODE_UNC_MEDIAN_SE:
        stats_timing_of(x, n, t);
        return;
    }
    stats_timing_of(x, n, t); /* a value outside the enum: the median's standard error */
}

const char *stats_stop_name(stats_stop s)
{
    static const char *const names[] = {[STATS_CONTINUE] = "continue",
                                        [STATS_CONVERGED] = "converged",
                                        [STATS_MAX_SAMPLES] = "max_samples",
                                        [STATS_BUDGET] = "budget"};
    const unsigned i = (unsigned)s;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "invalid";
}

int stats_block_size(double est_us, double max_seconds, int remaining, int block_max)
{
    int hi = block_max < remaining ? block_max : remaining;
    if (hi < 1)
        hi = 1;
    if (!(est_us > 0)) /* no estimate yet: a full block */
        return hi;
    const double fit = max_seconds * 1e6 / 4 / est_us;
    if (fit >= hi)
        return hi;
    return fit < 1 ? 1 : (int)fit;
}

/* IEEE binary16 bits to double. Inline and branch-light because the gate
 * converts every output element (33 M per task for the large problems);
 * the out-of-line ref_half_to_float made the gate the slowest part of a
 * sweep. Normal numbers are rebuilt as float bits; zeros, subnormals,
 * infinities and NaNs take the rare branches. */
static inline double stats_h2d(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15), exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0) /* zero or subnormal: man * 2^-24 */
        return (sign ? -1.0 : 1.0) * (double)man * (1.0 / 16777216.0);
    if (exp == 31)
        return man ? NAN : (sign ? -INFINITY : INFINITY);
    const uint32_t bits = (sign << 31) | ((exp + 112u) << 23) | (man << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double stats_half_to_double(uint16_t h)
{
    return stats_h2d(h);
}

void stats_errors_of_sums(double diff2, double ref2, double max_abs, long nonfinite, long first_bad,
                          size_t n, stats_errors *e)
{
    memset(e, 0, sizeof *e);
    e->n = n;
    e->nonfinite = nonfinite;
    e->first_bad = nonfinite ? first_bad : -1;
    if (nonfinite) {
        e->rel_l2 = e->max_abs = NAN;
        return;
    }
    e->max_abs = max_abs;
    if (ref2 > 0)
        e->rel_l2 = sqrt(diff2) / sqrt(ref2);
    else /* an all-zero reference: exact or infinitely wrong */
        e->rel_l2 = diff2 > 0 ? INFINITY : 0;
}

/* bf16 bits to double: the upper half of a float, exactly. */
static inline double stats_b2d(uint16_t h)
{
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void stats_output_errors(const uint16_t *out, int dtype, const float *ref, size_t n,
                         stats_errors *e)
{
    double diff2 = 0, ref2 = 0, max_abs = 0;
    long nonfinite = 0, first_bad = -1;
    for (size_t i = 0; i < n; i++) {
        const double o = dtype == FA_DTYPE_BF16 ? stats_b2d(out[i]) : stats_h2d(out[i]);
        const double r = ref[i];
        if (!isfinite(o)) {
            if (nonfinite++ == 0)
                first_bad = (long)i;
            continue;
        }
        const double d = fabs(o - r);
        diff2 += d * d;
        ref2 += r * r;
        if (d > max_abs || isnan(d)) /* a NaN reference poisons it too */
            max_abs = d;
    }
    stats_errors_of_sums(diff2, ref2, max_abs, nonfinite, first_bad, n, e);
}

int stats_gate(const stats_errors *e, const space_tolerance *tol, char *why, size_t n)
{
    if (n)
        why[0] = '\0';
    if (e->nonfinite) {
        snprintf(why, n,
                 "%ld of %zu outputs are NaN or inf (first at element %ld): the kernel did not "
                 "write them or computed garbage",
                 e->nonfinite, e->n, e->first_bad);
        return 1;
    }
    /* Written as !(x <= tol) so that a NaN error fails too. */
    const int bad_l2 = !(e->rel_l2 <= tol->rel_l2), bad_abs = !(e->max_abs <= tol->max_abs);
    if (bad_l2 && bad_abs)
        snprintf(why, n, "rel_l2 %.3e over the tolerance %.3e and max_abs %.3e over %.3e",
                 e->rel_l2, tol->rel_l2, e->max_abs, tol->max_abs);
    else if (bad_l2)
        snprintf(why, n, "rel_l2 %.3e over the tolerance %.3e (max_abs %.3e)", e->rel_l2,
                 tol->rel_l2, e->max_abs);
    else if (bad_abs)
        snprintf(why, n, "max_abs %.3e over the tolerance %.3e (rel_l2 %.3e)", e->max_abs,
                 tol->max_abs, e->rel_l2);
    return bad_l2 || bad_abs;
}

/* ---- clocks ------------------------------------------------------------------------------- */

double stats_probe_mhz(unsigned long long c0, unsigned long long c1, unsigned long long g0,
                       unsigned long long g1)
{
    if (g1 <= g0 || c1 < c0)
        return NAN;
    return (double)(c1 - c0) * 1e3 / (double)(g1 - g0);
}

double stats_block_mhz(double head_mhz, double tail_mhz)
{
    if (isnan(head_mhz))
        return tail_mhz;
    if (isnan(tail_mhz))
        return head_mhz;
    return 0.5 * (head_mhz + tail_mhz);
}

int stats_clock_ok(double block_mhz, double ref_mhz, double tolerance)
{
    return isnan(block_mhz) || isnan(ref_mhz) || !(ref_mhz > 0) ||
           block_mhz >= ref_mhz * (1 - tolerance);
}

double stats_clock_pause_ms(double longest_ms, int discarded)
{
    double p = longest_ms / 8;
    for (int i = 1; i < discarded && p < longest_ms; i++)
        p *= 2;
    return fmin(p, longest_ms);
}

void stats_clock_summary(double *x, int n, int *min_mhz, int *median_mhz, int *max_mhz)
{
    if (n <= 0) {
        *min_mhz = *median_mhz = *max_mhz = -1;
        return;
    }
    qsort(x, (size_t)n, sizeof *x, stats_cmp_double);
    const double med = (n % 2) ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    *min_mhz = (int)lround(x[0]);
    *median_mhz = (int)lround(med);
    *max_mhz = (int)lround(x[n - 1]);
}

double stats_spin_us(double enqueue_us, int n, double gpu_min_us)
{
    const int first = n < STATS_SPIN_COVER_LAUNCHES ? n : STATS_SPIN_COVER_LAUNCHES;
    const double cover = 1.5 * enqueue_us * first;
    const double behind = n * (1.5 * enqueue_us - gpu_min_us);
    return fmax(STATS_SPIN_MIN_US, fmax(cover, behind));
}

int stats_batch_launches(double est_us, double batch_us)
{
    if (!(est_us > 0) || !(batch_us > 0))
        return 1;
    const double l = ceil(batch_us / est_us);
    return l < 1 ? 1 : l > 1000 ? 1000 : (int)l;
}

static void stats_clock_nan(stats_clock *c)
{
    c->cta_mean = c->cta_max = c->waves = c->sm_imbalance = NAN;
    c->sms_used = 0;
}

int stats_cta_clock(const unsigned long long *buf, long ctas, int sm_count, int max_blocks_per_sm,
                    stats_clock *out)
{
    stats_clock_nan(out);
    if (!buf || ctas < 1)
        return -1;
    /* Summed cycles and CTA count per SM id. */
    double *cyc = calloc(STATS_MAX_SM, sizeof *cyc);
    long *cnt = calloc(STATS_MAX_SM, sizeof *cnt);
    int rc = -1;
    if (!cyc || !cnt)
        goto done;
    double sum = 0, mx = 0;
    for (long i = 0; i < ctas; i++) {
        const unsigned long long t0 = buf[3 * i], t1 = buf[3 * i + 1], sm = buf[3 * i + 2];
        if (t1 == 0 || t1 < t0 || sm >= STATS_MAX_SM)
            goto done;
        const double c = (double)(t1 - t0);
        sum += c;
        mx = c > mx ? c : mx;
        cyc[sm] += c;
        cnt[sm]++;
    }
    int used = 0;
    double busiest = 0;
    for (int s = 0; s < STATS_MAX_SM; s++) {
        used += cnt[s] > 0;
        busiest = cyc[s] > busiest ? cyc[s] : busiest;
    }
    out->cta_mean = sum / (double)ctas;
    out->cta_max = mx;
    out->sms_used = used;
    /* All CTAs of zero cycles: nothing to be unbalanced about. */
    out->sm_imbalance = sum > 0 ? busiest / (sum / used) : 1.0;
    const double slots = (double)sm_count * max_blocks_per_sm;
    out->waves = slots > 0 ? (double)ctas / slots : NAN;
    rc = 0;
done:
    free(cyc);
    free(cnt);
    return rc;
}

/* ---- the physical floor -------------------------------------------------------------------- */

double stats_tensor_flops_per_clk(int cc)
{
    /* dense fp16 with fp32 accumulation per SM per clock, the largest any
     * part of the generation does: V100 1024, A100 2048, Ada and GA10x
     * data-centre parts 1024 (2048 here, to stay above every part), H100
     * 4096, B200 about 8200 (16384 here); an unknown newer one 16384. */
    if (cc < 70)
        return 0;
    if (cc < 80)
        return 1024;
    if (cc < 90)
        return 2048;
    if (cc < 100)
        return 4096;
    return 16384;
}

void stats_peak_of(int cc, int sm_count, int clock_khz, int mem_clock_khz, int bus_bits,
                   long l2_bytes, stats_peak *out)
{
    out->cc = cc;
    out->sm_count = sm_count;
    out->clock_mhz = clock_khz / 1000;
    out->flops_per_s = stats_tensor_flops_per_clk(cc) * sm_count * (clock_khz * 1e3);
    out->dram_bytes_per_s =
        mem_clock_khz > 0 && bus_bits > 0 ? 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) : 0;
    out->l2_bytes = l2_bytes > 0 ? (double)l2_bytes : 0;
}

static double stats_dram_bytes(const stats_peak *pk, double in_bytes, int flushed)
{
    const double b = flushed ? in_bytes : in_bytes - pk->l2_bytes;
    return b > 0 ? b : 0;
}

double stats_floor_us(const stats_peak *pk, double flops, double in_bytes, int flushed)
{
    const double tf = pk->flops_per_s > 0 ? flops / pk->flops_per_s : 0;
    const double tb = pk->dram_bytes_per_s > 0
                          ? stats_dram_bytes(pk, in_bytes, flushed) / pk->dram_bytes_per_s
                          : 0;
    return 1e6 * (tf > tb ? tf : tb);
}

int stats_floor_check(const stats_peak *pk, double flops, double in_bytes, int flushed,
                      double median_us, char *why, size_t n)
{
    const double floor = stats_floor_us(pk, flops, in_bytes, flushed);
    if (!(floor > 0) || !(median_us < floor))
        return 0;
    snprintf(why, n,
             "floor: median %.3g us is under this GPU's floor of %.3g us for the problem (%.3g "
             "GFLOP at the %.0f TFLOP/s dense fp16 tensor peak of %d SMs at %d MHz; %.3g MB "
             "from DRAM at %.0f GB/s): the timed launches cannot have done the work",
             median_us, floor, flops * 1e-9, pk->flops_per_s * 1e-12, pk->sm_count, pk->clock_mhz,
             stats_dram_bytes(pk, in_bytes, flushed) * 1e-6, pk->dram_bytes_per_s * 1e-9);
    return 1;
}
