"""Example entrypoints, one per workload kind, runnable as ``python -m ray_gpu.examples.<name>`` in a RayJob
rendered by ray-gpu (full scale) or locally with ``--smoke`` (CPU, tiny random model, synthetic rows)."""
