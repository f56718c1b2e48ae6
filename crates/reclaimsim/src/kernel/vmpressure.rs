//! Memory pressure's work items (mm/vmpressure.c, as in Linux 6.1): reclaim aimed at a
//! memcg tree (or, in global reclaim, the root) adds the pages it scanned to
//! that memcg's counters, and once they hold a window's worth of scanned pages
//! (vmpressure_win, 512) it queues the memcg's work item on the local CPU's per-CPU
//! workqueue (schedule_work on system_wq). The CPU's kworker, a kernel thread like any
//! other to the scheduler, wakes, takes the counters (vmpressure_work_fn) and would
//! notify any listener of memory.pressure_level; the model has none, so what remains
//! is the kworker's wake-up, its CPU time and the preemption of whatever ran on that
//! CPU, often the reclaiming task itself. The engine owns the kworker tasks and tells
//! this module their ids (`set_kworkers`); without them (kernel paths run by tests
//! outside the engine) work is queued but nothing runs it.

use crate::kernel::memcg::MemcgId;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;

/// vmpressure_win: SWAP_CLUSTER_MAX * 16 scanned pages between two work items.
pub const VMPRESSURE_WIN: u64 = 512;

/// vmpressure_level_critical_prio: ilog2(100 / 10), the priority at and below which
/// vmpressure_prio() reports critical pressure.
pub const CRITICAL_PRIO: i32 = 3;

/// Per memcg its struct vmpressure's scanned count and work item; per CPU the work
/// items queued on it and its kworker's task id. tree_reclaimed is not kept: it only
/// feeds the pressure level, which no listener reads here.
#[derive(Clone, Debug, Default)]
pub struct Vmpressure {
    /// vmpr->tree_scanned, per memcg.
    scanned: Vec<u64>,
    /// WORK_STRUCT_PENDING of each memcg's work item.
    pending: Vec<bool>,
    /// Per CPU, the memcgs whose work waits on it, oldest first.
    queued: Vec<Vec<MemcgId>>,
    /// Per CPU, its kworker's task id (empty outside the engine).
    kworker: Vec<usize>,
}

impl Vmpressure {
    /// The engine's kworker task for each CPU, in CPU order.
    pub fn set_kworkers(&mut self, ids: Vec<usize>) {
        self.queued = vec![Vec::new(); ids.len()];
        self.kworker = ids;
    }

    fn grow(&mut self, memcg: MemcgId) {
        let n = memcg as usize + 1;
        if self.scanned.len() < n {
            self.scanned.resize(n, 0);
            self.pending.resize(n, false);
        }
    }

    /// Whether `memcg`'s work item is queued and not yet run.
    pub fn is_pending(&self, memcg: MemcgId) -> bool {
        self.pending.get(memcg as usize).copied().unwrap_or(false)
    }
}

/// Models vmpressure() with `tree` true (6.1): the reclaim of a memcg tree (`memcg`,
/// the root for global reclaim) scanned `scanned` pages (what it reclaimed only feeds
/// the level, not kept). The per-memcg call (tree false) only sets cgroup v2's socket
/// pressure, which the model has no sockets to feel, so it has no counterpart. Every
/// allocation the model reclaims for may do I/O and file-system work, so the gfp check
/// always passes.
pub fn vmpressure_tree(k: &mut Kernel, memcg: MemcgId, scanned: u64) {
    if !k.cfg.vmpressure || scanned == 0 {
        return;
    }
    let v = &mut k.vmpressure;
    v.grow(memcg);
    v.scanned[memcg as usize] += scanned;
    if v.scanned[memcg as usize] < VMPRESSURE_WIN {
        return;
    }
    schedule_work(k, memcg);
}

/// Models vmpressure_prio(): at priority 3 or below, reclaim reports a window of
/// pages scanned and none reclaimed, so that listeners hear of critical pressure.
pub fn vmpressure_prio(k: &mut Kernel, memcg: MemcgId, priority: i32) {
    if priority > CRITICAL_PRIO {
        return;
    }
    vmpressure_tree(k, memcg, VMPRESSURE_WIN);
}

/// schedule_work(&vmpr->work): queue the item on the local CPU unless it is pending,
/// and wake that CPU's kworker (try_to_wake_up; the scheduler decides whether it
/// preempts the running task).
fn schedule_work(k: &mut Kernel, memcg: MemcgId) {
    if k.vmpressure.pending[memcg as usize] {
        return;
    }
    k.vmpressure.pending[memcg as usize] = true;
    let cpu = k.cur.cpu as usize;
    // Outside the engine no worker exists: the item stays pending for good.
    if let Some(&id) = k.vmpressure.kworker.get(cpu) {
        k.vmpressure.queued[cpu].push(memcg);
        let clock = k.cur.clock;
        k.sched.push(id, clock);
    }
}

/// The kworker of `cpu` runs its queued items (process_one_work of each): every
/// memcg's vmpressure_work_fn takes and clears the counters under sr_lock and computes
/// the level; with no listener registered, notifying costs nothing more. Counted as
/// the model's `vmpressure_work`. (The kernel's early return for an item that finds
/// nothing scanned, a race between two queuers, cannot happen here: an item is queued
/// only with a window counted, and only its own run clears the count.)
pub fn run_work(k: &mut Kernel, cpu: u32) {
    let items = std::mem::take(&mut k.vmpressure.queued[cpu as usize]);
    for memcg in items {
        let v = &mut k.vmpressure;
        v.pending[memcg as usize] = false;
        v.scanned[memcg as usize] = 0;
        k.count(crate::kernel::stats::Vm::VmpressureWork, memcg, 1);
        k.spend(k.costs.vmpressure_work, Cat::Other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 16 MiB, one CPU, no memcg below the root.
    fn kernel() -> Box<Kernel> {
        Box::new(Kernel::new(&crate::kernel::Setup::small(4096, 1)))
    }

    #[test]
    fn one_work_item_per_window_and_none_while_pending() {
        let mut k = kernel();
        k.vmpressure.set_kworkers(vec![7]);
        vmpressure_tree(&mut k, 0, 500);
        assert!(!k.vmpressure.is_pending(0));
        vmpressure_tree(&mut k, 0, 32);
        assert!(k.vmpressure.is_pending(0));
        assert!(k.sched.is_queued(7), "the kworker was woken");
        k.sched.cancel(7);
        vmpressure_tree(&mut k, 0, 512);
        assert!(!k.sched.is_queued(7), "a pending item is not queued again");
        run_work(&mut k, 0);
        assert!(!k.vmpressure.is_pending(0));
        assert_eq!(k.vm.get(crate::kernel::stats::Vm::VmpressureWork), 1);
        assert!(k.vmpressure.queued[0].is_empty());
        // The counters restart from zero.
        vmpressure_tree(&mut k, 0, 511);
        assert!(!k.vmpressure.is_pending(0));
    }

    #[test]
    fn critical_priority_reports_a_window_and_off_reports_nothing() {
        let mut k = kernel();
        k.vmpressure.set_kworkers(vec![3]);
        vmpressure_prio(&mut k, 0, CRITICAL_PRIO + 1);
        assert!(!k.vmpressure.is_pending(0));
        vmpressure_prio(&mut k, 0, CRITICAL_PRIO);
        assert!(k.vmpressure.is_pending(0));
        let mut k = kernel();
        k.cfg.vmpressure = false;
        k.vmpressure.set_kworkers(vec![3]);
        vmpressure_tree(&mut k, 0, 4096);
        assert!(!k.vmpressure.is_pending(0));
    }
}
