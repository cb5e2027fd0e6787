"""A resumed run continues its data where the interrupted one stopped (ray_gpu.data_position): exactly the row after
the last one trained on, none twice, none skipped; first with plain iterables, then with Ray Train and Ray Data."""

from __future__ import annotations

import itertools
import json
import os

import pytest

from ray_gpu.data_position import (
    DataPosition,
    DataPositionError,
    id_ranges,
    load_position,
    resumable_batches,
    save_position,
)


def epochs_of(rows: int, batch: int, rank: int = 0, world: int = 1):
    """One epoch of a deterministic shard: rank ``rank``'s round-robin share of ``rows`` rows, in full batches."""
    mine = list(range(rank, rows, world))
    return lambda: iter([{"id": mine[i : i + batch]} for i in range(0, len(mine) - batch + 1, batch)])


def take(batches, n: int) -> list[list[int]]:
    return [b["id"] for b in itertools.islice(batches, n)]


@pytest.mark.parametrize("interrupt_after", [1, 5, 9, 10, 13, 25])
def test_a_resumed_run_continues_at_the_row_after_the_last_one_trained(tmp_path, interrupt_after):
    epoch = epochs_of(rows=40, batch=4)  # 10 batches an epoch: interruptions inside, at the end of and after epoch 0
    reference = take(resumable_batches(epoch, DataPosition(4, 1, 0)), 30)
    interrupted = resumable_batches(epoch, DataPosition(4, 1, 0))
    trained = take(interrupted, interrupt_after)
    save_position(str(tmp_path), interrupted.position)  # the checkpoint, after training on those batches
    restored = load_position(str(tmp_path), rank=0)
    assert restored == interrupted.position and restored.epoch == (interrupt_after - 1) // 10
    resumed = resumable_batches(epoch, restored)
    continued = take(resumed, 30 - interrupt_after)
    assert continued[0] == reference[interrupt_after], (
        "the first batch after resuming is the one after the last trained"
    )
    assert trained + continued == reference, "nothing trained twice, nothing skipped"
    assert (
        resumed.resumed is not None
        and resumed.resumed.last_skipped_row_ids == trained[-1] == resumed.resumed.recorded_row_ids
    )
    assert resumed.resumed.first_row_ids == continued[0]


def test_a_resume_over_data_in_another_order_stops_instead_of_training_rows_twice(tmp_path):
    run = resumable_batches(epochs_of(rows=40, batch=4), DataPosition(4, 1, 0))
    take(run, 3)
    reordered = lambda: reversed(list(epochs_of(rows=40, batch=4)()))  # noqa: E731
    with pytest.raises(
        DataPositionError,
        match=r"batch 3 of epoch 0 is rows \[28, 29, 30, 31\], the checkpoint recorded rows \[8, 9, 10, 11\]",
    ):
        take(resumable_batches(reordered, run.position), 1)
    with pytest.raises(DataPositionError, match="epoch 0 ended after 2 batches; the checkpoint says 3"):
        take(resumable_batches(epochs_of(rows=8, batch=4), run.position), 1)


def test_a_position_from_another_batch_size_or_worker_count_is_refused():
    saved = DataPosition(batch_size=4, world_size=2, rank=1, batches_in_epoch=3, rows_consumed=12)
    saved.check_fits(4, 2, 1)
    with pytest.raises(DataPositionError, match="batch size 4, 2 workers, rank 1; this run has 8, 2, 1"):
        saved.check_fits(8, 2, 1)


def test_an_epoch_without_a_full_batch_is_an_error_not_a_hang():
    with pytest.raises(DataPositionError, match="epoch 0 has no full batch of 4 rows"):
        take(resumable_batches(epochs_of(rows=3, batch=4), DataPosition(4, 1, 0)), 1)


def test_positions_round_trip_and_malformed_ones_are_refused(tmp_path):
    p = DataPosition(
        batch_size=2, world_size=4, rank=3, epoch=1, batches_in_epoch=7, rows_consumed=54, last_row_ids=[9, 13]
    )
    assert DataPosition.from_json(p.to_json()) == p
    assert load_position(str(tmp_path), rank=0) is None, (
        "a checkpoint without a position starts the data from the beginning"
    )
    for bad in (
        '{"batchSize": 2}',
        "[]",
        '{"batchSize": -1, "worldSize": 1, "rank": 0, "epoch": 0, "batchesInEpoch": 0, "rowsConsumed": 0}',
        "\xff",
    ):
        with pytest.raises(DataPositionError, match="not a saved data position"):
            DataPosition.from_json(bad)
    assert id_ranges([0, 1, 2, 7, 8, 4]) == [[0, 2], [7, 8], [4, 4]]


