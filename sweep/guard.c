/* guard.c - the inputs, the gate and the check of timed launches
 * (contract: guard.h). Every CUDA call goes through GD_CHECK: a failure
 * puts "what: cudaErrorX: description" into g->err and returns -1.
 */
#include "guard.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/inject.h"
#include "progress.h"
#include "cudaerr.h"

/* Memory the V pool and the output ring may take of what the GPU has free,
 * and at most. */
#define GUARD_POOL_SHARE 8
#define GUARD_POOL_MAX ((size_t)1 << 30)
#define GUARD_RING_SHARE 4
#define GUARD_RING_MAX ((size_t)2 << 30)
/* V copies one-launch samples (hot, cold) cycle through: each is flipped
 * once per cycle, so one flip launch serves this many samples (and V's
 * footprint in L2 grows by as many copies). */
#define GUARD_CYCLE 4
/* Allocations start on this boundary (TMA wants 16 B; 256 B is cudaMalloc's). */
#define GUARD_ALIGN 256
/* A round's move of the timed buffers (guard_place) allocates a pad of 0 to
 * GUARD_PAD_STEPS - 1 steps before the new buffers, freed once they are
 * made, so that the new buffers do not simply take the memory the last
 * round's left (the driver hands freed memory out again). */
#define GUARD_PAD_STEP ((size_t)2 << 20)
#define GUARD_PAD_STEPS 16
/* The magnitude inputs: q in [1, 3], k in [7, 9], so q.k / sqrt(D) is about
 * 16 sqrt(D) (128 at D 64, 181 at 128) for every key: exp of that is over
 * FLT_MAX (e^88.7). A kernel must subtract the running max to stay finite. */
#define GUARD_MAG_Q_LO 1.0f
#define GUARD_MAG_Q_HI 3.0f
#define GUARD_MAG_K_LO 7.0f
#define GUARD_MAG_K_HI 9.0f

/* One input set of a problem: q, k, v, the reference of (q, k, v), and the
 * hashes the three were made with. */
typedef struct gd_set {
    void *q, *k, *v;
    float *ref;
    unsigned long long hash[3];
} gd_set;

/* The tails problem (1 x 2 x GUARD_TAIL_SEQ): plain and magnitude inputs. */
typedef struct gd_small {
    gd_set set[2];
    void *o;
    fa_shape shape;
    size_t n;
} gd_small;

struct guard {
    fa_stream stream;
    unsigned long long rng;
    char err[200];
    /* the problem */
    int have;
    int round; /* the round the timed buffers were placed for (guard_place); -1 none yet */
    space_problem prob;
    fa_shape shape;
    size_t n, bytes;       /* elements of Q (and O); bytes of one output buffer (aligned) */
    size_t n_kv, kv_bytes; /* elements of K (and V); bytes of one V buffer (aligned) */
    int units;             /* sign units in use: min(kv_slices, FA_SIGN_SLICES) * FA_SIGN_GROUPS */
    /* What the dtype itself costs: the rounded reference against the fp32
     * one (set 0); the tolerance is at least twice it (gd_tolerance). */
    stats_errors dtype_err;
    gd_set set[2];   /* set[i].v is pool entry i */
    void **v;        /* the V pool: entry e belongs to set e % 2 */
    fa_signs *signs; /* each entry's flipped units */
    int n_v, v_max;
    char *ring; /* the output ring: n_ring buffers of `bytes` */
    int n_ring, ring_max;
    void *o[2]; /* the gate's outputs; o[1] is also the scratch output */
    gd_small tail;
    fa_args args; /* guard_args and guard_launch_args hand this out */
    /* the block */
    int samples, launches;
    unsigned long long block_seed;
    fa_slot *h_slots, *d_slots; /* pinned host and device tables */
    int slot_cap;
    void *scratch;
    size_t scratch_cap;
    fa_compare_sums *sums; /* mapped: slot_cap */
    /* hashes and the repeat count: summed on the device (atomics to mapped
     * host memory cross PCIe one by one: 100 ms for ten inputs), copied
     * back in one go (gd_fetch) */
    unsigned long long *d_count, *count;
    fa_hash_item *h_items, *d_items; /* the tensors of one hash launch: GD_HASHES */
    int n_items;
};

/* Hashes one input check takes at most: q and k of two sets, the tails
 * problem's six tensors, and the V pool (at most 1000 entries). */
#define GD_HASHES 1024
#define GD_POOL_LIMIT (GD_HASHES - 10)

/* A failed CUDA call into g->err (cudaerr.h); -1. */
static int gd_fail(guard *g, cudaError_t e, const char *what)
{
    return cuda_errf(g->err, sizeof g->err, e, what);
}

#define GD_CHECK(g, call, what) CUDA_TRY((g)->err, call, what)

/* splitmix64: the host's random numbers (the kernel under test cannot
 * see them before it runs). */
