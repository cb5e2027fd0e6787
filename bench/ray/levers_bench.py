"""``npm run bench:ray``: how fast each timing-sensitive lever runs, tuned (A, the plan's value) against default (B),
on a local Ray cluster of the rendered levers stack. What Ray decides with each lever is checked by ``npm run
test:ray`` (``runtime/e2e/levers.py``); this measures what those decisions cost or save in time: the GPU actors' idle
fraction, tokenizing batches at once, the actors an autoscaling pool starts and the rows per second, the training
loop's wait for data, the optimizer step's time. Each measure runs one warm-up run a side, then ``--runs`` runs a side
in ABBA order; it reports medians, the ratio, and the machine's load at every run. It writes JSON and Markdown and
never fails on a number (exit 1 only when a measure could not run)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import bench_udfs
from bench_stats import Measure, Metric, Side, bench_report, markdown, run_measure, summary, write_report
from levers_data import dataset
from levers_lab import Lab, on_nodes, planned_nodes
from levers_train import TrainRun, train

#: The worker's object store in the bench: large enough that the store does not bind, as in the plan, whose working
#: set fits its store (on the test's 256 MiB store the read runs ahead by one to four blocks from run to run, and
#: that, not the pipeline, decides how long the actors wait).
BENCH_STORE_BYTES = 2**30
#: Counted runs a side of the training measure at most: each is a Ray Train run of about a minute here.
TRAIN_RUNS = 3
#: Actors of the idle measure: fewer than the blocks, so each waits for its next block if none is ready.
IDLE_ACTORS = 2


def _peak_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most intervals open at once."""
    events = sorted([(t0, 1) for t0, _ in intervals] + [(t1, -1) for _, t1 in intervals])
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


class Levers:
    """The measures, over the rendered levers stack's plans and the probe dataset."""

    def __init__(self, lab: Lab) -> None:
        import ray_gpu

        self.lab = lab
        self.tuning = ray_gpu.load(lab.tuning_file("levers-embed"), env={})  # logical GPUs, planned block size set
        self.data = dataset(lab)
        self.pool, self.pre = self.tuning.actor_pool_kwargs(), self.tuning.preprocess_kwargs()
        self.train_runs = 0

    def actor_idle(self, side: Side) -> dict[str, float]:
        """GPU actors' idle fraction (ray_gpu.telemetry) and rows per second, preprocessing in its own pool or fused."""
        import ray.data

        actors = {**self.pool, "compute": ray.data.ActorPoolStrategy(size=IDLE_ACTORS)}
        started = time.perf_counter()
        ds = ray.data.read_parquet(self.data).map_batches(
            bench_udfs.preprocess_sleep, batch_size=self.pool["batch_size"], **(self.pre if side == "a" else {})
        )
        df = ds.map_batches(bench_udfs.TimedProbe, **actors).to_pandas()
        wall = time.perf_counter() - started
        last = df.groupby("pid")[["busy", "idle"]].max()
        busy, idle = float(last.busy.sum()), float(last.idle.sum())
        return {"idleFraction": round(idle / (busy + idle), 4), "rowsPerSecond": round(len(df) / wall, 1)}

    def preprocess_concurrency(self, side: Side) -> dict[str, float]:
        """Tokenizing batches running at once (their own clocks), in the plan's pool or fused into the reads."""
        import ray.data

        ds = ray.data.read_parquet(self.data).map_batches(
            bench_udfs.tokenize_timed, batch_size=None, **(self.pre if side == "a" else {})
        )
        df = ds.to_pandas()
        spans = list(
            df.groupby(["pid", "t0"]).t1.first().reset_index()[["t0", "t1"]].itertuples(index=False, name=None)
        )
        return {"peakConcurrent": _peak_overlap(spans)}

    def actor_pool(self, side: Side) -> dict[str, float]:
        """Actors that took batches and rows per second: the plan's fixed pool, or Ray's autoscaling pool from 1."""
        import ray.data

        args = self.pool if side == "a" else {k: v for k, v in self.pool.items() if k != "compute"}
        started = time.perf_counter()
        df = ray.data.read_parquet(self.data).map_batches(bench_udfs.PoolProbe, **args).to_pandas()
        return {
            "actorsThatWorked": float(df.pid.nunique()),
            "rowsPerSecond": round(len(df) / (time.perf_counter() - started), 1),
        }

    def data_wait(self, side: Side) -> dict[str, float]:
        """The training loop's data-wait fraction with the plan's DataLoader workers or PyTorch's 0, in a Ray task."""
        import ray

        workers = self.lab.tuning("levers-train")["train"]["dataloaderWorkers"] if side == "a" else 0
        return {"dataWaitFraction": ray.get(ray.remote(num_cpus=1)(bench_udfs.data_wait).remote(workers))}

    def train_step(self, side: Side) -> dict[str, float]:
        """Median optimizer-step seconds of the levers' Ray Train loop, planned (micro-batch x accumulation) or with
        the same global batch in one forward."""
        self.train_runs += 1
        plan = TrainRun.planned(self.lab.tuning("levers-train"), label=f"bench-planned-{self.train_runs}")
        run = plan if side == "a" else plan.with_defaults(label=f"bench-defaults-{self.train_runs}")
        steps = train(self.lab, run)["stepSeconds"]
        return {"stepSeconds": round(statistics.median(steps), 4)}

    def measures(self) -> list[Measure]:
        pre = f"TaskPoolStrategy(size={self.pre['compute'].size})"
        pool = f"fixed pool of {self.pool['compute'].min_size}"
        train_doc = self.lab.tuning("levers-train")
        knobs = train_doc["knobs"]
        accumulation = f"{knobs['microBatchSize']} rows x {knobs['gradientAccumulationSteps']}"
        return [
            Measure(
                "actor_idle",
                "GPU actor idle fraction",
                "actorPool.preprocessConcurrency",
                f"preprocessing {pre}",
                "fused into the read tasks",
                (
                    Metric("idleFraction", "share of the actors' time between calls", "", "lower"),
                    Metric("rowsPerSecond", "rows per second", "rows/s", "higher"),
                ),
                self.actor_idle,
            ),
            Measure(
                "preprocess_concurrency",
                "Preprocessing as its own task pool",
                "actorPool.preprocessConcurrency",
                pre,
                "fused into the read tasks",
                (Metric("peakConcurrent", "tokenizing batches at once", "", "higher"),),
                self.preprocess_concurrency,
            ),
            Measure(
                "actor_pool",
                "Actor pool size",
                "actorPool.actorPoolSize",
                pool,
                "autoscaling pool from 1",
                (
                    Metric("actorsThatWorked", "actors that took batches", "", "higher"),
                    Metric("rowsPerSecond", "rows per second", "rows/s", "higher"),
                ),
                self.actor_pool,
            ),
            Measure(
                "data_wait",
                "DataLoader workers",
                "train.dataloaderWorkers",
                f"{train_doc['train']['dataloaderWorkers']} workers",
                "0 (reads in the loop)",
                (Metric("dataWaitFraction", "share of the loop's time waiting for data", "", "lower"),),
                self.data_wait,
            ),
            Measure(
                "train_step",
                "Micro-batch and accumulation",
                "knobs.microBatchSize, knobs.gradientAccumulationSteps",
                accumulation,
                f"{knobs['globalBatchSize'] // train_doc['train']['numWorkers']} rows x 1",
                (
                    Metric(
                        "stepSeconds",
                        "seconds per optimizer step (the price of less activation memory)",
                        "s",
                        "neither",
                    ),
                ),
                self.train_step,
                max_runs=TRAIN_RUNS,
            ),
        ]


