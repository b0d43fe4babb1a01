"""`bulksim reproduce copy-engines` (python/bulksim/copy_engines.py) on a reduced run (300
packets of 1500 bytes, the four mechanisms; on the DDR3 preset also dce_rowclone, bulkcopy of
4 and 64 KB copying 128 KB in all, forkbench with S = 4 MB, N = 64): the rows' schema, what
each mechanism does with the copies, reductions derived from the rows, the paper's bounds and
the check against them, ``--json`` and the CLI. The full run (50,000 packets x 3 payloads,
...) is the reproduction's, not the tests'."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

import bulksim
from bulksim import cli
from bulksim.reproduce import copy_engines as ce
from bulksim.workloads import copy_workloads as cw

PACKETS = 300
PAYLOAD = 1500
BULKCOPY_SIZES = (4096, 65536)
#: Bytes each bulkcopy run copies: 32 copies of 4 KB, 2 of 64 KB.
BULKCOPY_BYTES = 128 << 10
#: forkbench: a 4 MB array (1,024 pages, four times the L2), 64 pages copied on write.
FORKBENCH_ARRAY_BYTES = 4 << 20
FORKBENCH_PAGES = 64
#: movblks per packet: the destination is line-aligned, 1500 = 46 x 32 + 28 (software tail).
MOVBLKS_PER_PACKET = PAYLOAD // 32
ROW_TYPES = {
    "preset": str,
    "workload": str,
    "payload": int,
    "mechanism": str,
    "cycles": int,
    "offchip_bytes": int,
    "pct_copies_in_l2": float,
    "pct_copies_in_dram": float,
    "memory_bytes": int,
    "time_reduction_pct": float,
    "traffic_reduction_pct": float,
    "copy_share_pct": float,
    "paper": (str, type(None)),
}


DDR3_ROW_TYPES = {
    **{k: v for k, v in ROW_TYPES.items() if k != "copy_share_pct"},
    "channel_bytes": int,
    "paper": type(None),
}
CHOICE_ROW_TYPES = {
    "preset": str,
    "workload": str,
    "payload": int,
    "choice": str,
    "label": str,
    "software_cycles": int,
    "dce_nt_cycles": int,
    "copy_share_pct": float,
    "time_reduction_pct": float,
    "traffic_reduction_pct": float,
    "pct_copies_in_l2": float,
    "paper": (str, type(None)),
}
#: The DDR3 preset's (workload, payload) cases in the reduced run, in the rows' order.
DDR3_CASES = [
    ("network", PAYLOAD),
    *(("bulkcopy-hot", size) for size in BULKCOPY_SIZES),
    *(("bulkcopy-cold", size) for size in BULKCOPY_SIZES),
    ("forkbench", 4096),
]


@pytest.fixture(scope="module")
def all_rows() -> list[dict]:
    return ce.run(
        packets=PACKETS,
        payloads=(PAYLOAD,),
        bulkcopy_sizes=BULKCOPY_SIZES,
        bulkcopy_bytes=BULKCOPY_BYTES,
        forkbench_array_bytes=FORKBENCH_ARRAY_BYTES,
        forkbench_pages=FORKBENCH_PAGES,
        workers=2,
    )


@pytest.fixture(scope="module")
def rows(all_rows) -> list[dict]:
    """The paper preset's rows."""
    return ce.paper_rows(all_rows)


@pytest.fixture(scope="module")
def ddr3(all_rows) -> dict[tuple[str, int], dict[str, dict]]:
    """The DDR3 preset's rows: (workload, payload) -> mechanism -> row."""
    out: dict[tuple[str, int], dict[str, dict]] = {}
    for r in ce.ddr3_rows(all_rows):
        out.setdefault((r["workload"], r["payload"]), {})[r["mechanism"]] = r
    return out


def by_mechanism(rows: list[dict]) -> dict[str, dict]:
    return {r["mechanism"]: r for r in rows}


