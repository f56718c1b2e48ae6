//! What a run produces: the JSON document `--json` writes and the tables print from.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    /// The scenario's description (what it shows, and the figures it is compared with).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub seed: u64,
    pub variants: Vec<VariantResult>,
    /// `compare --sensitivity`: each headline's band over the costs' ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<crate::output::sensitivity::Sensitivity>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct VariantResult {
    pub name: String,
    pub virtual_time_s: f64,
    /// Host wall time; the only field that differs between two runs of one scenario.
    pub wall_s: f64,
    /// Global counters named as /proc/vmstat names them.
    pub vmstat: BTreeMap<String, u64>,
    /// Per memcg path: "memory.stat" and "memory.events" maps (hierarchical, as cgroup v2).
    pub memcgs: BTreeMap<String, MemcgResult>,
    /// Per workload (or `workload:phase` for multi-phase workloads).
    pub workloads: BTreeMap<String, WorkloadResult>,
    /// Per lock class ("lru_lock"): totals over every lock instance.
    pub locks: BTreeMap<String, LockResult>,
    /// kswapd's virtual CPU time by category, summed over nodes.
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
    /// Direct reclaim: the time each try_to_free_pages() call took (allocation stalls).
    pub alloc_stall: AllocStall,
}

/// Allocation stalls: how many direct reclaim calls (try_to_free_pages) there were and
/// the distribution of the virtual time each took.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
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

/// One generation as /sys/kernel/debug/lru_gen prints it.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct LruGenGen {
    pub seq: u64,
    /// Milliseconds since the generation was born (virtual time).
    pub age_ms: u64,
    /// Pages of each type; 0 for a type whose min_seq is past this generation.
    pub anon: u64,
    pub file: u64,
}

/// The lru_gen view of one lruvec (a memcg on a node): its generations, oldest first.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct LruGenView {
    pub node: u32,
    pub gens: Vec<LruGenGen>,
}

/// The MGLRU state of one lruvec (struct lru_gen_struct and its mm walk state).
/// Per-type arrays are [anon, file]; per-tier arrays are tiers 0..=3, except
/// `protected`, tiers 1..=3 (tier 0 is never protected).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct LruGenState {
    pub node: u32,
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    pub gens: Vec<LruGenGen>,
    /// PID controller: the running averages, halved each time min_seq advances.
    pub avg_refaulted: [[u64; 4]; 2],
    pub avg_total: [[u64; 4]; 2],
    /// PID controller: the counters of the current oldest generation.
    pub refaulted: [[u64; 4]; 2],
    pub evicted: [[u64; 4]; 2],
    pub protected: [[u64; 3]; 2],
    pub mm_walk: MmWalkStats,
}

/// The page-table walk's mm_state: the last completed round and the 6.1 mm stats.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct MmWalkStats {
    pub seq: u64,
    pub leaf_total: u64,
    pub leaf_old: u64,
    pub leaf_young: u64,
    pub nonleaf_total: u64,
    pub nonleaf_found: u64,
    pub nonleaf_added: u64,
}

/// An `[[event]]` command and how it ended ("ok" or the errno name).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct EventResult {
    pub time_s: f64,
    pub command: String,
    pub result: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct MemcgResult {
    #[serde(rename = "memory.stat")]
    pub stat: BTreeMap<String, u64>,
    #[serde(rename = "memory.events")]
    pub events: BTreeMap<String, u64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct WorkloadResult {
    pub ops: u64,
    pub ops_per_sec: f64,
    pub mib_per_sec: f64,
    /// Virtual seconds over which `ops` were measured.
    pub measured_s: f64,
    pub latency_ns: Latency,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
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

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
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

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct LockSiteResult {
    pub acquisitions: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
}

/// Virtual CPU time by category, as a perf profile would attribute cycles.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub total_ns: u64,
    /// Category name -> nanoseconds. Categories: rmap_walk, pte_scan (look-around and
    /// page-table walks), list_ops, lock_wait, compression, io, other.
    pub categories: BTreeMap<String, u64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct OomKill {
    pub time_s: f64,
    /// "global" or the memcg path whose limit was hit.
    pub scope: String,
    pub victim: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub time_s: f64,
    pub free_pages: u64,
    /// Per memcg path: [inactive_anon, active_anon, inactive_file, active_file].
    pub lru: BTreeMap<String, [u64; 4]>,
    /// MGLRU: per memcg path, the lru_gen view of each node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<BTreeMap<String, Vec<LruGenView>>>,
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
