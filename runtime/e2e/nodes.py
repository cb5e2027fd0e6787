"""Isolated local Ray nodes: a head and workers started with ``ray start``, each with its own parameters and
environment, isolated from anything else on the host.

Isolation: the nodes share a temp folder of their own (``--temp-dir``), every port is one that was free at start,
and every ``ray start`` runs in a session of its own, which the processes it starts inherit (Ray does not start new
sessions, and its agents rename their command lines, so a name could not find them). ``stop()`` ends only the
processes of those sessions: two runs side by side, or a developer's own Ray, are never touched. Nodes not yet
stopped are stopped when this process exits or receives SIGTERM."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from processes import HANG_GUARD_S, free_ports, stop_sessions
from ray_start import REGISTRATION_WAIT_S


@dataclass(frozen=True)
class Spill:
    """The object stores' spill counters (the raylets' store stats), summed over a cluster's nodes."""

    bytes: int
    objects: int
    restored_bytes: int


@dataclass
class NodeSpec:
    """One node: its group's name, its ``ray start`` parameters and its environment."""

    group: str
    params: dict[str, str]
    env: dict[str, str]
    #: Size of /dev/shm for this node: a tmpfs in a private mount namespace (needs CAP_SYS_ADMIN); None: the host's.
    shm_bytes: int | None = None


#: What ``ray start`` prints when a node did not register with the GCS within the wait: Ray's is 30 s, hard-coded
#: (``raylet_start_wait_time_s`` in ray/_private/node.py, Ray 2.58), and ``ray_start.py`` lets each of its polls wait
#: up to 300 s, as a healthy node on a machine loaded many times over may need. Such a start is made again; any other
#: failure is not.
RAY_START_TIMED_OUT = "timed out during startup"
#: Starts of one cluster before a timed-out start counts as a failure.
START_ATTEMPTS = 3


class RayStartTimedOut(RuntimeError):
    """``ray start`` ended by Ray's own registration wait (see ``RAY_START_TIMED_OUT``)."""


