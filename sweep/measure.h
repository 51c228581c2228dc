/* measure.h - checking and timing one task (task.h) on the GPU, inside
 * the CUDA worker (sweep/worker.c), the only process that touches CUDA.
 *
 * One task, in order (docs/measurement.md):
 *   1. the problem's inputs (guard.h): two sets of q, k, v filled on the
 *      GPU with fresh random fp16 values (uniform in [-1, 1], seeded from
 *      time and pid), their fp32 GPU references and the gate's two small
 *      problems, made once per problem and kept (the last
 *      MEASURE_PROBLEMS_KEPT problems a worker met);
 *   2. the clock calibration, once per worker: the SM clock under a
 *      sustained tensor load of measure.calibrate_ms;
 *   3. each config's resources (fa_instance_attrs) and gate (guard_gate),
 *      once for all its modes: the launch captured on its stream and run
 *      into NaN-poisoned output, compared with the reference on the GPU
 *      (sums in double: rel_l2, max_abs, non-finite count), a bit-exact
 *      repeat, the tails and magnitude problems, the inputs unchanged; a
 *      refusal makes its records "wrong" (the error names the check), not
 *      timed;
 *   4. warm-up launches before a config's first mode (its later modes
 *      follow its own timed launches), then per mode timed blocks: a spin kernel holds
 *      the stream while the host queues the block, V changes before each
 *      sample and every launch writes its own output, checked after the
 *      block (a wrong one refuses the config in every mode); how a sample
 *      is taken
 *      is the mode's descriptor (store/mode.h): L2 warm or flushed (a
 *      scratch buffer of twice the L2 size written before each sample,
 *      outside the events: cold), one launch per event pair (hot, cold) or
 *      back-to-back launches (batch: time per launch = their time /
 *      launches).
 *      The spin and a probe after the block give the block's SM clock; a
 *      block under the calibrated clock by more than clock_tolerance is
 *      discarded and taken again after a pause of at most clock_pause_ms
 *      (stats_clock_pause_ms; at most max_discards per record, then kept
 *      and marked). Sampling stops by the stopping
 *      criterion the descriptor names (sweep/stats.h, "stdrel");
 *   5. clocks and throttle reasons (NVML), right after each mode's samples;
 *   6. in the first round, clock64 instrumentation: cycles per CTA, waves,
 *      SM imbalance (an L2-warm mode's from the last warm-up launch, a
 *      flushed mode's from one launch after a flush); a median under the GPU's physical floor makes
 * the record "implausible";
 *   7. the inputs checked unchanged once the task's modes are timed (in a
 *      head-to-head after every block).
 * Every CUDA call is checked; a failure makes the records "crashed" with
 * the call and the CUDA error in their error text.
 */
#ifndef MEASURE_H
#define MEASURE_H

#include "task.h"

typedef struct measure_gpu measure_gpu; /* the worker's CUDA state */

/* Selects GPU `device` (the engine's number for it, which messages name), CUDA ordinal
 * `ordinal` in this process (0 when the worker sees only that GPU), reads its properties,
 * makes the stream, events and L2 flush buffer, opens NVML. Returns 0 and fills *info, or
 * -1 with the reason in err (e.g. "device 1: cudaSetDevice: cudaErrorInvalidDevice: ..."). */
int measure_open(int device, int ordinal, measure_gpu **out, task_device *info, char *err,
                 size_t errlen);
void measure_close(measure_gpu *g);

/* Runs task t: its t->n_configs configs (one, or a head-to-head of up to
 * TASK_MAX_CONFIGS) in each of its t->n_modes modes. Each config is gated
 * once; per mode, all that passed are warmed up and timed in rounds, one
 * block of samples of each per round, until every one has met its stop
 * rule (one that has keeps sampling along while others go on, up to its own
 * max_samples and time budget: the wall time of its own blocks counts
 * against max_seconds), each round starting one config later than the
 * last. So they are timed over the
 * same stretch of time, none always right after the host's pause, and a
 * drift of the GPU's clocks or temperature falls on all alike: their
 * medians compare better than those of tasks run one after another.
 *
 * recs[c * n_modes + m] gets config c's record in mode m (task_record_init),
 * with every
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
