//! Resolution of `[dram]` into a complete `Spec`: the preset with the config's organisation,
//! row, column and energy overrides, temperature, timing overrides and the refresh timings its
//! granularity or pausing scheme uses, with every problem of them (capacity, timing sanity,
//! RowClone's needs, the address mapping and the rank-aware allocators' layout).

use super::keys::{check_key, did_you_mean};
use super::validate::serde_plain_name;
use super::{Config, Mechanism, RefreshScheme, Temperature};
use crate::error::{config_err, Result};
use crate::limits;
use crate::mapping::AddressMapper;
use crate::spec::presets::{preset, PRESET_NAMES};
use crate::spec::{validate_rules, Spec, Standard};

impl Config {
    /// The preset with this config's channels, ranks, subarray size and timing overrides.
    pub fn spec(&self) -> Result<Spec> {
        let (spec, problems) = self.resolve();
        match (spec, problems.into_iter().next()) {
            (_, Some(p)) => Err(config_err(p)),
            (Some(spec), None) => Ok(spec),
            (None, None) => unreachable!("a spec that did not resolve has a problem"),
        }
    }

    /// The spec from `[dram]` (`None` when the preset is unknown) and every problem of
    /// `[dram]`: organisation, capacity, timing.
    pub(super) fn resolve_spec(&self) -> (Option<Spec>, Vec<String>) {
        let mut problems = Vec::new();
        let d = &self.dram;
        let Some(mut spec) = preset(&d.preset) else {
            problems.push(format!(
                "dram.preset: unknown preset '{}'{}; valid: {}",
                d.preset,
                did_you_mean(&d.preset, PRESET_NAMES.iter().copied()),
                PRESET_NAMES.join(", ")
            ));
            return (None, problems);
        };
        self.apply_dram_overrides(&mut spec, &mut problems);
        let organisation_ok = organisation_problems(&spec, &mut problems);
        self.apply_timing_overrides(&mut spec, &mut problems);
        self.apply_refresh_timings(&mut spec);
        timing_problems(&spec, &mut problems);
        self.layout_problems(&spec, organisation_ok, &mut problems);
        (Some(spec), problems)
    }

    /// `[dram]`'s organisation (channels, ranks, rows, subarray size, columns), activation
    /// size and temperature applied to the preset's `spec`, each bad value a problem.
    fn apply_dram_overrides(&self, spec: &mut Spec, problems: &mut Vec<String>) {
        let d = &self.dram;
        let o = &mut spec.organisation;
        o.channels = d.channels;
        o.ranks = d.ranks;
        if d.rows != 0 {
            if !d.rows.is_power_of_two() || d.rows > o.rows {
                problems.push(format!(
                    "dram.rows: {} is not a power of two in 1..={} (0 keeps the preset's)",
                    d.rows, o.rows
                ));
            } else {
                o.rows = d.rows;
            }
        }
        if d.rows_per_subarray == 0 || d.rows_per_subarray > o.rows {
            problems.push(format!(
                "dram.rows_per_subarray: {} is out of range; expected 1..={} (rows per bank)",
                d.rows_per_subarray, o.rows
            ));
        } else {
            o.rows_per_subarray = d.rows_per_subarray;
        }
        if d.columns != 0 {
            if !d.columns.is_power_of_two() || d.columns < o.burst_length || d.columns > 8192 {
                problems.push(format!(
                    "dram.columns: {} is not a power of two in {}..=8192 (0 keeps the preset's {})",
                    d.columns, o.burst_length, o.columns
                ));
            } else {
                o.columns = d.columns;
            }
        }
        if d.activation_bits != 0 {
            let row_bits = o.row_bytes() * 8;
            match spec.bit_energy.as_mut() {
                None => problems.push(format!(
                    "dram.activation_bits: {} declares no pJ/bit energies to charge them (0 keeps the default)",
                    d.preset
                )),
                Some(_) if d.activation_bits > row_bits => problems.push(format!(
                    "dram.activation_bits: {} is out of range; expected 1..={row_bits} (the bits of a row; 0 keeps the whole row)",
                    d.activation_bits
                )),
                Some(e) => e.activation_bits = d.activation_bits,
            }
        }
        if d.temperature == Temperature::Extended {
            let t = &mut spec.timing;
            for refi in [&mut t.n_refi, &mut t.n_refi2, &mut t.n_refi4] {
                *refi /= 2;
            }
        }
    }

