//! The cost table: virtual nanoseconds charged for every kernel action. Throughput,
//! latency, lock contention and the kswapd profile all emerge from these numbers; nothing
//! is tuned per scenario. A scenario's `[costs]` table overrides any field.
//!
//! Sources of the defaults: figures for a ~2.5-3 GHz x86 server core of the seeds' era
//! (Xeon 6154 / EPYC 7K62). Cache-miss and cacheline-transfer latencies are the commonly
//! measured ~80-100 ns (DRAM) and ~50-100 ns (cross-core); page copy/zero use ~10 GB/s;
//! lzo1x_1 compresses ~0.8-1 GB/s and decompresses ~3-4 GB/s per core (lzo's published
//! benchmarks); a minor fault round trip is ~1 us (will-it-scale page_fault3 reaches ~1 M
//! faults/s per core); syscall entry/exit ~100-200 ns. Each field says which it uses.

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
    /// memcg charge or uncharge of a page (page_counter atomics up the tree).
    pub charge: u64,
    /// Adding a folio to a per-CPU batch.
    pub batch_add: u64,
    /// One list operation on an LRU list under the lock (unlink/link plus counters).
    pub list_op: u64,
    /// Taking an uncontended spinlock (one atomic on a local cacheline).
    pub lock_acquire: u64,
    /// Extra hold time when the lock's cacheline was last owned by another CPU
    /// (cross-core transfer, ~100 ns on 2-socket machines).
    pub lock_bounce: u64,
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
    /// Deciding a folio's fate in shrink_folio_list (trylock, flags, refcount freeze).
    pub folio_check: u64,
    /// lzo1x_1 compression of one 4 KiB page into zram (~1 GB/s).
    pub zram_compress: u64,
    /// lzo1x decompression of one page from zram (~4 GB/s).
    pub zram_decompress: u64,
    /// Swap slot allocation / free and swap-cache insert / delete.
    pub swap_slot: u64,
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
}

impl Default for CostTable {
    fn default() -> Self {
        CostTable {
            access_hit: 2,
            fault: 1000,
            page_alloc: 150,
            page_free: 100,
            page_zero: 400,
            page_copy: 400,
            read_syscall: 200,
            xarray: 50,
            charge: 30,
            batch_add: 10,
            list_op: 20,
            lock_acquire: 20,
            lock_bounce: 100,
            rmap_lookup: 150,
            pvmw_descent: 350,
            pte_clear_young: 150,
            pte_scan: 4,
            unmap: 300,
            folio_check: 60,
            zram_compress: 4500,
            zram_decompress: 1100,
            swap_slot: 100,
            memcached_request: 4900,
            memcached_batch: 4600,
            loopback_wait: 4000,
            fio_io: 300,
            fio_psync_io: 250,
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
        }
    }
}

/// Where a default cost comes from and the range it is plausible in.
#[derive(Debug, Clone, Copy)]
pub struct CostSource {
    pub field: &'static str,
    pub low: u64,
    pub high: u64,
    pub source: &'static str,
}

const fn src(field: &'static str, low: u64, high: u64, source: &'static str) -> CostSource {
    CostSource {
        field,
        low,
        high,
        source,
    }
}

