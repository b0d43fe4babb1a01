//! RowClone's in-DRAM commands as rules added to every standard (Seshadri et al., MICRO 2013,
//! section 3). Fast Parallel Mode is ACT src, ACT2 dst, PRE: ACT2 may follow the ACT once the
//! source row is fully restored (tRAS), and the bank may be precharged, or the destination row
//! read or written, once the destination row is fully restored (another tRAS). That ACT2 needs
//! an open bank whose open row shares the destination's subarray is bank state, checked by the
//! device like every command's legality. The activation limits ACT2 shares with ACT (tRRD,
//! tFAW, REF after tRC) are in the standards' own tables.

use super::{Rule, Timing};

pub fn rules(t: &Timing) -> Vec<Rule> {
    vec![
        rule!(Bank, [Act] -> [Act2], t.n_ras),
        rule!(Bank, [Act2] -> [Act2, Pre, Rd, RdA, Wr, WrA], t.n_ras),
    ]
}
