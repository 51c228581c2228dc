// check.cu - the checks' GPU side (contract: fa_launch.h): fresh random
// inputs, the comparison of an fp16 output with the fp32 reference as sums
// in double, and what the checks of timed launches need (sweep/guard.h):
// sign flips of V with a known answer, the comparison of many outputs at
// once with signs and sampled rows, a bit-exact difference count, and an
// order-free hash of an input. Everything stays on the GPU, so a gate of
// 33 M outputs costs a few milliseconds instead of a 66 MB copy and a host
// loop.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fa_elem.cuh"
#include "fa_launch.h"

// A fixed grid and block, so the reduction order (and the bits of the
// sums) does not depend on the GPU.
#define CHECK_BLOCKS 1024
#define CHECK_THREADS 256

// splitmix64: a hash of (seed, i), statistically fine for test data.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

__global__ void fill_random_kernel(unsigned short *x, size_t n, unsigned long long seed, float lo,
                                   float hi, int dt)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long r = mix64(seed + 0x9e3779b97f4a7c15ULL * (i + 1));
        const double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); // [0, 1)
        x[i] = fa_elem_bits((float)(lo + (hi - lo) * u), dt);
    }
}

extern "C" int fa_fill_random_launch(void *out, size_t n, int dtype, unsigned long long seed,
                                     float lo, float hi, fa_stream stream)
{
    fill_random_kernel<<<CHECK_BLOCKS, CHECK_THREADS, 0, (cudaStream_t)stream>>>(
        (unsigned short *)out, n, seed, lo, hi, dtype);
    return (int)cudaGetLastError();
}

struct compare_part {
    double diff2, ref2, max_abs;
    unsigned long long nonfinite, first_bad, ref_nonfinite;
};

// max that lets a NaN through (a NaN reference poisons max_abs, as on the host).
__device__ __forceinline__ double max_nan(double a, double b)
{
    return (b > a || isnan(b)) ? b : a;
}

__device__ __forceinline__ void part_add(compare_part &a, const compare_part &b)
{
    a.diff2 += b.diff2;
    a.ref2 += b.ref2;
    a.max_abs = max_nan(a.max_abs, b.max_abs);
    a.nonfinite += b.nonfinite;
    a.first_bad = b.first_bad < a.first_bad ? b.first_bad : a.first_bad;
    a.ref_nonfinite += b.ref_nonfinite;
}