static unsigned long long gd_rand(guard *g)
{
    unsigned long long z = (g->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

const char *guard_err(const guard *g)
{
    return g->err;
}

/* ---- memory ------------------------------------------------------------------------------- */

static void gd_free(void **p)
{
    (void)cudaFree(*p); /* errors ignored: the buffer is gone either way */
    *p = NULL;
}

static void gd_free_set(gd_set *s)
{
    gd_free(&s->q);
    gd_free(&s->k);
    gd_free((void **)&s->ref);
    s->v = NULL; /* a pool entry, or freed by its owner */
}

static void gd_free_problem(guard *g)
{
    for (int i = 0; i < 2; i++) {
        gd_free_set(&g->set[i]);
        gd_free(&g->tail.set[i].v);
        gd_free_set(&g->tail.set[i]);
        gd_free(&g->o[i]);
    }
    gd_free(&g->tail.o);
    for (int e = 0; e < g->n_v; e++)
        gd_free(&g->v[e]);
    g->n_v = 0;
    gd_free((void **)&g->ring);
    g->n_ring = 0;
    g->have = 0;
}

void guard_close(guard *g)
{
    if (!g)
        return;
    gd_free_problem(g);
    free(g->v);
    free(g->signs);
    (void)cudaFreeHost(g->h_slots);
    gd_free((void **)&g->d_slots);
    gd_free(&g->scratch);
    (void)cudaFreeHost(g->sums);
    (void)cudaFreeHost(g->count);
    gd_free((void **)&g->d_count);
    (void)cudaFreeHost(g->h_items);
    gd_free((void **)&g->d_items);
    free(g);
}

guard *guard_open(fa_stream stream, unsigned long long seed)
{
    guard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->stream = stream;
    g->rng = seed ^ 0x6a09e667f3bcc909ULL;
    return g;
}

static int gd_mapped(guard *g, void **p, size_t bytes, const char *what)
{
    GD_CHECK(g, cudaHostAlloc(p, bytes, cudaHostAllocMapped), what);
    memset(*p, 0, bytes);
    return 0;
}

/* Room for n slots in the block tables, the check's scratch and sums. */
static int gd_slots_room(guard *g, int n)
{
    if (n <= g->slot_cap)
        return 0;
    (void)cudaFreeHost(g->h_slots);
    (void)cudaFreeHost(g->sums);
    gd_free((void **)&g->d_slots);
    gd_free(&g->scratch);
    g->h_slots = NULL;
    g->sums = NULL;
    g->slot_cap = 0;
    GD_CHECK(g, cudaMallocHost((void **)&g->h_slots, (size_t)n * sizeof *g->h_slots),
             "cudaMallocHost(slot table)");
    GD_CHECK(g, cudaMalloc((void **)&g->d_slots, (size_t)n * sizeof *g->d_slots),
             "cudaMalloc(slot table)");
    const size_t sb = fa_check_scratch_bytes(n), cb = fa_compare_scratch_bytes();
    GD_CHECK(g, cudaMalloc(&g->scratch, sb > cb ? sb : cb), "cudaMalloc(check scratch)");
    if (gd_mapped(g, (void **)&g->sums, (size_t)n * sizeof *g->sums, "cudaHostAlloc(check sums)"))
        return -1;
    g->slot_cap = n;
    return 0;
}

/* A buffer of `bytes` filled with NaN (0xFFFF is a NaN in fp16 and in bf16). */
static int gd_poisoned(guard *g, void **p, size_t bytes, const char *what)
{
    GD_CHECK(g, cudaMalloc(p, bytes), what);
    GD_CHECK(g, cudaMemsetAsync(*p, 0xFF, bytes, g->stream), "poisoning a new output buffer");
    return 0;
}

/* ---- inputs -------------------------------------------------------------------------------- */

/* Adds a tensor to the next hash launch (signs NULL: none). */
static void gd_hash(guard *g, const void *x, size_t n, const fa_signs *signs, fa_shape sh)
{
    fa_hash_item *it = &g->h_items[g->n_items++];
    memset(it, 0, sizeof *it);
    it->x = x;
    it->n = n;
    it->shape = sh;
    if (signs)
        it->signs = *signs;
}

/* The first k counts to the host, synchronised. */
static int gd_fetch(guard *g, int k, const char *what)
{
    GD_CHECK(g,
             cudaMemcpyAsync(g->count, g->d_count, (size_t)k * sizeof *g->count,
                             cudaMemcpyDeviceToHost, g->stream),
             "copying the hashes back");
    GD_CHECK(g, cudaStreamSynchronize(g->stream), what);
    return 0;
}

/* The tensors added since the last run hashed in one launch into
 * count[0..n), synchronised. */
static int gd_hash_run(guard *g, const char *what)
{
    const int n = g->n_items;
    g->n_items = 0;
    GD_CHECK(g,
             cudaMemcpyAsync(g->d_items, g->h_items, (size_t)n * sizeof *g->h_items,
                             cudaMemcpyHostToDevice, g->stream),
             "copying the hash list");
    GD_CHECK(g, fa_hash_launch(g->d_items, n, g->d_count, g->stream), "hashing the inputs");
    return gd_fetch(g, n, what);
}

/* The arguments of a launch over batch x heads (kv_heads for K and V) x
 * seq_len x head_dim of dtype (the softmax scale 1/sqrt(head_dim)). */
static fa_args gd_args_of(const void *q, const void *k, const void *v, void *o, int batch,
                          int heads, int kv_heads, int seq_len, int head_dim, int causal, int dtype)
{
    /* the fields not named (cta_clock) are zero */
    return (fa_args){.q = q,
                     .k = k,
                     .v = v,
                     .o = o,
                     .batch = batch,
                     .heads = heads,
                     .seq_len = seq_len,
                     .head_dim = head_dim,
                     .kv_heads = kv_heads,
                     .dtype = dtype,
                     .causal = causal,
                     .softmax_scale = (float)(1.0 / sqrt((double)head_dim))};
}

/* Elements of Q (kv 0) or of K and V (kv 1) of shape sh. */
static size_t gd_elems(fa_shape sh, int kv)
{
    return (size_t)(kv ? sh.kv_slices : sh.slices) * sh.seq_len * sh.head_dim;
}

/* K or V of shape sh seen alone (hashed under its signs). */
static fa_shape gd_kv_shape(fa_shape sh)
{
    sh.slices = sh.kv_slices;
    return sh;
}

/* The arguments of a launch over shape sh (its slices as one batch). */
static fa_args gd_args_shape(const void *q, const void *k, const void *v, void *o, fa_shape sh,
                             int causal)
{
    return gd_args_of(q, k, v, o, 1, sh.slices, sh.kv_slices, sh.seq_len, sh.head_dim, causal,
                      sh.dtype);
}

/* Set s of shape sh: q, k, v uniform in their ranges (v in [-1, 1]), the
 * reference, and the hashes of what was made. v is allocated unless given. */
static int gd_make_set(guard *g, gd_set *s, fa_shape sh, int causal, const float *qr,
                       const float *kr)
{
    const size_t n = gd_elems(sh, 0), n_kv = gd_elems(sh, 1);
    GD_CHECK(g, cudaMalloc(&s->q, n * sizeof(uint16_t)), "cudaMalloc(q)");
    GD_CHECK(g, cudaMalloc(&s->k, n_kv * sizeof(uint16_t)), "cudaMalloc(k)");
    if (!s->v)
        GD_CHECK(g, cudaMalloc(&s->v, n_kv * sizeof(uint16_t)), "cudaMalloc(v)");
    GD_CHECK(g, cudaMalloc((void **)&s->ref, n * sizeof(float)), "cudaMalloc(reference output)");
    void *const x[3] = {s->q, s->k, s->v};
    const size_t xn[3] = {n, n_kv, n_kv};
    const fa_shape xs[3] = {sh, gd_kv_shape(sh), gd_kv_shape(sh)};
    const float lo[3] = {qr[0], kr[0], -1.0f}, hi[3] = {qr[1], kr[1], 1.0f};
    for (int i = 0; i < 3; i++)
        GD_CHECK(g,
                 fa_fill_random_launch(x[i], xn[i], sh.dtype, gd_rand(g), lo[i], hi[i], g->stream),
                 "filling the inputs with random values");
    const fa_args a = gd_args_shape(s->q, s->k, s->v, NULL, sh, causal);
    GD_CHECK(g, fa_reference_launch(&a, s->ref, g->stream), "launching the reference");
    GD_CHECK(g, fa_compare_launch(NULL, sh.dtype, s->ref, n, g->scratch, g->sums, g->stream),
             "checking the reference");
    for (int i = 0; i < 3; i++)
        gd_hash(g, x[i], xn[i], NULL, xs[i]);
    if (gd_hash_run(g, "running the reference"))
        return -1;
    if (g->sums->ref_nonfinite) {
        snprintf(g->err, sizeof g->err,
                 "the fp32 reference output has %llu non-finite values; the reference kernel is "
                 "broken (check with fa_check)",
                 g->sums->ref_nonfinite);
        return -1;
    }
    for (int i = 0; i < 3; i++)
        s->hash[i] = g->count[i];
    return 0;
}

static const float gd_plain[2] = {-1.0f, 1.0f};

/* What the problem's dtype costs (g->dtype_err): set 0's reference rounded
 * as a kernel of that dtype must round (S, P, O: fa_reference_rounded_launch,
 * into the scratch output o[1], then poisoned again) against its fp32
 * reference. */
static int gd_dtype_err(guard *g, int causal)
{
    const gd_set *s = &g->set[0];
    const fa_args a = gd_args_shape(s->q, s->k, s->v, NULL, g->shape, causal);
    GD_CHECK(g, fa_reference_rounded_launch(&a, g->o[1], g->stream),
             "launching the rounded reference");
    GD_CHECK(
        g, fa_compare_launch(g->o[1], g->shape.dtype, s->ref, g->n, g->scratch, g->sums, g->stream),
        "comparing the rounded reference");
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "running the rounded reference");
    const volatile fa_compare_sums *u = g->sums;
    stats_errors_of_sums(u->diff2, u->ref2, u->max_abs, (long)u->nonfinite,
                         u->nonfinite ? (long)u->first_bad : -1, g->n, &g->dtype_err);
    GD_CHECK(g, cudaMemsetAsync(g->o[1], 0xFF, g->bytes, g->stream), "poisoning the gate output");
    return 0;
}

/* The tolerance a problem is checked with: the space's, or twice what its
 * dtype itself costs when that is more (docs/measurement.md, "Tolerances":
 * FlashAttention's rule, an error at most twice that of the same
 * computation in the same precision). */
static space_tolerance gd_tolerance(const guard *g, const space_tolerance *tol)
{
    space_tolerance t = *tol;
    const stats_errors *d = &g->dtype_err;
    if (isfinite(d->rel_l2) && 2 * d->rel_l2 > t.rel_l2)
        t.rel_l2 = 2 * d->rel_l2;
    if (isfinite(d->max_abs) && 2 * d->max_abs > t.max_abs)
        t.max_abs = 2 * d->max_abs;
    return t;
}

/* The tails problem and its magnitude twin. */
static int gd_make_tail(guard *g, const space_problem *p)
{
    gd_small *t = &g->tail;
    /* Two heads sharing one K/V head when the problem groups its heads. */
    t->shape = (fa_shape){2, GUARD_TAIL_SEQ, p->head_dim, p->kv_heads < p->heads ? 1 : 2, p->dtype};
    t->n = gd_elems(t->shape, 0);
    const float mq[2] = {GUARD_MAG_Q_LO, GUARD_MAG_Q_HI}, mk[2] = {GUARD_MAG_K_LO, GUARD_MAG_K_HI};
    if (gd_make_set(g, &t->set[0], t->shape, p->causal, gd_plain, gd_plain) ||
        gd_make_set(g, &t->set[1], t->shape, p->causal, mq, mk))
        return -1;
    return gd_poisoned(g, &t->o, t->n * sizeof(uint16_t), "cudaMalloc(tails output)");
}

int guard_holds(const guard *g, const space_problem *p)
{
    return g->have && memcmp(&g->prob, p, sizeof *p) == 0;
}

int guard_problem(guard *g, const space_problem *p)
{
    if (guard_holds(g, p))
        return 0;
    gd_free_problem(g);
    if (gd_slots_room(g, GUARD_BLOCK_MAX) ||
        (!g->count &&
         gd_mapped(g, (void **)&g->count, GD_HASHES * sizeof *g->count, "cudaHostAlloc(hashes)")))
        return -1;
    if (!g->d_count) {
        GD_CHECK(g, cudaMalloc((void **)&g->d_count, GD_HASHES * sizeof *g->d_count),
                 "cudaMalloc(hashes)");
        GD_CHECK(g, cudaMallocHost((void **)&g->h_items, GD_HASHES * sizeof *g->h_items),
                 "cudaMallocHost(hash list)");
        GD_CHECK(g, cudaMalloc((void **)&g->d_items, GD_HASHES * sizeof *g->d_items),
                 "cudaMalloc(hash list)");
    }
    g->shape =
        (fa_shape){p->batch * p->heads, p->seq_len, p->head_dim, p->batch * p->kv_heads, p->dtype};
    g->n = gd_elems(g->shape, 0);
    g->n_kv = gd_elems(g->shape, 1);
    g->bytes = (g->n * sizeof(uint16_t) + GUARD_ALIGN - 1) / GUARD_ALIGN * GUARD_ALIGN;
    g->kv_bytes = (g->n_kv * sizeof(uint16_t) + GUARD_ALIGN - 1) / GUARD_ALIGN * GUARD_ALIGN;
    const int slices = g->shape.kv_slices < FA_SIGN_SLICES ? g->shape.kv_slices : FA_SIGN_SLICES;
    g->units = slices * FA_SIGN_GROUPS;
    if (!g->v) {
        g->v = calloc(2, sizeof *g->v);
        g->signs = calloc(2, sizeof *g->signs);
        if (!g->v || !g->signs) {
            snprintf(g->err, sizeof g->err, "out of host memory for the V pool");
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) { /* V of set i is pool entry i, freed with the pool */
        GD_CHECK(g, cudaMalloc(&g->v[i], g->kv_bytes), "cudaMalloc(v)");
        g->n_v = i + 1;
        g->set[i].v = g->v[i];
        memset(&g->signs[i], 0, sizeof g->signs[i]);
        if (gd_make_set(g, &g->set[i], g->shape, p->causal, gd_plain, gd_plain) ||
            gd_poisoned(g, &g->o[i], g->bytes, "cudaMalloc(gate output)"))
            return -1;
    }
    if (gd_dtype_err(g, p->causal))
        return -1;
    if (gd_make_tail(g, p))
        return -1;
    size_t free_b = 0, total_b = 0;
    GD_CHECK(g, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    size_t pool = free_b / GUARD_POOL_SHARE, ring = free_b / GUARD_RING_SHARE;
    pool = pool < GUARD_POOL_MAX ? pool : GUARD_POOL_MAX;
    ring = ring < GUARD_RING_MAX ? ring : GUARD_RING_MAX;
    g->v_max = pool / g->kv_bytes > 2
                   ? (int)(pool / g->kv_bytes < GD_POOL_LIMIT ? pool / g->kv_bytes : GD_POOL_LIMIT)
                   : 2;
    g->ring_max =
        ring / g->bytes > 2 ? (int)(ring / g->bytes < 16000 ? ring / g->bytes : 16000) : 2;
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "setting up the problem");
    g->prob = *p;
    g->have = 1;
    g->round = -1;
    return 0;
}

/* ---- placement ----------------------------------------------------------------------------- */

/* The buffers a timed launch reads or writes (GD_TIMED_MAX(g) at most): q
 * and k of both sets, the V pool, the output ring. ptr[i] gets where each
 * lives, bytes[i] its size; returns how many. */
#define GD_TIMED_MAX(g) (5 + (size_t)(g)->n_v)
static int gd_timed_buffers(guard *g, void ***ptr, size_t *bytes)
{
    int n = 0;
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < 2; t++, n++) {
            ptr[n] = t ? &g->set[i].k : &g->set[i].q;
            bytes[n] = (t ? g->n_kv : g->n) * sizeof(uint16_t);
        }
    for (int e = 0; e < g->n_v; e++, n++) {
        ptr[n] = &g->v[e];
        bytes[n] = g->kv_bytes;
    }
    if (g->n_ring > 0) {
        ptr[n] = (void **)&g->ring;
        bytes[n++] = (size_t)g->n_ring * g->bytes;
    }
    return n;
}

/* The timed buffers *ptr[0..n) (of bytes[i] each) moved into new
 * allocations fresh[0..n), made behind a pad of random size, contents
 * copied (the ring's too: each of its buffers keeps an output of other
 * inputs, gd_ring); then the old ones freed: 1. Where the memory does not allow it, nothing
 * moves: 0. -1 after a CUDA failure. */
static int gd_move_to(guard *g, int n, void ***ptr, void **fresh, const size_t *bytes)
{
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "finishing before the timed buffers move");
    void *pad = NULL;
    const size_t pad_bytes = (size_t)(gd_rand(g) % GUARD_PAD_STEPS) * GUARD_PAD_STEP;
    cudaError_t e = pad_bytes > 0 ? cudaMalloc(&pad, pad_bytes) : cudaSuccess;
    for (int i = 0; e == cudaSuccess && i < n; i++)
        e = cudaMalloc(&fresh[i], bytes[i]);
    gd_free(&pad);
    for (int i = 0; e == cudaSuccess && i < n; i++)
        e = cudaMemcpyAsync(fresh[i], *ptr[i], bytes[i], cudaMemcpyDeviceToDevice, g->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->stream);
    if (e != cudaSuccess) {
        for (int i = 0; i < n; i++)
            gd_free(&fresh[i]);
        if (e != cudaErrorMemoryAllocation)
            return gd_fail(g, e, "moving the timed buffers to new memory");
        (void)cudaGetLastError(); /* not sticky: the buffers stay where they are */
        return 0;
    }
    for (int i = 0; i < n; i++) {
        gd_free(ptr[i]);
        *ptr[i] = fresh[i];
    }
    for (int i = 0; i < 2; i++) /* V of set i is pool entry i */
        g->set[i].v = g->v[i];
    return 1;
}

