"""The run record, version 1: what one run of a workload measured, written by the job when it ends and read later
by ``ray-gpu tune``.

Its JSON Schema (``run_record.schema.json``, shipped in this package) is generated from the planner's one definition;
:func:`validate_record` checks a record against it with the tuning document's validator (:mod:`ray_gpu.contract`),
every problem naming its key path (``data.operators[2].stage``). :func:`write` builds a record from the loaded
:class:`~ray_gpu.Tuning` (the workload's name, kind, environment and plan digest) and the sections the job measured,
prints it as one log line (``RAY_GPU_RUN_RECORD {json}``), when ``$RAY_GPU_RUN_RECORD_FILE`` is set writes it to that
file, and keeps it in the stack's storage under the document's ``workload.runRecordPrefix`` (:func:`storage_uri`), where
``ray-gpu report`` and ``ray-gpu tune`` read it after the cluster is gone. The sections:

- ``data``: Ray Data's execution stats of the pipeline (:func:`data_section`), one entry per operator in execution
  order, each with its stage (read, preprocess, gpu, write) and the slots the plan gave that stage;
- ``objectStore``: the object stores' capacity, all nodes' and the workers', and what spilled during the run
  (:func:`object_store_section`);
- ``train``: the training loop's :class:`~ray_gpu.telemetry.StepTelemetry` of every worker (:func:`train_section`);
- ``gpuMemory``: the peak memory each GPU held (:func:`gpu_memory_section`).

Ray is imported only by the functions that ask it (:func:`spilled_bytes`, :func:`object_store_section`).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from . import contract, output_store
from .strict_json import ROOT
from .types import JsonSchema

if TYPE_CHECKING:
    from .tuning import Tuning

log = logging.getLogger("ray_gpu")

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_record.schema.json")
API_VERSION = "ray-gpu.dev/run-record/v1"
KIND = "RunRecord"
#: Where :func:`write` also writes the record (a local path; its folder is created), read from ``Tuning.env``.
RUN_RECORD_FILE_ENV = "RAY_GPU_RUN_RECORD_FILE"
#: Prefix of the JSON line :func:`write` prints.
RUN_RECORD_PREFIX = "RAY_GPU_RUN_RECORD "
#: The workload keys a record copies from the tuning document.
WORKLOAD_KEYS = ("name", "kind", "environment", "planDigest")
#: Stages of a Ray Data pipeline, in execution order.
STAGES = ("read", "preprocess", "gpu", "write")


def _load_schema() -> JsonSchema:
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        schema = cast(JsonSchema, json.load(f))
    if schema["properties"]["apiVersion"]["const"] != API_VERSION:
        raise ValueError(
            f"{SCHEMA_FILE} defines {schema['properties']['apiVersion']['const']}, this module writes {API_VERSION}"
        )
    return schema


SCHEMA: JsonSchema = _load_schema()


def validate_record(doc: Any) -> list[str]:
    """Every problem of a run record, each ``<path>: <rule>`` naming its key path; empty when valid."""
    problems: list[str] = []
    note = f"a {API_VERSION} record has no such key"
    contract._validate(doc, SCHEMA, ROOT, problems, note=note)
    return problems


# ---- data ------------------------------------------------------------------------------------------------------
def stats_summary(ds: Any) -> Any:
    """Ray Data's ``DatasetStatsSummary`` of what a dataset ran. After ``write_*`` (Ray 2.58) the executed plan is
    the dataset's ``_write_ds``; a materialized or consumed dataset holds its own stats."""
    written = getattr(ds, "_write_ds", None)
    return (written if written is not None else ds)._get_stats_summary()


def _executed(summary: Any) -> list[Any]:
    """The operators' ``OperatorStatsSummary`` in execution order: each parent's (recursively) before its own.
    Operators with no stats at all (Ray's placeholder of the plan's input, which runs no task) are left out."""
    operators: list[Any] = []
    for parent in summary.parents:
        operators += _executed(parent)
    return operators + [
        op for op in summary.operators_stats if op.wall_time is not None or op.output_num_rows is not None
    ]


def _named_stage(part: str, gpu_udf: str) -> str | None:
    """The stage one operator name (one part of a fused ``A->B``) says, or None when it says none."""
    if part.startswith("Write"):
        return "write"
    if gpu_udf and gpu_udf in part:
        return "gpu"
    if part.startswith(("Read", "ListFiles")):
        return "read"
    if part.startswith(("MapBatches", "Map", "FlatMap", "Filter")):
        return "preprocess"
    return None


