"""The tuning document, version 1: its keys, their types, and the validator.

This mirrors ``workloads/tuning/file.ts`` (the TypeScript side writes the file, this side reads it); a test
renders every example workload and validates its file here, so the two cannot drift apart. Standard library only.
"""
from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

API_VERSION = "ray-gpu.io/v1"
KIND = "Tuning"
#: Where the RayJob mounts the tuning ConfigMap; ``RAY_GPU_TUNING_FILE`` points at the file.
DEFAULT_TUNING_FILE = "/etc/ray-gpu/tuning.json"
TUNING_FILE_ENV = "RAY_GPU_TUNING_FILE"
WORKLOAD_KINDS = ("TrainingJob", "LoRAFineTune", "EmbeddingPipeline", "BatchInference")
# The enums below equal the TypeScript schema's (core/config/workloads.ts, core/memory/model-states.ts); a test checks.
QUANTIZATIONS = ("none", "nf4", "nf4-double")
OFFLOADS = ("none", "optimizer", "optimizer-and-parameters")
FORMATS = ("parquet", "jsonl", "csv", "text")


class TuningError(ValueError):
    """The tuning file is missing or does not follow the contract. ``problems`` lists every problem found."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"ray-gpu: {source} is not a valid tuning document ({API_VERSION}):\n{lines}")


Check = Callable[[Any], "str | None"]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def integer(minimum: int = 0) -> Check:
    return lambda v: None if _is_int(v) and v >= minimum else f"expected an integer >= {minimum}"


def number(minimum: float = 0.0, maximum: float | None = None) -> Check:
    def check(v: Any) -> str | None:
        if _is_num(v) and v >= minimum and (maximum is None or v <= maximum):
            return None
        return f"expected a number in [{minimum}, {maximum if maximum is not None else 'inf'}]"

    return check


def string(choices: tuple[str, ...] | None = None) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, str) or v == "":
            return "expected a non-empty string"
        if choices is not None and v not in choices:
            return f"expected one of {', '.join(choices)}"
        return None

    return check


def constant(value: str) -> Check:
    return lambda v: None if v == value else f"expected {value!r}"


def scalar(v: Any) -> str | None:
    return None if isinstance(v, (str, int, float, bool)) else "expected a string, number or boolean"


def list_of(item: Check, min_items: int = 0) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, list) or len(v) < min_items:
            return f"expected a list of at least {min_items} item(s)"
        bad = [i for i, x in enumerate(v) if item(x) is not None]
        return f"item(s) {bad} invalid: {item(v[bad[0]])}" if bad else None

    return check


def map_of(value: Check) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, dict):
            return "expected an object"
        bad = sorted(k for k, x in v.items() if value(x) is not None)
        return f"key(s) {bad} invalid: {value(v[bad[0]])}" if bad else None

    return check


@dataclass(frozen=True)
class Field:
    check: "Check | dict[str, Field]"
    required: bool = True


def opt(check: "Check | dict[str, Field]") -> Field:
    return Field(check, required=False)


def req(check: "Check | dict[str, Field]") -> Field:
    return Field(check)


#: Every knob the planners write (also the ``RAY_GPU_*`` variables); which ones appear depends on the kind.
KNOBS: dict[str, Check] = {
    "batchSize": integer(1),
    "globalBatchSize": integer(1),
    "gpuMemoryUtilization": number(0.05, 1.0),
    "gpus": integer(1),
    "gpusPerActor": number(0.01, 8),
    "gradientAccumulationSteps": integer(1),
    "gradientCheckpointing": lambda v: None if isinstance(v, bool) else "expected true or false",
    "loraAlpha": integer(1),
    "loraQuantization": string(QUANTIZATIONS),
    "loraRank": integer(1),
    "maxConcurrentSequences": integer(1),
    "maxModelLength": integer(1),
    "maxNewTokens": integer(1),
    "microBatchSize": integer(1),
    "offload": string(OFFLOADS),
    "replicas": integer(1),
    "sequenceLength": integer(1),
    "tensorParallelSize": integer(1),
    "zeroStage": integer(0),
}

SCHEMA: dict[str, Field] = {
    "apiVersion": req(constant(API_VERSION)),
    "kind": req(constant(KIND)),
    "workload": req(
        {
            "name": req(string()),
            "kind": req(string(WORKLOAD_KINDS)),
            "environment": req(string(("dev", "prod"))),
            "model": req(string()),
            "modelFamily": req(string()),
            "modelType": req(string(("decoder-llm", "vision-language", "encoder-embedding", "encoder-decoder"))),
        }
    ),
    "knobs": req({k: opt(c) for k, c in KNOBS.items()}),
    "train": opt(
        {
            "numWorkers": req(integer(1)),
            "resourcesPerWorker": req({"CPU": req(integer(1)), "GPU": req(integer(1))}),
            "dataloaderWorkers": req(integer(0)),
            "checkpointPrefix": req(string()),
            "checkpointsToKeep": req(integer(1)),
            "maxFailures": req(integer(0)),
            "deepspeedConfigFile": opt(string()),
            "offloadOptimizerClass": opt(string()),
        }
    ),
    "data": opt(
        {
            "uri": opt(string()),
            "format": opt(string(FORMATS)),
            "sampleFraction": req(number(0.0, 1.0)),
            "rowsToRead": opt(integer(1)),
            "blockSizeBytes": req(integer(1)),
            "rowsPerBlock": req(integer(1)),
            "readParallelism": req(integer(1)),
            "objectStoreLimitBytes": req(integer(1)),
            "workingSetBytes": req(integer(1)),
            "outputUri": req(string()),
        }
    ),
    "actorPool": opt(
        {
            "actorPoolSize": req(integer(1)),
            "gpusPerActor": req(number(0.01, 8)),
            "batchSize": req(integer(1)),
            "maxTasksInFlightPerActor": req(integer(1)),
            "preprocessConcurrency": req(integer(1)),
        }
    ),
    "sweep": opt({"parameters": req(map_of(list_of(scalar, 1))), "grid": req(list_of(map_of(scalar), 1)), "rowsPerPrompt": req(integer(1))}),
    "lora": opt(
        {
            "rank": req(integer(1)),
            "alpha": req(integer(1)),
            "targetModules": req(list_of(string(), 1)),
            "quantization": req(string(QUANTIZATIONS)),
            "imageTokensPerSample": opt(integer(1)),
        }
    ),
}

#: Sections each kind's file must carry (others are rejected as belonging to another kind).
SECTIONS_BY_KIND: dict[str, tuple[str, ...]] = {
    "TrainingJob": ("train",),
    "LoRAFineTune": ("train", "lora"),
    "EmbeddingPipeline": ("data", "actorPool"),
    "BatchInference": ("data", "actorPool", "sweep"),
}


def _describe(v: Any) -> str:
    text = json.dumps(v, sort_keys=True) if not isinstance(v, str) else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _validate(value: Any, schema: Mapping[str, Field], path: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path.rstrip('.') or '(document)'}: expected an object, got {_describe(value)}")
        return
    for key in sorted(value):
        if key not in schema:
            hint = difflib.get_close_matches(key, list(schema), n=1)
            fix = f"did you mean {hint[0]!r}?" if hint else f"known keys: {', '.join(sorted(schema))}"
            problems.append(f"{path}{key}: unknown key ({fix}); this runtime reads {API_VERSION}, so a newer planner may have written it")
    for key, field in schema.items():
        where = f"{path}{key}"
        if key not in value:
            if field.required:
                problems.append(f"{where}: required key is missing")
            continue
        if isinstance(field.check, dict):
            _validate(value[key], field.check, f"{where}.", problems)
        else:
            err = field.check(value[key])
            if err:
                problems.append(f"{where}: {err}, got {_describe(value[key])}")


def validate(document: Any) -> list[str]:
    """Every problem of a parsed tuning document, each naming its key path; empty when valid."""
    problems: list[str] = []
    _validate(document, SCHEMA, "", problems)
    if problems or not isinstance(document, dict):
        return problems
    kind = document["workload"]["kind"]
    needed = SECTIONS_BY_KIND[kind]
    for section in needed:
        if section not in document:
            problems.append(f"{section}: required for a {kind}, missing")
    for section in ("train", "data", "actorPool", "sweep", "lora"):
        if section in document and section not in needed:
            problems.append(f"{section}: not part of a {kind} document")
    return problems


def read(path: str | None = None) -> tuple[dict[str, Any], str]:
    """Reads and validates the tuning file (``path``, else ``$RAY_GPU_TUNING_FILE``, else the mount path)."""
    source = path or os.environ.get(TUNING_FILE_ENV) or DEFAULT_TUNING_FILE
    origin = "argument" if path else (f"${TUNING_FILE_ENV}" if os.environ.get(TUNING_FILE_ENV) else "default path")
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise TuningError(
            source,
            [f"file not found (path from {origin}); the RayJob mounts it from the ConfigMap <workload>-tuning: run the job from a RayJob rendered by ray-gpu, or set {TUNING_FILE_ENV}"],
        ) from None
    except OSError as e:
        raise TuningError(source, [f"cannot read the file: {e.strerror}"]) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise TuningError(source, [f"not JSON: {e.msg} at line {e.lineno}, column {e.colno}"]) from None
    problems = validate(document)
    if problems:
        raise TuningError(source, problems)
    return document, source
