"""EmbeddingPipeline example: Ray Data batch embeddings with a fixed-size GPU actor pool, CPU tokenization sized
to feed it, and block sizes and object-store limits that keep the working set in memory (no spilling).

    python -m ray_gpu.examples.embed            # on the cluster: reads data.uri (a text column, optional id),
                                                # writes parquet to data.outputUri as a committed run
                                                # (ray_gpu.outputs: read it back with ray_gpu.latest_output)
    python -m ray_gpu.examples.embed --smoke    # CPU: writes a synthetic parquet dataset, tiny random encoder
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ray_gpu
from ray_gpu import run_record
from ray_gpu.examples import common

SMOKE_FILES = 8
SMOKE_ROW_GROUP_ROWS = 1024
SMOKE_TOKENS = 32


def extra(parser: Any) -> None:
    parser.add_argument(
        "--smoke-rows", type=int, default=20_000, help="--smoke: rows to synthesize, at most the plan's rowsToRead"
    )
    parser.add_argument("--smoke-text-chars", type=int, default=7000, help="--smoke: characters per row")
    parser.add_argument(
        "--smoke-files", type=int, default=SMOKE_FILES, help="--smoke: parquet files to write the rows into"
    )


def synthesize(path: str, rows: int, chars: int, files: int = SMOKE_FILES) -> str:
    """Writes ``rows`` rows of synthetic text as parquet, in ``files`` files of small row groups."""
    marker = os.path.join(path, f"_rows_{rows}_chars_{chars}_files_{files}")
    if os.path.exists(marker):
        return path
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(0)
    base = " ".join(common.WORDS[rng.integers(0, len(common.WORDS), size=chars)])
    per_file = -(-rows // files)
    for f in range(files):
        ids = np.arange(f * per_file, min(rows, (f + 1) * per_file))
        offsets = rng.integers(0, len(base) - chars, size=len(ids))
        texts = [base[o : o + chars] for o in offsets]
        pq.write_table(
            pa.table({"id": ids, "text": texts}),
            os.path.join(path, f"part-{f}.parquet"),
            row_group_size=SMOKE_ROW_GROUP_ROWS,
        )
    open(marker, "w").close()
    return path


class Tokenize:
    """The CPU preprocessing: texts to token ids, with the model's tokenizer (``tokenizer(texts, max_length)``; for
    smoke runs ``common.HashTokenizer``, which like a fast tokenizer reads each whole text before truncating it, so its
    cost grows with the text as the real one's does). A named callable object, so Ray Data runs it as tasks and names
    its operator ``MapBatches(Tokenize)``: the preprocess stage of the run record."""

    def __init__(self, max_length: int, tokenizer: Any):
        self.max_length, self.tokenizer = max_length, tokenizer

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {**common.ids_of(batch), **self.tokenizer(list(batch["text"]), self.max_length)}


class Embedder:
    """One model replica per actor: mean-pooled, L2-normalised embeddings. Each call is timed (``ray_gpu.telemetry``):
    the actor's busy fraction says whether the pipeline feeds it."""

    def __init__(self, model: str, family: str, smoke: bool, attn: str, workload: str = "embed"):
        import torch
        from transformers import AutoModel

        from ray_gpu.telemetry import ActorTelemetry

        self.telemetry = ActorTelemetry(workload, actor=f"{os.getpid()}")
        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if smoke:
            torch.manual_seed(0)
            self.model = AutoModel.from_config(common.tiny_config(family), attn_implementation=attn)
        else:
            dtype = torch.float16 if self.device == "cuda" else torch.float32
            self.model = AutoModel.from_pretrained(model, dtype=dtype, attn_implementation=attn)
        self.model = self.model.to(self.device).eval()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        return self.telemetry.call(lambda: self.embed(batch), rows=len(batch["input_ids"]))

    def __del__(self) -> None:
        # The last record of the actor's busy fraction, whatever log_every left unprinted.
        telemetry = getattr(self, "telemetry", None)
        if telemetry is not None and telemetry.calls:
            telemetry.log()

    def embed(self, batch: dict[str, Any]) -> dict[str, Any]:
        torch = self.torch
        with torch.inference_mode():
            ids = torch.as_tensor(batch["input_ids"], device=self.device)
            mask = torch.as_tensor(batch["attention_mask"], device=self.device)
            hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            emb = torch.nn.functional.normalize(pooled.float(), dim=-1).cpu().numpy()
        return {**common.ids_of(batch), "embedding": list(emb)}


def pipeline(tuning: Any, ds: Any, rows: int | None, preprocess: Any, smoke: bool) -> Any:
    """The tuned pipeline: read, tokenize in its own CPU task pool, embed in the fixed GPU actor pool."""
    if rows is not None:
        ds = ds.limit(rows)
    ds = ds.map_batches(preprocess, **tuning.preprocess_kwargs())
    args = (tuning.model, tuning.model_family, smoke, common.attention(tuning), tuning.name)
    return ds.map_batches(Embedder, fn_constructor_args=args, **tuning.actor_pool_kwargs())


def main() -> None:
    args = common.arguments(__doc__.splitlines()[0], extra)
    tuning = ray_gpu.load(args.tuning)
    data = tuning.document["data"]
    rows = tuning.rows_to_read()
    output = tuning.output_path()
    if args.smoke:
        rows = min(args.smoke_rows, rows or args.smoke_rows)
        folder = os.path.join(tuning.storage_root(), "smoke-data", tuning.name)
        uri, fmt = synthesize(folder, rows, args.smoke_text_chars, args.smoke_files), "parquet"
        preprocess = Tokenize(SMOKE_TOKENS, common.HashTokenizer())
    else:
        uri, fmt = data["uri"], data["format"]
        preprocess = Tokenize(tuning.knob("sequenceLength"), common.tokenizer(tuning.model, False))
    ds = pipeline(tuning, common.read_dataset(fmt, uri), rows, preprocess, args.smoke)
    tuning.report()
    spilled_before = run_record.spilled_bytes()
    writers: list[Any] = []
    started = time.perf_counter()
    # A new committed run under the output: the previous results stay until this write has completed.
    run = ray_gpu.write_parquet(
        ds, output, metadata={"workload": tuning.name, "model": tuning.model}, on_written=writers.append
    )
    wall = time.perf_counter() - started
    print(
        f"ray-gpu example: embedded {run.total_rows} rows into {run.uri} ({len(run.files)} files, run "
        f"{run.run_id}, committed) in {wall:.1f}s",
        flush=True,
    )
    print(ds.stats(), flush=True)
    record(tuning, writers[0], wall, run.total_rows, spilled_before)


def record(tuning: Any, writer: Any, wall_seconds: float, rows: int, spilled_before: int) -> None:
    """Writes the run record: each operator's stats with the slots of its stage (read and write: the cluster's
    CPUs; preprocess and gpu: the planned task and actor pools), and the object store's capacity and spill."""
    import ray

    cpus, pool = int(ray.cluster_resources().get("CPU", 1)), tuning.document["actorPool"]
    slots = {"read": cpus, "write": cpus, "preprocess": pool["preprocessConcurrency"], "gpu": pool["actorPoolSize"]}
    data = run_record.data_section(
        run_record.stats_summary(writer), wall_seconds=wall_seconds, rows=rows, slots=slots, gpu_udf=Embedder.__name__
    )
    run_record.write(tuning, data=data, objectStore=run_record.object_store_section(spilled_before))


if __name__ == "__main__":
    main()
