// reference.cu - plain fp32 attention on the GPU, the yardstick every kernel
// point is checked against. Exact expf; two passes over the keys (max, then
// sum and weighted V); no 16-bit arithmetic and no code shared with the
// kernels. It is itself checked against the fp64 CPU version
// (kernels/ref_cpu.c) by the GPU tests.
//
// The layout is for the sweep's setups, which run three full references a
// problem (one thread per row spilled its q and accumulator and read K and V
// 16 bits at a time: 2.4-3.4x slower at D 64 and 128, 10-22x at D 256 on an
// H100; sweep/NOTES-engine.md, eleventh session). A query row is
// REF_LANES(D) = D/32 adjacent lanes of a warp, each holding 32 of the
// row's dims in registers; a block's rows share each tile of keys, K and V
// converted to fp32 once into shared memory. A score is each lane's partial
// dot product over its dims, summed over the row's lanes by an xor tree, so
// every lane of the row holds the same score, maximum, P and sum.
//
// The same loops with ROUND set compute attention the way any kernel of the
// problem's dtype must, rounding to that dtype where its data has to be
// 16-bit: the probabilities P fed to the 16-bit P V product, and the output
// (written as a tensor of that dtype). The scores stay fp32, as a kernel
// may keep them. Its error
// against the fp32 reference is what the dtype itself costs, the yardstick
// of the tolerance (sweep/guard.h, docs/measurement.md: "Tolerances").
#include <cuda_runtime.h>
#include <math.h>

#include "fa_elem.cuh"
#include "fa_launch.h"

// A float rounded to dt and read back, as a kernel's 16-bit operand holds it.
__device__ __forceinline__ float ref_round(float x, int dt)
{
    return fa_elem_float(fa_elem_bits(x, dt), dt);
}

enum {
    REF_THREADS = 256,     // a block
    REF_DIMS = 32,         // a lane's dims of its row
    REF_TILE_FLOATS = 4096 // a tile: 4096 / D keys, 16 KB of fp32 for K and again for V
};
#define REF_LANES(D) ((D) / REF_DIMS)

// The REF_TILE_FLOATS / D keys of K or V's head (its first element at head0)
// from key j0 into tile[key][dim] as fp32, zeros past the sequence.
template <int D>
__device__ __forceinline__ void ref_tile(float *tile, const unsigned short *x, long head0, int j0,
                                         int seq, int dt)
{
    for (int e = threadIdx.x; e < REF_TILE_FLOATS; e += REF_THREADS) {
        const int j = j0 + e / D;
        tile[e] = j < seq ? fa_elem_float(x[head0 + (long)j * D + e % D], dt) : 0.f;
    }
}

// A lane's float4 chunk c (of REF_DIMS / 4) of its row, counted in float4s
// from the row's start: part's chunks interleaved with the row's other lanes',
// so the row's lanes read adjacent 16 bytes of shared memory.
template <int D> __device__ __forceinline__ int ref_chunk(int c, int part)
{
    return c * REF_LANES(D) + part;
}

// This lane's part of its row's dot product with tile row t (its chunks,
// ref_chunk), then the xor tree over the row's lanes.
template <int D>
__device__ __forceinline__ float ref_score(const float4 *qf, const float *tile, int t, int part)
{
    constexpr int L = REF_LANES(D);
    const float4 *k = (const float4 *)(tile + t * D);
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < REF_DIMS / 4; c++) {
        const float4 kk = k[ref_chunk<D>(c, part)];
        s += qf[c].x * kk.x;
        s += qf[c].y * kk.y;
        s += qf[c].z * kk.z;
        s += qf[c].w * kk.w;
    }
#pragma unroll
    for (int m = L / 2; m > 0; m /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, m);
    return s;
}

