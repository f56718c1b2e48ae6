//! The kernel's own configuration: what the model of mm/ is built from. The scenario
//! layer reads these types from a scenario file (they derive serde's `Deserialize`,
//! which names no format); the kernel itself never parses anything.

use crate::sim::cost::CostTable;
use crate::units::Duration;
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SwapDevice {
    /// Compressing RAM block device: costs compression on swap-out, decompression on swap-in.
    Zram,
    /// brd ramdisk: costs a 4 KiB copy each way.
    Ramdisk,
    /// An SSD on a block queue (NVMe or SATA, `SsdProfile`): asynchronous reads and
    /// writes that complete after the device's time, no SWP_SYNCHRONOUS_IO, so swap-ins
    /// go through the swap cache and swap readahead.
    Ssd,
}

/// The SSD's device profile (`machine.swap.profile`): which of the cost table's
/// `nvme_*` or `sata_*` latencies, transfer times and queue depth it has.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SsdProfile {
    /// A PCIe 4.0 NVMe SSD (the Samsung 980 PRO's datasheet figures).
    #[default]
    Nvme,
    /// A SATA 6 Gb/s SSD (the Samsung 870 EVO's datasheet figures).
    Sata,
}

/// zswap's compressor (/sys/module/zswap/parameters/compressor, Linux 6.1).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Compressor {
    /// lzo1x-1 (CONFIG_ZSWAP_COMPRESSOR_DEFAULT_LZO, 6.1's default).
    #[default]
    Lzo,
    /// lzo1x-1 with run-length encoding of zero runs (zram's default).
    LzoRle,
    Lz4,
    /// zstd at the crypto API's level 3.
    Zstd,
}

/// zswap's allocator (/sys/module/zswap/parameters/zpool, Linux 6.1).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Zpool {
    /// Two objects a page at most (mm/zbud.c; CONFIG_ZSWAP_ZPOOL_DEFAULT_ZBUD, 6.1's
    /// default); evictable: pages are written back in its LRU order.
    #[default]
    Zbud,
    /// Three objects a page at most (mm/z3fold.c); evictable like zbud.
    Z3fold,
    /// Size classes packed into zspages (mm/zsmalloc.c); 6.1's zsmalloc has no
    /// zpool_shrink, so nothing is ever written back.
    Zsmalloc,
}

/// `swap.zswap`: zswap's module parameters (mm/zswap.c, Linux 6.1); enabled when given.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ZswapConfig {
    /// enabled: false turns zswap off (the table's other keys are then unused), so that
    /// a variant can take it away.
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub compressor: Compressor,
    #[serde(default)]
    pub zpool: Zpool,
    /// max_pool_percent: the pool's limit in percent of RAM (totalram_pages), 0..=100.
    #[serde(default = "default_max_pool_percent")]
    pub max_pool_percent: u32,
    /// accept_threshold_percent: once full, the pool takes stores again below this
    /// percent of its limit (zswap_can_accept), 0..=100.
    #[serde(default = "default_accept_threshold_percent")]
    pub accept_threshold_percent: u32,
    /// same_filled_pages_enabled: pages of one repeated word are kept as that word.
    #[serde(default = "yes")]
    pub same_filled_pages: bool,
}

/// zram's settings (/sys/block/zram0, Linux 6.1) when the swap device is zram; its
/// disksize is the swap's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZramConfig {
    /// mem_limit in pages: the most the zsmalloc pool may take (0: no limit, zram's
    /// default).
    pub mem_limit: u64,
    /// comp_algorithm: the codec of every page zram compresses (lzo-rle, 6.1's
    /// CONFIG_ZRAM_DEF_COMP default).
    pub comp_algorithm: Compressor,
    /// backing_dev (CONFIG_ZRAM_WRITEBACK): the block device idle or huge pages are
    /// written back to, when configured.
    pub backing_dev: Option<BackingDev>,
}

impl Default for ZramConfig {
    fn default() -> Self {
        ZramConfig {
            mem_limit: 0,
            comp_algorithm: Compressor::LzoRle,
            backing_dev: None,
        }
    }
}

