"""Local end-to-end run of the rendered dev RayJobs (``npm run test:ray``).

For each rendered RayJob: start an isolated local Ray cluster from its rayStartParams and container environment
(scaled down where a 2-CPU machine without GPUs needs it; every change is printed), run its entrypoint with
``--smoke`` as Ray's job supervisor would, and check that the job succeeds, that it handed every planned value to
Ray, that training workers ran with the planned world size, micro-batch and accumulation (as their batches show),
and that nothing spilled. Then the training job is killed mid-run (one of its own Ray Train workers, found in its
cluster's actor table) and must resume from its last checkpoint, with every worker's data continuing at the row after
the last one it trained on (``data_positions.py``), and finish; and an embedding job's rerun is killed mid-write and
must leave the previous committed output intact (``committed_outputs.py``). ``--checks`` picks among the three. What each value does to Ray is
measured separately, lever by lever (``levers.py``). Exit code 0 only when every check passes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
from cluster import LocalCluster, load_rendered
from committed_outputs import committed_outputs_experiment
from data_positions import check_data_positions
from failures import Failures
from job_cluster import job_dir, started_cluster

REPORT_PREFIX = "RAY_GPU_APPLIED "
#: Characters per row of the embedding example's smoke dataset (its --smoke-text-chars default).
SMOKE_TEXT_CHARS = 7000
#: Keys the plan explains but no Ray API takes (arithmetic shown in `ray-gpu plan`), or that smoke runs replace.
INFORMATIONAL = {
    "data.uri": "smoke runs read a synthetic local dataset instead",
    "data.format": "smoke runs read parquet",
    "data.sampleFraction": "already applied as data.rowsToRead",
    "data.rowsPerBlock": "the plan's arithmetic behind data.blockSizeBytes",
    "data.workingSetBytes": "checked instead: nothing spills",
    "data.rowsToRead": "smoke runs read at most --smoke-rows of it",
    "lora.imageTokensPerSample": "smoke images are 4 tokens; full runs size images from it",
    "sweep.parameters": "applied as sweep.grid",
    "train.dataloaderWorkers": "the examples feed workers through Ray Data, which preprocesses in Ray tasks; a torch DataLoader takes it as num_workers",
    "sweep.rowsPerPrompt": "checked instead: outputs are a multiple of the grid",
    "train.offloadOptimizerClass": "only with optimizer offload",
    "train.deepspeedConfigFile": "only with ZeRO",
}


def leaves(doc: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict) and k not in ("resourcesPerWorker",):
            out.update(leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def expected_keys(doc: dict[str, Any]) -> set[str]:
    keys = set()
    for section in ("train", "data", "actorPool", "sweep", "lora"):
        if section in doc:
            keys |= {k for k in leaves(doc[section], f"{section}.") if not any(k == i or k.startswith(i + ".") for i in INFORMATIONAL)}
    if "train.deepspeedConfigFile" in leaves(doc):
        keys.add("train.deepspeedConfigFile")
    return keys


def applied_report(log_path: str) -> dict[str, Any] | None:
    report = None
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            if REPORT_PREFIX in line:
                report = json.loads(line.split(REPORT_PREFIX, 1)[1])
    return report


def check_coverage(report: dict[str, Any] | None, doc: dict[str, Any], failures: Failures) -> list[dict[str, Any]]:
    """Every planned value reached a Ray or library argument (the report lists what the runtime handed over). What
    the values then do is measured by levers.py, against Ray's defaults."""
    if report is None:
        failures.check(False, "the job printed no RAY_GPU_APPLIED report")
        return []
    missing = expected_keys(doc) - {e["key"] for e in report["applied"]}
    failures.check(not missing, f"planned values never applied: {sorted(missing)}")
    return list(report["applied"])


