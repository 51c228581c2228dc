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
//   mbarriers: q_full; k_full[STAGES], v_full[STAGES] (TMA transaction bytes);
//              k_empty[STAGES], v_empty[STAGES] (one arrive per consumer warp)
// The global tensors are 3-D for TMA: (HEAD_DIM, S, B*H), so rows past S of a head are
// zero-filled by the copy engine, never the next head's rows.
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
// register use (fp32 P written over S, packed into the one P tile after the P V).
#pragma once

#include <cuda.h> // CUtensorMap and the tensor-map enums only: nothing links libcuda
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

// kernels/ is on the include path (-Ikernels); a kernel variant has these beside it.
#include "fa_config.h"
#include "fa_launch.h"
#include "traits.h"
#include "wgmma_ops.h"

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
__device__ __forceinline__ uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
    uint64_t d = 0;
    d |= (uint64_t)((saddr & 0x3FFFF) >> 4);
    d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
    d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
    d |= (uint64_t)1 << 62; // SWIZZLE_128B
    return d;
}

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
// Two floats as one b32 of two DT elements (round to nearest), lo in the low half.
template <int DT> __device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
    if constexpr (DT == FA_DTYPE_BF16) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    } else {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    }
}

// ---- the kernel ---------------------------------------------------------------------------

template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int CONSUMER_WG, int STAGES, int PIPELINE,
          int DT_>
struct Cfg {
    static constexpr int DT = DT_; // FA_DTYPE_*: the element type of Q, K, V, P and O
    static constexpr int THREADS = fa_wg_threads(CONSUMER_WG);
    static constexpr int SUBS = HEAD_DIM / FA_WG_SUB_COLS;       // 64-column sub-tiles
    static constexpr uint32_t Q_BYTES = BLOCK_M * HEAD_DIM * 2;  // whole Q tile
    static constexpr uint32_t KV_BYTES = BLOCK_N * HEAD_DIM * 2; // one K (or V) tile
    static constexpr int NS = BLOCK_N / 2;                       // S accumulators / thread
    static constexpr int NO = HEAD_DIM / 2;                      // O accumulators / thread
    static constexpr int KP = BLOCK_N / 16;                      // k-steps of P V
    static constexpr int KQ = HEAD_DIM / 16;                     // k-steps of Q K^T
    static_assert(fa_wg_valid(HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE),
                  "invalid wgmma config (traits.h: fa_wg_valid)");
};

