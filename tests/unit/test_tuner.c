/* test_tuner.c - the tuner exports (export/tuner.h) take everything from the
 * family table: each family's Kernel Tuner restrictions (kernels/family.h:
 * kt_restrictions, kt_block_x), brute-forced over every point a space may
 * hold, accept exactly the points its check accepts, and the thread block
 * size is its threads; a wgmma group exports with its own tune parameters,
 * restrictions, kernel file and measured points (was: mma's names and
 * rules, every point InvalidConfig); the grid's axis names are its
 * family's.
 *
 * Restrictions are evaluated by tests/unit/pyexpr.h, Python's expression
 * semantics for the subset they use (tests/tuners runs them in Kernel
 * Tuner itself).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/mma/mma.h"
#include "kernels/wgmma/traits.h"
#include "grid/plan.h"
#include "grid/space.h"
#include "seeds/group.h"
#include "export/tuner.h"
#include "tests/unit/pyexpr.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testoom.h"

/* ---- the evaluator itself: Python's answers ------------------------------------------------- */

static long long py(const char *text, const char *const *names, int n, const long long *vals)
{
    pe_expr *e = malloc(sizeof *e);
    assert_non_null(e);
    if (pe_parse(e, text, names, n) != 0) {
        print_error("does not parse: %s\n", text);
        fail();
    }
    int err = 0;
    const long long v = pe_eval(e, vals, &err);
    assert_int_equal(err, 0);
    free(e);
    return v;
}

static void test_pyexpr(void **state)
{
    (void)state;
    static const char *const names[] = {"A", "B_C"};
    const long long v[] = {-7, 2};
    /* The values python3 -c 'print(...)' gives. */
    assert_int_equal(py("A // B_C", names, 2, v), -4);
    assert_int_equal(py("A % B_C", names, 2, v), 1);
    assert_int_equal(py("7 // -2", names, 2, v), -4);
    assert_int_equal(py("7 % -2", names, 2, v), -1);
    assert_int_equal(py("-A*B_C + 1", names, 2, v), 15);
    assert_int_equal(py("1 < B_C <= 2", names, 2, v), 1);
    assert_int_equal(py("1 < B_C < 2", names, 2, v), 0);
    assert_int_equal(py("B_C in (1, 2, 3)", names, 2, v), 1);
    assert_int_equal(py("B_C not in (1, 2, 3)", names, 2, v), 0);
    assert_int_equal(py("(10 if A > 0 else 20 if B_C == 2 else 30)", names, 2, v), 20);
    assert_int_equal(py("3 and 4", names, 2, v), 4);
    assert_int_equal(py("0 or B_C", names, 2, v), 2);
    assert_int_equal(py("not A < 0 or B_C == 2 and A == 1", names, 2, v), 0);
    assert_int_equal(py("B_C*(1 if A in (0, 3) else 2)", names, 2, v), 4);
    /* Not this subset, or an unknown name: refused, never guessed. */
    pe_expr *e = malloc(sizeof *e);
    assert_non_null(e);
    assert_int_equal(pe_parse(e, "A / B_C", names, 2), -1);
    assert_int_equal(pe_parse(e, "A ** 2", names, 2), -1);
    assert_int_equal(pe_parse(e, "NUM_WARPS == 4", names, 2), -1);
    assert_int_equal(pe_parse(e, "A ==", names, 2), -1);
    assert_int_equal(pe_parse(e, "A % 0", names, 2), 0);
    int err = 0;
    pe_eval(e, v, &err);
    assert_int_equal(err, 1); /* ZeroDivisionError */
    free(e);
}

/* ---- every family's restrictions against its check ------------------------------------------ */

/* The values of one axis a space may hold (fa_axis: lo..hi, step, set). */
static int axis_values(const fa_axis *ax, int *out, int max)
{
    int n = 0;
    for (long v = ax->lo; v <= ax->hi && n < max; v++) {
        if (ax->step > 1 && v % ax->step != 0)
            continue;
        if (ax->set && (v >= 64 || !(ax->set & (1ULL << v))))
            continue;
        out[n++] = (int)v;
    }
    return n;
}

#define MAX_VALS 64

