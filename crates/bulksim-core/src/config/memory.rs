//! `[memory]` and each `[[memory.device]]`: the devices of the physical address space, each
//! with its own part, organisation, page policy, mapping and queues over the top-level
//! settings (`devices.rs` resolves them), or a fixed-latency memory.

use super::field_docs::config_struct;
use super::PagePolicy;
use serde::{Deserialize, Serialize};

config_struct! {
    /// Main memory: the devices in the physical address space, in order from address 0. Empty:
    /// one device described by `[dram]`, `[controller]` and `[bulk]`.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct MemoryConfig at "memory" {
        pub device: Vec<DeviceConfig> = doc(
            "list of tables",
            "memory devices from physical address 0 up, each in the next range as large as its organisation (`[[memory.device]]`); empty: one device from [dram]",
        ),
        /// Core cycles a fixed-latency memory answers in; 0: the DRAM devices time requests.
        pub fixed_latency_cycles: u32 = doc(
            "core cycles",
            "when above 0, memory answers every read this many core cycles after the last level sends it, with no contention, and takes write-backs at once (the copy-engines paper's 100-cycle memory); the DRAM devices only hold the address space. 0: the DRAM devices time every request",
        ),
    }
}

config_struct! {
    /// One memory device (`[[memory.device]]`): its own part and organisation, and the controller
    /// settings a hybrid memory's two parts need apart (CMMP's Table I: open-page DRAM, closed-page
    /// PCM, each with its own mapping and queues); the rest of the controller and the bulk
    /// settings are the top-level ones. Unset (empty, 0, absent): the top level's value.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct DeviceConfig at "memory.device[]" {
        pub name: String = doc(
            "name",
            "the device's name in stats (default deviceN); names differ",
        ),
        pub preset: String = doc(
            "name",
            "the device's part (empty: dram.preset); its clock is the part's",
        ),
        pub channels: u32 = doc("channels", "channels of this device (0: dram.channels)"),
        pub ranks: u32 = doc("ranks per channel", "ranks of this device (0: dram.ranks)"),
        pub rows: u32 = doc(
            "rows per bank",
            "rows of this device's banks (0: dram.rows), e.g. a small DRAM beside a large PCM",
        ),
        pub activation_bits: u64 = doc(
            "bits per ACT",
            "this device's dram.activation_bits (0: dram.activation_bits)",
        ),
        #[serde(skip_serializing_if = "Option::is_none")]
        pub page_policy: Option<PagePolicy> = choice(
            PagePolicy,
            "page policy of this device's controllers (absent: controller.page_policy); CMMP's Table I: open for DRAM, closed for PCM",
        ),
        pub address_mapping: String = doc(
            "field order or mapping name",
            "address mapping of this device (empty: controller.address_mapping); CMMP's Table I: RoRaBaCoCh for DRAM, RoCoRaBaCh for PCM",
        ),
        pub read_queue_size: u32 = doc(
            "requests",
            "read queue entries per channel of this device (0: controller.read_queue_size); bulksim's queues are channel-wide, so Table I's per-bank queues are banks x entries per bank (docs/hybrid.md)",
        ),
        pub write_queue_size: u32 = doc(
            "requests",
            "write queue entries per channel of this device (0: controller.write_queue_size)",
        ),
    }
}
