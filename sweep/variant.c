/* variant.c - kernel variants: checked, compiled into a cache, loaded by
 * the worker (contract: variant.h).
 */
#include "variant.h"

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

#include "../kernels/family.h"
#include "../store/file.h"
#include "../store/text.h"

#ifndef FASWEEP_CUDA
#define FASWEEP_CUDA "/usr/local/cuda"
#endif

/* The headers this binary was built with (build/gen/embedded.c). */
extern const char *const fa_embedded_names[];
extern const char *const fa_embedded_texts[];

/* nvcc flags of a variant: those of the instances (Makefile NVFLAGS), for
 * one architecture, into a shared library on the shared CUDA runtime whose
 * symbols bind inside it (the worker has the same names loaded already). */
static const char *const variant_flags[] = {
    "-O3",        "-std=c++17", "-lineinfo",  "--expt-relaxed-constexpr",  "-shared",
    "-cudart",    "shared",     "-Xcompiler", "-fPIC,-fvisibility=hidden", "-Xlinker",
    "-Bsymbolic", NULL};

#define VARIANT_SYMBOL "fasweep_variant_instance"
#define VARIANT_COMPILE_LIMIT_S 600

/* ---- the source ---------------------------------------------------------------------------- */

/* The whole file into a NUL-terminated buffer (caller frees), or NULL with
 * the reason in err. */
