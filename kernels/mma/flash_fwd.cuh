// flash_fwd.cuh - the FlashAttention-forward kernel template fasweep sweeps.
//
// O = softmax(scale * Q K^T) V for fp16 Q, K, V, O laid out [B, H, S, HEAD_DIM],
// fp32 accumulation, one CTA per (BLOCK_M query rows, batch*head).
//
// The mma family (kernels/family.h; its traits: mma.h, its description for
// the planner and the registry: mma.c). The template parameters are the
// space file's axes, named as there (mma.c has the config text):
//   HEAD_DIM   64 or 128 (the k-extent of Q K^T, the n-extent of P V)
//   BLOCK_M    query rows per CTA; each warp owns BLOCK_M / NUM_WARPS of them,
//              in 16-row mma tiles (MT tiles per warp)
//   BLOCK_N    keys per inner-loop tile: the width of one S = Q K^T block
//   NUM_WARPS  warps per CTA
//   STAGES     depth of the K/V cp.async ring: tile j+STAGES-1 is in flight
//              while tile j is computed; STAGES=1 is load, wait, compute
//   SWIZZLE    0: plain row-major shared tiles (ldmatrix reads 8 rows of one
//              16-byte column: 8-way bank conflicts); 1: the 16-byte chunk
//              index is XORed with (row & 7), so those 8 rows hit 8 different
//              bank groups
// Two code paths follow from the axes and are named flags, computed by
// mma.h (so `fasweep list --json` and the seeds report them):
//   Q_IN_REGS  (fa_q_in_regs) Q fragments stay in registers for the key loop
//   LOOKAHEAD  (fa_lookahead) STAGES >= 3 and one 16-row tile per warp: Q K^T
//              of tile j+1 is issued under the softmax of tile j
//
// Both matrix products run on tensor cores through mma.sync.m16n8k16
// (f16 x f16 -> f32) with operands fetched by ldmatrix. The softmax is the
// online (running max, running sum) form in fp32, using exp2 with the scale
// pre-multiplied by log2(e); its max moves lazily (only when a row grows by
// more than 2^8), so O is rarely rescaled. The running sum is a third
// product on the tensor cores, P times a column of ones, so the softmax
// spends no FP32 add per element on it.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

// kernels/ is on the include path (-Ikernels); a kernel variant has these
// headers beside it. fa_config.h first: mma.h then skips its own path.
#include "fa_config.h"
#include "fa_device.cuh"
#include "fa_launch.h"
#include "mma.h"

