"""``bulksim reproduce NAME --plot DIR`` (python/bulksim/reproduce/figures.py): each reproduction
draws its figures from small synthetic rows of its own row format (no engine runs), named after
the paper's figure, with bulksim's and the paper's bars labelled as such, a title that names
what a bar averages, and a legend clear of the axes; one end-to-end run of rowclone-4kb."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from bulksim import cli
from bulksim import reproduce as reproduce_package
from bulksim.reproduce import figures


def title_of(path: Path) -> str:
    """The title `figures.draw` stores in the PNG's text chunk."""
    with Image.open(path) as image:
        assert image.format == "PNG"
        return image.text["Title"]


def rank_row(experiment, system, workload, value, paper=None, source="real", metric="exec_time_norm"):
    row = {
        "experiment": experiment,
        "system": system,
        "workload": workload,
        "source": source,
        "exec_time_norm": None,
        "baseline": "no_refresh" if metric == "exec_time_norm" else "",
        "paper": paper,
        "value": None,
    }
    row[metric] = value
    return row


def refresh_rows() -> list[dict]:
    rows = []
    for workload, source, scale in (
        ("comm1", "real", 1.0),
        ("synth-mcf", "synthetic", 1.2),
        ("mean", "mean:arith", 1.1),
    ):
        paper = workload == "mean"
        rows.append(rank_row("fig10", "no_refresh", workload, 1.0, 1.0 if paper else None, source))
        rows.append(rank_row("fig10", "staggered", workload, 1.5 * scale, 1.369 if paper else None, source))
    return rows


def multicore_rows() -> list[dict]:
    rows = []
    for cores in (2, 4, 8):
        for mix in (0, 1):
            for mechanism, gain in (("baseline", 1.0), ("rowclone", 1.2), ("rowclone_zi", 1.3)):
                rows.append(
                    {
                        "cores": cores,
                        "mix": mix,
                        "mechanism": mechanism,
                        "programs": ["a", "b"],
                        "weighted_speedup": gain,
                        "instruction_throughput": gain,
                        "harmonic_speedup": gain,
                        "maximum_slowdown": 2 - gain,
                        "bandwidth_per_instruction": 2 - gain,
                        "energy_per_instruction": 2 - gain,
                        "sources": [],
                    }
                )
    return rows


def apps_rows() -> list[dict]:
    rows = []
    for workload, paper_name in (("forkbench-small", "forkbench"), ("mine", "")):
        for mechanism, scale in (("baseline", 1.0), ("rowclone", 0.6), ("rowclone_zi", 0.5)):
            rows.append(
                {
                    "workload": workload,
                    "paper_name": paper_name,
                    "source": "synthetic",
                    "mechanism": mechanism,
                    "instructions": 1000,
                    "ipc": 0.1 / scale,
                    "read_bytes": int(1000 * scale),
                    "write_bytes": int(500 * scale),
                    "copy_bytes": int(2000 * scale),
                    "init_bytes": int(3000 * scale),
                    "dram_energy_nj": 100.0 * scale,
                }
            )
    return rows


def rowclone_rows() -> list[dict]:
    return [
        {
            "operation": op,
            "mechanism": m,
            "latency_ns": latency,
            "energy_nj": energy,
            "energy_with_io_nj": energy * 2,
            "latency_reduction": 1.0,
            "energy_reduction": 1.0,
            "paper_latency_ns": latency * 1.1,
            "paper_energy_uj": energy / 1000,
            "paper_latency_reduction": 1.0,
            "paper_energy_reduction": 1.0,
        }
        for op, m, latency, energy in (("copy", "baseline", 1000.0, 3000.0), ("copy", "fpm", 90.0, 40.0))
    ]


def page_rows() -> list[dict]:
    return [
        {
            "experiment": "page_allocation",
            "system": allocator,
            "workload": "mix-a",
            "thread": thread,
            "program": program,
            "off_first_two_share": share,
            "paper": 0.3,
        }
        for allocator, share in (("clock", 0.5), ("rank_clock", 0.2))
        for thread, program in ((0, "lbm"), (1, "milc"))
    ]


def copy_engine_rows() -> list[dict]:
    rows = [
        {
            "preset": "paper",
            "workload": "network",
            "payload": payload,
            "mechanism": mechanism,
            "time_reduction_pct": gain,
            "traffic_reduction_pct": 2 * gain,
            "paper": None,
        }
        for payload in (500, 1000)
        for mechanism, gain in (("software", 0.0), ("dce", 10.0))
    ]
    # An ablation row (no mechanism) is the table's only.
    rows.append(
        {"preset": "paper_choices", "workload": "network_cold", "choice": "cold_ring", "paper": ">17%"}
    )
    return rows


