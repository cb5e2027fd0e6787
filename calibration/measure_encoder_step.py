"""The live peak of a BERT-large training step, as HF's "anatomy of a model's memory" page runs it (fp32, eager attention,
dropout 0.1, AdamW, batch 4 × 512 tokens), measured on CPU and restated for CUDA (docs/memory.md, "What the planner
still gets wrong"). Random weights: the widths decide the bytes, not the values.

The second step is read, when AdamW's states already exist, as at every later step. ``LiveBytes`` counts what the step
allocates; the weights and the states made before it are added. CPU and CUDA differ in one thing here: PyTorch's CPU
dropout keeps its noise as a tensor of the input's dtype (``_dropout_impl``, 4 bytes in fp32), where CUDA's fused
``native_dropout`` keeps a bool mask (1 byte). So the step is measured without dropout too, and CUDA's dropout bytes are
added to that: a 1-byte mask per dropped element, and per attention score the dropped copy of the probabilities the
next matmul saves (without dropout the softmax output serves both).

Usage: ``PYTHONPATH=runtime python calibration/measure_encoder_step.py`` (about a minute on two cores).
"""

from __future__ import annotations

import json

import torch
import transformers

from ray_gpu.live_bytes import LiveBytes

BATCH, SEQ = 4, 512
BERT_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)


def step_peak(dropout: float) -> dict[str, int]:
    """Bytes live at the peak of the second training step, and the weights and AdamW states made before it."""
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        **BERT_LARGE, attention_probs_dropout_prob=dropout, hidden_dropout_prob=dropout, num_labels=2
    )
    cfg._attn_implementation = "eager"
    model = transformers.BertForSequenceClassification(cfg).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=False)
    ids = torch.randint(0, cfg.vocab_size, (BATCH, SEQ))
    labels = torch.randint(0, 2, (BATCH,))

    def step() -> None:
        model(input_ids=ids, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()
    with LiveBytes() as probe:
        step()
    states = sum(t.nbytes for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t))
    return {"stepPeak": probe.peak, "weights": sum(p.nbytes for p in model.parameters()), "adamStates": states}


def cuda_dropout_bytes() -> int:
    """What CUDA's dropout keeps in one step: a 1-byte mask per dropped element, and per score the dropped fp32 copy."""
    tokens = BATCH * SEQ
    scores = BATCH * BERT_LARGE["num_attention_heads"] * SEQ * SEQ
    hidden = BERT_LARGE["hidden_size"]
    per_layer = scores * (1 + 4) + 2 * tokens * hidden  # attention probabilities; attention and FFN outputs
    return BERT_LARGE["num_hidden_layers"] * per_layer + tokens * hidden  # and the embeddings' dropout


def main() -> None:
    with_dropout = step_peak(0.1)
    without = step_peak(0.0)
    base = without["weights"] + without["adamStates"]
    print(
        json.dumps(
            {
                "about": "BERT-large, fp32, eager, AdamW, batch 4 x 512: peak bytes of a training step",
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "cpuWithDropout": base + with_dropout["stepPeak"],
                "cpuWithoutDropout": base + without["stepPeak"],
                "cudaDropoutBytes": cuda_dropout_bytes(),
                "cudaEquivalent": base + without["stepPeak"] + cuda_dropout_bytes(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
