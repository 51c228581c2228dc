/* rank.c - Top-K per (device, problem, mode) group, its table and JSON
 * forms, and the seeds files and standalone sources (format: docs/seeds.md).
 *
 * One store scan fills the groups. Each group keeps only its k best records
 * (a heap grown on demand, never more than k long, sorted at the end), so
 * memory stays bounded by groups * k however large the store is, and a
 * group of n records costs O(n log k) whatever k is.
 */
#include "rank.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cJSON.h>

#include "../kernels/family.h"
#include "../store/file.h"
#include "../store/mode.h"
#include "../store/sha256.h"
#include "../store/json.h"
#include "../store/text.h"
#include "group.h"
#include "../grid/plan.h"
#include "../grid/space.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

#define RANK_SEEDS_SCHEMA "fasweep.seeds/1"
#define RANK_TOPK_SCHEMA "fasweep.topk/1"
/* The largest edited kernel a seed carries (its source is embedded). */
#define RANK_VARIANT_MAX ((size_t)4 << 20)

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
    rank_result *res;
    int cap_groups;
    rank_heap *heaps; /* one per group */
    int rc;           /* first error met inside the visitor */
} rank_scan;

/* The group of r, created when new. NULL when out of memory. */
static rank_group *rank_group_of(rank_scan *sc, const record *r)
{
    rank_result *res = sc->res;
    /* Records arrive in key order, so the match is almost always the last. */
    for (int i = res->n_groups - 1; i >= 0; i--) {
        rank_group *g = &res->groups[i];
        if (strcmp(g->device, r->device) == 0 && strcmp(g->problem, r->problem) == 0 &&
            strcmp(g->mode, r->mode) == 0)
            return g;
    }
    if (res->n_groups == sc->cap_groups) {
        const int cap = sc->cap_groups ? 2 * sc->cap_groups : 8;
        rank_group *ng = realloc(res->groups, (size_t)cap * sizeof *ng);
        if (!ng)
            return NULL;
        res->groups = ng;
        rank_heap *nh = realloc(sc->heaps, (size_t)cap * sizeof *nh);
        if (!nh)
            return NULL;
        sc->heaps = nh;
        sc->cap_groups = cap;
    }
    rank_group *g = &res->groups[res->n_groups];
    memset(g, 0, sizeof *g);
    snprintf(g->device, sizeof g->device, "%s", r->device);
    snprintf(g->problem, sizeof g->problem, "%s", r->problem);
    snprintf(g->mode, sizeof g->mode, "%s", r->mode);
    sc->heaps[res->n_groups] = (rank_heap){0};
    res->n_groups++;
    return g;
}

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
    rank_group *g = rank_group_of(sc, r);
    if (!g) {
        sc->rc = STORE_ENOMEM;
        return 1;
    }
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
    if (rank_offer(sc, g, &sc->heaps[g - sc->res->groups], r) != 0) {
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
    rank_scan sc = {.f = f, .mode = mode, .k = k, .res = out};
    char prefix[RECORD_KEY_LEN];
    group_key_prefix(f ? f->device : NULL, f ? f->problem : NULL, prefix, sizeof prefix);
    int rc = store_scan(s, prefix, rank_visit, &sc);
    if (rc == STORE_OK)
        rc = sc.rc;
    for (int i = 0; i < out->n_groups; i++) {
        if (rc == STORE_OK)
            rank_finish(&out->groups[i], &sc.heaps[i]);
        free(sc.heaps[i].ix);
    }
    free(sc.heaps);
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

/* ---- human table ---------------------------------------------------------------------------- */

/* Speedup of r over the group's best baseline, or 0 when there is none. */
static double rank_speedup(const rank_group *g, const record *r)
{
    if (!g->has_baseline || r->time.median_us <= 0 || g->best_baseline.time.median_us <= 0)
        return 0;
    return g->best_baseline.time.median_us / r->time.median_us;
}

static void rank_print_header(const rank_group *g, FILE *out)
{
    fprintf(out, "%s | %s | %s | %ld ok, %ld failed | best baseline: ", g->device, g->problem,
            g->mode, g->n_ok, g->n_failed);
    if (g->has_baseline)
        fprintf(out, "%s %.2f us\n", g->best_baseline.config, g->best_baseline.time.median_us);
    else
        fprintf(out, "none\n");
}

static void rank_print_group(const rank_group *g, FILE *out)
{
    rank_print_header(g, out);
    if (g->n_top == 0) {
        fprintf(out, "  no ok kernel results (%ld failed)\n", g->n_failed);
        if (g->n_variants)
            fprintf(out,
                    "  (%ld ok records of edited kernels (variants) not ranked: pass "
                    "--variants)\n",
                    g->n_variants);
        return;
    }
    fprintf(out, "%4s  %-24s %10s %7s %7s %10s %8s %6s %5s %8s %8s %6s\n", "rank", "config",
            "median_us", "+-95%", "tie", "min_us", "TFLOPS", "CV%", "regs", "smem", "speedup",
            "MHz");
    int no_ci = 0;
    for (int i = 0; i < g->n_top; i++) {
        const record *r = &g->top[i];
        char sp[32] = "-", mhz[16] = "-", ci[16] = "none";
        /* The interval an independent run lands in (docs/measurement.md,
         * "Intervals"); a record without one is never ranked as certain. */
        if (record_has_ci(r))
            snprintf(ci, sizeof ci, "%.2f",
                     100 * (r->time.ci_hi_us - r->time.ci_lo_us) / 2 / r->time.median_us);
        no_ci += !record_has_ci(r);
        const char *tie = i == 0 ? "" : record_tie_name(record_tie(r, &g->top[0]));
        const double x = rank_speedup(g, r);
        if (x > 0)
            snprintf(sp, sizeof sp, "%.2fx", x);
        /* The median SM clock of its blocks; "!" when some ran under the
         * calibrated clock's threshold (docs/measurement.md, "Clocks"). */
        if (r->clock.median_mhz > 0)
            snprintf(mhz, sizeof mhz, "%d%s", r->clock.median_mhz, r->clock.below == 1 ? "!" : "");
        fprintf(out, "%4d  %-24s %10.2f %7s %7s %10.2f %8.2f %6.2f %5d %8ld %8s %6s%s%s\n", i + 1,
                r->config, r->time.median_us, ci, tie, r->time.min_us, r->tflops,
                100.0 * r->time.cv, r->regs, (long)r->smem_static + r->smem_dynamic, sp, mhz,
                record_is_variant(r) ? "  variant " : "", record_is_variant(r) ? r->build : "");
    }
    if (no_ci)
        fprintf(out,
                "  (+-95%% none: measured before intervals, or in too few rounds: never ranked "
                "as certain; its tie is unknown)\n");
    for (int i = 0; i < g->n_top; i++)
        if (record_is_variant(&g->top[i])) {
            fprintf(out, "  (variant: an edited kernel source measured by `fasweep eval --kernel`, "
                         "build src-HASH of its text; `fasweep show` names the file)\n");
            break;
        }
    if (g->n_variants)
        fprintf(out,
                "  (%ld ok records of edited kernels (variants) not ranked: pass --variants)\n",
                g->n_variants);
    for (int i = 0; i < g->n_top; i++)
        if (g->top[i].clock.below == 1) {
            fprintf(out, "  (MHz with !: some of its timed blocks ran under the calibrated clock "
                         "and could not be taken again; see docs/measurement.md)\n");
            break;
        }
}

void rank_print(const rank_result *r, FILE *out)
{
    for (int i = 0; i < r->n_groups; i++) {
        if (i > 0)
            fputc('\n', out);
        rank_print_group(&r->groups[i], out);
    }
}

/* ---- JSON documents ------------------------------------------------------------------------- */

static void rank_problem_json(cJSON *doc, const char *text, json_b *ok)
{
    cJSON *p = json_obj(ok, doc, "problem");
    json_str(ok, p, "text", text);
    space_problem sp;
    /* Imported records may carry any problem text; numbers only when it parses. */
    const int parsed = space_problem_parse(text, &sp) == 0;
    const char *keys[4] = {"batch", "heads", "seq_len", "head_dim"};
    const int vals[4] = {sp.batch, sp.heads, sp.seq_len, sp.head_dim};
    for (int i = 0; i < 4; i++) {
        if (parsed)
            json_num(ok, p, keys[i], vals[i]);
        else
            json_null(ok, p, keys[i]);
    }
    if (parsed) {
        json_bool(ok, p, "causal", sp.causal);
        json_str(ok, p, "dtype", space_dtype_name(sp.dtype));
        json_num(ok, p, "kv_heads", sp.kv_heads);
    } else {
        json_null(ok, p, "causal");
        json_null(ok, p, "dtype");
        json_null(ok, p, "kv_heads");
    }
}

/* ci_lo_us and ci_hi_us of r's 95 % interval (docs/measurement.md,
 * "Intervals"); null both when it has none. */
static void rank_ci_json(cJSON *o, const record *r, json_b *ok)
{
    if (record_has_ci(r)) {
        json_num(ok, o, "ci_lo_us", r->time.ci_lo_us);
        json_num(ok, o, "ci_hi_us", r->time.ci_hi_us);
    } else {
        json_null(ok, o, "ci_lo_us");
        json_null(ok, o, "ci_hi_us");
    }
}

static void rank_baseline_json(cJSON *doc, const rank_group *g, json_b *ok)
{
    if (!g->has_baseline) {
        json_null(ok, doc, "baseline");
        return;
    }
    cJSON *b = json_obj(ok, doc, "baseline");
    const record *r = &g->best_baseline;
    json_str(ok, b, "name", r->config);
    json_num(ok, b, "median_us", r->time.median_us);
    /* as a kernel's: baselines are timed in rounds too (scripts/sdpa_baseline.py) */
    rank_ci_json(b, r, ok);
}

/* The config as its family's axes (slot 0, HEAD_DIM for mma, last, as
 * before families) and the code paths the family derives from them; both
 * null when the family is unknown to this build or the text does not
 * parse. */
static void rank_config_json(cJSON *e, const record *r, json_b *ok)
{
    fa_config c;
    const int fam = fa_family_index(record_family(r));
    const fa_family *f = fa_family_get(fam);
    if (!f || fa_config_parse_in(fam, r->config, &c) != 0) {
        json_null(ok, e, "config");
        json_null(ok, e, "paths");
        return;
    }
    int v[FA_CONFIG_SLOTS];
    fa_config_slots(&c, v);
    cJSON *o = json_obj(ok, e, "config");
    for (int i = 1; i <= FA_CONFIG_SLOTS; i++)
        if (f->axes[i % FA_CONFIG_SLOTS].name)
            json_num(ok, o, f->axes[i % FA_CONFIG_SLOTS].name, v[i % FA_CONFIG_SLOTS]);
    /* The code paths the axes switch on (the family's, kernels/family.h). */
    cJSON *p = ok->ok ? plan_paths_json(&c) : NULL;
    json_add(ok, e, "paths", p);
}

static void rank_metrics_json(cJSON *e, const rank_group *g, const record *r, json_b *ok)
{
    cJSON *m = json_obj(ok, e, "metrics");
    json_num(ok, m, "median_us", r->time.median_us);
    json_num(ok, m, "min_us", r->time.min_us);
    json_num(ok, m, "mean_us", r->time.mean_us);
    json_num(ok, m, "stdev_us", r->time.stdev_us);
    json_num(ok, m, "cv", r->time.cv);
    json_num(ok, m, "noise", r->time.noise);
    /* The 95 % interval of median_us an independent run lands in. */
    const int has = record_has_ci(r);
    rank_ci_json(m, r, ok);
    json_num(ok, m, "rounds", r->time.round.n);
    json_num(ok, m, "samples", r->time.samples);
    json_num(ok, m, "launches_per_sample", r->time.launches);
    json_num(ok, m, "tflops", r->tflops);
    json_num(ok, m, "gbps", r->gbps);
    const double x = rank_speedup(g, r);
    if (x > 0)
        json_num(ok, m, "speedup_vs_baseline", x);
    else
        json_null(ok, m, "speedup_vs_baseline");
    /* Its spread: the kernel's interval against the baseline's median (and
     * the baseline's interval when it has one); null without intervals. */
    if (x > 0 && has) {
        const record *b = &g->best_baseline;
        const int bh = record_has_ci(b);
        json_num(ok, m, "speedup_lo",
                 (bh ? b->time.ci_lo_us : b->time.median_us) / r->time.ci_hi_us);
        json_num(ok, m, "speedup_hi",
                 (bh ? b->time.ci_hi_us : b->time.median_us) / r->time.ci_lo_us);
    } else {
        json_null(ok, m, "speedup_lo");
        json_null(ok, m, "speedup_hi");
    }
}

/* An MHz figure, null when unknown (-1). */
static void rank_mhz(cJSON *o, const char *key, int mhz, json_b *ok)
{
    if (mhz > 0)
        json_num(ok, o, key, mhz);
    else
        json_null(ok, o, key);
}

static void rank_clock_json(cJSON *e, const record *r, json_b *ok)
{
    cJSON *c = json_obj(ok, e, "clock");
    rank_mhz(c, "sm_min_mhz", r->clock.min_mhz, ok);
    rank_mhz(c, "sm_median_mhz", r->clock.median_mhz, ok);
    rank_mhz(c, "sm_max_mhz", r->clock.max_mhz, ok);
    rank_mhz(c, "ref_mhz", r->clock.ref_mhz, ok);
    json_num(ok, c, "blocks", r->clock.blocks);
    json_num(ok, c, "discarded_blocks", r->clock.discarded);
    json_tri(ok, c, "below_threshold", r->clock.below);
}

static void rank_details_json(cJSON *e, const record *r, json_b *ok)
{
    cJSON *er = json_obj(ok, e, "errors");
    json_num(ok, er, "rel_l2", r->rel_l2);
    json_num(ok, er, "max_abs", r->max_abs);

    cJSON *rs = json_obj(ok, e, "resources");
    json_num(ok, rs, "regs", r->regs);
    json_num(ok, rs, "smem_static", r->smem_static);
    json_num(ok, rs, "smem_dynamic", (double)r->smem_dynamic);
    json_num(ok, rs, "local_bytes", r->local_bytes);
    json_num(ok, rs, "max_blocks_per_sm", r->max_blocks_per_sm);

    cJSON *cy = json_obj(ok, e, "cycles");
    json_num(ok, cy, "cta_mean", r->cta_cycles_mean);
    json_num(ok, cy, "cta_max", r->cta_cycles_max);
    json_num(ok, cy, "waves", r->waves);
    json_num(ok, cy, "sm_imbalance", r->sm_imbalance);
}

static void rank_provenance_json(cJSON *e, const record *r, json_b *ok)
{
    char ts[32];
    text_iso8601(r->timestamp, ts, sizeof ts);
    cJSON *p = json_obj(ok, e, "provenance");
    json_str(ok, p, "build", r->build);
    /* A kernel variant (eval --kernel) names its own source and its hash;
     * an instance its family's template (unknown to this build: ""). */
    const fa_family *f = fa_family_get(fa_family_index(record_family(r)));
    json_str(ok, p, "kernel_source", r->kernel_path[0] ? r->kernel_path : f ? f->header : "");
    if (r->kernel_hash[0])
        json_str(ok, p, "kernel_hash", r->kernel_hash);
    json_str(ok, p, "space_name", r->space_name);
    json_str(ok, p, "space_hash", r->space_hash);
    json_str(ok, p, "timestamp", ts);
    json_str(ok, p, "host", r->host);
    json_str(ok, p, "gpu_uuid", r->gpu_uuid);
    json_str(ok, p, "driver", r->driver);
    json_str(ok, p, "runtime", r->runtime);
    json_num(ok, p, "cc", r->cc);
    json_num(ok, p, "sm_count", r->sm_count);
    json_int_or_null(ok, p, "sm_clock_mhz", r->sm_clock_mhz, -1);
    json_int_or_null(ok, p, "mem_clock_mhz", r->mem_clock_mhz, -1);
    json_int_or_null(ok, p, "throttled", r->throttled, -1);
    json_str(ok, p, "fasweep_version", r->version);
}

/* ---- a seed's source, gate and re-scoring command -------------------------------------------- */

/* The source a seed was measured from, as far as this binary knows it. */
typedef struct rank_source {
    char *text;       /* malloc'd, or NULL: not available */
    const char *path; /* the template's path, or the variant's file */
    int same_build;   /* 1: text is what was measured (build matches, or the hash) */
} rank_source;

/* A variant's file when it still holds the text measured (its FNV-1a is the
 * record's kernel_hash); NULL otherwise. */
static char *rank_variant_text(const record *r)
{
    /* The path comes from a record (an import may hold any path): only a
     * regular file of at most RANK_VARIANT_MAX bytes is read, nothing is
     * waited on (a FIFO, /dev/stdin), and its hash must match. */
    char *t = NULL;
    size_t n = 0;
    if (file_read_regular(r->kernel_path, RANK_VARIANT_MAX, &t, &n) != 0)
        return NULL;
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)text_fnv1a(TEXT_FNV_INIT, t, n));
    if (strcmp(hex, r->kernel_hash) != 0 || memchr(t, '\0', n)) {
        free(t);
        return NULL;
    }
    return t;
}

