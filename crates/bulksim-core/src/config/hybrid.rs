//! The `[hybrid]` settings (issue 17): the serde struct that is the single source of truth
//! for their defaults (`Config::hybrid`, absent: off), each key's unit and description, their
//! own semantic checks, and the page and block sizes those checks and the hybrid memory share.
//! What `[hybrid]` needs of the rest of the config is checked with it (`Config::problems`).
//! Defaults follow the paper (Table I) where it gives a value and are bulksim's choices
//! (docs/hybrid.md) where it does not.

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

/// Bytes in a page, the unit of migration (4 KB, bulksim's choice: the paper never says).
pub const PAGE_BYTES: u64 = 4096;
/// Bytes in a block, the unit the ART tracks and copies (64 B, the LLC line; choice).
pub const BLOCK_BYTES: u64 = 64;
/// Blocks in a page: one bit of an ART entry's copied mask each.
pub const BLOCKS_PER_PAGE: u32 = (PAGE_BYTES / BLOCK_BYTES) as u32;

// The copied mask is one u64: the page/block sizes above must give exactly 64 blocks.
const _: () = assert!(BLOCKS_PER_PAGE == 64);

config_enum! {
    /// How pages migrate (`hybrid.mechanism`).
    pub enum Mechanism {
        /// The baseline: one migration at a time, the page's lines pinned in the LLC.
        Cpm = "cpm",
        /// Concurrent migration: every block of each migrating page copied in the background,
        /// accesses redirected by the ART.
        Cm = "cm",
        /// CM with on-demand block migration: promotions copy a block only when it is accessed.
        CmObm = "cm_obm",
        /// CM+OBM with partial demotion: a partly promoted page is demoted by copying back only
        /// its promoted blocks.
        CmObmPd = "cm_obm_pd",
    }
}

impl Mechanism {
    /// Whether accesses go through the ART (every mechanism but CPM).
    pub fn uses_art(self) -> bool {
        self != Mechanism::Cpm
    }

    /// Whether promotions copy blocks only on access.
    pub fn on_demand(self) -> bool {
        matches!(self, Mechanism::CmObm | Mechanism::CmObmPd)
    }

    /// Whether a partly promoted page is demoted by flipping its entry.
    pub fn partial_demotion(self) -> bool {
        self == Mechanism::CmObmPd
    }
}

config_enum! {
    /// Where the memory queues put migration copies relative to program requests
    /// (`hybrid.copy_priority`).
    pub enum CopyPriority {
        /// Per mechanism, as the paper and its sources say (`CopyPriority::resolve`): `low`
        /// for `cpm`, `equal` for the CM variants.
        Auto = "auto",
        /// Program requests first (HMMSim's two queues).
        Low = "low",
        /// No distinction: copies compete with program requests in arrival order.
        Equal = "equal",
    }
}

impl CopyPriority {
    /// The priority `mechanism`'s copies get: an explicit `low` or `equal` as given; `auto`
    /// per mechanism. CM copies "as fast as possible" without controlling the interference
    /// (Sec. IV-A), and OBM's gain is that its copies are spread over time, not that they
    /// are served after the program's (Sec. III-C): both `equal`. CPM's copy ([7]) is the
    /// one migration of the authors' simulator's old manager, whose copies go to the LOW
    /// queues (HMMSim's `HybridMemory` HIGH and LOW queues): `low`.
    pub fn resolve(self, mechanism: Mechanism) -> CopyPriority {
        match (self, mechanism) {
            (CopyPriority::Auto, Mechanism::Cpm) => CopyPriority::Low,
            (CopyPriority::Auto, _) => CopyPriority::Equal,
            (p, _) => p,
        }
    }
}

/// Copy requests one device's queues hold at most under `hybrid.copies_in_flight = 0`, per
/// mechanism (`HybridConfig::copies_in_flight_for`): 64, one page's blocks, for every
/// mechanism: CPM's copy is a burst (the authors' HMMSim issues a migration's block requests
/// at once, `burst_migration = true`, for its old manager too), and CM copies "as fast as
/// possible" (Sec. IV-A). Kept per mechanism so a study can bound one alone. (Until the
/// review of issue 33, CPM kept bulksim's former bound of 8.)
pub const CPM_COPIES_IN_FLIGHT: u32 = 64;
/// See `CPM_COPIES_IN_FLIGHT`.
pub const CM_COPIES_IN_FLIGHT: u32 = 64;

