/* group.c - the store's records by (device, problem, mode) group, laid over
 * a space's grid (contract: group.h).
 */
#include "group.h"

#include "../store/file.h"
#include "../store/text.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- loading -------------------------------------------------------------------------------- */

_Static_assert(GROUP_NAMED(group), "group begins with a group_name");

typedef struct group_scan {
    const group_filter *f;
    group_table t; /* the groups, the capacity of each one's recs beside it */
    int rc;
} group_scan;

int group_table_slot(group_table *t, const record *r)
{
    for (int i = t->n - 1; i >= 0; i--) {
        const group_name *g = (const group_name *)((const char *)t->items + (size_t)i * t->size);
        if (strcmp(g->device, r->device) == 0 && strcmp(g->problem, r->problem) == 0 &&
            strcmp(g->mode, r->mode) == 0)
            return i;
    }
    if (t->n == t->cap) {
        const int cap = t->cap ? 2 * t->cap : 8;
        void *ni = realloc(t->items, (size_t)cap * t->size);
        if (!ni)
            return -1;
        t->items = ni;
        void *ns = realloc(t->side, (size_t)cap * t->side_size);
        if (!ns)
            return -1;
        t->side = ns;
        t->cap = cap;
    }
    char *item = (char *)t->items + (size_t)t->n * t->size;
    memset(item, 0, t->size);
    memset((char *)t->side + (size_t)t->n * t->side_size, 0, t->side_size);
    group_name *g = (group_name *)item;
    snprintf(g->device, sizeof g->device, "%s", r->device);
    snprintf(g->problem, sizeof g->problem, "%s", r->problem);
    snprintf(g->mode, sizeof g->mode, "%s", r->mode);
    return t->n++;
}

static int group_visit(const record *r, void *ctx)
{
    group_scan *sc = ctx;
    const group_filter *f = sc->f;
    if (f && ((f->device && strcmp(r->device, f->device) != 0) ||
              (f->problem && strcmp(r->problem, f->problem) != 0) ||
              (f->mode && strcmp(r->mode, f->mode) != 0)))
        return 0;
    const int i = group_table_slot(&sc->t, r);
    group *g = i < 0 ? NULL : (group *)sc->t.items + i;
    size_t *cap = g ? (size_t *)sc->t.side + i : NULL;
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

int group_store_scan(store *s, const char *device, const char *problem, store_visit_fn visit,
                     void *ctx)
{
    char prefix[RECORD_KEY_LEN];
    if (!device)
        snprintf(prefix, sizeof prefix, "%s", "");
    else if (problem)
        snprintf(prefix, sizeof prefix, "%s|%s|", device, problem);
    else
        snprintf(prefix, sizeof prefix, "%s|", device);
    return store_scan(s, prefix, visit, ctx);
}

int group_load(store *s, const group_filter *f, group_set *out)
{
    memset(out, 0, sizeof *out);
    group_scan sc = {.f = f, .t = {.size = sizeof(group), .side_size = sizeof(size_t)}};
    int rc = group_store_scan(s, f ? f->device : NULL, f ? f->problem : NULL, group_visit, &sc);
    out->groups = sc.t.items;
    out->n = sc.t.n;
    free(sc.t.side);
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

void group_file_name(const char *device, const char *problem, const char *mode, const char *suffix,
                     char *buf, size_t n)
{
    size_t len = 0;
    group_slug(device, NULL, buf, n, &len);
    buf[len++] = '_';
    group_slug(problem, ".", buf, n, &len);
    buf[len++] = '_';
    group_slug(mode, NULL, buf, n, &len); /* a known mode: a plain word */
    snprintf(buf + len, n - len, "%s", suffix);
}

/* The hashed name of a group whose plain name another of its run shares:
 * the plain one with "_" and 16 hex digits of FNV-1a 64 of
 * "DEVICE|PROBLEM|MODE" before the suffix. */
static void group_hashed_name(const group_id *id, const char *suffix, char *buf, size_t n)
{
    unsigned long long h = text_fnv1a(TEXT_FNV_INIT, id->device, strlen(id->device));
    h = text_fnv1a(h, "|", 1);
    h = text_fnv1a(h, id->problem, strlen(id->problem));
    h = text_fnv1a(h, "|", 1);
    h = text_fnv1a(h, id->mode, strlen(id->mode));
    char hs[GROUP_NAME_LEN];
    snprintf(hs, sizeof hs, "_%016llx%s", h, suffix);
    group_file_name(id->device, id->problem, id->mode, hs, buf, n);
}

/* qsort has no context argument: the names being sorted, for one call. */
static _Thread_local char (*group_sort_names)[GROUP_NAME_LEN];

static int group_name_cmp(const void *pa, const void *pb)
{
    const size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const int c = strcmp(group_sort_names[a], group_sort_names[b]);
    return c ? c : (a > b) - (a < b);
}

/* The indices 0..n-1 ordered by names[i] (ties by index); NULL when out of
 * memory. Sorting keeps the collision check O(n log n) for any store. */
static size_t *group_names_order(char (*names)[GROUP_NAME_LEN], size_t n)
{
    size_t *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    group_sort_names = names;
    qsort(ix, n, sizeof *ix, group_name_cmp);
    group_sort_names = NULL;
    return ix;
}

static void group_id_text(const group_id *id, char *buf, size_t n)
{
    snprintf(buf, n, "%s | %s | %s", id->device, id->problem, id->mode);
}

int group_file_names(const group_id *ids, size_t n, const char *suffix,
                     char (*names)[GROUP_NAME_LEN], char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        group_file_name(ids[i].device, ids[i].problem, ids[i].mode, suffix, names[i],
                        GROUP_NAME_LEN);
    size_t *ix = group_names_order(names, n);
    if (!ix) {
        snprintf(err, errlen, "out of memory naming %zu group files", n);
        return -1;
    }
    /* Every run of equal plain names: each of its groups gets its hash. */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(names[ix[i]], names[ix[j]]) == 0)
            j++;
        for (size_t m = i; j - i > 1 && m < j; m++)
            group_hashed_name(&ids[ix[m]], suffix, names[ix[m]], GROUP_NAME_LEN);
        i = j;
    }
    free(ix);
    /* Still one name for two groups: refused, never one file for both. */
    ix = group_names_order(names, n);
    if (!ix) {
        snprintf(err, errlen, "out of memory naming %zu group files", n);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i + 1 < n && rc == 0; i++)
        if (strcmp(names[ix[i]], names[ix[i + 1]]) == 0) {
            char a[200], b[200];
            group_id_text(&ids[ix[i]], a, sizeof a);
            group_id_text(&ids[ix[i + 1]], b, sizeof b);
            snprintf(err, errlen,
                     "groups %s and %s would share the file name %s (seeds/README.md, \"File "
                     "name\"); nothing written: write them one at a time (--gpu, --problem) "
                     "into different directories",
                     a, b, names[ix[i]]);
            rc = -1;
        }
    free(ix);
    return rc;
}

