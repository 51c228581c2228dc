/* tuner.c - a group in Kernel Tuner's cache format and in T4 (contract:
 * tuner.h; the formats checked against Kernel Tuner 1.5.0's reader and
 * schema by tests/tuners/).
 */
#include "tuner.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include <cJSON.h>

#include "../store/json.h"
#include "../store/text.h"

/* ---- building the document ------------------------------------------------------------------ */

/* ---- what a point is --------------------------------------------------------------------------
 */

typedef enum tuner_state {
    TS_OK,       /* measured, ok */
    TS_REJECTED, /* the planner's rules */
    TS_FAILED,   /* wrong, crashed, timeout, implausible */
    TS_COMPILE,  /* compile_error */
    TS_MISSING   /* accepted, no record */
} tuner_state;

static tuner_state tuner_state_of(const group_cell *c)
{
    if (c->reason != PLAN_OK)
        return TS_REJECTED;
    if (!c->rec)
        return TS_MISSING;
    switch (c->rec->status) {
    case RECORD_ST_OK:
        return TS_OK;
    case RECORD_ST_COMPILE_ERROR:
        return TS_COMPILE;
    default:
        return TS_FAILED;
    }
}

size_t tuner_missing(const group *g, const group_cell **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; i < g->n_cells; i++)
        if (tuner_state_of(&g->cells[i]) == TS_MISSING) {
            if (!n)
                *first = &g->cells[i];
            n++;
        }
    return n;
}

/* The thread block's x size a point launches with: its family's (every
 * family's CTA is one dimension). */
static int tuner_block_x(const fa_config *c)
{
    const fa_family *f = fa_family_of(c);
    return f ? f->threads(c) : 0;
}

/* The block_size_x values of g's grid: the distinct thread counts of its
 * points, in the order they first appear (mma: 32 x each NUM_WARPS, in
 * file order; wgmma: 128 x (each CONSUMER_WG + 1)). Returns how many (at
 * most TUNER_MAX_BLOCK_X: room for a count that two axes decide). */
#define TUNER_MAX_BLOCK_X (4 * SPACE_MAX_AXIS)
static int tuner_block_values(const group *g, int bx[TUNER_MAX_BLOCK_X])
{
    int n = 0;
    for (size_t i = 0; i < g->n_cells; i++) {
        const int t = tuner_block_x(&g->cells[i].cfg);
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = bx[j] == t;
        if (!seen && n < TUNER_MAX_BLOCK_X)
            bx[n++] = t;
    }
    return n;
}

/* The configuration: the family's axes, by its names, and the thread
 * block size bx (tuner_block_x for every real point). */
static void tuner_params_bx(json_b *d, cJSON *o, const fa_config *c, int bx)
{
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        json_num(d, o, space_axis_name(c->family, a), c->axis[a]);
    json_num(d, o, TUNER_BLOCK_X, bx);
}

static void tuner_params(json_b *d, cJSON *o, const fa_config *c)
{
    tuner_params_bx(d, o, c, tuner_block_x(c));
}

/* The record's figures beside the objective (names as in the store). */
static void tuner_figures(json_b *d, cJSON *o, const record *r)
{
    json_float(d, o, "median_us", r->time.median_us);
    json_float(d, o, "min_us", r->time.min_us);
    json_float(d, o, "mean_us", r->time.mean_us);
    json_float(d, o, "stdev_us", r->time.stdev_us);
    json_float(d, o, "noise", r->time.noise);
    /* The 95 % interval an independent run lands in (null: none). */
    json_float(d, o, "ci_lo_us", record_has_ci(r) ? r->time.ci_lo_us : NAN);
    json_float(d, o, "ci_hi_us", record_has_ci(r) ? r->time.ci_hi_us : NAN);
    json_num(d, o, "samples", r->time.samples);
    json_num(d, o, "launches_per_sample", r->time.launches);
    json_float(d, o, "tflops", r->tflops);
    json_float(d, o, "gbps", r->gbps);
    json_float(d, o, "rel_l2", r->rel_l2);
    json_float(d, o, "max_abs", r->max_abs);
    json_num(d, o, "regs", r->regs);
    json_num(d, o, "smem_dynamic", (double)r->smem_dynamic);
    json_num(d, o, "local_bytes", r->local_bytes);
    json_num(d, o, "max_blocks_per_sm", r->max_blocks_per_sm);
    json_float(d, o, "waves", r->waves);
    json_float(d, o, "sm_imbalance", r->sm_imbalance);
    json_int_or_null(d, o, "sm_median_mhz", r->clock.median_mhz, -1);
    json_int_or_null(d, o, "below_threshold", r->clock.below, -1);
}