static char *variant_read(const char *file, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    if (stat(file, &st) != 0) {
        snprintf(err, errlen, "--kernel %s: %s", file, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > VARIANT_MAX_BYTES) {
        snprintf(err, errlen, "--kernel %s: %s", file,
                 S_ISREG(st.st_mode) ? "larger than 4 MiB: not a kernel source"
                                     : "not a regular file (an edited copy of "
                                       "kernels/mma/flash_fwd.cuh is expected)");
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

int variant_load(const char *file, task_variant *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    char abs[PATH_MAX];
    if (!realpath(file, abs)) {
        snprintf(err, errlen, "--kernel %s: %s", file, strerror(errno));
        return -1;
    }
    if (strlen(abs) >= sizeof v->path) {
        snprintf(err, errlen, "--kernel %s: path longer than %zu bytes", abs, sizeof v->path - 1);
        return -1;
    }
    size_t len;
    char *text = variant_read(abs, &len, err, errlen);
    if (!text)
        return -1;
    const char *why = memchr(text, '\0', len)             ? "it holds a NUL byte: not a source file"
                      : !strstr(text, "FA_INSTANCE")      ? "it defines no FA_INSTANCE macro"
                      : !strstr(text, "flash_fwd_kernel") ? "it defines no flash_fwd_kernel"
                                                          : NULL;
    if (why) {
        snprintf(err, errlen,
                 "--kernel %s is not a kernel: %s (an edited copy of kernels/mma/flash_fwd.cuh is "
                 "expected)",
                 file, why);
        free(text);
        return -1;
    }
    const unsigned long long h = text_fnv1a(TEXT_FNV_INIT, text, len);
    free(text);
    snprintf(v->path, sizeof v->path, "%s", abs);
    snprintf(v->hash, sizeof v->hash, "%016llx", h);
    snprintf(v->build, sizeof v->build, "src-%016llx", h);
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

static int variant_cache_root(char *buf, size_t n)
{
    const char *e = getenv("FASWEEP_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (e && *e)
        return snprintf(buf, n, "%s/variants", e) < (int)n ? 0 : -1;
    if (x && *x)
        return snprintf(buf, n, "%s/fasweep/variants", x) < (int)n ? 0 : -1;
    return snprintf(buf, n, "%s/.cache/fasweep/variants", h && *h ? h : "/tmp") < (int)n ? 0 : -1;
}

/* The cache key: everything the library depends on. */
static unsigned long long variant_key(const char *src, size_t len, const fa_config *c, int cc,
                                      const char *nvcc)
{
    unsigned long long h = text_fnv1a(TEXT_FNV_INIT, src, len);
    h = text_fnv1a(h, c, sizeof *c);
    h = text_fnv1a(h, &cc, sizeof cc);
    for (const char *const *f = variant_flags; *f; f++)
        h = text_fnv1a(h, *f, strlen(*f) + 1);
    for (int i = 0; fa_embedded_texts[i]; i++)
        h = text_fnv1a(h, fa_embedded_texts[i], strlen(fa_embedded_texts[i]));
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
    if (!f || f->instance(c, inst, sizeof inst) >= (int)sizeof inst ||
        f->symbol(c, sym, sizeof sym) >= (int)sizeof sym) {
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

/* Runs nvcc in dir, its output into dir/compile.log. Returns the exit
 * status, -1 when it could not run or was killed (log says why). */
static int variant_nvcc_run(const char *dir, const char *nvcc, const char *src_dir, int cc,
                            char *log, size_t loglen)
{
    char arch[64], inc[PATH_MAX + 4], logp[PATH_MAX + 16];
    snprintf(arch, sizeof arch, "-gencode=arch=compute_%d,code=sm_%d", cc, cc);
    snprintf(inc, sizeof inc, "-I%s", src_dir);
    if (snprintf(logp, sizeof logp, "%s/compile.log", dir) >= (int)sizeof logp) {
        snprintf(log, loglen, "build folder path too long: %s", dir);
        return -1;
    }
    const char *argv[32];
    int k = 0;
    argv[k++] = nvcc;
    for (const char *const *f = variant_flags; *f; f++)
        argv[k++] = *f;
    argv[k++] = arch;
    argv[k++] = inc;
    argv[k++] = "wrapper.cu";
    argv[k++] = "-o";
    argv[k++] = "variant.so";
    argv[k] = NULL;
    const pid_t pid = fork();
    if (pid < 0) {
        snprintf(log, loglen, "cannot start nvcc: fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        const int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0 || chdir(dir) != 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        execvp(nvcc, (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", nvcc, strerror(errno));
        _exit(127);
    }
    int status = 0;
    const time_t end = time(NULL) + VARIANT_COMPILE_LIMIT_S;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (time(NULL) > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            snprintf(log, loglen, "nvcc ran past %d s and was killed", VARIANT_COMPILE_LIMIT_S);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!WIFEXITED(status)) {
        snprintf(log, loglen, "nvcc died (signal %d)", WTERMSIG(status));
        return -1;
    }
    if (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126) {
        snprintf(log, loglen,
                 "cannot run the CUDA compiler %s (set FASWEEP_NVCC or CUDA_HOME, or put nvcc "
                 "on PATH)",
                 nvcc);
        return -1;
    }
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

/* Compiles into a fresh temp folder beside the cache entry, then renames
 * it into place (a concurrent build of the same key just loses the race). */
static int variant_compile(task_variant *v, const char *root, const char *dir, const char *src,
                           size_t len, const fa_config *c, int cc, const char *nvcc, char *log,
                           size_t loglen)
{
    char tmp[PATH_MAX + 16], src_dir[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", root) >= (int)sizeof tmp || !mkdtemp(tmp)) {
        snprintf(log, loglen, "cannot make a build folder in %s: %s (set FASWEEP_CACHE)", root,
                 strerror(errno));
        return -1;
    }
    snprintf(src_dir, sizeof src_dir, "%s", v->path);
    char *slash = strrchr(src_dir, '/');
    if (slash)
        *slash = '\0';
    if (variant_sources(tmp, src, len, c) != 0) {
        snprintf(log, loglen, "cannot write the variant's sources into %s: %s", tmp,
                 strerror(errno));
        return -1;
    }
    const int st = variant_nvcc_run(tmp, nvcc, src_dir, cc, log, loglen);
    if (st < 0)
        return -1;
    if (st != 0) {
        variant_log(tmp, v->path, log, loglen);
        (void)variant_write(tmp, "failed", "", 0);
    }
    if (rename(tmp, dir) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
        snprintf(log, loglen, "cannot put %s in place as %s: %s", tmp, dir, strerror(errno));
        return -1;
    }
    return st != 0;
}

int variant_build(task_variant *v, const fa_config *c, int cc, char *log, size_t loglen)
{
    char root[PATH_MAX / 2], dir[PATH_MAX], nv[PATH_MAX];
    char made[PATH_MAX];
    int e = 0;
    if (variant_cache_root(root, sizeof root) != 0 ||
        (e = file_mkdirs(root, 0777, made, sizeof made)) != 0) {
        snprintf(log, loglen, "cannot create the variant cache %s: %s (set FASWEEP_CACHE)", root,
                 strerror(e ? e : ENAMETOOLONG));
        return -1;
    }
    size_t len;
    char *src = variant_read(v->path, &len, log, loglen);
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
    char so[PATH_MAX + 16], failed[PATH_MAX + 16];
    snprintf(so, sizeof so, "%s/variant.so", dir);
    snprintf(failed, sizeof failed, "%s/failed", dir);
    int rc;
    if (access(failed, F_OK) == 0) { /* compiled before, and failed */
        variant_log(dir, v->path, log, loglen);
        rc = 1;
    } else if (access(so, F_OK) == 0) {
        rc = 0;
    } else {
        rc = variant_compile(v, root, dir, src, len, c, cc, nvcc, log, loglen);
    }
    free(src);
    if (rc == 0 && snprintf(v->so, sizeof v->so, "%s", so) >= (int)sizeof v->so) {
        snprintf(log, loglen, "variant cache path too long: %s (set FASWEEP_CACHE)", so);
        return -1;
    }
    return rc;
}

/* ---- the worker's end ----------------------------------------------------------------------- */

const fa_instance *variant_open(const task_variant *v, const fa_config *c, char *err, size_t errlen)
{
    void *h = dlopen(v->so, RTLD_NOW | RTLD_LOCAL);
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
