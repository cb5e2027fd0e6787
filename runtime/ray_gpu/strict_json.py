"""Strict JSON for the files a job reads (the tuning document, the DeepSpeed config): every way a file can be
malformed becomes a :class:`JsonProblems` listing ``<path>: <rule>`` lines, never another exception.

Rules, on top of RFC 8259:

- the file is a regular file (not a directory, FIFO or device) of at most :data:`MAX_DOCUMENT_BYTES` (1 MiB) bytes,
  and not empty;
- the bytes are UTF-8. A leading UTF-8 byte-order mark is accepted and ignored (RFC 8259 section 8.1 allows a parser
  to); UTF-16 and UTF-32 text, BOM or not, is refused as not UTF-8;
- nesting is at most :data:`MAX_DEPTH` containers deep, checked by a flat scan before parsing (so a deep document
  never reaches Python's recursion limit);
- ``NaN``, ``Infinity`` and ``-Infinity`` are refused (JSON has no such literals); so are integers outside 64 bits
  (checked before converting, so a 5000-digit integer costs nothing) and numbers that overflow a float (``1e999``);
- keys of one object are unique, and strings are valid Unicode (no lone surrogates from ``\\ud800`` escapes).

Paths name keys the way the tuning document's messages do: ``$`` is the root, ``knobs.microBatchSize`` a key,
``sweep.grid[0]`` an item, ``knobs["odd key"]`` a key that is not an identifier. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
from typing import Any

#: Documents nested deeper than this many containers are refused (a tuning document is four levels deep).
MAX_DEPTH = 32
#: Largest file (bytes) or text (characters) read; a tuning document is about 2 KB.
MAX_DOCUMENT_BYTES = 1 << 20
#: Integers must fit 64 bits (signed): no planned value is larger.
INTEGER_RANGE = (-(2**63), 2**63 - 1)
#: The root of a document in paths.
ROOT = "$"
#: Problems shown in one message; the rest are counted.
MAX_PROBLEMS_SHOWN = 20

#: Byte-order marks of UTF-16 and UTF-32 (either byte order), which are not UTF-8.
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: A JSON string (unrolled, linear), a structural character, or a lone quote (an unterminated string).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,"]', re.DOTALL)
#: ``<path>: `` at the start of a problem: the root, a key or a quoted key, then keys and items.
PATH_PATTERN = re.compile(
    r'(?:\$|[A-Za-z_][A-Za-z0-9_]*|\$\[(?:\d+|"(?:[^"\\]|\\.)*")\])'
    r'(?:\.[A-Za-z_][A-Za-z0-9_]*|\[(?:\d+|"(?:[^"\\]|\\.)*")\])*(?=: )'
)


class JsonProblems(ValueError):
    """The text is not a strict JSON document; ``problems`` lists each as ``<path>: <rule>``."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems[:MAX_PROBLEMS_SHOWN]))


