/* test_rank.c - Top-K ranking and seeds files against a real store: group
 * separation, ordering and tie rules, k edge cases, failed-only groups,
 * baselines and speedups, filters, the table, the JSON form and the seeds
 * files (names, schema fields, atomic writes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "seeds/doc.h"
#include "seeds/rank.h"
#include "seeds/table.h"
#include "seeds/write.h"
#include "store/sha256.h"
#include "store/store.h"
#include "store/text.h"
#include "tests/unit/testjson.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testoom.h"

#define DEV_A "NVIDIA H100 80GB HBM3"
#define DEV_B "NVIDIA L4"
#define PROB_1 "b4.h8.s512.d64.nc"
#define PROB_2 "b16.h16.s2048.d64.nc"
#define BUILD "3f9a0c1d2e4b5a69"

typedef struct fixture {
    char dir[512];
    char path[600];
    store *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || !tu_tmpdir(f->dir, sizeof f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/results.lmdb", f->dir);
    char err[512];
    if (store_open(f->path, 0, &f->s, err, sizeof err) != STORE_OK) {
        fprintf(stderr, "store_open: %s\n", err);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_close(f->s);
    tu_rmtree(f->dir);
    free(f);
    return 0;
}

/* A plausible measured record; tests change what they look at. */
static record rec(const char *dev, const char *prob, const char *cfg, const char *mode,
                  record_kind kind, record_status st, double median, double noise)
{
    record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device, sizeof r.device, "%s", dev);
    snprintf(r.problem, sizeof r.problem, "%s", prob);
    snprintf(r.build, sizeof r.build, "%s", kind == RECORD_KIND_BASELINE ? "baseline" : BUILD);
    snprintf(r.config, sizeof r.config, "%s", cfg);
    snprintf(r.mode, sizeof r.mode, "%s", mode);
    r.kind = kind;
    r.status = st;
    if (st != RECORD_ST_OK)
        snprintf(r.error, sizeof r.error, "%s", "failed the correctness gate");
    r.time.median_us = median;
    r.time.min_us = median * 0.98;
    r.time.mean_us = median * 1.01;
    r.time.stdev_us = median * 0.02;
    r.time.cv = 0.02;
    r.time.noise = noise;
    r.time.samples = 50;
    r.tflops = median > 0 ? 1.0 / median : 0;
    r.gbps = 100;
    r.rel_l2 = 1e-3;
    r.max_abs = 4e-3;
    r.regs = 128;
    r.smem_dynamic = 32768;
    r.max_blocks_per_sm = 2;
    r.cc = 90;
    r.sm_count = 132;
    r.sm_clock_mhz = 1980;
    r.mem_clock_mhz = 2619;
    r.throttled = 0;
    snprintf(r.gpu_uuid, sizeof r.gpu_uuid, "GPU-1234");
    snprintf(r.driver, sizeof r.driver, "550.54.15");
    snprintf(r.runtime, sizeof r.runtime, "12.4");
    snprintf(r.host, sizeof r.host, "node1");
    snprintf(r.space_name, sizeof r.space_name, "h100");
    snprintf(r.space_hash, sizeof r.space_hash, "0123456789abcdef");
    snprintf(r.version, sizeof r.version, "0.1.0");
    r.timestamp = 1732291200; /* 2024-11-22T16:00:00Z */
    return r;
}

static void put(fixture *f, record r)
{
    assert_int_equal(store_put(f->s, &r), STORE_OK);
}

static void put_k(fixture *f, const char *dev, const char *prob, const char *cfg, double median,
                  double noise)
{
    put(f, rec(dev, prob, cfg, "hot", RECORD_KIND_KERNEL, RECORD_ST_OK, median, noise));
}

/* ---- ranking -------------------------------------------------------------------------------- */

/* The Top-k of every group of the fixture's store (the ranking must work). */
static rank_result topk_all(fixture *f, int k)
{
    rank_result r;
    assert_int_equal(rank_topk(f->s, NULL, k, &r), STORE_OK);
    return r;
}

static void test_empty_store(void **state)
{
    fixture *f = *state;
    rank_result r = topk_all(f, 8);
    assert_int_equal(r.n_groups, 0);
    assert_null(r.groups);
    rank_free(&r);
}

static void test_k_must_be_positive(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 10, 0.01);
    rank_result r;
    assert_int_equal(rank_topk(f->s, NULL, 0, &r), STORE_EINVAL);
    assert_int_equal(rank_topk(f->s, NULL, -3, &r), STORE_EINVAL);
}

