/* measure.h - checking and timing one (point, mode) on the GPU, inside the
 * sweep worker (the only process that touches CUDA).
 *
 * One task, in order (README "How a point is measured"):
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
#ifndef RUN_MEASURE_H
#define RUN_MEASURE_H

#include "../store/store.h"
#include "worker.h"

typedef struct run_gpu run_gpu; /* the worker's CUDA state */

/* Selects device `device`, reads its properties, makes the stream, events
 * and L2 flush buffer, opens NVML. Returns 0 and fills *info, or -1 with the
 * reason in err (e.g. "cudaSetDevice(1): cudaErrorInvalidDevice: ..."). */
int run_gpu_open(int device, run_gpu **out, run_device_info *info, char *err, size_t errlen);
void run_gpu_close(run_gpu *g);

/* Runs task t: t->cfg, and in a head-to-head (the refine pass) its
 * t->n_rivals rivals too (at most RUN_H2H_MAX - 1). Each config is gated
 * and warmed up, then all that passed are timed in rounds, one block of
 * samples of each per round, each until its own stop rule (the wall time
 * of its own blocks counts against max_seconds). So rivals are timed over
 * the same stretch of time, and a drift of the GPU's clocks or temperature
 * falls on all alike: their medians compare better than those of tasks run
 * one after another.
 *
 * recs[0] gets t->cfg's record, recs[1 + i] rival i's, each with every
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
int run_gpu_measure(run_gpu *g, const run_task *t, store_record *recs, double *timed_s,
                    void (*started)(void *ctx), void *ctx);

#endif /* RUN_MEASURE_H */
