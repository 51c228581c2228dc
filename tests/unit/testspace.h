/* testspace.h - hand-built spaces for the unit tests that plan or shard
 * one without a space file. Include grid/space.h first. */
#ifndef TESTSPACE_H
#define TESTSPACE_H

#include <string.h>

/* A zeroed space with the shared-memory limit and the problems given (at
 * most SPACE_MAX_PROBLEMS); its axes are set with ts_axis. */
static inline void ts_space(space *s, long smem_limit, const space_problem *problems, int n)
{
    memset(s, 0, sizeof *s);
    s->smem_limit = smem_limit;
    s->n_problems = n;
    memcpy(s->problems, problems, (size_t)n * sizeof *problems);
}

/* Axis a of s: the n values, in file order. */
static inline void ts_axis(space *s, int a, const int *values, int n)
{
    memcpy(s->axis[a], values, (size_t)n * sizeof *values);
    s->axis_len[a] = n;
}

#endif /* TESTSPACE_H */
