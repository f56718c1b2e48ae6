//! What a run produces: the JSON document `--json` writes and the tables print from.

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub variants: Vec<VariantResult>,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
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
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct MemcgResult {
    #[serde(rename = "memory.stat")]
    pub stat: BTreeMap<String, u64>,
    #[serde(rename = "memory.events")]
    pub events: BTreeMap<String, u64>,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct WorkloadResult {
    pub ops: u64,
    pub ops_per_sec: f64,
    pub mib_per_sec: f64,
    /// Virtual seconds over which `ops` were measured.
    pub measured_s: f64,
    pub latency_ns: Latency,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Latency {
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct LockResult {
    pub instances: u64,
    pub acquisitions: u64,
    /// Acquisitions that had to wait.
    pub contended: u64,
    pub wait_ns: u64,
    pub hold_ns: u64,
    /// Share of all simulated CPU time spent spinning on this lock class.
    pub spin_share: f64,
}

/// Virtual CPU time by category, as a perf profile would attribute cycles.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub total_ns: u64,
    /// Category name -> nanoseconds. Categories: rmap_walk, pte_scan (look-around and
    /// page-table walks), list_ops, lock_wait, compression, io, other.
    pub categories: BTreeMap<String, u64>,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct OomKill {
    pub time_s: f64,
    /// "global" or the memcg path whose limit was hit.
    pub scope: String,
    pub victim: String,
}

#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub time_s: f64,
    pub free_pages: u64,
    /// Per memcg path: [inactive_anon, active_anon, inactive_file, active_file].
    pub lru: BTreeMap<String, [u64; 4]>,
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
