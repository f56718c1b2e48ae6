//! `reclaimsim kernel` on a real kernel: scenarios/demo-small.toml booted under QEMU
//! with Debian's 6.1 kernel (fetched with apt-get download on first use), once per
//! policy, and its results checked for sanity. Needs qemu-system-x86, busybox-static,
//! e2fsprogs (which .ci/run installs), gcc and the package registry; about 2 minutes
//! under TCG on the project's 2-core machine (docs/guide/kernel.md).
//! RECLAIMSIM_KERNEL_TESTS=0 skips it.

mod common;

use common::{dir, reclaimsim};

fn enabled() -> bool {
    let off = std::env::var_os("RECLAIMSIM_KERNEL_TESTS").is_some_and(|v| v == "0");
    if off {
        eprintln!("skipped: RECLAIMSIM_KERNEL_TESTS=0");
    }
    !off
}

/// Boots demo-small's `variant` and returns its results JSON.
fn boot(variant: &str) -> serde_json::Value {
    let d = dir(variant);
    let json = d.join("out.json");
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/demo-small.toml"
    );
    let out = reclaimsim(&[
        "kernel",
        scenario,
        "--variant",
        variant,
        "--json",
        json.to_str().unwrap(),
        "--keep",
        d.join("guest").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{variant}: {stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("under QEMU") && table.contains("anon:run"),
        "{table}"
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    r["variants"][0].clone()
}

fn count(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a count: {x}"))
}

#[test]
fn demo_small_boots_under_both_policies() {
    if !enabled() {
        return;
    }
    for (variant, lru_gen) in [("classic", "0x0000"), ("mglru", "0x0007")] {
        let v = boot(variant);
        assert_eq!(v["backend"], "kernel");
        let g = &v["guest"];
        assert!(g["kernel"].as_str().unwrap().starts_with("6.1."), "{g}");
        assert_eq!(g["lru_gen_enabled"], lru_gen, "{variant}");
        assert!(
            g["errors"].is_null(),
            "{variant}: guest errors {}",
            g["errors"]
        );
        // the workloads stop after counts, so the guest does exactly the model's work
        assert_eq!(count(&v, &["workloads", "anon:populate", "ops"]), 32768);
        assert_eq!(count(&v, &["workloads", "anon:run", "ops"]), 131072);
        assert_eq!(count(&v, &["workloads", "fio", "ops"]), 32768);
        // 192 MiB of working set in a 160 MiB memcg: faults, and reclaim in the memcg
        assert!(count(&v, &["vmstat", "pgfault"]) >= 32768, "{variant}");
        let scanned = count(&v, &["vmstat", "pgscan_anon"]) + count(&v, &["vmstat", "pgscan_file"]);
        assert!(scanned > 0, "{variant}: no pgscan");
        assert!(
            count(&v, &["memcgs", "/app", "memory.stat", "pgscan"]) > 0,
            "{variant}"
        );
        assert!(
            count(&v, &["memcgs", "/app", "memory.events", "max"]) > 0,
            "{variant}"
        );
        assert!(v["oom_kills"].as_array().unwrap().is_empty(), "{variant}");
    }
}

/// `compare` on scenarios/kernel-vs-model.toml: its `model` variant on the model and its
/// `linux` variant (`backend = "kernel"`) booted as `reclaimsim kernel` boots it, side by
/// side in one table (the kernel's times marked guest time) and one JSON; then
/// `validate --with-kernel` holds its expectations against a second boot. One boot each.
#[test]
fn compare_sets_a_kernel_variant_beside_the_model() {
    if !enabled() {
        return;
    }
    let d = dir("compare");
    let json = d.join("out.json");
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/kernel-vs-model.toml"
    );
    let out = reclaimsim(&["compare", scenario, "-q", "--json", json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    let header = table
        .lines()
        .find(|l| l.starts_with("metric"))
        .unwrap_or("");
    assert!(
        header.contains("model") && header.contains("linux"),
        "{table}"
    );
    let row = |name: &str| {
        let line = table.lines().find(|l| l.starts_with(name)).unwrap_or("");
        line.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // the same work on both sides, the kernel's rates in guest time
    assert_eq!(
        row("anon:run ops "),
        ["anon:run", "ops", "131072", "131072", "+0.0%"],
        "{table}"
    );
    assert!(
        row("anon:run ops/s").contains(&"(g)".to_string()),
        "{table}"
    );
    assert!(table.contains("(g): guest time"), "{table}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let (model, linux) = (&r["variants"][0], &r["variants"][1]);
    assert_eq!(
        (model["name"].as_str(), linux["name"].as_str()),
        (Some("model"), Some("linux"))
    );
    assert!(model["backend"].is_null() && model["guest"].is_null());
    assert_eq!(linux["backend"], "kernel");
    assert_eq!(linux["guest"]["lru_gen_enabled"], "0x0000");
    for v in [model, linux] {
        assert_eq!(count(v, &["workloads", "fio", "ops"]), 32768);
        assert!(
            count(v, &["memcgs", "/app", "memory.stat", "pgsteal"]) > 0,
            "{v}"
        );
        assert!(count(v, &["vmstat", "workingset_refault_file"]) > 0, "{v}");
    }
    // validate --with-kernel: the expectations against the kernel's run
    let vjson = d.join("validate.json");
    let args = ["validate", scenario, "--with-kernel", "-q", "--json"];
    let out = reclaimsim(&[&args[..], &[vjson.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&vjson).unwrap()).unwrap();
    let checks = &r["scenarios"][0]["expectations"];
    assert_eq!(
        (checks[0]["to"].as_str(), checks[0]["change"].as_f64()),
        (Some("linux"), Some(0.0))
    );
    assert_eq!(checks[0]["in_range"], true);
    assert!(
        checks[1]["change"].as_f64().is_some_and(|x| x > -1.0),
        "{checks}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A finished workload holds its memory until every workload has finished, as the
/// model's finished workloads keep theirs to the run's end, and an anon phase waits for
/// the workload its `wait_for` names. `held` (16 MiB, populated) finishes, then fio starts
/// `after` it and reads 64 MiB; at fio's `end:fio` snapshot /a still holds the 16 MiB
/// (before the guest held it, `held` exited at its own end and /a was empty by then;
/// with 8 MiB fio ended before that exit, and the test could not tell). `waiter` populates
/// 4 MiB in /b, then its phase `again` waits for fio and loads each page once: it ends
/// after fio, with the model's 1024 touches. One boot.
#[test]
fn finished_workloads_hold_their_memory_and_phases_wait() {
    if !enabled() {
        return;
    }
    let d = dir("held");
    let (scenario, json) = (d.join("held.toml"), d.join("out.json"));
    let text = "name = 'held'\nseed = 1\n[machine]\nmemory = '256MiB'\ncpus = 2\n\
        [kernel]\npolicy = 'classic'\n\
        [[memcg]]\npath = '/a'\n[[memcg]]\npath = '/b'\n[[memcg]]\npath = '/f'\n\
        [[workload]]\nname = 'held'\nmemcg = '/a'\n[workload.anon]\nsize = '16MiB'\n\
        populate = true\npasses = 1\n\
        [[workload]]\nname = 'fio'\nmemcg = '/f'\nafter = 'held'\n[workload.fio]\n\
        rw = 'read'\nsize = '64MiB'\n\
        [[workload]]\nname = 'waiter'\nmemcg = '/b'\n[workload.anon]\nsize = '4MiB'\n\
        populate = true\npasses = 1\n[[workload.anon.phase]]\nname = 'again'\n\
        wait_for = 'fio'\nwrite = false\n";
    std::fs::write(&scenario, text).unwrap();
    let args = ["kernel", scenario.to_str().unwrap(), "--json"];
    let out = reclaimsim(&[&args[..], &[json.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let v = &r["variants"][0];
    assert_eq!(count(v, &["workloads", "waiter:again", "ops"]), 1024);
    let snaps = v["guest"]["snapshots"].as_array().unwrap();
    let labels: Vec<&str> = snaps.iter().filter_map(|s| s["label"].as_str()).collect();
    let pos = |l: &str| labels.iter().position(|x| *x == l);
    assert!(pos("end:fio") < pos("end:waiter"), "{labels:?}");
    let current = |label: &str| {
        let s = snaps.iter().find(|s| s["label"] == label);
        let s = s.unwrap_or_else(|| panic!("no {label} snapshot in {labels:?}"));
        count(s, &["memcgs", "/a", "memory.current"])
    };
    assert!(current("end:held") >= 16 << 20, "{snaps:?}");
    assert!(
        current("end:fio") >= 16 << 20,
        "held let its memory go: {snaps:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
