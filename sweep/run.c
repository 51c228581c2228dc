/* run.c - the sweep engine's parent side (contract: run.h).
 *
 * This process never calls CUDA: a CUDA context does not survive fork(),
 * and a kernel that faults or hangs must not take the sweep with it. All
 * GPU work happens in a worker process (sweep/worker.c, sweep/measure.c)
 * forked from this one; the engine hands it one task at a time and waits
 * for the answer with a deadline. A worker that dies or misses the deadline
 * is reaped (killed first if need be), its task stored as crashed/timeout,
 * and a fresh worker, with a fresh context, takes the next task. Every
 * result is committed to the store before the next task starts, so a kill
 * of this process loses at most the task in flight; the next run with the
 * same arguments skips what is stored (resume).
 */
#include "run.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "progress.h"
#include "worker.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

/* A fresh CUDA context can take long to create, longer still while the
 * driver tears down the one of a worker just killed. */
#define RUN_HELLO_TIMEOUT_S 120.0
/* Before a task's timeout_s starts, the worker may have to allocate and
 * fill the problem's inputs and compute its reference (first task of a
 * problem); it says STARTED when done. This bounds that setup. */
#define RUN_SETUP_TIMEOUT_S 300.0
/* How long a worker that should exit gets before SIGKILL. */
#define RUN_REAP_TIMEOUT_S 10.0
#define RUN_MAX_INJECT 16

/* Atomic pipe writes: a dying worker never leaves half a message. */
_Static_assert(sizeof(run_msg) <= PIPE_BUF, "run_msg must fit one atomic pipe write");
_Static_assert(sizeof(run_task) <= PIPE_BUF, "run_task must fit one atomic pipe write");

enum { RUN_RD_OK, RUN_RD_EOF, RUN_RD_TIMEOUT, RUN_RD_ERROR };

/* Reads exactly n bytes within timeout_s. A signal (Ctrl-C) does not cut
 * the wait short: the engine finishes the task in flight. */
static int run_read_timeout(int fd, void *buf, size_t n, double timeout_s)
{
    const double end = run_progress_now() + timeout_s;
    size_t got = 0;
    while (got < n) {
        const double left = end - run_progress_now();
        if (left <= 0)
            return RUN_RD_TIMEOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        const int ms = left * 1000 + 1 > INT_MAX ? INT_MAX : (int)(left * 1000 + 1);
        const int pr = poll(&pfd, 1, ms);
        if (pr < 0 && errno != EINTR)
            return RUN_RD_ERROR;
        if (pr <= 0)
            continue; /* interrupted or timed out: the loop checks the deadline */
        const ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return RUN_RD_ERROR;
        if (k == 0)
            return RUN_RD_EOF;
        got += (size_t)k;
    }
    return RUN_RD_OK;
}

/* "exited with status 2", "killed by signal 9 (Killed)". */
static void run_describe_status(int status, char *buf, size_t n)
{
    if (WIFEXITED(status))
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "ended with wait status %#x", (unsigned)status);
}

/* Waits for pid; SIGKILL after timeout_s (at once when timeout_s is 0). */
static int run_reap(pid_t pid, double timeout_s)
{
    int status = 0;
    const double end = run_progress_now() + timeout_s;
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return status;
        if (r == 0 && run_progress_now() >= end)
            break;
        if (r == 0) {
            const struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/* ---- the GPU probe -------------------------------------------------------------------------- */

typedef struct run_probe {
    int count;
    char msg[256];
} run_probe;

static void run_probe_child(int fd) __attribute__((noreturn));
static void run_probe_child(int fd)
{
    run_probe p;
    memset(&p, 0, sizeof p);
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess)
        rt = 0;
    const cudaError_t e = cudaGetDeviceCount(&p.count);
    if (e == cudaSuccess && p.count > 0)
        snprintf(p.msg, sizeof p.msg, "%d CUDA device%s", p.count, p.count == 1 ? "" : "s");
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(p.msg, sizeof p.msg,
                 "no CUDA device is visible (%s: %s); check nvidia-smi and CUDA_VISIBLE_DEVICES",
                 cudaGetErrorName(e), cudaGetErrorString(e));
    else if (e == cudaErrorInsufficientDriver)
        snprintf(p.msg, sizeof p.msg,
                 "CUDA driver not found, or older than the CUDA runtime %d.%d this binary "
                 "carries (%s: %s); install or update the NVIDIA driver",
                 rt / 1000, rt % 1000 / 10, cudaGetErrorName(e), cudaGetErrorString(e));
    else
        snprintf(p.msg, sizeof p.msg, "CUDA could not be initialised (%s: %s)", cudaGetErrorName(e),
                 cudaGetErrorString(e));
    if (e != cudaSuccess)
        p.count = 0;
    (void)run_write_full(fd, &p, sizeof p); /* nothing to do if the parent is gone */
    _exit(0);
}

int run_gpu_count(char *msg, size_t n)
{
    if (n)
        msg[0] = '\0';
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(msg, n, "cannot make a pipe to probe for GPUs: %s", strerror(errno));
        return 0;
    }
    fflush(NULL); /* the child must not write the parent's buffered output again */
    const pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, n, "cannot fork a process to probe for GPUs: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        run_probe_child(fds[1]);
    }
    close(fds[1]);
    run_probe p;
    const int r = run_read_timeout(fds[0], &p, sizeof p, RUN_HELLO_TIMEOUT_S);
    close(fds[0]);
    const int status = run_reap(pid, r == RUN_RD_OK ? RUN_REAP_TIMEOUT_S : 0);
    if (r != RUN_RD_OK) {
        char how[96];
        run_describe_status(status, how, sizeof how);
        snprintf(msg, n, "the process probing for GPUs %s (%s)",
                 r == RUN_RD_TIMEOUT ? "hung in CUDA initialisation and was killed" : "died", how);
        return 0;
    }
    p.msg[sizeof p.msg - 1] = '\0';
    snprintf(msg, n, "%s", p.msg);
    return p.count;
}

