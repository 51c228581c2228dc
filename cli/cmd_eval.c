/* cmd_eval.c - `fasweep eval`: one point (or a head-to-head of a few),
 * measured as `grid` measures and stored as `grid` stores, with no space
 * file: the objective function an external tuner or evolution loop calls
 * (contract: cli.h).
 */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../seeds/rank.h"
#include "../store/store.h"
#include "cli.h"
#include "../grid/plan.h"
#include "../sweep/task.h"
#include "../sweep/variant.h"
#include "../sweep/worker.h"

typedef struct eval_args {
    const char *configs_text, *mode, *store, *space_path, *kernel;
    cli_problem problem;
    int json, device;
} eval_args;

/* ---- arguments ------------------------------------------------------------------------------- */

/* The configs of a comma-separated list into t (at most TASK_MAX_CONFIGS),
 * each checked against the problem and the planner's static rules and
 * looked up in this build. Returns 0, or a usage error. */
static int eval_configs(const char *text, const space *s, int variant, task *t)
{
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return cli_usage_error("--config is longer than %zu bytes", sizeof buf - 1);
    strcpy(buf, text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fa_config c;
        if (fa_config_parse(tok, &c) != 0)
            return cli_usage_error("--config '%s' is not a config text like d64.m128.n64.w4.s2.z1 "
                                   "(d=HEAD_DIM m=BLOCK_M n=BLOCK_N w=NUM_WARPS s=STAGES "
                                   "z=SWIZZLE) or FAMILY:TEXT of a known kernel family "
                                   "(docs/families.md)",
                                   tok);
        if (t->n_configs == TASK_MAX_CONFIGS)
            return cli_usage_error("--config names more than %d configs", TASK_MAX_CONFIGS);
        if (c.head_dim != t->problem.head_dim)
            return cli_usage_error("config %s is for head_dim %d, the problem's is %d", tok,
                                   c.head_dim, t->problem.head_dim);
        const plan_point pt = {0, c, plan_check(&c, s->smem_limit), plan_smem_bytes(&c)};
        if (pt.reason != PLAN_OK) {
            char why[256];
            plan_reject_reason(&pt, s->smem_limit, why, sizeof why);
            return cli_usage_error("config %s cannot run: %s (%s)", tok, why,
                                   plan_reason_code(pt.reason));
        }
        if (!variant && !fa_registry_find(&c))
            return cli_usage_error("config %s is not compiled into this binary (build %s); add a "
                                   "space that accepts it to SPACES and rebuild (make "
                                   "SPACES=\"...\"), or pass --kernel",
                                   tok, fa_build_id());
        t->configs[t->n_configs++] = c;
    }
    if (t->n_configs == 0)
        return cli_usage_error("--config names no config");
    if (variant && t->n_configs > 1)
        return cli_usage_error("--kernel takes one config (the variant is compiled for it)");
    return 0;
}

/* The measurement settings: the space's when --space is given, else the
 * defaults a space gets (docs/spaces.md); the limit of shared memory of
 * the largest target (the launch says when the GPU has less). */
static int eval_space(const eval_args *a, space *s)
{
    if (a->space_path) {
        char err[SPACE_ERR_LEN];
        if (space_load(a->space_path, s, err, sizeof err) != 0) {
            cli_say("%s", err);
            return CLI_USAGE;
        }
        return 0;
    }
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "eval");
    s->smem_limit = 232448;
    space_measure_defaults(&s->measure);
    s->tolerance.rel_l2 = SPACE_DEFAULT_REL_L2;
    s->tolerance.max_abs = SPACE_DEFAULT_MAX_ABS;
    return 0;
}

