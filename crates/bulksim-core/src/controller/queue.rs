//! One controller queue (reads or writes): requests in arrival order and, beside each, a cached
//! ready hint, a lower bound on the earliest cycle of the command the request needs next.
//!
//! The hints are what keep scans cheap. Ready-at deadlines only ever rise, and the command a
//! request needs (ACT, PRE or its column command) changes only when its bank's open row does.
//! So while no open row has changed, a hint later than `now` proves the request cannot issue
//! without consulting the timing tables; a scan walks the hints in a tight loop and looks up
//! only the requests whose hints have come due, renewing their hints. When
//! the controller changes one bank's open row it drops that bank's hints; when anything else
//! does (the bulk engine, refresh, a switch between queues), every hint is dropped. A hint may
//! be early, which wakes the controller to find nothing, never late.

use super::request::Request;
use crate::device::Device;
use crate::spec::Command;

pub struct RequestQueue {
    entries: Vec<Request>,
    hints: Vec<u64>,
    /// The device's open-row change count at which the hints were last valid.
    synced_at: u64,
    capacity: usize,
}

impl RequestQueue {
    pub fn new(capacity: usize) -> RequestQueue {
        RequestQueue {
            entries: Vec::with_capacity(capacity),
            hints: Vec::with_capacity(capacity),
            synced_at: 0,
            capacity,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    /// The requests, oldest first.
    #[inline]
    pub fn entries(&self) -> &[Request] {
        &self.entries
    }

    #[inline]
    pub fn get_mut(&mut self, index: usize) -> &mut Request {
        &mut self.entries[index]
    }

    /// Appends a request; its hint starts at 0, so the next scan looks it up.
    #[inline]
    pub fn push(&mut self, request: Request) {
        self.entries.push(request);
        self.hints.push(0);
    }

    #[inline]
    pub fn remove(&mut self, index: usize) -> Request {
        self.hints.remove(index);
        self.entries.remove(index)
    }

    /// Drops every hint if an open row changed since they were computed. In debug builds
    /// (every test run) it then checks that each hint is a lower bound of the truth.
    #[inline]
    pub fn sync(&mut self, device: &Device) {
        let changes = device.open_row_changes();
        if self.synced_at != changes {
            self.hints.fill(0);
            self.synced_at = changes;
        }
        #[cfg(debug_assertions)]
        for (r, &hint) in self.entries.iter().zip(&self.hints) {
            let (cmd, t) = device.next_for(r.column, &r.addr);
            assert!(
                hint <= t,
                "ready hint {hint} is later than {cmd:?}'s earliest cycle {t} at {:?}",
                r.addr
            );
        }
    }

    /// Called after this queue's owner issued a command that changed the open row of `bank`
    /// (the device's change count was `before`): drops that bank's hints only, when the
    /// others were valid until then.
    pub fn bank_changed(&mut self, bank: u32, before: u64, device: &Device) {
        if self.synced_at != before {
            return; // already stale: the next `sync` drops everything
        }
        for (hint, r) in self.hints.iter_mut().zip(&self.entries) {
            if r.addr.bank_index == bank {
                *hint = 0;
            }
        }
        self.synced_at = device.open_row_changes();
    }

    /// The index of the first request at or after `start` whose hint is at most `now`, if
    /// any; the hints passed over lower `later`. Call `sync` first.
    #[inline]
    pub fn next_due(&self, start: usize, now: u64, later: &mut u64) -> Option<usize> {
        let hints = &self.hints;
        let mut min = *later;
        let mut i = start;
        // Four hints at a time, branch-free, until a block holds a due one.
        while let Some(&[a, b, c, d]) = hints.get(i..i + 4) {
            if (a <= now) | (b <= now) | (c <= now) | (d <= now) {
                break;
            }
            min = min.min(a.min(b).min(c.min(d)));
            i += 4;
        }
        while i < hints.len() {
            let hint = hints[i];
            if hint <= now {
                *later = min;
                return Some(i);
            }
            min = min.min(hint);
            i += 1;
        }
        *later = min;
        None
    }

    /// The command request `index` needs next and its earliest cycle, from the device; the
    /// cycle becomes the request's hint.
    #[inline]
    pub fn look_up(&mut self, index: usize, device: &Device) -> (Command, u64) {
        let r = &self.entries[index];
        let (cmd, t) = device.next_for(r.column, &r.addr);
        self.hints[index] = t;
        (cmd, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::request::{RequestKind, NO_TAG};
    use crate::mapping::{AddressMapper, DramAddr};
    use crate::spec::presets::preset;

    fn request(addr: DramAddr) -> Request {
        Request {
            kind: RequestKind::Read,
            line: 0,
            addr,
            column: Command::Rd,
            arrival: 0,
            issued: 0,
            activated: false,
            precharged: false,
            tag: NO_TAG,
            program: false,
            low: false,
        }
    }

    #[test]
    fn a_row_change_drops_only_that_banks_hints() {
        let spec = preset("DDR4_8Gb_x8_2400").unwrap();
        let t = spec.timing.clone();
        let mapper = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
        let mut dev = Device::new(&spec, 0);
        let bank0_row2 = mapper.locate(0, 0, 0, 0, 2, 0);
        let bank0_row1 = mapper.locate(0, 0, 0, 0, 1, 0);
        let bank1_row1 = mapper.locate(0, 0, 1, 0, 1, 0);
        dev.issue(Command::Act, &bank0_row2, 0);
        let mut q = RequestQueue::new(4);
        q.push(request(bank0_row1));
        q.push(request(bank1_row1));
        q.sync(&dev);
        // A conflict waits for tRAS before its PRE; the other bank's ACT for tRRD_S.
        assert_eq!(q.look_up(0, &dev), (Command::Pre, t.n_ras as u64));
        assert_eq!(q.look_up(1, &dev), (Command::Act, t.n_rrd_s as u64));
        let mut later = u64::MAX;
        assert_eq!(q.next_due(0, 0, &mut later), None);
        assert_eq!(later, t.n_rrd_s as u64);

        // Bank 0 closes: its request now needs an ACT, so its hint must go; bank 1's stays.
        let before = dev.open_row_changes();
        dev.issue(Command::Pre, &bank0_row2, t.n_ras as u64);
        q.bank_changed(bank0_row2.bank_index, before, &dev);
        assert_eq!(q.hints, vec![0, t.n_rrd_s as u64]);
        q.sync(&dev);
        assert_eq!(q.hints, vec![0, t.n_rrd_s as u64], "still in sync");

        // A change the queue did not hear about (another issuer) drops every hint.
        dev.issue(Command::Act, &bank1_row1, 100);
        q.sync(&dev);
        assert_eq!(q.hints, vec![0, 0]);
    }
}
