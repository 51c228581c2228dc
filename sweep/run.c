/* run.c - the sweep's scheduler (contract: run.h).
 *
 * This process never calls CUDA: the engine's workers do (engine.h). The
 * scheduler makes the task list (resume: what the store holds is not in
 * it) and hands it to the engine, which commits every record before the
 * next task starts, so a kill of this process loses at most the tasks in
 * flight; the next run with the same arguments skips what is stored.
 */
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/fa_launch.h"
#include "../store/store.h"
#include "engine.h"
#include "intervals.h"
#include "progress.h"
#include "refine.h"
#include "task.h"

typedef struct run_ctx {
    const space *s;
    const plan *p;
    const run_options *o;
    run_summary *sum;
    store *st;
    engine eng;          /* its dev: the GPU model the keys name */
    long progress_total; /* records to store, one per mode and round */
    progress prog;
    FILE *out;             /* opts->progress, may be NULL */
    const char *mode_best; /* the mode "best" results are taken from */
    int n_inject;
    task_inject_rule inject[TASK_MAX_INJECT];
    /* best result this run per problem, for the progress line */
    char best_cfg[SPACE_MAX_PROBLEMS][64];
    double best_us[SPACE_MAX_PROBLEMS];
    double best_tflops; /* of sum->best_config */
} run_ctx;

/* FASWEEP_INJECT: test hook, see docs/measurement.md. */
static int run_inject_setup(run_ctx *c)
{
    char err[1200];
    c->n_inject = task_inject_parse(getenv("FASWEEP_INJECT"), c->inject, err, sizeof err);
    if (c->n_inject < 0) {
        progress_say(&c->prog, "%s", err);
        c->n_inject = 0;
        return -1;
    }
    for (int i = 0; i < c->n_inject; i++) {
        char cfg[64];
        fa_config_format(&c->inject[i].cfg, cfg, sizeof cfg);
        progress_say(&c->prog, "FASWEEP_INJECT: %s runs an injected %s kernel instead", cfg,
                     c->inject[i].kind == TASK_INJECT_FAULT ? "faulting" : "hanging");
    }
    return 0;
}

static int run_mode_index_of(const space *s, const char *mode)
{
    for (int i = 0; i < s->measure.n_modes; i++)
        if (strcmp(s->measure.modes[i], mode) == 0)
            return i;
    return -1;
}

/* ---- the task list -------------------------------------------------------------------------- */

/* One accepted point: the modes of it the store does not hold yet. Its
 * task measures them all, so they share one correctness gate. */
typedef struct run_item {
    int point;
    int n_need;
    int need[SPACE_MAX_MODES]; /* indices into the space's modes */
    int first_round;           /* rounds the needed modes hold already (resume) */
    int skip;                  /* nothing left to measure */
} run_item;

/* The task for one point's missing modes. */
static void run_make_task(const run_ctx *c, const run_item *it, task *t)
{
    const plan_point *pt = &c->p->points[it->point];
    memset(t, 0, sizeof *t);
    t->problem = c->s->problems[pt->problem];
    t->n_configs = 1;
    t->configs[0] = pt->cfg;
    t->inject[0] = task_inject_for(c->inject, c->n_inject, &pt->cfg);
    t->n_modes = it->n_need;
    for (int m = 0; m < it->n_need; m++)
        snprintf(t->modes[m], sizeof t->modes[m], "%s", c->s->measure.modes[it->need[m]]);
    t->measure = c->s->measure;
    t->tol = c->s->tolerance;
}

/* Whether a stored record is done: a failed one (not retried on resume),
 * one with all the space's rounds, or one from before rounds (no round
 * medians: it reads as it is, with no interval). Else *have gets its
 * rounds. */
static int run_done_record(const run_ctx *c, const record *r, int *have)
{
    *have = intervals_rounds_of(r);
    return r->status != RECORD_ST_OK || *have == 0 || *have >= c->s->measure.rounds;
}

/* Point pt's record of mode m as the store holds it, into *r (the key's fields set either
 * way): store_get's answer, or STORE_EINVAL for a key that cannot be made. */
static int run_held(const run_ctx *c, const plan_point *pt, int m, record *r)
{
    char key[RECORD_KEY_LEN];
    task_record_init(r, &c->eng.dev, &c->s->problems[pt->problem], &pt->cfg,
                     c->s->measure.modes[m]);
    return record_key(r, key, sizeof key) == 0 ? store_get(c->st, key, r) : STORE_EINVAL;
}

