// wgmma_ops.h - wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} wrappers, one per N and
// element type (Wgmma<N, DT>):
//   ss(d, desc_a, desc_b, scale_d): A and B from shared memory (both K-major);
//   rs(d, a, desc_b, scale_d): A from registers (4 x b32 per thread), B from shared memory,
//     transposed (MN-major, i.e. V stored [key][d]).
// d: N/2 fp32 accumulators per thread; scale_d 0 computes D = A*B, 1 adds to D.
//
// Inline asm must name every accumulator as its own operand, so one macro, FAWG_OPS, stamps
// both wrappers of an N from a list of the accumulator indices 1..N/2-1 (FAWG_1_<N/2-1>, each
// list extending the one before); index 0 is written out so that the lists need no leading or
// trailing comma. The PTX text is the one gen_wgmma_ops.py (branch h-wgmma) wrote, letter for
// letter. Adding an N: one list line and one FAWG_OPS line (and traits.h's rule).
#pragma once
#include <stdint.h>

namespace fawg
{

template <int N, int DT> struct Wgmma; // DT: FA_DTYPE_FP16 0, FA_DTYPE_BF16 1

// Accumulator n: its slot in the PTX operand list, and its "+f" operand.
#define FAWG_SLOT(n) ", %" #n
#define FAWG_ACC(n) , "+f"(d[n])

// clang-format off
// FAWG_OPS(N, K = N/2, LIST = FAWG_1_<K-1>, K .. K+5): the operand numbers after the
// accumulators are spelled out because the preprocessor cannot add.
#define FAWG_OPS(N, K, LIST, k0, k1, k2, k3, k4, k5) FAWG_OPS_T(N, 0, f16, K, LIST, k0, k1, k2, k3, k4, k5) FAWG_OPS_T(N, 1, bf16, K, LIST, k0, k1, k2, k3, k4, k5)
#define FAWG_OPS_T(N, DT, TY, K, LIST, k0, k1, k2, k3, k4, k5)                                               \
    template <> struct Wgmma<N, DT> {                                                                  \
        static __device__ __forceinline__ void ss(float (&d)[K], uint64_t da, uint64_t db,         \
                                                  int scale_d)                                     \
        {                                                                                          \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #k2 ", 0;\n"                         \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY "." #TY " "                 \
                         "{%0" LIST(FAWG_SLOT) "}, "                                               \
                         "%" #k0 ", %" #k1 ", p, 1, 1, 0, 0;\n}\n"                                 \
                         : "+f"(d[0]) LIST(FAWG_ACC)                                               \
                         : "l"(da), "l"(db), "r"(scale_d));                                        \
        }                                                                                          \
        static __device__ __forceinline__ void rs(float (&d)[K], const uint32_t (&a)[4],           \
                                                  uint64_t db, int scale_d)                        \
        {                                                                                          \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #k5 ", 0;\n"                         \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TY "." #TY " "                 \
                         "{%0" LIST(FAWG_SLOT) "}, "                                               \
                         "{%" #k0 ", %" #k1 ", %" #k2 ", %" #k3 "}, %" #k4 ", p, 1, 1, 1;\n}\n"    \
                         : "+f"(d[0]) LIST(FAWG_ACC)                                               \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d));     \
        }                                                                                          \
    };

#define FAWG_1_31(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
FAWG_OPS(64, 32, FAWG_1_31, 32, 33, 34, 35, 36, 37)
#define FAWG_1_39(X) FAWG_1_31(X) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39)
FAWG_OPS(80, 40, FAWG_1_39, 40, 41, 42, 43, 44, 45)
#define FAWG_1_47(X) FAWG_1_39(X) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)
FAWG_OPS(96, 48, FAWG_1_47, 48, 49, 50, 51, 52, 53)
#define FAWG_1_63(X) FAWG_1_47(X) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
FAWG_OPS(128, 64, FAWG_1_63, 64, 65, 66, 67, 68, 69)
#define FAWG_1_79(X) FAWG_1_63(X) X(64) X(65) X(66) X(67) X(68) X(69) X(70) X(71) X(72) X(73) X(74) X(75) X(76) X(77) X(78) X(79)
FAWG_OPS(160, 80, FAWG_1_79, 80, 81, 82, 83, 84, 85)
#define FAWG_1_87(X) FAWG_1_79(X) X(80) X(81) X(82) X(83) X(84) X(85) X(86) X(87)
FAWG_OPS(176, 88, FAWG_1_87, 88, 89, 90, 91, 92, 93)
#define FAWG_1_95(X) FAWG_1_87(X) X(88) X(89) X(90) X(91) X(92) X(93) X(94) X(95)
FAWG_OPS(192, 96, FAWG_1_95, 96, 97, 98, 99, 100, 101)
#define FAWG_1_127(X) FAWG_1_95(X) X(96) X(97) X(98) X(99) X(100) X(101) X(102) X(103) X(104) X(105) X(106) X(107) X(108) X(109) X(110) X(111) X(112) X(113) X(114) X(115) X(116) X(117) X(118) X(119) X(120) X(121) X(122) X(123) X(124) X(125) X(126) X(127)
FAWG_OPS(256, 128, FAWG_1_127, 128, 129, 130, 131, 132, 133)
// clang-format on

#undef FAWG_OPS
#undef FAWG_OPS_T
#undef FAWG_SLOT
#undef FAWG_ACC

} // namespace fawg
