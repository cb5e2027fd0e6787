"""Measure the bytes of activations that autograd saves for backward, per transformer layer and per token.

Reproducible calibration for the planner's activation model (core/memory/activations.ts). Tiny, randomly
initialised models of each family are built from a config (no weights are downloaded), run forward with a
causal-LM (or masked-LM) loss on CPU, and every tensor packed by ``torch.autograd.graph.saved_tensors_hooks``
is counted once per storage (parameters excluded). Bytes are attributed to the transformer layer, or to the
"head" (final norm, LM head and loss) by module hooks.

QLoRA rows use calibration/kbit_standin.py (bitsandbytes' dtypes on CPU, the runtime's own preparation).

Usage: PYTHONPATH=runtime python calibration/measure_activations.py > test/data/activation-calibration.json
"""

from __future__ import annotations

import contextlib
import json
import platform
import sys

import cuda_autocast
import torch
import transformers
from tiny_families import FAMILIES
from torch.autograd.graph import saved_tensors_hooks

torch.manual_seed(0)

# LoRA target sets: the default (query and value) and every linear layer of the blocks.
LORA_TARGETS = {
    "default": {
        "bert": ["query", "value"],
        "gpt2": ["c_attn"],
        "gpt_neox": ["query_key_value"],
        "bloom": ["query_key_value"],
        "falcon": ["query_key_value"],
        "falcon_new": ["query_key_value"],
    },
    "all-linear": {
        "bert": ["query", "key", "value", "dense"],
        "gpt2": ["c_attn", "c_proj", "c_fc"],
        "gpt_neox": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "phi": ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"],
        "bloom": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "falcon": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "falcon_new": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
    },
}
LLAMA_TARGETS = {
    "default": ["q_proj", "v_proj"],
    "all-linear": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
}
# Kinds of LoRA measured beyond the default: (targets, lm_head adapted, lora_dropout), on the Llama-style families.
LORA_VARIANTS = (
    ("default", False, 0.1),
    ("all-linear", False, 0.0),
    ("all-linear", False, 0.1),
    ("all-linear", True, 0.0),
)

# Kinds of LoRA measured under autocast: without and with lora_dropout, on the query and value or every linear layer.
AUTOCAST_VARIANTS = (
    ("default", False, 0.0),
    ("default", False, 0.1),
    ("all-linear", False, 0.0),
    ("all-linear", False, 0.1),
)

# Falcon's two layouts: transformers builds their layers as FalconLinear, and they have an eager attention to measure.
FALCONS = ("falcon", "falcon_new")

# (hidden, intermediate, head_dim, vocab): three shapes so the hidden, head, MLP and vocabulary terms separate.
SHAPES = ((192, 512, 48, 512), (384, 1024, 96, 512), (192, 1024, 96, 1024))


def build(family: str, h: int, i: int, hd: int, v: int, attention: str = "sdpa"):
    cfg = FAMILIES[family](h, i, hd, v)
    cfg._attn_implementation = "eager" if family == "bloom" else attention
    if family == "bert":
        return transformers.BertForMaskedLM(cfg)
    return transformers.AutoModelForCausalLM.from_config(cfg)


