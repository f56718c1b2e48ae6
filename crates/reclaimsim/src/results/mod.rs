//! What a run produces: the JSON document `--json` writes and the tables print from.

pub use crate::engine::{
    AgentKill, AgentResult, AgentWrite, CpuUse, EventResult, LruGenView, Profile, Sample, SchedUse,
    TaskUse,
};
pub use crate::kernel::lru::mglru::debugfs::{LruGenGen, LruGenState, MmWalkStats};
pub use crate::kernel::lru::plugin::PluginStats;
pub use crate::kernel::psi::{Pressure, PsiLine};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod gather;
pub mod metrics;
pub use gather::run;

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    /// The scenario's description (what it shows, and the figures it is compared with).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub seed: u64,
    pub variants: Vec<VariantResult>,
    /// `compare --sensitivity`: each headline's band over the costs' ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<Sensitivity>,
}

impl RunResult {
    /// The results of `variants` of the scenario whose base is `base`, run with `seed`
    /// (no sensitivity bands).
    pub fn of(
        base: &crate::scenario::config::Scenario,
        seed: u64,
        variants: Vec<VariantResult>,
    ) -> Self {
        RunResult {
            scenario: base.name.clone(),
            description: base.description.clone(),
            seed,
            variants,
            sensitivity: None,
        }
    }
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct VariantResult {
    pub name: String,
    /// The scenario's `scale` for this variant; `None` (absent from the JSON) when it is
    /// 1, the scenario as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    pub virtual_time_s: f64,
    /// Host wall time; the only field that differs between two runs of one scenario.
    pub wall_s: f64,
    /// Global counters named as /proc/vmstat names them: the kernel's counters only.
    pub vmstat: BTreeMap<String, u64>,
    /// The model's own global counters, which no kernel keeps: the reclaim throttles'
    /// counts and sleep times (`throttle_<reason>`, `throttle_<reason>_ns`),
    /// balance_dirty_pages' pauses, MGLRU's `lru_gen_aging`, `lru_gen_aging_skipped`,
    /// `lru_gen_abort_scan`, `lru_gen_avoid_swapping`.
    #[serde(default)]
    pub model_counters: BTreeMap<String, u64>,
    /// Per memcg path: "memory.stat" and "memory.events" maps (hierarchical, as cgroup v2).
    pub memcgs: BTreeMap<String, MemcgResult>,
    /// Per workload (or `workload:phase` for multi-phase workloads).
    pub workloads: BTreeMap<String, WorkloadResult>,
    /// Per lock class ("lru_lock"): totals over every lock instance.
    pub locks: BTreeMap<String, LockResult>,
    /// kswapd's virtual CPU time by category, summed over nodes: its threads' rows of
    /// `sched.tasks` (their `profile`) added up.
    pub kswapd_profile: Profile,
    pub oom_kills: Vec<OomKill>,
    /// Memory touches (loads, stores, reads) the workloads made.
    pub page_accesses: u64,
    /// Host bytes of model state (frames, page tables, page cache, swap map, lists).
    pub model_bytes: u64,
    /// Samples over virtual time.
    pub timeseries: Vec<Sample>,
    /// MGLRU: per memcg path, the state of its lruvec on each node at the end.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lru_gen: BTreeMap<String, Vec<LruGenState>>,
    /// The scenario's `[[event]]` commands as they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventResult>,
    /// zswap's state and debugfs counters at the end, when the scenario configures zswap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zswap: Option<ZswapResult>,
    /// The SSD's own counts at the end, when the swap device is an SSD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_device: Option<SwapDeviceResult>,
    /// zram's mm_stat and failed writes at the end, when the swap device is zram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zram: Option<ZramResult>,
    /// Per `[[agent]]`, in the scenario's order: each memory.high it wrote, when, and the
    /// pressure it had read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentResult>,
    /// Per NUMA node, in node order, on machines of more than one node: its memory,
    /// CPUs, watermarks and what it holds and counted at the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeResult>,
    /// Direct reclaim: the time each try_to_free_pages() call took (allocation stalls).
    pub alloc_stall: AllocStall,
    /// The scheduler: each CPU's busy share and context switches, each task's CPU
    /// time, run-queue wait, migrations and CPUs.
    #[serde(default)]
    pub sched: SchedUse,
    /// System-wide memory pressure, /proc/pressure/memory at the end of the run: `some`
    /// and `full`, each with avg10, avg60, avg300 (%) and total (µs).
    #[serde(default)]
    pub pressure: Pressure,
    /// `"kernel"` when the results come from a real kernel in a virtual machine
    /// (`reclaimsim kernel`), not from the model; absent for the model's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// With `backend = "kernel"`: the kernel, the virtual machine and the counters at
    /// each snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestRun>,
    /// `kernel.policy = "plugin"`: the plugin's hook calls, the folios it proposed and
    /// what the kernel made of them, the fallbacks to the built-in LRU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginStats>,
}

/// A run on a real kernel (`reclaimsim kernel`): what ran it and its snapshots. Its
/// `virtual_time_s` is the guest's time from the end of setup until every workload had
/// finished;
/// under TCG the guest runs many times slower than the machine it models, so rates
/// (`ops_per_sec`, `mib_per_sec`) are not the machine's: compare counts.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct GuestRun {
    /// `uname -r` in the guest.
    pub kernel: String,
    /// QEMU's accelerator: `tcg` or `kvm`.
    pub accelerator: String,
    /// The guest's vCPUs (`-smp`) and memory (`-m`, MiB).
    pub cpus: u32,
    pub memory_mib: u64,
    /// MemTotal and MemFree (bytes) after setup, before the workloads start.
    pub mem_total: u64,
    pub mem_free_after_setup: u64,
    /// Bytes the guest locked after setup (its `ballast`), so that what it had free
    /// beyond the scenario's machine memory took no part in the run.
    #[serde(default)]
    pub ballast: u64,
    /// NUMA nodes the guest's kernel found (`-numa`; 1 without).
    #[serde(default)]
    pub nodes: u32,
    /// Guest seconds from power-on to the end of setup.
    pub setup_s: f64,
    /// /sys/kernel/mm/lru_gen/enabled as read back after setup (`0x0000`: classic).
    #[serde(default)]
    pub lru_gen_enabled: String,
    /// The snapshots in order: `end:NAME` when workload NAME finished its work (its
    /// memory still held), `phase:NAME:PHASE` when init saw a phase's end (within its
    /// 0.2 s poll, the workloads going on), `sample` every `sample_interval`, `end:all`
    /// when every workload had finished, `end` after every workload exited. Setup and
    /// `end:all` are taken after 2.5 s with nothing running, so that 6.1's periodic
    /// memcg stats flush (every 2 s) has folded every CPU's counts into memory.stat;
    /// the others may lag it by a few hundred updates (its flush on reading waits for
    /// a threshold). `end:all` and `end` carry the time every workload had finished.
    pub snapshots: Vec<GuestSnapshot>,
    /// When each phase of a workload with several ended (`NAME:PHASE`, as in
    /// `workloads`; the guest's `@RS phase` line, printed when every worker has done the
    /// phase's work): guest seconds since the end of setup, as a snapshot's `time_s`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phase_ends: BTreeMap<String, f64>,
    /// What the guest reported as going wrong (a module, a sysctl that failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// Counters at one snapshot, each since the end of setup.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct GuestSnapshot {
    pub label: String,
    /// Guest seconds since the end of setup.
    pub time_s: f64,
    /// /proc/vmstat's event counters since setup.
    pub vmstat: BTreeMap<String, u64>,
    /// Per memcg path, memory.stat's event counters since setup and memory.current.
    pub memcgs: BTreeMap<String, BTreeMap<String, u64>>,
}

