/* variant.c - kernel variants: checked, compiled into a cache, loaded by
 * the worker (contract: variant.h).
 */
#include "variant.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kernels/embedded.h"
#include "../kernels/family.h"
#include "../store/file.h"
#include "../store/owned.h"
#include "../store/record.h"
#include "../store/text.h"

#ifndef FASWEEP_CUDA
#define FASWEEP_CUDA "/usr/local/cuda"
#endif

/* nvcc flags of a variant: those that decide the instances' code
 * (fa_code_flags, the Makefile's NVCODE, kernels/embedded.h), then these,
 * for one architecture, into a shared library on the shared CUDA runtime
 * whose symbols bind inside it (the worker has the same names loaded
 * already). */
static const char *const variant_flags[] = {
    "-shared",  "-cudart",    "shared", "-Xcompiler", "-fPIC,-fvisibility=hidden",
    "-Xlinker", "-Bsymbolic", NULL};
/* Room in nvcc's argv for fa_code_flags (a longer NVCODE: no variant). */
#define VARIANT_CODE_FLAGS_MAX 48

#define VARIANT_SYMBOL "fasweep_variant_instance"
#define VARIANT_COMPILE_LIMIT_S 600

/* ---- the source ---------------------------------------------------------------------------- */

/* The whole file into a NUL-terminated buffer (caller frees), or NULL with
 * the reason in err. */
static char *variant_read(const char *file, const char *tmpl, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    if (stat(file, &st) != 0) {
        snprintf(err, errlen, "--kernel %s: %s", file, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > VARIANT_MAX_BYTES) {
        snprintf(err, errlen, "--kernel %s: %s%s%s", file,
                 S_ISREG(st.st_mode) ? "larger than 4 MiB: not a kernel source"
                                     : "not a regular file (an edited copy of ",
                 S_ISREG(st.st_mode) ? "" : tmpl, S_ISREG(st.st_mode) ? "" : " is expected)");
        return NULL;
    }
    FILE *f = fopen(file, "rb");
    char *text = f ? malloc((size_t)st.st_size + 1) : NULL;
    *len = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    const int bad = !f || !text || ferror(f);
    if (f)
        fclose(f);
    if (bad) {
        snprintf(err, errlen, "--kernel %s: cannot read it: %s", file,
                 text ? strerror(errno) : "out of memory");
        free(text);
        return NULL;
    }
    text[*len] = '\0';
    return text;
}

/* A printable copy of an untrusted path for a one-line message. */
static const char *variant_quote(const char *path, char *buf, size_t n)
{
    text_clean(path, strlen(path), 400, 0, buf, n);
    return buf;
}

/* -1 with fmt in err, its two %s the path, made printable (a path is the
 * user's or the file system's: untrusted), and why it is refused. (The
 * attribute checks each caller's format string, though not against the
 * two arguments.) */
__attribute__((format(printf, 3, 0))) static int
variant_path_err(char *err, size_t errlen, const char *fmt, const char *path, const char *why)
{
    char q[512];
    return text_errf(err, errlen, fmt, variant_quote(path, q, sizeof q), why);
}

/* Why the #include directives of text make the compile read a file that
 * is not in the private build folder (only the embedded headers are), or
 * NULL: a quoted name other than an embedded header, an absolute or ".."
 * system name, or a computed include. The directive goes into what. */
static const char *variant_includes_bad(const char *text, char *what, size_t n)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *p = l + strspn(l, " \t");
        if (*p != '#')
            continue;
        p += 1 + strspn(p + 1, " \t");
        if (strncmp(p, "include", 7) != 0)
            continue;
        p += 7 + strspn(p + 7, "_next");
        p += strspn(p, " \t");
        const char close = *p == '"' ? '"' : *p == '<' ? '>' : '\0';
        const char *e = close ? strchr(p + 1, close) : NULL;
        const char *nl = strchr(p, '\n');
        if (!e || (nl && e > nl)) {
            text_clean(l, nl ? (size_t)(nl - l) : strlen(l), 80, 1, what, n);
            return "a computed or unterminated #include";
        }
        const size_t len = (size_t)(e - p - 1);
        text_clean(p + 1, len, 80, 1, what, n);
        if (close == '>') {
            if (p[1] == '/' || strstr(what, ".."))
                return "an absolute or \"..\" system header";
            continue;
        }
        int embedded = 0;
        for (int i = 0; fa_embedded_names[i] && !embedded; i++)
            embedded = strlen(fa_embedded_names[i]) == len &&
                       strncmp(fa_embedded_names[i], p + 1, len) == 0;
        if (!embedded)
            return "a header beside it";
    }
    return NULL;
}

