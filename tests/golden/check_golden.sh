#!/bin/sh
# A regression guard, not a measure of accuracy: runs every configs/examples/*.json and compares
# its report with tests/golden/<same name> through `trnsim compare` at tolerance 0, both ways
# round. compare alone fails only a worsening (slower step, ...); swapping the two reports makes an
# improvement a failure too, so any change of a compared metric (step time, throughput, MFU, peak
# memory, breakdown parts) fails. The other fields of the report are not compared (the report holds
# no wall-clock figure and no path). An example without a golden report, or a golden report without
# its example, fails too. A deliberate change regenerates them with tools/update-golden.sh.
#
# Usage: tests/golden/check_golden.sh [TRNSIM]   (from the repository root; default build/release/trnsim)
set -u
trnsim=${1:-build/release/trnsim}
fresh=$(mktemp "${TMPDIR:-/tmp}/trnsim-golden-XXXXXX")
trap 'rm -f "$fresh"' EXIT
failed=0
for example in configs/examples/*.json; do
  name=${example##*/}
  golden=tests/golden/$name
  if [ ! -f "$golden" ]; then
    echo "FAIL $example: no $golden (run tools/update-golden.sh)"
    failed=1
    continue
  fi
  if ! "$trnsim" -q run "$example" --json "$fresh" >/dev/null; then
    echo "FAIL $example: trnsim run failed"
    failed=1
    continue
  fi
  # The forward table is printed on a failure only; the swapped one only decides.
  if out=$("$trnsim" compare "$fresh" "$golden" --tolerance 0 2>&1) &&
     "$trnsim" compare "$golden" "$fresh" --tolerance 0 >/dev/null 2>&1; then
    echo "ok   $example"
  else
    printf 'FAIL %s: its report differs from %s (at tolerance 0 both ways, an improvement fails too)\n%s\n' "$example" "$golden" "$out"
    failed=1
  fi
done
for golden in tests/golden/*.json; do
  [ -f "configs/examples/${golden##*/}" ] || { echo "FAIL $golden: no configs/examples/${golden##*/}"; failed=1; }
done
if [ "$failed" -ne 0 ]; then
  echo "golden reports differ: if the change is deliberate, run tools/update-golden.sh and give the reason in the commit message"
fi
exit "$failed"
