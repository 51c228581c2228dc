/* engine.c - tasks through the workers into the store (contract: engine.h).
 *
 * This process never calls CUDA: the workers do (worker.h). With one
 * worker the tasks run one after another (worker_start, worker_await; the
 * next task starts before the last one's records are stored); with several, one
 * poll() loop hands a task to each free worker and takes the records of
 * whichever finishes (worker_start, worker_step).
 */
#include "engine.h"

#include "intervals.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../kernels/family.h"
#include "../store/mode.h"
#include "../store/text.h"
#include "dispatch.h"
#include "variant.h"

/* One worker of a several-GPU engine and the task it runs. */
struct engine_slot {
    worker w;
    worker_job j;
    int busy, dead;
    size_t job;           /* index of the task in flight */
    int group, has_group; /* the group its worker set up last */
    double t0;            /* when it was handed its task (progress_now) */
};

/* The failure into e->err, and said on the progress line. */
static void engine_fail(engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void engine_fail(engine *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err, sizeof e->err, fmt, ap);
    va_end(ap);
    progress_say(e->o.prog, "%s", e->err);
}

/* ---- workers -------------------------------------------------------------------------------- */

/* One worker per listed GPU; all must be the same model. 0, or 1. */
static int engine_open_slots(engine *e)
{
    const int ns = e->o.n_devices;
    e->slots = calloc((size_t)ns, sizeof *e->slots);
    if (!e->slots) {
        engine_fail(e, "out of memory for %d workers", ns);
        return 1;
    }
    e->n_slots = ns;
    char err[512];
    for (int k = 0; k < ns; k++) { /* every worker's process first: their CUDA starts overlap */
        worker *w = &e->slots[k].w;
        w->device = e->o.devices[k];
        w->prog = e->o.prog;
        if (worker_fork(w, err, sizeof err)) {
            engine_fail(e, "GPU %d: %s", w->device, err);
            return 1;
        }
    }
    for (int k = 0; k < ns; k++) {
        worker *w = &e->slots[k].w;
        if (worker_hello(w, err, sizeof err)) {
            engine_fail(e, "GPU %d: %s", w->device, err);
            return 1;
        }
        const worker *w0 = &e->slots[0].w;
        if (strcmp(w->dev.name, w0->dev.name) != 0) {
            engine_fail(e,
                        "GPU %d is a %s but GPU %d a %s: results are keyed by GPU model, so "
                        "sweep each model in its own run (--devices with GPUs of one model)",
                        w0->device, w0->dev.name, w->device, w->dev.name);
            return 1;
        }
    }
    e->dev = e->slots[0].w.dev;
    return 0;
}

int engine_open(engine *e, const engine_options *o)
{
    memset(e, 0, sizeof *e);
    e->o = *o;
    if (gethostname(e->host, sizeof e->host - 1) != 0)
        snprintf(e->host, sizeof e->host, "unknown");
    if (o->n_devices > 1) {
        if (engine_open_slots(e))
            return 1;
    } else {
        char err[512];
        e->w.device = o->device;
        e->w.prog = o->prog;
        if (worker_spawn(&e->w, err, sizeof err) != 0) {
            engine_fail(e, "%s", err);
            return 1;
        }
        e->dev = e->w.dev;
    }
    e->gpu = 1;
    return 0;
}

void engine_close(engine *e)
{
    worker *ws[ENGINE_MAX_DEVICES + 1];
    int n = 0;
    for (int k = 0; k < e->n_slots; k++)
        ws[n++] = &e->slots[k].w;
    ws[n++] = &e->w;
    worker_quit_all(ws, n); /* they end at once: each CUDA teardown overlaps the others' */
    free(e->slots);
    e->slots = NULL;
    e->n_slots = 0;
    e->gpu = 0;
}

/* ---- records -------------------------------------------------------------------------------- */

/* The provenance of e on r: host, space name and hash, version, now. */
static void engine_provenance(const engine *e, record *r)
{
    task_provenance(r, e->host, e->o.space_name ? e->o.space_name : "",
                    e->o.space_hash ? e->o.space_hash : "");
}

/* The record st holds for r's key, folded with r (fold), or r as one round. */
static int engine_fold(store *st, record *r, int fold)
{
    record held, out;
    char key[RECORD_KEY_LEN];
    int rc = STORE_NOTFOUND;
    if (fold && record_key(r, key, sizeof key) == 0)
        rc = store_get(st, key, &held);
    if (rc != STORE_OK && rc != STORE_NOTFOUND && rc != STORE_EDAMAGED)
        return rc;
    intervals_combine(rc == STORE_OK ? &held : NULL, r, &out); /* a damaged one is replaced */
    *r = out;
    return STORE_OK;
}

/* Says a failed write of the records r[0..n) (one record, or a task's). -1. */
static int engine_put_failed(engine *e, store *st, const record *r, int n, int rc)
{
    engine_fail(e, "writing %s %s %s%s to the store failed: %s (%s)", r->problem, r->config,
                r->mode, n > 1 ? " and the task's other records" : "", store_strerror(rc),
                store_last_error(st));
    return -1;
}