/* Code paths and provenance, for every point with a record. */
static void tuner_about(json_b *d, cJSON *o, const group_cell *c)
{
    char text[64];
    fa_config_format(&c->cfg, text, sizeof text);
    json_str(d, o, "config_text", text);
    /* The code paths the family derives (kernels/family.h). */
    const fa_family *f = fa_family_of(&c->cfg);
    for (int i = 0; f && i < f->n_paths; i++)
        json_bool(d, o, f->paths[i], f->path(&c->cfg, i));
    if (c->rec) {
        json_str(d, o, "status", record_status_name(c->rec->status));
        json_str(d, o, "build", c->rec->build);
    } else {
        json_str(d, o, "status", c->reason != PLAN_OK ? "rejected" : "not_measured");
    }
}

/* ---- Kernel Tuner's cache ------------------------------------------------------------------- */

static const char *tuner_kt_marker(tuner_state s)
{
    switch (s) {
    case TS_REJECTED:
        return "InvalidConfig";
    case TS_FAILED:
        return "RuntimeFailedConfig";
    case TS_COMPILE:
        return "CompilationFailedConfig";
    default:
        return "ErrorConfig";
    }
}

static cJSON *tuner_kt_entry(json_b *d, const group_cell *c)
{
    cJSON *e = json_check(d, cJSON_CreateObject());
    tuner_params(d, e, &c->cfg);
    const tuner_state s = tuner_state_of(c);
    const record *r = c->rec;
    if (s == TS_OK) {
        json_float(d, e, "time", r->time.median_us * 1e-3);
        /* Kernel Tuner's own place for the spread: the observations behind
         * "time", here the median of each round (ms). */
        cJSON *times = json_check(d, cJSON_CreateArray());
        for (int i = 0; times && i < r->time.round.n; i++) {
            char buf[40];
            text_float(r->time.round.us[i] * 1e-3, buf, sizeof buf);
            json_push(d, times, cJSON_CreateRaw(buf));
        }
        json_add(d, e, "times", times);
        json_float(d, e, "compile_time", 0.0);
        json_float(d, e, "verification_time", 0.0);
        /* What the samples took: a time-budgeted replay charges it. */
        json_float(d, e, "benchmark_time",
                   r->time.median_us * 1e-3 * r->time.samples *
                       (r->time.launches > 0 ? r->time.launches : 1));
    } else {
        json_str(d, e, "__error__", tuner_kt_marker(s));
        json_float(d, e, "compile_time", 0.0);
        json_float(d, e, "verification_time", 0.0);
        json_float(d, e, "benchmark_time", 0.0);
    }
    json_float(d, e, "strategy_time", 0.0);
    json_float(d, e, "framework_time", 0.0);
    if (r) {
        char ts[32];
        text_iso8601(r->timestamp, ts, sizeof ts);
        json_str(d, e, "timestamp", ts);
    }
    tuner_about(d, e, c);
    if (s == TS_OK)
        tuner_figures(d, e, r);
    else if (s == TS_REJECTED)
        json_str(d, e, "reason", plan_reason_code(c->reason));
    else if (r)
        json_str(d, e, "error", r->error);
    return e;
}

/* The entry's key: the values joined by "," in tune_params_keys order,
 * as Python's str() writes ints. */
static void tuner_kt_key(const fa_config *c, int bx, char *buf, size_t n)
{
    size_t used = 0;
    for (int a = 0; a < SPACE_AXIS_COUNT && used < n; a++)
        used += (size_t)snprintf(buf + used, n - used, "%d,", c->axis[a]);
    if (used < n)
        snprintf(buf + used, n - used, "%d", bx);
}

/* A point whose block_size_x is not its own thread count (the tuner's
 * product of the parameters has it; no kernel launches so): InvalidConfig,
 * as the restriction block_size_x == the family's kt_block_x says. */
