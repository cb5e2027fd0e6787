"""The runtime's telemetry: data-wait fraction and throughput of a training loop, the busy fraction of a GPU actor,
and the log lines the end-to-end tests read, on a clock the test moves."""

from __future__ import annotations

import itertools

import pytest

from ray_gpu.telemetry import ActorTelemetry, StepTelemetry, parse_log


class Clock:
    """A clock the test advances by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def slow_source(clock: Clock, wait: float, n: int):
    """Yields n items, each taking ``wait`` seconds to produce (an input pipeline that makes the loop wait)."""
    for i in range(n):
        clock.now += wait
        yield i


def test_a_loop_that_waits_for_input_reports_its_data_wait_fraction_and_throughput() -> None:
    clock, lines = Clock(), []
    t = StepTelemetry("llm", rank=1, log_every=5, clock=clock, emit=lines.append)
    for _ in t.batches(slow_source(clock, wait=0.25, n=10)):
        clock.now += 0.75  # computing
        t.step(samples=8, tokens=8 * 512)
    assert t.steps == 10
    assert t.data_wait_fraction == pytest.approx(0.25)
    s = t.summary()
    assert s["samplesPerSecond"] == pytest.approx(80 / 10.0)
    assert s["tokensPerSecond"] == pytest.approx(80 * 512 / 10.0)
    records = parse_log("\n".join(f"(RayTrainWorker pid=1) {line}" for line in lines))
    assert [r["steps"] for r in records] == [5, 10]
    # logged at step() of the 10th batch, before that body's time is closed by the loop's next request
    assert records[-1]["steps"] == 10 and {k: records[-1][k] for k in ("kind", "workload", "rank")} == {
        "kind": "train",
        "workload": "llm",
        "rank": 1,
    }
    assert set(records[-1]) == set(s)


def test_work_after_step_counts_as_computing_and_a_break_closes_the_last_step() -> None:
    clock = Clock()
    t = StepTelemetry("llm", clock=clock, emit=lambda _: None)
    for i, _ in enumerate(t.batches(slow_source(clock, wait=0.01, n=100))):
        clock.now += 0.02  # forward and backward
        t.step(samples=1)
        clock.now += 0.2  # optimizer step and the host sync on the loss, after step()
        if i == 9:
            break
    assert t.steps == 10
    # 10 waits of 0.01 s against 10 bodies of 0.22 s, the last one closed by the break
    assert t.data_wait_fraction == pytest.approx(0.1 / (0.1 + 2.2))


def test_a_loop_whose_input_is_ready_waits_for_nothing() -> None:
    clock = Clock()
    t = StepTelemetry("llm", clock=clock, emit=lambda _: None)
    for _ in t.batches(range(4)):
        clock.now += 1.0
        t.step(samples=1)
    assert t.data_wait_fraction == 0.0
    assert StepTelemetry("empty", emit=lambda _: None).data_wait_fraction == 0.0


def test_an_actor_that_waits_between_calls_is_busy_for_the_rest_and_its_first_wait_does_not_count() -> None:
    clock, lines = Clock(), []
    a = ActorTelemetry("embed", actor="0", log_every=3, clock=clock, emit=lines.append)
    clock.now = 100.0  # model loading and the pipeline filling: before the first call
    for _ in range(6):
        a.call(lambda: setattr(clock, "now", clock.now + 0.9), rows=64)
        clock.now += 0.1  # waiting for the next block
    assert a.calls == 6 and a.rows == 384
    # 6 calls of 0.9 s, 5 gaps of 0.1 s between them
    assert a.busy_fraction == pytest.approx(5.4 / 5.9)
    assert [r["calls"] for r in parse_log("\n".join(lines))] == [3, 6]
    assert parse_log("\n".join(lines))[-1]["idleFraction"] == pytest.approx(0.5 / 5.9, abs=1e-4)


def test_a_failing_call_still_counts_as_busy_and_is_raised() -> None:
    clock = Clock()
    a = ActorTelemetry("embed", actor="0", clock=clock, emit=lambda _: None)

    def boom() -> None:
        clock.now += 2.0
        raise RuntimeError("CUDA out of memory")

    with pytest.raises(RuntimeError):
        a.call(boom, rows=1)
    assert a.busy_seconds == pytest.approx(2.0)


def test_the_batches_wrapper_passes_every_item_through_in_order() -> None:
    t = StepTelemetry("x", emit=lambda _: None)
    assert list(itertools.islice(t.batches(iter(range(100))), 100)) == list(range(100))


def test_counters_are_published_inside_ray(ray_local) -> None:
    ray = ray_local

    @ray.remote
    def loop() -> dict:
        t = StepTelemetry("llm", emit=lambda _: None)
        for _ in t.batches(range(3)):
            t.step(samples=2, tokens=10)
        assert t._counters is not None and set(t._counters._counters or {}) >= {
            "steps",
            "samples",
            "input_wait_seconds",
        }
        return t.summary()

    assert ray.get(loop.remote())["steps"] == 3
