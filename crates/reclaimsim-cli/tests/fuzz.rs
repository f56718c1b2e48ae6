//! Property-based fuzzing of what users type: scenario files (TOML-ish text built from
//! the schema's words, and mutations of the shipped scenarios), `--set KEY=VALUE`, a
//! sweep's `--values`, and machine profiles. No input may panic, and every error is
//! located: a file error names its line (within the text), a `--set` error names a key.
//!
//! `cargo test -p reclaimsim-cli --test fuzz` runs a proptest smoke of 4,000 cases
//! (shrinking a failure to a small input). The long run is ignored in the normal tests:
//! `cargo test --release -p reclaimsim-cli --test fuzz -- --ignored --nocapture` runs 10 M
//! cases in all on two threads (`RECLAIMSIM_FUZZ_CASES`, `RECLAIMSIM_FUZZ_SEED` change
//! them) with a plain generator over the same vocabularies, and prints the counts.
//!
//! Inputs a run found are kept as regression tests at the end of this file.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestError, TestRunner};
use reclaimsim::scenario::{self, ScenarioError};

/// Every scenario the repository ships, read at compile time.
const SHIPPED: &[(&str, &str)] = &[
    ("demo.toml", include_str!("../../../scenarios/demo.toml")),
    (
        "writeback.toml",
        include_str!("../../../scenarios/writeback.toml"),
    ),
    (
        "direct-reclaim-latency.toml",
        include_str!("../../../scenarios/direct-reclaim-latency.toml"),
    ),
    (
        "memcg-fairness.toml",
        include_str!("../../../scenarios/memcg-fairness.toml"),
    ),
    (
        "mglru-file-refaults.toml",
        include_str!("../../../scenarios/mglru-file-refaults.toml"),
    ),
    (
        "mglru-min-ttl-oom.toml",
        include_str!("../../../scenarios/mglru-min-ttl-oom.toml"),
    ),
    (
        "limits-during-run.toml",
        include_str!("../../../scenarios/examples/limits-during-run.toml"),
    ),
    (
        "zram-writeback.toml",
        include_str!("../../../scenarios/examples/zram-writeback.toml"),
    ),
    (
        "numa-cxl.toml",
        include_str!("../../../scenarios/examples/numa-cxl.toml"),
    ),
    (
        "000-mixed-memcgs.toml",
        include_str!("../../../scenarios/seeds/000-mixed-memcgs.toml"),
    ),
    (
        "002-look-around.toml",
        include_str!("../../../scenarios/seeds/002-look-around.toml"),
    ),
    (
        "002-look-around-client.toml",
        include_str!("../../../scenarios/seeds/002-look-around-client.toml"),
    ),
    (
        "003-batch-aging.toml",
        include_str!("../../../scenarios/seeds/003-batch-aging.toml"),
    ),
    (
        "003-batch-aging-memtier.toml",
        include_str!("../../../scenarios/seeds/003-batch-aging-memtier.toml"),
    ),
    (
        "004-page-fault3.toml",
        include_str!("../../../scenarios/seeds/004-page-fault3.toml"),
    ),
    (
        "004-readtwice.toml",
        include_str!("../../../scenarios/seeds/004-readtwice.toml"),
    ),
    (
        "mglru-vs-classic-fio.toml",
        include_str!("../../../scenarios/seeds/mglru-vs-classic-fio.toml"),
    ),
    (
        "mglru-vs-classic-memcached.toml",
        include_str!("../../../scenarios/seeds/mglru-vs-classic-memcached.toml"),
    ),
    (
        "000-fio-shared-cpus.toml",
        include_str!("../../../scenarios/analysis/000-fio-shared-cpus.toml"),
    ),
];

/// A small valid scenario, the base `--set` and sweep values are applied to.
const SMALL: &str = r#"name = "small"
duration = "10ms"
[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "32MiB" }
[kernel]
policy = "mglru"
[[memcg]]
path = "/a"
max = "32MiB"
[[workload]]
name = "a"
memcg = "/a"
anon = { size = "8MiB" }
[[workload]]
name = "f"
until = "a"
[workload.fio]
size = "4MiB"
time_based = true
runtime = "1s"
[variants.classic]
kernel.policy = "classic"
"#;

