#!/usr/bin/env bash
# Renders the HTML page of `trnsim sensitivity` in headless Chromium and checks what a reader would
# see: the DOM holds the base step time of the same run's --json and one table row per figure, and
# the screenshot shows the elasticity bars (blue for a figure whose rise shortens the step, red for
# one whose rise lengthens it: on tiny-trn1 both kinds exist, e.g. HBM bandwidth and the
# collective launch cost; the launch is stated at Neuron runtime release 2.9's 33.2 us, so that its
# bar is wide enough to see: at release 2.19's 0.3 us its elasticity is 0.02).
# Usage: tools/check_sensitivity_html.sh [TRNSIM_BINARY]   (default build/release/trnsim)
# Exit 0: passed; 1: failed; 77: no Chromium installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trnsim="${1:-$root/build/release/trnsim}"
source "$root/tools/headless_chromium.sh"  # $browser, $work; exits 77 without Chromium

"$trnsim" sensitivity "$root/configs/examples/tiny-trn1.json" --set cluster.calibration.collective_launch_us=33.2 \
  --html "$work/page.html" --json "$work/page.json" >/dev/null
render_page "$work/page.html"

PYTHONPATH="$root/tools" python3 - "$work" <<'PY'
import json, sys
from page_checks import blank_failures, colour_counts, finish, seconds_failures

work, failures = sys.argv[1], []
result = json.load(open(f"{work}/page.json"))
dom = open(f"{work}/dom.html", encoding="utf-8").read()
failures += seconds_failures(dom, "base-step-time", result["base"]["step_time_s"])
table = dom[dom.find('id="figures"'):]
table = table[:table.find("</table>")]
rows = table.count("<tr>") - 1  # less the header
if rows != len(result["figures"]):
    failures.append(f"expected {len(result['figures'])} figure rows, found {rows}")
signs = {f["elasticity"] < 0 for f in result["figures"] if f["elasticity"] != 0}
width, height, counts = colour_counts(f"{work}/shot.png")
for negative, name, rgb in ((True, "blue (shortens)", b"\x4c\x78\xa8"), (False, "red (lengthens)", b"\xe4\x57\x56")):
    if negative in signs and counts.get(rgb, 0) < 50:  # a bar is at least a few pixels wide and 10 high
        failures.append(f"{name} bars painted on {counts.get(rgb, 0)} pixels only")
failures += blank_failures(width, height, counts)
print(f"base step time {result['base']['step_time_s']} s, {rows} figures")
finish(failures)
PY
