#!/usr/bin/env bash
# Makes a throw-away Python virtual environment with the given PyPI packages, installing Debian's python3-venv first
# if the interpreter lacks it, and prints its directory (the packages' versions go to standard error). The caller
# removes it: venv="$(Scripts/python-venv.sh NAME PACKAGE...)"; trap 'rm -rf "$venv"' EXIT
#
# usage: Scripts/python-venv.sh NAME PACKAGE...
set -euo pipefail
name="$1"
shift
venv="$(mktemp -d "${TMPDIR:-/tmp}/iap-$name-venv.XXXXXX")"
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "python3 -m venv failed; installing python3-venv" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq python3-venv >&2
    rm -rf "$venv" && mkdir -p "$venv"
    python3 -m venv "$venv" >&2
fi
"$venv/bin/pip" install -q --disable-pip-version-check "$@" >&2
for package in "$@"; do
    "$venv/bin/pip" show "$package" | sed -n "s/^Version: /$package /p" >&2
done
echo "$venv"
