//! Event counters named as /proc/vmstat and memory.stat name them (docs/model/statistics.md),
//! latency histograms, and the kswapd CPU profile.

use crate::kernel::memcg::MemcgId;
use indexmap::IndexMap;

macro_rules! counters {
    ($($v:ident => $n:literal),* $(,)?) => {
        /// A vmstat event counter.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Vm { $($v),* }
        pub const NR_VM: usize = [$($n),*].len();
        pub const VM_NAMES: [&str; NR_VM] = [$($n),*];
    };
}

counters! {
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    Pgrefill => "pgrefill",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgrotated => "pgrotated",
    PgskipNormal => "pgskip_normal",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    Pgpgin => "pgpgin",
    Pgpgout => "pgpgout",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    Pgalloc => "pgalloc_normal",
    Pgfree => "pgfree",
    Pageoutrun => "pageoutrun",
    AllocstallNormal => "allocstall_normal",
    PgscanDirectThrottle => "pgscan_direct_throttle",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    OomKill => "oom_kill",
    NrDirtied => "nr_dirtied",
    NrWritten => "nr_written",
    NrThrottledWritten => "nr_throttled_written",
    // zswap (vmstat from 5.19; written-back pages are 6.8's zswpwb, debugfs
    // written_back_pages in 6.1). The results show them only when zswap is configured.
    Zswpin => "zswpin",
    Zswpout => "zswpout",
    Zswpwb => "zswpwb",
    // Swap readahead (6.1's vmstat names). The results show them only when the swap
    // device is an SSD, the one device that reads ahead.
    SwapRa => "swap_ra",
    SwapRaHit => "swap_ra_hit",
    // NUMA placement (zone_statistics(), CONFIG_NUMA): a page from the allocating
    // CPU's node, or from another node after the local one was below its watermark.
    // The results show them only on machines of more than one node.
    NumaHit => "numa_hit",
    NumaMiss => "numa_miss",
    // Remote TLB flushes (x86's CONFIG_DEBUG_TLBFLUSH counters): reclaim's deferred
    // flushes that sent IPIs, and the IPIs (kernel/tlb.rs).
    NrTlbRemoteFlush => "nr_tlb_remote_flush",
    NrTlbRemoteFlushReceived => "nr_tlb_remote_flush_received",
    // The model's own counts and sleep times of the throttles (kernel/throttle.rs).
    DirtyThrottle => "balance_dirty_pages_pause",
    DirtyThrottleNs => "balance_dirty_pages_pause_ns",
    ThrottleWriteback => "throttle_writeback",
    ThrottleWritebackNs => "throttle_writeback_ns",
    ThrottleIsolated => "throttle_isolated",
    ThrottleIsolatedNs => "throttle_isolated_ns",
    ThrottleNoprogress => "throttle_noprogress",
    ThrottleNoprogressNs => "throttle_noprogress_ns",
    ThrottleCongested => "throttle_congested",
    ThrottleCongestedNs => "throttle_congested_ns",
    ThrottlePfmemallocNs => "throttle_pfmemalloc_ns",
    ThrottleMemcgHigh => "throttle_memcg_high",
    ThrottleMemcgHighNs => "throttle_memcg_high_ns",
    ThrottleAging => "throttle_aging",
    ThrottleAgingNs => "throttle_aging_ns",
    // The model's own MGLRU counters (per memcg too): generations made by inc_max_seq,
    // lru_gen_age_node passes skipped by memcgs_need_aging (6.1), and scans stopped
    // early by should_abort_scan (6.1) or by the reclaim target (6.3 shrink_many), and
    // memcgs left after one eviction that took anon by v11's memcgs_avoid_swapping.
    LruGenAging => "lru_gen_aging",
    LruGenAgingSkipped => "lru_gen_aging_skipped",
    LruGenAbortScan => "lru_gen_abort_scan",
    LruGenAvoidSwapping => "lru_gen_avoid_swapping",
    // Call-function interrupts that reclaim's remote flushes sent (/proc/interrupts'
    // CAL for them): nr_tlb_remote_flush_received less those queued behind one.
    TlbFlushIpis => "tlb_flush_ipis",
    // Flush requests whose CPU had interrupts masked when they went out, and the time
    // their senders spun in csd_lock_wait beyond the round trip until it ran them.
    TlbFlushMasked => "tlb_flush_masked",
    TlbFlushMaskedWaitNs => "tlb_flush_masked_wait_ns",
    // memcg stats flushes (kernel/memcg_stats.rs): those made, the calls that found
    // another flusher at work, the flushers' time with interrupts masked, and the
    // flushes made by a refault (5.15-rc3 to 5.18-rc3's workingset_refault).
    MemcgFlush => "memcg_stats_flush",
    MemcgFlushBusy => "memcg_stats_flush_busy",
    MemcgFlushNs => "memcg_stats_flush_ns",
    MemcgFlushRefault => "memcg_stats_flush_refault",
    // drain_all_pages() (kernel/page_alloc.rs): the drains made, and the calls that found
    // another drain under way (pcpu_drain_mutex taken) and returned without draining.
    DrainAllPages => "drain_all_pages",
    DrainAllPagesBusy => "drain_all_pages_busy",
    // vmpressure's work items run by the kworkers (kernel/vmpressure.rs): one per 512
    // pages a memcg tree's reclaim scanned, each a preemption of the reclaiming CPU.
    VmpressureWork => "vmpressure_work",
}

