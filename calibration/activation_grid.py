"""The settings calibration/measure_activations.py measures, in the order of test/data/activation-calibration.json's
rows. calibration/measure_on_cuda.py walks the same grid on a GPU.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from tiny_families import FAMILIES

# Kinds of LoRA: (targets, lm_head adapted, lora_dropout). DEFAULT_LORA is the query and value without dropout.
DEFAULT_LORA = ("default", False, 0.0)
# Measured beyond the default on the Llama-style families.
LORA_VARIANTS = (
    ("default", False, 0.1),
    ("all-linear", False, 0.0),
    ("all-linear", False, 0.1),
    ("all-linear", True, 0.0),
)
# Measured under autocast: without and with lora_dropout, on the query and value or every linear layer.
AUTOCAST_VARIANTS = (
    DEFAULT_LORA,
    ("default", False, 0.1),
    ("all-linear", False, 0.0),
    ("all-linear", False, 0.1),
)

# Falcon's two layouts: transformers builds their layers as FalconLinear, and they have an eager attention to measure.
FALCONS = ("falcon", "falcon_new")
LLAMA_STYLE = ("llama", "qwen2", "gemma")

# (hidden, intermediate, head_dim, vocab): three shapes so the hidden, head, MLP and vocabulary terms separate.
SHAPES = ((192, 512, 48, 512), (384, 1024, 96, 512), (192, 1024, 96, 1024))
# (batch, sequence) of every row.
SIZES = ((1, 64), (2, 128))
BOTH = (False, True)


@dataclass(frozen=True)
class Setting:
    """One measured setting: a tiny model of a family at a shape, trained one step as stated."""

    family: str
    shape: tuple[int, int, int, int]
    batch: int
    seq: int
    checkpointing: bool = False
    lora: bool = False
    #: (targets, lm_head adapted, lora_dropout)
    variant: tuple[str, bool, float] = DEFAULT_LORA
    #: Mixed precision: CUDA's autocast to bf16 around the step (fp32 weights for full training).
    autocast: bool = False
    #: QLoRA as the runtime builds it (calibration/kbit_standin.py).
    qlora: bool = False
    attention: str = "sdpa"


def _product(**axes: Iterable) -> Iterator[Setting]:
    """A setting for every combination of the axes, the first outermost, as nested loops in the order given."""
    for values in itertools.product(*axes.values()):
        fields = dict(zip(axes, values, strict=True))
        batch, seq = fields.pop("size")
        yield Setting(**fields, batch=batch, seq=seq)


def configurations() -> Iterator[Setting]:
    """Every measured setting, in the committed rows' order."""
    yield from _product(family=FAMILIES, shape=SHAPES, checkpointing=BOTH, lora=BOTH, size=SIZES)
    yield from _product(family=LLAMA_STYLE, shape=SHAPES, variant=LORA_VARIANTS, size=SIZES, lora=[True])
    # LoRA under mixed precision (autocast): the adapters' matmuls save 16-bit copies of their inputs.
    yield from _product(
        family=LLAMA_STYLE, shape=SHAPES, variant=AUTOCAST_VARIANTS, size=SIZES, lora=[True], autocast=[True]
    )
    # Full training under mixed precision as the runtime trains it on plain DDP: fp32 weights, CUDA's autocast, so the
    # residual stream between the 16-bit matmuls runs in fp32.
    yield from _product(family=FAMILIES, shape=SHAPES, checkpointing=BOTH, size=SIZES, autocast=[True])
    # LoRA under mixed precision on the GPT-style and BERT blocks, whose LayerNorms and GELUs CUDA's autocast runs in fp32.
    gpt_style = ("bert", "gpt2", "gpt_neox", "phi", "bloom", *FALCONS)
    every_linear = (DEFAULT_LORA, ("all-linear", False, 0.0))
    yield from _product(family=gpt_style, shape=SHAPES, variant=every_linear, size=SIZES, lora=[True], autocast=[True])
    # QLoRA as the runtime builds it (PEFT's fp32 upcast kept), under autocast as the runtime trains it: every family
    # bitsandbytes quantizes (not Falcon's two layouts, whose FalconLinear it leaves in 16 bit), with and without
    # checkpointing, and every linear layer with dropout on the Llama-style three.
    quantized = [f for f in FAMILIES if f not in FALCONS]
    yield from _product(
        family=quantized, shape=SHAPES, checkpointing=BOTH, size=SIZES, lora=[True], autocast=[True], qlora=[True]
    )
    yield from _product(
        family=LLAMA_STYLE,
        shape=SHAPES,
        size=SIZES,
        lora=[True],
        variant=[("all-linear", False, 0.1)],
        autocast=[True],
        qlora=[True],
    )
    # Falcon's eager attention, full and LoRA: beside its SDPA (Falcon-7B: PyTorch's math kernel; the new decoder: a
    # fused kernel handed the causal mask), it keeps other tensors.
    yield from _product(family=FALCONS, autocast=BOTH, shape=SHAPES, lora=BOTH, size=SIZES, attention=["eager"])
