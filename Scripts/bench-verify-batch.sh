#!/usr/bin/env bash
# The whole `iap verify --batch` process against one core of OpenSSL's P-256 verify and against Apple's Python
# verifier: builds the release binaries (iap and iap-bench), installs Apple's app-store-server-library (PyPI) into a
# throw-away virtual environment, and runs `iap-bench verify-batch --python <that interpreter>`, which measures the
# iap beside it and prints the figures, the ratios and whether the targets are met as JSON (progress on stderr).
#
# usage: Scripts/bench-verify-batch.sh [iap-bench verify-batch options, e.g. --transactions 20000 --runs 3]
#        IAP_BENCH_BINARY=path/to/iap-bench Scripts/bench-verify-batch.sh ...   (skips the build; iap must be beside it)
#        IAP_BENCH_NO_PYTHON=1 Scripts/bench-verify-batch.sh ...    (leaves Apple's verifier out)
set -euo pipefail
cd "$(dirname "$0")/.."

bench="${IAP_BENCH_BINARY:-}"
if [ -z "$bench" ]; then
    swift build -c release --product iap >&2
    swift build -c release --product iap-bench >&2
    bench="$(swift build -c release --show-bin-path)/iap-bench"
fi

python_args=()
if [ -z "${IAP_BENCH_NO_PYTHON:-}" ]; then
    venv="$(mktemp -d "${TMPDIR:-/tmp}/iap-bench-python.XXXXXX")"
    trap 'rm -rf "$venv"' EXIT
    if python3 -m venv "$venv" >/dev/null 2>&1 \
        && "$venv/bin/pip" install -q --disable-pip-version-check app-store-server-library >&2; then
        python_args=(--python "$venv/bin/python")
    else
        echo "could not install app-store-server-library (python3 -m venv, pip); Apple's verifier is not measured" >&2
    fi
fi

"$bench" verify-batch ${python_args[@]+"${python_args[@]}"} "$@"
