/* intervals.c - rounds into records and records' intervals (intervals.h). */
#include "intervals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/mode.h"
#include "../store/rounds.h"

int intervals_rounds_of(const record *held)
{
    return held && held->status == RECORD_ST_OK ? held->time.round.n : 0;
}

/* The clock fields of two bursts: the range of both, the blocks of both. */
static void intervals_clock(const record_clock *a, record_clock *out)
{
    if (a->min_mhz > 0 && (out->min_mhz <= 0 || a->min_mhz < out->min_mhz))
        out->min_mhz = a->min_mhz;
    if (a->max_mhz > out->max_mhz)
        out->max_mhz = a->max_mhz;
    out->blocks += a->blocks;
    out->discarded += a->discarded;
    if (a->below == 1)
        out->below = 1;
}

void intervals_combine(const record *held, const record *fresh, record *out)
{
    *out = *fresh;
    out->time.ci_lo_us = out->time.ci_hi_us = NAN;
    out->time.round.n = 0;
    if (fresh->status != RECORD_ST_OK)
        return;
    record_rounds rr = {0};
    if (intervals_rounds_of(held) > 0 && strcmp(held->build, fresh->build) == 0)
        rr = held->time.round;
    if (rr.n == RECORD_MAX_ROUNDS) { /* keep the newest */
        memmove(rr.us, rr.us + 1, sizeof rr.us[0] * (RECORD_MAX_ROUNDS - 1));
        rr.n--;
    }
    rr.us[rr.n++] = fresh->time.median_us;
    out->time.round = rr;
    if (rr.n == 1)
        return;
    const double est = rounds_estimate(rr.us, rr.n);
    if (!isfinite(est))
        return;
    out->time.median_us = est;
    out->time.min_us = fmin(held->time.min_us, fresh->time.min_us);
    out->time.samples = held->time.samples + fresh->time.samples;
    out->tflops = fresh->tflops * fresh->time.median_us / est;
    out->gbps = fresh->gbps * fresh->time.median_us / est;
    intervals_clock(&held->clock, &out->clock);
    /* A light round (task.h) neither gates nor instruments: the first
     * round's gate errors and clock64 view stand. */
    if (isnan(fresh->rel_l2)) {
        out->rel_l2 = held->rel_l2;
        out->max_abs = held->max_abs;
    }
    if (!(fresh->cta_cycles_mean > 0)) {
        out->cta_cycles_mean = held->cta_cycles_mean;
        out->cta_cycles_max = held->cta_cycles_max;
        out->waves = held->waves;
        out->sm_imbalance = held->sm_imbalance;
    }
}

/* ---- the interval pass ----------------------------------------------------------------------- */

/* One mode's pool: pass 1 gathers it, pass 2 sets each record's interval from it. The
 * relative interval is a function of the pool and a record's count of rounds alone, so pass 2
 * computes it once per count (lo[n], hi[n]; known[n]: 0 not yet, 1 done, -1 none) instead of
 * once per record: the bootstrap was most of an update's time, tens of ms per problem on the
 * engine's thread while the workers waited for their next task (sweep/NOTES-engine.md,
 * nineteenth session). */
typedef struct intervals_pool {
    double *us;
    int n, cap, groups;
    signed char known[RECORD_MAX_ROUNDS + 1];
    double lo[RECORD_MAX_ROUNDS + 1], hi[RECORD_MAX_ROUNDS + 1];
} intervals_pool;

/* The pool's relative interval for a record of n rounds (rounds_interval, once per n); 0, or -1
 * when the pool cannot say anything. */
static int intervals_of(intervals_pool *p, int n, double floor, double *lo, double *hi)
{
    if (n < 1 || n > RECORD_MAX_ROUNDS)
        return rounds_interval(n, p->us, p->n, p->groups, floor, lo, hi);
    if (!p->known[n])
        p->known[n] =
            rounds_interval(n, p->us, p->n, p->groups, floor, &p->lo[n], &p->hi[n]) == 0 ? 1 : -1;
    *lo = p->lo[n];
    *hi = p->hi[n];
    return p->known[n] > 0 ? 0 : -1;
}

typedef struct intervals_scan {
    const char *const *modes;
    int n_modes;
    double since, floor;
    intervals_pool pool[MODE_COUNT];
    /* the records this run measured (timestamp >= since), kept from the scan; those whose
     * interval changes are written in one transaction after it */
    record *out;
    size_t n_out, cap_out;
    int rc;
} intervals_scan;

/* The index of r's mode among the scan's modes, or -1 when r is outside the groups. */
static int intervals_group_of(const record *r, const intervals_scan *x)
{
    if (r->status != RECORD_ST_OK || r->kind != RECORD_KIND_KERNEL)
        return -1;
    for (int m = 0; m < x->n_modes; m++)
        if (strcmp(r->mode, x->modes[m]) == 0)
            return m;
    return -1;
}