static void test_order_and_ties(void **state)
{
    fixture *f = *state;
    /* Inserted in key order, which is not speed order. */
    put_k(f, DEV_A, PROB_1, "d64.m128.n64.w4.s2.z1", 50.0, 0.010);
    put_k(f, DEV_A, PROB_1, "d64.m128.n64.w8.s2.z1", 40.0, 0.020); /* tie on median ... */
    put_k(f, DEV_A, PROB_1, "d64.m64.n128.w4.s2.z1", 40.0, 0.005); /* ... lower noise first */
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 30.0, 0.010);  /* full tie with the next */
    put_k(f, DEV_A, PROB_1, "d64.m32.n64.w2.s1.z0", 30.0, 0.010);  /* config text decides */
    rank_result r = topk_all(f, 8);
    assert_int_equal(r.n_groups, 1);
    const rank_group *g = &r.groups[0];
    assert_string_equal(g->device, DEV_A);
    assert_string_equal(g->problem, PROB_1);
    assert_string_equal(g->mode, "hot");
    assert_int_equal(g->n_top, 5);
    assert_int_equal(g->n_ok, 5);
    assert_int_equal(g->n_failed, 0);
    assert_string_equal(g->top[0].config, "d64.m32.n64.w2.s1.z0");
    assert_string_equal(g->top[1].config, "d64.m64.n64.w4.s1.z0");
    assert_string_equal(g->top[2].config, "d64.m64.n128.w4.s2.z1");
    assert_string_equal(g->top[3].config, "d64.m128.n64.w8.s2.z1");
    assert_string_equal(g->top[4].config, "d64.m128.n64.w4.s2.z1");
    assert_int_equal(g->has_baseline, 0);
    rank_free(&r);
}

/* A record of one sample has no noise estimate (NaN). On the same median
 * it ranks after any record with an estimate, whichever the store's scan
 * meets first (keys sort by config text: z0 before z1 here, so the order
 * of arrival is the wrong one). */
static void test_nan_noise_order(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 30.0, NAN);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z1", 30.0, 0.010);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s2.z0", 20.0, NAN);
    rank_result r = topk_all(f, 8);
    const rank_group *g = &r.groups[0];
    assert_int_equal(g->n_top, 3);
    assert_string_equal(g->top[0].config, "d64.m64.n64.w4.s2.z0"); /* faster: noise unused */
    assert_string_equal(g->top[1].config, "d64.m64.n64.w4.s1.z1");
    assert_string_equal(g->top[2].config, "d64.m64.n64.w4.s1.z0");
    rank_free(&r);
}

/* k smaller than the count keeps exactly the k best, whatever the order
 * they arrive in; a huge k allocates only what exists. */
static void test_k_limits(void **state)
{
    fixture *f = *state;
    const double med[6] = {17, 11, 15, 12, 19, 13};
    for (int i = 0; i < 6; i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "d64.m64.n64.w4.s%d.z0", i + 1);
        put_k(f, DEV_A, PROB_1, cfg, med[i], 0.01);
    }
    rank_result r = topk_all(f, 3);
    assert_int_equal(r.groups[0].n_top, 3);
    assert_int_equal(r.groups[0].n_ok, 6);
    assert_true(r.groups[0].top[0].time.median_us == 11);
    assert_true(r.groups[0].top[1].time.median_us == 12);
    assert_true(r.groups[0].top[2].time.median_us == 13);
    rank_free(&r);

    assert_int_equal(rank_topk(f->s, NULL, 1, &r), STORE_OK);
    assert_int_equal(r.groups[0].n_top, 1);
    assert_string_equal(r.groups[0].top[0].config, "d64.m64.n64.w4.s2.z0");
    rank_free(&r);

    assert_int_equal(rank_topk(f->s, NULL, INT_MAX, &r), STORE_OK);
    assert_int_equal(r.groups[0].n_top, 6);
    for (int i = 1; i < 6; i++)
        assert_true(r.groups[0].top[i - 1].time.median_us < r.groups[0].top[i].time.median_us);
    rank_free(&r);
}

/* The ranking order the heap must give back (rank.h): record_rank_order,
 * then build. */
static int ref_order(const void *pa, const void *pb)
{
    const record *a = pa, *b = pb;
    const int c = record_rank_order(a->time.median_us, a->time.noise, a->config, b->time.median_us,
                                    b->time.noise, b->config);
    return c ? c : strcmp(a->build, b->build);
}

/* The k best by the heap (O(n log k)) are the first k of a full sort, for
 * every k around the edges: medians with many ties (then noise, then
 * config, then build decide), arriving in a scrambled order. */
static void test_topk_heap_matches_sort(void **state)
{
    fixture *f = *state;
    enum { N = 300 };
    record *all = calloc(N, sizeof *all);
    assert_non_null(all);
    for (int i = 0; i < N; i++) {
        const int x = (i * 7919) % N;
        char cfg[64];
        snprintf(cfg, sizeof cfg, "d64.m64.n64.w4.s%d.z%d", x % 4 + 1, x % 2);
        all[i] = rec(DEV_A, PROB_1, cfg, "hot", RECORD_KIND_KERNEL, RECORD_ST_OK, 10 + x % 17,
                     0.01 * (x % 3));
        snprintf(all[i].build, sizeof all[i].build, "%016x", 0x10000000u + (unsigned)x);
        put(f, all[i]);
    }
    qsort(all, N, sizeof *all, ref_order);
    const int ks[] = {1, 2, 7, 64, N - 1, N, N + 1, INT_MAX};
    for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
        rank_result r;
        assert_int_equal(rank_topk(f->s, NULL, ks[t], &r), STORE_OK);
        assert_int_equal(r.n_groups, 1);
        const int want = ks[t] < N ? ks[t] : N;
        assert_int_equal(r.groups[0].n_top, want);
        for (int i = 0; i < want; i++) {
            assert_string_equal(r.groups[0].top[i].build, all[i].build);
            assert_string_equal(r.groups[0].top[i].config, all[i].config);
        }
        rank_free(&r);
    }
    free(all);
}

