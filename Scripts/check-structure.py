#!/usr/bin/env python3
"""Checks the package's house rules from `swift package dump-package`, as an integrator would see them.

- IAPCore depends on no other target.
- No target an app links (IAPCore, IAPApp, IAPStoreKit, IAPInMemory, IAPConformance) reaches a C module (a
  system-library target, or a target of C sources), directly or through another target.
- Every target a product is named after exists as a product (IAPInMemory, IAPApp, IAPServerAPI, IAPLegacyReceipts...).
- Each target depends only on what its row of Documentation/Architecture.md's table allows (the table is read: its
  `may import` column); every library target has a row, every row names a target of the package; IAPHTTPServer
  depends on no other library target (only IAPCore and its C module).
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

ARCHITECTURE = Path(__file__).resolve().parent.parent / "Documentation" / "Architecture.md"


def read_allowed(text: str) -> dict:
    """What each target may depend on (directly), from the first table of Architecture.md whose header is
    `| target | holds | may import | why |`: the backticked names of the `may import` column (`Foundation only`
    and `—` allow no target). A row names one target or several (`CIAPOpenSSL`, `CIAPLibPQ`, ...), each in backticks;
    rows of executables (`the libraries`) are kept but not checked here."""
    allowed = {}
    lines = text.splitlines()
    header = next(
        (i for i, line in enumerate(lines) if re.match(r"^\|\s*target\s*\|\s*holds\s*\|\s*may import\s*\|", line)),
        None,
    )
    if header is None:
        return allowed
    for line in lines[header + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3:
            continue
        names = re.findall(r"`([A-Za-z][\w-]*)`", cells[0])
        imports = set(re.findall(r"`([A-Za-z][\w-]*)`", cells[2]))
        for name in names:
            allowed[name] = imports
    return allowed


# What each library target may depend on (directly), as Documentation/Architecture.md's table says. Test targets,
# executables and C modules are not checked against it.
ALLOWED = read_allowed(ARCHITECTURE.read_text())
# Library targets that must reach no C module: what an app links, and the test kits a backend author imports.
APP_LINKED = ["IAPCore", "IAPApp", "IAPStoreKit", "IAPInMemory", "IAPConformance"]


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
        # A target of C sources (no Swift file under its directory) is a C module, like a system library.
        directory = ROOT / (target.get("path") or f"Sources/{target['name']}")
        if target["type"] == "regular" and directory.is_dir() and not any(directory.rglob("*.swift")):
            kinds[target["name"]] = "system"

    problems = []
    # The library targets: every regular target outside Sources/Examples/ and Tests/ (the products), each with its row.
    libraries = sorted(
        target["name"]
        for target in package["targets"]
        if kinds[target["name"]] == "regular"
        and not (target.get("path") or "").startswith(("Sources/Examples", "Tests/"))
    )
    if not ALLOWED:
        problems.append(f"{ARCHITECTURE.relative_to(ROOT)} has no table '| target | holds | may import | why |'")
    for name in libraries:
        if name not in ALLOWED:
            problems.append(f"library target {name} has no row in {ARCHITECTURE.relative_to(ROOT)}'s table")
    checked = [t["name"] for t in package["targets"] if kinds[t["name"]] == "regular" and t["name"] in ALLOWED]
    for name in sorted(ALLOWED):
        if name not in targets:
            problems.append(f"{ARCHITECTURE.relative_to(ROOT)} names a target {name} that the package does not have")
    for name in checked:
        allowed = ALLOWED[name]
        extra = targets[name] - allowed
        if extra:
            problems.append(
                f"{name} depends on {sorted(extra)}; Architecture.md's table lets it depend on "
                f"{sorted(allowed) or 'nothing'}"
            )

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
    for name in libraries:
        if name not in products:
            problems.append(f"no product {name}")

    others = set(libraries) - {"IAPHTTPServer", "IAPCore"}
    if targets.get("IAPHTTPServer", set()) & others:
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
        print(
            f"structure: ok ({len(libraries)} library targets as Architecture.md's table allows, {len(checked)} "
            f"targets checked against it, {len(APP_LINKED)} app-linked targets free of C modules)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
