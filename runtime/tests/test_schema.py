"""The Python side of the contract derives from the generated JSON Schema: typed sections, variable names, messages."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
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
    assert (
        ray_gpu.knob_env_name("gpusPerActor")
        == contract.SCHEMA["properties"]["knobs"]["properties"]["gpusPerActor"]["x-env"]
    )
    with pytest.raises(ray_gpu.TuningError, match=r"knobs\.microBatch: no such knob"):
        ray_gpu.knob_env_name("microBatch")


def test_a_document_carries_exactly_its_kinds_knobs(tuning_docs):
    doc = json.loads(json.dumps(tuning_docs["dev/llm-pretrain"]))
    doc["knobs"]["batchSize"] = 8
    del doc["knobs"]["microBatchSize"]
    problems = contract.validate(doc)
    assert problems == [
        "knobs.microBatchSize: required for a TrainingJob, missing",
        "knobs.batchSize: not a TrainingJob knob",
    ]


MALFORMED = {
    "duplicate key": (
        b'{"apiVersion": "ray-gpu.io/v1", "apiVersion": "x"}',
        "apiVersion: duplicate key, given 2 times",
    ),
    "invalid UTF-8": (b'{"kind": "Tuning\xff"}', "$: not UTF-8 text: byte 16 (line 1, column 17) is b'\\xff'"),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, "$" + "[0]" * 32 + ": nested deeper than 32 levels (MAX_DEPTH)"),
    "NaN": (b'{"apiVersion": NaN}', "apiVersion: NaN is not a number: JSON has no NaN, Infinity or -Infinity"),
    "Infinity": (b'{"knobs": {"microBatchSize": Infinity}}', "knobs.microBatchSize: Infinity is not a number"),
    "-Infinity": (b'{"sweep": {"grid": [{"t": -Infinity}]}}', "sweep.grid[0].t: -Infinity is not a number"),
    "5000-digit integer": (b'{"knobs": {"microBatchSize": ' + b"7" * 5000 + b"}}", "knobs.microBatchSize: integer 777"),
    "float overflow": (b'{"data": {"sampleFraction": 1e999}}', "data.sampleFraction: number 1e999 is out of range"),
    "empty": (b"", "$: the document is empty"),
    "whitespace": (b" \n\t ", "$: the document is empty"),
    "not an object": (b"[1, 2]", "$: expected an object, got [1, 2]"),
    "UTF-16": (
        '{"kind": "Tuning"}'.encode("utf-16"),
        "$: not UTF-8 text: byte 0 (line 1, column 1) is b'\\xff' (invalid start byte); it starts with a UTF-16",
    ),
    "syntax error": (
        b'{"knobs": {"microBatchSize": }}',
        "knobs.microBatchSize: not JSON: Expecting value at line 1, column 30",
    ),
    "lone surrogate": (b'{"workload": {"name": "\\ud800"}}', "workload.name: a lone surrogate"),
    "odd key": (b'{"we:ird": 1}', '$["we:ird"]: unknown key'),
    "too large": (b" " * (1 << 20) + b"{}", "$: the document is larger than 1048576 bytes (1 MiB, MAX_DOCUMENT_BYTES)"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_become_tuning_errors_with_their_problem_and_path(tmp_path, case):
    text, problem = MALFORMED[case]
    path = tmp_path / "tuning.json"
    path.write_bytes(text)
    for load in (lambda: ray_gpu.load(str(path), env={}), lambda: ray_gpu.loads(text, env={})):
        with pytest.raises(ray_gpu.TuningError) as err:
            load()
        assert any(p.startswith(problem) for p in err.value.problems), err.value.problems
        assert all(err.value.paths), err.value.problems


def test_a_utf8_byte_order_mark_is_accepted_and_ignored(tuning_docs, tmp_path):
    path = tmp_path / "tuning.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(tuning_docs["dev/llm-pretrain"]).encode())
    assert ray_gpu.load(str(path), env={}).name == "llm-pretrain"
    path.write_bytes(b"\xef\xbb\xbf" * 2 + json.dumps(tuning_docs["dev/llm-pretrain"]).encode())
    with pytest.raises(ray_gpu.TuningError, match=r"\$: not JSON: more than one byte-order mark"):
        ray_gpu.load(str(path), env={})


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_path_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path, kind):
    path = tmp_path / "tuning.json"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # opening it for reading would block without a writer: the loader must not wait
    else:
        path = Path("/dev/null")
    with pytest.raises(
        ray_gpu.TuningError, match=r"\$: not a regular file \((a directory|a FIFO|a device or socket)\)"
    ):
        ray_gpu.load(str(path), env={})


def test_problems_past_twenty_are_counted_in_the_message():
    text = "{" + ", ".join(f'"k{i}": NaN' for i in range(30)) + "}"
    with pytest.raises(ray_gpu.TuningError) as err:
        ray_gpu.loads(text, env={})
    assert len(err.value.problems) == 30 and str(err.value).endswith("- ... and 10 more")


def test_importing_the_loader_imports_no_heavy_module():
    code = "import sys, ray_gpu, ray_gpu.contract; print(sorted(m for m in ('ray', 'torch', 'pyarrow', 'numpy') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=Path(__file__).parents[1], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


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
