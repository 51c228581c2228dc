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

#include "../kernels/embedded.h"
#include "../kernels/fa_launch.h"
#include "../seeds/group.h"
#include "../seeds/doc.h"
#include "../seeds/rank.h"
#include "../seeds/table.h"
#include "../seeds/write.h"
#include "../store/store.h"
#include "../store/store_io.h"
#include "cli.h"
#include "emit.h"

#define DEFAULT_K 8

/* ---- topk ----------------------------------------------------------------------------------- */

typedef struct topk_args {
    int k, json, no_seeds, variants;
    const char *gpu, *mode, *seeds_dir, *store, *emit_source, *space_path;
    cli_problem problem;
} topk_args;

/* A family's template text as built into this binary (the embedded
 * headers, kernels/embedded.h, named without their folder), or NULL. */
static const char *topk_template_text(const char *header)
{
    const char *slash = strrchr(header, '/');
    const char *base = slash ? slash + 1 : header;
    for (int i = 0; fa_embedded_names[i]; i++)
        if (strcmp(fa_embedded_names[i], base) == 0)
            return fa_embedded_texts[i];
    return NULL;
}

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

/* The default seeds folder: beside the store, named for it (the store's
 * path with a trailing ".lmdb" replaced by ".seeds", else ".seeds"
 * appended: results.lmdb -> results.seeds), so seeds never land in a
 * source folder (./seeds is the C module seeds/ in a checkout) and two
 * stores never share a folder. 0, or -1 when the path does not fit. */
