/* inject.h - kernels that fail on purpose, for testing the sweep engine's
 * isolation (FASWEEP_INJECT="fault:CONFIG,hang:CONFIG", docs/measurement.md,
 * "Fault injection"). The worker launches one of them instead of the named
 * config's kernel at the correctness gate. Return values as in fa_launch.h
 * (a cudaError_t as an int; the fault itself shows at the next sync).
 */
#ifndef FA_INJECT_H
#define FA_INJECT_H

#include "fa_launch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel that stores through an unmapped device address: the next
 * synchronisation returns cudaErrorIllegalAddress, a sticky error that
 * leaves the CUDA context unusable. */
int fa_inject_fault_launch(fa_stream stream);

/* A kernel that spins until a device flag that nothing ever sets becomes
 * non-zero: it never ends, so only a timeout (killing the process) stops it. */
int fa_inject_hang_launch(fa_stream stream);

#ifdef __cplusplus
}
#endif
#endif /* FA_INJECT_H */
