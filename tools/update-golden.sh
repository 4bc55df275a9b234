#!/bin/sh
# Regenerates tests/golden/<example>.json, the `trnsim run --json` report of every
# configs/examples/<example>.json, which the ctest tests labelled `golden` compare new runs with.
# Run it after a deliberate change of the model that moves the predictions, and give the reason in
# the commit message (README.md, "Golden reports"); never to make a failing golden test pass
# without knowing why it failed.
#
# Usage: tools/update-golden.sh [TRNSIM]   (default build/release/trnsim; run from the repository root)
set -eu
trnsim=${1:-build/release/trnsim}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$trnsim" ] || { echo "update-golden.sh: $trnsim: not an executable (build first, or pass the trnsim binary)" >&2; exit 2; }
for example in "$root"/configs/examples/*.json; do
  name=$(basename "$example")
  # The example path as the repository names it: the report embeds no path, but keep it relative anyway.
  (cd "$root" && "$trnsim" -q run "configs/examples/$name" --json "tests/golden/$name" >/dev/null)
  echo "tests/golden/$name"
done
