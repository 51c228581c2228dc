#!/usr/bin/env bash
# submit.sh SPACE.json OUT_DIR [N] - submits an N-task sweep array (default 8)
# and the merge job that runs once every task has succeeded.
set -euo pipefail
space=${1:?usage: submit.sh SPACE.json OUT_DIR [N]}
out=${2:?usage: submit.sh SPACE.json OUT_DIR [N]}
n=${3:-8}
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --array=0-$((n - 1)) "$here/sweep.sbatch" "$space" "$out")
merge=$(sbatch --parsable --dependency=afterok:"$array" "$here/merge.sbatch" "$out")
echo "submitted sweep array $array ($n tasks) and merge job $merge; results: $out/results.lmdb"