    /// `dram.timing`'s overrides applied to `spec`, each unknown or too large one a problem.
    fn apply_timing_overrides(&self, spec: &mut Spec, problems: &mut Vec<String>) {
        for (name, &value) in &self.dram.timing {
            if let Err(e) = check_key(&format!("dram.timing.{name}")) {
                problems.push(e.to_string());
            } else if value > limits::MAX_TIMING_CYCLES {
                problems.push(format!(
                    "dram.timing.{name}: {value} is out of range; expected 0..={} cycles (rule latencies add up to four parameters in 32 bits)",
                    limits::MAX_TIMING_CYCLES
                ));
            } else if name == "nCCD_L_WR" && spec.standard != Standard::Ddr5 {
                // Only DDR5's rule table reads it: set elsewhere it would change nothing.
                problems.push(format!(
                    "dram.timing.nCCD_L_WR: only DDR5 presets have this timing; {} is {} (its writes in one bank group are spaced by nCCD_L)",
                    spec.name,
                    spec.standard.name()
                ));
            } else if ["nRFCsb", "nREFSBRD"].contains(&name.as_str())
                && spec.standard != Standard::Ddr5
            {
                // Only DDR5's rule table has same-bank refresh.
                problems.push(format!(
                    "dram.timing.{name}: only DDR5 presets have same-bank refresh (REFsb); {} is {}",
                    spec.name,
                    spec.standard.name()
                ));
            } else if name == "nRPab" && spec.standard != Standard::Lpddr5 {
                // Only LPDDR5's rule table reads it: set elsewhere it would change nothing.
                problems.push(format!(
                    "dram.timing.nRPab: only LPDDR5 presets have this timing; {} is {} (its PREA closes every bank in nRP)",
                    spec.name,
                    spec.standard.name()
                ));
            } else {
                spec.timing.set(name, value);
            }
        }
    }

    /// The REF interval and duration the refresh settings use: a pausing scheme's fragments,
    /// or fine granularity's 2x or 4x REFs.
    fn apply_refresh_timings(&self, spec: &mut Spec) {
        let r = &self.controller.refresh;
        if spec.has_refresh && r.scheme == RefreshScheme::Pausing && r.granularity == 1 {
            // Pausing refreshes in fragments: REFs of a finer granularity.
            let t = &mut spec.timing;
            match r.pause_granularity {
                8 => {
                    t.n_refi /= 8;
                    t.n_rfc = t.n_rfc.div_ceil(8);
                }
                2 if t.n_rfc2 > 0 => {
                    t.n_refi = if t.n_refi2 > 0 {
                        t.n_refi2
                    } else {
                        t.n_refi / 2
                    };
                    t.n_rfc = t.n_rfc2;
                }
                4 if t.n_rfc4 > 0 => {
                    t.n_refi = if t.n_refi4 > 0 {
                        t.n_refi4
                    } else {
                        t.n_refi / 4
                    };
                    t.n_rfc = t.n_rfc4;
                }
                _ => {}
            }
        }
        if spec.has_refresh && (r.granularity == 2 || r.granularity == 4) {
            // Fine granularity refresh: the REFs in use are the 2x or 4x ones.
            let t = &mut spec.timing;
            let g = r.granularity;
            let (refi_k, rfc_k) = if g == 2 {
                (t.n_refi2, t.n_rfc2)
            } else {
                (t.n_refi4, t.n_rfc4)
            };
            t.n_refi = if refi_k > 0 { refi_k } else { t.n_refi / g };
            if !r.fgr_overhead {
                t.n_rfc = t.n_rfc.div_ceil(g);
            } else if rfc_k > 0 {
                t.n_rfc = rfc_k;
            }
        }
    }

    /// RowClone's needs of the organisation, then (when the organisation is valid) the
    /// address mapping and the rank-aware allocators' needs of it.
    fn layout_problems(&self, spec: &Spec, organisation_ok: bool, problems: &mut Vec<String>) {
        let o = &spec.organisation;
        if self.bulk.mechanism == Mechanism::Rowclone
            && (o.rows_per_subarray < 2
                || o.banks_per_rank() < 2
                || o.rows % o.rows_per_subarray != 0)
        {
            problems.push(format!(
                "bulk.mechanism: rowclone needs at least 2 rows per subarray (a zero row is reserved in each), rows per bank ({}) a multiple of dram.rows_per_subarray ({}), and 2 banks per rank",
                o.rows, o.rows_per_subarray
            ));
        }
        if organisation_ok {
            let c = &self.controller;
            match AddressMapper::new(&spec.organisation, &c.address_mapping, c.xor_bank) {
                Err(e) => problems.push(e.to_string()),
                Ok(m) => problems.extend(self.rank_allocation_problems(&m, &spec.organisation)),
            }
        }
    }

