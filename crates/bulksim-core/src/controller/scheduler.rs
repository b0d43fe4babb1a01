//! Request scheduling: which queued request gets the command bus this cycle. FCFS takes the
//! oldest request whose next command is ready. FR-FCFS takes the oldest ready row hit, else the
//! oldest ready request, and never precharges a row that queued requests still hit (unless the
//! row-hit cap has been reached for that bank; then hits yield to older requests for other
//! rows of that bank). Under both, a row opened for a request (its *owner*, in either queue)
//! stays open until the owner's column command: no PRE, and no other request's auto-precharge,
//! closes it first, and the cap never holds the owner back (only refresh may close the row;
//! `Controller` serves an owner waiting in the other queue). Without this, rows opened before a
//! switch between reads and writes were closed unused (issue #15 item 4, docs/validation.md).
//! Requests to banks the bulk engine has locked wait. Low-priority requests (`Request::low`:
//! migration copies) are chosen the same way among themselves, and only when no other request
//! can issue; once one has activated its row it competes as any other (so the row it owns is
//! not held open by a starving owner). The same scan yields
//! the earliest cycle any waiting request could become ready (a lower bound), which the
//! idle-skipping loop jumps to. Only requests whose cached ready hint has come due are looked
//! up in the timing tables (see `queue.rs`), and once FR-FCFS holds an oldest ready request,
//! only the due ones that hit an open row.

use super::queue::RequestQueue;
use super::request::Request;
use crate::config::Scheduler;
use crate::device::Device;
use crate::spec::Command;

pub struct Pick {
    /// Queue index and the command to issue for it.
    pub choice: Option<(usize, Command)>,
    /// When nothing was chosen: no request that was not ready can become ready before this
    /// cycle (u64::MAX if none waits); it may be earlier than the true earliest cycle, never
    /// later. With a choice, only a lower bound of the requests the scan passed over.
    pub next_ready: u64,
}

/// Row-hit cap state: column commands served per bank since its last ACT.
pub struct HitCap<'a> {
    pub cap: u32,
    pub hits_since_act: &'a [u32],
}

/// Per bank, whether its open row was opened for a request not yet served (in either queue).
pub struct Owned<'a>(pub &'a [bool]);

impl Owned<'_> {
    /// Whether `cmd` for `r` would close a row opened for another request.
    #[inline]
    fn closes_for_another(&self, r: &Request, cmd: Command) -> bool {
        matches!(cmd, Command::Pre | Command::RdA | Command::WrA)
            && !r.activated
            && self.0[r.addr.bank_index as usize]
    }
}

impl HitCap<'_> {
    #[inline]
    fn reached(&self, bank_index: u32) -> bool {
        self.cap > 0 && self.hits_since_act[bank_index as usize] >= self.cap
    }
}

/// Chooses the request (and command) to serve at `now`; `low_priority`: the queue may hold
/// low-priority requests (`Request::low`).
#[allow(clippy::too_many_arguments)]
pub fn pick(
    policy: Scheduler,
    queue: &mut RequestQueue,
    device: &Device,
    blocked_ranks: Option<&[bool]>,
    locked: Option<&[bool]>,
    cap: &HitCap,
    owned: &Owned,
    now: u64,
    low_priority: bool,
) -> Pick {
    queue.sync(device);
    if low_priority {
        let (ranks, locked) = (blocked_ranks.unwrap_or(&[]), locked.unwrap_or(&[]));
        return scan_two_classes(policy, queue, device, ranks, locked, cap, owned, now);
    }
    // The common case, nothing blocked, gets a scan without the blocking test.
    let locked = locked.unwrap_or(&[]);
    match blocked_ranks {
        Some(ranks) => scan::<true, false>(policy, queue, device, ranks, locked, cap, owned, now),
        None if !locked.is_empty() => {
            scan::<true, false>(policy, queue, device, &[], locked, cap, owned, now)
        }
        None => scan::<false, false>(policy, queue, device, &[], locked, cap, owned, now),
    }
}

