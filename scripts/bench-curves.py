"""Draws the curves phase of `make bench` (issue 29): one PNG per curve.

The harness (Benchmarks/Sources/bench/Bench+Curves.swift) measures the
points and runs this with the benchmark peer's Python (Benchmarks/peer/.venv,
where matplotlib is pinned):

  bench-curves.py --points RUN/curves.json --charts DIR [--benchmarks BENCHMARKS.md]

Writes DIR/<curve>.png for each curve in the points file, and with
--benchmarks replaces, for each, the text between `<!-- make bench: curve
NAME -->` and `<!-- /make bench: curve NAME -->` in BENCHMARKS.md with the
chart and a table of its numbers. A point the harness could not measure
carries an `error`: it is listed in the table and left out of the chart,
never drawn from a guess. Hollow markers are points measured with loss or
errors (the table says which).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after the backend is chosen
from matplotlib.axes import Axes
from matplotlib.ticker import StrMethodFormatter

Point = dict[str, object]

COLOURS = {"gateway": "#1f77b4", "peer": "#ff7f0e", "raw": "#2ca02c", "reference": "#7f7f7f"}
MARKERS = {"gateway": "o", "peer": "s", "raw": "^"}
NAMES = {"gateway": "blegateway", "peer": "peer (Bleak + aiohttp)", "raw": "raw libdbus"}
ORDER = ("gateway", "peer", "raw")


def number(value: object) -> float | None:
    """A point's numeric field, or None when it is absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def fmt(value: float | None, digits: int = 3) -> str:
    """A figure for a table: thousands grouped, about `digits` significant digits."""
    if value is None:
        return "—"
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.{max(0, digits - 1 - int(abs(value) >= 10))}f}"


@dataclass
class Series:
    """One subject's points of one quantity: x, y, and whether each is clean."""

    subject: str
    label: str
    xs: list[float]
    ys: list[float]
    clean: list[bool]


def series(
    points: Sequence[Point], subject: str, x: str, y: str | Callable[[Point], float | None], clean: str | None = None
) -> Series:
    """The measured points of `subject` (those without an error and with a value)."""
    xs: list[float] = []
    ys: list[float] = []
    flags: list[bool] = []
    for entry in points:
        if "error" in entry:
            continue
        x_value = number(entry.get(x))
        y_value = y(entry) if callable(y) else number(entry.get(y))
        if x_value is None or y_value is None:
            continue
        xs.append(x_value)
        ys.append(y_value)
        flags.append(clean is None or entry.get(clean) is True)
    return Series(subject, NAMES.get(subject, subject), xs, ys, flags)


def plot(axis: Axes, line: Series, colour: str | None = None, marker: str | None = None, dashed: bool = False) -> None:
    """A line through the points; hollow markers where a point is not clean."""
    if not line.xs:
        return
    colour = colour or COLOURS.get(line.subject, "black")
    marker = marker or MARKERS.get(line.subject, "o")
    axis.plot(line.xs, line.ys, color=colour, linestyle="--" if dashed else "-", linewidth=1.6, label=line.label)
    for x, y, clean in zip(line.xs, line.ys, line.clean, strict=True):
        axis.plot([x], [y], marker=marker, color=colour, markersize=6, markerfacecolor=colour if clean else "white")


def axes(title: str, panels: int) -> tuple[object, list[Axes]]:
    figure, grid = plt.subplots(1, panels, figsize=(6.2 * panels, 4.6), squeeze=False)
    figure.suptitle(title, fontsize=12)
    return figure, list(grid[0])


def finish(figure: object, panels: list[Axes], path: Path, note: str) -> None:
    for axis in panels:
        axis.grid(True, which="major", alpha=0.35)
        axis.grid(True, which="minor", alpha=0.12)
        axis.legend(fontsize=8)
    plt.figtext(0.01, 0.01, note, fontsize=7.5, color="#444444")
    plt.tight_layout(rect=(0, 0.04, 1, 0.95))
    plt.savefig(path, dpi=110)
    plt.close("all")


def thousands(axis: Axes) -> None:
    """A linear y axis with its figures grouped (25,000, not 25000)."""
    axis.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def log_x(axis: Axes, ticks: Sequence[float]) -> None:
    """A logarithmic x axis labelled at the curve's own steps."""
    axis.set_xscale("log")
    axis.set_xticks(list(ticks))
    axis.set_xticklabels([f"{tick:,.0f}" for tick in ticks])
    axis.minorticks_off()