config_enum! {
    /// What happens to the cached lines of a page's old frame when its migration completes
    /// (`hybrid.remap_lines`).
    pub enum RemapLines {
        /// Dirty lines are written to the new frame, then every line is invalidated.
        Flush = "flush",
        /// Lines stay cached, their tags rewritten to the new frame.
        Retag = "retag",
    }
}

config_enum! {
    /// Which LLC misses and write-backs the PACT counts (`hybrid.pact_origins`); the migration
    /// copier's are `count_copies`'s.
    pub enum PactOrigins {
        /// The program's own loads' and stores' only.
        Program = "program",
        /// Also those of copies, first-touch zeroing and bulk coherence.
        All = "all",
    }
}

config_enum! {
    /// Where the OS first places a page (`hybrid.placement`).
    pub enum Placement {
        /// In a free DRAM frame while more than the policy's watermark (`free_min`) are free,
        /// then in PCM (HMMSim's `dram_first`, which fills DRAM once at the start).
        DramFirst = "dram_first",
        /// Always in PCM; DRAM holds only promoted pages.
        PcmOnly = "pcm_only",
    }
}

config_struct! {
    /// `[hybrid]`: the hybrid DRAM+PCM memory and its migration (see docs/hybrid.md).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct HybridConfig at "hybrid" {
        /// Migration mechanism: `cpm | cm | cm_obm | cm_obm_pd`.
        pub mechanism: Mechanism = choice(
            Mechanism,
            "migration mechanism: cpm (one at a time, page pinned in the LLC), cm (concurrent, background copies), cm_obm (promotions copy blocks on access), cm_obm_pd (plus partial demotion)",
        ),
        /// ns between the OS's reads of the PACT (each runs the policy once).
        pub period_ns: u64 = doc(
            "ns",
            "time between the OS's reads and resets of the PACT; the migration policy runs after each",
        ),
        /// Entries of the PACT.
        pub pact_entries: u32 = doc(
            "entries",
            "PACT capacity (Table I: 8192); a multiple of hybrid.pact_ways",
        ),
        /// Ways per PACT set (sets = entries / ways, indexed by page).
        pub pact_ways: u32 = doc(
            "ways",
            "PACT associativity; sets = entries / ways, indexed by physical page",
        ),
        /// Bits of each PACT count (counts saturate at 2^bits - 1).
        pub pact_count_bits: u32 = doc(
            "bits",
            "width of a PACT count, 1..=32; counts saturate at 2^bits - 1",
        ),
        /// Entries of the ART (concurrent migrations at most).
        pub art_entries: u32 = doc(
            "entries",
            "ART capacity, the most pages migrating at once (Table I: 512); a multiple of hybrid.art_ways",
        ),
        /// Ways per ART set (sets = entries / ways, indexed by key page).
        pub art_ways: u32 = doc(
            "ways",
            "ART associativity; sets = entries / ways, indexed by the key (home) page; a full set refuses inserts",
        ),
        /// Weight of a page's previous score: score = count + decay x old score.
        pub decay: f64 = doc(
            "fraction",
            "weight of a page's old score: score = period count + decay x old score; 0 <= decay < 1",
        ),
        /// Score at or above which a PCM page is promoted.
        pub promote_min: f64 = doc("score", "least score of a PCM page the policy promotes"),
        /// Fraction of DRAM frames the policy keeps free or being vacated by demotions.
        pub free_min: f64 = doc(
            "fraction of DRAM frames",
            "the policy demotes while free plus vacating DRAM frames are fewer than this fraction of all DRAM frames",
        ),
        /// Migration copies in the memory queues: `auto` (per mechanism), `low` (after program
        /// requests) or `equal`.
        pub copy_priority: CopyPriority = choice(
            CopyPriority,
            "migration copies in the memory controllers' queues: auto (per mechanism: low for cpm, the authors' simulator's LOW queues for its one migration; equal for cm, cm_obm, cm_obm_pd, whose copies the paper lets compete with demand requests), low (a copy gets a command only in a cycle in which no program request of its queue can; once it has opened its row it competes as any request) or equal (the scheduler treats copies and program requests alike); both offer copies after the caches' requests each device cycle",
        ),
        /// Copy requests (reads and writes) the copier keeps in one device's queues at most;
        /// 0 = per mechanism (`copies_in_flight_for`).
        pub copies_in_flight: u32 = doc(
            "requests per device",
            "migration copy reads and writes the copier keeps in one device's queues at most; 0 = per mechanism: 64 for every mechanism (one page's blocks: cpm's copy is a burst, as the authors' simulator issues it; the CM variants copy as fast as the queues take them); at most 4096",
        ),
        /// OBM: blocks copied on demand after which the rest of the page is copied in the
        /// background; 0 = never (pure on-demand).
        pub obm_complete_after: u32 = doc(
            "blocks",
            "cm_obm, cm_obm_pd: after this many blocks of a promoting page copied on demand the rest are copied in the background; 0 = never",
        ),
        /// OBM: when the ART refuses the policy a way, partly promoted pages of the refused
        /// sets are completed (their other blocks copied in the background) to free ways.
        pub art_full_completes: bool = doc(
            "bool",
            "cm_obm, cm_obm_pd: when the ART refuses the policy ways (a promotion skipped, a demotion waiting), as many partly promoted pages of the refused sets are completed, their other blocks copied in the background, the pages with the most blocks copied on demand first, so their ways are free for a later period; false: such pages leave the ART only by completing on their own or being chosen for demotion (bulksim's choice; the paper is silent)",
        ),
        /// `art_full_completes` takes only pages promoting for at least this many whole
        /// periods (0: also those the same period started).
        pub art_full_min_periods: u32 = doc(
            "periods",
            "cm_obm, cm_obm_pd with hybrid.art_full_completes: only pages promoting for at least this many whole periods are completed for ART ways, so a page promoted this period first shows whether its blocks are used (on demand) before it is copied whole; 0: also pages the same period started (bulksim's choice; the paper is silent)",
        ),
        /// Demotions skip blocks not written since promotion (the PCM copy is still valid).
        pub elide_clean: bool = doc(
            "bool",
            "demotions skip blocks unchanged since promotion (their PCM copy is current); the paper copies them",
        ),
        /// On completion the old frame's cached lines are `flush`ed or `retag`ged.
        pub remap_lines: RemapLines = choice(
            RemapLines,
            "on completion the old frame's cached lines are written to the new frame and invalidated (flush), or renamed to the new frame, moving to its sets, dirty ones staying dirty (retag)",
        ),
        /// Which LLC misses and write-backs update the PACT: `program | all`.
        pub pact_origins: PactOrigins = choice(
            PactOrigins,
            "which LLC misses and write-backs update the PACT: the program's own loads' and stores' (program, bulksim's choice: a run's first-touch zeroing, long over in the paper's 5 B-instruction warm-up, would make every page touched look hot) or also those of copies, first-touch zeroing and bulk coherence (all: what a counter beside the controller sees)",
        ),
        /// The migration copier's requests update the PACT too.
        pub count_copies: bool = doc(
            "bool",
            "the migration copier's reads and writes update the PACT too (its requests, not a program's)",
        ),
        /// First placement of pages: `dram_first | pcm_only`.
        pub placement: Placement = choice(
            Placement,
            "first placement of a page: a free DRAM frame while more than the policy keeps free (ceil(free_min x DRAM frames)) are free, else PCM (dram_first), or always PCM (pcm_only); frames freed later by demotions thus go to promotions, not to new pages",
        ),
        /// OS time per period (PACT read and policy), ns, taken from core 0's front end.
        pub os_period_ns: u64 = doc(
            "ns",
            "OS time per period for reading the PACT and running the policy: core 0 dispatches nothing for this long (its window drains), counted in os_time_ns even when core 0 is idle; less than hybrid.period_ns",
        ),
        /// OS time per page remap, ns, taken from the front end of the core running the page's
        /// process (else core 0).
        pub os_remap_ns: u64 = doc(
            "ns",
            "OS time per page remap at a migration's completion: the core running the page's process (else core 0) dispatches nothing for this long; at most 1,000,000,000 (1 s)",
        ),
        /// `cpm`: ns to set up each migration (DMA descriptor, completion interrupt) before
        /// its copy starts.
        pub cpm_setup_ns: u64 = doc(
            "ns",
            "cpm: set-up of each migration (DMA descriptor written, completion interrupt taken) before its copy starts, on the serial chain (bulksim's choice, docs/hybrid.md); at most 1 s",
        ),
        /// `cpm`: ns per dirty pinned LLC line flushed to a new DRAM frame (one after another).
        pub cpm_flush_dram_line_ns: u64 = doc(
            "ns per line",
            "cpm: each dirty pinned LLC line of a promoted page written to its new DRAM frame after the copy, one after another (Table I's DRAM: tRCD + tCAS + burst); at most 1 s",
        ),
        /// `cpm`: ns per dirty pinned LLC line flushed to a new PCM frame (one after another).
        pub cpm_flush_pcm_line_ns: u64 = doc(
            "ns per line",
            "cpm: each dirty pinned LLC line of a demoted page written to its new PCM frame after the copy, one after another (Table I's PCM: tRCD + tCAS + burst + the write's 150 ns); at most 1 s",
        ),
        /// ns of each remap's page-table update and TLB shootdown, every core stalled (every
        /// mechanism; under `cpm` the next migration also waits for it).
        pub remap_shootdown_ns: u64 = doc(
            "ns",
            "page-table update and TLB shootdown at each remap of every mechanism (a completed promotion or full demotion; under cpm after the flush); every core dispatches nothing for this long, and under cpm the next migration waits for it (bulksim's choice from published shootdown costs, docs/hybrid.md); at most 1 s",
        ),
    }
}

