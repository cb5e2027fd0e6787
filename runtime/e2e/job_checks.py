"""The checks every successful run of a job gets (``test_job_runs.py``, and the resumed run of ``test_resume.py``):
every planned value handed to Ray, and a training run's shape as PyTorch counted it. Asserts (rewritten by pytest,
``conftest.py``)."""

from __future__ import annotations

from typing import Any

from harness import JobRun, TrainShape

#: Keys the plan explains but no Ray API takes (arithmetic shown in `ray-gpu plan`), or that smoke runs replace.
INFORMATIONAL = {
    "data.uri": "smoke runs read a synthetic local dataset instead",
    "data.format": "smoke runs read parquet",
    "data.sampleFraction": "already applied as data.rowsToRead",
    "data.rowsPerBlock": "the plan's arithmetic behind data.blockSizeBytes",
    "data.workingSetBytes": "checked instead: nothing spills",
    "data.rowsToRead": "smoke runs read at most --smoke-rows of it",
    "lora.imageTokensPerSample": "smoke images are 4 tokens; full runs size images from it",
    "sweep.parameters": "applied as sweep.grid",
    "train.dataloaderWorkers": "the examples feed workers through Ray Data, which preprocesses in Ray tasks; a "
    "torch DataLoader takes it as num_workers",
    "sweep.rowsPerPrompt": "checked instead: outputs are a multiple of the grid",
    "train.offloadOptimizerClass": "only with optimizer offload",
    "train.deepspeedConfigFile": "only with ZeRO",
}


def leaves(doc: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The document's values by dotted key (``resourcesPerWorker`` is one value)."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict) and k not in ("resourcesPerWorker",):
            out.update(leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def expected_keys(doc: dict[str, Any]) -> set[str]:
    """The keys of the tuning document a job must hand to Ray or a library."""
    keys = set()
    for section in ("train", "data", "actorPool", "sweep", "lora"):
        if section in doc:
            keys |= {
                k
                for k in leaves(doc[section], f"{section}.")
                if not any(k == i or k.startswith(i + ".") for i in INFORMATIONAL)
            }
    if "train.deepspeedConfigFile" in leaves(doc):
        keys.add("train.deepspeedConfigFile")
    return keys


def unapplied(run: JobRun) -> set[str]:
    """The planned values the run never handed over (the report lists what the runtime handed over). What the
    values then do is measured by levers.py, against Ray's defaults."""
    assert run.applied is not None, f"{run.label}: the job printed no RAY_GPU_APPLIED report"
    return expected_keys(run.doc) - {e.key for e in run.applied}


def check_ran_the_plan(run: JobRun) -> None:
    """What the training workers ran, as PyTorch and Ray Train counted it (hooks on the model and the optimizer, the
    process group's sum of samples): world size, rows per forward, forwards per optimizer step, and the samples all
    workers fed per optimizer step, each against the plan."""
    assert run.ran is not None, f"{run.label}: the training job did not report what it ran with"
    assert run.ran.optimizer_steps > 0, f"{run.label}: the workers' optimizers never stepped"
    assert run.ran.shape == TrainShape.planned(run.doc), f"{run.label}: the workers ran another shape than the plan's"


def check_training_run(run: JobRun) -> None:
    """The job's checks on a training run that stands for the job's own run (an experiment's last run): every planned
    value handed to Ray, the planned shape run, and nothing spilled, as test_job_runs.py checks a job's own run."""
    assert unapplied(run) == set()
    check_ran_the_plan(run)
    assert run.spill.bytes == 0
