"""The Python side of the contract derives from the generated JSON Schema: typed sections, variable names, messages."""

from __future__ import annotations

import json
import logging
from typing import get_type_hints

import pytest

import ray_gpu
from ray_gpu import contract
from ray_gpu.types import SECTION_TYPES, TuningDocument


def _section_schema(name: str) -> dict:
    return contract.SCHEMA["properties"][name]


@pytest.mark.parametrize("section", sorted(SECTION_TYPES))
def test_typed_sections_have_the_schemas_keys(section):
    typed = SECTION_TYPES[section]
    schema = _section_schema(section)
    assert set(get_type_hints(typed)) == set(schema["properties"]), section
    assert set(typed.__required_keys__) == set(schema.get("required", [])), section  # type: ignore[attr-defined]


def test_the_document_type_has_every_section():
    schema = contract.SCHEMA
    assert set(get_type_hints(TuningDocument)) == set(schema["properties"])
    assert set(TuningDocument.__required_keys__) == set(schema["required"])  # type: ignore[attr-defined]


def test_knob_variables_come_from_the_schema():
    assert ray_gpu.knob_env_name("microBatchSize") == "RAY_GPU_MICRO_BATCH_SIZE"
    assert ray_gpu.knob_env_name("gpusPerActor") == contract.SCHEMA["properties"]["knobs"]["properties"]["gpusPerActor"]["x-env"]
    with pytest.raises(ray_gpu.TuningError, match=r"knobs\.microBatch: no such knob"):
        ray_gpu.knob_env_name("microBatch")


def test_a_document_carries_exactly_its_kinds_knobs(tuning_docs):
    doc = json.loads(json.dumps(tuning_docs["dev/llm-pretrain"]))
    doc["knobs"]["batchSize"] = 8
    del doc["knobs"]["microBatchSize"]
    problems = contract.validate(doc)
    assert problems == ["knobs.microBatchSize: required for a TrainingJob, missing", "knobs.batchSize: not a TrainingJob knob"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b'{"apiVersion": "ray-gpu.io/v1", "apiVersion": "x"}', "not a valid document: duplicate key 'apiVersion'"),
        (b'{"kind": "Tuning\xff"}', "not UTF-8 text: byte 16 is b'\\xff'"),
        (b"[" * 100_000 + b"]" * 100_000, "not a valid document: maximum recursion depth exceeded"),
        (b'{"apiVersion": NaN}', "apiVersion: expected 'ray-gpu.io/v1', got NaN"),
    ],
)
def test_malformed_files_become_tuning_errors_with_their_problem(tmp_path, text, problem):
    path = tmp_path / "tuning.json"
    path.write_bytes(text)
    with pytest.raises(ray_gpu.TuningError) as err:
        ray_gpu.load(str(path), env={})
    assert any(p.startswith(problem) for p in err.value.problems), err.value.problems


def test_the_library_logs_nothing_unless_asked(tuning_docs, write_doc, capsys):
    logger = logging.getLogger("ray_gpu")
    handlers = list(logger.handlers)
    assert all(isinstance(h, logging.NullHandler) for h in handlers)
    ray_gpu.load(write_doc(tuning_docs["dev/llm-pretrain"]), env={})
    assert capsys.readouterr().out == ""
    try:
        ray_gpu.log_to_stdout()
        ray_gpu.log_to_stdout()
        ray_gpu.load(write_doc(tuning_docs["dev/llm-pretrain"]), env={})
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("ray-gpu: loaded ray-gpu.io/v1 for llm-pretrain") and len(lines) == 1
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(logging.NOTSET)
