/* tuner.c - a group in Kernel Tuner's cache format and in T4 (contract:
 * tuner.h; the formats checked against Kernel Tuner 1.5.0's reader and
 * schema by tests/tuners/).
 */
#include "tuner.h"

#include <math.h>
#include <string.h>

#include <cJSON.h>

#include "../store/text.h"

/* ---- building the document ------------------------------------------------------------------ */

/* cJSON adders that remember the first allocation failure in b->ok. */
typedef struct tuner_doc {
    int ok;
} tuner_doc;

static cJSON *td_check(tuner_doc *d, cJSON *item)
{
    if (!item)
        d->ok = 0;
    return item;
}

static void td_add(tuner_doc *d, cJSON *o, const char *key, cJSON *item)
{
    if (!item || !o || !cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        d->ok = 0;
    }
}

static void td_str(tuner_doc *d, cJSON *o, const char *key, const char *v)
{
    td_add(d, o, key, cJSON_CreateString(v));
}

static void td_int(tuner_doc *d, cJSON *o, const char *key, double v)
{
    td_add(d, o, key, cJSON_CreateNumber(v));
}

/* A float that stays one in JSON ("1.0"), or null when not finite. */
static void td_float(tuner_doc *d, cJSON *o, const char *key, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        td_add(d, o, key, cJSON_CreateNull());
        return;
    }
    text_float(v, buf, sizeof buf);
    td_add(d, o, key, cJSON_CreateRaw(buf));
}

static void td_bool(tuner_doc *d, cJSON *o, const char *key, int v)
{
    td_add(d, o, key, cJSON_CreateBool(v));
}

/* ---- what a point is --------------------------------------------------------------------------
 */

