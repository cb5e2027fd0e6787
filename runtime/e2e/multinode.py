"""The multi-node training check (``--checks multinode``; ``test_multinode.py``): the multinode stack's TrainingJob
(``multinode-stack/``: 4 GPUs on a pool of 1-GPU nodes, so its RayJob has 4 worker pods) run as the kill-and-resume
experiment (``resume_experiment.py``) on 4 local Ray worker nodes, DDP over gloo across them, and what Ray Train
decided for every worker: its rank, the world size and the Ray node it ran on, and the transport environment its
process got, read from the records the training loop prints as each worker starts (``ray_gpu.examples.loop``)::

    ray-gpu example: worker started {"localRank": 0, "nodeId": "5f..", "nodeRank": 0, "rank": 0, "resumedFrom": null,
        "transportEnv": {"NCCL_SOCKET_IFNAME": "eth0", ..}, "worldSize": 4}

(one line in the log; wrapped here). Every attempt of the run (the first, and the one Ray Train restarted from the
checkpoint after the kill) is checked: each must have every rank once, on as many nodes as the RayJob has worker pods,
and every worker the rendered pods' transport environment exactly."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import Harness
from job_log import WORKER_STARTED, records
from resume_experiment import ResumeExperiment, run_resume_experiment
from tune_loop import cli

STACK_DIR = Path(__file__).resolve().parent / "multinode-stack"
STACK = "multinode"
#: The stack's TrainingJob.
WORKLOAD = "ddp-multinode"
#: Prefixes of the environment NCCL and its transports read; the training loop logs these of its worker's
#: environment (``ray_gpu.examples.loop.TRANSPORT_ENV_PREFIXES``, kept equal by ``runtime/tests``: importing the loop
#: here would import Ray Train and PyTorch into the test process).
TRANSPORT_ENV_PREFIXES = ("NCCL_", "FI_", "OFI_NCCL_")


@dataclass(frozen=True)
class WorkerStart:
    """One Ray Train worker as it started: where Ray Train placed it and the transport environment it got."""

    rank: int
    world_size: int
    node_id: str
    #: The checkpoint step its attempt resumed from (None: the run's first attempt).
    resumed_from: int | None
    transport_env: dict[str, str]

    @classmethod
    def of(cls, r: dict[str, Any]) -> WorkerStart:
        return cls(r["rank"], r["worldSize"], r["nodeId"], r["resumedFrom"], r["transportEnv"])


def attempts(logs: list[str]) -> dict[int | None, list[WorkerStart]]:
    """The workers of each attempt of a training run, by the step it resumed from (None: the first), in rank order;
    a line Ray printed twice counts once."""
    unique = {(w.resumed_from, w.rank, w.node_id): w for w in map(WorkerStart.of, records(logs, WORKER_STARTED))}
    found: dict[int | None, list[WorkerStart]] = {}
    for (attempt, _, _), w in sorted(unique.items(), key=lambda kv: (-1 if kv[0][0] is None else kv[0][0], kv[0][1])):
        found.setdefault(attempt, []).append(w)
    return found


def worker_pods(job: dict[str, Any]) -> int:
    """The RayJob's worker pods (its worker groups' replicas): one local Ray node each."""
    return sum(int(g["replicas"]) for g in job["spec"]["rayClusterSpec"]["workerGroupSpecs"])


def rendered_transport_env(job: dict[str, Any]) -> dict[str, str]:
    """The transport variables of the RayJob's worker containers, as rendered (every worker group must carry the
    same: a group that differs is refused rather than guessed at)."""
    envs = [
        {
            v["name"]: v["value"]
            for v in g["template"]["spec"]["containers"][0].get("env", [])
            if v["name"].startswith(TRANSPORT_ENV_PREFIXES) and "value" in v
        }
        for g in job["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    ]
    if any(e != envs[0] for e in envs):
        raise ValueError(f"the worker groups carry different transport environments: {envs}")
    return envs[0]


@dataclass
class MultiNodeRun:
    """The multinode stack's training job, its kill-and-resume experiment, and every attempt's workers."""

    job: dict[str, Any]
    experiment: ResumeExperiment
    workers: dict[int | None, list[WorkerStart]]

    @property
    def world_size(self) -> int:
        return int(self.experiment.doc["train"]["numWorkers"])


def run_multinode(harness: Harness) -> MultiNodeRun:
    """Renders the multinode stack with the CLI and runs its training job's kill-and-resume experiment on a local
    cluster of one Ray node per worker pod; its runs join the session's summary."""
    work = os.path.join(harness.work, "multinode")
    rendered = os.path.join(work, "rendered")
    done = cli("render", "-C", str(STACK_DIR), "--stack", STACK, "--out", rendered)
    if done.returncode != 0:
        raise RuntimeError(f"ray-gpu render of the multinode stack failed: {done.stderr}")
    stack = Harness.load(rendered, work, harness.timeout, harness.checks, None)
    experiment = run_resume_experiment(stack, WORKLOAD)
    harness.runs += stack.runs
    run = MultiNodeRun(stack.job(WORKLOAD), experiment, attempts([r.log for r in experiment.runs]))
    for attempt, workers in run.workers.items():
        placed = ", ".join(f"rank {w.rank} on node {w.node_id[:8]}" for w in workers)
        print(f"  multinode: attempt resumed from {attempt}: {placed}", flush=True)
    return run