def check_ran_with(log_path: str, doc: dict[str, Any], failures: Failures) -> None:
    """What the training workers reported they ran with: world size, rows per micro-batch, accumulation."""
    with open(log_path, encoding="utf-8") as f:
        found = re.findall(r"ray-gpu example: ran with (\{.*\})", f.read())
    if not failures.check(bool(found), "the training job did not report what it ran with"):
        return
    ran, knobs = json.loads(found[-1]), doc["knobs"]
    failures.check(ran["world_size"] == doc["train"]["numWorkers"], f"workers: ran {ran['world_size']}, planned {doc['train']['numWorkers']}")
    failures.check(ran["micro_batch_rows"] == knobs["microBatchSize"], f"micro-batch: ran {ran['micro_batch_rows']} rows, planned {knobs['microBatchSize']}")
    failures.check(
        ran["accumulation"] == knobs["gradientAccumulationSteps"], f"accumulation: ran {ran['accumulation']}, planned {knobs['gradientAccumulationSteps']}"
    )
    global_batch = ran["world_size"] * ran["micro_batch_rows"] * ran["accumulation"]
    failures.check(global_batch == knobs["globalBatchSize"], f"global batch: ran {global_batch}, planned {knobs['globalBatchSize']}")
    print(
        f"  ran with {ran['world_size']} workers x {ran['micro_batch_rows']} rows x {ran['accumulation']} micro-batches = global batch {global_batch}",
        flush=True,
    )


def run_job(name: str, job: dict[str, Any], objects: dict[str, Any], work: str, args: argparse.Namespace, failures: Failures, **variant: Any) -> dict[str, Any]:
    label = variant.get("label", name)
    jobdir = job_dir(work, label)
    storage = os.path.join(work, "storage", variant.get("storage", name))
    watcher, after = variant.get("on_line"), variant.get("after")
    with started_cluster(name, job, objects, jobdir, storage) as (cluster, doc):
        entrypoint = job["spec"]["entrypoint"] + " --smoke" + variant.get("extra_args", "")
        print(f"\n== {label}: {entrypoint}", flush=True)
        for a in sorted(set(cluster.adjustments)):
            print(f"  adjusted: {a}", flush=True)
        on_line = (lambda line, proc: watcher(line, proc, cluster)) if watcher else None
        rc, wall = cluster.run_entrypoint(entrypoint, os.path.join(jobdir, "job.log"), args.timeout, on_line)
        spilled = cluster.running().spilled()
        extra = after(cluster, storage) if after and rc == 0 else {}
    result = {"job": label, "rc": rc, "wallSeconds": round(wall, 1), **spilled, "doc": doc, "log": os.path.join(jobdir, "job.log"), **extra}
    if not variant.get("expect_failure") and not failures.check(rc == 0, f"{label}: exit code {rc} (log: {result['log']})"):
        with open(result["log"], encoding="utf-8") as f:
            print("".join(f.readlines()[-40:]), flush=True)
    return result


#: What a run checks (``--checks``): each job's run, the committed-outputs experiment of embedding jobs, and the
#: kill-and-resume experiment of training jobs (model, optimizer and data position).
CHECKS = ("jobs", "outputs", "resume")


def job_run(name: str, job: dict[str, Any], objects: dict[str, Any], args: argparse.Namespace, failures: Failures) -> dict[str, Any]:
    """One job's smoke run and its checks: exit code, every planned value applied, what training ran with, no spill."""
    kind = job["metadata"]["labels"]["ray-gpu.io/kind"]
    spill_check = spill_control(name, job, failures) if kind == "EmbeddingPipeline" else {}
    result = run_job(name, json.loads(json.dumps(job)), objects, args.work, args, failures, **spill_check)
    applied = check_coverage(applied_report(result["log"]), result["doc"], failures) if result["rc"] == 0 else []
    if result["rc"] == 0 and "train" in result["doc"]:
        check_ran_with(result["log"], result["doc"], failures)
    failures.check(result["spilledBytes"] == 0, f"{name}: spilled {result['spilledBytes']} bytes")
    for e in applied:
        shown = e.get("applied", e["value"])
        print(f"  applied {e['key']} = {json.dumps(shown)[:80]}{'  (stand-in: ' + e['standin'] + ')' if 'standin' in e else ''}", flush=True)
    return result | {"kind": kind, "applied": len(applied)}


