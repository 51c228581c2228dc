// fa_elem.cuh - one 16-bit element of a problem's dtype (FA_DTYPE_*, fa_config.h) as a
// float, and a float rounded to one (round to nearest even): the rule the fp32 reference
// (reference.cu) and the checks (check.cu) read and write tensors by. The kernel
// templates do not include it: the yardstick shares no code with what it checks.
#ifndef FA_ELEM_CUH
#define FA_ELEM_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fa_config.h"

__device__ __forceinline__ float fa_elem_float(unsigned short b, int dt)
{
    return dt == FA_DTYPE_BF16 ? __uint_as_float((unsigned)b << 16)
                               : __half2float(__ushort_as_half(b));
}

__device__ __forceinline__ unsigned short fa_elem_bits(float x, int dt)
{
    return dt == FA_DTYPE_BF16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                               : __half_as_ushort(__float2half_rn(x));
}

#endif