typedef enum tuner_state {
    TS_OK,       /* measured, ok */
    TS_REJECTED, /* the planner's rules */
    TS_FAILED,   /* wrong, crashed, timeout */
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

static const int *tuner_values(const fa_config *c, int v[SPACE_AXIS_COUNT])
{
    v[SPACE_AXIS_BLOCK_M] = c->block_m;
    v[SPACE_AXIS_BLOCK_N] = c->block_n;
    v[SPACE_AXIS_NUM_WARPS] = c->num_warps;
    v[SPACE_AXIS_STAGES] = c->stages;
    v[SPACE_AXIS_SWIZZLE] = c->swizzle;
    return v;
}

/* The configuration: the five axes, as the tuner names them. */
static void tuner_params(tuner_doc *d, cJSON *o, const fa_config *c)
{
    int v[SPACE_AXIS_COUNT];
    tuner_values(c, v);
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        td_int(d, o, space_axis_name((space_axis_id)a), v[a]);
}

/* The record's figures beside the objective (names as in the store). */
static void tuner_figures(tuner_doc *d, cJSON *o, const record *r)
{
    td_float(d, o, "median_us", r->time.median_us);
    td_float(d, o, "min_us", r->time.min_us);
    td_float(d, o, "mean_us", r->time.mean_us);
    td_float(d, o, "stdev_us", r->time.stdev_us);
    td_float(d, o, "noise", r->time.noise);
    /* The 95 % interval an independent run lands in (null: none). */
    td_float(d, o, "ci_lo_us", record_has_ci(r) ? r->time.ci_lo_us : NAN);
    td_float(d, o, "ci_hi_us", record_has_ci(r) ? r->time.ci_hi_us : NAN);
    td_int(d, o, "samples", r->time.samples);
    td_int(d, o, "launches_per_sample", r->time.launches);
    td_float(d, o, "tflops", r->tflops);
    td_float(d, o, "gbps", r->gbps);
    td_float(d, o, "rel_l2", r->rel_l2);
    td_float(d, o, "max_abs", r->max_abs);
    td_int(d, o, "regs", r->regs);
    td_int(d, o, "smem_dynamic", (double)r->smem_dynamic);
    td_int(d, o, "local_bytes", r->local_bytes);
    td_int(d, o, "max_blocks_per_sm", r->max_blocks_per_sm);
    td_float(d, o, "waves", r->waves);
    td_float(d, o, "sm_imbalance", r->sm_imbalance);
    td_int(d, o, "sm_median_mhz", r->clock.median_mhz);
    td_int(d, o, "below_threshold", r->clock.below);
}

/* Code paths and provenance, for every point with a record. */
static void tuner_about(tuner_doc *d, cJSON *o, const group_cell *c)
{
    char text[64];
    fa_config_format(&c->cfg, text, sizeof text);
    td_str(d, o, "config_text", text);
    /* The code paths the family derives (kernels/family.h). */
    const fa_family *f = fa_family_of(&c->cfg);
    for (int i = 0; f && i < f->n_paths; i++)
        td_bool(d, o, f->paths[i], f->path(&c->cfg, i));
    if (c->rec) {
        td_str(d, o, "status", record_status_name(c->rec->status));
        td_str(d, o, "build", c->rec->build);
    } else {
        td_str(d, o, "status", c->reason != PLAN_OK ? "rejected" : "not_measured");
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

static cJSON *tuner_kt_entry(tuner_doc *d, const group_cell *c)
{
    cJSON *e = td_check(d, cJSON_CreateObject());
    tuner_params(d, e, &c->cfg);
    const tuner_state s = tuner_state_of(c);
    const record *r = c->rec;
    if (s == TS_OK) {
        td_float(d, e, "time", r->time.median_us * 1e-3);
        /* Kernel Tuner's own place for the spread: the observations behind
         * "time", here the median of each round (ms). */
        cJSON *times = td_check(d, cJSON_CreateArray());
        for (int i = 0; times && i < r->time.round.n; i++) {
            char buf[40];
            text_float(r->time.round.us[i] * 1e-3, buf, sizeof buf);
            if (!cJSON_AddItemToArray(times, td_check(d, cJSON_CreateRaw(buf))))
                d->ok = 0;
        }
        td_add(d, e, "times", times);
        td_float(d, e, "compile_time", 0.0);
        td_float(d, e, "verification_time", 0.0);
        /* What the samples took: a time-budgeted replay charges it. */
        td_float(d, e, "benchmark_time",
                 r->time.median_us * 1e-3 * r->time.samples *
                     (r->time.launches > 0 ? r->time.launches : 1));
    } else {
        td_str(d, e, "__error__", tuner_kt_marker(s));
        td_float(d, e, "compile_time", 0.0);
        td_float(d, e, "verification_time", 0.0);
        td_float(d, e, "benchmark_time", 0.0);
    }
    td_float(d, e, "strategy_time", 0.0);
    td_float(d, e, "framework_time", 0.0);
    if (r) {
        char ts[32];
        text_iso8601(r->timestamp, ts, sizeof ts);
        td_str(d, e, "timestamp", ts);
    }
    tuner_about(d, e, c);
    if (s == TS_OK)
        tuner_figures(d, e, r);
    else if (s == TS_REJECTED)
        td_str(d, e, "reason", plan_reason_code(c->reason));
    else if (r)
        td_str(d, e, "error", r->error);
    return e;
}

/* The entry's key: the values joined by "," in tune_params_keys order,
 * as Python's str() writes ints. */
static void tuner_kt_key(const fa_config *c, char *buf, size_t n)
{
    int v[SPACE_AXIS_COUNT];
    tuner_values(c, v);
    snprintf(buf, n, "%d,%d,%d,%d,%d", v[0], v[1], v[2], v[3], v[4]);
}

static void tuner_axes(tuner_doc *d, cJSON *o, const group *g)
{
    for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
        cJSON *vals = td_check(d, cJSON_CreateArray());
        for (int j = 0; vals && j < g->axis_len[a]; j++)
            if (!cJSON_AddItemToArray(vals, td_check(d, cJSON_CreateNumber(g->axis[a][j]))))
                d->ok = 0;
        td_add(d, o, space_axis_name((space_axis_id)a), vals);
    }
}

static void tuner_problem_size(tuner_doc *d, cJSON *o, const char *key, const group *g)
{
    space_problem p;
    if (space_problem_parse(g->problem, &p) != 0)
        return;
    const int v[4] = {p.batch, p.heads, p.seq_len, p.head_dim};
    td_add(d, o, key, cJSON_CreateIntArray(v, 4));
}

/* Where the numbers came from: the group and the space. */
static cJSON *tuner_origin(tuner_doc *d, const group *g, const tuner_meta *m)
{
    cJSON *o = td_check(d, cJSON_CreateObject());
    td_str(d, o, "schema", "fasweep.tuner/1");
    td_str(d, o, "device", g->device);
    td_str(d, o, "problem", g->problem);
    td_str(d, o, "mode", g->mode);
    td_str(d, o, "objective", "median time of one launch in this mode, ms");
    td_str(d, o, "space_name", m && m->space_name ? m->space_name : "");
    td_str(d, o, "space_hash", m && m->space_hash ? m->space_hash : "");
    td_str(d, o, "fasweep_version", m && m->version ? m->version : "");
    return o;
}

static cJSON *tuner_kt_doc(tuner_doc *d, const group *g, const tuner_meta *m)
{
    cJSON *doc = td_check(d, cJSON_CreateObject());
    td_str(d, doc, "device_name", g->device);
    td_str(d, doc, "kernel_name", TUNER_KERNEL_NAME);
    tuner_problem_size(d, doc, "problem_size", g);
    cJSON *keys = td_check(d, cJSON_CreateArray());
    for (int a = 0; keys && a < SPACE_AXIS_COUNT; a++)
        if (!cJSON_AddItemToArray(
                keys, td_check(d, cJSON_CreateString(space_axis_name((space_axis_id)a)))))
            d->ok = 0;
    td_add(d, doc, "tune_params_keys", keys);
    cJSON *tp = td_check(d, cJSON_CreateObject());
    tuner_axes(d, tp, g);
    td_add(d, doc, "tune_params", tp);
    td_str(d, doc, "objective", "time");
    td_add(d, doc, "fasweep", tuner_origin(d, g, m));
    /* Kernel Tuner reads `cache` as the last key (it checks the ending). */
    cJSON *cache = td_check(d, cJSON_CreateObject());
    for (size_t i = 0; cache && i < g->n_cells; i++) {
        char key[64];
        tuner_kt_key(&g->cells[i].cfg, key, sizeof key);
        td_add(d, cache, key, tuner_kt_entry(d, &g->cells[i]));
    }
    td_add(d, doc, "cache", cache);
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

static void tuner_t4_measure(tuner_doc *d, cJSON *list, const char *name, double v,
                             const char *unit)
{
    cJSON *m = td_check(d, cJSON_CreateObject());
    td_str(d, m, "name", name);
    if (isfinite(v))
        td_float(d, m, "value", v);
    else
        td_str(d, m, "value", "nan");
    td_str(d, m, "unit", unit);
    if (m && !cJSON_AddItemToArray(list, m)) {
        cJSON_Delete(m);
        d->ok = 0;
    }
}

static cJSON *tuner_t4_result(tuner_doc *d, const group_cell *c)
{
    const tuner_state s = tuner_state_of(c);
    const record *r = c->rec;
    cJSON *o = td_check(d, cJSON_CreateObject());
    if (r) {
        char ts[32];
        text_iso8601(r->timestamp, ts, sizeof ts);
        td_str(d, o, "timestamp", ts);
    }
    cJSON *cfg = td_check(d, cJSON_CreateObject());
    tuner_params(d, cfg, &c->cfg);
    td_add(d, o, "configuration", cfg);
    cJSON *obj = td_check(d, cJSON_CreateArray());
    if (obj && !cJSON_AddItemToArray(obj, td_check(d, cJSON_CreateString("time"))))
        d->ok = 0;
    td_add(d, o, "objectives", obj);
    cJSON *times = td_check(d, cJSON_CreateObject());
    td_float(d, times, "compilation_time", 0.0);
    /* The store keeps statistics, not every sample: runtimes stays empty and
     * the median is the "time" measurement. */
    td_add(d, times, "runtimes", td_check(d, cJSON_CreateArray()));
    td_float(d, times, "framework", 0.0);
    td_float(d, times, "search_algorithm", 0.0);
    td_float(d, times, "validation", 0.0);
    td_add(d, o, "times", times);
    td_str(d, o, "invalidity", tuner_t4_invalidity(s, r));
    td_int(d, o, "correctness", s == TS_FAILED && r->status == RECORD_ST_WRONG ? 0 : 1);
    cJSON *ms = td_check(d, cJSON_CreateArray());
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
        tuner_t4_measure(d, ms, "sm_median_mhz", r->clock.median_mhz, "MHz");
    }
    td_add(d, o, "measurements", ms);
    return o;
}

static cJSON *tuner_t4_doc(tuner_doc *d, const group *g, const tuner_meta *m, int allow_missing)
{
    cJSON *doc = td_check(d, cJSON_CreateObject());
    td_str(d, doc, "schema_version", "1.0.0");
    cJSON *meta = tuner_origin(d, g, m);
    td_str(d, meta, "timeunit", "milliseconds");
    td_str(d, meta, "kernel_name", TUNER_KERNEL_NAME);
    tuner_problem_size(d, meta, "problem_size", g);
    cJSON *tp = td_check(d, cJSON_CreateObject());
    tuner_axes(d, tp, g);
    td_add(d, meta, "tune_params", tp);
    td_add(d, doc, "metadata", meta);
    cJSON *res = td_check(d, cJSON_CreateArray());
    for (size_t i = 0; res && i < g->n_cells; i++) {
        if (allow_missing && tuner_state_of(&g->cells[i]) == TS_MISSING)
            continue;
        cJSON *r = tuner_t4_result(d, &g->cells[i]);
        if (r && !cJSON_AddItemToArray(res, r)) {
            cJSON_Delete(r);
            d->ok = 0;
        }
    }
    td_add(d, doc, "results", res);
    return doc;
}

/* ---- the file ------------------------------------------------------------------------------- */

int tuner_format_parse(const char *text, tuner_format *out)
{
    if (strcmp(text, "kernel-tuner") == 0)
        *out = TUNER_KERNEL_TUNER;
    else if (strcmp(text, "t4") == 0)
        *out = TUNER_T4;
    else
        return -1;
    return 0;
}

int tuner_write(const group *g, tuner_format fmt, const tuner_meta *meta, int allow_missing,
                FILE *out, char *err, size_t errlen)
{
    tuner_doc d = {1};
    cJSON *doc =
        fmt == TUNER_T4 ? tuner_t4_doc(&d, g, meta, allow_missing) : tuner_kt_doc(&d, g, meta);
    char *text = d.ok && doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, errlen, "out of memory building the %s file of %s %s %s",
                 fmt == TUNER_T4 ? "t4" : "kernel-tuner", g->device, g->problem, g->mode);
        return -1;
    }
    fputs(text, out);
    fputc('\n', out);
    cJSON_free(text);
    return 0;
}
