#!/bin/sh
# A trnsim sweep as a Slurm job array: each array task runs one deterministic shard, and a last job
# joins them. `trnsim merge` then prints and writes exactly what the unsharded sweep would.
#
#   sbatch --array=0-15 tools/sweep-slurm.sh EXPERIMENT.json OUTDIR --tp 4,8,16,32 --pp 1,2,4,8
#   # when the array has finished (or: sbatch --dependency=afterok:JOBID ...):
#   build/release/trnsim merge OUTDIR/part-*.json --csv OUTDIR/sweep.csv
#
# Every task must see the same experiment file, configs/ and trnsim build (a shared file system).
# Each task uses the cores Slurm gives it (--threads follows SLURM_CPUS_PER_TASK when it is set).
set -eu
if [ $# -lt 2 ] || [ -z "${SLURM_ARRAY_TASK_ID:-}" ] || [ -z "${SLURM_ARRAY_TASK_COUNT:-}" ]; then
  echo "usage: sbatch --array=0-(N-1) $0 EXPERIMENT.json OUTDIR [trnsim sweep options...]" >&2
  exit 2
fi
experiment=$1
outdir=$2
shift 2
trnsim=${TRNSIM:-build/release/trnsim}
mkdir -p "$outdir"
threads=${SLURM_CPUS_PER_TASK:-1}
# Array ids need not start at 0: the shard is the task's position in the array.
shard=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
exec "$trnsim" -q sweep "$experiment" "$@" --threads "$threads" \
  --shard "$shard/$SLURM_ARRAY_TASK_COUNT" --json "$outdir/part-$shard.json" >"$outdir/part-$shard.txt"
