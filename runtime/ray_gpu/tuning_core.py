"""The tuning document a job was given, and the record of what was applied from it (see ``ray_gpu.tuning``): its
sections and knobs (a knob's ``RAY_GPU_*`` variable must agree with the file), the storage root, and one log line per
value handed out (``ray-gpu: <target> = <value> (<source>)``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from typing import Any, TextIO, cast

from . import contract
from .contract import knob_env_name
from .types import ActorPoolSection, DataSection, Knobs, LoraSection, SweepSection, TrainSection, TuningDocument

#: The library's logger. It has only a NullHandler: applications decide where records go (``log_to_stdout()`` prints them).
log = logging.getLogger("ray_gpu")
log.addHandler(logging.NullHandler())


class _StdoutHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stdout`` is at the time (the job log; captured output in tests)."""

    @property
    def stream(self) -> TextIO:
        return sys.stdout

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def log_to_stdout(level: int = logging.INFO) -> None:
    """Prints the library's records to the job's stdout as ``ray-gpu: <message>`` lines (once; repeated calls do nothing)."""
    if not any(isinstance(h, _StdoutHandler) for h in log.handlers):
        handler = _StdoutHandler()
        handler.setFormatter(logging.Formatter("ray-gpu: %(message)s"))
        log.addHandler(handler)
    log.setLevel(level)


#: Local CPU stand-in for GPUs (tests, laptops): GPU requests become CPU requests and gloo replaces NCCL.
CPU_STANDIN_ENV = "RAY_GPU_CPU_STANDIN"
#: Where checkpoints and outputs go instead of the stack's bucket (a local path, an FSx mount, another URI).
STORAGE_PATH_ENV = "RAY_GPU_STORAGE_PATH"
#: The stack's bucket, set on every Ray container from the platform's ConfigMap ray-gpu-storage.
STORAGE_BUCKET_ENV = "RAY_GPU_STORAGE_BUCKET"
#: transformers' ``attn_implementation`` name of each planned attention kernel.
ATTN_IMPLEMENTATIONS = {"eager": "eager", "sdpa": "sdpa", "flash": "flash_attention_2"}
#: Prefix of the JSON line :meth:`Tuning.report` prints.
REPORT_PREFIX = "RAY_GPU_APPLIED "


def _parse_like(text: str, like: Any) -> Any:
    if isinstance(like, bool):
        if text.lower() not in ("true", "false"):
            raise ValueError("expected true or false")
        return text.lower() == "true"
    if isinstance(like, int):
        return int(text)
    if isinstance(like, float):
        return float(text)
    return text


