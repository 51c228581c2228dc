/* variant.h - kernel variants for `fasweep eval --kernel FILE.cuh`: an
 * edited copy of a kernel family's template (kernels/mma/flash_fwd.cuh,
 * kernels/wgmma/flash_fwd_wgmma.cuh: what an evolution loop writes),
 * compiled for one config of that family and the local GPU (or the
 * family's one architecture, sm_90a for wgmma) into a shared library that
 * the worker loads and runs in place of the compiled instance, gated and
 * timed identically.
 *
 * Engine side (no CUDA): variant_load reads and checks the file,
 * variant_build compiles it with nvcc into a cache keyed by everything the
 * compile reads, so an unchanged variant compiles once. A variant that
 * does not compile is a result (status compile_error, the compiler's first
 * lines), found before any GPU work. The records' build id is "src-" + the
 * source's hash: they rank beside the compiled instances and never
 * overwrite them.
 *
 * What the compile reads: a private copy of FILE (kernel.cuh)
 * and a small wrapper that expands its family's instance macro for the
 * config (kernels/family.h: instance, symbol; FA_INSTANCE for mma), beside
 * the fa_config.h, fa_launch.h and mma.h embedded in this binary (the
 * headers it was built with, so the structs the worker passes match), and
 * the toolkit's headers. Nothing of FILE's folder: it is not on the
 * include path, and variant_load refuses any other #include (a quoted
 * header that is not embedded, an absolute or ".." system header, a
 * computed one), so the key (source, config, architecture, flags,
 * embedded headers, the compiler's path, size and time) covers all of it.
 * nvcc runs in the build folder on relative names: no path of the user's
 * reaches its shell steps.
 *
 * A failure is cached only when the compiler pins it on the source (an
 * error in kernel.cuh, wrapper.cu or an embedded header, or from ptxas or
 * nvlink); any other (a missing tool, a full disk, a killed compiler) is
 * reported and not cached.
 *
 * Worker side: variant_open checks the library again and loads that very
 * file (dlopen of /proc/self/fd/N) and returns its instance.
 *
 * Cache: $FASWEEP_CACHE, else $XDG_CACHE_HOME/fasweep, else
 * ~/.cache/fasweep, else (no HOME) ${TMPDIR:-/tmp}/fasweep-EUID; one
 * folder per key under variants/, made with mode 0700. The base and
 * variants/ folders, every entry and its variant.so must be the user's
 * and writable by nobody else (store/owned.h; variants/, the entry, the
 * library and the /tmp fallback must not be links), and variant.so must
 * match the FNV-1a recorded beside it at build (variant.so.fnv): anything
 * else is refused with what to remove, never loaded. A build happens in a
 * temp folder (.tmp-XXXXXX) renamed into place; the loser of a race, a
 * failure and SIGINT/SIGTERM/SIGHUP remove it, and a run's sweep removes
 * those of runs killed outright (older than twice the compile limit).
 * The compiler: $FASWEEP_NVCC, else $CUDA_HOME/bin/nvcc, else the toolkit
 * this binary was built with, else nvcc on PATH.
 */
#ifndef VARIANT_H
#define VARIANT_H

#include <stddef.h>

#include "../kernels/fa_launch.h"
#include "task.h"

/* The largest variant source read (an edited flash_fwd.cuh is ~40 KB). */
#define VARIANT_MAX_BYTES (4 << 20)

/* Reads FILE and checks it is a kernel source of c's family: a readable
 * regular file of text (no NUL byte) that defines the family's instance
 * macro and kernel template (kernels/family.h: FA_INSTANCE and
 * flash_fwd_kernel for mma) and includes no file but the embedded and
 * system headers, at a path a record can store (valid UTF-8, no control
 * characters, under 256 bytes). Fills v's path, hash and build. Returns 0,
 * or -1 with a one-line reason in err (a usage error: nothing is run). */
int variant_load(const char *file, const fa_config *c, task_variant *v, char *err, size_t errlen);

/* Compiles v for config c and compute capability cc (89 = sm_89; a family
 * with one architecture, kernels/family.h arch, is compiled for that one
 * and refused on another cc) unless the cache has it. Returns 0 with v->so set; 1 when the source
 * does not compile, with the compiler's first lines in log (one line per line of the compiler's, at
 * most loglen bytes); -1 when it could not be tried (no nvcc, an unsafe or unwritable cache, a
 * cached library that fails its check, a failure that is not the source's), with the reason in log
 * (one line). */
int variant_build(task_variant *v, const fa_config *c, int cc, char *log, size_t loglen);

/* Worker side: checks v->so as variant_build does (owner, permissions,
 * recorded hash), loads the file it checked and returns its instance for
 * config c, or NULL with the reason in err (a library that fails the
 * check or does not load, or holds another config). */
const fa_instance *variant_open(const task_variant *v, const fa_config *c, char *err,
                                size_t errlen);

#endif /* VARIANT_H */
