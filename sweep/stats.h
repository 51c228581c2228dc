/* stats.h - the arithmetic of measuring one point: the summary of timing
 * samples, the noise stop rule, the output errors against the reference,
 * the correctness gate, and the clock64 view of the CTAs.
 *
 * Pure functions: no CUDA, no I/O, no globals. The sweep engine's worker
 * (sweep/measure.c) calls them on data it copied back from the GPU, and the
 * unit tests (tests/unit/test_measure.c) call them on made-up data.
 *
 * The noise of a measurement is the relative standard error of its median:
 *
 *     noise = 1.2533 * stdev / (sqrt(n) * median)
 *
 * 1.2533 = sqrt(pi/2) is the asymptotic standard error of the median of n
 * normal samples in units of stdev/sqrt(n). Sampling stops once noise is at
 * most the space's measure.noise (after min_samples), like nvbench's noise
 * criterion; or at max_samples; or when max_seconds of timing are spent.
 */
#ifndef STATS_H
#define STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../store/record.h"
#include "../grid/space.h"

/* sqrt(pi/2): standard error of the median / standard error of the mean. */
#define STATS_MEDIAN_SE 1.2533141373155001

/* Summary of n timing samples (any unit; the engine uses µs). Sorts x in
 * place. median: the middle sample, the mean of the two middle ones for even
 * n. stdev: sample standard deviation (n-1 denominator). cv = stdev / mean.
 * noise as above. With n < 2 stdev and cv are 0 and noise is NaN (no
 * estimate: the store writes it as null); with n == 0 everything is 0 but
 * noise (NaN). samples = n. */
void stats_timing_of(double *x, int n, record_timing *t);

/* The noise formula above; NaN when n < 2 or median <= 0. */
double stats_noise(double median, double stdev, int n);

typedef enum stats_stop {
    STATS_CONTINUE,    /* take more samples */
    STATS_CONVERGED,   /* n >= min_samples and noise <= measure.noise */
    STATS_MAX_SAMPLES, /* n >= max_samples */
    STATS_BUDGET       /* elapsed_s >= max_seconds */
} stats_stop;

/* The stop rule after n samples with the given noise (NaN never converges)
 * and elapsed_s seconds of sampling. Checked in enum order, so a run that
 * converges exactly at max_samples reports STATS_CONVERGED. */
stats_stop stats_stop_rule(const space_measure *m, int n, double noise, double elapsed_s);
/* "continue", "converged", "max_samples", "budget". */
const char *stats_stop_name(stats_stop s);

/* ---- stopping criteria and uncertainty, by a mode's descriptor ------------------------- */

/* A named stopping criterion (nvbench style): what a timing mode's
 * descriptor (store/mode.h, its `stop` field) refers to by name. One so
 * far:
 *   "stdrel": stop once the relative standard error of the median (the
 *             noise above) is at most measure.noise after min_samples, or
 *             at max_samples, or when max_seconds of the config's own
 *             blocks are spent (stats_stop_rule).
 * stop() says, after n samples with the given noise and elapsed_s seconds
 * of sampling, whether to go on and why not. */
typedef struct stats_criterion {
    const char *name; /* "stdrel" */
    const char *text; /* one line: when it stops */
    stats_stop (*stop)(const space_measure *m, int n, double noise, double elapsed_s);
} stats_criterion;

/* The criterion of that name, NULL when there is none. */
const stats_criterion *stats_criterion_find(const char *name);

/* The timing summary of n samples (x is sorted in place) with the
 * uncertainty (t->noise) estimated by method u: the one place a mode's
 * uncertainty method (store/mode.h) becomes a number. MODE_UNC_MEDIAN_SE
 * is stats_timing_of. */
void stats_timing_for(mode_uncertainty u, double *x, int n, record_timing *t);

/* How many launches to queue between two synchronisations: as many as fit
 * in a quarter of the time budget at est_us per launch, clamped to
 * [1, min(block_max, remaining)]. A budget check happens only between
 * blocks, so a block must not overshoot it by much. */
int stats_block_size(double est_us, double max_seconds, int remaining, int block_max);

/* Errors of an fp16 output (IEEE half bits) against an fp32 reference of n
 * elements, summed in double. */
typedef struct stats_errors {
    double rel_l2;  /* ||out - ref|| / ||ref||; NaN when any output is not finite */
    double max_abs; /* max |out - ref|; NaN when any output is not finite */
    long nonfinite; /* outputs that are NaN or +-inf */
    long first_bad; /* index of the first of them, -1 when none */
    size_t n;
} stats_errors;

void stats_output_errors(const uint16_t *out, int dtype, const float *ref, size_t n,
                         stats_errors *e);

/* The same errors from the sums the GPU comparison makes (fa_compare_sums:
 * squared differences and squared reference over the finite outputs, their
 * largest difference, the non-finite count and first index, first_bad < 0
 * when none): the one place rel_l2 and max_abs are made of sums, for the
 * host loop above and the GPU gate alike. */
void stats_errors_of_sums(double diff2, double ref2, double max_abs, long nonfinite, long first_bad,
                          size_t n, stats_errors *e);

/* The fp16 (IEEE half bits) to double conversion stats_output_errors uses:
 * exact for every one of the 65536 codes; NaN codes give NaN. */
double stats_half_to_double(uint16_t h);

/* The correctness gate: 0 when e passes tol; 1 otherwise, with the reason in
 * why (e.g. "rel_l2 1.2e-02 over the tolerance 5.0e-03"). */
int stats_gate(const stats_errors *e, const space_tolerance *tol, char *why, size_t n);

/* ---- the physical floor -------------------------------------------------------------------- */

