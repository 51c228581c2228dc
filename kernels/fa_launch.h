/* fa_launch.h - what a caller hands one FlashAttention-forward launch, and
 * the table of compiled instances (the registry) the C driver reads.
 *
 * Tensors are [batch, heads, seq_len, head_dim], fp16, contiguous. All
 * functions here return a cudaError_t value as an int: 0 (cudaSuccess) on
 * success; any other value names the CUDA failure (cudaGetErrorString()).
 */
#ifndef FA_LAUNCH_H
#define FA_LAUNCH_H

#include <stddef.h>

#include "fa_config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *fa_stream; /* == cudaStream_t, without the header */

/* One attention forward problem and its device buffers. */
typedef struct fa_args {
    const void *q, *k, *v; /* Q [B,H,S,D], K and V [B,KVH,S,D] of dtype, device memory */
    void *o;               /* [B,H,S,D] output of dtype, device memory */
    int batch, heads, seq_len, head_dim;
    int kv_heads;        /* KVH: query head h reads K/V head h / (heads / kv_heads) */
    int dtype;           /* FA_DTYPE_*: an instance refuses a problem of another */
    int causal;          /* 1: key j is masked for query i when j > i */
    float softmax_scale; /* usually 1/sqrt(head_dim) */
    /* Optional clock64 instrumentation: when non-NULL, one thread writes
     * {start cycle, end cycle, SM id} of each query tile at cta_clock[3*tile]
     * (tile = the CTA's linear index where a CTA computes one tile). Costs two
     * uniform branches per tile when NULL. In a build with -DFA_CTA_CLOCK_NS=1
     * (fa_cta_clock_ns) the two times are the GPU's nanosecond timer instead. */
    unsigned long long *cta_clock;
} fa_args;

/* Whether an instance built for head_dim and dtype can run a's problem: its
 * head_dim and dtype, positive sizes, and heads a multiple of kv_heads
 * (every launch checks this first and refuses with cudaErrorInvalidValue). */
static inline int fa_args_fit(const fa_args *a, int head_dim, int dtype)
{
    return a->head_dim == head_dim && a->dtype == dtype && a->seq_len >= 1 && a->batch >= 1 &&
           a->heads >= 1 && a->kv_heads >= 1 && a->heads % a->kv_heads == 0;
}

/* Launches one compiled instance asynchronously on `stream`. Returns the
 * launch error (argument or configuration errors appear here; faults inside
 * the kernel appear at the next synchronisation). */
typedef int (*fa_launch_fn)(const fa_args *a, fa_stream stream);

/* One compiled instance: the registry entry a family's instance macro
 * defines (FA_INSTANCE for mma). The fields after `kernel` say what the
 * family-neutral code (registry, engine) needs to know of a launch without
 * knowing the family. */
typedef struct fa_instance {
    fa_config cfg;    /* cfg.family: the family it belongs to */
    const char *name; /* fa_config_format text */
    fa_launch_fn launch;
    const void *kernel; /* the __global__ function, for attribute queries */
    int threads;        /* threads per CTA */
    long smem_bytes;    /* dynamic shared memory a launch asks for */
    int block_rows;     /* query rows per tile: ceil(S / rows) x B x H query tiles */
} fa_instance;

/* Query tiles of a launch of `in` for `a`: its CTAs where each CTA computes one
 * tile, and the clock64 records it writes (fa_args.cta_clock: one per tile, also
 * from a persistent kernel whose CTAs take several). */
long fa_instance_grid_ctas(const fa_instance *in, const fa_args *a);

/* 1 where the kernels were built with -DFA_CTA_CLOCK_NS=1: their fa_args.cta_clock
 * times are %globaltimer nanoseconds, one clock for every SM (a diagnostic:
 * fa_bench --timeline); 0 where they are each SM's own cycles (clock64). The
 * kernels' fa_cta_clock_now and fa_cta_clock_ns both read FA_CTA_CLOCK_IS_NS. */
#if defined(FA_CTA_CLOCK_NS) && FA_CTA_CLOCK_NS
#define FA_CTA_CLOCK_IS_NS 1
#else
#define FA_CTA_CLOCK_IS_NS 0
#endif
int fa_cta_clock_ns(void);

