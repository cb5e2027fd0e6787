"""Safety property of the memory planner: for random architectures and settings, the bytes autograd really saves for
backward (a tiny transformers model run on CPU, every saved tensor counted once) never exceed the planner's activation
and logits terms (core/memory/estimate.ts ``activationBytes``, core/memory/loss.ts ``logitsBytes``; under mixed
precision, autocast's 16-bit weight copies too, core/memory/model-states.ts ``autocastCopyBytes``; QLoRA through
calibration/kbit_standin.py, with PEFT's fp32 upcast kept or cast back), asked through
calibration/planner_bridge.mjs. Mixed precision runs under CUDA's autocast policy (calibration/cuda_autocast.py), over
fp32 weights in full training as the runtime trains on plain DDP. Hypothesis draws the cases from a fixed seed, so a run is reproducible.

SDPA with attention dropout is left out: on a GPU its kernels keep nothing extra, while PyTorch's CPU math kernel keeps
the probabilities, so the CPU cannot stand in for that case."""

from __future__ import annotations

import contextlib

import cuda_autocast
import kbit_standin
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_families import FAMILIES as TINY
from tiny_families import GPT_NEOX_LAYOUT, PHI_LAYOUT

from ray_gpu.live_bytes import saved_tensor_bytes

#: LoRA targets per family: PEFT's defaults, and every linear layer of a block.
LORA_TARGETS = {
    "default": {
        "bert": ["query", "value"],
        "gpt_neox": ["query_key_value"],
        "phi": ["q_proj", "v_proj", "fc1", "fc2"],
        "bloom": ["query_key_value"],
        "falcon": ["query_key_value"],
        "falcon_new": ["query_key_value"],
    },
    "all-linear": {
        "bert": ["query", "key", "value", "dense"],
        "gpt_neox": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "bloom": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "falcon": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "falcon_new": ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
        "phi": ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"],
    },
}
LLAMA_TARGETS = {
    "default": ["q_proj", "v_proj"],
    "all-linear": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
}
#: GPT-style families and their block layout (the planner's gptBlock); measured with SDPA only, BLOOM with eager only
#: (the one attention it has; its MLP is 4h), Falcon's two layouts (Falcon-7B's one key/value head, the new decoder's
#: grouped ones) with both.
GPT_BLOCKS = {
    "gpt_neox": "gpt-neox",
    "phi": "phi",
    "bloom": "bloom",
    "falcon": "falcon",
    "falcon_new": "falcon-new-decoder",
}
#: Falcon's layouts: no dropout in their rotary attention, FalconLinear layers that bitsandbytes leaves in 16 bit.
FALCONS = ("falcon", "falcon_new")
#: Families with both attention implementations drawn.
BOTH_ATTENTIONS = ("llama", "qwen2", "gemma", "bert", *FALCONS)


def lora_targets(c: dict) -> list[str]:
    """A case's LoRA targets: its kind's layers of the blocks, and the LM head where the case adapts it."""
    head = ["lm_head"] if c.get("loraHead") else []
    return LORA_TARGETS[c["loraKind"]].get(c["family"], LLAMA_TARGETS[c["loraKind"]]) + head


FAMILIES = ["llama", "qwen2", "gemma", "bert", "gpt_neox", "phi", "bloom", "falcon", "falcon_new"]


