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
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
done
if [[ -z "$browser" ]]; then
  echo "SKIPPED: no chromium found (install it with tools/install-deps.sh --with-browser)"
  exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$trnsim" run "$root/configs/examples/tiny-trn1.json" --html "$work/report.html" --json "$work/report.json" >/dev/null

# A private profile per run, so that concurrent runs do not share one.
chrome=("$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile"
        --window-size=1280,1600)
"${chrome[@]}" --dump-dom "file://$work/report.html" >"$work/dom.html" 2>"$work/chromium.log"
"${chrome[@]}" --screenshot="$work/shot.png" "file://$work/report.html" >>"$work/chromium.log" 2>&1
[[ -s "$work/shot.png" ]] || { echo "FAILED: no screenshot"; cat "$work/chromium.log"; exit 1; }

python3 - "$work" <<'PY'
import json, re, struct, sys, zlib

work = sys.argv[1]
failures = []

# 1. The DOM Chromium built holds the step time of the JSON report.
step = json.load(open(f"{work}/report.json"))["results"]["step_time_s"]
dom = open(f"{work}/dom.html", encoding="utf-8").read()
m = re.search(r'<span id="step-time" data-seconds="([^"]+)">([0-9.]+) (s|ms|us)</span>', dom)
if not m:
    failures.append("no step-time element in the DOM")
else:
    exact, shown = float(m.group(1)), float(m.group(2)) * {"s": 1, "ms": 1e-3, "us": 1e-6}[m.group(3)]
    if exact != step:
        failures.append(f"data-seconds {exact} != JSON step_time_s {step}")
    if abs(shown - step) > 5e-4 * step:  # four significant digits
        failures.append(f"shown step time {m.group(2)} {m.group(3)} != JSON {step} s")
for section in ("breakdown", "gantt", "memory", "findings"):
    if f'id="{section}"' not in dom:
        failures.append(f"section {section} missing from the DOM")

# 2. Decode the screenshot (8-bit RGB or RGBA, not interlaced: what Chromium writes).
data = open(f"{work}/shot.png", "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
assert depth == 8 and colour in (2, 6) and interlace == 0, f"unexpected PNG format {depth} {colour} {interlace}"
bpp = 3 if colour == 2 else 4
raw, stride = zlib.decompress(idat), width * bpp
pixels, prev = [], bytearray(stride)
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    pixels.append(bytes(line))
    prev = line
counts = {}
for line in pixels:
    for i in range(0, stride, bpp):
        rgb = line[i:i + 3]
        counts[rgb] = counts.get(rgb, 0) + 1
total = width * height
white = counts.get(b"\xff\xff\xff", 0)
# The breakdown bar is 1000 px of the page at full width: forward (#4c78a8) and backward
# (#f58518) fill hundreds of pixels each when the charts are painted.
for name, rgb in (("forward", b"\x4c\x78\xa8"), ("backward", b"\xf5\x85\x18")):
    if counts.get(rgb, 0) < 500:
        failures.append(f"{name} colour painted on {counts.get(rgb, 0)} pixels only")
if total - white < 0.02 * total:
    failures.append(f"screenshot nearly blank: {total - white} of {total} pixels not white")
print(f"screenshot {width}x{height}: {len(counts)} colours, {100 * (total - white) / total:.1f} % not white; "
      f"step time {step} s")
if failures:
    print("FAILED: " + "; ".join(failures))
    sys.exit(1)
print("passed")
PY