def test_rows_have_the_schema_one_per_mechanism(rows):
    assert [r["mechanism"] for r in rows] == ["software", "software_nt", "ce_l1", "dce", "dce_nt"]
    for r in rows:
        assert set(r) == set(ROW_TYPES)
        for key, kind in ROW_TYPES.items():
            assert isinstance(r[key], kind), (key, r[key])
        assert (r["preset"], r["workload"], r["payload"]) == ("paper", "network", PAYLOAD)
        assert r["pct_copies_in_dram"] == 0.0  # the preset has no memory-side engine
        assert r["cycles"] > 0 and r["offchip_bytes"] > 0 and r["memory_bytes"] > 0


def test_software_runs_no_copy_engine(rows, tmp_path):
    software = by_mechanism(rows)["software"]
    assert software["pct_copies_in_l2"] == 0.0
    assert software["time_reduction_pct"] == 0.0 and software["traffic_reduction_pct"] == 0.0
    cw.write_network(tmp_path / "net", payload=PAYLOAD, packets=20)
    stats = bulksim.run_workload(ce.CONFIG, workload=tmp_path / "net", overrides=ce.MECHANISMS["software"])
    assert "copy_engine" not in stats
    assert stats["memcpy_ops"] == 20
    assert ce.measure(str(tmp_path / "net"), "software")["l1_copies"] == 0


def test_ce_l1_copies_everything_in_l1(rows, tmp_path):
    assert by_mechanism(rows)["ce_l1"]["pct_copies_in_l2"] == 0.0
    cw.write_network(tmp_path / "net", payload=PAYLOAD, packets=20)
    m = ce.measure(str(tmp_path / "net"), "ce_l1")
    assert (m["l1_copies"], m["l2_copies"]) == (20 * MOVBLKS_PER_PACKET, 0)


def test_dce_nt_copies_mostly_in_l2_and_moves_the_fewest_offchip_bytes(rows):
    r = by_mechanism(rows)
    # At least 80% in L2; at most 45 of a packet's 46: the header read puts the first movblk's
    # first source line in L1, so that one always runs there.
    assert 80.0 <= r["dce_nt"]["pct_copies_in_l2"] <= 100.0 * 45 / 46
    assert r["dce_nt"]["offchip_bytes"] == min(x["offchip_bytes"] for x in rows)
    # An L2 copy sends two addresses instead of moving lines: far below software.
    assert r["dce_nt"]["offchip_bytes"] < r["software"]["offchip_bytes"] / 2


@pytest.fixture(scope="module")
def by_payload() -> dict[int, dict[str, dict]]:
    """The paper preset at 500 and 1500 B (300 packets each): payload -> mechanism -> row."""
    rows = ce.paper_rows(ce.run(packets=PACKETS, payloads=(500, PAYLOAD), ddr3_workloads=(), workers=2))
    return {p: by_mechanism([r for r in rows if r["payload"] == p]) for p in (500, PAYLOAD)}


def test_every_engine_beats_software_dce_nt_most_and_gains_grow_with_the_payload(by_payload):
    # The check on the network stand-in: each engine's copy is faster than the word
    # loop (pipelined engines, copy_engine.pipeline), DCE-NT's L2 copies the most, and the
    # per-call check instructions weigh less on longer payloads.
    gains = {
        payload: {m: r["time_reduction_pct"] for m, r in rows.items() if m not in ("software", "software_nt")}
        for payload, rows in by_payload.items()
    }
    for payload, g in gains.items():
        assert min(g.values()) > 0.0, (payload, g)
        assert g["dce_nt"] == max(g.values()), (payload, g)
    for m in ("ce_l1", "dce", "dce_nt"):
        assert gains[PAYLOAD][m] > gains[500][m], (m, gains)


def test_reductions_are_derived_from_the_rows(rows):
    base = by_mechanism(rows)["software"]
    for r in rows:
        assert math.isclose(r["time_reduction_pct"], 100 * (1 - r["cycles"] / base["cycles"]))
        assert math.isclose(
            r["traffic_reduction_pct"], 100 * (1 - r["offchip_bytes"] / base["offchip_bytes"])
        )


