"""``npm run bench:ray`` (embedding part): the levers stack's embedding job, tuned against Ray's defaults and against
each lever alone, on data shaped like a real job's: many parquet files of varied sizes, RAG-chunk rows of 1,500 to
3,000 characters, a CPU tokenizer and an encoder that costs more per row than tokenizing, with a fixed cost per call
as on a GPU (``embed_udfs.py``). The pipeline: read parquet, tokenize (``map_batches``), encode (an actor class on
the plan's logical GPUs), consumed by the driver. Configs: ``tuned`` (block size, preprocessing pool, batch size and
actor pool as planned), ``defaults`` (Ray's default for each of the four) and ``+<lever>`` (defaults with that one
lever as planned). GPUs per actor stay as planned everywhere: Ray needs them to place the actors on the logical GPUs,
and no run here can measure what they do on a device. After one warm-up run per config, ``--runs`` rounds run every
config once each, the order shifted each round (a balanced Latin square: ``embed_stats.schedule``), on one local
cluster. Reported per config: median
rows per second, its ratio to defaults, the rounds it beat defaults in, and per run the machine's load, the bytes
spilled, the largest block and the actors that took batches. Writes ``embed.json`` and ``embed.md``; never fails on a
number (exit 1 only when a config could not run)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import Any

import embed_udfs
from bench_stats import bench_report, load_average, write_report
from embed_stats import BASELINE, schedule, summary
from embed_stats import markdown as table
from levers_lab import Lab, on_nodes, planned_nodes

#: The four levers a config sets as planned (the others at Ray's defaults), in the order the configs list them.
LEVERS = ("block_size", "preprocess_pool", "batch_size", "actor_pool")
CONFIGS: dict[str, frozenset[str]] = {
    "tuned": frozenset(LEVERS),
    BASELINE: frozenset(),
    **{f"+{lv}": frozenset({lv}) for lv in LEVERS},
}
#: The data: rows and files (64 MiB of text; 13 to 33 s a run on 2 CPUs at 1-min loads of 8 to 31).
ROWS, FILES = 30_000, 32
#: The worker's object store: large enough that it does not bind (as in the plan, whose working set fits its store).
BENCH_STORE_BYTES = 2**30


def refused_batch_sizes() -> dict[str, str]:
    """What Ray says to an encoder on GPUs given its default batch size (None: whole blocks) and ``"auto"``."""
    import ray.data

    said = {}
    for size in (None, "auto"):
        try:
            ray.data.range(1).map_batches(embed_udfs.Encoder, num_gpus=0.5, batch_size=size)
            said[str(size)] = "accepted"
        except ValueError as e:
            said[str(size)] = str(e).split(". ")[0]
    return said


class EmbedBench:
    """The pipeline under each config, over the rendered levers stack's ``levers-embed`` plan."""

    def __init__(self, lab: Lab, data: str, default_batch: int) -> None:
        import ray.data.context

        import ray_gpu

        tuning = ray_gpu.load(lab.tuning_file("levers-embed"), env={})  # logical GPUs; sets the planned block size
        self.data, self.default_batch = data, default_batch
        self.block, self.default_block = (
            tuning.document["data"]["blockSizeBytes"],
            ray.data.context.DEFAULT_TARGET_MAX_BLOCK_SIZE,
        )
        self.pool, self.pre = tuning.actor_pool_kwargs(), tuning.preprocess_kwargs()

    def pipeline(self, levers: frozenset[str]) -> Any:
        """Read, tokenize, encode, with the ``levers`` as planned and the others at Ray's defaults: the 128 MiB block
        size, tokenizing fused into the read tasks, ``default_batch`` rows a call, an autoscaling actor pool."""
        import ray.data

        ray.data.DataContext.get_current().target_max_block_size = (
            self.block if "block_size" in levers else self.default_block
        )
        pre = self.pre if "preprocess_pool" in levers else {}
        encode: dict[str, Any] = {
            "num_gpus": self.pool["num_gpus"],
            "batch_size": self.pool["batch_size"] if "batch_size" in levers else self.default_batch,
        }
        if "actor_pool" in levers:
            encode["compute"] = self.pool["compute"]
        return (
            ray.data.read_parquet(self.data)
            .map_batches(embed_udfs.tokenize, **pre)
            .map_batches(embed_udfs.Encoder, **encode)
        )

    def run(self, name: str) -> dict[str, Any]:
        """One run of config ``name``, consumed by the driver: rows per second from building the dataset to its last
        row, bytes spilled during it (the raylets' store stats), the largest block any operator output (Ray Data's
        stats) and the actors that took batches (their process ids in the output)."""
        import numpy as np

        from ray_gpu import run_record

        spilled = run_record.spilled_bytes()
        started = time.perf_counter()
        ds = self.pipeline(CONFIGS[name])
        rows, pids = 0, set()
        for batch in ds.iter_batches(batch_size=None, batch_format="numpy"):
            rows += len(batch["id"])
            pids.update(np.unique(batch["pid"]).tolist())
        wall = time.perf_counter() - started
        slots = {"read": 16, "preprocess": 16, "gpu": 8, "write": 16}  # only names the stages; not reported
        ops = run_record.data_section(
            run_record.stats_summary(ds), wall_seconds=wall, rows=rows, slots=slots, gpu_udf="Encoder"
        )["operators"]
        return {
            "rows": rows,
            "seconds": round(wall, 2),
            "rowsPerSecond": round(rows / wall, 1),
            "spilledBytes": max(0, run_record.spilled_bytes() - spilled),
            "maxBlockBytes": max(op["maxBlockBytes"] for op in ops),
            "operators": [op["name"] for op in ops],
            "actors": len(pids),
        }

    def levers(self) -> list[dict[str, str]]:
        """The levers the configs set, with the planned and default values, and what this bench can say of each."""
        pool, pre = self.pool["compute"], self.pre["compute"]
        same = self.default_batch == self.pool["batch_size"]
        return [
            {
                "lever": "Block size",
                "planKey": "data.blockSizeBytes",
                "planned": _mib(self.block),
                "default": _mib(self.default_block),
                "note": "measured",
            },
            {
                "lever": "Preprocessing as its own task pool",
                "planKey": "actorPool.preprocessConcurrency",
                "planned": f"TaskPoolStrategy(size={pre.size}), 1 CPU each",
                "default": "fused into the read tasks",
                "note": "measured",
            },
            {
                "lever": "Batch size",
                "planKey": "actorPool.batchSize",
                "planned": f"{self.pool['batch_size']} rows",
                "default": f"{self.default_batch} rows",
                "note": "Ray's default (None: a whole block) and 'auto' are refused with num_gpus; the default "
                "here is the nearest Ray accepts, "
                + (
                    "Ray's legacy default, equal to the plan's: `+batch_size` runs the same pipeline as "
                    "`defaults` (an A/A check of the bench's noise)"
                    if same
                    else "as given"
                ),
            },
            {
                "lever": "Actor pool size",
                "planKey": "actorPool.actorPoolSize",
                "planned": f"fixed pool of {pool.min_size}",
                "default": "autoscaling pool from 1",
                "note": "measured",
            },
            {
                "lever": "GPUs per actor",
                "planKey": "actorPool.gpusPerActor",
                "planned": f"{self.pool['num_gpus']} GPU",
                "default": "(not varied)",
                "note": "configuration only: as planned in every config (logical GPUs, no device to measure)",
            },
        ]


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def interleaved(bench: EmbedBench, runs: int) -> list[dict[str, Any]]:
    """One warm-up run per config (not counted: the first runs start worker processes), then ``runs`` rounds in
    :func:`schedule` order. A config that raises is reported with its error and left out of later rounds."""
    counted: dict[str, list[dict[str, Any]]] = {name: [] for name in CONFIGS}
    errors: dict[str, str] = {}
    plan = [(-1, name) for name in CONFIGS] + schedule(list(CONFIGS), runs)
    for position, (rnd, name) in enumerate(plan):
        if name in errors:
            continue
        load = load_average()
        try:
            result = bench.run(name)
        except Exception as e:  # reported in the table; the bench goes on with the other configs
            errors[name] = repr(e)[:300]
            print(f"  {name} failed: {errors[name]}", flush=True)
            continue
        print(
            f"  {'warm-up' if rnd < 0 else f'round {rnd + 1}'} {name} (load {load}): {result['rowsPerSecond']} "
            f"rows/s in {result['seconds']} s",
            flush=True,
        )
        if rnd >= 0:
            counted[name].append({"round": rnd, "position": position, "load": load, **result})
    rows = []
    for name, levers in CONFIGS.items():
        label = "all four" if len(levers) == len(LEVERS) else (", ".join(sorted(levers)) or "none")
        done = {"error": errors[name]} if name in errors else summary(name, counted[name], counted[BASELINE])
        rows.append({"name": name, "levers": label, **done})
    return rows


