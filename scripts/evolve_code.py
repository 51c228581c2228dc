#!/usr/bin/env python3
"""evolve_code.py SEEDS.json --out DIR [options] - the EvoEngineer loop over
kernel SOURCE: Gen-0 from a `fasweep topk` seeds file, children from a
pluggable mutator command, every candidate gated, timed and stored by
`fasweep eval --kernel FILE.cuh --json`, its lineage in DIR/lineage.jsonl.

Kernel families: each seed names its `family` (mma when it names none);
kernels/FAMILY/evolve.json is all this script knows of a family: its
template, its markers (the instance macro and the __global__ template a
source must hold, as eval checks), its config texts, the context and
insights the mutator is given and the rule mutator's edit sites. A
candidate is measured with `--config TEXT` (mma) or `--config FAMILY:TEXT`.

Gen-0: the seeds' first --population distinct (family, config)s, each with
the kernel source of the seed (a seed's `source` file when it has one, else
its provenance.kernel_source, else its family's template), copied into
DIR/src/ and measured through `eval --kernel` like every child, so the
seeds' top-1 is re-measured on the same path as the candidates.

Then generations of --population children each until --trials children
(default 45) or --generations: each child's parent is the winner of a
tournament of two drawn from the population, the mutator writes the child
source, and the child is measured at its parent's family and config unless
the mutator's OUT.cuh.json says {"config": "TEXT" or "FAMILY:TEXT"}. The
population of the next generation: the --elites best candidates seen so
far, then the best of this generation's children, then the next best seen.

Better, and ties (docs/measurement.md "Intervals", store/record.c
record_tie): two ok candidates tie when |median_a - median_b| <=
sqrt(ha^2 + hb^2), each h the half-width (us) of its 95 % interval on the
side facing the other median; a candidate without an interval ties with
every candidate (record_tie calls that tie unknown; the loop counts an
unknown tie as a tie, the conservative reading). Among candidates that tie the earlier one in journal order
(g0-0 < g0-1 < ... < t1 < t2 < ...) wins. The tournament: the two tie ->
the earlier, else the lower median. A ranking (elites, the next population,
the summary's best) is built by repeating: take the remaining candidate
with the lowest median (the earlier on equal medians), then of all
remaining candidates that tie with it the earliest; append it, remove it.
So the ranking depends only on the candidates' medians, intervals and ids.

The mutator is a command (--mutator, split like a shell line; default the
rule-based scripts/mutators/rules.py): the loop writes DIR/tasks/T.json
(schema fasweep.evolve-task/1: the parent's source path, family and
results, the family, its edit sites, the task context, the insights, the
history of candidates, a per-trial rng_seed) and runs `MUTATOR
DIR/tasks/T.json DIR/src/T.cuh.part` in a session of its own, with its
--mutator-timeout in $FASWEEP_MUTATOR_TIMEOUT (llm_prompt.py fits its
model's timeout inside it); the child is that file. A bad answer is a
result: a mutator that exits non-zero, outlives --mutator-timeout (its
whole session is killed, a process it put into a group of its own
included: SIGTERM, then SIGKILL), writes nothing, or writes no kernel of the
config's family (empty, not UTF-8, a NUL byte, over 4 MiB, no markers), or
names a config that is no config text or of another family than the
source, or whose source eval refuses, is journalled as a candidate with
status `invalid` and the reason, never measured, and the loop goes on.
After --max-mutator-failures (5) such trials in a row it stops: exit 1.

A candidate that does not compile, fails a check of eval (the gate,
repeat, tails, magnitude, inputs, stream, timed, floor), faults or hangs
is a result (eval's status, error and check in the journal) and the loop
goes on. Journal lines are written after each result; run again with the
same DIR and it resumes: each journal line is checked for the shape of
every field the loop reads (a line of another shape is bad input, named
with its line number; a last line cut by an interruption is dropped),
journalled candidates (invalid ones too) are not repeated, a child source
already written is not asked for again, and a result already in the store
(`fasweep show` of its key) is not measured again. With the journal
complete, a run again is a replay: nothing is measured or asked, the same
lines and summary are printed.

One run at a time per DIR: the run holds an exclusive lock (flock of
DIR/lock, its pid in it) until it ends; a second run into DIR is refused.

Every process this script starts (mutator, eval, show) runs in a session
(so a process group) of its own, killed whole on its timeout, when it ends
leaving processes behind, and on SIGINT, SIGTERM or SIGHUP of the loop.

Every line printed has its control characters (ESC, a line break, C1)
escaped as \\xHH, as fasweep prints them: a mutation, eval's error, a
mutator's stderr or a file name can start no escape sequence. Every ratio
is a finite number or null (out of range: a note says so), and a number
eval prints that is not finite (Infinity, NaN) is no measurement (the
candidate is crashed); no JSON written holds NaN or Infinity.

Exit 0 after the summary; 1 when fasweep eval fails as a whole (no GPU),
no gen-0 source passes, or the mutator failed --max-mutator-failures times
in a row; 2 on bad input (a seeds file that is not a regular file, of
another schema, with NaN or Infinity, or with a value of the wrong type,
an unknown family, a missing or non-kernel seed source, a mutator that
cannot be started, DIR holding another run's options or in use by another
run, a journal line of another shape), with one line naming the file;
130/143 when interrupted. Python 3.11+, stdlib only.
"""
import argparse
import fcntl
import hashlib
import json
import math
import os
import random
import re
import shlex
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
from fnv1a import fnv1a64  # noqa: E402  (the hash of eval's build id src-HASH)
from report_io import record_tie  # noqa: E402  (store/record.c's rule, ported once)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_MUTATOR = "%s %s" % (shlex.quote(sys.executable),
                             shlex.quote(os.path.join(HERE, "mutators", "rules.py")))
JOURNAL = "lineage.jsonl"
# What eval --json prints beside the time (when it does): kept in the
# journal and shown to the mutator.
FIGURES = ("rounds", "rel_l2", "max_abs", "regs", "local_bytes", "smem_bytes")
TASK_SCHEMA = "fasweep.evolve-task/1"
MAX_SOURCE = 4 << 20  # as the C side's VARIANT_MAX_BYTES
MAX_SEEDS = 64 << 20
MAX_META = 1 << 20
MAX_OUTPUT = 8 << 20  # of a child process's stdout or stderr read back
# The checks eval names when it refuses a candidate (the error's prefix).
CHECKS = ("gate", "repeat", "tails", "magnitude", "inputs", "stream", "timed", "floor")
CHECK_PREFIX = re.compile(r"^([a-z_]{1,32}): ")
STATUS = re.compile(r"^[a-z_]{1,32}\Z")
FAMILY_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}\Z")
MODE = re.compile(r"^[a-z0-9_]{1,32}\Z")
PROBLEM = re.compile(r"^[A-Za-z0-9._,+-]{1,200}\Z")
CANDIDATE_ID = re.compile(r"^(g0-|t)(0|[1-9][0-9]{0,8})\Z")
KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL of a process group
DEFAULT_MUTATOR_TIMEOUT = 900  # above llm_prompt.py's default model timeout (600 s)


class BadInput(Exception):
    """Bad input: one line naming the file, exit 2."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the loop is (its children are killed
    on the way out)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


# ---- what reaches the terminal ----------------------------------------------------------------

# C0 controls (a line break, ESC), DEL, C1, UTF-16 surrogates (a byte that
# was not UTF-8, decoded with surrogateescape) and the Unicode controls that
# reorder or hide text (bidi embeddings, overrides and isolates, zero-width
# marks, the line and paragraph separators).
UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u200b-\u200f\u2028-\u202e"
                    r"\u2060-\u206f\ufeff]")


def _esc1(m):
    o = ord(m.group(0))
    if o < 0x80:
        return "\\x%02x" % o
    if 0xdc80 <= o <= 0xdcff:  # a byte that was not UTF-8 (surrogateescape)
        return "\\x%02x" % (o - 0xdc00)
    if o < 0xa0:  # C1: its UTF-8 bytes, as fasweep writes them
        return "".join("\\x%02x" % b for b in m.group(0).encode("utf-8"))
    return "\\u%04x" % o


def esc(text):
    """Untrusted text as it may be printed: every control character (C0
    such as a line break or ESC, DEL, C1) and every byte that was not UTF-8
    as \\xHH, as fasweep's messages write them (cli/cli.c cli_put_clean),
    the Unicode controls that reorder or hide text as \\uHHHH; the rest as
    is. So a model's reply, eval's error, a file name can neither start an
    escape sequence (a title, concealed text) nor break the one-line rule.
    Every line these scripts print goes through it (say, die)."""
    return UNSAFE.sub(_esc1, str(text))


def say(text, file=None):
    """Prints one line, escaped (esc); what the stream's encoding cannot
    hold as \\uHHHH (never a UnicodeEncodeError)."""
    f = file or sys.stdout
    line = esc(text)
    try:
        print(line, file=f, flush=True)
    except UnicodeEncodeError:
        enc = getattr(f, "encoding", None) or "ascii"
        print(line.encode(enc, "backslashreplace").decode(enc, "replace"), file=f, flush=True)


def die(msg, code=2):
    say("evolve_code.py: " + msg, sys.stderr)
    sys.exit(code)


def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def one_line(text, n=200):
    """The first non-empty line of text, at most n characters."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:n]
    return ""


