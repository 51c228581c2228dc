"""problem_text.py - the attention problem as grid/space.c reads and writes
it, for the scripts (sdpa_baseline.py, baselines.sh, bench_table.py,
fidelity_report.py). Standard library only.

A problem is a dict: batch, heads, kv_heads, seq_len, head_dim (ints),
causal (bool), dtype ("fp16" or "bf16"). Q and O are [batch, heads,
seq_len, head_dim], K and V [batch, kv_heads, seq_len, head_dim]; query
head h reads K/V head h // (heads // kv_heads).

  parse(text)         the problem of a text, or None (space_problem_parse:
                      the canonical "b4.h8.s512.d64.nc",
                      "b1.h32.kv8.s4096.d128.c.bf16", strictly, or the
                      short "B,H[:KV],S,D[,DTYPE]", non-causal)
  text(p)             the canonical text (space_problem_format): the store
                      key's problem. fp16 with kv_heads == heads writes
                      what every problem wrote before kv_heads and dtype.
  of_space(obj, at)   the problem of a space file's problem object (its
                      defaults: causal false, dtype fp16, kv_heads heads);
                      ValueError naming `at` (e.g. "problems[2].kv_heads")
                      for what grid/space.c refuses of the keys it reads,
                      KeyError(key) for a required key left out
  flops(p), nbytes(p) space_problem_flops, space_problem_bytes
"""
import re

DTYPES = ("fp16", "bf16")  # FA_DTYPE_FP16, FA_DTYPE_BF16 (kernels/fa_config.h)
HEAD_DIMS = (64, 128, 256)  # what a space may hold (grid/space.c, sp_head_dim_ok)
ELEM_BYTES = 2  # fp16 and bf16
INT_MAX = 2 ** 31 - 1

_NUM = r"([1-9][0-9]*)"  # no sign, no leading zeros
_CANON = re.compile(r"b%s\.h%s(?:\.kv%s)?\.s%s\.d%s\.(c|nc)(?:\.(bf16))?\Z" % ((_NUM,) * 5))
_SHORT = re.compile(r"%s,%s(?::%s)?,%s,%s(?:,(fp16|bf16))?\Z" % ((_NUM,) * 5))


def parse(text):
    """The problem of text (see above), or None for any other text."""
    if not isinstance(text, str) or not text.isascii():
        return None
    m = _CANON.match(text)
    if m:
        b, h, kv, s, d, c, dt = m.groups()
        if kv is not None and kv == h:  # ".kvN" only when N is not the heads
            return None
        causal = c == "c"
    else:
        m = _SHORT.match(text)
        if not m:
            return None
        b, h, kv, s, d, dt = m.groups()
        causal = False
    v = [int(x) for x in (b, h, kv or h, s, d)]
    if max(v) > INT_MAX or v[1] % v[2] != 0:
        return None
    return {"batch": v[0], "heads": v[1], "kv_heads": v[2], "seq_len": v[3], "head_dim": v[4],
            "causal": causal, "dtype": dt or "fp16"}


def text(p):
    """The canonical text of problem p (space_problem_format)."""
    kv = p.get("kv_heads", p["heads"])
    return "b%d.h%d%s.s%d.d%d.%s%s" % (
        p["batch"], p["heads"], ".kv%d" % kv if kv != p["heads"] else "", p["seq_len"],
        p["head_dim"], "c" if p["causal"] else "nc",
        "" if p.get("dtype", "fp16") == "fp16" else "." + p["dtype"])


def _pos_int(v):
    return type(v) is int and 1 <= v <= INT_MAX


def of_space(o, at="problems[0]"):
    """The problem of a space file's problem object o, with its defaults;
    ValueError("AT.KEY: expected ..., got ...") for a key grid/space.c
    would refuse (unknown keys and the launch limits are the C's to say),
    KeyError(KEY) for batch, heads, seq_len or head_dim left out."""
    if not isinstance(o, dict):
        raise ValueError("%s: expected a problem object, got %s" % (at, type(o).__name__))
    p = {}
    for k in ("batch", "heads", "seq_len", "head_dim"):
        if k not in o:
            raise KeyError(k)
    for k in ("batch", "heads", "seq_len", "head_dim"):
        if not _pos_int(o[k]):
            raise ValueError("%s.%s: expected an integer >= 1, got %r" % (at, k, o[k]))
        p[k] = o[k]
    if p["head_dim"] not in HEAD_DIMS:
        raise ValueError("%s.head_dim: unsupported head_dim %d: expected 64, 128 or 256"
                         % (at, p["head_dim"]))
    kv = o.get("kv_heads", p["heads"])
    if not (type(kv) is int and 1 <= kv <= p["heads"] and p["heads"] % kv == 0):
        raise ValueError("%s.kv_heads: expected an integer from 1 to heads (%d) that divides "
                         "it, got %r" % (at, p["heads"], kv))
    p["kv_heads"] = kv
    c = o.get("causal", False)
    if type(c) is not bool:
        raise ValueError("%s.causal: expected true or false, got %r" % (at, c))
    p["causal"] = c
    dt = o.get("dtype", "fp16")
    if dt not in DTYPES:
        raise ValueError('%s.dtype: expected "fp16" or "bf16", got %r' % (at, dt))
    p["dtype"] = dt
    return p


def flops(p):
    """4*B*H*S^2*D, halved when causal (kv_heads does not change the math)."""
    f = 4.0 * p["batch"] * p["heads"] * p["seq_len"] ** 2 * p["head_dim"]
    return f / 2 if p["causal"] else f


def nbytes(p):
    """Q and O of B*H*S*D, K and V of B*KV*S*D elements of 2 bytes."""
    row = float(p["batch"]) * p["seq_len"] * p["head_dim"]
    return (2.0 * p["heads"] + 2.0 * p.get("kv_heads", p["heads"])) * row * ELEM_BYTES
