"""``bulksim convert``: a workload or request trace rewritten in another format
(docs/workloads.md). The engine streams the conversion; this module checks the format names,
decides whether a cache filters the stream (from an instruction-level format to a post-LLC or
request format, unless ``cache=False``) and reports what was written."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from bulksim import _core
from bulksim.api import ArgumentError, ConfigLike, _check_int, _config_args

#: Formats whose records are instructions (loads, stores, compute), not memory requests.
INSTRUCTION_LEVEL = ("bulksim", "champsim")


def input_formats() -> list[str]:
    """The formats ``convert`` reads: the workload formats, then the request trace formats."""
    return list(_core.convert_formats()[0])


def output_formats() -> list[str]:
    """The formats ``convert`` writes."""
    return list(_core.convert_formats()[1])


@dataclass(frozen=True)
class Converted:
    """What a conversion read and wrote."""

    input_format: str
    reads: int
    writes: int
    copies: int
    inits: int
    instructions: int
    cache_filtered: bool

    def summary(self) -> str:
        via = " through the cache filter" if self.cache_filtered else ""
        return (
            f"{self.reads:,} reads, {self.writes:,} writes, {self.copies:,} copies, "
            f"{self.inits:,} initializations, {self.instructions:,} instructions{via}"
        )


def convert(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    to: str,
    from_: str | None = None,
    cache: bool = True,
    config: ConfigLike = None,
    overrides: Iterable[str] = (),
    max_instructions: int | None = None,
) -> Converted:
    """Converts ``src`` (format ``from_``, detected from the content when None) into ``dst``
    in format ``to``. From an instruction-level format to a post-LLC or request format, line
    accesses go through a functional cache built from the config's ``[[cache.level]]``
    (``config`` and ``overrides`` as for ``run``) unless ``cache`` is False. A TraceError
    naming the input record stops the conversion once the output stands for more than
    ``max_instructions`` instructions (None: the engine's default, 10^11, as many as trace
    replay's default ``sim.max_cycles``), so that an endless input ends."""
    if max_instructions is not None:
        max_instructions = _check_int("max_instructions", max_instructions, minimum=1)
    if to not in output_formats():
        raise ArgumentError(f"to={to!r}: expected one of {', '.join(output_formats())}")
    if from_ is not None and from_ not in input_formats():
        raise ArgumentError(f"from_={from_!r}: expected one of {', '.join(input_formats())}")
    source_format = from_
    if source_format is None:
        source_format = _core.detect_workload_format(os.fspath(src))
    filtered = cache and source_format in INSTRUCTION_LEVEL and to != "bulksim"
    overrides = list(overrides)
    if not filtered and (config is not None or overrides):
        raise ArgumentError(
            f"a cache configuration applies only from an instruction-level format "
            f"({', '.join(INSTRUCTION_LEVEL)}) to a post-LLC or request format, "
            f"not from {source_format} to {to}"
        )
    path, sets = _config_args(config, overrides)
    got = _core.convert(
        os.fspath(src),
        os.fspath(dst),
        to,
        from_fmt=source_format,
        cache=filtered,
        config_path=path,
        sets=sets,
        max_instructions=max_instructions,
    )
    name, reads, writes, copies, inits, instructions = got
    return Converted(name, reads, writes, copies, inits, instructions, filtered)
