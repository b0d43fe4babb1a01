//! Standards as data. A DRAM standard is its organisation, its timing parameters (in memory
//! clock cycles) and a rule table `{level, preceding, following, latency, window, sibling}`;
//! the device model compiles the table into dense ready-at arrays and never branches on the
//! standard. This module owns the shared vocabulary (levels, commands, timing parameters, rules),
//! the preset registry and the structural validation of rule tables.

#[macro_use]
mod rule_macro;
pub mod cmmp;
pub mod ddr3;
pub mod ddr4;
pub mod ddr5;
pub mod hbm3;
pub mod lpddr5;
pub mod presets;
pub mod rank_assignment;
pub mod rowclone;

use serde::Serialize;

/// The levels of the DRAM hierarchy, outermost first. Levels up to `Bank` carry timing state;
/// `Subarray`, `Row` and `Column` are address levels (a subarray is a group of rows sharing a
/// row buffer, needed by in-DRAM copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Level {
    Channel = 0,
    Rank = 1,
    BankGroup = 2,
    Bank = 3,
    Subarray = 4,
    Row = 5,
    Column = 6,
}

/// Number of levels that hold ready-at tables (channel, rank, bank group, bank).
pub const TIMING_LEVELS: usize = 4;

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Channel => "channel",
            Level::Rank => "rank",
            Level::BankGroup => "bankgroup",
            Level::Bank => "bank",
            Level::Subarray => "subarray",
            Level::Row => "row",
            Level::Column => "column",
        }
    }
}

/// DRAM commands. The discriminant indexes the ready-at arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[repr(u8)]
pub enum Command {
    /// Activate a row (open it into the row buffer).
    Act = 0,
    /// Precharge one bank.
    Pre = 1,
    /// Precharge all banks of a rank.
    PreA = 2,
    /// Read one burst from the open row.
    Rd = 3,
    /// Write one burst to the open row.
    Wr = 4,
    /// Read with auto-precharge.
    RdA = 5,
    /// Write with auto-precharge.
    WrA = 6,
    /// All-bank refresh of a rank.
    Ref = 7,
    /// RowClone's second ACTIVATE (Fast Parallel Mode): to a bank whose open row is in the same
    /// subarray, it connects another row to the row buffer, copying the open row into it.
    Act2 = 8,
    /// RowClone's TRANSFER, first command cycle: one line from the source bank's open row onto
    /// the chip's internal bus (no channel data).
    Trr = 9,
    /// TRANSFER, second command cycle: that line into the destination bank's open row.
    Trw = 10,
    /// DDR5 same-bank refresh: refreshes bank `bank` of every bank group of a rank (its bank
    /// set, `Command::addresses_bank_set`), while the rank's other banks keep serving.
    RefSb = 11,
}

pub const NUM_COMMANDS: usize = 12;