/// The counters before this index are kernel counters (/proc/vmstat's names); from it on
/// they are the model's own (the throttles, balance_dirty_pages' pauses, MGLRU's
/// lru_gen_*), which the results keep apart from vmstat and memory.stat.
pub const NR_KERNEL_VM: usize = Vm::DirtyThrottle as usize;

/// memory.stat's workingset entries, in the order of 6.1's memory_stats[] (where they
/// follow the LRU sizes; workingset_nodereclaim is not modelled).
pub const MEMCG_WORKINGSET: [Vm; 6] = [
    Vm::WorkingsetRefaultAnon,
    Vm::WorkingsetRefaultFile,
    Vm::WorkingsetActivateAnon,
    Vm::WorkingsetActivateFile,
    Vm::WorkingsetRestoreAnon,
    Vm::WorkingsetRestoreFile,
];

/// memory.stat's events after its `pgscan` and `pgsteal` sums, in the order of 6.1's
/// memcg_vm_event_stat[] (pgpgin and pgpgout, which 6.1 keeps there, it does not print;
/// pglazyfree, pglazyfreed, zswpin, zswpout and the THP events are not modelled).
pub const MEMCG_VM_EVENTS: [Vm; 9] = [
    Vm::PgscanKswapd,
    Vm::PgscanDirect,
    Vm::PgstealKswapd,
    Vm::PgstealDirect,
    Vm::Pgfault,
    Vm::Pgmajfault,
    Vm::Pgrefill,
    Vm::Pgactivate,
    Vm::Pgdeactivate,
];

/// Kernel counters 6.1 keeps only globally (count_vm_event, or node state that
/// memory.stat does not print) that the model also attributes to the memcg it counted
/// them for; the results show that attribution outside memory.stat.
pub const MEMCG_GLOBAL_ONLY: [Vm; 9] = [
    Vm::Pswpin,
    Vm::Pswpout,
    Vm::PgscanAnon,
    Vm::PgscanFile,
    Vm::PgstealAnon,
    Vm::PgstealFile,
    Vm::Pgrotated,
    Vm::NrDirtied,
    Vm::NrWritten,
];

/// Per counter: whether 6.1 keeps it per memcg, so that counting it is a memcg stat
/// update (memcg_rstat_updated): the kernel's counters but those it keeps only globally,
/// not the model's own. A table, as `Kernel::count_memcg` asks at every event.
const KEPT_PER_MEMCG: [bool; NR_VM] = {
    let mut kept = [false; NR_VM];
    let mut i = 0;
    while i < NR_KERNEL_VM {
        kept[i] = true;
        i += 1;
    }
    let mut j = 0;
    while j < MEMCG_GLOBAL_ONLY.len() {
        kept[MEMCG_GLOBAL_ONLY[j] as usize] = false;
        j += 1;
    }
    kept
};

/// Whether 6.1 keeps counter `c` per memcg (`KEPT_PER_MEMCG`).
#[inline]
pub fn kept_per_memcg(c: Vm) -> bool {
    KEPT_PER_MEMCG[c as usize]
}

#[derive(Clone, Debug)]
pub struct VmStat(pub [u64; NR_VM]);

