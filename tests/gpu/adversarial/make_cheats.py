#!/usr/bin/env python3
"""make_cheats.py - the adversarial kernels of `make test-gpu` (tests/gpu/test_adversarial.sh).

Each cheat is a small, explicit textual edit of the CURRENT kernel template
(kernels/mma/flash_fwd.cuh, or kernels/wgmma/flash_fwd_wgmma.cuh), written as a
standalone kernel file (the whole edited template) that `fasweep eval --kernel FILE`
compiles in place of the compiled instance. Every cheat is one a language-model
mutator or a deliberate attacker would write, and each one is faster or does less work
when nothing catches it; fasweep must refuse each with a reason that names the check
that caught it (sweep/guard.h: stream, gate, repeat, tails, magnitude, inputs, timed,
floor). The controls must be accepted (status ok).

An edit is a list of (anchor, replacement) pairs: every anchor must occur exactly once in
the template, else this script stops and names the cheat and the anchor (no cheat is ever
skipped silently: a template change that moves an anchor fails the suite until the cheat
is re-anchored). Every inserted line is marked with "ADVERSARIAL".

    make_cheats.py --out DIR              write DIR/NAME.cuh for every cheat and DIR/manifest.json
    make_cheats.py --list                 the cheats, one line each
    make_cheats.py --compile-check DIR    write them into DIR/src and compile each (one at a
                                          time) with nvcc into DIR/build/NAME as fasweep would
                                          (sweep/variant.c: kernel.cuh beside the embedded
                                          headers, wrapper.cu expanding the instance macro);
                                          mma for sm_89, wgmma for sm_90a; exit 1 if any fails

The manifest: {"problem": P, "templates": {family: {path, sha256}}, "cheats": {NAME:
{file, family, config, expect ("refused" or "ok"), arch, description, catch}}}; "catch"
names the check expected to fire first, by the order of sweep/guard.c (stream, gate,
repeat, second input set as gate, tails, magnitude, inputs, then timed and floor), and any
that would catch it next: informational, the test accepts any known check.
"""
import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DEFAULT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

# The problem every cheat is run on (test_adversarial.sh passes it as --problem), and the
# size sample_cache_copy's private copy of the output is made for.
PROBLEM = "b4.h8.s512.d64.nc"
PROBLEM_ELEMS = "(4 * 8 * 512 * 64)"

TEMPLATES = {
    "mma": "kernels/mma/flash_fwd.cuh",
    "wgmma": "kernels/wgmma/flash_fwd_wgmma.cuh",
}
# The config each family's cheats are compiled and run at.
MMA_CONFIG = "d64.m64.n64.w4.s2.z1"  # in spaces/ci.json, l4.json and h100.json
# dynamic shared memory 64*64*2 + 2*2*64*64*2 = 48 KB exactly with NUM_WARPS 8: kernels/mma/mma.h
# fa_smem_bytes (Q tile BLOCK_M x HEAD_DIM + 2 * STAGES tiles BLOCK_N x HEAD_DIM, fp16)
MMA_SMEM48K_CONFIG = "d64.m128.n64.w8.s2.z1"
WGMMA_CONFIG = "wgmma:d64.m128.n128.c2.s2.p2"  # in spaces/h100.json

KNOWN_CHECKS = ["stream", "gate", "repeat", "tails", "magnitude", "inputs", "timed", "floor"]

# ---- the anchors (exactly once in their template) ------------------------------------------

MMA_NS = "namespace fa\n{\n"
# the kernel's body, after the per-CTA pointers (tid, m_tile, m0, head_off, gQ..gO are set)
MMA_BODY = "    uint16_t *gO = reinterpret_cast<uint16_t *>(a.o) + head_off;\n"
MMA_NTILES = "        n_tiles = min(n_tiles, (m0 + BLOCK_M + BLOCK_N - 1) / BLOCK_N);\n"
MMA_STORE = "    T::store_o(st, sQ, gO, m0, row0, seq, lane);\n"
MMA_GRID = "    const dim3 grid((a->seq_len + BLOCK_M - 1) / BLOCK_M, a->batch * a->heads);\n"
MMA_LAUNCH = "    kern<<<grid, NUM_WARPS * 32, smem, (cudaStream_t)stream>>>(*a);\n"