/* The task list: one item per accepted point, with the modes whose key the
 * store does not hold, or holds with rounds missing (resume; all of them
 * from round 0 with --remeasure). Returns the
 * list or NULL (message printed; *rc says -1 store error or 1 out of
 * memory). *stored gets the records the store holds already. */
static run_item *run_items(run_ctx *c, size_t *n_out, long *stored, int *rc)
{
    const int nm = c->s->measure.n_modes;
    run_item *items = calloc(c->p->n_accepted + 1, sizeof *items);
    *rc = 1;
    *stored = 0;
    if (!items) {
        progress_say(&c->prog, "out of memory for %zu tasks", c->p->n_accepted);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->p->n; i++) {
        const plan_point *pt = &c->p->points[i];
        if (pt->reason != PLAN_OK)
            continue;
        run_item *it = &items[n++];
        it->point = (int)i;
        it->first_round = RECORD_MAX_ROUNDS;
        for (int m = 0; m < nm; m++) {
            record r;
            const int src = c->o->remeasure ? STORE_NOTFOUND : run_held(c, pt, m, &r);
            int have = 0;
            if (src == STORE_OK && run_done_record(c, &r, &have)) {
                (*stored)++;
            } else if (src == STORE_OK || src == STORE_NOTFOUND || src == STORE_EDAMAGED) {
                /* a damaged record is measured again, which replaces it */
                it->need[it->n_need++] = m;
                if (have < it->first_round)
                    it->first_round = have;
            } else {
                progress_say(&c->prog, "reading the store failed: %s (%s)", store_strerror(src),
                             store_last_error(c->st));
                free(items);
                *rc = -1;
                return NULL;
            }
        }
        it->skip = it->n_need == 0;
        if (it->skip)
            it->first_round = 0;
    }
    *n_out = n;
    *rc = 0;
    return items;
}

/* ---- results -------------------------------------------------------------------------------- */

/* Counts a stored record and keeps the best results. */
static void run_tally(run_ctx *c, const plan_point *pt, const record *r)
{
    run_summary *sum = c->sum;
    /* The sweep runs compiled instances: never compile_error (counted as
     * crashed all the same should one come). */
    long *const count[] = {&sum->measured, &sum->wrong, &sum->crashed, &sum->timeout,
                           &sum->crashed};
    (*count[r->status])++;
    sum->discarded += r->clock.discarded;
    sum->below += r->clock.below == 1;
    if (r->clock.ref_mhz > 0)
        sum->ref_mhz = r->clock.ref_mhz;
    if (r->status != RECORD_ST_OK) {
        progress_say(&c->prog, "%s %s %s: %s: %s", r->problem, r->config, r->mode,
                     record_status_name(r->status), r->error);
        return;
    }
    if (strcmp(r->mode, c->mode_best) != 0)
        return;
    const int pi = pt->problem;
    if (c->best_us[pi] <= 0 || r->time.median_us < c->best_us[pi]) {
        c->best_us[pi] = r->time.median_us;
        snprintf(c->best_cfg[pi], sizeof c->best_cfg[pi], "%s", r->config);
    }
    /* Across problems, TFLOPS is the comparable number. */
    if (r->tflops > c->best_tflops || !sum->best_config[0]) {
        c->best_tflops = r->tflops;
        sum->best_us = r->time.median_us;
        snprintf(sum->best_config, sizeof sum->best_config, "%s", r->config);
    }
}

/* The engine's hooks: a stored record is counted and moves the progress
 * line on; a finished task adds its timed seconds. */
static void run_stored(void *ctx, const engine_job *job, int idx, const record *r)
{
    (void)idx;
    run_ctx *c = ctx;
    const plan_point *pt = &c->p->points[job->tag];
    /* A record is counted once: after its last round, or when it failed. */
    if (r->status != RECORD_ST_OK || job->t.round + 1 >= c->s->measure.rounds)
        run_tally(c, pt, r);
    char best[96] = "";
    if (c->best_us[pt->problem] > 0)
        snprintf(best, sizeof best, "%s %.2f us", c->best_cfg[pt->problem],
                 c->best_us[pt->problem]);
    progress_end_task(&c->prog, best[0] ? best : NULL);
}

static void run_done(void *ctx, const engine_job *job, double timed_s)
{
    (void)job;
    run_ctx *c = ctx;
    c->sum->timed_s += timed_s;
}

/* The engine's jobs for the items with modes left (tag: the plan point,
 * group: its problem), or NULL (out of memory, message printed). */
