"""``ray-gpu tune`` on real runs (``--checks tune``): the tune stack's embedding job run once with each bad setting on a
local cluster, and tune on the record it wrote. What is asserted is decided by Ray and by tune's rules, never by how
fast the machine ran the job:

- the worker's store in the record is the store the harness gave the worker node (Ray's node table, not the head's);
- blocks so large they spill: Ray spills them, and tune sizes the block to the workers' measured store (arithmetic
  on the record's bytes);
- every verdict agrees with the record's own shares: a stage named as the bound is the busiest with at least the
  bound share, and a run no stage binds is named healthy (``verdict_problems``).

Which stage each bad setting binds is a share of busy seconds, so it is checked on runs recorded on real Ray with
fixed numbers (``test/cli/tune/recorded.test.ts`` in ``npm test``), and how much faster the tuned plan runs is
measured by ``npm run bench:ray`` (``bench/ray/tune_bench.py``)."""

from __future__ import annotations

import os

import pytest
from cluster import MIN_OBJECT_STORE_BYTES
from harness import Harness
from tune_loop import (
    BAD_SETTINGS,
    STORE_SCALE,
    WORKLOAD,
    BadSetting,
    render,
    run_job,
    stack_copy,
    tune,
    verdict_problems,
)

#: Blocks in flight in the tune stack's plan (2 x (5 tokenizing tasks + 2 actors x 2)) and the share of the workers'
#: stores they may fill (Ray Data's 50% x the plan's 80%): the arithmetic tune's block size follows.
BLOCKS_IN_FLIGHT, WORKING_SET_SHARE = 18, 0.4


@pytest.mark.needs_checks("tune")
@pytest.mark.parametrize("bad", BAD_SETTINGS, ids=lambda b: b.name)
def test_tune_reads_what_ray_measured_and_names_only_a_bound_the_shares_show(harness: Harness, bad: BadSetting) -> None:
    work = os.path.join(harness.work, "tune-loop", bad.name)
    stack = stack_copy(work, bad)
    objects = render(stack, os.path.join(work, "rendered"))
    record = run_job(objects, work, "bad")
    result = tune(stack, record, work, write=False)
    diagnosis = result["diagnosis"]
    print(f"  {bad.name}: tune names {diagnosis['stage']}: {'; '.join(diagnosis['evidence'])}", flush=True)
    worker = objects[f"RayJob/{WORKLOAD}"]["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["rayStartParams"]
    assert record["objectStore"]["workerCapacityBytes"] == max(
        MIN_OBJECT_STORE_BYTES, int(worker["object-store-memory"]) // STORE_SCALE
    )
    assert verdict_problems(result, record) == [], diagnosis
    if bad.field == "blockSizeMiB":
        assert record["objectStore"]["spilledBytes"] > 0, "whole-file blocks in an 80 MiB store spilled nothing"
        fit_mib = int(record["objectStore"]["workerCapacityBytes"] * WORKING_SET_SHARE / BLOCKS_IN_FLIGHT) >> 20
        assert diagnosis["stage"] == "objectStore" and diagnosis["changes"] == [
            {"field": "blockSizeMiB", "from": 96, "to": max(1, fit_mib), "reason": diagnosis["changes"][0]["reason"]}
        ], diagnosis
