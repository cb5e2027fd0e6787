"""What the runtime hands to Ray, checked against the rendered plans (real Ray objects, no cluster needed)."""

from __future__ import annotations

import json

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
            env = {e["name"]: e.get("value") for e in job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["env"]}
            planner = {n for n in env if n.startswith("RAY_GPU_")} - {"RAY_GPU_TUNING_FILE", "RAY_GPU_STORAGE_BUCKET", NOTICE_DIR_ENV}
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


def test_data_jobs_get_ray_data_arguments_of_the_current_api(tuning_docs, write_doc):
    """Which argument carries each planned value (their effects are measured on a cluster: runtime/e2e/levers)."""
    import ray.data

    doc = tuning_docs["prod/embed-chunks"]
    ctx = ray.data.DataContext()
    default_limit = ctx.execution_options.resource_limits.object_store_memory
    tuning = load(write_doc, doc, apply_data_context=False)
    tuning.apply_data_context(ctx)
    assert ctx.target_max_block_size == doc["data"]["blockSizeBytes"]
    assert ctx.execution_options.resource_limits.object_store_memory == default_limit, "Ray Data's own limit is left alone"
    pool = tuning.actor_pool_kwargs()
    assert isinstance(pool["compute"], ray.data.ActorPoolStrategy) and pool["compute"].min_size == pool["compute"].max_size
    pre = tuning.preprocess_kwargs()
    assert isinstance(pre["compute"], ray.data.TaskPoolStrategy) and pre["num_cpus"] == 1

    class Identity:
        def __call__(self, batch):
            return batch

    assert _deprecations_logged(lambda: ray.data.range(1).map_batches(lambda b: b, **pre).map_batches(Identity, **pool)) == []
    # and the check does catch one: the argument the runtime used before Ray 2.51
    assert _deprecations_logged(lambda: ray.data.range(1).map_batches(lambda b: b, concurrency=4))


def test_cpu_stand_in_replaces_gpus_and_says_so(tuning_docs, write_doc):
    tuning = load(write_doc, tuning_docs["dev/llm-pretrain"], env={"RAY_GPU_CPU_STANDIN": "1"})
    scaling = tuning.scaling_config()
    assert scaling.use_gpu is False and scaling.resources_per_worker == {"CPU": 11}
    entry = next(e for e in tuning.applied if e["key"] == "train.resourcesPerWorker")
    assert entry["value"] == {"CPU": 11, "GPU": 1} and entry["applied"] == {"CPU": 11} and "gloo" in entry["standin"]
    assert tuning.train_loop_config()["backend"] == "gloo"


def test_train_configs_on_gpus(tuning_docs, write_doc):
    doc = tuning_docs["prod/llm-pretrain"]
    tuning = load(write_doc, doc, env={"RAY_GPU_STORAGE_BUCKET": "stack-bucket"}, deepspeed={"zero_optimization": {"stage": doc["knobs"]["zeroStage"]}})
    scaling = tuning.scaling_config()
    assert scaling.use_gpu is True and scaling.num_workers == doc["train"]["numWorkers"]
    assert scaling.resources_per_worker == doc["train"]["resourcesPerWorker"]
    run = tuning.run_config()
    assert run.storage_path == "s3://stack-bucket/ray/checkpoints" and run.name == "llm-pretrain"
    assert run.checkpoint_config.num_to_keep == doc["train"]["checkpointsToKeep"] == 3
    assert run.failure_config.max_failures == doc["train"]["maxFailures"] == 3
    assert tuning.deepspeed_config() == {"zero_optimization": {"stage": doc["knobs"]["zeroStage"]}}
    loop = tuning.train_loop_config()
    assert (loop["micro_batch_size"], loop["gradient_accumulation_steps"], loop["backend"]) == (
        doc["knobs"]["microBatchSize"],
        doc["knobs"]["gradientAccumulationSteps"],
        "nccl",
    )


def test_deepspeed_file_must_agree_with_the_plan(tuning_docs, write_doc):
    doc = tuning_docs["dev/llm-pretrain"]
    tuning = load(write_doc, doc, deepspeed={"zero_optimization": {"stage": 3}})
    with pytest.raises(ray_gpu.TuningError, match=r"zero_optimization\.stage: is 3, the plan's zeroStage is 1"):
        tuning.deepspeed_config()


def test_storage_needs_the_bucket_or_a_path(tuning_docs, write_doc):
    tuning = load(write_doc, tuning_docs["dev/llm-pretrain"])
    with pytest.raises(ray_gpu.TuningError, match=r"\$RAY_GPU_STORAGE_BUCKET and \$RAY_GPU_STORAGE_PATH are both unset"):
        tuning.run_config()
    local = load(write_doc, tuning_docs["dev/llm-pretrain"], env={"RAY_GPU_STORAGE_PATH": "/mnt/fsx/"})
    assert local.run_config().storage_path == "/mnt/fsx/ray/checkpoints"


def test_environment_must_agree_with_the_file(tuning_docs, write_doc):
    doc = tuning_docs["dev/llm-pretrain"]
    same = {"RAY_GPU_MICRO_BATCH_SIZE": str(doc["knobs"]["microBatchSize"]), "RAY_GPU_GRADIENT_CHECKPOINTING": "false"}
    assert load(write_doc, doc, env=same).knob("microBatchSize") == doc["knobs"]["microBatchSize"]
    with pytest.raises(ray_gpu.TuningError) as err:
        load(write_doc, doc, env={"RAY_GPU_MICRO_BATCH_SIZE": "1", "RAY_GPU_GRADIENT_CHECKPOINTING": "maybe"})
    assert err.value.problems == [
        "$RAY_GPU_GRADIENT_CHECKPOINTING='maybe' disagrees with knobs.gradientCheckpointing=False in the tuning file: both come from one plan; change the workload and re-render",
        "$RAY_GPU_MICRO_BATCH_SIZE='1' disagrees with knobs.microBatchSize=2 in the tuning file: both come from one plan; change the workload and re-render",
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
    lora = load(write_doc, tuning_docs["dev/sft-qwen2-vl"]).lora_config_kwargs()
    assert lora == {"r": 16, "lora_alpha": 32, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"], "lora_dropout": 0.05, "quantization": "nf4"}
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
    assert err.value.source.endswith("deepspeed.json") and any(p.startswith(problem) for p in err.value.problems), err.value.problems


def test_adamw_is_constructed_as_the_plan_counts_its_step() -> None:
    """optimizerStep picks the AdamW flags; a fused plan on the CPU stand-in steps one parameter at a time."""
    import torch

    from ray_gpu.examples.loop import adamw

    params = [torch.nn.Parameter(torch.zeros(4))]
    assert adamw(params, 1e-3, "foreach").defaults["foreach"] is True
    assert adamw(params, 1e-3, "for-loop").defaults["foreach"] is False
    fused = adamw(params, 1e-3, "fused").defaults
    if torch.cuda.is_available():
        assert fused["fused"] is True
    else:
        assert fused["foreach"] is False and not fused["fused"]
