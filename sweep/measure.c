/* measure.c - one task on the GPU: inputs and reference, the correctness
 * gate, timed blocks with their clocks, NVML, clock64 (contract: measure.h).
 *
 * Every CUDA call goes through MS_CHECK, which turns a failure into the
 * text "what: cudaErrorName: description" in g->err and returns -1; the
 * caller marks the records crashed with that text and then asks whether
 * the context survived (ms_healthy), which decides if the worker goes on.
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
#include "../kernels/family.h"
#include "../store/text.h"
#include "cudaerr.h"
#include "guard.h"
#include "nvml.h"
#include "progress.h"
#include "stats.h"
#include "variant.h"

/* Timed samples queued between two synchronisations (events are reused):
 * the guard's block, whose launches it prepares and checks. */
#define MEASURE_BLOCK_MAX GUARD_BLOCK_MAX
/* The spin kernel ahead of a block must outlast the host queuing the block
 * (stats_spin_us); before the first block is measured, assume this much host
 * time per launch (event, launch, event, and in cold mode a memset). */
#define MEASURE_ENQUEUE_GUESS_US 10.0
/* The clock probe right after a block: long enough that %globaltimer's
 * granularity is a small part of it (a 20 us probe read 1.5 % high on the
 * H100). */
#define MEASURE_PROBE_US 40.0
/* CTAs per SM of the calibration load. */
#define MEASURE_LOAD_CTAS_PER_SM 4
/* The flush buffer when a GPU reports no L2 size. */
#define MEASURE_FLUSH_FALLBACK_BYTES ((size_t)128 << 20)
/* FASWEEP_TRACE's events of a block (ms_block): before the spin, before each sample's flips
 * and after them, after the clock probe and after the check. */
#define MS_TEV_SPIN 0
#define MS_TEV_FLIPS(i) (1 + 2 * (i))
#define MS_TEV_FLIPPED(i) (2 + 2 * (i))
#define MS_TEV_PROBE (1 + 2 * MEASURE_BLOCK_MAX)
#define MS_TEV_CHECK (2 + 2 * MEASURE_BLOCK_MAX)
#define MS_TEV_N (3 + 2 * MEASURE_BLOCK_MAX)
/* Problems whose inputs and references a worker keeps (ms_guard_for): a worker that comes
 * back to one (the several-GPU dispatcher moves workers between problems; one worker's
 * rounds visit them in turn) sets nothing up again. A space of more problems still sets
 * each up once per visit. */
#define MEASURE_PROBLEMS_KEPT 4

struct measure_gpu {
    int device; /* the CUDA ordinal (measure_open's `ordinal`) */
    task_device info;
    cudaStream_t stream;
    cudaEvent_t ev[2 * MEASURE_BLOCK_MAX];
    int n_ev;
    /* FASWEEP_TRACE only: events between a block's GPU steps (ms_block_trace), made at the
     * first traced block */
    cudaEvent_t tev[MS_TEV_N];
    int n_tev;
    void *flush; /* cold mode: written before every sample to evict L2 */
    size_t flush_bytes;
    nvml nvml;
    unsigned long long seed;
    stats_peak peak; /* what the GPU can do at most: the floor check */
    /* Mapped host memory the GPU writes and the host reads after a sync:
     * the two clock probes of a block. */
    fa_clock_probe *probe; /* [0] before a block, [1] after it */
    double clock_ref;      /* MHz under the calibration load; 0 not yet, NaN unknown */
    /* The problem's inputs, references, the gate and the checks of the
     * timed launches (guard.h): guard is the current task's, one of the
     * guards[] kept for the last problems this worker met (ms_guard_for). */
    guard *guard;
    guard *guards[MEASURE_PROBLEMS_KEPT];
    unsigned long long guard_used[MEASURE_PROBLEMS_KEPT]; /* when each last served a task */
    unsigned long long tasks, guards_opened;
    unsigned long long *d_clock, *h_clock;
    size_t clock_cap; /* entries of d_clock / h_clock */
    double *samples, *block_mhz;
    int samples_cap, block_mhz_cap;
    double gate_us;    /* event time of the gate launch: the first size estimate */
    double enqueue_us; /* host time to queue one launch, from the last block */
    int round;         /* the round of the last task (task.round; -1 none yet): ms_new_round */
    char err[200];
};

/* A failed CUDA call into g->err (cudaerr.h); -1. */
static int ms_fail(measure_gpu *g, cudaError_t e, const char *what)
{
    return cuda_errf(g->err, sizeof g->err, e, what);
}

#define MS_CHECK(g, call, what) CUDA_TRY((g)->err, call, what)

/* Puts prefix in front of g->err, cutting the end off when too long. */
static void ms_prefix(measure_gpu *g, const char *prefix)
{
    char e[sizeof g->err];
    memcpy(e, g->err, sizeof e);
    text_copy_utf8(g->err, sizeof g->err, prefix);
    const size_t len = strlen(g->err);
    text_copy_utf8(g->err + len, sizeof g->err - len, e);
}

/* Whether the context still works after a failed call: a non-sticky error
 * (bad launch configuration, out of memory) is cleared by reading it; a
 * sticky one (illegal address, trap) fails every later call. */
static int ms_healthy(void)
{
    (void)cudaGetLastError(); /* clears a non-sticky error; its value is known */
    return cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess;
}

/* ---- opening the device ------------------------------------------------------------------- */

static void ms_uuid_text(const cudaUUID_t *u, char *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* FASWEEP_TRACE set: one line on stderr, "TRACE what[ sub]  x ms pid P", for a script
 * to sum by name (several workers write to one stderr). A timed block's parts are such value
 * lines (ms_block), outside the clock of the task's steps (progress_step). */
static void ms_trace_value(const char *what, const char *sub, double ms)
{
    if (!progress_tracing())
        return;
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", what, sub ? " " : "", sub ? sub : "");
    progress_trace_ms(name, ms);
}

static int ms_device_info(measure_gpu *g)
{
    task_device *in = &g->info;
    MS_CHECK(g, cudaSetDevice(g->device), "cudaSetDevice");
    struct cudaDeviceProp prop;
    MS_CHECK(g, cudaGetDeviceProperties(&prop, g->device), "cudaGetDeviceProperties");
    MS_CHECK(g, cudaDeviceGetAttribute(&in->clock_khz, cudaDevAttrClockRate, g->device),
             "cudaDeviceGetAttribute(clock rate)");
    int drv = 0, rt = 0;
    MS_CHECK(g, cudaDriverGetVersion(&drv), "cudaDriverGetVersion");
    MS_CHECK(g, cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    MS_CHECK(g, cudaDeviceGetPCIBusId(in->pci, (int)sizeof in->pci, g->device),
             "cudaDeviceGetPCIBusId");
    text_copy_utf8(in->name, sizeof in->name, prop.name);
    ms_uuid_text(&prop.uuid, in->uuid, sizeof in->uuid);
    in->cc = prop.major * 10 + prop.minor;
    in->sm_count = prop.multiProcessorCount;
    in->l2_bytes = prop.l2CacheSize;
    int mem_khz = 0, bus_bits = 0;
    MS_CHECK(g, cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, g->device),
             "cudaDeviceGetAttribute(memory clock rate)");
    MS_CHECK(g, cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, g->device),
             "cudaDeviceGetAttribute(memory bus width)");
    stats_peak_of(in->cc, in->sm_count, in->clock_khz, mem_khz, bus_bits, in->l2_bytes, &g->peak);
    snprintf(in->runtime, sizeof in->runtime, "%d.%d", rt / 1000, rt % 1000 / 10);
    progress_step("cuda start");
    nvml_open(&g->nvml, in->pci);
    progress_step("nvml open");
    if (g->nvml.driver[0])
        text_copy_utf8(in->driver, sizeof in->driver, g->nvml.driver);
    else
        snprintf(in->driver, sizeof in->driver, "CUDA %d.%d", drv / 1000, drv % 1000 / 10);
    text_copy_utf8(in->build, sizeof in->build, fa_build_id());
    return 0;
}