namespace fa
{

// ---- PTX wrappers -----------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global->shared copy that bypasses L1; src_bytes = 0 zero-fills the
// destination (rows past the end of the sequence).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// C[16x8] += A[16x16] * B[16x8], fp16 or bf16 inputs (DT), fp32 accumulators.
template <int DT>
__device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if constexpr (DT == FA_DTYPE_BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// ---- shared-memory tile layout --------------------------------------------
//
// A tile is ROWS x HEAD_DIM halves, stored as rows of HEAD_DIM/8 16-byte chunks. Element
// offset (in halves) of chunk `ch` of row `row`:
template <int HEAD_DIM, int SWIZZLE> __device__ __forceinline__ int tile_off(int row, int ch)
{
    static_assert(HEAD_DIM / 8 >= 8, "XOR swizzle over 8 chunks needs HEAD_DIM >= 64");
    return row * HEAD_DIM + ((SWIZZLE ? (ch ^ (row & 7)) : ch) << 3);
}

// Issues cp.async for a ROWS x HEAD_DIM tile starting at sequence row `row0` of one
// head (`g` points at row 0 of that head). Rows >= seq are zero-filled.
// The planner guarantees ROWS*HEAD_DIM/8 is a multiple of THREADS.
template <int ROWS, int HEAD_DIM, int THREADS, int SWIZZLE>
__device__ __forceinline__ void load_tile(uint16_t *s, const uint16_t *g, int row0, int seq,
                                          int tid)
{
    constexpr int CPR = HEAD_DIM / 8; // 16-byte chunks per row
    constexpr int PER_THREAD = ROWS * CPR / THREADS;
    static_assert(ROWS * CPR % THREADS == 0, "tile must split into whole chunks per thread");
    constexpr int RSTEP = THREADS / CPR; // rows between a thread's chunks
    if constexpr (THREADS % CPR == 0 && RSTEP % 8 == 0) {
        // A thread's chunks sit RSTEP rows apart in one column, and RSTEP is
        // a multiple of 8, so the swizzle (row & 7) is the same for all of
        // them: one address pair per tile, then constant offsets.
        const int r0 = tid / CPR, ch = tid % CPR;
        const uint32_t dst = smem_addr(s + tile_off<HEAD_DIM, SWIZZLE>(r0, ch));
        const uint16_t *src = g + (size_t)(row0 + r0) * HEAD_DIM + ch * 8;
        const int rows_left = seq - row0 - r0; // this thread's rows still in the sequence
#pragma unroll
        for (int i = 0; i < PER_THREAD; i++) {
            const bool valid = i * RSTEP < rows_left;
            // Out-of-range rows still need a mapped address; the copy reads 0 bytes.
            cp_async_16(dst + i * RSTEP * HEAD_DIM * (int)sizeof(uint16_t),
                        valid ? src + i * RSTEP * HEAD_DIM : g, valid ? 16 : 0);
        }
    } else {
        // Few threads per row of chunks: per-chunk arithmetic.
#pragma unroll
        for (int i = 0; i < PER_THREAD; i++) {
            const int idx = tid + i * THREADS;
            const int r = idx / CPR, ch = idx % CPR;
            const bool valid = row0 + r < seq;
            const uint16_t *src = valid ? g + (size_t)(row0 + r) * HEAD_DIM + ch * 8 : g;
            cp_async_16(smem_addr(s + tile_off<HEAD_DIM, SWIZZLE>(r, ch)), src, valid ? 16 : 0);
        }
    }
}

// ---- the pieces of one key tile ----------------------------------------------
//
// Per warp, one key tile is three steps: S = Q K^T (tensor cores), the online
// softmax of S into P (MUFU and FP32 pipes), O += P V (tensor cores), each a
// function of this struct, which also holds the per-warp register state.

template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int NUM_WARPS, int SWIZZLE, int DT> struct Tile {
    static constexpr int THREADS = NUM_WARPS * 32;
    static constexpr int ROWS_PER_WARP = BLOCK_M / NUM_WARPS;
    static constexpr int MT = ROWS_PER_WARP / 16; // 16-row mma tiles per warp
    static constexpr int NB = BLOCK_N / 8;        // 8-column blocks of S
    static constexpr int DB = HEAD_DIM / 8;       // 8-column blocks of O
    static constexpr int KS = HEAD_DIM / 16;      // k-steps of Q K^T
    // The derived code paths (kernels/fa_config.h says when and why).
    static constexpr bool Q_IN_REGS = fa_q_in_regs(HEAD_DIM, BLOCK_M, NUM_WARPS);
    static_assert(BLOCK_M % (16 * NUM_WARPS) == 0, "each warp owns whole 16-row tiles");
    static_assert(BLOCK_N % 16 == 0 && HEAD_DIM % 16 == 0, "tiles are whole mma steps");

    // What one warp carries from tile to tile, all in registers.
    struct State {
        float o[MT][DB][4];
        float row_max[MT][2];
        // Row sums of P, kept as the C fragment of P x ones (16x8): every
        // column holds the sum, so [2h] is row g + 8h of the mma tile, whole
        // (no quad shuffles needed), over the fp16 P the P V product uses.
        float row_sum[MT][4];
        uint32_t q[Q_IN_REGS ? MT : 1][Q_IN_REGS ? KS : 1][4];
        uint32_t p[MT][NB / 2][4]; // P of the current tile, as mma A fragments
    };

    // ldmatrix lane -> (row, chunk) of the 16x16 block it addresses: A
    // operands and .trans B operands (V), then B operands from K rows.
    static __device__ __forceinline__ int a_row(int lane)
    {
        return (lane & 7) + ((lane >> 3) & 1) * 8;
    }
    static __device__ __forceinline__ int a_ch(int lane) { return lane >> 4; }
    static __device__ __forceinline__ int b_row(int lane) { return (lane & 7) + (lane >> 4) * 8; }
    static __device__ __forceinline__ int b_ch(int lane) { return (lane >> 3) & 1; }

    static __device__ __forceinline__ void init(State &st)
    {
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
#pragma unroll
            for (int db = 0; db < DB; db++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    st.o[mt][db][e] = 0.f;
            st.row_max[mt][0] = st.row_max[mt][1] = -INFINITY;
#pragma unroll
            for (int e = 0; e < 4; e++)
                st.row_sum[mt][e] = 0.f;
        }
    }

    static __device__ __forceinline__ void q_fragment(uint32_t r[4], const uint16_t *sQ, int row0,
                                                      int mt, int ks, int lane)
    {
        ldmatrix_x4(r, smem_addr(sQ + tile_off<HEAD_DIM, SWIZZLE>(row0 + mt * 16 + a_row(lane),
                                                                  ks * 2 + a_ch(lane))));
    }

    static __device__ __forceinline__ void load_q(State &st, const uint16_t *sQ, int row0, int lane)
    {
        if (Q_IN_REGS)
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int ks = 0; ks < KS; ks++)
                    q_fragment(st.q[Q_IN_REGS ? mt : 0][Q_IN_REGS ? ks : 0], sQ, row0, mt, ks,
                               lane);
    }

    // S = Q K^T for this warp's rows and the BLOCK_N keys of k_tile.
    static __device__ __forceinline__ void qk(float (&s)[MT][NB][4], const State &st,
                                              const uint16_t *sQ, const uint16_t *k_tile, int row0,
                                              int lane)
    {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nb = 0; nb < NB; nb++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    s[mt][nb][e] = 0.f;
#pragma unroll
        for (int ks = 0; ks < KS; ks++) {
            uint32_t qa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                if (Q_IN_REGS) {
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        qa[mt][e] = st.q[Q_IN_REGS ? mt : 0][Q_IN_REGS ? ks : 0][e];
                } else {
                    q_fragment(qa[mt], sQ, row0, mt, ks, lane);
                }
            }
#pragma unroll
            for (int p = 0; p < NB / 2; p++) {
                uint32_t kb[4]; // b0,b1 of key block 2p, then of 2p+1
                ldmatrix_x4(kb, smem_addr(k_tile + tile_off<HEAD_DIM, SWIZZLE>(
                                                       p * 16 + b_row(lane), ks * 2 + b_ch(lane))));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816<DT>(s[mt][2 * p], qa[mt], kb[0], kb[1]);
                    mma_16816<DT>(s[mt][2 * p + 1], qa[mt], kb[2], kb[3]);
                }
            }
        }
    }

    // Keys past the sequence end and, when causal, above the diagonal get
    // -inf. n0: first key of the tile; m_row0: first query row of the warp.
    static __device__ __forceinline__ void mask(float (&s)[MT][NB][4], int n0, int m_row0, int seq,
                                                int causal, int lane)
    {
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nb = 0; nb < NB; nb++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int col = n0 + nb * 8 + 2 * t + (e & 1);
                    const int row = m_row0 + mt * 16 + g + (e >> 1) * 8;
                    if (col >= seq || (causal && col > row))
                        s[mt][nb][e] = -INFINITY;
                }
    }

    // Online softmax with a lazy rescale. The running max (the base of the
    // exp2) moves only when some row of the warp would grow by more than
    // 2^RESCALE_SLACK; otherwise the stale base is kept, P may reach
    // 2^RESCALE_SLACK (safe in fp16), and O and the running sum skip their
    // rescale. O / l is unchanged: both always share one base. After the
    // first tile the max of typical data rarely grows that much, so the
    // per-tile O rescale (one FMUL per O element, issue-bound code) and its
    // exp2 mostly vanish. Then P = exp2(S * scale*log2e - base), packed to
    // fp16 A fragments in st.p.
    static constexpr float RESCALE_SLACK = 8.f;

    static __device__ __forceinline__ void softmax(float (&s)[MT][NB][4], State &st,
                                                   float scale_log2)
    {
        float tile_max[MT][2];
        bool grow = false;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) { // rows g and g+8
                float mx = -INFINITY;
#pragma unroll
                for (int nb = 0; nb < NB; nb++)
                    mx = fmaxf(mx, fmaxf(s[mt][nb][2 * h], s[mt][nb][2 * h + 1]));
                // The 4 threads of a quad hold one row between them.
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 2));
                tile_max[mt][h] = mx * scale_log2;
                // -inf + slack stays -inf: a row's first finite tile grows.
                grow |= tile_max[mt][h] > st.row_max[mt][h] + RESCALE_SLACK;
            }
        // One decision per warp, so the branch never diverges.
        if (__any_sync(0xffffffff, grow)) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const float m_new = fmaxf(st.row_max[mt][h], tile_max[mt][h]);
                    // A row with every key masked so far keeps m = -inf; use
                    // 0 as its base so exp2 gives 0, never NaN.
                    const float corr =
                        fast_exp2(st.row_max[mt][h] - (m_new == -INFINITY ? 0.f : m_new));
                    st.row_max[mt][h] = m_new;
                    st.row_sum[mt][2 * h] *= corr;
                    st.row_sum[mt][2 * h + 1] *= corr;
