"""Checks of the kill-and-resume experiment's data (``run_jobs.py --checks resume``): the resumed training run
continues every worker's data where the killed run's last registered checkpoint left it.

The training loop (``ray_gpu.examples.loop``) prints, per worker, its data position at every checkpoint with the
row ids it trained on since the previous one, and, once resumed, where its data continues::

    ray-gpu example: data position at checkpoint {"rank": 0, "step": 5, "resumedFrom": null, "epoch": 0, "batchesInEpoch": 40, "lastRowIds": [..], "rowsSincePrevious": [[a, b], ..]}
    ray-gpu example: resumed data position {"rank": 0, "step": 5, "epoch": 0, "batch": 40, "recordedRowIds": [..], "lastSkippedRowIds": [..], "firstRowIds": [..]}

Checked for every worker: the resumed position is the checkpoint's; the last batch it skipped has the row ids the
checkpoint recorded (the order is the same); it then trains on new rows, none it had trained on before the kill;
and over all workers, the rows trained before the checkpoint and after the resume are each trained once, as many
as the run's steps take.
"""

from __future__ import annotations

import json
import re
from typing import Any

from failures import Failures

POSITION = re.compile(r"ray-gpu example: data position at checkpoint (\{.*\})")
RESUMED = re.compile(r"ray-gpu example: resumed data position (\{.*\})")


Key = tuple[int, int, int | None]


def records(logs: list[str], pattern: re.Pattern[str]) -> dict[Key, dict[str, Any]]:
    """The records the job logs hold, by (rank, step, step resumed from: None for a run from the beginning); Ray may
    print a worker's line more than once."""
    found: dict[Key, dict[str, Any]] = {}
    for log in logs:
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                match = pattern.search(line)
                if match:
                    record = json.loads(match.group(1))
                    found[(record["rank"], record["step"], record.get("resumedFrom", record["step"]))] = record
    return found


def rows_of(ranges: list[list[int]]) -> list[int]:
    """``[[0, 2], [7, 8]]`` -> ``[0, 1, 2, 7, 8]``."""
    return [i for first, last in ranges for i in range(first, last + 1)]


def trained(positions: dict[Key, dict[str, Any]], rank: int, resumed_from: int | None, steps: range) -> list[int]:
    """The rows ``rank`` trained on, in order, at the checkpoints of ``steps`` of the attempt that started at ``resumed_from``."""
    chosen = sorted((k[1], rec) for k, rec in positions.items() if k[0] == rank and k[2] == resumed_from and k[1] in steps)
    return [i for _, rec in chosen for i in rows_of(rec["rowsSincePrevious"])]


def _check_rank(
    rank: int, step: int, saved: dict[str, Any] | None, resumed: dict[str, Any] | None, before: list[int], after: list[int], failures: Failures
) -> bool:
    where = f"resume data position (rank {rank}, step {step})"
    if not failures.check(saved is not None and resumed is not None, f"{where}: no position at the checkpoint or no resumed position in the logs"):
        return False
    assert saved is not None and resumed is not None
    ok = failures.check(
        (resumed["epoch"], resumed["batch"]) == (saved["epoch"], saved["batchesInEpoch"]),
        f"{where}: resumed at epoch {resumed['epoch']} batch {resumed['batch']}, the checkpoint says {saved['epoch']} / {saved['batchesInEpoch']}",
    )
    ok &= failures.check(
        resumed["recordedRowIds"] == saved["lastRowIds"] == resumed["lastSkippedRowIds"],
        f"{where}: the last skipped batch is rows {resumed['lastSkippedRowIds']}, the checkpoint recorded {saved['lastRowIds']}",
    )
    first = resumed["firstRowIds"] or []
    ok &= failures.check(bool(first) and after[: len(first)] == first, f"{where}: the first rows after resuming {first} are not what it then trained on")
    ok &= failures.check(not set(before) & set(after), f"{where}: rows trained before the kill were trained again: {sorted(set(before) & set(after))[:10]}")
    return ok


def check_data_positions(logs: list[str], step: int, doc: dict[str, Any], total_steps: int, failures: Failures) -> str:
    """Checks the data positions in the logs of a training run killed and resumed from the checkpoint of ``step``
    (one log when Ray Train retried the run itself, two when it was resubmitted; see the module); prints what they
    prove and returns a short verdict."""
    positions, resumed = records(logs, POSITION), records(logs, RESUMED)
    world, knobs = doc["train"]["numWorkers"], doc["knobs"]
    before = {r: trained(positions, r, None, range(step + 1)) for r in range(world)}
    after = {r: trained(positions, r, step, range(step + 1, total_steps + 1)) for r in range(world)}
    checks = [_check_rank(r, step, positions.get((r, step, None)), resumed.get((r, step, step)), before[r], after[r], failures) for r in range(world)]
    everything = [i for r in range(world) for i in before[r] + after[r]]
    expected = total_steps * knobs["globalBatchSize"]
    rows_ok = failures.check(
        len(everything) == len(set(everything)) == expected,
        f"resume data position: {len(everything)} rows trained ({len(set(everything))} distinct), expected {expected} once each",
    )
    if not (all(checks) and rows_ok):
        return "data position NOT resumed"
    r0 = resumed[(0, step, step)]
    print(
        f"  resume from the data position: killed after the checkpoint of step {step}; {world} workers resumed at epoch {r0['epoch']} batch {r0['batch']} "
        f"(rank 0: rows continue at {r0['firstRowIds']} after {r0['lastSkippedRowIds']}; a fresh start begins at row {before[0][0]}); "
        f"{expected} rows trained once each across the interruption, none twice",
        flush=True,
    )
    return f"data continued at epoch {r0['epoch']} batch {r0['batch']} on every worker; {expected} rows once each"