/* ---- the worker process --------------------------------------------------------------------- */

typedef struct run_worker {
    pid_t pid; /* 0: none running */
    int task_fd, msg_fd;
} run_worker;

/* Closes the pipes and waits for the worker (SIGKILL first when kill_now,
 * else after RUN_REAP_TIMEOUT_S); how gets its exit status. */
static void run_worker_reap(run_worker *w, int kill_now, char *how, size_t n)
{
    if (!w->pid) {
        snprintf(how, n, "not running");
        return;
    }
    close(w->task_fd);
    close(w->msg_fd);
    if (kill_now)
        kill(w->pid, SIGKILL);
    run_describe_status(run_reap(w->pid, kill_now ? 0 : RUN_REAP_TIMEOUT_S), how, n);
    w->pid = 0;
}

static void run_worker_child(int task_fd, int msg_fd, pid_t parent, int device)
    __attribute__((noreturn));
static void run_worker_child(int task_fd, int msg_fd, pid_t parent, int device)
{
    /* Ctrl-C goes to the whole foreground process group; it is the
     * engine's to handle (finish the task, then stop), not the worker's. */
    signal(SIGINT, SIG_IGN);
    /* Do not outlive the engine (kill -9 of it, a second Ctrl-C): a
     * hanging kernel would otherwise hold the GPU forever. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* it died before prctl took effect */
        _exit(1);
    run_worker_main(task_fd, msg_fd, device);
}

/* Forks a worker and waits for its HELLO. Returns 0 and fills *info, or -1
 * with the reason in err. */
static int run_worker_spawn(run_worker *w, int device, run_device_info *info, char *err, size_t n)
{
    int to[2], from[2];
    if (pipe(to) != 0) {
        snprintf(err, n, "cannot make a pipe for the CUDA worker: %s", strerror(errno));
        return -1;
    }
    if (pipe(from) != 0) {
        snprintf(err, n, "cannot make a pipe for the CUDA worker: %s", strerror(errno));
        close(to[0]);
        close(to[1]);
        return -1;
    }
    fflush(NULL);
    const pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        snprintf(err, n, "cannot fork the CUDA worker: %s", strerror(errno));
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        return -1;
    }
    if (pid == 0) {
        /* Keeping the engine's ends open here would hide its death (no EOF). */
        close(to[1]);
        close(from[0]);
        run_worker_child(to[0], from[1], parent, device);
    }
    close(to[0]);
    close(from[1]);
    w->pid = pid;
    w->task_fd = to[1];
    w->msg_fd = from[0];
    static run_msg m;
    const int r = run_read_timeout(w->msg_fd, &m, sizeof m, RUN_HELLO_TIMEOUT_S);
    if (r == RUN_RD_OK && m.type == RUN_MSG_HELLO && !m.fatal) {
        *info = m.dev;
        return 0;
    }
    char how[96];
    run_worker_reap(w, r != RUN_RD_OK, how, sizeof how);
    m.error[sizeof m.error - 1] = '\0';
    if (r == RUN_RD_OK)
        snprintf(err, n, "the CUDA worker cannot use the GPU: %s", m.error);
    else if (r == RUN_RD_TIMEOUT)
        snprintf(err, n, "the CUDA worker did not start within %.0f s and was killed (%s)",
                 RUN_HELLO_TIMEOUT_S, how);
    else
        snprintf(err, n, "the CUDA worker died while starting (%s)", how);
    return -1;
}

/* Asks the worker to exit and waits for it. */
static void run_worker_quit(run_worker *w)
{
    if (!w->pid)
        return;
    run_task t;
    memset(&t, 0, sizeof t);
    t.quit = 1;
    (void)run_write_full(w->task_fd, &t, sizeof t); /* a dead worker is reaped all the same */
    char how[96];
    run_worker_reap(w, 0, how, sizeof how);
}

/* ---- the engine ----------------------------------------------------------------------------- */

typedef struct run_inject_rule {
    fa_config cfg;
    run_inject kind;
} run_inject_rule;

typedef struct run_ctx {
    const space *s;
    const plan *p;
    const run_options *o;
    run_summary *sum;
    store *st;
    run_worker w;
    run_device_info dev;
    run_progress prog;
    FILE *out; /* opts->progress, may be NULL */
    char host[64];
    const char *mode_best; /* the mode "best" results are taken from */
    int n_inject;
    run_inject_rule inject[RUN_MAX_INJECT];
    /* best result this run per problem, for the progress line */
    char best_cfg[SPACE_MAX_PROBLEMS][64];
    double best_us[SPACE_MAX_PROBLEMS];
    double best_tflops; /* of sum->best_config */
} run_ctx;

