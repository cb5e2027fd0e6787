"""Gradient accumulation on plain DDP holds the gradients of a step's earlier micro-batches through the next one's
forward and backward: the runtime's loop sums them in ``param.grad`` under ``no_sync()`` and frees them only after the
optimizer step (runtime/ray_gpu/examples/loop.py). So the live peak of a second micro-batch is its activations and logits
on top of every gradient, more than either alone, and backward makes each new gradient beside the held one before it
adds it. The planner's accumulating peak counts both (core/memory/estimate.ts ``accumulation``).

A tiny Llama-style model, fully trained (its gradients about as large as its activations), runs two micro-batches on CPU;
``LiveBytes`` reads the peak of both (the gradients the first makes are counted; weights and inputs made before are not).
"""

from __future__ import annotations

import pytest
from tiny_step import live_peak, planned_step, tiny_case, trainable_bytes


@pytest.mark.parametrize("precision", ["bf16-true", "bf16-mixed"])
def test_a_second_micro_batch_peaks_over_the_held_gradients(planner, precision: str) -> None:
    c = tiny_case(seq=128, mixed=precision == "bf16-mixed")
    peak, model = live_peak(c, micro_batches=2)
    step = planned_step(planner, c, model)
    gradients = trainable_bytes(model)
    assert peak > max(step, sum(gradients)), "the second micro-batch peaks over the held gradients"
    # Backward makes each new gradient beside the held one before adding it (AccumulateGrad): one tensor at a time.
    bound = step + sum(gradients) + max(gradients)
    assert peak <= bound, f"peaked at {peak} bytes, the plan allows {bound}"