def bench(lab: Lab, runs: int, only: set[str] | None) -> list[dict[str, Any]]:
    """Runs every measure (or ``only`` those) on one cluster; a measure that raises is reported with its error."""
    levers = Levers(lab)
    rows = []
    for measure in levers.measures():
        if only and measure.name not in only:
            continue
        started = time.time()
        try:
            rows.append(summary(measure, run_measure(measure, runs)))
        except Exception as e:  # reported in the table; the bench goes on to the next measure
            rows.append(
                {
                    "name": measure.name,
                    "lever": measure.lever,
                    "planKey": measure.plan_key,
                    "planned": measure.planned,
                    "default": measure.default,
                    "load": None,
                    "error": repr(e)[:300],
                }
            )
        print(f"  {measure.name} measured in {time.time() - started:.0f} s", flush=True)
    return rows


def main() -> int:
    import ray

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rendered", required=True, help="output of ray-gpu render -C runtime/e2e/levers-stack --stack levers"
    )
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--out", required=True, help="folder for levers.json and levers.md")
    parser.add_argument("--runs", type=int, default=5, help="counted runs a side of each measure (default 5)")
    parser.add_argument("--only", default=None, help="comma-separated measure names")
    args = parser.parse_args()
    lab = Lab.load(args.rendered, args.work)
    here = os.path.dirname(os.path.abspath(__file__))
    only = set(args.only.split(",")) if args.only else None
    measures = on_nodes(
        planned_nodes(lab, "levers-embed", BENCH_STORE_BYTES), lambda: bench(lab, args.runs, only), pythonpath=(here,)
    )
    cluster = (
        "the levers stack's head and one worker pod as Ray nodes (16 logical CPUs, logical GPUs), a "
        f"{BENCH_STORE_BYTES >> 20} MiB worker store"
    )
    report = bench_report(ray.__version__, args.runs, measures, cluster=cluster)
    write_report(args.out, "levers", report, markdown(report))
    return 1 if any("error" in m for m in measures) else 0


if __name__ == "__main__":
    sys.exit(main())
