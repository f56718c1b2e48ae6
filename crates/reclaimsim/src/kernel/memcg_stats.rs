//! Flushing the memcg statistics, as Linux 5.15 to 6.1 do it (mm/memcontrol.c over
//! kernel/cgroup/rstat.c).
//!
//! A memcg's counters (its LRU sizes, its events, its mapped, file, swap-cache and swap
//! pages) are per-CPU; a reader that wants them exact first folds every CPU's deltas into
//! the totals. Each update also counts towards a flush (memcg_rstat_updated): a CPU adds
//! a batch to the global `stats_flush_threshold` every MEMCG_CHARGE_BATCH (64) updates,
//! and puts the memcg and its ancestors on its rstat updated tree (cgroup_rstat_updated).
//! mem_cgroup_flush_stats() flushes once more than one batch per online CPU has built up: one flusher at a time
//! (spin_trylock_irqsave of stats_flush_lock; a caller that finds it held returns at
//! once), from the root, with interrupts masked throughout (cgroup_rstat_flush_irqsafe:
//! cgroup_rstat_lock and each CPU's cgroup_rstat_cpu_lock taken irqsave). For every
//! possible CPU it takes that CPU's lock and pops its updated tree (`memcg_flush_cpu`),
//! and for each memcg popped it folds that CPU's counters into the memcg's and passes the
//! delta to the parent (mem_cgroup_css_rstat_flush: 6.1's ~50 state items, ~100 events
//! and ~45 node items per node; `memcg_flush_memcg`).
//!
//! Reclaim's caller is the classic LRU's prepare_scan_count(), at every shrink_node();
//! with MGLRU prepare_scan_count() returns before the flush (from the series' v7
//! "minimal implementation", February 2022, through 6.1). From 5.15-rc3 to 5.18-rc3
//! the classic LRU's workingset_refault() flushed too, at every refault
//! (`workingset_refault_flush`, `memcg_stats_flush = "v5.15"`); MGLRU's refaults
//! return before it (lru_gen_refault). From 5.18-rc4 (and in 6.1, the default) a
//! refault flushes only when the periodic worker is late, which the model leaves out
//! with the worker itself (flush_memcg_stats_dwork, every 2 s, either policy). Before
//! 5.13 (`"none"`, seed 004's 5.8) memcg counters had no rstat and nothing flushes.
//! The flusher's CPU, masked all the while, runs no flush IPI until it is done:
//! a reclaimer whose TLB flush targets it waits (`tlb::wait_for_unmask`).

use crate::kernel::config::MemcgStatsFlush;
use crate::kernel::memcg::MemcgId;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::Kernel;
use crate::sim::lock::{LockRef, LockSite};

/// MEMCG_CHARGE_BATCH: the updates a CPU counts before it adds a batch to the threshold.
const MEMCG_CHARGE_BATCH: u64 = 64;

/// The flush's state: per-CPU update counts, the threshold, and each CPU's updated tree.
#[derive(Clone, Debug, Default)]
pub struct StatsFlush {
    /// Per CPU: stats_updates, the updates (absolute values) it counted since it last
    /// added to `threshold`.
    pending: Vec<u64>,
    /// stats_flush_threshold: batches added since the last flush.
    threshold: u64,
    /// Per CPU, one bit per memcg: the memcgs on the CPU's rstat updated tree.
    updated: Vec<Vec<u64>>,
    /// The lock's state (stats_flush_lock, taken by trylock only).
    pub lock: crate::sim::lock::Lock,
}

impl StatsFlush {
    pub fn new(cpus: usize, memcgs: usize) -> StatsFlush {
        StatsFlush {
            pending: vec![0; cpus],
            threshold: 0,
            updated: vec![vec![0; memcgs.div_ceil(64)]; cpus],
            lock: Default::default(),
        }
    }

    /// The (CPU, memcg) pairs a flush now would visit.
    fn pairs(&self) -> u64 {
        let words = self.updated.iter().flatten();
        words.map(|w| u64::from(w.count_ones())).sum()
    }
}

