"""The spot-interruption experiment of each training job on a spot pool (``--checks preempt``;
``preemption_experiment.py``): the node of its rank-0 worker is deleted in the middle of step ``NOTICE_STEP`` and
the kubelet played; the pod's preStop hook must see the checkpoint of that step written before it stops Ray and the
kubelet sends SIGTERM, and the run, restarted by Ray Train, must resume from it and train every row once. Counts,
steps and order only: no time is asserted (the hook's waits advance with the job's events; that the notice
checkpoint fits the grace period is the plan's bound). The run is a whole run of the job: with ``--checks jobs`` it
gets the checks of a job's run (``job_checks.py``) and the job no run of its own, unless the kill-and-resume
experiment runs it too and its resumed run gets them (``Harness.job_checks_from``)."""

from __future__ import annotations

import pytest
from harness import Harness
from job_checks import check_training_run
from preemption_experiment import NOTICE_STEP, TOTAL_STEPS, PreemptionExperiment, run_preemption_experiment


@pytest.fixture(scope="module")
def preempted(harness: Harness, preempt_job: str) -> PreemptionExperiment:
    return run_preemption_experiment(harness, preempt_job)


def test_the_notice_landed_in_the_middle_of_its_step(preempted: PreemptionExperiment) -> None:
    assert preempted.mid_step is not None, preempted.run.tail()
    assert (preempted.mid_step["step"], preempted.kubelet.error) == (NOTICE_STEP, None)


def test_the_hook_saw_the_checkpoint_before_it_stopped_ray(preempted: PreemptionExperiment) -> None:
    k = preempted.kubelet
    assert (k.hook_timed_out, k.hook_rc) == (False, 0), k.hook_output
    assert k.hook_output.startswith("ray-gpu preStop: checkpointed after"), k.hook_output
    assert k.ray_calls == ["stop"], "the hook stops Ray only after the checkpoint, once"


def test_the_checkpoint_is_of_the_step_in_flight(preempted: PreemptionExperiment) -> None:
    """The step the notice landed in was finished and checkpointed, though the periodic cadence would not have."""
    assert preempted.kubelet.checkpointed == str(NOTICE_STEP)


def test_the_run_resumes_from_that_step_and_finishes(preempted: PreemptionExperiment) -> None:
    assert preempted.resumed_from == NOTICE_STEP, preempted.run.tail()
    assert (preempted.run.rc, preempted.registered_at_end) == (0, TOTAL_STEPS), preempted.run.tail()


def test_every_worker_continues_at_its_checkpointed_data_position(preempted: PreemptionExperiment) -> None:
    saved, resumed = [w.saved_at() for w in preempted.workers], [w.resumed_at() for w in preempted.workers]
    assert None not in saved + resumed, "a worker's position at the checkpoint or after resuming is not in the log"
    assert resumed == saved


def test_no_row_is_trained_twice_and_every_row_once(preempted: PreemptionExperiment) -> None:
    assert [w.retrained() for w in preempted.workers] == [[] for _ in preempted.workers]
    rows = [i for w in preempted.workers for i in w.before + w.after]
    assert (len(rows), len(set(rows))) == (TOTAL_STEPS * preempted.doc["knobs"]["globalBatchSize"],) * 2


@pytest.mark.needs_checks("jobs")
@pytest.mark.job_checks_of("preempt")
def test_the_preempted_run_gets_the_job_checks(preempted: PreemptionExperiment) -> None:
    check_training_run(preempted.run)
