/* worker.c - the CUDA worker process and the pipe protocol, both ends
 * (contract: worker.h). The engine's end: spawn, send, read with a
 * deadline, reap, and the records of a task whose worker gave none. The
 * worker's end: open the GPU (measure.h), serve tasks. Also the GPU probe,
 * a child of the same kind that only counts devices.
 */
#include "worker.h"

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "progress.h"
#include "visible.h"

/* A fresh CUDA context can take long to create, longer still while the
 * driver tears down the one of a worker just killed. */
#define WORKER_HELLO_TIMEOUT_S 120.0
/* Before a task's timeout_s starts, the worker may have to allocate and
 * fill the problem's inputs and compute its reference (first task of a
 * problem); it says STARTED when done. This bounds that setup. */
#define WORKER_SETUP_TIMEOUT_S 300.0
/* How long a worker that should exit gets before SIGKILL. */
#define WORKER_REAP_TIMEOUT_S 10.0
/* A message is written atomically: once its first byte is readable, the
 * rest is there. */
#define WORKER_MSG_TIMEOUT_S 5.0

typedef enum worker_msg_type {
    WORKER_MSG_HELLO = 1,
    WORKER_MSG_STARTED = 2, /* setup done; a task whose setup fails sends only RESULTs */
    WORKER_MSG_RESULT = 3
} worker_msg_type;

typedef struct worker_msg {
    int type;        /* worker_msg_type */
    int fatal;       /* the worker exits after this message */
    char error[256]; /* HELLO: why the GPU cannot be used ("" when it can) */
    task_device dev; /* HELLO */
    record rec;      /* RESULT */
    double timed_s;  /* RESULT: seconds inside timed launches (a head-to-head's
                        all in its first RESULT) */
} worker_msg;

/* Atomic pipe writes: a dying worker never leaves half a message. */
_Static_assert(sizeof(worker_msg) <= PIPE_BUF, "worker_msg must fit one atomic pipe write");
_Static_assert(sizeof(task) <= PIPE_BUF, "task must fit one atomic pipe write");

/* ---- plumbing -----------------------------------------------------------------------------------
 */

static double worker_now(void)
{
    return progress_now();
}

/* Writes exactly n bytes, retrying on EINTR and short writes. 0 or -1. */
static int worker_write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        const ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

enum { WORKER_RD_OK, WORKER_RD_EOF, WORKER_RD_TIMEOUT, WORKER_RD_ERROR };

/* Reads exactly n bytes within timeout_s. A signal (Ctrl-C) does not cut
 * the wait short: the engine finishes the task in flight. */
static int worker_read_timeout(int fd, void *buf, size_t n, double timeout_s)
{
    const double end = worker_now() + timeout_s;
    size_t got = 0;
    while (got < n) {
        const double left = end - worker_now();
        if (left <= 0)
            return WORKER_RD_TIMEOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        const int ms = left * 1000 + 1 > INT_MAX ? INT_MAX : (int)(left * 1000 + 1);
        const int pr = poll(&pfd, 1, ms);
        if (pr < 0 && errno != EINTR)
            return WORKER_RD_ERROR;
        if (pr <= 0)
            continue; /* interrupted or timed out: the loop checks the deadline */
        const ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return WORKER_RD_ERROR;
        if (k == 0)
            return WORKER_RD_EOF;
        got += (size_t)k;
    }
    return WORKER_RD_OK;
}

/* "exited with status 2", "killed by signal 9 (Killed)". */
static void worker_describe_status(int status, char *buf, size_t n)
{
    if (WIFEXITED(status))
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "ended with wait status %#x", (unsigned)status);
}