/* Resource use of one instance on the current device. */
typedef struct fa_attrs {
    int regs;              /* registers per thread */
    int smem_static;       /* bytes of static shared memory */
    long smem_dynamic;     /* bytes of dynamic shared memory a launch asks */
    int local_bytes;       /* local memory per thread (spills + stack) */
    int max_blocks_per_sm; /* occupancy at that dynamic smem, 0 if it cannot run */
} fa_attrs;

/* The compiled instances of every family, in fa_config_cmp order (family
 * first): the registry is keyed by family + config. */
int fa_registry_count(void);
const fa_instance *fa_registry_get(int i);
/* The instance compiled for `c`, or NULL if this binary does not hold it. */
const fa_instance *fa_registry_find(const fa_config *c);
/* Hash of the kernel sources, flags and instance list this binary was built
 * from (hex text), and the architectures it holds SASS for ("89,90"). */
const char *fa_build_id(void);
const char *fa_build_archs(void);

/* Shared memory a kernel may use without opting in (cudaFuncSetAttribute
 * of MaxDynamicSharedMemorySize): static and dynamic together. */
#define FA_SMEM_DEFAULT_LIMIT 49152
/* Whether a kernel with `dynamic` bytes of dynamic and `stat` bytes of
 * static shared memory must opt in to launch. */
static inline int fa_smem_optin(long dynamic, long stat)
{
    return dynamic + stat > FA_SMEM_DEFAULT_LIMIT;
}

/* Fills *out for instance `in` on the current device; raises the kernel's
 * dynamic shared memory limit first when its static and dynamic shared
 * memory together need more than FA_SMEM_DEFAULT_LIMIT. */
int fa_instance_attrs(const fa_instance *in, fa_attrs *out);

/* fp32 reference attention on the GPU: o_ref is float [B,H,S,D], device
 * memory; a's dtype and kv_heads say how to read Q, K, V. Plain on purpose:
 * exact expf, two passes over the keys, fp32 throughout, no code shared with
 * the kernels (kernels/reference.cu: a row is D/32 lanes, K and V tiles in
 * shared memory). */
int fa_reference_launch(const fa_args *a, float *o_ref, fa_stream stream);
/* The same, rounding P (the 16-bit operand of P V) and O to a's dtype as
 * any kernel of that dtype must, into o: [B,H,S,D] of that dtype, as a kernel's output. Its
 * distance to fa_reference_launch is what the dtype itself costs. */
int fa_reference_rounded_launch(const fa_args *a, void *o, fa_stream stream);

/* ---- measuring helpers (kernels/spin.cu) ---------------------------------------------------- */

/* What a clock probe saw: SM cycles (clock64) and nanoseconds (%globaltimer)
 * at its start and end, on one SM. The SM clock over the probe, in MHz, is
 * (c1 - c0) * 1000 / (g1 - g0). */
typedef struct fa_clock_probe {
    unsigned long long c0, c1, g0, g1;
} fa_clock_probe;

/* Queues a one-thread kernel that busy-waits `cycles` SM clocks: holds the
 * stream while the host queues timed launches behind it, and, when probe is
 * not NULL (device-visible memory), tells the clock it ran at. */
int fa_spin_launch(long long cycles, fa_clock_probe *probe, fa_stream stream);

/* Queues a tensor-core load on every SM (mma.sync on registers, a few CTAs
 * per SM) for about `ms` milliseconds of %globaltimer; each of its `ctas`
 * CTAs writes the clock of its second half into probes[cta]: what the SMs
 * run at under a sustained load (the clock calibration). */
int fa_load_launch(int ctas, double ms, fa_clock_probe *probes, fa_stream stream);

/* ---- checking helpers (kernels/check.cu) ----------------------------------------------------- */

/* Fills n values of dtype (FA_DTYPE_*) with uniform random numbers in [lo,
 * hi], element i a hash of (seed, i): fresh inputs with a fresh seed, no
 * host copy. */
int fa_fill_random_launch(void *out, size_t n, int dtype, unsigned long long seed, float lo,
                          float hi, fa_stream stream);

/* Sums of an fp16 or bf16 (dtype) output against an fp32 reference, over n elements, in
 * double: what the correctness gate needs (sweep/stats.h turns them into
 * rel_l2 and max_abs). A NaN or inf output counts in nonfinite (first_bad
 * the lowest such index, ~0ULL when none) and adds nothing to the sums; a
 * non-finite reference counts in ref_nonfinite. With out NULL only the
 * reference is looked at. */
typedef struct fa_compare_sums {
    double diff2, ref2, max_abs;
    unsigned long long nonfinite, first_bad, ref_nonfinite;
} fa_compare_sums;