WG_NS = "namespace fawg\n{\n"
# the kernel's body before its first barrier (tid, n_work and Tile::of_index are there)
WG_BODY = "    if (tid == 0)\n        smem.init_barriers();\n"
WG_GRID = "    const dim3 grid((unsigned)ctas);\n"


def after(anchor, text):
    return (anchor, anchor + text)


def before(anchor, text):
    return (anchor, text + anchor)


# ---- the pieces of code the cheats insert ---------------------------------------------------

# A launch counter shared by every launch of the process (device memory outlives launches).
CTA_COUNTER = """\
// ADVERSARIAL: CTAs started by every launch so far (device memory outlives a launch).
static __device__ unsigned int adv_ctas_seen;
"""

SKIP_AFTER = """\
    // ADVERSARIAL skip_after_launches: the first two launches' worth of CTAs compute (the
    // correctness gate sees those); every CTA after that returns at once.
    {
        int adv_skip = 0;
        if (threadIdx.x == 0)
            adv_skip = atomicAdd(&adv_ctas_seen, 1u) >= 2u * (gridDim.x * gridDim.y * gridDim.z);
        if (__syncthreads_or(adv_skip))
            return;
    }
"""

PARTIAL_WRITE = """\
    // ADVERSARIAL partial_write: after the first two launches' worth of CTAs, the last query
    // tile of every head (the ragged one, on most shapes) is left unwritten.
    {
        int adv_skip = 0;
        if (threadIdx.x == 0)
            adv_skip = atomicAdd(&adv_ctas_seen, 1u) >= 2u * (gridDim.x * gridDim.y * gridDim.z) &&
                       m_tile == (int)gridDim.x - 1;
        if (__syncthreads_or(adv_skip))
            return;
    }
"""

MMA_NAN_POISON = """\
    // ADVERSARIAL nan_poison: compute only where the output still holds the gate's NaN
    // poison; a tile that already holds numbers is taken as done. (Every thread reads the
    // same element before the first barrier, and this CTA writes its tile only after it.)
    if ((gO[(size_t)m0 * HEAD_DIM] & 0x7fffu) <= 0x7c00u) // not an fp16 NaN (the bits)
        return;
"""

WG_NAN_POISON = """\
    // ADVERSARIAL nan_poison: compute only where the output still holds the gate's NaN
    // poison; a tile that already holds numbers is taken as done. (Every thread reads the
    // same element before the first barrier, and this CTA writes its tile only after it.)
    const Tile adv_t = Tile::of_index<C>(a, (int)blockIdx.x, 1); // the CTA's first tile
    if ((reinterpret_cast<const uint16_t *>(a.o)[((size_t)adv_t.bh * a.seq_len + adv_t.m0) * HEAD_DIM] &
         0x7fffu) <= 0x7c00u) // not an fp16 NaN (the bits)
        return;
"""


def host_skip(calls):
    return f"""\
    // ADVERSARIAL host_skip: the first {calls} calls launch (the gate's); later ones report
    // success without launching anything.
    static int adv_calls = 0;
    if (++adv_calls > {calls})
        return (int)cudaSuccess;
"""


# The per-launch bookkeeping the caches share: each CTA looks the launch up in the table
# first, then takes a ticket; the CTA that takes the launch's last ticket knows every
# other CTA of this launch has looked, so it may record the launch for the next ones (and
# resets the ticket count: launches on one stream do not overlap). Every CTA of a launch
# thus sees the same table and takes the same decision.
def ticket_fn(record):
    return f"""\
// ADVERSARIAL: called by thread 0 of every CTA after all its threads looked the launch up.
__device__ __forceinline__ void adv_ticket(bool hit, {record[0]})
{{
    __threadfence();
    const unsigned int ctas = gridDim.x * gridDim.y * gridDim.z;
    if (atomicAdd(&adv_started, 1u) != ctas - 1)
        return;
    adv_started = 0; // the launch's last CTA to start: every other one has looked
    if (!hit) {{
{record[1]}
    }}
    __threadfence();
}}
"""


