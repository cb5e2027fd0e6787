"""Local end-to-end run of the rendered dev RayJobs (``npm run test:ray``).

For each rendered RayJob: start a local Ray cluster from its rayStartParams and container environment (scaled
down where a 2-CPU machine without GPUs needs it; every change is printed), run its entrypoint with ``--smoke``
as Ray's job supervisor would, and check that the job succeeds, that the values the runtime library applied
equal the rendered plan, and that nothing spilled. Then two experiments that could fail: the embedding pipeline
with Ray's defaults and an undersized object store must spill, and the training job killed mid-run must resume
from its last checkpoint and finish. Exit code 0 only when every check passes.
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

REPORT_PREFIX = "RAY_GPU_APPLIED "
#: Keys the plan explains but no Ray API takes (arithmetic shown in `ray-gpu plan`), or that smoke runs replace.
INFORMATIONAL = {
    "data.uri": "smoke runs read a synthetic local dataset instead",
    "data.format": "smoke runs read parquet",
    "data.sampleFraction": "already applied as data.rowsToRead",
    "data.rowsPerBlock": "the plan's arithmetic behind data.blockSizeBytes",
    "data.workingSetBytes": "checked instead: nothing spills",
    "lora.imageTokensPerSample": "smoke images are 4 tokens; full runs size images from it",
    "sweep.parameters": "applied as sweep.grid",
    "train.dataloaderWorkers": "the examples feed workers through Ray Data, which preprocesses in Ray tasks; a torch DataLoader takes it as num_workers",
    "sweep.rowsPerPrompt": "checked instead: outputs are a multiple of the grid",
    "train.offloadOptimizerClass": "only with optimizer offload",
    "train.deepspeedConfigFile": "only with ZeRO",
}


class Failures(list):
    def check(self, ok: bool, message: str) -> bool:
        if not ok:
            self.append(message)
            print(f"  FAIL {message}", flush=True)
        return ok


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


def check_applied(report: dict[str, Any] | None, local_doc: dict[str, Any], failures: Failures) -> list[dict[str, Any]]:
    if not failures.check(report is not None, "the job printed no RAY_GPU_APPLIED report"):
        return []
    flat = {**leaves(local_doc), **{f"knobs.{k}": v for k, v in local_doc["knobs"].items()}}
    for entry in report["applied"]:
        failures.check(
            entry["key"] in flat and flat[entry["key"]] == entry["value"],
            f"{entry['key']}: applied {entry['value']!r}, the plan says {flat.get(entry['key'])!r}",
        )
    missing = expected_keys(local_doc) - {e["key"] for e in report["applied"]}
    failures.check(not missing, f"planned values never applied: {sorted(missing)}")
    # Read back from the Ray objects the runtime built (ScalingConfig, RunConfig, ActorPoolStrategy, DataContext).
    standins = {e["key"]: e.get("applied") for e in report["applied"] if "standin" in e}
    for key, value in report.get("readBack", {}).items():
        want = standins.get(key, flat.get(key))
        failures.check(want == value, f"{key}: the live Ray object holds {value!r}, the plan says {want!r}")
    return report["applied"]


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


def local_tuning(cluster: LocalCluster, name: str) -> tuple[dict[str, Any], str]:
    """The tuning file as mounted locally; Ray Data's object-store limit scales with the object store."""
    from cluster import OBJECT_STORE_SCALE

    path = os.path.join(cluster.mounts["/etc/ray-gpu"], "tuning.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if "data" in doc:
        planned = doc["data"]["objectStoreLimitBytes"]
        doc["data"]["objectStoreLimitBytes"] = planned // OBJECT_STORE_SCALE
        cluster.adjustments.append(
            f"tuning data.objectStoreLimitBytes {planned} -> {planned // OBJECT_STORE_SCALE} (1/{OBJECT_STORE_SCALE}, with the object store it is 50% of)"
        )
        if doc["data"]["workingSetBytes"] > doc["data"]["objectStoreLimitBytes"]:
            raise SystemExit(f"{name}: the planned working set does not fit the scaled limit; raise OBJECT_STORE_SCALE's budget")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, sort_keys=True)
    return doc, path


def runtime_env(job: dict[str, Any], cluster: LocalCluster) -> dict[str, str]:
    """Applies the RayJob's runtimeEnvYAML as Ray would for the job's processes: env_vars on every node; pip
    requirements must already be met by this environment (there is no job server here to build one)."""
    from importlib.metadata import PackageNotFoundError, version

    import yaml
    from packaging.requirements import Requirement

    text = job["spec"].get("runtimeEnvYAML")
    if not text:
        return {}
    env = yaml.safe_load(text)
    for line in env.get("pip", []):
        req = Requirement(line)
        try:
            have = version(req.name)
        except PackageNotFoundError:
            cluster.adjustments.append(f"runtime env pip {line}: not in the test environment (the offline index lacks it); the CPU stand-in does not need it")
            continue
        if not req.specifier.contains(have, prereleases=True):
            raise SystemExit(f"runtime env pip {line}: this environment has {req.name} {have}; update runtime/requirements.txt")
        cluster.adjustments.append(f"runtime env pip {line}: met by the test environment ({have})")
    return {k: str(v) for k, v in env.get("env_vars", {}).items()}


