//! Configuration: serde structs that are the single source of truth for defaults, the table of
//! every field's unit and description (docs and `config show` are built from it), loading from
//! TOML with file/line errors, `--set key=value` overrides with "did you mean" suggestions,
//! semantic validation, and resolution of the preset into a complete `Spec`.

use crate::error::{config_err, Error, Result};
use crate::limits;
use crate::mapping::AddressMapper;
use crate::spec::presets::{preset, PRESET_NAMES};
use crate::spec::{validate_rules, Spec, Timing};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Files merged under this one (resolved by `from_file`; empty afterwards).
    #[serde(skip_serializing)]
    pub include: Includes,
    pub dram: DramConfig,
    pub controller: ControllerConfig,
    pub bulk: BulkConfig,
    pub system: SystemConfig,
    pub core: CoreConfig,
    pub cache: CacheConfig,
    pub memory: MemoryConfig,
    pub copy_engine: CopyEngineConfig,
    pub memcpy: MemcpyConfig,
    pub os: OsConfig,
    pub sim: SimConfig,
    /// `[hybrid]`: a hybrid DRAM+PCM memory with page migration (docs/hybrid.md); absent:
    /// off, and every device is plain memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<crate::hybrid::config::HybridConfig>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DramConfig {
    pub preset: String,
    pub channels: u32,
    pub ranks: u32,
    pub rows_per_subarray: u32,
    /// Columns per row per chip; 0 keeps the preset's.
    pub columns: u32,
    /// Rows per bank; 0 keeps the preset's (a smaller memory of the same part).
    pub rows: u32,
    pub timing: BTreeMap<String, u32>,
    pub temperature: Temperature,
    /// MiB of each rank the OS may use (the capacity study); 0: the whole rank.
    pub rank_capacity_mb: u64,
    /// Bits one ACT senses in the pJ/bit energy model; 0: the part's (the whole row).
    pub activation_bits: u64,
}

/// Operating temperature range: above 85 C (extended) cells leak faster and are refreshed
/// twice as often.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Temperature {
    Normal,
    Extended,
}

impl Default for DramConfig {
    fn default() -> Self {
        DramConfig {
            preset: "DDR4_8Gb_x8_2400".into(),
            channels: 1,
            ranks: 1,
            rows_per_subarray: 512,
            columns: 0,
            rows: 0,
            timing: BTreeMap::new(),
            temperature: Temperature::Normal,
            rank_capacity_mb: 0,
            activation_bits: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    Fcfs,
    Frfcfs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PagePolicy {
    Open,
    Closed,
}

/// When a channel's ranks refresh relative to one another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshPolicy {
    /// One rank at a time, spread over tREFI (`stagger` says over which ranks).
    #[serde(alias = "all_bank")]
    Staggered,
    /// Every rank at once (their REFs on consecutive command-bus cycles).
    Simultaneous,
    /// No refresh (tRFC 0).
    None,
}

impl RefreshPolicy {
    pub fn name(self) -> &'static str {
        match self {
            RefreshPolicy::Staggered => "staggered",
            RefreshPolicy::Simultaneous => "simultaneous",
            RefreshPolicy::None => "none",
        }
    }
}

/// Over which ranks staggered refreshes are spread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stagger {
    /// Each channel's ranks over tREFI: rank r of R first due at (r + 1) tREFI / R.
    Channel,
    /// All ranks of the memory over tREFI: rank k = channel x R + r of N first due at
    /// (k + 1) tREFI / N (bulksim's choice of offsets).
    System,
}

/// When an owed refresh blocks its rank (see `controller::refresh_scheme`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshScheme {
    Demand,
    Elastic,
    Pausing,
    Pcd,
    Adaptive,
}

/// When elastic refresh forces an owed REF its rank has not found idle time for
/// (`controller.refresh.elastic_deadline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElasticDeadline {
    /// Each REF 8 tREFI after it fell due: the JEDEC limit of 8 postponed REFs, reached one
    /// REF at a time (Stuecheli et al.'s forcing at the postponement limit).
    PerRef,
    /// Every REF still owed at the end of the rank's 8 x tREFI window, in one burst (the
    /// windows of the ranks end in the order and spacing of their stagger).
    Window,
}

/// `[controller.refresh]`, or a policy name alone (`controller.refresh = "none"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RefreshConfig {
    pub policy: RefreshPolicy,
    /// DDR4 fine granularity refresh: 1, 2 or 4 REFs per 1x interval.
    pub granularity: u32,
    /// With FGR, each REF takes the preset's nRFC2/nRFC4 (true) or nRFC / granularity.
    pub fgr_overhead: bool,
    pub stagger: Stagger,
    pub scheme: RefreshScheme,
    /// Elastic: idle time before an owed REF issues, in ns.
    pub idle_ns: f64,
    /// Elastic: when an owed REF is forced, `per_ref | window`.
    pub elastic_deadline: ElasticDeadline,
    /// Elastic under a stagger: a REF waits while another rank of the stagger refreshes.
    pub elastic_keeps_stagger: bool,
    /// Pausing: fragments per refresh (8: tRFC/8 each, no overhead; 4 or 2: FGR REFs).
    pub pause_granularity: u32,
    /// PCD: how long before a REF its rank's requests go first, in ns (0: tRFC).
    pub pcd_window_ns: f64,
    /// Adaptive: reads waiting per REF above which the next window refreshes at 4x.
    pub ar_reads: u32,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        RefreshConfig {
            policy: RefreshPolicy::Staggered,
            granularity: 1,
            fgr_overhead: true,
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
fn refresh_config<'de, D: serde::Deserializer<'de>>(
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    pub scheduler: Scheduler,
    pub row_hit_cap: u32,
    pub page_policy: PagePolicy,
    pub read_queue_size: u32,
    pub write_queue_size: u32,
    pub write_high_watermark: f64,
    pub write_low_watermark: f64,
    #[serde(deserialize_with = "refresh_config")]
    pub refresh: RefreshConfig,
    pub write_drain: WriteDrainConfig,
    pub address_mapping: String,
    pub xor_bank: bool,
}

/// Which requests share one write-drain state: the channel's whole write queue, or each
/// rank's writes (the Rank Assignment paper's Table II: other ranks keep serving reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainScope {
    Channel,
    Rank,
}

/// How writes compete with reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainPolicy {
    /// Reads first; writes drained between the high and low watermarks.
    Watermark,
    /// Reads and writes in one order, by the scheduler (no drain periods).
    EqualPriority,
    /// Writes are absorbed when they arrive and never reach DRAM (an upper bound).
    Ideal,
}

/// `[controller.write_drain]`: where and how writes are drained (see `controller::write_drain`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WriteDrainConfig {
    pub scope: DrainScope,
    pub policy: DrainPolicy,
    /// High watermark in entries of the scope's writes; 0: channel scope takes
    /// `controller.write_high_watermark` of the write queue, rank scope 10.
    pub high: u32,
    /// Low watermark in entries; 0 with `high` 0: the fraction (channel) or 5 (rank).
    pub low: u32,
    pub coordinate: bool,
}

impl Default for WriteDrainConfig {
    fn default() -> Self {
        WriteDrainConfig {
            scope: DrainScope::Channel,
            policy: DrainPolicy::Watermark,
            high: 0,
            low: 0,
            coordinate: false,
        }
    }
}

/// Per-rank watermarks of the Rank Assignment paper's Table II, the rank scope's default.
pub const RANK_DRAIN_WATERMARKS: (u32, u32) = (10, 5);

impl ControllerConfig {
    /// The write drain's (high, low) watermarks in entries of its scope's writes, and the
    /// write entries each scope unit may hold.
    pub fn drain_watermarks(&self) -> (usize, usize, usize) {
        let d = &self.write_drain;
        match d.scope {
            DrainScope::Channel if d.high == 0 => {
                let size = self.write_queue_size as usize;
                let high =
                    ((self.write_high_watermark * size as f64).round() as usize).clamp(1, size);
                let low = ((self.write_low_watermark * size as f64).round() as usize).min(high - 1);
                (high, low, size)
            }
            DrainScope::Channel => (
                d.high as usize,
                d.low as usize,
                self.write_queue_size as usize,
            ),
            DrainScope::Rank => {
                let (high, low) = if d.high == 0 {
                    RANK_DRAIN_WATERMARKS
                } else {
                    (d.high, d.low)
                };
                // bulksim's choice: room for two drains' worth of writes per rank.
                (high as usize, low as usize, 2 * high as usize)
            }
        }
    }
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            scheduler: Scheduler::Frfcfs,
            row_hit_cap: 0,
            page_policy: PagePolicy::Open,
            read_queue_size: 32,
            write_queue_size: 32,
            write_high_watermark: 0.8,
            write_low_watermark: 0.2,
            refresh: RefreshConfig::default(),
            write_drain: WriteDrainConfig::default(),
            address_mapping: "RoBaRaCoCh".into(),
            xor_bank: false,
        }
    }
}

/// How copy and initialization requests execute (see `bulk`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// Over the channel by the memory side, with no caches: read each source line, write
    /// each destination line, through the controller's queues (a copy loop's memory traffic;
    /// not the full system's `cpu`, which runs the loop on a core through the caches).
    Channel,
    /// The memory controller's DMA engine: the same channel traffic, booked as DMA.
    McDma,
    /// In DRAM: Fast Parallel Mode, Pipelined Serial Mode, channel fallback for the rest.
    Rowclone,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BulkConfig {
    pub mechanism: Mechanism,
    pub lines_in_flight: u32,
    pub queue_size: u32,
    pub fpm: bool,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            mechanism: Mechanism::Channel,
            lines_in_flight: 64,
            queue_size: 16,
            fpm: true,
        }
    }
}

/// How the full system executes memcpy, meminit, copy-on-write and zeroing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemMechanism {
    Cpu,
    McDma,
    Rowclone,
    RowcloneZi,
}

impl SystemMechanism {
    /// The mechanism's config name.
    pub fn name(self) -> &'static str {
        match self {
            SystemMechanism::Cpu => "cpu",
            SystemMechanism::McDma => "mc_dma",
            SystemMechanism::Rowclone => "rowclone",
            SystemMechanism::RowcloneZi => "rowclone_zi",
        }
    }
}

/// How the `cpu` mechanism's store loop treats a destination line it overwrites whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineStores {
    /// Write-allocate with fetch: the line is read from memory before the stores land.
    Fetch,
    /// The line is allocated in the cache without a read, as string stores (`rep movs`,
    /// `rep stos`) and full-line streaming stores do.
    Allocate,
}

/// Who executes initializations (meminit, first-touch zeroing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InitMechanism {
    /// `system.bulk_mechanism`, as copies.
    Same,
    /// The core's store loop through the cache, whatever copies use.
    Cpu,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SystemConfig {
    pub bulk_mechanism: SystemMechanism,
    pub init_mechanism: InitMechanism,
    pub core_ghz: f64,
    pub cpu_full_line_stores: LineStores,
    pub time_slice_instructions: u64,
    pub bulk_offload_min_bytes: u64,
    /// Each thread's event stream restarts from its beginning when it ends
    /// (`workload::looping`); needs `sim.stop_after_dram_accesses` or
    /// `sim.measure_instructions`.
    pub loop_workloads: bool,
    /// Cores in the full system; 0: one per starting thread.
    pub cores: u32,
    /// How `M` events and copy-on-write copies run (`bulk`: by `bulk_mechanism`).
    pub memcpy: MemcpyMode,
}

/// How the full system runs a memcpy (`system.memcpy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemcpyMode {
    /// As one bulk operation by `system.bulk_mechanism` (today's behaviour).
    Bulk,
    /// The baseline library routine: word loads and stores through the caches.
    Software,
    /// The copy-engine routine: `movblk` for each whole destination line.
    Movblk,
    /// The software routine with non-temporal stores through write-combining buffers for
    /// each whole destination memory line (the copy-engine paper's Sec. 3 alternative).
    SoftwareNt,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig {
            bulk_mechanism: SystemMechanism::Cpu,
            init_mechanism: InitMechanism::Same,
            core_ghz: 3.2,
            cpu_full_line_stores: LineStores::Fetch,
            time_slice_instructions: 3_000_000,
            bulk_offload_min_bytes: 4096,
            loop_workloads: false,
            cores: 0,
            memcpy: MemcpyMode::Bulk,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoreConfig {
    pub window: u32,
    pub width: u32,
    /// Loads, stores and movblks dispatched per core cycle at most; 0: up to `width`.
    pub mem_ports: u32,
    /// Store misses that may wait for their line at once; 0: no limit.
    pub store_queue: u32,
    /// Loads, stores and movblks in the window at once (a load/store queue); 0: no limit.
    pub lsq: u32,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            window: 128,
            width: 3,
            mem_ports: 0,
            store_queue: 0,
            lsq: 0,
        }
    }
}

/// The cache hierarchy, levels listed from the core down.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    pub level: Vec<CacheLevelConfig>,
    /// Bytes of one address on a port between levels (traffic counts them).
    pub address_bytes: u32,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            level: vec![CacheLevelConfig::default()],
            address_bytes: 4,
        }
    }
}

/// One cache level (`[[cache.level]]`): write-back, write-allocate, LRU, non-inclusive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheLevelConfig {
    pub size_kb: u32,
    pub ways: u32,
    pub line_bytes: u32,
    pub hit_cycles: u32,
    pub shared: bool,
    pub mshrs: u32,
    pub writeback_buffer: u32,
    /// Core cycles to cross the port above this level, each way.
    pub port_cycles: u32,
    /// A miss leaves for the level below only after this level's lookup (`hit_cycles`).
    pub serial_lookup: bool,
    /// A miss that pushes out a dirty line waits for that line's write-back below.
    pub writeback_delays_miss: bool,
}

