/* worker.h - the CUDA worker process and the whole pipe protocol between
 * it and the engine, both ends.
 *
 * The engine never touches CUDA: a CUDA context does not survive fork(),
 * and a kernel that faults or hangs must not take the sweep with it. It
 * forks a worker (a plain fork, no exec: both ends are the same binary, so
 * the messages are the raw structs below), hands it one task (task.h) at a
 * time over one pipe and reads its answers from another, with a deadline.
 * Each message is smaller than PIPE_BUF, so a write is atomic and a worker
 * that dies never leaves half a message behind.
 *
 *   engine                         worker
 *                          <-      HELLO (device facts, or why CUDA failed)
 *   TASK (problem, configs) ->
 *                          <-      STARTED (inputs and reference ready: the
 *                                  task's timeout_s runs from here)
 *                          <-      RESULT, one per config and mode, in task
 *                                  order (a record without provenance)
 *   ...
 *   QUIT or EOF            ->      exits
 *
 * A RESULT with fatal = 1 means the worker's CUDA context is unusable (a
 * sticky error such as cudaErrorIllegalAddress): the worker exits right
 * after sending it, and the engine starts a fresh one for the next task.
 * A worker that dies or misses the deadline is killed (SIGKILL) and its
 * task's missing records are made here: crashed (how it died) or timeout.
 * The worker ignores SIGINT (Ctrl-C is the engine's to handle) and dies
 * with the engine (PR_SET_PDEATHSIG), so a hanging kernel never outlives a
 * killed sweep.
 */
#ifndef WORKER_H
#define WORKER_H

#include <stddef.h>
#include <sys/types.h>

#include "progress.h"
#include "task.h"

/* A worker process of the engine, for one GPU. */
typedef struct worker {
    pid_t pid; /* 0: none running (the next job starts one) */
    int task_fd, msg_fd;
    int device;      /* CUDA ordinal it opens */
    task_device dev; /* what its HELLO said (valid once one has started) */
    progress *prog;  /* where it says what went wrong, NULL = quiet */
} worker;

/* One task in flight on a worker, and its records as they come in. */
typedef struct worker_job {
    task t;
    int started; /* STARTED came: the task's own timeout runs */
    int n_done;  /* records in recs[] so far */
    double deadline;
    double timed_s;                /* seconds inside timed launches (the worker's count) */
    record recs[TASK_MAX_RECORDS]; /* record c * n_modes + m: config c, mode m */
} worker_job;

/* Starts a worker for GPU w->device and waits for its HELLO. Returns 0 with
 * w->dev filled, or -1 with the reason in err. */
int worker_spawn(worker *w, char *err, size_t n);

/* worker_spawn in two halves, so several workers start at once (their CUDA
 * contexts in parallel): worker_fork starts the process (0, or -1 with the
 * reason in err), worker_hello waits for its HELLO (as worker_spawn). */
int worker_fork(worker *w, char *err, size_t n);
int worker_hello(worker *w, char *err, size_t n);

/* Workers started ahead of the engine that will use them, so that their CUDA starts
 * overlap the GPU probe (worker_gpu_count) and whatever else the caller does first:
 * worker_prestart forks one per ordinal of devices[0..n) (at most WORKER_EARLY_MAX in all;
 * a fork that fails is left to worker_fork to report); worker_fork for the same ordinal
 * adopts one instead of forking (its HELLO read as usual); worker_quit_all kills and reaps
 * those nobody adopted. Returns how many prestarted workers wait for adoption. */
#define WORKER_EARLY_MAX 16
int worker_prestart(const int *devices, int n);

/* Asks each worker of ws[0..n) to exit, then waits for each (all asked
 * before any is waited for: their CUDA teardowns overlap); a slot with no
 * worker running is skipped. Also kills and reaps the prestarted workers
 * nobody adopted and the GPU probe's child: worker_quit_all(NULL, 0) leaves
 * no child of this module behind. */
void worker_quit_all(worker *const *ws, int n);

/* Sends t, starting a worker first when none runs (a worker that died
 * since its last task gets one replacement: not the task's fault). Returns
 * 0, or -1 when no worker can be started (the reason in err). */
int worker_start(worker *w, worker_job *j, const task *t, char *err, size_t n);

/* Advances job j after poll() said w->msg_fd is readable (readable = 1),
 * or when its deadline may have passed (readable = 0). Returns 1 when the
 * job is over: j->recs holds one record per config and mode (the worker's,
 * or made here for a worker that died or hung); 0 while it goes on. The
 * task's timeout_s is per record: the deadline after STARTED is timeout_s
 * times the records it gives. */
int worker_step(worker *w, worker_job *j, int readable);

/* worker_step until the job worker_start began is over (Ctrl-C waits for
 * it too). */
void worker_await(worker *w, worker_job *j);

/* Number of CUDA devices, probed in a short-lived child so the caller
 * stays CUDA-free, once per process (later calls answer the same). Returns
 * the count (0 with a message in msg saying why: no driver, no device,
 * ...). The child is not waited for once it has answered (its CUDA
 * teardown would add to the sweep's start): killed, and reaped later. */
int worker_gpu_count(char *msg, size_t n);

/* How many GPUs CUDA will likely count, without CUDA (so without its start-up): the
 * driver's /proc/driver/nvidia/gpus entries, and CUDA_VISIBLE_DEVICES as CUDA reads it;
 * 0 when unknown. Only a hint, to start the workers of `--devices all` beside the probe
 * (worker_prestart): worker_gpu_count decides. */
int worker_gpu_hint(void);

#endif /* WORKER_H */
