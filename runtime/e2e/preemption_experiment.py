"""The spot-interruption experiment of a training job on a spot pool (``test_preemption.py``): in the middle of step
``NOTICE_STEP`` the node of the rank-0 worker is deleted as an EKS drain deletes a pod, and this plays the kubelet:

1. it runs the worker pod's preStop hook, exactly as rendered, with the node's notice folder; ``ray`` in the hook
   is a stand-in that records its arguments (``ray stop`` would stop every Ray of this host), and so is ``sleep``:
   the hook's one-second waits for the checkpoint return once it is written, so the hook's count of seconds, and its
   limit of the grace period less a margin, advance only with the job's events, never with the machine's load. When
   the deleted pod holds every rank (one worker pod), ``date`` is a stand-in too: the deadline the hook writes, which
   the workers hand to Ray's drain, lies the hang guard further ahead, so Ray Train cannot restart the run before the
   notice's checkpoint because a loaded machine was slow to reach it (the restart would then wait for the replacement
   node that the hook, waiting for that checkpoint, holds back); the run restarts when the node's ranks die. With
   ranks on other pods, Ray Train restarts at the deadline, so it stays the real one, and a wait past it ends there
   as the kubelet's grace period would end it (the hook then says no checkpoint came). Whether the notice checkpoint
   fits the grace period in time is the plan's bound (``core/reliability/interruption.ts``), not this run's: it
   asserts the order (the checkpoint before ``ray stop`` and SIGTERM);
2. it sends SIGTERM (then SIGKILL) to the node's processes, as the kubelet does once the hook returns;
3. it starts a node of the same spec with a fresh notice folder, as KubeRay recreates the deleted worker pod.

The runtime's hook (``ray_gpu.interruptions.NOTICE_MID_STEP_ENV``) holds rank 0 inside the step until the notice
and Ray Train's drain signal arrived, so the notice lands in that step whatever the machine's load. Ray Train then
restarts the run from the checkpoint the loop wrote on the notice; the run must resume from exactly that step and
train every row once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Any

from cluster import LocalCluster
from data_positions import WorkerResume, worker_resumes
from harness import Harness, JobRun, run_on
from job_cluster import job_dir, started_cluster
from job_log import RESUMED_AT_STEP, records
from processes import HANG_GUARD_S
from resume_experiment import registered_step

from ray_gpu.interruptions import MID_STEP, NOTICE_MID_STEP_ENV  # the runtime library of this checkout
from ray_gpu.preemption import NOTICE_FILES

#: Optimizer steps of the run, a periodic checkpoint every CHECKPOINT_EVERY, and the step the notice lands in
#: (not a multiple of CHECKPOINT_EVERY: only the notice checkpoints it).
TOTAL_STEPS = 12
CHECKPOINT_EVERY = 5
NOTICE_STEP = 7
#: The stand-in for ``ray`` in the hook: records its arguments, one line per call.
RAY_STAND_IN = '#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls"\n'
#: The stand-in for ``sleep`` in the hook: returns once the checkpoint is there, once the notice's deadline has passed
#: (the kubelet's grace is over), or after the hang guard.
SLEEP_STAND_IN = f"""#!/bin/sh
d="$RAY_GPU_NOTICE_DIR"; n=0
while [ ! -e "$d/{NOTICE_FILES["checkpointed"]}" ] && [ "$(/bin/date +%s)" -lt "$(cat "$d/{NOTICE_FILES["notice"]}")" ] &&
  [ "$n" -lt {int(HANG_GUARD_S)} ]; do
  /bin/sleep 1; n=$((n+1))