impl Default for HybridConfig {
    fn default() -> Self {
        HybridConfig {
            // The paper's full proposal (CMMP); the reproduction runs all four by name.
            mechanism: Mechanism::CmObmPd,
            period_ns: 1_000_000,
            pact_entries: 8192,
            pact_ways: 32,
            pact_count_bits: 16,
            art_entries: 512,
            art_ways: 32,
            decay: 0.5,
            promote_min: 2.0,
            free_min: 0.01,
            copy_priority: CopyPriority::Auto,
            copies_in_flight: 0,
            obm_complete_after: 0,
            art_full_completes: true,
            art_full_min_periods: 1,
            elide_clean: false,
            remap_lines: RemapLines::Flush,
            pact_origins: PactOrigins::Program,
            count_copies: false,
            placement: Placement::DramFirst,
            os_period_ns: 0,
            os_remap_ns: 0,
            // CPM's hand-off (docs/hybrid.md, "CPM's hand-off", gives each source).
            cpm_setup_ns: 1_000,
            cpm_flush_dram_line_ns: 28,
            cpm_flush_pcm_line_ns: 227,
            remap_shootdown_ns: 2_000,
        }
    }
}

/// The `[hybrid]` keys' entries in `CONFIG_FIELDS` (declared with `HybridConfig`'s fields).
pub fn hybrid_fields() -> impl Iterator<Item = &'static super::FieldDoc> {
    super::CONFIG_FIELDS
        .iter()
        .filter(|f| f.key.starts_with("hybrid."))
}