/* r as it is stored: e's provenance on it, folded with the record st holds (engine_fold). */
static int engine_prepare(engine *e, store *st, record *r, int fold)
{
    engine_provenance(e, r);
    return engine_fold(st, r, fold);
}

int engine_put(engine *e, store *st, record *r, engine_keep keep, int fold)
{
    int rc = engine_prepare(e, st, r, fold);
    if (rc == STORE_OK)
        rc = keep == ENGINE_PUT || r->status == RECORD_ST_OK ? store_put(st, r)
                                                             : store_put_if_better(st, r, NULL);
    return rc == STORE_OK ? 0 : engine_put_failed(e, st, r, 1, rc);
}

/* A task's n records into st by `keep`, each folded as engine_put does. With ENGINE_PUT, all
 * in one transaction (one sync, not one per record: on several GPUs the engine's thread is
 * what every worker waits on for its next task; sweep/NOTES-engine.md, eighteenth session);
 * else one by one. 0, or -1 (e->err said). */
static int engine_put_task(engine *e, store *st, record *recs, int n, engine_keep keep, int fold)
{
    if (keep != ENGINE_PUT) {
        for (int i = 0; i < n; i++)
            if (engine_put(e, st, &recs[i], keep, fold))
                return -1;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const int rc = engine_prepare(e, st, &recs[i], fold);
        if (rc != STORE_OK)
            return engine_put_failed(e, st, &recs[i], 1, rc);
    }
    const int rc = store_put_many(st, recs, (size_t)n);
    return rc == STORE_OK ? 0 : engine_put_failed(e, st, recs, n, rc);
}

/* A finished task's records stored (engine_put_task), the hooks told. 0 or -1. */
static int engine_store_task(engine *e, store *st, const engine_job *job, worker_job *j,
                             engine_keep keep, const engine_sink *sink)
{
    const int n = j->t.n_configs * j->t.n_modes;
    if (sink->measured)
        sink->measured(sink->ctx, job, j->recs, n);
    if (engine_put_task(e, st, j->recs, n, keep, job->t.round > 0))
        return -1;
    for (int i = 0; i < n; i++) {
        if (j->recs[i].status != RECORD_ST_OK)
            ((engine_job *)job)->failed = 1;
        if (sink->stored)
            sink->stored(sink->ctx, job, i, &j->recs[i]);
    }
    if (sink->done)
        sink->done(sink->ctx, job, j->timed_s);
    return 0;
}

/* FASWEEP_TRACE set: the seconds this process spends storing records and
 * updating intervals, said at the end of engine_measure (the worker's own
 * steps: measure.c, ms_trace; sweep/NOTES-engine.md). */
static struct {
    double store_s, intervals_s;
    long records;
    double t0; /* when engine_measure began */
} engine_trace = {0, 0, 0, 0};

static void engine_trace_say(void)
{
    if (progress_tracing())
        fprintf(stderr,
                "TRACE engine: %ld records stored in %.3f s (the caller's hooks included), "
                "intervals updated in %.3f s\n",
                engine_trace.records, engine_trace.store_s, engine_trace.intervals_s);
}

/* A finished task: its records stored one by one, the hooks told. 0 or -1. */
static int engine_finish(engine *e, store *st, const engine_job *job, worker_job *j,
                         engine_keep keep, const engine_sink *sink)
{
    const double t0 = progress_tracing() ? progress_now() : 0;
    const int rc = engine_store_task(e, st, job, j, keep, sink);
    if (progress_tracing()) {
        engine_trace.store_s += progress_now() - t0;
        engine_trace.records += j->t.n_configs * j->t.n_modes;
    }
    return rc;
}

/* "PROBLEM CONFIG MODES": what the progress line says runs now. */
static void engine_label(const task *t, char *label, size_t n)
{
    char prob[48], cfg[64], modes[SPACE_MAX_MODES * MODE_NAME_MAX + 8] = "";
    space_problem_format(&t->problem, prob, sizeof prob);
    fa_config_format(&t->configs[0], cfg, sizeof cfg);
    for (int m = 0; m < t->n_modes; m++)
        snprintf(modes + strlen(modes), sizeof modes - strlen(modes), "%s%s", m ? "," : "",
                 t->modes[m]);
    snprintf(label, n, "%s %s %s", prob, cfg, modes);
}

static int engine_stopping(const engine *e)
{
    return e->o.stop && *e->o.stop;
}

/* o.between_rounds after round r (engine_options), while no worker has a task: run with
 * /bin/sh -c, its standard output sent to standard error (the sweep's stdout is its
 * summary), waited for; its wall time into e->between_s. */
static void engine_between_rounds(engine *e, int r)
{
    if (!e->o.between_rounds || e->between_off || engine_stopping(e))
        return;
    const double t0 = progress_now();
    char *argv[] = {"sh", "-c", (char *)e->o.between_rounds, NULL};
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    int status = 0, rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
        if (rc == 0)
            rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    while (rc == 0 && waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) { /* not ours to wait for: said below as a failure */
            rc = errno;
            break;
        }
    e->between_s += progress_now() - t0;
    char how[96];
    if (rc != 0)
        snprintf(how, sizeof how, "could not run: %s", strerror(rc));
    else if (WIFSIGNALED(status))
        snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
    else if (WEXITSTATUS(status) != 0)
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
    else
        return;
    e->between_off = 1;
    progress_say(e->o.prog,
                 "--between-rounds: the command %s after round %d; it is not run again, the "
                 "sweep goes on",
                 how, r + 1);
}

