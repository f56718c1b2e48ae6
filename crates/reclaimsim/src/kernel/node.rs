//! NUMA nodes and zones: free pages, watermarks, and the per-node kswapd state
//! (struct pglist_data, struct zone; mm/page_alloc.c).

use crate::kernel::folio::Pfn;
use crate::kernel::list::List;

/// Watermark indices (enum zone_watermarks).
pub const WMARK_MIN: usize = 0;
pub const WMARK_LOW: usize = 1;
pub const WMARK_HIGH: usize = 2;

/// One zone. The model gives each node a single zone (ZONE_NORMAL): the seeds' machines
/// reclaim almost entirely from ZONE_NORMAL, and one zone keeps zone loops trivial.
#[derive(Clone, Debug)]
pub struct Zone {
    pub managed: u64,
    pub free: u64,
    pub wmark: [u64; 3],
}

impl Zone {
    /// Models zone_watermark_ok() for order 0: free pages strictly above the mark.
    pub fn watermark_ok(&self, mark: u64) -> bool {
        self.free > mark
    }
}

#[derive(Clone, Debug)]
pub struct Node {
    pub zone: Zone,
    pub start_pfn: Pfn,
    pub end_pfn: Pfn,
    /// Free frames, linked through the frames themselves and used as a stack (the pcp
    /// lists hand out the most recently freed page first).
    pub free_list: List,
    /// zone->lock, guarding the free list (the per-CPU lists refill and drain under it).
    pub lock: crate::sim::lock::Lock,
    pub kswapd_failures: u32,
    /// kswapd has been asked to run (wakeup_kswapd) and not yet picked it up.
    pub kswapd_wake: bool,
    /// kswapd sleeps or naps on kswapd_wait (waitqueue_active): a wakeup reaches it.
    pub kswapd_waiting: bool,
    /// PGDAT_DIRTY / PGDAT_WRITEBACK, set by kswapd's shrink_node.
    pub dirty: bool,
    pub writeback: bool,
    /// LRUVEC_NODE_CONGESTED of the root lruvec, set by kswapd's shrink_node.
    /// reclaim_wait[]: tasks in reclaim_throttle(), per reason.
    pub reclaim_wait: [Vec<crate::sim::sched::TaskId>; crate::kernel::throttle::NR_REASONS],
    /// Tasks in throttle_direct_reclaim() (pfmemalloc_wait).
    pub pfmemalloc_wait: Vec<crate::sim::sched::TaskId>,
    /// Tasks sleeping on WRITEBACK, and NR_THROTTLED_WRITTEN at the first one's start and
    /// now (acct_reclaim_writeback).
    pub nr_writeback_throttled: u64,
    pub nr_reclaim_start: u64,
    pub nr_throttled_written: u64,
    /// NR_ISOLATED_ANON / NR_ISOLATED_FILE.
    pub nr_isolated: [u64; 2],
    /// The node's numastat (zone_statistics, 6.1): pages allocated here for an
    /// allocation that preferred this node (numa_hit), that preferred another
    /// (numa_miss), and pages that preferred this node but came from another
    /// (numa_foreign).
    pub numa_hit: u64,
    pub numa_miss: u64,
    pub numa_foreign: u64,
}

/// Models the default of vm.min_free_kbytes (calculate_min_free_kbytes):
/// sqrt(lowmem_kbytes * 16), clamped to [128, 262144].
pub fn default_min_free_kbytes(lowmem_pages: u64) -> u64 {
    let kbytes = lowmem_pages * 4;
    (kbytes * 16).isqrt().clamp(128, 262_144)
}

/// Models __setup_per_zone_wmarks() for lowmem zones: min is the zone's share of
/// min_free_kbytes; low and high each add max(min/4, managed * scale_factor / 10000).
pub fn zone_watermarks(
    managed: u64,
    total_managed: u64,
    min_free_kbytes: u64,
    scale_factor: u64,
) -> [u64; 3] {
    let pages_min = min_free_kbytes / 4;
    let min = (pages_min as u128 * managed as u128 / total_managed.max(1) as u128) as u64;
    let delta = (min / 4).max(managed * scale_factor / 10_000);
    [min, min + delta, min + 2 * delta]
}

impl Node {
    /// A node whose frames `start_pfn..start_pfn+pages` are all free, linked in `arena`.
    pub fn new(
        start_pfn: Pfn,
        pages: u64,
        wmark: [u64; 3],
        links: &mut [crate::kernel::folio::Link],
        arena: &mut [crate::kernel::folio::Folio],
    ) -> Self {
        let end_pfn = start_pfn + pages as Pfn;
        let mut free_list = List::default();
        for pfn in start_pfn..end_pfn {
            free_list.push_tail(links, arena, pfn);
        }
        Node {
            zone: Zone {
                managed: pages,
                free: pages,
                wmark,
            },
            start_pfn,
            end_pfn,
            free_list,
            lock: Default::default(),
            kswapd_failures: 0,
            kswapd_wake: false,
            kswapd_waiting: true,
            dirty: false,
            writeback: false,
            reclaim_wait: Default::default(),
            pfmemalloc_wait: Vec::new(),
            nr_writeback_throttled: 0,
            nr_reclaim_start: 0,
            numa_hit: 0,
            numa_miss: 0,
            numa_foreign: 0,
            nr_throttled_written: 0,
            nr_isolated: [0; 2],
        }
    }

    /// Models pgdat_balanced() for order 0: the zone is above its high watermark.
    pub fn balanced(&self) -> bool {
        self.zone.watermark_ok(self.zone.wmark[WMARK_HIGH])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_free_kbytes_default() {
        // 1 GiB: sqrt(1048576 * 16) = 4096 KiB.
        assert_eq!(default_min_free_kbytes(262_144), 4096);
        // Tiny machines are clamped up, huge ones down.
        assert_eq!(default_min_free_kbytes(16), 128);
        assert_eq!(default_min_free_kbytes(1 << 40), 262_144);
    }

    #[test]
    fn watermarks_follow_setup_per_zone_wmarks() {
        // 1 GiB zone, min_free_kbytes 4096 -> pages_min 1024; delta = max(256, 262) = 262.
        assert_eq!(
            zone_watermarks(262_144, 262_144, 4096, 10),
            [1024, 1286, 1548]
        );
        // Two equal zones share min; a large scale factor dominates delta.
        assert_eq!(zone_watermarks(1000, 2000, 400, 1000), [50, 150, 250]);
    }
}
