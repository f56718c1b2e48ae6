//! `compare --sensitivity` and `validate --sensitivity`: bands over the costs' ranges,
//! deterministic, holding the base figure, in the table and in the JSON; named machine
//! profiles on the command line.

mod common;

use common::{dir, reclaimsim_in};
use std::process::Output;

/// Anon memory a third larger than the machine, with zram swap, under classic and MGLRU:
/// 20 ms of virtual time, reclaim from the start.
const SCENARIO: &str = r#"name = "tiny-sensitivity"
duration = "20ms"
[machine]
memory = "48MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }

[[workload]]
name = "a"
[workload.anon]
size = "64MiB"
threads = 2
pattern = "random"
runtime = "20ms"

[variants.classic]
kernel.policy = "classic"

[variants.mglru]
kernel.policy = "mglru"

[[expect]]
metric = "workloads.a.ops_per_sec"
from = "classic"
to = "mglru"
change = ["+0%", "+20%"]
"#;

/// Few costs and points, so the test runs in seconds.
const FEW: [&str; 5] = [
    "--sensitivity",
    "--sensitivity-costs",
    "fault,zram_compress,lru_scan_miss",
    "--sensitivity-points",
    "3",
];

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The band holds the base figure, names drivers among the varied costs, and is the same
/// on a second run; `--json` carries it.
#[test]
fn compare_sensitivity_gives_a_deterministic_band_around_the_base() {
    let d = dir("compare");
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    let args: Vec<&str> = ["compare", "s.toml", "--json", "out.json"]
        .into_iter()
        .chain(FEW)
        .collect();
    let first = ok(&reclaimsim_in(&args, &d));
    let r = json(&d.join("out.json"));
    assert_eq!(ok(&reclaimsim_in(&args, &d)), first, "deterministic");
    // Bit for bit but for each run's wall_s.
    let again = json(&d.join("out.json"));
    assert_eq!(
        again["sensitivity"], r["sensitivity"],
        "deterministic bands"
    );
    let s = &r["sensitivity"];
    assert_eq!(s["costs"].as_object().unwrap().len(), 3, "{s}");
    assert_eq!(s["runs"], 2 * (2 * 3 + 3), "{s}");
    let bands = s["bands"].as_array().unwrap();
    assert_eq!(bands.len(), 1, "{s}");
    let b = &bands[0];
    assert_eq!(b["headline"], "a ops/s mglru vs classic");
    let (v, lo, hi) = (b["value"].as_f64(), b["low"].as_f64(), b["high"].as_f64());
    let (v, lo, hi) = (v.unwrap(), lo.unwrap(), hi.unwrap());
    assert!(lo <= v && v <= hi && lo < hi, "{b}");
    for driver in b["drivers"].as_array().unwrap() {
        let cost = driver["cost"].as_str().unwrap();
        assert!(FEW[2].split(',').any(|c| c == cost), "{driver}");
    }
    // The table shows the same band: "+x.y% [lo, hi]".
    let line = first
        .lines()
        .find(|l| l.starts_with("a ops/s mglru vs classic"))
        .unwrap();
    let band = format!("[{:+.1}, {:+.1}]", lo * 100.0, hi * 100.0);
    assert!(line.contains(&band), "{line} lacks {band}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// validate's table gains the band columns and its JSON the bands, one per expectation.
#[test]
fn validate_sensitivity_adds_bands_to_the_table_and_json() {
    let d = dir("validate");
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    let args: Vec<&str> = ["validate", "s.toml", "--json", "v.json"]
        .into_iter()
        .chain(FEW)
        .collect();
    let out = ok(&reclaimsim_in(&args, &d));
    let header = out.lines().next().unwrap();
    assert!(
        header.contains("band") && header.contains("depends most on"),
        "{out}"
    );
    let r = json(&d.join("v.json"));
    let s = &r["scenarios"][0];
    let band = &s["sensitivity"]["bands"][0];
    assert_eq!(band["headline"], "a.ops_per_sec classic -> mglru", "{s}");
    assert_eq!(band["value"], s["expectations"][0]["change"], "{s}");
    // Without --sensitivity the table keeps its columns.
    let plain = ok(&reclaimsim_in(&["validate", "s.toml"], &d));
    assert!(!plain.lines().next().unwrap().contains("band"), "{plain}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// Bad input exits 2 before anything runs: an unknown cost, an unknown profile name.
#[test]
fn unknown_costs_and_profile_names_exit_2() {
    let d = dir("bad");
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    let out = reclaimsim_in(
        &[
            "compare",
            "s.toml",
            "--sensitivity",
            "--sensitivity-costs",
            "fualt",
        ],
        &d,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no cost \"fualt\"") && err.contains("zram_compress"),
        "{err}"
    );
    let out = reclaimsim_in(&["run", "s.toml", "--set", "machine.profile=epyc"], &d);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: --set machine.profile=epyc: no machine profile named \"epyc\"")
            && err.contains("epyc-7k62-2s"),
        "{err}"
    );
    let out = reclaimsim_in(
        &["run", "s.toml", "--set", "machine.profile=epyc-7k62-2s"],
        &d,
    );
    ok(&out);
    std::fs::remove_dir_all(&d).unwrap();
}
