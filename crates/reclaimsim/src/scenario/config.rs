//! The scenario schema: what a scenario file may say. Loading, `--set` overrides,
//! variants and error locations live in `scenario`.

use crate::engine::cost::CostTable;
use crate::scenario::units::{ByteSize, Duration};
use crate::workload::WorkloadOptions;
use serde::Deserialize;

fn one() -> u64 {
    1
}

/// A whole scenario: a machine, a kernel configuration, a memcg tree and workloads.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "one")]
    pub seed: u64,
    /// Stop the run at this virtual time even if workloads are still running.
    pub duration: Option<Duration>,
    /// How often the time series (free pages, lru sizes, lru_gen view) is sampled.
    pub sample_interval: Option<Duration>,
    pub machine: MachineConfig,
    #[serde(default)]
    pub kernel: KernelConfig,
    /// Overrides of the cost table (`cost::CostTable`), in virtual nanoseconds.
    #[serde(default)]
    pub costs: CostTable,
    #[serde(default, rename = "memcg")]
    pub memcgs: Vec<MemcgConfig>,
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadConfig>,
    /// Commands run at points in virtual time (`[[event]]`).
    #[serde(default, rename = "event")]
    pub events: Vec<EventConfig>,
    /// Each cost field's plausible range `[low, high]` on this scenario's machine, for
    /// sensitivity runs: set when the scenario is loaded (`scenario::profile::cost_ranges`),
    /// not read from the file.
    #[serde(skip)]
    pub cost_ranges: std::collections::BTreeMap<String, [u64; 2]>,
}

/// A write to /sys/kernel/debug/lru_gen at a point in virtual time (MGLRU only), for
/// working-set estimation and proactive reclaim: `+ MEMCG NODE SEQ [SWAPPINESS
/// [FORCE_SCAN]]` ages, `- MEMCG NODE SEQ [SWAPPINESS [NR_TO_RECLAIM]]` evicts, as the
/// kernel reads them except that MEMCG is the memcg's path (`/`, `/a`) and SEQ may be
/// `max` (max_seq when the command runs) or `max-N`. Several commands may be separated
/// by `,` or `;`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    pub at: Duration,
    pub command: String,
    /// The CPU the write runs on (default: the CPU of kswapd of the first command's node).
    pub cpu: Option<u32>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    /// Total physical memory, split evenly over the nodes.
    pub memory: ByteSize,
    #[serde(default = "default_nodes")]
    pub nodes: u32,
    #[serde(default = "default_cpus")]
    pub cpus: u32,
    pub swap: Option<SwapConfig>,
    /// A machine profile whose `[costs]` values replace the cost table's defaults; the
    /// scenario's `[costs]` still win. A name (no '/', no `.toml` ending) is a shipped
    /// profile (`scenario::profile::BUILTIN`); anything else a file (TOML, as `reclaimsim
    /// calibrate` writes it), relative to the scenario file, or to the current directory
    /// when given with `--set`. Loaded into `Scenario::costs` when the scenario is.
    pub profile: Option<String>,
}

fn default_nodes() -> u32 {
    1
}
fn default_cpus() -> u32 {
    4
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SwapDevice {
    /// Compressing RAM block device: costs compression on swap-out, decompression on swap-in.
    Zram,
    /// brd ramdisk: costs a 4 KiB copy each way.
    Ramdisk,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SwapConfig {
    pub device: SwapDevice,
    pub size: ByteSize,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// The active/inactive LRU (mm/vmscan.c without CONFIG_LRU_GEN).
    Classic,
    /// The multi-generational LRU as in Linux 6.1.
    Mglru,
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

/// How MGLRU reclaims from many memcgs under global pressure (docs/model.md section 14).
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
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct KernelConfig {
    #[serde(default = "default_policy")]
    pub policy: PolicyKind,
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
    /// MGLRU: /sys/kernel/mm/lru_gen/min_ttl_ms, thrashing protection; 0 is off.
    #[serde(default)]
    pub min_ttl_ms: u64,
    /// MGLRU: reclaim from many memcgs as `none` (patch1-8), `v6.1` (default) or
    /// `memcg-lru` (6.3+).
    #[serde(default)]
    pub memcg_reclaim: MemcgReclaim,
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
            min_ttl_ms: 0,
            memcg_reclaim: MemcgReclaim::V61,
            batch_aging: false,
            batch_aging_counters: None,
            batch_aging_bulk_move: None,
            batch_aging_prefetch: None,
        }
    }
}

/// One memcg of the cgroup v2 tree. Parents must be declared (the root "/" always exists).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MemcgConfig {
    pub path: String,
    pub max: Option<ByteSize>,
    pub high: Option<ByteSize>,
    pub low: Option<ByteSize>,
    pub min: Option<ByteSize>,
}

/// One workload, placed in a memcg and pinned to CPUs. Exactly one of the workload
/// tables (`fio`, `memcached`, `dd`, `page_fault3`, `anon`, `trace`) must be present.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    pub name: String,
    #[serde(default = "root_path")]
    pub memcg: String,
    /// CPUs the workload's threads are pinned to, round-robin (default: all CPUs).
    pub cpus: Option<Vec<u32>>,
    /// Start at this virtual time...
    #[serde(default)]
    pub start: Duration,
    /// ...or when this workload (or `workload:phase`) finishes.
    pub after: Option<String>,
    /// Stop when this workload finishes (fio killed when memtier is done, as the seeds do).
    pub until: Option<String>,
    pub fio: Option<crate::workload::fio::FioOptions>,
    pub memcached: Option<crate::workload::memtier::MemcachedOptions>,
    pub dd: Option<crate::workload::dd::DdOptions>,
    pub page_fault3: Option<crate::workload::pagefault::PageFault3Options>,
    pub anon: Option<crate::workload::anon::AnonOptions>,
    pub trace: Option<crate::workload::trace::TraceOptions>,
}

fn root_path() -> String {
    "/".to_string()
}

impl WorkloadConfig {
    /// The one workload table given, or an error naming what is wrong.
    pub fn options(&self) -> Result<WorkloadOptions, String> {
        let mut found = Vec::new();
        if let Some(o) = &self.fio {
            found.push(WorkloadOptions::Fio(o.clone()));
        }
        if let Some(o) = &self.memcached {
            found.push(WorkloadOptions::Memcached(o.clone()));
        }
        if let Some(o) = &self.dd {
            found.push(WorkloadOptions::Dd(o.clone()));
        }
        if let Some(o) = &self.page_fault3 {
            found.push(WorkloadOptions::PageFault3(o.clone()));
        }
        if let Some(o) = &self.anon {
            found.push(WorkloadOptions::Anon(o.clone()));
        }
        if let Some(o) = &self.trace {
            found.push(WorkloadOptions::Trace(o.clone()));
        }
        match found.len() {
            1 => Ok(found.pop().unwrap()),
            0 => Err("needs one of the tables fio, memcached, dd, page_fault3, anon, trace".into()),
            _ => Err(
                "has more than one of the tables fio, memcached, dd, page_fault3, anon, trace"
                    .into(),
            ),
        }
    }
}