/// One NUMA node at the end of a run, as /sys/devices/system/node/nodeN/ shows it:
/// `meminfo` (sizes in bytes), `cpulist`, `numastat` and the zone's watermarks
/// (/proc/zoneinfo, in pages).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct NodeResult {
    /// MemTotal: the node's memory.
    pub mem_total: u64,
    /// MemFree: its free pages at the end (the per-CPU lists' not counted, as
    /// NR_FREE_PAGES).
    pub mem_free: u64,
    /// Its anon and file pages on the LRU lists at the end, over all memcgs.
    pub anon: u64,
    pub file: u64,
    /// Its CPUs as a cpulist (`""` for a memory-only node).
    pub cpus: String,
    /// The zone's min, low and high watermarks, in pages.
    pub watermarks: [u64; 3],
    /// numastat: pages allocated here for an allocation that preferred this node,
    /// allocated here for one that preferred another, and that preferred this node
    /// but came from another.
    pub numa_hit: u64,
    pub numa_miss: u64,
    pub numa_foreign: u64,
}

/// Allocation stalls: how many direct reclaim calls (try_to_free_pages) there were and
/// the distribution of the virtual time each took.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct AllocStall {
    pub calls: u64,
    pub latency_ns: Latency,
}

impl From<&crate::kernel::stats::Histogram> for AllocStall {
    fn from(h: &crate::kernel::stats::Histogram) -> Self {
        AllocStall {
            calls: h.count(),
            latency_ns: h.into(),
        }
    }
}

