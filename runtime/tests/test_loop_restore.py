"""The example training loop's restore: the model and optimizer come back from the checkpoint, and the data position
too when the run has the shape it was saved with; after a shape change (a resubmitted job with other GPUs or batch
size) the model still resumes and the data restarts the saved epoch instead of failing every retry."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

import torch

from ray_gpu.data_position import DataPosition, save_position
from ray_gpu.examples.checkpoints import STATE_FILE, restore


class _Checkpoint:
    """What ``restore`` uses of a Ray Train checkpoint: a folder on disk."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    @contextlib.contextmanager
    def as_directory(self) -> Iterator[str]:
        yield self.directory


def _checkpoint(d: str, saved: DataPosition) -> tuple[_Checkpoint, torch.nn.Module, torch.optim.Optimizer]:
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 7}, os.path.join(d, STATE_FILE)
    )
    save_position(d, saved)
    return _Checkpoint(d), torch.nn.Linear(3, 2), torch.optim.SGD(torch.nn.Linear(3, 2).parameters(), lr=0.1)


def test_same_shape_resumes_the_data_position() -> None:
    with tempfile.TemporaryDirectory() as d:
        saved = DataPosition(batch_size=4, world_size=2, rank=0, epoch=1, batches_in_epoch=5, rows_consumed=60)
        ckpt, model, optimizer = _checkpoint(d, saved)
        step, position = restore(ckpt, None, model, optimizer, DataPosition(batch_size=4, world_size=2, rank=0))
        assert (step, position.epoch, position.batches_in_epoch) == (7, 1, 5)


def test_a_shape_change_resumes_the_model_and_restarts_the_epoch() -> None:
    with tempfile.TemporaryDirectory() as d:
        saved = DataPosition(batch_size=4, world_size=2, rank=0, epoch=1, batches_in_epoch=5, rows_consumed=60)
        ckpt, model, optimizer = _checkpoint(d, saved)
        step, position = restore(ckpt, None, model, optimizer, DataPosition(batch_size=4, world_size=4, rank=0))
        assert (step, position.epoch, position.batches_in_epoch, position.world_size) == (7, 1, 0, 4)
        restored = torch.load(os.path.join(d, STATE_FILE), weights_only=False)["model"]["weight"]
        assert torch.equal(model.weight.detach(), restored)
