#!/usr/bin/env bash
# Runs the test suite (or part of it) N times under the watchdog, printing each run's wall time and result, and
# stops at the first failure or hang.
#
#   Scripts/test-repeat.sh N [swift test options]
#   Scripts/test-repeat.sh 100 --filter 'SignalStopTests|HTTPServer'
#
# The build is done once, before the first run; the runs then use --skip-build unless the options say otherwise.
# Each run's output is kept in .build/test-repeat/run-K.log. IAP_WATCHDOG_IDLE and IAP_WATCHDOG_LIMIT (seconds) are
# passed to the watchdog (600 and 2400 by default).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: Scripts/test-repeat.sh N [swift test options]" >&2
    exit 2
fi
count=$1
shift

# The options the build takes too (compiler flags, configuration); the others (--filter, --skip) are the runs' own.
build=()
options=("$@")
for ((i = 0; i < ${#options[@]}; i++)); do
    case ${options[i]} in
    -Xswiftc | -Xcc | -Xlinker | -c | --configuration)
        build+=("${options[i]}" "${options[i + 1]:-}")
        i=$((i + 1))
        ;;
    esac
done

logs=.build/test-repeat
mkdir -p "$logs"
echo "==> building the tests once"
swift build --build-tests ${build[@]+"${build[@]}"} 2>&1 | tail -n 3

times=()
for ((run = 1; run <= count; run++)); do
    log="$logs/run-$run.log"
    start=$(date +%s%N)
    status=0
    Scripts/test-watchdog.py --idle "${IAP_WATCHDOG_IDLE:-600}" --limit "${IAP_WATCHDOG_LIMIT:-2400}" --log "$log" \
        -- swift test --skip-build "$@" >/dev/null 2>&1 || status=$?
    tenths=$((($(date +%s%N) - start) / 100000000))
    wall="$((tenths / 10)).$((tenths % 10))"
    times+=("$wall")
    case $status in
    0) result=passed ;;
    124) result="HUNG (watchdog)" ;;
    *) result="failed (exit $status)" ;;
    esac
    printf 'run %d/%d: %6s s  %s\n' "$run" "$count" "$wall" "$result"
    if [ "$status" -ne 0 ]; then
        echo "==> stopped at run $run; its output: $log" >&2
        grep -E '✘|watchdog|error:' "$log" | tail -n 40 >&2 || true
        exit "$status"
    fi
done
printf '==> %d of %d runs passed; wall times (s): %s\n' "$count" "$count" "${times[*]}"
