/* mma.c - the mma family's description (kernels/family.h): its name, axes,
 * config text, the planner's rules and its registry entry. The arithmetic
 * the rules use is the template's own (mma.h).
 *
 * The rules mirror what the template assumes (flash_fwd.cuh): each warp
 * owns whole 16-row mma tiles of Q, every thread copies the same number of
 * 16-byte cp.async chunks of each tile, and the shared memory the launch
 * asks for (fa_smem_bytes, the same function) fits the target. */
#include "mma.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../family.h"

/* Threads per CTA, in long: a config built by hand (not from a space)
 * could overflow an int. */
static long mma_threads(const fa_config *c)
{
    return 32L * c->axis[MMA_NUM_WARPS];
}

/* Whether a [rows x head_dim] tile splits into whole chunks per thread. */
static int mma_threads_int(const fa_config *c)
{
    return (int)mma_threads(c);
}

static int mma_tile_splits(int rows, const fa_config *c)
{
    const long t = mma_threads(c);
    return t > 0 && fa_tile_chunks(rows, c->head_dim) % t == 0;
}

static int mma_head_dim_ok(int head_dim)
{
    return head_dim == 64 || head_dim == 128 || head_dim == 256;
}

static int mma_check(const fa_config *c, long smem_limit)
{
    if (!mma_head_dim_ok(c->head_dim))
        return FA_REJ_HEAD_DIM;
    /* Non-positive sizes only come from hand-built configs; they cannot be
     * split into warps, and would divide by zero below. */
    if (c->axis[MMA_NUM_WARPS] <= 0 || c->axis[MMA_BLOCK_M] <= 0 ||
        c->axis[MMA_BLOCK_M] % (FA_MMA_M * (long)c->axis[MMA_NUM_WARPS]) != 0)
        return FA_REJ_WARP_ROWS;
    if (c->axis[MMA_BLOCK_N] <= 0 || !mma_tile_splits(c->axis[MMA_BLOCK_M], c) ||
        !mma_tile_splits(c->axis[MMA_BLOCK_N], c))
        return FA_REJ_CHUNKS;
    if (!fa_mma_regs_ok(c->head_dim, c->axis[MMA_BLOCK_M], c->axis[MMA_BLOCK_N],
                        c->axis[MMA_NUM_WARPS]))
        return FA_REJ_REGS;
    if (c->axis[MMA_STAGES] <= 0 || fa_smem_bytes(c) > smem_limit)
        return FA_REJ_SMEM;
    return FA_REJ_OK;
}

/* The chunk rule's text for whichever tile fails first (Q, then K/V). */
static int mma_chunks_text(const fa_config *c, char *buf, unsigned long n)
{
    const int q_ok = c->axis[MMA_BLOCK_M] > 0 && mma_tile_splits(c->axis[MMA_BLOCK_M], c);
    const char *tile = q_ok ? "K/V" : "Q";
    const int rows = q_ok ? c->axis[MMA_BLOCK_N] : c->axis[MMA_BLOCK_M];
    return snprintf(buf, n,
                    "%s tile of %d x %d fp16 is %ld cp.async chunks of %d B, not a multiple of "
                    "%ld threads",
                    tile, rows, c->head_dim, fa_tile_chunks(rows, c->head_dim), FA_CHUNK_BYTES,
                    mma_threads(c));
}

static int mma_reject_text(int reason, const fa_config *c, long smem_limit, char *buf,
                           unsigned long n)
{
    switch (reason) {
    case FA_REJ_HEAD_DIM:
        return snprintf(buf, n, "head_dim %d unsupported (64, 128, 256)", c->head_dim);
    case FA_REJ_WARP_ROWS:
        return snprintf(
            buf, n, "BLOCK_M %d is not a multiple of 16 x NUM_WARPS (%d warps need %ld rows)",
            c->axis[MMA_BLOCK_M], c->axis[MMA_NUM_WARPS], FA_MMA_M * (long)c->axis[MMA_NUM_WARPS]);
    case FA_REJ_CHUNKS:
        return mma_chunks_text(c, buf, n);
    case FA_REJ_REGS:
        return snprintf(buf, n,
                        "HEAD_DIM %d with %d rows per warp and BLOCK_N %d needs about %d fp32 "
                        "registers per thread for O and S, over %d (it would spill)",
                        c->head_dim, c->axis[MMA_BLOCK_M] / c->axis[MMA_NUM_WARPS],
                        c->axis[MMA_BLOCK_N],
                        fa_mma_regs_estimate(c->head_dim, c->axis[MMA_BLOCK_M],
                                             c->axis[MMA_BLOCK_N], c->axis[MMA_NUM_WARPS]),
                        FA_MMA_REGS_MAX);
    case FA_REJ_SMEM:
        return snprintf(buf, n, "needs %ld B of shared memory, the space allows %ld B",
                        fa_smem_bytes(c), smem_limit);
    default:
        return snprintf(buf, n, "%s", "");
    }
}

/* mma_check's rules as Kernel Tuner restrictions (family.h), rule for rule:
 * HEAD_DIM is the problem's (a constant here), fp16 rows of HEAD_DIM x 2
 * B, 16-byte chunks; the thread count is 32 x NUM_WARPS. Every value a
 * space may hold is positive, so the guards against zero are not needed. */
