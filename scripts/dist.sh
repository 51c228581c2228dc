#!/usr/bin/env bash
# dist.sh BUILD OUT KLIB - a relocatable bundle for GPU nodes without a
# package registry: bin/fasweep (+ fa_check, fa_bench, small: the kernels
# are not in them), lib/ with the one kernel library KLIB they all load and
# the shared libraries a bare node may lack (the CUDA runtime, LMDB, cJSON),
# and spaces/, scripts/, kernels/ (the template, for `fasweep eval
# --kernel`), tests/gpu/ with tests/queue.sh (its runner sources it) and
# the README. The binaries find lib/ through their RPATH ($ORIGIN/../lib),
# so the folder can live anywhere:
#   tar czf fasweep.tgz -C dist fasweep; ...; fasweep/bin/fasweep grid --space ...
set -euo pipefail
build=${1:?usage: dist.sh BUILD OUT KLIB}
out=${2:?usage: dist.sh BUILD OUT KLIB}
klib=${3:?usage: dist.sh BUILD OUT KLIB}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/tests"
for b in fasweep fa_check fa_bench; do
    [ -x "$build/$b" ] && cp "$build/$b" "$out/bin/"
done
cp "$klib" "$out/lib/"
for l in libcudart liblmdb libcjson; do
    so=$(ldd "$build/fasweep" | awk -v l="$l" 'index($1, l ".so") == 1 {print $3}')
    [ -n "$so" ] && cp -L "$so" "$out/lib/$(basename "$so")"
done
cp -r spaces scripts kernels README.md "$out/"
[ -d docs ] && cp -r docs "$out/"
cp -r tests/gpu tests/queue.sh "$out/tests/"
echo "dist: $out ($(du -sh "$out" | cut -f1); bin $(du -sh "$out/bin" | cut -f1)," \
    "lib $(du -sh "$out/lib" | cut -f1)): $(ls "$out/bin" "$out/lib" | tr '\n' ' ')"
