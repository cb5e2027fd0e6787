"""Fixtures: the repo's dev and prod stacks rendered by the real CLI, once per session."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict]]:
    """``{stack: {"Kind/name": object}}`` for dev and prod, from ``ray-gpu render``."""
    out: dict[str, dict[str, dict]] = {}
    for stack in ("dev", "prod"):
        target = tmp_path_factory.mktemp(stack)
        subprocess.run(
            ["node", str(REPO / "bin/ray-gpu.js"), "render", "--stack", stack, "--out", str(target)],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        objects = {}
        for f in sorted(target.glob("*.yaml")):
            for doc in yaml.safe_load_all(f.read_text()):
                objects[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
        out[stack] = objects
    return out


@pytest.fixture(scope="session")
def tuning_docs(rendered) -> dict[str, dict]:
    """Every rendered tuning document by ``stack/workload``."""
    return {
        f"{stack}/{key.split('/')[1].removesuffix('-tuning')}": json.loads(obj["data"]["tuning.json"])
        for stack, objects in rendered.items()
        for key, obj in objects.items()
        if key.startswith("ConfigMap/") and key.endswith("-tuning")
    }


@pytest.fixture
def write_doc(tmp_path: Path):
    """Writes a tuning document (and optional deepspeed.json next to it); returns the path."""

    def write(doc, deepspeed=None, text=None) -> str:
        path = tmp_path / "tuning.json"
        path.write_text(text if text is not None else json.dumps(doc))
        if deepspeed is not None:
            (tmp_path / "deepspeed.json").write_text(json.dumps(deepspeed))
        return str(path)

    return write


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch):
    for var in list(os.environ):
        if var.startswith("RAY_GPU_"):
            monkeypatch.delenv(var)


@pytest.fixture
def stdout_log():
    """The library's records printed to stdout for one test (``ray_gpu.log_to_stdout()``), then its handlers restored."""
    import logging

    import ray_gpu

    logger = logging.getLogger("ray_gpu")
    handlers, level = list(logger.handlers), logger.level
    ray_gpu.log_to_stdout()
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


@pytest.fixture(scope="session")
def ray_local():
    """A small local Ray (2 CPUs, no dashboard) for the tests that run Ray Data, stopped after the session."""
    import ray

    # Ray's workers import the runtime library and the test modules (train loops defined in them) from here.
    path = os.pathsep.join([str(REPO / "runtime"), str(REPO / "runtime" / "tests")])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield ray
    ray.shutdown()
