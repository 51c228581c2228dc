/* dispatch.c - the several-GPU pick policy (contract: dispatch.h). */
#include "dispatch.h"

#include <stdlib.h>

/* How many of the other workers are on problem. */
static int dispatch_holders(const int *held, int n_held, int problem)
{
    int k = 0;
    for (int i = 0; i < n_held; i++)
        k += held[i] == problem;
    return k;
}

/* The older rule: a problem nobody else holds, else the first pending. */
static size_t dispatch_first(const int *problem_of, const unsigned char *pending, size_t n,
                             const int *held, int n_held)
{
    size_t first = n;
    for (size_t i = 0; i < n; i++) {
        if (!pending[i])
            continue;
        if (!dispatch_holders(held, n_held, problem_of[i]))
            return i;
        if (first == n)
            first = i;
    }
    return first;
}

/* Index in probs[0..np) of problem, or np. */
static size_t dispatch_find(const int *probs, size_t np, int problem)
{
    size_t k = 0;
    while (k < np && probs[k] != problem)
        k++;
    return k;
}

size_t dispatch_pick(const int *problem_of, const unsigned char *pending, const double *work,
                     size_t n, int own, const int *held, int n_held)
{
    for (size_t i = 0; own >= 0 && i < n; i++)
        if (pending[i] && problem_of[i] == own)
            return i;
    int *probs = work ? malloc((n + 1) * sizeof *probs) : NULL;
    size_t *first = work ? malloc((n + 1) * sizeof *first) : NULL;
    double *left = work ? calloc(n + 1, sizeof *left) : NULL;
    if (!probs || !first || !left) { /* no estimates, or no memory for them */
        free(probs), free(first), free(left);
        return dispatch_first(problem_of, pending, n, held, n_held);
    }
    size_t np = 0, best = n;
    for (size_t i = 0; i < n; i++) /* the problems with a pending task, at their first */
        if (pending[i] && dispatch_find(probs, np, problem_of[i]) == np) {
            probs[np] = problem_of[i];
            first[np++] = i;
        }
    for (size_t j = 0; j < n; j++) {
        const size_t k = dispatch_find(probs, np, problem_of[j]);
        if (k < np && work[j] > 0)
            left[k] += work[j];
    }
    double best_score = -1;
    for (size_t k = 0; k < np; k++) { /* in order of their first pending task: ties to it */
        const double score = left[k] / (1 + dispatch_holders(held, n_held, probs[k]));
        if (score > best_score) {
            best_score = score;
            best = first[k];
        }
    }
    free(probs), free(first), free(left);
    return best;
}

size_t dispatch_within(const int *problem_of, const unsigned char *pending, const unsigned *ran_on,
                       const unsigned char *light, size_t n, size_t pick, unsigned mine, int cross)
{
    size_t lit = n;
    for (size_t i = 0; pick < n && i < n; i++) {
        if (!pending[i] || problem_of[i] != problem_of[pick])
            continue;
        if (cross && ran_on[i] && !(ran_on[i] & mine))
            return i;
        if (lit == n && light[i])
            lit = i;
    }
    return lit < n ? lit : pick;
}
