"""The statistics and reports of ``npm run bench:ray``, kept free of Ray: which side runs when, medians, the
machine's load, and the JSON and Markdown the bench writes. A bench reports numbers; it never fails on one."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Side = Literal["a", "b"]
#: Which way a metric improves.
Better = Literal["lower", "higher", "neither"]


@dataclass(frozen=True)
class Metric:
    """One number a measure reports per run: its key in the run's result, what it is, its unit, and which way is
    better (``neither``: reported for what it shows, such as a cost paid for memory)."""

    key: str
    label: str
    unit: str
    better: Better


@dataclass(frozen=True)
class Measure:
    """One lever measured tuned (A, the plan's value) against default (B): ``run(side)`` runs the workload once on
    that side and returns its metrics by key."""

    name: str
    lever: str
    plan_key: str
    planned: str
    default: str
    metrics: tuple[Metric, ...]
    run: Callable[[Side], dict[str, float]]
    #: Counted runs a side, when fewer than the bench's ``--runs`` (a measure whose run takes a minute).
    max_runs: int | None = None

    def runs(self, asked: int) -> int:
        return min(asked, self.max_runs) if self.max_runs else asked


def order(runs: int) -> list[Side]:
    """Interleaved run order, ABBA ABBA ...: each side runs ``runs`` times, and neither gains from a drift of the
    machine's load (a trend favours neither side of an ABBA block)."""
    block: list[Side] = ["a", "b", "b", "a"]
    return [block[i % 4] for i in range(2 * runs)]


def load_average() -> float:
    """The machine's 1-minute load average (runnable processes), recorded with every run."""
    return round(os.getloadavg()[0], 2)


@dataclass
class Runs:
    """Every counted run of one measure: per side the metrics of each run, and the load when each run began."""

    values: dict[Side, list[dict[str, float]]] = field(default_factory=lambda: {"a": [], "b": []})
    loads: list[float] = field(default_factory=list)

    def add(self, side: Side, metrics: dict[str, float], load: float) -> None:
        self.values[side].append(metrics)
        self.loads.append(load)


def run_measure(
    measure: Measure, runs: int, load: Callable[[], float] = load_average, log: Callable[[str], None] = print
) -> Runs:
    """One warm-up run of each side (not counted: a cluster's first run starts worker processes), then ``runs`` runs
    a side in :func:`order`."""
    warm_up: tuple[Side, ...] = ("a", "b")
    for side in warm_up:
        measure.run(side)
    counted = Runs()
    for i, side in enumerate(order(measure.runs(runs)), 1):
        began = load()
        metrics = measure.run(side)
        counted.add(side, metrics, began)
        log(f"  {measure.name} run {i} ({side.upper()}, load {began}): {metrics}")
    return counted


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def summary(measure: Measure, counted: Runs) -> dict[str, Any]:
    """Medians per side and metric, and the ratio B/A of the medians, with every run's value and load."""
    rows = []
    for m in measure.metrics:
        a = [r[m.key] for r in counted.values["a"]]
        b = [r[m.key] for r in counted.values["b"]]
        ma, mb = _median(a), _median(b)
        rows.append(
            {
                **asdict(m),
                "a": a,
                "b": b,
                "medianA": ma,
                "medianB": mb,
                "ratioBtoA": round(mb / ma, 3) if ma and mb is not None else None,
            }
        )
    loads = counted.loads
    return {
        "name": measure.name,
        "lever": measure.lever,
        "planKey": measure.plan_key,
        "planned": measure.planned,
        "default": measure.default,
        "runsPerSide": len(counted.values["a"]),
        "load": {"min": min(loads), "median": _median(loads), "max": max(loads)} if loads else None,
        "metrics": rows,
    }


def verdict(row: dict[str, Any]) -> str:
    """In words, which side the runs favour (a report, never a pass or fail). A side is called better only when its
    runs do not overlap the other's (every run of one beats every run of the other); runs that overlap are "no clear
    difference", however the medians fall."""
    a, b, better = row["medianA"], row["medianB"], row["better"]
    if a is None or b is None:
        return "not measured"
    runs_a, runs_b = row.get("a") or [a], row.get("b") or [b]
    apart = max(runs_a) < min(runs_b) or max(runs_b) < min(runs_a)
    if not apart:
        return "no clear difference (the runs overlap)"
    if better == "neither":
        return "A > B" if a > b else "A < B"
    a_wins = a < b if better == "lower" else a > b
    return "A better" if a_wins else "B better"


def _number(x: float | None, unit: str) -> str:
    if x is None:
        return "-"
    return f"{x:g} {unit}".strip()


def markdown(report: dict[str, Any]) -> str:
    """The bench's table: one row per metric, medians of each side, the ratio and the load the runs saw."""
    head = (
        f"Measured {report['date']} on {report['machine']['cpus']} CPUs, Ray {report['ray']}, {report['runsPerSide']} runs a side "
        f"after one warm-up run each, in ABBA order; medians.\n\n"
        "| lever | plan key | metric | A: planned | B: default | median A | median B | B / A | the runs say | "
        "load (1-min, min-median-max) |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for m in report["measures"]:
        load = m["load"] or {}
        seen = f"{load.get('min')}-{load.get('median')}-{load.get('max')}" if load else "-"
        if "error" in m:
            lines.append(
                f"| {m['lever']} | `{m['planKey']}` | - | {m['planned']} | {m['default']} | - | - | - | failed: {m['error']} | - |"
            )
            continue
        for row in m["metrics"]:
            cells = [m["lever"], f"`{m['planKey']}`", row["label"], m["planned"], m["default"]]
            cells += [
                _number(row["medianA"], row["unit"]),
                _number(row["medianB"], row["unit"]),
                _number(row["ratioBtoA"], "x"),
                verdict(row),
                seen,
            ]
            lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def bench_report(ray_version: str, runs: int, measures: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The bench's report: the date, Ray's version, the machine, the runs a side and every measure."""
    import datetime as dt
    import platform

    machine = {"cpus": os.cpu_count(), "python": platform.python_version()}
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "ray": ray_version,
        "machine": machine,
        **extra,
        "runsPerSide": runs,
        "measures": measures,
    }


def write_report(folder: str, stem: str, report: dict[str, Any], table: str) -> None:
    """Writes ``<stem>.json`` and ``<stem>.md`` into ``folder`` and prints the table."""
    import json

    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{stem}.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(folder, f"{stem}.md"), "w", encoding="utf-8") as f:
        f.write(table)
    print("\n" + table, flush=True)
    print(f"bench:ray: wrote {folder}/{stem}.json and {stem}.md", flush=True)
