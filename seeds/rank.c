/* rank.c - Top-K per (device, problem, mode) group (contract: rank.h).
 *
 * One store scan fills the groups. Each group keeps only its k best records
 * (a heap grown on demand, never more than k long, sorted at the end), so
 * memory stays bounded by groups * k however large the store is, and a
 * group of n records costs O(n log k) whatever k is.
 */
#include "rank.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../store/mode.h"
#include "group.h"

_Static_assert(GROUP_NAMED(rank_group), "rank_group begins with a group_name");

/* ---- ordering ------------------------------------------------------------------------------- */

/* Negative when a ranks before b: the ranking order of record.h (median,
 * noise, config text), then build, so two builds of one config still have
 * a fixed order and the result never depends on scan order. */
static int rank_cmp(const record *a, const record *b)
{
    const int c = record_rank_order(a->time.median_us, a->time.noise, a->config, b->time.median_us,
                                    b->time.noise, b->config);
    return c ? c : strcmp(a->build, b->build);
}

/* ---- scanning ------------------------------------------------------------------------------- */

/* The room a group has for its mode's name (a longer one is no mode). */
#define RANK_MODE_ROOM sizeof(((rank_group *)0)->mode)

/* A group's k best while scanning: the records in a pool (grown by
 * doubling, never past k) and a binary max-heap of pool indices by
 * rank_cmp, the worst kept on top. A record better than the top replaces
 * it in place: O(log k) comparisons and one record copy per record
 * offered, O(n log k) for a group of n (was an insertion sort moving whole
 * records, O(n k)). */
typedef struct rank_heap {
    int *ix; /* heap of indices into the group's top (the pool) */
    int cap; /* capacity of both */
} rank_heap;

typedef struct rank_scan {
    const rank_filter *f;
    const char *mode; /* NULL: every mode */
    int k;
    group_table t; /* the groups (rank_group), a rank_heap beside each */
    int rc;        /* first error met inside the visitor */
} rank_scan;

/* Whether pool[a] ranks after pool[b]: the heap's order (worst on top). */
static int rank_worse(const record *pool, int a, int b)
{
    return rank_cmp(&pool[a], &pool[b]) > 0;
}

static void rank_sift_up(const record *pool, int *ix, int i)
{
    while (i > 0) {
        const int up = (i - 1) / 2;
        if (!rank_worse(pool, ix[i], ix[up]))
            break;
        const int t = ix[i];
        ix[i] = ix[up];
        ix[up] = t;
        i = up;
    }
}

static void rank_sift_down(const record *pool, int *ix, int n)
{
    for (int i = 0;;) {
        const int l = 2 * i + 1, rr = l + 1;
        int w = i;
        if (l < n && rank_worse(pool, ix[l], ix[w]))
            w = l;
        if (rr < n && rank_worse(pool, ix[rr], ix[w]))
            w = rr;
        if (w == i)
            return;
        const int t = ix[i];
        ix[i] = ix[w];
        ix[w] = t;
        i = w;
    }
}

/* Keeps r in g's heap when it is among the k best. 0, or -1 when out of
 * memory. */
static int rank_offer(rank_scan *sc, rank_group *g, rank_heap *h, const record *r)
{
    if (g->n_top == sc->k) {
        if (rank_cmp(r, &g->top[h->ix[0]]) >= 0)
            return 0;
        g->top[h->ix[0]] = *r; /* the worst's slot */
        rank_sift_down(g->top, h->ix, g->n_top);
        return 0;
    }
    if (g->n_top == h->cap) {
        int ncap = h->cap ? (h->cap > sc->k / 2 ? sc->k : 2 * h->cap) : 8;
        if (ncap > sc->k)
            ncap = sc->k;
        record *nt = realloc(g->top, (size_t)ncap * sizeof *nt);
        if (!nt)
            return -1;
        g->top = nt;
        int *ni = realloc(h->ix, (size_t)ncap * sizeof *ni);
        if (!ni)
            return -1;
        h->ix = ni;
        h->cap = ncap;
    }
    g->top[g->n_top] = *r;
    h->ix[g->n_top] = g->n_top;
    rank_sift_up(g->top, h->ix, g->n_top);
    g->n_top++;
    return 0;
}

/* qsort has no context argument: the pool being ordered, for one call. */
static _Thread_local const record *rank_sort_pool;

static int rank_ix_cmp(const void *pa, const void *pb)
{
    return rank_cmp(&rank_sort_pool[*(const int *)pa], &rank_sort_pool[*(const int *)pb]);
}

/* Puts g's kept records fastest first: the indices sorted (records are
 * large: sorting them would move each log n times), then the records
 * moved along the permutation's cycles in place, each once (no second
 * array: k records of memory, not 2k). */
