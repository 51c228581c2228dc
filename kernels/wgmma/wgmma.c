/* wgmma.c - the wgmma family's description (kernels/family.h): its name,
 * axes, config text, the planner's rules and its registry entry. The
 * arithmetic the rules use is the template's own (traits.h), so a point the
 * planner admits is one the template's static_assert admits, and the shared
 * memory it rejects on is what the launch asks for.
 *
 * The six config slots hold the axes in order: head_dim = HEAD_DIM,
 * block_m = BLOCK_M, block_n = BLOCK_N, num_warps = CONSUMER_WG, stages =
 * STAGES, swizzle = PIPELINE. The code runs on sm_90a only (wgmma,
 * setmaxnreg, TMA): family.h's arch fields say so, the planner rejects every
 * point of a space whose target is another architecture, and the build
 * compiles its instances for sm_90a only (scripts/geninst.c, Makefile). */
#include "traits.h"

#include <stdio.h>
#include <string.h>

#include "../family.h"

static int wg_format(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "d%d.m%d.n%d.c%d.s%d.p%d", c->head_dim, c->block_m, c->block_n,
                    c->num_warps, c->stages, c->swizzle);
}

static int wg_parse(const char *s, fa_config *c)
{
    fa_config t = {0};
    int used = 0;
    if (sscanf(s, "d%d.m%d.n%d.c%d.s%d.p%d%n", &t.head_dim, &t.block_m, &t.block_n, &t.num_warps,
               &t.stages, &t.swizzle, &used) != 6 ||
        s[used] != '\0')
        return -1;
    /* Round trip: rejects leading zeros, signs and spaces sscanf accepts. */
    char back[64];
    wg_format(&t, back, sizeof back);
    if (strcmp(back, s) != 0)
        return -1;
    *c = t;
    return 0;
}

static long wg_smem(const fa_config *c)
{
    return fa_wg_smem_bytes(c->head_dim, c->block_m, c->block_n, c->stages);
}

/* First failing rule wins, in traits.h's order; shared memory last, against
 * the space's limit (the device's opt-in limit on a Hopper target). */
static int wg_check(const fa_config *c, long smem_limit)
{
    if (!fa_wg_head_dim_ok(c->head_dim))
        return FA_REJ_HEAD_DIM;
    if (!fa_wg_rows_ok(c->block_m, c->num_warps))
        return FA_REJ_WARP_ROWS;
    if (!fa_wg_n_ok(c->block_n) || !fa_wg_box_ok(c->block_m, c->block_n))
        return FA_REJ_TILE;
    if (!fa_wg_pipeline_ok(c->num_warps, c->stages, c->swizzle))
        return FA_REJ_PIPELINE;
    if (!fa_wg_regs_ok(c->head_dim, c->block_n, c->num_warps, c->swizzle))
        return FA_REJ_REGS;
    if (wg_smem(c) > smem_limit || wg_smem(c) > FA_WG_SMEM_OPTIN_MAX)
        return FA_REJ_SMEM;
    return FA_REJ_OK;
}

static int wg_tile_text(const fa_config *c, char *buf, unsigned long n)
{
    if (!fa_wg_n_ok(c->block_n))
        return snprintf(buf, n,
                        "BLOCK_N %d has no wgmma m64nNk16 wrapper (N = 64, 96, 128, 160, 176, "
                        "192, 256)",
                        c->block_n);
    return snprintf(buf, n, "TMA box of %d rows is over the %d-row limit",
                    c->block_m > c->block_n ? c->block_m : c->block_n, FA_WG_TMA_BOX_MAX);
}

static int wg_pipeline_text(const fa_config *c, char *buf, unsigned long n)
{
    if (c->stages < 2)
        return snprintf(buf, n, "STAGES %d: the TMA ring needs at least 2 stages", c->stages);
    if (c->swizzle < 0 || c->swizzle > 4)
        return snprintf(buf, n, "PIPELINE %d unknown (0 to 4)", c->swizzle);
    return snprintf(buf, n,
                    "PIPELINE %d is a ping-pong between consumer warpgroups: needs CONSUMER_WG "
                    ">= 2, got %d",
                    c->swizzle, c->num_warps);
}