def test_rows_from_hand_measurements_and_the_check_against_the_paper():
    def m(cycles, offchip, l1=0, l2=0):
        return {
            "cycles": cycles,
            "offchip_bytes": offchip,
            "memory_bytes": 64,
            "l1_copies": l1,
            "l2_copies": l2,
        }

    measured = {
        (500, "software"): m(1000, 2000),
        (500, "software_nt"): m(1050, 1700),
        (500, "ce_l1"): m(880, 1600, l1=10),
        (500, "dce"): m(870, 1400, l1=9, l2=1),
        (500, "dce_nt"): m(800, 1000, l1=1, l2=9),
    }
    rows = by_mechanism(ce.rows_from(measured, {500: 35.0}))
    assert [rows[k]["time_reduction_pct"] for k in ce.MECHANISMS] == pytest.approx([0, -5, 12, 13, 20])
    assert [rows[k]["traffic_reduction_pct"] for k in ce.MECHANISMS] == pytest.approx([0, 15, 20, 30, 50])
    assert [rows[k]["pct_copies_in_l2"] for k in ce.MECHANISMS] == pytest.approx([0, 0, 0, 10, 90])
    assert {rows[k]["copy_share_pct"] for k in ce.MECHANISMS} == {35.0}
    assert rows["software"]["paper"] is None and rows["software_nt"]["paper"] is None
    # software_nt slower than software is not "the paper has every mechanism faster".
    assert ce.slower_than_software(list(rows.values())) == {}
    assert rows["ce_l1"]["paper"] == "time 11-13%, traffic ~20%, in L2 0%"
    assert rows["dce"]["paper"] == "time slightly above CE-L1, traffic slightly above CE-L1, in L2 6%"
    assert rows["dce_nt"]["paper"] == "time >17%, traffic 42%, in L2 >86%"
    # Within: CE-L1 all three; DCE's time (13 vs 12: up to 5 points above), in L2 (10: 6 +- 5);
    # DCE-NT's time (>17) and in L2 (>86). Outside: DCE's traffic (30 > 20 + 5), DCE-NT's
    # traffic (50 > 42 + 5).
    assert ce.differences(list(rows.values())) == [
        "dce 500 B: traffic 30.0% (paper slightly above CE-L1, i.e. 20.0% to 25.0%)",
        "dce_nt 500 B: traffic 50.0% (paper 42%)",
    ]
    # Rounded to whole percents as the paper prints them: 25.4% is 25%, within 20-25%; 25.6% not.
    measured[(500, "dce")] = m(870, 1492, l1=9, l2=1)
    assert len(ce.differences(ce.rows_from(measured))) == 1
    measured[(500, "dce")] = m(870, 1488, l1=9, l2=1)
    assert len(ce.differences(ce.rows_from(measured))) == 2


def test_paper_bounds_per_payload():
    assert ce.paper_text("dce_nt", 1500) == "time >21%, traffic >54%, in L2 up to 94%"
    assert ce.paper_text("dce_nt", 1000) is None  # the prose names only smaller and larger payloads
    assert ce.paper_text("software", 1500) is None
    for payload in ce.PAYLOADS:
        assert ce.paper_text("ce_l1", payload) == "time 11-13%, traffic ~20%, in L2 0%"


def test_render_puts_the_paper_beside_bulksim_and_says_where_it_differs(rows):
    text = ce.render(rows)
    ce_l1 = next(line for line in text.splitlines() if line.split()[:2] == [str(PAYLOAD), "ce_l1"])
    assert ce_l1.endswith("time 11-13%, traffic ~20%, in L2 0%")
    assert "paper" in text.splitlines()[1]
    differs = ce.differences(rows)
    if differs:
        assert f"where bulksim differs from the paper's prose ({len(differs)} values):" in text
        assert all(f"  {d}" in text.splitlines() for d in differs)
    engines = [r for r in rows if r["mechanism"] not in ("software", "software_nt")]
    slower = [r["mechanism"] for r in engines if r["cycles"] > by_mechanism(rows)["software"]["cycles"]]
    assert ("slower than the software memcpy" in text) == bool(slower)


def test_the_rows_are_json_as_they_are(all_rows):
    # --json writes them through the runner's one schema (tests/test_reproduce.py).
    assert json.loads(json.dumps(all_rows)) == all_rows


def test_paper_rows_come_first_then_the_choices_then_the_ddr3_rows(all_rows, rows):
    assert all_rows[: len(rows)] == rows
    choices = ce.choice_rows(all_rows)
    assert all_rows[len(rows) : len(rows) + len(choices)] == choices
    assert {r["preset"] for r in all_rows[len(rows) + len(choices) :]} == {"ddr3"}


