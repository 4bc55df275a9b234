#!/usr/bin/env bash
# Determinism: the same command twice writes byte-identical JSON, CSV, HTML and trace files; a
# sweep writes the same files with --threads 1 and --threads 2; and a run under a locale with a
# decimal comma (de_DE.UTF-8) writes the same files as under C; a run on 4 KiB pages
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=0) writes the same files as on the huge pages trnsim asks
# glibc for by default (src/cli/main.cpp), for which `trnsim -v` logs its restart. The locale is
# built into a scratch directory with localedef (LOCPATH), so the test needs no system locale;
# without localedef or glibc's de_DE source the locale part is skipped, saying why.
# Usage: tests/robustness/determinism.sh TRNSIM
set -euo pipefail
trnsim=$(realpath "$1")
cd "$(dirname "$0")/../.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0

# run_all DIR [ENV...]: the outputs of `run` on two examples and of a small sweep into DIR.
run_all() {
  local dir=$1
  shift
  mkdir -p "$dir"
  for ex in tiny-trn1 llama3.1-8b-trn2; do
    env "$@" "$trnsim" --quiet run "configs/examples/$ex.json" --json "$dir/$ex.json" --csv "$dir/$ex.csv" \
      --html "$dir/$ex.html" --trace "$dir/$ex.trace.json" > "$dir/$ex.txt"
    # The text report's wall-clock line is the one output that is not deterministic.
    grep -v ' wall' "$dir/$ex.txt" > "$dir/$ex.text" && rm "$dir/$ex.txt"
  done
  env "$@" "$trnsim" --quiet sweep configs/examples/tiny-trn1.json --tp 1,2 --recompute none,full --threads 2 \
    --csv "$dir/sweep.csv" --json "$dir/sweep.json" --html "$dir/sweep.html" > /dev/null
}

# same A B WHAT: every file of A is in B with the same bytes.
same() {
  local n=0
  for f in "$1"/*; do
    n=$((n + 1))
    if ! cmp -s "$f" "$2/$(basename "$f")"; then
      echo "FAIL ($3): $(basename "$f") differs"
      fail=1
    fi
  done
  echo "$3: $n files compared"
}

run_all "$scratch/a" LC_ALL=C
run_all "$scratch/b" LC_ALL=C
same "$scratch/a" "$scratch/b" "same command twice"

run_all "$scratch/small-pages" LC_ALL=C GLIBC_TUNABLES=glibc.malloc.hugetlb=0
same "$scratch/a" "$scratch/small-pages" "huge pages (the default) and 4 KiB pages"
# The default really restarts onto huge pages, once, and only then: `-v` logs the restart and
# its tunables (src/cli/main.cpp). Checked with a clean environment (no tunables, no preload), then
# with the tunable turned off and with LD_PRELOAD set, where it must not restart.
restart_log() { env -u GLIBC_TUNABLES -u LD_PRELOAD -u TRNSIM_HUGE_PAGES_RESTARTED "$@" "$trnsim" -v presets 2>&1 > /dev/null | grep 'restarted with' || true; }
log=$(restart_log)
if [[ $log == *"GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "* ]]; then
  echo "huge pages: $log"
else
  echo "FAIL: trnsim -v did not log its restart with glibc.malloc.hugetlb=1 (got: '$log')"
  fail=1
fi
for setting in GLIBC_TUNABLES=glibc.malloc.hugetlb=0 LD_PRELOAD=; do
  log=$(restart_log "$setting")
  if [[ -n $log ]]; then
    echo "FAIL: with $setting trnsim still restarted: $log"
    fail=1
  fi
done

mkdir -p "$scratch/t1" "$scratch/t2"
for t in 1 2; do
  "$trnsim" --quiet sweep configs/examples/llama3.1-8b-trn2.json --tp 1,2,4,8 --pp 1,2 --recompute none,selective,full \
    --threads $t --csv "$scratch/t$t/sweep.csv" --json "$scratch/t$t/sweep.json" \
    --html "$scratch/t$t/sweep.html" > /dev/null
done
same "$scratch/t1" "$scratch/t2" "sweep --threads 1 and --threads 2"

mkdir -p "$scratch/locale"
if command -v localedef > /dev/null && localedef -i de_DE -f UTF-8 "$scratch/locale/de_DE.UTF-8" 2> /dev/null; then
  # The locale must be in effect for a program that asks for it (coreutils' printf does).
  if [[ $(LOCPATH=$scratch/locale LC_ALL=de_DE.UTF-8 /usr/bin/printf '%.1f' 1.5) != "1,5" ]]; then
    echo "FAIL: the generated de_DE.UTF-8 locale does not print a decimal comma"
    fail=1
  fi
  run_all "$scratch/de" LOCPATH="$scratch/locale" LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8
  same "$scratch/a" "$scratch/de" "C and de_DE.UTF-8 (decimal comma)"
else
  echo "skipped the locale part: localedef or glibc's de_DE locale source is missing (Debian: package locales)"
fi
exit $fail
