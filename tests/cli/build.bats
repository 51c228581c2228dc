#!/usr/bin/env bats
# build.bats - what a new user meets before the first sweep: make sweep and
# make test with a vendored bundle (DEPS=DIR) install nothing, make sweep
# without a GPU (the script's status and make's, as the README says), where
# make test leaves its binary, format-check in a tree without .git, the
# README's and docs/cli.md's fixture samples against the binary, and one
# spelling of the SDPA baselines everywhere (the one sdpa_baseline.py writes).
#
# No GPU, no network, nothing installed: apt-get, sudo, dpkg-query and
# nvidia-smi are stubs on PATH that record their calls; make runs in the
# repository only for targets that stop before building (checked).

load helpers

MAKE_BIN=$(command -v make) # the real make, before any stub goes on PATH
# Under `make cli` (inside make test) the caller's make variables are in the
# environment (MAKEFLAGS, and command-line ones like BUILD=build/ci or SAN=1):
# the makes run here must see the Makefile's defaults.
unset MAKEFLAGS MFLAGS MAKELEVEL BUILD KBUILD SPACES SAN DEPS CUDA ARCHS SHARDS SHARDS_90A SPACE STORE NVEXTRA \
    LOCAL

# Stubs in $WORK/stub, first on PATH. apt-get and sudo record and fail;
# dpkg-query says nothing is installed (a GPU node without the -dev packages,
# where an old deps.sh would reach for apt-get); nvidia-smi sees no GPU.
# $WORK/calls lists every stub call.
stub_machine() {
    mkdir -p "$WORK/stub"
    local s
    for s in apt-get sudo; do
        printf '#!/bin/sh\necho "%s $*" >>"%s"\necho "%s: stub, no package registry" >&2\nexit 100\n' \
            "$s" "$WORK/calls" "$s" >"$WORK/stub/$s"
    done
    printf '#!/bin/sh\nexit 1\n' >"$WORK/stub/dpkg-query"
    printf '#!/bin/sh\necho "nvidia-smi $*" >>"%s"\necho "No devices were found"\nexit 6\n' \
        "$WORK/calls" >"$WORK/stub/nvidia-smi"
    chmod +x "$WORK/stub/"*
    : >"$WORK/calls"
    export PATH="$WORK/stub:$PATH"
}

# A GPU for nvidia-smi, and a `make` for the sweep script's build step that
# records its arguments and fails, so nothing is built (the test's own make
# is $MAKE_BIN).
stub_gpu_and_build() {
    printf '#!/bin/sh\necho "nvidia-smi $*" >>"%s"\ncase "$*" in *compute_cap*) echo 8.9 ;; *) echo "GPU 0: Stub L4 (UUID: GPU-0)" ;; esac\n' \
        "$WORK/calls" >"$WORK/stub/nvidia-smi"
    printf '#!/bin/sh\necho "make $*" >>"%s"\necho "make: stub, no build here" >&2\nexit 2\n' \
        "$WORK/calls" >"$WORK/stub/make"
    chmod +x "$WORK/stub/nvidia-smi" "$WORK/stub/make"
}

# bundle DIR [test]: what `make vendor-deps` makes (empty files: only their
# presence is checked), with cmocka and bats for `test`; and a CUDA toolkit
# at $WORK/cuda whose nvcc is a stub.
bundle() {
    mkdir -p "$1/include/cjson" "$1/lib" "$WORK/cuda/bin"
    touch "$1/include/lmdb.h" "$1/include/cjson/cJSON.h" "$1/lib/liblmdb.so" "$1/lib/libcjson.so"
    if [ "${2:-}" = test ]; then
        mkdir -p "$1/bats/bin"
        touch "$1/include/cmocka.h" "$1/lib/libcmocka.so"
        printf '#!/bin/sh\nexit 0\n' >"$1/bats/bin/bats"
        chmod +x "$1/bats/bin/bats"
    fi
    printf '#!/bin/sh\nexit 1\n' >"$WORK/cuda/bin/nvcc"
    chmod +x "$WORK/cuda/bin/nvcc"
}

expect_no_install() {
    if grep -Eq '^(apt-get|sudo) ' "$WORK/calls"; then
        show_run
        cat "$WORK/calls"
        flunk "apt-get or sudo was called"
    fi
}

