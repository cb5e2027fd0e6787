"""The run record: built from a real Ray Data run on the local CPU cluster, checked against its schema, refused
when it breaks it, printed and written where ``$RAY_GPU_RUN_RECORD_FILE`` says. Counts, names, stages and bytes
only: no duration or time fraction is asserted."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

import ray_gpu
from ray_gpu import run_record

ROWS = 300
FILES = 3
DIGEST = "sha256:" + "ab" * 32


def Tokenize(batch: dict[str, Any]) -> dict[str, Any]:
    """Stand-in for the example's tokenizer (named like its operator, MapBatches(Tokenize)): text lengths."""
    import numpy as np

    return {"id": batch["id"], "tokens": np.array([len(t) for t in batch["text"]], dtype=np.int64)}


class Embedder:
    """Stand-in for the example's GPU actor: one number per row."""

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {"id": batch["id"], "embedding": batch["tokens"] * 2.0}


@pytest.fixture
def tuning(tuning_docs):
    """The dev stack's EmbeddingPipeline document, loaded; ``tuning(env)`` loads it with another environment."""

    def load(env: dict[str, str] | None = None) -> ray_gpu.Tuning:
        doc = tuning_docs["dev/embed-chunks"]
        return ray_gpu.loads(json.dumps(doc), source="tuning.json", env=env or {}, apply_data_context=False)

    return load


