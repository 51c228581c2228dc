/* doc.c - the seeds documents (contract: doc.h). */
#include "doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "../grid/plan.h"
#include "../grid/space.h"
#include "../kernels/family.h"
#include "../store/json.h"
#include "../store/sha256.h"
#include "../store/text.h"
#include "shell.h"
#include "source.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

#define DOC_SEEDS_SCHEMA "fasweep.seeds/1"
#define DOC_TOPK_SCHEMA "fasweep.topk/1"

/* ---- JSON documents ------------------------------------------------------------------------- */

static void doc_problem(cJSON *doc, const char *text, json_b *ok)
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
static void doc_ci(cJSON *o, const record *r, json_b *ok)
{
    if (record_has_ci(r)) {
        json_num(ok, o, "ci_lo_us", r->time.ci_lo_us);
        json_num(ok, o, "ci_hi_us", r->time.ci_hi_us);
    } else {
        json_null(ok, o, "ci_lo_us");
        json_null(ok, o, "ci_hi_us");
    }
}

static void doc_baseline(cJSON *doc, const rank_group *g, json_b *ok)
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
    doc_ci(b, r, ok);
}

/* The config as its family's axes (slot 0, HEAD_DIM for mma, last, as
 * before families) and the code paths the family derives from them; both
 * null when the family is unknown to this build or the text does not
 * parse. */
static void doc_config(cJSON *e, const record *r, json_b *ok)
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

static void doc_metrics(cJSON *e, const rank_group *g, const record *r, json_b *ok)
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
    doc_ci(m, r, ok);
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
static void doc_mhz(cJSON *o, const char *key, int mhz, json_b *ok)
{
    if (mhz > 0)
        json_num(ok, o, key, mhz);
    else
        json_null(ok, o, key);
}

static void doc_clock(cJSON *e, const record *r, json_b *ok)
{
    cJSON *c = json_obj(ok, e, "clock");
    doc_mhz(c, "sm_min_mhz", r->clock.min_mhz, ok);
    doc_mhz(c, "sm_median_mhz", r->clock.median_mhz, ok);
    doc_mhz(c, "sm_max_mhz", r->clock.max_mhz, ok);
    doc_mhz(c, "ref_mhz", r->clock.ref_mhz, ok);
    json_num(ok, c, "blocks", r->clock.blocks);
    json_num(ok, c, "discarded_blocks", r->clock.discarded);
    json_tri(ok, c, "below_threshold", r->clock.below);
}

static void doc_details(cJSON *e, const record *r, json_b *ok)
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

static void doc_provenance(cJSON *e, const record *r, json_b *ok)
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

/* ---- a seed's source, gate and re-scoring commands ------------------------------------------- */

/* An argv as a JSON array under key, and as one shell line under key_line. */
static void doc_command(cJSON *o, const char *key, const char *key_line, const char *const *argv,
                        json_b *ok)
{
    cJSON *a = json_arr(ok, o, key);
    char line[4096] = "";
    for (int i = 0; argv[i]; i++) {
        json_push(ok, a, cJSON_CreateString(argv[i]));
        shell_word(line, sizeof line, argv[i]);
    }
    json_str(ok, o, key_line, line);
}

static void doc_null_pair(cJSON *o, const char *a, const char *b, json_b *ok)
{
    json_null(ok, o, a);
    json_null(ok, o, b);
}

/* The commands that measure the seed again as `grid` did, into the same
 * store: by config (a variant's with its file), and by the standalone
 * source when one was written. */
static void doc_rescore(cJSON *e, const rank_group *g, int i, const rank_sources *src,
                        const source_seed *so, const char *file, json_b *ok)
{
    const record *r = &g->top[i];
    const char *store = src ? src->store_path : NULL;
    const char *space = src && src->space ? src->space_path : NULL;
    char cfg[96];
    source_config(r, cfg, sizeof cfg);
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
    doc_command(o, "argv", "command", argv, ok);
    if (!file) {
        doc_null_pair(o, "source_argv", "source_command", ok);
        return;
    }
    const char *sv[12] = {"fasweep", "eval", "--kernel", file, "--json"};
    int m = 5;
    for (int j = tail; j < n; j++) /* the same --space and --store */
        sv[m++] = argv[j];
    sv[m] = NULL;
    doc_command(o, "source_argv", "source_command", sv, ok);
}

/* Where the seed's source is, what it hashes to, and its standalone file. */
static void doc_source(cJSON *e, const source_seed *so, const char *file, json_b *ok)
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
static void doc_gate(cJSON *e, const record *r, const rank_sources *src, json_b *ok)
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

static cJSON *doc_entry(const rank_group *g, int i, const rank_sources *src, json_b *ok)
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
    doc_config(e, r, ok);
    json_str(ok, e, "config_text", r->config);
    doc_metrics(e, g, r, ok);
    doc_details(e, r, ok);
    doc_clock(e, r, ok);
    doc_provenance(e, r, ok);
    source_seed so = source_of(src, r);
    char file[4096 + 256];
    const int has_file = so.text && src && src->dir;
    if (has_file)
        source_file(src, g, i, file, sizeof file);
    doc_source(e, &so, has_file ? file : NULL, ok);
    doc_gate(e, r, src, ok);
    doc_rescore(e, g, i, src, &so, has_file ? file : NULL, ok);
    free(so.text);
    return e;
}

/* The seeds document of one group (also one element of --json output). */
static cJSON *doc_group(const rank_group *g, const rank_sources *src, const char *generated_at,
                        json_b *ok)
{
    cJSON *doc = json_check(ok, cJSON_CreateObject());
    json_str(ok, doc, "schema", DOC_SEEDS_SCHEMA);
    json_str(ok, doc, "generated_at", generated_at);
    json_str(ok, doc, "fasweep_version", FASWEEP_VERSION);
    json_str(ok, doc, "device", g->device);
    doc_problem(doc, g->problem, ok);
    json_str(ok, doc, "mode", g->mode);
    cJSON *counts = json_obj(ok, doc, "counts");
    json_num(ok, counts, "ok", (double)g->n_ok);
    json_num(ok, counts, "failed", (double)g->n_failed);
    json_num(ok, counts, "variants_not_ranked", (double)g->n_variants);
    doc_baseline(doc, g, ok);
    cJSON *seeds = json_arr(ok, doc, "seeds");
    for (int i = 0; ok->ok && i < g->n_top; i++)
        json_push(ok, seeds, doc_entry(g, i, src, ok));
    return json_done(ok, doc);
}

void doc_now(char *buf, size_t n)
{
    text_iso8601((double)time(NULL), buf, n);
}

cJSON *doc_json(const rank_result *r)
{
    char now[32];
    doc_now(now, sizeof now);
    json_b ok = JSON_B_INIT;
    cJSON *doc = json_check(&ok, cJSON_CreateObject());
    cJSON *groups = json_arr(&ok, doc, "groups");
    json_str(&ok, doc, "schema", DOC_TOPK_SCHEMA);
    for (int i = 0; ok.ok && i < r->n_groups; i++)
        json_push(&ok, groups, doc_group(&r->groups[i], r->src, now, &ok));
    return json_done(&ok, doc);
}

cJSON *doc_seeds(const rank_group *g, const rank_sources *src, const char *generated_at)
{
    json_b ok = JSON_B_INIT;
    return doc_group(g, src, generated_at, &ok);
}