impl Command {
    pub const ALL: [Command; NUM_COMMANDS] = [
        Command::Act,
        Command::Pre,
        Command::PreA,
        Command::Rd,
        Command::Wr,
        Command::RdA,
        Command::WrA,
        Command::Ref,
        Command::Act2,
        Command::Trr,
        Command::Trw,
        Command::RefSb,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Command::Act => "ACT",
            Command::Pre => "PRE",
            Command::PreA => "PREA",
            Command::Rd => "RD",
            Command::Wr => "WR",
            Command::RdA => "RDA",
            Command::WrA => "WRA",
            Command::Ref => "REF",
            Command::Act2 => "ACT2",
            Command::Trr => "TRR",
            Command::Trw => "TRW",
            Command::RefSb => "REFsb",
        }
    }

    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The level a command addresses: the node whose state it changes.
    pub fn scope(self) -> Level {
        match self {
            Command::Act | Command::Act2 => Level::Row,
            Command::Pre | Command::RefSb => Level::Bank,
            Command::PreA | Command::Ref => Level::Rank,
            Command::Rd
            | Command::Wr
            | Command::RdA
            | Command::WrA
            | Command::Trr
            | Command::Trw => Level::Column,
        }
    }

    /// Whether the command addresses a bank set rather than one bank: the bank of its address
    /// in every bank group of the rank (DDR5's REFsb). The device applies its bank-level
    /// rules to each bank of the set, and it needs all of them closed. A per-bank refresh
    /// (REFpb) is the case of a set of one bank.
    pub fn addresses_bank_set(self) -> bool {
        self == Command::RefSb
    }

    pub fn is_column(self) -> bool {
        matches!(
            self,
            Command::Rd | Command::Wr | Command::RdA | Command::WrA
        )
    }

    pub fn is_read(self) -> bool {
        matches!(self, Command::Rd | Command::RdA)
    }

    pub fn is_write(self) -> bool {
        matches!(self, Command::Wr | Command::WrA)
    }

    /// Whether the command closes its bank (auto-precharge) after the access.
    pub fn closes_bank(self) -> bool {
        matches!(self, Command::RdA | Command::WrA)
    }
}

/// Declares the timing parameter struct together with its name/description table, so the
/// names used in configs, in `spec show` and in the docs can never drift from the fields.
macro_rules! timing_params {
    ($($field:ident => $name:literal, $desc:literal;)*) => {
        /// Timing parameters of one part, all in memory clock cycles (tCK).
        #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
        pub struct Timing {
            $(#[doc = $desc] #[serde(rename = $name)] pub $field: u32,)*
        }

        impl Timing {
            /// (name, description) of every parameter, in declaration order.
            pub const PARAMS: &'static [(&'static str, &'static str)] = &[$(($name, $desc)),*];


            /// Sets a parameter by name; returns false for an unknown name.
            pub fn set(&mut self, name: &str, value: u32) -> bool {
                match name {
                    $($name => { self.$field = value; true })*
                    _ => false,
                }
            }
        }
    };
}

timing_params! {
    n_bl => "nBL", "data burst duration on the bus (burst length / 2 for DDR3/DDR4/DDR5; on LPDDR5 and HBM3 the span of a line's two halves and the gap between them, docs/standards.md)";
    n_cl => "nCL", "CAS latency: RD to first data";
    n_cwl => "nCWL", "CAS write latency: WR to first data";
    n_rcd => "nRCD", "ACT to RD/WR on the same bank";
    n_rp => "nRP", "PRE to ACT on the same bank";
    n_rpab => "nRPab", "PREA to ACT or REF of the rank: all-bank precharge time (LPDDR5's tRPab only: other presets give 0 and precharge all banks in nRP, and setting it on them is an error)";
    n_ras => "nRAS", "ACT to PRE on the same bank (row restore)";
    n_rc => "nRC", "ACT to ACT on the same bank";
    n_rtp => "nRTP", "RD to PRE on the same bank";
    n_wr => "nWR", "write recovery: end of write data to PRE";
    n_ccd_s => "nCCD_S", "column to column, different bank group (DDR3: tCCD)";
    n_ccd_l => "nCCD_L", "column to column, same bank group";
    n_ccd_l_wr => "nCCD_L_WR", "write to write, same bank group (DDR5 only: other presets give 0, and setting it on them is an error)";
    n_rrd_s => "nRRD_S", "ACT to ACT, different bank group (DDR3: tRRD)";
    n_rrd_l => "nRRD_L", "ACT to ACT, same bank group";
    n_wtr_s => "nWTR_S", "end of write data to RD, different bank group (DDR3: tWTR)";
    n_wtr_l => "nWTR_L", "end of write data to RD, same bank group";
    n_faw => "nFAW", "four-activate window per rank";
    n_rtrs => "nRTRS", "rank-to-rank data bus switching gap";
    n_rfc => "nRFC", "REF to next ACT/REF of the rank (the refresh in use: 1x granularity)";
    n_refi => "nREFI", "average interval between all-bank refreshes of a rank (the refresh in use: 1x granularity)";
    n_rfc2 => "nRFC2", "REF to next ACT/REF at fine granularity 2x (DDR4 FGR; 0 = not given by the preset)";
    n_refi2 => "nREFI2", "average REF interval at fine granularity 2x (0 = not given by the preset)";
    n_rfc4 => "nRFC4", "REF to next ACT/REF at fine granularity 4x (DDR4 FGR; 0 = not given by the preset)";
    n_refi4 => "nREFI4", "average REF interval at fine granularity 4x (0 = not given by the preset)";
    n_rfcsb => "nRFCsb", "same-bank refresh: REFsb to the next ACT or REFsb of its banks, and to the next REF (DDR5 tRFCsb; 0 = not given by the preset)";
    n_refsbrd => "nREFSBRD", "same-bank refresh: REFsb to an ACT or REFsb of another bank (DDR5 tREFSBRD; 0 = not given by the preset)";
}

/// One timing rule: after a `preceding` command on a node of `level`, a `following` command on
/// the same node (or, with `sibling`, on another node of the same parent) waits `latency`
/// cycles. With `window = n > 0`, at most `n` preceding commands may issue in any `latency`
/// cycles (tFAW is `window = 4`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub level: Level,
    pub preceding: &'static [Command],
    pub following: &'static [Command],
    pub latency: u32,
    pub window: u32,
    pub sibling: bool,
}