def print_table(rows: list[dict[str, Any]]) -> None:
    print("\n| job | wall s | values applied | bytes spilled | result |\n|---|---|---|---|---|")
    for r in rows:
        verdict = r.get("verdict", "ok" if r["rc"] == 0 else "FAILED")
        if "controlSpilledBytes" in r:
            verdict += f"; {r['datasetBytes']} B of input on a {r['storeBytes']} B store: held at once it spilled {r['controlSpilledBytes']} B"
        print(f"| {r['job']} | {r['wallSeconds']} | {r.get('applied', '-')} | {r['spilledBytes']} | {verdict} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rendered", required=True, help="output of ray-gpu render --stack dev")
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--only", default=None, help="comma-separated RayJob names")
    parser.add_argument("--checks", default=",".join(CHECKS), help=f"comma-separated, of {', '.join(CHECKS)} (default: all)")
    args = parser.parse_args()
    checks = set(args.checks.split(","))
    if not checks <= set(CHECKS):
        parser.error(f"--checks: unknown {sorted(checks - set(CHECKS))}; choose from {', '.join(CHECKS)}")
    objects = load_rendered(args.rendered)
    jobs = {k.split("/", 1)[1]: v for k, v in objects.items() if k.startswith("RayJob/")}
    if args.only:
        jobs = {k: v for k, v in jobs.items() if k in args.only.split(",")}
    failures = Failures()
    rows = []
    for name, job in jobs.items():
        kind = job["metadata"]["labels"]["ray-gpu.io/kind"]
        if "jobs" in checks:
            rows.append(job_run(name, job, objects, args, failures))
            if rows[-1]["rc"] != 0:
                continue
        if kind == "EmbeddingPipeline" and "outputs" in checks:
            rows.extend(committed_outputs_experiment(name, json.loads(json.dumps(job)), objects, args.work, args.timeout, failures))
        if kind == "TrainingJob" and "resume" in checks:
            rows.extend(resume_experiment(name, job, objects, args, failures))
    print_table(rows)
    if failures:
        print(f"\n{len(failures)} check(s) failed:\n" + "\n".join(f"  - {f}" for f in failures))
        return 1
    print("\nall checks passed")
    return 0


def spill_control(name: str, job: dict[str, Any], failures: Failures) -> dict[str, Any]:
    """The no-spill check of an embedding job, like with like: the job reads a dataset a quarter larger than its
    worker's object store, so a pipeline that held its blocks would spill; after it, on the same cluster and the same
    store, the same data is read unbounded (every block held: ``unbounded.py``), which must spill. The tuned run passes
    only if it streamed; the control shows the data was large enough to tell."""
    from cluster import MIN_OBJECT_STORE_BYTES, OBJECT_STORE_SCALE

    worker = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    store = max(MIN_OBJECT_STORE_BYTES, int(worker["rayStartParams"]["object-store-memory"]) // OBJECT_STORE_SCALE) * worker["replicas"]
    rows = -(-store * 5 // 4 // SMOKE_TEXT_CHARS)

    def unbounded(cluster: LocalCluster, storage: str) -> dict[str, Any]:
        ray_nodes = cluster.running()
        before = ray_nodes.spilled()["spilledBytes"]
        data = os.path.join(storage, "smoke-data", name)
        out = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(__file__), "unbounded.py"), ray_nodes.address(), data], capture_output=True, text=True, timeout=900
        )
        held = json.loads(out.stdout.split("UNBOUNDED ", 1)[1]) if "UNBOUNDED " in out.stdout else {"bytes": 0}
        spilled = ray_nodes.spilled()["spilledBytes"] - before
        print(f"  unbounded control: the same {held['bytes']} bytes held at once on the same {store}-byte store spilled {spilled} bytes", flush=True)
        failures.check(held["bytes"] > store, f"{name}: the dataset ({held['bytes']} B) is not larger than the object store ({store} B): {out.stderr[-500:]}")
        failures.check(spilled > 0, f"{name}: holding {held['bytes']} B on a {store} B store spilled nothing: the no-spill check cannot tell")
        return {"controlSpilledBytes": spilled, "datasetBytes": held["bytes"], "storeBytes": store}

    return {"extra_args": f" --smoke-rows {rows}", "after": unbounded}


#: Optimizer steps of the kill-and-resume experiment's runs.
TOTAL_STEPS = 20


