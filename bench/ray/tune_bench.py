"""``npm run bench:ray`` (second part): the closed loop of ``ray-gpu tune`` timed on real Ray. For each bad setting
of the tune stack's embedding job (a starved preprocessing pool, a tiny encoder batch, blocks so large the store
spills: ``runtime/e2e/tune_loop.py``), it runs the job once, hands that run's record to ``ray-gpu tune --write``,
then runs the bad plan (B) and the tuned one (A) ``--runs`` times each in ABBA order, every run on a fresh local
cluster. It reports rows per second and bytes spilled per run, the medians, the ratio A/B, and in how many
interleaved pairs (the i-th A run against the i-th B run) the tuned plan was faster. A report: it never fails on a
number (exit 1 only when a run could not be made)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Any

from bench_stats import bench_report, load_average, order, write_report
from tune_loop import BAD_SETTINGS, BadSetting, render, rows_per_second, run_job, stack_copy, tune


def _runs(bad: BadSetting, stacks: dict[str, str], work: str, runs: int) -> dict[str, list[dict[str, float]]]:
    """``runs`` runs a side of the bad (b) and tuned (a) plans, ABBA: rows/s, bytes spilled and the load at start."""
    rendered = {side: render(stack, os.path.join(work, f"rendered-{side}")) for side, stack in stacks.items()}
    out: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
    for i, side in enumerate(order(runs), 1):
        load = load_average()
        record = run_job(rendered[side], work, f"{side}-{i}")
        row = {
            "rowsPerSecond": round(rows_per_second(record), 1),
            "spilledBytes": record["objectStore"]["spilledBytes"],
            "load": load,
        }
        out[side].append(row)
        print(f"  {bad.name} run {i} ({'tuned' if side == 'a' else 'bad'}, load {load}): {row}", flush=True)
    return out


def measure(bad: BadSetting, work: str, runs: int) -> dict[str, Any]:
    """One bad setting: its first run's diagnosis and change, then the interleaved runs."""
    bad_stack = stack_copy(os.path.join(work, "bad"), bad)
    first = run_job(render(bad_stack, os.path.join(work, "rendered-first")), work, "first")
    tuned_stack = stack_copy(os.path.join(work, "tuned"), bad)
    result = tune(tuned_stack, first, work, write=True)
    counted = _runs(bad, {"a": tuned_stack, "b": bad_stack}, work, runs)
    a, b = ([r["rowsPerSecond"] for r in counted[s]] for s in ("a", "b"))
    return {
        "setting": bad.name,
        "line": bad.line,
        "stage": result["diagnosis"]["stage"],
        "evidence": result["diagnosis"]["evidence"],
        "changes": result["diff"][2:],
        "runs": counted,
        "medianRowsPerSecond": {"tuned": statistics.median(a), "bad": statistics.median(b)},
        "ratioTunedToBad": round(statistics.median(a) / statistics.median(b), 3),
        "pairsTunedFaster": sum(x > y for x, y in zip(a, b, strict=True)),
        "pairs": len(a),
        "spilledBytes": {
            "tuned": [r["spilledBytes"] for r in counted["a"]],
            "bad": [r["spilledBytes"] for r in counted["b"]],
        },
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"Measured {report['date']} on {report['machine']['cpus']} CPUs, Ray {report['ray']}: {report['runsPerSide']} runs a side, "
        "ABBA, each on a fresh local cluster; medians.\n",
        "| bad setting | tune names | change | rows/s bad | rows/s tuned | tuned / bad | pairs tuned faster | "
        "spilled bad | spilled tuned | load (1-min) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in report["measures"]:
        if "error" in m:
            lines.append(f"| `{m['line']}` | - | - | - | - | - | - | - | - | failed: {m['error']} |")
            continue
        loads = [r["load"] for side in ("a", "b") for r in m["runs"][side]]
        spilled = {k: f"{max(v) / 2**20:.0f} MiB" for k, v in m["spilledBytes"].items()}
        cells = [f"`{m['line']}`", m["stage"], "<br>".join(f"`{c}`" for c in m["changes"]) or "none"]
        cells += [m["medianRowsPerSecond"]["bad"], m["medianRowsPerSecond"]["tuned"], f"{m['ratioTunedToBad']}x"]
        cells += [
            f"{m['pairsTunedFaster']} of {m['pairs']}",
            spilled["bad"],
            spilled["tuned"],
            f"{min(loads)}-{max(loads)}",
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    import ray

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--out", required=True, help="folder for tune.json and tune.md")
    parser.add_argument("--runs", type=int, default=3, help="counted runs a side of each bad setting (default 3)")
    args = parser.parse_args()
    measures = []
    for bad in BAD_SETTINGS:
        try:
            measures.append(measure(bad, os.path.join(args.work, bad.name), args.runs))
        except Exception as e:  # reported in the table; the bench goes on to the next setting
            measures.append({"setting": bad.name, "line": bad.line, "error": repr(e)[:300]})
    report = bench_report(ray.__version__, args.runs, measures)
    write_report(args.out, "tune", report, markdown(report))
    return 1 if any("error" in m for m in measures) else 0


if __name__ == "__main__":
    sys.exit(main())
