"""What the runtime hands to Ray, checked against the rendered plans: each planned value is checked by what Ray,
PyTorch or peft decide with it (placement, checkpoints kept, retries, blocks, parameters, the optimizer step that
runs), never by reading back the constructor argument it became."""

from __future__ import annotations

import json
from typing import Any

import pytest

import ray_gpu
from ray_gpu import knob_env_name
from ray_gpu.preemption import NOTICE_DIR_ENV


def load(write_doc, doc, env=None, deepspeed=None, **kw):
    return ray_gpu.load(write_doc(doc, deepspeed=deepspeed), env=env or {}, **kw)


def test_knob_env_names_match_the_rayjob_environment(rendered, tuning_docs):
    for stack, objects in rendered.items():
        for key, job in objects.items():
            if not key.startswith("RayJob/"):
                continue
            knobs = tuning_docs[f"{stack}/{job['metadata']['name']}"]["knobs"]
            env = {
                e["name"]: e.get("value")
                for e in job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0][
                    "env"
                ]
            }
            planner = {n for n in env if n.startswith("RAY_GPU_")} - {
                "RAY_GPU_TUNING_FILE",
                "RAY_GPU_STORAGE_BUCKET",
                NOTICE_DIR_ENV,
            }
            assert planner == {knob_env_name(k) for k in knobs}, key
            for k, v in knobs.items():
                assert env[knob_env_name(k)] == (str(v).lower() if isinstance(v, bool) else str(v)), (key, k)


def _deprecations_logged(build) -> list[str]:
    """Ray Data announces deprecated arguments through its loggers (not the warnings module): what ``build`` logged."""
    import logging

    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "deprecated" in record.getMessage():
                messages.append(record.getMessage())

    handler, logger = Collect(level=logging.WARNING), logging.getLogger("ray.data")
    logger.addHandler(handler)
    try:
        build()
    finally:
        logger.removeHandler(handler)
    return messages


def _block_sizes(ray_local, ctx: Any, rows: int, row_values: int) -> list[int]:
    """The bytes of each block Ray Data produces when one read task makes ``rows`` int64 tensors of ``row_values``
    values under the DataContext ``ctx``."""
    import ray.data

    current = ray.data.DataContext.get_current()
    ray.data.DataContext._set_current(ctx)  # a Dataset takes the current context when it is created
    try:
        ds = ray_local.data.range_tensor(rows, shape=(row_values,), override_num_blocks=1).materialize()
    finally:
        ray.data.DataContext._set_current(current)
    return [block.metadata.size_bytes for bundle in ds.iter_internal_ref_bundles() for block in bundle.blocks]


def test_data_jobs_get_ray_data_arguments_of_the_current_api(ray_local, tuning_docs, write_doc):
    """The planned block size is what Ray Data cuts blocks at: one read task making three planned blocks of rows
    yields blocks Ray cut once they passed the planned size (each but the last at least that size, none beyond Ray's
    1.5x bound), where Ray's default context (128 MiB) keeps them as one block. The other arguments: which one
    carries each planned value, with no deprecated one (their effects are measured on a cluster: runtime/e2e/levers)."""
    import ray.data
    from ray.data.context import MAX_SAFE_BLOCK_SIZE_FACTOR

    doc = tuning_docs["prod/embed-chunks"]
    planned = doc["data"]["blockSizeBytes"]
    ctx = ray.data.DataContext()
    default_limit = ctx.execution_options.resource_limits.object_store_memory
    tuning = load(write_doc, doc, apply_data_context=False)
    tuning.apply_data_context(ctx)
    row_values = 1024  # 8 KiB rows
    rows = 3 * planned // (8 * row_values)
    blocks = _block_sizes(ray_local, ctx, rows, row_values)
    assert len(blocks) >= 2 and min(blocks[:-1]) >= planned and max(blocks) < MAX_SAFE_BLOCK_SIZE_FACTOR * planned, (
        blocks,
        planned,
    )
    unplanned = _block_sizes(ray_local, ray.data.DataContext(), rows, row_values)
    assert unplanned == [sum(blocks)], "without the plan, Ray Data keeps the read as one block"
    assert ctx.execution_options.resource_limits.object_store_memory == default_limit, (
        "Ray Data's own limit is left alone"
    )
    pool = tuning.actor_pool_kwargs()
    assert (
        isinstance(pool["compute"], ray.data.ActorPoolStrategy) and pool["compute"].min_size == pool["compute"].max_size
    )
    pre = tuning.preprocess_kwargs()
    assert isinstance(pre["compute"], ray.data.TaskPoolStrategy) and pre["num_cpus"] == 1

    class Identity:
        def __call__(self, batch):
            return batch

    assert (
        _deprecations_logged(lambda: ray.data.range(1).map_batches(lambda b: b, **pre).map_batches(Identity, **pool))
        == []
    )
    # and the check does catch one: the argument the runtime used before Ray 2.51
    assert _deprecations_logged(lambda: ray.data.range(1).map_batches(lambda b: b, concurrency=4))


def test_deepspeed_file_must_agree_with_the_plan(tuning_docs, write_doc):
    doc = tuning_docs["dev/llm-pretrain"]
    tuning = load(write_doc, doc, deepspeed={"zero_optimization": {"stage": 3}})
    with pytest.raises(ray_gpu.TuningError, match=r"zero_optimization\.stage: is 3, the plan's zeroStage is 1"):
        tuning.deepspeed_config()


