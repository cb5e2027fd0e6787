"""Gradient accumulation on plain DDP holds the gradients of a step's earlier micro-batches through the next one's
forward and backward: the runtime's loop sums them in ``param.grad`` under ``no_sync()`` and frees them only after the
optimizer step (runtime/ray_gpu/examples/loop.py). So the live peak of a second micro-batch is its activations and logits
on top of every gradient, more than either alone, and backward makes each new gradient beside the held one before it
adds it. The planner's accumulating peak counts both (core/memory/estimate.ts ``accumulation``).

A tiny Llama-style model, fully trained (its gradients about as large as its activations), runs two micro-batches on CPU;
``LiveBytes`` reads the peak of both (the gradients the first makes are counted; weights and inputs made before are not).
"""

from __future__ import annotations

import contextlib

import cuda_autocast
import pytest
import torch
from test_activation_bound import build, mixed, request

from ray_gpu.live_bytes import LiveBytes


@pytest.mark.parametrize("precision", ["bf16-true", "bf16-mixed"])
def test_a_second_micro_batch_peaks_over_the_held_gradients(planner, precision: str) -> None:
    c = {
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
        "seq": 128,
        "loraKind": "default",
        "loraDropout": 0.0,
        "mixed": precision == "bf16-mixed",
        "qlora": False,
        "upcast": False,
    }
    torch.manual_seed(0)
    model = build(c)
    ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]))
    autocast = cuda_autocast.cuda_autocast if mixed(c) else contextlib.nullcontext

    def micro_batch() -> None:
        with autocast():
            loss = model(input_ids=ids, labels=ids).loss / 2
        loss.backward()

    with LiveBytes() as probe:
        micro_batch()
        micro_batch()
    trainable = [p for p in model.parameters() if p.requires_grad]
    gradients = sum(p.grad.nbytes for p in trainable)
    planned = planner(request(c, sum(p.numel() for p in trainable)))
    step = planned["activations"] + planned["logits"] + planned["weightCopies"]
    assert probe.peak > max(step, gradients), "the second micro-batch peaks over the held gradients"
    # Backward makes each new gradient beside the held one before adding it (AccumulateGrad): one tensor at a time.
    bound = step + gradients + max(p.grad.nbytes for p in trainable)
    assert probe.peak <= bound, f"peaked at {probe.peak} bytes, the plan allows {bound}"
