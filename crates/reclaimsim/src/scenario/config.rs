//! The scenario schema: what a scenario file may say. Loading, `--set` overrides,
//! variants and error locations live in `scenario`.

use crate::sim::cost::CostTable;
use crate::sim::topology::Topology;
use crate::units::{ByteSize, Duration, PAGE_SIZE};
use crate::workload::WorkloadOptions;
use serde::Deserialize;

pub use crate::kernel::config::{
    BatchAging, KernelConfig, LruLockKind, MemcgReclaim, PolicyKind, SwapDevice,
};

fn one() -> u64 {
    1
}

fn unscaled() -> f64 {
    1.0
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
    /// Multiplies every size that grows with the experiment (memory, swap, memcg limits,
    /// workload regions and files, memtier's key range) by this positive number, rounding
    /// to whole pages; durations, counts of threads, requests and I/O, and costs stay
    /// (`scenario::scale`). Applied when the scenario is loaded, before it is checked, so
    /// the sizes read from a loaded `Scenario` are already scaled. Default 1, which
    /// changes nothing.
    #[serde(default = "unscaled")]
    pub scale: f64,
    /// Sizes `scale` leaves as written, by their paths as `--set` writes them
    /// (`machine.swap.size`, `memcg."/a".max`, `workload.fio.fio.size`).
    #[serde(default)]
    pub scale_exempt: Vec<String>,
    /// Durations `scale` multiplies too, by their `--set` paths
    /// (`workload.fio.fio.runtime`): run lengths that are an amount of work at the
    /// scenario's size (a window in which each memcg reads its limit a few times over, a
    /// ramp that makes a number of passes over the files). Others stay as written.
    #[serde(default)]
    pub scale_durations: Vec<String>,
    /// Stop the run at this virtual time even if workloads are still running.
    pub duration: Option<Duration>,
    /// How often the time series (free pages, lru sizes, lru_gen view) is sampled;
    /// without it the engine picks an interval after the run's length (100 to 200 samples).
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
    /// Controllers that run as a task at an interval, read what the kernel exposes and
    /// write cgroup files (`[[agent]]`, `scenario::agent` reads them).
    #[serde(default, rename = "agent")]
    pub agents: Vec<AgentConfig>,
    /// Each cost field's plausible range `[low, high]` on this scenario's machine, for
    /// sensitivity runs: set when the scenario is loaded (`scenario::profile::cost_ranges`),
    /// not read from the file.
    #[serde(skip)]
    pub cost_ranges: std::collections::BTreeMap<String, [u64; 2]>,
}

/// A write at a point in virtual time: exactly one of `command` (to
/// /sys/kernel/debug/lru_gen, MGLRU only), `file` with `memcg` (a cgroup v2 memory
/// file), or `sysctl`; `value` goes with `file` and `sysctl` (`scenario::event` reads
/// them).
///
/// lru_gen commands are for working-set estimation and proactive reclaim: `+ MEMCG NODE
/// SEQ [SWAPPINESS [FORCE_SCAN]]` ages, `- MEMCG NODE SEQ [SWAPPINESS [NR_TO_RECLAIM]]`
/// evicts, as the kernel reads them except that MEMCG is the memcg's path (`/`, `/a`)
/// and SEQ may be `max` (max_seq when the command runs) or `max-N`. Several commands may
/// be separated by `,` or `;`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    pub at: Duration,
    pub command: Option<String>,
    /// The memcg whose `file` is written (a `[[memcg]]` path).
    pub memcg: Option<String>,
    /// memory.high, memory.max, memory.low, memory.min or memory.reclaim.
    pub file: Option<String>,
    /// vm.swappiness, vm.watermark_scale_factor or lru_gen.min_ttl_ms.
    pub sysctl: Option<String>,
    /// What is written to `file` or `sysctl`: a size or "max", a number.
    pub value: Option<EventValue>,
    /// The CPU the write runs on (default: the CPU of kswapd of the first command's
    /// node, node 0's for a file or sysctl).
    pub cpu: Option<u32>,
}

