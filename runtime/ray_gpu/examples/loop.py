"""The Ray Train loop the training and SFT examples share: DDP or DeepSpeed as planned, gradient accumulation,
checkpoints to the stack's bucket every ``train.checkpointEverySteps`` optimizer steps and on a spot interruption notice
(``ray_gpu.preemption``: the step in flight is finished and checkpointed), and resume from the last one: model,
optimizer, step and each worker's data position (``ray_gpu.data_position``), so a resumed run continues the data at
the row after the last one trained on instead of starting again from the first row."""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ray
import ray.train
from ray.train.torch import TorchConfig, TorchTrainer

from .. import interruptions, run_record, watchdog
from ..data_position import (
    ROW_ID_COLUMN,
    DataPosition,
    DataPositionError,
    PositionedBatches,
    deterministic_data_config,
    id_ranges,
    load_position,
    resumable_batches,
    save_position,
)
from ..loss import use_chunked_loss
from ..preemption import Preemption
from ..telemetry import StepTelemetry
from ..tuning import Tuning
from . import common

STATE_FILE = "state.pt"
#: What the driver prints of the workers' counted run (``Observed.ran``), as ``ray-gpu example: ran with {...}``.
RAN_KEYS = ("world_size", "rows_per_forward", "forwards_per_optimizer_step", "optimizer_steps", "global_samples_per_optimizer_step")
SMOKE_TOKENS = 64
#: Steps between checkpoints of a smoke run (a stand-in for the planned cadence: smoke runs are a few steps long).
SMOKE_CHECKPOINT_EVERY = 3


def training_dataset(
    args: Any, tuning: Tuning, max_length: int, columns: tuple[str, ...] = ("text",), preprocess: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> Any:
    """Tokenized rows: ``--data`` (parquet with ``columns``), or synthetic text for --smoke. ``preprocess``
    replaces the text tokenizer (vision-language rows)."""
    model, smoke = tuning.model, args.smoke

    def tokenize(batch: dict[str, Any]) -> dict[str, Any]:
        out = common.tokenizer(model, smoke)(list(batch["text"]), max_length)
        return {**common.ids_of(batch), "input_ids": out["input_ids"], "attention_mask": out["attention_mask"]}

    if smoke:
        # Row ids travel with the rows: a resumed run checks and logs where its data continues (data_position).
        ds = ray.data.range(args.rows).map_batches(lambda b: {"id": b["id"], "text": common.synthetic_texts(int(b["id"][0]), len(b["id"]), 48)})
    elif args.data:
        ds = ray.data.read_parquet(args.data, columns=list(columns))
    else:
        raise SystemExit(f"--data is required outside --smoke: a parquet dataset with columns {', '.join(columns)}")
    return ds.map_batches(preprocess if preprocess and not smoke else tokenize)


def _restore(checkpoint: Any, engine: Any, model: Any, optimizer: Any, position: DataPosition) -> tuple[int, DataPosition]:
    """The step and data position of ``checkpoint``, with the model and optimizer state loaded from it. A checkpoint
    without a data position (written before they were saved) starts the data from the beginning."""
    import torch

    with checkpoint.as_directory() as d:
        if engine is not None:
            _, client = engine.load_checkpoint(d)
            step = client["step"]
        else:
            state = torch.load(os.path.join(d, STATE_FILE), weights_only=False)
            # LoRA checkpoints hold only the adapters: missing base weights are expected, unknown keys are not.
            unexpected = (model.module if hasattr(model, "module") else model).load_state_dict(state["model"], strict=False).unexpected_keys
            if unexpected:
                raise RuntimeError(f"checkpoint keys the model does not have: {unexpected[:5]}")
            optimizer.load_state_dict(state["optimizer"])
            step = state["step"]
        saved = load_position(d, position.rank)
    if saved is None:
        print(f"ray-gpu example: rank {position.rank}: the checkpoint of step {step} has no data position; the data starts from the beginning", flush=True)
        return step, position
    try:
        saved.check_fits(position.batch_size, position.world_size, position.rank)
    except DataPositionError as e:
        # The job was resubmitted with another shape (a spec change: GPUs, batch size): the model resumes, but the
        # saved count of batches means other rows now, so the data restarts the saved epoch rather than fail every retry.
        print(f"ray-gpu example: rank {position.rank}: {e}; the model resumes from step {step}, the data restarts epoch {saved.epoch}", flush=True)
        position.epoch = saved.epoch
        return step, position
    return step, saved


def _save(step: int, metrics: dict[str, Any], engine: Any, model: Any, optimizer: Any, position: DataPosition, cfg: dict[str, Any]) -> None:
    """Reports a checkpoint of ``step``: the model and optimizer (rank 0, or every rank under DeepSpeed) and every
    rank's data position, merged by Ray Train into one checkpoint folder."""
    import torch

    with tempfile.TemporaryDirectory() as d:
        if engine is not None:
            engine.save_checkpoint(d, client_state={"step": step})
        elif position.rank == 0:
            inner = model.module if hasattr(model, "module") else model
            trainable_state = {k: v for k, v in inner.state_dict().items() if cfg["save_all"] or "lora_" in k}
            torch.save({"model": trainable_state, "optimizer": optimizer.state_dict(), "step": step}, os.path.join(d, STATE_FILE))
        save_position(d, position)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(d))


