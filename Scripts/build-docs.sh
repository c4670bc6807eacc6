#!/usr/bin/env bash
# Builds the API reference of every library product with the toolchain's docc, from its catalog
# (Sources/<Module>/<Module>.docc: the landing page and its Topics) and the `///` comments, and fails on any
# documentation warning (a broken symbol link, an unknown parameter, a Topics entry that names no symbol, ...).
#
# The modules are converted one by one in dependency order; each archive is built for external linking and
# handed to the modules that depend on it (`--dependency`), so an absolute link to a dependency's symbol
# (``/IAPCore/IAPError``) resolves for real. A relative link to another module's symbol in a `///` comment
# (``IAPError`` in IAPServerAPI) cannot resolve in a per-module build; such a warning is counted apart, and only
# after checking that the symbol, with its whole path, exists in a module the target depends on. A link to a
# module the target does not depend on (IAPCore naming ``Reconciler``) stays a real warning: it would resolve
# nowhere.
#
# IAPStoreKit's sources are inside `#if canImport(StoreKit)`: off Apple platforms its symbol graph is empty, and
# its catalog is built as a landing page alone (it links no symbol, so it builds on both).
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
swift package dump-package >"$graphs/package.json"
mkdir -p "$output"
status=0
# In dependency order: a module's dependencies are converted before it.
targets="IAPCore IAPWebhook IAPServerAPI IAPLegacyReceipts IAPApp IAPStoreKit IAPCrypto IAPStorageFile IAPStoragePostgres IAPTransportURLSession IAPHTTPServer IAPPurchaseServer IAPInMemory IAPConformance IAPTesting"

# The library targets each target depends on, directly or not, one line per target: `target dep dep ...`.
python3 - "$graphs/package.json" $targets >"$graphs/dependencies" <<'PY'
import json, sys
package = json.load(open(sys.argv[1]))
libraries = sys.argv[2:]
direct = {}
for target in package["targets"]:
    direct[target["name"]] = [list(d.values())[0][0] for d in target.get("dependencies", [])]
for name in libraries:
    seen, stack = [], list(direct.get(name, []))
    while stack:
        dependency = stack.pop()
        if dependency not in seen:
            seen.append(dependency)
            stack.extend(direct.get(dependency, []))
    wrong = [d for d in seen if d in libraries and libraries.index(d) > libraries.index(name)]
    if wrong:
        sys.exit(f"build-docs.sh: {name} depends on {wrong}, listed after it; reorder the targets")
    print(name, *[d for d in libraries if d in seen])
PY

for target in $targets; do
    catalog="Sources/$target/$target.docc"
    if [ ! -f "$catalog/$target.md" ]; then
        echo "$target has no catalog: write $catalog/$target.md (a landing page and its Topics)" >&2
        exit 1
    fi
    if [ ! -f "$source_dir/$target.symbols.json" ]; then
        echo "no symbol graph for $target:" >&2
        grep -E "error" "$graphs/dump.log" | head -20 >&2
        exit 1
    fi
    mkdir -p "$graphs/$target"
    cp "$source_dir/$target".symbols.json "$source_dir/$target"@*.symbols.json "$graphs/$target/" 2>/dev/null || true
    dependencies=()
    for dependency in $(grep -E "^$target( |$)" "$graphs/dependencies" | cut -s -d' ' -f2-); do
        dependencies+=(--dependency "$output/$dependency.doccarchive")
    done
    rm -rf "$output/$target.doccarchive"
    docc convert "$catalog" \
        --additional-symbol-graph-dir "$graphs/$target" \
        --fallback-display-name "$target" \
        --fallback-bundle-identifier "org.swift-iap.$target" \
        --fallback-bundle-version 1.0 \
        --enable-experimental-external-link-support \
        "${dependencies[@]}" \
        --analyze \
        --output-path "$output/$target.doccarchive" >"$graphs/$target.log" 2>&1
done

# Sort each module's warnings into relative links to a dependency's symbols and real problems.
for target in $targets; do
    python3 - "$graphs/$target.log" "$output" "$(grep -E "^$target( |$)" "$graphs/dependencies")" <<'PY' || status=1
import glob, os, re, sys

log, output, line = sys.argv[1:4]
target, *dependencies = line.split()


def pages(module):
    """The lowercased paths (`iaperror/retryafter`) of every page of a module's archive."""
    root = os.path.join(output, f"{module}.doccarchive", "data", "documentation", module.lower())
    found = set()
    for path in glob.glob(os.path.join(root, "**", "*.json"), recursive=True):
        found.add(os.path.relpath(path, root)[: -len(".json")].lower())
    return found


known = set().union(*(pages(d) for d in dependencies)) if dependencies else set()


def exists(path):
    """Whether a link path names a page of a dependency; a disambiguated page (`init(_:)-1a2b3`) counts."""
    path = path.lower()
    if path in known:
        return True
    return any(page.startswith(path + "-") and "/" not in page[len(path) + 1 :] for page in known)


def strip(link):
    # ``Type/member(_:)-swift.method`` -> type/member(_:), the way docc names the page.
    parts = [re.sub(r"-(swift\.[a-z.]+|[0-9a-z]{3,6})$", "", part) for part in link.split("/")]
    return "/".join(parts)


def crosses(message):
    """Whether a warning is a relative link to a symbol that one of the target's dependencies documents."""
    match = re.search(r"'([^']+)' doesn't exist at '/([^']+)'", message)
    if match:
        link, scope = strip(match.group(1)), match.group(2).split("/")[1:]
        # docc tries the link from the innermost scope outwards; the scope may be another module's type that the
        # target extends (``IAPError/retryAfter`` from an `extension IAPError`).
        return any(exists("/".join(scope[:depth] + [link])) for depth in range(len(scope), -1, -1))
    match = re.search(r"'([^']+)' can't be linked to in a partial documentation build", message)
    if match:
        # A type the target extends but does not declare: docc leaves it to the module that declares it.
        return exists(strip(match.group(1)))
    return False


cross, real = 0, []
lines = open(log).read().splitlines()
for index, text in enumerate(lines):
    if "warning:" not in text and "error:" not in text:
        continue
    if crosses(text):
        cross += 1
        continue
    where = ""
    if index + 1 < len(lines) and "-->" in lines[index + 1]:
        where = " (" + lines[index + 1].split("-->", 1)[1].strip() + ")"
    real.append(text.strip() + where)
print(f"{target}: {len(real)} warnings, {cross} links to its dependencies' symbols -> {output}/{target}.doccarchive")
for text in real[:20]:
    print("  " + text)
sys.exit(1 if real else 0)
PY
done
exit $status
