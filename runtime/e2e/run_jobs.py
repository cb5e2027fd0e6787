"""Local end-to-end run of the rendered dev RayJobs (``npm run test:ray``).

For each rendered RayJob: start an isolated local Ray cluster from its rayStartParams and container environment
(scaled down where a 2-CPU machine without GPUs needs it; every change is printed), run its entrypoint with
``--smoke`` as Ray's job supervisor would, and check that the job succeeds, that it handed every planned value to
Ray, that training workers ran with the planned world size, micro-batch and accumulation (as PyTorch counted their
forwards and optimizer steps), and that nothing spilled. Then the training job's rank-0 worker kills itself once Ray
Train has registered a given checkpoint (the runtime's interruption hook, ``ray_gpu.interruptions``) and the run must
resume from exactly that checkpoint, with every worker's data continuing at the row after the last one it trained on
(``data_positions.py``), and finish; and an embedding job's rerun is killed while exactly a given number of its parts
are written and must leave the previous committed output intact (``committed_outputs.py``). ``--checks`` picks among
the three. Every check reads what Ray, PyTorch or the job decided (counts, steps, bytes, files), never a duration.
What each value does to Ray is checked lever by lever (``levers.py``). Exit code 0 only when every check passes.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
from typing import Any

from cluster import LocalCluster, load_rendered
from committed_outputs import committed_outputs_experiment
from data_positions import check_data_positions
from failures import Failures
from job_cluster import job_dir, started_cluster
from processes import HANG_GUARD_S

REPORT_PREFIX = "RAY_GPU_APPLIED "
#: Characters per row of the spill check's smoke dataset: long rows, so the input outgrows the store in few rows
#: (the smoke tokenizer reads only each row's first characters; the encoder's cost is per row).
SMOKE_TEXT_CHARS = 28000
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
    """What the training workers ran, as PyTorch and Ray Train counted it (hooks on the model and the optimizer, the
    process group's sum of samples): world size, rows per forward, forwards per optimizer step, and the samples all
    workers fed per optimizer step, each against the plan."""
    with open(log_path, encoding="utf-8") as f:
        found = re.findall(r"ray-gpu example: ran with (\{.*\})", f.read())
    if not failures.check(bool(found), "the training job did not report what it ran with"):
        return
    ran, knobs, workers = json.loads(found[-1]), doc["knobs"], doc["train"]["numWorkers"]
    failures.check(ran["world_size"] == workers, f"workers: ran {ran['world_size']}, planned {workers}")
    failures.check(
        ran["rows_per_forward"] == [knobs["microBatchSize"]], f"micro-batch: forwards took {ran['rows_per_forward']} rows, planned {knobs['microBatchSize']}"
    )
    failures.check(
        ran["forwards_per_optimizer_step"] == [knobs["gradientAccumulationSteps"]],
        f"accumulation: {ran['forwards_per_optimizer_step']} forwards per optimizer step, planned {knobs['gradientAccumulationSteps']}",
    )
    failures.check(ran["optimizer_steps"] > 0, "the workers' optimizers never stepped")
    global_batch = ran["global_samples_per_optimizer_step"]
    failures.check(
        global_batch == knobs["globalBatchSize"], f"global batch: the workers fed {global_batch} samples per optimizer step, planned {knobs['globalBatchSize']}"
    )
    print(
        f"  ran with {ran['world_size']} workers; forwards of {ran['rows_per_forward']} rows, {ran['forwards_per_optimizer_step']} per optimizer step "
        f"({ran['optimizer_steps']} steps counted): {global_batch} samples per step across workers",
        flush=True,
    )


def run_job(name: str, job: dict[str, Any], objects: dict[str, Any], work: str, args: argparse.Namespace, failures: Failures, **variant: Any) -> dict[str, Any]:
    label = variant.get("label", name)
    jobdir = job_dir(work, label)
    storage = os.path.join(work, "storage", variant.get("storage", name))
    after = variant.get("after")
    with started_cluster(name, job, objects, jobdir, storage) as (cluster, doc):
        entrypoint = job["spec"]["entrypoint"] + " --smoke" + variant.get("extra_args", "")
        print(f"\n== {label}: {entrypoint}", flush=True)
        for a in sorted(set(cluster.adjustments)):
            print(f"  adjusted: {a}", flush=True)
        rc, wall = cluster.run_entrypoint(entrypoint, os.path.join(jobdir, "job.log"), args.timeout, extra_env=variant.get("extra_env"))
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
    """One job's smoke run and its checks (``job_checks``)."""
    kind = job["metadata"]["labels"]["ray-gpu.io/kind"]
    spill_check = spill_control(name, job, failures) if kind == "EmbeddingPipeline" else {}
    return job_checks(name, run_job(name, copy.deepcopy(job), objects, args.work, args, failures, **spill_check), failures)


def job_checks(name: str, result: dict[str, Any], failures: Failures) -> dict[str, Any]:
    """The checks of a job's run that succeeded: every planned value applied, what training ran with, no spill."""
    applied = check_coverage(applied_report(result["log"]), result["doc"], failures) if result["rc"] == 0 else []
    if result["rc"] == 0 and "train" in result["doc"]:
        check_ran_with(result["log"], result["doc"], failures)
    failures.check(result["spilledBytes"] == 0, f"{name}: spilled {result['spilledBytes']} bytes")
    for e in applied:
        shown = e.get("applied", e["value"])
        print(f"  applied {e['key']} = {json.dumps(shown)[:80]}{'  (stand-in: ' + e['standin'] + ')' if 'standin' in e else ''}", flush=True)
    return result | {"applied": len(applied)}


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
    parser.add_argument("--timeout", type=float, default=HANG_GUARD_S, help="a hang guard per job run, in seconds")
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
        resume = kind == "TrainingJob" and "resume" in checks
        # A training job's resumed run is a whole run of it too: it gets the job's checks, and no run of its own.
        if "jobs" in checks and not resume:
            rows.append(job_run(name, job, objects, args, failures))
            if rows[-1]["rc"] != 0:
                continue
        if kind == "EmbeddingPipeline" and "outputs" in checks:
            rows.extend(committed_outputs_experiment(name, copy.deepcopy(job), objects, args.work, args.timeout, failures))
        if resume:
            rows.extend(resume_experiment(name, job, objects, args, failures, with_job_checks="jobs" in checks))
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
            [sys.executable, os.path.join(os.path.dirname(__file__), "unbounded.py"), ray_nodes.address(), data],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
        held = json.loads(out.stdout.split("UNBOUNDED ", 1)[1]) if "UNBOUNDED " in out.stdout else {"bytes": 0}
        spilled = ray_nodes.spilled()["spilledBytes"] - before
        print(f"  unbounded control: the same {held['bytes']} bytes held at once on the same {store}-byte store spilled {spilled} bytes", flush=True)
        failures.check(held["bytes"] > store, f"{name}: the dataset ({held['bytes']} B) is not larger than the object store ({store} B): {out.stderr[-500:]}")
        failures.check(spilled > 0, f"{name}: holding {held['bytes']} B on a {store} B store spilled nothing: the no-spill check cannot tell")
        return {"controlSpilledBytes": spilled, "datasetBytes": held["bytes"], "storeBytes": store}

    return {"extra_args": f" --smoke-rows {rows} --smoke-text-chars {SMOKE_TEXT_CHARS}", "after": unbounded}


#: Optimizer steps of the kill-and-resume experiment's runs, a checkpoint every CHECKPOINT_EVERY.
TOTAL_STEPS = 20
CHECKPOINT_EVERY = 5
#: The checkpoint after which the training job's rank-0 worker kills itself (the runtime's interruption hook).
KILL_AFTER_STEP = 5


def registered_step(storage: str, doc: dict[str, Any]) -> int | None:
    """Step of the latest checkpoint Ray Train registered (its snapshot in the run's storage), if any."""
    path = os.path.join(storage, doc["train"]["checkpointPrefix"].rstrip("/"), "checkpoint_manager_snapshot.json")
    try:
        with open(path, encoding="utf-8") as f:
            latest = json.load(f).get("latest_checkpoint_result")
    except (OSError, ValueError):
        return None
    return latest["metrics"]["step"] if latest else None


def resume_experiment(
    name: str, job: dict[str, Any], objects: dict[str, Any], args: argparse.Namespace, failures: Failures, with_job_checks: bool = False
) -> list[dict[str, Any]]:
    """The rank-0 Ray Train worker kills itself once Ray Train has registered the checkpoint of KILL_AFTER_STEP (the
    runtime's hook, inside the job: the kill lands at that point however busy the machine is). With
    ``train.maxFailures`` > 0 Ray Train retries the run itself, otherwise the job is resubmitted; either way the run
    must resume from that checkpoint (model, optimizer, step and every worker's data position: ``data_positions.py``)
    and finish; ``with_job_checks``: its last run gets the checks of a job's run (``job_checks``)."""
    from ray_gpu.interruptions import KILL_AFTER_CHECKPOINT_ENV

    storage = f"{name}-resume"
    doc = json.loads(objects[f"ConfigMap/{name}-tuning"]["data"]["tuning.json"])
    retries = doc["train"]["maxFailures"]
    steps = f" --steps {TOTAL_STEPS} --checkpoint-every {CHECKPOINT_EVERY}"

    def run(label: str, **variant: Any) -> dict[str, Any]:
        return run_job(name, copy.deepcopy(job), objects, args.work, args, failures, label=label, storage=storage, extra_args=steps, **variant)

    first = run(f"{name} (killed)", extra_env={KILL_AFTER_CHECKPOINT_ENV: str(KILL_AFTER_STEP)}, expect_failure=retries == 0)
    registered = registered_step(os.path.join(args.work, "storage", storage), doc)
    if retries:
        # FailureConfig(max_failures) retries within the run: new workers resume from the last registered checkpoint.
        runs = [first]
        failures.check(first["rc"] == 0, f"{name}: the killed run did not recover although maxFailures is {retries}: exit {first['rc']}")
        first["verdict"] = f"worker killed itself after the checkpoint of step {KILL_AFTER_STEP}; Ray Train retried it (maxFailures {retries})"
    else:
        failures.check(
            registered == KILL_AFTER_STEP, f"{name}: Ray Train's snapshot names step {registered}, not the step {KILL_AFTER_STEP} the worker died after"
        )
        failures.check(first["rc"] != 0, f"{name}: the killed run exited 0 (maxFailures 0 should fail it)")
        first["verdict"] = f"worker killed itself after the checkpoint of step {KILL_AFTER_STEP}: exit {first['rc']}"
        runs = [first, run(f"{name} (resumed)")]
    with open(runs[-1]["log"], encoding="utf-8") as f:
        text = f.read()
    resumed = re.search(r"resumed from checkpoint at step (\d+)", text)
    finished = re.search(r"finished at step (\d+) of (\d+)", text)
    at = int(resumed.group(1)) if resumed else None
    # Resuming at exactly that step shows the worker died after its checkpoint and before the next one.
    failures.check(at == KILL_AFTER_STEP, f"{name}: did not resume from the checkpoint of step {KILL_AFTER_STEP} (resumed: {at if at is not None else 'no'})")
    failures.check(finished is not None and finished.group(1) == finished.group(2), f"{name}: the resumed run did not finish")
    runs[-1]["verdict"] = (runs[-1]["verdict"] + "; " if len(runs) == 1 else "") + (
        f"resumed at step {at}, finished {finished.group(1)}" if at is not None and finished else "did not resume"
    )
    if at is not None and finished:
        runs[-1]["verdict"] += "; " + check_data_positions([r["log"] for r in runs], at, doc, TOTAL_STEPS, failures)
    if with_job_checks:
        runs[-1] = job_checks(name, runs[-1], failures)
    return runs


if __name__ == "__main__":
    sys.exit(main())
