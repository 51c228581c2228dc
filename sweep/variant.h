/* variant.h - kernel variants for `fasweep eval --kernel FILE.cuh`: an
 * edited copy of kernels/mma/flash_fwd.cuh (what an evolution loop writes),
 * compiled for one config and the local GPU into a shared library that the
 * worker loads and runs in place of the compiled instance, gated and timed
 * identically.
 *
 * Engine side (no CUDA): variant_load reads and checks the file,
 * variant_build compiles it with nvcc into a cache keyed by the source,
 * the config, the architecture, the flags and the compiler, so an
 * unchanged variant compiles once. A variant that does not compile is a
 * result (status compile_error, the compiler's first lines), found before
 * any GPU work. The records' build id is "src-" + the source's hash: they
 * rank beside the compiled instances and never overwrite them.
 *
 * The library is built in a cache folder from a copy of FILE (kernel.cuh)
 * and a small wrapper that expands its family's instance macro for the
 * config (kernels/family.h: instance, symbol; FA_INSTANCE for mma).
 * Beside the copy lie the fa_config.h, fa_launch.h and mma.h embedded in this
 * binary (the headers it was built with, so the structs the worker passes
 * match): FILE's own `#include "fa_config.h"` finds them first. FILE's
 * folder is on the include path for any other header it includes.
 *
 * Worker side: variant_open loads the library (dlopen) and returns its
 * instance.
 *
 * Cache: $FASWEEP_CACHE, else $XDG_CACHE_HOME/fasweep, else
 * ~/.cache/fasweep; one folder per key under variants/. The compiler:
 * $FASWEEP_NVCC, else $CUDA_HOME/bin/nvcc, else the toolkit this binary
 * was built with, else nvcc on PATH.
 */
#ifndef VARIANT_H
#define VARIANT_H

#include <stddef.h>

#include "../kernels/fa_launch.h"
#include "task.h"

/* The largest variant source read (an edited flash_fwd.cuh is ~40 KB). */
#define VARIANT_MAX_BYTES (4 << 20)

/* Reads FILE and checks it is a kernel source: a readable regular file of
 * text (no NUL byte) that defines the FA_INSTANCE macro and the
 * flash_fwd_kernel template. Fills v's path, hash and build. Returns 0, or
 * -1 with a one-line reason in err (a usage error: nothing is run). */
int variant_load(const char *file, task_variant *v, char *err, size_t errlen);

/* Compiles v for config c and compute capability cc (89 = sm_89) unless
 * the cache has it. Returns 0 with v->so set; 1 when the source does not
 * compile, with the compiler's first lines in log (one line per line of
 * the compiler's, at most loglen bytes); -1 when it could not be tried
 * (no nvcc, an unwritable cache), with the reason in log. */
int variant_build(task_variant *v, const fa_config *c, int cc, char *log, size_t loglen);

/* Worker side: loads v->so and returns its instance for config c, or NULL
 * with the reason in err (a library that does not load, or holds another
 * config). */
const fa_instance *variant_open(const task_variant *v, const fa_config *c, char *err,
                                size_t errlen);

#endif /* VARIANT_H */
