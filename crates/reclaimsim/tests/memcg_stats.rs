//! The classic LRU's memcg stats flushes through the whole engine
//! (`kernel/memcg_stats.rs`): scenarios/examples/memcg-stats-flush.toml.

use reclaimsim::results::VariantResult as RunResults;

fn run(name: &str) -> RunResults {
    run_with(name, &[])
}

fn run_with(name: &str, sets: &[&str]) -> RunResults {
    let text = include_str!("../../../scenarios/examples/memcg-stats-flush.toml");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = reclaimsim::scenario::parse(text, "memcg-stats-flush.toml", &sets, None).unwrap();
    let s = &loaded.variants.iter().find(|(n, _)| n == name).unwrap().1;
    reclaimsim::results::run(s, name, Default::default()).unwrap()
}

/// The example's memcg_flush_cpu and memcg_flush_memcg (its machine profile's).
fn flush_costs() -> (u64, u64) {
    let text = include_str!("../../../scenarios/examples/memcg-stats-flush.toml");
    let loaded = reclaimsim::scenario::parse(text, "memcg-stats-flush.toml", &[], None).unwrap();
    let s = &loaded.variants[0].1;
    (s.costs.memcg_flush_cpu, s.costs.memcg_flush_memcg)
}

fn counter(r: &RunResults, name: &str) -> u64 {
    r.model_counters.get(name).copied().unwrap_or(0)
}

/// Classic reclaim flushes the stats again and again, one flusher at a time while the
/// others find it busy; its masked spans make the TLB flushes that target its CPU wait,
/// so the threads run slower than with free flushes; MGLRU does not flush in reclaim.
#[test]
fn classic_reclaim_flushes_with_interrupts_masked_and_mglru_does_not() {
    let (classic, free, mglru) = (run("classic"), run("classic_no_flush"), run("mglru"));
    let flushes = counter(&classic, "memcg_stats_flush");
    assert!(flushes > 100, "{flushes} flushes");
    assert!(counter(&classic, "memcg_stats_flush_busy") > 0);
    // 16 CPUs at memcg_flush_cpu and at most 16 x 3 (CPU, memcg) pairs at
    // memcg_flush_memcg a flush, the profile's costs.
    let (cpu, memcg) = flush_costs();
    let ns = counter(&classic, "memcg_stats_flush_ns");
    assert!(
        ns > flushes * 16 * cpu && ns <= flushes * (16 * cpu + 48 * memcg),
        "{ns} ns in {flushes} flushes"
    );
    assert!(counter(&free, "memcg_stats_flush") > 0);
    assert_eq!(counter(&free, "memcg_stats_flush_ns"), 0);
    let waited = |r: &RunResults| counter(r, "tlb_flush_masked_wait_ns");
    assert!(
        waited(&classic) > 2 * waited(&free),
        "{} {}",
        waited(&classic),
        waited(&free)
    );
    let ops = |r: &RunResults| r.workloads["app:run"].ops_per_sec;
    assert!(
        ops(&free) > 1.2 * ops(&classic),
        "{} {}",
        ops(&free),
        ops(&classic)
    );
    assert_eq!(counter(&mglru, "memcg_stats_flush"), 0);
    assert!(!mglru.locks.contains_key("memcg_stats_flush"));
}

/// 5.15-rc3 to 5.18-rc3 also flush at every classic refault: more callers, so the
/// threshold is acted on sooner and more calls find a flush under way; MGLRU's refaults
/// return before that flush.
#[test]
fn the_5_15_refault_path_flushes_too_and_mglru_still_does_not() {
    let (v61, v515) = (run("classic"), run("classic_v5_15"));
    let calls =
        |r: &RunResults| counter(r, "memcg_stats_flush") + counter(r, "memcg_stats_flush_busy");
    assert!(v515.vmstat["workingset_refault_anon"] > 1000);
    assert!(
        calls(&v515) > calls(&v61),
        "{} {}",
        calls(&v515),
        calls(&v61)
    );
    assert!(
        counter(&v515, "memcg_stats_flush") > counter(&v61, "memcg_stats_flush"),
        "{} {}",
        counter(&v515, "memcg_stats_flush"),
        counter(&v61, "memcg_stats_flush")
    );
    assert_eq!(counter(&v61, "memcg_stats_flush_refault"), 0);
    let by_refault = counter(&v515, "memcg_stats_flush_refault");
    assert!(by_refault > 0 && by_refault < counter(&v515, "memcg_stats_flush"));
    let mglru = run_with("mglru", &["kernel.memcg_stats_flush=v5.15"]);
    assert!(mglru.vmstat["workingset_refault_anon"] > 1000);
    assert_eq!(calls(&mglru), 0);
}
