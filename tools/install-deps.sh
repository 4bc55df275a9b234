#!/usr/bin/env bash
# Installs the Debian 12 packages trnsim builds with, only those that are missing. Idempotent and
# quiet when nothing is missing. Needs root (or sudo) only when something must be installed.
# Usage: tools/install-deps.sh [--with-browser]
#   --with-browser  also Debian's chromium, which tools/check_html_report.sh (a ctest test, skipped
#                   without it) uses to render the HTML report headless; .ci/run asks for it.
# locales: glibc's locale sources, from which tests/robustness/determinism.sh builds de_DE.UTF-8.
set -euo pipefail
pkgs=(g++ cmake ninja-build libboost-graph-dev libfmt-dev libspdlog-dev nlohmann-json3-dev catch2 libcli11-dev libprotobuf-dev protobuf-compiler locales)
# Optional extras, asked for with --with-browser: Debian's chromium renders the HTML report test.
case "${1:-}" in
  "") ;;
  --with-browser) pkgs+=(chromium) ;;
  *) echo "usage: tools/install-deps.sh [--with-browser]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "installing: ${missing[*]}" >&2
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
