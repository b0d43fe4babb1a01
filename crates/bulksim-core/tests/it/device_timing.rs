//! Every timing parameter of every preset is tight: after the preceding command, the following
//! one is not ready one cycle before the earliest legal cycle and is ready at it. Expected
//! cycles are written here from the JEDEC definitions, not read from the rule table.

use bulksim_core::device::Device;
use bulksim_core::mapping::{AddressMapper, DramAddr};
use bulksim_core::spec::presets::{preset, PRESET_NAMES};
use bulksim_core::spec::{Command, Command::*, Spec};

struct Probe {
    spec: Spec,
    dev: Device,
}

impl Probe {
    fn new(name: &str, tweak: impl FnOnce(&mut Spec)) -> Probe {
        let mut spec = preset(name).unwrap();
        spec.organisation.ranks = 2;
        tweak(&mut spec);
        let dev = Device::new(&spec, 0);
        Probe { spec, dev }
    }

    fn addr(&self, rank: u32, bankgroup: u32, bank: u32, row: u32) -> DramAddr {
        let o = &self.spec.organisation;
        AddressMapper::new(o, "RoBaRaCoCh", false).unwrap().locate(
            0,
            rank,
            bankgroup % o.bankgroups,
            bank,
            row,
            0,
        )
    }

    /// A bank in another bank group (DDR3, with one group: another bank of the rank).
    fn other_group(&self, rank: u32, row: u32) -> DramAddr {
        if self.spec.organisation.bankgroups > 1 {
            self.addr(rank, 1, 0, row)
        } else {
            self.addr(rank, 0, 2, row)
        }
    }

    fn issue(&mut self, cmd: Command, a: DramAddr, at: u64) {
        assert!(self.dev.is_legal(cmd, &a), "{cmd:?} illegal");
        assert!(
            self.dev.earliest(cmd, &a) <= at,
            "{cmd:?} at {at} is too early (earliest {})",
            self.dev.earliest(cmd, &a)
        );
        self.dev.issue(cmd, &a, at);
    }

    /// The gate is tight: not ready at `expected - 1`, ready at `expected`.
    fn tight(&self, what: &str, cmd: Command, a: DramAddr, expected: u64) {
        let earliest = self.dev.earliest(cmd, &a);
        if expected > 0 {
            assert!(
                earliest > expected - 1,
                "{}: {what}: {cmd:?} ready one cycle early ({earliest} vs {expected})",
                self.spec.name
            );
        }
        assert!(
            earliest <= expected,
            "{}: {what}: {cmd:?} not ready at {expected} (earliest {earliest})",
            self.spec.name
        );
    }
}

/// PRE-to-ACT time of a precharge writing back `dirty` 64-B blocks: nRP, or nRP per dirty
/// block on a part whose precharge writes back only those (PCM_CMMP_400, 0 for a clean row).
fn rp(spec: &Spec, dirty: u64) -> u64 {
    let n_rp = spec.timing.n_rp as u64;
    if spec.precharge_per_dirty_block {
        n_rp * dirty
    } else {
        n_rp
    }
}

fn each_preset(f: impl Fn(&str)) {
    for name in PRESET_NAMES {
        f(name);
    }
}

/// Every preset but DDR5's, LPDDR5's and HBM3's, for the gates those standards change (DDR5's
/// two-cycle commands hold the channel for a second cycle, its writes in a bank group wait
/// tCCD_L_WR, its tFAW at 4800 is four tRRD_S; LPDDR5's and HBM3's ACT holds a command bus
/// two cycles, LPDDR5's PREA waits tRPab, its tFAW is four tRRD): their forms are in
/// tests/it/ddr5.rs and tests/it/lpddr5_hbm3.rs.
fn each_preset_but_ddr5(f: impl Fn(&str)) {
    each_preset(|name| {
        if !["DDR5", "LPDDR5", "HBM3"]
            .iter()
            .any(|s| name.starts_with(s))
        {
            f(name);
        }
    });
}

