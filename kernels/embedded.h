/* embedded.h - what the build records for kernel variants (sweep/variant.h),
 * defined in the generated build/gen/embedded.c (scripts/geninst.c writes
 * it from the Makefile's lists): the one declaration its users share.
 *
 * fa_embedded_names[] and fa_embedded_texts[] are the headers a variant
 * is compiled against (names without their folder, and their texts),
 * NULL-terminated, in the same order. fa_code_flags[] are the nvcc flags
 * that decide the instances' code (the Makefile's NVCODE: NVFLAGS,
 * --expt-relaxed-constexpr and NVEXTRA), NULL-terminated: a variant is
 * compiled with exactly these, so it races the instances on equal terms.
 */
#ifndef FA_EMBEDDED_H
#define FA_EMBEDDED_H

extern const char *const fa_embedded_names[];
extern const char *const fa_embedded_texts[];
extern const char *const fa_code_flags[];

#endif /* FA_EMBEDDED_H */
