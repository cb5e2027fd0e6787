"""Hands the planned values to Ray: Ray Data's DataContext, Ray Train's configs, actor pools, DeepSpeed, PEFT.

Every value handed out is recorded with the key it came from and logged (``ray-gpu: <target> = <value> (<source>)``),
so a job's log shows exactly what was applied; :meth:`Tuning.report` prints the record as one JSON line.
Ray is imported only by the methods that build Ray objects.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, cast

from . import contract, strict_json
from .tuning_core import (
    ATTN_IMPLEMENTATIONS,
    CPU_STANDIN_ENV,
    REPORT_PREFIX,
    STORAGE_BUCKET_ENV,
    STORAGE_PATH_ENV,
    TuningCore,
    log,
    log_to_stdout,
)
from .types import TuningDocument

__all__ = [
    "CPU_STANDIN_ENV",
    "REPORT_PREFIX",
    "STORAGE_BUCKET_ENV",
    "STORAGE_PATH_ENV",
    "Tuning",
    "load",
    "loads",
    "log_to_stdout",
]


class Tuning(TuningCore):
    """A validated tuning document and the arguments built from it. Create it with :func:`ray_gpu.load`."""

    # ---- Ray Data ----------------------------------------------------------------------------------
    def apply_data_context(self, ctx: Any = None) -> Any:
        """Sets the planned block size on ``ctx`` (default: the current DataContext). Ray Data's object-store limit
        is left at Ray's default (50% of the store), which the plan's working set already fits."""
        import ray.data

        ctx = ctx or ray.data.DataContext.get_current()
        ctx.target_max_block_size = self._record(
            "data.blockSizeBytes", "DataContext.target_max_block_size", self._data()["blockSizeBytes"]
        )
        return ctx

    def rows_to_read(self) -> int | None:
        """Rows to process (dev reads a sample); None reads everything."""
        rows = self._data().get("rowsToRead")
        return None if rows is None else self._record("data.rowsToRead", "rows_to_read", rows)

    def preprocess_kwargs(self) -> dict[str, Any]:
        """Arguments for the CPU ``map_batches`` that tokenizes: its own operator of ``preprocessConcurrency`` tasks
        of 1 CPU (``TaskPoolStrategy``), so tokenizing runs beside the GPU actors instead of inside them."""
        from ray.data import TaskPoolStrategy

        size = self._record(
            "actorPool.preprocessConcurrency", "TaskPoolStrategy.size", self._pool()["preprocessConcurrency"]
        )
        return {"compute": TaskPoolStrategy(size=size), "num_cpus": 1}

    def actor_pool_kwargs(self) -> dict[str, Any]:
        """Arguments for the GPU ``map_batches``: a fixed-size actor pool, GPUs per actor, batch size."""
        from ray.data import ActorPoolStrategy

        pool = self._pool()
        size = self._record("actorPool.actorPoolSize", "ActorPoolStrategy.size", pool["actorPoolSize"])
        batch = self._record("actorPool.batchSize", "map_batches.batch_size", pool["batchSize"])
        strategy = ActorPoolStrategy(size=size)
        if self.cpu_standin:
            gpus = self._record(
                "actorPool.gpusPerActor",
                "map_batches.num_gpus",
                pool["gpusPerActor"],
                applied=0,
                standin="GPUs per actor -> 1 CPU per actor",
            )
            return {"compute": strategy, "num_gpus": gpus, "num_cpus": 1, "batch_size": batch}
        gpus = self._record("actorPool.gpusPerActor", "map_batches.num_gpus", pool["gpusPerActor"])
        return {"compute": strategy, "num_gpus": gpus, "batch_size": batch}

    def sweep_grid(self) -> list[dict[str, Any]]:
        """Every generation-parameter setting of the sweep; each prompt runs once per setting."""
        return self._record("sweep.grid", "sweep_grid", self._sweep()["grid"])

    # ---- Ray Train ---------------------------------------------------------------------------------
    def scaling_config(self) -> Any:
        """Ray Train ``ScalingConfig``: one worker per GPU with its share of the node's CPUs."""
        from ray.train import ScalingConfig

        train = self._train()
        workers = self._record("train.numWorkers", "ScalingConfig.num_workers", train["numWorkers"])
        per = dict(train["resourcesPerWorker"])
        if self.cpu_standin:
            self._record(
                "train.resourcesPerWorker",
                "ScalingConfig.resources_per_worker",
                per,
                applied={"CPU": per["CPU"]},
                standin="GPU dropped, use_gpu False (gloo)",
            )
            scaling = ScalingConfig(num_workers=workers, use_gpu=False, resources_per_worker={"CPU": per["CPU"]})
        else:
            self._record("train.resourcesPerWorker", "ScalingConfig.resources_per_worker", per)
            scaling = ScalingConfig(num_workers=workers, use_gpu=True, resources_per_worker=per)
        return scaling

    def run_config(self, name: str | None = None) -> Any:
        """Ray Train ``RunConfig``: checkpoints in the stack's bucket (so any node resumes), kept and retried as planned."""
        from ray.train import CheckpointConfig, FailureConfig, RunConfig

        train = self._train()
        prefix = train["checkpointPrefix"].rstrip("/")
        parent, _, leaf = prefix.rpartition("/")
        run_name = name or leaf
        storage = self._record(
            "train.checkpointPrefix",
            "RunConfig.storage_path",
            train["checkpointPrefix"],
            applied=self._under_root(parent) if parent else self.storage_root(),
        )
        keep = self._record("train.checkpointsToKeep", "CheckpointConfig.num_to_keep", train["checkpointsToKeep"])
        failures = self._record("train.maxFailures", "FailureConfig.max_failures", train["maxFailures"])
        log.info("RunConfig.name = %s (checkpoints under %s/%s)", json.dumps(run_name), storage, run_name)
        checkpoints, failure = CheckpointConfig(num_to_keep=keep), FailureConfig(max_failures=failures)
        return RunConfig(name=run_name, storage_path=storage, checkpoint_config=checkpoints, failure_config=failure)

    def deepspeed_config(self) -> dict[str, Any] | None:
        """The DeepSpeed config (ZeRO stage, buckets, micro-batch, accumulation), or None for plain DDP. The file is
        read as strictly as the tuning file: any problem is a :class:`TuningError` naming the file and the key path."""
        path = self._train().get("deepspeedConfigFile")
        if path is None:
            return None
        local = os.path.join(os.path.dirname(self.source), os.path.basename(path))
        for candidate in (path, local):
            if os.path.exists(candidate):
                config = _read_json_object(candidate)
                zero = config.get("zero_optimization", {})
                stage = zero.get("stage") if isinstance(zero, dict) else None
                if stage != self.knobs.get("zeroStage"):
                    raise contract.TuningError(
                        candidate,
                        [f"zero_optimization.stage: is {stage}, the plan's zeroStage is {self.knobs.get('zeroStage')}"],
                    )
                self._record("train.deepspeedConfigFile", "deepspeed_config", path, candidate, applied=config)
                return config
        raise contract.TuningError(
            self.source, [f"train.deepspeedConfigFile: {path} not found (the RayJob mounts it next to tuning.json)"]
        )

    def train_loop_config(self) -> dict[str, Any]:
        """The per-step knobs as a ``train_loop_config`` dict for ``TorchTrainer``."""
        train = self._train()
        config = {
            "micro_batch_size": self.knob("microBatchSize"),
            "gradient_accumulation_steps": self.knob("gradientAccumulationSteps"),
            "global_batch_size": self.knob("globalBatchSize"),
            "sequence_length": self.knob("sequenceLength"),
            "gradient_checkpointing": self.knob("gradientCheckpointing"),
            "zero_stage": self.knob("zeroStage"),
            "loss": self.knob("loss"),
            "loss_chunk_tokens": self.knob("lossChunkTokens"),
            "optimizer_step": self.knob("optimizerStep"),
            "precision": self._record(
                "train.precision", "StepPrecision (autocast, gradient scaler)", train["precision"]
            ),
            # Not a tuning key: NCCL on the stack's GPUs, gloo for the CPU stand-in.
            "backend": "gloo" if self.cpu_standin else "nccl",
        }
        if "offloadOptimizerClass" in train:
            config["optimizer_class"] = self._record(
                "train.offloadOptimizerClass", "optimizer_class", train["offloadOptimizerClass"]
            )
        return config

    def weights_precision(self) -> str:
        """The planned precision, for the dtype full training loads its weights in
        (``examples.precision.weights_dtype``)."""
        return cast(str, self._record("train.precision", "from_pretrained(dtype=...)", self._train()["precision"]))

    def checkpoint_every(self) -> int:
        """Optimizer steps between periodic checkpoints; the loop also checkpoints the step in flight on a spot
        interruption notice (:mod:`ray_gpu.preemption`)."""
        return cast(
            int, self._record("train.checkpointEverySteps", "checkpoint_every", self._train()["checkpointEverySteps"])
        )

    def stall_after_seconds(self) -> int:
        """Seconds without an optimizer step after which the watchdog fails the job (:mod:`ray_gpu.watchdog`)."""
        return cast(
            int,
            self._record("train.stallAfterSeconds", "watchdog.stall_after_seconds", self._train()["stallAfterSeconds"]),
        )

    def attn_implementation(self) -> str:
        """transformers' ``attn_implementation`` for the planned kernel (``from_pretrained(..., attn_implementation=...)``):
        the memory plan counted this kernel's cost, so the model must run the same one."""
        planned = cast(Mapping[str, Any], self.knobs).get("attentionImplementation")
        if planned is None:
            raise contract.TuningError(self.source, [f"knobs.attentionImplementation: not planned for a {self.kind}"])
        return cast(
            str,
            self._record(
                "knobs.attentionImplementation", "attn_implementation", planned, applied=ATTN_IMPLEMENTATIONS[planned]
            ),
        )

    def dataloader_workers(self) -> int:
        """``num_workers`` for a torch DataLoader in each training worker (not needed with Ray Data ingest)."""
        return self._record("train.dataloaderWorkers", "DataLoader.num_workers", self._train()["dataloaderWorkers"])

    def lora_config_kwargs(self) -> dict[str, Any]:
        """Arguments for ``peft.LoraConfig`` (r, lora_alpha, target_modules, lora_dropout), the planned base-weight
        quantization and what its unquantized parameters train in (``examples.common.keep_unquantized_in``)."""
        lora = self._lora()
        return {
            "r": self._record("lora.rank", "LoraConfig.r", lora["rank"]),
            "lora_alpha": self._record("lora.alpha", "LoraConfig.lora_alpha", lora["alpha"]),
            "target_modules": self._record(
                "lora.targetModules", "LoraConfig.target_modules", list(lora["targetModules"])
            ),
            "lora_dropout": self._record("lora.dropout", "LoraConfig.lora_dropout", lora["dropout"]),
            "quantization": self._record("lora.quantization", "quantization", lora["quantization"]),
            "unquantized_precision": self._record(
                "lora.unquantizedPrecision", "keep_unquantized_in", lora["unquantizedPrecision"]
            ),
        }


