// spin.cu - a one-thread kernel that busy-waits a number of clock cycles,
// and a tensor-core load that says what clock the SMs hold under it.
//
// Timing a short kernel with events around a single launch also times the
// host: the GPU records the start event, then idles until the host has
// submitted the launch. Queuing a spin first holds the stream while the
// host submits event, launch, event, ...; the GPU then runs them back to
// back and the events see only GPU time. One thread on one SM: it neither
// touches memory nor competes for the SMs the measured kernel will use
// (it finishes before the first timed launch starts).
//
// A spin also measures the SM clock at that moment: cycles counted by
// clock64 over nanoseconds counted by %globaltimer, on one SM. The engine
// runs one ahead of every block of timed launches and one right after it,
// and so knows the clock a block ran at (docs/measurement.md).
// %globaltimer ticks coarsely on some GPUs (about 1 us seen on the H100):
// read at arbitrary moments, a 20 us spin's clock came out up to 5 % off
// (2085 MHz at a 1980 MHz clock). So the spin starts and ends on a tick
// edge (it waits for the timer to change, then reads clock64): the
// quantisation error is gone, only the edge loop's few cycles remain.
#include <cuda_runtime.h>
#include <stdint.h>

#include "fa_device.cuh" // fa_globaltimer_ns
#include "fa_launch.h"

// Waits for the next tick of %globaltimer: *g gets its new value, *c the
// cycle count right after it changed.
__device__ __forceinline__ void timer_edge(unsigned long long *g, long long *c)
{
    const unsigned long long g0 = fa_globaltimer_ns();
    unsigned long long g1;
    do
        g1 = fa_globaltimer_ns();
    while (g1 == g0);
    *c = clock64();
    *g = g1;
}

__global__ void spin_kernel(long long cycles, fa_clock_probe *probe)
{
    unsigned long long g0, g1;
    long long t0, t1;
    timer_edge(&g0, &t0);
    long long t = t0;
    while (t - t0 < cycles)
        t = clock64();
    timer_edge(&g1, &t1);
    if (probe)
        *probe = fa_clock_probe{(unsigned long long)t0, (unsigned long long)t1, g0, g1};
}

extern "C" int fa_spin_launch(long long cycles, fa_clock_probe *probe, fa_stream stream)
{
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(cycles, probe);
    return (int)cudaGetLastError();
}

// A power load like the sweep's own kernels: back-to-back mma.sync on
// registers in every warp, a few CTAs per SM, until ms of %globaltimer have
// passed. Each CTA's thread 0 records the clock over the second half.
__global__ void __launch_bounds__(256) load_kernel(unsigned long long ns, fa_clock_probe *probes)
{
    uint32_t a[4] = {threadIdx.x, 1u, 2u, 3u}, b0 = 0x3C003C00u, b1 = blockIdx.x;
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    const unsigned long long start = fa_globaltimer_ns();
    unsigned long long now = start, g_half = 0, c_half = 0;
    while (now - start < ns) {
#pragma unroll
        for (int i = 0; i < 64; i++)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
        now = fa_globaltimer_ns();
        if (!g_half && now - start >= ns / 2) {
            g_half = now;
            c_half = clock64();
        }
    }
    // (The asm is volatile: the mma are not optimised away, used or not.)
    if (threadIdx.x == 0 && probes)
        probes[blockIdx.x] =
            fa_clock_probe{c_half, (unsigned long long)clock64(), g_half, fa_globaltimer_ns()};
}

extern "C" int fa_load_launch(int ctas, double ms, fa_clock_probe *probes, fa_stream stream)
{
    if (ctas < 1 || !(ms > 0))
        return (int)cudaErrorInvalidValue;
    load_kernel<<<ctas, 256, 0, (cudaStream_t)stream>>>((unsigned long long)(ms * 1e6), probes);
    return (int)cudaGetLastError();
}
