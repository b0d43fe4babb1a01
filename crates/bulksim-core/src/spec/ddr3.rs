//! DDR3 (JESD79-3): the rule table. DDR3 has no bank groups, so every column, activate and
//! write-to-read gap is rank-wide (the `_S` parameters carry tCCD, tRRD and tWTR); presets use
//! one bank group per rank. Latencies follow the JEDEC definitions with AL = 0. The channel
//! rules keep one burst on the data bus at a time; sibling rules hand the bus between ranks.

use super::{sub0, Rule, Timing};

pub fn rules(t: &Timing) -> Vec<Rule> {
    // RD to WR on one rank: read data must leave the bus, plus two cycles of bus turnaround.
    let rd_to_wr = sub0(t.n_cl + t.n_bl + 2, t.n_cwl);
    let wr_end = t.n_cwl + t.n_bl; // last write data beat, from the WR command
    vec![
        rule!(Channel, [Rd, RdA] -> [Rd, RdA], t.n_bl),
        rule!(Channel, [Wr, WrA] -> [Wr, WrA], t.n_bl),
        rule!(Rank, [Rd, RdA] -> [Rd, RdA], t.n_ccd_s),
        rule!(Rank, [Wr, WrA] -> [Wr, WrA], t.n_ccd_s),
        rule!(Rank, [Rd, RdA] -> [Wr, WrA], rd_to_wr),
        rule!(Rank, [Wr, WrA] -> [Rd, RdA], wr_end + t.n_wtr_s),
        // ACT2 (RowClone) raises a wordline like ACT and shares its activation limits.
        rule!(Rank, [Act, Act2] -> [Act, Act2], t.n_rrd_s),
        rule!(Rank, [Act, Act2] -> [Act, Act2], t.n_faw, window 4),
        rule!(Rank, [Act, Act2] -> [PreA], t.n_ras),
        // A PREA may not cut short the read-to-precharge or write recovery of any bank,
        // including one closing itself by auto-precharge (RDA, WRA).
        rule!(Rank, [Rd, RdA] -> [PreA], t.n_rtp),
        rule!(Rank, [Wr, WrA] -> [PreA], wr_end + t.n_wr),
        rule!(Rank, [PreA] -> [Act], t.n_rp),
        rule!(Rank, [Act, Act2] -> [Ref], t.n_rc),
        rule!(Rank, [Pre, PreA] -> [Ref], t.n_rp),
        rule!(Rank, [RdA] -> [Ref], t.n_rtp + t.n_rp),
        rule!(Rank, [WrA] -> [Ref], wr_end + t.n_wr + t.n_rp),
        rule!(Rank, [Ref] -> [Act, Ref, PreA], t.n_rfc),
        rule!(Rank, [Rd, RdA] -> [Rd, RdA], t.n_bl + t.n_rtrs, sibling),
        rule!(Rank, [Wr, WrA] -> [Wr, WrA], t.n_bl + t.n_rtrs, sibling),
        rule!(Rank, [Rd, RdA] -> [Wr, WrA], sub0(t.n_cl + t.n_bl + t.n_rtrs, t.n_cwl), sibling),
        rule!(Rank, [Wr, WrA] -> [Rd, RdA], sub0(t.n_cwl + t.n_bl + t.n_rtrs, t.n_cl), sibling),
        rule!(Bank, [Act] -> [Act], t.n_rc),
        rule!(Bank, [Act] -> [Rd, RdA, Wr, WrA], t.n_rcd),
        rule!(Bank, [Act] -> [Pre], t.n_ras),
        rule!(Bank, [Pre] -> [Act], t.n_rp),
        rule!(Bank, [Rd] -> [Pre], t.n_rtp),
        rule!(Bank, [Wr] -> [Pre], wr_end + t.n_wr),
        rule!(Bank, [RdA] -> [Act], t.n_rtp + t.n_rp),
        rule!(Bank, [WrA] -> [Act], wr_end + t.n_wr + t.n_rp),
    ]
}