@st.composite
def cases(draw, families: list[str] = FAMILIES):
    family = draw(st.sampled_from(families))
    heads = draw(st.sampled_from([2, 4, 8]))
    head_dim = draw(st.sampled_from([8, 16, 32]))
    gqa = family == "falcon_new" or family not in ("bert", *GPT_BLOCKS)
    # Falcon-7B's layout has one key/value head; BERT's and the other GPT-style blocks' heads are all key/value heads.
    single = 1 if family == "falcon" else heads
    kv = draw(st.sampled_from([h for h in (1, 2, heads) if heads % h == 0])) if gqa else single
    # BLOOM has eager attention only; GPT-NeoX and Phi are measured with SDPA.
    both = family in BOTH_ATTENTIONS
    attention = draw(st.sampled_from(["eager", "sdpa"])) if both else "eager" if family == "bloom" else "sdpa"
    # Falcon's rotary attention applies no dropout, eager or SDPA (transformers 5.18 modeling_falcon.py).
    dropped = attention == "eager" and family not in FALCONS
    dropout = draw(st.sampled_from([0.0, 0.1])) if dropped else 0.0
    return {
        "family": family,
        "heads": heads,
        "headDim": head_dim,
        "kvHeads": kv,
        "hidden": heads * head_dim,
        "intermediate": 4 * heads * head_dim if family == "bloom" else draw(st.integers(32, 384)),
        "vocab": draw(st.sampled_from([128, 512, 1000])),
        "layers": draw(st.integers(1, 3)),
        "attention": attention,
        "dropout": dropout,
        "checkpointing": draw(st.booleans()),
        "lora": draw(st.booleans()),
        "batch": draw(st.integers(1, 3)),
        "seq": draw(st.integers(8, 160)),
        "loraKind": draw(st.sampled_from(["default", "all-linear"])),
        "loraDropout": draw(st.sampled_from([0.0, 0.1])),
        # Mixed precision: the runtime's torch.autocast to bf16 around the step on plain DDP (the plan's bf16-mixed).
        "mixed": draw(st.booleans()),
        # QLoRA of a decoder as the runtime builds it (calibration/kbit_standin.py), PEFT's fp32 upcast kept or not; not
        # Falcon's layouts, whose FalconLinear layers bitsandbytes leaves in 16 bit (the planner refuses it).
        "qlora": family not in ("bert", *FALCONS) and draw(st.booleans()),
        "upcast": draw(st.booleans()),
    }


def build(c: dict) -> torch.nn.Module:
    common = dict(
        hidden_size=c["hidden"],
        intermediate_size=c["intermediate"],
        num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"],
        vocab_size=c["vocab"],
        max_position_embeddings=512,
    )
    if c["family"] == "bert":
        cfg = transformers.BertConfig(
            **common, attention_probs_dropout_prob=c["dropout"], hidden_dropout_prob=c["dropout"]
        )
        cls = transformers.BertForMaskedLM
    elif c["family"] == "gpt_neox":
        cfg = transformers.GPTNeoXConfig(**common, **GPT_NEOX_LAYOUT)
        cls = transformers.AutoModelForCausalLM
    elif c["family"] == "bloom":
        cfg = transformers.BloomConfig(
            hidden_size=c["hidden"],
            n_layer=c["layers"],
            n_head=c["heads"],
            vocab_size=c["vocab"],
            attention_dropout=c["dropout"],
            hidden_dropout=0.0,
        )
        cls = transformers.AutoModelForCausalLM
    elif c["family"] in FALCONS:
        # The calibration's tiny Falcons (no dropout in their rotary attention, so nothing else is drawn).
        cfg = TINY[c["family"]](c["hidden"], c["intermediate"], c["headDim"], c["vocab"])
        cfg.num_hidden_layers = c["layers"]
        cfg.num_kv_heads = c["kvHeads"]
        cls = transformers.AutoModelForCausalLM
    elif c["family"] == "phi":
        cfg = transformers.PhiConfig(**common, **PHI_LAYOUT)
        cls = transformers.AutoModelForCausalLM
    else:
        config_cls = {
            "llama": transformers.LlamaConfig,
            "qwen2": transformers.Qwen2Config,
            "gemma": transformers.GemmaConfig,
        }[c["family"]]
        cfg = config_cls(
            **common,
            num_key_value_heads=c["kvHeads"],
            head_dim=c["headDim"],
            attention_dropout=c["dropout"],
            tie_word_embeddings=False,
        )
        cls = transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    model = (
        cls.from_config(cfg, attn_implementation=c["attention"])
        if cls is transformers.AutoModelForCausalLM
        else cls(cfg)
    )
    # Mixed-precision full training keeps fp32 master weights; everything else loads in bf16.
    model = model if mixed(c) and not c["lora"] else model.to(torch.bfloat16)
    if cls is not transformers.AutoModelForCausalLM:
        model.config._attn_implementation = c["attention"]
    if qlora(c):
        model = kbit_standin.as_runtime_builds(model, upcast=c["upcast"])
    if c["lora"]:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(
            model, LoraConfig(r=4, lora_alpha=8, target_modules=lora_targets(c), lora_dropout=c["loraDropout"])
        )
        model.enable_input_require_grads()
    if c["checkpointing"]:
        kwargs = {"use_reentrant": False, **({"context_fn": cuda_autocast.checkpoint_contexts} if mixed(c) else {})}
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    return model.train()


