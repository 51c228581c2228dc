/* test_visible.c - CUDA_VISIBLE_DEVICES read as CUDA reads it (sweep/visible.h): how many
 * GPUs a list leaves visible, and the entry a worker takes as its only GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "sweep/visible.h"

static void test_count(void **st)
{
    (void)st;
    assert_int_equal(visible_count("0,1,2,3", 4), 4);
    assert_int_equal(visible_count("2,3", 4), 2);
    assert_int_equal(visible_count(" 1 ,\t0 ", 4), 2); /* blanks around entries */
    assert_int_equal(visible_count("0,7,1", 4), 1);    /* up to the first that names none */
    assert_int_equal(visible_count("1a,0", 4), 0);     /* not an ordinal */
    assert_int_equal(visible_count("", 4), 0);
    assert_int_equal(visible_count("-1", 4), 0);
    assert_int_equal(visible_count("GPU-5886bb58,1", 4), 2); /* a UUID names a GPU */
    assert_int_equal(visible_count("MIG-x", 4), 1);
    assert_int_equal(visible_count("GPU-", 4), 0);       /* the prefix alone: no */
    assert_int_equal(visible_count("0,1,2,3,0", 4), 4);  /* at most n */
    assert_int_equal(visible_count("5,6", 0), 2);        /* n unknown: every ordinal */
    assert_int_equal(visible_count("1234567890", 0), 0); /* too long for an ordinal */
}

static void test_entry(void **st)
{
    (void)st;
    char e[16];
    assert_int_equal(visible_entry("2, 3 ,\tGPU-ab ", 0, e, sizeof e), 0);
    assert_string_equal(e, "2");
    assert_int_equal(visible_entry("2, 3 ,\tGPU-ab ", 1, e, sizeof e), 0);
    assert_string_equal(e, "3");
    assert_int_equal(visible_entry("2, 3 ,\tGPU-ab ", 2, e, sizeof e), 0);
    assert_string_equal(e, "GPU-ab");
    assert_int_equal(visible_entry("2, 3 ,\tGPU-ab ", 3, e, sizeof e), -1); /* no such entry */
    assert_int_equal(visible_entry("2,", 1, e, sizeof e), 0);               /* an empty one */
    assert_string_equal(e, "");
    assert_int_equal(visible_entry("GPU-0123456789abcdef", 0, e, sizeof e), -1); /* too long */
    assert_int_equal(visible_entry(NULL, 0, e, sizeof e), -1);
    assert_int_equal(visible_entry("1", -1, e, sizeof e), -1);
    /* an entry counted visible is one visible_entry gives: the worker's own GPU */
    const char *v = "3,GPU-1ab1594c,0";
    for (int k = 0; k < visible_count(v, 4); k++)
        assert_int_equal(visible_entry(v, k, e, sizeof e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_entry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