@test "make sweep DEPS=DIR: checks the bundle, installs nothing, goes on to the build" {
    stub_machine
    stub_gpu_and_build
    bundle "$WORK/deps"
    run --separate-stderr "$MAKE_BIN" -C "$REPO" sweep DEPS="$WORK/deps" CUDA="$WORK/cuda" \
        BUILD="$WORK/build"
    expect_no_install
    expect_in "$stderr" "deps: all present (DEPS=$WORK/deps; nothing installed)"
    # it reached the build (the stub make), and a failed build is the script's exit 1
    # (its first step: the planner, geninst, which checks the space before the kernels)
    grep -Eq "^make .*BUILD=$WORK/build .*$WORK/build/(geninst|fasweep)" "$WORK/calls" ||
        { cat "$WORK/calls"; flunk "the sweep script did not go on to the build"; }
    expect_in "$stderr" "sweep] Error 1"
}

@test "make test DEPS=DIR with an incomplete bundle: names what is missing, installs nothing, builds nothing" {
    stub_machine
    bundle "$WORK/deps" # no cmocka, no bats in it
    rm "$WORK/deps/lib/libcjson.so"
    # --no-print-directory: the checkout's own path (CI clones under /check/...) is
    # not output; whatever make would build or check would be.
    run --separate-stderr "$MAKE_BIN" --no-print-directory -C "$REPO" test \
        DEPS="$WORK/deps" CUDA="$WORK/cuda"
    expect_status 2
    expect_no_install
    expect_in "$stderr" "deps: DEPS=$WORK/deps installs nothing, and this is missing:"
    expect_in "$stderr" "$WORK/deps/include/cmocka.h (cmocka's header)"
    expect_in "$stderr" "$WORK/deps/lib/libcjson.so (cJSON's library)"
    expect_in "$stderr" "deps-test] Error 1"
    [ "$(grep -c '^deps:' <<<"$stderr")" -eq 1 ] || flunk "the missing pieces should be one line"
    [ -z "$output" ] || flunk "nothing should be built or checked, yet make printed: $output"
}

@test "make deps-test DEPS=DIR with a whole bundle: nothing installed, exit 0 where the tools are here" {
    stub_machine
    bundle "$WORK/deps" test
    run --separate-stderr "$MAKE_BIN" -C "$REPO" deps-test DEPS="$WORK/deps" CUDA="$WORK/cuda"
    expect_no_install
    expect_not_in "$stderr" "$WORK/deps/"
    if command -v clang >/dev/null && command -v clang-format >/dev/null &&
        ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
        expect_status 0
        expect_in "$stderr" "deps: all present"
    else
        expect_status 2 # the tools are missing here: named, still nothing installed
        expect_in "$stderr" "installs nothing, and this is missing:"
    fi
}

@test "deps.sh slurm with DEPS set installs nothing; an unknown set is a usage error" {
    stub_machine
    run --separate-stderr env DEPS="$WORK/deps" bash "$REPO/scripts/deps.sh" slurm
    expect_no_install
    run --separate-stderr bash "$REPO/scripts/deps.sh" bogus
    expect_status 2
    expect_in "$stderr" "deps: unknown set 'bogus'; use build, test or slurm"
    expect_no_install
}

@test "no GPU: the sweep script exits 1 in one line before installing, make sweep exits 2, as the README says" {
    stub_machine
    run --separate-stderr bash "$REPO/scripts/run_default_sweep.sh" "$WORK/build"
    expect_status 1
    script_status=$status
    expect_in "$stderr" "fasweep: no NVIDIA GPU found on this machine"
    [ "$(wc -l <<<"$stderr")" -eq 1 ] || flunk "the no-GPU message should be one line"
    expect_no_install
    # make sweep: the same line, nothing installed (the old order ran apt-get
    # first), and make's own status for the failed recipe
    run --separate-stderr "$MAKE_BIN" -C "$REPO" sweep BUILD="$WORK/build"
    expect_status 2
    expect_in "$stderr" "fasweep: no NVIDIA GPU found on this machine"
    expect_in "$stderr" "sweep] Error 1"
    expect_no_install
    [ ! -e "$WORK/build" ] || flunk "nothing should be built without a GPU"
    readme=$(tr '\n' ' ' <"$REPO/README.md")
    expect_in "$readme" "\`scripts/run_default_sweep.sh\` exits $script_status"
    expect_in "$readme" "\`make sweep\` exits $status"
}

