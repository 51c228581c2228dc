# shellcheck shell=bash
# queue.sh - runs items side by side, each queue taking the next item left (sourced by
# tests/cli/run.sh, tests/evolve/run.sh and tests/gpu/run.sh; bash).
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
    # (locals named queue_*: FN sees them, bash's scope being dynamic, and must not find its
    # caller's variables shadowed)
    local queue_n=$1 queue_logs=$2 queue_fn=$3
    shift 3
    local queue_items=("$@") queue_q queue_i
    echo 0 >"$queue_logs/next"
    for ((queue_q = 0; queue_q < queue_n; queue_q++)); do
        (
            while queue_i=$(queue_next "$queue_logs" ${#queue_items[@]}) && [ -n "$queue_i" ]; do
                local queue_t0=$SECONDS queue_rc=0 queue_item=${queue_items[$queue_i]}
                "$queue_fn" "$queue_q" "$queue_item" >"$queue_logs/$queue_i" 2>&1 || queue_rc=$?
                echo $queue_rc >"$queue_logs/$queue_i.rc"
                {
                    flock 8
                    echo "== $queue_item (${queue_names[$queue_q]:-queue $queue_q}, $((SECONDS - queue_t0)) s)"
                    cat "$queue_logs/$queue_i"
                    if [ $queue_rc -eq 0 ]; then
                        echo "PASS $queue_item"
                    else
                        echo "FAIL $queue_item (exit $queue_rc)"
                    fi
                } 8>>"$queue_logs/lock"
            done
        ) &
    done
    wait
    queue_pass=0 queue_fail=0
    for queue_i in "${!queue_items[@]}"; do
        if [ "$(cat "$queue_logs/$queue_i.rc" 2>/dev/null)" = 0 ]; then
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
