"""The embedding bench's run order, summary and table, with scripted runs (no Ray, no clock). What the bench measures
is reported, never asserted; this checks it reports right."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from embed_stats import BASELINE, markdown, round_ratios, schedule, summary

NAMES = ["tuned", "defaults", "+a", "+b"]


def report(configs: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A bench report of ``configs`` as embed_bench.py writes it, with ``fields`` set over its defaults."""
    data = {"rows": 10, "files": 2, "textBytes": 2**20, "meanChars": 2000.0}
    base = {
        "date": "2026-12-04",
        "machine": {"cpus": 2},
        "ray": "2.58.0",
        "runsPerConfig": 1,
        "cluster": "local",
        "data": data,
        "levers": [],
    }
    return {**base, "configs": configs, **fields}


def test_every_config_runs_once_a_round() -> None:
    order = schedule(NAMES, 3)
    assert len(order) == 12
    for r in range(3):
        assert sorted(name for rnd, name in order if rnd == r) == sorted(NAMES)
    assert [rnd for rnd, _ in order] == sorted(rnd for rnd, _ in order)  # rounds do not mix


def test_the_order_is_a_balanced_latin_square() -> None:
    order = schedule(NAMES, 4)
    rounds = [[name for rnd, name in order if rnd == r] for r in range(4)]
    assert rounds[0] == ["tuned", "defaults", "+b", "+a"]
    assert rounds[1] == ["defaults", "+a", "tuned", "+b"]  # the first round shifted by one
    # with as many rounds as configs, each config runs once at each position
    for name in NAMES:
        assert sorted(r.index(name) for r in rounds) == [0, 1, 2, 3]
    # and right after each other config once
    followers = Counter((r[i], r[i + 1]) for r in rounds for i in range(3))
    assert len(followers) == 4 * 3 and set(followers.values()) == {1}


def test_fewer_rounds_than_configs_never_repeat_a_position() -> None:
    names = ["tuned", "defaults", "+a", "+b", "+c", "+d"]
    order = schedule(names, 3)
    rounds = [[name for rnd, name in order if rnd == r] for r in range(3)]
    for name in names:
        assert len({r.index(name) for r in rounds}) == 3


def run(
    rnd: int, rate: float, load: float = 1.0, spilled: int = 0, block: int = 2**20, actors: int = 8
) -> dict[str, Any]:
    return {
        "round": rnd,
        "rowsPerSecond": rate,
        "load": load,
        "spilledBytes": spilled,
        "maxBlockBytes": block,
        "actors": actors,
    }


def test_the_summary_compares_medians_and_counts_rounds_won() -> None:
    base = [run(0, 100.0), run(1, 120.0), run(2, 90.0)]
    mine = [run(0, 110.0, load=3.0), run(1, 100.0, spilled=5), run(2, 150.0, load=2.0, block=3 * 2**20, actors=4)]
    row = summary("tuned", mine, base)
    assert row["medianRowsPerSecond"] == 110.0 and row["ratioToDefaults"] == 1.1
    assert (row["roundsBeatDefaults"], row["rounds"]) == (2, 3)
    assert row["load"] == {"min": 1.0, "median": 2.0, "max": 3.0}
    assert row["spilledBytesMax"] == 5 and row["maxBlockBytes"] == 3 * 2**20 and row["actors"] == [4, 8]
    json.dumps(row)  # the JSON the bench writes


def test_a_round_the_baseline_missed_is_not_counted() -> None:
    row = summary("+a", [run(0, 200.0), run(1, 200.0)], [run(1, 100.0)])
    assert (row["roundsBeatDefaults"], row["rounds"]) == (1, 1)


def test_the_baseline_is_compared_with_nothing() -> None:
    base = [run(0, 100.0), run(1, 80.0)]
    row = summary(BASELINE, base, base)
    assert row["ratioToDefaults"] == 1.0 and row["rounds"] == 0


def test_the_table_has_a_row_per_config_and_says_what_failed() -> None:
    base = [run(0, 100.0)]
    configs = [
        {"levers": "all four", **summary("tuned", [run(0, 150.0, block=16 * 2**20)], base)},
        {"levers": "none", **summary(BASELINE, base, base)},
        {"name": "+b", "levers": "b", "error": "RuntimeError('x')"},
    ]
    lever = {
        "lever": "Batch size",
        "planKey": "actorPool.batchSize",
        "planned": "1024 rows",
        "default": "1024 rows",
        "note": "A/A",
    }
    table = markdown(report(configs, levers=[lever]))
    assert "| Batch size | `actorPool.batchSize` | 1024 rows | 1024 rows | A/A |" in table
    assert "| `tuned` | all four | 150 | 1.5x | 1 of 1 | 150 | 1 | 0.0 MiB | 16.0 MiB | 8 |" in table
    assert "| `defaults` | none | 100 | 1.0x | - |" in table
    assert "failed: RuntimeError('x')" in table


def test_an_aa_pair_reports_the_benchs_noise() -> None:
    base = [run(0, 100.0), run(1, 200.0)]
    same = {"levers": "b", **summary("+b", [run(0, 80.0), run(1, 230.0)], base)}
    assert round_ratios(same, {"runs": base}) == [0.8, 1.15]
    configs = [{"levers": "none", **summary(BASELINE, base, base)}, same]
    assert "were 0.8, 1.15 (0.8-1.15x)" in markdown(report(configs, runsPerConfig=2, aaControl="+b"))
    assert "A/A" not in markdown(report(configs, runsPerConfig=2, aaControl=None))