static cJSON *tuner_kt_bx_entry(json_b *d, const group_cell *c, int bx)
{
    cJSON *e = json_check(d, cJSON_CreateObject());
    tuner_params_bx(d, e, &c->cfg, bx);
    json_str(d, e, "__error__", "InvalidConfig");
    const char *zero[] = {"compile_time", "verification_time", "benchmark_time", "strategy_time",
                          "framework_time"};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
        json_float(d, e, zero[i], 0.0);
    json_str(d, e, "status", "rejected");
    json_str(d, e, "reason", "block_size_x");
    return e;
}

static void tuner_axes(json_b *d, cJSON *o, const group *g)
{
    for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
        cJSON *vals = json_check(d, cJSON_CreateArray());
        for (int j = 0; vals && j < g->axis_len[a]; j++)
            json_push(d, vals, cJSON_CreateNumber(g->axis[a][j]));
        json_add(d, o, space_axis_name(g->family, a), vals);
    }
    int v[TUNER_MAX_BLOCK_X];
    const int n = tuner_block_values(g, v);
    json_add(d, o, TUNER_BLOCK_X, json_check(d, cJSON_CreateIntArray(v, n)));
}

/* ---- the planner's rules as restrictions ---------------------------------------------------- */

/* The planner's rules for g's grid (its family's: kernels/family.h
 * kt_block_x and kt_restrictions; HEAD_DIM the problem's, the smem limit
 * the space's) as Kernel Tuner restriction strings over the tune
 * parameters, "block_size_x == 32*NUM_WARPS" first, then e.g. "BLOCK_M %
 * (16*NUM_WARPS) == 0" (mma) or "BLOCK_M == 64*CONSUMER_WG and CONSUMER_WG
 * in (1, 2, 3)" (wgmma), into out (max >= TUNER_MAX_RESTRICTIONS
 * entries). A point meets them all exactly when the planner accepts it
 * (tests/unit/test_plan.c brute-forces it, tests/tuners checks it with
 * Kernel Tuner). Returns how many, or -1 for an unknown family, a problem
 * that does not parse or a head_dim the family rejects outright. */
static int tuner_restrictions(const group *g, char (*out)[TUNER_RESTRICTION_LEN], int max)
{
    space_problem p;
    const fa_family *f = fa_family_get(g->family);
    if (!f || max < TUNER_MAX_RESTRICTIONS || space_problem_parse(g->problem, &p) != 0)
        return -1;
    /* The family's rules (kernels/<family>/<family>.c: kt_restrictions, beside
     * its check), after the thread block size; without a space's limit the
     * cells were checked with none (group_lay_out). */
    snprintf(out[0], TUNER_RESTRICTION_LEN, "%s == %s", TUNER_BLOCK_X, f->kt_block_x);
    const int n = f->kt_restrictions(p.head_dim, g->smem_limit > 0 ? g->smem_limit : LONG_MAX,
                                     out + 1, max - 1);
    return n < 0 ? -1 : n + 1;
}

int tuner_can_write(const group *g, char *err, size_t errlen)
{
    char r[TUNER_MAX_RESTRICTIONS][TUNER_RESTRICTION_LEN];
    const fa_family *f = fa_family_get(g->family);
    if (!f) {
        snprintf(err, errlen, "%s | %s | %s: its grid's kernel family (%d) is unknown", g->device,
                 g->problem, g->mode, g->family);
        return -1;
    }
    if (tuner_restrictions(g, r, TUNER_MAX_RESTRICTIONS) < 0) {
        snprintf(err, errlen,
                 "%s | %s | %s: the %s family's rules reject every point of problem %s (its "
                 "head_dim): nothing for a tuner to search",
                 g->device, g->problem, g->mode, f->name, g->problem);
        return -1;
    }
    if (g->n_cells == 0) {
        snprintf(err, errlen, "%s | %s | %s: no grid to write%s%s", g->device, g->problem, g->mode,
                 g->no_grid[0] ? ": " : "", g->no_grid);
        return -1;
    }
    return 0;
}

/* The restrictions as a JSON array under key (tuner_can_write checked
 * that the family states them). */
