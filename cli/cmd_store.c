/* cmd_store.c - the commands on stored results: topk, import, merge, show
 * (contract: cli.h; export is cmd_export.c). */
#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../seeds/rank.h"
#include "../store/store.h"
#include "../store/store_io.h"
#include "cli.h"

#define DEFAULT_SEEDS_DIR "seeds"
#define DEFAULT_K 8

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
            cli_say("no results in %s match the filter (device %s, problem %s, mode %s)", path,
                    a->device ? a->device : "any", a->has_problem ? a->problem : "any",
                    a->mode ? a->mode : "hot");
        else
            cli_say("no results in %s; run fasweep grid first", path);
        return CLI_FAIL;
    }
    const int rc = a->json ? (rank_print_json(r, stdout) ? CLI_FAIL : CLI_OK)
                           : (rank_print(r, stdout), CLI_OK);
    if (rc)
        return rc;
    if (topk_ok_count(r) == 0) {
        cli_say("no ok kernel results in %s (%ld matching kernel records failed: wrong, "
                "crashed or timeout; `fasweep show` prints their errors); no seeds written",
                path, topk_failed_count(r));
        return CLI_FAIL;
    }
    if (a->no_seeds)
        return CLI_OK;
    char err[1024];
    if (rank_write_seeds(r, a->seeds_dir, stderr, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int topk_run(const topk_args *a)
{
    const char *path = cli_store_path(a->store);
    store *s = cli_open_store(path, 1);
    if (!s)
        return CLI_FAIL;
    rank_filter f = {
        .device = a->device, .problem = a->has_problem ? a->problem : NULL, .mode = a->mode};
    rank_result r;
    const int src = rank_topk(s, &f, a->k, &r);
    int rc;
    if (src != STORE_OK)
        rc = cli_store_fail(s, src, "ranking");
    else
        rc = topk_report(a, path, store_count(s), &r);
    rank_free(&r);
    store_close(s);
    return rc;
}

static const char *const usage_topk =
    "usage: fasweep topk [-k N] [--problem P] [--device NAME] [--mode M]\n"
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
    "  --mode M         hot (default), cold or batch (docs/measurement.md)\n"
    "  --seeds-dir DIR  where seeds go (default ./" DEFAULT_SEEDS_DIR ")\n"
    "  --no-seeds       print only\n"
    "  --json           print one JSON document instead of the table\n"
    "  --store PATH     results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 missing or empty store, no match, only failed results or a seeds\n"
    "write error, 2 bad option.\n";

static int topk_main(int argc, char **argv)
{
    topk_args a = {.k = DEFAULT_K, .seeds_dir = DEFAULT_SEEDS_DIR};
    cli_problem prob = {"", 0};
    int first;
    const cli_opt opts[] = {{NULL, 'k', CLI_INT, &a.k, 1, INT_MAX},
                            {"problem", 0, CLI_PROBLEM, &prob, 0, 0},
                            {"device", 0, CLI_STR, &a.device, 0, 0},
                            {"mode", 0, CLI_MODE, &a.mode, 0, 0},
                            {"seeds-dir", 0, CLI_PATH, &a.seeds_dir, 0, 0},
                            {"no-seeds", 0, CLI_FLAG, &a.no_seeds, 0, 0},
                            {"json", 0, CLI_FLAG, &a.json, 0, 0},
                            {"store", 0, CLI_PATH, &a.store, 0, 0},
                            {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    memcpy(a.problem, prob.text, sizeof prob.text);
    a.has_problem = prob.set;
    return topk_run(&a);
}

const cli_command cmd_topk = {"topk", topk_main, usage_topk};

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
        cli_say("cannot read %s: %s", file, strerror(errno));
        return CLI_USAGE;
    }
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_say("cannot read %s: it is a directory, expected a JSON-lines file of records", file);
        if (in != stdin)
            fclose(in);
        return CLI_USAGE;
    }
    const int existed = stat(path, &st) == 0;
    store *s = cli_open_store(path, 0);
    int rc = CLI_FAIL;
    if (s) {
        long n = 0;
        char err[1024] = "";
        const int src = store_io_import(s, in, file, &n, err, sizeof err);
        if (src == STORE_OK) {
            printf("imported %ld records from %s into %s\n", n, file, path);
            rc = CLI_OK;
        } else if (src == STORE_EINVAL) {
            /* err names the file and line ("FILE:N: ...") */
            cli_say("%s; nothing was imported", err[0] ? err : store_strerror(src));
            rc = CLI_USAGE;
        } else {
            cli_say("import of %s failed: %s; nothing was imported", file,
                    err[0] ? err : store_strerror(src));
        }
        store_close(s);
        if (rc != CLI_OK && !existed)
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
    "  --store PATH  results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 store failure, 2 unreadable file, bad line (named) or option.\n";

/* The options of a command whose only option is --store (import, merge):
 * cli_parse's result. */
static int store_only_options(int argc, char **argv, const char **store_opt, int *first)
{
    const cli_opt opts[] = {{"store", 0, CLI_PATH, store_opt, 0, 0}, {NULL, 0, 0, NULL, 0, 0}};
    return cli_parse(argc, argv, opts, first);
}

static int import_main(int argc, char **argv)
{
    const char *store_opt = NULL;
    int first;
    const int rc = store_only_options(argc, argv, &store_opt, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1)
        return cli_usage_error("wants exactly one FILE.jsonl, got %d", argc - first);
    if (!*argv[first])
        return cli_usage_error("the FILE.jsonl path is empty");
    return import_run(cli_store_path(store_opt), argv[first]);
}

const cli_command cmd_import = {"import", import_main, usage_import};

/* ---- merge ---------------------------------------------------------------------------------- */

static int merge_run(const char *path, char **srcs, int n)
{
    for (int i = 0; i < n; i++)
        if (store_same(path, srcs[i])) {
            cli_say("cannot merge %s into itself; pass other stores", srcs[i]);
            return CLI_USAGE;
        }
    store *s = cli_open_store(path, 0);
    if (!s)
        return CLI_FAIL;
    int rc = CLI_OK;
    for (int i = 0; i < n && rc == CLI_OK; i++) {
        store_merge_stats st = {0};
        char err[1024] = "";
        const int src = store_merge(s, srcs[i], &st, err, sizeof err);
        if (src != STORE_OK) {
            cli_say("merge of %s failed: %s; it was not merged%s", srcs[i],
                    err[0] ? err : store_strerror(src),
                    i > 0 ? " (the sources before it were)" : "");
            rc = CLI_FAIL;
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
    "  --store PATH  destination store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 a source could not be read or merged, 2 bad option.\n";

static int merge_main(int argc, char **argv)
{
    const char *store_opt = NULL;
    int first;
    const int rc = store_only_options(argc, argv, &store_opt, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc)
        return cli_usage_error("wants at least one source store SRC.lmdb");
    for (int i = first; i < argc; i++)
        if (!*argv[i])
            return cli_usage_error("a source store path is empty");
    return merge_run(cli_store_path(store_opt), argv + first, argc - first);
}

const cli_command cmd_merge = {"merge", merge_main, usage_merge};

/* ---- show ----------------------------------------------------------------------------------- */

typedef struct show_args {
    const char *key, *device, *config, *mode, *build, *store;
    char problem[48]; /* as record.problem */
    int has_problem;
} show_args;

typedef struct show_match {
    const show_args *a;
    record best;
    int n; /* records of the config and mode, over all builds */
} show_match;

/* Keeps the record of this binary's build if there is one, else the newest. */
static int show_visit(const record *r, void *ctx)
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

static int show_print(const record *r)
{
    return cli_emit_json(record_to_json(r));
}

/* Finds the record named by fields; without --build, over every build. */
static int show_by_fields(store *s, const show_args *a, const char *path)
{
    char key[512];
    if (a->build) {
        record q;
        memset(&q, 0, sizeof q);
        const int fits = strlen(a->device) < sizeof q.device && strlen(a->build) < sizeof q.build &&
                         strlen(a->config) < sizeof q.config;
        snprintf(q.device, sizeof q.device, "%s", a->device);
        memcpy(q.problem, a->problem, sizeof q.problem);
        snprintf(q.build, sizeof q.build, "%s", a->build);
        snprintf(q.config, sizeof q.config, "%s", a->config);
        snprintf(q.mode, sizeof q.mode, "%s", a->mode);
        if (!fits || record_key(&q, key, sizeof key) != STORE_OK)
            return cli_usage_error("--device, --config and --build must be non-empty, without '|' "
                                   "or control characters, and short enough for a key");
        record r;
        const int rc = store_get(s, key, &r);
        if (rc == STORE_OK)
            return show_print(&r);
        if (rc != STORE_NOTFOUND)
            return cli_store_fail(s, rc, "lookup");
        cli_say("no record with key '%s' in %s", key, path);
        return CLI_FAIL;
    }
    show_match m = {.a = a};
    snprintf(key, sizeof key, "%s|%s|", a->device, a->problem);
    const int rc = store_scan(s, key, show_visit, &m);
    if (rc != STORE_OK)
        return cli_store_fail(s, rc, "lookup");
    if (m.n == 0) {
        cli_say("no record for device '%s', problem %s, config %s, mode %s in %s", a->device,
                a->problem, a->config, a->mode, path);
        return CLI_FAIL;
    }
    if (m.n > 1)
        cli_say("%d builds hold this config; showing build %s (pass --build to choose)", m.n,
                m.best.build);
    return show_print(&m.best);
}

static int show_by_key(store *s, const char *key, const char *path)
{
    record r;
    const int rc = store_get(s, key, &r);
    if (rc == STORE_OK)
        return show_print(&r);
    if (rc != STORE_NOTFOUND && rc != STORE_EINVAL)
        return cli_store_fail(s, rc, "lookup");
    cli_say("no record with key '%s' in %s (keys are DEVICE|PROBLEM|BUILD|CONFIG|MODE; "
            "`fasweep export` lists them)",
            key, path);
    return CLI_FAIL;
}

static int show_run(const show_args *a)
{
    const char *path = cli_store_path(a->store);
    store *s = cli_open_store(path, 1);
    if (!s)
        return CLI_FAIL;
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
    "  --mode M      hot (default), cold or batch\n"
    "  --build B     build id (\"baseline\" for baselines)\n"
    "  --store PATH  results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 found, 1 not found or missing store, 2 bad option.\n";

/* Checks the two ways of naming a record exclude each other. */
static int show_check(const show_args *a, int argc, int first)
{
    const int fields = a->device || a->has_problem || a->config || a->build;
    if (argc - first > 1)
        return cli_usage_error("wants one KEY, got %d arguments", argc - first);
    if (argc - first == 1 && fields)
        return cli_usage_error("give either KEY or --device/--problem/--config, not both");
    if (argc - first == 0 && !(a->device && a->has_problem && a->config))
        return cli_usage_error("wants KEY, or --device, --problem and --config");
    return 0;
}

static int show_main(int argc, char **argv)
{
    show_args a = {.mode = "hot"};
    cli_problem prob = {"", 0};
    int first;
    const cli_opt opts[] = {{"device", 0, CLI_STR, &a.device, 0, 0},
                            {"problem", 0, CLI_PROBLEM, &prob, 0, 0},
                            {"config", 0, CLI_STR, &a.config, 0, 0},
                            {"mode", 0, CLI_MODE, &a.mode, 0, 0},
                            {"build", 0, CLI_STR, &a.build, 0, 0},
                            {"store", 0, CLI_PATH, &a.store, 0, 0},
                            {NULL, 0, 0, NULL, 0, 0}};
    const int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0)
        return rc;
    memcpy(a.problem, prob.text, sizeof a.problem);
    a.has_problem = prob.set;
    if (show_check(&a, argc, first))
        return CLI_USAGE;
    if (first < argc)
        a.key = argv[first];
    return show_run(&a);
}

const cli_command cmd_show = {"show", show_main, usage_show};
