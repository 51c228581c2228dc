/* plan.c - the grid of a space, every point accepted or rejected with a
 * reason before anything runs.
 *
 * The rules are the family's (kernels/family.h: check, reject_text); for
 * mma they mirror what its template assumes (kernels/mma/mma.c). */
#include "plan.h"

#include <cJSON.h>
#include "../kernels/family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

plan_reason plan_check(const fa_config *c, long smem_limit)
{
    const fa_family *f = fa_family_of(c);
    /* Only a hand-built config has no family; nothing is compiled for it. */
    return f ? (plan_reason)f->check(c, smem_limit) : PLAN_REJ_NOT_COMPILED;
}

long plan_smem_bytes(const fa_config *c)
{
    const fa_family *f = fa_family_of(c);
    return f ? f->smem_bytes(c) : 0;
}

/* Whether s is a table plan_build can walk without reading out of bounds
 * (a space from space_parse always is; a hand-filled one might not be). */
static int plan_space_ok(const space *s)
{
    if (s->n_problems < 0 || s->n_problems > SPACE_MAX_PROBLEMS || !fa_family_get(s->family))
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
                            p->cfg.family = s->family;
                            p->cfg.head_dim = s->problems[pi].head_dim;
                            p->cfg.block_m = s->axis[SPACE_AXIS_BLOCK_M][m];
                            p->cfg.block_n = s->axis[SPACE_AXIS_BLOCK_N][bn];
                            p->cfg.num_warps = s->axis[SPACE_AXIS_NUM_WARPS][w];
                            p->cfg.stages = s->axis[SPACE_AXIS_STAGES][st];
                            p->cfg.swizzle = s->axis[SPACE_AXIS_SWIZZLE][z];
                            p->smem_bytes = plan_smem_bytes(&p->cfg);
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

int plan_reject_reason(const plan_point *p, long smem_limit, char *buf, size_t n)
{
    const fa_family *f = fa_family_of(&p->cfg);
    switch (p->reason) {
    case PLAN_OK:
        return snprintf(buf, n, "%s", "");
    case PLAN_REJ_NOT_COMPILED:
        return f ? snprintf(buf, n,
                            "not compiled into this binary (rebuild with this space in SPACES)")
                 : snprintf(buf, n, "family %d unknown (known: %s)", p->cfg.family,
                            fa_family_names());
    default:
        if ((unsigned)p->reason < PLAN_REASON_COUNT && f)
            return f->reject_text((int)p->reason, &p->cfg, smem_limit, buf, n);
        return snprintf(buf, n, "unknown reason %d", (int)p->reason);
    }
}

struct cJSON *plan_paths_json(const fa_config *c)
{
    const fa_family *f = fa_family_of(c);
    cJSON *p = cJSON_CreateObject();
    for (int i = 0; p && f && i < f->n_paths; i++)
        if (!cJSON_AddBoolToObject(p, f->paths[i], f->path(c, i))) {
            cJSON_Delete(p);
            return NULL;
        }
    return p;
}