/* ---- one worker ----------------------------------------------------------------------------- */

/* Returns 0, 1 (interrupted, or no worker), -1. The worker gets task i + 1
 * before task i's records are stored: the store's commits and the
 * intervals overlap the GPU's work instead of adding to it. */
static int engine_run_one(engine *e, store *st, engine_job *jobs, size_t n, engine_keep keep,
                          const engine_sink *sink)
{
    static worker_job j, done; /* large (the records); one engine call at a time */
    char label[160], err[512];
    size_t i = 0;
    int running = 0;
    if (n > 0 && !engine_stopping(e)) {
        engine_label(&jobs[0].t, label, sizeof label);
        progress_begin_task(e->o.prog, label);
        if (worker_start(&e->w, &j, &jobs[0].t, err, sizeof err) != 0) {
            engine_fail(e, "%s", err);
            return 1;
        }
        running = 1;
    }
    while (running) {
        worker_await(&e->w, &j);
        done = j;
        jobs[i].pending = 0;
        running = 0;
        if (i + 1 < n && !engine_stopping(e)) { /* the next task first, then the store */
            engine_label(&jobs[i + 1].t, label, sizeof label);
            progress_begin_task(e->o.prog, label);
            if (worker_start(&e->w, &j, &jobs[i + 1].t, err, sizeof err) != 0) {
                engine_fail(e, "%s", err);
                (void)engine_finish(e, st, &jobs[i], &done, keep, sink);
                return 1;
            }
            running = 1;
        }
        if (engine_finish(e, st, &jobs[i], &done, keep, sink)) {
            if (running)
                worker_await(&e->w, &j); /* its records are lost with the store's failure */
            return -1;
        }
        i++;
    }
    if (i < n && engine_stopping(e))
        e->interrupted = 1;
    return e->interrupted;
}

/* A later round on the worker that gated the job: only the timing is new
 * (the gate and the clock64 view are the first round's, kept when the
 * round is folded in), after a shorter warm-up (sweep/measure.c,
 * ms_config_warmup). On several GPUs a job goes back to the worker
 * that gated it (engine_pick, engine_assign: gated_by); one that another
 * worker takes is gated again there. */
static void engine_light(engine_job *j)
{
    j->t.light = 1;
}

/* ---- several workers: tasks to whichever is free -------------------------------------------- */

/* work[i]: the seconds job i is estimated to run still: 0 once done; else the
 * mean wall time of its group's finished tasks, of all finished tasks when its
 * group has none, 1 when none has finished. Two passes over the list with a
 * table of its groups (a few problems: a linear search). */
static void engine_work(const engine_job *jobs, size_t n, double *work)
{
    int *gid = malloc((n + 1) * sizeof *gid);
    double *sum = calloc(n + 1, sizeof *sum);
    size_t *cnt = calloc(n + 1, sizeof *cnt), *of = malloc((n + 1) * sizeof *of), ng = 0;
    double all = 0;
    size_t n_all = 0;
    for (size_t i = 0; gid && sum && cnt && of && i < n; i++) {
        size_t g = 0;
        while (g < ng && gid[g] != jobs[i].group)
            g++;
        if (g == ng)
            gid[ng++] = jobs[i].group;
        of[i] = g;
        if (jobs[i].ran_s > 0)
            sum[g] += jobs[i].ran_s, cnt[g]++, all += jobs[i].ran_s, n_all++;
    }
    const double dflt = n_all ? all / (double)n_all : 1.0;
    for (size_t i = 0; i < n; i++) /* out of memory: no group estimates, the default */
        work[i] = jobs[i].done                            ? 0
                  : gid && sum && cnt && of && cnt[of[i]] ? sum[of[i]] / (double)cnt[of[i]]
                                                          : dflt;
    free(gid);
    free(sum);
    free(cnt);
    free(of);
}

_Static_assert(ENGINE_MAX_DEVICES <= 32, "engine_job.ran_on holds a bit per slot");
#define ENGINE_SLOT_BIT(e, sl) (1u << (unsigned)((sl) - (e)->slots)) /* its bit in ran_on */

/* The pending job a slot should take next, or n when none is left, by dispatch.h's policy.
 * Measurement hooks: FASWEEP_ROUND_CROSS=0, no crossing of GPUs (dispatch_within);
 * FASWEEP_DISPATCH=first, the older pick rule without the work estimates. */
