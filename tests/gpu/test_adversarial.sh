#!/usr/bin/env bash
# test_adversarial.sh - kernels that cheat the measurement, each of which fasweep must
# refuse with a reason naming the check that caught it (run by tests/gpu/run.sh, `make
# test-gpu`, with $FASWEEP set to the binary; a gate no kernel can fool).
#
# tests/gpu/adversarial/make_cheats.py writes the cheats from the CURRENT templates (each
# a small marked edit of kernels/mma/flash_fwd.cuh or kernels/wgmma/flash_fwd_wgmma.cuh)
# and a manifest; every one is run as
#   fasweep eval --kernel FILE --problem P --config C --mode M --json --store TMP/adv.lmdb
# in modes hot, cold and batch (wgmma ones only on a compute capability 9.0 GPU, else
# SKIP). A cheat passes when its record's status is not "ok" and its error starts with one
# of the checks (stream, gate, repeat, tails, magnitude, inputs, timed, floor) and a colon
# (and its "check", when the line has one, is that name); a control passes when "ok".
# Prints a table (cheat | mode | status | check | error | verdict) and
#   adversarial: N refused as expected, M controls ok, F failed
# and exits 1 when any failed.
# Knobs: ADV_ONLY="name ..." (some cheats), ADV_MODES="hot ..." (some modes), ADV_DEVICE=N
# (eval --device N, and the GPU nvidia-smi asks), ADV_TIMEOUT (seconds per eval, 600).
# Compiled variants go to fasweep's variant cache ($FASWEEP_CACHE or its default), so a
# rerun on unchanged templates compiles nothing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${FASWEEP:?set FASWEEP to the fasweep binary}"
modes=${ADV_MODES:-hot cold batch}
limit=${ADV_TIMEOUT:-600}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fasweep-adv.XXXXXX") || exit 1
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "adversarial: no NVIDIA GPU here (nvidia-smi sees none); run this on a GPU machine" >&2
    exit 1
fi
dev_args=()
[ -n "${ADV_DEVICE:-}" ] && dev_args=(--device "$ADV_DEVICE")
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i "${ADV_DEVICE:-0}" 2>/dev/null |
    head -1 | tr -d ' \r')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${ADV_DEVICE:-0}" 2>/dev/null | head -1)
case $cc in [0-9]*.[0-9]*) ;; *) cc="" ;; esac

gen_args=(--out "$tmp/cheats")
# shellcheck disable=SC2206 # a list of names
[ -n "${ADV_ONLY:-}" ] && gen_args+=(--only $ADV_ONLY)
if ! python3 "$here/adversarial/make_cheats.py" "${gen_args[@]}" >"$tmp/gen.out" 2>&1; then
    cat "$tmp/gen.out"
    echo "adversarial: the cheat kernels could not be generated from the current templates"
    exit 1
fi
problem=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["problem"])' \
    "$tmp/cheats/manifest.json") || exit 1

# The verdict of one eval: status, check, error (cut), verdict, note; tab-separated.
cat >"$tmp/judge.py" <<'PY'
import json, re, sys
expect, rc, out, err = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
known = ["stream", "gate", "repeat", "tails", "magnitude", "inputs", "timed", "floor"]

def cut(s, n=100):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 3] + "..."

def say(status, check, error, verdict, note=""):
    print("\t".join([cut(status, 20) or "-", cut(check, 12) or "-", cut(error) or "-",
                     verdict, cut(note, 200)]))
    sys.exit(0)

def us(x):
    return "%.3f" % x if isinstance(x, (int, float)) else str(x)

rec = None
for line in open(out, errors="replace"):
    line = line.strip()
    if line.startswith("{"):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and "status" in d:
            rec = d
tail = " / ".join(l.strip() for l in open(err, errors="replace").read().splitlines()[-3:])
if rc in (124, 137):
    say("-", "-", tail, "FAIL", "eval ran past the time limit (killed, exit %d)" % rc)
