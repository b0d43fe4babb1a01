//! The full system's own sections: `[system]` (how bulk work and memcpy run, the cores' clock
//! and count, time slices), `[core]` (each out-of-order core's window, width and memory
//! queues) and `[memcpy]` (the instruction costs of the memcpy routines).

use super::choice::config_enum;
use super::field_docs::config_struct;
use serde::{Deserialize, Serialize};

config_enum! {
    /// How the full system executes memcpy, meminit, copy-on-write and zeroing.
    pub enum SystemMechanism {
        Cpu = "cpu",
        McDma = "mc_dma",
        Rowclone = "rowclone",
        RowcloneZi = "rowclone_zi",
    }
}

config_enum! {
    /// How the `cpu` mechanism's store loop treats a destination line it overwrites whole.
    pub enum LineStores {
        /// Write-allocate with fetch: the line is read from memory before the stores land.
        Fetch = "fetch",
        /// The line is allocated in the cache without a read, as string stores (`rep movs`,
        /// `rep stos`) and full-line streaming stores do.
        Allocate = "allocate",
    }
}

config_enum! {
    /// Who executes initializations (meminit, first-touch zeroing).
    pub enum InitMechanism {
        /// `system.bulk_mechanism`, as copies.
        Same = "same",
        /// The core's store loop through the cache, whatever copies use.
        Cpu = "cpu",
    }
}

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct SystemConfig at "system" {
        pub bulk_mechanism: SystemMechanism = choice(
            SystemMechanism,
            "full system: how memcpy, meminit, copy-on-write and zeroing execute: cpu (line loads and stores through the cache), mc_dma, rowclone, rowclone_zi (RowClone zeroing that also inserts clean zero lines into the cache); sets bulk.mechanism below the caches (cpu: channel, for pieces spanning memory devices)",
        ),
        pub init_mechanism: InitMechanism = choice(
            InitMechanism,
            "full system: how meminit and first-touch zeroing execute: same (as system.bulk_mechanism) or cpu (the core's store loop, while copies use system.bulk_mechanism; the RowClone paper's PSM configuration accelerates copies only)",
        ),
        pub core_ghz: f64 = doc("GHz", "core clock frequency (the memory clock is the preset's)"),
        pub cpu_full_line_stores: LineStores = choice(
            LineStores,
            "cpu mechanism: a destination line a copy or initialization overwrites whole is read from memory first (fetch: write-allocate, a kernel's ordinary store loop) or allocated in the cache without a read (allocate: string or full-line stores); partial lines always fetch",
        ),
        pub time_slice_instructions: u64 = doc(
            "instructions",
            "a thread that has retired this many instructions since it got its core gives the core to the next runnable thread there (a forked child or spawned thread; it drains its window first); 0: a thread keeps its core until it waits or exits. bulksim's choice: about 1 ms at 3.2 GHz and IPC 1, the order of Linux's scheduling granularity",
        ),
        pub bulk_offload_min_bytes: u64 = doc(
            "bytes",
            "the smallest piece of a memcpy/meminit (the part within one page) that goes to system.bulk_mechanism; smaller pieces run as the core's copy loop through the cache. The default, one 4 KB page, is the RowClone paper's minimum copy granularity (section 4.3.2: software uses the instructions for regions at least this large; its evaluation's copies and initializations are whole pages); 1 sends every piece",
        ),
        /// Each thread's event stream restarts from its beginning when it ends
        /// (`workload::looping`); needs `sim.stop_after_dram_accesses` or
        /// `sim.measure_instructions`.
        pub loop_workloads: bool = doc(
            "bool",
            "full system: each thread's event stream starts again from its beginning when it ends (its end or an exit), so short traces run until sim.stop_after_dram_accesses or the end of every core's measured window (sim.measure_instructions), one of which it needs; waits (`W`) are skipped (looped children never exit) and later passes skip the first's maps and thread starts (their effect stays); a later pass that unmaps or execs is an error (docs/workloads.md, Looping)",
        ),
        /// Cores in the full system; 0: one per starting thread.
        pub cores: u32 = doc(
            "cores",
            "full system: cores; 0: one per thread that starts the workload. More (at most 1024) add spare cores that start idle: a forked or spawned thread starts on an idle spare core when there is one, else it waits for its parent's core (so an 8-thread process runs its threads side by side with 8 cores); fewer than the starting threads is an error",
        ),
        /// How `M` events and copy-on-write copies run (`bulk`: by `bulk_mechanism`).
        pub memcpy: MemcpyMode = choice(
            MemcpyMode,
            "how memcpy (`M` events) runs: bulk (one operation by system.bulk_mechanism), software (the library routine: memcpy.call_instructions, then word loads and stores through the caches), movblk (the copy-engine routine: memcpy.check_instructions more, software for the head up to a line-aligned destination and for the tail, one movblk plus memcpy.loop_instructions per line; needs copy_engine.policy), software_nt (the software routine with non-temporal stores, the copy-engine paper's Sec. 3 alternative: memcpy.check_instructions more, ordinary stores for the head up to a destination aligned to the last level's line and for the tail, non-temporal stores for every whole line between, which go around the caches (no fill, no allocation; cached copies of the line are dropped, dirty ones written back first) into memcpy.wc_buffers write-combining buffers, then a fence; docs/copy_engines.md)",
        ),
    }
}

