/* shard.c - deterministic, cost-balanced partition of a plan (shard.h). */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/text.h"

/* A strict decimal integer in [lo, hi]: no sign, space or trailing text. */
static int parse_int(const char *s, const char *end, long lo, long hi, long *out)
{
    if (s == end || end - s > 9)
        return -1;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int shard_parse(const char *text, shard *out, char *err, size_t errlen)
{
    const char *slash = strchr(text, '/');
    long i, n;
    if (!slash || parse_int(slash + 1, slash + strlen(slash), 1, SHARD_MAX_COUNT, &n) ||
        parse_int(text, slash, 0, SHARD_MAX_COUNT - 1, &i) || i >= n)
        return text_errf(err, errlen,
                         "bad shard '%s': expected I/N with 0 <= I < N <= %d, e.g. 0/4", text,
                         SHARD_MAX_COUNT);
    out->index = (int)i;
    out->count = (int)n;
    return 0;
}

static int env_int(const char *name, long *out)
{
    const char *v = getenv(name);
    return (v && *v && parse_int(v, v + strlen(v), 0, 100000000, out) == 0) ? 1 : 0;
}

int shard_from_env(shard *out, char *err, size_t errlen)
{
    long id, count, lo, hi, procid, ntasks;
    out->index = 0;
    out->count = 1;
    if (env_int("SLURM_ARRAY_TASK_ID", &id)) {
        if (env_int("SLURM_ARRAY_TASK_MIN", &lo) && env_int("SLURM_ARRAY_TASK_MAX", &hi)) {
            count = hi - lo + 1;
            id -= lo;
        } else if (!env_int("SLURM_ARRAY_TASK_COUNT", &count)) {
            snprintf(err, errlen,
                     "SLURM_ARRAY_TASK_ID is set but neither "
                     "SLURM_ARRAY_TASK_MIN/_MAX nor SLURM_ARRAY_TASK_COUNT is: "
                     "pass --shard I/N");
            return -1;
        }
        /* The same bound as --shard: a count past it is a typo in the
         * array range, and shard_assign's table is one slot per part. */
        if (count > SHARD_MAX_COUNT)
            return text_errf(err, errlen,
                             "the Slurm array has %ld tasks, at most %d can share a plan: use a "
                             "smaller --array range or pass --shard I/N",
                             count, SHARD_MAX_COUNT);
        if (count < 1 || id < 0 || id >= count)
            return text_errf(err, errlen,
                             "Slurm array task %ld is outside 0..%ld: use a contiguous --array "
                             "range (e.g. 0-7) or pass --shard I/N",
                             id, count - 1);
        out->index = (int)id;
        out->count = (int)count;
        return 1;
    }
    if (env_int("SLURM_PROCID", &procid) && env_int("SLURM_NTASKS", &ntasks) && ntasks > 1) {
        if (procid >= ntasks || ntasks > SHARD_MAX_COUNT)
            return text_errf(err, errlen,
                             "SLURM_PROCID %ld is not below SLURM_NTASKS %ld (at most %d)", procid,
                             ntasks, SHARD_MAX_COUNT);
        out->index = (int)procid;
        out->count = (int)ntasks;
        return 1;
    }
    return 0;
}

double shard_point_cost(const space *s, const plan_point *pt)
{
    if (pt->reason != PLAN_OK)
        return 0.0; /* never measured */
    return space_problem_flops(&s->problems[pt->problem]) * 1e-9 * s->measure.n_modes + 1.0;
}

typedef struct shard_item {
    double cost;
    size_t index;
} shard_item;

/* Most expensive first; equal costs in plan order (deterministic). */
static int item_cmp(const void *a, const void *b)
{
    const shard_item *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

/* The parts as a binary min-heap on (load, index): the least-loaded part,
 * ties to the lower index, is at the top, as a scan over all parts would
 * pick it, but in O(log count) per point, so a plan of 10^5 points over
 * 10^5 parts takes milliseconds, not the minutes of a scan per point. */
typedef struct shard_heap {
    double *load; /* by part index */
    int *part;    /* heap order: part indices */
    int n;
} shard_heap;

static int heap_less(const shard_heap *h, int a, int b)
{
    const double la = h->load[h->part[a]], lb = h->load[h->part[b]];
    return la < lb || (la == lb && h->part[a] < h->part[b]);
}

/* Restores the heap below slot i after the load at the top grew. */
static void heap_sift_down(shard_heap *h, int i)
{
    for (;;) {
        const int l = 2 * i + 1, r = l + 1;
        int m = i;
        if (l < h->n && heap_less(h, l, m))
            m = l;
        if (r < h->n && heap_less(h, r, m))
            m = r;
        if (m == i)
            return;
        const int t = h->part[i];
        h->part[i] = h->part[m];
        h->part[m] = t;
        i = m;
    }
}

int shard_assign(const space *s, const plan *p, int count, int *owner)
{
    shard_item *items = malloc(sizeof *items * (p->n ? p->n : 1));
    shard_heap h = {calloc((size_t)count, sizeof *h.load), malloc(sizeof *h.part * (size_t)count),
                    count};
    if (!items || !h.load || !h.part) {
        free(items);
        free(h.load);
        free(h.part);
        return -1;
    }
    for (int k = 0; k < count; k++)
        h.part[k] = k; /* all loads 0: index order is a heap */
    for (size_t i = 0; i < p->n; i++) {
        items[i].cost = shard_point_cost(s, &p->points[i]);
        items[i].index = i;
    }
    qsort(items, p->n, sizeof *items, item_cmp);
    /* Accepted points: longest-processing-time first, each to the least
     * loaded part. Rejected points cost nothing, so they are dealt in turn
     * (plan order), which keeps the parts' plan listings even as well. */
    int next = 0;
    for (size_t i = 0; i < p->n; i++) {
        int best;
        if (items[i].cost > 0) {
            best = h.part[0];
            h.load[best] += items[i].cost;
            heap_sift_down(&h, 0);
        } else {
            best = next;
            next = (next + 1) % count;
        }
        owner[items[i].index] = best;
    }
    free(items);
    free(h.load);
    free(h.part);
    return 0;
}

int shard_filter(const space *s, plan *p, shard sh)
{
    if (sh.count <= 1)
        return 0;
    int *owner = malloc(sizeof *owner * (p->n ? p->n : 1));
    if (!owner || shard_assign(s, p, sh.count, owner) != 0) {
        free(owner);
        return -1;
    }
    size_t k = 0;
    memset(p->by_reason, 0, sizeof p->by_reason);
    for (size_t i = 0; i < p->n; i++)
        if (owner[i] == sh.index) {
            p->points[k] = p->points[i];
            p->by_reason[p->points[k].reason]++;
            k++;
        }
    p->n = k;
    p->n_accepted = p->by_reason[PLAN_OK];
    free(owner);
    return 0;
}
