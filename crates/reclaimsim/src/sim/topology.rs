//! The machine's CPU topology: sockets, cores and hardware threads (SMT siblings) as
//! Linux enumerates them on x86 (arch/x86/kernel/smpboot.c via the ACPI MADT order, as
//! /sys/devices/system/cpu/cpuN/topology shows), and which NUMA node each CPU belongs
//! to (/sys/devices/system/node/nodeN/cpulist). Plain numbers; nothing of the kernel's
//! state.

use serde::{Deserialize, Serialize};

/// The CPUs of a machine as Linux numbers them: the first hardware thread of every core
/// of every socket, then the second thread of each, and so on, so that on one socket of
/// 18 cores with 2 threads CPU c and CPU c + 18 are SMT siblings (what
/// `thread_siblings_list` shows). Each socket has one last-level cache (its L3, what
/// the scheduler's MC domain spans). Each CPU's NUMA node is read from a table: by
/// default the cores split evenly over the nodes in order of socket then core (one node
/// per socket, or sub-NUMA clusters within one); `with_node_cpus` gives each node its
/// own CPUs, none for a memory-only node (CXL memory, as `cpumask_of_node` is empty).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Physical packages (`physical_package_id`).
    pub sockets: u32,
    /// Cores in each package (`core_id` 0..cores_per_socket).
    pub cores_per_socket: u32,
    /// Hardware threads of each core (SMT: 2 with hyper-threading).
    pub threads_per_core: u32,
    /// NUMA nodes (`pgdat`s).
    pub nodes: u32,
    /// Each CPU's node (`cpu_to_node`), indexed by CPU.
    cpu_node: Vec<u32>,
    /// Whether each CPU is a little core (`machine.little_cpus`), indexed by CPU; empty
    /// when every core is alike.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    little: Vec<bool>,
}

impl Topology {
    /// `sockets` of `cores_per_socket` cores of `threads_per_core` threads, the cores
    /// split evenly over `nodes` nodes in order of socket then core.
    pub fn new(sockets: u32, cores_per_socket: u32, threads_per_core: u32, nodes: u32) -> Topology {
        let mut t = Topology {
            sockets,
            cores_per_socket,
            threads_per_core,
            nodes,
            cpu_node: Vec::new(),
            little: Vec::new(),
        };
        let cores = u64::from(t.nr_cores().max(1));
        t.cpu_node = (0..t.nr_cpus())
            .map(|cpu| (u64::from(t.core_of(cpu)) * u64::from(nodes) / cores) as u32)
            .collect();
        t
    }

    /// One socket of `cpus` single-threaded cores over `nodes` nodes: the machine a
    /// scenario with only `machine.cpus` describes (CPU c on node c * nodes / cpus).
    pub fn flat(cpus: u32, nodes: u32) -> Topology {
        Topology::new(1, cpus, 1, nodes)
    }

    /// The same CPUs on `node_cpus.len()` nodes, node n holding the CPUs of
    /// `node_cpus[n]` (`[[machine.node]]`; empty for a memory-only node). Every CPU must
    /// be on exactly one node (the scenario's check says which is not); a CPU on none
    /// stays on node 0.
    pub fn with_node_cpus(mut self, node_cpus: &[Vec<u32>]) -> Topology {
        self.nodes = node_cpus.len() as u32;
        self.cpu_node = vec![0; self.nr_cpus() as usize];
        for (n, cpus) in node_cpus.iter().enumerate() {
            for &c in cpus {
                if let Some(slot) = self.cpu_node.get_mut(c as usize) {
                    *slot = n as u32;
                }
            }
        }
        self
    }

    /// The same CPUs with those of `little` the slower cores of an asymmetric machine
    /// (big.LITTLE / DynamIQ: the CPUs whose device-tree `capacity-dmips-mhz` is the
    /// lower, as arch_scale_cpu_capacity reports them). A CPU past the machine's is left
    /// out (the scenario's check names it); none at all keeps every core alike.
    pub fn with_little_cpus(mut self, little: &[u32]) -> Topology {
        self.little = Vec::new();
        if little.iter().any(|&c| c < self.nr_cpus()) {
            self.little = vec![false; self.nr_cpus() as usize];
            for &c in little {
                if let Some(slot) = self.little.get_mut(c as usize) {
                    *slot = true;
                }
            }
        }
        self
    }

    /// Whether `cpu` is a little core; false on a machine of alike cores.
    pub fn is_little(&self, cpu: u32) -> bool {
        self.little.get(cpu as usize).copied().unwrap_or(false)
    }

    /// All physical cores of the machine (each with `threads_per_core` CPUs).
    pub fn nr_cores(&self) -> u32 {
        self.sockets * self.cores_per_socket
    }

