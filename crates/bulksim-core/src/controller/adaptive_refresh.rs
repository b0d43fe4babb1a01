//! Adaptive refresh (Mukundan et al., ISCA 2013, as the Rank Assignment paper's §VI-G uses it):
//! per window of 8 x tREFI (1x), the controller refreshes at 1x or at DDR4's fine 4x
//! granularity, choosing for the next window from the last: 4x when more than `ar_reads` reads
//! waited, on average, for the rank of each REF as it issued (they would have waited less for
//! the shorter 4x refreshes), else 1x. The device's REF timing is switched by swapping REF's
//! rule effects with a spare device built from the 4x spec; the interval and tRFC the
//! controller books follow. The decision rule's details are bulksim's choice (the paper
//! describes AR only by its result).

use super::refresh::Refresh;
use crate::device::Device;
use crate::spec::Command;

/// The state of one channel's adaptive refresh.
pub struct AdaptiveRefresh {
    /// A device whose REF effects are the ones not in use (4x while at 1x, and back).
    spare: Device,
    /// Refreshing at 4x in the current window.
    pub fine: bool,
    /// Reads waiting per REF above which the next window is fine.
    threshold: u64,
    /// Window length (8 x tREFI at 1x), and the end of the current one.
    window: u64,
    window_end: u64,
    /// In the current window: REFs issued and the reads waiting for their ranks as they did.
    refs: u64,
    reads_waited: u64,
    /// (tREFI, tRFC) at 1x and at 4x, in memory cycles.
    coarse: (u64, u64),
    fine_timing: (u64, u64),
    /// Windows ended, and those of them spent at 4x.
    pub windows: u64,
    pub fine_windows: u64,
}

impl AdaptiveRefresh {
    /// `spare` is built from the 4x spec; the controller's device starts at 1x.
    pub fn new(spare: Device, threshold: u64, coarse: (u64, u64), fine: (u64, u64)) -> Self {
        AdaptiveRefresh {
            spare,
            fine: false,
            threshold,
            window: 8 * coarse.0,
            window_end: 8 * coarse.0,
            refs: 0,
            reads_waited: 0,
            coarse,
            fine_timing: fine,
            windows: 0,
            fine_windows: 0,
        }
    }

    /// A REF issued at `now` with `reads_waiting` reads queued for its rank. At a window's
    /// end, picks the next window's granularity and switches the device, the refresh interval
    /// and the tRFC the controller books (`refresh_busy`).
    pub fn refresh_issued(
        &mut self,
        now: u64,
        reads_waiting: u64,
        device: &mut Device,
        refresh: &mut Refresh,
        refresh_busy: &mut u64,
    ) {
        self.refs += 1;
        self.reads_waited += reads_waiting;
        if now < self.window_end {
            return;
        }
        while self.window_end <= now {
            self.window_end += self.window;
            self.windows += 1;
            self.fine_windows += self.fine as u64;
        }
        let fine = self.reads_waited > self.threshold * self.refs;
        (self.refs, self.reads_waited) = (0, 0);
        if fine != self.fine {
            self.fine = fine;
            device.swap_effects(Command::Ref, &mut self.spare);
            let (interval, busy) = if fine { self.fine_timing } else { self.coarse };
            refresh.set_interval(interval);
            *refresh_busy = busy;
        }
    }
}
