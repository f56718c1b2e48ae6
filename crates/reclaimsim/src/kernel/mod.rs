//! The machine's kernel state: frames, nodes, memcgs, lruvecs, address spaces, files,
//! swap, per-CPU batches, locks and counters, plus the execution context (which CPU is
//! running, and its virtual clock) that every action charges its cost to.

pub mod batch;
pub mod config;
pub mod control;
pub mod debug;
pub mod fault;
pub mod folio;
pub mod kswapd;
pub mod list;
pub mod lru;
pub mod memcg;
pub mod memcg_stats;
pub mod mm;
pub mod node;
pub mod page_alloc;
pub mod pagecache;
pub mod psi;
pub mod rmap;
pub mod spinlock;
pub mod stats;
pub mod swap;
pub mod swap_io;
pub mod throttle;
pub mod tlb;
pub mod vmpressure;
pub mod vmscan;
pub mod workingset;
pub mod writeback;
pub mod zram;
pub mod zsmalloc;
pub mod zswap;

use crate::kernel::config::{KernelConfig, LruLockKind, PolicyKind, Setup, SwapDevice};
use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{pg, Folio, Link, Pfn, NIL};
use crate::kernel::memcg::{MemcgId, MemcgTree};
use crate::kernel::mm::Mm;
use crate::kernel::node::{default_min_free_kbytes, zone_watermarks, Node};
use crate::kernel::pagecache::File;
use crate::kernel::stats::{Cat, Vm, VmStat, NR_CAT};
use crate::kernel::swap::Swap;
use crate::sim::cost::CostTable;
use crate::sim::lock::{Lock, LockRef};
use crate::sim::sched::{Sched, Yield};

/// One lruvec: the LRU state of one memcg on one node (struct lruvec). The lists
/// themselves belong to the policy; here are the sizes and the classic balancing state.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    pub memcg: MemcgId,
    pub node: u16,
    /// Pages per classic list (NR_LRU_BASE + lru); under MGLRU the compat counters
    /// (the two youngest generations count as active).
    pub nr: [u64; 5],
    /// Cost model for anon/file balancing (lru_note_cost).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Classic workingset clock (nonresident_age).
    pub nonresident_age: u64,
    /// Snapshot of workingset_activate[] at the end of the last reclaim cycle.
    pub refaults: [u64; 2],
    /// WORKINGSET_ACTIVATE_{ANON,FILE} of this lruvec alone.
    pub workingset_activate: [u64; 2],
    /// LRUVEC_CONGESTED: every dirty folio reclaim met here was already under writeback
    /// for reclaim (set by kswapd on the root lruvec, by cgroup reclaim on its target's).
    pub congested: bool,
}

/// Per-CPU folio batches (struct cpu_fbatches).
#[derive(Clone, Debug, Default)]
pub struct CpuBatches {
    pub lru_add: Vec<Pfn>,
    pub move_tail: Vec<Pfn>,
    pub activate: Vec<Pfn>,
    /// Folios a flush of these batches has taken out and not yet moved (5.11+: PG_lru
    /// already test-and-cleared, the folio still on its list) while it waits for a lock.
    pub in_hand: Vec<Pfn>,
}

/// Who is running now: the task's CPU and virtual clock.
#[derive(Clone, Debug, Default)]
pub struct Exec {
    pub clock: u64,
    pub cpu: u32,
    pub kswapd: bool,
    /// The mm of the running task, if it has one (an OOM kill of it ends its step).
    pub mm: Option<u32>,
    /// The nodes the running task may allocate from (its MPOL_BIND nodemask or
    /// cpuset.mems), a bit per node; 0 for no binding (every node).
    pub mems: u64,
    /// The spinlocks held, innermost last.
    pub held: Vec<crate::sim::lock::Held>,
    /// When this task last issued a `prefetchw` of the next folio of an LRU scan
    /// (`vmscan::lru_scan_touch`).
    pub prefetch_at: u64,
    /// The TLB flushes its unmaps deferred (current->tlb_ubc).
    pub tlb_ubc: tlb::TlbBatch,
}

impl Exec {
    /// The context of a task starting a step at `clock` on `cpu`.
    pub fn new(clock: u64, cpu: u32, kswapd: bool, mm: Option<u32>) -> Self {
        Exec {
            clock,
            cpu,
            kswapd,
            mm,
            mems: 0,
            held: Vec::new(),
            prefetch_at: 0,
            tlb_ubc: Default::default(),
        }
    }
}

/// An OOM kill, as the engine reports it.
#[derive(Clone, Debug)]
pub struct OomKillEvent {
    pub time_ns: u64,
    /// None for a global OOM, else the memcg whose limit was hit.
    pub scope: Option<MemcgId>,
    pub victim_mm: u32,
    /// How long the task that called the OOM killer had been reclaiming for the charge
    /// or allocation that failed (`fault::out_of_memory`'s `stalled_from`); None when
    /// kswapd called it (MGLRU's min_ttl_ms).
    pub stall_ns: Option<u64>,
}

