/* mma.h - the traits of the mma family (kernels/mma/flash_fwd.cuh): the
 * arithmetic that decides whether a point can exist and which code paths
 * it runs. FA2's kernel_traits.h in spirit: one place that the planner's
 * rules (kernels/mma/mma.c), the launch and the registry entry
 * (FA_INSTANCE in flash_fwd.cuh) all read, so the shared-memory size the
 * planner rejects on is the very number the launch asks for, and the code
 * paths `fasweep list` and the seeds report are the ones the template
 * compiles.
 *
 * The family's axes, as users name them, and the config struct's fields:
 * HEAD_DIM (head_dim), BLOCK_M (block_m), BLOCK_N (block_n), NUM_WARPS
 * (num_warps), STAGES (stages), SWIZZLE (swizzle). Its config text is
 * "d64.m128.n64.w4.s2.z1", one letter per axis. The family's description
 * for the engine (name, axes, text, rules, instance text) is mma_family in
 * kernels/mma/mma.c.
 *
 * Shared by C host code and the CUDA template. Everything here is pure
 * arithmetic: no CUDA, no allocation, no globals.
 */
#ifndef FA_MMA_H
#define FA_MMA_H

/* fa_config.h is one folder up; a kernel variant (sweep/variant.h) has it
 * beside this file, included first, so the guard skips the path. */
#ifndef FA_CONFIG_H
#include "../fa_config.h"
#endif

/* The mma family's index in the family table (kernels/family.c): what its
 * registry entries (FA_INSTANCE) put in fa_config.family. */
#define FA_FAMILY_MMA 0

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one fp16 element and of one cp.async chunk. */
#define FA_ELEM_BYTES 2
#define FA_CHUNK_BYTES 16
/* The mma family's axes: their indices in fa_config.axis (mma.c's table
 * names them in this order). */
enum { MMA_BLOCK_M, MMA_BLOCK_N, MMA_NUM_WARPS, MMA_STAGES, MMA_SWIZZLE };

/* Rows of one mma.sync m16n8k16 A fragment: the unit a warp owns. */
#define FA_MMA_M 16

/* Bytes of one [rows x head_dim] fp16 tile in shared memory. */
static inline FA_HD long fa_tile_bytes(int rows, int head_dim)
{
    return (long)rows * head_dim * FA_ELEM_BYTES;
}

/* Dynamic shared memory the kernel needs: the Q tile, plus `stages` K tiles
 * and `stages` V tiles. This is the single definition used both by the
 * launch (kernels/mma/flash_fwd.cuh) and by the planner's reject rule. */
static inline FA_HD long fa_smem_bytes(const fa_config *c)
{
    return fa_tile_bytes(c->axis[MMA_BLOCK_M], c->head_dim) +
           2L * c->axis[MMA_STAGES] * fa_tile_bytes(c->axis[MMA_BLOCK_N], c->head_dim);
}

/* Registers: a warp's fp32 O (rows/16 x HEAD_DIM/2 per thread) and S (rows/16
 * x BLOCK_N/2) with its fp16 P (half that) must leave room for addresses and
 * fragments. Measured on nvcc 13.0 at HEAD_DIM 64 and 128, every point the
 * spaces hold is within it; at HEAD_DIM 256 it admits one 16-row tile per
 * warp and BLOCK_N up to 64. */
#define FA_MMA_REGS_MAX 200
FA_PURE int fa_mma_regs_estimate(int head_dim, int block_m, int block_n, int num_warps)
{
    return num_warps > 0 ? (block_m / num_warps / 16) * (head_dim / 2 + block_n / 2 + block_n / 4)
                         : 0;
}
FA_PURE int fa_mma_regs_apply(int head_dim) /* the head dims the rule is checked at */
{
    return head_dim >= 256;
}
FA_PURE int fa_mma_regs_ok(int head_dim, int block_m, int block_n, int num_warps)
{
    return !fa_mma_regs_apply(head_dim) ||
           fa_mma_regs_estimate(head_dim, block_m, block_n, num_warps) <= FA_MMA_REGS_MAX;
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
    return fa_q_in_regs(c->head_dim, c->axis[MMA_BLOCK_M], c->axis[MMA_NUM_WARPS]);
}
static inline int fa_config_lookahead(const fa_config *c)
{
    return fa_lookahead(c->head_dim, c->axis[MMA_BLOCK_M], c->axis[MMA_BLOCK_N],
                        c->axis[MMA_NUM_WARPS], c->axis[MMA_STAGES]);
}

#ifdef __cplusplus
}
#endif
#endif /* FA_MMA_H */
