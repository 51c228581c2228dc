/* cmd_report.c - `fasweep report`: the store's groups as one self-contained
 * HTML page (seeds/report.h). Contract: cli.h.
 */
#include <stdio.h>
#include <string.h>

#include "../kernels/fa_launch.h"
#include "../seeds/group.h"
#include "../seeds/report.h"
#include "../store/store.h"
#include "cli.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

typedef struct report_args {
    const char *store, *space_path, *gpu, *mode, *file;
    cli_problem problem;
    int k, variants;
} report_args;

typedef struct report_job {
    const group_set *set;
    const report_meta *meta;
} report_job;

static int report_to(FILE *out, void *ctx)
{
    const report_job *j = ctx;
    if (report_write(j->set, j->meta, out) != 0) {
        cli_say("out of memory writing the report");
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int report_run(const report_args *a)
{
    static space sp;
    char err[SPACE_ERR_LEN];
    if (a->space_path && space_load(a->space_path, &sp, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_USAGE;
    }
    const char *path = cli_store_path(a->store);
    store *st = cli_open_store(path, 1);
    if (!st)
        return CLI_FAIL;
    const group_filter f = {a->gpu, a->problem.set ? a->problem.text : NULL, a->mode};
    group_set set;
    int rc = group_load(st, &f, &set);
    if (rc != STORE_OK) {
        rc = cli_store_fail(st, rc, "reading the store");
        store_close(st);
        return rc;
    }
    rc = CLI_OK;
    for (int i = 0; i < set.n && rc == CLI_OK; i++)
        if (group_lay_out(&set.groups[i], a->space_path ? &sp : NULL) < 0) {
            cli_say("out of memory (or over %d values on an axis) laying out %s %s %s",
                    SPACE_MAX_AXIS, set.groups[i].device, set.groups[i].problem,
                    set.groups[i].mode);
            rc = CLI_FAIL;
        }
    if (rc == CLI_OK && set.n == 0) {
        if (store_count(st) > 0)
            cli_say("no records in %s match the filter (GPU %s, problem %s, mode %s)", path,
                    a->gpu ? a->gpu : "any", a->problem.set ? a->problem.text : "any",
                    a->mode ? a->mode : "any");
        else
            cli_say("no results in %s; run fasweep grid first", path);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK) {
        const report_meta m = {path,          a->space_path, FASWEEP_VERSION,
                               fa_build_id(), a->k,          a->variants};
        const report_job j = {&set, &m};
        rc = cli_write_file(a->file, report_to, (void *)&j);
        if (rc == CLI_OK)
            printf("wrote %s (%d group%s)\n", a->file, set.n, set.n == 1 ? "" : "s");
    }
    group_set_free(&set);
    store_close(st);
    return rc;
}

static const cli_opt report_opts[] = {
    {.name = "output",
     .letter = 'o',
     .kind = CLI_PATH,
     .at = CLI_AT(report_args, file),
     .value = "FILE",
     .help = "the page (default report.html; a regular file is replaced only when\n"
             "complete, a link's target likewise; a device or FIFO is written to)"},
    {.name = "space",
     .kind = CLI_PATH,
     .at = CLI_AT(report_args, space_path),
     .value = "FILE",
     .help = "lay groups of its problems over its grid, rejected points included\n"
             "(without it: the axis values the records hold)"},
    {.name = "gpu",
     .kind = CLI_STR,
     .at = CLI_AT(report_args, gpu),
     .value = "NAME",
     .help = "only this GPU model, exactly as stored"},
    {.name = "problem",
     .kind = CLI_PROBLEM,
     .at = CLI_AT(report_args, problem),
     .value = "P",
     .help = "only this problem: B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc"},
    {.name = "mode",
     .kind = CLI_MODE,
     .at = CLI_AT(report_args, mode),
     .value = "M",
     .help = "only this mode: hot, cold or batch"},
    {.letter = 'k',
     .kind = CLI_INT,
     .at = CLI_AT(report_args, k),
     .lo = 1,
     .hi = 1000,
     .value = "N",
     .help = "Top-K bars per group (default 8)"},
    {.name = "variants",
     .kind = CLI_FLAG,
     .at = CLI_AT(report_args, variants),
     .help = "rank edited kernels (`fasweep eval --kernel`, build src-HASH) in the\n"
             "Top-K too, labelled variant; without it they are only counted"},
    CLI_OPT_STORE(report_args),
    CLI_OPT_DEVICE_REFUSED,
    {0}};

static int report_main(int argc, char **argv)
{
    report_args a = {.file = "report.html", .k = 8};
    int first;
    int rc = cli_parse(argc, argv, &a, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    return report_run(&a);
}

const cli_command cmd_report = {
    .name = "report",
    .summary = "write an HTML page: heatmaps, Top-K, baselines, clocks per group",
    .usage = "[OPTIONS]",
    .about =
        "Writes one self-contained HTML page (inline SVG and CSS, no script, nothing from the\n"
        "network) with, per (GPU, problem, mode) group: a summary line, a heatmap of the\n"
        "median over BLOCK_M x BLOCK_N per (NUM_WARPS, STAGES, SWIZZLE) panel coloured against\n"
        "the group's best (rejected points by reason, failed ones by status, a hover title per\n"
        "cell), the Top-K as bars with noise whiskers, ties and baselines, and the clock state.\n",
    .opts = report_opts,
    .exit = "0 written, 1 missing or empty store, no match or write error, 2 bad\n"
            "option or space file.",
    .fn = report_main,
};
