"""The e2e clusters' start: only a start that Ray's own 30-second registration wait ended is made again, a few times;
any other failure is raised at once. No Ray process runs here: the start of one cluster is replaced."""

from __future__ import annotations

import pytest
from nodes import START_ATTEMPTS, NodeSpec, RayNodes, RayStartTimedOut


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