    /// The number of logical CPUs (`nr_cpu_ids`).
    pub fn nr_cpus(&self) -> u32 {
        self.nr_cores() * self.threads_per_core
    }

    /// The logical CPU number of hardware thread `thread` of core `core` of `socket`, in
    /// Linux's x86 enumeration: all first threads, then all second threads.
    pub fn cpu(&self, socket: u32, core: u32, thread: u32) -> u32 {
        thread * self.nr_cores() + socket * self.cores_per_socket + core
    }

    /// The socket (`physical_package_id`) of a CPU; also its last-level cache, one L3
    /// per socket.
    pub fn socket_of(&self, cpu: u32) -> u32 {
        self.core_of(cpu) / self.cores_per_socket.max(1)
    }

    /// The machine-wide core of a CPU (`socket * cores_per_socket + core_id`): CPUs with
    /// the same core share its L1, L2 and execution units.
    pub fn core_of(&self, cpu: u32) -> u32 {
        cpu % self.nr_cores().max(1)
    }

    /// Which hardware thread of its core a CPU is (0 for the first sibling).
    pub fn thread_of(&self, cpu: u32) -> u32 {
        cpu / self.nr_cores().max(1)
    }

    /// The other hardware threads of the CPU's core (`thread_siblings_list` without the
    /// CPU itself), ascending.
    pub fn siblings(&self, cpu: u32) -> impl Iterator<Item = u32> {
        let (cores, core) = (self.nr_cores(), self.core_of(cpu));
        (0..self.threads_per_core)
            .map(move |t| t * cores + core)
            .filter(move |&c| c != cpu)
    }

    /// The NUMA node of a CPU (`cpu_to_node`), from the table: by default its core's
    /// share of the nodes, in order of socket then core (on one socket of
    /// single-threaded cores, `cpu * nodes / cpus`). A CPU past the machine's is on
    /// node 0.
    pub fn node_of(&self, cpu: u32) -> u32 {
        self.cpu_node.get(cpu as usize).copied().unwrap_or(0)
    }

    /// The CPUs of a NUMA node, ascending (`/sys/devices/system/node/nodeN/cpulist`).
    pub fn node_cpus(&self, node: u32) -> Vec<u32> {
        (0..self.nr_cpus())
            .filter(|&c| self.node_of(c) == node)
            .collect()
    }

    /// The CPUs that share a CPU's last-level cache (its socket's L3), ascending, the
    /// CPU included (`shared_cpu_list` of cache index3).
    pub fn llc_cpus(&self, cpu: u32) -> Vec<u32> {
        let socket = self.socket_of(cpu);
        (0..self.nr_cpus())
            .filter(|&c| self.socket_of(c) == socket)
            .collect()
    }
}

/// Reads a CPU list in the kernel's cpulist format (`bitmap_parselist`, as in
/// /sys/devices/system/cpu/online and cgroup v2's cpuset.cpus): comma-separated CPU
/// numbers and inclusive ranges, `"0-17,36-53"`. Returns the CPUs ascending, each once;
/// the error says which part is bad. Strides (`0-35:2/4`) are not read.
pub fn parse_cpulist(text: &str) -> Result<Vec<u32>, String> {
    parse_list(text, "CPU")
}