#[test]
fn t_rcd() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let a = p.addr(0, 0, 0, 5);
        p.issue(Act, a, 100);
        let t = &p.spec.timing;
        for cmd in [Rd, Wr, RdA, WrA] {
            p.tight("tRCD", cmd, a, 100 + t.n_rcd as u64);
        }
    });
}

#[test]
fn t_ras_and_t_rp() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let a = p.addr(0, 0, 0, 5);
        let t = p.spec.timing.clone();
        p.issue(Act, a, 100);
        p.tight("tRAS", Pre, a, 100 + t.n_ras as u64);
        p.tight("tRAS (PREA)", PreA, a, 100 + t.n_ras as u64);
        p.issue(Pre, a, 100 + t.n_ras as u64);
        // tRC = tRAS + tRP in every preset (tRC = tRAS where tRP is per dirty block), so tRP
        // binds here; the row was only read.
        p.tight("tRP", Act, a, 100 + t.n_ras as u64 + rp(&p.spec, 0));
    });
}

#[test]
fn t_rc() {
    each_preset(|n| {
        let mut p = Probe::new(n, |s| s.timing.n_rc += 7); // make tRC the binding gate
        let a = p.addr(0, 0, 0, 5);
        let t = p.spec.timing.clone();
        p.issue(Act, a, 0);
        p.issue(Pre, a, t.n_ras as u64);
        p.tight("tRC", Act, a, t.n_rc as u64);
    });
}

#[test]
fn t_rrd_s_and_t_rrd_l() {
    each_preset_but_ddr5(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let groups = p.spec.organisation.bankgroups;
        p.issue(Act, p.addr(0, 0, 0, 1), 50);
        if groups > 1 {
            p.tight("tRRD_S", Act, p.addr(0, 1, 0, 1), 50 + t.n_rrd_s as u64);
            p.tight("tRRD_L", Act, p.addr(0, 0, 1, 1), 50 + t.n_rrd_l as u64);
        } else {
            p.tight("tRRD", Act, p.addr(0, 0, 1, 1), 50 + t.n_rrd_s as u64);
        }
        // Another rank is not held back.
        p.tight("other rank", Act, p.addr(1, 0, 0, 1), 0);
    });
}

#[test]
fn t_faw() {
    each_preset_but_ddr5(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let o = p.spec.organisation.clone();
        // Four ACTs as fast as tRRD allows, to banks in different groups where there are groups.
        let mut at = 0u64;
        for i in 0..4u32 {
            let a = p.addr(0, i % o.bankgroups, i / o.bankgroups, 1);
            let a = if o.bankgroups == 1 {
                p.addr(0, 0, i, 1)
            } else {
                a
            };
            p.issue(Act, a, at);
            at += t.n_rrd_s as u64;
        }
        // A fifth bank, not one of the four (with 2 groups, bank 2 of group 0).
        let fifth = if o.bankgroups == 1 {
            p.addr(0, 0, 4, 1)
        } else {
            p.addr(0, 4 % o.bankgroups, 4 / o.bankgroups, 1)
        };
        if n == "PCM_CMMP_400" {
            // tFAW 30 ns (12 cycles) is shorter than four tRRD of 4 nCK: it never binds.
            assert!(t.n_faw as u64 <= 4 * t.n_rrd_s as u64);
            return;
        }
        assert!(
            t.n_faw as u64 > 3 * t.n_rrd_s as u64 + t.n_rrd_l as u64,
            "tFAW binds in {n}"
        );
        p.tight("tFAW", Act, fifth, t.n_faw as u64);
    });
}

#[test]
fn t_ccd_s_and_t_ccd_l() {
    each_preset_but_ddr5(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let (a, b, c) = (p.addr(0, 0, 0, 1), p.other_group(0, 1), p.addr(0, 0, 1, 1));
        p.issue(Act, a, 0);
        p.issue(Act, b, 20);
        p.issue(Act, c, 40);
        p.issue(Rd, a, 200);
        let other_group = b;
        p.tight(
            "tCCD_S (RD)",
            Rd,
            other_group,
            200 + t.n_ccd_s.max(t.n_bl) as u64,
        );
        p.tight("tCCD_L (RD)", Rd, c, 200 + t.n_ccd_l.max(t.n_bl) as u64);
        p.issue(Wr, a, 400);
        p.tight(
            "tCCD_S (WR)",
            Wr,
            other_group,
            400 + t.n_ccd_s.max(t.n_bl) as u64,
        );
        p.tight("tCCD_L (WR)", Wr, c, 400 + t.n_ccd_l.max(t.n_bl) as u64);
    });
}

