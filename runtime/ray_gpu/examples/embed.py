"""EmbeddingPipeline example: Ray Data batch embeddings with a fixed-size GPU actor pool, CPU tokenization sized
to feed it, and block sizes and object-store limits that keep the working set in memory (no spilling).

    python -m ray_gpu.examples.embed            # on the cluster: reads data.uri (a text column, optional id), writes parquet to data.outputUri
    python -m ray_gpu.examples.embed --smoke    # CPU: writes a synthetic parquet dataset, tiny random encoder
    python -m ray_gpu.examples.embed --smoke --ray-defaults   # same pipeline with Ray's defaults (for comparison)
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ray_gpu
from ray_gpu.examples import common

SMOKE_FILES = 40  # files of ~70 MB: Ray 2.58 reads parquet one task per file, whatever override_num_blocks says
SMOKE_ROW_GROUP_ROWS = 1024
SMOKE_TOKENS = 32


def extra(parser: Any) -> None:
    parser.add_argument("--smoke-rows", type=int, default=None, help="--smoke: rows to synthesize (default: the plan's rowsToRead)")
    parser.add_argument(
        "--smoke-text-chars", type=int, default=7000, help="--smoke: characters per row (the sample then outweighs the scaled object store 3 times)"
    )
    parser.add_argument("--ray-defaults", action="store_true", help="ignore the tuning's Ray Data settings (block size, limits, read blocks, batch size)")


def synthesize(path: str, rows: int, chars: int) -> str:
    """Writes ``rows`` rows of synthetic text as parquet (small row groups, so reads can split as planned)."""
    marker = os.path.join(path, f"_rows_{rows}_chars_{chars}")
    if os.path.exists(marker):
        return path
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(0)
    base = " ".join(common.WORDS[rng.integers(0, len(common.WORDS), size=chars)])
    per_file = -(-rows // SMOKE_FILES)
    for f in range(SMOKE_FILES):
        ids = np.arange(f * per_file, min(rows, (f + 1) * per_file))
        offsets = rng.integers(0, len(base) - chars, size=len(ids))
        texts = [base[o : o + chars] for o in offsets]
        pq.write_table(pa.table({"id": ids, "text": texts}), os.path.join(path, f"part-{f}.parquet"), row_group_size=SMOKE_ROW_GROUP_ROWS)
    open(marker, "w").close()
    return path


def byte_tokens(batch: dict[str, Any], max_length: int) -> dict[str, Any]:
    """Smoke tokenizer: the first UTF-8 bytes of each text as token ids (like ByT5), vectorised."""
    ids: Any = np.zeros((len(batch["text"]), max_length), dtype=np.int64)
    for i, t in enumerate(batch["text"]):
        b = np.frombuffer(t[:max_length].encode()[:max_length], dtype=np.uint8)
        ids[i, : len(b)] = b.astype(np.int64) % (common.SMOKE_VOCAB - 4) + 4
    return {**common.ids_of(batch), "input_ids": ids, "attention_mask": (ids > 0).astype(np.int64)}


class Embedder:
    """One model replica per actor: mean-pooled, L2-normalised embeddings."""

    def __init__(self, model: str, family: str, smoke: bool):
        import torch
        from transformers import AutoModel

        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if smoke:
            torch.manual_seed(0)
            self.model = AutoModel.from_config(common.tiny_config(family))
        else:
            self.model = AutoModel.from_pretrained(model, dtype=torch.float16 if self.device == "cuda" else torch.float32)
        self.model = self.model.to(self.device).eval()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        with torch.inference_mode():
            ids = torch.as_tensor(batch["input_ids"], device=self.device)
            mask = torch.as_tensor(batch["attention_mask"], device=self.device)
            hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            emb = torch.nn.functional.normalize(pooled.float(), dim=-1).cpu().numpy()
        return {**common.ids_of(batch), "embedding": list(emb)}


def main() -> None:
    args = common.arguments(__doc__.splitlines()[0], extra)
    tuning = ray_gpu.load(args.tuning, apply_data_context=not args.ray_defaults)
    data = tuning.document["data"]
    rows = tuning.rows_to_read()
    output = tuning.output_path()
    if args.smoke:
        uri, fmt = synthesize(os.path.join(tuning.storage_root(), "smoke-data", tuning.name), args.smoke_rows or rows or 4096, args.smoke_text_chars), "parquet"
        max_length = SMOKE_TOKENS
        preprocess = lambda b: byte_tokens(b, max_length)  # noqa: E731
    else:
        uri, fmt = data["uri"], data["format"]
        tok, max_length = common.tokenizer(tuning.model, False), tuning.knob("sequenceLength")
        preprocess = lambda b: {**common.ids_of(b), **tok(list(b["text"]), max_length)}  # noqa: E731
    ds = common.read_dataset(fmt, uri, **({} if args.ray_defaults else tuning.read_kwargs()))
    if rows is not None:
        ds = ds.limit(rows)
    if args.ray_defaults:
        print("ray-gpu example: --ray-defaults: Ray Data's default block size, limits, read parallelism and batch size", flush=True)
        ds = ds.map_batches(preprocess).map_batches(
            Embedder, fn_constructor_args=(tuning.model, tuning.model_family, args.smoke), concurrency=1, batch_size=None
        )
    else:
        ds = ds.map_batches(preprocess, **tuning.preprocess_kwargs())
        ds = ds.map_batches(Embedder, fn_constructor_args=(tuning.model, tuning.model_family, args.smoke), **tuning.actor_pool_kwargs())
    tuning.report()
    started = time.time()
    ds.write_parquet(output, mode="overwrite")
    print(f"ray-gpu example: embedded rows into {output} in {time.time() - started:.1f}s", flush=True)
    print(ds.stats(), flush=True)


if __name__ == "__main__":
    main()