static int mma_kt_restrictions(int head_dim, long smem_limit, char (*out)[FA_KT_RESTRICTION_LEN],
                               int max)
{
    if (max < FA_KT_MAX_RESTRICTIONS || !mma_head_dim_ok(head_dim))
        return -1;
    const long row = fa_tile_bytes(1, head_dim); /* bytes of one row */
    int n = 0;
    snprintf(out[n++], FA_KT_RESTRICTION_LEN, "BLOCK_M %% (%d*NUM_WARPS) == 0", FA_MMA_M);
    snprintf(out[n++], FA_KT_RESTRICTION_LEN, "(BLOCK_M*%ld//%d) %% (32*NUM_WARPS) == 0", row,
             FA_CHUNK_BYTES);
    snprintf(out[n++], FA_KT_RESTRICTION_LEN, "(BLOCK_N*%ld//%d) %% (32*NUM_WARPS) == 0", row,
             FA_CHUNK_BYTES);
    if (fa_mma_regs_apply(head_dim))
        snprintf(out[n++], FA_KT_RESTRICTION_LEN,
                 "(BLOCK_M//NUM_WARPS//16)*(%d + BLOCK_N//2 + BLOCK_N//4) <= %d", head_dim / 2,
                 FA_MMA_REGS_MAX);
    if (smem_limit < LONG_MAX)
        snprintf(out[n++], FA_KT_RESTRICTION_LEN, "BLOCK_M*%ld + 2*STAGES*BLOCK_N*%ld <= %ld", row,
                 row, smem_limit);
    return n;
}

static long mma_smem(const fa_config *c)
{
    return fa_smem_bytes(c);
}

/* nvcc's CPU for one instance grows with each thread's share of the S and O tiles, which
 * the template unrolls: 2.15e-4 s x BLOCK_M (BLOCK_N + HEAD_DIM) / NUM_WARPS, fitted to the
 * 96 instances of spaces/h100.json compiled one per unit for sm_90 on the build host (0.3 to
 * 3.8 s above a unit's fixed 1.3 s; mean error 0.26 s, sweep/NOTES-engine.md, fourteenth
 * session). */
static double mma_build_cost(const fa_config *c)
{
    return 2.15e-4 * c->axis[MMA_BLOCK_M] * (double)(c->axis[MMA_BLOCK_N] + c->head_dim) /
           c->axis[MMA_NUM_WARPS];
}

static int mma_path(const fa_config *c, int i)
{
    return i == 0 ? fa_config_q_in_regs(c) : i == 1 ? fa_config_lookahead(c) : 0;
}

const fa_family mma_family = {
    .name = "mma",
    .summary = "FlashAttention-2-style forward on mma.sync.m16n8k16 with a cp.async K/V ring",
    .header = "kernels/mma/flash_fwd.cuh",
    .instance_macro = "FA_INSTANCE",
    .kernel_name = "flash_fwd_kernel",
    .axes = {{"HEAD_DIM", NULL, NULL, 0, 0, 0, 0, "d"}, /* the problem's; the rules check it */
             {"BLOCK_M", "a positive integer multiple of 16", "a multiple of 16 of at most 512", 1,
              512, 16, 0, "m"},
             {"BLOCK_N", "a positive integer multiple of 16", "a multiple of 16 of at most 512", 1,
              512, 16, 0, "n"},
             {"NUM_WARPS", "a warp count of 1, 2, 4, 8 or 16", NULL, 1, 16, 1,
              (1u << 1) | (1u << 2) | (1u << 4) | (1u << 8) | (1u << 16), "w"},
             {"STAGES", "an integer from 1 to 8", NULL, 1, 8, 1, 0, "s"},
             {"SWIZZLE", "0 or 1", NULL, 0, 1, 1, 0, "z"}},
    .text_example = "d64.m128.n64.w4.s2.z1",
    .check = mma_check,
    .reject_text = mma_reject_text,
    .rule = {[FA_REJ_HEAD_DIM] = "HEAD_DIM is 64, 128 or 256",
             [FA_REJ_WARP_ROWS] = "BLOCK_M is a multiple of 16 x NUM_WARPS (whole 16-row mma "
                                  "tiles per warp)",
             [FA_REJ_CHUNKS] = "the Q and K/V tiles split into whole 16-B cp.async chunks per "
                               "thread (32 x NUM_WARPS threads)",
             [FA_REJ_SMEM] = "Q + 2 x STAGES K/V tiles fit the space's shared memory"},
    .smem_bytes = mma_smem,
    .threads = mma_threads_int,
    .symbol_prefix = "fa_inst_",
    .kt_block_x = "32*NUM_WARPS",
    .kt_grid_x = "(ProblemSize[2] + BLOCK_M - 1) // BLOCK_M",
    .kt_restrictions = mma_kt_restrictions,
    .n_paths = 2,
    .paths = {"q_in_regs", "lookahead"},
    .path = mma_path,
    .build_cost = mma_build_cost,
};