#[test]
fn t_wtr_s_and_t_wtr_l_and_read_to_write() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let (a, b, c) = (p.addr(0, 0, 0, 1), p.other_group(0, 1), p.addr(0, 0, 1, 1));
        p.issue(Act, a, 0);
        p.issue(Act, b, 20);
        p.issue(Act, c, 40);
        p.issue(Wr, a, 200);
        let wr_end = 200 + (t.n_cwl + t.n_bl) as u64;
        p.tight("tWTR_S", Rd, b, wr_end + t.n_wtr_s as u64);
        p.tight("tWTR_L", Rd, c, wr_end + t.n_wtr_l as u64);
        p.tight("tWTR (same bank)", Rd, a, wr_end + t.n_wtr_l as u64);
        // RD to WR: read data clears the bus plus two turnaround cycles, minus write latency.
        p.issue(Rd, a, 400);
        p.tight(
            "RD to WR",
            Wr,
            b,
            400 + (t.n_cl + t.n_bl + 2 - t.n_cwl) as u64,
        );
    });
}

#[test]
fn t_rtp_and_t_wr() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let (a, b) = (p.addr(0, 0, 0, 1), p.addr(0, 0, 1, 1));
        p.issue(Act, a, 0);
        p.issue(Act, b, 20);
        p.issue(Rd, a, 100);
        p.tight("tRTP", Pre, a, 100 + t.n_rtp as u64);
        p.issue(Wr, b, 200);
        p.tight("tWR", Pre, b, 200 + (t.n_cwl + t.n_bl + t.n_wr) as u64);
        p.tight(
            "tWR (PREA)",
            PreA,
            b,
            200 + (t.n_cwl + t.n_bl + t.n_wr) as u64,
        );
    });
}

#[test]
fn auto_precharge_reaches_the_next_activate() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let (a, b) = (p.addr(0, 0, 0, 1), p.addr(0, 0, 1, 1));
        p.issue(Act, a, 0);
        p.issue(Act, b, 20);
        p.issue(RdA, a, 100);
        p.tight(
            "RDA: tRTP + tRP",
            Act,
            a,
            100 + t.n_rtp as u64 + rp(&p.spec, 0),
        );
        p.issue(WrA, b, 200);
        p.tight(
            "WRA: write recovery + tRP",
            Act,
            b,
            200 + (t.n_cwl + t.n_bl + t.n_wr) as u64 + rp(&p.spec, 1),
        );
    });
}

/// PREA after RDA or WRA: the auto-precharge's read-to-precharge (tRTP) or write recovery
/// (WL + BL/2 + WR) still holds, as for RD and WR (checked against Micron's DDR4 model, which
/// flags a PREA cut short by a bank in auto-precharge).
#[test]
fn precharge_all_waits_for_auto_precharge() {
    each_preset(|n| {
        for (access, recovery) in [(RdA, "tRTP"), (WrA, "write recovery")] {
            let mut p = Probe::new(n, |_| {});
            let t = p.spec.timing.clone();
            let (a, b) = (p.addr(0, 0, 0, 1), p.addr(0, 0, 1, 1));
            p.issue(Act, a, 0);
            p.issue(Act, b, 20);
            p.issue(access, a, 100);
            let expected = if access == RdA {
                100 + t.n_rtp as u64
            } else {
                100 + (t.n_cwl + t.n_bl + t.n_wr) as u64
            };
            assert!(expected > 20 + t.n_ras as u64, "{n}: tRAS does not bind");
            p.tight(
                &format!("{access:?} to PREA ({recovery})"),
                PreA,
                b,
                expected,
            );
        }
    });
}

