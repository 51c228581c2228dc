/* measure.c - one (point, mode) on the GPU: inputs and reference, the
 * correctness gate, timed samples, NVML clocks, clock64 (contract: measure.h).
 *
 * Every CUDA call goes through RG_CHECK, which turns a failure into the
 * text "what: cudaErrorName: description" in g->err and returns -1; the
 * caller marks the task crashed with that text and then asks whether the
 * context survived (rg_healthy), which decides if the worker goes on.
 */
#include "measure.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../kernels/inject.h"
#include "../kernels/ref_cpu.h"
#include "nvml.h"
#include "progress.h"
#include "stats.h"

/* Timed launches queued between two synchronisations (events are reused). */
#define MEASURE_BLOCK_MAX 16
/* The spin kernel ahead of a block must outlast the host queuing the block;
 * before the first block is measured, assume this much host time per
 * sample (event, launch, event, and in cold mode a memset). */
#define MEASURE_ENQUEUE_GUESS_US 10.0
#define MEASURE_SPIN_MIN_US 20.0
/* The flush buffer when a GPU reports no L2 size. */
#define MEASURE_FLUSH_FALLBACK_BYTES ((size_t)128 << 20)

struct measure_gpu {
    int device;
    task_device info;
    cudaStream_t stream;
    cudaEvent_t ev[2 * MEASURE_BLOCK_MAX];
    int n_ev;
    void *flush; /* cold mode: written before every sample to evict L2 */
    size_t flush_bytes;
    nvml nvml;
    unsigned long long seed;
    /* The problem whose buffers are allocated, and its reference. */
    int have_problem;
    space_problem prob;
    size_t n; /* elements of one [B,H,S,D] tensor */
    fa_args args;
    float *d_ref, *h_ref;
    uint16_t *h_out;
    unsigned long long *d_clock, *h_clock;
    size_t clock_cap; /* entries of d_clock / h_clock */
    double *samples;
    int samples_cap;
    double gate_us;    /* event time of the gate launch: the first size estimate */
    double enqueue_us; /* host time to queue one sample, from the last block */
    char err[200];
};