typedef struct kt_count {
    long points, accepted, by_reason[FA_REJ_COUNT];
} kt_count;

/* For family f at head_dim and a shared-memory limit: every point of the
 * axes' values meets all of f's restrictions exactly when f->check accepts
 * it, and kt_block_x is its threads. */
static void brute_force(const fa_family *f, int fi, int head_dim, long limit, kt_count *k)
{
    const char *names[SPACE_AXIS_COUNT + 1];
    int vals[SPACE_AXIS_COUNT][MAX_VALS], len[SPACE_AXIS_COUNT];
    for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
        names[a] = f->axes[1 + a].name;
        assert_string_equal(names[a], space_axis_name(fi, a));
        len[a] = axis_values(&f->axes[1 + a], vals[a], MAX_VALS);
        assert_true(len[a] > 0);
    }
    names[SPACE_AXIS_COUNT] = TUNER_BLOCK_X;
    char r[FA_KT_MAX_RESTRICTIONS][FA_KT_RESTRICTION_LEN];
    const int n = f->kt_restrictions(head_dim, limit, r, FA_KT_MAX_RESTRICTIONS);
    assert_true(n > 0);
    pe_expr *e = calloc((size_t)n + 1, sizeof *e);
    assert_non_null(e);
    for (int i = 0; i < n; i++)
        if (pe_parse(&e[i], r[i], names, SPACE_AXIS_COUNT) != 0) {
            print_error("%s: restriction %d does not parse over its axes: %s\n", f->name, i, r[i]);
            fail();
        }
    assert_int_equal(pe_parse(&e[n], f->kt_block_x, names, SPACE_AXIS_COUNT), 0);
    size_t total = 1;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        total *= (size_t)len[a];
    for (size_t i = 0; i < total; i++) {
        fa_config c = {head_dim, {0}, fi, FA_DTYPE_FP16};
        long long v[SPACE_AXIS_COUNT + 1];
        size_t rest = i;
        for (int a = SPACE_AXIS_COUNT - 1; a >= 0; a--) {
            c.axis[a] = vals[a][rest % (size_t)len[a]];
            v[a] = c.axis[a];
            rest /= (size_t)len[a];
        }
        const int reason = f->check(&c, limit);
        int all = 1, err = 0, failed = -1;
        for (int j = 0; j < n && all; j++)
            if (!pe_eval(&e[j], v, &err)) {
                all = 0;
                failed = j;
            }
        assert_int_equal(err, 0);
        if (all != (reason == FA_REJ_OK)) {
            char text[64];
            fa_config_format(&c, text, sizeof text);
            print_error("%s %s (limit %ld): check says %s, the restrictions %s (%s)\n", f->name,
                        text, limit, plan_reason_code((plan_reason)reason),
                        all ? "accept it" : "reject it at", all ? "" : r[failed]);
            fail();
        }
        assert_int_equal(pe_eval(&e[n], v, &err), f->threads(&c));
        assert_int_equal(err, 0);
        k->points++;
        k->accepted += reason == FA_REJ_OK;
        k->by_reason[reason]++;
    }
    free(e);
}

/* Whether the decimal d stands in text as a number of its own. */
static int says_number(const char *text, int d)
{
    char num[16];
    snprintf(num, sizeof num, "%d", d);
    for (const char *p = strstr(text, num); p; p = strstr(p + 1, num))
        if ((p == text || !isdigit((unsigned char)p[-1])) &&
            !isdigit((unsigned char)p[strlen(num)]))
            return 1;
    return 0;
}

/* The head-dim rule in words names exactly the head dims check takes (the
 * words were once left at "64 or 128" when 256 came). */
static void expect_head_dims_said(const fa_family *f, int fi)
{
    for (int d = 16; d <= 512; d += 16) {
        const fa_config c = {d, {128, 128, 2, 2, 1}, fi, FA_DTYPE_FP16};
        const int takes = f->check(&c, LONG_MAX) != FA_REJ_HEAD_DIM;
        if (takes != says_number(f->rule[FA_REJ_HEAD_DIM], d))
            fail_msg("%s: HEAD_DIM %d is %s by check, but the rule says \"%s\"", f->name, d,
                     takes ? "taken" : "refused", f->rule[FA_REJ_HEAD_DIM]);
    }
}