static rank_source rank_source_of(const rank_sources *src, const record *r)
{
    rank_source o = {0};
    if (record_is_variant(r)) {
        o.path = r->kernel_path;
        o.text = r->kernel_path[0] && r->kernel_hash[0] ? rank_variant_text(r) : NULL;
        o.same_build = o.text != NULL;
        return o;
    }
    const fa_family *f = fa_family_get(fa_family_index(record_family(r)));
    o.path = f ? f->header : "";
    const char *t = f && src && src->template_text ? src->template_text(f->header) : NULL;
    o.text = t ? strdup(t) : NULL;
    o.same_build = o.text && src->build && strcmp(src->build, r->build) == 0;
    return o;
}

/* The config as `fasweep eval --config` takes it: FAMILY:TEXT but for the
 * default family. */
static void rank_eval_config(const record *r, char *buf, size_t n)
{
    const char *fam = record_family(r);
    if (strcmp(fam, FA_FAMILY_DEFAULT_NAME) == 0)
        snprintf(buf, n, "%s", r->config);
    else
        snprintf(buf, n, "%s:%s", fam, r->config);
}

/* The standalone source's path: DIR/DEVICE_PROBLEM_MODE.RANK.cuh (the
 * group's file name, seeds/group.h, with the rank). */
static void rank_source_file(const rank_sources *src, const rank_group *g, int i, char *buf,
                             size_t n)
{
    char suffix[32], name[256];
    snprintf(suffix, sizeof suffix, ".%d.cuh", i + 1);
    group_file_name(g->device, g->problem, g->mode, suffix, name, sizeof name);
    snprintf(buf, n, "%s/%s", src->dir, name);
}

