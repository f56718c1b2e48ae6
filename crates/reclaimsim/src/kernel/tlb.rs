//! Reclaim's deferred TLB flushes and the IPIs that carry them to other CPUs: mm/rmap.c's
//! `tlbflush_unmap_batch` (set_tlb_ubc_flush_pending, try_to_unmap_flush,
//! try_to_unmap_flush_dirty) over x86's arch_tlbbatch_add_mm and arch_tlbbatch_flush
//! (arch/x86/mm/tlb.c), as Linux 5.18 to 6.1 have them.
//!
//! try_to_unmap_one() clears a PTE without flushing when other CPUs run the mm
//! (should_defer_flush: x86's ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH, and arm64's only from
//! 6.5); the task notes the mm and whether the PTE was dirty. shrink_folio_list() then
//! flushes once before writing out a folio whose PTE was dirty (try_to_unmap_flush_dirty,
//! so no CPU writes to it after the write starts) and once at the end of the list
//! (try_to_unmap_flush). A flush sends a call-function IPI to every other CPU that runs
//! one of the noted mms (mm_cpumask, lazy CPUs skipped: flush_tlb_multi's
//! tlb_is_not_lazy) and waits for all of them; each of those CPUs takes the interrupt and
//! flushes its whole TLB (flush_tlb_func with full_flush_tlb_info).
//!
//! The model's mm_cpumask is the mm of the task each CPU is running (`cpu_mm`, which the
//! engine keeps): x86's switch_mm_irqs_off takes a CPU out of the old mm's mask when it
//! switches to another process, and kernel threads (kswapd) run lazily, so they are not
//! sent to. The sender waits `tlb_ipi` (the IPI's round trip to the first CPU) plus a
//! `lock_bounce` for each further one (its call_single_queue entry, a line of another
//! core's); each receiver loses `tlb_flush_irq`, charged to whatever it runs next
//! (`Kernel::spend`). A CPU that has not yet taken an earlier flush's IPI gets no IPI of
//! its own (smp_call_function_many_cond sends one only to a CPU whose call_single_queue
//! was empty, 5.6 onward); its interrupt runs both requests, and the second finds the TLB
//! already flushed (flush_tlb_func: the CPU's tlb_gen has caught up with the mm's), so it
//! costs only `tlb_flush_queued`. The sender waits for every target to have run the
//! flush (csd_lock_wait): a target that had interrupts masked when the request went out
//! (spinning on or holding an lru_lock, zone->lock or i_pages lock) runs it only after
//! its last such unlock, so the sender spins until then and through the flush. A machine
//! whose profile has `tlb_ipi` 0 flushes without IPIs (arm64 before 6.5 broadcasts a
//! TLBI for each PTE, inside `unmap`): nothing is deferred.

use crate::kernel::debug::vm_warn_on;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::Kernel;
use crate::sim::sched::Yield;

/// current->tlb_ubc (struct tlbflush_unmap_batch): the mms whose PTEs this task cleared
/// without flushing (arch_tlbbatch's cpumask, kept as the mms whose CPUs it covers) and
/// whether one of the PTEs was dirty (`writable`).
#[derive(Clone, Debug, Default)]
pub struct TlbBatch {
    pub mms: Vec<u32>,
    pub writable: bool,
}

/// A CPU's interrupt timeline as far as flush requests need it: when the IPI it has
/// yet to take was sent, and the last span in which its task had interrupts masked
/// (spinning on or holding an irq-masking lock; `until` is u64::MAX while it lasts).
#[derive(Clone, Copy, Debug, Default)]
pub struct IrqWindow {
    pub sent_at: u64,
    pub masked_since: u64,
    pub masked_until: u64,
}

impl Kernel {
    /// The running task masks interrupts from `t` (spin_lock_irq and its kin, before
    /// the spin).
    pub(crate) fn irqs_masked_from(&mut self, t: u64) {
        let w = &mut self.irq_window[self.cur.cpu as usize];
        (w.masked_since, w.masked_until) = (t, u64::MAX);
    }

    /// The running task unmasks interrupts at `t` (its last irq-masking unlock); the
    /// senders waiting for this CPU to run their flush go on from then
    /// (`wait_for_unmask`).
    pub(crate) fn irqs_unmasked_at(&mut self, t: u64) {
        let cpu = self.cur.cpu as usize;
        self.irq_window[cpu].masked_until = t;
        for id in self.irq_waiters[cpu].drain(..) {
            self.sched.push(id, t);
        }
    }

    /// Whether `cpu` had interrupts masked at `t`, as far as its last masked span tells.
    fn masked_at(&self, cpu: usize, t: u64) -> bool {
        let w = &self.irq_window[cpu];
        w.masked_since <= t && t < w.masked_until
    }