static engine_job *run_jobs(run_ctx *c, const run_item *items, size_t n, size_t *n_jobs)
{
    engine_job *jobs = calloc(n + 1, sizeof *jobs);
    if (!jobs) {
        progress_say(&c->prog, "out of memory for %zu tasks", n);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].skip)
            continue;
        run_make_task(c, &items[i], &jobs[k].t);
        jobs[k].first_round = items[i].first_round;
        c->progress_total += (long)items[i].n_need * (c->s->measure.rounds - items[i].first_round);
        jobs[k].group = c->p->points[items[i].point].problem;
        jobs[k++].tag = (size_t)items[i].point;
    }
    *n_jobs = k;
    return jobs;
}

/* ---- run_grid ------------------------------------------------------------------------------- */

static int run_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median relative half-width of the intervals of the plan's records
 * (NaN when none has one): what the summary says of them. */
static double run_ci_half_median(run_ctx *c)
{
    const int nm = c->s->measure.n_modes;
    double *h = malloc((c->p->n * (size_t)nm + 1) * sizeof *h);
    size_t k = 0;
    for (size_t i = 0; h && i < c->p->n; i++) {
        const plan_point *pt = &c->p->points[i];
        for (int m = 0; m < nm && pt->reason == PLAN_OK; m++) {
            record r;
            if (run_held(c, pt, m, &r) == STORE_OK && record_has_ci(&r))
                h[k++] = (r.time.ci_hi_us - r.time.ci_lo_us) / 2 / r.time.median_us;
        }
    }
    double med = NAN;
    if (k > 0) {
        qsort(h, k, sizeof *h, run_cmp_double);
        med = k % 2 ? h[k / 2] : (h[k / 2 - 1] + h[k / 2]) / 2;
    }
    free(h);
    return med;
}

/* The sweep proper: the task list, then the engine (one GPU or several).
 * Returns 0, 1 (interrupted or GPU unusable), -1 (store error). */
static int run_sweep(run_ctx *c)
{
    size_t n = 0, nj = 0;
    int rc;
    run_item *items = run_items(c, &n, &c->sum->skipped, &rc);
    engine_job *jobs = items ? run_jobs(c, items, n, &nj) : NULL;
    if (items && !jobs)
        rc = 1;
    if (jobs) {
        if (c->sum->skipped)
            progress_say(&c->prog, "%ld of %ld tasks are in the store already and are skipped%s",
                         c->sum->skipped, c->sum->tasks,
                         c->o->n_devices > 1 || c->sum->skipped == c->sum->tasks ? ""
                                                                                 : " (resume)");
        progress_start(&c->prog, c->out, c->progress_total);
        const engine_sink sink = {c, NULL, run_stored, run_done};
        progress_phase("tasks listed");
        rc = engine_measure(&c->eng, c->st, jobs, nj, ENGINE_PUT, &sink);
        c->sum->interrupted |= c->eng.interrupted;
        c->sum->between_s = c->eng.between_s;
        progress_finish(&c->prog);
        progress_phase("tasks run");
    }
    if (c->o->n_devices > 1) /* the refine pass starts its own worker */
        engine_close(&c->eng);
    free(jobs);
    free(items);
    return rc;
}

/* The engine's options: the run's GPUs, the space's provenance. */
static engine_options run_engine_options(run_ctx *c)
{
    engine_options eo;
    memset(&eo, 0, sizeof eo);
    eo.device = c->o->device;
    eo.n_devices = c->o->n_devices;
    memcpy(eo.devices, c->o->devices, sizeof eo.devices);
    eo.space_name = c->s->name;
    eo.space_hash = c->s->hash;
    eo.prog = &c->prog;
    eo.stop = c->o->stop;
    eo.rounds = c->s->measure.rounds;
    eo.ci_floor = c->s->measure.ci_floor;
    eo.between_rounds = c->o->between_rounds;
    return eo;
}

static int run_start(run_ctx *c, const char *store_path)
{
    if (run_inject_setup(c))
        return 1;
    char err[1024] = "";
    const int src = store_open(store_path, 0, &c->st, err, sizeof err);
    if (src != STORE_OK) {
        progress_say(&c->prog, "%s", err[0] ? err : store_strerror(src));
        c->st = NULL;
        return -1;
    }
    /* The workers' HELLO names the GPU model, which the keys need. */
    const engine_options eo = run_engine_options(c);
    if (engine_open(&c->eng, &eo) != 0)
        return 1;
    snprintf(c->sum->device, sizeof c->sum->device, "%s", c->eng.dev.name);
    return 0;
}

