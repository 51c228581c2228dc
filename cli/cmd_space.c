/* cmd_space.c - the commands about a space, this binary and the GPU:
 * plan, grid, list, version (contract: cli.h). */
#include <cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../kernels/family.h"
#include "cli.h"
#include "../grid/plan.h"
#include "../sweep/run.h"
#include "../grid/shard.h"
#include "../grid/space.h"
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

/* The space at path, planned against this build, then cut to this
 * process's shard. Returns 0, or the exit status after printing why. */
static int load_sharded_plan(const char *path, const char *shard_opt, space *s, plan *p)
{
    const int rc = cli_load_plan(path, s, p);
    return rc ? rc : apply_shard(s, p, shard_opt);
}

static void plan_print_point(const space *s, const plan_point *pt, FILE *out)
{
    char prob[64], cfg[64], why[256];
    space_problem_format(&s->problems[pt->problem], prob, sizeof prob);
    fa_config_format(&pt->cfg, cfg, sizeof cfg);
    plan_reject_reason(pt, s->smem_limit, why, sizeof why);
    if (why[0])
        fprintf(out, "%-22s %-24s %8ld  %-12s %s\n", prob, cfg, pt->smem_bytes,
                plan_reason_code(pt->reason), why);
    else /* no trailing blanks on accepted rows */
        fprintf(out, "%-22s %-24s %8ld  %s\n", prob, cfg, pt->smem_bytes,
                plan_reason_code(pt->reason));
}

/* The table: every accepted point and every point a static rule rejects;
 * points only missing from this binary are counted unless `all`. */
static void plan_print(const space *s, const plan *p, int all, FILE *out)
{
    fprintf(out, "%-22s %-24s %8s  %-12s %s\n", "problem", "config", "smem_B", "reason", "detail");
    for (size_t i = 0; i < p->n; i++)
        if (all || p->points[i].reason != PLAN_REJ_NOT_COMPILED)
            plan_print_point(s, &p->points[i], out);
    fprintf(out, "\nspace %s (%s): %zu points, %zu accepted, %zu rejected\n", s->name, s->path,
            p->n, p->n_accepted, p->n - p->n_accepted);
    for (int r = 1; r < PLAN_REASON_COUNT; r++)
        if (p->by_reason[r])
            fprintf(out, "  %-12s %zu\n", plan_reason_code((plan_reason)r), p->by_reason[r]);
    if (!all && p->by_reason[PLAN_REJ_NOT_COMPILED])
        fprintf(out, "(%zu points are valid but not compiled into this binary; --all lists them)\n",
                p->by_reason[PLAN_REJ_NOT_COMPILED]);
}

