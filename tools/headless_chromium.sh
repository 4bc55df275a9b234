# Shared by the checks that render a page in headless Chromium (check_html_report.sh,
# check_sweep_html.sh): sourcing it sets $browser to the first Chromium found, or exits 77 (ctest:
# skipped) with a message when there is none, and sets $work to a folder removed on exit.
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

# render_page PAGE: the DOM Chromium builds from PAGE into $work/dom.html and a 1280x1600
# screenshot into $work/shot.png; exits 1 when there is no screenshot.
render_page() {
  local page=$1
  # A private profile per run, so that concurrent runs do not share one.
  local chrome=("$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile"
                --window-size=1280,1600)
  "${chrome[@]}" --dump-dom "file://$page" >"$work/dom.html" 2>"$work/chromium.log"
  "${chrome[@]}" --screenshot="$work/shot.png" "file://$page" >>"$work/chromium.log" 2>&1
  [[ -s "$work/shot.png" ]] || { echo "FAILED: no screenshot"; cat "$work/chromium.log"; exit 1; }
}