static size_t engine_pick(const engine *e, const engine_slot *sl, const engine_job *jobs, size_t n)
{
    int *group_of = malloc((n + 1) * sizeof *group_of);
    unsigned char *pending = malloc(n + 1), *light = malloc(n + 1);
    unsigned *ran_on = malloc((n + 1) * sizeof *ran_on);
    double *work =
        progress_hook("FASWEEP_DISPATCH", "first") ? NULL : malloc((n + 1) * sizeof *work);
    int held[ENGINE_MAX_DEVICES], n_held = 0;
    size_t pick = n;
    if (group_of && pending && light && ran_on) {
        for (size_t i = 0; i < n; i++) {
            group_of[i] = jobs[i].group;
            pending[i] = (unsigned char)jobs[i].pending;
            light[i] = sl->w.pid > 0 && jobs[i].gated_by == (long)sl->w.pid;
            ran_on[i] = jobs[i].ran_on;
        }
        if (work)
            engine_work(jobs, n, work);
        for (int k = 0; k < e->n_slots; k++)
            if (&e->slots[k] != sl && e->slots[k].has_group)
                held[n_held++] = e->slots[k].group;
        pick =
            dispatch_pick(group_of, pending, work, n, sl->has_group ? sl->group : -1, held, n_held);
        pick = dispatch_within(group_of, pending, ran_on, light, n, pick, ENGINE_SLOT_BIT(e, sl),
                               !progress_hook("FASWEEP_ROUND_CROSS", "0"));
    } else {
        for (pick = 0; pick < n && !jobs[pick].pending; pick++) /* out of memory: list order */
            ;
    }
    free(group_of), free(pending), free(light), free(ran_on), free(work);
    return pick;
}

/* Hands the next pending job to an idle slot (starting its worker when
 * needed); a job handed out is no longer pending. */
static void engine_assign(engine *e, engine_slot *sl, engine_job *jobs, size_t n)
{
    const size_t i = engine_pick(e, sl, jobs, n);
    if (i >= n || engine_stopping(e))
        return;
    char label[160], err[512];
    engine_label(&jobs[i].t, label, sizeof label);
    /* The worker that gated it, still the same process: time only. */
    const int light = sl->w.pid > 0 && jobs[i].gated_by == (long)sl->w.pid;
    if (light)
        engine_light(&jobs[i]);
    if (worker_start(&sl->w, &sl->j, &jobs[i].t, err, sizeof err) != 0) {
        engine_fail(e, "GPU %d: %s; it takes no more tasks", sl->w.device, err);
        sl->dead = 1;
        return;
    }
    if (!light)
        jobs[i].gated_by = (long)sl->w.pid;
    jobs[i].ran_on |= ENGINE_SLOT_BIT(e, sl);
    progress_begin_task(e->o.prog, label);
    jobs[i].pending = 0;
    sl->t0 = progress_now();
    sl->job = i;
    sl->group = jobs[i].group;
    sl->has_group = 1;
    sl->busy = 1;
}

/* FASWEEP_TRACE: one line per task of a several-worker engine: the GPU,
 * its start and end (seconds since the engine_measure call began), group,
 * round and label (sweep/NOTES-engine.md: where the GPUs wait). */
static void engine_trace_task(const engine_slot *sl, const engine_job *j, double end)
{
    if (!progress_tracing())
        return;
    char label[160];
    engine_label(&j->t, label, sizeof label);
    fprintf(stderr, "TRACE task gpu%d %.3f %.3f g%d r%d %s\n", sl->w.device,
            sl->t0 - engine_trace.t0, end - engine_trace.t0, j->group, j->t.round, label);
}

/* The busy slots' message pipes into fds (idx[i]: fds[i]'s slot); returns how many. */
static int engine_busy_fds(const engine *e, struct pollfd *fds, int *idx)
{
    int nf = 0;
    for (int k = 0; k < e->n_slots; k++)
        if (e->slots[k].busy) {
            fds[nf] = (struct pollfd){.fd = e->slots[k].w.msg_fd, .events = POLLIN};
            idx[nf++] = k;
        }
    return nf;
}

/* Waits until a busy slot has something to say or reaches its deadline;
 * then lets each such slot handle it: a slot whose task is over takes its
 * next task at once (engine_assign), then the records of the one it
 * finished are stored, so a GPU never waits for the store. fin[] gets the
 * finished jobs' indices (*n_fin of them, at most ENGINE_MAX_DEVICES).
 * Returns 0 or -1 (store error). */