static int topk_default_seeds_dir(const char *store, char *buf, size_t n)
{
    size_t len = strlen(store);
    while (len > 1 && store[len - 1] == '/')
        len--;
    if (len > 5 && strncmp(store + len - 5, ".lmdb", 5) == 0 && store[len - 6] != '/')
        len -= 5;
    const int k = snprintf(buf, n, "%.*s.seeds", (int)len, store);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* Prints the ranking and writes seeds; the exit status. */
static int topk_report(const topk_args *a, const char *path, long stored, const rank_result *r)
{
    if (r->n_groups == 0) {
        if (stored > 0)
            cli_say("no results in %s match the filter (GPU %s, problem %s, mode %s)", path,
                    a->gpu ? a->gpu : "any", a->problem.set ? a->problem.text : "any",
                    a->mode ? a->mode : "any");
        else
            cli_say("no results in %s; run fasweep grid first", path);
        return CLI_FAIL;
    }
    if (topk_ok_count(r) == 0) {
        const int rc = a->json ? emit_json(doc_json(r)) : (table_print(r, stdout), CLI_OK);
        if (rc)
            return rc;
        cli_say("no ok kernel results in %s (%ld matching kernel records failed: wrong, "
                "crashed, timeout, compile_error or implausible; `fasweep show` prints their "
                "errors); no "
                "seeds written",
                path, topk_failed_count(r));
        return CLI_FAIL;
    }
    /* The sources first: the seeds (and --json) name the files written. */
    char err[1024];
    if (write_sources(r, stderr, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_FAIL;
    }
    const int rc = a->json ? emit_json(doc_json(r)) : (table_print(r, stdout), CLI_OK);
    /* The same side effects with and without --json: the seeds are written
     * unless --no-seeds (--json changes what stdout holds, nothing else). */
    if (rc || a->no_seeds)
        return rc;
    char dir[4096];
    if (!a->seeds_dir && topk_default_seeds_dir(path, dir, sizeof dir) != 0) {
        cli_say("the store path %s is too long to name its seeds folder; pass --seeds-dir DIR",
                path);
        return CLI_FAIL;
    }
    if (write_seeds(r, a->seeds_dir ? a->seeds_dir : dir, stderr, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_FAIL;
    }
    return CLI_OK;
}

typedef struct topk_ctx {
    const topk_args *a;
    const space *sp;
} topk_ctx;

static int topk_in(store *s, const char *path, const void *ctx)
{
    const topk_ctx *t = ctx;
    const topk_args *a = t->a;
    rank_filter f = {.device = a->gpu,
                     .problem = a->problem.set ? a->problem.text : NULL,
                     .mode = a->mode,
                     .variants = a->variants};
    rank_result r;
    const int src = rank_topk(s, &f, a->k, &r);
    const rank_sources sources = {topk_template_text,     fa_build_id(), a->emit_source,
                                  a->store ? path : NULL, t->sp,         a->space_path};
    r.src = &sources;
    int rc;
    if (src != STORE_OK)
        rc = cli_store_fail(s, src, "ranking");
    else
        rc = topk_report(a, path, store_count(s), &r);
    rank_free(&r);
    return rc;
}

static int topk_run(const topk_args *a)
{
    static space sp;
    if (a->space_path && cli_load_space(a->space_path, &sp) != 0)
        return CLI_USAGE;
    const topk_ctx t = {a, a->space_path ? &sp : NULL};
    return cli_read_store(a->store, topk_in, &t);
}

static const cli_opt topk_opts[] = {
    CLI_OPT_INT(NULL, 'k', topk_args, k, 1, INT_MAX, "N", "how many per group (default 8)"),
    CLI_OPT_FILTER(topk_args, "",
                   "only this mode: {{MODES}} (default: every mode stored, one\n"
                   "section each; docs/measurement.md)"),
    CLI_OPT_VARIANTS(topk_args, " too, marked\n`variant`"),
    CLI_OPT_VAL("space", CLI_PATH, topk_args, space_path, "FILE",
                "the space the seeds were swept with: its tolerances are the seeds' gate\n"
                "and their eval commands take --space FILE (default: the defaults)"),
    CLI_OPT_VAL("emit-source", CLI_PATH, topk_args, emit_source, "DIR",
                "write each seed's kernel source, standalone, to\n"
                "DIR/DEVICE_PROBLEM_MODE.RANK.cuh (`fasweep eval --kernel FILE` re-scores it)"),
    CLI_OPT_VAL("seeds-dir", CLI_PATH, topk_args, seeds_dir, "DIR",
                "where seeds go (default: beside the store, named for it:\n"
                "results.lmdb -> results.seeds)"),
    CLI_OPT_FLAG("no-seeds", topk_args, no_seeds, "print only: write no seeds files"),
    CLI_OPT_FLAG("json", topk_args, json,
                 "print one JSON document instead of the table (the seeds are written\n"
                 "as without it; --no-seeds for none)"),
    CLI_OPT_STORE(topk_args),
    CLI_OPT_DEVICE_REFUSED,
    {0}};

CLI_MAIN_NO_ARGS(topk, topk_args, topk_run, .k = DEFAULT_K)

CLI_COMMAND(
    topk, .summary = "rank stored results per (GPU, problem, mode); write seed files",
    .usage = "[OPTIONS]",
    .about = "Ranks the stored \"ok\" kernel results of each (GPU, problem, mode) by median time\n"
             "(ties: lower noise, then config text), prints the K best of each with their speedup\n"
             "over the fastest stored baseline, and writes one seeds file per group\n"
             "(DIR/DEVICE_PROBLEM_MODE.json, format in docs/seeds.md; paths on stderr; DIR is\n"
             "beside the store unless --seeds-dir: results.lmdb -> results.seeds). Every\n"
             "mode stored gets its own section unless --mode picks one. Records of edited\n"
             "kernels (eval --kernel) are ranked only with --variants, marked `variant`. With\n"
             "--json it prints the ranking as JSON; the seeds are written either way\n"
             "(--no-seeds: none).\n",
    .exit = "0 ok (a group whose records all failed, beside groups with ok ones, is\n"
            "ranked as it is: \"seeds\": []), 1 missing or empty store, no match, no matching\n"
            "group with an ok kernel record, or a seeds write error, 2 bad option.");

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

/* The options of a command whose only option is --store (import, merge). */
typedef struct store_args {
    const char *store;
} store_args;

static const cli_opt import_opts[] = {CLI_OPT_STORE(store_args), {0}};
static const cli_opt merge_opts[] = {CLI_OPT_STORE(store_args), {0}};

/* FILE.jsonl, exactly one. */
static int import_args_run(const store_args *a, int n, char **args)
{
    if (n != 1)
        return cli_usage_error("wants exactly one FILE.jsonl, got %d", n);
    if (!*args[0])
        return cli_usage_error("the FILE.jsonl path is empty");
    return import_run(cli_store_path(a->store), args[0]);
}

CLI_MAIN(import, store_args, import_args_run, 0)

CLI_COMMAND(
    import, .summary = "add JSON-lines records to the store (all or nothing)",
    .usage = "FILE.jsonl [OPTIONS]",
    .about = "Adds the records of a JSON-lines file (as `fasweep export --format jsonl` writes;\n"
             "FILE - reads stdin) to the store in one transaction: all of them or, when any line\n"
             "is bad, none. A record replaces a stored one of the same key.\n",
    .exit = "0 ok, 1 store failure, 2 unreadable file, bad line (named) or option.");

/* ---- merge ---------------------------------------------------------------------------------- */

/* Whether every source opens as a store (read-only), checked before the
 * destination is opened: opening it creates it, and a merge that cannot
 * start must leave nothing behind (was: an empty new store). 0, or the
 * exit status after a message. */
static int merge_sources_open(char **srcs, int n)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(srcs[i], &st) != 0) {
            cli_say("merge source %s: %s; pass an existing store directory, nothing was merged",
                    srcs[i], strerror(errno));
            return CLI_FAIL;
        }
        store *src = NULL;
        char err[1024] = "";
        const int rc = store_open(srcs[i], 1, &src, err, sizeof err);
        store_close(src);
        if (rc != STORE_OK) {
            cli_say("merge source %s cannot be read: %s; nothing was merged", srcs[i],
                    err[0] ? err : store_strerror(rc));
            return CLI_FAIL;
        }
    }
    return 0;
}