/// A hybrid memory's controllers: the scan with the second class (and the blocking test,
/// which costs little beside it). Out of line, so that the common scans inline as they did
/// before the class existed (inlined, it cost the DDR4 bench 2%: docs/performance.md).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn scan_two_classes(
    policy: Scheduler,
    queue: &mut RequestQueue,
    device: &Device,
    blocked_ranks: &[bool],
    locked: &[bool],
    cap: &HitCap,
    owned: &Owned,
    now: u64,
) -> Pick {
    scan::<true, true>(
        policy,
        queue,
        device,
        blocked_ranks,
        locked,
        cap,
        owned,
        now,
    )
}

/// The scan over the requests whose hints have come due, oldest first; with `BLOCKING`,
/// requests to a blocked rank (due for refresh, or on the other side of a per-rank write
/// drain) or a bank the bulk engine has locked are skipped (the refresh's, the drain's or the
/// engine's own timing wakes the controller). With `LOW`, low-priority requests form a
/// second class, chosen only when no other request can issue.
#[allow(clippy::too_many_arguments)]
fn scan<const BLOCKING: bool, const LOW: bool>(
    policy: Scheduler,
    queue: &mut RequestQueue,
    device: &Device,
    blocked_ranks: &[bool],
    locked: &[bool],
    cap: &HitCap,
    owned: &Owned,
    now: u64,
) -> Pick {
    let mut next_ready = u64::MAX;
    let mut oldest_ready: Option<(usize, Command)> = None;
    // The low-priority class's own row hit and oldest ready request.
    let mut low_hit: Option<(usize, Command)> = None;
    let mut low_oldest: Option<(usize, Command)> = None;
    let mut start = 0;
    loop {
        // Once FR-FCFS holds an oldest ready request, only a row hit can still win, so the
        // scan visits only the requests whose row is open (and leaves `next_ready` as it is:
        // with a choice made, nobody reads it).
        let due = if oldest_ready.is_none() {
            queue.next_due(start, now, &mut next_ready)
        } else {
            queue.next_due_hit(start, now)
        };
        let Some(i) = due else { break };
        start = i + 1;
        if BLOCKING {
            let r = queue.get(i);
            if blocked_ranks.get(r.addr.rank as usize) == Some(&true)
                || locked.get(r.addr.bank_index as usize) == Some(&true)
            {
                continue;
            }
        }
        let (cmd, t) = queue.look_up(i, device);
        if t > now {
            next_ready = next_ready.min(t);
            continue;
        }
        let r = queue.get(i);
        if owned.closes_for_another(r, cmd) {
            // Held until the owner's column command; that command's readiness wakes us.
            continue;
        }
        if LOW && r.low && !r.activated {
            let capped = cap.reached(r.addr.bank_index);
            if cmd.is_column() && !capped && policy == Scheduler::Frfcfs {
                low_hit = low_hit.or(Some((i, cmd)));
            } else if low_oldest.is_none()
                && !(cmd == Command::Pre && !capped && row_still_hit(queue, r))
            {
                low_oldest = Some((i, cmd));
            }
            continue;
        }
        match policy {
            Scheduler::Fcfs => {
                return Pick {
                    choice: Some((i, cmd)),
                    next_ready,
                }
            }
            Scheduler::Frfcfs => {
                let capped = cap.reached(r.addr.bank_index) && !r.activated;
                if cmd.is_column() && !capped {
                    return Pick {
                        choice: Some((i, cmd)),
                        next_ready,
                    };
                }
                if cmd.is_column() && queue.older_for_another_row(i, r.addr.bank_index, r.addr.row)
                {
                    continue; // capped: the older request's PRE goes next, not another hit
                }
                if oldest_ready.is_none()
                    && !(cmd == Command::Pre && !capped && row_still_hit(queue, r))
                {
                    oldest_ready = Some((i, cmd));
                }
            }
        }
    }
    Pick {
        choice: oldest_ready.or(low_hit).or(low_oldest),
        next_ready,
    }
}

/// Whether some queued request hits the row open in `r`'s bank.
#[inline]
fn row_still_hit(queue: &RequestQueue, r: &Request) -> bool {
    queue.bank_has_hit(r.addr.bank_index)
}
