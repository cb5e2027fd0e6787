"""A local Ray cluster built from a rendered RayJob: the head and worker groups with their rendered
``rayStartParams`` and container environments, the ConfigMap volumes laid out on disk, and the adjustments a
2-CPU machine without GPUs needs, each one recorded in ``adjustments`` so the run can say what it changed. The
nodes run isolated from anything else on the host (``nodes.RayNodes``)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from nodes import NodeSpec, RayNodes

from ray_gpu.preemption import NOTICE_DIR_ENV  # the runtime library of this checkout

#: Object stores (and Ray Data's limit, which the plan derives from them) are divided by this to fit local RAM.
OBJECT_STORE_SCALE = 16
#: The pod resources the local nodes stand in for (logical CPUs and GPUs; memory is the host's); any other a pod
#: requests is recorded as left out (``LocalCluster._unoffered``).
OFFERED_RESOURCES = frozenset({"cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"})
#: Ray's smallest object store.
MIN_OBJECT_STORE_BYTES = 80 * 1024 * 1024


def load_rendered(directory: str) -> dict[str, dict[str, Any]]:
    """Rendered objects by ``Kind/name``."""
    objects: dict[str, dict[str, Any]] = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".yaml"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                for doc in yaml.safe_load_all(f):
                    if doc:
                        objects[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return objects


@dataclass(eq=False)
class LocalCluster:
    job: dict[str, Any]
    objects: dict[str, dict[str, Any]]
    workdir: str
    #: Each node's planned object store is divided by this (the tune loop shrinks it further, to the store it tunes to).
    store_scale: int = OBJECT_STORE_SCALE
    adjustments: list[str] = field(default_factory=list)
    mounts: dict[str, str] = field(default_factory=dict)
    #: The running nodes, once ``start()`` ran.
    ray: RayNodes | None = None
    #: The head and worker nodes as run here, once ``nodes()`` laid them out.
    _nodes: tuple[NodeSpec, list[NodeSpec]] | None = field(default=None, init=False)

    # ---- layout ------------------------------------------------------------------------------------
    def local(self, path: str) -> str:
        return os.path.join(self.workdir, "mnt", path.lstrip("/"))

    def rewrite(self, value: str) -> str:
        """Container paths in or above a mounted volume (also in ``a:b`` lists) -> their local copies."""
        return ":".join(self._rewrite_path(p) for p in value.split(":"))

    def _rewrite_path(self, part: str) -> str:
        inside = any(
            part == m or part.startswith(m.rstrip("/") + "/") or m.startswith(part.rstrip("/") + "/")
            for m in self.mounts
        )
        return self.local(part) if part.startswith("/") and inside else part

    def _materialize(self, pod: dict[str, Any], container: dict[str, Any]) -> None:
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for m in container.get("volumeMounts", []):
            vol = volumes[m["name"]]
            target = self.local(m["mountPath"])
            if "configMap" in vol:
                cm = self.objects[f"ConfigMap/{vol['configMap']['name']}"]["data"]
                items = vol["configMap"].get("items") or [{"key": k, "path": k} for k in cm]
                for item in items:
                    dest = os.path.join(target, item["path"])
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    with open(dest, "w", encoding="utf-8") as f:
                        f.write(cm[item["key"]])
                self.mounts[m["mountPath"]] = target
            elif m["mountPath"] != "/dev/shm":  # /dev/shm is the host's here; the object store lives there
                os.makedirs(target, exist_ok=True)
                self.mounts[m["mountPath"]] = target

    def _env(self, container: dict[str, Any]) -> dict[str, str]:
        env: dict[str, str] = {}
        for var in container.get("env", []):
            if "value" in var:
                env[var["name"]] = self.rewrite(var["value"])
            else:
                self.adjustments.append(
                    f"env {var['name']}: from {next(iter(var['valueFrom']))} (no Kubernetes here), left unset"
                )
        return env

    def nodes(self) -> tuple[NodeSpec, list[NodeSpec]]:
        """The head and worker nodes, stores scaled and paths local; the first call lays the ConfigMap volumes out."""
        if self._nodes is None:
            head, workers = self._layout()
            self._nodes = (self._local_node(head), [self._local_node(w) for w in workers])
        return self._nodes

    def _local_node(self, node: NodeSpec) -> NodeSpec:
        params = {k: self.rewrite(v) for k, v in node.params.items()}
        params["object-store-memory"] = self._scaled_store(node)
        return NodeSpec(node.group, params, node.env)

    def _layout(self) -> tuple[NodeSpec, list[NodeSpec]]:
        spec = self.job["spec"]["rayClusterSpec"]
        head_pod = spec["headGroupSpec"]["template"]["spec"]
        head_c = head_pod["containers"][0]
        self._materialize(head_pod, head_c)
        head = NodeSpec("head", dict(spec["headGroupSpec"]["rayStartParams"]), self._env(head_c))
        workers = []
        for group in spec["workerGroupSpecs"]:
            pod = group["template"]["spec"]
            c = pod["containers"][0]
            self._materialize(pod, c)
            params = dict(group["rayStartParams"])
            limits = c["resources"]["limits"]
            # KubeRay derives these from the container's limits; here they are logical resources.
            params.setdefault("num-cpus", str(int(float(limits["cpu"]))))
            gpus = limits.get("nvidia.com/gpu", "0")
            params["num-gpus"] = "0"
            # The local nodes share one temp folder: each log monitor would read every node's logs again.
            params["include-log-monitor"] = "false"
            self.adjustments.append(
                f"{group['groupName']}: num-gpus {gpus} -> 0 and RAY_GPU_CPU_STANDIN=1 (no GPU here); num-cpus "
                f"{params['num-cpus']} from limits.cpu is logical: {os.cpu_count()} physical CPUs here; "
                "include-log-monitor false (one host: the head's log monitor reads every node's logs)"
            )
            self._unoffered(group["groupName"], c["resources"])
            for i in range(group["replicas"]):
                workers.append(NodeSpec(group["groupName"], params, self._own_notice_dir(self._env(c), i)))
        return head, workers

    def _unoffered(self, group: str, resources: dict[str, dict[str, str]]) -> None:
        """Records the devices and pages the pods request that this machine does not offer and a Ray node is not
        given: an EFA worker's interfaces and hugepages (``vpc.amazonaws.com/efa``, ``hugepages-2Mi``). KubeRay makes
        no Ray resource of them either; the workers keep the EFA environment, which gloo on CPU ignores."""
        asked = {
            k: v
            for section in ("requests", "limits")
            for k, v in resources.get(section, {}).items()
            if k not in OFFERED_RESOURCES
        }
        if asked:
            listed = ", ".join(f"{k} {v}" for k, v in sorted(asked.items()))
            self.adjustments.append(
                f"{group}: {listed} requested: not offered here, left out (gloo over TCP on CPU needs neither)"
            )

    def _own_notice_dir(self, env: dict[str, str], replica: int) -> dict[str, str]:
        """The worker's spot notice folder (``ray_gpu.preemption``), one per node: on Kubernetes each pod has its own
        emptyDir, here a group's replicas would share the folder its mount maps to."""
        if NOTICE_DIR_ENV not in env:
            return env
        own = os.path.join(env[NOTICE_DIR_ENV], f"node-{replica}")
        os.makedirs(own, exist_ok=True)
        self.adjustments.append(
            f"{NOTICE_DIR_ENV}: one folder per worker node ({env[NOTICE_DIR_ENV]}/node-N), as each pod has its own"
        )
        return {**env, NOTICE_DIR_ENV: own}

    def _scaled_store(self, node: NodeSpec) -> str:
        planned = int(node.params["object-store-memory"])
        local = max(MIN_OBJECT_STORE_BYTES, planned // self.store_scale)
        self.adjustments.append(
            f"{node.group}: object-store-memory {planned} -> {local} (1/{self.store_scale}: {_gib(planned)} GiB "
            "does not fit this machine's RAM)"
        )
        return str(local)

    # ---- lifecycle ---------------------------------------------------------------------------------
    def start(self, extra_env: dict[str, str]) -> None:
        head, workers = self.nodes()
        self.ray = RayNodes(head, workers)
        self.ray.start(extra_env)

    def stop(self) -> None:
        if self.ray:
            self.ray.stop()

    def running(self) -> RayNodes:
        if self.ray is None:
            raise RuntimeError("the cluster is not started")
        return self.ray

    def run_entrypoint(
        self,
        entrypoint: str,
        log_path: str,
        timeout: float,
        on_line: Callable[[str, subprocess.Popen[str]], None] | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> tuple[int, float]:
        return self.running().run_entrypoint(entrypoint, self.workdir, log_path, timeout, on_line, extra_env)


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f}"