def widths(family: str, shape: tuple) -> dict:
    """The widths a family's tiny model has for a shape: BLOOM's MLP is 4h; BLOOM's and Falcon's heads are h / head_dim."""
    h, i, hd, _ = shape
    if family == "bloom":
        return {"intermediate": 4 * h, "headDim": hd, "heads": h // hd, "kvHeads": h // hd}
    if family in FALCONS:
        return {"intermediate": i, "headDim": hd, "heads": h // hd, "kvHeads": 1 if family == "falcon" else 2}
    head_dim = hd if family in ("llama", "qwen2", "gemma") else h // 4
    return {"intermediate": i, "headDim": head_dim, "heads": 4, "kvHeads": {"llama": 2, "qwen2": 1}.get(family, 4)}


def layers_of(model):
    """The transformer blocks: the ModuleList named layers / layer / h, also under a PEFT wrapper."""
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and name.split(".")[-1] in ("layers", "layer", "h"):
            return list(module)
    raise RuntimeError("no transformer blocks found")


# Autograd nodes of views, through which a saved weight (``linear`` saves ``weight.t()``) reaches its cast.
VIEW_NODES = frozenset({"TBackward0", "TransposeBackward0", "ViewBackward0", "UnsafeViewBackward0", "PermuteBackward0"})


def is_weight_copy(t: torch.Tensor, params: set[int]) -> bool:
    """Whether a saved tensor is (a view of) autocast's cast of a trainable weight (or of a view of one)."""
    fn = t.grad_fn
    while fn is not None and type(fn).__name__ in VIEW_NODES:
        fn = fn.next_functions[0][0]
    if fn is None or type(fn).__name__ != "ToCopyBackward0":
        return False
    # Falcon's linear layers multiply by `weight.T`, so autocast casts a view of the weight.
    source = fn.next_functions[0][0]
    while source is not None and type(source).__name__ in VIEW_NODES:
        source = source.next_functions[0][0]
    variable = getattr(source, "variable", None)
    return variable is not None and variable.untyped_storage().data_ptr() in params


def lora_targets(family: str, kind: str, head: bool) -> list[str]:
    """The modules a LoRA kind adapts in a family (PEFT matches name suffixes)."""
    targets = list(LORA_TARGETS[kind].get(family, LLAMA_TARGETS[kind]))
    return targets + (["lm_head"] if head else [])


def measure(
    family: str,
    shape: tuple,
    batch: int,
    seq: int,
    checkpointing: bool,
    lora: bool,
    variant: tuple = ("default", False, 0.0),
    autocast: bool = False,
    qlora: bool = False,
    attention: str = "sdpa",
) -> dict:
    h, i, hd, v = shape
    # Mixed precision keeps full training's weights in fp32 (the runtime's fp32 master weights under autocast).
    model = build(family, h, i, hd, v, attention)
    model = model if autocast and not lora else model.to(torch.bfloat16)
    if qlora:
        import kbit_standin

        model = kbit_standin.as_runtime_builds(model, upcast=True)
    kind, head, dropout = variant
    if lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model,
            LoraConfig(
                r=8,
                lora_alpha=16,
                target_modules=lora_targets(family, kind, head),
                lora_dropout=dropout,
                fan_in_fan_out=family == "gpt2",
            ),
        )
        model.enable_input_require_grads()
    if checkpointing:
        kwargs = {"use_reentrant": False, **({"context_fn": cuda_autocast.checkpoint_contexts} if autocast else {})}
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    model.train()
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    layers = layers_of(model)
    region = {"name": "embed"}

    for idx, layer in enumerate(layers):
        layer.register_forward_pre_hook(lambda _m, _a, idx=idx: region.update(name=f"layer{idx}"))
        layer.register_forward_hook(
            lambda _m, _a, _o, idx=idx: region.update(name="head" if idx == len(layers) - 1 else region["name"])
        )

    seen: dict[int, tuple[str, int]] = {}
    # Full training under autocast: its weights' 16-bit copies are model states; LoRA rows keep the adapters' copies in
    # their layers (activations.test.ts adds them to the plan).
    full_mixed = autocast and not lora

    def pack(t: torch.Tensor):
        st = t.untyped_storage()
        key = st.data_ptr()
        if key not in params and key not in seen:
            copy = full_mixed and is_weight_copy(t, params)
            seen[key] = ("weightCopies" if copy else region["name"], st.nbytes())
        return t

    ids = torch.randint(0, v, (batch, seq))
    # Mixed precision as the runtime trains under plain DDP: CUDA's autocast to bf16 around the step.
    mixed = cuda_autocast.cuda_autocast() if autocast else contextlib.nullcontext()
    with mixed:
        with saved_tensors_hooks(pack, lambda t: t):
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()
    per_region: dict[str, int] = {}
    for name, nbytes in seen.values():
        per_region[name] = per_region.get(name, 0) + nbytes
    inner = [per_region.get(f"layer{k}", 0) for k in range(1, len(layers))]
    return {
        "family": family,
        "hidden": h,
        **widths(family, shape),
        "vocab": v,
        "batch": batch,
        "seq": seq,
        "checkpointing": checkpointing,
        "lora": lora,
        **(
            {"loraTargets": kind, "loraHead": head, "loraDropout": dropout}
            if lora and variant != ("default", False, 0.0)
            else {}
        ),
        **({"autocast": True} if autocast else {}),
        **({"qlora": True} if qlora else {}),
        **({"attention": attention} if attention != "sdpa" else {}),
        "layerBytes": inner,
        "layerBytesPerToken": sum(inner) / len(inner) / (batch * seq),
        "headBytes": per_region.get("head", 0),
        "embedBytes": per_region.get("embed", 0),
        "layer0Bytes": per_region.get("layer0", 0),
        # Autocast's 16-bit copies of trainable fp32 weights: model states (model-states.ts), not activations.
        **(
            {
                "weightCopyBytes": per_region.get("weightCopies", 0),
                "parameters": sum(p.numel() for p in model.parameters()),
            }
            if full_mixed
            else {}
        ),
        # Every saved byte of the step (layers, embeddings, head). With checkpointing the per-region split is not
        # meaningful (a checkpoint saves its layer's input before the layer's hooks run), the total is.
        "totalBytes": sum(n for name, n in per_region.items() if name != "weightCopies"),
        "layers": len(layers),
    }


def main() -> None:
    rows = []
    for family in FAMILIES:
        for shape in SHAPES:
            for checkpointing in (False, True):
                for lora in (False, True):
                    for batch, seq in ((1, 64), (2, 128)):
                        rows.append(measure(family, shape, batch, seq, checkpointing, lora))
    for family in ("llama", "qwen2", "gemma"):
        for shape in SHAPES:
            for variant in LORA_VARIANTS:
                for batch, seq in ((1, 64), (2, 128)):
                    rows.append(measure(family, shape, batch, seq, False, True, variant))
    # LoRA under mixed precision (autocast): the adapters' matmuls save 16-bit copies of their inputs.
    for family in ("llama", "qwen2", "gemma"):
        for shape in SHAPES:
            for variant in AUTOCAST_VARIANTS:
                for batch, seq in ((1, 64), (2, 128)):
                    rows.append(measure(family, shape, batch, seq, False, True, variant, autocast=True))
    # Full training under mixed precision as the runtime trains it on plain DDP: fp32 weights, CUDA's autocast, so the
    # residual stream between the 16-bit matmuls runs in fp32.
    for family in FAMILIES:
        for shape in SHAPES:
            for checkpointing in (False, True):
                for batch, seq in ((1, 64), (2, 128)):
                    rows.append(measure(family, shape, batch, seq, checkpointing, False, autocast=True))
    # LoRA under mixed precision on the GPT-style and BERT blocks, whose LayerNorms and GELUs CUDA's autocast runs in fp32.
    for family in ("bert", "gpt2", "gpt_neox", "phi", "bloom", "falcon", "falcon_new"):
        for shape in SHAPES:
            for variant in (("default", False, 0.0), ("all-linear", False, 0.0)):
                for batch, seq in ((1, 64), (2, 128)):
                    rows.append(measure(family, shape, batch, seq, False, True, variant, autocast=True))
    # QLoRA as the runtime builds it (PEFT's fp32 upcast kept), under autocast as the runtime trains it: every family
    # bitsandbytes quantizes (not Falcon's two layouts, whose FalconLinear it leaves in 16 bit), with and without
    # checkpointing, and every linear layer with dropout on the Llama-style three.
    for family in (f for f in FAMILIES if f not in FALCONS):
        for shape in SHAPES:
            for checkpointing in (False, True):
                for batch, seq in ((1, 64), (2, 128)):
                    rows.append(measure(family, shape, batch, seq, checkpointing, True, autocast=True, qlora=True))
    for family in ("llama", "qwen2", "gemma"):
        for shape in SHAPES:
            for batch, seq in ((1, 64), (2, 128)):
                variant = ("all-linear", False, 0.1)
                rows.append(measure(family, shape, batch, seq, False, True, variant, autocast=True, qlora=True))
    # Falcon's eager attention, full and LoRA: beside its SDPA (Falcon-7B: PyTorch's math kernel; the new decoder: a
    # fused kernel handed the causal mask), it keeps other tensors.
    for family in FALCONS:
        for autocast in (False, True):
            for shape in SHAPES:
                for lora in (False, True):
                    for batch, seq in ((1, 64), (2, 128)):
                        rows.append(
                            measure(family, shape, batch, seq, False, lora, autocast=autocast, attention="eager")
                        )
    json.dump(
        {
            "about": "Bytes saved for backward by autograd (saved_tensors_hooks, unique storages, parameters excluded), "
            "bf16 weights (fp32 for full training under autocast), SDPA attention (BLOOM: eager, its only one; "
            "rows with an attention field say so), "
            "model dropout 0 (LoRA dropout as stated), on CPU; autocast rows under CUDA's autocast policy "
            "(calibration/cuda_autocast.py). Produced by calibration/measure_activations.py.",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            "rows": rows,
        },
        sys.stdout,
        indent=1,
    )


if __name__ == "__main__":
    main()