/// Writes ascending CPUs in the cpulist format, as /sys/devices/system/node/nodeN/cpulist
/// shows them (`bitmap_print_to_pagebuf`'s list form): `"0-25,52-77"`, `""` for none.
pub fn format_cpulist(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j == i {
            true => cpus[i].to_string(),
            false => format!("{}-{}", cpus[i], cpus[j]),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Reads a node list in the same format (`nodelist_parse`, as cgroup v2's cpuset.mems
/// and `numactl --membind` take it): `"0"`, `"0-1,3"`.
pub fn parse_nodelist(text: &str) -> Result<Vec<u32>, String> {
    parse_list(text, "node")
}

/// A list of `what`s (CPUs, nodes) in the kernel's list format.
fn parse_list(text: &str, what: &str) -> Result<Vec<u32>, String> {
    let number = |s: &str| {
        let s = s.trim();
        match s.parse::<u32>() {
            Ok(n) if !s.starts_with('+') => Ok(n),
            _ => Err(format!("\"{s}\" is not a {what} number")),
        }
    };
    let mut cpus = Vec::new();
    for part in text.split(',') {
        if part.trim().is_empty() {
            return Err(format!(
                "an empty entry (a {what} or a range FIRST-LAST between commas)"
            ));
        }
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return Err(format!(
                "range {}: its end comes before its start",
                part.trim()
            ));
        }
        if last - first >= 1 << 16 {
            return Err(format!(
                "range {}: more {what}s than a machine has",
                part.trim()
            ));
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One socket of 18 cores with 2 threads each and 2 nodes (sub-NUMA clustering).
    fn one_socket() -> Topology {
        Topology::new(1, 18, 2, 2)
    }

    #[test]
    fn siblings_are_a_core_count_apart() {
        let t = one_socket();
        assert_eq!(t.nr_cpus(), 36);
        assert_eq!(t.siblings(0).collect::<Vec<_>>(), [18]);
        assert_eq!(t.siblings(18).collect::<Vec<_>>(), [0]);
        assert_eq!(t.siblings(35).collect::<Vec<_>>(), [17]);
        assert_eq!((t.core_of(20), t.thread_of(20)), (2, 1));
        assert_eq!(t.cpu(0, 2, 1), 20);
        assert_eq!(t.socket_of(35), 0);
        assert_eq!(t.llc_cpus(5), (0..36).collect::<Vec<_>>());
    }

    #[test]
    fn one_socket_nodes_split_the_cores() {
        let t = one_socket();
        assert_eq!((t.node_of(0), t.node_of(8), t.node_of(9)), (0, 0, 1));
        assert_eq!((t.node_of(18), t.node_of(27)), (0, 1));
        let node0: Vec<u32> = (0..9).chain(18..27).collect();
        assert_eq!(t.node_cpus(0), node0);
    }

    #[test]
    fn two_sockets_one_node_each() {
        let t = Topology::new(2, 26, 2, 2);
        assert_eq!(t.nr_cpus(), 104);
        let node0: Vec<u32> = (0..26).chain(52..78).collect();
        let node1: Vec<u32> = (26..52).chain(78..104).collect();
        assert_eq!(t.node_cpus(0), node0);
        assert_eq!(t.node_cpus(1), node1);
        assert_eq!(t.llc_cpus(60), node0);
        assert_eq!(
            (t.socket_of(26), t.socket_of(77), t.socket_of(78)),
            (1, 0, 1)
        );
        assert_eq!(t.cpu(1, 0, 1), 78);
        assert_eq!(t.siblings(30).collect::<Vec<_>>(), [82]);
    }

    #[test]
    fn flat_matches_the_old_cpu_to_node() {
        for (cpus, nodes) in [(4, 1), (4, 2), (8, 4), (6, 3), (64, 8)] {
            let t = Topology::flat(cpus, nodes);
            for c in 0..cpus {
                assert_eq!(t.node_of(c), c * nodes / cpus);
                assert_eq!(t.siblings(c).count(), 0);
            }
        }
    }

    #[test]
    fn explicit_nodes_and_a_memory_only_node() {
        let t =
            Topology::new(1, 4, 2, 1).with_node_cpus(&[vec![0, 1, 4, 5], vec![2, 3, 6, 7], vec![]]);
        assert_eq!(t.nodes, 3);
        assert_eq!(t.node_cpus(0), [0, 1, 4, 5]);
        assert_eq!(t.node_cpus(1), [2, 3, 6, 7]);
        assert!(t.node_cpus(2).is_empty());
        assert_eq!((t.node_of(6), t.node_of(100)), (1, 0));
        // Unequal shares of the CPUs.
        let t = Topology::flat(4, 1).with_node_cpus(&[vec![0, 1, 2], vec![3]]);
        assert_eq!((t.node_of(2), t.node_of(3)), (0, 1));
    }

    #[test]
    fn cpulists_print_as_they_read() {
        for text in ["", "3", "0-25,52-77", "0,2,4-5"] {
            let cpus = if text.is_empty() {
                vec![]
            } else {
                parse_cpulist(text).unwrap()
            };
            assert_eq!(format_cpulist(&cpus), text);
        }
    }

    #[test]
    fn cpulists() {
        let list = |s: &str| parse_cpulist(s);
        assert_eq!(list("3"), Ok(vec![3]));
        assert_eq!(list("0-3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(list("0-1,36-37"), Ok(vec![0, 1, 36, 37]));
        assert_eq!(list(" 8 , 2-3,2"), Ok(vec![2, 3, 8]));
        assert_eq!(list("5-5"), Ok(vec![5]));
        assert_eq!(list("0-35").map(|v| v.len()), Ok(36));
        for (bad, why) in [
            ("", "empty entry"),
            ("0-x", "\"x\" is not a CPU number"),
            ("1,,2", "empty entry"),
            ("4-2", "end comes before its start"),
            ("-1", "\"\" is not a CPU number"),
            ("0-3:2/4", "\"3:2/4\" is not a CPU number"),
            ("+1", "\"+1\" is not a CPU number"),
            ("0-4000000000", "more CPUs than a machine has"),
        ] {
            let e = list(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
