"""Ray Data levers of the embedding plan, each against Ray's default with everything else equal: block size,
preprocessing as its own task pool, the fixed actor pool, GPUs per actor and batch size; plus the read parallelism
the plan no longer sets, with the check that shows why. The UDFs are probes: they record what Ray handed them (rows,
process, GPU ids), so each effect is read from what Ray decided (block metadata, operators, actors in its actor
table, GPU ids it assigned, rows per call), never from a clock: the same on a quiet and a loaded machine. How fast
each side runs is measured by ``npm run bench:ray`` (``bench/ray``)."""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any

from levers_lab import Lab, Result, measured
from levers_udfs import Probe, started_actors, tokenize_stand_in
from processes import HANG_GUARD_S

#: The probe dataset: two parquet files of text rows, each several planned blocks large (56 MB of text per file).
FILES, ROWS_PER_FILE, CHARS = 2, 8000, 7000


def dataset(lab: Lab) -> str:
    from ray_gpu.examples.embed import synthesize

    return synthesize(os.path.join(lab.work, "probe-data"), FILES * ROWS_PER_FILE, CHARS, files=FILES)


def _blocks(ds: Any) -> list[int]:
    return [m.size_bytes for bundle in ds.iter_internal_ref_bundles() for m in bundle.metadata]


def _with_block_size(size: int | None) -> None:
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.target_max_block_size = size if size is not None else _DEFAULT_BLOCK


_DEFAULT_BLOCK = 128 * 2**20


def block_size(lab: Lab, tuning: Any, data: str) -> Result:
    import ray.data

    planned = tuning.document["data"]["blockSizeBytes"]
    measured = {}
    for side, size in (("a", planned), ("b", None)):
        _with_block_size(size)
        sizes = _blocks(ray.data.read_parquet(data).map_batches(lambda b: b, batch_size=None))
        measured[side] = {"blocks": len(sizes), "maxBlockMiB": round(max(sizes) / 2**20, 1)}
    _with_block_size(planned)
    return Result(
        "Block size",
        "data.blockSizeBytes",
        f"blocks after the read of {FILES * ROWS_PER_FILE * CHARS >> 20} MiB and their largest size (block metadata)",
        f"{planned / 2**20:.1f} MiB",
        "Ray's default 128 MiB",
        a=measured["a"],
        b=measured["b"],
        ok=measured["a"]["maxBlockMiB"] <= 1.5 * planned / 2**20 and measured["a"]["blocks"] > measured["b"]["blocks"],
        expect="A: more blocks, none much over the planned size (more parallelism, a bounded working set)",
    )


def _operators(ds: Any) -> list[str]:
    """The operators Ray Data ran for ``ds`` (its stats, once executed): fused operators are joined by ``->``."""
    return [m.group(1) for m in re.finditer(r"^Operator \d+ (\S+):", ds.stats(), re.M)]


def preprocess_pool(lab: Lab, tuning: Any, data: str) -> Result:
    import ray.data

    kwargs = tuning.preprocess_kwargs()
    measured: dict[str, list[str]] = {}
    for side, extra in (("a", kwargs), ("b", {})):
        ds = ray.data.read_parquet(data).map_batches(tokenize_stand_in, batch_size=None, **extra).materialize()
        measured[side] = _operators(ds)
    own = "MapBatches(tokenize_stand_in)"
    return Result(
        "Preprocessing as its own task pool",
        "actorPool.preprocessConcurrency",
        "the operators Ray Data ran (its stats): the tokenizer on its own, or fused into the read tasks",
        f"TaskPoolStrategy(size={kwargs['compute'].size}), 1 CPU each",
        "Ray's default: fused into the read tasks",
        a=measured["a"],
        b=measured["b"],
        ok=own in measured["a"] and own not in measured["b"] and any(op.endswith("->" + own) for op in measured["b"]),
        expect="A: the tokenizer is an operator of its own, with its own tasks; B: Ray fuses it into the read",
    )


#: Ray Data's actor class for a map_batches UDF class, as its actor table names it.
_MAP_WORKER = "MapWorker(MapBatches({}))"


def _actor_ids(class_name: str) -> set[str]:
    """Ids of every actor of ``class_name`` in the cluster's actor table (alive or not)."""
    import ray._private.state as state

    return {a["ActorID"] for a in state.actors().values() if a["ActorClassName"] == class_name}


def _probe_run(lab: Lab, data: str, side: str, args: dict[str, Any]) -> tuple[dict[int, list[str]], Any, int]:
    """Runs the Probe actors over the dataset, Ray Data waiting for the pool's minimum of actors before any data
    flows (``DataContext.wait_for_min_actors_s``, a hang guard here: Ray 2.58's default -1 starts a pool without
    waiting, so a loaded machine could finish the pipeline with part of a fixed pool started). Returns the actors
    that ran (process id to the GPU ids Ray assigned), the output, and the actors Ray's actor table gained."""
    import ray.data

    ctx = ray.data.DataContext.get_current()
    markers = tempfile.mkdtemp(prefix=f"actors-{side}-", dir=lab.work)
    before = _actor_ids(_MAP_WORKER.format("Probe"))
    waited, ctx.wait_for_min_actors_s = ctx.wait_for_min_actors_s, int(HANG_GUARD_S)
    try:
        df = (
            ray.data.read_parquet(data)
            .map_batches(Probe, fn_constructor_kwargs={"marker_dir": markers}, **args)
            .to_pandas()
        )
    finally:
        ctx.wait_for_min_actors_s = waited
    return started_actors(markers), df, len(_actor_ids(_MAP_WORKER.format("Probe")) - before)


def _gpu_ids(actors: dict[int, list[str]]) -> list[str]:
    return sorted({g for ids in actors.values() for g in ids})


