/* traits.h - the traits of the `wgmma` kernel family (Hopper, sm_90a): its axes, the shared memory
 * one point needs, and the static rules a planner must enforce before it compiles a point.
 *
 * Pure arithmetic, usable from C (planner) and from the CUDA template (the launch asks
 * exactly fa_wg_smem_bytes()). Axes, named as the template parameters:
 *   HEAD_DIM     64, 128 or 256
 *   BLOCK_M      query rows per CTA = 64 x CONSUMER_WG (one wgmma M=64 slab per consumer
 *                warpgroup), or 64 with PIPELINE 5 (the warpgroups share one slab)
 *   BLOCK_N      keys per tile, the N of S = Q K^T: a multiple of 16 in 64..256 for which a
 *                wgmma wrapper exists (wgmma_ops.h: 64, 80, 96, 128, 160, 176, 192, 256)
 *   CONSUMER_WG  consumer warpgroups (1..3); plus one producer warpgroup issuing TMA
 *   STAGES       depth of the K/V shared-memory ring (>= 2)
 *   PIPELINE     0: S, softmax, PV in turn; 1: intra-warpgroup overlap (Q K^T of tile j+1
 *                and P V of tile j in flight under the softmax of tile j+1); 2: 1 plus
 *                the inter-warpgroup ping-pong (consumer warpgroups take turns issuing
 *                their GEMMs through named barriers; needs CONSUMER_WG >= 2); 3: the
 *                ping-pong alone (per turn: S of tile j and P V of tile j-1 issued together
 *                and both waited before the softmax: one P tile, fits 3 consumers at D=64);
 *                4: like 2 but FA3's register use: the softmax writes fp32 P over S under
 *                the running P V, packed to the one fp16 P tile once that P V is done;
 *                5 (FA_WG_SPLIT): the key split: both consumer warpgroups (exactly 2) take
 *                the same 64 query rows and alternate key tiles (tile j to warpgroup j % 2),
 *                each in turn as 0 does; one combines the other's running max, sum and O
 *                through the drained K/V ring before the epilogue. Twice the warpgroups
 *                per query row: for problems whose CTAs do not fill the GPU
 * The TMA swizzle is fixed at 128 B (a 64-element fp16 row per swizzle atom), not an axis.
 * Config text: "d64.m128.n128.c2.s2.p2" (d m n c s p). In fa_config (kernels/fa_config.h)
 * HEAD_DIM is head_dim and the five axes are axis[WG_BLOCK_M .. WG_PIPELINE]. The family's
 * description: wgmma.c.
 */
#ifndef FA_WG_TRAITS_H
#define FA_WG_TRAITS_H

/* The wgmma family's index in the family table (kernels/family.c): what its registry
 * entries (FA_WG_INSTANCE) put in fa_config.family. Append-only, like the table. */
#define FA_FAMILY_WGMMA 1

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define FA_WG_HD __host__ __device__
#else
#define FA_WG_HD
#endif
#ifdef __cplusplus
#define FA_WG_PURE constexpr FA_WG_HD inline
#else
#define FA_WG_PURE static inline
#endif

/* The wgmma family's axes: their indices in fa_config.axis (wgmma.c's table
 * names them in this order). */
enum { WG_BLOCK_M, WG_BLOCK_N, WG_CONSUMER_WG, WG_STAGES, WG_PIPELINE };

/* Constants of the design. */
#define FA_WG_ROWS_PER_WG 64        /* wgmma M: query rows per consumer warpgroup */
#define FA_WG_SUB_COLS 64           /* head-dim columns per swizzled sub-tile (and TMA box) */
#define FA_WG_ALIGN 1024            /* every tile starts on a swizzle-atom (8 x 128 B) boundary */
#define FA_WG_SMEM_OPTIN_MAX 232448 /* H100/H200 per-block opt-in limit: 227 KB */
#define FA_WG_TMA_BOX_MAX 256       /* TMA box extent limit per dimension */

/* Threads per CTA: the producer warpgroup plus the consumers. */
FA_WG_PURE int fa_wg_threads(int consumer_wg)
{
    return (consumer_wg + 1) * 128;
}

/* Bytes of one [rows x head_dim] fp16 tile. */
FA_WG_PURE long fa_wg_tile_bytes(int rows, int head_dim)
{
    return (long)rows * head_dim * 2;
}

/* Shared memory every point holds: 1 KB of slack to align the base to 1024 B, Q, STAGES
 * K tiles and STAGES V tiles, and the mbarriers (Q full, Q empty; K full, V full, K empty,
 * V empty per stage; 8 B each). */
FA_WG_PURE long fa_wg_smem_core(int head_dim, int block_m, int block_n, int stages)
{
    return FA_WG_ALIGN + fa_wg_tile_bytes(block_m, head_dim) +
           2L * stages * fa_wg_tile_bytes(block_n, head_dim) + 8L * (2 + 4 * stages);
}