/* Waits for pid; SIGKILL after timeout_s (at once when timeout_s is 0). */
static int worker_wait(pid_t pid, double timeout_s)
{
    int status = 0;
    const double end = worker_now() + timeout_s;
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            return status;
        if (r == 0 && worker_now() >= end)
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

/* Forks a child that runs fn(out_fd, in_fd, arg): out_fd the write end of
 * a new pipe whose read end the parent gets in *rd; with wr_to, in_fd the
 * read end of a second pipe whose write end the parent gets in *wr_to (-1
 * without). Returns the child's pid, or -1 with the reason in err. */
static pid_t worker_fork_child(void (*fn)(int fd, int in_fd, int arg), int arg, int *rd, int *wr_to,
                               const char *what, char *err, size_t n)
{
    int from[2], to[2];
    if (pipe(from) != 0) {
        snprintf(err, n, "cannot make a pipe for %s: %s", what, strerror(errno));
        return -1;
    }
    if (wr_to && pipe(to) != 0) {
        snprintf(err, n, "cannot make a pipe for %s: %s", what, strerror(errno));
        close(from[0]);
        close(from[1]);
        return -1;
    }
    fflush(NULL); /* the child must not write the parent's buffered output again */
    const pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        snprintf(err, n, "cannot fork %s: %s", what, strerror(errno));
        close(from[0]);
        close(from[1]);
        if (wr_to) {
            close(to[0]);
            close(to[1]);
        }
        return -1;
    }
    if (pid == 0) {
        /* Keeping the engine's ends open here would hide its death (no EOF). */
        close(from[0]);
        if (wr_to)
            close(to[1]);
        /* Ctrl-C goes to the whole foreground process group; it is the
         * engine's to handle (finish the task, then stop), not the child's. */
        signal(SIGINT, SIG_IGN);
        signal(SIGBUS, SIG_DFL); /* the store's handler speaks of the store */
        /* Do not outlive the engine (kill -9 of it, a second Ctrl-C): a
         * hanging kernel would otherwise hold the GPU forever. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* it died before prctl took effect */
            _exit(1);
        fn(from[1], wr_to ? to[0] : -1, arg);
        _exit(0);
    }
    close(from[1]);
    *rd = from[0];
    if (wr_to) {
        close(to[0]);
        *wr_to = to[1];
    }
    return pid;
}

/* ---- the GPU probe -------------------------------------------------------------------------- */

typedef struct worker_probe {
    int count;
    char msg[256];
} worker_probe;

static void worker_probe_child(int fd, int unused_fd, int unused)
{
    (void)unused_fd;
    (void)unused;
    worker_probe p;
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
    (void)worker_write_full(fd, &p, sizeof p); /* nothing to do if the parent is gone */
}

/* The GPU probe's child, killed once it answered and not yet reaped
 * (worker_gpu_count); 0 for none. */
static pid_t worker_probe_pid;

int worker_gpu_count(char *msg, size_t n)
{
    static int asked, count;
    static char said[sizeof((worker_probe *)0)->msg + 128];
    if (asked) {
        if (n)
            snprintf(msg, n, "%s", said);
        return count;
    }
    asked = 1;
    int fd;
    const pid_t pid = worker_fork_child(worker_probe_child, 0, &fd, NULL,
                                        "a process to probe for GPUs", said, sizeof said);
    worker_probe p;
    const int r =
        pid < 0 ? WORKER_RD_EOF : worker_read_timeout(fd, &p, sizeof p, WORKER_HELLO_TIMEOUT_S);
    if (pid >= 0)
        close(fd);
    if (pid >= 0 && r == WORKER_RD_OK) {
        /* answered: its exit is not waited for (reaped in worker_quit_all) */
        kill(pid, SIGKILL);
        worker_probe_pid = pid;
        p.msg[sizeof p.msg - 1] = '\0';
        snprintf(said, sizeof said, "%s", p.msg);
        count = p.count;
    } else if (pid >= 0) {
        char how[96];
        worker_describe_status(worker_wait(pid, 0), how, sizeof how);
        snprintf(said, sizeof said, "the process probing for GPUs %s (%s)",
                 r == WORKER_RD_TIMEOUT ? "hung in CUDA initialisation and was killed" : "died",
                 how);
    }
    if (n)
        snprintf(msg, n, "%s", said);
    return count;
}