# ---- JSON in, JSON out: finite numbers only ---------------------------------------------------

def nonfinite(v):
    """Where the first number of a decoded JSON value that is not finite
    is ("seeds[0].metrics.median_us"; "" for v itself), or None. JSON has
    no NaN or Infinity, but Python's decoder reads them (and 1e999 as
    inf): every document these scripts read goes through this. Iterative,
    so a value nested as deep as the decoder allows cannot overflow the
    stack here."""
    stack = [("", v)]
    while stack:
        where, x = stack.pop()
        if isinstance(x, float) and not math.isfinite(x):
            return where or "(the value itself)"
        if isinstance(x, dict):
            stack.extend(("%s.%s" % (where, k) if where else str(k), y)
                         for k, y in reversed(list(x.items())))
        elif isinstance(x, list):
            stack.extend(("%s[%d]" % (where, i), y) for i, y in reversed(list(enumerate(x))))
    return None


def dumps(v, **kw):
    """json.dumps for every JSON these scripts write: a NaN or an infinity
    is a bug caught here (ValueError), never written as JSON that is not."""
    return json.dumps(v, allow_nan=False, **kw)


def quotient(a, b, digits=4):
    """a / b rounded to digits, when a, b and the result are finite and
    positive (a ratio of two times); else None: never inf or nan (1e308 us
    over 1e-6 us overflows) and never a ratio rounded to 0."""
    if not (is_num(a) and is_num(b)) or a <= 0 or b <= 0:
        return None
    try:
        q = round(a / b, digits)
    except (OverflowError, ZeroDivisionError):
        return None
    return q if math.isfinite(q) and q > 0 else None


# ---- typed shapes: what a document read from a file must look like ----------------------------

def jtype(v):
    return {dict: "an object", list: "an array", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(v), "a number")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def clean_str(v):
    """A string with no control characters (NUL, line breaks) in it."""
    return isinstance(v, str) and not any(ord(c) < 32 or ord(c) == 127 for c in v)


class Invalid(Exception):
    """A value that is not of its shape: where (a key path) and what is
    wrong (": expected ..., got ..." or " VALUE is not ...")."""

    def __init__(self, where, what):
        super().__init__(where + what)
        self.where, self.what = where, what


def _key(where, k):
    return "%s.%s" % (where, k) if where else k


def _want(want, null, v, where):
    raise Invalid(where, ": expected %s%s, got %s" % (want, " or null" if null else "", jtype(v)))


def Str(pattern=None, what=None, null=False, clean=True):
    """A string (or null): matching pattern (else "VALUE is not WHAT"),
    without control characters when clean."""
    def check(v, where):
        if v is None and null:
            return
        if not isinstance(v, str):
            _want("a string", null, v, where)
        if pattern is not None and not pattern.match(v):
            raise Invalid(where, " %s is not %s" % (json.dumps(v)[:80], what))
        if clean and not clean_str(v):
            raise Invalid(where, ": a control character (a NUL or a line break) in %s"
                          % json.dumps(v)[:80])
    check.want = "a string"
    return check


def Num(null=True, positive=False):
    """A finite number (positive: > 0), or null."""
    want = "a positive number" if positive else "a number"

    def check(v, where):
        if v is None and null:
            return
        if not is_num(v) or (positive and v <= 0):
            _want(want, null, v, where)
    check.want = want
    return check


def Int(null=True, minimum=None):
    want = "an integer" + (" >= %d" % minimum if minimum is not None else "")

    def check(v, where):
        if v is None and null:
            return
        if isinstance(v, bool) or not isinstance(v, int) or \
                (minimum is not None and v < minimum):
            _want(want, null, v, where)
    check.want = want
    return check


def Bool(null=True):
    def check(v, where):
        if not (v is None and null) and not isinstance(v, bool):
            _want("true/false", null, v, where)
    check.want = "true/false"
    return check


def Obj(fields, null=False):
    """An object (or null) whose keys in fields have their shapes (a key
    not there is null); other keys are not read, so not checked."""
    def check(v, where):
        if v is None and null:
            return
        if not isinstance(v, dict):
            _want("an object", null, v, where)
        for k, shape in fields.items():
            shape(v.get(k), _key(where, k))
    check.want = "an object"
    return check


def Arr(item, null=False, nonempty=False, length=None):
    want = "a non-empty array" if nonempty else \
        "an array of %d" % length if length else "an array"

    def check(v, where):
        if v is None and null:
            return
        if not isinstance(v, list) or (nonempty and not v) or \
                (length is not None and len(v) != length):
            _want(want, null, v, where)
        for i, x in enumerate(v):
            item(x, "%s[%d]" % (where, i))
    check.want = want
    return check


def OneOf(*shapes, null=False):
    """The first of shapes whose type the value has (by the JSON type)."""
    want = ", ".join(s.want for s in shapes)

    def check(v, where):
        if v is None and null:
            return
        for s in shapes:
            if (s.want.startswith("an object") and isinstance(v, dict)) or \
                    (s.want.startswith("a string") and isinstance(v, str)):
                return s(v, where)
        _want(want, null, v, where)
    check.want = want
    return check


def Interval(null=True):
    """[ci_lo_us, ci_hi_us]: two positive numbers, lo <= hi."""
    pair = Arr(Num(null=False, positive=True), length=2)

    def check(v, where):
        if v is None and null:
            return
        pair(v, where)
        if v[0] > v[1]:
            raise Invalid(where, ": %s is not an interval (lo > hi)" % json.dumps(v)[:80])
    check.want = "an interval [lo, hi]"
    return check


def load_json(data, path, what):
    """The JSON document of data (bytes of the file path): UTF-8, nested no
    deeper than the decoder goes, no non-finite number. Raises BadInput
    naming the file."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput("%s %s is not JSON: not UTF-8 text" % (what, path))
    except (ValueError, RecursionError) as e:
        # RecursionError: nested deeper than Python's JSON decoder goes.
        raise BadInput("%s %s is not JSON: %s" % (what, path, str(e)[:200]))
    bad = nonfinite(doc)
    if bad:
        raise BadInput("%s: %s: NaN or an infinity (not a JSON number)" % (path, bad))
    return doc


# ---- files -------------------------------------------------------------------------------------

def read_regular(path, limit, what):
    """The bytes of a regular file (at most limit + 1 of them: the caller
    tells a larger file by its length). Opened without blocking, so a FIFO
    or a device is refused, never waited on. Raises BadInput."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise BadInput("%s %s cannot be read: %s" % (what, path, e.strerror))
    except (ValueError, TypeError):  # a NUL in the path
        raise BadInput("%s %s cannot be read: not a path" % (what, json.dumps(str(path))[:80]))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadInput("%s %s is not a regular file" % (what, path))
        chunks, got = [], 0
        while got <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - got))
            if not b:
                break
            chunks.append(b)
            got += len(b)
        return b"".join(chunks)
    except OSError as e:
        raise BadInput("%s %s cannot be read: %s" % (what, path, e.strerror))
    finally:
        os.close(fd)


def read_text(path, limit, what):
    """The UTF-8 text of a regular file of at most limit bytes (read_regular:
    a FIFO is refused, never waited on). Raises BadInput naming it."""
    data = read_regular(path, limit, what)
    if len(data) > limit:
        raise BadInput("%s %s is larger than %d bytes" % (what, path, limit))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("%s %s is not UTF-8 text" % (what, path))


def write_text(path, text):
    """Writes text to path whole: into path.part (created anew, never
    through a link, never waiting on a FIFO planted there), then renamed
    over path, whatever path was. OSError otherwise."""
    part = path + ".part"
    try:
        if os.path.lexists(part):
            os.remove(part)
    except OSError:
        pass  # (the open below says why)
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC |
                 getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(part, path)


# ---- kernel families ---------------------------------------------------------------------------