/* Register split by setmaxnreg (multiples of 8, sum over the CTA <= 64 K): the producer
 * warpgroup drops to PRODUCER_REGS, consumers rise to fa_wg_consumer_regs. */
#define FA_WG_PRODUCER_REGS 24
FA_WG_PURE int fa_wg_consumer_regs(int consumer_wg)
{
    return consumer_wg == 1 ? 240 : consumer_wg == 2 ? 240 : 160;
}

/* PIPELINE 5: the key split (see the top comment). */
#define FA_WG_SPLIT 5
#define FA_WG_PIPELINE_MAX 5

/* FA_WG_PERSISTENT 1 (the default): a launch without the key split starts at most one CTA
 * per resident slot (SMs x occupancy), and each CTA takes the units of work blockIdx.x,
 * blockIdx.x + gridDim.x, ...: the next tile's Q and first K/V copies run under the last
 * P V and the epilogue of the current one (flash_fwd_wgmma.cuh: Sched, Producer, Epilogue).
 * A unit is one query tile, or with FA_WG_CAUSAL_PAIRS (1, the default) and a causal
 * problem of at least two tiles per slot two: a slice's longest and shortest remaining
 * rows, the same work in every unit, so a static round robin stays balanced. A causal
 * problem of fewer tiles, or without pairs, gets one CTA per tile (unequal tiles are
 * balanced by the hardware's dispatch, not by a static round robin). 0 gives one tile per
 * CTA (the launch before), for an A/B (scripts/bench_kernel_ab.sh). */
#ifndef FA_WG_PERSISTENT
#define FA_WG_PERSISTENT 1
#endif
#ifndef FA_WG_CAUSAL_PAIRS
#define FA_WG_CAUSAL_PAIRS 1
#endif

/* CTAs of a launch of `tiles` query tiles where `slots` CTAs are resident at once. */
FA_WG_PURE long fa_wg_ctas(int pipeline, int causal, long tiles, long slots)
{
    if (!FA_WG_PERSISTENT || pipeline == FA_WG_SPLIT || slots < 1 || tiles <= slots)
        return tiles;
    if (!causal)
        return slots;
    return FA_WG_CAUSAL_PAIRS && tiles >= 2 * slots ? slots : tiles;
}

/* Query tiles per unit of work (Sched) of a launch of `ctas` CTAs for `tiles` tiles: pairs
 * exactly where fa_wg_ctas chose them (a causal problem, two tiles per CTA or more). */
FA_WG_PURE int fa_wg_unit_tiles(int pipeline, int causal, long tiles, long ctas)
{
    return FA_WG_PERSISTENT && FA_WG_CAUSAL_PAIRS && causal && pipeline != FA_WG_SPLIT &&
                   tiles >= 2 * ctas
               ? 2
               : 1;
}

/* Whether the persistent kernel's epilogue stages O in a tile of its own (a BLOCK_M x
 * HEAD_DIM tile after the K/V ring): where that fits the opt-in limit. Q is then free
 * for the next tile's copy once the last Q K^T is done; otherwise O is staged through the
 * Q tile and Q is freed after the epilogue. (Direct 4-B stores from the accumulators were
 * measured 12 % slower at 4,8,512,64: kernels/NOTES-perf.md.) */
FA_WG_PURE int fa_wg_o_own(int head_dim, int block_m, int block_n, int stages)
{
    return FA_WG_PERSISTENT && fa_wg_smem_core(head_dim, block_m, block_n, stages) +
                                       fa_wg_tile_bytes(block_m, head_dim) <=
                                   FA_WG_SMEM_OPTIN_MAX;
}

/* Dynamic shared memory of a point: the core and, where fa_wg_o_own, the O tile. The
 * persistent kernel's launch asks exactly this, a one-tile launch fa_wg_smem_core. */
FA_WG_PURE long fa_wg_smem_bytes(int head_dim, int block_m, int block_n, int stages)
{
    return fa_wg_smem_core(head_dim, block_m, block_n, stages) +
           (fa_wg_o_own(head_dim, block_m, block_n, stages) ? fa_wg_tile_bytes(block_m, head_dim)
                                                            : 0);
}

/* Consumer registers per thread a point needs, roughly (see fa_wg_valid): one P tile
 * unless a P V is in flight under the softmax (PIPELINE 1, 2, 4). */
FA_WG_PURE int fa_wg_regs_estimate(int head_dim, int block_n, int pipeline)
{
    return block_n / 2 + head_dim / 2 +
           (pipeline == 1 || pipeline == 2 || pipeline == 4 ? 2 : 1) * (block_n / 4) + 24;
}

/* The planner's rules, one function each, in the order the planner applies them (the
 * family's description, wgmma.c, turns each into a reject reason with its numbers). */

