"""A small TOML writer (tomllib only reads) and seeded mutations of TOML documents as data:
values of another type, out of range or enormous, unknown and misspelt keys, missing keys,
tables where values belong and the reverse."""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any


def literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {literal(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def _key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) and k.isascii() else json.dumps(k)


def dumps(doc: dict[str, Any]) -> str:
    """TOML text of `doc`: scalars first, then tables and arrays of tables, recursively."""
    lines: list[str] = []
    _table(doc, [], lines)
    return "\n".join(lines) + "\n"


def _is_table_array(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _table(doc: dict[str, Any], path: list[str], lines: list[str]) -> None:
    for k, v in doc.items():
        if not isinstance(v, dict) and not _is_table_array(v):
            lines.append(f"{_key(k)} = {literal(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append("")
            lines.append("[" + ".".join(_key(p) for p in path + [k]) + "]")
            _table(v, path + [k], lines)
        elif _is_table_array(v):
            for item in v:
                lines.append("")
                lines.append("[[" + ".".join(_key(p) for p in path + [k]) + "]]")
                _table(item, path + [k], lines)


def leaves(doc: Any, path: tuple = ()) -> list[tuple]:
    """Paths (keys and list indices) to every scalar or list-of-scalars in `doc`."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += leaves(v, path + (k,))
    elif _is_table_array(doc):
        for i, v in enumerate(doc):
            out += leaves(v, path + (i,))
    else:
        out.append(path)
    return out


def get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def put(doc: Any, path: tuple, value: Any) -> None:
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


def delete(doc: Any, path: tuple) -> None:
    for p in path[:-1]:
        doc = doc[p]
    del doc[path[-1]]


NASTY_VALUES: list[Any] = [
    0,
    -1,
    1,
    3,
    2**63 - 1,
    -(2**63),
    2**32,
    2**31,
    65536,
    10**12,
    0.0,
    -0.5,
    1.5,
    1e300,
    float("inf"),
    float("nan"),
    True,
    False,
    "",
    "x" * 5000,
    "fcfs",
    "DDR3_2Gb_x8_1066",
    "ddr4_8gb_x8_2400",
    "é",
    "0",
    [],
    [1, 2],
    ["a"],
    {},
    {"x": 1},
]


def nasty_value(rng: random.Random, old: Any) -> Any:
    """A replacement for `old`: mostly same-type edge values, sometimes another type."""
    if rng.random() < 0.5:
        if isinstance(old, bool):
            return rng.choice([0, 1, "true", "yes"])
        if isinstance(old, int):
            return rng.choice([0, -1, old * 2, old + 1, 2**63 - 1, -(2**63), 2**32 + old, 3, 7, 1 << 40])
        if isinstance(old, float):
            return rng.choice([0.0, -0.1, 1.0, 1.0001, 1e308, float("inf"), float("nan"), old / 1000])
        if isinstance(old, str):
            return rng.choice(["", old.lower(), old.upper(), old + "x", old[:-1], " " + old, old * 50])
    return rng.choice(NASTY_VALUES)


def mutate_doc(doc: dict[str, Any], rng: random.Random, known_keys: list[str]) -> dict[str, Any]:
    """1-3 data-level mutations of a TOML document."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 2, 3])):
        paths = leaves(doc)
        op = rng.choice(["value", "value", "value", "delete", "unknown", "misspell", "table", "add_known"])
        if op == "value" and paths:
            p = rng.choice(paths)
            put(doc, p, nasty_value(rng, get(doc, p)))
        elif op == "delete" and paths:
            p = rng.choice(paths)
            delete(doc, p[: rng.randint(1, len(p))])
        elif op == "unknown":
            section = rng.choice([k for k in doc if isinstance(doc[k], dict)] or [None])
            target = doc[section] if section else doc
            target[rng.choice(["bogus", "Channels", "timing_extra", "x-y", "ä"])] = rng.choice(NASTY_VALUES)
        elif op == "misspell" and paths:
            p = rng.choice([q for q in paths if isinstance(q[-1], str)] or [None])
            if p:
                value = get(doc, p)
                delete(doc, p)
                put(doc, p[:-1] + (p[-1][:-1] + p[-1][-1].upper(),), value)
        elif op == "table" and paths:
            p = rng.choice(paths)
            put(doc, p, {"nested": get(doc, p)})
        elif op == "add_known":
            key = rng.choice(known_keys)
            parts = tuple(key.replace("[]", ".0").split("."))
            parts = tuple(int(x) if x.isdigit() else x for x in parts)
            try:
                _ensure(doc, parts)
                put(doc, parts, rng.choice(NASTY_VALUES))
            except (TypeError, KeyError, IndexError):
                pass
    return doc


def _ensure(doc: Any, path: tuple) -> None:
    for i, p in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(doc, dict):
            if p not in doc or not isinstance(doc[p], dict | list):
                doc[p] = [] if isinstance(nxt, int) else {}
            doc = doc[p]
        else:
            while len(doc) <= p:
                doc.append({})
            doc = doc[p]
