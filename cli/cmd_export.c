/* cmd_export.c - `fasweep export`: the store's records as JSON lines or CSV
 * (the import format), or one (device, problem, mode) group laid over a
 * space's grid in a format an external tuner reads (Kernel Tuner's cache,
 * T4; export/tuner.h). Contract: cli.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../seeds/group.h"
#include "../store/file.h"
#include "../export/tuner.h"
#include "../store/store.h"
#include "../store/store_io.h"
#include "cli.h"

typedef struct export_args {
    const char *store, *prefix, *file, *dir, *format, *space_path, *gpu, *mode, *family;
    cli_problem problem;
    int allow_missing;
} export_args;

/* An export that skipped damaged records (each named above, as it was
 * met) wrote everything else, and still fails: the store is not whole.
 * Returns rc, or CLI_FAIL after a line when records were skipped. */
static int export_damaged(store *s, int rc)
{
    const long n = store_damaged(s);
    if (n == 0 || rc != CLI_OK)
        return rc;
    cli_say("%ld damaged record%s skipped (named above); every other record was written; "
            "`fasweep remove KEY` deletes a damaged record",
            n, n == 1 ? " was" : "s were");
    return CLI_FAIL;
}

/* ---- records: jsonl, csv -------------------------------------------------------------------- */

typedef struct export_records {
    store *s;
    const char *prefix;
    store_io_format fmt;
} export_records;

static int export_records_to(FILE *out, void *ctx)
{
    const export_records *e = ctx;
    errno = 0;
    const int rc = store_io_export(e->s, e->prefix, e->fmt, out);
    if (rc != STORE_OK && ferror(out)) /* the output failed, not the store */
        return cli_output_failed(errno);
    return rc == STORE_OK ? CLI_OK : cli_store_fail(e->s, rc, "export");
}

