#!/usr/bin/env python3
"""Draws the scale charts of Documentation/Benchmarks.md from the benchmarks' JSON, as SVG (no library needed).

Inputs (either may be left out):
  --file-store FILE [FILE ...]
                      the output of `iap-bench store --transactions N,N,...`, one invocation or several whose
                      sizes are put together (a size given twice: the later file's) (the file store: open[i].transactions,
                      open[i].openSeconds.median, open[i].peakResidentMB.max, open[i].deepPageMilliseconds.p99,
                      open[i].deliveries.perSecond)
  --postgres FILE     the output of `iap-bench store --database URL --scale N,N,...` (scale[i].transactions,
                      scale[i].deliveries.perSecond, scale[i].entitlementsMilliseconds.p99,
                      scale[i].deepPageMilliseconds.p99, scale[i].diskBytes.total)
Output: --out DIR gets open-time.svg and memory.svg (the file store; PostgreSQL loads nothing when it opens),
deliveries.svg and read-latency.svg (both stores) and disk.svg (PostgreSQL). The x axis is the ledger's size (log
scale).

Usage: Scripts/bench-charts.py --file-store store.json --postgres scale.json --out Documentation/images/benchmarks
"""

import argparse
import html
import json
import math
import sys
from pathlib import Path

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 80, 190, 40, 60
COLORS = ["#1f6feb", "#d9480f", "#2f9e44", "#7048e8"]


def nice_ceiling(value: float) -> float:
    """A round number at or above `value` for the top of the y axis."""
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        candidate = step * 10**exponent
        if candidate >= value:
            return candidate
    return 10 ** (exponent + 1)


def size_label(size: float) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:g}M"
    if size >= 1_000:
        return f"{size / 1_000:g}k"
    return f"{size:g}"


