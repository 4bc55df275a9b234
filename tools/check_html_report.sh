#!/usr/bin/env bash
# Renders the HTML report of a small run in headless Chromium and checks what a reader would see:
# the DOM holds the step time of the same run's JSON report, and the screenshot shows the charts
# (the breakdown's forward and backward colours are painted, and the page is not blank).
# Usage: tools/check_html_report.sh [TRNSIM_BINARY]   (default build/release/trnsim)
# Exit 0: passed; 1: failed; 77: no Chromium installed (ctest reports the test as skipped;
# `tools/install-deps.sh --with-browser` installs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
trnsim="${1:-$root/build/release/trnsim}"
source "$root/tools/headless_chromium.sh"  # $browser, $work; exits 77 without Chromium

"$trnsim" run "$root/configs/examples/tiny-trn1.json" --html "$work/report.html" --json "$work/report.json" >/dev/null

render_page "$work/report.html"

PYTHONPATH="$root/tools" python3 - "$work" <<'PY'
import json, sys
from page_checks import blank_failures, colour_counts, finish, seconds_failures

work, failures = sys.argv[1], []

# 1. The DOM Chromium built holds the step time of the JSON report.
step = json.load(open(f"{work}/report.json"))["results"]["step_time_s"]
dom = open(f"{work}/dom.html", encoding="utf-8").read()
failures += seconds_failures(dom, "step-time", step)
for section in ("breakdown", "gantt", "memory", "findings"):
    if f'id="{section}"' not in dom:
        failures.append(f"section {section} missing from the DOM")

# 2. The screenshot's colours.
width, height, counts = colour_counts(f"{work}/shot.png")
# The breakdown bar is 1000 px of the page at full width: forward (#4c78a8) and backward
# (#f58518) fill hundreds of pixels each when the charts are painted.
for name, rgb in (("forward", b"\x4c\x78\xa8"), ("backward", b"\xf5\x85\x18")):
    if counts.get(rgb, 0) < 500:
        failures.append(f"{name} colour painted on {counts.get(rgb, 0)} pixels only")
failures += blank_failures(width, height, counts)
print(f"step time {step} s")
finish(failures)
PY