def subject_points(curve: dict[str, object], subject: str) -> list[Point]:
    table = curve.get("series")
    if not isinstance(table, dict):
        return []
    entries = table.get(subject)
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def steps(curve: dict[str, object], key: str) -> list[float]:
    values = {number(entry.get(key)) for subject in ORDER for entry in subject_points(curve, subject)}
    return sorted(value for value in values if value is not None)


def cell(entries: list[Point], x: str, at: float, render: Callable[[Point], str]) -> str:
    for entry in entries:
        if number(entry.get(x)) == at:
            return f"no point: {entry['error']}" if "error" in entry else render(entry)
    return "—"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# MARK: The curves


def reads(curve: dict[str, object], path: Path, note: str) -> str:
    figure, (rate_axis, latency_axis) = axes("REST reads against concurrent clients", 2)
    clients = steps(curve, "clients")
    for subject in ORDER:
        points = subject_points(curve, subject)
        plot(rate_axis, series(points, subject, "clients", "rps", "clean"))
        plot(latency_axis, series(points, subject, "clients", "p50_us", "clean"))
    for axis in (rate_axis, latency_axis):
        log_x(axis, clients)
        axis.set_xlabel("concurrent clients (requests in flight)")
    rate_axis.set_ylabel("reads/s")
    rate_axis.set_ylim(bottom=0)
    thousands(rate_axis)
    latency_axis.set_ylabel("p50 latency (µs)")
    latency_axis.set_yscale("log")
    finish(figure, [rate_axis, latency_axis], path, note)
    rows = []
    for at in clients:
        row = [f"{at:,.0f}"]
        for subject in ORDER:
            row.append(
                cell(
                    subject_points(curve, subject),
                    "clients",
                    at,
                    lambda e: (
                        f"{fmt(number(e.get('rps')))} /s, p50 {fmt(number(e.get('p50_us')))} µs"
                        + ("" if e.get("clean") else f" ({e.get('errors')} errors)")
                    ),
                )
            )
        rows.append(row)
    return table(["clients", *(NAMES[s] for s in ORDER)], rows)


def per_notification(entry: Point) -> float | None:
    cpu, rate = number(entry.get("cpu_percent")), number(entry.get("rate"))
    return cpu * 10_000 / rate if cpu is not None and rate else None


def notify(curve: dict[str, object], path: Path, note: str) -> str:
    figure, (cpu_axis, each_axis) = axes("CPU against the notification rate (one subscriber)", 2)
    rates = steps(curve, "rate")
    for subject in ORDER:
        points = subject_points(curve, subject)
        plot(cpu_axis, series(points, subject, "rate", "cpu_percent", "clean"))
        plot(each_axis, series(points, subject, "rate", per_notification, "clean"))
    for axis in (cpu_axis, each_axis):
        log_x(axis, rates)
        axis.set_xlabel("notifications/s emitted")
        axis.set_yscale("log")
    cpu_axis.set_ylabel("CPU (% of one core)")
    each_axis.set_ylabel("CPU per notification (µs)")
    finish(figure, [cpu_axis, each_axis], path, note)

    def render(entry: Point) -> str:
        text = f"{fmt(number(entry.get('cpu_percent')))} % ({fmt(per_notification(entry))} µs each)"
        if entry.get("lossless") is not True:
            text += f", lost {fmt(number(entry.get('lost')))}"
        if entry.get("emitter_kept_up") is False:
            text += ", the responder fell behind (sent slower)"
        return text

    rows = [[f"{at:,.0f}", *(cell(subject_points(curve, s), "rate", at, render) for s in ORDER)] for at in rates]
    return table(["notifications/s", *(NAMES[s] for s in ORDER)], rows)


