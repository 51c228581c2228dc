/* test_dispatch.c - the several-GPU pick policy (sweep/dispatch.h): a
 * worker stays on its problem, a fresh one takes a problem nobody holds,
 * then any; runs without a GPU (the CPU side of several GPUs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sweep/dispatch.h"

/* Six tasks over three problems, plan order: 0 0 1 1 2 2. */
static const int prob[6] = {0, 0, 1, 1, 2, 2};

static void test_stays_on_its_problem(void **state)
{
    (void)state;
    unsigned char pending[6] = {1, 1, 1, 1, 1, 1};
    const int held[1] = {0};
    assert_int_equal(dispatch_pick(prob, pending, 6, 1, held, 1), 2);
    pending[2] = 0;
    assert_int_equal(dispatch_pick(prob, pending, 6, 1, held, 1), 3);
}

static void test_fresh_worker_takes_a_free_problem(void **state)
{
    (void)state;
    unsigned char pending[6] = {0, 1, 1, 1, 1, 1};
    const int held[2] = {0, 1};
    /* no problem of its own: problem 2, which nobody holds, not task 1 */
    assert_int_equal(dispatch_pick(prob, pending, 6, -1, held, 2), 4);
    /* its problem is done: the same */
    const unsigned char left[6] = {0, 0, 1, 1, 1, 1};
    assert_int_equal(dispatch_pick(prob, left, 6, 0, held + 1, 1), 4);
}

static void test_joins_when_all_are_held(void **state)
{
    (void)state;
    const unsigned char pending[6] = {0, 1, 0, 1, 0, 0};
    const int held[2] = {0, 1};
    assert_int_equal(dispatch_pick(prob, pending, 6, 2, held, 2), 1); /* the first pending */
}

static void test_nothing_left(void **state)
{
    (void)state;
    const unsigned char none[6] = {0};
    assert_int_equal(dispatch_pick(prob, none, 6, 0, NULL, 0), 6);
    assert_int_equal(dispatch_pick(prob, none, 0, -1, NULL, 0), 0);
}

/* Two workers over a whole plan, finishing in turn: every task handed out
 * once, and each problem's reference set up by at most two workers. */
static void test_two_workers_cover_the_plan_once(void **state)
{
    (void)state;
    enum { N = 12 };
    const int p[N] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
    unsigned char pending[N];
    int handed[N] = {0}, setups[3] = {0}, own[2] = {-1, -1};
    for (int i = 0; i < N; i++)
        pending[i] = 1;
    for (int turn = 0;; turn++) {
        const int w = turn % 2;
        const size_t i = dispatch_pick(p, pending, N, own[w], &own[1 - w], own[1 - w] >= 0);
        if (i == N)
            break;
        pending[i] = 0;
        handed[i]++;
        if (own[w] != p[i])
            setups[p[i]]++;
        own[w] = p[i];
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(handed[i], 1);
    for (int q = 0; q < 3; q++)
        assert_in_range(setups[q], 1, 2);
    assert_int_equal(setups[0] + setups[1] + setups[2], 4); /* 3 problems, 2 workers */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stays_on_its_problem),
        cmocka_unit_test(test_fresh_worker_takes_a_free_problem),
        cmocka_unit_test(test_joins_when_all_are_held),
        cmocka_unit_test(test_nothing_left),
        cmocka_unit_test(test_two_workers_cover_the_plan_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
