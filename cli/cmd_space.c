/* cmd_space.c - the commands about a space, this binary and the GPU:
 * plan, problem, grid, list, version (contract: cli.h). */
#include <cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/embedded.h"
#include "../kernels/fa_launch.h"
#include "../kernels/family.h"
#include "cli.h"
#include "emit.h"
#include "../grid/plan.h"
#include "../grid/problem_json.h"
#include "../sweep/progress.h"
#include "../sweep/run.h"
#include "../grid/shard.h"
#include "../grid/space.h"
#include "../store/json.h"
#include "../store/mode.h"
#include "../sweep/worker.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

/* ---- plan and grid --dry-run ---------------------------------------------------------------- */

/* Keeps this process's shard of p: --shard I/N when given, else the one a
 * Slurm job array or srun task describes (shard.h). Returns 0, or the exit
 * status after printing why (p is freed then). */
static int apply_shard(const space *s, plan *p, const char *shard_opt)
{
    char err[256];
    shard sh = {0, 1};
    int rc = shard_opt ? shard_parse(shard_opt, &sh, err, sizeof err)
                       : shard_from_env(&sh, err, sizeof err);
    if (rc < 0) {
        cli_say("%s", err);
        plan_free(p);
        return CLI_USAGE;
    }
    if (sh.count <= 1)
        return 0;
    const size_t before = p->n;
    if (shard_filter(s, p, sh) != 0) {
        cli_say("out of memory splitting the plan into %d shards", sh.count);
        plan_free(p);
        return CLI_FAIL;
    }
    fprintf(stderr, "fasweep: shard %d/%d%s: %zu of %zu points (%zu accepted)\n", sh.index,
            sh.count, shard_opt ? "" : " (from Slurm)", p->n, before, p->n_accepted);
    return 0;
}

/* The space at path (--space, required), planned against this build, then
 * cut to this process's shard. Returns 0, or the exit status after
 * printing why. */
static int load_sharded_plan(const char *path, const char *shard_opt, space *s, plan *p)
{
    if (!path)
        return cli_usage_error("--space FILE is required");
    const int rc = cli_load_plan(path, s, p);
    return rc ? rc : apply_shard(s, p, shard_opt);
}

/* What plan and grid do with the loaded plan; CTX is the command's args. */
typedef int (*plan_step)(const space *s, const plan *p, void *ctx);

/* load_sharded_plan, then STEP on the plan, which is freed after. */
static int with_sharded_plan(const char *path, const char *shard_opt, plan_step step, void *ctx)
{
    space s;
    plan p;
    int rc = load_sharded_plan(path, shard_opt, &s, &p);
    if (rc)
        return rc;
    rc = step(&s, &p, ctx);
    plan_free(&p);
    return rc;
}

static const emit_col plan_cols[] = {{"problem", 22, 1, 0},
                                     {"config", 24, 1, 1},
                                     {"smem_B", 8, 0, 1},
                                     {"reason", 12, 1, 2},
                                     {"detail", 0, 1, 1}};
#define PLAN_NCOLS ((int)(sizeof plan_cols / sizeof *plan_cols))

static void plan_print_point(const space *s, const plan_point *pt, FILE *out)
{
    char prob[64], cfg[64], smem[24], why[256];
    space_problem_format(&s->problems[pt->problem], prob, sizeof prob);
    fa_config_format(&pt->cfg, cfg, sizeof cfg);
    snprintf(smem, sizeof smem, "%ld", pt->smem_bytes);
    plan_reject_reason(pt, s->smem_limit, why, sizeof why);
    const char *const cells[] = {prob, cfg, smem, plan_reason_code(pt->reason), why};
    emit_row(out, plan_cols, PLAN_NCOLS, cells);
}

/* Whether a point of family fi was rejected for reason r (the families a
 * reason's count covers). */
static int plan_family_has(const plan *p, int fi, plan_reason r)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->points[i].reason == r && p->points[i].cfg.family == fi)
            return 1;
    return 0;
}

