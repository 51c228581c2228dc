/* intervals.h - rounds into records, and records' intervals (the part of
 * the error-bar method that reads and writes the store; the arithmetic is
 * rounds.h).
 *
 * A config is measured once per round; each round's result comes back from
 * the worker as a complete record of that round alone. intervals_combine
 * folds it into the record the store holds for the key, so the store always
 * has every round measured so far (a kill between rounds loses nothing, and
 * the next run goes on with the rounds still missing). After a round, the
 * records of a (device, problem, mode) get their interval from the pooled
 * round residuals of every record of that group in the store that has two
 * or more rounds (intervals_update).
 */
#ifndef INTERVALS_H
#define INTERVALS_H

#include "../store/store.h"

/* Folds the round measured in `fresh` (one round: its median_us is that
 * round's median) into `held` (the stored record of the same key, or NULL
 * when there is none), writing the result to *out:
 *  - no held record, or held not ok, or a different build: fresh alone,
 *    with one round;
 *  - fresh not ok: fresh (a failure in any round fails the config:
 *    correctness first), its rounds dropped;
 *  - both ok: the rounds of held plus fresh's median (the oldest dropped
 *    beyond RECORD_MAX_ROUNDS); median_us the mean of the rounds (the
 *    estimate of rounds.h); min_us the lower; samples and clock blocks
 *    added; tflops and gbps scaled to the new median; noise, cv, stdev,
 *    mean and the rest of fresh's fields (its burst, its clocks, its
 *    environment, its timestamp), except the gate's errors and the clock64
 *    view when fresh has none (a light round: task.h), which stay held's.
 *    The interval is left for intervals_update (NaN).
 */
void intervals_combine(const record *held, const record *fresh, record *out);

/* Rounds a stored record of this key already has (0: none, or not ok). */
int intervals_rounds_of(const record *held);

/* Recomputes the interval of every ok record of (device, problem, mode), for
 * each of the n_modes modes (at most MODE_COUNT, each once), in the store
 * whose timestamp is >= since (those this run measured), from the pool of
 * all the (device, problem, mode) group's records with two or more rounds,
 * and the relative floor; one scan over the problem's records serves every
 * mode, and the bootstrap runs once per (mode, count of rounds): the records
 * of one count share their relative interval. A record whose rounds cannot
 * say anything (no pool)
 * keeps no interval. The records whose interval changes are rewritten in
 * one transaction (all or none), each only if it still holds the rounds
 * the scan read (store_put_many_if: a round another process folded in
 * since is never overwritten). Returns STORE_OK, STORE_EINVAL (a bad mode
 * count) or a store error; *updated (may be NULL) counts the records
 * rewritten. */
int intervals_update(store *st, const char *device, const char *problem, const char *const *modes,
                     int n_modes, double since, double floor, long *updated);

#endif /* INTERVALS_H */
