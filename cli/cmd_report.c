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
    const char *store, *space_path, *device, *mode, *file;
    cli_problem problem;
    int k;
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
    const group_filter f = {a->device, a->problem.set ? a->problem.text : NULL, a->mode};
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
            cli_say("no records in %s match the filter (device %s, problem %s, mode %s)", path,
                    a->device ? a->device : "any", a->problem.set ? a->problem.text : "any",
                    a->mode ? a->mode : "any");
        else
            cli_say("no results in %s; run fasweep grid first", path);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK) {
        const report_meta m = {path, a->space_path, FASWEEP_VERSION, fa_build_id(), a->k};
        const report_job j = {&set, &m};
        rc = cli_write_file(a->file, report_to, (void *)&j);
        if (rc == CLI_OK)
            printf("wrote %s (%d group%s)\n", a->file, set.n, set.n == 1 ? "" : "s");
    }
    group_set_free(&set);
    store_close(st);
    return rc;
}

static const char *const usage_report =
    "usage: fasweep report [-o FILE] [--space FILE] [--device D] [--problem P] [--mode M]\n"
    "                      [-k N] [--store PATH]\n"
    "\n"
    "Writes one self-contained HTML page (inline SVG and CSS, no script, nothing from the\n"
    "network) with, per (device, problem, mode) group: a summary line, a heatmap of the\n"
    "median over BLOCK_M x BLOCK_N per (NUM_WARPS, STAGES, SWIZZLE) panel coloured against\n"
    "the group's best (rejected points by reason, failed ones by status, a hover title per\n"
    "cell), the Top-K as bars with noise whiskers, ties and baselines, and the clock state.\n"
    "\n"
    "  -o FILE        the page (default report.html; replaced only when complete)\n"
    "  --space FILE   lay groups of its problems over its grid, rejected points included\n"
    "                 (without it: the axis values the records hold)\n"
    "  --device D     only this GPU model, exactly as stored\n"
    "  --problem P    only this problem: B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc\n"
    "  --mode M       only this mode: hot, cold or batch\n"
    "  -k N           Top-K bars per group (default 8)\n"
    "  --store PATH   results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")\n"
    "\n"
    "exit status: 0 written, 1 missing or empty store, no match or write error, 2 bad\n"
    "option or space file.\n";

static int report_main(int argc, char **argv)
{
    report_args a = {.file = "report.html", .k = 8};
    int first;
    const cli_opt opts[] = {
        {"output", 'o', CLI_PATH, &a.file, 0, 0}, {"space", 0, CLI_PATH, &a.space_path, 0, 0},
        {"device", 0, CLI_STR, &a.device, 0, 0},  {"problem", 0, CLI_PROBLEM, &a.problem, 0, 0},
        {"mode", 0, CLI_MODE, &a.mode, 0, 0},     {NULL, 'k', CLI_INT, &a.k, 1, 1000},
        {"store", 0, CLI_PATH, &a.store, 0, 0},   {NULL, 0, 0, NULL, 0, 0}};
    int rc = cli_parse(argc, argv, opts, &first);
    if (rc >= 0 || (rc = cli_no_args(argc, argv, first)))
        return rc;
    return report_run(&a);
}

const cli_command cmd_report = {"report", report_main, usage_report};
