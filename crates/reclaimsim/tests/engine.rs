//! Whole runs through the engine (results::run), with the invariant checker on: determinism,
//! the OOM killer, memory.low / memory.min protection under global pressure, and which
//! reclaimer (kswapd or the allocating task) does the work.

mod common;

use common::{memcg_event, memcg_stat, run_checked, scenario, vmstat};
use reclaimsim::engine::RunOptions;
use reclaimsim::results::VariantResult;

// ---------------------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------------------

/// scenarios/demo.toml shrunk: memcached (anon, populated then read) and fio (page cache)
/// in two memcgs, together about 1.5 times memory, with zram swap.
const SMALL_DEMO: &str = r#"
name = "small-demo"
seed = 1
sample_interval = "50ms"

[machine]
memory = "64MiB"
cpus = 4
swap = { device = "zram", size = "128MiB" }

[kernel]
policy = "classic"
swappiness = 60

[[memcg]]
path = "/memcached"

[[memcg]]
path = "/fio"

[[workload]]
name = "memcached"
memcg = "/memcached"
cpus = [0, 1]

[workload.memcached]
threads = 2

[[workload.memcached.phase]]
name = "populate"
key-pattern = "P:P"
ratio = "1:0"
data-size = 2000
key-minimum = 1
key-maximum = 15000
requests = "allkeys"
clients = 1
threads = 2
measure = false

[[workload.memcached.phase]]
name = "run"
key-pattern = "R:R"
ratio = "0:1"
data-size = 2000
key-minimum = 1
key-maximum = 15000
test-time = "300ms"
clients = 1
threads = 2

[[workload]]
name = "fio"
memcg = "/fio"
cpus = [2, 3]
after = "memcached:populate"
until = "memcached"

[workload.fio]
rw = "randread"
numjobs = 2
size = "30MiB"
random_distribution = "random"
norandommap = true
time_based = true
runtime = "10s"
"#;