/* Records of edited kernels (build src-HASH) are counted, not ranked,
 * unless the filter asks for them; then they rank beside the instances. */
static void test_variants_only_when_asked(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    record v = rec(DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", "hot", RECORD_KIND_KERNEL, RECORD_ST_OK,
                   10, 0.01);
    snprintf(v.build, sizeof v.build, "src-0123456789abcdef");
    snprintf(v.kernel_hash, sizeof v.kernel_hash, "0123456789abcdef"); /* a variant's provenance */
    snprintf(v.kernel_path, sizeof v.kernel_path, "/work/k.cuh");
    put(f, v);
    rank_result r;
    assert_int_equal(rank_topk(f->s, NULL, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 1);
    assert_int_equal(r.groups[0].n_top, 1);
    assert_int_equal(r.groups[0].n_variants, 1);
    assert_string_equal(r.groups[0].top[0].build, BUILD);
    rank_free(&r);
    rank_filter flt = {.variants = 1};
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.groups[0].n_top, 2);
    assert_int_equal(r.groups[0].n_variants, 0);
    assert_string_equal(r.groups[0].top[0].build, "src-0123456789abcdef");
    cJSON *doc = doc_json(&r);
    const cJSON *seeds =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "groups"), 0), "seeds");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(seeds, 0), "variant")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(seeds, 1), "variant")));
    cJSON_Delete(doc);
    rank_free(&r);
}

/* Devices, problems and modes never mix; groups come sorted. */
static void test_groups_and_filters(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_B, PROB_1, "d64.m64.n64.w4.s1.z0", 90, 0.01);
    put_k(f, DEV_A, PROB_2, "d64.m64.n64.w4.s1.z0", 900, 0.01);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s2.z0", 25, 0.01);
    put(f, rec(DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", "cold", RECORD_KIND_KERNEL, RECORD_ST_OK, 5,
               0.01));

    rank_result r;
    /* No mode: every mode, one group each, in the table's order (hot, cold). */
    assert_int_equal(rank_topk(f->s, NULL, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 4);
    assert_string_equal(r.groups[0].device, DEV_A);
    assert_string_equal(r.groups[0].problem, PROB_2); /* "b16..." < "b4..." */
    assert_string_equal(r.groups[1].device, DEV_A);
    assert_string_equal(r.groups[1].problem, PROB_1);
    assert_string_equal(r.groups[1].mode, "hot");
    assert_int_equal(r.groups[1].n_top, 2); /* the cold record is not here */
    assert_true(r.groups[1].top[0].time.median_us == 20);
    assert_string_equal(r.groups[2].problem, PROB_1);
    assert_string_equal(r.groups[2].mode, "cold");
    assert_int_equal(r.groups[2].n_top, 1);
    assert_true(r.groups[2].top[0].time.median_us == 5);
    assert_string_equal(r.groups[3].device, DEV_B);
    rank_free(&r);

    rank_filter hot = {.mode = "hot"};
    assert_int_equal(rank_topk(f->s, &hot, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 3);
    assert_string_equal(r.groups[1].mode, "hot");
    rank_free(&r);

    rank_filter flt = {.mode = "cold"};
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 1);
    assert_string_equal(r.groups[0].mode, "cold");
    assert_true(r.groups[0].top[0].time.median_us == 5);
    rank_free(&r);

    flt = (rank_filter){.device = DEV_A, .mode = "hot"};
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 2);
    rank_free(&r);

    flt = (rank_filter){.device = DEV_A, .problem = PROB_1, .mode = "hot"};
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 1);
    assert_string_equal(r.groups[0].problem, PROB_1);
    rank_free(&r);

    flt = (rank_filter){.problem = PROB_1, .mode = "hot"}; /* both devices */
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 2);
    assert_string_equal(r.groups[0].device, DEV_A);
    assert_string_equal(r.groups[1].device, DEV_B);
    rank_free(&r);

    /* A device that is a prefix of another's name is not that device. */
    flt = (rank_filter){.device = "NVIDIA"};
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 0);
    rank_free(&r);
}

