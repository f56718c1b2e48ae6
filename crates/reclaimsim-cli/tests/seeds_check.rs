//! The invariant checker (`--check`) finds nothing in any variant of any seed scenario,
//! each run just past its first reclaim (every variant scans pages, so the checker sees
//! reclaim's states), scaled down in time (and the largest machines in memory, since
//! every check walks every frame). All variants of all seeds run in this one process, on
//! every core, as `compare --check` runs them.

use rayon::prelude::*;
use reclaimsim::engine::RunOptions;
use reclaimsim::scenario;
use std::path::PathBuf;

/// Overrides for every seed, and the ones of the seeds that need more time to reach
/// their first reclaim, or less memory to be checked in seconds.
const ALL: &[&str] = &["duration=30ms"];
const SCALED: &[(&str, &[&str])] = &[
    ("000-mixed-memcgs.toml", &["duration=100ms"]),
    ("002-look-around.toml", &["duration=400ms"]),
    (
        "002-look-around-client.toml",
        // Memory and tabs at 1/16 (256 MiB, 12 MiB a tab): the first reclaim comes once
        // about 21 tabs are open, 342 s into the script (its times do not scale).
        &["scale=0.0625", "duration=400s"],
    ),
    ("mglru-vs-classic-memcached.toml", &["duration=100ms"]),
    (
        "004-page-fault3.toml",
        &["duration=5ms", "machine.memory=2GiB"],
    ),
    (
        "004-readtwice.toml",
        // Global reclaim (the containers have no limit) from about 10 ms at 1 GiB:
        // 17,745 pages scanned by 15 ms under the node lock, 59,188 under the lruvec
        // lock (2026-11-30).
        &["duration=15ms", "machine.memory=1GiB"],
    ),
    ("003-batch-aging.toml", &["duration=10ms"]),
];

/// Seeds that never reclaim: page_fault3 measures the lru_lock protocol of the page
/// cache's lru_add and activation batches with memory to spare, as will-it-scale does.
const NO_RECLAIM: &[&str] = &["004-page-fault3.toml"];

fn seeds() -> Vec<PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/seeds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn check_finds_no_violation_in_any_seed_variant() {
    let mut jobs = Vec::new();
    for path in seeds() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut sets: Vec<String> = ALL.iter().map(|s| s.to_string()).collect();
        if let Some((_, extra)) = SCALED.iter().find(|(f, _)| *f == file) {
            sets.extend(extra.iter().map(|s| s.to_string()));
        }
        let loaded = scenario::load(&path, &sets, None).unwrap_or_else(|e| panic!("{e}"));
        let reclaims = !NO_RECLAIM.contains(&file.as_str());
        for (name, s) in loaded.variants {
            jobs.push((format!("{file} {name}"), s, reclaims));
        }
    }
    assert!(jobs.len() >= 8, "{} variants", jobs.len());
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|(name, s, reclaims)| {
            let t = std::time::Instant::now();
            let opts = RunOptions {
                check: true,
                watch: None,
                agent: None,
                plugin: None,
            };
            let r = reclaimsim::results::run(s, name, opts);
            eprintln!("{name}: {:.2} s", t.elapsed().as_secs_f64());
            // Pages scanned by any reclaim: global, direct or a memcg's limit.
            let scanned = |r: &reclaimsim::results::VariantResult| {
                ["pgscan_anon", "pgscan_file"]
                    .iter()
                    .map(|k| r.vmstat.get(*k).copied().unwrap_or(0))
                    .sum::<u64>()
            };
            match r {
                Ok(r) if r.virtual_time_s == 0.0 => Some(format!("{name}: no virtual time passed")),
                Ok(r) if *reclaims && scanned(&r) == 0 => Some(format!(
                    "{name}: no page scanned: run it past its first reclaim"
                )),
                Ok(_) => None,
                Err(e) => Some(format!("{name}: {e}")),
            }
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