static int merge_run(const char *path, char **srcs, int n)
{
    for (int i = 0; i < n; i++)
        if (store_same(path, srcs[i])) {
            cli_say("cannot merge %s into itself; pass other stores", srcs[i]);
            return CLI_USAGE;
        }
    const int pre = merge_sources_open(srcs, n);
    if (pre)
        return pre;
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

/* SRC.lmdb..., at least one. */
static int merge_args_run(const store_args *a, int n, char **args)
{
    if (n == 0)
        return cli_usage_error("wants at least one source store SRC.lmdb");
    for (int i = 0; i < n; i++)
        if (!*args[i])
            return cli_usage_error("a source store path is empty");
    return merge_run(cli_store_path(a->store), args, n);
}

CLI_MAIN(merge, store_args, merge_args_run, 0)

CLI_COMMAND(merge, .summary = "merge other stores into the store", .usage = "SRC.lmdb... [OPTIONS]",
            .about =
                "Merges other stores (e.g. from other machines) into the store (--store: the\n"
                "destination), each source in one transaction. On a key clash the better record\n"
                "wins: " RECORD_MERGE_RULE
                "Prints per source how many records were added, replaced and kept. Every source\n"
                "is opened before the destination: a missing or unreadable source is exit 1 and\n"
                "creates no destination.\n",
            .exit = "0 ok, 1 a source could not be read or merged, 2 bad option.");

/* ---- show ----------------------------------------------------------------------------------- */

typedef struct show_args {
    const char *key, *gpu, *config, *mode, *build, *store;
    cli_problem problem; /* text as record.problem */
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

/* The record's JSON; a kernel variant's (eval --kernel, build src-HASH)
 * with "variant": true, so it is never taken for the template's. */
static int show_print(const record *r)
{
    cJSON *o = record_to_json(r);
    if (o && record_is_variant(r) && !cJSON_AddTrueToObject(o, "variant")) {
        cJSON_Delete(o);
        o = NULL;
    }
    return emit_json(o);
}

/* Finds the record named by fields; without --build, over every build. */
static int show_by_fields(store *s, const show_args *a, const char *path)
{
    char key[512];
    if (a->build) {
        record q;
        memset(&q, 0, sizeof q);
        const int fits = strlen(a->gpu) < sizeof q.device && strlen(a->build) < sizeof q.build &&
                         strlen(a->config) < sizeof q.config;
        snprintf(q.device, sizeof q.device, "%s", a->gpu);
        snprintf(q.problem, sizeof q.problem, "%s", a->problem.text);
        snprintf(q.build, sizeof q.build, "%s", a->build);
        snprintf(q.config, sizeof q.config, "%s", a->config);
        snprintf(q.mode, sizeof q.mode, "%s", a->mode);
        if (!fits || record_key(&q, key, sizeof key) != STORE_OK)
            return cli_usage_error("--gpu, --config and --build must be non-empty, without '|' "
                                   "or control characters, and short enough for a key");
        record r;
        const int rc = store_get(s, key, &r);
        if (rc == STORE_OK)
            return show_print(&r);
        if (rc == STORE_EDAMAGED) {
            cli_say("%s", store_last_error(s));
            return CLI_FAIL;
        }
        if (rc != STORE_NOTFOUND)
            return cli_store_fail(s, rc, "lookup");
        cli_say("no record with key '%s' in %s", key, path);
        return CLI_FAIL;
    }
    show_match m = {.a = a};
    snprintf(key, sizeof key, "%s|%s|", a->gpu, a->problem.text);
    const int rc = store_scan(s, key, show_visit, &m);
    if (rc != STORE_OK)
        return cli_store_fail(s, rc, "lookup");
    if (m.n == 0) {
        cli_say("no record for GPU '%s', problem %s, config %s, mode %s in %s", a->gpu,
                a->problem.text, a->config, a->mode, path);
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
    if (rc == STORE_EDAMAGED) {
        cli_say("%s", store_last_error(s)); /* the key, why, and how to remove it */
        return CLI_FAIL;
    }
    if (rc != STORE_NOTFOUND && rc != STORE_EINVAL)
        return cli_store_fail(s, rc, "lookup");
    cli_say("no record with key '%s' in %s (keys are DEVICE|PROBLEM|BUILD|CONFIG|MODE; "
            "`fasweep export` lists them)",
            key, path);
    return CLI_FAIL;
}

static int show_in(store *s, const char *path, const void *ctx)
{
    const show_args *a = ctx;
    return a->key ? show_by_key(s, a->key, path) : show_by_fields(s, a, path);
}

/* Checks the two ways of naming a record exclude each other. */
static int show_check(const show_args *a, int n)
{
    const int fields = a->gpu || a->problem.set || a->config || a->build;
    if (n > 1)
        return cli_usage_error("wants one KEY, got %d arguments", n);
    if (n == 1 && fields)
        return cli_usage_error("give either KEY or --gpu/--problem/--config, not both");
    if (n == 0 && !(a->gpu && a->problem.set && a->config))
        return cli_usage_error("wants KEY, or --gpu, --problem and --config");
    return 0;
}

static const cli_opt show_opts[] = {
    CLI_OPT_VAL("gpu", CLI_STR, show_args, gpu, "NAME",
                "the GPU model as stored, e.g. \"NVIDIA L4\""),
    CLI_OPT_VAL("problem", CLI_PROBLEM, show_args, problem, "P", CLI_HELP_PROBLEM),
    CLI_OPT_VAL("config", CLI_STR, show_args, config, "C",
                "config text as stored (no FAMILY:), e.g.\n"
                "{{CONFIG_TEXTS}},\n"
                "or a baseline's name"),
    CLI_OPT_VAL("mode", CLI_MODE, show_args, mode, "M", CLI_HELP_MODE),
    CLI_OPT_VAL("build", CLI_STR, show_args, build, "B", "build id (\"baseline\" for baselines)"),
    CLI_OPT_STORE(show_args),
    CLI_OPT_DEVICE_REFUSED,
    {0}};

/* KEY, or the record named by options. */
static int show_args_run(show_args *a, int n, char **args)
{
    if (show_check(a, n))
        return CLI_USAGE;
    if (n == 1)
        a->key = args[0];
    return cli_read_store(a->store, show_in, a);
}

CLI_MAIN(show, show_args, show_args_run, .mode = "hot")

CLI_COMMAND(
    show, .summary = "print one stored record as JSON",
    .usage = "KEY [OPTIONS]\n--gpu NAME --problem P --config C [OPTIONS]",
    .about =
        "Prints one stored record as JSON. KEY is DEVICE|PROBLEM|BUILD|CONFIG|MODE (quote it).\n"
        "Without --build, the record of this binary's build is shown if there is one, else\n"
        "the newest of any build.\n",
    .exit = "0 found, 1 not found or missing store, 2 bad option.");
