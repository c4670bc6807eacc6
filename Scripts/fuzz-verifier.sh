#!/usr/bin/env bash
# Fuzzes AppStoreSignedDataVerifier's input entry with libFuzzer and AddressSanitizer (see Documentation/Fuzzing.md).
#
#   Scripts/fuzz-verifier.sh            build the libFuzzer binary and fuzz for FUZZ_SECONDS (default 600)
#   Scripts/fuzz-verifier.sh --replay   build normally and replay the committed corpus (what CI runs)
#
# Environment:
#   FUZZ_SECONDS        how long to fuzz (-max_total_time), default 600
#   FUZZ_MAX_LEN        the longest input libFuzzer makes (-max_len), default 65536
#   FUZZ_SCRATCH_PATH   SwiftPM scratch path of the fuzzing build, default .build/fuzz
#   FUZZ_WORK_DIR       where the working corpus and the log go, default a new temporary directory
#   FUZZ_ARTIFACTS      where crash, leak and timeout inputs go, default fuzz-artifacts (git-ignored)
#   REPLAY_SCRATCH_PATH SwiftPM scratch path of the replay build, default .build (the normal one)
#   FUZZ_CONFIGURATION  debug or release (default release: about 2.5 times the executions per second of debug)
#   Extra arguments are passed to libFuzzer (for example -seed=1). The fuzzer runs as one process, one worker.
set -euo pipefail
cd "$(dirname "$0")/.."

corpus=Tests/Fuzz/corpus/verifier
dict=Tests/Fuzz/verifier.dict
product=IAPFuzzVerifier

if [ "${1:-}" = "--replay" ]; then
    shift
    scratch=${REPLAY_SCRATCH_PATH:-.build}
    swift build --scratch-path "$scratch" --product "$product" "$@"
    bin=$(swift build --scratch-path "$scratch" --product "$product" --show-bin-path "$@")
    "$bin/$product" "$corpus"
    exit 0
fi

seconds=${FUZZ_SECONDS:-600}
max_len=${FUZZ_MAX_LEN:-65536}
scratch=${FUZZ_SCRATCH_PATH:-.build/fuzz}
artifacts=${FUZZ_ARTIFACTS:-fuzz-artifacts}
work=${FUZZ_WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/iap-fuzz.XXXXXX")}

# -sanitize=fuzzer instruments every module for coverage and links libFuzzer; the package's own main hands
# control to libFuzzer (LLVMFuzzerRunDriver), so -parse-as-library is not needed.
flags=(-c "${FUZZ_CONFIGURATION:-release}" --scratch-path "$scratch" --product "$product" -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address)
echo "==> building the fuzzer ($scratch)"
swift build "${flags[@]}" 2>&1 | grep -v "Cannot export local symbol" || true
bin=$(swift build "${flags[@]}" --show-bin-path)/$product
[ -x "$bin" ] || { echo "the fuzzer did not build" >&2; exit 1; }

# libFuzzer adds what it finds to the first corpus directory: give it a copy, never the committed seeds.
mkdir -p "$work/corpus" "$artifacts"
cp "$corpus"/* "$work/corpus/"
log="$work/fuzz.log"
before=$(find "$artifacts" -type f | wc -l)

echo "==> fuzzing for ${seconds}s (working corpus $work/corpus, log $log)"
start=$(date +%s)
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$bin" "$work/corpus" \
    -dict="$dict" \
    -max_len="$max_len" \
    -max_total_time="$seconds" \
    -detect_leaks=1 \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts/" \
    "$@" 2>&1 | tee "$log" | grep -E --line-buffered "INITED|REDUCE cov|DONE|ERROR|SUMMARY|pulse" || true
status=${PIPESTATUS[0]}
end=$(date +%s)

after=$(find "$artifacts" -type f | wc -l)
executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
last=$(grep -E "^#[0-9]+" "$log" | tail -1)
echo
echo "==> summary"
echo "run time:   $((end - start)) s"
echo "executions: ${executions:-unknown} (${per_second:-?} exec/s)"
echo "last line:  ${last:-none}"
echo "corpus:     $(find "$work/corpus" -type f | wc -l) inputs in $work/corpus"
if [ "$after" -gt "$before" ] || [ "$status" -ne 0 ]; then
    echo "findings:   YES (libFuzzer exit status $status; new artifacts in $artifacts/):"
    find "$artifacts" -type f -newer "$dict" -print
    exit 1
fi
echo "findings:   none (no crash, sanitizer report or leak)"