    /// Whether a flush request to `cpu` at `t` finds an IPI there not yet taken: one was
    /// sent (a debt is owed) and is still on its way (`tlb_ipi`, the round trip, after
    /// its send) or the CPU has interrupts masked at `t`.
    fn ipi_untaken(&self, cpu: usize, t: u64) -> bool {
        let w = &self.irq_window[cpu];
        self.irq_pending[cpu] > 0 && (t < w.sent_at + self.costs.tlb_ipi || self.masked_at(cpu, t))
    }
}

/// The CPUs other than the running task's whose current mm is one of `mms`.
fn remote_cpus<'a>(k: &'a Kernel, mms: &'a [u32]) -> impl Iterator<Item = usize> + 'a {
    let me = k.cur.cpu as usize;
    (k.cpu_mm.iter().enumerate())
        .filter(move |&(c, m)| c != me && m.is_some_and(|m| mms.contains(&m)))
        .map(|(c, _)| c)
}

/// Models should_defer_flush() and set_tlb_ubc_flush_pending() (6.1) for a PTE of `mm`
/// that try_to_unmap_one() just cleared: deferred when another CPU runs the mm, else
/// flushed at once on this CPU (in `unmap`'s cost).
pub fn set_flush_pending(k: &mut Kernel, mm: u32, dirty: bool) {
    if k.costs.tlb_ipi == 0 || remote_cpus(k, &[mm]).next().is_none() {
        return;
    }
    let b = &mut k.cur.tlb_ubc;
    if !b.mms.contains(&mm) {
        b.mms.push(mm);
    }
    b.writable |= dirty;
}

/// Models try_to_unmap_flush() (6.1): one flush of everything the task deferred, an
/// IPI to each CPU still running one of its mms.
pub fn try_to_unmap_flush(k: &mut Kernel) {
    if k.cur.tlb_ubc.mms.is_empty() {
        return;
    }
    let b = std::mem::take(&mut k.cur.tlb_ubc);
    let targets: Vec<usize> = remote_cpus(k, &b.mms).collect();
    if targets.is_empty() {
        return;
    }
    // smp_call_function_many_cond: WARN_ON_ONCE(irqs_disabled()), for the sender
    // would wait on CPUs that wait on it.
    vm_warn_on!(!k.irqs_enabled());
    let n = targets.len() as u64;
    let sent = k.cur.clock;
    let masked: Vec<usize> = (targets.iter().copied())
        .filter(|&c| k.masked_at(c, sent))
        .collect();
    k.spend(k.costs.tlb_ipi + (n - 1) * k.costs.lock_bounce, Cat::Unmap);
    let mut ipis = 0;
    for c in targets {
        // smp_call_function_many_cond (5.6+): an IPI only to a CPU whose queue was empty.
        if k.ipi_untaken(c, sent) {
            k.irq_pending[c] += k.costs.tlb_flush_queued;
        } else {
            k.irq_pending[c] += k.costs.tlb_flush_irq;
            k.irq_window[c].sent_at = sent;
            ipis += 1;
        }
    }
    k.vm.add(Vm::NrTlbRemoteFlush, 1);
    k.vm.add(Vm::NrTlbRemoteFlushReceived, n);
    k.vm.add(Vm::TlbFlushIpis, ipis);
    for c in masked {
        wait_for_unmask(k, c, sent);
    }
}

/// csd_lock_wait() (kernel/smp.c) on a target that had interrupts masked when the
/// request went out: it runs the flush only once its task unmasks them, at its last
/// irq-masking unlock, so the sender spins until then and through the flush
/// (`tlb_flush_irq`). While that unlock is still to come (`masked_until` unknown) the
/// sender spins off the engine's queue and the unlock wakes it (`irqs_unmasked_at`). A
/// CPU whose masked span began after `sent` (its task unlocked and masked again while
/// the sender waited for another CPU) ran the request before that span: by its start.
fn wait_for_unmask(k: &mut Kernel, cpu: usize, sent: u64) {
    let t = k.cur.clock;
    let w = k.irq_window[cpu];
    let mut unmasked = if w.masked_since > sent {
        w.masked_since
    } else {
        w.masked_until
    };
    if unmasked == u64::MAX {
        if !k.sched.in_task() {
            return;
        }
        k.irq_waiters[cpu].push(k.sched.current);
        k.sched.suspend(Yield::Block);
        unmasked = k.cur.clock;
        k.cur.clock = t;
    }
    let wait = (unmasked + k.costs.tlb_flush_irq).saturating_sub(t);
    k.charge(wait, Cat::LockWait);
    k.vm.add(Vm::TlbFlushMasked, 1);
    k.vm.add(Vm::TlbFlushMaskedWaitNs, wait);
}

