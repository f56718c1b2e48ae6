//! The cost table: virtual nanoseconds charged for every kernel action. Throughput,
//! latency, lock contention and the kswapd profile all emerge from these numbers; nothing
//! is tuned per scenario. A scenario's `[costs]` table overrides any field.
//!
//! The defaults are the shipped profile `default` (`profiles/default.toml`, which gives
//! each field's source and plausible range; a test keeps the two equal): figures for a
//! ~2.5-3 GHz x86 server core of the seeds' era (Xeon 6154 / EPYC 7K62). Cache-miss and cacheline-transfer latencies are the commonly
//! measured ~80-100 ns (DRAM) and ~50-100 ns (cross-core); page copy/zero use ~10 GB/s;
//! lzo1x_1 compresses ~0.8-1 GB/s and decompresses ~3-4 GB/s per core (lzo's published
//! benchmarks); a minor fault round trip is ~1 us (will-it-scale page_fault3 reaches ~1 M
//! faults/s per core); syscall entry/exit ~100-200 ns. Each field says which it uses.
//!
//! Every field is in nanoseconds but six: `smt_compute` and `smt_memory` are factors in
//! per mille (the speed a hardware thread keeps while its SMT sibling is busy),
//! `little_compute` and `little_memory` too (the speed of a little core, one of
//! `machine.little_cpus`, against the cores the table describes), and
//! `nvme_queue_depth` and `sata_queue_depth` are counts of I/Os.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CostTable {
    /// A load or store to a mapped page whose PTE is present (TLB hit or short walk; the
    /// hardware sets the accessed bit): one cached access.
    pub access_hit: u64,
    /// Page-fault entry, VMA lookup and PTE install, excluding allocation and I/O (~1 us
    /// round trip measured by page_fault3).
    pub fault: u64,
    /// Buddy/pcp allocation of one order-0 page.
    pub page_alloc: u64,
    /// Freeing one page back to the allocator.
    pub page_free: u64,
    /// Zeroing a 4 KiB page (~10 GB/s).
    pub page_zero: u64,
    /// Copying 4 KiB (copy_to_user of a read, brd ramdisk transfer; ~10 GB/s).
    pub page_copy: u64,
    /// read(2) syscall entry/exit plus filemap_read bookkeeping, per 4 KiB read.
    pub read_syscall: u64,
    /// Page-cache (xarray) lookup or store.
    pub xarray: u64,
    /// What a random read(2) or write(2) of a page-cache page pays beyond `xarray`,
    /// `read_syscall` and `page_copy` (which calibrate measures on a 64 MiB file) when
    /// the cache is GiBs, as the seeds' were: the xarray's lower nodes, the folio's
    /// struct page and the data's lines are cold in the LLC and the TLB
    /// (tools/cold-lookup/measure.sh). A read or write at the page after its task's
    /// last one in the same file (a sequential stream, dd's) finds them warm and does
    /// not pay it. The model keeps no cache state: set it 0 for files that fit the LLC.
    pub lookup_cold: u64,
    /// What __remove_mapping pays beyond the model's other charges when it evicts a
    /// page-cache folio in a cache of GiBs: page_cache_delete's store of the shadow into
    /// an xarray node and the accounting's lines, cold in the LLC
    /// (tools/cold-lookup/evict.sh). An eviction beside the file's last one (a
    /// sequential reader's pages, evicted in order) finds them warm and does not pay it.
    pub evict_cold: u64,
    /// The rest of a page-cache miss's read from a file on ext4 on brd, beyond what
    /// the model charges apart (page_alloc, charge, the insertion's xarray, the LRU
    /// add, brd's copy as `page_copy`): readahead's setup for one page
    /// (page_cache_ra_unbounded, read_pages), ext4_mpage_readpages with
    /// ext4_map_blocks answered from the extent-status cache, bio_alloc, submit_bio to a
    /// bio-based driver and brd's lookup of its page, the completion (folio uptodate
    /// and unlock, bio_put). ~1 us measured on ext4 on a zram disk
    /// (tools/file-miss/measure.sh), of which ~0.8 us is ext4 and the block layer.
    pub file_read_miss: u64,
    /// memcg charge or uncharge of a page (page_counter atomics up the tree).
    pub charge: u64,
    /// Adding a folio to a per-CPU batch.
    pub batch_add: u64,
    /// One list operation on an LRU list under the lock (unlink/link plus counters).
    pub list_op: u64,
    /// Taking an uncontended spinlock (one atomic on a local cacheline).
    pub lock_acquire: u64,
    /// Extra hold time when the lock's cacheline was last written by another core of the
    /// same socket (a core-to-core transfer through the socket's L3 and interconnect,
    /// ~50-100 ns); an SMT sibling shares the core's L1d and pays nothing.
    pub lock_bounce: u64,
    /// The same transfer when the line was last written on another socket (across the
    /// socket link, ~110-210 ns on 2-socket servers of the seeds' era).
    pub lock_bounce_remote: u64,
    /// rmap walk setup per folio: the anon_vma / i_mmap interval-tree lookup (the
    /// rwsem's down_read and up_read are `line_rmw`s on its shared count).
    pub rmap_lookup: u64,
    /// page_vma_mapped_walk: a 4-level page-table descent for one VMA, with its cache
    /// misses (~4 x 80 ns), plus taking the PTE lock.
    pub pvmw_descent: u64,
    /// Test-and-clear of one PTE's accessed bit with its TLB flush (ptep_clear_flush_young).
    pub pte_clear_young: u64,
    /// Reading one PTE in a sequential scan of a PTE table (look-around, page-table walk).
    pub pte_scan: u64,
    /// Unmapping one PTE in try_to_unmap, including the TLB flush share.
    pub unmap: u64,
    /// A deferred TLB flush's wait for its IPI to reach another CPU and be handled
    /// (smp_call_function_many_cond's round trip, one target; each further one adds a
    /// `lock_bounce`). 0 on a machine that flushes without IPIs (arm64 before 6.5).
    pub tlb_ipi: u64,
    /// A CPU's time in the flush IPI: the interrupt's entry and exit and flush_tlb_func's
    /// full flush, with the TLB refill after it; also what a sender waits after a
    /// target's last irq-masking unlock until it has run the flush.
    pub tlb_flush_irq: u64,
    /// A flush request queued behind one whose IPI the CPU has yet to take: no IPI of its
    /// own, and its flush_tlb_func finds the TLB already flushed by the first (the mm's
    /// tlb_gen caught up): the request's lines (the csd, the mm's tlb_gen) and the call.
    pub tlb_flush_queued: u64,
    /// A memcg stats flush's visit to one possible CPU (cgroup_rstat_flush_locked, 6.1):
    /// that CPU's cgroup_rstat_cpu_lock and the head of its updated tree, lines the CPU
    /// wrote.
    pub memcg_flush_cpu: u64,
    /// A memcg stats flush's fold of one memcg's counters on one CPU
    /// (mem_cgroup_css_rstat_flush and cgroup_base_stat_flush, 6.1): ~200 per-CPU
    /// counters a node on lines that CPU wrote, into the memcg's totals and its
    /// parent's (measured on 6.18 and scaled by the counters: profiles/default.toml).
    pub memcg_flush_memcg: u64,
    /// Deciding a folio's fate in shrink_folio_list (trylock, flags, refcount freeze).
    pub folio_check: u64,
    /// lzo-rle compression (lzo1x_1's work) of one 4 KiB page into zram: the seeds'
    /// memcached pages, measured (~2.3 GB/s).
    pub zram_compress: u64,
    /// lzo1x decompression of one page from zram (~4 GB/s).
    pub zram_decompress: u64,
    /// Swap slot allocation / free and swap-cache insert / delete.
    pub swap_slot: u64,
    /// The rest of a major swap-in fault beyond what the model charges apart (`fault`,
    /// the folio's allocation and charge, the device's read, `swap_slot`, the LRU add):
    /// mem_cgroup_swapin_charge_folio and the swap charge's release
    /// (mem_cgroup_swapin_uncharge_swap, lookup_swap_cgroup_id), workingset_refault's
    /// shadow lookup, the swap-cache and swap-map work, psi's memstall, and what the
    /// fault's cold page tables and struct pages add. ~1.8 us measured
    /// (tools/swap-cost/measure.sh).
    pub swap_in_rest: u64,
    /// The rest of swapping out one anon folio in shrink_folio_list beyond what the
    /// model charges apart (the checks, `swap_slot`, try_to_unmap's walk, the device's
    /// write, the shadow's store, the free): folio_alloc_swap's and the swap cache's
    /// bookkeeping, the memcg's swap charge (mem_cgroup_try_charge_swap), the rest of
    /// try_to_unmap and __remove_mapping on cold lines. ~1.2 us measured
    /// (tools/swap-cost/measure.sh).
    pub swap_out_rest: u64,
    /// LZ4 compression of one 4 KiB page (zswap's `lz4` compressor): lzbench's LZ4 runs
    /// ~700-800 MB/s on general data (~5 us a page), far faster on pages of long runs
    /// such as the seeds' memcached items (~1-2 us).
    pub lz4_compress: u64,
    /// LZ4 decompression of one page: ~4-5 GB/s on general data in lzbench (~0.9 us).
    pub lz4_decompress: u64,
    /// zstd compression of one page at the kernel crypto API's level 3 (zswap's `zstd`):
    /// lzbench's zstd -3 runs ~300-450 MB/s on general data (~10 us a page), faster on
    /// runs.
    pub zstd_compress: u64,
    /// zstd decompression of one page: ~1-1.5 GB/s on general data in lzbench (~3 us).
    pub zstd_decompress: u64,
    /// memcached's CPU time per request apart from its connection's network work:
    /// parsing, hashing, the item lookup and building the reply.
    pub memcached_request: u64,
    /// memcached's CPU time per pipeline batch of one connection: the epoll wake-up, the
    /// read of the batch and the send of its replies.
    pub memcached_batch: u64,
    /// What a server thread waits, off its CPU, between answering a connection's batch
    /// and the client's next batch arriving: the rest of a loopback TCP round trip
    /// (the client's wake-up, receive and send, the server's wake-up).
    pub loopback_wait: u64,
    /// fio's own CPU time per 4 KiB read with `ioengine = "io_uring"` (at the seeds'
    /// iodepth 128, batches of 32), apart from what filemap_read charges: preparing the
    /// SQE, the share of io_uring_enter, reaping the CQE, fio's io_u and stats work.
    pub fio_io: u64,
    /// The same with `ioengine = "psync"`: fio's loop around one pread(2) per read
    /// (the syscall itself is `read_syscall`).
    pub fio_psync_io: u64,
    /// `dd bs=4k of=/dev/null`'s own CPU time per block apart from its read (which
    /// filemap_read charges): the write(2) of the block to /dev/null (write_null returns
    /// at once, so this is the syscall's entry and exit) and dd's loop around the two.
    pub dd_block: u64,
    /// One LOCK-prefixed bit operation on a folio's flags (`folio_test_clear_lru`,
    /// `folio_set_lru`) whose cacheline is already local: Agner Fog's instruction tables
    /// give ~18-25 cycles for `lock bts/btr` on Skylake-SP, ~7-10 ns at 2.5-3 GHz. This is
    /// what separates the lock protocols: 5.11+ batch moves pay two per folio, the
    /// test-and-clear of PG_lru before `folio_lruvec_relock_irq` (outside the lock for the
    /// first folio, inside the previous folio's hold when consecutive folios share a
    /// lock, as in folio_batch_move_lru) and the set of PG_lru inside; <= 5.10 read
    /// PG_lru under the node lock with a plain load and left it set.
    pub lru_flag_atomic: u64,
    /// A write-protect fault on a present, clean PTE of a shared file mapping
    /// (`do_wp_page` -> `wp_page_shared` -> `page_mkwrite`), excluding dirtying: fault
    /// entry and exit plus the PTE update, like `fault` but without the VMA lookup and
    /// allocation (~0.6 us; will-it-scale's page_fault3 runs ~1 M faults/s per core).
    pub wp_fault: u64,
    /// ext4 `page_mkwrite` / `folio_mark_dirty` bookkeeping for one page: block
    /// reservation (delalloc), `__folio_mark_dirty` with its xarray tag, and the
    /// NR_FILE_DIRTY and memcg counters (~300 ns).
    pub mark_dirty: u64,
    /// Submitting one dirty page for writeback (`write_cache_pages` + ext4 `writepages`):
    /// tag lookup, `folio_clear_dirty_for_io`, `folio_start_writeback`, bio building
    /// (~500 ns). The brd transfer itself is `page_copy`, charged on top.
    pub writeback_page: u64,
    /// Virtual time from submitting a page's write to `folio_end_writeback` (brd copies
    /// in the submitter's context; ext4 then completes through its end_io work item:
    /// a kworker wakeup, ~20-50 us). Latency, not CPU time.
    pub writeback_latency: u64,
    /// `folio_end_writeback` CPU work per page: clear PG_writeback, counters, wake
    /// waiters (~100 ns).
    pub end_writeback: u64,
    /// Touching a folio met in a tail-first LRU list scan (its `lru` and `flags`, one
    /// cacheline of struct page) when nothing fetched it ahead: the folio went cold long
    /// ago, so a DRAM miss, ~80-100 ns on the seeds' Xeon 6154 / EPYC 7K62 (the
    /// commonly measured load-to-use latency). MGLRU's 6.1 scan_folios and inc_min_seq
    /// pay it for every folio, every scan pays it for the first folio of a list.
    pub lru_scan_miss: u64,
    /// The same touch once a prefetch brought the line (`prefetchw` of the next folio to
    /// scan: classic isolate_lru_folios' prefetchw_prev_lru_folio, MGLRU with seed 003's
    /// prefetch part): an L2/L3 hit (~40 cycles of Zen 2 L3 / Skylake-SP L2-L3, ~15 ns).
    /// A prefetch issued less than `lru_scan_miss` ago stalls for the rest of the miss.
    pub lru_scan_prefetched: u64,
    /// One `lru_gen_update_size` of a generation move (folio_inc_gen): two stores to
    /// lrugen->nr_pages and the lru_gen_is_active tests on cachelines the lock holder
    /// already owns, ~15 cycles (~6 ns). Seed 003's batched counters pay it once per
    /// generation per list scanned instead of once per folio.
    pub gen_size_update: u64,
    /// One `__update_lru_size` of the compat active/inactive counters
    /// (`__mod_lruvec_state` + `__mod_zone_page_state`: per-CPU node, zone and memcg
    /// vmstat adds and memcg_rstat_updated's bookkeeping, ~50 cycles, ~20 ns). A move
    /// from an inactive to an active generation pays two.
    pub lru_stat_update: u64,
    /// The speed a hardware thread keeps on compute-bound work (instruction-bound kernel
    /// and user code: compression, copy and zero loops, request parsing, fault entry, list
    /// manipulation) while its SMT sibling is busy, in per mille of its speed alone (1000:
    /// no slowdown). A CPU's compute-bound costs are divided by it while its sibling runs.
    /// Published SMT throughput gains on server workloads are ~15-30% (Marr et al., 2002,
    /// "Hyper-Threading Technology Architecture and Microarchitecture", Intel Technology
    /// Journal: up to ~30%; SPEC CPU rate and Phoronix SMT on/off runs on Xeon and EPYC):
    /// two busy siblings do 1.15-1.30 cores of work, each 575-650 per mille. Not ns.
    pub smt_compute: u64,
    /// The same for memory-latency-bound work (DRAM misses on cold struct pages in LRU
    /// scans, page-table walks, cacheline transfers), in per mille: a thread stalled on a
    /// miss leaves the core's execution units to its sibling, which is what SMT is for, so
    /// a busy sibling costs little (a shared fill-buffer and L1/L2 share). Not ns.
    pub smt_memory: u64,
    /// The speed of a little core (a CPU of `machine.little_cpus`, such as a Cortex-A55
    /// beside Cortex-A76s) on compute-bound work, in per mille of the speed of the cores
    /// the rest of the table describes: the kernel's CPU capacity
    /// (arch_scale_cpu_capacity, from the device tree's `capacity-dmips-mhz` times the
    /// clock) is the same kind of ratio. A little CPU's compute-bound costs are divided by
    /// it, and by `smt_compute` as well when an SMT sibling is busy. 1000 (the default):
    /// no slower. Not ns.
    pub little_compute: u64,
    /// The same for memory-latency-bound work, in per mille: an in-order little core
    /// overlaps fewer misses than an out-of-order big one, but a dependent miss costs
    /// both the memory's latency. 1000 (the default): no slower. Not ns.
    pub little_memory: u64,
    /// The CPU time of one 4 KiB bio to an SSD, charged to its submitter: bio_alloc,
    /// submit_bio through blk-mq to the NVMe or AHCI driver, and its share of the
    /// completion interrupt and end_io (~1-2 us: the block layer's published per-core
    /// rates, ~1.7 M IOPS polled with io_uring down to ~0.5 M with interrupts).
    pub block_io: u64,
    /// NVMe SSD (Samsung 980 PRO 1 TB datasheet): the fixed time of one 4 KiB random
    /// read, its QD1 period (22 K IOPS, 45.5 us) less `nvme_read_page`. Device time.
    pub nvme_read_latency: u64,
    /// NVMe: the fixed time of one 4 KiB write, its QD1 period (50 K IOPS, 20 us) less
    /// `nvme_write_page`. Device time.
    pub nvme_write_latency: u64,
    /// NVMe: a 4 KiB read's share of the device's bandwidth, one at a time (its QD32
    /// random read rate, 1 M IOPS). Device time.
    pub nvme_read_page: u64,
    /// NVMe: a 4 KiB write's share of the bandwidth (QD32 random write, 1 M IOPS).
    pub nvme_write_page: u64,
    /// NVMe: I/Os in flight at most (the depth of the datasheet's peak rates, QD32).
    /// A count, not ns.
    pub nvme_queue_depth: u64,
    /// SATA SSD (Samsung 870 EVO 1 TB datasheet: QD1 13 K / 36 K IOPS, QD32 98 K / 88 K,
    /// the four figures KitGuru's 870 EVO 1TB review quotes from Samsung): one 4 KiB
    /// random read's fixed time, its QD1 period (13 K IOPS, 76.9 us) less
    /// `sata_read_page`. Device time.
    pub sata_read_latency: u64,
    /// SATA: one 4 KiB write's fixed time, its QD1 period (36 K IOPS, 27.8 us) less
    /// `sata_write_page`. Device time.
    pub sata_write_latency: u64,
    /// SATA: a 4 KiB read's share of the bandwidth (QD32 random read, 98 K IOPS).
    pub sata_read_page: u64,
    /// SATA: a 4 KiB write's share of the bandwidth (QD32 random write, 88 K IOPS).
    pub sata_write_page: u64,
    /// SATA: I/Os in flight at most (NCQ's 32 tags). A count, not ns.
    pub sata_queue_depth: u64,
    /// The direct CPU cost of switching a CPU from one task to another: schedule(),
    /// `__switch_to`, the `switch_mm` when the processes differ, and the immediate cache
    /// and TLB refill share (lmbench lat_ctx: ~1-3 us on 2-process rings on Xeons of the
    /// seeds' era; Li, Ding and Shen, "Quantifying the cost of context switch", 2007:
    /// ~1-2 us direct on a 2007 Xeon, 3.8 us with the indirect cost).
    pub context_switch: u64,
    /// A kworker's run of one vmpressure work item beyond the context switches around
    /// it: the worker loop (worker_thread, process_one_work) and vmpressure_work_fn's
    /// counters under sr_lock and level computation, no listener to notify (perf's
    /// sched_switch trace of memcg reclaim on this project's VM,
    /// tools/fio-share/kworkers.sh).
    pub vmpressure_work: u64,
    /// Time from `try_to_wake_up` on one CPU to the woken task running on another, idle
    /// CPU: the reschedule IPI and the exit from a shallow idle state (C1 on servers tuned
    /// for throughput: Skylake-SP's cpuidle state1 latency is 2 us; wake-up latencies
    /// measured with schbench or cyclictest on idle servers are ~2-5 us with C1 only, 5-20
    /// us with deep C-states). Latency, not CPU time.
    pub wakeup_latency: u64,
    /// memtier_benchmark's own client CPU time per request: building the GET, parsing the
    /// reply, its latency and throughput stats.
    pub memtier_request: u64,
    /// memtier_benchmark's client CPU time per pipeline batch of one connection: the epoll
    /// wake-up and the send and receive syscalls of a loopback TCP batch.
    pub memtier_batch: u64,
    /// A user-space agent's read of a small cgroup or proc file (memory.pressure,
    /// memory.current, memory.events, cgroup.events): the open, read and close syscalls
    /// and the kernel's show function (psi_show, page_counter_read, the seq_file
    /// formatting). On the agent's task, as CPU time.
    pub cgroup_read: u64,
    /// A read of memory.stat (or /proc/meminfo): as `cgroup_read`, plus 6.1's
    /// memory_stat_format(), which flushes the memcg's rstat (a walk of every CPU's
    /// per-CPU counters) and formats some 40 lines.
    pub cgroup_stat_read: u64,
    /// A write to a cgroup file or sysctl: open, write and close, and the parsing; the
    /// reclaim the write starts is charged as reclaim.
    pub cgroup_write: u64,
    /// One call of a reclaim plugin's hook (`kernel.policy = "plugin"`): cache_ext's
    /// struct_ops call into an eBPF program and back, with a map update or list kfunc,
    /// whatever language the model's plugin is written in (host time is not charged).
    pub policy_hook: u64,
}