/// zram at the end of a run: 6.1's /sys/block/zram0/mm_stat (its names, in bytes) and
/// io_stat's failed_writes.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct ZramResult {
    /// The pages stored, uncompressed, in bytes (same-filled and huge ones included).
    pub orig_data_size: u64,
    /// The compressed bytes stored (a huge page counts 4096).
    pub compr_data_size: u64,
    /// The zsmalloc pool's memory, taken from RAM and charged to no memcg.
    pub mem_used_total: u64,
    /// mem_limit (0: none).
    pub mem_limit: u64,
    /// The most mem_used_total reached.
    pub mem_used_max: u64,
    /// Pages kept as one repeated word, with no pool memory.
    pub same_pages: u64,
    /// Pages that compressed to zsmalloc's huge class size or more, stored whole.
    pub huge_pages: u64,
    /// Writes that failed past mem_limit (each swap-out tries twice: ->rw_page, then a
    /// bio); the folio stays in the swap cache, redirtied.
    pub failed_writes: u64,
    /// The backing device's bd_stat and requests, when zram has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bd_stat: Option<ZramBdResult>,
}

/// zram's backing device at the end of a run: 6.1's /sys/block/zram0/bd_stat (its
/// names, in 4 KiB pages), io_stat's failed_reads, and the device's own requests.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct ZramBdResult {
    /// Pages on the backing device now.
    pub bd_count: u64,
    /// Pages read from it (swap-ins of written-back slots).
    pub bd_reads: u64,
    /// Pages written to it by writeback.
    pub bd_writes: u64,
    /// ->rw_page reads of a written-back slot, which 6.1 fails and retries as a bio.
    pub failed_reads: u64,
    /// The device's requests: bytes written is what writeback wrote to flash.
    pub device: SwapDeviceResult,
}

/// zswap at the end of a run: what 6.1's /sys/kernel/debug/zswap shows (its names).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct ZswapResult {
    /// The zpool's memory, in bytes (pages taken from RAM times 4096).
    pub pool_total_size: u64,
    /// Entries stored, same-filled ones included.
    pub stored_pages: u64,
    /// Entries kept as one repeated word, without compression.
    pub same_filled_pages: u64,
    /// Entries the shrink worker wrote back to the swap device (6.8's vmstat `zswpwb`).
    pub written_back_pages: u64,
    /// Stores that found the pool at max_pool_percent.
    pub pool_limit_hit: u64,
    /// Shrink worker runs that freed no zpool page (always, with zsmalloc in 6.1).
    pub reject_reclaim_fail: u64,
    /// Stores the zpool could not allocate for (no free frame; zsmalloc: an object
    /// above a page).
    pub reject_alloc_fail: u64,
    /// Stores whose compressed page was too large for zbud or z3fold.
    pub reject_compress_poor: u64,
    /// Stores over a slot that still had an entry (the old one is dropped).
    pub duplicate_entry: u64,
}

