/* cmd_export.c - `fasweep export`: the store's records as JSON lines or CSV
 * (the import format), or one (device, problem, mode) group laid over a
 * space's grid in a format an external tuner reads (Kernel Tuner's cache,
 * T4; seeds/tuner.h). Contract: cli.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../seeds/group.h"
#include "../store/file.h"
#include "../seeds/tuner.h"
#include "../store/store.h"
#include "../store/store_io.h"
#include "cli.h"

typedef struct export_args {
    const char *store, *prefix, *file, *dir, *format, *space_path, *device, *mode;
    cli_problem problem;
    int allow_missing;
} export_args;

/* ---- records: jsonl, csv -------------------------------------------------------------------- */

typedef struct export_records {
    store *s;
    const char *prefix;
    store_io_format fmt;
} export_records;

static int export_records_to(FILE *out, void *ctx)
{
    const export_records *e = ctx;
    const int rc = store_io_export(e->s, e->prefix, e->fmt, out);
    return rc == STORE_OK ? CLI_OK : cli_store_fail(e->s, rc, "export");
}

static int export_records_run(const export_args *a, store_io_format fmt)
{
    if (a->dir || a->space_path || a->device || a->mode || a->problem.set || a->allow_missing)
        return cli_usage_error("--dir, --space, --device, --problem, --mode and --allow-missing "
                               "go with --format kernel-tuner or t4; for %s use --prefix",
                               a->format);
    store *s = cli_open_store(cli_store_path(a->store), 1);
    if (!s)
        return CLI_FAIL;
    export_records e = {s, a->prefix ? a->prefix : "", fmt};
    const int rc =
        a->file ? cli_write_file(a->file, export_records_to, &e) : export_records_to(stdout, &e);
    store_close(s);
    return rc;
}

/* ---- one group for a tuner ------------------------------------------------------------------ */

typedef struct export_group {
    const group *g;
    tuner_format fmt;
    const tuner_meta *meta;
    int allow_missing;
} export_group;