impl Default for CostTable {
    fn default() -> Self {
        DEFAULT
    }
}

/// The built-in table (`profiles/default.toml`'s values), as a constant.
pub const DEFAULT: CostTable = CostTable {
    access_hit: 2,
    fault: 1000,
    page_alloc: 150,
    page_free: 100,
    page_zero: 400,
    page_copy: 400,
    read_syscall: 200,
    xarray: 50,
    lookup_cold: 390,
    evict_cold: 230,
    file_read_miss: 1000,
    charge: 30,
    batch_add: 10,
    list_op: 20,
    lock_acquire: 20,
    lock_bounce: 100,
    lock_bounce_remote: 150,
    rmap_lookup: 150,
    pvmw_descent: 350,
    pte_clear_young: 150,
    pte_scan: 4,
    unmap: 300,
    tlb_ipi: 1500,
    tlb_flush_irq: 800,
    tlb_flush_queued: 200,
    memcg_flush_cpu: 200,
    memcg_flush_memcg: 2200,
    folio_check: 60,
    zram_compress: 1800,
    zram_decompress: 1100,
    swap_slot: 100,
    swap_in_rest: 1800,
    swap_out_rest: 1200,
    lz4_compress: 1500,
    lz4_decompress: 500,
    zstd_compress: 6000,
    zstd_decompress: 2500,
    memcached_request: 4900,
    memcached_batch: 4600,
    loopback_wait: 4000,
    fio_io: 590,
    fio_psync_io: 500,
    dd_block: 120,
    lru_flag_atomic: 10,
    wp_fault: 600,
    mark_dirty: 300,
    writeback_page: 500,
    writeback_latency: 30_000,
    end_writeback: 100,
    lru_scan_miss: 90,
    lru_scan_prefetched: 15,
    gen_size_update: 6,
    lru_stat_update: 20,
    smt_compute: 600,
    smt_memory: 900,
    little_compute: 1000,
    little_memory: 1000,
    block_io: 1500,
    nvme_read_latency: 44_500,
    nvme_write_latency: 19_000,
    nvme_read_page: 1000,
    nvme_write_page: 1000,
    nvme_queue_depth: 32,
    sata_read_latency: 66_700,
    sata_write_latency: 16_400,
    sata_read_page: 10_200,
    sata_write_page: 11_400,
    sata_queue_depth: 32,
    context_switch: 1500,
    vmpressure_work: 1000,
    wakeup_latency: 3000,
    memtier_request: 4900,
    memtier_batch: 4600,
    cgroup_read: 3000,
    cgroup_stat_read: 15_000,
    cgroup_write: 3000,
    policy_hook: 100,
};

/// The fields that are factors in per mille rather than nanoseconds.
pub const PER_MILLE: [&str; 4] = [
    "smt_compute",
    "smt_memory",
    "little_compute",
    "little_memory",
];

impl CostTable {
    /// The table with `field` set to `value`; None when the table has no such field.
    pub fn with(&self, field: &str, value: u64) -> Option<CostTable> {
        let mut table = toml::Table::try_from(self).ok()?;
        let slot = table.get_mut(field)?;
        *slot = toml::Value::Integer(i64::try_from(value).ok()?);
        table.try_into().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn with_sets_one_field_and_refuses_unknown_ones() {
        let c = CostTable::default()
            .with("lru_scan_prefetched", 45)
            .unwrap();
        assert_eq!(c.lru_scan_prefetched, 45);
        assert_eq!(
            c.with("lru_scan_prefetched", 15),
            Some(CostTable::default())
        );
        assert_eq!(c.with("no_such_cost", 1), None);
    }
}
