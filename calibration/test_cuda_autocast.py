"""CUDA's autocast policy on CPU (calibration/cuda_autocast.py): the ops CUDA runs in fp32 return fp32 inside it, the
matmuls bf16 as CPU autocast makes them, nothing changes outside it, and a checkpointed model recomputes under it."""

from __future__ import annotations

import cuda_autocast
import torch
import torch.nn.functional as F
import transformers

X = torch.randn(2, 8, dtype=torch.bfloat16)
W = torch.randn(8, 8)


def test_fp32_ops_return_fp32_and_matmuls_bf16() -> None:
    with cuda_autocast.cuda_autocast():
        assert F.layer_norm(X, (8,)).dtype == torch.float32
        assert X.pow(3).dtype == torch.float32
        assert (X**3).dtype == torch.float32
        assert torch.rsqrt(X.abs() + 1).dtype == torch.float32
        assert F.linear(X.float(), W).dtype == torch.bfloat16
        assert torch.tanh(X).dtype == torch.bfloat16  # not on CUDA's list: its input's dtype


def test_softmax_runs_in_fp32_unless_given_a_dtype() -> None:
    with cuda_autocast.cuda_autocast():
        assert F.softmax(X, dim=-1).dtype == torch.float32
        assert F.softmax(X, dim=-1, dtype=torch.bfloat16).dtype == torch.bfloat16
        assert torch.softmax(X, -1, torch.bfloat16).dtype == torch.bfloat16


def test_outside_autocast_nothing_changes() -> None:
    with cuda_autocast.CudaAutocastPolicy():
        assert F.layer_norm(X, (8,)).dtype == torch.bfloat16
        assert X.pow(3).dtype == torch.bfloat16


def test_a_checkpointed_model_recomputes_under_the_policy() -> None:
    cfg = transformers.GPT2Config(n_embd=32, n_inner=64, n_layer=2, n_head=2, vocab_size=64, n_positions=64)
    model = transformers.AutoModelForCausalLM.from_config(cfg).train()
    model.gradient_checkpointing_enable(
        gradient_checkpointing_kwargs={"use_reentrant": False, "context_fn": cuda_autocast.checkpoint_contexts}
    )
    ids = torch.randint(0, 64, (1, 16))
    with cuda_autocast.cuda_autocast():
        loss = model(input_ids=ids, labels=ids).loss
        # Without the policy around the recomputation, its fp32 LayerNorm outputs would come back bf16, and
        # torch.utils.checkpoint would refuse the mismatch.
        loss.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
