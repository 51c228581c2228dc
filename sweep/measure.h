/* measure.h - checking and timing one task (task.h) on the GPU, inside
 * the CUDA worker (sweep/worker.c), the only process that touches CUDA.
 *
 * One task, in order (docs/measurement.md):
 *   1. the problem's inputs: q, k, v filled with fresh random fp16 values
 *      (uniform in [-1, 1], seeded from time and pid), and the fp32 GPU
 *      reference output, made once per problem and kept for its tasks;
 *   2. the instance's resources (fa_instance_attrs);
 *   3. the correctness gate: the output is poisoned with NaN, the kernel
 *      runs once, and the copy is compared with the reference on the host:
 *      any NaN/inf, or rel_l2 or max_abs over the space's tolerance, makes
 *      the task "wrong" and it is not timed;
 *   4. warm-up launches, then timed samples: one CUDA event pair around each
 *      launch, launches queued in blocks behind a spin kernel and
 *      synchronised once per block, until the noise stop rule says so
 *      (sweep/stats.h); cold mode flushes L2 before each sample, outside
 *      its events, by writing a scratch buffer of twice the L2 size;
 *   5. clocks and throttle reasons (NVML), right after the samples;
 *   6. one more launch with clock64 instrumentation: cycles per CTA, waves,
 *      SM imbalance.
 * Every CUDA call is checked; a failure makes the task "crashed" with the
 * call and the CUDA error in the record's error text.
 */
#ifndef MEASURE_H
#define MEASURE_H

#include "task.h"

typedef struct measure_gpu measure_gpu; /* the worker's CUDA state */

/* Selects device `device`, reads its properties, makes the stream, events
 * and L2 flush buffer, opens NVML. Returns 0 and fills *info, or -1 with the
 * reason in err (e.g. "cudaSetDevice(1): cudaErrorInvalidDevice: ..."). */
int measure_open(int device, measure_gpu **out, task_device *info, char *err, size_t errlen);
void measure_close(measure_gpu *g);

/* Runs task t: its t->n_configs configs (one, or a head-to-head of up to
 * TASK_MAX_CONFIGS in the refine pass). Each config is gated
 * and warmed up, then all that passed are timed in rounds, one block of
 * samples of each per round, each until its own stop rule (the wall time
 * of its own blocks counts against max_seconds). So they are timed over
 * the same stretch of time, and a drift of the GPU's clocks or temperature
 * falls on all alike: their medians compare better than those of tasks run
 * one after another.
 *
 * recs[i] gets config i's record (task_record_init), with every
 * field but the provenance (space, version, timestamp, host), which the
 * engine adds; a config that fails its gate is "wrong" and sits out the
 * timing. *timed_s gets the summed time of all timed samples. started(ctx)
 * is called once the problem's inputs and reference are ready, right
 * before a kernel first runs (not when the setup fails or nothing is
 * compiled). A CUDA failure stops the whole task: every record not
 * finished is "crashed" with the error (in a head-to-head prefixed by the
 * config it happened on). Returns 0 when the CUDA context is still usable
 * afterwards (whatever the statuses), -1 when it is not (a sticky error:
 * the worker must exit). */
int measure_task(measure_gpu *g, const task *t, record *recs, double *timed_s,
                 void (*started)(void *ctx), void *ctx);

#endif /* MEASURE_H */