/* The timed buffers moved (gd_move_to): 1, 0 (they stay), or -1 (g->err). */
static int gd_move(guard *g)
{
    const size_t cap = GD_TIMED_MAX(g);
    void ***ptr = malloc(cap * sizeof *ptr);
    void **fresh = calloc(cap, sizeof *fresh);
    size_t *bytes = malloc(cap * sizeof *bytes);
    int rc = -1;
    if (ptr && fresh && bytes) {
        rc = gd_move_to(g, gd_timed_buffers(g, ptr, bytes), ptr, fresh, bytes);
    } else {
        snprintf(g->err, sizeof g->err, "out of host memory moving the timed buffers");
    }
    free(ptr);
    free(fresh);
    free(bytes);
    return rc;
}

void guard_stream(guard *g, fa_stream stream)
{
    g->stream = stream;
}

int guard_place(guard *g, int round)
{
    if (!g->have || round == g->round)
        return 0;
    const int first = g->round < 0;
    g->round = round;
    return first ? 0 : gd_move(g);
}

/* ---- the arguments ------------------------------------------------------------------------- */

static const fa_args *gd_args(guard *g, const gd_set *s, const void *v, void *o)
{
    const space_problem *p = &g->prob;
    g->args = gd_args_of(s->q, s->k, v, o, p->batch, p->heads, p->kv_heads, p->seq_len, p->head_dim,
                         p->causal, p->dtype);
    return &g->args;
}