POINTER_CACHE_GLOBALS = """\
// ADVERSARIAL pointer_cache: the (q, k, v) pointers of the last launches. A launch whose
// input pointers were seen before has "already been computed" and returns at once. (Eight
// entries, so two input sets used in turn still hit.)
#define ADV_SLOTS 8
static __device__ const void *adv_ptr[ADV_SLOTS][3];
static __device__ unsigned int adv_next, adv_started;
""" + ticket_fn(("const fa_args &a", """\
        const unsigned int s = adv_next % ADV_SLOTS;
        adv_ptr[s][0] = a.q;
        adv_ptr[s][1] = a.k;
        adv_ptr[s][2] = a.v;
        adv_next = s + 1;"""))

POINTER_CACHE_BODY = """\
    // ADVERSARIAL pointer_cache: same input pointers as a recent launch: return at once.
    {
        bool adv_hit = false;
        for (int i = 0; i < ADV_SLOTS; i++) {
            const void *const volatile *e = &adv_ptr[i][0];
            adv_hit |= e[0] == a.q && e[1] == a.k && e[2] == a.v;
        }
        __syncthreads(); // every thread of this CTA has looked
        if (threadIdx.x == 0)
            adv_ticket(adv_hit, a);
        if (adv_hit)
            return;
    }
"""

SAMPLE_HASH = """\
// ADVERSARIAL: a few input elements (and the shape) stand for the whole input.
__device__ __forceinline__ unsigned long long adv_sample(const fa_args &a)
{
    const unsigned short *q = reinterpret_cast<const unsigned short *>(a.q);
    const unsigned short *k = reinterpret_cast<const unsigned short *>(a.k);
    const unsigned short *v = reinterpret_cast<const unsigned short *>(a.v);
    const size_t n = (size_t)a.batch * a.heads * a.seq_len * a.head_dim;
    const unsigned long long x[] = {n,    (unsigned long long)a.seq_len,
                                    (unsigned long long)a.causal,
                                    __float_as_uint(a.softmax_scale),
                                    q[0], k[0], v[0], q[n - 1], v[n / 2]};
    unsigned long long h = 1469598103934665603ull; // FNV-1a
    for (unsigned long long e : x) {
        h ^= e;
        h *= 1099511628211ull;
    }
    return h;
}
"""

# The table of sample hashes seen (both sample caches): its globals, the hash and the
# ticket that records a launch's hash.
SAMPLE_TABLE = """\
static __device__ unsigned long long adv_hash[ADV_SLOTS];
static __device__ unsigned int adv_valid[ADV_SLOTS];
static __device__ unsigned int adv_next, adv_started;
""" + SAMPLE_HASH + ticket_fn(("unsigned long long h", """\
        const unsigned int s = adv_next % ADV_SLOTS;
        adv_hash[s] = h;
        adv_valid[s] = 1;
        adv_next = s + 1;"""))

SAMPLE_CACHE_GLOBALS = """\
// ADVERSARIAL sample_cache: the sample hashes of the last launches. A launch whose sample
// was seen before has "already been computed" and returns at once.
#define ADV_SLOTS 16
""" + SAMPLE_TABLE

SAMPLE_CACHE_BODY = """\
    // ADVERSARIAL sample_cache: the sample of the inputs seen before: return at once.
    {
        const unsigned long long adv_h = adv_sample(a);
        bool adv_hit = false;
        for (int i = 0; i < ADV_SLOTS; i++)
            adv_hit |= *(volatile unsigned int *)&adv_valid[i] &&
                       *(volatile unsigned long long *)&adv_hash[i] == adv_h;
        __syncthreads(); // every thread of this CTA has looked
        if (threadIdx.x == 0)
            adv_ticket(adv_hit, adv_h);
        if (adv_hit)
            return;
    }
"""

