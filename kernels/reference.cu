// reference.cu - plain fp32 attention on the GPU, the yardstick every kernel
// point is checked against. One thread per query row; exact expf; two
// passes over the keys (max, then sum and weighted V). Slow on purpose: it
// has no tiling, no 16-bit arithmetic and nothing shared with the kernel.
// It is itself checked against the fp64 CPU version (kernels/ref_cpu.c) by
// the GPU tests.
//
// The same loops with ROUND set compute attention the way any kernel of the
// problem's dtype must, rounding to that dtype where its data has to be
// 16-bit: the probabilities P fed to the 16-bit P V product, and the output
// (written as a tensor of that dtype). The scores stay fp32, as a kernel
// may keep them. Its error
// against the fp32 reference is what the dtype itself costs, the yardstick
// of the tolerance (sweep/guard.h, docs/measurement.md: "Tolerances").
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "fa_launch.h"

// Element i of a 16-bit tensor of type dt as a float; a float rounded to dt.
__device__ __forceinline__ float ref_in(const unsigned short *x, long i, int dt)
{
    return dt == FA_DTYPE_BF16 ? __uint_as_float((unsigned)x[i] << 16)
                               : __half2float(__ushort_as_half(x[i]));
}
__device__ __forceinline__ unsigned short ref_bits(float x, int dt)
{
    return dt == FA_DTYPE_BF16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                               : __half_as_ushort(__float2half_rn(x));
}
__device__ __forceinline__ float ref_round(float x, int dt)
{
    const unsigned short b = ref_bits(x, dt);
    return ref_in(&b, 0, dt);
}

template <int D, bool ROUND>
__global__ void reference_kernel(const unsigned short *q, const unsigned short *k,
                                 const unsigned short *v, void *o, long rows, int seq, int group,
                                 int causal, float scale, int dt)
{
    const long row = (long)blockIdx.x * blockDim.x + threadIdx.x; // over B*H*S
    if (row >= rows)
        return;
    const long head = row / seq, kv_head = head / group; // GQA: group query heads per K/V head
    const int i = (int)(row % seq);
    const long qi = row * D;
    const long kh = kv_head * seq * D;
    float qf[D];
    for (int d = 0; d < D; d++)
        qf[d] = ref_in(q, qi + d, dt);
    const int n_keys = causal ? i + 1 : seq;
    float mx = -INFINITY;
    for (int j = 0; j < n_keys; j++) {
        float s = 0.f;
        for (int d = 0; d < D; d++)
            s += qf[d] * ref_in(k, kh + (long)j * D + d, dt);
        mx = fmaxf(mx, s * scale);
    }
    float acc[D];
    for (int d = 0; d < D; d++)
        acc[d] = 0.f;
    float sum = 0.f;
    for (int j = 0; j < n_keys; j++) {
        float s = 0.f;
        for (int d = 0; d < D; d++)
            s += qf[d] * ref_in(k, kh + (long)j * D + d, dt);
        float p = expf(s * scale - mx);
        if (ROUND)
            p = ref_round(p, dt);
        sum += p;
        for (int d = 0; d < D; d++)
            acc[d] += p * ref_in(v, kh + (long)j * D + d, dt);
    }
    // ROUND: the output is a tensor of the dtype, as a kernel's; else fp32.
    for (int d = 0; d < D; d++)
        if (ROUND)
            ((unsigned short *)o)[row * D + d] = ref_bits(acc[d] / sum, dt);
        else
            ((float *)o)[row * D + d] = acc[d] / sum;
}

template <bool ROUND> static int ref_launch(const fa_args *a, void *o_ref, fa_stream stream)
{
    if (a->kv_heads < 1 || a->heads % a->kv_heads != 0)
        return (int)cudaErrorInvalidValue;
    const long rows = (long)a->batch * a->heads * a->seq_len;
    const int threads = 128;
    const long blocks = (rows + threads - 1) / threads;
    const unsigned short *q = (const unsigned short *)a->q, *k = (const unsigned short *)a->k,
                         *v = (const unsigned short *)a->v;
    const int group = a->heads / a->kv_heads;
    cudaStream_t s = (cudaStream_t)stream;
#define FA_REF(D)                                                                                  \
    reference_kernel<D, ROUND><<<(unsigned)blocks, threads, 0, s>>>(                               \
        q, k, v, o_ref, rows, a->seq_len, group, a->causal, a->softmax_scale, a->dtype)
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
