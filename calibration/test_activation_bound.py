"""Safety property of the memory planner: for random architectures and settings, the bytes autograd really saves for
backward (a tiny transformers model run on CPU, every saved tensor counted once) never exceed the planner's activation
and logits terms (core/memory/estimate.ts ``activationBytes``, core/memory/loss.ts ``logitsBytes``), asked through
calibration/planner_bridge.mjs. Hypothesis draws the cases from a fixed seed, so a run is reproducible.

SDPA with attention dropout is left out: on a GPU its kernels keep nothing extra, while PyTorch's CPU math kernel keeps
the probabilities, so the CPU cannot stand in for that case."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ray_gpu.live_bytes import saved_tensor_bytes

ROOT = Path(__file__).resolve().parent.parent
LORA_TARGETS = {"bert": ["query", "value"]}


@pytest.fixture(scope="module")
def planner():
    if not (ROOT / "dist/core/memory/estimate.js").exists():
        pytest.fail("dist/ is missing: run npm run build (npm ci does) before this test")
    proc = subprocess.Popen(["node", str(ROOT / "calibration/planner_bridge.mjs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(request: dict) -> dict:
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    yield ask
    proc.kill()


@st.composite
def cases(draw):
    family = draw(st.sampled_from(["llama", "qwen2", "gemma", "bert"]))
    heads = draw(st.sampled_from([2, 4, 8]))
    head_dim = draw(st.sampled_from([8, 16, 32]))
    kv = draw(st.sampled_from([h for h in (1, 2, heads) if heads % h == 0])) if family != "bert" else heads
    attention = draw(st.sampled_from(["eager", "sdpa"]))
    dropout = draw(st.sampled_from([0.0, 0.1])) if attention == "eager" else 0.0
    return {
        "family": family, "heads": heads, "headDim": head_dim, "kvHeads": kv, "hidden": heads * head_dim,
        "intermediate": draw(st.integers(32, 384)), "vocab": draw(st.sampled_from([128, 512, 1000])),
        "layers": draw(st.integers(1, 3)), "attention": attention, "dropout": dropout,
        "checkpointing": draw(st.booleans()), "lora": draw(st.booleans()), "batch": draw(st.integers(1, 3)), "seq": draw(st.integers(8, 160)),
    }


def build(c: dict) -> torch.nn.Module:
    common = dict(hidden_size=c["hidden"], intermediate_size=c["intermediate"], num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                  vocab_size=c["vocab"], max_position_embeddings=512)
    if c["family"] == "bert":
        cfg = transformers.BertConfig(**common, attention_probs_dropout_prob=c["dropout"], hidden_dropout_prob=c["dropout"])
        cls = transformers.BertForMaskedLM
    else:
        config_cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config, "gemma": transformers.GemmaConfig}[c["family"]]
        cfg = config_cls(**common, num_key_value_heads=c["kvHeads"], head_dim=c["headDim"], attention_dropout=c["dropout"], tie_word_embeddings=False)
        cls = transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    model = cls.from_config(cfg, attn_implementation=c["attention"]).to(torch.bfloat16) if cls is transformers.AutoModelForCausalLM else cls(cfg).to(torch.bfloat16)
    if cls is not transformers.AutoModelForCausalLM:
        model.config._attn_implementation = c["attention"]
    if c["lora"]:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=LORA_TARGETS.get(c["family"], ["q_proj", "v_proj"]), lora_dropout=0.0))
        model.enable_input_require_grads()
    if c["checkpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model.train()


def saved_bytes(model: torch.nn.Module, c: dict) -> int:
    ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]))
    return saved_tensor_bytes(model, lambda: model(input_ids=ids, labels=ids).loss)


def request(c: dict) -> dict:
    encoder = c["family"] == "bert"
    return {
        "model": {
            "family": c["family"], "type": "encoder-embedding" if encoder else "decoder-llm",
            "mlp": {"gemma": "geglu", "bert": "gelu"}.get(c["family"], "swiglu"), "parameters": 0, "largestLayerParameters": 0,
            "layers": c["layers"], "hiddenSize": c["hidden"], "attentionHeads": c["heads"], "kvHeads": c["kvHeads"], "headDim": c["headDim"],
            "intermediateSize": c["intermediate"], "vocabSize": c["vocab"], "tiedEmbeddings": False, "source": "property test",
            "attention": {"implementations": ["sdpa", "eager"], "attentionDropout": c["dropout"], "hiddenDropout": c["dropout"] if encoder else 0,
                          "softmaxInFp32": not encoder, "relativePositionBias": False},
        },
        "precision": "bf16-true", "microBatchSize": c["batch"], "tokensPerSample": c["seq"], "gradientCheckpointing": c["checkpointing"],
        "attention": c["attention"],
        **({"lora": {"rank": 4, "targetModules": LORA_TARGETS.get(c["family"], ["q_proj", "v_proj"])}} if c["lora"] else {}),
    }


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_planned_activations_never_below_saved_tensors(planner, c: dict) -> None:
    measured = saved_bytes(build(c), c)
    planned = planner(request(c))
    bound = planned["activations"] + planned["logits"]
    assert measured <= bound, f"{c}: autograd saved {measured} bytes, the planner allows {bound}"