def main() -> int:
    import ray
    import ray.data.context

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rendered", required=True, help="output of ray-gpu render -C runtime/e2e/levers-stack --stack levers"
    )
    parser.add_argument("--work", required=True, help="scratch directory (the data is written here once)")
    parser.add_argument("--out", required=True, help="folder for embed.json and embed.md")
    parser.add_argument(
        "--runs", type=int, default=3, help="counted rounds, each running every config once (default 3)"
    )
    parser.add_argument("--rows", type=int, default=ROWS, help=f"rows of text (default {ROWS})")
    parser.add_argument("--files", type=int, default=FILES, help=f"parquet files (default {FILES})")
    parser.add_argument(
        "--default-batch-size",
        type=int,
        default=ray.data.context.LEGACY_DEFAULT_BATCH_SIZE,
        help="defaults' rows per encoder call",
    )
    args, ignored = (
        parser.parse_known_args()
    )  # bench-ray.sh hands every part the same arguments (--only is the levers')
    if ignored:
        print(f"  embed bench: ignoring {' '.join(ignored)}", flush=True)
    lab = Lab.load(args.rendered, args.work)
    started = time.time()
    data = embed_udfs.synthesize(os.path.join(args.work, "embed-data"), args.rows, args.files)
    print(f"  data: {args.rows} rows in {args.files} files ({time.time() - started:.0f} s)", flush=True)
    here = os.path.dirname(os.path.abspath(__file__))

    def body() -> tuple[list[dict[str, Any]], list[dict[str, str]], dict[str, str], int]:
        logging.getLogger("ray.data").setLevel(logging.WARNING)  # no progress lines per run: this prints one line a run
        bench = EmbedBench(lab, data, args.default_batch_size)
        return interleaved(bench, args.runs), bench.levers(), refused_batch_sizes(), bench.pool["batch_size"]

    configs, levers, refused, planned_batch = on_nodes(
        planned_nodes(lab, "levers-embed", BENCH_STORE_BYTES), body, pythonpath=(here,)
    )
    cluster = (
        "the levers stack's head and one worker pod as Ray nodes (16 logical CPUs, 4 logical GPUs), a "
        f"{BENCH_STORE_BYTES >> 20} MiB worker store"
    )
    report = bench_report(
        ray.__version__,
        args.runs,
        configs,
        cluster=cluster,
        data=data_shape(data),
        levers=levers,
        refusedBatchSizes=refused,
    )
    report["runsPerConfig"], report["configs"] = report.pop("runsPerSide"), report.pop("measures")
    if args.default_batch_size == planned_batch:
        report["aaControl"] = "+batch_size"  # the plan's batch size is the default: the same pipeline as defaults
    write_report(args.out, "embed", report, table(report))
    print(f"  embed bench: {time.time() - started:.0f} s in all", flush=True)
    return 1 if any("error" in c for c in configs) else 0


def data_shape(folder: str) -> dict[str, Any]:
    """Rows, files, text bytes and mean characters of the parquet files in ``folder``."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))
    lengths = [
        pc.sum(pc.utf8_length(pq.read_table(os.path.join(folder, f), columns=["text"])["text"])).as_py() for f in files
    ]
    rows = sum(pq.read_metadata(os.path.join(folder, f)).num_rows for f in files)
    return {"rows": rows, "files": len(files), "textBytes": sum(lengths), "meanChars": sum(lengths) / rows}


if __name__ == "__main__":
    sys.exit(main())