/* HEAD_DIM: TMA needs the global row pitch head_dim*2 B to be a multiple of 16, and each
 * 64-column box row (64 x 2 B) to be exactly the 128 B swizzle span. */
FA_WG_PURE int fa_wg_head_dim_ok(int head_dim)
{
    return (head_dim == 64 || head_dim == 128 || head_dim == 256) && (head_dim * 2) % 16 == 0 &&
           head_dim % FA_WG_SUB_COLS == 0;
}

/* One 64-row wgmma slab per consumer warpgroup, 1 to 3 of them; with the key split
 * (PIPELINE 5) one slab the warpgroups share. */
FA_WG_PURE int fa_wg_rows_ok(int block_m, int consumer_wg, int pipeline)
{
    return consumer_wg >= 1 && consumer_wg <= 3 &&
           block_m == FA_WG_ROWS_PER_WG * (pipeline == FA_WG_SPLIT ? 1 : consumer_wg);
}

/* BLOCK_N: S = Q K^T is one wgmma of N = BLOCK_N (wgmma_ops.h has these N), and the TMA
 * box of a K/V tile (BLOCK_N rows) and of Q (BLOCK_M rows) is at most 256 rows. */
FA_WG_PURE int fa_wg_n_ok(int block_n)
{
    return block_n == 64 || block_n == 80 || block_n == 96 || block_n == 128 || block_n == 160 ||
           block_n == 176 || block_n == 192 || block_n == 256;
}
FA_WG_PURE int fa_wg_box_ok(int block_m, int block_n)
{
    return block_m <= FA_WG_TMA_BOX_MAX && block_n <= FA_WG_TMA_BOX_MAX;
}

/* Registers: S (BLOCK_N/2), O (HEAD_DIM/2) fp32 and P (BLOCK_N/4) per thread must fit the
 * consumer budget with 24 to spare; P counts twice when a P V is in flight under the
 * softmax (1, 2, and 4: ptxas keeps the in-flight P alive). Calibrated on the nvcc 13.0
 * build (NOTES.md): every point this admits that was built spilled at most 20 B in its
 * one-tile kernel (the persistent kernel's: README.md, "Spills"); the
 * rejected d64.m192.n128.c3.p4 (184 B of local memory) and d128.m128.n176.c2.p4 (192 B)
 * were slower than their neighbours. */
FA_WG_PURE int fa_wg_regs_ok(int head_dim, int block_n, int consumer_wg, int pipeline)
{
    return fa_wg_regs_estimate(head_dim, block_n, pipeline) <= fa_wg_consumer_regs(consumer_wg);
}

/* The ring needs two stages (K of tile j+1 loads while tile j computes); PIPELINE is 0..5,
 * the ping-pong (2, 3, 4) needs a second consumer warpgroup to alternate with, and the key
 * split (5) exactly two (the drained ring holds one warpgroup's O, max and sum) and an even
 * ring: tile j goes to slot j % STAGES and to warpgroup j % 2, so with an odd STAGES both
 * warpgroups use every slot, and one that runs a ring ahead waits on a slot's mbarrier for
 * a phase of the parity it wants that already completed, the phase before the one it
 * needs: it reads a tile not yet loaded (measured: NaN outputs, wrong results and launch
 * failures of d64/d128 .m64.n64/128.c2.s3.p5 in about one sweep of two; kernels/wgmma/
 * NOTES.md). With an even STAGES each slot belongs to one warpgroup, whose waits on it
 * come in phase order. */
FA_WG_PURE int fa_wg_pipeline_ok(int consumer_wg, int stages, int pipeline)
{
    return stages >= 2 && pipeline >= 0 && pipeline <= FA_WG_PIPELINE_MAX &&
           (pipeline < 2 || consumer_wg >= 2) &&
           (pipeline != FA_WG_SPLIT || (consumer_wg == 2 && stages % 2 == 0));
}

/* Whether a point may exist (1) or not (0): every rule above, then shared memory against
 * the opt-in limit of the only GPUs it runs on (the planner uses the space's limit). */
FA_WG_PURE int fa_wg_valid(int head_dim, int block_m, int block_n, int consumer_wg, int stages,
                           int pipeline)
{
    return fa_wg_head_dim_ok(head_dim) && fa_wg_rows_ok(block_m, consumer_wg, pipeline) &&
           fa_wg_n_ok(block_n) && fa_wg_box_ok(block_m, block_n) &&
           fa_wg_regs_ok(head_dim, block_n, consumer_wg, pipeline) &&
           fa_wg_pipeline_ok(consumer_wg, stages, pipeline) &&
           fa_wg_smem_bytes(head_dim, block_m, block_n, stages) <= FA_WG_SMEM_OPTIN_MAX;
}

#ifdef __cplusplus
}
#endif
#endif /* FA_WG_TRAITS_H */