def test_environment_must_agree_with_the_file(tuning_docs, write_doc):
    doc = tuning_docs["dev/llm-pretrain"]
    same = {"RAY_GPU_MICRO_BATCH_SIZE": str(doc["knobs"]["microBatchSize"]), "RAY_GPU_GRADIENT_CHECKPOINTING": "false"}
    assert load(write_doc, doc, env=same).knob("microBatchSize") == doc["knobs"]["microBatchSize"]
    with pytest.raises(ray_gpu.TuningError) as err:
        load(write_doc, doc, env={"RAY_GPU_MICRO_BATCH_SIZE": "1", "RAY_GPU_GRADIENT_CHECKPOINTING": "maybe"})
    assert err.value.problems == [
        "$RAY_GPU_GRADIENT_CHECKPOINTING='maybe' disagrees with knobs.gradientCheckpointing=False in the tuning "
        "file: both come from one plan; change the workload and re-render",
        "$RAY_GPU_MICRO_BATCH_SIZE='1' disagrees with knobs.microBatchSize=2 in the tuning file: both come from "
        "one plan; change the workload and re-render",
    ]


def test_stand_ins_are_reported(tuning_docs, write_doc):
    doc = tuning_docs["dev/sft-qwen2-vl"]
    tuning = load(write_doc, doc, env={"RAY_GPU_CPU_STANDIN": "1", "RAY_GPU_STORAGE_PATH": "/tmp/x"})
    assert tuning.stand_in("lora.quantization", "quantization", "none", "no GPU") == "none"
    tuning.scaling_config(), tuning.run_config()
    payload = tuning.report()
    entry = next(e for e in payload["applied"] if e["key"] == "lora.quantization")
    assert (entry["value"], entry["applied"], entry["standin"]) == ("nf4", "none", "no GPU")


def test_methods_of_another_kind_fail_clearly(tuning_docs, write_doc):
    tuning = load(write_doc, tuning_docs["dev/embed-chunks"], apply_data_context=False)
    with pytest.raises(ray_gpu.TuningError, match="this EmbeddingPipeline document has no train section"):
        tuning.scaling_config()
    with pytest.raises(ray_gpu.TuningError, match=r"knobs.microBatchSize: not planned for a EmbeddingPipeline"):
        tuning.knob("microBatchSize")


def test_lora_sweep_and_report(tuning_docs, write_doc, capsys):
    """peft, given the planned LoRA arguments by the fine-tuning example on a tiny model of the planned family (no
    download), wraps exactly the planned modules, trains only their adapters, r x (in + out) parameters each, and
    scales them by alpha / r. Then the sweep's grid, output path and report line."""
    import torch
    from peft.tuners.lora import LoraLayer

    from ray_gpu.examples import common, sft

    doc = tuning_docs["dev/sft-qwen2-vl"]
    tuning = load(write_doc, doc, apply_data_context=False)
    planned = doc["lora"]
    model = sft.build(tuning.model, tuning.model_family, tuning.lora_config_kwargs(), True, False, "sdpa")
    wrapped = {
        name.removeprefix("base_model.model."): m for name, m in model.named_modules() if isinstance(m, LoraLayer)
    }
    base = common.causal_lm(tuning.model, tuning.model_family, True)
    targets = {
        name
        for name, m in base.named_modules()
        if isinstance(m, torch.nn.Linear) and name.rsplit(".", 1)[-1] in planned["targetModules"]
    }
    assert set(wrapped) == targets and targets, sorted(wrapped)
    trainable = {name: p.numel() for name, p in model.named_parameters() if p.requires_grad}
    assert all(".lora_" in name for name in trainable), sorted(trainable)
    rank = planned["rank"]
    assert sum(trainable.values()) == sum(
        rank * (m.base_layer.in_features + m.base_layer.out_features) for m in wrapped.values()
    )
    assert {m.scaling["default"] for m in wrapped.values()} == {planned["alpha"] / rank}
    sweep = load(write_doc, tuning_docs["dev/llm-sweep"], env={"RAY_GPU_STORAGE_BUCKET": "b"}, apply_data_context=False)
    assert sweep.sweep_grid() == tuning_docs["dev/llm-sweep"]["sweep"]["grid"] and len(sweep.sweep_grid()) == 6
    assert sweep.output_path() == "s3://b/ray/results/llm-sweep/"
    capsys.readouterr()
    payload = sweep.report()
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(ray_gpu.REPORT_PREFIX) and json.loads(line[len(ray_gpu.REPORT_PREFIX) :]) == payload
    assert [e["key"] for e in payload["applied"]] == ["sweep.grid", "sweep.grid", "data.outputUri"]


def test_every_applied_value_is_logged_with_its_source(tuning_docs, write_doc, capsys, stdout_log):
    load(write_doc, tuning_docs["dev/embed-chunks"])
    out = capsys.readouterr().out
    assert "ray-gpu: DataContext.target_max_block_size = 13811712  (tuning.json data.blockSizeBytes)" in out


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b'{"zero_optimization": {"stage": NaN}}', "zero_optimization.stage: NaN is not a number"),
        (b'{"zero_optimization": {"stage": 1, "stage": 1}}', "zero_optimization.stage: duplicate key"),
        (b"[1]", "$: expected an object, got list"),
        (b'{"zero_optimization": 3}', "zero_optimization.stage: is None"),
        (b"\xff", "$: not UTF-8 text"),
    ],
)
def test_a_malformed_deepspeed_file_is_a_tuning_error_with_its_path(tuning_docs, tmp_path, text, problem):
    doc = tuning_docs["dev/llm-pretrain"]
    (tmp_path / "tuning.json").write_text(json.dumps(doc))
    (tmp_path / "deepspeed.json").write_bytes(text)
    tuning = ray_gpu.load(str(tmp_path / "tuning.json"), env={}, apply_data_context=False)
    with pytest.raises(ray_gpu.TuningError) as err:
        tuning.deepspeed_config()
    assert err.value.source.endswith("deepspeed.json") and any(p.startswith(problem) for p in err.value.problems), (
        err.value.problems
    )
