"""LoRAFineTune example: supervised fine-tuning with PEFT LoRA adapters (QLoRA: 4-bit NF4 base weights) on
text or vision-language models, with the planned rank, alpha, target modules, batch and checkpointing.

    python -m ray_gpu.examples.sft --data s3://bucket/sft/     # on the cluster (GPU; QLoRA needs bitsandbytes)
    python -m ray_gpu.examples.sft --smoke                      # CPU, tiny model, LoRA without quantization
"""
from __future__ import annotations

from typing import Any

import ray_gpu
from ray_gpu.examples import common, loop
from ray_gpu.tuning import log


def build(model: str, family: str, lora: dict[str, Any], smoke: bool, gradient_checkpointing: bool) -> Any:
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText, BitsAndBytesConfig

    if smoke or lora["quantization"] == "none":
        base = common.causal_lm(model, family, smoke)
    else:
        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=lora["quantization"] == "nf4-double", bnb_4bit_compute_dtype=torch.bfloat16)
        cls = AutoModelForImageTextToText if common.model_type(family) == "qwen2_vl" else AutoModelForCausalLM
        base = prepare_model_for_kbit_training(cls.from_pretrained(model, quantization_config=quant), use_gradient_checkpointing=gradient_checkpointing)
    config = LoraConfig(r=lora["r"], lora_alpha=lora["lora_alpha"], target_modules=lora["target_modules"], lora_dropout=0.05, task_type="CAUSAL_LM")
    return get_peft_model(base, config)


def with_images(model: Any, batch: Any) -> Any:
    inner = model.module if hasattr(model, "module") else model
    return common.add_smoke_images(inner.config, batch) if getattr(inner.config, "vision_config", None) is not None else batch


def main() -> None:
    args = loop.finish_arguments(common.arguments(__doc__.splitlines()[0], loop.add_training_arguments))
    tuning = ray_gpu.load(args.tuning)
    lora = tuning.lora_config_kwargs()
    if args.smoke and lora["quantization"] != "none":
        log.info("stand-in: %s quantization needs bitsandbytes on a GPU; the smoke run trains LoRA on unquantized base weights", lora["quantization"])
    model, family, smoke = tuning.model, tuning.model_family, args.smoke
    checkpointing = bool(tuning.knobs.get("gradientCheckpointing"))
    vl = tuning.model_type == "vision-language"
    if vl and not smoke:
        raise SystemExit("vision-language SFT at full scale needs your image dataset and processor: adapt prepare_batch (see with_images)")
    loop.run(args, tuning, build_model=lambda: build(model, family, lora, smoke, checkpointing), prepare_batch=with_images if vl else (lambda _m, b: b), save_all=False)


if __name__ == "__main__":
    main()