impl Default for VmStat {
    fn default() -> Self {
        VmStat([0; NR_VM])
    }
}

impl VmStat {
    #[inline]
    pub fn add(&mut self, c: Vm, n: u64) {
        self.0[c as usize] += n;
    }
    pub fn get(&self, c: Vm) -> u64 {
        self.0[c as usize]
    }
}

/// Where virtual CPU time goes, for the perf-like profiles of kswapd and of each task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Cat {
    /// folio_referenced's rmap walk (its page_vma_mapped_walk and young-bit clears):
    /// the work look-around can save.
    RmapWalk,
    /// try_to_unmap's rmap walk and PTE clears: what every evicted mapped folio needs.
    Unmap,
    /// Sequential PTE scans: look-around and MGLRU page-table walks.
    PteScan,
    /// LRU list manipulation: isolation, putback, sorting, batch moves.
    ListOps,
    /// Spinning on a contended lock.
    LockWait,
    /// zram compression and decompression.
    Compression,
    /// Device transfers, page zeroing and copying.
    Io,
    /// The rest of the kernel's work: fault entry, allocation, charging, page-cache
    /// lookups, system calls' fixed costs.
    Other,
    /// A workload's own work per operation, in user space and in its system calls'
    /// fixed costs (fio's per-I/O engine cost, memcached's request, a client's).
    Work,
    /// Flush IPIs handled (flush_tlb_func and the interrupt around it,
    /// `tlb::try_to_unmap_flush`). Only a profile's attribution: the time is charged
    /// together with the work the interrupt came in (`Kernel::spend`).
    Irq,
}

impl Cat {
    /// How the work of each category shares a core with a busy SMT sibling: the
    /// rmap walks, PTE scans and unmaps are chains of cache misses on page tables and
    /// struct pages (memory-latency-bound); list manipulation, compression, copies and
    /// zeroing, fault entry and the workloads' own work retire instructions
    /// (compute-bound; the DRAM misses of cold LRU scans are charged here too, a
    /// pessimistic choice); lock spinning is waiting.
    pub fn smt_class(self) -> crate::sim::sched::SmtClass {
        use crate::sim::sched::SmtClass;
        match self {
            Cat::RmapWalk | Cat::Unmap | Cat::PteScan => SmtClass::Memory,
            Cat::ListOps | Cat::Compression | Cat::Io | Cat::Other | Cat::Work | Cat::Irq => {
                SmtClass::Compute
            }
            Cat::LockWait => SmtClass::Wait,
        }
    }
}

pub const NR_CAT: usize = 10;
pub const CAT_NAMES: [&str; NR_CAT] = [
    "rmap_walk",
    "unmap",
    "pte_scan",
    "list_ops",
    "lock_wait",
    "compression",
    "io",
    "other",
    "work",
    "irq",
];

/// Why a task stalled in reclaim, for the per-memcg stall histograms: global direct
/// reclaim in the page allocator (try_to_free_pages), reclaim at memory.max in the charge
/// (try_charge_memcg's loop), memory.high's reclaim and penalty
/// (mem_cgroup_handle_over_high), or a write to the memcg's memory.reclaim
/// (memory_reclaim: the writer's time, proactive reclaim, not a stall of its tasks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StallKind {
    Direct,
    Max,
    High,
    Proactive,
}

impl StallKind {
    pub const ALL: [StallKind; 4] = [
        StallKind::Direct,
        StallKind::Max,
        StallKind::High,
        StallKind::Proactive,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StallKind::Direct => "direct",
            StallKind::Max => "max",
            StallKind::High => "high",
            StallKind::Proactive => "proactive",
        }
    }
}

/// A latency histogram with ~1.5% relative precision: 64 sub-buckets per power of two.
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    max: u64,
}

const SUB: u32 = 6;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; (64 - SUB as usize + 1) << SUB],
            count: 0,
            max: 0,
        }
    }
}