class Family:
    """One kernel family as kernels/FAMILY/evolve.json describes it."""

    def __init__(self, name, path, d):
        def need(k, typ=str):
            if not isinstance(d.get(k), typ) or (typ is str and not d[k]):
                raise BadInput("%s: %s is missing or not a %s" % (path, k, typ.__name__))
            return d[k]
        if need("family") != name:
            raise BadInput("%s: family is %s, not %s" % (path, json.dumps(d["family"]), name))
        self.name = name
        self.template_rel = need("template")
        self.template = os.path.join(ROOT, self.template_rel)
        self.instance_macro = need("instance_macro")
        self.kernel = need("kernel")
        self.context = need("context")
        self.insights = need("insights", list)
        self.edit_sites = need("edit_sites", list)
        self.config_example = need("config_example")
        if not all(isinstance(i, str) for i in self.insights):
            raise BadInput("%s: insights is not a list of strings" % path)
        try:
            self.config_rx = re.compile(need("config_pattern"))
        except re.error as e:
            raise BadInput("%s: config_pattern does not compile: %s" % (path, e))

    def arg(self, text):
        """The config as eval's --config takes it."""
        return text if self.name == "mma" else "%s:%s" % (self.name, text)

    def is_config(self, text):
        return isinstance(text, str) and bool(self.config_rx.fullmatch(text))


_FAMILIES = {}


def known_families():
    kd = os.path.join(ROOT, "kernels")
    try:
        names = os.listdir(kd)
    except OSError:
        return []
    return sorted(n for n in names if FAMILY_NAME.match(n)
                  and os.path.isfile(os.path.join(kd, n, "evolve.json")))


def family(name, where):
    """The Family called name; BadInput naming `where` (the file that
    named it) when there is none."""
    if name in _FAMILIES:
        return _FAMILIES[name]
    if not isinstance(name, str) or not FAMILY_NAME.match(name) or \
            not os.path.isfile(os.path.join(ROOT, "kernels", name, "evolve.json")):
        raise BadInput("%s: unknown kernel family %s (known: %s; each has a "
                       "kernels/FAMILY/evolve.json)" % (where, json.dumps(name)[:40],
                                                         ", ".join(known_families())))
    path = os.path.join(ROOT, "kernels", name, "evolve.json")
    data = read_regular(path, MAX_SEEDS, "the family file")
    try:
        d = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise BadInput("the family file %s is not JSON: %s" % (path, str(e)[:200]))
    if not isinstance(d, dict):
        raise BadInput("the family file %s is not a JSON object" % path)
    _FAMILIES[name] = Family(name, path, d)
    return _FAMILIES[name]


def marker_families(text):
    """The families whose markers (instance macro and kernel) text holds."""
    out = []
    for n in known_families():
        try:
            f = family(n, "kernels")
        except BadInput:
            continue
        if f.instance_macro in text and f.kernel in text:
            out.append(n)
    return out


def kernel_problem(data, fam):
    """(text, None) when data is a kernel source of Family fam as eval
    checks one (at most 4 MiB, no NUL byte, UTF-8, fam's instance macro and
    kernel template), else (None, the reason)."""
    if not data:
        return None, "empty: not a kernel source"
    if len(data) > MAX_SOURCE:
        return None, "larger than 4 MiB: not a kernel source"
    if b"\0" in data:
        return None, "it holds a NUL byte: not a kernel source"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text: not a kernel source"
    if fam.instance_macro in text and fam.kernel in text:
        return text, None
    other = [n for n in marker_families(text) if n != fam.name]
    missing = [m for m in (fam.instance_macro, fam.kernel) if m not in text]
    return None, ("not a kernel source of family %s (no %s%s; an edited copy of %s is expected)"
                  % (fam.name, " and no ".join(missing),
                     "; it holds the markers of family %s" % ", ".join(other) if other else "",
                     fam.template_rel))


def parse_config(text, default_family, where):
    """(Family, config text) of a mutator's config, "TEXT" or "FAMILY:TEXT";
    a bare TEXT is default_family's when it is one of its configs, else the
    family whose config it is. Raises ValueError with the reason."""
    if not isinstance(text, str) or not text or len(text) > 200:
        raise ValueError("the config %s is not a config text" % json.dumps(text)[:80])
    if ":" in text:
        name, _, body = text.partition(":")
        try:
            fam = family(name, where)
        except BadInput:
            raise ValueError("the config %s names an unknown kernel family" % json.dumps(text)[:80])
        if not fam.is_config(body):
            raise ValueError("the config %s is not a config text of family %s (e.g. %s)"
                             % (json.dumps(text)[:80], fam.name, fam.config_example))
        return fam, body
    if default_family.is_config(text):
        return default_family, text
    for n in known_families():
        fam = family(n, where)
        if fam.is_config(text):
            return fam, text
    raise ValueError("the config %s is not a config text of any kernel family"
                     % json.dumps(text)[:80])


# ---- process groups ----------------------------------------------------------------------------

def members(pgid, sid=None):
    """The pids of process group pgid, and of session sid when given, that
    still run (zombies do not count: a container's pid 1 may never reap an
    orphan); None when /proc cannot be read."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    out = []
    for n in names:
        if not n.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % n, "rb") as f:
                st = f.read()
            rest = st[st.rfind(b")") + 2:].split()
            if len(rest) > 3 and rest[0] != b"Z" and \
                    (int(rest[2]) == pgid or (sid is not None and int(rest[3]) == sid)):
                out.append(int(n))
        except (OSError, ValueError):
            continue
    return out


def group_alive(pgid, sid=None):
    """Whether a process of group pgid (or of session sid) still runs."""
    try:
        os.killpg(pgid, 0)
        there = True
    except ProcessLookupError:
        there = False
    except PermissionError:
        there = True
    if not there and sid is None:
        return False
    m = members(pgid, sid)
    return there if m is None else bool(m)


def kill_group(pgid, grace=KILL_GRACE, leader=None, session=False):
    """Kills every process of group pgid, and with session every process
    of the session pgid leads (a process the command put into a group of
    its own, as llm_prompt.py does with its model, is still in it):
    SIGTERM, then SIGKILL after grace seconds; reaps the leader (a Popen)
    on the way. Signals to this process wait until it is done, so an
    interruption cannot leave the group."""
    sid = pgid if session else None
    sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        def alive():
            if leader is not None:
                leader.poll()
            return group_alive(pgid, sid)
        if not alive():
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            for pid in (members(pgid, sid) or []) if sid is not None else []:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            end = time.monotonic() + wait
            while time.monotonic() < end:
                if not alive():
                    return
                time.sleep(0.02)
    finally:
        if leader is not None:
            try:
                leader.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def run_group(cmd, timeout, stdin_path=None, grace=KILL_GRACE, env=None, session=True):
    """Runs cmd in a session (so a process group) of its own (session
    False: a process group of its own in this session), stdout and stderr
    into temporary files (no pipe a leftover process could hold open),
    stdin from stdin_path or /dev/null. Returns (returncode or None when it
    timed out, stdout, stderr). However it ends (its exit, the timeout, an
    exception or a signal here), every process left in its group (its
    session) is killed. OSError when it cannot be started."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        fin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            p = subprocess.Popen(cmd, stdin=fin, stdout=fo, stderr=fe, env=env,
                                 **({"start_new_session": True} if session
                                    else {"process_group": 0}))
        finally:
            if stdin_path:
                fin.close()
        timed_out = False
        try:
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
        finally:
            kill_group(p.pid, grace, p, session)
        fo.seek(0)
        fe.seek(0)
        out = fo.read(MAX_OUTPUT).decode("utf-8", "replace")
        err = fe.read(MAX_OUTPUT).decode("utf-8", "replace")
    return (None if timed_out else p.returncode), out, err


def raise_on_signals():
    """SIGTERM and SIGHUP raise Terminated where the program is (SIGINT
    raises KeyboardInterrupt as always), so every `finally` runs."""
    def handler(signum, frame):
        raise Terminated(signum)
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, handler)


# ---- the seeds file ----------------------------------------------------------------------------

# Every value of a seeds file this script reads, with its shape (docs/seeds.schema.json
# for these keys; a seed's source may be the path itself, and what topk always writes
# may be absent: null). A key not named here is never read, so never checked.
TIMES = {"median_us": Num(), "ci_lo_us": Num(), "ci_hi_us": Num()}
SEEDS_SHAPE = Obj({
    "problem": Obj({"text": Str(PROBLEM, "a problem text (e.g. b4.h8.s512.d64.nc)")}),
    "mode": Str(MODE, "a timing mode (hot, cold, batch)", null=True),
    "device": Str(null=True),
    "baseline": Obj(dict(TIMES, name=Str(null=True)), null=True),
    "seeds": Arr(Obj({
        "rank": Int(),
        "family": Str(null=True),  # a kernel family: family() names the known ones
        "config_text": Str(clean=False),  # one of its family's: checked once that is known
        "metrics": Obj(dict(TIMES, median_us=Num(positive=True)), null=True),
        "provenance": Obj({"kernel_source": Str(null=True)}, null=True),
        "source": OneOf(Obj({"path": Str(null=True)}), Str(), null=True),
    }), nonempty=True),
})


