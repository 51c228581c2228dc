#!/usr/bin/env bash
# tests/slurm/run.sh FASWEEP [SPACE] - fasweep's sharding under a real Slurm.
#
# Starts a private one-node Slurm cluster on this host (munged, slurmctld and
# slurmd from Debian's slurm-wlm, all in a temporary folder, on free ports,
# no systemd), then runs `fasweep plan --json` as:
#   array     an array --array=0-3: each task finds its part from
#             SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN/_MAX (Slurm always
#             sets both, so the _COUNT fallback is left to tests/unit)
#   offset    an array --array=7-9: ids that do not start at 0 (id 7 is part 0)
#   explicit  an array --array=0-1 whose tasks each pass --shard I/4 twice:
#             --shard must win over what the environment says (I/2)
#   srun      srun -n 3: SLURM_PROCID/SLURM_NTASKS choose the part
# and checks, for each: the parts are disjoint, their union is exactly the
# unsharded plan (every point, accepted or not, with the same verdict), part
# I is what `fasweep plan --shard I/N` prints outside Slurm, and every task
# really ran under this cluster (its SLURM_* environment is recorded).
# Everything is torn down on exit, pass or fail. Exit 0 only if all pass.
#
# Needs root (slurmd launches jobs; munged and the daemons run as root here)
# and apt-get when slurm-wlm or munge is missing.
# Exit status: 0 pass, 1 a check failed, 2 bad arguments, 77 this machine
# cannot host the cluster (not root, packages not installable, a daemon does
# not come up): a skip, with the reason and the daemons' logs printed.
# FASWEEP_SLURM_STRICT=1 turns a skip into a failure (exit 1). SPACE defaults to
# spaces/h100.json (the largest grid). Compare like with like: points the
# binary lacks are `not_compiled` in both the sharded and unsharded plans.
# About 15-20 s once the packages are installed (2 cores).
# FASWEEP_SLURM_KEEP=1 keeps the temporary folder (config, logs, the tasks'
# plans and environments) for a look afterwards; the daemons still stop.
set -euo pipefail