class TuningCore:
    """A validated tuning document: its sections and knobs, and the record of every value handed out (the
    methods that build Ray, DeepSpeed and PEFT arguments are :class:`ray_gpu.tuning.Tuning`'s)."""

    def __init__(self, document: TuningDocument, source: str, env: Mapping[str, str] | None = None):
        self.document: TuningDocument = document
        self.source = source
        self.env = dict(os.environ if env is None else env)
        self.applied: list[dict[str, Any]] = []
        w = document["workload"]
        self.name: str = w["name"]
        self.kind: str = w["kind"]
        self.environment: str = w["environment"]
        self.model: str = w["model"]
        self.model_family: str = w["modelFamily"]
        self.model_type: str = w["modelType"]
        self.cpu_standin = self.env.get(CPU_STANDIN_ENV, "") not in ("", "0", "false")
        self.knobs = self._knobs_checked_against_env()
        log.info(
            "loaded %s for %s (%s, %s, model %s) from %s",
            contract.API_VERSION,
            self.name,
            self.kind,
            self.environment,
            self.model,
            source,
        )
        if self.cpu_standin:
            log.info(
                "%s is set: GPU requests become CPU requests and gloo replaces NCCL (local runs only)", CPU_STANDIN_ENV
            )

    # ---- bookkeeping -------------------------------------------------------------------------------
    def _record(
        self,
        key: str,
        target: str,
        value: Any,
        source: str | None = None,
        *,
        applied: Any = None,
        standin: str | None = None,
    ) -> Any:
        """Records that ``value`` (the document's, at ``key``) was handed to ``target``, as ``applied`` when it
        had to be converted (a path under the storage root) or replaced by a CPU stand-in; returns what was handed."""
        src = source or f"{os.path.basename(self.source)} {key}"
        entry: dict[str, Any] = {"key": key, "target": target, "value": value, "source": src}
        if applied is not None:
            entry["applied"] = applied
        if standin:
            entry["standin"] = standin
        self.applied.append(entry)
        shown = json.dumps(value if applied is None else applied, sort_keys=True)
        log.info(
            "%s = %s  (%s%s)",
            target,
            shown if len(shown) <= 200 else shown[:197] + "...",
            src,
            f"; stand-in: {standin}" if standin else "",
        )
        return value if applied is None else applied

    def _get(self, path: str) -> Any:
        node: Any = self.document
        for part in path.split("."):
            node = node[part]
        return node

    def _section(self, name: str) -> Any:
        if name not in self.document:
            raise contract.TuningError(
                self.source,
                [f"{name}: this {self.kind} document has no {name} section, so this method does not apply to it"],
            )
        return self.document[name]  # type: ignore[literal-required]

    def _train(self) -> TrainSection:
        return cast(TrainSection, self._section("train"))

    def _data(self) -> DataSection:
        return cast(DataSection, self._section("data"))

    def _pool(self) -> ActorPoolSection:
        return cast(ActorPoolSection, self._section("actorPool"))

    def _sweep(self) -> SweepSection:
        return cast(SweepSection, self._section("sweep"))

    def _lora(self) -> LoraSection:
        return cast(LoraSection, self._section("lora"))

    def _knobs_checked_against_env(self) -> Knobs:
        """The RayJob sets each knob twice (file and ``RAY_GPU_*``); both come from one plan and must agree. A
        mismatch means someone changed one of them: re-render instead, since the other settings derive from it."""
        knobs = self.document["knobs"]
        problems: list[str] = []
        for name, planned in sorted(knobs.items()):
            var = knob_env_name(name)
            if var not in self.env:
                continue
            try:
                value = _parse_like(self.env[var], planned)
            except ValueError:
                value = self.env[var]
            if value != planned:
                problems.append(
                    f"${var}={self.env[var]!r} disagrees with knobs.{name}={planned!r} in the tuning file: both "
                    "come from one plan; change the workload and re-render"
                )
        if problems:
            raise contract.TuningError("the environment", problems)
        return knobs

    def stand_in(self, key: str, target: str, applied: Any, reason: str) -> Any:
        """Records that the job used ``applied`` instead of the planned value at ``key`` (a CPU or smoke stand-in)."""
        return self._record(key, target, self._get(key), applied=applied, standin=reason)

    def knob(self, name: str) -> Any:
        """A planner knob (``microBatchSize``, ``zeroStage``, ...), recorded as applied."""
        if name not in self.knobs:
            raise contract.TuningError(
                self.source, [f"knobs.{name}: not planned for a {self.kind} (planned: {', '.join(sorted(self.knobs))})"]
            )
        return self._record(f"knobs.{name}", name, cast(Mapping[str, Any], self.knobs)[name])

    def report(self) -> dict[str, Any]:
        """Prints every applied value as one line, ``RAY_GPU_APPLIED {json}``, and returns it."""
        payload: dict[str, Any] = {
            "workload": self.name,
            "kind": self.kind,
            "source": self.source,
            "cpuStandin": self.cpu_standin,
            "applied": self.applied,
        }
        print(REPORT_PREFIX + json.dumps(payload, sort_keys=True), flush=True)
        return payload

    # ---- storage -----------------------------------------------------------------------------------
    def storage_root(self) -> str:
        """``$RAY_GPU_STORAGE_PATH`` if set, else ``s3://$RAY_GPU_STORAGE_BUCKET``."""
        if self.env.get(STORAGE_PATH_ENV):
            return self.env[STORAGE_PATH_ENV].rstrip("/")
        if self.env.get(STORAGE_BUCKET_ENV):
            return f"s3://{self.env[STORAGE_BUCKET_ENV]}"
        raise contract.TuningError(
            "the environment",
            [
                f"${STORAGE_BUCKET_ENV} and ${STORAGE_PATH_ENV} are both unset: the platform's ConfigMap "
                f"ray-gpu-storage sets the bucket; set {STORAGE_PATH_ENV} to write elsewhere"
            ],
        )

    def _under_root(self, prefix: str) -> str:
        return prefix if "://" in prefix or prefix.startswith("/") else f"{self.storage_root()}/{prefix}"

    def output_path(self) -> str:
        """Where the job writes its results (``data.outputUri``, under the storage root unless it is a URI)."""
        uri = self._data()["outputUri"]
        return self._record("data.outputUri", "output_path", uri, applied=self._under_root(uri))
