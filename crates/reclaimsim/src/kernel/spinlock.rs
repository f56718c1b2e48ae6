//! The kernel's side of the model's spinlocks (`sim::lock`): which lock a `LockRef`
//! names in the kernel's state, `spin_lock` / `spin_unlock` as the kernel's paths call
//! them (include/linux/spinlock.h, kernel/locking/qspinlock.c: FIFO hand-over), and
//! `line_rmw`, one atomic on a contended shared line such as a rwsem's count.

use crate::kernel::debug::vm_bug_on;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;
use crate::sim::lock::{Held, Lock, LockRef, LockSite};
use crate::sim::sched::Yield;

/// Whether `l` is taken with interrupts off, and spun on so: the lru_lock
/// (spin_lock_irq), zone->lock (spin_lock_irqsave), i_pages (xa_lock_irq) and the memcg
/// stats flush (spin_trylock_irqsave); si->lock is a plain spin_lock, the rwsems are
/// sleeping locks the model takes as `line_rmw`s, pcpu_drain_mutex a mutex it only
/// try-locks, and a page_counter's usage no lock but a line (`line_rmw`).
fn masks_irqs(l: LockRef) -> bool {
    match l {
        LockRef::Lru(_) | LockRef::Zone(_) | LockRef::IPages(_) | LockRef::StatsFlush => true,
        LockRef::SwapInfo
        | LockRef::AnonVma { .. }
        | LockRef::IMmap(_)
        | LockRef::PcpDrain
        | LockRef::PageCounter(_) => false,
    }
}

impl Kernel {
    fn lock_of(&mut self, l: LockRef) -> &mut Lock {
        match l {
            LockRef::Lru(i) => &mut self.locks[i],
            LockRef::Zone(n) => &mut self.nodes[n].lock,
            LockRef::IPages(f) => &mut self.files[f as usize].i_pages,
            LockRef::SwapInfo => &mut self.swap.as_mut().expect("swap").lock,
            LockRef::AnonVma { mm, vma } => &mut self.mms[mm as usize].vmas[vma as usize].anon_vma,
            LockRef::IMmap(f) => &mut self.files[f as usize].i_mmap,
            LockRef::StatsFlush => &mut self.stats_flush.lock,
            LockRef::PcpDrain => &mut self.pcp_drain,
            LockRef::PageCounter(m) => &mut self.memcgs.cgs[m as usize].counter,
        }
    }

    /// Whether the running task can take an interrupt: it holds no lock taken with
    /// interrupts off (`masks_irqs`).
    pub fn irqs_enabled(&self) -> bool {
        self.cur.held.iter().all(|h| !masks_irqs(h.lock))
    }

    /// Every lock of the model, with its name in results.
    pub fn all_locks(&self) -> impl Iterator<Item = (&'static str, &Lock)> {
        let lru = self.locks.iter().map(|l| ("lru_lock", l));
        let zone = self.nodes.iter().map(|n| ("zone_lock", &n.lock));
        let i_pages = self.files.iter().map(|f| ("i_pages", &f.i_pages));
        let swap = self.swap.iter().map(|s| ("swap_info", &s.lock));
        let vmas = self.mms.iter().flat_map(|m| &m.vmas);
        let anon_vma = vmas.map(|v| ("anon_vma", &v.anon_vma));
        let i_mmap = self.files.iter().map(|f| ("i_mmap", &f.i_mmap));
        let flush = std::iter::once(("memcg_stats_flush", &self.stats_flush.lock));
        let drain = std::iter::once(("pcpu_drain_mutex", &self.pcp_drain));
        let counters = self.memcgs.cgs.iter().map(|m| ("page_counter", &m.counter));
        lru.chain(zone)
            .chain(i_pages)
            .chain(swap)
            .chain(anon_vma)
            .chain(i_mmap)
            .chain(flush)
            .chain(drain)
            .chain(counters)
    }

    /// spin_lock(): at a sync point, take the lock or spin (FIFO) until its holder
    /// hands it over; then pay the acquisition, and the cacheline transfer when another
    /// core held it last (`line_transfer`).
    pub fn spin_lock(&mut self, l: LockRef, site: LockSite) {
        self.acquire(l, site, self.costs.lock_acquire);
    }

    /// spin_trylock(): at a sync point, take `l` if no task holds it then (nor frees it
    /// later in virtual time), paying the acquisition and the line's transfer; false,
    /// with nothing taken, when it is busy.
    pub fn spin_trylock(&mut self, l: LockRef, site: LockSite) -> bool {
        self.sync();
        let t = self.cur.clock;
        let lock = self.lock_of(l);
        if lock.owner.is_some() || lock.free_at > t {
            return false;
        }
        self.take(l, site, self.costs.lock_acquire);
        true
    }

    /// One atomic read-modify-write on a shared word that other CPUs also update (a
    /// rwsem's count in down_read / up_read): the line is the contended resource. The
    /// CPU takes it in arrival order, pays the RMW (`lru_flag_atomic`) and the transfer
    /// when another core wrote it last (`line_transfer`), and lets it go at once.
    pub fn line_rmw(&mut self, l: LockRef, site: LockSite) {
        self.sync();
        if !self.line_rmw_free(l, site) {
            self.take(l, site, self.costs.lru_flag_atomic);
            self.spin_unlock(l);
        }
    }

