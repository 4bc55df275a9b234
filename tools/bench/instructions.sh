#!/usr/bin/env bash
# Instruction counts (valgrind's callgrind), which the load of a shared machine does not move,
# where wall times here vary by a third between runs of one binary. For issue 12's two targets:
# the llama3.1-405b-trn2u step at 1,024 and 65,536 chips (analytic, --no-fast-forward, the sizes
# of tools/bench/scale_replicas.sh) and their ratio; the instructions per plan of a one-thread
# sweep (tools/bench/plan_rate.sh's plans: two plans' count minus one plan's). Compare builds
# with it; quote wall times from the other scripts. A benchmark, not a test: nothing is asserted.
# Needs valgrind (apt-get install valgrind); about 4 minutes.
#   tools/bench/instructions.sh [TRNSIM]
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/../.."
trnsim=${1:-build/release/trnsim}
if [[ "$trnsim" != /* && ! -x "$trnsim" ]]; then trnsim=$caller/$trnsim; fi
command -v valgrind > /dev/null || { echo "tools/bench/instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }

count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$trnsim" -q "$@" 2>&1 > /dev/null |
    awk '/Collected :/ {print $NF}'
}
step() {  # instances of 16 chips; dp and the batch as scale_replicas.sh sets them
  local dp=$(($1 * 16 * 4 / 256))
  count run configs/examples/llama3.1-405b-trn2u.json --network analytic --no-fast-forward \
    --set cluster.count="$1" --set parallelism.dp=$dp --set training.global_batch=$((dp * 128))
}
small=$(step 64)
large=$(step 4096)
printf '%-44s %15s\n' case instructions
printf '%-44s %15s\n' "405B step, 1,024 chips" "$small"
printf '%-44s %15s\n' "405B step, 65,536 chips" "$large"
awk -v a="$small" -v b="$large" 'BEGIN { printf "%-44s %14.2fx\n", "65,536 / 1,024 chips", b / a }'
for c in "gpt3-175b-a100 5 5.01" "llama3.1-405b-trn2u 2.3 2.31"; do
  read -r name v1 v2 <<<"$c"
  one=$(count sweep "configs/examples/$name.json" --vary "cluster.calibration.task_overhead_us=$v1" --threads 1 --top 1)
  two=$(count sweep "configs/examples/$name.json" --vary "cluster.calibration.task_overhead_us=$v1,$v2" --threads 1 --top 1)
  printf '%-44s %15s\n' "per plan in a sweep, $name" "$((two - one))"
done