int variant_load(const char *file, const fa_config *c, task_variant *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    const fa_family *fam = fa_family_of(c);
    if (!fam)
        return text_errf(err, errlen, "--kernel: the config is of no known kernel family");
    char abs[PATH_MAX], fq[512];
    variant_quote(file, fq, sizeof fq);
    if (!realpath(file, abs))
        return text_errf(err, errlen, "--kernel %s: %s", fq, strerror(errno));
    /* The path is stored in the records (provenance.kernel_path, a name):
     * refused here, before any work, rather than by the store after it. */
    const char *pbad = text_bad(abs, strlen(abs));
    if (pbad)
        return variant_path_err(err, errlen,
                                "--kernel %s: the path %s, and a record stores it as a name: "
                                "rename or copy the file to a plain path",
                                abs, pbad);
    if (strlen(abs) >= sizeof v->path)
        return text_errf(err, errlen, "--kernel %s: path longer than %zu bytes", abs,
                         sizeof v->path - 1);
    size_t len;
    char *text = variant_read(abs, fam->header, &len, err, errlen);
    if (!text)
        return -1;
    char inc[128] = "", what[96];
    const char *why = NULL;
    if (memchr(text, '\0', len))
        why = "it holds a NUL byte: not a source file";
    else if (!strstr(text, fam->instance_macro) || !strstr(text, fam->kernel_name))
        why = what,
        snprintf(what, sizeof what, "it defines no %s %s",
                 !strstr(text, fam->instance_macro) ? fam->instance_macro : fam->kernel_name,
                 !strstr(text, fam->instance_macro) ? "macro" : "kernel template");
    if (why) {
        snprintf(err, errlen,
                 "--kernel %s is not a %s kernel: %s (an edited copy of %s is expected for a "
                 "config of family %s)",
                 fq, fam->name, why, fam->header, fam->name);
        free(text);
        return -1;
    }
    why = variant_includes_bad(text, inc, sizeof inc);
    if (why) {
        char names[512] = "";
        for (int i = 0, at = 0; fa_embedded_names[i] && at < (int)sizeof names; i++) {
            const int w = snprintf(names + at, sizeof names - (size_t)at, "%s%s", i ? ", " : "",
                                   fa_embedded_names[i]);
            at = w < 0 ? (int)sizeof names : at + w;
        }
        snprintf(err, errlen,
                 "--kernel %s includes \"%s\" (%s): a variant is compiled alone, beside only the "
                 "headers fasweep embeds (%s); put that code into the file",
                 fq, inc, why, names);
        free(text);
        return -1;
    }
    const unsigned long long h = text_fnv1a(TEXT_FNV_INIT, text, len);
    free(text);
    snprintf(v->path, sizeof v->path, "%s", abs);
    snprintf(v->hash, sizeof v->hash, "%016llx", h);
    snprintf(v->build, sizeof v->build, RECORD_VARIANT_PREFIX "%016llx", h);
    return 0;
}

/* ---- the compiler and the cache ----------------------------------------------------------- */

static const char *variant_nvcc(char *buf, size_t n)
{
    const char *e = getenv("FASWEEP_NVCC");
    if (e && *e)
        return e;
    e = getenv("CUDA_HOME");
    if (e && *e && snprintf(buf, n, "%s/bin/nvcc", e) < (int)n && access(buf, X_OK) == 0)
        return buf;
    if (snprintf(buf, n, "%s/bin/nvcc", FASWEEP_CUDA) < (int)n && access(buf, X_OK) == 0)
        return buf;
    return "nvcc"; /* on PATH, or the exec fails and says so */
}

/* The cache's base folder: $FASWEEP_CACHE, $XDG_CACHE_HOME/fasweep,
 * ~/.cache/fasweep, else (no HOME) ${TMPDIR:-/tmp}/fasweep-EUID, a
 * per-user folder in a shared place (*shared set: it must not be a link). */
