//! MGLRU (Linux 6.1) end to end: runs with the invariant checker, the debugfs commands,
//! look-around against the rmap walk, and the two failure modes of 6.1 the scenarios in
//! scenarios/ show, scaled down.

use reclaimsim::engine::RunOptions;
use reclaimsim::results::VariantResult;
use reclaimsim::scenario::{self, ScenarioError};
use std::path::PathBuf;

fn run_text(text: &str, check: bool) -> VariantResult {
    let s = scenario::parse(text, "test.toml", &[], None)
        .unwrap_or_else(|e| panic!("bad test scenario: {e}"))
        .base;
    reclaimsim::results::run(
        &s,
        "base",
        RunOptions {
            check,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Every variant of a scenario file of the repository, with `sets` applied.
fn run_file(name: &str, sets: &[&str]) -> Vec<VariantResult> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = scenario::load(&path, &sets, None).unwrap_or_else(|e| panic!("{e}"));
    loaded
        .variants
        .iter()
        .map(|(n, s)| {
            reclaimsim::results::run(s, n, RunOptions::default())
                .unwrap_or_else(|e| panic!("{n}: {e}"))
        })
        .collect()
}

fn vm(r: &VariantResult, name: &str) -> u64 {
    r.counter(name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

fn share(r: &VariantResult, cat: &str) -> f64 {
    r.kswapd_profile.categories[cat] as f64 / r.kswapd_profile.total_ns.max(1) as f64
}

const MIXED: &str = r#"
name = "mglru-mixed"
seed = 11
sample_interval = "100ms"
[machine]
memory = "64MiB"
cpus = 4
swap = { device = "zram", size = "128MiB" }
[kernel]
policy = "mglru"
# patch1-8's reclaim: kswapd ages both memcgs every round, so both anon and file are
# reclaimed (6.1's default skips aging while /io gives back clean pages without it).
memcg_reclaim = "none"
[[memcg]]
path = "/kv"
[[memcg]]
path = "/io"
[[workload]]
name = "kv"
memcg = "/kv"
cpus = [0, 1]
[workload.memcached]
threads = 2
[[workload.memcached.phase]]
name = "populate"
key-pattern = "P:P"
ratio = "1:0"
data-size = 2000
key-maximum = 20000
requests = "allkeys"
clients = 1
threads = 2
measure = false
[[workload.memcached.phase]]
name = "run"
key-pattern = "G:G"
ratio = "1:4"
data-size = 2000
key-maximum = 20000
test-time = "400ms"
clients = 1
threads = 2
pipeline = 8
[[workload]]
name = "io"
memcg = "/io"
cpus = [2, 3]
after = "kv:populate"
until = "kv"
[workload.fio]
rw = "randread"
numjobs = 2
size = "24MiB"
random_distribution = "zipf:1.1"
norandommap = true
time_based = true
runtime = "10s"
"#;

#[test]
fn mixed_anon_and_file_reclaim_keeps_every_invariant() {
    let r = run_text(MIXED, true);
    assert!(
        vm(&r, "pgsteal_kswapd") + vm(&r, "pgsteal_direct") > 1000,
        "reclaim happened"
    );
    assert!(vm(&r, "pswpout") > 0 && vm(&r, "workingset_refault_file") > 0);
    for memcg in ["/kv", "/io"] {
        let st = &r.lru_gen[memcg][0];
        let gens = st.max_seq - st.min_seq[0] + 1;
        assert!(
            (2..=4).contains(&gens) && st.min_seq[0] <= st.min_seq[1],
            "{memcg}: {st:?}"
        );
        assert_eq!(st.gens.len() as u64, gens);
        let pages: u64 = st.gens.iter().map(|g| g.anon + g.file).sum();
        let usage = r.memcgs[memcg].current / 4096;
        assert!(
            pages <= usage && pages + 256 >= usage,
            "{memcg}: {pages} on lists, {usage} charged"
        );
    }
    assert!(
        r.lru_gen["/kv"][0].max_seq > 3,
        "kswapd aged the anon memcg"
    );
    assert!(
        r.lru_gen["/kv"][0].mm_walk.leaf_young > 0,
        "the page-table walk found young PTEs"
    );
    let sampled = r.timeseries.iter().filter(|s| s.lru_gen.is_some()).count();
    assert!(sampled >= 4 && sampled == r.timeseries.len());
}

const AGE_AND_EVICT: &str = r#"
name = "debugfs"
[machine]
memory = "128MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }
[kernel]
policy = "mglru"
[[memcg]]
path = "/a"
[[workload]]
name = "a"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "16MiB"
[[event]]
at = "100ms"
command = "+ /a 0 max 60 0"
[[event]]
at = "200ms"
command = "+ /a 0 max; + /a 0 max"
[[event]]
at = "300ms"
command = "- /a 0 max-2 200 1000"
[[event]]
at = "400ms"
command = "- /a 0 max"
[[event]]
at = "500ms"
command = "+ /a 0 max-3, + /a 0 99"
cpu = 1
"#;

#[test]
fn debugfs_commands_age_and_evict() {
    let r = run_text(AGE_AND_EVICT, true);
    let results: Vec<&str> = r.events.iter().map(|e| e.result.as_str()).collect();
    // 4 generations and no force_scan: ERANGE. Then two forced agings; eviction of the
    // generation the faults filled (now max_seq - 2); the two youngest cannot be
    // evicted; an old seq is a no-op but a future one is invalid.
    assert_eq!(results, ["ERANGE", "ok", "ok", "EINVAL", "EINVAL"]);
    assert_eq!(r.lru_gen["/a"][0].max_seq, 5);
    let out = vm(&r, "pswpout");
    assert!(
        (1000..1064).contains(&out),
        "nr_to_reclaim 1000, 64 at a time: {out}"
    );
    assert!(r.memcgs["/a"].stat["pgsteal_direct"] >= 1000);
    // It runs at its time, after the switch to it on its CPU (context_switch).
    assert!((r.events[1].time_s - 0.2).abs() < 1e-5);
}

fn scenario_error(text: &str) -> ScenarioError {
    scenario::parse(text, "s.toml", &[], None).expect_err("accepted")
}

#[test]
fn bad_events_are_scenario_errors() {
    let base = AGE_AND_EVICT.split("[[event]]").next().unwrap().to_string();
    for (event, what) in [
        (
            "at = \"1s\"\ncommand = \"* /a 0 3\"",
            "+ (aging) or - (eviction)",
        ),
        (
            "at = \"1s\"\ncommand = \"+ /b 0 max\"",
            "no [[memcg]] with path \"/b\"",
        ),
        (
            "at = \"1s\"\ncommand = \"+ /a 1 max\"",
            "node 1 does not exist",
        ),
        (
            "at = \"1s\"\ncommand = \"- /a 0 max 300\"",
            "SWAPPINESS must be 0 to 200",
        ),
        (
            "at = \"1s\"\ncommand = \"+ /a 0 max\"\ncpu = 2",
            "CPU 2 does not exist",
        ),
    ] {
        let text = format!("{base}[[event]]\n{event}\n");
        let e = scenario_error(&text);
        assert!(e.field.starts_with("event[0]"), "{e}");
        assert!(e.message.contains(what), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
    let classic = AGE_AND_EVICT.replace("policy = \"mglru\"", "policy = \"classic\"");
    let e = scenario_error(&classic);
    assert!(e.message.contains("kernel.policy = \"mglru\""), "{e}");
}

const LOOK_AROUND_SMALL: [&str; 5] = [
    "machine.memory=128MiB",
    "machine.swap.size=256MiB",
    "workload.memcached.memcached.phase.populate.key-maximum=67000",
    "workload.memcached.memcached.phase.run.key-maximum=67000",
    "workload.memcached.memcached.phase.run.test-time=500ms",
];

#[test]
fn look_around_takes_work_off_the_rmap_walk() {
    // The seed's setup: no page-table walks (patch1-6 vs patch1-7).
    let v = run_file(
        "analysis/002-look-around-client-memcached.toml",
        &LOOK_AROUND_SMALL,
    );
    let (off, on) = (&v[0], &v[1]);
    assert_eq!(
        (off.name.as_str(), on.name.as_str()),
        ("look_around_off", "look_around_on")
    );
    assert!(share(on, "rmap_walk") < 0.8 * share(off, "rmap_walk"));
    // try_to_unmap's walks stay: look-around saves none of them.
    assert!(share(off, "unmap") > 0.0 && share(on, "unmap") >= share(off, "unmap"));
    assert!(share(on, "pte_scan") > share(off, "pte_scan"));
    assert!(
        vm(on, "pgactivate") > 1000 * vm(off, "pgactivate").max(1),
        "look-around marks the trigger referenced (without it, activation is rare)"
    );
    let walked = |r: &VariantResult| r.lru_gen["/"][0].mm_walk.nonleaf_found;
    assert_eq!(
        (walked(off), walked(on)),
        (0, 0),
        "lru_gen_walks = false walks no PTE table"
    );
    // With 6.1's page-table walks on, look-around's Bloom filter feedback keeps PTE
    // tables in the walk.
    let mut sets = LOOK_AROUND_SMALL.to_vec();
    sets.push("kernel.lru_gen_walks=true");
    let v = run_file("analysis/002-look-around-client-memcached.toml", &sets);
    assert!(
        walked(&v[1]) > 2 * walked(&v[0]),
        "{} vs {}",
        walked(&v[1]),
        walked(&v[0])
    );
}

/// Seed 002's client scenario (Chrome OS's tab test on the Snapdragon 7c, at the seed's
/// 4 GiB, until Chrome discards a tab, the renderers sharing the browser's code):
/// look-around, off and on in one run, cuts the rmap walks reclaim makes to check young
/// bits, of the renderers' heaps (folio_referenced's anon_vma acquisitions: 6.83 M ->
/// 4.20 M) and of the shared code (its i_mmap acquisitions: 117 k -> 45 k), promotes
/// the young neighbours it finds (pgactivate: without it, only code pages found young
/// in two renderers are activated), and scans PTE tables in kswapd; try_to_unmap's
/// walks stay.
#[test]
fn look_around_cuts_the_reference_walks_in_the_tab_test() {
    let v = run_file("seeds/002-look-around-client.toml", &[]);
    let (off, on) = (&v[0], &v[1]);
    assert_eq!(off.name, "look_around_off");
    let walks = |r: &VariantResult, site: &str| r.locks["anon_vma"].sites[site].acquisitions;
    let (w_off, w_on) = (
        walks(off, "folio_referenced"),
        walks(on, "folio_referenced"),
    );
    assert!(10 * w_on < 8 * w_off, "{w_on} vs {w_off}");
    assert!(walks(on, "try_to_unmap") >= walks(off, "try_to_unmap"));
    let code = |r: &VariantResult| r.locks["i_mmap"].sites["folio_referenced"].acquisitions;
    assert!(2 * code(on) < code(off), "{} vs {}", code(on), code(off));
    assert!(vm(on, "pgactivate") > 5 * vm(off, "pgactivate"));
    assert_eq!(share(off, "pte_scan"), 0.0);
    assert!(share(on, "pte_scan") > 0.0);
}

#[test]
fn file_set_larger_than_memory_misses_more_than_classic() {
    let v = run_file(
        "mglru-file-refaults.toml",
        &[
            "memcg.\"/db\".max=16MiB",
            "workload.fio.fio.numjobs=4",
            "workload.fio.fio.ramp_time=200ms",
            "workload.fio.fio.runtime=400ms",
        ],
    );
    let (classic, mglru) = (&v[0], &v[1]);
    let misses = |r: &VariantResult| vm(r, "pgpgin") / 4;
    assert!(
        misses(mglru) as f64 > 1.03 * misses(classic) as f64,
        "{} vs {}",
        misses(mglru),
        misses(classic)
    );
    // All the page cache sits in the oldest generation, which never retires.
    let st = &mglru.lru_gen["/db"][0];
    assert_eq!((st.min_seq[1], st.max_seq), (0, 3), "{st:?}");
    let file: u64 = st.gens.iter().map(|g| g.file).sum();
    assert!(st.gens[0].file * 10 >= file * 9, "{:?}", st.gens);
}

#[test]
fn min_ttl_kills_while_swap_and_page_cache_are_left() {
    let v = run_file(
        "mglru-min-ttl-oom.toml",
        &[
            "machine.memory=64MiB",
            "machine.swap.size=8MiB",
            "workload.anon.anon.size=68MiB",
            "workload.anon.start=1200ms",
            "workload.anon.anon.runtime=600ms",
            "workload.fio.fio.size=32MiB",
        ],
    );
    let (off, on) = (&v[0], &v[1]);
    assert!(off.oom_kills.is_empty(), "{:?}", off.oom_kills);
    assert!(
        vm(off, "pswpout") > 2048,
        "without min_ttl_ms swap fills up"
    );
    assert_eq!(on.oom_kills.len(), 1);
    assert_eq!(
        (
            on.oom_kills[0].scope.as_str(),
            on.oom_kills[0].victim.as_str()
        ),
        ("global", "anon")
    );
    assert!(on.oom_kills[0].time_s < 1.8, "{:?}", on.oom_kills);
}
