"""``examples.common.keep_unquantized_in``: what QLoRA's unquantized parameters train in after PEFT's
``prepare_model_for_kbit_training`` upcast them, as the tuning document plans it (``lora.unquantizedPrecision``)."""

from __future__ import annotations

import pytest
import torch

from ray_gpu.examples import common


class Params4bit(torch.nn.Parameter):
    """Named as bitsandbytes names its 4-bit parameter, which both PEFT and the runtime leave alone."""


def prepared_model() -> torch.nn.Module:
    """A tiny Llama in bf16 with one 4-bit-named weight, upcast by PEFT as the QLoRA path of sft.build does."""
    from peft import prepare_model_for_kbit_training

    model = common.causal_lm("tiny", "llama", smoke=True).to(torch.bfloat16)
    proj = model.model.layers[0].self_attn.q_proj
    proj.weight = Params4bit(proj.weight.data, requires_grad=False)
    return prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)


def dtypes(model: torch.nn.Module) -> dict[str, torch.dtype]:
    return {name: p.dtype for name, p in model.named_parameters()}


def test_peft_upcasts_every_16_bit_parameter_but_the_4_bit_ones() -> None:
    # The premise the memory plan's fp32 stream rests on: embeddings, norms and head become fp32.
    upcast = dtypes(prepared_model())
    four_bit = "model.layers.0.self_attn.q_proj.weight"
    assert upcast.pop(four_bit) == torch.bfloat16
    assert set(upcast.values()) == {torch.float32}
    assert {"model.embed_tokens.weight", "lm_head.weight", "model.norm.weight"} <= set(upcast)


def test_fp32_keeps_the_upcast() -> None:
    model = prepared_model()
    before = dtypes(model)
    assert dtypes(common.keep_unquantized_in(model, "fp32")) == before


def test_bf16_casts_the_upcast_parameters_back_and_keeps_the_stream_16_bit() -> None:
    model = common.keep_unquantized_in(prepared_model(), "bf16")
    assert set(dtypes(model).values()) == {torch.bfloat16}
    ids = torch.randint(0, model.config.vocab_size, (1, 8))
    hidden = model.model(input_ids=ids).last_hidden_state
    assert hidden.dtype == torch.bfloat16


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_adapters_added_afterwards_stay_fp32(precision: str) -> None:
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(
        common.keep_unquantized_in(prepared_model(), precision),
        LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]),
    )
    adapters = {p.dtype for name, p in model.named_parameters() if ".lora_" in name}
    assert adapters == {torch.float32}
