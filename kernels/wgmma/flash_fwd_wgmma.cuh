// flash_fwd_wgmma.cuh - FlashAttention forward for Hopper (sm_90a): TMA + mbarrier ring,
// warp specialisation, wgmma. Same contract as kernels/mma/flash_fwd.cuh: fp16 Q, K, V, O
// [B, H, S, HEAD_DIM] contiguous, fp32 accumulation, any S >= 1, causal or not.
//
// CTA = 1 producer warpgroup (one thread issues every TMA) + CONSUMER_WG consumer
// warpgroups, each owning 64 query rows (BLOCK_M = 64 * CONSUMER_WG). setmaxnreg moves
// registers from the producer to the consumers.
//
// Shared memory (base aligned to 1024 B; every tile 1024-B aligned):
//   Q   [HEAD_DIM/64][BLOCK_M][64]          fp16, 128-B swizzle (TMA box 64 x BLOCK_M)
//   K   [STAGES][HEAD_DIM/64][BLOCK_N][64]  fp16, 128-B swizzle (TMA box 64 x BLOCK_N)
//   V   [STAGES][HEAD_DIM/64][BLOCK_N][64]  same
//   O   [HEAD_DIM/64][BLOCK_M][64]          the epilogue's staging tile, where it fits
//                                           (fa_wg_o_own; else the epilogue uses Q's)
//   mbarriers: q_full; k_full[STAGES], v_full[STAGES] (TMA transaction bytes);
//              q_empty, k_empty[STAGES], v_empty[STAGES] (one arrive per consumer warp)
// The global tensors are 3-D for TMA: (HEAD_DIM, S, B*H), so rows past S of a head are
// zero-filled by the copy engine, never the next head's rows.
//
// Work: query tile w = bh * m_blocks + m_block (Tile). A launch with more tiles than
// resident slots takes the persistent kernel (PERSIST): one CTA per slot, each taking the
// units of work blockIdx.x, blockIdx.x + gridDim.x, ... (Sched; a causal unit is a pair of
// tiles); every other launch one CTA per tile (fa_wg_ctas, traits.h). The K/V ring and its
// phases run on across a CTA's tiles. With an O tile of its own Q is freed
// once the tile's last S = Q K^T is done, so the next tile's Q and first K/V copies run
// under the last P V and the epilogue; else after the epilogue.
//
// Per key tile j, a consumer warpgroup computes S = Q K^T (wgmma m64nBLOCK_Nk16, A and B
// from shared memory, both K-major), masks the tail / causal triangle, runs the online
// softmax in fp32 with exp2 (scale pre-multiplied by log2 e), packs P to fp16 in registers
// as the A operand of O += P V (wgmma, B = V from shared memory, MN-major via trans-b).
// PIPELINE (traits.h): 0 = S, softmax, P V in turn; 1 = FA3's intra-warpgroup overlap
// (Q K^T of tile j and P V of tile j-1 both in flight while the softmax of tile j waits
// only for the former; two P register tiles); 2 = 1 + the inter-warpgroup ping-pong
// (named barriers 4+c: the consumer warpgroups take turns issuing their GEMMs); 3 = the
// ping-pong alone (both GEMMs waited before the softmax, one P tile); 4 = 2 with FA3's
// register use (fp32 P written over S, packed into the one P tile after the P V); 5 = the
// key split (BLOCK_M 64, two consumer warpgroups on the same rows, tile j to warpgroup
// j % 2, each as 0; Combine merges them): twice the warpgroups per query row, for
// problems whose CTAs do not fill the GPU.
#pragma once

#include <cuda.h> // CUtensorMap and the tensor-map enums only: nothing links libcuda
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

// kernels/ is on the include path (-Ikernels); a kernel variant has these beside it.
#include "fa_config.h"
#include "fa_device.cuh"
#include "fa_launch.h"
#include "traits.h"
#include "wgmma_ops.h"

// FA_WG_LAZY_RESCALE 1 (the default): the running max moves only by more than 2^8
// (Softmax::online), so O is rescaled only when a row of the warp moved: -3 % at
// 16,16,2048,64 and -4 % at 4,16,2048,128 on the H200 (kernels/NOTES-perf.md). 0 gives
// the eager rescale of every tile, for an A/B (scripts/bench_kernel_ab.sh).
#ifndef FA_WG_LAZY_RESCALE
#define FA_WG_LAZY_RESCALE 1
#endif

namespace fawg
{

// ---- PTX wrappers -------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` has completed (a fresh barrier counts its
// phase "1" as completed, so a producer's first wait on parity 1 passes at once).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred P1;\n"
                 "LAB_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
                 "@P1 bra DONE;\n"
                 "bra LAB_WAIT;\n"
                 "DONE:\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                            int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

__device__ __forceinline__ void wg_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wg_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Orders the compiler's reads/writes of accumulator registers against the asynchronous
// wgmma (as CUTLASS's warpgroup_fence_operand): a no-op that "rewrites" each register.
template <int N> __device__ __forceinline__ void fence_regs(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(r[i])::"memory");
}

template <int REGS> __device__ __forceinline__ void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

__device__ __forceinline__ void named_bar_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// wgmma shared-memory descriptor, 128-B swizzle. Byte offsets: lbo = leading-dimension
// byte offset, sbo = stride-dimension byte offset (8-row groups). Base offset 0: every
// tile is 1024-B aligned and a k-step moves the start by 32 B inside the atom (the
// hardware applies the XOR on the absolute address, as TMA wrote it).
// Built in two steps so that a GEMM's k-steps cost one add each: desc_word() is the low
// word of an operand's first k-step (start address in 16-B units, bits 0-13; lbo, bits
// 16-29), computed once per operand; desc() adds a k-step's byte offset to it and the
// constant high word (sbo, SWIZZLE_128B). A CTA's shared addresses are below 2^18, so the
// 14-bit start field never carries into lbo. (Built whole per k-step they cost four to five
// uniform instructions each: 542 -> 494 SASS instructions per unmasked D=128 key step; no
// measurable speed change, kernels/NOTES-perf.md.)
__device__ __forceinline__ uint32_t desc_word(uint32_t saddr, uint32_t lbo)
{
    return ((saddr & 0x3FFFF) >> 4) | (((lbo >> 4) & 0x3FFF) << 16);
}

__device__ __forceinline__ uint64_t desc(uint32_t word, uint32_t byte_off, uint32_t sbo)
{
    const uint32_t hi = ((sbo >> 4) & 0x3FFF) | (1u << 30); // bit 62: SWIZZLE_128B
    return ((uint64_t)hi << 32) | (word + (byte_off >> 4));
}

