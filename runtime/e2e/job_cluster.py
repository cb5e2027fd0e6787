"""A rendered RayJob's local cluster, started the way the end-to-end runs need it: the RayJob's rayStartParams and
container environment, its runtime env's variables, the CPU stand-in, a storage folder standing in for the stack's
bucket, one compute thread per process; every change printed. Shared by the job runs (``run_jobs.py``) and the
committed-outputs experiment (``committed_outputs.py``)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from cluster import LocalCluster


def job_dir(work: str, label: str) -> str:
    """The scratch folder of one run (its cluster's mounts and the job log)."""
    return os.path.join(work, re.sub(r"[^A-Za-z0-9.-]+", "-", label).strip("-"))


def local_tuning(cluster: LocalCluster, name: str, check_working_set: bool = True) -> dict[str, Any]:
    """The tuning file as mounted locally. A data job's working set must fit Ray Data's default share (50%) of the
    scaled object store, as it fits the real one: otherwise the local run would test a different plan."""
    from cluster import MIN_OBJECT_STORE_BYTES, OBJECT_STORE_SCALE

    with open(os.path.join(cluster.mounts["/etc/ray-gpu"], "tuning.json"), encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    if "data" in doc and check_working_set:
        worker = cluster.job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
        store = max(MIN_OBJECT_STORE_BYTES, int(worker["rayStartParams"]["object-store-memory"]) // OBJECT_STORE_SCALE)
        if doc["data"]["workingSetBytes"] > store * worker["replicas"] // 2:
            raise RuntimeError(
                f"{name}: the planned working set does not fit Ray Data's share of the scaled store; lower OBJECT_STORE_SCALE"
            )
    return doc


def runtime_env(job: dict[str, Any], cluster: LocalCluster) -> dict[str, str]:
    """Applies the RayJob's runtimeEnvYAML as Ray would for the job's processes: env_vars on every node; pip
    requirements must already be met by this environment (there is no job server here to build one)."""
    from importlib.metadata import PackageNotFoundError, version

    import yaml
    from packaging.requirements import Requirement

    text = job["spec"].get("runtimeEnvYAML")
    if not text:
        return {}
    env = yaml.safe_load(text)
    # A list of requirements, or Ray's pip map when they carry hashes (packages, pip_install_options with
    # --require-hashes): each line is a requirement, then pip's per-requirement options.
    pip = env.get("pip", [])
    for line in pip["packages"] if isinstance(pip, dict) else pip:
        req = Requirement(line.split(" --hash=")[0])
        try:
            have = version(req.name)
        except PackageNotFoundError:
            cluster.adjustments.append(
                f"runtime env pip {line}: not in the test environment (the offline index lacks it); the CPU stand-in does not need it"
            )
            continue
        if not req.specifier.contains(have, prereleases=True):
            raise RuntimeError(
                f"runtime env pip {line}: this environment has {req.name} {have}; update runtime/requirements.txt"
            )
        cluster.adjustments.append(f"runtime env pip {line}: met by the test environment ({have})")
    return {k: str(v) for k, v in env.get("env_vars", {}).items()}


@contextlib.contextmanager
def started_cluster(
    name: str, job: dict[str, Any], objects: dict[str, Any], jobdir: str, storage: str, store_scale: int | None = None
) -> Iterator[tuple[LocalCluster, dict[str, Any]]]:
    """The job's local cluster, started with ``storage`` as its bucket, and its tuning document; stopped (only its own
    processes) when the block ends. ``store_scale`` shrinks the stores by another factor than the tests' and skips the
    check that the plan's working set fits them: the tune loop runs plans on a store they were not made for."""
    cluster = (
        LocalCluster(job, objects, jobdir) if store_scale is None else LocalCluster(job, objects, jobdir, store_scale)
    )
    # One compute thread per process: Ray would give each process as many as its logical CPUs, which here
    # oversubscribe 2 physical cores many times over.
    extra_env = {"RAY_GPU_CPU_STANDIN": "1", "RAY_GPU_STORAGE_PATH": storage, "OMP_NUM_THREADS": "1"}
    cluster.nodes()  # lay out the mounts
    doc = local_tuning(cluster, name, check_working_set=store_scale is None)
    extra_env.update(runtime_env(job, cluster))
    cluster.adjustments.append(f"RAY_GPU_STORAGE_PATH={storage} (the bucket of a real stack)")
    cluster.adjustments.append(f"OMP_NUM_THREADS=1 ({os.cpu_count()} physical CPUs under many logical ones)")
    cluster.start(extra_env)
    try:
        yield cluster, doc
    finally:
        cluster.stop()
