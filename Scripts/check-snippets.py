#!/usr/bin/env python3
"""Type-checks every Swift snippet of the guides against the package's built modules, so that none can rot.

Every fenced ```swift block of README.md, Documentation/*.md and the DocC catalogs' pages
(Sources/<Module>/<Module>.docc/*.md) is written to a file of its own and type-checked with
`swiftc -typecheck` as top-level code (a main file: top-level `await` and `try` work), against the modules of
the debug build (`swift build` first). A failure names the guide's file and line: each block starts with a
`#sourceLocation` directive pointing at it.

The fence's info string may say more, in words separated by spaces:

    ```swift context=pipeline        the block is preceded by Documentation/Snippets/pipeline.swift (or
                                     Snippets/pipeline.swift): the imports and the values the guide assumes
                                     (`let pipeline: DeliveryPipeline = assumed()`); several contexts are
                                     separated by commas, `context=server,request`. A context names the
                                     contexts it builds on in a first line `// includes: catalog, request`;
                                     Documentation/Snippets/assumed.swift (`assumed()`) comes first.
    ```swift library                 declarations only, checked as a library file (`@Test func ...`)
    ```swift deprecated              uses a deprecated API on purpose: its deprecation warnings are expected
    ```swift partial                 a fragment shown for reading (a Package.swift excerpt): not compiled
    ```swift needs=SwiftUI           needs a module this package cannot build against on Linux (an Apple SDK,
                                     another package: SwiftUI, UIKit, StoreKit, Vapor, ...): not compiled.
                                     Keep such blocks to the glue; what they call is shown in a checked block.

In a DocC catalog, where docc takes the info string for its own options, the words go in a comment on the line
before the fence instead: `<!-- check-snippets: needs=StoreKit -->`.

Any other warning fails the block, except that a value is never used (a snippet shows values for reading).
Every `.product(name: "X", package: "swift-iap")` in any block, partial or not, must name a product of
Package.swift.

Usage: Scripts/check-snippets.py [--keep DIR] [FILE.md ...]   (default: every guide; --keep leaves the
                                                               generated files in DIR)
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTEXT_DIRS = [ROOT / "Documentation" / "Snippets", ROOT / "Snippets"]
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*swift\b(?P<info>[^`]*)$")
KNOWN_WORDS = {"partial", "library", "deprecated"}
COMMENT = re.compile(r"^<!--\s*check-snippets:\s*(.*?)\s*-->$")
# The system-library modules an imported module may need loaded, with their headers' flags.
C_MODULES = {
    "CIAPOpenSSL": ("Sources/CIAPOpenSSL/module.modulemap", "libcrypto"),
    "CIAPLibPQ": ("Sources/CIAPLibPQ/module.modulemap", "libpq"),
    "CIAPMicroHTTPD": ("Sources/CIAPMicroHTTPD/module.modulemap", "libmicrohttpd"),
}


class Block:
    def __init__(self, path: Path, line: int, info: str, lines: list):
        self.path = path
        self.line = line  # the line of the block's first code line, 1-based
        self.words = info.split()
        self.lines = lines
        self.contexts = []
        self.needs = []
        for word in self.words:
            if word.startswith("context="):
                self.contexts += [name for name in word[len("context=") :].split(",") if name]
            if word.startswith("needs="):
                self.needs += [name for name in word[len("needs=") :].split(",") if name]

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def has(self, word: str) -> bool:
        return word in self.words


def blocks_of(path: Path) -> list:
    found = []
    lines = path.read_text().split("\n")
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, fence, info = match.group("indent"), match.group("fence"), match.group("info")
        # docc reads a fence's info string as its own options, so a DocC page puts the words in a comment above.
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        comment = COMMENT.match(previous.strip())
        if comment:
            info = f"{info} {comment.group(1)}"
        body = []
        index += 1
        start = index + 1
        while index < len(lines) and not lines[index].strip().startswith(fence):
            text = lines[index]
            body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
            index += 1
        found.append(Block(path, start, info.strip(), body))
        index += 1
    return found


def guides(arguments: list) -> list:
    if arguments:
        return [Path(argument).resolve() for argument in arguments]
    paths = [ROOT / "README.md"]
    paths += sorted((ROOT / "Documentation").glob("*.md"))
    paths += sorted((ROOT / "Sources").glob("*/*.docc/**/*.md"))
    return paths


def context_file(name: str) -> Path:
    for directory in CONTEXT_DIRS:
        candidate = directory / f"{name}.swift"
        if candidate.is_file():
            return candidate
    raise SystemExit(f"check-snippets: no context '{name}' in " + " or ".join(str(d) for d in CONTEXT_DIRS))


def context_order(names: list) -> list:
    """The contexts of a block with those they include, each once, included ones first."""
    ordered = []

    def add(name, chain):
        if name in chain:
            raise SystemExit(f"check-snippets: context '{name}' includes itself: {' -> '.join(chain + [name])}")
        if name in ordered:
            return
        first = context_file(name).read_text().split("\n", 1)[0]
        if first.startswith("// includes:"):
            for included in first[len("// includes:") :].replace(",", " ").split():
                add(included, chain + [name])
        ordered.append(name)

    if names:
        add("assumed", [])
    for name in names:
        add(name, [])
    return ordered


def source_of(block: Block) -> str:
    parts = []
    for name in context_order(block.contexts):
        path = context_file(name)
        parts.append(f'#sourceLocation(file: "{path}", line: 1)')
        parts.append(path.read_text())
    parts.append(f'#sourceLocation(file: "{block.path}", line: {block.line})')
    parts.extend(block.lines)
    parts.append("#sourceLocation()")
    return "\n".join(parts) + "\n"


def compiler_flags() -> list:
    bin_path = subprocess.run(
        ["swift", "build", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    modules = Path(bin_path) / "Modules"
    if not (modules / "IAPCore.swiftmodule").exists():
        raise SystemExit(f"check-snippets: no built modules in {modules}; run `swift build` first")
    flags = ["-swift-version", "6", "-I", str(modules)]
    flags += ["-enable-upcoming-feature", "MemberImportVisibility", "-enable-upcoming-feature", "ExistentialAny"]
    for module_map, package in C_MODULES.values():
        flags += ["-Xcc", f"-fmodule-map-file={ROOT / module_map}"]
        cflags = subprocess.run(["pkg-config", "--cflags", package], capture_output=True, text=True).stdout.split()
        for flag in cflags:
            flags += ["-Xcc", flag]
    # C targets built from source (e.g. CIAPCRC32C): SwiftPM writes their module maps beside their objects.
    for generated in sorted(Path(bin_path).glob("CIAP*.build/module.modulemap")):
        flags += ["-Xcc", f"-fmodule-map-file={generated}"]
    return flags


def check(block: Block, directory: Path, flags: list, number: int) -> tuple:
    stem = re.sub(r"[^A-Za-z0-9]+", "_", block.name)
    file = directory / f"{number:03}_{stem}.swift"
    file.write_text(source_of(block))
    command = ["swiftc", "-typecheck", *flags]
    if block.has("library"):
        command.append("-parse-as-library")
    command.append(str(file))
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    return block, result.returncode == 0 and not unexpected_warnings(block, output), output


UNUSED = re.compile(r"was never used|is unused|was never mutated|never used; consider")


def unexpected_warnings(block: Block, output: str) -> list:
    found = []
    for line in output.splitlines():
        if " warning: " not in line:
            continue
        if UNUSED.search(line) or (block.has("deprecated") and " is deprecated" in line):
            continue
        found.append(line)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="write the generated files to DIR and keep them")
    parser.add_argument("files", nargs="*", help="guides to check (default: all)")
    arguments = parser.parse_args()

    blocks = [block for path in guides(arguments.files) for block in blocks_of(path)]
    for block in blocks:
        unknown = [w for w in block.words if w not in KNOWN_WORDS and not re.match(r"(context|needs)=", w)]
        if unknown:
            print(f"{block.name}: unknown fence word(s) {unknown}; known: {sorted(KNOWN_WORDS)}, context=, needs=")
            return 1
    products = set(re.findall(r'\.library\(\s*name:\s*"([^"]+)"', (ROOT / "Package.swift").read_text()))
    wrong_products = []
    for block in blocks:
        for name in re.findall(r'\.product\(\s*name:\s*"([^"]+)",\s*package:\s*"swift-iap"', "\n".join(block.lines)):
            if name not in products:
                wrong_products.append(f"{block.name}: no library product '{name}' in Package.swift")
    partial = [block for block in blocks if block.has("partial")]
    foreign = [block for block in blocks if block.needs and block not in partial]
    checked = [block for block in blocks if block not in partial and block not in foreign]

    flags = compiler_flags()
    directory = Path(arguments.keep).resolve() if arguments.keep else Path(tempfile.mkdtemp(prefix="snippets."))
    directory.mkdir(parents=True, exist_ok=True)
    failures = []
    try:
        jobs = max(1, min(2, os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(check, block, directory, flags, n) for n, block in enumerate(checked)]
            for future in futures:
                block, passed, output = future.result()
                if not passed:
                    failures.append((block, output))
    finally:
        if not arguments.keep:
            shutil.rmtree(directory, ignore_errors=True)

    for block, output in failures:
        print(f"FAIL {block.name}" + (f" (context {', '.join(block.contexts)})" if block.contexts else ""))
        for text in output.splitlines():
            print("    " + text.replace(str(ROOT) + "/", ""))
    for text in wrong_products:
        print(text)
    for block in partial:
        print(f"partial, not compiled: {block.name}")
    for block in foreign:
        print(f"needs {', '.join(block.needs)}, not compiled: {block.name}")
    files = len({block.path for block in blocks})
    print(
        f"snippets: {len(checked) - len(failures)} of {len(checked)} compile"
        f" ({len(blocks)} swift blocks in {files} files; {len(partial)} partial, {len(foreign)} need another"
        " module)"
    )
    return 1 if failures or wrong_products else 0


if __name__ == "__main__":
    sys.exit(main())