/// Words of the schema: table names, fields and workload options.
const WORDS: &[&str] = &[
    "name",
    "description",
    "seed",
    "duration",
    "sample_interval",
    "machine",
    "memory",
    "nodes",
    "cpus",
    "little_cpus",
    "swap",
    "device",
    "size",
    "profile",
    "kernel",
    "policy",
    "plugin",
    "look_around",
    "lru_gen_walks",
    "min_ttl_ms",
    "memcg_reclaim",
    "batch_aging",
    "swappiness",
    "lru_lock",
    "watermark_scale_factor",
    "min_free_kbytes",
    "pagevec_size",
    "kswapd_cpu",
    "page_cluster",
    "vma_ra_enabled",
    "ssd",
    "nvme",
    "sata",
    "costs",
    "zram_compress",
    "nvme_queue_depth",
    "fault",
    "event",
    "at",
    "command",
    "cpu",
    "file",
    "sysctl",
    "value",
    "memory.max",
    "memory.reclaim",
    "vm.swappiness",
    "memcg",
    "path",
    "max",
    "high",
    "low",
    "min",
    "swap_max",
    "zswap_max",
    "mem_limit",
    "comp_algorithm",
    "backing_dev",
    "enabled",
    "zram.idle",
    "zram.writeback",
    "zram.writeback_limit",
    "huge_idle",
    "memory.swap.max",
    "memory.zswap.max",
    "zswap",
    "compressor",
    "zpool",
    "max_pool_percent",
    "accept_threshold_percent",
    "same_filled_pages",
    "page_content",
    "workload",
    "start",
    "after",
    "until",
    "instances",
    "cpus_per_instance",
    "fio",
    "rw",
    "numjobs",
    "bs",
    "random_distribution",
    "norandommap",
    "time_based",
    "ramp_time",
    "runtime",
    "memcached",
    "threads",
    "phase",
    "key-pattern",
    "ratio",
    "data-size",
    "key-minimum",
    "key-maximum",
    "requests",
    "test-time",
    "clients",
    "pipeline",
    "run-count",
    "measure",
    "delay",
    "key-zipf-exp",
    "dd",
    "files",
    "readers",
    "sparse",
    "page_fault3",
    "tasks",
    "mode",
    "anon",
    "pattern",
    "passes",
    "write",
    "ops_per_step",
    "shared",
    "variants",
    "expect",
    "metric",
    "from",
    "to",
    "change",
    "source",
    "dirty_ratio",
    "dirty_background_ratio",
    "flusher_cpu",
    "zram",
    "ramdisk",
    "classic",
    "mglru",
    "v6.1",
    "memcg-lru",
    "v11",
    "v11-patch1-8",
    "none",
    "lruvec",
    "node",
    "lruvec-v16",
    "randread",
    "read",
    "random",
    "zipf:0.5",
    "seq",
    "allkeys",
    "R:R",
    "P:P",
    "G:G",
    "{i}",
    "/",
    "/a",
    "/a/b",
    "/c{i}",
    "a",
    "b",
    "dd{i}",
    "max-2",
    "+ /a 0 max",
    "- / 0 max 60 10",
];

/// Values: sizes and durations with units, numbers at the edges, strings, arrays and
/// inline tables.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "4",
    "7",
    "64",
    "104",
    "4096",
    "4097",
    "65536",
    "-0",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "0.0",
    "0.5",
    "1.1",
    "true",
    "false",
    "\"\"",
    "\"x\"",
    "\"0\"",
    "\"0-5\"",
    "\"16MiB\"",
    "\"64MiB\"",
    "\"1GiB\"",
    "\"1TiB\"",
    "\"1PiB\"",
    "\"16EiB\"",
    "\"-1GiB\"",
    "\"1.5GiB\"",
    "\"4k\"",
    "\"8KiB\"",
    "\"0B\"",
    "\"1\"",
    "\"10ms\"",
    "\"1s\"",
    "\"0s\"",
    "\"1000h\"",
    "\"-1s\"",
    "\"1.5s\"",
    "\"1e9ns\"",
    "\"99999999999999999999s\"",
    "\"2us\"",
    "\"max\"",
    "\"allkeys\"",
    "\"1:10\"",
    "\"0:0\"",
    "\"zipf:9\"",
    "\"zipf:0.5:0.3\"",
    "\"zipf:\"",
    "[]",
    "[0]",
    "[0, 1]",
    "[3, 3]",
    "[99]",
    "[-1]",
    "[\"a\"]",
    "[[]]",
    "{}",
    "{ device = \"zram\", size = \"32MiB\" }",
    "{ size = \"1MiB\" }",
    "{ size = \"1MiB\", passes = 0 }",
    "{ size = \"1MiB\", runtime = \"1h\" }",
    "{ files = 0, size = \"1MiB\" }",
    "'''multi\nline'''",
    "\"\\u00e9\"",
    "\"a\\tb\"",
    "2024-01-01T00:00:00Z",
    "0x10",
    "0o7",
    "0b1",
    "1_000",
    "+1",
];