/* The rule a reason code stands for in family f, in its words (NULL when
 * it has none: the planner's own reasons). */
static const char *plan_rule(const fa_family *f, plan_reason r)
{
    return f && (int)r < FA_REJ_COUNT ? f->rule[r] : NULL;
}

/* The table: every accepted point and every point a static rule rejects;
 * points only missing from this binary are counted unless `all`. The
 * counts per reason say what the rule is in each family that met it: one
 * code (warp_rows) is 16 rows per warp for mma and 64 per consumer
 * warpgroup for wgmma. */
static void plan_print(const space *s, const plan *p, int all, FILE *out)
{
    emit_row(out, plan_cols, PLAN_NCOLS, NULL);
    for (size_t i = 0; i < p->n; i++)
        if (all || p->points[i].reason != PLAN_REJ_NOT_COMPILED)
            plan_print_point(s, &p->points[i], out);
    fprintf(out, "\nspace %s (%s): %zu points, %zu accepted, %zu rejected\n", s->name, s->path,
            p->n, p->n_accepted, p->n - p->n_accepted);
    for (int r = 1; r < PLAN_REASON_COUNT; r++) {
        if (!p->by_reason[r])
            continue;
        char count[24];
        const int w = snprintf(count, sizeof count, "%zu", p->by_reason[r]);
        fprintf(out, "  %-12s %s", plan_reason_code((plan_reason)r), count);
        for (int fi = 0, line = 0; fi < fa_family_count(); fi++) {
            const char *rule = plan_rule(fa_family_get(fi), (plan_reason)r);
            if (!rule || !plan_family_has(p, fi, (plan_reason)r))
                continue;
            if (line++)
                fprintf(out, "\n  %-12s %-6s", "", "");
            else
                fprintf(out, "%*s", w < 6 ? 6 - w : 0, "");
            fprintf(out, " %s: %s", fa_family_get(fi)->name, rule);
        }
        fputc('\n', out);
    }
    if (!all && p->by_reason[PLAN_REJ_NOT_COMPILED])
        fprintf(out, "(%zu points are valid but not compiled into this binary; --all lists them)\n",
                p->by_reason[PLAN_REJ_NOT_COMPILED]);
}

static cJSON *plan_point_json(json_b *b, const space *s, const plan_point *pt)
{
    char prob[SPACE_PROBLEM_TEXT_MAX], cfg[64], why[256];
    space_problem_format(&s->problems[pt->problem], prob, sizeof prob);
    fa_config_format(&pt->cfg, cfg, sizeof cfg);
    plan_reject_reason(pt, s->smem_limit, why, sizeof why);
    cJSON *o = json_check(b, cJSON_CreateObject());
    const fa_family *f = fa_family_of(&pt->cfg);
    json_str(b, o, "problem", prob);
    json_str(b, o, "family", f ? f->name : "?");
    json_str(b, o, "config", cfg);
    json_str(b, o, "dtype", fa_dtype_name(pt->cfg.dtype));
    json_num(b, o, "smem_bytes", (double)pt->smem_bytes);
    json_bool(b, o, "accepted", pt->reason == PLAN_OK);
    json_str(b, o, "reason", plan_reason_code(pt->reason));
    json_str(b, o, "detail", why);
    return o;
}

/* "rules": {FAMILY: {CODE: the rule in the family's words}} for every
 * family the space plans (its own, then its "families"). */
static void plan_rules_json(json_b *b, const space *s, cJSON *doc)
{
    cJSON *rules = json_obj(b, doc, "rules");
    for (int g = -1; b->ok && g < s->n_extra; g++) {
        const fa_family *f = fa_family_get(g < 0 ? s->family : s->extra[g].family);
        cJSON *fr = json_obj(b, rules, f ? f->name : "?");
        for (int r = 1; f && r < PLAN_REASON_COUNT; r++) {
            const char *rule = plan_rule(f, (plan_reason)r);
            if (rule)
                json_str(b, fr, plan_reason_code((plan_reason)r), rule);
        }
    }
}

