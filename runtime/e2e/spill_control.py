"""The no-spill check of an embedding job, like with like: the job reads a dataset a quarter larger than its workers'
object stores, so a pipeline that held its blocks would spill; after it, on the same cluster and the same stores,
the same data is read unbounded (every block held: ``unbounded.py``), which must spill. The tuned run passes only if
it streamed; the control shows the data was large enough to tell."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from cluster import MIN_OBJECT_STORE_BYTES, OBJECT_STORE_SCALE
from job_log import UNBOUNDED, values_in
from nodes import RayNodes
from processes import HANG_GUARD_S

#: Characters per row of the spill check's smoke dataset: long rows, so the input outgrows the store in few rows
#: (the smoke tokenizer reads only each row's first characters; the encoder's cost is per row). Rows of 56,000
#: characters made the check 161 CPU-s where 28,000 made it 180 (cpuacct, the same 1.09 GB input).
SMOKE_TEXT_CHARS = 56000


@dataclass(frozen=True)
class ControlResult:
    """The unbounded read of the job's input on its cluster: the stores' bytes, the bytes it held at once, the bytes
    that spilled while it held them, and the end of its stderr (for a failed check's message)."""

    store_bytes: int
    held_bytes: int
    spilled_bytes: int
    stderr: str


@dataclass(frozen=True)
class SpillControl:
    """The spill check of the embedding job ``name`` whose workers' stores hold ``store_bytes`` (as scaled locally)."""

    name: str
    store_bytes: int

    @classmethod
    def of(cls, name: str, job: dict[str, Any]) -> SpillControl:
        worker = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
        store = max(MIN_OBJECT_STORE_BYTES, int(worker["rayStartParams"]["object-store-memory"]) // OBJECT_STORE_SCALE)
        return cls(name, store * worker["replicas"])

    def extra_args(self) -> str:
        """The job's arguments: enough rows of ``SMOKE_TEXT_CHARS`` for 1.25 times the stores."""
        rows = -(-self.store_bytes * 5 // 4 // SMOKE_TEXT_CHARS)
        return f" --smoke-rows {rows} --smoke-text-chars {SMOKE_TEXT_CHARS}"

    def measure(self, nodes: RayNodes, storage: str) -> ControlResult:
        """Reads the job's input unbounded on ``nodes`` (the job's cluster, after its run) and counts what spilled."""
        before = nodes.spilled().bytes
        data = os.path.join(storage, "smoke-data", self.name)
        out = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(__file__), "unbounded.py"), nodes.address(), data],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
        held = values_in(out.stdout.splitlines(), UNBOUNDED)
        result = ControlResult(
            self.store_bytes, held[-1]["bytes"] if held else 0, nodes.spilled().bytes - before, out.stderr[-500:]
        )
        print(
            f"  unbounded control: the same {result.held_bytes} bytes held at once on the same "
            f"{self.store_bytes}-byte store spilled {result.spilled_bytes} bytes",
            flush=True,
        )
        return result
