"""A CPU stand-in for QLoRA as the runtime builds it (runtime/ray_gpu/examples/sft.py), for measuring what autograd
saves. bitsandbytes' 4-bit kernels need a GPU, so each linear layer of the blocks becomes a module with the dtypes of
bitsandbytes 0.45.5's ``Linear4bit`` (the version images/train/requirements.in pins):

- ``Linear4bit.forward`` casts its input to the compute dtype (bf16) and casts the output back to the input's dtype
  (``...matmul_4bit(x, ...).to(inp_dtype)``);
- ``MatMul4Bit.forward`` saves only the packed weight for backward (``ctx.tensors = (None, B)``, since 0.43.2), which
  is a parameter and counts nothing here;
- its weight is a ``Params4bit``, which PEFT's ``prepare_model_for_kbit_training`` leaves alone while it casts every
  other 16-bit parameter (embeddings, norms, the LM head, biases) to fp32.

The stand-in keeps the weight in bf16 rather than packed 4-bit: parameters are excluded from the count, so only the
dtypes of what flows between layers matter. ``prepare_model_for_kbit_training`` itself is PEFT's, unchanged.
"""

from __future__ import annotations

import torch
from transformers.pytorch_utils import Conv1D


class Params4bit(torch.nn.Parameter):
    """Named as bitsandbytes names its 4-bit parameter, which is what PEFT checks before it upcasts a parameter."""


class _MatMul4Bit(torch.autograd.Function):
    """``x @ W.t() + bias`` that saves only the frozen weight, as bitsandbytes' ``MatMul4Bit`` does."""

    @staticmethod
    def forward(ctx, x, weight, bias):  # type: ignore[override]
        ctx.save_for_backward(weight)
        out = x @ weight.t()
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        (weight,) = ctx.saved_tensors
        return grad @ weight, None, None


class Linear4bitStandIn(torch.nn.Linear):
    """bitsandbytes ``Linear4bit``'s forward: compute in bf16, return the input's dtype."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inp_dtype = x.dtype
        x = x.to(torch.bfloat16)
        bias = None if self.bias is None else self.bias.to(torch.bfloat16)
        with torch.autocast(x.device.type, enabled=False):
            out = _MatMul4Bit.apply(x, self.weight, bias)
        return out.to(inp_dtype)


def _standin(child: torch.nn.Module) -> Linear4bitStandIn:
    # GPT-2's Conv1D stores its weight as (in, out); transformers quantizes it as a transposed Linear.
    weight = child.weight.data.t() if isinstance(child, Conv1D) else child.weight.data
    out_features, in_features = weight.shape
    new = Linear4bitStandIn(in_features, out_features, bias=child.bias is not None)
    new.weight = Params4bit(weight.contiguous().to(torch.bfloat16), requires_grad=False)
    if child.bias is not None:
        new.bias = torch.nn.Parameter(child.bias.data.to(torch.bfloat16), requires_grad=False)
    return new


#: Modules transformers' bitsandbytes integration leaves unquantized: the output embedding (and BERT's tied decoder).
UNQUANTIZED = ("lm_head", "decoder")


def quantize(model: torch.nn.Module) -> torch.nn.Module:
    """Every linear layer but the output head becomes a stand-in, and the model says it is loaded in 4 bits."""
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name not in UNQUANTIZED and (type(child) is torch.nn.Linear or isinstance(child, Conv1D)):
                setattr(module, name, _standin(child))
    model.is_loaded_in_4bit = True  # type: ignore[assignment]
    return model


def as_runtime_builds(model: torch.nn.Module, upcast: bool) -> torch.nn.Module:
    """The stand-in quantized and prepared as sft.py prepares it; `upcast` False then casts the parameters PEFT upcast
    back to bf16 (``lora.unquantizedPrecision: bf16``)."""
    from peft import prepare_model_for_kbit_training

    from ray_gpu.examples.common import keep_unquantized_in

    prepared = prepare_model_for_kbit_training(quantize(model), use_gradient_checkpointing=False)
    return keep_unquantized_in(prepared, "fp32" if upcast else "bf16")