def fanout(curve: dict[str, object], path: Path, note: str) -> str:
    rate = number(curve.get("rate")) or 0
    figure, (delivered_axis, cpu_axis) = axes(f"Events delivered against subscribers, {rate:,.0f} values/s each", 2)
    subscribers = steps(curve, "subscribers")
    offered = Series(
        "reference", "offered: the rate to every subscriber", subscribers, [rate * s for s in subscribers], []
    )
    delivered_axis.plot(offered.xs, offered.ys, color=COLOURS["reference"], linestyle=":", label=offered.label)
    for subject in ("gateway", "peer"):
        points = subject_points(curve, subject)
        plot(delivered_axis, series(points, subject, "subscribers", "delivered_rate", "clean"))
        plot(cpu_axis, series(points, subject, "subscribers", "cpu_percent", "clean"))
    for axis in (delivered_axis, cpu_axis):
        log_x(axis, subscribers)
        axis.set_xlabel("SSE subscribers of one characteristic")
    delivered_axis.set_yscale("log")
    delivered_axis.set_ylabel("events delivered/s (all streams)")
    cpu_axis.set_ylabel("CPU (% of one core)")
    cpu_axis.set_ylim(bottom=0)
    finish(figure, [delivered_axis, cpu_axis], path, note)

    def render(entry: Point) -> str:
        p50 = (number(entry.get("p50_us")) or 0) / 1000
        text = (
            f"{fmt(number(entry.get('delivered_rate')))} /s, CPU {fmt(number(entry.get('cpu_percent')))} %, "
            f"p50 {fmt(p50)} ms, peak RSS {fmt(number(entry.get('peak_rss_mib')))} MiB"
        )
        missing = number(entry.get("not_delivered")) or 0
        dropped = (number(entry.get("dropped")) or 0) + (number(entry.get("failed")) or 0)
        if missing or dropped:
            text += f"; {fmt(missing)} not delivered, {fmt(dropped)} streams dropped or refused"
        return text

    rows = [
        [
            f"{at:,.0f}",
            f"{rate * at:,.0f} /s",
            *(cell(subject_points(curve, s), "subscribers", at, render) for s in ("gateway", "peer")),
        ]
        for at in subscribers
    ]
    return table(["subscribers", "offered", NAMES["gateway"], NAMES["peer"]], rows)


def kept(curve: dict[str, object], path: Path, note: str) -> str:
    figure, (rss_axis, cpu_axis) = axes("blegateway against kept devices (simulator, heart-rate sensors at 1 Hz)", 2)
    points = subject_points(curve, "gateway")
    devices = steps(curve, "devices")
    states = (
        ("idle", "started, nothing kept", "#9ecae1", ":"),
        ("kept", "kept and connected", "#4292c6", "--"),
        ("subscribed", "kept, a standing subscription each", "#08519c", "-"),
    )
    for key, label, colour, style in states:
        for axis, field in ((rss_axis, f"{key}_rss_mib"), (cpu_axis, f"{key}_cpu_percent")):
            line = series(points, "gateway", "devices", field)
            if line.xs:
                axis.plot(line.xs, line.ys, color=colour, linestyle=style, marker="o", label=f"blegateway: {label}")
    for axis in (rss_axis, cpu_axis):
        log_x(axis, devices)
        axis.set_xlabel("kept devices (and standing subscriptions)")
        axis.set_ylim(bottom=0)
    rss_axis.set_ylabel("RSS (MiB)")
    cpu_axis.set_ylabel("CPU (% of one core)")
    finish(figure, [rss_axis, cpu_axis], path, note)

    fields = (
        "idle_rss_mib",
        "kept_rss_mib",
        "subscribed_rss_mib",
        "kept_cpu_percent",
        "subscribed_cpu_percent",
        "connected_s",
    )
    units = (" MiB", " MiB", " MiB", " %", " %", " s")
    rows = []
    for at in devices:
        entry = next((e for e in points if number(e.get("devices")) == at), None)
        if entry is None or "error" in entry:
            rows.append([f"{at:,.0f}", f"no point: {entry['error']}" if entry else "—", *([""] * 5)])
            continue
        rows.append([f"{at:,.0f}", *(fmt(number(entry.get(f))) + u for f, u in zip(fields, units, strict=True))])
    header = [
        "devices",
        "RSS, nothing kept",
        "RSS, kept",
        "RSS, subscribed",
        "CPU, kept",
        "CPU, subscribed",
        "all connected after",
    ]
    return table(header, rows)


