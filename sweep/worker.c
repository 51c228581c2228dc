/* worker.c - the sweep worker's loop and the pipe helpers (contract: worker.h). */
#include "worker.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "measure.h"

int run_write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        const ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int run_read_full(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        const ssize_t k = read(fd, p + got, n - got);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            return got == 0 ? 0 : -1;
        got += (size_t)k;
    }
    return 1;
}

/* Tells the engine the task's kernel starts now (its timeout runs from
 * here); the RESULT that follows is what counts, so a failed write is
 * noticed there. */
static void run_worker_started(void *ctx)
{
    static run_msg m; /* static: see run_worker_main */
    m.type = RUN_MSG_STARTED;
    (void)run_write_full(*(const int *)ctx, &m, sizeof m);
}

/* One task: one RESULT per config, in the task's order (one, or a
 * head-to-head's 1 + n_rivals); the last carries the fatal flag when the
 * context is gone (then it exits, and the engine starts a fresh worker). */
static void run_worker_task(run_gpu *g, const run_task *t, int msg_fd)
{
    static store_record recs[RUN_H2H_MAX]; /* static: see run_worker_main */
    static run_msg m;
    double timed_s = 0;
    const int fatal = run_gpu_measure(g, t, recs, &timed_s, run_worker_started, &msg_fd) != 0;
    for (int i = 0; i <= t->n_rivals; i++) {
        memset(&m, 0, sizeof m);
        m.type = RUN_MSG_RESULT;
        m.rec = recs[i];
        m.timed_s = i == 0 ? timed_s : 0;
        m.fatal = fatal && i == t->n_rivals;
        if (run_write_full(msg_fd, &m, sizeof m) != 0)
            _exit(1);
    }
    if (fatal)
        _exit(2);
}

void run_worker_main(int task_fd, int msg_fd, int device)
{
    /* Static: a worker is a single-threaded process with one message in
     * flight, and a store_record is too big to copy around on a whim. */
    static run_msg m;
    static run_task t;
    memset(&m, 0, sizeof m);
    m.type = RUN_MSG_HELLO;
    run_gpu *g = NULL;
    if (run_gpu_open(device, &g, &m.dev, m.error, sizeof m.error) != 0) {
        m.fatal = 1;
        (void)run_write_full(msg_fd, &m, sizeof m); /* exiting either way */
        _exit(1);
    }
    if (run_write_full(msg_fd, &m, sizeof m) != 0)
        _exit(1); /* the engine is gone */
    while (run_read_full(task_fd, &t, sizeof t) == 1 && !t.quit) {
        if (t.n_rivals < 0 || t.n_rivals >= RUN_H2H_MAX)
            _exit(3); /* not a task this engine sends: the engine reports the exit */
        run_worker_task(g, &t, msg_fd);
    }
    run_gpu_close(g);
    _exit(0);
}
