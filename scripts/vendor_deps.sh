#!/usr/bin/env bash
# vendor_deps.sh DIR - copies the headers and shared libraries of LMDB, cJSON
# and cmocka, and bats, from this machine into DIR, so a GPU node without a
# package registry can build and test with `make DEPS=DIR` and
# `PATH=DIR/bats/bin:$PATH`.
set -euo pipefail
dir=${1:?usage: vendor_deps.sh DIR}
mkdir -p "$dir/include/cjson" "$dir/lib" "$dir/bats"
libdir=$(dirname "$(find /usr/lib /usr/lib64 -name 'liblmdb.so' 2>/dev/null | head -1)")
cp /usr/include/lmdb.h "$dir/include/"
cp /usr/include/cjson/cJSON.h "$dir/include/cjson/"
cp /usr/include/cmocka.h "$dir/include/" 2>/dev/null || true
for l in liblmdb libcjson libcmocka; do
    cp -P "$libdir/$l".so* "$dir/lib/" 2>/dev/null || true
done
# bats is plain bash: its tree copies as it is
if command -v bats >/dev/null; then
    mkdir -p "$dir/bats/bin" "$dir/bats/lib" "$dir/bats/libexec"
    cp -r /usr/lib/bats-core "$dir/bats/lib/"
    cp -r /usr/libexec/bats-core "$dir/bats/libexec/"
    cp /usr/bin/bats "$dir/bats/bin/"
fi
echo "vendored into $dir: $(ls "$dir/lib" | tr '\n' ' ')"
