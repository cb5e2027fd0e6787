"""ray-gpu runtime: hands the values planned by pulumi-ray-gpu to Ray, PyTorch, DeepSpeed and PEFT.

A RayJob rendered by ray-gpu mounts this package (ConfigMap ``ray-gpu-runtime-<hash>``) and puts it on ``PYTHONPATH``,
so no image change is needed. Three lines in an existing script::

    import ray_gpu
    tuning = ray_gpu.load()  # reads $RAY_GPU_TUNING_FILE, applies Ray Data settings, logs every value (ray_gpu.log_to_stdout() prints it)
    trainer = TorchTrainer(loop, scaling_config=tuning.scaling_config(), run_config=tuning.run_config())

Outputs are written so that a rerun or a killed job never destroys or half-replaces committed results
(:mod:`ray_gpu.outputs`: ``ray_gpu.write_parquet(ds, uri)``, read back with ``ray_gpu.latest_output(uri)``), and a
resumed training run continues its data where it stopped (:mod:`ray_gpu.data_position`). When a job ends it writes
what it measured as a run record (:mod:`ray_gpu.run_record`: ``ray_gpu.write_run_record(tuning, data=...)``), which
``ray-gpu tune`` reads.

The contract (file path, environment variables, keys) is documented in docs/runtime.md of pulumi-ray-gpu.
Importing the package imports the standard library only: Ray, PyArrow and PyTorch are imported by the functions
that use them (so ``import ray_gpu.contract`` stays cheap, e.g. for the stdlib-only fuzz test of the loader).
"""

from . import run_record
from .contract import API_VERSION, DEFAULT_TUNING_FILE, TUNING_FILE_ENV, TuningError, knob_env_name, validate
from .data_position import DataPosition, DataPositionError, deterministic_data_config, resumable_batches
from .outputs import (
    CommittedRun,
    OutputError,
    StagedOutput,
    latest_output,
    read_committed,
    staged_output,
    write_parquet,
)
from .run_record import API_VERSION as RUN_RECORD_API_VERSION
from .run_record import RUN_RECORD_FILE_ENV, RUN_RECORD_PREFIX, validate_record
from .run_record import write as write_run_record
from .tuning import (
    CPU_STANDIN_ENV,
    REPORT_PREFIX,
    STORAGE_BUCKET_ENV,
    STORAGE_PATH_ENV,
    Tuning,
    load,
    loads,
    log_to_stdout,
)

__version__ = "1.0.0"
__all__ = [
    "API_VERSION",
    "CPU_STANDIN_ENV",
    "DEFAULT_TUNING_FILE",
    "REPORT_PREFIX",
    "RUN_RECORD_API_VERSION",
    "RUN_RECORD_FILE_ENV",
    "RUN_RECORD_PREFIX",
    "STORAGE_BUCKET_ENV",
    "STORAGE_PATH_ENV",
    "TUNING_FILE_ENV",
    "CommittedRun",
    "DataPosition",
    "DataPositionError",
    "OutputError",
    "StagedOutput",
    "Tuning",
    "TuningError",
    "deterministic_data_config",
    "knob_env_name",
    "latest_output",
    "load",
    "loads",
    "log_to_stdout",
    "read_committed",
    "resumable_batches",
    "run_record",
    "staged_output",
    "validate",
    "validate_record",
    "write_parquet",
    "write_run_record",
]