/* The GPUs the driver lists (one folder each, its PCI bus id), without CUDA. */
static int worker_driver_gpus(void)
{
    int n = 0;
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (d) {
        for (const struct dirent *e; (e = readdir(d));)
            n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

/* How many of the n GPUs the driver lists CUDA will see, by CUDA_VISIBLE_DEVICES. */
static int worker_visible_of(int n)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    return v ? visible_count(v, n) : n;
}

int worker_gpu_hint(void)
{
    return worker_visible_of(worker_driver_gpus());
}

/* The CUDA ordinal the worker of GPU `device` (the engine's numbering: CUDA's, under this
 * process's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER) opens. Before CUDA starts, the
 * worker makes its GPU the only one it sees: CUDA_VISIBLE_DEVICES set to the device-th
 * entry of the list it inherits (or to the ordinal itself when there is none), so the
 * ordinal is 0. Why: a worker needs no other GPU, and CUDA's start when several workers
 * start at once was shorter so in two of the three measurements (sweep/NOTES-engine.md,
 * eleventh and nineteenth sessions; the third, on another host, 0.05 s longer). Where the
 * driver's list cannot be read, or the device is not among those the inherited list names,
 * nothing changes: `device`. */
static int worker_isolate(int device)
{
    const int n = worker_driver_gpus();
    if (device < 0 || n <= 0 || device >= worker_visible_of(n))
        return device;
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    char entry[128];
    if (!v)
        snprintf(entry, sizeof entry, "%d", device);
    else if (visible_entry(v, device, entry, sizeof entry) != 0)
        return device;
    return setenv("CUDA_VISIBLE_DEVICES", entry, 1) == 0 ? 0 : device;
}

/* ---- the worker's end ----------------------------------------------------------------------- */

/* Tells the engine the task's kernel starts now (its timeout runs from
 * here); the RESULT that follows is what counts, so a failed write is
 * noticed there. */
static void worker_started(void *ctx)
{
    static worker_msg m; /* static: see worker_child */
    m.type = WORKER_MSG_STARTED;
    (void)worker_write_full(*(const int *)ctx, &m, sizeof m);
}

/* One task: one RESULT per record, in the task's order; the last carries
 * the fatal flag when the context is gone (then it exits, and the engine
 * starts a fresh worker). */
static void worker_serve(measure_gpu *g, const task *t, int msg_fd)
{
    static record recs[TASK_MAX_RECORDS]; /* static: see worker_child */
    static worker_msg m;
    double timed_s = 0;
    const int fatal = measure_task(g, t, recs, &timed_s, worker_started, &msg_fd) != 0;
    const int n = t->n_configs * t->n_modes;
    for (int i = 0; i < n; i++) {
        memset(&m, 0, sizeof m);
        m.type = WORKER_MSG_RESULT;
        m.rec = recs[i];
        m.timed_s = i == 0 ? timed_s : 0;
        m.fatal = fatal && i == n - 1;
        if (worker_write_full(msg_fd, &m, sizeof m) != 0)
            _exit(1);
    }
    if (fatal)
        _exit(2);
}

/* Reads exactly one task; 1 done, 0 EOF, -1 error or EOF in the middle. */
static int worker_read_task(int fd, task *t)
{
    char *p = (char *)t;
    size_t got = 0;
    while (got < sizeof *t) {
        const ssize_t k = read(fd, p + got, sizeof *t - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k == 0 && got == 0 ? 0 : -1;
        got += (size_t)k;
    }
    return 1;
}

static void worker_child(int msg_fd, int task_fd, int device)
{
    /* Static: a worker is a single-threaded process with one message in
     * flight, and a record is too big to copy around on a whim. */
    static worker_msg m;
    static task t;
    memset(&m, 0, sizeof m);
    m.type = WORKER_MSG_HELLO;
    measure_gpu *g = NULL;
    if (measure_open(device, worker_isolate(device), &g, &m.dev, m.error, sizeof m.error) != 0) {
        m.fatal = 1;
        (void)worker_write_full(msg_fd, &m, sizeof m); /* exiting either way */
        _exit(1);
    }
    if (worker_write_full(msg_fd, &m, sizeof m) != 0)
        _exit(1); /* the engine is gone */
    while (worker_read_task(task_fd, &t) == 1 && !t.quit) {
        if (t.n_configs < 1 || t.n_configs > TASK_MAX_CONFIGS || t.n_modes < 1 ||
            t.n_modes > SPACE_MAX_MODES)
            _exit(3); /* not a task this engine sends: the engine reports the exit */
        worker_serve(g, &t, msg_fd);
    }
    const double t0 = progress_now();
    measure_close(g);
    progress_trace_ms("worker close", (progress_now() - t0) * 1e3);
    _exit(0);
}

/* ---- the engine's end ----------------------------------------------------------------------- */

/* Records a task gives: one per config and mode. */
static int worker_records(const task *t)
{
    return t->n_configs * t->n_modes;
}

/* Closes the pipes and waits for the worker (SIGKILL first when kill_now,
 * else after WORKER_REAP_TIMEOUT_S); how gets its exit status. */
static void worker_reap(worker *w, int kill_now, char *how, size_t n)
{
    if (!w->pid) {
        snprintf(how, n, "not running");
        return;
    }
    close(w->task_fd);
    close(w->msg_fd);
    if (kill_now)
        kill(w->pid, SIGKILL);
    worker_describe_status(worker_wait(w->pid, kill_now ? 0 : WORKER_REAP_TIMEOUT_S), how, n);
    w->pid = 0;
}

/* Prestarted workers (worker_prestart); pid 0 once adopted or dropped. */
static worker worker_early[WORKER_EARLY_MAX];
static int worker_n_early;

/* Forks w's process (the one place that does). */
static int worker_fork_new(worker *w, char *err, size_t n)
{
    w->pid = worker_fork_child(worker_child, w->device, &w->msg_fd, &w->task_fd, "the CUDA worker",
                               err, n);
    if (w->pid < 0) {
        w->pid = 0;
        return -1;
    }
    return 0;
}

/* The prestarted worker for GPU `device` still there to adopt, or NULL. */
static worker *worker_early_for(int device)
{
    for (int i = 0; i < worker_n_early; i++)
        if (worker_early[i].pid && worker_early[i].device == device)
            return &worker_early[i];
    return NULL;
}

int worker_prestart(const int *devices, int n)
{
    for (int i = 0; i < n && worker_n_early < WORKER_EARLY_MAX; i++) {
        if (worker_early_for(devices[i]))
            continue;
        worker *w = &worker_early[worker_n_early];
        memset(w, 0, sizeof *w);
        w->device = devices[i];
        char err[256];
        if (worker_fork_new(w, err, sizeof err) == 0)
            worker_n_early++;
    }
    int waiting = 0;
    for (int i = 0; i < worker_n_early; i++)
        waiting += worker_early[i].pid != 0;
    return waiting;
}

/* Kills and reaps the prestarted workers nobody adopted. */
static void worker_prestart_drop(void)
{
    for (int i = 0; i < worker_n_early; i++) {
        char how[96];
        if (worker_early[i].pid)
            worker_reap(&worker_early[i], 1, how, sizeof how);
    }
    worker_n_early = 0;
}

int worker_fork(worker *w, char *err, size_t n)
{
    worker *e = worker_early_for(w->device);
    if (!e)
        return worker_fork_new(w, err, n);
    w->pid = e->pid;
    w->msg_fd = e->msg_fd;
    w->task_fd = e->task_fd;
    e->pid = 0;
    return 0;
}

int worker_spawn(worker *w, char *err, size_t n)
{
    return worker_fork(w, err, n) ? -1 : worker_hello(w, err, n);
}

int worker_hello(worker *w, char *err, size_t n)
{
    static worker_msg m;
    const int r = worker_read_timeout(w->msg_fd, &m, sizeof m, WORKER_HELLO_TIMEOUT_S);
    if (r == WORKER_RD_OK && m.type == WORKER_MSG_HELLO && !m.fatal) {
        w->dev = m.dev;
        return 0;
    }
    char how[96];
    worker_reap(w, r != WORKER_RD_OK, how, sizeof how);
    m.error[sizeof m.error - 1] = '\0';
    if (r == WORKER_RD_OK)
        snprintf(err, n, "the CUDA worker cannot use the GPU: %s", m.error);
    else if (r == WORKER_RD_TIMEOUT)
        snprintf(err, n, "the CUDA worker did not start within %.0f s and was killed (%s)",
                 WORKER_HELLO_TIMEOUT_S, how);
    else
        snprintf(err, n, "the CUDA worker died while starting (%s)", how);
    return -1;
}

/* Asks a running worker to exit (a dead one is reaped all the same). */
static void worker_ask_quit(worker *w)
{
    if (!w->pid)
        return;
    task t;
    memset(&t, 0, sizeof t);
    t.quit = 1;
    (void)worker_write_full(w->task_fd, &t, sizeof t);
}

void worker_quit_all(worker *const *ws, int n)
{
    worker_prestart_drop();
    for (int i = 0; i < n; i++)
        worker_ask_quit(ws[i]);
    for (int i = 0; i < n; i++) {
        char how[96];
        if (ws[i]->pid)
            worker_reap(ws[i], 0, how, sizeof how);
    }
    if (worker_probe_pid > 0) { /* killed long ago: gone by now */
        (void)worker_wait(worker_probe_pid, 0);
        worker_probe_pid = 0;
    }
}

int worker_start(worker *w, worker_job *j, const task *t, char *err, size_t n)
{
    memset(j, 0, sizeof *j);
    j->t = *t;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->pid && worker_spawn(w, err, n) != 0)
            return -1;
        if (worker_write_full(w->task_fd, t, sizeof *t) == 0) {
            j->deadline = worker_now() + WORKER_SETUP_TIMEOUT_S;
            return 0;
        }
        char how[96];
        worker_reap(w, 1, how, sizeof how);
        progress_say(w->prog,
                     "the CUDA worker was gone before its next task (%s); starting a new one", how);
    }
    snprintf(err, n, "cannot hand tasks to a CUDA worker: it dies at once");
    return -1;
}

