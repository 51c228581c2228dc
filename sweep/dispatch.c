/* dispatch.c - the several-GPU pick policy (contract: dispatch.h). */
#include "dispatch.h"

static int dispatch_held(const int *held, int n_held, int problem)
{
    for (int k = 0; k < n_held; k++)
        if (held[k] == problem)
            return 1;
    return 0;
}

size_t dispatch_pick(const int *problem_of, const unsigned char *pending, size_t n, int own,
                     const int *held, int n_held)
{
    size_t first = n, fresh = n;
    for (size_t i = 0; i < n; i++) {
        if (!pending[i])
            continue;
        if (own >= 0 && problem_of[i] == own)
            return i;
        if (first == n)
            first = i;
        if (fresh == n && !dispatch_held(held, n_held, problem_of[i]))
            fresh = i;
    }
    return fresh < n ? fresh : first;
}
