"""The tuning-file contract: every rendered document validates; bad files fail with every problem named."""

from __future__ import annotations

import copy
import json

import pytest

import ray_gpu
from ray_gpu import contract


def test_every_rendered_document_is_valid(tuning_docs):
    assert len(tuning_docs) == 12
    for name, doc in tuning_docs.items():
        assert contract.validate(doc) == [], name


def test_missing_file_names_the_path_and_the_fix(tmp_path, monkeypatch):
    missing = tmp_path / "nope.json"
    monkeypatch.setenv("RAY_GPU_TUNING_FILE", str(missing))
    with pytest.raises(ray_gpu.TuningError) as err:
        ray_gpu.load()
    message = str(err.value)
    assert str(missing) in message and "file not found (path from $RAY_GPU_TUNING_FILE)" in message
    assert "<workload>-tuning" in message


def test_default_path_is_the_mount(monkeypatch):
    with pytest.raises(ray_gpu.TuningError, match=r"/etc/ray-gpu/tuning\.json"):
        contract.read()


def test_not_json_gives_line_and_column(write_doc):
    with pytest.raises(ray_gpu.TuningError, match=r"not JSON: Expecting .* at line 1, column \d+"):
        ray_gpu.load(write_doc(None, text='{"apiVersion": '))


def test_every_problem_in_one_error_with_its_key(tuning_docs, write_doc):
    doc = copy.deepcopy(tuning_docs["dev/llm-pretrain"])
    doc["train"]["numWorkers"] = "4"
    del doc["train"]["maxFailures"]
    doc["train"]["numWorker"] = 4
    doc["knobs"]["microBatchSize"] = 0
    doc["apiVersion"] = "ray-gpu.io/v2"
    with pytest.raises(ray_gpu.TuningError) as err:
        ray_gpu.load(write_doc(doc))
    problems = err.value.problems
    assert "apiVersion: expected 'ray-gpu.io/v1', got 'ray-gpu.io/v2'" in problems
    assert "train.numWorkers: expected an integer >= 1, got '4'" in problems
    assert "train.maxFailures: required key is missing" in problems
    assert "knobs.microBatchSize: expected an integer >= 1, got 0" in problems
    assert any(p.startswith("train.numWorker: unknown key (did you mean 'numWorkers'?)") for p in problems)
    assert len(problems) == 5


def test_unknown_keys_are_reported_not_ignored(tuning_docs, write_doc):
    doc = copy.deepcopy(tuning_docs["dev/embed-chunks"])
    doc["data"]["shuffle"] = True
    doc["telemetry"] = {}
    problems = contract.validate(doc)
    assert any(p.startswith("data.shuffle: unknown key") for p in problems)
    assert any(p.startswith("telemetry: unknown key") for p in problems)
    with pytest.raises(ray_gpu.TuningError, match=r"data\.shuffle: unknown key"):
        ray_gpu.load(write_doc(doc))


def test_sections_must_match_the_kind(tuning_docs):
    doc = copy.deepcopy(tuning_docs["dev/embed-chunks"])
    doc["workload"]["kind"] = "TrainingJob"
    problems = contract.validate(doc)
    assert "train: required for a TrainingJob, missing" in problems
    assert "data: not part of a TrainingJob document" in problems


def test_nested_type_errors(tuning_docs):
    doc = copy.deepcopy(tuning_docs["dev/llm-sweep"])
    doc["sweep"]["grid"] = [{"temperature": [0.1]}]
    doc["actorPool"] = "big"
    problems = contract.validate(doc)
    assert any(p.startswith("sweep.grid: item(s) [0] invalid") for p in problems)
    assert "actorPool: expected an object, got 'big'" in problems


def test_json_round_trip_of_every_document(tuning_docs):
    for doc in tuning_docs.values():
        assert contract.validate(json.loads(json.dumps(doc))) == []
