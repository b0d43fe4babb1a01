//! The request port that joins the full system's components (core -> cache levels -> memory
//! router -> memory devices): one request type and the reasons traffic exists. A component
//! offers a request to the one below it, which accepts it or refuses it (the sender keeps it
//! and offers it again later); responses come back by request id at the time they are due.
//! Bytes do not travel in the request: the memory router is the one place the functional image
//! is read and written, and cache levels hold their lines' bytes. A `Movblk` (one line-sized
//! copy) is what a core hands the copy engines and what one engine passes down to the next;
//! the cache levels carry out its source reads and destination writes.

/// Identifies a request in flight between components (reused once it completes).
pub type RequestId = u32;

/// Why a request or a line's contents exist; traffic is counted by it on every port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum Origin {
    /// The program's own loads and stores.
    #[default]
    Program,
    /// A copy (memcpy, copy-on-write): its loop's loads and stores, its line moves.
    Copy,
    /// An initialization (meminit, first-touch zeroing).
    Init,
    /// Bulk-operation coherence work done for the memory controller (write-backs it asks for).
    Coherence,
    /// Page migration between memory devices (the hybrid memory's copies, docs/hybrid.md).
    Migration,
}

/// What a request asks of the component below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// Read a line (a load miss, a copy's source or destination fetch).
    Read,
    /// Read a line the requester is about to write (a store miss).
    ReadForOwnership,
    /// Write a dirty line back (an eviction, or a write-back the memory controller asked for).
    Writeback,
}

/// A response: the id of a request and the time (fs) it is complete.
pub type Response = (RequestId, u64);

/// The interface a component offers the one above it: whether it would take a request now,
/// taking it at the receiver's current step, and the responses due so far. The core sends
/// its first-level misses through it, each cache level its fills to the next
/// (`cache::level_port`), and the last level its requests to each memory device. A sender
/// checks `can_accept` and keeps what is refused to offer it again. Write-backs between
/// cache levels move at once with their bytes and do not cross a port.
pub trait Port {
    /// Whether `send` would take `req` now.
    fn can_accept(&self, req: &Request) -> bool;
    /// Takes `req` at `fs`, the receiver's current step; the caller checked `can_accept`.
    fn send(&mut self, req: &Request, fs: u64);
    /// Moves the responses completed so far, each with the time it is due, into `out`.
    fn take_responses(&mut self, out: &mut Vec<Response>);
}

/// One request on a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Completion is reported under this id; `None` when nobody waits for it.
    pub id: Option<RequestId>,
    /// Physical byte address of the line (aligned to the sender's line size).
    pub addr: u64,
    /// The sender's line size in bytes.
    pub bytes: u32,
    pub kind: RequestKind,
    /// Why the traffic exists; a write-back carries why its bytes were last written, or
    /// `Coherence` when the memory controller asked for it.
    pub origin: Origin,
    /// The hardware thread (core) that caused it.
    pub thread: u32,
}

impl Request {
    /// A fill of `line` (in `line_bytes` lines) for `thread`: a read, or a read for ownership
    /// when the line is about to be written.
    pub fn fill(
        id: Option<RequestId>,
        line: u64,
        line_bytes: u64,
        write: bool,
        origin: Origin,
        thread: u32,
    ) -> Request {
        Request {
            id,
            addr: line * line_bytes,
            bytes: line_bytes as u32,
            kind: if write {
                RequestKind::ReadForOwnership
            } else {
                RequestKind::Read
            },
            origin,
            thread,
        }
    }
}

/// One movblk in physical addresses: `L` bytes (the first level's line) from `src` to the
/// L-aligned `dst`. The source's bytes from `split` on lie at `src_next` (the next line,
/// possibly in another page).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Movblk {
    pub src: u64,
    pub src_next: u64,
    /// Bytes taken from the first source line (L when the source is aligned).
    pub split: u64,
    pub dst: u64,
    /// Block size L (bytes).
    pub bytes: u64,
    /// The core whose movblk it is.
    pub core: usize,
}

impl Movblk {
    /// Where the source's second part starts, when it has one.
    pub fn second_part(&self) -> Option<u64> {
        (self.split < self.bytes).then_some(self.src_next)
    }

    /// Whether the movblk reads or writes any byte of [a, b).
    pub fn overlaps(&self, a: u64, b: u64) -> bool {
        let hits = |s: u64, len: u64| len > 0 && s < b && a < s + len;
        hits(self.src, self.split)
            || hits(self.src_next, self.bytes - self.split)
            || hits(self.dst, self.bytes)
    }
}

/// Responses a component has received and holds until they are due, in the order (due time,
/// request id, source): a component's own inbox, so that what comes back through a port is
/// delivered by the component it came to, at its time, in one deterministic order.
#[derive(Debug, Default)]
pub struct DueQueue {
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, RequestId, u32)>>,
}

impl DueQueue {
    /// Holds request `id`'s response from `source` (a device index, or 0) until `due_fs`.
    #[inline]
    pub fn push(&mut self, due_fs: u64, id: RequestId, source: u32) {
        self.heap.push(std::cmp::Reverse((due_fs, id, source)));
    }

    /// The first response in order, when it is due by `now`: (due time, id, source).
    #[inline]
    pub fn peek_due(&self, now: u64) -> Option<(u64, RequestId, u32)> {
        self.heap
            .peek()
            .map(|r| r.0)
            .filter(|&(due, _, _)| due <= now)
    }

    /// Removes the first response (the one `peek_due` showed) and returns it.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, RequestId, u32)> {
        self.heap.pop().map(|r| r.0)
    }

    /// When the first response is due (u64::MAX: none is held).
    #[inline]
    pub fn next_fs(&self) -> u64 {
        self.heap.peek().map_or(u64::MAX, |r| r.0 .0)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::DueQueue;

    /// Responses leave in (due time, id, source) order, and only once due.
    #[test]
    fn due_queue_gives_responses_in_time_then_id_then_source_order() {
        let mut q = DueQueue::default();
        assert_eq!((q.next_fs(), q.peek_due(u64::MAX)), (u64::MAX, None));
        for (due, id, source) in [(30, 1, 0), (10, 7, 1), (10, 2, 3), (10, 2, 0), (20, 0, 0)] {
            q.push(due, id, source);
        }
        assert_eq!(q.next_fs(), 10);
        assert_eq!(q.peek_due(9), None);
        let mut order = Vec::new();
        while let Some(r) = q.peek_due(25) {
            assert_eq!(q.pop(), Some(r));
            order.push(r);
        }
        assert_eq!(order, vec![(10, 2, 0), (10, 2, 3), (10, 7, 1), (20, 0, 0)]);
        assert_eq!(q.next_fs(), 30);
        assert!(!q.is_empty());
    }
}
