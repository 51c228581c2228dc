#!/usr/bin/env bash
# vendor_deps.sh DIR - copies the headers and shared libraries of LMDB, cJSON
# and cmocka, and bats, from this machine into DIR, so a GPU node without a
# package registry can build and test with `make DEPS=DIR` (which installs
# nothing there: scripts/deps.sh checks DIR has these files, and make puts
# DIR/bats/bin on PATH).
# Exit 1 when LMDB or cJSON is not here (the bundle could not build
# fasweep); cmocka or bats missing is a warning (the bundle builds, but
# cannot run the tests). Every missing piece is named with its package.
set -euo pipefail
dir=${1:?usage: vendor_deps.sh DIR}
mkdir -p "$dir/include/cjson" "$dir/lib"
lacking=()
fatal=0

# lib NAME PKG FATAL: NAME.so and its versions, from where the linker finds them
lib() {
    local so
    so=$(find /usr/lib /usr/lib64 /usr/local/lib -name "$1.so" 2>/dev/null | head -1)
    if [ -z "$so" ]; then
        lacking+=("$1.so ($2)")
        [ "$3" = 0 ] || fatal=1
        return 0
    fi
    cp -P "$(dirname "$so")/$1".so* "$dir/lib/"
}
# hdr PATH DEST PKG FATAL
hdr() {
    if [ -r "$1" ]; then
        cp "$1" "$dir/include/$2"
    else
        lacking+=("$1 ($3)")
        [ "$4" = 0 ] || fatal=1
    fi
}
hdr /usr/include/lmdb.h lmdb.h liblmdb-dev 1
hdr /usr/include/cjson/cJSON.h cjson/cJSON.h libcjson-dev 1
hdr /usr/include/cmocka.h cmocka.h libcmocka-dev 0
lib liblmdb liblmdb-dev 1
lib libcjson libcjson-dev 1
lib libcmocka libcmocka-dev 0
# bats is plain bash: its tree copies as it is
if command -v bats >/dev/null && [ -d /usr/lib/bats-core ] && [ -d /usr/libexec/bats-core ]; then
    mkdir -p "$dir/bats/bin" "$dir/bats/lib" "$dir/bats/libexec"
    cp -r /usr/lib/bats-core "$dir/bats/lib/"
    cp -r /usr/libexec/bats-core "$dir/bats/libexec/"
    cp /usr/bin/bats "$dir/bats/bin/"
else
    lacking+=("bats (Debian's bats)")
fi
if [ ${#lacking[@]} -gt 0 ]; then
    IFS=';'
    what=$([ $fatal = 1 ] && echo "the bundle cannot build fasweep" || echo "the bundle builds fasweep but cannot run the tests")
    echo "vendor_deps: not on this machine:${lacking[*]/#/ }; $what: install them here and run it again" >&2
    [ $fatal = 0 ] || exit 1
fi
echo "vendored into $dir: $(ls "$dir/lib" | tr '\n' ' ')"
