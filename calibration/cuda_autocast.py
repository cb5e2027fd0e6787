"""CUDA's autocast policy on CPU, for measuring what autograd saves under the runtime's mixed precision.

The runtime trains under ``torch.autocast("cuda", torch.bfloat16)`` (plain DDP). CPU autocast casts the same matmul
family to bf16 (``linear``, ``addmm``, ``matmul``, ``bmm``, ``baddbmm``, ``scaled_dot_product_attention``), but CUDA
autocast also runs a list of ops in fp32 that CPU autocast leaves in their input's dtype: ``layer_norm``,
``group_norm``, ``softmax`` and ``log_softmax`` without a dtype, ``pow``, ``rsqrt``, ``exp``, ``sum`` and more (PyTorch's
"Autocast Op Reference", *CUDA Ops that can autocast to float32*; ``aten/src/ATen/autocast_mode.h``, ``CastPolicy::fp32``
and ``fp32_set_opt_dtype``). Those casts change what is saved: a GPT-2 LayerNorm returns fp32, and ``gelu_new``'s
``pow`` turns its tanh and product into fp32 tensors.

:class:`CudaAutocastPolicy` adds that list on top of CPU autocast: inside ``torch.autocast("cpu", torch.bfloat16)``
it casts each 16-bit floating input of a listed op to fp32 (an autograd-recorded copy, as autocast's own cast is) and,
for the ``fp32_set_opt_dtype`` ops, sets ``dtype=torch.float32`` where the caller gave none. Ops outside the list run
as CPU autocast runs them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

# CUDA ops that autocast to float32 (``CastPolicy::fp32``), by the name of the Python callable that reaches them.
FP32 = frozenset(
    {
        "__pow__",
        "__rpow__",
        "__rdiv__",
        "__rtruediv__",
        "acos",
        "asin",
        "binary_cross_entropy_with_logits",
        "cosh",
        "cosine_embedding_loss",
        "cdist",
        "cosine_similarity",
        "cross_entropy",
        "dist",
        "erfinv",
        "exp",
        "expm1",
        "group_norm",
        "hinge_embedding_loss",
        "kl_div",
        "l1_loss",
        "layer_norm",
        "log",
        "log10",
        "log1p",
        "log2",
        "margin_ranking_loss",
        "mse_loss",
        "multilabel_margin_loss",
        "multi_margin_loss",
        "nll_loss",
        "normalize",
        "pdist",
        "poisson_nll_loss",
        "pow",
        "reciprocal",
        "rsqrt",
        "sinh",
        "smooth_l1_loss",
        "soft_margin_loss",
        "softplus",
        "renorm",
        "tan",
        "triplet_margin_loss",
    }
)
# Ops that run in fp32 unless the caller gives a dtype (``CastPolicy::fp32_set_opt_dtype``).
FP32_SET_OPT_DTYPE = frozenset({"softmax", "log_softmax", "softmin", "cumprod", "cumsum", "prod", "sum"})


def _to_fp32(x: Any) -> Any:
    """A 16-bit floating tensor as fp32; anything else (fp32, integers, lists of them, scalars) unchanged."""
    if isinstance(x, torch.Tensor) and x.dtype in (torch.bfloat16, torch.float16):
        return x.float()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_fp32(v) for v in x)
    return x


def _first_tensor(args: tuple, kwargs: dict) -> torch.Tensor | None:
    for x in (*args, *kwargs.values()):
        if isinstance(x, torch.Tensor):
            return x
    return None


class CudaAutocastPolicy(TorchFunctionMode):
    """Inside CPU autocast, the ops CUDA autocast runs in fp32 run in fp32 (see the module docstring)."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if not torch.is_autocast_enabled("cpu"):
            return func(*args, **kwargs)
        if name in FP32:
            return func(*_to_fp32(args), **{k: _to_fp32(v) for k, v in kwargs.items()})
        given = kwargs.get("dtype") is not None or any(isinstance(a, torch.dtype) for a in args)
        if name in FP32_SET_OPT_DTYPE and not given:
            first = _first_tensor(args, kwargs)
            if first is not None and first.is_floating_point() and first.dtype != torch.float64:
                return func(*args, **{**kwargs, "dtype": torch.float32})
        return func(*args, **kwargs)


@contextlib.contextmanager
def cuda_autocast(dtype: torch.dtype = torch.bfloat16) -> Iterator[None]:
    """``torch.autocast("cuda", dtype)`` as far as what it saves for backward, on CPU tensors."""
    with torch.autocast("cpu", dtype=dtype), CudaAutocastPolicy():
        yield


def checkpoint_contexts() -> tuple[CudaAutocastPolicy, CudaAutocastPolicy]:
    """``torch.utils.checkpoint``'s ``context_fn``: the policy around the forward and around the recomputation, which
    runs inside backward, where the caller's torch function modes are not active (checkpoint restores autocast itself).
    """
    return CudaAutocastPolicy(), CudaAutocastPolicy()
