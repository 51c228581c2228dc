/* dispatch.h - which pending task a free worker of a several-GPU sweep
 * takes next (sweep/engine.c's scheduler). Pure: no processes, no CUDA, so the
 * policy has unit tests on a machine without a GPU (tests/unit/test_dispatch.c).
 *
 * A worker computes the inputs and the fp32 reference of each problem it
 * meets (the costly part of a task's setup), so a worker stays on the
 * problem it has set up while it has a pending task there. Otherwise it
 * goes where it shortens the sweep most: to the problem with the most work
 * left per worker on it (its tasks' estimated seconds still to run, pending,
 * running or in a later round, over one plus the other workers on it), so
 * the longest problem gets the most GPUs and a nearly done one none. With
 * no estimates (work NULL) the older rule: a problem no other worker holds,
 * else the first pending task.
 *
 * Within that problem, a later round of a config goes first to a GPU it has not
 * run on: the GPUs of one host differ (by up to 1.7 %, sweep/NOTES-engine.md,
 * twenty-first session), and rounds on several GPUs put that into the pooled
 * intervals; else back to the worker that gated it (a light round: no gate).
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include <stddef.h>

/* The task a free worker takes: the index of a pending task (pending[i]
 * non-zero) among n, problem_of[i] its problem, work[i] the seconds it is
 * estimated to run still (0 once done; NULL: no estimates); own is the
 * worker's set-up problem (-1: none); held[0..n_held) the problems the other
 * workers are on (one entry per worker). Returns the first pending task of
 * `own` if any; else the first pending task of the problem with the most
 * work per worker as above (ties: the one whose first pending task comes
 * first); else n (nothing pending). */
size_t dispatch_pick(const int *problem_of, const unsigned char *pending, const double *work,
                     size_t n, int own, const int *held, int n_held);

/* The pending task of task pick's problem (n: none) the worker takes: with cross, the first
 * whose config ran only on other GPUs (ran_on[i]: a bit per GPU, non-zero, without the worker's
 * `mine`); else the first it can run light (light[i]: this worker gated it); else pick. */
size_t dispatch_within(const int *problem_of, const unsigned char *pending, const unsigned *ran_on,
                       const unsigned char *light, size_t n, size_t pick, unsigned mine, int cross);

#endif /* DISPATCH_H */
