//! Spinlocks in virtual time: a lock has an owner and a FIFO of tasks spinning on it
//! (queued spinlocks hand over in arrival order). Tasks ask for a lock in virtual-time
//! order (taking it is a sync point), so a holder's critical section and every waiter's
//! spin are exact: a waiter gets the lock when its holder releases it, and spins for the
//! holder's remaining hold.

use crate::sim::sched::TaskId;
use std::collections::VecDeque;

/// One of the model's spinlocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockRef {
    /// An lru_lock: the lruvec's (5.11+) or the node's (<= 5.10), `Kernel::locks[i]`.
    Lru(usize),
    /// zone->lock of a node's zone (the buddy lists behind the per-CPU page lists).
    Zone(usize),
    /// A file's mapping->i_pages (the page cache's xarray lock).
    IPages(u32),
    /// The swap device's si->lock (its swap map).
    SwapInfo,
    /// The rwsem of an anonymous VMA's anon_vma (mm id, VMA index), read-locked by rmap
    /// walks: readers share it, so only its count's cacheline is contended (`line_rmw`).
    AnonVma { mm: u32, vma: u32 },
    /// A file's mapping->i_mmap_rwsem, read-locked by rmap walks of its mapped folios.
    IMmap(u32),
    /// memcontrol.c's stats_flush_lock, which one memcg stats flusher at a time holds
    /// (`kernel::memcg_stats`).
    StatsFlush,
    /// page_alloc.c's pcpu_drain_mutex, which one drain_all_pages() at a time holds; the
    /// model only ever try-locks it (`Kernel::drain_all_pages`).
    PcpDrain,
    /// A memcg's page_counter usage (memcg id): not a lock, a line that charges at a
    /// limit update atomically (`line_rmw`).
    PageCounter(u16),
}

/// A lock the running task holds: since when, after spinning how long, taken by whom.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    pub lock: LockRef,
    pub start: u64,
    pub waited: u64,
    pub site: LockSite,
}

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
    /// zone->lock: refilling a per-CPU page list from the buddy lists (rmqueue_bulk).
    RmqueueBulk,
    /// zone->lock: returning per-CPU pages to the buddy lists (free_pcppages_bulk).
    FreePcpBulk,
    /// i_pages: a folio enters the page cache (filemap_add_folio).
    FilemapAdd,
    /// i_pages: reclaim takes a folio out of the page cache (__remove_mapping).
    RemoveMapping,
    /// si->lock: a CPU's swap slot cache refills (get_swap_pages).
    GetSwapPages,
    /// si->lock: freed slots go back to the swap map (swapcache_free_entries).
    SwapcacheFreeEntries,
    /// anon_vma / i_mmap rwsem: folio_referenced's rmap walk (down_read and up_read).
    FolioReferenced,
    /// anon_vma / i_mmap rwsem: try_to_unmap's rmap walk.
    TryToUnmap,
    /// page_counter: try_charge_memcg()'s atomics at a limit.
    TryCharge,
}

pub const NR_SITES: usize = 17;
pub const SITE_NAMES: [&str; NR_SITES] = [
    "other",
    "lru_add",
    "activate",
    "move_tail",
    "isolate",
    "putback",
    "note_cost",
    "free",
    "rmqueue_bulk",
    "free_pcppages_bulk",
    "filemap_add",
    "remove_mapping",
    "get_swap_pages",
    "swapcache_free_entries",
    "folio_referenced",
    "try_to_unmap",
    "try_charge",
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