/// The problem with a table of `entries` in sets of `ways` (`hybrid.{table}_*`), if any.
pub(crate) fn table_problem(table: &str, entries: u32, ways: u32) -> Option<String> {
    if ways == 0 {
        Some(format!("hybrid.{table}_ways: 0; expected at least 1 way"))
    } else if entries == 0 || entries % ways != 0 {
        Some(format!(
            "hybrid.{table}_entries: {entries}; expected a positive multiple of hybrid.{table}_ways ({ways})"
        ))
    } else {
        None
    }
}

impl HybridConfig {
    /// The copy requests one device's queues hold at most under `mechanism`.
    pub fn copies_in_flight_for(&self, mechanism: Mechanism) -> u32 {
        match (self.copies_in_flight, mechanism) {
            (0, Mechanism::Cpm) => CPM_COPIES_IN_FLIGHT,
            (0, _) => CM_COPIES_IN_FLIGHT,
            (n, _) => n,
        }
    }

    /// Every semantic problem, one message each naming its key, in key order; empty when
    /// the settings are valid.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        if self.period_ns == 0 {
            p.push("hybrid.period_ns: 0; expected a positive period in ns".to_string());
        }
        p.extend(table_problem("pact", self.pact_entries, self.pact_ways));
        if !(1..=32).contains(&self.pact_count_bits) {
            p.push(format!(
                "hybrid.pact_count_bits: {}; expected 1..=32",
                self.pact_count_bits
            ));
        }
        p.extend(table_problem("art", self.art_entries, self.art_ways));
        if !(0.0..1.0).contains(&self.decay) {
            p.push(format!(
                "hybrid.decay: {}; expected 0 <= decay < 1",
                self.decay
            ));
        }
        if !self.promote_min.is_finite() || self.promote_min <= 0.0 {
            p.push(format!(
                "hybrid.promote_min: {}; expected a positive score",
                self.promote_min
            ));
        }
        if !(0.0..=1.0).contains(&self.free_min) {
            p.push(format!(
                "hybrid.free_min: {}; expected a fraction 0..=1",
                self.free_min
            ));
        }
        if self.obm_complete_after >= BLOCKS_PER_PAGE {
            p.push(format!(
                "hybrid.obm_complete_after: {}; expected 0 (off) ..={} blocks",
                self.obm_complete_after,
                BLOCKS_PER_PAGE - 1
            ));
        }
        if self.os_remap_ns > MAX_OS_NS {
            // Simulated time is kept in u64 femtoseconds (about 5 hours).
            p.push(format!(
                "hybrid.os_remap_ns: {} is out of range; expected 0..={MAX_OS_NS} (1 s)",
                self.os_remap_ns
            ));
        }
        for (key, ns) in [
            ("cpm_setup_ns", self.cpm_setup_ns),
            ("cpm_flush_dram_line_ns", self.cpm_flush_dram_line_ns),
            ("cpm_flush_pcm_line_ns", self.cpm_flush_pcm_line_ns),
            ("remap_shootdown_ns", self.remap_shootdown_ns),
        ] {
            if ns > MAX_OS_NS {
                p.push(format!(
                    "hybrid.{key}: {ns} is out of range; expected 0..={MAX_OS_NS} (1 s)"
                ));
            }
        }
        if self.copies_in_flight > MAX_COPIES_IN_FLIGHT {
            p.push(format!(
                "hybrid.copies_in_flight: {}; expected 0 (per mechanism) ..={MAX_COPIES_IN_FLIGHT}",
                self.copies_in_flight
            ));
        }
        if self.period_ns > 0 && self.os_period_ns >= self.period_ns {
            // Core 0 would run the OS for ever.
            p.push(format!(
                "hybrid.os_period_ns: {}; expected less than hybrid.period_ns ({})",
                self.os_period_ns, self.period_ns
            ));
        }
        p
    }
}

