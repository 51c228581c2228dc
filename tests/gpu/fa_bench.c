/* fa_bench.c - the kernel's own tiny benchmark: every compiled instance of
 * the problem's head dim, hot and cold L2, median of per-launch CUDA event
 * times. Independent of the sweep engine on purpose (a second opinion on
 * its numbers), and the quickest way to try a kernel change.
 *
 * usage: fa_bench B H S D [causal] [--reps N] [--top K] [--only CONFIG] [--timeline PATH]
 * Prints the K fastest by hot median: config, hot µs, cold µs, TFLOPS,
 * registers, local (spill) bytes and CTAs per SM of each, and
 * the clock64 view of the fastest: mean and max CTA cycles against the
 * kernel's own time. --only CONFIG times one instance (for a profiler).
 * --timeline PATH: where the fastest's time goes on each SM (print_timeline).
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fa_launch.h"
#include "kernels/ref_cpu.h"

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "fa_bench: %s failed: %s\n", #call, cudaGetErrorString(e_));           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct bench_row {
    const fa_instance *in;
    double hot_us, cold_us;
} bench_row;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_row(const void *a, const void *b)
{
    return cmp_double(&((const bench_row *)a)->hot_us, &((const bench_row *)b)->hot_us);
}

/* Median of `reps` per-launch event timings. Hot: batches of BATCH launches
 * queued behind a spin kernel, an event between each, so the GPU runs them
 * back to back and no host time is counted. Cold: L2 flushed by a memset
 * before each launch, outside its events (the memset also hides the host). */