/// A user-space controller (`kind`): a task that wakes at an interval, reads a memcg's
/// files and writes its limits. `kind = "senpai"`: facebookincubator/senpai's senpai.py,
/// its options under their names there (`scenario::agent` gives each its default);
/// `kind = "oomd"`: facebookincubator/oomd with its `ruleset`s (`scenario::oomd`);
/// `kind = "chromeos"`: Chrome OS's resourced and Chrome's tab discarding (`scenario::agent`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    pub kind: String,
    /// The `[[memcg]]` it controls (senpai).
    pub memcg: Option<String>,
    /// When it starts (senpai.py's start: its first reads and first write), default 0.
    pub start: Option<Duration>,
    /// senpai.py's `--interval` (ticks between probes) times its 1 s tick, as a time.
    pub interval: Option<Duration>,
    /// senpai.py's tick (`time.sleep(1)` in `run`), default `interval` / 6.
    pub tick: Option<Duration>,
    pub min_size: Option<ByteSize>,
    pub max_size: Option<ByteSize>,
    /// Target stall time (µs of memory.pressure's `some` total) since the last adjustment.
    pub pressure: Option<u64>,
    pub max_probe: Option<f64>,
    pub max_backoff: Option<f64>,
    pub coeff_probe: Option<f64>,
    pub coeff_backoff: Option<f64>,
    /// senpai: `"high"` (senpai.py, default) or `"reclaim"` (oomd's Senpai plugin with
    /// `immediate_backoff`: memory.reclaim, as the TMO paper runs it).
    pub mode: Option<String>,
    /// senpai in `"reclaim"` mode: the memory `some` avg10 and avg60 (percent) both
    /// must be under this to reclaim (oomd's `mem_pressure_pct`, default 0.1).
    pub mem_pressure_pct: Option<f64>,
    /// The CPU its task runs on (default: node 0's kswapd's CPUs, as an event's).
    pub cpu: Option<u32>,
    /// oomd's rulesets (`[[agent.ruleset]]`).
    #[serde(default, rename = "ruleset")]
    pub rulesets: Vec<RulesetConfig>,
    /// chromeos: the `[workload.tabs]` workload whose tabs Chrome discards.
    pub workload: Option<String>,
    /// chromeos: the critical margin (default 5.2% of RAM, swap.sh's).
    pub critical_margin: Option<ByteSize>,
    /// chromeos: swap's weight in available memory (default 4, resourced's).
    pub ram_swap_weight: Option<u64>,
    /// chromeos: vm.min_filelist_kbytes, the file cache not counted available (default
    /// 100000 KiB, swap.sh's).
    pub min_filelist: Option<ByteSize>,
}

/// An oomd ruleset as oomd's JSON config has it: `detectors`, groups of detector plugins
/// (`[[{ name = "pressure_above", ... }]]`), and `actions`, the action chain.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RulesetConfig {
    pub name: Option<String>,
    #[serde(default)]
    pub detectors: Vec<Vec<PluginConfig>>,
    #[serde(default)]
    pub actions: Vec<PluginConfig>,
}

/// An oomd plugin: its `name` and arguments, as oomd's config gives them.
pub type PluginConfig = std::collections::BTreeMap<String, PluginValue>;

/// An oomd plugin argument's value.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged, expecting = "a string, a number or a boolean")]
pub enum PluginValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

/// An event's `value`: a string (`"64MiB"`, `"max"`, `"32MiB swappiness=0"`) or a number.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged, expecting = "a string or a non-negative integer")]
pub enum EventValue {
    Number(u64),
    Text(String),
}

impl EventValue {
    /// The value as text.
    pub fn text(&self) -> String {
        match self {
            EventValue::Number(n) => n.to_string(),
            EventValue::Text(s) => s.clone(),
        }
    }
}

