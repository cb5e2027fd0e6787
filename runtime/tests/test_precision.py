"""The planned precision (``train.precision``) as the runtime applies it: every precision the contract allows has a
row, full training loads its weights in that row's dtype (LoRA's frozen base in bf16 whatever it is), and the loop's
step clips and steps without autocast or a scaler where there is no GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from ray_gpu.examples import common
from ray_gpu.examples.precision import PRECISION_STEPS, StepPrecision, weights_dtype
from ray_gpu.tuning import load

SCHEMA = Path(__file__).resolve().parents[1] / "ray_gpu" / "tuning.schema.json"


def test_every_precision_of_the_contract_has_a_row() -> None:
    schema = json.loads(SCHEMA.read_text())
    train = schema["properties"]["train"]
    train = schema["$defs"][train["$ref"].split("/")[-1]] if "$ref" in train else train
    assert set(train["properties"]["precision"]["enum"]) == set(PRECISION_STEPS)
    assert "precision" in train["required"]


@pytest.mark.parametrize(
    ("precision", "dtype"),
    [
        ("bf16-mixed", torch.float32),
        ("fp16-mixed", torch.float32),
        ("bf16-true", torch.bfloat16),
        ("fp32", torch.float32),
    ],
)
def test_full_training_loads_its_weights_as_planned(tmp_path: Path, precision: str, dtype: torch.dtype) -> None:
    saved = tmp_path / "tiny"
    common.causal_lm("tiny", "llama", smoke=True).save_pretrained(saved)
    full = common.causal_lm(str(saved), "llama", smoke=False, dtype=weights_dtype(precision))
    assert {p.dtype for p in full.parameters()} == {dtype}
    frozen = common.causal_lm(str(saved), "llama", smoke=False, frozen_base=True, dtype=weights_dtype(precision))
    assert {p.dtype for p in frozen.parameters()} == {torch.bfloat16}


@pytest.mark.parametrize("precision", sorted(PRECISION_STEPS))
def test_without_a_gpu_the_step_only_clips_and_steps(precision: str) -> None:
    step = StepPrecision(precision, ddp=True)
    assert step.dtype is None and step.scaler is None
    weight = torch.nn.Parameter(torch.ones(4))
    optimizer = torch.optim.SGD([weight], lr=1.0)
    with step.autocast():
        loss = (weight * 10.0).sum()
    step.backward(loss)
    step.step(optimizer, [weight])
    # The gradient (10 per element, norm 20) is clipped to norm 1 before SGD steps by it.
    assert torch.allclose(weight.detach(), torch.full((4,), 0.5))


def test_the_loop_and_the_weights_read_the_planned_precision(tuning_docs, write_doc) -> None:
    doc = tuning_docs["dev/llm-pretrain"]
    tuning = load(write_doc(doc))
    assert tuning.train_loop_config()["precision"] == doc["train"]["precision"] == "bf16-mixed"
    assert tuning.weights_precision() == "bf16-mixed"
    targets = {e["target"] for e in tuning.applied if e["key"] == "train.precision"}
    assert targets == {"StepPrecision (autocast, gradient scaler)", "from_pretrained(dtype=...)"}
