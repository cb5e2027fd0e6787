"""A tiny model's training step on CPU, its live peak and what the planner allows it: shared by the peak tests
(test_eager_peak.py, test_accumulation_peak.py). The model and the planner request are test_activation_bound.py's."""

from __future__ import annotations

import contextlib
from typing import Any

import cuda_autocast
import torch
from test_activation_bound import build, mixed, request

from ray_gpu.live_bytes import LiveBytes

#: A fully trained Llama-style model, 8 heads × 512 tokens, pure bf16: each test names what it changes.
DEFAULT_CASE: dict[str, Any] = {
    "family": "llama",
    "heads": 8,
    "headDim": 32,
    "kvHeads": 8,
    "hidden": 256,
    "intermediate": 1024,
    "vocab": 1000,
    "layers": 4,
    "attention": "sdpa",
    "dropout": 0.0,
    "checkpointing": False,
    "lora": False,
    "batch": 1,
    "seq": 512,
    "loraKind": "default",
    "loraDropout": 0.0,
    "mixed": False,
    "qlora": False,
    "upcast": False,
}


def tiny_case(**changes: Any) -> dict[str, Any]:
    return {**DEFAULT_CASE, **changes}


def live_peak(c: dict[str, Any], micro_batches: int = 1) -> tuple[int, torch.nn.Module]:
    """The peak of live tensors over `micro_batches` micro-batches of one step (each loss divided by their count, as the
    runtime's loop does; gradients accumulate), and the model, whose gradients the last one left."""
    torch.manual_seed(0)
    model = build(c)
    ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]))
    autocast = cuda_autocast.cuda_autocast if mixed(c) else contextlib.nullcontext
    with LiveBytes() as probe:
        for _ in range(micro_batches):
            with autocast():
                loss = model(input_ids=ids, labels=ids).loss / micro_batches
            loss.backward()
    return probe.peak, model


def trainable_bytes(model: torch.nn.Module) -> list[int]:
    """Bytes of each trainable tensor, and so of its gradient."""
    return [p.numel() * p.element_size() for p in model.parameters() if p.requires_grad]


def planned_step(planner, c: dict[str, Any], model: torch.nn.Module) -> int:
    """What the planner allows one micro-batch's step: its activations and logits, and autocast's weight copies."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    planned = planner(request(c, trainable))
    return planned["activations"] + planned["logits"] + planned["weightCopies"]