impl Default for CacheLevelConfig {
    fn default() -> Self {
        CacheLevelConfig {
            size_kb: 1024,
            ways: 16,
            line_bytes: 64,
            hit_cycles: 20,
            shared: false,
            mshrs: 8,
            writeback_buffer: 8,
            port_cycles: 0,
            serial_lookup: false,
            writeback_delays_miss: false,
        }
    }
}

/// Main memory: the devices in the physical address space, in order from address 0. Empty:
/// one device described by `[dram]`, `[controller]` and `[bulk]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    pub device: Vec<DeviceConfig>,
    /// Core cycles a fixed-latency memory answers in; 0: the DRAM devices time requests.
    pub fixed_latency_cycles: u32,
}

/// One memory device (`[[memory.device]]`): its own part and organisation, and the controller
/// settings a hybrid memory's two parts need apart (CMMP's Table I: open-page DRAM, closed-page
/// PCM, each with its own mapping and queues); the rest of the controller and the bulk
/// settings are the top-level ones. Unset (empty, 0, absent): the top level's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    pub name: String,
    pub preset: String,
    pub channels: u32,
    pub ranks: u32,
    pub rows: u32,
    pub activation_bits: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_policy: Option<PagePolicy>,
    pub address_mapping: String,
    pub read_queue_size: u32,
    pub write_queue_size: u32,
}

/// Copy engines beside the cache levels (`[copy_engine]`, `copy_engine` module).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CopyEngineConfig {
    pub policy: CopyEnginePolicy,
    /// Movblks queued at the first-level engine.
    pub fifo_depth: u32,
    pub ordering: CopyOrdering,
    pub parallel_reads: bool,
    /// Two stages per engine: the next movblk reads its sources while the one before it
    /// finishes (`copy_engine::engine`).
    pub pipeline: bool,
    /// Core cycles of the shift buffer's realignment.
    pub realign_cycles: u32,
    pub nt_last_level: bool,
    pub partial_line: PartialLine,
    /// `dce_rowclone`: bytes of one destination chunk handed to the memory controller.
    pub dram_chunk_bytes: u32,
    /// `dce_rowclone`: core cycles of the tag probe that decides a chunk's place.
    pub probe_cycles: u32,
    pub dram_rule: DramRule,
}

/// When `dce_rowclone` hands a chunk to the memory controller (`copy_engine.dram_rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DramRule {
    /// When no cache level holds any of its source lines (a tag probe).
    Probe,
    /// Always (no probe; the controller's coherence moves cached data).
    Always,
}

/// How the last engine writes a destination block smaller than its level's line
/// (`copy_engine.partial_line`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PartialLine {
    /// The rest of the line is taken from below at no cost (bulksim's choice).
    Merge,
    /// The line is fetched from below first, then written.
    Fetch,
    /// The line keeps a valid bit per block: only the block written is valid (bulksim's
    /// choice of the paper's sector-valid option); a miss to the rest fetches and merges,
    /// a write-back writes only valid bytes.
    Sector,
}

impl Default for CopyEngineConfig {
    fn default() -> Self {
        CopyEngineConfig {
            policy: CopyEnginePolicy::None,
            fifo_depth: 8,
            ordering: CopyOrdering::Overlap,
            parallel_reads: false,
            pipeline: true,
            realign_cycles: 2,
            nt_last_level: false,
            partial_line: PartialLine::Merge,
            dram_chunk_bytes: 4096,
            probe_cycles: 0,
            dram_rule: DramRule::Probe,
        }
    }
}

/// Where movblks run (`copy_engine.policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyEnginePolicy {
    None,
    CeL1,
    Dce,
    DceNt,
    /// As `DceNt`, and the movblk memcpy hands whole destination chunks to RowClone.
    DceRowclone,
}

impl CopyEnginePolicy {
    /// The policy's config name.
    pub fn name(self) -> &'static str {
        match self {
            CopyEnginePolicy::None => "none",
            CopyEnginePolicy::CeL1 => "ce_l1",
            CopyEnginePolicy::Dce => "dce",
            CopyEnginePolicy::DceNt => "dce_nt",
            CopyEnginePolicy::DceRowclone => "dce_rowclone",
        }
    }

    /// Cache levels with an engine beside them.
    pub fn engine_levels(self) -> usize {
        match self {
            CopyEnginePolicy::None => 0,
            CopyEnginePolicy::CeL1 => 1,
            CopyEnginePolicy::Dce | CopyEnginePolicy::DceNt | CopyEnginePolicy::DceRowclone => 2,
        }
    }
}

/// Which younger accesses wait for queued movblks (`copy_engine.ordering`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyOrdering {
    Overlap,
    Serial,
}

/// The instruction costs of the memcpy routines (`[memcpy]`, `system.memcpy`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemcpyConfig {
    pub call_instructions: u32,
    pub word_bytes: u32,
    pub check_instructions: u32,
    pub loop_instructions: u32,
    pub wc_buffers: u32,
}

impl Default for MemcpyConfig {
    fn default() -> Self {
        MemcpyConfig {
            call_instructions: 8,
            word_bytes: 4,
            check_instructions: 6,
            loop_instructions: 2,
            wc_buffers: 4,
        }
    }
}

/// How the OS places physical frames (see `os::allocator` for each policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllocatorPolicy {
    Scatter,
    SubarrayAware,
    InterBank,
    /// Rank Assignment for timing runs: each thread's pages on its own rank.
    RankStatic,
    /// Baseline CLOCK page replacement over all frames.
    Clock,
    /// Rank Assignment's modified CLOCK (per-rank pointers).
    RankClock,
}

impl AllocatorPolicy {
    /// Whether the policy places a thread's pages on its rank (the mapping must keep a page
    /// in one rank).
    pub fn is_rank_aware(self) -> bool {
        matches!(
            self,
            AllocatorPolicy::RankStatic | AllocatorPolicy::RankClock
        )
    }

    /// Whether the policy replaces pages when memory is full (CLOCK).
    pub fn replaces_pages(self) -> bool {
        matches!(self, AllocatorPolicy::Clock | AllocatorPolicy::RankClock)
    }
}

/// How `rank_clock` picks a new thread's preferred (and second) rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreferredRank {
    MostFree,
    LeastDelay,
}

/// What a trace's page copy or initialization record (the rowclone format's `C` and `S`)
/// does to its destination page first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceBulkDestinations {
    /// The page gets a new frame when the record happens, as the kernel allocates a
    /// copy-on-write destination or a page to zero (a copy's from the source's subarray
    /// under `subarray_aware`).
    Allocate,
    /// The page keeps the frame its first touch gave it.
    Keep,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OsConfig {
    pub allocator: AllocatorPolicy,
    pub seed: u64,
    pub fault_instructions: u32,
    /// `rank_static`: each thread's global rank (empty: thread i on rank i mod R).
    pub thread_ranks: Vec<u32>,
    /// `rank_static`: probability that a new page goes to a random other rank.
    pub mapping_error: f64,
    pub preferred_rank: PreferredRank,
    /// Pages per core kept referenced when the CLOCK pointers roll over (TLB reach).
    pub tlb_pages: u32,
    /// What a trace's whole-page copy or initialization record does to its destination.
    pub trace_bulk_destinations: TraceBulkDestinations,
}

impl Default for OsConfig {
    fn default() -> Self {
        OsConfig {
            allocator: AllocatorPolicy::Scatter,
            seed: 1,
            fault_instructions: 0,
            thread_ranks: Vec::new(),
            mapping_error: 0.0,
            preferred_rank: PreferredRank::MostFree,
            tlb_pages: 64,
            trace_bulk_destinations: TraceBulkDestinations::Allocate,
        }
    }
}

/// Whether the full system simulates time (caches, DRAM) or only the cores and the OS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimMode {
    Timing,
    Functional,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    pub skip_idle: bool,
    pub record_intervals: bool,
    /// Compute the `interruptions` stats (which threads each refresh and write drain
    /// stalled, DRAM accesses per thread and rank); records intervals internally.
    pub interruption_metrics: bool,
    /// Host memory a run may allocate up front, in MiB; 0: the machine's available memory.
    pub memory_limit_mb: u64,
    /// The longest run allowed (memory cycles in trace replay, core cycles in the full
    /// system): a guard against a corrupt cycle or instruction count running for days.
    pub max_cycles: u64,
    /// A full-system run ends when the memory devices have accepted this many requests
    /// (reads and writes); 0: off.
    pub stop_after_dram_accesses: u64,
    /// Instructions each core retires before its measured window (full system); 0: none.
    pub warmup_instructions: u64,
    /// Instructions each core's measured window lasts (full system); the run ends when
    /// every core has finished its window; 0: off.
    pub measure_instructions: u64,
    pub mode: SimMode,
}

/// `sim.max_cycles` by default: about 83 s of DDR4-2400 memory cycles or 25 s of a 4 GHz core,
/// a thousand times the longest shipped experiment.
pub const DEFAULT_MAX_CYCLES: u64 = 100_000_000_000;

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            skip_idle: true,
            record_intervals: false,
            interruption_metrics: false,
            memory_limit_mb: 0,
            max_cycles: DEFAULT_MAX_CYCLES,
            stop_after_dram_accesses: 0,
            warmup_instructions: 0,
            measure_instructions: 0,
            mode: SimMode::Timing,
        }
    }
}

/// `include = "base.toml"` or `include = ["a.toml", "b.toml"]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Includes {
    #[default]
    None,
    One(String),
    Many(Vec<String>),
}

impl Includes {
    fn paths(&self) -> Vec<&str> {
        match self {
            Includes::None => vec![],
            Includes::One(p) => vec![p.as_str()],
            Includes::Many(ps) => ps.iter().map(String::as_str).collect(),
        }
    }
}

/// Unit and description of one config field.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FieldDoc {
    pub key: &'static str,
    pub unit: &'static str,
    pub description: &'static str,
}

const fn doc(key: &'static str, unit: &'static str, description: &'static str) -> FieldDoc {
    FieldDoc {
        key,
        unit,
        description,
    }
}

