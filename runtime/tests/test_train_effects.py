"""What Ray Train and PyTorch do with the training values the runtime hands them, checked against the rendered plans
(real Ray and torch objects, no cluster): where Ray's bin-packing places the workers' bundles, which checkpoints Ray
Train's checkpoint manager keeps and where, which AdamW implementation a step runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import ray_gpu


def load(write_doc, doc, env=None, deepspeed=None, **kw):
    return ray_gpu.load(write_doc(doc, deepspeed=deepspeed), env=env or {}, **kw)


def _worker_nodes(job: dict, gpus: bool = True) -> list[dict[str, float]]:
    """The worker nodes of a rendered RayJob as Ray counts them: KubeRay sets each node's CPUs and GPUs from its
    container's limits; ``gpus=False``: the same nodes without GPUs (the local end-to-end run, runtime/e2e/cluster.py)."""
    nodes = []
    for group in job["spec"]["rayClusterSpec"]["workerGroupSpecs"]:
        limits = group["template"]["spec"]["containers"][0]["resources"]["limits"]
        cpu = str(limits["cpu"])
        node = {
            "CPU": float(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu),
            "GPU": float(limits.get("nvidia.com/gpu", 0)) if gpus else 0.0,
        }
        nodes += [dict(node) for _ in range(group["replicas"])]
    return nodes


def _placed(scaling: Any, nodes: list[dict[str, float]]) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """The bundles Ray Train reserves for the worker group (one per worker, packed), bin-packed onto ``nodes`` by
    Ray's autoscaler: (the bundles that fit nowhere, the nodes' resources left)."""
    from ray.autoscaler._private.resource_demand_scheduler import get_bin_pack_residual

    factory = scaling.as_placement_group_factory()
    assert factory.strategy == "PACK"
    return get_bin_pack_residual(nodes, factory.bundles)


def test_cpu_stand_in_replaces_gpus_and_says_so(rendered, tuning_docs, write_doc):
    """The stand-in's workers fit the rendered worker nodes without GPUs, where the GPU plan's do not fit at all:
    Ray's bin-packing of the bundles Ray Train reserves decides, not the ScalingConfig's fields."""
    doc, job = tuning_docs["dev/llm-pretrain"], rendered["dev"]["RayJob/llm-pretrain"]
    tuning = load(write_doc, doc, env={"RAY_GPU_CPU_STANDIN": "1"})
    scaling = tuning.scaling_config()
    assert _placed(scaling, _worker_nodes(job, gpus=False))[0] == []
    gpu_plan = load(write_doc, doc).scaling_config()
    assert len(_placed(gpu_plan, _worker_nodes(job, gpus=False))[0]) == doc["train"]["numWorkers"], (
        "each GPU worker needs a GPU"
    )
    assert _placed(gpu_plan, _worker_nodes(job))[0] == []
    entry = next(e for e in tuning.applied if e["key"] == "train.resourcesPerWorker")
    assert entry["value"] == {"CPU": 11, "GPU": 1} and entry["applied"] == {"CPU": 11} and "gloo" in entry["standin"]
    assert tuning.train_loop_config()["backend"] == "gloo"


def test_train_configs_on_gpus(rendered, tuning_docs, write_doc):
    """Ray places one worker on each GPU of the rendered worker nodes (every GPU used, all bundles placed, a node
    fewer leaves one node's workers unplaced), and Ray Train's failure policy retries as many worker-group failures
    as planned, then gives up. The checkpoints Ray keeps: test_storage_needs_the_bucket_or_a_path."""
    from ray.train.v2._internal.execution.failure_handling import FailureDecision
    from ray.train.v2._internal.execution.failure_handling.factory import create_failure_policy
    from ray.train.v2.api.exceptions import WorkerGroupError

    doc, job = tuning_docs["prod/llm-pretrain"], rendered["prod"]["RayJob/llm-pretrain"]
    tuning = load(
        write_doc,
        doc,
        env={"RAY_GPU_STORAGE_BUCKET": "stack-bucket"},
        deepspeed={"zero_optimization": {"stage": doc["knobs"]["zeroStage"]}},
    )
    nodes = _worker_nodes(job)
    unplaced, left = _placed(tuning.scaling_config(), nodes)
    assert unplaced == [] and [node["GPU"] for node in left] == [0.0] * len(nodes), left
    per_node = int(nodes[0]["GPU"])
    assert len(_placed(tuning.scaling_config(), nodes[1:])[0]) == per_node
    run = tuning.run_config()
    assert run.storage_path == "s3://stack-bucket/ray/checkpoints" and run.name == "llm-pretrain"
    policy = create_failure_policy(run.failure_config)
    decisions = [
        policy.make_decision(WorkerGroupError("a worker died", {0: RuntimeError("lost")}))
        for _ in range(doc["train"]["maxFailures"] + 1)
    ]
    assert decisions == [FailureDecision.RETRY] * doc["train"]["maxFailures"] + [FailureDecision.RAISE]
    assert tuning.deepspeed_config() == {"zero_optimization": {"stage": doc["knobs"]["zeroStage"]}}
    loop = tuning.train_loop_config()
    assert (loop["micro_batch_size"], loop["gradient_accumulation_steps"], loop["backend"]) == (
        doc["knobs"]["microBatchSize"],
        doc["knobs"]["gradientAccumulationSteps"],
        "nccl",
    )


