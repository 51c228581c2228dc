/* report.c - the HTML report (contract: report.h). Plain fprintf of HTML,
 * CSS and SVG: rectangles and text, no script.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../store/text.h"

#define RP_CELL 30       /* heatmap cell, px */
#define RP_WORST 1.5     /* the colour scale's red end: 1.5x the best */
#define RP_BAR_LABEL 230 /* Top-K: label column, px */
#define RP_BAR_W 400     /* Top-K: bar area, px */
#define RP_BAR_H 22

/* ---- text ----------------------------------------------------------------------------------- */

/* s as HTML text (also safe inside a quoted attribute). */
static void rp_esc(FILE *o, const char *s)
{
    static const char special[] = "&<>\"'";
    static const char *const entity[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    for (; *s; s++) {
        const char *hit = strchr(special, *s);
        if (hit)
            fputs(entity[hit - special], o);
        else
            fputc(*s, o);
    }
}

static void rp_time(double t, char *buf, size_t n)
{
    char iso[32];
    text_iso8601(t, iso, sizeof iso);
    snprintf(buf, n, "%.10s %.8s UTC", iso, iso + 11);
}

/* ---- counting ------------------------------------------------------------------------------- */

#define RP_N_STATUS (RECORD_ST_IMPLAUSIBLE + 1)

typedef struct rp_counts {
    long points, accepted, ok, missing, failed;
    long by_status[RP_N_STATUS];
    long by_reason[PLAN_REASON_COUNT];
    long kernels, baselines; /* the group's records of each kind, every build */
    double first_ts, last_ts;
} rp_counts;

static void rp_count(const group *g, rp_counts *c)
{
    memset(c, 0, sizeof *c);
    c->points = (long)g->n_cells;
    for (size_t i = 0; i < g->n_cells; i++) {
        const group_cell *x = &g->cells[i];
        if (x->reason != PLAN_OK) {
            c->by_reason[x->reason]++;
            continue;
        }
        c->accepted++;
        if (!x->rec)
            c->missing++;
        else if (x->rec->status == RECORD_ST_OK)
            c->ok++;
        else {
            c->failed++;
            c->by_status[x->rec->status]++;
        }
    }
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        if (r->kind == RECORD_KIND_BASELINE)
            c->baselines++;
        else
            c->kernels++;
        if (r->timestamp > 0 && (c->first_ts == 0 || r->timestamp < c->first_ts))
            c->first_ts = r->timestamp;
        if (r->timestamp > c->last_ts)
            c->last_ts = r->timestamp;
    }
}

/* The fastest ok median of the grid's cells (0 when none). */
static double rp_best(const group *g)
{
    double best = 0;
    for (size_t i = 0; i < g->n_cells; i++) {
        const record *r = g->cells[i].rec;
        if (r && r->status == RECORD_ST_OK && (best == 0 || r->time.median_us < best))
            best = r->time.median_us;
    }
    return best;
}

/* ---- the summary ---------------------------------------------------------------------------- */

static void rp_builds(FILE *o, const group *g)
{
    const char *seen[8];
    int n = 0, more = 0;
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        if (r->kind != RECORD_KIND_KERNEL)
            continue;
        int dup = 0;
        for (int j = 0; j < n && !dup; j++)
            dup = strcmp(seen[j], r->build) == 0;
        if (dup)
            continue;
        if (n == 8) {
            more++;
            continue;
        }
        seen[n++] = r->build;
    }
    fputs("builds ", o);
    for (int j = 0; j < n; j++) {
        fputs(j ? ", " : "", o);
        rp_esc(o, seen[j]);
    }
    if (!n)
        fputs("none", o);
    if (more)
        fprintf(o, " and %d more", more);
}

/* The space named by the records (their provenance), the first one seen. */
static const record *rp_space_record(const group *g)
{
    for (size_t i = 0; i < g->n_recs; i++)
        if (g->recs[i].kind == RECORD_KIND_KERNEL && g->recs[i].space_name[0])
            return &g->recs[i];
    return NULL;
}