static void test_failed_and_baselines(void **state)
{
    fixture *f = *state;
    /* Group 1: only failures (a slow "wrong" record is still not ranked). */
    put(f, rec(DEV_A, PROB_2, "d64.m64.n64.w4.s1.z0", "hot", RECORD_KIND_KERNEL, RECORD_ST_WRONG, 1,
               0.01));
    put(f, rec(DEV_A, PROB_2, "d64.m64.n64.w4.s2.z0", "hot", RECORD_KIND_KERNEL, RECORD_ST_CRASHED,
               0, 0));
    put(f, rec(DEV_A, PROB_2, "d64.m64.n64.w4.s3.z0", "hot", RECORD_KIND_KERNEL, RECORD_ST_TIMEOUT,
               0, 0));
    /* Group 2: ok kernels, a failed kernel and three baselines. */
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 40, 0.01);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s2.z1", 20, 0.01);
    put(f, rec(DEV_A, PROB_1, "d64.m64.n64.w4.s3.z1", "hot", RECORD_KIND_KERNEL, RECORD_ST_WRONG, 5,
               0.01));
    put(f, rec(DEV_A, PROB_1, "sdpa-flash", "hot", RECORD_KIND_BASELINE, RECORD_ST_OK, 30, 0.01));
    put(f,
        rec(DEV_A, PROB_1, "sdpa-efficient", "hot", RECORD_KIND_BASELINE, RECORD_ST_OK, 80, 0.01));
    put(f, rec(DEV_A, PROB_1, "broken_baseline", "hot", RECORD_KIND_BASELINE, RECORD_ST_CRASHED, 1,
               0.01));

    rank_result r = topk_all(f, 8);
    assert_int_equal(r.n_groups, 2);
    const rank_group *g1 = &r.groups[0], *g2 = &r.groups[1];
    assert_string_equal(g1->problem, PROB_2);
    assert_int_equal(g1->n_top, 0);
    assert_int_equal(g1->n_ok, 0);
    assert_int_equal(g1->n_failed, 3);
    assert_int_equal(g1->has_baseline, 0);

    assert_int_equal(g2->n_top, 2); /* baselines are not ranked */
    assert_int_equal(g2->n_ok, 2);
    assert_int_equal(g2->n_failed, 1);
    assert_string_equal(g2->top[0].config, "d64.m64.n64.w4.s2.z1");
    assert_int_equal(g2->has_baseline, 1);
    assert_string_equal(g2->best_baseline.config, "sdpa-flash");

    /* The table: header, both rows, speedups 30/20 and 30/40. */
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    table_print(&r, out);
    fclose(out);
    assert_non_null(strstr(buf, "no ok kernel results (3 failed)"));
    assert_non_null(strstr(buf, "2 ok, 1 failed | best baseline: sdpa-flash 30.00 us"));
    assert_non_null(strstr(buf, "1.50x"));
    assert_non_null(strstr(buf, "0.75x"));
    assert_null(strstr(buf, "d64.m64.n64.w4.s3.z1"));
    char *row1 = strstr(buf, "d64.m64.n64.w4.s2.z1");
    char *row2 = strstr(buf, "d64.m64.n64.w4.s1.z0");
    assert_true(row1 && row2 && row1 < row2);
    free(buf);
    rank_free(&r);
}

static void test_no_baseline_dash(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_B, PROB_1, "d64.m64.n64.w4.s1.z0", 40, 0.01);
    rank_result r = topk_all(f, 8);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    table_print(&r, out);
    fclose(out);
    assert_non_null(strstr(buf, "best baseline: none"));
    /* The last column of the only row is "-". */
    char *row = strstr(buf, "d64.m64.n64.w4.s1.z0");
    assert_non_null(row);
    char *eol = strchr(row, '\n');
    assert_non_null(eol);
    assert_true(eol[-1] == '-' && eol[-2] == ' ');
    free(buf);
    rank_free(&r);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* doc_json's document as `topk --json` prints it (cli/emit.c), read back. */
static cJSON *print_json(const rank_result *r)
{
    char *buf = tu_json_text(doc_json(r), 1);
    cJSON *j = cJSON_Parse(buf);
    cJSON_free(buf);
    assert_non_null(j);
    return j;
}

static void test_json(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m128.n64.w4.s2.z1", 20, 0.01);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 40, 0.01);
    put(f, rec(DEV_A, PROB_1, "sdpa-flash", "hot", RECORD_KIND_BASELINE, RECORD_ST_OK, 30, 0.01));
    put(f, rec(DEV_B, PROB_2, "d64.m64.n64.w4.s1.z0", "hot", RECORD_KIND_KERNEL, RECORD_ST_CRASHED,
               0, 0));
    rank_result r = topk_all(f, 8);
    cJSON *j = print_json(&r);
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(j, "groups");
    assert_int_equal(cJSON_GetArraySize(groups), 2);
    const cJSON *g = cJSON_GetArrayItem(groups, 0);
    assert_string_equal(cJSON_GetObjectItem(g, "device")->valuestring, DEV_A);
    const cJSON *seeds = cJSON_GetObjectItem(g, "seeds");
    assert_int_equal(cJSON_GetArraySize(seeds), 2);
    const cJSON *s0 = cJSON_GetArrayItem(seeds, 0);
    assert_int_equal(cJSON_GetObjectItem(s0, "rank")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(s0, "config"), "BLOCK_M")->valueint,
                     128);
    const cJSON *m = cJSON_GetObjectItem(s0, "metrics");
    assert_true(cJSON_GetObjectItem(m, "speedup_vs_baseline")->valuedouble == 1.5);
    const cJSON *b = cJSON_GetObjectItem(g, "baseline");
    assert_string_equal(cJSON_GetObjectItem(b, "name")->valuestring, "sdpa-flash");

    const cJSON *g2 = cJSON_GetArrayItem(groups, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(g2, "baseline")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g2, "seeds")), 0);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(g2, "counts"), "failed")->valueint, 1);
    cJSON_Delete(j);
    rank_free(&r);
}

