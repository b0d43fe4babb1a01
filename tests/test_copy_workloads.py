"""The copy-engine study's workload generators (`bulksim workload network` and `bulkcopy`,
docs/copy_engines_workloads.md): the records and addresses they write, that the engine reads
and runs them (functional and timing mode) with the instruction and page counts their layout
implies, and one-line errors for bad arguments."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import bulksim
from bulksim import api
from bulksim.workloads import copy_workloads as cw

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONAL = ['sim.mode="functional"']


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=120,
    )


def one_error_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def records(path: Path) -> list[list[str]]:
    """The trace's records (header and comments dropped), each split into its fields."""
    lines = path.read_text().splitlines()
    assert lines[0] == "bulksim-workload 2"
    return [line.split() for line in lines[1:] if not line.startswith("#")]


def first_line_bytes() -> int:
    """The first cache level's line size in the default config (ranged loads touch its lines)."""
    return tomllib.loads(api.resolve_config())["cache"]["level"][0]["line_bytes"]


def lines_touched(vaddr: int, nbytes: int, line: int) -> int:
    return (vaddr + nbytes - 1) // line - vaddr // line + 1


def pages_touched(ranges: list[tuple[int, int]]) -> int:
    return len({p for start, n in ranges for p in range(start // 4096, (start + n - 1) // 4096 + 1)})


def test_network_writes_each_packet_at_its_ring_slot_and_user_buffer(tmp_path):
    path = cw.write_network(tmp_path / "net", payload=1000, packets=10, ring=4, buffers=3, dst_offset=8)
    assert path == tmp_path / "net" / "thread-0.trace"
    recs = records(path)
    assert recs[:4] == [
        ["N", "0x10000000", str(4 * 2048)],
        ["N", "0x20000000", str(2 * 4096)],  # 3 x 2048 rounded up to pages
        ["N", "0x30000000", "4096"],
        ["L", "0x10000000", str(4 * 2048)],  # the warm ring: one load of all of it
    ]
    assert recs[-1] == ["X"]
    body = recs[4:-1]
    per_packet = 1 + 4 + 1 + 3 + 1  # header, control-block loads, compute, stores, copy
    assert len(body) == 10 * per_packet
    for i in range(10):
        header, *tcb_loads, compute, s1, s2, s3, copy = body[i * per_packet : (i + 1) * per_packet]
        slot = 0x1000_0000 + (i % 4) * 2048
        assert header == ["L", hex(slot), "52"]
        # The payload follows the header in the slot, so its first bytes share the header's line.
        assert copy == ["M", hex(slot + 52), hex(0x2000_0000 + (i % 3) * 2048 + 8), "1000"]
        assert compute == ["C", "400"]
        for op, (kind, addr) in zip("LLLLSSS", [*tcb_loads, s1, s2, s3], strict=True):
            assert kind == op and 0x3000_0000 <= int(addr, 16) < 0x3000_0000 + 256
    assert sum(r[0] == "M" for r in recs) == 10


def test_network_without_header_or_protocol_work_copies_from_the_slot_start(tmp_path):
    path = cw.write_network(tmp_path / "n", payload=2048, packets=2, header_bytes=0, protocol_instructions=0)
    body = records(path)[4:-1]
    assert [r[0] for r in body] == list("LLLLSSSM") * 2
    assert body[15] == ["M", "0x10000800", "0x20000800", "2048"]


def test_network_defaults_to_a_warm_ring_of_256_slots_that_fits_the_copy_engines_l2(tmp_path):
    recs = records(cw.write_network(tmp_path / "n", payload=500, packets=1))
    ring_bytes = 256 * 2048
    assert recs[0] == ["N", "0x10000000", str(ring_bytes)]
    assert recs[3] == ["L", "0x10000000", str(ring_bytes)]
    l2 = tomllib.loads((ROOT / "configs" / "copy_engines.toml").read_text())["cache"]["level"][1]
    assert ring_bytes <= l2["size_kb"] * 1024 // 2  # 512 KB: half the 1 MB L2


def test_cold_ring_leaves_out_the_ring_load(tmp_path):
    warm = records(cw.write_network(tmp_path / "w", payload=500, packets=3, ring=8))
    cold = records(cw.write_network(tmp_path / "c", payload=500, packets=3, ring=8, warm_ring=False))
    assert warm[3] == ["L", "0x10000000", str(8 * 2048)]
    assert cold == warm[:3] + warm[4:]


def test_without_copy_the_network_trace_leaves_out_only_the_payload_copies(tmp_path):
    with_copy = records(cw.write_network(tmp_path / "w", payload=500, packets=3, ring=8))
    without = records(cw.write_network(tmp_path / "n", payload=500, packets=3, ring=8, copy=False))
    assert sum(r[0] == "M" for r in with_copy) == 3
    assert without == [r for r in with_copy if r[0] != "M"]
    with pytest.raises(api.ArgumentError, match="copy: 0; expected True or False"):
        cw.write_network(tmp_path / "x", payload=500, packets=3, copy=0)


def test_warm_ring_lets_dce_nt_copy_in_l1_and_a_cold_ring_sends_it_to_l2(tmp_path):
    """Ring and user buffer of one slot each (3 pages: they fit the 4-way L1 whatever the frames)
    and 1500-byte payloads: 46 movblks per packet (destination line-aligned, 1500 = 46 x 32 + 28),
    the source 52 bytes into the slot, so each movblk reads two lines."""
    overrides = ['system.memcpy="movblk"', 'copy_engine.policy="dce_nt"']
    config = ROOT / "configs" / "copy_engines.toml"
    copies = {}
    for warm in (True, False):
        out = tmp_path / f"warm-{warm}"
        cw.write_network(out, payload=1500, packets=2, ring=1, buffers=1, warm_ring=warm)
        stats = bulksim.run_workload(config, workload=out, overrides=overrides)
        engine = stats["copy_engine"]
        assert engine["movblks"] == 2 * 46
        copies[warm] = (engine["l1"]["copies"], engine["l2"]["copies"])
    # Warm: the whole slot is in L1, so every movblk finds its source there.
    assert copies[True] == (92, 0)
    # Cold: only the header's two lines are in L1 (the second holds the payload's first 12 bytes),
    # so each packet's first movblk runs in L1 and, DCE-NT allocating nothing, the rest in L2;
    # except that the second packet's last movblk finds the line the first packet's 28-byte
    # software tail loaded.
    assert copies[False] == (1 + 2, 45 + 44)


def test_network_runs_with_the_instructions_and_pages_its_layout_implies(tmp_path):
    out = tmp_path / "net"
    cw.write_network(
        out, payload=1500, packets=10, ring=4, buffers=3, dst_offset=8, protocol_instructions=250
    )
    line = first_line_bytes()
    # Per packet: the header's lines, 4 control-block loads, 3 stores, the memcpy (one
    # instruction), the protocol work; each of the 3 maps is one instruction.
    header_lines = lines_touched(0x1000_0000, 52, line)
    warm_ring_lines = 4 * 2048 // line
    expected = 3 + warm_ring_lines + 10 * (header_lines + 4 + 3 + 1 + 250)
    ring = [(0x1000_0000 + s * 2048, 52 + 1500) for s in range(4)]
    user = [(0x2000_0000 + b * 2048 + 8, 1500) for b in range(3)]
    pages = pages_touched(ring) + pages_touched(user) + 1
    assert pages == 2 + 2 + 1
    for mode in ("functional", "timing"):
        stats = bulksim.run_workload(workload=out, overrides=[f'sim.mode="{mode}"'])
        assert stats["instructions"] == expected, mode
        assert stats["os"]["populated"] == pages, mode
        assert stats["os"]["page_faults"] == 0, mode  # resident maps: no faults, no zeroing
    assert stats["memcpy_ops"] == 10


def test_bulkcopy_rotates_page_aligned_sources_and_destinations(tmp_path):
    size = 1 << 20
    path = cw.write_bulkcopy(tmp_path / "b", size=size, copies=40, hot=0.25, seed=7)
    recs = records(path)
    stride, rotating = cw.bulkcopy_layout(size)
    assert (stride, rotating) == (size, 9)  # 9 MiB: one buffer more than 8 MiB holds
    assert recs[:3] == [
        ["N", hex(0x1_0000_0000), str(size)],
        ["N", hex(0x2_0000_0000), str(9 * size)],
        ["N", hex(0x4_0000_0000), str(9 * size)],
    ]
    copies = [i for i, r in enumerate(recs) if r[0] == "M"]
    assert len(copies) == 40
    cold = 0
    for n, i in enumerate(copies):
        src, dst, nbytes = (int(v, 0) for v in recs[i][1:])
        assert nbytes == size and dst == 0x4_0000_0000 + (n % 9) * size and dst % 4096 == 0
        if src == 0x1_0000_0000:
            assert recs[i - 1] == ["L", hex(src), str(size)]  # read in full just before
        else:
            assert src == 0x2_0000_0000 + (cold % 9) * size and recs[i - 1][0] != "L"
            cold += 1
    assert cold == 30  # 25% of 40 hot
    assert len(recs) == 3 + 40 + 10 + 1


def test_bulkcopy_hot_fraction_is_exact_and_the_seed_chooses_which(tmp_path):
    def hot_pattern(seed, copies=50, hot=0.3):
        return [bool(h) for h in cw.hot_copies(copies, hot, seed)]

    for seed in range(20):
        assert sum(hot_pattern(seed)) == 15
    assert hot_pattern(1) == hot_pattern(1)
    assert hot_pattern(1) != hot_pattern(2)
    assert sum(hot_pattern(3, copies=7, hot=0.5)) == 4  # 3.5 rounds up
    assert not any(hot_pattern(3, hot=0.0)) and all(hot_pattern(3, hot=1.0))
    a = cw.write_bulkcopy(tmp_path / "a", size=4096, copies=50, hot=0.3, seed=5).read_bytes()
    b = cw.write_bulkcopy(tmp_path / "b", size=4096, copies=50, hot=0.3, seed=5).read_bytes()
    c = cw.write_bulkcopy(tmp_path / "c", size=4096, copies=50, hot=0.3, seed=6).read_bytes()
    assert a == b and a != c


def test_bulkcopy_of_an_odd_size_runs_with_its_instructions_and_pages(tmp_path):
    out = tmp_path / "b"
    size = 5000  # two pages per buffer
    cw.write_bulkcopy(out, size=size, copies=12, hot=0.5, seed=3)
    stride, rotating = cw.bulkcopy_layout(size)
    assert (stride, rotating) == (8192, 1025)
    line = first_line_bytes()
    expected = 3 + 12 + 6 * lines_touched(0x1_0000_0000, size, line)
    # 1 hot source, 6 cold sources, 12 destinations, each on 2 pages.
    pages = 2 * (1 + 6 + 12)
    stats = bulksim.run_workload(workload=out, overrides=FUNCTIONAL)
    assert stats["instructions"] == expected
    assert stats["os"]["populated"] == pages


def test_cli_writes_the_workloads(tmp_path):
    r = cli("workload", "network", tmp_path / "n", "--payload", "500", "--packets", "3", "--dst-offset", "4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "n" / "thread-0.trace")
    copies = [x for x in records(tmp_path / "n" / "thread-0.trace") if x[0] == "M"]
    assert copies[2] == ["M", "0x10001034", "0x20001004", "500"]
    warm = records(tmp_path / "n" / "thread-0.trace")
    assert warm[3] == ["L", "0x10000000", str(256 * 2048)]
    r = cli(
        "workload", "network", tmp_path / "c", "--payload", "500", "--packets", "3", "--dst-offset", "4",
        "--cold-ring",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert records(tmp_path / "c" / "thread-0.trace") == warm[:3] + warm[4:]
    r = cli("workload", "bulkcopy", tmp_path / "b", "--size", "65536", "--copies", "4", "--hot", "1")
    assert r.returncode == 0, r.stderr
    recs = records(tmp_path / "b" / "thread-0.trace")
    assert [x[0] for x in recs] == ["N"] * 3 + ["L", "M"] * 4 + ["X"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["network", "o", "--payload", "0", "--packets", "5"], "--payload"),
        (["network", "o", "--payload", "500", "--packets", "0"], "--packets"),
        (["network", "o", "--payload", "500", "--packets", "5", "--ring", "0"], "--ring"),
        (["network", "o", "--payload", "500", "--packets", "5", "--buffers", "0"], "--buffers"),
        (["network", "o", "--payload", "500", "--packets", "5", "--header-bytes", "-1"], "--header-bytes"),
        (
            ["network", "o", "--payload", "500", "--packets", "5", "--protocol-instructions", "-3"],
            "--protocol-instructions",
        ),
        (["bulkcopy", "o", "--size", "0", "--copies", "2", "--hot", "0.5"], "--size"),
        (["bulkcopy", "o", "--size", "4096", "--copies", "0", "--hot", "0.5"], "--copies"),
        (["bulkcopy", "o", "--size", "4096", "--copies", "2", "--hot", "1.5"], "--hot"),
        (["bulkcopy", "o", "--size", "4096", "--copies", "2", "--hot", "-0.1"], "--hot"),
        (["bulkcopy", "o", "--size", str(2**30 + 1), "--copies", "2", "--hot", "0"], "--size"),
    ],
)
def test_bad_options_are_one_usage_line(tmp_path, args, option):
    r = cli("workload", *args, cwd=tmp_path)
    assert r.returncode == 2
    line = one_error_line(r)
    assert f"Invalid value for '{option}'" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["network", "o", "--payload", "2000", "--packets", "5"],
            "--payload 2000: header (52 B) and payload must fit one 2048-byte ring slot; at most 1996",
        ),
        (
            ["network", "o", "--payload", "1500", "--packets", "5", "--dst-offset", "549"],
            "--dst-offset 549: the payload (1500 B) must fit its 2048-byte user buffer after the offset; "
            "at most 548",
        ),
        (
            ["bulkcopy", "o", "--size", "4096", "--copies", "2", "--hot", "nan"],
            "--hot: nan is not a fraction; expected a number from 0 to 1",
        ),
    ],
)
def test_arguments_that_do_not_fit_together_are_one_error_line(tmp_path, args, message):
    r = cli("workload", *args, cwd=tmp_path)
    assert r.returncode == 1
    assert one_error_line(r) == f"error: {message}"
    assert not (tmp_path / "o").exists()


