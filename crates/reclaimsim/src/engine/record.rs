//! What the engine records while a run goes on (the time series, the outcome of each
//! `[[event]]` command); the results layer (`crate::results`) hands them out as they are.

use crate::kernel::lru::mglru::debugfs::LruGenGen;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The lru_gen view of one lruvec (a memcg on a node): its generations, oldest first.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct LruGenView {
    pub node: u32,
    pub gens: Vec<LruGenGen>,
}

/// An `[[event]]` command and how it ended ("ok" or the errno name).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct EventResult {
    pub time_s: f64,
    pub command: String,
    pub result: String,
}

/// An `[[agent]]`: its kind, its memcg and each limit it wrote.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct AgentResult {
    pub kind: String,
    pub memcg: String,
    pub writes: Vec<AgentWrite>,
    /// oomd: each kill, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kills: Vec<AgentKill>,
}

/// A kill by an oomd agent: when, the ruleset and action (plugin) that made it, the
/// cgroup killed and its processes (by workload); `dry`: only logged, as oomd's `dry`.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct AgentKill {
    pub time_s: f64,
    pub ruleset: String,
    pub action: String,
    pub memcg: String,
    pub victims: Vec<String>,
    #[serde(default)]
    pub dry: bool,
}

/// One write of an agent: when, the memory pressure it had read (senpai: the `some`
/// stall in µs since its last adjustment, its `integral`; 0 in reclaim mode, whose
/// writes follow the averages) and the memory.high it wrote or the memory.reclaim it
/// asked (bytes).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct AgentWrite {
    pub time_s: f64,
    pub pressure_us: u64,
    /// The memory.high written (0 for a memory.reclaim write).
    pub memory_high: u64,
    /// The bytes asked of memory.reclaim (senpai's reclaim mode), if this write was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_reclaim: Option<u64>,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub time_s: f64,
    pub free_pages: u64,
    /// Per memcg path: [inactive_anon, active_anon, inactive_file, active_file].
    pub lru: BTreeMap<String, [u64; 4]>,
    /// MGLRU: per memcg path, the lru_gen view of each node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lru_gen: Option<BTreeMap<String, Vec<LruGenView>>>,
    /// Per memcg path: the `some` and `full` totals of its memory.pressure so far (µs);
    /// the root's ("/") are the system-wide /proc/pressure/memory.
    #[serde(default)]
    pub pressure: BTreeMap<String, [u64; 2]>,
}

/// What the scheduler did (`engine::cfs`): each CPU's use and each task's placement.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct SchedUse {
    pub cpus: Vec<CpuUse>,
    pub tasks: Vec<TaskUse>,
}

/// One CPU over the run.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct CpuUse {
    pub cpu: u32,
    /// The share of the run's virtual time it ran tasks.
    pub busy_fraction: f64,
    /// Times a task started on it that was not the last to run there.
    pub context_switches: u64,
    /// A little core of an asymmetric machine (`machine.little_cpus`); left out when
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub little: bool,
}

/// One task over the run.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct TaskUse {
    /// `workload/N` (thread N), `workload/clientN`, `kswapdN`, `flusher`, `eventN`.
    pub task: String,
    /// Virtual CPU time it ran (s).
    pub cpu_s: f64,
    /// Virtual time it was runnable and waited in a run queue (s).
    pub runqueue_wait_s: f64,
    /// Moves to another CPU.
    pub migrations: u64,
    /// The CPUs it ran on, ascending.
    pub cpus: Vec<u32>,
    /// Its CPU time by category (`cpu_s` in ns, as `kswapd_profile` has kswapd's).
    #[serde(default)]
    pub profile: Profile,
    /// The part of `profile` spent in a memory stall as PSI counts one (reclaim, a
    /// refault's read, a throttle).
    #[serde(default)]
    pub memstall: Profile,
}

/// Virtual CPU time by category, as a perf profile would attribute cycles.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub total_ns: u64,
    /// Category name -> nanoseconds. Categories: rmap_walk, unmap, pte_scan
    /// (look-around and page-table walks), list_ops, lock_wait, compression, io, other
    /// (the rest of the kernel), work (the workload's own work per operation), irq
    /// (flush IPIs handled).
    pub categories: BTreeMap<String, u64>,
}

impl Profile {
    /// The profile of per-category times `ns` (`kernel::stats::CAT_NAMES`' order).
    pub fn of(ns: &[u64]) -> Profile {
        Profile {
            total_ns: ns.iter().sum(),
            categories: (crate::kernel::stats::CAT_NAMES.iter().zip(ns))
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
        }
    }

    /// Adds `other`'s time, category by category.
    pub fn add(&mut self, other: &Profile) {
        self.total_ns += other.total_ns;
        for (c, ns) in &other.categories {
            *self.categories.entry(c.clone()).or_default() += ns;
        }
    }
}

impl SchedUse {
    /// Each task group's CPU profile (`TaskUse::group`: its tasks' summed) and the part
    /// of it in a memory stall; groups whose tasks did no work are left out.
    pub fn group_profiles(&self) -> BTreeMap<String, (Profile, Profile)> {
        let mut groups: BTreeMap<String, (Profile, Profile)> = BTreeMap::new();
        for t in self.tasks.iter().filter(|t| t.profile.total_ns > 0) {
            let (all, stalled) = groups.entry(t.group()).or_default();
            all.add(&t.profile);
            stalled.add(&t.memstall);
        }
        groups
    }
}

impl TaskUse {
    /// The task's group: its workload (`fio`), the workload's clients (`memcached
    /// clients`), or the kernel thread's kind (`kswapd`, `flusher`, `event`).
    pub fn group(&self) -> String {
        match self.task.split_once('/') {
            Some((w, t)) if t.starts_with("client") => format!("{w} clients"),
            Some((w, _)) => w.to_string(),
            None => (self.task)
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .to_string(),
        }
    }
}