def resume_experiment(name: str, job: dict[str, Any], objects: dict[str, Any], args: argparse.Namespace, failures: Failures) -> list[dict[str, Any]]:
    """Kill a training worker once Ray Train has registered a checkpoint. With ``train.maxFailures`` > 0 Ray Train
    retries the run itself, otherwise the job is resubmitted; either way the run must resume from that checkpoint
    (model, optimizer, step and every worker's data position: ``data_positions.py``) and finish."""
    storage = f"{name}-resume"
    killed: dict[str, Any] = {}

    def registered_step(doc: dict[str, Any]) -> int | None:
        """Step of the latest checkpoint Ray Train registered (its snapshot in the run's storage), if any."""
        prefix = doc["train"]["checkpointPrefix"].rstrip("/")
        try:
            with open(os.path.join(args.work, "storage", storage, prefix, "checkpoint_manager_snapshot.json"), encoding="utf-8") as f:
                latest = json.load(f).get("latest_checkpoint_result")
        except (OSError, ValueError):
            return None
        return latest["metrics"]["step"] if latest else None

    def on_line(line: str, proc: Any, cluster: LocalCluster) -> None:
        if killed:  # the first line of output starts the watcher: find the workers early, kill after a checkpoint
            return
        killed["pending"] = True
        doc = json.loads(objects[f"ConfigMap/{name}-tuning"]["data"]["tuning.json"])

        def kill_when_registered() -> None:
            # One of this cluster's own Ray Train workers, from its GCS actor table (never a host-wide search), read
            # first: on a busy machine the probe is slow, and the run must not end while it runs.
            deadline = time.time() + 600
            workers: list[dict[str, Any]] = []
            while not workers and proc.poll() is None and time.time() < deadline:
                workers = cluster.running().actors("RayTrainWorker")[:1]
                time.sleep(0 if workers else 1)
            # A checkpoint counts once the controller has written it to the snapshot; killing earlier loses it.
            while workers and proc.poll() is None and time.time() < deadline:
                step = registered_step(doc)
                if step is not None:
                    for w in workers:
                        os.kill(w["pid"], signal.SIGKILL)
                    killed.update(pids=[w["pid"] for w in workers], step=step)
                    print(f"  killed Ray Train worker {workers} once Ray Train had registered a checkpoint (step {step} or later)", flush=True)
                    return
                time.sleep(0.2)

        threading.Thread(target=kill_when_registered, daemon=True).start()

    doc = json.loads(objects[f"ConfigMap/{name}-tuning"]["data"]["tuning.json"])
    retries = doc["train"]["maxFailures"]
    steps = f" --steps {TOTAL_STEPS} --checkpoint-every 5"
    first = run_job(
        name,
        json.loads(json.dumps(job)),
        objects,
        args.work,
        args,
        failures,
        label=f"{name} (killed)",
        storage=storage,
        extra_args=steps,
        on_line=on_line,
        expect_failure=retries == 0,
    )
    failures.check(bool(killed.get("pids")), f"{name}: no training worker was killed (the run ended before a checkpoint registered)")
    if retries:
        # FailureConfig(max_failures) retries within the run: new workers resume from the last registered checkpoint.
        runs = [first]
        failures.check(first["rc"] == 0, f"{name}: the killed run did not recover although maxFailures is {retries}: exit {first['rc']}")
        first["verdict"] = f"worker killed after the checkpoint of step {killed.get('step')}; Ray Train retried it (maxFailures {retries})"
    else:
        # The run is over: the last checkpoint Ray Train registered before the worker died is the one to resume from.
        killed["step"] = registered_step(doc)
        failures.check(first["rc"] != 0, f"{name}: the killed run exited 0 (maxFailures 0 should fail it)")
        first["verdict"] = f"worker killed after the checkpoint of step {killed.get('step')}: exit {first['rc']}"
        runs = [
            first,
            run_job(name, json.loads(json.dumps(job)), objects, args.work, args, failures, label=f"{name} (resumed)", storage=storage, extra_args=steps),
        ]
    with open(runs[-1]["log"], encoding="utf-8") as f:
        text = f.read()
    resumed = re.search(r"resumed from checkpoint at step (\d+)", text)
    finished = re.search(r"finished at step (\d+) of (\d+)", text)
    at = int(resumed.group(1)) if resumed else None
    failures.check(
        at is not None and killed.get("step") is not None and (at >= killed["step"] if retries else at == killed["step"]),
        f"{name}: did not resume from the checkpoint of step {killed.get('step')} (resumed: {at if at is not None else 'no'})",
    )
    failures.check(finished is not None and finished.group(1) == finished.group(2), f"{name}: the resumed run did not finish")
    runs[-1]["verdict"] = (runs[-1]["verdict"] + "; " if len(runs) == 1 else "") + (
        f"resumed at step {at}, finished {finished.group(1)}" if at is not None and finished else "did not resume"
    )
    if at is not None and finished:
        runs[-1]["verdict"] += "; " + check_data_positions([r["log"] for r in runs], at, doc, TOTAL_STEPS, failures)
    return runs


if __name__ == "__main__":
    sys.exit(main())
