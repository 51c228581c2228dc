/* refine.c - the refine pass: more rounds for the best configs
 * (contract: refine.h). */
#include "refine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct refine_cand {
    int point;
    double old_us, new_us;
    double old_noise, new_noise; /* relative noise of old_us, new_us */
    int old_rank, new_rank;
    char config[64]; /* as fa_config_format writes it */
    record rec;      /* the re-measured record as stored, its interval included */
} refine_cand;

/* The ranking order (record_rank_order); a failed re-measurement (inf)
 * sorts last. */
static int refine_by_old(const void *a, const void *b)
{
    const refine_cand *p = a, *q = b;
    return record_rank_order(p->old_us, p->old_noise, p->config, q->old_us, q->old_noise,
                             q->config);
}

static int refine_by_new(const void *a, const void *b)
{
    const refine_cand *p = a, *q = b;
    return record_rank_order(p->new_us, p->new_noise, p->config, q->new_us, q->new_noise,
                             q->config);
}

/* The problem's "ok" records of this build in `mode`, in rank order. */
static int refine_candidates(const refine_env *e, int problem, const char *mode, refine_cand *cand,
                             int *n_out)
{
    int n = 0;
    for (size_t i = 0; i < e->p->n; i++) {
        const plan_point *pt = &e->p->points[i];
        if (pt->reason != PLAN_OK || pt->problem != problem)
            continue;
        record r;
        char key[RECORD_KEY_LEN];
        task_record_init(&r, &e->eng->dev, &e->s->problems[problem], &pt->cfg, mode);
        int rc = record_key(&r, key, sizeof key) == 0 ? store_get(e->st, key, &r) : STORE_EINVAL;
        if (rc == STORE_NOTFOUND || rc == STORE_EDAMAGED) /* nothing to refine there */
            continue;
        if (rc != STORE_OK) {
            progress_say(e->prog, "reading the store failed: %s (%s)", store_strerror(rc),
                         store_last_error(e->st));
            return -1;
        }
        if (r.status == RECORD_ST_OK && r.time.median_us > 0) {
            memset(&cand[n], 0, sizeof cand[n]);
            cand[n].point = (int)i;
            cand[n].old_us = r.time.median_us;
            cand[n].new_us = INFINITY;
            cand[n].old_noise = r.time.noise;
            cand[n].new_noise = NAN;
            cand[n].rec = r;
            fa_config_format(&pt->cfg, cand[n].config, sizeof cand[n].config);
            n++;
        }
    }
    qsort(cand, (size_t)n, sizeof *cand, refine_by_old);
    for (int i = 0; i < n; i++)
        cand[i].old_rank = i + 1;
    *n_out = n;
    return 0;
}

/* Sorts top[0..k) by the new median (failures last) and prints the table:
 * whether the order of the re-measured ones held, each one's difference to
 * the first, and which of the first are a statistical tie with it. */
static void refine_report(const refine_env *e, const char *prob, const char *mode, refine_cand *top,
                          int k)
{
    qsort(top, (size_t)k, sizeof *top, refine_by_new);
    int held = 1, last_old = 0, failed = 0;
    for (int i = 0; i < k; i++) {
        top[i].new_rank = i + 1;
        if (isfinite(top[i].new_us)) {
            held &= top[i].old_rank > last_old;
            last_old = top[i].old_rank;
        } else
            failed++;
    }
    FILE *out = e->out;
    if (!out)
        return;
    fprintf(out, "refine %s %s, top %d: the order %s\n", prob, mode, k, held ? "held" : "changed");
    fprintf(out, "  %-8s %-8s %-24s %10s %10s %9s\n", "old_rank", "new_rank", "config", "old_us",
            "new_us", "vs_first");
    int tied = 1; /* the first `tied` are a statistical tie */
    for (int i = 0; i < k; i++) {
        const char *cfg = top[i].config;
        if (!isfinite(top[i].new_us)) {
            fprintf(out, "  %-8d %-8s %-24s %10.3f %10s\n", top[i].old_rank, "-", cfg,
                    top[i].old_us, "failed");
            continue;
        }
        const double d = top[i].new_us / top[0].new_us - 1;
        /* An unknown tie (a record without an interval) counts as one:
         * without intervals the order is never certain. */
        const record_tie_t t =
            i > 0 && tied == i ? record_tie(&top[i].rec, &top[0].rec) : RECORD_TIE_NO;
        const int tie = t != RECORD_TIE_NO;
        tied += tie;
        fprintf(out, "  %-8d %-8d %-24s %10.3f %10.3f %+8.2f%%%s\n", top[i].old_rank,
                top[i].new_rank, cfg, top[i].old_us, top[i].new_us, 100 * d,
                t == RECORD_TIE_YES       ? " tie"
                : t == RECORD_TIE_UNKNOWN ? " tie unknown (no interval)"
                                          : "");
    }
    if (tied > 1)
        fprintf(out,
                "  the first %d differ by less than their combined 95 %% intervals: a statistical "
                "tie, the order among them may differ from run to run\n",
                tied);
    if (failed)
        fprintf(out, "  %d could not be re-measured (see the messages above)\n", failed);
    fflush(out);
}