static int engine_wait(engine *e, store *st, engine_job *jobs, size_t n, engine_keep keep,
                       const engine_sink *sink, size_t *fin, int *n_fin)
{
    static worker_job done; /* a finished task's records while its slot runs the next */
    struct pollfd fds[ENGINE_MAX_DEVICES];
    int idx[ENGINE_MAX_DEVICES];
    const int nf = engine_busy_fds(e, fds, idx);
    double wait_s = 3600;
    const double now = progress_now();
    *n_fin = 0;
    for (int i = 0; i < nf; i++)
        wait_s = fmin(wait_s, e->slots[idx[i]].j.deadline - now);
    const int ms = wait_s <= 0 ? 0 : (int)(wait_s * 1000) + 1;
    if (poll(fds, (nfds_t)nf, ms) < 0 && errno != EINTR) {
        engine_fail(e, "poll on the CUDA workers failed: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < nf; i++) {
        engine_slot *sl = &e->slots[idx[i]];
        const int readable = (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
        if (!worker_step(&sl->w, &sl->j, readable))
            continue;
        const size_t ji = sl->job;
        const double end = progress_now();
        engine_trace_task(sl, &jobs[ji], end);
        jobs[ji].done = 1;
        jobs[ji].ran_s = end - sl->t0;
        fin[(*n_fin)++] = ji;
        done = sl->j;
        sl->busy = 0;
        if (!sl->dead)
            engine_assign(e, sl, jobs, n);
        if (engine_finish(e, st, &jobs[ji], &done, keep, sink))
            return -1;
    }
    return 0;
}

/* A several-worker run's status with `left` jobs never run: 1 when every GPU gave up, the
 * interruption (Ctrl-C) when it stopped them, else rc. */
static int engine_left(engine *e, int rc, size_t left)
{
    if (rc == 0 && left > 0 && engine_stopping(e))
        e->interrupted = 1;
    else if (rc == 0 && left > 0)
        rc = 1;
    return rc ? rc : e->interrupted;
}

/* Returns 0, 1 (interrupted, or every GPU gave up), -1. */
static int engine_run_multi(engine *e, store *st, engine_job *jobs, size_t n, engine_keep keep,
                            const engine_sink *sink)
{
    int rc = 0;
    while (rc == 0) {
        int busy = 0, n_fin;
        size_t fin[ENGINE_MAX_DEVICES];
        for (int k = 0; k < e->n_slots; k++) {
            if (!e->slots[k].busy && !e->slots[k].dead)
                engine_assign(e, &e->slots[k], jobs, n);
            busy += e->slots[k].busy;
        }
        if (!busy)
            break;
        rc = engine_wait(e, st, jobs, n, keep, sink, fin, &n_fin);
    }
    size_t left = 0; /* jobs never handed out */
    for (size_t i = 0; i < n; i++)
        left += jobs[i].pending != 0;
    return engine_left(e, rc, left);
}

/* ---- rounds --------------------------------------------------------------------------------- */

/* FASWEEP_ROUND_WORKER=fresh starts every round on fresh workers (a new
 * process, CUDA context and buffers); by default one worker serves every
 * round, with a new stream, events and buffer place each round (sweep/measure.c
 * ms_new_round), which hold as well for about 0.5 s a round less
 * (docs/measurement.md, "Intervals"). A measurement hook. */
static int engine_round_fresh(void)
{
    return progress_hook("FASWEEP_ROUND_WORKER", "fresh");
}

/* Fresh workers for the next round: a new process, CUDA context and
 * buffers each. 0, or 1 (e->err said). */
static int engine_fresh_workers(engine *e)
{
    const engine_options o = e->o;
    engine_close(e);
    return engine_open(e, &o); /* the host name is taken again, the same */
}

/* One group's jobs jobs[g0..g1) that run in round r into out from k, in list
 * order rotated by r/rounds of their count; returns the new k. */
static size_t engine_group_round(const engine_job *jobs, size_t g0, size_t g1, int r, int rounds,
                                 engine_job *out, size_t *src, size_t k)
{
    size_t cnt = 0;
    for (size_t i = g0; i < g1; i++)
        cnt += jobs[i].first_round <= r && !jobs[i].failed;
    const size_t shift = cnt * (size_t)r / (size_t)rounds;
    /* two passes over the group: from the shift to the end, then the rest */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = g0, idx = 0; i < g1; i++) {
            if (jobs[i].first_round > r || jobs[i].failed)
                continue;
            const int late = idx++ >= shift;
            if (late != (pass == 0))
                continue;
            out[k] = jobs[i];
            out[k].t.round = r;
            src[k++] = i;
        }
    return k;
}

/* Round r's jobs into out (copies, in run order): each group's jobs that
 * run in round r (engine_group_round), the groups in list order in an even
 * round and in reverse in an odd one, so the problem one worker ends a round
 * on is the one it starts the next with (one problem setup fewer a round:
 * sweep/NOTES-engine.md). */
static size_t engine_round_jobs(const engine_job *jobs, size_t n, int r, int rounds,
                                engine_job *out, size_t *src)
{
    size_t k = 0;
    if (r % 2 == 0)
        for (size_t g0 = 0; g0 < n;) {
            size_t g1 = g0;
            while (g1 < n && jobs[g1].group == jobs[g0].group)
                g1++;
            k = engine_group_round(jobs, g0, g1, r, rounds, out, src, k);
            g0 = g1;
        }
    else
        for (size_t g1 = n; g1 > 0;) {
            size_t g0 = g1 - 1;
            while (g0 > 0 && jobs[g0 - 1].group == jobs[g1 - 1].group)
                g0--;
            k = engine_group_round(jobs, g0, g1, r, rounds, out, src, k);
            g1 = g0;
        }
    return k;
}

/* The intervals of the problem of group rj[i].group, every mode the round's jobs of that group
 * touched, in one intervals_update (one pair of scans of the problem's records). */
static int engine_group_intervals(engine *e, store *st, const engine_job *rj, size_t k, size_t i,
                                  double since)
{
    const char *modes[MODE_COUNT];
    int n_modes = 0;
    for (size_t j = i; j < k; j++)
        for (int m = 0; rj[j].group == rj[i].group && m < rj[j].t.n_modes; m++) {
            int q = 0;
            while (q < n_modes && strcmp(modes[q], rj[j].t.modes[m]) != 0)
                q++;
            if (q == n_modes && n_modes < MODE_COUNT)
                modes[n_modes++] = rj[j].t.modes[m];
        }
    char prob[48];
    space_problem_format(&rj[i].t.problem, prob, sizeof prob);
    const int rc =
        intervals_update(st, e->dev.name, prob, modes, n_modes, since, e->o.ci_floor, NULL);
    if (rc != STORE_OK) {
        engine_fail(e, "updating the intervals of %s failed: %s (%s)", prob, store_strerror(rc),
                    store_last_error(st));
        return -1;
    }
    return 0;
}

/* The intervals of every (problem, mode) the round's jobs touched: a problem (group) at a
 * time, at its first job. */
static int engine_round_intervals(engine *e, store *st, const engine_job *rj, size_t k,
                                  double since)
{
    const double t0 = progress_tracing() ? progress_now() : 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        size_t j = 0;
        while (j < i && rj[j].group != rj[i].group)
            j++;
        if (j == i)
            rc = engine_group_intervals(e, st, rj, k, i, since);
    }
    if (progress_tracing())
        engine_trace.intervals_s += progress_now() - t0;
    return rc;
}

