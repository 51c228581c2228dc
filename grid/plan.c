/* plan.c - the grid of a space, every point accepted or rejected with a
 * reason before anything runs.
 *
 * The rules mirror what the kernel template assumes (kernels/flash_fwd.cuh):
 * each warp owns whole 16-row mma tiles of Q, every thread copies the same
 * number of 16-byte cp.async chunks of each tile, and the shared memory the
 * launch asks for (fa_smem_bytes, the same function) fits the target. */
#include "plan.h"

#include <cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Threads per CTA in long: fa_threads() is int and a config built by hand
 * (not from a space) could overflow it. */
static long plan_threads(const fa_config *c)
{
    return 32L * c->num_warps;
}

/* Whether a [rows x head_dim] tile splits into whole chunks per thread. */
static int plan_tile_splits(int rows, const fa_config *c)
{
    const long t = plan_threads(c);
    return t > 0 && fa_tile_chunks(rows, c->head_dim) % t == 0;
}

plan_reason plan_check(const fa_config *c, long smem_limit)
{
    if (c->head_dim != 64 && c->head_dim != 128)
        return PLAN_REJ_HEAD_DIM;
    /* Non-positive sizes only come from hand-built configs; they cannot be
     * split into warps, and would divide by zero below. */
    if (c->num_warps <= 0 || c->block_m <= 0 || c->block_m % (FA_MMA_M * (long)c->num_warps) != 0)
        return PLAN_REJ_WARP_ROWS;
    if (c->block_n <= 0 || !plan_tile_splits(c->block_m, c) || !plan_tile_splits(c->block_n, c))
        return PLAN_REJ_CHUNKS;
    if (c->stages <= 0 || fa_smem_bytes(c) > smem_limit)
        return PLAN_REJ_SMEM;
    return PLAN_OK;
}

/* Whether s is a table plan_build can walk without reading out of bounds
 * (a space from space_parse always is; a hand-filled one might not be). */
static int plan_space_ok(const space *s)
{
    if (s->n_problems < 0 || s->n_problems > SPACE_MAX_PROBLEMS)
        return 0;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        if (s->axis_len[a] < 0 || s->axis_len[a] > SPACE_MAX_AXIS)
            return 0;
    return 1;
}

int plan_build(const space *s, plan_compiled_fn compiled, void *ctx, plan *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !plan_space_ok(s))
        return -1;
    const int *len = s->axis_len;
    size_t n = (size_t)s->n_problems;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        n *= (size_t)len[a]; /* at most 16^6: no overflow */
    plan_point *pts = n ? calloc(n, sizeof *pts) : NULL;
    if (n && !pts)
        return -1;

    size_t k = 0;
    for (int pi = 0; pi < s->n_problems; pi++)
        for (int m = 0; m < len[SPACE_AXIS_BLOCK_M]; m++)
            for (int bn = 0; bn < len[SPACE_AXIS_BLOCK_N]; bn++)
                for (int w = 0; w < len[SPACE_AXIS_NUM_WARPS]; w++)
                    for (int st = 0; st < len[SPACE_AXIS_STAGES]; st++)
                        for (int z = 0; z < len[SPACE_AXIS_SWIZZLE]; z++) {
                            plan_point *p = &pts[k++];
                            p->problem = pi;
                            p->cfg.head_dim = s->problems[pi].head_dim;
                            p->cfg.block_m = s->axis[SPACE_AXIS_BLOCK_M][m];
                            p->cfg.block_n = s->axis[SPACE_AXIS_BLOCK_N][bn];
                            p->cfg.num_warps = s->axis[SPACE_AXIS_NUM_WARPS][w];
                            p->cfg.stages = s->axis[SPACE_AXIS_STAGES][st];
                            p->cfg.swizzle = s->axis[SPACE_AXIS_SWIZZLE][z];
                            p->smem_bytes = fa_smem_bytes(&p->cfg);
                            p->reason = plan_check(&p->cfg, s->smem_limit);
                            /* Only asked for points that could exist, so
                             * "not compiled" never hides a static reason. */
                            if (p->reason == PLAN_OK && compiled && !compiled(&p->cfg, ctx))
                                p->reason = PLAN_REJ_NOT_COMPILED;
                            out->by_reason[p->reason]++;
                        }
    out->points = pts;
    out->n = n;
    out->n_accepted = out->by_reason[PLAN_OK];
    return 0;
}

void plan_free(plan *p)
{
    if (!p)
        return;
    free(p->points);
    memset(p, 0, sizeof *p);
}

const char *plan_reason_code(plan_reason r)
{
    static const char *const codes[PLAN_REASON_COUNT] = {"ok",     "head_dim", "warp_rows",
                                                         "chunks", "smem",     "not_compiled"};
    return (unsigned)r < PLAN_REASON_COUNT ? codes[r] : "unknown";
}

/* The chunk rule's text for whichever tile fails first (Q, then K/V). */
static int plan_chunks_text(const fa_config *c, char *buf, size_t n)
{
    const int q_ok = c->block_m > 0 && plan_tile_splits(c->block_m, c);
    const char *tile = q_ok ? "K/V" : "Q";
    const int rows = q_ok ? c->block_n : c->block_m;
    return snprintf(buf, n,
                    "%s tile of %d x %d fp16 is %ld cp.async chunks of %d B, not a multiple of "
                    "%ld threads",
                    tile, rows, c->head_dim, fa_tile_chunks(rows, c->head_dim), FA_CHUNK_BYTES,
                    plan_threads(c));
}

int plan_reject_reason(const plan_point *p, long smem_limit, char *buf, size_t n)
{
    const fa_config *c = &p->cfg;
    switch (p->reason) {
    case PLAN_OK:
        return snprintf(buf, n, "%s", "");
    case PLAN_REJ_HEAD_DIM:
        return snprintf(buf, n, "head_dim %d unsupported (64, 128)", c->head_dim);
    case PLAN_REJ_WARP_ROWS:
        return snprintf(buf, n,
                        "BLOCK_M %d is not a multiple of 16 x NUM_WARPS (%d warps need %ld rows)",
                        c->block_m, c->num_warps, FA_MMA_M * (long)c->num_warps);
    case PLAN_REJ_CHUNKS:
        return plan_chunks_text(c, buf, n);
    case PLAN_REJ_SMEM:
        return snprintf(buf, n, "needs %ld B of shared memory, the space allows %ld B",
                        fa_smem_bytes(c), smem_limit);
    case PLAN_REJ_NOT_COMPILED:
        return snprintf(buf, n,
                        "not compiled into this binary (rebuild with this space in SPACES)");
    default:
        return snprintf(buf, n, "unknown reason %d", (int)p->reason);
    }
}

struct cJSON *plan_paths_json(const fa_config *c)
{
    cJSON *p = cJSON_CreateObject();
    if (!p || !cJSON_AddBoolToObject(p, "q_in_regs", fa_config_q_in_regs(c)) ||
        !cJSON_AddBoolToObject(p, "lookahead", fa_config_lookahead(c))) {
        cJSON_Delete(p);
        return NULL;
    }
    return p;
}