#define BATCH 16
static double time_instance(const fa_instance *in, const fa_args *a, int reps, void *flush,
                            size_t flush_bytes, long long spin_cycles)
{
    cudaEvent_t ev[BATCH + 1];
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i <= BATCH; i++)
        CHECK_CUDA(cudaEventCreate(&ev[i]));
    for (int w = 0; w < 3; w++)
        CHECK_CUDA((cudaError_t)in->launch(a, NULL));
    for (int r = 0; r < reps;) {
        int nb = 0;
        if (flush) {
            CHECK_CUDA(cudaMemsetAsync(flush, r & 0xff, flush_bytes, NULL));
            CHECK_CUDA(cudaEventRecord(ev[0], NULL));
            CHECK_CUDA((cudaError_t)in->launch(a, NULL));
            CHECK_CUDA(cudaEventRecord(ev[1], NULL));
            nb = 1;
        } else {
            CHECK_CUDA((cudaError_t)fa_spin_launch(spin_cycles, NULL, NULL));
            CHECK_CUDA(cudaEventRecord(ev[0], NULL));
            for (nb = 0; nb < BATCH && r + nb < reps; nb++) {
                CHECK_CUDA((cudaError_t)in->launch(a, NULL));
                CHECK_CUDA(cudaEventRecord(ev[nb + 1], NULL));
            }
        }
        CHECK_CUDA(cudaEventSynchronize(ev[nb]));
        for (int i = 0; i < nb; i++) {
            float ms;
            CHECK_CUDA(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            t[r++] = ms * 1e3;
        }
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    const double med = t[reps / 2];
    free(t);
    for (int i = 0; i <= BATCH; i++)
        cudaEventDestroy(ev[i]);
    return med;
}

/* One launch with its tile records (fa_args.cta_clock: 3 per tile, *tiles of them,
 * zeroed first), queued behind an uninstrumented launch where `behind` is set; *ms
 * gets its event time. Returns the records (the caller frees them). */
static unsigned long long *tile_records(const fa_instance *in, const fa_args *a0, int behind,
                                        long *tiles, float *ms)
{
    fa_args a = *a0;
    *tiles = fa_instance_grid_ctas(in, &a);
    const size_t bytes = sizeof(unsigned long long) * 3 * (size_t)*tiles;
    unsigned long long *d, *h = malloc(bytes);
    CHECK_CUDA(cudaMalloc((void **)&d, bytes));
    CHECK_CUDA(cudaMemset(d, 0, bytes));
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    if (behind)
        CHECK_CUDA((cudaError_t)in->launch(&a, NULL));
    a.cta_clock = d;
    CHECK_CUDA(cudaEventRecord(e0, NULL));
    CHECK_CUDA((cudaError_t)in->launch(&a, NULL));
    CHECK_CUDA(cudaEventRecord(e1, NULL));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaEventElapsedTime(ms, e0, e1));
    CHECK_CUDA(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    cudaFree(d);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return h;
}

/* One instrumented launch: how long CTAs ran, against the kernel's time. */
static void print_cta_clock(const fa_instance *in, const fa_args *a, int khz)
{
    long ctas;
    float ms;
    unsigned long long *h = tile_records(in, a, 0, &ctas, &ms);
    double sum = 0, mx = 0;
    for (long i = 0; i < ctas; i++) {
        const double c = (double)(h[3 * i + 1] - h[3 * i]);
        sum += c;
        mx = c > mx ? c : mx;
    }
    /* Cycles to µs at the device's maximum clock: under load the H100 ran
     * at ~1.80 GHz, not its 1.98 GHz maximum (ncu), so these are lower bounds. */
    printf("clock64 %s: %ld CTAs, mean %.0f cycles (%.2f us), max %.0f cycles (%.2f us) "
           "at the %d MHz max clock\n",
           in->name, ctas, sum / ctas, sum / ctas / khz * 1e3, mx, mx / khz * 1e3, khz / 1000);
    free(h);
}

/* --timeline: one launch queued behind an uninstrumented one (as in a hot
 * block), each tile's start and end on the GPU's nanosecond timer: needs a
 * build with NVEXTRA=-DFA_CTA_CLOCK_NS=1 (kernels/fa_device.cuh; in another
 * build the records are SM cycles, which do not line up across SMs:
 * fa_cta_clock_ns says which, and this says so). Per SM: how long before its first tile began
 * (head), after its last tile ended (tail) and between its tiles (gaps), against the span from the
 * first tile's start to the last one's end; the same launch's event time beside it. Where PATH is
 * not "-" every tile is written there as CSV (tile,start_ns,end_ns,sm). */
static int cmp_u64_pair(const void *a, const void *b)
{
    const unsigned long long *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void print_timeline(const fa_instance *in, const fa_args *a, const char *path)
{
    if (!fa_cta_clock_ns()) {
        printf("timeline %s: not in this build (its tile records are SM cycles; build with "
               "NVEXTRA=-DFA_CTA_CLOCK_NS=1)\n",
               in->name);
        return;
    }
    long tiles;
    float ms;
    unsigned long long *h = tile_records(in, a, 1, &tiles, &ms);
    unsigned long long t0 = ~0ULL, t1 = 0;
    int sms = 0;
    for (long i = 0; i < tiles; i++) {
        t0 = h[3 * i] < t0 ? h[3 * i] : t0;
        t1 = h[3 * i + 1] > t1 ? h[3 * i + 1] : t1;
        sms = (int)h[3 * i + 2] + 1 > sms ? (int)h[3 * i + 2] + 1 : sms;
    }
    if (t1 <= t0 || sms > 4096) { /* a kernel that wrote no records */
        printf("timeline %s: the launch left no tile records\n", in->name);
        free(h);
        return;
    }
    FILE *f = NULL;
    if (strcmp(path, "-") && !(f = fopen(path, "w")))
        fprintf(stderr, "fa_bench: --timeline %s: cannot write it; the summary only\n", path);
    if (f) {
        fprintf(f, "tile,start_ns,end_ns,sm\n");
        for (long i = 0; i < tiles; i++)
            fprintf(f, "%ld,%llu,%llu,%llu\n", i, h[3 * i] - t0, h[3 * i + 1] - t0, h[3 * i + 2]);
        fclose(f);
    }
    /* per SM: its tiles' intervals in start order, overlaps merged (CTAs of one-tile
     * kernels share an SM) */
    unsigned long long *iv = malloc(sizeof *iv * 2 * (size_t)tiles);
    double head = 0, tail = 0, gaps = 0, busy = 0, tail_max = 0, head_max = 0;
    int used = 0, tiles_min = 1 << 30, tiles_max = 0;
    for (int sm = 0; sm < sms; sm++) {
        int n = 0;
        for (long i = 0; i < tiles; i++)
            if ((int)h[3 * i + 2] == sm) {
                iv[2 * n] = h[3 * i] - t0;
                iv[2 * n + 1] = h[3 * i + 1] - t0;
                n++;
            }
        if (n == 0)
            continue;
        used++;
        tiles_min = n < tiles_min ? n : tiles_min;
        tiles_max = n > tiles_max ? n : tiles_max;
        qsort(iv, (size_t)n, 2 * sizeof *iv, cmp_u64_pair);
        unsigned long long end = iv[1], covered = iv[1] - iv[0];
        double g = 0;
        for (int k = 1; k < n; k++) {
            if (iv[2 * k] > end) {
                g += (double)(iv[2 * k] - end);
                covered += iv[2 * k + 1] - iv[2 * k];
                end = iv[2 * k + 1];
            } else if (iv[2 * k + 1] > end) {
                covered += iv[2 * k + 1] - end;
                end = iv[2 * k + 1];
            }
        }
        const double hd = (double)iv[0], tl = (double)(t1 - t0 - end);
        head += hd;
        tail += tl;
        gaps += g;
        busy += (double)covered;
        head_max = hd > head_max ? hd : head_max;
        tail_max = tl > tail_max ? tl : tail_max;
    }
    free(iv);
    free(h);
    const double span = (double)(t1 - t0);
    printf("timeline %s: %ld tiles on %d SMs (%d-%d each); event %.2f us, tiles' span %.2f us; "
           "per SM mean: busy %.2f us, head %.2f (max %.2f), gaps %.2f, tail %.2f (max %.2f) "
           "us\n",
           in->name, tiles, used, tiles_min, tiles_max, ms * 1e3, span / 1e3, busy / used / 1e3,
           head / used / 1e3, head_max / 1e3, gaps / used / 1e3, tail / used / 1e3, tail_max / 1e3);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: fa_bench B H S D [causal] [--reps N] [--top K] [--only CONFIG] "
                        "[--timeline PATH]\n");
        return 2;
    }
    fa_args a = {0};
    a.batch = atoi(argv[1]);
    a.heads = atoi(argv[2]);
    a.seq_len = atoi(argv[3]);
    a.head_dim = atoi(argv[4]);
    a.kv_heads = a.heads; /* fp16 multi-head attention (the default problem) */
    a.dtype = FA_DTYPE_FP16;
    int reps = 50, top = 10;
    const char *only = NULL, *timeline = NULL;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "causal"))
            a.causal = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--top") && i + 1 < argc)
            top = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--timeline") && i + 1 < argc)
            timeline = argv[++i];
    }
    a.softmax_scale = (float)(1.0 / sqrt((double)a.head_dim));
    const size_t n = (size_t)a.batch * a.heads * a.seq_len * a.head_dim;
    uint16_t *h = malloc(n * 2);
    uint64_t s = 88172645463325252ULL ^ (uint64_t)(uintptr_t)&s;
    for (size_t i = 0; i < n; i++) { /* xorshift: random, never zeros */
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        h[i] = ref_float_to_half((float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1));
    }
    CHECK_CUDA(cudaMalloc((void **)&a.q, n * 2));
    CHECK_CUDA(cudaMalloc((void **)&a.k, n * 2));
    CHECK_CUDA(cudaMalloc((void **)&a.v, n * 2));
    CHECK_CUDA(cudaMalloc(&a.o, n * 2));
    CHECK_CUDA(cudaMemcpy((void *)a.q, h, n * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy((void *)a.k, h, n * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy((void *)a.v, h, n * 2, cudaMemcpyHostToDevice));
    struct cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    const size_t flush_bytes = 2 * (size_t)prop.l2CacheSize;
    void *flush;
    CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
    int khz = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    /* 150 ms ahead of each batch (the clock rate is in kHz: cycles per ms). The BATCH
     * launches' host time needs far less (1 ms gave the same hot medians), but with 1 ms the
     * cold medians of 4,16,2048,128 right after its hot batches read 214 and 221 µs against
     * 210 and 211 (lent H200, kernels/NOTES-perf.md, twenty-sixth session): presumably the
     * GPU, nearly idle under a one-thread spin, stays off its power limit between batches. */
    const long long spin = (long long)khz * 150;
    bench_row *rows = calloc((size_t)fa_registry_count(), sizeof *rows);
    int nr = 0;
    for (int i = 0; i < fa_registry_count(); i++) {
        const fa_instance *in = fa_registry_get(i);
        if (in->cfg.head_dim != a.head_dim || in->cfg.dtype != a.dtype ||
            (only && strcmp(in->name, only)))
            continue;
        rows[nr].in = in;
        rows[nr].hot_us = time_instance(in, &a, reps, NULL, 0, spin);
        rows[nr].cold_us = time_instance(in, &a, reps, flush, flush_bytes, spin);
        nr++;
    }
    qsort(rows, (size_t)nr, sizeof *rows, cmp_row);
    const double flops = 4.0 * a.batch * a.heads * (double)a.seq_len * a.seq_len * a.head_dim *
                         (a.causal ? 0.5 : 1.0);
    printf("fa_bench %s b%d.h%d.s%d.d%d causal=%d (%d instances)\n", prop.name, a.batch, a.heads,
           a.seq_len, a.head_dim, a.causal, nr);
    printf("%-24s %9s %9s %8s %5s %6s %6s\n", "config", "hot_us", "cold_us", "TFLOPS", "regs",
           "spill", "ctas/sm");
    for (int i = 0; i < nr && i < top; i++) {
        fa_attrs at;
        CHECK_CUDA((cudaError_t)fa_instance_attrs(rows[i].in, &at));
        printf("%-24s %9.2f %9.2f %8.1f %5d %6d %6d\n", rows[i].in->name, rows[i].hot_us,
               rows[i].cold_us, flops / rows[i].hot_us * 1e-6, at.regs, at.local_bytes,
               at.max_blocks_per_sm);
    }
    if (nr > 0)
        print_cta_clock(rows[0].in, &a, khz);
    if (nr > 0 && timeline)
        print_timeline(rows[0].in, &a, timeline);
    free(rows);
    free(h);
    return 0;
}