#pragma unroll
                    for (int db = 0; db < DB; db++) {
                        st.o[mt][db][2 * h] *= corr;
                        st.o[mt][db][2 * h + 1] *= corr;
                    }
                }
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float m = st.row_max[mt][h];
                const float base = m == -INFINITY ? 0.f : m;
#pragma unroll
                for (int nb = 0; nb < NB; nb++) {
                    s[mt][nb][2 * h] = fast_exp2(fmaf(s[mt][nb][2 * h], scale_log2, -base));
                    s[mt][nb][2 * h + 1] = fast_exp2(fmaf(s[mt][nb][2 * h + 1], scale_log2, -base));
                }
            }
            // The C layout of two adjacent 16x8 S blocks is the A layout of
            // one 16x16 P block: no shuffles needed.
#pragma unroll
            for (int kp = 0; kp < NB / 2; kp++) {
                st.p[mt][kp][0] = pack_half2<DT>(s[mt][2 * kp][0], s[mt][2 * kp][1]);
                st.p[mt][kp][1] = pack_half2<DT>(s[mt][2 * kp][2], s[mt][2 * kp][3]);
                st.p[mt][kp][2] = pack_half2<DT>(s[mt][2 * kp + 1][0], s[mt][2 * kp + 1][1]);
                st.p[mt][kp][3] = pack_half2<DT>(s[mt][2 * kp + 1][2], s[mt][2 * kp + 1][3]);
            }
        }
    }

    // O += P V: V rows are keys (the k dim), so B comes through ldmatrix.trans.
    // The row sums ride along as P x ones: one more mma per 16 keys, with a
    // constant B operand (no shared-memory read), in place of one FP32 add
    // per element in the softmax, which is limited by instruction issue.
    static __device__ __forceinline__ void pv(State &st, const uint16_t *v_tile, int lane)
    {
        constexpr uint32_t ONES = DT == FA_DTYPE_BF16 ? 0x3F803F80u  // bf16x2(1.0, 1.0)
                                                      : 0x3C003C00u; // half2(1.0, 1.0)
#pragma unroll
        for (int kp = 0; kp < NB / 2; kp++) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                mma_16816<DT>(st.row_sum[mt], st.p[mt][kp], ONES, ONES);
#pragma unroll
            for (int dp = 0; dp < DB / 2; dp++) {
                uint32_t vb[4]; // b0,b1 of d block 2dp, then of 2dp+1
                ldmatrix_x4_trans(
                    vb, smem_addr(v_tile + tile_off<HEAD_DIM, SWIZZLE>(kp * 16 + a_row(lane),
                                                                       dp * 2 + a_ch(lane))));
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mma_16816<DT>(st.o[mt][2 * dp], st.p[mt][kp], vb[0], vb[1]);
                    mma_16816<DT>(st.o[mt][2 * dp + 1], st.p[mt][kp], vb[2], vb[3]);
                }
            }
        }
    }

    // The mask, where S tile j needs it: only the last tile and diagonal
    // tiles do (a uniform branch).
    static __device__ __forceinline__ void mask_tile(float (&s)[MT][NB][4], int j, int m_row0,
                                                     int m_cta0, const fa_args &a, int lane)
    {
        const int n0 = j * BLOCK_N;
        if (n0 + BLOCK_N > a.seq_len || (a.causal && n0 + BLOCK_N - 1 > m_cta0))
            mask(s, n0, m_row0, a.seq_len, a.causal, lane);
    }

    // O / l, fp16, staged through this warp's own rows of sQ so the global
    // stores are whole 16-byte chunks.
    static __device__ __forceinline__ void store_o(const State &st, uint16_t *sQ, uint16_t *gO,
                                                   int m0, int row0, int seq, int lane)
    {
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float l = st.row_sum[mt][2 * h];
                const float inv = l > 0.f ? 1.f / l : 0.f;
                const int r = row0 + mt * 16 + g + 8 * h;
#pragma unroll
                for (int db = 0; db < DB; db++) {
                    const uint32_t v =
                        pack_half2<DT>(st.o[mt][db][2 * h] * inv, st.o[mt][db][2 * h + 1] * inv);
                    *reinterpret_cast<uint32_t *>(sQ + tile_off<HEAD_DIM, SWIZZLE>(r, db) + 2 * t) =
                        v;
                }
            }
        }
        __syncwarp();
        constexpr int CPR = HEAD_DIM / 8;
