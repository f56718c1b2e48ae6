//! What the subcommands share: loading a scenario, checking output paths, running
//! variants under the run-away guard with progress, writing JSON and HTML, exit reasons.

use crate::cli::*;
use crate::{guard, progress};
use reclaimsim::engine::{Progress, RunOptions, SimError};
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario::{self, LoadedScenario, ScenarioError};
use reclaimsim::{output::report, scenario::config::Scenario};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Why the command failed: bad input (exit 2), a failed run (exit 1), or Ctrl-C (130).
pub(crate) enum Failure {
    Input(String),
    Run(String),
    Interrupted(String),
}

/// One variant to run: the scenario, its name in progress and errors, and its file.
pub(crate) struct Job<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) name: String,
    pub(crate) file: &'a Path,
}

/// How `run_variants` runs its jobs.
pub(crate) struct RunSettings {
    pub(crate) check: bool,
    pub(crate) quiet: bool,
    pub(crate) allow_long: bool,
    /// `--set duration=...` was given: the user chose the virtual time.
    pub(crate) set_duration: bool,
}

impl RunSettings {
    pub(crate) fn of(c: &Common) -> Self {
        RunSettings {
            check: c.check,
            quiet: c.runs.quiet,
            allow_long: c.runs.allow_long,
            set_duration: c.sets.iter().any(|s| {
                s.split_once('=')
                    .is_some_and(|(k, _)| k.trim() == "duration")
            }),
        }
    }
}

/// Load the scenario, and refuse a `--json` or `--html` path that cannot be written
/// before running.
pub(crate) fn load(c: &Common) -> Result<LoadedScenario, Failure> {
    let loaded =
        scenario::load(&c.scenario, &c.sets, c.seed).map_err(|e| input_error(&e, &c.sets))?;
    check_outputs(c)?;
    Ok(loaded)
}

/// The base scenario (`None`), or the variant of that name, with its name.
pub(crate) fn pick_variant<'a>(
    loaded: &'a LoadedScenario,
    variant: Option<&str>,
) -> Result<(&'a str, &'a Scenario), Failure> {
    let Some(name) = variant else {
        return Ok(("base", &loaded.base));
    };
    (loaded.variants.iter())
        .find(|(n, _)| n == name)
        .map(|(n, s)| (n.as_str(), s))
        .ok_or_else(|| {
            let names: Vec<&str> = loaded.variants.iter().map(|(n, _)| n.as_str()).collect();
            Failure::Input(format!(
                "{}: no variant \"{name}\" (there are: {})",
                loaded.path.display(),
                names.join(", ")
            ))
        })
}

/// Refuse a `--json` or `--html` path that cannot be written.
pub(crate) fn check_outputs(c: &Common) -> Result<(), Failure> {
    check_json_path(c.json.as_deref())?;
    if let Some(html) = &c.html {
        check_out("--html", html)?;
    }
    Ok(())
}

/// The key of a `KEY=VALUE`, as `scenario::parse` reports it.
pub(crate) fn set_key(set: &str) -> &str {
    set.split_once('=').map_or(set, |(k, _)| k.trim())
}

/// A scenario error as the user wrote its cause: `--set KEY=VALUE: ...` for a value
/// from `--set` (every `--set` given, when several together caused it).
pub(crate) fn input_error(e: &ScenarioError, sets: &[String]) -> Failure {
    if !e.from_set {
        return Failure::Input(e.to_string());
    }
    let whole = sets.iter().any(|s| set_key(s) == e.field);
    let keys: Vec<&str> = if whole {
        vec![e.field.as_str()]
    } else {
        e.field.split(", ").collect()
    };
    let written: Vec<String> = keys
        .iter()
        .map(|k| match sets.iter().rev().find(|s| set_key(s) == *k) {
            Some(s) => format!("--set {s}"),
            None => format!("--set {k}"),
        })
        .collect();
    Failure::Input(format!("{}: {}", written.join(" "), e.message))
}

/// Refuse a `--json` path that cannot be written, before anything runs.
pub(crate) fn check_json_path(json: Option<&Path>) -> Result<(), Failure> {
    if let Some(json) = json {
        check_out("--json", json)?;
    }
    Ok(())
}

/// Refuse an output path that cannot be written, before any work.
pub(crate) fn check_out(flag: &str, path: &Path) -> Result<(), Failure> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if dir.is_some_and(|d| !d.is_dir()) || path.is_dir() {
        return Err(Failure::Input(format!(
            "{flag} {}: not a file in an existing directory",
            path.display()
        )));
    }
    Ok(())
}

/// The option `--LONG` as `args` (the command line) spell it, `-SHORT` or `--LONG`, for
/// errors to name it as typed.
pub(crate) fn typed_flag(args: impl Iterator<Item = String>, long: &str, short: char) -> String {
    let (short, long) = (format!("-{short}"), format!("--{long}"));
    for a in args.take_while(|a| a != "--") {
        if a == long || a.starts_with(&format!("{long}=")) {
            break;
        }
        if a.starts_with(&short) {
            return short;
        }
    }
    long
}

/// Write `--html`'s report, whole or not at all.
pub(crate) fn write_html(c: &Common, page: impl FnOnce() -> String) -> Result<(), Failure> {
    match &c.html {
        Some(path) => report::write_atomic(path, page().as_bytes())
            .map_err(|e| Failure::Run(format!("--html {}: {e}", path.display()))),
        None => Ok(()),
    }
}

pub(crate) fn write_json(c: &Common, run: &RunResult) -> Result<(), Failure> {
    match &c.json {
        Some(path) => report::write_json(run, path)
            .map_err(|e| Failure::Run(format!("--json {}: {e}", path.display()))),
        None => Ok(()),
    }
}

