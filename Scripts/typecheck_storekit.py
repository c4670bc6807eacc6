#!/usr/bin/env python3
"""Type-checks IAPStoreKit's sources against Scripts/StoreKitShim, the StoreKit 2 API as Apple documents it.

Called by Scripts/typecheck-storekit.sh (which builds IAPApp first); see its header for what this proves and what it
does not. Two kinds of pass:

1. The module pass: the shims are compiled as the modules `StoreKit` and `UIKit` (with library evolution, as Apple's
   are), and the adapter's files are type-checked as they are, with `-warnings-as-errors`, against them and the
   built IAPApp and IAPCore. It checks names, labels, types, `async`/`throws`, optionality, actor isolation and access,
   for the code outside `#if os(...)` branches (Linux is none of Apple's platforms).

2. One availability pass per platform (iOS, macOS, tvOS, watchOS, visionOS). Swift checks `@available` only for the
   platform it compiles for, and Linux is not one of them, so each pass rewrites a copy: `os(X)`, `canImport(UIKit)`
   and `canImport(AppKit)` in `#if` become flags of that platform, and every `@available`/`#available` of that
   platform becomes custom availability domains (Swift's experimental CustomAvailability): an API introduced after
   the package's floor (iOS 16, macOS 13, tvOS 16, watchOS 9, visionOS 1) needs the domain of its version, which only
   an `if #available` of that version or later (or an `@available` declaration) grants; `@available(P, unavailable)`
   becomes unavailable. The shim and the adapter are then type-checked as one module (custom domains do not cross
   modules yet), so a newer API used outside `if #available`, or an API a platform lacks, fails that platform's
   pass. Every `#available` in the adapter must name all five platforms.

Usage: typecheck_storekit.py --modules DIR [--self-test]
  --modules DIR  where IAPApp.swiftmodule and IAPCore.swiftmodule are (`swift build --show-bin-path`/Modules)
  --self-test    also breaks the adapter on purpose, in a copy, and checks that each break fails its pass
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIM = ROOT / "Scripts" / "StoreKitShim"
ADAPTER = sorted((ROOT / "Sources" / "IAPStoreKit").glob("*.swift"))

FLOORS = {"iOS": (16, 0), "macOS": (13, 0), "tvOS": (16, 0), "watchOS": (9, 0), "visionOS": (1, 0)}
# The modules each platform has, besides StoreKit and Foundation.
UI_MODULE = {"iOS": "UIKit", "tvOS": "UIKit", "watchOS": "UIKit", "visionOS": "UIKit", "macOS": "AppKit"}
UPCOMING = ["ExistentialAny", "MemberImportVisibility", "InternalImportsByDefault"]
ATTRIBUTE = re.compile(r"@available\(([^()]*)\)")
CONDITION = re.compile(r"#available\(([^()]*)\)")
IMPORT = re.compile(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(StoreKit|UIKit|AppKit)\s*$")


class ShimError(Exception):
    pass


def version(text: str) -> tuple[int, int]:
    parts = text.strip().split(".")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0


def parse(arguments: str) -> tuple[str, dict]:
    """Splits an availability argument list: ('shorthand', {platform: version, '*': True}) or
    ('keyword', {'platform': P, 'unavailable': bool, 'introduced': version or None})."""
    items = [item.strip() for item in arguments.split(",") if item.strip()]
    head = items[0].split()
    if len(head) == 1 and (len(items) == 1 or ":" in items[1] or items[1] in ("unavailable", "deprecated")):
        keyword = {"platform": head[0], "unavailable": False, "introduced": None}
        for item in items[1:]:
            if item == "unavailable":
                keyword["unavailable"] = True
            elif item.startswith("introduced:"):
                keyword["introduced"] = version(item.split(":", 1)[1])
        return "keyword", keyword
    shorthand = {}
    for item in items:
        if item == "*":
            shorthand["*"] = True
            continue
        name, number = item.split()
        shorthand[name] = version(number)
    return "shorthand", shorthand


def domain(platform: str, release: tuple[int, int]) -> str:
    return f"IAPShim_{platform}_{release[0]}_{release[1]}"


def versions_in(text: str, platform: str) -> set:
    """Every version of `platform` after the floor that an @available or #available names."""
    found = set()
    for pattern in (ATTRIBUTE, CONDITION):
        for match in pattern.finditer(text):
            kind, value = parse(match.group(1))
            release = value.get(platform) if kind == "shorthand" else (
                value["introduced"] if value["platform"] == platform else None
            )
            if release and release > FLOORS[platform]:
                found.add(release)
    return found


