"""What the end-to-end tests share (``conftest.py``): the rendered dev stack, the scratch folder and the checks chosen
(``Harness``), and one run of a rendered RayJob's entrypoint on its local cluster (``JobRun``), with the records the
job printed for the checks read from its log (``job_log.py``)."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any

from cluster import LocalCluster, load_rendered
from job_cluster import job_dir, started_cluster
from job_log import APPLIED, RAN_WITH, last
from nodes import Spill
from spill_control import ControlResult, SpillControl

#: What a run checks (``--checks``): each job's run, the committed-outputs experiment of embedding jobs, the
#: kill-and-resume experiment of training jobs (model, optimizer and data position), ``ray-gpu tune`` on bad
#: runs of the tune stack's embedding job (``test_tune_loop.py``), the spot-interruption experiment of training
#: jobs on spot pools (``test_preemption.py``), and the multinode stack's training job on 4 Ray nodes, killed and
#: resumed (``test_multinode.py``).
CHECKS = ("jobs", "outputs", "resume", "tune", "preempt", "multinode")
#: The tests' parameters, each a RayJob name (``Harness.parameter``, ``conftest.py``).
PARAMETERS = ("job_name", "training_job_name", "embedding_job_name", "outputs_job", "resume_job", "preempt_job")


@dataclass(frozen=True)
class Applied:
    """One value the runtime handed to Ray or a library, from the job's ``RAY_GPU_APPLIED`` report."""

    key: str
    value: Any
    #: What the CPU stand-in ran instead, and why (None: the planned value itself).
    standin: str | None = None

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Applied:
        return cls(entry["key"], entry.get("applied", entry["value"]), entry.get("standin"))


@dataclass(frozen=True)
class TrainShape:
    """The shape of a training run: workers, rows per forward, forwards per optimizer step, samples per step."""

    world_size: int
    rows_per_forward: list[int]
    forwards_per_optimizer_step: list[int]
    global_samples_per_optimizer_step: float

    @classmethod
    def planned(cls, doc: dict[str, Any]) -> TrainShape:
        knobs = doc["knobs"]
        return cls(
            doc["train"]["numWorkers"],
            [knobs["microBatchSize"]],
            [knobs["gradientAccumulationSteps"]],
            knobs["globalBatchSize"],
        )


@dataclass(frozen=True)
class RanWith:
    """What the training workers ran, as PyTorch and Ray Train counted it (hooks on the model and the optimizer, the
    process group's sum of samples): the driver's ``ray-gpu example: ran with {...}`` record."""

    shape: TrainShape
    optimizer_steps: int

    @classmethod
    def of(cls, record: dict[str, Any]) -> RanWith:
        shape = TrainShape(
            record["world_size"],
            record["rows_per_forward"],
            record["forwards_per_optimizer_step"],
            record["global_samples_per_optimizer_step"],
        )
        return cls(shape, record["optimizer_steps"])


@dataclass
class JobRun:
    """One run of a RayJob's entrypoint, and what it decided."""

    label: str
    #: The RayJob's tuning document (as mounted for the run).
    doc: dict[str, Any]
    log: str
    rc: int
    wall_seconds: float
    #: The object stores' spill counters once the run ended.
    spill: Spill
    #: The job's report of the values it applied; None when it printed none.
    applied: list[Applied] | None
    #: A training run's counted shape; None when it printed none.
    ran: RanWith | None
    #: The spill check's unbounded control, measured on the same cluster after the run (embedding jobs).
    control: ControlResult | None = None

    def tail(self, lines: int = 40) -> str:
        """The end of the job's log, for a failed check's message."""
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f"{self.label}: exit code {self.rc}; the end of {self.log}:\n" + "".join(f.readlines()[-lines:])


@dataclass(frozen=True)
class Variant:
    """How a run differs from the job's plain smoke run."""

    #: The run's name in the output and its scratch folder's (default: the job's name).
    label: str | None = None
    #: The folder under ``<work>/storage`` standing in for the stack's bucket (default: the job's name).
    storage: str | None = None
    #: Appended to the entrypoint (after ``--smoke``).
    extra_args: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)
    control: SpillControl | None = None


def run_on(
    cluster: LocalCluster, doc: dict[str, Any], label: str, entrypoint: str, log: str, timeout: float, **kwargs: Any
) -> JobRun:
    """Runs ``entrypoint`` on the started ``cluster`` (``kwargs``: ``LocalCluster.run_entrypoint``'s) and reads
    what the job reported."""
    rc, wall = cluster.run_entrypoint(entrypoint, log, timeout, **kwargs)
    report, ran = last(log, APPLIED), last(log, RAN_WITH)
    applied = [Applied.of(e) for e in report["applied"]] if report is not None else None
    run = JobRun(
        label,
        doc,
        log,
        rc,
        round(wall, 1),
        cluster.running().spilled(),
        applied,
        RanWith.of(ran) if ran is not None else None,
    )
    for e in applied or []:
        print(
            f"  applied {e.key} = {json.dumps(e.value)[:80]}{'  (stand-in: ' + e.standin + ')' if e.standin else ''}",
            flush=True,
        )
    return run


