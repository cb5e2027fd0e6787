"""Every lever the planner sets, measured on local Ray against the default it replaces (``npm run test:ray``).

Each experiment changes one value, the plan's (A) against Ray's, PyTorch's or Kubernetes' default (B), and reads the
effect from Ray or PyTorch: placement by node id, tasks running at once, block metadata, operator stats, GPU ids
assigned to actors, rows per batch, activation bytes, checkpoints kept, time waiting for data, bytes spilled, where
the object store lives. The plans come from the levers stack (``levers-stack/``), rendered by the real CLI. Prints a
Markdown table, writes it as JSON with ``--json``, and exits 1 when an effect does not show. Levers that cannot run
here are reported with the reason, and fail nothing."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the runtime library
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import levers_cluster
import levers_data
import levers_train
from levers_lab import WORKER_CPUS, Lab, Result, default_nodes, on_nodes, planned_nodes


def planned_cluster(lab: Lab) -> tuple[list[Result], dict[str, int], int]:
    """Everything measured on the planned cluster: its head placement and worker concurrency (compared with the
    default cluster afterwards), the spill counter, the Ray Data levers and the Ray Train levers."""
    measured: dict[str, object] = {}

    def body() -> list[Result]:
        measured["placement"] = levers_cluster.placement()
        measured["concurrency"] = levers_cluster.worker_concurrency()
        return [levers_cluster.auth_result(nodes.address()), levers_cluster.spill_counter(), *levers_data.run(lab), *levers_train.run(lab)]

    nodes = planned_nodes(lab, "levers-embed")
    results = on_nodes(nodes, body)
    return results, measured["placement"], measured["concurrency"]  # type: ignore[return-value]


def idle_cluster(lab: Lab) -> list[Result]:
    """The GPU actors' idle fraction, on the planned cluster with a store that does not bind (see levers_data)."""
    return on_nodes(planned_nodes(lab, "levers-embed", levers_data.IDLE_STORE_BYTES), lambda: levers_data.run_idle(lab))


def default_cluster(lab: Lab) -> tuple[dict[str, int], int]:
    measured: dict[str, object] = {}

    def body() -> list[Result]:
        measured["placement"] = levers_cluster.placement()
        measured["concurrency"] = levers_cluster.worker_concurrency()
        return []

    on_nodes(default_nodes(lab), body)
    return measured["placement"], measured["concurrency"]  # type: ignore[return-value]


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
        "| lever | plan key | observable (read from Ray) | A: planned | B: default | measured A | measured B | effect |",
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
    parser.add_argument("--rendered", required=True, help="output of ray-gpu render -C runtime/e2e/levers-stack --stack levers")
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    lab = Lab.load(args.rendered, args.work)
    started = time.time()
    planned, placement_a, concurrency_a = planned_cluster(lab)
    idle = idle_cluster(lab)
    placement_b, concurrency_b = default_cluster(lab)
    cpus = lab.job("levers-embed")["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"]
    results = [
        levers_cluster.head_result(placement_a, placement_b),
        levers_cluster.cpu_result(concurrency_a, concurrency_b, f"{cpus} ({WORKER_CPUS} here)"),
        levers_cluster.shm_result(lab),
        *planned,
        *idle,
        *NOT_SET,
    ]
    for line in lab.log:
        print(f"  {line}", flush=True)
    print(f"\nlevers measured in {time.time() - started:.0f} s\n\n{table(results)}\n", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump([r.row() for r in results], f, indent=2)
    failed = [r for r in results if r.ok is False]
    for r in failed:
        print(f"FAIL {r.lever}: expected {r.expect}; measured A={_cell(r.a)}, B={_cell(r.b)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
