//! `reclaimsim sweep`: every variant at each value of the keys.

mod common;

use common::reclaimsim;

const SCENARIO: &str = r#"name = "tiny-sweep"
[machine]
memory = "64MiB"
cpus = 2

[[memcg]]
path = "/c{i}"
instances = 2
max = "8MiB"

[[workload]]
name = "dd{i}"
instances = 2
cpus_per_instance = 1
memcg = "/c{i}"
[workload.dd]
size = "16MiB"
readers = 2
runtime = "2ms"

[variants.node-lock]
kernel.lru_lock = "node"

[variants.lruvec-lock]
kernel.lru_lock = "lruvec"
"#;

#[test]
fn sweep_prints_a_row_per_value_and_writes_json() {
    let d = std::env::temp_dir().join(format!("reclaimsim-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let json = d.join("out.json");
    let out = reclaimsim(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--key",
        "machine.cpus",
        "--key",
        "workload.\"dd{i}\".instances",
        "--key",
        "memcg.\"/c{i}\".instances",
        "--values",
        "1,3",
        "--json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("node-lock ops/s") && stdout.contains("vs node-lock"),
        "{stdout}"
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("1 ") || l.starts_with("3 "))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["keys"].as_array().unwrap().len(), 3);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[1]["value"], "3");
    let variants = points[1]["variants"].as_array().unwrap();
    assert_eq!(variants[0]["name"], "node-lock");
    assert_eq!(variants[1]["workloads"].as_object().unwrap().len(), 3);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sweep_refuses_a_bad_value_before_running() {
    let d = std::env::temp_dir().join(format!("reclaimsim-sweep-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = reclaimsim(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--key",
        "machine.cpus",
        "--values",
        "2,0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: --values 0 (for --key machine.cpus): 0 CPUs: must be 1 to"),
        "the flag the value was written in: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    let _ = std::fs::remove_dir_all(&d);
}
