/* engine.h - the one engine call: measured tasks become stored records.
 *
 * Every command that measures goes through here: the sweep (run.c, one
 * task per accepted point), the refine pass (refine.c, more rounds of
 * the best) and `fasweep eval` (cli/cmd_eval.c, one point, a head-to-head
 * or kernel variants). The engine owns the CUDA workers (worker.h): one,
 * or one per GPU of a list, all of one model (records are keyed by it). It
 * hands each task (task.h) to a worker (with several, to whichever is
 * free, by the policy of dispatch.h), adds the provenance every record
 * carries (host, space name and hash, fasweep version, the time; a
 * variant's build, path and hash come with the worker's records), stores
 * each record the moment its task is over, and tells the caller, task by
 * task and record by record, through the hooks of an engine_sink.
 *
 * What the caller keeps: which tasks to run (resume, the refine
 * candidates, eval's arguments), the store (opened and closed by it), the
 * progress counts and what to print.
 *
 *   engine e;
 *   engine_open(&e, &opts);          workers started; e.dev names the GPU
 *   engine_measure(&e, st, jobs, n, ENGINE_PUT, &sink);
 *   engine_close(&e);
 *
 * Crash and hang isolation, the deadline and the one-replacement rule are
 * the worker's (worker.h); a kill of this process loses at most the tasks
 * in flight, since every record is committed before the next task starts.
 */
#ifndef ENGINE_H
#define ENGINE_H

#include <signal.h>
#include <stddef.h>

#include "../store/store.h"
#include "progress.h"
#include "task.h"
#include "worker.h"

#define ENGINE_MAX_DEVICES 16

typedef struct engine_options {
    int device;    /* CUDA ordinal of a one-worker engine */
    int n_devices; /* > 1: one worker per GPU of devices[], all of one model */
    int devices[ENGINE_MAX_DEVICES];
    const char *space_name, *space_hash; /* the records' provenance */
    progress *prog;                      /* progress line and notes; NULL: quiet */
    volatile sig_atomic_t *stop;         /* set (a SIGINT handler): no new task is handed out */
    int rounds;      /* rounds every job is measured in (the space's measure.rounds; 0 is 1) */
    double ci_floor; /* the intervals' floor (measure.ci_floor) */
    /* A shell command run (/bin/sh -c, its output to stderr, waited for) after each round of
     * engine_measure but the last that had jobs, while no worker has a task: other work that
     * wants the GPU alone and its own rounds as far apart as the sweep's (the main job's
     * baselines, scripts/run_default_sweep.sh). With several workers, round r + 1 then starts
     * only once every job of round r is done. A command that fails is said once and not run
     * again; the sweep goes on. NULL: none. */
    const char *between_rounds;
} engine_options;

typedef struct engine_slot engine_slot; /* one worker of a several-GPU engine (engine.c) */

typedef struct engine {
    engine_options o;
    char host[64];
    task_device dev;    /* the GPU model the records' keys name (valid once open) */
    int gpu;            /* 1: the workers started */
    worker w;           /* the worker of a one-worker engine */
    engine_slot *slots; /* n_slots > 0: one per GPU */
    int n_slots;
    int interrupted;  /* the last engine_measure stopped at o.stop */
    double between_s; /* wall time in o.between_rounds, summed over engine_measure calls */
    int between_off;  /* o.between_rounds failed once: not run again */
    char err[1024];   /* the last failure, one line */
} engine;

/* Starts the workers (their HELLO names the GPU). Returns 0, or 1 with the
 * reason in e->err (also said to o->prog): no GPU, a worker that does not
 * start, GPUs of different models. The host name and the provenance are
 * set either way, so a record gets its provenance without a GPU. */
int engine_open(engine *e, const engine_options *o);

/* Stops the workers (no-op for those not running). */
void engine_close(engine *e);

/* One task to run: t, and its group (tasks of one group, e.g. one problem,
 * share a worker's inputs and reference: a several-GPU engine keeps a
 * worker on its group, dispatch.h). tag is the caller's, handed back. */