static void tuner_restrictions_json(json_b *d, cJSON *o, const char *key, const group *g)
{
    char r[TUNER_MAX_RESTRICTIONS][TUNER_RESTRICTION_LEN];
    const int n = tuner_restrictions(g, r, TUNER_MAX_RESTRICTIONS);
    cJSON *a = json_check(d, cJSON_CreateArray());
    for (int i = 0; a && i < n; i++)
        json_push(d, a, cJSON_CreateString(r[i]));
    json_add(d, o, key, a);
}

static void tuner_problem_size(json_b *d, cJSON *o, const char *key, const group *g)
{
    space_problem p;
    if (space_problem_parse(g->problem, &p) != 0)
        return;
    const int v[4] = {p.batch, p.heads, p.seq_len, p.head_dim};
    json_add(d, o, key, cJSON_CreateIntArray(v, 4));
}

/* Where the numbers came from: the group and the space. */
static cJSON *tuner_origin(json_b *d, const group *g, const tuner_meta *m)
{
    cJSON *o = json_check(d, cJSON_CreateObject());
    const fa_family *f = fa_family_get(g->family);
    json_str(d, o, "schema", "fasweep.tuner/1");
    json_str(d, o, "family", f ? f->name : "?");
    json_str(d, o, "device", g->device);
    json_str(d, o, "problem", g->problem);
    json_str(d, o, "mode", g->mode);
    json_str(d, o, "objective", "median time of one launch in this mode, ms");
    json_str(d, o, "space_name", m && m->space_name ? m->space_name : "");
    json_str(d, o, "space_hash", m && m->space_hash ? m->space_hash : "");
    json_str(d, o, "fasweep_version", m && m->version ? m->version : "");
    return o;
}

static cJSON *tuner_kt_doc(json_b *d, const group *g, const tuner_meta *m)
{
    cJSON *doc = json_check(d, cJSON_CreateObject());
    json_str(d, doc, "device_name", g->device);
    json_str(d, doc, "kernel_name", TUNER_KERNEL_NAME);
    tuner_problem_size(d, doc, "problem_size", g);
    cJSON *keys = json_check(d, cJSON_CreateArray());
    for (int a = 0; keys && a < SPACE_AXIS_COUNT; a++)
        json_push(d, keys, cJSON_CreateString(space_axis_name(g->family, a)));
    json_push(d, keys, cJSON_CreateString(TUNER_BLOCK_X));
    json_add(d, doc, "tune_params_keys", keys);
    cJSON *tp = json_check(d, cJSON_CreateObject());
    tuner_axes(d, tp, g);
    json_add(d, doc, "tune_params", tp);
    /* The planner's rules: pass them as tune_kernel's restrictions and a
     * search visits exactly the accepted points. */
    tuner_restrictions_json(d, doc, "restrictions", g);
    json_str(d, doc, "objective", "time");
    json_add(d, doc, "fasweep", tuner_origin(d, g, m));
    /* Kernel Tuner reads `cache` as the last key (it checks the ending).
     * Every point of the product of the tune_params is in it, those whose
     * block_size_x is not their own thread count as InvalidConfig. */
    cJSON *cache = json_check(d, cJSON_CreateObject());
    int bxs[TUNER_MAX_BLOCK_X];
    const int n_bx = tuner_block_values(g, bxs);
    for (size_t i = 0; cache && i < g->n_cells; i++) {
        const group_cell *c = &g->cells[i];
        for (int j = 0; j < n_bx; j++) {
            const int bx = bxs[j];
            char key[80];
            tuner_kt_key(&c->cfg, bx, key, sizeof key);
            json_add(d, cache, key,
                     bx == tuner_block_x(&c->cfg) ? tuner_kt_entry(d, c)
                                                  : tuner_kt_bx_entry(d, c, bx));
        }
    }
    json_add(d, doc, "cache", cache);
    return doc;
}

/* ---- T4 ------------------------------------------------------------------------------------- */

static const char *tuner_t4_invalidity(tuner_state s, const record *r)
{
    switch (s) {
    case TS_OK:
        return "correct";
    case TS_REJECTED:
        return "constraints";
    case TS_COMPILE:
        return "compile";
    default:
        break;
    }
    if (r && r->status == RECORD_ST_WRONG)
        return "correctness";
    return r && r->status == RECORD_ST_TIMEOUT ? "timeout" : "runtime";
}

