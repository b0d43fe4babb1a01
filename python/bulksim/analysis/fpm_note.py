"""Why RowClone's Fast Parallel Mode (FPM) could not copy a full-system run's pages, as the
one ``note:`` ``bulksim run --workload`` prints after the summary. FPM copies whole rows of
one subarray (RowClone section 3.1), so on a system where a 4 KB page never holds a whole row
(the minimum copy granularity of section 4.3.2, the engine's stat ``memory.mcgr_bytes``, is
larger than the page) it can never apply, and a user choosing ``rowclone`` there silently
gets PSM and channel copies (the default DDR4 system: 8 KB rows). Two more reasons keep
copies from FPM: a page allocator that does not place copy-on-write destinations in their
source's subarray (section 4.3.1), and ``bulk.fpm = false``. The note names each reason found
and what to set instead (the paper's system, ``configs/rowclone_paper.toml``)."""

from __future__ import annotations

import textwrap
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bulksim import api
from bulksim.reproduce.forkbench import CONFIG as PAPER_CONFIG

#: The OS model's page, the unit of copy-on-write copies and zeroing (frames are 4 KiB).
PAGE_BYTES = 4096
#: The system.bulk_mechanism values that copy in DRAM with RowClone.
ROWCLONE_MECHANISMS = ("rowclone", "rowclone_zi")
#: The allocator that puts a copy's destination in its source's subarray.
SUBARRAY_ALLOCATOR = "subarray_aware"


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it lies below it (from the repository:
    configs/...), else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def device_granularities(stats: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(device name, minimum copy granularity in bytes) of each memory device of a run: one
    entry (named "") without several ``[[memory.device]]``."""
    devices = stats.get("memory_devices") or []
    if devices:
        return [(d["name"], d["stats"]["mcgr_bytes"]) for d in devices]
    return [("", stats["memory"]["mcgr_bytes"])]


def row_bytes(organisation: Mapping[str, Any]) -> int:
    """Bytes of one row across a rank: each of a row's columns holds one bus width of data
    (a column of every chip)."""
    return organisation["columns"] * organisation["bus_width_bits"] // 8


def reasons(config: Mapping[str, Any], stats: Mapping[str, Any], row: int | None) -> list[str]:
    """Why FPM cannot copy (or zero) pages on the run's system, one phrase per reason; empty
    when the mechanism is not RowClone or nothing stands in FPM's way. `config` is the
    resolved config, `stats` the run's, `row` the bytes of a row across a rank when the memory
    is `[dram]` (None leaves the breakdown out)."""
    if config["system"]["bulk_mechanism"] not in ROWCLONE_MECHANISMS:
        return []
    found = []
    too_coarse = [(name, g) for name, g in device_granularities(stats) if g > PAGE_BYTES]
    if too_coarse:
        stat = "memory.mcgr_bytes"
        if len(too_coarse) > 1 or too_coarse[0][0]:
            stat = "memory_devices[].stats.mcgr_bytes"
            what = ", ".join(f"{g} B on device {name!r}" for name, g in too_coarse)
        elif row:
            granularity = too_coarse[0][1]
            mapping = config["controller"]["address_mapping"]
            spread = granularity // row
            where = (
                f"each in one channel under {mapping}"
                if spread == 1
                else f"each spread over {spread} channels or banks by {mapping}"
            )
            what = f"{granularity} B ({row} B rows across a rank, {where})"
        else:
            what = f"{too_coarse[0][1]} B"
        found.append(
            f"RowClone's minimum copy granularity ({stat}) is {what}, larger than the "
            f"{PAGE_BYTES} B page, so no page copy or zeroing covers a whole row and none can use "
            "FPM (they go by PSM and over the channel)"
        )
    allocator = config["os"]["allocator"]
    if allocator != SUBARRAY_ALLOCATOR:
        found.append(
            f"os.allocator={allocator} does not place copy-on-write destinations in their "
            "source's subarray, so copies use FPM only by chance"
        )
    if not config["bulk"]["fpm"]:
        found.append("bulk.fpm=false sends every in-DRAM copy through PSM")
    return found


def note(config: Mapping[str, Any], stats: Mapping[str, Any], row: int | None) -> str | None:
    """The note for the run (`reasons`' arguments), or None when FPM can apply."""
    found = reasons(config, stats, row)
    if not found:
        return None
    fixes = []
    if any(g > PAGE_BYTES for _, g in device_granularities(stats)):
        fixes.append(f"--config {_shown(PAPER_CONFIG)} (the paper's 4 KB rows, each in one channel)")
    if config["os"]["allocator"] != SUBARRAY_ALLOCATOR:
        fixes.append(f"--set os.allocator={SUBARRAY_ALLOCATOR}")
    if not config["bulk"]["fpm"]:
        fixes.append("--set bulk.fpm=true")
    # Wrapped as the demo's notes are: continuation lines indented under the text.
    wrap = textwrap.TextWrapper(
        width=100, subsequent_indent="      ", break_long_words=False, break_on_hyphens=False
    )
    return "\n".join(
        [wrap.fill("note: " + "; ".join(found) + "."), wrap.fill("      for FPM: " + " ".join(fixes))]
    )


def run_note(
    config: api.ConfigLike, preset: str | None, overrides: Iterable[str], stats: Mapping[str, Any]
) -> str | None:
    """`note` for a finished ``run_workload`` given the same config, preset and overrides."""
    sets = list(overrides)
    resolved = tomllib.loads(api.resolve_config(config, preset=preset, overrides=sets))
    # [dram] is the memory only without [[memory.device]] (a device may have its own part).
    from_dram = not resolved.get("memory", {}).get("device")
    row = row_bytes(api.spec(preset, config, sets)["organisation"]) if from_dram else None
    return note(resolved, stats, row)