impl Histogram {
    fn index(v: u64) -> usize {
        if v < (1 << SUB) {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros() - SUB;
        (((exp + 1) << SUB) | ((v >> exp) as u32 & ((1 << SUB) - 1))) as usize
    }

    fn lower_bound(i: usize) -> u64 {
        let (e, m) = ((i >> SUB) as u32, (i & ((1 << SUB) - 1)) as u64);
        if e == 0 {
            m
        } else {
            ((1 << SUB) | m) << (e - 1)
        }
    }

    pub fn record(&mut self, v: u64) {
        self.buckets[Self::index(v)] += 1;
        self.count += 1;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile q (0..=1): the lower bound of its bucket, capped at max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Self::lower_bound(i).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_within_two_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v);
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 50_000.0 - 1.0).abs() < 0.02, "{p50}");
        assert!((p99 / 99_000.0 - 1.0).abs() < 0.02, "{p99}");
        assert_eq!(h.max(), 100_000);
        assert_eq!(h.quantile(0.0), 1);
    }

    #[test]
    fn names_match_counters() {
        assert_eq!(VM_NAMES[Vm::Pswpout as usize], "pswpout");
        assert_eq!(VM_NAMES[Vm::OomKill as usize], "oom_kill");
    }
}

/// Memcg `m`'s memory.stat as 6.1's memory_stat_format() prints it, the keys the model
/// keeps, in that order: hierarchical (as cgroup v2 shows it), sizes in bytes.
pub fn memory_stat(k: &crate::kernel::Kernel, m: MemcgId) -> IndexMap<String, u64> {
    let sub = k.memcgs.iter(m);
    let count = |c: Vm| -> u64 {
        (sub.iter())
            .map(|&x| k.memcgs.cgs[x as usize].stat.0[c as usize])
            .sum()
    };
    let named = |c: Vm| (VM_NAMES[c as usize].to_string(), count(c));
    let mut stat = IndexMap::new();
    let gauge = |v: &[u64]| sub.iter().map(|&c| v[c as usize]).sum::<u64>() * 4096;
    let zswap = k.swap.as_ref().and_then(|s| s.zswap.as_ref());
    if let Some(z) = zswap {
        // 6.1's memory_stats[] has them just before file_mapped.
        let sum = |v: &[u64]| sub.iter().map(|&c| v[c as usize]).sum::<u64>();
        stat.insert("zswap".into(), sum(&z.memcg_bytes));
        stat.insert("zswapped".into(), sum(&z.memcg_pages) * 4096);
    }
    stat.insert("file_dirty".into(), gauge(&k.wb.memcg_dirty));
    stat.insert("file_writeback".into(), gauge(&k.wb.memcg_writeback));
    for (i, name) in crate::kernel::folio::lru::NAMES.iter().enumerate() {
        let pages: u64 = (sub.iter())
            .flat_map(|&c| (0..k.nr_nodes()).map(move |n| (c, n)))
            .map(|(c, n)| k.lruvecs[k.lruvec(c, n)].nr[i])
            .sum();
        stat.insert(name.to_string(), pages * 4096);
    }
    stat.extend(MEMCG_WORKINGSET.map(named));
    // 6.1's memory_stat_format() sums kswapd's and direct reclaim's.
    stat.insert(
        "pgscan".into(),
        count(Vm::PgscanKswapd) + count(Vm::PgscanDirect),
    );
    stat.insert(
        "pgsteal".into(),
        count(Vm::PgstealKswapd) + count(Vm::PgstealDirect),
    );
    stat.extend(MEMCG_VM_EVENTS.map(named));
    if zswap.is_some() {
        // memcg_vm_event_stat[]'s last entries the model keeps.
        stat.extend([Vm::Zswpin, Vm::Zswpout].map(named));
    }
    stat
}

/// memory.events over the memcgs `sub`, in 6.1's order: memcg_memory_event() counts an
/// event in memory.events.local of its memcg and in memory.events of the memcg and each
/// ancestor, so a memcg's memory.events sums its subtree's local counts (the root, which
/// has no such file in 6.1, shows the whole machine's).
pub fn memory_events(k: &crate::kernel::Kernel, sub: &[MemcgId]) -> IndexMap<String, u64> {
    let sum = |f: fn(&crate::kernel::memcg::Events) -> u64| -> u64 {
        (sub.iter())
            .map(|&c| f(&k.memcgs.cgs[c as usize].events))
            .sum()
    };
    [
        ("low", sum(|e| e.low)),
        ("high", sum(|e| e.high)),
        ("max", sum(|e| e.max)),
        ("oom", sum(|e| e.oom)),
        ("oom_kill", sum(|e| e.oom_kill)),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect()
}
