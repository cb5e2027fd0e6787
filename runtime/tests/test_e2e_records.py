"""The end-to-end harness's readers, without Ray: the records a job prints (``job_log.py``), the data positions of the
kill-and-resume experiment (``data_positions.py``), the workers of the multi-node check (``multinode.py``) and the
mid-write kill of the committed-outputs experiment (``committed_outputs.MidWriteKill``), on logs, folders and a
process made here; and which run of each RayJob gets the job checks (``Harness.job_checks_from``) and the pod resources
a local cluster leaves out (``cluster.LocalCluster``), on objects made here."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

from cluster import LocalCluster
from committed_outputs import KILL_AT_PART, MidWriteKill
from data_positions import worker_resumes
from harness import Harness
from job_log import POSITION_AT_CHECKPOINT, RESUMED_AT_STEP, RESUMED_POSITION, WORKER_STARTED, values_in
from multinode import attempts, rendered_transport_env

from ray_gpu import outputs


def test_a_record_is_read_after_its_text_wherever_ray_put_it_on_the_line() -> None:
    lines = [
        "\x1b[36m(RayTrainWorker pid=7)\x1b[0m ray-gpu example: resumed from checkpoint at step 5\n",
        "ray-gpu example: resumed from checkpoint at step 10 [repeated 2x across cluster]\n",
        "ray-gpu example: data position at checkpoint 5\n",
    ]
    assert values_in(lines, RESUMED_AT_STEP) == [5, 10]


def _position(rank: int, step: int, resumed_from: int | None, rows: list[list[int]], batches: int) -> str:
    record = {
        "rank": rank,
        "step": step,
        "resumedFrom": resumed_from,
        "epoch": 0,
        "batchesInEpoch": batches,
        "lastRowIds": [rows[-1][1]],
        "rowsSincePrevious": rows,
    }
    return f"(RayTrainWorker pid=1) {POSITION_AT_CHECKPOINT}{json.dumps(record)}\n"


def _resumed(rank: int, step: int, batch: int, skipped: int, first: int) -> str:
    record = {
        "rank": rank,
        "step": step,
        "epoch": 0,
        "batch": batch,
        "recordedRowIds": [skipped],
        "lastSkippedRowIds": [skipped],
        "firstRowIds": [first],
    }
    return f"{RESUMED_POSITION}{json.dumps(record)}\n"


def test_each_workers_rows_either_side_of_the_checkpoint_it_resumed_from(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    # Two workers, a checkpoint every step; killed after step 1 and resumed from it; rank 1 then retrains its row 3.
    lines = [_position(0, 1, None, [[0, 1]], 2), _position(1, 1, None, [[2, 3]], 2), _position(0, 2, None, [[4, 5]], 4)]
    lines += [_resumed(0, 1, 2, 1, 4), _resumed(1, 1, 2, 3, 3), _resumed(1, 1, 2, 3, 3)]  # Ray printed one line twice
    lines += [_position(0, 2, 1, [[4, 5]], 4), _position(1, 2, 1, [[3, 3], [6, 6]], 4)]
    log.write_text("".join(lines))
    workers = worker_resumes([str(log)], step=1, world_size=2, total_steps=2)
    assert [(w.before, w.after) for w in workers] == [([0, 1], [4, 5]), ([2, 3], [3, 6])]
    assert [(w.saved_at(), w.resumed_at()) for w in workers] == [((0, 2), (0, 2))] * 2
    assert [w.retrained() for w in workers] == [[], [3]]


def test_a_worker_missing_from_the_logs_has_no_position(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(_position(0, 1, None, [[0, 1]], 2))
    workers = worker_resumes([str(log)], step=1, world_size=2, total_steps=2)
    assert [(w.saved is None, w.resumed is None) for w in workers] == [(False, True), (True, True)]


def _staged(root: Path, parts: int) -> Path:
    folder = root / outputs.STAGING_DIR / "run-1"
    folder.mkdir(parents=True)
    for i in range(parts):
        (folder / f"part-{i}.parquet").write_bytes(b"")
    return folder


def test_the_mid_write_kill_records_the_staged_parts_then_kills_the_drivers_group(tmp_path: Path) -> None:
    folder = _staged(tmp_path, KILL_AT_PART)
    driver = subprocess.Popen(["sleep", "600"], text=True, start_new_session=True)
    kill = MidWriteKill(str(tmp_path))
    kill.on_line("the driver's first line", driver)
    kill.on_line("a later line starts no second watcher", driver)
    assert (kill.settled().folder, kill.parts, kill.run_id) == (str(folder), KILL_AT_PART, "run-1")
    assert driver.wait() == -signal.SIGKILL


def test_a_driver_that_ends_before_the_parts_are_staged_is_not_killed(tmp_path: Path) -> None:
    _staged(tmp_path, KILL_AT_PART - 1)
    driver = subprocess.Popen(["true"], text=True, start_new_session=True)
    kill = MidWriteKill(str(tmp_path))
    kill.on_line("", driver)
    assert (kill.settled().folder, kill.parts, driver.wait()) == (None, 0, 0)


def _started(rank: int, node: str, resumed_from: int | None, env: dict[str, str]) -> str:
    record = {
        "rank": rank,
        "worldSize": 2,
        "localRank": 0,
        "nodeRank": 0,
        "nodeId": node,
        "resumedFrom": resumed_from,
        "transportEnv": env,
    }
    return f"\x1b[36m(RayTrainWorker pid=1)\x1b[0m {WORKER_STARTED}{json.dumps(record)}\n"


def test_the_workers_of_each_attempt_are_read_in_rank_order_once_each(tmp_path: Path) -> None:
    env = {"NCCL_SOCKET_IFNAME": "eth0"}
    log = tmp_path / "job.log"
    log.write_text(
        _started(1, "b", None, env)
        + _started(0, "a", None, env)
        + _started(0, "a", None, env)
        # The attempt Ray Train restarted from the checkpoint of step 5, placed anew.
        + _started(1, "a", 5, env)
        + _started(0, "b", 5, {})
    )
    found = attempts([str(log)])
    assert list(found) == [None, 5]
    assert [(w.rank, w.node_id) for w in found[None]] == [(0, "a"), (1, "b")]
    assert [(w.rank, w.node_id, w.transport_env) for w in found[5]] == [(0, "b", {}), (1, "a", env)]


def test_the_worker_pods_transport_environment_is_the_containers_literal_nccl_and_libfabric_variables() -> None:
    container = {
        "env": [
            {"name": "FI_PROVIDER", "value": "efa"},
            {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"},
            {"name": "PYTHONPATH", "value": "/opt/ray-gpu/python"},
            {"name": "NCCL_FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ]
    }
    group = {"replicas": 4, "template": {"spec": {"containers": [container]}}}
    job = {"spec": {"rayClusterSpec": {"workerGroupSpecs": [group]}}}
    assert rendered_transport_env(job) == {"FI_PROVIDER": "efa", "NCCL_SOCKET_IFNAME": "eth0"}


def test_the_checks_transport_prefixes_are_the_ones_the_training_loop_logs() -> None:
    import multinode

    from ray_gpu.examples import loop

    assert (multinode.TRANSPORT_ENV_PREFIXES, WORKER_STARTED) == (loop.TRANSPORT_ENV_PREFIXES, loop.WORKER_STARTED)


def _rayjob(kind: str, spot: bool) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": [{}], **({"terminationGracePeriodSeconds": 120} if spot else {})}
    return {
        "metadata": {"labels": {"ray-gpu.io/kind": kind}},
        "spec": {"rayClusterSpec": {"workerGroupSpecs": [{"template": {"spec": pod}}]}},
    }


def test_every_rayjob_gets_the_job_checks_from_exactly_one_run_of_a_chosen_check() -> None:
    """A training job the kill-and-resume experiment runs gets them on its resumed run, else one on a spot pool that
    the spot-interruption experiment runs on that run, else any job on a run of its own: never two, never none."""
    jobs = {
        "pretrain-spot": ("TrainingJob", True),
        "pretrain-on-demand": ("TrainingJob", False),
        "embed": ("EmbeddingPipeline", True),
        "sft": ("LoRAFineTune", True),
    }
    objects = {f"RayJob/{name}": _rayjob(kind, spot) for name, (kind, spot) in jobs.items()}
    expected = {
        "jobs,outputs,resume,preempt": {"pretrain-spot": "resume", "pretrain-on-demand": "resume"},
        "jobs,outputs,preempt": {"pretrain-spot": "preempt", "pretrain-on-demand": "jobs"},
        "jobs,resume": {"pretrain-spot": "resume", "pretrain-on-demand": "resume"},
        "jobs": {"pretrain-spot": "jobs", "pretrain-on-demand": "jobs"},
    }
    for checks, training in expected.items():
        h = Harness(objects, "/nonexistent", 1.0, frozenset(checks.split(",")), None)
        carriers = {name: h.job_checks_from(name) for name in jobs}
        assert carriers == {"embed": "jobs", "sft": "jobs", **training}, checks
        for name, check in carriers.items():
            assert check in h.checks and name in h.names(check), (checks, name)
        assert sorted(h.names("jobs")) == sorted(n for n, c in carriers.items() if c == "jobs"), checks


def test_the_local_cluster_leaves_out_the_efa_resources_a_worker_pod_requests_and_says_so(tmp_path: Path) -> None:
    cluster = LocalCluster({}, {}, str(tmp_path))
    efa = {
        "cpu": "31",
        "memory": "104Gi",
        "nvidia.com/gpu": "1",
        "vpc.amazonaws.com/efa": "1",
        "hugepages-2Mi": "5120Mi",
    }
    cluster._unoffered("gpu", {"requests": efa, "limits": efa})
    cluster._unoffered("cpu", {"limits": {"cpu": "4", "memory": "8Gi"}})
    assert cluster.adjustments == [
        "gpu: hugepages-2Mi 5120Mi, vpc.amazonaws.com/efa 1 requested: not offered here, left out (gloo over TCP on CPU "
        "needs neither)"
    ]