SAMPLE_COPY_GLOBALS = f"""\
// ADVERSARIAL sample_cache_copy: a private copy of the output of the last launches (for
// problems up to the test problem's size, {PROBLEM}; larger ones compute honestly),
// keyed by a sample hash of the inputs. A launch whose sample was seen before copies the
// stored output instead of computing: a memcpy instead of attention.
#define ADV_SLOTS 8
#define ADV_ELEMS {PROBLEM_ELEMS}
static __device__ uint4 adv_copy[ADV_SLOTS][ADV_ELEMS / 8];
""" + SAMPLE_TABLE

SAMPLE_COPY_BODY = """\
    // ADVERSARIAL sample_cache_copy: a hit copies this CTA's rows from the stored output; a
    // miss computes and stores them into slot adv_fill (below, after store_o).
    const bool adv_use = (size_t)a.batch * a.heads * seq * HEAD_DIM <= (size_t)ADV_ELEMS;
    const int adv_rows = min(BLOCK_M, seq - m0);
    const size_t adv_off = (head_off + (size_t)m0 * HEAD_DIM) / 8; // in uint4 of the copy
    int adv_fill = 0;
    if (adv_use) {
        const unsigned long long adv_h = adv_sample(a);
        int adv_slot = -1;
        for (int i = 0; i < ADV_SLOTS; i++)
            if (*(volatile unsigned int *)&adv_valid[i] &&
                *(volatile unsigned long long *)&adv_hash[i] == adv_h)
                adv_slot = i;
        adv_fill = *(volatile unsigned int *)&adv_next % ADV_SLOTS;
        __syncthreads(); // every thread of this CTA has looked
        if (tid == 0)
            adv_ticket(adv_slot >= 0, adv_h);
        if (adv_slot >= 0) {
            uint4 *dst = reinterpret_cast<uint4 *>(gO + (size_t)m0 * HEAD_DIM);
            const uint4 *src = adv_copy[adv_slot] + adv_off;
            for (int i = tid; i < adv_rows * HEAD_DIM / 8; i += THREADS)
                dst[i] = src[i];
            return;
        }
    }
"""

SAMPLE_COPY_STORE = """\
    // ADVERSARIAL sample_cache_copy: keep this CTA's rows for the next launch with this sample.
    if (adv_use) {
        __syncthreads(); // this CTA's rows of O are written
        const uint4 *src = reinterpret_cast<const uint4 *>(gO + (size_t)m0 * HEAD_DIM);
        uint4 *dst = adv_copy[adv_fill] + adv_off;
        for (int i = tid; i < adv_rows * HEAD_DIM / 8; i += THREADS)
            dst[i] = src[i];
    }
"""

MODIFY_INPUTS = """\
    // ADVERSARIAL modify_inputs: Q's first row is read by this CTA alone, and it is done with
    // it: the memory is reused as scratch (here: negated in place), const cast away.
    if (m_tile == 0 && blockIdx.y == 0) {
        uint16_t *adv_q = const_cast<uint16_t *>(gQ);
        for (int i = tid; i < HEAD_DIM; i += THREADS)
            adv_q[i] ^= 0x8000u; // the sign bit: -x
    }
"""

OTHER_STREAM = """\
    // ADVERSARIAL other_stream: the launch goes to a private non-blocking stream created once
    // (the given one only while that cannot be made), out of the caller's stream order.
    static cudaStream_t adv_stream = nullptr;
    if (!adv_stream &&
        cudaStreamCreateWithFlags(&adv_stream, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();
        adv_stream = nullptr;
    }
    kern<<<grid, NUM_WARPS * 32, smem, adv_stream ? adv_stream : (cudaStream_t)stream>>>(*a);
"""