// The maximum of v[0..N) as a tree (log2 N dependent fmaxf, not N - 1); v is overwritten.
template <int N> __device__ __forceinline__ float tree_max(float *v)
{
    if constexpr (N == 1) {
        return v[0];
    } else {
        constexpr int H = (N + 1) / 2;
#pragma unroll
        for (int k = 0; k < N / 2; k++)
            v[k] = fmaxf(v[k], v[k + H]);
        return tree_max<H>(v);
    }
}

// x, through a copy the compiler cannot see through: what is computed from it is computed
// where it is used, not hoisted out of a loop and held (spilled) across it.
__device__ __forceinline__ int opaque(int x)
{
    asm volatile("mov.b32 %0, %0;\n" : "+r"(x));
    return x;
}

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
// ---- the pieces: FlashAttention-3's split (hopper/: mainloop, softmax, epilogue) -----------
//
// Cfg       the compile-time shape of one instance (tile sizes, accumulator counts)
// Smem      where each tile and mbarrier of the CTA lives
// Tile      which query rows and which (batch, head) this CTA computes
// Producer  the producer warpgroup: TMA copies of Q and the K/V ring
// Softmax   the online softmax's running max and sum of a consumer thread's two rows
// Mainloop  a consumer warpgroup's GEMMs over the key tiles, in the PIPELINE's order
// Combine   PIPELINE 5 (key split): one warpgroup's partial softmax merged into the other's
// Epilogue  O / l to global memory through the (then idle) Q tile
// fa_wgmma_kernel joins them; every piece is force-inlined, so the split costs nothing.

template <int HEAD_DIM_, int BLOCK_M_, int BLOCK_N_, int CONSUMER_WG_, int STAGES_, int PIPELINE_,
          int DT_, bool PERSIST_>
struct Cfg {
    static constexpr int HEAD_DIM = HEAD_DIM_, BLOCK_M = BLOCK_M_, BLOCK_N = BLOCK_N_;
    static constexpr int CONSUMER_WG = CONSUMER_WG_, STAGES = STAGES_, PIPELINE = PIPELINE_;
    static constexpr int DT = DT_; // FA_DTYPE_*: the element type of Q, K, V, P and O
    // The persistent kernel (CTAs of several tiles: fawg::launch picks it where fa_wg_ctas
    // starts fewer CTAs than tiles) or the one-tile-per-CTA kernel (every other launch).
    static constexpr bool PERSIST = PERSIST_;
    static constexpr int THREADS = fa_wg_threads(CONSUMER_WG);
    static constexpr int SUBS = HEAD_DIM / FA_WG_SUB_COLS;       // 64-column sub-tiles
    static constexpr uint32_t Q_BYTES = BLOCK_M * HEAD_DIM * 2;  // whole Q tile
    static constexpr uint32_t KV_BYTES = BLOCK_N * HEAD_DIM * 2; // one K (or V) tile
    static constexpr int NS = BLOCK_N / 2;                       // S accumulators / thread
    static constexpr int NO = HEAD_DIM / 2;                      // O accumulators / thread
    static constexpr int KP = BLOCK_N / 16;                      // k-steps of P V
    static constexpr int KQ = HEAD_DIM / 16;                     // k-steps of Q K^T
    // PIPELINE 5: the consumer warpgroups share one 64-row slab and alternate key tiles.
    static constexpr bool SPLIT = PIPELINE == FA_WG_SPLIT;
    static constexpr int ROW_WGS = SPLIT ? 1 : CONSUMER_WG; // warpgroups with rows of their own
    // The persistent kernel's staging tile is its own (Q is freed after the last Q K^T) or
    // Q's (Q is freed after the epilogue); a one-tile CTA stages through Q and frees nothing.
    static constexpr bool O_OWN = PERSIST && fa_wg_o_own(HEAD_DIM, BLOCK_M, BLOCK_N, STAGES);
    static constexpr bool Q_FREED_EARLY = O_OWN && !SPLIT;
    static constexpr bool Q_FREED_LATE = PERSIST && !O_OWN && !SPLIT;
    // Dynamic shared memory this kernel asks (fa_wg_smem_bytes holds the O tile where it fits).
    static constexpr long SMEM = PERSIST ? fa_wg_smem_bytes(HEAD_DIM, BLOCK_M, BLOCK_N, STAGES)
                                         : fa_wg_smem_core(HEAD_DIM, BLOCK_M, BLOCK_N, STAGES);
    static_assert(fa_wg_valid(HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE),
                  "invalid wgmma config (traits.h: fa_wg_valid)");
};