/// zram's backing device: an SSD of `profile` (its latency and queue from the cost
/// table, as the SSD swap device's) of `pages` 4 KiB blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackingDev {
    pub profile: SsdProfile,
    pub pages: u64,
}

/// What a process's anon pages hold, as shares in percent of calibrate's page kinds
/// (`[[workload]] page_content`): they decide how zswap compresses them. Default: all
/// memcached items of 2000-byte 'x' values, the seeds' pages.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PageContent {
    #[serde(default)]
    pub items2000: u32,
    #[serde(default)]
    pub items32: u32,
    #[serde(default)]
    pub zero: u32,
    #[serde(default)]
    pub random: u32,
}

impl Default for PageContent {
    fn default() -> Self {
        PageContent {
            items2000: 100,
            items32: 0,
            zero: 0,
            random: 0,
        }
    }
}

fn default_max_pool_percent() -> u32 {
    20
}
fn default_accept_threshold_percent() -> u32 {
    90
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// The active/inactive LRU (mm/vmscan.c without CONFIG_LRU_GEN).
    Classic,
    /// The multi-generational LRU as in Linux 6.1.
    Mglru,
    /// The classic LRU under a reclaim plugin (`kernel.plugin`), in the shape of
    /// cache_ext's patched Linux 6.6 (`lru::plugin`).
    Plugin,
}

/// `kernel.plugin`: which plugin, governing which memcg's pages.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// One of `lru::plugin::examples::NAMES`, or "python" (the Python package's
    /// `policy=`).
    pub name: String,
    /// The governed memcg's path; unset: every memcg, each with its own plugin.
    pub memcg: Option<String>,
    /// Which of the memcg's pages the plugin governs.
    #[serde(default)]
    pub pages: PluginPages,
}

/// `kernel.plugin.pages`.
#[derive(Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PluginPages {
    /// The page cache only, as cache_ext does; anon stays on the classic LRU.
    #[default]
    File,
    /// Anon folios too: they reach the plugin when they join the LRU, their accesses
    /// only through the young bits a reference check reads, and a proposed anon folio
    /// is swapped out as shrink_folio_list() would.
    All,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LruLockKind {
    /// One lru_lock per node (Linux <= 5.10, `pgdat->lru_lock`).
    Node,
    /// One lru_lock per memcg and node (Linux 5.11+, `lruvec->lru_lock`).
    Lruvec,
    /// The per-memcg lru_lock series as posted in v16: the move batches still tested
    /// PageLRU after TestClearPageLRU had cleared it, so activations and tail moves
    /// were silently dropped (the bug Hugh Dickins found; fixed before the merge).
    #[serde(rename = "lruvec-v16")]
    LruvecV16,
}

/// How MGLRU reclaims from many memcgs under global pressure (docs/model/mglru-memcgs.md).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemcgReclaim {
    /// The MGLRU series before "optimize multiple memcgs" (the seeds' "patch1-8"): kswapd
    /// ages every memcg on each balance_pgdat iteration and shrinks each in turn, with no
    /// memcgs_need_aging feedback and no should_abort_scan.
    #[serde(rename = "none")]
    None,
    /// Linux 6.1 ("optimize multiple memcgs", seeds 000/001, variant A): kswapd skips
    /// aging while some memcg gave back pages without needing it, and proportional scans
    /// back off (should_abort_scan).
    #[default]
    #[serde(rename = "v6.1")]
    V61,
    /// Linux 6.3+ (variant B): the per-node LRU of memcgs (generations and bins), and
    /// shrink_many / shrink_one for global reclaim, in the 6.3 form.
    #[serde(rename = "memcg-lru")]
    MemcgLru,
    /// The April-May 2022 v10/v11 postings of MGLRU that seed 000 measured: patch 09/14
    /// "mm: multi-gen LRU: optimize multiple memcgs" on top of patches 01-08 (seed 000's
    /// "patch1-9"; Message-Id <20220518014632.922072-10-yuzhao@google.com>). kswapd's
    /// lru_gen_age_node skips aging while some memcg met its scan budget without aging
    /// (memcgs_need_aging) and then avoids swapping unless some memcg could not meet its
    /// budget without anon (memcgs_need_swapping / memcgs_avoid_swapping); no
    /// should_abort_scan. Memcg reclaim in the v11 shapes (kernel/lru/mglru/v11.rs).
    #[serde(rename = "v11")]
    V11,
    /// Seed 000's "patch1-8" baseline: the same v11 code with patch 09's lines off
    /// (kswapd ages every memcg on each balance_pgdat iteration; no memcgs_* feedback).
    #[serde(rename = "v11-patch1-8")]
    V11Patch1to8,
}

