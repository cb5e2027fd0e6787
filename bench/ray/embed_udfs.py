"""The embedding bench's data and stand-ins (``bench/ray/embed_bench.py``). Kept free of the harness, because every
Ray worker process of the bench's cluster imports this module to unpickle them.

- :func:`synthesize`: RAG-chunk-shaped text rows (1,500 to 3,000 characters, Zipf-distributed words of a 6,000-word
  vocabulary) in many parquet files of varied sizes, as upstream writers leave them; seeded, written once.
- :func:`tokenize`: the CPU preprocessing, real work proportional to a text's length (every word hashed, as a fast
  tokenizer reads the whole text before truncating it to the model's 512 tokens).
- :class:`Encoder`: the GPU model stand-in. A call costs a fixed ``CALL_SECONDS`` (kernel launches and the device
  sync: time on the device, the host CPU free, so modelled as a wait) plus real torch work per row (an embedding
  lookup and a projection over the row's 512 token ids, numpy on this machine's CPU), more per row than tokenizing. Calls
  of more rows amortize the fixed cost, as on a GPU: the mechanism of the batch-size lever.
"""

from __future__ import annotations

import os
import time
import zlib
from typing import Any

import numpy as np

#: The model's sequence length (the levers stack's planned ``sequenceLength``).
SEQ = 512
VOCAB = 30522
#: Characters of a chunk, drawn uniformly; words of the synthetic vocabulary.
CHARS = (1500, 3000)
WORDS = 6000
#: Fixed seconds of one encoder call, whatever its rows (on the device; the host CPU is free meanwhile).
CALL_SECONDS = 0.03
#: The stand-in model: token embeddings of WIDTH, projected to OUT, in chunks of CHUNK rows (bounded memory).
WIDTH, OUT, CHUNK = 64, 64, 64


def _vocabulary(rng: np.random.Generator) -> np.ndarray:
    letters = np.array(list("etaoinshrdlucmfwypvbgkqjxz"))
    lengths = rng.integers(2, 11, size=WORDS)
    return np.array(["".join(rng.choice(letters, size=n)) for n in lengths])


def _chunks(rng: np.random.Generator, vocab: np.ndarray, rows: int) -> list[str]:
    """``rows`` texts of CHARS characters: Zipf-ranked words joined by spaces, cut at a word boundary."""
    texts = []
    for target in rng.integers(CHARS[0], CHARS[1] + 1, size=rows):
        ranks = np.minimum(rng.zipf(1.2, size=int(target) // 4), WORDS) - 1
        text = " ".join(vocab[ranks])
        texts.append(text[: text.rfind(" ", 0, int(target))])
    return texts


def synthesize(folder: str, rows: int, files: int, seed: int = 0) -> str:
    """Writes ``rows`` chunks into ``files`` parquet files of 0.5 to 1.5 times the mean rows each (once: a marker
    names the shape). Columns: ``id`` (int64) and ``text``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    marker = os.path.join(folder, f"_rows_{rows}_files_{files}_seed_{seed}")
    if os.path.exists(marker):
        return folder
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    weights = rng.uniform(0.5, 1.5, size=files)
    cuts = np.round(np.cumsum(weights) / weights.sum() * rows).astype(int)
    start = 0
    for f, end in enumerate(cuts):
        table = pa.table({"id": np.arange(start, end, dtype=np.int64), "text": _chunks(rng, vocab, int(end - start))})
        pq.write_table(table, os.path.join(folder, f"part-{f:03d}.parquet"))
        start = end
    open(marker, "w").close()
    return folder


def tokenize(batch: dict[str, Any]) -> dict[str, Any]:
    """Texts to SEQ token ids and an attention mask (int64, as a tokenizer returns them): every word hashed into the
    vocabulary, then truncated; the text is dropped (the encoder needs the ids only)."""
    texts = batch["text"]
    ids: Any = np.zeros((len(texts), SEQ), dtype=np.int64)
    mask: Any = np.zeros((len(texts), SEQ), dtype=np.int64)
    for i, text in enumerate(texts):
        hashed = [zlib.crc32(w.encode()) % VOCAB for w in str(text).split()][:SEQ]
        ids[i, : len(hashed)] = hashed
        mask[i, : len(hashed)] = 1
    return {"id": batch["id"], "input_ids": ids, "attention_mask": mask}


class Encoder:
    """The GPU model stand-in: mean-pooled, L2-normalised embeddings of OUT floats (numpy, one BLAS thread: the
    actor starts as fast as a Ray worker does, so the fixed pool is not charged 8 torch imports on 2 cores). Each
    output row also carries the process id of the actor that made it (the actors that took batches)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(0)
        self.table = rng.standard_normal((VOCAB, WIDTH), dtype=np.float32)
        self.proj = (rng.standard_normal((WIDTH, OUT), dtype=np.float32) / WIDTH**0.5).astype(np.float32)
        self.pid = os.getpid()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        time.sleep(CALL_SECONDS)
        ids, mask = batch["input_ids"], batch["attention_mask"]
        out: Any = np.zeros((len(ids), OUT), dtype=np.float32)
        for s in range(0, len(ids), CHUNK):
            m = mask[s : s + CHUNK, :, None].astype(np.float32)
            hidden = self.table[ids[s : s + CHUNK]] @ self.proj
            hidden = hidden * (1 + np.tanh(0.8 * hidden))  # a GELU-like nonlinearity (2x its tanh approximation)
            pooled = (hidden * m).sum(1) / np.maximum(m.sum(1), 1)
            out[s : s + CHUNK] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-6)
        return {"id": batch["id"], "embedding": list(out), "pid": np.full(len(out), self.pid, dtype=np.int64)}
