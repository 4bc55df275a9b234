#!/usr/bin/env bash
# Renders the HTML page of a small sweep in headless Chromium and checks what a reader would see:
# the DOM holds the best plan's step time of the same sweep's --json, with its heat map, ranked
# and pruned sections, and the screenshot shows the heat map (its best and worst cells painted in
# the colour scale's two ends, the cells where nothing ran in the neutral grey).
# Usage: tools/check_sweep_html.sh [TRNSIM_BINARY]   (default build/release/trnsim)
# Exit 0: passed; 1: failed; 77: no Chromium installed (ctest reports the test as skipped;
# `tools/install-deps.sh --with-browser` installs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trnsim="${1:-$root/build/release/trnsim}"
source "$root/tools/headless_chromium.sh"  # $browser, $work; exits 77 without Chromium

# 12 points on 2 ranks: tp 2 x pp 2 never divides them (the grey cell), the three other (tp, pp)
# cells run.
"$trnsim" sweep "$root/configs/examples/tiny-trn1.json" --tp 1,2 --pp 1,2 --micro-batch 1,2,3 --axes tp,pp \
  --html "$work/sweep.html" --json "$work/sweep.json" >/dev/null

render_page "$work/sweep.html"

PYTHONPATH="$root/tools" python3 - "$work" <<'PY'
import json, sys
from page_checks import blank_failures, colour_counts, finish, seconds_failures

work, failures = sys.argv[1], []

# 1. The DOM Chromium built holds the best step time of the sweep's JSON.
plans = json.load(open(f"{work}/sweep.json"))["plans"]
times = [p["step_time_s"] for p in plans if p["status"] == "simulated"]
if len(set(times)) < 2:
    failures.append(f"the sweep should give at least two different step times, gave {times}")
best = min(times)
dom = open(f"{work}/dom.html", encoding="utf-8").read()
failures += seconds_failures(dom, "best-step-time", best)
for section in ("heatmap", "ranked", "pruned"):
    if f'id="{section}"' not in dom:
        failures.append(f"section {section} missing from the DOM")
cells = dom.count('class="cell')
if cells != 4:
    failures.append(f"expected 4 heat map cells (tp 1, 2 x pp 1, 2), found {cells}")

# 2. The screenshot's colours. Each heat map cell is about 110 x 46 px: the best cell is painted
# in the scale's best end (#fde725), the slowest in its worst end (#440154), the cell of tp 2,
# pp 2 (all invalid) in the neutral grey (#d9d9d9); text covers a few hundred pixels of each.
width, height, counts = colour_counts(f"{work}/shot.png")
for name, rgb in (("best cell", b"\xfd\xe7\x25"), ("worst cell", b"\x44\x01\x54"), ("pruned cell", b"\xd9\xd9\xd9")):
    if counts.get(rgb, 0) < 2000:
        failures.append(f"{name} colour painted on {counts.get(rgb, 0)} pixels only")
failures += blank_failures(width, height, counts)
print(f"best step time {best} s of {len(times)} simulated plans")
finish(failures)
PY