/* The records the worker gave none for: r is how the read ended, how the
 * worker's exit status (it is reaped already). */
static void worker_fail_rest(worker *w, worker_job *j, int r, const char *how)
{
    const task *t = &j->t;
    char why[256];
    record_status st = RECORD_ST_TIMEOUT;
    if (r == WORKER_RD_TIMEOUT && j->started)
        snprintf(why, sizeof why,
                 "no result within measure.timeout_s = %.1f s (per config and mode) of the "
                 "kernel's first launch: it hangs or is far too slow; the worker was killed",
                 t->measure.timeout_s);
    else if (r == WORKER_RD_TIMEOUT)
        snprintf(why, sizeof why,
                 "the problem setup (inputs and reference) took longer than %.0f s; the worker "
                 "was killed",
                 WORKER_SETUP_TIMEOUT_S);
    else {
        st = RECORD_ST_CRASHED;
        snprintf(why, sizeof why,
                 "the worker process %s during the task without reporting a CUDA error%s", how,
                 r == WORKER_RD_OK ? " (it sent an unexpected message)" : "");
    }
    for (; j->n_done < worker_records(t); j->n_done++) {
        record *rec = &j->recs[j->n_done];
        task_record_init(rec, &w->dev, &t->problem, &t->configs[j->n_done / t->n_modes],
                         t->modes[j->n_done % t->n_modes]);
        task_record_variant(rec, &t->variant);
        rec->status = st;
        snprintf(rec->error, sizeof rec->error, "%s", why);
    }
}

