"""Committed outputs (ray_gpu.outputs): a rerun keeps the previous results until it commits, a failed or killed
write is never read, and the marker's row counts are the rows written. Real PyArrow files; real Ray Data where noted."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs

import ray_gpu
from ray_gpu import outputs
from ray_gpu.outputs import MARKER, POINTER, RUNS_DIR, STAGING_DIR, OutputError


def write_parts(folder: str, first_id: int, rows_per_file: list[int]) -> int:
    """Parquet files ``part-<i>.parquet`` (a path or a URI) with consecutive ids from ``first_id``; returns the rows written."""
    filesystem, path = fs.FileSystem.from_uri(folder if "://" in folder else os.path.abspath(folder))
    filesystem.create_dir(path, recursive=True)
    start = first_id
    for i, rows in enumerate(rows_per_file):
        pq.write_table(
            pa.table({"id": list(range(start, start + rows))}), f"{path}/part-{i}.parquet", filesystem=filesystem
        )
        start += rows
    return start - first_id


def commit_run(uri: str, first_id: int, rows_per_file: list[int], **kwargs) -> ray_gpu.CommittedRun:
    with ray_gpu.staged_output(uri, **kwargs) as staged:
        write_parts(staged.staging_uri, first_id, rows_per_file)
    assert staged.committed is not None
    return staged.committed


def ids(uri: str) -> list[int]:
    return sorted(ray_gpu.read_committed(uri).column("id").to_pylist())


def test_a_commit_moves_the_files_then_writes_the_marker_and_the_pointer(tmp_path):
    out = str(tmp_path / "out")
    run = commit_run(out, 0, [3, 5, 7])
    folder = os.path.join(out, RUNS_DIR, run.run_id)
    assert sorted(os.listdir(folder)) == [MARKER, "part-0.parquet", "part-1.parquet", "part-2.parquet"]
    assert os.listdir(os.path.join(out, STAGING_DIR)) == [], "the staging folder is removed after the commit"
    marker = json.loads(Path(folder, MARKER).read_text())
    pointer = json.loads(Path(out, POINTER).read_text())
    assert pointer == {
        "format": outputs.MARKER_FORMAT,
        "runId": run.run_id,
        "marker": f"{RUNS_DIR}/{run.run_id}/{MARKER}",
    }
    assert marker["runId"] == run.run_id and marker["fileCount"] == 3 and marker["totalRows"] == 15
    assert [f["path"] for f in marker["files"]] == ["part-0.parquet", "part-1.parquet", "part-2.parquet"]
    for f in marker["files"]:  # rows and bytes are the written files' own
        path = os.path.join(folder, f["path"])
        assert f["rows"] == pq.read_table(path).num_rows and f["bytes"] == os.path.getsize(path)
    assert ray_gpu.latest_output(out) == run
    assert ids(out) == list(range(15))
    assert ray_gpu.latest_output(folder).run_id == run.run_id, "a committed run folder reads as itself"


def test_a_rerun_keeps_the_previous_run_until_it_commits(tmp_path):
    out = str(tmp_path / "out")
    first = commit_run(out, 0, [10, 10])
    staged = outputs.StagedOutput(out)
    write_parts(staged.staging_uri, 100, [4, 4, 4])
    assert ray_gpu.latest_output(out) == first and ids(out) == list(range(20)), "staged files are not read"
    second = staged.commit()
    assert ray_gpu.latest_output(out) == second and ids(out) == list(range(100, 112))
    assert [r.run_id for r in outputs.committed_runs(out)] == [first.run_id, second.run_id], "the previous run is kept"
    third = commit_run(out, 200, [1])
    assert [r.run_id for r in outputs.committed_runs(out)] == [second.run_id, third.run_id], (
        "older runs are pruned after a commit"
    )
    assert not os.path.exists(os.path.join(out, RUNS_DIR, first.run_id))


def test_a_write_that_raises_commits_nothing_and_leaves_the_previous_run_latest(tmp_path):
    out = str(tmp_path / "out")
    first = commit_run(out, 0, [6])
    with pytest.raises(RuntimeError, match="died mid-write"), ray_gpu.staged_output(out) as staged:
        write_parts(staged.staging_uri, 50, [5, 5])
        raise RuntimeError("died mid-write")
    assert not os.path.exists(staged.staging_uri), "a failed write's staging folder is deleted"
    assert staged.committed is None and ray_gpu.latest_output(out) == first and ids(out) == list(range(6))


def test_a_killed_write_is_never_read_and_its_folder_is_refused(tmp_path):
    out = str(tmp_path / "out")
    first = commit_run(out, 0, [6])
    killed = outputs.StagedOutput(out)  # the process dies after writing: no abort, no commit
    write_parts(killed.staging_uri, 50, [5, 5])
    assert ray_gpu.latest_output(out) == first and ids(out) == list(range(6))
    with pytest.raises(OutputError, match=r"holds no committed output: it has no _SUCCESS\.json marker"):
        ray_gpu.latest_output(killed.staging_uri)
    with pytest.raises(OutputError, match=r"no _SUCCESS\.json marker"):
        ray_gpu.read_committed(killed.staging_uri)


def test_a_commit_killed_before_its_marker_leaves_a_run_folder_that_is_never_read(tmp_path, monkeypatch):
    out = str(tmp_path / "out")
    first = commit_run(out, 0, [6])
    staged = outputs.StagedOutput(out)
    write_parts(staged.staging_uri, 50, [5, 5])
    real = outputs._write_whole

    def die_at_the_marker(filesystem, path, payload):
        if path.endswith(MARKER):
            raise KeyboardInterrupt("killed after moving the files, before the marker")
        real(filesystem, path, payload)

    monkeypatch.setattr(outputs, "_write_whole", die_at_the_marker)
    with pytest.raises(KeyboardInterrupt):
        staged.commit()
    monkeypatch.setattr(outputs, "_write_whole", real)
    dead = os.path.join(out, RUNS_DIR, staged.run_id)
    assert sorted(os.listdir(dead)) == ["part-0.parquet", "part-1.parquet"], (
        "the files moved, the marker was never written"
    )
    assert ray_gpu.latest_output(out) == first and [r.run_id for r in outputs.committed_runs(out)] == [first.run_id]
    with pytest.raises(OutputError, match=r"no _SUCCESS\.json marker"):
        ray_gpu.latest_output(dead)
    assert outputs.prune(out) == [], "a young marker-less folder may be a live writer: left alone"
    pruned = outputs.prune(out, now_s=time.time() + 2 * outputs.STALE_AFTER_S)
    assert sorted(pruned) == sorted([dead, os.path.join(out, STAGING_DIR, staged.run_id)]), (
        "once stale, it and its emptied staging folder are deleted"
    )
    assert ray_gpu.latest_output(out) == first


def test_a_stale_staging_folder_is_deleted_by_the_next_commit_and_a_young_one_is_kept(tmp_path):
    out = str(tmp_path / "out")
    old = os.path.join(out, STAGING_DIR, outputs.new_run_id(time.time() - 2 * outputs.STALE_AFTER_S))
    young = os.path.join(out, STAGING_DIR, outputs.new_run_id())
    write_parts(old, 0, [1])
    write_parts(young, 0, [1])
    commit_run(out, 10, [2])
    assert not os.path.exists(old) and os.path.exists(young)


def test_the_marker_counts_the_rows_of_the_files_and_refuses_a_wrong_count(tmp_path):
    out = str(tmp_path / "out")
    first = commit_run(out, 0, [2])
    with pytest.raises(OutputError, match="wrote 7 rows, expected 8: not committed"):
        commit_run(out, 10, [3, 4], expected_rows=8)
    assert ray_gpu.latest_output(out) == first
    assert commit_run(out, 10, [3, 4], expected_rows=7).total_rows == 7


def test_the_reader_refuses_folders_that_hold_no_committed_run(tmp_path):
    plain = tmp_path / "overwritten"
    write_parts(str(plain), 0, [3])  # what ds.write_parquet(output, mode="overwrite") used to leave
    for folder in (plain, tmp_path / "empty", tmp_path / "missing"):
        if folder.name == "empty":
            folder.mkdir()
        with pytest.raises(OutputError, match=r"holds no committed output: it has no _SUCCESS\.json marker"):
            ray_gpu.latest_output(str(folder))


def test_a_missing_pointer_or_one_naming_a_pruned_run_falls_back_to_the_newest_marker(tmp_path):
    out = str(tmp_path / "out")
    commit_run(out, 0, [1])
    second = commit_run(out, 5, [2])
    os.remove(os.path.join(out, POINTER))
    assert ray_gpu.latest_output(out) == second
    with open(os.path.join(out, POINTER), "w") as f:
        json.dump({"format": outputs.MARKER_FORMAT, "runId": outputs.new_run_id(0), "marker": "gone"}, f)
    assert ray_gpu.latest_output(out) == second


def test_a_damaged_run_is_reported_not_read(tmp_path):
    out = str(tmp_path / "out")
    run = commit_run(out, 0, [3, 3])
    os.remove(os.path.join(out, RUNS_DIR, run.run_id, "part-1.parquet"))
    with pytest.raises(OutputError, match=r"is damaged: part-1\.parquet is missing, its marker says \d+ bytes"):
        ray_gpu.latest_output(out)


def test_uris_work_like_paths_and_keep_their_scheme(tmp_path):
    uri = f"file://{tmp_path}/out"
    run = commit_run(uri, 0, [4])
    assert run.uri.startswith("file://") and all(p.startswith(f"{uri}/{RUNS_DIR}/") for p in run.paths())
    assert ids(uri) == [0, 1, 2, 3]


def test_fewer_than_two_kept_runs_are_refused(tmp_path):
    with pytest.raises(ValueError, match="keep_runs must be at least 2"):
        outputs.StagedOutput(str(tmp_path), keep_runs=1)


def test_ray_data_writes_commit_with_the_rows_of_each_file(tmp_path, ray_local):
    import ray.data

    out = str(tmp_path / "out")
    first = ray_gpu.write_parquet(ray.data.range(1000, override_num_blocks=4), out)
    assert first.total_rows == 1000 and len(first.files) >= 2
    for f, path in zip(first.files, first.paths(), strict=True):
        assert f.rows == pq.read_table(path).num_rows
    second = ray_gpu.write_parquet(
        ray.data.range(300, override_num_blocks=3).map(lambda r: {"id": r["id"] + 5000}), out, expected_rows=300
    )
    assert ray_gpu.latest_output(out) == second and ids(out) == list(range(5000, 5300))
    assert ray.data.read_parquet(second.paths()[0]).count() == second.files[0].rows
    assert [r.run_id for r in outputs.committed_runs(out)] == [first.run_id, second.run_id]


def test_a_damaged_staged_file_is_not_committed(tmp_path):
    out = str(tmp_path / "out")
    first = commit_run(out, 0, [2])
    staged = outputs.StagedOutput(out)
    write_parts(staged.staging_uri, 10, [3])
    Path(staged.staging_uri, "part-1.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(
        OutputError, match=r"part-1\.parquet in .*: its parquet footer cannot be read .*: not committed"
    ):
        staged.commit()
    assert ray_gpu.latest_output(out) == first
