//! The reclaim throttles of Linux 6.1 (mm/vmscan.c, mm/memcontrol.c): where a reclaiming
//! task is put to sleep so that others (kswapd, the flusher, other reclaimers) can make
//! progress. They only mean something because reclaimers overlap in time.
//!
//! Each sleep is counted and timed in vmstat under the model's own names
//! (`throttle_<reason>` and `throttle_<reason>_ns`); the kernel itself counts only
//! `pgscan_direct_throttle` and traces the rest (mm_vmscan_throttled).

use crate::kernel::fault::current_killed;
use crate::kernel::folio::lru::{INACTIVE_ANON, INACTIVE_FILE};
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::node::WMARK_MIN;
use crate::kernel::stats::Vm;
use crate::kernel::vmscan::{ScanControl, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX};
use crate::kernel::Kernel;
use crate::sim::sched::{TaskId, NEVER};

/// CONFIG_HZ of the kernel modelled (Debian's 6.1 kernel: 250).
pub const HZ: u64 = 250;
/// One jiffy in virtual ns.
pub const JIFFY_NS: u64 = 1_000_000_000 / HZ;

/// The reasons of reclaim_throttle() (enum vmscan_throttle_state), indexing the node's
/// reclaim_wait queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Reason {
    Writeback = 0,
    Isolated = 1,
    Noprogress = 2,
    Congested = 3,
}
pub const NR_REASONS: usize = 4;

/// A kind of throttling sleep, with its vmstat count and time counters.
#[derive(Clone, Copy, Debug)]
pub enum Sleep {
    Reclaim(Reason),
    /// mem_cgroup_handle_over_high()'s penalty.
    MemcgHigh,
    /// MGLRU 6.1: waiting in try_to_inc_max_seq() for another walker's aging.
    Aging,
    /// balance_dirty_pages()'s pause.
    Dirty,
}

impl Sleep {
    fn counters(self) -> (Vm, Vm) {
        match self {
            Sleep::Reclaim(Reason::Writeback) => (Vm::ThrottleWriteback, Vm::ThrottleWritebackNs),
            Sleep::Reclaim(Reason::Isolated) => (Vm::ThrottleIsolated, Vm::ThrottleIsolatedNs),
            Sleep::Reclaim(Reason::Noprogress) => {
                (Vm::ThrottleNoprogress, Vm::ThrottleNoprogressNs)
            }
            Sleep::Reclaim(Reason::Congested) => (Vm::ThrottleCongested, Vm::ThrottleCongestedNs),
            Sleep::MemcgHigh => (Vm::ThrottleMemcgHigh, Vm::ThrottleMemcgHighNs),
            Sleep::Aging => (Vm::ThrottleAging, Vm::ThrottleAgingNs),
            Sleep::Dirty => (Vm::DirtyThrottle, Vm::DirtyThrottleNs),
        }
    }
}

/// Sleeps until `until` (NEVER: until woken) or an earlier wake-up, counting the sleep
/// under `why`; returns the time slept. balance_dirty_pages() sleeps in
/// io_schedule_timeout(), an iowait sleep for psi; the others in schedule_timeout().
pub fn sleep(k: &mut Kernel, why: Sleep, until: u64) -> u64 {
    let start = k.cur.clock;
    let io = matches!(why, Sleep::Dirty) && k.sched.in_task();
    if io {
        k.psi.set_iowait(k.sched.current, true, start);
    }
    let woke = k.sleep_until(until);
    if io {
        k.psi.set_iowait(k.sched.current, false, woke);
    }
    let (count, ns) = why.counters();
    k.vm.add(count, 1);
    k.vm.add(ns, woke - start);
    woke - start
}

/// Wakes every task on a wait queue (wake_up_all), now.
pub fn wake_all(k: &mut Kernel, queue: Vec<TaskId>) {
    let now = k.cur.clock;
    for t in queue {
        k.sched.push(t, now);
    }
}

