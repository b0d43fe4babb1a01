//! The memory devices: each `[[memory.device]]` resolved into a whole config of its own (its
//! part, organisation, page policy, mapping and queues over the top-level settings), the
//! problems of each named by the device's own key, the total capacity, and the global ranks
//! the OS numbers across devices.

use super::{Config, DeviceConfig};
use crate::error::{config_err, Result};
use crate::limits;
use crate::spec::Spec;

impl Config {
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
    pub(super) fn resolve_devices(&self) -> (Vec<(String, Config)>, Vec<String>) {
        if self.memory.device.is_empty() {
            return (vec![(self.dram.preset.clone(), self.clone())], Vec::new());
        }
        let mut out: Vec<(String, Config)> = Vec::new();
        let mut problems = Vec::new();
        let mut total: u64 = 0;
        for (i, d) in self.memory.device.iter().enumerate() {
            let c = self.device_config(d);
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
            let spec = c.device_problems(i, d, &name, &mut problems);
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

    /// This config with device `d`'s own settings over it, as one plain device.
    fn device_config(&self, d: &DeviceConfig) -> Config {
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
        c
    }

    /// The problems of device `i`'s config (this one, `device_config` of `d`) named by the
    /// device's own keys, pushed to `problems`; its spec when it has none of its own.
    fn device_problems(
        &self,
        i: usize,
        d: &DeviceConfig,
        name: &str,
        problems: &mut Vec<String>,
    ) -> Option<Spec> {
        // Only the device's own keys can differ from the top level's, whose problems
        // are reported once, there.
        let (spec, own) = self.resolve_spec();
        // A device already too large on its own is not counted again in the total.
        let spec = spec.filter(|_| own.is_empty());
        problems.extend(own.into_iter().map(|p| device_key(i, d, name, p)));
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
        if let Some(p) = spec.as_ref().and_then(|s| self.refresh_problem(s)) {
            problems.push(format!("memory.device.{i} ({name}): {p}"));
        }
        spec
    }

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

/// Problem `p` of device `i`'s config named by the device's own key when the device sets the
/// value it is about, else prefixed with the device.
fn device_key(i: usize, d: &DeviceConfig, name: &str, p: String) -> String {
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
}
