/* mma.c - the mma family's description (kernels/family.h): its name, axes,
 * config text, the planner's rules and its registry entry. The arithmetic
 * the rules use is the template's own (mma.h).
 *
 * The rules mirror what the template assumes (flash_fwd.cuh): each warp
 * owns whole 16-row mma tiles of Q, every thread copies the same number of
 * 16-byte cp.async chunks of each tile, and the shared memory the launch
 * asks for (fa_smem_bytes, the same function) fits the target. */
#include "mma.h"

#include <stdio.h>
#include <string.h>

#include "../family.h"

static int mma_format(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "d%d.m%d.n%d.w%d.s%d.z%d", c->head_dim, c->block_m, c->block_n,
                    c->num_warps, c->stages, c->swizzle);
}

static int mma_parse(const char *s, fa_config *c)
{
    fa_config t = {0};
    int used = 0;
    if (sscanf(s, "d%d.m%d.n%d.w%d.s%d.z%d%n", &t.head_dim, &t.block_m, &t.block_n, &t.num_warps,
               &t.stages, &t.swizzle, &used) != 6 ||
        s[used] != '\0')
        return -1;
    /* Round trip: rejects leading zeros, signs and spaces sscanf accepts. */
    char back[64];
    mma_format(&t, back, sizeof back);
    if (strcmp(back, s) != 0)
        return -1;
    *c = t;
    return 0;
}

/* Threads per CTA, in long: a config built by hand (not from a space)
 * could overflow an int. */
static long mma_threads(const fa_config *c)
{
    return 32L * c->num_warps;
}

/* Whether a [rows x head_dim] tile splits into whole chunks per thread. */
static int mma_tile_splits(int rows, const fa_config *c)
{
    const long t = mma_threads(c);
    return t > 0 && fa_tile_chunks(rows, c->head_dim) % t == 0;
}

static int mma_check(const fa_config *c, long smem_limit)
{
    if (c->head_dim != 64 && c->head_dim != 128)
        return FA_REJ_HEAD_DIM;
    /* Non-positive sizes only come from hand-built configs; they cannot be
     * split into warps, and would divide by zero below. */
    if (c->num_warps <= 0 || c->block_m <= 0 || c->block_m % (FA_MMA_M * (long)c->num_warps) != 0)
        return FA_REJ_WARP_ROWS;
    if (c->block_n <= 0 || !mma_tile_splits(c->block_m, c) || !mma_tile_splits(c->block_n, c))
        return FA_REJ_CHUNKS;
    if (c->stages <= 0 || fa_smem_bytes(c) > smem_limit)
        return FA_REJ_SMEM;
    return FA_REJ_OK;
}

/* The chunk rule's text for whichever tile fails first (Q, then K/V). */
static int mma_chunks_text(const fa_config *c, char *buf, unsigned long n)
{
    const int q_ok = c->block_m > 0 && mma_tile_splits(c->block_m, c);
    const char *tile = q_ok ? "K/V" : "Q";
    const int rows = q_ok ? c->block_n : c->block_m;
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
        return snprintf(buf, n, "head_dim %d unsupported (64, 128)", c->head_dim);
    case FA_REJ_WARP_ROWS:
        return snprintf(buf, n,
                        "BLOCK_M %d is not a multiple of 16 x NUM_WARPS (%d warps need %ld rows)",
                        c->block_m, c->num_warps, FA_MMA_M * (long)c->num_warps);
    case FA_REJ_CHUNKS:
        return mma_chunks_text(c, buf, n);
    case FA_REJ_SMEM:
        return snprintf(buf, n, "needs %ld B of shared memory, the space allows %ld B",
                        fa_smem_bytes(c), smem_limit);
    default:
        return snprintf(buf, n, "%s", "");
    }
}

static long mma_smem(const fa_config *c)
{
    return fa_smem_bytes(c);
}

static int mma_instance(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "FA_INSTANCE(%d, %d, %d, %d, %d, %d)", c->head_dim, c->block_m,
                    c->block_n, c->num_warps, c->stages, c->swizzle);
}

/* The name FA_INSTANCE gives the entry (flash_fwd.cuh). */
static int mma_symbol(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "fa_inst_d%d_m%d_n%d_w%d_s%d_z%d", c->head_dim, c->block_m, c->block_n,
                    c->num_warps, c->stages, c->swizzle);
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
    .axes = {{"HEAD_DIM", NULL, NULL, 0, 0, 0, 0}, /* the problem's; the rules check it */
             {"BLOCK_M", "a positive integer multiple of 16", "a multiple of 16 of at most 512", 1,
              512, 16, 0},
             {"BLOCK_N", "a positive integer multiple of 16", "a multiple of 16 of at most 512", 1,
              512, 16, 0},
             {"NUM_WARPS", "a warp count of 1, 2, 4, 8 or 16", NULL, 1, 16, 1,
              (1u << 1) | (1u << 2) | (1u << 4) | (1u << 8) | (1u << 16)},
             {"STAGES", "an integer from 1 to 8", NULL, 1, 8, 1, 0},
             {"SWIZZLE", "0 or 1", NULL, 0, 1, 1, 0}},
    .text_example = "d64.m128.n64.w4.s2.z1",
    .format = mma_format,
    .parse = mma_parse,
    .check = mma_check,
    .reject_text = mma_reject_text,
    .smem_bytes = mma_smem,
    .instance = mma_instance,
    .symbol = mma_symbol,
    .n_paths = 2,
    .paths = {"q_in_regs", "lookahead"},
    .path = mma_path,
};