if rec is None:
    say("-", "-", tail, "FAIL", "no JSON record line (exit %d)" % rc)
status = str(rec.get("status"))
error = str(rec.get("error") or "")
m = re.match(r"([a-z]+):", error)
prefix = m.group(1) if m and m.group(1) in known else ""
check = rec.get("check")
shown = str(check) if check else prefix
if expect == "ok":
    if status != "ok":
        say(status, shown, error, "FAIL", "a control was refused")
    if rc != 0:
        say(status, shown, error, "FAIL", "status ok but exit %d" % rc)
    say(status, shown, "median %s us" % us(rec.get("median_us")), "PASS")
if status == "ok":
    say(status, shown, "accepted: median %s us" % us(rec.get("median_us")), "FAIL",
        "a cheat was accepted")
if not prefix:
    say(status, shown, error, "FAIL", "refused, but the error names none of the checks")
if check and check != prefix:
    say(status, shown, error, "FAIL", "its check %r is not the error's %r" % (check, prefix))
if rc == 0:
    say(status, shown, error, "FAIL", "refused, but eval exited 0")
say(status, shown, error, "PASS")
PY

echo "adversarial: $gpu (compute capability ${cc:-unknown}), problem $problem, modes $modes"
echo "adversarial: FASWEEP=$FASWEEP; kernels from $(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print(", ".join("%s %s" % (t["path"], t["sha256"][:12]) for t in m["templates"].values()))' \
    "$tmp/cheats/manifest.json")"
fmt='%-26s | %-5s | %-11s | %-9s | %-100s | %s\n'
# shellcheck disable=SC2059
printf "$fmt" cheat mode status check error verdict
refused=0 controls=0 failed=0 skipped=0
mkdir -p "$tmp/runs"
while IFS=$'\t' read -r name file family config expect; do
    for mode in $modes; do
        if [ "$family" = wgmma ] && [ "$cc" != "9.0" ]; then
            # shellcheck disable=SC2059
            printf "$fmt" "$name" "$mode" - - \
                "needs compute capability 9.0 (sm_90a); this GPU: ${cc:-unknown}" SKIP
            skipped=$((skipped + 1))
            continue
        fi
        out=$tmp/runs/$name.$mode.out err=$tmp/runs/$name.$mode.err
        timeout -k 30 "$limit" "$FASWEEP" eval --kernel "$tmp/cheats/$file" --problem "$problem" \
            --config "$config" --mode "$mode" --json --store "$tmp/adv.lmdb" \
            ${dev_args[@]+"${dev_args[@]}"} </dev/null >"$out" 2>"$err"
        rc=$?
        IFS=$'\t' read -r status check error verdict note \
            < <(python3 "$tmp/judge.py" "$expect" "$rc" "$out" "$err" ||
                printf -- '-\t-\tjudge failed\tFAIL\t\n')
        # shellcheck disable=SC2059
        printf "$fmt" "$name" "$mode" "$status" "$check" "$error" \
            "$verdict${note:+ ($note)}"
        if [ "$verdict" = PASS ]; then
            if [ "$expect" = ok ]; then controls=$((controls + 1)); else refused=$((refused + 1)); fi
        else
            failed=$((failed + 1))
            tail -3 "$err" | sed 's/^/    stderr: /'
        fi
    done
done < <(python3 -c '
import json, sys
for n, c in json.load(open(sys.argv[1]))["cheats"].items():
    print("\t".join([n, c["file"], c["family"], c["config"], c["expect"]]))' \
    "$tmp/cheats/manifest.json")

[ "$skipped" -gt 0 ] && echo "adversarial: $skipped runs skipped (wgmma needs compute capability 9.0)"
echo "adversarial: $refused refused as expected, $controls controls ok, $failed failed"
[ "$failed" -eq 0 ] && [ $((refused + controls)) -gt 0 ]
