"""Measure what eager attention, attention dropout and hidden dropout add to training activations, and the peak
working set of encoder inference, on CPU with real transformers models (random weights, no download).

- ``training`` rows: bytes autograd saves for backward per layer and token (``saved_tensors_hooks``, unique storages,
  parameters excluded, as in measure_activations.py), for eager and SDPA attention with and without dropout.
  On CPU, SDPA with dropout runs PyTorch's math kernel, which keeps the probabilities; on a GPU the flash and
  memory-efficient kernels apply dropout inside the kernel and keep nothing extra, so SDPA rows use dropout 0.
- ``inference`` rows: peak bytes of tensors alive at once during a ``no_grad`` forward of an encoder (ray_gpu.live_bytes,
  the CPU analog of ``torch.cuda.max_memory_allocated``), weights and inputs excluded, with an all-ones padding mask.

Usage: PYTHONPATH=runtime python calibration/measure_attention.py > test/data/attention-calibration.json
"""

from __future__ import annotations

import json
import platform
import sys

import torch
import transformers
from measure_activations import layers_of
from torch.autograd.graph import saved_tensors_hooks

from ray_gpu.live_bytes import LiveBytes

torch.manual_seed(0)


def decoder(family: str, h: int, i: int, heads: int, v: int, attn_drop: float):
    kw = dict(
        hidden_size=h,
        intermediate_size=i,
        num_hidden_layers=3,
        num_attention_heads=heads,
        vocab_size=v,
        max_position_embeddings=1024,
        attention_dropout=attn_drop,
    )
    if family == "llama":
        return transformers.LlamaConfig(**kw, num_key_value_heads=heads // 2, head_dim=h // heads)
    return transformers.GemmaConfig(**kw, num_key_value_heads=heads, head_dim=h // heads)


def encoder(family: str, h: int, i: int, heads: int, v: int, attn_drop: float, hidden_drop: float):
    cls = {"bert": transformers.BertConfig, "mpnet": transformers.MPNetConfig}[family]
    return cls(
        hidden_size=h,
        intermediate_size=i,
        num_hidden_layers=3,
        num_attention_heads=heads,
        vocab_size=v,
        max_position_embeddings=1024,
        attention_probs_dropout_prob=attn_drop,
        hidden_dropout_prob=hidden_drop,
    )


def model_for(family: str, cfg, impl: str, training: bool):
    cfg._attn_implementation = impl
    if family in ("llama", "gemma"):
        return transformers.AutoModelForCausalLM.from_config(cfg)
    if training:
        return transformers.AutoModelForSequenceClassification.from_config(cfg)
    return transformers.AutoModel.from_config(cfg)


def saved_per_layer_token(model, batch: int, seq: int, vocab: int, causal: bool) -> float:
    """Mean saved bytes of the inner layers, per token."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    layers = layers_of(model)
    region = {"name": "embed"}
    for idx, layer in enumerate(layers):
        layer.register_forward_pre_hook(lambda _m, _a, idx=idx: region.update(name=f"layer{idx}"))
        layer.register_forward_hook(lambda _m, _a, _o: region.update(name="after"))
    seen: dict[int, tuple[str, int]] = {}

    def pack(t: torch.Tensor):
        st = t.untyped_storage()
        if st.data_ptr() not in params and st.data_ptr() not in seen:
            seen[st.data_ptr()] = (region["name"], st.nbytes())
        return t

    ids = torch.randint(0, vocab, (batch, seq))
    model.train()
    with saved_tensors_hooks(pack, lambda t: t):
        if causal:
            loss = model(input_ids=ids, labels=ids).loss
        else:
            loss = model(
                input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.zeros(batch, dtype=torch.long)
            ).loss
    loss.backward()
    inner = [sum(n for r, n in seen.values() if r == f"layer{k}") for k in range(1, len(layers))]
    return sum(inner) / len(inner) / (batch * seq)


def training_rows() -> list[dict]:
    rows = []
    cases = [("llama", 0.0), ("llama", 0.1), ("gemma", 0.0), ("bert", 0.1), ("bert", 0.0), ("mpnet", 0.1)]
    for family, drop in cases:
        for h, i, heads in ((128, 512, 4), (256, 768, 8)):
            for impl in ("eager", "sdpa"):
                if impl == "sdpa" and (drop > 0 or family == "mpnet"):
                    continue  # see the module docstring; MPNet has no SDPA path
                for batch, seq in ((1, 64), (2, 128)):
                    causal = family in ("llama", "gemma")
                    cfg = (
                        decoder(family, h, i, heads, 512, drop)
                        if causal
                        else encoder(family, h, i, heads, 512, drop, drop)
                    )
                    model = model_for(family, cfg, impl, True).to(torch.bfloat16)
                    rows.append(
                        {
                            "family": family,
                            "attention": impl,
                            "attentionDropout": drop,
                            "hiddenDropout": 0.0 if causal else drop,
                            "hidden": h,
                            "intermediate": i,
                            "heads": heads,
                            "kvHeads": heads // 2 if family == "llama" else heads,
                            "batch": batch,
                            "seq": seq,
                            "layerBytesPerToken": saved_per_layer_token(model, batch, seq, 512, causal),
                        }
                    )
    return rows


def forward_peak(model, ids: torch.Tensor, mask: torch.Tensor) -> int:
    """Peak bytes a ``no_grad`` forward allocates beyond what existed before it: ``LiveBytes`` on CPU; on a GPU the
    allocator's peak, after a first forward has made cuBLAS's workspace (which the plan counts apart)."""
    if ids.device.type == "cpu":
        probe = LiveBytes()
        with torch.no_grad(), probe:
            model(input_ids=ids, attention_mask=mask)
        return probe.peak
    with torch.no_grad():
        model(input_ids=ids, attention_mask=mask)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        model(input_ids=ids, attention_mask=mask)
        torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


def inference_rows(device: str = "cpu") -> list[dict]:
    rows = []
    for family in ("bert", "mpnet"):
        for h, i, heads in ((128, 512, 4), (256, 1024, 8)):
            for impl in ("eager", "sdpa"):
                if impl == "sdpa" and family == "mpnet":
                    continue
                model = (
                    model_for(family, encoder(family, h, i, heads, 512, 0.1, 0.1), impl, False)
                    .to(device, torch.bfloat16)
                    .eval()
                )
                for batch, seq in ((1, 64), (4, 64), (4, 128), (8, 256)):
                    ids = torch.randint(0, 512, (batch, seq), device=device)
                    rows.append(
                        {
                            "family": family,
                            "attention": impl,
                            "hidden": h,
                            "intermediate": i,
                            "heads": heads,
                            "batch": batch,
                            "seq": seq,
                            "peakBytes": forward_peak(model, ids, torch.ones_like(ids)),
                        }
                    )
    return rows


def main() -> None:
    json.dump(
        {
            "about": "Produced by calibration/measure_attention.py: saved-for-backward bytes per layer and token (training, "
            "bf16) and peak live bytes of no_grad encoder forwards (inference, bf16), on CPU.",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            "training": training_rows(),
            "inference": inference_rows(),
        },
        sys.stdout,
        indent=1,
    )


if __name__ == "__main__":
    main()