def abbreviate(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters with ``...`` (keys and numbers in messages stay short)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_path(parent: str, key: str | int) -> str:
    """The path of ``key`` (an object key, or an item index) inside the value at ``parent``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.match(key):
        return key if parent == ROOT else f"{parent}.{key}"
    quoted = json.dumps(abbreviate(key), ensure_ascii=True)
    return f"{parent}[{quoted}]"


def problem_path(problem: str) -> str | None:
    """The path a problem line starts with (``knobs.microBatchSize`` of ``knobs.microBatchSize: expected ...``)."""
    found = PATH_PATTERN.match(problem)
    return found.group(0) if found else None


# ---- bytes ---------------------------------------------------------------------------------------------------
def read_file(path: str) -> bytes:
    """The bytes of the regular file at ``path``, at most :data:`MAX_DOCUMENT_BYTES`. Opened without blocking and
    checked on the open descriptor, so a FIFO or device at the path is refused, never waited on.

    :raises FileNotFoundError: when nothing is at ``path`` (callers explain where the path came from)
    :raises JsonProblems: not a regular file, too large, or unreadable
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise JsonProblems([f"{ROOT}: cannot open the file: {e.strerror}"]) from None
    except ValueError as e:  # a path with a NUL byte
        raise JsonProblems([f"{ROOT}: cannot open the file: {e}"]) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
        raise JsonProblems([f"{ROOT}: not a regular file ({kind}); expected a JSON file"])
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read(MAX_DOCUMENT_BYTES + 1)
        except OSError as e:
            raise JsonProblems([f"{ROOT}: cannot read the file: {e.strerror}"]) from None
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise JsonProblems(
            [f"{ROOT}: the document is larger than {MAX_DOCUMENT_BYTES} bytes (1 MiB, MAX_DOCUMENT_BYTES)"]
        )
    return raw


def decode(raw: bytes) -> str:
    """UTF-8 text of ``raw`` (a leading BOM is kept: :func:`parse` ignores one). Invalid bytes are reported with their
    offset, line and column.

    :raises JsonProblems: not UTF-8
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        column = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        bad = raw[e.start : e.start + 1]
        hint = (
            "; it starts with a UTF-16 or UTF-32 byte-order mark: save it as UTF-8"
            if raw.startswith(_WIDE_BOMS)
            else ""
        )
        raise JsonProblems(
            [f"{ROOT}: not UTF-8 text: byte {e.start} (line {line}, column {column}) is {bad!r} ({e.reason}){hint}"]
        ) from None
    return text


# ---- structure -----------------------------------------------------------------------------------------------
class _Frame:
    """One open container of the flat scan: the container it is in, its key there, and the key (object) or index
    (array) it is reading. Paths are built only when asked for (a syntax error, too deep a nesting)."""

    __slots__ = ("awaiting_key", "is_object", "key", "parent", "pending", "where")

    def __init__(self, parent: _Frame | None, is_object: bool):
        self.parent, self.is_object = parent, is_object
        self.where = parent.key if parent is not None else None
        self.key: str | int | None = None if is_object else 0
        self.pending: str | None = None
        self.awaiting_key = is_object

    def path(self) -> str:
        """The path of this container (at most MAX_DEPTH + 1 frames up)."""
        if self.parent is None:
            return ROOT
        parent = self.parent.path()
        return parent if self.where is None else key_path(parent, self.where)

    def child_path(self) -> str:
        """The path of the value this container is reading now (itself before its first key)."""
        return self.path() if self.key is None else key_path(self.path(), self.key)


def _key_text(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return token[1:-1]
    return key if isinstance(key, str) else token[1:-1]


def _step(stack: list[_Frame], token: str) -> bool:
    """Applies one token to the open containers; False at an unterminated string (the scan stops there)."""
    top = stack[-1] if stack else None
    if token in "{[":
        stack.append(_Frame(top, token == "{"))
    elif token in "}]":
        if stack:
            stack.pop()
    elif token == ":" and top is not None and top.is_object:
        top.key, top.awaiting_key = top.pending, False
    elif token == "," and top is not None:
        if top.is_object:
            top.awaiting_key = True
        elif isinstance(top.key, int):
            top.key += 1
    elif token == '"':
        return False
    elif top is not None and top.is_object and top.awaiting_key:
        top.pending = _key_text(token)
    return True


def scan(text: str, until: int | None = None) -> tuple[str | None, str]:
    """Scans the structure of ``text`` without parsing values or recursing: returns the path of the first container
    nested deeper than :data:`MAX_DEPTH` (None if none), and the path being read at offset ``until`` (default: the end),
    which names where a syntax error is."""
    stack: list[_Frame] = []
    for match in _TOKEN.finditer(text, 0, len(text) if until is None else until):
        if not _step(stack, match.group(0)):
            break
        if len(stack) > MAX_DEPTH:
            return stack[-1].path(), stack[-1].path()
    return None, stack[-1].child_path() if stack else ROOT


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def bracket_depth(text: str) -> int:
    """An upper bound of the nesting depth of ``text``, at C speed: the deepest running count of brackets outside
    strings (an unterminated string's brackets count too, so it may overestimate, never underestimate)."""
    brackets = _BRACKET.findall(_STRING.sub("", text))
    return max(itertools.accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


# ---- values --------------------------------------------------------------------------------------------------
class _Refused:
    """A value JSON text can hold that a strict document cannot (NaN, an out-of-range number): its rule, reported
    with its path after parsing (the parser's hooks do not know paths)."""

    __slots__ = ("rule",)

    def __init__(self, rule: str):
        self.rule = rule


class _DuplicateKeys(dict[str, Any]):
    """An object whose text repeats keys: the keys and how often each was given."""

    def __init__(self, pairs: list[tuple[str, Any]], counts: dict[str, int]):
        super().__init__(pairs)
        self.counts = counts


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    counts: dict[str, int] = {}
    for key, _ in pairs:
        counts[key] = counts.get(key, 0) + 1
    return _DuplicateKeys(pairs, {k: n for k, n in counts.items() if n > 1})


def _integer(text: str) -> int | _Refused:
    digits = len(text) - text.startswith("-")
    if digits <= 19:
        value = int(text)
        if INTEGER_RANGE[0] <= value <= INTEGER_RANGE[1]:
            return value
    return _Refused(f"integer {abbreviate(text, 24)} ({digits} digits) is out of range: values must fit 64 bits")


def _float(text: str) -> float | _Refused:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return _Refused(
            f"number {abbreviate(text, 24)} is out of range: it overflows a 64-bit float (JSON numbers are finite)"
        )
    return value


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a number: JSON has no NaN, Infinity or -Infinity (write a finite number)")


def _lone_surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"a lone surrogate {text[e.start]!r} at character {e.start} is not valid Unicode"
    return None


def _value_problems(value: Any, path: str) -> list[str]:
    """The problems of one value itself (its children are visited by the caller)."""
    if isinstance(value, _Refused):
        return [f"{path}: {value.rule}"]
    if isinstance(value, str):
        bad = None if value.isascii() else _lone_surrogate(value)
        return [f"{path}: {bad}"] if bad else []
    problems = []
    if isinstance(value, _DuplicateKeys):
        problems += [
            f"{key_path(path, k)}: duplicate key, given {n} times (keys of an object must be unique)"
            for k, n in value.counts.items()
        ]
    if isinstance(value, dict):
        problems += [
            f"{key_path(path, k)}: key has {bad}" for k in value if not k.isascii() and (bad := _lone_surrogate(k))
        ]
    return problems


def _suspect(value: Any) -> bool:
    """Whether a value may hold a problem (containers are searched; numbers, booleans and null cannot)."""
    return isinstance(value, (_Refused, dict, list)) or (isinstance(value, str) and not value.isascii())


def refused_values(document: Any) -> list[str]:
    """Every refused value, duplicate key and invalid string of a parsed document, in document order, with its path.
    Iterative (the depth is already bounded by :func:`scan`); paths are built only for containers and problems."""
    problems: list[str] = []
    pending: list[tuple[str, str | int | None, Any]] = [(ROOT, None, document)]
    while pending:
        parent, key, value = pending.pop()
        path = parent if key is None else key_path(parent, key)
        problems += _value_problems(value, path)
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        pending.extend(reversed([(path, k, v) for k, v in children if _suspect(v)]))
    return problems


def _syntax_problem(text: str, error: json.JSONDecodeError) -> str:
    _, where = scan(text, error.pos)
    return f"{where}: not JSON: {error.msg.removesuffix(' at')} at line {error.lineno}, column {error.colno}"


def parse(text: str) -> Any:
    """The value of a strict JSON document (see the module's rules); a leading BOM is ignored.

    :raises JsonProblems: every problem found, each ``<path>: <rule>``
    """
    text = text.removeprefix("\ufeff")
    size = len(text) if len(text) > MAX_DOCUMENT_BYTES else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_DOCUMENT_BYTES:
        raise JsonProblems(
            [f"{ROOT}: the document is larger than {MAX_DOCUMENT_BYTES} bytes (1 MiB, MAX_DOCUMENT_BYTES)"]
        )
    if not text.strip():
        raise JsonProblems([f"{ROOT}: the document is empty"])
    if text.startswith("\ufeff"):
        raise JsonProblems(
            [f"{ROOT}: not JSON: more than one byte-order mark at the start (one is accepted and ignored)"]
        )
    too_deep = scan(text)[0] if bracket_depth(text) > MAX_DEPTH else None
    if too_deep is not None:
        raise JsonProblems([f"{too_deep}: nested deeper than {MAX_DEPTH} levels (MAX_DEPTH)"])
    try:
        value = json.loads(
            text, object_pairs_hook=_object, parse_int=_integer, parse_float=_float, parse_constant=_constant
        )
    except json.JSONDecodeError as e:
        raise JsonProblems([_syntax_problem(text, e)]) from None
    except (
        ValueError,
        RecursionError,
    ) as e:  # the depth scan makes these unreachable; kept as the last line of defence
        raise JsonProblems([f"{ROOT}: not a JSON document: {abbreviate(str(e), 120)}"]) from None
    problems = refused_values(value)
    if problems:
        raise JsonProblems(problems)
    return value


def load_file(path: str) -> Any:
    """:func:`parse` of the file at ``path`` (:func:`read_file`, :func:`decode`).

    :raises FileNotFoundError: when nothing is at ``path``
    :raises JsonProblems: every other problem
    """
    return parse(decode(read_file(path)))
