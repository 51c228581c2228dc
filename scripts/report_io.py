"""report_io.py - what the scripts that read fasweep's exports share: the
one-line refusal of a bad input file, text made safe to print, the one
rule for a number read from a file (finite, not a bool), the one for a
number written to JSON (not finite: null), the one-line refusal of a
bad option, and record_tie (two timings told apart by their intervals)."""
import argparse
import math
import sys


class BadInput(Exception):
    """A file the script cannot read: one line naming it, exit 2."""


def esc(x, n=60):
    """Text from a file, safe to print: non-printable characters as escapes,
    at most n characters."""
    s = "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256
                else "\\u%04x" % ord(c) for c in str(x))
    return s if len(s) <= n else s[:n] + "..."


def number(x):
    """A finite real number (not a bool), or None."""
    return (float(x) if isinstance(x, (int, float)) and not isinstance(x, bool)
            and math.isfinite(x) else None)


def finite_or_none(o):
    """o for JSON, which has no NaN or infinity: non-finite numbers become
    null (nothing to say), as the store writes them."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: finite_or_none(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [finite_or_none(v) for v in o]
    return o


def record_tie(a, b):
    """store/record.c record_tie of two timings, each (median_us, ci_lo_us,
    ci_hi_us): True when the medians differ by at most sqrt(hA^2 + hB^2),
    each h the side of its interval that faces the other median; False when
    they differ by more; None (RECORD_TIE_UNKNOWN) when either has no
    interval (a bound missing or not finite, or a lower bound not above 0:
    record_has_ci)."""
    def has(x):
        return all(v is not None and math.isfinite(v) for v in x[1:]) and x[1] > 0
    if not (has(a) and has(b)):
        return None

    def half(x, other):
        return x[2] - x[0] if other >= x[0] else x[0] - x[1]
    return abs(a[0] - b[0]) <= math.hypot(half(a, b[0]), half(b, a[0]))


class Parser(argparse.ArgumentParser):
    """argparse whose refusal of a bad option is one line naming the
    script (prog), exit 2 (argparse's usage block is more)."""

    def error(self, message):
        print("%s: %s (--help for usage)" % (self.prog, esc(message, 200)), file=sys.stderr)
        sys.exit(2)


def json_lines(path):
    """(line number, "PATH:LINE", object) for every non-blank line of the
    JSON-lines file at path; BadInput naming the file (and the line) when it
    cannot be opened, is not UTF-8, or a line is not JSON."""
    import json
    try:
        f = open(path, encoding="utf-8", errors="strict")
    except OSError as e:
        raise BadInput("%s: %s" % (esc(path, 200), esc(e.strerror or e, 200)))
    with f:
        try:
            lines = list(f)
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput("%s: not readable UTF-8 text (%s)" % (esc(path, 200), esc(e, 120)))
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = "%s:%d" % (esc(path, 200), no)
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise BadInput("%s: not JSON (%s)" % (where, esc(e, 120)))
        yield no, where, obj