static int rg_fail(measure_gpu *g, cudaError_t e, const char *what)
{
    snprintf(g->err, sizeof g->err, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
}

#define RG_CHECK(g, call, what)                                                                    \
    do {                                                                                           \
        const cudaError_t e_ = (cudaError_t)(call);                                                \
        if (e_ != cudaSuccess)                                                                     \
            return rg_fail((g), e_, (what));                                                       \
    } while (0)

/* Copies text into a fixed field, cut to fit. */
static void rg_copy(char *dst, size_t n, const char *src)
{
    const size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Puts prefix in front of g->err, cutting the end off when too long. */
static void rg_prefix(measure_gpu *g, const char *prefix)
{
    char e[sizeof g->err];
    memcpy(e, g->err, sizeof e);
    rg_copy(g->err, sizeof g->err, prefix);
    const size_t len = strlen(g->err);
    rg_copy(g->err + len, sizeof g->err - len, e);
}

/* Whether the context still works after a failed call: a non-sticky error
 * (bad launch configuration, out of memory) is cleared by reading it; a
 * sticky one (illegal address, trap) fails every later call. */
static int rg_healthy(void)
{
    (void)cudaGetLastError(); /* clears a non-sticky error; its value is known */
    return cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess;
}

/* ---- opening the device ------------------------------------------------------------------- */

static void rg_uuid_text(const cudaUUID_t *u, char *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static int rg_device_info(measure_gpu *g)
{
    task_device *in = &g->info;
    RG_CHECK(g, cudaSetDevice(g->device), "cudaSetDevice");
    struct cudaDeviceProp prop;
    RG_CHECK(g, cudaGetDeviceProperties(&prop, g->device), "cudaGetDeviceProperties");
    RG_CHECK(g, cudaDeviceGetAttribute(&in->clock_khz, cudaDevAttrClockRate, g->device),
             "cudaDeviceGetAttribute(clock rate)");
    int drv = 0, rt = 0;
    RG_CHECK(g, cudaDriverGetVersion(&drv), "cudaDriverGetVersion");
    RG_CHECK(g, cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    RG_CHECK(g, cudaDeviceGetPCIBusId(in->pci, (int)sizeof in->pci, g->device),
             "cudaDeviceGetPCIBusId");
    rg_copy(in->name, sizeof in->name, prop.name);
    rg_uuid_text(&prop.uuid, in->uuid, sizeof in->uuid);
    in->cc = prop.major * 10 + prop.minor;
    in->sm_count = prop.multiProcessorCount;
    in->l2_bytes = prop.l2CacheSize;
    snprintf(in->runtime, sizeof in->runtime, "%d.%d", rt / 1000, rt % 1000 / 10);
    nvml_open(&g->nvml, in->pci);
    if (g->nvml.driver[0])
        rg_copy(in->driver, sizeof in->driver, g->nvml.driver);
    else
        snprintf(in->driver, sizeof in->driver, "CUDA %d.%d", drv / 1000, drv % 1000 / 10);
    rg_copy(in->build, sizeof in->build, fa_build_id());
    return 0;
}

static int rg_open(measure_gpu *g)
{
    if (rg_device_info(g))
        return -1;
    RG_CHECK(g, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
    for (; g->n_ev < 2 * MEASURE_BLOCK_MAX; g->n_ev++)
        RG_CHECK(g, cudaEventCreate(&g->ev[g->n_ev]), "cudaEventCreate");
    g->flush_bytes =
        g->info.l2_bytes > 0 ? 2 * (size_t)g->info.l2_bytes : MEASURE_FLUSH_FALLBACK_BYTES;
    RG_CHECK(g, cudaMalloc(&g->flush, g->flush_bytes), "cudaMalloc(L2 flush buffer)");
    g->enqueue_us = MEASURE_ENQUEUE_GUESS_US;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* Fresh inputs every run: a kernel that is right only on one data set
     * should not pass forever. xorshift needs a non-zero state. */
    g->seed = ((unsigned long long)ts.tv_sec * 1000000007ULL) ^ (unsigned long long)ts.tv_nsec ^
              ((unsigned long long)getpid() << 32) ^ 0x9E3779B97F4A7C15ULL;
    if (g->seed == 0)
        g->seed = 1;
    return 0;
}

static void rg_free_problem(measure_gpu *g)
{
    /* Errors while freeing are ignored: the buffers are gone either way,
     * and a broken context is reported by the next real call. */
    (void)cudaFree((void *)g->args.q);
    (void)cudaFree((void *)g->args.k);
    (void)cudaFree((void *)g->args.v);
    (void)cudaFree(g->args.o);
    (void)cudaFree(g->d_ref);
    free(g->h_ref);
    free(g->h_out);
    memset(&g->args, 0, sizeof g->args);
    g->d_ref = g->h_ref = NULL;
    g->h_out = NULL;
    g->have_problem = 0;
}

void measure_close(measure_gpu *g)
{
    if (!g)
        return;
    rg_free_problem(g);
    (void)cudaFree(g->d_clock);
    free(g->h_clock);
    free(g->samples);
    (void)cudaFree(g->flush);
    for (int i = 0; i < g->n_ev; i++)
        (void)cudaEventDestroy(g->ev[i]);
    if (g->stream)
        (void)cudaStreamDestroy(g->stream);
    nvml_close(&g->nvml);
    free(g);
}

int measure_open(int device, measure_gpu **out, task_device *info, char *err, size_t errlen)
{
    *out = NULL;
    measure_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of host memory starting the CUDA worker");
        return -1;
    }
    g->device = device;
    if (rg_open(g) != 0) {
        snprintf(err, errlen, "device %d: %s", device, g->err);
        measure_close(g);
        return -1;
    }
    *info = g->info;
    *out = g;
    return 0;
}

/* ---- the problem: random inputs and the reference ------------------------------------------ */

/* xorshift64*: fast, and plenty random for test inputs. */
static unsigned long long rg_rand(unsigned long long *s)
{
    unsigned long long x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

/* Fills dev with n fp16 values uniform in [-1, 1], staged through host. */
static int rg_fill_random(measure_gpu *g, void *dev, uint16_t *host, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double u = (double)(rg_rand(&g->seed) >> 11) * (1.0 / 9007199254740992.0);
        host[i] = ref_float_to_half((float)(2 * u - 1));
    }
    RG_CHECK(g, cudaMemcpy(dev, host, n * sizeof *host, cudaMemcpyHostToDevice),
             "copying random inputs to the GPU");
    return 0;
}

static int rg_alloc_problem(measure_gpu *g)
{
    const size_t half_bytes = g->n * sizeof(uint16_t), ref_bytes = g->n * sizeof(float);
    g->h_ref = malloc(ref_bytes);
    g->h_out = malloc(half_bytes);
    if (!g->h_ref || !g->h_out) {
        snprintf(g->err, sizeof g->err, "out of host memory for %zu-element output copies", g->n);
        return -1;
    }
    void *q = NULL, *k = NULL, *v = NULL;
    RG_CHECK(g, cudaMalloc(&q, half_bytes), "cudaMalloc(q)");
    g->args.q = q;
    RG_CHECK(g, cudaMalloc(&k, half_bytes), "cudaMalloc(k)");
    g->args.k = k;
    RG_CHECK(g, cudaMalloc(&v, half_bytes), "cudaMalloc(v)");
    g->args.v = v;
    RG_CHECK(g, cudaMalloc(&g->args.o, half_bytes), "cudaMalloc(o)");
    RG_CHECK(g, cudaMalloc((void **)&g->d_ref, ref_bytes), "cudaMalloc(reference output)");
    if (rg_fill_random(g, q, g->h_out, g->n) || rg_fill_random(g, k, g->h_out, g->n) ||
        rg_fill_random(g, v, g->h_out, g->n))
        return -1;
    return 0;
}

/* Makes p's buffers and reference current, unless they already are. */
static int rg_setup_problem(measure_gpu *g, const space_problem *p)
{
    if (g->have_problem && memcmp(&g->prob, p, sizeof *p) == 0)
        return 0;
    rg_free_problem(g);
    g->n = (size_t)p->batch * p->heads * p->seq_len * p->head_dim;
    g->args.batch = p->batch;
    g->args.heads = p->heads;
    g->args.seq_len = p->seq_len;
    g->args.head_dim = p->head_dim;
    g->args.causal = p->causal;
    g->args.softmax_scale = (float)(1.0 / sqrt((double)p->head_dim));
    if (rg_alloc_problem(g))
        return -1;
    RG_CHECK(g, fa_reference_launch(&g->args, g->d_ref, g->stream), "launching the reference");
    RG_CHECK(g, cudaStreamSynchronize(g->stream), "running the reference");
    RG_CHECK(g, cudaMemcpy(g->h_ref, g->d_ref, g->n * sizeof(float), cudaMemcpyDeviceToHost),
             "copying the reference output back");
    for (size_t i = 0; i < g->n; i++)
        if (!isfinite(g->h_ref[i])) {
            snprintf(g->err, sizeof g->err,
                     "the fp32 reference output is not finite at element %zu; the reference "
                     "kernel is broken (check with fa_check)",
                     i);
            return -1;
        }
    g->prob = *p;
    g->have_problem = 1;
    return 0;
}

/* ---- the correctness gate ------------------------------------------------------------------- */

static int rg_gate(measure_gpu *g, const fa_instance *in, task_inject inject, stats_errors *e)
{
    const size_t bytes = g->n * sizeof(uint16_t);
    /* 0xFFFF is a NaN in fp16: an element the kernel does not write fails. */
    RG_CHECK(g, cudaMemsetAsync(g->args.o, 0xFF, bytes, g->stream), "poisoning the output");
    RG_CHECK(g, cudaEventRecord(g->ev[0], g->stream), "cudaEventRecord");
    if (inject == TASK_INJECT_FAULT)
        RG_CHECK(g, fa_inject_fault_launch(g->stream), "launching the injected fault kernel");
    else if (inject == TASK_INJECT_HANG)
        RG_CHECK(g, fa_inject_hang_launch(g->stream), "launching the injected hang kernel");
    else
        RG_CHECK(g, in->launch(&g->args, g->stream), "launching the kernel (correctness gate)");
    RG_CHECK(g, cudaEventRecord(g->ev[1], g->stream), "cudaEventRecord");
    RG_CHECK(g, cudaStreamSynchronize(g->stream), "running the kernel (correctness gate)");
    float ms = 0;
    RG_CHECK(g, cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]), "cudaEventElapsedTime");
    g->gate_us = ms * 1e3;
    RG_CHECK(g, cudaMemcpy(g->h_out, g->args.o, bytes, cudaMemcpyDeviceToHost),
             "copying the output back");
    stats_output_errors(g->h_out, g->h_ref, g->n, e);
    return 0;
}

/* ---- timed samples -------------------------------------------------------------------------- */

/* Launches before timing; *est_us gets their mean time per launch (host
 * gaps included, so an over-estimate: it only makes blocks smaller). */
static int rg_warmup(measure_gpu *g, const fa_instance *in, int runs, double *est_us)
{
    *est_us = g->gate_us;
    if (runs <= 0)
        return 0;
    RG_CHECK(g, cudaEventRecord(g->ev[0], g->stream), "cudaEventRecord");
    for (int i = 0; i < runs; i++)
        RG_CHECK(g, in->launch(&g->args, g->stream), "launching the kernel (warm-up)");
    RG_CHECK(g, cudaEventRecord(g->ev[1], g->stream), "cudaEventRecord");
    RG_CHECK(g, cudaEventSynchronize(g->ev[1]), "running the warm-up launches");
    float ms = 0;
    RG_CHECK(g, cudaEventElapsedTime(&ms, g->ev[0], g->ev[1]), "cudaEventElapsedTime");
    *est_us = ms * 1e3 / runs;
    return 0;
}

/* One block of nb samples: a spin kernel holds the stream while the host
 * queues (flush,) event, launch, event for each sample, so the GPU runs
 * them back to back and no host time falls between a pair of events.
 * out[i] gets the i-th launch's time in µs. */
static int rg_block(measure_gpu *g, const fa_instance *in, int cold, int nb, int base, double *out)
{
    const double spin_us = fmax(MEASURE_SPIN_MIN_US, 1.5 * g->enqueue_us * nb);
    const long long cycles = (long long)(spin_us * g->info.clock_khz / 1000.0);
    RG_CHECK(g, fa_spin_launch(cycles, g->stream), "launching the spin kernel");
    const double t0 = progress_now();
    for (int i = 0; i < nb; i++) {
        if (cold) /* a different byte each time, so no write can be elided */
            RG_CHECK(g, cudaMemsetAsync(g->flush, (base + i) & 0xff, g->flush_bytes, g->stream),
                     "flushing L2 (cold mode)");
        RG_CHECK(g, cudaEventRecord(g->ev[2 * i], g->stream), "cudaEventRecord");
        RG_CHECK(g, in->launch(&g->args, g->stream), "launching the kernel (timed)");
        RG_CHECK(g, cudaEventRecord(g->ev[2 * i + 1], g->stream), "cudaEventRecord");
    }
    g->enqueue_us = (progress_now() - t0) * 1e6 / nb;
    RG_CHECK(g, cudaEventSynchronize(g->ev[2 * nb - 1]), "running the timed launches");
    for (int i = 0; i < nb; i++) {
        float ms = 0;
        RG_CHECK(g, cudaEventElapsedTime(&ms, g->ev[2 * i], g->ev[2 * i + 1]),
                 "cudaEventElapsedTime");
        out[i] = ms * 1e3;
    }
    return 0;
}

static int rg_samples_room(measure_gpu *g, int n)
{
    if (n <= g->samples_cap)
        return 0;
    double *p = realloc(g->samples, (size_t)n * sizeof *p);
    if (!p) {
        snprintf(g->err, sizeof g->err, "out of host memory for %d timing samples", n);
        return -1;
    }
    g->samples = p;
    g->samples_cap = n;
    return 0;
}

/* Samples configs in[0..k) until each one's stop rule (stats.h) says so, in
 * rounds of one block per config still sampling: with k > 1 they are all
 * timed over the same stretch of time. Each config is charged the wall time
 * of its own blocks (flushes, spin and statistics included: what the budget
 * is spent on), as a task of its own would be. n[i] < 0: config i is not
 * timed; others start at n[i] = 0 with est[i] the warm-up's time per launch.
 * Fills recs[i].time, n[i], and *timed_s with the summed sample time.
 * Returns 0, or -1 after a failure (g->err), with *failed the config whose
 * block failed (-1 when none did). */
static int rg_rounds(measure_gpu *g, const space_measure *m, const fa_instance *const *in, int k,
                     int cold, double *est, int *n, record *recs, double *timed_s, int *failed)
{
    *failed = -1;
    if (m->max_samples > INT_MAX / k) {
        snprintf(g->err, sizeof g->err, "max_samples %d is too large for %d configs",
                 m->max_samples, k);
        return -1;
    }
    if (rg_samples_room(g, k * m->max_samples))
        return -1;
    stats_stop stop[TASK_MAX_CONFIGS];
    double spent[TASK_MAX_CONFIGS];
    int going = 0;
    for (int i = 0; i < k; i++) {
        stop[i] = STATS_CONTINUE;
        spent[i] = 0;
        going += n[i] >= 0;
    }
    double sum = 0;
    int flushes = 0; /* a different flush byte for every sample of the task */
    while (going > 0) {
        going = 0;
        for (int i = 0; i < k; i++) {
            if (n[i] < 0 || stop[i] != STATS_CONTINUE)
                continue;
            double *s = g->samples + (size_t)i * (size_t)m->max_samples;
            const int nb =
                stats_block_size(est[i], m->max_seconds, m->max_samples - n[i], MEASURE_BLOCK_MAX);
            const double tb = progress_now();
            if (rg_block(g, in[i], cold, nb, flushes, s + n[i])) {
                *failed = i;
                return -1;
            }
            flushes += nb;
            for (int j = 0; j < nb; j++)
                sum += s[n[i] + j];
            n[i] += nb;
            est[i] = (progress_now() - tb) * 1e6 / nb;
            stats_timing_of(s, n[i], &recs[i].time); /* sorts; sample order does not matter */
            spent[i] += progress_now() - tb;
            stop[i] = stats_stop_rule(m, n[i], recs[i].time.noise, spent[i]);
            going += stop[i] == STATS_CONTINUE;
        }
    }
    *timed_s = sum * 1e-6;
    return 0;
}

/* ---- clock64 -------------------------------------------------------------------------------- */

static int rg_clock_room(measure_gpu *g, size_t entries)
{
    if (entries <= g->clock_cap)
        return 0;
    (void)cudaFree(g->d_clock); /* being replaced; see rg_free_problem */
    g->d_clock = NULL;
    g->clock_cap = 0;
    free(g->h_clock);
    g->h_clock = malloc(entries * sizeof *g->h_clock);
    if (!g->h_clock) {
        snprintf(g->err, sizeof g->err, "out of host memory for %zu clock64 entries", entries);
        return -1;
    }
    RG_CHECK(g, cudaMalloc((void **)&g->d_clock, entries * sizeof *g->d_clock),
             "cudaMalloc(clock64 buffer)");
    g->clock_cap = entries;
    return 0;
}

/* One instrumented launch (not timed): cycles per CTA, waves, balance. */
static int rg_clock(measure_gpu *g, const fa_instance *in, const fa_attrs *at, int cold, record *r)
{
    const long ctas = fa_grid_ctas(&in->cfg, &g->args);
    const double slots = (double)g->info.sm_count * at->max_blocks_per_sm;
    r->waves = slots > 0 ? (double)ctas / slots : NAN;
    if (ctas < 1)
        return 0;
    const size_t entries = 3 * (size_t)ctas;
    if (rg_clock_room(g, entries))
        return -1;
    RG_CHECK(g, cudaMemsetAsync(g->d_clock, 0, entries * sizeof *g->d_clock, g->stream),
             "clearing the clock64 buffer");
    if (cold)
        RG_CHECK(g, cudaMemsetAsync(g->flush, 0x5a, g->flush_bytes, g->stream),
                 "flushing L2 (cold mode)");
    fa_args a = g->args;
    a.cta_clock = g->d_clock;
    RG_CHECK(g, in->launch(&a, g->stream), "launching the kernel (clock64)");
    RG_CHECK(g, cudaStreamSynchronize(g->stream), "running the kernel (clock64)");
    RG_CHECK(
        g, cudaMemcpy(g->h_clock, g->d_clock, entries * sizeof *g->h_clock, cudaMemcpyDeviceToHost),
        "copying the clock64 buffer back");
    stats_clock c;
    /* Implausible data (an unwritten entry) leaves NaNs: unknown, not a failure. */
    (void)stats_cta_clock(g->h_clock, ctas, g->info.sm_count, at->max_blocks_per_sm, &c);
    r->cta_cycles_mean = c.cta_mean;
    r->cta_cycles_max = c.cta_max;
    r->sm_imbalance = c.sm_imbalance;
    return 0;
}

/* ---- one task ------------------------------------------------------------------------------- */

static void rg_resources(record *r, const fa_attrs *at)
{
    r->regs = at->regs;
    r->smem_static = at->smem_static;
    r->smem_dynamic = at->smem_dynamic;
    r->local_bytes = at->local_bytes;
    r->max_blocks_per_sm = at->max_blocks_per_sm;
}

static void rg_not_compiled(const measure_gpu *g, record *r)
{
    snprintf(r->error, sizeof r->error,
             "config %s is not compiled into this binary (build %s); rebuild with a SPACES "
             "list that includes its space",
             r->config, g->info.build);
}

/* The problem's inputs and reference (made once per problem), then the
 * STARTED callback. Returns 0, or -1 after a CUDA failure (g->err). */
static int rg_setup(measure_gpu *g, const task *t, void (*started)(void *ctx), void *ctx)
{
    if (rg_setup_problem(g, &t->problem)) {
        char prob[48], what[96];
        space_problem_format(&t->problem, prob, sizeof prob);
        snprintf(what, sizeof what, "setting up problem %s: ", prob);
        rg_prefix(g, what);
        return -1;
    }
    if (started)
        started(ctx);
    return 0;
}

/* Resources and the correctness gate of `in`. Returns 1 when it is ready
 * to time, 0 when r->status says why not (wrong, or crashed for a reason
 * that is not a CUDA error), -1 after a CUDA failure (g->err). */
static int rg_ready(measure_gpu *g, const task *t, const fa_instance *in, task_inject inject,
                    record *r, fa_attrs *at)
{
    RG_CHECK(g, fa_instance_attrs(in, at), "fa_instance_attrs");
    rg_resources(r, at);
    if (at->max_blocks_per_sm < 1) {
        snprintf(r->error, sizeof r->error,
                 "cannot run on this GPU: no CTA fits on an SM (%ld B dynamic shared memory, %d "
                 "registers x %d threads)",
                 at->smem_dynamic, at->regs, fa_threads(&in->cfg));
        return 0;
    }
    stats_errors e;
    if (rg_gate(g, in, inject, &e))
        return -1;
    r->rel_l2 = e.rel_l2;
    r->max_abs = e.max_abs;
    if (stats_gate(&e, &t->tol, r->error, sizeof r->error)) {
        r->status = RECORD_ST_WRONG;
        return 0;
    }
    return 1;
}

/* After the samples: the clocks read right after them, one clock64
 * launch, throughput; the record is ok. Returns 0 or -1 (CUDA failure). */
static int rg_finish(measure_gpu *g, const task *t, const fa_instance *in, const fa_attrs *at,
                     int cold, const nvml_clocks *ck, record *r)
{
    r->sm_clock_mhz = ck->sm_mhz;
    r->mem_clock_mhz = ck->mem_mhz;
    r->throttle_reasons = ck->reasons;
    r->throttled = ck->throttled;
    if (rg_clock(g, in, at, cold, r))
        return -1;
    const double sec = r->time.median_us * 1e-6;
    r->tflops = sec > 0 ? space_problem_flops(&t->problem) / sec * 1e-12 : 0;
    r->gbps = sec > 0 ? space_problem_bytes(&t->problem) / sec * 1e-9 : 0;
    r->status = RECORD_ST_OK;
    return 0;
}

/* In a head-to-head, names the config a CUDA failure happened on (r's) in
 * front of g->err; a task of one config leaves the text as it is. */
static void rg_blame(measure_gpu *g, const task *t, const record *r)
{
    if (t->n_configs == 1)
        return;
    char what[96];
    snprintf(what, sizeof what, "head-to-head stopped at %s: ", r->config);
    rg_prefix(g, what);
}

/* The task proper: each of its configs gated and warmed up, then all that
 * passed timed together (rg_rounds). Returns 0 with each record's status
 * set (ok, wrong, or crashed for reasons that are not CUDA errors), or -1
 * after a CUDA failure (g->err). */
static int rg_task(measure_gpu *g, const task *t, record *recs, double *timed_s,
                   void (*started)(void *ctx), void *ctx)
{
    const int k = t->n_configs;
    const fa_instance *in[TASK_MAX_CONFIGS];
    fa_attrs at[TASK_MAX_CONFIGS];
    double est[TASK_MAX_CONFIGS] = {0};
    int n[TASK_MAX_CONFIGS], compiled = 0, timed = 0;
    for (int i = 0; i < k; i++) {
        in[i] = fa_registry_find(&t->configs[i]);
        if (!in[i])
            rg_not_compiled(g, &recs[i]);
        compiled += in[i] != NULL;
    }
    if (compiled == 0) /* nothing to run: no problem set up, no STARTED */
        return 0;
    if (rg_setup(g, t, started, ctx))
        return -1;
    for (int i = 0; i < k; i++) {
        n[i] = -1;
        if (!in[i])
            continue;
        const task_inject inj = t->inject[i];
        const int ready = rg_ready(g, t, in[i], inj, &recs[i], &at[i]);
        if (ready < 0 || (ready && rg_warmup(g, in[i], t->measure.warmup_runs, &est[i]))) {
            rg_blame(g, t, &recs[i]);
            return -1;
        }
        if (ready)
            n[i] = 0;
        timed += ready;
    }
    if (timed == 0)
        return 0;
    const int cold = strcmp(t->mode, "cold") == 0;
    int failed;
    if (rg_rounds(g, &t->measure, in, k, cold, est, n, recs, timed_s, &failed)) {
        if (failed >= 0)
            rg_blame(g, t, &recs[failed]);
        return -1;
    }
    nvml_clocks ck;
    nvml_read(&g->nvml, &ck);
    for (int i = 0; i < k; i++)
        if (n[i] >= 0 && rg_finish(g, t, in[i], &at[i], cold, &ck, &recs[i])) {
            rg_blame(g, t, &recs[i]);
            return -1;
        }
    return 0;
}

int measure_task(measure_gpu *g, const task *t, record *recs, double *timed_s,
                 void (*started)(void *ctx), void *ctx)
{
    *timed_s = 0;
    g->err[0] = '\0';
    const int k = t->n_configs;
    for (int i = 0; i < k; i++)
        task_record_init(&recs[i], &g->info, &t->problem, &t->configs[i], t->mode);
    if (rg_task(g, t, recs, timed_s, started, ctx) == 0)
        return 0;
    /* A CUDA failure: every config not finished is crashed with its text. */
    for (int i = 0; i < k; i++)
        if (recs[i].status == RECORD_ST_CRASHED && !recs[i].error[0])
            rg_copy(recs[i].error, sizeof recs[i].error, g->err);
    /* A failed problem setup may have left half its buffers: start over. */
    if (!g->have_problem)
        rg_free_problem(g);
    return rg_healthy() ? 0 : -1;
}
