"""Ray Train levers of the training plan, each against the default: micro-batch with gradient accumulation, checkpoints
kept, and DataLoader workers. Each effect is read from what PyTorch or Ray Train did: the activation bytes autograd
saved for backward, the samples the workers fed per optimizer step (counted by hooks on the model and the optimizer,
summed across workers by the process group), the checkpoints Ray Train left in storage, and the processes a
DataLoader read its items in. How long a step or a wait for data takes is measured by ``npm run bench:ray``."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from levers_lab import Lab, Result, measured

#: Tokens per sample in the local runs (the plan's 2048 on a tiny model would only make them slower).
SEQUENCE = 128
#: Optimizer steps, each reporting a checkpoint.
STEPS = 5


class FedSamples:
    """Samples the model received (a forward hook reads each input's rows) and how many it had received when each
    optimizer step ran (the optimizer's step hook)."""

    def __init__(self, model: Any, optimizer: Any) -> None:
        self.samples = 0
        self.per_step: list[int] = []
        model.register_forward_pre_hook(self._forward, with_kwargs=True)
        optimizer.register_step_post_hook(self._stepped)

    def _forward(self, _module: Any, _args: Any, kwargs: dict[str, Any]) -> None:
        self.samples += int(kwargs["input_ids"].shape[0])

    def _stepped(self, *_: Any) -> None:
        self.per_step.append(self.samples)
        self.samples = 0


def _loop(cfg: dict[str, Any]) -> None:
    """Trains the tiny model of the plan's family: ``micro`` rows per forward, ``accumulation`` forwards per optimizer
    step; reports per step what hooks counted: the samples fed to the model since the previous optimizer step, summed
    across workers, and the largest activation bytes autograd saved in one forward."""
    import tempfile

    import ray.train
    import torch
    import torch.distributed as dist

    from ray_gpu.examples import common

    torch.manual_seed(0)
    inner = common.causal_lm("", cfg["family"], smoke=True)
    model = ray.train.torch.prepare_model(inner)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fed = FedSamples(inner, optimizer)
    saved = {"bytes": 0, "peak": 0}

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved["bytes"] += t.numel() * t.element_size()
        return t

    step_seconds: list[float] = []  # reported for the benchmark (bench/ray), never checked
    for step in range(1, STEPS + 1):
        began = time.perf_counter()
        for _ in range(cfg["accumulation"]):
            ids = torch.randint(4, common.SMOKE_VOCAB, (cfg["micro"], SEQUENCE))
            saved["bytes"] = 0
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                loss = model(input_ids=ids, labels=ids).loss
            saved["peak"] = max(saved["peak"], saved["bytes"])
            (loss / cfg["accumulation"]).backward()
        optimizer.step()
        optimizer.zero_grad()
        step_seconds.append(round(time.perf_counter() - began, 4))
        across = torch.tensor([fed.per_step[-1]], dtype=torch.int64)
        dist.all_reduce(across)
        metrics = {
            "step": step,
            "samplesPerStep": int(across.item()),
            "activationBytes": saved["peak"],
            "stepSeconds": step_seconds,
        }
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "step.txt"), "w") as f:
                f.write(str(step))
            ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(d))


@dataclass(frozen=True)
class TrainRun:
    """One Ray Train run of the levers' training loop: its name, rows per forward, forwards per optimizer step,
    checkpoints kept (None: Ray's default, all), and the plan's workers and model family."""

    label: str
    micro: int
    accumulation: int
    keep: int | None
    workers: int
    family: str

    @classmethod
    def planned(cls, doc: dict[str, Any], label: str = "planned") -> TrainRun:
        knobs, train = doc["knobs"], doc["train"]
        micro, accumulation = knobs["microBatchSize"], knobs["gradientAccumulationSteps"]
        return cls(
            label, micro, accumulation, train["checkpointsToKeep"], train["numWorkers"], doc["workload"]["modelFamily"]
        )

    def with_defaults(self, label: str = "defaults") -> TrainRun:
        """The same global batch with no accumulation, every checkpoint kept."""
        return TrainRun(label, self.micro * self.accumulation, 1, None, self.workers, self.family)


def train(lab: Lab, run: TrainRun) -> dict[str, Any]:
    """Runs ``run`` with Ray Train; returns what it reported at its last step and the checkpoints left in storage."""
    from ray.train import CheckpointConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    storage = os.path.join(lab.work, "train-storage")
    trainer = TorchTrainer(
        _loop,
        train_loop_config={"micro": run.micro, "accumulation": run.accumulation, "family": run.family},
        scaling_config=ScalingConfig(num_workers=run.workers, use_gpu=False, resources_per_worker={"CPU": 1}),
        torch_config=TorchConfig(backend="gloo"),
        run_config=RunConfig(
            name=run.label, storage_path=storage, checkpoint_config=CheckpointConfig(num_to_keep=run.keep)
        ),
    )
    started = time.time()
    result = trainer.fit()
    print(f"  trained {run.label} in {time.time() - started:.0f} s", flush=True)
    run_dir = os.path.join(storage, run.label)
    kept = [d for d in os.listdir(run_dir) if d.startswith("checkpoint_") and os.path.isdir(os.path.join(run_dir, d))]
    return {**result.metrics, "checkpointsKept": len(kept)}


