/* fa_bench.c - the kernel's own tiny benchmark: every compiled instance of
 * the problem's head dim, hot and cold L2, median of per-launch CUDA event
 * times. Independent of the sweep engine on purpose (a second opinion on
 * its numbers), and the quickest way to try a kernel change.
 *
 * usage: fa_bench B H S D [causal] [--reps N] [--top K] [--only CONFIG]
 * Prints the K fastest by hot median: config, hot µs, cold µs, TFLOPS,
 * registers, local (spill) bytes and CTAs per SM of each, and
 * the clock64 view of the fastest: mean and max CTA cycles against the
 * kernel's own time. --only CONFIG times one instance (for a profiler).
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

/* One instrumented launch: how long CTAs ran, against the kernel's time. */
static void print_cta_clock(const fa_instance *in, const fa_args *a0, int khz)
{
    fa_args a = *a0;
    const long ctas = fa_instance_grid_ctas(in, &a);
    unsigned long long *d, *h = malloc(sizeof *h * 3 * (size_t)ctas);
    CHECK_CUDA(cudaMalloc((void **)&d, sizeof *d * 3 * (size_t)ctas));
    a.cta_clock = d;
    CHECK_CUDA((cudaError_t)in->launch(&a, NULL));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(h, d, sizeof *h * 3 * (size_t)ctas, cudaMemcpyDeviceToHost));
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
    cudaFree(d);
    free(h);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: fa_bench B H S D [causal] [--reps N] [--top K]\n");
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
    const char *only = NULL;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "causal"))
            a.causal = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--top") && i + 1 < argc)
            top = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
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
    const long long spin = (long long)khz * 150; /* 150 µs: BATCH launches' host time */
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
    free(rows);
    free(h);
    return 0;
}