// Shared-memory addresses (the layout of the top comment): Q, the K and V rings, O (where
// C::O_OWN), then the mbarriers q_full, k_full[STAGES], v_full[STAGES], k_empty[STAGES],
// v_empty[STAGES], q_empty.
template <typename C> struct Smem {
    uint32_t q, k, v, bars;
    unsigned char *q_gen;     // generic pointer to the Q tile
    unsigned char *stage_gen; // the epilogue's staging tile: O's own, or Q's

    __device__ __forceinline__ explicit Smem(unsigned char *raw_ptr)
    {
        const uint32_t raw = smem_u32(raw_ptr);
        q = (raw + FA_WG_ALIGN - 1) & ~(uint32_t)(FA_WG_ALIGN - 1);
        q_gen = raw_ptr + (q - raw);
        k = q + C::Q_BYTES;
        v = k + C::STAGES * C::KV_BYTES;
        const uint32_t o = v + C::STAGES * C::KV_BYTES;
        stage_gen = C::O_OWN ? raw_ptr + (o - raw) : q_gen;
        bars = o + (C::O_OWN ? C::Q_BYTES : 0);
    }
    __device__ __forceinline__ uint32_t k_tile(int s) const { return k + s * C::KV_BYTES; }
    __device__ __forceinline__ uint32_t v_tile(int s) const { return v + s * C::KV_BYTES; }
    __device__ __forceinline__ uint32_t q_full() const { return bars; }
    __device__ __forceinline__ uint32_t k_full(int s) const { return bars + 8u * (1 + s); }
    __device__ __forceinline__ uint32_t v_full(int s) const
    {
        return bars + 8u * (1 + C::STAGES + s);
    }
    __device__ __forceinline__ uint32_t k_empty(int s) const
    {
        return bars + 8u * (1 + 2 * C::STAGES + s);
    }
    __device__ __forceinline__ uint32_t v_empty(int s) const
    {
        return bars + 8u * (1 + 3 * C::STAGES + s);
    }
    __device__ __forceinline__ uint32_t q_empty() const { return bars + 8u * (1 + 4 * C::STAGES); }

    // Thread 0, before the CTA's first barrier: a full barrier completes on the TMA's bytes
    // (one arrive with expect_tx), an empty one on one arrive per consumer warp.
    __device__ __forceinline__ void init_barriers() const
    {
        mbar_init(q_full(), 1);
        mbar_init(q_empty(), C::CONSUMER_WG * 4); // every consumer warp, after its last Q K^T
        for (int s = 0; s < C::STAGES; s++) {
            mbar_init(k_full(s), 1);
            mbar_init(v_full(s), 1);
            mbar_init(k_empty(s), (C::SPLIT ? 1 : C::CONSUMER_WG) * 4); // its consumers' warps
            mbar_init(v_empty(s), (C::SPLIT ? 1 : C::CONSUMER_WG) * 4);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
};

// One query tile: rows m0 .. m0 + BLOCK_M - 1 of query slice bh = b * heads + h, the keys
// of tiles 0 .. n_tiles - 1 (causal: none past the tile's last row). Tile w is m_block
// w % m_blocks of slice w / m_blocks: CTAs running at the same time share K/V in L2.
struct Tile {
    int m0, bh;
    int kvh; // the K/V slice: b * kv_heads + h / group = bh / group (GQA, MQA: the same
             // K/V tiles serve every head of the group, no copies)
    int n_tiles;

    template <typename C> static __device__ __forceinline__ int m_blocks(const fa_args &a)
    {
        return (a.seq_len + C::BLOCK_M - 1) / C::BLOCK_M;
    }
    // Query tiles of the launch (the host's count: fawg::launch).
    template <typename C> static __device__ __forceinline__ int count(const fa_args &a)
    {
        return m_blocks<C>(a) * a.batch * a.heads;
    }

    // per_unit: the launch's tiles per unit (Sched).
    template <typename C>
    static __device__ __forceinline__ Tile of_index(const fa_args &a, int w, int per_unit)
    {
        Tile t;
        const int mbs = m_blocks<C>(a), mb = w % mbs;
        // Causal: the longest rows (the last blocks) of a slice start first; in pairs
        // (fa_wg_unit_tiles 2) the longest and the shortest alternate (m_blocks - 1, 0,
        // m_blocks - 2, 1, ...), so the two tiles of a unit sum to the same work.
        const int m_block = !a.causal       ? mb
                            : per_unit == 2 ? ((mb & 1) ? mb / 2 : mbs - 1 - mb / 2)
                                            : mbs - 1 - mb;
        t.m0 = m_block * C::BLOCK_M;
        t.bh = w / mbs;
        t.kvh = t.bh / (a.heads / a.kv_heads);
        t.n_tiles = (a.seq_len + C::BLOCK_N - 1) / C::BLOCK_N;
        if (a.causal)
            t.n_tiles = min(t.n_tiles, (t.m0 + C::BLOCK_M + C::BLOCK_N - 1) / C::BLOCK_N);
        return t;
    }
};

// Which tiles a CTA takes, in order: units u = blockIdx.x, blockIdx.x + gridDim.x, ... of
// per_unit consecutive tiles each (fa_wg_ctas and fa_wg_unit_tiles, traits.h: the launch
// and the kernel agree from the tile and CTA counts). Only the tile index is kept; the
// rest comes from the kernel's parameters when needed (registers are the consumers'
// scarcest resource).
//   Sched<C>::each(a, n_work, [&](const Tile &t, int w, int ring, int i) { ... });
template <typename C> struct Sched {
    int tile;
    static __device__ __forceinline__ int per_unit(const fa_args &a, int n_work)
    {
        return fa_wg_unit_tiles(C::PIPELINE, a.causal, n_work, gridDim.x);
    }
    __device__ __forceinline__ Sched(const fa_args &a, int n_work)
        : tile((int)blockIdx.x * per_unit(a, n_work))
    {
    }
    __device__ __forceinline__ void next(const fa_args &a, int n_work)
    {
        const int per = per_unit(a, n_work);
        tile = (tile + 1) % per ? tile + 1 : (tile / per + (int)gridDim.x) * per;
    }

    // fn(t, w, ring, i) for every tile this CTA takes, in order: t the Tile, w its index,
    // ring the K/V ring position of its key tile 0, i the CTA's tile number. Producer and
    // consumers walk the same tiles through here. The one-tile kernel takes tile blockIdx.x
    // with ring and i constant 0, so its ring arithmetic folds away as before persistence.
    template <typename F>
    static __device__ __forceinline__ void each(const fa_args &a, int n_work, F &&fn)
    {
        if constexpr (!C::PERSIST) {
            fn(Tile::of_index<C>(a, blockIdx.x, 1), (int)blockIdx.x, 0, 0);
        } else {
            int ring = 0, i = 0;
            for (Sched w(a, n_work); w.tile < n_work; w.next(a, n_work), i++) {
                const Tile t = Tile::of_index<C>(a, w.tile, per_unit(a, n_work));
                fn(t, w.tile, ring, i);
                ring += t.n_tiles;
            }
        }
    }
};

// One thread (tid 0 of the producer warpgroup) issues every copy of a tile: Q once the
// consumers have freed it (the CTA's tile number i: its parity), then K and V of each key
// tile into ring position ring0 + j (slot % STAGES) once the consumers have freed it.
template <typename C> struct Producer {
    static __device__ __forceinline__ void prefetch(const CUtensorMap *tmQ, const CUtensorMap *tmK,
                                                    const CUtensorMap *tmV)
    {
        tma_prefetch_map(tmQ);
        tma_prefetch_map(tmK);
        tma_prefetch_map(tmV);
    }

    static __device__ __forceinline__ void run(const Smem<C> &sm, const Tile &t,
                                               const CUtensorMap *tmQ, const CUtensorMap *tmK,
                                               const CUtensorMap *tmV, int ring0, int i)
    {
        mbar_wait(sm.q_empty(), (i & 1) ^ 1);
        mbar_expect_tx(sm.q_full(), C::Q_BYTES);
#pragma unroll
        for (int c = 0; c < C::SUBS; c++)
            tma_load_3d(sm.q + c * C::BLOCK_M * 128, tmQ, sm.q_full(), c * 64, t.m0, t.bh);
        // K (v false) or V (v true) of key tile j into ring slot (ring0 + j) % STAGES, once
        // the consumers have freed it.
        auto load = [&](int j, bool v) {
            const uint32_t r = (uint32_t)ring0 + j; // unsigned: % and / by STAGES stay cheap
            const int s = (int)(r % C::STAGES);
            mbar_wait(v ? sm.v_empty(s) : sm.k_empty(s), ((r / C::STAGES) & 1) ^ 1);
            const uint32_t full = v ? sm.v_full(s) : sm.k_full(s);
            mbar_expect_tx(full, C::KV_BYTES);
#pragma unroll
            for (int c = 0; c < C::SUBS; c++)
                tma_load_3d((v ? sm.v_tile(s) : sm.k_tile(s)) + c * C::BLOCK_N * 128, v ? tmV : tmK,
                            full, c * 64, j * C::BLOCK_N, t.kvh);
        };
        // K of tile j+1 goes out before V of tile j: the consumers need it first.
        load(0, false);
        for (int j = 0; j < t.n_tiles; j++) {
            if (j + 1 < t.n_tiles)
                load(j + 1, false);
            load(j, true);
        }
    }
};

// Per consumer thread: rows r0 = row_base and r0 + 8 of its warp's 16 rows (accumulator
// element e of 8-column block nb: row r0 + 8*(e>>1), column nb*8 + 2*(lane&3) + (e&1)).
template <typename C> struct Softmax {
    float m[2], l[2]; // running max (scaled by log2 e) and running sum of each row
    // The row max as a tree (5 dependent fmaxf for 32 values, not 17: 1-2 % faster, and no
    // larger, kernels/NOTES-perf.md) where registers allow: at head dim 256 the consumers
    // hold 240 and the tree's temporaries spill (12 -> 20 B at d256.m128.n80.p2).
    static constexpr bool TREE_MAX = C::HEAD_DIM <= 128;

    __device__ __forceinline__ void init()
    {
        m[0] = m[1] = -INFINITY;
        l[0] = l[1] = 0.f;
    }

    // Online softmax of one tile: new running max, P = exp2(S*scale_log2 - max) packed as
    // the A fragments of P V, running sums; returns the O rescale factors in corr. MASK:
    // keys past the sequence end and (causal) above the diagonal count as -inf. S is only
    // read: writing the accumulator registers of a wgmma while another is in flight makes
    // ptxas serialize all of them (C7513).
    // INPLACE (PIPELINE 4, FA3's way): P stays fp32 in the S registers; pack() makes the
    // fp16 A fragments later, once the P V reading the previous ones has completed.
    template <bool MASK, bool INPLACE = false>
    __device__ __forceinline__ void online(float (&s)[C::NS], uint32_t (&p)[C::KP][4],
                                           float (&corr)[2], float scale_log2, int n0, int row_base,
                                           int seq, int causal, int lane)
    {
        const int t = lane & 3;
        // Key col of row r is masked when col >= seq or (causal) col > r: col > min(r, seq - 1).
        // Relative to this thread's first column n0 + 2t, element i sits at the compile-time
        // offset (i >> 2) * 8 + (i & 1), so one compare against the row's limit decides it.
        int lim[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = row_base + 8 * h;
            lim[h] = (causal && row < seq ? row : seq - 1) - n0 - 2 * t;
        }
        auto masked = [&](int i) { return MASK && (i >> 2) * 8 + (i & 1) > lim[(i >> 1) & 1]; };
        auto score = [&](int i) { return masked(i) ? -INFINITY : s[i]; }; // what the max sees
        float base[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float mx = -INFINITY;
            if constexpr (TREE_MAX) {
                // The row's NS / 2 values as a tree: log2 levels of fmaxf, not a chain.
                float v[C::NS / 2];
#pragma unroll
                for (int k = 0; k < C::NS / 2; k++) {
                    const int i = (k >> 1) * 4 + 2 * h + (k & 1);
                    v[k] = score(i);
                }
                mx = fmaxf(mx, tree_max<C::NS / 2>(v)); // -inf, not NaN, when every one is NaN
            } else {
#pragma unroll
                for (int nb = 0; nb < C::NS / 4; nb++)
                    mx = fmaxf(mx, fmaxf(score(nb * 4 + 2 * h), score(nb * 4 + 2 * h + 1)));
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 2));
            float m_new = fmaxf(m[h], mx * scale_log2);
#if FA_WG_LAZY_RESCALE
            // The running max moves only when the row grows by more than 2^8 (the mma
            // family's rule): P stays <= 256, inside fp16 and bf16, and O is rescaled only
            // when some row of the warp moved (Mainloop::rescale skips corr = 1).
            if (!(m_new > m[h] + 8.f))
                m_new = m[h];
#endif
            // A row with every key masked so far keeps -inf: base 0 gives exp2 = 0, no NaN.
            base[h] = m_new == -INFINITY ? 0.f : m_new;
            corr[h] = fast_exp2(m[h] - base[h]); // exactly 1 when the max stayed (ex2(0) = 1)
            m[h] = m_new;
        }
        // P straight into the packed A fragments (S itself is left untouched: writing the
        // accumulator registers of an in-flight wgmma stage makes ptxas serialize them).
        float sum[2] = {0.f, 0.f};
#pragma unroll
        for (int k = 0; k < C::KP; k++) {
            float v[8];
#pragma unroll
            for (int e = 0; e < 8; e++) {
                v[e] = masked(k * 8 + e)
                           ? 0.f
                           : fast_exp2(fmaf(s[k * 8 + e], scale_log2, -base[(e >> 1) & 1]));
                sum[(e >> 1) & 1] += v[e];
                if (INPLACE)
                    s[k * 8 + e] = v[e];
            }
            if (INPLACE)
                continue;
            pack_k(v, p[k]);
        }
#pragma unroll
        for (int h = 0; h < 2; h++)
            l[h] = l[h] * corr[h] + sum[h];
    }

    // Eight P values of k-step k as its four b32 A registers.
    static __device__ __forceinline__ void pack_k(const float *v, uint32_t (&pk)[4])
    {
        pk[0] = pack_half2<C::DT>(v[0], v[1]);
        pk[1] = pack_half2<C::DT>(v[2], v[3]);
        pk[2] = pack_half2<C::DT>(v[4], v[5]);
        pk[3] = pack_half2<C::DT>(v[6], v[7]);
    }

    static __device__ __forceinline__ void pack(const float (&s)[C::NS], uint32_t (&p)[C::KP][4])
    {
#pragma unroll
        for (int k = 0; k < C::KP; k++)
            pack_k(&s[k * 8], p[k]);
    }

    // 1 / l of each row (the quad of lanes sharing it summed), 0 for a row with no key.
    __device__ __forceinline__ void inverse_sums(float (&inv)[2]) const
    {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float sum = l[h];
            sum += __shfl_xor_sync(0xffffffff, sum, 1);
            sum += __shfl_xor_sync(0xffffffff, sum, 2);
            inv[h] = sum > 0.f ? 1.f / sum : 0.f;
        }
    }
};

