"""RowClone where users meet it (issue 32): the paper's system as a config
(configs/rowclone_paper.toml), the README's RowClone example on it using FPM, and the note
`bulksim run --workload` prints when a RowClone mechanism's FPM cannot apply (rows larger
than the 4 KB page, an allocator that does not keep copies in their source's subarray,
bulk.fpm = false)."""

from __future__ import annotations

import json
import tomllib

import pytest

from bulksim import api
from bulksim.analysis import fpm_note
from bulksim.reproduce.forkbench import CONFIG as PAPER_SYSTEM
from test_cli import ROOT, bulksim

CAPTURE = ROOT / "tests" / "data" / "captures" / "forkbench-small"
ROWCLONE = ["system.bulk_mechanism=rowclone"]
SUBARRAY = ["os.allocator=subarray_aware"]
#: The overrides forkbench, rowclone-apps and rowclone-multicore ran on before the config
#: file existed (their published numbers): the file must resolve to exactly this system.
FORMER_OVERRIDES = [
    "dram.preset=DDR3_2Gb_x8_1066",
    "dram.columns=512",
    "dram.channels=2",
    "controller.address_mapping=RoRaBaChCo",
    "controller.read_queue_size=64",
    "controller.write_queue_size=64",
]


def _readme_rowclone_args() -> list[str]:
    """The arguments after `--workload my-capture` of the README's RowClone example (a command
    continued over lines with a backslash, comments dropped)."""
    text = (ROOT / "README.md").read_text()
    start = text.index("run --workload my-capture --config")
    lines = []
    for line in text[start:].splitlines():
        lines.append(line.split("#")[0].strip().rstrip("\\").strip())
        if not line.split("#")[0].rstrip().endswith("\\"):
            break
    words = " ".join(lines).split()
    return words[words.index("my-capture") + 1 :]


def _sets(overrides: list[str]) -> list[str]:
    return [a for s in overrides for a in ("--set", s)]