static int wg_reject_text(int reason, const fa_config *c, long smem_limit, char *buf,
                          unsigned long n)
{
    const long smem = wg_smem(c);
    switch (reason) {
    case FA_REJ_HEAD_DIM:
        return snprintf(buf, n, "head_dim %d unsupported (64, 128: whole 128-B TMA swizzle rows)",
                        c->head_dim);
    case FA_REJ_WARP_ROWS:
        return snprintf(buf, n,
                        "BLOCK_M %d is not 64 x CONSUMER_WG (%d consumer warpgroups of 64 rows, "
                        "1 to 3)",
                        c->block_m, c->num_warps);
    case FA_REJ_TILE:
        return wg_tile_text(c, buf, n);
    case FA_REJ_PIPELINE:
        return wg_pipeline_text(c, buf, n);
    case FA_REJ_REGS:
        return snprintf(buf, n,
                        "needs about %d registers per consumer thread, the budget with %d "
                        "consumer warpgroups is %d (it would spill)",
                        fa_wg_regs_estimate(c->head_dim, c->block_n, c->swizzle), c->num_warps,
                        fa_wg_consumer_regs(c->num_warps));
    case FA_REJ_SMEM:
        if (smem > smem_limit)
            return snprintf(buf, n, "needs %ld B of shared memory, the space allows %ld B", smem,
                            smem_limit);
        return snprintf(buf, n,
                        "needs %ld B of shared memory, over the %d-B per-block opt-in limit "
                        "of sm_90",
                        smem, FA_WG_SMEM_OPTIN_MAX);
    default:
        return snprintf(buf, n, "%s", "");
    }
}

static int wg_instance(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "FA_WG_INSTANCE(%d, %d, %d, %d, %d, %d)", c->head_dim, c->block_m,
                    c->block_n, c->num_warps, c->stages, c->swizzle);
}

/* The name FA_WG_INSTANCE gives the entry (flash_fwd_wgmma.cuh). */
static int wg_symbol(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "fa_wg_inst_d%d_m%d_n%d_c%d_s%d_p%d", c->head_dim, c->block_m,
                    c->block_n, c->num_warps, c->stages, c->swizzle);
}

/* Derived paths: whether a P V runs under the softmax (PIPELINE 1, 2, 4)
 * and whether the consumer warpgroups take turns on the tensor cores
 * (PIPELINE 2, 3, 4). */
static int wg_path(const fa_config *c, int i)
{
    const int p = c->swizzle;
    return i == 0 ? (p == 1 || p == 2 || p == 4) : i == 1 ? (p >= 2 && p <= 4) : 0;
}

const fa_family wgmma_family = {
    .name = "wgmma",
    .summary = "FlashAttention-3-style forward for Hopper: TMA + mbarrier ring, warp "
               "specialisation, wgmma",
    .header = "kernels/wgmma/flash_fwd_wgmma.cuh",
    .instance_macro = "FA_WG_INSTANCE",
    .kernel_name = "fa_wgmma_kernel",
    .axes = {{"HEAD_DIM", NULL, NULL, 0, 0, 0, 0}, /* the problem's; the rules check it */
             {"BLOCK_M", "64, 128 or 192 (64 x CONSUMER_WG)", NULL, 64, 192, 64, 0},
             {"BLOCK_N", "a multiple of 16 from 64 to 256", NULL, 64, 256, 16, 0},
             {"CONSUMER_WG", "1, 2 or 3 consumer warpgroups", NULL, 1, 3, 1, 0},
             {"STAGES", "an integer from 2 to 8", NULL, 2, 8, 1, 0},
             {"PIPELINE", "an integer from 0 to 4", NULL, 0, 4, 1, 0}},
    .text_example = "d64.m128.n128.c2.s2.p2",
    .arch = 90,
    .arch_name = "sm_90a",
    .arch_why = "wgmma, TMA",
    .format = wg_format,
    .parse = wg_parse,
    .check = wg_check,
    .reject_text = wg_reject_text,
    .smem_bytes = wg_smem,
    .instance = wg_instance,
    .symbol = wg_symbol,
    .n_paths = 2,
    .paths = {"pv_overlap", "ping_pong"},
    .path = wg_path,
};