// One consumer warpgroup's 64 query rows: the O accumulators, the softmax state and the
// key loop in the order PIPELINE names (top comment).
template <typename C> struct Mainloop {
    float o[C::NO];
    Softmax<C> sm;

    // S = Q K^T for this warpgroup's 64 rows; issued and committed, not waited.
    static __device__ __forceinline__ void qk(float (&s)[C::NS], uint32_t sQw, uint32_t sKs,
                                              int block_m, int block_n)
    {
        const uint32_t qw = desc_word(sQw, 16), kw = desc_word(sKs, 16);
#pragma unroll
        for (int k = 0; k < C::KQ; k++) {
            const uint32_t off = (k % 4) * 32; // 16 columns = 32 B inside the 128-B row
            const uint64_t da = desc(qw, (k / 4) * block_m * 128 + off, 1024);
            const uint64_t db = desc(kw, (k / 4) * block_n * 128 + off, 1024);
            Wgmma<C::NS * 2, C::DT>::ss(s, da, db, k > 0 ? 1 : 0);
        }
        wg_commit();
    }

    // O += P V; issued and committed, not waited. V stage [SUBS][BLOCK_N][64]: along N
    // (head dim) 64 columns per swizzle row, the next 64 at LBO = BLOCK_N*128 B; along K
    // (keys) 8-row groups at SBO = 1024 B; a k-step of 16 keys moves 2048 B.
    __device__ __forceinline__ void pv(const uint32_t (&p)[C::KP][4], uint32_t sVs, int block_n)
    {
        const uint32_t vw = desc_word(sVs, block_n * 128);
#pragma unroll
        for (int k = 0; k < C::KP; k++) {
            const uint64_t db = desc(vw, k * 2048, 1024);
            Wgmma<C::NO * 2, C::DT>::rs(o, p[k], db, 1);
        }
        wg_commit();
    }

    __device__ __forceinline__ void rescale(const float (&corr)[2])
    {
#if FA_WG_LAZY_RESCALE
        if (!__any_sync(0xffffffffu, corr[0] != 1.f || corr[1] != 1.f))
            return;
#endif
#pragma unroll
        for (int i = 0; i < C::NO; i++)
            o[i] *= corr[(i >> 1) & 1];
    }

    __device__ __forceinline__ void init()
    {
#pragma unroll
        for (int i = 0; i < C::NO; i++)
            o[i] = 0.f;
        sm.init();
    }

    // Every key tile of t for consumer warpgroup cw: waits for each K / V stage, frees it
    // (one arrive per warp) once its GEMM has completed. Key tile j sits at ring position
    // ring0 + j; q_par is the parity of this tile's Q (the CTA's tile number & 1).
    __device__ __forceinline__ void run(const Smem<C> &smem, const Tile &t, const fa_args &a,
                                        int cw, int lane, int row_base, int ring0, uint32_t q_par)
    {
        constexpr int STAGES = C::STAGES, BLOCK_M = C::BLOCK_M, BLOCK_N = C::BLOCK_N;
        constexpr int PIPELINE = C::PIPELINE, CONSUMER_WG = C::CONSUMER_WG;
        const int seq = a.seq_len, n_tiles = t.n_tiles;
        const int slab = C::SPLIT ? 0 : cw; // this warpgroup's 64-row slab of the Q tile
        const int wg_row0 = t.m0 + slab * 64;
        const float scale_log2 = a.softmax_scale * 1.44269504088896340736f;
        const uint32_t sQw = smem.q + slab * 64 * 128;

        // Masking is needed on the tail tile and on tiles reaching past this warpgroup's
        // first row (causal): uniform over the warpgroup.
        auto needs_mask = [&](int j) {
            return (j + 1) * BLOCK_N > seq || (a.causal && (j + 1) * BLOCK_N - 1 > wg_row0);
        };

        // Ring slot and phase of key tile j.
        // Unsigned: a power-of-two STAGES is a mask and a shift, not a signed division.
        auto slot_of = [&](int j) { return (int)(((uint32_t)ring0 + j) % STAGES); };
        auto par_of = [&](int j) { return (((uint32_t)ring0 + j) / STAGES) & 1u; };
        // S of key tile j is done: K's slot is free, and after the tile's last Q K^T so is
        // Q where the epilogue does not stage through it (C::Q_FREED_EARLY).
        auto s_done = [&](int j) {
            if (lane != 0)
                return;
            mbar_arrive(smem.k_empty(slot_of(j)));
            if (C::Q_FREED_EARLY && j == n_tiles - 1)
                mbar_arrive(smem.q_empty());
        };

        mbar_wait(smem.q_full(), q_par);
        float s[C::NS];
        float corr[2];
        // The softmax of tile j, masked where needed; IN_PLACE (a std::bool_constant):
        // PIPELINE 4's form, fp32 P left in S.
        auto softmax = [&](uint32_t(&pp)[C::KP][4], int j, auto in_place) {
            constexpr bool IP = decltype(in_place)::value;
            if (needs_mask(j))
                sm.template online<true, IP>(s, pp, corr, scale_log2, j * BLOCK_N, row_base, seq,
                                             a.causal, lane);
            else
                sm.template online<false, IP>(s, pp, corr, scale_log2, j * BLOCK_N, row_base, seq,
                                              a.causal, lane);
        };
        constexpr std::false_type packed{};

        // PIPELINE 2: the consumer warpgroups take turns issuing their GEMMs (FA3's
        // ping-pong), so one's softmax runs while the other's wgmmas hold the tensor cores.
        // Named barrier 4+c is warpgroup c's turn: it syncs there (128 threads) and the
        // previous warpgroup arrives (128), 256 in all. Warpgroup C-1 grants the first turn
        // and skips its very last grant, so every barrier ends balanced.
        constexpr bool PINGPONG = PIPELINE >= 2 && PIPELINE <= 4;
        constexpr bool INTRA = PIPELINE == 1 || PIPELINE == 2;
        auto sched_sync = [&]() {
            if constexpr (PINGPONG)
                asm volatile("bar.sync %0, 256;\n" ::"r"(4 + cw) : "memory");
        };
        auto sched_arrive = [&](int j) {
            if constexpr (PINGPONG)
                if (!(cw == CONSUMER_WG - 1 && j == n_tiles - 1))
                    asm volatile("bar.arrive %0, 256;\n" ::"r"(4 + (cw + 1) % CONSUMER_WG)
                                 : "memory");
        };
        if constexpr (PINGPONG)
            if (cw == CONSUMER_WG - 1)
                asm volatile("bar.arrive %0, 256;\n" ::"r"(4) : "memory");

        if constexpr (PIPELINE == 0 || C::SPLIT) {
            // In turn; the key split's warpgroups take every CONSUMER_WG-th tile each.
            uint32_t p[C::KP][4];
            for (int j = C::SPLIT ? cw : 0; j < n_tiles; j += C::SPLIT ? CONSUMER_WG : 1) {
                const int slot = slot_of(j);
                const uint32_t par = par_of(j);
                mbar_wait(smem.k_full(slot), par);
                wg_fence();
                qk(s, sQw, smem.k_tile(slot), BLOCK_M, BLOCK_N);
                wg_wait<0>();
                fence_regs(s);
                s_done(j);
                softmax(p, j, packed);
                rescale(corr);
                mbar_wait(smem.v_full(slot), par);
                fence_regs(o);
                wg_fence();
                pv(p, smem.v_tile(slot), BLOCK_N);
                wg_wait<0>();
                fence_regs(o);
                if (lane == 0)
                    mbar_arrive(smem.v_empty(slot));
            }
        } else {
            // INTRA: two P tiles swap roles (P of tile j-1 feeds the in-flight P V while the
            // softmax of tile j writes the other): no register copies, no write to a live
            // operand. Otherwise (PIPELINE 3) both GEMMs are waited before the softmax, which
            // then overwrites the one P tile (pb aliases pa).
            uint32_t pa[C::KP][4], pb_store[INTRA ? C::KP : 1][4];
            uint32_t(&pb)[C::KP][4] =
                *reinterpret_cast<uint32_t(*)[C::KP][4]>(INTRA ? &pb_store[0][0] : &pa[0][0]);
            // One step j >= 1: issue S_j = Q K_j^T; rescale O (factor from the softmax of
            // tile j-1) under it; issue O += P_{j-1} V_{j-1}; softmax of S_j under the P V.
            auto step = [&](int j, uint32_t(&p_prev)[C::KP][4], uint32_t(&p_next)[C::KP][4]) {
                const int slot = slot_of(j), prev = slot_of(j - 1);
                mbar_wait(smem.k_full(slot), par_of(j));
                sched_sync();
                wg_fence();
                qk(s, sQw, smem.k_tile(slot), BLOCK_M, BLOCK_N);
                rescale(corr);
                mbar_wait(smem.v_full(prev), par_of(j - 1));
                fence_regs(o);
                wg_fence();
                pv(p_prev, smem.v_tile(prev), BLOCK_N);
                sched_arrive(j);
                if constexpr (INTRA || PIPELINE == 4) {
                    // S_j is done; P V of tile j-1 may still run under the softmax. PIPELINE
                    // 4, FA3's order: the softmax of S_j in place, then (P V done) P_j packed
                    // over P_{j-1}: one P tile, S doubles as fp32 P.
                    wg_wait<1>();
                    fence_regs(s);
                    s_done(j);
                    softmax(p_next, j, std::bool_constant<PIPELINE == 4>{});
                    wg_wait<0>();
                    fence_regs(o);
                    if (lane == 0)
                        mbar_arrive(smem.v_empty(prev));
                    if constexpr (PIPELINE == 4)
                        Softmax<C>::pack(s, p_next);
                } else {
                    wg_wait<0>();
                    fence_regs(s);
                    fence_regs(o);
                    s_done(j);
                    if (lane == 0)
                        mbar_arrive(smem.v_empty(prev));
                    softmax(p_next, j, packed);
                }
            };
            mbar_wait(smem.k_full(slot_of(0)), par_of(0));
            sched_sync();
            wg_fence();
            qk(s, sQw, smem.k_tile(slot_of(0)), BLOCK_M, BLOCK_N);
            sched_arrive(0);
            wg_wait<0>();
            fence_regs(s);
            s_done(0);
            softmax(pa, 0, packed);
            for (int j = 1; j < n_tiles; j += 2) {
                step(j, pa, pb);
                if (j + 1 < n_tiles)
                    step(j + 1, pb, pa);
            }
            const int lt = n_tiles - 1, last = slot_of(lt);
            rescale(corr);
            mbar_wait(smem.v_full(last), par_of(lt));
            fence_regs(o);
            wg_fence();
            if (lt & 1)
                pv(pb, smem.v_tile(last), BLOCK_N);
            else
                pv(pa, smem.v_tile(last), BLOCK_N);
            wg_wait<0>();
            fence_regs(o);
            if (lane == 0)
                mbar_arrive(smem.v_empty(last));
        }
    }
};

