/* group.c - the store's records by (device, problem, mode) group, laid over
 * a space's grid (contract: group.h).
 */
#include "group.h"

#include "../store/text.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- loading -------------------------------------------------------------------------------- */

typedef struct group_scan {
    const group_filter *f;
    group_set *set;
    int cap;
    size_t *cap_recs; /* capacity of each group's recs */
    int rc;
} group_scan;

static group *group_of(group_scan *sc, const record *r)
{
    group_set *set = sc->set;
    /* Records arrive in key order: the group is almost always a recent one. */
    for (int i = set->n - 1; i >= 0; i--) {
        group *g = &set->groups[i];
        if (strcmp(g->mode, r->mode) == 0 && strcmp(g->problem, r->problem) == 0 &&
            strcmp(g->device, r->device) == 0)
            return g;
    }
    if (set->n == sc->cap) {
        const int cap = sc->cap ? 2 * sc->cap : 8;
        group *ng = realloc(set->groups, (size_t)cap * sizeof *ng);
        if (!ng)
            return NULL;
        set->groups = ng;
        size_t *nc = realloc(sc->cap_recs, (size_t)cap * sizeof *nc);
        if (!nc)
            return NULL;
        sc->cap_recs = nc;
        sc->cap = cap;
    }
    group *g = &set->groups[set->n];
    memset(g, 0, sizeof *g);
    snprintf(g->device, sizeof g->device, "%s", r->device);
    snprintf(g->problem, sizeof g->problem, "%s", r->problem);
    snprintf(g->mode, sizeof g->mode, "%s", r->mode);
    sc->cap_recs[set->n++] = 0;
    return g;
}

static int group_visit(const record *r, void *ctx)
{
    group_scan *sc = ctx;
    const group_filter *f = sc->f;
    if (f && ((f->device && strcmp(r->device, f->device) != 0) ||
              (f->problem && strcmp(r->problem, f->problem) != 0) ||
              (f->mode && strcmp(r->mode, f->mode) != 0)))
        return 0;
    group *g = group_of(sc, r);
    size_t *cap = g ? &sc->cap_recs[g - sc->set->groups] : NULL;
    if (g && g->n_recs == *cap) {
        const size_t ncap = *cap ? 2 * *cap : 16;
        record *nr = realloc(g->recs, ncap * sizeof *nr);
        if (nr) {
            g->recs = nr;
            *cap = ncap;
        } else {
            g = NULL;
        }
    }
    if (!g) {
        sc->rc = STORE_ENOMEM;
        return 1;
    }
    g->recs[g->n_recs++] = *r;
    return 0;
}

static int group_cmp(const void *pa, const void *pb)
{
    const group *a = pa, *b = pb;
    int c = strcmp(a->device, b->device);
    if (!c)
        c = strcmp(a->problem, b->problem);
    return c ? c : record_mode_index(a->mode) - record_mode_index(b->mode);
}

void group_key_prefix(const char *device, const char *problem, char *buf, size_t n)
{
    if (!device)
        snprintf(buf, n, "%s", "");
    else if (problem)
        snprintf(buf, n, "%s|%s|", device, problem);
    else
        snprintf(buf, n, "%s|", device);
}

int group_load(store *s, const group_filter *f, group_set *out)
{
    memset(out, 0, sizeof *out);
    group_scan sc = {.f = f, .set = out};
    char prefix[RECORD_KEY_LEN];
    group_key_prefix(f ? f->device : NULL, f ? f->problem : NULL, prefix, sizeof prefix);
    int rc = store_scan(s, prefix, group_visit, &sc);
    free(sc.cap_recs);
    if (rc == STORE_OK)
        rc = sc.rc;
    if (rc != STORE_OK) {
        group_set_free(out);
        return rc;
    }
    if (out->n > 1)
        qsort(out->groups, (size_t)out->n, sizeof *out->groups, group_cmp);
    return STORE_OK;
}

void group_free(group *g)
{
    free(g->recs);
    free(g->cells);
    g->recs = NULL;
    g->cells = NULL;
    g->n_recs = g->n_cells = 0;
}

void group_set_free(group_set *set)
{
    for (int i = 0; set && i < set->n; i++)
        group_free(&set->groups[i]);
    if (set) {
        free(set->groups);
        memset(set, 0, sizeof *set);
    }
}

int group_is_variant(const char *build)
{
    return strncmp(build, GROUP_VARIANT_PREFIX, strlen(GROUP_VARIANT_PREFIX)) == 0;
}