/// Every config field. Tests keep this in step with the structs.
pub const CONFIG_FIELDS: &[FieldDoc] = &[
    doc(
        "include",
        "paths",
        "config files merged under this one (relative to it); this file's values win",
    ),
    doc(
        "dram.preset",
        "name",
        "memory part: organisation, speed and timing (`bulksim spec list`)",
    ),
    doc(
        "dram.channels",
        "channels",
        "independent channels, each with its own controller; a power of two",
    ),
    doc(
        "dram.ranks",
        "ranks per channel",
        "ranks sharing each channel's buses; a power of two",
    ),
    doc(
        "dram.rows_per_subarray",
        "rows",
        "rows sharing one row buffer (subarray size)",
    ),
    doc(
        "dram.rows",
        "rows per bank",
        "capacity override (0 = the preset's): a power of two up to the preset's rows; dram.rows_per_subarray must not exceed it",
    ),
    doc(
        "dram.columns",
        "columns per row per chip",
        "row size override (0 = the preset's); e.g. 512 on an x8 DDR3 part gives the 4 KB rank rows the RowClone paper assumes",
    ),
    doc(
        "dram.timing",
        "cycles (tCK) per entry",
        "overrides of the preset's timing parameters by name, e.g. { nCL = 17 }",
    ),
    doc(
        "dram.temperature",
        "normal | extended",
        "extended (above 85 C): the preset's nREFI, nREFI2 and nREFI4 are halved (rounded down) before dram.timing overrides apply",
    ),
    doc(
        "dram.activation_bits",
        "bits per ACT",
        "parts with pJ/bit energies (CMMP's, `memory.energy.per_bit`): bits one ACT senses, charged the array-read energy; 0: the part's (the whole row, 32,768 bits of a 4 KB row); at most the row's bits",
    ),
    doc(
        "dram.rank_capacity_mb",
        "MiB per rank",
        "frames the OS may use in each rank (the capacity study of docs/rank_assignment.md, \"Page allocation\"): each rank's lowest-numbered usable frames up to this size; 0 = the whole rank. With clock or rank_clock a full memory evicts pages; otherwise it is out of memory",
    ),
    doc(
        "controller.scheduler",
        "fcfs | frfcfs",
        "fcfs: oldest ready request first; frfcfs: ready row hits first, then oldest ready",
    ),
    doc(
        "controller.row_hit_cap",
        "column commands",
        "frfcfs: after this many hits to one open row, stop favouring its hits (0 = no cap)",
    ),
    doc(
        "controller.page_policy",
        "open | closed",
        "open: rows stay open until a conflict; closed: every access auto-precharges (RDA/WRA)",
    ),
    doc(
        "controller.read_queue_size",
        "requests",
        "read queue entries per channel",
    ),
    doc(
        "controller.write_queue_size",
        "requests",
        "write queue entries per channel",
    ),
    doc(
        "controller.write_high_watermark",
        "fraction of write queue",
        "write drain starts when the write queue holds this much",
    ),
    doc(
        "controller.write_low_watermark",
        "fraction of write queue",
        "write drain stops at this occupancy if reads wait",
    ),
    doc(
        "controller.refresh",
        "table | policy name",
        "refresh settings below; a name alone (e.g. \"none\") sets controller.refresh.policy with the other keys at their defaults",
    ),
    doc(
        "controller.refresh.policy",
        "staggered | simultaneous | none",
        "staggered (all_bank is an alias): one all-bank REF per rank every tREFI, ranks offset over tREFI (see stagger); simultaneous: every rank due at once; none: no refresh (tRFC 0)",
    ),
    doc(
        "controller.refresh.granularity",
        "1 | 2 | 4",
        "DDR4 fine granularity refresh: tREFI / granularity between REFs (the preset's nREFI2/nREFI4 when given), each taking tRFC at that granularity",
    ),
    doc(
        "controller.refresh.fgr_overhead",
        "bool",
        "with granularity 2 or 4: true takes the preset's nRFC2/nRFC4 (JEDEC: each REF pays its own recovery); false takes nRFC / granularity (the paper's optimistic FGR)",
    ),
    doc(
        "controller.refresh.stagger",
        "channel | system",
        "staggered policy: channel spreads each channel's R ranks (rank r first due at (r+1) tREFI/R); system spreads all N ranks of the memory (rank channel*R + r due at (k+1) tREFI/N, bulksim's choice); refreshes that still overlap are counted in refresh.overlap_ns",
    ),
    doc(
        "controller.refresh.scheme",
        "demand | elastic | pausing | pcd | adaptive",
        "when an owed REF blocks its rank: demand when due; elastic (Stuecheli et al.) once the rank has had no queued request for idle_ns, or when forced (elastic_deadline); pausing (Nair et al.) in pause_granularity fragments per refresh, each issued while the rank has nothing queued, forced once 8 x tREFI late; pcd (Mukundan et al.) on demand, with the rank's requests first in the pcd_window_ns before its REF; adaptive (Mukundan et al.) on demand at 1x or 4x granularity, chosen per 8 x tREFI window by ar_reads",
    ),
    doc(
        "controller.refresh.ar_reads",
        "reads per REF",
        "adaptive: the next 8 x tREFI window refreshes at 4x when more reads than this waited, on average, for each REF's rank as it issued (bulksim's choice 8)",
    ),
    doc(
        "controller.refresh.idle_ns",
        "ns",
        "elastic: how long a rank must have had nothing queued before an owed REF issues (bulksim's choice 200 ns)",
    ),
    doc(
        "controller.refresh.elastic_deadline",
        "per_ref | window",
        "elastic: when a REF the rank found no idle time for is forced. per_ref: once the rank owes 8 (7 x tREFI after it fell due, a tREFI before a 9th would be owed), one REF at a time (DDR4 allows at most 8 postponed REFs, JESD79-4 4.26; Stuecheli et al., MICRO 2010, force a REF when the postponed count reaches that limit); the default, where the Rank Assignment paper's §VI-I says leftovers go at the end of the 8 x tREFI window; window: every REF still owed at the end of the rank's 8 x tREFI window, as one burst (a literal reading of the Rank Assignment paper's §VI-I, whose windows it does not align; here they end in stagger order)",
    ),
    doc(
        "controller.refresh.elastic_keeps_stagger",
        "bool",
        "elastic with a staggered policy: true = a REF (early, in idle time, or forced) waits while another rank of the stagger (the channel's ranks, or all ranks under stagger = system) is refreshing, so one rank refreshes at a time as on demand (bulksim's choice: the stagger exists for peak power, Rank Assignment paper §III-A); false = each rank refreshes on its own and idle ranks may refresh together",
    ),
    doc(
        "controller.refresh.pause_granularity",
        "8 | 4 | 2",
        "pausing: fragments per refresh; 8 = the paper's optimistic tRFC/8 fragments without overhead (80 ns on 32 Gb), 4 or 2 = realistic FGR REFs (the preset's nRFC4/nRFC2)",
    ),
    doc(
        "controller.refresh.pcd_window_ns",
        "ns",
        "pcd: the rank's queued requests go first this long before its REF falls due (0: tRFC)",
    ),
    doc(
        "controller.write_drain.scope",
        "channel | rank",
        "channel: one drain state for the channel's write queue (reads wait during a drain); rank: each rank drains its own writes while the other ranks keep serving reads, with 2 x high write entries per rank (bulksim's choice)",
    ),
    doc(
        "controller.write_drain.policy",
        "watermark | equal_priority | ideal",
        "watermark: reads first, writes drained from high down to low; equal_priority: reads and writes in one order by the scheduler (two that reach the controller in one cycle: the one that left the last cache level first), no drains; ideal: writes absorbed on arrival, never issued (an upper bound)",
    ),
    doc(
        "controller.write_drain.high",
        "writes",
        "a drain starts when the scope holds this many writes; 0: channel scope uses controller.write_high_watermark, rank scope 10 (the paper's Table II)",
    ),
    doc(
        "controller.write_drain.low",
        "writes",
        "a drain stops at this many writes if reads wait; used when high is set (rank scope default 5)",
    ),
    doc(
        "controller.write_drain.coordinate",
        "bool",
        "rank scope: when one rank starts a drain, every rank of the channel with writes starts one too (each stops at its own low watermark)",
    ),
    doc(
        "controller.address_mapping",
        "name | field order",
        "non_interleaved, channel_interleaved, bank_interleaved or bank_xor (the paper's Fig 5, docs/rank_assignment.md), or address bits most significant field first from Ch Ra Bg Ba Ro Co; a field may appear twice if one part gives its bit count (Co2)",
    ),
    doc(
        "controller.xor_bank",
        "bool",
        "XOR the bank bits with the low row bits (permutation interleaving); bank_xor implies it",
    ),
    doc(
        "bulk.mechanism",
        "channel | mc_dma | rowclone",
        "trace replay: how copy and init requests execute: channel and mc_dma over the channel (line reads and writes through the controller's queues, no caches; mc_dma is booked as DMA), rowclone in DRAM (FPM, PSM, channel fallback); rowclone reserves a zero row per subarray and a temporary row per bank",
    ),
    doc(
        "bulk.lines_in_flight",
        "lines",
        "the channel copier's buffer (mechanisms channel and mc_dma, RowClone's fallback): reads fill it, then its lines are written; default one 4 KB page",
    ),
    doc(
        "bulk.queue_size",
        "operations",
        "bulk operations in flight at once; further ones wait at the front end like a full request queue",
    ),
    doc(
        "bulk.fpm",
        "bool",
        "rowclone: allow Fast Parallel Mode for copies; false sends every in-DRAM copy through PSM (the paper's PSM configuration); zeroing whole rows uses FPM from the zero row either way",
    ),
    doc(
        "system.bulk_mechanism",
        "cpu | mc_dma | rowclone | rowclone_zi",
        "full system: how memcpy, meminit, copy-on-write and zeroing execute: cpu (line loads and stores through the cache), mc_dma, rowclone, rowclone_zi (RowClone zeroing that also inserts clean zero lines into the cache); sets bulk.mechanism below the caches (cpu: channel, for pieces spanning memory devices)",
    ),
    doc(
        "system.init_mechanism",
        "same | cpu",
        "full system: how meminit and first-touch zeroing execute: same (as system.bulk_mechanism) or cpu (the core's store loop, while copies use system.bulk_mechanism; the RowClone paper's PSM configuration accelerates copies only)",
    ),
    doc("system.core_ghz", "GHz", "core clock frequency (the memory clock is the preset's)"),
    doc("system.bulk_offload_min_bytes", "bytes", "the smallest piece of a memcpy/meminit (the part within one page) that goes to system.bulk_mechanism; smaller pieces run as the core's copy loop through the cache. The default, one 4 KB page, is the RowClone paper's minimum copy granularity (section 4.3.2: software uses the instructions for regions at least this large; its evaluation's copies and initializations are whole pages); 1 sends every piece"),
    doc("system.time_slice_instructions", "instructions", "a thread that has retired this many instructions since it got its core gives the core to the next runnable thread there (a forked child or spawned thread; it drains its window first); 0: a thread keeps its core until it waits or exits. bulksim's choice: about 1 ms at 3.2 GHz and IPC 1, the order of Linux's scheduling granularity"),
    doc("system.cores", "cores", "full system: cores; 0: one per thread that starts the workload. More (at most 1024) add spare cores that start idle: a forked or spawned thread starts on an idle spare core when there is one, else it waits for its parent's core (so an 8-thread process runs its threads side by side with 8 cores); fewer than the starting threads is an error"),
    doc("system.loop_workloads", "bool", "full system: each thread's event stream starts again from its beginning when it ends (its end or an exit), so short traces run until sim.stop_after_dram_accesses or the end of every core's measured window (sim.measure_instructions), one of which it needs; waits (`W`) are skipped (looped children never exit) and later passes skip the first's maps and thread starts (their effect stays); a later pass that unmaps or execs is an error (docs/workloads.md, Looping)"),
    doc(
        "system.cpu_full_line_stores",
        "fetch | allocate",
        "cpu mechanism: a destination line a copy or initialization overwrites whole is read from memory first (fetch: write-allocate, a kernel's ordinary store loop) or allocated in the cache without a read (allocate: string or full-line stores); partial lines always fetch",
    ),
    doc("core.window", "instructions", "instruction window (reorder buffer) entries per core"),
    doc("core.width", "instructions per cycle", "dispatch and retire width per core"),
    doc("core.store_queue", "stores", "stores that missed the first level and wait for their line (write-allocate) at once, per core; one more stalls dispatch until a fill completes; 0: no limit, a store never stalls the core"),
    doc("core.lsq", "memory instructions", "loads, stores and movblks in the window at once, per core (a load/store queue: each holds an entry from dispatch until it retires, in order, so a load waiting for its line holds the younger ones' entries too); when it is full, dispatch stops (SimpleScalar's sim-outorder, the copy-engines paper's simulator: 8 entries); 0: no limit beyond core.window"),
    doc("core.mem_ports", "accesses per cycle", "loads, stores and movblks a core dispatches per cycle at most (memory ports); 0: as many as core.width"),
    doc("cache.address_bytes", "bytes", "size of one address crossing a port between cache levels: traffic stats count each line moved as line + address, a copy-engine message as two addresses (the copy-engines paper leaves it open: 4, a 32-bit target, is bulksim's choice)"),
    doc("cache.level[].port_cycles", "core cycles", "time to cross the port above this level, each way (the copy-engines paper's off-chip L2: 10); a fill answered here takes hit_cycles + 2 x port_cycles, and a copy-engine message takes port_cycles"),
    doc("cache.level[].writeback_delays_miss", "bool", "a miss (or a copy engine's destination write) whose victim is dirty first writes the victim back: it leaves only after the write-back has crossed the port below and been written there (the level below's port_cycles + hit_cycles; memory.fixed_latency_cycles from the last level; nothing when DRAM devices time the memory): a blocking write-back, for studies of its cost; false: victims leave through the write-back buffer and delay nothing (as in SimpleScalar, whose write-backs cost no time: unlimited write buffers)"),
    doc("cache.level[].serial_lookup", "bool", "a miss leaves for the level below only after this level's lookup (hit_cycles); false: at once, the lookup overlapping the request below"),
    doc("memory.fixed_latency_cycles", "core cycles", "when above 0, memory answers every read this many core cycles after the last level sends it, with no contention, and takes write-backs at once (the copy-engines paper's 100-cycle memory); the DRAM devices only hold the address space. 0: the DRAM devices time every request"),
    doc("system.memcpy", "bulk | software | movblk | software_nt", "how memcpy (`M` events) runs: bulk (one operation by system.bulk_mechanism), software (the library routine: memcpy.call_instructions, then word loads and stores through the caches), movblk (the copy-engine routine: memcpy.check_instructions more, software for the head up to a line-aligned destination and for the tail, one movblk plus memcpy.loop_instructions per line; needs copy_engine.policy), software_nt (the software routine with non-temporal stores, the copy-engine paper's Sec. 3 alternative: memcpy.check_instructions more, ordinary stores for the head up to a destination aligned to the last level's line and for the tail, non-temporal stores for every whole line between, which go around the caches (no fill, no allocation; cached copies of the line are dropped, dirty ones written back first) into memcpy.wc_buffers write-combining buffers, then a fence; docs/copy_engines.md)"),
    doc("memcpy.call_instructions", "instructions", "non-memory instructions of one memcpy call (call, return, set-up); bulksim's choice, the paper's code is unknown"),
    doc("memcpy.word_bytes", "bytes", "software memcpy: bytes per load and store (4: a 32-bit word, bulksim's choice); a power of two from 1 to 8"),
    doc("memcpy.check_instructions", "instructions", "movblk memcpy: the size and alignment test per call (why the copy-engines paper's gains grow with the payload)"),
    doc("memcpy.loop_instructions", "instructions", "movblk memcpy: loop instructions per movblk (pointer increments, count, branch)"),
    doc("memcpy.wc_buffers", "buffers per core", "software_nt memcpy: write-combining buffers of one last-level line each; a full one is written to memory as one line write, a store into another line with all of them open evicts the oldest early as a partial (masked) write of its stored bytes, the routine's fence writes out the rest. 1 to 64; 4 from Intel's Pentium 4 and Xeon optimization guide as Intel's article \"Write-Combining Store Buffers on Hyper-Threading Technology Enabled Systems\" quotes it (write to no more than four lines at a time: more starts flushing the buffers)"),
    doc("copy_engine.policy", "none | ce_l1 | dce | dce_nt | dce_rowclone", "copy engines beside the caches (docs/copy_engines.md): none; ce_l1 (an engine beside the first level only: every movblk runs there, missing source lines fetched and allocated); dce (engines beside the first two levels: a movblk runs in the first level when one of its source lines is there, else in the second, missing lines allocated); dce_nt (the same, missing source lines go to the engine only); dce_rowclone (beyond the paper: dce_nt, and the movblk memcpy hands each whole destination chunk of copy_engine.dram_chunk_bytes to the memory controller, which runs it as RowClone, when no cache holds its source; needs system.bulk_mechanism = rowclone or rowclone_zi)"),
    doc("copy_engine.dram_chunk_bytes", "bytes", "dce_rowclone: the destination chunk the movblk memcpy hands down as one operation: a power of two from the last level's line to the 4096-byte page (bulksim's choice: 4096, one page, RowClone's copy granularity); a chunk goes down only when its source has the destination's offset within a last-level line and lies in one physically contiguous range, else it runs as movblks"),
    doc("copy_engine.probe_cycles", "core cycles", "dce_rowclone: the tag probe of every cache level for a chunk's source lines holds the memcpy's next instruction this long (bulksim's choice: 0, the probe overlapping the routine's own work)"),
    doc("copy_engine.dram_rule", "probe | always", "dce_rowclone: hand a chunk down when no cache level holds any of its source lines (probe), or always (the controller's RowClone coherence copies dirty source lines in the cache under the destination's tag)"),
    doc("copy_engine.fifo_depth", "movblks", "movblks retired into the first-level engine's queue and not yet done; a full queue stalls dispatch (the paper leaves it open: 8 is bulksim's choice)"),
    doc("copy_engine.ordering", "overlap | serial", "younger loads and stores wait for queued movblks whose ranges they overlap (overlap) or for every queued movblk (serial)"),
    doc("copy_engine.parallel_reads", "bool", "an engine reads its two source lines at once (two banks) instead of one after the other (the paper assumes serial reads)"),
    doc("copy_engine.pipeline", "bool", "an engine works in two stages: the next movblk reads its source lines (and, at the first level, decides where it runs) while the one before it realigns and writes its destination or sends its message down (true: bulksim's reading of the paper's FIFO 'to allow pipelining several copy instructions'), or one movblk at a time (false); a movblk reading the line the one before it writes waits for it"),
    doc("copy_engine.realign_cycles", "core cycles", "the shift buffer's realignment of the two source lines (the paper: 2)"),
    doc("copy_engine.partial_line", "merge | fetch | sector", "the last engine writes a block smaller than its level's line (32 B into a 64-B L2 line) into a line it lacks: merge (the line is made whole from the level below and memory at no cost: bytes exact, a later miss to the other half is a hit; bulksim's choice, the digest's option b), fetch (the line is read from below first, costing a miss) or sector (the line keeps a valid bit per first-level line and is put in valid in the block only, without a fetch: a later fill or engine read of an invalid part misses, fetches the line and merges it under the valid part, counted in cache.<level>.sector_misses; a write-back writes only the valid parts, masked; bulksim's choice, the digest's option a)"),
    doc("copy_engine.nt_last_level", "bool", "dce_nt: the last engine allocates the source lines it fetches from memory (true) or hands them to the engine only (false, bulksim's reading of the paper's non-temporal rule)"),
    doc(
        "cache.level",
        "list of tables",
        "the cache levels from the core down (`[[cache.level]]`; override one with `--set cache.level.N.key=value`); default: one private 1 MiB level",
    ),
    doc("cache.level[].size_kb", "KiB", "capacity: per core when private, in total when shared"),
    doc("cache.level[].shared", "bool", "one array shared by all cores instead of a private one per core (MSHRs stay per core)"),
    doc("cache.level[].ways", "ways", "associativity (LRU, write-back, write-allocate, non-inclusive)"),
    doc("cache.level[].line_bytes", "bytes", "line size: a power of two, never smaller than the level above's; the last level's is 64 (one DRAM burst)"),
    doc("cache.level[].hit_cycles", "core cycles", "latency of a hit at this level (first level: load-to-use; below: added to the miss of the level above)"),
    doc("cache.level[].mshrs", "misses", "misses in flight per core at this level (misses to a line in flight merge)"),
    doc(
        "cache.level[].writeback_buffer",
        "lines",
        "write-backs each array of the level holds for the level below (per array); while it is full the level starts no miss and allocates no line, since each needs room for its victim (gem5's example L2 uses 8)",
    ),
    doc(
        "memory.device",
        "list of tables",
        "memory devices from physical address 0 up, each in the next range as large as its organisation (`[[memory.device]]`); empty: one device from [dram]",
    ),
    doc("memory.device[].name", "name", "the device's name in stats (default deviceN); names differ"),
    doc("memory.device[].preset", "name", "the device's part (empty: dram.preset); its clock is the part's"),
    doc("memory.device[].channels", "channels", "channels of this device (0: dram.channels)"),
    doc("memory.device[].ranks", "ranks per channel", "ranks of this device (0: dram.ranks)"),
    doc("memory.device[].rows", "rows per bank", "rows of this device's banks (0: dram.rows), e.g. a small DRAM beside a large PCM"),
    doc("memory.device[].activation_bits", "bits per ACT", "this device's dram.activation_bits (0: dram.activation_bits)"),
    doc("memory.device[].page_policy", "open | closed", "page policy of this device's controllers (absent: controller.page_policy); CMMP's Table I: open for DRAM, closed for PCM"),
    doc("memory.device[].address_mapping", "field order or mapping name", "address mapping of this device (empty: controller.address_mapping); CMMP's Table I: RoRaBaCoCh for DRAM, RoCoRaBaCh for PCM"),
    doc("memory.device[].read_queue_size", "requests", "read queue entries per channel of this device (0: controller.read_queue_size); bulksim's queues are channel-wide, so Table I's per-bank queues are banks x entries per bank (docs/hybrid.md)"),
    doc("memory.device[].write_queue_size", "requests", "write queue entries per channel of this device (0: controller.write_queue_size)"),
    doc(
        "os.allocator",
        "scatter | subarray_aware | inter_bank",
        "physical page allocation: scatter (seeded random order, like a stock kernel), subarray_aware (copy-on-write destinations from the source's subarray when free: FPM), inter_bank (from a neighbouring bank of the source's channel and rank: inter-bank PSM), rank_static (Rank Assignment: thread i's pages on global rank i mod R, in the scattered order within the rank), clock (CLOCK page replacement over all frames in physical order), rank_clock (Rank Assignment's modified CLOCK: per-rank pointers); docs/rank_assignment.md, \"Page allocation\"",
    ),
    doc("os.seed", "integer", "seed of the page allocator's order (and of os.mapping_error's draws)"),
    doc(
        "os.thread_ranks",
        "list of global ranks",
        "rank_static only (an error with another allocator): the preferred rank of each thread in workload order (global rank = channel x ranks per channel + rank, devices in order); one entry per thread; empty = thread i on rank i mod R",
    ),
    doc(
        "os.mapping_error",
        "probability (0..1)",
        "rank_static only (above 0 an error with another allocator): each new page goes, with this probability, to a uniformly random rank other than its thread's (the paper's Fig 8 mapping error)",
    ),
    doc(
        "os.preferred_rank",
        "most_free | least_delay",
        "rank_clock: a new thread's preferred rank, and its second from the other ranks by the same rule: most_free (most frames neither in use nor referenced; ties fewest threads, then lowest rank) or least_delay (lowest mean DRAM read latency of the rank so far as the system reports it; all zero in functional mode, so the ties decide)",
    ),
    doc(
        "os.tlb_pages",
        "pages per core",
        "clock, rank_clock: when the pointers roll over, every referenced bit is cleared except those of each core's last this many distinct pages (what its TLB holds)",
    ),
    doc(
        "os.trace_bulk_destinations",
        "allocate | keep",
        "post-LLC traces whose copy and initialization records are the kernel's page operations (the rowclone format's C and S records): allocate (each record's whole destination page gets a new frame when the record happens, as the kernel allocates a copy-on-write destination or a page to zero; a copy's frame comes from the source's subarray under os.allocator = subarray_aware: the RowClone paper's Section 4.3.1) or keep (the page keeps the frame its first touch gave it; a page first touched by a copy is still placed as a copy-on-write destination). The traces' addresses are physical in the simulator that wrote them, where the kernel's free list hands the same frame out again and again (forkset: 21,787 copies into 2,672 pages), so keep pins every later copy to the first one's placement; docs/workloads.md",
    ),
    doc(
        "os.fault_instructions",
        "instructions",
        "kernel instructions each page fault runs besides its zeroing or copy (trap, page-table walk and update, frame allocation, return); they retire as non-memory instructions of the faulting thread and count in `instructions`; 0 models a free fault path",
    ),
    doc(
        "sim.mode",
        "timing | functional",
        "full system: timing simulates caches and DRAM; functional runs only the cores (one instruction per core cycle) and the OS: every memory access is translated (faults, evictions, referenced bits) with no cache or DRAM (the page-allocation study)",
    ),
    doc(
        "sim.skip_idle",
        "bool",
        "jump over cycles in which nothing can change (results are identical either way)",
    ),
    doc(
        "sim.record_intervals",
        "bool",
        "keep every interval a rank was unavailable (refresh, write drain) and every interval a thread stalled on memory, besides their totals (stats `unavailable[].intervals`, `threads[].stall_intervals`)",
    ),
    doc(
        "sim.interruption_metrics",
        "bool",
        "full system only: compute the `interruptions` stats at the end of the run (per refresh and per write drain the threads it stalled, the weighted core stall time per refresh, per thread the share of refreshes that stalled it and its DRAM reads and writes per rank; docs/rank_assignment.md, Metrics); the intervals it needs are recorded internally and listed in stats only with sim.record_intervals; off: the run pays nothing",
    ),
    doc(
        "sim.memory_limit_mb",
        "MiB",
        "host memory a run may allocate up front (controllers' tables and queues, cache arrays, the OS's 20 bytes per 4 KiB frame up to 16 GiB, 7 above); a larger configuration is an error saying how much it needs; 0 = the machine's available memory (MemAvailable)",
    ),
    doc(
        "sim.max_cycles",
        "cycles: memory cycles in trace replay, core cycles in the full system",
        "longest run allowed: a trace record whose cycle lies beyond it, a full-system compute record (`C n`) that would end beyond it, or a full-system run that reaches it stops with an error naming the record; raise it for longer runs (idle gaps cost no host time, refreshes included)",
    ),
    doc(
        "sim.stop_after_dram_accesses",
        "requests",
        "full system: the run ends in the core cycle in which the memory devices have accepted this many requests from the caches (reads and writes, every channel and device; the Rank Assignment paper ends each run at 2 million); the stats are those of that moment, every running thread's end time being it; a workload that ends sooner just ends; 0: off",
    ),
    doc(
        "sim.warmup_instructions",
        "instructions per core",
        "full system, with sim.measure_instructions: each core (one per starting thread) first retires this many instructions; memory-side stats (memory, memory_devices, hybrid) count only from the core cycle in which the last core finished its warm-up (docs/hybrid.md, Measurement); 0: no warm-up",
    ),
    doc(
        "sim.measure_instructions",
        "instructions per core",
        "full system: each core's measured window lasts from the core cycle in which it retired sim.warmup_instructions to the one in which it retired this many more (stats cores[].measured_cycles, measurement); the run ends when every core has finished its window, cores that finished keep running meanwhile (with system.loop_workloads their traces wrap); a core whose workload ends first is an error, and so is sim.stop_after_dram_accesses beside it; 0: off",
    ),
    doc(
        "hybrid.mechanism",
        "cpm | cm | cm_obm | cm_obm_pd",
        "migration mechanism: cpm (one at a time, page pinned in the LLC), cm (concurrent, background copies), cm_obm (promotions copy blocks on access), cm_obm_pd (plus partial demotion)",
    ),
    doc(
        "hybrid.period_ns",
        "ns",
        "time between the OS's reads and resets of the PACT; the migration policy runs after each",
    ),
    doc(
        "hybrid.pact_entries",
        "entries",
        "PACT capacity (Table I: 8192); a multiple of hybrid.pact_ways",
    ),
    doc(
        "hybrid.pact_ways",
        "ways",
        "PACT associativity; sets = entries / ways, indexed by physical page",
    ),
    doc(
        "hybrid.pact_count_bits",
        "bits",
        "width of a PACT count, 1..=32; counts saturate at 2^bits - 1",
    ),
    doc(
        "hybrid.art_entries",
        "entries",
        "ART capacity, the most pages migrating at once (Table I: 512); a multiple of hybrid.art_ways",
    ),
    doc(
        "hybrid.art_ways",
        "ways",
        "ART associativity; sets = entries / ways, indexed by the key (home) page; a full set refuses inserts",
    ),
    doc(
        "hybrid.decay",
        "fraction",
        "weight of a page's old score: score = period count + decay x old score; 0 <= decay < 1",
    ),
    doc(
        "hybrid.promote_min",
        "score",
        "least score of a PCM page the policy promotes",
    ),
    doc(
        "hybrid.free_min",
        "fraction of DRAM frames",
        "the policy demotes while free plus vacating DRAM frames are fewer than this fraction of all DRAM frames",
    ),
    doc(
        "hybrid.copy_priority",
        "auto | low | equal",
        "migration copies in the memory controllers' queues: auto (per mechanism: low for cpm, the authors' simulator's LOW queues for its one migration; equal for cm, cm_obm, cm_obm_pd, whose copies the paper lets compete with demand requests), low (a copy gets a command only in a cycle in which no program request of its queue can; once it has opened its row it competes as any request) or equal (the scheduler treats copies and program requests alike); both offer copies after the caches' requests each device cycle",
    ),
    doc(
        "hybrid.copies_in_flight",
        "requests per device",
        "migration copy reads and writes the copier keeps in one device's queues at most; 0 = per mechanism: 64 for every mechanism (one page's blocks: cpm's copy is a burst, as the authors' simulator issues it; the CM variants copy as fast as the queues take them); at most 4096",
    ),
    doc(
        "hybrid.obm_complete_after",
        "blocks",
        "cm_obm, cm_obm_pd: after this many blocks of a promoting page copied on demand the rest are copied in the background; 0 = never",
    ),
    doc(
        "hybrid.art_full_completes",
        "bool",
        "cm_obm, cm_obm_pd: when the ART refuses the policy ways (a promotion skipped, a demotion waiting), as many partly promoted pages of the refused sets are completed, their other blocks copied in the background, the pages with the most blocks copied on demand first, so their ways are free for a later period; false: such pages leave the ART only by completing on their own or being chosen for demotion (bulksim's choice; the paper is silent)",
    ),
    doc(
        "hybrid.art_full_min_periods",
        "periods",
        "cm_obm, cm_obm_pd with hybrid.art_full_completes: only pages promoting for at least this many whole periods are completed for ART ways, so a page promoted this period first shows whether its blocks are used (on demand) before it is copied whole; 0: also pages the same period started (bulksim's choice; the paper is silent)",
    ),
    doc(
        "hybrid.elide_clean",
        "bool",
        "demotions skip blocks unchanged since promotion (their PCM copy is current); the paper copies them",
    ),
    doc(
        "hybrid.remap_lines",
        "flush | retag",
        "on completion the old frame's cached lines are written to the new frame and invalidated (flush), or renamed to the new frame, moving to its sets, dirty ones staying dirty (retag)",
    ),
    doc(
        "hybrid.pact_origins",
        "program | all",
        "which LLC misses and write-backs update the PACT: the program's own loads' and stores' (program, bulksim's choice: a run's first-touch zeroing, long over in the paper's 5 B-instruction warm-up, would make every page touched look hot) or also those of copies, first-touch zeroing and bulk coherence (all: what a counter beside the controller sees)",
    ),
    doc(
        "hybrid.count_copies",
        "bool",
        "the migration copier's reads and writes update the PACT too (its requests, not a program's)",
    ),
    doc(
        "hybrid.placement",
        "dram_first | pcm_only",
        "first placement of a page: a free DRAM frame while more than the policy keeps free (ceil(free_min x DRAM frames)) are free, else PCM (dram_first), or always PCM (pcm_only); frames freed later by demotions thus go to promotions, not to new pages",
    ),
    doc(
        "hybrid.os_period_ns",
        "ns",
        "OS time per period for reading the PACT and running the policy: core 0 dispatches nothing for this long (its window drains), counted in os_time_ns even when core 0 is idle; less than hybrid.period_ns",
    ),
    doc(
        "hybrid.os_remap_ns",
        "ns",
        "OS time per page remap at a migration's completion: the core running the page's process (else core 0) dispatches nothing for this long; at most 1,000,000,000 (1 s)",
    ),
    doc(
        "hybrid.cpm_setup_ns",
        "ns",
        "cpm: set-up of each migration (DMA descriptor written, completion interrupt taken) before its copy starts, on the serial chain (bulksim's choice, docs/hybrid.md); at most 1 s",
    ),
    doc(
        "hybrid.cpm_flush_dram_line_ns",
        "ns per line",
        "cpm: each dirty pinned LLC line of a promoted page written to its new DRAM frame after the copy, one after another (Table I's DRAM: tRCD + tCAS + burst); at most 1 s",
    ),
    doc(
        "hybrid.cpm_flush_pcm_line_ns",
        "ns per line",
        "cpm: each dirty pinned LLC line of a demoted page written to its new PCM frame after the copy, one after another (Table I's PCM: tRCD + tCAS + burst + the write's 150 ns); at most 1 s",
    ),
    doc(
        "hybrid.remap_shootdown_ns",
        "ns",
        "page-table update and TLB shootdown at each remap of every mechanism (a completed promotion or full demotion; under cpm after the flush); every core dispatches nothing for this long, and under cpm the next migration waits for it (bulksim's choice from published shootdown costs, docs/hybrid.md); at most 1 s",
    ),
];

