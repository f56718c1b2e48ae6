//! `reclaimsim trace`: the table, libCacheSim's rows when installed, bad traces.

mod common;

use common::{dir, reclaimsim};
use std::process::Command;

/// An oracleGeneral trace cycling over `objects` 4 KiB objects `rounds` times.
fn cyclic(objects: u64, rounds: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..objects * rounds {
        out.extend(0u32.to_le_bytes());
        out.extend((i % objects).to_le_bytes());
        out.extend(4096u32.to_le_bytes());
        out.extend((-1i64).to_le_bytes());
    }
    out
}

fn trace_cmd(args: &[&str], python: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .arg("trace")
        .args(args)
        .env("RECLAIMSIM_PYTHON", python)
        .output()
        .unwrap()
}

#[test]
fn prints_each_policy_and_says_how_to_install_libcachesim() {
    let d = dir("table");
    let path = d.join("c.oracleGeneral.bin");
    // A loop over 1000 pages in a 2 MiB cache: every request misses under any LRU.
    std::fs::write(&path, cyclic(1000, 3)).unwrap();
    let out = trace_cmd(
        &[path.to_str().unwrap(), "--cache-size", "2MiB", "-q"],
        "/nonexistent/python3",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("3000 requests, 1000 distinct pages; cache 2MiB (512 pages)"),
        "{table}"
    );
    for policy in [
        "model classic ",
        "model mglru ",
        "model mglru page_cache_fix ",
    ] {
        let row = table.lines().find(|l| l.starts_with(policy)).expect(policy);
        assert!(
            row.contains(" 1.0000 ") && row.ends_with(" 3000         3000"),
            "{row}"
        );
    }
    assert!(table.contains("libCacheSim: not installed for /nonexistent/python3; `/nonexistent/python3 -m pip install libcachesim==0.3.5`"), "{table}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn lists_libcachesim_policies_when_installed() {
    let installed = Command::new("python3")
        .args(["-c", "import libcachesim"])
        .output();
    if !installed.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: the libcachesim Python package is not installed");
        return;
    }
    let d = dir("lcs");
    let path = d.join("c.oracleGeneral.bin");
    std::fs::write(&path, cyclic(1000, 3)).unwrap();
    let out = trace_cmd(
        &[path.to_str().unwrap(), "--cache-size", "2MiB", "-q"],
        "python3",
    );
    let table = String::from_utf8_lossy(&out.stdout);
    for policy in ["LRU", "ARC", "S3-FIFO", "SIEVE"] {
        let row = format!("libCacheSim {policy} ");
        let row = table.lines().find(|l| l.starts_with(&row)).expect(policy);
        let ratio: f64 = row.split_whitespace().last().unwrap().parse().unwrap();
        assert!((0.0..=1.0).contains(&ratio), "{row}");
        // A loop larger than the cache: LRU misses every time.
        assert!(policy != "LRU" || ratio == 1.0, "{row}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_trace_exits_2_naming_file_and_record() {
    let d = dir("bad");
    let path = d.join("cut.oracleGeneral.bin");
    let mut bytes = cyclic(10, 1);
    bytes.truncate(24 * 4 + 10);
    std::fs::write(&path, bytes).unwrap();
    let out = reclaimsim(&[
        "trace",
        path.to_str().unwrap(),
        "--cache-size",
        "1MiB",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = format!("error: {}: record 5: truncated: 10 of", path.display());
    assert!(stderr.starts_with(&want), "{stderr}");
    assert!(out.stdout.is_empty());
    let out = reclaimsim(&["trace", path.to_str().unwrap(), "--cache-size", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&d).unwrap();
}