@test "make test's binary is the one the README names (build/ci/fasweep); make's is build/fasweep" {
    # the first fasweep each dry run links
    linked() { "$MAKE_BIN" -C "$REPO" -nB "$@" 2>/dev/null | grep -oE -- '-o [^ ]*fasweep( |$)' |
        head -1 | awk '{ print $2 }'; }
    test_bin=$(linked test)
    all_bin=$(linked)
    [ "$test_bin" = build/ci/fasweep ] || flunk "make test links '$test_bin'"
    [ "$all_bin" = build/fasweep ] || flunk "make links '$all_bin'"
    readme=$(tr '\n' ' ' <"$REPO/README.md")
    expect_in "$readme" "\`make test\` leaves its binary in \`$test_bin\`"
    expect_in "$readme" "\`make\` builds \`$all_bin\`"
    expect_in "$("$MAKE_BIN" -C "$REPO" -n test 2>/dev/null)" "the binary tested is $test_bin"
}

@test "LOCAL=1 (the main job's build): the instances' SASS only, no PTX, no size-compressed fat binary; a bad value is one line" {
    # the nvcc line of one instance unit in each dry run
    unit() { "$MAKE_BIN" -C "$REPO" -nB BUILD="$WORK/b" ARCHS=90 "$@" "$WORK/b/kobj/inst_0.o" \
        2>/dev/null | grep -- "-c $WORK/b/gen/inst_0.cu" | head -1; }
    plain=$(unit)
    local_=$(unit LOCAL=1)
    [ -n "$plain" ] && [ -n "$local_" ] || flunk "no nvcc line: '$plain' '$local_'"
    expect_in "$plain" "-gencode=arch=compute_90,code=sm_90 "
    expect_in "$plain" "-gencode=arch=compute_90,code=compute_90"
    expect_in "$plain" "--compress-mode=size"
    expect_in "$local_" "-gencode=arch=compute_90,code=sm_90 "
    expect_not_in "$local_" "code=compute_90"
    expect_not_in "$local_" "--compress-mode"
    run --separate-stderr "$MAKE_BIN" -C "$REPO" -n BUILD="$WORK/b" LOCAL=yes
    [ "$status" -ne 0 ] || flunk "LOCAL=yes was taken"
    expect_in "$stderr" "LOCAL=yes: only 1"
}