/// The kernel's state. Not `Unpin` (the marker below): the paths of a task suspended at a
/// sync point keep `&mut Kernel` while other tasks change it, so such references must not
/// carry the noalias promise that lets the compiler cache kernel state across the switch.
pub struct Kernel {
    /// The run queue in virtual time and the running task.
    pub sched: Sched,
    _pin: std::marker::PhantomPinned,
    pub cfg: KernelConfig,
    pub costs: CostTable,
    pub lru_gen_enabled: bool,
    /// The kernel's side of a plugin policy (`lru::plugin::Tracking`), only when the
    /// scenario runs one.
    pub plugin: Option<Box<crate::kernel::lru::plugin::Tracking>>,
    pub folios: Vec<Folio>,
    /// Each frame's list links (beside the arena: see `Link`).
    pub links: Vec<Link>,
    /// Swap slot of each swap-cache frame.
    pub folio_swap: Vec<u32>,
    pub nodes: Vec<Node>,
    /// Every node's frames when all nodes have the same number (`node_of` divides by
    /// it), 0 when they differ (`node_of` searches).
    node_span: Pfn,
    pub memcgs: MemcgTree,
    pub lruvecs: Vec<Lruvec>,
    pub mms: Vec<Mm>,
    pub files: Vec<File>,
    pub swap: Option<Swap>,
    pub batches: Vec<CpuBatches>,
    /// Per CPU and node (cpu * nodes + node): the zone's per-CPU free page list.
    pub pcp: Vec<page_alloc::Pcp>,
    /// pcpu_drain_mutex: whether a drain_all_pages() is under way (`LockRef::PcpDrain`).
    pub pcp_drain: crate::sim::lock::Lock,
    /// Per CPU: the swap slots cache.
    pub swap_slots: Vec<crate::kernel::swap::SwapSlotsCache>,
    /// Per CPU: its NUMA node (`cpu_to_node`), where its allocations go first.
    pub cpu_node: Vec<u16>,
    /// The machine's sockets, cores, SMT siblings and nodes.
    pub topology: crate::sim::topology::Topology,
    pub locks: Vec<Lock>,
    pub vm: VmStat,
    pub cur: Exec,
    /// Each task's virtual CPU time by category (indexed by the scheduler's task id,
    /// `sched.current`, which the engine sets before it charges a task's first work),
    /// outside and inside a memory stall as PSI counts one
    /// (psi_memstall_enter: reclaim, a refault's read, a throttle); sized by the engine,
    /// empty when nothing runs in tasks.
    pub profiles: Vec<[[u64; NR_CAT]; 2]>,
    /// All CPU time spent by tasks (for lock spin shares).
    pub cpu_time: u64,
    pub oom_kills: Vec<OomKillEvent>,
    /// Dirty and writeback page-cache state, the flusher and pending I/O completions.
    pub wb: crate::kernel::writeback::Writeback,
    /// Who is taking the next lru lock (for the per-site lock statistics); reset to
    /// `Other` at each unlock.
    pub lock_site: crate::sim::lock::LockSite,
    /// Time spent in each try_to_free_pages() call (direct reclaim's allocation stall).
    pub alloc_stall: crate::kernel::stats::Histogram,
    /// Per memcg and cause, the reclaim stalls of its tasks (`record_stall`), made on
    /// the first stall.
    pub memcg_stalls: std::collections::BTreeMap<
        (MemcgId, crate::kernel::stats::StallKind),
        crate::kernel::stats::Histogram,
    >,
    /// Pressure stall information for memory, per memcg and system-wide.
    pub psi: psi::Psi,
    /// Per CPU: the mm of the task it runs (its place in mm_cpumask for TLB flushes;
    /// None for a kernel thread or an idle CPU), as the engine's scheduler sets it.
    pub cpu_mm: Vec<Option<u32>>,
    /// Per CPU: flush IPIs' handler time that the task it runs has yet to pay
    /// (`tlb::try_to_unmap_flush`).
    pub irq_pending: Vec<u64>,
    /// Per CPU: when its pending IPI was sent and when its task last had interrupts
    /// masked (`tlb::IrqWindow`).
    pub irq_window: Vec<tlb::IrqWindow>,
    /// Per CPU, the senders spinning until it unmasks interrupts and runs their flush
    /// (`tlb::wait_for_unmask`).
    pub irq_waiters: Vec<Vec<usize>>,
    /// The memcg stats' per-CPU update counts, updated trees and flush lock
    /// (`memcg_stats`).
    pub stats_flush: memcg_stats::StatsFlush,
    /// Memory pressure's per-memcg counters and the work items queued per CPU
    /// (`vmpressure`).
    pub vmpressure: vmpressure::Vmpressure,
}

