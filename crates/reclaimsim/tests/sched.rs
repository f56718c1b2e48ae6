//! The CPU scheduler (engine/cfs.rs, issue 24): CFS shares among more threads than CPUs,
//! SMT siblings, cpusets, kswapd as a task competing for CPUs, and determinism with
//! oversubscription.

mod common;

use reclaimsim::engine::RunOptions;
use reclaimsim::results::{TaskUse, VariantResult};

fn run(text: &str) -> VariantResult {
    let s = common::scenario(text, Some(1));
    reclaimsim::results::run(&s, "base", RunOptions::default())
        .unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// A workload of `threads` CPU-bound threads: loads from 64 KiB they keep resident,
/// 10,000 a step (about 10-20 us), for `runtime`.
fn hogs(name: &str, threads: u32, placement: &str, runtime: &str) -> String {
    format!(
        r#"
[[workload]]
name = "{name}"
{placement}
[workload.anon]
size = "64KiB"
threads = {threads}
pattern = "random"
write = false
runtime = "{runtime}"
ops_per_step = 10000
"#
    )
}

/// A 32 MiB machine of `cpus` CPUs swapping to zram under `big` threads touching `size`
/// at random, beside `hogs` CPU-bound threads, all for `runtime`.
fn pressure(cpus: u32, size: &str, big: u32, hogs_n: u32, runtime: &str) -> String {
    format!(
        r#"name = "pressure"
[machine]
memory = "32MiB"
cpus = {cpus}
swap = {{ device = "zram", size = "64MiB" }}
[[workload]]
name = "big"
[workload.anon]
size = "{size}"
threads = {big}
pattern = "random"
runtime = "{runtime}"
{}"#,
        hogs("hog", hogs_n, "", runtime)
    )
}

fn tasks<'a>(r: &'a VariantResult, prefix: &str) -> Vec<&'a TaskUse> {
    (r.sched.tasks.iter())
        .filter(|t| t.task.starts_with(prefix))
        .collect()
}

/// Four CPU-bound threads on two CPUs: CFS gives each half of a CPU over a second, to
/// within what the balancer leaves: a 3-1 split lasts until the busy CPU's next
/// periodic balance (2 CPUs x busy_factor 16 = 32 ms), so a share may be off by ~2%.
#[test]
fn four_cpu_bound_threads_on_two_cpus_each_get_half() {
    let text = format!(
        "name = \"share\"\n[machine]\nmemory = \"64MiB\"\ncpus = 2\n{}",
        hogs("hog", 4, "", "1s")
    );
    let r = run(&text);
    let hog = tasks(&r, "hog/");
    assert_eq!(hog.len(), 4);
    for t in hog {
        assert!(
            (t.cpu_s - 0.5).abs() < 0.02,
            "{} ran {:.4} s of 1 s on 2 CPUs shared by 4",
            t.task,
            t.cpu_s
        );
        assert!(
            t.runqueue_wait_s > 0.45,
            "{} waited {}",
            t.task,
            t.runqueue_wait_s
        );
    }
    for c in &r.sched.cpus {
        assert!(
            c.busy_fraction > 0.99,
            "CPU {} busy {}",
            c.cpu,
            c.busy_fraction
        );
    }
}

/// A memcached worker and its memtier client wake each other (one runs while the other
/// sleeps) on the one CPU a CPU-bound thread also runs on. Each of the three is a CFS
/// entity of its own, so each gets a third of the CPU: the pair two thirds. The woken
/// task is queued while its waker still runs (try_to_wake_up), so its sleeper credit is
/// measured from the waker's vruntime, not from the hog's; queued after the waker had
/// left, the pair got 55% and the hog 45%.
#[test]
fn a_waking_pair_beside_a_hog_gets_two_thirds_of_a_cpu() {
    let text = format!(
        "name = \"pair\"\n[machine]\nmemory = \"64MiB\"\ncpus = 1\n{}{}",
        memcached("0", 40_000, 1),
        hogs("hog", 1, "cpus = \"0\"\nuntil = \"memcached\"", "100s")
    );
    let r = run(&text);
    let total: f64 = r.sched.tasks.iter().map(|t| t.cpu_s).sum();
    for prefix in ["hog/", "memcached/0", "memcached/client0"] {
        let t = tasks(&r, prefix);
        let share = t[0].cpu_s / total;
        assert!(
            (share - 1.0 / 3.0).abs() < 0.02,
            "{} ran {:.4} s of {total:.4} s: share {share:.3}",
            t[0].task,
            t[0].cpu_s
        );
    }
}