static void plan_counts_json(json_b *b, const plan *p, cJSON *doc)
{
    cJSON *c = json_obj(b, doc, "counts");
    json_num(b, c, "total", (double)p->n);
    json_num(b, c, "accepted", (double)p->n_accepted);
    json_num(b, c, "rejected", (double)(p->n - p->n_accepted));
    cJSON *by = json_obj(b, c, "rejected_by_reason");
    for (int r = 1; r < PLAN_REASON_COUNT; r++)
        json_num(b, by, plan_reason_code((plan_reason)r), (double)p->by_reason[r]);
}

/* "modes": the space's modes in order; "problems": per problem its fields
 * (grid/problem_json.h): what the scripts read instead of parsing the space
 * themselves. */
static void plan_space_json(json_b *b, const space *s, cJSON *doc)
{
    space_modes_json(b, json_arr(b, doc, "modes"), s);
    space_problems_json(b, json_arr(b, doc, "problems"), s);
}

/* Prints the JSON document of the plan. */
static int plan_print_json(const space *s, const plan *p)
{
    json_b b = JSON_B_INIT;
    cJSON *doc = json_check(&b, cJSON_CreateObject());
    cJSON *points = json_arr(&b, doc, "points");
    json_str(&b, doc, "space", s->name);
    json_str(&b, doc, "family", fa_family_get(s->family)->name);
    json_str(&b, doc, "path", s->path);
    json_str(&b, doc, "hash", s->hash);
    json_num(&b, doc, "smem_limit", (double)s->smem_limit);
    for (size_t i = 0; b.ok && i < p->n; i++)
        json_push(&b, points, plan_point_json(&b, s, &p->points[i]));
    plan_counts_json(&b, p, doc);
    plan_rules_json(&b, s, doc);
    plan_space_json(&b, s, doc);
    return emit_json(json_done(&b, doc));
}

static int show_plan(const space *s, const plan *p, int json, int all)
{
    if (json)
        return plan_print_json(s, p);
    plan_print(s, p, all, stdout);
    return CLI_OK;
}

typedef struct plan_args {
    const char *path, *shard;
    int json, all;
} plan_args;

#define SHARD_HELP                                                                                 \
    "only part I (0-based) of N of the grid: a deterministic split,\n"                             \
    "balanced by expected cost; without it a Slurm job array\n"                                    \
    "(SLURM_ARRAY_TASK_ID/_MIN/_MAX or _COUNT) or srun tasks\n"                                    \
    "(SLURM_PROCID/SLURM_NTASKS) choose the part"

static const cli_opt plan_opts[] = {
    CLI_OPT_VAL("space", CLI_PATH, plan_args, path, "FILE", "the space (JSON) to plan"),
    CLI_OPT_FLAG("all", plan_args, all,
                 "also list points that are valid but not compiled into this binary\n"
                 "(by default they are only counted)"),
    CLI_OPT_FLAG("json", plan_args, json, "one JSON document: every point, and the counts"),
    CLI_OPT_VAL("shard", CLI_STR, plan_args, shard, "I/N", SHARD_HELP),
    {0}};

static int plan_step_show(const space *s, const plan *p, void *ctx)
{
    const plan_args *a = ctx;
    return show_plan(s, p, a->json, a->all);
}

static int plan_run(plan_args *a)
{
    return with_sharded_plan(a->path, a->shard, plan_step_show, a);
}

CLI_MAIN_NO_ARGS(plan, plan_args, plan_run, 0)

CLI_COMMAND(
    plan, .summary = "show the grid of a space: accepted points, rejected ones with reasons",
    .usage = "--space FILE [OPTIONS]",
    .about =
        "Enumerates the grid of a space file (its own family's, then each of its \"families\")\n"
        "and checks each point against its family's static rules, first failing rule wins\n"
        "(docs/spaces.md has each family's table; the codes:\n"
        "{{REASONS}}),\n"
        "then against this binary's compiled instances (not_compiled). The counts per code\n"
        "say what the rule is in each family that met it (--json: \"rules\"). Needs no GPU.\n",
    .exit = "0 ok, 2 bad space file or option.");

