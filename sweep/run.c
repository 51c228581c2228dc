/* run.c - the sweep's scheduler (contract: run.h).
 *
 * This process never calls CUDA: workers do (worker.h). The scheduler
 * makes the task list, hands tasks to one worker or to one per GPU, and
 * commits every record before the next task starts, so a kill of this
 * process loses at most the tasks in flight; the next run with the same
 * arguments skips what is stored (resume).
 */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../store/store.h"
#include "dispatch.h"
#include "progress.h"
#include "refine.h"
#include "task.h"
#include "worker.h"

typedef struct run_ctx {
    const space *s;
    const plan *p;
    const run_options *o;
    run_summary *sum;
    store *st;
    worker w;        /* the single-GPU sweep's worker (and the refine pass's) */
    task_device dev; /* the GPU model the keys name */
    progress prog;
    FILE *out; /* opts->progress, may be NULL */
    char host[64];
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
    int skip;                  /* nothing left to measure, or handed out */
} run_item;

/* The task for one point's missing modes, and its progress label. */
static void run_make_task(const run_ctx *c, const run_item *it, task *t, char *label, size_t n)
{
    const plan_point *pt = &c->p->points[it->point];
    memset(t, 0, sizeof *t);
    t->problem = c->s->problems[pt->problem];
    t->n_configs = 1;
    t->configs[0] = pt->cfg;
    t->inject[0] = task_inject_for(c->inject, c->n_inject, &pt->cfg);
    t->n_modes = it->n_need;
    char modes[32] = "";
    for (int m = 0; m < it->n_need; m++) {
        snprintf(t->modes[m], sizeof t->modes[m], "%s", c->s->measure.modes[it->need[m]]);
        snprintf(modes + strlen(modes), sizeof modes - strlen(modes), "%s%s", m ? "," : "",
                 t->modes[m]);
    }
    t->measure = c->s->measure;
    t->tol = c->s->tolerance;
    char prob[48], cfg[64];
    space_problem_format(&t->problem, prob, sizeof prob);
    fa_config_format(&pt->cfg, cfg, sizeof cfg);
    snprintf(label, n, "%s %s %s", prob, cfg, modes);
}

/* The task list: one item per accepted point, with the modes whose key the
 * store does not hold (resume; all of them with --remeasure). Returns the
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
        for (int m = 0; m < nm; m++) {
            record r;
            char key[RECORD_KEY_LEN];
            task_record_init(&r, &c->dev, &c->s->problems[pt->problem], &pt->cfg,
                             c->s->measure.modes[m]);
            const int src = c->o->remeasure                        ? STORE_NOTFOUND
                            : record_key(&r, key, sizeof key) == 0 ? store_get(c->st, key, &r)
                                                                   : STORE_EINVAL;
            if (src == STORE_OK) {
                (*stored)++;
            } else if (src == STORE_NOTFOUND) {
                it->need[it->n_need++] = m;
            } else {
                progress_say(&c->prog, "reading the store failed: %s (%s)", store_strerror(src),
                             store_last_error(c->st));
                free(items);
                *rc = -1;
                return NULL;
            }
        }
        it->skip = it->n_need == 0;
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

/* Stores the records of a finished task (provenance added), counts them
 * and moves the progress line on. Returns 0 or -1 (message printed). */
static int run_finish(run_ctx *c, const run_item *it, worker_job *j)
{
    const plan_point *pt = &c->p->points[it->point];
    c->sum->timed_s += j->timed_s;
    for (int m = 0; m < it->n_need; m++) {
        record *r = &j->recs[m];
        task_provenance(r, c->host, c->s->name, c->s->hash);
        const int rc = store_put(c->st, r);
        if (rc != STORE_OK) {
            progress_say(&c->prog, "writing %s %s %s to the store failed: %s (%s)", r->problem,
                         r->config, r->mode, store_strerror(rc), store_last_error(c->st));
            return -1;
        }
        run_tally(c, pt, r);
        char best[96] = "";
        if (c->best_us[pt->problem] > 0)
            snprintf(best, sizeof best, "%s %.2f us", c->best_cfg[pt->problem],
                     c->best_us[pt->problem]);
        progress_end_task(&c->prog, best[0] ? best : NULL);
    }
    return 0;
}

/* ---- one GPU -------------------------------------------------------------------------------- */

/* The sweep on one worker. Returns 0, 1 (interrupted or GPU unusable), -1. */
static int run_sweep_one(run_ctx *c, run_item *items, size_t n)
{
    static worker_job j;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (items[i].skip)
            continue;
        if (c->o->stop && *c->o->stop) {
            c->sum->interrupted = 1;
            break;
        }
        task t;
        char label[160], err[512];
        run_make_task(c, &items[i], &t, label, sizeof label);
        progress_begin_task(&c->prog, label);
        if (worker_run(&c->w, &j, &t, err, sizeof err) != 0) {
            progress_say(&c->prog, "%s", err);
            return 1;
        }
        rc = run_finish(c, &items[i], &j) ? -1 : 0;
    }
    return rc ? rc : c->sum->interrupted;
}