#pragma unroll
        for (int i = lane; i < ROWS_PER_WARP * CPR; i += 32) {
            const int r = row0 + i / CPR, ch = i % CPR;
            if (m0 + r < seq)
                *reinterpret_cast<uint4 *>(gO + (size_t)(m0 + r) * HEAD_DIM + ch * 8) =
                    *reinterpret_cast<const uint4 *>(sQ + tile_off<HEAD_DIM, SWIZZLE>(r, ch));
        }
    }
};

// K and V of key tile `tile` into its ring slot (tile % STAGES).
template <int BLOCK_N, int HEAD_DIM, int THREADS, int SWIZZLE>
__device__ __forceinline__ void load_kv(uint16_t *sK, uint16_t *sV, const uint16_t *gK,
                                        const uint16_t *gV, int tile, int stages, int seq, int tid)
{
    const int slot = tile % stages;
    load_tile<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sK + slot * BLOCK_N * HEAD_DIM, gK,
                                                   tile * BLOCK_N, seq, tid);
    load_tile<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sV + slot * BLOCK_N * HEAD_DIM, gV,
                                                   tile * BLOCK_N, seq, tid);
}

// One tile of the look-ahead loop: s_cur holds S of tile j (Q K^T done),
// s_next receives S of tile j+1. cp.async groups as in the kernel below;
// at step j the group of tile j+1 has STAGES-2 younger ones.
template <typename T, int BLOCK_N, int HEAD_DIM, int STAGES, int SWIZZLE>
__device__ __forceinline__ void
lookahead_step(float (&s_cur)[T::MT][T::NB][4], float (&s_next)[T::MT][T::NB][4],
               typename T::State &st, int j, int n_tiles, const uint16_t *sQ, uint16_t *sK,
               uint16_t *sV, const uint16_t *gK, const uint16_t *gV, int m0, int row0,
               const fa_args &a, float scale_log2, int tid, int lane)
{
    // Refill the slot tile j-1 used (freed by the barrier that ended j-1).
    const int jn = j + STAGES - 1;
    if (j >= 1 && jn < n_tiles)
        load_kv<BLOCK_N, HEAD_DIM, T::THREADS, SWIZZLE>(sK, sV, gK, gV, jn, STAGES, a.seq_len, tid);
    if (j >= 1)
        cp_async_commit();
    // The mask goes first: a branch between the two products would end the
    // block the compiler interleaves.
    T::mask_tile(s_cur, j, m0 + row0, m0, a, lane);
    cp_async_wait<STAGES - 2>(); // V_j and K_{j+1} have landed
    __syncthreads();
    const int slot = j % STAGES;
    // Two straight-line arms rather than a branch around Q K^T alone, for
    // the same reason.
    if (j + 1 < n_tiles) {
        T::qk(s_next, st, sQ, sK + ((j + 1) % STAGES) * BLOCK_N * HEAD_DIM, row0, lane);
        T::softmax(s_cur, st, scale_log2);
        T::pv(st, sV + slot * BLOCK_N * HEAD_DIM, lane);
    } else {
        T::softmax(s_cur, st, scale_log2);
        T::pv(st, sV + slot * BLOCK_N * HEAD_DIM, lane);
    }
    __syncthreads(); // every warp is done with slot j % STAGES
}