def operator_stage(name: str, gpu_udf: str, previous: str | None = None) -> str:
    """The stage of a Ray Data operator: a write if it holds one, the GPU stage if it holds ``gpu_udf``, else the
    stage of the last part of a fused name that names one (``ReadParquet->MapBatches(Tokenize)`` preprocesses); an
    operator whose name says none (``Limit``, ``Repartition``) belongs to the stage before it, read for the first."""
    parts = name.split("->")
    for wanted in ("write", "gpu"):
        if any(_named_stage(p, gpu_udf) == wanted for p in parts):
            return wanted
    for part in reversed(parts):
        stage = _named_stage(part, gpu_udf)
        if stage is not None:
            return stage
    return previous or "read"


def _operator(op: Any, stage: str, slots: int) -> dict[str, Any]:
    """One ``data.operators`` entry from an ``OperatorStatsSummary`` (a missing statistic counts as 0). Its tasks are
    the tasks that output rows (``task_rows``, what ``ds.stats()`` prints as "N tasks executed"), else its blocks."""
    rows, sizes, wall = op.output_num_rows, op.output_size_bytes, op.wall_time
    tasks = getattr(op, "task_rows", None) or rows
    return {
        "name": op.operator_name,
        "stage": stage,
        "slots": slots,
        "tasks": int(tasks.count) if tasks else 0,
        "busySeconds": round(float(wall.sum), 6) if wall else 0.0,
        "rowsOut": int(rows.sum) if rows else 0,
        "maxBlockBytes": int(sizes.max) if sizes else 0,
    }


def data_section(
    summary: Any, *, wall_seconds: float, rows: int, slots: Mapping[str, int], gpu_udf: str
) -> dict[str, Any]:
    """The ``data`` section from Ray Data's ``DatasetStatsSummary`` (:func:`stats_summary`): one entry per operator
    in execution order, read to write. busySeconds is the sum of its blocks' wall times, rowsOut the rows it output,
    tasks the tasks that output them, maxBlockBytes its largest output block.

    :param wall_seconds: the pipeline's wall time (the write, which runs it)
    :param rows: the rows it wrote
    :param slots: the slots of each stage (read, preprocess, gpu, write), as planned or as the cluster has them
    :param gpu_udf: the name of the GPU stage's callable class (``Embedder``): an operator holding it is the GPU stage
    :raises ValueError: a stage has no slots
    """
    operators: list[dict[str, Any]] = []
    previous: str | None = None
    for op in _executed(summary):
        stage = operator_stage(op.operator_name, gpu_udf, previous)
        if stage not in slots:
            raise ValueError(
                f"operator {op.operator_name} is in the {stage} stage, which slots {dict(slots)} does not give"
            )
        operators.append(_operator(op, stage, int(slots[stage])))
        previous = stage
    return {"wallSeconds": round(float(wall_seconds), 6), "rows": int(rows), "operators": operators}


# ---- object store, training, GPU memory ----------------------------------------------------------------------------
def spilled_bytes() -> int:
    """Bytes spilled from the object stores so far, summed over the cluster's nodes (the raylets' store stats).
    Connects to Ray first (``ray.init()``, as Ray Data does on first use) when the job has not yet."""
    import ray
    from ray._private.internal_api import get_memory_info_reply, get_state_from_address

    if not ray.is_initialized():
        ray.init()
    stats = get_memory_info_reply(get_state_from_address(ray.get_runtime_context().gcs_address)).store_stats
    return int(stats.spilled_bytes_total)


def object_store_section(spilled_before: int) -> dict[str, int]:
    """The ``objectStore`` section: the cluster's object-store capacity (every node's, the head's included), that of
    the nodes that run tasks and actors (:func:`worker_store_bytes`), and the bytes spilled since ``spilled_before``
    (:func:`spilled_bytes` taken when the run started)."""
    import ray

    capacity = int(ray.cluster_resources()["object_store_memory"])
    workers = worker_store_bytes(ray.nodes())
    return {
        "capacityBytes": capacity,
        "workerCapacityBytes": workers,
        "spilledBytes": max(0, spilled_bytes() - int(spilled_before)),
    }


def worker_store_bytes(nodes: Iterable[Mapping[str, Any]]) -> int:
    """Object-store memory of the live nodes that offer CPUs or GPUs (``ray.nodes()``): the nodes Ray Data's tasks
    and actors run on, so the plan's head (``num-cpus: 0``) does not count; on a single-node Ray, that node.

    :raises ValueError: no live node offers CPUs or GPUs (nothing could have run the pipeline)
    """
    total = 0
    for node in nodes:
        resources = node.get("Resources", {})
        if node.get("Alive") and (resources.get("CPU", 0) > 0 or resources.get("GPU", 0) > 0):
            total += int(resources.get("object_store_memory", 0))
    if total <= 0:
        raise ValueError("no live Ray node offers CPUs or GPUs with an object store: nothing could run the pipeline")
    return total


