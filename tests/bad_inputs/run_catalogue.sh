#!/usr/bin/env bash
# Runs every case of catalogue.txt (see its header) against TRNSIM and checks: exit 2, nothing on
# stdout, exactly one line on stderr, starting "error: " and holding each needle. Exit 3 (internal
# error), a signal or any other answer fails the case. Prints one line per failure and a summary;
# exits 1 when a case failed. Usage: tests/bad_inputs/run_catalogue.sh TRNSIM [FILTER]
set -uo pipefail
trnsim=$(realpath "$1")
filter=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

scratch=$(mktemp -d)
trap 'chmod -R u+rwx "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
# Presets: the bundled ones with the bad ones of presets/ laid over them.
cp -r configs "$scratch/configs"
for kind in hardware models software collectives; do cp "$here/presets/$kind/"*.json "$scratch/configs/$kind/"; done
export TRNSIM_CONFIG_DIR=$scratch/configs
X=tests/bad_inputs/experiments
R=tests/bad_inputs/traces
C=tests/bad_inputs/chakra  # Chakra traces: one directory per case, experiment.json and its t.<rank>.et/.json
T=configs/examples/tiny-trn1.json
OUT=$scratch/out
mkdir -p "$OUT/empty-dir"
CSV=$OUT/other.csv
printf 'name,value\nx,1\n' > "$CSV"

cases=0 failed=0
check() {  # NAME NEEDLES ARGS...
  local name=$1 needles=$2
  shift 2
  cases=$((cases + 1))
  local out err code
  out=$(timeout 120 "$trnsim" "$@" 2>"$scratch/stderr")
  code=$?
  err=$(cat "$scratch/stderr")
  local why=""
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  if [[ $code -ne 2 ]]; then why="exit $code, expected 2"
  elif [[ -n $out ]]; then why="wrote to stdout: ${out:0:200}"
  elif [[ $lines -ne 1 ]]; then why="$lines lines on stderr, expected 1"
  elif [[ $err != "error: "* ]]; then why="stderr does not start with 'error: '"
  else
    local needle
    IFS=';' read -r -a list <<<"$needles"
    for needle in "${list[@]}"; do
      needle=$(echo "$needle" | sed 's/^ *//; s/ *$//')
      [[ -z $needle ]] && continue
      if [[ $err != *"$needle"* ]]; then why="message lacks \"$needle\""; break; fi
    done
  fi
  if [[ -n $why ]]; then
    failed=$((failed + 1))
    echo "FAIL [$name] trnsim $*: $why"
    echo "     stderr: ${err:0:400}"
  fi
}

while IFS= read -r line; do
  [[ -z ${line// } || $line == \#* ]] && continue
  IFS='|' read -r name args needles <<<"$line"
  name=$(echo "$name" | sed 's/ *$//')
  [[ -n $filter && $name != *"$filter"* ]] && continue
  # The arguments are shell words with $X, $R, $C, $T, $OUT and $CSV expanded.
  eval "argv=($args)"
  check "$name" "$needles" "${argv[@]}"
done < "$here/catalogue.txt"

# An unreadable file: root reads any file whatever its mode, so the case only means something
# for another user.
if [[ -z $filter || "unreadable file" == *"$filter"* ]]; then
  if [[ $(id -u) -eq 0 ]]; then
    echo "skipped [unreadable file]: running as root, which reads a file of mode 000 all the same"
  else
    cp "$T" "$OUT/unreadable.json" && chmod 000 "$OUT/unreadable.json"
    check "unreadable file" "unreadable.json;cannot open" run "$OUT/unreadable.json"
  fi
fi

echo "bad-input catalogue: $cases cases, $((cases - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
