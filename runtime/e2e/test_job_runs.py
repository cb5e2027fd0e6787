"""Each rendered dev RayJob run once with ``--smoke`` on a local cluster of its own, as Ray's job supervisor would run
its entrypoint (``--checks jobs``): it succeeds, hands every planned value to Ray, trains with the planned shape (as
PyTorch counted it) and spills nothing, which an unbounded read of the same data on the same stores shows it would
have. A training job that an experiment runs gets these checks on that run instead, once (``Harness.job_checks_from``):
on the kill-and-resume experiment's resumed run (``test_resume.py``), else on the spot-interruption experiment's run
of a job on a spot pool (``test_preemption.py``)."""

from __future__ import annotations

import json
import os

import pytest
from harness import Harness, JobRun, Variant
from job_checks import check_ran_the_plan, unapplied
from job_log import last
from spill_control import SpillControl
from tune_loop import REPO, cli, verdict_problems

from ray_gpu.run_record import RUN_RECORD_PREFIX


def smoke_run(harness: Harness, name: str) -> JobRun:
    """The job's run, made once for every test that reads it; an embedding job's reads 1.25 times its stores, then
    the unbounded control reads the same data on the same cluster."""
    if name not in harness.smoke_runs:
        job = harness.job(name)
        variant = Variant()
        if job["metadata"]["labels"]["ray-gpu.io/kind"] == "EmbeddingPipeline":
            control = SpillControl.of(name, job)
            variant = Variant(extra_args=control.extra_args(), control=control)
        harness.smoke_runs[name] = harness.run(name, variant)
    return harness.smoke_runs[name]


@pytest.fixture
def job_run(harness: Harness, job_name: str) -> JobRun:
    return smoke_run(harness, job_name)


def test_the_job_succeeds(job_run: JobRun) -> None:
    assert job_run.rc == 0, job_run.tail()


def test_every_planned_value_reaches_ray(job_run: JobRun) -> None:
    assert unapplied(job_run) == set()


def test_nothing_spills(job_run: JobRun) -> None:
    assert job_run.spill.bytes == 0


def test_training_workers_run_the_planned_shape(harness: Harness, training_job_name: str) -> None:
    check_ran_the_plan(smoke_run(harness, training_job_name))


def test_the_same_data_held_at_once_spills(harness: Harness, embedding_job_name: str) -> None:
    """The control of the no-spill check: the data outgrows the stores, and holding it all does spill."""
    run = smoke_run(harness, embedding_job_name)
    assert run.control is not None, run.tail()  # the control runs after a successful run only
    assert run.control.held_bytes > run.control.store_bytes, (
        f"the dataset is not larger than the object stores: {run.control.stderr}"
    )
    assert run.control.spilled_bytes > 0, "holding the whole dataset spilled nothing: the no-spill check cannot tell"


def test_tune_reads_the_jobs_own_record_of_the_plan_it_ran(harness: Harness, embedding_job_name: str) -> None:
    """``ray-gpu tune`` on the record of the job's own run: it accepts it (the plan digest the runtime stamped is the
    plan the CLI renders now, of the same workload, kind and environment), the workers' store in it is the store the
    harness gave the worker node (Ray's node table, the head's left out), and the verdict agrees with the record's own
    shares. Which stage, if any, binds the run is a share of busy seconds: ``npm test`` checks it on a recorded run."""
    run = smoke_run(harness, embedding_job_name)
    record = last(run.log, RUN_RECORD_PREFIX)
    assert record is not None, f"the job wrote no run record: {run.tail()}"
    assert run.control is not None, run.tail()
    assert record["objectStore"]["workerCapacityBytes"] == run.control.store_bytes, record["objectStore"]
    path = os.path.join(harness.work, f"{embedding_job_name}-run-record.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    done = cli("tune", "-C", str(REPO), "--stack", "dev", "--from", path, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert verdict_problems(result, record) == [], result["diagnosis"]