/// Two CPU-bound threads on the two hardware threads of one core each make the profile's
/// `smt_compute` share of the progress one thread makes alone on it.
#[test]
fn smt_siblings_each_progress_at_the_sibling_factor() {
    let machine = "[machine]\nmemory = \"64MiB\"\nsockets = 1\ncores_per_socket = 1\n\
                   threads_per_core = 2\n[costs]\nsmt_compute = 600\n";
    let alone = run(&format!(
        "name = \"alone\"\n{machine}{}",
        hogs("hog", 1, "cpus = [0]", "200ms")
    ));
    let both = run(&format!(
        "name = \"both\"\n{machine}{}",
        hogs("hog", 2, "cpus = [0, 1]\npin = true", "200ms")
    ));
    let ops = |r: &VariantResult| r.workloads["hog"].ops as f64;
    let per_thread = ops(&both) / 2.0 / ops(&alone);
    assert!(
        (per_thread - 0.6).abs() < 0.01,
        "each sibling made {per_thread:.3} of a lone thread's progress"
    );
}

/// kswapd is a task on its node's CPUs: with every CPU busy it waits in a run queue,
/// and it never runs outside them.
#[test]
fn kswapd_waits_for_a_cpu_when_all_are_busy() {
    let text = pressure(2, "48MiB", 2, 2, "300ms");
    let r = run(&text);
    assert!(r.vmstat["pgscan_kswapd"] > 0, "kswapd never ran");
    let k = tasks(&r, "kswapd0")[0];
    assert!(k.cpu_s > 0.0);
    assert!(k.runqueue_wait_s > 0.0, "kswapd never waited for a CPU");
    assert!(k.cpus.iter().all(|&c| c < 2));
}

/// Threads allowed on a cpuset run only there, however busy their CPUs are; pinned
/// threads run only on their own CPU.
#[test]
fn a_cpuset_is_never_left() {
    let text = format!(
        "name = \"sets\"\n[machine]\nmemory = \"64MiB\"\ncpus = 4\n{}{}",
        hogs("a", 6, "cpus = \"0-1\"", "100ms"),
        hogs("b", 3, "cpus = [2, 3]\npin = true", "100ms")
    );
    let r = run(&text);
    for t in tasks(&r, "a/") {
        assert!(
            !t.cpus.is_empty() && t.cpus.iter().all(|&c| c <= 1),
            "{t:?}"
        );
    }
    for (i, t) in tasks(&r, "b/").into_iter().enumerate() {
        assert_eq!(t.cpus, vec![[2, 3][i % 2]], "{t:?}");
    }
}

