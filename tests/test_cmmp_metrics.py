"""CMMP's metrics (bulksim.analysis.cmmp_metrics) on hand-made stats: speedups from the measured
cycles, their means over workloads, the flat row of item 11."""

from __future__ import annotations

import math

import pytest

from bulksim.analysis import cmmp_metrics as cm


def stats(mechanism: str, mean: float, slowest: float, **hybrid) -> dict:
    h = {
        "mechanism": mechanism,
        "dram_fraction": 0.25,
        "dram_read_fraction": 0.2,
        "pcm_avg_ns": 96.0,
        "dram_avg_ns": 40.0,
        "pcm_accesses_all": 1000,
        "promotions_started": 7,
        "demotions_started": 3,
        "promotions_completed": 6,
        "demotions_completed": 2,
        "partial_demotions": 1,
        "blocks_copied": 640,
        "periods": 12,
    }
    h.update(hybrid)
    return {
        "measurement": {"cycles_mean": mean, "cycles_max": slowest},
        "hybrid": h,
        "memory": {"energy": {"total_nj": 5.0}},
        "memory_devices": [
            {"name": "dram", "stats": {"energy": {"total_nj": 5.0}}},
            {"name": "pcm", "stats": {"energy": {"total_nj": 20.0}}},
        ],
    }


def test_speedup_is_cpms_mean_cycles_over_this_runs():
    cpm = stats("cpm", 1200.0, 1500.0)
    run = stats("cm_obm", 1000.0, 1250.0)
    assert cm.speedup(run, cpm) == pytest.approx(1.2)
    assert cm.speedup_last(run, cpm) == pytest.approx(1.2)
    slower = stats("cm", 1500.0, 3000.0)
    assert cm.speedup(slower, cpm) == pytest.approx(0.8)
    assert cm.speedup_last(slower, cpm) == pytest.approx(0.5)
    assert cm.speedup(cpm, cpm) == 1.0


def test_row_flattens_item_11():
    r = cm.row(stats("cm_obm_pd", 1000.0, 1100.0), stats("cpm", 1100.0, 1100.0))
    assert r["mechanism"] == "cm_obm_pd"
    assert r["cycles"] == 1100
    assert r["speedup"] == pytest.approx(1.1)
    assert r["speedup_last"] == pytest.approx(1.0)
    assert (r["migrations_started"], r["migrations_completed"], r["migrations_partial"]) == (10, 8, 1)
    assert (r["pcm_accesses"], r["blocks_copied"], r["periods"]) == (1000, 640, 12)
    assert (r["pcm_avg_ns"], r["dram_avg_ns"]) == (96.0, 40.0)
    assert r["energy_nj_by_device"] == {"dram": 5.0, "pcm": 20.0}
    assert r["energy_nj"] == 25.0
    with_model = stats("cm", 1.0, 1.0)
    with_model["hybrid_energy"] = {
        "dram_nj": 1.0,
        "pcm_nj": 2.0,
        "pact_nj": 0.5,
        "art_nj": 0.25,
        "total_nj": 3.75,
    }
    r = cm.row(with_model)
    assert r["energy_nj"] == 3.75
    assert r["energy_nj_by_component"] == {"dram": 1.0, "pcm": 2.0, "pact": 0.5, "art": 0.25}
    assert "speedup" not in cm.row(stats("cm", 1.0, 1.0))


def test_means_over_workloads_are_arithmetic_and_geometric():
    rows = [
        {"mechanism": "cm", "speedup": 2.0},
        {"mechanism": "cpm", "speedup": 1.0},
        {"mechanism": "cm", "speedup": 0.5},
        {"mechanism": "cpm", "speedup": 1.0},
    ]
    s = cm.summarize(rows)
    assert list(s) == ["cpm", "cm"]
    assert s["cm"]["arith"] == pytest.approx(1.25)
    assert s["cm"]["geo"] == pytest.approx(1.0)
    assert s["cm"]["n"] == 2
    assert s["cpm"] == {"arith": 1.0, "geo": 1.0, "n": 2}
    assert cm.summarize([{"mechanism": "cm", "x": 4.0}, {"mechanism": "cm", "x": 1.0}], key="x")["cm"][
        "geo"
    ] == pytest.approx(math.sqrt(4.0))