static void run_say(run_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void run_say(run_ctx *c, const char *fmt, ...)
{
    if (!c->out)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    run_progress_note(&c->prog, "fasweep: %s", buf);
}

/* FASWEEP_INJECT="fault:CONFIG,hang:CONFIG": test hook, see README. */
static int run_inject_parse(run_ctx *c, const char *env)
{
    if (!env || !*env)
        return 0;
    char buf[1024];
    if (strlen(env) >= sizeof buf) {
        run_say(c, "FASWEEP_INJECT is longer than %zu bytes; unset it or shorten it",
                sizeof buf - 1);
        return -1;
    }
    strcpy(buf, env);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        run_inject kind = RUN_INJECT_NONE;
        if (colon && colon - tok == 5 && strncmp(tok, "fault", 5) == 0)
            kind = RUN_INJECT_FAULT;
        else if (colon && colon - tok == 4 && strncmp(tok, "hang", 4) == 0)
            kind = RUN_INJECT_HANG;
        fa_config cfg;
        if (kind == RUN_INJECT_NONE || fa_config_parse(colon + 1, &cfg) != 0) {
            run_say(c,
                    "FASWEEP_INJECT: '%s' is not fault:CONFIG or hang:CONFIG (CONFIG as "
                    "`fasweep list` prints it, e.g. d64.m64.n64.w4.s1.z0); fix or unset it",
                    tok);
            return -1;
        }
        if (c->n_inject == RUN_MAX_INJECT) {
            run_say(c, "FASWEEP_INJECT names more than %d configs", RUN_MAX_INJECT);
            return -1;
        }
        c->inject[c->n_inject].cfg = cfg;
        c->inject[c->n_inject++].kind = kind;
        run_say(c, "FASWEEP_INJECT: %s runs an injected %s kernel instead", colon + 1,
                kind == RUN_INJECT_FAULT ? "faulting" : "hanging");
    }
    return 0;
}

static run_inject run_inject_for(const run_ctx *c, const fa_config *cfg)
{
    for (int i = 0; i < c->n_inject; i++)
        if (fa_config_cmp(&c->inject[i].cfg, cfg) == 0)
            return c->inject[i].kind;
    return RUN_INJECT_NONE;
}

/* Key fields of a task's record (device from the worker's HELLO). */
static void run_record_key(const run_ctx *c, const plan_point *pt, const char *mode,
                           store_record *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device, sizeof r->device, "%s", c->dev.name);
    space_problem_format(&c->s->problems[pt->problem], r->problem, sizeof r->problem);
    snprintf(r->build, sizeof r->build, "%s", fa_build_id());
    fa_config_format(&pt->cfg, r->config, sizeof r->config);
    snprintf(r->mode, sizeof r->mode, "%s", mode);
}

/* The record of a task that produced none (the worker died or hung). */
static void run_failure_record(const run_ctx *c, const plan_point *pt, const char *mode,
                               store_status st, const char *why, store_record *r)
{
    run_record_key(c, pt, mode, r);
    r->kind = STORE_KIND_KERNEL;
    r->status = st;
    snprintf(r->error, sizeof r->error, "%s", why);
    r->time.noise = NAN;
    r->rel_l2 = r->max_abs = NAN;
    r->cta_cycles_mean = r->cta_cycles_max = r->waves = r->sm_imbalance = NAN;
    snprintf(r->gpu_uuid, sizeof r->gpu_uuid, "%s", c->dev.uuid);
    r->cc = c->dev.cc;
    r->sm_count = c->dev.sm_count;
    snprintf(r->driver, sizeof r->driver, "%s", c->dev.driver);
    snprintf(r->runtime, sizeof r->runtime, "%s", c->dev.runtime);
    r->sm_clock_mhz = r->mem_clock_mhz = -1;
    r->throttled = -1;
}

static void run_provenance(const run_ctx *c, store_record *r)
{
    snprintf(r->host, sizeof r->host, "%s", c->host);
    snprintf(r->space_name, sizeof r->space_name, "%s", c->s->name);
    snprintf(r->space_hash, sizeof r->space_hash, "%s", c->s->hash);
    snprintf(r->version, sizeof r->version, "%s", FASWEEP_VERSION);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r->timestamp = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sends t, starting a worker first when none runs; a worker that died
 * since its last task gets one replacement (not the task's fault).
 * Returns 0, or 1 when no worker can be started (message printed). */
static int run_send(run_ctx *c, const run_task *t)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!c->w.pid) {
            char err[512];
            run_device_info info;
            if (run_worker_spawn(&c->w, c->o->device, &info, err, sizeof err) != 0) {
                run_say(c, "%s", err);
                return 1;
            }
        }
        if (run_write_full(c->w.task_fd, t, sizeof *t) == 0)
            return 0;
        char how[96];
        run_worker_reap(&c->w, 1, how, sizeof how);
        run_say(c, "the CUDA worker was gone before its next task (%s); starting a new one", how);
    }
    run_say(c, "cannot hand tasks to a CUDA worker: it dies at once");
    return 1;
}

/* The record of a task whose worker gave no result: r is how the read
 * ended (timeout or EOF), started whether the kernel had begun, how the
 * worker's exit status (it is reaped already). */