/* ---- several GPUs: one worker each, tasks to whichever is free --------------------------------
 */

typedef struct run_slot {
    worker w;
    worker_job j;
    int busy, dead;
    size_t item;              /* index of the task in flight */
    int problem, has_problem; /* the problem its worker set up last */
} run_slot;

/* The pending task a slot should take next, or n when none is left (the
 * policy: dispatch.h). */
static size_t run_slot_pick(const run_slot *slots, int ns, const run_slot *sl, const run_ctx *c,
                            const run_item *items, size_t n)
{
    int *problem_of = malloc((n + 1) * sizeof *problem_of);
    unsigned char *pending = malloc(n + 1);
    int held[RUN_MAX_DEVICES], n_held = 0;
    size_t pick = n;
    if (problem_of && pending) {
        for (size_t i = 0; i < n; i++) {
            problem_of[i] = c->p->points[items[i].point].problem;
            pending[i] = !items[i].skip;
        }
        for (int k = 0; k < ns; k++)
            if (&slots[k] != sl && slots[k].has_problem)
                held[n_held++] = slots[k].problem;
        pick =
            dispatch_pick(problem_of, pending, n, sl->has_problem ? sl->problem : -1, held, n_held);
    } else {
        for (pick = 0; pick < n && items[pick].skip; pick++) /* out of memory: plan order */
            ;
    }
    free(problem_of);
    free(pending);
    return pick;
}

/* Hands the next pending task to an idle slot (starting its worker when
 * needed); a task handed out is marked skip. */
static void run_slot_assign(run_ctx *c, run_slot *slots, int ns, run_slot *sl, run_item *items,
                            size_t n)
{
    const size_t i = run_slot_pick(slots, ns, sl, c, items, n);
    if (i >= n || (c->o->stop && *c->o->stop))
        return;
    task t;
    char label[160], err[512];
    run_make_task(c, &items[i], &t, label, sizeof label);
    if (worker_start(&sl->w, &sl->j, &t, err, sizeof err) != 0) {
        progress_say(&c->prog, "GPU %d: %s; it takes no more tasks", sl->w.device, err);
        sl->dead = 1;
        return;
    }
    progress_begin_task(&c->prog, label);
    items[i].skip = 1;
    sl->item = i;
    sl->problem = c->p->points[items[i].point].problem;
    sl->has_problem = 1;
    sl->busy = 1;
}

/* Waits until a busy slot has something to say or reaches its deadline;
 * then lets each such slot handle it. Returns 0 or -1 (store error). */
