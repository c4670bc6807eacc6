#!/usr/bin/env bash
# Type-checks the StoreKit adapter (Sources/IAPStoreKit) on Linux, where StoreKit does not exist, against
# Scripts/StoreKitShim: the StoreKit 2 API the adapter uses, declared from Apple's public documentation (each
# declaration names its page), with its async/throws, optionality, actor isolation and per-platform availability.
#
# What it proves: the adapter is well-typed against the documented API, on iOS, macOS, tvOS, watchOS and visionOS
# from the package's floor (iOS 16, macOS 13, tvOS 16, watchOS 9, visionOS 1), with every newer API behind
# `if #available` (see Scripts/typecheck_storekit.py for how availability is checked on Linux). What it does not
# prove: that the adapter behaves, or that the shim matches Apple's SDK in what the documentation leaves out; the
# behaviour lives in IAPApp and is tested there with the simulated App Store. A build with Xcode is the final word.
#
# Usage: Scripts/typecheck-storekit.sh [--self-test] [swift build options...]
#   --self-test  also breaks the adapter on purpose (a wrong label, a wrong optionality, an iOS 18 API outside
#                `if #available`, a scene-less purchase on visionOS) and fails unless each break is caught.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
    -h|--help)
        sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
esac
self_test=()
if [ "${1:-}" = "--self-test" ]; then
    self_test=(--self-test)
    shift
fi

swift build --target IAPApp "$@" >&2
modules="$(swift build --show-bin-path "$@")/Modules"
python3 Scripts/typecheck_storekit.py --modules "$modules" "${self_test[@]}"
