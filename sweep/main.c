/* main.c - the fasweep command line. It only parses arguments and calls the
 * modules (space, plan, run, store, store_io, rank); each subcommand is one
 * small function below.
 *
 * Conventions: data on stdout, diagnostics on stderr with a "fasweep: "
 * prefix. Exit status 0 success, 1 failure (no GPU, missing store, nothing
 * found, interrupted), 2 usage or input error (unknown command or option,
 * missing or bad value, bad space file, bad import line).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "../kernels/fa_config.h"
#include "../kernels/fa_launch.h"
#include "../seeds/rank.h"
#include "../store/store.h"
#include "../store/store_io.h"
#include "plan.h"
#include "run.h"
#include "shard.h"
#include "space.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

#define DEFAULT_STORE "results.lmdb"
#define DEFAULT_SEEDS_DIR "seeds"
#define DEFAULT_K 8

/* ---- messages and usage --------------------------------------------------------------------- */

static void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fasweep: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *const usage_main =
    "usage: fasweep COMMAND [OPTIONS]\n"
    "\n"
    "Sweeps one templated FlashAttention-forward CUDA kernel over a space of configs,\n"
    "stores every result in an LMDB store, ranks them and writes Top-K seed files.\n"
    "\n"
    "commands:\n"
    "  plan     show the grid of a space: accepted points, rejected ones with reasons\n"
    "  grid     check and time every accepted point on the GPU, into the store\n"
    "  list     the kernel instances compiled into this binary\n"
    "  topk     rank stored results per (device, problem, mode); write seed files\n"
    "  export   write stored records as CSV or JSON lines\n"
    "  import   add JSON-lines records to the store (all or nothing)\n"
    "  merge    merge other stores into the store\n"
    "  show     print one stored record as JSON\n"
    "  version  print the version and build id\n"
    "\n"
    "`fasweep COMMAND --help` describes a command. The store is --store PATH, else\n"
    "$FASWEEP_STORE, else ./" DEFAULT_STORE ".\n"
    "exit status: 0 success, 1 failure, 2 usage or input error.\n";

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *usage;
} command;

static const command *current; /* the command being run, for its messages */

/* Prints a usage error naming the command and where to look; returns 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fasweep %s: ", current->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `fasweep %s --help`)\n", current->name);
    va_end(ap);
    return EXIT_USAGE;
}

/* getopt_long's '?' and ':' results as a usage error (opterr is 0 so the
 * message is ours alone). */
static int option_error(int c, char **argv)
{
    const char *arg = argv[optind - 1];
    if (c == ':')
        return usage_error("option %s needs a value", arg);
    if (optopt && !(arg[0] == '-' && arg[1] == '-'))
        return usage_error("unknown option -%c", optopt);
    return usage_error("unknown option %s", arg);
}

static int print_usage(void)
{
    fputs(current->usage, stdout);
    return EXIT_OK;
}

/* ---- argument values ------------------------------------------------------------------------ */

/* A whole decimal int in [lo, hi]. Returns 0, or a usage error. */
static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return usage_error("%s wants an integer from %ld to %ld, got '%s'", opt, lo, hi, s);
    *out = (int)v;
    return 0;
}

/* Canonical problem text from "4,8,512,64" or "b4.h8.s512.d64.nc". */
static int parse_problem(const char *s, char *buf, size_t n)
{
    space_problem p;
    if (space_problem_parse(s, &p) != 0)
        return usage_error("--problem wants B,H,S,D (e.g. 4,8,512,64) or the canonical text "
                           "(e.g. b4.h8.s512.d64.nc), got '%s'",
                           s);
    space_problem_format(&p, buf, n);
    return 0;
}

static int parse_mode(const char *s)
{
    if (strcmp(s, "hot") != 0 && strcmp(s, "cold") != 0)
        return usage_error("--mode wants hot or cold, got '%s'", s);
    return 0;
}

/* Takes optarg as the value of path option opt; an empty path is a usage
 * error (it names no file, and would otherwise surface as a confusing
 * failure further down). */
static int path_arg(const char *opt, const char **out)
{
    if (!*optarg)
        return usage_error("%s wants a path, got an empty string", opt);
    *out = optarg;
    return 0;
}

static const char *store_path(const char *opt)
{
    if (opt)
        return opt;
    const char *env = getenv("FASWEEP_STORE");
    return (env && *env) ? env : DEFAULT_STORE;
}

/* ---- store access --------------------------------------------------------------------------- */

/* Opens the store; a read-only open of a store that does not exist is a
 * clear failure instead of an LMDB error. NULL after printing why. */