usage="usage: tests/slurm/run.sh PATH/TO/fasweep [SPACE.json]"
fasweep=${1:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
space=${2:-$here/../../spaces/h100.json}
[ -x "$fasweep" ] || { echo "slurm: $fasweep is not an executable" >&2; exit 2; }
[ -r "$space" ] || { echo "slurm: cannot read space $space" >&2; exit 2; }
# Absolute paths: the jobs run in another working directory.
fasweep=$(cd "$(dirname "$fasweep")" && pwd)/$(basename "$fasweep")
space=$(cd "$(dirname "$space")" && pwd)/$(basename "$space")

# This machine cannot host the test cluster: a skip (77), or a failure when
# FASWEEP_SLURM_STRICT=1.
skip() {
    echo "slurm: SKIP: $*" >&2
    [ "${FASWEEP_SLURM_STRICT:-0}" = 1 ] && exit 1
    exit 77
}

if [ "$(id -u)" -ne 0 ]; then
    skip "needs root (slurmd must launch the jobs; run it in a container or with sudo)"
fi

# A Slurm job or a user's shell may have set these: they would change what
# fasweep (SLURM_*) and the submit commands (SBATCH_*, SRUN_*, SALLOC_*) do.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_' || true)

start=$(date +%s)

# ---- packages -------------------------------------------------------------
bash "$here/../../scripts/deps.sh" slurm ||
    skip "installing slurm-wlm, munge and python3 failed (scripts/deps.sh slurm)"

# ---- the private cluster's folder and teardown ------------------------------
# Under /tmp, not $TMPDIR: munged's and slurmstepd's Unix sockets live in it,
# and a socket path must stay under ~108 bytes.
tmp=$(mktemp -d /tmp/fasweep-slurm.XXXXXX)
out=$tmp/out
mkdir -p "$out" "$tmp/state" "$tmp/spool" "$tmp/munge" "$tmp/log"
munged_pid="" ctld_pid="" slurmd_pid=""

stop_pid() { # stop_pid PID: TERM, up to 10 s grace, then KILL
    local pid=$1 i
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

show_logs() {
    local f d
    for f in "$tmp"/log/* "$tmp"/*.stderr "$out"/*.out "$out"/*.err; do
        [ -s "$f" ] || continue
        # a daemon's stderr only when its log file was never written
        d=$(basename "$f" .stderr)
        [ "$d.stderr" != "$(basename "$f")" ] || [ ! -s "$tmp/log/$d.log" ] || continue
        echo "----- $f (last 40 lines)" >&2
        tail -n 40 "$f" >&2
    done
}

teardown() {
    local rc=$? i
    trap - EXIT INT TERM
    [ $rc -eq 0 ] || show_logs
    # Jobs still running (a failure or an interrupt) are cancelled first so
    # that no slurmstepd outlives the cluster; slurmstepd is not our child.
    if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
        timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    stop_pid "$slurmd_pid"
    stop_pid "$ctld_pid"
    stop_pid "$munged_pid"
    if [ "${FASWEEP_SLURM_KEEP:-0}" = 1 ]; then
        echo "slurm: kept $tmp" >&2
    else
        rm -rf "$tmp"
    fi
    exit $rc
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { echo "slurm: FAIL: $*" >&2; exit 1; }

# ---- munge ------------------------------------------------------------------
# A fresh key, a socket, log, pid and seed file all of our own, so the system
# munged (if any) is neither used nor disturbed. --force: munged refuses a
# socket folder that not every user can reach ("Socket is inaccessible:
# execute permissions for all required"); ours is private (0700) on purpose,
# only root talks to it.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$tmp/munge/munge.key"
chmod 0700 "$tmp/munge"
msock=$tmp/munge/munge.socket
# In the foreground munged logs to stderr (not to a --log-file).
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$msock" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
    >"$tmp/log/munged.log" 2>&1 &
munged_pid=$!
for ((i = 0; i < 100; i++)); do
    [ -S "$msock" ] && break
    kill -0 "$munged_pid" 2>/dev/null || skip "munged exited at start"
    sleep 0.1
done
munge -n -S "$msock" | unmunge -S "$msock" >/dev/null || skip "munge cannot encode/decode a credential"

# ---- slurm.conf -------------------------------------------------------------
# Two free TCP ports, so a Slurm already on this host (6817/6818) is no obstacle.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
# slurmctld only runs on the host SlurmctldHost names (it compares it with
# gethostname()), and slurmd is told its NodeName with -N; the addresses are
# given as 127.0.0.1 so that neither needs the host name to resolve.
node=$(hostname -s)
cpus=$(nproc)
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=fasweeptest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: a container seldom lets us create them, and nothing is limited.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
# A node that registers comes back to service by itself.
ReturnToService=2
# Take the node as configured even if hwloc sees the CPUs differently (a
# container's cpuset or quota); a mismatch would otherwise drain it.
SlurmdParameters=config_overrides
MailProg=/bin/true
MinJobAge=600
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

# ---- daemons ----------------------------------------------------------------
# In the foreground (-D) they also log to stderr: a copy of their log file,
# except for errors from before the log file is open (e.g. a bad slurm.conf).
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.stderr" 2>&1 &
ctld_pid=$!
slurmd -D -N "$node" -f "$SLURM_CONF" >"$tmp/slurmd.stderr" 2>&1 &
slurmd_pid=$!

# Up means: both daemons alive and sinfo shows the node idle.
deadline=$(($(date +%s) + 60))
state=""
while :; do
    kill -0 "$ctld_pid" 2>/dev/null || skip "slurmctld exited at start"
    kill -0 "$slurmd_pid" 2>/dev/null || skip "slurmd exited at start"
    state=$(timeout 5 sinfo -h -n "$node" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    [ "$(date +%s)" -lt "$deadline" ] || skip "node $node not idle after 60 s (state: '${state:-no answer}')"
    sleep 0.5
done
echo "slurm: cluster up on $node ($cpus CPUs) in $(($(date +%s) - start)) s" >&2

# ---- the job: one task's plan(s) and its Slurm environment --------------------
cat >"$tmp/task.sh" <<'EOF'
#!/usr/bin/env bash
# task.sh MODE FASWEEP SPACE OUT TAG - one Slurm task of the test.
set -euo pipefail
mode=$1 fasweep=$2 space=$3 out=$4 tag=$5
case $mode in
    srun) id=$SLURM_PROCID ;;
    *) id=$SLURM_ARRAY_TASK_ID ;;
esac
# The proof that this ran under the test's cluster, for the check.
env | grep '^SLURM_' | sort >"$out/$tag-$id.env"
case $mode in
    auto | srun)
        "$fasweep" plan --space "$space" --json >"$out/$tag-$id.json" 2>"$out/$tag-$id.err" ;;
    explicit)
        # two parts of 2 x (number of tasks): the environment alone says I/2
        n=$((2 * SLURM_ARRAY_TASK_COUNT))
        for k in 0 1; do
            i=$((2 * (id - SLURM_ARRAY_TASK_MIN) + k))
            "$fasweep" plan --space "$space" --json --shard "$i/$n" \
                >"$out/$tag-s$i.json" 2>"$out/$tag-s$i.err"
        done ;;
esac
EOF

# ---- the check ----------------------------------------------------------------
cat >"$tmp/check.py" <<'EOF'
"""check.py FASWEEP SPACE OUT TAG MODE IDS JOBID - one variant's results.

IDS: the task ids (array ids, or 0..n-1 for srun) as LO-HI. JOBID: the array
job id, or the srun job name. Prints one PASS line; exits 1 with the reason.
"""
import json
import os
import subprocess
import sys

fasweep, space, out, tag, mode, ids, jobid = sys.argv[1:]
lo, hi = (int(x) for x in ids.split("-"))
task_ids = list(range(lo, hi + 1))


def fail(msg):
    print(f"slurm: FAIL: {tag}: {msg}", file=sys.stderr)
    sys.exit(1)


def plan(*extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    r = subprocess.run([fasweep, "plan", "--space", space, "--json", *extra],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail(f"fasweep plan {' '.join(extra)} exited {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def key(p):
    return (p["problem"], p["config"])


# Which file holds which part.
if mode == "explicit":
    n = 2 * len(task_ids)
    files = {i: f"{tag}-s{i}.json" for i in range(n)}
else:
    n = len(task_ids)
    files = {t - lo: f"{tag}-{t}.json" for t in task_ids}

# 1. each task really ran as a task of this cluster's job
seen_jobs = set()
envs = sorted(f for f in os.listdir(out) if f.startswith(tag + "-") and f.endswith(".env"))
if envs != sorted(f"{tag}-{t}.env" for t in task_ids):
    fail(f"tasks that ran: {envs}, expected ids {task_ids}")
for t in task_ids:
    env = {}
    with open(os.path.join(out, f"{tag}-{t}.env")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            env[k] = v
    want = {"SLURM_CLUSTER_NAME": "fasweeptest", "SLURM_JOB_PARTITION": "test"}
    if mode == "srun":
        want.update(SLURM_PROCID=str(t), SLURM_NTASKS=str(n), SLURM_JOB_NAME=jobid)
        if "SLURM_STEP_ID" not in env:
            fail(f"task {t}: no SLURM_STEP_ID: not an srun step")
    else:
        want.update(SLURM_ARRAY_JOB_ID=jobid, SLURM_ARRAY_TASK_ID=str(t),
                    SLURM_ARRAY_TASK_MIN=str(lo), SLURM_ARRAY_TASK_MAX=str(hi))
    for k, v in want.items():
        if env.get(k) != v:
            fail(f"task {t}: {k}={env.get(k)!r}, expected {v!r}")
    if "SLURM_JOB_ID" not in env:
        fail(f"task {t}: no SLURM_JOB_ID")
    seen_jobs.add(env["SLURM_JOB_ID"])
# array tasks are separate jobs; srun tasks are steps of one job
if len(seen_jobs) != (1 if mode == "srun" else len(task_ids)):
    fail(f"job ids {sorted(seen_jobs)} for tasks {task_ids}")

# 2. the parts against the whole plan and against --shard I/N outside Slurm
whole = plan()
by_key = {key(p): p for p in whole["points"]}
if len(by_key) != len(whole["points"]):
    fail("the unsharded plan lists a point twice")
union = {}
for i in range(n):
    part = load(os.path.join(out, files[i]))
    if part["hash"] != whole["hash"]:
        fail(f"part {i}: space hash {part['hash']} != {whole['hash']}")
    ref = plan("--shard", f"{i}/{n}")
    if part["points"] != ref["points"] or part["counts"] != ref["counts"]:
        fail(f"part {i} ({files[i]}) differs from `fasweep plan --shard {i}/{n}`")
    for p in part["points"]:
        k = key(p)
        if k in union:
            fail(f"point {k} is in part {union[k][0]} and part {i}")
        if by_key.get(k) != p:
            fail(f"point {k} of part {i} is not the unsharded plan's {by_key.get(k)}")
        union[k] = (i, p)
    if whole["counts"]["accepted"] >= n and part["counts"]["accepted"] == 0:
        fail(f"part {i} got no accepted point (unbalanced split)")
if set(union) != set(by_key):
    fail(f"union of parts has {len(union)} points, the plan {len(by_key)}")
acc_union = sorted(k for k, (_, p) in union.items() if p["accepted"])
acc_whole = sorted(k for k, p in by_key.items() if p["accepted"])
if acc_union != acc_whole:
    fail("accepted points of the parts != accepted points of the plan")

what = {"auto": f"{n}-task array {lo}-{hi}",
        "explicit": f"{len(task_ids)}-task array, --shard I/{n}",
        "srun": f"srun -n {n}"}[mode]
print(f"slurm: {tag}: {what}, {len(by_key)} points ({len(acc_whole)} accepted), "
      f"union == whole, disjoint, part I == --shard I/{n}: PASS")
EOF

# ---- submit -------------------------------------------------------------------
# The three arrays go in together (they share the node's CPUs) and are polled.
submit() { # submit TAG MODE IDS: prints the array job id
    sbatch --parsable --array="$3" --job-name="fasweep-$1" --chdir="$out" \
        --output="$out/$1-%a.out" --ntasks=1 --cpus-per-task=1 \
        "$tmp/task.sh" "$2" "$fasweep" "$space" "$out" "$1"
}
declare -A job
job[array]=$(submit array auto 0-3)
job[offset]=$(submit offset auto 7-9)
job[explicit]=$(submit explicit explicit 0-1)
ids=$(IFS=,; echo "${job[*]}")

# Done when every task is in a final state; then all must be COMPLETED (exit 0).
deadline=$(($(date +%s) + 120))
while :; do
    states=$(squeue -h -t all -j "$ids" -o '%i %T' 2>/dev/null || true)
    if [ -n "$states" ] && ! grep -qvE ' (COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)$' <<<"$states"; then
        break
    fi
    [ "$(date +%s)" -lt "$deadline" ] || fail "arrays not done after 120 s: $(tr '\n' ' ' <<<"$states")"
    sleep 0.5
done
ntasks=$(grep -c ' COMPLETED$' <<<"$states" || true)
[ "$ntasks" -eq 9 ] || fail "expected 9 COMPLETED array tasks, got: $(tr '\n' ' ' <<<"$states")"

# srun from outside any allocation: it gets one and starts 3 tasks as one step.
# --overcommit: 3 tasks may share fewer CPUs (a 2-core CI runner).
timeout 90 srun --ntasks=3 --overcommit --job-name=fasweep-srun --chdir="$out" \
    --output="$out/srun-%t.out" \
    bash "$tmp/task.sh" srun "$fasweep" "$space" "$out" srun ||
    fail "srun -n 3 failed (exit $?)"

# ---- check --------------------------------------------------------------------
python3 "$tmp/check.py" "$fasweep" "$space" "$out" array auto 0-3 "${job[array]}"
python3 "$tmp/check.py" "$fasweep" "$space" "$out" offset auto 7-9 "${job[offset]}"
python3 "$tmp/check.py" "$fasweep" "$space" "$out" explicit explicit 0-1 "${job[explicit]}"
python3 "$tmp/check.py" "$fasweep" "$space" "$out" srun srun 0-2 fasweep-srun
echo "slurm: $(basename "$space"): 3 arrays (9 tasks) + srun -n 3 under a real slurmctld/slurmd," \
    "union == whole, disjoint: PASS ($(($(date +%s) - start)) s)"