    /// `line_rmw` after its sync point when no task holds or waits for the line (the
    /// common case): the same take and release, their times and counts, without
    /// queueing a `Held` record in between. False (nothing done) when the line is busy.
    fn line_rmw_free(&mut self, l: LockRef, site: LockSite) -> bool {
        self.check_not_held(l);
        let (t, cpu) = (self.cur.clock, self.cur.cpu);
        let cost = self.costs.lru_flag_atomic;
        let lock = self.lock_of(l);
        if lock.owner.is_some() || !lock.waiters.is_empty() {
            return false;
        }
        let last = lock.last_cpu;
        let start = lock.free_at.max(t);
        let hold = cost + self.line_transfer(last, cpu);
        let lock = self.lock_of(l);
        lock.record(hold, start - t, site, cpu);
        lock.free_at = start + hold;
        self.spend(start - t, Cat::LockWait);
        self.spend(hold, Cat::ListOps);
        true
    }

    /// Takes `l` (spinning in FIFO order behind its holder) and pays `cost`, plus the
    /// cacheline transfer when another core held it last (`line_transfer`).
    fn acquire(&mut self, l: LockRef, site: LockSite, cost: u64) {
        self.sync();
        self.take(l, site, cost);
    }

    /// `acquire` after its sync point.
    fn take(&mut self, l: LockRef, site: LockSite, cost: u64) {
        self.check_not_held(l);
        let t = self.cur.clock;
        if masks_irqs(l) && self.irqs_enabled() {
            self.irqs_masked_from(t);
        }
        let me = self.sched.current;
        let in_task = self.sched.in_task();
        let lock = self.lock_of(l);
        let start = if lock.owner.is_some() && in_task {
            lock.waiters.push_back(me);
            self.sched.suspend(Yield::Block);
            // The holder handed the lock over and queued this task at that time.
            vm_bug_on!(self.lock_of(l).owner != Some(me), "{l:?} not handed over");
            self.cur.clock
        } else {
            lock.owner = Some(me);
            lock.free_at.max(t)
        };
        self.cur.clock = t;
        self.charge(start - t, Cat::LockWait);
        let last = self.lock_of(l).last_cpu;
        let hold = cost + self.line_transfer(last, self.cur.cpu);
        let waited = start - t;
        self.cur.held.push(Held {
            lock: l,
            start,
            waited,
            site,
        });
        self.spend(hold, Cat::ListOps);
    }

    /// What moving a contended line to `cpu` costs when `last` wrote it last (MESIF /
    /// MOESI ownership transfer on a locked read-modify-write): nothing when the line
    /// is already in the core's own L1d (the same CPU, or its SMT sibling, which shares
    /// the core's L1d and L2), `lock_bounce` from another core of the socket (through its
    /// shared L3 and on-die interconnect), `lock_bounce_remote` from another socket
    /// (across the socket link). Not a kernel function: the hardware under every
    /// `spin_lock` and atomic the model charges.
    pub(crate) fn line_transfer(&self, last: Option<u32>, cpu: u32) -> u64 {
        let Some(last) = last else { return 0 };
        let t = &self.topology;
        if t.core_of(last) == t.core_of(cpu) {
            0
        } else if t.socket_of(last) == t.socket_of(cpu) {
            self.costs.lock_bounce
        } else {
            self.costs.lock_bounce_remote
        }
    }

    /// debug_spin_lock_before() (CONFIG_DEBUG_SPINLOCK): SPIN_BUG_ON(lock->owner ==
    /// current, lock, "recursion"): a task does not take a lock it holds.
    fn check_not_held(&self, l: LockRef) {
        vm_bug_on!(
            self.cur.held.iter().any(|h| h.lock == l),
            "{l:?} taken twice"
        );
    }

    /// spin_unlock(): counts the hold and hands the lock to the first task spinning on
    /// it, which goes on at this instant.
    pub fn spin_unlock(&mut self, l: LockRef) {
        let i = self
            .cur
            .held
            .iter()
            .rposition(|h| h.lock == l)
            .expect("unlock of a lock not held");
        let h = self.cur.held.remove(i);
        let (now, cpu) = (self.cur.clock, self.cur.cpu);
        if masks_irqs(l) && self.irqs_enabled() {
            self.irqs_unmasked_at(now);
        }
        let me = self.sched.current;
        let lock = self.lock_of(l);
        // debug_spin_unlock() (CONFIG_DEBUG_SPINLOCK): SPIN_BUG_ON(!raw_spin_is_locked(lock),
        // lock, "already unlocked") and SPIN_BUG_ON(lock->owner != current, lock,
        // "wrong owner").
        vm_bug_on!(
            lock.owner != Some(me),
            "{l:?} unlocked by task {me}, not its holder"
        );
        lock.record(now - h.start, h.waited, h.site, cpu);
        lock.free_at = now;
        lock.owner = lock.waiters.pop_front();
        if let Some(next) = lock.owner {
            self.sched.push(next, now);
        }
    }
}
