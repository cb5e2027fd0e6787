"""What GPU utilization depends on, measured where the job runs: per training step the time spent waiting for the
next batch against the time computing (the data-wait fraction), samples and tokens per second; per GPU actor of a Ray
Data pool the time inside its calls against the time between them (its busy fraction).

Each measurement is published as a Ray metric (``ray.util.metrics``; Prometheus stores it with Ray's ``ray_`` prefix,
a counter as ``<name>_total``) tagged with the workload, and logged every ``log_every`` steps as one JSON line::

    ray-gpu telemetry {"kind": "train", "workload": "llm-pretrain", "rank": 0, "steps": 40, "dataWaitFraction": 0.031, ...}

The examples use it; your loop does the same in two lines (``docs/runtime.md``)::

    telemetry = ray_gpu.telemetry.StepTelemetry(tuning.workload)
    for batch in telemetry.batches(loader):   # time in next(): waiting for input
        ...                                    # the whole body, until the next batch is asked for: computing
        telemetry.step(samples=len(batch["input_ids"]), tokens=int(batch["attention_mask"].sum()))
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

#: Metric names (before Ray's ``ray_`` prefix), one definition for the dashboards and ``ray-gpu report``.
METRICS = {
    "input_wait_seconds": "gpu_job_input_wait_seconds",
    "compute_seconds": "gpu_job_compute_seconds",
    "steps": "gpu_job_steps",
    "samples": "gpu_job_samples",
    "tokens": "gpu_job_tokens",
    "actor_busy_seconds": "gpu_job_actor_busy_seconds",
    "actor_idle_seconds": "gpu_job_actor_idle_seconds",
}
LOG_PREFIX = "ray-gpu telemetry "


class _Counters:
    """Ray counters for one workload, created on first use inside a Ray process; a no-op outside Ray (unit tests,
    a script run without ``ray.init``)."""

    def __init__(self, workload: str, tag_keys: tuple[str, ...]) -> None:
        self.workload = workload
        self.tag_keys = tag_keys
        self._counters: dict[str, Any] | None = None

    def _make(self) -> dict[str, Any]:
        try:
            import ray
            from ray.util.metrics import Counter
        except ImportError:
            return {}
        if not ray.is_initialized():
            return {}
        keys = ("workload", *self.tag_keys)
        return {
            k: Counter(name, description=f"ray-gpu telemetry: {k.replace('_', ' ')}", tag_keys=keys)
            for k, name in METRICS.items()
        }

    def add(self, key: str, value: float, tags: dict[str, str]) -> None:
        if self._counters is None:
            self._counters = self._make()
        counter = self._counters.get(key)
        if counter is not None and value > 0:
            counter.inc(value, tags={"workload": self.workload, **tags})


@dataclass
class StepTelemetry:
    """Data-wait fraction and throughput of a training loop, one worker (``rank``) at a time."""

    workload: str
    rank: int = 0
    log_every: int = 20
    clock: Callable[[], float] = time.perf_counter
    emit: Callable[[str], None] = field(default=lambda line: print(line, flush=True))
    steps: int = 0
    wait_seconds: float = 0.0
    compute_seconds: float = 0.0
    samples: int = 0
    tokens: int = 0
    _mark: float | None = None
    _counters: _Counters | None = None

    def __post_init__(self) -> None:
        self._counters = _Counters(self.workload, ("rank",))

    def batches(self, source: Iterable[T]) -> Iterator[T]:
        """Yields ``source``'s items. The time inside ``next()`` counts as waiting for input; everything between two
        items (the loop's whole body: forward, backward, optimizer step, the host sync, checkpoints) as computing."""
        it = iter(source)
        try:
            while True:
                started = self.clock()
                self._end_compute(started)
                try:
                    item = next(it)
                except StopIteration:
                    return
                now = self.clock()
                self._add("input_wait_seconds", now - started)
                self._mark = now
                yield item
        finally:
            # The loop ended (or broke out): its last body counts too.
            self._end_compute(self.clock())

    def _end_compute(self, now: float) -> None:
        if self._mark is not None:
            self._add("compute_seconds", now - self._mark)
        self._mark = None

    def step(self, samples: int, tokens: int = 0) -> None:
        """Counts one step of the loop (its time is the body's, measured by ``batches``)."""
        self.steps += 1
        self.samples += samples
        self.tokens += tokens
        self._counters_add("steps", 1)
        self._counters_add("samples", samples)
        self._counters_add("tokens", tokens)
        if self.steps % self.log_every == 0:
            self.log()

    def _add(self, key: str, seconds: float) -> None:
        if key == "input_wait_seconds":
            self.wait_seconds += seconds
        else:
            self.compute_seconds += seconds
        self._counters_add(key, seconds)

    def _counters_add(self, key: str, value: float) -> None:
        assert self._counters is not None
        self._counters.add(key, value, {"rank": str(self.rank)})

    @property
    def data_wait_fraction(self) -> float:
        """Share of the loop's time spent waiting for input (0 when nothing was timed)."""
        total = self.wait_seconds + self.compute_seconds
        return self.wait_seconds / total if total > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        """Everything measured so far, as the log line prints it."""
        total = self.wait_seconds + self.compute_seconds
        return {
            "kind": "train",
            "workload": self.workload,
            "rank": self.rank,
            "steps": self.steps,
            "dataWaitFraction": round(self.data_wait_fraction, 4),
            "samplesPerSecond": round(self.samples / total, 3) if total > 0 else 0.0,
            "tokensPerSecond": round(self.tokens / total, 3) if total > 0 else 0.0,
            "waitSeconds": round(self.wait_seconds, 4),
            "computeSeconds": round(self.compute_seconds, 4),
        }

    def log(self) -> None:
        self.emit(LOG_PREFIX + json.dumps(self.summary(), sort_keys=True))


@dataclass
class ActorTelemetry:
    """Busy fraction of one GPU actor of a Ray Data pool: time inside its calls against the time between them."""

    workload: str
    actor: str
    log_every: int = 50
    clock: Callable[[], float] = time.perf_counter
    emit: Callable[[str], None] = field(default=lambda line: print(line, flush=True))
    calls: int = 0
    rows: int = 0
    busy_seconds: float = 0.0
    idle_seconds: float = 0.0
    _ended: float | None = None
    _counters: _Counters | None = None

    def __post_init__(self) -> None:
        self._counters = _Counters(self.workload, ("actor",))

    def call(self, fn: Callable[[], T], rows: int) -> T:
        """Runs one batch through ``fn``, timing it as busy and the gap since the previous call as idle (the first
        call's wait, while the actor loads its model and the pipeline fills, is not counted)."""
        started = self.clock()
        if self._ended is not None:
            self._count("actor_idle_seconds", started - self._ended)
        try:
            return fn()
        finally:
            self._ended = self.clock()
            self._count("actor_busy_seconds", self._ended - started)
            self.calls += 1
            self.rows += rows
            if self.calls % self.log_every == 0:
                self.log()

    def _count(self, key: str, seconds: float) -> None:
        if key == "actor_busy_seconds":
            self.busy_seconds += seconds
        else:
            self.idle_seconds += seconds
        assert self._counters is not None
        self._counters.add(key, seconds, {"actor": self.actor})

    @property
    def busy_fraction(self) -> float:
        """Share of the actor's time since its first call spent inside calls (1 when nothing was timed yet)."""
        total = self.busy_seconds + self.idle_seconds
        return self.busy_seconds / total if total > 0 else 1.0

    def summary(self) -> dict[str, Any]:
        return {
            "kind": "actor",
            "workload": self.workload,
            "actor": self.actor,
            "calls": self.calls,
            "rows": self.rows,
            "busyFraction": round(self.busy_fraction, 4),
            "idleFraction": round(1 - self.busy_fraction, 4),
            "busySeconds": round(self.busy_seconds, 4),
            "idleSeconds": round(self.idle_seconds, 4),
        }

    def log(self) -> None:
        self.emit(LOG_PREFIX + json.dumps(self.summary(), sort_keys=True))


def parse_log(text: str) -> list[dict[str, Any]]:
    """Every telemetry record in a job's log (the end-to-end tests read them)."""
    out = []
    for line in text.splitlines():
        at = line.find(LOG_PREFIX)
        if at >= 0:
            out.append(json.loads(line[at + len(LOG_PREFIX) :]))
    return out
