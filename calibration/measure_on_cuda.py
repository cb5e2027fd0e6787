"""The device check of the memory planner's CPU calibration: what the CPU lanes measure or emulate, measured again on a
GPU in one run (docs/memory.md, "Calibration"). Needs PyTorch with CUDA, transformers and PEFT; not bitsandbytes (QLoRA
rows use calibration/kbit_standin.py on the GPU too) and not Ray.

- ``activations``: the grid of test/data/activation-calibration.json (calibration/activation_grid.py), each setting
  run on the GPU under CUDA's own autocast (``measured``), beside the committed CPU row (``cpuRow``): the bytes autograd
  saved per layer, in the head and the embeddings, and in all. Expected to differ: dropout (CPU keeps its noise in the
  input's dtype, CUDA a 1-byte mask). To look at where else they differ: the CPU emulation of CUDA's autocast, SDPA's
  fused kernels, Falcon's new decoder's mask copy.
- ``encoderInference``: the encoders' no_grad forwards of test/data/attention-calibration.json, the allocator's peak
  beside the CPU's peak of live tensors (``peakBytes``, ``cpuPeakBytes``).
- ``encoderStep``: the BERT-large training step of test/data/encoder-step-calibration.json, its peak allocated and
  reserved bytes under PyTorch's default allocator and under ``expandable_segments:True`` (what every rendered RayJob
  sets), each in a process of its own, since the allocator reads its settings once.

Usage, on a GPU: ``PYTHONPATH=runtime:calibration python3 calibration/measure_on_cuda.py --out DIR`` writes
DIR/cuda-calibration.json and prints a summary. ``--device cpu`` runs it on CPU, which reproduces the committed rows;
``--limit K`` runs the grid's first K settings only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import transformers
from activation_grid import Setting, configurations
from measure_activations import described, measure
from measure_attention import inference_rows

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = {
    "activations": ROOT / "test/data/activation-calibration.json",
    "attention": ROOT / "test/data/attention-calibration.json",
    "encoderStep": ROOT / "test/data/encoder-step-calibration.json",
}
# What a row says it saved; the rest of a row says what was measured.
SAVED = ("layerBytes", "headBytes", "embedBytes", "totalBytes", "weightCopyBytes")
ALLOCATORS = ("", "expandable_segments:True")


def settings_with_rows() -> Iterator[tuple[Setting, dict[str, Any]]]:
    """Each setting of the grid with the committed CPU row it produced."""
    rows = json.loads(COMMITTED["activations"].read_text())["rows"]
    for setting, row in zip(configurations(), rows, strict=True):
        what = described(setting)
        if {k: row.get(k) for k in what} != what:
            raise SystemExit(f"{COMMITTED['activations']} does not follow activation_grid.py at {what}")
        yield setting, row


def saved(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in SAVED if k in row}


def failure(error: Exception) -> dict[str, str]:
    """What a setting that could not run reports, so that one failure leaves the rest of the run's findings."""
    return {"error": f"{type(error).__name__}: {error}"}


def activations(device: str, limit: int | None) -> list[dict[str, Any]]:
    """The grid measured on `device`, each row beside the committed CPU row and the ratio of their totals."""
    out: list[dict[str, Any]] = []
    for n, (setting, row) in enumerate(settings_with_rows()):
        if limit is not None and n >= limit:
            break
        try:
            here = saved(measure(setting, device))
        except Exception as error:
            out.append({**described(setting), **failure(error)})
            continue
        ratio = here["totalBytes"] / row["totalBytes"]
        out.append({**described(setting), "cpuRow": saved(row), "measured": here, "totalRatio": round(ratio, 4)})
    return out


def encoder_inference(device: str) -> list[dict[str, Any]]:
    """The encoders' no_grad forwards on `device`, each beside the committed CPU row's peak."""
    committed = json.loads(COMMITTED["attention"].read_text())["inference"]
    out = []
    for row, cpu in zip(inference_rows(device), committed, strict=True):
        measured = row.pop("peakBytes")
        if {k: cpu[k] for k in row} != row:
            raise SystemExit(f"{COMMITTED['attention']} does not follow measure_attention.py at {row}")
        out.append({**row, "cpuPeakBytes": cpu["peakBytes"], "peakBytes": measured})
    return out


def encoder_step() -> list[dict[str, Any]]:
    """The BERT-large step on the GPU under each allocator setting, one process each."""
    script = Path(__file__).with_name("measure_encoder_step.py")
    results = []
    for conf in ALLOCATORS:
        env = {**os.environ, "PYTORCH_CUDA_ALLOC_CONF": conf}
        done = subprocess.run([sys.executable, str(script), "--cuda"], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            results.append({"allocConf": conf, "error": done.stderr[-2000:]})
            continue
        results.append(json.loads(done.stdout))
    return results


def summary(report: dict[str, Any]) -> list[str]:
    rows = report["activations"]
    failed = [r for r in rows if "error" in r]
    differing = [r for r in rows if "error" not in r and r["measured"] != r["cpuRow"]]
    same = len(rows) - len(failed) - len(differing)
    lines = [f"activations: {len(rows)} settings, {same} save what the CPU row saved, {len(failed)} failed"]
    lines += [f"  {r['totalRatio']:.4f} of the CPU total: {json.dumps(described_of(r))}" for r in differing]
    lines += [f"  failed: {json.dumps(r)}" for r in failed]
    inference = report.get("encoderInference", [])
    ratios = [r["peakBytes"] / r["cpuPeakBytes"] for r in inference]
    if ratios:
        span = f"{min(ratios):.3f}-{max(ratios):.3f}"
        lines.append(f"encoder inference: {len(inference)} forwards, peak {span} of the CPU's")
    cuda_equivalent = json.loads(COMMITTED["encoderStep"].read_text())["cudaEquivalent"]
    for step in report.get("encoderStep", []):
        if "error" in step:
            lines.append(f"encoder step ({step['allocConf'] or 'default allocator'}) failed: {step['error']}")
            continue
        lines.append(
            f"encoder step ({step['allocConf'] or 'default allocator'}): allocated {step['allocatedPeak'] / 1e9:.2f} GB "
            f"({step['allocatedPeak'] / cuda_equivalent:.3f} of the CPU-derived {cuda_equivalent / 1e9:.2f}), "
            f"reserved {step['reservedPeak'] / 1e9:.2f} GB"
        )
    return lines


def described_of(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("cpuRow", "measured", "totalRatio", "error")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run this on a GPU, or with --device cpu")
    report: dict[str, Any] = {
        "about": "The CPU calibration measured again on a device: calibration/measure_on_cuda.py",
        "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    parts = {
        "activations": lambda: activations(args.device, args.limit),
        "encoderInference": lambda: encoder_inference(args.device),
        **({"encoderStep": encoder_step} if args.device == "cuda" else {}),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for name, run in parts.items():
        report[name] = run()
        # Written after each part: a run stopped at its time limit still leaves what it measured.
        (args.out / "cuda-calibration.json").write_text(json.dumps(report, indent=1) + "\n")
    print("\n".join(summary(report)))


if __name__ == "__main__":
    main()
