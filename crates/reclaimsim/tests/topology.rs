//! Scenarios that describe the machine by sockets, cores and SMT threads, and workloads
//! placed by cpuset (cpus as a list or cpulist, node) and pinning: how the scenario
//! layer reads the machine topology and cgroup cpusets.

use reclaimsim::scenario::{self, config::Scenario};
use reclaimsim::sim::topology::Topology;

/// A scenario with `machine` as its `[machine]` keys besides memory and `workload` as
/// its one workload's placement keys.
fn load(machine: &str, workload: &str) -> Scenario {
    let text = format!(
        "name = \"t\"\n[machine]\nmemory = \"256MiB\"\n{machine}\n\n[[workload]]\nname = \"a\"\n{workload}\n[workload.anon]\nsize = \"8MiB\"\n"
    );
    match scenario::parse(&text, "t.toml", &[], None) {
        Ok(s) => s.base,
        Err(e) => panic!("{e}\n{text}"),
    }
}

#[test]
fn cpus_alone_is_a_flat_machine() {
    let s = load("cpus = 6\nnodes = 2", "");
    assert_eq!(s.machine.cpus, 6);
    assert_eq!(s.machine.topology(), Topology::flat(6, 2));
    let s = load("", "");
    assert_eq!(s.machine.topology(), Topology::flat(4, 1));
}

#[test]
fn topology_keys_give_the_cpu_count() {
    let s = load("cores_per_socket = 18\nthreads_per_core = 2\nnodes = 2", "");
    assert_eq!(s.machine.cpus, 36);
    let t = s.machine.topology();
    assert_eq!(
        (t.sockets, t.cores_per_socket, t.threads_per_core, t.nodes),
        (1, 18, 2, 2)
    );
    assert_eq!(s.kernel_setup().topology, t);
    let s = load(
        "cpus = 104\nsockets = 2\ncores_per_socket = 26\nthreads_per_core = 2\nnodes = 2",
        "",
    );
    assert_eq!(
        s.machine.topology().node_cpus(0),
        (0..26).chain(52..78).collect::<Vec<_>>()
    );
}

#[test]
fn cpulist_string_and_list() {
    let machine = "cores_per_socket = 18\nthreads_per_core = 2";
    let s = load(machine, "cpus = \"18-19,0-1,1\"");
    let w = &s.workloads[0];
    assert_eq!(w.cpus, Some(vec![0, 1, 18, 19]));
    assert!(!w.pin);
    assert_eq!(w.cpuset(&s.machine.topology()), [0, 1, 18, 19]);
    assert_eq!(w.pinned_cpu(0, &s.machine.topology()), None);
    let s = load(machine, "cpus = [19, 3, 3]\npin = true");
    let (w, t) = (&s.workloads[0], s.machine.topology());
    assert_eq!(w.cpus, Some(vec![19, 3, 3]));
    assert_eq!(w.cpuset(&t), [3, 19]);
    let pins: Vec<_> = (0..4).map(|i| w.pinned_cpu(i, &t)).collect();
    assert_eq!(pins, [Some(19), Some(3), Some(3), Some(19)]);
}

#[test]
fn default_cpuset_is_all_cpus() {
    let s = load("cpus = 3", "pin = true");
    let (w, t) = (&s.workloads[0], s.machine.topology());
    assert_eq!(w.cpuset(&t), [0, 1, 2]);
    assert_eq!(w.pinned_cpu(4, &t), Some(1));
}

#[test]
fn node_binds_to_its_cpus() {
    let machine = "sockets = 2\ncores_per_socket = 4\nthreads_per_core = 2\nnodes = 2";
    let s = load(machine, "node = 1");
    let (w, t) = (&s.workloads[0], s.machine.topology());
    assert_eq!(w.cpuset(&t), [4, 5, 6, 7, 12, 13, 14, 15]);
    let s = load(machine, "node = 1\ncpus = [12, 0, 4]\npin = true");
    let (w, t) = (&s.workloads[0], s.machine.topology());
    assert_eq!(w.cpuset(&t), [4, 12]);
    assert_eq!(
        (w.pinned_cpu(0, &t), w.pinned_cpu(1, &t)),
        (Some(12), Some(4))
    );
}

#[test]
fn cpus_per_instance_deals_out_the_node() {
    let text = "name = \"t\"\n[machine]\nmemory = \"256MiB\"\ncores_per_socket = 4\nthreads_per_core = 2\nnodes = 2\n\n[[workload]]\nname = \"a{i}\"\ninstances = 3\ncpus_per_instance = 2\nnode = 1\n[workload.anon]\nsize = \"8MiB\"\n";
    let s = scenario::parse(text, "t.toml", &[], None).unwrap().base;
    let lists: Vec<_> = s
        .workloads
        .iter()
        .map(|w| w.cpus.clone().unwrap())
        .collect();
    assert_eq!(lists, [vec![2, 3], vec![6, 7], vec![2, 3]]);
    let text = text.replace("node = 1", "cpus = \"4-7\"");
    let s = scenario::parse(&text, "t.toml", &[], None).unwrap().base;
    let lists: Vec<_> = s
        .workloads
        .iter()
        .map(|w| w.cpus.clone().unwrap())
        .collect();
    assert_eq!(lists, [vec![4, 5], vec![6, 7], vec![4, 5]]);
}