static void run_failure_of(const run_ctx *c, const plan_point *pt, const run_task *t, int r,
                           int started, const char *how, store_record *rec)
{
    char why[256];
    if (r == RUN_RD_TIMEOUT && started) {
        snprintf(why, sizeof why,
                 "no result within measure.timeout_s = %.1f s of the kernel's first launch: it "
                 "hangs or is far too slow; the worker was killed",
                 t->measure.timeout_s);
        run_failure_record(c, pt, t->mode, STORE_ST_TIMEOUT, why, rec);
    } else if (r == RUN_RD_TIMEOUT) {
        snprintf(why, sizeof why,
                 "the problem setup (inputs and reference) took longer than %.0f s; the worker "
                 "was killed",
                 RUN_SETUP_TIMEOUT_S);
        run_failure_record(c, pt, t->mode, STORE_ST_TIMEOUT, why, rec);
    } else {
        snprintf(why, sizeof why,
                 "the worker process %s during the task without reporting a CUDA error%s", how,
                 r == RUN_RD_OK ? " (it sent an unexpected message)" : "");
        run_failure_record(c, pt, t->mode, STORE_ST_CRASHED, why, rec);
    }
}

/* Waits for the worker's answer to the task just sent and turns it, or its
 * absence, into a record (without provenance). The task's timeout_s counts
 * from the worker's STARTED message; the setup before it has its own. */
static void run_collect(run_ctx *c, const plan_point *pt, const run_task *t, store_record *rec)
{
    static run_msg m;
    int started = 0, r;
    for (;;) {
        r = run_read_timeout(c->w.msg_fd, &m, sizeof m,
                             started ? t->measure.timeout_s : RUN_SETUP_TIMEOUT_S);
        if (r != RUN_RD_OK || m.type != RUN_MSG_STARTED || started)
            break;
        started = 1;
    }
    if (r == RUN_RD_OK && m.type == RUN_MSG_RESULT) {
        *rec = m.rec;
        c->sum->timed_s += m.timed_s;
        if (m.fatal) { /* it exits by itself after a sticky CUDA error */
            char how[96];
            run_worker_reap(&c->w, 0, how, sizeof how);
        }
        return;
    }
    char how[96];
    run_worker_reap(&c->w, 1, how, sizeof how);
    run_failure_of(c, pt, t, r, started, how, rec);
}