/* ---- seeds files ---------------------------------------------------------------------------- */

static cJSON *read_json(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return cJSON_Parse(buf);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail_msg("missing key %s", key);
    return v;
}

/* Every key of keys (NULL-ended) is in o, of the type is checks. */
static void expect_keys(const cJSON *o, const char *const *keys, cJSON_bool (*is)(const cJSON *))
{
    for (; *keys; keys++)
        assert_true(is(get(o, *keys)));
}

static void check_seed_entry(const cJSON *e)
{
    static const char *const objs[] = {"config", "metrics",    "errors", "resources",
                                       "cycles", "provenance", NULL};
    static const char *const cfg[] = {"BLOCK_M", "BLOCK_N",  "NUM_WARPS", "STAGES",
                                      "SWIZZLE", "HEAD_DIM", NULL};
    static const char *const met[] = {"median_us", "min_us",  "mean_us", "stdev_us", "cv",
                                      "noise",     "samples", "tflops",  "gbps",     NULL};
    static const char *const res[] = {"regs",        "smem_static",       "smem_dynamic",
                                      "local_bytes", "max_blocks_per_sm", NULL};
    static const char *const prov[] = {
        "build", "kernel_source", "space_name", "space_hash", "timestamp",
        "host",  "gpu_uuid",      "driver",     "runtime",    NULL};
    expect_keys(e, objs, cJSON_IsObject);
    expect_keys(get(e, "config"), cfg, cJSON_IsNumber);
    expect_keys(get(e, "metrics"), met, cJSON_IsNumber);
    expect_keys(get(e, "resources"), res, cJSON_IsNumber);
    expect_keys(get(e, "provenance"), prov, cJSON_IsString);
    get(get(e, "metrics"), "speedup_vs_baseline");
    assert_true(cJSON_IsNumber(get(get(e, "provenance"), "cc")));
    assert_string_equal(get(get(e, "provenance"), "kernel_source")->valuestring,
                        "kernels/mma/flash_fwd.cuh");
    assert_string_equal(get(get(e, "provenance"), "timestamp")->valuestring,
                        "2024-11-22T16:00:00Z");
    assert_true(cJSON_IsString(get(e, "config_text")));
}

static void test_seeds_write(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m128.n64.w4.s2.z1", 20, 0.01);
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 40, 0.01);
    put(f, rec(DEV_A, PROB_1, "sdpa-flash", "hot", RECORD_KIND_BASELINE, RECORD_ST_OK, 30, 0.01));
    put_k(f, DEV_B, "b1.h2.s200.d128.c", "d128.m64.n64.w4.s1.z1", 70, 0.01);
    rank_result r = topk_all(f, 8);

    char dir[700], err[512];
    snprintf(dir, sizeof dir, "%s/out/seeds", f->dir); /* parents are created too */
    char *buf = NULL;
    size_t len = 0;
    FILE *paths = open_memstream(&buf, &len);
    assert_int_equal(write_seeds(&r, dir, paths, err, sizeof err), 0);
    fclose(paths);
    assert_int_equal(count_files(dir), 2); /* and no temp file left behind */

    char p1[800], p2[800];
    snprintf(p1, sizeof p1, "%s/nvidia-h100-80gb-hbm3_b4.h8.s512.d64.nc_hot.json", dir);
    snprintf(p2, sizeof p2, "%s/nvidia-l4_b1.h2.s200.d128.c_hot.json", dir);
    assert_non_null(strstr(buf, p1));
    assert_non_null(strstr(buf, p2));
    free(buf);

    cJSON *j = read_json(p1);
    assert_non_null(j);
    assert_string_equal(get(j, "schema")->valuestring, "fasweep.seeds/1");
    const char *gen = get(j, "generated_at")->valuestring;
    assert_int_equal(strlen(gen), 20);
    assert_true(gen[4] == '-' && gen[10] == 'T' && gen[19] == 'Z');
    assert_true(cJSON_IsString(get(j, "fasweep_version")));
    assert_string_equal(get(j, "device")->valuestring, DEV_A);
    assert_string_equal(get(j, "mode")->valuestring, "hot");
    const cJSON *pr = get(j, "problem");
    assert_string_equal(get(pr, "text")->valuestring, PROB_1);
    assert_int_equal(get(pr, "batch")->valueint, 4);
    assert_int_equal(get(pr, "heads")->valueint, 8);
    assert_int_equal(get(pr, "seq_len")->valueint, 512);
    assert_int_equal(get(pr, "head_dim")->valueint, 64);
    assert_true(cJSON_IsFalse(get(pr, "causal")));
    assert_string_equal(get(pr, "dtype")->valuestring, "fp16");
    assert_int_equal(get(pr, "kv_heads")->valueint, 8); /* a text without .kv: the heads */
    assert_true(get(get(j, "baseline"), "median_us")->valuedouble == 30);
    const cJSON *seeds = get(j, "seeds");
    assert_int_equal(cJSON_GetArraySize(seeds), 2);
    check_seed_entry(cJSON_GetArrayItem(seeds, 0));
    check_seed_entry(cJSON_GetArrayItem(seeds, 1));
    assert_string_equal(get(cJSON_GetArrayItem(seeds, 1), "config_text")->valuestring,
                        "d64.m64.n64.w4.s1.z0");
    cJSON_Delete(j);

    j = read_json(p2);
    assert_non_null(j);
    assert_true(cJSON_IsTrue(get(get(j, "problem"), "causal")));
    assert_true(cJSON_IsNull(get(j, "baseline")));
    const cJSON *m = get(cJSON_GetArrayItem(get(j, "seeds"), 0), "metrics");
    assert_true(cJSON_IsNull(get(m, "speedup_vs_baseline")));
    cJSON_Delete(j);

    /* Writing again replaces the files in place. */
    assert_int_equal(write_seeds(&r, dir, NULL, err, sizeof err), 0);
    assert_int_equal(count_files(dir), 2);
    rank_free(&r);
}

