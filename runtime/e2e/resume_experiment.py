"""The kill-and-resume experiment of a training job (``test_resume.py``): its rank-0 Ray Train worker kills itself
once Ray Train has registered the checkpoint of ``KILL_AFTER_STEP`` (the runtime's hook, ``ray_gpu.interruptions``,
inside the job: the kill lands at that point however busy the machine is). With ``train.maxFailures`` > 0 Ray Train
retries the run itself, otherwise the job is resubmitted; either way the run must resume from that checkpoint
(model, optimizer, step and every worker's data position: ``data_positions.py``) and finish."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Any

from data_positions import WorkerResume, worker_resumes
from harness import Harness, JobRun, Variant
from job_log import RESUMED_AT_STEP, records

from ray_gpu.interruptions import KILL_AFTER_CHECKPOINT_ENV  # the runtime library of this checkout

#: Optimizer steps of the experiment's runs, a checkpoint every CHECKPOINT_EVERY.
TOTAL_STEPS = 20
CHECKPOINT_EVERY = 5
#: The checkpoint after which the training job's rank-0 worker kills itself.
KILL_AFTER_STEP = 5


@dataclass
class ResumeExperiment:
    """The runs of the experiment and what Ray Train and the job decided."""

    name: str
    doc: dict[str, Any]
    #: The killed run, and the resubmitted one when Ray Train did not retry the run itself (``maxFailures`` 0).
    runs: list[JobRun]
    #: The step of the latest checkpoint Ray Train registered once the killed run ended, and once the last run ended.
    registered_after_kill: int | None
    registered_at_end: int | None
    #: The checkpoint step the last run's rank 0 resumed from (None: it did not resume).
    resumed_from: int | None
    #: Every worker's data across the interruption.
    workers: list[WorkerResume]

    @property
    def max_failures(self) -> int:
        return int(self.doc["train"]["maxFailures"])

    @property
    def killed(self) -> JobRun:
        return self.runs[0]

    @property
    def last(self) -> JobRun:
        return self.runs[-1]


def registered_step(storage: str, doc: dict[str, Any]) -> int | None:
    """Step of the latest checkpoint Ray Train registered (its snapshot in the run's storage), if any."""
    path = os.path.join(storage, doc["train"]["checkpointPrefix"].rstrip("/"), "checkpoint_manager_snapshot.json")
    try:
        with open(path, encoding="utf-8") as f:
            latest = json.load(f).get("latest_checkpoint_result")
    except (OSError, ValueError):
        return None
    return latest["metrics"]["step"] if latest else None


def run_resume_experiment(harness: Harness, name: str) -> ResumeExperiment:
    """Runs the training job ``name`` killed after the checkpoint of ``KILL_AFTER_STEP``, and resubmits it when Ray
    Train does not retry it; reads what Ray Train registered and where every worker's data continued."""
    doc, folder = harness.tuning(name), f"{name}-resume"
    storage = harness.storage(folder)
    killed = Variant(
        label=f"{name} (killed)",
        storage=folder,
        extra_args=f" --steps {TOTAL_STEPS} --checkpoint-every {CHECKPOINT_EVERY}",
        extra_env={KILL_AFTER_CHECKPOINT_ENV: str(KILL_AFTER_STEP)},
    )
    runs = [harness.run(name, killed)]
    registered_after_kill = registered_step(storage, doc)
    if not doc["train"]["maxFailures"]:
        runs.append(harness.run(name, replace(killed, label=f"{name} (resumed)", extra_env={})))
    # The first resume of the last run: the one after the kill.
    resumes = records([runs[-1].log], RESUMED_AT_STEP)
    resumed_from = int(resumes[0]) if resumes else None
    step = KILL_AFTER_STEP if resumed_from is None else resumed_from
    workers = worker_resumes([r.log for r in runs], step, doc["train"]["numWorkers"], TOTAL_STEPS)
    experiment = ResumeExperiment(
        name, doc, runs, registered_after_kill, registered_step(storage, doc), resumed_from, workers
    )
    print(
        f"  resume: killed after the checkpoint of step {KILL_AFTER_STEP} (exit {experiment.killed.rc}, "
        f"maxFailures {experiment.max_failures}); "
        f"resumed from step {resumed_from}; Ray Train's last checkpoint: step {experiment.registered_at_end} of {TOTAL_STEPS}",
        flush=True,
    )
    return experiment