/* One round's jobs, run. */
static int engine_run_round(engine *e, store *st, engine_job *rj, size_t k, engine_keep keep,
                            const engine_sink *sink)
{
    for (size_t i = 0; i < k; i++)
        rj[i].pending = 1;
    return e->n_slots > 0 ? engine_run_multi(e, st, rj, k, keep, sink)
                          : engine_run_one(e, st, rj, k, keep, sink);
}

/* ---- several workers: rounds pipelined per problem ------------------------------------------ */

/* Every round's jobs in one list (round after round, each round as
 * engine_round_jobs orders it), run by several workers with a barrier per
 * group (problem) only: round r of a group starts once its round r - 1 is
 * done, whatever the other groups are at. A GPU done with its share of a
 * problem's round takes work of another problem instead of waiting for the
 * slowest GPU of the sweep; a job's rounds stay apart in time (its group's
 * whole round between them) and each round keeps its rotated order. A
 * group's round done: that round's intervals (engine_round_intervals). */
typedef struct engine_block {
    size_t i0, i1; /* rj[i0..i1): one group's jobs of one round (contiguous) */
    size_t left;   /* of them not done */
    int released;  /* its jobs were made pending (1); its intervals said too (2) */
    double owed;   /* when its last job was done (progress_now), 0 before */
} engine_block;

/* The longest a done block's intervals wait for a moment when no GPU waits for the engine:
 * past it they are written even if a worker waits (a kill loses no more than this of them). */
#define ENGINE_INTERVALS_DEFER_S 0.5

typedef struct engine_pipe {
    engine_job *rj; /* every round's jobs; rj[i].done once it ran or was dropped */
    size_t *src;    /* rj[i] is jobs[src[i]] in round rj[i].t.round */
    size_t n;
    engine_block *blk; /* in list order: round-major, then group */
    size_t n_blk;
    double since; /* the intervals' records: newer than this (engine_measure) */
    int rounds;
    int held; /* blocks of a later round wait (o.between_rounds: engine_pipe_between) */
} engine_pipe;

static void engine_pipe_free(engine_pipe *p)
{
    free(p->rj);
    free(p->src);
    free(p->blk);
}

/* The list and its blocks; 0, or 1 out of memory (e->err said). */
static int engine_pipe_open(engine *e, engine_pipe *p, engine_job *jobs, size_t n, int rounds,
                            double since)
{
    const size_t cap = n * (size_t)rounds + 1;
    memset(p, 0, sizeof *p);
    p->since = since;
    p->rounds = rounds;
    p->held = e->o.between_rounds && !e->between_off ? 0 : INT_MAX;
    p->rj = malloc(cap * sizeof *p->rj);
    p->src = malloc(cap * sizeof *p->src);
    p->blk = malloc(cap * sizeof *p->blk);
    if (!p->rj || !p->src || !p->blk) {
        engine_pipe_free(p);
        engine_fail(e, "out of memory for %zu tasks in %d rounds", n, rounds);
        return 1;
    }
    for (int r = 0; r < rounds; r++)
        p->n += engine_round_jobs(jobs, n, r, rounds, p->rj + p->n, p->src + p->n);
    for (size_t i = 0; i < p->n;) {
        engine_block *b = &p->blk[p->n_blk++];
        b->i0 = i;
        while (i < p->n && p->rj[i].group == p->rj[b->i0].group &&
               p->rj[i].t.round == p->rj[b->i0].t.round)
            p->rj[i++].pending = 0;
        b->i1 = i;
        b->left = b->i1 - b->i0;
        b->released = 0;
        b->owed = 0;
    }
    return 0;
}

/* Whether an earlier round of block b's group has jobs left. */
static int engine_pipe_behind(const engine_pipe *p, size_t b)
{
    const engine_block *x = &p->blk[b];
    for (size_t q = 0; q < b; q++) {
        const engine_block *y = &p->blk[q];
        if (y->left && p->rj[y->i0].group == p->rj[x->i0].group &&
            p->rj[y->i0].t.round < p->rj[x->i0].t.round)
            return 1;
    }
    return 0;
}