static int run_slots_wait(run_ctx *c, run_slot *slots, int ns, const run_item *items)
{
    struct pollfd fds[RUN_MAX_DEVICES];
    int idx[RUN_MAX_DEVICES], nf = 0;
    double wait_s = 3600;
    const double now = progress_now();
    for (int k = 0; k < ns; k++) {
        if (!slots[k].busy)
            continue;
        fds[nf].fd = slots[k].w.msg_fd;
        fds[nf].events = POLLIN;
        fds[nf].revents = 0;
        idx[nf++] = k;
        wait_s = fmin(wait_s, slots[k].j.deadline - now);
    }
    const int ms = wait_s <= 0 ? 0 : (int)(wait_s * 1000) + 1;
    if (poll(fds, (nfds_t)nf, ms) < 0 && errno != EINTR) {
        progress_say(&c->prog, "poll on the CUDA workers failed: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < nf; i++) {
        run_slot *sl = &slots[idx[i]];
        const int readable = (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
        if (!worker_step(&sl->w, &sl->j, readable))
            continue;
        sl->busy = 0;
        if (run_finish(c, &items[sl->item], &sl->j))
            return -1;
    }
    return 0;
}

/* Starts one worker per listed GPU; all must be the same model. Returns
 * 0, or 1 with a message. */
static int run_slots_start(run_ctx *c, run_slot *slots, int ns)
{
    for (int k = 0; k < ns; k++) {
        char err[512];
        slots[k].w.device = c->o->devices[k];
        slots[k].w.prog = c->out ? &c->prog : NULL;
        if (worker_spawn(&slots[k].w, err, sizeof err)) {
            progress_say(&c->prog, "GPU %d: %s", slots[k].w.device, err);
            return 1;
        }
        if (strcmp(slots[k].w.dev.name, slots[0].w.dev.name) != 0) {
            progress_say(&c->prog,
                         "GPU %d is a %s but GPU %d a %s: results are keyed by GPU model, so "
                         "sweep each model in its own run (--devices with GPUs of one model)",
                         slots[0].w.device, slots[0].w.dev.name, slots[k].w.device,
                         slots[k].w.dev.name);
            return 1;
        }
    }
    c->dev = slots[0].w.dev;
    snprintf(c->sum->device, sizeof c->sum->device, "%s", c->dev.name);
    return 0;
}

/* The sweep over several GPUs (the workers are started). Returns 0, 1
 * (interrupted or no GPU usable), -1 (store error). */
static int run_sweep_multi(run_ctx *c, run_slot *slots, int ns, run_item *items, size_t n)
{
    int rc = 0;
    while (rc == 0) {
        int busy = 0;
        for (int k = 0; k < ns; k++) {
            if (!slots[k].busy && !slots[k].dead)
                run_slot_assign(c, slots, ns, &slots[k], items, n);
            busy += slots[k].busy;
        }
        if (!busy)
            break;
        rc = run_slots_wait(c, slots, ns, items);
    }
    size_t left = 0; /* tasks never handed out */
    for (size_t i = 0; i < n; i++)
        left += !items[i].skip;
    if (rc == 0 && left > 0) {
        if (c->o->stop && *c->o->stop)
            c->sum->interrupted = 1;
        else
            rc = 1; /* every GPU gave up */
    }
    return rc ? rc : c->sum->interrupted;
}

/* ---- run_grid ------------------------------------------------------------------------------- */

/* The sweep proper: the task list, then one GPU or several. Returns 0, 1
 * (interrupted or GPU unusable), -1 (store error). */
static int run_sweep(run_ctx *c)
{
    const int ns = c->o->n_devices > 1 ? c->o->n_devices : 1;
    run_slot *slots = ns > 1 ? calloc((size_t)ns, sizeof *slots) : NULL;
    if (ns > 1 && !slots) {
        progress_say(&c->prog, "out of memory for %d workers", ns);
        return 1;
    }
    /* The workers' HELLO names the GPU model, which the keys need. */
    int rc = ns > 1 ? run_slots_start(c, slots, ns) : 0;
    size_t n = 0;
    run_item *items = rc == 0 ? run_items(c, &n, &c->sum->skipped, &rc) : NULL;
    if (items) {
        if (c->sum->skipped)
            progress_say(&c->prog, "%ld of %ld tasks are in the store already and are skipped%s",
                         c->sum->skipped, c->sum->tasks,
                         ns > 1 || c->sum->skipped == c->sum->tasks ? "" : " (resume)");
        progress_start(&c->prog, c->out, c->sum->tasks - c->sum->skipped);
        rc = ns > 1 ? run_sweep_multi(c, slots, ns, items, n) : run_sweep_one(c, items, n);
        progress_finish(&c->prog);
    }
    for (int k = 0; k < (ns > 1 ? ns : 0); k++)
        worker_quit(&slots[k].w);
    free(items);
    free(slots);
    return rc;
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
    c->w.device = c->o->device;
    c->w.prog = c->out ? &c->prog : NULL;
    if (c->o->n_devices > 1) /* run_sweep starts one worker per GPU */
        return 0;
    if (worker_spawn(&c->w, err, sizeof err) != 0) {
        progress_say(&c->prog, "%s", err);
        return 1;
    }
    c->dev = c->w.dev;
    snprintf(c->sum->device, sizeof c->sum->device, "%s", c->dev.name);
    return 0;
}

/* The refine pass, on the single worker (started on the first GPU when the
 * sweep used several). */
static int run_refine(run_ctx *c)
{
    const refine_env e = {c->s,    c->p,      c->st,       &c->w,          &c->prog,  c->out,
                          c->host, c->inject, c->n_inject, c->o->refine_k, c->o->stop};
    if (!c->w.pid) {
        char err[512];
        if (worker_spawn(&c->w, err, sizeof err) != 0) {
            progress_say(&c->prog, "%s", err);
            return 1;
        }
    }
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
    if (gethostname(c.host, sizeof c.host - 1) != 0)
        snprintf(c.host, sizeof c.host, "unknown");
    /* A closed progress pipe must not kill the sweep; write errors are
     * then reported by the calls themselves. */
    struct sigaction ign, old_pipe;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old_pipe);

    int rc = run_start(&c, store_path);
    if (rc == 0) {
        rc = run_sweep(&c);
        if (rc == 0 && sum->interrupted)
            rc = 1;
    }
    if (rc == 0 && opts->refine_k > 0)
        rc = run_refine(&c);
    worker_quit(&c.w);
    store_close(c.st);
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
    fprintf(out, "time: wall %.2f s, timed %.4f s", sum->wall_s, sum->timed_s);
    if (sum->timed_s > 0)
        fprintf(out, ", overhead %.1fx", sum->wall_s / sum->timed_s);
    fputc('\n', out);
    const long done = sum->measured + sum->skipped + sum->wrong + sum->crashed + sum->timeout;
    if (sum->interrupted)
        fprintf(out,
                "interrupted: %ld of %ld tasks not run; run the same command again to resume "
                "(stored results are skipped)\n",
                sum->tasks - done > 0 ? sum->tasks - done : 0, sum->tasks);
}