static void test_restrictions_are_check(void **state)
{
    (void)state;
    static const long limits[] = {49152, 101376, 200704, 232448, LONG_MAX};
    for (int fi = 0; fi < fa_family_count(); fi++) {
        const fa_family *f = fa_family_get(fi);
        assert_non_null(f->kt_restrictions);
        assert_non_null(f->kt_block_x);
        assert_non_null(f->kt_grid_x);
        kt_count k;
        memset(&k, 0, sizeof k);
        for (int d = 64; d <= 128; d += 64)
            for (size_t l = 0; l < sizeof limits / sizeof *limits; l++)
                brute_force(f, fi, d, limits[l], &k);
        /* Not vacuous: points both ways, and every rule but head_dim bites. */
        assert_true(k.accepted > 0 && k.accepted < k.points);
        for (int reason = FA_REJ_WARP_ROWS; reason < FA_REJ_COUNT; reason++)
            if (f->rule[reason] && reason != FA_REJ_ARCH)
                assert_true(k.by_reason[reason] > 0);
        /* A head_dim the family never takes: no restrictions (every point is
         * rejected: nothing to search), and check agrees. */
        char r[FA_KT_MAX_RESTRICTIONS][FA_KT_RESTRICTION_LEN];
        assert_int_equal(f->kt_restrictions(96, LONG_MAX, r, FA_KT_MAX_RESTRICTIONS), -1);
        const fa_config c = {96, {128, 128, 2, 2, 1}, fi, FA_DTYPE_FP16};
        assert_int_equal(f->check(&c, LONG_MAX), FA_REJ_HEAD_DIM);
        /* Every code the family returns has its rule in words; the
         * table says nothing of codes it never returns. */
        for (int reason = 1; reason < FA_REJ_COUNT; reason++)
            if (k.by_reason[reason])
                assert_non_null(f->rule[reason]);
        assert_non_null(f->rule[FA_REJ_HEAD_DIM]);
        expect_head_dims_said(f, fi);
    }
}

/* ---- a wgmma group -------------------------------------------------------------------------- */

#define WG_SPACE                                                                                   \
    "{\"name\": \"wg\", \"family\": \"wgmma\", \"target\": {\"gpu\": \"any\", \"arch\": "          \
    "\"sm_90\", \"smem_limit\": 232448}, \"problems\": [{\"batch\": 4, \"heads\": 8, "             \
    "\"seq_len\": "                                                                                \
    "512, \"head_dim\": 64, \"causal\": false}], \"axes\": {\"BLOCK_M\": [64, 128], \"BLOCK_N\": " \
    "[64, 128], \"CONSUMER_WG\": [1, 2], \"STAGES\": [2], \"PIPELINE\": [1, 2]}}"

static void wg_record(record *r, const char *config, double us)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device, sizeof r->device, "NVIDIA H100 80GB HBM3");
    snprintf(r->problem, sizeof r->problem, "b4.h8.s512.d64.nc");
    snprintf(r->build, sizeof r->build, "5e1f0c2a9b3d4e67");
    snprintf(r->family, sizeof r->family, "wgmma");
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->mode, sizeof r->mode, "hot");
    r->kind = RECORD_KIND_KERNEL;
    r->status = RECORD_ST_OK;
    r->time.median_us = r->time.min_us = r->time.mean_us = us;
    r->time.samples = 20;
    r->time.noise = 0.001;
    r->clock.median_mhz = r->clock.below = -1; /* unknown */
}

/* A group of wgmma records of the WG_SPACE problem, laid over g's grid of
 * family `family` in s (s NULL: the records' own axes). */
static void wg_group(group *g, const space *s, int family)
{
    memset(g, 0, sizeof *g);
    snprintf(g->device, sizeof g->device, "NVIDIA H100 80GB HBM3");
    snprintf(g->problem, sizeof g->problem, "b4.h8.s512.d64.nc");
    snprintf(g->mode, sizeof g->mode, "hot");
    g->n_recs = 2;
    g->recs = calloc(g->n_recs, sizeof *g->recs);
    assert_non_null(g->recs);
    wg_record(&g->recs[0], "d64.m128.n128.c2.s2.p2", 100.0);
    wg_record(&g->recs[1], "d64.m64.n64.c1.s2.p1", 120.0);
    g->recs[1].clock.median_mhz = 1980;
    g->recs[1].clock.below = 0;
    assert_true(group_lay_out_family(g, s, family) >= 0);
}