// Per consumer thread: rows r0 = row_base and r0 + 8 of its warp's 16 rows (accumulator
// element e of 8-column block nb: row r0 + 8*(e>>1), column nb*8 + 2*(lane&3) + (e&1)).
template <typename C> struct Consumer {
    float o[C::NO];
    float m[2], l[2];

    // S = Q K^T for this warpgroup's 64 rows; issued and committed, not waited.
    static __device__ __forceinline__ void qk(float (&s)[C::NS], uint32_t sQw, uint32_t sKs,
                                              int block_m, int block_n)
    {
#pragma unroll
        for (int k = 0; k < C::KQ; k++) {
            const uint32_t off = (k % 4) * 32; // 16 columns = 32 B inside the 128-B row
            const uint64_t da = make_desc(sQw + (k / 4) * block_m * 128 + off, 16, 1024);
            const uint64_t db = make_desc(sKs + (k / 4) * block_n * 128 + off, 16, 1024);
            Wgmma<C::NS * 2, C::DT>::ss(s, da, db, k > 0 ? 1 : 0);
        }
        wg_commit();
    }

    // O += P V; issued and committed, not waited. V stage [SUBS][BLOCK_N][64]: along N
    // (head dim) 64 columns per swizzle row, the next 64 at LBO = BLOCK_N*128 B; along K
    // (keys) 8-row groups at SBO = 1024 B; a k-step of 16 keys moves 2048 B.
    __device__ __forceinline__ void pv(const uint32_t (&p)[C::KP][4], uint32_t sVs, int block_n)
    {
#pragma unroll
        for (int k = 0; k < C::KP; k++) {
            const uint64_t db = make_desc(sVs + k * 2048, block_n * 128, 1024);
            Wgmma<C::NO * 2, C::DT>::rs(o, p[k], db, 1);
        }
        wg_commit();
    }

    // Online softmax of one tile: new running max, P = exp2(S*scale_log2 - max) packed as
    // the A fragments of P V, running sums; returns the O rescale factors in corr. MASK:
    // keys past the sequence end and (causal) above the diagonal count as -inf. S is only
    // read: writing the accumulator registers of a wgmma while another is in flight makes
    // ptxas serialize all of them (C7513).
    // INPLACE (PIPELINE 4, FA3's way): P stays fp32 in the S registers; pack() makes the
    // fp16 A fragments later, once the P V reading the previous ones has completed.
    template <bool MASK, bool INPLACE = false>
    __device__ __forceinline__ void softmax(float (&s)[C::NS], uint32_t (&p)[C::KP][4],
                                            float (&corr)[2], float scale_log2, int n0,
                                            int row_base, int seq, int causal, int lane)
    {
        const int t = lane & 3;
        auto masked = [&](int i) {
            const int col = n0 + (i >> 2) * 8 + 2 * t + (i & 1);
            const int row = row_base + 8 * ((i >> 1) & 1);
            return MASK && (col >= seq || (causal && col > row));
        };
        float base[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float mx = -INFINITY;
#pragma unroll
            for (int nb = 0; nb < C::NS / 4; nb++)
                mx = fmaxf(mx,
                           fmaxf(masked(nb * 4 + 2 * h) ? -INFINITY : s[nb * 4 + 2 * h],
                                 masked(nb * 4 + 2 * h + 1) ? -INFINITY : s[nb * 4 + 2 * h + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 2));
            const float m_new = fmaxf(m[h], mx * scale_log2);
            // A row with every key masked so far keeps -inf: base 0 gives exp2 = 0, no NaN.
            base[h] = m_new == -INFINITY ? 0.f : m_new;
            corr[h] = fast_exp2(m[h] - base[h]);
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
            p[k][0] = pack_half2<C::DT>(v[0], v[1]);
            p[k][1] = pack_half2<C::DT>(v[2], v[3]);
            p[k][2] = pack_half2<C::DT>(v[4], v[5]);
            p[k][3] = pack_half2<C::DT>(v[6], v[7]);
        }
#pragma unroll
        for (int h = 0; h < 2; h++)
            l[h] = l[h] * corr[h] + sum[h];
    }

    static __device__ __forceinline__ void pack(const float (&s)[C::NS], uint32_t (&p)[C::KP][4])
    {
#pragma unroll
        for (int k = 0; k < C::KP; k++) {
            p[k][0] = pack_half2<C::DT>(s[k * 8 + 0], s[k * 8 + 1]);
            p[k][1] = pack_half2<C::DT>(s[k * 8 + 2], s[k * 8 + 3]);
            p[k][2] = pack_half2<C::DT>(s[k * 8 + 4], s[k * 8 + 5]);
            p[k][3] = pack_half2<C::DT>(s[k * 8 + 6], s[k * 8 + 7]);
        }
    }

    __device__ __forceinline__ void rescale(const float (&corr)[2])
    {
#pragma unroll
        for (int i = 0; i < C::NO; i++)
            o[i] *= corr[(i >> 1) & 1];
    }
};

template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int CONSUMER_WG, int STAGES, int PIPELINE,
          int DT = FA_DTYPE_FP16>
__global__ void __launch_bounds__(fa_wg_threads(CONSUMER_WG), 1)
    fa_wgmma_kernel(const __grid_constant__ CUtensorMap tmQ,
                    const __grid_constant__ CUtensorMap tmK,
                    const __grid_constant__ CUtensorMap tmV, const fa_args a)
{
    using C = Cfg<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT>;
    extern __shared__ unsigned char smem_raw[];
    const uint32_t raw = smem_u32(smem_raw);
    const uint32_t sQ = (raw + FA_WG_ALIGN - 1) & ~(uint32_t)(FA_WG_ALIGN - 1);
    unsigned char *const smem_gen = smem_raw + (sQ - raw); // generic pointer to sQ
    const uint32_t sK = sQ + C::Q_BYTES;
    const uint32_t sV = sK + STAGES * C::KV_BYTES;
    const uint32_t bars = sV + STAGES * C::KV_BYTES;
    const uint32_t q_full = bars;
#define K_FULL(s) (bars + 8u * (1 + (s)))
#define V_FULL(s) (bars + 8u * (1 + STAGES + (s)))
#define K_EMPTY(s) (bars + 8u * (1 + 2 * STAGES + (s)))
#define V_EMPTY(s) (bars + 8u * (1 + 3 * STAGES + (s)))

    const int tid = threadIdx.x;
    const int wg = tid / 128;
    const int seq = a.seq_len;
    const int m_block = a.causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int m0 = m_block * BLOCK_M;
    const int bh = blockIdx.y;
    // K/V slice of query slice bh = b * heads + h: b * kv_heads + h / group = bh / group
    // (GQA, MQA: the same K/V tiles serve every head of the group, no copies).
    const int kvh = bh / (a.heads / a.kv_heads);
    int n_tiles = (seq + BLOCK_N - 1) / BLOCK_N;
    if (a.causal)
        n_tiles = min(n_tiles, (m0 + BLOCK_M + BLOCK_N - 1) / BLOCK_N);

    if (tid == 0) {
        mbar_init(q_full, 1);
        for (int s = 0; s < STAGES; s++) {
            mbar_init(K_FULL(s), 1);
            mbar_init(V_FULL(s), 1);
            mbar_init(K_EMPTY(s), CONSUMER_WG * 4);
            mbar_init(V_EMPTY(s), CONSUMER_WG * 4);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        // ---- producer ----
        setmaxnreg_dec<FA_WG_PRODUCER_REGS>();
        if (tid == 0) {
            tma_prefetch_map(&tmQ);
            tma_prefetch_map(&tmK);
            tma_prefetch_map(&tmV);
            mbar_expect_tx(q_full, C::Q_BYTES);
#pragma unroll
            for (int c = 0; c < C::SUBS; c++)
                tma_load_3d(sQ + c * BLOCK_M * 128, &tmQ, q_full, c * 64, m0, bh);
            // K of tile j+1 goes out before V of tile j: the consumers need it first.
            auto load_k = [&](int j) {
                const int s = j % STAGES;
                mbar_wait(K_EMPTY(s), ((j / STAGES) & 1) ^ 1);
                mbar_expect_tx(K_FULL(s), C::KV_BYTES);
#pragma unroll
                for (int c = 0; c < C::SUBS; c++)
                    tma_load_3d(sK + s * C::KV_BYTES + c * BLOCK_N * 128, &tmK, K_FULL(s), c * 64,
                                j * BLOCK_N, kvh);
            };
            load_k(0);
            for (int j = 0; j < n_tiles; j++) {
                if (j + 1 < n_tiles)
                    load_k(j + 1);
                const int s = j % STAGES;
                mbar_wait(V_EMPTY(s), ((j / STAGES) & 1) ^ 1);
                mbar_expect_tx(V_FULL(s), C::KV_BYTES);
#pragma unroll
                for (int c = 0; c < C::SUBS; c++)
                    tma_load_3d(sV + s * C::KV_BYTES + c * BLOCK_N * 128, &tmV, V_FULL(s), c * 64,
                                j * BLOCK_N, kvh);
            }
        }
    } else {
        // ---- consumers ----
        setmaxnreg_inc<fa_wg_consumer_regs(CONSUMER_WG)>();
        const int cw = wg - 1;
        const int wtid = tid % 128;
        const int lane = tid & 31, warp = wtid / 32;
        const int row_base = m0 + cw * 64 + warp * 16 + (lane >> 2); // and row_base + 8
        const int wg_row0 = m0 + cw * 64;
        const float scale_log2 = a.softmax_scale * 1.44269504088896340736f;
        const uint32_t sQw = sQ + cw * 64 * 128;
        unsigned long long t_start = 0;
        if (a.cta_clock && wtid == 0 && cw == 0)
            t_start = clock64();

        Consumer<C> st;
#pragma unroll
        for (int i = 0; i < C::NO; i++)
            st.o[i] = 0.f;
        st.m[0] = st.m[1] = -INFINITY;
        st.l[0] = st.l[1] = 0.f;

        // Masking is needed on the tail tile and on tiles reaching past this warpgroup's
        // first row (causal): uniform over the warpgroup.
        auto needs_mask = [&](int j) {
            return (j + 1) * BLOCK_N > seq || (a.causal && (j + 1) * BLOCK_N - 1 > wg_row0);
        };

        mbar_wait(q_full, 0);
        float s[C::NS];
        float corr[2];
        auto softmax = [&](uint32_t(&pp)[C::KP][4], int j) {
            if (needs_mask(j))
                st.template softmax<true>(s, pp, corr, scale_log2, j * BLOCK_N, row_base, seq,
                                          a.causal, lane);
            else
                st.template softmax<false>(s, pp, corr, scale_log2, j * BLOCK_N, row_base, seq,
                                           a.causal, lane);
        };
        auto softmax_inplace = [&](uint32_t(&pp)[C::KP][4], int j) {
            if (needs_mask(j))
                st.template softmax<true, true>(s, pp, corr, scale_log2, j * BLOCK_N, row_base, seq,
                                                a.causal, lane);
            else
                st.template softmax<false, true>(s, pp, corr, scale_log2, j * BLOCK_N, row_base,
                                                 seq, a.causal, lane);
        };

        // PIPELINE 2: the consumer warpgroups take turns issuing their GEMMs (FA3's
        // ping-pong), so one's softmax runs while the other's wgmmas hold the tensor cores.
        // Named barrier 4+c is warpgroup c's turn: it syncs there (128 threads) and the
        // previous warpgroup arrives (128), 256 in all. Warpgroup C-1 grants the first turn
        // and skips its very last grant, so every barrier ends balanced.
        constexpr bool PINGPONG = PIPELINE >= 2, INTRA = PIPELINE == 1 || PIPELINE == 2;
        (void)softmax_inplace;
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

        if constexpr (PIPELINE == 0) {
            uint32_t p[C::KP][4];
            for (int j = 0; j < n_tiles; j++) {
                const int slot = j % STAGES;
                const uint32_t par = (j / STAGES) & 1;
                mbar_wait(K_FULL(slot), par);
                wg_fence();
                Consumer<C>::qk(s, sQw, sK + slot * C::KV_BYTES, BLOCK_M, BLOCK_N);
                wg_wait<0>();
                fence_regs(s);
                if (lane == 0)
                    mbar_arrive(K_EMPTY(slot));
                softmax(p, j);
                st.rescale(corr);
                mbar_wait(V_FULL(slot), par);
                fence_regs(st.o);
                wg_fence();
                st.pv(p, sV + slot * C::KV_BYTES, BLOCK_N);
                wg_wait<0>();
                fence_regs(st.o);
                if (lane == 0)
                    mbar_arrive(V_EMPTY(slot));
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
                const int slot = j % STAGES, prev = (j - 1) % STAGES;
                mbar_wait(K_FULL(slot), (j / STAGES) & 1);
                sched_sync();
                wg_fence();
                Consumer<C>::qk(s, sQw, sK + slot * C::KV_BYTES, BLOCK_M, BLOCK_N);
                st.rescale(corr);
                mbar_wait(V_FULL(prev), ((j - 1) / STAGES) & 1);
                fence_regs(st.o);
                wg_fence();
                st.pv(p_prev, sV + prev * C::KV_BYTES, BLOCK_N);
                sched_arrive(j);
                if constexpr (PIPELINE == 4) {
                    // FA3's order: softmax of S_j in place under the P V of tile j-1, then
                    // (P V done) pack P_j over P_{j-1}: one P tile, S doubles as fp32 P.
                    wg_wait<1>();
                    fence_regs(s);
                    if (lane == 0)
                        mbar_arrive(K_EMPTY(slot));
                    softmax_inplace(p_next, j);
                    wg_wait<0>();
                    fence_regs(st.o);
                    if (lane == 0)
                        mbar_arrive(V_EMPTY(prev));
                    Consumer<C>::pack(s, p_next);
                } else if constexpr (INTRA) {
                    wg_wait<1>(); // S_j is done; P V of tile j-1 may still run
                    fence_regs(s);
                    if (lane == 0)
                        mbar_arrive(K_EMPTY(slot));
                    softmax(p_next, j);
                    wg_wait<0>();
                    fence_regs(st.o);
                    if (lane == 0)
                        mbar_arrive(V_EMPTY(prev));
                } else {
                    wg_wait<0>();
                    fence_regs(s);
                    fence_regs(st.o);
                    if (lane == 0) {
                        mbar_arrive(K_EMPTY(slot));
                        mbar_arrive(V_EMPTY(prev));
                    }
                    softmax(p_next, j);
                }
            };
            mbar_wait(K_FULL(0), 0);
            sched_sync();
            wg_fence();
            Consumer<C>::qk(s, sQw, sK, BLOCK_M, BLOCK_N);
            sched_arrive(0);
            wg_wait<0>();
            fence_regs(s);
            if (lane == 0)
                mbar_arrive(K_EMPTY(0));
            softmax(pa, 0);
            for (int j = 1; j < n_tiles; j += 2) {
                step(j, pa, pb);
                if (j + 1 < n_tiles)
                    step(j + 1, pb, pa);
            }
            const int lt = n_tiles - 1, last = lt % STAGES;
            st.rescale(corr);
            mbar_wait(V_FULL(last), (lt / STAGES) & 1);
            fence_regs(st.o);
            wg_fence();
            if (lt & 1)
                st.pv(pb, sV + last * C::KV_BYTES, BLOCK_N);
            else
                st.pv(pa, sV + last * C::KV_BYTES, BLOCK_N);
            wg_wait<0>();
            fence_regs(st.o);
            if (lane == 0)
                mbar_arrive(V_EMPTY(last));
        }

        // ---- epilogue: O / l through this warpgroup's (now idle) rows of the Q tile ----
        float inv[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float l = st.l[h];
            l += __shfl_xor_sync(0xffffffff, l, 1);
            l += __shfl_xor_sync(0xffffffff, l, 2);
            inv[h] = l > 0.f ? 1.f / l : 0.f;
        }
        // Staging layout: sub-tile c = col/64 of the Q tile, row = this warpgroup's row,
        // 16-B chunk (col%64)/8 XOR (row & 7): conflict-free 4-B writes, 16-B reads.
        const int lrow = warp * 16 + (lane >> 2); // row within the warpgroup (and +8)
        const int t = lane & 3;
#pragma unroll
        for (int nb = 0; nb < C::NO / 4; nb++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = lrow + 8 * h, c = nb / 8, ch = (nb % 8) ^ (r & 7);
                const uint32_t v = pack_half2<C::DT>(st.o[nb * 4 + 2 * h] * inv[h],
                                                     st.o[nb * 4 + 2 * h + 1] * inv[h]);
                *reinterpret_cast<uint32_t *>(smem_gen + c * BLOCK_M * 128 + (cw * 64 + r) * 128 +
                                              ch * 16 + t * 4) = v;
            }
        named_bar_sync(1 + cw, 128);
        half *gO = reinterpret_cast<half *>(a.o) + (size_t)bh * seq * HEAD_DIM;
        constexpr int CPR = HEAD_DIM / 8; // 16-B chunks per row
#pragma unroll
        for (int i = wtid; i < 64 * CPR; i += 128) {
            const int r = i / CPR, chg = i % CPR, c = chg / 8, ch = (chg % 8) ^ (r & 7);
            const int grow = wg_row0 + r;
            if (grow < seq)
                *reinterpret_cast<uint4 *>(gO + (size_t)grow * HEAD_DIM + chg * 8) =
                    *reinterpret_cast<const uint4 *>(smem_gen + c * BLOCK_M * 128 +
                                                     (cw * 64 + r) * 128 + ch * 16);
        }
        if (a.cta_clock && wtid == 0 && cw == 0) {
            unsigned int smid;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
            const size_t cta = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
            a.cta_clock[3 * cta + 0] = t_start;
            a.cta_clock[3 * cta + 1] = clock64();
            a.cta_clock[3 * cta + 2] = smid;
        }
    }
#undef K_FULL
#undef V_FULL
#undef K_EMPTY
#undef V_EMPTY
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
    const long smem = fa_wg_smem_bytes(HEAD_DIM, BLOCK_M, BLOCK_N, STAGES);
    auto kern = fa_wgmma_kernel<HEAD_DIM, BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, PIPELINE, DT>;
    cudaError_t ce =
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (ce != cudaSuccess)
        return (int)ce;
    const dim3 grid((a->seq_len + BLOCK_M - 1) / BLOCK_M, bh);
    kern<<<grid, fa_wg_threads(CONSUMER_WG), smem, (cudaStream_t)stream>>>(tq, tk, tv, *a);
    return (int)cudaGetLastError();
}

} // namespace fawg

// One compiled point: its registry entry (kernels/fa_launch.h: fa_instance), named from its
// parameters as the family's description says (wgmma.c: wg_symbol, wg_instance). The
// config's axis[] holds the axes in traits.h's order (WG_BLOCK_M .. WG_PIPELINE).
#define FA_WG_INSTANCE_AS(DT, SYM, TEXT, D, M, N, CW, S, P)                                        \
    extern "C" const fa_instance SYM;                                                              \
    const fa_instance SYM = {{D, {M, N, CW, S, P}, FA_FAMILY_WGMMA, DT},                           \
                             TEXT,                                                                 \
                             fawg::launch<D, M, N, CW, S, P, DT>,                                  \
                             (const void *)fawg::fa_wgmma_kernel<D, M, N, CW, S, P, DT>,           \
                             fa_wg_threads(CW),                                                    \
                             fa_wg_smem_bytes(D, M, N, S),                                         \
                             M};
#define FA_WG_INSTANCE(D, M, N, CW, S, P)                                                          \
    FA_WG_INSTANCE_AS(FA_DTYPE_FP16, fa_wg_inst_d##D##_m##M##_n##N##_c##CW##_s##S##_p##P,          \
                      "d" #D ".m" #M ".n" #N ".c" #CW ".s" #S ".p" #P, D, M, N, CW, S, P)
#define FA_WG_INSTANCE_BF16(D, M, N, CW, S, P)                                                     \
    FA_WG_INSTANCE_AS(FA_DTYPE_BF16, fa_wg_inst_bf16_d##D##_m##M##_n##N##_c##CW##_s##S##_p##P,     \
                      "d" #D ".m" #M ".n" #N ".c" #CW ".s" #S ".p" #P ".bf16", D, M, N, CW, S, P)