static void rp_summary(FILE *o, const group *g, const rp_counts *c, int from_space)
{
    fprintf(o,
            "<p class=\"summary\" data-points=\"%ld\" data-accepted=\"%ld\" data-ok=\"%ld\" "
            "data-failed=\"%ld\" data-missing=\"%ld\"",
            c->points, c->accepted, c->ok, c->failed, c->missing);
    for (int s = 1; s < RP_N_STATUS; s++)
        fprintf(o, " data-status-%s=\"%ld\"", record_status_name((record_status)s),
                c->by_status[s]);
    for (int r = 1; r < PLAN_REASON_COUNT; r++)
        fprintf(o, " data-rejected-%s=\"%ld\"", plan_reason_code((plan_reason)r), c->by_reason[r]);
    fprintf(o, ">%ld grid points%s: <b>%ld accepted</b> (%ld measured ok", c->points,
            from_space ? "" : " (the records' own axes: no space given for this problem)",
            c->accepted, c->ok);
    if (c->failed) {
        fputs(", failed:", o);
        for (int s = 1; s < RP_N_STATUS; s++)
            if (c->by_status[s])
                fprintf(o, " %s %ld", record_status_name((record_status)s), c->by_status[s]);
    }
    fprintf(o, ", %ld not measured), %ld rejected", c->missing, c->points - c->accepted);
    const char *sep = " (";
    for (int r = 1; r < PLAN_REASON_COUNT; r++)
        if (c->by_reason[r]) {
            fprintf(o, "%s%s %ld", sep, plan_reason_code((plan_reason)r), c->by_reason[r]);
            sep = ", ";
        }
    fprintf(o, "%s; %ld kernel and %ld baseline records", sep[0] == ',' ? ")" : "", c->kernels,
            c->baselines);
    if (c->last_ts > 0) {
        char a[40], b[40];
        rp_time(c->first_ts, a, sizeof a);
        rp_time(c->last_ts, b, sizeof b);
        fprintf(o, ", measured %s to %s (%.0f s apart)", a, b, c->last_ts - c->first_ts);
    }
    fputs("; ", o);
    rp_builds(o, g);
    const record *sp = rp_space_record(g);
    if (sp) {
        fputs("; space ", o);
        rp_esc(o, sp->space_name);
        fputs(" ", o);
        rp_esc(o, sp->space_hash);
    }
    fputs(".</p>\n", o);
}

/* ---- the heatmap ---------------------------------------------------------------------------- */

static const char *const rp_reason_fill[PLAN_REASON_COUNT] = {
    "",        "#9e9e9e", "#cfd8dc", "#b0bec5", "url(#hatch)",
    "#bdbdbd", "#cfd8dc", "#b0bec5", "#cfd8dc", "#eeeeee"};
static const char *const rp_reason_mark[PLAN_REASON_COUNT] = {"",  "H", "W", "C", "S",
                                                              "A", "T", "R", "P", "N"};
static const char *const rp_status_fill[RP_N_STATUS] = {"",        "#8e24aa", "#212121",
                                                        "#ef6c00", "#6d4c41", "#c2185b"};
static const char *const rp_status_mark[RP_N_STATUS] = {"", "wr", "cr", "to", "ce", "im"};

/* The colour of a median ratio r >= 1 to the best: green at 1, through
 * yellow, to red at RP_WORST and beyond. */
static void rp_scale(double r, char *buf, size_t n)
{
    double t = (r - 1) / (RP_WORST - 1);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    snprintf(buf, n, "hsl(%.0f,75%%,%.0f%%)", 125 * (1 - t), 42 + 10 * sin(t * M_PI));
}