def run_trainers(lab: Lab) -> list[Result]:
    """Two runs: the plan, and the plan with both defaults (no accumulation, every checkpoint kept). One default run
    serves both rows because each row's observable depends on its own lever only: the activation bytes of one forward
    on the rows per forward, the checkpoints left on how many are kept (every run reports STEPS of them)."""
    doc = lab.tuning("levers-train")
    knobs, plan = doc["knobs"], TrainRun.planned(doc)
    micro, accumulation, keep, workers = plan.micro, plan.accumulation, plan.keep, plan.workers
    one_step = plan.with_defaults().micro
    planned, defaults = train(lab, plan), train(lab, plan.with_defaults())
    a_act, b_act = planned["activationBytes"], defaults["activationBytes"]
    same_batch = planned["samplesPerStep"] == defaults["samplesPerStep"] == knobs["globalBatchSize"]
    return [
        Result(
            "Micro-batch and accumulation",
            "knobs.microBatchSize, knobs.gradientAccumulationSteps",
            "activation bytes autograd saved in one forward, and samples per optimizer step (Ray Train workers)",
            f"{micro} rows x {accumulation} steps x {workers} workers",
            f"no accumulation: {one_step} rows x 1 step x {workers} workers",
            a={"activationMiB": round(a_act / 2**20, 1), "samplesPerStep": planned["samplesPerStep"]},
            b={"activationMiB": round(b_act / 2**20, 1), "samplesPerStep": defaults["samplesPerStep"]},
            ok=b_act >= 0.75 * (one_step / micro) * a_act and same_batch,
            expect=f"the same global batch ({knobs['globalBatchSize']}) with about {one_step // micro}x less activation memory",
        ),
        Result(
            "Checkpoints kept",
            "train.checkpointsToKeep",
            f"checkpoints Ray Train left in storage after {STEPS} checkpointed steps",
            f"{keep}",
            "Ray's default: all of them",
            a=planned["checkpointsKept"],
            b=defaults["checkpointsKept"],
            ok=planned["checkpointsKept"] == keep and defaults["checkpointsKept"] == STEPS,
            expect=f"A = {keep} < B = {STEPS}: storage stays bounded",
        ),
    ]


#: Batches of 16 items a DataLoader check reads.
BATCHES = 24


class _Readers:
    """A map-style dataset whose items say which process read them (the loop's own, or a loader worker's)."""

    def __len__(self) -> int:
        return 16 * BATCHES

    def __getitem__(self, i: int) -> tuple[int, int]:
        return i, os.getpid()


def _readers(workers: int) -> dict[str, Any]:
    """Where a DataLoader with ``workers`` read every item of an epoch: the processes, and whether the training
    loop's own was among them (PyTorch's default, 0, reads in the loop, so the step waits for every read)."""
    from torch.utils.data import DataLoader

    pids = [int(p) for _, batch_pids in DataLoader(_Readers(), batch_size=16, num_workers=workers) for p in batch_pids]
    return {"items": len(pids), "readerProcesses": len(set(pids)), "readInTheLoop": os.getpid() in pids}


def dataloader_workers(lab: Lab) -> Result:
    import ray

    planned = lab.tuning("levers-train")["train"]["dataloaderWorkers"]
    where = ray.remote(num_cpus=1)(_readers)  # a Ray task, as a training worker is
    a, b = ray.get([where.remote(planned), where.remote(0)])
    return Result(
        "DataLoader workers",
        "train.dataloaderWorkers",
        f"the processes a torch DataLoader read {16 * BATCHES} items in, inside a Ray task (PyTorch's worker processes or the loop's own)",
        f"{planned} workers",
        "PyTorch's default: 0 (reads in the training process)",
        a=a,
        b=b,
        ok=a["items"] == b["items"] == 16 * BATCHES
        and a["readerProcesses"] == planned
        and not a["readInTheLoop"]
        and b == {**b, "readerProcesses": 1, "readInTheLoop": True},
        expect=f"A: {planned} loader processes read, none in the loop, so reads overlap the step; B: the loop reads every item itself",
    )


def run(lab: Lab) -> list[Result]:
    results = run_trainers(lab)
    measured(results, lambda: dataloader_workers(lab))
    return results