/* ---- the guard ------------------------------------------------------------------------------ */

/* The group a document names: top level (seeds), "fasweep" (Kernel
 * Tuner cache) or "metadata" (T4). The kind of file it is, or NULL when it
 * names none. */
static const char *group_doc_id(const cJSON *d, group_id *id)
{
    const cJSON *at[3] = {d, cJSON_GetObjectItemCaseSensitive(d, "fasweep"),
                          cJSON_GetObjectItemCaseSensitive(d, "metadata")};
    static const char *const kind[3] = {"seeds", "Kernel Tuner cache", "T4 results"};
    for (int i = 0; i < 3; i++) {
        if (!cJSON_IsObject(at[i]))
            continue;
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(at[i], "device");
        const cJSON *prob = cJSON_GetObjectItemCaseSensitive(at[i], "problem");
        const cJSON *mode = cJSON_GetObjectItemCaseSensitive(at[i], "mode");
        if (cJSON_IsObject(prob)) /* seeds: {"text": ..., "batch": ...} */
            prob = cJSON_GetObjectItemCaseSensitive(prob, "text");
        if (cJSON_IsString(dev) && cJSON_IsString(prob) && cJSON_IsString(mode)) {
            *id = (group_id){dev->valuestring, prob->valuestring, mode->valuestring};
            return kind[i];
        }
    }
    return NULL;
}

