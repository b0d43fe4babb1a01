//! `[controller.refresh]` (or a policy name alone): when ranks refresh, at which granularity,
//! which banks one refresh command covers (all banks, or DDR5's same-bank REFsb and the
//! order of its bank indexes), and the scheme that decides when an owed REF blocks its rank;
//! with the check of these settings against the part they refresh (`Config::refresh_problem`).

use super::choice::config_enum;
use super::field_docs::config_struct;
use super::Config;
use crate::spec::{Spec, Standard};
use serde::{Deserialize, Serialize};

config_enum! {
    /// When a channel's ranks refresh relative to one another.
    pub enum RefreshPolicy {
        /// One rank at a time, spread over tREFI (`stagger` says over which ranks).
        Staggered = "staggered" | "all_bank",
        /// Every rank at once (their REFs on consecutive command-bus cycles).
        Simultaneous = "simultaneous",
        /// No refresh (tRFC 0).
        None = "none",
    }
}

config_enum! {
    /// Over which ranks staggered refreshes are spread.
    pub enum Stagger {
        /// Each channel's ranks over tREFI: rank r of R first due at (r + 1) tREFI / R.
        Channel = "channel",
        /// All ranks of the memory over tREFI: rank k = channel x R + r of N first due at
        /// (k + 1) tREFI / N (bulksim's choice of offsets).
        System = "system",
    }
}

config_enum! {
    /// When an owed refresh blocks its rank (see `controller::refresh_scheme`).
    pub enum RefreshScheme {
        Demand = "demand",
        Elastic = "elastic",
        Pausing = "pausing",
        Pcd = "pcd",
        Adaptive = "adaptive",
    }
}

config_enum! {
    /// Which banks one refresh command refreshes (`controller.refresh.bank_scope`).
    pub enum RefreshBankScope {
        /// REF (REFab): every bank of the rank, closed first by a PREA.
        AllBank = "all_bank",
        /// DDR5's REFsb: one bank index in every bank group; the rank's other banks serve on.
        SameBank = "same_bank",
    }
}

config_enum! {
    /// Which bank index a same-bank refresh takes next (`controller.refresh.same_bank_order`).
    pub enum SameBankOrder {
        /// Bank indexes 0, 1, ..., banks_per_group - 1 in turn.
        RoundRobin = "round_robin",
        /// Among the indexes not yet refreshed in the current tREFI, one with no queued
        /// request (the lowest such; else the lowest index left).
        BankIdleAware = "bank_idle_aware",
    }
}

config_enum! {
    /// When elastic refresh forces an owed REF its rank has not found idle time for
    /// (`controller.refresh.elastic_deadline`).
    pub enum ElasticDeadline {
        /// Each REF 8 tREFI after it fell due: the JEDEC limit of 8 postponed REFs, reached one
        /// REF at a time (Stuecheli et al.'s forcing at the postponement limit).
        PerRef = "per_ref",
        /// Every REF still owed at the end of the rank's 8 x tREFI window, in one burst (the
        /// windows of the ranks end in the order and spacing of their stagger).
        Window = "window",
    }
}

