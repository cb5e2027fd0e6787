"""The tuning-file contract: every rendered document validates; bad files fail with every problem named."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

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


FUZZ = Path(__file__).with_name("fuzz_contract.py")


def test_the_fuzz_fixture_is_the_dev_stacks_render(tuning_docs):
    fixture = json.loads((Path(__file__).parent / "fixtures" / "dev-tuning.json").read_text(encoding="utf-8"))[
        "documents"
    ]
    rendered = {name.split("/", 1)[1]: doc for name, doc in tuning_docs.items() if name.startswith("dev/")}
    assert fixture == rendered, (
        "runtime/tests/fixtures/dev-tuning.json is stale: run .venv-ray/bin/python runtime/tests/fixtures/update_fixtures.py"
    )


@pytest.mark.parametrize("seed", [1, 20261201])
def test_the_standard_library_fuzz_of_the_loader_finds_nothing(seed):
    # -S: no site-packages, so the loader and the fuzz can only use the standard library (as with a bare python3).
    out = subprocess.run(
        [sys.executable, "-S", str(FUZZ), "--seed", str(seed), "--count", "300"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.fullmatch(
        r"fuzz_contract: 300 inputs, \d+ valid, \d+ TuningError, 0 other exceptions, 0 without a path, 0 hangs, "
        rf"0 wrong verdicts \(seed {seed}\)\n",
        out.stdout,
    ), out.stdout


def test_the_fuzz_reports_a_loader_that_lets_another_exception_escape(monkeypatch, capsys):
    import fuzz_contract

    real = ray_gpu.loads

    def leaky(text, **kwargs):
        if isinstance(text, bytes) and b"NaN" in text:
            raise ValueError("NaN escaped")
        return real(text, **kwargs)

    monkeypatch.setattr(ray_gpu, "loads", leaky)
    assert fuzz_contract.main(["--seed", "1", "--count", "120"]) == 1
    out = capsys.readouterr()
    assert (
        re.search(r"[1-9]\d* other exceptions", out.out)
        and "ValueError: NaN escaped" in out.err
        and "input #" in out.err
    )