def test_missing_stats_are_named():
    with pytest.raises(ValueError, match="sim.measure_instructions"):
        cm.speedup({"hybrid": {}}, stats("cpm", 1.0, 1.0))
    with pytest.raises(ValueError, match="positive number of cycles"):
        cm.speedup(stats("cm", 0.0, 0.0), stats("cpm", 1.0, 1.0))
    with pytest.raises(ValueError, match="no `hybrid`"):
        cm.row({"measurement": {"cycles_mean": 1.0, "cycles_max": 1.0}})
    with pytest.raises(ValueError, match="has no 'speedup'"):
        cm.summarize([{"mechanism": "cm"}])


HYBRID = [
    "memory.device.0.name=dram",
    "memory.device.0.preset=DDR4_8Gb_x8_1600",
    "memory.device.1.name=pcm",
    "memory.device.1.preset=PCM_x8_1600",
    "controller.refresh=none",
    "cache.level.0.size_kb=8",
    "cache.level.0.ways=4",
    "hybrid.placement=pcm_only",
    "hybrid.period_ns=10000",
    "hybrid.art_entries=32",
    "hybrid.art_ways=32",
    "hybrid.pact_entries=256",
    "hybrid.pact_ways=16",
    "system.loop_workloads=true",
    "sim.measure_instructions=40000",
]


def test_row_reads_a_real_runs_stats(tmp_path):
    """Two cores, each sweeping 8 hot pages of its own 32 (all placed in PCM; DRAM has room for
    all), measured from the start under cpm and cm_obm_pd: the row's figures are the engine's
    stats under their names. Every PCM access is a program request or, under cpm, the read of a
    copied block (its copies all run in the background; cm_obm_pd's promotions copy what program
    reads fetch)."""
    import bulksim

    for t in range(2):
        lines = ["bulksim-workload 2", f"N {0x4000_0000:#x} {32 * 4096}"]
        for p in range(8):
            for line in range(64):
                a = 0x4000_0000 + (p + 8 * t) * 4096 + line * 64
                lines += [f"L {a:#x}", "C 3"] + ([f"S {a:#x}"] if line % 3 == 0 else [])
        (tmp_path / f"thread-{t}.trace").write_text("\n".join(lines + ["X"]) + "\n")
    runs = {
        m: bulksim.run_workload(workload=tmp_path, overrides=[*HYBRID, f"hybrid.mechanism={m}"]).to_dict()
        for m in ("cpm", "cm_obm_pd")
    }
    cpm = runs["cpm"]
    for m, s in runs.items():
        r = cm.row(s, cpm)
        h = s["hybrid"]
        assert r["mechanism"] == m
        assert s["measurement"]["cores"] == 2
        assert r["cycles"] == max(c["measured_cycles"] for c in s["cores"])
        assert r["speedup"] == pytest.approx(
            cpm["measurement"]["cycles_mean"] / s["measurement"]["cycles_mean"]
        )
        assert h["pcm_accesses"] > 0 and r["pcm_avg_ns"] > 0 and r["dram_avg_ns"] > 0
        copy_reads = h["blocks_copied"] if m == "cpm" else 0
        assert r["pcm_accesses"] == h["pcm_accesses"] + copy_reads
        assert r["migrations_started"] == 16 and r["periods"] > 0
        if "hybrid_energy" in s:
            assert r["energy_nj"] == s["hybrid_energy"]["total_nj"]
        else:
            assert r["energy_nj"] == pytest.approx(
                sum(d["stats"]["energy"]["total_nj"] for d in s["memory_devices"])
            )
    assert cm.row(cpm, cpm)["speedup"] == 1.0
    means = cm.summarize([cm.row(s, cpm) for s in runs.values()])
    assert list(means) == ["cpm", "cm_obm_pd"]
