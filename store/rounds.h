/* rounds.h - the uncertainty of a timing that an independent run confirms.
 *
 * Why: the samples of one burst only see the noise of that burst. What
 * moves a median between two runs is slow, time-correlated drift (the
 * power cap, clocks, the L2 and memory state of the moment), and a burst
 * never sees it: on the lent H100 the within-burst standard error of a
 * median was 4-5x smaller than the difference between two runs
 * (docs/measurement.md, "Intervals"). So the engine measures every config
 * in several *rounds* spread over the whole run (a round is one pass over
 * the task list), and the interval comes from how much the rounds of one
 * config disagree, which drift does show.
 *
 * With 3-5 rounds per config a config's own spread is too few numbers to
 * trust, so the relative residuals of all the configs of one group (same
 * device, problem, build, mode: the same GPU state over the same run) are
 * pooled, and each config's interval is a bootstrap of its mean over rounds
 * resampled from the pool. A small pool (fewer than ROUNDS_POOL_MIN
 * residuals) is widened by the Student t quantile of its degrees of freedom
 * over 1.96, and a floor (the space's measure.ci_floor, what two processes
 * differ by even with no drift) is added in quadrature. The estimate itself
 * (the record's median_us) is the mean of the round medians.
 *
 * Pure functions, no I/O; the random numbers come from a fixed seed, so
 * the same rounds always give the same interval.
 */
#ifndef ROUNDS_H
#define ROUNDS_H

/* Bootstrap resamples per interval; percentiles 2.5 and 97.5. */
#define ROUNDS_BOOT 2000
/* Below this many pooled residuals the interval is widened by t/1.96. */
#define ROUNDS_POOL_MIN 30
/* The seed of every bootstrap (so an interval is a function of its data). */
#define ROUNDS_SEED 0x5eed2024u

/* The estimate of n round medians: their mean; NaN when n < 1 or any is
 * not a finite positive number. */
double rounds_estimate(const double *m, int n);

/* Appends the relative residuals of one config's n rounds to pool (room
 * for at least n more; *npool is advanced): m[i] / mean - 1, scaled by
 * sqrt(n / (n - 1)) so that the pooled spread is not shrunk by the mean
 * being taken from the same rounds. Nothing is added when n < 2. */
void rounds_pool_add(const double *m, int n, double *pool, int *npool);

/* The two-sided 97.5 % quantile of Student's t with df degrees of freedom
 * (df >= 1; 1.96 for df >= 1000). */
double rounds_t975(int df);

/* The interval of the estimate of n rounds (n >= 1) from the pooled
 * residuals (npool >= 2, made of groups configs): lo and hi relative to
 * the estimate (lo <= 0 <= hi; e.g. -0.008, +0.011), from ROUNDS_BOOT
 * resamples of n residuals drawn from the pool with the seed, widened as
 * the header says, with floor (a relative half-width, >= 0) added in
 * quadrature. Returns 0, or -1 (and NaNs) when the pool is too small to say
 * anything (npool - groups < 1) or n < 1. */
int rounds_interval(int n, const double *pool, int npool, int groups, double floor, double *lo,
                    double *hi);

/* A record's interval in us from rounds_interval's relative ends: median * (1 + lo) and
 * median * (1 + hi), the lower end at least RECORD_MIN_US (store/record.h). A small pool
 * widened by Student's t can put lo at -1 or below (measured: two workers sharing one GPU, a
 * problem of two configs, lo -1.05): such an interval says only that the time is positive,
 * and a time is never below the least one a record holds. NaNs stay NaNs. */
void rounds_interval_us(double median, double lo, double hi, double *lo_us, double *hi_us);

/* Comparing two records by their intervals is the store's tie rule
 * (record_tie in store/record.h): the ranking and the report read records,
 * not rounds. */

#endif /* ROUNDS_H */
