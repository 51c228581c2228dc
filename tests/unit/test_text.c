/* test_text.c - store/text.h: the UTF-8-safe field copy (
 * an `error` cut by byte count split a character, and import refused the
 * record). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "store/text.h"

static void copy_fits_as_is(void **state)
{
    (void)state;
    char buf[16];
    assert_int_equal(text_copy_utf8(buf, sizeof buf, "h\xc3\xa9llo"), 6);
    assert_string_equal(buf, "h\xc3\xa9llo");
}

/* Every cut of a text of 2-, 3- and 4-byte characters is valid UTF-8 and
 * as long as the field allows without splitting one. */
static void copy_never_splits_a_character(void **state)
{
    (void)state;
    const char *src = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z"; /* a é € 😀 z */
    const size_t whole[] = {0, 1, 3, 6, 10, 11};                /* character boundaries */
    for (size_t n = 1; n <= 13; n++) {
        char buf[16];
        memset(buf, 'X', sizeof buf);
        const size_t got = text_copy_utf8(buf, n, src);
        size_t want = 0;
        for (size_t k = 0; k < sizeof whole / sizeof *whole; k++)
            if (whole[k] <= n - 1)
                want = whole[k];
        assert_int_equal(got, want);
        assert_int_equal(buf[got], '\0');
        assert_memory_equal(buf, src, got);
        assert_null(text_bad_utf8(buf, got));
    }
}

static void copy_replaces_invalid_bytes(void **state)
{
    (void)state;
    char buf[32];
    /* a lone continuation byte, a Latin-1 byte, a cut sequence at the end */
    text_copy_utf8(buf, sizeof buf,
                   "a\x80"
                   "b\xe9"
                   "c\xe2\x82");
    assert_string_equal(buf, "a?b?c??");
    assert_null(text_bad_utf8(buf, strlen(buf)));
}

static void copy_into_one_byte(void **state)
{
    (void)state;
    char buf[1] = {'X'};
    assert_int_equal(text_copy_utf8(buf, 1, "abc"), 0);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(text_copy_utf8(buf, 0, "abc"), 0);
}

/* text_errf: the message formatted into the buffer, cut to fit, and -1. */
static void errf_formats_cuts_and_fails(void **state)
{
    (void)state;
    char err[16];
    assert_int_equal(text_errf(err, sizeof err, "at most %d, got %s", 7, "x"), -1);
    assert_string_equal(err, "at most 7, got ");
    assert_int_equal(text_errf(err, sizeof err, "%s", "ok"), -1);
    assert_string_equal(err, "ok");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_fits_as_is),
        cmocka_unit_test(copy_never_splits_a_character),
        cmocka_unit_test(copy_replaces_invalid_bytes),
        cmocka_unit_test(copy_into_one_byte),
        cmocka_unit_test(errf_formats_cuts_and_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