static void rank_finish(rank_group *g, rank_heap *h)
{
    const int n = g->n_top;
    if (n < 2)
        return;
    rank_sort_pool = g->top;
    qsort(h->ix, (size_t)n, sizeof *h->ix, rank_ix_cmp);
    rank_sort_pool = NULL;
    /* top[j] must become the old top[ix[j]]; ix[j] = j marks j done. */
    for (int i = 0; i < n; i++) {
        if (h->ix[i] == i)
            continue;
        const record first = g->top[i];
        int j = i;
        while (h->ix[j] != i) {
            const int src = h->ix[j];
            g->top[j] = g->top[src];
            h->ix[j] = j;
            j = src;
        }
        g->top[j] = first;
        h->ix[j] = j;
    }
}

static void rank_offer_baseline(rank_group *g, const record *r)
{
    if (r->status != RECORD_ST_OK)
        return;
    if (!g->has_baseline || rank_cmp(r, &g->best_baseline) < 0) {
        g->best_baseline = *r;
        g->has_baseline = 1;
    }
}

static int rank_visit(const record *r, void *ctx)
{
    rank_scan *sc = ctx;
    const rank_filter *f = sc->f;
    if (sc->mode ? strcmp(r->mode, sc->mode) != 0 : strlen(r->mode) >= RANK_MODE_ROOM)
        return 0;
    if (f && f->device && strcmp(r->device, f->device) != 0)
        return 0;
    if (f && f->problem && strcmp(r->problem, f->problem) != 0)
        return 0;
    const int i = group_table_slot(&sc->t, r);
    if (i < 0) {
        sc->rc = STORE_ENOMEM;
        return 1;
    }
    rank_group *g = (rank_group *)sc->t.items + i;
    if (r->kind == RECORD_KIND_BASELINE) {
        rank_offer_baseline(g, r);
        return 0;
    }
    if (r->status != RECORD_ST_OK) {
        g->n_failed++;
        return 0;
    }
    /* An edited kernel is another kernel, not a point of the template's
     * space: counted, and ranked only when asked for. */
    if (record_is_variant(r) && !(f && f->variants)) {
        g->n_variants++;
        return 0;
    }
    g->n_ok++;
    if (rank_offer(sc, g, (rank_heap *)sc->t.side + i, r) != 0) {
        sc->rc = STORE_ENOMEM;
        return 1;
    }
    return 0;
}

/* A mode's place in the table's order (store/mode.h); an unknown one
 * (imported) after every known one. */
static int rank_mode_order(const char *mode)
{
    const int i = mode_index(mode);
    return i < 0 ? MODE_COUNT : i;
}

static int rank_group_cmp(const void *pa, const void *pb)
{
    const rank_group *a = pa, *b = pb;
    int c = strcmp(a->device, b->device);
    if (!c)
        c = strcmp(a->problem, b->problem);
    if (!c)
        c = rank_mode_order(a->mode) - rank_mode_order(b->mode);
    return c ? c : strcmp(a->mode, b->mode);
}

int rank_topk(store *s, const rank_filter *f, int k, rank_result *out)
{
    if (!s || !out || k <= 0)
        return STORE_EINVAL;
    out->groups = NULL;
    out->n_groups = 0;
    out->src = NULL;
    const char *mode = f ? f->mode : NULL;
    if (mode && strlen(mode) >= RANK_MODE_ROOM)
        return STORE_EINVAL;
    rank_scan sc = {.f = f, .mode = mode, .k = k};
    sc.t = (group_table){.size = sizeof(rank_group), .side_size = sizeof(rank_heap)};
    int rc = group_store_scan(s, f ? f->device : NULL, f ? f->problem : NULL, rank_visit, &sc);
    if (rc == STORE_OK)
        rc = sc.rc;
    out->groups = sc.t.items;
    out->n_groups = sc.t.n;
    rank_heap *heaps = sc.t.side;
    for (int i = 0; i < out->n_groups; i++) {
        if (rc == STORE_OK)
            rank_finish(&out->groups[i], &heaps[i]);
        free(heaps[i].ix);
    }
    free(heaps);
    if (rc != STORE_OK) {
        rank_free(out);
        return rc;
    }
    if (out->n_groups > 1)
        qsort(out->groups, (size_t)out->n_groups, sizeof *out->groups, rank_group_cmp);
    return STORE_OK;
}

void rank_free(rank_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_groups; i++)
        free(r->groups[i].top);
    free(r->groups);
    r->groups = NULL;
    r->n_groups = 0;
}

double rank_speedup(const rank_group *g, const record *r)
{
    if (!g->has_baseline || r->time.median_us <= 0 || g->best_baseline.time.median_us <= 0)
        return 0;
    return g->best_baseline.time.median_us / r->time.median_us;
}