def cmmp_rows() -> list[dict]:
    return [
        {
            "workload": workload,
            "mechanism": mechanism,
            "speedup": speedup,
            "energy_nj": 100.0 / speedup,
            "pcm_avg_ns": 90.0 * speedup,
        }
        for workload in ("403.gcc", "pointer_chase")
        for mechanism, speedup in (("cpm", 1.0), ("cm", 1.1), ("cm_obm", 1.2), ("cm_obm_pd", 1.2))
    ]


#: Each reproduction: small rows in its own row format and the PNGs they must give.
CASES = {
    "rowclone-4kb": (rowclone_rows, ["rowclone-4kb-table3.png"]),
    "forkbench": (
        lambda: [
            {"S_mb": 64, "N": n, "mechanism": m, "ipc": ipc, "fmtc": 0.2, "dram_energy_nj": 100.0 / ipc}
            for n in (16, 1024)
            for m, ipc in (("baseline", 0.1), ("fpm", 0.2), ("psm", 0.11))
        ],
        ["forkbench-fig7.png", "forkbench-fig8.png", "forkbench-fig9.png"],
    ),
    "rowclone-multicore": (multicore_rows, ["rowclone-multicore-table7.png"]),
    "rowclone-apps": (
        apps_rows,
        ["rowclone-apps-fig10.png", "rowclone-apps-fig11.png", "rowclone-apps-table5.png"],
    ),
    "rank-assignment": (
        lambda: [
            rank_row("fig7", "no_refresh", "comm1", 1.0, 1.0),
            rank_row("fig7", "rank_assignment", "comm1", 1.12, 1.114),
            rank_row("fig3", "staggered", "comm1", 4.4, 1.63, metric="value"),
            rank_row("fig3", "staggered:per_thread", "comm1", 0.75, 0.5, metric="value"),
        ],
        ["rank-assignment-fig7.png", "rank-assignment-fig3.png"],
    ),
    "refresh-policies": (refresh_rows, ["refresh-policies-fig10.png"]),
    "address-mapping": (
        lambda: [
            rank_row("fig5", s, w, v)
            for s, v in (("bank_xor/open/no_refresh", 1.0), ("x/closed/no_refresh", 1.3))
            for w in ("comm1", "mean")
        ],
        ["address-mapping-fig5.png"],
    ),
    "pcm-writes": (
        lambda: [
            rank_row("fig4", "pcm_no_writes", "comm1", 1.0, 1.0),
            rank_row("fig4", "pcm_eq_priority", "comm1", 1.25),
        ],
        ["pcm-writes-fig4.png"],
    ),
    "page-allocation": (page_rows, ["page-allocation-vi-c.png"]),
    "copy-engines": (copy_engine_rows, ["copy-engines-fig3-5-time.png", "copy-engines-fig3-5-traffic.png"]),
    "cmmp": (cmmp_rows, ["cmmp-sec4.png"]),
}


def test_every_reproduction_has_a_plot_case():
    assert set(CASES) == set(reproduce_package.REGISTRY)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_reproduction_draws_its_figures(name, tmp_path):
    make_rows, expected = CASES[name]
    paths = reproduce_package.get(name).figures(make_rows(), tmp_path / "figs")
    assert [p.name for p in paths] == expected
    for path in paths:
        assert path.stat().st_size > 1000
        assert title_of(path)


def test_a_mean_over_workloads_is_named_in_the_title(tmp_path):
    (path,) = reproduce_package.get("refresh-policies").figures(refresh_rows(), tmp_path)
    assert "'mean' = arithmetic mean over the 2 workloads (comm1, synth-mcf)" in title_of(path)
    # Fig 3's per-thread share is a mean over threads, which no axis draws.
    (path,) = reproduce_package.get("rank-assignment").figures(CASES["rank-assignment"][0]()[2:], tmp_path)
    assert "per_thread: the mean over the threads" in title_of(path)
    # A figure that draws each workload alone claims no mean.
    rows = [rank_row("fig7", "no_refresh", "comm1", 1.0, 1.0)]
    (path,) = reproduce_package.get("rank-assignment").figures(rows, tmp_path)
    assert "mean" not in title_of(path)


def test_a_mean_over_mixes_is_named_in_the_title(tmp_path):
    (path,) = reproduce_package.get("rowclone-multicore").figures(multicore_rows(), tmp_path)
    title = title_of(path)
    assert "arithmetic mean over the mixes of its core count" in title
    assert "(2 at 2 cores, 2 at 4 cores, 2 at 8 cores)" in title