/* The task of the arguments. Returns 0, or the exit status after a message. */
static int eval_task(const eval_args *a, const space *s, task *t)
{
    memset(t, 0, sizeof *t);
    if (space_problem_parse(a->problem.text, &t->problem) != 0)
        return cli_usage_error("--problem is required (B,H,S,D or b4.h8.s512.d64.nc)");
    if (t->problem.head_dim != 64 && t->problem.head_dim != 128)
        return cli_usage_error("problem %s has head_dim %d: this kernel is built for 64 and 128",
                               a->problem.text, t->problem.head_dim);
    int rc = eval_configs(a->configs_text, s, a->kernel != NULL, t);
    if (rc)
        return rc;
    char err[512];
    if (a->kernel && variant_load(a->kernel, &t->variant, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    t->n_modes = 1;
    snprintf(t->modes[0], sizeof t->modes[0], "%s", a->mode);
    t->measure = s->measure;
    t->tol = s->tolerance;
    return 0;
}

/* ---- results --------------------------------------------------------------------------------- */

/* The best "ok" kernel record of the group other than the keys this eval
 * writes, and the fastest baseline: what the new medians are compared to.
 * Read before the new records are stored. */
typedef struct eval_ref {
    double best_us, baseline_us;
    char best_config[64], baseline[64];
} eval_ref;

static void eval_reference(store *st, const record *mine, int n, eval_ref *ref)
{
    memset(ref, 0, sizeof *ref);
    rank_filter f = {mine[0].device, mine[0].problem, mine[0].mode};
    rank_result rr;
    if (rank_topk(st, &f, TASK_MAX_CONFIGS + 1, &rr) != STORE_OK)
        return;
    for (int g = 0; g < rr.n_groups; g++) {
        const rank_group *gr = &rr.groups[g];
        for (int i = 0; i < gr->n_top && ref->best_us == 0; i++) {
            int own = 0;
            for (int j = 0; j < n; j++)
                own |= strcmp(gr->top[i].config, mine[j].config) == 0 &&
                       strcmp(gr->top[i].build, mine[j].build) == 0;
            if (!own) {
                ref->best_us = gr->top[i].time.median_us;
                snprintf(ref->best_config, sizeof ref->best_config, "%s", gr->top[i].config);
            }
        }
        if (gr->has_baseline) {
            ref->baseline_us = gr->best_baseline.time.median_us;
            snprintf(ref->baseline, sizeof ref->baseline, "%s", gr->best_baseline.config);
        }
    }
    rank_free(&rr);
}

static void eval_num_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v) && v > 0)
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* One line of JSON per record: what a tuner reads. */
static void eval_print_json(const record *r, const eval_ref *ref)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    const int ok = r->status == RECORD_ST_OK;
    cJSON_AddStringToObject(o, "status", record_status_name(r->status));
    cJSON_AddStringToObject(o, "config", r->config);
    cJSON_AddStringToObject(o, "problem", r->problem);
    cJSON_AddStringToObject(o, "mode", r->mode);
    cJSON_AddStringToObject(o, "device", r->device);
    cJSON_AddStringToObject(o, "build", r->build);
    eval_num_or_null(o, "median_us", ok ? r->time.median_us : NAN);
    eval_num_or_null(o, "noise", ok ? r->time.noise : NAN);
    cJSON_AddNumberToObject(o, "samples", r->time.samples);
    eval_num_or_null(o, "tflops", ok ? r->tflops : NAN);
    eval_num_or_null(o, "speedup_vs_best",
                     ok && ref->best_us > 0 ? ref->best_us / r->time.median_us : NAN);
    if (ref->best_us > 0)
        cJSON_AddStringToObject(o, "best_config", ref->best_config);
    else
        cJSON_AddNullToObject(o, "best_config");
    eval_num_or_null(o, "speedup_vs_baseline",
                     ok && ref->baseline_us > 0 ? ref->baseline_us / r->time.median_us : NAN);
    eval_num_or_null(o, "clock_mhz", r->clock.median_mhz);
    cJSON_AddBoolToObject(o, "clock_below_threshold", r->clock.below == 1);
    cJSON_AddStringToObject(o, "error", r->error);
    char *t = cJSON_PrintUnformatted(o);
    if (t)
        puts(t);
    cJSON_free(t);
    cJSON_Delete(o);
}