static int export_group_to(FILE *out, void *ctx)
{
    const export_group *e = ctx;
    char err[256];
    if (tuner_write(e->g, e->fmt, e->meta, e->allow_missing, out, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Refuses a group with accepted points that have no record, unless
 * allowed: a tuner replaying it would find holes (Kernel Tuner stops at the
 * first one). Returns 0 or 1 after a message. */
static int export_complete(const export_args *a, const group *g)
{
    const group_cell *first;
    const size_t n = tuner_missing(g, &first);
    if (n == 0 || a->allow_missing)
        return 0;
    char cfg[64];
    fa_config_format(&first->cfg, cfg, sizeof cfg);
    cli_say("%s | %s | %s: %zu accepted points of %s have no record (the first: %s); measure "
            "them (fasweep grid --space %s) or pass --allow-missing to write them as ErrorConfig "
            "(kernel-tuner) or leave them out (t4)",
            g->device, g->problem, g->mode, n, a->space_path, cfg, a->space_path);
    return CLI_FAIL;
}

/* The groups of the space's problems that match the filter, laid out over
 * its grid (the others are dropped). Returns 0, or the exit status. */
static int export_groups(const export_args *a, store *st, const space *sp, group_set *set)
{
    const group_filter f = {a->device, a->problem.set ? a->problem.text : NULL, a->mode};
    const int rc = group_load(st, &f, set);
    if (rc != STORE_OK)
        return cli_store_fail(st, rc, "reading the store");
    int kept = 0;
    for (int i = 0; i < set->n; i++) {
        group *g = &set->groups[i];
        const int laid = group_lay_out(g, sp);
        if (laid < 0) {
            cli_say("out of memory laying out %s %s %s", g->device, g->problem, g->mode);
            return CLI_FAIL;
        }
        if (laid == 1)
            set->groups[kept++] = *g;
        else
            group_free(g);
    }
    set->n = kept;
    if (kept == 0) {
        cli_say("no records in %s match the filter for the GPU (%s) and problems of space %s "
                "(device %s, problem %s, mode %s); `fasweep topk --no-seeds` lists the groups "
                "stored",
                cli_store_path(a->store), sp->gpu, sp->name, a->device ? a->device : "any",
                a->problem.set ? a->problem.text : "any", a->mode ? a->mode : "any");
        return CLI_FAIL;
    }
    return 0;
}

static int export_group_file(const export_args *a, const group *g, tuner_format fmt,
                             const tuner_meta *m, const char *path)
{
    if (export_complete(a, g))
        return CLI_FAIL;
    export_group e = {g, fmt, m, a->allow_missing};
    if (!path)
        return export_group_to(stdout, &e);
    const int rc = cli_write_file(path, export_group_to, &e);
    if (rc == CLI_OK)
        fprintf(stderr, "%s\n", path);
    return rc;
}

static int export_tuner_groups(const export_args *a, const group_set *set, tuner_format fmt,
                               const tuner_meta *m)
{
    if (!a->dir && set->n > 1) {
        cli_say("%d groups match (e.g. %s | %s | %s and %s | %s | %s); a %s file holds one: "
                "narrow with --device, --problem and --mode, or write one file per group with "
                "--dir DIR",
                set->n, set->groups[0].device, set->groups[0].problem, set->groups[0].mode,
                set->groups[1].device, set->groups[1].problem, set->groups[1].mode, a->format);
        return CLI_USAGE;
    }
    if (!a->dir)
        return export_group_file(a, &set->groups[0], fmt, m, a->file);
    char failed[PATH_MAX];
    const int e = file_mkdirs(a->dir, 0777, failed, sizeof failed);
    if (e) {
        cli_say("cannot create %s: %s; pass a writable --dir DIR", failed, strerror(e));
        return CLI_FAIL;
    }
    for (int i = 0; i < set->n; i++) {
        const group *g = &set->groups[i];
        char name[256], path[PATH_MAX];
        group_file_name(g->device, g->problem, g->mode, fmt == TUNER_T4 ? ".t4.json" : ".kt.json",
                        name, sizeof name);
        if (snprintf(path, sizeof path, "%s/%s", a->dir, name) >= (int)sizeof path)
            return cli_usage_error("--dir path too long: %s", a->dir);
        const int rc = export_group_file(a, g, fmt, m, path);
        if (rc)
            return rc;
    }
    return CLI_OK;
}

static int export_tuner_run(const export_args *a, tuner_format fmt)
{
    if (!a->space_path)
        return cli_usage_error("--format %s needs --space FILE: the grid (axes, shared-memory "
                               "limit) and its rejected points come from the space",
                               a->format);
    if (a->prefix)
        return cli_usage_error("--prefix goes with --format jsonl or csv; filter a tuner export "
                               "with --device, --problem and --mode");
    if (a->file && a->dir)
        return cli_usage_error("-o FILE and --dir DIR exclude each other");
    static space sp;
    char err[SPACE_ERR_LEN];
    if (space_load(a->space_path, &sp, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_USAGE;
    }
    store *st = cli_open_store(cli_store_path(a->store), 1);
    if (!st)
        return CLI_FAIL;
    group_set set;
    int rc = export_groups(a, st, &sp, &set);
    if (rc == 0) {
        const tuner_meta m = {sp.name, sp.hash, FASWEEP_VERSION};
        rc = export_tuner_groups(a, &set, fmt, &m);
    }
    group_set_free(&set);
    store_close(st);
    return rc;
}

/* ---- the command ---------------------------------------------------------------------------- */

static const char *const usage_export =
    "usage: fasweep export [--format jsonl|csv] [--prefix P] [-o FILE] [--store PATH]\n"
    "       fasweep export --format kernel-tuner|t4 --space FILE [--device D] [--problem P]\n"
    "                      [--mode M] [--allow-missing] [-o FILE | --dir DIR] [--store PATH]\n"
    "\n"
    "jsonl, csv: every stored record (or those whose key starts with P) in key order,\n"
    "as JSON lines (the format `fasweep import` reads) or CSV with a header row.\n"
    "\n"
    "kernel-tuner, t4: one (device, problem, mode) group laid over the grid of the space\n"
    "FILE, every grid point present: a Kernel Tuner cache file (replay it with\n"
    "tune_kernel(..., simulation_mode=True, cache=FILE)) or a T4 results file. Measured\n"
    "points carry the median in ms as `time`; rejected ones InvalidConfig; wrong, crashed\n"
    "and timeout RuntimeFailedConfig (docs/tuners.md). One group per file: narrow the\n"
    "filter to one, or write one file per group into --dir DIR\n"
    "(DEVICE_PROBLEM_MODE.kt.json / .t4.json, paths on stderr).\n"
    "\n"
    "  --format F       jsonl (default), csv, kernel-tuner or t4\n"
    "  --prefix P       jsonl, csv: only keys starting with P (DEVICE|PROBLEM|BUILD|CONFIG|MODE)\n"
    "  --space FILE     kernel-tuner, t4: the space whose grid is written\n"
    "  --device D       only this GPU model, exactly as stored\n"
    "  --problem P      only this problem: B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc\n"
    "  --mode M         only this mode: hot, cold or batch\n"
    "  --allow-missing  write accepted points without a record as ErrorConfig (t4: leave\n"
    "                   them out) instead of refusing the export\n"
    "  -o FILE          write FILE (replaced only when the export succeeds); default stdout\n"
    "  --dir DIR        kernel-tuner, t4: one file per matching group in DIR\n"
    "  --store PATH     results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 ok, 1 missing store, no matching group, unmeasured points or write\n"
    "error, 2 bad option or space file, or several groups for one file.\n";

static int export_main(int argc, char **argv)
{
    export_args a = {.format = "jsonl"};
    int first;
    const cli_opt opts[] = {{"format", 0, CLI_STR, &a.format, 0, 0},
                            {"prefix", 0, CLI_STR, &a.prefix, 0, 0},
                            {"space", 0, CLI_PATH, &a.space_path, 0, 0},
                            {"device", 0, CLI_STR, &a.device, 0, 0},
                            {"problem", 0, CLI_PROBLEM, &a.problem, 0, 0},
                            {"mode", 0, CLI_MODE, &a.mode, 0, 0},
                            {"allow-missing", 0, CLI_FLAG, &a.allow_missing, 0, 0},
                            {"output", 'o', CLI_PATH, &a.file, 0, 0},
                            {"dir", 0, CLI_PATH, &a.dir, 0, 0},
                            {"store", 0, CLI_PATH, &a.store, 0, 0},
                            {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    tuner_format tf;
    if (strcmp(a.format, "csv") == 0)
        return export_records_run(&a, STORE_IO_CSV);
    if (strcmp(a.format, "jsonl") == 0)
        return export_records_run(&a, STORE_IO_JSONL);
    if (tuner_format_parse(a.format, &tf) == 0)
        return export_tuner_run(&a, tf);
    return cli_usage_error("--format wants jsonl, csv, kernel-tuner or t4, got '%s'", a.format);
}

const cli_command cmd_export = {"export", export_main, usage_export};