static int intervals_pool_add(intervals_scan *x, intervals_pool *p, const record *r)
{
    if (p->n + r->time.round.n > p->cap) {
        const int cap = 2 * p->cap + RECORD_MAX_ROUNDS;
        double *us = realloc(p->us, sizeof *us * (size_t)cap);
        if (!us) {
            x->rc = STORE_ENOMEM;
            return 1;
        }
        p->us = us;
        p->cap = cap;
    }
    rounds_pool_add(r->time.round.us, r->time.round.n, p->us, &p->n);
    p->groups++;
    return 0;
}

static int intervals_keep(intervals_scan *x, const record *r)
{
    if (x->n_out == x->cap_out) {
        const size_t cap = 2 * x->cap_out + 64;
        record *o = realloc(x->out, sizeof *o * cap);
        if (!o) {
            x->rc = STORE_ENOMEM;
            return 1;
        }
        x->out = o;
        x->cap_out = cap;
    }
    x->out[x->n_out++] = *r;
    return 0;
}

/* The one scan: every record of two or more rounds into its mode's pool, and a copy of every
 * record this run measured (the pools are whole only once the scan is over). */
static int intervals_visit(const record *r, void *ctx)
{
    intervals_scan *x = ctx;
    const int m = intervals_group_of(r, x);
    if (m < 0)
        return 0;
    if (r->time.round.n >= 2 && intervals_pool_add(x, &x->pool[m], r))
        return 1;
    return r->timestamp >= x->since && r->time.round.n >= 1 ? intervals_keep(x, r) : 0;
}

/* Each kept record's interval from its mode's pool; x->out keeps those it changes. */
static void intervals_set(intervals_scan *x)
{
    size_t w = 0;
    for (size_t i = 0; i < x->n_out; i++) {
        record *r = &x->out[i];
        record_timing was; /* memcpy: its padding too, for the memcmp below */
        memcpy(&was, &r->time, sizeof was);
        double lo, hi;
        if (intervals_of(&x->pool[intervals_group_of(r, x)], r->time.round.n, x->floor, &lo, &hi) ==
            0)
            rounds_interval_us(r->time.median_us, lo, hi, &r->time.ci_lo_us, &r->time.ci_hi_us);
        else
            r->time.ci_lo_us = r->time.ci_hi_us = NAN;
        if (memcmp(&was, &r->time, sizeof was) != 0)
            x->out[w++] = *r;
    }
    x->n_out = w;
}

/* Whether the store's record (held) is still the one r was computed from: the same rounds
 * and build, not a round folded in by another process since the scan read it. */
static int intervals_still(const record *held, const record *r, void *ctx)
{
    (void)ctx;
    return held && held->timestamp == r->timestamp && strcmp(held->build, r->build) == 0 &&
           held->time.round.n == r->time.round.n &&
           memcmp(held->time.round.us, r->time.round.us,
                  sizeof r->time.round.us[0] * (size_t)r->time.round.n) == 0 &&
           held->time.median_us == r->time.median_us;
}

int intervals_update(store *st, const char *device, const char *problem, const char *const *modes,
                     int n_modes, double since, double floor, long *updated)
{
    if (updated)
        *updated = 0;
    if (n_modes < 0 || n_modes > MODE_COUNT || (n_modes > 0 && !modes))
        return STORE_EINVAL;
    char prefix[RECORD_KEY_LEN];
    snprintf(prefix, sizeof prefix, "%s|%s|", device, problem);
    intervals_scan x = {.modes = modes, .n_modes = n_modes, .since = since, .floor = floor};
    /* Every mode of the problem from one scan: the key's prefix is the problem's, so a scan
     * per mode decoded every mode's records again, and a second scan to set the intervals
     * decoded them twice (sweep/NOTES-engine.md). */
    int rc = store_scan(st, prefix, intervals_visit, &x);
    if (rc == STORE_OK && x.rc == STORE_OK)
        intervals_set(&x);
    /* One transaction (one sync) for the problem, not one per record: a round's update of a
     * (problem, mode) of a hundred configs was a hundred syncs, tens of ms on the engine's
     * thread while the workers waited for their next task (sweep/NOTES-engine.md). A record
     * another process (a shard sharing the store) changed since the scan is left as it is:
     * its own update gives it its interval. */
    size_t written = 0;
    if (rc == STORE_OK && x.rc == STORE_OK)
        x.rc = store_put_many_if(st, x.out, x.n_out, intervals_still, NULL, &written);
    for (int m = 0; m < MODE_COUNT; m++)
        free(x.pool[m].us);
    free(x.out);
    if (updated)
        *updated = rc == STORE_OK && x.rc == STORE_OK ? (long)written : 0;
    return rc != STORE_OK ? rc : x.rc;
}
