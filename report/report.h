/* report.h - `fasweep report`: the store's groups as one self-contained
 * HTML page (inline SVG and CSS, no script, nothing from the network), to
 * open offline in any browser or from an e-mail attachment.
 *
 * Per (device, problem, mode) group (seeds/group.h, laid over a space's
 * grid or the records' own axes):
 *   - a summary line: grid points, accepted, measured ok, failed by status,
 *     not measured, rejected by reason, when the records were measured,
 *     builds, space name and hash;
 *   - a heatmap of the median over the grid's family's first two axes
 *     (BLOCK_M x BLOCK_N for mma and wgmma), one small panel per
 *     combination of its other three (NUM_WARPS, STAGES, SWIZZLE or
 *     CONSUMER_WG, STAGES, PIPELINE), titled and labelled by the family's
 *     axis names and config-text letters (fa_family.axes), coloured
 *     relative to the group's best; rejected points by reason (the legend
 *     gives each code's rule in the family's words), failed ones by status and
 *     unmeasured ones drawn distinctly, each cell with a hover title
 *     (config, status, median, noise, registers, shared memory, clock);
 *   - the Top-K as horizontal bars with 95 % interval whiskers, statistical
 *     ties with the first marked (record_tie, the refine report's rule; an
 *     unknown tie, no interval on either, says "tie unknown" and is never
 *     drawn as a tie), a line
 *     per baseline (e.g. the SDPA backends); kernel variants (edited
 *     sources, build src-HASH) only when asked (meta.variants), labelled
 *     "(variant src-HASH)", else counted in a <p class="note variants">;
 *   - the clock state: the SM clock range of the records, the calibrated
 *     clock, blocks discarded, records measured under the threshold or with
 *     NVML throttle reasons, named.
 * A group with no grid (group.h's no_grid: its records hold more values on
 * an axis than a grid has room for) is flagged, not dropped: its section
 * carries data-no-grid="WHY" and a <p class="none flagged"> in place of the
 * heatmap; its summary, Top-K and clocks are drawn as for any group.
 * Every text from the store (device names, problems, errors, configs) is
 * HTML-escaped. Machine-readable hooks for tests: each group is a
 * <section class="group">, its summary a <p class="summary"> with data-*
 * counts, each heatmap cell an SVG <rect class="cell KIND"> (KIND: ok,
 * rej-REASON, st-STATUS, missing) with data-config.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include "../seeds/group.h"

typedef struct report_meta {
    const char *store_path;
    const char *space_path; /* the --space given, or NULL */
    const char *version;    /* fasweep's */
    const char *build;      /* this binary's kernel build id */
    int k;                  /* Top-K bars per group */
    int variants;           /* 1: rank kernel variants (src- builds) in the Top-K too,
                               marked "variant"; 0: count them in a note */
} report_meta;

/* Writes the page for set's groups (each laid out: group_lay_out) to out.
 * Returns 0, or -1 when out of memory (write errors are the caller's to
 * check on out). */
int report_write(const group_set *set, const report_meta *m, FILE *out);

#endif /* REPORT_H */
