"""What the lever experiments share: the result of one A/B, the planned values they test, and the local clusters
they run on (built from the rendered levers stack, isolated like every local cluster here: ``nodes.RayNodes``)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cluster import load_rendered
from nodes import NodeSpec, RayNodes

#: Logical CPUs of the local worker node: the plan's 47 would start that many Python processes on 2 physical cores.
WORKER_CPUS = 16
#: Object stores of the local nodes (the plan's 84 GiB does not fit here). The benchmark's pipelines run on a larger
#: worker store that does not bind (bench/ray).
HEAD_STORE_BYTES = 128 * 2**20
WORKER_STORE_BYTES = 256 * 2**20
#: Kubernetes' /dev/shm when a pod mounts no memory-backed emptyDir there.
KUBERNETES_DEFAULT_SHM_BYTES = 64 * 2**20


T = TypeVar("T")


@dataclass
class Result:
    """One lever's A/B: the plan's value (A) against Ray's or Kubernetes' default (B), and what Ray did with each."""

    lever: str
    plan_key: str
    observable: str
    planned: str
    default: str
    a: Any = None
    b: Any = None
    #: True when the effect shows, False when it does not, None when the experiment could not run here (``note`` says why).
    ok: bool | None = None
    expect: str = ""
    note: str = ""

    def row(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


@dataclass
class Lab:
    """The rendered levers stack: its tuning documents and RayJobs, and a scratch folder."""

    work: str
    objects: dict[str, dict[str, Any]]
    log: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, rendered: str, work: str) -> Lab:
        os.makedirs(work, exist_ok=True)
        return cls(work, load_rendered(rendered))

    def tuning(self, name: str) -> dict[str, Any]:
        return dict(json.loads(self.objects[f"ConfigMap/{name}-tuning"]["data"]["tuning.json"]))

    def job(self, name: str) -> dict[str, Any]:
        return self.objects[f"RayJob/{name}"]

    def tuning_file(self, name: str) -> str:
        """The tuning document on disk, for ``ray_gpu.load``."""
        path = os.path.join(self.work, f"{name}-tuning.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.tuning(name), f)
        return path


def planned_nodes(lab: Lab, name: str, worker_store_bytes: int = WORKER_STORE_BYTES) -> RayNodes:
    """The RayJob's head as rendered (no CPUs, no GPUs) and one worker pod as a node: its GPUs as logical GPUs, its
    CPUs capped at WORKER_CPUS, both stores shrunk to fit this machine."""
    spec = lab.job(name)["spec"]["rayClusterSpec"]
    head = {**spec["headGroupSpec"]["rayStartParams"], "object-store-memory": str(HEAD_STORE_BYTES)}
    group = spec["workerGroupSpecs"][0]
    limits = group["template"]["spec"]["containers"][0]["resources"]["limits"]
    cpus, gpus = int(float(limits["cpu"])), int(limits.get("nvidia.com/gpu", "0"))
    worker = {
        "num-cpus": str(min(cpus, WORKER_CPUS)),
        "num-gpus": str(gpus),
        "object-store-memory": str(worker_store_bytes),
    }
    lab.log.append(
        f"planned cluster: head {head}; worker {worker} (the pod: {cpus} CPUs, {gpus} GPUs; GPUs are logical here, no CUDA)"
    )
    return RayNodes(NodeSpec("head", head, {}), [NodeSpec(group["groupName"], worker, {})])


def default_nodes(lab: Lab) -> RayNodes:
    """A head and a worker with Ray's defaults for CPUs and GPUs (detected from this machine); small stores."""
    lab.log.append(f"default cluster: head and worker with Ray's detected CPUs ({os.cpu_count()}) and no GPUs")
    return RayNodes(
        NodeSpec("head", {"object-store-memory": str(HEAD_STORE_BYTES)}, {}),
        [NodeSpec("worker", {"object-store-memory": str(WORKER_STORE_BYTES)}, {})],
    )


_HERE = os.path.dirname(os.path.abspath(__file__))
#: The environment of every local node: one compute thread per process (2 physical cores under many logical CPUs),
#: and the runtime library and these experiments importable by Ray's workers (their UDFs are defined here).
NODE_ENV = {"OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([_HERE, os.path.dirname(_HERE)])}


def on_nodes(nodes: RayNodes, body: Callable[[], T], pythonpath: tuple[str, ...] = ()) -> T:
    """Starts ``nodes`` (``pythonpath`` added to their workers' imports), connects this process as a driver, runs
    ``body``, and stops them whatever happens."""
    import ray

    started = time.time()
    nodes.start({**NODE_ENV, "PYTHONPATH": os.pathsep.join([*pythonpath, NODE_ENV["PYTHONPATH"]])})
    try:
        ray.init(address=nodes.address(), logging_level="ERROR", log_to_driver=False)
        print(f"  cluster of {len(nodes.workers) + 1} nodes started in {time.time() - started:.0f} s", flush=True)
        return body()
    finally:
        stopping = time.time()
        ray.shutdown()
        nodes.stop()
        print(f"  cluster stopped in {time.time() - stopping:.0f} s ({time.time() - started:.0f} s in all)", flush=True)


def measured(results: list[Result], experiment: Callable[[], Result]) -> None:
    """Runs one experiment, prints its outcome and time, and adds it to ``results``."""
    started = time.time()
    r = experiment()
    results.append(r)
    print(f"  measured {r.lever} in {time.time() - started:.0f} s: A={r.a} B={r.b} ok={r.ok}", flush=True)
