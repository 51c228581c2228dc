#!/usr/bin/env bash
# dist.sh BUILD OUT - a relocatable bundle: bin/fasweep, the shared libraries
# it needs that a bare GPU node may lack (LMDB, cJSON; the CUDA runtime is
# linked statically), spaces/, scripts/ and a small README. The binary finds
# its libraries through RPATH $ORIGIN/../lib, so the folder can live anywhere.
set -euo pipefail
build=${1:?usage: dist.sh BUILD OUT}
out=${2:?usage: dist.sh BUILD OUT}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$build/fasweep" "$out/bin/"
for l in lmdb cjson; do
    so=$(ldd "$build/fasweep" | awk -v l="lib$l" '$1 ~ "^"l"\\.so" {print $3}')
    [ -n "$so" ] && cp -L "$so" "$out/lib/"
done
if command -v patchelf >/dev/null; then
    patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/fasweep"
else
    # no patchelf: a wrapper that points the loader at lib/
    mv "$out/bin/fasweep" "$out/bin/fasweep.bin"
    cat >"$out/bin/fasweep" <<'SH'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/fasweep.bin" "$@"
SH
    chmod +x "$out/bin/fasweep"
fi
cp -r spaces scripts "$out/"
cp README.md "$out/"
echo "dist: $out ($(du -sh "$out" | cut -f1)); run $out/bin/fasweep --help"