#[test]
fn t_rfc_and_refresh_entry() {
    each_preset_but_ddr5(|n| {
        let mut p = Probe::new(n, |_| {});
        if !p.spec.has_refresh {
            return; // no REF to time (PCM); the config refuses to refresh it
        }
        let t = p.spec.timing.clone();
        let a = p.addr(0, 0, 0, 1);
        p.issue(Act, a, 0);
        p.tight("ACT to REF (tRC)", Ref, a, t.n_rc as u64);
        p.issue(PreA, a, t.n_ras as u64);
        p.tight(
            "PREA to REF (tRP)",
            Ref,
            a,
            (t.n_ras + t.n_rp).max(t.n_rc) as u64,
        );
        p.tight("PREA to ACT (tRP)", Act, a, (t.n_ras + t.n_rp) as u64);
        let at = 1000;
        p.issue(Ref, a, at);
        p.tight("tRFC (ACT)", Act, a, at + t.n_rfc as u64);
        p.tight("tRFC (REF)", Ref, a, at + t.n_rfc as u64);
        p.tight("other rank not refreshed", Act, p.addr(1, 0, 0, 1), 0);
    });
}

#[test]
fn t_rtrs_rank_to_rank() {
    each_preset_but_ddr5(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let (a, b) = (p.addr(0, 0, 0, 1), p.addr(1, 0, 0, 1));
        p.issue(Act, a, 0);
        p.issue(Act, b, 1);
        p.issue(Rd, a, 100);
        p.tight(
            "RD to RD other rank",
            Rd,
            b,
            100 + (t.n_bl + t.n_rtrs) as u64,
        );
        p.tight(
            "RD to WR other rank",
            Wr,
            b,
            100 + (t.n_cl + t.n_bl + t.n_rtrs - t.n_cwl) as u64,
        );
        p.issue(Wr, a, 300);
        p.tight(
            "WR to WR other rank",
            Wr,
            b,
            300 + (t.n_bl + t.n_rtrs) as u64,
        );
        // Only the data bus links ranks: the read's data may start nRTRS after the write's ends.
        let wr_rd = (t.n_cwl + t.n_bl + t.n_rtrs).saturating_sub(t.n_cl);
        p.tight("WR to RD other rank", Rd, b, 300 + wr_rd as u64);
    });
}

/// RowClone FPM (ACT src, ACT2 dst, PRE): ACT2 waits for the source row's restore (tRAS), PRE
/// for the destination's (tRAS), and the bank is ready again tRP later. On DDR3-1066 8-8-8
/// that is tRAS + tRAS + tRP = 90 ns, the paper's FPM copy latency.
#[test]
fn fpm_act2_is_tight_and_copies_in_two_tras_plus_trp() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let src = p.addr(0, 0, 0, 1024);
        let dst = p.addr(0, 0, 0, 1030); // same 512-row subarray
        p.issue(Act, src, 100);
        p.tight("ACT to ACT2 (tRAS)", Act2, dst, 100 + t.n_ras as u64);
        p.issue(Act2, dst, 100 + t.n_ras as u64);
        p.tight("ACT2 to PRE (tRAS)", Pre, dst, 100 + 2 * t.n_ras as u64);
        p.tight("ACT2 to RD (tRAS)", Rd, dst, 100 + 2 * t.n_ras as u64);
        p.issue(Pre, dst, 100 + 2 * t.n_ras as u64);
        let done = (2 * t.n_ras + t.n_rp) as u64;
        if p.spec.precharge_per_dirty_block {
            // ACT2 wrote nothing through the buffer: the clean row closes at once, and only
            // the activation limits (tRRD after the ACT2) remain, long past.
            assert!(p.dev.earliest(Act, &src) <= 100 + 2 * t.n_ras as u64, "{n}");
            return;
        }
        p.tight("bank free after FPM", Act, src, 100 + done);
        if n == "DDR3_2Gb_x8_1066" {
            assert_eq!(done as f64 * p.spec.tck_ns, 90.0);
        }
    });
}