def scan(curve: dict[str, object], path: Path, note: str) -> str:
    interval = number(curve.get("interval_s")) or 1
    figure, (rate_axis, cpu_axis) = axes(f"Scan events against advertisers in range (each every {interval:g} s)", 2)
    devices = steps(curve, "devices")
    advertised = Series("reference", "advertised (devices ÷ interval)", devices, [d / interval for d in devices], [])
    rate_axis.plot(advertised.xs, advertised.ys, color=COLOURS["reference"], linestyle=":", label=advertised.label)
    counted = series(subject_points(curve, "gateway"), "reference", "devices", "offered_per_s")
    counted.label = "offered: counted by a second raw client beside the gateway"
    rate_axis.plot(counted.xs, counted.ys, color=COLOURS["reference"], linestyle="--", label=counted.label)
    for subject in ("gateway", "raw"):
        points = subject_points(curve, subject)
        plot(rate_axis, series(points, subject, "devices", "events_per_s"))
        plot(cpu_axis, series(points, subject, "devices", "cpu_percent"))
    for axis in (rate_axis, cpu_axis):
        log_x(axis, devices)
        axis.set_xlabel("simulated advertisers in range")
    rate_axis.set_yscale("log")
    rate_axis.set_ylabel("scan events/s received")
    cpu_axis.set_ylabel("CPU (% of one core)")
    cpu_axis.set_ylim(bottom=0)
    finish(figure, [rate_axis, cpu_axis], path, note)

    def render(entry: Point) -> str:
        return f"{fmt(number(entry.get('events_per_s')))} /s, CPU {fmt(number(entry.get('cpu_percent')))} %"

    rows = [
        [
            f"{at:,.0f}",
            f"{at / interval:,.0f} /s",
            *(cell(subject_points(curve, s), "devices", at, render) for s in ("gateway", "raw")),
        ]
        for at in devices
    ]
    return table(["advertisers", "advertised", NAMES["gateway"], NAMES["raw"] + " (alone, same discovery)"], rows)


CURVES: dict[str, Callable[[dict[str, object], Path, str], str]] = {
    "reads": reads,
    "notify": notify,
    "fanout": fanout,
    "kept": kept,
    "scan": scan,
}


def mark_clean(points: dict[str, object]) -> None:
    """Which points are clean: reads without errors; notifications without
    loss and at the rate asked (the responder kept it); fan-out without
    values lost or streams dropped."""
    notify = points.get("notify")
    if isinstance(notify, dict):
        for subject in ORDER:
            for entry in subject_points(notify, subject):
                entry["clean"] = entry.get("lossless") is True and entry.get("emitter_kept_up") is not False
    for name, errors in (("reads", ("errors",)), ("fanout", ("not_delivered", "dropped", "failed"))):
        curve = points.get(name)
        if not isinstance(curve, dict):
            continue
        for subject in ORDER:
            for entry in subject_points(curve, subject):
                entry["clean"] = all(not number(entry.get(key)) for key in errors)


def replace_section(text: str, name: str, body: str) -> tuple[str, bool]:
    begin, end = f"<!-- make bench: curve {name} -->", f"<!-- /make bench: curve {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        return text, False
    return pattern.sub(lambda _: f"{begin}\n{body.strip()}\n{end}", text, count=1), True


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=Path, required=True, help="the run's curves.json")
    parser.add_argument("--charts", type=Path, required=True, help="where the PNGs go")
    parser.add_argument("--benchmarks", type=Path, help="BENCHMARKS.md, whose curve sections are rewritten")
    arguments = parser.parse_args(argv)
    points = json.loads(arguments.points.read_text())
    if not isinstance(points, dict):
        print("bench-curves: the points file holds no object", file=sys.stderr)
        return 1
    mark_clean(points)
    arguments.charts.mkdir(parents=True, exist_ok=True)
    text = arguments.benchmarks.read_text() if arguments.benchmarks else ""
    seconds = points.get("point_seconds")
    for name, draw in CURVES.items():
        curve = points.get(name)
        if not isinstance(curve, dict):
            continue
        path = arguments.charts / f"{name}.png"
        load = f"load average {curve.get('load_average_before')} → {curve.get('load_average_after')}"
        note = f"{seconds} s a point; {load}; 2-core machine; hollow markers: loss or errors. " + str(
            curve.get("note", "")
        )
        rows = draw(curve, path, note.strip())
        print(f"{path}")
        if arguments.benchmarks:
            image = os.path.relpath(path, arguments.benchmarks.parent)
            body = f"![{name}]({image})\n\n{rows}\n{seconds} s a point, {curve.get('seconds')} s in all; {load}.\n"
            text, found = replace_section(text, name, body)
            if not found:
                print(f"bench-curves: no curve {name} markers in {arguments.benchmarks}", file=sys.stderr)
    if arguments.benchmarks:
        arguments.benchmarks.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