/// Models reclaim_throttle(): sleep on the node's queue for `reason` until its timeout
/// (WRITEBACK HZ/10, ISOLATED HZ/50, NOPROGRESS and CONGESTED one jiffy, and those two
/// not at all when skip_throttle_noprogress) or an earlier wake-up.
pub fn reclaim_throttle(k: &mut Kernel, node: usize, reason: Reason) {
    let timeout = match reason {
        Reason::Writeback => {
            let n = &mut k.nodes[node];
            n.nr_writeback_throttled += 1;
            if n.nr_writeback_throttled == 1 {
                n.nr_reclaim_start = n.nr_throttled_written;
            }
            HZ / 10 * JIFFY_NS
        }
        Reason::Congested | Reason::Noprogress => {
            if skip_throttle_noprogress(k, node) {
                return;
            }
            JIFFY_NS
        }
        Reason::Isolated => HZ / 50 * JIFFY_NS,
    };
    let me = k.sched.current;
    k.nodes[node].reclaim_wait[reason as usize].push(me);
    let until = k.cur.clock + timeout;
    sleep(k, Sleep::Reclaim(reason), until);
    k.nodes[node].reclaim_wait[reason as usize].retain(|&t| t != me);
    if reason == Reason::Writeback {
        k.nodes[node].nr_writeback_throttled -= 1;
    }
}

/// wake_up() of a reclaim_wait queue: its sleepers go on now.
pub fn wake_throttled(k: &mut Kernel, node: usize, reason: Reason) {
    let queue = std::mem::take(&mut k.nodes[node].reclaim_wait[reason as usize]);
    wake_all(k, queue);
}

/// Models skip_throttle_noprogress(): no point sleeping when kswapd has given up on the
/// node, or when at most half its reclaimable pages are dirty or under writeback (the
/// sleep would not let writeback free anything).
fn skip_throttle_noprogress(k: &Kernel, node: usize) -> bool {
    if k.nodes[node].kswapd_failures >= MAX_RECLAIM_RETRIES {
        return true;
    }
    let can_swap = k.can_swap(crate::kernel::memcg::ROOT);
    let reclaimable: u64 = (0..k.memcgs.cgs.len())
        .map(|m| &k.lruvecs[k.lruvec(m as MemcgId, node)].nr)
        .map(|nr| nr[2] + nr[3] + if can_swap { nr[0] + nr[1] } else { 0 })
        .sum();
    // Dirty and writeback pages are counted machine-wide; the seeds' machines are
    // modelled with one node per set of counters that matters here.
    let write_pending = k.wb.nr_dirty + k.wb.nr_writeback;
    2 * write_pending <= reclaimable
}

/// Models too_many_isolated() for a GFP_KERNEL reclaimer (both __GFP_IO and __GFP_FS,
/// so the limit is an eighth of the node's inactive list): whether this direct or
/// cgroup reclaimer must wait before isolating. kswapd never waits. A check that comes
/// out false wakes the node's ISOLATED sleepers (the only wake-up they get).
pub fn too_many_isolated(k: &mut Kernel, node: usize, file: bool, sc: &ScanControl) -> bool {
    if sc.kswapd {
        return false;
    }
    // Other CPUs isolate and put back meanwhile.
    k.sync();
    let list = if file { INACTIVE_FILE } else { INACTIVE_ANON };
    let inactive: u64 = (0..k.memcgs.cgs.len())
        .map(|m| k.lruvecs[k.lruvec(m as MemcgId, node)].nr[list])
        .sum();
    let too_many = k.nodes[node].nr_isolated[usize::from(file)] > inactive >> 3;
    if !too_many {
        wake_throttled(k, node, Reason::Isolated);
    }
    too_many
}

/// Models consider_reclaim_throttle() after each priority pass of direct or cgroup
/// reclaim: a pass that reclaimed more than an eighth of what it scanned wakes the
/// NOPROGRESS sleepers; global direct reclaim that got nothing at priority 1 sleeps.
pub fn consider_reclaim_throttle(k: &mut Kernel, node: usize, sc: &ScanControl) {
    if sc.nr_reclaimed > sc.nr_scanned >> 3 {
        wake_throttled(k, node, Reason::Noprogress);
        return;
    }
    if sc.kswapd || sc.cgroup_reclaim() {
        return;
    }
    if sc.priority == 1 && sc.nr_reclaimed == 0 {
        reclaim_throttle(k, node, Reason::Noprogress);
    }
}