@dataclass(eq=False)
class RayNodes:
    head: NodeSpec
    workers: list[NodeSpec]
    #: The GCS port, free on this host, chosen by ``start()``.
    port: int = 0
    #: The nodes' Ray temp folder (short: Ray's socket paths must stay under 108 bytes), made by ``start()``.
    temp_dir: str = ""
    #: Session ids of the nodes' processes: one per ``ray start``.
    sessions: list[int] = field(default_factory=list)
    #: What each ``ray start`` printed, by group (in start order).
    start_output: list[tuple[str, str]] = field(default_factory=list)
    head_env: dict[str, str] = field(default_factory=dict)
    #: What every node's environment got beyond its own (``start``'s ``extra_env``), for a replaced node.
    extra_env: dict[str, str] = field(default_factory=dict)
    #: Each node's metrics export port, in session order: how a Ray node id is matched to its node here.
    metrics_ports: list[str] = field(default_factory=list)

    def _start(self, node: NodeSpec, head: bool, extra_env: dict[str, str]) -> None:
        args = [
            sys.executable,
            RAY_START,
            "start",
            "--disable-usage-stats",
            f"--temp-dir={self.temp_dir}",
            "--min-worker-port=0",
            "--max-worker-port=0",
        ]
        if head:
            args += [
                "--head",
                f"--port={self.port}",
                "--include-dashboard=false",
                f"--ray-client-server-port={free_ports(1)[0]}",
            ]
        else:
            args += [f"--address=127.0.0.1:{self.port}"]
        # Every raylet's agents get ports that are free now, so clusters side by side never collide.
        agent, grpc, metrics, runtime_env = free_ports(4)
        args += [f"--dashboard-agent-listen-port={agent}", f"--dashboard-agent-grpc-port={grpc}"]
        args += [f"--metrics-export-port={metrics}", f"--runtime-env-agent-port={runtime_env}"]
        self.metrics_ports.append(str(metrics))
        args += [f"--{key}={value}" for key, value in sorted(node.params.items())]
        if node.shm_bytes is not None:
            mount = 'mount -t tmpfs -o size="$0" tmpfs /dev/shm && exec "$@"'
            args = ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, str(node.shm_bytes), *args]
        env = {**base_env(), **node.env, **extra_env}
        proc = subprocess.Popen(
            args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.sessions.append(proc.pid)  # a new session's id is its leader's pid
        output, _ = proc.communicate(timeout=HANG_GUARD_S)
        self.start_output.append((node.group, output))
        if proc.returncode != 0:
            failed = RayStartTimedOut if RAY_START_TIMED_OUT in output else RuntimeError
            raise failed(f"ray start ({node.group}) failed:\n{output[-3000:]}")

    def start(self, extra_env: dict[str, str]) -> None:
        """Starts the head and the workers in a temp folder of their own, on free ports. A start whose registration
        wait still ran out (``ray_start.py``'s, 300 s per poll) is stopped and made again, from scratch, up to
        ``START_ATTEMPTS`` times, saying so: a loaded run's log shows whether any start needed a second attempt."""
        self.extra_env = dict(extra_env)
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                self._start_all(extra_env)
                return
            except RayStartTimedOut:
                if attempt == START_ATTEMPTS:
                    raise
                print(
                    f"  ray start outlasted the {REGISTRATION_WAIT_S:.0f} s registration wait (attempt {attempt}): starting again",
                    flush=True,
                )

    def _start_all(self, extra_env: dict[str, str]) -> None:
        self.temp_dir = tempfile.mkdtemp(prefix="rg", dir="/tmp")
        self.port = free_ports(1)[0]
        self.metrics_ports = []
        _install_cleanup()
        _LIVE.add(self)
        try:
            self._start(self.head, True, extra_env)
            for w in self.workers:
                self._start(w, False, extra_env)
        except Exception:
            self.stop()
            raise
        self.head_env = {**self.head.env, **extra_env}

    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Ends the nodes' processes, and only them, then removes their temp folder."""
        stop_sessions(self.sessions)
        self.sessions = []
        if self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        _LIVE.discard(self)

    def replace_worker(self, node_id: str, extra_env: dict[str, str]) -> NodeSpec:
        """Stops the worker node ``node_id`` (its session: raylet, agents, workers; SIGTERM, then SIGKILL) and starts
        one of the same spec in its place, as KubeRay recreates a deleted worker pod on a new node. Returns its spec."""
        index = self._worker_index(node_id)
        stop_sessions([self.sessions[1 + index]])
        del self.sessions[1 + index], self.metrics_ports[1 + index]
        node = self.workers.pop(index)
        self.workers.append(node)  # its session is appended by _start: workers and sessions stay in step
        self._start(node, False, extra_env)
        return node

    def _worker_index(self, node_id: str) -> int:
        """Index in ``workers`` of the Ray node ``node_id``, found by its metrics port (each node's own)."""
        out = subprocess.run(
            [sys.executable, "-c", _NODE_PORT_PROBE, self.address(), node_id],
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
        if out.returncode != 0:
            raise RuntimeError(f"reading the node table failed: {out.stderr[-1000:]}")
        port = out.stdout.strip().splitlines()[-1]
        matches = [i for i, w in enumerate(self.workers) if self.metrics_ports[1 + i] == port]
        if len(matches) != 1:
            raise RuntimeError(f"node {node_id} (metrics port {port}) is not one worker of this cluster")
        return matches[0]

    def actors(self, class_name: str) -> list[dict[str, Any]]:
        """Live actors of ``class_name`` on these nodes, from the GCS actor table: pid and node of each.
        (``ray.util.state`` would need the dashboard, which this environment does not install.)"""
        out = subprocess.run(
            [sys.executable, "-c", _ACTORS_PROBE, self.address(), class_name],
            env=base_env(),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
        if out.returncode != 0:
            raise RuntimeError(f"reading the actor table failed: {out.stderr[-1000:]}")
        return list(json.loads(out.stdout.strip().splitlines()[-1]))

    def spilled(self) -> Spill:
        """Spill counters of the object stores (the raylets' store stats), summed over the nodes."""
        from ray._private.internal_api import get_memory_info_reply, get_state_from_address

        stats = get_memory_info_reply(get_state_from_address(self.address())).store_stats
        return Spill(stats.spilled_bytes_total, stats.spilled_objects_total, stats.restored_bytes_total)

    def run_entrypoint(
        self,
        entrypoint: str,
        cwd: str,
        log_path: str,
        timeout: float,
        on_line: Callable[[str, subprocess.Popen[str]], None] | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> tuple[int, float]:
        """Runs the entrypoint on the head as Ray's job supervisor does: a shell command with the head
        container's environment (plus ``extra_env``) and RAY_ADDRESS set, in a process group of its own, stopped
        after ``timeout`` (a hang guard). Returns the exit code and wall seconds."""
        env = {**base_env(), **self.head_env, **(extra_env or {}), "RAY_ADDRESS": self.address()}
        started = time.time()
        with open(log_path, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(
                entrypoint,
                shell=True,
                env=env,
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            assert proc.stdout is not None
            guard = threading.Timer(timeout, _stop_hung, args=(proc, log, timeout))
            guard.daemon = True
            guard.start()
            try:
                for line in proc.stdout:
                    log.write(line)
                    if on_line:
                        on_line(line, proc)
                rc = proc.wait()
            finally:
                guard.cancel()
        return rc, time.time() - started


def _stop_hung(proc: subprocess.Popen[str], log: TextIO, timeout: float) -> None:
    """The hang guard of ``run_entrypoint``: SIGTERM to the entrypoint's process group once ``timeout`` has passed."""
    if proc.poll() is None:
        log.write(f"\n[e2e] stopped after {timeout}s\n")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)


#: Prints the live actors of a class (argv: address, class name) as JSON, from a driver of that cluster.
_ACTORS_PROBE = """
import json, sys
import ray, ray._private.state as state
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
alive = [a for a in state.actors().values() if a["ActorClassName"] == sys.argv[2] and a["State"] == "ALIVE"]
print(json.dumps([{"pid": a["Pid"], "node": a["Address"]["NodeID"]} for a in alive]))
"""

#: Prints the metrics export port of a node (argv: address, node id), from a driver of that cluster.
_NODE_PORT_PROBE = """
import sys
import ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
print(next(n["MetricsExportPort"] for n in ray.nodes() if n["NodeID"] == sys.argv[2]))
"""

#: Nodes started and not yet stopped.
_LIVE: set[RayNodes] = set()


def _stop_all() -> None:
    for nodes in list(_LIVE):
        nodes.stop()


def _stop_all_and_exit(signum: int, _frame: object) -> None:
    _stop_all()
    sys.exit(128 + signum)


def _install_cleanup() -> None:
    """Stops live nodes at exit and on SIGTERM. Installed by the first ``start`` (never on import: Ray's workers
    import the experiment modules, and their own SIGTERM handling must stay Ray's)."""
    if not getattr(_install_cleanup, "done", False):
        atexit.register(_stop_all)
        signal.signal(signal.SIGTERM, _stop_all_and_exit)
        _install_cleanup.done = True  # type: ignore[attr-defined]


#: ``ray start`` with a starting node's registration waited for longer than Ray's 30 s (``ray_start.py``).
RAY_START = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ray_start.py")


#: The Ray cluster token of this harness's clusters (KubeRay puts the namespace's Secret in the same variables). Set
#: in this process's environment at import, before anything imports Ray (which reads it then), so drivers here (ray.init,
#: the state API) present it; a Ray worker importing this module keeps the token its cluster gave it.
RAY_TOKEN = os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_urlsafe(32))
AUTH_ENV = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": RAY_TOKEN}
os.environ.setdefault("RAY_AUTH_MODE", "token")


def base_env() -> dict[str, str]:
    """The machine's environment minus anything that would leak into the job (the RayJob's env is the contract)."""
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "VIRTUAL_ENV", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.setdefault("PATH", os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]
    env["HF_HUB_OFFLINE"] = "1"
    env["RAY_DEDUP_LOGS"] = "0"
    return {**env, **AUTH_ENV}
