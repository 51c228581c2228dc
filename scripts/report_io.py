"""report_io.py - what the scripts that read fasweep's exports share: the
one-line refusal of a bad input file, text made safe to print, and the one
rule for a number read from a file (finite, not a bool)."""
import math


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