/// `[machine]`: memory, the CPU topology and NUMA nodes, swap and the cost profile.
/// Read through `MachineKeys`, so that `cpus` is the CPU count however it was given.
#[derive(Deserialize, Debug, Clone)]
#[serde(from = "MachineKeys")]
pub struct MachineConfig {
    /// Total physical memory: split evenly over the nodes, or the sum of the
    /// `[[machine.node]]` tables' (`machine.memory`, if also given, must equal it).
    pub memory: ByteSize,
    /// `machine.memory` as the file gave it (checked against the nodes' sum).
    pub memory_key: Option<ByteSize>,
    /// NUMA nodes (pgdats): `machine.nodes`, each with an equal share of the memory and
    /// of the cores, or the number of `[[machine.node]]` tables.
    pub nodes: u32,
    /// `machine.nodes` as the file gave it (checked against the node tables' count).
    pub nodes_key: Option<u32>,
    /// `[[machine.node]]`: each node's memory and CPUs, in node order; empty for the
    /// even split of `machine.nodes`.
    pub node: Vec<NodeConfig>,
    /// The number of logical CPUs: `machine.cpus`, or sockets x cores_per_socket x
    /// threads_per_core when those are given.
    pub cpus: u32,
    /// `machine.cpus` as the file gave it (checked against the topology's count).
    pub cpus_key: Option<u32>,
    /// Physical packages, each with its own last-level cache (default 1).
    pub sockets: Option<u32>,
    /// Cores per package; required when any topology key is given.
    pub cores_per_socket: Option<u32>,
    /// Hardware threads (SMT siblings) per core (default 1).
    pub threads_per_core: Option<u32>,
    /// `machine.little_cpus`: the CPUs that are little cores (the cost table's
    /// `little_compute` and `little_memory` slow them); empty when every core is alike.
    pub little_cpus: Vec<u32>,
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

/// The `[machine]` keys as written: the machine's topology (sockets, cores, SMT threads)
/// or its CPU count alone, its nodes, memory and swap.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MachineKeys {
    pub memory: Option<ByteSize>,
    pub nodes: Option<u32>,
    #[serde(default)]
    pub node: Vec<NodeConfig>,
    pub cpus: Option<u32>,
    pub sockets: Option<u32>,
    pub cores_per_socket: Option<u32>,
    pub threads_per_core: Option<u32>,
    /// The little cores of an asymmetric machine: a cpulist string (`"0-5"`) or a list.
    #[serde(default, deserialize_with = "cpu_list")]
    pub little_cpus: Option<Vec<u32>>,
    pub swap: Option<SwapConfig>,
    pub profile: Option<String>,
    pub start_jitter: Option<Duration>,
}

impl From<MachineKeys> for MachineConfig {
    /// Resolves the CPU count the way the topology describes it (the rules on the keys
    /// are checked when the scenario is, naming the key at fault).
    fn from(k: MachineKeys) -> MachineConfig {
        let given =
            k.sockets.is_some() || k.cores_per_socket.is_some() || k.threads_per_core.is_some();
        let cpus = match (given, k.cpus) {
            (false, cpus) => cpus.unwrap_or_else(default_cpus),
            (true, _) => {
                let n = u64::from(k.sockets.unwrap_or(1))
                    * u64::from(k.cores_per_socket.unwrap_or(0))
                    * u64::from(k.threads_per_core.unwrap_or(1));
                n.min(u64::from(u32::MAX)) as u32
            }
        };
        let sum = k.node.iter().map(|n| n.memory.0).sum();
        let nodes = match k.node.len() {
            0 => k.nodes.unwrap_or(1),
            n => n as u32,
        };
        MachineConfig {
            memory: k.memory.unwrap_or(ByteSize(sum)),
            memory_key: k.memory,
            nodes,
            nodes_key: k.nodes,
            node: k.node,
            cpus,
            cpus_key: k.cpus,
            sockets: k.sockets,
            cores_per_socket: k.cores_per_socket,
            threads_per_core: k.threads_per_core,
            little_cpus: k.little_cpus.unwrap_or_default(),
            swap: k.swap,
            profile: k.profile,
            start_jitter: k.start_jitter,
        }
    }
}

impl MachineConfig {
    /// `start_jitter` in ns, one jiffy (`kernel::throttle::JIFFY_NS`) when not set.
    pub fn start_jitter_ns(&self) -> u64 {
        (self.start_jitter).map_or(crate::kernel::throttle::JIFFY_NS, |d| d.0)
    }

