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

/// Two nodes of 64 MiB, node 0 with CPU 0 and node 1 with CPU 1, a ramdisk for swap
/// (which takes no machine memory), and one workload of `size` with `placement` keys.
fn two_nodes(placement: &str, size: &str, swap: bool) -> String {
    let swap = if swap {
        "swap = { device = \"ramdisk\", size = \"256MiB\" }\n"
    } else {
        ""
    };
    format!(
        r#"name = "t"
[machine]
cpus = 2
{swap}[[machine.node]]
memory = "64MiB"
cpus = "0"
[[machine.node]]
memory = "64MiB"
cpus = "1"
[[workload]]
name = "a"
{placement}
[workload.anon]
size = "{size}"
passes = 2
"#
    )
}

/// `mems = "0"` (MPOL_BIND): with node 1 free, the workload's 96 MiB never takes a page
/// there; direct reclaim and node 0's kswapd swap out of node 0 instead, and node 1's
/// kswapd is never woken. Without `mems` (`node = 0` alone, local allocation) the same
/// workload spills to node 1.
#[test]
fn bound_memory_reclaims_its_nodes_and_never_falls_back() {
    let r = common::run_checked(&two_nodes("mems = \"0\"", "96MiB", true));
    assert_eq!(r.oom_kills.len(), 0);
    let n1 = &r.nodes[1];
    assert_eq!((n1.anon, n1.numa_hit, n1.numa_miss), (0, 0, 0), "{n1:?}");
    assert_eq!(common::vmstat(&r, "numa_miss"), 0);
    assert!(common::vmstat(&r, "pswpout") > 0);
    assert!(common::vmstat(&r, "allocstall_normal") > 0);
    let kswapd1 = r.sched.tasks.iter().find(|t| t.task == "kswapd1").unwrap();
    assert_eq!(kswapd1.cpu_s, 0.0);

    let r = common::run_checked(&two_nodes("node = 0", "96MiB", true));
    assert!(
        r.nodes[1].anon > 0 && r.nodes[1].numa_miss > 0,
        "{:?}",
        r.nodes[1]
    );
    assert!(common::vmstat(&r, "numa_miss") > 0);
}

/// Bound to node 1 while running on node 0's CPU: every page comes from node 1, the
/// first node of the zonelist in the nodemask, so each is a numa_hit there.
#[test]
fn bound_away_from_the_cpu_takes_the_first_allowed_node() {
    let r = common::run_checked(&two_nodes("node = 0\nmems = [1]", "16MiB", true));
    let (n0, n1) = (&r.nodes[0], &r.nodes[1]);
    assert_eq!((n0.anon, n0.numa_hit, n0.numa_foreign), (0, 0, 0), "{n0:?}");
    assert!(
        n1.anon >= 15 << 20 && n1.numa_hit > 0 && n1.numa_miss == 0,
        "{n1:?}"
    );
}

/// Without swap, a workload bound to node 0 that needs more than node 0 is OOM-killed
/// while node 1 has its memory free; the OOM killer leaves out a bigger process bound
/// to node 1 alone (mempolicy_in_oom_domain), which global OOM would have picked.
#[test]
fn bound_workload_that_cannot_fit_ooms_with_another_node_free() {
    let r = common::run_checked(&two_nodes("mems = \"0\"", "96MiB", false));
    assert_eq!(r.oom_kills.len(), 1);
    assert_eq!(r.oom_kills[0].victim, "a");
    assert!(r.nodes[1].mem_free > 60 << 20, "{:?}", r.nodes[1]);

    let other =
        "[[workload]]\nname = \"other\"\nmems = \"1\"\n[workload.anon]\nsize = \"100MiB\"\n";
    let text = two_nodes("mems = \"0\"\nstart = \"300ms\"", "96MiB", false).replace(
        "memory = \"64MiB\"\ncpus = \"1\"",
        "memory = \"128MiB\"\ncpus = \"1\"",
    );
    let r = common::run_checked(&format!("duration = \"1s\"\n{text}{other}"));
    assert_eq!(r.oom_kills.len(), 1, "{:?}", r.oom_kills);
    assert_eq!(r.oom_kills[0].victim, "a");
}

/// Direct reclaim for an allocation bound to node 0 shrinks node 0 only (shrink_zones
/// over the zonelist in the nodemask): another workload's pages on node 1 stay, and
/// node 1's kswapd, never woken, reclaims none either.
#[test]
fn bound_direct_reclaim_leaves_other_nodes_alone() {
    let other = "[[workload]]\nname = \"other\"\nmems = \"1\"\n[workload.anon]\nsize = \"32MiB\"\n";
    let text = two_nodes("mems = \"0\"\nstart = \"200ms\"", "96MiB", true);
    let r = common::run_checked(&format!("{text}{other}"));
    assert_eq!(r.oom_kills.len(), 0);
    assert!(common::vmstat(&r, "allocstall_normal") > 0);
    assert!(r.nodes[1].anon >= 31 << 20, "{:?}", r.nodes[1]);
}

/// scenarios/examples/numa-cxl.toml, with one random pass: without `mems` the workload spills
/// onto the memory-only node and swaps nothing; with `mems = "0"` node 1 stays free and
/// node 0 swaps instead.
#[test]
fn the_numa_cxl_example_spills_or_swaps() {
    let text = include_str!("../../../scenarios/examples/numa-cxl.toml");
    let sets = ["workload.app.anon.passes=1".to_string()];
    let loaded = reclaimsim::scenario::parse(text, "numa-cxl.toml", &sets, None).unwrap();
    let run = |name: &str| {
        let s = &loaded.variants.iter().find(|(n, _)| n == name).unwrap().1;
        reclaimsim::results::run(s, name, Default::default()).unwrap()
    };
    let base = run("base");
    assert!(
        base.nodes[1].anon > 16 << 20 && base.nodes[1].numa_miss > 0,
        "{:?}",
        base.nodes
    );
    assert_eq!(common::vmstat(&base, "pswpout"), 0);
    assert_eq!(base.nodes[1].cpus, "");
    let bound = run("bound");
    assert_eq!(bound.oom_kills.len(), 0);
    assert_eq!(
        (bound.nodes[1].anon, bound.nodes[1].mem_free),
        (0, 64 << 20)
    );
    assert!(common::vmstat(&bound, "pswpout") > 0);
}
