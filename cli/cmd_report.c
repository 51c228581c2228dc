/* cmd_report.c - `fasweep report`: the store's groups as one self-contained
 * HTML page (report/report.h). Contract: cli.h.
 */
#include <stdio.h>

#include "../kernels/fa_launch.h"
#include "../seeds/group.h"
#include "../report/report.h"
#include "../store/store.h"
#include "cli.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

typedef struct report_args {
    const char *store, *space_path, *gpu, *mode, *file, *family;
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
    int family;
    if ((a->space_path && cli_load_space(a->space_path, &sp) != 0) ||
        cli_family_option(a->family, a->space_path ? &sp : NULL, &family))
        return CLI_USAGE;
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
    for (int i = 0; i < set.n && rc == CLI_OK; i++) {
        const group *g = &set.groups[i];
        if (group_lay_out_family(&set.groups[i], a->space_path ? &sp : NULL, family) < 0) {
            cli_say("out of memory laying out %s %s %s", g->device, g->problem, g->mode);
            rc = CLI_FAIL;
        } else if (g->no_grid[0]) {
            /* One odd group (an import may hold any values) is flagged, not
             * fatal: the page draws it without a heatmap. */
            cli_say("warning: %s | %s | %s: %s; it is drawn without a heatmap, the other "
                    "groups in full",
                    g->device, g->problem, g->mode, g->no_grid);
        }
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
        /* A path written is a diagnostic (stderr), as topk's and export's: stdout
         * may be the page itself (-o /dev/stdout). */
        if (rc == CLI_OK)
            cli_say("wrote %s (%d group%s)", a->file, set.n, set.n == 1 ? "" : "s");
    }
    group_set_free(&set);
    store_close(st);
    return rc;
}

static const cli_opt report_opts[] = {
    CLI_OPT_OUTPUT(report_args,
                   "the page (default report.html; a regular file is replaced only when\n"
                   "complete, a link's target likewise; a device or FIFO is written to)"),
    CLI_OPT_VAL("space", CLI_PATH, report_args, space_path, "FILE",
                "lay groups of its problems over its grid, rejected points included\n"
                "(without it: the axis values the records hold)"),
    CLI_OPT_VAL("family", CLI_STR, report_args, family, "NAME",
                "draw the heatmaps over this kernel family's grid ({{FAMILIES}}): one the\n"
                "space sweeps (default: its own), or without --space the axis values of\n"
                "its records (default: the family most of a group's records are of)"),
    CLI_OPT_FILTER(report_args, "", "only this mode: {{MODES}}"),
    CLI_OPT_INT(NULL, 'k', report_args, k, 1, 1000, "N", "Top-K bars per group (default 8)"),
    CLI_OPT_VARIANTS(report_args, " in the\nTop-K too, labelled variant"),
    CLI_OPT_STORE(report_args),
    CLI_OPT_DEVICE_REFUSED,
    {0}};

CLI_MAIN_NO_ARGS(report, report_args, report_run, .file = "report.html", .k = 8)

CLI_COMMAND(
    report, .summary = "write an HTML page: heatmaps, Top-K, baselines, clocks per group",
    .usage = "[OPTIONS]",
    .about =
        "Writes one self-contained HTML page (inline SVG and CSS, no script, nothing from the\n"
        "network) with, per (GPU, problem, mode) group: a summary line, a heatmap of the\n"
        "median over one kernel family's grid, its first two axes per panel of the others,\n"
        "labelled by the family's axis names and config-text letters:\n"
        "{{PANELS}};\n"
        "coloured against the group's best (rejected points by reason, each reason with the\n"
        "family's rule, failed ones by status, a hover title per cell), the Top-K as bars with\n"
        "95 % interval whiskers, ties and baselines, and the clock state.\n",
    .exit = "0 written, 1 missing or empty store, no match or write error, 2 bad\n"
            "option or space file.");