/// One empty lruvec per memcg and node, memcg-major (`Kernel::lruvec`'s index).
fn empty_lruvecs(nr_memcgs: usize, nr_nodes: usize) -> Vec<Lruvec> {
    (0..nr_memcgs * nr_nodes)
        .map(|i| Lruvec {
            memcg: (i / nr_nodes) as MemcgId,
            node: (i % nr_nodes) as u16,
            ..Default::default()
        })
        .collect()
}

/// Each node's frames: `s.node_pages`, or `memory_pages` split evenly over the
/// topology's nodes (the remainder left out).
fn node_sizes(s: &Setup) -> Vec<u64> {
    if !s.node_pages.is_empty() {
        return s.node_pages.clone();
    }
    let nr_nodes = s.topology.nodes.max(1) as u64;
    vec![s.memory_pages / nr_nodes; nr_nodes as usize]
}

/// The nodes of `sizes` frames each, one after the other, with their frames (all free)
/// and links, and the frames per node when all are of one size (0 when not).
fn build_nodes(sizes: &[u64]) -> (Vec<Node>, Vec<Folio>, Vec<Link>, Pfn) {
    let nr_frames = sizes.iter().sum::<u64>() as usize;
    let mut folios = vec![Folio::default(); nr_frames];
    let mut links = vec![Link::NONE; nr_frames];
    // The watermarks (and the per-CPU lists' high) are set by setup_per_zone_wmarks,
    // as at boot.
    let mut start = 0;
    let nodes: Vec<Node> = (sizes.iter())
        .map(|&pages| {
            start += pages;
            Node::new(
                (start - pages) as Pfn,
                pages,
                [0; 3],
                &mut links,
                &mut folios,
            )
        })
        .collect();
    let node_span = match sizes.iter().all(|&p| p == sizes[0]) {
        true => sizes[0] as Pfn,
        false => 0,
    };
    (nodes, folios, links, node_span)
}

/// The swap device of `s`, with zswap in front of it when configured (sized for
/// `memcgs` memcgs).
fn new_swap(s: &Setup, memcgs: usize) -> Option<Swap> {
    let (device, pages) = s.swap?;
    let mut sw = Swap::new(device, pages);
    sw.zswap = (s.zswap.as_ref()).map(|&c| Box::new(zswap::Zswap::new(c, sw.slots.len(), memcgs)));
    if device == SwapDevice::Zram {
        sw.zram = Some(Box::new(zram::Zram::new(s.zram, sw.slots.len(), &s.costs)));
    }
    if device == SwapDevice::Ssd {
        let profile = s.ssd_profile.unwrap_or_default();
        let cluster_ra = !s.kernel.vma_ra_enabled && s.kernel.page_cluster > 0;
        let ssd = swap_io::Ssd::new(profile, &s.costs, sw.slots.len(), cluster_ra);
        sw.ssd = Some(Box::new(ssd));
    }
    Some(sw)
}

impl Kernel {
    /// Builds the machine of a scenario: frames, nodes with watermarks, the memcg tree
    /// and its lruvecs, swap, CPUs. Workload address spaces and files come later.
    pub fn new(s: &Setup) -> Kernel {
        let (nodes, folios, links, node_span) = build_nodes(&node_sizes(s));
        let nr_frames = folios.len();
        let memcgs = MemcgTree::with_memcgs(&s.memcgs);
        let memcgs_len = memcgs.cgs.len();
        let nr_lruvecs = memcgs.cgs.len() * nodes.len();
        let lruvecs = empty_lruvecs(memcgs.cgs.len(), nodes.len());
        let nr_locks = match s.kernel.lru_lock {
            LruLockKind::Node => nodes.len(),
            LruLockKind::Lruvec | LruLockKind::LruvecV16 => nr_lruvecs,
        };
        let cpus = s.topology.nr_cpus().max(1) as usize;
        let cpu_node: Vec<u16> = (0..cpus as u32)
            .map(|c| s.topology.node_of(c) as u16)
            .collect();
        let pcp = page_alloc::pcp_lists(&nodes, &cpu_node);
        let mut k = Kernel {
            sched: Sched::default(),
            _pin: std::marker::PhantomPinned,
            cfg: s.kernel.clone(),
            costs: s.costs.clone(),
            lru_gen_enabled: s.kernel.policy == PolicyKind::Mglru,
            plugin: None,
            folios,
            links,
            folio_swap: vec![NIL; nr_frames],
            nodes,
            node_span,
            psi: psi::Psi::new(&memcgs, cpus),
            memcgs,
            lruvecs,
            mms: Vec::new(),
            files: Vec::new(),
            swap: new_swap(s, memcgs_len),
            batches: vec![CpuBatches::default(); cpus],
            pcp,
            pcp_drain: Default::default(),
            swap_slots: vec![Default::default(); cpus],
            cpu_node,
            topology: s.topology.clone(),
            locks: vec![Lock::default(); nr_locks],
            vm: VmStat::default(),
            cur: Exec::default(),
            profiles: Vec::new(),
            cpu_time: 0,
            oom_kills: Vec::new(),
            wb: crate::kernel::writeback::Writeback::new(&s.kernel, memcgs_len),
            lock_site: Default::default(),
            alloc_stall: Default::default(),
            memcg_stalls: Default::default(),
            cpu_mm: vec![None; cpus],
            irq_pending: vec![0; cpus],
            irq_window: vec![Default::default(); cpus],
            irq_waiters: vec![Vec::new(); cpus],
            stats_flush: memcg_stats::StatsFlush::new(cpus, memcgs_len),
            vmpressure: Default::default(),
        };
        k.setup_per_zone_wmarks();
        k
    }

