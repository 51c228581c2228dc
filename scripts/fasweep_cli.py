"""fasweep_cli.py - the scripts' one way to ask the fasweep binary what it
knows, so no rule of the engine is written twice: a problem text's reading
(`fasweep problem --json`: the canonical text, numbers, dtype, FLOPs and
bytes of grid/space.c), a space's problems and modes (`fasweep plan
--json`), the timing modes (`fasweep version --json`). Standard library
only.

  binary(given)            the binary: given (a script's --fasweep), else
                           $FASWEEP, else build/fasweep of this checkout
  add_option(ap, what)     a script's --fasweep BIN option (argparse)
  document(bin, *args)     the JSON document `bin ARGS` prints
  problems(bin, texts, causal=False, any_text=True)
                           {text: problem} for every text, a problem being
                           fasweep's object ("problem": the canonical text,
                           batch, heads, kv_heads, seq_len, head_dim,
                           causal, dtype, flops, bytes), None for a text
                           that is no problem (any_text; else fasweep's
                           refusal)
Every failure (no binary, a time-out, fasweep's refusal, output that is not
JSON) is report_io.BadInput with one line: the caller says it and exits 2.
"""
import json
import os
import subprocess

from report_io import BadInput, esc

TIMEOUT_S = 120  # fasweep answers these at once; a hang is a failure


def binary(given=None):
    """The fasweep binary: given, else $FASWEEP, else the build's."""
    return given or os.environ.get("FASWEEP") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "fasweep")


def add_option(ap, what):
    """--fasweep BIN on the argparse parser ap: the binary WHAT comes from."""
    ap.add_argument("--fasweep", metavar="BIN", help="the fasweep binary %s come from "
                    "(default $FASWEEP, else build/fasweep)" % what)


def _run(bin_, args):
    """stdout of `bin_ ARGS` (exit 0); BadInput naming the cause."""
    try:
        r = subprocess.run([bin_] + list(args), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BadInput("%s %s: no answer in %d s" % (esc(bin_, 200), args[0], TIMEOUT_S))
    except (OSError, subprocess.SubprocessError) as e:
        raise BadInput("cannot run fasweep %s (--fasweep BIN or $FASWEEP): %s"
                       % (esc(bin_, 200), esc(e, 200)))
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        msg = err[0] if err and r.returncode == 2 else err[-1] if err else "no message"
        raise BadInput(esc(msg, 400))
    return r.stdout.decode("utf-8", "replace")


def document(bin_, *args):
    """The JSON document `bin_ ARGS` prints."""
    out = _run(bin_, args)
    try:
        return json.loads(out)
    except ValueError as e:
        raise BadInput("%s %s: not JSON (%s)" % (esc(bin_, 200), args[0], esc(e, 120)))


def problems(bin_, texts, causal=False, any_text=True):
    """{text: fasweep's problem object, or None when the text is no
    problem} for every text (`fasweep problem --json`)."""
    texts = sorted({str(t) for t in texts})
    if not texts:
        return {}
    args = ["problem", "--json"] + (["--causal"] if causal else []) + \
        (["--any"] if any_text else []) + ["--"] + texts
    out = {}
    try:
        for line in _run(bin_, args).splitlines():
            o = json.loads(line)
            out[o.pop("text")] = o if o["problem"] is not None else None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise BadInput("%s problem --json: not the expected JSON lines (%s)"
                       % (esc(bin_, 200), esc(e, 120)))
    if set(out) != set(texts):
        raise BadInput("%s problem --json: not one line per text" % esc(bin_, 200))
    return out