@pytest.fixture(scope="module")
def pipeline_run(ray_local, tmp_path_factory):
    """A small pipeline written with ray_gpu.write_parquet: the dataset that wrote, the committed run, the spill before."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray.data

    source = tmp_path_factory.mktemp("source")
    per = ROWS // FILES
    for f in range(FILES):
        ids = np.arange(f * per, (f + 1) * per)
        pq.write_table(
            pa.table({"id": ids, "text": [f"row {i} " * (1 + i % 5) for i in ids]}), source / f"part-{f}.parquet"
        )
    spilled_before = run_record.spilled_bytes()
    ds = ray.data.read_parquet(str(source))
    ds = ds.map_batches(Tokenize, compute=ray.data.TaskPoolStrategy(size=1), num_cpus=1)
    ds = ds.map_batches(Embedder, compute=ray.data.ActorPoolStrategy(size=1), num_cpus=0.5, batch_size=64)
    written: list[Any] = []
    run = ray_gpu.write_parquet(ds, str(tmp_path_factory.mktemp("out")), on_written=written.append)
    return written, run, spilled_before


SLOTS = {"read": 2, "preprocess": 1, "gpu": 1, "write": 2}


def _data(pipeline_run) -> dict[str, Any]:
    written, run, _ = pipeline_run
    return run_record.data_section(
        run_record.stats_summary(written[0]), wall_seconds=1.0, rows=run.total_rows, slots=SLOTS, gpu_udf="Embedder"
    )


def test_on_written_gets_the_dataset_that_wrote(pipeline_run):
    written, run, _ = pipeline_run
    assert len(written) == 1 and run.total_rows == ROWS
    assert written[0]._write_ds is not None


def test_the_operators_of_a_real_pipeline_in_execution_order(pipeline_run):
    data = _data(pipeline_run)
    operators = data["operators"]
    stages = [op["stage"] for op in operators]
    assert stages == sorted(stages, key=run_record.STAGES.index), stages  # read -> preprocess -> gpu -> write
    assert {"read", "preprocess", "gpu", "write"} == set(stages)
    by_stage = {op["stage"]: op for op in operators}
    assert by_stage["preprocess"]["name"] == "MapBatches(Tokenize)"
    assert by_stage["gpu"]["name"] == "MapBatches(Embedder)"
    assert by_stage["gpu"]["rowsOut"] == ROWS == data["rows"]
    assert by_stage["preprocess"]["rowsOut"] == ROWS
    assert all(op["slots"] == SLOTS[op["stage"]] for op in operators)
    assert all(op["tasks"] >= 1 and op["maxBlockBytes"] > 0 for op in operators)
    assert operators[-1]["name"] == "Write"


def test_a_record_of_a_real_run_validates_and_is_printed(pipeline_run, tuning, capsys):
    _, _, spilled_before = pipeline_run
    store = run_record.object_store_section(spilled_before)
    assert store["capacityBytes"] > 0 and store["spilledBytes"] >= 0
    # a single-node Ray: its one node runs the tasks, so the workers' store is the cluster's
    assert store["workerCapacityBytes"] == store["capacityBytes"]
    record = run_record.write(
        tuning(), data=_data(pipeline_run), objectStore=store, gpuMemory=run_record.gpu_memory_section([])
    )
    assert run_record.validate_record(record) == []
    assert "gpuMemory" not in record  # nothing measured: the section is left out
    workload = tuning().document["workload"]
    assert record["workload"] == {k: workload[k] for k in ("name", "kind", "environment", "planDigest")}
    assert record["apiVersion"] == ray_gpu.RUN_RECORD_API_VERSION and record["source"] == "runtime"
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(ray_gpu.RUN_RECORD_PREFIX)]
    assert len(lines) == 1 and json.loads(lines[0][len(ray_gpu.RUN_RECORD_PREFIX) :]) == record


def test_the_file_is_written_when_the_variable_is_set(tuning, tmp_path):
    path = tmp_path / "records" / "run.json"
    record = ray_gpu.write_run_record(
        tuning({ray_gpu.RUN_RECORD_FILE_ENV: str(path)}), recorded_at="2026-12-03T15:00:00Z"
    )
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and json.loads(text) == record
    assert text == json.dumps(record, indent=2, sort_keys=True) + "\n"
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]  # no temporary file left


def test_no_file_without_the_variable(tuning, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_record.write(tuning())
    assert list(tmp_path.iterdir()) == []


def _valid() -> dict[str, Any]:
    return {
        "apiVersion": run_record.API_VERSION,
        "kind": "RunRecord",
        "workload": {"name": "embed-chunks", "kind": "EmbeddingPipeline", "environment": "dev", "planDigest": DIGEST},
        "source": "runtime",
        "recordedAt": "2026-12-03T15:00:00Z",
        "data": {
            "wallSeconds": 2.5,
            "rows": 10,
            "operators": [
                {
                    "name": "ReadParquet",
                    "stage": "read",
                    "slots": 2,
                    "tasks": 1,
                    "busySeconds": 0.1,
                    "rowsOut": 10,
                    "maxBlockBytes": 100,
                }
            ],
        },
        "train": {"workers": 2, "steps": 5, "dataWaitFraction": 0.25, "samplesPerSecond": 12.0},
        "objectStore": {"capacityBytes": 1000, "workerCapacityBytes": 800, "spilledBytes": 0},
        "gpuMemory": {"peakGiB": [1.5, 2.0]},
    }


def _broken(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_valid())
    change(doc)
    return doc


@pytest.mark.parametrize(
    ("change", "path", "rule"),
    [
        (
            lambda d: d.update(zzz=1),
            "zzz",
            f"unknown key (known keys: {', '.join(sorted(_valid()))}); a {run_record.API_VERSION} record",
        ),
        (
            lambda d: d.update(apiVersion="ray-gpu.dev/run-record/v2"),
            "apiVersion",
            "expected 'ray-gpu.dev/run-record/v1'",
        ),
        (lambda d: d["workload"].pop("planDigest"), "workload.planDigest", "required key is missing"),
        (lambda d: d["workload"].update(planDigest="sha256:xyz"), "workload.planDigest", "expected a string matching"),
        (
            lambda d: d["data"]["operators"][0].update(stage="gpus"),
            "data.operators[0].stage",
            "expected one of read, preprocess, gpu, write",
        ),
        (
            lambda d: d["data"]["operators"][0].update(slotz=1),
            "data.operators[0].slotz",
            "unknown key (did you mean 'slots'?)",
        ),
        (lambda d: d["data"]["operators"][0].pop("rowsOut"), "data.operators[0].rowsOut", "required key is missing"),
        (lambda d: d["data"]["operators"].append("Write"), "data.operators[1]", "expected an object"),
        (lambda d: d["data"].update(operators=[]), "data.operators", "expected a list of at least 1 item(s)"),
        (lambda d: d["data"].update(wallSeconds=0), "data.wallSeconds", "expected a number in [0.001, 2592000.0]"),
        (lambda d: d.update(recordedAt="2026-02-30T10:00:00Z"), "recordedAt", "expected a string matching"),
        (
            lambda d: d["train"].update(dataWaitFraction=1.5),
            "train.dataWaitFraction",
            "expected a number in [0.0, 1.0]",
        ),
        (lambda d: d["gpuMemory"].update(peakGiB=[-1]), "gpuMemory.peakGiB", "invalid"),
        (lambda d: d.update(source="driver"), "source", "expected one of runtime"),
        (lambda d: d.pop("recordedAt"), "recordedAt", "required key is missing"),
    ],
)
def test_a_broken_record_is_refused_with_its_key_path(change, path, rule):
    assert run_record.validate_record(_valid()) == []
    problems = run_record.validate_record(_broken(change))
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}: ") and rule in problems[0], problems


def test_write_refuses_an_invalid_record_listing_every_problem(tuning, tmp_path):
    bad = {"wallSeconds": 1.0, "rows": -1, "operators": [{"name": "Write", "stage": "sink"}]}
    with pytest.raises(ValueError, match=r"not a valid ray-gpu.dev/run-record/v1 record") as refused:
        run_record.write(tuning({ray_gpu.RUN_RECORD_FILE_ENV: str(tmp_path / "r.json")}), data=bad)
    message = str(refused.value)
    assert (
        "data.rows:" in message
        and "data.operators[0].stage:" in message
        and "data.operators[0].slots: required key is missing" in message
    )
    assert not (tmp_path / "r.json").exists()


def test_the_tuning_documents_unknown_key_message_is_unchanged():
    problems = ray_gpu.validate({"apiVersion": ray_gpu.API_VERSION, "bogus": 1})
    assert any(
        p.startswith("bogus: unknown key")
        and p.endswith(f"this runtime reads {ray_gpu.API_VERSION}, so a newer planner may have written it")
        for p in problems
    )


@pytest.mark.parametrize(
    ("name", "previous", "stage"),
    [
        ("ReadParquet", None, "read"),
        ("ListFiles", None, "read"),
        ("ReadFilesParquetV2", "read", "read"),
        ("limit=3000", "read", "read"),
        ("ReadParquet->MapBatches(Tokenize)", None, "preprocess"),
        ("MapBatches(Tokenize)", "read", "preprocess"),
        ("Map(add_id)", "read", "preprocess"),
        ("MapBatches(Tokenize)->MapBatches(Embedder)", "read", "gpu"),
        ("MapBatches(Embedder)", "preprocess", "gpu"),
        ("Repartition", "gpu", "gpu"),
        ("Write", "gpu", "write"),
        ("MapBatches(Embedder)->Write", "preprocess", "write"),
    ],
)
def test_operator_stages_by_name(name, previous, stage):
    assert run_record.operator_stage(name, "Embedder", previous) == stage


def test_the_train_and_gpu_memory_sections():
    workers = [
        {"kind": "train", "rank": 0, "steps": 10, "dataWaitFraction": 0.1, "samplesPerSecond": 4.0},
        {"kind": "train", "rank": 1, "steps": 9, "dataWaitFraction": 0.3, "samplesPerSecond": 5.0},
    ]
    assert run_record.train_section(workers) == {
        "workers": 2,
        "steps": 9,
        "dataWaitFraction": 0.3,
        "samplesPerSecond": 9.0,
    }
    assert run_record.gpu_memory_section([1.23456, 2]) == {"peakGiB": [1.235, 2.0]}
    with pytest.raises(ValueError, match="at least one worker"):
        run_record.train_section([])


def test_the_workers_store_counts_the_live_nodes_that_run_tasks():
    """A KubeRay cluster's head offers no CPU (num-cpus 0): its store is not where Ray Data's blocks live."""
    store = {"object_store_memory": 100}
    head = {"Alive": True, "Resources": {**store, "CPU": 0.0, "node:__internal_head__": 1.0}}
    cpu = {"Alive": True, "Resources": {**store, "CPU": 8.0}}
    gpu = {"Alive": True, "Resources": {"object_store_memory": 300, "GPU": 1.0}}
    gone = {"Alive": False, "Resources": {**store, "CPU": 8.0}}
    assert run_record.worker_store_bytes([head, cpu, gpu, gone]) == 400
    with pytest.raises(ValueError, match="no live Ray node offers CPUs or GPUs"):
        run_record.worker_store_bytes([head, gone])


def test_the_schema_file_is_the_packaged_one():
    assert Path(run_record.SCHEMA_FILE).name == "run_record.schema.json" and os.path.dirname(
        run_record.SCHEMA_FILE
    ) == os.path.dirname(ray_gpu.__file__)
    assert run_record.SCHEMA["properties"]["apiVersion"]["const"] == run_record.API_VERSION


def test_the_record_is_kept_in_storage_under_its_prefix(tuning, tmp_path):
    loaded = tuning({"RAY_GPU_STORAGE_PATH": str(tmp_path)})
    record = ray_gpu.write_run_record(loaded, recorded_at="2026-12-03T15:00:00Z")
    prefix = loaded.document["workload"]["runRecordPrefix"]
    assert prefix.endswith("run-records/embed-chunks/")
    digest = record["workload"]["planDigest"].removeprefix("sha256:")[:8]
    kept = tmp_path / prefix / f"2026-12-03T15:00:00Z-{digest}.json"
    assert run_record.storage_uri(loaded, record) == f"{tmp_path}/{prefix}2026-12-03T15:00:00Z-{digest}.json"
    assert json.loads(kept.read_text(encoding="utf-8")) == record
    assert [p.name for p in kept.parent.iterdir()] == [kept.name]  # no temporary object left


def test_a_storage_that_refuses_the_record_does_not_fail_the_finished_job(tuning, tmp_path, caplog):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the storage root should be")
    loaded = tuning({"RAY_GPU_STORAGE_PATH": str(blocked)})
    with caplog.at_level("WARNING", logger="ray_gpu"):
        record = ray_gpu.write_run_record(loaded, recorded_at="2026-12-03T15:00:00Z")
    assert record["workload"]["name"] == "embed-chunks"
    assert any("run record not kept in storage at" in r.getMessage() for r in caplog.records)


def test_no_storage_keeps_no_record(tuning):
    loaded = tuning()
    assert run_record.storage_uri(loaded, run_record.write(loaded)) is None