/* ---- file names ---------------------------------------------------------------------------- */

/* Appends s to buf (at *len), lowercased, every run of characters outside
 * [a-z0-9] (and outside `keep`) squeezed into one '-', no '-' at either end. */
static void group_slug(const char *s, const char *keep, char *buf, size_t n, size_t *len)
{
    const size_t start = *len;
    int dash = 0;
    for (; *s && *len + 2 < n; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        const int good = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                         (keep && c != '\0' && strchr(keep, c));
        if (!good) {
            dash = 1;
            continue;
        }
        if (dash && *len > start)
            buf[(*len)++] = '-';
        dash = 0;
        buf[(*len)++] = c;
    }
    if (*len == start)
        for (const char *u = "unknown"; *u && *len + 1 < n; u++)
            buf[(*len)++] = *u;
    buf[*len] = '\0';
}

/* Whether a device name reads back from its slug: words of capitals and
 * digits, single spaces between them ("NVIDIA H100 80GB HBM3"). */
static int group_device_plain(const char *s)
{
    int prev_space = 1;
    for (; *s; s++) {
        if (*s == ' ') {
            if (prev_space)
                return 0;
            prev_space = 1;
        } else if ((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) {
            prev_space = 0;
        } else {
            return 0;
        }
    }
    return !prev_space;
}

/* Whether a problem text is the canonical one (space_problem_format). */
static int group_problem_plain(const char *s)
{
    space_problem p;
    char back[64];
    return space_problem_parse(s, &p) == 0 && space_problem_format(&p, back, sizeof back) > 0 &&
           strcmp(back, s) == 0;
}

/* Appends "-" and 8 hex digits of the FNV-1a hash of s. */
static void group_hash_suffix(const char *s, char *buf, size_t n, size_t *len)
{
    const unsigned long long h = text_fnv1a(TEXT_FNV_INIT, s, strlen(s));
    *len += (size_t)snprintf(buf + *len, n - *len, "-%08llx", h & 0xffffffffULL);
}

void group_file_name(const char *device, const char *problem, const char *mode, const char *suffix,
                     char *buf, size_t n)
{
    size_t len = 0;
    group_slug(device, NULL, buf, n, &len);
    if (!group_device_plain(device))
        group_hash_suffix(device, buf, n, &len);
    buf[len++] = '_';
    group_slug(problem, ".", buf, n, &len);
    if (!group_problem_plain(problem))
        group_hash_suffix(problem, buf, n, &len);
    buf[len++] = '_';
    group_slug(mode, NULL, buf, n, &len); /* a known mode: a plain word */
    snprintf(buf + len, n - len, "%s", suffix);
}

/* ---- the grid ------------------------------------------------------------------------------- */

/* The config's five axis values, in space_axis_id order. */
static void group_axes_of(const fa_config *c, int v[SPACE_AXIS_COUNT])
{
    v[SPACE_AXIS_BLOCK_M] = c->block_m;
    v[SPACE_AXIS_BLOCK_N] = c->block_n;
    v[SPACE_AXIS_NUM_WARPS] = c->num_warps;
    v[SPACE_AXIS_STAGES] = c->stages;
    v[SPACE_AXIS_SWIZZLE] = c->swizzle;
}

/* The config of kernel record r when it is of family `family` (an index,
 * kernels/family.h): 0, or -1 for another family or a config that does not
 * parse. A group's grid is one family's. */
static int group_config_of(const record *r, int family, fa_config *c)
{
    return r->kind == RECORD_KIND_KERNEL && fa_family_index(record_family(r)) == family &&
                   fa_config_parse_in(family, r->config, c) == 0
               ? 0
               : -1;
}

static int group_int_cmp(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The axes from the values the group's kernel records hold (sorted). */
static int group_axes_from_records(group *g)
{
    memset(g->axis_len, 0, sizeof g->axis_len);
    for (size_t i = 0; i < g->n_recs; i++) {
        fa_config c;
        if (group_config_of(&g->recs[i], g->family, &c) != 0)
            continue;
        int v[SPACE_AXIS_COUNT];
        group_axes_of(&c, v);
        for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
            int seen = 0;
            for (int j = 0; j < g->axis_len[a] && !seen; j++)
                seen = g->axis[a][j] == v[a];
            if (seen)
                continue;
            if (g->axis_len[a] == SPACE_MAX_AXIS)
                return -1;
            g->axis[a][g->axis_len[a]++] = v[a];
        }
    }
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        qsort(g->axis[a], (size_t)g->axis_len[a], sizeof g->axis[a][0], group_int_cmp);
    return 0;
}

/* Whether r (a kernel record of a compiled build) stands for its config
 * better than cur (group.h). */
static int group_stands_better(const record *r, const record *cur)
{
    if (!cur)
        return 1;
    const int ok = r->status == RECORD_ST_OK, cur_ok = cur->status == RECORD_ST_OK;
    if (ok != cur_ok)
        return ok;
    if (ok)
        return record_rank_order(r->time.median_us, r->time.noise, r->config, cur->time.median_us,
                                 cur->time.noise, cur->config) < 0;
    return r->timestamp > cur->timestamp;
}

/* The index of config c in the grid, or -1 when one of its values is not
 * on an axis (a record of another space). */
static long group_cell_index(const group *g, const fa_config *c)
{
    int v[SPACE_AXIS_COUNT];
    group_axes_of(c, v);
    long idx = 0;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
        int j = 0;
        while (j < g->axis_len[a] && g->axis[a][j] != v[a])
            j++;
        if (j == g->axis_len[a])
            return -1;
        idx = idx * g->axis_len[a] + j;
    }
    return idx;
}