fn enum_values(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "controller.scheduler" => Some(&["fcfs", "frfcfs"]),
        "controller.page_policy" => Some(&["open", "closed"]),
        "controller.refresh" | "controller.refresh.policy" => {
            Some(&["staggered", "simultaneous", "none", "all_bank"])
        }
        "controller.refresh.stagger" => Some(&["channel", "system"]),
        "controller.refresh.scheme" => Some(&["demand", "elastic", "pausing", "pcd", "adaptive"]),
        "controller.refresh.elastic_deadline" => Some(&["per_ref", "window"]),
        "controller.write_drain.scope" => Some(&["channel", "rank"]),
        "controller.write_drain.policy" => Some(&["watermark", "equal_priority", "ideal"]),
        "dram.temperature" => Some(&["normal", "extended"]),
        "bulk.mechanism" => Some(&["channel", "mc_dma", "rowclone"]),
        "system.bulk_mechanism" => Some(&["cpu", "mc_dma", "rowclone", "rowclone_zi"]),
        "system.cpu_full_line_stores" => Some(&["fetch", "allocate"]),
        "system.init_mechanism" => Some(&["same", "cpu"]),
        "os.allocator" => Some(&[
            "scatter",
            "subarray_aware",
            "inter_bank",
            "rank_static",
            "clock",
            "rank_clock",
        ]),
        "os.preferred_rank" => Some(&["most_free", "least_delay"]),
        "os.trace_bulk_destinations" => Some(&["allocate", "keep"]),
        "sim.mode" => Some(&["timing", "functional"]),
        "copy_engine.policy" => Some(&["none", "ce_l1", "dce", "dce_nt", "dce_rowclone"]),
        "copy_engine.dram_rule" => Some(&["probe", "always"]),
        "dram.preset" => Some(PRESET_NAMES),
        "hybrid.mechanism" => Some(&["cpm", "cm", "cm_obm", "cm_obm_pd"]),
        "hybrid.copy_priority" => Some(&["auto", "low", "equal"]),
        "hybrid.remap_lines" => Some(&["flush", "retag"]),
        "hybrid.pact_origins" => Some(&["program", "all"]),
        "hybrid.placement" => Some(&["dram_first", "pcm_only"]),
        _ => None,
    }
}

