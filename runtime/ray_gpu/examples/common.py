"""Shared parts of the example entrypoints: arguments, models (pretrained, or tiny and random for --smoke),
tokenizers, and synthetic data for smoke runs. Not part of the runtime contract; copy what you need."""

from __future__ import annotations

import argparse
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

#: Hugging Face ``model_type`` of each catalog family, for the tiny smoke models.
MODEL_TYPES = {
    "llama-2": "llama",
    "llama-3.1": "llama",
    "llama-3.2": "llama",
    "mistral": "mistral",
    "qwen2.5": "qwen2",
    "gemma": "gemma",
    "gemma-2": "gemma2",
    "phi-3": "phi3",
    "qwen2-vl": "qwen2_vl",
    "bge-v1.5": "bert",
    "bge-m3": "xlm-roberta",
    "e5-v2": "bert",
    "multilingual-e5": "xlm-roberta",
    "sentence-transformers": "bert",
    "nomic-embed": "bert",
    "llava-1.5": "llava",
}
SMOKE_VOCAB = 512
SMOKE_HIDDEN = 64


def arguments(description: str, extra: Callable[[argparse.ArgumentParser], object] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="CPU smoke run: tiny random model of the same family, a few thousand synthetic rows",
    )
    parser.add_argument("--tuning", default=None, help="tuning file (default: $RAY_GPU_TUNING_FILE)")
    if extra:
        extra(parser)
    import ray_gpu

    ray_gpu.log_to_stdout()  # the job log shows every applied value
    return parser.parse_args()


def read_dataset(fmt: str, uri: str, **kwargs: Any) -> Any:
    """``ray.data.read_*`` for a tuning file's ``data.format`` (parquet, jsonl, csv, text)."""
    import ray.data

    readers: dict[str, Callable[..., Any]] = {
        "parquet": ray.data.read_parquet,
        "jsonl": ray.data.read_json,
        "csv": ray.data.read_csv,
        "text": ray.data.read_text,
    }
    return readers[fmt](uri, **kwargs)


def ids_of(batch: dict[str, Any]) -> dict[str, Any]:
    """The row ids, when the dataset has an ``id`` column (outputs then join back to inputs)."""
    return {"id": batch["id"]} if "id" in batch else {}


def model_type(family: str) -> str:
    return MODEL_TYPES.get(family, "llama")


def tiny_config(family: str) -> Any:
    """A two-layer random config of the model's family (no download)."""
    from transformers import AutoConfig

    kind = model_type(family)
    common = dict(
        vocab_size=SMOKE_VOCAB,
        hidden_size=SMOKE_HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
    )
    if kind == "qwen2_vl":
        text = dict(
            common,
            bos_token_id=1,
            eos_token_id=2,
            num_key_value_heads=2,
            max_position_embeddings=4096,
            rope_scaling={"type": "mrope", "mrope_section": [2, 2, 4]},
        )
        vision = dict(
            depth=1,
            embed_dim=32,
            num_heads=2,
            hidden_size=SMOKE_HIDDEN,
            mlp_ratio=2,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            in_channels=3,
        )
        return AutoConfig.for_model(
            "qwen2_vl",
            text_config=text,
            vision_config=vision,
            image_token_id=SMOKE_VOCAB - 1,
            vision_start_token_id=SMOKE_VOCAB - 2,
            vision_end_token_id=SMOKE_VOCAB - 3,
        )
    if kind in ("bert", "xlm-roberta"):
        return AutoConfig.for_model(kind, **common, max_position_embeddings=512)
    return AutoConfig.for_model(kind, **common, num_key_value_heads=2, max_position_embeddings=4096, head_dim=16)


def attention(tuning: Any) -> str:
    """The planned ``attn_implementation``; FlashAttention-2 needs a GPU and the flash-attn package, so CPU runs use SDPA."""
    import torch

    planned = str(tuning.attn_implementation())
    if planned == "flash_attention_2" and not torch.cuda.is_available():
        return str(
            tuning.stand_in(
                "knobs.attentionImplementation",
                "attn_implementation",
                "sdpa",
                "FlashAttention-2 needs a GPU: SDPA on CPU",
            )
        )
    return planned


