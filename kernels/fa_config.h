/* fa_config.h - one point of a kernel family's tuning space: which family,
 * and the values of its axes. Family-neutral: what a family's axes mean,
 * which points can exist and how a point is written as text is the
 * family's (kernels/family.h: the table; kernels/<family>/: its traits).
 *
 * One vocabulary everywhere: the space file's axis names. The config struct
 * below has six value slots, named after the mma family's axes (the default
 * family, kernels/mma/mma.h): HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES,
 * SWIZZLE in lower case. Another family gives the slots its own axes, in
 * order (its fa_family.axes says which name each slot has). The config
 * text of an mma point is "d64.m128.n64.w4.s2.z1" (a store key's config
 * field); each family has its own text.
 *
 * This header is shared by the C host code (planner, registry, driver) and
 * by the CUDA templates. Everything here is pure: no CUDA, no allocation,
 * no globals.
 */
#ifndef FA_CONFIG_H
#define FA_CONFIG_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define FA_HD __host__ __device__
#else
#define FA_HD
#endif
/* Pure functions of the axes: constexpr for the template, inline for C. */
#ifdef __cplusplus
#define FA_PURE constexpr FA_HD inline
#else
#define FA_PURE static inline
#endif

/* The tunable axes of the kernel, plus the head dimension it is built for,
 * and the family. family is last, so a positional or zero initialiser is a
 * point of the default family, mma (family 0). */
typedef struct fa_config {
    int head_dim;  /* HEAD_DIM: 64 or 128 */
    int block_m;   /* BLOCK_M: query rows per CTA */
    int block_n;   /* BLOCK_N: key/value rows per inner-loop tile */
    int num_warps; /* NUM_WARPS: warps per CTA; each owns block_m / num_warps query rows */
    int stages;    /* STAGES: depth of the K/V cp.async ring (1 = load, wait, compute) */
    int swizzle;   /* SWIZZLE: 0 = plain row-major smem, 1 = XOR-swizzled 16-byte chunks */
    int family;    /* index into the family table (kernels/family.h); 0 = mma */
} fa_config;

/* The slots of a config, in order (head_dim first, family not counted). */
#define FA_CONFIG_SLOTS 6

/* Canonical short text of a config in its family's format, e.g.
 * "d64.m128.n64.w4.s2.z1" for mma; the family is not part of it (a record
 * keeps it in key.family). Writes at most `n` bytes including the NUL;
 * returns what snprintf returns (a config of no known family writes "?"). */
int fa_config_format(const fa_config *c, char *buf, unsigned long n);

/* Parses a config text: "FAMILY:TEXT" (e.g. "mma:d64.m128.n64.w4.s2.z1"),
 * or TEXT alone for the default family, mma. TEXT must be exactly what the
 * family's format writes. Returns 0 on success, -1 otherwise (unknown
 * family, or not that form; nothing is written to *c then). */
int fa_config_parse(const char *s, fa_config *c);

/* Parses TEXT (no "FAMILY:" prefix) as a config of family `family` (an
 * index, kernels/family.h). 0 or -1 as fa_config_parse. */
int fa_config_parse_in(int family, const char *s, fa_config *c);

/* Total order on configs (family, then head_dim, block_m, block_n,
 * num_warps, stages, swizzle); returns <0, 0, >0 like strcmp. The registry
 * is sorted by it, so it is keyed by family + config. (Inline: the kernel
 * library's registry needs it and links nothing of the host code.) */
static inline int fa_config_cmp(const fa_config *a, const fa_config *b)
{
    const int x[7] = {a->family,    a->head_dim, a->block_m, a->block_n,
                      a->num_warps, a->stages,   a->swizzle};
    const int y[7] = {b->family,    b->head_dim, b->block_m, b->block_n,
                      b->num_warps, b->stages,   b->swizzle};
    for (int i = 0; i < 7; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* FA_CONFIG_H */