// ---- the kernel ----------------------------------------------------------------
//
// Each warp runs, per key tile j: wait for the tile, S = Q K^T, softmax, O += P V.
// One __syncthreads per tile frees its ring slot for the refill. The first
// tile is special: its K and V are separate cp.async groups, so Q K^T starts
// as soon as Q and K have landed while V still streams in (on a short
// sequence that first wait is a large part of the kernel).
//
// cp.async groups, in commit order: Q, K_0, V_0, KV_1 .. KV_{STAGES-2}
// (prologue), then one per iteration j: KV_{j+STAGES-1} (empty past the end,
// or for tile 0 when STAGES = 1, which the prologue already loaded).
template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int NUM_WARPS, int STAGES, int SWIZZLE,
          int DT = FA_DTYPE_FP16>
__global__ void __launch_bounds__(NUM_WARPS * 32) flash_fwd_kernel(const fa_args a)
{
    using T = Tile<HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, SWIZZLE, DT>;
    constexpr int THREADS = T::THREADS;
    // Groups younger than K_0 at the first wait: V_0, KV_1..KV_{STAGES-2}
    // and iteration 0's.
    constexpr int AFTER_K0 = STAGES > 2 ? STAGES : 2;

    extern __shared__ __align__(128) unsigned char smem_raw[];
    uint16_t *sQ = reinterpret_cast<uint16_t *>(smem_raw);
    uint16_t *sK = sQ + BLOCK_M * HEAD_DIM;          // STAGES tiles of BLOCK_N x HEAD_DIM
    uint16_t *sV = sK + STAGES * BLOCK_N * HEAD_DIM; // STAGES tiles of BLOCK_N x HEAD_DIM

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int seq = a.seq_len;
    // Causal: launch the longest rows (last query tiles) first.
    const int m_tile = a.causal ? (gridDim.x - 1 - blockIdx.x) : blockIdx.x;
    const int m0 = m_tile * BLOCK_M;
    // Query slice blockIdx.y = b * heads + h reads K/V slice b * kv_heads + h / group, which
    // is blockIdx.y / group (heads = kv_heads * group): GQA and MQA need no K/V copies.
    const size_t head_off = (size_t)blockIdx.y * seq * HEAD_DIM;
    const size_t kv_off = (size_t)(blockIdx.y / (a.heads / a.kv_heads)) * seq * HEAD_DIM;
    const uint16_t *gQ = reinterpret_cast<const uint16_t *>(a.q) + head_off;
    const uint16_t *gK = reinterpret_cast<const uint16_t *>(a.k) + kv_off;
    const uint16_t *gV = reinterpret_cast<const uint16_t *>(a.v) + kv_off;
    uint16_t *gO = reinterpret_cast<uint16_t *>(a.o) + head_off;

    unsigned long long t_start = 0;
    if (a.cta_clock && tid == 0)
        t_start = fa_cta_clock_now();

    // Key tiles this CTA visits: all of them, or up to the diagonal.
    int n_tiles = (seq + BLOCK_N - 1) / BLOCK_N;
    if (a.causal)
        n_tiles = min(n_tiles, (m0 + BLOCK_M + BLOCK_N - 1) / BLOCK_N);

    // Prologue: Q, K_0, V_0, then tiles 1..STAGES-2, one group each.
    load_tile<BLOCK_M, HEAD_DIM, THREADS, SWIZZLE>(sQ, gQ, m0, seq, tid);
    cp_async_commit();
    load_tile<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sK, gK, 0, seq, tid);
    cp_async_commit();
    load_tile<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sV, gV, 0, seq, tid);
    cp_async_commit();
