"""Shared by the calibration tests: the planner's own numbers, asked through calibration/planner_bridge.mjs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def planner():
    if not (ROOT / "dist/core/memory/estimate.js").exists():
        pytest.fail("dist/ is missing: run npm run build (npm ci does) before this test")
    proc = subprocess.Popen(
        ["node", str(ROOT / "calibration/planner_bridge.mjs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )

    def ask(request: dict) -> dict:
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    yield ask
    proc.kill()
