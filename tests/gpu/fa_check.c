/* fa_check.c - GPU correctness test of every compiled kernel instance.
 *
 * For each shape below: fresh random fp16 Q, K, V (uniform in [-2, 2],
 * never zeros), the fp32 GPU reference computed once (and itself checked
 * against the fp64 CPU reference when the shape is small), then every
 * compiled instance of that head dim, of every family (the registry holds
 * them all: mma, and wgmma when the build holds sm_90a) is launched into an
 * output poisoned with NaN and compared: relative L2 error and max abs error must be within
 * the tolerances, and no element may stay NaN (every output written).
 *
 * usage: fa_check [--quick] [--filter SUBSTR] [--rel-l2 X] [--max-abs X]
 * Every output is also compared by the engine's GPU gate (fa_compare_launch),
 * which must agree with the host comparison.
 * Prints one line per failure, a table of worst errors, and a summary line
 * "N passed, N failed". Exit 0 only when everything passed. An instance of
 * a family that runs on one architecture only (kernels/family.h: arch;
 * wgmma on sm_90a) is skipped on a GPU of another, and the count of those
 * is printed: it cannot run there, and the planner never plans it there.
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/fa_launch.h"
#include "kernels/family.h"
#include "kernels/ref_cpu.h"
#include "sweep/stats.h"

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "fa_check: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_),    \
                    __FILE__, __LINE__);                                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct check_shape {
    int b, h, s, d, causal;
    /* Logit ramp: key row j of K is scaled by (j+1)/S (1) or (S-j)/S (-1)
     * and the softmax scale by RAMP_SCALE, so a row's running max grows
     * by far more than 2^8 from tile to tile (1), or is set by the first
     * tile (-1): the online softmax's rescale path, which uniform data
     * hardly reaches. 0: plain uniform data. */
    int ramp;
    int kv; /* K/V heads (GQA, MQA); 0: as many as h */
} check_shape;
#define RAMP_SCALE 8.0

/* Tail lengths that are no multiple of any tile, S=1, B*H=1, both head dims,
 * causal and not, a large S, and logits that grow along the keys. */
/* Each shape runs in every dtype the build has instances of at its head dim;
 * the last ones group query heads (GQA: kv < h; MQA: kv 1) and use head
 * dim 256; the last three have more query tiles than an H100's 132 SMs and no
 * multiple of them (the persistent wgmma kernel's partial last round), with the
 * rescale ramps and GQA; the two after them too: three query heads per K/V head
 * at S = 1100 (an odd count of query tiles per slice at BLOCK_M 128, even at 64
 * and 192), and 300 heads of 90 keys (persistent CTAs of many short tiles, a key
 * tile mostly past the end; measured with the cluster-of-two K/V multicast tried
 * on 2026-11-26, kernels/NOTES-perf.md, and kept). */
static const check_shape SHAPES[] = {
    {1, 1, 1, 64, 0, 0, 0},      {1, 1, 1, 128, 1, 0, 0},     {1, 1, 37, 64, 0, 0, 0},
    {2, 3, 300, 64, 0, 0, 0},    {2, 3, 300, 64, 1, 0, 0},    {1, 2, 200, 128, 1, 0, 0},
    {2, 2, 517, 128, 0, 0, 0},   {1, 1, 1000, 64, 1, 0, 0},   {4, 8, 512, 64, 0, 0, 0},
    {2, 2, 4096, 64, 0, 0, 0},   {1, 2, 2048, 128, 1, 0, 0},  {1, 1, 129, 128, 0, 0, 0},
    {2, 2, 700, 64, 0, 1, 0},    {1, 2, 600, 128, 1, 1, 0},   {2, 1, 700, 64, 0, -1, 0},
    {2, 4, 300, 64, 0, 0, 2},    {1, 8, 517, 128, 1, 0, 1},   {2, 6, 333, 128, 0, 0, 3},
    {1, 4, 1000, 128, 1, 1, 1},  {1, 1, 1, 256, 0, 0, 0},     {1, 2, 300, 256, 0, 0, 0},
    {2, 4, 700, 256, 1, 0, 2},   {1, 2, 129, 256, 1, 0, 1},   {1, 2, 2048, 256, 0, 0, 1},
    {3, 20, 1000, 128, 0, 1, 0}, {3, 20, 1000, 64, 0, -1, 4}, {2, 20, 700, 256, 0, 1, 5},
    {2, 24, 1100, 128, 0, 0, 8}, {1, 300, 90, 64, 0, 0, 0},
};
#define N_SHAPES (int)(sizeof SHAPES / sizeof SHAPES[0])