def _default_pool() -> dict[str, Any]:
    """The actor pool Ray Data makes of a UDF class given no ``compute`` (its logical operator's strategy)."""
    import ray.data

    compute = ray.data.range(1).map_batches(Probe, fn_constructor_kwargs={"marker_dir": ""})._logical_plan.dag.compute
    return {
        "minSize": compute.min_size,
        "maxSize": None if compute.max_size == float("inf") else compute.max_size,
        "initialSize": compute.initial_size,
    }


def actor_levers(lab: Lab, tuning: Any, data: str) -> list[Result]:
    """The fixed pool and its GPUs per actor: the actors Ray started and the GPU ids it gave them, planned against
    Ray's defaults (the pool Ray makes without ``compute``; the same pool without ``num_gpus``)."""
    pool = tuning.actor_pool_kwargs()
    size, share = pool["compute"].min_size, pool["num_gpus"]
    planned, _, in_table = _probe_run(lab, data, "planned", pool)
    cpu_only, _, _ = _probe_run(lab, data, "default-gpus", {k: v for k, v in pool.items() if k != "num_gpus"})
    default_pool = _default_pool()

    def seen(actors: dict[int, list[str]]) -> dict[str, Any]:
        return {
            "actorsStarted": len(actors),
            "actorsWithAGpu": sum(1 for ids in actors.values() if ids),
            "gpuIds": _gpu_ids(actors),
        }

    gpus = round(size * share)
    per_gpu = {g: sum(1 for ids in planned.values() if g in ids) for g in _gpu_ids(planned)}
    return [
        Result(
            "Actor pool size",
            "actorPool.actorPoolSize",
            "actors Ray's actor table gained and the GPU ids they held (ray.get_gpu_ids()), once Ray Data waited for the pool; "
            "for B the pool Ray Data makes without compute=",
            f"fixed pool of {size}",
            "Ray's default: an autoscaling pool from 1",
            a={**seen(planned), "actorsInTable": in_table},
            b=default_pool,
            ok=in_table == len(planned) == size
            and len(_gpu_ids(planned)) == gpus
            and default_pool["minSize"] == default_pool["initialSize"] == 1 < size,
            expect=f"A: all {size} actors start before the data flows and hold all {gpus} GPUs; B starts 1 and grows only under load",
        ),
        Result(
            "GPUs per actor",
            "actorPool.gpusPerActor",
            "GPU ids Ray assigned to each actor it started (ray.get_gpu_ids())",
            f"{share} GPU per actor",
            "Ray's default: no GPU (the model would run on the CPU)",
            a={**seen(planned), "actorsPerGpu": sorted(set(per_gpu.values()))},
            b=seen(cpu_only),
            ok=seen(planned)["actorsWithAGpu"] == size
            and set(per_gpu.values()) == {round(1 / share)}
            and len(cpu_only) == size
            and not any(cpu_only.values()),
            expect=f"A: every actor holds a GPU, {round(1 / share)} per GPU; B: no actor holds one",
        ),
    ]


def batch_size(lab: Lab, tuning: Any, data: str) -> Result:
    import ray.data

    pool = tuning.actor_pool_kwargs()
    planned = pool["batch_size"]
    _with_block_size(None)  # blocks as Ray's default makes them: only the batch size differs
    measured = {}
    try:
        for side, size in (("a", planned), ("b", None)):
            # one CPU actor: Ray refuses a GPU actor without a batch size
            _, df, _ = _probe_run(
                lab, data, f"batch-{side}", {"compute": ray.data.ActorPoolStrategy(size=1), "batch_size": size}
            )
            measured[side] = {"largestBatchRows": int(df.rows.max())}
    finally:
        _with_block_size(tuning.document["data"]["blockSizeBytes"])
    return Result(
        "Batch size",
        "actorPool.batchSize",
        "rows per call the actors received (with Ray's default 128 MiB blocks)",
        f"{planned} rows",
        "Ray's default: a whole block per call (and for GPU actors Ray refuses to run without one)",
        a=measured["a"],
        b=measured["b"],
        ok=measured["a"]["largestBatchRows"] <= planned < measured["b"]["largestBatchRows"],
        expect="A never exceeds the planned rows (the GPU memory plan's batch); B hands over whole blocks",
    )


def read_parallelism(lab: Lab, tuning: Any, data: str) -> Result:
    """The lever the plan dropped: Ray 2.58 does not split parquet files for ``override_num_blocks``."""
    import ray.data

    measured = {}
    for side, blocks in (("a", 200), ("b", None)):
        ds = ray.data.read_parquet(data, **({"override_num_blocks": blocks} if blocks else {})).materialize()
        found = re.search(r"^Operator \d+ Read\S*: (\d+) tasks executed", ds.stats(), re.M)
        measured[side] = {"readTasks": int(found.group(1)) if found else None}
    return Result(
        "Read parallelism (removed)",
        "was data.readParallelism",
        f"read tasks Ray ran for {FILES} parquet files (Ray Data's stats)",
        "override_num_blocks=200",
        "Ray's default",
        a=measured["a"],
        b=measured["b"],
        ok=measured["a"] == measured["b"],
        expect="no difference: so the plan no longer sets it",
    )


EXPERIMENTS = (block_size, preprocess_pool, batch_size, read_parallelism)


def run(lab: Lab) -> list[Result]:
    import ray_gpu

    tuning = ray_gpu.load(lab.tuning_file("levers-embed"), env={})  # real GPUs (logical here), planned block size set
    data = dataset(lab)
    results: list[Result] = []
    for experiment in EXPERIMENTS:
        measured(results, lambda e=experiment: e(lab, tuning, data))  # type: ignore[misc]
    results.extend(actor_levers(lab, tuning, data))
    return results
