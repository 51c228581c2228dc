/* guard.h - what makes a timing trustworthy: the inputs a kernel under test
 * sees, the gate it passes before it is timed, and the check of every timed
 * launch after it (docs/measurement.md, "What is checked"). Runs inside the
 * CUDA worker; sweep/measure.c drives it.
 *
 * A kernel written by an evolution loop may be fast because it skips work:
 * it computes only on its first launches, only where the output still holds
 * the gate's NaN poison, returns early when it has seen its inputs before
 * (by pointer or by a sample of them), keeps a copy of an earlier output,
 * writes part of the output, works on another stream, or changes its
 * inputs. A gate that checks one launch admits all of these. Here:
 *
 *  - Inputs: two random input sets (q, k, v, fp32 reference each). V
 *    changes before every timed sample by sign flips of a random part of it
 *    (fa_launch.h: fa_signs): attention is linear in V column by column,
 *    so the expected output is the reference with the same signs, exact,
 *    and no launch ever sees inputs an earlier launch saw. Every launch of
 *    a batch sample reads its own V (a pool of copies, flipped apart).
 *  - Outputs: every timed launch of a block writes its own buffer of a
 *    ring, whose content is the output of an earlier block (other signs:
 *    wrong for this launch; a new ring's buffers are filled as outputs of
 *    random signs, never NaN). A launch that skips any part of its work,
 *    or computes only where it finds the gate's NaN, leaves wrong values
 *    there.
 *  - After the block (outside its events), every launch's buffer is
 *    compared with its expected output on a random eighth of its rows, the
 *    rows drawn after the launch ran.
 *  - The gate (once per config and worker): the launch is captured into a
 *    graph on the stream it is given (no kernel there: refused, `stream`),
 *    that graph alone runs on NaN-poisoned output and is checked in full
 *    (`gate`); a second launch on the same inputs must agree bit for bit
 *    (`repeat`); the second input set (`gate`); a 1x2x317 problem, where
 *    no tile size divides S (`tails`); inputs whose scores sit near +130, so
 *    a kernel without the running-max subtraction overflows (`magnitude`);
 *    and the inputs unchanged afterwards (`inputs`).
 *  - The inputs are checked unchanged again after every mode's timing.
 * A refusal's text starts with the check's name and a colon (GUARD_CHECKS).
 */
#ifndef GUARD_H
#define GUARD_H

#include <stddef.h>

#include "../kernels/fa_launch.h"
#include "stats.h"
#include "task.h"

/* The checks' names are task.h's task_checks, in the order they run; the
 * floor check (status implausible) is measure.c's. A refusal's text starts
 * "NAME: ". */

/* Samples a timed block holds at most (measure.c keeps an event pair for
 * each). */
#define GUARD_BLOCK_MAX 16
/* Rows of a timed launch's output checked: 1 in 2^GUARD_ROW_SHIFT. */
#define GUARD_ROW_SHIFT 3
/* The odd-shaped problem of the tails check: batch 1, 2 heads, this S. */
#define GUARD_TAIL_SEQ 317

typedef struct guard guard;

/* A guard on `stream`, its random numbers from seed. Returns NULL when out
 * of host memory. */
guard *guard_open(fa_stream stream, unsigned long long seed);
void guard_close(guard *g);

/* The text of the last CUDA failure ("what: cudaErrorX: description"). */
const char *guard_err(const guard *g);

/* Makes p's inputs, references and the tails problem current (nothing when
 * they are). Returns 0, or -1 after a CUDA failure or a reference that is
 * not finite (guard_err). */
int guard_problem(guard *g, const space_problem *p);

/* The timed buffers (q and k of both input sets, the V pool, the output
 * ring) placed for a round of the sweep (task.round): the first call after
 * guard_problem only notes the round; a call for another round moves them
 * to new device memory, behind a pad of random size (contents kept: the
 * ring's buffers hold earlier outputs, as before). Where in memory a buffer sits can make a kernel
 * a little faster or slower for as long as it stays there: moved every round, that is a difference
 * between rounds, which the pooled intervals see, rather than an offset of the whole run, which
 * they cannot (docs/measurement.md, "Intervals"; the worker's stream and events are made anew with
 * them: sweep/measure.c). Where the memory does not allow the move, the buffers stay. Returns 1
 * when they moved, 0 when not, -1 after a CUDA failure (guard_err). */
int guard_place(guard *g, int round);

/* The stream the guard queues its work on from now (the worker makes its
 * stream anew each round: sweep/measure.c). */
void guard_stream(guard *g, fa_stream stream);

/* Whether p's inputs and references are current (guard_problem would make nothing). */
int guard_holds(const guard *g, const space_problem *p);

/* The gate of instance `in` (inject: run the injected kernel instead, for
 * the isolation tests). *e gets the first launch's errors, *gate_us the
 * event time of one plain launch. Returns 0 when it passed, 1 when refused
 * (the reason in why, starting with the check's name), -1 after a CUDA
 * failure (guard_err). */
int guard_gate(guard *g, const fa_instance *in, task_inject inject, const space_tolerance *tol,
               stats_errors *e, double *gate_us, char *why, size_t n);

/* The arguments of an untimed launch (warm-up, clock64): the first input
 * set, a scratch output. */
const fa_args *guard_args(guard *g);

/* Room for blocks of *launches launches per sample: the V pool and the
 * output ring grown as needed; *launches is cut to what memory allows.
 * Returns the most samples a block may hold (>= 1), or -1 after a CUDA
 * failure. */
int guard_room(guard *g, int *launches);

/* A block of `samples` samples of `launches` launches (within guard_room):
 * draws each sample's input set and sign flips and queues the block's
 * table. Then per sample: guard_sample (queues its flips, before its
 * events) and guard_launch_args for each launch; after the block's last
 * event guard_block_check, and after the stream synchronised
 * guard_block_verdict (0 all right, 1 a launch's output wrong: why).
 * -1 after a CUDA failure. */
int guard_block(guard *g, int samples, int launches);
int guard_sample(guard *g, int sample);
const fa_args *guard_launch_args(guard *g, int sample, int launch);
int guard_block_check(guard *g);
int guard_block_verdict(guard *g, const space_tolerance *tol, char *why, size_t n);

/* Whether the inputs are what they were made as (synchronous): 0 yes, 1 a
 * tensor changed (why; the problem's inputs are then made afresh, so the
 * next config is not judged on them), -1 after a CUDA failure. */
int guard_inputs(guard *g, char *why, size_t n);

#endif /* GUARD_H */