static int variant_cache_base(char *buf, size_t n, int *shared)
{
    const char *e = getenv("FASWEEP_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    const char *t = getenv("TMPDIR");
    *shared = 0;
    if (e && *e)
        return snprintf(buf, n, "%s", e) < (int)n ? 0 : -1;
    if (x && *x)
        return snprintf(buf, n, "%s/fasweep", x) < (int)n ? 0 : -1;
    if (h && *h)
        return snprintf(buf, n, "%s/.cache/fasweep", h) < (int)n ? 0 : -1;
    *shared = 1;
    return snprintf(buf, n, "%s/fasweep-%ld", t && *t ? t : "/tmp", (long)geteuid()) < (int)n ? 0
                                                                                              : -1;
}

#define VARIANT_MKDIR_ERR "cannot create the variant cache %s: %s (set FASWEEP_CACHE)"

/* Makes (mode 0700) and checks the cache's variants folder into root.
 * Returns 0, or -1 with the reason in log. */
static int variant_cache_root(char *root, size_t n, char *log, size_t loglen)
{
    char base[PATH_MAX / 2], made[PATH_MAX];
    int shared, e = 0;
    if (variant_cache_base(base, sizeof base, &shared) != 0 ||
        snprintf(root, n, "%s/variants", base) >= (int)n)
        return text_errf(log, loglen, "the variant cache path is too long (set FASWEEP_CACHE)");
    if ((e = file_mkdirs(base, 0700, made, sizeof made)) != 0)
        return variant_path_err(log, loglen, VARIANT_MKDIR_ERR, made, strerror(e));
    /* the base first: nothing is made inside a folder that is not ours */
    const char *bad = owned_dir_bad(base, !shared), *at = base;
    if (!bad && mkdir(root, 0700) != 0 && errno != EEXIST)
        return variant_path_err(log, loglen, VARIANT_MKDIR_ERR, root, strerror(errno));
    if (!bad) {
        bad = owned_dir_bad(root, 0);
        at = root;
    }
    if (bad)
        return variant_path_err(log, loglen,
                                "the variant cache %s is %s: fasweep loads the libraries it "
                                "holds, so it must be your own folder (chmod go-w it, or set "
                                "FASWEEP_CACHE to one)",
                                at, bad);
    return 0;
}

/* The cache key: everything the compile reads and how. The compile reads
 * the private copy of the source, the wrapper (from the config), the
 * embedded headers and the toolkit's own headers (the compiler's path,
 * size and time stand for the toolkit); nothing of the source's folder
 * (variant_load refuses other #includes). The tag changes with the
 * layout of an entry, so older entries are never taken for new ones. */
static unsigned long long variant_key(const char *src, size_t len, const fa_config *c, int cc,
                                      const char *nvcc)
{
    static const char tag[] = "fasweep-variant-2: private copy, no -I, variant.so.fnv";
    unsigned long long h = text_fnv1a(TEXT_FNV_INIT, tag, sizeof tag);
    h = text_fnv1a(h, src, len);
    h = text_fnv1a(h, c, sizeof *c);
    h = text_fnv1a(h, &cc, sizeof cc);
    for (const char *const *f = fa_code_flags; *f; f++)
        h = text_fnv1a(h, *f, strlen(*f) + 1);
    for (const char *const *f = variant_flags; *f; f++)
        h = text_fnv1a(h, *f, strlen(*f) + 1);
    for (int i = 0; fa_embedded_texts[i]; i++) {
        h = text_fnv1a(h, fa_embedded_names[i], strlen(fa_embedded_names[i]) + 1);
        h = text_fnv1a(h, fa_embedded_texts[i], strlen(fa_embedded_texts[i]) + 1);
    }
    struct stat st;
    h = text_fnv1a(h, nvcc, strlen(nvcc));
    if (stat(nvcc, &st) == 0) {
        h = text_fnv1a(h, &st.st_size, sizeof st.st_size);
        h = text_fnv1a(h, &st.st_mtime, sizeof st.st_mtime);
    }
    return h;
}

static int variant_write(const char *dir, const char *name, const char *text, size_t len)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
        return -1;
    FILE *f = fopen(p, "wb");
    if (!f)
        return -1;
    const int bad = fwrite(text, 1, len, f) != len;
    return (fclose(f) != 0 || bad) ? -1 : 0;
}