def test_each_paper_row_carries_its_payloads_copy_share_from_a_run_without_the_copies(
    all_rows, rows, tmp_path
):
    shares = {r["copy_share_pct"] for r in rows}
    assert len(shares) == 1
    share = shares.pop()
    # The stand-in spends most of a 1500-byte packet's time in the software copy.
    assert 40.0 < share < 95.0
    default = next(r for r in ce.choice_rows(all_rows) if r["choice"] == "default")
    assert default["copy_share_pct"] == share
    # The same number from the two runs directly: software, and the trace without its copies.
    cycles = {}
    for copy in (True, False):
        out = tmp_path / f"net-{copy}"
        cw.write_network(out, payload=PAYLOAD, packets=PACKETS, copy=copy)
        cycles[copy] = ce.measure(str(out), "software")["cycles"]
    assert share == pytest.approx(100 * (1 - cycles[False] / cycles[True]))
    assert ce.copy_share_pct(600, 1000) == pytest.approx(40.0)


def test_the_choices_rows_run_dce_nt_without_each_choice(all_rows, rows):
    choices = ce.choice_rows(all_rows)
    assert [r["choice"] for r in choices] == list(ce.CHOICES)
    by = {r["choice"]: r for r in choices}
    for r in choices:
        assert set(r) == set(CHOICE_ROW_TYPES)
        for key, kind in CHOICE_ROW_TYPES.items():
            assert isinstance(r[key], kind), (key, r[key])
        assert (r["preset"], r["payload"], r["paper"]) == ("paper_choices", PAYLOAD, ">21%")
    paper = by_mechanism(rows)
    # The default is the table's DCE-NT row.
    assert by["default"]["dce_nt_cycles"] == paper["dce_nt"]["cycles"]
    assert by["default"]["software_cycles"] == paper["software"]["cycles"]
    assert by["default"]["time_reduction_pct"] == paper["dce_nt"]["time_reduction_pct"]
    # Unpipelined: the same software run and the same copies in L2, DCE-NT slower.
    nopipe = by["no_pipeline"]
    assert nopipe["software_cycles"] == paper["software"]["cycles"]
    assert nopipe["pct_copies_in_l2"] == by["default"]["pct_copies_in_l2"]
    assert nopipe["dce_nt_cycles"] > paper["dce_nt"]["cycles"]
    # Cold ring: payloads come from memory, so both runs take longer than on the warm ring.
    cold = by["cold_ring"]
    assert cold["workload"] == "network_cold"
    assert cold["software_cycles"] > paper["software"]["cycles"]
    assert cold["dce_nt_cycles"] > paper["dce_nt"]["cycles"]
    text = ce.render(all_rows)
    assert "bulksim's choices, not the paper's" in text
    for r in choices:
        assert any(line.split()[:1] == [str(PAYLOAD)] and r["label"] in line for line in text.splitlines())


def test_software_nt_fetches_no_destination_line_and_allocates_none(rows, tmp_path):
    r = by_mechanism(rows)
    # Sec. 3: the same traffic saving as CE-L1 (no destination fill); here within 10 points.
    assert r["software_nt"]["traffic_reduction_pct"] > 15.0
    assert abs(r["software_nt"]["traffic_reduction_pct"] - r["ce_l1"]["traffic_reduction_pct"]) < 10.0
    cw.write_network(tmp_path / "net", payload=PAYLOAD, packets=20)
    stats = bulksim.run_workload(ce.CONFIG, workload=tmp_path / "net", overrides=ce.MECHANISMS["software_nt"])
    wc = stats["write_combining"]
    # 1500 B to a line-aligned buffer: 23 whole 64-byte lines per packet, 16 stores each.
    assert (wc["stores"], wc["full_writes"], wc["partial_writes"]) == (20 * 23 * 16, 20 * 23, 0)


