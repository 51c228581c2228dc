/* fa_config.h - one point of the FlashAttention-forward tuning space, and
 * the arithmetic that decides whether a point can exist and which code
 * paths it runs.
 *
 * One vocabulary everywhere: the space file's axis names. The template
 * parameters of kernels/flash_fwd.cuh and the FA_INSTANCE macro use them as
 * written (HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE); the C
 * struct below uses them in lower case (block_m is BLOCK_M); the config
 * text "d64.m128.n64.w4.s2.z1" (a store key) abbreviates them by one
 * letter each: d=HEAD_DIM m=BLOCK_M n=BLOCK_N w=NUM_WARPS s=STAGES
 * z=SWIZZLE.
 *
 * This header is shared by the C host code (planner, registry, driver) and
 * by the CUDA template, so the shared-memory size the planner rejects on is
 * the very number the launch asks for, and the code paths `fasweep list`
 * and the seeds report are the ones the template compiles. Everything here
 * is pure arithmetic: no CUDA, no allocation, no globals.
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

/* The tunable axes of the kernel, plus the head dimension it is built for. */
typedef struct fa_config {
    int head_dim;  /* HEAD_DIM: 64 or 128 */
    int block_m;   /* BLOCK_M: query rows per CTA */
    int block_n;   /* BLOCK_N: key/value rows per inner-loop tile */
    int num_warps; /* NUM_WARPS: warps per CTA; each owns block_m / num_warps query rows */
    int stages;    /* STAGES: depth of the K/V cp.async ring (1 = load, wait, compute) */
    int swizzle;   /* SWIZZLE: 0 = plain row-major smem, 1 = XOR-swizzled 16-byte chunks */
} fa_config;

/* Bytes of one fp16 element and of one cp.async chunk. */
#define FA_ELEM_BYTES 2
#define FA_CHUNK_BYTES 16
/* Rows of one mma.sync m16n8k16 A fragment: the unit a warp owns. */
#define FA_MMA_M 16

/* Threads per CTA. */
static inline FA_HD int fa_threads(const fa_config *c)
{
    return c->num_warps * 32;
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

/* ---- derived code paths ------------------------------------------------------------------------
 *
 * Two strategies of the template are not axes of their own: the axes decide
 * them. Both are named here, computed here, and reported by `fasweep list
 * --json` and every seed ("paths"), so a tuner or an LLM reading a config
 * knows which code it runs.
 *
 * Q_IN_REGS: the warp's Q fragments stay in registers for the whole key
 * loop when they are few (at most 32 registers: 16-row tiles per warp x
 * HEAD_DIM/16 k-steps x 4); otherwise they are re-read from shared memory
 * every tile, leaving the registers to S and O. */
FA_PURE int fa_q_in_regs(int head_dim, int block_m, int num_warps)
{
    return (block_m / num_warps / 16) * (head_dim / 16) * 4 <= 32;
}

/* LOOKAHEAD: Q K^T of tile j+1 is issued in the same straight-line block as
 * the softmax of tile j, so the tensor cores work under the exp2s. Needs
 * tile j+1 resident while tile j's V is in use (STAGES >= 3) and room for a
 * second S tile: a warp holds one 16-row tile, and two S tiles plus O take
 * at most 160 registers (HEAD_DIM 64 up to 128 keys, 128 up to 64). */
FA_PURE int fa_lookahead(int head_dim, int block_m, int block_n, int num_warps, int stages)
{
    return stages >= 3 && block_m / num_warps == 16 &&
           2 * (block_n / 8) * 4 + (head_dim / 8) * 4 <= 160;
}

/* The derived code paths of a config, by the names `fasweep list --json`
 * and the seeds use for them ("paths": {"q_in_regs", "lookahead"}). */
static inline int fa_config_q_in_regs(const fa_config *c)
{
    return fa_q_in_regs(c->head_dim, c->block_m, c->num_warps);
}
static inline int fa_config_lookahead(const fa_config *c)
{
    return fa_lookahead(c->head_dim, c->block_m, c->block_n, c->num_warps, c->stages);
}

/* Canonical short text of a config, e.g. "d64.m128.n64.w4.s2.z1".
 * Writes at most `n` bytes including the NUL; returns what snprintf returns. */
int fa_config_format(const fa_config *c, char *buf, unsigned long n);

/* Parses the text fa_config_format writes. Returns 0 on success, -1 when the
 * text is not exactly of that form (nothing is written to *c then). */
int fa_config_parse(const char *s, fa_config *c);

/* Total order on configs (head_dim, block_m, block_n, num_warps, stages,
 * swizzle); returns <0, 0, >0 like strcmp. (Inline: the kernel library's
 * registry needs it and links nothing of the host code.) */
static inline int fa_config_cmp(const fa_config *a, const fa_config *b)
{
    const int x[6] = {a->head_dim, a->block_m, a->block_n, a->num_warps, a->stages, a->swizzle};
    const int y[6] = {b->head_dim, b->block_m, b->block_n, b->num_warps, b->stages, b->swizzle};
    for (int i = 0; i < 6; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* FA_CONFIG_H */
