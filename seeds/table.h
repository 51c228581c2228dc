/* table.h - a ranking as the human table `fasweep topk` prints.
 *
 * One section per group, in the ranking's order, a blank line between
 * two: a header line (device | problem | mode | ok and failed counts |
 * the best baseline's name and median, or none), then one row per seed
 * (rank, config, median, its 95 % interval's half width in percent, the
 * tie with the first, min, TFLOPS, CV, registers, shared memory, speedup
 * over the baseline, the median SM clock, "variant src-HASH" for an
 * edited kernel), then notes: seeds without an interval, variants ranked
 * or left out, clocks under the calibrated threshold. A group with no ok
 * kernel record says so in one line.
 */
#ifndef TABLE_H
#define TABLE_H

#include <stdio.h>

#include "rank.h"

/* Prints the human table of every group of r to out. */
void table_print(const rank_result *r, FILE *out);

#endif /* TABLE_H */