/// Exit 1 with `--fail-on-oom` when a workload was OOM-killed; else a note. The kills
/// are results (the model's OOM killer did its job), written and printed either way.
pub(crate) fn oom_outcome(variants: &[VariantResult], fail: bool) -> Result<(), Failure> {
    let killed: Vec<String> = (variants.iter())
        .filter(|v| !v.oom_kills.is_empty())
        .map(|v| format!("{} ({})", v.name, v.oom_kills.len()))
        .collect();
    if killed.is_empty() {
        return Ok(());
    }
    let what = format!("OOM kills in variant {}", killed.join(", "));
    if fail {
        return Err(Failure::Run(format!("{what} (--fail-on-oom)")));
    }
    eprintln!("note: {what}");
    Ok(())
}

/// Refuse, before anything runs, a job whose estimated work is over the limits
/// (`guard`), unless `--allow-long`.
pub(crate) fn guard(jobs: &[Job], settings: &RunSettings) -> Result<(), Failure> {
    if settings.allow_long {
        return Ok(());
    }
    for job in jobs {
        let work = guard::estimate(job.scenario);
        if let Some(why) = guard::refuse(&work, settings.set_duration) {
            let variant = match job.name.as_str() {
                "base" => String::new(),
                name => format!("variant {name}: "),
            };
            return Err(Failure::Input(format!(
                "{}: {variant}{why}",
                job.file.display()
            )));
        }
    }
    Ok(())
}

/// Runs independent variants on every core (rayon's threads), each with its progress
/// on stderr (`progress`); results in the order given. Each run is single-threaded and
/// deterministic, so how the runs are spread over threads changes nothing but the wall
/// time. Refuses runs over the limits first (`guard`); after Ctrl-C, says where each
/// run was.
pub(crate) fn run_variants(
    jobs: &[Job],
    settings: &RunSettings,
) -> Result<Vec<VariantResult>, Failure> {
    guard(jobs, settings)?;
    let display = progress::Display::new(settings.quiet);
    let results = in_order_of_listing(jobs.len(), |i| {
        run_variant(&jobs[i], settings.check, &display)
    });
    let stopped: Vec<&str> = (results.iter())
        .filter_map(|r| match r {
            Err(Failure::Interrupted(at)) => Some(at.as_str()),
            _ => None,
        })
        .collect();
    if !stopped.is_empty() || progress::stopped() {
        let at = if stopped.is_empty() {
            "after the runs had ended".to_string()
        } else {
            stopped.join("; ")
        };
        return Err(Failure::Interrupted(at));
    }
    results.into_iter().collect()
}

/// `run(0)`, ..., `run(n - 1)` on rayon's threads, each thread starting the next
/// index not yet started whenever it is free (list scheduling), so that what is listed
/// first starts first: a command that lists its longest runs first (validate's 000)
/// ends sooner than with halves split between the threads, whose last long run can
/// start late. Results by index.
fn in_order_of_listing<T: Send>(n: usize, run: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    rayon::scope(|s| {
        for _ in 0..rayon::current_num_threads().min(n) {
            s.spawn(|_| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = run(i);
                *slots[i].lock().expect("a run panicked") = Some(r);
            });
        }
    });
    (slots.into_iter())
        .map(|m| (m.into_inner().ok().flatten()).expect("every index ran"))
        .collect()
}

/// Run one variant, showing its progress.
pub(crate) fn run_variant(
    job: &Job,
    check: bool,
    display: &progress::Display,
) -> Result<VariantResult, Failure> {
    if progress::stopped() {
        return Err(Failure::Interrupted(format!(
            "variant {} not started",
            job.name
        )));
    }
    let work = guard::estimate(job.scenario);
    let expected = work.virtual_exact.then_some(work.virtual_ns);
    let mut watcher = display.watcher(&job.name, expected, work.virtual_ns);
    let result = {
        let mut watch = |p: &Progress| watcher.watch(p);
        let opts = RunOptions {
            check,
            watch: Some(&mut watch),
            agent: None,
            plugin: None,
        };
        reclaimsim::results::run(job.scenario, &job.name, opts)
    };
    watcher.finish(result.as_ref().ok().map(|r| r.virtual_time_s));
    let name = &job.name;
    result.map_err(|e| match e {
        SimError::Stopped { time_s, phase } => Failure::Interrupted(format!(
            "variant {name} stopped at {time_s:.3} s of virtual time ({phase})"
        )),
        e => Failure::Run(format!("variant {name}: {e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::{in_order_of_listing, typed_flag};
    use std::sync::Mutex;

    #[test]
    fn every_index_runs_once_and_results_keep_their_order() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let started = Mutex::new(Vec::new());
        let out = pool.install(|| {
            in_order_of_listing(9, |i| {
                started.lock().unwrap().push(i);
                i * 10
            })
        });
        assert_eq!(out, (0..9).map(|i| i * 10).collect::<Vec<_>>());
        let mut started = started.into_inner().unwrap();
        started.sort_unstable();
        assert_eq!(started, (0..9).collect::<Vec<_>>());
        assert!(in_order_of_listing(0, |i| i).is_empty());
    }

    #[test]
    fn a_flag_is_named_as_typed() {
        let typed = |args: &[&str]| typed_flag(args.iter().map(|a| a.to_string()), "out", 'o');
        assert_eq!(typed(&["report", "r.json", "-o", "x.html"]), "-o");
        assert_eq!(typed(&["report", "-ox.html", "r.json"]), "-o");
        assert_eq!(typed(&["report", "r.json", "--out", "x.html"]), "--out");
        assert_eq!(typed(&["report", "--out=-o.html", "r.json"]), "--out");
        assert_eq!(typed(&["report", "--", "-o"]), "--out");
    }
}
