//! NUMA nodes of their own sizes and CPUs (`[[machine.node]]`, a memory-only node), and
//! where allocations go on them: the local node first, then the others in index order
//! from it (mm/page_alloc.c's zonelist, 6.1).

mod common;

use common::Sys;
use reclaimsim::kernel::node::{default_min_free_kbytes, WMARK_LOW, WMARK_MIN};
use reclaimsim::kernel::stats::Vm;

const GIB: u64 = 1 << 30;
const PAGE: u64 = 4096;

/// A machine of 4 CPUs: node 0 with `mem0` and CPUs 0-2, node 1 with `mem1` and CPU 3.
fn asymmetric(mem0: &str, mem1: &str) -> String {
    format!(
        "[machine]\ncpus = 4\n[[machine.node]]\nmemory = \"{mem0}\"\ncpus = \"0-2\"\n[[machine.node]]\nmemory = \"{mem1}\"\ncpus = \"3\"\n"
    )
}

/// The frames anon pages `0..n` of `mm` (from `start`) landed on, faulted in on the
/// current CPU, by node.
fn fault_in(s: &mut Sys, mm: u32, start: u64, n: u64) -> Vec<usize> {
    (0..n)
        .map(|i| {
            s.fault(mm, start + i, true);
            let pte = s.k.mms[mm as usize].vmas[0].ptes[i as usize];
            s.k.node_of(pte.pfn().expect("faulted in"))
        })
        .collect()
}

/// 3 GiB + 1 GiB: each node's MemTotal is its own, its frames are where node_of finds
/// them, and min_free_kbytes is split by managed pages (__setup_per_zone_wmarks), so
/// node 0's watermarks are three times node 1's; each node's per-CPU high splits its
/// low watermark over its own CPUs (zone_highsize).
#[test]
fn nodes_of_their_own_size_with_proportional_watermarks() {
    let s = Sys::new(&asymmetric("3GiB", "1GiB"));
    let (n0, n1) = (&s.k.nodes[0], &s.k.nodes[1]);
    assert_eq!(n0.zone.managed, 3 * GIB / PAGE);
    assert_eq!(n1.zone.managed, GIB / PAGE);
    assert_eq!(s.k.memory_pages(), 4 * GIB / PAGE);
    assert_eq!((n0.start_pfn, n1.start_pfn), (0, (3 * GIB / PAGE) as u32));
    let boundary = (3 * GIB / PAGE) as u32;
    assert_eq!(
        (
            s.k.node_of(boundary - 1),
            s.k.node_of(boundary),
            s.k.node_of((4 * GIB / PAGE - 1) as u32)
        ),
        (0, 1, 1)
    );
    let pages_min = default_min_free_kbytes(4 * GIB / PAGE) / 4;
    assert_eq!(n0.zone.wmark[WMARK_MIN], pages_min * 3 / 4);
    assert_eq!(n1.zone.wmark[WMARK_MIN], pages_min / 4);
    for w in 0..3 {
        let ratio = n0.zone.wmark[w] as f64 / n1.zone.wmark[w] as f64;
        assert!((ratio - 3.0).abs() < 0.01, "watermark {w}: {ratio}");
    }
    let nodes = s.k.nr_nodes();
    let high = |cpu: usize, node: usize| s.k.pcp[cpu * nodes + node].high;
    assert_eq!(high(0, 0), n0.zone.wmark[WMARK_LOW] / 3);
    assert_eq!(high(0, 1), n1.zone.wmark[WMARK_LOW]);
    assert_eq!(s.k.cpu_node, [0, 0, 0, 1]);
}

