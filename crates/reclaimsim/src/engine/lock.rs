//! Spinlocks in virtual time: a lock has an owner and a FIFO of tasks spinning on it
//! (queued spinlocks hand over in arrival order). Tasks ask for a lock in virtual-time
//! order (taking it is a sync point), so a holder's critical section and every waiter's
//! spin are exact: a waiter gets the lock when its holder releases it, and spins for the
//! holder's remaining hold.

use crate::engine::sched::TaskId;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct Lock {
    /// The task holding it.
    pub owner: Option<TaskId>,
    /// When its last holder released it: a holder runs ahead of the tasks that have
    /// not asked yet, so one that asks later may still find the release in its future.
    pub free_at: u64,
    /// Tasks spinning on it, in the order they asked.
    pub waiters: VecDeque<TaskId>,
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
    /// Counts one hold of `hold` ns by `site` on `cpu`, after spinning `waited` ns.
    pub fn record(&mut self, hold: u64, waited: u64, site: LockSite, cpu: u32) {
        self.acquisitions += 1;
        if waited > 0 {
            self.contended += 1;
            self.wait_ns += waited;
        }
        self.hold_ns += hold;
        self.last_cpu = Some(cpu);
        let st = &mut self.sites[site as usize];
        st.acquisitions += 1;
        st.wait_ns += waited;
        st.hold_ns += hold;
    }
}