// PIPELINE 5: warpgroup 1 leaves its running max, sum and O in the drained K/V ring, and
// warpgroup 0 merges them into its own: two partial softmaxes of the same rows, each
// rescaled to the larger max and added. Thread t of one warpgroup holds the same elements
// as thread t of the other, so word i of thread t sits at i * 128 + t (conflict-free).
// Returns whether this warpgroup goes on to the epilogue.
template <typename C> struct Combine {
    static constexpr int BAR = 7; // named barrier: 1-3 are the epilogue's, 4-6 the ping-pong's

    static __device__ __forceinline__ bool merge(Mainloop<C> &ml, const Smem<C> &smem, int cw,
                                                 int wtid)
    {
        static_assert(C::CONSUMER_WG == 2, "the key split has exactly 2 consumer warpgroups");
        static_assert((C::NO + 4) * 128 * 4 <= 2 * C::STAGES * C::KV_BYTES,
                      "one warpgroup's O, max and sum fit the K/V ring");
        float *buf = reinterpret_cast<float *>(smem.q_gen + C::Q_BYTES); // the K/V ring
        named_bar_sync(BAR, 256); // every key tile of both is done: the ring is free
        if (cw == 1) {
#pragma unroll
            for (int i = 0; i < C::NO; i++)
                buf[i * 128 + wtid] = ml.o[i];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                buf[(C::NO + h) * 128 + wtid] = ml.sm.m[h];
                buf[(C::NO + 2 + h) * 128 + wtid] = ml.sm.l[h];
            }
        }
        named_bar_sync(BAR, 256);
        if (cw == 1)
            return false;
        float a0[2], a1[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float m1 = buf[(C::NO + h) * 128 + wtid], l1 = buf[(C::NO + 2 + h) * 128 + wtid];
            const float mx = fmaxf(ml.sm.m[h], m1);
            const float base = mx == -INFINITY ? 0.f : mx; // no key at all: both factors 0
            a0[h] = fast_exp2(ml.sm.m[h] - base);
            a1[h] = fast_exp2(m1 - base);
            ml.sm.m[h] = mx;
            ml.sm.l[h] = ml.sm.l[h] * a0[h] + l1 * a1[h];
        }
#pragma unroll
        for (int i = 0; i < C::NO; i++)
            ml.o[i] = ml.o[i] * a0[(i >> 1) & 1] + buf[i * 128 + wtid] * a1[(i >> 1) & 1];
        return true;
    }
};