def _log_resumed(batches: PositionedBatches, step: int) -> None:
    """Prints where a resumed worker's data continues (the end-to-end test reads it)."""
    r = batches.resumed
    if r is None:
        return
    record = {
        "rank": batches.position.rank,
        "step": step,
        "epoch": r.epoch,
        "batch": r.skipped_batches,
        "skippedRows": r.skipped_rows,
        "recordedRowIds": r.recorded_row_ids,
        "lastSkippedRowIds": r.last_skipped_row_ids,
        "firstRowIds": r.first_row_ids,
    }
    print(f"ray-gpu example: resumed data position {json.dumps(record, sort_keys=True)}", flush=True)


def _log_position(position: DataPosition, step: int, trained_ids: list[int], resumed_from: int | None) -> None:
    """Prints a worker's data position at a checkpoint and the rows it trained on since the previous one (or since
    it resumed from the checkpoint of step ``resumed_from``; the end-to-end test reads it)."""
    record = {**json.loads(position.to_json()), "step": step, "resumedFrom": resumed_from, "rowsSincePrevious": id_ranges(trained_ids)}
    print(f"ray-gpu example: data position at checkpoint {json.dumps(record, sort_keys=True)}", flush=True)


@dataclass
class Built:
    """What a worker trains: the model (wrapped by DDP or DeepSpeed), its optimizer, the DeepSpeed engine (None for
    DDP), the trainable parameters, the chunked loss head when the plan chose that loss (None otherwise), and the
    counters of what it really runs."""

    model: Any
    optimizer: Any
    engine: Any
    trainable: list[Any]
    chunked: Any
    observed: Observed