    /// Whether the file describes the CPUs by sockets, cores and threads rather than by
    /// `cpus` alone.
    pub fn has_topology_keys(&self) -> bool {
        self.sockets.is_some() || self.cores_per_socket.is_some() || self.threads_per_core.is_some()
    }

    /// The machine's sockets, cores, SMT threads and nodes; with `cpus` alone, one socket
    /// of `cpus` single-threaded cores (`Topology::flat`).
    /// With `[[machine.node]]` tables, each node holds the CPUs its table lists.
    pub fn topology(&self) -> Topology {
        let t = if !self.has_topology_keys() {
            Topology::flat(self.cpus, self.nodes)
        } else {
            Topology::new(
                self.sockets.unwrap_or(1),
                self.cores_per_socket.unwrap_or(0),
                self.threads_per_core.unwrap_or(1),
                self.nodes,
            )
        };
        let t = match self.node.is_empty() {
            true => t,
            false => {
                t.with_node_cpus(&self.node.iter().map(|n| n.cpus.clone()).collect::<Vec<_>>())
            }
        };
        match self.little_cpus.is_empty() {
            true => t,
            false => t.with_little_cpus(&self.little_cpus),
        }
    }

    /// Each node's memory in pages, from `[[machine.node]]`; empty for the even split.
    pub fn node_pages(&self) -> Vec<u64> {
        self.node.iter().map(|n| n.memory.pages()).collect()
    }
}

/// One `[[machine.node]]`: a NUMA node's memory and CPUs, as
/// /sys/devices/system/node/nodeN/meminfo (MemTotal) and cpulist show them.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// The node's memory (its zone's managed pages).
    pub memory: ByteSize,
    /// Its CPUs: a cpulist string (`"0-7,16-23"`) or a list; `""` for a memory-only node
    /// (CXL memory, or a node whose CPUs are offline), whose kswapd may run on any CPU.
    #[serde(deserialize_with = "node_cpu_list")]
    pub cpus: Vec<u32>,
}

/// A node's `cpus`: as a workload's `cpus` (`cpu_list`), and `""` for none.
fn node_cpu_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    match toml::Value::deserialize(d)? {
        toml::Value::String(s) if s.trim().is_empty() => Ok(Vec::new()),
        v => cpu_list(v)
            .map(Option::unwrap_or_default)
            .map_err(serde::de::Error::custom),
    }
}
fn default_cpus() -> u32 {
    4
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SwapConfig {
    pub device: SwapDevice,
    pub size: ByteSize,
    /// The SSD's device profile: "nvme" (default) or "sata". Unused with another device
    /// (so that a variant can switch devices).
    pub profile: Option<crate::kernel::config::SsdProfile>,
    /// zswap in front of the device (mm/zswap.c, Linux 6.1); off when absent.
    pub zswap: Option<crate::kernel::config::ZswapConfig>,
    /// zram's mem_limit: the most its compressed pool may take of RAM (zram only; "0"
    /// or absent: no limit).
    pub mem_limit: Option<ByteSize>,
    /// zram's comp_algorithm (zram only): "lzo-rle" (default), "lzo", "lz4" or "zstd".
    pub comp_algorithm: Option<crate::kernel::config::Compressor>,
    /// zram's backing device for writeback (zram only; CONFIG_ZRAM_WRITEBACK).
    pub backing_dev: Option<BackingDevConfig>,
}

/// `machine.swap.backing_dev`: the block device zram writes idle or huge pages back to.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct BackingDevConfig {
    /// enabled: false takes the device away (so that a variant can): zram.writeback
    /// then fails with ENODEV, as 6.1's writeback_store without a backing_dev.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The SSD's profile: "nvme" (default) or "sata", as the SSD swap device's.
    #[serde(default)]
    pub profile: crate::kernel::config::SsdProfile,
    /// Its size (default: the zram device's, `size`).
    pub size: Option<ByteSize>,
}

fn yes() -> bool {
    true
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
    /// memory.swap.max: a size, or "max" (no limit, as when absent).
    #[serde(default, deserialize_with = "size_or_max")]
    pub swap_max: Option<ByteSize>,
    /// memory.zswap.max: a size, or "max" (no limit, as when absent).
    #[serde(default, deserialize_with = "size_or_max")]
    pub zswap_max: Option<ByteSize>,
}