/// The longest OS remap time accepted, ns (1 s: far beyond any page-table update, and far
/// inside the femtosecond clock's range).
const MAX_OS_NS: u64 = 1_000_000_000;

/// The most copy requests per device accepted (far above any controller's queues).
const MAX_COPIES_IN_FLIGHT: u32 = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<HybridConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn an_empty_section_gives_the_issue_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c, HybridConfig::default());
        assert_eq!(c.period_ns, 1_000_000);
        assert_eq!(
            (c.pact_entries, c.pact_ways, c.pact_count_bits),
            (8192, 32, 16)
        );
        assert_eq!((c.art_entries, c.art_ways), (512, 32));
        assert_eq!((c.decay, c.promote_min, c.free_min), (0.5, 2.0, 0.01));
        assert_eq!(c.copy_priority, CopyPriority::Auto);
        assert_eq!(c.copies_in_flight, 0);
        assert_eq!(
            (
                c.cpm_setup_ns,
                c.cpm_flush_dram_line_ns,
                c.cpm_flush_pcm_line_ns,
                c.remap_shootdown_ns
            ),
            (1_000, 28, 227, 2_000)
        );
        assert_eq!(c.obm_complete_after, 0);
        assert!(!c.elide_clean && !c.count_copies);
        assert!(c.art_full_completes);
        assert_eq!(c.art_full_min_periods, 1);
        assert_eq!(c.pact_origins, PactOrigins::Program);
        assert_eq!(c.remap_lines, RemapLines::Flush);
        assert!(c.problems().is_empty());
    }

    #[test]
    fn enum_values_parse_by_their_documented_names() {
        for (name, m) in [
            ("cpm", Mechanism::Cpm),
            ("cm", Mechanism::Cm),
            ("cm_obm", Mechanism::CmObm),
            ("cm_obm_pd", Mechanism::CmObmPd),
        ] {
            assert_eq!(
                parse(&format!("mechanism = \"{name}\"")).unwrap().mechanism,
                m
            );
        }
        let c = parse(
            "copy_priority = \"equal\"\nremap_lines = \"retag\"\nplacement = \"pcm_only\"\npact_origins = \"all\"",
        )
        .unwrap();
        assert_eq!(c.pact_origins, PactOrigins::All);
        assert_eq!(c.copy_priority, CopyPriority::Equal);
        assert_eq!(c.remap_lines, RemapLines::Retag);
        assert_eq!(c.placement, Placement::PcmOnly);
        assert!(parse("mechanism = \"cmmp\"").is_err());
    }

    #[test]
    fn mechanism_capabilities() {
        assert!(!Mechanism::Cpm.uses_art());
        assert!(Mechanism::Cm.uses_art() && !Mechanism::Cm.on_demand());
        assert!(Mechanism::CmObm.on_demand() && !Mechanism::CmObm.partial_demotion());
        assert!(Mechanism::CmObmPd.on_demand() && Mechanism::CmObmPd.partial_demotion());
    }

    #[test]
    fn copy_priority_and_bound_resolve_per_mechanism() {
        let c = HybridConfig::default();
        assert_eq!(
            CopyPriority::Auto.resolve(Mechanism::Cpm),
            CopyPriority::Low
        );
        for m in [Mechanism::Cm, Mechanism::CmObm, Mechanism::CmObmPd] {
            assert_eq!(CopyPriority::Auto.resolve(m), CopyPriority::Equal);
            assert_eq!(c.copies_in_flight_for(m), 64);
        }
        assert_eq!(c.copies_in_flight_for(Mechanism::Cpm), 64);
        // Explicit values override every mechanism's.
        assert_eq!(CopyPriority::Low.resolve(Mechanism::Cm), CopyPriority::Low);
        assert_eq!(
            CopyPriority::Equal.resolve(Mechanism::Cpm),
            CopyPriority::Equal
        );
        let eight = parse("copies_in_flight = 8").unwrap();
        assert_eq!(eight.copies_in_flight_for(Mechanism::Cm), 8);
        assert_eq!(
            parse("copy_priority = \"auto\"").unwrap().copy_priority,
            CopyPriority::Auto
        );
    }

    #[test]
    fn unknown_keys_are_refused() {
        let e = parse("art_sets = 16").unwrap_err().to_string();
        assert!(e.contains("art_sets"), "{e}");
    }

    #[test]
    fn the_field_table_lists_every_key_once() {
        let value = toml::Value::try_from(HybridConfig::default()).unwrap();
        let keys: Vec<String> = value
            .as_table()
            .unwrap()
            .keys()
            .map(|k| format!("hybrid.{k}"))
            .collect();
        let mut documented: Vec<String> = hybrid_fields().map(|f| f.key.to_string()).collect();
        documented.sort();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(documented, sorted);
        for f in hybrid_fields() {
            assert!(!f.unit.is_empty() && !f.description.is_empty(), "{}", f.key);
        }
    }

    #[test]
    fn every_documented_alternative_parses() {
        for f in hybrid_fields() {
            if !f.unit.contains(" | ") {
                continue;
            }
            let field = f.key.strip_prefix("hybrid.").unwrap();
            for value in f.unit.split(" | ") {
                let text = format!("{field} = \"{value}\"");
                assert!(parse(&text).is_ok(), "{text}");
            }
        }
    }

    #[test]
    fn problems_name_their_keys() {
        let c = HybridConfig {
            period_ns: 0,
            pact_entries: 100,
            pact_count_bits: 0,
            art_ways: 0,
            decay: 1.0,
            promote_min: 0.0,
            free_min: 1.5,
            obm_complete_after: 64,
            os_remap_ns: u64::MAX,
            remap_shootdown_ns: u64::MAX,
            copies_in_flight: 5000,
            ..Default::default()
        };
        let p = c.problems();
        let keys = [
            "hybrid.period_ns",
            "hybrid.pact_entries",
            "hybrid.pact_count_bits",
            "hybrid.art_ways",
            "hybrid.decay",
            "hybrid.promote_min",
            "hybrid.free_min",
            "hybrid.obm_complete_after",
            "hybrid.os_remap_ns",
            "hybrid.remap_shootdown_ns",
            "hybrid.copies_in_flight",
        ];
        assert_eq!(p.len(), keys.len(), "{p:?}");
        for (msg, key) in p.iter().zip(keys) {
            assert!(msg.starts_with(key), "{msg}");
        }
        let nan = HybridConfig {
            decay: f64::NAN,
            ..Default::default()
        };
        assert_eq!(nan.problems().len(), 1);
    }
}
