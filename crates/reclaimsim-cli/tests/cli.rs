//! The `reclaimsim` command: exit codes, error messages, no partial output.

mod common;

use common::{dir, reclaimsim};
use std::process::Command;

const GOOD: &str = r#"name = "small"
[machine]
memory = "64MiB"
cpus = 2

[[workload]]
name = "a"
[workload.anon]
size = "8MiB"

[variants.more.workload.a.anon]
size = "16MiB"
"#;

#[test]
fn help_works() {
    let out = reclaimsim(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("run") && help.contains("compare"), "{help}");
    assert!(reclaimsim(&["run", "--help"]).status.success());
}

#[test]
fn bad_scenario_exits_2_naming_file_and_line_and_writes_no_json() {
    let d = dir("bad");
    let scenario = d.join("bad.toml");
    std::fs::write(&scenario, GOOD.replace("size = \"8MiB\"", "size = -1")).unwrap();
    let json = d.join("out.json");
    let out = reclaimsim(&[
        "run",
        scenario.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("error: {}:9: workload[0].anon.size: ", scenario.display());
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(!json.exists());
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "only the scenario is there"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_set_and_bad_variant_exit_2() {
    let d = dir("set");
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, GOOD).unwrap();
    let s = scenario.to_str().unwrap();
    let out = reclaimsim(&["compare", s, "--set", "kernel.policy=lru"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: --set kernel.policy=lru: "));
    let out = reclaimsim(&["run", s, "--variant", "less"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(reclaimsim(&["run", s, "--bogus"]).status.code(), Some(2));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn set_scale_is_recorded_and_a_bad_one_exits_2() {
    let d = dir("scale");
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, GOOD).unwrap();
    let (s, json) = (scenario.to_str().unwrap(), d.join("out.json"));
    let out = reclaimsim(&["run", s, "-q", "--set", "scale=0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: --set scale=0: "), "{stderr}");
    let out = reclaimsim(&["run", s, "-q", "--set", "scale=0.2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("machine.memory: 12.8 MiB is out of range"),
        "{stderr}"
    );
    let j = json.to_str().unwrap();
    let out = reclaimsim(&["run", s, "-q", "--set", "scale=0.5", "--json", j]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["variants"][0]["scale"], 0.5);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn compare_writes_json() {
    let d = dir("compare");
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, GOOD).unwrap();
    let json = d.join("out.json");
    let out = reclaimsim(&[
        "compare",
        scenario.to_str().unwrap(),
        "--seed",
        "7",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["seed"], 7);
    let names: Vec<&str> = r["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(names, ["more"]);
    std::fs::remove_dir_all(&d).unwrap();
}

/// `calibrate --quick` writes a profile that a run loads with `--set machine.profile`,
/// relative to the current directory; a profile naming an unknown field is refused with
/// its file, line and field. memcached and fio are measured if installed, else skipped.
#[test]
fn calibrate_quick_writes_a_profile_a_run_loads() {
    let d = dir("calibrate");
    std::fs::write(d.join("s.toml"), GOOD).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
            .args(args)
            .current_dir(&d)
            .output()
            .unwrap()
    };
    let out = run(&["calibrate", "--quick", "--out", "host.toml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("[1/12]"), "progress on stderr: {stderr}");
    let profile = std::fs::read_to_string(d.join("host.toml")).unwrap();
    assert!(profile.contains("[costs.page_zero]"), "{profile}");
    // zram's lzo is measured only in a build with the GPL-2.0 codec.
    assert_eq!(
        profile.contains("[costs.zram_compress]"),
        cfg!(feature = "lzo"),
        "{profile}"
    );
    assert!(profile.contains("quick = true"), "{profile}");
    // A tool that is missing (or cannot run here) is skipped, and said so.
    let stdout = String::from_utf8_lossy(&out.stdout);
    for (field, tool) in [("memcached_request ", "memcached"), ("fio_io ", "fio")] {
        let skipped = stdout.contains(&format!("skipped {tool}"));
        assert!(stdout.contains(field) || skipped, "{stdout}");
    }
    let out = run(&["run", "s.toml", "--set", "machine.profile=host.toml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A profile with a field the cost table does not have.
    let bad = profile.replacen("[costs.page_zero]", "[costs.page_zeroo]", 1);
    std::fs::write(d.join("bad.toml"), &bad).unwrap();
    let out = run(&["run", "s.toml", "--set", "machine.profile=bad.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let line = bad.lines().position(|l| l.contains("page_zeroo")).unwrap() + 1;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!("error: bad.toml:{line}: costs.page_zeroo: unknown field");
    assert!(stderr.starts_with(&expected), "{stderr}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn calibrate_refuses_an_unwritable_out_before_measuring() {
    let out = reclaimsim(&[
        "calibrate",
        "--quick",
        "--out",
        "/nonexistent/dir/host.toml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: --out /nonexistent/dir/host.toml: not a file"),
        "{stderr}"
    );
    assert!(!stderr.contains("[1/"), "no probe ran: {stderr}");
}

/// `compare` runs its variants in parallel; each result is what `run --variant` gives
/// alone, in the scenario's order.
#[test]
fn compare_in_parallel_gives_each_variant_as_run_alone() {
    let d = dir("parallel");
    let s = d.join("s.toml");
    let text = format!("{GOOD}\n[variants.base]\n");
    std::fs::write(&s, text).unwrap();
    let json = |args: &[&str], name: &str| {
        let out = d.join(name);
        let mut all = args.to_vec();
        all.extend(["--json", out.to_str().unwrap()]);
        assert!(reclaimsim(&all).status.success());
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
        for r in v["variants"].as_array_mut().unwrap() {
            r["wall_s"] = 0.into();
        }
        v["variants"].clone()
    };
    let s = s.to_str().unwrap();
    let both = json(&["compare", s], "both.json");
    let names: Vec<&str> = both
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["more", "base"]);
    for (i, name) in names.iter().enumerate() {
        let alone = json(&["run", s, "--variant", name], &format!("{name}.json"));
        assert_eq!(alone[0], both[i], "{name}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `reclaimsim fio JOBFILE --memory SIZE` runs a job file, one workload per job, with
/// `--set` for the rest of the machine; an option the model does not support exits 2
/// naming the job file, line and option; a bad --memory is refused.
#[test]
fn fio_runs_a_job_file_and_locates_its_errors() {
    let d = dir("fio");
    let job = "[global]\nsize=8m\n\n[seq]\nrw=write\n\n[rand]\nrw=randread\nioengine=mmap\n";
    std::fs::write(d.join("two.fio"), job).unwrap();
    let out = common::reclaimsim_in(
        &[
            "fio",
            "two.fio",
            "--memory",
            "128MiB",
            "--set",
            "machine.cpus=2",
            "-q",
        ],
        &d,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("fio.seq") && stdout.contains("fio.rand"),
        "{stdout}"
    );
    std::fs::write(d.join("bad.fio"), "[j]\nsize=8m\nverify=md5\n").unwrap();
    let out = common::reclaimsim_in(&["fio", "bad.fio", "--memory", "128MiB"], &d);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: bad.fio:3: verify: "), "{stderr}");
    let out = common::reclaimsim_in(&["fio", "two.fio", "--memory", "lots"], &d);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: --memory lots: "));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `fio`'s errors name what the command line gave, not the scenario text it writes:
/// `--memory 0` as typed, an empty job file as empty (issue 22).
#[test]
fn fio_errors_name_the_flag_and_the_job_file() {
    let d = dir("fio-flags");
    std::fs::write(d.join("j.fio"), "[j]\nsize=8m\nrw=read\n").unwrap();
    std::fs::write(d.join("empty.fio"), "").unwrap();
    for (args, want) in [
        (
            ["fio", "j.fio", "--memory", "0"],
            "error: --memory 0: 0 B is out of range: at least 16 MiB, less than 1 PiB\n",
        ),
        (
            ["fio", "empty.fio", "--memory", "64MiB"],
            "error: empty.fio:1: the job file is empty (it needs a [job] section)\n",
        ),
    ] {
        let out = common::reclaimsim_in(&args, &d);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// `kernel --accel`: a given accelerator is used as given (the dry run's QEMU line), and
/// a value QEMU's choices here do not include is refused by the flag as typed.
#[test]
fn kernel_accel_is_used_as_given_and_a_bad_one_exits_2() {
    let d = dir("accel");
    let scenario = d.join("s.toml");
    std::fs::write(&scenario, GOOD).unwrap();
    let s = scenario.to_str().unwrap();
    for accel in ["tcg", "kvm"] {
        let out = reclaimsim(&["kernel", s, "--dry-run", "--accel", accel]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains(&format!("# qemu: -accel {accel} -smp")),
            "{text}"
        );
    }
    let out = reclaimsim(&["kernel", s, "--dry-run", "--accel", "hvf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'hvf' for '--accel"));
}