def _checkpoints_ray_keeps(run: Any, reports: int) -> tuple[Path, list[str]]:
    """Ray Train's checkpoint manager fed ``reports`` checkpoints through the run's own storage (as the controller
    does): the run's folder, and the checkpoint folders it leaves there."""
    import tempfile

    from ray.train import Checkpoint
    from ray.train.v2._internal.execution.checkpoint.checkpoint_manager import CheckpointManager
    from ray.train.v2._internal.execution.training_report import _TrainingReport

    storage = run.storage_context  # Ray Train resolves the filesystem and creates the run's folder

    async def report() -> None:  # the manager notifies its listeners on an event loop
        manager = CheckpointManager(checkpoint_config=run.checkpoint_config, storage_context=storage)
        for step in range(reports):
            with tempfile.TemporaryDirectory() as local:
                Path(local, "step").write_text(str(step))
                checkpoint = storage.persist_current_checkpoint(Checkpoint.from_directory(local), f"checkpoint_{step}")
            manager.register_checkpoint(_TrainingReport(checkpoint, {"step": step}, validation=False))
        await asyncio.sleep(0)

    asyncio.run(report())
    folder = Path(storage.experiment_fs_path)
    return folder, sorted(p.name for p in folder.iterdir() if p.name.startswith("checkpoint_") and p.is_dir())


def test_storage_needs_the_bucket_or_a_path(tuning_docs, write_doc, tmp_path):
    """Without a bucket or a path the run config is refused. With a path, Ray Train writes the run's checkpoints in
    ``<path>/<checkpointPrefix>`` and, given two more checkpoints than planned, deletes the oldest: the planned
    number is left, the newest ones."""
    tuning = load(write_doc, tuning_docs["dev/llm-pretrain"])
    with pytest.raises(
        ray_gpu.TuningError, match=r"\$RAY_GPU_STORAGE_BUCKET and \$RAY_GPU_STORAGE_PATH are both unset"
    ):
        tuning.run_config()
    doc = tuning_docs["prod/llm-pretrain"]
    keep = doc["train"]["checkpointsToKeep"]
    local = load(write_doc, doc, env={"RAY_GPU_STORAGE_PATH": f"{tmp_path / 'fsx'}/"})
    folder, kept = _checkpoints_ray_keeps(local.run_config(), reports=keep + 2)
    assert folder == tmp_path / "fsx" / doc["train"]["checkpointPrefix"] and folder.is_dir()
    assert kept == [f"checkpoint_{step}" for step in range(2, keep + 2)]


ADAM_STEPS = {"fused": "_fused_adam", "foreach": "_multi_tensor_adam", "for-loop": "_single_tensor_adam"}


def test_adamw_is_constructed_as_the_plan_counts_its_step(monkeypatch) -> None:
    """optimizerStep picks how AdamW steps, as the memory plan counts it: torch's step() runs its fused kernel,
    its multi-tensor (foreach) one or its loop over parameters; a fused plan on the CPU stand-in steps one parameter
    at a time. Which one runs is torch's choice from the flags, seen by spying on the three."""
    import importlib

    import torch

    from ray_gpu.examples.loop import adamw

    adam = importlib.import_module("torch.optim.adam")  # AdamW.step() calls adam(), which picks one of the three

    ran: list[str] = []

    def spy(name: str, real: Any) -> Any:
        def step(*args: Any, **kwargs: Any) -> Any:
            ran.append(name)
            return real(*args, **kwargs)

        return step

    for name in ADAM_STEPS.values():
        monkeypatch.setattr(adam, name, spy(name, getattr(adam, name)))

    def runs(step: str) -> list[str]:
        ran.clear()
        params = [torch.nn.Parameter(torch.ones(4)), torch.nn.Parameter(torch.ones(2, 3))]
        optimizer = adamw(params, 1e-3, step)
        sum(p.sum() for p in params).backward()
        optimizer.step()
        assert all(not torch.equal(p.detach(), torch.ones_like(p)) for p in params), "the step moved every parameter"
        return list(ran)

    assert runs("foreach") == ["_multi_tensor_adam"]
    assert runs("for-loop") == ["_single_tensor_adam"]
    assert runs("fused") == (["_fused_adam"] if torch.cuda.is_available() else ["_single_tensor_adam"])