/// A size, or the string "max" (no limit: None), as cgroup v2's limit files take them.
fn size_or_max<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ByteSize>, D::Error> {
    match toml::Value::deserialize(d)? {
        toml::Value::String(s) if s.trim() == "max" => Ok(None),
        v => ByteSize::deserialize(v)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

/// One workload, placed in a memcg and a cpuset. Exactly one of the workload
/// tables (`fio`, `memcached`, `dd`, `page_fault3`, `anon`, `trace`) must be present.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    pub name: String,
    #[serde(default = "root_path")]
    pub memcg: String,
    /// The CPUs of the workload's cpuset (cgroup v2 cpuset.cpus): a list, whose order
    /// `pin` follows, or a cpulist string (`"0-17,36-53"`). Default: all CPUs.
    #[serde(default, deserialize_with = "cpu_list")]
    pub cpus: Option<Vec<u32>>,
    /// memcached only: simulate memtier's client threads as tasks allowed on these CPUs
    /// (a list or a cpulist string), one per memcached thread; without it the clients
    /// are not simulated and each batch waits `loopback_wait`.
    #[serde(default, deserialize_with = "cpu_list")]
    pub client_cpus: Option<Vec<u32>>,
    /// Run on this NUMA node's CPUs (`numactl --cpunodebind`): the cpuset is the node's
    /// CPUs (with `cpus`, both). Memory is not bound: the kernel's local allocation takes
    /// it from the node first and falls back to the others when the node is short.
    pub node: Option<u32>,
    /// Bind the workload's memory to these nodes (cgroup v2 cpuset.mems, `numactl
    /// --membind`: MPOL_BIND): a node list string (`"0"`, `"0-1"`) or a list. Its page
    /// allocations come only from them, nearest first; reclaim for them shrinks only
    /// them, and an allocation they cannot satisfy OOMs. Default: every node.
    #[serde(default, deserialize_with = "node_list")]
    pub mems: Option<Vec<u32>>,
    /// Pin thread t to the t-th CPU of the cpuset, round-robin (sched_setaffinity to one
    /// CPU, as `taskset -c` per thread); otherwise the scheduler places the threads
    /// anywhere in the cpuset.
    #[serde(default)]
    pub pin: bool,
    /// Start at this virtual time...
    #[serde(default)]
    pub start: Duration,
    /// ...or when this workload (or `workload:phase`) finishes.
    pub after: Option<String>,
    /// Stop when this workload finishes (fio killed when memtier is done, as the seeds do).
    pub until: Option<String>,
    /// What its processes' anon pages hold, in percent of each kind (zswap compresses
    /// them accordingly); default all `items2000`.
    pub page_content: Option<crate::kernel::config::PageContent>,
    pub fio: Option<crate::workload::fio::FioOptions>,
    pub memcached: Option<crate::workload::memtier::MemcachedOptions>,
    pub dd: Option<crate::workload::dd::DdOptions>,
    pub page_fault3: Option<crate::workload::pagefault::PageFault3Options>,
    pub anon: Option<crate::workload::anon::AnonOptions>,
    pub tabs: Option<crate::workload::tabs::TabsOptions>,
    pub trace: Option<crate::workload::trace::TraceOptions>,
}

fn root_path() -> String {
    "/".to_string()
}

/// Reads `cpus` as either a list of CPU numbers (kept in its order) or a cpulist string
/// in the kernel's format (`sim::topology::parse_cpulist`: ascending, each once).
fn cpu_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
    struct CpuList;
    impl<'de> serde::de::Visitor<'de> for CpuList {
        type Value = Vec<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of CPU numbers or a cpulist string such as \"0-17,36-53\"")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Vec<u32>, E> {
            crate::sim::topology::parse_cpulist(text)
                .map_err(|e| E::custom(format!("{text:?}: {e}")))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u32>, A::Error> {
            let mut cpus = Vec::new();
            while let Some(c) = seq.next_element::<u32>()? {
                cpus.push(c);
            }
            Ok(cpus)
        }
    }
    d.deserialize_any(CpuList).map(Some)
}