config_struct! {
    /// `[controller.refresh]`, or a policy name alone (`controller.refresh = "none"`).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct RefreshConfig at "controller.refresh" {
        pub policy: RefreshPolicy = choice(
            RefreshPolicy,
            "staggered (all_bank is an alias): one all-bank REF per rank every tREFI, ranks offset over tREFI (see stagger); simultaneous: every rank due at once; none: no refresh (tRFC 0)",
        ),
        /// DDR4 fine granularity refresh: 1, 2 or 4 REFs per 1x interval.
        pub granularity: u32 = doc(
            "1 | 2 | 4",
            "DDR4 fine granularity refresh: tREFI / granularity between REFs (the preset's nREFI2/nREFI4 when given), each taking tRFC at that granularity",
        ),
        /// With FGR, each REF takes the preset's nRFC2/nRFC4 (true) or nRFC / granularity.
        pub fgr_overhead: bool = doc(
            "bool",
            "with granularity 2 or 4: true takes the preset's nRFC2/nRFC4 (JEDEC: each REF pays its own recovery); false takes nRFC / granularity (the paper's optimistic FGR)",
        ),
        pub bank_scope: RefreshBankScope = choice(
            RefreshBankScope,
            "all_bank: each refresh is a REF (REFab) of the whole rank, its banks closed by a PREA first; same_bank (DDR5 only, with granularity = 2: JESD79-5 issues REFsb in fine granularity refresh mode): each tREFI2 a rank gets banks_per_group REFsb, one per bank index, each refreshing that bank in all bank groups (its open ones precharged first) for nRFCsb while the other banks serve on (docs/standards.md)",
        ),
        pub same_bank_order: SameBankOrder = choice(
            SameBankOrder,
            "same_bank: which bank index the next REFsb refreshes. round_robin: 0, 1, 2, 3 in turn; bank_idle_aware: among the indexes not yet refreshed in this tREFI2 (each is refreshed once per tREFI2, so no REFsb is postponed), the lowest with no request queued to its banks, else the lowest left",
        ),
        pub stagger: Stagger = choice(
            Stagger,
            "staggered policy: channel spreads each channel's R ranks (rank r first due at (r+1) tREFI/R); system spreads all N ranks of the memory (rank channel*R + r due at (k+1) tREFI/N, bulksim's choice); refreshes that still overlap are counted in refresh.overlap_ns",
        ),
        pub scheme: RefreshScheme = choice(
            RefreshScheme,
            "when an owed REF blocks its rank: demand when due; elastic (Stuecheli et al.) once the rank has had no queued request for idle_ns, or when forced (elastic_deadline); pausing (Nair et al.) in pause_granularity fragments per refresh, each issued while the rank has nothing queued, forced once 8 x tREFI late; pcd (Mukundan et al.) on demand, with the rank's requests first in the pcd_window_ns before its REF; adaptive (Mukundan et al.) on demand at 1x or 4x granularity, chosen per 8 x tREFI window by ar_reads",
        ),
        /// Elastic: idle time before an owed REF issues, in ns.
        pub idle_ns: f64 = doc(
            "ns",
            "elastic: how long a rank must have had nothing queued before an owed REF issues (bulksim's choice 200 ns)",
        ),
        /// Elastic: when an owed REF is forced, `per_ref | window`.
        pub elastic_deadline: ElasticDeadline = choice(
            ElasticDeadline,
            "elastic: when a REF the rank found no idle time for is forced. per_ref: once the rank owes 8 (7 x tREFI after it fell due, a tREFI before a 9th would be owed), one REF at a time (DDR4 allows at most 8 postponed REFs, JESD79-4 4.26; Stuecheli et al., MICRO 2010, force a REF when the postponed count reaches that limit); the default, where the Rank Assignment paper's §VI-I says leftovers go at the end of the 8 x tREFI window; window: every REF still owed at the end of the rank's 8 x tREFI window, as one burst (a literal reading of the Rank Assignment paper's §VI-I, whose windows it does not align; here they end in stagger order)",
        ),
        /// Elastic under a stagger: a REF waits while another rank of the stagger refreshes.
        pub elastic_keeps_stagger: bool = doc(
            "bool",
            "elastic with a staggered policy: true = a REF (early, in idle time, or forced) waits while another rank of the stagger (the channel's ranks, or all ranks under stagger = system) is refreshing, so one rank refreshes at a time as on demand (bulksim's choice: the stagger exists for peak power, Rank Assignment paper §III-A); false = each rank refreshes on its own and idle ranks may refresh together",
        ),
        /// Pausing: fragments per refresh (8: tRFC/8 each, no overhead; 4 or 2: FGR REFs).
        pub pause_granularity: u32 = doc(
            "8 | 4 | 2",
            "pausing: fragments per refresh; 8 = the paper's optimistic tRFC/8 fragments without overhead (80 ns on 32 Gb), 4 or 2 = realistic FGR REFs (the preset's nRFC4/nRFC2)",
        ),
        /// PCD: how long before a REF its rank's requests go first, in ns (0: tRFC).
        pub pcd_window_ns: f64 = doc(
            "ns",
            "pcd: the rank's queued requests go first this long before its REF falls due (0: tRFC)",
        ),
        /// Adaptive: reads waiting per REF above which the next window refreshes at 4x.
        pub ar_reads: u32 = doc(
            "reads per REF",
            "adaptive: the next 8 x tREFI window refreshes at 4x when more reads than this waited, on average, for each REF's rank as it issued (bulksim's choice 8)",
        ),
    }
}

