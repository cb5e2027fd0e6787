"""``ray-gpu tune`` on real runs (``--checks tune``): the tune stack's embedding job run once with each bad setting on a
local cluster, and tune on the record it wrote must name the stage that setting starves or spills, with the change
that lifts it. What is asserted is tune's decision on what Ray measured (which stage, which field), never a time:
how much faster the tuned plan runs is measured by ``npm run bench:ray`` (``bench/ray/tune_bench.py``)."""

from __future__ import annotations

import os

import pytest
from harness import Harness
from tune_loop import BAD_SETTINGS, BadSetting, render, run_job, stack_copy, tune


@pytest.mark.needs_checks("tune")
@pytest.mark.parametrize("bad", BAD_SETTINGS, ids=lambda b: b.name)
def test_tune_names_the_stage_a_bad_setting_binds(harness: Harness, bad: BadSetting) -> None:
    work = os.path.join(harness.work, "tune-loop", bad.name)
    stack = stack_copy(work, bad)
    record = run_job(render(stack, os.path.join(work, "rendered")), work, "bad")
    diagnosis = tune(stack, record, work, write=False)["diagnosis"]
    print(f"  {bad.name}: tune names {diagnosis['stage']}: {'; '.join(diagnosis['evidence'])}", flush=True)
    assert diagnosis["stage"] == bad.stage, diagnosis
    assert [c["field"] for c in diagnosis["changes"]] == [bad.field], diagnosis