typedef struct check_opts {
    int quick;
    int cc; /* the GPU's compute capability x10 */
    const char *filter;
    double rel_l2, max_abs;
} check_opts;

/* splitmix64's finalizer, kernels/check.cu's mix64 written again (the checks' models use it) */
static uint64_t model_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: statistically fine test data, seeded fresh each run */
    return model_mix64(*s += 0x9e3779b97f4a7c15ULL);
}

/* fa_launch.h's sign rule, written again: whether pattern p flips element (slice, column c)
 * of a tensor of head_dim columns. */
static int model_sign(const fa_signs *p, int slice, int c, int head_dim)
{
    const int unit = (slice % FA_SIGN_SLICES) * FA_SIGN_GROUPS + c / (head_dim / FA_SIGN_GROUPS);
    return (int)((p->w[unit >> 6] >> (unit & 63)) & 1u);
}

static void fill_random(uint16_t *x, size_t n, int dtype, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        const double u = (double)(rng_next(seed) >> 11) / 9007199254740992.0; /* [0,1) */
        x[i] = ref_float_to_elem((float)(4.0 * u - 2.0), dtype);
    }
}

static int kv_of(const check_shape *sh)
{
    return sh->kv ? sh->kv : sh->h;
}

/* Scales key row j of every head of K (see check_shape.ramp). */
static void apply_ramp(uint16_t *k, const check_shape *sh, int dtype)
{
    for (size_t head = 0; head < (size_t)sh->b * kv_of(sh); head++)
        for (int j = 0; j < sh->s; j++) {
            const double f = sh->ramp > 0 ? (j + 1.0) / sh->s : (double)(sh->s - j) / sh->s;
            uint16_t *row = k + (head * sh->s + j) * sh->d;
            for (int c = 0; c < sh->d; c++)
                row[c] = ref_float_to_elem((float)(ref_elem_to_float(row[c], dtype) * f), dtype);
        }
}

typedef struct check_err {
    double rel_l2, max_abs;
    long n_nan;
} check_err;

static check_err compare_half(const uint16_t *out, int dtype, const float *ref, size_t n)
{
    check_err e = {0, 0, 0};
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        const double o = ref_elem_to_float(out[i], dtype);
        if (!isfinite(o)) {
            e.n_nan++;
            continue;
        }
        const double d = o - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
        if (fabs(d) > e.max_abs)
            e.max_abs = fabs(d);
    }
    e.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
    return e;
}

/* Checks the fp32 GPU reference against the fp64 CPU one on small shapes. */
static int check_reference(const check_shape *sh, int dtype, const uint16_t *q, const uint16_t *k,
                           const uint16_t *v, const float *ref, float scale)
{
    const size_t n = (size_t)sh->b * sh->h * sh->s * sh->d;
    double *cpu = malloc(sizeof(double) * n);
    if (!cpu)
        return -1;
    ref_attention_cpu(q, k, v, sh->b, sh->h, kv_of(sh), sh->s, sh->d, sh->causal, dtype, scale,
                      cpu);
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (ref[i] - cpu[i]) * (ref[i] - cpu[i]);
        den += cpu[i] * cpu[i];
    }
    free(cpu);
    const double rel = sqrt(num / (den > 0 ? den : 1));
    if (!(rel < 1e-5)) {
        printf("FAIL reference b%d.h%d.kv%d.s%d.d%d.%s causal=%d ramp=%d: fp32 GPU vs fp64 CPU "
               "rel_l2 %.3g\n",
               sh->b, sh->h, kv_of(sh), sh->s, sh->d, fa_dtype_name(dtype), sh->causal, sh->ramp,
               rel);
        return 1;
    }
    return 0;
}

typedef struct check_state {
    int passed, failed, skipped;
    double worst_rel, worst_abs;
    char worst_name[128];
    double tol_rel, tol_abs; /* this shape's: the options', or twice the dtype's own error */
    double dtype_rel[FA_DTYPE_COUNT], dtype_abs[FA_DTYPE_COUNT]; /* the largest seen */
} check_state;

/* The sign flips of V that every timed launch's check relies on (fa_flip_launch, the engine's
 * guard: sweep/guard.h) against this file's model of fa_launch.h's rule: element (slice s,
 * column c) flips when bit (s mod FA_SIGN_SLICES) * FA_SIGN_GROUPS + c / (head_dim /
 * FA_SIGN_GROUPS) of the pattern is set. Head dims whose groups are narrower than the kernel's
 * 16-B vectors (8, 40, 72) and wider (64 to 256), more slices than FA_SIGN_SLICES, several
 * slots at once, each with its own V and pattern. One check per shape. */