class Observed:
    """What a worker really ran, counted by hooks on the model and the optimizer: the rows of every forward (from the
    inputs the model received) and the forwards between optimizer steps (PyTorch's step hook; under DeepSpeed the
    engine steps the optimizer itself). The driver compares these with the plan, never the plan with itself."""

    def __init__(self, model: Any, optimizer: Any) -> None:
        self.rows_per_forward: set[int] = set()
        self.forwards_per_step: set[int] = set()
        self.samples = self.optimizer_steps = self._forwards = 0
        model.register_forward_pre_hook(self._forward, with_kwargs=True)
        optimizer.register_step_post_hook(self._stepped)

    def _forward(self, _module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        ids = kwargs["input_ids"] if "input_ids" in kwargs else args[0]
        self.rows_per_forward.add(int(ids.shape[0]))
        self.samples += int(ids.shape[0])
        self._forwards += 1

    def _stepped(self, *_: Any) -> None:
        self.forwards_per_step.add(self._forwards)
        self._forwards = 0
        self.optimizer_steps += 1

    def ran(self) -> dict[str, Any]:
        """World size (Ray Train's), rows per forward, forwards per optimizer step, and the samples all workers fed
        per optimizer step (summed across workers with the process group: what the global batch is)."""
        import torch
        import torch.distributed as dist

        seen = torch.tensor([self.samples], dtype=torch.int64)
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(seen)
        return {
            "world_size": ray.train.get_context().get_world_size(),
            "rows_per_forward": sorted(self.rows_per_forward),
            "forwards_per_optimizer_step": sorted(self.forwards_per_step),
            "optimizer_steps": self.optimizer_steps,
            "global_samples_per_optimizer_step": _per(int(seen.item()), self.optimizer_steps),
        }


def _per(total: int, count: int) -> float | int:
    """``total / count``, a whole number when it divides evenly."""
    return total // count if count and total % count == 0 else total / max(1, count)


def _measured(telemetry: StepTelemetry) -> list[dict[str, Any]]:
    """Every worker's :class:`StepTelemetry` summary and peak GPU memory in GiB (None without CUDA), gathered from
    all ranks (a collective: every rank calls it at the same step), for the driver's run record."""
    import torch
    import torch.distributed as dist

    mine = {**telemetry.summary(), "peakGiB": torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None}
    if not (dist.is_available() and dist.is_initialized()):
        return [mine]
    everyone: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    return everyone


def _record(tuning: Tuning, metrics: dict[str, Any]) -> None:
    """Writes the run record from what the workers measured (the last report's ``workers``); a run that reported
    no final step (it resumed at its end) has nothing measured and writes none."""
    workers = metrics.get("workers")
    if not workers:
        return
    peaks = run_record.gpu_memory_section(w["peakGiB"] for w in workers if w.get("peakGiB") is not None)
    run_record.write(tuning, train=run_record.train_section(workers), gpuMemory=peaks)


#: ``torch.optim.AdamW`` flags per planned ``optimizerStep`` (the memory plan counts each one's temporaries). Fused
#: kernels need CUDA tensors here, so the CPU stand-in steps a fused plan one parameter at a time.
OPTIMIZER_STEP_FLAGS: dict[str, dict[str, bool]] = {
    "fused": {"fused": True},
    "foreach": {"foreach": True},
    "for-loop": {"foreach": False},
}


def adamw(params: list[Any], lr: float, step: str) -> Any:
    """AdamW constructed the way the plan's ``optimizerStep`` says."""
    import torch

    flags = OPTIMIZER_STEP_FLAGS[step]
    if flags.get("fused") and not torch.cuda.is_available():
        flags = {"foreach": False}
    return torch.optim.AdamW(params, lr=lr, **flags)


def _build(cfg: dict[str, Any]) -> Built:
    """The model, its optimizer and engine as planned (DDP, or DeepSpeed when the plan uses ZeRO)."""
    model = cfg["build_model"]()
    if cfg["gradient_checkpointing"]:
        model.gradient_checkpointing_enable()
    # The planned loss: "chunked" scores loss_chunk_tokens tokens at a time (same loss, logits of one chunk at once).
    chunked = use_chunked_loss(model) if cfg["loss"] == "chunked" else None
    trainable = [p for p in model.parameters() if p.requires_grad]
    if cfg["deepspeed"] is None:
        # Plain DDP: fp32 master weights, bf16 compute on GPUs (the plan's bf16-mixed).
        optimizer = adamw(trainable, cfg["learning_rate"], cfg["optimizer_step"])
        observed = Observed(model, optimizer)
        return Built(ray.train.torch.prepare_model(model), optimizer, None, trainable, chunked, observed)
    import deepspeed  # the image must have it when the plan uses ZeRO

    if cfg.get("optimizer_class") == "deepspeed.ops.adam.DeepSpeedCPUAdam":
        from deepspeed.ops.adam import DeepSpeedCPUAdam  # offloaded optimizer steps run only with it

        base_optimizer = DeepSpeedCPUAdam(trainable, lr=cfg["learning_rate"])
    else:
        base_optimizer = adamw(trainable, cfg["learning_rate"], cfg["optimizer_step"])
    observed = Observed(model, base_optimizer)
    # DeepSpeed applies bf16, ZeRO partitioning, accumulation and clipping from the planned config.
    engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=base_optimizer, config=cfg["deepspeed"])
    return Built(engine, optimizer, engine, trainable, chunked, observed)