static store *open_store(const char *path, int read_only)
{
    struct stat st;
    if (read_only && stat(path, &st) != 0) {
        die_msg("no results store at %s (%s); run `fasweep grid` first, or pass --store PATH "
                "or set FASWEEP_STORE",
                path, strerror(errno));
        return NULL;
    }
    store *s = NULL;
    char err[1024];
    const int rc = store_open(path, read_only, &s, err, sizeof err);
    if (rc != STORE_OK) {
        die_msg("%s", err[0] ? err : store_strerror(rc));
        return NULL;
    }
    return s;
}

static int store_fail(store *s, int rc, const char *what)
{
    die_msg("%s failed: %s (%s)", what, store_strerror(rc), s ? store_last_error(s) : "");
    return EXIT_FAIL;
}

/* ---- plan and grid --dry-run ---------------------------------------------------------------- */

static int plan_compiled(const fa_config *c, void *ctx)
{
    (void)ctx;
    return fa_registry_find(c) != NULL;
}

/* Loads a space and builds its plan against this binary's instances. Returns
 * 0, or the exit status after printing why. */
static int load_plan(const char *path, space *s, plan *p)
{
    char err[SPACE_ERR_LEN];
    if (space_load(path, s, err, sizeof err) != 0) {
        die_msg("%s", err);
        return EXIT_USAGE;
    }
    if (plan_build(s, plan_compiled, NULL, p) != 0) {
        die_msg("out of memory building the plan of %s", path);
        return EXIT_FAIL;
    }
    return 0;
}

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
        die_msg("%s", err);
        plan_free(p);
        return EXIT_USAGE;
    }
    if (sh.count <= 1)
        return 0;
    const size_t before = p->n;
    if (shard_filter(s, p, sh) != 0) {
        die_msg("out of memory splitting the plan into %d shards", sh.count);
        plan_free(p);
        return EXIT_FAIL;
    }
    fprintf(stderr, "fasweep: shard %d/%d%s: %zu of %zu points (%zu accepted)\n", sh.index,
            sh.count, shard_opt ? "" : " (from Slurm)", p->n, before, p->n_accepted);
    return 0;
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
    const int ok = cJSON_AddStringToObject(o, "problem", prob) &&
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
static int emit_json(cJSON *doc)
{
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        die_msg("out of memory printing JSON");
        return EXIT_FAIL;
    }
    puts(text);
    cJSON_free(text);
    return EXIT_OK;
}

static int plan_print_json(const space *s, const plan *p)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *points = doc ? cJSON_AddArrayToObject(doc, "points") : NULL;
    int ok = points && cJSON_AddStringToObject(doc, "space", s->name) &&
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
    return emit_json(doc);
}

static int show_plan(const space *s, const plan *p, int json, int all)
{
    if (json)
        return plan_print_json(s, p);
    plan_print(s, p, all, stdout);
    return EXIT_OK;
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

static int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"space", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'},
        {"all", no_argument, NULL, 'a'},         {"shard", required_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    const char *path = NULL, *shard_opt = NULL;
    int json = 0, all = 0, c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (path_arg("--space", &path))
                return EXIT_USAGE;
            break;
        case 'j':
            json = 1;
            break;
        case 'a':
            all = 1;
            break;
        case 'x':
            shard_opt = optarg;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!path)
        return usage_error("--space FILE is required");
    space s;
    plan p;
    int rc = load_plan(path, &s, &p);
    if (rc || (rc = apply_shard(&s, &p, shard_opt)))
        return rc;
    rc = show_plan(&s, &p, json, all);
    plan_free(&p);
    return rc;
}

/* ---- grid ----------------------------------------------------------------------------------- */

/* --devices all|N[,N...]: one worker per listed GPU. "all" asks the driver
 * (only when probe is set: a dry run needs no GPU). Returns 0, or 1 after
 * printing a usage error. */
