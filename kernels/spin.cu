// spin.cu - a one-thread kernel that busy-waits a number of clock cycles.
//
// Timing a short kernel with events around a single launch also times the
// host: the GPU records the start event, then idles until the host has
// submitted the launch. Queuing a spin first holds the stream while the
// host submits event, launch, event, ...; the GPU then runs them back to
// back and the events see only GPU time. One thread on one SM: it neither
// touches memory nor competes for the SMs the measured kernel will use
// (it finishes before the first timed launch starts).
#include <cuda_runtime.h>

#include "fa_launch.h"

__global__ void spin_kernel(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

extern "C" int fa_spin_launch(long long cycles, fa_stream stream)
{
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(cycles);
    return (int)cudaGetLastError();
}