#[test]
fn act2_needs_an_open_row_in_the_same_subarray() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let dst = p.addr(0, 0, 0, 1030);
        assert!(!p.dev.is_legal(Act2, &dst), "{n}: closed bank");
        p.issue(Act, p.addr(0, 0, 0, 1024), 0);
        assert!(p.dev.is_legal(Act2, &dst), "{n}: same subarray");
        assert!(
            !p.dev.is_legal(Act2, &p.addr(0, 0, 0, 1024)),
            "{n}: the open row itself"
        );
        assert!(
            !p.dev.is_legal(Act2, &p.addr(0, 0, 0, 1536)),
            "{n}: next subarray"
        );
        assert!(
            !p.dev.is_legal(Act2, &p.addr(0, 0, 1, 1030)),
            "{n}: another bank"
        );
    });
}

/// ACT2 raises a wordline: it counts towards tRRD and the four-activate window.
#[test]
fn act2_shares_the_activation_limits() {
    each_preset(|n| {
        // Where tFAW is only 4 x tRRD_L (Table II's DDR4-1600), widen it so it alone binds.
        let mut p = Probe::new(n, |s| {
            s.timing.n_faw = s.timing.n_faw.max(4 * s.timing.n_rrd_l + 1)
        });
        let t = p.spec.timing.clone();
        let o = p.spec.organisation.clone();
        let other = |p: &Probe, i: u32| {
            if o.bankgroups > 1 {
                p.addr(0, i % o.bankgroups, i / o.bankgroups, 1)
            } else {
                p.addr(0, 0, i, 1)
            }
        };
        p.issue(Act, p.addr(0, 0, 0, 1024), 0);
        let act2_at = t.n_ras as u64;
        p.issue(Act2, p.addr(0, 0, 0, 1030), act2_at);
        p.tight(
            "ACT2 to ACT (tRRD)",
            Act,
            other(&p, 1),
            act2_at + t.n_rrd_s as u64,
        );
        // ACT2, then three more ACTs as fast as tRRD_L allows: a fifth activation must wait
        // until tFAW after the ACT2, the oldest of the four in the window.
        let mut at = act2_at;
        for i in 1..=3 {
            at += t.n_rrd_l as u64;
            p.issue(Act, other(&p, i), at);
        }
        let expected = act2_at + t.n_faw as u64;
        assert!(
            expected > at + t.n_rrd_l as u64,
            "{n}: tFAW, not tRRD, binds here"
        );
        p.tight("tFAW counts ACT2", Act, other(&p, 4), expected);
    });
}

