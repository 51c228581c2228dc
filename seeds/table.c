/* table.c - the human table of a ranking (contract: table.h). */
#include "table.h"

static void table_header(const rank_group *g, FILE *out)
{
    fprintf(out, "%s | %s | %s | %ld ok, %ld failed | best baseline: ", g->device, g->problem,
            g->mode, g->n_ok, g->n_failed);
    if (g->has_baseline)
        fprintf(out, "%s %.2f us\n", g->best_baseline.config, g->best_baseline.time.median_us);
    else
        fprintf(out, "none\n");
}

static void table_group(const rank_group *g, FILE *out)
{
    table_header(g, out);
    if (g->n_top == 0) {
        fprintf(out, "  no ok kernel results (%ld failed)\n", g->n_failed);
        if (g->n_variants)
            fprintf(out,
                    "  (%ld ok records of edited kernels (variants) not ranked: pass "
                    "--variants)\n",
                    g->n_variants);
        return;
    }
    fprintf(out, "%4s  %-24s %10s %7s %7s %10s %8s %6s %5s %8s %8s %6s\n", "rank", "config",
            "median_us", "+-95%", "tie", "min_us", "TFLOPS", "CV%", "regs", "smem", "speedup",
            "MHz");
    int no_ci = 0;
    for (int i = 0; i < g->n_top; i++) {
        const record *r = &g->top[i];
        char sp[32] = "-", mhz[16] = "-", ci[16] = "none";
        /* The interval an independent run lands in (docs/measurement.md,
         * "Intervals"); a record without one is never ranked as certain. */
        if (record_has_ci(r))
            snprintf(ci, sizeof ci, "%.2f",
                     100 * (r->time.ci_hi_us - r->time.ci_lo_us) / 2 / r->time.median_us);
        no_ci += !record_has_ci(r);
        const char *tie = i == 0 ? "" : record_tie_name(record_tie(r, &g->top[0]));
        const double x = rank_speedup(g, r);
        if (x > 0)
            snprintf(sp, sizeof sp, "%.2fx", x);
        /* The median SM clock of its blocks; "!" when some ran under the
         * calibrated clock's threshold (docs/measurement.md, "Clocks"). */
        if (r->clock.median_mhz > 0)
            snprintf(mhz, sizeof mhz, "%d%s", r->clock.median_mhz, r->clock.below == 1 ? "!" : "");
        fprintf(out, "%4d  %-24s %10.2f %7s %7s %10.2f %8.2f %6.2f %5d %8ld %8s %6s%s%s\n", i + 1,
                r->config, r->time.median_us, ci, tie, r->time.min_us, r->tflops,
                100.0 * r->time.cv, r->regs, (long)r->smem_static + r->smem_dynamic, sp, mhz,
                record_is_variant(r) ? "  variant " : "", record_is_variant(r) ? r->build : "");
    }
    if (no_ci)
        fprintf(out,
                "  (+-95%% none: measured before intervals, or in too few rounds: never ranked "
                "as certain; its tie is unknown)\n");
    for (int i = 0; i < g->n_top; i++)
        if (record_is_variant(&g->top[i])) {
            fprintf(out, "  (variant: an edited kernel source measured by `fasweep eval --kernel`, "
                         "build src-HASH of its text; `fasweep show` names the file)\n");
            break;
        }
    if (g->n_variants)
        fprintf(out,
                "  (%ld ok records of edited kernels (variants) not ranked: pass --variants)\n",
                g->n_variants);
    for (int i = 0; i < g->n_top; i++)
        if (g->top[i].clock.below == 1) {
            fprintf(out, "  (MHz with !: some of its timed blocks ran under the calibrated clock "
                         "and could not be taken again; see docs/measurement.md)\n");
            break;
        }
}

void table_print(const rank_result *r, FILE *out)
{
    for (int i = 0; i < r->n_groups; i++) {
        if (i > 0)
            fputc('\n', out);
        table_group(&r->groups[i], out);
    }
}
