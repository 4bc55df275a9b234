#!/usr/bin/env bash
# Wall time per plan inside `trnsim sweep` (issue 12's "plan in milliseconds": gpt3-175b-a100 under
# 20 ms, llama3.1-405b-trn2u under 50 ms): each example swept over --plans near-identical plans
# (cluster.calibration.task_overhead_us varied in steps of 0.01 us from the preset's value, so
# every plan is simulated and none is a copy of another) on one thread, --top 1. Prints per file
# the plan count, the median wall time of --reps runs, plans per second and ms per plan (the
# median run's wall divided by the plans: load, parse and fabric are shared by the sweep's plans),
# and the median CPU time (user + system) per plan, steadier than wall on a shared machine.
# A benchmark, not a test: nothing is asserted.
#   tools/bench/plan_rate.sh [TRNSIM] [--reps N] [--plans N] [--threads N]
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/../.."
trnsim=build/release/trnsim
reps=5
plans=20
threads=1
while (($#)); do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --plans) plans=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -*) echo "usage: tools/bench/plan_rate.sh [TRNSIM] [--reps N] [--plans N] [--threads N]" >&2; exit 2 ;;
    *) trnsim=$1; shift ;;
  esac
done
if [[ "$trnsim" != /* && ! -x "$trnsim" ]]; then trnsim=$caller/$trnsim; fi

# file and the preset's task_overhead_us (the first swept value)
cases=("gpt3-175b-a100 5" "llama3.1-405b-trn2u 2.3")
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
median() { sort -g | sed -n "$(((reps + 1) / 2))p"; }
printf '%-22s %6s %10s %10s %10s %12s\n' example plans wall_s plans/s ms/plan cpu_ms/plan
for c in "${cases[@]}"; do
  read -r name base <<<"$c"
  values=$(awk -v b="$base" -v n="$plans" 'BEGIN { for (i = 0; i < n; ++i) printf "%s%.2f", (i ? "," : ""), b + i / 100 }')
  args=(-q sweep "configs/examples/$name.json" --vary "cluster.calibration.task_overhead_us=$values"
        --threads "$threads" --top 1)
  walls=() cpus=()
  for ((i = 0; i < reps; i++)); do
    /usr/bin/time -f '%e %U %S' -o "$tmp" "$trnsim" "${args[@]}" >/dev/null
    read -r wall user sys < "$tmp"
    walls+=("$wall")
    cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')")
  done
  wall=$(printf '%s\n' "${walls[@]}" | median)
  cpu=$(printf '%s\n' "${cpus[@]}" | median)
  awk -v n="$name" -v p="$plans" -v t="$wall" -v c="$cpu" \
    'BEGIN { printf "%-22s %6d %10.3f %10.1f %10.1f %12.1f\n", n, p, t, p / t, 1000 * t / p, 1000 * c / p }'
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $threads thread(s), median of $reps runs"