def rewrite(text: str, platform: str, domains: set, where: str, strict: bool) -> str:
    """Rewrites one file for the pass of `platform`; see the module's header."""

    def granted(release: tuple[int, int]) -> list[str]:
        return [domain(platform, each) for each in sorted(domains) if each <= release]

    def attribute(match: re.Match) -> str:
        kind, value = parse(match.group(1))
        if kind == "keyword":
            if value["platform"] == "*":
                return match.group(0)
            if value["platform"] != platform:
                return ""
            if value["unavailable"]:
                # Inside an unavailable declaration every domain is granted, as Swift exempts unavailable code from
                # version checks.
                return " ".join(["@available(*, unavailable)", *(f"@available({name})" for name in granted((999, 0)))])
            release = value["introduced"]
        else:
            release = value.get(platform)
        if release is None or release <= FLOORS[platform]:
            return ""
        return " ".join(f"@available({name})" for name in granted(release))

    def condition(match: re.Match) -> str:
        kind, value = parse(match.group(1))
        if kind != "shorthand" or platform not in value:
            if strict:
                raise ShimError(f"{where}: `{match.group(0)}` must name iOS, macOS, tvOS, watchOS and visionOS")
            return "true"
        release = value[platform]
        if release <= FLOORS[platform]:
            return "true"
        return ", ".join(f"#available({name})" for name in granted(release))

    def directive(line: str) -> str:
        line = re.sub(r"\bos\((\w+)\)", lambda m: f"IAPSHIM_OS_{m.group(1).upper()}", line)
        line = line.replace("canImport(UIKit)", "IAPSHIM_UIKIT").replace("canImport(AppKit)", "IAPSHIM_APPKIT")
        line = line.replace("canImport(StoreKit)", "IAPSHIM_STOREKIT")
        return line.replace("targetEnvironment(macCatalyst)", "IAPSHIM_CATALYST")

    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            lines.append(line)
            continue
        if IMPORT.match(line):
            continue
        if stripped.startswith(("#if", "#elseif")):
            line = directive(line)
        line = ATTRIBUTE.sub(attribute, line)
        line = CONDITION.sub(condition, line)
        lines.append(line)
    return "\n".join(lines) + "\n"


# Whether a failure is what the run wants (a self-test's break): then it is reported as caught, not as a failure.
EXPECTING_FAILURE = False


def swiftc(arguments: list, label: str) -> bool:
    result = subprocess.run(["swiftc", *arguments], capture_output=True, text=True)
    errors = [line for line in (result.stdout + result.stderr).splitlines() if ": error:" in line]
    if result.returncode == 0:
        print(f"  {label}: ok")
        return True
    print(f"  {label}: {'caught' if EXPECTING_FAILURE else 'FAILED'}")
    for line in errors or (result.stdout + result.stderr).splitlines()[-20:]:
        print(f"    {line}")
    return False


def common_flags(modules: str) -> list:
    flags = ["-typecheck", "-parse-as-library", "-swift-version", "6", "-I", modules]
    for feature in UPCOMING:
        flags += ["-enable-upcoming-feature", feature]
    return flags


def module_pass(adapter: dict, modules: str, work: Path) -> bool:
    shims = work / "shims"
    shims.mkdir(exist_ok=True)
    sources = work / "module-pass"
    sources.mkdir(exist_ok=True)
    for name in ("UIKit", "StoreKit"):
        emit = [
            "-emit-module", "-module-name", name, "-parse-as-library", "-swift-version", "6",
            "-enable-library-evolution", "-I", str(shims), str(SHIM / f"{name}.swift"),
            "-emit-module-path", str(shims / f"{name}.swiftmodule"),
        ]
        result = subprocess.run(["swiftc", *emit], capture_output=True, text=True)
        if result.returncode != 0:
            print(result.stdout + result.stderr)
            raise ShimError(f"the {name} shim does not compile")
    files = []
    for name, text in adapter.items():
        path = sources / name
        path.write_text(text)
        files.append(str(path))
    return swiftc(
        [*common_flags(modules), "-I", str(shims), "-warnings-as-errors", "-module-name", "IAPStoreKit", *files],
        "module pass (the adapter against the StoreKit and UIKit modules)",
    )