static void eval_print_text(const record *r, const eval_ref *ref)
{
    if (r->status != RECORD_ST_OK) {
        printf("%s %s %s: %s: %s\n", r->problem, r->config, r->mode, record_status_name(r->status),
               r->error);
        return;
    }
    printf("%s %s %s: ok %.3f us (noise %.2f %%, %d samples, %.1f TFLOPS)", r->problem, r->config,
           r->mode, r->time.median_us, 100 * r->time.noise, r->time.samples, r->tflops);
    if (ref->best_us > 0)
        printf(", %.3fx the stored best (%s %.3f us)", ref->best_us / r->time.median_us,
               ref->best_config, ref->best_us);
    if (ref->baseline_us > 0)
        printf(", %.3fx %s", ref->baseline_us / r->time.median_us, ref->baseline);
    putchar('\n');
}

/* ---- the run --------------------------------------------------------------------------------- */

/* The compiler's lines as one line for a record's error field. */
static void eval_one_line(const char *log, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = log; *p && k + 4 < n; p++) {
        if (*p == '\n') {
            memcpy(out + k, " | ", 3);
            k += 3;
        } else if ((unsigned char)*p >= 0x20 && *p != 0x7f) {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

/* The variant compiled for the worker's GPU (or, without one, for the
 * first architecture of this build): 0 ready, or the exit status after
 * printing (and, with a GPU and so a store st, storing) a compile_error
 * record. */
static int eval_variant(const eval_args *a, const space *s, task *t, const worker *w, store *st)
{
    int cc = w->pid ? w->dev.cc : atoi(fa_build_archs());
    static char log[8192];
    const int rc = variant_build(&t->variant, &t->configs[0], cc, log, sizeof log);
    if (rc < 0) {
        cli_say("cannot compile the kernel variant %s: %s", a->kernel, log);
        return CLI_FAIL;
    }
    if (rc == 0)
        return 0;
    static record r;
    task_device none = {.cc = cc};
    snprintf(none.name, sizeof none.name, "%s", "");
    task_record_init(&r, w->pid ? &w->dev : &none, &t->problem, &t->configs[0], t->modes[0]);
    task_record_variant(&r, &t->variant);
    r.status = RECORD_ST_COMPILE_ERROR;
    eval_one_line(log, r.error, sizeof r.error);
    fprintf(stderr, "%s\n", log);
    char host[64] = "unknown";
    (void)gethostname(host, sizeof host - 1);
    task_provenance(&r, host, s->name, s->hash);
    if (st) {
        const int src = store_put(st, &r);
        if (src != STORE_OK)
            return cli_store_fail(st, src, "storing the result");
    } else {
        cli_say("no CUDA GPU: the compile_error result (sm_%d) is not stored (a record needs the "
                "GPU's name)",
                cc);
    }
    const eval_ref ref = {0};
    if (a->json)
        eval_print_json(&r, &ref);
    else
        eval_print_text(&r, &ref);
    return CLI_FAIL;
}

/* Measures t on the running worker and stores and prints its records. */
static int eval_measure(const eval_args *a, const space *s, const task *t, worker *w, store *st)
{
    static worker_job j;
    char err[512], host[64];
    int rc = CLI_OK;
    j.n_done = 0;
    if (worker_run(w, &j, t, err, sizeof err) != 0) {
        cli_say("%s", err);
        rc = CLI_FAIL;
    }
    const int n = t->n_configs * t->n_modes;
    eval_ref ref = {0};
    if (rc == CLI_OK)
        eval_reference(st, j.recs, n, &ref);
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    for (int i = 0; j.n_done == n && i < n; i++) {
        record *r = &j.recs[i];
        task_provenance(r, host, s->name, s->hash);
        const int src = store_put(st, r);
        if (src != STORE_OK) {
            rc = cli_store_fail(st, src, "storing the result");
            break;
        }
        if (a->json)
            eval_print_json(r, &ref);
        else
            eval_print_text(r, &ref);
        if (r->status != RECORD_ST_OK)
            rc = CLI_FAIL;
    }
    return rc;
}

static int eval_run(const eval_args *a, const space *s, task *t)
{
    char err[512];
    worker w = {.device = a->device};
    const int gpu = worker_spawn(&w, err, sizeof err) == 0;
    if (!gpu && !a->kernel) {
        cli_say("no CUDA GPU found: %s -- eval needs a GPU", err);
        return CLI_FAIL;
    }
    /* Without a GPU nothing is stored: no store is made. */
    store *st = gpu ? cli_open_store(cli_store_path(a->store), 0) : NULL;
    int rc = gpu && !st ? CLI_FAIL : CLI_OK;
    if (rc == CLI_OK && a->kernel)
        rc = eval_variant(a, s, t, &w, st); /* before any GPU work */
    if (rc == CLI_OK && !gpu) {
        cli_say("no CUDA GPU found: %s -- the variant compiled (%s); eval needs a GPU to run it",
                err, t->variant.so);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK)
        rc = eval_measure(a, s, t, &w, st);
    worker_quit(&w);
    if (st)
        store_close(st);
    return rc;
}

static const char *const usage_eval =
    "usage: fasweep eval --problem P --config C[,C...] [--mode hot|cold|batch] [--json]\n"
    "                    [--kernel FILE.cuh] [--space FILE] [--store PATH] [--device N]\n"
    "\n"
    "Checks and times one point exactly as `grid` does (the same worker, gate, timing and\n"
    "record, crash isolation included) and stores it like a grid record: the objective\n"
    "function for an external tuner or evolution loop. Several configs are measured head to\n"
    "head (interleaved rounds, as the refine pass does). Prints per config its status,\n"
    "median, noise, and its speedup over the stored best of its group (other configs or\n"
    "builds) and over the fastest stored baseline; --json: one line of JSON per config.\n"
    "\n"
    "  --problem P   B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc\n"
    "  --config C    config text, e.g. d64.m64.n128.w4.s3.z1; a comma list for a head-to-head\n"
    "                (at most 8; the same config twice is allowed)\n"
    "  --mode M      hot (default), cold or batch\n"
    "  --kernel F    an edited copy of kernels/mma/flash_fwd.cuh: compiled for the local GPU at\n"
    "                the config (one), cached, run in place of the compiled instance; its\n"
    "                records' build is src-HASH of the source (a source that does not\n"
    "                compile is status compile_error, found before any GPU work)\n"
    "  --space FILE  take the measurement settings and tolerances from this space (else the\n"
    "                defaults a space gets) and name it in the records' provenance\n"
    "  --json        one JSON line per config\n"
    "  --store PATH  results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "  --device N    CUDA device ordinal (default 0)\n"
    "\n"
    "exit status: 0 ok, 1 wrong, crashed, timeout, compile_error or no GPU, 2 bad arguments\n"
    "(an unknown config text, a config not in this binary, a problem the kernel cannot run,\n"
    "a --kernel file that is missing or not a kernel).\n";

static int eval_main(int argc, char **argv)
{
    eval_args a = {.mode = "hot"};
    int first;
    const cli_opt opts[] = {{"problem", 0, CLI_PROBLEM, &a.problem, 0, 0},
                            {"config", 0, CLI_STR, &a.configs_text, 0, 0},
                            {"mode", 0, CLI_MODE, &a.mode, 0, 0},
                            {"space", 0, CLI_PATH, &a.space_path, 0, 0},
                            {"kernel", 0, CLI_PATH, &a.kernel, 0, 0},
                            {"json", 0, CLI_FLAG, &a.json, 0, 0},
                            {"store", 0, CLI_PATH, &a.store, 0, 0},
                            {"device", 0, CLI_INT, &a.device, 0, 1024},
                            {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    if (!a.problem.set)
        return cli_usage_error("--problem P is required");
    if (!a.configs_text)
        return cli_usage_error("--config C is required");
    static space s;
    static task t;
    if ((rc = eval_space(&a, &s)) || (rc = eval_task(&a, &s, &t)))
        return rc;
    return eval_run(&a, &s, &t);
}

const cli_command cmd_eval = {"eval", eval_main, usage_eval};