const fa_args *guard_args(guard *g)
{
    return gd_args(g, &g->set[0], g->v[0], g->o[1]);
}

/* ---- comparing ----------------------------------------------------------------------------- */

/* Compares o with ref under signs (NULL: none) on every row of shape sh
 * (synchronous): *e the errors. */
static int gd_compare(guard *g, const void *o, const float *ref, const fa_signs *signs, fa_shape sh,
                      stats_errors *e)
{
    fa_slot *s = &g->h_slots[0];
    memset(s, 0, sizeof *s);
    s->o = (void *)o;
    s->ref = ref;
    if (signs)
        s->signs = *signs;
    GD_CHECK(g, cudaMemcpyAsync(g->d_slots, s, sizeof *s, cudaMemcpyHostToDevice, g->stream),
             "copying the gate's slot");
    GD_CHECK(g, fa_check_slots_launch(g->d_slots, 1, sh, 0, 0, g->scratch, g->sums, g->stream),
             "launching the output comparison");
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "comparing the output with the reference");
    const volatile fa_compare_sums *u = g->sums;
    const size_t n = gd_elems(sh, 0);
    stats_errors_of_sums(u->diff2, u->ref2, u->max_abs, (long)u->nonfinite,
                         u->nonfinite ? (long)u->first_bad : -1, n, e);
    return 0;
}

