/* refine.h - the refine pass of `fasweep grid --refine K`: the K best "ok"
 * records of this build per problem and mode measured in more rounds.
 *
 * Each of them gets measure.rounds more rounds of the sweep's own task (one
 * config, the space's own settings), all in one engine call so the rounds
 * of every candidate interleave; an ok round is folded into the record (its
 * interval narrows), a failed one is stored only over a failed record. The
 * pass prints per problem and mode whether the order of the re-measured
 * configs held, with the statistical ties (record_tie).
 */
#ifndef REFINE_H
#define REFINE_H

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
    int k; /* how many per problem and mode */
} refine_env;

/* Runs the pass. Returns 0, 1 when interrupted or no worker could run it
 * (*interrupted says which), -1 on a store error. */
int refine_run(const refine_env *e, int *interrupted);

#endif /* REFINE_H */
