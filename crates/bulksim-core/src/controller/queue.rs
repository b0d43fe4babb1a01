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
//!
//! Beside each hint the queue keeps a small key (bank, rank, row, column command, and whether
//! that row is the one open in its bank), renewed where the hints are dropped: look-ups and
//! FR-FCFS's row-hit scans read the keys, not the requests, and once the scheduler holds an
//! oldest ready request it visits only the requests that hit an open row (`next_due_hit`).
//! The requests themselves sit in slots that do not move; serving one moves only the keys
//! and hints behind it.

use super::request::Request;
use crate::device::Device;
use crate::mapping::DramAddr;
use crate::spec::Command;

/// One queued request's place in the age order: what a look-up in the timing tables reads
/// (bank, rank, row, column command: copied, so that scans and look-ups read 20 bytes per
/// request, not the whole request), whether its row is the one open in its bank, and the slot
/// that holds the request.
#[derive(Clone, Copy)]
struct Key {
    bank: u32,
    rank: u32,
    row: u32,
    slot: u32,
    column: Command,
    /// The request's row is open: its next command is its column command.
    hits_open_row: bool,
}

pub struct RequestQueue {
    /// The requests in no order; a slot not named by `keys` is free.
    slots: Vec<Request>,
    /// Free slots, reused last-freed first.
    free: Vec<u32>,
    /// The queued requests, oldest first. Serving one moves the keys and hints behind it
    /// (24 bytes each), never the requests themselves.
    keys: Vec<Key>,
    /// Beside each key, its request's ready hint.
    hints: Vec<u64>,
    /// How many keys have `hits_open_row`.
    open_row_hits: usize,
    /// Per bank index, how many of its keys have `hits_open_row`.
    bank_hits: Vec<u32>,
    /// The device's open-row change count at which the hints were last valid.
    synced_at: u64,
    capacity: usize,
}

impl RequestQueue {
    /// A queue of `capacity` requests to a device of `banks` banks (over all its ranks).
    pub fn new(capacity: usize, banks: usize) -> RequestQueue {
        RequestQueue {
            slots: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
            keys: Vec::with_capacity(capacity),
            hints: Vec::with_capacity(capacity),
            open_row_hits: 0,
            bank_hits: vec![0; banks],
            synced_at: 0,
            capacity,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.keys.len() >= self.capacity
    }

    /// The request at position `index` of the age order (0: the oldest).
    #[inline]
    pub fn get(&self, index: usize) -> &Request {
        &self.slots[self.keys[index].slot as usize]
    }

    /// The requests, oldest first.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &Request> + '_ {
        self.keys.iter().map(|k| &self.slots[k.slot as usize])
    }

    /// The request at position `index`, to change fields other than its address and column
    /// command (the key's copies stay as they were).
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> &mut Request {
        &mut self.slots[self.keys[index].slot as usize]
    }

