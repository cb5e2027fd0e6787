"""The fuzz's inputs (``fuzz_contract.py``): mutations of a real tuning document into malformed ones, each a
:class:`Case` with what the loader must do with it, drawn by weight from :data:`MUTATIONS`. Imported after
``fuzz_contract`` has loaded the runtime library, so ``ray_gpu`` is the checkout's."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ray_gpu import strict_json

#: Objects of the document whose keys the schema fixes (an unknown key there is always invalid).
FIXED_OBJECTS = {
    (),
    ("workload",),
    ("knobs",),
    ("train",),
    ("data",),
    ("actorPool",),
    ("sweep",),
    ("lora",),
    ("train", "resourcesPerWorker"),
}
Path_ = tuple[Any, ...]


@dataclass
class Case:
    """One fuzz input: the file's bytes (or a special file kind), and what the loader must do with it."""

    label: str
    data: bytes
    #: "valid" must load, "invalid" must raise TuningError, "either" may do both.
    expect: str
    special: str | None = None


# ---- documents -------------------------------------------------------------------------------------------------
def paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path into ``value`` (objects, items and leaves), the root excluded."""
    found: list[Path_] = []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        found.append((*prefix, key))
        found += paths(child, (*prefix, key))
    return found


def parent_and_key(doc: Any, path: Path_) -> tuple[Any, Any]:
    node = doc
    for key in path[:-1]:
        node = node[key]
    return node, path[-1]


def dumps(doc: Any, rng: random.Random) -> str:
    """JSON text in one of several layouts (compact, indented, sorted or not)."""
    indent = rng.choice([None, 0, 2, 4, "\t"])
    return json.dumps(doc, indent=indent, sort_keys=rng.random() < 0.5, ensure_ascii=rng.random() < 0.5)


def with_raw(doc: Any, rng: random.Random, path: Path_, raw: str) -> bytes:
    """The document with the value at ``path`` replaced by raw JSON text (numbers and literals json cannot write)."""
    doc = copy.deepcopy(doc)
    parent, key = parent_and_key(doc, path)
    parent[key] = "\x00RAW\x00"
    return dumps(doc, rng).replace('"\\u0000RAW\\u0000"', raw).encode("utf-8")


def leaf_paths(doc: Any) -> list[Path_]:
    return [p for p in paths(doc) if not isinstance(parent_and_key(doc, p)[0][p[-1]], (dict, list))]


def object_paths(doc: Any) -> list[Path_]:
    return [(), *[p for p in paths(doc) if isinstance(parent_and_key(doc, p)[0][p[-1]], dict)]]


def node(doc: Any, path: Path_) -> Any:
    for key in path:
        doc = doc[key]
    return doc


# ---- mutations -------------------------------------------------------------------------------------------------
ODD_VALUES: list[Any] = [
    "",
    "x",
    " ",
    "🙂",
    0,
    -1,
    1.5,
    10**18,
    True,
    False,
    None,
    [],
    {},
    [1],
    {"a": 1},
    1e308,
    -0.0,
    "../..",
    "\u0000",
]
ODD_KEYS = ["", " ", "x", "a.b", "we:ird", "🙂", "\\", '"', "k" * 300, "microBatchsize", "numWorker", "$"]
BAD_UTF8 = [
    b"\xff",
    b"\xfe",
    b"\xc3\x28",
    b"\x80",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
    b"\xf8\x88\x80\x80\x80",
]


def wrong_type(doc: Any, rng: random.Random) -> Case:
    doc = copy.deepcopy(doc)
    path = rng.choice(paths(doc))
    parent, key = parent_and_key(doc, path)
    parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return Case(f"wrong type at {path}", dumps(doc, rng).encode(), "either")


def removed_key(doc: Any, rng: random.Random) -> Case:
    doc = copy.deepcopy(doc)
    path = rng.choice([p for p in paths(doc) if isinstance(p[-1], str)])
    parent, key = parent_and_key(doc, path)
    del parent[key]
    return Case(f"removed {path}", dumps(doc, rng).encode(), "either")


def unknown_key(doc: Any, rng: random.Random) -> Case:
    doc = copy.deepcopy(doc)
    where = rng.choice(object_paths(doc))
    target = node(doc, where)
    key = rng.choice([k for k in ODD_KEYS if k not in target] or ["zz"])
    target[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return Case(
        f"unknown key {key[:20]!r} in {where}",
        dumps(doc, rng).encode(),
        "invalid" if where in FIXED_OBJECTS else "either",
    )


def deep_nesting(doc: Any, rng: random.Random) -> Case:
    depth = rng.choice([strict_json.MAX_DEPTH + 1, 100, 1000, rng.randint(33, 200_000)])
    opener, closer = rng.choice([("[", "]"), ('{"a": ', "}"), ('[{"k": ', "}]")])
    raw = opener * depth + "1" + closer * depth
    return Case(
        f"nested {depth} x {opener!r}", with_raw(doc, rng, rng.choice(paths(doc) or [("knobs",)]), raw), "invalid"
    )


def huge_number(doc: Any, rng: random.Random) -> Case:
    raw = rng.choice(
        [
            "9" * rng.randint(20, 6000),
            "-" + "9" * rng.randint(20, 6000),
            "1e999",
            "-1e999",
            "1" + "0" * 400 + ".5",
            "9223372036854775808",
            "-9223372036854775809",
        ]
    )
    return Case(f"number {raw[:24]}", with_raw(doc, rng, rng.choice(leaf_paths(doc)), raw), "invalid")


def tiny_number(doc: Any, rng: random.Random) -> Case:
    raw = rng.choice(["1e-999", "0.0", "-0", "1E+2", "9223372036854775807"])
    return Case(f"number {raw}", with_raw(doc, rng, rng.choice(leaf_paths(doc)), raw), "either")


def not_a_number(doc: Any, rng: random.Random) -> Case:
    raw = rng.choice(["NaN", "Infinity", "-Infinity"])
    return Case(raw, with_raw(doc, rng, rng.choice(paths(doc)), raw), "invalid")


def duplicate_key(doc: Any, rng: random.Random) -> Case:
    doc = copy.deepcopy(doc)
    target = node(doc, rng.choice([p for p in object_paths(doc) if node(doc, p)]))
    key = rng.choice(sorted(target))
    target["\x00DUP\x00"] = rng.choice([target[key], 1, "x"])
    text = dumps(doc, rng).replace('"\\u0000DUP\\u0000"', json.dumps(key))
    return Case(f"duplicate key {key!r}", text.encode(), "invalid")


def invalid_utf8(doc: Any, rng: random.Random) -> Case:
    data = dumps(doc, rng).encode()
    at = rng.randint(0, len(data))
    return Case("invalid UTF-8", data[:at] + rng.choice(BAD_UTF8) + data[at:], "invalid")


def truncated(doc: Any, rng: random.Random) -> Case:
    data = dumps(doc, rng).encode().rstrip()
    at = rng.randint(0, len(data) - 1)
    return Case(f"truncated at {at}/{len(data)}", data[:at], "invalid")


def random_bytes(doc: Any, rng: random.Random) -> Case:
    return Case("random bytes", bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 3000))), "invalid")


def flipped_bytes(doc: Any, rng: random.Random) -> Case:
    data = bytearray(dumps(doc, rng).encode())
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] = rng.getrandbits(8)
    return Case("flipped bytes", bytes(data), "either")


def byte_order_mark(doc: Any, rng: random.Random) -> Case:
    text = dumps(doc, rng)
    kind = rng.choice(["utf-8", "utf-8 twice", "utf-16", "utf-16-be", "utf-32"])
    if kind == "utf-8":
        return Case("UTF-8 BOM (accepted)", b"\xef\xbb\xbf" + text.encode(), "valid")
    if kind == "utf-8 twice":
        return Case("two UTF-8 BOMs", b"\xef\xbb\xbf\xef\xbb\xbf" + text.encode(), "invalid")
    bom = {"utf-16": b"\xff\xfe", "utf-16-be": b"\xfe\xff", "utf-32": b""}[kind]
    return Case(f"{kind} text", bom + text.encode(kind if kind != "utf-16" else "utf-16-le"), "invalid")


def enormous_string(doc: Any, rng: random.Random) -> Case:
    doc = copy.deepcopy(doc)
    path = rng.choice(leaf_paths(doc))
    parent, key = parent_and_key(doc, path)
    size = rng.choice([strict_json.MAX_DOCUMENT_BYTES + 1, 2 * strict_json.MAX_DOCUMENT_BYTES, 200_000])
    parent[key] = rng.choice("xé🙂") * size
    data = json.dumps(doc, ensure_ascii=False).encode()
    return Case(
        f"string of {size} characters at {path}", data, "invalid" if size > strict_json.MAX_DOCUMENT_BYTES else "either"
    )


def not_an_object(doc: Any, rng: random.Random) -> Case:
    value = rng.choice([[doc], "tuning", 42, None, True, [], 1.5])
    return Case(f"top-level {type(value).__name__}", json.dumps(value).encode(), "invalid")


def empty(doc: Any, rng: random.Random) -> Case:
    return Case("empty", rng.choice([b"", b" ", b"\n\t \r\n", b"\xef\xbb\xbf"]), "invalid")


def lone_surrogate(doc: Any, rng: random.Random) -> Case:
    path = rng.choice(leaf_paths(doc))
    return Case(
        "lone surrogate",
        with_raw(doc, rng, path, rng.choice(['"\\ud800"', '"a\\udfff"', '"\\udc00\\ud800"'])),
        "invalid",
    )


def control_character(doc: Any, rng: random.Random) -> Case:
    return Case(
        "raw control character",
        with_raw(doc, rng, rng.choice(leaf_paths(doc)), f'"a{chr(rng.randint(0, 31))}b"'),
        "invalid",
    )


def trailing(doc: Any, rng: random.Random) -> Case:
    text = dumps(doc, rng)
    garbage = rng.choice(["x", "}", "{}", ",", "// end", "\x00", "\n\n  \t"])
    return Case(f"followed by {garbage!r}", (text + garbage).encode(), "valid" if not garbage.strip() else "invalid")


def comment(doc: Any, rng: random.Random) -> Case:
    return Case("comment", ("// tuning\n" + dumps(doc, rng)).encode(), "invalid")


def big_array(doc: Any, rng: random.Random) -> Case:
    doc = copy.deepcopy(doc)
    path = rng.choice(paths(doc))
    parent, key = parent_and_key(doc, path)
    parent[key] = [rng.choice([1, {}, "x", None])] * rng.choice([10_000, 100_000])
    return Case(f"array of {len(parent[key])} at {path}", dumps(doc, rng).encode(), "either")


def reformatted(doc: Any, rng: random.Random) -> Case:
    return Case(
        "reformatted valid document",
        (rng.choice(["", " ", "\n"]) + dumps(doc, rng) + rng.choice(["", "\n", "  \n"])).encode(),
        "valid",
    )


def special_file(doc: Any, rng: random.Random) -> Case:
    kind = rng.choice(["directory", "fifo", "device", "symlink to directory", "oversized file"])
    if kind == "oversized file":
        return Case(kind, b" " * (strict_json.MAX_DOCUMENT_BYTES + 1) + dumps(doc, rng).encode(), "invalid")
    return Case(f"not a regular file: {kind}", b"", "invalid", special=kind)


MUTATIONS: list[tuple[Callable[[Any, random.Random], Case], int]] = [
    (wrong_type, 10),
    (removed_key, 6),
    (unknown_key, 6),
    (deep_nesting, 5),
    (huge_number, 5),
    (tiny_number, 2),
    (not_a_number, 5),
    (duplicate_key, 5),
    (invalid_utf8, 5),
    (truncated, 5),
    (random_bytes, 3),
    (flipped_bytes, 5),
    (byte_order_mark, 4),
    (enormous_string, 3),
    (not_an_object, 3),
    (empty, 2),
    (lone_surrogate, 3),
    (control_character, 2),
    (trailing, 3),
    (comment, 1),
    (big_array, 2),
    (reformatted, 6),
    (special_file, 3),
]
