//! Assembling a run's `SystemStats` from the components at its end: cores, threads,
//! caches, OS, memory devices, the hybrid memory and its energy, the measured interval and
//! the interruption metrics.

use super::*;
use crate::cache::hierarchy::Traffic;

impl System {
    /// The run's stats (`wall_seconds`: its host time).
    pub(super) fn stats(&self, wall_seconds: f64) -> SystemStats {
        let end = self.sched.end_fs();
        let cycles = end / self.timing.core_fs;
        let instructions: u64 = self.cores.iter().map(|c| c.retired).sum();
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let (unavailable, interruptions) = self.unavailability();
        let mut devices = self.device_stats(wall_seconds);
        let (traffic, energy_nj) = self.traffic_and_energy(&devices);
        if let Some(m) = &self.measure {
            for (i, d) in devices.iter_mut().enumerate() {
                let reads = self.mem.router().devices[i].channels.read_latencies();
                m.device_interval(i, &mut d.stats, reads);
            }
        }
        let memory = devices[0].stats.clone();
        let (hybrid, hybrid_energy) = self.hybrid_stats(&devices);
        if devices.len() == 1 {
            devices.clear();
        }
        let total = traffic.total();
        let (memcpy_ops, meminit_ops, bulk_wait) = self.bulk.counts();
        let cache = self
            .mem
            .levels
            .iter()
            .map(|l| (l.name.clone(), l.stats()))
            .collect();
        let (cores, measurement) = self.core_stats();
        SystemStats {
            mechanism: self.bulk.mechanism_name().into(),
            core_ghz: 1e6 / self.timing.core_fs as f64,
            core_cycles: cycles,
            simulated_ns: end as f64 / 1e6,
            instructions,
            ipc: ratio(instructions, cycles),
            cores,
            threads: self.sched.thread_stats(),
            traffic_bytes: total,
            fmtc: ratio(traffic.copy_bytes, total),
            bytes_per_instruction: ratio(total, instructions),
            energy_nj_per_instruction: if instructions == 0 {
                0.0
            } else {
                energy_nj / instructions as f64
            },
            traffic,
            memcpy_ops,
            meminit_ops,
            bulk_wait,
            cache,
            os: self.os.stats.clone(),
            memory,
            memory_devices: devices,
            copy_engine: self.bulk.engines().map(|e| e.stats(&self.mem)),
            write_combining: self
                .bulk
                .non_temporal()
                .then(|| self.mem.write_combining_stats.clone()),
            hybrid,
            hybrid_energy,
            measurement,
            unavailable,
            interruptions,
        }
    }

    /// Every channel's unavailability (refreshes, write drains) in device order, and the
    /// interruption metrics over it; intervals recorded for the metrics alone are dropped.
    fn unavailability(
        &self,
    ) -> (
        Vec<crate::controller::unavailability::Unavailability>,
        Option<interruptions::InterruptionStats>,
    ) {
        let mut unavailable: Vec<_> = self
            .mem
            .router()
            .devices
            .iter()
            .flat_map(|d| d.channels.unavailability())
            .collect();
        let interruptions = self
            .interruptions
            .as_ref()
            .map(|rec| rec.finish(&unavailable, self.run.record_intervals));
        if !self.run.record_intervals {
            // Recorded for the metrics only.
            for u in &mut unavailable {
                u.intervals.clear();
            }
        }
        (unavailable, interruptions)
    }

    /// Each memory device's stats over the whole run, with the host's wall time.
    fn device_stats(&self, wall_seconds: f64) -> Vec<DeviceStats> {
        let mut devices: Vec<DeviceStats> = self
            .mem
            .router()
            .devices
            .iter()
            .map(|d| DeviceStats {
                name: d.name.clone(),
                base: d.base,
                bytes: d.size,
                stats: d.channels.stats(0),
            })
            .collect();
        for (i, d) in devices.iter_mut().enumerate() {
            let s = &mut d.stats;
            s.host.memory_offers = self.mem.memory_offers.get(i).copied().unwrap_or(0);
            s.host.wall_seconds = wall_seconds;
            if wall_seconds > 0.0 {
                s.host.requests_per_wall_second = (s.reads + s.writes) as f64 / wall_seconds;
            }
        }
        devices
    }

    /// The traffic by cause, with the devices' bulk bytes, and the devices' energy (nJ),
    /// both over the whole run.
    fn traffic_and_energy(&self, devices: &[DeviceStats]) -> (Traffic, f64) {
        let mut traffic = self.mem.traffic.clone();
        let mut energy_nj = 0.0;
        for d in devices {
            traffic.copy_bytes += d.stats.bulk.copy_channel_bytes;
            traffic.init_bytes += d.stats.bulk.init_channel_bytes;
            energy_nj += d.stats.energy.total_nj;
        }
        (traffic, energy_nj)
    }

    /// The hybrid memory's stats and energy, over the measured interval when there is one
    /// (as the `devices`' stats already are).
    fn hybrid_stats(
        &self,
        devices: &[DeviceStats],
    ) -> (
        Option<crate::memory::hybrid::HybridStats>,
        Option<crate::hybrid::energy::HybridEnergy>,
    ) {
        let mut hybrid = self.mem.router().hybrid_stats();
        if let (Some(m), Some(h)) = (&self.measure, &mut hybrid) {
            m.hybrid_interval(h);
        }
        let hybrid_energy = self
            .mem
            .router()
            .hybrid
            .as_ref()
            .zip(hybrid.as_ref())
            .map(|(h, s)| {
                crate::hybrid::energy::hybrid_energy(
                    &devices[h.dram].stats,
                    &devices[h.pcm].stats,
                    &s.pact,
                    &s.art,
                )
            });
        (hybrid, hybrid_energy)
    }

    /// Each core's stats, and the measured windows' (made so when there are any).
    fn core_stats(&self) -> (Vec<CoreStats>, Option<stats::MeasurementStats>) {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let mut cores: Vec<CoreStats> = self
            .cores
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let counts = self.sched.core_counts(k);
                let own = counts.last_exit_fs / self.timing.core_fs;
                CoreStats {
                    instructions: c.retired,
                    core_cycles: own,
                    ipc: ratio(c.retired, own),
                    preemptions: counts.preemptions,
                    yields: counts.yields,
                    ..Default::default()
                }
            })
            .collect();
        let measurement = self.measure.as_ref().map(|m| {
            for (c, s) in cores
                .iter_mut()
                .enumerate()
                .take(self.sched.spare_cores_from())
            {
                m.core(c, s, self.timing.core_fs);
            }
            m.stats(&cores, self.timing.core_fs)
        });
        (cores, measurement)
    }
}