    /// Records a reclaim stall of `ns` of `kind` for `memcg`'s tasks.
    pub fn record_stall(&mut self, memcg: MemcgId, kind: crate::kernel::stats::StallKind, ns: u64) {
        self.memcg_stalls
            .entry((memcg, kind))
            .or_default()
            .record(ns);
    }

    /// Charges `ns` of virtual CPU time to the running task, and the flush IPIs its CPU
    /// took since its last charge with interrupts enabled (`tlb`). Inlined at every call
    /// site, as the compiler chose before the little cores' check made it a little larger.
    #[inline(always)]
    pub fn spend(&mut self, ns: u64, cat: Cat) {
        // One load and a branch on the common path: no interrupt pending here.
        let cpu = self.cur.cpu as usize;
        match self.irq_pending.get(cpu) {
            Some(&owed) if owed > 0 && self.irqs_enabled() => self.charge_irq(ns, owed, cat),
            _ => self.charge(ns, cat),
        }
    }

    /// `spend` with `irq` of interrupt handlers owed: both charged as one piece of work
    /// of `cat` (stretched alike by a busy sibling), the profile's share of the
    /// handlers, `Cat::Irq`, in proportion.
    #[cold]
    #[inline(never)]
    fn charge_irq(&mut self, ns: u64, irq: u64, cat: Cat) {
        self.irq_pending[self.cur.cpu as usize] = 0;
        let total = self.stretch(ns + irq, cat);
        let handlers = (u128::from(total) * u128::from(irq) / u128::from(ns + irq)) as u64;
        self.advance(total - handlers, cat);
        self.advance(handlers, Cat::Irq);
    }

    /// `spend` without taking the CPU's pending interrupts: a spin on a lock or a line,
    /// which the interrupts wait out (spin_lock_irq masks them before it spins; an
    /// atomic's stall ends before any is taken).
    #[inline(always)]
    pub fn charge(&mut self, ns: u64, cat: Cat) {
        let ns = self.stretch(ns, cat);
        self.advance(ns, cat);
    }

    /// `ns` of work of `cat` on the running task's CPU now, as long as it takes there.
    #[inline(always)]
    fn stretch(&mut self, ns: u64, cat: Cat) -> u64 {
        (self.sched).smt_stretch(self.cur.cpu, self.cur.clock, ns, cat.smt_class())
    }

    /// Moves the running task's clock on by `ns` of CPU time, counted in the profiles.
    #[inline(always)]
    fn advance(&mut self, ns: u64, cat: Cat) {
        self.cur.clock += ns;
        self.cpu_time += ns;
        let id = self.sched.current;
        if let Some(p) = self.profiles.get_mut(id) {
            p[self.psi.in_memstall(id) as usize][cat as usize] += ns;
        }
    }

    /// Counts an event globally and in the folio's memcg.
    #[inline]
    pub fn count(&mut self, c: Vm, memcg: MemcgId, n: u64) {
        self.vm.add(c, n);
        self.count_memcg(c, memcg, n);
    }

    /// Counts an event in a memcg only (cgroup reclaim does not bump global counters).
    #[inline]
    pub fn count_memcg(&mut self, c: Vm, memcg: MemcgId, n: u64) {
        self.memcgs.cgs[memcg as usize].stat.add(c, n);
        if crate::kernel::stats::kept_per_memcg(c) {
            self.memcg_rstat_updated(memcg, n);
        }
    }

    /// Models setup_per_zone_wmarks() (6.1), as a write to vm.watermark_scale_factor
    /// runs it: each zone's watermarks from min_free_kbytes and the scale factor
    /// (__setup_per_zone_wmarks), then zone_pcp_update() of each zone: the per-CPU
    /// lists' batch and high again, high following the new low watermark. Pages already
    /// on a list stay there until the next free finds it above high.
    pub fn setup_per_zone_wmarks(&mut self) {
        let total: u64 = self.nodes.iter().map(|n| n.zone.managed).sum();
        let mfk = (self.cfg.min_free_kbytes).unwrap_or_else(|| default_min_free_kbytes(total));
        let wsf = self.cfg.watermark_scale_factor;
        for n in &mut self.nodes {
            n.zone.wmark = zone_watermarks(n.zone.managed, total, mfk, wsf);
        }
        let fresh = page_alloc::pcp_lists(&self.nodes, &self.cpu_node);
        for (pcp, new) in self.pcp.iter_mut().zip(fresh) {
            (pcp.high, pcp.batch) = (new.high, new.batch);
        }
    }