/// Every field of the default cost table with its source and plausible range (virtual
/// ns). A test checks that no field lacks one and that each default lies in its range;
/// `reclaimsim calibrate` measures what user space can on the host it runs on.
pub const COST_SOURCES: [CostSource; 37] = [
    src("access_hit", 1, 5, "L1/L2 hit after a TLB hit: 4-14 cycles at ~3 GHz (Intel optimization manual latencies); calibrate measures an L1 hit"),
    src("fault", 500, 2000, "will-it-scale page_fault3 reaches ~1 M faults/s per core on Skylake-SP; calibrate measures an anonymous fault round trip (745 ns net on this project's VM)"),
    src("page_alloc", 80, 300, "rmqueue_pcplist + prep_new_page, a few hundred cycles in perf profiles of fault benchmarks"),
    src("page_free", 50, 250, "free_unref_page to the per-CPU list, a few hundred cycles"),
    src("page_zero", 200, 800, "clear_page_erms of 4 KiB at 5-20 GB/s; calibrate measures memset of 4 KiB"),
    src("page_copy", 200, 800, "copy_page / copy_to_user of 4 KiB at 5-20 GB/s; calibrate measures memcpy of 4 KiB"),
    src("read_syscall", 100, 500, "syscall entry/exit 70-150 ns plus filemap_read bookkeeping; calibrate measures pread(2) of a cached page"),
    src("xarray", 20, 150, "xas_load/xas_store through a 2-3 level xarray with cached nodes"),
    src("charge", 10, 100, "memcg charge from the per-CPU stock (consume_stock) and commit_charge"),
    src("batch_add", 5, 30, "folio_batch_add under the per-CPU local lock: a few stores"),
    src("list_op", 10, 60, "list_del/list_add touching 2-4 cached cachelines"),
    src("lock_acquire", 10, 40, "uncontended spin_lock_irq: one locked RMW and irq disable, 20-40 cycles; calibrate measures it"),
    src("lock_bounce", 50, 200, "cacheline transfer between cores: ~50-100 ns in a socket, ~100-200 ns across (Molka et al., PACT 2009); calibrate measures two pinned threads ping-ponging a line"),
    src("rmap_lookup", 80, 300, "anon_vma / i_mmap interval-tree lookup in folio_referenced and try_to_unmap (the rwsem's atomics are charged apart)"),
    src("pvmw_descent", 200, 600, "page_vma_mapped_walk's pgd-pud-pmd-pte descent: 2-4 dependent loads, some cold"),
    src("pte_clear_young", 50, 300, "ptep_clear_flush_young: a locked test-and-clear on the PTE's line"),
    src("pte_scan", 1, 10, "one PTE read in a sequential walk of a page table (8 PTEs per cacheline, prefetched)"),
    src("unmap", 150, 600, "try_to_unmap_one per mapping: PTE clear, deferred TLB flush, rmap and counters"),
    src("folio_check", 30, 150, "shrink_folio_list's per-folio checks (trylock, flags, mapping) on a cached folio"),
    src("zram_compress", 1500, 6000, "lzo1x-1 compresses ~0.8-2.5 GB/s per core depending on the data (lzo benchmarks); calibrate --features lzo measures it on memcached-like pages (1.8 us here)"),
    src("zram_decompress", 600, 2000, "lzo1x decompression ~2-4 GB/s per core; calibrate --features lzo measures it (1.4 us here)"),
    src("swap_slot", 50, 300, "a slot from the per-CPU swap slots cache plus the swap cache insert or delete"),
    src("memcached_request", 1500, 15000, "calibrate on this project's 2-vCPU VM: server CPU per 2000-byte GET one at a time (9.4 us) less memcached_batch (4.9 us); the seeds' binary protocol on a 3 GHz Xeon 6154 costs less"),
    src("memcached_batch", 1500, 10000, "calibrate: server CPU per GET one at a time (9.4 us) and eight at a time (5.4 us) on this VM differ by 7/8 of a batch's network work: 4.6 us a batch"),
    src("loopback_wait", 1000, 20000, "calibrate's tcp_rtt_epoll (64-byte echo over loopback with epoll on both ends, 8.6 us on this VM; netperf TCP_RR figures are 10-30 us) less memcached_batch, the server's part of it"),
    src("fio_io", 200, 1200, "fio's per-I/O submission and completion work for one 4 KiB read; calibrate measured 587 ns net with io_uring here"),
    src("fio_psync_io", 150, 1000, "fio's per-I/O work around pread(2); calibrate measured 501 ns net here, 0.85 of io_uring's 587, which scales fio_io's default"),
    src("lru_flag_atomic", 5, 20, "a locked bit operation on folio->flags in an owned line; calibrate measures a lock xadd"),
    src("wp_fault", 300, 1200, "do_wp_page on a shared file PTE: fault entry, page_mkwrite, PTE update"),
    src("mark_dirty", 100, 600, "folio_mark_dirty: xarray tag, inode and memcg dirty accounting"),
    src("writeback_page", 200, 1000, "write_cache_pages per page: tag lookup, folio_clear_dirty_for_io, bio assembly"),
    src("writeback_latency", 10_000, 100_000, "ext4 on brd: submission to end_io completion of a small write"),
    src("end_writeback", 50, 300, "folio_end_writeback's flag, counter and wake-up bookkeeping"),
    src("lru_scan_miss", 80, 200, "DRAM load-to-use ~80-100 ns on the seeds' Xeon 6154 / EPYC 7K62 (vendor and Intel MLC figures); calibrate measures a pointer chase (194 ns on this project's VM)"),
    src("lru_scan_prefetched", 5, 40, "an L2/L3 hit once prefetchw brought the line: 14-50 cycles"),
    src("gen_size_update", 3, 15, "two stores to lrugen->nr_pages on owned lines, ~15 cycles"),
    src("lru_stat_update", 10, 50, "__update_lru_size's per-CPU vmstat and memcg counter adds, ~50 cycles"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cost_has_a_source_and_a_range_that_holds_its_default() {
        let table = toml::Table::try_from(CostTable::default()).unwrap();
        assert_eq!(table.len(), COST_SOURCES.len());
        for s in &COST_SOURCES {
            let value = table
                .get(s.field)
                .and_then(|v| v.as_integer())
                .unwrap_or_else(|| panic!("{} is not a cost field", s.field))
                as u64;
            assert!(!s.source.is_empty(), "{}", s.field);
            assert!(
                s.low <= value && value <= s.high,
                "{}: {value} outside {}..{}",
                s.field,
                s.low,
                s.high
            );
        }
    }
}
