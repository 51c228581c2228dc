/* refine.h - the refine pass of `fasweep grid --refine K`: the K best "ok"
 * records of this build per problem and mode re-measured more strictly,
 * head to head.
 *
 * One engine task (engine.h) gates and warms up up to TASK_MAX_CONFIGS of them (larger
 * K: groups in rank order), then times them in rounds, one block of
 * samples of each per round (measure.h), with half the space's noise
 * target and four times its max_samples and max_seconds: a drift of the
 * GPU between tasks cannot reorder configs whose medians are that close.
 * The new records replace the old ones (a failed one only replaces a failed
 * one), and the pass prints per problem and mode whether the order of the
 * re-measured configs held, with the statistical ties (record_tie).
 */
#ifndef REFINE_H
#define REFINE_H

#include <signal.h>
#include <stdio.h>

#include "../grid/plan.h"
#include "../grid/space.h"
#include "../store/store.h"
#include "engine.h"
#include "progress.h"
#include "task.h"

/* What the pass works with: the sweep's space, plan, store and engine. */
typedef struct refine_env {
    const space *s;
    const plan *p;
    store *st;
    engine *eng; /* open, with one worker; its dev names the GPU */
    progress *prog;
    FILE *out; /* the report and messages, NULL = quiet */
    const task_inject_rule *inject;
    int n_inject;
    int k;                       /* how many per problem and mode */
    volatile sig_atomic_t *stop; /* set: stop before the next head-to-head */
} refine_env;

/* Runs the pass. Returns 0, 1 when interrupted or no worker could run it
 * (*interrupted says which), -1 on a store error. */
int refine_run(const refine_env *e, int *interrupted);

#endif /* REFINE_H */
