//! `reclaimsim validate`: expectations against the model's changes, one table, JSON.

mod common;

use common::{dir, reclaimsim_in};

/// Two cheap variants (and one no expectation needs), four expectations: in range, a
/// wildcard, a quotient, and a metric the results do not have.
const SCENARIO: &str = r#"name = "tiny-validate"
[machine]
memory = "64MiB"
cpus = 2

[[workload]]
name = "a"
[workload.anon]
size = "8MiB"

[variants.small]
workload.a.anon.size = "8MiB"

[variants.unused]
machine.cpus = 1

[variants.large]
workload.a.anon.size = "16MiB"

[[expect]]
metric = "workloads.a.ops"
from = "small"
to = "large"
change = ["+90%", "+110%"]
source = "twice the memory, twice the touches"

[[expect]]
metric = "workloads.*.ops"
from = "small"
to = "large"
change = "3.0x"

[[expect]]
metric = "vmstat.pgfault / page_accesses"
from = "small"
to = "large"
change = "-50%"

[[expect]]
metric = "vmstat.nope"
from = "large"
to = "small"
change = "-5%"
"#;

/// The table's rows as cells (columns are two or more spaces apart).
fn rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect()
}

#[test]
fn validate_prints_one_table_and_writes_json() {
    let d = dir("table");
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    std::fs::write(
        d.join("none.toml"),
        SCENARIO.split("[[expect]]").next().unwrap(),
    )
    .unwrap();
    let args = ["validate", "s.toml", "none.toml", "--json", "out.json"];
    let out = reclaimsim_in(&args, &d);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("none.toml: no [[expect]]"), "{stderr}");
    let rows = rows(&stdout);
    assert_eq!(
        rows[0],
        [
            "scenario",
            "metric",
            "from -> to",
            "expected",
            "model",
            "same sign",
            "in range",
            "model/expected"
        ]
    );
    assert_eq!(
        rows[1],
        [
            "tiny-validate",
            "a.ops",
            "small -> large",
            "+90..+110%",
            "+100.0%",
            "yes",
            "yes",
            "1.00"
        ]
    );
    assert_eq!(
        rows[2][1..6],
        ["*.ops", "small -> large", "+200%", "+100.0%", "yes"]
    );
    assert_eq!(rows[2][6..], ["no", "0.50"]);
    assert_eq!(rows[3][1], "pgfault / page_accesses");
    assert_eq!(
        rows[4][1..],
        [
            "nope",
            "large -> small",
            "-5%",
            "n/a (no such metric)",
            "-",
            "-",
            "-"
        ]
    );
    assert_eq!(rows.len(), 5, "{stdout}");

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out.json")).unwrap()).unwrap();
    let scenarios = v["scenarios"].as_array().unwrap();
    assert_eq!(
        scenarios.len(),
        1,
        "the scenario without [[expect]] is left out"
    );
    let s = &scenarios[0];
    assert_eq!(
        (s["file"].as_str(), s["scenario"].as_str()),
        (Some("s.toml"), Some("tiny-validate"))
    );
    let names: Vec<&str> = s["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["small", "large"],
        "only the variants the expectations compare run"
    );
    let e = s["expectations"].as_array().unwrap();
    assert_eq!(e[0]["metric"], "workloads.a.ops");
    assert_eq!(e[0]["expected"], serde_json::json!([0.9, 1.1]));
    assert_eq!(e[0]["source"], "twice the memory, twice the touches");
    assert_eq!(
        (e[0]["change"].as_f64(), e[0]["in_range"].as_bool()),
        (Some(1.0), Some(true))
    );
    assert_eq!(
        e[0]["to_value"].as_f64().unwrap(),
        2.0 * e[0]["from_value"].as_f64().unwrap()
    );
    assert_eq!(e[3]["note"], "no such metric");
    assert!(e[3]["change"].is_null() && e[3]["in_range"].is_null());

    let again = reclaimsim_in(&args[..3], &d);
    assert_eq!(
        again.stdout, out.stdout,
        "same scenario and seed, same table"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn validate_refuses_a_bad_expect_before_running() {
    let d = dir("bad");
    std::fs::write(d.join("good.toml"), SCENARIO).unwrap();
    let bad = SCENARIO.replace("change = \"-50%\"", "change = \"-50\"");
    std::fs::write(d.join("bad.toml"), &bad).unwrap();
    let out = reclaimsim_in(
        &["validate", "good.toml", "bad.toml", "--json", "out.json"],
        &d,
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = bad.lines().position(|l| l.contains("\"-50\"")).unwrap() + 1;
    assert!(
        stderr.starts_with(&format!(
            "error: bad.toml:{line}: expect[2].change: \"-50\": not a change"
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert!(!d.join("out.json").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn validate_without_scenarios_needs_the_seeds() {
    let d = dir("empty");
    let out = reclaimsim_in(&["validate"], &d);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("scenarios/seeds/"), "{stderr}");
    assert_eq!(
        reclaimsim_in(&["validate", "--seed", "x"], &d)
            .status
            .code(),
        Some(2)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn validate_seeds_shows_the_spread_over_seeds() {
    let d = dir("seeds");
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    let out = reclaimsim_in(&["validate", "s.toml", "--json", "one.json"], &d);
    assert!(out.status.success());
    let one = rows(&String::from_utf8_lossy(&out.stdout));
    assert!(
        !one[0].iter().any(|c| c.starts_with("spread")),
        "one seed, no spread column: {:?}",
        one[0]
    );
    let args = ["validate", "s.toml", "--seeds", "3", "--json", "three.json"];
    let out = reclaimsim_in(&args, &d);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let three = rows(&stdout);
    assert_eq!(three[0][8], "spread (3 seeds)");
    assert_eq!(three[1][8], "+100.0..+100.0%", "{stdout}");
    assert_eq!(three[4][8], "-", "no change, no spread");
    for (a, b) in one.iter().zip(&three).skip(1) {
        assert_eq!(a[..], b[..8], "judged on the scenario's seed");
    }
    let json = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join(f)).unwrap()).unwrap()
    };
    let (one, three) = (json("one.json"), json("three.json"));
    let seed = three["scenarios"][0]["seed"].as_u64().unwrap();
    let e = &three["scenarios"][0]["expectations"];
    assert_eq!(e[0]["seeds"], serde_json::json!([seed, seed + 1, seed + 2]));
    let change = e[1]["change"].as_f64().unwrap();
    let spread = e[1]["spread"].as_array().unwrap();
    let (lo, hi) = (spread[0].as_f64().unwrap(), spread[1].as_f64().unwrap());
    assert!(lo <= change && change <= hi, "{lo} <= {change} <= {hi}");
    assert!(e[3]["spread"].is_null());
    for c in e.as_array().unwrap().iter().take(3) {
        let changes = c["seed_changes"].as_array().unwrap();
        assert_eq!(changes.len(), 3, "{c}");
        assert!(
            changes.iter().all(|x| x.is_f64()),
            "a change on every seed: {c}"
        );
    }
    let e1 = &one["scenarios"][0]["expectations"];
    assert_eq!(e1[0]["seeds"], serde_json::json!([seed]));
    assert_eq!(e1[0]["spread"], serde_json::json!([1.0, 1.0]));

    let zero = reclaimsim_in(&["validate", "s.toml", "--seeds", "0"], &d);
    assert!(!zero.status.success(), "--seeds 0 runs nothing");
    let _ = std::fs::remove_dir_all(&d);
}

/// `validate --set` applies to every scenario: at `scale=2` the variants run with their
/// sizes doubled (and say so in the JSON); a bad value exits 2 naming the `--set`.
#[test]
fn validate_set_scales_every_scenario() {
    let d = dir("set");
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    let out = reclaimsim_in(
        &[
            "validate", "s.toml", "-q", "--set", "scale=2", "--json", "v.json",
        ],
        &d,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("v.json")).unwrap()).unwrap();
    let runs = v["scenarios"][0]["variants"].as_array().unwrap();
    assert!(!runs.is_empty());
    for r in runs {
        assert_eq!(r["scale"], 2.0, "{r}");
    }
    let out = reclaimsim_in(&["validate", "s.toml", "--set", "scale=-1"], &d);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--set scale: -1: must be a positive"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// `SCENARIO` with a kernel variant that one expectation names.
fn with_kernel_variant() -> String {
    let (head, expects) = SCENARIO.split_once("[[expect]]").unwrap();
    format!(
        "{head}[variants.linux]\nbackend = \"kernel\"\n\n[[expect]]\nmetric = \"workloads.a.ops\"\nfrom = \"small\"\nto = \"linux\"\nchange = \"0%\"\n\n[[expect]]{expects}"
    )
}

/// Without --with-kernel, validate boots nothing: the rows that name a kernel variant
/// say how to run them, the model's rows are as before.
#[test]
fn kernel_rows_wait_for_with_kernel() {
    let d = dir("kernel-rows");
    std::fs::write(d.join("s.toml"), with_kernel_variant()).unwrap();
    let out = reclaimsim_in(&["validate", "s.toml", "-q", "--json", "v.json"], &d);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("booting"), "{stderr}");
    let t = String::from_utf8_lossy(&out.stdout);
    let row = t
        .lines()
        .find(|l| l.contains("small -> linux"))
        .unwrap_or("");
    assert!(row.contains("validate --with-kernel boots it"), "{t}");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("v.json")).unwrap()).unwrap();
    let s = &r["scenarios"][0];
    let names: Vec<&str> = (s["variants"].as_array().unwrap().iter())
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["small", "large"]);
    let first = &s["expectations"][0];
    assert_eq!(first["to"], "linux");
    assert!(first["change"].is_null(), "{first}");
    assert!(s["expectations"][1]["change"].is_number());
    let _ = std::fs::remove_dir_all(&d);
}

/// `run` does not run a kernel variant on the model: a located error naming the command
/// that does; `sweep` leaves it out with a note.
#[test]
fn run_refuses_a_kernel_variant_and_sweep_leaves_it_out() {
    let d = dir("kernel-run");
    let text = with_kernel_variant();
    std::fs::write(d.join("s.toml"), &text).unwrap();
    let line = text.lines().position(|l| l.starts_with("backend")).unwrap() + 1;
    let out = reclaimsim_in(&["run", "s.toml", "--variant", "linux"], &d);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("s.toml:{line}: variants.linux.backend: "))
            && stderr.contains("reclaimsim kernel s.toml --variant linux"),
        "{stderr}"
    );
    let out = reclaimsim_in(
        &[
            "sweep",
            "s.toml",
            "--key",
            "machine.cpus",
            "--values",
            "1,2",
            "-q",
        ],
        &d,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("variant linux runs on a real kernel"),
        "{stderr}"
    );
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(!t.contains("linux"), "{t}");
    let _ = std::fs::remove_dir_all(&d);
}