/* stats_gate's verdict on e as "CHECK: reason (where)": 1 refused, 0 passed. */
static int gd_verdict(const stats_errors *e, const space_tolerance *tol, const char *check,
                      const char *where, char *why, size_t n)
{
    char r[192];
    if (!stats_gate(e, tol, r, sizeof r))
        return 0;
    snprintf(why, n, "%s: %s %s", check, r, where);
    return 1;
}

/* ---- the gate ------------------------------------------------------------------------------ */

static int gd_capture_error(cudaError_t e)
{
    switch (e) {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorStreamCaptureWrongThread:
    case cudaErrorCapturedEvent:
        return 1;
    default:
        return 0;
    }
}

/* Kernel nodes of a graph: *kernels, *nodes all. */
static int gd_graph_kernels(guard *g, cudaGraph_t graph, int *kernels, int *nodes)
{
    size_t n = 0;
    *kernels = *nodes = 0;
    GD_CHECK(g, cudaGraphGetNodes(graph, NULL, &n), "cudaGraphGetNodes");
    if (n == 0)
        return 0;
    cudaGraphNode_t *list = malloc(n * sizeof *list);
    if (!list) {
        snprintf(g->err, sizeof g->err, "out of host memory reading a graph");
        return -1;
    }
    cudaError_t e = cudaGraphGetNodes(graph, list, &n);
    for (size_t i = 0; e == cudaSuccess && i < n; i++) {
        enum cudaGraphNodeType t;
        e = cudaGraphNodeGetType(list[i], &t);
        *kernels += e == cudaSuccess && t == cudaGraphNodeTypeKernel;
    }
    free(list);
    *nodes = (int)n;
    GD_CHECK(g, e, "reading the captured graph");
    return 0;
}

/* The launch captured into a graph on g->stream, the graph run alone into
 * o[0] poisoned after every other stream finished. Returns 0 with o[0]
 * written, 1 refused (stream), -1 CUDA failure. */