typedef struct engine_job {
    task t;
    int group;
    size_t tag;
    int first_round; /* rounds its records hold already (resume): it runs the rest */
    int pending;     /* set by engine_measure: 1 until handed out */
    int failed;      /* set by engine_measure: a record of it failed; no more rounds */
    long gated_by;   /* set by engine_measure: the worker process (pid) that gated it in
                        an earlier round of this call, 0 for none: a later round there
                        goes light (time only), and that worker takes it first */
    unsigned ran_on; /* set by engine_measure: a bit per GPU (slot) an earlier round ran on */
    int done;        /* set by engine_measure (several workers): ran, or dropped */
    double ran_s;    /* set by engine_measure (several workers): its task's wall seconds
                        (0: not run), what the dispatcher estimates the rest from */
} engine_job;

/* How a record goes into the store. */
typedef enum engine_keep {
    ENGINE_PUT,             /* always (store_put) */
    ENGINE_FAILED_IF_BETTER /* an ok record always; a failed one only over a failed one
                               (store_put_if_better): the refine pass */
} engine_keep;

/* The caller's hooks, each may be NULL. measured: a task's records as the
 * worker gave them, before any is stored (eval reads the stored best
 * here). stored: after each record is stored, with its provenance; idx is
 * its place in the task (config c, mode m: c * n_modes + m). done:
 * after all of a task's records, with the seconds spent inside its timed
 * launches. */
typedef struct engine_sink {
    void *ctx;
    void (*measured)(void *ctx, const engine_job *job, const record *recs, int n);
    void (*stored)(void *ctx, const engine_job *job, int idx, const record *r);
    void (*done)(void *ctx, const engine_job *job, double timed_s);
} engine_sink;

/* Runs jobs[0..n) in o.rounds rounds and stores their records by `keep`.
 * Rounds (honest error bars, docs/measurement.md "Intervals"): round r runs every
 * job with first_round <= r that has not failed, each group's jobs in its
 * list order rotated by r/rounds of its length (so no config is always
 * early or late in a round), the groups in list order in even rounds and
 * in reverse in odd ones (one worker starts a round on the problem it ended
 * the last one on: one setup fewer), all rounds on the same workers (a later
 * round on the worker that gated the job times it only: engine.c,
 * engine_light; FASWEEP_ROUND_WORKER=fresh starts every round on fresh
 * workers and barriers every round, a measurement hook).
 * A job's round 0 of this call replaces what its keys held (as before
 * rounds); a later round is folded into the stored record
 * (intervals_combine). After each round, every (problem, mode) it touched
 * gets its intervals (intervals_update). One worker: the rounds one after
 * another, each in order. Several: the rounds pipelined per group, a
 * barrier per group only (round r of a group starts when its round r - 1
 * is done, whatever the other groups are at), whichever worker is free
 * takes the next pending job by dispatch.h's policy (a later round's job
 * its own gater first), a GPU whose worker cannot start takes no more,
 * and a group's round done gets its intervals. Each task is labelled on
 * o.prog ("PROBLEM CONFIG MODES"). The sink's stored hook sees the record
 * as stored (all its rounds so far). Returns 0 when every job ran; 1 when
 * o.stop stopped it (e->interrupted) or no worker could run a job (e->err
 * said); -1 on a store error (e->err, said). */
int engine_measure(engine *e, store *st, engine_job *jobs, size_t n, engine_keep keep,
                   const engine_sink *sink);

/* r with its provenance into st by `keep`; with fold, r is one more round
 * of the record st holds for its key (intervals_combine), and r becomes
 * the record stored. Returns 0, or -1 with the reason in e->err (said to
 * o.prog). */
int engine_put(engine *e, store *st, record *r, engine_keep keep, int fold);

/* The kernel variant of t (t->variant loaded, one config) compiled for
 * the workers' GPU, or without one for this build's first architecture.
 * Returns 0 when ready (t->variant.so set); 1 when it does not compile:
 * *r is then its compile_error record (the compiler's lines joined in its
 * error, the GPU's name when there is one, provenance added) and log the
 * compiler's lines; -1 when it could not be tried, the reason in log. */
int engine_variant(engine *e, task *t, record *r, char *log, size_t loglen);

#endif /* ENGINE_H */
