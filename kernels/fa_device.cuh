// fa_device.cuh - device helpers both kernel families share (kernels/mma/flash_fwd.cuh and
// kernels/wgmma/flash_fwd_wgmma.cuh): one definition each. What an evolution may edit
// (the exp2 instruction, unroll factors) stays in the family's own template instead.
// kernels/ is on the include path (-Ikernels); a kernel variant has this header beside it.
#pragma once

#include <stdint.h>

#include "fa_config.h"
#include "fa_launch.h"

// Two floats as one b32 of two DT elements (FA_DTYPE_*, round to nearest), lo in the low
// half: the packed A operand of P V and the output's element pairs. The PTX that
// __floats2half2_rn and __floats2bfloat162_rn emit on sm_80 and later (cvt puts its first
// source in the upper half), written out so that no instance unit includes cuda_fp16.h and
// cuda_bf16.h: together they were 1.1 s of the 2.5 s of CPU every unit costs before its
// first instance (sweep/NOTES-engine.md, fourteenth session).
template <int DT> __device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
    uint32_t r;
    if constexpr (DT == FA_DTYPE_BF16)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// The GPU's nanosecond timer, one clock for every SM.
__device__ __forceinline__ unsigned long long fa_globaltimer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The clock of the per-tile records: the SM's cycles (clock64), or in a build with
// -DFA_CTA_CLOCK_NS=1 (FA_CTA_CLOCK_IS_NS, kernels/fa_launch.h; a diagnostic: fa_bench
// --timeline) the nanosecond timer, so tiles on different SMs line up in time.
__device__ __forceinline__ unsigned long long fa_cta_clock_now()
{
    return FA_CTA_CLOCK_IS_NS ? fa_globaltimer_ns() : (unsigned long long)clock64();
}

// The clock64 view of one query tile (fa_args.cta_clock, kernels/fa_launch.h): its start
// cycle, its end cycle (now) and the SM it ran on, at cta_clock[3 * tile], tile = the tile's
// linear index (the CTA's, where a CTA computes one tile; a persistent CTA writes one record
// per tile it takes). One thread of the CTA calls it, after the tile's last store.
__device__ __forceinline__ void fa_cta_clock_write(unsigned long long *cta_clock, size_t tile,
                                                   unsigned long long t_start)
{
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    cta_clock[3 * tile + 0] = t_start;
    cta_clock[3 * tile + 1] = fa_cta_clock_now();
    cta_clock[3 * tile + 2] = smid;
}
