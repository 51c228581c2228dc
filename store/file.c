/* file.c - the atomic file writer and mkdir -p (contract: file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MAX_LINKS 40 /* as the kernel's own limit on a path's links */

/* The temp file being written, for the signal handler: set and cleared
 * only while the signals are blocked, so the handler sees a whole name. */
static char file_tmp[PATH_MAX + 32];
static volatile sig_atomic_t file_tmp_live;

static const int file_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define FILE_NSIG ((int)(sizeof file_signals / sizeof *file_signals))

static void file_say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void file_say(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Removes the temp file, then dies of the signal as if never caught. */
static void file_on_signal(int sig)
{
    if (file_tmp_live)
        unlink(file_tmp);
    file_tmp_live = 0;
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns: the signal is blocked in it */
}

static void file_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < FILE_NSIG; i++)
        sigaddset(&set, file_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* Installs the handler (keeping the old actions in old) for the signals
 * whose action is not "ignore": a process started with SIGHUP ignored
 * (nohup) keeps ignoring it. */
static void file_catch(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = file_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < FILE_NSIG; i++) {
        sigaction(file_signals[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN)
            sigaction(file_signals[i], &sa, NULL);
    }
}

static void file_uncatch(const struct sigaction *old)
{
    for (int i = 0; i < FILE_NSIG; i++)
        sigaction(file_signals[i], &old[i], NULL);
}

/* ---- what a path is -------------------------------------------------------------------------- */

typedef enum file_how { FILE_ATOMIC, FILE_STRAIGHT } file_how;

/* Paths whose links are the kernel's own (/proc/self/fd/1 -> "pipe:[..]"):
 * they name an open file, never a place to put a new one. */
static int file_magic(const char *path)
{
    return strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/dev/fd/", 8) == 0 ||
           strncmp(path, "/dev/std", 8) == 0;
}

/* Follows the chain of symbolic links from path to the name of its last
 * node (which may not exist yet). Returns 0, or -1 with err set. */
static int file_resolve(const char *path, char *out, size_t n, char *err, size_t errlen)
{
    if (snprintf(out, n, "%s", path) >= (int)n) {
        file_say(err, errlen, "%s: path too long", path);
        return -1;
    }
    for (int hops = 0; hops <= FILE_MAX_LINKS; hops++) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
            return 0;
        char link[PATH_MAX];
        const ssize_t len = readlink(out, link, sizeof link - 1);
        if (len < 0) {
            file_say(err, errlen, "cannot read the link %s: %s", out, strerror(errno));
            return -1;
        }
        link[len] = '\0';
        if (link[0] == '/') {
            snprintf(out, n, "%s", link);
        } else { /* relative to the link's own directory */
            char *slash = strrchr(out, '/');
            const size_t dir = slash ? (size_t)(slash - out) + 1 : 0;
            if (dir + (size_t)len + 1 > n) {
                file_say(err, errlen, "%s: the link's target path is too long", path);
                return -1;
            }
            memcpy(out + dir, link, (size_t)len + 1);
        }
    }
    file_say(err, errlen, "%s: more than %d symbolic links; fix the link or pass another path",
             path, FILE_MAX_LINKS);
    return -1;
}

/* How to write path, and into which name (*target: the link's target for
 * a link). Returns 0, or -1 with err set. */
