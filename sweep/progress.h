/* progress.h - live progress of a sweep.
 *
 * On a terminal: one line rewritten in place with '\r' (tasks done/total,
 * percentage, ETA, the task running now, the best result so far). Anywhere
 * else (a log file, a pipe, Slurm output): a plain line every ~2 s or every
 * 10 % of the tasks, whichever comes first, so logs stay short and readable.
 * Notes (a crash, a timeout) are printed on their own line without
 * breaking the live line. A NULL stream, or a NULL progress (a quiet
 * caller such as eval), makes every call but progress_start a no-op.
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stdio.h>

typedef struct progress {
    FILE *out;
    int tty;
    long total, done;
    double t0, last_print; /* monotonic seconds */
    int last_decile;
    int live; /* a live line is on screen (tty) */
    char now[160], best[96];
} progress;

/* Starts counting `total` tasks (the ones that will run, not the skipped). */
void progress_start(progress *p, FILE *out, long total);

/* Says what runs now ("b4.h8.s512.d64.nc d64.m64.n64.w4.s1.z0 hot"). */
void progress_begin_task(progress *p, const char *what);

/* One task finished; best is the text of the best result so far, or NULL. */
void progress_end_task(progress *p, const char *best);

/* "fasweep: " and the message, as a note (the engine's way to say what
 * went wrong mid-sweep); p may be NULL or quiet. */
void progress_say(progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Ends the live line. */
void progress_finish(progress *p);

/* Monotonic seconds, for callers timing things the same way. */
double progress_now(void);

/* Whether the measurement (or test) hook NAME, an environment variable, is set to VALUE. */
int progress_hook(const char *name, const char *value);

/* FASWEEP_TRACE set: whether the fixed costs are traced (stderr lines that
 * start "TRACE "), and one such line for a phase of a command: "TRACE phase
 * WHAT T s", T the seconds since the first progress_phase call of this
 * process (sweep/NOTES-engine.md: where a sweep's wall time goes). */
int progress_tracing(void);
void progress_phase(const char *what);
/* FASWEEP_TRACE set: "TRACE NAME  MS ms pid P", a step of this process that took MS
 * milliseconds, for a script to sum by name (several workers write to one stderr). */
void progress_trace_ms(const char *name, double ms);
/* FASWEEP_TRACE set: one such line per step of a process's work (a worker's start, a task's
 * steps, the gate's parts), with the time since its last step (sweep/NOTES-engine.md: the
 * worker's fixed costs); NULL starts over (the next line says 0: a wait is no step). */
void progress_step(const char *what);

#endif /* PROGRESS_H */