def _read_json_object(path: str) -> dict[str, Any]:
    """A JSON object from a file the job reads beside the tuning file, strictly (:mod:`ray_gpu.strict_json`)."""
    try:
        value = strict_json.load_file(path)
    except FileNotFoundError:
        raise contract.TuningError(path, [f"{strict_json.ROOT}: file not found"]) from None
    except strict_json.JsonProblems as e:
        raise contract.TuningError(path, e.problems) from None
    if not isinstance(value, dict):
        raise contract.TuningError(path, [f"{strict_json.ROOT}: expected an object, got {type(value).__name__}"])
    return value


def _tuning(document: TuningDocument, source: str, env: Mapping[str, str] | None, apply_data_context: bool) -> Tuning:
    tuning = Tuning(document, source, env)
    if apply_data_context and "data" in document:
        tuning.apply_data_context()
    return tuning


def load(path: str | None = None, *, env: Mapping[str, str] | None = None, apply_data_context: bool = True) -> Tuning:
    """Reads and validates the tuning file and, for Ray Data jobs, applies the DataContext settings.

    :param path: the tuning file; default ``$RAY_GPU_TUNING_FILE``, else ``/etc/ray-gpu/tuning.json``
    :param env: the environment to read ``RAY_GPU_*`` from; default ``os.environ``
    :param apply_data_context: set the planned block size on the current DataContext (jobs with a data section)
    :raises TuningError: listing every problem, each with its key path; a malformed file raises nothing else
    """
    document, source = contract.read(path, env)
    return _tuning(document, source, env, apply_data_context)


def loads(
    text: str | bytes, *, source: str = "<text>", env: Mapping[str, str] | None = None, apply_data_context: bool = True
) -> Tuning:
    """:func:`load` of a document given as text (or UTF-8 bytes) instead of a file; ``source`` names it in messages.

    :raises TuningError: listing every problem, each with its key path; malformed text raises nothing else
    """
    return _tuning(contract.parse(text, source), source, env, apply_data_context)
