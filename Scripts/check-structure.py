#!/usr/bin/env python3
"""Checks the package's house rules from `swift package dump-package`, as an integrator would see them.

- IAPCore depends on no other target.
- No target an app links (IAPCore, IAPApp, IAPStoreKit, IAPInMemory, IAPConformance) reaches a system-library
  target (a C module), directly or through another target.
- Every target a product is named after exists as a product (IAPInMemory, IAPApp, IAPServerAPI, IAPLegacyReceipts...).
- Each target depends only on what its row of Documentation/Architecture.md allows; IAPHTTPServer on no other library
  target (only IAPCore and its C module).
- The `iap` tool, the example integrators copy, has no `package` access (`packageAccess: false`: public API only),
  downcasts to no backend type, and only its `Sandbox/` commands (demo, emulate, testdata) import the test kits
  (IAPTesting, IAPInMemory).
- No Swift file under Sources/ is over 800 lines.

Usage: Scripts/check-structure.py            (runs `swift package dump-package` in the repository)
       Scripts/check-structure.py FILE.json  (checks a saved dump)
"""

import json
import re
import subprocess
import sys
from pathlib import Path

# What each library target may depend on (directly). Test targets, examples and C modules are not listed.
ALLOWED = {
    "IAPCore": set(),
    "IAPServerAPI": {"IAPCore"},
    "IAPLegacyReceipts": {"IAPCore"},
    "IAPWebhook": {"IAPCore"},
    "IAPApp": {"IAPCore"},
    "IAPStoreKit": {"IAPCore", "IAPApp"},
    "IAPCrypto": {"IAPCore", "CIAPOpenSSL"},
    "IAPStorageFile": {"IAPCore", "IAPServerAPI"},
    "IAPStoragePostgres": {"IAPCore", "IAPServerAPI", "CIAPLibPQ"},
    "IAPTransportURLSession": {"IAPCore"},
    "IAPHTTPServer": {"IAPCore", "CIAPMicroHTTPD"},
    "IAPPurchaseServer": {"IAPCore", "IAPServerAPI", "IAPHTTPServer"},
    "IAPInMemory": {"IAPCore", "IAPApp", "IAPServerAPI"},
    "IAPConformance": {"IAPCore", "IAPServerAPI"},
    "IAPTesting": {"IAPCore", "IAPApp", "IAPServerAPI", "IAPInMemory", "IAPConformance", "IAPCrypto"},
}
# Library targets that must reach no C module: what an app links, and the test kits a backend author imports.
APP_LINKED = ["IAPCore", "IAPApp", "IAPStoreKit", "IAPInMemory", "IAPConformance"]
REQUIRED_PRODUCTS = set(ALLOWED)


def load() -> dict:
    if len(sys.argv) > 1:
        return json.loads(Path(sys.argv[1]).read_text())
    output = subprocess.run(
        ["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output)


ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "Sources" / "Examples" / "iap"
BACKEND_TYPES = ["PostgresEntitlementStore", "FileEntitlementStore", "InMemoryEntitlementStore"]
TEST_KITS = ["IAPTesting", "IAPInMemory"]
MAXIMUM_LINES = 800


def check_tool_sources() -> list:
    """No downcast to a backend type in the tool; the test kits only in its Sandbox/ commands."""
    problems = []
    downcast = re.compile(r"\bas[?!]\s*(" + "|".join(BACKEND_TYPES) + r")\b")
    kit = re.compile(r"^\s*(@\w+\s+)*(public\s+|internal\s+|package\s+)?import\s+(" + "|".join(TEST_KITS) + r")\b")
    for path in sorted(TOOL.rglob("*.swift")):
        relative = path.relative_to(ROOT)
        sandbox = (TOOL / "Sandbox") in path.parents
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if downcast.search(line):
                problems.append(f"{relative}:{number} downcasts to a backend type; ask the ledger site instead")
            if not sandbox and kit.match(line):
                problems.append(f"{relative}:{number} imports a test kit in a production command (Sandbox/ only)")
    return problems


def check_file_lengths() -> list:
    problems = []
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        count = len(path.read_text().splitlines())
        if count > MAXIMUM_LINES:
            problems.append(f"{path.relative_to(ROOT)} has {count} lines, more than {MAXIMUM_LINES}: split it")
    return problems


def main() -> int:
    package = load()
    targets = {}
    kinds = {}
    for target in package["targets"]:
        names = set()
        for dependency in target.get("dependencies", []):
            (kind, value), = dependency.items()
            names.add(value[0])
        targets[target["name"]] = names
        kinds[target["name"]] = target["type"]

    problems = []
    for name, allowed in ALLOWED.items():
        if name not in targets:
            problems.append(f"target {name} is missing")
            continue
        extra = targets[name] - allowed
        if extra:
            problems.append(f"{name} depends on {sorted(extra)}; it may depend on {sorted(allowed) or 'nothing'}")

    def reach(name: str, seen: set) -> set:
        for dependency in targets.get(name, set()):
            if dependency not in seen:
                seen.add(dependency)
                reach(dependency, seen)
        return seen

    for name in APP_LINKED:
        c_modules = sorted(d for d in reach(name, set()) if kinds.get(d) == "system")
        if c_modules:
            problems.append(f"{name} is linked by apps but reaches the C module(s) {c_modules}")

    products = {product["name"] for product in package["products"]}
    for name in sorted(REQUIRED_PRODUCTS - products):
        problems.append(f"no product {name}")

    libraries = set(ALLOWED) - {"IAPHTTPServer", "IAPCore"}
    if targets.get("IAPHTTPServer", set()) & libraries:
        problems.append("IAPHTTPServer depends on another library target; it is the generic HTTP server")

    tool = next((t for t in package["targets"] if t["name"] == "iap"), None)
    if tool is None:
        problems.append("target iap is missing")
    elif tool.get("packageAccess", True):
        problems.append("iap has package access: give it `packageAccess: false` (public API only)")
    problems += check_tool_sources()
    problems += check_file_lengths()

    for problem in problems:
        print(f"structure: {problem}", file=sys.stderr)
    if not problems:
        print(f"structure: ok ({len(ALLOWED)} library targets, {len(APP_LINKED)} app-linked targets free of C modules)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
