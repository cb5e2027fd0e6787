"""The e2e clusters' start: only a start that the registration wait ended is made again, a few times; any other failure
is raised at once. No Ray process runs here: the start of one cluster is replaced. And the wait itself
(``ray_start.py``): a node that registers late, within ``REGISTRATION_WAIT_S``, is waited for instead of failing Ray's
30 s; one that never does still fails. The clock is a counter here: no test waits."""

from __future__ import annotations

import pytest
from nodes import RAY_START, START_ATTEMPTS, NodeSpec, RayNodes, RayStartTimedOut
from ray_start import POLL_S, REGISTRATION_WAIT_S, patient


def nodes_failing(failures: list[Exception]) -> tuple[RayNodes, list[int]]:
    """A cluster whose starts raise ``failures`` in turn, then succeed; and the list of attempts made."""
    attempts: list[int] = []
    nodes = RayNodes(head=NodeSpec(group="head", params={}, env={}), workers=[])

    def start_all(_extra_env: dict[str, str]) -> None:
        attempts.append(len(attempts) + 1)
        if failures:
            raise failures.pop(0)

    nodes._start_all = start_all  # type: ignore[method-assign]
    return nodes, attempts


def test_a_start_that_outlasts_rays_registration_wait_is_made_again() -> None:
    nodes, attempts = nodes_failing([RayStartTimedOut("timed out during startup")] * (START_ATTEMPTS - 1))
    nodes.start({})
    assert attempts == list(range(1, START_ATTEMPTS + 1))


def test_it_gives_up_after_the_last_attempt() -> None:
    nodes, attempts = nodes_failing([RayStartTimedOut("timed out during startup")] * START_ATTEMPTS)
    with pytest.raises(RayStartTimedOut):
        nodes.start({})
    assert len(attempts) == START_ATTEMPTS


def test_any_other_failure_is_raised_at_once() -> None:
    nodes, attempts = nodes_failing([RuntimeError("ray start (head) failed: bad flag")])
    with pytest.raises(RuntimeError, match="bad flag"):
        nodes.start({})
    assert attempts == [1]


class Gcs:
    """A node table the node appears in after ``registers_after`` seconds of a counted clock (``None``: never)."""

    def __init__(self, registers_after: float | None) -> None:
        self.registers_after = registers_after
        self.now = 0.0
        self.polls = 0

    def get_node(self, _address: str, node_id: str) -> dict[str, str]:
        self.polls += 1
        if self.registers_after is None or self.now < self.registers_after:
            raise RuntimeError(f"node {node_id} not found")
        return {"node_id": node_id}

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_node_that_registers_after_rays_30_s_is_waited_for() -> None:
    gcs = Gcs(registers_after=95.0)
    get_node = patient(gcs.get_node, sleep=gcs.sleep, clock=lambda: gcs.now)
    assert get_node("gcs", "n1") == {"node_id": "n1"}
    assert gcs.now == 95.0 and gcs.polls == 95.0 / POLL_S + 1


def test_a_node_that_never_registers_still_fails_after_the_wait() -> None:
    gcs = Gcs(registers_after=None)
    get_node = patient(gcs.get_node, sleep=gcs.sleep, clock=lambda: gcs.now)
    with pytest.raises(RuntimeError, match="not found"):
        get_node("gcs", "n1")
    assert gcs.now == REGISTRATION_WAIT_S


def test_the_clusters_start_nodes_through_the_patient_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    import nodes as nodes_module

    started: list[list[str]] = []

    class Started(Exception):
        pass

    def popen(args: list[str], **_kwargs: object) -> None:
        started.append(args)
        raise Started

    monkeypatch.setattr(nodes_module.subprocess, "Popen", popen)
    cluster = RayNodes(head=NodeSpec(group="head", params={}, env={}), workers=[])
    with pytest.raises(Started):
        cluster._start(cluster.head, True, {})
    assert started[0][1:3] == [RAY_START, "start"] and RAY_START.endswith("e2e/ray_start.py")
