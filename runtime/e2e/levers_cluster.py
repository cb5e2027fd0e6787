"""Levers of the cluster's shape: a head that runs no work, the worker's CPUs, /dev/shm sized for the object store,
and a check that the spill counter the no-spill claims rely on does count spills."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from levers_lab import KUBERNETES_DEFAULT_SHM_BYTES, WORKER_STORE_BYTES, Lab, Result
from nodes import NodeSpec, RayNodes
from processes import HANG_GUARD_S, session_processes

#: Tasks that probe placement and concurrency (1 CPU each, as Ray's default).
PROBE_TASKS = 8


def head_and_worker_ids() -> tuple[str, str]:
    import ray

    nodes = [n for n in ray.nodes() if n["Alive"]]
    head = next(n["NodeID"] for n in nodes if "node:__internal_head__" in n["Resources"])
    return head, next(n["NodeID"] for n in nodes if n["NodeID"] != head)


def _node_cpus(node_id: str) -> int:
    import ray

    return int(next(n for n in ray.nodes() if n["NodeID"] == node_id)["Resources"].get("CPU", 0))


def placement() -> dict[str, int]:
    """Where Ray placed plain tasks (its default policy, and SPREAD, which puts tasks on every node that can take
    them) and actors: node ids from each one's runtime context; and the CPUs Ray offers on the head."""
    import ray

    @ray.remote
    def where() -> str:
        return str(ray.get_runtime_context().get_node_id())

    @ray.remote
    class Where:
        def node(self) -> str:
            return str(ray.get_runtime_context().get_node_id())

    head, _ = head_and_worker_ids()
    tasks = ray.get([where.remote() for _ in range(2 * PROBE_TASKS)])
    spread = ray.get([where.options(scheduling_strategy="SPREAD").remote() for _ in range(2 * PROBE_TASKS)])
    actors = [Where.remote() for _ in range(2)]  # type: ignore[attr-defined]
    placed = ray.get([a.node.remote() for a in actors])
    return {
        "headCPUs": _node_cpus(head),
        "tasks": len(tasks),
        "tasksOnHead": tasks.count(head),
        "spreadTasksOnHead": spread.count(head),
        "actors": len(placed),
        "actorsOnHead": placed.count(head),
    }


def worker_concurrency(gate_dir: str, quorum: int) -> dict[str, Any]:
    """1-CPU tasks Ray runs at once on the worker node. When Ray offers at least ``quorum`` CPUs there, ``quorum``
    tasks each wait at a gate until all are inside, holding their CPU (a ``ray.get`` would lend it to another task):
    they all finish only if Ray ran them all at once. Otherwise the tasks pass straight through, and each counts the
    ones inside as it enters: never more than Ray's CPUs there."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    _, worker = head_and_worker_ids()
    cpus = _node_cpus(worker)
    wait = cpus >= quorum
    inside = ray.remote(num_cpus=1, scheduling_strategy=NodeAffinitySchedulingStrategy(worker, soft=False))(gate)
    seen = ray.get([inside.remote(gate_dir, i, quorum if wait else 0) for i in range(quorum)], timeout=HANG_GUARD_S)
    return {"workerCPUs": cpus, "tasks": quorum, "mostAtOnce": max(seen), "gateMet": wait}


def gate(gate_dir: str, index: int, quorum: int) -> int:
    """One task at the gate: marks itself inside, then waits until ``quorum`` are inside (0: does not wait), and
    leaves; returns how many were inside when it entered (itself included)."""
    import time

    mine = os.path.join(gate_dir, f"inside-{index}")
    open(mine, "w").close()
    entered = _inside(gate_dir)
    for _ in range(int(HANG_GUARD_S / 0.05)):
        if _inside(gate_dir) >= quorum:
            break
        time.sleep(0.05)  # holds the task's CPU: the point of the gate
    else:
        raise TimeoutError(f"{quorum} tasks never ran at once within {HANG_GUARD_S} s (a hang guard)")
    if not quorum:
        os.remove(mine)  # with a quorum every task stays marked, so the gate stays met for the others
    return entered


def _inside(gate_dir: str) -> int:
    return sum(1 for name in os.listdir(gate_dir) if name.startswith("inside-"))


def spill_counter() -> Result:
    """The counter behind every no-spill check must see a spill: objects past the store's size, held by the driver."""
    import ray

    before = _store_spilled()
    held = [ray.put(np.ones(40 * 2**20, dtype=np.uint8)) for _ in range(6)]  # 240 MiB on the head's 128 MiB store
    after = _store_spilled()
    del held
    return Result(
        "Spill counter (precondition)",
        "-",
        "bytes spilled, from the raylets' store stats",
        "240 MiB put",
        "nothing put",
        a=after - before,
        b=0,
        ok=after - before > 0,
        expect="A > 0: the counter the no-spill checks read does count spills",
    )


def _store_spilled() -> int:
    import ray
    from ray._private.internal_api import get_memory_info_reply, get_state_from_address

    address = ray.get_runtime_context().gcs_address
    return int(get_memory_info_reply(get_state_from_address(address)).store_stats.spilled_bytes_total)