// O / l of one consumer warpgroup's 64 rows, staged through its rows of the staging tile
// (O's own, or the then idle Q tile) so the global stores are whole 16-B chunks of a row.
// tile_no: the CTA's tile number (a later tile waits until the warpgroup has read the
// staging tile of the one before).
template <typename C> struct Epilogue {
    static __device__ __forceinline__ void store(const Mainloop<C> &ml, const Smem<C> &smem,
                                                 const Tile &t, const fa_args &a, int cw, int wtid_,
                                                 int tile_no)
    {
        constexpr int BLOCK_M = C::BLOCK_M, HEAD_DIM = C::HEAD_DIM;
        // The persistent kernel computes the staging and store addresses below (a dozen per
        // thread, the same for every tile) here, each tile: hoisted out of its tile loop by
        // the compiler, they were held across the key loop and spilled (40 B at
        // d128.m128.n128.c2.s2.p2, which is 4 % faster at 4,16,2048,128 without them:
        // kernels/NOTES-perf.md, twenty-second session). The one-tile kernel has no tile
        // loop, and its early addresses cost nothing (late, 1.8 % slower at 4,8,512,64).
        const int wtid = C::PERSIST ? opaque(wtid_) : wtid_;
        const int lane = wtid & 31, warp = wtid / 32;
        const int seq = a.seq_len;
        const int wg_row0 = t.m0 + cw * 64;
        unsigned char *const stage = smem.stage_gen;
        float inv[2];
        ml.sm.inverse_sums(inv);
        if (C::O_OWN && tile_no > 0)
            named_bar_sync(1 + cw, 128);
        // Staging layout: sub-tile c = col/64 of the tile, row = this warpgroup's row,
        // 16-B chunk (col%64)/8 XOR (row & 7): conflict-free 4-B writes, 16-B reads.
        const int lrow = warp * 16 + (lane >> 2); // row within the warpgroup (and +8)
        const int tq = lane & 3;
#pragma unroll
        for (int nb = 0; nb < C::NO / 4; nb++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = lrow + 8 * h, c = nb / 8, ch = (nb % 8) ^ (r & 7);
                const uint32_t v = pack_half2<C::DT>(ml.o[nb * 4 + 2 * h] * inv[h],
                                                     ml.o[nb * 4 + 2 * h + 1] * inv[h]);
                *reinterpret_cast<uint32_t *>(stage + c * BLOCK_M * 128 + (cw * 64 + r) * 128 +
                                              ch * 16 + tq * 4) = v;
            }
        named_bar_sync(1 + cw, 128);
        uint16_t *gO = reinterpret_cast<uint16_t *>(a.o) + (size_t)t.bh * seq * HEAD_DIM;
        constexpr int CPR = HEAD_DIM / 8; // 16-B chunks per row
#pragma unroll
        for (int i = wtid; i < 64 * CPR; i += 128) {
            const int r = i / CPR, chg = i % CPR, c = chg / 8, ch = (chg % 8) ^ (r & 7);
            const int grow = wg_row0 + r;
            if (grow < seq)
                *reinterpret_cast<uint4 *>(gO + (size_t)grow * HEAD_DIM + chg * 8) =
                    *reinterpret_cast<const uint4 *>(stage + c * BLOCK_M * 128 +
                                                     (cw * 64 + r) * 128 + ch * 16);
        }
        if constexpr (C::Q_FREED_LATE) {
            // Q's copy for the next tile (async proxy) after this warp's reads of it.
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            __syncwarp();
            if (lane == 0)
                mbar_arrive(smem.q_empty());
        }
    }
};