fn did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let best = candidates
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 3))
        .min();
    match best {
        Some((_, c)) => format!(" (did you mean '{c}'?)"),
        None => String::new(),
    }
}

/// Checks a dotted key against the documented fields; `dram.timing.<name>` takes any timing
/// parameter name.
/// `cache.level.1.size_kb` -> `cache.level[].size_kb`, the documented form.
fn generic_key(key: &str) -> String {
    key.split('.').fold(String::new(), |mut acc, part| {
        if !acc.is_empty() && part.parse::<usize>().is_ok() {
            acc.push_str("[]");
        } else {
            if !acc.is_empty() {
                acc.push('.');
            }
            acc.push_str(part);
        }
        acc
    })
}

pub fn check_key(key: &str) -> Result<()> {
    if let Some(param) = key.strip_prefix("dram.timing.") {
        if Timing::PARAMS.iter().any(|(n, _)| *n == param) {
            return Ok(());
        }
        let names: Vec<&str> = Timing::PARAMS.iter().map(|(n, _)| *n).collect();
        return Err(config_err(format!(
            "unknown timing parameter '{param}' in key '{key}'{}; valid: {}",
            did_you_mean(param, names.iter().copied()),
            names.join(", ")
        )));
    }
    if CONFIG_FIELDS.iter().any(|f| f.key == key) {
        return Ok(());
    }
    let section = key.split('.').next().unwrap_or("");
    let in_section: Vec<&str> = CONFIG_FIELDS
        .iter()
        .map(|f| f.key)
        .filter(|k| k.starts_with(&format!("{section}.")))
        .collect();
    let valid = if in_section.is_empty() {
        CONFIG_FIELDS
            .iter()
            .map(|f| f.key)
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        in_section.join(", ")
    };
    Err(config_err(format!(
        "unknown config key '{key}'{}; valid keys: {valid}",
        did_you_mean(key, CONFIG_FIELDS.iter().map(|f| f.key))
    )))
}