def test_ddr3_rows_exist_for_each_workload_and_mechanism_with_the_schema(all_rows):
    ddr3_rows = ce.ddr3_rows(all_rows)
    mechanisms = ["software", "software_nt", "ce_l1", "dce", "dce_nt", "dce_rowclone"]
    assert [(r["workload"], r["payload"], r["mechanism"]) for r in ddr3_rows] == [
        (w, p, m) for w, p in DDR3_CASES for m in mechanisms
    ]
    for r in ddr3_rows:
        assert set(r) == set(DDR3_ROW_TYPES)
        for key, kind in DDR3_ROW_TYPES.items():
            assert isinstance(r[key], kind), (key, r[key])
        assert r["preset"] == "ddr3" and r["paper"] is None
        assert r["cycles"] > 0
        # A copy run wholly in DRAM moves nothing between the caches or from L2 to memory.
        assert min(r["offchip_bytes"], r["memory_bytes"], r["channel_bytes"]) >= 0
        if r["mechanism"] == "software":
            assert min(r["offchip_bytes"], r["memory_bytes"], r["channel_bytes"]) > 0
        assert 0.0 <= r["pct_copies_in_l2"] and 0.0 <= r["pct_copies_in_dram"]
        assert r["pct_copies_in_l2"] + r["pct_copies_in_dram"] <= 100.0 + 1e-9
        if r["mechanism"] != "dce_rowclone":  # only it hands chunks to the memory controller
            assert r["pct_copies_in_dram"] == 0.0


def test_ddr3_reductions_are_against_software_on_the_same_workload_and_payload(ddr3):
    for case, by in ddr3.items():
        base = by["software"]
        assert base["pct_copies_in_l2"] == 0.0 and base["pct_copies_in_dram"] == 0.0, case
        for r in by.values():
            assert math.isclose(r["time_reduction_pct"], 100 * (1 - r["cycles"] / base["cycles"]))
            assert math.isclose(
                r["traffic_reduction_pct"], 100 * (1 - r["offchip_bytes"] / base["offchip_bytes"])
            )


def test_ddr3_network_dce_rowclone_runs_as_dce_nt(ddr3):
    # A packet's payload (at most 1,500 B) holds no whole 4 KB destination chunk, so every
    # copy runs as under dce_nt: the same run.
    by = ddr3[("network", PAYLOAD)]
    keys = ("cycles", "offchip_bytes", "memory_bytes", "channel_bytes", "pct_copies_in_l2")
    assert {k: by["dce_rowclone"][k] for k in keys} == {k: by["dce_nt"][k] for k in keys}
    assert by["dce_rowclone"]["pct_copies_in_dram"] == 0.0


@pytest.mark.parametrize("size", BULKCOPY_SIZES)
def test_ddr3_cold_bulkcopy_runs_in_dram_and_moves_fewer_channel_bytes(ddr3, size):
    by = ddr3[("bulkcopy-cold", size)]
    assert by["dce_rowclone"]["pct_copies_in_dram"] > 0.0
    assert by["dce_rowclone"]["channel_bytes"] < by["dce_nt"]["channel_bytes"]


@pytest.mark.parametrize("size", BULKCOPY_SIZES)
def test_ddr3_hot_bulkcopy_copies_nothing_in_dram(ddr3, size):
    # Each source is read in full just before its copy, so a cache holds some of every chunk's
    # source lines and the probe declines every chunk.
    assert ddr3[("bulkcopy-hot", size)]["dce_rowclone"]["pct_copies_in_dram"] == 0.0


def test_ddr3_forkbench_copies_on_write_in_dram(ddr3):
    assert ddr3[("forkbench", 4096)]["dce_rowclone"]["pct_copies_in_dram"] > 0.0