/// An SSD swap device's requests over the run: reads and writes of 4 KiB each
/// (swap-outs and zswap's writeback, swap-ins and readahead).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct SwapDeviceResult {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time requests waited for a free tag of the device's queue, summed, in ns.
    pub queue_wait_ns: u64,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct MemcgResult {
    /// memory.stat as 6.1 prints it (hierarchical; sizes in bytes), the keys the model
    /// keeps: `file_dirty`, `file_writeback`, the LRU sizes, the `workingset_*`
    /// entries, then `pgscan` and `pgsteal` (kswapd plus direct) and the events of
    /// memcg_vm_event_stat[]. `MEMORY_STAT_KEYS` lists them in 6.1's order, the order
    /// the map keeps (in JSON too).
    #[serde(rename = "memory.stat")]
    pub stat: IndexMap<String, u64>,
    /// memory.events in 6.1's order: `low`, `high`, `max`, `oom`, `oom_kill`, each the
    /// memcg's own events and its descendants' (hierarchical, as cgroup v2 counts them).
    #[serde(rename = "memory.events")]
    pub events: IndexMap<String, u64>,
    /// memory.events.local: the same events, the memcg's own only.
    #[serde(rename = "memory.events.local", default)]
    pub events_local: IndexMap<String, u64>,
    /// The reclaim stalls of this memcg's own tasks, by cause: `direct` (global direct
    /// reclaim in the page allocator, try_to_free_pages), `max` (reclaim at memory.max
    /// in the charge, try_charge_memcg, until the charge succeeds or the OOM killer is
    /// called), `high` (memory.high's reclaim and penalty sleep,
    /// mem_cgroup_handle_over_high), `proactive` (a memory.reclaim write's time, the
    /// writer's). Each: how many, and their latency in ns.
    #[serde(default)]
    pub reclaim_stalls: IndexMap<String, AllocStall>,
    /// memory.current: the memcg's charged memory, in bytes.
    #[serde(rename = "memory.current", default)]
    pub current: u64,
    /// memory.swap.current: the swap slots charged to the memcg, in bytes.
    #[serde(rename = "memory.swap.current", default)]
    pub swap_current: u64,
    /// memory.swap.events as 6.1 prints them, less `high` (memory.swap.high is not
    /// modelled): `max`, swap charges that met memory.swap.max, and `fail`, swap-outs
    /// that got no slot (none free, or at memory.swap.max); hierarchical, each counted in
    /// the swapped folio's memcg and its ancestors.
    #[serde(rename = "memory.swap.events", default)]
    pub swap_events: IndexMap<String, u64>,
    /// The model's per-memcg counts that 6.1's memory.stat does not have (hierarchical):
    /// kernel counters 6.1 keeps only globally, as the model attributes them to memcgs
    /// (`pswpin`, `pswpout`, `pgscan_anon`, `pgscan_file`, `pgsteal_anon`,
    /// `pgsteal_file`, `pgrotated`, `nr_dirtied`, `nr_written`), and the model's own
    /// counters (`lru_gen_aging`, `lru_gen_abort_scan`, ...).
    #[serde(default)]
    pub model_counters: BTreeMap<String, u64>,
    /// memory.pressure at the end of the run (hierarchical: a task's stall counts in its
    /// memcg and every ancestor; the root's is the system-wide one).
    #[serde(rename = "memory.pressure", default)]
    pub pressure: Pressure,
}

/// memory.stat's keys that the results carry, in the order 6.1's memory_stat_format()
/// prints them (memory_stats[], then the pgscan and pgsteal sums, then
/// memcg_vm_event_stat[]).
pub const MEMORY_STAT_KEYS: [&str; 24] = [
    "file_dirty",
    "file_writeback",
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "unevictable",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "pgscan",
    "pgsteal",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgfault",
    "pgmajfault",
    "pgrefill",
    "pgactivate",
    "pgdeactivate",
];

