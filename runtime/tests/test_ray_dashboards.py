"""The committed copies of Ray's own Grafana dashboards are what the pinned Ray generates (scripts/ray-dashboards.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("ray_dashboards", REPO / "scripts" / "ray-dashboards.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_dashboards_are_what_ray_generates() -> None:
    script = _script()
    folder = Path(script.folder())
    for name, text in script.generated().items():
        committed = folder / name
        assert committed.exists(), f"{committed} is missing: run .venv-ray/bin/python scripts/ray-dashboards.py"
        assert committed.read_text(encoding="utf-8") == text, (
            f"{committed} differs from Ray's: run scripts/ray-dashboards.py"
        )
        board = json.loads(text)
        assert board["uid"] and board["panels"]
    # The default dashboard filters on the cluster label our PodMonitor copies from the pod (ray.io/cluster).
    assert "ray_io_cluster" in (folder / "default.json").read_text(encoding="utf-8")
