"""The live peak of a BERT-large training step, as HF's "anatomy of a model's memory" page runs it (fp32, eager attention,
dropout 0.1, AdamW, batch 4 × 512 tokens), measured on CPU and restated for CUDA (docs/memory.md, "What the planner
still gets wrong"). Random weights: the widths decide the bytes, not the values.

The second step is read, when AdamW's states already exist, as at every later step. ``LiveBytes`` counts what the step
allocates; the weights and the states made before it are added. CPU and CUDA differ in one thing here: PyTorch's CPU
dropout keeps its noise as a tensor of the input's dtype (``_dropout_impl``, 4 bytes in fp32), where CUDA's fused
``native_dropout`` keeps a bool mask (1 byte). So the step is measured without dropout too, and CUDA's dropout bytes are
added to that: a 1-byte mask per dropped element, and per attention score the dropped copy of the probabilities the
next matmul saves (without dropout the softmax output serves both).

Usage: ``PYTHONPATH=runtime python calibration/measure_encoder_step.py`` (about a minute on two cores). With ``--cuda``,
on a GPU, it prints the second step's peak allocated and reserved bytes instead (calibration/measure_on_cuda.py).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import torch
import transformers

from ray_gpu.live_bytes import LiveBytes

BATCH, SEQ = 4, 512
BERT_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)


def training_step(
    dropout: float, device: str = "cpu"
) -> tuple[Callable[[], None], torch.optim.Optimizer, torch.nn.Module]:
    """One training step of BERT-large as the page runs it, its optimizer and its model."""
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        **BERT_LARGE, attention_probs_dropout_prob=dropout, hidden_dropout_prob=dropout, num_labels=2
    )
    cfg._attn_implementation = "eager"
    model = transformers.BertForSequenceClassification(cfg).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=False)
    ids = torch.randint(0, cfg.vocab_size, (BATCH, SEQ), device=device)
    labels = torch.randint(0, 2, (BATCH,), device=device)

    def step() -> None:
        model(input_ids=ids, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step, optimizer, model


def step_peak(dropout: float) -> dict[str, int]:
    """Bytes live at the peak of the second training step, and the weights and AdamW states made before it."""
    step, optimizer, model = training_step(dropout)
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


def cuda_step_peak() -> dict[str, int | str]:
    """On a GPU: the second step's peak allocated and reserved bytes under the allocator settings of this process's
    ``PYTORCH_CUDA_ALLOC_CONF`` (the page ran PyTorch's default; the runtime sets ``expandable_segments:True``)."""
    step, _, _ = training_step(0.1, "cuda")
    step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    return {
        "allocConf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "allocatedPeak": torch.cuda.max_memory_allocated(),
        "reservedPeak": torch.cuda.max_memory_reserved(),
    }


def main() -> None:
    if sys.argv[1:] == ["--cuda"]:
        print(json.dumps(cuda_step_peak()))
        return
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
