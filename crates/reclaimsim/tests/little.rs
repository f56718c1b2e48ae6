//! Little cores (`machine.little_cpus`, the cost table's `little_compute` and
//! `little_memory`): a little CPU's work runs at its per-mille speed by cost class,
//! composed with a busy SMT sibling, and a machine without little cores is unchanged.
//! The exact arithmetic per class (memory-bound work, a lock wait) is
//! `sim::sched`'s unit test; these check the wiring through a whole run.

mod common;

use reclaimsim::engine::RunOptions;
use reclaimsim::results::VariantResult;

fn run(text: &str) -> VariantResult {
    let s = common::scenario(text, Some(1));
    reclaimsim::results::run(&s, "base", RunOptions::default())
        .unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// A workload of `threads` compute-bound threads (loads from 64 KiB they keep
/// resident, 10,000 a step) on `cpus`, one per CPU, for 200 ms.
fn hogs(name: &str, threads: u32, cpus: &str) -> String {
    format!(
        r#"
[[workload]]
name = "{name}"
cpus = {cpus}
pin = true
[workload.anon]
size = "64KiB"
threads = {threads}
pattern = "random"
write = false
runtime = "200ms"
ops_per_step = 10000
"#
    )
}

fn ops(r: &VariantResult, name: &str) -> f64 {
    r.workloads[name].ops as f64
}

/// The results as JSON, less the wall time and the marks of which CPUs are little (so
/// that runs with and without little CPUs compare on what they did).
fn json(mut r: VariantResult) -> String {
    r.wall_s = 0.0;
    for c in &mut r.sched.cpus {
        c.little = false;
    }
    serde_json::to_string(&r).unwrap()
}

/// The results mark the little CPUs (and the report's CPU line lists them); a machine
/// without little cores marks none, and its JSON has no `little` key.
#[test]
fn the_results_mark_the_little_cpus() {
    let text = |extra: &str| {
        format!(
            "name = \"l\"\n[machine]\nmemory = \"64MiB\"\ncpus = 4\n{extra}\n\
             [[workload]]\nname = \"w\"\nanon = {{ size = \"64KiB\", threads = 4 }}\n"
        )
    };
    let r = run(&text("little_cpus = \"0-1,3\""));
    let little: Vec<bool> = r.sched.cpus.iter().map(|c| c.little).collect();
    assert_eq!(little, [true, true, false, true]);
    let out = reclaimsim::output::report::table(&r, false);
    assert!(out.contains("CPUs: 4 (little: 0-1,3), busy"), "{out}");
    let plain = run(&text(""));
    assert!(plain.sched.cpus.iter().all(|c| !c.little));
    assert!(!serde_json::to_string(&plain)
        .unwrap()
        .contains("\"little\""));
}

/// A compute-bound thread on a little CPU makes `little_compute` / 1000 of the progress
/// of one on a big CPU in the same time: each of its costs takes 1000 / little_compute
/// as long. `little_memory` does not touch it.
#[test]
fn a_little_cpu_runs_compute_at_little_compute() {
    let machine = |memory: u32| {
        format!(
            "name = \"l\"\n[machine]\nmemory = \"64MiB\"\ncpus = 2\nlittle_cpus = \"0\"\n\
             [costs]\nlittle_compute = 400\nlittle_memory = {memory}\n"
        )
    };
    let text = format!(
        "{}{}{}",
        machine(1000),
        hogs("little", 1, "[0]"),
        hogs("big", 1, "[1]")
    );
    let r = run(&text);
    let ratio = ops(&r, "little") / ops(&r, "big");
    assert!(
        (ratio - 0.4).abs() < 0.01,
        "the little CPU made {ratio:.4} of the big one's progress"
    );
    let other = run(&text.replace(&machine(1000), &machine(300)));
    assert_eq!(ops(&other, "little"), ops(&r, "little"));
}

/// On a little core with SMT, two busy siblings each keep `smt_compute` x
/// `little_compute` of a lone big thread's speed; the big core's pair `smt_compute`.
#[test]
fn little_and_smt_compose() {
    // Cores 0 and 1, CPUs 0/2 and 1/3 their siblings; core 0 is little.
    let text = format!(
        "name = \"ls\"\n[machine]\nmemory = \"64MiB\"\nsockets = 1\ncores_per_socket = 2\n\
         threads_per_core = 2\nlittle_cpus = \"0,2\"\n\
         [costs]\nsmt_compute = 600\nlittle_compute = 500\n{}{}{}",
        hogs("little", 2, "[0, 2]"),
        hogs("big", 2, "[1, 3]"),
        "",
    );
    let both = run(&text);
    let alone = run(&format!(
        "name = \"a\"\n[machine]\nmemory = \"64MiB\"\nsockets = 1\ncores_per_socket = 2\n\
         threads_per_core = 2\n[costs]\nsmt_compute = 600\n{}",
        hogs("big", 1, "[1]")
    ));
    let lone = ops(&alone, "big");
    let little = ops(&both, "little") / 2.0 / lone;
    let big = ops(&both, "big") / 2.0 / lone;
    assert!((little - 0.3).abs() < 0.01, "little siblings: {little:.4}");
    assert!((big - 0.6).abs() < 0.01, "big siblings: {big:.4}");
}

/// A 32 MiB machine of 2 CPUs (or 2 cores of 2 SMT threads) swapping to zram under
/// threads touching 48 MiB at random beside a compute-bound one, with `machine_extra`
/// and `costs` added.
fn pressure(topology: &str, machine_extra: &str, costs: &str) -> String {
    format!(
        r#"name = "pressure"
[machine]
memory = "32MiB"
{topology}
{machine_extra}
swap = {{ device = "zram", size = "64MiB" }}
[costs]
{costs}
[[workload]]
name = "big"
[workload.anon]
size = "48MiB"
threads = 3
pattern = "random"
runtime = "150ms"
{}"#,
        hogs("hog", 1, "[0]")
    )
}

/// Little CPUs whose factors are 1000 give the results of a machine without them, bit
/// for bit, with SMT and without (the little path's arithmetic in millionths equals the
/// SMT path's in thousandths); slower little CPUs change them.
#[test]
fn little_cpus_at_full_speed_change_nothing() {
    for topology in [
        "cpus = 2",
        "sockets = 1\ncores_per_socket = 2\nthreads_per_core = 2",
    ] {
        let none = json(run(&pressure(topology, "", "")));
        let all = "little_cpus = \"0-1\"";
        let same = json(run(&pressure(topology, all, "")));
        assert!(
            none == same,
            "{topology}: little CPUs at 1000 changed the run"
        );
        let slow = json(run(&pressure(topology, all, "little_memory = 500")));
        assert!(none != slow, "{topology}: little_memory changed nothing");
    }
}

/// The shipped `snapdragon-7c` profile on its machine (8 CPUs, the A55s 0-5 first): a
/// compute-bound thread on an A55 makes `little_compute` (305) per mille of the progress
/// of one on an A76.
#[test]
fn the_snapdragon_7c_profile_runs_its_a55s_at_its_capacity() {
    let text = format!(
        "name = \"7c\"\n[machine]\nmemory = \"64MiB\"\ncpus = 8\nlittle_cpus = \"0-5\"\n\
         profile = \"snapdragon-7c\"\n{}{}",
        hogs("a55", 1, "[5]"),
        hogs("a76", 1, "[6]")
    );
    let s = common::scenario(&text, Some(1));
    assert_eq!((s.costs.little_compute, s.costs.smt_compute), (305, 1000));
    let r = run(&text);
    let ratio = ops(&r, "a55") / ops(&r, "a76");
    assert!(
        (ratio - 0.305).abs() < 0.01,
        "an A55 made {ratio:.4} of an A76's progress"
    );
}

/// `Kernel::spend` on a little CPU: the kswapd profile's memory-latency-bound categories
/// (rmap_walk, unmap, pte_scan) take 1000 / `little_memory` as long, the compute-bound
/// ones 1000 / `little_compute`, a lock wait as long as on a big CPU; on a big CPU
/// nothing is stretched. The engine sets the speeds as here (`set_cpu_speeds`).
#[test]
fn spend_stretches_each_category_by_its_class() {
    use reclaimsim::kernel::stats::Cat;
    let mut sys = common::Sys::new(
        "[machine]\nmemory = \"64MiB\"\ncpus = 2\nlittle_cpus = \"0\"\n\
         [costs]\nlittle_compute = 400\nlittle_memory = 800\n",
    );
    let k = &mut sys.k;
    let little = (0..2).map(|c| k.topology.is_little(c)).collect();
    (k.sched).set_little(little, k.costs.little_compute, k.costs.little_memory);
    let cats = [
        (Cat::RmapWalk, 1250),
        (Cat::Unmap, 1250),
        (Cat::PteScan, 1250),
        (Cat::ListOps, 2500),
        (Cat::Compression, 2500),
        (Cat::Io, 2500),
        (Cat::Other, 2500),
        (Cat::LockWait, 1000),
    ];
    for (cpu, little) in [(0, true), (1, false)] {
        sys.on(cpu);
        for (cat, on_little) in cats {
            let before = sys.k.cur.clock;
            sys.k.spend(1000, cat);
            let took = sys.k.cur.clock - before;
            let want = if little { on_little } else { 1000 };
            assert_eq!(took, want, "{cat:?} on CPU {cpu}");
        }
    }
}