config_enum! {
    /// How the full system runs a memcpy (`system.memcpy`).
    pub enum MemcpyMode {
        /// As one bulk operation by `system.bulk_mechanism` (today's behaviour).
        Bulk = "bulk",
        /// The baseline library routine: word loads and stores through the caches.
        Software = "software",
        /// The copy-engine routine: `movblk` for each whole destination line.
        Movblk = "movblk",
        /// The software routine with non-temporal stores through write-combining buffers for
        /// each whole destination memory line (the copy-engine paper's Sec. 3 alternative).
        SoftwareNt = "software_nt",
    }
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

config_struct! {
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct CoreConfig at "core" {
        pub window: u32 = doc(
            "instructions",
            "instruction window (reorder buffer) entries per core",
        ),
        pub width: u32 = doc("instructions per cycle", "dispatch and retire width per core"),
        /// Loads, stores and movblks dispatched per core cycle at most; 0: up to `width`.
        pub mem_ports: u32 = doc(
            "accesses per cycle",
            "loads, stores and movblks a core dispatches per cycle at most (memory ports); 0: as many as core.width",
        ),
        /// Store misses that may wait for their line at once; 0: no limit.
        pub store_queue: u32 = doc(
            "stores",
            "stores that missed the first level and wait for their line (write-allocate) at once, per core; one more stalls dispatch until a fill completes; 0: no limit, a store never stalls the core",
        ),
        /// Loads, stores and movblks in the window at once (a load/store queue); 0: no limit.
        pub lsq: u32 = doc(
            "memory instructions",
            "loads, stores and movblks in the window at once, per core (a load/store queue: each holds an entry from dispatch until it retires, in order, so a load waiting for its line holds the younger ones' entries too); when it is full, dispatch stops (SimpleScalar's sim-outorder, the copy-engines paper's simulator: 8 entries); 0: no limit beyond core.window",
        ),
    }
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

config_struct! {
    /// The instruction costs of the memcpy routines (`[memcpy]`, `system.memcpy`).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct MemcpyConfig at "memcpy" {
        pub call_instructions: u32 = doc(
            "instructions",
            "non-memory instructions of one memcpy call (call, return, set-up); bulksim's choice, the paper's code is unknown",
        ),
        pub word_bytes: u32 = doc(
            "bytes",
            "software memcpy: bytes per load and store (4: a 32-bit word, bulksim's choice); a power of two from 1 to 8",
        ),
        pub check_instructions: u32 = doc(
            "instructions",
            "movblk memcpy: the size and alignment test per call (why the copy-engines paper's gains grow with the payload)",
        ),
        pub loop_instructions: u32 = doc(
            "instructions",
            "movblk memcpy: loop instructions per movblk (pointer increments, count, branch)",
        ),
        pub wc_buffers: u32 = doc(
            "buffers per core",
            "software_nt memcpy: write-combining buffers of one last-level line each; a full one is written to memory as one line write, a store into another line with all of them open evicts the oldest early as a partial (masked) write of its stored bytes, the routine's fence writes out the rest. 1 to 64; 4 from Intel's Pentium 4 and Xeon optimization guide as Intel's article \"Write-Combining Store Buffers on Hyper-Threading Technology Enabled Systems\" quotes it (write to no more than four lines at a time: more starts flushing the buffers)",
        ),
    }
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
