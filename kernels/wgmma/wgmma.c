/* wgmma.c - the wgmma family's description (kernels/family.h): its name,
 * axes, config text, the planner's rules and its registry entry. The
 * arithmetic the rules use is the template's own (traits.h), so a point the
 * planner admits is one the template's static_assert admits, and the shared
 * memory it rejects on is what the launch asks for.
 *
 * A config's axis[] holds the axes in the table's order (traits.h's WG_*
 * indices): BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE. The code runs on sm_90a only (wgmma,
 * setmaxnreg, TMA): family.h's arch fields say so, the planner rejects every
 * point of a space whose target is another architecture, and the build
 * compiles its instances for sm_90a only (scripts/geninst.c, Makefile). */
#include "traits.h"

#include <stdio.h>
#include <string.h>

#include "../family.h"

static int wg_threads(const fa_config *c)
{
    return fa_wg_threads(c->axis[WG_CONSUMER_WG]);
}

static long wg_smem(const fa_config *c)
{
    return fa_wg_smem_bytes(c->head_dim, c->axis[WG_BLOCK_M], c->axis[WG_BLOCK_N],
                            c->axis[WG_STAGES]);
}

/* What every launch of the point holds (Q, the K/V ring, the mbarriers): the
 * smem rule's number. The persistent kernel's O tile comes on top only where
 * it fits the opt-in limit of every sm_90 GPU (fa_wg_o_own), so it never
 * decides whether a point exists. */
static long wg_smem_core(const fa_config *c)
{
    return fa_wg_smem_core(c->head_dim, c->axis[WG_BLOCK_M], c->axis[WG_BLOCK_N],
                           c->axis[WG_STAGES]);
}

/* First failing rule wins, in traits.h's order; shared memory last, against
 * the space's limit (the device's opt-in limit on a Hopper target). */
static int wg_check(const fa_config *c, long smem_limit)
{
    if (!fa_wg_head_dim_ok(c->head_dim))
        return FA_REJ_HEAD_DIM;
    if (!fa_wg_rows_ok(c->axis[WG_BLOCK_M], c->axis[WG_CONSUMER_WG], c->axis[WG_PIPELINE]))
        return FA_REJ_WARP_ROWS;
    if (!fa_wg_n_ok(c->axis[WG_BLOCK_N]) || !fa_wg_box_ok(c->axis[WG_BLOCK_M], c->axis[WG_BLOCK_N]))
        return FA_REJ_TILE;
    if (!fa_wg_pipeline_ok(c->axis[WG_CONSUMER_WG], c->axis[WG_STAGES], c->axis[WG_PIPELINE]))
        return FA_REJ_PIPELINE;
    if (!fa_wg_regs_ok(c->head_dim, c->axis[WG_BLOCK_N], c->axis[WG_CONSUMER_WG],
                       c->axis[WG_PIPELINE]))
        return FA_REJ_REGS;
    if (wg_smem_core(c) > smem_limit || wg_smem_core(c) > FA_WG_SMEM_OPTIN_MAX)
        return FA_REJ_SMEM;
    return FA_REJ_OK;
}

static int wg_tile_text(const fa_config *c, char *buf, unsigned long n)
{
    if (!fa_wg_n_ok(c->axis[WG_BLOCK_N]))
        return snprintf(buf, n,
                        "BLOCK_N %d has no wgmma m64nNk16 wrapper (N = 64, 80, 96, 128, 160, 176, "
                        "192, 256)",
                        c->axis[WG_BLOCK_N]);
    return snprintf(buf, n, "TMA box of %d rows is over the %d-row limit",
                    c->axis[WG_BLOCK_M] > c->axis[WG_BLOCK_N] ? c->axis[WG_BLOCK_M]
                                                              : c->axis[WG_BLOCK_N],
                    FA_WG_TMA_BOX_MAX);
}

static int wg_pipeline_text(const fa_config *c, char *buf, unsigned long n)
{
    if (c->axis[WG_STAGES] < 2)
        return snprintf(buf, n, "STAGES %d: the TMA ring needs at least 2 stages",
                        c->axis[WG_STAGES]);
    if (c->axis[WG_PIPELINE] < 0 || c->axis[WG_PIPELINE] > FA_WG_PIPELINE_MAX)
        return snprintf(buf, n, "PIPELINE %d unknown (0 to %d)", c->axis[WG_PIPELINE],
                        FA_WG_PIPELINE_MAX);
    if (c->axis[WG_PIPELINE] == FA_WG_SPLIT && c->axis[WG_CONSUMER_WG] != 2)
        return snprintf(buf, n,
                        "PIPELINE %d splits the keys between exactly 2 consumer warpgroups, got "
                        "%d",
                        FA_WG_SPLIT, c->axis[WG_CONSUMER_WG]);
    if (c->axis[WG_PIPELINE] == FA_WG_SPLIT)
        return snprintf(buf, n,
                        "PIPELINE %d needs an even STAGES, got %d (its 2 warpgroups alternate "
                        "key tiles: with an odd ring both use every slot and one can wait on a "
                        "slot's stale mbarrier phase)",
                        FA_WG_SPLIT, c->axis[WG_STAGES]);
    return snprintf(buf, n,
                    "PIPELINE %d is a ping-pong between consumer warpgroups: needs CONSUMER_WG "
                    ">= 2, got %d",
                    c->axis[WG_PIPELINE], c->axis[WG_CONSUMER_WG]);
}