/* s parsed from WG_SPACE and g the wgmma group laid over its grid: the
 * start of the export tests (s must outlive g). */
static void wg_space_group(space *s, group *g)
{
    char err[512];
    assert_int_equal(space_parse(WG_SPACE, strlen(WG_SPACE), "wg.json", s, err, sizeof err), 0);
    wg_group(g, s, -1);
}

static cJSON *export_doc(const group *g, tuner_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_non_null(o);
    char err[256] = "";
    const tuner_meta m = {"wg", "0123456789abcdef", "test"};
    assert_int_equal(tuner_write(g, fmt, &m, 1, o, err, sizeof err), 0);
    assert_int_equal(fclose(o), 0);
    cJSON *d = cJSON_Parse(buf);
    free(buf);
    assert_non_null(d);
    return d;
}

static const char *const wg_keys[] = {"BLOCK_M", "BLOCK_N",  "CONSUMER_WG",
                                      "STAGES",  "PIPELINE", "block_size_x"};

static void test_wgmma_kernel_tuner(void **state)
{
    (void)state;
    space s;
    group g;
    wg_space_group(&s, &g);
    assert_int_equal(g.family, FA_FAMILY_WGMMA);
    assert_int_equal(g.n_cells, 16);
    cJSON *d = export_doc(&g, TUNER_KERNEL_TUNER);
    const cJSON *keys = cJSON_GetObjectItem(d, "tune_params_keys");
    assert_int_equal(cJSON_GetArraySize(keys), 6);
    for (int i = 0; i < 6; i++)
        assert_string_equal(cJSON_GetArrayItem(keys, i)->valuestring, wg_keys[i]);
    /* block_size_x: the family's threads, 128 x (CONSUMER_WG + 1). */
    const cJSON *bx = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "tune_params"), "block_size_x");
    assert_int_equal(cJSON_GetArraySize(bx), 2);
    assert_int_equal(cJSON_GetArrayItem(bx, 0)->valueint, 256);
    assert_int_equal(cJSON_GetArrayItem(bx, 1)->valueint, 384);
    const cJSON *res = cJSON_GetObjectItem(d, "restrictions");
    assert_string_equal(cJSON_GetArrayItem(res, 0)->valuestring,
                        "block_size_x == 128*(CONSUMER_WG + 1)");
    assert_string_equal(
        cJSON_GetArrayItem(res, 1)->valuestring,
        "BLOCK_M == 64*(1 if PIPELINE == 5 else CONSUMER_WG) and CONSUMER_WG in (1, 2, 3)");
    for (const cJSON *r = res->child; r; r = r->next)
        assert_null(strstr(r->valuestring, "NUM_WARPS"));
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(d, "fasweep"), "family")->valuestring, "wgmma");
    /* The two records are measured entries at their own block_size_x. */
    const cJSON *cache = cJSON_GetObjectItem(d, "cache");
    assert_int_equal(cJSON_GetArraySize(cache), 16 * 2);
    const cJSON *top = cJSON_GetObjectItem(cache, "128,128,2,2,2,384");
    assert_non_null(top);
    assert_null(cJSON_GetObjectItem(top, "__error__"));
    assert_true(cJSON_GetObjectItem(top, "time")->valuedouble == 0.1);
    assert_string_equal(cJSON_GetObjectItem(top, "config_text")->valuestring,
                        "d64.m128.n128.c2.s2.p2");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(top, "ping_pong")));
    const cJSON *other = cJSON_GetObjectItem(cache, "64,64,1,2,1,256");
    assert_null(cJSON_GetObjectItem(other, "__error__"));
    /* The null rule: an unknown clock (-1 in the record) is null, a known
     * one its number, below_threshold 0 stays 0. */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(top, "sm_median_mhz")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(top, "below_threshold")));
    assert_int_equal(cJSON_GetObjectItem(other, "sm_median_mhz")->valueint, 1980);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(other, "below_threshold")));
    assert_int_equal(cJSON_GetObjectItem(other, "below_threshold")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(cache, "128,128,2,2,2,256")->child->next->next->string,
                        "CONSUMER_WG");
    int measured = 0;
    for (const cJSON *e = cache->child; e; e = e->next)
        measured += cJSON_GetObjectItem(e, "time") != NULL;
    assert_int_equal(measured, 2);
    /* A rejected point says its family's reason. */
    const cJSON *rej = cJSON_GetObjectItem(cache, "64,64,2,2,1,384");
    assert_string_equal(cJSON_GetObjectItem(rej, "reason")->valuestring, "warp_rows");
    cJSON_Delete(d);

    /* T4 and T1: the same names; T1's kernel file is the wgmma template. */
    d = export_doc(&g, TUNER_T4);
    const cJSON *cfg = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "results"), 0),
                                           "configuration");
    assert_non_null(cJSON_GetObjectItem(cfg, "CONSUMER_WG"));
    assert_null(cJSON_GetObjectItem(cfg, "NUM_WARPS"));
    cJSON_Delete(d);
    d = export_doc(&g, TUNER_T1);
    const cJSON *spec = cJSON_GetObjectItem(d, "KernelSpecification");
    assert_string_equal(cJSON_GetObjectItem(spec, "KernelFile")->valuestring,
                        "kernels/wgmma/flash_fwd_wgmma.cuh");
    const cJSON *params =
        cJSON_GetObjectItem(cJSON_GetObjectItem(d, "ConfigurationSpace"), "TuningParameters");
    for (int i = 0; i < 6; i++)
        assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(params, i), "Name")->valuestring,
                            wg_keys[i]);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(params, 5), "Values")->valuestring,
                        "[256, 384]");
    const cJSON *conds =
        cJSON_GetObjectItem(cJSON_GetObjectItem(d, "ConfigurationSpace"), "Conditions");
    const cJSON *first = cJSON_GetObjectItem(cJSON_GetArrayItem(conds, 1), "Parameters");
    assert_int_equal(cJSON_GetArraySize(first), 3); /* BLOCK_M, CONSUMER_WG, PIPELINE */
    cJSON_Delete(d);
    group_free(&g);
}

