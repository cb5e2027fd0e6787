"""Checkpoints of the training loop: model, optimizer and step, and each worker's data position
(``ray_gpu.data_position``), written to Ray Train's storage and read back on resume, so a resumed run continues the
data at the row after the last one trained on."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import ray
import ray.train

from ..data_position import (
    DataPosition,
    DataPositionError,
    PositionedBatches,
    id_ranges,
    load_position,
    save_position,
)

STATE_FILE = "state.pt"


def restore(
    checkpoint: Any, engine: Any, model: Any, optimizer: Any, position: DataPosition
) -> tuple[int, DataPosition]:
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
            unexpected = (
                (model.module if hasattr(model, "module") else model)
                .load_state_dict(state["model"], strict=False)
                .unexpected_keys
            )
            if unexpected:
                raise RuntimeError(f"checkpoint keys the model does not have: {unexpected[:5]}")
            optimizer.load_state_dict(state["optimizer"])
            step = state["step"]
        saved = load_position(d, position.rank)
    if saved is None:
        print(
            f"ray-gpu example: rank {position.rank}: the checkpoint of step {step} has no data position; the "
            "data starts from the beginning",
            flush=True,
        )
        return step, position
    try:
        saved.check_fits(position.batch_size, position.world_size, position.rank)
    except DataPositionError as e:
        # The job was resubmitted with another shape (a spec change: GPUs, batch size): the model resumes, but the
        # saved count of batches means other rows now, so the data restarts the saved epoch rather than fail every retry.
        print(
            f"ray-gpu example: rank {position.rank}: {e}; the model resumes from step {step}, the data restarts epoch {saved.epoch}",
            flush=True,
        )
        position.epoch = saved.epoch
        return step, position
    return step, saved


def save(
    step: int,
    metrics: dict[str, Any],
    engine: Any,
    model: Any,
    optimizer: Any,
    position: DataPosition,
    cfg: dict[str, Any],
) -> None:
    """Reports a checkpoint of ``step``: the model and optimizer (rank 0, or every rank under DeepSpeed) and every
    rank's data position, merged by Ray Train into one checkpoint folder."""
    import torch

    with tempfile.TemporaryDirectory() as d:
        if engine is not None:
            engine.save_checkpoint(d, client_state={"step": step})
        elif position.rank == 0:
            inner = model.module if hasattr(model, "module") else model
            trainable_state = {k: v for k, v in inner.state_dict().items() if cfg["save_all"] or "lora_" in k}
            torch.save(
                {"model": trainable_state, "optimizer": optimizer.state_dict(), "step": step},
                os.path.join(d, STATE_FILE),
            )
        save_position(d, position)
        ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(d))


def log_resumed(batches: PositionedBatches, step: int) -> None:
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


def log_position(position: DataPosition, step: int, trained_ids: list[int], resumed_from: int | None) -> None:
    """Prints a worker's data position at a checkpoint and the rows it trained on since the previous one (or since
    it resumed from the checkpoint of step ``resumed_from``; the end-to-end test reads it)."""
    record = {
        **json.loads(position.to_json()),
        "step": step,
        "resumedFrom": resumed_from,
        "rowsSincePrevious": id_ranges(trained_ids),
    }
    print(f"ray-gpu example: data position at checkpoint {json.dumps(record, sort_keys=True)}", flush=True)