def dataset_bytes(path: str, rows: int | None) -> int:
    import pyarrow.dataset as pads

    table = pads.dataset(path, format="parquet").to_table()
    return (table.slice(0, rows) if rows else table).nbytes


def run_job(name: str, job: dict[str, Any], objects: dict[str, Any], work: str, args: argparse.Namespace, failures: Failures, **variant: Any) -> dict[str, Any]:
    label = variant.get("label", name)
    jobdir = os.path.join(work, re.sub(r"[^A-Za-z0-9.-]+", "-", label).strip("-"))
    cluster = LocalCluster(job, objects, jobdir, store_override=variant.get("store_bytes"))
    storage = os.path.join(work, "storage", variant.get("storage", name))
    # One compute thread per process: Ray would give each process as many as its logical CPUs, which here
    # oversubscribe 2 physical cores many times over.
    extra_env = {"RAY_GPU_CPU_STANDIN": "1", "RAY_GPU_STORAGE_PATH": storage, "OMP_NUM_THREADS": "1"}
    cluster.nodes()  # lay out the mounts
    doc, _ = local_tuning(cluster, name)
    extra_env.update(runtime_env(job, cluster))
    cluster.adjustments.append(f"RAY_GPU_STORAGE_PATH={storage} (the bucket of a real stack)")
    cluster.adjustments.append(f"OMP_NUM_THREADS=1 ({os.cpu_count()} physical CPUs under many logical ones)")
    cluster.start(extra_env)
    entrypoint = job["spec"]["entrypoint"] + " --smoke" + variant.get("extra_args", "")
    print(f"\n== {label}: {entrypoint}", flush=True)
    for a in sorted(set(cluster.adjustments)):
        print(f"  adjusted: {a}", flush=True)
    try:
        stop_when = (lambda: cluster.spilled()["spilledBytes"] > 0) if variant.get("stop_on_spill") else None
        rc, wall = cluster.run_entrypoint(entrypoint, os.path.join(jobdir, "job.log"), args.timeout, variant.get("on_line"), stop_when)
        spilled = cluster.spilled()
    finally:
        cluster.stop()
    result = {"job": label, "rc": rc, "wallSeconds": round(wall, 1), **spilled, "doc": doc, "log": os.path.join(jobdir, "job.log")}
    if not variant.get("expect_failure") and not failures.check(rc == 0, f"{label}: exit code {rc} (log: {result['log']})"):
        with open(result["log"], encoding="utf-8") as f:
            print("".join(f.readlines()[-40:]), flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rendered", required=True, help="output of ray-gpu render --stack dev")
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--only", default=None, help="comma-separated RayJob names")
    args = parser.parse_args()
    objects = load_rendered(args.rendered)
    jobs = {k.split("/", 1)[1]: v for k, v in objects.items() if k.startswith("RayJob/")}
    if args.only:
        jobs = {k: v for k, v in jobs.items() if k in args.only.split(",")}
    failures = Failures()
    rows = []
    for name, job in jobs.items():
        kind = job["metadata"]["labels"]["ray-gpu.io/kind"]
        result = run_job(name, json.loads(json.dumps(job)), objects, args.work, args, failures)
        applied = check_applied(applied_report(result["log"]), result["doc"], failures) if result["rc"] == 0 else []
        if result["rc"] == 0 and "train" in result["doc"]:
            check_ran_with(result["log"], result["doc"], failures)
        failures.check(result["spilledBytes"] == 0, f"{name}: spilled {result['spilledBytes']} bytes")
        for e in applied:
            shown = e.get("applied", e["value"])
            print(f"  applied {e['key']} = {json.dumps(shown)[:80]}{'  (stand-in: ' + e['standin'] + ')' if 'standin' in e else ''}", flush=True)
        rows.append(result | {"kind": kind, "applied": len(applied)})
        if result["rc"] != 0:
            continue
        if kind == "EmbeddingPipeline":
            rows.append(spill_experiment(name, job, objects, args, failures, result))
        if kind == "TrainingJob":
            rows.extend(resume_experiment(name, job, objects, args, failures))
    print("\n| job | wall s | values applied | bytes spilled | result |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['job']} | {r['wallSeconds']} | {r.get('applied', '-')} | {r['spilledBytes']} | {r.get('verdict', 'ok' if r['rc'] == 0 else 'FAILED')} |")
    if failures:
        print(f"\n{len(failures)} check(s) failed:\n" + "\n".join(f"  - {f}" for f in failures))
        return 1
    print("\nall checks passed")
    return 0


def spill_experiment(
    name: str, job: dict[str, Any], objects: dict[str, Any], args: argparse.Namespace, failures: Failures, tuned: dict[str, Any]
) -> dict[str, Any]:
    """The tuned run's dataset must outweigh the object store several times; Ray's defaults must spill."""
    worker = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    from cluster import MIN_OBJECT_STORE_BYTES, OBJECT_STORE_SCALE

    store = max(MIN_OBJECT_STORE_BYTES, int(worker["rayStartParams"]["object-store-memory"]) // OBJECT_STORE_SCALE)
    data_dir = os.path.join(args.work, "storage", name, "smoke-data", name)
    size = dataset_bytes(data_dir, tuned["doc"]["data"].get("rowsToRead"))
    print(f"  dataset read: {size} bytes in memory = {size / store:.1f} x the worker's object store ({store} bytes)", flush=True)
    failures.check(size >= 3 * store, f"{name}: the dataset ({size} B) is not several times the object store ({store} B)")
    # Ray's own backpressure keeps defaults from spilling on a store this size when files are small, so the
    # control run gets an undersized store: a quarter, below a few of Ray's default 128 MiB blocks.
    small = store // 4
    result = run_job(
        name,
        json.loads(json.dumps(job)),
        objects,
        args.work,
        args,
        failures,
        label=f"{name} (Ray defaults)",
        extra_args=" --ray-defaults",
        stop_on_spill=True,
        expect_failure=True,
        store_bytes=small,
    )
    failures.check(
        result["spilledBytes"] > 0,
        f"{name} with Ray's defaults on an undersized {small} B object store did not spill: the no-spill check cannot tell a spilling run from a clean one",
    )
    result["verdict"] = f"spilled, as expected ({result['spilledObjects']} objects; stopped once it did)" if result["spilledBytes"] > 0 else "did not spill"
    return result


def resume_experiment(name: str, job: dict[str, Any], objects: dict[str, Any], args: argparse.Namespace, failures: Failures) -> list[dict[str, Any]]:
    """Kill a training worker once Ray Train has registered a checkpoint; resubmitting must resume from it and finish."""
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

    def on_line(line: str, proc: Any) -> None:
        if killed or "Checkpoint successfully created" not in line:
            return
        killed["pending"] = True
        doc = json.loads(objects[f"ConfigMap/{name}-tuning"]["data"]["tuning.json"])

        def kill_when_registered() -> None:
            # A checkpoint counts once the controller has written it to the snapshot; killing earlier loses it.
            deadline = time.time() + 120
            while proc.poll() is None and time.time() < deadline:
                step = registered_step(doc)
                if step is not None:
                    pids = subprocess.run(["pgrep", "-f", "ray::RayTrainWorker"], capture_output=True, text=True).stdout.split()[:1]
                    for pid in pids:
                        os.kill(int(pid), signal.SIGKILL)
                    killed.update(pids=pids, step=step)
                    print(f"  killed training worker pid {pids} after Ray Train registered the checkpoint of step {step}", flush=True)
                    return
                time.sleep(0.2)

        threading.Thread(target=kill_when_registered, daemon=True).start()

    steps = " --steps 20 --checkpoint-every 5"
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
        expect_failure=True,
    )
    failures.check(bool(killed.get("pids")), f"{name}: no training worker was killed (the run ended before a checkpoint registered)")
    failures.check(first["rc"] != 0, f"{name}: the killed run exited 0 (maxFailures 0 in dev should fail it)")
    first["verdict"] = f"worker killed after the checkpoint of step {killed.get('step')}: exit {first['rc']}"
    second = run_job(name, json.loads(json.dumps(job)), objects, args.work, args, failures, label=f"{name} (resumed)", storage=storage, extra_args=steps)
    with open(second["log"], encoding="utf-8") as f:
        text = f.read()
    resumed = re.search(r"resumed from checkpoint at step (\d+)", text)
    finished = re.search(r"finished at step (\d+) of (\d+)", text)
    failures.check(
        bool(resumed) and int(resumed.group(1)) == killed.get("step"),
        f"{name}: the second run did not resume from the checkpoint of step {killed.get('step')} (resumed: {resumed.group(1) if resumed else 'no'})",
    )
    failures.check(bool(finished) and finished.group(1) == finished.group(2), f"{name}: the resumed run did not finish")
    second["verdict"] = (
        f"resumed at step {resumed.group(1) if resumed else '?'}, finished {finished.group(1) if finished else '?'}"
        if resumed and finished
        else "did not resume"
    )
    return [first, second]


if __name__ == "__main__":
    sys.exit(main())