/// More threads than CPUs, with migrations and wake-ups: the same scenario and seed
/// give the same results, bit for bit.
#[test]
fn oversubscribed_runs_are_deterministic() {
    let text = pressure(3, "40MiB", 4, 5, "100ms");
    let json = |mut r: VariantResult| {
        r.wall_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    let (a, b) = (json(run(&text)), json(run(&text)));
    assert!(a == b, "two runs of one scenario differ");
    assert!(a.contains("\"migrations\""));
}

/// One memcached thread on CPU 0 read by one memtier thread with `clients` connections
/// of `requests` GETs each, its client task on `client_cpus`.
fn memcached(client_cpus: &str, requests: u32, clients: u32) -> String {
    format!(
        r#"
[[workload]]
name = "memcached"
cpus = "0"
client_cpus = "{client_cpus}"
[workload.memcached]
threads = 1
[[workload.memcached.phase]]
name = "run"
key-pattern = "R:R"
ratio = "0:1"
data-size = 2000
key-minimum = 1
key-maximum = 2000
requests = {requests}
clients = {clients}
threads = 1
pipeline = 8
"#
    )
}

/// memtier `-t 1 -c C` against `memcached -t 1`, worker and client on CPUs of their own:
/// 32,000 GETs over C connections.
fn connections(c: u32) -> VariantResult {
    let machine = "name = \"connections\"\n[machine]\nmemory = \"64MiB\"\ncpus = 2\n";
    run(&format!("{machine}{}", memcached("1", 32_000 / c, c)))
}

/// A client thread with two connections keeps two batches in flight: the worker serves
/// one while the client reads the other's replies, where one connection makes them take
/// turns. Every request is served either way, by one client task.
#[test]
fn a_client_with_two_connections_overlaps_with_its_worker() {
    let (one, two) = (connections(1), connections(2));
    for r in [&one, &two] {
        assert_eq!(r.workloads["memcached"].ops, 32_000);
        assert_eq!(tasks(r, "memcached/client").len(), 1);
    }
    let rate = |r: &VariantResult| r.workloads["memcached"].ops_per_sec;
    let busy = |r: &VariantResult| tasks(r, "memcached/0")[0].cpu_s / r.virtual_time_s;
    assert!(
        rate(&two) > 1.5 * rate(&one),
        "two connections {:.0} ops/s, one {:.0}",
        rate(&two),
        rate(&one)
    );
    assert!(
        busy(&one) < 0.6 && busy(&two) > 0.8,
        "worker busy {:.2} / {:.2}",
        busy(&one),
        busy(&two)
    );
}

/// 4 fio jobs on one CPU reading their own 2 MiB file at random in a 4 MiB memcg, for
/// 200 ms, with vmpressure's work items on or off.
fn memcg_readers(vmpressure: bool) -> VariantResult {
    run(&format!(
        r#"name = "readers"
[machine]
memory = "64MiB"
cpus = 1
[kernel]
vmpressure = {vmpressure}
[[memcg]]
path = "/fio"
max = "4MiB"
[[workload]]
name = "fio"
memcg = "/fio"
[workload.fio]
rw = "randread"
numjobs = 4
size = "2MiB"
random_distribution = "random"
norandommap = true
time_based = true
runtime = "200ms"
"#
    ))
}

/// Memcg reclaim queues vmpressure's work item on the reclaiming CPU once a window of
/// 512 pages has been scanned (not again while it is pending), and the CPU's kworker,
/// woken with a sleeper's vruntime, preempts the reclaimer at its step's end and runs it
/// (`kernel::vmpressure`): a switch in and out and the work, each time.
#[test]
fn memcg_reclaim_wakes_the_local_kworker_once_a_window() {
    let costs = reclaimsim::sim::cost::CostTable::default();
    let on = memcg_readers(true);
    let scanned = common::vmstat(&on, "pgscan_file");
    assert!(
        scanned > 20_000,
        "the memcg reclaims: {scanned} pages scanned"
    );
    let kw = tasks(&on, "kworker");
    assert_eq!(kw.len(), 1, "one kworker a CPU: {:?}", on.sched.tasks);
    let runs = common::vmstat(&on, "vmpressure_work");
    // Each run is a switch in and the work item, on the kworker's CPU time.
    let each = (costs.context_switch + costs.vmpressure_work) as f64;
    assert_eq!((kw[0].cpu_s * 1e9 / each).round() as u64, runs);
    // Each run took at least 512 pages' worth, at most a shrink_node pass more.
    assert!(
        runs <= scanned / 512 && runs >= scanned / 600,
        "{runs} kworker runs for {scanned} pages scanned"
    );
    // It runs when the reclaiming step ends, not after the reclaimer's slice.
    let wait = kw[0].runqueue_wait_s / runs as f64;
    assert!(wait < 100e-6, "{wait} s in the run queue a run");
    let off = memcg_readers(false);
    assert!(tasks(&off, "kworker").is_empty(), "{:?}", off.sched.tasks);
    assert_eq!(common::vmstat(&off, "vmpressure_work"), 0);
    let switches =
        |r: &VariantResult| -> u64 { r.sched.cpus.iter().map(|c| c.context_switches).sum() };
    assert!(
        switches(&on) >= switches(&off) + 2 * runs * 9 / 10,
        "{} context switches with the kworker, {} without, {runs} runs",
        switches(&on),
        switches(&off)
    );
}
