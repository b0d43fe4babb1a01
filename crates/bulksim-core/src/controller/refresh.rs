//! All-bank refresh bookkeeping: each rank owes one REF every tREFI; ranks are staggered so
//! rank r's first REF falls due at (r + 1) * tREFI / ranks. A due rank is blocked for new
//! commands until its banks are precharged (PREA) and the REF issues.

#[derive(Clone, Debug)]
pub struct Refresh {
    enabled: bool,
    interval: u64,
    next_due: Vec<u64>,
    pending: Vec<bool>,
    any: bool,
}

impl Refresh {
    pub fn new(enabled: bool, ranks: usize, interval: u64) -> Refresh {
        let next_due = (0..ranks as u64)
            .map(|r| (r + 1) * interval / ranks as u64)
            .collect();
        Refresh {
            enabled,
            interval,
            next_due,
            pending: vec![false; ranks],
            any: false,
        }
    }

    /// Marks ranks whose refresh has fallen due by `now`; returns whether any rank is pending.
    #[inline]
    pub fn poll(&mut self, now: u64) -> bool {
        if !self.enabled {
            return false;
        }
        let mut any = false;
        for (due, pending) in self.next_due.iter().zip(self.pending.iter_mut()) {
            *pending |= now >= *due;
            any |= *pending;
        }
        self.any = any;
        any
    }

    /// Whether any rank is blocked for refresh (as of the last `poll`).
    #[inline]
    pub fn any_pending(&self) -> bool {
        self.any
    }

    #[inline]
    pub fn is_pending(&self, rank: u32) -> bool {
        self.pending[rank as usize]
    }

    pub fn pending_ranks(&self) -> impl Iterator<Item = u32> + '_ {
        self.pending
            .iter()
            .enumerate()
            .filter(|(_, &p)| p)
            .map(|(r, _)| r as u32)
    }

    /// The cycle `rank`'s pending refresh fell due.
    pub fn due(&self, rank: u32) -> u64 {
        self.next_due[rank as usize]
    }

    /// The REF for `rank` issued: the next one falls due a tREFI after this one was due.
    pub fn done(&mut self, rank: u32) {
        self.pending[rank as usize] = false;
        self.any = self.pending.iter().any(|&p| p);
        self.next_due[rank as usize] += self.interval;
    }

    /// Earliest cycle a not-yet-pending rank falls due (u64::MAX when disabled).
    pub fn next_due(&self) -> u64 {
        if !self.enabled {
            return u64::MAX;
        }
        self.next_due
            .iter()
            .zip(&self.pending)
            .filter(|(_, &p)| !p)
            .map(|(&d, _)| d)
            .min()
            .unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_staggered_and_rescheduled_every_interval() {
        let mut r = Refresh::new(true, 4, 1000);
        assert_eq!(r.next_due(), 250);
        assert!(!r.poll(249));
        assert!(r.poll(250));
        assert_eq!(r.pending_ranks().collect::<Vec<_>>(), vec![0]);
        r.done(0);
        assert_eq!(r.next_due(), 500);
        assert!(r.poll(1250));
        assert_eq!(r.pending_ranks().count(), 4);
        assert_eq!(Refresh::new(false, 1, 1000).next_due(), u64::MAX);
    }
}
