# shellcheck shell=bash
# queue.sh - runs items side by side, each queue taking the next item left (sourced by
# tests/cli/run.sh and tests/gpu/run.sh; bash).
#
#   queue_run QUEUES LOGDIR FN ITEM...
#
# QUEUES queues (subshells) take the items in the order given, each the next one not yet taken
# (a counter under a lock, so a queue that finished early takes more), and run
# `FN QUEUE ITEM` (QUEUE: 0 .. QUEUES-1) with its output in a file. As soon as an item ends its
# output is printed whole (under a lock: never interleaved with another's) after a line
# "== ITEM (NAME, N s)" (NAME: the caller's queue_names[Q] when set, else "queue Q"), then
# "PASS ITEM" or "FAIL ITEM (exit S)". Sets queue_pass and
# queue_fail (the counts); an item whose status was never written (its queue was killed)
# counts as failed. LOGDIR must be an empty folder the caller removes.
queue_run() {
    local queues=$1 logs=$2 fn=$3
    shift 3
    local items=("$@") q i
    echo 0 >"$logs/next"
    for ((q = 0; q < queues; q++)); do
        (
            while i=$(queue_next "$logs" ${#items[@]}) && [ -n "$i" ]; do
                local t0=$SECONDS rc=0
                "$fn" "$q" "${items[$i]}" >"$logs/$i" 2>&1 || rc=$?
                echo $rc >"$logs/$i.rc"
                {
                    flock 8
                    echo "== ${items[$i]} (${queue_names[$q]:-queue $q}, $((SECONDS - t0)) s)"
                    cat "$logs/$i"
                    if [ $rc -eq 0 ]; then echo "PASS ${items[$i]}"; else echo "FAIL ${items[$i]} (exit $rc)"; fi
                } 8>>"$logs/lock"
            done
        ) &
    done
    wait
    queue_pass=0 queue_fail=0
    for i in "${!items[@]}"; do
        if [ "$(cat "$logs/$i.rc" 2>/dev/null)" = 0 ]; then
            queue_pass=$((queue_pass + 1))
        else
            queue_fail=$((queue_fail + 1))
        fi
    done
}

# The next item's index (of n), or nothing when every item is taken.
queue_next() { # logdir n
    {
        flock 9
        local i
        i=$(cat "$1/next")
        if [ "$i" -lt "$2" ]; then
            echo $((i + 1)) >"$1/next"
            echo "$i"
        fi
    } 9>>"$1/lock.next"
}
