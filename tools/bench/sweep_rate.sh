#!/usr/bin/env bash
# Plans per minute of `trnsim sweep` (issue 12's target: 3,000 on this project's 2 cores):
# llama3.1-70b on 64 trn2.48xlarge (4,096 ranks), analytic network, a grid of 80 plans
# (tp 4..64 x pp 1..16 x micro-batch 1,2 x recompute selective,full). Prints the plan counts and
# the median wall time of --reps runs. A benchmark, not a test: nothing is asserted.
#   tools/bench/sweep_rate.sh [TRNSIM] [--reps N] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/../.."
trnsim=build/release/trnsim
reps=5
threads=$(nproc)
while (($#)); do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -*) echo "usage: tools/bench/sweep_rate.sh [TRNSIM] [--reps N] [--threads N]" >&2; exit 2 ;;
    *) trnsim=$1; shift ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/experiment.json" <<'JSON'
{"name": "llama3.1-70b on 64 trn2.48xlarge", "cluster": {"instance": "trn2.48xlarge", "count": 64},
 "model": "llama3.1-70b",
 "training": {"seq_len": 8192, "global_batch": 1024, "dtype": "bf16", "optimizer": "adamw"},
 "parallelism": {"tp": 16, "pp": 4, "dp": 64, "sequence_parallel": true, "zero": 1}}
JSON
args=(-q sweep "$tmp/experiment.json" --tp 4,8,16,32,64 --pp 1,2,4,16 --micro-batch 1,2 --recompute selective,full
      --threads "$threads")
"$trnsim" "${args[@]}" | sed -n 2p
times=()
for ((i = 0; i < reps; i++)); do
  start=$(date +%s.%N)
  "$trnsim" "${args[@]}" >/dev/null
  end=$(date +%s.%N)
  times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((reps + 1) / 2))p")
echo "wall, median of $reps: $median s for 80 plans on $threads threads: $(awk -v t="$median" 'BEGIN { printf "%.0f", 80 * 60 / t }') plans/min"