    pub fn nr_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// page_to_nid(): the node whose frames hold `pfn`. Nodes of one size (the even
    /// split) take one division; nodes of their own sizes a search of the node starts.
    #[inline]
    pub fn node_of(&self, pfn: Pfn) -> usize {
        if self.node_span != 0 {
            return (pfn / self.node_span) as usize;
        }
        self.nodes.partition_point(|n| n.end_pfn <= pfn)
    }

    /// mem_cgroup_lruvec(memcg, pgdat).
    #[inline]
    pub fn lruvec(&self, memcg: MemcgId, node: usize) -> usize {
        memcg as usize * self.nodes.len() + node
    }

    /// folio_lruvec().
    #[inline]
    pub fn folio_lruvec(&self, pfn: Pfn) -> usize {
        self.lruvec(self.folios[pfn as usize].memcg, self.node_of(pfn))
    }

    /// The lru_lock protecting an lruvec: the node's (<= 5.10) or its own (5.11+).
    #[inline]
    pub fn lruvec_lock_id(&self, lv: usize) -> usize {
        match self.cfg.lru_lock {
            LruLockKind::Node => self.lruvecs[lv].node as usize,
            LruLockKind::Lruvec | LruLockKind::LruvecV16 => lv,
        }
    }

    /// A point where the running task meets the others: if another task is due before
    /// it, it waits its turn, so that what it does next to shared state happens in
    /// virtual-time order. Not a kernel function: the kernel's tasks really run at once.
    #[inline]
    pub fn sync(&mut self) {
        if !self.sched.in_task() {
            return;
        }
        let me = (self.cur.clock, self.sched.current);
        if self.sched.due_before(me.0, me.1) {
            self.sched.push(me.1, me.0);
            self.sched.suspend(Yield::Sync);
        }
    }

    /// Sleeps off the CPU until `until` (schedule_timeout), or until another task wakes
    /// it earlier by queueing it; returns the time it woke.
    pub fn sleep_until(&mut self, until: u64) -> u64 {
        assert!(self.cur.held.is_empty(), "sleeping with a spinlock held");
        let until = until.max(self.cur.clock);
        if self.sched.in_task() {
            self.sched.suspend(Yield::Sleep(until));
        } else {
            self.cur.clock = until;
        }
        self.cur.clock
    }

    /// Sleeps until `until` even when woken before it: io_schedule() waiting for an I/O's
    /// completion or a free request tag, which an early wake-up does not end.
    pub fn sleep_through(&mut self, until: u64) {
        while self.cur.clock < until {
            self.sleep_until(until);
        }
    }

    /// spin_lock_irq(&lruvec->lru_lock), for the site in `lock_site`.
    pub fn lock_lruvec(&mut self, lv: usize) {
        // SPIN_BUG_ON(lock->owner == current, lock, "recursion"), for any lru lock: the
        // model's reclaim holds one lru lock at a time (folio_lruvec_relock_irq switches).
        vm_bug_on!(self.held_lru().is_some(), "lru_lock taken twice");
        let site = std::mem::take(&mut self.lock_site);
        self.spin_lock(LockRef::Lru(self.lruvec_lock_id(lv)), site);
    }

    /// spin_unlock_irq() of the lru lock held.
    pub fn unlock(&mut self) {
        let id = self.held_lru().expect("unlock without an lru lock");
        self.spin_unlock(LockRef::Lru(id));
    }

    /// The lru lock held, if any.
    fn held_lru(&self) -> Option<usize> {
        self.cur.held.iter().find_map(|h| match h.lock {
            LockRef::Lru(id) => Some(id),
            _ => None,
        })
    }

    /// folio_lruvec_relock_irq(): keeps the held lock if it covers `lv`, else switches
    /// (for the same call site).
    pub fn relock_lruvec(&mut self, lv: usize) {
        let id = self.lruvec_lock_id(lv);
        match self.held_lru() {
            Some(h) if h == id => {}
            Some(h) => {
                let site = self
                    .cur
                    .held
                    .iter()
                    .find(|x| x.lock == LockRef::Lru(h))
                    .unwrap()
                    .site;
                self.spin_unlock(LockRef::Lru(h));
                self.spin_lock(LockRef::Lru(id), site);
                self.locks[id].relocks += 1;
            }
            None => self.lock_lruvec(lv),
        }
    }

    /// Whether the lru lock held now (if any) covers `lv`.
    pub fn holds_lock_of(&self, lv: usize) -> bool {
        self.held_lru() == Some(self.lruvec_lock_id(lv))
    }

    /// The 5.11+ protocol of Alex Shi's series: PG_lru is test-and-cleared before the
    /// (per-lruvec) lock is taken, and whoever clears it owns the folio. `lru_lock =
    /// "node"` stands for the whole series being absent (<= 5.10): PG_lru is guarded by
    /// the node lock and tested under it.
    #[inline]
    pub fn lru_clear_before_lock(&self) -> bool {
        self.cfg.lru_lock != LruLockKind::Node
    }

