"""An independent DRAM protocol checker.

It replays a bulksim command log and checks every JEDEC constraint by brute force over the
history, with its own model of the device: bank state (including the implicit precharge of
RDA/WRA), data-bus occupancy of every burst, and the timing definitions of JESD79-3/-4 with
AL = 0. It shares no code and no rule table with the engine; it takes only parameter values
from the preset, as exported by ``bulksim spec show PRESET --json``.

RowClone's ACT2 (Seshadri et al., MICRO 2013, section 3.1) is checked from the paper: it is
legal only on an open bank whose open row lies in the destination row's subarray, once that
row is fully restored (tRAS after the activation); the destination row is then restored
before the bank is precharged, read or written (tRAS); and as a wordline activation it counts
towards tRRD, tFAW and tRC like ACT. TRANSFER (section 3.2) takes two command cycles, logged
as TRR (source bank) then TRW (destination bank, next cycle, same rank); it has the latency of
READ/WRITE on the chip's internal bus and uses no channel data bus.

Refresh is checked as JEDEC states the rate (``refresh_rate_violations``): from the start of the
log to its end, one REF falls due per tREFI, at most 8 may be owed at any time, two
surrounding REFs are at most 9 x tREFI apart, and at most 16 issue within 2 x tREFI. The
spec's nREFI and nRFC are those of the run: ``bulksim spec show`` resolves them for the
temperature (extended: half the tREFI) and the fine granularity refresh (FGR) mode in use.
Under FGR 2x/4x the limits scale with the granularity g, as DDR4 datasheets state them for
REF2x/REF4x: 8g REFs may be postponed, two surrounding REFs are at most (8g + 1) x tREFI_g
apart, and (the burst limit, scaled the same way) at most 16g issue within 2g x tREFI_g.
The refresh settings come from the run's resolved config (``bulksim config show``), when
given: under ``controller.refresh = "none"`` no REF is owed and none may issue; a part
without a refresh command (PCM, ``has_refresh: false`` in the spec) owes none and takes none.

DDR5 (JESD79-5B; ``standard: "DDR5"`` in the spec) is checked with the same definitions plus
two of its own. ACT, RD, RDA, WR and WRA (and RowClone's ACT2, an ACT on the bus) are two-cycle
commands on the CA bus (the standard's command truth table): the channel's next command may not
start until two cycles after such a command's first cycle, the cycle every timing is counted
from. Two writes to one bank group are tCCD_L_WR apart (``nCCD_L_WR``), not tCCD_L. Bank groups,
burst length and the refresh timings in use are the spec's like any part's. The refresh-rate
limits are DDR4's (8 postponed REFs at 1x), which demand refresh never nears; bulksim refuses
the schemes that postpone (elastic, pausing) on DDR5 until its own limit is sourced; see
docs/standards.md.

DDR5 same-bank refresh (REFsb, logged with bank group -1: it refreshes bank b of every bank
group of its rank) is checked from JESD79-5 as docs/standards.md reads it: all banks of its set
closed, for tRP since their precharge and tRC since their ACT; the set's banks take no ACT
and no REFsb for tRFCsb (``nRFCsb``), the rank's other banks no ACT for tREFSBRD
(``nREFSBRD``); a REF waits tRFCsb after a REFsb and a REFsb tRFC after a REF. Two of its
gates are bulksim's reading where no public source states one: a REFsb of another bank waits
tREFSBRD, and a REFsb waits tRRD_L after an ACT of the rank. Rate, under
``controller.refresh.bank_scope = "same_bank"`` (REFsb in fine granularity mode): a rank's
REFsb go round its bank indexes, none refreshed twice before every index once, and each index
is checked as a refresh stream of its own at the spec's nREFI (tREFI2) with the limits above.

LPDDR5 (JESD209-5; ``standard: "LPDDR5"``) in bank-group mode at WCK:CK 4:1, checked from the
standard. ACT is two commands (ACT-1, ACT-2) on the one command bus, so the channel's next
command waits two cycles after it; RD and WR are single commands (WCK runs free: no CAS sync).
A PREA closes every bank in tRPab (``nRPab``), longer than a PRE's tRPpb (``nRP``): the rank's
next ACT or REF waits it. Two precharges (PRE or PREA) of a rank are at least tPPD = 2 cycles
apart. A 64-byte line is a BL32 burst, which bank-group mode sends as two BL16 halves from one
bank group: each half takes BL16 / 8 beats per clock = 2 cycles of the data bus, the second
starting one BL16 tCCD_L after the first (half the preset's ``nCCD_L``, which counts the
line's two halves), so the bus is free between them. The data-bus check takes each half as
its own interval: another bank group's half may fill the gap.

HBM3 (JESD238; ``standard: "HBM3"``): a channel of the log is one pseudo-channel. Row commands
(ACT, PRE, PREA, REF) and column commands (RD, WR and their auto-precharge forms, and
RowClone's TRR/TRW) have separate buses, each taking one command per cycle; an ACT holds the
row bus for two cycles, and holds nothing on the column bus. A 64-byte line is two BL8 bursts
to one bank (bulksim's choice: HBM3's burst is 32 bytes), each BL8 / 4 beats per clock = 2
cycles, the second one BL8 tCCD_L (half the preset's ``nCCD_L``) after the first; the
data-bus check takes them as two intervals, as on LPDDR5. On both, the refresh-rate limits
are DDR4's (8 postponed REFs), which demand refresh never nears; bulksim refuses the schemes
that postpone (elastic, pausing) on them.

PCM as CMMP's Table I models it (Bock et al., ICCD 2016, after HMMSim's ``pcm_long_latency``;
``precharge_per_dirty_block: true`` in the spec): reads do not disturb the cells, so closing a
row writes back only the 64-B blocks (bursts) written into its row buffer since its ACT, each
taking tRP. The next ACT of the bank (and a REF) waits tRP x the blocks the precharge wrote
back, counted here from the log's WR/WRA column addresses (a block written twice is written
back once; a row only read closes at once). A PREA writes back each bank's own blocks. Under a
closed page policy (``page_policy = "closed"`` in the resolved config, or the device's own in
``[[memory.device]]``), every access closes its row: a RD or WR without auto-precharge is a
violation.

Usage: python tests/timing_checker.py SPEC.json COMMAND_LOG.csv [RESOLVED_CONFIG.toml [DEVICE]]
"""