int group_file_foreign(const char *path, const group_id *id, const char *dir_option, char *err,
                       size_t errlen)
{
    char *text;
    size_t len;
    const int got = file_read_regular(path, SIZE_MAX, &text, &len);
    if (got == 1)
        return 0;
    if (got < 0) {
        /* Unread, it might be another group's: refused, not replaced. */
        snprintf(err, errlen,
                 "cannot read %s to check whose file it is (%s): not overwritten (move it away, "
                 "or pass another %s)",
                 path, strerror(errno), dir_option);
        return 1;
    }
    /* By its length: a NUL byte inside does not end the document early. */
    cJSON *d = cJSON_ParseWithLength(text, len);
    free(text);
    group_id there;
    const char *kind = d ? group_doc_id(d, &there) : NULL;
    const int other = kind && (strcmp(there.device, id->device) ||
                               strcmp(there.problem, id->problem) || strcmp(there.mode, id->mode));
    if (other) {
        char a[200], b[200];
        group_id_text(&there, a, sizeof a);
        group_id_text(id, b, sizeof b);
        snprintf(err, errlen,
                 "%s holds the %s of %s, not of %s: not overwritten (move it away, or pass "
                 "another %s)",
                 path, kind, a, b, dir_option);
    }
    cJSON_Delete(d);
    return other;
}

/* ---- the grid ------------------------------------------------------------------------------- */

/* The config's axis values, in its family's order (the grid's). */
static void group_axes_of(const fa_config *c, int v[SPACE_AXIS_COUNT])
{
    for (int k = 0; k < FA_CONFIG_AXES; k++)
        v[k] = c->axis[k];
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

/* The axes from the values the group's kernel records hold (sorted).
 * -1, with g->no_grid saying why and every axis empty, when one holds more
 * than SPACE_MAX_AXIS values. */
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
            if (g->axis_len[a] == SPACE_MAX_AXIS) {
                snprintf(g->no_grid, sizeof g->no_grid,
                         "its records hold more than %d values of %s: no grid", SPACE_MAX_AXIS,
                         space_axis_name(g->family, a));
                memset(g->axis_len, 0, sizeof g->axis_len);
                return -1;
            }
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

int group_space_grid(const space *s, int family, space_grid *out)
{
    if (!s)
        return -1;
    if (family < 0 || family == s->family) {
        space_grid_main(s, out);
        return 0;
    }
    for (int i = 0; i < s->n_extra; i++)
        if (s->extra[i].family == family) {
            *out = s->extra[i];
            return 0;
        }
    return -1;
}

/* The family most of g's kernel records (variants aside) are of, the lower
 * index on a tie; the default family when it has none. */
static int group_records_family(const group *g)
{
    int count[16] = {0}, best = FA_FAMILY_DEFAULT;
    const int n = fa_family_count() < 16 ? fa_family_count() : 16;
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        const int f = r->kind == RECORD_KIND_KERNEL && !record_is_variant(r)
                          ? fa_family_index(record_family(r))
                          : -1;
        if (f >= 0 && f < n)
            count[f]++;
    }
    for (int f = 0; f < n; f++)
        if (count[f] > count[best])
            best = f;
    return best;
}

int group_lay_out(group *g, const space *s)
{
    return group_lay_out_family(g, s, -1);
}

int group_lay_out_family(group *g, const space *s, int family)
{
    space_problem p;
    space_grid grid;
    const int parsed = space_problem_parse(g->problem, &p) == 0;
    const int has_grid = group_space_grid(s, family, &grid) == 0;
    int from_space = 0;
    for (int i = 0; has_grid && parsed && group_space_for(s, g) && i < s->n_problems && !from_space;
         i++)
        from_space = memcmp(&s->problems[i], &p, sizeof p) == 0;
    g->family = from_space ? grid.family : family >= 0 ? family : group_records_family(g);
    g->no_grid[0] = '\0';
    if (from_space) {
        memcpy(g->axis_len, grid.axis_len, sizeof g->axis_len);
        memcpy(g->axis, grid.axis, sizeof g->axis);
        g->smem_limit = s->smem_limit;
    } else {
        /* Too many values gives no grid (every axis empty: no cells), not
         * an error: the group's other parts still read. */
        group_axes_from_records(g);
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
        memset(&c->cfg, 0, sizeof c->cfg);
        c->cfg.head_dim = head_dim;
        c->cfg.family = g->family;
        for (int k = 0; k < FA_CONFIG_AXES; k++)
            c->cfg.axis[k] = v[k];
        /* Without a space's limit only the rules that need none apply. */
        c->reason = plan_check(&c->cfg, g->smem_limit ? g->smem_limit : LONG_MAX);
        c->smem_bytes = plan_smem_bytes(&c->cfg);
    }
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        fa_config c;
        if (record_is_variant(r) || group_config_of(r, g->family, &c) != 0 ||
            c.head_dim != head_dim)
            continue;
        const long idx = group_cell_index(g, &c);
        if (idx >= 0 && group_stands_better(r, g->cells[idx].rec))
            g->cells[idx].rec = r;
    }
    return from_space;
}
