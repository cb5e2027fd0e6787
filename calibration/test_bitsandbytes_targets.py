"""Which linear layers transformers' bitsandbytes integration quantizes, as the pinned transformers decides it: its own
``replace_with_bnb_linear`` over tiny Llama, BLOOM and Falcon (both layouts) models on the meta device. bitsandbytes needs a GPU, so
its module classes are stand-ins here; the replacement rule (``Conv1D`` or exactly ``nn.Linear``) is transformers'.
The planner refuses QLoRA where no block layer would be quantized (core/memory/lora.ts ``quantizable``, asked here of the
compiled planner: npm run build writes dist/)."""

from __future__ import annotations

import json
import subprocess
import types

import pytest
import torch
import transformers
import transformers.integrations.bitsandbytes as integration
from conftest import ROOT
from test_activation_bound import FALCONS, GPT_BLOCKS
from tiny_families import FAMILIES as TINY


class Linear4bit(torch.nn.Linear):
    """Stands in for ``bnb.nn.Linear4bit``: the same constructor's first three arguments."""

    def __init__(self, in_features: int, out_features: int, bias: bool, *_args, **_kwargs) -> None:
        super().__init__(in_features, out_features, bias)


#: Families checked, built from the calibration's tiny configs (calibration/tiny_families.py) at one width.
FAMILIES = ("llama", "bloom", *FALCONS)


def planner_quantizes(family: str) -> bool:
    """Whether the planner (the compiled core/memory/lora.ts ``quantizable``) lets QLoRA quantize the family."""
    # The planner's layout of the family (Llama has none: it is not a GPT-style block).
    model = {"gptBlock": GPT_BLOCKS[family]} if family in GPT_BLOCKS else {}
    call = f"require('./dist/core/memory/lora.js').quantizable({json.dumps(model)})"
    answer = subprocess.run(["node", "-p", call], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(answer.stdout)


@pytest.mark.parametrize("family", FAMILIES)
def test_block_layers_quantized_as_the_planner_says(monkeypatch, family: str) -> None:
    # The module imports bitsandbytes as ``bnb`` only where it is installed; the stand-in takes its place.
    stand_in = types.SimpleNamespace(nn=types.SimpleNamespace(Linear4bit=Linear4bit))
    monkeypatch.setattr(integration, "bnb", stand_in, raising=False)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(TINY[family](64, 256, 16, 64))
    config = transformers.BitsAndBytesConfig(load_in_4bit=True)
    integration.replace_with_bnb_linear(model, modules_to_not_convert=["lm_head"], quantization_config=config)
    blocks = [(name, m) for name, m in model.named_modules() if isinstance(m, torch.nn.Linear) and name != "lm_head"]
    linear = {name: type(m) for name, m in blocks}
    assert linear, f"{family}: no linear layers found"
    quantized = {name for name, cls in linear.items() if cls is Linear4bit}
    expected = set(linear) if planner_quantizes(family) else set()
    assert quantized == expected, f"{family}: quantized {sorted(quantized)} of {sorted(linear)}"