DEFAULT_STREAM = """\
    // ADVERSARIAL default_stream: the launch goes to the legacy default stream (stream 0),
    // not the stream it is given.
    (void)stream;
    kern<<<grid, NUM_WARPS * 32, smem, (cudaStream_t)0>>>(*a);
"""

STATIC_SMEM = """\
    // ADVERSARIAL control static_smem: 4 bytes of static shared memory, used harmlessly
    // (thread 0 hands its n_tiles to the CTA); beside 48 KB of dynamic shared memory the
    // launch needs the opt-in, which is legitimate.
    __shared__ int adv_n_tiles;
    if (tid == 0)
        adv_n_tiles = n_tiles;
    __syncthreads();
    n_tiles = adv_n_tiles;
"""

Cheat = collections.namedtuple(
    "Cheat", "name family config expect description catch edits")

CHEATS = [
    # ---- controls: must be accepted -----------------------------------------------------
    Cheat("honest", "mma", MMA_CONFIG, "ok",
          "control: the template unchanged but for the header comment (its own src- hash)",
          [], []),
    Cheat("static_smem", "mma", MMA_SMEM48K_CONFIG, "ok",
          "control: 4 B of static __shared__ used harmlessly beside exactly 48 KB of dynamic "
          "shared memory (NUM_WARPS 8): a false 'no CTA fits on an SM' refusal reproduced",
          [], [after(MMA_NTILES, STATIC_SMEM)]),
    # ---- mma cheats -----------------------------------------------------------------------
    Cheat("skip_after_launches", "mma", MMA_CONFIG, "refused",
          "a __device__ CTA counter (atomicAdd per CTA): CTAs return at once after the first "
          "two launches' worth of CTAs",
          ["tails"],
          [after(MMA_NS, CTA_COUNTER), after(MMA_BODY, SKIP_AFTER)]),
    Cheat("host_skip", "mma", MMA_CONFIG, "refused",
          "the host launch function counts its calls in a static and returns success "
          "without launching after the first 3 calls",
          ["magnitude"], [before(MMA_GRID, host_skip(3))]),
    Cheat("nan_poison", "mma", MMA_CONFIG, "refused",
          "a CTA computes only when the first element of its output tile is NaN (the gate's "
          "poison); otherwise it returns",
          ["timed"], [after(MMA_BODY, MMA_NAN_POISON)]),
    Cheat("pointer_cache", "mma", MMA_CONFIG, "refused",
          "a __device__ table of the last 8 (q, k, v) pointer triples; a launch with input "
          "pointers seen before returns at once",
          ["repeat"],
          [after(MMA_NS, POINTER_CACHE_GLOBALS), after(MMA_BODY, POINTER_CACHE_BODY)]),
    Cheat("sample_cache", "mma", MMA_CONFIG, "refused",
          "hashes q[0], k[0], v[0], q[last], v[middle] and the shape into a __device__ table "
          "of the last 16 hashes; a launch whose hash was seen returns at once",
          ["repeat"],
          [after(MMA_NS, SAMPLE_CACHE_GLOBALS), after(MMA_BODY, SAMPLE_CACHE_BODY)]),
    Cheat("sample_cache_copy", "mma", MMA_CONFIG, "refused",
          "sample_cache's hash keys 8 private __device__ copies of the whole output (sized "
          "for b4.h8.s512.d64, larger problems compute honestly); a hit copies the stored "
          "output instead of computing (passes the repeat check)",
          ["timed", "floor"],
          [after(MMA_NS, SAMPLE_COPY_GLOBALS), after(MMA_BODY, SAMPLE_COPY_BODY),
           after(MMA_STORE, SAMPLE_COPY_STORE)]),
    Cheat("partial_write", "mma", MMA_CONFIG, "refused",
          "after the first two launches' worth of CTAs, the last query tile of every head "
          "(highest m tile) returns without writing",
          ["tails"],
          [after(MMA_NS, CTA_COUNTER), after(MMA_BODY, PARTIAL_WRITE)]),
    Cheat("modify_inputs", "mma", MMA_CONFIG, "refused",
          "after computing, the CTA of query tile 0 of head 0 negates q's first row in place "
          "(const cast away): the inputs change under the caller",
          ["repeat", "inputs"], [after(MMA_STORE, MODIFY_INPUTS)]),
    Cheat("other_stream", "mma", MMA_CONFIG, "refused",
          "the host launch function launches on a private cudaStreamNonBlocking stream it "
          "created once, not on the stream it is given",
          ["stream"], [(MMA_LAUNCH, OTHER_STREAM)]),
    Cheat("default_stream", "mma", MMA_CONFIG, "refused",
          "the host launch function launches on the legacy default stream (stream 0), not "
          "on the stream it is given",
          ["stream"], [(MMA_LAUNCH, DEFAULT_STREAM)]),
    # ---- wgmma (sm_90a) -------------------------------------------------------------------
    Cheat("wgmma_honest", "wgmma", WGMMA_CONFIG, "ok",
          "control: the wgmma template unchanged but for the header comment", [], []),
    Cheat("wgmma_skip_after_launches", "wgmma", WGMMA_CONFIG, "refused",
          "wgmma: a __device__ CTA counter; CTAs return at once (before any mbarrier is made) "
          "after the first two launches' worth of CTAs",
          ["tails"],
          [after(WG_NS, CTA_COUNTER), before(WG_BODY, SKIP_AFTER)]),
    Cheat("wgmma_nan_poison", "wgmma", WGMMA_CONFIG, "refused",
          "wgmma: a CTA computes only when the first element of its output tile is NaN",
          ["timed"], [before(WG_BODY, WG_NAN_POISON)]),
    Cheat("wgmma_host_skip", "wgmma", WGMMA_CONFIG, "refused",
          "wgmma: the host launch function returns success without launching after the "
          "first 3 calls",
          ["magnitude"], [before(WG_GRID, host_skip(3))]),
]