/* Whether space s applies to group g: its target.gpu is "any" or empty,
 * or g's device name starts with it, case aside ("NVIDIA H100" covers
 * "NVIDIA H100 80GB HBM3"), or g's records were measured under s (their
 * provenance holds its hash: the L4 space swept on an H100). */
static int group_space_for(const space *s, const group *g)
{
    if (!s->gpu[0] || strcasecmp(s->gpu, "any") == 0 ||
        strncasecmp(g->device, s->gpu, strlen(s->gpu)) == 0)
        return 1;
    for (size_t i = 0; i < g->n_recs; i++)
        if (g->recs[i].kind == RECORD_KIND_KERNEL && strcmp(g->recs[i].space_hash, s->hash) == 0)
            return 1;
    return 0;
}

int group_lay_out(group *g, const space *s)
{
    space_problem p;
    const int parsed = space_problem_parse(g->problem, &p) == 0;
    int from_space = 0;
    for (int i = 0; s && parsed && group_space_for(s, g) && i < s->n_problems && !from_space; i++)
        from_space = memcmp(&s->problems[i], &p, sizeof p) == 0;
    g->family = from_space ? s->family : FA_FAMILY_DEFAULT;
    if (from_space) {
        memcpy(g->axis_len, s->axis_len, sizeof g->axis_len);
        memcpy(g->axis, s->axis, sizeof g->axis);
        g->smem_limit = s->smem_limit;
    } else {
        if (group_axes_from_records(g) != 0)
            return -1;
        g->smem_limit = 0;
    }
    g->from_space = from_space;
    size_t n = 1;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        n *= (size_t)g->axis_len[a];
    free(g->cells);
    g->cells = n ? calloc(n, sizeof *g->cells) : NULL;
    g->n_cells = g->cells ? n : 0;
    if (n && !g->cells)
        return -1;
    const int head_dim = parsed ? p.head_dim : 0;
    for (size_t i = 0; i < n; i++) {
        size_t rest = i;
        int v[SPACE_AXIS_COUNT];
        for (int a = SPACE_AXIS_COUNT - 1; a >= 0; a--) {
            v[a] = g->axis[a][rest % (size_t)g->axis_len[a]];
            rest /= (size_t)g->axis_len[a];
        }
        group_cell *c = &g->cells[i];
        c->cfg = (fa_config){head_dim,
                             v[SPACE_AXIS_BLOCK_M],
                             v[SPACE_AXIS_BLOCK_N],
                             v[SPACE_AXIS_NUM_WARPS],
                             v[SPACE_AXIS_STAGES],
                             v[SPACE_AXIS_SWIZZLE],
                             g->family};
        /* Without a space's limit only the rules that need none apply. */
        c->reason = plan_check(&c->cfg, g->smem_limit ? g->smem_limit : LONG_MAX);
        c->smem_bytes = plan_smem_bytes(&c->cfg);
    }
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        fa_config c;
        if (group_is_variant(r->build) || group_config_of(r, g->family, &c) != 0 ||
            c.head_dim != head_dim)
            continue;
        const long idx = group_cell_index(g, &c);
        if (idx >= 0 && group_stands_better(r, g->cells[idx].rec))
            g->cells[idx].rec = r;
    }
    return from_space;
}