static int parse_devices(const char *text, int probe, run_options *o)
{
    if (strcmp(text, "all") == 0) {
        char msg[512] = "";
        const int n = probe ? run_gpu_count(msg, sizeof msg) : 1; /* msg: grid says it again */
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
                usage_error("bad --devices '%s': expected all, or CUDA ordinals like 0,2 "
                            "(at most %d)",
                            text, RUN_MAX_DEVICES);
                return 1;
            }
            for (int i = 0; i < o->n_devices; i++)
                if (o->devices[i] == (int)v) {
                    usage_error("bad --devices '%s': GPU %ld is listed twice", text, v);
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
    if (run_gpu_count(msg, sizeof msg) <= 0) {
        die_msg("no CUDA GPU found: %s -- grid needs a GPU; use `fasweep plan` to inspect a space "
                "without one",
                msg[0] ? msg : "no device");
        return EXIT_FAIL;
    }
    if (p->n_accepted == 0) {
        die_msg("no point of %s is accepted (%zu rejected); see `fasweep plan --space %s --all`",
                s->path, p->n, s->path);
        return EXIT_FAIL;
    }
    grid_install_sigint();
    o->stop = &grid_stop;
    o->progress = stderr;
    run_summary sum;
    memset(&sum, 0, sizeof sum);
    const int rc = run_grid(s, p, path, o, &sum);
    run_print_summary(&sum, stdout);
    if (rc < 0) {
        die_msg("store error while sweeping into %s; results committed so far are kept", path);
        return EXIT_FAIL;
    }
    return (rc != 0 || sum.interrupted) ? EXIT_FAIL : EXIT_OK;
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
    "  --store PATH   results store (default $FASWEEP_STORE, else ./" DEFAULT_STORE ")\n"
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

static int cmd_grid(int argc, char **argv)
{
    static const struct option opts[] = {
        {"space", required_argument, NULL, 's'},  {"store", required_argument, NULL, 'S'},
        {"dry-run", no_argument, NULL, 'n'},      {"remeasure", no_argument, NULL, 'r'},
        {"refine", required_argument, NULL, 'k'}, {"device", required_argument, NULL, 'd'},
        {"shard", required_argument, NULL, 'x'},  {"devices", required_argument, NULL, 'D'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *path = NULL, *store_opt = NULL, *shard_opt = NULL, *devices_opt = NULL;
    int dry = 0, c;
    run_options o;
    memset(&o, 0, sizeof o);
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (path_arg("--space", &path))
                return EXIT_USAGE;
            break;
        case 'S':
            if (path_arg("--store", &store_opt))
                return EXIT_USAGE;
            break;
        case 'n':
            dry = 1;
            break;
        case 'r':
            o.remeasure = 1;
            break;
        case 'k':
            if (parse_int("--refine", optarg, 0, 1000000, &o.refine_k))
                return EXIT_USAGE;
            break;
        case 'd':
            if (parse_int("--device", optarg, 0, 1024, &o.device))
                return EXIT_USAGE;
            break;
        case 'x':
            shard_opt = optarg;
            break;
        case 'D':
            devices_opt = optarg;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!path)
        return usage_error("--space FILE is required");
    if (devices_opt && parse_devices(devices_opt, !dry, &o))
        return EXIT_USAGE;
    space s;
    plan p;
    int rc = load_plan(path, &s, &p);
    if (rc || (rc = apply_shard(&s, &p, shard_opt)))
        return rc;
    rc = dry ? show_plan(&s, &p, 0, 0) : grid_run(&s, &p, store_path(store_opt), &o);
    plan_free(&p);
    return rc;
}

/* ---- list ----------------------------------------------------------------------------------- */

static cJSON *list_instance_json(const fa_instance *in)
{
    cJSON *o = cJSON_CreateObject();
    const int ok = o && cJSON_AddStringToObject(o, "name", in->name) &&
                   cJSON_AddNumberToObject(o, "HEAD_DIM", in->cfg.head_dim) &&
                   cJSON_AddNumberToObject(o, "BLOCK_M", in->cfg.block_m) &&
                   cJSON_AddNumberToObject(o, "BLOCK_N", in->cfg.block_n) &&
                   cJSON_AddNumberToObject(o, "NUM_WARPS", in->cfg.warps) &&
                   cJSON_AddNumberToObject(o, "STAGES", in->cfg.stages) &&
                   cJSON_AddNumberToObject(o, "SWIZZLE", in->cfg.swizzle) &&
                   cJSON_AddNumberToObject(o, "smem_bytes", (double)fa_smem_bytes(&in->cfg));
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
    return emit_json(doc);
}

static void list_table(void)
{
    printf("build %s  archs %s  instances %d\n", fa_build_id(), fa_build_archs(),
           fa_registry_count());
    printf("%-24s %8s %7s %7s %9s %6s %7s %8s\n", "name", "HEAD_DIM", "BLOCK_M", "BLOCK_N",
           "NUM_WARPS", "STAGES", "SWIZZLE", "smem_B");
    for (int i = 0; i < fa_registry_count(); i++) {
        const fa_instance *in = fa_registry_get(i);
        const fa_config *c = &in->cfg;
        printf("%-24s %8d %7d %7d %9d %6d %7d %8ld\n", in->name, c->head_dim, c->block_m,
               c->block_n, c->warps, c->stages, c->swizzle, fa_smem_bytes(c));
    }
}

static const char *const usage_list =
    "usage: fasweep list [--json]\n"
    "\n"
    "The kernel instances compiled into this binary (config, shared memory per block),\n"
    "its build id and the GPU architectures it holds code for. Needs no GPU.\n"
    "\n"
    "  --json   one JSON document\n";

static int cmd_list(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int json = 0, c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (json)
        return list_json();
    list_table();
    return EXIT_OK;
}

/* ---- topk ----------------------------------------------------------------------------------- */

typedef struct topk_args {
    int k, json, no_seeds;
    const char *device, *mode, *seeds_dir, *store;
    char problem[64];
    int has_problem;
} topk_args;

static long topk_ok_count(const rank_result *r)
{
    long n = 0;
    for (int i = 0; i < r->n_groups; i++)
        n += r->groups[i].n_top;
    return n;
}

static long topk_failed_count(const rank_result *r)
{
    long n = 0;
    for (int i = 0; i < r->n_groups; i++)
        n += r->groups[i].n_failed;
    return n;
}

/* Prints the ranking and writes seeds; the exit status. */
static int topk_report(const topk_args *a, const char *path, long stored, const rank_result *r)
{
    if (r->n_groups == 0) {
        if (stored > 0)
            die_msg("no results in %s match the filter (device %s, problem %s, mode %s)", path,
                    a->device ? a->device : "any", a->has_problem ? a->problem : "any",
                    a->mode ? a->mode : "hot");
        else
            die_msg("no results in %s; run fasweep grid first", path);
        return EXIT_FAIL;
    }
    const int rc = a->json ? (rank_print_json(r, stdout) ? EXIT_FAIL : EXIT_OK)
                           : (rank_print(r, stdout), EXIT_OK);
    if (rc)
        return rc;
    if (topk_ok_count(r) == 0) {
        die_msg("no ok kernel results in %s (%ld matching kernel records failed: wrong, "
                "crashed or timeout; `fasweep show` prints their errors); no seeds written",
                path, topk_failed_count(r));
        return EXIT_FAIL;
    }
    if (a->no_seeds)
        return EXIT_OK;
    char err[1024];
    if (seeds_write(r, a->seeds_dir, stderr, err, sizeof err) != 0) {
        die_msg("%s", err);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

static int topk_run(const topk_args *a)
{
    const char *path = store_path(a->store);
    store *s = open_store(path, 1);
    if (!s)
        return EXIT_FAIL;
    rank_filter f = {
        .device = a->device, .problem = a->has_problem ? a->problem : NULL, .mode = a->mode};
    rank_result r;
    const int src = rank_topk(s, &f, a->k, &r);
    int rc;
    if (src != STORE_OK)
        rc = store_fail(s, src, "ranking");
    else
        rc = topk_report(a, path, store_count(s), &r);
    rank_free(&r);
    store_close(s);
    return rc;
}

static const char *const usage_topk =
    "usage: fasweep topk [-k N] [--problem P] [--device NAME] [--mode hot|cold]\n"
    "                    [--seeds-dir DIR] [--no-seeds] [--json] [--store PATH]\n"
    "\n"
    "Ranks the stored \"ok\" kernel results of each (device, problem, mode) by median time\n"
    "(ties: lower noise, then config text), prints the K best of each with their speedup\n"
    "over the fastest stored baseline, and writes one seeds file per group\n"
    "(DIR/DEVICE_PROBLEM_MODE.json, format in seeds/README.md; paths on stderr).\n"
    "\n"
    "  -k N             how many per group (default 8)\n"
    "  --problem P      only this problem: B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc\n"
    "  --device NAME    only this GPU model, exactly as stored (e.g. \"NVIDIA L4\")\n"
    "  --mode M         hot (default) or cold L2\n"
    "  --seeds-dir DIR  where seeds go (default ./" DEFAULT_SEEDS_DIR ")\n"
    "  --no-seeds       print only\n"
    "  --json           print one JSON document instead of the table\n"
    "  --store PATH     results store (default $FASWEEP_STORE, else ./" DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 missing or empty store, no match, only failed results or a seeds\n"
    "write error, 2 bad option.\n";

static int cmd_topk(int argc, char **argv)
{
    static const struct option opts[] = {{"problem", required_argument, NULL, 'p'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"mode", required_argument, NULL, 'm'},
                                         {"seeds-dir", required_argument, NULL, 'D'},
                                         {"no-seeds", no_argument, NULL, 'N'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"store", required_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    topk_args a = {.k = DEFAULT_K, .seeds_dir = DEFAULT_SEEDS_DIR};
    int c;
    while ((c = getopt_long(argc, argv, ":hk:", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (parse_int("-k", optarg, 1, INT_MAX, &a.k))
                return EXIT_USAGE;
            break;
        case 'p':
            if (parse_problem(optarg, a.problem, sizeof a.problem))
                return EXIT_USAGE;
            a.has_problem = 1;
            break;
        case 'd':
            a.device = optarg;
            break;
        case 'm':
            if (parse_mode(optarg))
                return EXIT_USAGE;
            a.mode = optarg;
            break;
        case 'D':
            if (path_arg("--seeds-dir", &a.seeds_dir))
                return EXIT_USAGE;
            break;
        case 'N':
            a.no_seeds = 1;
            break;
        case 'j':
            a.json = 1;
            break;
        case 'S':
            if (path_arg("--store", &a.store))
                return EXIT_USAGE;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return topk_run(&a);
}

/* ---- export --------------------------------------------------------------------------------- */

/* Exports into a temp file next to `file`, renamed over it only when the
 * whole export succeeded: a failed export never leaves half a file. */
static int export_to_file(store *s, const char *prefix, store_format fmt, const char *file)
{
    char tmp[PATH_MAX + 32];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", file) >= (int)sizeof tmp)
        return usage_error("-o path too long: %s", file);
    const int fd = mkstemp(tmp);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        die_msg("cannot create %s: %s; check the directory of -o exists and is writable", tmp,
                strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return EXIT_FAIL;
    }
    const int rc = store_export(s, prefix, fmt, out);
    const int werr = fflush(out) != 0 || ferror(out);
    const int cerr = fclose(out) != 0;
    if (rc != STORE_OK || werr || cerr) {
        unlink(tmp);
        if (rc != STORE_OK)
            return store_fail(s, rc, "export");
        die_msg("cannot write %s: %s", file, strerror(errno));
        return EXIT_FAIL;
    }
    const mode_t um = umask(0);
    umask(um);
    chmod(tmp, 0666 & ~um);
    if (rename(tmp, file) != 0) {
        die_msg("cannot rename %s to %s: %s", tmp, file, strerror(errno));
        unlink(tmp);
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

static int export_run(const char *path, const char *prefix, store_format fmt, const char *file)
{
    store *s = open_store(path, 1);
    if (!s)
        return EXIT_FAIL;
    int rc;
    if (file) {
        rc = export_to_file(s, prefix, fmt, file);
    } else {
        const int src = store_export(s, prefix, fmt, stdout);
        rc = src != STORE_OK ? store_fail(s, src, "export") : EXIT_OK;
        if (rc == EXIT_OK && fflush(stdout) != 0) {
            die_msg("cannot write the export to stdout: %s", strerror(errno));
            rc = EXIT_FAIL;
        }
    }
    store_close(s);
    return rc;
}

static const char *const usage_export =
    "usage: fasweep export [--format csv|jsonl] [--prefix P] [--store PATH] [-o FILE]\n"
    "\n"
    "Writes stored records in key order: CSV (header row, flat columns) or JSON lines\n"
    "(one record object per line, the format `fasweep import` reads).\n"
    "\n"
    "  --format F    csv or jsonl (default jsonl)\n"
    "  --prefix P    only keys starting with P (keys: DEVICE|PROBLEM|BUILD|CONFIG|MODE)\n"
    "  -o FILE       write FILE (replaced only when the export succeeds); default stdout\n"
    "  --store PATH  results store (default $FASWEEP_STORE, else ./" DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 missing store or write error, 2 bad option.\n";

static int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'}, {"prefix", required_argument, NULL, 'p'},
        {"store", required_argument, NULL, 'S'},  {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char *store_opt = NULL, *prefix = "", *file = NULL;
    store_format fmt = STORE_FMT_JSONL;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "csv") == 0)
                fmt = STORE_FMT_CSV;
            else if (strcmp(optarg, "jsonl") == 0)
                fmt = STORE_FMT_JSONL;
            else
                return usage_error("--format wants csv or jsonl, got '%s'", optarg);
            break;
        case 'p':
            prefix = optarg;
            break;
        case 'S':
            if (path_arg("--store", &store_opt))
                return EXIT_USAGE;
            break;
        case 'o':
            if (path_arg("-o", &file))
                return EXIT_USAGE;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return export_run(store_path(store_opt), prefix, fmt, file);
}

/* ---- import --------------------------------------------------------------------------------- */

/* Removes a store this process created for a failed import, so bad input
 * leaves nothing behind. Only LMDB's two files and the then empty directory
 * go; anything else in it makes rmdir fail and is kept. */
static void remove_new_store(const char *path)
{
    char f[PATH_MAX + 16];
    snprintf(f, sizeof f, "%s/data.mdb", path);
    unlink(f);
    snprintf(f, sizeof f, "%s/lock.mdb", path);
    unlink(f);
    rmdir(path);
}

static int import_run(const char *path, const char *file)
{
    FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
    if (!in) {
        die_msg("cannot read %s: %s", file, strerror(errno));
        return EXIT_USAGE;
    }
    struct stat st;
    const int existed = stat(path, &st) == 0;
    store *s = open_store(path, 0);
    int rc = EXIT_FAIL;
    if (s) {
        long n = 0;
        char err[1024] = "";
        const int src = store_import_jsonl(s, in, file, &n, err, sizeof err);
        if (src == STORE_OK) {
            printf("imported %ld records from %s into %s\n", n, file, path);
            rc = EXIT_OK;
        } else if (src == STORE_EINVAL) {
            /* err names the file and line ("FILE:N: ...") */
            die_msg("%s; nothing was imported", err[0] ? err : store_strerror(src));
            rc = EXIT_USAGE;
        } else {
            die_msg("import of %s failed: %s; nothing was imported", file,
                    err[0] ? err : store_strerror(src));
        }
        store_close(s);
        if (rc != EXIT_OK && !existed)
            remove_new_store(path);
    }
    if (in != stdin)
        fclose(in);
    return rc;
}

static const char *const usage_import =
    "usage: fasweep import FILE.jsonl [--store PATH]\n"
    "\n"
    "Adds the records of a JSON-lines file (as `fasweep export --format jsonl` writes;\n"
    "FILE - reads stdin) to the store in one transaction: all of them or, when any line\n"
    "is bad, none. A record replaces a stored one of the same key.\n"
    "\n"
    "  --store PATH  results store (default $FASWEEP_STORE, else ./" DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 store failure, 2 unreadable file, bad line (named) or option.\n";

/* Options of a command whose only option is --store (import, merge).
 * Returns -1 to go on, else the exit status (help printed, or a usage
 * error). */
static int store_only_options(int argc, char **argv, const char **store_opt)
{
    static const struct option opts[] = {{"store", required_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'S':
            if (path_arg("--store", store_opt))
                return EXIT_USAGE;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    return -1;
}

static int cmd_import(int argc, char **argv)
{
    const char *store_opt = NULL;
    const int rc = store_only_options(argc, argv, &store_opt);
    if (rc >= 0)
        return rc;
    if (argc - optind != 1)
        return usage_error("wants exactly one FILE.jsonl, got %d", argc - optind);
    if (!*argv[optind])
        return usage_error("the FILE.jsonl path is empty");
    return import_run(store_path(store_opt), argv[optind]);
}

/* ---- merge ---------------------------------------------------------------------------------- */

/* Whether a and b name the same existing file (LMDB must never open one
 * environment twice in a process, and merging a store into itself is a
 * mistake anyway). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int merge_run(const char *path, char **srcs, int n)
{
    for (int i = 0; i < n; i++)
        if (same_file(path, srcs[i])) {
            die_msg("cannot merge %s into itself; pass other stores", srcs[i]);
            return EXIT_USAGE;
        }
    store *s = open_store(path, 0);
    if (!s)
        return EXIT_FAIL;
    int rc = EXIT_OK;
    for (int i = 0; i < n && rc == EXIT_OK; i++) {
        store_merge_stats st = {0};
        char err[1024] = "";
        const int src = store_merge(s, srcs[i], &st, err, sizeof err);
        if (src != STORE_OK) {
            die_msg("merge of %s failed: %s; it was not merged%s", srcs[i],
                    err[0] ? err : store_strerror(src),
                    i > 0 ? " (the sources before it were)" : "");
            rc = EXIT_FAIL;
            break;
        }
        printf("%s: added %ld, replaced %ld, kept %ld\n", srcs[i], st.added, st.replaced, st.kept);
    }
    store_close(s);
    return rc;
}

static const char *const usage_merge =
    "usage: fasweep merge SRC.lmdb... [--store PATH]\n"
    "\n"
    "Merges other stores (e.g. from other machines) into the store, each source in one\n"
    "transaction. On a key clash the better record wins: \"ok\" beats any failure; of two\n"
    "\"ok\" records the lower noise, then more samples, then the newer. Prints per source\n"
    "how many records were added, replaced and kept.\n"
    "\n"
    "  --store PATH  destination store (default $FASWEEP_STORE, else ./" DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 a source could not be read or merged, 2 bad option.\n";

static int cmd_merge(int argc, char **argv)
{
    const char *store_opt = NULL;
    const int rc = store_only_options(argc, argv, &store_opt);
    if (rc >= 0)
        return rc;
    if (optind >= argc)
        return usage_error("wants at least one source store SRC.lmdb");
    for (int i = optind; i < argc; i++)
        if (!*argv[i])
            return usage_error("a source store path is empty");
    return merge_run(store_path(store_opt), argv + optind, argc - optind);
}

/* ---- show ----------------------------------------------------------------------------------- */

typedef struct show_args {
    const char *key, *device, *config, *mode, *build, *store;
    char problem[48]; /* as store_record.problem */
    int has_problem;
} show_args;

typedef struct show_match {
    const show_args *a;
    store_record best;
    int n; /* records of the config and mode, over all builds */
} show_match;

/* Keeps the record of this binary's build if there is one, else the newest. */
static int show_visit(const store_record *r, void *ctx)
{
    show_match *m = ctx;
    if (strcmp(r->config, m->a->config) != 0 || strcmp(r->mode, m->a->mode) != 0)
        return 0;
    const int mine = strcmp(r->build, fa_build_id()) == 0;
    const int best_mine = m->n > 0 && strcmp(m->best.build, fa_build_id()) == 0;
    if (m->n == 0 || (mine && !best_mine) || (!best_mine && r->timestamp > m->best.timestamp))
        m->best = *r;
    m->n++;
    return 0;
}

static int show_print(const store_record *r)
{
    return emit_json(store_record_to_json(r));
}

/* Finds the record named by fields; without --build, over every build. */
static int show_by_fields(store *s, const show_args *a, const char *path)
{
    char key[512];
    if (a->build) {
        store_record q;
        memset(&q, 0, sizeof q);
        const int fits = strlen(a->device) < sizeof q.device && strlen(a->build) < sizeof q.build &&
                         strlen(a->config) < sizeof q.config;
        snprintf(q.device, sizeof q.device, "%s", a->device);
        memcpy(q.problem, a->problem, sizeof q.problem);
        snprintf(q.build, sizeof q.build, "%s", a->build);
        snprintf(q.config, sizeof q.config, "%s", a->config);
        snprintf(q.mode, sizeof q.mode, "%s", a->mode);
        if (!fits || store_key(&q, key, sizeof key) != STORE_OK)
            return usage_error("--device, --config and --build must be non-empty, without '|' "
                               "or control characters, and short enough for a key");
        store_record r;
        const int rc = store_get(s, key, &r);
        if (rc == STORE_OK)
            return show_print(&r);
        if (rc != STORE_NOTFOUND)
            return store_fail(s, rc, "lookup");
        die_msg("no record with key '%s' in %s", key, path);
        return EXIT_FAIL;
    }
    show_match m = {.a = a};
    snprintf(key, sizeof key, "%s|%s|", a->device, a->problem);
    const int rc = store_scan(s, key, show_visit, &m);
    if (rc != STORE_OK)
        return store_fail(s, rc, "lookup");
    if (m.n == 0) {
        die_msg("no record for device '%s', problem %s, config %s, mode %s in %s", a->device,
                a->problem, a->config, a->mode, path);
        return EXIT_FAIL;
    }
    if (m.n > 1)
        die_msg("%d builds hold this config; showing build %s (pass --build to choose)", m.n,
                m.best.build);
    return show_print(&m.best);
}

static int show_by_key(store *s, const char *key, const char *path)
{
    store_record r;
    const int rc = store_get(s, key, &r);
    if (rc == STORE_OK)
        return show_print(&r);
    if (rc != STORE_NOTFOUND && rc != STORE_EINVAL)
        return store_fail(s, rc, "lookup");
    die_msg("no record with key '%s' in %s (keys are DEVICE|PROBLEM|BUILD|CONFIG|MODE; "
            "`fasweep export` lists them)",
            key, path);
    return EXIT_FAIL;
}

static int show_run(const show_args *a)
{
    const char *path = store_path(a->store);
    store *s = open_store(path, 1);
    if (!s)
        return EXIT_FAIL;
    const int rc = a->key ? show_by_key(s, a->key, path) : show_by_fields(s, a, path);
    store_close(s);
    return rc;
}

static const char *const usage_show =
    "usage: fasweep show KEY [--store PATH]\n"
    "       fasweep show --device D --problem P --config C [--mode M] [--build B]\n"
    "                    [--store PATH]\n"
    "\n"
    "Prints one stored record as JSON. KEY is DEVICE|PROBLEM|BUILD|CONFIG|MODE (quote it).\n"
    "Without --build, the record of this binary's build is shown if there is one, else\n"
    "the newest of any build.\n"
    "\n"
    "  --device D    GPU model as stored, e.g. \"NVIDIA L4\"\n"
    "  --problem P   B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc\n"
    "  --config C    config text, e.g. d64.m128.n64.w4.s2.z1, or a baseline's name\n"
    "  --mode M      hot (default) or cold\n"
    "  --build B     build id (\"baseline\" for baselines)\n"
    "  --store PATH  results store (default $FASWEEP_STORE, else ./" DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 found, 1 not found or missing store, 2 bad option.\n";

/* Checks the two ways of naming a record exclude each other. */
static int show_check(const show_args *a, int argc)
{
    const int fields = a->device || a->has_problem || a->config || a->build;
    if (argc - optind > 1)
        return usage_error("wants one KEY, got %d arguments", argc - optind);
    if (argc - optind == 1 && fields)
        return usage_error("give either KEY or --device/--problem/--config, not both");
    if (argc - optind == 0 && !(a->device && a->has_problem && a->config))
        return usage_error("wants KEY, or --device, --problem and --config");
    return 0;
}

static int cmd_show(int argc, char **argv)
{
    static const struct option opts[] = {
        {"device", required_argument, NULL, 'd'}, {"problem", required_argument, NULL, 'p'},
        {"config", required_argument, NULL, 'c'}, {"mode", required_argument, NULL, 'm'},
        {"build", required_argument, NULL, 'b'},  {"store", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    show_args a = {.mode = "hot"};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            a.device = optarg;
            break;
        case 'p':
            if (parse_problem(optarg, a.problem, sizeof a.problem))
                return EXIT_USAGE;
            a.has_problem = 1;
            break;
        case 'c':
            a.config = optarg;
            break;
        case 'm':
            if (parse_mode(optarg))
                return EXIT_USAGE;
            a.mode = optarg;
            break;
        case 'b':
            a.build = optarg;
            break;
        case 'S':
            if (path_arg("--store", &a.store))
                return EXIT_USAGE;
            break;
        case 'h':
            return print_usage();
        default:
            return option_error(c, argv);
        }
    }
    if (show_check(&a, argc))
        return EXIT_USAGE;
    if (optind < argc)
        a.key = argv[optind];
    return show_run(&a);
}

/* ---- version and help ----------------------------------------------------------------------- */

static const char *const usage_version = "usage: fasweep version (or fasweep --version)\n"
                                         "\n"
                                         "Prints the fasweep version, the build id of the "
                                         "compiled kernels and their architectures.\n";

static int cmd_version(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return print_usage();
    if (argc > 1)
        return usage_error("takes no arguments, got '%s'", argv[1]);
    printf("fasweep %s (build %s, archs %s, %d instances)\n", FASWEEP_VERSION, fa_build_id(),
           fa_build_archs(), fa_registry_count());
    return EXIT_OK;
}

static int cmd_help(int argc, char **argv);

static const char *const usage_help = "usage: fasweep help [COMMAND]\n";

static const command commands[] = {
    {"plan", cmd_plan, usage_plan},          {"grid", cmd_grid, usage_grid},
    {"list", cmd_list, usage_list},          {"topk", cmd_topk, usage_topk},
    {"export", cmd_export, usage_export},    {"import", cmd_import, usage_import},
    {"merge", cmd_merge, usage_merge},       {"show", cmd_show, usage_show},
    {"version", cmd_version, usage_version}, {"help", cmd_help, usage_help},
};

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stdout);
        return EXIT_OK;
    }
    const command *c = find_command(argv[1]);
    if (!c)
        return usage_error("unknown command '%s'", argv[1]);
    fputs(c->usage, stdout);
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        fputs(usage_main, stdout);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        name = "version";
    current = find_command(name);
    if (!current) {
        fprintf(stderr, "fasweep: unknown command '%s'; run `fasweep --help` for the list\n", name);
        return EXIT_USAGE;
    }
    opterr = 0; /* option_error prints the messages */
    return current->fn(argc - 1, argv + 1);
}