impl Kernel {
    /// One update of a memcg counter of folio `pfn`'s memcg (__lruvec_stat_mod_folio,
    /// mem_cgroup_charge_statistics and their kin): its mapped, file-page, swap-cache or
    /// swap count, or its charge's event.
    #[inline]
    pub(crate) fn folio_stat_updated(&mut self, pfn: crate::kernel::folio::Pfn) {
        self.memcg_rstat_updated(self.folios[pfn as usize].memcg, 1);
    }

    /// memcg_rstat_updated() (6.1), for an update of `val` (its absolute value) to one of
    /// `memcg`'s counters on the running task's CPU: cgroup_rstat_updated() puts the memcg
    /// and its ancestors on the CPU's updated tree, and every MEMCG_CHARGE_BATCH updates
    /// the CPU adds to the threshold (no more once it is past the online CPUs).
    #[inline]
    pub(crate) fn memcg_rstat_updated(&mut self, memcg: MemcgId, val: u64) {
        let cpu = self.cur.cpu as usize;
        let online = u64::from(self.topology.nr_cpus());
        let s = &mut self.stats_flush;
        let tree = &mut s.updated[cpu];
        let (word, bit) = (memcg as usize / 64, 1u64 << (memcg % 64));
        if tree[word] & bit == 0 {
            let mut c = Some(memcg);
            while let Some(m) = c {
                tree[m as usize / 64] |= 1 << (m % 64);
                c = self.memcgs.cgs[m as usize].parent;
            }
        }
        let x = s.pending[cpu] + val;
        if x > MEMCG_CHARGE_BATCH {
            if s.threshold <= online {
                s.threshold += x / MEMCG_CHARGE_BATCH;
            }
            s.pending[cpu] = 0;
        } else {
            s.pending[cpu] = x;
        }
    }
}

/// mem_cgroup_flush_stats() (5.15 to 6.1): when more than one batch per online CPU has
/// built up, and no other CPU is flushing, fold every CPU's updates into the memcgs'
/// totals with interrupts masked (__mem_cgroup_flush_stats,
/// cgroup_rstat_flush_irqsafe); the threshold starts again from zero.
/// Before 5.13 (`memcg_stats_flush = "none"`) there is nothing to flush. True when
/// this call flushed.
pub fn mem_cgroup_flush_stats(k: &mut Kernel) -> bool {
    let online = u64::from(k.topology.nr_cpus());
    if k.cfg.memcg_stats_flush == MemcgStatsFlush::None || k.stats_flush.threshold <= online {
        return false;
    }
    if !k.spin_trylock(LockRef::StatsFlush, LockSite::Other) {
        k.vm.add(Vm::MemcgFlushBusy, 1);
        return false;
    }
    let cpus = k.stats_flush.updated.len() as u64;
    let pairs = k.stats_flush.pairs();
    let ns = cpus * k.costs.memcg_flush_cpu + pairs * k.costs.memcg_flush_memcg;
    k.spend(ns, Cat::Other);
    for tree in &mut k.stats_flush.updated {
        tree.fill(0);
    }
    k.stats_flush.threshold = 0;
    k.spin_unlock(LockRef::StatsFlush);
    k.vm.add(Vm::MemcgFlush, 1);
    k.vm.add(Vm::MemcgFlushNs, ns);
    true
}

/// The classic LRU's workingset_refault() flush, after it counts the refault: 5.15-rc3
/// to 5.18-rc3 call mem_cgroup_flush_stats() at every refault; 5.18-rc4 to 6.1 call
/// mem_cgroup_flush_stats_delayed(), which flushes only when the periodic flush is more
/// than 4 s late (the model has no periodic flush, so it never does).
pub fn workingset_refault_flush(k: &mut Kernel) {
    match k.cfg.memcg_stats_flush {
        MemcgStatsFlush::V515 => {
            if mem_cgroup_flush_stats(k) {
                k.vm.add(Vm::MemcgFlushRefault, 1);
            }
        }
        MemcgStatsFlush::V61 | MemcgStatsFlush::None => {}
    }
}

#[cfg(test)]
mod tests;
