/* rounds.c - intervals from rounds spread over a run (rounds.h says why). */
#include "rounds.h"

#include "record.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

double rounds_estimate(const double *m, int n)
{
    if (n < 1)
        return NAN;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(m[i]) || m[i] <= 0)
            return NAN;
        sum += m[i];
    }
    return sum / n;
}

void rounds_pool_add(const double *m, int n, double *pool, int *npool)
{
    const double mean = rounds_estimate(m, n);
    if (n < 2 || !isfinite(mean))
        return;
    const double scale = sqrt((double)n / (n - 1));
    for (int i = 0; i < n; i++)
        pool[(*npool)++] = (m[i] / mean - 1) * scale;
}

double rounds_t975(int df)
{
    /* Two-sided 95 % quantiles of Student's t; between table rows the
     * larger (the row below) is used, so the widening never falls short. */
    static const struct {
        int df;
        double t;
    } tab[] = {{1, 12.706}, {2, 4.303},  {3, 3.182},   {4, 2.776},   {5, 2.571},
               {6, 2.447},  {7, 2.365},  {8, 2.306},   {9, 2.262},   {10, 2.228},
               {12, 2.179}, {15, 2.131}, {20, 2.086},  {25, 2.060},  {30, 2.042},
               {40, 2.021}, {60, 2.000}, {120, 1.980}, {1000, 1.962}};
    const int n = (int)(sizeof tab / sizeof tab[0]);
    if (df < 1)
        return NAN;
    for (int i = 0; i < n; i++)
        if (df <= tab[i].df)
            return df == tab[i].df || i == 0 ? tab[i].t : tab[i - 1].t;
    return 1.96;
}

/* splitmix64: a small, well-mixed generator; a fixed seed makes every
 * interval a function of its data alone. */
static uint64_t rounds_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int rounds_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int rounds_interval(int n, const double *pool, int npool, int groups, double floor, double *lo,
                    double *hi)
{
    *lo = *hi = NAN;
    const int df = npool - groups;
    if (n < 1 || npool < 2 || df < 1 || !(floor >= 0))
        return -1;
    double *means = malloc(sizeof *means * ROUNDS_BOOT);
    if (!means)
        return -1;
    uint64_t seed = ROUNDS_SEED;
    for (int b = 0; b < ROUNDS_BOOT; b++) {
        double sum = 0;
        for (int i = 0; i < n; i++)
            sum += pool[rounds_next(&seed) % (uint64_t)npool];
        means[b] = sum / n;
    }
    qsort(means, ROUNDS_BOOT, sizeof *means, rounds_cmp);
    double l = means[(int)(0.025 * ROUNDS_BOOT)];
    double h = means[(int)(0.975 * ROUNDS_BOOT) - 1];
    free(means);
    /* The percentiles are relative to the pool's own mean (about 0); the
     * interval is around the estimate, so only the spread counts. */
    if (l > 0)
        l = 0;
    if (h < 0)
        h = 0;
    if (npool < ROUNDS_POOL_MIN) {
        const double w = rounds_t975(df) / 1.96;
        l *= w;
        h *= w;
    }
    *lo = -sqrt(l * l + floor * floor);
    *hi = sqrt(h * h + floor * floor);
    return 0;
}

void rounds_interval_us(double median, double lo, double hi, double *lo_us, double *hi_us)
{
    *lo_us = median * (1 + lo);
    *hi_us = median * (1 + hi);
    if (*lo_us < RECORD_MIN_US) /* false for NaN: it stays NaN */
        *lo_us = RECORD_MIN_US;
}