/// A workload on node 1's CPU (`node = 1`) takes node 1's memory first, every page a
/// numa_hit, and falls back to node 0 once node 1 is at its low watermark.
#[test]
fn local_node_fills_first_then_falls_back() {
    let mut s = Sys::new(&asymmetric("96MiB", "32MiB"));
    s.on(3);
    let free1 = s.k.nodes[1].zone.free - s.k.nodes[1].zone.wmark[WMARK_LOW];
    let n = free1 + 2048;
    let (mm, start) = s.process(0, None, n);
    let nodes = fault_in(&mut s, mm, start, n);
    let first_miss = nodes.iter().position(|&n| n == 0).expect("fell back");
    assert!(nodes[..first_miss].iter().all(|&n| n == 1));
    assert!(first_miss as u64 >= free1 - 64, "{first_miss} of {free1}");
    assert!(nodes[first_miss..].iter().all(|&n| n == 0));
    assert_eq!(s.vm(Vm::NumaMiss), n - first_miss as u64);
    assert_eq!(s.vm(Vm::NumaHit), first_miss as u64);
}

/// A memory-only node (CPUs `""`) is no CPU's local node: it gets pages only when the
/// node of the CPU is at its low watermark. Its per-CPU high is split over all CPUs.
#[test]
fn memory_only_node_gets_only_fallback() {
    let text = "[machine]\ncpus = 2\n[[machine.node]]\nmemory = \"64MiB\"\ncpus = \"0-1\"\n[[machine.node]]\nmemory = \"64MiB\"\ncpus = \"\"\n";
    let mut s = Sys::new(text);
    assert_eq!(s.k.cpu_node, [0, 0]);
    assert_eq!(s.k.pcp[1].high, s.k.nodes[1].zone.wmark[WMARK_LOW] / 2);
    s.on(1);
    let free0 = s.k.nodes[0].zone.free - s.k.nodes[0].zone.wmark[WMARK_LOW];
    let (mm, start) = s.process(0, None, free0 + 1024);
    let nodes = fault_in(&mut s, mm, start, free0 + 1024);
    let first = nodes.iter().position(|&n| n == 1).expect("fell back");
    assert!(first as u64 >= free0 - 64, "{first} of {free0}");
    assert!(nodes[..first].iter().all(|&n| n == 0));
    assert!(s.vm(Vm::NumaMiss) > 0);
}

/// Nodes of one size, written as tables, are the even split: same frames, same
/// watermarks, node_of's division.
#[test]
fn equal_tables_match_the_even_split() {
    let tables = Sys::new(
        &asymmetric("64MiB", "64MiB")
            .replace("\"0-2\"", "\"0-1\"")
            .replace("\"3\"", "\"2-3\""),
    );
    let even = Sys::new("[machine]\nmemory = \"128MiB\"\ncpus = 4\nnodes = 2\n");
    for n in 0..2 {
        let (a, b) = (&tables.k.nodes[n], &even.k.nodes[n]);
        assert_eq!(
            (a.start_pfn, a.end_pfn, a.zone.wmark),
            (b.start_pfn, b.end_pfn, b.zone.wmark)
        );
    }
    assert_eq!(tables.k.cpu_node, even.k.cpu_node);
    let highs = |s: &Sys| s.k.pcp.iter().map(|p| p.high).collect::<Vec<_>>();
    assert_eq!(highs(&tables), highs(&even));
}

/// A whole run on a machine with a memory-only node, under the invariant checker (every
/// free frame inside its node, every per-CPU page of its list's node): a workload twice
/// node 0's size fills node 0, spills to node 1, and both kswapds reclaim, node 1's on
/// any CPU since its node has none.
#[test]
fn a_run_with_a_memory_only_node_passes_the_checker() {
    let text = r#"name = "t"
[machine]
cpus = 2
swap = { device = "zram", size = "256MiB" }
[[machine.node]]
memory = "64MiB"
cpus = "0-1"
[[machine.node]]
memory = "32MiB"
cpus = ""
[[workload]]
name = "a"
[workload.anon]
size = "128MiB"
passes = 2
"#;
    let r = common::run_checked(text);
    assert_eq!(r.oom_kills.len(), 0);
    let task = |name: &str| r.sched.tasks.iter().find(|t| t.task == name).unwrap();
    assert!(task("kswapd0").cpu_s > 0.0 && task("kswapd1").cpu_s > 0.0);
    assert!(common::vmstat(&r, "numa_miss") > 0);
}
