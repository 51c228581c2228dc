/* testutil.h - small helpers shared by the cmocka unit tests. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh empty directory for one test under $FASWEEP_TEST_TMP (or /tmp).
 * Writes its path into buf and returns buf, or NULL on failure. */
static inline char *tu_tmpdir(char *buf, size_t n)
{
    const char *base = getenv("FASWEEP_TEST_TMP");
    if (!base || !*base)
        base = "/tmp";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", base);
    if (system(cmd) != 0)
        return NULL;
    snprintf(buf, n, "%s/fasweep-test-XXXXXX", base);
    return mkdtemp(buf);
}

/* Removes a directory tree made by tu_tmpdir. */
static inline void tu_rmtree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", path);
}

/* The main of a test file: runs the tests listed (cmocka_unit_test(fn), or
 * a file's own setup/teardown wrapper) as one group; its status is the
 * number of failed tests. Include <cmocka.h> first. */
#define TU_MAIN(...)                                                                               \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tu_tests[] = {__VA_ARGS__};                                        \
        return cmocka_run_group_tests(tu_tests, NULL, NULL);                                       \
    }

/* Runs fns[0..n) as one group, each test named by its entry of list,
 * the text of the functions' names as the source lists them ("a, b, c");
 * the status is the number of failed tests. */
static inline int tu_run_tests(const char *list, const CMUnitTestFunction *fns, size_t n)
{
    char *names = strdup(list); /* cut in place: each test's name points into it */
    if (!names)
        return (int)n;
    struct CMUnitTest tu_tests[n];
    char *save = NULL, *name = strtok_r(names, ", ", &save);
    for (size_t i = 0; i < n; i++) {
        tu_tests[i] = (struct CMUnitTest){name ? name : "?", fns[i], NULL, NULL, NULL};
        name = strtok_r(NULL, ", ", &save);
    }
    const int failed = cmocka_run_group_tests(tu_tests, NULL, NULL);
    free(names);
    return failed;
}

/* The main of a test file whose tests need no setup: TU_TESTS(fn, ...)
 * names each test function once. cmocka names a test by its function, so
 * the names are cut from the list's own text (#__VA_ARGS__) rather than
 * spelt again in a cmocka_unit_test() per entry. Include <cmocka.h> first. */
#define TU_TESTS(...)                                                                              \
    int main(void)                                                                                 \
    {                                                                                              \
        const CMUnitTestFunction tu_fns[] = {__VA_ARGS__};                                         \
        return tu_run_tests(#__VA_ARGS__, tu_fns, sizeof tu_fns / sizeof *tu_fns);                 \
    }

#endif /* TESTUTIL_H */