def test_paper_and_bulksim_bars_are_labelled_and_the_legend_clears_the_axes():
    panels = [
        figures.Panel(
            "a", ["x", "y"], {"fpm": [1.0, 2.0], "psm": [3.0, None]}, "ratio", paper={"fpm": [1.5, None]}
        ),
        figures.Panel("b", ["x"], {"fpm": [1.0]}, "ratio"),
    ]
    fig = figures.build("t", panels)
    fig.canvas.draw()
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["fpm (bulksim)", "fpm (paper)", "psm (bulksim)"]
    renderer = fig.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        # Below every axes (with its tick labels), so it covers no bar.
        assert box.y1 <= ax.get_tightbbox(renderer).y0
    # The paper's bar is beside bulksim's, with the paper's value; no bar where no value.
    heights = sorted(round(p.get_height(), 3) for p in fig.axes[0].patches)
    assert heights == [1.0, 1.5, 2.0, 3.0]


def test_rowclone_table3_draws_the_papers_values_beside(tmp_path):
    fig = figures.build("t", [figures.Panel("latency", ["copy"], {"": [90.0]}, "ns", paper={"": [91.0]})])
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["bulksim", "paper"]


def test_cmmp_sensitivity_rows_draw_nothing(tmp_path):
    assert reproduce_package.get("cmmp").figures([{"workload": "x", "label": "cpm_0us"}], tmp_path) == []


def test_reproduce_plot_end_to_end(tmp_path):
    out = tmp_path / "figs"
    args = [
        "reproduce",
        "rowclone-4kb",
        "--plot",
        str(out),
        "--workers",
        "1",
        "--results",
        str(tmp_path / "r.db"),
    ]
    r = CliRunner().invoke(cli.main, args)
    assert r.exit_code == 0, r.output
    png = out / "rowclone-4kb-table3.png"
    assert png.stat().st_size > 1000
    assert f"figures (1) in {out}:\n  {png}\n" in r.output
    assert "RowClone Table 3" in title_of(png)


def test_plot_directory_that_cannot_be_made_fails_before_the_runs(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = ["reproduce", "rowclone-4kb", "--plot", str(blocker / "sub"), "--results", str(tmp_path / "r.db")]
    r = CliRunner().invoke(cli.main, args)
    assert r.exit_code == 1
    assert f"--plot {blocker / 'sub'}: cannot create the directory" in r.output
    assert not (tmp_path / "r.db").exists()


def test_plot_is_refused_for_an_experiment(tmp_path):
    r = CliRunner().invoke(cli.main, ["reproduce", "ddr4_policies", "--plot", str(tmp_path)])
    assert r.exit_code == 1
    assert "--plot applies to the table reproductions" in r.output


def test_systems_split_into_panels_by_their_last_part():
    assert figures.split_system("bank_xor/open/staggered") == ("bank_xor/open", "staggered")
    assert figures.split_system("staggered:per_thread") == ("staggered", "per_thread")
    assert figures.split_system("no_refresh") == ("no_refresh", "")


def test_more_labels_than_the_default_colours_get_distinct_colours():
    series = {f"s{i}": [1.0 + i] for i in range(12)}
    fig = figures.build("t", [figures.Panel("a", ["x"], series, "ratio")])
    colours = {tuple(p.get_facecolor()) for p in fig.axes[0].patches}
    assert len(colours) == 12


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_rows_draw_no_figure(name, tmp_path):
    # Every input missing here: nothing to draw, and no error after the runs.
    assert reproduce_package.get(name).figures([], tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_rank_study_panels_split_quantities_and_name_their_axes():
    rows = [
        *CASES["rank-assignment"][0](),
        rank_row("fig8", "error50", "comm1", 0.066, 0.094, metric="value"),
        *CASES["address-mapping"][0](),
    ]
    by = {e: (title, panels) for e, title, panels in figures.rank_study_panels("P", rows)}
    assert [p.title for p in by["fig3"][1]] == ["fig3", "fig3: per_thread"]
    assert by["fig3"][1][0].ylabel == "weighted core stall time per refresh"
    assert by["fig3"][1][1].series == {"staggered": [0.75]}
    assert by["fig8"][1][0].ylabel == "RA's time reduction (fraction)"
    assert by["fig8"][1][0].paper == {"error50": [0.094]}
    # address-mapping: a panel per refresh, the mapping/page as the bar.
    assert [p.title for p in by["fig5"][1]] == ["fig5: no_refresh"]
    assert set(by["fig5"][1][0].series) == {"bank_xor/open", "x/closed"}
    assert by["fig7"][0] == "P: fig7 (baseline: no_refresh)"