/* Appends text to the string in buf (n bytes), cut at the end. */
static void rank_append(char *buf, size_t n, const char *text)
{
    const size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s", text);
}

/* One word of a shell command, in single quotes when it has other bytes
 * than these (a ' as '\''). */
static void rank_shell_word(char *buf, size_t n, const char *w)
{
    if (buf[0])
        rank_append(buf, n, " ");
    if (*w &&
        strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,/:=+-@%") ==
            strlen(w)) {
        rank_append(buf, n, w);
        return;
    }
    rank_append(buf, n, "'");
    for (const char *p = w; *p; p++) {
        const char c[2] = {*p, '\0'};
        rank_append(buf, n, *p == '\'' ? "'\\''" : c);
    }
    rank_append(buf, n, "'");
}

/* An argv as a JSON array under key, and as one shell line under key_line. */
static void rank_command_json(cJSON *o, const char *key, const char *key_line,
                              const char *const *argv, json_b *ok)
{
    cJSON *a = json_arr(ok, o, key);
    char line[4096] = "";
    for (int i = 0; argv[i]; i++) {
        json_push(ok, a, cJSON_CreateString(argv[i]));
        rank_shell_word(line, sizeof line, argv[i]);
    }
    json_str(ok, o, key_line, line);
}

static void rank_null_pair(cJSON *o, const char *a, const char *b, json_b *ok)
{
    json_null(ok, o, a);
    json_null(ok, o, b);
}

