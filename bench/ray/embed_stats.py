"""The embedding bench's run order, summary and table (``bench/ray/embed_bench.py``), kept free of Ray so that
``test_embed_stats.py`` checks them without a cluster. A bench reports numbers; it never fails on one."""

from __future__ import annotations

import statistics
from typing import Any

#: The configuration every other is compared with, and the key of the throughput each run reports.
BASELINE = "defaults"
RATE = "rowsPerSecond"


def schedule(names: list[str], runs: int) -> list[tuple[int, str]]:
    """``(round, config)`` in run order: every config once a round, rounds of a balanced Latin square (Williams):
    round ``r`` is the first round's order shifted by ``r``, the first being ``0, 1, n-1, 2, n-2, ...``. Over ``n``
    rounds each config runs once at each position and, for an even ``n``, right after each other config once: a drift
    of the machine's load, or what a run leaves behind for the next, favours none."""
    n = len(names)
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low if len(first) % 2 else high)
        low, high = (low + 1, high) if len(first) % 2 == 0 else (low, high - 1)
    return [(r, names[(i + r) % n]) for r in range(runs) for i in first]


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _beats(runs: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> tuple[int, int]:
    """Rounds in which this config ran faster than the baseline in the same round, and rounds both ran."""
    base = {r["round"]: r[RATE] for r in baseline}
    shared = [r for r in runs if r["round"] in base]
    return sum(r[RATE] > base[r["round"]] for r in shared), len(shared)


def summary(name: str, runs: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> dict[str, Any]:
    """One config's counted runs: the median rows/s, its ratio to the baseline's median, the rounds it beat the
    baseline, and the range of load, spill, largest block and actors its runs saw (every run kept as measured)."""
    rates = [r[RATE] for r in runs]
    mine, base = _median(rates), _median([r[RATE] for r in baseline])
    won, rounds = _beats(runs, baseline) if name != BASELINE else (0, 0)
    loads = [r["load"] for r in runs]
    return {
        "name": name,
        "runs": runs,
        "medianRowsPerSecond": mine,
        "ratioToDefaults": round(mine / base, 3) if mine is not None and base else None,
        "roundsBeatDefaults": won,
        "rounds": rounds,
        "load": {"min": min(loads), "median": round(statistics.median(loads), 2), "max": max(loads)} if loads else None,
        "spilledBytesMax": max((r["spilledBytes"] for r in runs), default=None),
        "maxBlockBytes": max((r["maxBlockBytes"] for r in runs), default=None),
        "actors": sorted({r["actors"] for r in runs}),
    }


def round_ratios(config: dict[str, Any], baseline: dict[str, Any]) -> list[float]:
    """The config's rows/s over the baseline's in each round both ran: for a config that runs the very pipeline of
    the baseline (an A/A pair), their spread is the bench's noise at the load it ran under."""
    base = {r["round"]: r[RATE] for r in baseline.get("runs", [])}
    return [round(r[RATE] / base[r["round"]], 3) for r in config.get("runs", []) if base.get(r["round"])]


def _aa_line(report: dict[str, Any]) -> list[str]:
    configs = {c["name"]: c for c in report["configs"]}
    name = report.get("aaControl")
    if name not in configs or BASELINE not in configs:
        return []
    ratios = round_ratios(configs[name], configs[BASELINE])
    if not ratios:
        return []
    return [
        "",
        f"A/A check: `{name}` runs the same pipeline as `{BASELINE}`; its rows/s over defaults' in each round were "
        f"{', '.join(f'{x:g}' for x in ratios)} ({min(ratios):g}-{max(ratios):g}x). A ratio inside that spread "
        "is not a measured difference.",
    ]


def _mib(x: float | None) -> str:
    return "-" if x is None else f"{x / 2**20:.1f} MiB"


def _row(c: dict[str, Any]) -> list[str]:
    if "error" in c:
        return [f"`{c['name']}`", c["levers"], "-", "-", "-", "-", "-", "-", "-", f"failed: {c['error']}"]
    ratio = "-" if c["ratioToDefaults"] is None else f"{c['ratioToDefaults']}x"
    won = "-" if c["name"] == BASELINE else f"{c['roundsBeatDefaults']} of {c['rounds']}"
    rates = ", ".join(f"{r[RATE]:g}" for r in c["runs"])
    loads = ", ".join(f"{r['load']:g}" for r in c["runs"])
    actors = "/".join(str(a) for a in c["actors"])
    return [
        f"`{c['name']}`",
        c["levers"],
        f"{c['medianRowsPerSecond']:g}",
        ratio,
        won,
        rates,
        loads,
        _mib(c["spilledBytesMax"]),
        _mib(c["maxBlockBytes"]),
        actors,
    ]


def markdown(report: dict[str, Any]) -> str:
    """The bench's tables: the levers with their planned and default values, then one row per config."""
    data, lines = report["data"], []
    lines.append(
        f"Measured {report['date']} on {report['machine']['cpus']} CPUs, Ray {report['ray']}: {data['rows']} rows of "
        f"{data['meanChars']:.0f} characters on average in {data['files']} parquet files ({_mib(data['textBytes'])} of text); "
        f"{report['runsPerConfig']} counted runs per config after one warm-up each, in rounds of every config whose order "
        "shifts each round (a balanced Latin square); "
        f"medians. Cluster: {report['cluster']}.\n"
    )
    lines += ["| lever | plan key | tuned (planned) | default | note |", "|---|---|---|---|---|"]
    lines += [
        f"| {lv['lever']} | `{lv['planKey']}` | {lv['planned']} | {lv['default']} | {lv['note']} |"
        for lv in report["levers"]
    ]
    lines += [
        "",
        "| config | tuned levers | median rows/s | / defaults | rounds beat defaults | rows/s per run | load "
        "(1-min) per run | spilled (max) | largest block | actors that worked |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(str(cell).replace("|", "/") for cell in _row(c)) + " |" for c in report["configs"]]
    lines += _aa_line(report)
    return "\n".join(lines) + "\n"
