#!/usr/bin/env bash
# Tests the operations console in a real browser: Debian's Chromium (launched by its path, no browser download),
# driven by Playwright for Python (from PyPI, into a throw-away virtual environment), against a real `iap serve` fed
# by `iap emulate` (Scripts/console_browser_test.py says what is checked).
#
# usage: Scripts/console-browser-test.sh [--screenshots DIR] [swift build options, e.g. --scratch-path DIR]
#        IAP_BINARY=path/to/iap Scripts/console-browser-test.sh   (skips the build)
#        CHROMIUM=/path/to/chromium                               (default /usr/bin/chromium)
# --screenshots DIR writes a PNG of each page there (Documentation/images is where the guide's come from).
set -euo pipefail
cd "$(dirname "$0")/.."

screenshots=()
if [ "${1:-}" = "--screenshots" ]; then
    screenshots=(--screenshots "$2")
    shift 2
fi

iap="${IAP_BINARY:-}"
if [ -z "$iap" ]; then
    swift build --product iap "$@" >&2
    iap="$(swift build --show-bin-path "$@")/iap"
fi

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
    echo "no Chromium at $chromium: apt-get install chromium (or set CHROMIUM)" >&2
    exit 1
fi

venv="$(Scripts/python-venv.sh console-browser playwright)"
trap 'rm -rf "$venv"' EXIT

"$chromium" --version 2>/dev/null || true

timeout 300 "$venv/bin/python" Scripts/console_browser_test.py --iap "$iap" --chromium "$chromium" "${screenshots[@]}"
