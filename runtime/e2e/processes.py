"""Processes of the local clusters: free ports, and the processes of given sessions (a cluster's), found and
stopped without touching any other process on the host."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time

#: How long any wait of the end-to-end runs may last before it counts as a hang: a guard, never a check. An hour,
#: because a job that takes 2 minutes on quiet cores takes 20 on a machine loaded ten times over, and must still pass.
HANG_GUARD_S = 3600.0

#: Ports this process has handed out: the OS may offer a just-closed port again, and two services of one cluster
#: must never be given the same one.
_HANDED_OUT: set[int] = set()


def free_ports(count: int) -> list[int]:
    """``count`` TCP ports that are free on this host now (the OS picks them), none handed out before by this process."""
    found: list[int] = []
    while len(found) < count:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            found.append(port)
    return found


def session_processes(sessions: list[int]) -> list[int]:
    """Pids of this host's processes in any of ``sessions`` (this process excluded)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid() and _session(int(entry)) in sessions and _alive(int(entry)):
            pids.append(int(entry))
    return pids


def stop_sessions(sessions: list[int], grace: float = 1) -> None:
    """SIGTERM, then after ``grace`` seconds SIGKILL, to every process of ``sessions`` (a cluster's). The GCS server,
    the raylets and their agents outlive a SIGTERM by more than 6 s (seen here), and a cluster is stopped only once
    its runs are over and its temp folder is about to go, so they get 1 s, not the 5 that cost every stop 6 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = session_processes(sessions)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.time() + grace
        while pids and time.time() < deadline:
            pids = [p for p in pids if _alive(p)]
            time.sleep(0.2)
        if not pids:
            return


def _session(pid: int) -> int | None:
    """The session id of ``pid`` (field 6 of /proc/<pid>/stat), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return int(f.read().rsplit(") ", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False