/* The engine's hooks for the refine's jobs: each job's tag is the index of
 * its candidate. */
typedef struct refine_sink {
    const refine_env *e;
    refine_cand *cand;
} refine_sink;

/* A stored record: an ok one's median is the one that compares; a failed
 * one is said (the store kept a better earlier record). */
static void refine_stored(void *ctx, const engine_job *job, int idx, const record *r)
{
    const refine_sink *rs = ctx;
    refine_cand *c = &rs->cand[job->tag + (size_t)idx];
    if (r->status == RECORD_ST_OK) {
        c->new_us = r->time.median_us;
        c->new_noise = r->time.noise;
    } else
        progress_say(rs->e->prog,
                     "refine: re-measuring %s %s %s failed (%s: %s); the store keeps its "
                     "earlier record unless that one had failed too",
                     r->problem, r->config, r->mode, record_status_name(r->status), r->error);
}

static void refine_done(void *ctx, const engine_job *job, double timed_s)
{
    (void)job;
    (void)timed_s;
    const refine_sink *rs = ctx;
    progress_end_task(rs->e->prog, NULL);
}

/* One candidate's job in one mode: more rounds of the sweep's own task,
 * folded into its record (its first round in this call is after the
 * rounds it holds). */
static void refine_job(const refine_env *e, int problem, const char *mode, const refine_cand *c,
                       const space_measure *m, engine_job *job)
{
    task *t = &job->t;
    memset(job, 0, sizeof *job);
    t->problem = e->s->problems[problem];
    t->n_configs = 1;
    t->configs[0] = e->p->points[c->point].cfg;
    t->inject[0] = task_inject_for(e->inject, e->n_inject, &t->configs[0]);
    t->n_modes = 1;
    snprintf(t->modes[0], sizeof t->modes[0], "%s", mode);
    t->measure = *m;
    t->tol = e->s->tolerance;
    job->group = problem;
    job->first_round = c->rec.time.round.n;
}

/* The refine's (problem, mode) groups: where each one's candidates are in
 * the one candidate array, and how many of them are re-measured. */
typedef struct refine_group {
    int problem;
    const char *mode;
    size_t first; /* index of its first candidate */
    int k;        /* the best k of them are re-measured */
} refine_group;

/* The stored records of the re-measured candidates (their intervals are
 * set once every round is over), and their medians as new_us. */
static int refine_reread(const refine_env *e, refine_cand *cand, int k)
{
    for (int i = 0; i < k; i++) {
        if (!isfinite(cand[i].new_us))
            continue;
        char key[RECORD_KEY_LEN];
        record r = cand[i].rec;
        const int rc =
            record_key(&r, key, sizeof key) == 0 ? store_get(e->st, key, &r) : STORE_EINVAL;
        if (rc != STORE_OK) {
            progress_say(e->prog, "reading the store failed: %s (%s)", store_strerror(rc),
                         store_last_error(e->st));
            return -1;
        }
        cand[i].rec = r;
        cand[i].new_us = r.time.median_us;
        cand[i].new_noise = r.time.noise;
    }
    return 0;
}

