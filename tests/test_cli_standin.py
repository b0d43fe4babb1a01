"""The generated stand-ins of issue 17 from the front end (`bulksim workload cmmp`,
docs/hybrid_workloads.md): the spec the command writes, the prefix it dumps, a run through
`bulksim run --workload SPEC --copies 2`, and one-line errors for bad arguments and specs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import bulksim
from bulksim import api

ROOT = Path(__file__).resolve().parents[1]
# The RowClone paper's DDR3 system (one DRAM device): a small, quick full system.
SMALL = [
    'dram.preset="DDR3_2Gb_x8_1066"',
    "dram.columns=512",
    "dram.channels=2",
    'controller.address_mapping="RoRaBaChCo"',
]


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "bulksim.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def one_error_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def test_cmmp_writes_the_spec_and_dumps_a_prefix(tmp_path):
    spec, dump = tmp_path / "pc.toml", tmp_path / "pc.trace"
    r = cli(
        "workload", "cmmp", spec, "--kind", "pointer_chase", "--size-mb", "1",
        "--instructions", "5000", "--seed", "7", "--dump", dump, "--dump-instructions", "401",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "429.mcf, 473.astar" in r.stdout
    assert tomllib.loads(spec.read_text()) == {
        "bulksim_standin": 1,
        "kind": "pointer_chase",
        "size_mb": 1,
        "instructions": 5000,
        "seed": 7,
        "instructions_per_ms": api.standin_info()["instructions_per_ms"],
    }
    assert api.detect_workload_format(spec) == "standin"
    lines = dump.read_text().splitlines()
    assert lines[0] == "bulksim-workload 2"
    # 401 instructions: the resident map (1), then 100 x (C 3 + one access).
    assert lines[1] == f"N {0x1000_0000:#x} {1 << 20}"
    body = [line.split() for line in lines[2:]]
    assert len(body) == 200
    assert all(b == ["C", "3"] for b in body[0::2])
    ops = [b[0] for b in body[1::2]]
    # Every 10th access a store; loads alternate one dependent (Q) and three plain (L).
    assert ops.count("S") == 10
    loads = [op for op in ops if op != "S"]
    assert loads == ["Q", "L", "L", "L"] * 22 + ["Q", "L"]
    for b in body[1::2]:
        address = int(b[1], 16)
        assert 0x1000_0000 <= address < 0x1000_0000 + (1 << 20) and address % 64 == 0


def test_run_retires_the_instructions_asked_in_every_copy(tmp_path):
    spec = api.write_standin(tmp_path / "fp.toml", kind="fp_stream", size_mb=1, instructions=6001)
    r = cli("run", "--workload", spec, "--copies", "2", *[x for s in SMALL for x in ("--set", s)])
    assert r.returncode == 0, r.stderr
    assert "format standin, detected from the content; 2 copies" in r.stdout
    stats = bulksim.run_workload(workload=spec, overrides=SMALL, copies=2)
    assert stats["instructions"] == 2 * 6001
    assert [t["instructions"] for t in stats["threads"]] == [6001, 6001]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "fp"], "Invalid value for '--kind'"),
        (["--kind", "fp_stream", "--size-mb", "0"], "Invalid value for '--size-mb'"),
        (["--kind", "zipf_drift", "--instructions", "0"], "Invalid value for '--instructions'"),
    ],
)
def test_cmmp_refuses_bad_arguments(tmp_path, args, message):
    r = cli("workload", "cmmp", tmp_path / "x.toml", *args)
    assert r.returncode != 0
    assert message in r.stderr and "Traceback" not in r.stderr


def test_a_bad_spec_is_one_error_naming_file_and_key(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('bulksim_standin = 1\nkind = "stream_rw"\nsize_mb = 4\nseeds = 2\n')
    r = cli("run", "--workload", spec)
    assert r.returncode == 1
    assert one_error_line(r) == (
        f"error: {spec}: unknown key 'seeds'; expected bulksim_standin, kind, size_mb, "
        "instructions, seed, instructions_per_ms"
    )
    spec.write_text('bulksim_standin = 1\nkind = "tree_walk"\n')
    with pytest.raises(bulksim.TraceError, match="key 'kind': unknown stand-in kind 'tree_walk'"):
        bulksim.run_workload(workload=spec, overrides=SMALL)


def test_write_standin_takes_the_engine_defaults(tmp_path):
    info = api.standin_info()
    assert set(info["kinds"]) == {"fp_stream", "stream_rw", "pointer_chase", "zipf_drift"}
    assert list(info["keys"]) == [
        "bulksim_standin",
        "kind",
        "size_mb",
        "instructions",
        "seed",
        "instructions_per_ms",
    ]
    spec = tomllib.loads(api.write_standin(tmp_path / "z.toml", kind="zipf_drift").read_text())
    # issue 17: 256 MB a copy, 100 M + 100 M instructions; 4 GHz at IPC 1.
    assert spec == {
        "bulksim_standin": 1,
        "kind": "zipf_drift",
        "size_mb": 256,
        "instructions": 200_000_000,
        "seed": 1,
        "instructions_per_ms": 4_000_000,
    }
    with pytest.raises(bulksim.TraceError, match="unknown stand-in kind 'zipf'"):
        api.write_standin(tmp_path / "x.toml", kind="zipf")