/* The refine pass, on one worker (started on the first GPU when the sweep
 * used several). */
static int run_refine(run_ctx *c)
{
    if (c->o->n_devices > 1) {
        engine_options eo = run_engine_options(c);
        eo.n_devices = 0;
        if (engine_open(&c->eng, &eo) != 0)
            return 1;
    }
    c->eng.o.between_rounds = NULL; /* the sweep's rounds only */
    const refine_env e = {c->s,   c->p,      c->st,       &c->eng,       &c->prog,
                          c->out, c->inject, c->n_inject, c->o->refine_k};
    int interrupted = 0;
    const int rc = refine_run(&e, &interrupted);
    c->sum->interrupted |= interrupted;
    return rc;
}

int run_grid(const space *s, const plan *p, const char *store_path, const run_options *opts,
             run_summary *sum)
{
    const double t0 = progress_now();
    memset(sum, 0, sizeof *sum);
    sum->tasks = (long)(p->n_accepted * (size_t)s->measure.n_modes);
    sum->rejected = (long)(p->n - p->n_accepted);
    static run_ctx c; /* large (progress text, inject rules); one sweep at a time */
    memset(&c, 0, sizeof c);
    c.s = s;
    c.p = p;
    c.o = opts;
    c.sum = sum;
    c.out = opts->progress;
    const char *hot = mode_at(MODE_HOT)->name;
    c.mode_best = run_mode_index_of(s, hot) >= 0 ? hot : s->measure.modes[0];
    progress_start(&c.prog, c.out, 0);
    /* A closed progress pipe must not kill the sweep; write errors are
     * then reported by the calls themselves. */
    struct sigaction ign, old_pipe;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe);

    int rc = run_start(&c, store_path);
    progress_phase("store and workers open");
    if (rc == 0) {
        rc = run_sweep(&c);
        if (rc == 0 && sum->interrupted)
            rc = 1;
    }
    if (rc == 0 && opts->refine_k > 0) {
        rc = run_refine(&c);
        progress_phase("refine");
    }
    sum->rounds = s->measure.rounds;
    sum->ci_half_med = c.st ? run_ci_half_median(&c) : NAN;
    engine_close(&c.eng);
    store_close(c.st);
    progress_phase("workers closed");
    sigaction(SIGPIPE, &old_pipe, NULL);
    sum->wall_s = progress_now() - t0;
    return rc;
}

void run_print_summary(const run_summary *sum, FILE *out)
{
    fprintf(out,
            "sweep: %ld tasks on %s: measured %ld, skipped %ld, wrong %ld, crashed %ld, "
            "timeout %ld; rejected points %ld\n",
            sum->tasks, sum->device[0] ? sum->device : "(no GPU)", sum->measured, sum->skipped,
            sum->wrong, sum->crashed, sum->timeout, sum->rejected);
    if (sum->best_config[0])
        fprintf(out, "best: %s %.3f us (highest TFLOPS measured this run)\n", sum->best_config,
                sum->best_us);
    if (sum->ref_mhz > 0)
        fprintf(out,
                "clock: %d MHz under the calibration load; %ld timed blocks discarded for a "
                "lower clock, %ld records measured below it\n",
                sum->ref_mhz, sum->discarded, sum->below);
    if (sum->rounds > 0)
        fprintf(out,
                "rounds: %d per config, spread over the run; median 95 %% interval "
                "+-%.2f %% (docs/measurement.md, \"Intervals\")\n",
                sum->rounds, 100 * sum->ci_half_med);
    /* the overhead is the sweep's own: the --between-rounds command's time is not */
    const double own_s = sum->wall_s - sum->between_s;
    fprintf(out, "time: wall %.2f s", sum->wall_s);
    if (sum->between_s > 0)
        fprintf(out, " (%.2f s of it --between-rounds)", sum->between_s);
    fprintf(out, ", timed %.4f s", sum->timed_s);
    if (sum->timed_s > 0)
        fprintf(out, ", overhead %.1fx", own_s / sum->timed_s);
    fputc('\n', out);
    const long done = sum->measured + sum->skipped + sum->wrong + sum->crashed + sum->timeout;
    if (sum->interrupted)
        fprintf(out,
                "interrupted: %ld of %ld tasks not run; run the same command again to resume "
                "(stored results are skipped)\n",
                sum->tasks - done > 0 ? sum->tasks - done : 0, sum->tasks);
}
