//! The memory system: the address mapper and one controller per channel. It routes requests by
//! channel, steps every controller, merges their command logs in cycle order into one file, and
//! sums their counters into `Stats`.

use crate::config::Config;
use crate::controller::{Controller, ControllerStats, RequestKind};
use crate::device::CommandLog;
use crate::energy::{rank_energy, EnergyBreakdown};
use crate::error::{Error, Result};
use crate::mapping::AddressMapper;
use crate::spec::{Command, Spec};
use crate::stats::{EnergyStats, LatencyStats, Stats};
use std::path::Path;

pub struct MemorySystem {
    spec: Spec,
    mapper: AddressMapper,
    controllers: Vec<Controller>,
    log: Option<CommandLog>,
    out_of_range: u64,
}

impl MemorySystem {
    pub fn new(config: &Config) -> Result<MemorySystem> {
        let spec = config.spec()?;
        let c = &config.controller;
        let mapper = AddressMapper::new(&spec.organisation, &c.address_mapping, c.xor_bank)?;
        let controllers = (0..spec.organisation.channels)
            .map(|ch| Controller::new(&spec, c, ch))
            .collect();
        Ok(MemorySystem {
            spec,
            mapper,
            controllers,
            log: None,
            out_of_range: 0,
        })
    }

    /// Writes every issued command to `path` (CSV, see `device::command_log`).
    pub fn log_commands_to(&mut self, path: &Path) -> Result<()> {
        let log = CommandLog::create(path)
            .map_err(|e| Error::Io(format!("command log {}: {e}", path.display())))?;
        self.log = Some(log);
        for c in &mut self.controllers {
            c.device.enable_log();
        }
        Ok(())
    }

    /// Offers a request at cycle `now`; false if its channel's queue is full.
    #[inline]
    pub fn try_enqueue(&mut self, kind: RequestKind, addr: u64, now: u64) -> bool {
        let dram = self.mapper.decode(addr);
        let ctrl = &mut self.controllers[dram.channel as usize];
        if !ctrl.can_accept(kind) {
            return false;
        }
        if addr >= self.mapper.capacity() {
            self.out_of_range += 1;
        }
        ctrl.enqueue(kind, addr / self.mapper.line_bytes(), dram, now);
        true
    }

    /// Steps every channel at `now`; returns the earliest cycle anything can change next.
    #[inline]
    pub fn tick(&mut self, now: u64) -> u64 {
        let mut next = u64::MAX;
        for c in &mut self.controllers {
            next = next.min(c.tick(now));
        }
        if let Some(log) = &mut self.log {
            for c in &mut self.controllers {
                c.device
                    .drain_log(|ch, cmd| log.record(cmd.cycle, cmd.command, ch, &cmd.addr));
            }
        }
        next
    }

    pub fn is_idle(&self) -> bool {
        self.controllers.iter().all(|c| c.is_idle())
    }

    /// Flushes the command log, if any.
    pub fn finish_log(&mut self) -> Result<()> {
        match self.log.take() {
            Some(log) => log
                .finish()
                .map_err(|e| Error::Io(format!("command log {e}"))),
            None => Ok(()),
        }
    }

    /// Sums the controllers' counters into `Stats` (host figures left at zero).
    pub fn stats(&self, frontend_stall_cycles: u64) -> Stats {
        let mut total = ControllerStats::default();
        let mut counts = [0u64; crate::spec::NUM_COMMANDS];
        for c in &self.controllers {
            total.add(&c.stats);
            for (sum, n) in counts.iter_mut().zip(c.device.command_counts()) {
                *sum += n;
            }
        }
        let tck_ns = self.spec.tck_ns();
        let cycles = total.last_done;
        let simulated_ns = cycles as f64 * tck_ns;
        let bursts: u64 = Command::ALL
            .iter()
            .filter(|c| c.is_column())
            .map(|&c| counts[c as usize])
            .sum();
        let bytes = bursts * self.mapper.line_bytes();
        let accesses = total.row_hits + total.row_misses + total.row_conflicts;
        let mut energy = EnergyBreakdown::default();
        let mut by_rank_nj = Vec::new();
        for c in &self.controllers {
            for activity in c.device.activity(cycles) {
                let e = rank_energy(&self.spec, &activity);
                by_rank_nj.push(e.total_nj());
                energy.add(&e);
            }
        }
        Stats {
            preset: self.spec.name.clone(),
            tck_ns,
            cycles,
            simulated_ns,
            reads: total.reads,
            writes: total.writes,
            reads_forwarded: total.reads_forwarded,
            writes_merged: total.writes_merged,
            read_latency: LatencyStats::from_histogram(&total.read_latency, tck_ns),
            bandwidth_gbps: if cycles == 0 {
                0.0
            } else {
                bytes as f64 / simulated_ns
            },
            peak_bandwidth_gbps: self.spec.peak_channel_gbps() * self.controllers.len() as f64,
            row_hits: total.row_hits,
            row_misses: total.row_misses,
            row_conflicts: total.row_conflicts,
            row_hit_rate: if accesses == 0 {
                0.0
            } else {
                total.row_hits as f64 / accesses as f64
            },
            commands: Command::ALL
                .iter()
                .map(|&c| (c.name().to_string(), counts[c as usize]))
                .collect(),
            refreshes: counts[Command::Ref as usize],
            frontend_stall_cycles,
            out_of_range_requests: self.out_of_range,
            mcgr_bytes: self.mapper.mcgr_bytes(),
            energy: EnergyStats {
                core_nj: energy.core_nj(),
                total_nj: energy.total_nj(),
                components: energy,
                by_rank_nj,
                power_source: self.spec.power.source.clone(),
            },
            host: Default::default(),
        }
    }
}
