#!/usr/bin/env bash
# Drives `iap emulate` with Apple's official Python client (app-store-server-library from PyPI, installed into a
# throw-away virtual environment) and verifies what it returns with Apple's Python SignedDataVerifier against the
# emulator's root certificate. Our wire format is right only when Apple's own code agrees.
#
# usage: Scripts/python-compat.sh [swift build options, e.g. --scratch-path DIR]
#        IAP_BINARY=path/to/iap Scripts/python-compat.sh   (skips the build)
set -euo pipefail
cd "$(dirname "$0")/.."

iap="${IAP_BINARY:-}"
if [ -z "$iap" ]; then
    swift build --product iap "$@" >&2
    iap="$(swift build --show-bin-path "$@")/iap"
fi

venv="$(Scripts/python-venv.sh python-compat app-store-server-library)"
trap 'rm -rf "$venv"' EXIT

timeout 120 "$venv/bin/python" Scripts/python_compat.py --iap "$iap"
