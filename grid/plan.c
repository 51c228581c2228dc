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

/* The target-architecture rule (family-neutral): a family whose code runs
 * on one architecture only (fa_family.arch) plans nothing for another. */
static plan_reason plan_check_arch(const fa_config *c, int arch)
{
    const fa_family *f = fa_family_of(c);
    return f && f->arch && f->arch != arch ? PLAN_REJ_ARCH : PLAN_OK;
}

static int plan_grid_ok(const space_grid *g)
{
    if (!fa_family_get(g->family))
        return 0;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        if (g->axis_len[a] < 0 || g->axis_len[a] > SPACE_MAX_AXIS)
            return 0;
    return 1;
}

/* Whether s is a table plan_build can walk without reading out of bounds
 * (a space from space_parse always is; a hand-filled one might not be). */
static int plan_space_ok(const space *s)
{
    space_grid g;
    if (s->n_problems < 0 || s->n_problems > SPACE_MAX_PROBLEMS || s->n_extra < 0 ||
        s->n_extra > SPACE_MAX_EXTRA)
        return 0;
    space_grid_main(s, &g);
    if (!plan_grid_ok(&g))
        return 0;
    for (int i = 0; i < s->n_extra; i++)
        if (!plan_grid_ok(&s->extra[i]))
            return 0;
    return 1;
}

static size_t plan_grid_size(const space *s, const space_grid *g)
{
    size_t n = (size_t)s->n_problems;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        n *= (size_t)g->axis_len[a]; /* at most 16^6 per grid: no overflow */
    return n;
}

/* One point: its config from the indices, then the rules. */
static void plan_point_fill(const space *s, const space_grid *g, int pi, const int ix[],
                            plan_compiled_fn compiled, void *ctx, plan_point *p)
{
    p->problem = pi;
    p->arch = s->arch;
    p->cfg.family = g->family;
    p->cfg.head_dim = s->problems[pi].head_dim;
    p->cfg.dtype = s->problems[pi].dtype;
    for (int k = 0; k < FA_CONFIG_AXES; k++)
        p->cfg.axis[k] = g->axis[k][ix[k]];
    p->smem_bytes = plan_smem_bytes(&p->cfg);
    p->reason = plan_check_arch(&p->cfg, s->arch);
    if (p->reason == PLAN_OK)
        p->reason = plan_check(&p->cfg, s->smem_limit);
    /* Only asked for points that could exist, so "not compiled" never
     * hides a static reason. */
    if (p->reason == PLAN_OK && compiled && !compiled(&p->cfg, ctx))
        p->reason = PLAN_REJ_NOT_COMPILED;
}

/* Appends grid g's points to pts from *k on, problem-major, then the axes
 * in file order (the last axis fastest). */
static void plan_grid(const space *s, const space_grid *g, plan_compiled_fn compiled, void *ctx,
                      plan_point *pts, size_t *k, plan *out)
{
    const size_t per = plan_grid_size(s, g) / (s->n_problems ? (size_t)s->n_problems : 1);
    for (int pi = 0; pi < s->n_problems; pi++)
        for (size_t i = 0; i < per; i++) {
            int ix[SPACE_AXIS_COUNT];
            size_t rest = i;
            for (int a = SPACE_AXIS_COUNT - 1; a >= 0; a--) {
                ix[a] = (int)(rest % (size_t)g->axis_len[a]);
                rest /= (size_t)g->axis_len[a];
            }
            plan_point *p = &pts[(*k)++];
            plan_point_fill(s, g, pi, ix, compiled, ctx, p);
            out->by_reason[p->reason]++;
        }
}

int plan_build(const space *s, plan_compiled_fn compiled, void *ctx, plan *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !plan_space_ok(s))
        return -1;
    space_grid main_grid;
    space_grid_main(s, &main_grid);
    size_t n = plan_grid_size(s, &main_grid);
    for (int i = 0; i < s->n_extra; i++)
        n += plan_grid_size(s, &s->extra[i]);
    plan_point *pts = n ? calloc(n, sizeof *pts) : NULL;
    if (n && !pts)
        return -1;
    size_t k = 0;
    plan_grid(s, &main_grid, compiled, ctx, pts, &k, out);
    for (int i = 0; i < s->n_extra; i++)
        plan_grid(s, &s->extra[i], compiled, ctx, pts, &k, out);
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
    static const char *const codes[PLAN_REASON_COUNT] = {
        "ok",   "head_dim", "warp_rows", "chunks",   "smem",
        "arch", "tile",     "regs",      "pipeline", "not_compiled"};
    return (unsigned)r < PLAN_REASON_COUNT ? codes[r] : "unknown";
}

int plan_reject_reason(const plan_point *p, long smem_limit, char *buf, size_t n)
{
    const fa_family *f = fa_family_of(&p->cfg);
    switch (p->reason) {
    case PLAN_OK:
        return snprintf(buf, n, "%s", "");
    case PLAN_REJ_ARCH:
        return f ? snprintf(buf, n, "needs %s (%s); target is sm_%d", f->arch_name, f->arch_why,
                            p->arch)
                 : snprintf(buf, n, "%s", "");
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