/* Bytes of device scratch fa_compare_launch needs. */
size_t fa_compare_scratch_bytes(void);

/* Computes the sums into *sums (device memory) with a fixed grid and a
 * fixed reduction order, so the same data gives the same bits. scratch:
 * fa_compare_scratch_bytes() of device memory. */
int fa_compare_launch(const void *out, int dtype, const float *ref, size_t n, void *scratch,
                      fa_compare_sums *sums, fa_stream stream);

/* ---- checking timed launches (kernels/check.cu; sweep/guard.h says how they are used) ------ */

/* Sign patterns over an fp16 tensor of shape [slices, seq_len, head_dim]:
 * element (slice s, column c) belongs to unit (s mod FA_SIGN_SLICES) *
 * FA_SIGN_GROUPS + c / (head_dim / FA_SIGN_GROUPS), and a pattern holds one
 * bit per unit. Attention is linear in V column by column (O = P V, P from
 * Q and K alone), so flipping the signs of V's elements in a pattern flips
 * exactly the same elements of the exact output: new inputs whose answer is
 * known without a new reference. head_dim is a multiple of FA_SIGN_GROUPS. */
#define FA_SIGN_GROUPS 8
#define FA_SIGN_SLICES 128
#define FA_SIGN_WORDS (FA_SIGN_SLICES * FA_SIGN_GROUPS / 64)
typedef struct fa_signs {
    unsigned long long w[FA_SIGN_WORDS];
} fa_signs;

/* A problem as the checks see it: Q and O [slices, seq_len, head_dim], K
 * and V [kv_slices, seq_len, head_dim] (output slice s reads K/V slice s /
 * (slices / kv_slices)), elements of dtype. A tensor hashed alone (V under
 * its signs) has slices = kv_slices = its own slices. */
typedef struct fa_shape {
    int slices, seq_len, head_dim; /* slices = batch * heads */
    int kv_slices;                 /* batch * kv_heads */
    int dtype;                     /* FA_DTYPE_* */
} fa_shape;

/* One launch as the checks see it (device memory when a kernel reads it). */
typedef struct fa_slot {
    void *o;          /* the launch's output */
    void *v;          /* its V */
    const float *ref; /* the reference of its inputs with no sign flipped */
    fa_signs flip;    /* the units of v flipped right before its sample */
    fa_signs signs;   /* the units of v flipped after that: its expected output is ref with
                         these signs */
} fa_slot;

/* Flips the signs of slots[i].v by slots[i].flip, for i < n. */
int fa_flip_launch(const fa_slot *slots, int n, fa_shape shape, fa_stream stream);

/* Device scratch fa_check_slots_launch needs for n slots. */
size_t fa_check_scratch_bytes(int n_slots);

/* Compares slots[i].o with slots[i].ref under slots[i].signs, for i < n,
 * on the rows a hash of (seed, i, row) picks with probability 2^-row_shift
 * (every row when row_shift is 0), into sums[i] (device-visible), as
 * fa_compare_launch. */
int fa_check_slots_launch(const fa_slot *slots, int n, fa_shape shape, int row_shift,
                          unsigned long long seed, void *scratch, fa_compare_sums *sums,
                          fa_stream stream);

/* Writes every element of slots[i].o, for i < n (at most 65535), as a launch
 * under slots[i].signs computes it: slots[i].ref with those signs, in the
 * shape's dtype. */
int fa_fill_slots_launch(const fa_slot *slots, int n, fa_shape shape, fa_stream stream);

/* *count (device memory) gets the number of fp16 elements whose bits
 * differ between a and b. */
int fa_diff_count_launch(const void *a, const void *b, size_t n, unsigned long long *count,
                         fa_stream stream);

/* One tensor to hash: n fp16 values (rows of shape.head_dim) at x, with
 * the signs of `signs` undone (all zero: none). */
typedef struct fa_hash_item {
    const void *x;
    size_t n;
    fa_shape shape;
    fa_signs signs;
} fa_hash_item;

/* out[i] (device memory) gets an order-free hash of items[i] (device
 * memory), for i < n, in one launch: a tensor whose hash changed was
 * written to. */
int fa_hash_launch(const fa_hash_item *items, int n, unsigned long long *out, fa_stream stream);

#ifdef __cplusplus
}
#endif
#endif /* FA_LAUNCH_H */