// ---- the kernel ---------------------------------------------------------------------------

template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int CONSUMER_WG, int STAGES, int PIPELINE,
          int DT = FA_DTYPE_FP16, bool PERSIST = false>
__global__ void __launch_bounds__(fa_wg_threads(CONSUMER_WG), 1)
    fa_wgmma_kernel(const __grid_constant__ CUtensorMap tmQ,
                    const __grid_constant__ CUtensorMap tmK,
                    const __grid_constant__ CUtensorMap tmV, const fa_args a)
{
    using C = Cfg<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT, PERSIST>;
    extern __shared__ unsigned char smem_raw[];
    const int n_work = Tile::count<C>(a); // query tiles; this CTA takes those Sched names
    const Smem<C> smem(smem_raw);
    const int tid = threadIdx.x;
    const int wg = tid / 128;

    if (tid == 0)
        smem.init_barriers();
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<FA_WG_PRODUCER_REGS>();
        if (tid == 0) {
            Producer<C>::prefetch(&tmQ, &tmK, &tmV);
            Sched<C>::each(a, n_work, [&](const Tile &t, int, int ring, int i) {
                Producer<C>::run(smem, t, &tmQ, &tmK, &tmV, ring, i);
            });
        }
        return;
    }
    setmaxnreg_inc<fa_wg_consumer_regs(CONSUMER_WG)>();
    // Every lane of a consumer warp takes this branch, so the full-mask shuffle is valid; it
    // makes cw (and the wgmma descriptors built from it) warp-uniform: the per-tile
    // descriptor arithmetic moves to the uniform datapath (NOTES.md: 529 -> 475 SASS
    // instructions per tile at D=64, the 16-20 B spills gone).
    const int cw = __shfl_sync(0xffffffffu, wg - 1, 0);
    const int wtid = tid % 128;
    const int lane = tid & 31, warp = wtid / 32;
    Sched<C>::each(a, n_work, [&](const Tile &t, int w, int ring, int i) {
        const int row_base = t.m0 + (C::SPLIT ? 0 : cw * 64) + warp * 16 + (lane >> 2); // +8
        unsigned long long t_start = 0;
        if (a.cta_clock && wtid == 0 && cw == 0)
            t_start = fa_cta_clock_now();

        Mainloop<C> ml;
        ml.init();
        ml.run(smem, t, a, cw, lane, row_base, ring, (uint32_t)(i & 1));
        if constexpr (C::SPLIT)
            if (!Combine<C>::merge(ml, smem, cw, wtid))
                return;
        Epilogue<C>::store(ml, smem, t, a, cw, wtid, i);

        if (a.cta_clock && wtid == 0 && cw == 0)
            fa_cta_clock_write(a.cta_clock, (size_t)w, t_start);
    });
}

