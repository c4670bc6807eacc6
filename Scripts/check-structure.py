#!/usr/bin/env python3
"""Checks the package's house rules from `swift package dump-package`, as an integrator would see them.

- IAPCore depends on no other target.
- No target an app links (IAPCore, IAPApp, IAPStoreKit, IAPInMemory, IAPConformance) reaches a system-library
  target (a C module), directly or through another target.
- Every target a product is named after exists as a product (IAPInMemory, IAPApp, IAPServerAPI, IAPLegacyReceipts...).
- Each target depends only on what its row of Documentation/Architecture.md allows.

Usage: Scripts/check-structure.py            (runs `swift package dump-package` in the repository)
       Scripts/check-structure.py FILE.json  (checks a saved dump)
"""

import json
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
APP_LINKED = ["IAPCore", "IAPApp", "IAPStoreKit", "IAPInMemory", "IAPConformance"]
REQUIRED_PRODUCTS = set(ALLOWED)


def load() -> dict:
    if len(sys.argv) > 1:
        return json.loads(Path(sys.argv[1]).read_text())
    root = Path(__file__).resolve().parent.parent
    output = subprocess.run(
        ["swift", "package", "dump-package"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output)


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

    for problem in problems:
        print(f"structure: {problem}", file=sys.stderr)
    if not problems:
        print(f"structure: ok ({len(ALLOWED)} library targets, {len(APP_LINKED)} app-linked targets free of C modules)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