def test_ddr3_rows_from_hand_measurements():
    def m(cycles, offchip, l1=0, l2=0, dram=0):
        return {
            "cycles": cycles,
            "offchip_bytes": offchip,
            "memory_bytes": 64,
            "channel_bytes": 128,
            "l1_copies": l1,
            "l2_copies": l2,
            "dram_blocks": dram,
        }

    measured = {
        ("forkbench", 4096, "software"): m(1000, 2000),
        ("forkbench", 4096, "software_nt"): m(950, 1500),
        ("forkbench", 4096, "ce_l1"): m(900, 1000, l1=10),
        ("forkbench", 4096, "dce"): m(900, 1000, l1=5, l2=5),
        ("forkbench", 4096, "dce_nt"): m(800, 1000, l1=2, l2=8),
        ("forkbench", 4096, "dce_rowclone"): m(500, 500, l1=1, l2=2, dram=7),
        ("network", 500, "software"): m(100, 100),
        ("network", 500, "software_nt"): m(110, 70),
        **{("network", 500, k): m(50, 25, l2=4) for k in ("ce_l1", "dce", "dce_nt", "dce_rowclone")},
    }
    rows = ce.ddr3_rows_from(measured)
    # Workloads in DDR3_WORKLOADS order, whatever the measurements' order.
    assert [r["workload"] for r in rows] == ["network"] * 6 + ["forkbench"] * 6
    assert rows[1]["mechanism"] == "software_nt"
    assert rows[1]["time_reduction_pct"] == pytest.approx(-10.0)
    assert rows[7]["traffic_reduction_pct"] == pytest.approx(25.0)
    rowclone = rows[-1]
    assert rowclone["mechanism"] == "dce_rowclone" and rowclone["paper"] is None
    assert rowclone["pct_copies_in_l2"] == pytest.approx(20.0)
    assert rowclone["pct_copies_in_dram"] == pytest.approx(70.0)
    assert rowclone["time_reduction_pct"] == pytest.approx(50.0)
    assert rowclone["traffic_reduction_pct"] == pytest.approx(75.0)
    assert rows[2]["time_reduction_pct"] == pytest.approx(50.0)  # against network's software
    assert rows[2]["traffic_reduction_pct"] == pytest.approx(75.0)


def test_render_adds_the_ddr3_table(all_rows, rows):
    text = ce.render(all_rows)
    assert text.startswith(ce.render(rows))
    assert "Copy engines on bulksim's DDR3 preset" in text
    head = next(line for line in text.splitlines() if "in DRAM" in line)
    assert "channel B" in head
    ddr3_lines = [line for line in text.splitlines() if line.split()[:1] == ["forkbench"]]
    assert [line.split()[2] for line in ddr3_lines] == list(ce.DDR3_MECHANISMS)


def test_cli_reproduce_quick_prints_the_table_and_writes_json(tmp_path, monkeypatch):
    monkeypatch.setattr(ce, "QUICK_PACKETS", 100)
    monkeypatch.setattr(ce, "PAYLOADS", (500,))
    monkeypatch.setattr(ce, "QUICK_BULKCOPY_SIZES", (4096,))
    monkeypatch.setattr(ce, "BULKCOPY_BYTES", 8192)
    monkeypatch.setattr(ce, "FORKBENCH_ARRAY_BYTES", 1 << 20)
    monkeypatch.setattr(ce, "QUICK_FORKBENCH_PAGES", 8)
    out = tmp_path / "rows.json"
    r = CliRunner().invoke(
        cli.main,
        [
            "reproduce",
            "copy-engines",
            "--quick",
            "--workers",
            "1",
            "--json",
            str(out),
            "--results",
            str(tmp_path / "r.db"),
        ],
    )
    assert r.exit_code == 0, r.output
    rows = json.loads(out.read_text())["rows"]
    paper = ce.paper_rows(rows)
    assert [(x["payload"], x["mechanism"]) for x in paper] == [(500, m) for m in ce.MECHANISMS]
    assert "time >17%, traffic 42%, in L2 >86%" in r.output
    assert paper[-1]["paper"] == "time >17%, traffic 42%, in L2 >86%"
    cases = [("network", 500), ("bulkcopy-hot", 4096), ("bulkcopy-cold", 4096), ("forkbench", 4096)]
    assert [(x["workload"], x["payload"], x["mechanism"]) for x in ce.ddr3_rows(rows)] == [
        (w, p, m) for w, p in cases for m in ce.DDR3_MECHANISMS
    ]
    assert "Copy engines on bulksim's DDR3 preset" in r.output


def test_cli_help_and_list_name_the_reproduction():
    r = CliRunner().invoke(cli.main, ["reproduce", "copy-engines", "--help"])
    assert r.exit_code == 0 and "--quick" in r.output
    assert "copy-engines: 5,000 packets" in r.output and "forkbench N = 1k" in " ".join(r.output.split())
    r = CliRunner().invoke(cli.main, ["reproduce", "--list"])
    assert any(line.startswith("copy-engines") for line in r.output.splitlines())