/// Models try_to_unmap_flush_dirty() (6.1): the flush before a folio's write-out, needed
/// only when a deferred PTE was dirty (writable).
pub fn try_to_unmap_flush_dirty(k: &mut Kernel) {
    if k.cur.tlb_ubc.writable {
        try_to_unmap_flush(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::config::Setup;

    fn kernel(cpus: u32) -> Kernel {
        let mut k = Kernel::new(&Setup::small(1024, cpus));
        k.costs.tlb_ipi = 1500;
        k.costs.tlb_flush_irq = 800;
        k.costs.lock_bounce = 100;
        k
    }

    /// A PTE of an mm that only this CPU runs is flushed at once; one that CPUs 1 and 2
    /// also run is deferred, and the flush waits for two IPIs and leaves each of those
    /// CPUs a handler's time to pay; a clean PTE needs no flush before a write-out.
    #[test]
    fn a_deferred_flush_interrupts_the_cpus_running_the_mm() {
        let mut k = kernel(4);
        k.cur.cpu = 0;
        k.cpu_mm = vec![Some(7), None, None, Some(3)];
        set_flush_pending(&mut k, 7, true);
        assert!(k.cur.tlb_ubc.mms.is_empty(), "deferred with no other CPU");
        k.cpu_mm = vec![Some(7), Some(7), Some(7), Some(3)];
        set_flush_pending(&mut k, 7, false);
        try_to_unmap_flush_dirty(&mut k);
        assert_eq!(k.cur.clock, 0, "a clean PTE flushed before write-out");
        set_flush_pending(&mut k, 7, true);
        try_to_unmap_flush_dirty(&mut k);
        assert_eq!(k.cur.clock, 1500 + 100);
        assert_eq!(k.irq_pending, vec![0, 800, 800, 0]);
        assert_eq!(k.vm.get(Vm::NrTlbRemoteFlushReceived), 2);
        try_to_unmap_flush(&mut k);
        assert_eq!(k.cur.clock, 1600, "flushed twice");
        assert_eq!(k.irq_pending, vec![0, 800, 800, 0]);
        // Past the first IPI's round trip: CPU 2 has interrupts masked, so its request
        // queues behind the IPI it has not taken; CPU 1 gets a second IPI.
        k.irq_window[2] = IrqWindow {
            sent_at: 0,
            masked_since: 1000,
            masked_until: u64::MAX,
        };
        set_flush_pending(&mut k, 7, true);
        try_to_unmap_flush(&mut k);
        assert_eq!(k.cur.clock, 3200);
        assert_eq!(k.irq_pending, vec![0, 1600, 1000, 0]);
        assert_eq!(k.vm.get(Vm::NrTlbRemoteFlushReceived), 4);
        assert_eq!(
            k.vm.get(Vm::TlbFlushIpis),
            3,
            "three IPIs for four requests"
        );
        // Within the round trip of an IPI to CPU 1 sent 100 ns ago: queued.
        k.irq_window[1].sent_at = k.cur.clock - 100;
        set_flush_pending(&mut k, 7, true);
        try_to_unmap_flush(&mut k);
        assert_eq!(k.irq_pending[1], 1800, "no flush of its own");
        k.cur.cpu = 1;
        k.spend(10, Cat::Other);
        assert_eq!(
            k.cur.clock,
            4800 + 10 + 1800,
            "CPU 1's handler time not paid"
        );
        assert_eq!(k.irq_pending[1], 0);
    }

    /// The sender waits for each target that had interrupts masked when the request
    /// went out: until that CPU unmasks them and through the flush it then runs; a CPU
    /// that masks them only after the send adds nothing.
    #[test]
    fn a_flush_waits_for_the_cpus_with_interrupts_masked() {
        let mut k = kernel(3);
        k.cur.cpu = 0;
        k.cpu_mm = vec![Some(7), Some(7), Some(7)];
        let masked = |since, until| IrqWindow {
            sent_at: 0,
            masked_since: since,
            masked_until: until,
        };
        k.irq_window[1] = masked(0, 9000);
        k.irq_window[2] = masked(0, 500);
        set_flush_pending(&mut k, 7, true);
        try_to_unmap_flush(&mut k);
        assert_eq!(k.cur.clock, 9000 + 800, "CPU 1's unmask, then its flush");
        assert_eq!(k.vm.get(Vm::TlbFlushMasked), 2);
        assert_eq!(k.vm.get(Vm::TlbFlushMaskedWaitNs), 9800 - 1600);
        k.irq_window[1] = masked(20_000, u64::MAX);
        k.irq_window[2] = masked(0, 500);
        set_flush_pending(&mut k, 7, true);
        try_to_unmap_flush(&mut k);
        assert_eq!(k.cur.clock, 9800 + 1600, "the round trip alone");
        assert_eq!(k.vm.get(Vm::TlbFlushMasked), 2);
        // Masked at the send, then unmasked and masked again by the time the sender
        // gets to it: the request ran before the second span began, at 12,000 at the
        // latest, not at that span's unknown end.
        k.irq_window[2] = masked(12_000, u64::MAX);
        wait_for_unmask(&mut k, 2, 11_000);
        assert_eq!(k.cur.clock, 12_000 + 800);
    }

    /// A CPU's masked span runs from its first irq-masking lock to its last unlock.
    #[test]
    fn interrupts_are_masked_from_the_spin_to_the_unlock() {
        use crate::sim::lock::{LockRef, LockSite};
        let mut k = kernel(2);
        k.cur.clock = 100;
        k.spin_lock(LockRef::Lru(0), LockSite::Other);
        k.spin_lock(LockRef::Zone(0), LockSite::Other);
        let since = k.irq_window[0].masked_since;
        k.spin_unlock(LockRef::Zone(0));
        assert_eq!(
            k.irq_window[0].masked_until,
            u64::MAX,
            "the lru_lock is held"
        );
        k.spin_unlock(LockRef::Lru(0));
        assert_eq!(since, 100);
        assert_eq!(k.irq_window[0].masked_until, k.cur.clock);
        assert!(k.cur.clock > since);
    }

    /// A CPU holding the lru_lock (spin_lock_irq) takes its pending IPIs only after the
    /// unlock; one holding si->lock (a plain spin_lock) takes them at once.
    #[test]
    fn interrupts_wait_for_a_lock_that_masks_them() {
        use crate::sim::lock::{Held, LockRef};
        let mut k = kernel(2);
        let held = |lock| Held {
            lock,
            start: 0,
            waited: 0,
            site: Default::default(),
        };
        k.irq_pending[0] = 800;
        k.cur.held.push(held(LockRef::Lru(0)));
        k.spend(10, Cat::Other);
        assert_eq!((k.cur.clock, k.irq_pending[0]), (10, 800));
        k.cur.held[0] = held(LockRef::SwapInfo);
        k.spend(10, Cat::Other);
        assert_eq!((k.cur.clock, k.irq_pending[0]), (820, 0));
    }

    /// A task's profile has the handlers it ran under `irq`, the work it was doing when
    /// they came in under that work's category, and the sum is the time charged.
    #[test]
    fn the_profile_shows_the_handlers_apart() {
        use crate::kernel::stats::NR_CAT;
        let mut k = kernel(2);
        k.profiles = vec![[[0; NR_CAT]; 2]; 2];
        k.sched.current = 1;
        k.irq_pending[0] = 800;
        k.spend(200, Cat::Work);
        k.spend(50, Cat::Other);
        let calm = k.profiles[1][0];
        assert_eq!(k.cur.clock, 1050);
        assert_eq!(calm[Cat::Irq as usize], 800);
        assert_eq!(calm[Cat::Work as usize], 200);
        assert_eq!(calm[Cat::Other as usize], 50);
        assert_eq!(k.profiles[1][1], [0; NR_CAT], "nothing in a stall");
        assert_eq!(k.profiles[0], [[0; NR_CAT]; 2], "task 0 did not run");
        k.psi.add_task(1, crate::kernel::memcg::ROOT, 0);
        let was = k.psi.memstall_enter(1, k.cur.clock);
        k.spend(30, Cat::ListOps);
        k.psi.memstall_leave(1, was, k.cur.clock);
        k.spend(5, Cat::ListOps);
        assert_eq!(
            k.profiles[1][1][Cat::ListOps as usize],
            30,
            "reclaim is a stall"
        );
        assert_eq!(k.profiles[1][0][Cat::ListOps as usize], 5);
    }

    /// With `tlb_ipi` 0 (no IPIs: arm64 before 6.5) nothing is deferred.
    #[test]
    fn without_ipis_nothing_is_deferred() {
        let mut k = kernel(2);
        k.costs.tlb_ipi = 0;
        k.cpu_mm = vec![Some(1), Some(1)];
        set_flush_pending(&mut k, 1, true);
        try_to_unmap_flush(&mut k);
        assert_eq!((k.cur.clock, k.irq_pending.iter().sum::<u64>()), (0, 0));
    }
}