def causal_lm(
    model: str, family: str, smoke: bool, frozen_base: bool = False, attn: str = "sdpa", dtype: Any = None
) -> Any:
    """The model to train or serve, with the planned attention kernel: pretrained weights, or a tiny random one of the
    same family for --smoke. Full training loads its weights in ``dtype`` (the planned precision's,
    ``precision.weights_dtype``; fp32 by default); LoRA's frozen base loads in bf16."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

    vl = model_type(family) == "qwen2_vl"
    cls = AutoModelForImageTextToText if vl else AutoModelForCausalLM
    if smoke:
        torch.manual_seed(0)
        return cls.from_config(tiny_config(family), attn_implementation=attn)
    # LoRA keeps frozen bf16 base weights; full training keeps fp32 master weights (DeepSpeed or autocast compute in bf16)
    # unless the plan trains in pure bf16.
    weights = torch.bfloat16 if frozen_base else (dtype or torch.float32)
    return cls.from_pretrained(model, dtype=weights, attn_implementation=attn)


def keep_unquantized_in(model: Any, precision: str) -> Any:
    """The parameters QLoRA leaves unquantized (embeddings, norms, the LM head, biases) in the planned precision.

    PEFT's ``prepare_model_for_kbit_training`` casts every 16-bit parameter that is not 4-bit to fp32, so the residual
    stream between the 4-bit layers runs in fp32 too (bitsandbytes returns each layer's output in its input's dtype).
    "fp32" keeps that; "bf16" casts those parameters back, as DeepSpeed's bf16 engine does under ZeRO, and the stream
    stays in 16 bit (the memory plan counts either). The adapters PEFT adds afterwards are fp32 either way."""
    import torch

    if precision == "bf16":
        for param in model.parameters():
            if param.dtype == torch.float32 and param.__class__.__name__ != "Params4bit":
                param.data = param.data.to(torch.bfloat16)
    return model


class HashTokenizer:
    """Smoke-run tokenizer: words hashed into a small vocabulary (vectorised, no download)."""

    def __init__(self, vocab: int = SMOKE_VOCAB, reserved: int = 4):
        self.vocab, self.reserved = vocab, reserved

    def __call__(self, texts: list[str], max_length: int) -> dict[str, np.ndarray]:
        rows = [
            [self.reserved + (zlib.crc32(w.encode()) % (self.vocab - 2 * self.reserved)) for w in t.split()][
                :max_length
            ]
            for t in texts
        ]
        width = max_length  # fixed width, so rows from different blocks batch together
        ids: Any = np.zeros((len(rows), width), dtype=np.int64)
        mask: Any = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
        return {"input_ids": ids, "attention_mask": mask}


def tokenizer(model: str, smoke: bool) -> Any:
    if smoke:
        return HashTokenizer()
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    return lambda texts, max_length: tok(
        texts, max_length=max_length, truncation=True, padding="max_length", return_tensors="np"
    )


WORDS = np.array(
    [
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "was",
        "for",
        "on",
        "that",
        "with",
        "as",
        "by",
        "at",
        "from",
        "this",
        "are",
        "be",
        "or",
        "an",
        "which",
        "have",
        "it",
        "not",
        "has",
        "were",
    ]
)


def synthetic_texts(start: int, count: int, words_per_row: int, seed: int = 0) -> list[str]:
    """Deterministic synthetic text rows ``start .. start+count``."""
    rng = np.random.default_rng(seed + start)
    picks = rng.integers(0, len(WORDS), size=(count, words_per_row))
    return [" ".join(WORDS[row]) + f" row{start + i}" for i, row in enumerate(picks)]


#: Smoke images: a 4 x 4 grid of 14 px patches, merged 2 x 2 into 4 LLM tokens per image.
SMOKE_IMAGE_GRID = (1, 4, 4)


def add_smoke_images(config: Any, batch: dict[str, Any]) -> dict[str, Any]:
    """Prepends one random image per sample to a Qwen2-VL batch: vision tokens in ``input_ids``, patches in ``pixel_values``."""
    import torch

    t, h, w = SMOKE_IMAGE_GRID
    merge = config.vision_config.spatial_merge_size
    tokens = t * h * w // (merge * merge)
    ids, mask = batch["input_ids"], batch["attention_mask"]
    n = ids.shape[0]
    vision = torch.tensor(
        [config.vision_start_token_id] + [config.image_token_id] * tokens + [config.vision_end_token_id]
    ).repeat(n, 1)
    patch = 3 * config.vision_config.temporal_patch_size * config.vision_config.patch_size**2
    input_ids = torch.cat([vision, ids], dim=1)
    return {
        "input_ids": input_ids,
        # 1 marks image tokens: Qwen2-VL's multimodal RoPE needs it (its processor returns the same).
        "mm_token_type_ids": (input_ids == config.image_token_id).int(),
        "attention_mask": torch.cat([torch.ones_like(vision), mask], dim=1),
        "pixel_values": torch.randn(n * t * h * w, patch),
        "image_grid_thw": torch.tensor([[t, h, w]] * n),
    }