static void tuner_t4_measure(json_b *d, cJSON *list, const char *name, double v, const char *unit)
{
    cJSON *m = json_check(d, cJSON_CreateObject());
    json_str(d, m, "name", name);
    if (isfinite(v))
        json_float(d, m, "value", v);
    else
        json_str(d, m, "value", "nan");
    json_str(d, m, "unit", unit);
    json_push(d, list, m);
}

static cJSON *tuner_t4_result(json_b *d, const group_cell *c)
{
    const tuner_state s = tuner_state_of(c);
    const record *r = c->rec;
    cJSON *o = json_check(d, cJSON_CreateObject());
    if (r) {
        char ts[32];
        text_iso8601(r->timestamp, ts, sizeof ts);
        json_str(d, o, "timestamp", ts);
    }
    cJSON *cfg = json_check(d, cJSON_CreateObject());
    tuner_params(d, cfg, &c->cfg);
    json_add(d, o, "configuration", cfg);
    cJSON *obj = json_check(d, cJSON_CreateArray());
    json_push(d, obj, cJSON_CreateString("time"));
    json_add(d, o, "objectives", obj);
    cJSON *times = json_check(d, cJSON_CreateObject());
    json_float(d, times, "compilation_time", 0.0);
    /* The store keeps statistics, not every sample: runtimes stays empty and
     * the median is the "time" measurement. */
    json_add(d, times, "runtimes", json_check(d, cJSON_CreateArray()));
    json_float(d, times, "framework", 0.0);
    json_float(d, times, "search_algorithm", 0.0);
    json_float(d, times, "validation", 0.0);
    json_add(d, o, "times", times);
    json_str(d, o, "invalidity", tuner_t4_invalidity(s, r));
    json_num(d, o, "correctness", s == TS_FAILED && r->status == RECORD_ST_WRONG ? 0 : 1);
    cJSON *ms = json_check(d, cJSON_CreateArray());
    if (s == TS_OK) {
        tuner_t4_measure(d, ms, "time", r->time.median_us * 1e-3, "ms");
        tuner_t4_measure(d, ms, "time_min", r->time.min_us * 1e-3, "ms");
        tuner_t4_measure(d, ms, "noise", r->time.noise, "");
        if (record_has_ci(r)) {
            tuner_t4_measure(d, ms, "time_ci_lo", r->time.ci_lo_us * 1e-3, "ms");
            tuner_t4_measure(d, ms, "time_ci_hi", r->time.ci_hi_us * 1e-3, "ms");
        }
        tuner_t4_measure(d, ms, "samples", r->time.samples, "");
        tuner_t4_measure(d, ms, "tflops", r->tflops, "TFLOP/s");
        tuner_t4_measure(d, ms, "gbps", r->gbps, "GB/s");
        tuner_t4_measure(d, ms, "rel_l2", r->rel_l2, "");
        tuner_t4_measure(d, ms, "registers", r->regs, "");
        tuner_t4_measure(d, ms, "smem_dynamic", (double)r->smem_dynamic, "B");
        /* unknown (-1): "nan", as any measurement without a number */
        tuner_t4_measure(d, ms, "sm_median_mhz",
                         r->clock.median_mhz == -1 ? NAN : r->clock.median_mhz, "MHz");
    }
    json_add(d, o, "measurements", ms);
    return o;
}

static cJSON *tuner_t4_doc(json_b *d, const group *g, const tuner_meta *m, int allow_missing)
{
    cJSON *doc = json_check(d, cJSON_CreateObject());
    json_str(d, doc, "schema_version", "1.0.0");
    cJSON *meta = tuner_origin(d, g, m);
    json_str(d, meta, "timeunit", "milliseconds");
    json_str(d, meta, "kernel_name", TUNER_KERNEL_NAME);
    tuner_problem_size(d, meta, "problem_size", g);
    cJSON *tp = json_check(d, cJSON_CreateObject());
    tuner_axes(d, tp, g);
    json_add(d, meta, "tune_params", tp);
    tuner_restrictions_json(d, meta, "restrictions", g);
    json_add(d, doc, "metadata", meta);
    cJSON *res = json_check(d, cJSON_CreateArray());
    for (size_t i = 0; res && i < g->n_cells; i++) {
        if (allow_missing && tuner_state_of(&g->cells[i]) == TS_MISSING)
            continue;
        cJSON *r = tuner_t4_result(d, &g->cells[i]);
        json_push(d, res, r);
    }
    json_add(d, doc, "results", res);
    return doc;
}

