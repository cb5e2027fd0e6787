"""The device check (calibration/measure_on_cuda.py) walks the settings the committed CPU rows were measured with, and
its measuring path reproduces those rows on CPU, so what it reports on a GPU differs from them only by the device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import measure_on_cuda
import pytest
import torch
from measure_activations import measure

HERE = Path(__file__).resolve().parent


def test_the_grid_is_the_committed_rows_settings_in_order() -> None:
    pairs = list(measure_on_cuda.settings_with_rows())
    committed = json.loads(measure_on_cuda.COMMITTED["activations"].read_text())["rows"]
    assert len(pairs) == len(committed) == 750


def _first(**wanted: object) -> int:
    """The index of the first setting of the grid with the wanted values."""
    for n, (setting, _) in enumerate(measure_on_cuda.settings_with_rows()):
        if all(getattr(setting, k) == v for k, v in wanted.items()):
            return n
    raise LookupError(wanted)


@pytest.mark.parametrize(
    "wanted",
    [
        {"family": "llama", "lora": False, "checkpointing": False},
        {"family": "gpt2", "autocast": True, "checkpointing": True, "lora": False},
        {"family": "qwen2", "qlora": True, "checkpointing": True},
        {"family": "falcon_new", "attention": "eager", "lora": True, "autocast": True},
        {"family": "gemma", "variant": ("all-linear", False, 0.1), "autocast": True},
    ],
    ids=["llama", "gpt2-mixed-checkpointed", "qwen2-qlora-checkpointed", "falcon-new-eager-lora", "gemma-lora-dropout"],
)
def test_measuring_on_cpu_reproduces_the_committed_row(wanted: dict) -> None:
    setting, row = list(measure_on_cuda.settings_with_rows())[_first(**wanted)]
    assert measure_on_cuda.saved(measure(setting, "cpu")) == measure_on_cuda.saved(row)


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "runtime"), str(HERE)])}
    script = HERE / "measure_on_cuda.py"
    return subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=600)


def test_on_cpu_the_report_shows_no_difference(tmp_path: Path) -> None:
    done = _run("--device", "cpu", "--limit", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "cuda-calibration.json").read_text())
    assert [r["totalRatio"] for r in report["activations"]] == [1.0, 1.0]
    assert "encoderStep" not in report
    assert [r["peakBytes"] for r in report["encoderInference"]] == [
        r["cpuPeakBytes"] for r in report["encoderInference"]
    ]
    assert len(report["encoderInference"]) == 24
    assert done.stdout.splitlines() == [
        "activations: 2 settings, 2 save what the CPU row saved, 0 failed",
        "encoder inference: 24 forwards, peak 1.000-1.000 of the CPU's",
    ]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_without_a_gpu_it_says_so(tmp_path: Path) -> None:
    done = _run("--out", str(tmp_path))
    assert done.returncode != 0
    assert "no CUDA device: run this on a GPU, or with --device cpu" in done.stderr


def test_a_setting_that_fails_is_reported_and_the_rest_run(monkeypatch: pytest.MonkeyPatch) -> None:
    real = measure_on_cuda.measure

    def first_fails(setting, device):
        if setting == next(iter(measure_on_cuda.settings_with_rows()))[0]:
            raise RuntimeError("no kernel for this")
        return real(setting, device)

    monkeypatch.setattr(measure_on_cuda, "measure", first_fails)
    rows = measure_on_cuda.activations("cpu", limit=2)
    assert rows[0]["error"] == "RuntimeError: no kernel for this"
    assert rows[1]["totalRatio"] == 1.0
    lines = measure_on_cuda.summary({"activations": rows})
    assert lines[0] == "activations: 2 settings, 1 save what the CPU row saved, 1 failed"
    assert lines[1].startswith('  failed: {"family": "llama"')