static void rp_cell_title(FILE *o, const group *g, const group_cell *c, double best)
{
    char cfg[64], why[256];
    fa_config_format(&c->cfg, cfg, sizeof cfg);
    fprintf(o, "<title>%s\n", cfg);
    const record *r = c->rec;
    if (c->reason != PLAN_OK) {
        const plan_point p = {0, c->cfg, c->reason, c->smem_bytes, 0};
        plan_reject_reason(&p, g->smem_limit, why, sizeof why);
        fprintf(o, "rejected (%s): ", plan_reason_code(c->reason));
        rp_esc(o, why);
    } else if (!r) {
        fprintf(o, "accepted, not measured (%ld B shared memory)", c->smem_bytes);
    } else if (r->status != RECORD_ST_OK) {
        fprintf(o, "%s: ", record_status_name(r->status));
        rp_esc(o, r->error);
    } else {
        fprintf(o, "%.3f us (%.3fx the best), noise %.2f %%, %d samples x %d launches\n",
                r->time.median_us, r->time.median_us / best, 100 * r->time.noise, r->time.samples,
                r->time.launches > 0 ? r->time.launches : 1);
        fprintf(o, "%d registers, %ld B shared memory, %d blocks/SM, %.1f TFLOPS", r->regs,
                r->smem_dynamic, r->max_blocks_per_sm, r->tflops);
        if (r->clock.median_mhz > 0)
            fprintf(o, "\nSM clock %d MHz (%d-%d)%s", r->clock.median_mhz, r->clock.min_mhz,
                    r->clock.max_mhz,
                    r->clock.below == 1 ? ", measured under the calibrated clock" : "");
    }
    if (r) {
        fputs("\nbuild ", o);
        rp_esc(o, r->build);
    }
    fputs("</title>", o);
}

/* One cell at (x, y). */
static void rp_cell(FILE *o, const group *g, const group_cell *c, double best, int x, int y)
{
    char fill[48], cfg[64];
    const char *kind, *mark = "", *dash = "";
    char kbuf[32];
    const record *r = c->rec;
    fa_config_format(&c->cfg, cfg, sizeof cfg);
    if (c->reason != PLAN_OK) {
        snprintf(kbuf, sizeof kbuf, "rej-%s", plan_reason_code(c->reason));
        kind = kbuf;
        snprintf(fill, sizeof fill, "%s", rp_reason_fill[c->reason]);
        mark = rp_reason_mark[c->reason];
    } else if (!r) {
        kind = "missing";
        snprintf(fill, sizeof fill, "#ffffff");
        mark = "?";
        dash = " stroke-dasharray=\"3 2\"";
    } else if (r->status != RECORD_ST_OK) {
        snprintf(kbuf, sizeof kbuf, "st-%s", record_status_name(r->status));
        kind = kbuf;
        snprintf(fill, sizeof fill, "%s", rp_status_fill[r->status]);
        mark = rp_status_mark[r->status];
    } else {
        kind = "ok";
        rp_scale(r->time.median_us / best, fill, sizeof fill);
    }
    fprintf(o,
            "<g><rect class=\"cell %s\" data-config=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" "
            "height=\"%d\" fill=\"%s\" stroke=\"#607d8b\"%s>",
            kind, cfg, x, y, RP_CELL - 2, RP_CELL - 2, fill, dash);
    rp_cell_title(o, g, c, best);
    fputs("</rect>", o);
    const int tx = x + (RP_CELL - 2) / 2, ty = y + RP_CELL / 2 + 3;
    if (r && r->status == RECORD_ST_OK)
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"v\">%.2f%s</text>", tx, ty,
                r->time.median_us / best, r->clock.below == 1 ? "!" : "");
    else
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"m%s\">%s</text>", tx, ty,
                r && r->status == RECORD_ST_CRASHED ? " w" : "", mark);
    fputs("</g>\n", o);
}

/* The grid's axes as the heatmap lays them out: axis RP_ROWS down, axis
 * RP_COLS across, one panel per combination of the others (the family's
 * first two axes, BLOCK_M and BLOCK_N for mma and wgmma; the panels are
 * NUM_WARPS, STAGES, SWIZZLE or CONSUMER_WG, STAGES, PIPELINE). Names and
 * tags (the config text's letters) are the grid's family's. */
#define RP_ROWS 0
#define RP_COLS 1

static const fa_axis *rp_axis(const group *g, int a)
{
    const fa_family *f = fa_family_get(g->family);
    static const fa_axis unknown = {"?", "", NULL, 0, 0, 0, 0, "?"};
    return f ? &f->axes[1 + a] : &unknown;
}

/* One panel: axis RP_ROWS down, RP_COLS across, at the panel axes'
 * indices pix[] (pix[a] for a > RP_COLS). */