def _start(engine: Any, model: Any, optimizer: Any, micro: int) -> tuple[int, DataPosition, int | None]:
    """The step and data position to start from (a checkpoint's, when Ray Train resumes one) and the step resumed
    from (None for a run from the beginning)."""
    context = ray.train.get_context()
    position = DataPosition(batch_size=micro, world_size=context.get_world_size(), rank=context.get_world_rank())
    checkpoint = ray.train.get_checkpoint()
    if not checkpoint:
        return 0, position, None
    step, position = _restore(checkpoint, engine, model, optimizer, position)
    if position.rank == 0:
        print(f"ray-gpu example: resumed from checkpoint at step {step}", flush=True)
    return step, position, step


def _micro_step(
    cfg: dict[str, Any], model: Any, engine: Any, step_loss: Callable[[Any, Any], Any], autocast: Any, batch: Any, boundary: bool
) -> tuple[Any, int]:
    """Forward and backward of one micro-batch (DeepSpeed accumulates and steps at the boundary itself; DDP
    all-reduces gradients only on the last micro-batch of each optimizer step). Returns the loss and the batch's rows."""
    batch.pop(ROW_ID_COLUMN, None)
    batch = cfg["prepare_batch"](model, batch)
    # Padding (and image tokens, when marked) carry no loss.
    labels = batch.pop("labels", None)
    if labels is None:
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    if engine is not None:
        loss = step_loss(batch, labels)
        engine.backward(loss)
        engine.step()
        return loss, int(batch["input_ids"].shape[0])
    with contextlib.nullcontext() if boundary or not hasattr(model, "no_sync") else model.no_sync():
        with autocast:
            loss = step_loss(batch, labels)
        (loss / cfg["gradient_accumulation_steps"]).backward()
    return loss, int(batch["input_ids"].shape[0])