/* Counts a stored record and keeps the best results. */
static void run_tally(run_ctx *c, const plan_point *pt, const store_record *r)
{
    run_summary *sum = c->sum;
    switch (r->status) {
    case STORE_ST_OK:
        sum->measured++;
        break;
    case STORE_ST_WRONG:
        sum->wrong++;
        break;
    case STORE_ST_CRASHED:
        sum->crashed++;
        break;
    case STORE_ST_TIMEOUT:
        sum->timeout++;
        break;
    }
    if (r->status != STORE_ST_OK) {
        run_say(c, "%s %s %s: %s: %s", r->problem, r->config, r->mode, store_status_name(r->status),
                r->error);
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

enum { RUN_PUT_ALWAYS, RUN_PUT_IF_BETTER };

/* Stores r (provenance added). Returns 0 or -1 (message printed). */
static int run_store(run_ctx *c, store_record *r, int policy)
{
    run_provenance(c, r);
    if (policy == RUN_PUT_IF_BETTER) {
        char key[STORE_KEY_LEN];
        store_record old;
        int rc = store_key(r, key, sizeof key);
        if (rc == STORE_OK)
            rc = store_get(c->st, key, &old);
        if (rc == STORE_OK && !store_record_better(r, &old))
            return 0;
        if (rc != STORE_OK && rc != STORE_NOTFOUND) {
            run_say(c, "reading %s from the store failed: %s (%s)", key, store_strerror(rc),
                    store_last_error(c->st));
            return -1;
        }
    }
    const int rc = store_put(c->st, r);
    if (rc != STORE_OK) {
        run_say(c, "writing %s %s %s to the store failed: %s (%s)", r->problem, r->config, r->mode,
                store_strerror(rc), store_last_error(c->st));
        return -1;
    }
    return 0;
}

/* The task for one (point, mode), and its progress label. */
static void run_make_task(const run_ctx *c, int point, const char *mode, const space_measure *m,
                          run_task *t, char *label, size_t n)
{
    const plan_point *pt = &c->p->points[point];
    memset(t, 0, sizeof *t);
    t->problem = c->s->problems[pt->problem];
    t->cfg = pt->cfg;
    snprintf(t->mode, sizeof t->mode, "%s", mode);
    t->measure = *m;
    t->tol = c->s->tolerance;
    t->inject = run_inject_for(c, &pt->cfg);
    char prob[48], cfg[64];
    space_problem_format(&t->problem, prob, sizeof prob);
    fa_config_format(&t->cfg, cfg, sizeof cfg);
    snprintf(label, n, "%s %s %s", prob, cfg, mode);
}

/* One task from send to store. Returns 0, 1 when no worker can run it
 * (GPU unusable), -1 on a store error. *out gets the stored record. */
static int run_task_one(run_ctx *c, int point, const char *mode, const space_measure *m, int policy,
                        store_record *out)
{
    run_task t;
    char label[160];
    run_make_task(c, point, mode, m, &t, label, sizeof label);
    run_progress_begin_task(&c->prog, label);
    if (run_send(c, &t))
        return 1;
    run_collect(c, &c->p->points[point], &t, out);
    return run_store(c, out, policy) ? -1 : 0;
}

static int run_mode_index_of(const space *s, const char *mode)
{
    for (int i = 0; i < s->measure.n_modes; i++)
        if (strcmp(s->measure.modes[i], mode) == 0)
            return i;
    return -1;
}

typedef struct run_item {
    int point, mode, skip;
} run_item;

/* The task list: accepted points x modes, each marked skip when the store
 * has its key already (resume). Returns the list or NULL (message printed;
 * *rc says -1 store error or 1 out of memory). */
static run_item *run_items(run_ctx *c, size_t *n_out, int *rc)
{
    const size_t nm = (size_t)c->s->measure.n_modes;
    run_item *items = calloc(c->p->n_accepted * nm + 1, sizeof *items);
    *rc = 1;
    if (!items) {
        run_say(c, "out of memory for %zu tasks", c->p->n_accepted * nm);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->p->n; i++) {
        if (c->p->points[i].reason != PLAN_OK)
            continue;
        for (size_t m = 0; m < nm; m++) {
            run_item *it = &items[n++];
            it->point = (int)i;
            it->mode = (int)m;
            if (c->o->remeasure)
                continue;
            store_record r, old;
            char key[STORE_KEY_LEN];
            run_record_key(c, &c->p->points[i], c->s->measure.modes[m], &r);
            int src = store_key(&r, key, sizeof key);
            if (src == STORE_OK)
                src = store_get(c->st, key, &old);
            if (src == STORE_OK)
                it->skip = 1;
            else if (src != STORE_NOTFOUND) {
                run_say(c, "reading the store failed: %s (%s)", store_strerror(src),
                        store_last_error(c->st));
                free(items);
                *rc = -1;
                return NULL;
            }
        }
    }
    *n_out = n;
    *rc = 0;
    return items;
}

static void run_best_text(const run_ctx *c, int problem, char *buf, size_t n)
{
    if (c->best_us[problem] > 0)
        snprintf(buf, n, "%s %.2f us", c->best_cfg[problem], c->best_us[problem]);
    else
        buf[0] = '\0';
}

/* ---- several GPUs: one worker each, tasks to whichever is free --------------------------------
 */

typedef struct run_slot {
    run_worker w;
    int device;
    run_device_info dev;
    int busy, started, dead;
    size_t item;              /* index of the task in flight */
    int problem, has_problem; /* the problem its worker set up last */
    run_task t;
    double deadline; /* run_progress_now() time by which it must answer */
} run_slot;

/* Stores and counts the record of a finished task; frees the slot. */
static int run_slot_finish(run_ctx *c, run_slot *sl, const run_item *items, store_record *rec)
{
    const plan_point *pt = &c->p->points[items[sl->item].point];
    sl->busy = 0;
    if (run_store(c, rec, RUN_PUT_ALWAYS))
        return -1;
    run_tally(c, pt, rec);
    char best[96];
    run_best_text(c, pt->problem, best, sizeof best);
    run_progress_end_task(&c->prog, best[0] ? best : NULL);
    return 0;
}

/* The pending task a slot should take next, or n when none is left. A
 * worker computes the inputs and reference of each problem it meets, so a
 * slot stays on its problem, else takes one no other slot is on, else any:
 * with several problems each reference is computed about once. */
static size_t run_slot_pick(const run_slot *slots, int ns, const run_slot *sl, const run_ctx *c,
                            const run_item *items, size_t n)
{
    size_t first = n, fresh = n;
    for (size_t i = 0; i < n; i++) {
        if (items[i].skip)
            continue;
        const int prob = c->p->points[items[i].point].problem;
        if (sl->has_problem && prob == sl->problem)
            return i;
        if (first == n)
            first = i;
        int taken = 0;
        for (int k = 0; k < ns; k++)
            taken |= slots[k].has_problem && slots[k].problem == prob;
        if (!taken && fresh == n)
            fresh = i;
    }
    return fresh < n ? fresh : first;
}

/* Hands the next pending task to an idle slot (starting its worker when
 * needed); a task handed out is marked skip. Returns 1 when it did, 0 when
 * nothing is left to hand out or the slot's GPU is unusable. */
static int run_slot_assign(run_ctx *c, run_slot *slots, int ns, run_slot *sl, run_item *items,
                           size_t n)
{
    const size_t i = run_slot_pick(slots, ns, sl, c, items, n);
    if (i >= n || (c->o->stop && *c->o->stop))
        return 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        char err[512];
        if (!sl->w.pid && run_worker_spawn(&sl->w, sl->device, &sl->dev, err, sizeof err) != 0) {
            run_say(c, "GPU %d: %s; it takes no more tasks", sl->device, err);
            sl->dead = 1;
            return 0;
        }
        char label[160];
        run_make_task(c, items[i].point, c->s->measure.modes[items[i].mode], &c->s->measure, &sl->t,
                      label, sizeof label);
        if (run_write_full(sl->w.task_fd, &sl->t, sizeof sl->t) == 0) {
            run_progress_begin_task(&c->prog, label);
            items[i].skip = 1;
            sl->item = i;
            sl->problem = c->p->points[items[i].point].problem;
            sl->has_problem = 1;
            sl->busy = 1;
            sl->started = 0;
            sl->deadline = run_progress_now() + RUN_SETUP_TIMEOUT_S;
            return 1;
        }
        char how[96];
        run_worker_reap(&sl->w, 1, how, sizeof how);
    }
    run_say(c, "GPU %d: its worker dies at once; it takes no more tasks", sl->device);
    sl->dead = 1;
    return 0;
}

/* Reads what a busy slot's worker said (or notices its deadline passed)
 * and finishes the task when it is over. Returns 0 or -1 (store error). */
static int run_slot_poll(run_ctx *c, run_slot *sl, int readable, const run_item *items)
{
    static run_msg m;
    const plan_point *pt = &c->p->points[items[sl->item].point];
    store_record rec;
    int r = RUN_RD_TIMEOUT;
    if (readable) {
        r = run_read_timeout(sl->w.msg_fd, &m, sizeof m, 5.0);
        if (r == RUN_RD_OK && m.type == RUN_MSG_STARTED && !sl->started) {
            sl->started = 1;
            sl->deadline = run_progress_now() + sl->t.measure.timeout_s;
            return 0;
        }
        if (r == RUN_RD_OK && m.type == RUN_MSG_RESULT) {
            rec = m.rec;
            c->sum->timed_s += m.timed_s;
            if (m.fatal) {
                char how[96];
                run_worker_reap(&sl->w, 0, how, sizeof how);
            }
            return run_slot_finish(c, sl, items, &rec);
        }
    } else if (run_progress_now() < sl->deadline) {
        return 0;
    }
    char how[96];
    run_worker_reap(&sl->w, 1, how, sizeof how);
    c->dev = sl->dev; /* the failure record names this GPU */
    run_failure_of(c, pt, &sl->t, r, sl->started, how, &rec);
    return run_slot_finish(c, sl, items, &rec);
}

/* Waits until a busy slot has something to say or reaches its deadline;
 * then lets each such slot handle it. Returns 0 or -1. */
static int run_slots_wait(run_ctx *c, run_slot *slots, int ns, const run_item *items)
{
    struct pollfd fds[RUN_MAX_DEVICES];
    int idx[RUN_MAX_DEVICES], nf = 0;
    double wait_s = 3600;
    const double now = run_progress_now();
    for (int k = 0; k < ns; k++) {
        if (!slots[k].busy)
            continue;
        fds[nf].fd = slots[k].w.msg_fd;
        fds[nf].events = POLLIN;
        fds[nf].revents = 0;
        idx[nf++] = k;
        wait_s = fmin(wait_s, slots[k].deadline - now);
    }
    const int ms = wait_s <= 0 ? 0 : (int)(wait_s * 1000) + 1;
    if (poll(fds, (nfds_t)nf, ms) < 0 && errno != EINTR) {
        run_say(c, "poll on the CUDA workers failed: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < nf; i++) {
        const int readable = (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
        if (run_slot_poll(c, &slots[idx[i]], readable, items))
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
        slots[k].device = c->o->devices[k];
        if (run_worker_spawn(&slots[k].w, slots[k].device, &slots[k].dev, err, sizeof err)) {
            run_say(c, "GPU %d: %s", slots[k].device, err);
            return 1;
        }
        if (strcmp(slots[k].dev.name, slots[0].dev.name) != 0) {
            run_say(c,
                    "GPU %d is a %s but GPU %d a %s: results are keyed by GPU model, so "
                    "sweep each model in its own run (--devices with GPUs of one model)",
                    slots[0].device, slots[0].dev.name, slots[k].device, slots[k].dev.name);
            return 1;
        }
    }
    c->dev = slots[0].dev;
    snprintf(c->sum->device, sizeof c->sum->device, "%s", c->dev.name);
    return 0;
}

/* The sweep over several GPUs. Returns 0, 1 (interrupted or no GPU
 * usable), -1 (store error). */
static int run_sweep_multi(run_ctx *c)
{
    const int ns = c->o->n_devices;
    run_slot *slots = calloc((size_t)ns, sizeof *slots);
    if (!slots) {
        run_say(c, "out of memory for %d workers", ns);
        return 1;
    }
    size_t n = 0;
    run_item *items = NULL;
    /* The workers' HELLO names the GPU model, which the keys need. */
    int rc = run_slots_start(c, slots, ns);
    if (rc == 0 && !(items = run_items(c, &n, &rc)) && rc == 0)
        rc = 1;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            c->sum->skipped += items[i].skip;
        if (c->sum->skipped)
            run_say(c, "%ld of %zu tasks are in the store already and are skipped", c->sum->skipped,
                    n);
        run_progress_start(&c->prog, c->out, (long)n - c->sum->skipped);
    }
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
    for (size_t i = 0; items && i < n; i++)
        left += !items[i].skip;
    if (rc == 0 && left > 0) {
        if (c->o->stop && *c->o->stop)
            c->sum->interrupted = 1;
        else
            rc = 1; /* every GPU gave up */
    }
    for (int k = 0; k < ns; k++)
        run_worker_quit(&slots[k].w);
    if (items)
        run_progress_finish(&c->prog);
    free(items);
    free(slots);
    return rc ? rc : c->sum->interrupted;
}

/* The sweep proper. Returns 0, 1 (interrupted or GPU unusable), -1. */
static int run_sweep(run_ctx *c)
{
    if (c->o->n_devices > 1)
        return run_sweep_multi(c);
    size_t n = 0;
    int rc = 0;
    run_item *items = run_items(c, &n, &rc);
    if (!items)
        return rc;
    for (size_t i = 0; i < n; i++)
        c->sum->skipped += items[i].skip;
    if (c->sum->skipped)
        run_say(c, "%ld of %zu tasks are in the store already and are skipped%s", c->sum->skipped,
                n, c->sum->skipped == (long)n ? "" : " (resume)");
    run_progress_start(&c->prog, c->out, (long)n - c->sum->skipped);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (items[i].skip)
            continue;
        if (c->o->stop && *c->o->stop) {
            c->sum->interrupted = 1;
            break;
        }
        store_record r;
        const plan_point *pt = &c->p->points[items[i].point];
        rc = run_task_one(c, items[i].point, c->s->measure.modes[items[i].mode], &c->s->measure,
                          RUN_PUT_ALWAYS, &r);
        if (rc != 0)
            break;
        run_tally(c, pt, &r);
        char best[96];
        run_best_text(c, pt->problem, best, sizeof best);
        run_progress_end_task(&c->prog, best[0] ? best : NULL);
    }
    run_progress_finish(&c->prog);
    free(items);
    return rc ? rc : c->sum->interrupted;
}

/* ---- refine --------------------------------------------------------------------------------- */

typedef struct run_cand {
    int point;
    double old_us, new_us;
    double old_noise, new_noise; /* relative noise of old_us, new_us */
    int old_rank, new_rank;
    char config[64]; /* as fa_config_format writes it */
} run_cand;

/* The order `fasweep topk` ranks in (seeds/rank.c): median, then noise,
 * then config text. A failed re-measurement (inf) sorts last. */
static int run_cand_order(double us_a, double noise_a, double us_b, double noise_b,
                          const char *cfg_a, const char *cfg_b)
{
    if (us_a != us_b)
        return us_a < us_b ? -1 : 1;
    if (noise_a != noise_b && !isnan(noise_a) && !isnan(noise_b))
        return noise_a < noise_b ? -1 : 1;
    return strcmp(cfg_a, cfg_b);
}

static int run_cand_by_old(const void *a, const void *b)
{
    const run_cand *p = a, *q = b;
    return run_cand_order(p->old_us, p->old_noise, q->old_us, q->old_noise, p->config, q->config);
}

static int run_cand_by_new(const void *a, const void *b)
{
    const run_cand *p = a, *q = b;
    return run_cand_order(p->new_us, p->new_noise, q->new_us, q->new_noise, p->config, q->config);
}

/* The problem's "ok" records of this build in `mode`, by median. */
static int run_refine_candidates(run_ctx *c, int problem, const char *mode, run_cand *cand,
                                 int *n_out)
{
    int n = 0;
    for (size_t i = 0; i < c->p->n; i++) {
        const plan_point *pt = &c->p->points[i];
        if (pt->reason != PLAN_OK || pt->problem != problem)
            continue;
        store_record r;
        char key[STORE_KEY_LEN];
        run_record_key(c, pt, mode, &r);
        int rc = store_key(&r, key, sizeof key);
        if (rc == STORE_OK)
            rc = store_get(c->st, key, &r);
        if (rc == STORE_NOTFOUND)
            continue;
        if (rc != STORE_OK) {
            run_say(c, "reading the store failed: %s (%s)", store_strerror(rc),
                    store_last_error(c->st));
            return -1;
        }
        if (r.status == STORE_ST_OK && r.time.median_us > 0) {
            cand[n] = (run_cand){(int)i, r.time.median_us, INFINITY, r.time.noise, NAN, 0, 0, ""};
            fa_config_format(&pt->cfg, cand[n].config, sizeof cand[n].config);
            n++;
        }
    }
    qsort(cand, (size_t)n, sizeof *cand, run_cand_by_old);
    for (int i = 0; i < n; i++)
        cand[i].old_rank = i + 1;
    *n_out = n;
    return 0;
}

/* Sorts top[0..k) by the new median (failures last) and prints the table:
 * whether the order of the re-measured ones held, each one's difference to
 * the first, and which of the first are a statistical tie with it (closer
 * than twice the standard error of the difference of two medians). */
static void run_refine_report(run_ctx *c, const char *prob, const char *mode, run_cand *top, int k)
{
    qsort(top, (size_t)k, sizeof *top, run_cand_by_new);
    int held = 1, last_old = 0, failed = 0;
    for (int i = 0; i < k; i++) {
        top[i].new_rank = i + 1;
        if (isfinite(top[i].new_us)) {
            held &= top[i].old_rank > last_old;
            last_old = top[i].old_rank;
        } else
            failed++;
    }
    if (!c->out)
        return;
    fprintf(c->out, "refine %s %s, top %d: the order %s\n", prob, mode, k,
            held ? "held" : "changed");
    fprintf(c->out, "  %-8s %-8s %-24s %10s %10s %9s\n", "old_rank", "new_rank", "config", "old_us",
            "new_us", "vs_first");
    int tied = 1; /* the first `tied` are a statistical tie */
    for (int i = 0; i < k; i++) {
        const char *cfg = top[i].config;
        if (!isfinite(top[i].new_us)) {
            fprintf(c->out, "  %-8d %-8s %-24s %10.3f %10s\n", top[i].old_rank, "-", cfg,
                    top[i].old_us, "failed");
            continue;
        }
        const double d = top[i].new_us / top[0].new_us - 1;
        /* NaN noise (too few samples) compares false: never a tie. */
        const int tie = i > 0 && tied == i && d <= 2 * hypot(top[i].new_noise, top[0].new_noise);
        tied += tie;
        fprintf(c->out, "  %-8d %-8d %-24s %10.3f %10.3f %+8.2f%%%s\n", top[i].old_rank,
                top[i].new_rank, cfg, top[i].old_us, top[i].new_us, 100 * d, tie ? " tie" : "");
    }
    if (tied > 1)
        fprintf(c->out,
                "  the first %d differ by less than twice their noise: a statistical tie, the "
                "order among them may differ from run to run\n",
                tied);
    if (failed)
        fprintf(c->out, "  %d could not be re-measured (see the messages above)\n", failed);
    fflush(c->out);
}

/* One head-to-head of cand[0..k) (k <= RUN_H2H_MAX): one task, k results,
 * each stored at once (an ok one always: its median is the one that
 * compares; a failed one only over a failed record). new_us gets each
 * config's new median (inf when it failed). Returns 0, 1 when no worker can
 * run it, -1 on a store error. */
static int run_refine_h2h(run_ctx *c, const char *mode, run_cand *cand, int k,
                          const space_measure *m)
{
    run_task t;
    char label[160];
    run_make_task(c, cand[0].point, mode, m, &t, label, sizeof label);
    t.n_rivals = k - 1;
    for (int i = 1; i < k; i++) {
        t.rivals[i - 1] = c->p->points[cand[i].point].cfg;
        t.rival_inject[i - 1] = run_inject_for(c, &t.rivals[i - 1]);
    }
    /* The timeout runs from STARTED to the first result, which comes after
     * all k configs are timed. */
    t.measure.timeout_s *= k;
    run_progress_begin_task(&c->prog, label);
    if (run_send(c, &t))
        return 1;
    for (int i = 0; i < k; i++) {
        const plan_point *pt = &c->p->points[cand[i].point];
        run_task ti = t;
        ti.cfg = pt->cfg;
        store_record r;
        if (c->w.pid)
            run_collect(c, pt, &ti, &r);
        else
            run_failure_record(c, pt, ti.mode, STORE_ST_CRASHED,
                               "the head-to-head's worker was gone before this config's result",
                               &r);
        if (run_store(c, &r, r.status == STORE_ST_OK ? RUN_PUT_ALWAYS : RUN_PUT_IF_BETTER))
            return -1;
        if (r.status == STORE_ST_OK) {
            cand[i].new_us = r.time.median_us;
            cand[i].new_noise = r.time.noise;
        } else
            run_say(c,
                    "refine: re-measuring %s %s %s failed (%s: %s); the store keeps its earlier "
                    "record unless that one had failed too",
                    r.problem, r.config, r.mode, store_status_name(r.status), r.error);
    }
    run_progress_end_task(&c->prog, NULL);
    return 0;
}

/* Re-measures the top K per problem and mode with half the noise target and four
 * times the samples and time budget, as head-to-heads of up to RUN_H2H_MAX
 * configs in rank order (their timed blocks interleaved, so the GPU's drift
 * between tasks cannot reorder near-ties); stores the new records and
 * prints whether the order held. */
static int run_refine(run_ctx *c)
{
    space_measure m = c->s->measure;
    m.noise /= 2;
    m.max_samples = m.max_samples > INT_MAX / 4 ? INT_MAX : m.max_samples * 4;
    m.timeout_s += 3 * m.max_seconds; /* the budget grows by that much */
    m.max_seconds *= 4;
    run_cand *cand = calloc(c->p->n + 1, sizeof *cand);
    if (!cand) {
        run_say(c, "out of memory for the refine pass");
        return 1;
    }
    int rc = 0;
    for (int q = 0; q < c->s->n_problems * c->s->measure.n_modes && rc == 0; q++) {
        const int pi = q / c->s->measure.n_modes;
        const char *mode = c->s->measure.modes[q % c->s->measure.n_modes];
        int n = 0;
        if (run_refine_candidates(c, pi, mode, cand, &n)) {
            rc = -1;
            break;
        }
        const int k = n < c->o->refine_k ? n : c->o->refine_k;
        run_progress_start(&c->prog, c->out, (k + RUN_H2H_MAX - 1) / RUN_H2H_MAX);
        for (int i = 0; i < k && rc == 0; i += RUN_H2H_MAX) {
            if (c->o->stop && *c->o->stop) {
                c->sum->interrupted = rc = 1;
                break;
            }
            rc = run_refine_h2h(c, mode, cand + i, k - i < RUN_H2H_MAX ? k - i : RUN_H2H_MAX, &m);
        }
        run_progress_finish(&c->prog);
        if (rc == 0 && k > 0) {
            char prob[48];
            space_problem_format(&c->s->problems[pi], prob, sizeof prob);
            run_refine_report(c, prob, mode, cand, k);
        }
    }
    free(cand);
    return rc;
}

/* ---- run_grid ------------------------------------------------------------------------------- */

static int run_start(run_ctx *c, const char *store_path)
{
    if (run_inject_parse(c, getenv("FASWEEP_INJECT")))
        return 1;
    char err[1024] = "";
    const int src = store_open(store_path, 0, &c->st, err, sizeof err);
    if (src != STORE_OK) {
        run_say(c, "%s", err[0] ? err : store_strerror(src));
        c->st = NULL;
        return -1;
    }
    if (c->o->n_devices > 1) /* run_sweep_multi starts one worker per GPU */
        return 0;
    if (run_worker_spawn(&c->w, c->o->device, &c->dev, err, sizeof err) != 0) {
        run_say(c, "%s", err);
        return 1;
    }
    snprintf(c->sum->device, sizeof c->sum->device, "%s", c->dev.name);
    return 0;
}

int run_grid(const space *s, const plan *p, const char *store_path, const run_options *opts,
             run_summary *sum)
{
    const double t0 = run_progress_now();
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
    c.mode_best = run_mode_index_of(s, "hot") >= 0 ? "hot" : s->measure.modes[0];
    run_progress_start(&c.prog, c.out, 0);
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
    if (rc == 0)
        rc = run_sweep(&c);
    if (rc == 0 && opts->refine_k > 0)
        rc = run_refine(&c);
    run_worker_quit(&c.w);
    store_close(c.st);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sum->wall_s = run_progress_now() - t0;
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
