//! How runs go: progress on stderr, the run-away guard, Ctrl-C and other signals, OOM
//! kills and the exit status, errors that name the flag the user wrote.

mod common;

use common::{dir, reclaimsim};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// A run that would last 1000 hours of virtual time: fio with no `until`.
const ENDLESS: &str = r#"name = "endless"
[machine]
memory = "64MiB"
cpus = 2
[[workload]]
name = "fio"
[workload.fio]
size = "8MiB"
time_based = true
runtime = "1000h"
"#;

/// `hog` writes 16 MiB of anon memory in /a (memory.max 8 MiB, no swap): one OOM kill.
const OOM: &str = r#"name = "oom"
[machine]
memory = "64MiB"
cpus = 1
[[memcg]]
path = "/a"
max = "8MiB"
[[workload]]
name = "hog"
memcg = "/a"
[workload.anon]
size = "16MiB"
"#;

fn write(d: &Path, name: &str, text: &str) -> String {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Not a terminal: a plain line per interval, naming the virtual time reached of the
/// expected, the phase and the wall time; `--quiet` prints none.
#[test]
fn progress_lines_when_stderr_is_not_a_terminal_and_quiet_silences_them() {
    let d = dir("progress");
    let s = write(&d, "s.toml", ENDLESS);
    let run = |quiet: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_reclaimsim"));
        cmd.args(["run", &s, "--set", "duration=400ms"])
            .env("RECLAIMSIM_PROGRESS_SECS", "0.01");
        if quiet {
            cmd.arg("--quiet");
        }
        cmd.output().unwrap()
    };
    let out = run(false);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("s / 0.400 s virtual ("))
        .unwrap_or_else(|| {
            panic!("no progress line: {err}");
        });
    assert!(
        line.starts_with("base: ") && line.contains(", fio:run, "),
        "{line}"
    );
    assert!(line.contains(" wall"), "{line}");
    assert!(err.contains("base: done, 0.400 s virtual in "), "{err}");
    let out = run(true);
    assert!(out.status.success());
    assert_eq!(stderr(&out), "", "--quiet");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A run with no end is refused before it starts, saying what to set; a duration or
/// `--allow-long` lets it run.
#[test]
fn a_run_with_no_end_is_refused_saying_what_to_set() {
    let d = dir("endless");
    let s = write(&d, "s.toml", ENDLESS);
    let json = d.join("out.json");
    let out = reclaimsim(&["run", &s, "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "error: {s}: a long run: workload \"fio\" lasts 3600000 s of virtual time x 2 CPUs"
        )),
        "{err}"
    );
    assert!(
        err.contains("--set duration=10s") && err.contains("--allow-long"),
        "{err}"
    );
    assert!(!json.exists());
    let out = reclaimsim(&["run", &s, "-q", "--set", "duration=20ms"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Memory over the limit, in a sweep: every point is estimated before any runs.
    let out = reclaimsim(&[
        "sweep",
        &s,
        "--key",
        "machine.memory",
        "--values",
        "64MiB,128GiB",
        "--set",
        "duration=1ms",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("variant base @ 128GiB: machine.memory: 128 GiB"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Starts a long run writing `--json`, waits for its first progress line, sends it
/// `signal`, and returns its exit code and stderr.
fn signalled(d: &Path, signal: &str) -> (Option<i32>, String) {
    let s = write(d, "s.toml", ENDLESS);
    let json = d.join("out.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args(["run", &s, "--set", "duration=1000s", "--json"])
        .arg(&json)
        .env("RECLAIMSIM_PROGRESS_SECS", "0.05")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("virtual"), "{first}");
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert!(!json.exists(), "no JSON after {signal}");
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["s.toml"], "nothing but the scenario after {signal}");
    (status.code(), rest.join("\n"))
}

/// Ctrl-C stops the run, says where it was (virtual time, phase), writes nothing and
/// exits 130.
#[test]
fn ctrl_c_stops_saying_where_the_run_was_and_writes_nothing() {
    let d = dir("sigint");
    let (code, err) = signalled(&d, "-INT");
    assert_eq!(code, Some(130), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("interrupted: variant base stopped at "),
        "{err}"
    );
    assert!(
        last.ends_with(" s of virtual time (fio:run); nothing written"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// A run killed outright (SIGKILL, SIGTERM) leaves no partial JSON either.
#[test]
fn a_run_killed_by_a_signal_leaves_no_partial_json() {
    for signal in ["-KILL", "-TERM"] {
        let d = dir(&format!("sig{signal}"));
        let (code, err) = signalled(&d, signal);
        assert_eq!(code, None, "killed by the signal: {err}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}

/// An OOM kill is a result: exit 0 with a note, the results written; `--fail-on-oom`
/// exits 1, still writing them.
#[test]
fn oom_kills_exit_0_with_a_note_or_1_with_fail_on_oom() {
    let d = dir("oom");
    let s = write(&d, "s.toml", OOM);
    let json = d.join("out.json");
    let j = json.to_str().unwrap();
    let out = reclaimsim(&["run", &s, "-q", "--json", j]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "note: OOM kills in variant base (1)\n");
    std::fs::remove_file(&json).unwrap();
    let out = reclaimsim(&["compare", &s, "-q", "--fail-on-oom", "--json", j]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: OOM kills in variant base (1) (--fail-on-oom)\n"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["variants"][0]["oom_kills"][0]["victim"], "hog");
    let out = reclaimsim(&["run", &s.replace("oom", "x"), "-q", "--fail-on-oom"]);
    assert_eq!(out.status.code(), Some(2), "a missing file is bad input");
    std::fs::remove_dir_all(&d).unwrap();
}

/// An error that a `--set` causes names that `--set` as written, with the field and the
/// line it shows at; an error in a sweep's value names `--values`.
#[test]
fn errors_name_the_flag_the_user_wrote() {
    let d = dir("flags");
    let text = ENDLESS
        .replace("cpus = 2", "cpus = 4")
        .replace("64MiB", "256MiB");
    let s = write(&d, "s.toml", &text);
    let out = reclaimsim(&["run", &s, "--set", "machine.nodes = 8"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: --set machine.nodes = 8: machine.cpus: 4 CPUs cannot be split evenly over \
             8 nodes (a multiple of machine.nodes) (at {s}:4)\n"
        )
    );
    let out = reclaimsim(&["run", &s, "--set", "workload.fio.fio.runtime=0s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: --set workload.fio.fio.runtime=0s: "),
        "{}",
        stderr(&out)
    );
    for (values, expected) in [
        ("", "error: --values: an empty value"),
        ("2,,4", "error: --values: an empty value"),
        ("4,3", "error: --values 3 (for --key machine.cpus): "),
        ("4,x", "error: --values x (for --key machine.cpus): "),
    ] {
        let out = reclaimsim(&[
            "sweep",
            &s,
            "--key",
            "machine.cpus",
            "--set",
            "machine.nodes=2",
            "--values",
            values,
        ]);
        assert_eq!(out.status.code(), Some(2), "{values}");
        assert!(
            stderr(&out).starts_with(expected),
            "{values}: {}",
            stderr(&out)
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}