/* rj[i] counted off its block, once: when it ran (engine_wait marked it
 * done) or when its block is released without it (its job failed). */
static void engine_pipe_done(engine_pipe *p, size_t i)
{
    p->rj[i].done = 1; /* a dropped job too: no work left (engine_work) */
    for (size_t b = 0; b < p->n_blk; b++)
        if (i >= p->blk[b].i0 && i < p->blk[b].i1)
            p->blk[b].left--;
}

/* Releases every block whose group has nothing left in an earlier round
 * (its jobs pending, with the worker that gated their job; a failed job's
 * dropped). */
static void engine_pipe_release(engine_pipe *p, engine_job *jobs)
{
    for (size_t b = 0; b < p->n_blk; b++) {
        engine_block *x = &p->blk[b];
        if (x->released || engine_pipe_behind(p, b) || p->rj[x->i0].t.round > p->held)
            continue;
        x->released = 1;
        for (size_t i = x->i0; i < x->i1; i++) {
            if (jobs[p->src[i]].failed) {
                engine_pipe_done(p, i);
                continue;
            }
            p->rj[i].gated_by = jobs[p->src[i]].gated_by;
            p->rj[i].ran_on = jobs[p->src[i]].ran_on;
            p->rj[i].pending = 1;
        }
    }
}

/* Whether a busy worker has something to say now (a finished task waits for the engine). */
static int engine_any_ready(const engine *e)
{
    struct pollfd fds[ENGINE_MAX_DEVICES];
    int idx[ENGINE_MAX_DEVICES];
    const int nf = engine_busy_fds(e, fds, idx);
    return nf > 0 && poll(fds, (nfds_t)nf, 0) > 0;
}

/* Gives each block done the intervals of its round, oldest first, one block (one problem) at
 * a time and only while no worker has finished a task (a GPU does not wait for them: they are
 * done while every GPU is busy, sweep/NOTES-engine.md), unless a block has waited
 * ENGINE_INTERVALS_DEFER_S; all of them when `all`. 0 or -1 (a store error). */
static int engine_pipe_intervals(engine *e, store *st, engine_pipe *p, int all)
{
    const double now = progress_now();
    for (size_t b = 0; b < p->n_blk; b++) {
        engine_block *x = &p->blk[b];
        if (x->released != 1 || x->left != 0)
            continue;
        if (x->owed == 0)
            x->owed = now;
        if (!all && now - x->owed < ENGINE_INTERVALS_DEFER_S && engine_any_ready(e))
            return 0;
        x->released = 2;
        if (engine_round_intervals(e, st, p->rj + x->i0, x->i1 - x->i0, p->since) != 0)
            return -1;
    }
    return 0;
}

/* What a finished job of the list tells its job. */
static void engine_pipe_finished(engine_pipe *p, engine_job *jobs, size_t i)
{
    engine_job *j = &jobs[p->src[i]];
    j->failed |= p->rj[i].failed;
    j->gated_by = p->rj[i].gated_by;
    j->ran_on = p->rj[i].ran_on;
    j->pending = 0;
    engine_pipe_done(p, i);
}

/* With o.between_rounds: once no job of round p->held or before is left (so no worker has
 * a task), that round's intervals are written, the command runs (when the round had jobs)
 * and the next round's blocks are released. 0, or -1 (a store error). */
static int engine_pipe_between(engine *e, store *st, engine_pipe *p, engine_job *jobs)
{
    while (p->held < p->rounds - 1 && !engine_stopping(e)) {
        int had = 0;
        for (size_t b = 0; b < p->n_blk; b++) {
            const engine_block *x = &p->blk[b];
            if (p->rj[x->i0].t.round > p->held)
                continue;
            if (x->left)
                return 0;
            had |= p->rj[x->i0].t.round == p->held;
        }
        if (had) {
            if (engine_pipe_intervals(e, st, p, 1) != 0)
                return -1;
            engine_between_rounds(e, p->held);
        }
        p->held = e->between_off ? INT_MAX : p->held + 1;
        engine_pipe_release(p, jobs);
    }
    return 0;
}