# A copy of the sources without .git (a tarball, an export).
# The files git would give (tracked, and untracked ones it does not ignore),
# so what a developer keeps ignored in the checkout stays out; every file
# when the repository is itself no git checkout.
copy_tree() {
    mkdir -p "$1"
    if git -C "$REPO" rev-parse --show-toplevel >/dev/null 2>&1; then
        (cd "$REPO" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
            tar -C "$1" -xf -
    else
        tar -C "$REPO" --exclude=./build --exclude=./dist --exclude=./.deps --exclude=./.git \
            -cf - . | tar -C "$1" -xf -
    fi
}

@test "format-check without .git checks the files: clean counts them, a bad one fails" {
    command -v clang-format >/dev/null || skip "no clang-format here (make deps-test installs it)"
    v=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
    [ "$v" = 14 ] || skip "clang-format $v: format-check only reports with a major other than 14"
    copy_tree "$WORK/tree"
    n=$(find "$WORK/tree" \( -path "$WORK/tree/.*" \) -prune -o -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | wc -l)
    [ "$n" -gt 20 ] || flunk "the copy has only $n sources"
    run --separate-stderr "$MAKE_BIN" -C "$WORK/tree" format-check
    expect_status 0
    expect_in "$output" "format-check: clean ($n files)"
    printf 'int  badly (void){return 0;}\n' >"$WORK/tree/store/badly.c"
    run --separate-stderr "$MAKE_BIN" -C "$WORK/tree" format-check
    expect_status 2
    expect_in "$stderr" "store/badly.c:1:"
    expect_not_in "$output" "format-check: clean"
}

@test "format-check with no sources to check fails saying so (never 'clean')" {
    command -v clang-format >/dev/null || skip "no clang-format here"
    mkdir -p "$WORK/empty"
    cp "$REPO/Makefile" "$WORK/empty/"
    run --separate-stderr "$MAKE_BIN" -C "$WORK/empty" format-check
    expect_status 2
    expect_in "$stderr" "format-check: no *.c *.h *.cu *.cuh files found under $WORK/empty: nothing checked"
    expect_not_in "$output" "format-check: clean"
}

@test "the README's and docs/cli.md's samples on the fixture are what the binary prints" {
    run python3 "$REPO/tests/cli/doc_samples.py" "$FASWEEP" "$REPO" "$WORK" \
        "$REPO/README.md" "$REPO/docs/cli.md"
    expect_status 0
    expect_in "$output" "README.md:"
    expect_in "$output" "fasweep topk"
}

@test "doc_samples.py catches a sample that drifted, and a doc without one" {
    sed 's/   1  d64.m128.n64.w8/   1  d64.m128.n64.w4/' "$REPO/README.md" >drift.md
    run python3 "$REPO/tests/cli/doc_samples.py" "$FASWEEP" "$REPO" "$WORK/a" drift.md
    expect_status 1
    expect_in "$output" "prints other than the doc shows"
    echo "no samples" >none.md
    run python3 "$REPO/tests/cli/doc_samples.py" "$FASWEEP" "$REPO" "$WORK/b" none.md
    expect_status 2
}

@test "the SDPA baselines have one spelling everywhere: the names sdpa_baseline.py writes" {
    run python3 - "$REPO" <<'PY'
import importlib.util, json, os, re, sys
repo = sys.argv[1]
path = os.path.join(repo, "scripts", "sdpa_baseline.py")
src = open(path).read()
# its records' config is the CONFIG_NAMES entry of a BACKENDS name
assert '"config": CONFIG_NAMES[name]' in src, "sdpa_baseline.py no longer names its records as expected"
spec = importlib.util.spec_from_file_location("sdpa_baseline", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
emitted = {mod.CONFIG_NAMES[b] for b in mod.BACKENDS}
# a baseline-like name: sdpa- or sdpa_ with a word, with or without a torch_
# prefix; the script's own name and PyTorch's sdpa_kernel are not baselines
pat = re.compile(r"\b(?:torch_)?sdpa[-_][A-Za-z_]+")
other = {"sdpa_baseline", "sdpa_kernel"}
bad = []
for top, dirs, files in os.walk(repo):
    dirs[:] = [d for d in dirs if not d.startswith(".") and
               os.path.relpath(os.path.join(top, d), repo) not in ("build", "dist")]
    for f in files:
        p = os.path.join(top, f)
        if f.endswith((".png", ".so", ".o", ".a", ".pyc")):  # .pyc: compiled, not source
            continue
        for n, line in enumerate(open(p, errors="replace"), 1):
            for m in pat.findall(line):
                if m not in emitted and m not in other:
                    bad.append("%s:%d: %s" % (os.path.relpath(p, repo), n, m))
# and every baseline record of the fixtures is one of them
for f in os.listdir(os.path.join(repo, "tests", "cli", "fixtures")):
    if f.endswith(".jsonl"):
        for n, line in enumerate(open(os.path.join(repo, "tests", "cli", "fixtures", f)), 1):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("kind") == "baseline" and \
                    r["key"]["config"] not in emitted:
                bad.append("tests/cli/fixtures/%s:%d: baseline %s" % (f, n, r["key"]["config"]))
print("emitted: " + " ".join(sorted(emitted)))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
    expect_status 0
    expect_in "$output" "emitted: sdpa-cudnn sdpa-efficient sdpa-flash triton"
}

@test "vendor_deps.sh: its bundle passes deps.sh's check and links a program against LMDB and cJSON" {
    [ -r /usr/include/lmdb.h ] && [ -r /usr/include/cjson/cJSON.h ] ||
        skip "no LMDB or cJSON headers on this machine to vendor"
    stub_machine
    bundle "$WORK/unused" # only for its stub nvcc at $WORK/cuda
    run --separate-stderr bash "$REPO/scripts/vendor_deps.sh" "$WORK/v"
    expect_status 0
    expect_in "$output" "vendored into $WORK/v:"
    run --separate-stderr env DEPS="$WORK/v" CUDA="$WORK/cuda" bash "$REPO/scripts/deps.sh" build
    expect_status 0
    expect_in "$stderr" "deps: all present (DEPS=$WORK/v; nothing installed)"
    expect_no_install
    printf '#include <lmdb.h>\n#include <cJSON.h>\nint main(void) { MDB_env *e; cJSON *j = cJSON_CreateObject(); cJSON_Delete(j); return mdb_env_create(&e); }\n' >t.c
    cc -I"$WORK/v/include" -I"$WORK/v/include/cjson" t.c -o t -L"$WORK/v/lib" \
        -Wl,-rpath,"$WORK/v/lib" -llmdb -lcjson || flunk "the bundle does not link"
    ./t || flunk "the program linked against the bundle does not run"
    if command -v bats >/dev/null; then
        "$WORK/v/bats/bin/bats" --version || flunk "the vendored bats does not run"
    fi
}
