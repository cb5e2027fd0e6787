"""The Ray bench's arithmetic and reports, with scripted measures (no Ray, no clock): run order, warm-up, medians,
ratios, verdicts and the table. What the bench measures is reported, never asserted; this checks it reports right."""

from __future__ import annotations

import json

from bench_stats import Measure, Metric, Side, markdown, order, run_measure, summary, verdict


def scripted(values: dict[Side, list[float]]) -> tuple[Measure, list[Side]]:
    """A measure whose runs return the next scripted value of their side, and the sides in the order they ran."""
    ran: list[Side] = []
    left = {side: list(v) for side, v in values.items()}

    def run(side: Side) -> dict[str, float]:
        ran.append(side)
        return {"x": left[side].pop(0)}

    return Measure("m", "Lever", "a.key", "planned", "default", (Metric("x", "the metric", "s", "lower"),), run), ran


def test_sides_alternate_in_abba_blocks_so_a_drift_favours_neither() -> None:
    assert "".join(order(4)) == "abbaabba"
    assert order(3).count("a") == order(3).count("b") == 3


def test_one_warm_up_run_a_side_is_not_counted() -> None:
    measure, ran = scripted({"a": [100.0, 1.0, 2.0, 3.0], "b": [100.0, 4.0, 5.0, 6.0]})
    counted = run_measure(measure, 3, load=lambda: 0.5, log=lambda _: None)
    assert ran[:2] == ["a", "b"] and "".join(ran[2:]) == "abbaab"
    assert [r["x"] for r in counted.values["a"]] == [1.0, 2.0, 3.0]
    assert counted.loads == [0.5] * 6


def test_the_summary_reports_medians_the_ratio_and_the_load() -> None:
    measure, _ = scripted({"a": [9.0, 1.0, 3.0, 2.0], "b": [9.0, 4.0, 8.0, 6.0]})
    loads = iter([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    row = summary(measure, run_measure(measure, 3, load=lambda: next(loads), log=lambda _: None))
    metric = row["metrics"][0]
    assert (metric["medianA"], metric["medianB"], metric["ratioBtoA"]) == (2.0, 6.0, 3.0)
    assert row["load"] == {"min": 1.0, "median": 3.5, "max": 6.0} and row["runsPerSide"] == 3
    assert verdict(metric) == "A better"
    json.dumps(row)  # the JSON the bench writes


def test_verdicts_follow_the_metrics_direction_and_call_overlapping_runs_unclear() -> None:
    def row(a: list[float], b: list[float], better: str) -> dict[str, object]:
        return {"a": a, "b": b, "medianA": sorted(a)[len(a) // 2], "medianB": sorted(b)[len(b) // 2], "better": better}

    assert verdict(row([1, 1.1], [2, 2.1], "higher")) == "B better"
    assert verdict(row([1, 1.1], [2, 2.1], "lower")) == "A better"
    assert verdict(row([3, 3.2], [2, 2.2], "neither")) == "A > B"
    unclear = "no clear difference (the runs overlap)"
    assert verdict(row([1, 1], [1, 1], "lower")) == unclear
    assert verdict(row([0.0038, 0.0051], [0.0046, 0.005], "lower")) == unclear  # medians differ, runs overlap
    assert verdict({"medianA": None, "medianB": 1, "better": "lower"}) == "not measured"


def test_the_table_has_a_row_per_metric_and_says_what_failed() -> None:
    measure, _ = scripted({"a": [0.0, 1.0], "b": [0.0, 2.0]})
    ok = summary(measure, run_measure(measure, 1, load=lambda: 0.0, log=lambda _: None))
    failed = {
        "name": "f",
        "lever": "Broken",
        "planKey": "k",
        "planned": "p",
        "default": "d",
        "load": None,
        "error": "RuntimeError('x')",
    }
    report = {"date": "2026-12-02", "machine": {"cpus": 2}, "ray": "2.58.0", "runsPerSide": 1, "measures": [ok, failed]}
    table = markdown(report)
    assert "| Lever | `a.key` | the metric | planned | default | 1 s | 2 s | 2 x | A better |" in table
    assert "failed: RuntimeError('x')" in table


def test_a_measure_may_count_fewer_runs_than_the_bench_asks() -> None:
    measure, ran = scripted({"a": [0.0, 1.0, 2.0], "b": [0.0, 3.0, 4.0]})
    capped = Measure(**{**measure.__dict__, "max_runs": 2})
    counted = run_measure(capped, 5, load=lambda: 0.0, log=lambda _: None)
    assert "".join(ran) == "ababba" and len(counted.values["a"]) == 2