/// Garbage a line may be made of.
const JUNK: &[&str] = &[
    "[",
    "]",
    "[[",
    "]]",
    "=",
    "\"",
    "'",
    "{",
    "}",
    ",",
    ".",
    "#",
    "\n",
    "\\",
    "\t",
    " ",
    "\u{0}",
    "\u{feff}",
    "é",
    "𝄞",
    "\r\n",
    "[variants.x]",
    "[[workload]]",
    "[machine]",
];

fn pick(words: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    (0..words.len()).prop_map(move |i| words[i])
}

/// A dotted key of schema words, some parts quoted.
fn dotted() -> impl Strategy<Value = String> {
    prop::collection::vec((pick(WORDS), any::<bool>()), 1..5).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(w, quote)| {
                let bare = w
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if quote || !bare {
                    format!("{w:?}")
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    })
}

/// One line of TOML-ish text.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (dotted(), pick(VALUES)).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => dotted().prop_map(|k| format!("[{k}]")),
        1 => dotted().prop_map(|k| format!("[[{k}]]")),
        1 => prop::collection::vec(pick(JUNK), 1..6).prop_map(|j| j.concat()),
        1 => (dotted(), pick(JUNK), pick(VALUES)).prop_map(|(k, j, v)| format!("{k} {j}= {v}")),
    ]
}

/// TOML-ish text: a machine most of the time (so later checks are reached), then lines.
fn toml_text() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(line(), 0..24)).prop_map(|(machine, lines)| {
        let head = if machine {
            "name = \"f\"\n[machine]\nmemory = \"64MiB\"\n"
        } else {
            ""
        };
        format!("{head}{}\n", lines.join("\n"))
    })
}

/// One edit of a text's lines.
#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    SetValue(usize, &'static str),
    Insert(usize, String),
    Truncate(usize),
    Junk(usize, &'static str),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = any::<usize>();
    prop_oneof![
        1 => at.prop_map(Edit::Delete),
        1 => at.prop_map(Edit::Duplicate),
        1 => (at, at).prop_map(|(a, b)| Edit::Swap(a, b)),
        4 => (at, pick(VALUES)).prop_map(|(a, v)| Edit::SetValue(a, v)),
        2 => (at, line()).prop_map(|(a, l)| Edit::Insert(a, l)),
        1 => at.prop_map(Edit::Truncate),
        1 => (at, pick(JUNK)).prop_map(|(a, j)| Edit::Junk(a, j)),
    ]
}

