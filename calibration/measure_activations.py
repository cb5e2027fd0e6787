"""Measure the bytes of activations that autograd saves for backward, per transformer layer and per token.

Reproducible calibration for the planner's activation model (core/memory/activations.ts). Tiny, randomly
initialised models of each family are built from a config (no weights are downloaded), run forward with a
causal-LM (or masked-LM) loss on CPU (on a GPU: calibration/measure_on_cuda.py), and every tensor packed by
``torch.autograd.graph.saved_tensors_hooks`` is counted once per storage (parameters excluded). Bytes are attributed
to the transformer layer, or to the "head" (final norm, LM head and loss) by module hooks. The settings measured are
calibration/activation_grid.py's.

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
from activation_grid import DEFAULT_LORA, FALCONS, Setting, configurations
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


def storage_key(t: torch.Tensor) -> tuple[str, int]:
    """A tensor's storage, by device and address (a CPU and a GPU address may coincide)."""
    return t.device.type, t.untyped_storage().data_ptr()


def is_weight_copy(t: torch.Tensor, params: set[tuple[str, int]]) -> bool:
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
    return variable is not None and storage_key(variable) in params


def lora_targets(family: str, kind: str, head: bool) -> list[str]:
    """The modules a LoRA kind adapts in a family (PEFT matches name suffixes)."""
    targets = list(LORA_TARGETS[kind].get(family, LLAMA_TARGETS[kind]))
    return targets + (["lm_head"] if head else [])


def described(setting: Setting) -> dict:
    """The fields of a row that say what was measured (the rest say what it saved)."""
    h, _, _, v = setting.shape
    kind, head, dropout = setting.variant
    return {
        "family": setting.family,
        "hidden": h,
        **widths(setting.family, setting.shape),
        "vocab": v,
        "batch": setting.batch,
        "seq": setting.seq,
        "checkpointing": setting.checkpointing,
        "lora": setting.lora,
        **(
            {"loraTargets": kind, "loraHead": head, "loraDropout": dropout}
            if setting.lora and setting.variant != DEFAULT_LORA
            else {}
        ),
        **({"autocast": True} if setting.autocast else {}),
        **({"qlora": True} if setting.qlora else {}),
        **({"attention": setting.attention} if setting.attention != "sdpa" else {}),
    }


def _mixed_precision(setting: Setting, device: str) -> contextlib.AbstractContextManager:
    """Mixed precision as the runtime trains under plain DDP: CUDA's autocast to bf16 around the step (on CPU, its
    policy emulated)."""
    if not setting.autocast:
        return contextlib.nullcontext()
    return cuda_autocast.cuda_autocast() if device == "cpu" else torch.autocast(device, dtype=torch.bfloat16)


def prepared(setting: Setting, device: str) -> torch.nn.Module:
    """The tiny model as the runtime would train it: its precision, QLoRA, LoRA and checkpointing."""
    h, i, hd, v = setting.shape
    model = build(setting.family, h, i, hd, v, setting.attention).to(device)
    # Mixed precision keeps full training's weights in fp32 (the runtime's fp32 master weights under autocast).
    model = model if setting.autocast and not setting.lora else model.to(torch.bfloat16)
    if setting.qlora:
        import kbit_standin

        model = kbit_standin.as_runtime_builds(model, upcast=True)
    if setting.lora:
        from peft import LoraConfig, get_peft_model

        kind, head, dropout = setting.variant
        targets = lora_targets(setting.family, kind, head)
        gpt2 = setting.family == "gpt2"
        config = LoraConfig(r=8, lora_alpha=16, target_modules=targets, lora_dropout=dropout, fan_in_fan_out=gpt2)
        model = get_peft_model(model, config)
        model.enable_input_require_grads()
    if setting.checkpointing:
        emulated = setting.autocast and device == "cpu"
        kwargs = {"use_reentrant": False, **({"context_fn": cuda_autocast.checkpoint_contexts} if emulated else {})}
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    return model.train()


def saved_by_region(model: torch.nn.Module, setting: Setting, device: str) -> dict[str, int]:
    """Bytes autograd saved in one step, by region: ``embed``, ``layerN``, ``head``, and under full mixed precision
    ``weightCopies``, autocast's 16-bit copies of the trainable fp32 weights (model states, not activations; LoRA rows
    keep the adapters' copies in their layers, which activations.test.ts adds to the plan)."""
    params = {storage_key(p) for p in model.parameters()}
    layers = layers_of(model)
    region = {"name": "embed"}
    for idx, layer in enumerate(layers):
        layer.register_forward_pre_hook(lambda _m, _a, idx=idx: region.update(name=f"layer{idx}"))
        layer.register_forward_hook(
            lambda _m, _a, _o, idx=idx: region.update(name="head" if idx == len(layers) - 1 else region["name"])
        )
    seen: dict[tuple[str, int], tuple[str, int]] = {}
    full_mixed = setting.autocast and not setting.lora

    def pack(t: torch.Tensor):
        key = storage_key(t)
        if key not in params and key not in seen:
            copy = full_mixed and is_weight_copy(t, params)
            seen[key] = ("weightCopies" if copy else region["name"], t.untyped_storage().nbytes())
        return t

    ids = torch.randint(0, setting.shape[3], (setting.batch, setting.seq), device=device)
    with _mixed_precision(setting, device):
        with saved_tensors_hooks(pack, lambda t: t):
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()
    per_region: dict[str, int] = {}
    for name, nbytes in seen.values():
        per_region[name] = per_region.get(name, 0) + nbytes
    return per_region


def measure(setting: Setting, device: str = "cpu") -> dict:
    """What one setting saves. On ``device="cuda"`` the model runs on the GPU, under CUDA's own autocast."""
    model = prepared(setting, device)
    per_region = saved_by_region(model, setting, device)
    layers = len(layers_of(model))
    inner = [per_region.get(f"layer{k}", 0) for k in range(1, layers)]
    full_mixed = setting.autocast and not setting.lora
    return {
        **described(setting),
        "layerBytes": inner,
        "layerBytesPerToken": sum(inner) / len(inner) / (setting.batch * setting.seq),
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
        "layers": layers,
    }


def main() -> None:
    rows = [measure(setting) for setting in configurations()]
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