/* ---- problem ------------------------------------------------------------------------------- */

typedef struct problem_args {
    int json, causal, any;
} problem_args;

static const cli_opt problem_opts[] = {
    CLI_OPT_FLAG("json", problem_args, json,
                 "one JSON object a line, per TEXT: \"text\" (as given), \"problem\"\n"
                 "(the canonical text), batch, heads, kv_heads, seq_len, head_dim,\n"
                 "causal, dtype, flops (halved for causal) and bytes (the minimum\n"
                 "DRAM traffic: Q, O and K, V of kv_heads heads), as plan --json's\n"
                 "\"problems\""),
    CLI_OPT_FLAG("causal", problem_args, causal, "make every problem causal"),
    CLI_OPT_FLAG("any", problem_args, any,
                 "a TEXT that is no problem (a store key may be any text) is\n"
                 "{\"text\": TEXT, \"problem\": null} (without --json: an empty line)\n"
                 "instead of an error"),
    {0}};

/* One line for text t: its problem (sp, or NULL when it is none). */
static int problem_print(const problem_args *a, const char *t, const space_problem *sp)
{
    if (!a->json) {
        char text[SPACE_PROBLEM_TEXT_MAX] = "";
        if (sp)
            space_problem_format(sp, text, sizeof text);
        printf("%s\n", text);
        return CLI_OK;
    }
    json_b b = JSON_B_INIT;
    cJSON *o = json_check(&b, cJSON_CreateObject());
    json_str(&b, o, "text", t);
    if (sp)
        space_problem_json(&b, o, sp);
    else
        json_null(&b, o, "problem");
    return emit_json_line(json_done(&b, o));
}

/* Every text is read before anything is printed: a bad one is the only
 * output (all or nothing, unless --any). */
static int problem_run(const problem_args *a, int n, char **texts)
{
    if (n == 0)
        return cli_usage_error("wants at least one problem TEXT");
    space_problem *sp = calloc((size_t)n, sizeof *sp);
    char *ok = calloc((size_t)n, 1);
    int rc = sp && ok ? CLI_OK : CLI_FAIL;
    if (rc)
        cli_say("out of memory reading %d problem texts", n);
    for (int i = 0; rc == CLI_OK && i < n; i++) {
        ok[i] = space_problem_parse(texts[i], &sp[i]) == 0;
        if (ok[i] && a->causal)
            sp[i].causal = 1;
        if (!ok[i] && !a->any) {
            cli_say("problem '%s': not a problem text: expected " CLI_PROBLEM_FORMS, texts[i]);
            rc = CLI_USAGE;
        }
    }
    for (int i = 0; rc == CLI_OK && i < n; i++)
        rc = problem_print(a, texts[i], ok[i] ? &sp[i] : NULL);
    free(sp);
    free(ok);
    return rc;
}

CLI_MAIN(problem, problem_args, problem_run, 0)

CLI_COMMAND(
    problem, .summary = "print problem texts canonically, with their numbers, FLOPs and bytes",
    .usage = "[OPTIONS] TEXT...",
    .about = "Reads each TEXT as the engine reads a problem (" CLI_HELP_PROBLEM ";\n"
             "B,H:KV,S,D for KV K/V heads, ',bf16' at the end for bf16) and prints its\n"
             "canonical text, the one the store keys it by (b1.h32.kv8.s4096.d128.c.bf16),\n"
             "one a line in the order given. The scripts read problems here (and a space's\n"
             "in plan --json) instead of parsing them again. Needs no GPU.\n",
    .exit = "0 ok, 2 a TEXT that is no problem (one line naming it; nothing printed) or a\n"
            "bad option.");

/* ---- grid ----------------------------------------------------------------------------------- */

/* The list o->devices[0..n_devices) made current: its first GPU is o->device, and one GPU
 * takes the plain single-worker path (n_devices 0). */
