"""Writes Ray's own Grafana dashboards (default, Ray Data, Ray Train) as Ray 2.58.0 generates them into each session
(``ray.dashboard.modules.metrics.grafana_dashboard_factory``), to ``dashboards/ray-<version>/``. The platform provisions
them as ConfigMaps for Grafana's sidecar (components/observability.ts). Run with the test environment's Python
(``.venv-ray/bin/python scripts/ray-dashboards.py``); ``runtime/tests/test_ray_dashboards.py`` fails when the committed
files differ from what the pinned Ray generates."""

from __future__ import annotations

import os
import sys

DASHBOARDS = ("default", "data", "train")


def generated() -> dict[str, str]:
    """``{file name: JSON text}`` of each dashboard, as the installed Ray generates it."""
    from ray.dashboard.modules.metrics import grafana_dashboard_factory as factory

    return {
        f"{name}.json": getattr(factory, f"generate_{name}_grafana_dashboard")()[0]
        for name in DASHBOARDS
    }


def folder() -> str:
    import ray

    return os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        "dashboards",
        f"ray-{ray.__version__}",
    )


def main() -> int:
    out = folder()
    os.makedirs(out, exist_ok=True)
    for name, text in generated().items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"wrote {', '.join(DASHBOARDS)} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