/* What a GPU can do at most: its dense fp16 tensor-core rate (all SMs at
 * the peak clock), its DRAM bandwidth (0: unknown) and its L2 size. */
typedef struct stats_peak {
    double flops_per_s;
    double dram_bytes_per_s;
    double l2_bytes;
    int sm_count, clock_mhz, cc;
} stats_peak;

/* Dense fp16 tensor-core FLOPs (fp32 accumulation) one SM does per clock
 * at most, by compute capability x10, rounded up so that the floor below is
 * never above the truth (H100: 4096; A100: 2048); 0 for an architecture
 * without tensor cores (no floor then). */
double stats_tensor_flops_per_clk(int cc);

/* The peak of a GPU from what CUDA reports: SMs, the peak SM clock (kHz),
 * the peak memory clock (kHz, double data rate) and bus width (bits), the
 * L2 size (bytes). */
void stats_peak_of(int cc, int sm_count, int clock_khz, int mem_clock_khz, int bus_bits,
                   long l2_bytes, stats_peak *out);

/* The least time one forward pass can take on that GPU, in us: its FLOPs at
 * the tensor peak, or the input bytes that must come from DRAM at its
 * bandwidth (all of them when L2 is flushed, what does not fit in L2 when
 * it is warm), whichever is longer; 0 when nothing is known. */
double stats_floor_us(const stats_peak *pk, double flops, double in_bytes, int flushed);

/* The floor check: 1 when median_us is under the floor (why says both
 * numbers and how the floor was made, starting "floor: "), else 0. */
int stats_floor_check(const stats_peak *pk, double flops, double in_bytes, int flushed,
                      double median_us, char *why, size_t n);

/* ---- clocks ------------------------------------------------------------------------------- */

/* The SM clock in MHz over a probe: cycles c1 - c0 (clock64) in
 * nanoseconds g1 - g0 (%globaltimer); NaN when the probe cannot be real
 * (no time passed, or ends before it starts). */
double stats_probe_mhz(unsigned long long c0, unsigned long long c1, unsigned long long g0,
                       unsigned long long g1);

/* The clock of a timed block from the probes before and after it: their
 * mean (each is off by %globaltimer's granularity; under a power cap both
 * read low), the one that is a number when the other is not, NaN when
 * neither is. */
double stats_block_mhz(double head_mhz, double tail_mhz);

/* Whether a block at block_mhz is kept under a calibration ref_mhz and a
 * tolerance: it is when block_mhz >= ref_mhz * (1 - tolerance), or when
 * either clock is unknown (NaN: nothing to judge by). */
int stats_clock_ok(double block_mhz, double ref_mhz, double tolerance);

/* The pause before a record's discarded block is taken again, its `discarded`-th (1, 2, ...):
 * an eighth of longest_ms (the space's clock_pause_ms) for the first, each further one twice
 * the one before, at most longest_ms. A GPU whose clock is back after a short pause loses
 * little; one that stays low soon waits the whole pause (sweep/NOTES-engine.md, twentieth
 * session: with 100 ms every time the h100 space lost 0.7-1.4 s to 7-14 discards). */
double stats_clock_pause_ms(double longest_ms, int discarded);

/* Min, median and max of n clocks (any order; x is sorted), rounded to
 * whole MHz; all -1 when n is 0. */
void stats_clock_summary(double *x, int n, int *min_mhz, int *median_mhz, int *max_mhz);

/* How long the spin kernel ahead of a timed block of n launches holds the stream, in us. The
 * GPU must never wait for the host inside a timed sample: launch i is queued about
 * i * enqueue_us after the spin starts (1.5x that, for a host that stalls), and the GPU
 * reaches it no earlier than spin + i * gpu_min_us, gpu_min_us a lower bound on its time per
 * launch (the least timed launch of the config so far, any mode: a batch sample's time per
 * launch is the least; 0 when none is known). So the spin covers n * (1.5 * enqueue_us -
 * gpu_min_us) where the host is the slower, always the first STATS_SPIN_COVER_LAUNCHES
 * launches' queuing (a hot block's worth: a host that stalls early still finds work queued),
 * and at least STATS_SPIN_MIN_US. A 12 us kernel in batch mode (272 launches a block) spun
 * 1.2 ms of each block when the spin covered the whole block's queuing; now 72 us
 * (sweep/NOTES-engine.md, tenth session). */
#define STATS_SPIN_MIN_US 20.0
#define STATS_SPIN_COVER_LAUNCHES 16
double stats_spin_us(double enqueue_us, int n, double gpu_min_us);

/* Batch mode: launches per sample so a sample takes about batch_us at
 * est_us per launch, from 1 to 1000 (1 when there is no estimate). */
int stats_batch_launches(double est_us, double batch_us);

/* What one instrumented launch says about its CTAs. buf holds, per CTA,
 * {start cycle, end cycle, SM id} (fa_args.cta_clock). */
typedef struct stats_clock {
    double cta_mean, cta_max; /* cycles per CTA, end - start */
    double waves;             /* ctas / (sm_count * max_blocks_per_sm); NaN if that is 0 */
    double sm_imbalance;      /* max over SMs of summed CTA cycles / mean over used SMs */
    int sms_used;             /* SMs that ran at least one CTA */
} stats_clock;

/* Returns 0, or -1 when the data cannot be real (an end before its start,
 * an unwritten entry with end 0, an SM id >= STATS_MAX_SM, ctas < 1) or
 * memory runs out; *out then holds NaNs. */
#define STATS_MAX_SM 4096
int stats_cta_clock(const unsigned long long *buf, long ctas, int sm_count, int max_blocks_per_sm,
                    stats_clock *out);

#endif /* STATS_H */
