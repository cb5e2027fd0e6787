"""``ray start`` as the local clusters run it (``nodes.RayNodes``): Ray's own command line, with one change. A starting
node must register with the GCS within 30 s, a wait hard-coded in Ray 2.58 (``raylet_start_wait_time_s`` in
``ray/_private/node.py``, which polls ``ray._private.services.get_node`` until it stops raising). On a machine loaded
many times over a healthy node takes longer, and a start that Ray ends there must be made again from scratch. Here each
poll itself waits, up to ``REGISTRATION_WAIT_S``: the node gets that long to register; a node that never does still
fails, and is started again (``nodes.START_ATTEMPTS``).

Run as ``python ray_start.py start ...`` with the arguments of ``ray start``."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

#: How long a starting node may take to register with the GCS: ten times Ray's own 30 s.
REGISTRATION_WAIT_S = 300.0
#: Between two polls of the GCS's node table.
POLL_S = 0.5

T = TypeVar("T")


def patient(
    poll: Callable[..., T],
    wait_s: float = REGISTRATION_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Callable[..., T]:
    """``poll`` made to retry its ``RuntimeError`` (the node is not registered yet) until ``wait_s`` has passed, then
    raise it as Ray would."""

    def waiting(*args: Any, **kwargs: Any) -> T:
        deadline = clock() + wait_s
        while True:
            try:
                return poll(*args, **kwargs)
            except RuntimeError:
                if clock() >= deadline:
                    raise
                sleep(POLL_S)

    return waiting


def main() -> int:
    import ray._private.services as services
    from ray.scripts.scripts import main as ray_main

    services.get_node = patient(services.get_node)
    sys.argv[0] = "ray"
    ray_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