def qlora(c: dict) -> bool:
    return c["lora"] and c["qlora"]


def mixed(c: dict) -> bool:
    """Mixed precision under autocast; QLoRA always, as the runtime trains it under plain DDP."""
    return c["mixed"] or qlora(c)


def saved_bytes(model: torch.nn.Module, c: dict) -> int:
    ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"]))
    autocast = cuda_autocast.cuda_autocast() if mixed(c) else contextlib.nullcontext()
    with autocast:
        return saved_tensor_bytes(model, lambda: model(input_ids=ids, labels=ids).loss)


#: What the planner's Falcon layouts add to a decoder's attention traits (core/memory/attention.ts GPT_BLOCK_TRAITS).
FALCON_TRAITS = {
    "falcon": {"unexpandedKeyValue": True, "blockReturnsProbabilities": True},
    "falcon_new": {"blockReturnsProbabilities": True, "materialisedMask": True},
}


def lora_request(c: dict) -> dict:
    lora = {"rank": 4, "targetModules": lora_targets(c), "dropout": c["loraDropout"]}
    if not qlora(c):
        return lora
    return {**lora, "quantization": "nf4", "unquantizedPrecision": "fp32" if c["upcast"] else "bf16"}


def request(c: dict, trainable: int) -> dict:
    encoder = c["family"] == "bert"
    return {
        "model": {
            "family": c["family"],
            "type": "encoder-embedding" if encoder else "decoder-llm",
            "mlp": "geglu" if c["family"] == "gemma" else "gelu" if encoder or c["family"] in GPT_BLOCKS else "swiglu",
            **({"gptBlock": GPT_BLOCKS[c["family"]]} if c["family"] in GPT_BLOCKS else {}),
            "parameters": 0,
            "largestLayerParameters": 0,
            "layers": c["layers"],
            "hiddenSize": c["hidden"],
            "attentionHeads": c["heads"],
            "kvHeads": c["kvHeads"],
            "headDim": c["headDim"],
            "intermediateSize": c["intermediate"],
            "vocabSize": c["vocab"],
            "tiedEmbeddings": False,
            "source": "property test",
            "attention": {
                "implementations": ["eager"] if c["family"] == "bloom" else ["sdpa", "eager"],
                "attentionDropout": c["dropout"],
                "hiddenDropout": c["dropout"] if encoder else 0,
                "softmaxInFp32": not encoder and c["family"] not in FALCONS,
                "relativePositionBias": False,
                **FALCON_TRAITS.get(c["family"], {}),
            },
        },
        "precision": "bf16-mixed" if mixed(c) else "bf16-true",
        "zeroStage": 0,
        "trainableParameters": trainable,
        "microBatchSize": c["batch"],
        "tokensPerSample": c["seq"],
        "gradientCheckpointing": c["checkpointing"],
        "attention": c["attention"],
        **({"lora": lora_request(c)} if c["lora"] else {}),
    }


@settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cases())
def test_planned_activations_never_below_saved_tensors(planner, c: dict) -> None:
    assert_bounded(planner, c)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases(["bloom"]))
def test_bloom_planned_activations_never_below_saved_tensors(planner, c: dict) -> None:
    """BLOOM's layout on its own, which the draw over every family reaches a few times only."""
    assert_bounded(planner, c)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases(["falcon"]))
def test_falcon_planned_activations_never_below_saved_tensors(planner, c: dict) -> None:
    """Falcon-7B's layout on its own: one key/value head, SDPA as PyTorch's math kernel or eager."""
    assert_bounded(planner, c)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases(["falcon_new"]))
def test_falcon_new_decoder_planned_activations_never_below_saved_tensors(planner, c: dict) -> None:
    """Falcon's new decoder on its own: grouped key/value heads, SDPA handed the causal mask, or eager."""
    assert_bounded(planner, c)


def assert_bounded(planner, c: dict) -> None:
    """The bytes autograd saves for one step of the case never exceed what the planner allows for them."""
    model = build(c)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    measured = saved_bytes(model, c)
    planned = planner(request(c, trainable))
    bound = planned["activations"] + planned["logits"] + planned["weightCopies"]
    assert measured <= bound, f"{c}: autograd saved {measured} bytes, the planner allows {bound}"
