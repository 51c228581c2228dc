/* dispatch.h - which pending task a free worker of a several-GPU sweep
 * takes next (sweep/run.c's scheduler). Pure: no processes, no CUDA, so the
 * policy has unit tests on a machine without a GPU (tests/unit/test_dispatch.c).
 *
 * A worker computes the inputs and the fp32 reference of each problem it
 * meets (the costly part of a task's setup), so a worker stays on the
 * problem it has set up; a worker without one (or whose problem is done)
 * takes a problem no other worker is on; only when every pending problem is
 * taken does it join one. With several problems each reference is then
 * computed about once per problem, not once per worker.
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include <stddef.h>

/* The task a free worker takes: the index of a pending task (pending[i]
 * non-zero) among n, problem_of[i] its problem; own is the worker's set-up
 * problem (-1: none); held[0..n_held) the problems the other workers are on.
 * Returns the first pending task of `own` if any, else the first pending
 * task of a problem no other worker holds, else the first pending task, else
 * n (nothing left). */
size_t dispatch_pick(const int *problem_of, const unsigned char *pending, size_t n, int own,
                     const int *held, int n_held);

#endif /* DISPATCH_H */