from __future__ import annotations

import csv
import json
import sys
import tomllib
from collections import deque
from dataclasses import dataclass
from typing import Any

ACTIVATES = {"ACT", "ACT2"}  # ACT2: RowClone's second activate (Fast Parallel Mode)
PRECHARGES = {"PRE", "PREA"}
# HBM3's row command bus; every other command goes on its column bus.
HBM3_ROW_COMMANDS = ACTIVATES | PRECHARGES | {"REF"}
# LPDDR5: precharge to precharge of a rank (tPPD), in clock cycles.
LPDDR5_TPPD = 2
# DDR5's commands that hold the CA bus for two cycles.
DDR5_TWO_CYCLE = {"ACT", "ACT2", "RD", "RDA", "WR", "WRA"}
READS = {"RD", "RDA"}
WRITES = {"WR", "WRA"}
CHANNEL = READS | WRITES  # commands that move data over the channel
# TRANSFER (RowClone PSM), two command cycles: TRR reads a line from the source bank onto the
# chip's internal bus, TRW writes it into the destination bank in the next cycle.
INTERNAL_READS = READS | {"TRR"}
INTERNAL_WRITES = WRITES | {"TRW"}
COLUMN = INTERNAL_READS | INTERNAL_WRITES


@dataclass(frozen=True)
class Cmd:
    cycle: int
    name: str
    channel: int
    rank: int
    bankgroup: int
    bank: int
    row: int
    column: int


@dataclass(frozen=True)
class Violation:
    line: int
    cycle: int
    command: str
    rule: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.command} at cycle {self.cycle} violates {self.rule}"


@dataclass(frozen=True)
class RefreshSettings:
    """The controller's refresh settings that change what the log must hold."""

    policy: str = "staggered"  # staggered | simultaneous | none
    granularity: int = 1  # DDR4 FGR: REFs per 1x interval (1, 2 or 4)
    # demand | elastic | pausing | pcd | adaptive. Pausing's fragments and adaptive's switching
    # between 1x and 4x REFs are not JEDEC refresh sequences: their rate is not checked, and an
    # adaptive run's REFs may be 4x ones (tRFC checked at nRFC4).
    scheme: str = "demand"
    # all_bank (REF) | same_bank (DDR5 REFsb, one bank index of every bank group).
    bank_scope: str = "all_bank"

    @property
    def rate_checked(self) -> bool:
        return self.scheme not in ("pausing", "adaptive")

    @classmethod
    def from_config(cls, config: dict[str, Any] | None) -> RefreshSettings:
        """From a resolved config (parsed ``bulksim config show`` TOML); defaults without one."""
        if config is None:
            return cls()
        refresh = config.get("controller", {}).get("refresh", {})
        if isinstance(refresh, str):  # a policy name alone
            return cls(policy=refresh)
        policy = refresh.get("policy", cls.policy)
        return cls(
            policy="staggered" if policy == "all_bank" else policy,
            granularity=refresh.get("granularity", 1),
            scheme=refresh.get("scheme", "demand"),
            bank_scope=refresh.get("bank_scope", "all_bank"),
        )


