/* task.h - what the engine asks a CUDA worker to do, and what the worker
 * says about its GPU: the types both ends of the worker pipe share (the
 * engine: sweep/engine.c, whose tasks sweep/run.c, sweep/refine.c and the
 * eval command make; the worker: sweep/worker.c, sweep/measure.c), and
 * the one function that starts a record.
 *
 * A task is one problem, one or more configs and the measurement settings.
 * With one config it is a plain sweep task; with several it is a
 * head-to-head (`fasweep eval`): every config is gated, then all are
 * timed in interleaved rounds (measure.h). It fits one atomic pipe write.
 */
#ifndef TASK_H
#define TASK_H

#include <stddef.h>

#include "../kernels/fa_config.h"
#include "../store/record.h"
#include "../grid/space.h"

/* Configs one task measures at most (a head-to-head of up to 8), and the
 * records it gives at most: one per config and mode. */
#define TASK_MAX_CONFIGS 8
#define TASK_MAX_RECORDS (TASK_MAX_CONFIGS * SPACE_MAX_MODES)

/* What the worker runs instead of a config's kernel at the correctness
 * gate (FASWEEP_INJECT, for the isolation tests; docs/measurement.md). */
typedef enum task_inject { TASK_INJECT_NONE, TASK_INJECT_FAULT, TASK_INJECT_HANG } task_inject;

/* A kernel variant (`fasweep eval --kernel`, sweep/variant.h): an edited
 * copy of kernels/mma/flash_fwd.cuh compiled for one config into its own
 * library, run instead of the compiled instance. build[0] == '\0': none;
 * so[0] == '\0' until it compiled. */
#define TASK_VARIANT_PATH 512
typedef struct task_variant {
    char so[TASK_VARIANT_PATH]; /* the compiled library the worker loads */
    char build[40];             /* the records' build id: "src-" + the source's hash */
    char path[256];             /* the source file, for the provenance */
    char hash[17];              /* FNV-1a 64 of its text */
} task_variant;

typedef struct task {
    int quit;             /* 1: the worker exits; nothing else is read */
    task_variant variant; /* the one config's kernel comes from here when so[0] */
    space_problem problem;
    int n_configs; /* 1, or up to TASK_MAX_CONFIGS for a head-to-head */
    fa_config configs[TASK_MAX_CONFIGS];
    task_inject inject[TASK_MAX_CONFIGS];
    int n_modes;
    char modes[SPACE_MAX_MODES][MODE_NAME_MAX]; /* names of store/mode.h's table */
    space_measure measure;                      /* the space's, or stricter ones when refining */
    space_tolerance tol;
    int light; /* a later round on the worker that gated it: time only (no gate, no clock64
                  launch; sweep/engine.h, rounds); the engine folds it into the stored record */
    int round; /* set by engine_measure: the round it runs in (0-based; sweep/engine.h); a
                  worker makes its stream anew and moves the problem's timed buffers when a task
                  of another round than the last comes (measure.c ms_new_round, guard_place) */
} task;

/* Facts about the worker's GPU, sent once when it starts. */
typedef struct task_device {
    char name[64]; /* cudaDeviceProp.name, cut to the record's device field */
    char uuid[48]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char pci[32];  /* PCI bus id */
    int cc;        /* compute capability x10 */
    int sm_count;
    long l2_bytes;
    int clock_khz;   /* peak SM clock */
    char driver[24]; /* NVML driver version, else "CUDA x.y" of the driver API */
    char runtime[24];
    char build[40]; /* fa_build_id() */
} task_device;

/* The one way a record starts: the key of (dev, problem, config, mode),
 * kind kernel, status crashed until the task shows otherwise, numbers
 * unknown (NaN, clocks -1) and the environment of dev. */
void task_record_init(record *r, const task_device *dev, const space_problem *p, const fa_config *c,
                      const char *mode);

/* The build and provenance of a variant's record (nothing without one). */
void task_record_variant(record *r, const task_variant *v);

/* The provenance the engine adds before storing: host, space, fasweep
 * version and the time now. */
void task_provenance(record *r, const char *host, const char *space_name, const char *space_hash);

/* The checks a kernel passes before its timing is stored (sweep/guard.h;
 * docs/measurement.md "What is checked"), in the order they run: the
 * error of a record refused by one starts "NAME: ". NULL-terminated. */
extern const char *const task_checks[];

/* The name of the check an error text says refused the kernel ("timed"),
 * or NULL when it names none. */
const char *task_check_of(const char *error);

/* FASWEEP_INJECT="fault:CONFIG,hang:CONFIG": which configs run an injected
 * kernel. */
#define TASK_MAX_INJECT 16
typedef struct task_inject_rule {
    fa_config cfg;
    task_inject kind;
} task_inject_rule;

/* Parses the variable's text into rules (at most TASK_MAX_INJECT). Returns
 * the number of rules, or -1 with a one-line message in err. */
int task_inject_parse(const char *text, task_inject_rule *rules, char *err, size_t errlen);
task_inject task_inject_for(const task_inject_rule *rules, int n, const fa_config *c);

#endif /* TASK_H */