static void rp_panel(FILE *o, const group *g, const int pix[SPACE_AXIS_COUNT], double best)
{
    const int nm = g->axis_len[RP_ROWS], nn = g->axis_len[RP_COLS];
    const int left = 34, top = 34, h = top + nm * RP_CELL + 4;
    const int w = left + nn * RP_CELL + 4 < 100 ? 100 : left + nn * RP_CELL + 4; /* the title */
    fprintf(o, "<svg class=\"panel\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", w, h, w,
            h);
    fprintf(o, "<text x=\"%d\" y=\"12\" class=\"pt\">", 4);
    for (int a = RP_COLS + 1; a < SPACE_AXIS_COUNT; a++)
        fprintf(o, "%s%s%d", a > RP_COLS + 1 ? " &#183; " : "", rp_axis(g, a)->tag,
                g->axis[a][pix[a]]);
    fputs("<title>", o);
    for (int a = RP_COLS + 1; a < SPACE_AXIS_COUNT; a++)
        fprintf(o, "%s%s %d", a > RP_COLS + 1 ? ", " : "", rp_axis(g, a)->name, g->axis[a][pix[a]]);
    fputs("</title></text>", o);
    for (int in = 0; in < nn; in++)
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"ax\">%s%d</text>",
                left + in * RP_CELL + RP_CELL / 2, top - 6, rp_axis(g, RP_COLS)->tag,
                g->axis[RP_COLS][in]);
    for (int im = 0; im < nm; im++) {
        fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"ay\">%s%d</text>", left - 4,
                top + im * RP_CELL + RP_CELL / 2 + 3, rp_axis(g, RP_ROWS)->tag,
                g->axis[RP_ROWS][im]);
        for (int in = 0; in < nn; in++) {
            /* The cell's index: the axes in order, the last innermost. */
            size_t idx = 0;
            for (int a = 0; a < SPACE_AXIS_COUNT; a++)
                idx = idx * (size_t)g->axis_len[a] + (size_t)(a == RP_ROWS   ? im
                                                              : a == RP_COLS ? in
                                                                             : pix[a]);
            rp_cell(o, g, &g->cells[idx], best, left + in * RP_CELL, top + im * RP_CELL);
        }
    }
    fputs("</svg>\n", o);
}

/* One legend entry: a 14-px swatch (FILL, then the rect's EXTRA attributes),
 * MARK, then WHAT after PREFIX, then NOTE in parentheses (NULL: none). */
static void rp_key(FILE *o, const char *fill, const char *extra, const char *mark,
                   const char *prefix, const char *what, const char *note)
{
    fprintf(o,
            "<span><svg width=\"14\" height=\"14\"><rect width=\"14\" height=\"14\" "
            "fill=\"%s\"%s/></svg> %s %s%s",
            fill, extra, mark, prefix, what);
    if (note) {
        fputs(" <i class=\"rule\">(", o);
        rp_esc(o, note);
        fputs(")</i>", o);
    }
    fputs("</span>", o);
}

