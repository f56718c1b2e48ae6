//! Tasks out of phase (issue 23, section 3): each workload thread starts within
//! `machine.start_jitter` of its workload's start and tasks due at the same virtual time
//! run in a seeded order, both drawn from the scenario's seed; `start_jitter = "0"` is the
//! old lockstep. A small page_fault3 (scenarios/seeds/004-page-fault3.toml).

mod common;

use reclaimsim::engine::RunOptions;
use reclaimsim::results::VariantResult;

/// 16 processes on 2 nodes, each writing its own 2 MiB shared file mapping for 20 ms.
fn page_fault3(lru_lock: &str, jitter: Option<&str>) -> String {
    let jitter = jitter.map_or(String::new(), |j| format!("start_jitter = \"{j}\""));
    format!(
        r#"name = "pf3-small"
seed = 1
[machine]
profile = "xeon-sp-26c-2s"
memory = "2GiB"
nodes = 2
cpus = 16
{jitter}
[kernel]
policy = "classic"
lru_lock = "{lru_lock}"
[[workload]]
name = "page_fault3"
[workload.page_fault3]
tasks = 16
size = "2MiB"
mode = "process"
runtime = "20ms"
"#
    )
}

fn run(text: &str, seed: u64) -> VariantResult {
    let s = common::scenario(text, Some(seed));
    reclaimsim::results::run(&s, "base", RunOptions::default())
        .unwrap_or_else(|e| panic!("run failed: {e}"))
}

/// What a run measured, without its wall time.
fn measured(r: &VariantResult) -> String {
    format!("{:?} {:?} {:?}", r.workloads, r.locks, r.vmstat)
}

/// The lru_lock's acquisitions that waited, as a share of all.
fn contended(r: &VariantResult) -> f64 {
    let l = &r.locks["lru_lock"];
    l.contended as f64 / l.acquisitions as f64
}

#[test]
fn page_fault3_differs_between_seeds_and_repeats_on_one() {
    let text = page_fault3("node", None);
    let (a, b) = (run(&text, 1), run(&text, 2));
    let ops = |r: &VariantResult| r.workloads["page_fault3"].ops;
    assert_ne!(ops(&a), ops(&b), "seeds 1 and 2 run in lockstep");
    assert_ne!(measured(&a), measured(&b));
    assert_eq!(
        measured(&a),
        measured(&run(&text, 1)),
        "same scenario and seed, same results"
    );
}

#[test]
fn start_jitter_zero_is_the_old_lockstep() {
    let text = page_fault3("node", Some("0"));
    assert_eq!(
        measured(&run(&text, 1)),
        measured(&run(&text, 2)),
        "without jitter nothing in page_fault3 depends on the seed"
    );
}

/// In lockstep the node lock (one per node) hardly waits while the lruvec lock, taken as
/// often, waits on half its acquisitions: an artefact of the phases, as both variants
/// take the same locks in the root memcg. Out of phase they contend alike.
#[test]
fn out_of_phase_the_node_lock_contends_as_the_lruvec_lock_does() {
    let (node0, lruvec0) = (
        run(&page_fault3("node", Some("0")), 1),
        run(&page_fault3("lruvec", Some("0")), 1),
    );
    let (node, lruvec) = (
        run(&page_fault3("node", None), 1),
        run(&page_fault3("lruvec", None), 1),
    );
    let acq = |r: &VariantResult| r.locks["lru_lock"].acquisitions;
    assert_eq!(acq(&node0), acq(&lruvec0), "the same acquisitions");
    assert!(
        contended(&node0) < 0.02 && contended(&lruvec0) > 0.3,
        "lockstep: node {:.3}, lruvec {:.3}",
        contended(&node0),
        contended(&lruvec0)
    );
    assert!(
        contended(&node) > 2.0 * contended(&node0) && contended(&node) > 0.0,
        "the node lock contends once tasks are out of phase: {:.3} (lockstep {:.3})",
        contended(&node),
        contended(&node0)
    );
    let ratio = contended(&lruvec) / contended(&node);
    assert!(
        (0.25..4.0).contains(&ratio),
        "out of phase the two contend alike: node {:.3}, lruvec {:.3}",
        contended(&node),
        contended(&lruvec)
    );
}