    /// Isolation's claim on a folio found on an LRU list, lruvec lock held
    /// (isolate_lru_folios): 5.11+ `folio_test_clear_lru`; <= 5.10 `__isolate_lru_page`
    /// checked PageLRU under the node lock, then ClearPageLRU. Both are one atomic bit
    /// operation; false means someone else owns the folio.
    pub fn isolate_lru_flag(&mut self, pfn: Pfn) -> bool {
        self.spend(self.costs.lru_flag_atomic, Cat::ListOps);
        let f = &mut self.folios[pfn as usize];
        if self.cfg.lru_lock != LruLockKind::Node {
            f.test_clear(pg::LRU)
        } else if f.test(pg::LRU) {
            f.clear(pg::LRU);
            true
        } else {
            false
        }
    }

    pub fn unlock_if_held(&mut self) {
        if self.held_lru().is_some() {
            self.unlock();
        }
    }

    /// The machine's frames (totalram_pages()).
    pub fn memory_pages(&self) -> u64 {
        self.folios.len() as u64
    }

    /// Free pages over all nodes.
    pub fn free_pages(&self) -> u64 {
        self.nodes.iter().map(|n| n.zone.free).sum()
    }

    /// Models calculate_totalreserve_pages() (6.1): each zone's high watermark plus its
    /// largest lowmem_reserve, summed; the model's zones keep no lowmem_reserve.
    pub fn totalreserve_pages(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| n.zone.wmark[node::WMARK_HIGH])
            .sum()
    }

    /// The machine's LRU list sizes, by `folio::lru` index (inactive and active anon,
    /// inactive and active file): global_node_page_state(NR_LRU_BASE + lru) over nodes.
    pub fn lru_pages(&self) -> [u64; 4] {
        let mut nr = [0; 4];
        for v in &self.lruvecs {
            for (total, n) in nr.iter_mut().zip(&v.nr) {
                *total += n;
            }
        }
        nr
    }

    /// Adjusts a classic list-size counter of the lruvec a folio belongs to.
    #[inline]
    pub fn update_lru_size(&mut self, lv: usize, lru: usize, delta: i64) {
        let n = &mut self.lruvecs[lv].nr[lru];
        *n = n.checked_add_signed(delta).expect("lru size underflow");
        self.memcg_rstat_updated(self.lruvecs[lv].memcg, delta.unsigned_abs());
    }

    /// Host bytes of the model's state: what `bench` divides by the number of frames.
    pub fn host_bytes(&self) -> u64 {
        use std::mem::size_of;
        let mut b = self.folios.capacity() * size_of::<Folio>() + self.folio_swap.capacity() * 4;
        b += self.links.capacity() * size_of::<Link>();
        b += self
            .mms
            .iter()
            .flat_map(|m| &m.vmas)
            .map(|v| v.ptes.capacity() * 4)
            .sum::<usize>();
        b += self
            .files
            .iter()
            .map(|f| f.slots.capacity() * 8 + f.written_bytes())
            .sum::<usize>();
        b += self.swap.as_ref().map_or(0, |s| {
            s.slots.len() * 8
                + s.memcg.len() * 2
                + s.free_bytes()
                + s.zswap.as_ref().map_or(0, |z| z.host_bytes())
                + s.ssd.as_ref().map_or(0, |d| d.host_bytes())
                + s.zram.as_ref().map_or(0, |z| z.host_bytes())
        });
        b += self.lruvecs.len() * size_of::<Lruvec>();
        b += self.plugin.as_ref().map_or(0, |t| t.host_bytes() as usize);
        b as u64
    }

    /// Models mem_cgroup_get_nr_swap_pages() (6.1): the free swap slots (get_nr_swap_pages),
    /// capped by what memory.swap.max leaves `memcg` and each ancestor below the root.
    pub fn nr_swap_pages(&self, memcg: MemcgId) -> u64 {
        let free = self.swap.as_ref().map_or(0, |s| s.nr_free());
        free.min(self.memcgs.swap_margin(memcg))
    }

    /// Models can_reclaim_anon_pages() (6.1) without demotion: swap is usable for this
    /// memcg (mem_cgroup_get_nr_swap_pages() > 0; the root's is the global count).
    pub fn can_swap(&self, memcg: MemcgId) -> bool {
        self.nr_swap_pages(memcg) > 0
    }

    /// Models mem_cgroup_swap_full() (6.1): vm_swap_full() (free swap below half), or
    /// `memcg` or an ancestor uses half its memory.swap.max.
    pub fn swap_full(&self, memcg: MemcgId) -> bool {
        self.swap.as_ref().is_some_and(|s| s.full()) || self.memcgs.swap_half_full(memcg)
    }

    /// Models can_age_anon_pages(): a swap device exists (full or not).
    pub fn can_age_anon(&self) -> bool {
        self.swap.as_ref().is_some_and(|s| s.total() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::sched::{TaskYielder, Yield};
    use corosensei::{Coroutine, CoroutineResult};

    /// 16 MiB, 2 CPUs, one lru_lock per node, no swap, no memcg below the root.
    fn machine() -> Setup {
        let mut s = Setup::small(4096, 2);
        s.kernel.lru_lock = LruLockKind::Node;
        s
    }

    type Body = Box<dyn FnOnce(&mut Kernel)>;

    /// A minimal engine: each body is a task on its own CPU starting at its time; the
    /// earliest task runs, suspending at sync points and lock waits as in the engine.
    /// Returns each task's clock when its body returned.
    fn run_tasks(k: &mut Kernel, tasks: Vec<(u64, Body)>) -> Vec<u64> {
        let kp: *mut Kernel = k;
        let mut execs: Vec<Exec> = (0..tasks.len())
            .map(|i| Exec::new(tasks[i].0, i as u32, false, None))
            .collect();
        let mut coros: Vec<Coroutine<(), Yield, ()>> = Vec::new();
        for (id, (start, body)) in tasks.into_iter().enumerate() {
            k.sched.push(id, start);
            coros.push(Coroutine::new(move |y: &TaskYielder, ()| {
                // SAFETY: the kernel outlives the coroutines; one runs at a time.
                let k = unsafe { &mut *kp };
                k.sched.set_yielder(y);
                body(k);
            }));
        }
        let mut ends = vec![0; coros.len()];
        while let Some((clock, id)) = k.sched.pop() {
            k.cur = std::mem::take(&mut execs[id]);
            k.cur.clock = clock;
            k.sched.current = id;
            let r = coros[id].resume(());
            k.sched.set_yielder(std::ptr::null());
            match r {
                CoroutineResult::Yield(Yield::Sync | Yield::Block) => {}
                CoroutineResult::Return(()) => ends[id] = k.cur.clock,
                other => panic!("unexpected {other:?}"),
            }
            execs[id] = std::mem::take(&mut k.cur);
        }
        ends
    }

    #[test]
    fn a_line_moves_free_between_siblings_and_dearer_across_sockets() {
        // 2 sockets x 2 cores x 2 threads: CPUs 0-3 are the first threads of cores 0-3
        // (cores 0-1 on socket 0), CPUs 4-7 their SMT siblings.
        let mut s = machine();
        s.topology = crate::sim::topology::Topology::new(2, 2, 2, 1);
        s.costs.lock_bounce = 60;
        s.costs.lock_bounce_remote = 125;
        let k = Kernel::new(&s);
        assert_eq!(k.line_transfer(None, 0), 0, "a line nobody wrote yet");
        assert_eq!(k.line_transfer(Some(0), 0), 0, "the same CPU");
        assert_eq!(k.line_transfer(Some(4), 0), 0, "the SMT sibling's L1d");
        assert_eq!(
            k.line_transfer(Some(1), 0),
            60,
            "another core of the socket"
        );
        assert_eq!(k.line_transfer(Some(5), 0), 60, "that core's sibling");
        assert_eq!(k.line_transfer(Some(2), 0), 125, "the other socket");
        assert_eq!(
            k.line_transfer(Some(0), 7),
            125,
            "the other socket's sibling"
        );
    }

    #[test]
    fn a_lock_waiter_spins_for_the_holders_remaining_hold() {
        let mut k = Kernel::new(&machine());
        let (acquire, bounce) = (k.costs.lock_acquire, k.costs.lock_bounce);
        // A started first but works alone until 1000 before it asks for the lock; B asks
        // at 500 and holds it for 1000 ns, so A waits for B although A started earlier.
        let a: Body = Box::new(|k| {
            k.spend(1000, Cat::Other);
            k.lock_lruvec(0);
            k.unlock();
        });
        let b: Body = Box::new(|k| {
            k.lock_lruvec(0);
            k.spend(1000, Cat::Other);
            k.unlock();
        });
        let ends = run_tasks(&mut k, vec![(0, a), (500, b)]);
        let b_release = 500 + acquire + 1000;
        assert_eq!(ends[1], b_release);
        let l = &k.locks[0];
        assert_eq!((l.acquisitions, l.contended), (2, 1));
        assert_eq!(
            l.wait_ns,
            b_release - 1000,
            "A spins for B's remaining hold"
        );
        assert_eq!(
            ends[0],
            b_release + acquire + bounce,
            "A's hold starts at B's release"
        );
    }

    #[test]
    fn shared_state_changes_in_virtual_time_order() {
        let mut k = Kernel::new(&machine());
        // Both count an event at a sync point: A at 900, B at 400. B's comes first,
        // although A's task was resumed first.
        let a: Body = Box::new(|k| {
            k.spend(900, Cat::Other);
            k.sync();
            let first = k.vm.get(Vm::Pgfault) == 0;
            k.vm.add(Vm::Pgfault, 1);
            assert!(!first, "B's event at 400 came before A's at 900");
        });
        let b: Body = Box::new(|k| {
            k.spend(400, Cat::Other);
            k.sync();
            assert_eq!(k.vm.get(Vm::Pgfault), 0);
            k.vm.add(Vm::Pgfault, 1);
        });
        let ends = run_tasks(&mut k, vec![(0, a), (0, b)]);
        assert_eq!(ends, vec![900, 400]);
        assert_eq!(k.vm.get(Vm::Pgfault), 2);
    }

    #[test]
    fn a_reference_reaches_a_reclaimer_only_at_its_virtual_time() {
        use crate::kernel::lru::classic::Classic;
        use crate::kernel::mm::{Mm, VmaKind};
        use crate::kernel::{fault, rmap};
        let mut k = Kernel::new(&machine());
        let mut mm = Mm::default();
        let v = mm.add_vma(1, VmaKind::Anon);
        let vpn = mm.vmas[v].start;
        k.mms.push(mm);
        let mut p = Classic::new(&k);
        fault::handle_mm_fault(&mut k, &mut p, 0, vpn, true).expect("memory for one page");
        let pfn = k.mms[0].vmas[v].ptes[0].pfn().expect("faulted in");
        k.mms[0].vmas[v].ptes[0].mkold();
        // A touches the page at 10 us. B, a reclaimer, checks its references from 0.5 us
        // and from 20 us: only the second sees the touch, although A's task ran first.
        let a: Body = Box::new(move |k| {
            k.spend(10_000, Cat::Other);
            let mut p = Classic::new(k);
            fault::access_page(k, &mut p, 0, v, 0, false).expect("a hit");
        });
        let b: Body = Box::new(move |k| {
            k.spend(500, Cat::Other);
            assert_eq!(rmap::folio_referenced(k, pfn, None, None), 0, "seen before");
            k.spend(20_000 - k.cur.clock, Cat::Other);
            assert_eq!(
                rmap::folio_referenced(k, pfn, None, None),
                1,
                "missed after"
            );
        });
        run_tasks(&mut k, vec![(0, a), (0, b)]);
    }

    /// debug_spin_lock_before()'s SPIN_BUG_ON(lock->owner == current, "recursion").
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "taken twice")]
    fn taking_a_held_lock_again_fails() {
        let mut k = Kernel::new(&machine());
        k.spin_lock(LockRef::Zone(0), crate::sim::lock::LockSite::default());
        k.spin_lock(LockRef::Zone(0), crate::sim::lock::LockSite::default());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lru_lock taken twice")]
    fn taking_a_second_lru_lock_fails() {
        let mut k = Kernel::new(&machine());
        k.lock_lruvec(0);
        k.lock_lruvec(0);
    }

    /// debug_spin_unlock()'s SPIN_BUG_ON(lock->owner != current, "wrong owner"): the
    /// lock's owner is another task than the one unlocking it.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not its holder")]
    fn unlocking_a_lock_another_task_owns_fails() {
        let mut k = Kernel::new(&machine());
        k.spin_lock(LockRef::Zone(0), crate::sim::lock::LockSite::default());
        k.spin_unlock(LockRef::Zone(0));
        k.spin_lock(LockRef::Zone(0), crate::sim::lock::LockSite::default());
        k.nodes[0].lock.owner = Some(k.sched.current + 1);
        k.spin_unlock(LockRef::Zone(0));
    }

    /// uncharge_folio() of a frame already freed (and uncharged): the second free fails.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "freed twice")]
    fn freeing_a_frame_twice_fails() {
        let mut k = Kernel::new(&machine());
        let pfn = k.take_free_page(0).unwrap();
        k.memcgs.charge(crate::kernel::memcg::ROOT, 1);
        k.free_folio(pfn);
        k.free_folio(pfn);
    }

    #[test]
    fn an_aging_round_without_walks_completes_once() {
        use crate::kernel::lru::mglru::Mglru;
        let mut cfg = machine();
        cfg.kernel.lru_gen_walks = false;
        let mut k = Kernel::new(&cfg);
        let mut m = Box::new(Mglru::new(&k));
        let max_seq = m.lrugen[0].max_seq;
        let mp: *mut Mglru = &mut *m;
        // A and B both try to complete the round for max_seq; A checks first (at 100)
        // but B reaches mm_list->lock first (at 50): only B's round may age.
        let aged = |at: u64| -> Body {
            Box::new(move |k| {
                k.spend(at, Cat::Other);
                // SAFETY: `m` outlives the tasks; one task runs at a time.
                let m = unsafe { &mut *mp };
                assert!(m.try_to_inc_max_seq(k, 0, max_seq, true, false, false));
            })
        };
        run_tasks(&mut k, vec![(0, aged(100)), (0, aged(50))]);
        assert_eq!(m.lrugen[0].max_seq, max_seq + 1, "one generation added");
        assert_eq!(k.vm.get(Vm::LruGenAging), 1, "one inc_max_seq");
    }
}