impl MemcgResult {
    /// A value by name: a memory.stat key, else one of `model_counters`; `usage` and
    /// `swap` (the tables' column names) are memory.current and memory.swap.current.
    pub fn get(&self, key: &str) -> Option<u64> {
        match key {
            "usage" => Some(self.current),
            "swap" => Some(self.swap_current),
            _ => (self.stat.get(key))
                .or_else(|| self.model_counters.get(key))
                .copied(),
        }
    }
}

impl VariantResult {
    /// A global counter by name: a vmstat key, else one of `model_counters`.
    pub fn counter(&self, key: &str) -> Option<u64> {
        (self.vmstat.get(key))
            .or_else(|| self.model_counters.get(key))
            .copied()
    }
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct WorkloadResult {
    pub ops: u64,
    pub ops_per_sec: f64,
    pub mib_per_sec: f64,
    /// Virtual seconds over which `ops` were measured.
    pub measured_s: f64,
    pub latency_ns: Latency,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct Latency {
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

impl From<&crate::kernel::stats::Histogram> for Latency {
    fn from(h: &crate::kernel::stats::Histogram) -> Self {
        Latency {
            p50: h.quantile(0.5),
            p99: h.quantile(0.99),
            max: h.max(),
        }
    }
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct LockResult {
    pub instances: u64,
    pub acquisitions: u64,
    /// Acquisitions that had to wait.
    pub contended: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
    /// Share of all simulated CPU time spent spinning on this lock class.
    pub spin_share: f64,
    /// Acquisitions by a relock (folio_lruvec_relock_irq) that dropped another lock of
    /// the class first.
    pub relocks: u64,
    /// The wait time of the most contended instance.
    pub max_wait_ns: u64,
    /// By the code that took the lock (lru_add, activate, move_tail, isolate, putback,
    /// note_cost, free, other); sites never taken are left out.
    pub sites: BTreeMap<String, LockSiteResult>,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct LockSiteResult {
    pub acquisitions: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct OomKill {
    pub time_s: f64,
    /// "global" or the memcg path whose limit was hit.
    pub scope: String,
    /// The victim's workload (process).
    pub victim: String,
    /// The memcg the victim's process is charged to.
    #[serde(default)]
    pub victim_memcg: String,
    /// The stall before the kill: how long the task that called the OOM killer had
    /// been reclaiming for the charge or allocation that failed (from its first limit
    /// reclaim of the charge, its first direct reclaim of the allocation, or the start
    /// of the memory.max write); None when kswapd called it (MGLRU's min_ttl_ms).
    #[serde(default)]
    pub stall_s: Option<f64>,
}

impl VariantResult {
    /// The same result with host wall time zeroed: what determinism compares.
    pub fn without_wall_time(&self) -> VariantResult {
        VariantResult {
            wall_s: 0.0,
            ..self.clone()
        }
    }
}

/// A headline's band over a plan's points.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Band {
    pub headline: String,
    /// At the scenario's own costs (a fraction: 0.082 is +8.2%); null without a value.
    pub value: Option<f64>,
    /// The lowest and highest value over every point.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Some point gives the change another sign than `value` (0 has a sign of its own).
    pub sign_changes: bool,
    /// The costs whose one-at-a-time runs move it most, largest swing first.
    pub drivers: Vec<Driver>,
}

/// A cost's one-at-a-time effect on a headline.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Driver {
    pub cost: String,
    pub at_low: Option<f64>,
    pub at_high: Option<f64>,
    /// |at_high - at_low|.
    pub swing: f64,
}

/// The sensitivity of every headline of a compare (or of a scenario's expectations).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Sensitivity {
    /// The costs varied, each with the range it was varied over in the first variant.
    pub costs: BTreeMap<String, [u64; 2]>,
    /// Random design points and their seed.
    pub random_points: usize,
    pub seed: u64,
    /// Runs made (points whose costs equal the base's reuse its runs).
    pub runs: usize,
    pub bands: Vec<Band>,
}
