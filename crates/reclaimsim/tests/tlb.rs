//! Reclaim's deferred TLB flushes and their IPIs through the whole engine
//! (`kernel/tlb.rs`, with mm_cpumask from the scheduler): scenarios/examples/tlb-ipis.toml.

mod common;

use reclaimsim::results::VariantResult as RunResults;

fn run(name: &str) -> RunResults {
    let text = include_str!("../../../scenarios/examples/tlb-ipis.toml");
    let loaded = reclaimsim::scenario::parse(text, "tlb-ipis.toml", &[], None).unwrap();
    let s = &loaded.variants.iter().find(|(n, _)| n == name).unwrap().1;
    reclaimsim::results::run(s, name, Default::default()).unwrap()
}

/// Threads that write their pages: a flush for nearly every page swapped out, each to
/// some of the 7 other CPUs (those running a thread of the process then), and the work
/// slower than without the IPIs; threads that only read after the populate flush less
/// often a page; with `tlb_ipi` 0 there are none and the counters are not shown.
#[test]
fn writing_threads_pay_a_round_of_ipis_a_page_swapped_out() {
    let (threads, no_ipis, loads) = (run("threads"), run("no_ipis"), run("loads"));
    let out = common::vmstat(&threads, "pswpout");
    let flushes = common::vmstat(&threads, "nr_tlb_remote_flush");
    let ipis = common::vmstat(&threads, "nr_tlb_remote_flush_received");
    assert!(
        out > 1000 && flushes * 10 >= out * 9,
        "{flushes} flushes, {out} out"
    );
    assert!(
        ipis >= flushes && ipis <= 7 * flushes,
        "{ipis} IPIs, {flushes} flushes"
    );
    // Some requests find their CPU yet to take an earlier IPI and send none.
    let sent = threads.model_counters["tlb_flush_ipis"];
    assert!(
        sent > 0 && sent < ipis,
        "{sent} interrupts for {ipis} requests"
    );
    // Some find their CPU spinning on or holding an lru_lock with interrupts masked,
    // and their senders wait until it unlocks.
    let masked = threads.model_counters["tlb_flush_masked"];
    let waited = threads.model_counters["tlb_flush_masked_wait_ns"];
    assert!(
        masked > 0 && masked < ipis && waited > 0,
        "{masked} masked, {waited} ns"
    );
    let ops = |r: &RunResults| r.workloads["app:run"].ops_per_sec;
    assert!(
        ops(&no_ipis) > 1.2 * ops(&threads),
        "{} {}",
        ops(&no_ipis),
        ops(&threads)
    );
    assert!(!no_ipis.vmstat.contains_key("nr_tlb_remote_flush"));
    let per_page = |r: &RunResults| {
        common::vmstat(r, "nr_tlb_remote_flush") as f64 / common::vmstat(r, "pswpout") as f64
    };
    assert!(
        per_page(&loads) < 0.8 * per_page(&threads),
        "{}",
        per_page(&loads)
    );
}