def _flat(text: str) -> str:
    """A note with its line wrapping undone."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[str, dict]]:
    """`bulksim run --workload` of the small forkbench capture (stdout, stats), as a user runs
    it: the README's RowClone example on the default DDR4 system and on the paper's system,
    and `cpu` on each."""
    d = tmp_path_factory.mktemp("rowclone-paper")
    cases = {
        "ddr4_rowclone": _sets(ROWCLONE),
        "ddr4_cpu": [],
        "paper_rowclone": _readme_rowclone_args(),
        "paper_cpu": ["--config", str(PAPER_SYSTEM)],
    }
    out = {}
    for name, args in cases.items():
        stats = d / f"{name}.json"
        r = bulksim("run", "--workload", CAPTURE, "--json", stats, *args)
        assert r.returncode == 0, r.stderr
        out[name] = (r.stdout, json.loads(stats.read_text()))
    return out


def test_the_config_is_the_system_the_reproductions_ran_on():
    for mechanism in (["system.bulk_mechanism=cpu", "os.allocator=scatter"], ROWCLONE + SUBARRAY):
        assert api.resolve_config(PAPER_SYSTEM, overrides=mechanism) == api.resolve_config(
            None, overrides=[*FORMER_OVERRIDES, *mechanism]
        )
    config = tomllib.loads(api.resolve_config(PAPER_SYSTEM))
    # Table 2's values that equal bulksim's defaults are written out too.
    assert (config["core"]["window"], config["core"]["width"]) == (128, 3)
    (llc,) = config["cache"]["level"]
    assert (llc["size_kb"], llc["ways"], llc["line_bytes"], llc["mshrs"], llc["shared"]) == (
        1024,
        16,
        64,
        8,
        False,
    )
    assert config["dram"]["ranks"] == 1 and config["system"]["bulk_mechanism"] == "cpu"
    # The copy-engines DDR3 preset takes its memory from it.
    ddr3 = tomllib.loads(api.resolve_config(ROOT / "configs" / "copy_engines_ddr3.toml"))
    for table in ("dram", "controller"):
        assert ddr3[table] == config[table]


def test_the_readme_example_uses_fpm_on_the_paper_system(runs):
    assert _readme_rowclone_args() == ["--config", "configs/rowclone_paper.toml", *_sets(ROWCLONE + SUBARRAY)]
    stdout, rowclone = runs["paper_rowclone"]
    _, cpu = runs["paper_cpu"]
    bulk = rowclone["memory"]["bulk"]
    # Every copy-on-write copy in its source's subarray, and copies and zeroing all by FPM.
    assert rowclone["os"]["cow_copies"] == rowclone["os"]["cow_same_subarray"] == 71
    assert bulk["fpm_bytes"] > 0 and bulk["psm_bytes"] == 0
    assert rowclone["ipc"] > 1.3 * cpu["ipc"]
    assert rowclone["memory"]["energy"]["total_nj"] < 0.8 * cpu["memory"]["energy"]["total_nj"]
    assert "note:" not in stdout


def test_the_readme_example_on_the_default_system_gets_no_fpm_and_a_note(runs):
    stdout, rowclone = runs["ddr4_rowclone"]
    _, cpu = runs["ddr4_cpu"]
    assert rowclone["memory"]["bulk"]["fpm_bytes"] == 0
    assert rowclone["ipc"] < cpu["ipc"], "RowClone without FPM is slower than cpu here"
    assert "note:" not in runs["ddr4_cpu"][0] and "note:" not in runs["paper_cpu"][0]
    note = _flat(stdout[stdout.index("note:") :])
    assert note.startswith(
        "note: RowClone's minimum copy granularity (memory.mcgr_bytes) is 8192 B (8192 B rows "
        "across a rank, each in one channel under RoBaRaCoCh), larger than the 4096 B page"
    )
    assert "os.allocator=scatter does not place copy-on-write destinations" in note
    assert note.endswith(
        "for FPM: --config configs/rowclone_paper.toml (the paper's 4 KB rows, each in one "
        "channel) --set os.allocator=subarray_aware"
    )
    assert stdout.count("note:") == 1


def test_minimum_copy_granularity_from_first_principles(runs):
    # DDR4_8Gb_x8_2400: 1024 columns per chip, one byte each (x8), 8 chips on the 64-bit bus:
    # a row is 1024 x 8 = 8192 B across the rank. RoBaRaCoCh with 1 channel spreads it over
    # that one channel: 8192 x 1 = 8192 B, two 4 KB pages.
    assert runs["ddr4_rowclone"][1]["memory"]["mcgr_bytes"] == 1024 * 8 * 1 == 8192
    # The paper's system: 512 columns per chip (section 6), so 512 x 8 = 4096 B rows; under
    # RoRaBaChCo the channel bit lies above the columns, so a row's 4096 B are consecutive
    # bytes of one channel: 4096 x 1 = 4096 B, one page.
    assert runs["paper_rowclone"][1]["memory"]["mcgr_bytes"] == 512 * 8 * 1 == 4096
    # The same parts the stat came from, and the row size the note derives from them.
    assert fpm_note.row_bytes(api.spec(config=PAPER_SYSTEM)["organisation"]) == 4096
    assert fpm_note.row_bytes(api.spec()["organisation"]) == 8192


def test_two_interleaved_channels_double_the_granularity(tmp_path):
    # The paper's 4 KB rows with lines alternating channels (RoBaRaCoCh): a row's bytes are
    # every other line of an 8 KB range, so the granularity is 4096 x 2 = 8192 B (section
    # 4.3.2: row size times channels) and FPM again cannot apply to a page.
    out = tmp_path / "s.json"
    args = ["--config", PAPER_SYSTEM, *_sets([*ROWCLONE, *SUBARRAY, "controller.address_mapping=RoBaRaCoCh"])]
    r = bulksim("run", "--workload", CAPTURE, "--json", out, *args)
    assert r.returncode == 0, r.stderr
    stats = json.loads(out.read_text())
    assert stats["memory"]["mcgr_bytes"] == 4096 * 2
    assert stats["memory"]["bulk"]["fpm_bytes"] == 0
    note = _flat(r.stdout[r.stdout.index("note:") :])
    assert "is 8192 B (4096 B rows across a rank, each spread over 2 channels or banks by RoBaRaCoCh)" in note
    assert "os.allocator" not in note.split("for FPM:")[0], "the allocator is subarray_aware"


def test_quiet_runs_and_trace_runs_print_no_note(tmp_path):
    r = bulksim("run", "--workload", CAPTURE, "--quiet", *_sets(ROWCLONE))
    assert r.returncode == 0 and r.stdout == ""
    trace = tmp_path / "t.trace"
    trace.write_text("0,C,0x0,0x4000,4096\n")
    r = bulksim("run", "--trace", trace, "--set", "bulk.mechanism=rowclone")
    assert r.returncode == 0, r.stderr
    assert "note:" not in r.stdout


def _config(mechanism="rowclone", allocator="subarray_aware", fpm=True) -> dict:
    return {
        "system": {"bulk_mechanism": mechanism},
        "os": {"allocator": allocator},
        "bulk": {"fpm": fpm},
        "controller": {"address_mapping": "RoRaBaChCo"},
    }


def _stats(*granularities: int, names=("slow", "fast")) -> dict:
    if len(granularities) == 1:
        return {"memory": {"mcgr_bytes": granularities[0]}}
    devices = [{"name": n, "stats": {"mcgr_bytes": g}} for n, g in zip(names, granularities, strict=True)]
    return {"memory": devices[0]["stats"], "memory_devices": devices}


def test_note_reasons_one_by_one():
    assert fpm_note.note(_config(), _stats(4096), 4096) is None, "the paper's system with FPM"
    assert fpm_note.note(_config(), _stats(2048), 2048) is None, "a page holds two whole rows"
    for mechanism in ("cpu", "mc_dma"):
        assert fpm_note.note(_config(mechanism, allocator="scatter"), _stats(8192), 8192) is None
    zi = _flat(fpm_note.note(_config("rowclone_zi", allocator="inter_bank"), _stats(4096), 4096))
    assert zi == (
        "note: os.allocator=inter_bank does not place copy-on-write destinations in their "
        "source's subarray, so copies use FPM only by chance. for FPM: --set os.allocator=subarray_aware"
    )
    psm = _flat(fpm_note.note(_config(fpm=False), _stats(4096), 4096))
    assert psm == ("note: bulk.fpm=false sends every in-DRAM copy through PSM. for FPM: --set bulk.fpm=true")


def test_note_names_each_device_too_coarse():
    # Several [[memory.device]]: each device's own granularity, no [dram] breakdown.
    text = _flat(fpm_note.note(_config(), _stats(4096, 16384), None))
    assert text.startswith(
        "note: RowClone's minimum copy granularity (memory_devices[].stats.mcgr_bytes) is 16384 B "
        "on device 'fast', larger than the 4096 B page"
    )
    assert "--config" in text and "os.allocator" not in text