/* The commands that measure the seed again as `grid` did, into the same
 * store: by config (a variant's with its file), and by the standalone
 * source when one was written. */
static void rank_rescore_json(cJSON *e, const rank_group *g, int i, const rank_sources *src,
                              const rank_source *so, const char *file, json_b *ok)
{
    const record *r = &g->top[i];
    const char *store = src ? src->store_path : NULL;
    const char *space = src && src->space ? src->space_path : NULL;
    char cfg[96];
    rank_eval_config(r, cfg, sizeof cfg);
    cJSON *o = json_obj(ok, e, "rescore");
    const char *argv[16] = {"fasweep",  "eval", "--problem", g->problem,
                            "--config", cfg,    "--mode",    g->mode};
    int n = 8;
    if (record_is_variant(r))
        argv[n++] = "--kernel", argv[n++] = so->path;
    argv[n++] = "--json";
    const int tail = n;
    if (space)
        argv[n++] = "--space", argv[n++] = space;
    if (store)
        argv[n++] = "--store", argv[n++] = store;
    argv[n] = NULL;
    rank_command_json(o, "argv", "command", argv, ok);
    if (!file) {
        rank_null_pair(o, "source_argv", "source_command", ok);
        return;
    }
    const char *sv[12] = {"fasweep", "eval", "--kernel", file, "--json"};
    int m = 5;
    for (int j = tail; j < n; j++) /* the same --space and --store */
        sv[m++] = argv[j];
    sv[m] = NULL;
    rank_command_json(o, "source_argv", "source_command", sv, ok);
}