def _train_loop(cfg: dict[str, Any]) -> None:
    import torch

    built = _build(cfg)
    model, optimizer, engine, chunked = built.model, built.optimizer, built.engine, built.chunked

    def step_loss(batch: Any, labels: Any) -> Any:
        if chunked is None:
            return model(**batch, labels=labels).loss
        return chunked.loss(model(**batch).logits, labels, cfg["loss_chunk_tokens"])

    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if engine is None and torch.cuda.is_available() else contextlib.nullcontext()
    accumulation, micro = cfg["gradient_accumulation_steps"], cfg["micro_batch_size"]
    step, position, resumed_from = _start(engine, model, optimizer, micro)
    reporter = cfg["watchdog"]
    reporter.started(step)  # a (re)started loop restarts the watchdog's clock
    shard = ray.train.get_dataset_shard("train")
    # Epoch after epoch, continuing where the checkpoint's data position says this worker stopped.
    batches = resumable_batches(lambda: shard.iter_torch_batches(batch_size=micro, drop_last=True), position)
    started, micro_steps, trained_ids = time.time(), 0, []
    # Time waiting for each micro-batch against time computing it: the data-wait fraction (ray_gpu.telemetry).
    telemetry = StepTelemetry(cfg["workload"], rank=position.rank)
    preemption = Preemption.start(position.rank, ray.train.get_context().get_local_rank())
    for batch in telemetry.batches(batches) if step < cfg["steps"] else []:
        if micro_steps == 0:
            _log_resumed(batches, step)
        trained_ids += batches.position.last_row_ids or []
        micro_steps += 1
        tokens = int(batch["attention_mask"].sum()) if "attention_mask" in batch else 0
        loss, rows = _micro_step(cfg, model, engine, step_loss, autocast, batch, micro_steps % accumulation == 0)
        telemetry.step(samples=rows, tokens=tokens)
        if micro_steps % accumulation == 1 % accumulation:  # the step's first micro-batch is computed
            interruptions.await_notice_mid_step(step + 1, batches.position.rank, resumed_from, cfg["notice_mid_step"])
        if micro_steps % accumulation:
            continue
        if engine is None:
            torch.nn.utils.clip_grad_norm_(built.trainable, 1.0)
            optimizer.step()
            optimizer.zero_grad()
        step += 1
        reporter.progress(step)
        # A spot interruption notice (ray_gpu.preemption): every rank asks at every step, so all see it at the same one.
        notice = preemption.noticed()
        if step % cfg["checkpoint_every"] == 0 or step == cfg["steps"] or notice is not None:
            # What the workers really ran (counted by hooks), for the driver to compare with the plan.
            metrics = {"step": step, "loss": float(loss), "seconds": round(time.time() - started, 2), **built.observed.ran()}
            if step == cfg["steps"]:
                metrics["workers"] = _measured(telemetry)  # the run record's train and GPU memory (driver: _record)
            _log_position(batches.position, step, trained_ids, resumed_from)
            _save(step, metrics, engine, model, optimizer, batches.position, cfg)
            trained_ids = []
            interruptions.kill_after_checkpoint(step, batches.position.rank, resumed_from, cfg["kill_after_checkpoint_step"])
            if notice is not None:
                reporter.stopped(step)  # waiting for Ray Train's restart is not a stall
                preemption.after_checkpoint(step, notice)  # never returns: Ray Train restarts the run from this step
        if step >= cfg["steps"]:
            break
    reporter.stopped(step)
    telemetry.log()


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
        """The config each worker's :func:`_train_loop` reads."""
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


def run(args: Any, tuning: Tuning, build_model: Callable[[], Any], prepare_batch: Callable[[Any, Any], Any], save_all: bool, **dataset_kwargs: Any) -> Any:
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
    args: Any, tuning: Tuning, build_model: Callable[[], Any], prepare_batch: Callable[[Any, Any], Any], save_all: bool, **dataset_kwargs: Any
) -> PlannedRun:
    """The run's settings from the plan and the arguments (a smoke run's stand-ins named in the report)."""
    loop = tuning.train_loop_config()
    deepspeed = _deepspeed(tuning, loop)
    scaling, run_config = tuning.scaling_config(), tuning.run_config()
    max_length = loop["sequence_length"]
    if args.smoke:
        max_length = tuning.stand_in("knobs.sequenceLength", "max_length", min(max_length, SMOKE_TOKENS), "smoke rows are short synthetic text")
    global_batch = loop["global_batch_size"]
    if args.smoke and args.rows is None:
        # The run's steps and one global batch more: synthetic rows no step trains on would only be tokenized.
        args.rows = (args.steps + 1) * global_batch
    dataset = training_dataset(args, tuning, max_length, **dataset_kwargs)
    # Count rows before preprocessing (cheap) rather than tokenizing everything twice.
    steps = args.steps or math.ceil(
        (args.rows if args.smoke else ray.data.read_parquet(args.data, columns=[dataset_kwargs.get("columns", ("text",))[0]]).count()) / global_batch
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
        _train_loop,
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
        f"ray-gpu example: finished at step {metrics.get('step')} of {planned.steps}; checkpoint {result.checkpoint.path if result.checkpoint else None}",
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
    parser.add_argument("--rows", type=int, default=None, help="--smoke: synthetic rows (default: the steps' global batches and one more)")
    parser.add_argument(
        "--checkpoint-every", type=int, default=None, help="optimizer steps between checkpoints (default: the plan's train.checkpointEverySteps; --smoke: 3)"
    )
    parser.add_argument("--learning-rate", type=float, default=2e-4)


def finish_arguments(args: Any) -> Any:
    if args.smoke:
        args.steps = args.steps or 6
    return args