static void check_flips(uint64_t *seed, check_state *st)
{
    static const int SH[][3] = {{3, 37, 8},   {2, 129, 40}, {5, 64, 64},  {1, 100, 72},
                                {4, 33, 128}, {2, 17, 256}, {200, 9, 64}, {130, 5, 96}};
    enum { SLOTS = 3 };
    for (size_t k = 0; k < sizeof SH / sizeof SH[0]; k++) {
        const fa_shape sh = {SH[k][0], SH[k][1], SH[k][2], SH[k][0], FA_DTYPE_FP16};
        const size_t n = (size_t)sh.kv_slices * sh.seq_len * sh.head_dim;
        uint16_t *v = malloc(SLOTS * n * sizeof *v), *got = malloc(n * sizeof *got);
        fa_slot slots[SLOTS];
        memset(slots, 0, sizeof slots);
        if (!v || !got) {
            fprintf(stderr, "fa_check: out of host memory\n");
            exit(1);
        }
        fill_random(v, SLOTS * n, FA_DTYPE_FP16, seed);
        for (int j = 0; j < SLOTS; j++) {
            CHECK_CUDA(cudaMalloc(&slots[j].v, n * sizeof *v));
            CHECK_CUDA(cudaMemcpy(slots[j].v, v + j * n, n * sizeof *v, cudaMemcpyHostToDevice));
            for (int w = 0; w < FA_SIGN_WORDS; w++)
                slots[j].flip.w[w] = rng_next(seed);
        }
        fa_slot *d_slots;
        CHECK_CUDA(cudaMalloc((void **)&d_slots, sizeof slots));
        CHECK_CUDA(cudaMemcpy(d_slots, slots, sizeof slots, cudaMemcpyHostToDevice));
        CHECK_CUDA((cudaError_t)fa_flip_launch(d_slots, SLOTS, sh, 0));
        CHECK_CUDA(cudaDeviceSynchronize());
        long bad = 0, flipped = 0;
        for (int j = 0; j < SLOTS; j++) {
            CHECK_CUDA(cudaMemcpy(got, slots[j].v, n * sizeof *got, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; i++) {
                const int c = (int)(i % (size_t)sh.head_dim);
                const int slice = (int)(i / ((size_t)sh.head_dim * sh.seq_len));
                const int f = model_sign(&slots[j].flip, slice, c, sh.head_dim);
                flipped += f;
                bad += got[i] != (uint16_t)(v[j * n + i] ^ (f ? 0x8000u : 0u));
            }
            CHECK_CUDA(cudaFree(slots[j].v));
        }
        CHECK_CUDA(cudaFree(d_slots));
        if (bad || !flipped) {
            printf("FAIL sign flips of V [%d, %d, %d] x %d slots: %ld of %zu elements wrong, %ld "
                   "to flip\n",
                   sh.kv_slices, sh.seq_len, sh.head_dim, SLOTS, bad, SLOTS * n, flipped);
            st->failed++;
        } else {
            st->passed++;
        }
        free(v);
        free(got);
    }
}

/* The row draw of kernels/check.cu (row_sampled), written again: the model. */
static int model_row_sampled(uint64_t seed, int y, long r, int shift)
{
    if (shift <= 0)
        return 1;
    const uint64_t h = model_mix64(seed ^ (0x632be59bd9b4e019ULL * (uint64_t)(y + 1)) ^
                                   (0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1)));
    return (h >> (64 - shift)) == 0;
}

/* The check of timed outputs (fa_check_slots_launch: each slot's output against its reference
 * under its signs, on the rows a hash draws) against this file's model of it: the same rows,
 * the same sums (the sums in double to 1e-9, max_abs, the counts and the first bad element
 * exactly). Outputs are the reference with the slot's signs, rounded, with some rows wrong
 * (an offset, NaN) and some reference elements not finite; GQA and MQA, head dims 8 to 256,
 * row counts no multiple of a warp's, more rows than the kernel's largest grid walks in one
 * pass; every row, the engine's 1 in 8, and 1 in 32. One check per (shape, draw). */
