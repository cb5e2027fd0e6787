"""ray-gpu runtime: hands the values planned by pulumi-ray-gpu to Ray, PyTorch, DeepSpeed and PEFT.

A RayJob rendered by ray-gpu mounts this package (ConfigMap ``ray-gpu-runtime-<hash>``) and puts it on ``PYTHONPATH``,
so no image change is needed. Three lines in an existing script::

    import ray_gpu
    tuning = ray_gpu.load()  # reads $RAY_GPU_TUNING_FILE, applies Ray Data settings, logs every value (ray_gpu.log_to_stdout() prints it)
    trainer = TorchTrainer(loop, scaling_config=tuning.scaling_config(), run_config=tuning.run_config())

The contract (file path, environment variables, keys) is documented in docs/runtime.md of pulumi-ray-gpu.
Standard library and Ray only.
"""

from .contract import API_VERSION, DEFAULT_TUNING_FILE, TUNING_FILE_ENV, TuningError, knob_env_name, validate
from .tuning import CPU_STANDIN_ENV, REPORT_PREFIX, STORAGE_BUCKET_ENV, STORAGE_PATH_ENV, Tuning, load, log_to_stdout

__version__ = "1.0.0"
__all__ = [
    "API_VERSION",
    "CPU_STANDIN_ENV",
    "DEFAULT_TUNING_FILE",
    "REPORT_PREFIX",
    "STORAGE_BUCKET_ENV",
    "STORAGE_PATH_ENV",
    "TUNING_FILE_ENV",
    "Tuning",
    "TuningError",
    "knob_env_name",
    "load",
    "log_to_stdout",
    "validate",
]
