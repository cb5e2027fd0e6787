"""The tuning document, version 1: read it and validate it against its JSON Schema.

The schema (``tuning.schema.json``, shipped in this package) is generated from the planner's one definition of the
contract, together with the ``RAY_GPU_*`` variable of each knob (``x-env``) and the sections and knobs each workload kind
carries (``x-sections``, ``x-knobs``). This module interprets the part of JSON Schema that file uses, and reports every
problem with its key path. Standard library only.

A malformed file never escapes as anything but :class:`TuningError`: the text is read by :mod:`ray_gpu.strict_json`
(a regular file of at most 1 MiB; UTF-8, a leading BOM accepted and ignored; at most ``MAX_DEPTH`` levels deep; no
NaN or Infinity; no number beyond 64 bits; no duplicate key), and every problem is one line ``<path>: <rule>``, the
path being ``$`` for the whole document, ``knobs.microBatchSize`` for a key, ``sweep.grid[0]`` for an item.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from typing import Any, cast

from . import strict_json
from .strict_json import MAX_DEPTH, ROOT, key_path
from .types import JsonSchema, TuningDocument

SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuning.schema.json")
#: Where the RayJob mounts the tuning ConfigMap; ``RAY_GPU_TUNING_FILE`` points at the file.
DEFAULT_TUNING_FILE = "/etc/ray-gpu/tuning.json"
TUNING_FILE_ENV = "RAY_GPU_TUNING_FILE"


def _load_schema() -> JsonSchema:
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        return cast(JsonSchema, json.load(f))


SCHEMA: JsonSchema = _load_schema()
API_VERSION: str = SCHEMA["properties"]["apiVersion"]["const"]
KIND: str = SCHEMA["properties"]["kind"]["const"]
#: Sections and knobs each kind's document carries, exactly.
SECTIONS_BY_KIND: dict[str, list[str]] = SCHEMA["x-sections"]
KNOBS_BY_KIND: dict[str, list[str]] = SCHEMA["x-knobs"]
#: ``knob -> RAY_GPU_*`` variable, as the RayJob sets them.
KNOB_ENV: dict[str, str] = {name: spec["x-env"] for name, spec in SCHEMA["properties"]["knobs"]["properties"].items()}


class TuningError(ValueError):
    """The tuning file is missing or does not follow the contract. ``problems`` lists every problem found, each
    ``<path>: <rule>`` (``$`` is the whole document); the message shows the first 20."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        shown = problems[: strict_json.MAX_PROBLEMS_SHOWN]
        more = len(problems) - len(shown)
        lines = "\n".join(f"  - {p}" for p in shown) + (f"\n  - ... and {more} more" if more else "")
        super().__init__(f"ray-gpu: {source} is not a valid tuning document ({API_VERSION}):\n{lines}")

    @property
    def paths(self) -> list[str | None]:
        """The key path each problem names (None for a problem that names none)."""
        return [strict_json.problem_path(p) for p in self.problems]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v not in (float("inf"), float("-inf"))