#pragma unroll
    for (int k = 1; k < STAGES - 1; k++) {
        if (k < n_tiles)
            load_kv<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sK, sV, gK, gV, k, STAGES, seq, tid);
        cp_async_commit();
    }

    const float scale_log2 = a.softmax_scale * 1.44269504088896340736f;
    const int row0 = warp * T::ROWS_PER_WARP; // this warp's first row in the CTA
    typename T::State st;
    T::init(st);

    if constexpr (fa_lookahead(HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES)) {
        // Q K^T of tile j+1 is issued in the same straight-line block as the
        // softmax of tile j, so the tensor cores work on it while the FP32
        // and MUFU pipes do the softmax (one warp's instructions interleaved
        // by the compiler; no other warp is needed to fill the gap). Tile
        // j+1 must be resident while tile j's V is in use: STAGES >= 3.
        // Two S tiles swap roles every tile (the step is called twice per
        // loop turn with the arrays swapped: no register copies). Measured
        // -3 % hot / -2.5 % cold on such instances (kernels/NOTES-perf.md v16).
        float sa[T::MT][T::NB][4], sb[T::MT][T::NB][4];
        if (STAGES - 1 < n_tiles)
            load_kv<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sK, sV, gK, gV, STAGES - 1, STAGES, seq,
                                                         tid);
        cp_async_commit();
        cp_async_wait<AFTER_K0>(); // Q and K_0 have landed
        __syncthreads();
        T::load_q(st, sQ, row0, lane);
        T::qk(sa, st, sQ, sK, row0, lane);
        for (int j = 0; j < n_tiles; j += 2) {
            lookahead_step<T, BLOCK_N, HEAD_DIM, STAGES, SWIZZLE>(
                sa, sb, st, j, n_tiles, sQ, sK, sV, gK, gV, m0, row0, a, scale_log2, tid, lane);
            if (j + 1 < n_tiles)
                lookahead_step<T, BLOCK_N, HEAD_DIM, STAGES, SWIZZLE>(sb, sa, st, j + 1, n_tiles,
                                                                      sQ, sK, sV, gK, gV, m0, row0,
                                                                      a, scale_log2, tid, lane);
        }
    } else {
        for (int j = 0; j < n_tiles; j++) {
            // Refill the slot tile j-1 used (freed by the barrier that ended j-1).
            const int jn = j + STAGES - 1;
            if (jn >= 1 && jn < n_tiles)
                load_kv<BLOCK_N, HEAD_DIM, THREADS, SWIZZLE>(sK, sV, gK, gV, jn, STAGES, seq, tid);
            cp_async_commit();
            if (j == 0)
                cp_async_wait<AFTER_K0>(); // Q and K_0 have landed
            else
                cp_async_wait<STAGES - 1>(); // tile j has landed
            __syncthreads();
            if (j == 0)
                T::load_q(st, sQ, row0, lane);
            const int slot = j % STAGES;
            float s[T::MT][T::NB][4];
            T::qk(s, st, sQ, sK + slot * BLOCK_N * HEAD_DIM, row0, lane);
            if (j == 0) {
                cp_async_wait<AFTER_K0 - 1>(); // V_0 too
                __syncthreads();
            }
            T::mask_tile(s, j, m0 + row0, m0, a, lane);
            T::softmax(s, st, scale_log2);
            T::pv(st, sV + slot * BLOCK_N * HEAD_DIM, lane);
            __syncthreads(); // every warp is done with slot j % STAGES
        }
    }
    cp_async_wait<0>(); // drain (empty) trailing groups before reusing sQ
    T::store_o(st, sQ, gO, m0, row0, seq, lane);

    if (a.cta_clock) {
        __syncthreads();
        if (tid == 0)
            fa_cta_clock_write(a.cta_clock, (size_t)blockIdx.y * gridDim.x + blockIdx.x, t_start);
    }
}

