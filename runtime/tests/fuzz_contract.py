"""Seeded fuzz of the tuning-document loader, standard library only (runs with the system ``python3``).

    python3 runtime/tests/fuzz_contract.py [--seed N] [--count N] [--verbose]

Mutates the real tuning documents of the dev stack (``fixtures/dev-tuning.json``) into malformed ones: wrong types,
removed and unknown keys, deep nesting, huge numbers, NaN and Infinity, duplicate keys, invalid UTF-8, truncation,
random bytes, byte-order marks, enormous strings, documents that are not objects, files that are not regular files;
plus reformatted documents that are still valid. Each input goes through the loader the jobs call, from a file
(``ray_gpu.load``) and from text (``ray_gpu.loads``), and must either load (only when it is still valid) or raise
``TuningError`` whose every problem names a key path, never another exception, within a generous time bound (a
hang detector only). Prints one summary line; exits 1 on any failure, naming the input's index and a short repr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

RUNTIME = Path(__file__).resolve().parents[1]
#: Modules loaded before the loader was imported (in a fresh python3: the standard library's few).
_BEFORE = set(sys.modules)


def _runtime_library() -> ModuleType:
    """The runtime library of this checkout (``runtime/ray_gpu``): the one already imported (under pytest, from its
    ``pythonpath``), or else imported from its folder by location, ``sys.path`` untouched: this file also runs as a
    script with a bare python3 (``npm test``, ``npm run test:ray``), where nothing puts the library on the path."""
    if "ray_gpu" not in sys.modules:
        package = RUNTIME / "ray_gpu"
        spec = importlib.util.spec_from_file_location(
            "ray_gpu", package / "__init__.py", submodule_search_locations=[str(package)]
        )
        assert spec is not None and spec.loader is not None
        sys.modules["ray_gpu"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["ray_gpu"])
    return sys.modules["ray_gpu"]


ray_gpu = _runtime_library()
from ray_gpu import contract, strict_json  # noqa: E402  (the package _runtime_library imported)

FIXTURE = Path(__file__).with_name("fixtures") / "dev-tuning.json"
#: Modules the loader must not import (the fuzz runs with a bare python3, and jobs import the loader first).
HEAVY = ("ray", "torch", "pyarrow", "numpy", "transformers", "peft")
#: Seconds one load may take before it counts as a hang (a detector, not a performance bound).
HANG_S = 60.0


class Hang(BaseException):
    """A load took longer than HANG_S (BaseException: the loader must not be able to swallow it)."""


from fuzz_mutations import MUTATIONS, Case  # noqa: E402  (after the runtime library is loaded)


# ---- running -------------------------------------------------------------------------------------------------------
@dataclass
class Tally:
    inputs: int = 0
    valid: int = 0
    refused: int = 0
    other: int = 0
    pathless: int = 0
    hangs: int = 0
    wrong: int = 0

    def line(self, seed: int) -> str:
        return (
            f"fuzz_contract: {self.inputs} inputs, {self.valid} valid, {self.refused} TuningError, {self.other} other exceptions, "
            f"{self.pathless} without a path, {self.hangs} hangs, {self.wrong} wrong verdicts (seed {seed})"
        )


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang()


def timed(load: Callable[[], Any]) -> tuple[str, Any]:
    """Runs one load under the hang detector: ("loaded", Tuning), ("refused", TuningError), ("hang", s) or ("other", exc)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    started = time.monotonic()
    try:
        return "loaded", load()
    except contract.TuningError as e:
        return "refused", e
    except Hang:
        return "hang", time.monotonic() - started
    except Exception as e:  # the point of the fuzz: any other exception is a finding
        return "other", e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def place(case: Case, folder: Path) -> str:
    """The path of the input's file (a regular file, or the special kind the case asks for)."""
    path = folder / "tuning.json"
    if case.special == "directory":
        path.mkdir()
    elif case.special == "fifo":
        os.mkfifo(path)
    elif case.special == "device":
        return "/dev/null"
    elif case.special == "symlink to directory":
        (folder / "dir").mkdir()
        path.symlink_to(folder / "dir")
    else:
        path.write_bytes(case.data)
    return str(path)


