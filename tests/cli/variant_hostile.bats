#!/usr/bin/env bats
# variant_hostile.bats - `fasweep eval --kernel` against hostile input:
# the compile cache keys on everything the
# compile reads (a private copy beside only the embedded headers: other
# #includes are refused), no user path reaches nvcc, a failure that is not
# the source's is not cached, the cache folder must be the user's own, a
# library is loaded only when its hash matches the one recorded at build,
# no temp build folder is left behind (concurrent runs included), a path
# that a record cannot store is refused before any work, and an `error`
# is cut on a character boundary. CUDA_VISIBLE_DEVICES="" hides any GPU,
# so the tests mean the same on a GPU machine. Needs nvcc.

load helpers

setup_file() {
    export CUDA_VISIBLE_DEVICES=""
}

eval_k() { # eval_k KERNEL [more options]
    local k=$1
    shift
    run --separate-stderr "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 \
        --kernel "$k" --store "$STORE" "$@"
}

# One line on stderr (the error-message rule; a usage error's "(see
# `fasweep eval --help`)" hint after it).
one_line() {
    [ "$(printf '%s' "$stderr" | grep -cv '^(see `fasweep')" -eq 1 ] ||
        { show_run; flunk "more than one line"; }
}

@test "eval --kernel: a header beside the kernel is refused, not read behind the cache's back" {
    export FASWEEP_CACHE="$WORK/cache"
    mkdir src
    echo '#define MY_TILE 64' >src/local.h
    sed 's|#include "mma.h"|#include "mma.h"\n#include "local.h"|' \
        "$REPO/kernels/mma/flash_fwd.cuh" >src/k.cuh
    eval_k src/k.cuh
    expect_status 2
    one_line
    expect_in "$stderr" 'k.cuh includes "local.h" (a header beside it)'
    expect_in "$stderr" "put that code into the file"
    # an absolute or ".." system header and a computed include are reads outside the copy too
    sed 's|#include <stdint.h>|#include </etc/hostname>|' "$REPO/kernels/mma/flash_fwd.cuh" >abs.cuh
    eval_k abs.cuh
    expect_status 2
    expect_in "$stderr" "an absolute or \"..\" system header"
    sed 's|#include <stdint.h>|#include MY_HEADER|' "$REPO/kernels/mma/flash_fwd.cuh" >mac.cuh
    eval_k mac.cuh
    expect_status 2
    expect_in "$stderr" "a computed or unterminated #include"
    [ ! -e "$WORK/cache" ] || flunk "a cache was made"
}

@test "eval --kernel: a path with control characters or invalid UTF-8 is exit 2 before any work" {
    export FASWEEP_CACHE="$WORK/cache"
    local k
    for k in $'tab\tk.cuh' $'nl\nk.cuh' $'ctl\001k.cuh' $'latin\xe9.cuh'; do
        cp "$REPO/kernels/mma/flash_fwd.cuh" "$k"
        eval_k "$WORK/$k"
        expect_status 2
        one_line
        expect_in "$stderr" "a record stores it as a name"
    done
    expect_in "$stderr" 'latin\xe9.cuh: the path is not valid UTF-8'
    [ ! -e "$WORK/cache" ] || flunk "a cache was made: work was done"
    [ ! -e "$STORE" ] || flunk "a store was made"
}

@test "eval --kernel: a compiler error cut to the record's field never splits a character" {
    export FASWEEP_CACHE="$WORK/cache"
    local long n
    long=$(python3 -c 'print("\u20ac" * 120)')
    # the compiler echoes the line as is (UTF-8) after the error's own line; three
    # names one byte apart: two of them put the 255-byte cut inside a character
    for n in a aa aaa; do
        sed "s|#include \"mma.h\"|#include \"mma.h\"\nstatic const char *broken = no_such_name + \"$long\";|" \
            "$REPO/kernels/mma/flash_fwd.cuh" >"$n.cuh"
        eval_k "$n.cuh" --json
        expect_status 1
        expect_in "$output" '"status":"compile_error"'
        printf '%s' "$output" | python3 -c '
import json, sys
r = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
assert "\u20ac" in r["error"] and len(r["error"].encode()) < 256, r["error"]
' || { show_run; flunk "the error field is not valid UTF-8 within its 255 bytes"; }
    done
}