static cJSON *plan_point_json(const space *s, const plan_point *pt)
{
    char prob[64], cfg[64], why[256];
    space_problem_format(&s->problems[pt->problem], prob, sizeof prob);
    fa_config_format(&pt->cfg, cfg, sizeof cfg);
    plan_reject_reason(pt, s->smem_limit, why, sizeof why);
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const fa_family *f = fa_family_of(&pt->cfg);
    const int ok = cJSON_AddStringToObject(o, "problem", prob) &&
                   cJSON_AddStringToObject(o, "family", f ? f->name : "?") &&
                   cJSON_AddStringToObject(o, "config", cfg) &&
                   cJSON_AddNumberToObject(o, "smem_bytes", (double)pt->smem_bytes) &&
                   cJSON_AddBoolToObject(o, "accepted", pt->reason == PLAN_OK) &&
                   cJSON_AddStringToObject(o, "reason", plan_reason_code(pt->reason)) &&
                   cJSON_AddStringToObject(o, "detail", why);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *plan_counts_json(const plan *p)
{
    cJSON *c = cJSON_CreateObject();
    cJSON *by = c ? cJSON_AddObjectToObject(c, "rejected_by_reason") : NULL;
    int ok = by && cJSON_AddNumberToObject(c, "total", (double)p->n) &&
             cJSON_AddNumberToObject(c, "accepted", (double)p->n_accepted) &&
             cJSON_AddNumberToObject(c, "rejected", (double)(p->n - p->n_accepted));
    for (int r = 1; ok && r < PLAN_REASON_COUNT; r++)
        ok = cJSON_AddNumberToObject(by, plan_reason_code((plan_reason)r),
                                     (double)p->by_reason[r]) != NULL;
    if (!ok) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

/* Prints a JSON document and frees it. */
static int plan_print_json(const space *s, const plan *p)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *points = doc ? cJSON_AddArrayToObject(doc, "points") : NULL;
    int ok = points && cJSON_AddStringToObject(doc, "space", s->name) &&
             cJSON_AddStringToObject(doc, "family", fa_family_get(s->family)->name) &&
             cJSON_AddStringToObject(doc, "path", s->path) &&
             cJSON_AddStringToObject(doc, "hash", s->hash) &&
             cJSON_AddNumberToObject(doc, "smem_limit", (double)s->smem_limit);
    for (size_t i = 0; ok && i < p->n; i++) {
        cJSON *pt = plan_point_json(s, &p->points[i]);
        ok = pt && cJSON_AddItemToArray(points, pt);
        if (!ok)
            cJSON_Delete(pt);
    }
    cJSON *counts = ok ? plan_counts_json(p) : NULL;
    ok = counts && cJSON_AddItemToObject(doc, "counts", counts);
    if (!ok) {
        cJSON_Delete(counts);
        cJSON_Delete(doc);
        doc = NULL;
    }
    return cli_emit_json(doc);
}

static int show_plan(const space *s, const plan *p, int json, int all)
{
    if (json)
        return plan_print_json(s, p);
    plan_print(s, p, all, stdout);
    return CLI_OK;
}

static const char *const usage_plan =
    "usage: fasweep plan --space FILE [--json] [--all] [--shard I/N]\n"
    "\n"
    "Enumerates the grid of a space file and checks each point against the static rules\n"
    "(head_dim, warp_rows, chunks, smem) and this binary's compiled instances\n"
    "(not_compiled). Needs no GPU.\n"
    "\n"
    "  --space FILE  the space (JSON) to plan\n"
    "  --all         also list points that are valid but not compiled into this binary\n"
    "                (by default they are only counted)\n"
    "  --json        one JSON document: every point, and the counts\n"
    "  --shard I/N   only part I (0-based) of N of the grid: a deterministic split,\n"
    "                balanced by expected cost; without it a Slurm job array\n"
    "                (SLURM_ARRAY_TASK_ID/_MIN/_MAX or _COUNT) or srun tasks\n"
    "                (SLURM_PROCID/SLURM_NTASKS) choose the part\n"
    "\n"
    "exit status: 0 ok, 2 bad space file or option.\n";

static int plan_main(int argc, char **argv)
{
    const char *path = NULL, *shard_opt = NULL;
    int json = 0, all = 0, first;
    const cli_opt opts[] = {{"space", 0, CLI_PATH, &path, 0, 0},
                            {"json", 0, CLI_FLAG, &json, 0, 0},
                            {"all", 0, CLI_FLAG, &all, 0, 0},
                            {"shard", 0, CLI_STR, &shard_opt, 0, 0},
                            {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    if (!path)
        return cli_usage_error("--space FILE is required");
    space s;
    plan p;
    if ((rc = load_sharded_plan(path, shard_opt, &s, &p)))
        return rc;
    rc = show_plan(&s, &p, json, all);
    plan_free(&p);
    return rc;
}

const cli_command cmd_plan = {"plan", plan_main, usage_plan};

/* ---- grid ----------------------------------------------------------------------------------- */

/* --devices all|N[,N...]: one worker per listed GPU. "all" asks the driver
 * (only when probe is set: a dry run needs no GPU). Returns 0, or 1 after
 * printing a usage error. */
static int parse_devices(const char *text, int probe, run_options *o)
{
    if (strcmp(text, "all") == 0) {
        char msg[512] = "";
        const int n = probe ? worker_gpu_count(msg, sizeof msg) : 1; /* msg: grid says it again */
        if (probe && n <= 0)
            return 0; /* grid's own check says there is no GPU (exit 1) */
        o->n_devices = n < RUN_MAX_DEVICES ? n : RUN_MAX_DEVICES;
        for (int i = 0; i < o->n_devices; i++)
            o->devices[i] = i;
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
            const char *share = getenv("FASWEEP_TEST_SHARE_GPU");
            for (int i = 0; i < o->n_devices && !(share && strcmp(share, "1") == 0); i++)
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
    o->device = o->devices[0];
    if (o->n_devices == 1)
        o->n_devices = 0; /* one GPU: the plain single-worker path */
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

static int grid_run(const space *s, const plan *p, const char *path, run_options *o)
{
    char msg[512] = "";
    if (worker_gpu_count(msg, sizeof msg) <= 0) {
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
    if (rc < 0) {
        cli_say("store error while sweeping into %s; results committed so far are kept", path);
        return CLI_FAIL;
    }
    return (rc != 0 || sum.interrupted) ? CLI_FAIL : CLI_OK;
}

static const char *const usage_grid =
    "usage: fasweep grid --space FILE [--store PATH] [--dry-run] [--remeasure]\n"
    "                    [--refine K] [--device N | --devices all|N,N...] [--shard I/N]\n"
    "\n"
    "Checks every accepted point of the space against the reference and times it on the\n"
    "GPU, for each measurement mode of the space; every result is committed to the store\n"
    "as soon as it exists. Points already in the store are skipped (resume).\n"
    "\n"
    "  --space FILE   the space (JSON) to sweep\n"
    "  --store PATH   results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "  --dry-run      print the plan (as `fasweep plan`) and stop; needs no GPU\n"
    "  --remeasure    measure points the store already has again\n"
    "  --refine K     afterwards re-measure the K best per problem and mode, head to head\n"
    "  --device N     CUDA device ordinal (default 0)\n"
    "  --devices L    several GPUs of this host: all, or ordinals like 0,2; one worker\n"
    "                 process per GPU, tasks go to whichever is free, one store writer;\n"
    "                 the GPUs must be one model (results are keyed by it)\n"
    "  --shard I/N    measure only part I of N of the grid (see fasweep plan --help);\n"
    "                 under a Slurm job array or srun the part comes from Slurm\n"
    "\n"
    "Ctrl-C stops after the current config; a second Ctrl-C aborts at once.\n"
    "exit status: 0 swept to the end (even if some configs failed), 1 no GPU, interrupted\n"
    "or store failure, 2 bad space file or option.\n";

static int grid_main(int argc, char **argv)
{
    const char *path = NULL, *store_opt = NULL, *shard_opt = NULL, *devices_opt = NULL;
    int dry = 0, first;
    run_options o;
    memset(&o, 0, sizeof o);
    const cli_opt opts[] = {{"space", 0, CLI_PATH, &path, 0, 0},
                            {"store", 0, CLI_PATH, &store_opt, 0, 0},
                            {"dry-run", 0, CLI_FLAG, &dry, 0, 0},
                            {"remeasure", 0, CLI_FLAG, &o.remeasure, 0, 0},
                            {"refine", 0, CLI_INT, &o.refine_k, 0, 1000000},
                            {"device", 0, CLI_INT, &o.device, 0, 1024},
                            {"shard", 0, CLI_STR, &shard_opt, 0, 0},
                            {"devices", 0, CLI_STR, &devices_opt, 0, 0},
                            {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    if (!path)
        return cli_usage_error("--space FILE is required");
    if (devices_opt && parse_devices(devices_opt, !dry, &o))
        return CLI_USAGE;
    space s;
    plan p;
    if ((rc = load_sharded_plan(path, shard_opt, &s, &p)))
        return rc;
    rc = dry ? show_plan(&s, &p, 0, 0) : grid_run(&s, &p, cli_store_path(store_opt), &o);
    plan_free(&p);
    return rc;
}

const cli_command cmd_grid = {"grid", grid_main, usage_grid};

/* ---- list ----------------------------------------------------------------------------------- */

/* One instance: its family, name, axes (by the family's names) and the
 * derived code paths the family reports. */
static cJSON *list_instance_json(const fa_instance *in)
{
    const fa_family *f = fa_family_of(&in->cfg);
    const int v[FA_CONFIG_SLOTS] = {in->cfg.head_dim,  in->cfg.block_m, in->cfg.block_n,
                                    in->cfg.num_warps, in->cfg.stages,  in->cfg.swizzle};
    cJSON *o = cJSON_CreateObject();
    int ok = f && o && cJSON_AddStringToObject(o, "name", in->name) &&
             cJSON_AddStringToObject(o, "family", f->name);
    for (int i = 0; ok && i < FA_CONFIG_SLOTS; i++)
        ok = !f->axes[i].name || cJSON_AddNumberToObject(o, f->axes[i].name, v[i]);
    ok = ok && cJSON_AddNumberToObject(o, "smem_bytes", (double)in->smem_bytes);
    cJSON *paths = ok ? cJSON_AddObjectToObject(o, "paths") : NULL;
    ok = paths != NULL;
    for (int i = 0; ok && i < f->n_paths; i++)
        ok = cJSON_AddBoolToObject(paths, f->paths[i], f->path(&in->cfg, i)) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int list_json(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = doc ? cJSON_AddArrayToObject(doc, "instances") : NULL;
    int ok = arr && cJSON_AddStringToObject(doc, "build", fa_build_id()) &&
             cJSON_AddStringToObject(doc, "archs", fa_build_archs()) &&
             cJSON_AddNumberToObject(doc, "count", fa_registry_count());
    for (int i = 0; ok && i < fa_registry_count(); i++) {
        cJSON *o = list_instance_json(fa_registry_get(i));
        ok = o && cJSON_AddItemToArray(arr, o);
        if (!ok)
            cJSON_Delete(o);
    }
    if (!ok) {
        cJSON_Delete(doc);
        doc = NULL;
    }
    return cli_emit_json(doc);
}

static void list_table(void)
{
    printf("build %s  archs %s  instances %d\n", fa_build_id(), fa_build_archs(),
           fa_registry_count());
    printf("%-24s %8s %7s %7s %9s %6s %7s %8s  %s\n", "name", "HEAD_DIM", "BLOCK_M", "BLOCK_N",
           "NUM_WARPS", "STAGES", "SWIZZLE", "smem_B", "paths");
    for (int i = 0; i < fa_registry_count(); i++) {
        const fa_instance *in = fa_registry_get(i);
        const fa_config *c = &in->cfg;
        const fa_family *f = fa_family_of(c);
        char paths[96] = "";
        for (int p = 0, used = 0; f && p < f->n_paths; p++)
            if (f->path(c, p))
                used += snprintf(paths + used, sizeof paths - (size_t)used, "%s%s", used ? "," : "",
                                 f->paths[p]);
        printf("%-24s %8d %7d %7d %9d %6d %7d %8ld  %s\n", in->name, c->head_dim, c->block_m,
               c->block_n, c->num_warps, c->stages, c->swizzle, in->smem_bytes,
               paths[0] ? paths : "-");
    }
}

static const char *const usage_list =
    "usage: fasweep list [--json]\n"
    "\n"
    "The kernel instances compiled into this binary (config, shared memory per block),\n"
    "its build id and the GPU architectures it holds code for. Needs no GPU.\n"
    "\n"
    "  --json   one JSON document\n";

static int list_main(int argc, char **argv)
{
    int json = 0, first;
    const cli_opt opts[] = {{"json", 0, CLI_FLAG, &json, 0, 0}, {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    if (json)
        return list_json();
    list_table();
    return CLI_OK;
}

const cli_command cmd_list = {"list", list_main, usage_list};

/* ---- version and help ----------------------------------------------------------------------- */

static const char *const usage_version = "usage: fasweep version (or fasweep --version)\n"
                                         "\n"
                                         "Prints the fasweep version, the build id of the "
                                         "compiled kernels and their architectures.\n";

static int version_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_version, stdout);
        return CLI_OK;
    }
    if (argc > 1)
        return cli_usage_error("takes no arguments, got '%s'", argv[1]);
    printf("fasweep %s (build %s, archs %s, %d instances)\n", FASWEEP_VERSION, fa_build_id(),
           fa_build_archs(), fa_registry_count());
    return CLI_OK;
}

const cli_command cmd_version = {"version", version_main, usage_version};
