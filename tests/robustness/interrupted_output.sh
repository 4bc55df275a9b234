#!/usr/bin/env bash
# SIGINT or SIGTERM while `run --trace` writes a large trace leaves neither the trace file nor a
# temporary behind (report/writers/output_file.hpp), and a file of that name that existed before is
# left as it was. The signal is sent once the temporary exists, i.e. while the trace is written.
# Usage: tests/robustness/interrupted_output.sh TRNSIM
set -uo pipefail
trnsim=$(realpath "$1")
cd "$(dirname "$0")/../.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0

for sig in INT TERM; do
  dir=$scratch/$sig
  mkdir -p "$dir"
  # All 4096 ranks of the 405B example: a trace of about 140 MB, seconds to write.
  [[ $sig == TERM ]] && echo "old content" > "$dir/trace.json"
  "$trnsim" --quiet run configs/examples/llama3.1-405b-trn2u.json --trace "$dir/trace.json" --trace-ranks 0-4095 \
    > /dev/null 2>&1 &
  pid=$!
  seen=0
  for _ in $(seq 1 6000); do  # up to 10 minutes for the simulation to finish and the write to start
    if compgen -G "$dir/.trace.json.tmp-*" > /dev/null; then seen=1; break; fi
    kill -0 $pid 2> /dev/null || break
    sleep 0.1
  done
  if [[ $seen -eq 0 ]]; then
    echo "FAIL ($sig): never saw the temporary trace file being written"
    fail=1
    wait $pid
    continue
  fi
  kill -$sig $pid
  wait $pid
  code=$?
  left=$(ls -A "$dir")
  expected=""
  [[ $sig == TERM ]] && expected="trace.json"
  if [[ $left != "$expected" ]]; then
    echo "FAIL ($sig): left behind: $left"
    fail=1
  elif [[ $sig == TERM && $(cat "$dir/trace.json") != "old content" ]]; then
    echo "FAIL ($sig): the existing trace.json was changed"
    fail=1
  fi
  # 128 + signal number: the process ended by the signal, as the handler re-raises it.
  want=$((128 + $(kill -l $sig)))
  if [[ $code -ne $want ]]; then
    echo "FAIL ($sig): exit status $code, expected $want (ended by the signal)"
    fail=1
  fi
  echo "SIG$sig during --trace: exit $code, left in the directory: ${left:-nothing}"
done
exit $fail