def train_section(summaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``train`` section from every worker's ``StepTelemetry.summary()``: the workers, the steps of the slowest,
    the largest data-wait fraction (the worst-fed worker), the samples per second of all of them together.

    :raises ValueError: no summary
    """
    workers = list(summaries)
    if not workers:
        raise ValueError("train_section needs the StepTelemetry summary of at least one worker")
    return {
        "workers": len(workers),
        "steps": min(int(w["steps"]) for w in workers),
        "dataWaitFraction": max(float(w["dataWaitFraction"]) for w in workers),
        "samplesPerSecond": round(sum(float(w["samplesPerSecond"]) for w in workers), 3),
    }


def gpu_memory_section(peaks_gib: Iterable[float]) -> dict[str, list[float]] | None:
    """The ``gpuMemory`` section: the peak memory of each GPU in GiB (``torch.cuda.max_memory_allocated() / 2**30``
    of each worker), or None when none was measured (a CPU run): :func:`write` then leaves the section out."""
    peaks = [round(float(p), 3) for p in peaks_gib]
    return {"peakGiB": peaks} if peaks else None


# ---- the record ------------------------------------------------------------------------------------------------
def _write_file(path: str, record: Mapping[str, Any]) -> None:
    """Writes the record as indented JSON, whole: to a temporary file beside ``path``, then renamed over it."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=2, sort_keys=True) + "\n")
    os.replace(partial, path)


def write(tuning: Tuning, *, recorded_at: str | None = None, **sections: Mapping[str, Any] | None) -> dict[str, Any]:
    """Builds the run record of ``tuning``'s workload with the measured ``sections`` (``data``, ``objectStore``,
    ``train``, ``gpuMemory``; a None section is left out), prints it as one line ``RAY_GPU_RUN_RECORD {json}``,
    writes it to ``$RAY_GPU_RUN_RECORD_FILE`` of ``tuning.env`` when that is set, and returns it.

    :param recorded_at: RFC 3339 UTC time of the record (default: now)
    :raises ValueError: the record does not follow its schema (a bug of the caller or of this module), with every problem
    """
    workload = cast(Mapping[str, Any], tuning.document["workload"])
    record: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "workload": {key: workload[key] for key in WORKLOAD_KEYS if key in workload},
        "source": "runtime",
        "recordedAt": recorded_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **{name: dict(section) for name, section in sections.items() if section is not None},
    }
    problems = validate_record(record)
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise ValueError(f"ray-gpu: the run record of {tuning.name} is not a valid {API_VERSION} record:\n{lines}")
    print(RUN_RECORD_PREFIX + json.dumps(record, sort_keys=True), flush=True)
    path = tuning.env.get(RUN_RECORD_FILE_ENV)
    if path:
        _write_file(path, record)
        log.info("run record written to %s ($%s)", path, RUN_RECORD_FILE_ENV)
    _write_to_storage(tuning, record)
    return record


def storage_uri(tuning: Tuning, record: Mapping[str, Any]) -> str | None:
    """Where :func:`write` keeps ``record`` in the stack's storage: ``workload.runRecordPrefix`` under the storage root
    (``$RAY_GPU_STORAGE_PATH``, else the stack's bucket), one file per run named by its time and plan, e.g.
    ``s3://bucket/ray/run-records/embed-chunks/2026-12-03T16:03:17Z-0febd9a4.json``; None where no storage is set."""
    workload = cast(Mapping[str, Any], tuning.document["workload"])
    try:
        root = tuning.storage_root()
    except contract.TuningError:
        return None
    prefix = str(workload["runRecordPrefix"]).rstrip("/")
    folder = prefix if "://" in prefix or prefix.startswith("/") else f"{root}/{prefix}"
    digest = str(record["workload"]["planDigest"]).removeprefix("sha256:")[:8]
    return f"{folder}/{record['recordedAt']}-{digest}.json"


def _write_to_storage(tuning: Tuning, record: Mapping[str, Any]) -> None:
    """Keeps the record in the stack's storage, where ``ray-gpu report`` and ``ray-gpu tune`` can read it after the
    cluster is gone. The job's work is done by then: a storage error is logged, and does not fail the job."""
    uri = storage_uri(tuning, record)
    if uri is None:
        log.info("run record not kept in storage: neither $RAY_GPU_STORAGE_BUCKET nor $RAY_GPU_STORAGE_PATH is set")
        return
    try:
        output_store.write_json(uri, record)
    except OSError as e:
        log.warning("run record not kept in storage at %s: %s", uri, e)
        return
    log.info("run record kept at %s", uri)