/* The one file name under a fresh directory after writing the seeds of
 * one group alone (a ranking of that group only), as a path under dir. */
static void seed_path_alone(fixture *f, const char *dev, const char *prob, const char *dir,
                            char *path, size_t n)
{
    char sub[560], err[512];
    snprintf(sub, sizeof sub, "%s/alone", f->dir);
    tu_rmtree(sub);
    rank_filter flt = {dev, prob, NULL, 0};
    rank_result r;
    assert_int_equal(rank_topk(f->s, &flt, 8, &r), STORE_OK);
    assert_int_equal(r.n_groups, 1);
    assert_int_equal(write_seeds(&r, sub, NULL, err, sizeof err), 0);
    rank_free(&r);
    assert_int_equal(count_files(sub), 1);
    DIR *d = opendir(sub);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.' && snprintf(path, n, "%s/%s", dir, e->d_name) >= (int)n)
            fail_msg("path too long");
    closedir(d);
}

/* Device names that slug alike: written alone, each gets the plain name
 * (no hash: seeds/README.md's rule); written in one run, each gets the
 * plain name with its group's hash, so none is lost. Odd bytes never make
 * a path leave the directory. */
static void test_seeds_names(void **state)
{
    fixture *f = *state;
    put_k(f, "GPU x", PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    put_k(f, "gpu-X", PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    put_k(f, "GPU X", PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    put_k(f, "../../etc", "../x/y", "d64.m64.n64.w4.s1.z0", 20, 0.01);
    rank_result r = topk_all(f, 8);
    assert_int_equal(r.n_groups, 4);
    char dir[700], err[512];
    snprintf(dir, sizeof dir, "%s/seeds", f->dir);
    assert_int_equal(write_seeds(&r, dir, NULL, err, sizeof err), 0);
    rank_free(&r);
    assert_int_equal(count_files(dir), 4);
    const char *devs[] = {"GPU x", "gpu-X", "GPU X"};
    struct stat st;
    for (int i = 0; i < 3; i++) {
        /* Written together: gpu-x_PROBLEM_hot_HASH.json, the hash FNV-1a 64
         * of "DEVICE|PROBLEM|MODE". */
        char id[128], p[900];
        snprintf(id, sizeof id, "%s|%s|hot", devs[i], PROB_1);
        snprintf(p, sizeof p, "%s/gpu-x_" PROB_1 "_hot_%016llx.json", dir,
                 (unsigned long long)text_fnv1a(TEXT_FNV_INIT, id, strlen(id)));
        assert_int_equal(stat(p, &st), 0);
        cJSON *j = read_json(p);
        assert_non_null(j);
        assert_string_equal(get(j, "device")->valuestring, devs[i]);
        cJSON_Delete(j);
        /* Alone: the plain name. */
        char alone[1100];
        seed_path_alone(f, devs[i], PROB_1, dir, alone, sizeof alone);
        assert_non_null(strstr(alone, "/seeds/gpu-x_" PROB_1 "_hot.json"));
    }
    char p[900];
    snprintf(p, sizeof p, "%s/etc_..-x-y_hot.json", dir);
    assert_int_equal(stat(p, &st), 0);
    /* The bad problem text gives null numbers, not made-up ones. */
    cJSON *j = read_json(p);
    assert_non_null(j);
    assert_string_equal(get(j, "device")->valuestring, "../../etc");
    assert_true(cJSON_IsNull(get(get(j, "problem"), "batch")));
    cJSON_Delete(j);
}

/* A file of another group under a group's name is never overwritten. */
static void test_seeds_other_group(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    rank_result r = topk_all(f, 8);
    char dir[700], path[800], err[512];
    snprintf(dir, sizeof dir, "%s/seeds", f->dir);
    assert_int_equal(write_seeds(&r, dir, NULL, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/nvidia-h100-80gb-hbm3_b4.h8.s512.d64.nc_hot.json", dir);
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    fputs("{\"device\": \"NVIDIA L4\", \"problem\": {\"text\": \"" PROB_1
          "\"}, \"mode\": \"hot\"}\n",
          o);
    fclose(o);
    assert_int_equal(write_seeds(&r, dir, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "holds the seeds of NVIDIA L4"));
    rank_free(&r);
}

static void test_seeds_dir_error(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    rank_result r = topk_all(f, 8);
    char file[700], err[512] = "";
    snprintf(file, sizeof file, "%s/plainfile", f->dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(write_seeds(&r, file, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, file));
    rank_free(&r);

    /* No groups: nothing to write, no directory made. */
    rank_result empty = {0};
    char dir[700];
    snprintf(dir, sizeof dir, "%s/never", f->dir);
    assert_int_equal(write_seeds(&empty, dir, NULL, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);
}

/* A test that gets a fresh store (fixture *). */
/* SHA-256 against the FIPS 180-4 examples (one block, two blocks). */
static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[SHA256_HEX_LEN];
    sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A small file's text (caller frees), or NULL. */
static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "r");
    char *buf = fp ? calloc(1, 1 << 16) : NULL;
    if (buf)
        fread(buf, 1, (1 << 16) - 1, fp);
    if (fp)
        fclose(fp);
    return buf;
}

static const char *fake_template(const char *header)
{
    return strcmp(header, "kernels/mma/flash_fwd.cuh") == 0 ? "TEMPLATE BODY\n" : NULL;
}

/* --emit-source: one file per seed, the tag line eval reads first, then
 * the template; the seed names the file and the template's SHA-256. */
static void test_sources_written(void **state)
{
    fixture *f = *state;
    put_k(f, DEV_A, PROB_1, "d64.m64.n64.w4.s1.z0", 20, 0.01);
    char dir[600], err[512], path[900];
    snprintf(dir, sizeof dir, "%s/src", f->dir);
    rank_result r;
    assert_int_equal(rank_topk(f->s, NULL, 8, &r), STORE_OK);
    const rank_sources src = {.template_text = fake_template, .build = BUILD, .dir = dir};
    r.src = &src;
    assert_int_equal(write_sources(&r, NULL, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/nvidia-h100-80gb-hbm3_%s_hot.1.cuh", dir, PROB_1);
    char *text = read_text(path);
    assert_non_null(text);
    char want[256];
    snprintf(want, sizeof want, "// fasweep: problem=%s config=d64.m64.n64.w4.s1.z0 mode=hot\n",
             PROB_1);
    assert_memory_equal(text, want, strlen(want));
    assert_non_null(strstr(text, "\nTEMPLATE BODY\n"));
    free(text);
    cJSON *doc = doc_json(&r);
    const cJSON *seed = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "groups"), 0), "seeds"), 0);
    const cJSON *so = cJSON_GetObjectItem(seed, "source");
    char hex[SHA256_HEX_LEN];
    sha256_hex("TEMPLATE BODY\n", 14, hex);
    assert_string_equal(cJSON_GetObjectItem(so, "sha256")->valuestring, hex);
    assert_string_equal(cJSON_GetObjectItem(so, "file")->valuestring, path);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(so, "same_build")));
    cJSON_Delete(doc);
    rank_free(&r);
}

/* ---- the tie as yes / no / unknown, the null rule, out of memory ---------------------------- */

static void put_ci(fixture *f, const char *cfg, double median, double lo, double hi)
{
    record r = rec(DEV_A, PROB_1, cfg, "hot", RECORD_KIND_KERNEL, RECORD_ST_OK, median, 0.01);
    r.time.ci_lo_us = lo;
    r.time.ci_hi_us = hi;
    put(f, r);
}

/* The four rows of one group: rank 1 with an interval, a tie (yes), a
 * difference (no), and one without an interval (unknown: never a tie). */
static rank_result tie_group(fixture *f)
{
    put_ci(f, "d64.m128.n64.w4.s2.z1", 20.0, 19.9, 20.1);
    put_ci(f, "d64.m64.n64.w4.s1.z0", 20.1, 20.0, 20.2);
    put_ci(f, "d64.m64.n32.w4.s2.z1", 30.0, 29.9, 30.1);
    put_k(f, DEV_A, PROB_1, "d64.m128.n64.w8.s2.z1", 40.0, 0.01); /* no interval */
    return topk_all(f, 8);
}

static void test_tie_table(void **state)
{
    fixture *f = *state;
    rank_result r = tie_group(f);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    table_print(&r, out);
    fclose(out);
    const char *rows[4] = {"d64.m128.n64.w4.s2.z1", "d64.m64.n64.w4.s1.z0", "d64.m64.n32.w4.s2.z1",
                           "d64.m128.n64.w8.s2.z1"};
    const char *want[4] = {NULL, " yes ", " no ", " unknown "};
    for (int i = 0; i < 4; i++) {
        char *row = strstr(buf, rows[i]);
        assert_non_null(row);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(row, "\n"), row);
        if (want[i])
            assert_non_null(strstr(line, want[i]));
        else
            assert_null(strstr(line, " yes ") ? line : strstr(line, " unknown "));
    }
    assert_non_null(strstr(buf, "its tie is unknown"));
    free(buf);
    rank_free(&r);
}