/* ---- T1: Kernel Tuner's input file ------------------------------------------------------------
 */

/* One tuning parameter: its values as the Python list text T1 wants. */
static void tuner_t1_param(json_b *d, cJSON *list, const char *name, const int *v, int n)
{
    char vals[512] = "[";
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(vals);
        snprintf(vals + len, sizeof vals - len, "%s%d", i ? ", " : "", v[i]);
    }
    const size_t len = strlen(vals);
    snprintf(vals + len, sizeof vals - len, "]");
    cJSON *p = json_check(d, cJSON_CreateObject());
    json_str(d, p, "Name", name);
    json_str(d, p, "Type", "int");
    json_str(d, p, "Values", vals);
    json_push(d, list, p);
}

/* Whether expr names the identifier name (a whole word: "STAGES" is not in
 * "NUM_STAGES"). */
static int tuner_names(const char *expr, const char *name)
{
    const size_t len = strlen(name);
    for (const char *p = strstr(expr, name); p; p = strstr(p + 1, name)) {
        const char before = p > expr ? p[-1] : ' ', after = p[len];
        if (!(isalnum((unsigned char)before) || before == '_') &&
            !(isalnum((unsigned char)after) || after == '_'))
            return 1;
    }
    return 0;
}

/* The tune parameters a restriction names (T1 wants them listed). */
static cJSON *tuner_t1_names(json_b *d, const group *g, const char *expr)
{
    cJSON *a = json_check(d, cJSON_CreateArray());
    for (int i = 0; a && i <= SPACE_AXIS_COUNT; i++) {
        const char *n = i < SPACE_AXIS_COUNT ? space_axis_name(g->family, i) : TUNER_BLOCK_X;
        if (tuner_names(expr, n))
            json_push(d, a, cJSON_CreateString(n));
    }
    return a;
}

static cJSON *tuner_t1_space(json_b *d, const group *g)
{
    cJSON *cs = json_check(d, cJSON_CreateObject());
    cJSON *params = json_check(d, cJSON_CreateArray());
    for (int a = 0; params && a < SPACE_AXIS_COUNT; a++)
        tuner_t1_param(d, params, space_axis_name(g->family, a), g->axis[a], g->axis_len[a]);
    int bx[TUNER_MAX_BLOCK_X];
    const int n_bx = tuner_block_values(g, bx);
    if (params)
        tuner_t1_param(d, params, TUNER_BLOCK_X, bx, n_bx);
    json_add(d, cs, "TuningParameters", params);
    char r[TUNER_MAX_RESTRICTIONS][TUNER_RESTRICTION_LEN];
    const int n = tuner_restrictions(g, r, TUNER_MAX_RESTRICTIONS);
    cJSON *conds = json_check(d, cJSON_CreateArray());
    for (int i = 0; conds && i < n; i++) {
        cJSON *c = json_check(d, cJSON_CreateObject());
        json_add(d, c, "Parameters", tuner_t1_names(d, g, r[i]));
        json_str(d, c, "Expression", r[i]);
        json_push(d, conds, c);
    }
    json_add(d, cs, "Conditions", conds);
    return cs;
}

/* Q, K, V and O as float vectors: T1's loader (Kernel Tuner 1.5) converts
 * only those; the kernel's are fp16 of the same element count, and a
 * simulated run never launches it. */
static cJSON *tuner_t1_args(json_b *d, const space_problem *p)
{
    cJSON *args = json_check(d, cJSON_CreateArray());
    const char *names[4] = {"Q", "K", "V", "O"};
    for (int i = 0; args && i < 4; i++) {
        cJSON *a = json_check(d, cJSON_CreateObject());
        json_str(d, a, "Name", names[i]);
        json_str(d, a, "Type", "float");
        json_str(d, a, "MemoryType", "Vector");
        json_num(d, a, "Size", (double)p->batch * p->heads * p->seq_len * p->head_dim);
        json_str(d, a, "FillType", "Constant");
        json_float(d, a, "FillValue", 0.0);
        json_str(d, a, "AccessType", i < 3 ? "ReadOnly" : "WriteOnly");
        json_push(d, args, a);
    }
    return args;
}

