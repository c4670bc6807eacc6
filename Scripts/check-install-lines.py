#!/usr/bin/env python3
"""Checks that the guides' install line names every Debian package the build needs.

The packages are Package.swift's `.apt([...])` providers (one per system library: OpenSSL, libpq, libmicrohttpd),
plus `pkgconf` (or `pkg-config`), which finds them. Each guide must have an inline `apt-get install ...` command
(in backticks, on one line) that names all of them, so that a reader on a fresh machine installs everything at once.

Usage: Scripts/check-install-lines.py                   (README.md and Documentation/GettingStarted.md)
       Scripts/check-install-lines.py GUIDE.md...       (those guides)

Exit status: 0 every guide names every package, 1 a guide misses one (each named on standard error).
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ["README.md", "Documentation/GettingStarted.md"]
# What finds the system libraries: either name is the same Debian package (pkg-config is pkgconf's transitional name).
PKG_CONFIG = ("pkgconf", "pkg-config")


def apt_packages(package_swift: str) -> list[str]:
    """Every package of every `.apt([...])` provider, in the order Package.swift names them."""
    names: list[str] = []
    for match in re.finditer(r"\.apt\(\s*\[([^\]]*)\]\s*\)", package_swift):
        for name in re.findall(r'"([^"]+)"', match.group(1)):
            if name not in names:
                names.append(name)
    return names


def install_lines(text: str) -> list[tuple[int, set[str]]]:
    """Each inline `apt-get install ...` command of a guide: its line number and the packages it names."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for command in re.findall(r"`(?:sudo\s+)?apt-get\s+install\s+([^`]*)`", line):
            found.append((number, {word for word in command.split() if not word.startswith("-")}))
    return found


def main() -> int:
    package_swift = (ROOT / "Package.swift").read_text()
    required = apt_packages(package_swift)
    if not required:
        print("check-install-lines: Package.swift has no .apt([...]) provider", file=sys.stderr)
        return 1
    uses_pkg_config = "pkgConfig:" in package_swift
    expected = " ".join(required + [PKG_CONFIG[0]] if uses_pkg_config else required)
    guides = sys.argv[1:] or GUIDES
    failed = False
    for guide in guides:
        path = Path(guide) if Path(guide).is_absolute() else ROOT / guide
        lines = install_lines(path.read_text())
        if not lines:
            print(f"{guide}: no `apt-get install ...` line (it must name {expected})", file=sys.stderr)
            failed = True
            continue
        # The install line is the one that names the most of the build's packages; it must name them all.
        number, named = max(lines, key=lambda item: len([name for name in required if name in item[1]]))
        missing = [name for name in required if name not in named]
        if uses_pkg_config and not any(name in named for name in PKG_CONFIG):
            missing.append(PKG_CONFIG[0])
        for name in missing:
            print(
                f"{guide}:{number}: the install line does not name {name} (the build needs it; "
                f"the line must name {expected})",
                file=sys.stderr,
            )
        failed = failed or bool(missing)
        if not missing:
            print(f"{guide}:{number}: names {' '.join(sorted(named))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