/// Which kernel's memcg statistics flushing (kernel/memcg_stats.rs): who calls
/// mem_cgroup_flush_stats() synchronously.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemcgStatsFlush {
    /// Before the memcg counters moved to rstat (5.12 and earlier; seed 004's 5.8):
    /// nothing to flush.
    #[serde(rename = "none")]
    None,
    /// 5.15-rc3 to 5.18-rc3 (the MGLRU v7 posting's 5.17-rc2 base, seed 000's
    /// 5.18-rc1): the classic LRU's prepare_scan_count() at every shrink_node(), and its
    /// workingset_refault() at every refault ("memcg: flush lruvec stats in the
    /// refault", 1f828223b799).
    #[serde(rename = "v5.15")]
    V515,
    /// 5.18-rc4 to 6.1 (seed 001's 5.19-rc1): prepare_scan_count() only; a refault
    /// flushes only when the 2 s periodic flush is more than 4 s late ("memcg: sync
    /// flush only if periodic flush is delayed", 9b3016154c91), which the model's runs
    /// never are.
    #[default]
    #[serde(rename = "v6.1")]
    V61,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct KernelConfig {
    #[serde(default = "default_policy")]
    pub policy: PolicyKind,
    /// The plugin of `policy = "plugin"`.
    pub plugin: Option<PluginConfig>,
    /// vm.swappiness, 0..=200.
    #[serde(default = "default_swappiness")]
    pub swappiness: u32,
    #[serde(default = "default_lock")]
    pub lru_lock: LruLockKind,
    /// vm.min_free_kbytes; default computed as the kernel does from memory size.
    pub min_free_kbytes: Option<u64>,
    /// vm.watermark_scale_factor, in 1/10000 of memory.
    #[serde(default = "default_wsf")]
    pub watermark_scale_factor: u64,
    /// PAGEVEC_SIZE: folio batch capacity (15 up to 6.8, 31 from 6.9).
    #[serde(default = "default_pagevec")]
    pub pagevec_size: u32,
    /// The CPU kswapd runs on for each node (default: the node's last CPU).
    pub kswapd_cpu: Option<Vec<u32>>,
    /// vm.dirty_background_ratio: the flusher starts background writeback when dirty
    /// file pages exceed this percentage of dirtyable memory (free + file LRU pages).
    #[serde(default = "default_dirty_background_ratio")]
    pub dirty_background_ratio: u32,
    /// vm.dirty_ratio: the dirty limit (background writeback is kicked halfway between
    /// the two ratios, balance_dirty_pages' freerun ceiling).
    #[serde(default = "default_dirty_ratio")]
    pub dirty_ratio: u32,
    /// vm.dirty_writeback_centisecs as a duration: the flusher's periodic wakeup.
    #[serde(default = "default_dirty_writeback_interval")]
    pub dirty_writeback_interval: Duration,
    /// vm.dirty_expire_centisecs as a duration: inodes dirtied longer ago than this are
    /// written by the periodic (kupdate) flush.
    #[serde(default = "default_dirty_expire_interval")]
    pub dirty_expire_interval: Duration,
    /// The CPU the flusher (the writeback kworker) runs on (default: CPU 0).
    pub flusher_cpu: Option<u32>,
    /// MGLRU: scan the neighbours of a young PTE found by an rmap walk
    /// (lru_gen_look_around, "exploit locality in rmap"). Default true.
    #[serde(default = "yes")]
    pub look_around: bool,
    /// MGLRU: page-table walks during aging (/sys/kernel/mm/lru_gen/enabled bit 0x2).
    /// Off, aging only advances max_seq (iterate_mm_list_nowalk) and accessed bits reach
    /// MGLRU through rmap and look-around alone, as before "support page table walks".
    /// Default true.
    #[serde(default = "yes")]
    pub lru_gen_walks: bool,
    /// MGLRU: "mm/mglru: fix underprotected page cache" (Linux 6.8, backported to 6.1.y
    /// stable: Debian's 6.1.192 has it). Cold folios are added one generation above the
    /// oldest while there are more than two, folios whose refs saturate are protected,
    /// and a refault with nearly saturated refs restores them all. Default false (6.1.0,
    /// the seeds' code).
    #[serde(default)]
    pub page_cache_fix: bool,
    /// vmpressure()'s work items (mm/vmpressure.c): every 512 pages reclaim aimed at a
    /// memcg tree or the root scans, a work item wakes the local CPU's kworker, which
    /// preempts the running task. Off, no work is queued, as with the memory controller
    /// disabled. Default true.
    #[serde(default = "yes")]
    pub vmpressure: bool,
    /// MGLRU: /sys/kernel/mm/lru_gen/min_ttl_ms, thrashing protection; 0 is off.
    #[serde(default)]
    pub min_ttl_ms: u64,
    /// vm.page-cluster: swap readahead reads up to 2^page_cluster pages (0..=31; 0
    /// turns readahead off). Only an asynchronous swap device (an SSD) reads ahead.
    #[serde(default = "default_page_cluster")]
    pub page_cluster: u32,
    /// /sys/kernel/mm/swap/vma_ra_enabled: swap readahead by the faulting address's
    /// neighbours in the VMA (swap_vma_readahead, 6.1's default) rather than by the
    /// neighbouring swap slots (swap_cluster_readahead).
    #[serde(default = "yes")]
    pub vma_ra_enabled: bool,
    /// MGLRU: reclaim from many memcgs as `none` (patch1-8 in 6.1's shapes), `v6.1`
    /// (default), `memcg-lru` (6.3+), `v11` (the May 2022 posting's patch1-9) or
    /// `v11-patch1-8` (its baseline).
    #[serde(default)]
    pub memcg_reclaim: MemcgReclaim,
    /// Who flushes the memcg statistics synchronously: `none` (before 5.13), `v5.15`
    /// (5.15-rc3 to 5.18-rc3: reclaim and every refault) or `v6.1` (default: reclaim).
    /// Only the classic LRU flushes in either path.
    #[serde(default)]
    pub memcg_stats_flush: MemcgStatsFlush,
    /// MGLRU: Kairui Song's "mm, lru_gen: batch update pages when aging" (seed 003, never
    /// merged): all three parts below. Default false (mainline 6.1).
    #[serde(default)]
    pub batch_aging: bool,
    /// Part "batch update counters on aging": generation sizes and compat counters are
    /// updated once per list scanned. Unset: the value of `batch_aging`.
    pub batch_aging_counters: Option<bool>,
    /// Part "move pages in bulk when aging": protected folios keep their LRU order and
    /// move to the next generation in one splice. Unset: the value of `batch_aging`.
    pub batch_aging_bulk_move: Option<bool>,
    /// Part "try to prefetch next page when scanning LRU" (cost only). Unset: the value
    /// of `batch_aging`.
    pub batch_aging_prefetch: Option<bool>,
}

