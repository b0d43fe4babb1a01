"""`bulksim reproduce address-mapping`: the Rank Assignment paper's Figure 5 (Shevgoor et al.,
ISPASS 2016, §IV-A; docs/rank_assignment.md, "Reproduction: address-mapping"): the four
address mappings (non-interleaved, channel-interleaved, bank-interleaved, bank-XOR), each with
an open and a closed page policy, without refresh and with staggered refresh, on the Table II
system with the default scatter allocator (the only one channel-interleaving allows: it splits
pages over channels).

Every time is the time to the N-th DRAM access over that of bank-XOR, open page, no refresh
(the Table II system without refresh). The paper gives only shapes: about 25% between the
policies without refresh (channel-interleaved best), channel-interleaved worst by about 8% with
staggered refresh, bank-XOR with open page best overall."""

from __future__ import annotations

from bulksim.reproduce.rank_study import (
    FULL_ACCESSES,
    QUICK_ACCESSES,
    Run,
    mean_rows,
    normalized_rows,
    run_deduplicated,
    study_workloads,
)

# The rows are written as every Rank Assignment reproduction writes them (`--json FILE`).
from bulksim.reproduce.rank_study import write_json as write_json

MAPPINGS = ["non_interleaved", "channel_interleaved", "bank_interleaved", "bank_xor"]
PAGE_POLICIES = ["open", "closed"]
REFRESH = {
    "no_refresh": 'controller.refresh.policy="none"',
    "staggered": 'controller.refresh.policy="staggered"',
}
BASELINE = "bank_xor/open/no_refresh"
PAPER_SPREAD_PCT = 25.0  # §IV-A, Fig 5: "about 25%" between policies without refresh
PAPER_CHANNEL_PENALTY_PCT = 8.0  # §IV-A: channel-interleaved worst by ~8% with refresh


def system_name(mapping: str, page: str, refresh: str) -> str:
    return f"{mapping}/{page}/{refresh}"


def plan(quick: bool, accesses: int | None = None) -> tuple[list[Run], list[str]]:
    """The runs (tagged with experiment and system) and the skipped workloads' lines;
    `accesses` replaces the run length (tests use shorter runs)."""
    workloads, skipped = study_workloads(quick)
    accesses = accesses or (QUICK_ACCESSES if quick else FULL_ACCESSES)
    runs = [
        Run(
            w.name,
            (f'controller.address_mapping="{m}"', f'controller.page_policy="{p}"', REFRESH[r]),
            accesses,
            (("experiment", "fig5"), ("system", system_name(m, p, r))),
        )
        for w in workloads
        for r in REFRESH
        for m in MAPPINGS
        for p in PAGE_POLICIES
    ]
    return runs, skipped


def _extra(stats: dict) -> dict:
    return {"row_hit_rate": stats["memory"].get("row_hit_rate")}


def run(
    quick: bool = False, workers: int | None = None, mean: str = "arith", accesses: int | None = None
) -> list[dict]:
    """Per workload and mean: every mapping x page policy x refresh, normalized to bank-XOR,
    open page, no refresh; and per mapping and refresh the better page policy ("best")."""
    runs, skipped = plan(quick, accesses)
    return rows_from_stats(runs, run_deduplicated(runs, workers), skipped, mean)


def rows_from_stats(
    runs: list[Run], stats: list[dict], skipped: list[str], mean: str = "arith"
) -> list[dict]:
    """The rows from each run's stats (in `runs`' order) and the skipped workloads' lines."""
    rows = normalized_rows(runs, stats, {"fig5": BASELINE}, {}, _extra)
    rows += mean_rows(rows, mean)
    for row in rows:
        row["mapping"], row["page_policy"], row["refresh"] = row["system"].split("/")
    rows += [{"experiment": "skipped", "system": "", "workload": line, "source": "real"} for line in skipped]
    return rows


def best_of_page_policies(
    rows: list[dict], workload: str = "mean"
) -> dict[tuple[str, str], tuple[float, str]]:
    """Per (mapping, refresh): the better page policy's normalized time, and that policy (the
    paper keeps the better of open and closed for each mapping)."""
    best: dict[tuple[str, str], tuple[float, str]] = {}
    for r in rows:
        if r["experiment"] != "fig5" or r["workload"] != workload:
            continue
        key = (r["mapping"], r["refresh"])
        if key not in best or r["exec_time_norm"] < best[key][0]:
            best[key] = (r["exec_time_norm"], r["page_policy"])
    return best


def spread_pct(best: dict[tuple[str, str], tuple[float, str]], refresh: str) -> float:
    """Slowest over fastest mapping (each with its better page policy), minus 1, in percent."""
    times = [best[(m, refresh)][0] for m in MAPPINGS]
    return 100.0 * (max(times) / min(times) - 1.0)


def _best(best: dict[tuple[str, str], tuple[float, str]], refresh: str) -> str:
    m = min(MAPPINGS, key=lambda m: best[(m, refresh)][0])
    return f"{m}, {best[(m, refresh)][1]}"


def render(rows: list[dict]) -> str:
    fig = [r for r in rows if r["experiment"] == "fig5"]
    workloads = list(dict.fromkeys(r["workload"] for r in fig if r["workload"] != "mean"))
    kind = next((r["source"] for r in fig if r["workload"] == "mean"), "mean:arith").split(":")[1]
    norm = {(r["system"], r["workload"]): r["exec_time_norm"] for r in fig}
    lines = [
        f"Rank Assignment Figure 5: time to the N-th DRAM access over bank_xor/open/no_refresh ({kind} mean)",
        f"{'mapping/page/refresh':36}" + "".join(f" {w:>13}" for w in workloads) + f"{'mean':>9}",
    ]
    for r in REFRESH:
        for m in MAPPINGS:
            for p in PAGE_POLICIES:
                s = system_name(m, p, r)
                lines.append(
                    f"{s:36}"
                    + "".join(f" {norm[(s, w)]:13.3f}" for w in workloads)
                    + f"{norm[(s, 'mean')]:9.3f}"
                )
    best = best_of_page_policies(rows)
    lines.append("")
    lines.append("Better page policy per mapping (mean):")
    for r in REFRESH:
        cells = ", ".join(f"{m} {best[(m, r)][0]:.3f} ({best[(m, r)][1]})" for m in MAPPINGS)
        lines.append(f"  {r}: {cells}")
    st = {m: best[(m, "staggered")][0] for m in MAPPINGS}
    lines.append(
        f"spread without refresh: {spread_pct(best, 'no_refresh'):.1f}% (paper ~{PAPER_SPREAD_PCT:.0f}%); "
        f"best {_best(best, 'no_refresh')} (paper: channel_interleaved)"
    )
    others = min(v for m, v in st.items() if m != "channel_interleaved")
    lines.append(
        f"with staggered refresh: channel_interleaved {100 * (st['channel_interleaved'] / others - 1):+.1f}% "
        f"vs the best other mapping (paper: worst by ~{PAPER_CHANNEL_PENALTY_PCT:.0f}%); "
        f"best {_best(best, 'staggered')} (paper: bank_xor, open)"
    )
    lines += [r["workload"] for r in rows if r["experiment"] == "skipped"]
    return "\n".join(lines)
