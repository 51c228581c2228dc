/* worker.h - the sweep worker process and the messages it exchanges with
 * the engine (sweep/run.c) over two pipes.
 *
 * The worker is a plain fork() of the engine (no exec): both sides are the
 * same binary, so the messages are the raw structs below. Each message is
 * smaller than PIPE_BUF, so a write is atomic and a worker that dies never
 * leaves half a message behind.
 *
 *   engine                         worker
 *                          <-      HELLO (device facts, or why CUDA failed)
 *   TASK (point, mode)     ->
 *                          <-      STARTED (inputs and reference ready: the
 *                                  task's timeout_s runs from here)
 *                          <-      RESULT (a full store_record but provenance)
 *   ...
 *   TASK with n_rivals > 0 ->      (a head-to-head, the refine pass)
 *                          <-      STARTED
 *                          <-      1 + n_rivals RESULTs: cfg's, then each
 *                                  rival's in order
 *   QUIT or EOF            ->      exits
 *
 * A RESULT with fatal = 1 means the worker's CUDA context is unusable (a
 * sticky error such as cudaErrorIllegalAddress): the worker exits right
 * after sending it, and the engine starts a fresh one for the next task.
 */
#ifndef RUN_WORKER_H
#define RUN_WORKER_H

#include "../kernels/fa_config.h"
#include "../store/store.h"
#include "space.h"

/* What the engine asks the worker to do instead of the real kernel at the
 * correctness gate (FASWEEP_INJECT, for the isolation tests). */
typedef enum run_inject { RUN_INJECT_NONE, RUN_INJECT_FAULT, RUN_INJECT_HANG } run_inject;

/* Configs one head-to-head task measures at most (the task and its rivals). */
#define RUN_H2H_MAX 8

typedef struct run_task {
    int quit; /* 1: exit now; nothing else is read */
    space_problem problem;
    fa_config cfg;
    /* > 0: a head-to-head of cfg and these configs, their timed blocks
     * interleaved (measure.h, run_gpu_measure). */
    int n_rivals;
    fa_config rivals[RUN_H2H_MAX - 1];
    run_inject rival_inject[RUN_H2H_MAX - 1]; /* as inject, for each rival */
    char mode[8];                             /* "hot" or "cold" */
    space_measure measure;                    /* the space's, or stricter ones when refining */
    space_tolerance tol;
    run_inject inject;
} run_task;

/* Facts about the worker's GPU, sent once at start. */
typedef struct run_device_info {
    char name[64]; /* cudaDeviceProp.name, cut to the store's device field */
    char uuid[48]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char pci[32];  /* PCI bus id */
    int cc;        /* compute capability x10 */
    int sm_count;
    long l2_bytes;
    int clock_khz;   /* peak SM clock */
    char driver[24]; /* NVML driver version, else "CUDA x.y" of the driver API */
    char runtime[24];
    char build[40]; /* fa_build_id() */
} run_device_info;

typedef enum run_msg_type {
    RUN_MSG_HELLO = 1,
    RUN_MSG_STARTED = 2, /* setup done; a task whose setup fails sends only RESULT */
    RUN_MSG_RESULT = 3
} run_msg_type;

typedef struct run_msg {
    int type;            /* run_msg_type */
    int fatal;           /* the worker exits after this message */
    char error[256];     /* HELLO: why the GPU cannot be used ("" when it can) */
    run_device_info dev; /* HELLO */
    store_record rec;    /* RESULT */
    double timed_s;      /* RESULT: seconds inside timed launches (a head-to-head's
                            all in its first RESULT) */
} run_msg;

/* The worker's whole life: opens device `device`, sends HELLO, then serves
 * tasks read from task_fd until QUIT or EOF. Never returns (_exit, so that
 * none of the parent's atexit handlers or stdio buffers run twice). */
void run_worker_main(int task_fd, int msg_fd, int device) __attribute__((noreturn));

/* Writes/reads exactly n bytes, retrying on EINTR and short transfers.
 * write: 0 or -1 (errno). read: 1 done, 0 EOF before anything was read,
 * -1 error or EOF in the middle. */
int run_write_full(int fd, const void *buf, size_t n);
int run_read_full(int fd, void *buf, size_t n);

#endif /* RUN_WORKER_H */