static int gd_captured(guard *g, const fa_instance *in, const fa_args *a, char *why, size_t n)
{
    cudaGraph_t graph = NULL;
    GD_CHECK(g, cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeRelaxed),
             "cudaStreamBeginCapture");
    const cudaError_t le = (cudaError_t)in->launch(a, g->stream);
    const cudaError_t ce = cudaStreamEndCapture(g->stream, &graph);
    if (le != cudaSuccess || ce != cudaSuccess) {
        if (graph)
            (void)cudaGraphDestroy(graph);
        const cudaError_t x = le != cudaSuccess ? le : ce;
        if (!gd_capture_error(x) && !gd_capture_error(ce))
            return gd_fail(g, x, "launching the kernel (correctness gate)");
        (void)cudaGetLastError(); /* capture errors are not sticky */
        snprintf(why, n,
                 "stream: the launch cannot be captured on the stream it is given (%s: %s): it "
                 "uses another stream or synchronises, and such work is neither timed nor "
                 "checked",
                 cudaGetErrorName(x), cudaGetErrorString(x));
        return 1;
    }
    progress_step("gate: capture");
    int kernels = 0, nodes = 0, rc = gd_graph_kernels(g, graph, &kernels, &nodes);
    if (rc == 0 && kernels == 0) {
        snprintf(why, n,
                 "stream: the launch put no kernel on the stream it is given (%d other graph "
                 "nodes): its work runs elsewhere, where the timing events do not see it",
                 nodes);
        rc = 1;
    }
    cudaGraphExec_t exec = NULL;
    cudaError_t e = rc == 0 ? cudaGraphInstantiate(&exec, graph, 0) : cudaSuccess;
    (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess)
        return gd_fail(g, e, "cudaGraphInstantiate(the captured launch)");
    if (rc != 0)
        return rc;
    progress_step("gate: instantiate");
    /* Whatever the capture ran eagerly elsewhere is over before the poison. */
    e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMemsetAsync(a->o, 0xFF, g->bytes, g->stream);
    if (e == cudaSuccess)
        e = cudaGraphLaunch(exec, g->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->stream);
    (void)cudaGraphExecDestroy(exec);
    return e == cudaSuccess ? 0 : gd_fail(g, e, "running the captured launch (correctness gate)");
}

/* One plain launch of `a` into its poisoned output, synchronised; *us its
 * event time when us is not NULL. */
static int gd_launch(guard *g, const fa_instance *in, const fa_args *a, size_t bytes, double *us,
                     const char *what)
{
    cudaEvent_t ev[2] = {NULL, NULL};
    GD_CHECK(g, cudaMemsetAsync(a->o, 0xFF, bytes, g->stream), "poisoning the output");
    if (us) {
        GD_CHECK(g, cudaEventCreate(&ev[0]), "cudaEventCreate");
        cudaError_t e = cudaEventCreate(&ev[1]);
        if (e == cudaSuccess)
            e = cudaEventRecord(ev[0], g->stream);
        if (e != cudaSuccess) {
            (void)cudaEventDestroy(ev[0]);
            if (ev[1])
                (void)cudaEventDestroy(ev[1]);
            return gd_fail(g, e, "cudaEventRecord");
        }
    }
    cudaError_t e = (cudaError_t)in->launch(a, g->stream);
    if (e == cudaSuccess && us)
        e = cudaEventRecord(ev[1], g->stream);
    const cudaError_t s = cudaStreamSynchronize(g->stream);
    float ms = 0;
    if (e == cudaSuccess && s == cudaSuccess && us && cudaEventElapsedTime(&ms, ev[0], ev[1]) == 0)
        *us = ms * 1e3;
    for (int i = 0; i < 2; i++)
        if (ev[i])
            (void)cudaEventDestroy(ev[i]);
    if (e != cudaSuccess)
        return gd_fail(g, e, what);
    return s == cudaSuccess ? 0 : gd_fail(g, s, what);
}

/* The injected kernel in place of the gate's launch (isolation tests). */
static int gd_inject(guard *g, task_inject inject)
{
    if (inject == TASK_INJECT_FAULT)
        GD_CHECK(g, fa_inject_fault_launch(g->stream), "launching the injected fault kernel");
    else
        GD_CHECK(g, fa_inject_hang_launch(g->stream), "launching the injected hang kernel");
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "running the kernel (correctness gate)");
    return 0;
}

/* The second launch on the first launch's inputs: bit-identical output.
 * The templates compute every output element in one thread with a fixed
 * order of operations (no atomics, no split reductions), so any difference
 * is a dependence on something other than the inputs. */
static int gd_repeat(guard *g, const fa_instance *in, double *gate_us, char *why, size_t n)
{
    fa_args a = *gd_args(g, &g->set[0], g->v[0], g->o[1]);
    if (gd_launch(g, in, &a, g->bytes, gate_us, "running the kernel (repeat launch)"))
        return -1;
    GD_CHECK(g, fa_diff_count_launch(g->o[0], g->o[1], g->n, &g->d_count[0], g->stream),
             "launching the repeat comparison");
    if (gd_fetch(g, 1, "comparing two launches"))
        return -1;
    const unsigned long long d = g->count[0];
    if (d == 0)
        return 0;
    snprintf(why, n,
             "repeat: %llu of %zu outputs differ between two launches on the same inputs (a "
             "deterministic kernel gives the same bits: a race, state kept between launches or "
             "uninitialised memory)",
             d, g->n);
    return 1;
}

/* The tails problem, plain then magnitude. */
static int gd_tails(guard *g, const fa_instance *in, const space_tolerance *tol, char *why,
                    size_t n)
{
    gd_small *t = &g->tail;
    static const char *const check[2] = {"tails", "magnitude"};
    char where[160];
    for (int i = 0; i < 2; i++) {
        const gd_set *x = &t->set[i];
        const fa_args a = gd_args_shape(x->q, x->k, x->v, t->o, t->shape, g->prob.causal);
        stats_errors e;
        if (gd_launch(g, in, &a, t->n * sizeof(uint16_t), NULL, "running the kernel (tails)") ||
            gd_compare(g, t->o, x->ref, NULL, t->shape, &e))
            return -1;
        if (i == 0)
            snprintf(where, sizeof where,
                     "on a 1x2x%dx%d problem (S %d is a multiple of no tile size: the last tile "
                     "of every head is partial)",
                     t->shape.seq_len, t->shape.head_dim, t->shape.seq_len);
        else
            snprintf(where, sizeof where,
                     "on inputs whose scores are near +%.0f for every key (exp of that overflows "
                     "fp32: the running max must be subtracted)",
                     16.0 * sqrt((double)t->shape.head_dim));
        if (gd_verdict(&e, tol, check[i], where, why, n))
            return 1;
    }
    return 0;
}