/// Which standard a spec follows (selects its rule table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Standard {
    #[serde(rename = "DDR3")]
    Ddr3,
    #[serde(rename = "DDR4")]
    Ddr4,
    #[serde(rename = "DDR5")]
    Ddr5,
    #[serde(rename = "LPDDR5")]
    Lpddr5,
    #[serde(rename = "HBM3")]
    Hbm3,
}

impl Standard {
    /// Its JEDEC name, as the presets and the stats spell it.
    pub fn name(self) -> &'static str {
        match self {
            Standard::Ddr3 => "DDR3",
            Standard::Ddr4 => "DDR4",
            Standard::Ddr5 => "DDR5",
            Standard::Lpddr5 => "LPDDR5",
            Standard::Hbm3 => "HBM3",
        }
    }

    /// The standard's rules plus RowClone's in-DRAM commands.
    pub fn rules(self, t: &Timing) -> Vec<Rule> {
        let mut rules = match self {
            Standard::Ddr3 => ddr3::rules(t),
            Standard::Ddr4 => ddr4::rules(t),
            Standard::Ddr5 => ddr5::rules(t),
            Standard::Lpddr5 => lpddr5::rules(t),
            Standard::Hbm3 => hbm3::rules(t),
        };
        rules.extend(rowclone::rules(t));
        rules
    }
}

/// Organisation of one channel's devices: counts per level and the chip geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Organisation {
    /// Chip density in Mbit.
    pub density_mbit: u32,
    /// Data pins per chip (x4, x8, x16).
    pub dq: u32,
    /// Width of the channel data bus in bits (64 for DDR3/DDR4; 32 for DDR5, whose channel
    /// here is one of a DIMM's two independent sub-channels).
    pub bus_width_bits: u32,
    /// Burst length in beats (8 for DDR3/DDR4, 16 for DDR5, 32 for LPDDR5; 16 for HBM3,
    /// whose 64-byte line is two BL8 bursts: docs/standards.md).
    pub burst_length: u32,
    /// Data beats per command clock (CK) cycle: 2 where data runs at double rate on CK (DDR3,
    /// DDR4, DDR5); 8 on LPDDR5 at WCK:CK 4:1 (double rate on a WCK four times CK); 4 on HBM3,
    /// whose CK runs at a quarter of the pin data rate. A burst lasts burst_length / this many
    /// cycles (nBL).
    pub data_beats_per_clock: u32,
    pub channels: u32,
    pub ranks: u32,
    pub bankgroups: u32,
    pub banks_per_group: u32,
    pub rows: u32,
    /// Columns per row per chip (each column is `dq` bits).
    pub columns: u32,
    pub rows_per_subarray: u32,
}

