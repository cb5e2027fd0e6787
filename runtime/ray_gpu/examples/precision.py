"""The planned precision (the tuning document's ``train.precision``) as the training loop applies it on plain DDP:
the dtype full training loads its weights in, the dtype ``torch.autocast`` computes in, and fp16's gradient scaler.
Under ZeRO, DeepSpeed's config carries the precision and its engine applies it instead. The memory plan counts each
one's bytes (core/memory/autocast.ts for the autocast step).

fp16's gradient scaler is not checkpointed: a resumed run starts it again at PyTorch's initial scale, and its first
steps may be skipped as it finds the scale again."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PrecisionStep:
    #: torch dtype name full training's weights load in (LoRA's frozen base is bf16 whatever the precision).
    weights: str
    #: torch dtype name autocast computes in, or None for no autocast.
    autocast: str | None
    #: Whether fp16's gradient scaler guards the backward pass against underflow.
    scaler: bool


#: One row per precision the planner knows (core/memory/model-states.ts ``PRECISIONS``; a test checks the keys against
#: the tuning schema's ``train.precision``).
PRECISION_STEPS: dict[str, PrecisionStep] = {
    "bf16-mixed": PrecisionStep(weights="float32", autocast="bfloat16", scaler=False),
    "fp16-mixed": PrecisionStep(weights="float32", autocast="float16", scaler=True),
    "bf16-true": PrecisionStep(weights="bfloat16", autocast=None, scaler=False),
    "fp32": PrecisionStep(weights="float32", autocast=None, scaler=False),
}


def weights_dtype(precision: str) -> Any:
    """The torch dtype full training loads its weights in under ``precision``."""
    import torch

    return getattr(torch, PRECISION_STEPS[precision].weights)


class StepPrecision:
    """Autocast and gradient scaling around one worker's micro-steps on plain DDP (``ddp``), as planned; on CPU (the
    stand-in) or under DeepSpeed (``ddp`` false) it does neither."""

    def __init__(self, precision: str, ddp: bool) -> None:
        import torch

        step = PRECISION_STEPS[precision]
        on_gpu = ddp and torch.cuda.is_available()
        self.dtype = getattr(torch, step.autocast) if on_gpu and step.autocast else None
        self.scaler = torch.amp.GradScaler("cuda") if on_gpu and step.scaler else None

    def autocast(self) -> Any:
        """The context one micro-batch's forward pass runs in."""
        import torch

        return torch.autocast("cuda", dtype=self.dtype) if self.dtype is not None else contextlib.nullcontext()

    def backward(self, loss: Any) -> None:
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def step(self, optimizer: Any, trainable: list[Any]) -> None:
        """Clips the gradients to norm 1 and steps the optimizer (unscaled first, skipped on overflow, under fp16)."""
        import torch

        if self.scaler is not None:
            self.scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        if self.scaler is None:
            optimizer.step()
            return
        self.scaler.step(optimizer)
        self.scaler.update()
