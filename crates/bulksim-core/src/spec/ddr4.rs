//! DDR4 (JESD79-4): the rule table. DDR4 keeps DDR3's rank- and bank-level constraints, with
//! the rank-wide gaps now the short (other bank group, `_S`) forms, and adds the long forms
//! (`_L`) that hold within one bank group. Latencies assume AL = 0 and 1-tCK preambles.

use super::{ddr3, Rule, Timing};

pub fn rules(t: &Timing) -> Vec<Rule> {
    let wr_end = t.n_cwl + t.n_bl;
    let mut rules = ddr3::rules(t);
    rules.extend([
        rule!(BankGroup, [Rd, RdA] -> [Rd, RdA], t.n_ccd_l),
        rule!(BankGroup, [Wr, WrA] -> [Wr, WrA], t.n_ccd_l),
        rule!(BankGroup, [Wr, WrA] -> [Rd, RdA], wr_end + t.n_wtr_l),
        rule!(BankGroup, [Act, Act2] -> [Act, Act2], t.n_rrd_l),
    ]);
    rules
}