impl Organisation {
    pub fn chips_per_rank(&self) -> u32 {
        self.bus_width_bits / self.dq
    }
    /// Bytes moved by one RD/WR burst (a cache line for a 64-bit bus with BL8).
    pub fn line_bytes(&self) -> u64 {
        (self.bus_width_bits / 8 * self.burst_length) as u64
    }
    /// Bytes in one row across the rank (row buffer size seen by the controller).
    pub fn row_bytes(&self) -> u64 {
        self.columns as u64 * (self.bus_width_bits / 8) as u64
    }
    pub fn banks_per_rank(&self) -> u32 {
        self.bankgroups * self.banks_per_group
    }
    pub fn subarrays_per_bank(&self) -> u32 {
        self.rows.div_ceil(self.rows_per_subarray)
    }
    /// Bytes of one channel.
    pub fn channel_bytes(&self) -> u64 {
        self.ranks as u64 * self.banks_per_rank() as u64 * self.rows as u64 * self.row_bytes()
    }
    pub fn total_bytes(&self) -> u64 {
        self.channel_bytes() * self.channels as u64
    }
}

/// Supply voltages and datasheet currents of one chip, and I/O power per data pin. Currents
/// in mA, voltages in V, I/O powers in mW per DQ while it carries a burst. VPP currents are 0
/// for parts without a VPP rail (DDR3).
/// How a `PowerSpec::source` starts when the currents are not the part's own but borrowed from
/// another part (no data sheet values entered): runs and `bulksim spec show` then say so.
pub const STAND_IN_SOURCE: &str = "stand-in";

/// Whether currents described by `source` (a `PowerSpec::source`, as the stats' `energy.power_source`
/// report it) are a stand-in for the part's own.
pub fn is_stand_in_power(source: &str) -> bool {
    source.starts_with(STAND_IN_SOURCE)
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerSpec {
    pub vdd: f64,
    /// One-bank ACTIVATE-PRECHARGE current.
    pub idd0: f64,
    /// Precharge standby current.
    pub idd2n: f64,
    /// Active standby current.
    pub idd3n: f64,
    /// Burst read current.
    pub idd4r: f64,
    /// Burst write current.
    pub idd4w: f64,
    /// Burst refresh current.
    pub idd5b: f64,
    pub vpp: f64,
    pub ipp0: f64,
    pub ipp3n: f64,
    pub ipp5b: f64,
    /// Output driver power of a read, per DQ (mW).
    pub read_io_mw: f64,
    /// Termination power of a read at the receiving end, per DQ (mW).
    pub read_termination_mw: f64,
    /// On-die termination power of a write, per DQ (mW).
    pub write_odt_mw: f64,
    /// Termination power of a write, per DQ (mW).
    pub write_termination_mw: f64,
    /// Where the numbers come from.
    pub source: String,
}

/// A complete description of one memory part: standard, organisation, speed and timing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spec {
    pub name: String,
    pub standard: Standard,
    /// Nominal data rate in mega-transfers per second (the speed bin's name: DDR3-1066 runs
    /// at 1066.67 MT/s).
    pub data_rate_mts: u32,
    /// Clock period as the JEDEC speed bin defines it, exactly, in ns: 2000 / 1066.67 = 1.875
    /// for DDR3-1066 (not 2000 / 1066).
    pub tck_ns: f64,
    pub organisation: Organisation,
    pub timing: Timing,
    /// Whether the part has a refresh command (REF). False for non-volatile parts (PCM): the
    /// config must then disable refresh, and the refresh timings are unused (0).
    pub has_refresh: bool,
    /// PCM's precharge as HMMSim's `pcm_long_latency` models it: a bank remembers which
    /// bursts (64-B blocks) of its open row were written since the row was activated, and a
    /// precharge writes those back to the array, taking nRP per dirty block (0 for a clean
    /// row, whose cells a read did not disturb). Every rule whose latency contains nRP
    /// (PRE/RDA/WRA/PREA to ACT) then scales with the dirty count; the rule table is the
    /// standard's, unchanged (`device` compiles the nRP part apart).
    pub precharge_per_dirty_block: bool,
    pub power: PowerSpec,
    /// Dynamic energy per bit (array and row-buffer accesses) for parts that declare it
    /// (CMMP's Table I); reported beside the current-based model, not instead of it.
    pub bit_energy: Option<BitEnergy>,
    /// The datasheet or JEDEC bin the numbers come from.
    pub source: String,
}

