/* tuner.h - one (device, problem, mode) group written in the formats
 * external tuners read (docs/tuners.md has the field lists and the
 * reasoning):
 *
 *   kernel-tuner  a Kernel Tuner (>= 1.0) cache file: replayed by
 *                 tune_kernel(..., simulation_mode=True, cache=FILE) with
 *                 any strategy and no GPU. tune_params_keys are the grid's
 *                 family's axes by its names (mma: BLOCK_M, BLOCK_N,
 *                 NUM_WARPS, STAGES, SWIZZLE; wgmma: BLOCK_M, BLOCK_N,
 *                 CONSUMER_WG, STAGES, PIPELINE), then block_size_x;
 *                 every grid point has an entry (its key the values joined
 *                 by "," in that order), `cache` is the last key. Measured
 *                 points carry `time` (the median, ms, always a float) and
 *                 the record's other figures; the rest carry `__error__`:
 *                 InvalidConfig (rejected by the planner's rules),
 *                 RuntimeFailedConfig (wrong, crashed, timeout: Kernel Tuner
 *                 has no marker for a failed correctness check and stores
 *                 this one for a config that compiled but gave no usable
 *                 result), CompilationFailedConfig (compile_error), and,
 *                 only when allowed, ErrorConfig (accepted but not measured);
 *   t4            the T4 results format (Kernel Tuner's
 *                 schema/T4/1.0.0/results-schema.json): one result per grid
 *                 point with configuration, times, invalidity (correct,
 *                 constraints, correctness, runtime, timeout, compile),
 *                 correctness and measurements (unmeasured points, when
 *                 allowed, are left out: T4 has no word for them);
 *   t1            Kernel Tuner's T1 input file (schema/T1/1.0.0): the
 *                 search space, its restrictions, the kernel file (the
 *                 family's template path, resolved by Kernel Tuner from
 *                 the working directory), Q/K/V/O as float vectors (all
 *                 its 1.5 loader converts); tune_kernel_T1 with the
 *                 kernel-tuner export as cache replays it.
 *
 * Every format carries the planner's rules as Kernel Tuner restriction
 * strings (tuner_restrictions: kernel-tuner `restrictions`, t4
 * metadata.restrictions, t1 Conditions) and the thread block size
 * TUNER_BLOCK_X (the family's threads per CTA: 32*NUM_WARPS for mma,
 * 128*(CONSUMER_WG + 1) for wgmma) as a tune parameter; the kernel-tuner
 * cache holds every point of the tune parameters' product (a block_size_x
 * that is not the point's own thread count is InvalidConfig), so keys have
 * six values. Names, rules and the launch come from the family table
 * (kernels/family.h: axes, kt_block_x, kt_grid_x, kt_restrictions).
 */
#ifndef TUNER_H
#define TUNER_H

#include <stddef.h>
#include <stdio.h>

#include "../seeds/group.h"

typedef enum tuner_format { TUNER_KERNEL_TUNER, TUNER_T4, TUNER_T1 } tuner_format;

/* "kernel-tuner", "t4" or "t1". Returns 0, or -1 for another text. */
int tuner_format_parse(const char *text, tuner_format *out);

/* The kernel name a Kernel Tuner replay passes (tune_kernel's kernel_name). */
#define TUNER_KERNEL_NAME "flash_fwd"

/* The tune parameter every format adds beside the axes: the thread block's
 * x size, the family's threads per CTA (Kernel Tuner's name for it, so it
 * knows the block dimensions and says nothing of "no thread block dims"). */
#define TUNER_BLOCK_X "block_size_x"

#define TUNER_MAX_RESTRICTIONS (1 + FA_KT_MAX_RESTRICTIONS)
#define TUNER_RESTRICTION_LEN FA_KT_RESTRICTION_LEN

/* Whether g can be written for a tuner: 0, or -1 with one line in err (its
 * family unknown, every point rejected by the family's head_dim rule, no
 * grid). tuner_write checks it first. */
int tuner_can_write(const group *g, char *err, size_t errlen);

/* What the file says about where it came from. */
typedef struct tuner_meta {
    const char *space_name, *space_hash, *version;
} tuner_meta;

/* Accepted grid points of g (laid out: group_lay_out) with no record. */
size_t tuner_missing(const group *g, const group_cell **first);

/* Writes g in format fmt to out. Unmeasured accepted points are written
 * as ErrorConfig (kernel-tuner) or left out (t4) when allow_missing; the
 * caller refuses them otherwise (tuner_missing). Returns 0, or -1 when
 * tuner_can_write refuses g or out of memory (err says why); write errors
 * are the caller's to check. */
int tuner_write(const group *g, tuner_format fmt, const tuner_meta *meta, int allow_missing,
                FILE *out, char *err, size_t errlen);

#endif /* TUNER_H */