int guard_gate(guard *g, const fa_instance *in, task_inject inject, const space_tolerance *tol,
               stats_errors *e, double *gate_us, char *why, size_t n)
{
    const space_tolerance dt_tol = gd_tolerance(g, tol);
    tol = &dt_tol;
    *gate_us = NAN;
    if (inject != TASK_INJECT_NONE)
        return gd_inject(g, inject);
    fa_args a = *gd_args(g, &g->set[0], g->v[0], g->o[0]);
    int rc = gd_captured(g, in, &a, why, n);
    progress_step("gate: run");
    if (rc)
        return rc;
    if (gd_compare(g, g->o[0], g->set[0].ref, &g->signs[0], g->shape, e))
        return -1;
    progress_step("gate: compare");
    if (gd_verdict(e, tol, "gate", "(the first launch, captured on its stream and run alone)", why,
                   n))
        return 1;
    if ((rc = gd_repeat(g, in, gate_us, why, n)) != 0)
        return rc;
    progress_step("gate: repeat");
    /* the second input set is checked in every timed block */
    if ((rc = gd_tails(g, in, tol, why, n)) != 0)
        return rc;
    progress_step("gate: tails");
    rc = guard_inputs(g, why, n);
    progress_step("gate: inputs");
    return rc;
}

/* ---- timed blocks -------------------------------------------------------------------------- */

/* Grows the V pool to `want` entries (copies of their set's V with its
 * signs). */
static int gd_pool(guard *g, int want)
{
    if (want <= g->n_v)
        return 0;
    void **v = realloc(g->v, (size_t)want * sizeof *v);
    if (v)
        g->v = v;
    fa_signs *s = v ? realloc(g->signs, (size_t)want * sizeof *s) : NULL;
    if (s)
        g->signs = s;
    if (!v || !s) {
        snprintf(g->err, sizeof g->err, "out of host memory for a V pool of %d", want);
        return -1;
    }
    for (; g->n_v < want; g->n_v++) {
        const int e = g->n_v;
        g->v[e] = NULL;
        GD_CHECK(g, cudaMalloc(&g->v[e], g->kv_bytes), "cudaMalloc(V pool)");
        GD_CHECK(g,
                 cudaMemcpyAsync(g->v[e], g->v[e % 2], g->n_kv * sizeof(uint16_t),
                                 cudaMemcpyDeviceToDevice, g->stream),
                 "copying V into the pool");
        g->signs[e] = g->signs[e % 2];
    }
    return 0;
}

/* A random pattern over the units in use, each unit with probability
 * 2^-ands, at least one. */
static void gd_pattern(guard *g, fa_signs *p, int ands)
{
    memset(p, 0, sizeof *p);
    int any = 0;
    for (int w = 0; w * 64 < g->units; w++) {
        unsigned long long x = ~0ULL;
        for (int a = 0; a < ands; a++)
            x &= gd_rand(g);
        const int left = g->units - w * 64;
        if (left < 64)
            x &= (1ULL << left) - 1;
        p->w[w] = x;
        any |= x != 0;
    }
    if (!any) {
        const int u = (int)(gd_rand(g) % (unsigned long long)g->units);
        p->w[u >> 6] |= 1ULL << (u & 63);
    }
}

/* Grows the output ring to `want` buffers (within the slot tables:
 * gd_slots_room first), each filled as a launch under signs of its own,
 * drawn at random, computes it. What a buffer holds before a timed launch
 * writes it is thus always the output of other inputs (wrong for this
 * launch), never a sentinel such as the gate's NaN poison: a kernel that
 * computes only where it finds the sentinel leaves wrong values in every
 * block, a new ring's first included (tests/gpu/adversarial: nan_poison). */
static int gd_ring(guard *g, int want)
{
    if (want <= g->n_ring)
        return 0;
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "finishing before the ring grows");
    gd_free((void **)&g->ring);
    g->n_ring = 0;
    GD_CHECK(g, cudaMalloc((void **)&g->ring, (size_t)want * g->bytes), "cudaMalloc(output ring)");
    for (int j = 0; j < want; j++) {
        fa_slot *s = &g->h_slots[j];
        memset(s, 0, sizeof *s);
        s->o = g->ring + (size_t)j * g->bytes;
        s->ref = g->set[j % 2].ref;
        gd_pattern(g, &s->signs, 1);
    }
    GD_CHECK(g,
             cudaMemcpyAsync(g->d_slots, g->h_slots, (size_t)want * sizeof *g->h_slots,
                             cudaMemcpyHostToDevice, g->stream),
             "copying the ring's fill table");
    GD_CHECK(g, fa_fill_slots_launch(g->d_slots, want, g->shape, g->stream),
             "launching the fill of the output ring");
    /* the slot table is the block's next: wait until the fill has read it */
    GD_CHECK(g, cudaStreamSynchronize(g->stream), "filling the output ring");
    g->n_ring = want;
    return 0;
}

int guard_room(guard *g, int *launches)
{
    int l = *launches < 1 ? 1 : *launches;
    if (l > g->v_max)
        l = g->v_max;
    if (l > g->ring_max)
        l = g->ring_max;
    *launches = l;
    int nb = g->ring_max / l;
    nb = nb < GUARD_BLOCK_MAX ? nb : GUARD_BLOCK_MAX;
    if (gd_pool(g, l < GUARD_CYCLE ? GUARD_CYCLE : l) || gd_slots_room(g, nb * l) ||
        gd_ring(g, nb * l))
        return -1;
    return nb;
}

/* The pool entry launch l of sample i reads: its own with several
 * launches; with one, the samples cycle through GUARD_CYCLE entries (the
 * input sets alternate: entry e is of set e % 2). */
static int gd_entry(int sample, int launches, int l)
{
    return launches > 1 ? l : sample % GUARD_CYCLE;
}