@test "eval --kernel: three identical runs at once leave one cache entry and no temp folder" {
    export FASWEEP_CACHE="$WORK/cache"
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    local i
    for i in 1 2 3; do
        "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 --kernel k.cuh \
            --store "$STORE" >"out$i" 2>"err$i" &
    done
    wait
    for i in 1 2 3; do
        grep -q "the variant compiled" "err$i" || { cat "err$i"; flunk "run $i did not compile"; }
    done
    [ "$(find "$WORK/cache/variants" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ] ||
        { ls -la "$WORK/cache/variants"; flunk "not exactly one entry (temp folders left)"; }
}

@test "eval --kernel: SIGTERM mid-compile removes the temp folder; a dead run's old one is swept" {
    export FASWEEP_CACHE="$WORK/cache"
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    printf '#!/bin/sh\nexec sleep 30\n' >slow-nvcc
    chmod +x slow-nvcc
    mkdir -p -m 0700 cache/variants/.tmp-dead cache/variants/.tmp-live
    touch cache/variants/.tmp-dead/kernel.cuh
    touch -d '1 hour ago' cache/variants/.tmp-dead
    FASWEEP_NVCC="$WORK/slow-nvcc" "$FASWEEP" eval --problem 4,8,512,64 \
        --config d64.m64.n64.w4.s2.z1 --kernel k.cuh 2>err &
    local pid=$! i st=0
    for i in $(seq 50); do # until the compile is under way
        [ "$(find cache/variants -name 'wrapper.cu' | wc -l)" -eq 1 ] && break
        sleep 0.1
    done
    kill -TERM "$pid"
    wait "$pid" || st=$?
    [ "$st" -eq 143 ] || { cat err; flunk "expected death by SIGTERM (143), got $st"; }
    [ ! -e cache/variants/.tmp-dead ] || flunk "the dead run's temp folder was not swept"
    [ -d cache/variants/.tmp-live ] || flunk "a recent temp folder (a live run's) was removed"
    [ "$(ls -A cache/variants)" = .tmp-live ] || { ls -la cache/variants; flunk "left behind"; }
}

@test "eval --kernel: a kernel in a folder with a quote compiles, and is the same entry from another" {
    export FASWEEP_CACHE="$WORK/cache"
    mkdir 'q"d' clean
    cp "$REPO/kernels/mma/flash_fwd.cuh" 'q"d/k.cuh'
    eval_k 'q"d/k.cuh'
    expect_status 1
    expect_in "$stderr" "the variant compiled"
    [ -z "$(find "$WORK/cache" -name failed)" ] || flunk "a failure was cached"
    # the same source from another folder is the same entry (the path is not read)
    cp 'q"d/k.cuh' clean/k.cuh
    eval_k clean/k.cuh
    expect_status 1
    expect_in "$stderr" "the variant compiled"
    [ "$(find "$WORK/cache/variants" -name variant.so | wc -l)" -eq 1 ] || flunk "compiled again"
}

@test "eval --kernel: a failure of the environment is not cached" {
    export FASWEEP_CACHE="$WORK/cache"
    cat >fake-nvcc <<'SH'
#!/bin/sh
echo 'sh: 1: Syntax error: Unterminated quoted string' >&2
exit 2
SH
    chmod +x fake-nvcc
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    FASWEEP_NVCC="$WORK/fake-nvcc" eval_k k.cuh
    expect_status 1
    one_line
    expect_in "$stderr" "failed without naming an error in the variant (sh: 1: Syntax error"
    expect_in "$stderr" "not cached"
    [ -z "$(find "$WORK/cache/variants" -mindepth 1)" ] || { find "$WORK/cache"; flunk "cached"; }
}

@test "eval --kernel: a cache folder of another user, writable by others or a link is refused" {
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    mkdir -m 0777 shared
    FASWEEP_CACHE="$WORK/shared" eval_k k.cuh
    expect_status 1
    one_line
    expect_in "$stderr" "the variant cache $WORK/shared is writable by others"
    expect_in "$stderr" "chmod go-w it, or set FASWEEP_CACHE"
    mkdir -m 0700 mine other
    ln -s "$WORK/other" mine/variants
    FASWEEP_CACHE="$WORK/mine" eval_k k.cuh
    expect_status 1
    expect_in "$stderr" "the variant cache $WORK/mine/variants is a symbolic link"
    if [ "$(id -u)" -eq 0 ]; then
        mkdir -m 0700 theirs
        chown 65534 theirs
        FASWEEP_CACHE="$WORK/theirs" eval_k k.cuh
        expect_status 1
        expect_in "$stderr" "is owned by another user"
    fi
    [ -z "$(find shared other -mindepth 1)" ] || flunk "something was written into a refused folder"
}

@test "eval --kernel: without HOME the cache is a per-user 0700 folder, and a planted one is refused" {
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    printf '#!/bin/sh\necho "no compiler here" >&2\nexit 1\n' >fake-nvcc
    chmod +x fake-nvcc
    local me
    me=$(id -u)
    env -u HOME -u XDG_CACHE_HOME -u FASWEEP_CACHE TMPDIR="$WORK" FASWEEP_NVCC="$WORK/fake-nvcc" \
        "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 --kernel k.cuh 2>err || true
    grep -q "no compiler here" err || { cat err; flunk "the fake compiler did not run"; }
    [ "$(stat -c %a "$WORK/fasweep-$me")" = 700 ] || flunk "fasweep-$me is not mode 0700"
    rm -rf "$WORK/fasweep-$me"
    mkdir -m 0700 planted
    ln -s "$WORK/planted" "$WORK/fasweep-$me"
    run --separate-stderr env -u HOME -u XDG_CACHE_HOME -u FASWEEP_CACHE TMPDIR="$WORK" \
        "$FASWEEP" eval --problem 4,8,512,64 --config d64.m64.n64.w4.s2.z1 --kernel k.cuh
    expect_status 1
    expect_in "$stderr" "the variant cache $WORK/fasweep-$me is a symbolic link"
    [ -z "$(find planted -mindepth 1)" ] || flunk "something was written through the link"
}

@test "eval --kernel: a cached library that is not what was built is never used" {
    export FASWEEP_CACHE="$WORK/cache"
    cp "$REPO/kernels/mma/flash_fwd.cuh" k.cuh
    eval_k k.cuh
    expect_in "$stderr" "the variant compiled"
    local so
    so=$(find "$WORK/cache" -name variant.so)
    [ -s "$so.fnv" ] || flunk "no hash recorded beside $so"
    printf 'planted' >>"$so"
    eval_k k.cuh
    expect_status 1
    one_line
    expect_in "$stderr" "its hash differs from the one recorded then"
    expect_in "$stderr" "remove the folder $(dirname "$so") and run again"
    expect_not_in "$stderr" "the variant compiled"
    rm -rf "$(dirname "$so")"
    eval_k k.cuh
    expect_in "$stderr" "the variant compiled"
    chmod g+w "$(dirname "$so")"
    eval_k k.cuh
    expect_status 1
    expect_in "$stderr" "is writable by others"
}