fn run_with(seed: Option<u64>, check: bool) -> VariantResult {
    let s = scenario(SMALL_DEMO, seed);
    reclaimsim::results::run(
        &s,
        "base",
        RunOptions {
            check,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("run failed: {e}"))
}

fn json(r: &VariantResult) -> String {
    serde_json::to_string(&r.without_wall_time()).expect("serializable")
}

#[test]
fn same_scenario_and_seed_give_identical_results() {
    let a = run_with(None, false);
    // The run exercised reclaim of both kinds, in both memcgs.
    assert!(vmstat(&a, "pswpout") > 0, "no swapping");
    assert!(vmstat(&a, "pgsteal_kswapd") > 0, "no reclaim");
    assert!(memcg_stat(&a, "/fio", "pgsteal_kswapd") > 0);
    assert!(memcg_stat(&a, "/memcached", "pgsteal_kswapd") > 0);
    assert!(a.workloads["fio"].ops > 0 && a.workloads["memcached:run"].ops > 0);
    assert!(!a.timeseries.is_empty());

    let b = run_with(None, false);
    assert_eq!(
        json(&a),
        json(&b),
        "two runs of one scenario and seed differ"
    );
    assert_eq!(a.without_wall_time(), b.without_wall_time());

    // The invariant checker is read-only: on, it finds nothing and changes nothing.
    let c = run_with(None, true);
    assert_eq!(json(&a), json(&c), "a run with --check differs");

    // Another seed draws other keys and offsets.
    let d = run_with(Some(2), false);
    assert_ne!(json(&a), json(&d), "the seed has no effect");
    assert_ne!(a.workloads["fio"].ops, d.workloads["fio"].ops);
    let d2 = run_with(Some(2), false);
    assert_eq!(json(&d), json(&d2));
}

/// Without `sample_interval` the time series follows the run's length: 100 to 200
/// samples, evenly spaced from 0 over the whole run; with it, the interval is as given.
/// Either way the samples change no counter.
#[test]
fn time_series_follows_the_run_without_sample_interval() {
    let given = run_with(None, false);
    let auto = run_checked(&SMALL_DEMO.replace("sample_interval = \"50ms\"\n", ""));
    let dt = |r: &VariantResult| r.timeseries[1].time_s - r.timeseries[0].time_s;
    assert!((dt(&given) - 0.05).abs() < 1e-9, "{}", dt(&given));
    let n = auto.timeseries.len();
    assert!((101..=200).contains(&n), "{n} samples");
    let step = dt(&auto);
    for (i, s) in auto.timeseries.iter().enumerate() {
        assert!(
            (s.time_s - i as f64 * step).abs() < 1e-9,
            "sample {i} at {}",
            s.time_s
        );
    }
    let end = auto.virtual_time_s;
    let last = auto.timeseries[n - 1].time_s;
    assert!(last <= end && end - last < step, "last at {last} of {end}");
    // More samples than the 50 ms interval gives, and the same counters.
    assert!(n > given.timeseries.len());
    let counters = |r: &VariantResult| {
        let mut r = r.without_wall_time();
        r.timeseries.clear();
        serde_json::to_string(&r).unwrap()
    };
    assert_eq!(counters(&given), counters(&auto));
}

// ---------------------------------------------------------------------------------------
// OOM
// ---------------------------------------------------------------------------------------

/// `hog` writes 16 MiB of anon memory in /a (memory.max 8 MiB); `big` holds 12 MiB in /b.
fn memcg_oom_scenario(swap: bool) -> String {
    let swap = if swap {
        r#"swap = { device = "zram", size = "64MiB" }"#
    } else {
        ""
    };
    format!(
        r#"
name = "memcg-oom"
[machine]
memory = "64MiB"
cpus = 2
{swap}
[[memcg]]
path = "/a"
max = "8MiB"
[[memcg]]
path = "/b"
[[workload]]
name = "big"
memcg = "/b"
cpus = [1]
[workload.anon]
size = "12MiB"
[[workload]]
name = "hog"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "16MiB"
"#
    )
}

#[test]
fn memcg_oom_kills_in_the_memcg_over_its_limit() {
    let r = run_checked(&memcg_oom_scenario(false));
    assert_eq!(r.oom_kills.len(), 1, "{:?}", r.oom_kills);
    let kill = &r.oom_kills[0];
    assert_eq!(kill.scope, "/a");
    // Only /a's tasks are candidates, though /b's `big` has the larger footprint.
    assert_eq!(kill.victim, "hog");
    assert_eq!(memcg_event(&r, "/a", "oom_kill"), 1);
    assert_eq!(memcg_event(&r, "/a", "oom"), 1);
    assert!(memcg_event(&r, "/a", "max") > 0);
    assert_eq!(memcg_event(&r, "/b", "oom_kill"), 0);
    assert_eq!(vmstat(&r, "oom_kill"), 1);
    // Anon without swap cannot be reclaimed: the kill came at the limit (2048 pages), the
    // victim stopped there and its memory was freed.
    let hog = r.workloads["hog"].ops;
    assert!(
        (2048..=2049).contains(&hog),
        "hog did {hog} touches of 4096"
    );
    assert_eq!(memcg_stat(&r, "/a", "usage"), 0);
    assert_eq!(
        memcg_stat(&r, "/a", "inactive_anon") + memcg_stat(&r, "/a", "active_anon"),
        0
    );
    // The other memcg was untouched.
    assert_eq!(r.workloads["big"].ops, 3072);
    assert_eq!(memcg_stat(&r, "/b", "usage"), 12 << 20);
}

#[test]
fn memcg_oom_comes_after_one_reclaim_a_drain_retry_and_16_retries() {
    let r = run_checked(&memcg_oom_scenario(false));
    assert_eq!(r.oom_kills.len(), 1);
    // memory.events max counts each time the charge found the limit exceeded and
    // reclaimed: the first try, the retry after drain_all_stock, then MAX_RECLAIM_RETRIES
    // (kernel 6.1 try_charge_memcg) before the kill (the kill ends the charge).
    assert_eq!(memcg_event(&r, "/a", "max"), 18);
}

#[test]
fn memcg_over_its_limit_swaps_instead_of_oom_with_swap() {
    let r = run_checked(&memcg_oom_scenario(true));
    assert!(r.oom_kills.is_empty(), "{:?}", r.oom_kills);
    assert_eq!(vmstat(&r, "oom_kill"), 0);
    assert_eq!(memcg_event(&r, "/a", "oom"), 0);
    assert!(vmstat(&r, "pswpout") > 0);
    assert!(
        memcg_stat(&r, "/a", "pswpout") >= 2048,
        "8 of 16 MiB must be swapped out"
    );
    assert!(memcg_event(&r, "/a", "max") > 0);
    assert_eq!(r.workloads["hog"].ops, 4096);
    assert!(memcg_stat(&r, "/a", "usage") <= 8 << 20);
    // Limit reclaim is cgroup reclaim: the global pgscan/pgsteal counters stay put.
    assert_eq!(
        vmstat(&r, "pgsteal_direct") + vmstat(&r, "pgsteal_kswapd"),
        0
    );
    assert!(memcg_stat(&r, "/a", "pgsteal_direct") >= 2048);
}

/// `hog` writes 64 MiB of anon memory on a 32 MiB machine; `small` holds 2 MiB.
fn global_oom_scenario(swap: bool) -> String {
    let swap = if swap {
        r#"swap = { device = "zram", size = "128MiB" }"#
    } else {
        ""
    };
    format!(
        r#"
name = "global-oom"
[machine]
memory = "32MiB"
cpus = 2
{swap}
[[workload]]
name = "small"
cpus = [1]
[workload.anon]
size = "2MiB"
[[workload]]
name = "hog"
cpus = [0]
[workload.anon]
size = "64MiB"
"#
    )
}

#[test]
fn global_oom_kills_the_largest_task() {
    let r = run_checked(&global_oom_scenario(false));
    assert_eq!(r.oom_kills.len(), 1, "{:?}", r.oom_kills);
    assert_eq!(r.oom_kills[0].scope, "global");
    assert_eq!(r.oom_kills[0].victim, "hog");
    assert_eq!(vmstat(&r, "oom_kill"), 1);
    assert_eq!(memcg_event(&r, "/", "oom_kill"), 1);
    let hog = r.workloads["hog"].ops;
    assert!(
        hog < 8192,
        "hog did {hog} touches: more than the machine holds"
    );
    assert_eq!(r.workloads["small"].ops, 512);
    // Nothing was reclaimable (anon, no swap), so the allocation OOMs after the
    // allocator's no-progress retries (should_reclaim_retry: MAX_RECLAIM_RETRIES + 1
    // direct reclaim passes), having scanned nothing.
    assert_eq!(vmstat(&r, "allocstall_normal"), 17);
    assert_eq!(vmstat(&r, "pgscan_direct"), 0);
    assert_eq!(
        memcg_stat(&r, "/", "usage"),
        2 << 20,
        "the victim's memory was freed"
    );
}

#[test]
fn enough_swap_means_no_global_oom() {
    let r = run_checked(&global_oom_scenario(true));
    assert!(r.oom_kills.is_empty(), "{:?}", r.oom_kills);
    assert_eq!(vmstat(&r, "oom_kill"), 0);
    assert_eq!(r.workloads["hog"].ops, 16384);
    // At least what does not fit in memory went to swap.
    assert!(vmstat(&r, "pswpout") >= 16384 + 512 - 8192);
}

// ---------------------------------------------------------------------------------------
// memory.low / memory.min under global pressure
// ---------------------------------------------------------------------------------------

/// Two identical fio randread jobs over 40 MiB files in /a and /b on a 64 MiB machine
/// (each file is more than its half share); `protect` goes into /a's memcg table.
fn protection_scenario(protect: &str) -> String {
    let job = |name: &str, memcg: &str, cpu: u32| {
        format!(
            r#"
[[workload]]
name = "{name}"
memcg = "{memcg}"
cpus = [{cpu}]
[workload.fio]
rw = "randread"
size = "40MiB"
norandommap = true
time_based = true
runtime = "300ms"
"#
        )
    };
    format!(
        r#"
name = "protection"
[machine]
memory = "64MiB"
cpus = 4
[[memcg]]
path = "/a"
{protect}
[[memcg]]
path = "/b"
{}{}"#,
        job("fa", "/a", 0),
        job("fb", "/b", 1)
    )
}

fn pgsteal(r: &VariantResult, memcg: &str) -> u64 {
    memcg_stat(r, memcg, "pgsteal_kswapd") + memcg_stat(r, memcg, "pgsteal_direct")
}

fn pgscan(r: &VariantResult, memcg: &str) -> u64 {
    memcg_stat(r, memcg, "pgscan_kswapd") + memcg_stat(r, memcg, "pgscan_direct")
}

#[test]
fn unprotected_memcgs_share_reclaim() {
    // The baseline the protection tests compare against.
    let r = run_checked(&protection_scenario(""));
    let (a, b) = (pgsteal(&r, "/a"), pgsteal(&r, "/b"));
    assert!(a > 10_000 && b > 10_000, "pgsteal /a {a} /b {b}");
    assert!(a * 2 > b && b * 2 > a, "pgsteal /a {a} /b {b}");
}

#[test]
fn memory_low_protects_a_memcg_within_it() {
    let r = run_checked(&protection_scenario(r#"low = "48MiB""#));
    let (a, b) = (pgsteal(&r, "/a"), pgsteal(&r, "/b"));
    // /a's usage never exceeds its 40 MiB file, so it is always below memory.low: global
    // reclaim skips it unless a whole pass reclaimed nothing (memcg_low_reclaim), which
    // would count memory.events low. /b has clean cache to reclaim all along.
    assert_eq!(memcg_event(&r, "/a", "low"), 0);
    assert_eq!(a, 0, "/a reclaimed while protected");
    assert_eq!(pgscan(&r, "/a"), 0);
    assert!(b > 10_000, "pgsteal /b {b}");
    assert_eq!(
        memcg_stat(&r, "/a", "usage"),
        40 << 20,
        "/a keeps its whole file"
    );
    assert!(r.oom_kills.is_empty());
}

#[test]
fn memory_min_protects_a_memcg_within_it() {
    let r = run_checked(&protection_scenario(r#"min = "48MiB""#));
    let (a, b) = (pgsteal(&r, "/a"), pgsteal(&r, "/b"));
    assert_eq!(a, 0, "/a reclaimed while below memory.min");
    assert_eq!(pgscan(&r, "/a"), 0);
    assert_eq!(memcg_event(&r, "/a", "low"), 0);
    assert!(b > 10_000, "pgsteal /b {b}");
    assert_eq!(memcg_stat(&r, "/a", "usage"), 40 << 20);
}

#[test]
fn memory_low_yields_when_nothing_else_can_be_reclaimed() {
    // Only /a has memory, all of it below memory.low: kswapd (never memcg_low_reclaim)
    // reclaims nothing; direct reclaim finds nothing, retries with memcg_low_reclaim and
    // reclaims from /a, counting memory.events low.
    let r = run_checked(
        r#"
name = "low-breach"
[machine]
memory = "32MiB"
cpus = 2
[[memcg]]
path = "/a"
low = "1GiB"
[[workload]]
name = "fa"
memcg = "/a"
cpus = [0]
[workload.fio]
rw = "read"
size = "64MiB"
"#,
    );
    assert!(r.oom_kills.is_empty());
    assert_eq!(r.workloads["fa"].ops, 16384);
    assert_eq!(memcg_stat(&r, "/a", "pgsteal_kswapd"), 0);
    assert_eq!(vmstat(&r, "pgsteal_kswapd"), 0);
    assert!(memcg_stat(&r, "/a", "pgsteal_direct") >= 16384 - 8192);
    assert!(memcg_event(&r, "/a", "low") > 0);
    assert!(vmstat(&r, "allocstall_normal") > 0);
}

// ---------------------------------------------------------------------------------------
// kswapd versus direct reclaim
// ---------------------------------------------------------------------------------------

fn readers(jobs: u32, size: &str) -> String {
    format!(
        r#"
name = "readers"
[machine]
memory = "64MiB"
cpus = 8
[[workload]]
name = "fio"
cpus = [0, 1, 2, 3, 4, 5, 6]
[workload.fio]
rw = "read"
numjobs = {jobs}
size = "{size}"
"#
    )
}

#[test]
fn one_reader_is_served_by_kswapd_alone() {
    // 128 MiB streamed through 64 MiB by one reader: kswapd (on CPU 7) keeps up.
    let r = run_checked(&readers(1, "128MiB"));
    assert_eq!(r.workloads["fio"].ops, 32768);
    assert!(vmstat(&r, "pageoutrun") > 0);
    assert!(vmstat(&r, "pgsteal_kswapd") >= 32768 - 16384);
    assert_eq!(vmstat(&r, "allocstall_normal"), 0);
    assert_eq!(vmstat(&r, "pgscan_direct"), 0);
    assert_eq!(vmstat(&r, "pgsteal_direct"), 0);
}

#[test]
fn many_readers_outpace_kswapd_into_direct_reclaim() {
    // Seven readers allocate faster than one kswapd reclaims: free memory reaches the
    // min watermark and the allocating tasks reclaim themselves.
    let r = run_checked(&readers(7, "32MiB"));
    assert_eq!(r.workloads["fio"].ops, 7 * 8192);
    assert!(vmstat(&r, "pageoutrun") > 0);
    assert!(vmstat(&r, "pgsteal_kswapd") > 0);
    assert!(vmstat(&r, "allocstall_normal") > 0);
    assert!(vmstat(&r, "pgscan_direct") > 0);
    assert!(vmstat(&r, "pgsteal_direct") > 0);
}

/// `until` stops a workload even when its threads wait in a CPU's queue (the demo's fio
/// shares CPU 3 with kswapd and must stop when memcached's run phase ends).
#[test]
fn until_stops_a_workload_queued_on_a_shared_cpu() {
    let loaded = reclaimsim::scenario::load(
        std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/demo.toml"
        )),
        &[],
        None,
    )
    .unwrap();
    let r = reclaimsim::results::run(&loaded.base, "base", RunOptions::default()).unwrap();
    let run = &r.workloads["memcached:run"];
    let fio = &r.workloads["fio"];
    assert!(
        r.virtual_time_s < 3.0,
        "fio ran on after memcached ended: {}",
        r.virtual_time_s
    );
    assert!(
        fio.measured_s < run.measured_s + 0.5,
        "{} vs {}",
        fio.measured_s,
        run.measured_s
    );
}

/// Tasks sharing a CPU share its time (CFS), not its steps: a task whose operations
/// are 64 times longer gets about as many touches done as one with short operations
/// (over 100 slices of 4 ms, so that the last slice's share is small).
#[test]
fn tasks_sharing_a_cpu_share_its_time() {
    let r = run_checked(
        r#"
name = "cfs"
[machine]
memory = "64MiB"
cpus = 1
[[workload]]
name = "long"
[workload.anon]
size = "4MiB"
pattern = "random"
runtime = "400ms"
ops_per_step = 64
[[workload]]
name = "short"
[workload.anon]
size = "4MiB"
pattern = "random"
runtime = "400ms"
"#,
    );
    let long = r.workloads["long"].ops as f64 * 64.0;
    let short = r.workloads["short"].ops as f64;
    assert!(
        (long / short - 1.0).abs() < 0.1,
        "touches: long {long}, short {short}"
    );
}

/// A run that `duration` cuts short while its only thread sleeps past the cut ends at
/// the duration, and its time series reaches that end (not the thread's wake-up, nor its
/// last touch).
#[test]
fn a_duration_cut_while_tasks_sleep_ends_at_the_duration() {
    let r = run_checked(
        r#"
name = "sleeper"
duration = "100ms"
sample_interval = "10ms"
[machine]
memory = "64MiB"
cpus = 1
[[workload]]
name = "a"
cpus = [0]
[workload.anon]
size = "1MiB"
[[workload.anon.phase]]
sleep_until = "1s"
"#,
    );
    assert_eq!(r.virtual_time_s, 0.1);
    let last = r.timeseries.last().expect("samples").time_s;
    assert!((last - 0.1).abs() < 1e-9, "last sample at {last} s");
    assert_eq!(r.timeseries.len(), 11, "0, 10, ..., 100 ms");
    assert!(r.sched.cpus[0].busy_fraction < 0.1);
}

/// dd's own work per block (`dd_block`: its write of the block to /dev/null) is charged
/// once per 4 KiB read, on the reader's CPU, as the workload's work; its read is
/// filemap_read's and costs the same whatever dd_block is.
#[test]
fn dd_pays_its_write_to_dev_null_once_a_block() {
    let text = |dd_block: u64| {
        format!(
            r#"
name = "dd-block"
[machine]
memory = "64MiB"
cpus = 1
[costs]
dd_block = {dd_block}
[[workload]]
name = "dd"
[workload.dd]
size = "1MiB"
"#
        )
    };
    let reader = |r: &VariantResult| {
        let t = r.sched.tasks.iter().find(|t| t.task.starts_with("dd"));
        let t = t.unwrap_or_else(|| panic!("no dd task: {:?}", r.sched.tasks));
        (t.profile.categories.clone(), r.workloads["dd"].ops)
    };
    let (without, ops) = reader(&run_checked(&text(0)));
    let (with, ops_with) = reader(&run_checked(&text(1000)));
    assert_eq!((ops, ops_with), (256, 256), "1 MiB in 4 KiB blocks");
    assert_eq!(without.get("work").copied().unwrap_or(0), 0);
    assert_eq!(with["work"], 256 * 1000);
    for (cat, ns) in &without {
        if cat != "work" {
            assert_eq!(with.get(cat), Some(ns), "{cat}: the read's cost moved");
        }
    }
}

/// The CPU time the (one) fio task spent in the `other` category: the kernel's work
/// apart from I/O, lists, locks and the workload's own.
fn fio_other_ns(r: &VariantResult) -> u64 {
    let t = r.sched.tasks.iter().find(|t| t.task.starts_with("fio"));
    let t = t.unwrap_or_else(|| panic!("no fio task: {:?}", r.sched.tasks));
    t.profile.categories.get("other").copied().unwrap_or(0)
}

/// A random read pays `lookup_cold` (its lookup and copy find the lines cold); a read at
/// the page after its task's last one in the file (a sequential stream) does not, so
/// fio's one sequential pass pays it once, at its first page, and its random pass on
/// nearly every read.
#[test]
fn random_reads_pay_the_cold_lookup_and_a_sequential_stream_does_not() {
    let text = |rw: &str, cold: u64| {
        format!(
            r#"
name = "lookup-cold"
[machine]
memory = "64MiB"
cpus = 1
[costs]
lookup_cold = {cold}
[[workload]]
name = "fio"
[workload.fio]
rw = "{rw}"
size = "1MiB"
number_ios = 256
"#
        )
    };
    let other = |rw: &str, cold: u64| {
        let r = run_checked(&text(rw, cold));
        assert_eq!(r.workloads["fio"].ops, 256, "{rw}: one pass of 256 reads");
        fio_other_ns(&r)
    };
    assert_eq!(
        other("read", 1000) - other("read", 0),
        1000,
        "the first page only"
    );
    let random = other("randread", 1000) - other("randread", 0);
    assert_eq!(random % 1000, 0, "whole lookups: {random}");
    // A random draw lands on the page after the last one about once in 256.
    assert!(
        (245_000..=256_000).contains(&random),
        "{random} ns over 256 random reads"
    );
}

/// Reclaim evicting a page-cache folio pays `evict_cold` unless the file's last
/// eviction was beside it: a random reader's pages, evicted in LRU order, are scattered
/// over the file and nearly every eviction pays it; a sequential reader's go in file
/// order and almost none does.
#[test]
fn scattered_evictions_pay_the_cold_xarray_store_and_file_order_does_not() {
    let text = |rw: &str, cold: u64| {
        format!(
            r#"
name = "evict-cold"
[machine]
memory = "64MiB"
cpus = 1
[costs]
evict_cold = {cold}
[[memcg]]
path = "/t"
max = "1MiB"
[[workload]]
name = "fio"
memcg = "/t"
[workload.fio]
rw = "{rw}"
size = "4MiB"
number_ios = 2048
"#
        )
    };
    let run = |rw: &str, cold: u64| {
        let r = run_checked(&text(rw, cold));
        (fio_other_ns(&r), r.memcgs["/t"].stat["pgsteal"])
    };
    for rw in ["read", "randread"] {
        let ((without, stolen), (with, stolen_with)) = (run(rw, 0), run(rw, 1000));
        assert_eq!(
            stolen, stolen_with,
            "{rw}: the cost moved what was reclaimed"
        );
        assert!(
            stolen > 500,
            "{rw}: reads through a 1 MiB memcg evict ({stolen})"
        );
        let cold = (with - without) / 1000;
        assert_eq!((with - without) % 1000, 0, "{rw}: whole evictions");
        if rw == "read" {
            assert!(cold <= 4, "{rw}: {cold} of {stolen} evictions paid it");
        } else {
            assert!(cold * 10 >= stolen * 9, "{rw}: {cold} of {stolen} paid it");
        }
    }
}