/* A space of another family sweeps wgmma in "families": its wgmma grid,
 * asked for by family, is what the group is laid over; the space's own
 * grid (mma) holds none of the records. */
static void test_wgmma_grid_of_a_mixed_space(void **state)
{
    (void)state;
    cJSON *sp = cJSON_Parse(WG_SPACE);
    assert_non_null(sp);
    cJSON *axes = cJSON_DetachItemFromObject(sp, "axes");
    cJSON_DeleteItemFromObject(sp, "family");
    cJSON *fams = cJSON_AddObjectToObject(sp, "families");
    cJSON *wg = cJSON_AddObjectToObject(fams, "wgmma");
    cJSON_AddItemToObject(wg, "axes", axes);
    cJSON_AddItemToObject(sp, "axes",
                          cJSON_Parse("{\"BLOCK_M\": [64], \"BLOCK_N\": [64], \"NUM_WARPS\": "
                                      "[4], \"STAGES\": [2], \"SWIZZLE\": [1]}"));
    char *text = cJSON_PrintUnformatted(sp);
    cJSON_Delete(sp);
    space s;
    char err[512];
    assert_int_equal(space_parse(text, strlen(text), "mixed.json", &s, err, sizeof err), 0);
    free(text);
    assert_int_equal(s.family, FA_FAMILY_MMA);
    space_grid grid;
    assert_int_equal(group_space_grid(&s, FA_FAMILY_WGMMA, &grid), 0);
    assert_int_equal(grid.family, FA_FAMILY_WGMMA);
    assert_int_equal(group_space_grid(&s, FA_FAMILY_MMA, &grid), 0);
    assert_int_equal(grid.family, FA_FAMILY_MMA);
    group g;
    wg_group(&g, &s, -1); /* the space's own grid: mma, no record stands for a cell */
    assert_int_equal(g.family, FA_FAMILY_MMA);
    assert_int_equal(g.n_cells, 1);
    assert_null(g.cells[0].rec);
    group_free(&g);
    wg_group(&g, &s, FA_FAMILY_WGMMA);
    assert_int_equal(g.family, FA_FAMILY_WGMMA);
    assert_true(g.from_space);
    assert_int_equal(g.n_cells, 16);
    cJSON *d = export_doc(&g, TUNER_KERNEL_TUNER);
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "cache"), "128,128,2,2,2,384"));
    cJSON_Delete(d);
    group_free(&g);
}