// One block: ROWS = REF_THREADS / lanes query rows of one head (blockIdx.x =
// head * row tiles + row tile), the keys a tile at a time.
template <int D, bool ROUND>
__global__ void __launch_bounds__(REF_THREADS)
    reference_kernel(const unsigned short *q, const unsigned short *k, const unsigned short *v,
                     void *o, int seq, int group, int causal, float scale, int dt)
{
    constexpr int L = REF_LANES(D), ROWS = REF_THREADS / L, KT = REF_TILE_FLOATS / D;
    __shared__ __align__(16) float ks[REF_TILE_FLOATS], vs[REF_TILE_FLOATS];
    const int tiles = (seq + ROWS - 1) / ROWS;
    const long head = blockIdx.x / tiles, kv_head = head / group; // GQA: group heads per K/V head
    const int i0 = (int)(blockIdx.x % tiles) * ROWS;
    const int i = i0 + (int)threadIdx.x / L, part = (int)threadIdx.x % L;
    const long row = head * seq + i, kh = kv_head * seq * D;
    // a row past the sequence computes with row 0's q and writes nothing
    const int live = i < seq, n_keys = !live ? 0 : causal ? i + 1 : seq;
    const int last = i0 + ROWS < seq ? i0 + ROWS : seq; // the block's rows end here
    const int block_keys = causal ? last : seq;
    float4 qf[REF_DIMS / 4], acc[REF_DIMS / 4];
#pragma unroll
    for (int c = 0; c < REF_DIMS / 4; c++) {
        const long d = (long)ref_chunk<D>(c, part) * 4, at = (live ? row : head * seq) * D + d;
        qf[c] = make_float4(fa_elem_float(q[at], dt), fa_elem_float(q[at + 1], dt),
                            fa_elem_float(q[at + 2], dt), fa_elem_float(q[at + 3], dt));
        acc[c] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float mx = -INFINITY;
    for (int j0 = 0; j0 < block_keys; j0 += KT) {
        __syncthreads();
        ref_tile<D>(ks, k, kh, j0, seq, dt);
        __syncthreads();
        for (int t = 0; t < KT && j0 + t < block_keys; t++) {
            const float s = ref_score<D>(qf, ks, t, part);
            if (j0 + t < n_keys)
                mx = fmaxf(mx, s * scale);
        }
    }
    float sum = 0.f;
    for (int j0 = 0; j0 < block_keys; j0 += KT) {
        __syncthreads();
        ref_tile<D>(ks, k, kh, j0, seq, dt);
        ref_tile<D>(vs, v, kh, j0, seq, dt);
        __syncthreads();
        for (int t = 0; t < KT && j0 + t < block_keys; t++) {
            const float s = ref_score<D>(qf, ks, t, part);
            if (j0 + t >= n_keys)
                continue;
            float p = expf(s * scale - mx);
            if (ROUND)
                p = ref_round(p, dt);
            sum += p;
            const float4 *vv = (const float4 *)(vs + t * D);
#pragma unroll
            for (int c = 0; c < REF_DIMS / 4; c++) {
                const float4 x = vv[ref_chunk<D>(c, part)];
                acc[c].x += p * x.x;
                acc[c].y += p * x.y;
                acc[c].z += p * x.z;
                acc[c].w += p * x.w;
            }
        }
    }
    // A row past the sequence writes nothing. ROUND: the output is a tensor of
    // the dtype, as a kernel's; else fp32.
    if (!live)
        return;
#pragma unroll
    for (int c = 0; c < REF_DIMS / 4; c++) {
        const long at = row * D + (long)ref_chunk<D>(c, part) * 4;
        const float r[4] = {acc[c].x / sum, acc[c].y / sum, acc[c].z / sum, acc[c].w / sum};
        for (int e = 0; e < 4; e++)
            if (ROUND)
                ((unsigned short *)o)[at + e] = fa_elem_bits(r[e], dt);
            else
                ((float *)o)[at + e] = r[e];
    }
}

template <bool ROUND> static int ref_launch(const fa_args *a, void *o_ref, fa_stream stream)
{
    if (a->kv_heads < 1 || a->heads % a->kv_heads != 0)
        return (int)cudaErrorInvalidValue;
    const long heads = (long)a->batch * a->heads;
    const unsigned short *q = (const unsigned short *)a->q, *k = (const unsigned short *)a->k,
                         *v = (const unsigned short *)a->v;
    const int group = a->heads / a->kv_heads;
    cudaStream_t s = (cudaStream_t)stream;
#define FA_REF(D)                                                                                  \
    do {                                                                                           \
        const long rows = REF_THREADS / REF_LANES(D),                                              \
                   blocks = heads * ((a->seq_len + rows - 1) / rows);                              \
        if (blocks > 0x7fffffffL)                                                                  \
            return (int)cudaErrorInvalidConfiguration;                                             \
        reference_kernel<D, ROUND><<<(unsigned)blocks, REF_THREADS, 0, s>>>(                       \
            q, k, v, o_ref, a->seq_len, group, a->causal, a->softmax_scale, a->dtype);             \
    } while (0)
    if (a->head_dim == 64)
        FA_REF(64);
    else if (a->head_dim == 128)
        FA_REF(128);
    else if (a->head_dim == 256)
        FA_REF(256);
    else
        return (int)cudaErrorInvalidValue;
#undef FA_REF
    return (int)cudaGetLastError();
}

extern "C" int fa_reference_launch(const fa_args *a, float *o_ref, fa_stream stream)
{
    return ref_launch<false>(a, o_ref, stream);
}

extern "C" int fa_reference_rounded_launch(const fa_args *a, void *o, fa_stream stream)
{
    return ref_launch<true>(a, o, stream);
}