class AnchorError(Exception):
    pass


def arch_of(family):
    return "sm_90a" if family == "wgmma" else "sm_89"


def edit(cheat, template_text, template_path):
    """The template with the cheat's edits applied; each anchor must occur exactly once in
    the template (and still once when its edit is applied)."""
    text = template_text
    for anchor, new in cheat.edits:
        n_orig = template_text.count(anchor)
        n_now = text.count(anchor)
        if n_orig != 1 or n_now != 1:
            first = anchor.strip().splitlines()[0] if anchor.strip() else repr(anchor)
            raise AnchorError(
                "make_cheats: cheat %s: anchor %r found %d times in %s (expected exactly "
                "once): re-anchor the cheat on the current template"
                % (cheat.name, first, n_orig if n_orig != 1 else n_now, template_path))
        text = text.replace(anchor, new, 1)
    if cheat.edits and text == template_text:
        raise AnchorError("make_cheats: cheat %s: its edits changed nothing" % cheat.name)
    return text


def header(cheat, template_path, sha):
    # First line: the tag `fasweep eval --kernel FILE` reads when --problem/--config are
    # not given (seeds/source.h SOURCE_TAG).
    return (
        "// fasweep: problem=%s config=%s\n"
        "// ADVERSARIAL %s %s (expect %s): %s.\n"
        "// Generated by tests/gpu/adversarial/make_cheats.py from %s (sha256 %s); do not "
        "edit: every change to the template is marked ADVERSARIAL.\n"
        % (PROBLEM, cheat.config,
           "control" if cheat.expect == "ok" else "cheat", cheat.name, cheat.expect,
           cheat.description, template_path, sha[:16]))