# ---- Ray Train and Ray Data -----------------------------------------------------------------------------------
ROWS, BATCH, WORKERS, STEPS, EVERY, FAIL_AFTER = 400, 10, 2, 30, 7, 15


def _loop(cfg: dict) -> None:
    """One batch per step; checkpoints every EVERY steps with each rank's data position; the first attempt dies one
    step after its second checkpoint (step 14), having trained on the batch of step 15. Ray restores step 14's
    checkpoint, or step 7's where its controller had not yet taken step 14's report: the test accepts either."""
    import tempfile

    import ray.train

    from ray_gpu.data_position import DataPosition, load_position, resumable_batches, save_position

    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    position, step, checkpoint = DataPosition(BATCH, ctx.get_world_size(), rank), 0, ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            position = load_position(d, rank)
            step = position.rows_consumed // BATCH
    shard = ray.train.get_dataset_shard("train")
    batches = resumable_batches(
        lambda: shard.iter_batches(batch_size=BATCH, drop_last=True, batch_format="numpy"), position
    )
    with open(os.path.join(cfg["log"], f"rank{rank}.jsonl"), "a", encoding="utf-8") as log:
        for batch in batches:
            step += 1
            log.write(json.dumps({"resumed": checkpoint is not None, "step": step, "ids": batch["id"].tolist()}) + "\n")
            log.flush()
            if checkpoint is None and step == FAIL_AFTER:
                raise RuntimeError("injected failure after the checkpoint of step 14")
            if step % EVERY == 0 or step == STEPS:
                with tempfile.TemporaryDirectory() as d:
                    save_position(d, batches.position)
                    ray.train.report({"step": step}, checkpoint=ray.train.Checkpoint.from_directory(d))
            if step == STEPS:
                break


def test_ray_train_resumes_the_data_of_every_worker_after_a_failure(tmp_path, ray_local):
    import ray.data
    from ray.train import FailureConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    from ray_gpu import deterministic_data_config

    log = tmp_path / "log"
    log.mkdir()
    data = ray.data.range(ROWS, override_num_blocks=8).map_batches(lambda b: {"id": b["id"], "twice": b["id"] * 2})
    trainer = TorchTrainer(
        _loop,
        train_loop_config={"log": str(log)},
        torch_config=TorchConfig(backend="gloo"),
        scaling_config=ScalingConfig(num_workers=WORKERS, resources_per_worker={"CPU": 0.5}),
        run_config=RunConfig(
            name="resume", storage_path=str(tmp_path / "storage"), failure_config=FailureConfig(max_failures=1)
        ),
        datasets={"train": data},
        dataset_config=deterministic_data_config(),
    )
    assert trainer.fit().metrics["step"] == STEPS
    per_epoch = ROWS // WORKERS // BATCH
    epoch0: list[int] = []
    resumed_from: set[int] = set()
    for rank in range(WORKERS):
        records = [json.loads(line) for line in (log / f"rank{rank}.jsonl").read_text().splitlines()]
        first = {r["step"]: r["ids"] for r in records if not r["resumed"]}
        second = {r["step"]: r["ids"] for r in records if r["resumed"]}
        # Ray Train restores the latest checkpoint its controller registered before the failure: step 14's, or step 7's
        # when the worker died before the controller took step 14's report (the report is queued, not awaited).
        restored = min(second) - 1
        resumed_from.add(restored)
        assert restored in (EVERY, 2 * EVERY), (rank, restored)
        assert sorted(first) == list(range(1, FAIL_AFTER + 1)) and sorted(second) == list(
            range(restored + 1, STEPS + 1)
        ), rank
        # The resumed attempt starts exactly at the row after the last one the restored checkpoint counted: the batch
        # the interrupted attempt trained on right after it.
        assert second[restored + 1] == first[restored + 1], rank
        trained = [first[s] for s in range(1, restored + 1)] + [second[s] for s in range(restored + 1, STEPS + 1)]
        epoch0 += [i for ids in trained[:per_epoch] for i in ids]
        assert trained[per_epoch:] == trained[: STEPS - per_epoch], f"rank {rank}: epoch 1 repeats epoch 0's order"
    assert len(resumed_from) == 1, f"every worker resumes from the same checkpoint: {resumed_from}"
    assert sorted(epoch0) == list(range(ROWS)), "epoch 0 trained every row exactly once across the interruption"
