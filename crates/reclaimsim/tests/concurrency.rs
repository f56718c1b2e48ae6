//! The concurrent engine and the reclaim throttles: tasks on different CPUs meet at sync
//! points in virtual-time order, see each other's work mid-way, and wait for each other.

mod common;

use common::{memcg_event, run_checked, scenario, vmstat};
use reclaimsim::engine::RunOptions;

/// `threads` usemem-like threads, one per CPU, all touching their own `mib` MiB from
/// time 0 on a machine that holds a quarter of it: they reach the min watermark together.
fn herd(threads: u32, mib: u32) -> String {
    format!(
        r#"
name = "herd"
duration = "150ms"
[machine]
memory = "{memory}MiB"
cpus = {threads}
swap = {{ device = "zram", size = "512MiB" }}
[kernel]
policy = "classic"
[[workload]]
name = "usemem"
[workload.anon]
threads = {threads}
size = "{mib}MiB"
pattern = "seq"
passes = 3
"#,
        memory = threads * mib / 4
    )
}

/// Every thread of a herd enters direct reclaim, and the reclaimers see each other's
/// isolated folios (NR_ISOLATED_ANON counts folios other tasks hold mid-reclaim), so
/// with many of them too_many_isolated() throttles the excess; with few, nobody waits.
#[test]
fn a_herd_enters_direct_reclaim_together_and_the_excess_is_throttled() {
    let many = run_checked(&herd(64, 4));
    assert!(vmstat(&many, "allocstall_normal") >= 64);
    assert!(
        vmstat(&many, "throttle_isolated") > 0,
        "64 reclaimers, an inactive list of a few thousand pages: some must wait"
    );
    assert!(vmstat(&many, "throttle_isolated_ns") > 0);
    let few = run_checked(&herd(2, 32));
    assert!(vmstat(&few, "allocstall_normal") > 0);
    assert_eq!(vmstat(&few, "throttle_isolated"), 0);
}

/// One reader on CPU 0, kswapd on CPU 1, free pages sampled every 2 us: kswapd's frees
/// appear as it makes them, never more than one reclaim batch in a sample interval.
/// (When a kswapd step ran to its end before others saw it, its whole priority pass
/// landed at once: 61 pages in one interval on this scenario.) The reader fills memory
/// by about 40 ms at a page-cache miss's measured cost; 80 ms leaves kswapd 40 ms.
#[test]
fn kswapd_frees_appear_over_the_time_it_spends() {
    let r = run_checked(
        r#"
name = "kswapd-frees"
duration = "80ms"
sample_interval = "2us"
[machine]
memory = "64MiB"
cpus = 2
[kernel]
policy = "classic"
[[workload]]
name = "reader"
cpus = [0]
[workload.fio]
size = "256MiB"
"#,
    );
    assert!(vmstat(&r, "pgsteal_kswapd") > 1000);
    assert_eq!(vmstat(&r, "pgsteal_direct"), 0);
    let free: Vec<u64> = r.timeseries.iter().map(|s| s.free_pages).collect();
    let rises: Vec<u64> = free
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| w[1] - w[0])
        .collect();
    assert!(
        rises.len() > 500,
        "frees spread over {} samples",
        rises.len()
    );
    let most = *rises.iter().max().unwrap();
    assert!(most <= 32, "{most} pages freed within 2 us");
}

