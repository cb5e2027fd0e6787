"""The driver of the training and SFT examples: the run's settings from the plan and the arguments (a smoke run's
stand-ins named in the report), the tokenized dataset, Ray Train's ``TorchTrainer`` over the workers' loop
(:func:`ray_gpu.examples.loop.train_loop`) under the step watchdog, and the run record of what the workers measured."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ray
import ray.train
from ray.train.torch import TorchConfig, TorchTrainer

from .. import interruptions, run_record, watchdog
from ..data_position import (
    deterministic_data_config,
)
from ..tuning import Tuning
from . import common, loop

#: What the driver prints of the workers' counted run (``Observed.ran``), as ``ray-gpu example: ran with {...}``.
RAN_KEYS = (
    "world_size",
    "rows_per_forward",
    "forwards_per_optimizer_step",
    "optimizer_steps",
    "global_samples_per_optimizer_step",
)
SMOKE_TOKENS = 64
#: Steps between checkpoints of a smoke run (a stand-in for the planned cadence: smoke runs are a few steps long).
SMOKE_CHECKPOINT_EVERY = 3


def training_dataset(
    args: Any,
    tuning: Tuning,
    max_length: int,
    columns: tuple[str, ...] = ("text",),
    preprocess: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Any:
    """Tokenized rows: ``--data`` (parquet with ``columns``), or synthetic text for --smoke. ``preprocess``
    replaces the text tokenizer (vision-language rows)."""
    model, smoke = tuning.model, args.smoke

    def tokenize(batch: dict[str, Any]) -> dict[str, Any]:
        out = common.tokenizer(model, smoke)(list(batch["text"]), max_length)
        return {**common.ids_of(batch), "input_ids": out["input_ids"], "attention_mask": out["attention_mask"]}

    if smoke:
        # Row ids travel with the rows: a resumed run checks and logs where its data continues (data_position).
        ds = ray.data.range(args.rows).map_batches(
            lambda b: {"id": b["id"], "text": common.synthetic_texts(int(b["id"][0]), len(b["id"]), 48)}
        )
    elif args.data:
        ds = ray.data.read_parquet(args.data, columns=list(columns))
    else:
        raise SystemExit(f"--data is required outside --smoke: a parquet dataset with columns {', '.join(columns)}")
    return ds.map_batches(preprocess if preprocess and not smoke else tokenize)


def _record(tuning: Tuning, metrics: dict[str, Any]) -> None:
    """Writes the run record from what the workers measured (the last report's ``workers``); a run that reported
    no final step (it resumed at its end) has nothing measured and writes none."""
    workers = metrics.get("workers")
    if not workers:
        return
    peaks = run_record.gpu_memory_section(w["peakGiB"] for w in workers if w.get("peakGiB") is not None)
    run_record.write(tuning, train=run_record.train_section(workers), gpuMemory=peaks)


@dataclass(frozen=True)
class PlannedRun:
    """What one training run is given: the planned loop, batch, DeepSpeed and Ray Train settings with the smoke
    run's stand-ins applied, the model's builders, and the dataset (built by :func:`plan_run`)."""

    loop: dict[str, Any]
    deepspeed: dict[str, Any] | None
    steps: int
    checkpoint_every: int
    learning_rate: float
    build_model: Callable[[], Any]
    prepare_batch: Callable[[Any, Any], Any]
    save_all: bool
    scaling: Any
    run_config: Any
    dataset: Any

    def train_loop_config(self, workload: str, reporter: Any) -> dict[str, Any]:
        """The config each worker's :func:`ray_gpu.examples.loop.train_loop` reads."""
        return {
            **self.loop,
            "deepspeed": self.deepspeed,
            "steps": self.steps,
            "checkpoint_every": self.checkpoint_every,
            "learning_rate": self.learning_rate,
            "build_model": self.build_model,
            "prepare_batch": self.prepare_batch,
            "save_all": self.save_all,
            "workload": workload,
            # The end-to-end tests' interruption hooks (ray_gpu.interruptions), None in every real job.
            "kill_after_checkpoint_step": interruptions.kill_step(),
            "notice_mid_step": interruptions.notice_step(),
            # Fails the job when steps stop (ray_gpu.watchdog); carries the hang test hook to the workers.
            "watchdog": reporter,
        }


def run(
    args: Any,
    tuning: Tuning,
    build_model: Callable[[], Any],
    prepare_batch: Callable[[Any, Any], Any],
    save_all: bool,
    **dataset_kwargs: Any,
) -> Any:
    """Trains with the planned Ray Train, DeepSpeed and batch settings; returns Ray Train's result."""
    planned = plan_run(args, tuning, build_model, prepare_batch, save_all, **dataset_kwargs)
    window = watchdog.stall_after_seconds(tuning.stall_after_seconds())  # the plan's, or the test hook's
    tuning.report()
    with watchdog.StepWatchdog.start(tuning.name, window) as dog:
        return _fit(tuning, planned, dog.reporter)


def _deepspeed(tuning: Tuning, loop: dict[str, Any]) -> dict[str, Any] | None:
    """The planned DeepSpeed config, or None: none planned, or a CPU stand-in (DDP with the same batch settings)."""
    if "deepspeedConfigFile" not in tuning.document["train"]:
        return None
    if tuning.cpu_standin:
        reason = f"DeepSpeed ZeRO-{loop['zero_stage']} needs GPUs: DDP (gloo) with the same batch settings"
        tuning.stand_in("train.deepspeedConfigFile", "deepspeed_config", None, reason)
        return None
    return tuning.deepspeed_config()


def plan_run(
    args: Any,
    tuning: Tuning,
    build_model: Callable[[], Any],
    prepare_batch: Callable[[Any, Any], Any],
    save_all: bool,
    **dataset_kwargs: Any,
) -> PlannedRun:
    """The run's settings from the plan and the arguments (a smoke run's stand-ins named in the report)."""
    loop = tuning.train_loop_config()
    deepspeed = _deepspeed(tuning, loop)
    scaling, run_config = tuning.scaling_config(), tuning.run_config()
    max_length = loop["sequence_length"]
    if args.smoke:
        max_length = tuning.stand_in(
            "knobs.sequenceLength", "max_length", min(max_length, SMOKE_TOKENS), "smoke rows are short synthetic text"
        )
    global_batch = loop["global_batch_size"]
    if args.smoke and args.rows is None:
        # The run's steps and one global batch more: synthetic rows no step trains on would only be tokenized.
        args.rows = (args.steps + 1) * global_batch
    dataset = training_dataset(args, tuning, max_length, **dataset_kwargs)
    # Count rows before preprocessing (cheap) rather than tokenizing everything twice.
    steps = args.steps or math.ceil(
        (
            args.rows
            if args.smoke
            else ray.data.read_parquet(args.data, columns=[dataset_kwargs.get("columns", ("text",))[0]]).count()
        )
        / global_batch
    )
    return PlannedRun(
        loop=loop,
        deepspeed=deepspeed,
        steps=steps,
        checkpoint_every=_checkpoint_every(args, tuning),
        learning_rate=args.learning_rate,
        build_model=build_model,
        prepare_batch=prepare_batch,
        save_all=save_all,
        scaling=scaling,
        run_config=run_config,
        dataset=dataset,
    )


def _fit(tuning: Tuning, planned: PlannedRun, reporter: Any) -> Any:
    """Runs Ray Train under the watchdog (``reporter`` tells it of every step) and reports what ran."""
    trainer = TorchTrainer(
        loop.train_loop,
        train_loop_config=planned.train_loop_config(tuning.name, reporter),
        torch_config=TorchConfig(backend=planned.loop["backend"]),
        # Ordered ingest: every run splits the rows across workers the same way, so a data position is exact.
        dataset_config=deterministic_data_config(),
        scaling_config=planned.scaling,
        run_config=planned.run_config,
        datasets={"train": planned.dataset},
    )
    result = trainer.fit()
    metrics = result.metrics or {}
    ran = {k: metrics.get(k) for k in RAN_KEYS}
    print(f"ray-gpu example: ran with {json.dumps(ran, sort_keys=True)}", flush=True)
    print(
        f"ray-gpu example: finished at step {metrics.get('step')} of {planned.steps}; checkpoint "
        f"{result.checkpoint.path if result.checkpoint else None}",
        flush=True,
    )
    _record(tuning, metrics)
    return result


def _checkpoint_every(args: Any, tuning: Tuning) -> int:
    """The planned cadence, or ``--checkpoint-every`` (a stand-in the report names); smoke runs checkpoint every 3."""
    if not args.checkpoint_every and not args.smoke:
        return tuning.checkpoint_every()
    every, why = (
        (args.checkpoint_every, "--checkpoint-every")
        if args.checkpoint_every
        else (SMOKE_CHECKPOINT_EVERY, f"a smoke run checkpoints every {SMOKE_CHECKPOINT_EVERY} steps")
    )
    return int(tuning.stand_in("train.checkpointEverySteps", "checkpoint_every", every, why))


def add_training_arguments(parser: Any) -> None:
    parser.add_argument("--data", default=None, help="parquet dataset with a text column (s3://...)")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps (default: one epoch; --smoke: 6)")
    parser.add_argument(
        "--rows",
        type=int,
        default=None,
        help="--smoke: synthetic rows (default: the steps' global batches and one more)",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=None,
        help="optimizer steps between checkpoints (default: the plan's train.checkpointEverySteps; --smoke: 3)",
    )
    parser.add_argument("--learning-rate", type=float, default=2e-4)


def finish_arguments(args: Any) -> Any:
    if args.smoke:
        args.steps = args.steps or 6
    return args