/// Apply `edits` to `text`, line by line (a value replaced after its `=`).
fn mutate(text: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for e in edits {
        let n = lines.len().max(1);
        match e {
            Edit::Delete(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Edit::Duplicate(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Edit::Swap(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Edit::SetValue(i, v) if !lines.is_empty() => {
                let l = &mut lines[i % n];
                if let Some((k, _)) = l.split_once('=') {
                    *l = format!("{k}= {v}");
                }
            }
            Edit::Insert(i, l) => lines.insert(i % (lines.len() + 1), l.clone()),
            Edit::Truncate(i) if !lines.is_empty() => {
                let l = &mut lines[i % n];
                let cut = (0..=l.len())
                    .rev()
                    .find(|&c| l.is_char_boundary(c) && c <= i % (l.len() + 1));
                l.truncate(cut.unwrap_or(0));
            }
            Edit::Junk(i, j) if !lines.is_empty() => {
                let l = &mut lines[i % n];
                let at = (0..=l.len()).find(|&c| l.is_char_boundary(c) && c >= i % (l.len() + 1));
                l.insert_str(at.unwrap_or(0), j);
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// A `--set` as a user might type it.
fn set_arg() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (dotted(), pick(VALUES)).prop_map(|(k, v)| format!("{k}={v}")),
        1 => (dotted(), pick(JUNK), pick(VALUES)).prop_map(|(k, j, v)| format!("{k}{j}={v}")),
        1 => prop::collection::vec(pick(JUNK), 0..4).prop_map(|j| j.concat()),
        1 => dotted(),
    ]
}

/// The property: parsing `text` with `sets` returns, and an error is located.
fn check_parse(file: &str, text: &str, sets: &[String]) -> Result<(), TestCaseError> {
    let result = std::panic::catch_unwind(|| scenario::parse(text, file, sets, None));
    let result = result.map_err(|_| TestCaseError::fail("panicked"))?;
    if let Err(e) = result {
        check_located(&e, text, sets)?;
    }
    Ok(())
}

/// A file error names the file and a line of the text; a `--set` error names the key
/// of a `--set` given (several, `, `-separated, when they cause it together), or the
/// argument itself when it has no key.
fn check_located(e: &ScenarioError, text: &str, sets: &[String]) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    prop_assert!(!e.message.trim().is_empty(), "no message: {shown}");
    if e.from_set {
        let keys: Vec<&str> = sets
            .iter()
            .map(|s| s.split_once('=').map_or(s.as_str(), |(k, _)| k.trim()))
            .collect();
        let whole = [e.field.as_str()];
        let parts: Vec<&str> = e.field.split(", ").collect();
        let named =
            |k: &str| keys.contains(&k) || sets.iter().any(|s| s == k || format!("{s:?}") == k);
        let parts: &[&str] = if named(&e.field) { &whole } else { &parts };
        for &k in parts {
            prop_assert!(named(k), "{shown}: {k:?} is not a --set given ({sets:?})");
        }
        prop_assert!(
            !e.field.trim().is_empty(),
            "--set error names no key: {shown}"
        );
        return Ok(());
    }
    let lines = text.lines().count().max(1) + 1;
    prop_assert_eq!(e.file.as_str(), "f.toml", "{}", shown);
    match e.line {
        Some(l) => prop_assert!((1..=lines).contains(&l), "line {l} of {lines}: {shown}"),
        None => prop_assert!(false, "no line: {shown}"),
    }
    Ok(())
}

/// Fail the test with the (shrunk) failing input.
fn run<T: std::fmt::Debug>(name: &str, cases: u32, go: impl FnOnce() -> Result<(), TestError<T>>) {
    let t = std::time::Instant::now();
    if let Err(e) = go() {
        panic!("{name}: {e}");
    }
    let s = t.elapsed().as_secs_f64();
    eprintln!(
        "fuzz {name}: {cases} cases in {s:.1} s ({:.1} us each)",
        s * 1e6 / f64::from(cases.max(1))
    );
}

/// Cases of each target.
struct Plan {
    text: u32,
    shipped: u32,
    set: u32,
    values: u32,
    profile: u32,
}

impl Plan {
    /// `total` cases shared as their cost allows: a mutated shipped scenario costs about
    /// 2.5 ms to load (memtier's per-key tables), a short text 0.1 ms.
    fn of(total: u32) -> Plan {
        let part = |percent: u32| (u64::from(total) * u64::from(percent) / 100) as u32;
        Plan {
            text: part(42),
            shipped: part(3),
            set: part(15),
            values: part(15),
            profile: part(25),
        }
    }
}

/// The five targets, as many cases of each as `plan` says.
fn fuzz(plan: Plan) {
    let config = |cases| Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let cases = plan.text;
    let mut r = TestRunner::new(config(cases));
    run("text", cases, || {
        r.run(&toml_text(), |t| check_parse("f.toml", &t, &[]))
    });
    let shipped = (0..SHIPPED.len(), prop::collection::vec(edit(), 1..6));
    let cases = plan.shipped;
    let mut r = TestRunner::new(config(cases));
    run("shipped", cases, || {
        r.run(&shipped, |(i, edits)| {
            check_parse("f.toml", &mutate(SHIPPED[i].1, &edits), &[])
        })
    });
    let sets = prop::collection::vec(set_arg(), 1..4);
    let cases = plan.set;
    let mut r = TestRunner::new(config(cases));
    run("set", cases, || {
        r.run(&sets, |sets| check_parse("f.toml", SMALL, &sets))
    });
    let sweep = (dotted(), pick(VALUES), pick(JUNK));
    let cases = plan.values;
    let mut r = TestRunner::new(config(cases));
    run("values", cases, || {
        r.run(&sweep, |(key, v, j)| {
            // `--values` is split at commas; each value is set on the key.
            for value in format!("{v}{j}").split(',') {
                check_parse("f.toml", SMALL, &[format!("{key}={value}")])?;
            }
            Ok(())
        })
    });
    let profile = prop::collection::vec(line(), 0..12).prop_map(|l| l.join("\n"));
    let cases = plan.profile;
    let mut r = TestRunner::new(config(cases));
    run("profile", cases, || {
        r.run(&profile, |text| {
            let parsed = std::panic::catch_unwind(|| scenario::profile::parse(&text, "f.toml"));
            if let Err(e) = parsed.map_err(|_| TestCaseError::fail("panicked"))? {
                check_located(&e, &text, &[])?;
            }
            Ok(())
        })
    });
}

/// A few seconds: 4,000 cases.
#[test]
fn fuzz_smoke() {
    fuzz(Plan {
        text: 1000,
        shipped: 200,
        set: 800,
        values: 800,
        profile: 1200,
    });
}

/// The long run: `RECLAIMSIM_FUZZ_CASES` cases in all (default 10 M), shared by `Plan::of`
/// and generated by `fast` (proptest's value trees cost more than the parsing), on two
/// threads.
#[test]
#[ignore]
fn fuzz_long() {
    let total: u64 = std::env::var("RECLAIMSIM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let seed: u64 = std::env::var("RECLAIMSIM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let t = std::time::Instant::now();
    let threads = 2;
    let counts: Vec<[u64; 5]> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|i| scope.spawn(move || fast::run(seed * 1000 + i, total / threads)))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut all = [0u64; 5];
    for c in &counts {
        for (a, n) in all.iter_mut().zip(c) {
            *a += n;
        }
    }
    let names = ["text", "shipped", "set", "values", "profile"];
    for (name, n) in names.iter().zip(all) {
        eprintln!("fuzz {name}: {n} cases");
    }
    eprintln!(
        "fuzz: {} cases in {:.0} s (seed {seed})",
        all.iter().sum::<u64>(),
        t.elapsed().as_secs_f64()
    );
}

/// The long run's generator: the same vocabularies and property as the proptest
/// strategies above, drawn straight from a PCG stream.
mod fast {
    use super::*;
    use rand::{Rng, SeedableRng};

    type Gen = rand_pcg::Pcg64Mcg;

    fn pick(g: &mut Gen, words: &[&'static str]) -> &'static str {
        words[g.gen_range(0..words.len())]
    }

    fn dotted(g: &mut Gen) -> String {
        let n = g.gen_range(1..5);
        (0..n)
            .map(|_| {
                let w = pick(g, WORDS);
                let bare = w
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if g.gen_bool(0.5) || !bare {
                    format!("{w:?}")
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    }

    fn line(g: &mut Gen) -> String {
        match g.gen_range(0..8) {
            0..=3 => format!("{} = {}", dotted(g), pick(g, VALUES)),
            4 => format!("[{}]", dotted(g)),
            5 => format!("[[{}]]", dotted(g)),
            6 => (0..g.gen_range(1..6)).map(|_| pick(g, JUNK)).collect(),
            _ => format!("{} {}= {}", dotted(g), pick(g, JUNK), pick(g, VALUES)),
        }
    }

    fn toml_text(g: &mut Gen) -> String {
        let head = if g.gen_bool(0.5) {
            "name = \"f\"\n[machine]\nmemory = \"64MiB\"\n"
        } else {
            ""
        };
        let lines: Vec<String> = (0..g.gen_range(0..24)).map(|_| line(g)).collect();
        format!("{head}{}\n", lines.join("\n"))
    }

    fn edit(g: &mut Gen) -> Edit {
        let at = g.gen::<usize>();
        match g.gen_range(0..11) {
            0 => Edit::Delete(at),
            1 => Edit::Duplicate(at),
            2 => Edit::Swap(at, g.gen()),
            3..=6 => Edit::SetValue(at, pick(g, VALUES)),
            7 | 8 => Edit::Insert(at, line(g)),
            9 => Edit::Truncate(at),
            _ => Edit::Junk(at, pick(g, JUNK)),
        }
    }

    fn set_arg(g: &mut Gen) -> String {
        match g.gen_range(0..9) {
            0..=5 => format!("{}={}", dotted(g), pick(g, VALUES)),
            6 => format!("{}{}={}", dotted(g), pick(g, JUNK), pick(g, VALUES)),
            7 => (0..g.gen_range(0..4)).map(|_| pick(g, JUNK)).collect(),
            _ => dotted(g),
        }
    }

    /// Fail with the input that broke the property.
    fn ok(what: &str, input: &dyn std::fmt::Debug, r: Result<(), TestCaseError>) {
        if let Err(e) = r {
            panic!("{what}: {e}\ninput: {input:?}");
        }
    }

    /// `cases` cases from stream `seed`, shared as `Plan::of` shares them; the count of
    /// each target.
    pub fn run(seed: u64, cases: u64) -> [u64; 5] {
        let mut g = Gen::seed_from_u64(seed);
        let plan = Plan::of(cases.min(u64::from(u32::MAX)) as u32);
        let weights = [plan.text, plan.shipped, plan.set, plan.values, plan.profile];
        let mut done = [0u64; 5];
        for (target, &n) in weights.iter().enumerate() {
            for _ in 0..n {
                one(&mut g, target);
            }
            done[target] = u64::from(n);
        }
        done
    }

    fn one(g: &mut Gen, target: usize) {
        match target {
            0 => {
                let t = toml_text(g);
                ok("text", &t, check_parse("f.toml", &t, &[]));
            }
            1 => {
                let (name, text) = SHIPPED[g.gen_range(0..SHIPPED.len())];
                let edits: Vec<Edit> = (0..g.gen_range(1..6)).map(|_| edit(g)).collect();
                let t = mutate(text, &edits);
                ok(name, &(name, &edits), check_parse("f.toml", &t, &[]));
            }
            2 => {
                let sets: Vec<String> = (0..g.gen_range(1..4)).map(|_| set_arg(g)).collect();
                ok("set", &sets, check_parse("f.toml", SMALL, &sets));
            }
            3 => {
                let values = format!("{}{}", pick(g, VALUES), pick(g, JUNK));
                let key = dotted(g);
                for value in values.split(',') {
                    let sets = [format!("{key}={value}")];
                    ok("values", &sets, check_parse("f.toml", SMALL, &sets));
                }
            }
            _ => {
                let text: Vec<String> = (0..g.gen_range(0..12)).map(|_| line(g)).collect();
                let text = text.join("\n");
                let parsed = std::panic::catch_unwind(|| scenario::profile::parse(&text, "f.toml"));
                match parsed {
                    Err(_) => panic!("profile: panicked\ninput: {text:?}"),
                    Ok(Err(e)) => ok("profile", &text, check_located(&e, &text, &[])),
                    Ok(Ok(_)) => {}
                }
            }
        }
    }
}

/// Every shipped scenario loads as it is (the mutations start from valid files).
#[test]
fn shipped_scenarios_load() {
    for (name, text) in SHIPPED {
        if let Err(e) = scenario::parse(text, name, &[], None) {
            // A machine profile is relative to the scenario's directory: not here.
            assert!(e.message.contains("machine profile"), "{name}: {e}");
        }
    }
    assert!(scenario::parse(SMALL, "small", &[], None).is_ok());
}

/// Inputs the fuzzing found: a `--set` with no key was reported with an empty field
/// (`--set : expected KEY=VALUE`); now the argument is named as written, quoted when
/// blank.
#[test]
fn regression_a_set_without_a_key_names_the_argument() {
    for (set, field, message) in [
        ("", "\"\"", "expected KEY=VALUE"),
        (" ", "\" \"", "expected KEY=VALUE"),
        (", ", ", ", "expected KEY=VALUE"),
        ("=x", "=x", "no KEY before the `=` (expected KEY=VALUE)"),
        (" = 1", " = 1", "no KEY before the `=` (expected KEY=VALUE)"),
    ] {
        let sets = [set.to_string()];
        let e = scenario::parse(SMALL, "f.toml", &sets, None).unwrap_err();
        assert_eq!(
            (e.from_set, e.field.as_str(), e.message.as_str()),
            (true, field, message),
            "{set:?}"
        );
        check_located(&e, SMALL, &sets).unwrap();
    }
}

/// A value that is fine alone but breaks a field of the file is blamed on the `--set`s
/// without which the file passes, naming the field and its line.
#[test]
fn regression_a_set_that_breaks_a_field_of_the_file_is_named() {
    let sets = ["machine.nodes=4".to_string(), "seed=3".to_string()];
    let e = scenario::parse(SMALL, "f.toml", &sets, None).unwrap_err();
    assert_eq!(
        (e.from_set, e.field.as_str()),
        (true, "machine.nodes"),
        "{e}"
    );
    assert_eq!(
        e.message,
        "machine.cpus: 2 CPUs cannot be split evenly over 4 nodes (a multiple of \
         machine.nodes) (at f.toml:5)"
    );
    check_located(&e, SMALL, &sets).unwrap();
}
