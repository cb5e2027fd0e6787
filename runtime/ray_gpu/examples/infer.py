"""BatchInference example: batch LLM generation over a generation-parameter grid with Ray Data. Each prompt
becomes one row per setting, so every replica stays busy; replicas are a fixed actor pool, each with its
tensor-parallel GPUs, the planned concurrent sequences, KV-cache share and context length (vLLM).

    python -m ray_gpu.examples.infer            # on the cluster (vLLM installed): reads a prompt column (optional id)
    python -m ray_gpu.examples.infer --smoke    # CPU: tiny random model of the same family, transformers generate
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import ray

import ray_gpu
from ray_gpu.examples import common

SMOKE_NEW_TOKENS = 8


def expand(batch: dict[str, Any], grid: list[dict[str, Any]]) -> dict[str, Any]:
    """One row per (prompt, setting); the setting travels as JSON so rows keep one schema."""
    prompts = [p for p in batch["prompt"] for _ in grid]
    settings = [json.dumps(s, sort_keys=True) for _ in batch["prompt"] for s in grid]
    ids = {"id": np.array([i for i in batch["id"] for _ in grid])} if "id" in batch else {}
    return {**ids, "prompt": np.array(prompts, dtype=object), "params": np.array(settings, dtype=object)}


class Generator:
    """One replica: vLLM on its GPUs, or a tiny transformers model for --smoke."""

    def __init__(self, model: str, family: str, smoke: bool, engine: dict[str, Any]):
        self.smoke, self.engine = smoke, engine
        if smoke:
            import torch

            self.torch = torch
            self.model = common.causal_lm(model, family, True).eval()
            self.tokenizer = common.HashTokenizer()
        else:
            from vllm import LLM

            self.llm = LLM(
                model=model,
                tensor_parallel_size=engine["tensor_parallel_size"],
                gpu_memory_utilization=engine["gpu_memory_utilization"],
                max_num_seqs=engine["max_num_seqs"],
                max_model_len=engine["max_model_len"],
                # The plan sized vLLM's activation profile at this many tokens: set it, with chunked prefill on.
                max_num_batched_tokens=engine["max_num_batched_tokens"],
                enable_chunked_prefill=True,
            )

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        params = [json.loads(p) for p in batch["params"]]
        if self.smoke:
            outputs = []
            for prompt, p in zip(batch["prompt"], params, strict=True):
                ids = self.torch.as_tensor(self.tokenizer([prompt], 32)["input_ids"])
                with self.torch.inference_mode():
                    out = self.model.generate(
                        ids,
                        max_new_tokens=SMOKE_NEW_TOKENS,
                        do_sample=p.get("temperature", 1.0) > 0,
                        pad_token_id=0,
                        **p,
                    )
                outputs.append(" ".join(str(t) for t in out[0, ids.shape[1] :].tolist()))
        else:
            from vllm import SamplingParams

            # Prompts longer than the planned context minus the new tokens keep their last tokens; a sweep may set max_tokens itself.
            budget = self.engine["max_model_len"] - self.engine["max_tokens"]
            sampling = [
                SamplingParams(**{"max_tokens": self.engine["max_tokens"], "truncate_prompt_tokens": budget, **p})
                for p in params
            ]
            outputs = [r.outputs[0].text for r in self.llm.generate(list(batch["prompt"]), sampling)]
        return {**common.ids_of(batch), "params": batch["params"], "output": np.array(outputs, dtype=object)}


def main() -> None:
    args = common.arguments(
        __doc__.splitlines()[0], lambda p: p.add_argument("--smoke-rows", type=int, default=64, help="--smoke: prompts")
    )
    tuning = ray_gpu.load(args.tuning)
    grid, rows, output = tuning.sweep_grid(), tuning.rows_to_read(), tuning.output_path()
    engine = {
        "tensor_parallel_size": tuning.knob("tensorParallelSize"),
        "gpu_memory_utilization": tuning.knob("gpuMemoryUtilization"),
        "max_num_seqs": tuning.knob("maxConcurrentSequences"),
        "max_model_len": tuning.knob("maxModelLength"),
        "max_num_batched_tokens": tuning.knob("maxBatchedTokens"),
        "max_tokens": tuning.knob("maxNewTokens"),
    }
    if args.smoke:
        n = min(args.smoke_rows, rows or args.smoke_rows)
        ds = ray.data.from_items([{"id": i, "prompt": t} for i, t in enumerate(common.synthetic_texts(0, n, 24))])
    else:
        data = tuning.document["data"]
        ds = common.read_dataset(data["format"], data["uri"])
        if data["format"] == "text":
            ds = ds.rename_columns({"text": "prompt"})
        if rows is not None:
            ds = ds.limit(rows)
    prompts = ds.count()
    ds = ds.map_batches(lambda b: expand(b, grid), **tuning.preprocess_kwargs())
    ds = ds.map_batches(
        Generator,
        fn_constructor_args=(tuning.model, tuning.model_family, args.smoke, engine),
        **tuning.actor_pool_kwargs(),
    )
    tuning.report()
    started = time.time()
    # A new committed run under the output, committed only with one row per prompt and setting (counted from the
    # written files); the previous results stay until then.
    try:
        run = ray_gpu.write_parquet(
            ds, output, expected_rows=prompts * len(grid), metadata={"workload": tuning.name, "model": tuning.model}
        )
    except ray_gpu.OutputError as e:
        raise SystemExit(f"expected {prompts} x {len(grid)} = {prompts * len(grid)} generations: {e}") from None
    print(
        f"ray-gpu example: {run.total_rows} generations ({prompts} prompts x {len(grid)} settings) into "
        f"{run.uri} (run {run.run_id}, committed) in {time.time() - started:.1f}s",
        flush=True,
    )


if __name__ == "__main__":
    main()
