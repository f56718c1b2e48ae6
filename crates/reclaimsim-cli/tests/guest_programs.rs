//! The guest's workload programs checked on the host, without a kernel: the
//! memtier-like client's G and Z keys (guest/memtier.c, drawn by
//! tests/guest/memtier_keys.c) follow the distributions the model draws them from
//! (crates/reclaimsim/src/workload/memtier.rs). Needs gcc (skipped without it).

mod common;

use common::dir;
use std::process::Command;

/// Compiles and runs the key-drawing harness; its output lines split into words.
fn draws() -> Option<Vec<Vec<f64>>> {
    let d = dir("keys");
    let bin = d.join("memtier_keys");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/guest/memtier_keys.c");
    let cc = Command::new("gcc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&bin)
        .arg(src)
        .arg("-lm")
        .output();
    let Ok(cc) = cc else {
        eprintln!("skipped: no gcc");
        return None;
    };
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = Command::new(&bin).output().unwrap();
    assert!(out.status.success());
    let _ = std::fs::remove_dir_all(&d);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |l: &str| -> Vec<f64> {
        let words = l.split_whitespace().skip(1);
        words.map(|w| w.parse().unwrap()).collect()
    };
    Some(text.lines().map(line).collect())
}

/// Z: the shares of keys 1 and 2 in 10^6 draws are within 5 standard errors of
/// P(k) = k^-q / H(1000, q); G: the mean is the median less a half (keys are truncated)
/// and the deviation the given one, less what the cut at the range's ends takes (a
/// sixth of the range each side: 1.3%); no key outside the range.
#[test]
fn memtier_g_and_z_keys_follow_the_models_distributions() {
    let Some(lines) = draws() else {
        return;
    };
    let n = 1e6;
    for z in &lines[..3] {
        let [q, p1, want1, p2, want2, outside] = z[..] else {
            panic!("{z:?}");
        };
        for (p, want) in [(p1, want1), (p2, want2)] {
            let se = (want * (1.0 - want) / n).sqrt();
            assert!((p - want).abs() < 5.0 * se, "Z {q}: {p} for {want}");
        }
        assert_eq!(outside, 0.0);
    }
    for (g, cut) in lines[3..].iter().zip([0.987, 1.0]) {
        let [median, stddev, mean, sd, outside] = g[..] else {
            panic!("{g:?}");
        };
        assert!((mean - (median - 0.5)).abs() < 0.01 * stddev, "G {g:?}");
        assert!((sd / (stddev * cut) - 1.0).abs() < 0.01, "G {g:?}");
        assert_eq!(outside, 0.0);
    }
}
