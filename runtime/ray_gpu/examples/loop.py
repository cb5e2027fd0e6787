"""The Ray Train loop each worker of the training and SFT examples runs: DDP or DeepSpeed as planned, gradient
accumulation, checkpoints to the stack's bucket every ``train.checkpointEverySteps`` optimizer steps and on a spot
interruption notice (``ray_gpu.preemption``: the step in flight is finished and checkpointed), and resume from the last
one (``checkpoints``: model, optimizer, step and each worker's data position, so a resumed run continues the data at
the row after the last one trained on). The driver that starts it is ``driver``."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ray
import ray.train

from .. import interruptions
from ..data_position import (
    ROW_ID_COLUMN,
    DataPosition,
    resumable_batches,
)
from ..loss import use_chunked_loss
from ..preemption import Preemption
from ..telemetry import StepTelemetry
from . import checkpoints
from .precision import StepPrecision


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

    mine = {
        **telemetry.summary(),
        "peakGiB": torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None,
    }
    if not (dist.is_available() and dist.is_initialized()):
        return [mine]
    everyone: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    return everyone


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
        # Plain DDP: the weights as the planned precision loaded them, its autocast around each step (StepPrecision).
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
    step, position = checkpoints.restore(checkpoint, engine, model, optimizer, position)
    if position.rank == 0:
        print(f"ray-gpu example: resumed from checkpoint at step {step}", flush=True)
    return step, position, step


#: Prefixes of the environment NCCL and its transports read: NCCL itself, libfabric (EFA) and the aws-ofi-nccl plugin.
TRANSPORT_ENV_PREFIXES = ("NCCL_", "FI_", "OFI_NCCL_")
#: What each worker prints as its loop starts, then a JSON object (``log_worker``; the end-to-end test reads it).
WORKER_STARTED = "ray-gpu example: worker started "


def log_worker(resumed_from: int | None) -> None:
    """Prints where Ray Train placed this worker and the transport environment its process got (the worker pod's,
    through the node's raylet): rank, world size, local and node rank, Ray node id, and the step it resumed from."""
    context = ray.train.get_context()
    record = {
        "rank": context.get_world_rank(),
        "worldSize": context.get_world_size(),
        "localRank": context.get_local_rank(),
        "nodeRank": context.get_node_rank(),
        "nodeId": ray.get_runtime_context().get_node_id(),
        "resumedFrom": resumed_from,
        "transportEnv": {k: v for k, v in sorted(os.environ.items()) if k.startswith(TRANSPORT_ENV_PREFIXES)},
    }
    print(f"{WORKER_STARTED}{json.dumps(record, sort_keys=True)}", flush=True)


def _micro_step(
    cfg: dict[str, Any],
    model: Any,
    engine: Any,
    step_loss: Callable[[Any, Any], Any],
    precision: StepPrecision,
    batch: Any,
    boundary: bool,
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
        with precision.autocast():
            loss = step_loss(batch, labels)
        precision.backward(loss / cfg["gradient_accumulation_steps"])
    return loss, int(batch["input_ids"].shape[0])


def train_loop(cfg: dict[str, Any]) -> None:
    built = _build(cfg)
    model, optimizer, engine, chunked = built.model, built.optimizer, built.engine, built.chunked

    def step_loss(batch: Any, labels: Any) -> Any:
        if chunked is None:
            return model(**batch, labels=labels).loss
        return chunked.loss(model(**batch).logits, labels, cfg["loss_chunk_tokens"])

    # The planned precision on plain DDP (DeepSpeed's config carries it under ZeRO).
    precision = StepPrecision(cfg["precision"], ddp=engine is None)
    accumulation, micro = cfg["gradient_accumulation_steps"], cfg["micro_batch_size"]
    step, position, resumed_from = _start(engine, model, optimizer, micro)
    log_worker(resumed_from)
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
            checkpoints.log_resumed(batches, step)
        trained_ids += batches.position.last_row_ids or []
        micro_steps += 1
        tokens = int(batch["attention_mask"].sum()) if "attention_mask" in batch else 0
        loss, rows = _micro_step(cfg, model, engine, step_loss, precision, batch, micro_steps % accumulation == 0)
        telemetry.step(samples=rows, tokens=tokens)
        if micro_steps % accumulation == 1 % accumulation:  # the step's first micro-batch is computed
            interruptions.await_notice_mid_step(step + 1, batches.position.rank, resumed_from, cfg["notice_mid_step"])
        if micro_steps % accumulation:
            continue
        if engine is None:
            precision.step(optimizer, built.trainable)
            optimizer.zero_grad()
        step += 1
        reporter.progress(step)
        # A spot interruption notice (ray_gpu.preemption): every rank asks at every step, so all see it at the same one.
        notice = preemption.noticed()
        if step % cfg["checkpoint_every"] == 0 or step == cfg["steps"] or notice is not None:
            # What the workers really ran (counted by hooks), for the driver to compare with the plan.
            metrics = {
                "step": step,
                "loss": float(loss),
                "seconds": round(time.time() - started, 2),
                **built.observed.ran(),
            }
            if step == cfg["steps"]:
                metrics["workers"] = _measured(telemetry)  # the run record's train and GPU memory (driver: _record)
            checkpoints.log_position(batches.position, step, trained_ids, resumed_from)
            checkpoints.save(step, metrics, engine, model, optimizer, batches.position, cfg)
            trained_ids = []
            interruptions.kill_after_checkpoint(
                step, batches.position.rank, resumed_from, cfg["kill_after_checkpoint_step"]
            )
            if notice is not None:
                reporter.stopped(step)  # waiting for Ray Train's restart is not a stall
                preemption.after_checkpoint(step, notice)  # never returns: Ray Train restarts the run from this step
        if step >= cfg["steps"]:
            break
    reporter.stopped(step)
    telemetry.log()