/// memory.high far below what a thread touches: after reclaim cannot keep up, the thread
/// sleeps the penalty (mem_cgroup_handle_over_high); without memory.high it never does.
#[test]
fn memory_high_overage_costs_a_penalty_sleep() {
    let text = |high: &str| {
        format!(
            r#"
name = "high"
duration = "100ms"
[machine]
memory = "256MiB"
cpus = 2
[[memcg]]
path = "/a"
{high}
[[workload]]
name = "usemem"
memcg = "/a"
[workload.anon]
size = "64MiB"
passes = 2
"#
        )
    };
    let capped = run_checked(&text(r#"high = "8MiB""#));
    assert!(memcg_event(&capped, "/a", "high") > 0);
    assert!(vmstat(&capped, "throttle_memcg_high") > 0);
    assert!(vmstat(&capped, "throttle_memcg_high_ns") >= 8_000_000);
    let free = run_checked(&text(""));
    assert_eq!(vmstat(&free, "throttle_memcg_high"), 0);
}

/// 36 memcached threads reclaiming with MGLRU age concurrently: many walkers join each
/// mm-list round, and only the last one out may run inc_max_seq (iterate_mm_list's
/// nr_walkers). When the walker that handed out the last mm ended the round while others
/// were still walking, their promotions went to the previous max_seq, older than the
/// folios' own generation, and sorting them later left folios on a generation outside
/// the seq window (the checker's error at 0.19 s of this run).
#[test]
fn mglru_walkers_finish_a_round_before_it_ages() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/seeds/mglru-vs-classic-memcached.toml");
    let sets = ["duration=300ms".to_string()];
    let loaded = reclaimsim::scenario::load(&path, &sets, None).unwrap();
    let (name, s) = &loaded.variants.iter().find(|(n, _)| n == "mglru").unwrap();
    let opts = RunOptions {
        check: true,
        ..Default::default()
    };
    let r = reclaimsim::results::run(s, name, opts).unwrap_or_else(|e| panic!("{e}"));
    let memcached = &r.lru_gen["/system.slice/memcached.service"];
    assert!(memcached[0].max_seq > 6, "it aged several times");
}

/// The same herd and seed give the same results with and without the invariant checker
/// (which runs between tasks' turns, at sync points).
#[test]
fn concurrent_runs_are_deterministic_with_and_without_the_checker() {
    let s = scenario(&herd(16, 4), Some(7));
    let run = |check: bool| {
        let mut r = reclaimsim::results::run(
            &s,
            "base",
            RunOptions {
                check,
                ..Default::default()
            },
        )
        .unwrap();
        r.wall_s = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    let (a, b, c) = (run(true), run(false), run(false));
    assert_eq!(a, b);
    assert_eq!(b, c);
}

/// allow_direct_reclaim(): free pages at or below half the min watermark stop direct
/// reclaim (throttle_direct_reclaim waits) and wake kswapd; above it, or once kswapd has
/// given up on the node, reclaim may go on.
#[test]
fn direct_reclaim_is_allowed_above_half_the_min_watermark() {
    use reclaimsim::kernel::node::WMARK_MIN;
    use reclaimsim::kernel::throttle::allow_direct_reclaim;
    let mut s = common::Sys::new("[machine]\nmemory = \"64MiB\"\ncpus = 2\n");
    let min = s.k.nodes[0].zone.wmark[WMARK_MIN];
    assert!(allow_direct_reclaim(&mut s.k, 0));
    s.k.nodes[0].zone.free = min / 2;
    assert!(!allow_direct_reclaim(&mut s.k, 0));
    assert!(s.k.nodes[0].kswapd_wake, "kswapd woken");
    s.k.nodes[0].kswapd_failures = 16;
    assert!(allow_direct_reclaim(&mut s.k, 0));
}

/// A writer dirtying a shared file mapping faster than the flusher writes: between the
/// freerun point and the dirty limit balance_dirty_pages() paces it with short pauses
/// (pos_ratio), well before it would have to stop at the limit.
#[test]
fn dirtiers_are_paced_above_the_freerun_point() {
    let r = run_checked(
        r#"
name = "dirty"
duration = "200ms"
[machine]
memory = "256MiB"
cpus = 2
[[workload]]
name = "pf3"
cpus = [0]
[workload.page_fault3]
tasks = 1
size = "128MiB"
runtime = "200ms"
"#,
    );
    let pauses = vmstat(&r, "balance_dirty_pages_pause");
    assert!(pauses > 10, "{pauses} pauses");
    let mean = vmstat(&r, "balance_dirty_pages_pause_ns") / pauses;
    assert!(
        mean < 1_000_000,
        "gradual pauses, not MAX_PAUSE stops: {mean} ns"
    );
}