/* Where the seed's source is, what it hashes to, and its standalone file. */
static void rank_source_json(cJSON *e, const rank_source *so, const char *file, json_b *ok)
{
    cJSON *o = json_obj(ok, e, "source");
    json_str(ok, o, "path", so->path ? so->path : "");
    if (so->text) {
        char hex[SHA256_HEX_LEN];
        sha256_hex(so->text, strlen(so->text), hex);
        json_str(ok, o, "sha256", hex);
    } else {
        json_null(ok, o, "sha256");
    }
    json_bool(ok, o, "same_build", so->same_build);
    if (file)
        json_str(ok, o, "file", file);
    else
        json_null(ok, o, "file");
}

/* The correctness gate every seed passed, and a re-score applies: the
 * tolerances of topk's --space when given (saying whether the record was
 * measured under that space), else the defaults. */
static void rank_gate_json(cJSON *e, const record *r, const rank_sources *src, json_b *ok)
{
    const space *sp = src ? src->space : NULL;
    cJSON *o = json_obj(ok, e, "gate");
    json_str(ok, o, "reference",
             "fp32 GPU reference (kernels/reference.cu) on the problem's random fp16 inputs; "
             "the output is poisoned with NaN before the launch");
    json_str(ok, o, "rule", "every output finite, rel_l2 <= rel_l2_max and max_abs <= max_abs_max");
    json_num(ok, o, "rel_l2_max", sp ? sp->tolerance.rel_l2 : SPACE_DEFAULT_REL_L2);
    json_num(ok, o, "max_abs_max", sp ? sp->tolerance.max_abs : SPACE_DEFAULT_MAX_ABS);
    char from[512];
    if (!sp)
        snprintf(from, sizeof from,
                 "the defaults (docs/spaces.md, tolerance): every shipped space and `fasweep "
                 "eval` without --space use them");
    else
        snprintf(from, sizeof from, "the space %s (topk --space)%s", src->space_path,
                 strcmp(sp->hash, r->space_hash) == 0
                     ? ", the one the record was measured under"
                     : "; the record was measured under another space (provenance.space_hash)");
    json_str(ok, o, "tolerance_from", from);
}

