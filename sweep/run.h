/* run.h - the sweep: every accepted point of a plan checked and timed on
 * the GPU, each result committed to the store the moment it exists.
 *
 * The scheduler turns the plan into tasks (one per point, for the modes
 * it still needs), skips records whose key (device, problem, build,
 * config, mode) the store holds with all their rounds (resume: a record
 * with rounds missing gets only those; opts.remeasure measures everything
 * again), and hands each task to the engine (engine.h): one worker, or
 * one per GPU with --devices, the next task going to whichever is free.
 * Then, with opts.refine_k, the refine pass (refine.h), through the
 * engine as well.
 */
#ifndef RUN_H
#define RUN_H

#include <signal.h>
#include <stdio.h>

#include "../grid/plan.h"
#include "../grid/space.h"
#include "engine.h"

#define RUN_MAX_DEVICES ENGINE_MAX_DEVICES

typedef struct run_options {
    int device; /* CUDA device ordinal (default 0) */
    /* More than one: one worker process per listed GPU; the engine hands
     * each task to whichever worker is free and alone writes the store.
     * All listed GPUs must be the same model (records are keyed by it). */
    int n_devices;
    int devices[RUN_MAX_DEVICES];
    int remeasure; /* 1: measure even what the store has */
    int refine_k;  /* >0: the top K per problem and mode in more rounds */
    /* A shell command run between the sweep's rounds (not the refine's), while no worker has
     * a task (engine_options.between_rounds); NULL: none. */
    const char *between_rounds;
    FILE *progress; /* live progress and summary (stderr), NULL = quiet */
    /* Set to 1 (e.g. by a SIGINT handler) to stop after the current task. */
    volatile sig_atomic_t *stop;
} run_options;

typedef struct run_summary {
    long tasks;    /* records to make: accepted points x the space's modes */
    long measured; /* stored "ok" this run */
    long skipped;  /* already in the store */
    long rejected; /* points the plan rejected */
    long wrong, crashed, timeout;
    int interrupted;
    double wall_s;    /* whole run */
    double timed_s;   /* summed time inside timed launches */
    double between_s; /* of wall_s, in the --between-rounds command */
    int ref_mhz;      /* the calibrated SM clock under load, -1 unknown */
    long discarded;   /* timed blocks discarded for a clock under the threshold */
    long below;       /* ok records with blocks kept under it */
    char best_config[64];
    double best_us; /* of the best "ok" hot record this run, or 0 */
    char device[64];
    int rounds;         /* rounds per config (measure.rounds) */
    double ci_half_med; /* median relative half-width of the intervals this run set; NaN none */
} run_summary;

/* Measures every accepted point of p (built from s) for each of the
 * space's modes, into the store at store_path. Returns 0 when the sweep ran
 * to the end (even if some configs were wrong or crashed), 1 when it was
 * interrupted or the GPU could not be used (message printed to
 * opts->progress), -1 on a store error. */
int run_grid(const space *s, const plan *p, const char *store_path, const run_options *opts,
             run_summary *sum);

void run_print_summary(const run_summary *sum, FILE *out);

#endif /* RUN_H */
