//! Spinlocks in virtual time. A lock keeps a calendar of the intervals during which it
//! was held; taking it at time t waits (spins) until the first instant at or after t
//! that no recorded hold covers. Because the engine runs tasks in order of their virtual
//! clocks but a task's step can run ahead of other tasks' clocks, holds are recorded as
//! intervals rather than a single "free at" time, so a task that comes later in
//! simulation order but earlier in virtual time waits only for holds that overlap it.

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct Lock {
    /// Recorded holds, sorted by start, non-overlapping.
    holds: VecDeque<(u64, u64)>,
    /// The CPU that held it last (a different CPU pays the cacheline transfer).
    pub last_cpu: Option<u32>,
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
    /// Acquisitions by `folio_lruvec_relock_irq` that first dropped a different lock
    /// (consecutive folios of a batch or list in different lock domains).
    pub relocks: u64,
    /// Acquisitions, wait and hold time by the code that took the lock.
    pub sites: [SiteStat; NR_SITES],
}

/// Who took an lru lock: the critical sections the kernel has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(usize)]
pub enum LockSite {
    /// Anything not tagged below.
    #[default]
    Other,
    /// folio_batch_move_lru() of an lru_add batch.
    LruAdd,
    /// ... of an lru_activate batch.
    Activate,
    /// ... of an lru_move_tail batch (rotation after writeback).
    MoveTail,
    /// isolate_lru_folios() in shrink_{in,}active_list.
    Isolate,
    /// move_folios_to_lru() and the stat updates after shrink_folio_list.
    Putback,
    /// lru_note_cost() (5.11+: each ancestor's lock in turn).
    NoteCost,
    /// Freeing LRU folios (folios_put / release_pages).
    Free,
}

pub const NR_SITES: usize = 8;
pub const SITE_NAMES: [&str; NR_SITES] = [
    "other",
    "lru_add",
    "activate",
    "move_tail",
    "isolate",
    "putback",
    "note_cost",
    "free",
];

#[derive(Clone, Copy, Debug, Default)]
pub struct SiteStat {
    pub acquisitions: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
}

impl Lock {
    /// The first instant >= t at which the lock is free.
    pub fn free_at(&self, t: u64) -> u64 {
        let mut s = t;
        // Holds are sorted and disjoint: skip to the first that ends after s.
        let i = self.holds.partition_point(|&(_, e)| e <= s);
        for &(b, e) in self.holds.iter().skip(i) {
            if b > s {
                break;
            }
            s = e;
        }
        s
    }

    /// The first instant s >= t such that a hold [s, s + len) overlaps no recorded hold.
    pub fn free_slot(&self, t: u64, len: u64) -> u64 {
        let mut s = t;
        let i = self.holds.partition_point(|&(_, e)| e <= s);
        for &(b, e) in self.holds.iter().skip(i) {
            if b >= s + len {
                break;
            }
            s = s.max(e);
        }
        s
    }

    /// Records a hold [start, end) and its statistics; `waited` is the spin before it.
    pub fn record(&mut self, start: u64, end: u64, waited: u64, cpu: u32) {
        self.acquisitions += 1;
        if waited > 0 {
            self.contended += 1;
            self.wait_ns += waited;
        }
        self.hold_ns += end - start;
        self.last_cpu = Some(cpu);
        if end <= start {
            return;
        }
        let i = self.holds.partition_point(|&(b, _)| b < start);
        // Merge with neighbours it touches or overlaps (a hold may run into a later one
        // recorded earlier; they are merged rather than shifted).
        let mut s = start;
        let mut e = end;
        let mut lo = i;
        if lo > 0 && self.holds[lo - 1].1 >= s {
            lo -= 1;
            s = self.holds[lo].0;
            e = e.max(self.holds[lo].1);
        }
        let mut hi = lo;
        while hi < self.holds.len() && self.holds[hi].0 <= e {
            e = e.max(self.holds[hi].1);
            hi += 1;
        }
        self.holds.drain(lo..hi);
        self.holds.insert(lo, (s, e));
    }

    /// Forgets holds that end before `t`: no task can ask for the lock before then.
    pub fn prune(&mut self, t: u64) {
        while let Some(&(_, e)) = self.holds.front() {
            if e > t {
                break;
            }
            self.holds.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_only_for_overlapping_holds() {
        let mut l = Lock::default();
        l.record(100, 150, 0, 0);
        l.record(300, 320, 0, 1);
        assert_eq!(l.free_at(50), 50);
        assert_eq!(l.free_at(120), 150);
        assert_eq!(l.free_at(200), 200);
        assert_eq!(l.free_at(310), 320);
        l.record(150, 300, 30, 2);
        // Now one continuous hold from 100 to 320.
        assert_eq!(l.free_at(101), 320);
        assert_eq!(l.contended, 1);
        assert_eq!(l.wait_ns, 30);
        l.prune(400);
        assert_eq!(l.free_at(0), 0);
    }

    #[test]
    fn free_slot_fits_a_hold_between_others() {
        let mut l = Lock::default();
        l.record(100, 150, 0, 0);
        l.record(200, 300, 0, 0);
        assert_eq!(l.free_slot(50, 50), 50);
        assert_eq!(l.free_slot(50, 51), 300);
        assert_eq!(l.free_slot(60, 41), 150);
        assert_eq!(l.free_slot(150, 50), 150);
        assert_eq!(l.free_slot(150, 60), 300);
        assert_eq!(l.free_slot(120, 10), 150);
    }
}
