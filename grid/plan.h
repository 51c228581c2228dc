/* plan.h - the grid of a space: every (problem, config) point, accepted or
 * rejected with a reason, before anything runs.
 *
 * The rules are static: they need no GPU. They are the point's family's
 * (kernels/family.h: fa_family.check); the shared-memory rule uses the
 * family's smem_bytes, the function its launch uses. Every point has its
 * family in cfg.family: the space's own (space.family) for the grid of its
 * "axes", then each family of its "families" (space.extra) for theirs. A
 * family that runs on one architecture only (fa_family.arch) has every
 * point rejected as PLAN_REJ_ARCH on a space whose target is another.
 */
#ifndef PLAN_H
#define PLAN_H

#include <stddef.h>

#include "../kernels/family.h"
#include "space.h"

/* The family's verdicts (kernels/family.h, same values), then the plan's. */
typedef enum plan_reason {
    PLAN_OK = FA_REJ_OK,
    PLAN_REJ_HEAD_DIM = FA_REJ_HEAD_DIM,   /* head_dim not one the family's template takes */
    PLAN_REJ_WARP_ROWS = FA_REJ_WARP_ROWS, /* BLOCK_M is not the rows the CTA's warps own
                                              (mma: 16 per warp; wgmma: 64 per consumer
                                              warpgroup) */
    PLAN_REJ_CHUNKS = FA_REJ_CHUNKS,       /* a Q or K/V tile does not split into whole
                                              16-byte cp.async chunks per thread (mma) */
    PLAN_REJ_SMEM = FA_REJ_SMEM,           /* the family's smem_bytes over the space's limit */
    PLAN_REJ_ARCH = FA_REJ_ARCH,           /* the family runs on one architecture (fa_family.arch)
                                              and the space's target is another */
    PLAN_REJ_TILE = FA_REJ_TILE,           /* a TMA box or wgmma shape the hardware lacks */
    PLAN_REJ_REGS = FA_REJ_REGS,           /* over the family's register budget (would spill) */
    PLAN_REJ_PIPELINE = FA_REJ_PIPELINE,   /* a pipeline scheme the other axes cannot run */
    PLAN_REJ_NOT_COMPILED = FA_REJ_COUNT,  /* this binary holds no instance for it (or, for a
                                              hand-built config, its family is unknown) */
    PLAN_REASON_COUNT
} plan_reason;

typedef struct plan_point {
    int problem;        /* index into space.problems */
    fa_config cfg;      /* cfg.family: the point's family (the space's) */
    plan_reason reason; /* PLAN_OK when accepted */
    long smem_bytes;    /* plan_smem_bytes(&cfg) */
    int arch;           /* the target's architecture it was planned for (space.arch; the
                           PLAN_REJ_ARCH text names it) */
} plan_point;

typedef struct plan {
    plan_point *points; /* problem-major, then axes in file order */
    size_t n;
    size_t n_accepted;
    size_t by_reason[PLAN_REASON_COUNT];
} plan;

/* Whether this binary holds an instance for c (1) or not (0). */
typedef int (*plan_compiled_fn)(const fa_config *c, void *ctx);

/* The static rules alone (c's family's), first failing rule wins, in enum
 * order. A config of no known family is PLAN_REJ_NOT_COMPILED. */
plan_reason plan_check(const fa_config *c, long smem_limit);

/* The dynamic shared memory a launch of c asks for (its family's rule);
 * 0 for a config of no known family. */
long plan_smem_bytes(const fa_config *c);

/* Enumerates the Cartesian product of s's axes for each problem, the
 * space's own grid first, then each of s->extra in order. When
 * `compiled` is non-NULL, statically valid points it says no to are
 * rejected as PLAN_REJ_NOT_COMPILED. Returns 0, or -1 when out of memory
 * (*out is then empty). Free with plan_free. */
int plan_build(const space *s, plan_compiled_fn compiled, void *ctx, plan *out);
void plan_free(plan *p);

/* Short stable code of a reason: "ok", "head_dim", "warp_rows", "chunks",
 * "smem", "arch", "tile", "regs", "pipeline", "not_compiled". A code is
 * family-neutral; what it means for a family's points is that family's
 * (kernels/family.h: fa_family.rule, e.g. warp_rows "BLOCK_M = 64 x
 * CONSUMER_WG, ..." for wgmma). */
const char *plan_reason_code(plan_reason r);

/* Human text of why point p was rejected, with the numbers, e.g.
 * "needs 65536 B shared memory, limit 49152 B". Empty for accepted points.
 * Returns what snprintf returns. */
int plan_reject_reason(const plan_point *p, long smem_limit, char *buf, size_t n);

/* The "paths" object every JSON form of a config carries (`fasweep list
 * --json`, the seeds): {"q_in_regs": bool, "lookahead": bool}, the code
 * paths the config runs (kernels/fa_config.h). A new cJSON object, NULL
 * when out of memory. */
struct cJSON;
struct cJSON *plan_paths_json(const fa_config *c);

#endif /* PLAN_H */
