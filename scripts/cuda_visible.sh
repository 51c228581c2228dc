# cuda_visible.sh - sourced, not run: cuda_visible LIST prints the GPUs CUDA will see, one
# entry a line, given LIST, nvidia-smi -L's output. CUDA_VISIBLE_DEVICES read as CUDA reads
# it (sweep/visible.c, visible_count: the same rule, but a UUID is checked here against
# nvidia-smi's): unset, every GPU's ordinal; set, its entries (blanks around them trimmed)
# up to the first that names no GPU (an ordinal not below the count, a UUID no GPU's starts
# with, or other text). Used by scripts/bench_devices.sh and tests/gpu/run.sh.
cuda_visible() {
    local gpus=$1 n uuids e ok u
    local -a ents
    n=$(grep -c '^GPU' <<<"$gpus" || true)
    if [ -z "${CUDA_VISIBLE_DEVICES+set}" ]; then
        [ "$n" -lt 1 ] || seq 0 $((n - 1))
        return 0
    fi
    uuids=$(grep -oE '\(UUID: [^)]+\)' <<<"$gpus" | sed 's/^(UUID: //; s/)$//' || true)
    IFS=',' read -ra ents <<<"$CUDA_VISIBLE_DEVICES"
    for e in "${ents[@]}"; do
        e=$(sed 's/^[[:blank:]]*//; s/[[:blank:]]*$//' <<<"$e")
        ok=0
        if [[ $e =~ ^[0-9]{1,9}$ ]]; then
            [ $((10#$e)) -lt "$n" ] && ok=1
        elif [[ $e == GPU-?* || $e == MIG-?* ]]; then
            while IFS= read -r u; do [[ -n $u && $u == "$e"* ]] && ok=1; done <<<"$uuids"
        fi
        [ $ok -eq 1 ] || break
        printf '%s\n' "$e"
    done
}
