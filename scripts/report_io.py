"""report_io.py - what the scripts that read fasweep's exports share: the
one-line refusal of a bad input file, text made safe to print, the one
rule for a number read from a file (finite, not a bool), the one for a
number written to JSON (not finite: null) and the one-line refusal of a
bad option."""
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
