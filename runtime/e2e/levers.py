"""Every lever the planner sets, checked on local Ray against the default it replaces (``npm run test:ray``).

Each check changes one value, the plan's (A) against Ray's, PyTorch's or Kubernetes' default (B), and reads what Ray
or PyTorch decided: placement by node id, CPUs offered and tasks Ray ran at once, block metadata, the operators Ray
Data ran, actors in Ray's actor table and the GPU ids it assigned them, rows per call, activation bytes autograd
saved, samples per optimizer step, checkpoints kept, the processes a DataLoader read in, bytes spilled, where the
object store lives, a driver refused. None reads a clock, so each is the same on a quiet and a loaded machine; how
fast each side runs is measured by ``npm run bench:ray`` (``bench/ray``). The plans come from the levers stack
(``levers-stack/``), rendered by the real CLI. Prints a Markdown table, writes it as JSON with ``--json``, and exits
1 when an effect does not show. Levers that cannot run here are reported with the reason, and fail nothing."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import levers_cluster
import levers_data
import levers_train
from levers_lab import WORKER_CPUS, Lab, Result, default_nodes, on_nodes, planned_nodes


@dataclass
class ClusterShape:
    """What the planned and the default cluster decided about placement and the worker's CPUs."""

    placement: dict[str, int]
    concurrency: dict[str, Any]


def _shape(lab: Lab, side: str) -> ClusterShape:
    gate = tempfile.mkdtemp(prefix=f"gate-{side}-", dir=lab.work)
    return ClusterShape(levers_cluster.placement(), levers_cluster.worker_concurrency(gate, levers_cluster.PROBE_TASKS))


def planned_cluster(lab: Lab) -> tuple[list[Result], ClusterShape]:
    """Everything checked on the planned cluster: its head placement and worker CPUs (compared with the default
    cluster afterwards), the auth refusal, the spill counter, the Ray Data levers and the Ray Train levers."""
    nodes = planned_nodes(lab, "levers-embed")
    shape: list[ClusterShape] = []

    def body() -> list[Result]:
        shape.append(_shape(lab, "planned"))
        return [
            levers_cluster.auth_result(nodes.address()),
            levers_cluster.spill_counter(),
            *levers_data.run(lab),
            *levers_train.run(lab),
        ]

    results = on_nodes(nodes, body)
    return results, shape[0]


def default_cluster(lab: Lab) -> ClusterShape:
    return on_nodes(default_nodes(lab), lambda: _shape(lab, "default"))


#: Levers the plan does not set, and why (shown in the table; nothing to measure).
NOT_SET = [
    Result(
        "Ray Data object-store limit (removed)",
        "was data.objectStoreLimitBytes",
        "-",
        "-",
        "Ray's default",
        note="it equalled Ray's default (50% of the store); the plan's working set is sized to fit that default",
    ),
    Result(
        "Tasks in flight per actor (removed)",
        "was actorPool.maxTasksInFlightPerActor",
        "-",
        "-",
        "Ray's default 2",
        note="2 is Ray's default; the working-set arithmetic uses it",
    ),
    Result(
        "Worker memory",
        "worker pod limits.memory",
        "-",
        "-",
        "-",
        note="not measured: it bounds the container (the kernel's OOM killer), which needs cgroups this harness does not create",
    ),
]


def table(results: list[Result]) -> str:
    lines = [
        "| lever | plan key | observable (read from Ray) | A: planned | B: default | decided A | decided B | effect |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        verdict = r.note if r.ok is None else ("shows: " if r.ok else "DOES NOT SHOW: ") + r.expect
        cells = [r.lever, f"`{r.plan_key}`", r.observable, r.planned, r.default, _cell(r.a), _cell(r.b), verdict]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) else json.dumps(value).replace("|", "/")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rendered", required=True, help="output of ray-gpu render -C runtime/e2e/levers-stack --stack levers"
    )
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    lab = Lab.load(args.rendered, args.work)
    started = time.time()
    planned, a = planned_cluster(lab)
    b = default_cluster(lab)
    cpus = lab.job("levers-embed")["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][
        0
    ]["resources"]["limits"]["cpu"]
    results = [
        levers_cluster.head_result(a.placement, b.placement),
        levers_cluster.cpu_result(a.concurrency, b.concurrency, f"{cpus} ({WORKER_CPUS} here)"),
        levers_cluster.shm_result(lab),
        *planned,
        *NOT_SET,
    ]
    for line in lab.log:
        print(f"  {line}", flush=True)
    print(f"\nlevers checked in {time.time() - started:.0f} s\n\n{table(results)}\n", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([r.row() for r in results], f, indent=2)
    failed = [r for r in results if r.ok is False]
    for r in failed:
        print(f"FAIL {r.lever}: expected {r.expect}; measured A={_cell(r.a)}, B={_cell(r.b)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
