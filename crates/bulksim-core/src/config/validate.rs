//! Semantic validation: every problem of a config, one message each naming its key, in key
//! order. The spec's and devices' problems come from `spec.rs` and `devices.rs`, the cache
//! hierarchy's and copy engines' from `validate_hierarchy.rs`; here are the rest, section by
//! section (controller queues and write drain, bulk, cores, system and sim, OS, and what
//! `[hybrid]` needs of the rest).

use super::{
    AllocatorPolicy, Config, CopyEnginePolicy, DrainScope, MemcpyMode, SimMode, SystemMechanism,
};
use crate::error::Result;
use crate::spec::Spec;
use serde::Serialize;

impl Config {
    /// Semantic checks beyond types; also resolves the spec and the mapping once.
    pub fn validate(&self) -> Result<()> {
        self.spec().map(|_| ())
    }

    /// Every semantic problem of this config, one message each naming its key, in key
    /// order; empty when the config is valid. (`validate` and `spec` report the first.)
    pub fn problems(&self) -> Vec<String> {
        self.resolve().1
    }

    /// The resolved spec (`None` when the preset is unknown) and every problem of the config.
    pub(super) fn resolve(&self) -> (Option<Spec>, Vec<String>) {
        let (spec, mut problems) = self.resolve_spec();
        if let Some(p) = spec.as_ref().and_then(|s| self.refresh_problem(s)) {
            problems.push(p);
        }
        self.check_controller(&mut problems);
        self.check_bulk_and_cores(&mut problems);
        self.check_cache_levels(&mut problems);
        self.check_copy_engines(&mut problems);
        problems.extend(self.resolve_devices().1);
        self.check_hybrid(&mut problems);
        self.check_system_and_sim(&mut problems);
        self.check_os(&mut problems);
        if !(1..=4096).contains(&self.system.bulk_offload_min_bytes) {
            problems.push(format!(
                "system.bulk_offload_min_bytes: {} is out of range; expected 1 to 4096 bytes (a piece lies within one page)",
                self.system.bulk_offload_min_bytes
            ));
        }
        (spec, problems)
    }

    /// `[controller]`'s queues, watermarks and write drain.
    fn check_controller(&self, problems: &mut Vec<String>) {
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
    }

    /// `[bulk]`'s queues and `[core]`'s window and width.
    fn check_bulk_and_cores(&self, problems: &mut Vec<String>) {
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
    }

    /// `[system]`'s clock, cores and looping, and `[sim]`'s stop and measurement settings.
    fn check_system_and_sim(&self, problems: &mut Vec<String>) {
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
    }

    /// `[os]`: the mapping error, TLB reach, and the rank settings only `rank_static` uses.
    fn check_os(&self, problems: &mut Vec<String>) {
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
}

/// A config enum value as written in TOML (`rank_static`).
pub(super) fn serde_plain_name<T: Serialize>(value: T) -> String {
    match toml::Value::try_from(value) {
        Ok(toml::Value::String(s)) => s,
        _ => String::new(),
    }
}