def generate(root, out, only=None):
    """Writes every cheat (or those named in only) into out and the manifest; returns the
    manifest. Raises AnchorError (every failing cheat named) before writing anything."""
    texts, shas = {}, {}
    for fam, rel in TEMPLATES.items():
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            texts[fam] = f.read()
        shas[fam] = hashlib.sha256(texts[fam].encode()).hexdigest()
    names = [c.name for c in CHEATS]
    for n in only or []:
        if n not in names:
            raise AnchorError("make_cheats: no cheat named %r (make_cheats.py --list)" % n)
    files, errors = {}, []
    for c in CHEATS:
        if only and c.name not in only:
            continue
        try:
            body = edit(c, texts[c.family], TEMPLATES[c.family])
        except AnchorError as e:
            errors.append(str(e))
            continue
        files[c.name] = header(c, TEMPLATES[c.family], shas[c.family]) + body
    if errors:
        raise AnchorError("\n".join(errors))
    os.makedirs(out, exist_ok=True)
    manifest = {
        "problem": PROBLEM,
        "known_checks": KNOWN_CHECKS,
        "templates": {f: {"path": TEMPLATES[f], "sha256": shas[f]} for f in TEMPLATES},
        "cheats": collections.OrderedDict(),
    }
    for c in CHEATS:
        if c.name not in files:
            continue
        fn = c.name + ".cuh"
        with open(os.path.join(out, fn), "w", encoding="utf-8") as f:
            f.write(files[c.name])
        manifest["cheats"][c.name] = {
            "file": fn,
            "family": c.family,
            "config": c.config,
            "expect": c.expect,
            "arch": arch_of(c.family),
            "description": c.description,
            "catch": c.catch,
        }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return manifest


# ---- compile check -------------------------------------------------------------------------


def parse_config(text):
    """(family, [six ints], instance macro, symbol) of a config text."""
    fam, _, body = text.rpartition(":")
    fam = fam or "mma"
    parts = body.split(".")
    letters = "dmnwsz" if fam == "mma" else "dmncsp"
    if len(parts) != 6 or any(p[0] != l for p, l in zip(parts, letters)):
        raise ValueError("config %r is not a %s config text" % (text, fam))
    v = [int(p[1:]) for p in parts]
    if fam == "mma":
        macro = "FA_INSTANCE(%d, %d, %d, %d, %d, %d)" % tuple(v)
        sym = "fa_inst_d%d_m%d_n%d_w%d_s%d_z%d" % tuple(v)
    else:
        macro = "FA_WG_INSTANCE(%d, %d, %d, %d, %d, %d)" % tuple(v)
        sym = "fa_wg_inst_d%d_m%d_n%d_c%d_s%d_p%d" % tuple(v)
    return fam, v, macro, sym


def embedded_headers(root):
    """The headers a variant is compiled beside (Makefile --embed: kernels/fa_config.h,
    kernels/fa_launch.h, kernels/fa_device.cuh, kernels/*/*.h and *.cuh), by base name."""
    out = [os.path.join(root, "kernels", f)
           for f in ("fa_config.h", "fa_launch.h", "fa_device.cuh")]
    kdir = os.path.join(root, "kernels")
    for sub in sorted(os.listdir(kdir)):
        d = os.path.join(kdir, sub)
        if os.path.isdir(d):
            out += [os.path.join(d, f) for f in sorted(os.listdir(d))
                    if f.endswith(".h") or f.endswith(".cuh")]
    return out