// The registry entry's shared memory: fa_smem_bytes of the instance's config.
template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int NUM_WARPS, int STAGES, int SWIZZLE, int DT>
long smem_bytes()
{
    const fa_config c = {
        HEAD_DIM, {BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE}, FA_FAMILY_MMA, DT};
    return fa_smem_bytes(&c);
}

// Host side: the launch every instance uses. The dynamic shared-memory size
// comes from fa_smem_bytes(), the function the planner rejects on.
template <int HEAD_DIM, int BLOCK_M, int BLOCK_N, int NUM_WARPS, int STAGES, int SWIZZLE, int DT>
int launch(const fa_args *a, fa_stream stream)
{
    const fa_config c = {
        HEAD_DIM, {BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE}, FA_FAMILY_MMA, DT};
    if (!fa_args_fit(a, HEAD_DIM, DT))
        return (int)cudaErrorInvalidValue;
    const long smem = fa_smem_bytes(&c);
    auto kern = flash_fwd_kernel<HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE, DT>;
    if (smem > 48 * 1024) {
        // Above 48 KB a kernel must opt in; the space's limit decides
        // whether such a point is ever planned. (Static shared memory on
        // top of 48 KB dynamic needs the opt-in too: fa_instance_attrs, which
        // the engine calls before any launch, sets it then.)
        cudaError_t e =
            cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess)
            return (int)e;
    }
    const dim3 grid((a->seq_len + BLOCK_M - 1) / BLOCK_M, a->batch * a->heads);
    kern<<<grid, NUM_WARPS * 32, smem, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

} // namespace fa