def load_seeds(path):
    """The seeds document (fasweep.seeds/1 with at least one seed): a
    regular file of at most 64 MiB, JSON without a non-finite number, every
    value this script reads of its shape (SEEDS_SHAPE), each seed's family
    known and its config_text one of that family's. Returns (doc, the
    Family of each seed); BadInput naming the file otherwise."""
    data = read_regular(path, MAX_SEEDS, "the seeds file")
    if len(data) > MAX_SEEDS:
        raise BadInput("the seeds file %s is larger than 64 MiB" % path)
    doc = load_json(data, path, "the seeds file")
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema != "fasweep.seeds/1":
        hint = " (one group of `fasweep topk --json`: use one of its seeds files, STORE.seeds/*.json)" \
            if schema == "fasweep.topk/1" else ""
        raise BadInput("%s is not a fasweep.seeds/1 file (schema %s)%s"
                       % (path, json.dumps(schema)[:80], hint))
    try:
        SEEDS_SHAPE(doc, "")
    except Invalid as e:
        raise BadInput("%s: %s%s" % (path, e.where, e.what))
    fams = []
    for i, s in enumerate(doc["seeds"]):
        w = "seeds[%d]" % i
        fam = family(s.get("family") or "mma", "%s: %s.family" % (path, w))
        if not fam.is_config(s["config_text"]):
            raise BadInput("%s: %s.config_text %s is not a config text of family %s (e.g. %s)"
                           % (path, w, json.dumps(s["config_text"])[:80], fam.name,
                              fam.config_example))
        fams.append(fam)
    return doc, fams


def check_of(r, error):
    """The name of the check of eval that refused a candidate: the line's
    "check", else the prefix of its error ("tails: ..."), else None."""
    c = r.get("check")
    if isinstance(c, str) and STATUS.match(c):
        return c
    m = CHECK_PREFIX.match(error or "")
    return m.group(1) if m and m.group(1) in CHECKS else None


def seed_source(seed, seeds_path, fam):
    """Where a seed's kernel source is: its `source` (topk --emit-source),
    else its provenance.kernel_source (relative to the repository or the
    seeds file), else its family's template."""
    src = seed.get("source")
    if isinstance(src, dict):
        src = src.get("path")
    if not src:
        src = (seed.get("provenance") or {}).get("kernel_source") or fam.template
    if os.path.isabs(src):
        return src
    for base in (os.path.dirname(os.path.abspath(seeds_path)), ROOT, os.getcwd()):
        if os.path.exists(os.path.join(base, src)):
            return os.path.join(base, src)
    return os.path.join(ROOT, src)


def interval(d):
    """(ci_lo_us, ci_hi_us) of an eval line or a record, or None."""
    for o in (d, d.get("time") or {}, d.get("interval") or {}, d.get("metrics") or {}):
        if not isinstance(o, dict):
            continue
        lo, hi = o.get("ci_lo_us"), o.get("ci_hi_us")
        if is_num(lo) and is_num(hi) and 0 < lo <= hi:
            return [float(lo), float(hi)]
    return None


# ---- the run's folder: its lock and its journal -----------------------------------------------

LOCK = "lock"
MAX_JOURNAL = 1 << 30


