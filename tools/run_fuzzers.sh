#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz (built by `cmake --preset fuzz && cmake --build
# --preset fuzz`) for SECONDS each (default 1800), two at a time at the lowest priority, each on its
# corpus under tests/fuzz/corpus/, and prints per harness the executions and the findings
# (crash-*, timeout-*, leak-*, oom-* files, written to build/fuzz/findings/HARNESS/). A harness with
# a dictionary (tests/fuzz/HARNESS.dict: its format's keys and names) gets it.
# Usage: tools/run_fuzzers.sh [SECONDS] [HARNESS...]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-1800}
shift || true
harnesses=("$@")
[[ ${#harnesses[@]} -eq 0 ]] && harnesses=(experiment preset set trace chakra)
run_one() {
  local h=$1 out=build/fuzz/findings/$1
  mkdir -p "$out"
  local start=$SECONDS dict=()
  [[ -f tests/fuzz/$h.dict ]] && dict=(-dict="tests/fuzz/$h.dict")
  nice -n 19 "build/fuzz/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 "${dict[@]}" \
    -print_final_stats=1 -artifact_prefix="$out/" "tests/fuzz/corpus/$h" > "$out/log.txt" 2>&1
  local execs
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log.txt" | grep -o '[0-9]*$')
  echo "fuzz_$h: $((SECONDS - start)) s of ${seconds}, ${execs:-?} executions, findings: $(ls "$out" | grep -cv '^log.txt$')"
}
running=0
for h in "${harnesses[@]}"; do
  run_one "$h" &
  running=$((running + 1))
  if [[ $running -ge 2 ]]; then wait -n; running=$((running - 1)); fi
done
wait