static void devices_listed(run_options *o)
{
    o->device = o->devices[0];
    if (o->n_devices == 1)
        o->n_devices = 0;
}

/* Every GPU the probe counted (n of them): one worker each. */
static void all_devices(run_options *o, int n)
{
    o->n_devices = n < RUN_MAX_DEVICES ? n : RUN_MAX_DEVICES;
    for (int i = 0; i < o->n_devices; i++)
        o->devices[i] = i;
    devices_listed(o);
}

/* --devices all|N[,N...]: one worker per listed GPU; "all" sets *all (grid_run
 * asks the driver how many, so a dry run needs no GPU). Returns 0, or 1 after
 * printing a usage error. */
static int parse_devices(const char *text, run_options *o, int *all)
{
    *all = strcmp(text, "all") == 0;
    if (*all) {
        all_devices(o, 1); /* GPU 0 until the probe has counted them */
        return 0;
    } else {
        const char *p = text;
        o->n_devices = 0;
        for (;;) {
            char *end;
            errno = 0;
            const long v = strtol(p, &end, 10);
            if (end == p || *p == '-' || *p == '+' || errno || v > 1024 ||
                (*end != ',' && *end != '\0') || o->n_devices == RUN_MAX_DEVICES) {
                cli_usage_error("bad --devices '%s': expected all, or CUDA ordinals like 0,2 "
                                "(at most %d)",
                                text, RUN_MAX_DEVICES);
                return 1;
            }
            /* FASWEEP_TEST_SHARE_GPU=1 (a test hook): several workers on one GPU,
             * to exercise the several-GPU dispatcher on a one-GPU machine (the
             * timings of workers sharing a GPU are not to be trusted). */
            const int share = progress_hook("FASWEEP_TEST_SHARE_GPU", "1");
            for (int i = 0; i < o->n_devices && !share; i++)
                if (o->devices[i] == (int)v) {
                    cli_usage_error("bad --devices '%s': GPU %ld is listed twice", text, v);
                    return 1;
                }
            o->devices[o->n_devices++] = (int)v;
            if (*end == '\0')
                break;
            p = end + 1;
        }
    }
    devices_listed(o);
    return 0;
}

static volatile sig_atomic_t grid_stop;

/* First Ctrl-C: ask the engine to stop after the current config. The
 * handler is installed with SA_RESETHAND, so a second Ctrl-C takes the
 * default action and ends the process at once. */
static void grid_on_sigint(int sig)
{
    (void)sig;
    grid_stop = 1;
    static const char msg[] =
        "\nfasweep: stopping after the current config (Ctrl-C again to abort now)\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
}

