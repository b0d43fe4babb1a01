//! The checks of the cache hierarchy and what sits beside it: each `[[cache.level]]`'s
//! geometry and order, the copy engines and the levels they need, the memcpy routines' costs,
//! the cores' memory queues and ports, and the port and fixed-latency memory below.

use super::{Config, CopyEnginePolicy, MemcpyMode, SystemMechanism};

impl Config {
    /// `[copy_engine]` and what it needs of the rest (its cache levels, RowClone for
    /// `dce_rowclone`), and the memcpy routines' and cores' settings.
    pub(super) fn check_copy_engines(&self, problems: &mut Vec<String>) {
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
        self.check_memcpy_and_ports(problems);
        self.check_engine_levels(problems);
        if ce.probe_cycles > 100_000 {
            problems.push(format!(
                "copy_engine.probe_cycles: {} is out of range; expected 0..=100000 core cycles",
                ce.probe_cycles
            ));
        }
        if self.system.memcpy == MemcpyMode::Movblk && ce.policy == CopyEnginePolicy::None {
            problems.push("system.memcpy: movblk needs a copy engine; set copy_engine.policy to ce_l1, dce, dce_nt or dce_rowclone (or system.memcpy to software)".into());
        }
        for (i, l) in self.cache.level.iter().enumerate() {
            if l.port_cycles > 10_000 {
                problems.push(format!(
                    "cache.level.{i}.port_cycles: {} is out of range; expected 0..=10000",
                    l.port_cycles
                ));
            }
        }
    }

    /// `[memcpy]`'s routine costs, `[core]`'s memory queues and ports, the address size on
    /// the ports between levels, and the fixed-latency memory.
    fn check_memcpy_and_ports(&self, problems: &mut Vec<String>) {
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
    }

    /// The cache levels a copy-engine policy needs, and `dce_rowclone`'s RowClone and chunks.
    fn check_engine_levels(&self, problems: &mut Vec<String>) {
        let ce = &self.copy_engine;
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
    }

    /// Each `[[cache.level]]`'s geometry and latency, and the order of the levels.
    pub(super) fn check_cache_levels(&self, problems: &mut Vec<String>) {
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
                    // Without valid ways and size there are no sets to count (0 ways would
                    // divide by zero below).
                    geometry_ok &= key != "ways" && key != "size_kb";
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
}
