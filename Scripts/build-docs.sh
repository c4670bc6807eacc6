#!/usr/bin/env bash
# Builds the API reference of every library product with the toolchain's docc, from the `///` comments, and fails
# on any documentation warning (a broken symbol link, an unknown parameter, ...). Each module is converted on its
# own, so a link to another module's symbol (``IAPError`` in IAPCrypto) cannot resolve; such links are counted
# apart, after checking that the symbol does exist in one of the other modules.
#
#   Scripts/build-docs.sh [OUTPUT_DIR]     default: .build/docs; open OUTPUT_DIR/<Target>.doccarchive with
#                                          `docc preview`, or serve it as a static site.
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/docs}"
graphs="$(mktemp -d)"
trap 'rm -rf "$graphs"' EXIT

# The command also tries the test modules and fails on them when the tests were not built; only the libraries'
# graphs matter here, and each is checked below.
swift package dump-symbol-graph --minimum-access-level public >"$graphs/dump.log" 2>&1 || true
source_dir="$(swift build --show-bin-path)/../symbolgraph"
mkdir -p "$output"
status=0
targets="IAPCore IAPServerAPI IAPLegacyReceipts IAPApp IAPCrypto IAPStorageFile IAPStoragePostgres IAPTransportURLSession IAPInMemory IAPTesting"
for target in $targets; do
    if [ ! -f "$source_dir/$target.symbols.json" ]; then
        echo "no symbol graph for $target:" >&2
        grep -E "error" "$graphs/dump.log" | head -20 >&2
        exit 1
    fi
    mkdir -p "$graphs/$target"
    cp "$source_dir/$target".symbols.json "$source_dir/$target"@*.symbols.json "$graphs/$target/" 2>/dev/null || true
    log="$graphs/$target.log"
    docc convert \
        --additional-symbol-graph-dir "$graphs/$target" \
        --fallback-display-name "$target" \
        --fallback-bundle-identifier "org.swift-iap.$target" \
        --fallback-bundle-version 1.0 \
        --analyze \
        --output-path "$output/$target.doccarchive" >"$log" 2>&1
done
# Second pass, once every archive exists: sort each module's warnings into links to another module's symbols and
# real problems.
for target in $targets; do
    python3 - "$graphs/$target.log" "$output" "$target" <<'PY' || status=1
import glob, os, re, sys
log, output, target = sys.argv[1:4]
known = set()
for path in glob.glob(os.path.join(output, "*.doccarchive", "data", "documentation", "*", "*.json")):
    if not path.split(os.sep)[-4].startswith(target + "."):
        known.add(os.path.basename(path)[:-5].lower())
warnings = [line for line in open(log) if "warning:" in line]
cross, real = 0, []
for line in warnings:
    match = re.search(r"'([^']+)' doesn't exist at", line)
    if match and match.group(1).split("/")[0].split("(")[0].lower() in known:
        cross += 1
    else:
        real.append(line.strip())
print(f"{target}: {len(real)} warnings, {cross} links to other modules' symbols -> {output}/{target}.doccarchive")
for line in real[:20]:
    print("  " + line)
sys.exit(1 if real else 0)
PY
done
exit $status