def page_policy(config: dict[str, Any] | None, device: str | None = None) -> str:
    """The page policy of the run (``controller.page_policy``), or of the named device of
    ``[[memory.device]]`` where it sets its own; "open" without a config."""
    if config is None:
        return "open"
    policy = config.get("controller", {}).get("page_policy", "open")
    for i, d in enumerate(config.get("memory", {}).get("device", [])):
        if device in (d.get("name") or f"device{i}",) and d.get("page_policy"):
            policy = d["page_policy"]
    return policy


class Checker:
    def __init__(self, spec: dict, closed_page: bool = False):
        t = spec["timing"]
        self.t = t
        # PCM: tRP per dirty block written back at precharge (module docstring).
        self.per_dirty_block = bool(spec.get("precharge_per_dirty_block", False))
        self.burst_length = spec["organisation"]["burst_length"]
        self.closed_page = closed_page
        self.dirty: dict[tuple, set[int]] = {}
        # Blocks the bank's last precharge wrote back.
        self.written_back: dict[tuple, int] = {}
        self.CL, self.CWL, self.BL = t["nCL"], t["nCWL"], t["nBL"]
        self.rows_per_subarray = spec["organisation"]["rows_per_subarray"]
        standard = spec.get("standard")
        self.ddr5 = standard == "DDR5"
        self.lpddr5 = standard == "LPDDR5"
        self.hbm3 = standard == "HBM3"
        # Commands holding their command bus for a second cycle.
        self.two_cycle = DDR5_TWO_CYCLE if self.ddr5 else ACTIVATES if (self.lpddr5 or self.hbm3) else set()
        # LPDDR5's BL32 and HBM3's two BL8s: a line's data is two halves with a gap between
        # them (module docstring): (half length, start of the second half) from the burst.
        self.halves: tuple[int, int] | None = None
        if self.lpddr5 or self.hbm3:
            o = spec["organisation"]
            half = o["burst_length"] // 2 // o["data_beats_per_clock"]
            self.halves = (half, t["nCCD_L"] // 2)
            # The line's write or read data ends with its second half.
            self.BL = self.halves[1] + half
        self.last_prea: dict[tuple, int] = {}
        # Write to write within a bank group: DDR5's own tCCD_L_WR (other parts: tCCD_L).
        self.ccd_l_wr = t["nCCD_L_WR"] if self.ddr5 else t["nCCD_L"]
        # No pairwise constraint spans more than this; REF and tFAW are tracked separately.
        self.horizon = (
            max(
                t["nRC"],
                t["nRAS"] + t["nRP"],
                self.CWL + self.BL + t["nWR"] + t["nRP"],
                self.CL + self.BL + 8,
                t["nFAW"],
                self.ccd_l_wr,
            )
            + 8
        )
        self.history: dict[int, deque[tuple[int, Cmd]]] = {}
        self.open_row: dict[tuple, int | None] = {}
        # Cycle at which a bank's precharge (explicit or implicit) completes its start.
        self.precharge_start: dict[tuple, int] = {}
        self.last_act: dict[tuple, int] = {}
        self.acts_by_rank: dict[tuple, deque[int]] = {}
        self.last_ref: dict[tuple, int] = {}
        # Same-bank refresh: the last REFsb of each (channel, rank, bank index), and of each rank.
        self.last_refsb: dict[tuple, int] = {}
        self.last_refsb_of_rank: dict[tuple, int] = {}
        self.banks_per_group = spec["organisation"]["banks_per_group"]
        self.last_cycle: dict[int, tuple[int, str]] = {}
        self.pending_trr: dict[int, Cmd] = {}
        self.violations: list[Violation] = []

    def _fail(self, line: int, c: Cmd, rule: str) -> None:
        self.violations.append(Violation(line, c.cycle, c.name, rule))

    def trp(self, k: tuple) -> int:
        """The time from the start of bank k's last precharge to its next ACT: tRP, or on a part
        whose precharge writes back dirty blocks, tRP per block it wrote back."""
        if self.per_dirty_block:
            return self.t["nRP"] * self.written_back.get(k, 0)
        return self.t["nRP"]

    def _close(self, k: tuple, start: int) -> None:
        """Bank k's precharge starts at `start`: it writes back the row's dirty blocks."""
        self.open_row[k] = None
        self.precharge_start[k] = start
        self.written_back[k] = len(self.dirty.pop(k, ()))

    @staticmethod
    def bank_key(c: Cmd) -> tuple:
        return (c.channel, c.rank, c.bankgroup, c.bank)

    def _banks_of_rank(self, channel: int, rank: int) -> list[tuple]:
        return [k for k in self.open_row if k[0] == channel and k[1] == rank]

    def check(self, line: int, c: Cmd) -> None:
        t, CWL, BL = self.t, self.CWL, self.BL
        rank_key = (c.channel, c.rank)

        # Command bus: one command per cycle per channel, in time order; on DDR5 a two-cycle
        # command (on LPDDR5 and HBM3 an ACT) holds the bus for its second cycle too. HBM3 has
        # a row and a column command bus, each its own.
        bus = (c.channel, "row" if c.name in HBM3_ROW_COMMANDS else "column") if self.hbm3 else c.channel
        prev = self.last_cycle.get(bus)
        if prev is not None:
            prev_cycle, prev_name = prev
            cycles = 2 if prev_name in self.two_cycle else 1
            if c.cycle < prev_cycle + cycles:
                held = f" (a two-cycle {prev_name})" if cycles == 2 else ""
                self._fail(line, c, f"command bus: previous command at cycle {prev_cycle}{held}")
        self.last_cycle[bus] = (c.cycle, c.name)

        # LPDDR5: a PREA's all-bank precharge time before the rank's next ACT or REF.
        if self.lpddr5 and c.name in ("ACT", "ACT2", "REF"):
            prea = self.last_prea.get(rank_key)
            if prea is not None and c.cycle < prea + t["nRPab"]:
                self._fail(line, c, f"tRPab: PREA at {prea}")
        if c.name == "PREA":
            self.last_prea[rank_key] = c.cycle

        # TRANSFER: a TRR's next command on the channel is its TRW, one cycle later, to another
        # bank of the same rank.
        trr = self.pending_trr.pop(c.channel, None)
        if trr is not None and (
            c.name != "TRW"
            or c.cycle != trr.cycle + 1
            or c.rank != trr.rank
            or self.bank_key(c) == self.bank_key(trr)
        ):
            self._fail(
                line, c, f"TRANSFER: TRR at {trr.cycle} needs its TRW to another bank of rank {trr.rank} next"
            )
        if c.name == "TRW" and trr is None:
            self._fail(line, c, "TRANSFER: TRW without a TRR in the previous cycle")
        if c.name == "TRR":
            self.pending_trr[c.channel] = c

        # Bank state.
        if c.name == "ACT":
            if self.open_row.get(self.bank_key(c)) is not None:
                self._fail(line, c, "state: ACT to an open bank")
        elif c.name == "ACT2":
            open_row = self.open_row.get(self.bank_key(c))
            rps = self.rows_per_subarray
            if open_row is None or open_row == c.row or open_row // rps != c.row // rps:
                self._fail(
                    line,
                    c,
                    f"state: ACT2 to row {c.row} needs another open row of its subarray (open: {open_row})",
                )
        elif c.name == "PRE":
            if self.open_row.get(self.bank_key(c)) is None:
                self._fail(line, c, "state: PRE to a closed bank")
        elif c.name in COLUMN:
            if self.open_row.get(self.bank_key(c)) != c.row:
                self._fail(
                    line,
                    c,
                    f"state: {c.name} to row {c.row} but open row is {self.open_row.get(self.bank_key(c))}",
                )
        elif c.name == "REF":
            if any(self.open_row[k] is not None for k in self._banks_of_rank(c.channel, c.rank)):
                self._fail(line, c, "state: REF with a bank open")
        elif c.name == "REFsb":
            self._check_refsb(line, c)

        # Refresh: nothing but the wait during tRFC.
        last_ref = self.last_ref.get(rank_key)
        if (
            last_ref is not None
            and c.name in {"ACT", "REF", "PREA", "PRE", "REFsb"}
            and c.cycle < last_ref + t["nRFC"]
        ):
            self._fail(line, c, f"tRFC: REF at {last_ref} (nRFC = {t['nRFC']} cycles)")

        # Same-bank refresh: its banks wait tRFCsb, the rank's others tREFSBRD (ACT).
        if c.name in ("ACT", "ACT2", "REF"):
            self._after_refsb(line, c)

        # Closed page: every access closes its row.
        if self.closed_page and c.name in ("RD", "WR"):
            self._fail(line, c, f"closed page: {c.name} leaves the row open (expected {c.name}A)")

        # Precharge (explicit or implicit) to ACT / REF: tRP (per block written back on PCM).
        if c.name in ACTIVATES:
            k = self.bank_key(c)
            start = self.precharge_start.get(k) if c.name == "ACT" else None
            if start is not None and c.cycle < start + self.trp(k):
                blocks = f", {self.written_back.get(k, 0)} dirty blocks" if self.per_dirty_block else ""
                self._fail(line, c, f"tRP: precharge started at {start}{blocks}")
            last = self.last_act.get(self.bank_key(c))
            if c.name == "ACT" and last is not None and c.cycle < last + t["nRC"]:
                self._fail(line, c, f"tRC: ACT at {last}")
            window = self.acts_by_rank.setdefault(rank_key, deque())
            while window and window[0] <= c.cycle - t["nFAW"]:
                window.popleft()
            if len(window) >= 4:
                self._fail(line, c, f"tFAW: four ACTs since {window[0]}")
        if c.name == "REF":
            for k in self._banks_of_rank(c.channel, c.rank):
                start = self.precharge_start.get(k)
                if start is not None and c.cycle < start + self.trp(k):
                    self._fail(line, c, f"tRP before REF: bank {k[2:]} precharge started at {start}")
                last = self.last_act.get(k)
                if last is not None and c.cycle < last + t["nRC"]:
                    self._fail(line, c, f"tRC before REF: ACT at {last}")

        # Pairwise constraints against recent history on this channel.
        hist = self.history.setdefault(c.channel, deque())
        while hist and hist[0][1].cycle < c.cycle - self.horizon:
            hist.popleft()
        for _, p in hist:
            rule = self._pair(p, c)
            if rule:
                self._fail(line, c, rule)
        hist.append((line, c))

        # Apply state.
        if c.name in INTERNAL_WRITES:
            # The burst's block of the open row now differs from the array (PCM writes it back).
            self.dirty.setdefault(self.bank_key(c), set()).add(c.column // self.burst_length)
        if c.name in ACTIVATES:
            self.open_row[self.bank_key(c)] = c.row
            self.last_act[self.bank_key(c)] = c.cycle
            self.acts_by_rank[rank_key].append(c.cycle)
            self.dirty.pop(self.bank_key(c), None)
        elif c.name == "PRE":
            self._close(self.bank_key(c), c.cycle)
        elif c.name == "PREA":
            for k in self._banks_of_rank(c.channel, c.rank):
                if self.open_row[k] is not None:
                    self._close(k, c.cycle)
        elif c.name in {"RDA", "WRA"}:
            # Auto-precharge starts once both tRAS (from ACT) and the read/write recovery are met.
            recovery = t["nRTP"] if c.name == "RDA" else CWL + BL + t["nWR"]
            k = self.bank_key(c)
            self._close(k, max(self.last_act[k] + t["nRAS"], c.cycle + recovery))
        elif c.name == "REF":
            self.last_ref[rank_key] = c.cycle
        elif c.name == "REFsb":
            self.last_refsb[(c.channel, c.rank, c.bank)] = c.cycle
            self.last_refsb_of_rank[rank_key] = c.cycle

    def _refsb_set(self, c: Cmd) -> list[tuple]:
        """The banks a REFsb refreshes: bank c.bank of every bank group of its rank."""
        return [k for k in self._banks_of_rank(c.channel, c.rank) if k[3] == c.bank]

    def _check_refsb(self, line: int, c: Cmd) -> None:
        """A REFsb's own gates: its set closed (tRP, tRC), earlier REFsb, ACTs of the rank."""
        t = self.t
        if not self.ddr5:
            self._fail(line, c, "state: REFsb on a part without same-bank refresh (DDR5 only)")
        if c.bankgroup != -1:
            self._fail(line, c, f"REFsb addresses every bank group (-1), not group {c.bankgroup}")
        for k in self._refsb_set(c):
            if self.open_row[k] is not None:
                self._fail(line, c, f"state: REFsb with bank {k[3]} of group {k[2]} open")
            start = self.precharge_start.get(k)
            if start is not None and c.cycle < start + self.trp(k):
                self._fail(line, c, f"tRP before REFsb: group {k[2]} precharge started at {start}")
            last = self.last_act.get(k)
            if last is not None and c.cycle < last + t["nRC"]:
                self._fail(line, c, f"tRC before REFsb: group {k[2]} ACT at {last}")
        same = self.last_refsb.get((c.channel, c.rank, c.bank))
        if same is not None and c.cycle < same + t["nRFCsb"]:
            self._fail(line, c, f"tRFCsb: REFsb of bank {c.bank} at {same}")
        other = self.last_refsb_of_rank.get((c.channel, c.rank))
        if other is not None and other != same and c.cycle < other + t["nREFSBRD"]:
            self._fail(line, c, f"tREFSBRD: REFsb of another bank at {other}")
        for k in self._banks_of_rank(c.channel, c.rank):
            last = self.last_act.get(k)
            if last is not None and c.cycle < last + t["nRRD_L"]:
                self._fail(line, c, f"tRRD_L before REFsb: ACT at {last}")

    def _after_refsb(self, line: int, c: Cmd) -> None:
        """ACT (ACT2) and REF after a REFsb: tRFCsb for its banks (a REF: all of them),
        tREFSBRD for an ACT of another bank."""
        t = self.t
        rank_key = (c.channel, c.rank)
        if c.name == "REF":
            for b in range(self.banks_per_group):
                last = self.last_refsb.get((c.channel, c.rank, b))
                if last is not None and c.cycle < last + t["nRFCsb"]:
                    self._fail(line, c, f"tRFCsb: REFsb of bank {b} at {last} before REF")
            return
        same = self.last_refsb.get((c.channel, c.rank, c.bank))
        if same is not None and c.cycle < same + t["nRFCsb"]:
            self._fail(line, c, f"tRFCsb: bank {c.bank} refreshing since REFsb at {same}")
        last = self.last_refsb_of_rank.get(rank_key)
        if last is not None and last != same and c.cycle < last + t["nREFSBRD"]:
            self._fail(line, c, f"tREFSBRD: REFsb at {last}")

    def _pair(self, p: Cmd, c: Cmd) -> str | None:
        """The violated constraint between an earlier command p and c, if any."""
        t, CL, CWL, BL = self.t, self.CL, self.CWL, self.BL
        gap = c.cycle - p.cycle
        same_rank = p.rank == c.rank
        same_bg = same_rank and p.bankgroup == c.bankgroup
        same_bank = same_bg and p.bank == c.bank

        if p.name in COLUMN and c.name in COLUMN:
            if p.name in CHANNEL and c.name in CHANNEL:
                # Data bus: bursts may not overlap; switching ranks costs nRTRS.
                p_start = p.cycle + (CL if p.name in READS else CWL)
                c_start = c.cycle + (CL if c.name in READS else CWL)
                switch = 0 if same_rank else t["nRTRS"]
                if self.halves is not None:
                    # Two halves each: any half of c overlapping any half of p.
                    half, second = self.halves
                    for a in (p_start, p_start + second):
                        for b in (c_start, c_start + second):
                            if b < a + half + switch and a < b + half + switch:
                                return f"data bus: burst of {p.name} at {p.cycle} still on the bus"
                elif c_start < p_start + BL + switch:
                    return f"data bus: burst of {p.name} at {p.cycle} still on the bus"
            if same_rank:
                # The chip's internal bus: reads and TRRs, writes and TRWs, one burst apart.
                if (p.name in INTERNAL_READS) == (c.name in INTERNAL_READS):
                    both_writes = p.name in WRITES and c.name in WRITES
                    if self.ddr5 and same_bg and both_writes and gap < self.ccd_l_wr:
                        return f"tCCD_L_WR: {p.name} at {p.cycle}"
                    ccd = t["nCCD_L"] if same_bg else t["nCCD_S"]
                    if gap < ccd:
                        return f"tCCD: {p.name} at {p.cycle}"
                elif p.name in INTERNAL_READS:
                    # A read's data must clear the internal bus before a channel write's data.
                    if c.name in WRITES and c.cycle + CWL < p.cycle + CL + BL + 2:
                        return f"read-to-write turnaround: {p.name} at {p.cycle}"
                else:
                    # Write recovery before a read; a TRANSFER's TRW and the next TRR pipeline.
                    wtr = t["nWTR_L"] if same_bg else t["nWTR_S"]
                    if not (p.name == "TRW" and c.name == "TRR") and gap < CWL + BL + wtr:
                        return f"tWTR: {p.name} at {p.cycle}"
            return None

        if self.lpddr5 and same_rank and p.name in PRECHARGES and c.name in PRECHARGES and gap < LPDDR5_TPPD:
            return f"tPPD: {p.name} at {p.cycle}"

        if p.name in ACTIVATES and same_rank:
            if c.name in ACTIVATES and not same_bank:
                rrd = t["nRRD_L"] if same_bg else t["nRRD_S"]
                if gap < rrd:
                    return f"tRRD: {p.name} at {p.cycle}"
            if same_bank and c.name in COLUMN and gap < t["nRCD"]:
                return f"tRCD: {p.name} at {p.cycle}"
            if same_bank and c.name == "ACT2" and gap < t["nRAS"]:
                return f"tRAS: ACT2 before the row opened by {p.name} at {p.cycle} is restored"
            if same_bank and p.name == "ACT2" and c.name in COLUMN and gap < t["nRAS"]:
                return f"tRAS: {c.name} before the ACT2 destination row (at {p.cycle}) is restored"
            if c.name == "PREA" or (same_bank and c.name == "PRE"):
                if gap < t["nRAS"]:
                    return f"tRAS: ACT at {p.cycle}"
        if same_rank and p.name in COLUMN and (c.name == "PREA" or (same_bank and c.name == "PRE")):
            # RDA and WRA count too: a PREA may not cut short the auto-precharge's read to
            # precharge or write recovery (Micron's DDR4 model checks it the same way).
            if p.name in ("RD", "RDA", "TRR") and gap < t["nRTP"]:
                return f"tRTP: {p.name} at {p.cycle}"
            if p.name in ("WR", "WRA", "TRW") and gap < CWL + BL + t["nWR"]:
                return f"tWR: {p.name} at {p.cycle}"
        return None


def read_log(path: str) -> list[tuple[int, Cmd]]:
    out = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for i, row in enumerate(reader, start=2):
            out.append(
                (
                    i,
                    Cmd(
                        int(row["cycle"]),
                        row["command"],
                        int(row["channel"]),
                        int(row["rank"]),
                        int(row["bankgroup"]),
                        int(row["bank"]),
                        int(row["row"]),
                        int(row["column"]),
                    ),
                )
            )
    return out


def check_log(
    spec: dict, log_path: str, config: dict[str, Any] | None = None, device: str | None = None
) -> list[Violation]:
    """All violations in a command log (empty list: the log is legal). `spec` is the run's
    resolved part (``bulksim.spec``), `config` its resolved config (parsed TOML of
    ``bulksim.api.resolve_config``) for the refresh settings and the page policy; without it,
    refresh is taken to be on at 1x and pages open. `device` names the ``[[memory.device]]``
    whose log this is (its own page policy)."""
    refresh = RefreshSettings.from_config(config)
    if refresh.scheme == "adaptive" and spec["timing"].get("nRFC4"):
        spec = {**spec, "timing": {**spec["timing"], "nRFC": spec["timing"]["nRFC4"]}}
    checker = Checker(spec, closed_page=page_policy(config, device) == "closed")
    o = spec["organisation"]
    for ch in range(o["channels"]):
        for r in range(o["ranks"]):
            for g in range(o["bankgroups"]):
                for b in range(o["banks_per_group"]):
                    checker.open_row[(ch, r, g, b)] = None
    commands = read_log(log_path)
    refs: dict[tuple, list[tuple[int, int]]] = {
        (ch, r): [] for ch in range(o["channels"]) for r in range(o["ranks"])
    }
    has_refresh = spec.get("has_refresh", True)
    same_bank = refresh.bank_scope == "same_bank"
    refsbs: dict[tuple, list[tuple[int, int, int]]] = {}
    for line, c in commands:
        checker.check(line, c)
        if c.name == "REFsb":
            refsbs.setdefault((c.channel, c.rank), []).append((line, c.cycle, c.bank))
            if not same_bank:
                checker._fail(line, c, 'REFsb issued under bank_scope = "all_bank"')
        if c.name == "REF":
            refs.setdefault((c.channel, c.rank), []).append((line, c.cycle))
            if not has_refresh:
                checker._fail(
                    line, c, f"state: REF to {spec.get('name', 'a part')}, which has no refresh command"
                )
            elif refresh.policy == "none":
                checker._fail(line, c, 'refresh off: REF issued under controller.refresh = "none"')
    # A part without a refresh command (PCM), or refresh off, owes no REFs.
    if commands and has_refresh and refresh.policy != "none" and refresh.rate_checked:
        end_line, end = max(((line, c.cycle) for line, c in commands), key=lambda lc: lc[1])
        for rank, rank_refs in refs.items():
            if same_bank:
                checker.violations += same_bank_rate_violations(
                    rank, refsbs.get(rank, []), o["banks_per_group"], end_line, end, spec, refresh
                )
                continue
            checker.violations += refresh_rate_violations(
                rank, rank_refs, end_line, end, spec["timing"]["nREFI"], refresh.granularity
            )
    return checker.violations


def same_bank_rate_violations(
    rank: tuple,
    refsbs: list[tuple[int, int, int]],
    banks: int,
    end_line: int,
    end: int,
    spec: dict,
    refresh: RefreshSettings,
) -> list[Violation]:
    """Same-bank refresh's rate for one rank, whose REFsb are `refsbs` ((line, cycle, bank),
    in order): they go round the `banks` bank indexes (none twice before every one once), and
    each index's REFsb meet the refresh rate at the spec's nREFI as REFs would."""
    out: list[Violation] = []
    seen: set[int] = set()
    for line, cycle, bank in refsbs:
        if bank in seen:
            out.append(
                Violation(
                    line,
                    cycle,
                    "REFsb",
                    f"same-bank rounds: rank {rank} refreshed bank {bank} again before every"
                    f" bank index was refreshed (done: {sorted(seen)})",
                )
            )
        seen.add(bank)
        if len(seen) == banks:
            seen = set()
    for bank in range(banks):
        mine = [(line, cycle) for line, cycle, b in refsbs if b == bank]
        out += refresh_rate_violations(
            (*rank, f"bank {bank}"), mine, end_line, end, spec["timing"]["nREFI"], refresh.granularity
        )
    return out


# JEDEC (JESD79-3 4.17.2, JESD79-4 4.22): one REF is due per tREFI; at most 8 may be postponed
# at any time; pulling in more than 8 earns no further credit; two surrounding REFs are at most
# 9 x tREFI apart; at most 16 REFs issue within any 2 x tREFI. These are the 1x figures; under
# FGR each scales with the granularity (tREFI then is the FGR interval).
MAX_POSTPONED = 8
MAX_PULLED_IN = 8
MAX_GAP_INTERVALS = 9
MAX_REFS_IN_TWO_INTERVALS = 16


def refresh_rate_violations(
    rank: tuple, refs: list[tuple[int, int]], end_line: int, end: int, refi: int, granularity: int = 1
) -> list[Violation]:
    """The refresh-rate violations of one rank, whose REFs are `refs` ((line, cycle), in
    order), in a log that starts at cycle 0 (the device fresh, nothing owed) and ends at
    `end`. One REF falls due at each multiple of tREFI (the interval at `granularity`); a
    REF in the same cycle as a due point counts before it (a REF exactly 9 x tREFI after the
    last is legal at 1x)."""
    g = granularity
    max_postponed = MAX_POSTPONED * g
    max_pulled_in = MAX_PULLED_IN * g
    max_gap_intervals = (MAX_GAP_INTERVALS - 1) * g + 1
    max_refs_in_two_intervals = MAX_REFS_IN_TWO_INTERVALS * g
    two_intervals = 2 * g * refi  # 2 x tREFI at 1x
    out: list[Violation] = []
    balance = 0  # REFs issued minus REFs due: negative = postponed, positive = pulled in
    due_counted = 0  # due points (multiples of tREFI) processed so far

    def settle_dues(before: int, line: int, command: str) -> None:
        """Counts the due points strictly before cycle `before`; reports the first that
        leaves more than max_postponed REFs owed."""
        nonlocal balance, due_counted
        due_now = (before - 1) // refi if before > 0 else 0
        if due_now <= due_counted:
            return
        balance -= due_now - due_counted
        if balance < -max_postponed:
            first_bad = due_now - (-max_postponed - balance - 1)
            owed = max_postponed + 1
            out.append(
                Violation(
                    line,
                    first_bad * refi,
                    command,
                    f"refresh postponed: rank {rank} owed {owed} REFs at cycle {first_bad * refi}"
                    f" (at most {max_postponed} may be postponed)",
                )
            )
            balance = -max_postponed  # report each further missed REF once
        due_counted = due_now

    cycles = [cycle for _, cycle in refs]
    for i, (line, cycle) in enumerate(refs):
        settle_dues(cycle, line, "REF")
        balance = min(balance + 1, max_pulled_in)
        if i > 0 and cycle - cycles[i - 1] > max_gap_intervals * refi:
            out.append(
                Violation(
                    line,
                    cycle,
                    "REF",
                    f"refresh gap: rank {rank} had no REF for {cycle - cycles[i - 1]} cycles"
                    f" (at most {max_gap_intervals} x tREFI = {max_gap_intervals * refi})",
                )
            )
        first = i - max_refs_in_two_intervals
        if first >= 0 and cycle - cycles[first] < two_intervals:
            out.append(
                Violation(
                    line,
                    cycle,
                    "REF",
                    f"refresh pulled in: rank {rank} issued {max_refs_in_two_intervals + 1} REFs"
                    f" in {cycle - cycles[first]} cycles (at most {max_refs_in_two_intervals}"
                    f" within {two_intervals} cycles, 2 x the 1x tREFI)",
                )
            )
    # The end of the log: what is owed by then, and the time since the last REF.
    end_command = "end of log"
    settle_dues(end, end_line, end_command)
    last = cycles[-1] if cycles else None
    if last is not None and end - last > max_gap_intervals * refi:
        out.append(
            Violation(
                end_line,
                end,
                end_command,
                f"refresh gap: rank {rank} had no REF for {end - last} cycles before the end"
                f" of the log (at most {max_gap_intervals} x tREFI = {max_gap_intervals * refi})",
            )
        )
    return out


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4, 5):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    config = None
    if len(argv) >= 4:
        with open(argv[3], "rb") as f:
            config = tomllib.load(f)
    violations = check_log(spec, argv[2], config, argv[4] if len(argv) == 5 else None)
    for v in violations[:50]:
        print(v)
    print(f"{len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