/* The build folder's sources: the variant as kernel.cuh beside the
 * embedded headers (so its #include "fa_config.h" finds them first), and
 * the wrapper that expands its FA_INSTANCE for c. */
static int variant_sources(const char *dir, const char *src, size_t len, const fa_config *c)
{
    /* The family's registry entry for c (kernels/family.h). */
    const fa_family *f = fa_family_of(c);
    char inst[256], sym[128], w[1024];
    if (!f || fa_config_instance(c, inst, sizeof inst) >= (int)sizeof inst ||
        fa_config_symbol(c, sym, sizeof sym) >= (int)sizeof sym) {
        errno = EINVAL;
        return -1;
    }
    const int n = snprintf(
        w, sizeof w,
        "// generated by fasweep eval --kernel (sweep/variant.c): do not edit\n"
        "#include \"kernel.cuh\"\n"
        "%s\n"
        "extern \"C\" __attribute__((visibility(\"default\"))) const fa_instance *" VARIANT_SYMBOL
        "(void)\n{\n    return &%s;\n}\n",
        inst, sym);
    if (variant_write(dir, "kernel.cuh", src, len) ||
        variant_write(dir, "wrapper.cu", w, (size_t)n))
        return -1;
    for (int i = 0; fa_embedded_names[i]; i++)
        if (variant_write(dir, fa_embedded_names[i], fa_embedded_texts[i],
                          strlen(fa_embedded_texts[i])))
            return -1;
    return 0;
}

/* A signal that would kill the process mid-compile (Ctrl-C, SIGTERM,
 * SIGHUP) is held until the temp build folder is removed, then delivered
 * as if never caught: no temp folder outlives the process. */
static const int variant_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static volatile sig_atomic_t variant_signal;

static void variant_on_signal(int sig)
{
    variant_signal = sig;
}

/* Catches the signals (on) or restores old and delivers a caught one. */
static void variant_catch(int on, struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = variant_on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(variant_sigs[i], on ? &sa : &old[i], on ? &old[i] : NULL);
    if (!on && variant_signal) {
        const int sig = variant_signal;
        variant_signal = 0;
        raise(sig);
    }
}

/* Runs nvcc in dir on the relative names of the private copy (no path of
 * the user's and none of the cache reaches nvcc's own shell steps), its
 * output into dir/compile.log. Returns the exit
 * status, -1 when it could not run or was killed (log says why). */
