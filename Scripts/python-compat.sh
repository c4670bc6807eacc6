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

venv="$(mktemp -d "${TMPDIR:-/tmp}/iap-python-compat-venv.XXXXXX")"
trap 'rm -rf "$venv"' EXIT

if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "python3 -m venv failed; installing python3-venv" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-venv
    rm -rf "$venv" && mkdir -p "$venv"
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check app-store-server-library
"$venv/bin/pip" show app-store-server-library | sed -n 's/^Version: /app-store-server-library /p'

timeout 120 "$venv/bin/python" Scripts/python_compat.py --iap "$iap"
