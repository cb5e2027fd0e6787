"""The kill-and-resume experiment of each training job (``--checks resume``; ``resume_experiment.py``): its rank-0
worker kills itself after the checkpoint of ``KILL_AFTER_STEP``; the run must resume from exactly that checkpoint,
with every worker's data continuing at the row after the last one it trained on (``data_positions.py``), and finish.
With ``--checks jobs`` too, the last run gets the checks of a job's run (``job_checks.py``), and the job no run of its
own nor the checks on another experiment's run (``Harness.job_checks_from``)."""

from __future__ import annotations

import pytest
from harness import Harness
from job_checks import check_training_run
from resume_experiment import KILL_AFTER_STEP, TOTAL_STEPS, ResumeExperiment, run_resume_experiment


@pytest.fixture(scope="module")
def resume(harness: Harness, resume_job: str) -> ResumeExperiment:
    return run_resume_experiment(harness, resume_job)


def test_the_killed_run_fails_or_ray_train_retries_it(resume: ResumeExperiment) -> None:
    """With ``maxFailures`` > 0 Ray Train retries the run itself and it succeeds; with 0 the run fails, and Ray
    Train's snapshot names the checkpoint the worker died after."""
    if resume.max_failures:
        assert resume.killed.rc == 0, (
            f"the killed run did not recover although maxFailures is {resume.max_failures}\n{resume.killed.tail()}"
        )
    else:
        assert (resume.killed.rc != 0, resume.registered_after_kill) == (True, KILL_AFTER_STEP)


def test_the_run_resumes_from_the_checkpoint_the_worker_died_after(resume: ResumeExperiment) -> None:
    """Resuming at exactly that step shows the worker died after its checkpoint and before the next one."""
    assert resume.resumed_from == KILL_AFTER_STEP


def test_the_resumed_run_finishes(resume: ResumeExperiment) -> None:
    assert resume.last.rc == 0, resume.last.tail()
    assert resume.registered_at_end == TOTAL_STEPS


def test_every_worker_continues_at_its_checkpointed_data_position(resume: ResumeExperiment) -> None:
    saved, resumed = [w.saved_at() for w in resume.workers], [w.resumed_at() for w in resume.workers]
    assert None not in saved + resumed, "a worker's position at the checkpoint or after resuming is not in the logs"
    assert resumed == saved


def test_every_worker_skips_exactly_the_batch_its_checkpoint_recorded(resume: ResumeExperiment) -> None:
    recorded = [w.saved.last_row_ids if w.saved else None for w in resume.workers]
    assert [w.resumed.recorded_row_ids if w.resumed else None for w in resume.workers] == recorded
    assert [w.resumed.last_skipped_row_ids if w.resumed else None for w in resume.workers] == recorded


def test_every_worker_then_trains_the_rows_after_them(resume: ResumeExperiment) -> None:
    firsts = [w.resumed.first_row_ids if w.resumed else [] for w in resume.workers]
    assert all(firsts), "a resumed worker logged no first rows"
    assert [w.after[: len(first)] for w, first in zip(resume.workers, firsts, strict=True)] == firsts


def test_no_worker_trains_a_row_twice(resume: ResumeExperiment) -> None:
    assert [w.retrained() for w in resume.workers] == [[] for _ in resume.workers]


def test_every_row_is_trained_once_across_the_interruption(resume: ResumeExperiment) -> None:
    rows = [i for w in resume.workers for i in w.before + w.after]
    assert (len(rows), len(set(rows))) == (TOTAL_STEPS * resume.doc["knobs"]["globalBatchSize"],) * 2


@pytest.mark.needs_checks("jobs")
@pytest.mark.job_checks_of("resume")
def test_the_resumed_run_gets_the_job_checks(resume: ResumeExperiment) -> None:
    check_training_run(resume.last)