// ---- host side ----------------------------------------------------------------------------

// cuTensorMapEncodeTiled through the runtime's driver entry point (no -lcuda).
static inline PFN_cuTensorMapEncodeTiled_v12000 encode_fn()
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    if (!fn) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    }
    return fn;
}

// 3-D map over a [B*H, S, D] fp16 or bf16 tensor, box (64, rows, 1), 128-B swizzle;
// out-of-range rows read as zeros.
static inline int make_map(CUtensorMap *m, const void *ptr, int bh, int seq, int d, int rows,
                           int dtype)
{
    auto fn = encode_fn();
    if (!fn)
        return (int)cudaErrorNotSupported;
    const cuuint64_t dims[3] = {(cuuint64_t)d, (cuuint64_t)seq, (cuuint64_t)bh};
    const cuuint64_t strides[2] = {(cuuint64_t)d * 2, (cuuint64_t)seq * d * 2};
    const cuuint32_t box[3] = {FA_WG_SUB_COLS, (cuuint32_t)rows, 1};
    const cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = fn(m,
                    dtype == FA_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                    3, const_cast<void *>(ptr), dims, strides, box, estr,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : (int)cudaErrorInvalidValue;
}

template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int CONSUMER_WG, int STAGES, int PIPELINE, int DT>
int launch(const fa_args *a, fa_stream stream)
{
    if (!fa_args_fit(a, HEAD_DIM, DT))
        return (int)cudaErrorInvalidValue;
    // TMA needs 16-B aligned global addresses.
    if (((uintptr_t)a->q | (uintptr_t)a->k | (uintptr_t)a->v | (uintptr_t)a->o) & 15)
        return (int)cudaErrorInvalidValue;
    const int bh = a->batch * a->heads, bkv = a->batch * a->kv_heads;
    CUtensorMap tq, tk, tv;
    int e;
    if ((e = make_map(&tq, a->q, bh, a->seq_len, HEAD_DIM, BLOCK_M, DT)) ||
        (e = make_map(&tk, a->k, bkv, a->seq_len, HEAD_DIM, BLOCK_N, DT)) ||
        (e = make_map(&tv, a->v, bkv, a->seq_len, HEAD_DIM, BLOCK_N, DT)))
        return e;
    // One CTA per query tile, or (fa_wg_ctas) at most one per resident slot: the SM count and
    // the persistent kernel's occupancy at its smem, counted once per device. Fewer CTAs than
    // tiles take the persistent kernel, whose Sched walks the units fa_wg_unit_tiles derives
    // from the same counts; else the one-tile kernel (measured faster where every CTA has one
    // tile: kernels/NOTES-perf.md).
    using C1 = Cfg<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT, false>;
    using CP = Cfg<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT, true>;
    auto kern1 =
        fa_wgmma_kernel<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT, false>;
    auto kernp =
        fa_wgmma_kernel<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT, true>;
    const int threads = fa_wg_threads(CONSUMER_WG);
    const long tiles = (long)((a->seq_len + BLOCK_M - 1) / BLOCK_M) * bh;
    if (tiles > (1L << 30))
        return (int)cudaErrorInvalidValue;
    cudaError_t ce;
    static int slots_dev = -1, slots = 0;
    int dev = 0;
    if ((ce = cudaGetDevice(&dev)) != cudaSuccess)
        return (int)ce;
    if (dev != slots_dev) {
        int sms = 0, per_sm = 0;
        if ((ce = cudaFuncSetAttribute(kernp, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)CP::SMEM)) != cudaSuccess ||
            (ce = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) !=
                cudaSuccess ||
            (ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernp, threads,
                                                                (size_t)CP::SMEM)) != cudaSuccess)
            return (int)ce;
        slots = sms * per_sm;
        slots_dev = dev;
    }
    const long ctas = fa_wg_ctas(PIPELINE, a->causal, tiles, slots);
    const bool persist = ctas < tiles;
    auto kern = persist ? kernp : kern1;
    const long smem = persist ? CP::SMEM : C1::SMEM;
    if ((ce = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)) !=
        cudaSuccess)
        return (int)ce;
    const dim3 grid((unsigned)ctas);
    kern<<<grid, threads, smem, (cudaStream_t)stream>>>(tq, tk, tv, *a);
    return (int)cudaGetLastError();
}

// The kernel an instance's attributes are read from (fa_instance.kernel): the persistent one
// where a launch may take it (it asks the most shared memory: fa_wg_smem_bytes).
template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int CONSUMER_WG, int STAGES, int PIPELINE, int DT>
struct Attrs {
    static constexpr bool PERSIST = FA_WG_PERSISTENT && PIPELINE != FA_WG_SPLIT;
    static constexpr auto kernel =
        fa_wgmma_kernel<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT, PERSIST>;
};

} // namespace fawg

// One compiled point: its registry entry (kernels/fa_launch.h: fa_instance), named from its
// parameters as the family's description says (wgmma.c: wg_symbol, wg_instance). The
// config's axis[] holds the axes in traits.h's order (WG_BLOCK_M .. WG_PIPELINE); its
// attributes come from fawg::Attrs.
#define FA_WG_INSTANCE_AS(DT, SYM, TEXT, D, M, N, CW, S, P)                                        \
    extern "C" const fa_instance SYM;                                                              \
    const fa_instance SYM = {{D, {M, N, CW, S, P}, FA_FAMILY_WGMMA, DT},                           \
                             TEXT,                                                                 \
                             fawg::launch<D, M, N, CW, S, P, DT>,                                  \
                             (const void *)fawg::Attrs<D, M, N, CW, S, P, DT>::kernel,             \
                             fa_wg_threads(CW),                                                    \
                             fa_wg_smem_bytes(D, M, N, S),                                         \
                             M};
#define FA_WG_INSTANCE(D, M, N, CW, S, P)                                                          \
    FA_WG_INSTANCE_AS(FA_DTYPE_FP16, fa_wg_inst_d##D##_m##M##_n##N##_c##CW##_s##S##_p##P,          \
                      "d" #D ".m" #M ".n" #N ".c" #CW ".s" #S ".p" #P, D, M, N, CW, S, P)
#define FA_WG_INSTANCE_BF16(D, M, N, CW, S, P)                                                     \
    FA_WG_INSTANCE_AS(FA_DTYPE_BF16, fa_wg_inst_bf16_d##D##_m##M##_n##N##_c##CW##_s##S##_p##P,     \
                      "d" #D ".m" #M ".n" #N ".c" #CW ".s" #S ".p" #P ".bf16", D, M, N, CW, S, P)