/// The parts of the batch-aging series in effect: a part's own key wins, an unset part
/// follows `batch_aging`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchAging {
    pub counters: bool,
    pub bulk_move: bool,
    pub prefetch: bool,
}

impl KernelConfig {
    /// The batch-aging parts in effect (see `batch_aging`).
    pub fn batch_aging_parts(&self) -> BatchAging {
        let all = self.batch_aging;
        BatchAging {
            counters: self.batch_aging_counters.unwrap_or(all),
            bulk_move: self.batch_aging_bulk_move.unwrap_or(all),
            prefetch: self.batch_aging_prefetch.unwrap_or(all),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_page_cluster() -> u32 {
    3
}
fn default_dirty_background_ratio() -> u32 {
    10
}
fn default_dirty_ratio() -> u32 {
    20
}
fn default_dirty_writeback_interval() -> Duration {
    Duration(5_000_000_000)
}
fn default_dirty_expire_interval() -> Duration {
    Duration(30_000_000_000)
}

fn default_policy() -> PolicyKind {
    PolicyKind::Classic
}
fn default_swappiness() -> u32 {
    60
}
fn default_lock() -> LruLockKind {
    LruLockKind::Lruvec
}
fn default_wsf() -> u64 {
    10
}
fn default_pagevec() -> u32 {
    15
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig {
            policy: default_policy(),
            plugin: None,
            swappiness: default_swappiness(),
            lru_lock: default_lock(),
            min_free_kbytes: None,
            watermark_scale_factor: default_wsf(),
            pagevec_size: default_pagevec(),
            kswapd_cpu: None,
            dirty_background_ratio: default_dirty_background_ratio(),
            dirty_ratio: default_dirty_ratio(),
            dirty_writeback_interval: default_dirty_writeback_interval(),
            dirty_expire_interval: default_dirty_expire_interval(),
            flusher_cpu: None,
            look_around: true,
            lru_gen_walks: true,
            page_cache_fix: false,
            vmpressure: true,
            min_ttl_ms: 0,
            page_cluster: default_page_cluster(),
            vma_ra_enabled: true,
            memcg_reclaim: MemcgReclaim::V61,
            memcg_stats_flush: MemcgStatsFlush::V61,
            batch_aging: false,
            batch_aging_counters: None,
            batch_aging_bulk_move: None,
            batch_aging_prefetch: None,
        }
    }
}

/// One memcg's place in the tree and its limits in pages (`u64::MAX` for no
/// memory.max or memory.high, 0 for no memory.low or memory.min). Parents come first.
#[derive(Debug, Clone)]
pub struct MemcgSetup {
    pub path: String,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    /// memory.swap.max in pages (`u64::MAX` for none).
    pub swap_max: u64,
    /// memory.zswap.max in pages (`u64::MAX` for none).
    pub zswap_max: u64,
}

/// Everything `Kernel::new` builds the machine from: memory and swap in pages, the CPU
/// topology with its NUMA nodes, the kernel's configuration, the cost table and the
/// memcg tree below the root. The scenario layer makes one from a scenario
/// (`Scenario::kernel_setup`).
#[derive(Debug, Clone)]
pub struct Setup {
    pub memory_pages: u64,
    /// Each node's pages, when the nodes are not an even split of `memory_pages`
    /// (`[[machine.node]]`); empty for the even split over `topology.nodes`.
    pub node_pages: Vec<u64>,
    /// Sockets, cores, SMT threads and NUMA nodes: which node each CPU allocates from.
    pub topology: crate::sim::topology::Topology,
    /// The swap device and its size in pages, if any.
    pub swap: Option<(SwapDevice, u64)>,
    /// The SSD's profile, when the swap device is an SSD.
    pub ssd_profile: Option<SsdProfile>,
    /// zswap in front of the swap device, if configured.
    pub zswap: Option<ZswapConfig>,
    /// zram's settings, used when the swap device is zram.
    pub zram: ZramConfig,
    pub kernel: KernelConfig,
    pub costs: CostTable,
    pub memcgs: Vec<MemcgSetup>,
}

#[cfg(test)]
impl Setup {
    /// A machine for unit tests: `pages` of memory on one node, `cpus` CPUs of their own
    /// cores, no swap, the default kernel and costs, no memcg below the root.
    pub fn small(pages: u64, cpus: u32) -> Setup {
        Setup {
            memory_pages: pages,
            node_pages: Vec::new(),
            topology: crate::sim::topology::Topology::flat(cpus, 1),
            swap: None,
            ssd_profile: None,
            zswap: None,
            zram: Default::default(),
            kernel: Default::default(),
            costs: Default::default(),
            memcgs: Vec::new(),
        }
    }
}

#[cfg(test)]
impl MemcgSetup {
    /// A memcg at `path` with no limits or protection.
    pub fn unlimited(path: &str) -> MemcgSetup {
        MemcgSetup {
            path: path.into(),
            max: u64::MAX,
            high: u64::MAX,
            low: 0,
            min: 0,
            swap_max: u64::MAX,
            zswap_max: u64::MAX,
        }
    }
}