/// A dynamic pJ/bit energy model (Lee et al., ISCA 2009, as CMMP's Table I uses it): array
/// read per bit sensed at ACT, array write per bit restored or written back at precharge,
/// buffer read/write per bit of every RD/WR burst.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BitEnergy {
    /// pJ per bit sensed by an ACT.
    pub array_read_pj: f64,
    /// pJ per bit written to the array at precharge (a DRAM row's restore, a PCM dirty block).
    pub array_write_pj: f64,
    /// pJ per bit read out of the row buffer by a RD burst.
    pub buffer_read_pj: f64,
    /// pJ per bit written into the row buffer by a WR burst.
    pub buffer_write_pj: f64,
    /// Bits one ACT senses; 0: the whole row (`Organisation::row_bytes` x 8).
    pub activation_bits: u64,
    /// Where the numbers come from.
    pub source: String,
}

impl Spec {
    pub fn rules(&self) -> Vec<Rule> {
        self.standard.rules(&self.timing)
    }

    pub fn tck_ns(&self) -> f64 {
        self.tck_ns
    }

    /// Peak data bandwidth of one channel in GB/s (10^9 bytes per second): the bus width
    /// once per data beat, `data_beats_per_clock` beats per clock.
    pub fn peak_channel_gbps(&self) -> f64 {
        let o = &self.organisation;
        o.data_beats_per_clock as f64 * (o.bus_width_bits / 8) as f64 / self.tck_ns
    }
}

/// Checks that a rule table is well formed: every rule's level is one that both of its
/// commands address (so the node is defined), sibling rules sit below the channel, windows are
/// at least two commands wide. Returns a description of the first bad rule.
pub fn validate_rules(rules: &[Rule]) -> Result<(), String> {
    for (i, r) in rules.iter().enumerate() {
        if r.level as usize >= TIMING_LEVELS {
            return Err(format!(
                "rule {i}: level {} has no timing state",
                r.level.name()
            ));
        }
        if r.preceding.is_empty() || r.following.is_empty() {
            return Err(format!("rule {i}: empty command list"));
        }
        for c in r.preceding.iter().chain(r.following.iter()) {
            if c.scope() < r.level {
                return Err(format!(
                    "rule {i}: {} addresses the {} level, above the rule's level {}",
                    c.name(),
                    c.scope().name(),
                    r.level.name()
                ));
            }
        }
        if r.sibling && r.level == Level::Channel {
            return Err(format!(
                "rule {i}: a sibling rule needs a level below channel"
            ));
        }
        if r.window == 1 {
            return Err(format!("rule {i}: window must be 0 (none) or at least 2"));
        }
        if r.window > 0 && r.sibling {
            return Err(format!("rule {i}: window and sibling cannot be combined"));
        }
    }
    Ok(())
}

/// `a - b` clamped at zero, for turnaround rules whose terms can cancel (e.g. nCWL > nCL).
pub(crate) fn sub0(a: u32, b: u32) -> u32 {
    a.saturating_sub(b)
}
