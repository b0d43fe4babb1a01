//! The fixed-latency memory (`memory.fixed_latency_cycles`): the level below the caches as a
//! constant delay with no contention (the copy-engines paper's 100-cycle memory). It takes
//! every request the moment the last cache level sends it, answers each read that long
//! after and a waited write-back at once. It times requests only: the memory router beside
//! it in `MemoryBelow` still holds the address space, the functional image and the devices
//! (which time no request here, and take only bulk operations the system offers them).

use crate::port::{Request, RequestKind, Response};

pub struct FixedLatencyMemory {
    /// How long after it is sent a read is answered (fs).
    latency_fs: u64,
    /// Answers not taken yet, with their due times.
    responses: Vec<Response>,
}

impl FixedLatencyMemory {
    pub fn new(latency_fs: u64) -> FixedLatencyMemory {
        FixedLatencyMemory {
            latency_fs,
            responses: Vec::new(),
        }
    }

    /// The delay of every read (fs); a write-back blocking a miss waits this long too.
    pub fn latency_fs(&self) -> u64 {
        self.latency_fs
    }

    /// Takes `req`, sent at `fs`: a read is answered `latency_fs` later, a write-back whose
    /// id someone waits on at once; a write-back nobody waits on leaves no trace.
    #[inline]
    pub fn take(&mut self, req: &Request, fs: u64) {
        let Some(id) = req.id else {
            return;
        };
        let due = match req.kind {
            RequestKind::Writeback => fs,
            RequestKind::Read | RequestKind::ReadForOwnership => fs + self.latency_fs,
        };
        self.responses.push((id, due));
    }

    /// Moves the answers given so far, with their due times, into `out`.
    pub fn take_responses(&mut self, out: &mut Vec<Response>) {
        out.append(&mut self.responses);
    }

    /// Whether answers wait to be taken.
    pub fn has_responses(&self) -> bool {
        !self.responses.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::memory::{MemoryBelow, MemoryRouter, MemorySide};
    use crate::port::Origin;

    fn request(id: Option<u32>, kind: RequestKind) -> Request {
        Request {
            id,
            addr: 0x1000,
            bytes: 64,
            kind,
            origin: Origin::Program,
            thread: 0,
        }
    }

    #[test]
    fn reads_are_answered_after_the_latency_waited_write_backs_at_once() {
        let router = MemoryRouter::new(&Config::default()).unwrap();
        let mut m = MemoryBelow::new(router, Some(FixedLatencyMemory::new(500)));
        assert!(!m.queues_requests());
        assert_eq!(m.write_back_fs(), 500);
        assert!(m.take_at_once(&request(Some(1), RequestKind::Read), 100));
        assert!(m.take_at_once(&request(Some(2), RequestKind::ReadForOwnership), 200));
        assert!(m.take_at_once(&request(Some(3), RequestKind::Writeback), 300));
        assert!(m.take_at_once(&request(None, RequestKind::Writeback), 400));
        let mut out = Vec::new();
        m.take_responses(&mut out);
        assert_eq!(out, vec![(1, 600), (2, 700), (3, 300)]);
        assert!(!m.has_responses());
        // The devices took nothing.
        assert!(m.router().is_idle());
    }
}