// One compiled point: its launch function and registry entry, named from
// its parameters. Generated shard files (build/gen/inst_*.cu) expand these:
// FA_INSTANCE for fp16, FA_INSTANCE_BF16 for bf16 (the family's instance()).
#define FA_INSTANCE_AS(DT, SYM, TEXT, HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE)      \
    extern "C" const fa_instance SYM;                                                              \
    const fa_instance SYM = {                                                                      \
        {HEAD_DIM, {BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE}, FA_FAMILY_MMA, DT},             \
        TEXT,                                                                                      \
        fa::launch<HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE, DT>,                    \
        (const void *)                                                                             \
            fa::flash_fwd_kernel<HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE, DT>,      \
        NUM_WARPS * 32,                                                                            \
        fa::smem_bytes<HEAD_DIM, BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE, DT>(),              \
        BLOCK_M};
#define FA_INSTANCE(D, M, N, W, S, Z)                                                              \
    FA_INSTANCE_AS(FA_DTYPE_FP16, fa_inst_d##D##_m##M##_n##N##_w##W##_s##S##_z##Z,                 \
                   "d" #D ".m" #M ".n" #N ".w" #W ".s" #S ".z" #Z, D, M, N, W, S, Z)
#define FA_INSTANCE_BF16(D, M, N, W, S, Z)                                                         \
    FA_INSTANCE_AS(FA_DTYPE_BF16, fa_inst_bf16_d##D##_m##M##_n##N##_w##W##_s##S##_z##Z,            \
                   "d" #D ".m" #M ".n" #N ".w" #W ".s" #S ".z" #Z ".bf16", D, M, N, W, S, Z)
