/* test_file.c - the one file writer and mkdir -p (store/file.h): atomic
 * replacement, links kept, devices and FIFOs written through, errors
 * reported, no temp file left behind. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/file.h"
#include "testutil.h"

static int setup(void **state)
{
    static char dir[512];
    if (!tu_tmpdir(dir, sizeof dir))
        return -1;
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    tu_rmtree(*state);
    return 0;
}

static void sub(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

static char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Entries of dir whose name holds ".tmp.". */
static int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

static int fail_writer(FILE *out, void *ctx)
{
    (void)ctx;
    fputs("half", out);
    return 7;
}

static void test_new_and_replace(void **state)
{
    char p[600], err[512];
    sub(p, sizeof p, *state, "out.txt");
    assert_int_equal(file_write_text(p, "one", err, sizeof err), 0);
    assert_string_equal(slurp(p), "one\n");
    chmod(p, 0600);
    struct stat before, after;
    stat(p, &before);
    assert_int_equal(file_write_text(p, "two\n", err, sizeof err), 0);
    assert_string_equal(slurp(p), "two\n");
    stat(p, &after);
    assert_true(before.st_ino != after.st_ino); /* a new file renamed in place */
    assert_int_equal(after.st_mode & 0777, 0600);
    assert_int_equal(count_tmp(*state), 0);
}

static void test_writer_fails(void **state)
{
    char p[600], err[512];
    sub(p, sizeof p, *state, "keep.txt");
    assert_int_equal(file_write_text(p, "old", err, sizeof err), 0);
    assert_int_equal(file_write(p, fail_writer, NULL, err, sizeof err), 7);
    assert_string_equal(slurp(p), "old\n");
    assert_int_equal(count_tmp(*state), 0);
}

static void test_symlink_kept(void **state)
{
    char target[600], link[600], err[512];
    sub(target, sizeof target, *state, "target.txt");
    sub(link, sizeof link, *state, "link.txt");
    assert_int_equal(symlink("target.txt", link), 0); /* relative and dangling */
    assert_int_equal(file_write_text(link, "via link", err, sizeof err), 0);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(target), "via link\n");
    assert_int_equal(file_write_text(link, "again", err, sizeof err), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(target), "again\n");
}

static void test_dev_full(void **state)
{
    (void)state;
    char err[512];
    struct stat st;
    if (stat("/dev/full", &st) != 0)
        skip();
    assert_int_equal(file_write_text("/dev/full", "x", err, sizeof err), -1);
    assert_non_null(strstr(err, "/dev/full"));
    assert_non_null(strstr(err, strerror(ENOSPC)));
    assert_int_equal(stat("/dev/full", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_fifo(void **state)
{
    char p[600], err[512];
    sub(p, sizeof p, *state, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the reader */
        char buf[64] = "";
        const int fd = open(p, O_RDONLY);
        const ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        _exit(n == 8 && memcmp(buf, "in fifo\n", 8) == 0 ? 0 : 1);
    }
    assert_int_equal(file_write_text(p, "in fifo", err, sizeof err), 0);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

/* file_read_regular reads a regular file whole and nothing else: a FIFO
 * (nobody writes it) or a device returns 1 at once, never waits; a file
 * over the cap is EFBIG (a record's kernel_path is data). */
static void test_read_regular(void **state)
{
    char p[600], err[512], *t = NULL;
    size_t n = 0;
    sub(p, sizeof p, *state, "text");
    assert_int_equal(file_write_text(p, "0123456789", err, sizeof err), 0);
    assert_int_equal(file_read_regular(p, 64, &t, &n), 0);
    assert_int_equal(n, 11);
    assert_string_equal(t, "0123456789\n");
    free(t);
    errno = 0;
    assert_int_equal(file_read_regular(p, 5, &t, &n), -1);
    assert_int_equal(errno, EFBIG);
    assert_null(t);
    sub(p, sizeof p, *state, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(file_read_regular(p, 64, &t, &n), 1);
    assert_int_equal(file_read_regular("/dev/zero", 64, &t, &n), 1);
    assert_int_equal(file_read_regular(*state, 64, &t, &n), 1); /* a directory */
    sub(p, sizeof p, *state, "missing");
    assert_int_equal(file_read_regular(p, 64, &t, &n), 1);
    assert_null(t);
}

static void test_errors(void **state)
{
    char p[600], err[512];
    assert_int_equal(file_write_text(*state, "x", err, sizeof err), -1);
    assert_non_null(strstr(err, "is a directory"));
    sub(p, sizeof p, *state, "no/such/dir/f");
    assert_int_equal(file_write_text(p, "x", err, sizeof err), -1);
    assert_non_null(strstr(err, "temp file"));
    assert_int_equal(file_write_text("", "x", err, sizeof err), -1);
}

static void test_mkdirs(void **state)
{
    char p[600], failed[600];
    sub(p, sizeof p, *state, "a/b/c/");
    assert_int_equal(file_mkdirs(p, 0777, failed, sizeof failed), 0);
    assert_int_equal(file_mkdirs(p, 0777, failed, sizeof failed), 0); /* exists: fine */
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    char f[600];
    sub(f, sizeof f, *state, "plain");
    assert_int_equal(file_write_text(f, "x", failed, sizeof failed), 0);
    assert_int_equal(file_mkdirs(f, 0777, failed, sizeof failed), ENOTDIR);
    assert_string_equal(failed, f);
    sub(p, sizeof p, *state, "plain/under");
    assert_int_equal(file_mkdirs(p, 0777, failed, sizeof failed), ENOTDIR);
    assert_string_equal(failed, p);
    assert_int_equal(file_mkdirs("", 0777, failed, sizeof failed), ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_and_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writer_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dev_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