/// Parses the value side of `key=value`: a TOML value if it is one, else a bare string.
fn parse_value(text: &str) -> toml::Value {
    let wrapped = format!("v = {text}");
    match toml::from_str::<toml::Table>(&wrapped) {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

impl Config {
    /// Reads a config file, merging the files it includes (recursively; paths relative to
    /// the including file; the including file's values win).
    pub fn from_file(path: &Path) -> Result<Config> {
        let table = load_merged(path, &mut Vec::new())?;
        Config::deserialize(toml::Value::Table(table))
            .map_err(|e| config_err(format!("{}: {}", path.display(), e.to_string().trim())))
    }

    /// Every problem in a config file and its includes, each named once: every unknown key,
    /// every value of the wrong type (with its file and line), and every semantic problem of
    /// what remains once those are dropped (`Config::problems`). Empty when the file is good.
    pub fn check_file(path: &Path) -> Vec<String> {
        let mut problems = Vec::new();
        let merged = check_merged(path, &mut Vec::new(), &mut problems);
        match Config::deserialize(toml::Value::Table(merged)) {
            Ok(config) => problems.extend(config.problems()),
            Err(e) => problems.push(format!("{}: {}", path.display(), e.to_string().trim())),
        }
        let mut seen = std::collections::BTreeSet::new();
        problems.retain(|p| seen.insert(p.clone()));
        problems
    }

    /// Parses a TOML document; `source` (a file name) prefixes every error.
    pub fn from_toml_str(text: &str, source: &str) -> Result<Config> {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| config_err(format!("{source}: {e}")))?;
        for key in flat_keys(&table, "") {
            check_key(&key).map_err(|e| config_err(format!("{source}: {e}")))?;
        }
        toml::from_str(text).map_err(|e| config_err(format!("{source}: {e}")))
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("config serializes")
    }

    /// Applies `key=value` overrides in order.
    pub fn apply_sets<S: AsRef<str>>(&self, sets: &[S]) -> Result<Config> {
        let mut table = toml::Table::try_from(self).expect("config serializes");
        for set in sets {
            let set = set.as_ref();
            let (key, value) = set.split_once('=').ok_or_else(|| {
                config_err(format!(
                    "override '{set}': expected key=value, e.g. controller.scheduler=fcfs"
                ))
            })?;
            let key = key.trim();
            check_key(&generic_key(key))?;
            let mut node = &mut table;
            let parts: Vec<&str> = key.split('.').collect();
            let mut i = 0;
            while i < parts.len() - 1 {
                let part = parts[i];
                let value = node
                    .entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()));
                node = match value {
                    toml::Value::Array(items) => {
                        // `cache.level.1.size_kb`: an index into a list of tables; the next
                        // index past the end adds a table.
                        let index: usize = parts[i + 1].parse().map_err(|_| {
                            config_err(format!(
                                "override '{set}': '{part}' is a list; expected {part}.N.key with N an index"
                            ))
                        })?;
                        if index == items.len() {
                            items.push(toml::Value::Table(Default::default()));
                        }
                        let len = items.len();
                        i += 1;
                        items
                            .get_mut(index)
                            .and_then(|v| v.as_table_mut())
                            .ok_or_else(|| {
                                config_err(format!(
                                    "override '{set}': {part} has {len} entries; index {index} is past the next one"
                                ))
                            })?
                    }
                    v => v.as_table_mut().ok_or_else(|| {
                        config_err(format!("override '{set}': '{part}' is not a table"))
                    })?,
                };
                i += 1;
            }
            node.insert(
                parts[parts.len() - 1].to_string(),
                parse_value(value.trim()),
            );
            // Deserialize after each override so an error names the key that caused it.
            Config::deserialize(toml::Value::Table(table.clone()))
                .map_err(|e| value_error(key, value, &e))?;
        }
        Config::deserialize(toml::Value::Table(table)).map_err(|e| config_err(e.to_string()))
    }

    /// Semantic checks beyond types; also resolves the spec and the mapping once.
    pub fn validate(&self) -> Result<()> {
        self.spec().map(|_| ())
    }

    /// Every semantic problem of this config, one message each naming its key, in key
    /// order; empty when the config is valid. (`validate` and `spec` report the first.)
    pub fn problems(&self) -> Vec<String> {
        self.resolve().1
    }

    /// `[hybrid]`: its own keys, and what it needs of the rest: exactly two memory devices,
    /// one DRAM and one PCM (a device is PCM when its part's name starts with `PCM`), and
    /// nothing that moves bytes below the caches behind the router's back.
    fn check_hybrid(&self, problems: &mut Vec<String>) {
        let Some(h) = &self.hybrid else {
            return;
        };
        problems.extend(h.problems());
        let kinds: Vec<bool> = self
            .memory
            .device
            .iter()
            .map(|d| {
                let preset = if d.preset.is_empty() {
                    &self.dram.preset
                } else {
                    &d.preset
                };
                preset.starts_with("PCM")
            })
            .collect();
        if kinds.len() != 2 || kinds.iter().filter(|&&pcm| pcm).count() != 1 {
            let listed: Vec<String> = self
                .memory
                .device
                .iter()
                .zip(&kinds)
                .map(|(d, pcm)| {
                    let name = if d.preset.is_empty() {
                        &self.dram.preset
                    } else {
                        &d.preset
                    };
                    format!("{name} ({})", if *pcm { "PCM" } else { "DRAM" })
                })
                .collect();
            problems.push(format!(
                "memory.device: [hybrid] needs exactly two devices, one DRAM and one PCM (a part named PCM...); found {}",
                if listed.is_empty() { "none (one device from [dram])".to_string() } else { listed.join(", ") }
            ));
        }
        if self.system.bulk_mechanism != SystemMechanism::Cpu {
            problems.push(
                "system.bulk_mechanism: [hybrid] moves bytes only through the router's redirection; bulk operations below the caches would bypass it (expected cpu)"
                    .into(),
            );
        }
        if self.copy_engine.policy != CopyEnginePolicy::None {
            problems.push(format!(
                "copy_engine.policy: {} is not combined with [hybrid] yet (expected none)",
                self.copy_engine.policy.name()
            ));
        }
        if self.system.memcpy == MemcpyMode::SoftwareNt {
            // Its line writes go around the caches, past CPM's pinned lines and the hand-off
            // that counts them.
            problems.push(
                "system.memcpy: software_nt is not combined with [hybrid] yet (expected bulk, software or movblk)"
                    .into(),
            );
        }
        if self.memory.fixed_latency_cycles != 0 {
            problems.push(
                "memory.fixed_latency_cycles: [hybrid] needs the memory devices to time requests (expected 0)"
                    .into(),
            );
        }
        if self.sim.mode != SimMode::Timing {
            problems.push("sim.mode: [hybrid] runs in timing mode only (expected timing)".into());
        }
        if self.os.allocator.replaces_pages() {
            problems.push(
                "os.allocator: [hybrid] does not combine with page replacement (clock, rank_clock) yet"
                    .into(),
            );
        }
    }

    fn check_copy_engines(&self, problems: &mut Vec<String>) {
        let ce = &self.copy_engine;
        if ce.fifo_depth == 0 || ce.fifo_depth > 1024 {
            problems.push(format!(
                "copy_engine.fifo_depth: {} is out of range; expected 1..=1024 movblks",
                ce.fifo_depth
            ));
        }
        if ce.realign_cycles > 1000 {
            problems.push(format!(
                "copy_engine.realign_cycles: {} is out of range; expected 0..=1000",
                ce.realign_cycles
            ));
        }
        let m = &self.memcpy;
        if !m.word_bytes.is_power_of_two() || m.word_bytes > 8 {
            problems.push(format!(
                "memcpy.word_bytes: {}; expected 1, 2, 4 or 8",
                m.word_bytes
            ));
        }
        if !(1..=64).contains(&m.wc_buffers) {
            problems.push(format!(
                "memcpy.wc_buffers: {}; expected 1 to 64 buffers per core",
                m.wc_buffers
            ));
        }
        for (key, v) in [
            ("memcpy.call_instructions", m.call_instructions),
            ("memcpy.check_instructions", m.check_instructions),
            ("memcpy.loop_instructions", m.loop_instructions),
        ] {
            if v > 1_000_000 {
                problems.push(format!(
                    "{key}: {v} is out of range; expected 0..=1000000 instructions"
                ));
            }
        }
        if self.core.store_queue > 4096 {
            problems.push(format!(
                "core.store_queue: {} is out of range; expected 0 (no limit) to 4096 stores",
                self.core.store_queue
            ));
        }
        if self.core.lsq > 4096 {
            problems.push(format!(
                "core.lsq: {} is out of range; expected 0 (no limit) to 4096 memory instructions",
                self.core.lsq
            ));
        }
        if self.core.mem_ports > 64 {
            problems.push(format!(
                "core.mem_ports: {} is out of range; expected 0 (core.width) to 64",
                self.core.mem_ports
            ));
        }
        if self.cache.address_bytes == 0 || self.cache.address_bytes > 16 {
            problems.push(format!(
                "cache.address_bytes: {} is out of range; expected 1..=16",
                self.cache.address_bytes
            ));
        }
        if self.memory.fixed_latency_cycles > 1_000_000 {
            problems.push(format!(
                "memory.fixed_latency_cycles: {} is out of range; expected 0..=1000000 core cycles",
                self.memory.fixed_latency_cycles
            ));
        }
        let levels = &self.cache.level;
        if ce.policy != CopyEnginePolicy::None {
            let needed = ce.policy.engine_levels();
            if levels.len() < needed {
                problems.push(format!(
                    "copy_engine.policy: {} puts engines beside {needed} cache levels; the hierarchy has {} (add [[cache.level]] tables or use ce_l1)",
                    ce.policy.name(), levels.len()
                ));
            }
            if levels.len() >= 2 && levels[0].line_bytes > levels[1].line_bytes {
                // Reported by check_cache_levels already.
            } else if levels.len() >= 2 && levels[1].line_bytes % levels[0].line_bytes != 0 {
                problems.push(format!(
                    "copy_engine.policy: the second level's {}-byte lines are not a multiple of the first level's {}-byte movblk block",
                    levels[1].line_bytes, levels[0].line_bytes
                ));
            }
        }
        if ce.policy == CopyEnginePolicy::DceRowclone {
            if !matches!(
                self.system.bulk_mechanism,
                SystemMechanism::Rowclone | SystemMechanism::RowcloneZi
            ) {
                problems.push(format!(
                    "copy_engine.policy: dce_rowclone hands chunks to RowClone in DRAM; set system.bulk_mechanism to rowclone or rowclone_zi (it is {})",
                    self.system.bulk_mechanism.name()
                ));
            }
            if self.memory.fixed_latency_cycles > 0 {
                problems.push("copy_engine.policy: dce_rowclone needs DRAM devices that time requests; set memory.fixed_latency_cycles to 0".into());
            }
            let last_line = levels.last().map_or(64, |l| l.line_bytes);
            let chunk = ce.dram_chunk_bytes;
            if !chunk.is_power_of_two() || chunk < last_line || chunk > 4096 {
                problems.push(format!(
                    "copy_engine.dram_chunk_bytes: {chunk}; expected a power of two from the last cache level's {last_line}-byte line to the 4096-byte page"
                ));
            }
        }
        if ce.probe_cycles > 100_000 {
            problems.push(format!(
                "copy_engine.probe_cycles: {} is out of range; expected 0..=100000 core cycles",
                ce.probe_cycles
            ));
        }
        if self.system.memcpy == MemcpyMode::Movblk && ce.policy == CopyEnginePolicy::None {
            problems.push("system.memcpy: movblk needs a copy engine; set copy_engine.policy to ce_l1, dce, dce_nt or dce_rowclone (or system.memcpy to software)".into());
        }
        for (i, l) in levels.iter().enumerate() {
            if l.port_cycles > 10_000 {
                problems.push(format!(
                    "cache.level.{i}.port_cycles: {} is out of range; expected 0..=10000",
                    l.port_cycles
                ));
            }
        }
    }

    fn check_cache_levels(&self, problems: &mut Vec<String>) {
        let levels = &self.cache.level;
        if levels.is_empty() || levels.len() > 8 {
            problems.push(format!(
                "cache.level: {} levels; expected 1 to 8 [[cache.level]] tables",
                levels.len()
            ));
            return;
        }
        for (i, l) in levels.iter().enumerate() {
            let mut geometry_ok = true;
            // Array sizes are host allocations (`limits::check_host_memory` weighs them);
            // these bounds keep the set and way indices and the LRU scans in range.
            for (key, v, min, max) in [
                ("ways", l.ways, 1, 64),
                ("mshrs", l.mshrs, 1, 1024),
                ("writeback_buffer", l.writeback_buffer, 1, 4096),
                ("size_kb", l.size_kb, 1, 1 << 20),
                ("hit_cycles", l.hit_cycles, 0, 10_000),
            ] {
                if v < min || v > max {
                    geometry_ok &=
                        key != "mshrs" && key != "writeback_buffer" && key != "hit_cycles";
                    problems.push(format!(
                        "cache.level.{i}.{key}: {v} is out of range; expected {min}..={max}"
                    ));
                }
            }
            if !l.line_bytes.is_power_of_two() || !(8..=256).contains(&l.line_bytes) {
                geometry_ok = false;
                problems.push(format!(
                    "cache.level.{i}.line_bytes: {}; expected a power of two from 8 to 256",
                    l.line_bytes
                ));
            }
            if geometry_ok {
                let lines = l.size_kb as u64 * 1024 / l.line_bytes as u64;
                if lines % l.ways as u64 != 0 || !(lines / l.ways as u64).is_power_of_two() {
                    problems.push(format!(
                        "cache.level.{i}.size_kb: {} KiB in {}-way sets of {}-byte lines does not give a power-of-two number of sets",
                        l.size_kb, l.ways, l.line_bytes
                    ));
                }
            }
            if i > 0 && levels[i - 1].shared && !l.shared {
                problems.push(format!(
                    "cache.level.{i}.shared: a private level cannot sit below a shared one (cache.level.{}.shared = true)",
                    i - 1
                ));
            }
            if i > 0 && l.line_bytes < levels[i - 1].line_bytes {
                problems.push(format!(
                    "cache.level.{i}.line_bytes: {} is smaller than the level above's {}; lines may only grow toward memory",
                    l.line_bytes,
                    levels[i - 1].line_bytes
                ));
            }
        }
        let last = levels.last().expect("one level").line_bytes;
        if last != 64 {
            problems.push(format!(
                "cache.level.{}.line_bytes: the last level's lines are what memory transfers (64 bytes, one DRAM burst); {last} is not supported",
                levels.len() - 1
            ));
        }
    }

    /// The config of each memory device with its name: one from `[dram]` when
    /// `memory.device` is empty, else each device's part and organisation over the rest.
    pub fn device_configs(&self) -> Result<Vec<(String, Config)>> {
        let (devices, problems) = self.resolve_devices();
        match problems.into_iter().next() {
            Some(p) => Err(config_err(p)),
            None => Ok(devices),
        }
    }

    /// The devices (as `device_configs`) and every problem of their organisations, including
    /// a total capacity beyond what the model can address.
    fn resolve_devices(&self) -> (Vec<(String, Config)>, Vec<String>) {
        if self.memory.device.is_empty() {
            return (vec![(self.dram.preset.clone(), self.clone())], Vec::new());
        }
        let mut out: Vec<(String, Config)> = Vec::new();
        let mut problems = Vec::new();
        let mut total: u64 = 0;
        for (i, d) in self.memory.device.iter().enumerate() {
            let mut c = self.clone();
            c.memory.device.clear();
            // A device is plain memory; the router makes the two one hybrid memory.
            c.hybrid = None;
            if !d.preset.is_empty() {
                c.dram.preset = d.preset.clone();
            }
            if d.channels != 0 {
                c.dram.channels = d.channels;
            }
            if d.ranks != 0 {
                c.dram.ranks = d.ranks;
            }
            if d.rows != 0 {
                c.dram.rows = d.rows;
            }
            if d.activation_bits != 0 {
                c.dram.activation_bits = d.activation_bits;
            }
            if let Some(policy) = d.page_policy {
                c.controller.page_policy = policy;
            }
            if !d.address_mapping.is_empty() {
                c.controller.address_mapping = d.address_mapping.clone();
            }
            if d.read_queue_size != 0 {
                c.controller.read_queue_size = d.read_queue_size;
            }
            if d.write_queue_size != 0 {
                c.controller.write_queue_size = d.write_queue_size;
            }
            let name = if d.name.is_empty() {
                format!("device{i}")
            } else {
                d.name.clone()
            };
            if out.iter().any(|(n, _)| *n == name) {
                problems.push(format!(
                    "memory.device.{i}.name: '{name}' names two devices; names must differ"
                ));
            }
            // Only the device's own keys can differ from the top level's, whose problems
            // are reported once, there.
            let (spec, own) = c.resolve_spec();
            // A device already too large on its own is not counted again in the total.
            let spec = spec.filter(|_| own.is_empty());
            // A value the device sets is named by the device's own key.
            let own_key = |p: String| {
                for (set, section, key) in [
                    (!d.preset.is_empty(), "dram", "preset"),
                    (d.channels != 0, "dram", "channels"),
                    (d.ranks != 0, "dram", "ranks"),
                    (d.rows != 0, "dram", "rows"),
                    (d.activation_bits != 0, "dram", "activation_bits"),
                    (
                        !d.address_mapping.is_empty(),
                        "controller",
                        "address_mapping",
                    ),
                ] {
                    if let Some(rest) = p.strip_prefix(&format!("{section}.{key}")) {
                        if set && (rest.starts_with(':') || rest.starts_with(' ')) {
                            let rest = rest.strip_prefix(':').unwrap_or(rest);
                            return format!("memory.device.{i}.{key} ({name}):{rest}");
                        }
                    }
                }
                format!("memory.device.{i} ({name}): {p}")
            };
            problems.extend(own.into_iter().map(own_key));
            // Queue entries are allocated up front and scanned (`controller::queue`).
            for (key, v) in [
                ("read_queue_size", d.read_queue_size),
                ("write_queue_size", d.write_queue_size),
            ] {
                if v > 4096 {
                    problems.push(format!(
                        "memory.device.{i}.{key} ({name}): {v} is out of range; expected 1..=4096 entries (0: the controller's)"
                    ));
                }
            }
            if let Some(p) = spec.as_ref().and_then(|s| c.refresh_problem(s)) {
                problems.push(format!("memory.device.{i} ({name}): {p}"));
            }
            if let Some(bytes) = spec.and_then(|s| limits::capacity_bytes(&s.organisation)) {
                total = total.saturating_add(bytes);
            }
            out.push((name, c));
        }
        if total > limits::MAX_MEMORY_BYTES {
            problems.push(format!(
                "memory.device: the devices hold {} together; at most {} can be simulated (2^32 frames of 4 KiB: the OS's frame numbers are 32-bit)",
                limits::human_bytes(total),
                limits::human_bytes(limits::MAX_MEMORY_BYTES)
            ));
        }
        (out, problems)
    }

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
    fn resolve_spec(&self) -> (Option<Spec>, Vec<String>) {
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
        let mut organisation_ok = problems.is_empty();
        for (key, v) in [("dram.channels", d.channels), ("dram.ranks", d.ranks)] {
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
        for (name, &value) in &d.timing {
            if let Err(e) = check_key(&format!("dram.timing.{name}")) {
                problems.push(e.to_string());
            } else if value > limits::MAX_TIMING_CYCLES {
                problems.push(format!(
                    "dram.timing.{name}: {value} is out of range; expected 0..={} cycles (rule latencies add up to four parameters in 32 bits)",
                    limits::MAX_TIMING_CYCLES
                ));
            } else {
                spec.timing.set(name, value);
            }
        }
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
        (Some(spec), problems)
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

    /// The error of refreshing a part that has no refresh command (REF), naming the key.
    fn refresh_problem(&self, spec: &Spec) -> Option<String> {
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

    /// The resolved spec (`None` when the preset is unknown) and every problem of the config.
    fn resolve(&self) -> (Option<Spec>, Vec<String>) {
        let (spec, mut problems) = self.resolve_spec();
        if let Some(p) = spec.as_ref().and_then(|s| self.refresh_problem(s)) {
            problems.push(p);
        }
        let c = &self.controller;
        // Queue entries are allocated up front and scanned every cycle (`controller::queue`).
        for (key, v) in [
            ("controller.read_queue_size", c.read_queue_size),
            ("controller.write_queue_size", c.write_queue_size),
        ] {
            if v == 0 || v > 4096 {
                problems.push(format!(
                    "{key}: {v} is out of range; expected 1..=4096 entries"
                ));
            }
        }
        let mut watermarks_ok = true;
        for (key, v) in [
            ("controller.write_high_watermark", c.write_high_watermark),
            ("controller.write_low_watermark", c.write_low_watermark),
        ] {
            if !(0.0..=1.0).contains(&v) {
                watermarks_ok = false;
                problems.push(format!(
                    "{key}: {v} is out of range; expected a fraction in 0..=1"
                ));
            }
        }
        let d = &c.write_drain;
        if d.high > 0 && d.low >= d.high {
            problems.push(format!(
                "controller.write_drain.low: {} must be below controller.write_drain.high ({})",
                d.low, d.high
            ));
        } else if d.high == 0 && d.low > 0 {
            problems.push(format!(
                "controller.write_drain.low: {} needs controller.write_drain.high set as well",
                d.low
            ));
        } else if d.high > 2048 {
            problems.push(format!(
                "controller.write_drain.high: {} is out of range; expected 1..=2048 writes",
                d.high
            ));
        }
        if d.coordinate && d.scope != DrainScope::Rank {
            problems.push(
                "controller.write_drain.coordinate: needs controller.write_drain.scope = \"rank\" (a channel-scope drain already covers every rank)".into(),
            );
        }
        if d.scope == DrainScope::Channel && d.high as usize > c.write_queue_size as usize {
            problems.push(format!(
                "controller.write_drain.high: {} exceeds controller.write_queue_size ({})",
                d.high, c.write_queue_size
            ));
        }
        if watermarks_ok && c.write_low_watermark >= c.write_high_watermark {
            problems.push(format!(
                "controller.write_low_watermark: {} must be below controller.write_high_watermark ({})",
                c.write_low_watermark, c.write_high_watermark
            ));
        }
        let b = &self.bulk;
        for (key, v) in [
            ("bulk.lines_in_flight", b.lines_in_flight),
            ("bulk.queue_size", b.queue_size),
        ] {
            if v == 0 || v > 4096 {
                problems.push(format!("{key}: {v} is out of range; expected 1..=4096"));
            }
        }
        let core = &self.core;
        for (key, v, max) in [
            ("core.window", core.window, 4096),
            ("core.width", core.width, 64),
        ] {
            if v == 0 || v > max {
                problems.push(format!("{key}: {v} is out of range; expected 1..={max}"));
            }
        }
        self.check_cache_levels(&mut problems);
        self.check_copy_engines(&mut problems);
        problems.extend(self.resolve_devices().1);
        self.check_hybrid(&mut problems);
        if !(self.system.core_ghz > 0.0 && self.system.core_ghz <= 20.0) {
            problems.push(format!(
                "system.core_ghz: {} is out of range; expected (0, 20]",
                self.system.core_ghz
            ));
        }
        if self.system.cores > 1024 {
            problems.push(format!(
                "system.cores: {} is out of range; expected 0 (one per starting thread) to 1024",
                self.system.cores
            ));
        }
        if self.system.loop_workloads
            && self.sim.stop_after_dram_accesses == 0
            && self.sim.measure_instructions == 0
        {
            problems.push("system.loop_workloads: true needs sim.stop_after_dram_accesses above 0 or sim.measure_instructions above 0; a looped workload never ends by itself".into());
        }
        if self.sim.warmup_instructions > 0 && self.sim.measure_instructions == 0 {
            problems.push(format!(
                "sim.warmup_instructions: {} needs sim.measure_instructions above 0 (the window the warm-up precedes)",
                self.sim.warmup_instructions
            ));
        }
        if self.sim.measure_instructions > 0 && self.sim.stop_after_dram_accesses > 0 {
            problems.push(format!(
                "sim.measure_instructions: {} with sim.stop_after_dram_accesses {}; expected one of them (the run ends when every core's measured window has, a stop before would leave windows unfinished)",
                self.sim.measure_instructions, self.sim.stop_after_dram_accesses
            ));
        }
        if self.sim.measure_instructions > 0 && self.sim.mode == SimMode::Functional {
            problems.push("sim.measure_instructions: needs sim.mode = \"timing\" (a functional run has no cycles to measure)".into());
        }
        if self
            .sim
            .warmup_instructions
            .checked_add(self.sim.measure_instructions)
            .is_none()
        {
            problems.push("sim.measure_instructions: sim.warmup_instructions + sim.measure_instructions overflows; expected a sum below 2^64".into());
        }
        if self.sim.max_cycles == 0 {
            problems.push("sim.max_cycles: 0 is out of range; expected at least 1 cycle".into());
        }
        let os = &self.os;
        if !(0.0..=1.0).contains(&os.mapping_error) {
            problems.push(format!(
                "os.mapping_error: {} is out of range; expected a probability in 0..=1",
                os.mapping_error
            ));
        }
        if os.tlb_pages > 1 << 20 {
            problems.push(format!(
                "os.tlb_pages: {} is out of range; expected 0..=1048576 pages per core",
                os.tlb_pages
            ));
        }
        if os.allocator != AllocatorPolicy::RankStatic {
            // Only rank_static places pages by them: elsewhere they would be silently ignored.
            if !os.thread_ranks.is_empty() {
                problems.push(format!(
                    "os.thread_ranks: set, but os.allocator is {}; only rank_static places a thread's pages on a given rank",
                    serde_plain_name(os.allocator)
                ));
            }
            if os.mapping_error > 0.0 {
                problems.push(format!(
                    "os.mapping_error: {}, but os.allocator is {}; only rank_static misplaces pages on purpose",
                    os.mapping_error,
                    serde_plain_name(os.allocator)
                ));
            }
        }
        let ranks = self.global_ranks();
        if let Some((i, r)) = os
            .thread_ranks
            .iter()
            .enumerate()
            .find(|&(_, &r)| ranks > 0 && r >= ranks)
        {
            problems.push(format!(
                "os.thread_ranks: entry {i} is rank {r}, out of range; expected a global rank 0..={} (channel x ranks per channel + rank)",
                ranks - 1
            ));
        }
        if !(1..=4096).contains(&self.system.bulk_offload_min_bytes) {
            problems.push(format!(
                "system.bulk_offload_min_bytes: {} is out of range; expected 1 to 4096 bytes (a piece lies within one page)",
                self.system.bulk_offload_min_bytes
            ));
        }
        (spec, problems)
    }
}

/// A config enum value as written in TOML (`rank_static`).
fn serde_plain_name<T: Serialize>(value: T) -> String {
    match toml::Value::try_from(value) {
        Ok(toml::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl Config {
    /// Ranks of all memory devices together (channels x ranks per channel, summed; 0 when
    /// a device's organisation is unknown): the global ranks the OS numbers.
    pub fn global_ranks(&self) -> u32 {
        let devices = if self.memory.device.is_empty() {
            vec![(self.dram.channels, self.dram.ranks)]
        } else {
            self.memory
                .device
                .iter()
                .map(|d| {
                    let pick = |own: u32, top: u32| if own == 0 { top } else { own };
                    (
                        pick(d.channels, self.dram.channels),
                        pick(d.ranks, self.dram.ranks),
                    )
                })
                .collect()
        };
        devices
            .iter()
            .fold(0u32, |n, &(c, r)| n.saturating_add(c.saturating_mul(r)))
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

fn value_error(key: &str, value: &str, e: &impl std::fmt::Display) -> Error {
    let mut valid = match enum_values(key) {
        Some(v) => format!("; valid values: {}", v.join(", ")),
        None => String::new(),
    };
    if key == "bulk.mechanism" && value.trim().trim_matches('"') == "cpu" {
        valid += " ('cpu' is now 'channel': line reads and writes over the channel without caches; the core's copy loop through the caches is the full system's system.bulk_mechanism = cpu)";
    }
    // serde appends "in `key`" on a second line; the key is already named in front.
    let message = e.to_string();
    let first = message.lines().next().unwrap_or("").trim();
    config_err(format!(
        "{key}: bad value '{}': {first}{valid}",
        value.trim()
    ))
}

/// The error for `name` included again while `stack` is being read.
fn include_cycle(name: &str, stack: &[PathBuf]) -> String {
    let chain: Vec<String> = stack.iter().map(|p| p.display().to_string()).collect();
    format!("{name}: include cycle ({})", chain.join(" -> "))
}

/// One file's table merged over its includes; each file is first checked on its own so errors
/// carry that file's name and line.
fn load_merged(path: &Path, stack: &mut Vec<PathBuf>) -> Result<toml::Table> {
    let name = path.display().to_string();
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) {
        return Err(config_err(include_cycle(&name, stack)));
    }
    let text = crate::workload::lines::read_config_file(path)
        .map_err(|e| config_err(format!("{name}: cannot read config: {e}")))?;
    let own = Config::from_toml_str(&text, &name)?;
    let mut table: toml::Table =
        toml::from_str(&text).map_err(|e| config_err(format!("{name}: {e}")))?;
    table.remove("include");
    stack.push(canonical);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut merged = toml::Table::new();
    for include in own.include.paths() {
        let base = load_merged(&dir.join(include), stack)
            .map_err(|e| config_err(format!("{e} (included from {name})")))?;
        merge(&mut merged, base);
    }
    stack.pop();
    merge(&mut merged, table);
    Ok(merged)
}

/// `check_file`'s pass over one file and its includes: reports each unknown key, each value
/// of the wrong type and each include problem into `problems`, and returns the merged table
/// without them.
fn check_merged(path: &Path, stack: &mut Vec<PathBuf>, problems: &mut Vec<String>) -> toml::Table {
    let name = path.display().to_string();
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) {
        problems.push(include_cycle(&name, stack));
        return toml::Table::new();
    }
    let text = match crate::workload::lines::read_config_file(path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{name}: cannot read config: {e}"));
            return toml::Table::new();
        }
    };
    let mut table: toml::Table = match toml::from_str(&text) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("{name}: {}", one_line(&e)));
            return toml::Table::new();
        }
    };
    for key in flat_keys(&table, "") {
        if let Err(e) = check_key(&key) {
            problems.push(format!("{name}: {e}"));
        }
    }
    // Type errors, one per `key = value` line: each found is commented out (keeping the line
    // numbers) and the file parsed again, until none is left.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for _ in 0..=lines.len() {
        let Err(e) = toml::from_str::<Config>(&lines.join("\n")) else {
            break;
        };
        let Some(line) = e
            .span()
            .map(|s| lines.join("\n")[..s.start].matches('\n').count())
        else {
            break;
        };
        let is_assignment = lines[line].contains('=') && !lines[line].trim_start().starts_with('[');
        if !e.message().starts_with("unknown field") {
            let key = key_at_line(&lines, line).unwrap_or_default();
            problems.push(format!(
                "{name}: line {}: {key}: {}",
                line + 1,
                e.message().trim()
            ));
        }
        if !is_assignment {
            break;
        }
        lines[line] = format!("# {}", lines[line]);
    }
    if let Ok(cleaned) = toml::from_str::<toml::Table>(&lines.join("\n")) {
        table = cleaned;
    }
    drop_unknown(&mut table, "");
    let includes = match table.remove("include") {
        Some(toml::Value::String(p)) => vec![p],
        Some(toml::Value::Array(ps)) => ps
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    stack.push(canonical);
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut merged = toml::Table::new();
    for include in includes {
        let base = check_merged(&dir.join(include), stack, problems);
        merge(&mut merged, base);
    }
    stack.pop();
    merge(&mut merged, table);
    merged
}

/// A TOML error's message on one line, with its line number when it has one.
fn one_line(e: &toml::de::Error) -> String {
    let text = e.to_string();
    let mut parts = text.lines().filter(|l| {
        let l = l.trim();
        !l.is_empty()
            && !l.starts_with('|')
            && !l.chars().next().is_some_and(|c| c.is_ascii_digit())
    });
    parts.next().map_or(text.clone(), |first| {
        let rest: Vec<&str> = parts.collect();
        format!("{}: {}", first.trim(), rest.join(" ").trim())
    })
}

/// The dotted key assigned on line `index` of a config file (`cache.level.1.ways` for the
/// second `[[cache.level]]` table), from the table headers above it.
fn key_at_line(lines: &[String], index: usize) -> Option<String> {
    let mut section = String::new();
    let mut array_counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in &lines[..index] {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("[[").and_then(|l| l.split("]]").next()) {
            let name = name.trim().to_string();
            let count = array_counts.entry(name.clone()).or_insert(0);
            section = format!("{name}.{count}");
            *count += 1;
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            section = name.trim().to_string();
        }
    }
    let key = lines[index]
        .split('=')
        .next()?
        .trim()
        .replace(['"', '\''], "");
    Some(if section.is_empty() {
        key
    } else {
        format!("{section}.{key}")
    })
}

/// `key` under the dotted `prefix` (none at the top).
fn dotted(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Removes every key `check_key` rejects (and tables left with no known key).
fn drop_unknown(table: &mut toml::Table, prefix: &str) {
    table.retain(|k, v| {
        let key = dotted(prefix, k);
        match v {
            toml::Value::Table(t) if key == "dram.timing" => {
                t.retain(|name, _| check_key(&format!("dram.timing.{name}")).is_ok());
                true
            }
            toml::Value::Table(t) if !CONFIG_FIELDS.iter().any(|f| f.key == key) => {
                drop_unknown(t, &key);
                CONFIG_FIELDS
                    .iter()
                    .any(|f| f.key.starts_with(&format!("{key}.")))
            }
            toml::Value::Array(items) if check_key(&key).is_ok() => {
                for item in items.iter_mut() {
                    if let toml::Value::Table(t) = item {
                        drop_unknown(t, &format!("{key}[]"));
                    }
                }
                true
            }
            _ => check_key(&key).is_ok(),
        }
    });
}

/// Deep merge: tables merge key by key, anything else in `over` replaces `base`.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Dotted keys of every leaf; each `dram.timing` entry is a leaf of its own.
fn flat_keys(table: &toml::Table, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for (k, v) in table {
        let key = dotted(prefix, k);
        match v {
            toml::Value::Table(t) if key == "dram.timing" => {
                keys.extend(t.keys().map(|name| format!("{key}.{name}")));
            }
            toml::Value::Table(t)
                if !CONFIG_FIELDS.iter().any(|f| f.key == key)
                    || CONFIG_FIELDS
                        .iter()
                        .any(|f| f.key.starts_with(&format!("{key}."))) =>
            {
                keys.extend(flat_keys(t, &key));
            }
            toml::Value::Array(items) => {
                keys.push(key.clone());
                for item in items {
                    if let toml::Value::Table(t) = item {
                        keys.extend(flat_keys(t, &format!("{key}[]")));
                    }
                }
            }
            _ => keys.push(key),
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf_keys_of_default() -> Vec<String> {
        let mut config = Config::default();
        config.memory.device.push(DeviceConfig::default());
        config.hybrid = Some(Default::default());
        let table = toml::Table::try_from(config).unwrap();
        let mut keys = flat_keys(&table, "");
        keys.push("dram.timing".into());
        keys.push("include".into());
        // A table that also takes a shorthand value (`controller.refresh = "none"`).
        keys.push("controller.refresh".into());
        // An optional key, absent by default (the controller's policy).
        keys.push("memory.device[].page_policy".into());
        keys.sort();
        keys.dedup();
        keys
    }

    #[test]
    fn every_field_is_documented_and_every_doc_is_a_field() {
        let keys = leaf_keys_of_default();
        let docs: Vec<String> = CONFIG_FIELDS.iter().map(|f| f.key.to_string()).collect();
        for k in &keys {
            assert!(docs.contains(k), "field {k} has no entry in CONFIG_FIELDS");
        }
        for d in &docs {
            assert!(
                keys.contains(d),
                "CONFIG_FIELDS names {d}, which is not a field"
            );
        }
        for f in CONFIG_FIELDS {
            assert!(!f.unit.is_empty() && !f.description.is_empty(), "{}", f.key);
        }
    }

    #[test]
    fn hybrid_needs_one_dram_and_one_pcm_device_and_names_unbuilt_values() {
        let base = Config::default();
        assert!(base.hybrid.is_none());
        let text = toml::to_string(&base).unwrap();
        assert!(
            !text.contains("hybrid"),
            "an absent [hybrid] is not serialized"
        );
        let hybrid = |sets: &[&str]| {
            let mut all = vec![
                "memory.device.0.preset=DDR3_4Gb_x8_1600",
                "memory.device.1.preset=PCM_x8_1600",
                "hybrid.mechanism=cm",
                "hybrid.placement=pcm_only",
                "controller.refresh=none",
            ];
            all.extend(sets);
            Config::default().apply_sets(&all).unwrap()
        };
        let ok = hybrid(&[]);
        assert!(ok.hybrid.is_some());
        assert_eq!(ok.problems(), Vec::<String>::new());
        let two_dram = hybrid(&[
            "memory.device.1.preset=DDR3_4Gb_x8_1600",
            "memory.device.1.name=b",
        ]);
        let p = two_dram.problems();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("memory.device: [hybrid] needs exactly two devices"),
            "{p:?}"
        );
        let p = hybrid(&["hybrid.remap_lines=retag", "hybrid.period_ns=0"]).problems();
        assert_eq!(p.len(), 1, "retag is accepted: {p:?}");
        assert!(p[0].starts_with("hybrid.period_ns: 0"), "{p:?}");
        let p = hybrid(&["system.bulk_mechanism=mc_dma"]).problems();
        assert!(p[0].starts_with("system.bulk_mechanism:"), "{p:?}");
        let e = Config::default()
            .apply_sets(&["hybrid.mechanizm=cm"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("hybrid.mechanism"), "{e}");
    }

    #[test]
    fn defaults_are_the_documented_system() {
        let c = Config::default();
        assert_eq!(c.dram.preset, "DDR4_8Gb_x8_2400");
        assert_eq!(
            (c.dram.channels, c.dram.ranks, c.dram.rows_per_subarray),
            (1, 1, 512)
        );
        assert_eq!(c.controller.scheduler, Scheduler::Frfcfs);
        assert_eq!(c.controller.page_policy, PagePolicy::Open);
        assert_eq!(c.controller.address_mapping, "RoBaRaCoCh");
        assert_eq!(
            (c.controller.read_queue_size, c.controller.write_queue_size),
            (32, 32)
        );
        assert_eq!(c.controller.refresh.policy, RefreshPolicy::Staggered);
        c.validate().unwrap();
    }

    #[test]
    fn file_errors_name_file_and_line() {
        let e = Config::from_toml_str(
            "[controller]\nscheduler = \"fcfs\"\nschedular = 1\n",
            "my.toml",
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("my.toml")
                && m.contains("controller.schedular")
                && m.contains("did you mean 'controller.scheduler'"),
            "{m}"
        );
        let e =
            Config::from_toml_str("[controller]\nscheduler = \"lifo\"\n", "my.toml").unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("my.toml") && m.contains("line 2") && m.contains("frfcfs"),
            "{m}"
        );
    }

    #[test]
    fn overrides_apply_and_name_bad_keys_and_values() {
        let c = Config::default()
            .apply_sets(&[
                "controller.scheduler=fcfs",
                "dram.ranks=2",
                "dram.timing.nCL=17",
            ])
            .unwrap();
        assert_eq!(c.controller.scheduler, Scheduler::Fcfs);
        assert_eq!(c.dram.ranks, 2);
        assert_eq!(c.spec().unwrap().timing.n_cl, 17);
        let m = Config::default()
            .apply_sets(&["controller.page_polcy=open"])
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("controller.page_polcy")
                && m.contains("did you mean 'controller.page_policy'"),
            "{m}"
        );
        let m = Config::default()
            .apply_sets(&["controller.page_policy=half"])
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("controller.page_policy") && m.contains("open, closed"),
            "{m}"
        );
        assert!(!m.contains('\n'), "one line: {m}");
        let m = Config::default()
            .apply_sets(&["dram.ranks=two"])
            .unwrap_err()
            .to_string();
        assert!(m.contains("dram.ranks"), "{m}");
        let m = Config::default()
            .apply_sets(&["dram.timing.nXYZ=3"])
            .unwrap_err()
            .to_string();
        assert!(m.contains("nXYZ") && m.contains("nCL"), "{m}");
        let m = Config::default()
            .apply_sets(&["noequals"])
            .unwrap_err()
            .to_string();
        assert!(m.contains("key=value"), "{m}");
    }

    #[test]
    fn includes_merge_with_the_including_file_winning() {
        let dir = std::env::temp_dir().join(format!("bulksim-include-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(
            dir.join("sub/base.toml"),
            "[dram]\nranks = 2\nchannels = 2\n[controller]\nscheduler = \"fcfs\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("mid.toml"),
            "include = \"sub/base.toml\"\n[dram]\nranks = 4\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("top.toml"),
            "include = [\"mid.toml\"]\n[controller]\npage_policy = \"closed\"\n",
        )
        .unwrap();
        let c = Config::from_file(&dir.join("top.toml")).unwrap();
        assert_eq!((c.dram.ranks, c.dram.channels), (4, 2));
        assert_eq!(c.controller.scheduler, Scheduler::Fcfs);
        assert_eq!(c.controller.page_policy, PagePolicy::Closed);
        std::fs::write(dir.join("loop.toml"), "include = \"loop.toml\"\n").unwrap();
        assert!(Config::from_file(&dir.join("loop.toml"))
            .unwrap_err()
            .to_string()
            .contains("include cycle"));
        std::fs::write(
            dir.join("bad.toml"),
            "include = \"sub/base.toml\"\n[dram]\nrank = 1\n[controller]\nschedular = 1\n",
        )
        .unwrap();
        let problems = Config::check_file(&dir.join("bad.toml"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems
            .iter()
            .any(|p| p.contains("bad.toml") && p.contains("'dram.rank'")));
        assert!(problems
            .iter()
            .any(|p| p.contains("'controller.schedular'")));
        assert!(Config::check_file(&dir.join("top.toml")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn columns_override_sets_the_row_size() {
        let c = Config::default()
            .apply_sets(&["dram.preset=\"DDR3_2Gb_x8_1066\"", "dram.columns=512"])
            .unwrap();
        let spec = c.spec().unwrap();
        assert_eq!(spec.organisation.columns, 512);
        assert_eq!(
            spec.organisation.row_bytes(),
            4096,
            "the RowClone paper's 4 KB rank row"
        );
        assert_eq!(Config::default().spec().unwrap().organisation.columns, 1024);
    }

    #[test]
    fn semantic_errors_name_the_key() {
        let bad = |sets: &[&str], key: &str| {
            let m = Config::default()
                .apply_sets(sets)
                .unwrap()
                .validate()
                .unwrap_err()
                .to_string();
            assert!(m.contains(key), "{m}");
        };
        bad(&["dram.preset=DDR5"], "dram.preset");
        bad(&["dram.channels=3"], "dram.channels");
        bad(
            &["controller.read_queue_size=0"],
            "controller.read_queue_size",
        );
        bad(
            &["controller.write_low_watermark=0.9"],
            "controller.write_low_watermark",
        );
        bad(
            &["controller.address_mapping=RoBaRa"],
            "controller.address_mapping",
        );
        bad(&["dram.rows_per_subarray=0"], "dram.rows_per_subarray");
        bad(&["dram.columns=500"], "dram.columns");
        bad(&["dram.rows=3"], "dram.rows");
        bad(&["dram.rows=1048576"], "dram.rows");
        bad(&["dram.columns=4"], "dram.columns");
        bad(&["dram.timing.nREFI=10"], "nREFI");
        bad(
            &["cache.level.0.writeback_buffer=0"],
            "cache.level.0.writeback_buffer",
        );
        bad(&["cache.level.0.line_bytes=48"], "cache.level.0.line_bytes");
        bad(&["cache.level.1.line_bytes=32"], "cache.level.1.line_bytes");
        bad(&["memory.device.0.preset=DDR9"], "memory.device.0");
        let e = Config::default()
            .apply_sets(&["bulk.mechanism=cpu"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("now 'channel'") && !e.contains('\n'), "{e}");
    }

    /// `[[memory.device]]`'s controller keys: each device's value, else the top level's; a
    /// bad value is named by the device's key.
    #[test]
    fn devices_take_their_own_page_policy_mapping_and_queues() {
        let two = [
            "memory.device.0.preset=DRAM_CMMP_1000",
            "memory.device.1.preset=PCM_CMMP_400",
            "controller.refresh=none",
        ];
        let c = Config::default()
            .apply_sets(&two)
            .unwrap()
            .apply_sets(&[
                "memory.device.1.page_policy=closed",
                "memory.device.1.address_mapping=RoCoRaBaCh",
                "memory.device.1.read_queue_size=1024",
                "memory.device.1.write_queue_size=512",
            ])
            .unwrap();
        let devices = c.device_configs().unwrap();
        let (dram, pcm) = (&devices[0].1.controller, &devices[1].1.controller);
        assert_eq!(dram.page_policy, PagePolicy::Open);
        assert_eq!(dram.address_mapping, "RoBaRaCoCh");
        assert_eq!((dram.read_queue_size, dram.write_queue_size), (32, 32));
        assert_eq!(pcm.page_policy, PagePolicy::Closed);
        assert_eq!(pcm.address_mapping, "RoCoRaBaCh");
        assert_eq!((pcm.read_queue_size, pcm.write_queue_size), (1024, 512));
        let bad = |set: &str, key: &str| {
            let c = Config::default().apply_sets(&two).unwrap();
            let m = match c.apply_sets(&[set]) {
                Ok(c) => c.validate().unwrap_err().to_string(),
                Err(e) => e.to_string(),
            };
            assert!(m.contains(key) && !m.contains('\n'), "{set}: {m}");
        };
        bad(
            "memory.device.1.address_mapping=RoRaXX",
            "memory.device.1.address_mapping (device1): unknown field 'XX'",
        );
        bad(
            "memory.device.0.read_queue_size=5000",
            "memory.device.0.read_queue_size (device0): 5000",
        );
        bad("memory.device.1.page_policy=half", "page_policy");
        // Bits sensed per ACT: a part with pJ/bit energies, at most its row.
        let c = Config::default()
            .apply_sets(&two)
            .unwrap()
            .apply_sets(&["memory.device.1.activation_bits=4096"])
            .unwrap();
        let specs: Vec<_> = c
            .device_configs()
            .unwrap()
            .iter()
            .map(|(_, c)| c.spec().unwrap().bit_energy.unwrap().activation_bits)
            .collect();
        assert_eq!(specs, [0, 4096]);
        bad(
            "memory.device.1.activation_bits=40000",
            "memory.device.1.activation_bits (device1): 40000 is out of range; expected 1..=32768",
        );
        let e = Config::default()
            .apply_sets(&["dram.activation_bits=512"])
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("dram.activation_bits: DDR4_8Gb_x8_2400 declares no pJ/bit"),
            "{e}"
        );
    }

    #[test]
    fn cache_levels_and_devices_are_lists_settable_by_index() {
        let c = Config::default()
            .apply_sets(&[
                "cache.level.0.size_kb=32",
                "cache.level.0.line_bytes=32",
                "cache.level.1.size_kb=256",
                "memory.device.0.preset=DDR3_2Gb_x8_1066",
                "memory.device.1.preset=DDR4_8Gb_x8_2400",
            ])
            .unwrap();
        assert_eq!(c.cache.level.len(), 2);
        assert_eq!(c.cache.level[0].line_bytes, 32);
        assert_eq!(
            c.cache.level[1],
            CacheLevelConfig {
                size_kb: 256,
                ..Default::default()
            }
        );
        c.validate().unwrap();
        let devices = c.device_configs().unwrap();
        assert_eq!(devices[1].0, "device1");
        assert_eq!(devices[1].1.dram.preset, "DDR4_8Gb_x8_2400");
        let e = Config::default()
            .apply_sets(&["cache.level.3.size_kb=1"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("index 3"), "{e}");
        let e = Config::default()
            .apply_sets(&["cache.level.0.sizekb=1"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cache.level[].size_kb"), "did you mean: {e}");
    }
}