static void test_tie_json_and_nulls(void **state)
{
    fixture *f = *state;
    rank_result r = tie_group(f);
    cJSON *j = print_json(&r);
    const cJSON *seeds = get(cJSON_GetArrayItem(get(j, "groups"), 0), "seeds");
    assert_int_equal(cJSON_GetArraySize(seeds), 4);
    assert_true(cJSON_IsFalse(get(cJSON_GetArrayItem(seeds, 0), "tie_with_first")));
    assert_true(cJSON_IsTrue(get(cJSON_GetArrayItem(seeds, 1), "tie_with_first")));
    assert_true(cJSON_IsFalse(get(cJSON_GetArrayItem(seeds, 2), "tie_with_first")));
    /* no interval: unknown is null, not a tie */
    const cJSON *e = cJSON_GetArrayItem(seeds, 3);
    assert_true(cJSON_IsNull(get(e, "tie_with_first")));
    /* the record's names (store/record.c): cycles.cta_mean, no second name
     * for local_bytes */
    const cJSON *cy = get(e, "cycles");
    get(cy, "cta_mean");
    get(cy, "cta_max");
    assert_null(cJSON_GetObjectItem(cy, "cta_cycles_mean"));
    assert_null(cJSON_GetObjectItem(get(e, "resources"), "spill_bytes"));
    cJSON_Delete(j);
    rank_free(&r);
}

