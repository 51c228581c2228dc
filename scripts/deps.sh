#!/usr/bin/env bash
# deps.sh build|test - installs what fasweep needs when it is missing.
#   build: a C compiler, make, pkg-config, LMDB and cJSON headers, and the
#          CUDA toolkit (nvcc) — Debian's nvidia-cuda-toolkit when none is found
#   test:  build's, plus cmocka, bats, clang (libFuzzer) and clang-format for
#          the tests
# Uses apt-get (as root, or through sudo). Prints what it installs.
set -euo pipefail
what=${1:-build}
CUDA=${CUDA:-/usr/local/cuda}

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
want() { for p in "$@"; do have_pkg "$p" || need+=("$p"); done; }

command -v cc >/dev/null || want build-essential
command -v make >/dev/null || want make
command -v pkg-config >/dev/null || want pkg-config
want liblmdb-dev libcjson-dev
if [ "$what" = test ]; then
    want libcmocka-dev bats clang clang-format
fi
if [ ! -x "$CUDA/bin/nvcc" ] && ! command -v nvcc >/dev/null; then
    echo "deps: no CUDA toolkit at $CUDA: installing Debian's nvidia-cuda-toolkit" \
         "(or install NVIDIA's toolkit and set CUDA=/path)" >&2
    want nvidia-cuda-toolkit
fi
fuzzer_rt() { ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; }
if [ ${#need[@]} -eq 0 ] && { [ "$what" != test ] || fuzzer_rt; }; then
    echo "deps: all present" >&2
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
[ ${#need[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# libFuzzer's runtime ships apart from clang on Debian (libclang-rt-N-dev)
if [ "$what" = test ] && ! fuzzer_rt; then
    v=$(clang --version | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)
    $SUDO apt-get install -y -qq --no-install-recommends "libclang-rt-$v-dev" >/dev/null
fi
echo "deps: done" >&2