    /// The problems of this device's mapping and rank size for the rank-aware page
    /// allocators: a page must lie in one (channel, rank), and `dram.rank_capacity_mb` must
    /// fit in a rank.
    fn rank_allocation_problems(
        &self,
        mapper: &AddressMapper,
        o: &crate::spec::Organisation,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if self.os.allocator.is_rank_aware() {
            // Decoding is a shift and mask per field: testing each address bit of the page
            // above the line offset alone tests the layout.
            let splitting = (mapper.line_bytes().trailing_zeros()..12).find(|&b| {
                let a = mapper.decode(1u64 << b);
                a.channel != 0 || a.rank != 0
            });
            if let Some(bit) = splitting {
                problems.push(format!(
                    "os.allocator: {} needs every 4 KB page in one channel and rank, but controller.address_mapping '{}' takes the channel or rank from address bit {bit} (inside the page); use non_interleaved, bank_interleaved or bank_xor, or a field order with Ch and Ra above the page's 12 low bits",
                    serde_plain_name(self.os.allocator),
                    self.controller.address_mapping
                ));
            }
        }
        let rank_mb = (mapper.capacity() / (o.channels as u64 * o.ranks as u64)) >> 20;
        if self.dram.rank_capacity_mb > rank_mb {
            problems.push(format!(
                "dram.rank_capacity_mb: {} is out of range; expected 0 (the whole rank) to {rank_mb} MiB (a rank of {})",
                self.dram.rank_capacity_mb, self.dram.preset
            ));
        }
        problems
    }

    /// The part `[dram]` describes, with its channels, ranks and timing overrides, and
    /// without the checks of the rest of the config (`spec show` shows a part, e.g. a PCM
    /// part, whatever the controller's refresh policy).
    pub fn dram_spec(&self) -> Result<Spec> {
        match self.resolve_spec() {
            (_, problems) if !problems.is_empty() => Err(config_err(problems[0].clone())),
            (Some(spec), _) => Ok(spec),
            (None, _) => unreachable!("a spec that did not resolve has a problem"),
        }
    }
}

/// The problems of the organisation's channels and ranks (powers of two, a capacity the
/// model can address); whether the organisation is valid, counting the problems before them.
fn organisation_problems(spec: &Spec, problems: &mut Vec<String>) -> bool {
    let o = &spec.organisation;
    let mut organisation_ok = problems.is_empty();
    for (key, v) in [("dram.channels", o.channels), ("dram.ranks", o.ranks)] {
        if !v.is_power_of_two() {
            organisation_ok = false;
            problems.push(format!(
                "{key}: {v} is not a power of two (address mapping needs one); expected 1, 2, 4, ..."
            ));
        }
    }
    if organisation_ok {
        if let Err(e) = capacity_problem(&spec.organisation) {
            problems.push(e);
        }
    }
    organisation_ok
}

/// The problems of the resolved timing: parameters that must be at least 1, a REF interval
/// no longer than a REF, and the rule table.
fn timing_problems(spec: &Spec, problems: &mut Vec<String>) {
    let t = &spec.timing;
    // A part without REF has no refresh timings to check (they are 0 and unused).
    let refresh_interval = spec.has_refresh.then_some(("nREFI", t.n_refi));
    for (name, v) in [
        ("nBL", t.n_bl),
        ("nCL", t.n_cl),
        ("nRCD", t.n_rcd),
        ("nRP", t.n_rp),
    ]
    .into_iter()
    .chain(refresh_interval)
    {
        if v == 0 {
            problems.push(format!("dram.timing.{name}: must be at least 1 cycle"));
        }
    }
    if spec.has_refresh && t.n_refi <= t.n_rfc {
        problems.push(format!(
            "dram.timing.nREFI: {} must exceed nRFC ({}) or the rank never leaves refresh",
            t.n_refi, t.n_rfc
        ));
    }
    if let Err(e) = validate_rules(&spec.rules()) {
        problems.push(format!("rule table of {}: {e}", spec.name));
    }
}

/// The error when `o`'s memory is more than the model can address, naming the key to change
/// and the largest value it may take with the others as configured.
fn capacity_problem(o: &crate::spec::Organisation) -> std::result::Result<(), String> {
    let rank_bytes = o.row_bytes() * o.banks_per_rank() as u64 * o.rows as u64;
    let max_ranks_total = limits::MAX_MEMORY_BYTES / rank_bytes;
    let (channels, ranks) = (o.channels as u64, o.ranks as u64);
    if channels * ranks <= max_ranks_total {
        return Ok(());
    }
    let floor_pow2 = |n: u64| if n == 0 { 0 } else { 1u64 << n.ilog2() };
    let limit = limits::human_bytes(limits::MAX_MEMORY_BYTES);
    let rank_size = limits::human_bytes(rank_bytes);
    let why = "2^32 frames of 4 KiB: the OS's frame numbers are 32-bit";
    if ranks > 1 && channels <= max_ranks_total {
        Err(format!(
            "dram.ranks: {ranks} is out of range; with {channels} channel(s) of {rank_size} ranks at most {} fit the {limit} the model can address ({why})",
            floor_pow2(max_ranks_total / channels)
        ))
    } else {
        Err(format!(
            "dram.channels: {channels} is out of range; with {ranks} rank(s) of {rank_size} per channel at most {} fit the {limit} the model can address ({why})",
            floor_pow2(max_ranks_total / ranks)
        ))
    }
}