static cJSON *rank_entry_json(const rank_group *g, int i, const rank_sources *src, json_b *ok)
{
    const record *r = &g->top[i];
    cJSON *e = json_check(ok, cJSON_CreateObject());
    if (!e)
        return NULL;
    json_num(ok, e, "rank", i + 1);
    /* Whether the first's interval and this one's cannot tell them apart
     * (record_tie): an evolution loop should not chase the difference;
     * null when either has no interval (unknown, never a tie). */
    json_tri(ok, e, "tie_with_first", i == 0 ? 0 : (int)record_tie(r, &g->top[0]));
    json_str(ok, e, "family", record_family(r));
    /* An edited kernel (eval --kernel), not the family's template. */
    json_bool(ok, e, "variant", record_is_variant(r));
    rank_config_json(e, r, ok);
    json_str(ok, e, "config_text", r->config);
    rank_metrics_json(e, g, r, ok);
    rank_details_json(e, r, ok);
    rank_clock_json(e, r, ok);
    rank_provenance_json(e, r, ok);
    rank_source so = rank_source_of(src, r);
    char file[4096 + 256];
    const int has_file = so.text && src && src->dir;
    if (has_file)
        rank_source_file(src, g, i, file, sizeof file);
    rank_source_json(e, &so, has_file ? file : NULL, ok);
    rank_gate_json(e, r, src, ok);
    rank_rescore_json(e, g, i, src, &so, has_file ? file : NULL, ok);
    free(so.text);
    return e;
}

