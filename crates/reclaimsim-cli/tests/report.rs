//! The HTML report: `compare --html`, `sweep --html` and `report RESULTS.json -o PATH`.
//! (Drawn in a browser by the Python suite: crates/reclaimsim-py/tests/test_report_browser.py.)

mod common;

use common::{dir, reclaimsim};
use std::path::PathBuf;
use std::process::Output;

const SCENARIO: &str = r#"name = "report"
description = "anon under pressure, classic vs mglru"
duration = "40ms"
sample_interval = "10ms"
[machine]
memory = "48MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }

[[memcg]]
path = "/a"

[[workload]]
name = "a"
memcg = "/a"
[workload.anon]
size = "56MiB"
passes = 2

[variants.classic]
kernel.policy = "classic"

[variants.mglru]
kernel.policy = "mglru"
"#;

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The number of plots a report announces.
fn plots(html: &str) -> usize {
    let at = html.find("name=\"reclaimsim-plots\" content=\"").unwrap() + 33;
    html[at..].split('"').next().unwrap().parse().unwrap()
}

#[test]
fn compare_html_equals_report_of_its_json_and_is_self_contained() {
    let d = dir("compare");
    let s = d.join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let (json, html, again) = (d.join("r.json"), d.join("r.html"), d.join("again.html"));
    let p = |p: &PathBuf| p.to_str().unwrap().to_string();
    ok(&reclaimsim(&[
        "compare",
        &p(&s),
        "--json",
        &p(&json),
        "--html",
        &p(&html),
    ]));
    ok(&reclaimsim(&["report", &p(&json), "-o", &p(&again)]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page, std::fs::read_to_string(&again).unwrap());
    assert!(page.contains("<title>reclaimsim: report</title>"));
    assert!(page.contains("anon under pressure, classic vs mglru"));
    // No external script or stylesheet (plotly.js only names CDNs for map data).
    assert!(
        !page.contains("<script src") && !page.contains("<link"),
        "no network"
    );
    // Free memory, LRU lists (2), generations (1), throughput, bandwidth, latency, stalls
    // (2), lock wait, kswapd (2), reclaim share.
    assert!(plots(&page) >= 10, "{}", plots(&page));
    assert_eq!(
        page.matches("class=\"plotly-graph-div\"").count(),
        plots(&page)
    );
    assert!(page.contains("MGLRU generations (mglru)"));
    assert!(!page.contains("MGLRU generations (classic)"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sweep_html_plots_each_metric_against_the_value() {
    let d = dir("sweep");
    let s = d.join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let html = d.join("s.html");
    let out = reclaimsim(&[
        "sweep",
        s.to_str().unwrap(),
        "--key",
        "machine.memory",
        "--values",
        "48MiB,64MiB",
        "--html",
        html.to_str().unwrap(),
    ]);
    ok(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("reclaimsim sweep: report"));
    assert!(
        page.contains("\"x\":[\"48MiB\",\"64MiB\"]"),
        "the values on x"
    );
    assert!(page.contains("\"name\":\"classic\"") && page.contains("\"name\":\"mglru\""));
    assert!(plots(&page) >= 5, "{}", plots(&page));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn report_of_bad_input_exits_2_with_a_located_message_and_writes_nothing() {
    let d = dir("bad");
    let out_html = d.join("out.html");
    let o = out_html.to_str().unwrap();
    let bad = d.join("bad.json");
    std::fs::write(
        &bad,
        "{\"scenario\": \"s\", \"seed\": 1,\n \"variants\": [{\"name\": 7}]}",
    )
    .unwrap();
    let r = reclaimsim(&["report", bad.to_str().unwrap(), "-o", o]);
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    let want = format!("error: {}:2:", bad.display());
    assert!(stderr.starts_with(&want), "{stderr}");
    assert!(
        stderr.contains("variants[0].name: invalid type"),
        "{stderr}"
    );
    std::fs::write(&bad, "[1, 2").unwrap();
    let r = reclaimsim(&["report", bad.to_str().unwrap(), "-o", o]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("not JSON"));
    let missing = d.join("missing.json");
    let r = reclaimsim(&["report", missing.to_str().unwrap(), "-o", o]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("cannot read"));
    let nodir = d.join("no/such/dir/out.html");
    let r = reclaimsim(&[
        "report",
        bad.to_str().unwrap(),
        "-o",
        nodir.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    let want = format!("error: -o {}: not a file", nodir.display());
    assert!(String::from_utf8_lossy(&r.stderr).starts_with(&want));
    assert!(!out_html.exists(), "nothing written");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn html_path_is_checked_before_running() {
    let d = dir("htmlpath");
    let s = d.join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let nodir = d.join("no/such/r.html");
    let r = reclaimsim(&[
        "compare",
        s.to_str().unwrap(),
        "--html",
        nodir.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--html"));
    std::fs::remove_dir_all(&d).unwrap();
}
