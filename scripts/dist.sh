#!/usr/bin/env bash
# dist.sh BUILD OUT - a relocatable bundle for GPU nodes without a package
# registry: bin/fasweep (+ fa_check, fa_bench), the shared libraries a bare
# node may lack (LMDB, cJSON; the CUDA runtime is linked statically), and
# spaces/, scripts/, tests/gpu/ and the README. The binaries find lib/
# through their RPATH ($ORIGIN/../lib), so the folder can live anywhere:
#   tar czf fasweep.tgz -C dist fasweep; ...; fasweep/bin/fasweep grid --space ...
set -euo pipefail
build=${1:?usage: dist.sh BUILD OUT}
out=${2:?usage: dist.sh BUILD OUT}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/tests"
for b in fasweep fa_check fa_bench; do
    [ -x "$build/$b" ] && cp "$build/$b" "$out/bin/"
done
for l in liblmdb libcjson; do
    so=$(ldd "$build/fasweep" | awk -v l="$l" 'index($1, l ".so") == 1 {print $3}')
    [ -n "$so" ] && cp -L "$so" "$out/lib/$(basename "$so")"
done
cp -r spaces scripts README.md "$out/"
cp -r tests/gpu "$out/tests/"
echo "dist: $out ($(du -sh "$out" | cut -f1)): $(ls "$out/bin" "$out/lib" | tr '\n' ' ')"