static int variant_nvcc_run(const char *dir, const char *nvcc, const fa_config *c, int cc,
                            char *log, size_t loglen)
{
    char arch[64], logp[PATH_MAX + 16];
    const fa_family *f = fa_family_of(c);
    if (f && f->arch && f->arch_name && strncmp(f->arch_name, "sm_", 3) == 0)
        snprintf(arch, sizeof arch, "-gencode=arch=compute_%s,code=%s", f->arch_name + 3,
                 f->arch_name); /* the family's one target, e.g. sm_90a */
    else
        snprintf(arch, sizeof arch, "-gencode=arch=compute_%d,code=sm_%d", cc, cc);
    if (snprintf(logp, sizeof logp, "%s/compile.log", dir) >= (int)sizeof logp)
        return text_errf(log, loglen, "build folder path too long: %s", dir);
    const char *argv[32 + VARIANT_CODE_FLAGS_MAX];
    int k = 0;
    argv[k++] = nvcc;
    for (int i = 0; fa_code_flags[i]; i++) {
        if (i == VARIANT_CODE_FLAGS_MAX)
            return text_errf(log, loglen, "the build's nvcc flags are more than %d words",
                             VARIANT_CODE_FLAGS_MAX);
        argv[k++] = fa_code_flags[i];
    }
    for (const char *const *f = variant_flags; *f; f++)
        argv[k++] = *f;
    argv[k++] = arch;
    argv[k++] = "wrapper.cu";
    argv[k++] = "-o";
    argv[k++] = "variant.so";
    argv[k] = NULL;
    const pid_t pid = fork();
    if (pid < 0)
        return text_errf(log, loglen, "cannot start nvcc: fork: %s", strerror(errno));
    if (pid == 0) {
        const int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || chdir(dir) != 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        signal(SIGPIPE, SIG_DFL); /* main() ignores them; nvcc expects the defaults */
        signal(SIGXFSZ, SIG_DFL);
        execvp(nvcc, (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", nvcc, strerror(errno));
        _exit(127);
    }
    int status = 0;
    const time_t end = time(NULL) + VARIANT_COMPILE_LIMIT_S;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (variant_signal) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            snprintf(log, loglen, "interrupted (signal %d)", (int)variant_signal);
            return -1;
        }
        if (time(NULL) > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            snprintf(log, loglen, "nvcc ran past %d s and was killed", VARIANT_COMPILE_LIMIT_S);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!WIFEXITED(status))
        return text_errf(log, loglen, "nvcc died (signal %d)", WTERMSIG(status));
    if (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126)
        return text_errf(
            log, loglen,
            "cannot run the CUDA compiler %s (set FASWEEP_NVCC or CUDA_HOME, or put nvcc "
            "on PATH)",
            nvcc);
    return WEXITSTATUS(status);
}

/* The compiler's first lines from dir/compile.log into log, the build
 * folder's name of the source replaced by the user's path. */
static void variant_log(const char *dir, const char *user_path, char *log, size_t loglen)
{
    char p[PATH_MAX + 16], kpath[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/compile.log", dir);
    snprintf(kpath, sizeof kpath, "%s/kernel.cuh", dir);
    FILE *f = fopen(p, "r");
    size_t used = 0;
    log[0] = '\0';
    char line[1024];
    while (f && fgets(line, sizeof line, f) && used + 1 < loglen) {
        /* nvcc names the copy by its full path, or as kernel.cuh at a line's start */
        const char *name = strstr(line, kpath)                    ? kpath
                           : strncmp(line, "kernel.cuh", 10) == 0 ? "kernel.cuh"
                                                                  : NULL;
        char *k = name ? strstr(line, name) : NULL;
        if (k)
            *k = '\0';
        used += (size_t)snprintf(log + used, loglen - used, "%s%s%s", line, k ? user_path : "",
                                 k ? k + strlen(name) : "");
    }
    if (f)
        fclose(f);
    if (used >= loglen)
        used = loglen - 1;
    while (used > 0 && log[used - 1] == '\n')
        log[--used] = '\0';
    if (!used)
        snprintf(log, loglen, "nvcc failed without a message");
}

/* Whether dir/compile.log names an error in the sources the build wrote
 * (the copy, the wrapper, an embedded header) or from ptxas or the device
 * linker: a failure of the source, the same every time, so it is cached.
 * Any other failure (nvcc's shell steps, a full disk, a missing tool) is
 * the environment's, and is not. */
static int variant_source_failed(const char *dir)
{
    char p[PATH_MAX + 16], line[1024];
    snprintf(p, sizeof p, "%s/compile.log", dir);
    FILE *f = fopen(p, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "ptxas error", 11) == 0 || strncmp(line, "nvlink error", 12) == 0) {
            found = 1;
            continue;
        }
        const char *l = strncmp(line, "./", 2) == 0 ? line + 2 : line;
        const size_t n = strcspn(l, "(:");
        int ours = (n == 10 && strncmp(l, "kernel.cuh", 10) == 0) ||
                   (n == 10 && strncmp(l, "wrapper.cu", 10) == 0);
        for (int i = 0; fa_embedded_names[i] && !ours; i++)
            ours = strlen(fa_embedded_names[i]) == n && strncmp(l, fa_embedded_names[i], n) == 0;
        found = ours && l[n] && strstr(l + n, "error");
    }
    if (f)
        fclose(f);
    return found;
}

/* The first line of dir/compile.log, printable, into log (a failure of
 * the environment: the message says it is not cached). */
static void variant_env_log(const char *dir, const char *nvcc, char *log, size_t loglen)
{
    char p[PATH_MAX + 16], line[1024] = "", clean[512] = "no message";
    snprintf(p, sizeof p, "%s/compile.log", dir);
    FILE *f = fopen(p, "r");
    while (f && fgets(line, sizeof line, f) && line[strspn(line, " \t\r\n")] == '\0')
        line[0] = '\0';
    if (f)
        fclose(f);
    if (line[0])
        text_clean(line, strlen(line), 300, 1, clean, sizeof clean);
    snprintf(log, loglen,
             "%s failed without naming an error in the variant (%s); not cached: fix the cause "
             "and run again",
             nvcc, clean);
}

/* Removes the temp build folders of runs that died mid-compile (killed,
 * a power cut): ours, and older than any live compile can be. */
