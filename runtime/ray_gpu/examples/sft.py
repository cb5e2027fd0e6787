"""LoRAFineTune example: supervised fine-tuning with PEFT LoRA adapters (QLoRA: 4-bit NF4 base weights) on
text or vision-language models, with the planned rank, alpha, target modules, batch and checkpointing.

    python -m ray_gpu.examples.sft --data s3://bucket/sft/     # on the cluster (GPU; QLoRA needs bitsandbytes;
                                                                # vision-language rows: image bytes and text)
    python -m ray_gpu.examples.sft --smoke                      # CPU, tiny model, LoRA without quantization
"""

from __future__ import annotations

import functools
import io
import math
from typing import Any

import ray_gpu
from ray_gpu.examples import common, driver


def build(model: str, family: str, lora: dict[str, Any], smoke: bool, gradient_checkpointing: bool, attn: str) -> Any:
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, BitsAndBytesConfig

    if smoke or lora["quantization"] == "none":
        base = common.causal_lm(model, family, smoke, frozen_base=True, attn=attn)
    else:
        quant = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=lora["quantization"] == "nf4-double",
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        cls = AutoModelForImageTextToText if common.model_type(family) == "qwen2_vl" else AutoModelForCausalLM
        base = common.keep_unquantized_in(
            prepare_model_for_kbit_training(
                cls.from_pretrained(model, quantization_config=quant, attn_implementation=attn),
                use_gradient_checkpointing=gradient_checkpointing,
            ),
            lora["unquantized_precision"],
        )
    config = LoraConfig(
        r=lora["r"],
        lora_alpha=lora["lora_alpha"],
        target_modules=lora["target_modules"],
        lora_dropout=lora["lora_dropout"],
        task_type="CAUSAL_LM",
    )
    return get_peft_model(base, config)


def with_images(model: Any, batch: Any) -> Any:
    """Smoke: prepends random images. Full scale: flattens each row's image patches the way Qwen2-VL takes them."""
    if "pixel_values" not in batch:
        inner = model.module if hasattr(model, "module") else model
        batch = common.add_smoke_images(inner.config, batch)
    else:
        batch["pixel_values"] = batch["pixel_values"].flatten(0, 1)
    # Only text tokens are targets: padding and image tokens carry no loss.
    labels = batch["input_ids"].masked_fill((batch["attention_mask"] == 0) | (batch["mm_token_type_ids"] == 1), -100)
    return {**batch, "labels": labels}


@functools.lru_cache(maxsize=1)
def _processor(model: str) -> Any:
    from transformers import AutoProcessor

    return AutoProcessor.from_pretrained(model)


def vision_language_rows(model: str, image_tokens: int, text_tokens: int) -> Any:
    """Ray Data preprocessing of (image bytes, text) rows, one image per row: every image resized to the planned token count
    (one LLM token per 28 x 28 px after Qwen2-VL's 2 x 2 merge), so rows have one shape and batch together."""
    side = max(1, math.isqrt(image_tokens)) * 28

    def rows(batch: dict[str, Any]) -> dict[str, Any]:
        from PIL import Image

        processor = _processor(model)
        images = [Image.open(io.BytesIO(b)).convert("RGB").resize((side, side)) for b in batch["image"]]
        # Text is cut to the planned tokens first, so image tokens are never truncated and every row has one length.
        texts = [
            processor.tokenizer.decode(
                processor.tokenizer(t, truncation=True, max_length=text_tokens)["input_ids"], skip_special_tokens=True
            )
            for t in batch["text"]
        ]
        chats = [[{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": t}]}] for t in texts]
        prompts = [processor.apply_chat_template(c, tokenize=False) for c in chats]
        out = processor(
            text=prompts,
            images=images,
            padding="max_length",
            max_length=text_tokens + image_tokens + 32,
            return_tensors="np",
            return_mm_token_type_ids=True,
        )
        n = len(images)
        return {
            "input_ids": out["input_ids"],
            "attention_mask": out["attention_mask"],
            "mm_token_type_ids": out["mm_token_type_ids"],
            "pixel_values": out["pixel_values"].reshape(n, -1, out["pixel_values"].shape[-1]),
            "image_grid_thw": out["image_grid_thw"],
        }

    return rows


def main() -> None:
    args = driver.finish_arguments(common.arguments(__doc__.splitlines()[0], driver.add_training_arguments))
    tuning = ray_gpu.load(args.tuning)
    lora = tuning.lora_config_kwargs()
    if args.smoke and lora["quantization"] != "none":
        lora["quantization"] = tuning.stand_in(
            "lora.quantization",
            "quantization",
            "none",
            "4-bit base weights need bitsandbytes on a GPU: LoRA on unquantized weights",
        )
    model, family, smoke = tuning.model, tuning.model_family, args.smoke
    checkpointing = bool(tuning.knobs.get("gradientCheckpointing"))
    attn = common.attention(tuning)
    vl = tuning.model_type == "vision-language"
    if vl and common.model_type(family) != "qwen2_vl":
        raise SystemExit(
            f"this example handles Qwen2-VL image inputs; {model} ({family}) needs its own processor code in vision_language_rows"
        )
    dataset: dict[str, Any] = {}
    if vl:
        # Full scale reads parquet rows with an encoded image (bytes) and its text.
        image_tokens = tuning.document["lora"].get("imageTokensPerSample") or 1024
        dataset = {
            "columns": ("image", "text"),
            "preprocess": vision_language_rows(model, image_tokens, tuning.knobs["sequenceLength"]),
        }
    driver.run(
        args,
        tuning,
        build_model=lambda: build(model, family, lora, smoke, checkpointing, attn),
        prepare_batch=with_images if vl else (lambda _m, b: b),
        save_all=False,
        **dataset,
    )


if __name__ == "__main__":
    main()
