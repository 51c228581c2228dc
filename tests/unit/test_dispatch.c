/* test_dispatch.c - the several-GPU pick policy (sweep/dispatch.h): a
 * worker stays on its problem; otherwise it goes to the problem with the
 * most work left per worker (without estimates: a problem nobody holds,
 * then any); within it, a later round on a GPU it has not run on, else light; runs without
 * a GPU (the CPU side of several GPUs). */
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
    assert_int_equal(dispatch_pick(prob, pending, NULL, 6, 1, held, 1), 2);
    pending[2] = 0;
    assert_int_equal(dispatch_pick(prob, pending, NULL, 6, 1, held, 1), 3);
}

static void test_fresh_worker_takes_a_free_problem(void **state)
{
    (void)state;
    unsigned char pending[6] = {0, 1, 1, 1, 1, 1};
    const int held[2] = {0, 1};
    /* no problem of its own: problem 2, which nobody holds, not task 1 */
    assert_int_equal(dispatch_pick(prob, pending, NULL, 6, -1, held, 2), 4);
    /* its problem is done: the same */
    const unsigned char left[6] = {0, 0, 1, 1, 1, 1};
    assert_int_equal(dispatch_pick(prob, left, NULL, 6, 0, held + 1, 1), 4);
}

static void test_joins_when_all_are_held(void **state)
{
    (void)state;
    const unsigned char pending[6] = {0, 1, 0, 1, 0, 0};
    const int held[2] = {0, 1};
    assert_int_equal(dispatch_pick(prob, pending, NULL, 6, 2, held, 2), 1); /* the first pending */
}

static void test_nothing_left(void **state)
{
    (void)state;
    const unsigned char none[6] = {0};
    assert_int_equal(dispatch_pick(prob, none, NULL, 6, 0, NULL, 0), 6);
    assert_int_equal(dispatch_pick(prob, none, NULL, 0, -1, NULL, 0), 0);
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
        const size_t i = dispatch_pick(p, pending, NULL, N, own[w], &own[1 - w], own[1 - w] >= 0);
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

/* With estimates: the problem with the most work left per worker, its
 * running and later-round tasks counted, wins over one nobody holds. */
static void test_most_work_per_worker(void **state)
{
    (void)state;
    unsigned char pending[6] = {1, 1, 1, 1, 1, 1};
    /* problem 1 has 10 s left, held by one other worker: 5 s each; 2 has 3 s, free */
    double work[6] = {0, 0, 5, 5, 1.5, 1.5};
    const int held[1] = {1};
    pending[0] = pending[1] = 0; /* problem 0 done */
    assert_int_equal(dispatch_pick(prob, pending, work, 6, 0, held, 1), 2);
    /* held by three others: 2.5 s each, problem 2 (3 s, free) wins */
    const int three[3] = {1, 1, 1};
    assert_int_equal(dispatch_pick(prob, pending, work, 6, 0, three, 3), 4);
    /* its own problem first, however little is left there */
    pending[0] = 1;
    work[0] = 0.1;
    assert_int_equal(dispatch_pick(prob, pending, work, 6, 0, three, 3), 0);
    /* work of tasks not pending (running, a later round) counts; only pending ones are picked */
    const unsigned char late[6] = {0, 0, 0, 1, 1, 1};
    const double w2[6] = {0, 0, 9, 1, 2, 2};
    assert_int_equal(dispatch_pick(prob, late, w2, 6, -1, NULL, 0), 3);
    /* ties: the problem whose first pending task comes first */
    const double even[6] = {1, 1, 1, 1, 1, 1};
    assert_int_equal(dispatch_pick(prob, pending, even, 6, -1, NULL, 0), 0);
    /* nothing pending */
    const unsigned char none[6] = {0};
    assert_int_equal(dispatch_pick(prob, none, even, 6, -1, NULL, 0), 6);
}

/* Four workers, three problems of unequal size, with estimates: every task
 * handed out once, and the big problem gets more than one worker. */
static void test_four_workers_share_the_big_problem(void **state)
{
    (void)state;
    enum { N = 24 };
    int p[N];
    double work[N];
    unsigned char pending[N];
    for (int i = 0; i < N; i++) {
        p[i] = i < 4 ? 0 : i < 20 ? 1 : 2; /* problem 1 holds 16 of 24 tasks */
        work[i] = 1;
        pending[i] = 1;
    }
    int own[4] = {-1, -1, -1, -1}, on_big[4] = {0}, handed[N] = {0};
    for (int turn = 0;; turn++) {
        const int w = turn % 4;
        int held[3], nh = 0;
        for (int k = 0; k < 4; k++)
            if (k != w && own[k] >= 0)
                held[nh++] = own[k];
        const size_t i = dispatch_pick(p, pending, work, N, own[w], held, nh);
        if (i == N)
            break;
        pending[i] = 0;
        work[i] = 0;
        handed[i]++;
        own[w] = p[i];
        on_big[w] |= p[i] == 1;
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(handed[i], 1);
    assert_true(on_big[0] + on_big[1] + on_big[2] + on_big[3] >= 2);
}

/* Within the problem picked: a later round crosses to a GPU its config has not run on, else
 * goes light on the worker that gated it, else the pick itself. */
static void test_later_round_crosses_gpus(void **state)
{
    (void)state;
    unsigned char pending[6] = {1, 1, 1, 1, 1, 1};
    const unsigned ran_on[6] = {0, 0, 1u, 2u, 3u, 0};  /* GPU 0, GPU 1, both */
    const unsigned char light[6] = {0, 0, 1, 0, 0, 0}; /* this worker gated task 2 */
    /* on GPU 0: task 3, which ran only on GPU 1 (not task 2, its own light one) */
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 2, 1u, 1), 3);
    /* on GPU 1: task 2, which ran only on GPU 0 */
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 2, 2u, 1), 2);
    /* without the crossing: the light one */
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 3, 1u, 0), 2);
    /* task 3 handed out: nothing to cross to on GPU 0, the light one */
    pending[3] = 0;
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 2, 1u, 1), 2);
    /* a task that ran on both GPUs crosses nowhere; a task with no earlier round is no
     * crossing: problem 2's pick stands */
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 4, 1u, 1), 4);
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 5, 1u, 1), 5);
    /* on GPU 2 (bit 2): task 4 has not run there */
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 5, 4u, 1), 4);
    /* nothing picked: nothing */
    assert_int_equal(dispatch_within(prob, pending, ran_on, light, 6, 6, 1u, 1), 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stays_on_its_problem),
        cmocka_unit_test(test_fresh_worker_takes_a_free_problem),
        cmocka_unit_test(test_joins_when_all_are_held),
        cmocka_unit_test(test_nothing_left),
        cmocka_unit_test(test_two_workers_cover_the_plan_once),
        cmocka_unit_test(test_most_work_per_worker),
        cmocka_unit_test(test_four_workers_share_the_big_problem),
        cmocka_unit_test(test_later_round_crosses_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
