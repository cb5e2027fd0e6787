"""Chunked causal-LM cross-entropy, the ``chunked`` loss the memory plan can choose (``knobs.loss``).

The LM head and the loss run on ``chunk_tokens`` tokens at a time under activation checkpointing: the logits of only
one chunk exist at once, in forward and again when backward recomputes them, and nothing vocabulary-sized is saved
for backward. The loss equals transformers' ``ForCausalLMLoss`` (labels shifted by one, ``-100`` ignored, fp32
logits, mean over the counted tokens), and so do the gradients (runtime/tests/test_loss.py). No dependency beyond
PyTorch.

    head = use_chunked_loss(model)               # once, after PEFT wraps the model
    hidden = model(**batch).logits                 # the model now returns its final hidden states
    loss = head.loss(hidden, labels, chunk_tokens)
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

#: Label of tokens that carry no loss (padding, prompt, image tokens), as in transformers.
IGNORE_INDEX = -100


def _chunk_loss_sum(
    head: torch.nn.Module, hidden: torch.Tensor, labels: torch.Tensor, softcap: float | None
) -> torch.Tensor:
    logits = head(hidden).float()
    if softcap:
        logits = torch.tanh(logits / softcap) * softcap
    return F.cross_entropy(logits, labels, ignore_index=IGNORE_INDEX, reduction="sum")


def chunked_causal_lm_loss(
    hidden: torch.Tensor, head: torch.nn.Module, labels: torch.Tensor, chunk_tokens: int, softcap: float | None = None
) -> torch.Tensor:
    """Mean next-token cross-entropy of ``hidden`` (batch, seq, hidden) through ``head``, ``chunk_tokens`` tokens at a time."""
    if chunk_tokens < 1:
        raise ValueError(f"chunk_tokens must be at least 1, not {chunk_tokens}")
    h = hidden[:, :-1, :].reshape(-1, hidden.shape[-1])
    y = labels[:, 1:].reshape(-1).to(hidden.device)
    total = hidden.new_zeros((), dtype=torch.float32)
    for start in range(0, h.shape[0], chunk_tokens):
        part = checkpoint(
            _chunk_loss_sum,
            head,
            h[start : start + chunk_tokens],
            y[start : start + chunk_tokens],
            softcap,
            use_reentrant=False,
        )
        total = total + part
    return total / (y != IGNORE_INDEX).sum().clamp(min=1)


class ChunkedLossHead(torch.nn.Module):
    """Takes the place of a causal LM's output layer: the model returns its final hidden states as ``logits``, and
    :meth:`loss` projects and scores them chunk by chunk with the original layer (adapters on it included)."""

    def __init__(self, head: torch.nn.Module, softcap: float | None = None):
        super().__init__()
        self.head = head
        self.softcap = softcap

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden

    def loss(self, hidden: torch.Tensor, labels: torch.Tensor, chunk_tokens: int) -> torch.Tensor:
        return chunked_causal_lm_loss(hidden, self.head, labels, chunk_tokens, self.softcap)


def use_chunked_loss(model: Any) -> ChunkedLossHead:  # a transformers PreTrainedModel or a PEFT wrapper (untyped)
    """Swaps the model's output layer for a :class:`ChunkedLossHead` (also under a PEFT wrapper) and returns it. A final
    logit soft-cap (Gemma 2) moves into the loss, so the model's forward returns plain hidden states."""
    target = model.get_base_model() if hasattr(model, "get_base_model") else model
    config = target.config
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    softcap = getattr(text_config, "final_logit_softcapping", None)
    if softcap:
        text_config.final_logit_softcapping = None
    wrapped = ChunkedLossHead(target.get_output_embeddings(), softcap)
    target.set_output_embeddings(wrapped)
    return wrapped