static void variant_sweep(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *de;
    const time_t old = time(NULL) - 2 * VARIANT_COMPILE_LIMIT_S;
    while (d && (de = readdir(d)) != NULL) {
        char p[PATH_MAX];
        struct stat st;
        if (strncmp(de->d_name, ".tmp-", 5) != 0 ||
            snprintf(p, sizeof p, "%s/%s", root, de->d_name) >= (int)sizeof p)
            continue;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
            st.st_mtime < old)
            owned_rmdir(p);
    }
    if (d)
        closedir(d);
}

/* Records the hash of the library just built (dir/variant.so) as
 * dir/variant.so.fnv. Returns 0, or -1 (errno set). */
static int variant_seal(const char *dir)
{
    char p[PATH_MAX + 16], text[24];
    uint64_t h;
    snprintf(p, sizeof p, "%s/variant.so", dir);
    const int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    const int rc = owned_fnv_fd(fd, &h);
    close(fd);
    if (rc != 0)
        return -1;
    const int n = snprintf(text, sizeof text, "%016llx\n", (unsigned long long)h);
    return variant_write(dir, "variant.so.fnv", text, (size_t)n);
}

/* Opens the library so for reading after checking it is one this user
 * built: a regular file (not a link) of this user that nobody else may
 * write, in a folder of the same kind, whose FNV-1a matches the one
 * recorded beside it at build time. Returns the descriptor (the caller
 * loads that very file through /proc/self/fd), or -1 with the reason in
 * err. */
