//! The scenario schema: what a scenario file may say. Loading, `--set` overrides,
//! variants and error locations live in `scenario`.

use crate::sim::cost::CostTable;
use crate::units::{ByteSize, Duration, PAGE_SIZE};
use crate::workload::WorkloadOptions;
use serde::Deserialize;

pub use crate::kernel::config::{
    BatchAging, KernelConfig, LruLockKind, MemcgReclaim, PolicyKind, SwapDevice,
};

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
    /// Each workload thread starts at its workload's start plus an offset drawn from the
    /// scenario's seed, uniform in [0, start_jitter): where a task's first run falls
    /// within a scheduler tick. Default one jiffy (4 ms at HZ = 250). With jitter, tasks
    /// due at the same virtual time also run in a seeded order rather than by task id;
    /// `"0"` turns both off (every thread at its workload's start, ties by task id).
    pub start_jitter: Option<Duration>,
}

impl MachineConfig {
    /// `start_jitter` in ns, one jiffy (`kernel::throttle::JIFFY_NS`) when not set.
    pub fn start_jitter_ns(&self) -> u64 {
        (self.start_jitter).map_or(crate::kernel::throttle::JIFFY_NS, |d| d.0)
    }
}

fn default_nodes() -> u32 {
    1
}
fn default_cpus() -> u32 {
    4
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SwapConfig {
    pub device: SwapDevice,
    pub size: ByteSize,
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
    /// memcached: simulate memtier's client threads as tasks on these CPUs (TEMP list).
    pub client_cpus: Option<Vec<u32>>,
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
    /// TEMP
    pub fn cpuset(&self, topo: &crate::sim::topology::Topology) -> Vec<u32> {
        let mut v = self
            .cpus
            .clone()
            .unwrap_or_else(|| (0..topo.nr_cpus()).collect());
        v.sort_unstable();
        v.dedup();
        v
    }
    /// TEMP
    pub fn pinned_cpu(&self, t: usize, _topo: &crate::sim::topology::Topology) -> Option<u32> {
        let _ = t;
        None
    }

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

impl Scenario {
    /// What the kernel is built from: the machine in pages, the kernel configuration,
    /// the cost table and the memcg tree with its limits.
    pub fn kernel_setup(&self) -> crate::kernel::config::Setup {
        use crate::kernel::config::{MemcgSetup, Setup};
        let pages = |b: Option<ByteSize>, none: u64| b.map_or(none, |b| b.0 / PAGE_SIZE);
        let m = &self.machine;
        Setup {
            memory_pages: m.memory.pages(),
            nodes: m.nodes,
            cpus: m.cpus,
            swap: m.swap.as_ref().map(|sw| (sw.device, sw.size.pages())),
            kernel: self.kernel.clone(),
            costs: self.costs.clone(),
            memcgs: self
                .memcgs
                .iter()
                .map(|c| MemcgSetup {
                    path: c.path.clone(),
                    max: pages(c.max, u64::MAX),
                    high: pages(c.high, u64::MAX),
                    low: pages(c.low, 0),
                    min: pages(c.min, 0),
                })
                .collect(),
        }
    }
}
