"""The planner's activation terms bound the peak of a training step's live tensors, not only the tensors it saves, where
eager attention runs: at its softmax's backward one layer holds the saved output, the gradient of the probabilities and
the input gradient, and BLOOM's forward as much (core/memory/attention.ts ``scoreTransientBytesPerToken``). So does
PyTorch's math kernel, which SDPA runs for Falcon-7B's single key/value head, in fp32.

A tiny model of each eager softmax (Llama and BLOOM in fp32, BERT and both Falcon layouts in 16 bit; Falcon-7B's math
kernel) runs one step on CPU at 8 heads × 512 tokens, where the scores outweigh the hidden states as in a 7B model at
2048 tokens; ``LiveBytes`` reads its peak (the CPU analog of ``torch.cuda.max_memory_allocated``: weights and inputs
made before it are not counted). The bound is the planner's activations and logits, autocast's weight copies and the
trainable gradients (the plan keeps the gradients apart from the activations, as they peak at the optimizer step; the
live peak of a step mixes the two). Fused kernels are left out: their backward's buffers are not planned for any model."""

from __future__ import annotations

import pytest
from tiny_step import live_peak, planned_step, tiny_case, trainable_bytes

#: Each family's attentions whose scores a step holds: eager, and Falcon-7B's SDPA, which PyTorch runs as its math kernel.
ATTENTIONS = {
    "bloom": ("eager",),
    "llama": ("eager",),
    "bert": ("eager",),
    "falcon": ("eager", "sdpa"),
    # The new decoder's SDPA is a fused kernel, whose transients the planner counts for no model (docs/memory.md).
    "falcon_new": ("eager",),
}

CASES = [
    (family, attention, lora, checkpointing, precision, dropout)
    for family, attentions in ATTENTIONS.items()
    for attention in attentions
    for lora in (True, False)
    for checkpointing in (False, True)
    for precision in ("bf16-true", "bf16-mixed")
    for dropout in ((0.0, 0.1) if family == "bert" else (0.0,))
]


@pytest.mark.parametrize(("family", "attention", "lora", "checkpointing", "precision", "dropout"), CASES)
def test_eager_step_peak_within_plan(
    planner, family: str, attention: str, lora: bool, checkpointing: bool, precision: str, dropout: float
):
    c = tiny_case(
        family=family,
        kvHeads={"falcon": 1, "falcon_new": 2}.get(family, 8),
        attention=attention,
        dropout=dropout,
        checkpointing=checkpointing,
        lora=lora,
        mixed=precision == "bf16-mixed",
    )
    assert_peak_within_plan(planner, c)


@pytest.mark.parametrize("precision", ["bf16-true", "bf16-mixed"])
def test_a_step_with_the_head_adapted_peaks_within_plan(planner, precision: str):
    """LoRA on the LM head adds its adapter's fp32 output (a logit each) for a moment of the forward pass, which the
    plan does not count. Where the logits outweigh the layers (32,000 entries over a hidden size of 64), the step still
    peaks in the loss, within the plan."""
    c = tiny_case(
        heads=4,
        headDim=16,
        kvHeads=4,
        hidden=64,
        intermediate=128,
        vocab=32000,
        layers=2,
        lora=True,
        loraKind="all-linear",
        loraHead=True,
        mixed=precision == "bf16-mixed",
    )
    assert_peak_within_plan(planner, c)


def assert_peak_within_plan(planner, c: dict) -> None:
    """One step's live peak on CPU stays within the planner's step and the trainable gradients."""
    peak, model = live_peak(c)
    bound = planned_step(planner, c, model) + sum(trainable_bytes(model))
    assert peak <= bound, f"{c}: the step's live tensors peaked at {peak} bytes, the plan allows {bound}"