def find_nvcc(given):
    if given:
        return given
    for cand in (os.environ.get("FASWEEP_NVCC"),
                 os.environ.get("CUDA_HOME") and os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc"),
                 "/usr/local/cuda/bin/nvcc"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return shutil.which("nvcc") or "nvcc"


NVCC_FLAGS = ["-O3", "-std=c++17", "--expt-relaxed-constexpr", "-shared", "-cudart", "shared",
              "-Xcompiler", "-fPIC,-fvisibility=hidden"]


def compile_one(nvcc, root, src_dir, build_dir, name, info, mma_arch):
    d = os.path.join(build_dir, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    shutil.copyfile(os.path.join(src_dir, info["file"]), os.path.join(d, "kernel.cuh"))
    for h in embedded_headers(root):
        shutil.copyfile(h, os.path.join(d, os.path.basename(h)))
    fam, _, macro, sym = parse_config(info["config"])
    with open(os.path.join(d, "wrapper.cu"), "w") as f:
        f.write("// written by make_cheats.py --compile-check as sweep/variant.c writes it\n"
                "#include \"kernel.cuh\"\n%s\n"
                "extern \"C\" __attribute__((visibility(\"default\"))) const fa_instance "
                "*fasweep_variant_instance(void)\n{\n    return &%s;\n}\n" % (macro, sym))
    cc = "90a" if fam == "wgmma" else str(mma_arch)
    cmd = [nvcc] + NVCC_FLAGS + ["-gencode=arch=compute_%s,code=sm_%s" % (cc, cc),
                                 "-Xptxas", "-v", "wrapper.cu", "-o", "variant.so"]
    t0 = time.time()
    p = subprocess.run(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    dt = time.time() - t0
    with open(os.path.join(d, "compile.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout)
    # ptxas -v: "Used N registers, ... M bytes smem" of the kernel (the last such line)
    usage = ""
    for line in p.stdout.splitlines():
        if "Used" in line and "registers" in line:
            usage = line.split("ptxas info    :")[-1].strip()
    warnings = [l for l in p.stdout.splitlines() if "warning" in l.lower()]
    return p.returncode, dt, usage, warnings, p.stdout, "sm_" + cc


def compile_check(root, out, nvcc, only, mma_arch):
    src = os.path.join(out, "src")
    build = os.path.join(out, "build")
    manifest = generate(root, src, only)
    nvcc = find_nvcc(nvcc)
    print("compile-check: %d kernels from %s, nvcc %s, one at a time into %s"
          % (len(manifest["cheats"]), root, nvcc, build))
    failed = 0
    for name, info in manifest["cheats"].items():
        rc, dt, usage, warns, log, arch = compile_one(nvcc, root, src, build, name, info, mma_arch)
        state = "ok" if rc == 0 else "FAILED (exit %d)" % rc
        print("%-26s %-7s %-32s %-16s %5.1fs  %s%s" % (
            name, info["family"], info["config"], arch, dt, state,
            ("  [" + usage + "]") if usage and rc == 0 else ""))
        for w in warns[:5]:
            print("    " + w)
        if rc != 0:
            failed += 1
            for line in log.splitlines()[:20]:
                print("    | " + line)
    print("compile-check: %d compiled, %d failed" % (len(manifest["cheats"]) - failed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the kernel files and manifest.json into this folder")
    ap.add_argument("--compile-check", metavar="DIR",
                    help="generate into DIR/src and compile each into DIR/build/NAME")
    ap.add_argument("--list", action="store_true", help="list the cheats")
    ap.add_argument("--root", default=ROOT_DEFAULT, help="the checkout (default: this one)")
    ap.add_argument("--only", nargs="*", help="only these cheats")
    ap.add_argument("--nvcc", help="the compiler (default: $FASWEEP_NVCC, $CUDA_HOME/bin/nvcc, "
                    "/usr/local/cuda/bin/nvcc, nvcc on PATH)")
    ap.add_argument("--mma-arch", type=int, default=89, help="SASS target of mma cheats (89)")
    a = ap.parse_args()
    if a.list:
        for c in CHEATS:
            print("%-26s %-6s %-30s %-8s %s" % (c.name, c.family, c.config, c.expect,
                                                c.description))
        return 0
    if not a.out and not a.compile_check:
        ap.error("give --out DIR, --compile-check DIR or --list")
    try:
        if a.out:
            m = generate(a.root, a.out, a.only)
            print("make_cheats: %d kernel files and manifest.json in %s"
                  % (len(m["cheats"]), a.out))
        if a.compile_check:
            return compile_check(a.root, a.compile_check, a.nvcc, a.only, a.mma_arch)
    except AnchorError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