impl Default for RefreshConfig {
    fn default() -> Self {
        RefreshConfig {
            policy: RefreshPolicy::Staggered,
            granularity: 1,
            fgr_overhead: true,
            bank_scope: RefreshBankScope::AllBank,
            same_bank_order: SameBankOrder::RoundRobin,
            stagger: Stagger::Channel,
            scheme: RefreshScheme::Demand,
            idle_ns: 200.0,
            elastic_deadline: ElasticDeadline::PerRef,
            elastic_keeps_stagger: true,
            pause_granularity: 8,
            pcd_window_ns: 0.0,
            ar_reads: 8,
        }
    }
}

/// Reads `controller.refresh` as a table or as a policy name.
pub(super) fn refresh_config<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<RefreshConfig, D::Error> {
    struct Either;
    impl<'de> serde::de::Visitor<'de> for Either {
        type Value = RefreshConfig;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(
                "a policy name (staggered, simultaneous, none) or a [controller.refresh] table",
            )
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<RefreshConfig, E> {
            let policy =
                RefreshPolicy::deserialize(serde::de::value::StrDeserializer::<E>::new(v))?;
            Ok(RefreshConfig {
                policy,
                ..Default::default()
            })
        }
        fn visit_map<M: serde::de::MapAccess<'de>>(
            self,
            m: M,
        ) -> std::result::Result<RefreshConfig, M::Error> {
            RefreshConfig::deserialize(serde::de::value::MapAccessDeserializer::new(m))
        }
    }
    d.deserialize_any(Either)
}

impl Config {
    /// The error of refreshing a part that has no refresh command (REF), naming the key.
    pub(super) fn refresh_problem(&self, spec: &Spec) -> Option<String> {
        let r = &self.controller.refresh;
        if !spec.has_refresh && r.policy != RefreshPolicy::None {
            return Some(format!(
                "controller.refresh: {}, but {} has no refresh command (REF); set controller.refresh = \"none\"",
                r.policy.name(),
                spec.name
            ));
        }
        if ![1, 2, 4].contains(&r.granularity) {
            return Some(format!(
                "controller.refresh.granularity: {} is not a DDR4 refresh granularity; expected 1, 2 or 4",
                r.granularity
            ));
        }
        if r.scheme == RefreshScheme::Pausing {
            if r.granularity != 1 {
                return Some(format!(
                    "controller.refresh.granularity: {} with scheme = \"pausing\"; pausing picks its fragments with controller.refresh.pause_granularity (keep granularity 1)",
                    r.granularity
                ));
            }
            if ![2, 4, 8].contains(&r.pause_granularity) {
                return Some(format!(
                    "controller.refresh.pause_granularity: {}; expected 8 (tRFC/8 fragments), 4 or 2 (FGR REFs)",
                    r.pause_granularity
                ));
            }
            let rfc_k = if r.pause_granularity == 2 {
                spec.timing.n_rfc2
            } else {
                spec.timing.n_rfc4
            };
            if r.pause_granularity != 8 && rfc_k == 0 {
                return Some(format!(
                    "controller.refresh.pause_granularity: {} needs nRFC{} from the preset, but {} does not give it",
                    r.pause_granularity, r.pause_granularity, spec.name
                ));
            }
        }
        if let Some(problem) = self.postponement_problem(spec) {
            return Some(problem);
        }
        if let Some(problem) = self.same_bank_problem(spec) {
            return Some(problem);
        }
        if r.scheme == RefreshScheme::Adaptive && r.policy != RefreshPolicy::None {
            if r.granularity != 1 {
                return Some(format!(
                    "controller.refresh.granularity: {} with scheme = \"adaptive\"; adaptive switches between 1x and 4x itself (keep granularity 1)",
                    r.granularity
                ));
            }
            if spec.timing.n_rfc4 == 0 {
                return Some(format!(
                    "controller.refresh.scheme: adaptive needs nRFC4 from the preset, but {} does not give it",
                    spec.name
                ));
            }
        }
        for (key, v) in [
            ("controller.refresh.idle_ns", r.idle_ns),
            ("controller.refresh.pcd_window_ns", r.pcd_window_ns),
        ] {
            if !(0.0..=1e9).contains(&v) {
                return Some(format!("{key}: {v} is out of range; expected 0 to 1e9 ns"));
            }
        }
        let t = &spec.timing;
        let rfc_k = match r.granularity {
            2 => t.n_rfc2,
            4 => t.n_rfc4,
            _ => t.n_rfc,
        };
        (r.policy != RefreshPolicy::None && r.fgr_overhead && rfc_k == 0).then(|| {
            format!(
                "controller.refresh.granularity: {} needs nRFC{} from the preset, but {} does not give it; set dram.timing.nRFC{} or controller.refresh.fgr_overhead = false",
                r.granularity, r.granularity, spec.name, r.granularity
            )
        })
    }