/* The seeds document of one group (also one element of --json output). */
static cJSON *rank_group_json(const rank_group *g, const rank_sources *src,
                              const char *generated_at, json_b *ok)
{
    cJSON *doc = json_check(ok, cJSON_CreateObject());
    json_str(ok, doc, "schema", RANK_SEEDS_SCHEMA);
    json_str(ok, doc, "generated_at", generated_at);
    json_str(ok, doc, "fasweep_version", FASWEEP_VERSION);
    json_str(ok, doc, "device", g->device);
    rank_problem_json(doc, g->problem, ok);
    json_str(ok, doc, "mode", g->mode);
    cJSON *counts = json_obj(ok, doc, "counts");
    json_num(ok, counts, "ok", (double)g->n_ok);
    json_num(ok, counts, "failed", (double)g->n_failed);
    json_num(ok, counts, "variants_not_ranked", (double)g->n_variants);
    rank_baseline_json(doc, g, ok);
    cJSON *seeds = json_arr(ok, doc, "seeds");
    for (int i = 0; ok->ok && i < g->n_top; i++)
        json_push(ok, seeds, rank_entry_json(g, i, src, ok));
    return json_done(ok, doc);
}

static void rank_now(char *buf, size_t n)
{
    text_iso8601((double)time(NULL), buf, n);
}

cJSON *rank_json(const rank_result *r)
{
    char now[32];
    rank_now(now, sizeof now);
    json_b ok = JSON_B_INIT;
    cJSON *doc = json_check(&ok, cJSON_CreateObject());
    cJSON *groups = json_arr(&ok, doc, "groups");
    json_str(&ok, doc, "schema", RANK_TOPK_SCHEMA);
    for (int i = 0; ok.ok && i < r->n_groups; i++)
        json_push(&ok, groups, rank_group_json(&r->groups[i], r->src, now, &ok));
    return json_done(&ok, doc);
}

/* ---- seeds files ---------------------------------------------------------------------------- */

/* mkdir -p of the seeds (or sources) directory, named by its option. */
static int rank_mkdirs(const char *dir, const char *opt, char *err, size_t errlen)
{
    char failed[4096];
    const int e = file_mkdirs(dir, 0777, failed, sizeof failed);
    struct stat st;
    if (e == ENOTDIR && stat(dir, &st) == 0)
        snprintf(err, errlen, "%s %s exists but is not a directory; pass another one", opt, dir);
    else if (e)
        snprintf(err, errlen, "cannot create the %s directory %s: %s", opt, failed, strerror(e));
    return e ? -1 : 0;
}

static int rank_write_group(const rank_result *r, const rank_group *g, const char *path,
                            const char *now, char *err, size_t errlen)
{
    json_b ok = JSON_B_INIT;
    cJSON *doc = rank_group_json(g, r->src, now, &ok);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory building the seeds document", path);
        return -1;
    }
    const int rc = file_write_text(path, text, err, errlen) == 0 ? 0 : -1;
    cJSON_free(text);
    return rc;
}

/* The run's file names (group_file_names), one per group; NULL with err
 * set when two groups would share one or out of memory. */