def head_result(planned: dict[str, int], default: dict[str, int]) -> Result:
    on_head = lambda p: p["tasksOnHead"] + p["spreadTasksOnHead"] + p["actorsOnHead"]  # noqa: E731
    return Result(
        "Head runs no work",
        "head rayStartParams num-cpus: 0",
        f"CPUs Ray offers on the head, and of {planned['tasks']} tasks (Ray's default policy), {planned['tasks']} more spread "
        f"(SPREAD) and {planned['actors']} actors, how many Ray placed on the head (node ids)",
        "num-cpus 0",
        "Ray's default: the node's CPUs",
        a=planned,
        b=default,
        ok=planned["headCPUs"] == 0
        and on_head(planned) == 0
        and default["headCPUs"] > 0
        and default["spreadTasksOnHead"] > 0,
        expect="A: no CPU on the head and nothing placed there; B: the head offers CPUs and SPREAD places tasks on it",
    )


def cpu_result(planned: dict[str, Any], default: dict[str, Any], cpus: str) -> Result:
    result = Result(
        "Worker CPUs",
        "worker pod limits.cpu (KubeRay's num-cpus)",
        f"CPUs Ray offers on the worker, and 1-CPU tasks it runs there at once ({PROBE_TASKS} that each wait until all are running)",
        f"{cpus} CPUs",
        "Ray's default: the CPUs it detects",
        a=planned,
        b=default,
        expect=f"A: all {PROBE_TASKS} run at once; B: Ray's detected CPUs hold it to fewer",
    )
    if default["workerCPUs"] >= PROBE_TASKS:
        result.note = (
            f"not shown here: Ray detects {default['workerCPUs']} CPUs on this machine, enough for all {PROBE_TASKS}"
        )
        return result
    result.ok = (
        planned["gateMet"]
        and planned["mostAtOnce"] == PROBE_TASKS
        and default["mostAtOnce"] <= default["workerCPUs"] < PROBE_TASKS
    )
    return result


def shm_result(lab: Lab) -> Result:
    """Where Ray puts a node's object store with /dev/shm sized as planned and as Kubernetes leaves it."""
    ratio = _planned_shm_ratio(lab)
    planned_shm = int(WORKER_STORE_BYTES * ratio)
    result = Result(
        "/dev/shm sized for the store",
        "memory-backed emptyDir on /dev/shm",
        f"where Ray put a {WORKER_STORE_BYTES >> 20} MiB object store (the raylet's plasma directory)",
        f"{planned_shm >> 20} MiB (store x {ratio:.3f}, as planned)",
        f"Kubernetes' default {KUBERNETES_DEFAULT_SHM_BYTES >> 20} MiB",
        expect="A in /dev/shm (memory); B falls back to disk",
    )
    try:
        result.a = _plasma_directory(planned_shm)
        result.b = _plasma_directory(KUBERNETES_DEFAULT_SHM_BYTES)
    except RuntimeError as e:
        if "unshare" not in str(e) and "mount" not in str(e):
            raise
        result.note = (
            "not run: sizing /dev/shm needs a private mount namespace (CAP_SYS_ADMIN), which this machine refuses"
        )
        return result
    result.ok = result.a == "/dev/shm" and result.b != "/dev/shm"
    return result


def _planned_shm_ratio(lab: Lab) -> float:
    group = lab.job("levers-embed")["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    shm = next(v["emptyDir"]["sizeLimit"] for v in group["template"]["spec"]["volumes"] if v["name"] == "dshm")
    return _bytes(shm) / int(group["rayStartParams"]["object-store-memory"])


def _bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return int(float(quantity[: -len(suffix)]) * factor)
    return int(quantity)


def _plasma_directory(shm_bytes: int) -> str:
    """A head alone, its /dev/shm a tmpfs of ``shm_bytes``: the plasma directory its raylet was started with."""
    nodes = RayNodes(
        NodeSpec("head", {"num-cpus": "0", "object-store-memory": str(WORKER_STORE_BYTES)}, {}, shm_bytes=shm_bytes), []
    )
    nodes.start({})
    try:
        for pid in session_processes(nodes.sessions):
            args = _cmdline(pid)
            if any(a.endswith("/raylet") for a in args[:1]):
                return next(a.split("=", 1)[1] for a in args if a.startswith("--plasma_directory="))
        raise RuntimeError("no raylet found in the head's session")
    finally:
        nodes.stop()


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode() for a in f.read().split(b"\0") if a]
    except OSError:
        return []


_CONNECT = "import sys, ray; ray.init(address=sys.argv[1], logging_level='ERROR'); print('connected', ray.cluster_resources().get('CPU'))"


def auth_result(address: str) -> Result:
    """Ray token authentication (KubeRay's `authOptions`): a driver without the cluster's token is turned away."""
    import subprocess
    import sys

    from nodes import AUTH_ENV, base_env

    def connect(env: dict[str, str]) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-c", _CONNECT, address], env=env, capture_output=True, text=True, timeout=HANG_GUARD_S
        )
        text = out.stdout + out.stderr
        return {
            "exit": out.returncode,
            "connected": "connected" in out.stdout,
            "refused": "nauthenticated" in text or "AuthenticationError" in text,
        }

    without = {k: v for k, v in base_env().items() if k not in AUTH_ENV}
    a, b = connect(without), connect(base_env())
    return Result(
        "Ray token authentication",
        "rayClusterSpec.authOptions {mode: token}",
        "whether a driver connects to the cluster, without (A) and with (B) the token",
        "a driver without the token",
        "a driver with the token (what KubeRay gives the submitter and Ray pods)",
        a=a,
        b=b,
        ok=not a["connected"] and a["refused"] and b["connected"],
        expect="A is refused as unauthenticated; B connects",
    )
