"""The committed-outputs experiment of each embedding job (``--checks outputs``; ``committed_outputs.py``): a rerun
SIGKILLed while exactly ``KILL_AT_PART`` of its parts are written leaves the previous committed output intact and the
one the reader returns; a third run commits and becomes the latest, and the first is kept beside it."""

from __future__ import annotations

import pytest
from committed_outputs import KILL_AT_PART, ROWS, OutputsExperiment, run_outputs_experiment
from harness import Harness

from ray_gpu import outputs  # the runtime library of this checkout


@pytest.fixture(scope="module")
def experiment(harness: Harness, outputs_job: str) -> OutputsExperiment:
    return run_outputs_experiment(harness, outputs_job)


def previous(experiment: OutputsExperiment) -> outputs.CommittedRun:
    """The run the reader returned after the kill (the first one), failing the test when it could not read one."""
    assert experiment.after_kill.latest is not None, (
        f"after the kill the output cannot be read: {experiment.after_kill.error}"
    )
    return experiment.after_kill.latest


def test_the_first_run_commits(experiment: OutputsExperiment) -> None:
    assert experiment.first.rc == 0, experiment.first.tail()


def test_the_rerun_is_killed_mid_write(experiment: OutputsExperiment) -> None:
    """Killed with exactly ``KILL_AT_PART`` parts staged, fewer than a whole write has."""
    assert (experiment.killed.rc != 0, experiment.kill.parts) == (True, KILL_AT_PART)
    assert experiment.kill.parts < len(previous(experiment).files)


def test_after_the_kill_the_first_run_is_the_only_committed_one(experiment: OutputsExperiment) -> None:
    assert experiment.after_kill.committed == [previous(experiment).run_id]


def test_after_the_kill_the_first_run_reads_back_whole(experiment: OutputsExperiment) -> None:
    assert previous(experiment).total_rows == ROWS
    assert experiment.after_kill.ids == list(range(ROWS))


def test_the_killed_run_leaves_no_marker_and_no_run_folder(experiment: OutputsExperiment) -> None:
    assert experiment.kill.folder is not None, "the killed run staged nothing"
    assert (experiment.traces.marker, experiment.traces.run_folder) == (False, False)


def test_the_reader_refuses_the_killed_runs_staging_folder(experiment: OutputsExperiment) -> None:
    assert experiment.killed_folder_refused


def test_the_rerun_commits_every_row_and_is_the_latest(experiment: OutputsExperiment) -> None:
    assert experiment.rerun.rc == 0, experiment.rerun.tail()
    latest = experiment.after_rerun.latest
    assert latest is not None, f"after the rerun the output cannot be read: {experiment.after_rerun.error}"
    assert latest.run_id not in (previous(experiment).run_id, experiment.kill.run_id)
    assert (latest.total_rows, experiment.after_rerun.ids) == (ROWS, list(range(ROWS)))


def test_the_previous_run_is_kept_beside_the_rerun(experiment: OutputsExperiment) -> None:
    latest = experiment.after_rerun.latest
    assert experiment.after_rerun.committed == [previous(experiment).run_id, latest.run_id if latest else None]