static cJSON *tuner_t1_kernel(json_b *d, const group *g)
{
    cJSON *k = json_check(d, cJSON_CreateObject());
    space_problem p;
    const int parsed = space_problem_parse(g->problem, &p) == 0;
    const fa_family *f = fa_family_get(g->family);
    json_str(d, k, "Language", "CUDA");
    json_str(d, k, "KernelName", TUNER_KERNEL_NAME);
    /* Resolved by Kernel Tuner against the working directory, then the T1
     * file's folder and its parent: run from the repository root. */
    json_str(d, k, "KernelFile", f ? f->header : "");
    json_str(d, k, "GlobalSizeType", "CUDA");
    cJSON *dev = json_check(d, cJSON_CreateObject());
    json_str(d, dev, "Name", g->device);
    json_add(d, k, "Device", dev);
    if (parsed)
        tuner_problem_size(d, k, "ProblemSize", g);
    /* The launch, as the family's: its grid's x (mma, wgmma: one CTA per
     * BLOCK_M query rows), one CTA per (batch, head) in y, block_size_x
     * threads. */
    cJSON *gs = json_check(d, cJSON_CreateObject());
    json_str(d, gs, "X", f ? f->kt_grid_x : "");
    json_str(d, gs, "Y", "ProblemSize[0] * ProblemSize[1]");
    json_add(d, k, "GlobalSize", gs);
    cJSON *ls = json_check(d, cJSON_CreateObject());
    json_str(d, ls, "X", TUNER_BLOCK_X);
    json_add(d, k, "LocalSize", ls);
    if (parsed)
        json_add(d, k, "Arguments", tuner_t1_args(d, &p));
    return k;
}

static cJSON *tuner_t1_doc(json_b *d, const group *g, const tuner_meta *m)
{
    cJSON *doc = json_check(d, cJSON_CreateObject());
    cJSON *gen = json_check(d, cJSON_CreateObject());
    json_num(d, gen, "FormatVersion", 1);
    json_str(d, gen, "TimeUnit", "Milliseconds");
    json_add(d, doc, "General", gen);
    json_add(d, doc, "ConfigurationSpace", tuner_t1_space(d, g));
    cJSON *search = json_check(d, cJSON_CreateObject());
    json_str(d, search, "Name", "brute_force");
    json_add(d, doc, "Search", search);
    json_add(d, doc, "KernelSpecification", tuner_t1_kernel(d, g));
    /* The objective (T1 has no field for it: tune_kernel_T1's objective
     * argument, "time" by default, is this one). */
    cJSON *o = tuner_origin(d, g, m);
    json_str(d, o, "objective_name", "time");
    json_bool(d, o, "objective_higher_is_better", 0);
    json_add(d, doc, "fasweep", o);
    return doc;
}

/* ---- the file ------------------------------------------------------------------------------- */

int tuner_format_parse(const char *text, tuner_format *out)
{
    if (strcmp(text, "kernel-tuner") == 0)
        *out = TUNER_KERNEL_TUNER;
    else if (strcmp(text, "t4") == 0)
        *out = TUNER_T4;
    else if (strcmp(text, "t1") == 0)
        *out = TUNER_T1;
    else
        return -1;
    return 0;
}

int tuner_write(const group *g, tuner_format fmt, const tuner_meta *meta, int allow_missing,
                FILE *out, char *err, size_t errlen)
{
    if (tuner_can_write(g, err, errlen) != 0)
        return -1;
    json_b d = JSON_B_INIT;
    cJSON *doc = fmt == TUNER_T4   ? tuner_t4_doc(&d, g, meta, allow_missing)
                 : fmt == TUNER_T1 ? tuner_t1_doc(&d, g, meta)
                                   : tuner_kt_doc(&d, g, meta);
    char *text = d.ok && doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, errlen, "out of memory building the %s file of %s %s %s",
                 fmt == TUNER_T4   ? "t4"
                 : fmt == TUNER_T1 ? "t1"
                                   : "kernel-tuner",
                 g->device, g->problem, g->mode);
        return -1;
    }
    fputs(text, out);
    fputc('\n', out);
    cJSON_free(text);
    return 0;
}