/* Unknown is null (the record's -1 sentinels, NaN), a measured 0 stays 0. */
static void test_null_rule(void **state)
{
    fixture *f = *state;
    record a = rec(DEV_A, PROB_1, "d64.m128.n64.w4.s2.z1", "hot", RECORD_KIND_KERNEL, RECORD_ST_OK,
                   20, 0.01);
    a.rel_l2 = 0; /* exact */
    a.max_abs = 0;
    a.sm_clock_mhz = a.mem_clock_mhz = a.throttled = -1;
    a.cta_cycles_mean = a.cta_cycles_max = NAN;
    a.clock.below = -1;
    put(f, a);
    rank_result r = topk_all(f, 8);
    cJSON *j = print_json(&r);
    const cJSON *e = cJSON_GetArrayItem(get(cJSON_GetArrayItem(get(j, "groups"), 0), "seeds"), 0);
    const cJSON *er = get(e, "errors");
    assert_true(cJSON_IsNumber(get(er, "rel_l2")) && get(er, "rel_l2")->valuedouble == 0);
    assert_true(cJSON_IsNumber(get(er, "max_abs")) && get(er, "max_abs")->valuedouble == 0);
    const cJSON *p = get(e, "provenance");
    assert_true(cJSON_IsNull(get(p, "sm_clock_mhz")));
    assert_true(cJSON_IsNull(get(p, "mem_clock_mhz")));
    assert_true(cJSON_IsNull(get(p, "throttled")));
    assert_true(cJSON_IsNull(get(get(e, "cycles"), "cta_mean")));
    assert_true(cJSON_IsNull(get(get(e, "clock"), "below_threshold")));
    cJSON_Delete(j);
    rank_free(&r);
}

/* cJSON's allocator failing at the n-th allocation: doc_json is NULL (no
 * partial document, nothing leaked under ASan) for every n before the
 * first that lets it finish. */
static void test_json_out_of_memory(void **state)
{
    fixture *f = *state;
    rank_result r = tie_group(f);
    cJSON_Hooks hooks = {tu_oom_malloc, free};
    cJSON_InitHooks(&hooks);
    int failed = 0;
    for (long n = 0;; n++) {
        tu_oom.left = n;
        tu_oom.refused = 0;
        cJSON *doc = doc_json(&r);
        const int hit = tu_oom.refused; /* the n-th allocation was refused */
        tu_oom.left = -1;
        if (!doc) {
            assert_true(hit);
            failed++;
            continue;
        }
        cJSON_Delete(doc);
        if (!hit)
            break; /* built with every allocation granted */
        fail_msg("doc_json returned a document after allocation %ld failed", n);
    }
    cJSON_InitHooks(NULL);
    assert_true(failed > 50);
    rank_free(&r);
}

#define RANK_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        RANK_TEST(test_empty_store),
        RANK_TEST(test_k_must_be_positive),
        RANK_TEST(test_order_and_ties),
        RANK_TEST(test_nan_noise_order),
        RANK_TEST(test_k_limits),
        RANK_TEST(test_topk_heap_matches_sort),
        RANK_TEST(test_groups_and_filters),
        RANK_TEST(test_variants_only_when_asked),
        RANK_TEST(test_sources_written),
        cmocka_unit_test(test_sha256_vectors),
        RANK_TEST(test_failed_and_baselines),
        RANK_TEST(test_no_baseline_dash),
        RANK_TEST(test_json),
        RANK_TEST(test_tie_table),
        RANK_TEST(test_tie_json_and_nulls),
        RANK_TEST(test_null_rule),
        RANK_TEST(test_json_out_of_memory),
        RANK_TEST(test_seeds_write),
        RANK_TEST(test_seeds_names),
        RANK_TEST(test_seeds_other_group),
        RANK_TEST(test_seeds_dir_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
