/* fa_config.h - one point of the FlashAttention-forward tuning space, and
 * the arithmetic that decides whether a point can exist.
 *
 * This header is shared by the C host code (planner, registry, driver) and
 * by the CUDA template, so the shared-memory size the planner rejects on is
 * the very number the launch asks for. Everything here is pure arithmetic:
 * no CUDA, no allocation, no globals.
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

/* The tunable axes of the kernel, plus the head dimension it is built for. */
typedef struct fa_config {
    int head_dim; /* D: 64 or 128 */
    int block_m;  /* query rows per CTA */
    int block_n;  /* key/value rows per inner-loop tile */
    int warps;    /* warps per CTA; each owns block_m / warps query rows */
    int stages;   /* depth of the K/V cp.async ring (1 = load, wait, compute) */
    int swizzle;  /* 0 = plain row-major smem, 1 = XOR-swizzled 16-byte chunks */
} fa_config;

/* Bytes of one fp16 element and of one cp.async chunk. */
#define FA_ELEM_BYTES 2
#define FA_CHUNK_BYTES 16
/* Rows of one mma.sync m16n8k16 A fragment: the unit a warp owns. */
#define FA_MMA_M 16

/* Threads per CTA. */
static inline FA_HD int fa_threads(const fa_config *c)
{
    return c->warps * 32;
}

/* Bytes of one [rows x head_dim] fp16 tile in shared memory. */
static inline FA_HD long fa_tile_bytes(int rows, int head_dim)
{
    return (long)rows * head_dim * FA_ELEM_BYTES;
}

/* Dynamic shared memory the kernel needs: the Q tile, plus `stages` K tiles
 * and `stages` V tiles. This is the single definition used both by the
 * launch (kernels/flash_fwd.cuh) and by the planner's reject rule. */
static inline FA_HD long fa_smem_bytes(const fa_config *c)
{
    return fa_tile_bytes(c->block_m, c->head_dim) +
           2L * c->stages * fa_tile_bytes(c->block_n, c->head_dim);
}

/* Number of 16-byte cp.async chunks in a [rows x head_dim] tile. */
static inline FA_HD long fa_tile_chunks(int rows, int head_dim)
{
    return fa_tile_bytes(rows, head_dim) / FA_CHUNK_BYTES;
}

/* Canonical short text of a config, e.g. "d64.m128.n64.w4.s2.z1".
 * Writes at most `n` bytes including the NUL; returns what snprintf returns. */
int fa_config_format(const fa_config *c, char *buf, unsigned long n);

/* Parses the text fa_config_format writes. Returns 0 on success, -1 when the
 * text is not exactly of that form (nothing is written to *c then). */
int fa_config_parse(const char *s, fa_config *c);

/* Total order on configs (head_dim, block_m, block_n, warps, stages,
 * swizzle); returns <0, 0, >0 like strcmp. */
int fa_config_cmp(const fa_config *a, const fa_config *b);

#ifdef __cplusplus
}
#endif
#endif /* FA_CONFIG_H */
