//! `reclaimsim kernel` on a real kernel: scenarios/demo-small.toml booted under QEMU
//! with Debian's 6.1 kernel (fetched with apt-get download on first use), once per
//! policy (the second as a user's own build: `--kernel` and `--modules` on the package's
//! image and module tree), and its results checked for sanity; `compare` and `validate` with a kernel
//! variant; page_fault3, dd and a trace replay in one guest; workloads waiting for and
//! stopped at another's phase; the host's memcached and the host's fio (each skipped
//! without it). Needs qemu-system-x86, busybox-static, e2fsprogs (which .ci/run
//! installs with memcached and fio), gcc and the package registry; about 3 minutes
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

/// Boots demo-small's `variant` with `extra` options and returns its results JSON.
fn boot(variant: &str, extra: &[String]) -> serde_json::Value {
    let d = dir(variant);
    let json = d.join("out.json");
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/demo-small.toml"
    );
    let keep = d.join("guest");
    let mut args = vec!["kernel", scenario, "--variant", variant, "--json"];
    args.extend([json.to_str().unwrap(), "--keep", keep.to_str().unwrap()]);
    args.extend(extra.iter().map(String::as_str));
    let out = reclaimsim(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{variant}: {stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("under QEMU") && table.contains("anon:run"),
        "{table}"
    );
    if let Some(image) = extra.get(1) {
        assert!(
            stderr.contains(&format!("booting {image} under QEMU")),
            "{stderr}"
        );
    }
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&d);
    r["variants"][0].clone()
}

/// Writes `text` to `scenario`, runs `reclaimsim kernel` on it with `--json json` (it
/// must succeed) and returns the results.
fn kernel_json(
    scenario: &std::path::Path,
    text: &str,
    json: &std::path::Path,
) -> serde_json::Value {
    std::fs::write(scenario, text).unwrap();
    let args = ["kernel", scenario.to_str().unwrap(), "--json"];
    let out = reclaimsim(&[&args[..], &[json.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

fn count(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not a count: {x}"))
}

/// `--kernel IMAGE --modules DIR` for the default package as `reclaimsim kernel`
/// unpacked it into its cache (a bzImage and a lib/modules/VERSION tree, as a kernel
/// build's `make modules_install` writes).
fn own_build() -> Vec<String> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache")
        });
    let kernels = cache.join("reclaimsim/kernels");
    let mut unpacked: Vec<_> = std::fs::read_dir(&kernels)
        .unwrap()
        .map(|e| e.unwrap().path().join("unpacked"))
        .filter(|p| p.is_dir())
        .collect();
    unpacked.sort();
    let root = unpacked.pop().expect("a kernel package in the cache");
    let image = (std::fs::read_dir(root.join("boot")).unwrap())
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("vmlinuz")
        })
        .expect("a vmlinuz in the package");
    let modules = (std::fs::read_dir(root.join("lib/modules")).unwrap())
        .map(|e| e.unwrap().path())
        .next()
        .expect("a module tree in the package");
    vec![
        "--kernel".into(),
        image.display().to_string(),
        "--modules".into(),
        modules.display().to_string(),
    ]
}

#[test]
fn demo_small_boots_under_both_policies() {
    if !enabled() {
        return;
    }
    for (variant, lru_gen) in [("classic", "0x0000"), ("mglru", "0x0007")] {
        // the second boot takes the first's package as a user's own build: --kernel
        // with its image and --modules with its module tree
        let extra = if variant == "mglru" {
            own_build()
        } else {
            Vec::new()
        };
        let v = boot(variant, &extra);
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
    let r = kernel_json(&scenario, &text, &json);
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

/// A page trace of `n` requests by tenants `a` and `b`: half of them loads or stores of
/// one of 1024 anonymous pages of the tenant, half reads of one of 512 pages of the
/// file `data`; and the distinct anonymous pages `b` touches, and those it writes.
fn page_trace(n: u64) -> (String, usize, usize) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |below: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % below
    };
    let mut text = String::from("time,tenant,target,offset,op\n");
    let mut b_pages = std::collections::BTreeSet::new();
    let mut b_written = std::collections::BTreeSet::new();
    for i in 0..n {
        let tenant = ["a", "b"][next(2) as usize];
        if next(2) == 0 {
            let page = next(1024);
            if tenant == "b" {
                b_pages.insert(page);
            }
            let op = ["r", "w"][next(2) as usize];
            if tenant == "b" && op == "w" {
                b_written.insert(page);
            }
            text.push_str(&format!("{i},{tenant},anon,{},{op}\n", page * 4096));
        } else {
            text.push_str(&format!("{i},{tenant},data,{},r\n", next(512) * 4096));
        }
    }
    (text, b_pages.len(), b_written.len())
}

