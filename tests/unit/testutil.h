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

#endif /* TESTUTIL_H */
