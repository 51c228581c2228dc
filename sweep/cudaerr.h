/* cudaerr.h - a failed CUDA runtime call as one line of text, for the
 * worker-side modules that keep their last error in a char array (guard.c,
 * measure.c): "what: cudaErrorName: its description". One format, so a
 * refusal reads the same whichever module met it. */
#ifndef CUDAERR_H
#define CUDAERR_H

#include <cuda_runtime_api.h>
#include <stdio.h>

/* Writes "what: name: description" of e into err[n]; returns -1, the
 * caller's failure status, so a call site is one `return`. */
static inline int cuda_errf(char *err, size_t n, cudaError_t e, const char *what)
{
    snprintf(err, n, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
}

/* Runs call; on an error, writes it into the array err (a char array, not
 * a pointer: its size is taken here) and returns -1 from the caller. */
#define CUDA_TRY(err, call, what)                                                                  \
    do {                                                                                           \
        const cudaError_t e_ = (cudaError_t)(call);                                                \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_errf((err), sizeof(err), e_, (what));                                      \
    } while (0)

#endif /* CUDAERR_H */
