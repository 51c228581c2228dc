"""FNV-1a 64 as fasweep computes it (grid/space.c): the space hash records
keep, and the HASH of eval's build id src-HASH. One copy for the scripts
(sdpa_baseline.py, evolve_code.py) and the tests' stand-in fasweep."""


def fnv1a64(data):
    """FNV-1a 64 of the bytes DATA, as 16 lowercase hex digits."""
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h
