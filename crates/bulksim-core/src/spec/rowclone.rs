//! RowClone's in-DRAM commands as rules added to every standard (Seshadri et al., MICRO 2013,
//! section 3). Fast Parallel Mode is ACT src, ACT2 dst, PRE: ACT2 may follow the ACT once the
//! source row is fully restored (tRAS), and the bank may be precharged, or the destination row
//! read or written, once the destination row is fully restored (another tRAS). That ACT2 needs
//! an open bank whose open row shares the destination's subarray is bank state, checked by the
//! device like every command's legality. The activation limits ACT2 shares with ACT (tRRD,
//! tFAW, REF after tRC) are in the standards' own tables.
//!
//! Pipelined Serial Mode moves one line per TRANSFER over the chip's internal bus between two
//! banks of a rank. TRANSFER takes two command cycles (section 3.2), modelled as two commands
//! each addressing one bank: TRR (source bank and column) and, the next cycle, TRW
//! (destination bank and column). The paper gives TRANSFER the latency of READ/WRITE, so TRR
//! follows a read's rules and TRW a write's, on the internal bus only: spaced from other
//! reads (writes) by tCCD, a channel write's turnaround before a TRR, a write's before a read
//! after a TRW, tRTP and write recovery before precharge; but no channel data-bus rules, and
//! no turnaround between a TRR and its TRW or between consecutive TRANSFERs, which pipeline
//! every tCCD.

use super::{Rule, Timing};

pub fn rules(t: &Timing) -> Vec<Rule> {
    let wr_end = t.n_cwl + t.n_bl;
    let rd_to_wr = super::sub0(t.n_cl + t.n_bl + 2, t.n_cwl);
    vec![
        // Fast Parallel Mode.
        rule!(Bank, [Act] -> [Act2], t.n_ras),
        rule!(Bank, [Act2] -> [Act2, Pre, Rd, RdA, Wr, WrA, Trr, Trw], t.n_ras),
        // TRANSFER: row access and precharge like RD (TRR) and WR (TRW).
        rule!(Bank, [Act] -> [Trr, Trw], t.n_rcd),
        rule!(Bank, [Trr] -> [Pre], t.n_rtp),
        rule!(Bank, [Trw] -> [Pre], wr_end + t.n_wr),
        rule!(Rank, [Trr] -> [PreA], t.n_rtp),
        rule!(Rank, [Trw] -> [PreA], wr_end + t.n_wr),
        // The internal bus: reads and TRRs, writes and TRWs, one burst apart.
        rule!(Rank, [Rd, RdA, Trr] -> [Trr], t.n_ccd_s),
        rule!(Rank, [Trr] -> [Rd, RdA], t.n_ccd_s),
        rule!(Rank, [Wr, WrA, Trw] -> [Trw], t.n_ccd_s),
        rule!(Rank, [Trw] -> [Wr, WrA], t.n_ccd_s),
        rule!(BankGroup, [Rd, RdA, Trr] -> [Trr], t.n_ccd_l),
        rule!(BankGroup, [Trr] -> [Rd, RdA], t.n_ccd_l),
        rule!(BankGroup, [Wr, WrA, Trw] -> [Trw], t.n_ccd_l),
        rule!(BankGroup, [Trw] -> [Wr, WrA], t.n_ccd_l),
        // Turnarounds against channel writes, and after a TRANSFER's write before a read.
        rule!(Rank, [Trr] -> [Wr, WrA], rd_to_wr),
        rule!(Rank, [Wr, WrA] -> [Trr], wr_end + t.n_wtr_s),
        rule!(Rank, [Trw] -> [Rd, RdA], wr_end + t.n_wtr_s),
        rule!(BankGroup, [Wr, WrA] -> [Trr], wr_end + t.n_wtr_l),
        rule!(BankGroup, [Trw] -> [Rd, RdA], wr_end + t.n_wtr_l),
    ]
}