static void check_slots_sums(uint64_t *seed, check_state *st)
{
    static const int SH[][4] = {{3, 37, 8, 3},      {4, 100, 64, 2}, {2, 317, 128, 1},
                                {40, 64, 256, 40},  {1, 1, 64, 1},   {1000, 70, 64, 500},
                                {520, 2048, 8, 520}};
    static const int SHIFT[] = {0, 3, 5};
    enum { SLOTS = 3 };
    for (size_t k = 0; k < sizeof SH / sizeof SH[0]; k++) {
        const fa_shape sh = {SH[k][0], SH[k][1], SH[k][2], SH[k][3], FA_DTYPE_FP16};
        const long rows = (long)sh.slices * sh.seq_len;
        const size_t n = (size_t)rows * sh.head_dim;
        const int group = sh.slices / sh.kv_slices;
        float *ref = malloc(n * sizeof *ref);
        uint16_t *o = malloc(SLOTS * n * sizeof *o);
        if (!ref || !o) {
            fprintf(stderr, "fa_check: out of host memory\n");
            exit(1);
        }
        for (size_t i = 0; i < n; i++)
            ref[i] = (float)((double)(rng_next(seed) >> 11) / 4503599627370496.0 - 1.0);
        ref[n / 3] = INFINITY; /* a reference element not finite */
        fa_slot slots[SLOTS];
        memset(slots, 0, sizeof slots);
        float *d_ref;
        CHECK_CUDA(cudaMalloc((void **)&d_ref, n * sizeof *ref));
        CHECK_CUDA(cudaMemcpy(d_ref, ref, n * sizeof *ref, cudaMemcpyHostToDevice));
        for (int j = 0; j < SLOTS; j++) {
            for (int w = 0; w < FA_SIGN_WORDS; w++)
                slots[j].signs.w[w] = rng_next(seed);
            uint16_t *oj = o + j * n;
            for (long r = 0; r < rows; r++) {
                const int slice = (int)(r / sh.seq_len / group);
                const uint64_t wrong = rng_next(seed) % 16; /* 0: NaN row, 1: an offset row */
                for (int c = 0; c < sh.head_dim; c++) {
                    const size_t i = (size_t)r * sh.head_dim + c;
                    const int f = model_sign(&slots[j].signs, slice, c, sh.head_dim);
                    const float x = (f ? -ref[i] : ref[i]) + (wrong == 1 ? 0.25f : 0.0f);
                    oj[i] = wrong == 0 && j > 0 ? 0xffffu : ref_float_to_half(x);
                }
            }
            CHECK_CUDA(cudaMalloc(&slots[j].o, n * sizeof *o));
            CHECK_CUDA(cudaMemcpy(slots[j].o, oj, n * sizeof *o, cudaMemcpyHostToDevice));
            slots[j].ref = d_ref;
        }
        fa_slot *d_slots;
        void *scratch;
        fa_compare_sums *d_sums, sums[SLOTS];
        CHECK_CUDA(cudaMalloc((void **)&d_slots, sizeof slots));
        CHECK_CUDA(cudaMemcpy(d_slots, slots, sizeof slots, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMalloc(&scratch, fa_check_scratch_bytes(SLOTS)));
        CHECK_CUDA(cudaMalloc((void **)&d_sums, sizeof sums));
        for (size_t t = 0; t < sizeof SHIFT / sizeof SHIFT[0]; t++) {
            const uint64_t draw = rng_next(seed);
            CHECK_CUDA((cudaError_t)fa_check_slots_launch(d_slots, SLOTS, sh, SHIFT[t], draw,
                                                          scratch, d_sums, NULL));
            CHECK_CUDA(cudaMemcpy(sums, d_sums, sizeof sums, cudaMemcpyDeviceToHost));
            int bad = 0;
            long looked = 0;
            for (int j = 0; j < SLOTS && !bad; j++) {
                double diff2 = 0, ref2 = 0, max_abs = 0;
                unsigned long long nonfinite = 0, first_bad = ~0ULL, ref_nonfinite = 0;
                for (long r = 0; r < rows; r++) {
                    if (!model_row_sampled(draw, j, r, SHIFT[t]))
                        continue;
                    const int slice = (int)(r / sh.seq_len / group);
                    for (int c = 0; c < sh.head_dim; c++) {
                        const size_t i = (size_t)r * sh.head_dim + c;
                        const int f = model_sign(&slots[j].signs, slice, c, sh.head_dim);
                        const double want = f ? -(double)ref[i] : (double)ref[i];
                        const double got = ref_half_to_float(o[j * n + i]);
                        looked++;
                        ref_nonfinite += !isfinite(want);
                        if (!isfinite(got)) {
                            nonfinite++;
                            first_bad = i < first_bad ? i : first_bad;
                            continue;
                        }
                        const double d = fabs(got - want);
                        diff2 += d * d;
                        ref2 += want * want;
                        max_abs = (d > max_abs || isnan(d)) ? d : max_abs;
                    }
                }
                const fa_compare_sums *u = &sums[j];
                const int same_max = u->max_abs == max_abs || (isnan(u->max_abs) && isnan(max_abs));
                bad = !same_max || u->nonfinite != nonfinite || u->first_bad != first_bad ||
                      u->ref_nonfinite != ref_nonfinite ||
                      !(fabs(u->diff2 - diff2) <= 1e-9 * diff2 || u->diff2 == diff2) ||
                      !(fabs(u->ref2 - ref2) <= 1e-9 * ref2 || u->ref2 == ref2);
                if (bad)
                    printf("FAIL check of timed outputs [%d, %d, %d, kv %d] 1 in %d rows, slot %d: "
                           "diff2 %.17g vs model %.17g, ref2 %.17g vs %.17g, max_abs %.17g vs "
                           "%.17g, non-finite %llu (first %llu) vs %llu (first %llu), reference "
                           "non-finite %llu vs %llu\n",
                           sh.slices, sh.seq_len, sh.head_dim, sh.kv_slices, 1 << SHIFT[t], j,
                           u->diff2, diff2, u->ref2, ref2, u->max_abs, max_abs, u->nonfinite,
                           u->first_bad, nonfinite, first_bad, u->ref_nonfinite, ref_nonfinite);
            }
            if (!bad && looked == 0 && rows * SLOTS >= (64L << SHIFT[t])) {
                printf("FAIL check of timed outputs [%d, %d, %d, kv %d] 1 in %d rows: the model "
                       "drew no row of some 64 expected, the check tests nothing\n",
                       sh.slices, sh.seq_len, sh.head_dim, sh.kv_slices, 1 << SHIFT[t]);
                bad = 1;
            }
            st->failed += bad;
            st->passed += !bad;
        }
        for (int j = 0; j < SLOTS; j++)
            CHECK_CUDA(cudaFree(slots[j].o));
        CHECK_CUDA(cudaFree(d_ref));
        CHECK_CUDA(cudaFree(d_slots));
        CHECK_CUDA(cudaFree(scratch));
        CHECK_CUDA(cudaFree(d_sums));
        free(ref);
        free(o);
    }
}

/* The fill of a new output ring (fa_fill_slots_launch: each slot's output as a launch under its
 * signs computes it) against this file's model, bit for bit: the reference with the slot's
 * signs, rounded to the dtype. GQA and MQA, head dims 8 to 256, both dtypes, more slots than
 * the rings of a block usually hold. */
static void check_fill(uint64_t *seed, check_state *st)
{
    static const int SH[][4] = {
        {3, 37, 8, 3}, {4, 100, 64, 2}, {2, 317, 128, 1}, {40, 64, 256, 40}, {300, 9, 64, 150}};
    enum { SLOTS = 5 };
    for (size_t k = 0; k < sizeof SH / sizeof SH[0]; k++)
        for (int dt = 0; dt < FA_DTYPE_COUNT; dt++) {
            const fa_shape sh = {SH[k][0], SH[k][1], SH[k][2], SH[k][3], dt};
            const size_t n = (size_t)sh.slices * sh.seq_len * sh.head_dim;
            const int group = sh.slices / sh.kv_slices;
            float *ref = malloc(n * sizeof *ref);
            uint16_t *got = malloc(n * sizeof *got);
            if (!ref || !got) {
                fprintf(stderr, "fa_check: out of host memory\n");
                exit(1);
            }
            for (size_t i = 0; i < n; i++)
                ref[i] = (float)((double)(rng_next(seed) >> 11) / 4503599627370496.0 - 1.0);
            float *d_ref;
            CHECK_CUDA(cudaMalloc((void **)&d_ref, n * sizeof *ref));
            CHECK_CUDA(cudaMemcpy(d_ref, ref, n * sizeof *ref, cudaMemcpyHostToDevice));
            fa_slot slots[SLOTS];
            memset(slots, 0, sizeof slots);
            for (int j = 0; j < SLOTS; j++) {
                for (int w = 0; w < FA_SIGN_WORDS; w++)
                    slots[j].signs.w[w] = rng_next(seed);
                CHECK_CUDA(cudaMalloc(&slots[j].o, n * sizeof *got));
                CHECK_CUDA(cudaMemset(slots[j].o, 0xff, n * sizeof *got));
                slots[j].ref = d_ref;
            }
            fa_slot *d_slots;
            CHECK_CUDA(cudaMalloc((void **)&d_slots, sizeof slots));
            CHECK_CUDA(cudaMemcpy(d_slots, slots, sizeof slots, cudaMemcpyHostToDevice));
            CHECK_CUDA((cudaError_t)fa_fill_slots_launch(d_slots, SLOTS, sh, NULL));
            CHECK_CUDA(cudaDeviceSynchronize());
            long bad = 0, flipped = 0;
            for (int j = 0; j < SLOTS; j++) {
                CHECK_CUDA(cudaMemcpy(got, slots[j].o, n * sizeof *got, cudaMemcpyDeviceToHost));
                for (size_t i = 0; i < n; i++) {
                    const int c = (int)(i % (size_t)sh.head_dim);
                    const int slice = (int)(i / ((size_t)sh.head_dim * sh.seq_len)) / group;
                    const int f = model_sign(&slots[j].signs, slice, c, sh.head_dim);
                    flipped += f;
                    bad += got[i] != ref_float_to_elem(f ? -ref[i] : ref[i], dt);
                }
                CHECK_CUDA(cudaFree(slots[j].o));
            }
            CHECK_CUDA(cudaFree(d_slots));
            CHECK_CUDA(cudaFree(d_ref));
            if (bad || !flipped || flipped == (long)(SLOTS * n)) {
                printf("FAIL fill of output slots [%d, %d, %d, kv %d] %s x %d slots: %ld of %zu "
                       "elements wrong, %ld flipped\n",
                       sh.slices, sh.seq_len, sh.head_dim, sh.kv_slices, fa_dtype_name(dt), SLOTS,
                       bad, SLOTS * n, flipped);
                st->failed++;
            } else {
                st->passed++;
            }
            free(ref);
            free(got);
        }
}

/* The engine's gate compares on the GPU (fa_compare_launch); it must agree
 * with the host loop (stats_output_errors) on every output checked here.
 * Returns 0, or 1 after printing the disagreement. */
static int check_gpu_gate(const char *what, int dtype, const void *d_out, const float *d_ref,
                          const uint16_t *out, const float *ref, size_t n)
{
    static void *scratch;
    static fa_compare_sums *d_sums;
    if (!scratch) {
        CHECK_CUDA(cudaMalloc(&scratch, fa_compare_scratch_bytes()));
        CHECK_CUDA(cudaMalloc((void **)&d_sums, sizeof *d_sums));
    }
    fa_compare_sums sums;
    CHECK_CUDA((cudaError_t)fa_compare_launch(d_out, dtype, d_ref, n, scratch, d_sums, NULL));
    CHECK_CUDA(cudaMemcpy(&sums, d_sums, sizeof sums, cudaMemcpyDeviceToHost));
    stats_errors gpu, cpu;
    stats_errors_of_sums(sums.diff2, sums.ref2, sums.max_abs, (long)sums.nonfinite,
                         sums.nonfinite ? (long)sums.first_bad : -1, n, &gpu);
    stats_output_errors(out, dtype, ref, n, &cpu);
    const int same = gpu.nonfinite == cpu.nonfinite && gpu.first_bad == cpu.first_bad &&
                     ((isnan(gpu.rel_l2) && isnan(cpu.rel_l2)) ||
                      fabs(gpu.rel_l2 - cpu.rel_l2) <= 1e-9 * fabs(cpu.rel_l2)) &&
                     ((isnan(gpu.max_abs) && isnan(cpu.max_abs)) || gpu.max_abs == cpu.max_abs);
    if (!same)
        printf("FAIL GPU gate %s: rel_l2 %.17g vs host %.17g, max_abs %.17g vs %.17g, "
               "non-finite %ld (first %ld) vs %ld (first %ld)\n",
               what, gpu.rel_l2, cpu.rel_l2, gpu.max_abs, cpu.max_abs, gpu.nonfinite, gpu.first_bad,
               cpu.nonfinite, cpu.first_bad);
    return !same;
}

/* Whether in can run on the GPU (its family's architecture, when it has one). */
static int instance_runs_here(const fa_instance *in, const check_opts *o)
{
    const fa_family *f = fa_family_of(&in->cfg);
    return f && (!f->arch || f->arch == o->cc);
}

static void run_instance(const fa_instance *in, const check_shape *sh, fa_args *a, const float *ref,
                         const float *dref, uint16_t *out, size_t n, const check_opts *o,
                         check_state *st)
{
    const char *dt = fa_dtype_name(a->dtype);
    CHECK_CUDA(cudaMemset(a->o, 0xff, n * 2)); /* 0xffff is a NaN in fp16 */
    int rc = in->launch(a, NULL);
    if (rc == 0)
        rc = (int)cudaDeviceSynchronize();
    if (rc != 0) {
        printf("FAIL %s:%s b%d.h%d.kv%d.s%d.d%d.%s c%d r%d: CUDA error %s\n",
               fa_family_of(&in->cfg)->name, in->name, sh->b, sh->h, kv_of(sh), sh->s, sh->d, dt,
               sh->causal, sh->ramp, cudaGetErrorString((cudaError_t)rc));
        st->failed++;
        if (rc == cudaErrorIllegalAddress || rc == cudaErrorLaunchFailure)
            exit(1); /* the context is gone */
        return;
    }
    CHECK_CUDA(cudaMemcpy(out, a->o, n * 2, cudaMemcpyDeviceToHost));
    if (check_gpu_gate(in->name, a->dtype, a->o, dref, out, ref, n))
        st->failed++;
    const check_err e = compare_half(out, a->dtype, ref, n);
    const int ok = e.n_nan == 0 && e.rel_l2 <= st->tol_rel && e.max_abs <= st->tol_abs;
    if (!ok) {
        printf("FAIL %s:%s b%d.h%d.kv%d.s%d.d%d.%s c%d r%d: rel_l2 %.3g max_abs %.3g (tolerance "
               "%.3g, %.3g) unwritten/NaN %ld\n",
               fa_family_of(&in->cfg)->name, in->name, sh->b, sh->h, kv_of(sh), sh->s, sh->d, dt,
               sh->causal, sh->ramp, e.rel_l2, e.max_abs, st->tol_rel, st->tol_abs, e.n_nan);
        st->failed++;
        return;
    }
    st->passed++;
    (void)o;
    if (e.rel_l2 > st->worst_rel) {
        st->worst_rel = e.rel_l2;
        snprintf(st->worst_name, sizeof st->worst_name, "%s at b%d.h%d.kv%d.s%d.d%d.%s.c%d.r%d",
                 in->name, sh->b, sh->h, kv_of(sh), sh->s, sh->d, dt, sh->causal, sh->ramp);
    }
    if (e.max_abs > st->worst_abs)
        st->worst_abs = e.max_abs;
}

/* Whether the build has an instance of head dim d and dtype that may run here. */
static int have_instances(int d, int dtype, const check_opts *o)
{
    for (int i = 0; i < fa_registry_count(); i++) {
        const fa_instance *in = fa_registry_get(i);
        if (in->cfg.head_dim == d && in->cfg.dtype == dtype &&
            (!o->filter || strstr(in->name, o->filter)))
            return 1;
    }
    return 0;
}

static void run_shape(const check_shape *sh, int dtype, const check_opts *o, uint64_t *seed,
                      check_state *st)
{
    const size_t n = (size_t)sh->b * sh->h * sh->s * sh->d;
    const size_t n_kv = (size_t)sh->b * kv_of(sh) * sh->s * sh->d;
    uint16_t *hq = malloc(n * 2), *hk = malloc(n_kv * 2), *hv = malloc(n_kv * 2),
             *ho = malloc(n * 2);
    float *href = malloc(n * 4);
    if (!hq || !hk || !hv || !ho || !href) {
        fprintf(stderr, "fa_check: out of host memory\n");
        exit(1);
    }
    fill_random(hq, n, dtype, seed);
    fill_random(hk, n_kv, dtype, seed);
    fill_random(hv, n_kv, dtype, seed);
    if (sh->ramp)
        apply_ramp(hk, sh, dtype);
    fa_args a = {0};
    float *dref;
    CHECK_CUDA(cudaMalloc((void **)&a.q, n * 2));
    CHECK_CUDA(cudaMalloc((void **)&a.k, n_kv * 2));
    CHECK_CUDA(cudaMalloc((void **)&a.v, n_kv * 2));
    CHECK_CUDA(cudaMalloc(&a.o, n * 2));
    CHECK_CUDA(cudaMalloc((void **)&dref, n * 4));
    CHECK_CUDA(cudaMemcpy((void *)a.q, hq, n * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy((void *)a.k, hk, n_kv * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy((void *)a.v, hv, n_kv * 2, cudaMemcpyHostToDevice));
    a.batch = sh->b;
    a.heads = sh->h;
    a.kv_heads = kv_of(sh);
    a.dtype = dtype;
    a.seq_len = sh->s;
    a.head_dim = sh->d;
    a.causal = sh->causal;
    a.softmax_scale = (float)((sh->ramp ? RAMP_SCALE : 1.0) / sqrt((double)sh->d));
    CHECK_CUDA((cudaError_t)fa_reference_launch(&a, dref, NULL));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(href, dref, n * 4, cudaMemcpyDeviceToHost));
    if ((double)sh->s * sh->s * sh->b * sh->h <= 2e6) {
        if (check_reference(sh, dtype, hq, hk, hv, href, a.softmax_scale))
            st->failed++;
        else
            st->passed++;
    }
    /* What the dtype itself costs here (the rounded reference, as any kernel
     * of it must round): the tolerance is the options', or twice that. */
    CHECK_CUDA((cudaError_t)fa_reference_rounded_launch(&a, a.o, NULL));
    CHECK_CUDA(cudaMemcpy(ho, a.o, n * 2, cudaMemcpyDeviceToHost));
    const check_err de = compare_half(ho, dtype, href, n);
    st->tol_rel = 2 * de.rel_l2 > o->rel_l2 ? 2 * de.rel_l2 : o->rel_l2;
    st->tol_abs = 2 * de.max_abs > o->max_abs ? 2 * de.max_abs : o->max_abs;
    if (de.rel_l2 > st->dtype_rel[dtype])
        st->dtype_rel[dtype] = de.rel_l2;
    if (de.max_abs > st->dtype_abs[dtype])
        st->dtype_abs[dtype] = de.max_abs;
    /* The GPU gate on an all-NaN output: every element non-finite. */
    CHECK_CUDA(cudaMemset(a.o, 0xff, n * 2));
    CHECK_CUDA(cudaMemcpy(ho, a.o, n * 2, cudaMemcpyDeviceToHost));
    if (check_gpu_gate("(poisoned output)", dtype, a.o, dref, ho, href, n))
        st->failed++;
    for (int i = 0; i < fa_registry_count(); i++) {
        const fa_instance *in = fa_registry_get(i);
        if (in->cfg.head_dim != sh->d || in->cfg.dtype != dtype ||
            (o->filter && !strstr(in->name, o->filter)))
            continue;
        if (!instance_runs_here(in, o)) {
            st->skipped++;
            continue;
        }
        run_instance(in, sh, &a, href, dref, ho, n, o, st);
    }
    cudaFree((void *)a.q);
    cudaFree((void *)a.k);
    cudaFree((void *)a.v);
    cudaFree(a.o);
    cudaFree(dref);
    free(hq);
    free(hk);
    free(hv);
    free(ho);
    free(href);
}

int main(int argc, char **argv)
{
    /* fp16 output of an fp32-accumulated attention: each element is rounded
     * once to fp16 (rel 2^-11) after P was rounded to fp16 for P V; errors
     * of 1e-3 relative are typical, 5e-3 leaves room for long rows. */
    check_opts o = {0, 0, NULL, 5e-3, 3e-2};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            o.quick = 1;
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
            o.filter = argv[++i];
        else if (!strcmp(argv[i], "--rel-l2") && i + 1 < argc)
            o.rel_l2 = atof(argv[++i]);
        else if (!strcmp(argv[i], "--max-abs") && i + 1 < argc)
            o.max_abs = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: fa_check [--quick] [--filter SUBSTR] [--rel-l2 X] "
                            "[--max-abs X]\n");
            return 2;
        }
    }
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        fprintf(stderr, "fa_check: no CUDA GPU (%s): run this on a GPU machine\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 1;
    }
    struct cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    o.cc = prop.major * 10 + prop.minor;
    uint64_t seed = (uint64_t)time(NULL) * 2654435761ULL ^ (uint64_t)clock();
    printf("fa_check: %s (sm_%d%d), %d instances, build %s, seed %llu\n", prop.name, prop.major,
           prop.minor, fa_registry_count(), fa_build_id(), (unsigned long long)seed);
    for (int f = 0; f < fa_family_count(); f++) {
        int n = 0;
        for (int i = 0; i < fa_registry_count(); i++)
            n += fa_registry_get(i)->cfg.family == f;
        const fa_family *fam = fa_family_get(f);
        printf("  family %s: %d instances%s%s%s\n", fam->name, n,
               fam->arch && fam->arch != o.cc ? " (skipped: they need " : "",
               fam->arch && fam->arch != o.cc ? fam->arch_name : "",
               fam->arch && fam->arch != o.cc ? ")" : "");
    }
    check_state st = {0};
    for (int s = 0; s < N_SHAPES; s++)
        for (int dt = 0; dt < FA_DTYPE_COUNT; dt++) {
            if ((o.quick && SHAPES[s].s > 1000) || !have_instances(SHAPES[s].d, dt, &o))
                continue;
            run_shape(&SHAPES[s], dt, &o, &seed, &st);
        }
    check_flips(&seed, &st);
    check_slots_sums(&seed, &st);
    check_fill(&seed, &st);
    for (int dt = 0; dt < FA_DTYPE_COUNT; dt++)
        printf("%s itself (the rounded reference): worst rel_l2 %.3g, max_abs %.3g\n",
               fa_dtype_name(dt), st.dtype_rel[dt], st.dtype_abs[dt]);
    printf("worst rel_l2 %.3g (%s), worst max_abs %.3g; tolerances rel_l2 %.g max_abs %.g, or "
           "twice the dtype's own error when more\n",
           st.worst_rel, st.worst_name, st.worst_abs, o.rel_l2, o.max_abs);
    if (st.skipped)
        printf("%d (instance, shape) checks skipped: the instance needs another architecture\n",
               st.skipped);
    printf("%d passed, %d failed\n", st.passed, st.failed);
    return st.failed ? 1 : 0;
}