/// Reads `mems` as a list of node numbers or a node list string (`"0-1,3"`,
/// `sim::topology::parse_nodelist`); ascending, each once.
fn node_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
    let mut nodes = match toml::Value::deserialize(d)? {
        toml::Value::String(text) => crate::sim::topology::parse_nodelist(&text)
            .map_err(|e| serde::de::Error::custom(format!("{text:?}: {e}")))?,
        v => Vec::<u32>::deserialize(v).map_err(|_| {
            serde::de::Error::custom("a list of node numbers or a node list string such as \"0-1\"")
        })?,
    };
    nodes.sort_unstable();
    nodes.dedup();
    Ok(Some(nodes))
}

impl WorkloadConfig {
    /// `mems` as the kernel takes it: a bit per allowed node, 0 for no binding (every
    /// node).
    pub fn mems_mask(&self) -> u64 {
        (self.mems.iter().flatten()).fold(0, |m, &n| m | 1u64.checked_shl(n).unwrap_or(0))
    }

    /// The CPUs the workload may run on, ascending (its cpuset's effective CPUs): `cpus`,
    /// the CPUs of `node`, both, or all the machine's CPUs.
    pub fn cpuset(&self, topology: &Topology) -> Vec<u32> {
        let mut cpus = self
            .cpus
            .clone()
            .unwrap_or_else(|| (0..topology.nr_cpus()).collect());
        cpus.sort_unstable();
        cpus.dedup();
        if let Some(node) = self.node {
            cpus.retain(|&c| c < topology.nr_cpus() && topology.node_of(c) == node);
        }
        cpus
    }

    /// With `pin`, the one CPU thread `t` is bound to: the (t mod n)-th of `cpus` in the
    /// order given (those on `node` when both are set), or of the cpuset; `None` when the
    /// scheduler may place the thread anywhere in the cpuset.
    pub fn pinned_cpu(&self, t: usize, topology: &Topology) -> Option<u32> {
        if !self.pin {
            return None;
        }
        let on_node = |c: &u32| self.node.is_none_or(|n| topology.node_of(*c) == n);
        let order: Vec<u32> = match &self.cpus {
            Some(cpus) => cpus.iter().copied().filter(on_node).collect(),
            None => self.cpuset(topology),
        };
        (!order.is_empty()).then(|| order[t % order.len()])
    }

    /// The one workload table given, or an error naming what is wrong.
    pub fn options(&self) -> Result<WorkloadOptions, String> {
        // Every field named, none with `..`: a new workload table added to the struct
        // does not compile until it is read here too.
        let Self {
            name: _,
            memcg: _,
            cpus: _,
            client_cpus: _,
            node: _,
            mems: _,
            pin: _,
            start: _,
            after: _,
            until: _,
            page_content: _,
            fio,
            memcached,
            dd,
            page_fault3,
            anon,
            tabs,
            trace,
        } = self;
        let mut found = Vec::new();
        if let Some(o) = fio {
            found.push(WorkloadOptions::Fio(o.clone()));
        }
        if let Some(o) = memcached {
            found.push(WorkloadOptions::Memcached(o.clone()));
        }
        if let Some(o) = dd {
            found.push(WorkloadOptions::Dd(o.clone()));
        }
        if let Some(o) = page_fault3 {
            found.push(WorkloadOptions::PageFault3(o.clone()));
        }
        if let Some(o) = anon {
            found.push(WorkloadOptions::Anon(o.clone()));
        }
        if let Some(o) = tabs {
            found.push(WorkloadOptions::Tabs(o.clone()));
        }
        if let Some(o) = trace {
            found.push(WorkloadOptions::Trace(o.clone()));
        }
        match found.len() {
            1 => Ok(found.pop().unwrap()),
            0 => Err("needs one of the tables fio, memcached, dd, page_fault3, anon, tabs, trace".into()),
            _ => Err(
                "has more than one of the tables fio, memcached, dd, page_fault3, anon, tabs, trace"
                    .into(),
            ),
        }
    }
}