static char (*rank_names(const rank_result *r, char *err, size_t errlen))[GROUP_NAME_LEN]
{
    const size_t n = (size_t)r->n_groups;
    group_id *ids = malloc(n * sizeof *ids);
    char(*names)[GROUP_NAME_LEN] = malloc(n * sizeof *names);
    if (!ids || !names) {
        snprintf(err, errlen, "out of memory naming %zu seeds files", n);
        free(ids);
        free(names);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = (group_id){r->groups[i].device, r->groups[i].problem, r->groups[i].mode};
    if (group_file_names(ids, n, ".json", names, err, errlen) != 0) {
        free(names);
        names = NULL;
    }
    free(ids);
    return names;
}

int rank_write_seeds(const rank_result *r, const char *dir, FILE *paths, char *err, size_t errlen)
{
    if (r->n_groups == 0)
        return 0;
    /* Names first: a clash refuses the run before any file is touched. */
    char(*names)[GROUP_NAME_LEN] = rank_names(r, err, errlen);
    if (!names)
        return -1;
    if (rank_mkdirs(dir, "--seeds-dir", err, errlen) != 0) {
        free(names);
        return -1;
    }
    char now[32];
    rank_now(now, sizeof now);
    int rc = 0;
    char path[4096 + GROUP_NAME_LEN];
    /* Every guard before any write: a refused run writes nothing. */
    for (int i = 0; i < r->n_groups && rc == 0; i++) {
        const rank_group *g = &r->groups[i];
        const group_id id = {g->device, g->problem, g->mode};
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = group_file_foreign(path, &id, "--seeds-dir", err, errlen) ? -1 : 0;
    }
    for (int i = 0; i < r->n_groups && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = rank_write_group(r, &r->groups[i], path, now, err, errlen);
        if (rc == 0 && paths)
            fprintf(paths, "%s\n", path);
    }
    free(names);
    return rc;
}

/* ---- standalone sources --------------------------------------------------------------------- */

/* The source text without a first line of RANK_SOURCE_TAG (a variant made
 * from an emitted source carries one: it is replaced, not stacked). */
static const char *rank_source_body(const char *text)
{
    if (strncmp(text, RANK_SOURCE_TAG, strlen(RANK_SOURCE_TAG)) != 0)
        return text;
    const char *nl = strchr(text, '\n');
    return nl ? nl + 1 : "";
}

/* The file of seed i of g: the tag line eval reads, where it came from,
 * then the source as measured. */
static int rank_write_source(const rank_group *g, int i, const rank_source *so, const char *path,
                             char *err, size_t errlen)
{
    const record *r = &g->top[i];
    char cfg[96], hex[SHA256_HEX_LEN];
    rank_eval_config(r, cfg, sizeof cfg);
    sha256_hex(so->text, strlen(so->text), hex);
    const char *body = rank_source_body(so->text);
    const size_t n = strlen(body) + 2048;
    char *text = malloc(n);
    if (!text) {
        snprintf(err, errlen, "%s: out of memory building the source", path);
        return -1;
    }
    snprintf(text, n,
             "%s problem=%s config=%s mode=%s\n"
             "// Seed %d of %s | %s | %s (fasweep topk --emit-source): %s at this config,\n"
             "// sha256 %s%s, build %s, median %.3f us.\n"
             "// Re-score: fasweep eval --kernel THIS_FILE (the line above gives problem, "
             "config and mode).\n%s",
             RANK_SOURCE_TAG, g->problem, cfg, g->mode, i + 1, g->device, g->problem, g->mode,
             so->path, hex, so->same_build ? "" : " (as this fasweep has it; the build differs)",
             r->build, r->time.median_us, body);
    const int rc = file_write_text(path, text, err, errlen) == 0 ? 0 : -1;
    free(text);
    return rc;
}

int rank_write_sources(const rank_result *r, FILE *paths, char *err, size_t errlen)
{
    const rank_sources *src = r->src;
    if (!src || !src->dir || r->n_groups == 0)
        return 0;
    if (rank_mkdirs(src->dir, "--emit-source", err, errlen) != 0)
        return -1;
    int rc = 0;
    for (int gi = 0; gi < r->n_groups && rc == 0; gi++) {
        const rank_group *g = &r->groups[gi];
        for (int i = 0; i < g->n_top && rc == 0; i++) {
            rank_source so = rank_source_of(src, &g->top[i]);
            char path[4096 + 256];
            if (so.text) {
                rank_source_file(src, g, i, path, sizeof path);
                rc = rank_write_source(g, i, &so, path, err, errlen);
                if (rc == 0 && paths)
                    fprintf(paths, "%s\n", path);
            }
            free(so.text);
        }
    }
    return rc;
}
