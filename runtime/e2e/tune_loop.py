"""The closed loop of ``ray-gpu tune`` on real Ray: the tune stack's embedding job with one bad setting (a line added
to its entry), run as Ray's job supervisor would run it on a local cluster of its own; the run record it writes;
``ray-gpu tune`` on that record (``--write`` edits the stack copy); and the job run again on the tuned plan.
``test_tune_loop.py`` (``npm run test:ray``) asserts which stage tune names on each bad run; ``bench/ray/tune_bench.py``
(``npm run bench:ray``) times the bad and tuned plans, interleaved."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster import load_rendered
from job_cluster import job_dir, started_cluster
from processes import HANG_GUARD_S

REPO = Path(__file__).resolve().parents[2]
STACK_DIR = REPO / "runtime/e2e/tune-stack"
STACK = "tune"
WORKLOAD = "embed-tune"
#: The smoke dataset of every run: 3 files of 9,000 rows of 7,000 characters, 63 MB each, so that blocks of the
#: planned 17 MiB split them and blocks of the bad 96 MiB are whole files.
ROWS, TEXT_CHARS, FILES = 27_000, 7000, 3
#: The local stores: the plan's divided by this, at least Ray's 80 MiB (the worker's 13 GiB and the head's 2 GiB
#: become 80 MiB each). The plan's blocks fit them; whole-file blocks do not, and spill.
STORE_SCALE = 256


@dataclass(frozen=True)
class BadSetting:
    """One bad setting: the line added to the workload's entry, the stage it binds (as tune names it on the runs
    recorded in test/data/run-records, when the shares show it), and the field tune's change sets or takes out."""

    name: str
    line: str
    stage: str
    field: str


#: The bad settings of the issue: a starved preprocessing pool, a tiny encoder batch, blocks so large the store spills.
BAD_SETTINGS = (
    BadSetting("starved-preprocessing", "preprocessConcurrency: 1", "preprocess", "preprocessConcurrency"),
    BadSetting("tiny-batch", "batchSize: 4", "gpu", "batchSize"),
    BadSetting("huge-blocks", "blockSizeMiB: 96", "objectStore", "blockSizeMiB"),
)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``ray-gpu`` (the built CLI), output captured."""
    return subprocess.run(
        ["node", str(REPO / "bin/ray-gpu.js"), *args], cwd=REPO, capture_output=True, text=True, timeout=HANG_GUARD_S
    )


def stack_copy(work: str, bad: BadSetting | None) -> str:
    """A copy of the tune stack's folder with ``bad``'s line added to the workload's entry."""
    folder = os.path.join(work, "stack")
    os.makedirs(folder, exist_ok=True)
    text = (STACK_DIR / f"Pulumi.{STACK}.yaml").read_text(encoding="utf-8")
    if bad is not None:
        text = text.replace(f"      name: {WORKLOAD}\n", f"      name: {WORKLOAD}\n      {bad.line}\n", 1)
    Path(folder, f"Pulumi.{STACK}.yaml").write_text(text, encoding="utf-8")
    return folder


def render(stack: str, out: str) -> dict[str, dict[str, Any]]:
    """The stack rendered by the CLI, as objects by ``Kind/name``."""
    shutil.rmtree(out, ignore_errors=True)
    done = cli("render", "-C", stack, "--stack", STACK, "--out", out)
    if done.returncode != 0:
        raise RuntimeError(f"ray-gpu render failed: {done.stderr}")
    return load_rendered(out)


def run_job(objects: dict[str, dict[str, Any]], work: str, label: str) -> dict[str, Any]:
    """One run of the workload's RayJob (``--smoke`` on the tune dataset) on a local cluster of its own; its record."""
    job = objects[f"RayJob/{WORKLOAD}"]
    folder = job_dir(work, label)
    record = os.path.join(folder, "run-record.json")
    storage = os.path.join(work, "storage")  # shared by the runs: the dataset is written once
    with started_cluster(WORKLOAD, job, objects, folder, storage, STORE_SCALE) as (cluster, _doc):
        entrypoint = f"{job['spec']['entrypoint']} --smoke --smoke-rows {ROWS} --smoke-text-chars {TEXT_CHARS} --smoke-files {FILES}"
        rc, _wall = cluster.run_entrypoint(
            entrypoint, os.path.join(folder, "job.log"), HANG_GUARD_S, extra_env={"RAY_GPU_RUN_RECORD_FILE": record}
        )
    if rc != 0:
        raise RuntimeError(f"{label}: the job failed (exit {rc}); its log: {os.path.join(folder, 'job.log')}")
    with open(record, encoding="utf-8") as f:
        return dict(json.load(f))


def tune(stack: str, record: dict[str, Any], work: str, write: bool) -> dict[str, Any]:
    """``ray-gpu tune --json`` on ``record``, ``--write`` when asked; its result."""
    path = os.path.join(work, "record-for-tune.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f)
    done = cli("tune", "-C", stack, "--stack", STACK, "--from", path, "--json", *(["--write"] if write else []))
    if done.returncode != 0:
        raise RuntimeError(f"ray-gpu tune failed: {done.stderr}")
    return dict(json.loads(done.stdout))


def rows_per_second(record: dict[str, Any]) -> float:
    return float(record["data"]["rows"] / record["data"]["wallSeconds"])


def stage_shares(record: dict[str, Any]) -> dict[str, float]:
    """Each pipeline stage's busiest operator in ``record``: its busy seconds over its slots' time in the run."""
    data = record["data"]
    shares: dict[str, float] = {}
    for op in data["operators"]:
        share = min(1.0, op["busySeconds"] / (op["slots"] * data["wallSeconds"]))
        shares[op["stage"]] = max(share, shares.get(op["stage"], 0.0))
    return {s: shares[s] for s in ("read", "preprocess", "gpu") if s in shares}


def verdict_problems(result: dict[str, Any], record: dict[str, Any]) -> list[str]:
    """Where tune's verdict on ``record`` disagrees with the record's own numbers: a pipeline stage named as the bound
    must be the busiest with at least the bound share; a run with no such stage must be named healthy with no bound
    (``none``) or by a rule that reads no time (the store spilled). Holds however fast the machine ran the job."""
    diagnosis, bound = result["diagnosis"], result["boundShare"]
    shares = stage_shares(record)
    busiest = max(shares, key=lambda s: shares[s])
    stage = diagnosis["stage"]
    if stage in shares and not (stage == busiest and shares[stage] >= bound):
        return [
            f"tune names {stage} (busy {shares[stage]:.2f}), but the busiest stage is {busiest} at {shares[busiest]:.2f}, bound at {bound}"
        ]
    if shares[busiest] < bound and stage not in ("none", "objectStore"):
        return [f"no stage reached {bound} (busiest {busiest} {shares[busiest]:.2f}), yet tune names {stage}"]
    return []
