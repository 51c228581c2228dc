#!/usr/bin/env bash
# run.sh FASWEEP - the tuner tests (test_tuners.py) with Kernel Tuner and
# jsonschema from PyPI, in a venv made here once (build/venv-tuners; pinned
# in requirements.txt). No GPU needed. When the venv cannot be made (no
# python3-venv, no network) it says SKIP with the reason and exits 77: a
# test that could not run never passes.
set -uo pipefail
cd "$(dirname "$0")/../.."
export FASWEEP=${1:?usage: run.sh FASWEEP}
venv=${TUNERS_VENV:-build/venv-tuners}
req=tests/tuners/requirements.txt
if ! cmp -s "$req" "$venv/requirements.txt" 2>/dev/null; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/tmp/tuners-venv.log 2>&1; then
        echo "tuners: SKIP: cannot make a Python venv ($(tail -1 /tmp/tuners-venv.log);" \
             "install python3-venv)"
        exit 77
    fi
    echo "tuners: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv" >&2
    if ! "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >/tmp/tuners-pip.log 2>&1; then
        echo "tuners: SKIP: pip could not install the pinned packages from PyPI:" \
             "$(tail -1 /tmp/tuners-pip.log)"
        rm -rf "$venv"
        exit 77
    fi
    cp "$req" "$venv/requirements.txt"
fi
exec "$venv/bin/python" -W ignore::DeprecationWarning tests/tuners/test_tuners.py
