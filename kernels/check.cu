// check.cu - the correctness gate's GPU side: fresh random inputs, and the
// comparison of an fp16 output with the fp32 reference as sums in double
// (contract: fa_launch.h). Both stay on the GPU, so a gate of 33 M outputs
// costs a few milliseconds instead of a 66 MB copy and a host loop.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

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

__global__ void fill_random_kernel(half *x, size_t n, unsigned long long seed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long r = mix64(seed + 0x9e3779b97f4a7c15ULL * (i + 1));
        const double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); // [0, 1)
        x[i] = __float2half_rn((float)(2.0 * u - 1.0));
    }
}

extern "C" int fa_fill_random_launch(void *half_out, size_t n, unsigned long long seed,
                                     fa_stream stream)
{
    fill_random_kernel<<<CHECK_BLOCKS, CHECK_THREADS, 0, (cudaStream_t)stream>>>((half *)half_out,
                                                                                 n, seed);
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

__global__ void compare_kernel(const half *out, const float *ref, size_t n, compare_part *parts)
{
    compare_part p = {0, 0, 0, 0, ~0ULL, 0};
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const double r = ref[i];
        if (!isfinite(r))
            p.ref_nonfinite++;
        if (!out)
            continue;
        const double o = __half2float(out[i]);
        if (!isfinite(o)) {
            p.nonfinite++;
            p.first_bad = i < p.first_bad ? i : p.first_bad;
            continue;
        }
        const double d = fabs(o - r);
        p.diff2 += d * d;
        p.ref2 += r * r;
        p.max_abs = max_nan(p.max_abs, d);
    }
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

extern "C" int fa_compare_launch(const void *half_out, const float *ref, size_t n, void *scratch,
                                 fa_compare_sums *sums, fa_stream stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    compare_part *parts = (compare_part *)scratch;
    compare_kernel<<<CHECK_BLOCKS, CHECK_THREADS, 0, s>>>((const half *)half_out, ref, n, parts);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    compare_final_kernel<<<1, CHECK_THREADS, 0, s>>>(parts, sums);
    return (int)cudaGetLastError();
}