int guard_block(guard *g, int samples, int launches)
{
    const int n = samples * launches;
    if (n > g->n_ring || n > g->slot_cap || launches > g->n_v) {
        snprintf(g->err, sizeof g->err,
                 "a block of %d x %d launches does not fit the ring of %d (guard_room)", samples,
                 launches, g->n_ring);
        return -1;
    }
    g->samples = samples;
    g->launches = launches;
    g->block_seed = gd_rand(g);
    for (int i = 0; i < samples; i++)
        for (int l = 0; l < launches; l++) {
            const int j = i * launches + l, e = gd_entry(i, launches, l);
            fa_slot *s = &g->h_slots[j];
            gd_pattern(g, &s->flip, 4); /* a unit in 16 */
            for (int w = 0; w < FA_SIGN_WORDS; w++)
                g->signs[e].w[w] ^= s->flip.w[w];
            s->signs = g->signs[e];
            s->v = g->v[e];
            s->ref = g->set[e % 2].ref;
            s->o = g->ring + (size_t)j * g->bytes;
        }
    GD_CHECK(g,
             cudaMemcpyAsync(g->d_slots, g->h_slots, (size_t)n * sizeof *g->h_slots,
                             cudaMemcpyHostToDevice, g->stream),
             "copying the block's slot table");
    return 0;
}

int guard_sample(guard *g, int sample)
{
    /* several launches: each reads its own entry, all flipped now; one:
     * the next GUARD_CYCLE samples read distinct entries, flipped at once */
    int first = sample * g->launches, n = g->launches;
    if (g->launches == 1) {
        if (sample % GUARD_CYCLE)
            return 0;
        n = g->samples - sample < GUARD_CYCLE ? g->samples - sample : GUARD_CYCLE;
    }
    GD_CHECK(g, fa_flip_launch(g->d_slots + first, n, g->shape, g->stream),
             "launching the sign flips of V");
    return 0;
}

const fa_args *guard_launch_args(guard *g, int sample, int launch)
{
    const fa_slot *s = &g->h_slots[sample * g->launches + launch];
    const int e = (int)(s->ref == g->set[1].ref);
    return gd_args(g, &g->set[e], s->v, s->o);
}

int guard_block_check(guard *g)
{
    GD_CHECK(g,
             fa_check_slots_launch(g->d_slots, g->samples * g->launches, g->shape, GUARD_ROW_SHIFT,
                                   g->block_seed, g->scratch, g->sums, g->stream),
             "launching the check of the timed outputs");
    return 0;
}

int guard_block_verdict(guard *g, const space_tolerance *tol, char *why, size_t n)
{
    const space_tolerance dt_tol = gd_tolerance(g, tol);
    tol = &dt_tol;
    const int total = g->samples * g->launches;
    for (int j = 0; j < total; j++) {
        const volatile fa_compare_sums *u = &g->sums[j];
        stats_errors e;
        /* (about n / 2^GUARD_ROW_SHIFT elements were looked at) */
        stats_errors_of_sums(u->diff2, u->ref2, u->max_abs, (long)u->nonfinite,
                             u->nonfinite ? (long)u->first_bad : -1, g->n >> GUARD_ROW_SHIFT, &e);
        char r[192];
        if (!stats_gate(&e, tol, r, sizeof r))
            continue;
        snprintf(why, n,
                 "timed: launch %d of %d of a block: %s (a random 1/%d of its rows, checked after "
                 "timing): a timed launch did not compute what the reference does",
                 j + 1, total, r, 1 << GUARD_ROW_SHIFT);
        return 1;
    }
    return 0;
}

/* ---- inputs unchanged ---------------------------------------------------------------------- */

/* Fresh inputs after a kernel wrote to them (the next config must not be
 * judged on what it left). */
static int gd_remake(guard *g)
{
    const space_problem p = g->prob;
    g->have = 0;
    return guard_problem(g, &p);
}

static int gd_inputs(guard *g, char *why, size_t n);

int guard_inputs(guard *g, char *why, size_t n)
{
    const int rc = gd_inputs(g, why, n);
    return rc == 1 && gd_remake(g) != 0 ? -1 : rc;
}

static int gd_inputs(guard *g, char *why, size_t n)
{
    static const char *const name[3] = {"q", "k", "v"};
    /* the sets' q and k, every pool entry under its signs, the tails' inputs */
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < 2; t++)
            gd_hash(g, t ? g->set[i].k : g->set[i].q, t ? g->n_kv : g->n, NULL,
                    t ? gd_kv_shape(g->shape) : g->shape);
    const int pool = g->n_v;
    for (int e = 0; e < pool; e++)
        gd_hash(g, g->v[e], g->n_kv, &g->signs[e], gd_kv_shape(g->shape));
    for (int i = 0; i < 2; i++) {
        const gd_set *s = &g->tail.set[i];
        const void *x[3] = {s->q, s->k, s->v};
        for (int t = 0; t < 3; t++)
            gd_hash(g, x[t], gd_elems(g->tail.shape, t > 0), NULL,
                    t ? gd_kv_shape(g->tail.shape) : g->tail.shape);
    }
    if (gd_hash_run(g, "hashing the inputs"))
        return -1;
    int k = 0;
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < 2; t++, k++)
            if (g->count[k] != g->set[i].hash[t]) {
                snprintf(why, n, "inputs: the kernel wrote to its input %s (input set %c)", name[t],
                         'A' + i);
                return 1;
            }
    for (int e = 0; e < pool; e++, k++)
        if (g->count[k] != g->set[e % 2].hash[2]) {
            snprintf(why, n, "inputs: the kernel wrote to its input v (input set %c%s)",
                     'A' + e % 2, e >= 2 ? ", one of its copies" : "");
            return 1;
        }
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < 3; t++, k++)
            if (g->count[k] != g->tail.set[i].hash[t]) {
                snprintf(why, n, "inputs: the kernel wrote to its input %s (the %s problem)",
                         name[t], i ? "magnitude" : "tails");
                return 1;
            }
    return 0;
}