/// RowClone PSM, a 4 KB inter-bank copy: ACT both rows, 64 TRANSFERs (TRR on the source bank,
/// TRW on the destination the next cycle), pipelined one burst apart on the internal bus, then
/// precharge both banks. Every gate is tight. On DDR3-1066 the copy takes 290 cycles =
/// 543.75 ns (the paper's Table 3: 540 ns).
#[test]
fn psm_transfer_pipelines_a_4kb_copy() {
    each_preset(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let src_row = |p: &Probe, col: u32| DramAddr {
            column: col * 8,
            ..p.addr(0, 0, 0, 7)
        };
        let dst_row = |p: &Probe, col: u32| DramAddr {
            column: col * 8,
            ..p.other_group(0, 9)
        };
        p.issue(Act, src_row(&p, 0), 0);
        let act_dst = t.n_rrd_s as u64;
        p.issue(Act, dst_row(&p, 0), act_dst);
        p.tight("ACT to TRR (tRCD)", Trr, src_row(&p, 0), t.n_rcd as u64);
        p.tight(
            "ACT to TRW (tRCD)",
            Trw,
            dst_row(&p, 0),
            act_dst + t.n_rcd as u64,
        );
        // Start so that each TRW can follow its TRR in the next cycle.
        let mut trr = (t.n_rcd as u64).max(act_dst + t.n_rcd as u64 - 1);
        let spacing = t.n_ccd_l.max(t.n_bl) as u64; // same source bank: same bank group
        for line in 0..64u32 {
            if line > 0 {
                p.tight("TRR to TRR (tCCD)", Trr, src_row(&p, line), trr);
            }
            p.issue(Trr, src_row(&p, line), trr);
            p.tight("TRW after its TRR", Trw, dst_row(&p, line), trr + 1);
            p.issue(Trw, dst_row(&p, line), trr + 1);
            trr += spacing;
        }
        let last_trr = trr - spacing;
        let pre_src = (t.n_ras as u64).max(last_trr + t.n_rtp as u64);
        p.tight("TRR to PRE (tRTP)", Pre, src_row(&p, 0), pre_src);
        let pre_dst =
            (act_dst + t.n_ras as u64).max(last_trr + 1 + (t.n_cwl + t.n_bl + t.n_wr) as u64);
        p.tight("TRW to PRE (write recovery)", Pre, dst_row(&p, 0), pre_dst);
        p.issue(Pre, src_row(&p, 0), pre_src);
        p.issue(Pre, dst_row(&p, 0), pre_dst);
        // The destination row took 64 blocks through TRW; the source was only read.
        let done = (pre_dst + rp(&p.spec, 64)).max(pre_src + rp(&p.spec, 0));
        p.tight("destination bank free", Act, dst_row(&p, 0), done);
        if n == "DDR3_2Gb_x8_1066" {
            // tRCD 8, tRRD 4, tCCD 4, CWL 6, BL/2 4, WR 8, tRP 8: the first TRR at 11, the last
            // at 11 + 63 x 4 = 263, its TRW at 264, write recovery to 282, free at 290 =
            // 543.75 ns, 0.7% above the 540 ns of the paper's Table 3.
            assert_eq!(done, 290);
            assert_eq!(done as f64 * p.spec.tck_ns, 543.75);
        }
    });
}

/// TRANSFER never touches the channel: a read on another rank right after it is limited only by
/// its own row, and a channel write waits for the internal bus turnaround.
#[test]
fn transfer_leaves_the_channel_data_bus_free() {
    each_preset_but_ddr5(|n| {
        let mut p = Probe::new(n, |_| {});
        let t = p.spec.timing.clone();
        let (a, b, other_rank) = (p.addr(0, 0, 0, 1), p.other_group(0, 1), p.addr(1, 0, 0, 1));
        p.issue(Act, a, 0);
        p.issue(Act, b, 10);
        p.issue(Act, other_rank, 11);
        p.issue(Trr, a, 100);
        // Only its own ACT (at 11) limits it; without the TRANSFER it would be the same.
        p.tight("RD on another rank", Rd, other_rank, 11 + t.n_rcd as u64);
        p.tight(
            "WR after TRR (internal bus turnaround)",
            Wr,
            b,
            100 + (t.n_cl + t.n_bl + 2 - t.n_cwl) as u64,
        );
        p.issue(Trw, b, 101);
        p.tight(
            "RD after TRW (write-to-read turnaround)",
            Rd,
            a,
            101 + (t.n_cwl + t.n_bl + t.n_wtr_s) as u64,
        );
    });
}