def _describe(v: Any) -> str:
    try:
        text = repr(v) if isinstance(v, str) else json.dumps(v, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(s: JsonSchema, v: Any) -> str | None:
    lo, hi = s.get("minimum"), s.get("maximum")
    if _is_int(v) and (lo is None or v >= lo) and (hi is None or v <= hi):
        return None
    return f"expected an integer >= {lo}" if hi is None else f"expected an integer in [{lo}, {hi}]"


def _number(s: JsonSchema, v: Any) -> str | None:
    lo, hi, above = s.get("minimum"), s.get("maximum"), s.get("exclusiveMinimum")
    if _is_num(v) and (lo is None or v >= lo) and (hi is None or v <= hi) and (above is None or v > above):
        return None
    if above is not None:
        return f"expected a number > {float(above)}"
    return f"expected a number in [{float(lo if lo is not None else 0)}, {float(hi) if hi is not None else 'inf'}]"


def _string(s: JsonSchema, v: Any) -> str | None:
    if not isinstance(v, str) or (s.get("minLength", 0) > 0 and v == ""):
        return "expected a non-empty string"
    if "enum" in s and v not in s["enum"]:
        return f"expected one of {', '.join(s['enum'])}"
    if "pattern" in s and not re.search(s["pattern"], v):
        return f"expected a string matching {s['pattern']}"
    return None


def _scalar(types: list[str], v: Any) -> str | None:
    ok = {"string": isinstance(v, str), "number": _is_num(v), "integer": _is_int(v), "boolean": isinstance(v, bool)}
    return None if any(ok.get(t, False) for t in types) else "expected a string, number or boolean"


def _leaf(s: JsonSchema, v: Any, depth: int) -> str | None:
    """The problem of a value that is not an object with named keys, or None."""
    if "const" in s:
        return None if v == s["const"] else f"expected {s['const']!r}"
    kind = s.get("type")
    if isinstance(kind, list):
        return _scalar(kind, v)
    if kind == "integer":
        return _integer(s, v)
    if kind == "number":
        return _number(s, v)
    if kind == "string":
        return _string(s, v)
    if kind == "boolean":
        return None if isinstance(v, bool) else "expected true or false"
    if kind == "array":
        return _list(s, v, depth)
    if kind == "object":
        return _map(s, v, depth)
    raise ValueError(f"a schema of this package uses a node this reader does not know: {s}")


def _list(s: JsonSchema, v: Any, depth: int) -> str | None:
    minimum = s.get("minItems", 0)
    if not isinstance(v, list) or len(v) < minimum:
        return f"expected a list of at least {minimum} item(s)"
    bad = [i for i, x in enumerate(v) if _leaf(s["items"], x, depth + 1) is not None]
    return f"item(s) {bad} invalid: {_leaf(s['items'], v[bad[0]], depth + 1)}" if bad else None


def _map(s: JsonSchema, v: Any, depth: int) -> str | None:
    if not isinstance(v, dict):
        return "expected an object"
    values = s.get("additionalProperties")
    if not isinstance(values, dict):
        return None
    bad = sorted(k for k, x in v.items() if _leaf(values, x, depth + 1) is not None)
    return f"key(s) {bad} invalid: {_leaf(values, v[bad[0]], depth + 1)}" if bad else None


#: What the unknown-key message of the tuning document adds (another schema names its own apiVersion).
UNKNOWN_KEY_NOTE = f"this runtime reads {API_VERSION}, so a newer planner may have written it"


def _unknown_key(path: str, key: str, known: list[str], note: str) -> str:
    hint = difflib.get_close_matches(key, known, n=1)
    fix = f"did you mean {hint[0]!r}?" if hint else f"known keys: {', '.join(sorted(known))}"
    return f"{key_path(path, key)}: unknown key ({fix}); {note}"


def _objects(value: Any, field: JsonSchema, path: str, problems: list[str], depth: int, note: str) -> None:
    """A list whose items are objects with named keys: its length, then each item as an object (``path[i].key``)."""
    minimum = field.get("minItems", 0)
    if not isinstance(value, list) or len(value) < minimum:
        problems.append(f"{path}: expected a list of at least {minimum} item(s), got {_describe(value)}")
        return
    for i, item in enumerate(value):
        _validate(item, field["items"], key_path(path, i), problems, depth + 1, note=note)


def _validate(
    value: Any, schema: JsonSchema, path: str, problems: list[str], depth: int = 0, *, note: str = UNKNOWN_KEY_NOTE
) -> None:
    """Appends every problem of ``value`` (an object) against ``schema`` to ``problems``, each naming its key path
    under ``path``. ``note`` ends the unknown-key message: it names the apiVersion ``schema`` defines (default: the
    tuning document's)."""
    if depth > MAX_DEPTH:
        problems.append(f"{path}: nested deeper than {MAX_DEPTH} levels")
        return
    if not isinstance(value, dict):
        problems.append(f"{path}: expected an object, got {_describe(value)}")
        return
    properties: Mapping[str, JsonSchema] = schema["properties"]
    for key in sorted(value, key=str):
        if key not in properties:
            problems.append(_unknown_key(path, str(key), list(properties), note))
    for key, field in properties.items():
        where = key_path(path, key)
        items = field.get("items", {})
        if key not in value:
            if key in schema.get("required", []):
                problems.append(f"{where}: required key is missing")
        elif field.get("type") == "object" and "properties" in field:
            _validate(value[key], field, where, problems, depth + 1, note=note)
        elif field.get("type") == "array" and items.get("type") == "object" and "properties" in items:
            _objects(value[key], field, where, problems, depth + 1, note)
        else:
            err = _leaf(field, value[key], depth + 1)
            if err:
                problems.append(f"{where}: {err}, got {_describe(value[key])}")


def _kind_problems(document: Mapping[str, Any]) -> list[str]:
    """A document carries exactly its kind's sections and knobs."""
    kind = document["workload"]["kind"]
    problems = [f"{s}: required for a {kind}, missing" for s in SECTIONS_BY_KIND[kind] if s not in document]
    sections = {s for listed in SECTIONS_BY_KIND.values() for s in listed}
    problems += [
        f"{s}: not part of a {kind} document"
        for s in sorted(sections)
        if s in document and s not in SECTIONS_BY_KIND[kind]
    ]
    knobs = document["knobs"]
    problems += [f"knobs.{k}: required for a {kind}, missing" for k in KNOBS_BY_KIND[kind] if k not in knobs]
    problems += [f"knobs.{k}: not a {kind} knob" for k in sorted(knobs) if k not in KNOBS_BY_KIND[kind]]
    return problems


def validate(document: Any) -> list[str]:
    """Every problem of a parsed tuning document, each naming its key path; empty when valid."""
    problems: list[str] = []
    _validate(document, SCHEMA, ROOT, problems)
    if problems:
        return problems
    return _kind_problems(document)


def knob_env_name(knob: str) -> str:
    """``microBatchSize`` -> ``RAY_GPU_MICRO_BATCH_SIZE`` (the RayJob's environment variables), from the schema."""
    if knob not in KNOB_ENV:
        raise TuningError("the schema", [f"knobs.{knob}: no such knob (known: {', '.join(sorted(KNOB_ENV))})"])
    return KNOB_ENV[knob]


def parse(text: str | bytes, source: str) -> TuningDocument:
    """Parses and validates a document's text (or its bytes, which must be UTF-8); every problem, from bad bytes to
    a missing key, becomes one :class:`TuningError` naming its path."""
    try:
        document = strict_json.parse(strict_json.decode(text) if isinstance(text, bytes) else text)
    except strict_json.JsonProblems as e:
        raise TuningError(source, e.problems) from None
    problems = validate(document)
    if problems:
        raise TuningError(source, problems)
    return cast(TuningDocument, document)


def _missing(source: str, origin: str) -> TuningError:
    return TuningError(
        source,
        [
            f"{ROOT}: file not found (path from {origin}); the RayJob mounts it from the ConfigMap "
            f"<workload>-tuning: run the job from a RayJob rendered by ray-gpu, or set {TUNING_FILE_ENV}"
        ],
    )


def read(path: str | None = None, env: Mapping[str, str] | None = None) -> tuple[TuningDocument, str]:
    """Reads and validates the tuning file (``path``, else ``$RAY_GPU_TUNING_FILE`` of ``env``, else the mount path).
    A missing, unreadable, oversized, empty or malformed file raises :class:`TuningError`, and nothing else."""
    environ = os.environ if env is None else env
    source = path or environ.get(TUNING_FILE_ENV) or DEFAULT_TUNING_FILE
    origin = "argument" if path else (f"${TUNING_FILE_ENV}" if environ.get(TUNING_FILE_ENV) else "default path")
    try:
        raw = strict_json.read_file(source)
    except FileNotFoundError:
        raise _missing(source, origin) from None
    except strict_json.JsonProblems as e:
        raise TuningError(source, e.problems) from None
    return parse(raw, source), source
