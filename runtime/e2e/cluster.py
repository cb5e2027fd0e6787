"""A local Ray cluster built from a rendered RayJob: the head and worker groups with their rendered
``rayStartParams`` and container environments, the ConfigMap volumes laid out on disk, and the adjustments a
2-CPU machine without GPUs needs, each one recorded in ``adjustments`` so the run can say what it changed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import yaml

#: Object stores (and Ray Data's limit, which the plan derives from them) are divided by this to fit local RAM.
OBJECT_STORE_SCALE = 16
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


@dataclass
class NodeSpec:
    group: str
    params: dict[str, str]
    env: dict[str, str]


@dataclass
class LocalCluster:
    job: dict[str, Any]
    objects: dict[str, dict[str, Any]]
    workdir: str
    port: int = 6400
    adjustments: list[str] = field(default_factory=list)
    mounts: dict[str, str] = field(default_factory=dict)
    started: bool = False
    #: Worker object-store bytes to use instead of the scaled plan (an undersized store, on purpose).
    store_override: int | None = None

    # ---- layout ------------------------------------------------------------------------------------
    def local(self, path: str) -> str:
        return os.path.join(self.workdir, "mnt", path.lstrip("/"))

    def rewrite(self, value: str) -> str:
        """Container paths in or above a mounted volume (also in ``a:b`` lists) -> their local copies."""

        def one(part: str) -> str:
            inside = any(part == m or part.startswith(m.rstrip("/") + "/") or m.startswith(part.rstrip("/") + "/") for m in self.mounts)
            return self.local(part) if part.startswith("/") and inside else part

        return ":".join(one(p) for p in value.split(":"))

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
                self.adjustments.append(f"env {var['name']}: from {next(iter(var['valueFrom']))} (no Kubernetes here), left unset")
        return env

    def nodes(self) -> tuple[NodeSpec, list[NodeSpec]]:
        """The head and worker nodes; the first call lays the ConfigMap volumes out on disk."""
        if getattr(self, "_nodes", None):
            return self._nodes
        self._nodes = self._layout()
        return self._nodes

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
            self.adjustments.append(
                f"{group['groupName']}: num-gpus {gpus} -> 0 and RAY_GPU_CPU_STANDIN=1 (no GPU here); num-cpus {params['num-cpus']} from limits.cpu is logical: {os.cpu_count()} physical CPUs here"
            )
            for _ in range(group["replicas"]):
                workers.append(NodeSpec(group["groupName"], params, self._env(c)))
        return head, workers

    # ---- lifecycle ---------------------------------------------------------------------------------
    def _scaled_store(self, node: NodeSpec) -> str:
        planned = int(node.params["object-store-memory"])
        if self.store_override is not None and node.group != "head":
            self.adjustments.append(f"{node.group}: object-store-memory {planned} -> {self.store_override} (undersized on purpose)")
            return str(self.store_override)
        local = max(MIN_OBJECT_STORE_BYTES, planned // OBJECT_STORE_SCALE)
        self.adjustments.append(
            f"{node.group}: object-store-memory {planned} -> {local} (1/{OBJECT_STORE_SCALE}: {_gib(planned)} GiB does not fit this machine's RAM)"
        )
        return str(local)

    def _start(self, node: NodeSpec, head: bool, extra_env: dict[str, str], index: int) -> None:
        args = [_ray_cli(), "start", "--disable-usage-stats"]
        args += ["--head", f"--port={self.port}", "--include-dashboard=false"] if head else [f"--address=127.0.0.1:{self.port}"]
        # Agents of several raylets on one host need their own ports.
        base = self.port + 100 * (index + 1)
        args += [
            f"--dashboard-agent-listen-port={base}",
            f"--dashboard-agent-grpc-port={base + 1}",
            f"--metrics-export-port={base + 2}",
            f"--runtime-env-agent-port={base + 3}",
        ]
        for key, value in sorted(node.params.items()):
            if key == "object-store-memory":
                value = self._scaled_store(node)
            args.append(f"--{key}={self.rewrite(value)}")
        env = {**_base_env(), **node.env, **extra_env}
        out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"ray start ({node.group}) failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")

    def start(self, extra_env: dict[str, str]) -> None:
        self.stop()
        head, workers = self.nodes()
        self._start(head, True, extra_env, 0)
        self.started = True
        for i, w in enumerate(workers):
            self._start(w, False, extra_env, i + 1)
        self.head_env = {**head.env, **extra_env}

    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        subprocess.run([_ray_cli(), "stop", "--force"], capture_output=True, timeout=120)
        self.started = False

    def spilled(self) -> dict[str, int]:
        """Cluster-wide spill counters of the object stores (the raylets' store stats)."""
        from ray._private.internal_api import get_memory_info_reply, get_state_from_address

        stats = get_memory_info_reply(get_state_from_address(self.address())).store_stats
        return {"spilledBytes": stats.spilled_bytes_total, "spilledObjects": stats.spilled_objects_total, "restoredBytes": stats.restored_bytes_total}

    def run_entrypoint(self, entrypoint: str, log_path: str, timeout: float, on_line: Any = None, stop_when: Any = None) -> tuple[int, float]:
        """Runs the entrypoint on the head as Ray's job supervisor does: a shell command with the head
        container's environment and RAY_ADDRESS set. ``stop_when`` is polled every 2 s and stops the job
        once true. Returns the exit code and wall seconds."""
        env = {**_base_env(), **self.head_env, "RAY_ADDRESS": self.address()}
        started = time.time()
        with open(log_path, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(
                entrypoint, shell=True, env=env, cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
            )
            assert proc.stdout is not None

            def watch() -> None:
                """Stops the job (its whole process group) on ``stop_when`` or after ``timeout``, even when it prints nothing."""
                while proc.poll() is None:
                    time.sleep(2)
                    expired = time.time() - started > timeout
                    if proc.poll() is None and (expired or (stop_when is not None and stop_when())):
                        if expired:
                            log.write(f"\n[e2e] stopped after {timeout}s\n")
                        os.killpg(proc.pid, signal.SIGTERM)
                        return

            threading.Thread(target=watch, daemon=True).start()
            for line in proc.stdout:
                log.write(line)
                if on_line:
                    on_line(line, proc)
            rc = proc.wait()
        return rc, time.time() - started


def _ray_cli() -> str:
    """The ``ray`` command of this Python's environment."""
    beside = os.path.join(os.path.dirname(sys.executable), "ray")
    return beside if os.path.exists(beside) else (shutil.which("ray") or "ray")


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f}"


def _base_env() -> dict[str, str]:
    """The machine's environment minus anything that would leak into the job (the RayJob's env is the contract)."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "VIRTUAL_ENV", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.setdefault("PATH", os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]
    env["HF_HUB_OFFLINE"] = "1"
    env["RAY_DEDUP_LOGS"] = "0"
    return env