@dataclass
class Harness:
    """The rendered dev stack and the settings of one end-to-end session; every run made, for the summary."""

    #: Rendered objects by ``Kind/name`` (Kubernetes YAML, as parsed).
    objects: dict[str, dict[str, Any]]
    work: str
    #: A hang guard per job run, in seconds: never a verdict.
    timeout: float
    checks: frozenset[str]
    #: RayJob names to run (None: all).
    only: frozenset[str] | None = None
    #: Every run made, in order (the summary), and each job's plain smoke run by name (``test_job_runs.py``).
    runs: list[JobRun] = field(default_factory=list)
    smoke_runs: dict[str, JobRun] = field(default_factory=dict)

    @classmethod
    def load(
        cls, rendered: str, work: str, timeout: float, checks: frozenset[str], only: frozenset[str] | None
    ) -> Harness:
        return cls(load_rendered(rendered), work, timeout, checks, only)

    def kinds(self) -> dict[str, str]:
        """The RayJobs to run, name to workload kind."""
        jobs = {key.split("/", 1)[1]: job for key, job in self.objects.items() if key.startswith("RayJob/")}
        return {
            name: job["metadata"]["labels"]["ray-gpu.io/kind"]
            for name, job in jobs.items()
            if self.only is None or name in self.only
        }

    def names(self, check: str) -> list[str]:
        """The RayJobs that ``check`` runs; for ``jobs``, those whose job checks no experiment's run carries
        (``job_checks_from``), each then run once on its own."""
        if check not in self.checks:
            return []
        kinds = self.kinds()
        if check == "outputs":
            return [n for n, k in kinds.items() if k == "EmbeddingPipeline"]
        if check == "resume":
            return [n for n, k in kinds.items() if k == "TrainingJob"]
        if check == "preempt":
            return [n for n, k in kinds.items() if k == "TrainingJob" and self._on_spot(n)]
        return [n for n, k in kinds.items() if self._job_checks_from(n, k) == "jobs"]

    def job_checks_from(self, name: str) -> str:
        """The check whose run of the RayJob ``name`` gets the job checks (``job_checks.py``; with ``--checks jobs``),
        exactly one: an experiment's last run is a whole run of the job, so a training job the kill-and-resume
        experiment runs gets them on its resumed run (``test_resume.py``), else one on a spot pool that the
        spot-interruption experiment runs gets them on that run (``test_preemption.py``); every other job on a run of
        its own (``jobs``: ``test_job_runs.py``)."""
        return self._job_checks_from(name, self.kinds()[name])

    def _job_checks_from(self, name: str, kind: str) -> str:
        if kind == "TrainingJob" and "resume" in self.checks:
            return "resume"
        if kind == "TrainingJob" and "preempt" in self.checks and self._on_spot(name):
            return "preempt"
        return "jobs"

    def parameter(self, argname: str) -> list[str]:
        """The RayJobs a test's parameter ``argname`` takes: every job with a run of its own, those of them that
        train and those that embed (``test_job_runs.py``), and those of the two experiments."""
        match argname:
            case "job_name":
                return self.names("jobs")
            case "training_job_name":
                return [n for n in self.names("jobs") if "train" in self.tuning(n)]
            case "embedding_job_name":
                return [n for n in self.names("jobs") if self.kinds()[n] == "EmbeddingPipeline"]
            case "outputs_job":
                return self.names("outputs")
            case "resume_job":
                return self.names("resume")
            case "preempt_job":
                return self.names("preempt")
        raise ValueError(f"not a parameter of the end-to-end tests: {argname}")

    def _on_spot(self, name: str) -> bool:
        """Whether the job's worker pods have the spot notice hook (``workloads/rayjob/preemption.ts``)."""
        pod = self.objects[f"RayJob/{name}"]["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
        return "terminationGracePeriodSeconds" in pod

    def job(self, name: str) -> dict[str, Any]:
        """A copy of the rendered RayJob (each run may adjust its own)."""
        return copy.deepcopy(self.objects[f"RayJob/{name}"])

    def tuning(self, name: str) -> dict[str, Any]:
        return dict(json.loads(self.objects[f"ConfigMap/{name}-tuning"]["data"]["tuning.json"]))

    def storage(self, folder: str) -> str:
        """A folder standing in for the stack's bucket."""
        return os.path.join(self.work, "storage", folder)

    def run(self, name: str, variant: Variant) -> JobRun:
        """One run of the RayJob ``name`` with ``--smoke`` on a local cluster of its own, as Ray's job supervisor
        would run it; then the spill control, when the variant has one and the run succeeded."""
        label = variant.label or name
        jobdir, storage = job_dir(self.work, label), self.storage(variant.storage or name)
        job = self.job(name)
        with started_cluster(name, job, self.objects, jobdir, storage) as (cluster, doc):
            entrypoint = job["spec"]["entrypoint"] + " --smoke" + variant.extra_args
            print(f"\n== {label}: {entrypoint}", flush=True)
            for a in sorted(set(cluster.adjustments)):
                print(f"  adjusted: {a}", flush=True)
            run = run_on(
                cluster,
                doc,
                label,
                entrypoint,
                os.path.join(jobdir, "job.log"),
                self.timeout,
                extra_env=variant.extra_env,
            )
            if variant.control and run.rc == 0:
                run.control = variant.control.measure(cluster.running(), storage)
        self.runs.append(run)
        return run