int worker_step(worker *w, worker_job *j, int readable)
{
    static worker_msg m;
    int r = WORKER_RD_TIMEOUT;
    if (readable) {
        r = worker_read_timeout(w->msg_fd, &m, sizeof m, WORKER_MSG_TIMEOUT_S);
        if (r == WORKER_RD_OK && m.type == WORKER_MSG_STARTED && !j->started) {
            j->started = 1;
            j->deadline = worker_now() + j->t.measure.timeout_s * worker_records(&j->t);
            return 0;
        }
        if (r == WORKER_RD_OK && m.type == WORKER_MSG_RESULT) {
            j->recs[j->n_done++] = m.rec;
            j->timed_s += m.timed_s;
            if (m.fatal) { /* it exits by itself after a sticky CUDA error */
                char how[96];
                worker_reap(w, 0, how, sizeof how);
                if (j->n_done < worker_records(&j->t))
                    worker_fail_rest(w, j, WORKER_RD_EOF, how);
            }
            return j->n_done == worker_records(&j->t);
        }
    } else if (worker_now() < j->deadline) {
        return 0;
    }
    char how[96];
    worker_reap(w, 1, how, sizeof how);
    worker_fail_rest(w, j, r, how);
    return 1;
}

void worker_await(worker *w, worker_job *j)
{
    for (;;) {
        const double left = j->deadline - worker_now();
        struct pollfd pfd = {.fd = w->msg_fd, .events = POLLIN};
        const int ms = left <= 0 ? 0 : left * 1000 + 1 > INT_MAX ? INT_MAX : (int)(left * 1000 + 1);
        const int pr = poll(&pfd, 1, ms);
        if (pr < 0 && errno == EINTR)
            continue; /* Ctrl-C: the task in flight is finished first */
        if (worker_step(w, j, pr > 0))
            return;
    }
}