    /// Appends a request; its hint starts at 0, so the next scan looks it up.
    #[inline]
    pub fn push(&mut self, request: Request, device: &Device) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = request;
                slot
            }
            None => {
                self.slots.push(request);
                self.slots.len() as u32 - 1
            }
        };
        let hits_open_row = device.open_row(&request.addr) == Some(request.addr.row);
        self.bank_hits[request.addr.bank_index as usize] += hits_open_row as u32;
        self.open_row_hits += hits_open_row as usize;
        self.keys.push(Key {
            bank: request.addr.bank_index,
            rank: request.addr.rank,
            row: request.addr.row,
            slot,
            column: request.column,
            hits_open_row,
        });
        self.hints.push(0);
    }

    /// Takes the request at position `index` out of the queue; the younger ones move up.
    #[inline(always)]
    pub fn remove(&mut self, index: usize) -> Request {
        let key = self.keys.remove(index);
        self.hints.remove(index);
        self.open_row_hits -= key.hits_open_row as usize;
        self.bank_hits[key.bank as usize] -= key.hits_open_row as u32;
        self.free.push(key.slot);
        self.slots[key.slot as usize]
    }

    /// Drops every hint if an open row changed since they were computed, and renews which
    /// requests hit their bank's open row. In debug builds (every test run) it then checks
    /// that each hint is a lower bound of the truth and each hit flag is true.
    #[inline]
    pub fn sync(&mut self, device: &Device) {
        let changes = device.open_row_changes();
        if self.synced_at != changes {
            self.resync(device);
        }
        #[cfg(debug_assertions)]
        for (bank, &count) in self.bank_hits.iter().enumerate() {
            let hits = self
                .keys
                .iter()
                .filter(|k| k.bank as usize == bank && k.hits_open_row);
            assert_eq!(hits.count(), count as usize, "hit count of bank {bank}");
        }
        #[cfg(debug_assertions)]
        for (k, &hint) in self.keys.iter().zip(&self.hints) {
            let r = &self.slots[k.slot as usize];
            let key = (k.bank, k.rank, k.row, k.column);
            assert_eq!(key, (r.addr.bank_index, r.addr.rank, r.addr.row, r.column));
            let (cmd, t) = device.next_for(r.column, &r.addr);
            assert_eq!(k.hits_open_row, cmd.is_column(), "hit flag at {:?}", r.addr);
            assert!(
                hint <= t,
                "ready hint {hint} is later than {cmd:?}'s earliest cycle {t} at {:?}",
                r.addr
            );
        }
    }

    /// `sync`'s rare half (another issuer changed an open row), out of line.
    #[inline(never)]
    fn resync(&mut self, device: &Device) {
        self.hints.fill(0);
        self.open_row_hits = 0;
        self.bank_hits.fill(0);
        for k in &mut self.keys {
            let addr = &self.slots[k.slot as usize].addr;
            k.hits_open_row = device.open_row(addr) == Some(k.row);
            self.open_row_hits += k.hits_open_row as usize;
            self.bank_hits[k.bank as usize] += k.hits_open_row as u32;
        }
        self.synced_at = device.open_row_changes();
    }

    /// Called after this queue's owner issued a command that changed the open row of the
    /// bank of `addr` (the device's change count was `before`): drops that bank's hints only,
    /// when the others were valid until then, and renews its requests' hit flags.
    pub fn bank_changed(&mut self, addr: &DramAddr, before: u64, device: &Device) {
        if self.synced_at != before {
            return; // already stale: the next `sync` renews everything
        }
        let (bank, open) = (addr.bank_index, device.open_row(addr));
        let mut hits = 0;
        for (k, hint) in self.keys.iter_mut().zip(&mut self.hints) {
            if k.bank == bank {
                *hint = 0;
                k.hits_open_row = open == Some(k.row);
                hits += k.hits_open_row as u32;
            }
        }
        let count = &mut self.bank_hits[bank as usize];
        self.open_row_hits = self.open_row_hits + hits as usize - *count as usize;
        *count = hits;
        self.synced_at = device.open_row_changes();
    }

    /// Whether request `index`'s row is open (as of the last `sync`).
    #[inline]
    pub fn hits_open_row(&self, index: usize) -> bool {
        self.keys[index].hits_open_row
    }

    /// How many queued requests hit their bank's open row (as of the last `sync`).
    #[inline]
    pub fn open_row_hits(&self) -> usize {
        self.open_row_hits
    }

    /// Whether a request older than position `index` waits for another row of `bank` than
    /// `row`.
    #[inline]
    pub fn older_for_another_row(&self, index: usize, bank: u32, row: u32) -> bool {
        self.keys[..index]
            .iter()
            .any(|k| k.bank == bank && k.row != row)
    }

    /// Whether some queued request hits the open row of bank `bank` (as of the last `sync`).
    #[inline]
    pub fn bank_has_hit(&self, bank: u32) -> bool {
        self.bank_hits[bank as usize] > 0
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

    /// The index of the first request at or after `start` that hits its bank's open row and
    /// whose hint is at most `now`, if any. Call `sync` first.
    #[inline]
    pub fn next_due_hit(&self, start: usize, now: u64) -> Option<usize> {
        if self.open_row_hits == 0 {
            return None;
        }
        (start..self.keys.len()).find(|&i| self.keys[i].hits_open_row && self.hints[i] <= now)
    }

    /// The command request `index` needs next and its earliest cycle, from the device; the
    /// cycle becomes the request's hint.
    #[inline(always)]
    pub fn look_up(&mut self, index: usize, device: &Device) -> (Command, u64) {
        let k = &self.keys[index];
        let (cmd, t) = device.next_at(k.column, k.bank, k.rank, k.row);
        self.hints[index] = t;
        (cmd, t)
    }

    #[cfg(test)]
    fn hints(&self) -> Vec<u64> {
        self.hints.clone()
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
        let mut q = RequestQueue::new(4, spec.organisation.banks_per_rank() as usize);
        q.push(request(bank0_row1), &dev);
        q.push(request(bank1_row1), &dev);
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
        q.bank_changed(&bank0_row2, before, &dev);
        assert_eq!(q.hints(), vec![0, t.n_rrd_s as u64]);
        q.sync(&dev);
        assert_eq!(q.hints(), vec![0, t.n_rrd_s as u64], "still in sync");

        // A change the queue did not hear about (another issuer) drops every hint.
        dev.issue(Command::Act, &bank1_row1, 100);
        q.sync(&dev);
        assert_eq!(q.hints(), vec![0, 0]);
    }

    /// Which requests hit their bank's open row follows the controller's own ACTs and PREs
    /// and, after another issuer's, the next `sync`; `next_due_hit` finds only those hits
    /// whose hints have come due.
    #[test]
    fn hit_flags_follow_the_open_rows() {
        let spec = preset("DDR4_8Gb_x8_2400").unwrap();
        let t = spec.timing.clone();
        let mapper = AddressMapper::new(&spec.organisation, "RoBaRaCoCh", false).unwrap();
        let mut dev = Device::new(&spec, 0);
        let bank0_row1 = mapper.locate(0, 0, 0, 0, 1, 0);
        let bank0_row2 = mapper.locate(0, 0, 0, 0, 2, 0);
        let bank1_row1 = mapper.locate(0, 0, 1, 0, 1, 0);
        dev.issue(Command::Act, &bank1_row1, 0);
        let mut q = RequestQueue::new(4, spec.organisation.banks_per_rank() as usize);
        q.push(request(bank0_row1), &dev);
        q.push(request(bank1_row1), &dev);
        q.push(request(bank0_row2), &dev);
        q.sync(&dev);
        let flags = |q: &RequestQueue| (0..q.len()).map(|i| q.hits_open_row(i)).collect();
        assert_eq!(flags(&q), vec![false, true, false]);
        assert_eq!(q.open_row_hits(), 1);
        let (bank0, bank1) = (bank0_row1.bank_index, bank1_row1.bank_index);
        assert!(!q.bank_has_hit(bank0) && q.bank_has_hit(bank1));
        assert_eq!(
            q.next_due_hit(0, 0),
            Some(1),
            "its hint is 0 until looked up"
        );
        assert_eq!(q.look_up(1, &dev), (Command::Rd, t.n_rcd as u64));
        assert_eq!(q.next_due_hit(0, t.n_rcd as u64 - 1), None, "not due yet");
        assert_eq!(q.next_due_hit(0, t.n_rcd as u64), Some(1));

        // The queue's own ACT of bank 0's row 1: that request hits now, row 2's does not.
        let before = dev.open_row_changes();
        let at = t.n_rrd_s as u64;
        dev.issue(Command::Act, &bank0_row1, at);
        q.bank_changed(&bank0_row1, before, &dev);
        assert_eq!(flags(&q), vec![true, true, false]);
        assert_eq!(q.open_row_hits(), 2);
        assert!(q.bank_has_hit(bank0));
        assert_eq!(
            q.next_due_hit(1, t.n_rcd as u64),
            Some(1),
            "from `start` on"
        );

        // Served: the hit leaves, its flag with it.
        let served = q.remove(1);
        assert_eq!(served.addr.bank_index, bank1_row1.bank_index);
        assert_eq!((flags(&q), q.open_row_hits()), (vec![true, false], 1));
        assert_eq!(q.get(1).addr.row, 2, "the younger request moved up");

        // Another issuer closes bank 0: the next sync renews the flags.
        dev.issue(Command::Pre, &bank0_row1, at + t.n_ras as u64);
        q.sync(&dev);
        assert_eq!((flags(&q), q.open_row_hits()), (vec![false, false], 0));
        assert!(
            !q.bank_has_hit(bank0) && !q.bank_has_hit(bank1),
            "bank 1's hit was served"
        );
        assert_eq!(q.next_due_hit(0, u64::MAX), None);

        // Bank 0 reopens at row 2; a request pushed to an open row (bank 1's) is a hit at
        // once, and reuses the freed slot.
        dev.issue(Command::Act, &bank0_row2, at + (t.n_ras + t.n_rp) as u64);
        q.sync(&dev);
        q.push(request(bank1_row1), &dev);
        assert_eq!(
            flags(&q),
            vec![false, true, true],
            "bank 0 row 2 and bank 1 row 1"
        );
        assert_eq!(q.slots.len(), 3, "no new slot");
    }
}
