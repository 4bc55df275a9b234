#!/usr/bin/env bash
# Prints one line "<sha256>  <output>" for every output trnsim writes on the bundled examples, so
# that a refactoring can show that behaviour is unchanged: run it before and after, then diff.
#   tools/output_digests.sh [TRNSIM] [--with-validate] > digests.txt
# Covers, for every file in configs/examples/: run (text, --json, --csv, --html, --trace) with the
# analytic and the flow network model, and --dry-run; plus collective tables, topology --dot and
# presets; --with-validate adds `validate configs/validation` (about 30 s: it replays every plan
# of each file's band). Wall-clock lines of the text report ("... wall") are dropped before
# hashing: they are the only non-deterministic output.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
trnsim=build/release/trnsim
with_validate=0
for a in "$@"; do
  case "$a" in
    --with-validate) with_validate=1 ;;
    -*) echo "usage: tools/output_digests.sh [TRNSIM] [--with-validate]" >&2; exit 2 ;;
    *) trnsim=$a ;;
  esac
done
# A path given by the caller is relative to the caller's folder; the default to the repository.
if [[ "$trnsim" != build/release/trnsim && "$trnsim" != /* ]]; then trnsim=$caller/$trnsim; fi
trnsim=$(realpath "$trnsim")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

digest() {  # digest NAME FILE
  printf '%s  %s\n' "$(sha256sum < "$2" | cut -d' ' -f1)" "$1"
}

for f in configs/examples/*.json; do
  name=$(basename "$f" .json)
  "$trnsim" run "$f" --dry-run > "$tmp/dry.json"
  digest "$name dry-run" "$tmp/dry.json"
  for net in analytic flow; do
    rm -f "$tmp"/out.*
    "$trnsim" -q run "$f" --network "$net" --json "$tmp/out.json" --csv "$tmp/out.csv" \
      --html "$tmp/out.html" --trace "$tmp/out.trace" | grep -v ' wall$' > "$tmp/out.txt"
    for ext in txt json csv html trace; do digest "$name $net $ext" "$tmp/out.$ext"; done
  done
done

for op in all-reduce all-gather reduce-scatter all-to-all; do
  "$trnsim" collective --instance trn1.32xlarge "$op" -b 1KiB -e 1GiB -f 16 > "$tmp/coll.txt"
  digest "collective trn1.32xlarge $op" "$tmp/coll.txt"
  "$trnsim" collective --instance trn2.48xlarge --nodes 2 "$op" -b 1KiB -e 1GiB -f 16 --network flow > "$tmp/coll.txt"
  digest "collective 2 x trn2.48xlarge flow $op" "$tmp/coll.txt"
done
"$trnsim" collective --instance trn1.32xlarge --ranks 2 all-reduce -b 1KiB -e 1GiB -f 4 > "$tmp/coll.txt"
digest "collective trn1.32xlarge 2 ranks all-reduce" "$tmp/coll.txt"

for inst in trn1.32xlarge trn2.48xlarge dgx-a100-80gb; do
  "$trnsim" topology --instance "$inst" --nodes 2 --dot "$tmp/topo.dot" | grep -v "^wrote " > "$tmp/topo.txt"
  digest "topology $inst" "$tmp/topo.txt"
  digest "topology $inst dot" "$tmp/topo.dot"
done
"$trnsim" topology --instance trn2u.48xlarge --nodes 4 --dot "$tmp/topo.dot" | grep -v "^wrote " > "$tmp/topo.txt"
digest "topology trn2u.48xlarge" "$tmp/topo.txt"
digest "topology trn2u.48xlarge dot" "$tmp/topo.dot"
"$trnsim" topology --instance trn3-gen1-ultraserver --nodes 8 > "$tmp/topo.txt"
digest "topology trn3-gen1-ultraserver" "$tmp/topo.txt"
"$trnsim" presets > "$tmp/presets.txt"
digest "presets" "$tmp/presets.txt"

if ((with_validate)); then
  "$trnsim" validate configs/validation --csv "$tmp/validate.csv" > "$tmp/validate.txt"
  digest "validate" "$tmp/validate.txt"
  digest "validate csv" "$tmp/validate.csv"
fi