/// PCM_CMMP_400 (CMMP's Table I, HMMSim's `pcm_long_latency`): a precharge writes back the
/// 64-B blocks written since the row's ACT, nRP (150 ns = 60 cycles of 2.5 ns) each, so the
/// next ACT of the bank waits tRP x dirty blocks after the PRE: 0, 1 x 60 and 3 x 60 cycles.
/// A block written twice is written back once; the count starts again at the next ACT.
#[test]
fn pcm_precharge_takes_trp_per_dirty_block() {
    let mut p = Probe::new("PCM_CMMP_400", |_| {});
    let t = p.spec.timing.clone();
    assert_eq!(t.n_rp, 60);
    let block = |p: &Probe, b: u32| DramAddr {
        column: b * 8,
        ..p.addr(0, 0, 0, 3)
    };
    let wr_end = (t.n_cwl + t.n_bl + t.n_wr) as u64;
    for (dirty, writes) in [(0u64, &[][..]), (1, &[5u32, 5][..]), (3, &[0, 63, 7][..])] {
        let start = p.dev.earliest(Act, &block(&p, 0)).max(1_000 * (dirty + 1));
        p.issue(Act, block(&p, 0), start);
        let mut at = start + t.n_rcd as u64;
        for &b in writes {
            at = at.max(p.dev.earliest(Wr, &block(&p, b)));
            p.issue(Wr, block(&p, b), at);
        }
        let pre = p
            .dev
            .earliest(Pre, &block(&p, 0))
            .max(start + t.n_ras as u64);
        if let Some(&last) = writes.last() {
            assert_eq!(pre, at + wr_end, "write recovery binds the PRE ({last})");
        }
        p.issue(Pre, block(&p, 0), pre);
        let expected = (pre + 60 * dirty).max(start + t.n_rc as u64);
        p.tight(
            &format!("{dirty} dirty blocks"),
            Act,
            block(&p, 0),
            expected,
        );
        if dirty > 0 {
            assert_eq!(expected, pre + 60 * dirty);
        }
    }
    // WRA: the written block is the row's one dirty block; RDA of a clean row: no tRP.
    let a = p.addr(0, 0, 1, 9);
    p.issue(Act, a, 10_000);
    p.issue(WrA, a, 10_000 + t.n_rcd as u64);
    p.tight("WRA", Act, a, 10_000 + t.n_rcd as u64 + wr_end + 60);
    let b = p.addr(0, 0, 2, 9);
    p.issue(Act, b, 20_000);
    p.issue(RdA, b, 20_000 + t.n_rcd as u64);
    let after_rda = 20_000 + (t.n_rcd + t.n_rtp) as u64;
    assert!(
        p.dev.earliest(Act, &b) <= after_rda,
        "a clean RDA adds no tRP"
    );
    // The write-backs are counted for energy: 1 + 3 + 1 blocks.
    let activity = p.dev.activity(30_000);
    assert_eq!(activity[0].dirty_blocks_written, 5);
}

/// The same commands on a DRAM part: tRP once per precharge, whatever was written.
#[test]
fn dram_precharge_takes_one_trp_however_many_blocks_were_written() {
    let mut p = Probe::new("DRAM_CMMP_1000", |_| {});
    let t = p.spec.timing.clone();
    let a = p.addr(0, 0, 0, 3);
    p.issue(Act, a, 100);
    for b in 0..3u32 {
        let w = DramAddr { column: b * 8, ..a };
        let at = p.dev.earliest(Wr, &w).max(100 + t.n_rcd as u64);
        p.issue(Wr, w, at);
    }
    let pre = p.dev.earliest(Pre, &a);
    p.issue(Pre, a, pre);
    p.tight("tRP", Act, a, pre + t.n_rp as u64);
    assert_eq!(p.dev.activity(1_000)[0].dirty_blocks_written, 0);
}

/// A PREA on PCM_CMMP_400 writes back every open bank's dirty blocks; the rank's next ACT
/// waits for the most dirty bank (bulksim's choice): banks with 2 and 1 dirty blocks, so any
/// bank's ACT waits 2 x tRP = 120 cycles after the PREA.
#[test]
fn pcm_precharge_all_waits_for_the_most_dirty_bank() {
    let mut p = Probe::new("PCM_CMMP_400", |_| {});
    let t = p.spec.timing.clone();
    let (a, b) = (p.addr(0, 0, 0, 1), p.addr(0, 0, 1, 1));
    p.issue(Act, a, 0);
    p.issue(Act, b, 10);
    let mut at = 100;
    for (bank, block) in [(a, 0u32), (a, 1), (b, 2)] {
        p.issue(
            Wr,
            DramAddr {
                column: block * 8,
                ..bank
            },
            at,
        );
        at += 10;
    }
    let prea = p.dev.earliest(PreA, &a);
    assert_eq!(prea, at - 10 + (t.n_cwl + t.n_bl + t.n_wr) as u64);
    p.issue(PreA, a, prea);
    p.tight("PREA, 2 dirty blocks", Act, b, prea + 120);
    p.tight("PREA, 2 dirty blocks", Act, a, prea + 120);
    assert_eq!(p.dev.activity(10_000)[0].dirty_blocks_written, 3);
}