static int variant_so_open(const char *so, char *err, size_t errlen)
{
    char dir[PATH_MAX], p[PATH_MAX + 16], q[512], want[24] = "", got[24];
    snprintf(dir, sizeof dir, "%s", so);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    const char *bad = owned_dir_bad(dir, 0);
    const int fd = bad ? -1 : open(so, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    uint64_t h = 0;
    if (!bad && (fd < 0 || owned_fnv_fd(fd, &h) != 0))
        bad = strerror(errno);
    else if (!bad && owned_fd_bad(fd))
        bad = "not a file of yours that only you may write";
    if (!bad) {
        snprintf(p, sizeof p, "%s/variant.so.fnv", dir);
        FILE *f = fopen(p, "r");
        if (!f || !fgets(want, sizeof want, f))
            bad = "without the hash recorded when it was built";
        if (f)
            fclose(f);
        snprintf(got, sizeof got, "%016llx\n", (unsigned long long)h);
        if (!bad && strcmp(want, got) != 0)
            bad = "not what was built (its hash differs from the one recorded then)";
    }
    if (!bad)
        return fd;
    if (fd >= 0)
        close(fd);
    snprintf(err, errlen,
             "the cached kernel variant %s is %s: not loaded; remove the folder %s and run again",
             variant_quote(so, q, sizeof q), bad, dir);
    return -1;
}

/* What the cache entry dir holds: 1 a source that failed to compile (its
 * log into log), 0 a verified library, -1 an entry that cannot be used
 * (reason in log). */
static int variant_entry(const char *dir, const char *user_path, char *log, size_t loglen)
{
    char p[PATH_MAX + 16];
    const char *bad = owned_dir_bad(dir, 0);
    if (bad)
        return variant_path_err(
            log, loglen, "the variant cache entry %s is %s: remove it and run again", dir, bad);
    snprintf(p, sizeof p, "%s/failed", dir);
    if (access(p, F_OK) == 0) { /* compiled before, and the source failed */
        variant_log(dir, user_path, log, loglen);
        return 1;
    }
    snprintf(p, sizeof p, "%s/variant.so", dir);
    const int fd = variant_so_open(p, log, loglen);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* Compiles into a fresh temp folder beside the cache entry, then renames
 * it into place; a concurrent build of the same key that got there first
 * wins, and this one's folder is removed (so is it on every failure: no
 * temp folder outlives the call). Returns as variant_build. */
static int variant_compile(task_variant *v, const char *root, const char *dir, const char *src,
                           size_t len, const fa_config *c, int cc, const char *nvcc, char *log,
                           size_t loglen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", root) >= (int)sizeof tmp || !mkdtemp(tmp))
        return text_errf(log, loglen, "cannot make a build folder in %s: %s (set FASWEEP_CACHE)",
                         root, strerror(errno));
    if (variant_sources(tmp, src, len, c) != 0) {
        snprintf(log, loglen, "cannot write the variant's sources into %s: %s", tmp,
                 strerror(errno));
        owned_rmdir(tmp);
        return -1;
    }
    int st = variant_nvcc_run(tmp, nvcc, c, cc, log, loglen);
    if (st > 0 && !variant_source_failed(tmp)) {
        variant_env_log(tmp, nvcc, log, loglen);
        st = -1;
    }
    if (st == 0 && variant_seal(tmp) != 0) {
        snprintf(log, loglen, "%s built no readable variant.so in %s: %s", nvcc, tmp,
                 strerror(errno));
        st = -1;
    }
    if (st > 0 && variant_write(tmp, "failed", "", 0) != 0) {
        snprintf(log, loglen, "cannot write into %s: %s", tmp, strerror(errno));
        st = -1;
    }
    if (st < 0) {
        owned_rmdir(tmp);
        return -1;
    }
    if (rename(tmp, dir) != 0) {
        const int e = errno;
        owned_rmdir(tmp);
        if (e != EEXIST && e != ENOTEMPTY)
            return text_errf(log, loglen, "cannot put %s in place as %s: %s", tmp, dir,
                             strerror(e));
    }
    /* ours or the race winner's: read back as any cache entry */
    return variant_entry(dir, v->path, log, loglen);
}

int variant_build(task_variant *v, const fa_config *c, int cc, char *log, size_t loglen)
{
    char root[PATH_MAX / 2], dir[PATH_MAX], nv[PATH_MAX];
    if (variant_cache_root(root, sizeof root, log, loglen) != 0)
        return -1;
    variant_sweep(root);
    size_t len;
    const fa_family *fam = fa_family_of(c);
    if (!fam)
        return text_errf(log, loglen, "the variant's config is of no known kernel family");
    if (fam->arch && cc != fam->arch)
        return text_errf(log, loglen,
                         "family %s runs on %s only (%s); this GPU is compute capability %d.%d",
                         fam->name, fam->arch_name, fam->arch_why, cc / 10, cc % 10);
    char *src = variant_read(v->path, fam->header, &len, log, loglen);
    if (!src)
        return -1;
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)text_fnv1a(TEXT_FNV_INIT, src, len));
    if (strcmp(hash, v->hash) != 0) { /* the records' build id names what was compiled */
        snprintf(log, loglen, "%s changed while it was being read; run again", v->path);
        free(src);
        return -1;
    }
    const char *nvcc = variant_nvcc(nv, sizeof nv);
    const unsigned long long key = variant_key(src, len, c, cc, nvcc);
    snprintf(dir, sizeof dir, "%s/%016llx", root, key);
    struct stat st;
    struct sigaction old[3];
    variant_catch(1, old);
    const int rc = lstat(dir, &st) == 0
                       ? variant_entry(dir, v->path, log, loglen)
                       : variant_compile(v, root, dir, src, len, c, cc, nvcc, log, loglen);
    free(src);
    variant_catch(0, old);
    if (rc == 0 && snprintf(v->so, sizeof v->so, "%s/variant.so", dir) >= (int)sizeof v->so)
        return text_errf(log, loglen, "variant cache path too long: %s (set FASWEEP_CACHE)", dir);
    return rc;
}

/* ---- the worker's end ----------------------------------------------------------------------- */

const fa_instance *variant_open(const task_variant *v, const fa_config *c, char *err, size_t errlen)
{
    /* checked again here: the worker loads only the file it verified */
    const int fd = variant_so_open(v->so, err, errlen);
    if (fd < 0)
        return NULL;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    void *h = dlopen(self, RTLD_NOW | RTLD_LOCAL);
    close(fd);
    if (!h) {
        snprintf(err, errlen, "loading the kernel variant %s: %s", v->so, dlerror());
        return NULL;
    }
    const fa_instance *(*get)(void) = NULL;
    *(void **)&get = dlsym(h, VARIANT_SYMBOL);
    const fa_instance *in = get ? get() : NULL;
    if (!in || fa_config_cmp(&in->cfg, c) != 0) {
        snprintf(err, errlen, "the kernel variant %s holds %s", v->so,
                 in ? "another config" : "no " VARIANT_SYMBOL);
        return NULL;
    }
    return in; /* the library stays loaded for the worker's life */
}