    /// The error of same-bank refresh where it does not apply: a part without REFsb (every
    /// standard but DDR5, or a DDR5 part whose nRFCsb is 0), outside fine granularity mode,
    /// or with a scheme that does not combine with it yet.
    fn same_bank_problem(&self, spec: &Spec) -> Option<String> {
        let r = &self.controller.refresh;
        if r.bank_scope != RefreshBankScope::SameBank || r.policy == RefreshPolicy::None {
            return None;
        }
        let key = "controller.refresh.bank_scope";
        if spec.standard != Standard::Ddr5 || !spec.has_refresh {
            return Some(format!(
                "{key}: same_bank needs a part with same-bank refresh (REFsb, DDR5); {} is {}{}",
                spec.name,
                spec.standard.name(),
                if spec.has_refresh {
                    ""
                } else {
                    " without refresh"
                }
            ));
        }
        if spec.timing.n_rfcsb == 0 {
            return Some(format!(
                "{key}: same_bank needs nRFCsb, but {} gives 0 (set dram.timing.nRFCsb)",
                spec.name
            ));
        }
        if r.granularity != 2 {
            return Some(format!(
                "{key}: same_bank needs controller.refresh.granularity = 2, not {}: JESD79-5 issues REFsb only in fine granularity refresh mode (tREFI2)",
                r.granularity
            ));
        }
        let t = &spec.timing;
        let interval = t.n_refi / spec.organisation.banks_per_group;
        if interval <= t.n_refsbrd {
            // REFsb of one rank are at least nREFSBRD apart: a shorter interval would leave
            // them further behind with every one.
            // `n_refi` is already the fine-granularity interval here: the preset's nREFI2 when
            // it gives one (DDR5's do), else nREFI / 2; name the key that sets it.
            let refi_key = if t.n_refi2 > 0 { "nREFI2" } else { "nREFI" };
            return Some(format!(
                "dram.timing.{refi_key}: the REF interval in use ({} cycles) leaves {interval} cycles between a rank's REFsb ({} bank indexes), no more than nREFSBRD ({}); same-bank refresh could not keep up",
                t.n_refi, spec.organisation.banks_per_group, t.n_refsbrd
            ));
        }
        let why = match r.scheme {
            RefreshScheme::Demand => return None,
            RefreshScheme::Pcd => "pcd drains a rank's requests before its REF, but under same-bank refresh the rank keeps serving; a bank-set drain is not modelled",
            // Elastic, pausing and adaptive are refused on DDR5 before this check.
            _ => "it postpones or switches all-bank REFs",
        };
        Some(format!(
            "controller.refresh.scheme: {} does not combine with bank_scope = \"same_bank\" yet ({why}); use scheme = \"demand\"",
            r.scheme.name()
        ))
    }

    /// The error of a scheme that postpones REFs on a standard whose postponement limit
    /// bulksim does not model (DDR5, LPDDR5, HBM3).
    fn postponement_problem(&self, spec: &Spec) -> Option<String> {
        let r = &self.controller.refresh;
        if !matches!(spec.standard, Standard::Ddr3 | Standard::Ddr4)
            && r.policy != RefreshPolicy::None
            && matches!(r.scheme, RefreshScheme::Elastic | RefreshScheme::Pausing)
        {
            // Both schemes postpone REFs up to DDR3/DDR4's limit of 8 (JESD79-3, JESD79-4);
            // DDR5's, LPDDR5's and HBM3's own limits are not sourced here yet, and a limit set
            // too high would let the controller postpone further than the part allows
            // without any error.
            return Some(format!(
                "controller.refresh.scheme: {} postpones REFs up to DDR3/DDR4's limit of 8; {} is {}, whose postponement limit bulksim does not model yet (use demand, pcd, or a DDR4 preset)",
                r.scheme.name(),
                spec.name,
                spec.standard.name()
            ));
        }
        None
    }
}