static void grid_install_sigint(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = grid_on_sigint;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* A worker for each GPU of o's list not started yet (worker_prestart); how many wait. */
static int grid_prestart(const run_options *o)
{
    return worker_prestart(o->n_devices > 1 ? o->devices : &o->device,
                           o->n_devices > 1 ? o->n_devices : 1);
}

/* all: --devices all (the probe's count decides the list). */
static int grid_run(const space *s, const plan *p, const char *path, run_options *o, int all)
{
    char msg[512] = "";
    /* The workers start before the probe, their CUDA starts beside its own (0.7-1.3 s each
     * on the H200 host, sweep/NOTES-engine.md); for "all", one per GPU the driver lists (a hint
     * without CUDA), the probe's count decides after. Nothing is written before the probe has
     * answered; workers no engine adopts are killed. */
    const int hint = all ? worker_gpu_hint() : 0;
    if (hint > 1)
        all_devices(o, hint);
    const int early = p->n_accepted > 0 ? grid_prestart(o) : 0;
    if (progress_tracing())
        fprintf(stderr, "TRACE gpu hint %d: %d worker(s) started before the probe\n", hint, early);
    const int n_gpus = worker_gpu_count(msg, sizeof msg);
    progress_phase("gpu probe");
    if (all && n_gpus > 0) {
        all_devices(o, n_gpus);
        if (p->n_accepted > 0)
            grid_prestart(o); /* those the hint missed */
    }
    if (n_gpus <= 0 || p->n_accepted == 0)
        worker_quit_all(NULL, 0); /* no engine: its prestarted workers and the probe reaped */
    if (n_gpus <= 0) {
        cli_say("no CUDA GPU found: %s -- grid needs a GPU; use `fasweep plan` to inspect a space "
                "without one",
                msg[0] ? msg : "no device");
        return CLI_FAIL;
    }
    if (p->n_accepted == 0) {
        cli_say("no point of %s is accepted (%zu rejected); see `fasweep plan --space %s --all`",
                s->path, p->n, s->path);
        return CLI_FAIL;
    }
    grid_install_sigint();
    o->stop = &grid_stop;
    o->progress = stderr;
    run_summary sum;
    memset(&sum, 0, sizeof sum);
    const int rc = run_grid(s, p, path, o, &sum);
    run_print_summary(&sum, stdout);
    progress_phase("summary");
    if (rc < 0) {
        cli_say("store error while sweeping into %s; results committed so far are kept", path);
        return CLI_FAIL;
    }
    return (rc != 0 || sum.interrupted) ? CLI_FAIL : CLI_OK;
}

typedef struct grid_args {
    const char *path, *store, *shard, *devices;
    int dry, all; /* all: --devices all */
    run_options o;
} grid_args;

static const cli_opt grid_opts[] = {
    CLI_OPT_VAL("space", CLI_PATH, grid_args, path, "FILE", "the space (JSON) to sweep"),
    CLI_OPT_STORE(grid_args),
    CLI_OPT_FLAG("dry-run", grid_args, dry,
                 "print the plan (as `fasweep plan`) and stop; needs no GPU"),
    CLI_OPT_FLAG("remeasure", grid_args, o.remeasure, "measure points the store already has again"),
    CLI_OPT_INT("refine", 0, grid_args, o.refine_k, 0, 1000000, "K",
                "afterwards measure the K best per problem and mode in more rounds"),
    CLI_OPT_VAL("between-rounds", CLI_STR, grid_args, o.between_rounds, "CMD",
                "run CMD (/bin/sh -c, output to stderr) after each of the sweep's\n"
                "rounds but the last, while no GPU has a task (round r + 1 waits\n"
                "for it): other work that wants the GPU alone, e.g. a baseline's\n"
                "round; a failure is said and the sweep goes on"),
    CLI_OPT_CUDA_DEVICE(grid_args, o.device),
    CLI_OPT_VAL("devices", CLI_STR, grid_args, devices, "L",
                "several GPUs of this host: all, or ordinals like 0,2; one worker\n"
                "process per GPU, tasks go to whichever is free, one store writer;\n"
                "the GPUs must be one model (results are keyed by it)"),
    CLI_OPT_VAL("shard", CLI_STR, grid_args, shard, "I/N",
                "measure only part I of N of the grid (as plan --shard);\n"
                "under a Slurm job array or srun the part comes from Slurm"),
    {0}};

/* grid --dry prints the plan as plan does, without --json or --all. */
static int grid_step(const space *s, const plan *p, void *ctx)
{
    grid_args *a = ctx;
    return a->dry ? show_plan(s, p, 0, 0) : grid_run(s, p, cli_store_path(a->store), &a->o, a->all);
}

/* --devices is checked once --space is given (a missing --space is the
 * error to report first). */
static int grid_cmd(grid_args *a)
{
    if (a->path && a->devices && parse_devices(a->devices, &a->o, &a->all))
        return CLI_USAGE;
    return with_sharded_plan(a->path, a->shard, grid_step, a);
}

CLI_MAIN_NO_ARGS(grid, grid_args, grid_cmd, 0)

CLI_COMMAND(
    grid, .summary = "check and time every accepted point on the GPU, into the store",
    .usage = "--space FILE [OPTIONS]",
    .about = "Checks every accepted point of the space against the reference and times it on the\n"
             "GPU, for each measurement mode of the space; every result is committed to the store\n"
             "as soon as it exists. Points already in the store are skipped (resume).\n"
             "Ctrl-C stops after the current config; a second Ctrl-C aborts at once.\n",
    .exit = "0 swept to the end (even if some configs failed), 1 no GPU, interrupted\n"
            "or store failure, 2 bad space file or option.");

/* ---- list ----------------------------------------------------------------------------------- */

/* One instance: its family, name, axes (by the family's names) and the
 * derived code paths the family reports. */
static cJSON *list_instance_json(json_b *b, const fa_instance *in)
{
    const fa_family *f = fa_family_of(&in->cfg);
    int v[FA_CONFIG_SLOTS];
    fa_config_slots(&in->cfg, v);
    cJSON *o = json_check(b, f ? cJSON_CreateObject() : NULL);
    if (!o)
        return NULL;
    json_str(b, o, "name", in->name);
    json_str(b, o, "family", f->name);
    json_add(b, o, "dtype", cJSON_CreateString(fa_dtype_name(in->cfg.dtype)));
    for (int i = 0; i < FA_CONFIG_SLOTS; i++)
        if (f->axes[i].name)
            json_num(b, o, f->axes[i].name, v[i]);
    json_num(b, o, "smem_bytes", (double)in->smem_bytes);
    json_add(b, o, "paths", plan_paths_json(&in->cfg));
    return o;
}

static int list_json(void)
{
    json_b b = JSON_B_INIT;
    cJSON *doc = json_check(&b, cJSON_CreateObject());
    cJSON *arr = json_arr(&b, doc, "instances");
    json_str(&b, doc, "build", fa_build_id());
    json_str(&b, doc, "archs", fa_build_archs());
    json_num(&b, doc, "count", fa_registry_count());
    for (int i = 0; b.ok && i < fa_registry_count(); i++)
        json_push(&b, arr, list_instance_json(&b, fa_registry_get(i)));
    return emit_json(json_done(&b, doc));
}

/* The paths config c runs, as "a,b" (or "-"). */
static void list_paths(const fa_family *f, const fa_config *c, char *buf, size_t n)
{
    int used = 0;
    buf[0] = 0;
    for (int p = 0; p < f->n_paths && used < (int)n; p++)
        if (f->path(c, p))
            used += snprintf(buf + used, n - (size_t)used, "%s%s", used ? "," : "", f->paths[p]);
    if (!buf[0])
        snprintf(buf, n, "-");
}

/* One table per family that has instances, its columns named by that
 * family's axes (a wgmma row under mma's NUM_WARPS would say the wrong
 * thing): "family NAME: SUMMARY", the headings, one row per instance. */
static void list_family_table(const fa_family *f, int fi)
{
    emit_col cols[FA_CONFIG_SLOTS + 3] = {{"name", 24, 1, 0}};
    int n = 1;
    for (int i = 0; i < FA_CONFIG_SLOTS; i++)
        if (f->axes[i].name) {
            const int w = (int)strlen(f->axes[i].name);
            cols[n++] = (emit_col){f->axes[i].name, w > 7 ? w : 7, 0, 1};
        }
    cols[n++] = (emit_col){"smem_B", 8, 0, 1};
    cols[n++] = (emit_col){"paths", 0, 1, 2};
    printf("\nfamily %s: %s\n", f->name, f->summary);
    emit_row(stdout, cols, n, NULL);
    for (int r = 0; r < fa_registry_count(); r++) {
        const fa_instance *in = fa_registry_get(r);
        if (in->cfg.family != fi)
            continue;
        const fa_config *c = &in->cfg;
        int v[FA_CONFIG_SLOTS];
        fa_config_slots(c, v);
        char num[FA_CONFIG_SLOTS + 2][24], paths[96]; /* num[k]: the text of cells[k] */
        const char *cells[FA_CONFIG_SLOTS + 3] = {in->name};
        int k = 1;
        for (int i = 0; i < FA_CONFIG_SLOTS; i++)
            if (f->axes[i].name) {
                snprintf(num[k], sizeof num[k], "%d", v[i]);
                cells[k] = num[k];
                k++;
            }
        snprintf(num[k], sizeof num[k], "%ld", in->smem_bytes);
        cells[k] = num[k];
        k++;
        list_paths(f, c, paths, sizeof paths);
        cells[k++] = paths;
        emit_row(stdout, cols, n, cells);
    }
}

static void list_table(void)
{
    printf("build %s  archs %s  instances %d\n", fa_build_id(), fa_build_archs(),
           fa_registry_count());
    for (int fi = 0; fi < fa_family_count(); fi++) {
        int any = 0;
        for (int r = 0; r < fa_registry_count() && !any; r++)
            any = fa_registry_get(r)->cfg.family == fi;
        if (any)
            list_family_table(fa_family_get(fi), fi);
    }
}

typedef struct list_args {
    int json;
} list_args;

static const cli_opt list_opts[] = {CLI_OPT_FLAG("json", list_args, json, "one JSON document"),
                                    {0}};

static int list_run(const list_args *a)
{
    if (a->json)
        return list_json();
    list_table();
    return CLI_OK;
}

CLI_MAIN_NO_ARGS(list, list_args, list_run, 0)

CLI_COMMAND(list, .summary = "the kernel instances compiled into this binary", .usage = "[OPTIONS]",
            .about =
                "The kernel instances compiled into this binary (config, shared memory per block,\n"
                "code paths), one table per kernel family with columns named by its axes, and the\n"
                "build id and GPU architectures it holds code for. Needs no GPU.\n",
            .exit = "0 ok, 2 bad option.");

/* ---- version and help ----------------------------------------------------------------------- */

typedef struct version_args {
    int json;
} version_args;

static const cli_opt version_opts[] = {
    CLI_OPT_FLAG("json", version_args, json,
                 "one JSON document: version, build, archs, instances, nvcc_flags (the flags\n"
                 "that decide the kernels' code, instances' and variants' alike) and modes\n"
                 "(the timing modes, default first: scripts read them here)"),
    {0}};

/* The JSON array KEY of o: the strings s[0..n) (n < 0: up to a NULL). */
static void version_strings(json_b *b, cJSON *o, const char *key, const char *const *s, int n)
{
    cJSON *arr = json_arr(b, o, key);
    for (int i = 0; n < 0 ? s[i] != NULL : i < n; i++)
        json_push(b, arr, json_check(b, cJSON_CreateString(s[i])));
}

static int version_run(const version_args *a)
{
    if (a->json) {
        const char *modes[MODE_COUNT];
        for (int i = 0; i < MODE_COUNT; i++)
            modes[i] = mode_at(i)->name;
        json_b b = JSON_B_INIT;
        cJSON *doc = json_check(&b, cJSON_CreateObject());
        json_str(&b, doc, "version", FASWEEP_VERSION);
        json_str(&b, doc, "build", fa_build_id());
        json_str(&b, doc, "archs", fa_build_archs());
        json_num(&b, doc, "instances", fa_registry_count());
        version_strings(&b, doc, "nvcc_flags", fa_code_flags, -1);
        version_strings(&b, doc, "modes", modes, MODE_COUNT);
        return emit_json(json_done(&b, doc));
    }
    printf("fasweep %s (build %s, archs %s, %d instances)\n", FASWEEP_VERSION, fa_build_id(),
           fa_build_archs(), fa_registry_count());
    return CLI_OK;
}

CLI_MAIN_NO_ARGS(version, version_args, version_run, 0)

CLI_COMMAND(version, .summary = "print the version and build id",
            .usage = "[--json] (or fasweep --version)",
            .about = "Prints the fasweep version, the build id of the compiled kernels and their\n"
                     "architectures; with --json also the nvcc flags the kernels (and kernel\n"
                     "variants, eval --kernel) are compiled with and the timing modes.\n",
            .exit = "0 ok, 2 a bad option or an argument was given.");