/* Returns 0, 1 (interrupted, or every GPU gave up), -1. */
static int engine_run_pipelined(engine *e, store *st, engine_job *jobs, size_t n, int rounds,
                                engine_keep keep, const engine_sink *sink, double since)
{
    engine_pipe p;
    if (engine_pipe_open(e, &p, jobs, n, rounds, since))
        return 1;
    engine_pipe_release(&p, jobs);
    int rc = 0;
    while (rc == 0 && (rc = engine_pipe_between(e, st, &p, jobs)) == 0) {
        int busy = 0, n_fin = 0;
        size_t fin[ENGINE_MAX_DEVICES];
        for (int k = 0; k < e->n_slots; k++) {
            if (!e->slots[k].busy && !e->slots[k].dead)
                engine_assign(e, &e->slots[k], p.rj, p.n);
            busy += e->slots[k].busy;
        }
        if (!busy)
            break;
        rc = engine_pipe_intervals(e, st, &p, 0);
        if (rc == 0)
            rc = engine_wait(e, st, p.rj, p.n, keep, sink, fin, &n_fin);
        for (int f = 0; rc == 0 && f < n_fin; f++)
            engine_pipe_finished(&p, jobs, fin[f]);
        if (rc == 0)
            engine_pipe_release(&p, jobs);
    }
    /* After a store error too (best effort, the first error kept): a round done keeps its
     * intervals, which a resume would not give it (it measures only rounds missing). */
    if (rc >= 0) {
        if (engine_pipe_intervals(e, st, &p, 1) != 0)
            rc = -1;
    } else {
        char first[sizeof e->err];
        memcpy(first, e->err, sizeof first);
        (void)engine_pipe_intervals(e, st, &p, 1);
        memcpy(e->err, first, sizeof first);
    }
    size_t left = 0; /* jobs that never ran */
    for (size_t i = 0; i < p.n; i++)
        if (!p.rj[i].done) {
            left++;
            jobs[p.src[i]].pending = 1;
        }
    engine_pipe_free(&p);
    return engine_left(e, rc, left);
}

int engine_measure(engine *e, store *st, engine_job *jobs, size_t n, engine_keep keep,
                   const engine_sink *sink)
{
    static const engine_sink none = {0};
    e->interrupted = 0;
    e->err[0] = '\0';
    if (!sink)
        sink = &none;
    const int rounds = e->o.rounds > 0 ? e->o.rounds : 1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    const double since = (double)ts.tv_sec - 1; /* records this call writes are newer */
    for (size_t i = 0; i < n; i++) {
        jobs[i].pending = 1, jobs[i].failed = 0, jobs[i].gated_by = 0, jobs[i].ran_on = 0;
        jobs[i].done = 0, jobs[i].ran_s = 0;
    }
    engine_trace.t0 = progress_now();
    if (e->n_slots > 0 && !engine_round_fresh()) {
        const int rp = engine_run_pipelined(e, st, jobs, n, rounds, keep, sink, since);
        engine_trace_say();
        return rp;
    }
    engine_job *rj = malloc((n + 1) * sizeof *rj);
    size_t *src = malloc((n + 1) * sizeof *src);
    int rc = rj && src ? 0 : 1;
    if (rc)
        engine_fail(e, "out of memory for %zu tasks", n);
    for (int r = 0; r < rounds && rc == 0; r++) {
        const size_t k = engine_round_jobs(jobs, n, r, rounds, rj, src);
        if (k == 0)
            continue;
        const int fresh = engine_round_fresh();
        if (r > 0 && e->gpu && fresh && engine_fresh_workers(e) != 0) {
            rc = 1;
            break;
        }
        for (size_t i = 0; !fresh && e->n_slots == 0 && i < k; i++)
            if (r > rj[i].first_round) /* its first round in this call gates it here */
                engine_light(&rj[i]);
        rc = engine_run_round(e, st, rj, k, keep, sink);
        for (size_t i = 0; i < k; i++) {
            jobs[src[i]].failed |= rj[i].failed;
            jobs[src[i]].pending = rj[i].pending;
            jobs[src[i]].gated_by = fresh ? 0 : rj[i].gated_by;
            jobs[src[i]].ran_on = rj[i].ran_on;
        }
        if (rc >= 0 && engine_round_intervals(e, st, rj, k, since) != 0)
            rc = -1;
        if (rc == 0 && r < rounds - 1)
            engine_between_rounds(e, r);
    }
    free(rj);
    free(src);
    engine_trace_say();
    return rc;
}

/* ---- kernel variants ------------------------------------------------------------------------ */

/* The compiler's lines as one line for a record's error field, cut on a
 * character boundary (text_copy_utf8: the field must stay valid UTF-8). */
static void engine_one_line(const char *log, char *out, size_t n)
{
    char line[1024];
    size_t k = 0;
    for (const char *p = log; *p && k + 4 < sizeof line; p++) {
        if (*p == '\n') {
            memcpy(line + k, " | ", 3);
            k += 3;
        } else if ((unsigned char)*p >= 0x20 && *p != 0x7f) {
            line[k++] = *p;
        }
    }
    line[k] = '\0';
    text_copy_utf8(out, n, line);
}

int engine_variant(engine *e, task *t, record *r, char *log, size_t loglen)
{
    /* without a GPU: the build's first architecture, or the family's one */
    const fa_family *f = fa_family_of(&t->configs[0]);
    const int cc = e->gpu ? e->dev.cc : f && f->arch ? f->arch : atoi(fa_build_archs());
    const int rc = variant_build(&t->variant, &t->configs[0], cc, log, loglen);
    if (rc <= 0)
        return rc;
    task_device none = {.cc = cc};
    task_record_init(r, e->gpu ? &e->dev : &none, &t->problem, &t->configs[0], t->modes[0]);
    task_record_variant(r, &t->variant);
    r->status = RECORD_ST_COMPILE_ERROR;
    engine_one_line(log, r->error, sizeof r->error);
    engine_provenance(e, r);
    return 1;
}