static void rp_legend(FILE *o, const group *g, const rp_counts *c)
{
    fputs("<div class=\"legend\"><svg width=\"190\" height=\"26\"><defs><linearGradient "
          "id=\"scale\">",
          o);
    for (int i = 0; i <= 4; i++) {
        char col[48];
        rp_scale(1 + (RP_WORST - 1) * i / 4.0, col, sizeof col);
        fprintf(o, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", 25 * i, col);
    }
    fprintf(o,
            "</linearGradient></defs><rect x=\"0\" y=\"2\" width=\"120\" height=\"12\" "
            "fill=\"url(#scale)\"/><text x=\"0\" y=\"25\" class=\"lg\">1.00x</text><text "
            "x=\"104\" y=\"25\" class=\"lg\">&#8805;%.2fx the best</text></svg>",
            RP_WORST);
    /* Each code with what it means for this grid's family. */
    const fa_family *f = fa_family_get(g->family);
    for (int r = 1; r < PLAN_REASON_COUNT; r++)
        if (c->by_reason[r])
            rp_key(o, rp_reason_fill[r], " stroke=\"#607d8b\"", rp_reason_mark[r],
                   "rejected: ", plan_reason_code((plan_reason)r),
                   f && r < FA_REJ_COUNT ? f->rule[r] : NULL);
    for (int s = 1; s < RP_N_STATUS; s++)
        if (c->by_status[s])
            rp_key(o, rp_status_fill[s], "", rp_status_mark[s], "",
                   record_status_name((record_status)s), NULL);
    if (c->missing)
        fputs("<span><svg width=\"14\" height=\"14\"><rect width=\"13\" height=\"13\" x=\"0.5\" "
              "y=\"0.5\" fill=\"#fff\" stroke=\"#607d8b\" stroke-dasharray=\"3 2\"/></svg> ? "
              "accepted, not measured</span>",
              o);
    fputs("<span>! measured under the calibrated clock</span></div>\n", o);
}

static void rp_heatmap(FILE *o, const group *g, const rp_counts *c)
{
    if (g->no_grid[0]) {
        fputs("<p class=\"none flagged\">No heatmap: ", o);
        rp_esc(o, g->no_grid);
        fputs(" (pass --space FILE for a space that holds this problem to draw its grid).</p>\n",
              o);
        return;
    }
    if (g->n_cells == 0) {
        const fa_family *f = fa_family_get(g->family);
        fprintf(o,
                "<p class=\"none\">No kernel records in this group: no heatmap. Its grid is "
                "kernel family %s's (--family picks another).</p>\n",
                f ? f->name : "?");
        return;
    }
    const double best = rp_best(g);
    const fa_family *f = fa_family_get(g->family);
    fputs("<h3>Where the fast configs are</h3>\n<p class=\"note\">Median time relative to the "
          "group's best",
          o);
    fprintf(o, " (kernel family %s), per %s (rows %s) &times; %s (columns %s); one panel per ",
            f ? f->name : "?", rp_axis(g, RP_ROWS)->name, rp_axis(g, RP_ROWS)->tag,
            rp_axis(g, RP_COLS)->name, rp_axis(g, RP_COLS)->tag);
    for (int a = RP_COLS + 1; a < SPACE_AXIS_COUNT; a++)
        fprintf(o, "%s%s %s", a == RP_COLS + 1 ? "" : ", ", rp_axis(g, a)->name,
                rp_axis(g, a)->tag);
    fputs(". Hover a cell for its numbers.</p>\n", o);
    rp_legend(o, g, c);
    fputs("<div class=\"panels\">\n", o);
    /* Every combination of the panel axes, the last fastest. */
    size_t panels = 1;
    for (int a = RP_COLS + 1; a < SPACE_AXIS_COUNT; a++)
        panels *= (size_t)g->axis_len[a];
    for (size_t k = 0; k < panels; k++) {
        int pix[SPACE_AXIS_COUNT] = {0};
        size_t rest = k;
        for (int a = SPACE_AXIS_COUNT - 1; a > RP_COLS; a--) {
            pix[a] = (int)(rest % (size_t)g->axis_len[a]);
            rest /= (size_t)g->axis_len[a];
        }
        rp_panel(o, g, pix, best > 0 ? best : 1);
    }
    fputs("</div>\n", o);
}

/* ---- the Top-K ------------------------------------------------------------------------------ */

static int rp_order(const void *pa, const void *pb)
{
    const record *a = *(const record *const *)pa, *b = *(const record *const *)pb;
    const int c = record_rank_order(a->time.median_us, a->time.noise, a->config, b->time.median_us,
                                    b->time.noise, b->config);
    return c ? c : strcmp(a->build, b->build);
}

/* The group's ok records of one kind, in the ranking order; baselines one
 * per name (its best); kernel variants (build src-HASH) only when
 * variants, else counted in *left_out (may be NULL). Caller frees. */
static const record **rp_ranked(const group *g, record_kind kind, int variants, int *n,
                                int *left_out)
{
    const record **v = malloc((g->n_recs + 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; v && i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        if (r->kind != kind || r->status != RECORD_ST_OK)
            continue;
        if (kind == RECORD_KIND_KERNEL && !variants && record_is_variant(r)) {
            if (left_out)
                (*left_out)++;
            continue;
        }
        v[(*n)++] = r;
    }
    if (v && *n > 1)
        qsort(v, (size_t)*n, sizeof *v, rp_order);
    if (v && kind == RECORD_KIND_BASELINE) {
        int k = 0;
        for (int i = 0; i < *n; i++) {
            int dup = 0;
            for (int j = 0; j < k && !dup; j++)
                dup = strcmp(v[j]->config, v[i]->config) == 0;
            if (!dup)
                v[k++] = v[i];
        }
        *n = k;
    }
    return v;
}

static void rp_bar(FILE *o, const record *r, int rank, const record *first, double xmax,
                   const record *base, int y)
{
    const double sx = RP_BAR_W / xmax, us = r->time.median_us;
    const int ci = record_has_ci(r);
    /* Drawn as a tie only when the rule says so; without an interval on
     * either side the rule cannot tell, and the bar says "tie unknown". */
    const record_tie_t t = rank > 1 ? record_tie(r, first) : RECORD_TIE_NO;
    const int tie = t == RECORD_TIE_YES, unknown = t == RECORD_TIE_UNKNOWN;
    fprintf(o, "<g class=\"bar%s\"><text x=\"%d\" y=\"%d\" class=\"bl\">%d. ", tie ? " tie" : "",
            RP_BAR_LABEL - 6, y + 15, rank);
    rp_esc(o, r->config);
    if (record_is_variant(r)) {
        fputs(" (variant ", o);
        rp_esc(o, r->build);
        fputs(")", o);
    }
    fprintf(o, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">",
            RP_BAR_LABEL, y + 3, us * sx, RP_BAR_H - 6, tie ? "#90caf9" : "#1e88e5");
    if (ci)
        fprintf(o, "<title>%.3f us, 95 %% interval %.3f..%.3f us (whiskers)%s</title></rect>", us,
                r->time.ci_lo_us, r->time.ci_hi_us,
                tie       ? "; a statistical tie with the first"
                : unknown ? "; whether it ties with the first is unknown (the first has no "
                            "interval)"
                          : "");
    else
        fprintf(o,
                "<title>%.3f us, no interval (measured before intervals, or too few rounds): "
                "never ranked as certain%s</title></rect>",
                us, unknown ? "; whether it ties with the first is unknown" : "");
    if (ci) {
        const double a = RP_BAR_LABEL + r->time.ci_lo_us * sx;
        const double b = RP_BAR_LABEL + r->time.ci_hi_us * sx;
        const int m = y + RP_BAR_H / 2;
        fprintf(o, "<path d=\"M%.1f %d H%.1f M%.1f %d V%d M%.1f %d V%d\" class=\"wh\"/>", a, m, b,
                a, m - 5, m + 5, b, m - 5, m + 5);
    }
    fprintf(o, "<text x=\"%d\" y=\"%d\" class=\"br\">%.2f us", RP_BAR_LABEL + RP_BAR_W + 8, y + 15,
            us);
    if (base)
        fprintf(o, " &#183; %.2fx", base->time.median_us / us);
    if (tie)
        fputs(" &#183; tie", o);
    else if (unknown)
        fputs(" &#183; tie unknown", o);
    if (r->clock.below == 1 || r->throttled == 1)
        fputs(" &#183; <tspan class=\"warn\">clock!</tspan>", o);
    fputs("</text></g>\n", o);
}

static void rp_topk(FILE *o, const group *g, int k, int variants)
{
    int nk = 0, nb = 0, left = 0;
    const record **ks = rp_ranked(g, RECORD_KIND_KERNEL, variants, &nk, &left);
    const record **bs = rp_ranked(g, RECORD_KIND_BASELINE, 1, &nb, NULL);
    fprintf(o, "<h3>Top-%d</h3>\n", k);
    if (left)
        fprintf(o,
                "<p class=\"note variants\" data-variants=\"%d\">%d ok record%s of edited kernels "
                "(variants, build src-HASH) not ranked: pass --variants.</p>\n",
                left, left, left == 1 ? "" : "s");
    if (nk == 0)
        fputs("<p class=\"none\">No ok kernel record in this group.</p>\n", o);
    if (nk > k)
        nk = k;
    double xmax = 0;
    for (int i = 0; i < nk; i++)
        xmax = fmax(xmax, record_has_ci(ks[i]) ? ks[i]->time.ci_hi_us : ks[i]->time.median_us);
    for (int i = 0; i < nb; i++)
        xmax = fmax(xmax, bs[i]->time.median_us);
    xmax *= 1.08;
    const int h = 20 + (nk ? nk : 1) * RP_BAR_H + 8 * (nb > 0);
    if (nk || nb) {
        fprintf(o, "<svg class=\"bars\" width=\"%d\" height=\"%d\">", RP_BAR_LABEL + RP_BAR_W + 170,
                h);
        for (int i = 0; i < nk; i++)
            rp_bar(o, ks[i], i + 1, ks[0], xmax, nb ? bs[0] : NULL, 16 + i * RP_BAR_H);
        for (int i = 0; i < nb; i++) {
            const double x = RP_BAR_LABEL + bs[i]->time.median_us * RP_BAR_W / xmax;
            fprintf(o,
                    "<g class=\"baseline\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"12\" y2=\"%d\"/>"
                    "<text x=\"%.1f\" y=\"%d\">",
                    x, x, h, x + 3, 10 + 11 * (i % 2));
            rp_esc(o, bs[i]->config);
            fprintf(o, " %.2f us</text></g>\n", bs[i]->time.median_us);
        }
        fputs("</svg>\n", o);
        fputs("<p class=\"note\">Whiskers: the 95 % interval. Light bars: a statistical tie "
              "with the first (the medians differ by less than their combined intervals; the "
              "order among them may differ from run to run). \"tie unknown\": the first or "
              "this one has no interval, so the rule cannot tell; such a bar is not drawn as "
              "a tie. "
              "Dashed lines: baselines; the ratio is the fastest baseline over the "
              "config.</p>\n",
              o);
    }
    free(ks);
    free(bs);
}

/* ---- clocks --------------------------------------------------------------------------------- */

static void rp_clocks(FILE *o, const group *g)
{
    int lo = 0, hi = 0, ref = 0, n = 0, below = 0, thr = 0;
    long discarded = 0;
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        if (r->kind != RECORD_KIND_KERNEL || r->status != RECORD_ST_OK)
            continue;
        if (r->clock.median_mhz > 0) {
            lo = n ? (r->clock.median_mhz < lo ? r->clock.median_mhz : lo) : r->clock.median_mhz;
            hi = r->clock.median_mhz > hi ? r->clock.median_mhz : hi;
            n++;
        }
        if (r->clock.ref_mhz > 0)
            ref = r->clock.ref_mhz;
        discarded += r->clock.discarded;
        below += r->clock.below == 1;
        thr += r->throttled == 1;
    }
    fputs("<h3>Clocks</h3>\n<p class=\"clock\">", o);
    if (n)
        fprintf(o, "SM clock during the samples: %d&#8211;%d MHz over %d records", lo, hi, n);
    else
        fputs("No record holds its clock during the samples (measured before clock probes, or "
              "imported)",
              o);
    if (ref)
        fprintf(o, "; calibrated under load: %d MHz", ref);
    fprintf(o,
            "; %ld timed blocks discarded for a lower clock; <span class=\"%s\">%d records "
            "measured under the threshold</span>; %d with NVML throttle reasons",
            discarded, below ? "warn" : "", below, thr);
    fputs(".</p>\n", o);
    if (!below && !thr)
        return;
    fputs("<ul class=\"clock\">", o);
    for (size_t i = 0; i < g->n_recs; i++) {
        const record *r = &g->recs[i];
        if (r->kind != RECORD_KIND_KERNEL || r->status != RECORD_ST_OK ||
            (r->clock.below != 1 && r->throttled != 1))
            continue;
        fputs("<li>", o);
        rp_esc(o, r->config);
        fprintf(o, ": %d MHz (calibrated %d)%s, throttle reasons 0x%llx</li>", r->clock.median_mhz,
                r->clock.ref_mhz, r->clock.below == 1 ? ", under the threshold" : "",
                r->throttle_reasons);
    }
    fputs("</ul>\n", o);
}

/* ---- the page ------------------------------------------------------------------------------- */

static const char rp_css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#212121;"
    "background:#fafafa}h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 4px;"
    "border-top:2px solid #1e88e5;padding-top:10px}h3{font-size:15px;margin:16px 0 4px}"
    ".meta,.note{color:#616161;font-size:12px}.summary{background:#fff;border:1px solid #e0e0e0;"
    "padding:8px 10px}.panels{display:flex;flex-wrap:wrap;gap:10px}.panel{background:#fff;"
    "border:1px solid #e0e0e0}.legend{display:flex;flex-wrap:wrap;gap:14px;align-items:center;"
    "font-size:12px;margin:6px 0}.legend svg{vertical-align:middle}text{font-size:10px;"
    "fill:#37474f}.pt{font-size:11px;font-weight:600}.ax{text-anchor:middle}.ay{text-anchor:end}"
    ".v{text-anchor:middle;font-size:9px;fill:#102027}.m{text-anchor:middle;font-size:9px;"
    "fill:#263238}.m.w{fill:#fff}.lg{font-size:10px}.bl{text-anchor:end;font-size:12px}"
    ".br{font-size:12px}.wh{stroke:#0d47a1;stroke-width:1.5;fill:none}.baseline line{"
    "stroke:#d81b60;stroke-width:1.5;stroke-dasharray:5 3}.baseline text{fill:#d81b60;"
    "font-size:11px}.warn{color:#c62828;fill:#c62828;font-weight:600}.none{color:#757575}"
    "ul.clock{font-size:12px;margin:0}";

/* What the group's numbers are (the mode's descriptor, store/mode.h): a
 * reader compares hot and batch numbers only knowing what each times. */
static void rp_mode(FILE *o, const char *mode)
{
    const mode_desc *d = mode_find(mode);
    if (!d) /* records are checked on the way in: every stored mode is known */
        return;
    fprintf(o, "<p class=\"mode\"><b>%s</b>: %s; noise: %s; stops by %s</p>\n", d->name,
            d->measures, d->uncertainty_text, d->stop);
}

static void rp_group(FILE *o, const group *g, int from_space, int k, int variants)
{
    rp_counts c;
    rp_count(g, &c);
    fputs("<section class=\"group\" data-device=\"", o);
    rp_esc(o, g->device);
    fputs("\" data-problem=\"", o);
    rp_esc(o, g->problem);
    fprintf(o, "\" data-mode=\"%s\"", g->mode);
    if (g->no_grid[0]) { /* flagged: drawn without its grid (group.h) */
        fputs(" data-no-grid=\"", o);
        rp_esc(o, g->no_grid);
        fputs("\"", o);
    }
    fputs(">\n<h2>", o);
    rp_esc(o, g->device);
    fputs(" &#183; ", o);
    rp_esc(o, g->problem);
    fprintf(o, " &#183; %s</h2>\n", g->mode);
    rp_mode(o, g->mode);
    rp_summary(o, g, &c, from_space);
    rp_heatmap(o, g, &c);
    rp_topk(o, g, k, variants);
    rp_clocks(o, g);
    fputs("</section>\n", o);
}

int report_write(const group_set *set, const report_meta *m, FILE *out)
{
    char now[40];
    rp_time((double)time(NULL), now, sizeof now);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>fasweep "
          "report: ",
          out);
    rp_esc(out, m->store_path);
    fprintf(out, "</title>\n<style>%s</style></head>\n<body>\n", rp_css);
    /* One hatch pattern for the page (smem-rejected cells). */
    fputs("<svg width=\"0\" height=\"0\" style=\"position:absolute\"><defs><pattern id=\"hatch\" "
          "width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#eceff1\"/>"
          "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#90a4ae\" "
          "stroke-width=\"3\"/></pattern></defs></svg>\n",
          out);
    fputs("<h1>fasweep report</h1>\n<p class=\"meta\">Store ", out);
    rp_esc(out, m->store_path);
    if (m->space_path) {
        fputs(", space ", out);
        rp_esc(out, m->space_path);
    }
    fprintf(out, "; %d group%s (device &#183; problem &#183; mode); written %s by fasweep ", set->n,
            set->n == 1 ? "" : "s", now);
    rp_esc(out, m->version);
    fputs(" (kernel build ", out);
    rp_esc(out, m->build);
    fputs(").</p>\n", out);
    if (set->n == 0)
        fputs("<p class=\"none\">No records match.</p>\n", out);
    for (int i = 0; i < set->n; i++) {
        rp_group(out, &set->groups[i], set->groups[i].from_space, m->k, m->variants);
    }
    fputs("</body></html>\n", out);
    return 0;
}
