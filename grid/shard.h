/* shard.h - splitting a plan over many processes or hosts.
 *
 * A shard is "I/N": this process measures part I (0-based) of N. The split
 * is a deterministic function of the plan alone, so N processes on N hosts
 * that each compute it get disjoint parts whose union is the whole plan,
 * with no coordinator. Parts are balanced by expected cost (the problem's
 * FLOPs, times the number of measurement modes): points are taken from the
 * most to the least expensive, each to the part with the least cost so far
 * (longest-processing-time-first), ties to the lower part index.
 *
 * Under Slurm the shard comes from the environment (shard_from_env):
 *   job array:  SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or with
 *               SLURM_ARRAY_TASK_MIN / _MAX (I = ID - MIN, N = MAX - MIN + 1)
 *   srun tasks: SLURM_PROCID / SLURM_NTASKS
 */
#ifndef SHARD_H
#define SHARD_H

#include <stddef.h>

#include "plan.h"
#include "space.h"

typedef struct shard {
    int index; /* 0 .. count-1 */
    int count; /* 1 = the whole plan */
} shard;

/* The most parts a plan is split into (--shard and Slurm alike). */
#define SHARD_MAX_COUNT 100000

/* Parses "I/N" (0 <= I < N <= SHARD_MAX_COUNT). Returns 0, or -1 with a
 * message in err. */
int shard_parse(const char *text, shard *out, char *err, size_t errlen);

/* The shard Slurm's environment describes: returns 1 and fills *out when a
 * job array or a multi-task srun is detected, 0 when none is (then *out is
 * 0/1), -1 with a message in err when the variables are inconsistent. */
int shard_from_env(shard *out, char *err, size_t errlen);

/* Expected cost of measuring point pt of s (arbitrary units): > 0 for an
 * accepted point, 0 for a rejected one (never measured). */
double shard_point_cost(const space *s, const plan_point *pt);

/* owner[i] = the part plan point i belongs to, for every point of p
 * (rejected points too, so `fasweep plan --shard` shows the same split).
 * Returns 0, or -1 when out of memory. */
int shard_assign(const space *s, const plan *p, int count, int *owner);

/* Keeps only sh's points in p (in their original order), updating its
 * counts. Returns 0, or -1 when out of memory (p unchanged). */
int shard_filter(const space *s, plan *p, shard sh);

#endif /* SHARD_H */