// Tree reduction of one compare_part per thread in shared memory.
__device__ void block_reduce(compare_part &mine, compare_part *out)
{
    __shared__ compare_part s[CHECK_THREADS];
    s[threadIdx.x] = mine;
    __syncthreads();
    for (int w = CHECK_THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part_add(s[threadIdx.x], s[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = s[0];
}

// Output element i, bits o, against its reference r into p: a NaN or inf output is counted
// and adds nothing to the sums; has_out 0: the reference alone is looked at.
__device__ __forceinline__ void part_value(compare_part &p, int has_out, unsigned short o, int dt,
                                           double r, size_t i)
{
    if (!isfinite(r))
        p.ref_nonfinite++;
    if (!has_out)
        return;
    const double x = fa_elem_float(o, dt);
    if (!isfinite(x)) {
        p.nonfinite++;
        p.first_bad = i < p.first_bad ? i : p.first_bad;
        return;
    }
    const double d = fabs(x - r);
    p.diff2 += d * d;
    p.ref2 += r * r;
    p.max_abs = max_nan(p.max_abs, d);
}

// Output element i (out NULL: none) against its reference r into p.
__device__ __forceinline__ void part_element(compare_part &p, const unsigned short *out, int dt,
                                             double r, size_t i)
{
    part_value(p, out != NULL, out ? out[i] : (unsigned short)0, dt, r, i);
}

__global__ void compare_kernel(const unsigned short *out, int dt, const float *ref, size_t n,
                               compare_part *parts)
{
    compare_part p = {0, 0, 0, 0, ~0ULL, 0};
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        part_element(p, out, dt, ref[i], i);
    block_reduce(p, &parts[blockIdx.x]);
}

__global__ void compare_final_kernel(const compare_part *parts, fa_compare_sums *sums)
{
    compare_part p = {0, 0, 0, 0, ~0ULL, 0};
    for (int i = threadIdx.x; i < CHECK_BLOCKS; i += CHECK_THREADS)
        part_add(p, parts[i]);
    compare_part total;
    block_reduce(p, &total);
    if (threadIdx.x == 0)
        *sums = fa_compare_sums{total.diff2,     total.ref2,      total.max_abs,
                                total.nonfinite, total.first_bad, total.ref_nonfinite};
}

extern "C" size_t fa_compare_scratch_bytes(void)
{
    return CHECK_BLOCKS * sizeof(compare_part);
}

extern "C" int fa_compare_launch(const void *out, int dtype, const float *ref, size_t n,
                                 void *scratch, fa_compare_sums *sums, fa_stream stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    compare_part *parts = (compare_part *)scratch;
    compare_kernel<<<CHECK_BLOCKS, CHECK_THREADS, 0, s>>>((const unsigned short *)out, dtype, ref,
                                                          n, parts);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    compare_final_kernel<<<1, CHECK_THREADS, 0, s>>>(parts, sums);
    return (int)cudaGetLastError();
}

// ---- the checks of timed launches -------------------------------------------------------------

// The sign bit of element (slice s, column c) under a pattern (fa_launch.h:
// fa_signs): the slice's 8 group bits are one byte of the pattern.
__device__ __forceinline__ unsigned slice_bits(const fa_signs &p, int s)
{
    const int unit = (s % FA_SIGN_SLICES) * FA_SIGN_GROUPS;
    return (unsigned)(p.w[unit >> 6] >> (unit & 63)) & 0xffu;
}

#define CHECK_WARPS (CHECK_THREADS / 32)

// The XOR that flips the elements of 16-B vector (8 elements from column c0) of a row whose
// slice's group bits are `bits`: a word per element pair, 0x8000 on each flipped element.
__device__ __forceinline__ uint4 flip_mask(unsigned bits, int c0, int group_cols)
{
    unsigned w[4];
    if (group_cols % 8 == 0) { // head_dim a multiple of 64: the vector lies in one group
        const unsigned on = (bits >> (c0 / group_cols)) & 1u;
        w[0] = w[1] = w[2] = w[3] = on ? 0x80008000u : 0u;
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++)
            w[k] = (((bits >> ((c0 + 2 * k) / group_cols)) & 1u) ? 0x8000u : 0u) |
                   (((bits >> ((c0 + 2 * k + 1) / group_cols)) & 1u) ? 0x80000000u : 0u);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

#define FLIP_UNROLL 4 // vectors a thread reads before it writes any

// Flips V of each slot by its flip pattern, a 16-B vector (8 elements) per thread and step,
// FLIP_UNROLL vectors read before any is written: memory-bound. A warp per row with two
// bytes a lane waited for each read and write in turn, about 0.3 ms a launch of four slots
// at 16,16,2048,64 on an H200, most of what a timed block of that problem cost beyond its
// samples (sweep/NOTES-engine.md, fourteenth session). A vector none of whose elements
// flips is neither read nor written. I: the index type (32 bits where the vectors fit:
// its divisions are a few instructions, 64-bit ones a call).
template <typename I> __global__ void flip_kernel(const fa_slot *slots, fa_shape sh)
{
    const fa_slot &sl = slots[blockIdx.y];
    const I vecs_row = (I)(sh.head_dim / 8), seq = (I)sh.seq_len;
    const I n = (I)sh.kv_slices * seq * vecs_row; // V's 16-B vectors
    const int group_cols = sh.head_dim / FA_SIGN_GROUPS;
    uint4 *v = (uint4 *)sl.v;
    const I stride = (I)gridDim.x * blockDim.x;
    for (I i0 = (I)blockIdx.x * blockDim.x + threadIdx.x; i0 < n; i0 += stride * FLIP_UNROLL) {
        uint4 m[FLIP_UNROLL], x[FLIP_UNROLL];
#pragma unroll
        for (int u = 0; u < FLIP_UNROLL; u++) {
            const I i = i0 + (I)u * stride;
            m[u] = make_uint4(0u, 0u, 0u, 0u);
            if (i >= n)
                continue;
            const I row = i / vecs_row;
            const int c0 = (int)(i - row * vecs_row) * 8;
            m[u] = flip_mask(slice_bits(sl.flip, (int)(row / seq)), c0, group_cols);
            if (m[u].x | m[u].y | m[u].z | m[u].w)
                x[u] = v[i];
        }
#pragma unroll
        for (int u = 0; u < FLIP_UNROLL; u++) {
            if (!(m[u].x | m[u].y | m[u].z | m[u].w))
                continue;
            const I i = i0 + (I)u * stride;
            v[i] = make_uint4(x[u].x ^ m[u].x, x[u].y ^ m[u].y, x[u].z ^ m[u].z, x[u].w ^ m[u].w);
        }
    }
}

extern "C" int fa_flip_launch(const fa_slot *slots, int n, fa_shape shape, fa_stream stream)
{
    if (n < 1)
        return 0;
    // V rows are whole 16-B vectors (head_dim a multiple of FA_SIGN_GROUPS = 8) and every V
    // buffer is a cudaMalloc (256-B aligned): the uint4 view is exact.
    if (shape.head_dim % 8 != 0)
        return (int)cudaErrorInvalidValue;
    const size_t vecs = (size_t)shape.kv_slices * shape.seq_len * (shape.head_dim / 8);
    const dim3 grid(CHECK_BLOCKS / 4, n);
    if (vecs + (size_t)(CHECK_BLOCKS / 4) * CHECK_THREADS * FLIP_UNROLL < UINT32_MAX)
        flip_kernel<unsigned><<<grid, CHECK_THREADS, 0, (cudaStream_t)stream>>>(slots, shape);
    else
        flip_kernel<size_t><<<grid, CHECK_THREADS, 0, (cudaStream_t)stream>>>(slots, shape);
    return (int)cudaGetLastError();
}

// Whether row r of slot y is among the sampled rows: 1 in 2^shift, by a
// hash of (seed, slot, row) the kernel under test ran before it was drawn.
__device__ __forceinline__ bool row_sampled(unsigned long long seed, int y, long r, int shift)
{
    if (shift <= 0)
        return true;
    const unsigned long long h =
        mix64(seed ^ (0x632be59bd9b4e019ULL * (unsigned long long)(y + 1)) ^
              (0x9e3779b97f4a7c15ULL * (unsigned long long)(r + 1)));
    return (h >> (64 - shift)) == 0;
}

// Whether element (row, c) of a slot's output is negated under the slot's signs: output row
// `row` (over every slice) belongs to query slice row / seq_len, which reads V slice that over
// the GQA group; column c is in sign group c / (head_dim / FA_SIGN_GROUPS). The one rule of
// the check and the fill below.
__device__ __forceinline__ bool slot_negated(const fa_slot &sl, const fa_shape &sh, long row, int c)
{
    const int group = sh.slices / sh.kv_slices; // query slices reading one K/V slice
    const unsigned bits = slice_bits(sl.signs, (int)(row / sh.seq_len / group));
    return (bits >> (c / (sh.head_dim / FA_SIGN_GROUPS))) & 1u;
}

// The check of timed outputs is latency-bound: a sampled row is a few hundred bytes, and
// a warp that walked its rows one at a time (1024 rows, 128 sampled, each waited for) took
// 0.35 ms a block at 16,16,2048,64 on an H200 (sweep/NOTES-engine.md, fifteenth session). Now each
// lane hashes one of 32 rows, the warp takes the sampled ones CHECK_ROWS_INFLIGHT at a time with
// their loads issued together, and the number of blocks per slot follows the rows (a function of
// the shape alone, so the reduction order, and the bits of the sums, do not depend on the
// GPU).
#define CHECK_CHUNKS_MAX 1024 // blocks per slot at most: partial sums each, in a fixed order
#define CHECK_WARP_ROWS 128   // rows a warp walks (the blocks per slot follow from it)
#define CHECK_ROWS_INFLIGHT 4 // sampled rows whose loads a warp issues before it uses any

// Blocks per slot for a shape.
static int check_chunks(const fa_shape &sh)
{
    const long rows = (long)sh.slices * sh.seq_len;
    const long per_block = (long)CHECK_WARPS * CHECK_WARP_ROWS;
    const long c = (rows + per_block - 1) / per_block;
    return c < 1 ? 1 : c > CHECK_CHUNKS_MAX ? CHECK_CHUNKS_MAX : (int)c;
}

// Each slot's output against its reference with its signs, on the sampled rows: a warp
// takes 32 rows at a time, the lanes over the columns of each sampled one; partial sums
// per (slot, block).
__global__ void check_slots_kernel(const fa_slot *slots, fa_shape sh, int shift,
                                   unsigned long long seed, compare_part *parts)
{
    const fa_slot &sl = slots[blockIdx.y];
    const long rows = (long)sh.slices * sh.seq_len;
    const int lane = threadIdx.x & 31;
    const unsigned short *o = (const unsigned short *)sl.o;
    compare_part p = {0, 0, 0, 0, ~0ULL, 0};
    for (long r0 = ((long)blockIdx.x * CHECK_WARPS + threadIdx.x / 32) * 32; r0 < rows;
         r0 += (long)gridDim.x * CHECK_WARPS * 32) {
        const long mine = r0 + lane;
        unsigned todo =
            __ballot_sync(0xffffffffu, mine < rows && row_sampled(seed, blockIdx.y, mine, shift));
        while (todo) {
            long r[CHECK_ROWS_INFLIGHT];
            int k = 0;
            for (; k < CHECK_ROWS_INFLIGHT && todo; k++) {
                r[k] = r0 + __ffs(todo) - 1;
                todo &= todo - 1;
            }
            for (int c = lane; c < sh.head_dim; c += 32) {
                double ref[CHECK_ROWS_INFLIGHT];
                unsigned short out[CHECK_ROWS_INFLIGHT];
#pragma unroll
                for (int u = 0; u < CHECK_ROWS_INFLIGHT; u++)
                    if (u < k) {
                        const size_t i = (size_t)r[u] * sh.head_dim + c;
                        ref[u] = sl.ref[i];
                        out[u] = o ? o[i] : (unsigned short)0;
                    }
#pragma unroll
                for (int u = 0; u < CHECK_ROWS_INFLIGHT; u++)
                    if (u < k) {
                        const double x = slot_negated(sl, sh, r[u], c) ? -ref[u] : ref[u];
                        part_value(p, o != NULL, out[u], sh.dtype, x,
                                   (size_t)r[u] * sh.head_dim + c);
                    }
            }
        }
    }
    block_reduce(p, &parts[(size_t)blockIdx.y * CHECK_CHUNKS_MAX + blockIdx.x]);
}

__global__ void check_final_kernel(const compare_part *parts, int chunks, fa_compare_sums *sums)
{
    compare_part p = {0, 0, 0, 0, ~0ULL, 0};
    for (int i = threadIdx.x; i < chunks; i += CHECK_THREADS)
        part_add(p, parts[(size_t)blockIdx.x * CHECK_CHUNKS_MAX + i]);
    compare_part total;
    block_reduce(p, &total);
    if (threadIdx.x == 0)
        sums[blockIdx.x] = fa_compare_sums{total.diff2,     total.ref2,      total.max_abs,
                                           total.nonfinite, total.first_bad, total.ref_nonfinite};
}

extern "C" size_t fa_check_scratch_bytes(int n_slots)
{
    return (size_t)(n_slots > 0 ? n_slots : 1) * CHECK_CHUNKS_MAX * sizeof(compare_part);
}

extern "C" int fa_check_slots_launch(const fa_slot *slots, int n, fa_shape shape, int row_shift,
                                     unsigned long long seed, void *scratch, fa_compare_sums *sums,
                                     fa_stream stream)
{
    if (n < 1)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    compare_part *parts = (compare_part *)scratch;
    const int chunks = check_chunks(shape);
    check_slots_kernel<<<dim3(chunks, n), CHECK_THREADS, 0, s>>>(slots, shape, row_shift, seed,
                                                                 parts);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    check_final_kernel<<<n, CHECK_THREADS, 0, s>>>(parts, chunks, sums);
    return (int)cudaGetLastError();
}

// Each slot's output written as a launch under the slot's signs computes it: the reference with
// those signs, rounded to the dtype, every element (a slot per blockIdx.y).
__global__ void fill_slots_kernel(const fa_slot *slots, fa_shape sh)
{
    const fa_slot &sl = slots[blockIdx.y];
    const size_t n = (size_t)sh.slices * sh.seq_len * sh.head_dim;
    unsigned short *o = (unsigned short *)sl.o;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float x = sl.ref[i];
        const bool neg =
            slot_negated(sl, sh, (long)(i / (size_t)sh.head_dim), (int)(i % (size_t)sh.head_dim));
        o[i] = fa_elem_bits(neg ? -x : x, sh.dtype);
    }
}

extern "C" int fa_fill_slots_launch(const fa_slot *slots, int n, fa_shape shape, fa_stream stream)
{
    if (n < 1)
        return 0;
    if (n > 65535 || shape.head_dim % FA_SIGN_GROUPS != 0)
        return (int)cudaErrorInvalidValue;
    fill_slots_kernel<<<dim3(CHECK_BLOCKS / 8, n), CHECK_THREADS, 0, (cudaStream_t)stream>>>(slots,
                                                                                             shape);
    return (int)cudaGetLastError();
}

// Elements whose 16 bits differ between a and b.
__global__ void diff_count_kernel(const unsigned short *a, const unsigned short *b, size_t n,
                                  unsigned long long *count)
{
    unsigned long long c = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c += a[i] != b[i];
    for (int off = 16; off > 0; off /= 2)
        c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(count, c);
}

extern "C" int fa_diff_count_launch(const void *a, const void *b, size_t n,
                                    unsigned long long *count, fa_stream stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = cudaMemsetAsync(count, 0, sizeof *count, s);
    if (e != cudaSuccess)
        return (int)e;
    diff_count_kernel<<<CHECK_BLOCKS, CHECK_THREADS, 0, s>>>((const unsigned short *)a,
                                                             (const unsigned short *)b, n, count);
    return (int)cudaGetLastError();
}

// The sum over elements of mix64(index, bits) modulo 2^64, the bits with
// the signs of the item's pattern undone: an addition, so the order (and
// the number of blocks) does not change it; any changed element changes
// it. One item per blockIdx.y, summed on the device.
__global__ void hash_kernel(const fa_hash_item *items, unsigned long long *out)
{
    const fa_hash_item &it = items[blockIdx.y];
    const unsigned short *x = (const unsigned short *)it.x;
    const int group_cols = it.shape.head_dim / FA_SIGN_GROUPS;
    const unsigned row_len = (unsigned)it.shape.head_dim;
    unsigned long long h = 0;
    // row by row (a row never crosses a slice): one division per row
    const size_t rows = it.n / row_len;
    for (size_t r = (size_t)blockIdx.x * (CHECK_THREADS / 32) + threadIdx.x / 32; r < rows;
         r += (size_t)gridDim.x * (CHECK_THREADS / 32)) {
        const unsigned bits = slice_bits(it.signs, (int)(r / (size_t)it.shape.seq_len));
        for (unsigned c = threadIdx.x & 31; c < row_len; c += 32) {
            const size_t i = r * row_len + c;
            unsigned b = x[i];
            if ((bits >> (c / group_cols)) & 1u)
                b ^= 0x8000u;
            h += mix64(0x94d049bb133111ebULL * (i + 1) ^ b);
        }
    }
    for (int off = 16; off > 0; off /= 2)
        h += __shfl_down_sync(0xffffffffu, h, off);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(&out[blockIdx.y], h);
}

extern "C" int fa_hash_launch(const fa_hash_item *items, int n, unsigned long long *out,
                              fa_stream stream)
{
    if (n < 1)
        return 0;
    cudaStream_t s = (cudaStream_t)stream;
    cudaError_t e = cudaMemsetAsync(out, 0, (size_t)n * sizeof *out, s);
    if (e != cudaSuccess)
        return (int)e;
    hash_kernel<<<dim3(CHECK_BLOCKS / 8, n), CHECK_THREADS, 0, s>>>(items, out);
    return (int)cudaGetLastError();
}