def test_out_must_be_a_directory_without_another_workload(tmp_path):
    (tmp_path / "file").write_text("x")
    r = cli("workload", "network", tmp_path / "file", "--payload", "500", "--packets", "1")
    assert r.returncode != 0 and "file" in one_error_line(r)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "thread-1.trace").write_text("bulksim-workload 2\nX\n")
    r = cli("workload", "bulkcopy", tmp_path / "old", "--size", "4096", "--copies", "1", "--hot", "0")
    assert r.returncode == 1
    assert one_error_line(r).endswith(
        "old: holds thread-1.trace of another workload; give a new or empty directory"
    )
    assert not (tmp_path / "old" / "thread-0.trace").exists()
    # Writing again into its own directory replaces the trace.
    cw.write_bulkcopy(tmp_path / "again", size=4096, copies=1, hot=0)
    cw.write_bulkcopy(tmp_path / "again", size=4096, copies=2, hot=0)
    assert sum(r[0] == "M" for r in records(tmp_path / "again" / "thread-0.trace")) == 2


def test_api_rejects_values_click_would_not_pass():
    with pytest.raises(api.ArgumentError, match="--hot"):
        cw.write_bulkcopy("unused", size=4096, copies=1, hot=True)
    with pytest.raises(api.ArgumentError, match="--hot"):
        cw.write_bulkcopy("unused", size=4096, copies=1, hot="0.5")
    with pytest.raises(api.ArgumentError, match="--packets"):
        cw.write_network("unused", payload=100, packets=0)
    assert not Path("unused").exists()