/* Every group's best k, each in measure.rounds more rounds, in one engine
 * call (so the rounds of all of them interleave: each round takes every
 * candidate once, in an order that rotates from round to round): an ok
 * round is folded into the candidate's record, a failed one stored only
 * over a failed record. new_us gets each one's median over all its rounds
 * (inf when a round failed). Why more rounds and not a separate
 * head-to-head: a sustained head-to-head ran the GPU in another state (the
 * H100 at 1950-1990 MHz against the sweep's 2040-2070) and came out 1-4 %
 * slower than the sweep it refines (sweep/NOTES-engine.md); more rounds
 * of the sweep's own tasks keep the state and narrow the interval.
 * Returns 0, 1 when interrupted or no worker can run it, -1 on a store
 * error. */
static int refine_rounds(const refine_env *e, const refine_group *g, int ng, refine_cand *cand,
                         const space_measure *m)
{
    size_t nj = 0;
    int held = 0;
    for (int q = 0; q < ng; q++)
        nj += (size_t)g[q].k;
    engine_job *jobs = calloc(nj + 1, sizeof *jobs);
    if (!jobs) {
        progress_say(e->prog, "out of memory for the refine pass");
        return 1;
    }
    size_t j = 0;
    for (int q = 0; q < ng; q++)
        for (int i = 0; i < g[q].k; i++) {
            refine_cand *c = &cand[g[q].first + (size_t)i];
            refine_job(e, g[q].problem, g[q].mode, c, m, &jobs[j]);
            jobs[j++].tag = g[q].first + (size_t)i;
            if (c->rec.time.round.n > held)
                held = c->rec.time.round.n;
        }
    const int extra = e->s->measure.rounds > 0 ? e->s->measure.rounds : 1;
    const int rounds = held + extra < RECORD_MAX_ROUNDS ? held + extra : RECORD_MAX_ROUNDS;
    refine_sink rs = {e, cand};
    const engine_sink sink = {&rs, NULL, refine_stored, refine_done};
    progress_start(e->prog, e->out, (long)(nj * (size_t)extra));
    const int keep_rounds = e->eng->o.rounds;
    e->eng->o.rounds = rounds;
    const int rc = engine_measure(e->eng, e->st, jobs, nj, ENGINE_FAILED_IF_BETTER, &sink);
    e->eng->o.rounds = keep_rounds;
    progress_finish(e->prog);
    free(jobs);
    return rc;
}

int refine_run(const refine_env *e, int *interrupted)
{
    *interrupted = 0;
    /* Per round: the sweep's own settings, so refined rounds are taken the
     * way the sweep's were and fold into the same estimate. */
    const space_measure m = e->s->measure;
    const int nm = e->s->measure.n_modes, ng = e->s->n_problems * nm;
    refine_cand *cand = calloc(e->p->n * (size_t)nm + 1, sizeof *cand);
    refine_group *g = calloc((size_t)ng + 1, sizeof *g);
    if (!cand || !g) {
        free(cand);
        free(g);
        progress_say(e->prog, "out of memory for the refine pass");
        return 1;
    }
    int rc = 0;
    size_t used = 0;
    for (int q = 0; q < ng && rc == 0; q++) {
        int n = 0;
        g[q] = (refine_group){q / nm, e->s->measure.modes[q % nm], used, 0};
        if (refine_candidates(e, g[q].problem, g[q].mode, cand + used, &n)) {
            rc = -1;
            break;
        }
        g[q].k = n < e->k ? n : e->k;
        used += (size_t)n;
    }
    if (rc == 0) {
        rc = refine_rounds(e, g, ng, cand, &m);
        *interrupted = e->eng->interrupted;
    }
    for (int q = 0; q < ng && rc == 0; q++) {
        if (g[q].k == 0)
            continue;
        if (refine_reread(e, cand + g[q].first, g[q].k)) {
            rc = -1;
            break;
        }
        char prob[48];
        space_problem_format(&e->s->problems[g[q].problem], prob, sizeof prob);
        refine_report(e, prob, g[q].mode, cand + g[q].first, g[q].k);
    }
    free(cand);
    free(g);
    return rc;
}