/* Without a space the grid is the family most of the records are of, its
 * axes named by that family: a wgmma group's too-wide axis is named
 * CONSUMER_WG (was: mma's grid, which holds no wgmma record). */
static void test_records_family_names_the_axes(void **state)
{
    (void)state;
    group g;
    wg_group(&g, NULL, -1);
    assert_int_equal(g.family, FA_FAMILY_WGMMA);
    assert_false(g.from_space);
    assert_int_equal(g.n_cells, 2 * 2 * 2 * 1 * 2);
    int measured = 0;
    for (size_t i = 0; i < g.n_cells; i++)
        measured += g.cells[i].rec != NULL;
    assert_int_equal(measured, 2);
    group_free(&g);

    memset(&g, 0, sizeof g);
    snprintf(g.problem, sizeof g.problem, "b4.h8.s512.d64.nc");
    g.n_recs = SPACE_MAX_AXIS + 1;
    g.recs = calloc(g.n_recs, sizeof *g.recs);
    assert_non_null(g.recs);
    for (size_t i = 0; i < g.n_recs; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "d64.m128.n128.c%zu.s2.p2", i + 1);
        wg_record(&g.recs[i], cfg, 100);
    }
    assert_int_equal(group_lay_out(&g, NULL), 0);
    assert_int_equal(g.family, FA_FAMILY_WGMMA);
    assert_non_null(strstr(g.no_grid, "more than 16 values of CONSUMER_WG"));
    /* A group with no grid is refused for a tuner, with why. */
    char err[256];
    assert_int_equal(tuner_can_write(&g, err, sizeof err), -1);
    assert_non_null(strstr(err, "CONSUMER_WG"));
    group_free(&g);
}

/* cJSON's allocator failing at the n-th allocation: tuner_write is -1
 * with one message and writes nothing, for every n before the first that
 * lets it finish (the one out-of-memory flag of store/json.h). */
static void test_out_of_memory(void **state)
{
    (void)state;
    space s;
    group g;
    wg_space_group(&s, &g);
    char err[512];
    const tuner_meta m = {"wg", "0123456789abcdef", "test"};
    const tuner_format fmts[3] = {TUNER_KERNEL_TUNER, TUNER_T4, TUNER_T1};
    cJSON_Hooks h = {tu_oom_malloc, free};
    for (int f = 0; f < 3; f++) {
        int failed = 0;
        for (long n = 0;; n++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *o = open_memstream(&buf, &len);
            assert_non_null(o);
            err[0] = '\0';
            cJSON_InitHooks(&h);
            tu_oom.left = n;
            tu_oom.refused = 0;
            const int rc = tuner_write(&g, fmts[f], &m, 1, o, err, sizeof err);
            tu_oom.left = -1;
            cJSON_InitHooks(NULL);
            assert_int_equal(fclose(o), 0);
            if (!tu_oom.refused) {
                assert_int_equal(rc, 0);
                free(buf);
                break;
            }
            assert_int_equal(rc, -1);
            assert_int_equal(len, 0); /* nothing written */
            assert_non_null(strstr(err, "out of memory"));
            free(buf);
            failed++;
        }
        assert_true(failed > 20);
    }
    group_free(&g);
}

TU_MAIN(cmocka_unit_test(test_pyexpr), cmocka_unit_test(test_restrictions_are_check),
        cmocka_unit_test(test_wgmma_kernel_tuner),
        cmocka_unit_test(test_wgmma_grid_of_a_mixed_space),
        cmocka_unit_test(test_records_family_names_the_axes), cmocka_unit_test(test_out_of_memory))