/// Models acct_reclaim_writeback() from folio_end_writeback(): while kswapd sleeps on
/// WRITEBACK, completed writes count, and more than SWAP_CLUSTER_MAX per sleeper wake it.
pub fn acct_reclaim_writeback(k: &mut Kernel, node: usize) {
    let n = &mut k.nodes[node];
    if n.nr_writeback_throttled == 0 {
        return;
    }
    n.nr_throttled_written += 1;
    k.vm.add(Vm::NrThrottledWritten, 1);
    let n = &k.nodes[node];
    if n.nr_throttled_written - n.nr_reclaim_start > SWAP_CLUSTER_MAX * n.nr_writeback_throttled {
        wake_throttled(k, node, Reason::Writeback);
    }
}

/// Models allow_direct_reclaim(): the node's free pages are above half its min
/// watermarks (the pfmemalloc reserve), or kswapd has given up on it. When they are not
/// and kswapd sleeps, wake it.
pub fn allow_direct_reclaim(k: &mut Kernel, node: usize) -> bool {
    k.sync();
    let n = &k.nodes[node];
    if n.kswapd_failures >= MAX_RECLAIM_RETRIES {
        return true;
    }
    let reserve = n.zone.wmark[WMARK_MIN];
    if reserve == 0 {
        return true;
    }
    let ok = n.zone.free > reserve / 2;
    if !ok {
        crate::kernel::fault::wakeup_kswapd(k, node);
    }
    ok
}

/// Models throttle_direct_reclaim() for a GFP_KERNEL allocation (which may enter the
/// filesystem, so the wait is killable and unbounded): global direct reclaim waits on
/// the node's pfmemalloc_wait until allow_direct_reclaim(); kswapd wakes it. Returns
/// whether the task was killed meanwhile (try_to_free_pages then reports progress so the
/// allocation does not OOM).
pub fn throttle_direct_reclaim(k: &mut Kernel, node: usize) -> bool {
    if current_killed(k) || allow_direct_reclaim(k, node) {
        return false;
    }
    let start = k.cur.clock;
    while !allow_direct_reclaim(k, node) && !current_killed(k) {
        let me = k.sched.current;
        k.nodes[node].pfmemalloc_wait.push(me);
        k.sleep_until(NEVER);
        k.nodes[node].pfmemalloc_wait.retain(|&t| t != me);
    }
    k.vm.add(Vm::PgscanDirectThrottle, 1);
    k.vm.add(Vm::ThrottlePfmemallocNs, k.cur.clock - start);
    current_killed(k)
}

/// kswapd's wake_up_all(&pgdat->pfmemalloc_wait): after a shrink pass when direct
/// reclaim is allowed again (`force`: unconditionally, before it naps).
pub fn wake_pfmemalloc(k: &mut Kernel, node: usize, force: bool) {
    if k.nodes[node].pfmemalloc_wait.is_empty() || !(force || allow_direct_reclaim(k, node)) {
        return;
    }
    let queue = std::mem::take(&mut k.nodes[node].pfmemalloc_wait);
    wake_all(k, queue);
}

/// MEMCG_CHARGE_BATCH (6.1): the kernel charges, and arms the memory.high check, in
/// batches of 64 pages.
pub const MEMCG_CHARGE_BATCH: u64 = 64;

/// Models calculate_high_delay() with mem_find_max_overage(): the penalty in ns for
/// `nr_pages` charged over memory.high, quadratic in the largest relative overage of the
/// memcg and its ancestors below the root: HZ * r^2 * nr_pages / MEMCG_CHARGE_BATCH
/// jiffies with the kernel's fixed-point shifts, at most 2 * HZ.
pub fn high_delay(k: &Kernel, memcg: MemcgId, nr_pages: u64) -> u64 {
    let overage = k
        .memcgs
        .ancestors(memcg)
        .filter(|&m| m != ROOT)
        .map(|m| {
            let c = &k.memcgs.cgs[m as usize];
            if c.usage <= c.high {
                0
            } else {
                (u128::from(c.usage - c.high) << 20) / u128::from(c.high.max(1))
            }
        })
        .max()
        .unwrap_or(0);
    let jiffies = ((overage * overage * u128::from(HZ)) >> 20 >> 14) * u128::from(nr_pages)
        / u128::from(MEMCG_CHARGE_BATCH);
    (jiffies.min(u128::from(2 * HZ)) as u64) * JIFFY_NS
}