def value_label(value: float) -> str:
    if value == 0:
        return "0"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 0.1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def chart(title: str, unit: str, series: list, target: float | None = None, target_label: str = "") -> str:
    """An SVG line chart: `series` is [(name, [(size, value), ...]), ...]; an optional dashed target line."""
    points = [point for _, values in series for point in values]
    if not points:
        raise ValueError(f"no data for {title}")
    sizes = sorted({size for size, _ in points})
    low, high = math.log10(min(sizes)), math.log10(max(sizes))
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    top = nice_ceiling(max([value for _, value in points] + ([target] if target else [])) * 1.1)
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(size: float) -> float:
        return LEFT + (math.log10(size) - low) / (high - low) * plot_width

    def y(value: float) -> float:
        return TOP + plot_height - value / top * plot_height

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{html.escape(title)}</text>',
    ]
    for step in range(5):
        value = top * step / 4
        parts.append(
            f'<line x1="{LEFT}" y1="{y(value):.1f}" x2="{LEFT + plot_width}" y2="{y(value):.1f}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{html.escape(value_label(value))}</text>'
        )
    for size in sizes:
        parts.append(
            f'<text x="{x(size):.1f}" y="{TOP + plot_height + 18}" text-anchor="middle">{size_label(size)}</text>'
        )
    parts.append(
        f'<text x="{LEFT + plot_width / 2}" y="{HEIGHT - 18}" text-anchor="middle">'
        "transactions in the ledger (log scale)</text>"
    )
    parts.append(
        f'<text x="18" y="{TOP + plot_height / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {TOP + plot_height / 2})">{html.escape(unit)}</text>'
    )
    parts.append(
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_width}" height="{plot_height}" fill="none" stroke="#888"/>'
    )
    legend_y = TOP + 10
    if target:
        parts.append(
            f'<line x1="{LEFT}" y1="{y(target):.1f}" x2="{LEFT + plot_width}" y2="{y(target):.1f}" '
            'stroke="#c92a2a" stroke-dasharray="6 4"/>'
        )
        parts.append(
            f'<text x="{LEFT + plot_width + 10}" y="{y(target) + 4:.1f}" fill="#c92a2a">'
            f"{html.escape(target_label)}</text>"
        )
    for index, (name, values) in enumerate(series):
        color = COLORS[index % len(COLORS)]
        ordered = sorted(values)
        if len(ordered) > 1:
            path = " ".join(f"{x(size):.1f},{y(value):.1f}" for size, value in ordered)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for size, value in ordered:
            parts.append(f'<circle cx="{x(size):.1f}" cy="{y(value):.1f}" r="4" fill="{color}"/>')
            parts.append(
                f'<text x="{x(size) + 6:.1f}" y="{y(value) - 8:.1f}" fill="{color}">'
                f"{html.escape(value_label(value))}</text>"
            )
        legend_y += 18
        parts.append(f'<rect x="{LEFT + plot_width + 10}" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{LEFT + plot_width + 24}" y="{legend_y}">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def get(document: dict, *path, default=None):
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return default
        document = document[key]
    return document


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file-store", type=Path, nargs="+", help="iap-bench store JSON (the file store)")
    parser.add_argument("--postgres", type=Path, help="iap-bench store --database --scale JSON")
    parser.add_argument("--out", type=Path, required=True, help="directory for the SVG files")
    arguments = parser.parse_args()
    if not arguments.file_store and not arguments.postgres:
        parser.error("give --file-store, --postgres or both")
    arguments.out.mkdir(parents=True, exist_ok=True)
    written = []

    file_open = []
    deliveries = []
    writers = "W"
    if arguments.file_store:
        by_size = {}
        targets = {}
        for path in arguments.file_store:
            document = json.loads(path.read_text())
            targets = document.get("targets", targets)
            for entry in document.get("open", []):
                if "transactions" in entry:
                    by_size[entry["transactions"]] = entry
        file_open = [by_size[size] for size in sorted(by_size)]
        if not file_open:
            print(f"{' '.join(map(str, arguments.file_store))}: no open[] figures", file=sys.stderr)
            return 1
        with_deliveries = [e for e in file_open if get(e, "deliveries", "perSecond") is not None]
        if with_deliveries:
            writers = get(with_deliveries[0], "deliveries", "writers", default=writers)
            deliveries.append(
                ("file store", [(e["transactions"], get(e, "deliveries", "perSecond")) for e in with_deliveries])
            )
        charts = {
            "open-time.svg": chart(
                "File store: time to open",
                "seconds (median of runs)",
                [("file store", [(e["transactions"], get(e, "openSeconds", "median", default=0)) for e in file_open])],
                targets.get("openSecondsAt1M"),
                "target at 1M",
            ),
            "memory.svg": chart(
                "File store: peak memory opening",
                "MB resident (largest of runs)",
                [("file store", [(e["transactions"], get(e, "peakResidentMB", "max", default=0)) for e in file_open])],
                targets.get("peakMemoryMBAt1M"),
                "target at 1M",
            ),
        }
        for name, svg in charts.items():
            (arguments.out / name).write_text(svg)
            written.append(name)

    if arguments.postgres:
        document = json.loads(arguments.postgres.read_text())
        scale = [entry for entry in document.get("scale", []) if "transactions" in entry]
        if not scale:
            print(f"{arguments.postgres}: no scale[] figures", file=sys.stderr)
            return 1
        writers = get(scale[0], "deliveries", "writers", default=writers)
        deliveries.append(
            (
                "PostgreSQL (hook)",
                [(e["transactions"], get(e, "deliveries", "perSecond", default=0)) for e in scale],
            )
        )
        latency = [
            ("PostgreSQL entitlements", [(e["transactions"], get(e, "entitlementsMilliseconds", "p99")) for e in scale]),
            ("PostgreSQL deep page", [(e["transactions"], get(e, "deepPageMilliseconds", "p99")) for e in scale]),
        ]
        if file_open:
            latency.append(
                ("file store deep page", [(e["transactions"], get(e, "deepPageMilliseconds", "p99")) for e in file_open])
            )
        latency = [(name, [(s, v) for s, v in values if v is not None]) for name, values in latency]
        charts = {
            "read-latency.svg": chart("Reads: p99 latency", "milliseconds (p99)", latency, 5, "target (5 ms)"),
            "disk.svg": chart(
                "PostgreSQL: disk taken by the ledger",
                "GB (rows, signed transactions, indexes)",
                [("PostgreSQL", [(e["transactions"], get(e, "diskBytes", "total", default=0) / 1e9) for e in scale])],
            ),
        }
        for name, svg in charts.items():
            (arguments.out / name).write_text(svg)
            written.append(name)

    if deliveries:
        (arguments.out / "deliveries.svg").write_text(
            chart(
                f"Durable deliveries/s into a ledger of that size, {writers} writers",
                "deliveries per second (median of runs)",
                deliveries,
            )
        )
        written.append("deliveries.svg")

    print("wrote " + ", ".join(str(arguments.out / name) for name in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