def platform_pass(adapter: dict, modules: str, work: Path, platform: str) -> bool:
    shim_files = {"StoreKit.swift": (SHIM / "StoreKit.swift").read_text()}
    ui = UI_MODULE[platform]
    shim_files[f"{ui}.swift"] = (SHIM / f"{ui}.swift").read_text()
    everything = "\n".join([*shim_files.values(), *adapter.values()])
    domains = versions_in(everything, platform)
    folder = work / f"pass-{platform}"
    folder.mkdir(exist_ok=True)
    files = []
    for name, text in [*shim_files.items(), *adapter.items()]:
        path = folder / name
        path.write_text(rewrite(text, platform, domains, name, strict=name in adapter))
        files.append(str(path))
    flags = [*common_flags(modules), "-module-name", "IAPStoreKit", "-enable-experimental-feature", "CustomAvailability"]
    for each in sorted(domains):
        flags += ["-Xfrontend", "-define-dynamic-availability-domain", "-Xfrontend", domain(platform, each)]
    flags += ["-D", f"IAPSHIM_OS_{platform.upper()}", "-D", "IAPSHIM_STOREKIT", "-D", f"IAPSHIM_{ui.upper()}"]
    return swiftc([*flags, *files], f"{platform} pass (availability from {'.'.join(map(str, FLOORS[platform]))})")


def check(adapter: dict, modules: str, work: Path, passes: list) -> dict:
    results = {}
    for name in passes:
        results[name] = (
            module_pass(adapter, modules, work) if name == "module" else platform_pass(adapter, modules, work, name)
        )
    return results


# Breaks that each pass named must catch: a misused call, a newer API outside `if #available`, an API a
# platform does not have.
SELF_TESTS = [
    (
        "a call with a wrong label",
        "await Transaction.latest(for: productId)",
        "await Transaction.latest(forProduct: productId)",
        ["module"],
    ),
    (
        "a call whose result is used with the wrong optionality",
        "await Transaction.latest(for: productId)?.jwsRepresentation",
        "await Transaction.latest(for: productId).jwsRepresentation",
        ["module"],
    ),
    (
        "iOS 18's win-back offers outside `if #available`",
        "if #available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {",
        "if #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, *) {",
        ["iOS", "macOS", "tvOS", "watchOS", "visionOS"],
    ),
    (
        "a scene-less purchase on visionOS",
        "#if os(visionOS)\n                    // visionOS has no scene-less purchase",
        "#if false\n                    // visionOS has no scene-less purchase",
        ["visionOS"],
    ),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", required=True)
    parser.add_argument("--self-test", action="store_true")
    options = parser.parse_args()
    adapter = {path.name: path.read_text() for path in ADAPTER}
    passes = ["module", *FLOORS]
    with tempfile.TemporaryDirectory(prefix="iap-storekit-") as directory:
        work = Path(directory)
        print("IAPStoreKit against the documented StoreKit API:")
        try:
            results = check(adapter, options.modules, work, passes)
        except ShimError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        if not all(results.values()):
            print("error: the StoreKit adapter does not type-check against the documented API", file=sys.stderr)
            return 1
        if not options.self_test:
            return 0
        failures = 0
        global EXPECTING_FAILURE
        EXPECTING_FAILURE = True
        for title, old, new, expected in SELF_TESTS:
            print(f"self-test, {title}:")
            broken = dict(adapter)
            name = next((file for file, text in adapter.items() if old in text), None)
            if name is None:
                print(f"error: the self-test cannot find `{old}` in the adapter; update SELF_TESTS", file=sys.stderr)
                return 1
            broken[name] = adapter[name].replace(old, new, 1)
            results = check(broken, options.modules, work, expected)
            caught = [each for each, ok in results.items() if not ok]
            if caught != expected:
                print(f"error: expected {expected} to fail, {caught or 'none'} did", file=sys.stderr)
                failures += 1
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