static int export_records_run(const export_args *a, store_io_format fmt)
{
    if (a->dir || a->space_path || a->gpu || a->mode || a->problem.set || a->allow_missing ||
        a->family)
        return cli_usage_error("--dir, --space, --family, --gpu, --problem, --mode and "
                               "--allow-missing go with --format kernel-tuner, t4 or t1; for %s "
                               "use --prefix",
                               a->format);
    store *s = cli_open_store(cli_store_path(a->store), 1);
    if (!s)
        return CLI_FAIL;
    export_records e = {s, a->prefix ? a->prefix : "", fmt};
    const int rc =
        a->file ? cli_write_file(a->file, export_records_to, &e) : export_records_to(stdout, &e);
    if (rc == CLI_OK && a->file) /* the path written, on stderr as every command's */
        cli_say("wrote %s", a->file);
    const int out = export_damaged(s, rc);
    store_close(s);
    return out;
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

/* Says which of g's kernel records (variants aside) are of another family
 * than its grid's: they stand for no point of the file, and --family
 * writes the grid of a family the space sweeps. */
static void export_other_families(const space *sp, const group *g)
{
    for (int fi = 0; fi < fa_family_count(); fi++) {
        size_t n = 0;
        for (size_t i = 0; fi != g->family && i < g->n_recs; i++) {
            const record *r = &g->recs[i];
            n += r->kind == RECORD_KIND_KERNEL && !record_is_variant(r) &&
                 fa_family_index(record_family(r)) == fi;
        }
        if (!n)
            continue;
        const char *name = fa_family_get(fi)->name;
        space_grid grid;
        if (group_space_grid(sp, fi, &grid) == 0)
            cli_say("note: %s | %s | %s: %zu record%s of family %s %s not on the %s grid "
                    "written; --family %s writes its grid",
                    g->device, g->problem, g->mode, n, n == 1 ? "" : "s", name,
                    n == 1 ? "is" : "are", fa_family_get(g->family)->name, name);
        else
            cli_say("note: %s | %s | %s: %zu record%s of family %s %s left out: space %s sweeps "
                    "no %s grid",
                    g->device, g->problem, g->mode, n, n == 1 ? "" : "s", name,
                    n == 1 ? "is" : "are", sp->name, name);
    }
}

/* The groups of the space's problems that match the filter, laid out over
 * its grid of family `family` (-1: its own; the others are dropped).
 * Returns 0, or the exit status. */
static int export_groups(const export_args *a, store *st, const space *sp, int family,
                         group_set *set)
{
    const group_filter f = {a->gpu, a->problem.set ? a->problem.text : NULL, a->mode};
    const int rc = group_load(st, &f, set);
    if (rc != STORE_OK)
        return cli_store_fail(st, rc, "reading the store");
    int kept = 0;
    for (int i = 0; i < set->n; i++) {
        group *g = &set->groups[i];
        const int laid = group_lay_out_family(g, sp, family);
        if (laid < 0) {
            cli_say("out of memory laying out %s %s %s", g->device, g->problem, g->mode);
            return CLI_FAIL;
        }
        if (laid == 1) {
            export_other_families(sp, g);
            set->groups[kept++] = *g;
        } else
            group_free(g);
    }
    set->n = kept;
    if (kept == 0) {
        cli_say("no records in %s match the filter for the GPU (%s) and problems of space %s "
                "(GPU %s, problem %s, mode %s); `fasweep topk --no-seeds` lists the groups "
                "stored",
                cli_store_path(a->store), sp->gpu, sp->name, a->gpu ? a->gpu : "any",
                a->problem.set ? a->problem.text : "any", a->mode ? a->mode : "any");
        return CLI_FAIL;
    }
    return 0;
}

static int export_group_file(const export_args *a, const group *g, tuner_format fmt,
                             const tuner_meta *m, const char *path)
{
    /* T1 describes the search, not results: holes do not matter to it. */
    if (fmt != TUNER_T1 && export_complete(a, g))
        return CLI_FAIL;
    export_group e = {g, fmt, m, a->allow_missing};
    if (!path)
        return export_group_to(stdout, &e);
    const int rc = cli_write_file(path, export_group_to, &e);
    if (rc == CLI_OK)
        fprintf(stderr, "%s\n", path);
    return rc;
}

/* The run's file names (group_file_names: a hash only where two groups of
 * the run share a plain name); NULL after a message when they cannot be
 * told apart or out of memory. */
static char (*export_names(const group_set *set, tuner_format fmt))[GROUP_NAME_LEN]
{
    const size_t n = (size_t)set->n;
    group_id *ids = malloc(n * sizeof *ids);
    char(*names)[GROUP_NAME_LEN] = malloc(n * sizeof *names);
    char err[1024];
    int rc = -1;
    if (ids && names) {
        for (size_t i = 0; i < n; i++)
            ids[i] = (group_id){set->groups[i].device, set->groups[i].problem, set->groups[i].mode};
        rc = group_file_names(ids, n,
                              fmt == TUNER_T4   ? ".t4.json"
                              : fmt == TUNER_T1 ? ".t1.json"
                                                : ".kt.json",
                              names, err, sizeof err);
    } else {
        snprintf(err, sizeof err, "out of memory naming %zu files", n);
    }
    free(ids);
    if (rc != 0) {
        cli_say("%s", err);
        free(names);
        return NULL;
    }
    return names;
}

/* One file per group into --dir: every name and every guard (a file of
 * another group there is never replaced) checked before the first write. */
static int export_tuner_dir(const export_args *a, const group_set *set, tuner_format fmt,
                            const tuner_meta *m)
{
    char(*names)[GROUP_NAME_LEN] = export_names(set, fmt);
    if (!names)
        return CLI_FAIL;
    char failed[PATH_MAX];
    const int e = file_mkdirs(a->dir, 0777, failed, sizeof failed);
    int rc = CLI_OK;
    if (e) {
        cli_say("cannot create %s: %s; pass a writable --dir DIR", failed, strerror(e));
        rc = CLI_FAIL;
    }
    char path[PATH_MAX], err[PATH_MAX + 1024];
    for (int i = 0; i < set->n && rc == CLI_OK; i++) {
        const group *g = &set->groups[i];
        const group_id id = {g->device, g->problem, g->mode};
        if (snprintf(path, sizeof path, "%s/%s", a->dir, names[i]) >= (int)sizeof path)
            rc = cli_usage_error("--dir path too long: %s", a->dir);
        else if (group_file_foreign(path, &id, "--dir", err, sizeof err)) {
            cli_say("%s", err);
            rc = CLI_FAIL;
        }
    }
    for (int i = 0; i < set->n && rc == CLI_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", a->dir, names[i]);
        rc = export_group_file(a, &set->groups[i], fmt, m, path);
    }
    free(names);
    return rc;
}

static int export_tuner_groups(const export_args *a, const group_set *set, tuner_format fmt,
                               const tuner_meta *m)
{
    if (!a->dir && set->n > 1) {
        cli_say("%d groups match (e.g. %s | %s | %s and %s | %s | %s); a %s file holds one: "
                "narrow with --gpu, --problem and --mode, or write one file per group with "
                "--dir DIR",
                set->n, set->groups[0].device, set->groups[0].problem, set->groups[0].mode,
                set->groups[1].device, set->groups[1].problem, set->groups[1].mode, a->format);
        return CLI_USAGE;
    }
    if (!a->dir)
        return export_group_file(a, &set->groups[0], fmt, m, a->file);
    return export_tuner_dir(a, set, fmt, m);
}

static int export_tuner_run(const export_args *a, tuner_format fmt)
{
    if (!a->space_path)
        return cli_usage_error("--format %s needs --space FILE: the grid (axes, shared-memory "
                               "limit) and its rejected points come from the space",
                               a->format);
    if (a->prefix)
        return cli_usage_error("--prefix goes with --format jsonl or csv; filter a tuner export "
                               "with --gpu, --problem and --mode");
    if (a->file && a->dir)
        return cli_usage_error("-o FILE and --dir DIR exclude each other");
    static space sp;
    int family;
    if (cli_load_space(a->space_path, &sp) != 0 || cli_family_option(a->family, &sp, &family))
        return CLI_USAGE;
    store *st = cli_open_store(cli_store_path(a->store), 1);
    if (!st)
        return CLI_FAIL;
    group_set set;
    int rc = export_groups(a, st, &sp, family, &set);
    if (rc == 0) {
        const tuner_meta m = {sp.name, sp.hash, FASWEEP_VERSION};
        rc = export_tuner_groups(a, &set, fmt, &m);
    }
    group_set_free(&set);
    rc = export_damaged(st, rc);
    store_close(st);
    return rc;
}

/* The export --format names. Returns the exit status. */
static int export_run(const export_args *a)
{
    tuner_format tf;
    if (strcmp(a->format, "csv") == 0)
        return export_records_run(a, STORE_IO_CSV);
    if (strcmp(a->format, "jsonl") == 0)
        return export_records_run(a, STORE_IO_JSONL);
    if (tuner_format_parse(a->format, &tf) == 0)
        return export_tuner_run(a, tf);
    return cli_usage_error("--format wants jsonl, csv, kernel-tuner, t4 or t1, got '%s'",
                           a->format);
}

/* ---- the command ---------------------------------------------------------------------------- */

static const cli_opt export_opts[] = {
    CLI_OPT_VAL("format", CLI_STR, export_args, format, "F",
                "jsonl (default), csv, kernel-tuner, t4 or t1"),
    CLI_OPT_VAL("prefix", CLI_STR, export_args, prefix, "P",
                "jsonl, csv: only keys starting with P (DEVICE|PROBLEM|BUILD|CONFIG|MODE)"),
    CLI_OPT_VAL("space", CLI_PATH, export_args, space_path, "FILE",
                "kernel-tuner, t4, t1: the space whose grid is written"),
    CLI_OPT_VAL("family", CLI_STR, export_args, family, "NAME",
                "kernel-tuner, t4, t1: the grid of this kernel family ({{FAMILIES}}):\n"
                "the space's own (default) or one of its \"families\""),
    CLI_OPT_FILTER(export_args, "kernel-tuner, t4: ", "only this mode: {{MODES}}"),
    CLI_OPT_FLAG("allow-missing", export_args, allow_missing,
                 "kernel-tuner, t4: write accepted points without a record as ErrorConfig\n"
                 "(t4: leave them out) instead of refusing the export"),
    CLI_OPT_OUTPUT(export_args,
                   "write FILE (default stdout): a regular file is replaced only when the\n"
                   "export succeeded, a link's target likewise; a device or FIFO is written to"),
    CLI_OPT_VAL("dir", CLI_PATH, export_args, dir, "DIR",
                "kernel-tuner, t4: one file per matching group in DIR (made if missing)"),
    CLI_OPT_STORE(export_args),
    CLI_OPT_DEVICE_REFUSED,
    {0}};

CLI_MAIN_NO_ARGS(export, export_args, export_run, .format = "jsonl")

CLI_COMMAND(
    export,
    .summary = "write stored records as CSV or JSON lines, or a group for Kernel Tuner / T4",
    .usage = "[--format jsonl|csv] [OPTIONS]\n--format kernel-tuner|t4|t1 --space FILE [OPTIONS]",
    .about =
        "jsonl, csv: every stored record (or those whose key starts with P) in key order,\n"
        "as JSON lines (the format `fasweep import` reads) or CSV with a header row (a text\n"
        "cell starting with = + - @, tab or CR gets a leading ' so no spreadsheet runs it).\n"
        "A damaged record (one that does not decode) is skipped with a warning naming its\n"
        "key; the others are written, and the export then exits 1.\n"
        "\n"
        "kernel-tuner, t4: one (GPU, problem, mode) group laid over one grid of the space\n"
        "FILE (its own family's, or --family NAME's), every grid point present: a Kernel Tuner\n"
        "cache file (replay it with tune_kernel(..., simulation_mode=True, cache=FILE)) or a\n"
        "T4 results file. Measured points carry the median in ms as `time`; rejected ones\n"
        "InvalidConfig; wrong, crashed and timeout RuntimeFailedConfig (docs/tuners.md).\n"
        "The tune parameters are the family's axes, by its names:\n"
        "{{AXES}};\n"
        "then block_size_x, the family's threads per CTA:\n"
        "{{BLOCK_X}}.\n"
        "Both carry the family's planner rules as Kernel Tuner restriction strings\n"
        "(`restrictions`). The group's records of another family are left out (a note says\n"
        "so).\n"
        "\n"
        "t1: Kernel Tuner's T1 input file for the group (kernel file, search space,\n"
        "restrictions, objective): kernel_tuner.tune_kernel_T1(FILE, cache_filepath=KT,\n"
        "simulation_mode=True) replays the kernel-tuner export KT, run from the repository\n"
        "root (KernelFile is the family's template path there:\n"
        "{{TEMPLATES}}).\n"
        "\n"
        "One group per file: narrow the filter to one, or write one file per group into\n"
        "--dir DIR (DEVICE_PROBLEM_MODE.kt.json / .t4.json / .t1.json by seeds/README.md's\n"
        "naming rule, paths on stderr; a file there of another group is not replaced: exit 1).\n",
    .exit = "0 ok, 1 missing store, no matching group, unmeasured points, damaged records\n"
            "skipped or write error, 2 bad option or space file, or several groups for one file.");