static int file_plan(const char *path, file_how *how, char *target, size_t n, char *err,
                     size_t errlen)
{
    struct stat st; /* of what path names, through any links */
    const int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        file_say(err, errlen, "%s is a directory; pass a file path", path);
        return -1;
    }
    if (file_magic(path) || (exists && !S_ISREG(st.st_mode))) {
        *how = FILE_STRAIGHT;
        snprintf(target, n, "%s", path);
        return 0;
    }
    /* rename() needs only the directory's write permission, so without
     * this a file its owner made read-only (chmod a-w: "keep this one")
     * would be replaced silently, where `>` or cp would refuse. Like rm,
     * a file with no owner write bit counts as protected for root too. */
    if (exists && !(st.st_mode & S_IWUSR)) {
        file_say(err, errlen,
                 "%s is write-protected (mode %04o); make it writable (chmod u+w) or pass "
                 "another path",
                 path, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    if (exists && access(path, W_OK) != 0) {
        file_say(err, errlen,
                 "%s is not writable by this user (owner uid %u, mode %04o); remove it or pass "
                 "another path",
                 path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    *how = FILE_ATOMIC;
    return file_resolve(path, target, n, err, errlen);
}

/* ---- writing --------------------------------------------------------------------------------- */

static void file_test_sleep(void)
{
    const char *s = getenv("FASWEEP_TEST_WRITE_SLEEP");
    if (s && *s)
        sleep((unsigned)atoi(s));
}

/* Runs fn into out and flushes it. Returns fn's status, -1 on a write error
 * (errno kept), or 0. */
static int file_fill(FILE *out, file_writer fn, void *ctx)
{
    const int rc = fn(out, ctx);
    if (rc != 0)
        return rc;
    file_test_sleep();
    errno = 0;
    if (fflush(out) != 0 || ferror(out)) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* The descriptor a path names when it is one of this process's own
 * (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else -1. Writing
 * through a copy of it keeps what the shell set up (`>>` appends, `>`
 * already truncated) where opening the path anew would truncate. */
static int file_own_fd(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *n = strncmp(path, "/dev/fd/", 8) == 0          ? path + 8
                    : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                               : NULL;
    char *end;
    const long fd = n && *n ? strtol(n, &end, 10) : -1;
    return fd >= 0 && fd < INT_MAX && *end == '\0' ? (int)fd : -1;
}

static FILE *file_open_straight(const char *path)
{
    const int own = file_own_fd(path);
    if (own < 0)
        return fopen(path, "w");
    if (own == STDOUT_FILENO)
        fflush(stdout); /* what the command printed before comes first */
    const int fd = dup(own);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0)
        close(fd);
    return f;
}

static int file_straight(const char *path, file_writer fn, void *ctx, char *err, size_t errlen)
{
    FILE *out = file_open_straight(path);
    if (!out) {
        file_say(err, errlen, "cannot open %s for writing: %s", path, strerror(errno));
        return -1;
    }
    int rc = file_fill(out, fn, ctx);
    const int saved = errno;
    if (fclose(out) != 0 && rc == 0) {
        rc = -1;
        file_say(err, errlen, "cannot write %s: %s", path, strerror(errno));
    } else if (rc < 0) {
        file_say(err, errlen, "cannot write %s: %s", path, strerror(saved));
    }
    return rc;
}

/* Creates the temp file beside target, registered for the signal handler
 * before any signal can see it half made. Returns the fd, or -1. */
static int file_make_tmp(const char *target)
{
    sigset_t old;
    file_block(&old);
    int fd = -1;
    if (snprintf(file_tmp, sizeof file_tmp, "%s.tmp.XXXXXX", target) < (int)sizeof file_tmp) {
        fd = mkstemp(file_tmp);
        file_tmp_live = fd >= 0;
    } else {
        errno = ENAMETOOLONG;
    }
    const int saved = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return fd;
}

/* Renames the temp file over target (rc 0) or removes it; either way it is
 * no longer the handler's. Returns 0, or the rename's errno. */
static int file_settle(const char *target, int rc)
{
    sigset_t old;
    file_block(&old);
    int e = 0;
    if (rc == 0 && rename(file_tmp, target) != 0)
        e = errno;
    if (rc != 0 || e)
        unlink(file_tmp);
    file_tmp_live = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* The mode the new file gets: the replaced file's, else 0666 less umask. */
static mode_t file_mode(const char *target)
{
    struct stat st;
    if (stat(target, &st) == 0)
        return st.st_mode & 07777;
    const mode_t um = umask(0);
    umask(um);
    return 0666 & ~um;
}

static int file_atomic(const char *target, file_writer fn, void *ctx, char *err, size_t errlen)
{
    struct sigaction old[FILE_NSIG];
    file_catch(old);
    const int fd = file_make_tmp(target);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        file_say(err, errlen,
                 "cannot create a temp file beside %s: %s; check its directory exists "
                 "and is writable",
                 target, strerror(errno));
        if (fd >= 0)
            close(fd);
        file_settle(target, -1);
        file_uncatch(old);
        return -1;
    }
    int rc = file_fill(out, fn, ctx);
    int saved = errno;
    if (rc == 0 && fsync(fileno(out)) != 0) {
        rc = -1;
        saved = errno;
    }
    if (fclose(out) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc < 0)
        file_say(err, errlen, "cannot write %s: %s", target, strerror(saved));
    if (rc == 0 && chmod(file_tmp, file_mode(target)) != 0) {
        file_say(err, errlen, "cannot set the mode of %s: %s", file_tmp, strerror(errno));
        rc = -1;
    }
    const int e = file_settle(target, rc);
    if (e) {
        file_say(err, errlen, "cannot put the new %s in place: %s", target, strerror(e));
        rc = -1;
    }
    file_uncatch(old);
    return rc;
}

int file_write(const char *path, file_writer fn, void *ctx, char *err, size_t errlen)
{
    file_say(err, errlen, "%s", "");
    if (!path || !*path) {
        file_say(err, errlen, "an empty output path; pass a file path");
        return -1;
    }
    char target[PATH_MAX];
    file_how how;
    if (file_plan(path, &how, target, sizeof target, err, errlen) != 0)
        return -1;
    return how == FILE_STRAIGHT ? file_straight(target, fn, ctx, err, errlen)
                                : file_atomic(target, fn, ctx, err, errlen);
}

static int file_put_text(FILE *out, void *ctx)
{
    const char *text = ctx;
    const size_t n = strlen(text);
    if (fputs(text, out) < 0 || ((n == 0 || text[n - 1] != '\n') && fputc('\n', out) == EOF))
        return 0; /* the error stays on out: file_fill reports it with its errno */
    return 0;
}

int file_write_text(const char *path, const char *text, char *err, size_t errlen)
{
    return file_write(path, file_put_text, (void *)text, err, errlen);
}

/* ---- directories ----------------------------------------------------------------------------- */

int file_mkdirs(const char *dir, mode_t mode, char *failed, size_t n)
{
    char p[PATH_MAX];
    if (!*dir) {
        snprintf(failed, n, "%s", dir);
        return ENOENT;
    }
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        snprintf(failed, n, "%s", dir);
        return ENAMETOOLONG;
    }
    for (char *s = p + 1;; s++) {
        const char c = *s;
        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (p[0] && mkdir(p, mode) != 0 && errno != EEXIST) {
            const int e = errno;
            snprintf(failed, n, "%s", p);
            return e;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(failed, n, "%s", dir);
        return ENOTDIR;
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------------------------- */

/* (contract: file.h) */
int file_read_regular(const char *path, size_t max, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    struct stat st;
    const int statted = fstat(fd, &st) == 0;
    if (!statted || !S_ISREG(st.st_mode)) {
        const int e = errno;
        close(fd);
        errno = e;
        return statted ? 1 : -1;
    }
    size_t cap = ((size_t)st.st_size < max ? (size_t)st.st_size : max) + 1, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -1;
    /* Read to the end, not to st_size: the file may have grown since. */
    for (ssize_t got = 1; rc == 0 && got > 0;) {
        if (n > max) {
            errno = EFBIG;
            rc = -1;
            break;
        }
        if (n + 1 == cap) {
            char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                errno = ENOMEM;
                rc = -1;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        got = read(fd, buf + n, cap - 1 - n);
        if (got > 0)
            n += (size_t)got;
        else if (got < 0 && errno != EINTR)
            rc = -1;
        else if (got < 0)
            got = 1;
    }
    const int e = errno;
    close(fd);
    if (rc != 0) {
        free(buf);
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