done
"""
#: The stand-in for ``date`` in the hook (which asks only ``date +%s``), when the deleted pod holds every rank: the
#: time the hang guard from now.
DATE_STAND_IN = f"#!/bin/sh\necho $(( $(/bin/date +%s) + {int(HANG_GUARD_S)} ))\n"


@dataclass
class Kubelet:
    """What the kubelet did with the deleted pod: the hook's output and exit, the ``ray`` calls it made, and the
    notice folder's files as the pod left them."""

    hook_output: str = ""
    hook_rc: int | None = None
    #: The hook outlasted the hang guard.
    hook_timed_out: bool = False
    ray_calls: list[str] = field(default_factory=list)
    checkpointed: str | None = None
    replaced: bool = False
    error: str | None = None


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _worker_pod(cluster: LocalCluster) -> dict[str, Any]:
    return dict(cluster.job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"])


def _holds_every_rank(cluster: LocalCluster) -> bool:
    """Whether the job has one worker pod, so deleting it ends every rank (and Ray Train restarts at once)."""
    return int(cluster.job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"]) == 1


def _stand_ins(scratch: str, far_deadline: bool) -> str:
    """A folder with the hook's ``ray`` and ``sleep`` stand-ins, and ``date``'s with ``far_deadline`` (see the
    module), put first on its PATH."""
    bin_dir = os.path.join(scratch, "hook-stand-ins")
    os.makedirs(bin_dir, exist_ok=True)
    scripts = [("ray", RAY_STAND_IN), ("sleep", SLEEP_STAND_IN)] + ([("date", DATE_STAND_IN)] if far_deadline else [])
    for name, script in scripts:
        with open(os.path.join(bin_dir, name), "w", encoding="utf-8") as f:
            f.write(script)
        os.chmod(os.path.join(bin_dir, name), 0o755)
    return bin_dir


def run_hook(cluster: LocalCluster, notice_dir: str, scratch: str, kubelet: Kubelet) -> None:
    """Runs the worker pod's preStop hook as the kubelet would, with the stand-ins first on its PATH; SIGTERM
    follows."""
    bin_dir = _stand_ins(scratch, far_deadline=_holds_every_rank(cluster))
    command = _worker_pod(cluster)["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "RAY_GPU_NOTICE_DIR": notice_dir}
    try:
        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S)
        kubelet.hook_output, kubelet.hook_rc = out.stdout + out.stderr, out.returncode
    except subprocess.TimeoutExpired as e:
        kubelet.hook_timed_out, kubelet.hook_output = True, str(e.stdout or "")
    calls = os.path.join(bin_dir, "calls")
    kubelet.ray_calls = _read(calls).splitlines() if os.path.exists(calls) else []


def delete_pod(
    cluster: LocalCluster, where: dict[str, Any], scratch: str, extra_env: dict[str, str], kubelet: Kubelet
) -> None:
    """The pod's deletion, then its replacement (see the module's steps)."""
    try:
        notice_dir = where["noticeDir"]
        run_hook(cluster, notice_dir, scratch, kubelet)
        path = os.path.join(notice_dir, NOTICE_FILES["checkpointed"])
        kubelet.checkpointed = _read(path).strip() if os.path.exists(path) else None
        shutil.move(notice_dir, os.path.join(scratch, "deleted-pod-notice"))
        os.makedirs(notice_dir)  # the new pod's own emptyDir
        cluster.running().replace_worker(where["node"], extra_env)
        kubelet.replaced = True
    except Exception as e:  # reported by the tests, never swallowed
        kubelet.error = repr(e)


@dataclass
class PreemptionExperiment:
    name: str
    doc: dict[str, Any]
    run: JobRun
    kubelet: Kubelet
    #: Where rank 0 was when the node was deleted (step, node, noticeDir), from the job's log.
    mid_step: dict[str, Any] | None
    registered_at_end: int | None
    resumed_from: int | None
    workers: list[WorkerResume]


def run_preemption_experiment(harness: Harness, name: str) -> PreemptionExperiment:
    """Runs the training job ``name`` with its node deleted in the middle of ``NOTICE_STEP`` (see the module)."""
    label = f"{name}-preempted"
    jobdir, storage = job_dir(harness.work, label), harness.storage(label)
    job = harness.job(name)
    kubelet, threads = Kubelet(), list[threading.Thread]()
    with started_cluster(name, job, harness.objects, jobdir, storage) as (cluster, doc):
        entrypoint = job["spec"]["entrypoint"] + f" --smoke --steps {TOTAL_STEPS} --checkpoint-every {CHECKPOINT_EVERY}"
        print(f"\n== {label}: {entrypoint}", flush=True)
        node_env = dict(cluster.running().extra_env)

        def on_line(line: str, _proc: subprocess.Popen[str]) -> None:
            if MID_STEP in line and not threads:  # Ray prefixes a worker's lines with its actor and pid
                where = json.loads(line.split(MID_STEP, 1)[1])
                t = threading.Thread(target=delete_pod, args=(cluster, where, jobdir, node_env, kubelet), daemon=True)
                threads.append(t)
                t.start()

        extra_env = {NOTICE_MID_STEP_ENV: str(NOTICE_STEP)}
        run = run_on(
            cluster,
            doc,
            label,
            entrypoint,
            os.path.join(jobdir, "job.log"),
            harness.timeout,
            on_line=on_line,
            extra_env=extra_env,
        )
        for t in threads:
            t.join(HANG_GUARD_S)
    harness.runs.append(run)
    mid = records([run.log], MID_STEP)
    resumes = records([run.log], RESUMED_AT_STEP)
    resumed_from = int(resumes[0]) if resumes else None
    workers = worker_resumes(
        [run.log], NOTICE_STEP if resumed_from is None else resumed_from, doc["train"]["numWorkers"], TOTAL_STEPS
    )
    experiment = PreemptionExperiment(
        name, doc, run, kubelet, mid[0] if mid else None, registered_step(storage, doc), resumed_from, workers
    )
    print(
        f"  preemption: notice in step {NOTICE_STEP}; hook {kubelet.hook_output.strip()!r} (exit {kubelet.hook_rc}); "
        f"checkpointed {kubelet.checkpointed}; resumed from step {resumed_from}; run exit {run.rc}",
        flush=True,
    )
    return experiment