/* Host memory the GPU writes directly (mapped, UVA): no copy after a sync. */
static int ms_mapped(measure_gpu *g, void **p, size_t bytes, const char *what)
{
    MS_CHECK(g, cudaHostAlloc(p, bytes, cudaHostAllocMapped), what);
    memset(*p, 0, bytes);
    return 0;
}

static int ms_open(measure_gpu *g)
{
    progress_step("worker start");
    if (ms_device_info(g))
        return -1;
    MS_CHECK(g, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
    for (; g->n_ev < 2 * MEASURE_BLOCK_MAX; g->n_ev++)
        MS_CHECK(g, cudaEventCreate(&g->ev[g->n_ev]), "cudaEventCreate");
    g->flush_bytes =
        g->info.l2_bytes > 0 ? 2 * (size_t)g->info.l2_bytes : MEASURE_FLUSH_FALLBACK_BYTES;
    MS_CHECK(g, cudaMalloc(&g->flush, g->flush_bytes), "cudaMalloc(L2 flush buffer)");
    if (ms_mapped(g, (void **)&g->probe, 2 * sizeof *g->probe, "cudaHostAlloc(clock probes)"))
        return -1;
    progress_step("stream, events, buffers");
    progress_step(NULL);
    g->enqueue_us = MEASURE_ENQUEUE_GUESS_US;
    g->round = -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* Fresh inputs every run: a kernel that is right only on one data set
     * should not pass forever. */
    g->seed = ((unsigned long long)ts.tv_sec * 1000000007ULL) ^ (unsigned long long)ts.tv_nsec ^
              ((unsigned long long)getpid() << 32) ^ 0x9E3779B97F4A7C15ULL;
    return 0;
}

/* Closes kept guard i (g->guard too, when it is that one). */
static void ms_guard_close(measure_gpu *g, int i)
{
    if (g->guard == g->guards[i])
        g->guard = NULL;
    guard_close(g->guards[i]);
    g->guards[i] = NULL;
}

/* Gives up every kept problem but the current one (g->guard); returns how many. */
static int ms_guards_drop_others(measure_gpu *g)
{
    int n = 0;
    for (int i = 0; i < MEASURE_PROBLEMS_KEPT; i++)
        if (g->guards[i] && g->guards[i] != g->guard) {
            ms_guard_close(g, i);
            n++;
        }
    return n;
}

/* Makes g->guard one that holds (or, after guard_problem, will hold) problem p: the kept
 * guard that has it, else an unused slot, else the one that served a task longest ago. A
 * new problem's setup always finds at least half the GPU's memory free: below that the
 * other kept problems are given up first (and ms_setup, guard_room's caller give them up
 * and try once more where memory still runs out). Returns 0, or -1 (g->err). */
static int ms_guard_for(measure_gpu *g, const space_problem *p)
{
    int k = -1;
    for (int i = 0; i < MEASURE_PROBLEMS_KEPT && k < 0; i++)
        if (g->guards[i] && guard_holds(g->guards[i], p))
            k = i;
    if (k < 0) {
        k = 0; /* the first unused slot, else the least recently used */
        for (int i = 0; i < MEASURE_PROBLEMS_KEPT; i++) {
            if (!g->guards[i]) {
                k = i;
                break;
            }
            if (g->guard_used[i] < g->guard_used[k])
                k = i;
        }
        size_t free_b = 0, total_b = 0;
        MS_CHECK(g, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        for (int i = 0; free_b < total_b / 2 && i < MEASURE_PROBLEMS_KEPT; i++)
            if (i != k && g->guards[i])
                ms_guard_close(g, i);
        /* each guard its own inputs' seed, also a slot opened again */
        if (!g->guards[k] &&
            !(g->guards[k] = guard_open(g->stream, g->seed + ++g->guards_opened))) {
            snprintf(g->err, sizeof g->err, "out of host memory for the checks");
            return -1;
        }
    }
    g->guard = g->guards[k];
    g->guard_used[k] = ++g->tasks;
    return 0;
}

void measure_close(measure_gpu *g)
{
    if (!g)
        return;
    for (int i = 0; i < MEASURE_PROBLEMS_KEPT; i++)
        guard_close(g->guards[i]);
    (void)cudaFree(g->d_clock);
    free(g->h_clock);
    free(g->samples);
    free(g->block_mhz);
    (void)cudaFree(g->flush);
    (void)cudaFreeHost(g->probe);
    for (int i = 0; i < g->n_ev; i++)
        (void)cudaEventDestroy(g->ev[i]);
    for (int i = 0; i < g->n_tev; i++)
        (void)cudaEventDestroy(g->tev[i]);
    if (g->stream)
        (void)cudaStreamDestroy(g->stream);
    nvml_close(&g->nvml);
    free(g);
}

int measure_open(int device, int ordinal, measure_gpu **out, task_device *info, char *err,
                 size_t errlen)
{
    *out = NULL;
    measure_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of host memory starting the CUDA worker");
        return -1;
    }
    g->device = ordinal;
    if (ms_open(g) != 0) {
        snprintf(err, errlen, "device %d: %s", device, g->err);
        measure_close(g);
        return -1;
    }
    *info = g->info;
    *out = g;
    return 0;
}

/* ---- the clock calibration ---------------------------------------------------------------- */

/* The clock the SMs hold under a sustained tensor load of calibrate_ms: the
 * reference the blocks' clocks are held against (measure.h). Once per
 * worker; NaN when it cannot be measured (then nothing is discarded). */
static int ms_calibrate(measure_gpu *g, const space_measure *m)
{
    if (g->clock_ref != 0)
        return 0;
    g->clock_ref = NAN;
    if (!(m->calibrate_ms > 0) || m->max_discards == 0)
        return 0;
    const int ctas = g->info.sm_count * MEASURE_LOAD_CTAS_PER_SM;
    fa_clock_probe *p = NULL;
    if (ms_mapped(g, (void **)&p, (size_t)ctas * sizeof *p, "cudaHostAlloc(calibration probes)"))
        return -1;
    int rc = 0;
    cudaError_t e = (cudaError_t)fa_load_launch(ctas, m->calibrate_ms, p, g->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->stream);
    if (e != cudaSuccess) {
        rc = ms_fail(g, e, "running the clock calibration load");
    } else {
        int n = 0;
        double *mhz = malloc((size_t)ctas * sizeof *mhz);
        for (int i = 0; mhz && i < ctas; i++) {
            const volatile fa_clock_probe *q = &p[i];
            const double f = stats_probe_mhz(q->c0, q->c1, q->g0, q->g1);
            if (isfinite(f))
                mhz[n++] = f;
        }
        int lo, med, hi;
        stats_clock_summary(mhz, n, &lo, &med, &hi);
        g->clock_ref = med > 0 ? med : NAN;
        free(mhz);
    }
    (void)cudaFreeHost(p);
    return rc;
}

/* ---- the problem and the gate (guard.h) -------------------------------------------------- */

/* Copies the guard's last CUDA failure into g->err: -1. */
static int ms_guard_fail(measure_gpu *g)
{
    text_copy_utf8(g->err, sizeof g->err, guard_err(g->guard));
    return -1;
}

/* The gate of instance `in`: 0 passed, 1 refused (why), -1 CUDA failure
 * (g->err). *e gets the first launch's errors. */
static int ms_gate(measure_gpu *g, const fa_instance *in, task_inject inject,
                   const space_tolerance *tol, stats_errors *e, char *why, size_t n)
{
    const int rc = guard_gate(g->guard, in, inject, tol, e, &g->gate_us, why, n);
    return rc < 0 ? ms_guard_fail(g) : rc;
}

/* ---- clock64 -------------------------------------------------------------------------------- */

static int ms_clock_room(measure_gpu *g, size_t entries)
{
    if (entries <= g->clock_cap)
        return 0;
    (void)cudaFree(g->d_clock); /* being replaced; see ms_free_problem */
    g->d_clock = NULL;
    g->clock_cap = 0;
    free(g->h_clock);
    g->h_clock = malloc(entries * sizeof *g->h_clock);
    if (!g->h_clock) {
        snprintf(g->err, sizeof g->err, "out of host memory for %zu clock64 entries", entries);
        return -1;
    }
    MS_CHECK(g, cudaMalloc((void **)&g->d_clock, entries * sizeof *g->d_clock),
             "cudaMalloc(clock64 buffer)");
    g->clock_cap = entries;
    return 0;
}

/* Arms an instrumented launch of `in` at the problem's shape: *a the guard's arguments with
 * the clock64 buffer cleared and given (a->cta_clock), *ctas the CTAs it records (under 1: no
 * launch to instrument, a->cta_clock stays NULL). 0, or -1 after a CUDA failure. */
static int ms_clock_arm(measure_gpu *g, const fa_instance *in, fa_args *a, long *ctas)
{
    *a = *guard_args(g->guard);
    *ctas = fa_instance_grid_ctas(in, a);
    if (*ctas < 1)
        return 0;
    const size_t entries = 3 * (size_t)*ctas;
    if (ms_clock_room(g, entries))
        return -1;
    MS_CHECK(g, cudaMemsetAsync(g->d_clock, 0, entries * sizeof *g->d_clock, g->stream),
             "clearing the clock64 buffer");
    a->cta_clock = g->d_clock;
    return 0;
}

/* Once the armed launch has run (its stream synchronised): its entries read back and
 * summarised in *c. Implausible data (an unwritten entry) leaves NaNs: unknown, not a
 * failure. 0, or -1 after a CUDA failure. */
static int ms_clock_read(measure_gpu *g, long ctas, const fa_attrs *at, stats_clock *c)
{
    c->cta_mean = c->cta_max = c->waves = c->sm_imbalance = NAN;
    if (ctas < 1)
        return 0;
    const size_t entries = 3 * (size_t)ctas;
    MS_CHECK(
        g, cudaMemcpy(g->h_clock, g->d_clock, entries * sizeof *g->h_clock, cudaMemcpyDeviceToHost),
        "copying the clock64 buffer back");
    (void)stats_cta_clock(g->h_clock, ctas, g->info.sm_count, at->max_blocks_per_sm, c);
    return 0;
}

/* The record's cycles: cycles per CTA, balance (c), and waves from the CTAs and slots. */
static void ms_clock_put(const measure_gpu *g, long ctas, const fa_attrs *at, const stats_clock *c,
                         record *r)
{
    const double slots = (double)g->info.sm_count * at->max_blocks_per_sm;
    r->waves = slots > 0 ? (double)(ctas > 0 ? ctas : 0) / slots : NAN;
    r->cta_cycles_mean = c->cta_mean;
    r->cta_cycles_max = c->cta_max;
    r->sm_imbalance = c->sm_imbalance;
}

/* One instrumented launch of its own (not timed) for a mode's record: after a flush in a
 * flushed mode, so its cycles are that mode's. */
static int ms_cta_clock(measure_gpu *g, const fa_instance *in, const fa_attrs *at,
                        const mode_desc *mode, record *r)
{
    fa_args a;
    long ctas;
    stats_clock c;
    if (ms_clock_arm(g, in, &a, &ctas))
        return -1;
    if (ctas >= 1) {
        if (mode->l2 == MODE_L2_FLUSHED)
            MS_CHECK(g, cudaMemsetAsync(g->flush, 0x5a, g->flush_bytes, g->stream),
                     "flushing L2 (cold mode)");
        MS_CHECK(g, in->launch(&a, g->stream), "launching the kernel (clock64)");
        MS_CHECK(g, cudaStreamSynchronize(g->stream), "running the kernel (clock64)");
    }
    if (ms_clock_read(g, ctas, at, &c))
        return -1;
    ms_clock_put(g, ctas, at, &c, r);
    return 0;
}

/* One config's state while a mode is being sampled. */
typedef struct ms_cfg {
    const fa_instance *in;
    int timed;       /* passed the gate: takes part in the rounds */
    int n;           /* samples kept */
    int launches;    /* per sample */
    double est_us;   /* per launch, for the block size */
    int warmed;      /* its warm-up ran in this task (ms_mode_run) */
    double warm_us;  /* the warm-up's time per launch (ms_warmup) */
    int clock_known; /* its first-round warm-up was instrumented: clock, clock_ctas */
    long clock_ctas;
    stats_clock clock;
    double gpu_min_us; /* its least time per launch in any timed sample so far; 0: none */
    double spent_s;    /* wall time of its blocks (the budget) */
    int nb_max;        /* samples a block may hold (guard_room) */
    int refused;       /* a check after the gate refused it: why */
    char why[256];
    stats_stop stop;
    int blocks, discarded, below;
    int n_mhz;       /* kept blocks whose clock is known */
    double *s, *mhz; /* its samples and those clocks */
} ms_cfg;

/* ---- timed blocks --------------------------------------------------------------------------- */

/* Adds the GPU time from event a to event b, in ms, to *ms (both done: after a
 * synchronisation). Returns 0, or -1 after a CUDA failure. */
static int ms_between(measure_gpu *g, cudaEvent_t a, cudaEvent_t b, double *ms)
{
    float f = 0;
    MS_CHECK(g, cudaEventElapsedTime(&f, a, b), "cudaEventElapsedTime");
    *ms += f;
    return 0;
}

/* Launches before timing, the last with `last`'s arguments where given (an armed clock64
 * launch, ms_clock_arm); *est_us gets their mean time per launch (host gaps included, so an
 * over-estimate: it only makes blocks smaller). */
static int ms_warmup(measure_gpu *g, const fa_instance *in, int runs, const fa_args *last,
                     double *est_us)
{
    *est_us = g->gate_us;
    if (runs <= 0)
        return 0;
    const fa_args *a = guard_args(g->guard);
    MS_CHECK(g, cudaEventRecord(g->ev[0], g->stream), "cudaEventRecord");
    for (int i = 0; i < runs; i++)
        MS_CHECK(g, in->launch(i == runs - 1 && last ? last : a, g->stream),
                 "launching the kernel (warm-up)");
    MS_CHECK(g, cudaEventRecord(g->ev[1], g->stream), "cudaEventRecord");
    MS_CHECK(g, cudaEventSynchronize(g->ev[1]), "running the warm-up launches");
    double ms = 0;
    if (ms_between(g, g->ev[0], g->ev[1], &ms))
        return -1;
    *est_us = ms * 1e3 / runs;
    return 0;
}

/* Whether a mode of task t runs with L2 warm (its record's cycles may come from the warm-up). */
static int ms_task_warm_mode(const task *t)
{
    for (int m = 0; m < t->n_modes; m++) {
        const mode_desc *d = mode_find(t->modes[m]);
        if (d && d->l2 == MODE_L2_WARM)
            return 1;
    }
    return 0;
}

/* The warm-up, `runs` launches; in the first round (where the records get their cycles) and
 * for a task with an L2-warm mode, the last of them instrumented (clock64, x->clock): those
 * modes' records take its cycles instead of a launch of their own after their samples (one
 * launch of a 2.4 ms kernel less per mode). */
static int ms_warmup_clock(measure_gpu *g, const task *t, ms_cfg *x, const fa_attrs *at, int runs)
{
    fa_args armed;
    long ctas = 0;
    const int clock = !t->light && runs >= 1 && ms_task_warm_mode(t);
    if (clock && ms_clock_arm(g, x->in, &armed, &ctas))
        return -1;
    if (ms_warmup(g, x->in, runs, clock && ctas >= 1 ? &armed : NULL, &x->warm_us))
        return -1;
    if (!clock)
        return 0;
    if (ms_clock_read(g, ctas, at, &x->clock))
        return -1;
    x->clock_ctas = ctas;
    x->clock_known = 1;
    return 0;
}

/* A config's warm-up before its first mode of a task: one launch, and then the space's
 * warmup_runs launches again only where that one was shorter than a batch sample
 * (measure.batch_us): the batch count (stats_batch_launches) then comes from as many
 * launches in every round. One launch is enough for a longer kernel because it ran here just
 * before: in the gate (two launches at the problem's shape, the first round) or in the
 * round before (a later round on the worker that gated it). Three launches of every long
 * kernel in the first round were 1.0 of the h100 space's 1.07 s of warm-ups
 * (sweep/NOTES-engine.md, nineteenth session). From one launch, which a config switch makes
 * slower, a short kernel's estimate was smaller in the later rounds than in the first, and
 * batch's rounds of a config differed by that (seventeenth session). x->warm_us as
 * ms_warmup's est_us; the last launch gives the cycles (ms_warmup_clock). */
static int ms_config_warmup(measure_gpu *g, const task *t, ms_cfg *x, const fa_attrs *at)
{
    const int runs = t->measure.warmup_runs;
    if (runs <= 1)
        return ms_warmup_clock(g, t, x, at, runs);
    if (ms_warmup_clock(g, t, x, at, 1))
        return -1;
    return x->warm_us < t->measure.batch_us ? ms_warmup_clock(g, t, x, at, runs) : 0;
}

static long long ms_cycles(const measure_gpu *g, double us)
{
    return (long long)(us * g->info.clock_khz / 1000.0);
}

/* FASWEEP_TRACE set: records trace event k of a block (MS_TEV_*) on the stream, the events
 * made at the first call. Nothing otherwise. Returns 0, or -1 after a CUDA failure. */
static int ms_tev(measure_gpu *g, int k)
{
    if (!progress_tracing())
        return 0;
    for (; g->n_tev < MS_TEV_N; g->n_tev++)
        MS_CHECK(g, cudaEventCreate(&g->tev[g->n_tev]), "cudaEventCreate (trace)");
    MS_CHECK(g, cudaEventRecord(g->tev[k], g->stream), "cudaEventRecord (trace)");
    return 0;
}

/* FASWEEP_TRACE set, after a block of nb samples synchronised: the GPU time of each of its
 * steps besides the timed samples (what makes up a block's wall beyond them). */
static int ms_block_trace(measure_gpu *g, const mode_desc *mode, int nb)
{
    double spin = 0, flips = 0, flush = 0, gaps = 0, probe = 0, check = 0;
    if (ms_between(g, g->tev[MS_TEV_SPIN], g->tev[MS_TEV_FLIPS(0)], &spin) ||
        ms_between(g, g->ev[2 * nb - 1], g->tev[MS_TEV_PROBE], &probe) ||
        ms_between(g, g->tev[MS_TEV_PROBE], g->tev[MS_TEV_CHECK], &check))
        return -1;
    for (int i = 0; i < nb; i++)
        if (ms_between(g, g->tev[MS_TEV_FLIPS(i)], g->tev[MS_TEV_FLIPPED(i)], &flips) ||
            ms_between(g, g->tev[MS_TEV_FLIPPED(i)], g->ev[2 * i], &flush) ||
            (i > 0 && ms_between(g, g->ev[2 * i - 1], g->tev[MS_TEV_FLIPS(i)], &gaps)))
            return -1;
    ms_trace_value("block: gpu spin", mode->name, spin);
    ms_trace_value("block: gpu flips", mode->name, flips);
    ms_trace_value("block: gpu flush", mode->name, flush);
    ms_trace_value("block: gpu gaps", mode->name, gaps);
    ms_trace_value("block: gpu probe", mode->name, probe);
    ms_trace_value("block: gpu check", mode->name, check);
    return 0;
}

/* One block of nb samples, each of `launches` back-to-back launches between
 * one pair of events (1 for hot and cold; cold flushes L2 before each
 * sample, outside its events). Each launch reads inputs no launch read
 * before and writes its own output buffer (guard.h): before each sample
 * its V is flipped apart, after the block every launch's output is
 * checked. A spin kernel ahead holds the stream while the host queues the
 * block, so the GPU runs it without host gaps; it and a short probe after
 * the block measure the SM clock (*mhz: their mean). out[i] gets sample
 * i's time per launch in µs. Returns 0, 1 when a timed launch's output is
 * wrong (why), -1 after a CUDA failure. */
static int ms_block(measure_gpu *g, const fa_instance *in, const mode_desc *mode,
                    const space_tolerance *tol, int nb, int launches, double gpu_min_us, int base,
                    double *out, double *mhz, char *why, size_t whylen)
{
    const double t_block = progress_now();
    if (guard_block(g->guard, nb, launches))
        return ms_guard_fail(g);
    const double spin_us = stats_spin_us(g->enqueue_us, nb * launches, gpu_min_us);
    if (ms_tev(g, MS_TEV_SPIN))
        return -1;
    MS_CHECK(g, fa_spin_launch(ms_cycles(g, spin_us), &g->probe[0], g->stream),
             "launching the spin kernel");
    const double t0 = progress_now();
    for (int i = 0; i < nb; i++) {
        if (ms_tev(g, MS_TEV_FLIPS(i)))
            return -1;
        if (guard_sample(g->guard, i))
            return ms_guard_fail(g);
        if (ms_tev(g, MS_TEV_FLIPPED(i)))
            return -1;
        if (mode->l2 == MODE_L2_FLUSHED) /* a different byte each time: no write can be elided */
            MS_CHECK(g, cudaMemsetAsync(g->flush, (base + i) & 0xff, g->flush_bytes, g->stream),
                     "flushing L2 (cold mode)");
        MS_CHECK(g, cudaEventRecord(g->ev[2 * i], g->stream), "cudaEventRecord");
        for (int l = 0; l < launches; l++)
            MS_CHECK(g, in->launch(guard_launch_args(g->guard, i, l), g->stream),
                     "launching the kernel (timed)");
        MS_CHECK(g, cudaEventRecord(g->ev[2 * i + 1], g->stream), "cudaEventRecord");
    }
    g->enqueue_us = (progress_now() - t0) * 1e6 / ((double)nb * launches);
    MS_CHECK(g, fa_spin_launch(ms_cycles(g, MEASURE_PROBE_US), &g->probe[1], g->stream),
             "launching the clock probe");
    if (ms_tev(g, MS_TEV_PROBE))
        return -1;
    if (guard_block_check(g->guard))
        return ms_guard_fail(g);
    if (ms_tev(g, MS_TEV_CHECK))
        return -1;
    const double t_sync = progress_now();
    MS_CHECK(g, cudaStreamSynchronize(g->stream), "running the timed launches");
    const double t_done = progress_now();
    double gpu_ms = 0;
    for (int i = 0; i < nb; i++) {
        double ms = 0;
        if (ms_between(g, g->ev[2 * i], g->ev[2 * i + 1], &ms))
            return -1;
        out[i] = ms * 1e3 / launches;
        gpu_ms += ms;
    }
    if (progress_tracing()) { /* where a block's wall goes besides its timed samples */
        const fa_family *f = fa_family_of(&in->cfg);
        const char *fam = f ? f->name : "?";
        ms_trace_value("block: wall", mode->name, (progress_now() - t_block) * 1e3);
        ms_trace_value("block: samples", mode->name, gpu_ms);
        ms_trace_value("block: spin asked", mode->name, spin_us * 1e-3);
        ms_trace_value("block: enqueue", mode->name, g->enqueue_us * nb * launches * 1e-3);
        ms_trace_value("block: sync wait", mode->name, (t_done - t_sync) * 1e3);
        ms_trace_value("enqueue per launch", fam, g->enqueue_us * 1e-3);
        if (ms_block_trace(g, mode, nb))
            return -1;
    }
    const volatile fa_clock_probe *h = &g->probe[0], *t = &g->probe[1];
    *mhz = stats_block_mhz(stats_probe_mhz(h->c0, h->c1, h->g0, h->g1),
                           stats_probe_mhz(t->c0, t->c1, t->g0, t->g1));
    return guard_block_verdict(g->guard, tol, why, whylen);
}

static int ms_room(measure_gpu *g, double **p, int *cap, int n)
{
    if (n <= *cap)
        return 0;
    double *q = realloc(*p, (size_t)n * sizeof *q);
    if (!q) {
        snprintf(g->err, sizeof g->err, "out of host memory for %d timing samples", n);
        return -1;
    }
    *p = q;
    *cap = n;
    return 0;
}

static void ms_sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Samples the configs c[0..k) in one mode until each one's stop rule
 * (stats.h) says so, in rounds of one block per config still sampling: with
 * k > 1 they are all timed over the same stretch of time, and each round
 * starts one config later (round r starts at config r mod k), so each leads
 * a round equally often and none always follows the host's pause. A block
 * whose clock is under the calibrated one by more than the tolerance is
 * discarded and taken again after a pause, at most max_discards times per
 * config; after that its blocks are kept and the record is marked below.
 * Each config is charged the wall time of its own blocks. A config whose
 * timed launches are not all right (guard.h), or, in a head-to-head, that
 * changed the inputs during its block, is refused and stops (x->refused,
 * x->why). Fills recs[i] (the records of this mode) and adds the sample
 * time to *timed_s. Returns 0, or -1 after a failure (g->err) with *failed
 * the config it was on. */
static int ms_rounds(measure_gpu *g, const space_measure *m, const space_tolerance *tol,
                     const mode_desc *mode, ms_cfg *c, int k, record **recs, double *timed_s,
                     int *failed)
{
    *failed = -1;
    const stats_criterion *crit = stats_criterion_find(mode->stop);
    if (!crit) { /* the table names a criterion stats.c lacks (a unit test checks it does not) */
        snprintf(g->err, sizeof g->err, "mode %s names the unknown stopping criterion \"%s\"",
                 mode->name, mode->stop);
        return -1;
    }
    const int per = m->max_samples;
    if (per > INT_MAX / k - MEASURE_BLOCK_MAX ||
        ms_room(g, &g->samples, &g->samples_cap, k * (per + MEASURE_BLOCK_MAX)) ||
        ms_room(g, &g->block_mhz, &g->block_mhz_cap, k * (per + 1)))
        return -1;
    int going = 0;
    for (int i = 0; i < k; i++) {
        c[i].s = g->samples + (size_t)i * (size_t)(per + MEASURE_BLOCK_MAX);
        c[i].mhz = g->block_mhz + (size_t)i * (size_t)(per + 1);
        c[i].n = c[i].blocks = c[i].discarded = c[i].below = c[i].n_mhz = 0;
        c[i].spent_s = 0;
        c[i].stop = STATS_CONTINUE;
        going += c[i].timed;
    }
    int flushes = 0; /* a different flush byte for every sample of the task */
    /* FASWEEP_H2H_ORDER=fixed: every round in task order (a test hook, to
     * show what the rotation removes; docs/measurement.md). */
    const int rotate = !progress_hook("FASWEEP_H2H_ORDER", "fixed");
    for (int round = 0; going > 0; round++) {
        /* In a head-to-head a config whose noise target is met keeps taking
         * a block each round while another still samples (up to its own
         * max_samples and time budget): all are then timed over the same
         * stretch, and a drift of the GPU cannot favour the one that
         * stopped first. */
        const int along = k > 1;
        going = 0;
        for (int j = 0; j < k; j++) {
            const int i = rotate ? (j + round) % k : j;
            ms_cfg *x = &c[i];
            if (!x->timed || !(x->stop == STATS_CONTINUE || (along && x->stop == STATS_CONVERGED)))
                continue;
            const int nb =
                stats_block_size(x->est_us * x->launches, m->max_seconds, per - x->n, x->nb_max);
            const double tb = progress_now();
            double mhz;
            int rc = ms_block(g, x->in, mode, tol, nb, x->launches, x->gpu_min_us, flushes,
                              x->s + x->n, &mhz, x->why, sizeof x->why);
            /* a head-to-head shares the inputs: each block is checked for
             * writes to them, so the config that wrote is the one refused */
            if (rc == 0 && k > 1 && (rc = guard_inputs(g->guard, x->why, sizeof x->why)) < 0)
                ms_guard_fail(g);
            if (rc < 0) {
                *failed = i;
                return -1;
            }
            if (rc > 0) {
                x->refused = 1;
                x->stop = STATS_BUDGET;
                continue;
            }
            flushes += nb;
            for (int t = 0; t < nb; t++) /* the spin's lower bound (stats_spin_us) */
                if (x->s[x->n + t] > 0 && (x->gpu_min_us == 0 || x->s[x->n + t] < x->gpu_min_us))
                    x->gpu_min_us = x->s[x->n + t];
            const double took = progress_now() - tb;
            x->spent_s += took;
            x->est_us = took * 1e6 / ((double)nb * x->launches);
            const int ok = stats_clock_ok(mhz, g->clock_ref, m->clock_tolerance);
            if (progress_tracing() && (!ok || x->discarded > 0))
                fprintf(stderr,
                        "TRACE clock %s %s %.0f MHz ref %.0f, %d discarded, %.1f us pid %d\n",
                        mode->name, ok ? "kept" : "low", mhz, g->clock_ref, x->discarded, x->est_us,
                        (int)getpid());
            if (!ok && x->discarded < m->max_discards) {
                x->discarded++; /* not kept: its samples are overwritten */
                ms_sleep_ms(stats_clock_pause_ms(m->clock_pause_ms, x->discarded));
                going++;
                continue;
            }
            x->below |= !ok;
            x->blocks++;
            if (isfinite(mhz) && x->n_mhz <= per)
                x->mhz[x->n_mhz++] = mhz;
            for (int t = 0; t < nb; t++)
                *timed_s += x->s[x->n + t] * x->launches * 1e-6;
            x->n += nb;
            /* sorts; order does not matter */
            stats_timing_for(mode->uncertainty, x->s, x->n, &recs[i]->time);
            x->stop = crit->stop(m, x->n, recs[i]->time.noise, x->spent_s);
            going += x->stop == STATS_CONTINUE;
        }
    }
    return 0;
}

/* ---- one task ------------------------------------------------------------------------------- */

static void ms_not_compiled(const measure_gpu *g, record *r)
{
    snprintf(r->error, sizeof r->error,
             "config %s is not compiled into this binary (build %s); rebuild with a SPACES "
             "list that includes its space",
             r->config, g->info.build);
}

/* g->err said which problem's setup failed; -1. */
static int ms_setup_failed(measure_gpu *g, const task *t)
{
    char prob[48], what[96];
    space_problem_format(&t->problem, prob, sizeof prob);
    snprintf(what, sizeof what, "setting up problem %s: ", prob);
    ms_prefix(g, what);
    return -1;
}

/* The first task of a round other than the last task's: the stream and the events of the
 * timed launches made anew (the old ones destroyed once the stream is idle). Which of the
 * GPU's hardware queues a stream feeds, and its events, can make every launch of a process
 * a little slower or faster (up to 1 % at a 10 µs kernel: sweep/NOTES-engine.md, seventeenth
 * session); made anew each round, that is a difference between rounds, which the pooled
 * intervals see, not an offset of the whole run, which they cannot. 0, or -1 (g->err). */
static int ms_new_round(measure_gpu *g, int round)
{
    const int first = g->round < 0;
    if (round == g->round)
        return 0;
    g->round = round;
    if (first)
        return 0;
    cudaStream_t s;
    MS_CHECK(g, cudaStreamSynchronize(g->stream), "finishing the last round's work");
    MS_CHECK(g, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags (a new round)");
    (void)cudaStreamDestroy(g->stream); /* idle: nothing of it is lost */
    g->stream = s;
    for (int i = 0; i < MEASURE_PROBLEMS_KEPT; i++)
        if (g->guards[i])
            guard_stream(g->guards[i], s);
    cudaEvent_t ev[2 * MEASURE_BLOCK_MAX]; /* all made before the old ones go */
    for (int i = 0; i < g->n_ev; i++) {
        const cudaError_t e = cudaEventCreate(&ev[i]);
        if (e != cudaSuccess) {
            while (i-- > 0)
                (void)cudaEventDestroy(ev[i]);
            return ms_fail(g, e, "cudaEventCreate (a new round)");
        }
    }
    for (int i = 0; i < g->n_ev; i++) {
        (void)cudaEventDestroy(g->ev[i]);
        g->ev[i] = ev[i];
    }
    progress_step("new round: stream, events");
    return 0;
}

/* The problem's inputs and reference (made once per problem and kept, ms_guard_for); for a
 * task of a new round a new stream and events (ms_new_round) and the problem's timed buffers
 * in a new place (guard_place); then the STARTED callback. Returns 0, or -1 after a CUDA failure
 * (g->err). */
static int ms_setup(measure_gpu *g, const task *t, void (*started)(void *ctx), void *ctx)
{
    if (ms_guard_for(g, &t->problem))
        return ms_setup_failed(g, t);
    /* The other kept problems may hold the memory this one needs: given up, once more. */
    int rc = guard_problem(g->guard, &t->problem);
    if (rc && ms_guards_drop_others(g) > 0)
        rc = guard_problem(g->guard, &t->problem);
    if (rc) {
        ms_guard_fail(g);
        for (int i = 0; i < MEASURE_PROBLEMS_KEPT; i++) /* no half-made problem kept */
            if (g->guards[i] == g->guard)
                ms_guard_close(g, i);
        return ms_setup_failed(g, t);
    }
    /* A new round: a new stream and events, the problem's timed buffers in a new place
     * (FASWEEP_ROUND_PLACE=keep, a measurement hook: every round on the first's) */
    if (!progress_hook("FASWEEP_ROUND_PLACE", "keep")) {
        if (ms_new_round(g, t->round))
            return ms_setup_failed(g, t);
        const int moved = guard_place(g->guard, t->round);
        if (moved < 0) {
            ms_guard_fail(g);
            return ms_setup_failed(g, t);
        }
        if (moved)
            progress_step("timed buffers moved");
    }
    if (started)
        started(ctx);
    return 0;
}

/* Resources and the correctness gate of config i, written into its records
 * of every mode (rec[0..nm)). Returns 1 when it is ready to time, 0 when the
 * records' status says why not (wrong, or crashed for a reason that is not
 * a CUDA error), -1 after a CUDA failure (g->err). */
static int ms_ready(measure_gpu *g, const task *t, const fa_instance *in, task_inject inject,
                    record *rec, int nm, fa_attrs *at)
{
    MS_CHECK(g, fa_instance_attrs(in, at), "fa_instance_attrs");
    progress_step("attrs");
    char why[256] = "";
    record_status st = RECORD_ST_OK;
    stats_errors e = {NAN, NAN, 0, -1, 0};
    if (at->max_blocks_per_sm < 1) {
        st = RECORD_ST_CRASHED;
        snprintf(why, sizeof why,
                 "cannot run on this GPU: no CTA fits on an SM (%ld B dynamic shared memory, %d "
                 "registers x %d threads)",
                 at->smem_dynamic, at->regs, in->threads);
    } else if (!t->light) { /* a light round: this worker gated it on these inputs */
        const int rc = ms_gate(g, in, inject, &t->tol, &e, why, sizeof why);
        if (rc < 0)
            return -1;
        if (rc > 0)
            st = RECORD_ST_WRONG;
    }
    for (int m = 0; m < nm; m++) {
        record *r = &rec[m];
        r->regs = at->regs;
        r->smem_static = at->smem_static;
        r->smem_dynamic = at->smem_dynamic;
        r->local_bytes = at->local_bytes;
        r->max_blocks_per_sm = at->max_blocks_per_sm;
        r->rel_l2 = e.rel_l2;
        r->max_abs = e.max_abs;
        if (st != RECORD_ST_OK) {
            r->status = st;
            text_copy_utf8(r->error, sizeof r->error, why);
        }
    }
    return st == RECORD_ST_OK;
}

/* After a mode's samples: the clocks, the cycles (in the first round: an L2-warm mode's from
 * the warm-up's instrumented launch, a flushed mode's from one clock64 launch of its own),
 * throughput; the record is ok, or implausible when its median is under the GPU's physical
 * floor for the problem (stats_floor_check). Returns 0 or -1 (CUDA
 * failure). */
static int ms_finish(measure_gpu *g, const task *t, const ms_cfg *c, const fa_attrs *at,
                     const mode_desc *mode, const nvml_clocks *ck, record *r)
{
    r->sm_clock_mhz = ck->sm_mhz;
    r->mem_clock_mhz = ck->mem_mhz;
    r->throttle_reasons = ck->reasons;
    r->throttled = ck->throttled;
    stats_clock_summary(c->mhz, c->n_mhz, &r->clock.min_mhz, &r->clock.median_mhz,
                        &r->clock.max_mhz);
    r->clock.ref_mhz = isfinite(g->clock_ref) ? (int)lround(g->clock_ref) : -1;
    r->clock.blocks = c->blocks;
    r->clock.discarded = c->discarded;
    r->clock.below = c->below;
    r->time.launches = c->launches;
    if (!t->light && mode->l2 == MODE_L2_WARM && c->clock_known)
        ms_clock_put(g, c->clock_ctas, at, &c->clock, r);
    else if (!t->light && ms_cta_clock(g, c->in, at, mode, r))
        return -1;
    const double sec = r->time.median_us * 1e-6;
    r->tflops = sec > 0 ? space_problem_flops(&t->problem) / sec * 1e-12 : 0;
    r->gbps = sec > 0 ? space_problem_bytes(&t->problem) / sec * 1e-9 : 0;
    r->status = RECORD_ST_OK;
    /* q, k and v: what must be read at least once */
    const double in_bytes = space_problem_input_bytes(&t->problem);
    if (stats_floor_check(&g->peak, space_problem_flops(&t->problem), in_bytes,
                          mode->l2 == MODE_L2_FLUSHED, r->time.median_us, r->error,
                          sizeof r->error))
        r->status = RECORD_ST_IMPLAUSIBLE;
    return 0;
}

/* A config refused after its gate (its timed launches, its writes to the
 * inputs, its timing under the floor) is refused in every mode: the same
 * kernel ran in all of them. Its records that are ok take the status and
 * error of the first that is not. */
static void ms_refuse_all(record *rec, int nm)
{
    const record *bad = NULL;
    for (int m = 0; m < nm && !bad; m++)
        if (rec[m].status == RECORD_ST_WRONG || rec[m].status == RECORD_ST_IMPLAUSIBLE)
            bad = &rec[m];
    for (int m = 0; bad && m < nm; m++) /* ok, or a mode it never reached */
        if (rec[m].status == RECORD_ST_OK ||
            (rec[m].status == RECORD_ST_CRASHED && !rec[m].error[0])) {
            rec[m].status = bad->status;
            text_copy_utf8(rec[m].error, sizeof rec[m].error, bad->error);
        }
}

/* In a task of several configs, names the config a CUDA failure happened
 * on (r's) in front of g->err; a task of one config leaves the text. */
static void ms_blame(measure_gpu *g, const task *t, const record *r)
{
    if (t->n_configs == 1)
        return;
    char what[96];
    snprintf(what, sizeof what, "head-to-head stopped at %s: ", r->config);
    ms_prefix(g, what);
}

/* One mode of the task: warm-up, the rounds, then each timed config's
 * record finished. Returns 0, or -1 after a CUDA failure (g->err). */
static int ms_mode_run(measure_gpu *g, const task *t, int mi, ms_cfg *c, const fa_attrs *at,
                       record *recs, double *timed_s)
{
    const int k = t->n_configs, nm = t->n_modes;
    /* The descriptor says how (store/mode.h); the engine sends only known
     * modes, but a task is raw bytes from a pipe: refuse anything else. */
    const mode_desc *mode = mode_find(t->modes[mi]);
    if (!mode) {
        snprintf(g->err, sizeof g->err, "unknown timing mode \"%.*s\" in the task",
                 (int)sizeof t->modes[mi] - 1, t->modes[mi]);
        return -1;
    }
    record *mrec[TASK_MAX_CONFIGS];
    for (int i = 0; i < k; i++) {
        mrec[i] = &recs[i * nm + mi];
        if (!c[i].timed)
            continue;
        /* Warm-up launches before the config's first mode only: its later
         * modes follow its own timed launches of the mode before, so the
         * GPU already runs it (sweep/NOTES-engine.md, tenth session). Every
         * mode sizes its blocks and batches from that one estimate. */
        if (!c[i].warmed) {
            if (ms_config_warmup(g, t, &c[i], &at[i])) {
                ms_blame(g, t, mrec[i]);
                return -1;
            }
            c[i].warmed = 1;
            progress_step("warmup");
        }
        c[i].est_us = c[i].warm_us;
        c[i].launches = mode->launch == MODE_LAUNCH_BATCH
                            ? stats_batch_launches(c[i].est_us, t->measure.batch_us)
                            : 1;
        /* the output ring and the V pool for its blocks (guard.h); a batch
         * sample may hold fewer launches when memory is short */
        if ((c[i].nb_max = guard_room(g->guard, &c[i].launches)) < 0 &&
            (ms_guards_drop_others(g) == 0 || /* their memory given up, once more */
             (c[i].nb_max = guard_room(g->guard, &c[i].launches)) < 0)) {
            ms_guard_fail(g);
            ms_blame(g, t, mrec[i]);
            return -1;
        }
    }
    int failed;
    progress_step("room");
    if (ms_rounds(g, &t->measure, &t->tol, mode, c, k, mrec, timed_s, &failed)) {
        if (failed >= 0)
            ms_blame(g, t, mrec[failed]);
        return -1;
    }
    progress_step("rounds+inputs");
    nvml_clocks ck;
    nvml_read(&g->nvml, &ck);
    for (int i = 0; i < k; i++) {
        if (c[i].timed && c[i].refused) { /* no more modes: its records say why */
            c[i].timed = 0;
            mrec[i]->status = RECORD_ST_WRONG;
            text_copy_utf8(mrec[i]->error, sizeof mrec[i]->error, c[i].why);
            continue;
        }
        if (c[i].timed && ms_finish(g, t, &c[i], &at[i], mode, &ck, mrec[i])) {
            ms_blame(g, t, mrec[i]);
            return -1;
        }
    }
    return 0;
}

/* The task proper: each config gated once (its modes share the gate), then
 * every mode in turn. Returns 0 with each record's status set (ok, wrong,
 * or crashed for reasons that are not CUDA errors), or -1 after a CUDA
 * failure (g->err). */
static int ms_task(measure_gpu *g, const task *t, record *recs, double *timed_s,
                   void (*started)(void *ctx), void *ctx)
{
    const int k = t->n_configs, nm = t->n_modes;
    ms_cfg c[TASK_MAX_CONFIGS];
    fa_attrs at[TASK_MAX_CONFIGS];
    int compiled = 0, timed = 0;
    memset(c, 0, sizeof c);
    for (int i = 0; i < k; i++) {
        char why[sizeof recs->error] = "";
        c[i].in = t->variant.build[0] ? variant_open(&t->variant, &t->configs[i], why, sizeof why)
                                      : fa_registry_find(&t->configs[i]);
        for (int m = 0; m < nm && !c[i].in; m++) {
            if (why[0])
                text_copy_utf8(recs[i * nm + m].error, sizeof recs->error, why);
            else
                ms_not_compiled(g, &recs[i * nm + m]);
        }
        compiled += c[i].in != NULL;
    }
    if (compiled == 0) /* nothing to run: no problem set up, no STARTED */
        return 0;
    progress_step("task_start");
    if (ms_setup(g, t, started, ctx) || ms_calibrate(g, &t->measure))
        return -1;
    for (int i = 0; i < k; i++) {
        if (!c[i].in)
            continue;
        progress_step("setup+calibrate");
        const int ready = ms_ready(g, t, c[i].in, t->inject[i], &recs[i * nm], nm, &at[i]);
        progress_step("gate");
        if (ready < 0) {
            ms_blame(g, t, &recs[i * nm]);
            return -1;
        }
        c[i].timed = ready;
        timed += ready;
    }
    for (int m = 0; timed && m < nm; m++)
        if (ms_mode_run(g, t, m, c, at, recs, timed_s))
            return -1;
        else
            progress_step(t->modes[m]);
    /* one config: its writes to the inputs are checked once all its modes
     * are timed (a head-to-head checks after every block, ms_rounds) */
    if (k == 1 && timed) {
        char why[sizeof recs->error];
        const int rc = guard_inputs(g->guard, why, sizeof why);
        if (rc < 0)
            return ms_guard_fail(g);
        for (int m = 0; rc > 0 && m < nm; m++) {
            recs[m].status = RECORD_ST_WRONG;
            text_copy_utf8(recs[m].error, sizeof recs[m].error, why);
        }
        progress_step("inputs");
    }
    for (int i = 0; i < k; i++)
        ms_refuse_all(&recs[i * nm], nm);
    return 0;
}

int measure_task(measure_gpu *g, const task *t, record *recs, double *timed_s,
                 void (*started)(void *ctx), void *ctx)
{
    *timed_s = 0;
    g->err[0] = '\0';
    for (int i = 0; i < t->n_configs; i++)
        for (int m = 0; m < t->n_modes; m++) {
            record *r = &recs[i * t->n_modes + m];
            task_record_init(r, &g->info, &t->problem, &t->configs[i], t->modes[m]);
            task_record_variant(r, &t->variant);
        }
    if (ms_task(g, t, recs, timed_s, started, ctx) == 0)
        return 0;
    /* A CUDA failure: every record not finished is crashed with its text. */
    for (int i = 0; i < t->n_configs * t->n_modes; i++)
        if (recs[i].status == RECORD_ST_CRASHED && !recs[i].error[0])
            text_copy_utf8(recs[i].error, sizeof recs[i].error, g->err);
    return ms_healthy() ? 0 : -1;
}