/// zram's settings from `machine.swap` (unused unless the device is zram).
fn zram_config(sw: Option<&SwapConfig>) -> crate::kernel::config::ZramConfig {
    use crate::kernel::config::{BackingDev, Compressor, ZramConfig};
    let Some(sw) = sw else {
        return ZramConfig::default();
    };
    ZramConfig {
        mem_limit: sw.mem_limit.map_or(0, |b| b.0.div_ceil(PAGE_SIZE)),
        comp_algorithm: sw.comp_algorithm.unwrap_or(Compressor::LzoRle),
        backing_dev: (sw.backing_dev.filter(|b| b.enabled)).map(|b| BackingDev {
            profile: b.profile,
            pages: b.size.unwrap_or(sw.size).pages(),
        }),
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
            node_pages: m.node_pages(),
            topology: m.topology(),
            swap: m.swap.as_ref().map(|sw| (sw.device, sw.size.pages())),
            ssd_profile: (m.swap.as_ref())
                .filter(|sw| sw.device == SwapDevice::Ssd)
                .map(|sw| sw.profile.unwrap_or_default()),
            zswap: (m.swap.as_ref())
                .and_then(|sw| sw.zswap)
                .filter(|z| z.enabled),
            zram: zram_config(m.swap.as_ref()),
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
                    swap_max: pages(c.swap_max, u64::MAX),
                    zswap_max: pages(c.zswap_max, u64::MAX),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload table with `placement` as its cpuset keys (cgroup cpuset.cpus and
    /// the node binding) and an anon table.
    fn workload(placement: &str) -> Result<WorkloadConfig, String> {
        let text = format!("name = \"w\"\n{placement}\n[anon]\nsize = \"1MiB\"\n");
        toml::from_str(&text).map_err(|e| e.message().to_string())
    }

    #[test]
    fn cpus_as_list_keeps_its_order() {
        let w = workload("cpus = [5, 1, 5]").unwrap();
        assert_eq!(w.cpus, Some(vec![5, 1, 5]));
        let t = Topology::flat(8, 2);
        assert_eq!(w.cpuset(&t), [1, 5]);
        assert_eq!(w.pinned_cpu(0, &t), None);
    }

    #[test]
    fn cpus_as_cpulist_is_sorted() {
        let w = workload("cpus = \"6-7,0,2-3\"\npin = true").unwrap();
        assert_eq!(w.cpus, Some(vec![0, 2, 3, 6, 7]));
        let t = Topology::flat(8, 2);
        assert_eq!(w.pinned_cpu(6, &t), Some(2));
        let w = workload("cpus = \"6-7,0,2-3\"\nnode = 1\npin = true").unwrap();
        assert_eq!(w.cpuset(&t), [6, 7]);
        assert_eq!(w.pinned_cpu(1, &t), Some(7));
    }

    #[test]
    fn bad_cpulists() {
        for (bad, why) in [
            ("\"0-x\"", "\"0-x\": \"x\" is not a CPU number"),
            (
                "\"3-1\"",
                "\"3-1\": range 3-1: its end comes before its start",
            ),
            ("\"\"", "\"\": an empty entry"),
            ("3", "a list of CPU numbers or a cpulist string"),
            ("[-1]", "expected u32"),
        ] {
            let e = workload(&format!("cpus = {bad}")).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn machine_topology_from_its_keys() {
        let machine = |text: &str| -> MachineConfig {
            toml::from_str(&format!("memory = \"1GiB\"\n{text}")).unwrap()
        };
        assert_eq!(machine("").topology(), Topology::flat(4, 1));
        assert_eq!(
            machine("cpus = 8\nnodes = 2").topology(),
            Topology::flat(8, 2)
        );
        let m = machine("sockets = 2\ncores_per_socket = 26\nthreads_per_core = 2\nnodes = 2");
        assert_eq!(
            (m.cpus, m.cpus_key, m.topology().nr_cpus()),
            (104, None, 104)
        );
        let m = machine("cores_per_socket = 18\ncpus = 36");
        assert_eq!((m.cpus, m.cpus_key), (18, Some(36)));
    }
}
