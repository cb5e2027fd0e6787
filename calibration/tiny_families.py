"""Tiny, randomly initialised configs of each family that calibration/measure_activations.py measures: small shapes
that keep each family's structure (GQA, head_dim != hidden/heads, q/k/v bias, gated or plain MLP, pre/post-norm, parallel
blocks, BLOOM's ALiBi, Falcon-7B's single key/value head and Falcon-40B's grouped ones). Each takes (hidden,
intermediate, head_dim, vocab)."""

from __future__ import annotations

import transformers


def falcon(h: int, i: int, hd: int, v: int, **layout) -> transformers.FalconConfig:
    """A tiny rotary Falcon without biases or dropout, attention and MLP in parallel; `layout` picks Falcon-7B's or the
    new decoder's attention."""
    return transformers.FalconConfig(
        hidden_size=h,
        ffn_hidden_size=i,
        num_hidden_layers=3,
        num_attention_heads=h // hd,
        parallel_attn=True,
        alibi=False,
        bias=False,
        vocab_size=v,
        max_position_embeddings=1024,
        hidden_dropout=0.0,
        attention_dropout=0.0,
        **layout,
    )


def llama_style(config_cls: type, kv_heads: int, **extra):
    """A tiny Llama-style config (4 heads of the shape's head_dim, `kv_heads` key/value heads) of `config_cls`."""

    def build(h: int, i: int, hd: int, v: int):
        return config_cls(
            hidden_size=h,
            intermediate_size=i,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=kv_heads,
            head_dim=hd,
            vocab_size=v,
            max_position_embeddings=1024,
            **extra,
        )

    return build


#: What makes a GPT-NeoX block the planner's `gpt-neox` layout (parallel attention and MLP, PyTorch's fused GELU,
#: partial rotary, no dropout), here and in calibration/test_activation_bound.py.
GPT_NEOX_LAYOUT = dict(
    use_parallel_residual=True,
    hidden_act="gelu",
    rotary_pct=0.25,
    attention_dropout=0.0,
    hidden_dropout=0.0,
    tie_word_embeddings=False,
)
#: What makes a Phi block the planner's `phi` layout (one shared norm, `gelu_new` in Python ops, half rotary, no dropout).
PHI_LAYOUT = dict(
    hidden_act="gelu_new",
    partial_rotary_factor=0.5,
    resid_pdrop=0.0,
    embd_pdrop=0.0,
    attention_dropout=0.0,
)


FAMILIES = {
    "llama": llama_style(transformers.LlamaConfig, 2, tie_word_embeddings=False),
    "qwen2": llama_style(transformers.Qwen2Config, 1, tie_word_embeddings=True),
    "gemma": llama_style(transformers.GemmaConfig, 4),
    "bert": lambda h, i, hd, v: transformers.BertConfig(
        hidden_size=h,
        intermediate_size=i,
        num_hidden_layers=3,
        num_attention_heads=4,
        vocab_size=v,
        max_position_embeddings=1024,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    ),
    "gpt2": lambda h, i, hd, v: transformers.GPT2Config(
        n_embd=h,
        n_inner=i,
        n_layer=3,
        n_head=4,
        vocab_size=v,
        n_positions=1024,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    ),
    # GPT-style blocks with parallel attention and MLP: GPT-NeoX (Pythia, stablelm-base-alpha; PyTorch's fused GELU)
    # and Phi-1.5/2 (one shared norm; "gelu_new", tanh GELU written out in Python ops).
    "gpt_neox": lambda h, i, hd, v: transformers.GPTNeoXConfig(
        hidden_size=h,
        intermediate_size=i,
        num_hidden_layers=3,
        num_attention_heads=4,
        vocab_size=v,
        max_position_embeddings=1024,
        **GPT_NEOX_LAYOUT,
    ),
    "phi": lambda h, i, hd, v: transformers.PhiConfig(
        hidden_size=h,
        intermediate_size=i,
        num_hidden_layers=3,
        num_attention_heads=4,
        vocab_size=v,
        max_position_embeddings=1024,
        **PHI_LAYOUT,
    ),
    # BLOOM: sequential blocks, ALiBi, a LayerNorm after the embeddings, eager attention only (no SDPA in transformers),
    # fused query/key/value, a 4h MLP whose tanh GELU is a custom autograd function; heads follow the shape's head_dim.
    "bloom": lambda h, i, hd, v: transformers.BloomConfig(
        hidden_size=h,
        n_layer=3,
        n_head=h // hd,
        vocab_size=v,
        hidden_dropout=0.0,
        attention_dropout=0.0,
    ),
    # Falcon-7B's layout: attention and MLP in parallel from one LayerNorm, multi-query attention (one key/value head,
    # which transformers passes unexpanded, so SDPA runs PyTorch's math kernel), rotary, PyTorch's fused GELU.
    "falcon": lambda h, i, hd, v: falcon(h, i, hd, v, multi_query=True, new_decoder_architecture=False),
    # Falcon-40B's and 180B's new decoder architecture: attention and MLP in parallel from two LayerNorms, grouped
    # key/value heads that transformers broadcasts to the query's heads before the attention (so SDPA runs fused, given
    # the causal mask Falcon always materialises), rotary, PyTorch's fused GELU.
    "falcon_new": lambda h, i, hd, v: falcon(h, i, hd, v, num_kv_heads=2, new_decoder_architecture=True),
}
