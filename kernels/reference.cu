// reference.cu - plain fp32 attention on the GPU, the yardstick every kernel
// point is checked against. One thread per query row; exact expf; two
// passes over the keys (max, then sum and weighted V). Slow on purpose: it
// has no tiling, no fp16 arithmetic and nothing shared with the kernel.
// It is itself checked against the fp64 CPU version (kernels/ref_cpu.c) by
// the GPU tests.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "fa_launch.h"

template <int D>
__global__ void reference_kernel(const half *q, const half *k, const half *v, float *o, int rows,
                                 int seq, int causal, float scale)
{
    const long row = (long)blockIdx.x * blockDim.x + threadIdx.x; // over B*H*S
    if (row >= rows)
        return;
    const long head = row / seq;
    const int i = (int)(row % seq);
    const half *qi = q + row * D;
    const half *kh = k + head * seq * D, *vh = v + head * seq * D;
    float qf[D];
    for (int d = 0; d < D; d++)
        qf[d] = __half2float(qi[d]);
    const int n_keys = causal ? i + 1 : seq;
    float mx = -INFINITY;
    for (int j = 0; j < n_keys; j++) {
        float s = 0.f;
        for (int d = 0; d < D; d++)
            s += qf[d] * __half2float(kh[(long)j * D + d]);
        mx = fmaxf(mx, s * scale);
    }
    float acc[D];
    for (int d = 0; d < D; d++)
        acc[d] = 0.f;
    float sum = 0.f;
    for (int j = 0; j < n_keys; j++) {
        float s = 0.f;
        for (int d = 0; d < D; d++)
            s += qf[d] * __half2float(kh[(long)j * D + d]);
        const float p = expf(s * scale - mx);
        sum += p;
        for (int d = 0; d < D; d++)
            acc[d] += p * __half2float(vh[(long)j * D + d]);
    }
    for (int d = 0; d < D; d++)
        o[row * D + d] = acc[d] / sum;
}

extern "C" int fa_reference_launch(const fa_args *a, float *o_ref, fa_stream stream)
{
    const int rows = a->batch * a->heads * a->seq_len;
    const int threads = 128, blocks = (rows + threads - 1) / threads;
    const half *q = (const half *)a->q, *k = (const half *)a->k, *v = (const half *)a->v;
    cudaStream_t s = (cudaStream_t)stream;
    if (a->head_dim == 64)
        reference_kernel<64><<<blocks, threads, 0, s>>>(q, k, v, o_ref, rows, a->seq_len, a->causal,
                                                        a->softmax_scale);
    else if (a->head_dim == 128)
        reference_kernel<128><<<blocks, threads, 0, s>>>(q, k, v, o_ref, rows, a->seq_len,
                                                         a->causal, a->softmax_scale);
    else
        return (int)cudaErrorInvalidValue;
    return (int)cudaGetLastError();
}