static int wg_reject_text(int reason, const fa_config *c, long smem_limit, char *buf,
                          unsigned long n)
{
    const long smem = wg_smem_core(c);
    switch (reason) {
    case FA_REJ_HEAD_DIM:
        return snprintf(buf, n,
                        "head_dim %d unsupported (64, 128, 256: whole 128-B TMA swizzle rows)",
                        c->head_dim);
    case FA_REJ_WARP_ROWS:
        if (c->axis[WG_PIPELINE] == FA_WG_SPLIT)
            return snprintf(buf, n,
                            "BLOCK_M %d is not 64 (PIPELINE %d: the consumer warpgroups share one "
                            "64-row slab)",
                            c->axis[WG_BLOCK_M], FA_WG_SPLIT);
        return snprintf(buf, n,
                        "BLOCK_M %d is not 64 x CONSUMER_WG (%d consumer warpgroups of 64 rows, "
                        "1 to 3)",
                        c->axis[WG_BLOCK_M], c->axis[WG_CONSUMER_WG]);
    case FA_REJ_TILE:
        return wg_tile_text(c, buf, n);
    case FA_REJ_PIPELINE:
        return wg_pipeline_text(c, buf, n);
    case FA_REJ_REGS:
        return snprintf(buf, n,
                        "needs about %d registers per consumer thread, the budget with %d "
                        "consumer warpgroups is %d (it would spill)",
                        fa_wg_regs_estimate(c->head_dim, c->axis[WG_BLOCK_N], c->axis[WG_PIPELINE]),
                        c->axis[WG_CONSUMER_WG], fa_wg_consumer_regs(c->axis[WG_CONSUMER_WG]));
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

/* "(v1, v2, ...)": the values 0..hi that ok(v) accepts, as a Python tuple. */
static void wg_kt_tuple(int hi, int (*ok)(int), char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "(");
    for (int v = 0; v <= hi && used < n; v++)
        if (ok(v))
            used += (size_t)snprintf(buf + used, n - used, "%s%d", used > 1 ? ", " : "", v);
    if (used < n)
        snprintf(buf + used, n - used, ")");
}

/* The consumer warpgroup counts the rows rule allows (BLOCK_M = 64 x it). */
static int wg_kt_cw_ok(int cw)
{
    return fa_wg_rows_ok(FA_WG_ROWS_PER_WG * cw, cw, 0);
}

static int wg_kt_n_ok(int n)
{
    return fa_wg_n_ok(n);
}

/* wg_check's rules as Kernel Tuner restrictions (family.h), one per rule
 * in its order, from the same traits: HEAD_DIM the problem's (a constant
 * here), the sets of CONSUMER_WG and BLOCK_N the traits accept, the
 * register estimate and budget, the shared memory the launch asks against
 * the space's limit and the opt-in limit. The thread count is 128 x
 * (CONSUMER_WG + 1): the producer warpgroup and the consumers. */
static int wg_kt_restrictions(int head_dim, long smem_limit, char (*out)[FA_KT_RESTRICTION_LEN],
                              int max)
{
    if (max < FA_KT_MAX_RESTRICTIONS || !fa_wg_head_dim_ok(head_dim))
        return -1;
    char cws[32], ns[96];
    wg_kt_tuple(8, wg_kt_cw_ok, cws, sizeof cws);
    wg_kt_tuple(FA_WG_TMA_BOX_MAX, wg_kt_n_ok, ns, sizeof ns);
    const long row = fa_wg_tile_bytes(1, head_dim);
    const long limit = smem_limit < FA_WG_SMEM_OPTIN_MAX ? smem_limit : FA_WG_SMEM_OPTIN_MAX;
    int n = 0;
    snprintf(out[n++], FA_KT_RESTRICTION_LEN,
             "BLOCK_M == %d*(1 if PIPELINE == %d else CONSUMER_WG) and CONSUMER_WG in %s",
             FA_WG_ROWS_PER_WG, FA_WG_SPLIT, cws);
    snprintf(out[n++], FA_KT_RESTRICTION_LEN, "BLOCK_N in %s", ns);
    snprintf(out[n++], FA_KT_RESTRICTION_LEN, "BLOCK_M <= %d and BLOCK_N <= %d", FA_WG_TMA_BOX_MAX,
             FA_WG_TMA_BOX_MAX);
    snprintf(out[n++], FA_KT_RESTRICTION_LEN,
             "STAGES >= 2 and PIPELINE >= 0 and PIPELINE <= %d and (PIPELINE < 2 or "
             "CONSUMER_WG >= 2) and (PIPELINE != %d or (CONSUMER_WG == 2 and STAGES %% 2 == 0))",
             FA_WG_PIPELINE_MAX, FA_WG_SPLIT);
    snprintf(out[n++], FA_KT_RESTRICTION_LEN,
             "BLOCK_N//2 + (2 if PIPELINE in (1, 2, 4) else 1)*(BLOCK_N//4) + %d <= (%d if "
             "CONSUMER_WG == 1 else %d if CONSUMER_WG == 2 else %d)",
             fa_wg_regs_estimate(head_dim, 0, 0), fa_wg_consumer_regs(1), fa_wg_consumer_regs(2),
             fa_wg_consumer_regs(3));
    /* fa_wg_smem_core (wg_smem_core) */
    snprintf(out[n++], FA_KT_RESTRICTION_LEN,
             "%d + BLOCK_M*%ld + 2*STAGES*BLOCK_N*%ld + 8*(2 + 4*STAGES) <= %ld", FA_WG_ALIGN, row,
             row, limit);
    return n;
}

/* Derived paths: whether a P V runs under the softmax (PIPELINE 1, 2, 4)
 * and whether the consumer warpgroups take turns on the tensor cores
 * (PIPELINE 2, 3, 4). */
static int wg_path(const fa_config *c, int i)
{
    const int p = c->axis[WG_PIPELINE];
    return i == 0 ? (p == 1 || p == 2 || p == 4) : i == 1 ? (p >= 2 && p <= 4) : 0;
}

const fa_family wgmma_family = {
    .name = "wgmma",
    .summary = "FlashAttention-3-style forward for Hopper: TMA + mbarrier ring, warp "
               "specialisation, wgmma",
    .header = "kernels/wgmma/flash_fwd_wgmma.cuh",
    .instance_macro = "FA_WG_INSTANCE",
    .kernel_name = "fa_wgmma_kernel",
    .axes = {{"HEAD_DIM", NULL, NULL, 0, 0, 0, 0, "d"}, /* the problem's; the rules check it */
             {"BLOCK_M", "64, 128 or 192 (64 x CONSUMER_WG)", NULL, 64, 192, 64, 0, "m"},
             {"BLOCK_N", "a multiple of 16 from 64 to 256", NULL, 64, 256, 16, 0, "n"},
             {"CONSUMER_WG", "1, 2 or 3 consumer warpgroups", NULL, 1, 3, 1, 0, "c"},
             {"STAGES", "an integer from 2 to 8", NULL, 2, 8, 1, 0, "s"},
             {"PIPELINE", "an integer from 0 to 5", NULL, 0, FA_WG_PIPELINE_MAX, 1, 0, "p"}},
    .text_example = "d64.m128.n128.c2.s2.p2",
    .arch = 90,
    .arch_name = "sm_90a",
    .arch_why = "wgmma, TMA",
    .check = wg_check,
    .reject_text = wg_reject_text,
    .rule = {[FA_REJ_HEAD_DIM] = "HEAD_DIM is 64, 128 or 256 (whole 128-B TMA swizzle rows)",
             [FA_REJ_WARP_ROWS] = "BLOCK_M = 64 x CONSUMER_WG, 1 to 3 consumer warpgroups (one "
                                  "64-row wgmma slab each; one slab they share with PIPELINE "
                                  "5)",
             [FA_REJ_TILE] = "BLOCK_N has a wgmma m64nNk16 wrapper and every TMA box is at most "
                             "256 rows",
             [FA_REJ_PIPELINE] = "STAGES >= 2, PIPELINE 0 to 5, a ping-pong (PIPELINE 2, 3, 4) "
                                 "has CONSUMER_WG >= 2 and the key split (5) exactly 2 and an "
                                 "even STAGES",
             [FA_REJ_REGS] = "the registers per consumer thread fit the setmaxnreg budget (it "
                             "would spill)",
             [FA_REJ_SMEM] = "1 KB + Q + 2 x STAGES K/V tiles + mbarriers fit the space's shared "
                             "memory and the 227-KB opt-in limit"},
    .smem_bytes = wg_smem,
    .threads = wg_threads,
    .symbol_prefix = "fa_wg_inst_",
    .kt_block_x = "128*(CONSUMER_WG + 1)",
    .kt_grid_x = "(ProblemSize[2] + BLOCK_M - 1) // BLOCK_M",
    .kt_restrictions = wg_kt_restrictions,
    .n_paths = 2,
    .paths = {"pv_overlap", "ping_pong"},
    .path = wg_path,
};
