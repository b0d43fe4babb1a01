"""The Python API: running traces, the three trace formats, determinism, config forms and
the errors bad input gives."""

from __future__ import annotations

import json

import pytest

import bulksim


def _deterministic(stats: bulksim.Stats) -> dict:
    d = stats.to_dict()
    d.pop("host")
    return d


def test_run_returns_stats_with_units_documented(make_trace):
    stats = bulksim.run(
        trace=make_trace("random", 1000, write_fraction=0.3, seed=1), preset="DDR4_8Gb_x8_2400"
    )
    assert stats["reads"] + stats["writes"] == 1000
    assert stats["read_latency.p99_ns"] == pytest.approx(
        stats["read_latency"]["p99_mem_cycles"] * stats["tck_ns"]
    )
    assert stats["bandwidth_gbps"] <= stats["peak_bandwidth_gbps"]
    assert (
        stats["row_hits"] + stats["row_misses"] + stats["row_conflicts"]
        == stats["commands"]["RD"] + stats["commands"]["WR"]
    )
    assert "read latency" in stats.summary()
    documented = {d["name"] for d in bulksim.stat_docs()}
    assert {"mem_cycles", "reads", "writes", "bandwidth_gbps", "refreshes", "host.wall_seconds"} <= documented
    assert all(d["unit"] and d["description"] for d in bulksim.stat_docs())
    json.loads(stats.to_json())


def test_same_input_gives_byte_identical_stats(make_trace):
    trace = make_trace("random", 3000, write_fraction=0.3, interval=1, seed=9)
    a = bulksim.run(trace=trace, overrides=["dram.ranks=2"])
    b = bulksim.run(trace=trace, overrides=["dram.ranks=2"])
    assert json.dumps(_deterministic(a), sort_keys=True) == json.dumps(_deterministic(b), sort_keys=True)


def test_trace_formats_agree(tmp_path):
    reqs = [(i * 3, "R" if i % 3 else "W", (i * 7919 % 5000) * 64) for i in range(600)]
    native = tmp_path / "t.native"
    native.write_text("".join(f"{c},{k},{a:#x}\n" for c, k, a in reqs))
    dramsim3 = tmp_path / "t.dramsim3"
    dramsim3.write_text("".join(f"{a:#x} {'READ' if k == 'R' else 'WRITE'} {c}\n" for c, k, a in reqs))
    a = bulksim.run(trace=native)
    b = bulksim.run(trace=dramsim3, trace_format="dramsim3")
    assert _deterministic(a) == _deterministic(b)
    # Ramulator traces carry no cycles: the same requests all due at cycle 0.
    native0 = tmp_path / "t0.native"
    native0.write_text("".join(f"0,{k},{a:#x}\n" for _, k, a in reqs))
    ramulator = tmp_path / "t.ramulator"
    ramulator.write_text("".join(f"{'LD' if k == 'R' else 'ST'} {a:#x}\n" for _, k, a in reqs))
    c = bulksim.run(trace=native0)
    d = bulksim.run(trace=ramulator, trace_format="ramulator")
    assert _deterministic(c) == _deterministic(d)
    assert c["mem_cycles"] < a["mem_cycles"]


def test_config_as_file_dict_and_overrides(tmp_path, make_trace):
    trace = make_trace("random", 500, seed=2)
    cfg = tmp_path / "c.toml"
    cfg.write_text('[controller]\nscheduler = "fcfs"\npage_policy = "closed"\n')
    from_file = bulksim.run(cfg, trace=trace)
    from_dict = bulksim.run({"controller": {"scheduler": "fcfs", "page_policy": "closed"}}, trace=trace)
    from_sets = bulksim.run(
        trace=trace, overrides=["controller.scheduler=fcfs", "controller.page_policy=closed"]
    )
    assert _deterministic(from_file) == _deterministic(from_dict) == _deterministic(from_sets)
    assert from_file["commands"]["RDA"] == 500
    resolved = bulksim.resolve_config(cfg, overrides=["dram.ranks=2"])
    assert 'scheduler = "fcfs"' in resolved and "ranks = 2" in resolved


def test_bad_config_errors_name_the_problem(tmp_path, make_trace):
    trace = make_trace("stream", 10)
    with pytest.raises(
        bulksim.ConfigError, match=r"controller\.schedular.*did you mean 'controller\.scheduler'"
    ):
        bulksim.run(trace=trace, overrides=["controller.schedular=fcfs"])
    with pytest.raises(bulksim.ConfigError, match=r"controller\.page_policy.*`open` or `closed`"):
        bulksim.run(trace=trace, overrides=["controller.page_policy=sometimes"])
    with pytest.raises(bulksim.ConfigError, match=r"dram\.preset.*DDR4_8Gb_x8_2400"):
        bulksim.run(trace=trace, preset="DDR4_8Gb_x8_2401")
    bad = tmp_path / "bad.toml"
    bad.write_text("[dram]\nranks = 2\n[controller]\nread_queue_size = -4\n")
    with pytest.raises(bulksim.ConfigError, match=r"bad\.toml.*line 4"):
        bulksim.run(bad, trace=trace)
    with pytest.raises(bulksim.ConfigError, match="cannot read config"):
        bulksim.run(tmp_path / "missing.toml", trace=trace)
    with pytest.raises(bulksim.ConfigError, match="trace format"):
        bulksim.run(trace=trace, trace_format="csv")


def test_bad_traces_name_file_and_line(tmp_path):
    t = tmp_path / "broken.trace"
    t.write_text("0,R,0x40\n5,R,0x80\n9,Q,0x100\n")
    with pytest.raises(
        bulksim.TraceError, match=r"broken\.trace:3: bad request type; expected `cycle,R\|W,address`"
    ):
        bulksim.run(trace=t)
    with pytest.raises(bulksim.TraceError, match="cannot open trace"):
        bulksim.run(trace=tmp_path / "nope.trace")


def test_spec_export_is_the_preset(tmp_path):
    s = bulksim.spec("DDR3_2Gb_x8_1066")
    assert s["timing"]["nRAS"] == 20 and s["timing"]["nRP"] == 8 and s["data_rate_mts"] == 1066
    # 8-8-8: tRAS + tRAS + tRP = 90 ns, the RowClone paper's FPM latency.
    assert s["tck_ns"] == 1.875, "DDR3-1066 runs at 1066.67 MT/s: tCK is exactly 1.875 ns"
    assert (2 * s["timing"]["nRAS"] + s["timing"]["nRP"]) * s["tck_ns"] == pytest.approx(90.0, abs=1e-9)
    d4 = bulksim.spec("DDR4_8Gb_x8_2400", overrides=["dram.timing.nCL=17", "dram.ranks=2"])
    assert d4["timing"]["nCL"] == 17 and d4["organisation"]["ranks"] == 2
    assert d4["organisation"]["bankgroups"] == 4 and d4["organisation"]["rows"] == 65536


def test_progress_callback_is_called(make_trace):
    seen = []
    bulksim.run(trace=make_trace("stream", 140_000), progress=seen.append)
    assert seen == [65536, 131072]
