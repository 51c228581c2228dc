#!/usr/bin/env bash
# deps.sh build|test|slurm - installs what fasweep needs when it is missing.
#   build: a C compiler, make, pkg-config, LMDB and cJSON headers, and the
#          CUDA toolkit (nvcc) — Debian's nvidia-cuda-toolkit when none is found
#   test:  build's, plus cmocka, bats, clang (libFuzzer), clang-format,
#          python3-venv (the tuner tests' venv) and chromium (the report's
#          browser test) for the tests
#   slurm: only what tests/slurm/run.sh needs next to a built fasweep:
#          slurm-wlm's daemons and client, munge, python3
# Uses apt-get (as root, or through sudo). Prints what it installs.
#
# DEPS=DIR (`make ... DEPS=DIR`: a bundle from `make vendor-deps`, for a GPU
# node with no package registry) installs nothing and never runs apt-get: it
# checks that DIR holds the headers and libraries (and bats, on PATH or in
# DIR/bats/bin) and that this machine has the tools, and names every missing
# piece in one line, exit 1. Tools whose suites only SKIP without them
# (chromium, python3's venv) are named as a note, exit 0.
set -euo pipefail
what=${1:-build}
CUDA=${CUDA:-/usr/local/cuda}
case "$what" in
build | test | slurm) ;;
*)
    echo "deps: unknown set '$what'; use build, test or slurm" >&2
    exit 2
    ;;
esac

fuzzer_rt() { ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; }
have_nvcc() { [ -x "$CUDA/bin/nvcc" ] || command -v nvcc >/dev/null; }

# ---- DEPS=DIR: check the bundle and the tools, install nothing -------------
missing=()
notes=()
lack_file() { [ -e "$DEPS/$1" ] || missing+=("$DEPS/$1 ($2)"); }
lack_cmd() { command -v "$1" >/dev/null || missing+=("$1 ($2)"); }
check_bundle() {
    if [ "$what" = slurm ]; then
        for c in slurmctld slurmd sbatch srun munged python3; do lack_cmd "$c" "slurm-wlm, munge, python3"; done
    else
        lack_cmd cc "a C compiler"
        lack_cmd make "make"
        have_nvcc || missing+=("nvcc (the CUDA toolkit: set CUDA=/path, now $CUDA)")
        lack_file include/lmdb.h "LMDB's header"
        lack_file lib/liblmdb.so "LMDB's library"
        lack_file include/cjson/cJSON.h "cJSON's header"
        lack_file lib/libcjson.so "cJSON's library"
    fi
    if [ "$what" = test ]; then
        lack_file include/cmocka.h "cmocka's header"
        lack_file lib/libcmocka.so "cmocka's library"
        command -v bats >/dev/null || [ -x "$DEPS/bats/bin/bats" ] ||
            missing+=("bats (on PATH or in $DEPS/bats/bin)")
        lack_cmd clang "clang, for the fuzzers"
        fuzzer_rt || missing+=("libFuzzer's runtime (libclang-rt-N-dev)")
        lack_cmd clang-format "clang-format 14, for format-check"
        command -v chromium >/dev/null || notes+=("no chromium: the report's browser test will SKIP")
        python3 -c 'import ensurepip' 2>/dev/null || notes+=("no python3 venv: the tuner tests will SKIP")
    fi
    local n
    for n in "${notes[@]}"; do echo "deps: note: $n" >&2; done
    if [ ${#missing[@]} -gt 0 ]; then
        local IFS=';'
        echo "deps: DEPS=$DEPS installs nothing, and this is missing:${missing[*]/#/ }; run 'make vendor-deps' where they are installed and carry the folder, or install them" >&2
        exit 1
    fi
    echo "deps: all present (DEPS=$DEPS; nothing installed)" >&2
}
if [ -n "${DEPS:-}" ]; then
    check_bundle
    exit 0
fi

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
want() { for p in "$@"; do have_pkg "$p" || need+=("$p"); done; }

if [ "$what" = slurm ]; then
    # slurm-wlm is a metapackage of these three; the test's check needs python3.
    want slurmctld slurmd slurm-client munge
    command -v python3 >/dev/null || want python3
else
    command -v cc >/dev/null || want build-essential
    command -v make >/dev/null || want make
    command -v pkg-config >/dev/null || want pkg-config
    want liblmdb-dev libcjson-dev
fi
if [ "$what" = test ]; then
    want libcmocka-dev bats clang clang-format python3-venv chromium
fi
if [ "$what" != slurm ] && ! have_nvcc; then
    echo "deps: no CUDA toolkit at $CUDA: installing Debian's nvidia-cuda-toolkit" \
         "(or install NVIDIA's toolkit and set CUDA=/path)" >&2
    want nvidia-cuda-toolkit
fi
if [ ${#need[@]} -eq 0 ] && { [ "$what" != test ] || fuzzer_rt; }; then
    echo "deps: all present" >&2
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Slurm's and munge's postinst would start the system's daemons (with /etc
# config) through invoke-rc.d where no policy-rc.d forbids it, as in a clean
# container: forbid it while installing, and remove only a file made here.
if [ "$what" = slurm ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod 755 /usr/sbin/policy-rc.d
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get update -qq
[ ${#need[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# libFuzzer's runtime ships apart from clang on Debian (libclang-rt-N-dev)
if [ "$what" = test ] && ! fuzzer_rt; then
    v=$(clang --version | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)
    $SUDO apt-get install -y -qq --no-install-recommends "libclang-rt-$v-dev" >/dev/null
fi
echo "deps: done" >&2
