"""Seeded mutations shared by the input kinds: byte-level (bit flips, truncation, trailing
garbage, NULs), line-level (drop, duplicate, swap, overlong lines, CRLF, a BOM) and field-level
(a number replaced by a huge, negative, overflowing, fractional or empty one; a keyword
replaced by an unknown or differently cased one; a field added or removed)."""

from __future__ import annotations

import random

#: Numbers at the edges: 64-bit limits and overflow, negatives, fractions, other spellings.
NASTY_NUMBERS = [
    "0",
    "-1",
    "-0",
    "1",
    "18446744073709551615",  # 2^64 - 1
    "18446744073709551616",  # 2^64
    "9223372036854775807",
    "9223372036854775808",
    "4294967295",
    "4294967296",
    "281474976710655",  # 2^48 - 1
    "281474976710656",
    "0xffffffffffffffff",
    "0x10000000000000000",
    "0x",
    "0X1F",
    "0xg",
    "1.5",
    "1e9",
    "+5",
    "1_000",
    "nan",
    "inf",
    "",
    " ",
    "٣",  # a non-ASCII digit
    "99999999999999999999999999999999999999",
]

GARBAGE = [b"\x00", b"\xff\xfe", b"garbage", b"\x1b[31m", b",,,,", b"\t", b"\xe2\x80\x8b", b"#", b"\r"]


def pick_number(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return rng.choice(NASTY_NUMBERS)
    return str(rng.choice([rng.randrange(0, 1 << 12), rng.randrange(0, 1 << 40), 1 << rng.randrange(64)]))


def bit_flip(data: bytes, rng: random.Random, flips: int = 1) -> bytes:
    if not data:
        return data
    buf = bytearray(data)
    for _ in range(flips):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)] if data else data


def trailing_garbage(data: bytes, rng: random.Random) -> bytes:
    return data + b"".join(rng.choice(GARBAGE) for _ in range(rng.randint(1, 4)))


def insert_bytes(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(GARBAGE) + data[i:]


def mutate_lines(text: str, rng: random.Random, field_sep: str | None, keywords: list[str]) -> str:
    """One line- or field-level mutation of a line-structured text (fields split at
    `field_sep`, or at blanks when None)."""
    lines = text.split("\n")
    body = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
    op = rng.choice(
        [
            "number",
            "number",
            "number",
            "keyword",
            "drop_field",
            "add_field",
            "drop_line",
            "dup_line",
            "swap",
            "long_line",
            "crlf",
            "bom",
            "blank_fields",
            "case",
            "comment",
            "many_lines",
        ]
    )
    if not body:
        op = rng.choice(["long_line", "bom", "comment"])
    i = rng.choice(body) if body else 0
    sep = field_sep if field_sep is not None else " "
    fields = lines[i].split(field_sep) if field_sep is not None else lines[i].split()
    if op == "number" and fields:
        fields[rng.randrange(len(fields))] = pick_number(rng)
        lines[i] = sep.join(fields)
    elif op == "keyword" and fields:
        j = rng.randrange(len(fields))
        fields[j] = rng.choice(keywords + ["Q", "read", "", "RW", "LD ST", "0", "é"])
        lines[i] = sep.join(fields)
    elif op == "case" and fields:
        j = rng.randrange(len(fields))
        fields[j] = fields[j].swapcase()
        lines[i] = sep.join(fields)
    elif op == "drop_field" and fields:
        fields.pop(rng.randrange(len(fields)))
        lines[i] = sep.join(fields)
    elif op == "add_field":
        fields.insert(rng.randrange(len(fields) + 1), pick_number(rng))
        lines[i] = sep.join(fields)
    elif op == "blank_fields":
        lines[i] = sep.join(f"  {f}\t" for f in fields) + rng.choice([sep, "", " ", sep + sep])
    elif op == "drop_line":
        lines.pop(i)
    elif op == "dup_line":
        lines[i:i] = [lines[i]] * _capped(rng.randint(1, 50), lines[i])
    elif op == "swap" and len(body) > 1:
        j = rng.choice(body)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "long_line":
        filler = rng.choice(["9", "0", "a", ",", " ", "x"])
        lines.insert(rng.randrange(len(lines) + 1), filler * rng.choice([1000, 100_000, 2_000_000]))
    elif op == "crlf":
        return "\r\n".join(lines)
    elif op == "bom":
        return "\ufeff" + "\n".join(lines)
    elif op == "comment":
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["#", "# c,R,0x40", "   # x", "//c"]))
    elif op == "many_lines" and body:
        lines[i:i] = [lines[i]] * _capped(rng.choice([1000, 20_000]), lines[i])
    return "\n".join(lines)


#: The most bytes one duplication adds (a 2 MB line copied 20,000 times would be 40 GB).
MAX_DUPLICATED_BYTES = 64 << 20


def _capped(copies: int, line: str) -> int:
    return max(1, min(copies, MAX_DUPLICATED_BYTES // (len(line) + 1)))


def mutate_text(
    data: bytes, rng: random.Random, field_sep: str | None, keywords: list[str], rounds: int = 0
) -> bytes:
    """1-3 mutations: mostly line/field-level, sometimes byte-level."""
    for _ in range(rounds or rng.choice([1, 1, 1, 2, 3])):
        r = rng.random()
        if r < 0.65:
            text = data.decode("utf-8", "surrogateescape")
            data = mutate_lines(text, rng, field_sep, keywords).encode("utf-8", "surrogateescape")
        elif r < 0.75:
            data = bit_flip(data, rng, rng.choice([1, 1, 3]))
        elif r < 0.85:
            data = truncate(data, rng)
        elif r < 0.93:
            data = trailing_garbage(data, rng)
        else:
            data = insert_bytes(data, rng)
    return data
