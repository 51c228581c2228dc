// inject.cu - a faulting and a hanging kernel for the engine's isolation
// tests (contract: inject.h). Both are tiny: one warp, no shared memory.
#include <cuda_runtime.h>
#include <stdint.h>

#include "inject.h"

// The address the fault kernel writes to: the first page of the device's
// virtual address space is never mapped, and the value reaches the kernel
// as an argument, so the compiler cannot drop or fold the store.
#define INJECT_BAD_ADDRESS ((uintptr_t)0x10)

__global__ void inject_fault_kernel(int *bad)
{
    if (threadIdx.x == 0)
        *(volatile int *)bad = 1;
}

// Never written by anyone: the hang kernel waits for it forever. The loop
// reads through a volatile pointer, so it is not an empty loop the compiler
// may assume terminates.
__device__ int inject_release;

__global__ void inject_hang_kernel(void)
{
    volatile int *flag = &inject_release;
    while (*flag == 0)
        __nanosleep(1000); // spin politely: the GPU stays cool while it "hangs"
}

extern "C" int fa_inject_fault_launch(fa_stream stream)
{
    inject_fault_kernel<<<1, 32, 0, (cudaStream_t)stream>>>((int *)INJECT_BAD_ADDRESS);
    return (int)cudaGetLastError();
}

extern "C" int fa_inject_hang_launch(fa_stream stream)
{
    inject_hang_kernel<<<1, 32, 0, (cudaStream_t)stream>>>();
    return (int)cudaGetLastError();
}