/// page_fault3, dd and a trace replay in one boot (17 s wall on the project's 2-core VM
/// under TCG, 2026-11-27, before the phases): page_fault3's 2 tasks write their 4 MiB
/// holes for 2 s of guest time, each page a fault (the first pass's are major: the holes'
/// pages are not cached), then, holding their mappings, sleep to 4 s after their start
/// and loop on for 1 s (phase `again`); 4 dd readers, 2 of each of 2 written 8 MiB
/// files, read 8192 pages and the device 16 MiB, then wait for page_fault3 to finish and
/// read the files again from the start (`phase1`, from the page cache); the trace's two
/// tenants replay their 6000 requests in their own memcgs. The kernel's pgpgin is the
/// model's: dd's files once and the trace file's pages. The phases' ends
/// (guest.phase_ends) show the sleep and the wait.
#[test]
fn page_fault3_dd_and_a_trace_replay_in_one_boot() {
    if !enabled() {
        return;
    }
    let d = dir("programs");
    let (trace, b_pages, b_written) = page_trace(6000);
    std::fs::write(d.join("t.pagetrace"), trace).unwrap();
    let (scenario, json) = (d.join("programs.toml"), d.join("out.json"));
    let text = "name = 'programs'\nseed = 1\n[machine]\nmemory = '128MiB'\ncpus = 2\n\
        [kernel]\npolicy = 'classic'\n\
        [[memcg]]\npath = '/a'\n[[memcg]]\npath = '/b'\n\
        [[workload]]\nname = 'pf'\nmemcg = '/a'\n[workload.page_fault3]\ntasks = 2\n\
        size = '4MiB'\nruntime = '2s'\n[[workload.page_fault3.phase]]\nname = 'again'\n\
        sleep_until = '4s'\nruntime = '1s'\n\
        [[workload]]\nname = 'dd'\nmemcg = '/b'\n[workload.dd]\nfiles = 2\nsize = '8MiB'\n\
        readers = 2\nsparse = false\n[[workload.dd.phase]]\nwait_for = 'pf'\n\
        [[workload]]\nname = 'tr'\nmemcg = '/a'\n[workload.trace]\npath = 't.pagetrace'\n\
        tenants = { a = '/a', b = '/b' }\n";
    let r = kernel_json(&scenario, &text, &json);
    let v = &r["variants"][0];
    assert!(v["guest"]["errors"].is_null(), "{}", v["guest"]["errors"]);
    let ops = |w: &str| count(v, &["workloads", w, "ops"]);
    let stat = |m: &str, k: &str| count(v, &["memcgs", m, "memory.stat", k]);
    // page_fault3: a fault a page written; 2 x 1024 major ones in the first pass; its
    // phase `again` loops on
    // (on a loaded host the guest's 2 s may end before the first pass does: TCG's
    // guest clock is the host's, so the pass is then finished in `again`)
    let pf = ops("pf:run") + ops("pf:again");
    assert!(ops("pf:run") > 0 && ops("pf:again") > 0, "{pf}");
    let majors = count(v, &["vmstat", "pgmajfault"]);
    let first = pf.min(2048);
    assert!((first..2048 + 64).contains(&majors), "{majors}, pf {pf}");
    let faults = stat("/a", "pgfault");
    assert!(
        (pf..pf + 8192).contains(&faults),
        "pf {pf}, /a pgfault {faults}"
    );
    // dd: every page of the two files read by both readers in each phase, each file
    // read from the device once; the trace's file (512 pages, 511 of them drawn) read once
    assert_eq!((ops("dd:run"), ops("dd:phase1")), (8192, 8192));
    assert_eq!(
        v["workloads"]["dd:run"]["mib_per_sec"]
            .as_f64()
            .map(|x| x > 0.0),
        Some(true)
    );
    // the phases' ends: pf's `again` sleeps to 4 s after its start and runs 1 s, about
    // 3 s after its `run` ended (2 s); dd's second phase waits for pf to finish
    let end = |p: &str| {
        (v["guest"]["phase_ends"][p].as_f64()).unwrap_or_else(|| panic!("{p}: {}", v["guest"]))
    };
    let slept = end("pf:again") - end("pf:run");
    assert!((2.5..4.0).contains(&slept), "pf slept {slept}");
    assert!(end("dd:phase1") >= end("pf:again"), "{}", v["guest"]);
    let pgpgin = count(v, &["vmstat", "pgpgin"]);
    assert!(
        (16384 + 2000..16384 + 2048 + 512).contains(&pgpgin),
        "{pgpgin}"
    );
    // the trace: every request replayed; tenant b's anonymous pages faulted in /b, those
    // it writes charged there (a load of an untouched page maps the zero page)
    assert_eq!(ops("tr"), 6000);
    assert!(stat("/b", "pgfault") >= b_pages as u64, "{b_pages}");
    assert!(stat("/b", "anon") >= b_written as u64 * 4096, "{b_written}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The host's memcached in the guest with the memtier-like client (21 to 25 s wall on
/// the project's 2-core VM under TCG, 2026-11-27): 2 server threads, 20,000 items of
/// 512 bytes set by 2 P:P connections (4 requests in flight each), then 4 connections
/// GET 2,000 random keys each (8 in flight), then 2 connections SET keys drawn G and GET
/// keys drawn Z, 500 requests each, twice (`run-count`), once an anon started after the
/// first run has finished (`wait-for`), a second after that and again;
/// the same requests as the model, the items in memcached's anonymous memory in /mc;
/// the anon starts `after` the first run, when its phase file appears, and sleeps in a
/// phase until 5 s after its start.
/// Skipped when the host has no memcached (the plan's error says to install it).
#[test]
fn the_hosts_memcached_serves_the_memtier_like_client() {
    let host = ["/usr/bin/memcached", "/usr/sbin/memcached"];
    if !enabled() || !host.iter().any(|p| std::path::Path::new(p).is_file()) {
        eprintln!("skipped: no memcached on the host");
        return;
    }
    let d = dir("memcached");
    let run = |name: &str, pattern: &str, ratio: &str, requests: &str, clients: u32| {
        format!(
            "[[workload.memcached.phase]]\nname = '{name}'\nkey-pattern = '{pattern}'\n\
             ratio = '{ratio}'\nrequests = {requests}\nkey-minimum = 1\nkey-maximum = 20000\n\
             data-size = 512\nclients = {clients}\nthreads = 2\npipeline = {}\n",
            4 * clients
        )
    };
    let text = format!(
        "name = 'mc'\nseed = 1\n[machine]\nmemory = '128MiB'\ncpus = 2\n\
         [[memcg]]\npath = '/mc'\n\
         [[workload]]\nname = 'after'\nafter = 'mc:load'\n[workload.anon]\nsize = '1MiB'\n\
         [[workload.anon.phase]]\nname = 'again'\nsleep_until = '5s'\n\
         [[workload]]\nname = 'mc'\nmemcg = '/mc'\n\
         [workload.memcached]\nthreads = 2\n{}{}{}",
        run("load", "P:P", "1:0", "'allkeys'", 1),
        run("get", "R:R", "0:1", "2000", 2),
        run("gz", "G:Z", "1:1", "500", 1) + "delay = '1s'\nrun-count = 2\nwait-for = 'after'\n"
    );
    let (r, console) = kernel_kept(&d, &text);
    // `after` starts once every connection of mc's `load` has its replies
    let load_end = uptime_of(&console, "phase", "mc:load");
    assert!(
        load_end <= uptime_of(&console, "start", "after"),
        "{console}"
    );
    // `gz` waits for `after` (5 s after its start), then sleeps its second, and again
    // before its second run
    let gz_end = uptime_of(&console, "phase", "mc:gz");
    assert!(
        gz_end - uptime_of(&console, "phase", "mc:get") >= 2.0,
        "{console}"
    );
    assert!(
        gz_end - uptime_of(&console, "phase", "after:again") >= 2.0,
        "{console}"
    );
    let v = &r["variants"][0];
    assert!(v["guest"]["errors"].is_null(), "{}", v["guest"]["errors"]);
    assert_eq!(count(v, &["workloads", "mc:load", "ops"]), 20000);
    assert_eq!(count(v, &["workloads", "mc:get", "ops"]), 8000);
    assert_eq!(count(v, &["workloads", "mc:gz", "ops"]), 2000);
    let anon = count(v, &["memcgs", "/mc", "memory.stat", "inactive_anon"])
        + count(v, &["memcgs", "/mc", "memory.stat", "active_anon"]);
    assert!(anon >= 20000 * 512, "{anon}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The host's fio in the guest (`--fio-program auto` takes it for io_uring): `fixed`
/// reads its two 16 MiB files twice at iodepth 16 through a 24 MiB memcg, so it misses
/// and reclaims; `timed`, time based for a minute, is stopped by `until` when `anon`
/// finishes, and still reports what it did. `anon` starts 8 s in so that `timed` has
/// laid out its files and is reading when it is stopped (with a 1 s start, CI's loaded
/// host stopped it while it was still laying out, with no I/O to report). Skipped when
/// the host has no fio.
#[test]
fn the_hosts_fio_runs_io_uring_jobs_and_stops_with_until() {
    let host = ["/usr/bin/fio", "/usr/local/bin/fio"];
    if !enabled() || !host.iter().any(|p| std::path::Path::new(p).is_file()) {
        eprintln!("skipped: no fio on the host");
        return;
    }
    let d = dir("hostfio");
    let (scenario, json) = (d.join("fio.toml"), d.join("out.json"));
    let job = |name: &str, extra: &str| {
        format!(
            "[[workload]]\nname = '{name}'\nmemcg = '/{name}'\n{extra}[workload.fio]\n\
             rw = 'randread'\nnumjobs = 2\nsize = '16MiB'\nioengine = 'io_uring'\n\
             iodepth = 16\n"
        )
    };
    let text = format!(
        "name = 'hostfio'\nseed = 1\n[machine]\nmemory = '256MiB'\ncpus = 2\n\
         [[memcg]]\npath = '/fixed'\nmax = '24MiB'\n[[memcg]]\npath = '/timed'\n\
         [[memcg]]\npath = '/a'\n\
         [[workload]]\nname = 'anon'\nmemcg = '/a'\nstart = '8s'\n\
         [workload.anon]\nsize = '8MiB'\npasses = 2\n{}loops = 2\n{}\
         time_based = true\nruntime = '60s'\n",
        job("fixed", ""),
        job("timed", "until = 'anon'\n"),
    );
    let r = kernel_json(&scenario, &text, &json);
    let v = &r["variants"][0];
    assert!(v["guest"]["errors"].is_null(), "{}", v["guest"]["errors"]);
    assert_eq!(count(v, &["workloads", "fixed", "ops"]), 2 * 4096 * 2);
    assert!(count(v, &["workloads", "timed", "ops"]) > 0);
    let refaults = count(
        v,
        &["memcgs", "/fixed", "memory.stat", "workingset_refault_file"],
    );
    assert!(refaults > 0, "{refaults}");
    assert!(
        v["virtual_time_s"].as_f64().unwrap() < 50.0,
        "{}",
        v["virtual_time_s"]
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `kernel_json` of `text` in `d`, with the guest's console log (`--keep`).
fn kernel_kept(d: &std::path::Path, text: &str) -> (serde_json::Value, String) {
    let (scenario, json, keep) = (d.join("s.toml"), d.join("out.json"), d.join("guest"));
    std::fs::write(&scenario, text).unwrap();
    let args = ["kernel", scenario.to_str().unwrap(), "--json"];
    let rest = [json.to_str().unwrap(), "--keep", keep.to_str().unwrap()];
    let out = reclaimsim(&[&args[..], &rest[..]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (
        r,
        std::fs::read_to_string(keep.join("console.log")).unwrap(),
    )
}

/// The uptime of `@RS TAG NAME UPTIME ...` in a console log.
fn uptime_of(console: &str, tag: &str, name: &str) -> f64 {
    let line = (console.lines())
        .find(|l| l.starts_with(&format!("@RS {tag} {name} ")))
        .unwrap_or_else(|| panic!("no `@RS {tag} {name}` in\n{console}"));
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// Waits for a phase: `a` populates 8 MiB, reads it once (`run`), then its phase `again`
/// sleeps until 4 s after its start; `b` starts `after = "a:run"`: after that phase's end
/// (`@RS phase a:run`) and before `a` has finished; `c` touches 1 MiB for up to 60 s
/// `until = "a:populate"`: it stops when a's populate ends; the results' `phase_ends`
/// hold the phases' ends as the console printed them. One boot.
#[test]
fn workloads_wait_for_and_stop_at_phases() {
    if !enabled() {
        return;
    }
    let d = dir("phases");
    let text = "name = 'phases'\nseed = 1\n[machine]\nmemory = '128MiB'\ncpus = 2\n\
        [kernel]\npolicy = 'classic'\n\
        [[workload]]\nname = 'a'\n[workload.anon]\nsize = '8MiB'\npopulate = true\n\
        passes = 1\nwrite = false\n[[workload.anon.phase]]\nname = 'again'\n\
        sleep_until = '4s'\nwrite = false\n\
        [[workload]]\nname = 'b'\nafter = 'a:run'\n[workload.anon]\nsize = '4MiB'\n\
        passes = 1\n\
        [[workload]]\nname = 'c'\nuntil = 'a:populate'\n[workload.anon]\nsize = '1MiB'\n\
        pattern = 'random'\nruntime = '60s'\n";
    let (r, console) = kernel_kept(&d, text);
    let v = &r["variants"][0];
    assert!(v["guest"]["errors"].is_null(), "{}", v["guest"]["errors"]);
    let run_end = uptime_of(&console, "phase", "a:run");
    let b_start = uptime_of(&console, "start", "b");
    let again_end = uptime_of(&console, "phase", "a:again");
    assert!(
        run_end <= b_start && b_start < again_end,
        "a:run ended {run_end}, b started {b_start}, a:again ended {again_end}"
    );
    // the results keep each phase's end, in seconds since setup
    let setup = v["guest"]["setup_s"].as_f64().unwrap();
    for (phase, at) in [("a:run", run_end), ("a:again", again_end)] {
        let got = v["guest"]["phase_ends"][phase].as_f64().unwrap_or(f64::NAN);
        assert!(
            (got - (at - setup)).abs() < 1e-9,
            "{phase}: {got}, console {at} - {setup}"
        );
    }
    // init snapshots the counters at a phase's end, after it
    let labels: Vec<&str> = (v["guest"]["snapshots"].as_array().unwrap().iter())
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"phase:a:run"), "{labels:?}");
    let snap = (v["guest"]["snapshots"].as_array().unwrap().iter())
        .find(|s| s["label"] == "phase:a:run")
        .unwrap();
    assert!(
        snap["time_s"].as_f64().unwrap() >= run_end - setup,
        "{snap}"
    );
    assert_eq!(count(v, &["workloads", "a:again", "ops"]), 2048);
    assert_eq!(count(v, &["workloads", "b", "ops"]), 1024);
    let c_secs = v["workloads"]["c"]["measured_s"].as_f64().unwrap();
    assert!(c_secs < 30.0, "c ran {c_secs} s past a:populate");
    let _ = std::fs::remove_dir_all(&d);
}

/// `machine.nodes = 2`: QEMU gives the guest two NUMA nodes of a vCPU each, and init
/// locks on each node what it has beyond its half of the scenario's 128 MiB, so the
/// guest starts with the memory the model's two nodes have free. One small boot.
#[test]
fn two_nodes_boot_with_their_share_free() {
    if !enabled() {
        return;
    }
    let d = dir("nodes");
    let text = "name = 'nodes'\nseed = 1\n[machine]\nmemory = '128MiB'\ncpus = 2\nnodes = 2\n\
        [[workload]]\nname = 'a'\n[workload.anon]\nsize = '16MiB'\nthreads = 2\npasses = 1\n";
    let (r, console) = kernel_kept(&d, text);
    let v = &r["variants"][0];
    assert!(v["guest"]["errors"].is_null(), "{}", v["guest"]["errors"]);
    assert_eq!(v["guest"]["nodes"], 2);
    for n in 0..2 {
        let line = (console.lines())
            .find(|l| l.contains(&format!("@RS ballast_node {n} ")))
            .unwrap_or_else(|| panic!("no ballast line for node {n}"));
        let extra: i64 = line
            .split_whitespace()
            .last()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(extra > 0, "{line}");
    }
    // MemFree after the ballast: the scenario's 128 MiB, less what init holds since
    let free = v["guest"]["mem_free_after_setup"].as_u64().unwrap() >> 20;
    assert!((112..=130).contains(&free), "MemFree {free} MiB");
    assert_eq!(count(v, &["workloads", "a", "ops"]), 8192);
    let _ = std::fs::remove_dir_all(&d);
}