def lock_folder(out):
    """An exclusive lock of the run's folder (fcntl.flock of DIR/lock, not
    waited for), held until this process ends: two runs into one --out
    would journal every candidate twice, measure it twice and remove each
    other's mutator output. The holder's pid is in the file. Returns the
    lock's descriptor; BadInput naming the folder and the holder when
    another run has it."""
    path = os.path.join(out, LOCK)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC |
                     getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as e:
        raise BadInput("cannot use --out %s: its lock %s cannot be opened: %s"
                       % (out, path, e.strerror))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInput("cannot use --out %s: its lock %s is not a regular file" % (out, path))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            raise BadInput("--out %s is in use by another run (pid %s); wait for it to end or use "
                           "another --out" % (out, holder if holder.isdigit() else "unknown"))
        except OSError as e:
            raise BadInput("cannot use --out %s: its lock %s cannot be taken: %s"
                           % (out, path, e.strerror))
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"%d\n" % os.getpid(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


CANDIDATE_ID_SHAPE = Str(CANDIDATE_ID, "a candidate id (g0-N or tN)")
HEX64 = re.compile(r"^[0-9a-f]{64}\Z")
# Every field of a journal line this script reads, with its shape (the
# strings a mutator or eval wrote may hold anything: they are printed
# escaped). A candidate whose status is ok has a median_us; one measured
# (any status but invalid) has a source.
JOURNAL_SHAPES = {
    "candidate": Obj(dict({
        "id": CANDIDATE_ID_SHAPE, "generation": Int(null=False, minimum=0),
        "status": Str(STATUS, "a status (ok, wrong, invalid, ...)"),
        "parent": Str(CANDIDATE_ID, "a candidate id (g0-N or tN)", null=True),
        "mutator": Str(null=True, clean=False), "mutation": Str(null=True, clean=False),
        "source": Str(null=True, clean=False), "sha256": Str(HEX64, "a SHA-256", null=True),
        "src_hash": Str(null=True), "build": Str(null=True, clean=False),
        "family": Str(null=True), "config": Str(clean=False), "key": Str(null=True, clean=False),
        "median_us": Num(positive=True), "noise": Num(), "interval": Interval(),
        "error": Str(null=True, clean=False), "check": Str(STATUS, "a check's name", null=True),
        "speedup_vs_baseline": Num(), "from_store": Bool(),
        "duplicate_of": Str(CANDIDATE_ID, "a candidate id (g0-N or tN)", null=True),
    }, **{k: Num() for k in FIGURES})),
    "pending": Obj({"id": CANDIDATE_ID_SHAPE, "build": Str(null=True, clean=False),
                    "family": Str(null=True), "config": Str(null=True, clean=False)}),
}


def read_journal(path):
    """The records of the journal at path, [(line number, record)], the
    run line first: each line UTF-8 JSON, an object, no non-finite number,
    of its event's shape (JOURNAL_SHAPES). The last line may be cut by an
    interruption (no line break after it): when it is not a whole record
    it is dropped from the file; when it is, its line break is added. []
    for an empty journal. BadInput naming the file and the line otherwise."""
    data = read_regular(path, MAX_JOURNAL, "the journal")
    if len(data) > MAX_JOURNAL:
        raise BadInput("the journal %s is larger than 1 GiB" % path)
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a line break
    rows = []

    def bad(n, what):
        raise BadInput("%s line %d%s; move the folder away to start afresh" % (path, n, what))

    def record(n, raw):
        try:
            r = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            bad(n, " is not UTF-8 text (byte %d)" % (e.start + 1))
        except (ValueError, RecursionError):
            bad(n, " is not JSON")
        if not isinstance(r, dict):
            bad(n, " is not a JSON object (%s)" % jtype(r))
        where = nonfinite(r)
        if where:
            bad(n, ": %s: NaN or an infinity (not a JSON number)" % where)
        ev = r.get("event")
        if n == 1:
            if ev != "run":
                raise BadInput("%s is not an evolve_code.py journal (line 1 is no run line)"
                               % path)
            return r
        if not isinstance(ev, str) or ev not in JOURNAL_SHAPES:
            bad(n, ": event %s is not one evolve_code.py writes (candidate, pending)"
                % json.dumps(ev)[:40])
        try:
            JOURNAL_SHAPES[ev](r, "")
        except Invalid as e:
            bad(n, ": %s%s" % (e.where, e.what))
        if ev == "candidate" and r["status"] == "ok" and r.get("median_us") is None:
            bad(n, ": status ok without a median_us")
        if ev == "candidate" and r["status"] != "invalid" and r.get("source") is None:
            bad(n, ": a measured candidate without a source")
        return r

    for n, raw in enumerate(lines, 1):
        rows.append((n, record(n, raw)))
    if tail:
        try:
            rows.append((len(lines) + 1, record(len(lines) + 1, tail)))
            fix = lambda f: f.write(b"\n")  # noqa: E731  (a whole record: its line break)
        except BadInput:
            fix = lambda f: f.truncate(len(data) - len(tail))  # noqa: E731  (cut: dropped)
        with open(path, "r+b") as f:
            f.seek(0, os.SEEK_END)
            fix(f)
    return rows


# ---- the tie rule and the ranking ----------------------------------------------------------------

def order(cid):
    """Journal order: g0-0 < g0-1 < ... < t1 < t2 < ..."""
    if cid.startswith("g0-"):
        return (0, int(cid[3:]))
    return (1, int(cid[1:]))


def tie(a, b):
    """Whether candidates a and b cannot be told apart (record_tie). No
    interval on either is record_tie's RECORD_TIE_UNKNOWN (the tables say
    "unknown", the seeds null); the loop treats an unknown tie as a tie, the
    conservative choice: without intervals the earlier candidate is kept
    and the loop never chases a difference it cannot tell."""
    t = record_tie(*((c["median_us"], *(c.get("interval") or (None, None))) for c in (a, b)))
    return t is not False


def better(a, b):
    """The tournament: of two candidates, the earlier when they tie, else
    the one with the lower median."""
    if a["id"] == b["id"]:
        return a
    if tie(a, b):
        return min(a, b, key=lambda c: order(c["id"]))
    return a if a["median_us"] < b["median_us"] else b


def ranking(cands):
    """The ok candidates of the list cands, best first: repeatedly the
    remaining candidate with the lowest median (the earlier on equal
    medians), then among all remaining that tie with it the earliest."""
    left = [c for c in cands if c.get("status") == "ok" and is_num(c.get("median_us"))]
    out = []
    while left:
        low = min(left, key=lambda c: (c["median_us"], order(c["id"])))
        pick = min((c for c in left if tie(c, low)), key=lambda c: order(c["id"]))
        out.append(pick)
        left.remove(pick)
    return out


# ---- the run -------------------------------------------------------------------------------------

class Run:
    def __init__(self, a, seeds, fams=None):
        self.a, self.seeds = a, seeds
        self.fams = fams or [family(s.get("family") or "mma", a.seeds) for s in seeds["seeds"]]
        self.problem = seeds["problem"]["text"]
        self.mode = seeds.get("mode") or "hot"
        self.device = seeds.get("device") or ""
        self.out = os.path.abspath(a.out)
        self.journal = os.path.join(self.out, JOURNAL)
        self.cands = {}  # id -> journal entry, in order
        self.pending = set()  # ids whose eval began but whose result was not journalled
        self.store = os.path.abspath(a.store) if a.store else None
        self.fails = []  # the ids of the mutator failures in a row

    def fam(self, c):
        return family(c.get("family") or "mma", self.journal)

    # ---- the journal ---------------------------------------------------------------------------

    def header(self):
        return {"event": "run",
                "seeds_sha256": hashlib.sha256(read_regular(self.a.seeds, MAX_SEEDS,
                                                            "the seeds file")).hexdigest(),
                "problem": self.problem, "mode": self.mode, "seed": self.a.seed,
                "population": self.a.population, "elites": self.a.elites,
                "mutator": "rules.py (default)" if self.a.mutator == DEFAULT_MUTATOR
                else self.a.mutator}

    def open_journal(self):
        """Takes DIR's lock, then reads DIR/lineage.jsonl (a resume) or
        starts it. A run with other options in DIR is refused: its
        candidates would mix."""
        try:
            for d in ("src", "tasks"):
                os.makedirs(os.path.join(self.out, d), exist_ok=True)
        except OSError as e:
            raise BadInput("cannot use --out %s: %s" % (self.out, e.strerror))
        self.lock_fd = lock_folder(self.out)
        head = self.header()
        if not os.path.lexists(self.journal):
            self.append(head)
            return
        rows = read_journal(self.journal)
        if not rows:  # empty, or one line cut before it was whole
            self.append(head)
            return
        if rows[0][1] != head:
            diff = sorted(k for k in head if rows[0][1].get(k) != head[k])
            raise BadInput("%s holds a run with other options (%s); use another --out"
                           % (self.journal, ", ".join(diff)))
        for n, r in rows[1:]:
            if r["event"] == "candidate":
                r.setdefault("family", "mma")
                try:
                    fam = family(r["family"], "%s line %d: family" % (self.journal, n))
                except BadInput as e:
                    raise BadInput("%s; move the folder away to start afresh" % e)
                if not fam.is_config(r["config"]):
                    raise BadInput("%s line %d: config %s is not a config text of family %s; "
                                   "move the folder away to start afresh"
                                   % (self.journal, n, json.dumps(r["config"])[:80], fam.name))
                self.cands[r["id"]] = r
                self.pending.discard(r["id"])
                if r.get("key"):  # the device eval named
                    self.device = r["key"].split("|")[0]
            else:
                self.pending.add(r["id"])

    def close(self):
        """Lets DIR's lock go (it goes with the process too)."""
        if getattr(self, "lock_fd", None) is not None:
            os.close(self.lock_fd)
            self.lock_fd = None

    def append(self, row):
        with open(self.journal, "a", encoding="utf-8") as f:
            f.write(dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())

    # ---- measuring -----------------------------------------------------------------------------

    def fasweep(self, *args, timeout=None):
        cmd = [self.a.fasweep, *args]
        if self.store:
            cmd += ["--store", self.store]
        return run_group(cmd, timeout)

    def key(self, build, fam, config, device=None):
        return "|".join([device or self.device, self.problem, build] +
                        ([fam.name] if fam.name != "mma" else []) + [config, self.mode])

    def from_store(self, build, fam, config):
        """The stored record of a candidate measured before an interruption
        (its eval stored it, the journal line was not written), or None."""
        if not self.device:
            return None
        try:
            rc, out, _ = self.fasweep("show", self.key(build, fam, config), timeout=60)
        except OSError:
            return None
        if rc != 0:
            return None
        try:
            r = json.loads(out)
        except (ValueError, RecursionError):
            return None
        if not isinstance(r, dict) or nonfinite(r):
            return None
        t = r.get("time") if isinstance(r.get("time"), dict) else {}
        st = r.get("status") if isinstance(r.get("status"), str) and STATUS.match(r["status"]) \
            else "crashed"
        err = r.get("error") if isinstance(r.get("error"), str) else ""
        us = t.get("median_us") if is_num(t.get("median_us")) and t["median_us"] > 0 else None
        if st == "ok" and us is None:
            st, err = "crashed", "the stored record says ok without a positive median_us"
        dev = r.get("key").get("device") if isinstance(r.get("key"), dict) else None
        return {"status": st, "median_us": us,
                "noise": t.get("noise") if is_num(t.get("noise")) else None,
                "interval": interval(r), "error": err, "check": check_of(r, err),
                "speedup_vs_baseline": None, "device": dev if clean_str(dev) else None,
                "from_store": True}

    def evaluate(self, path, fam, config, child):
        """One candidate through `fasweep eval --kernel`: its result, a
        failure being a result. eval refusing a child's source (exit 2)
        makes it invalid; refusing a seed's exits 2; eval failing as a
        whole exits 1."""
        args = ["eval", "--problem", self.problem, "--config", fam.arg(config), "--mode",
                self.mode, "--kernel", path, "--json"]
        if self.a.space:
            args += ["--space", self.a.space]
        try:
            rc, out, err = self.fasweep(*args, timeout=self.a.eval_timeout)
        except OSError as e:
            die("cannot run %s: %s (--fasweep)" % (self.a.fasweep, e.strerror), 2)
        if rc is None:
            return {"status": "timeout", "median_us": None, "noise": None, "interval": None,
                    "error": "fasweep eval did not answer within %d s (--eval-timeout); its "
                    "process group was killed" % self.a.eval_timeout, "check": None,
                    "speedup_vs_baseline": None}
        rows = []
        for line in out.splitlines():
            if line.startswith("{"):
                try:
                    r = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if isinstance(r, dict):
                    rows.append(r)
        last_err = (err.strip().splitlines() or [""])[-1][:300]
        if rc == 2:
            if child:
                return {"status": "invalid", "median_us": None, "noise": None, "interval": None,
                        "error": "fasweep eval refused it: %s" % (last_err or "exit 2"),
                        "check": None, "speedup_vs_baseline": None}
            die("fasweep eval refused %s: %s" % (path, last_err or "exit 2"), 2)
        if not rows:
            die("fasweep eval gave no result for %s (exit %d): %s"
                % (path, rc, last_err or "no output"), 1)
        r = rows[-1]
        st = r.get("status")
        error = r.get("error") if isinstance(r.get("error"), str) else ""
        if not isinstance(st, str) or not STATUS.match(st):
            error = "fasweep eval printed a result without a status it knows (%s)%s" % (
                json.dumps(st)[:40], ": " + error if error else "")
            st = "crashed"
        odd = nonfinite(r)
        if odd:  # NaN, Infinity, 1e999: no measurement, whatever its status says
            error = "fasweep eval printed a number that is not finite (%s)%s" % (
                odd, ": " + error if error else "")
            st = "crashed" if st == "ok" else st
        res = {"status": st, "median_us": r.get("median_us") if is_num(r.get("median_us"))
               else None, "noise": r.get("noise") if is_num(r.get("noise")) else None,
               "interval": interval(r), "error": error,
               "check": check_of(r, error) if st != "ok" else None,
               "speedup_vs_baseline": r.get("speedup_vs_baseline")
               if is_num(r.get("speedup_vs_baseline")) else None,
               "device": r.get("device") if clean_str(r.get("device")) else None,
               "build": r.get("build") if clean_str(r.get("build")) else None}
        if st == "ok" and (res["median_us"] is None or res["median_us"] <= 0):
            res.update(status="crashed", median_us=None,
                       error="fasweep eval said ok without a positive median_us")
        res.update({k: r[k] for k in FIGURES if is_num(r.get(k))})
        return res

    def measure(self, cid, gen, parent, mutator, mutation, path, fam, config, child):
        """Measures (or finds in the store) the candidate at path and
        journals it. Returns its journal entry."""
        text, why = kernel_problem(read_regular(path, MAX_SOURCE, "the candidate source"), fam)
        if why:
            raise BadInput("the candidate source %s is %s" % (path, why))
        build = "src-" + fnv1a64(text.encode("utf-8"))
        res = self.from_store(build, fam, config) if cid in self.pending else None
        if res is None:
            self.append({"event": "pending", "id": cid, "build": build, "family": fam.name,
                         "config": config})
            res = self.evaluate(path, fam, config, child)
        if res.get("device"):
            self.device = res["device"]
        if res["status"] == "ok" and not res.get("interval"):
            # eval --json may not print the interval; the stored record has it
            rec = self.from_store(build, fam, config)
            if rec and rec.get("interval"):
                res["interval"] = rec["interval"]
        row = {"event": "candidate", "id": cid, "generation": gen, "parent": parent,
               "mutator": mutator, "mutation": mutation, "source": path, "sha256": sha256(text),
               "src_hash": build[4:], "build": res.get("build") or build, "family": fam.name,
               "config": config,
               "key": self.key(build, fam, config) if self.device and res["status"] != "invalid"
               else None}
        row.update({k: v for k, v in res.items() if k not in ("device", "build")})
        self.append(row)
        self.cands[cid] = row
        self.tell(row)
        return row

    def tell(self, r):
        """The candidate's line (escaped: its mutation and error are a
        mutator's and eval's text)."""
        if r["status"] == "ok":
            ci = r.get("interval")
            what = "ok %.3f us %s" % (r["median_us"], "[%.3f, %.3f]" % tuple(ci) if ci
                                      else "(no interval)")
        else:
            what = "%s: %s" % (r["status"], one_line(r.get("error"), 300))
        if r.get("duplicate_of"):
            what += " (the same source as %s: not measured again)" % r["duplicate_of"]
        say("%s gen %d %s%s: %s" % (r["id"], r["generation"], r.get("mutator"),
                                    " (%s)" % r["mutation"] if r.get("mutation") else "", what))

    # ---- the loop ------------------------------------------------------------------------------

    def gen0(self):
        """The seeds' first --population distinct (family, config)s, each
        with its seed's source copied into DIR/src."""
        out, seen = [], set()
        for i, (s, fam) in enumerate(zip(self.seeds["seeds"], self.fams)):
            if len(out) == self.a.population:
                break
            if (fam.name, s["config_text"]) in seen:
                continue
            seen.add((fam.name, s["config_text"]))
            cid = "g0-%d" % len(out)
            rank = s.get("rank") if s.get("rank") is not None else i + 1
            if cid in self.cands:
                self.tell(self.cands[cid])
            else:
                src = seed_source(s, self.a.seeds, fam)
                what = "the source of seed rank %s" % rank
                text, why = kernel_problem(read_regular(src, MAX_SOURCE, what), fam)
                if why:
                    raise BadInput("%s %s is %s" % (what, src, why))
                dst = os.path.join(self.out, "src", cid + ".cuh")
                write_text(dst, text)
                self.measure(cid, 0, None, "seed", "rank %s of %s" % (
                    rank, os.path.basename(self.a.seeds)), dst, fam, s["config_text"], False)
            out.append(cid)
        return out

    def rank(self, ids):
        return [c["id"] for c in ranking([self.cands[c] for c in ids])]

    def next_population(self, kids, gen):
        """Only candidates up to this generation count, so a resumed run
        (whose journal holds later ones) draws the same parents."""
        everyone = self.rank([c for c in self.cands if self.cands[c]["generation"] <= gen])
        pop = everyone[:self.a.elites]
        for c in self.rank(kids) + everyone:
            if len(pop) == self.a.population:
                break
            if c not in pop:
                pop.append(c)
        return pop

    def task(self, trial, gen, parent, rng_seed, tmp, out):
        p = self.cands[parent]
        fam = self.fam(p)
        keys = ("id", "generation", "parent", "mutator", "mutation", "source", "sha256",
                "family", "config", "status", "median_us", "noise", "interval", "error", "check",
                "speedup_vs_baseline") + FIGURES
        hist = [{k: c.get(k) for k in keys} for c in self.cands.values()]
        top = self.seeds["seeds"][0]
        return {
            "schema": TASK_SCHEMA, "trial": trial, "generation": gen, "rng_seed": rng_seed,
            "output": tmp, "family": fam.name, "edit_sites": fam.edit_sites,
            "parent": {k: p.get(k) for k in ("id", "source", "sha256", "family", "config",
                                              "status", "median_us", "noise", "interval",
                                              "error", "speedup_vs_baseline", "mutation")
                       + FIGURES},
            "context": {
                "kernel": fam.context, "family": fam.name, "template": fam.template_rel,
                "instance_macro": fam.instance_macro, "kernel_template": fam.kernel,
                "device": self.device, "problem": self.seeds["problem"], "mode": self.mode,
                "config": p["config"], "config_arg": fam.arg(p["config"]),
                "objective": "lower median_us of `fasweep eval --kernel`, gated against the "
                             "fp32 reference and eval's other checks (status ok)",
                "eval": [self.a.fasweep, "eval", "--problem", self.problem, "--config",
                         fam.arg(p["config"]), "--mode", self.mode, "--kernel", out, "--json"],
                "baseline": self.seeds.get("baseline"),
                "seeds_top1": {"config": self.fams[0].arg(top["config_text"]),
                               "median_us": (top.get("metrics") or {}).get("median_us")},
            },
            "insights": fam.insights + self.learned(),
            "history": hist,
        }

    def learned(self):
        """Insights from the history: what each mutation did to its parent."""
        out = []
        for c in self.cands.values():
            par = self.cands.get(c.get("parent") or "")
            if not par:
                continue
            what = c.get("mutation") or "the mutator's answer"
            if c["status"] == "invalid":
                out.append("%s (%s) was no valid kernel: %s" % (what, c["id"],
                                                                 one_line(c.get("error"), 160)))
            elif not c.get("mutation"):
                continue
            elif c["status"] != "ok":
                out.append("%s (%s) gave %s%s" % (
                    c["mutation"], c["id"], c["status"],
                    " (refused by eval's %s check)" % c["check"] if c.get("check") else ""))
            elif par["status"] == "ok" and par["median_us"]:
                spills = " (%d bytes of spills)" % c["local_bytes"] if c.get("local_bytes") else ""
                q = quotient(c["median_us"], par["median_us"], 6)
                out.append("%s (%s) changed the time%s (%.3f -> %.3f us)%s"
                           % (c["mutation"], c["id"],
                              " by %+.1f %%" % (100 * (q - 1)) if q is not None else "",
                              par["median_us"], c["median_us"], spills))
        return out[-20:]

    def child(self, trial, gen, pop):
        cid = "t%d" % trial
        if cid in self.cands:
            self.tell(self.cands[cid])
            return cid
        rng = random.Random("%d:%d" % (self.a.seed, trial))
        a, b = rng.choice(pop), rng.choice(pop)
        parent = better(self.cands[a], self.cands[b])["id"]
        rng_seed = rng.randrange(1 << 31)
        out = os.path.join(self.out, "src", cid + ".cuh")
        meta = out + ".json"
        par = self.cands[parent]
        if os.path.exists(out):  # accepted before an interruption: not asked for again
            mutation, fam, config = self.accepted(out, meta, par)
        else:
            got = self.ask(cid, trial, gen, parent, rng_seed, out, meta)
            if got[0] == "invalid":
                self.invalid(cid, gen, parent, *got[1:])
                return cid
            mutation, fam, config = got
        if not self.duplicate(cid, gen, parent, mutation, out, fam, config):
            self.measure(cid, gen, parent, self.mutator_name(), mutation, out, fam, config, True)
        return cid

    def accepted(self, out, meta, par):
        """(mutation, Family, config) of a child source accepted before an
        interruption, from the meta file the loop wrote beside it."""
        try:
            m = json.loads(read_regular(meta, MAX_META, "the meta file").decode("utf-8"))
            if not isinstance(m, dict):
                raise ValueError
        except (BadInput, ValueError, RecursionError):
            m = {}
        mutation = str(m.get("mutation", ""))[:200]
        try:
            fam, config = parse_config(m.get("config"), self.fam(par), meta) \
                if m.get("config") else (self.fam(par), par["config"])
        except ValueError as e:
            raise BadInput("%s: %s" % (meta, e))
        return mutation, fam, config

    def ask(self, cid, trial, gen, parent, rng_seed, out, meta):
        """Asks the mutator for trial's child. Returns (mutation, Family,
        config) of an accepted child (renamed to out), or ("invalid",
        reason, mutation, family name, config, the rejected file or None,
        its sha256 or None)."""
        par = self.cands[parent]
        pfam = self.fam(par)
        task_path = os.path.join(self.out, "tasks", cid + ".json")
        tmp = out + ".part"
        rejected = out + ".invalid"
        write_text(task_path, dumps(self.task(trial, gen, parent, rng_seed, tmp, out), indent=1))
        for stale in (tmp, tmp + ".json", meta, rejected):
            try:
                if os.path.lexists(stale):
                    os.remove(stale)
            except OSError as e:
                raise BadInput("cannot remove the stale %s: %s" % (stale, e.strerror))
        mutation = ""

        def fail(reason, data=None, fam_name=pfam.name, config=par["config"]):
            kept = None
            try:
                if stat.S_ISREG(os.lstat(tmp).st_mode):
                    os.replace(tmp, rejected)
                    kept = rejected
            except OSError:
                pass
            return ("invalid", reason, mutation, fam_name, config, kept,
                    hashlib.sha256(data).hexdigest() if data else None)

        try:
            rc, _, err = run_group(shlex.split(self.a.mutator) + [task_path, tmp],
                                   self.a.mutator_timeout,
                                   env=dict(os.environ, FASWEEP_MUTATOR_TIMEOUT=str(
                                       self.a.mutator_timeout)))
        except OSError as e:
            raise BadInput("cannot run the mutator %s: %s" % (self.a.mutator, e.strerror))
        except ValueError as e:  # a NUL in the command
            raise BadInput("cannot run the mutator %s: %s" % (json.dumps(self.a.mutator)[:80], e))
        if rc is None:
            return fail("the mutator did not finish within %d s (--mutator-timeout); its process "
                        "group was killed" % self.a.mutator_timeout)
        if rc < 0:
            return fail("the mutator was killed by signal %d" % -rc)
        if rc != 0:
            return fail("the mutator exited %d: %s" % (
                rc, (err.strip().splitlines() or ["(nothing on stderr)"])[-1][:300]))
        if not os.path.lexists(tmp):
            return fail("the mutator wrote nothing to %s (task %s)" % (tmp, task_path))
        try:
            data = read_regular(tmp, MAX_SOURCE, "the mutator's output")
        except BadInput as e:
            return fail(str(e))
        if os.path.lexists(tmp + ".json"):
            try:
                m = json.loads(read_regular(tmp + ".json", MAX_META, "the mutator's meta file")
                               .decode("utf-8"))
                if not isinstance(m, dict):
                    raise ValueError("not an object")
            except BadInput as e:
                return fail(str(e), data)
            except (ValueError, RecursionError):
                return fail("the mutator's %s is not a JSON object" % (tmp + ".json"), data)
            mutation = one_line(str(m.get("mutation", "")), 200)
            cfg = m.get("config")
        else:
            cfg = None
        fam, config = pfam, par["config"]
        if cfg is not None:
            try:
                fam, config = parse_config(cfg, pfam, tmp + ".json")
            except ValueError as e:
                return fail("%s (in %s)" % (e, tmp + ".json"), data)
        text, why = kernel_problem(data, fam)
        if why:
            if len(data) == 0:
                return fail("the mutator wrote nothing to %s (task %s)" % (tmp, task_path))
            shown = "%s:%s" % (fam.name, config) if cfg is not None else None
            return fail("the mutator's output %s is %s%s" % (
                tmp, why, " (its config %s is of family %s)" % (shown, fam.name) if shown
                else ""), data, fam.name, config)
        write_text(meta, dumps({"mutation": mutation, "config": fam.arg(config)}))
        os.replace(tmp, out)
        if os.path.lexists(tmp + ".json"):
            os.remove(tmp + ".json")
        return mutation, fam, config

    def invalid(self, cid, gen, parent, reason, mutation, fam_name, config, source, sha):
        row = {"event": "candidate", "id": cid, "generation": gen, "parent": parent,
               "mutator": self.mutator_name(), "mutation": mutation, "source": source,
               "sha256": sha, "src_hash": None, "build": None, "family": fam_name,
               "config": config, "key": None, "status": "invalid", "median_us": None,
               "noise": None, "interval": None, "error": reason, "check": None,
               "speedup_vs_baseline": None}
        self.append(row)
        self.cands[cid] = row
        self.tell(row)

    def duplicate(self, cid, gen, parent, mutation, path, fam, config):
        """A child whose source, family and config are an earlier
        candidate's is not measured again: it is journalled with that one's
        results (duplicate_of). Returns 1 when it was one."""
        text, why = kernel_problem(read_regular(path, MAX_SOURCE, "the candidate source"), fam)
        if why:
            raise BadInput("the candidate source %s is %s" % (path, why))
        sha = sha256(text)
        old = next((c for c in self.cands.values()
                    if c.get("sha256") == sha and c["config"] == config
                    and c.get("family", "mma") == fam.name), None)
        if old is None:
            return 0
        row = dict(old, id=cid, generation=gen, parent=parent, mutator=self.mutator_name(),
                   mutation=mutation, source=path, duplicate_of=old["id"])
        self.append(row)
        self.cands[cid] = row
        self.tell(row)
        return 1

    def mutator_name(self):
        words = shlex.split(self.a.mutator) or ["mutator"]
        scripts = [os.path.basename(w) for w in words if w.endswith(".py")]
        return scripts[0] if scripts else os.path.basename(words[0])

    def loop(self):
        pop = self.rank(self.gen0())
        if not pop:
            die("no seed source passed the gate in generation 0 (see %s)" % self.journal, 1)
        trial, gen = 0, 0
        while trial < self.a.trials and gen < self.a.generations:
            gen += 1
            kids = []
            for _ in range(self.a.population):
                if trial == self.a.trials:
                    break
                trial += 1
                cid = self.child(trial, gen, pop)
                kids.append(cid)
                if self.cands[cid]["status"] == "invalid":
                    self.fails.append(cid)
                else:
                    self.fails = []
                if len(self.fails) >= self.a.max_mutator_failures:
                    die("the mutator failed %d times in a row (%s to %s; the last: %s); stopped "
                        "(--max-mutator-failures %d). %s holds every trial up to %s"
                        % (len(self.fails), self.fails[0], self.fails[-1],
                           one_line(self.cands[cid]["error"], 200),
                           self.a.max_mutator_failures, self.journal, cid), 1)
            pop = self.next_population(kids, gen)
        return self.summary(trial, gen)

    # ---- the summary ---------------------------------------------------------------------------

    def summary(self, trials, gens):
        kids = [c for c in self.cands.values() if c["generation"] > 0]
        ok_kids = [c for c in kids if c["status"] == "ok"]
        best = ranking(list(self.cands.values()))[0]
        top1 = self.cands["g0-0"]
        seed1 = self.seeds["seeds"][0]
        stored_top1 = (seed1.get("metrics") or {}).get("median_us")
        base = self.baseline(best)
        statuses = {}
        for c in kids:
            statuses[c["status"]] = statuses.get(c["status"], 0) + 1
        return {
            "best": self.brief(best),
            "best_source": best["source"],
            "vs_top1": dict(ratio(top1, best), top1=self.brief(top1),
                            top1_stored_us=stored_top1,
                            top1_stored_interval=interval(seed1)),
            "vs_baseline": dict(ratio(base, best), baseline=base) if base else
            {"speedup": None, "note": "no SDPA baseline in the seeds file or eval's output"},
            "validity": {"valid": len(ok_kids), "candidates": len(kids),
                         "rate": round(len(ok_kids) / len(kids), 4) if kids else None,
                         "statuses": statuses},
            "trials": trials, "generations": gens, "journal": self.journal,
        }

    def brief(self, c):
        return {"id": c["id"], "family": c.get("family", "mma"), "config": c["config"],
                "status": c["status"], "median_us": c.get("median_us"),
                "interval": c.get("interval") or "no interval", "generation": c["generation"],
                "mutation": c.get("mutation"), "source": c.get("source"), "key": c.get("key")}

    def baseline(self, best):
        """The best SDPA baseline: the seeds file's (with its interval when
        it has ci_lo_us and ci_hi_us), else from eval's speedup_vs_baseline
        of the best candidate (no interval)."""
        b = self.seeds.get("baseline")
        if isinstance(b, dict) and is_num(b.get("median_us")):
            return {"name": b.get("name"), "median_us": b["median_us"], "interval": interval(b),
                    "from": "seeds file"}
        sp = best.get("speedup_vs_baseline")
        us = best["median_us"] * sp if is_num(sp) and sp > 0 else None
        if is_num(us) and us > 0:  # (1e308 * 10 overflows: no baseline then)
            return {"name": None, "median_us": us, "interval": None,
                    "from": "eval speedup_vs_baseline"}
        return None


def ratio(ref, best):
    """ref's time over best's (>1: best is faster). Its interval
    [ref_lo / best_hi, ref_hi / best_lo] needs both 95 % intervals; with
    only one, that one's spread is given apart, named for what it is.
    Every number finite (quotient): a ratio out of range is None, said in
    a note, never inf or nan."""
    r_us, b_us = ref.get("median_us"), best.get("median_us")
    if not r_us or not b_us:
        return {"speedup": None, "interval": "no interval"}
    sp = quotient(r_us, b_us)
    if sp is None:
        return {"speedup": None, "interval": "no interval",
                "note": "the ratio of %.6g us to %.6g us is out of range" % (r_us, b_us)}
    ri, bi = ref.get("interval"), best.get("interval")
    out = {"speedup": sp, "interval": "no interval"}

    def pair(a, b, c, d):
        lo, hi = quotient(a, b), quotient(c, d)
        return [lo, hi] if lo is not None and hi is not None else None
    if ri and bi:
        out["interval"] = pair(ri[0], bi[1], ri[1], bi[0]) or "no interval"
    elif bi and pair(r_us, bi[1], r_us, bi[0]):
        out["candidate_interval_only"] = pair(r_us, bi[1], r_us, bi[0])
        out["interval_note"] = ("candidate interval only: the reference has no interval, so this "
                                "is the spread of the candidate's time alone, not an interval of "
                                "the ratio")
    elif ri and pair(ri[0], b_us, ri[1], b_us):
        out["reference_interval_only"] = pair(ri[0], b_us, ri[1], b_us)
        out["interval_note"] = ("reference interval only: the candidate has no interval, so this "
                                "is the spread of the reference's time alone, not an interval of "
                                "the ratio")
    return out


def print_summary(s):
    """The summary as text (each line escaped: say), then as one JSON line."""
    def cfg(c):
        return c["config"] if c.get("family", "mma") == "mma" else "%s:%s" % (c["family"],
                                                                              c["config"])

    def us(c):
        iv = c["interval"]
        if c["median_us"] is None:
            return c["status"]
        return "%.3f us %s" % (c["median_us"], "[%.3f, %.3f]" % tuple(iv)
                               if isinstance(iv, list) else "(no interval)")

    def x(v):
        iv = v["interval"]
        if v["speedup"] is None:
            return "no comparison (%s)" % v.get("note", "no ok time")
        if isinstance(iv, list):
            return "%.3fx [%.3f, %.3f]" % (v["speedup"], iv[0], iv[1])
        for side, other in (("candidate", "reference"), ("reference", "candidate")):
            one = v.get(side + "_interval_only")
            if one:
                return "%.3fx, %s interval only [%.3f, %.3f] (the %s has none: not an interval " \
                       "of the ratio)" % (v["speedup"], side, one[0], one[1], other)
        return "%.3fx (no interval)" % v["speedup"]

    b = s["best"]
    say("best: %s %s at %s, %s" % (b["id"], b["mutation"] or "", cfg(b), us(b)))
    t = s["vs_top1"]
    say("vs the seeds' top-1 (%s, re-measured %s; stored %s us): %s" % (
        cfg(t["top1"]), us(t["top1"]), t["top1_stored_us"], x(t)))
    v = s["vs_baseline"]
    if not v.get("baseline"):
        say("vs SDPA: %s" % v.get("note", "no baseline time"))
    else:
        bi = v["baseline"]["interval"]
        say("vs %s (%.3f us%s, %s): %s" % (
            v["baseline"]["name"] or "the best baseline", v["baseline"]["median_us"],
            " [%.3f, %.3f]" % tuple(bi) if bi else "", v["baseline"]["from"], x(v)))
    va = s["validity"]
    say("code validity: %d of %d candidates compiled and passed the gate (%s)%s" % (
        va["valid"], va["candidates"], "%.1f %%" % (100 * va["rate"]) if va["rate"] is not None
        else "none", "; " + ", ".join("%s %d" % kv for kv in va["statuses"].items())
        if va["statuses"] else ""))
    say("best source: %s" % s["best_source"])
    print(dumps(s), flush=True)  # ASCII: JSON escapes every control character


def main():
    # the first paragraph of the docstring, whole (never a sentence cut at a line end)
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("seeds", help="a seeds file written by fasweep topk (fasweep.seeds/1)")
    ap.add_argument("--out", required=True, help="the run's folder: journal, sources, tasks")
    ap.add_argument("--fasweep", default=os.path.join(ROOT, "build", "fasweep"))
    ap.add_argument("--store", help="where eval stores its records (fasweep's default otherwise)")
    ap.add_argument("--space", help="eval's measurement settings and tolerances")
    ap.add_argument("--mutator", default=DEFAULT_MUTATOR,
                    help="command run as MUTATOR TASK.json OUT.cuh (default: rules.py)")
    ap.add_argument("--population", type=int, default=5)
    ap.add_argument("--elites", type=int, help="kept every generation (default 2, at most "
                    "--population)")
    ap.add_argument("--trials", type=int, default=45, help="children to measure")
    ap.add_argument("--generations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-timeout", type=int, default=600,
                    help="seconds per eval call; then its process group is killed (default 600)")
    ap.add_argument("--mutator-timeout", type=int, default=DEFAULT_MUTATOR_TIMEOUT,
                    help="seconds per mutator call; then its process group is killed and the "
                    "trial is invalid (default %d: above scripts/mutators/llm_prompt.py's default "
                    "--timeout of 600 s for its model command, so a slow model is reported by "
                    "llm_prompt.py, not cut off here)" % DEFAULT_MUTATOR_TIMEOUT)
    ap.add_argument("--max-mutator-failures", type=int, default=5,
                    help="stop (exit 1) after this many invalid trials in a row (default 5)")
    a = ap.parse_args()
    if a.elites is None:
        a.elites = min(2, a.population)
    if a.population < 1 or not 0 <= a.elites <= a.population or a.trials < 0 \
            or a.generations < 0 or a.eval_timeout < 1 or a.mutator_timeout < 1 \
            or a.max_mutator_failures < 1:
        ap.error("--population >= 1, 0 <= --elites <= --population, --trials and "
                 "--generations >= 0, the timeouts and --max-mutator-failures >= 1")
    raise_on_signals()
    run = None
    try:
        run = Run(a, *load_seeds(a.seeds))
        run.open_journal()
        s = run.loop()
    except BadInput as e:
        die(str(e), 2)
    except KeyboardInterrupt:
        die("interrupted; %s holds every candidate journalled so far: the same command resumes"
            % os.path.join(os.path.abspath(a.out), JOURNAL), 130)
    except Terminated as e:
        die("terminated by signal %d; %s holds every candidate journalled so far: the same "
            "command resumes" % (e.signum, os.path.join(os.path.abspath(a.out), JOURNAL)),
            128 + e.signum)
    except OSError as e:
        die("%s%s" % (e.strerror or e, ": %s" % e.filename if e.filename else ""), 1)
    finally:
        if run is not None:
            run.close()
    print_summary(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
