/* test_shell.c - seeds/shell.h: a command line a POSIX shell reads back as
 * the same argv (plain words as they are, others in single quotes, a ' as
 * '\''), checked by sh itself; a line cut at its buffer's end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seeds/shell.h"
#include "tests/unit/testutil.h"

static void test_words(void **state)
{
    (void)state;
    char line[256] = "";
    const char *argv[] = {"fasweep", "eval",      "--config", "mma:d64.m64.n64.w4.s1.z0", "", "a b",
                          "it's",    "$HOME;`x`", NULL};
    for (int i = 0; argv[i]; i++)
        shell_word(line, sizeof line, argv[i]);
    assert_string_equal(line, "fasweep eval --config mma:d64.m64.n64.w4.s1.z0 '' 'a b' 'it'\\''s' "
                              "'$HOME;`x`'");
}

/* sh reads the line back as the words given, one a line. */
static void test_sh_reads_it_back(void **state)
{
    (void)state;
    const char *argv[] = {"/tmp/my dir/x.cuh", "tab\there", "q'uo\"te", "%@+=,:./-_", "*", NULL};
    char line[512] = "printf '%s\\n'";
    for (int i = 0; argv[i]; i++)
        shell_word(line, sizeof line, argv[i]);
    FILE *p = popen(line, "r");
    assert_non_null(p);
    char got[128];
    for (int i = 0; argv[i]; i++) {
        assert_non_null(fgets(got, sizeof got, p));
        got[strcspn(got, "\n")] = '\0';
        assert_string_equal(got, argv[i]);
    }
    assert_null(fgets(got, sizeof got, p));
    assert_int_equal(pclose(p), 0);
}

static void test_cut_at_the_end(void **state)
{
    (void)state;
    char line[8] = "";
    shell_word(line, sizeof line, "abc");
    shell_word(line, sizeof line, "de fg");
    assert_string_equal(line, "abc 'de");
}

TU_MAIN(cmocka_unit_test(test_words), cmocka_unit_test(test_sh_reads_it_back),
        cmocka_unit_test(test_cut_at_the_end))