def judge(case: Case, how: str, outcome: str, result: Any) -> str | None:
    """What is wrong with one load's outcome, or None."""
    if outcome == "hang":
        return f"{how}: no answer within {HANG_S}s"
    if outcome == "other":
        return f"{how}: {type(result).__name__}: {str(result)[:200]}"
    if outcome == "loaded":
        if case.expect == "invalid":
            return f"{how}: accepted a malformed document"
        if contract.validate(json.loads(json.dumps(result.document))) != []:
            return f"{how}: loaded a document that does not validate"
        return None
    if case.expect == "valid":
        return f"{how}: refused a valid document: {result.problems[:3]}"
    if not result.problems or any(strict_json.problem_path(p) is None for p in result.problems):
        return f"{how}: TuningError without a path: {result.problems[:3]}"
    return None


def run_case(case: Case, scratch: Path) -> list[tuple[str, str, Any, str | None]]:
    """Loads the input from a file and, unless it is a special file, from text (bytes, and str); returns each outcome."""
    loads: list[tuple[str, Callable[[], Any]]] = []
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        path = place(case, Path(folder))
        loads.append(("file", lambda: ray_gpu.load(path, env={}, apply_data_context=False)))
        if case.special is None:
            loads.append(("bytes", lambda: ray_gpu.loads(case.data, env={}, apply_data_context=False)))
            text = case.data.decode("utf-8", "surrogateescape")
            loads.append(("text", lambda: ray_gpu.loads(text, env={}, apply_data_context=False)))
        results = []
        for how, load in loads:
            outcome, result = timed(load)
            results.append((how, outcome, result, judge(case, how, outcome, result)))
    verdicts = {o for _, o, _, _ in results}
    if verdicts <= {"loaded", "refused"} and len(verdicts) > 1 and case.special is None:
        results.append(("agreement", "other", None, f"file and text disagree: {[(h, o) for h, o, _, _ in results]}"))
    return results


def count(tally: Tally, results: list[tuple[str, str, Any, str | None]]) -> None:
    tally.inputs += 1
    outcomes = [o for _, o, _, _ in results]
    tally.valid += outcomes[0] == "loaded"
    tally.refused += outcomes[0] == "refused"
    tally.other += sum(o == "other" and h != "agreement" for h, o, _, _ in results)
    tally.hangs += outcomes.count("hang")
    tally.pathless += sum(bool(p) and "without a path" in p for _, _, _, p in results)
    tally.wrong += sum(
        bool(p) and ("accepted" in p or "refused a valid" in p or "disagree" in p or "does not validate" in p)
        for _, _, _, p in results
    )


def heavy_imports() -> list[str]:
    """Heavy modules the loader (or the fuzz's loads) imported: present now, absent before ``import ray_gpu``."""
    return [m for m in HEAVY if m in sys.modules and m not in _BEFORE]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--verbose", action="store_true", help="print every input's label and outcome")
    args = parser.parse_args(argv)
    if heavy_imports():
        print(
            f"fuzz_contract: importing the loader imported {heavy_imports()}: it must stay standard-library only",
            file=sys.stderr,
        )
        return 1
    documents = json.loads(FIXTURE.read_text(encoding="utf-8"))["documents"]
    rng = random.Random(args.seed)
    mutations, weights = zip(*MUTATIONS, strict=True)
    tally, failures = Tally(), []
    with tempfile.TemporaryDirectory(prefix="fuzz-contract-") as scratch:
        for index in range(args.count):
            doc = documents[rng.choice(sorted(documents))]
            case = rng.choices(mutations, weights)[0](doc, rng)
            results = run_case(case, Path(scratch))
            count(tally, results)
            problems = [p for _, _, _, p in results if p]
            if args.verbose:
                print(f"  #{index} {case.label[:70]}: {[o for _, o, _, _ in results]}")
            if problems:
                failures.append(
                    f"input #{index} (seed {args.seed}) {case.label[:80]}: {problems[0]}; data {case.data[:80]!r}"
                )
    print(tally.line(args.seed))
    for failure in failures[:10]:
        print(f"  FAIL {failure}", file=sys.stderr)
    if heavy_imports():
        print(f"fuzz_contract: loading imported {heavy_imports()}", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
