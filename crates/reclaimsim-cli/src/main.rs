//! The `reclaimsim` command.

mod guard;
mod progress;
mod trace;

use clap::{Args, Parser, Subcommand};
use rayon::prelude::*;
use reclaimsim::engine::{Progress, RunOptions, SimError};
use reclaimsim::output::{sensitivity, validate};
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario::{self, LoadedScenario, ScenarioError};
use reclaimsim::{output::report, scenario::config::Scenario};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A deterministic model of Linux page reclaim (classic LRU and MGLRU).
#[derive(Parser)]
#[command(name = "reclaimsim", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (its base, or one variant) and print its results.
    Run {
        #[command(flatten)]
        common: Common,
        /// Run this variant instead of the base scenario.
        #[arg(long, value_name = "NAME")]
        variant: Option<String>,
    },
    /// Run an fio job file (INI, `[global]` and job sections) on a machine of --memory and
    /// print its results; set the rest with --set (machine.cpus=8, kernel.policy=mglru).
    Fio {
        #[command(flatten)]
        common: Common,
        /// The machine's memory (4GiB, 960m).
        #[arg(long, value_name = "SIZE")]
        memory: String,
    },
    /// Run every variant of a scenario in order and compare them.
    Compare {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        sensitivity: SensitivityArgs,
    },
    /// Run every variant at each value of one or more keys (each value sets every key)
    /// and print throughput and lock spin share per variant.
    Sweep {
        #[command(flatten)]
        common: Common,
        /// A field to set to each value (dotted, as --set takes it); repeatable.
        #[arg(long = "key", value_name = "KEY", required = true)]
        keys: Vec<String>,
        /// The values, comma-separated: 2,4,16,52,104.
        #[arg(long, value_name = "V,V,...", value_delimiter = ',', required = true)]
        values: Vec<String>,
        /// Run every (value, variant) as a task on a Ray cluster: the one at ADDRESS, or a
        /// local one started for the sweep. Needs the Python package and Ray
        /// (`python3 -m reclaimsim._ray_cli`; $RECLAIMSIM_PYTHON names another python).
        #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "")]
        ray: Option<String>,
    },
    /// Run the variants each scenario's `[[expect]]` tables compare and print, per
    /// expectation, the expected change beside the model's (a report: exit 0 either way).
    Validate {
        /// Scenario files (default: every scenarios/seeds/*.toml, sorted).
        #[arg(value_name = "SCENARIO")]
        scenarios: Vec<PathBuf>,
        /// Override every scenario's seed.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Also write the expectations, their outcomes and the runs as JSON to this file.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        #[command(flatten)]
        sensitivity: SensitivityArgs,
        #[command(flatten)]
        runs: RunFlags,
    },
    /// Measure this host's costs (faults, page copies, cache and DRAM latency, atomics,
    /// lzo and LZ4, loopback TCP, memcached and fio where installed) and write them as a
    /// machine profile for `[machine] profile = PATH`.
    Calibrate {
        /// The profile to write (TOML).
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
        /// Tiny iteration counts and buffers: a few seconds, rough figures (for tests).
        #[arg(long)]
        quick: bool,
        /// The profile's name (default: the file name without its extension).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Write the HTML report (charts, self-contained) of a results file that `run`,
    /// `compare` or `sweep` wrote with --json.
    Report {
        /// The results (JSON).
        #[arg(value_name = "RESULTS.json")]
        results: PathBuf,
        /// The report to write (HTML).
        #[arg(long, short, value_name = "PATH")]
        out: PathBuf,
    },
    /// Replay a trace in a memcg of --cache-size under classic LRU and MGLRU and print
    /// the miss ratios, beside libCacheSim's policies when its Python package is there.
    Trace(trace::TraceArgs),
    /// Measure the model: simulated page accesses per wall second, host bytes per
    /// simulated frame, and the demo scenario's wall time.
    Bench {
        /// Also write the figures as JSON to this file.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
    },
}

/// Options every subcommand that runs a scenario takes.
#[derive(Args)]
struct Common {
    /// The scenario file (TOML; for `fio`, the fio job file).
    scenario: PathBuf,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Override a field: machine.memory=8GiB, kernel.policy=mglru, workload.NAME.fio.numjobs=8.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Also write the HTML report (charts; one self-contained file) to this file.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Run the invariant checker while running (slower).
    #[arg(long)]
    check: bool,
    /// Print every vmstat counter.
    #[arg(long, short)]
    verbose: bool,
    /// Exit 1 when any workload was OOM-killed (the results are written all the same).
    #[arg(long)]
    fail_on_oom: bool,
    #[command(flatten)]
    runs: RunFlags,
}

/// `--sensitivity` and its options (compare, validate).
#[derive(Args)]
struct SensitivityArgs {
    /// Also rerun the variants with the costs moved across their ranges (each cost alone
    /// to its low and high end, then random points) and print each headline change as a
    /// band with the costs it depends on most.
    #[arg(long)]
    sensitivity: bool,
    /// Vary only these costs (cost-table fields, comma-separated); default: every cost
    /// whose range is more than a point.
    #[arg(
        long,
        value_name = "COST,...",
        value_delimiter = ',',
        requires = "sensitivity"
    )]
    sensitivity_costs: Vec<String>,
    /// Random points, every varied cost drawn uniformly in its range (fixed seed).
    #[arg(long, value_name = "N", default_value_t = 8, requires = "sensitivity")]
    sensitivity_points: usize,
}

/// How runs go: progress and the run-away guard.
#[derive(Args)]
struct RunFlags {
    /// Show no progress on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// Run even when the estimated work is over the limits (64 GiB of memory, 3600
    /// virtual CPU-seconds, 10^9 workload operations; see the README).
    #[arg(long)]
    allow_long: bool,
}

/// Why the command failed: bad input (exit 2), a failed run (exit 1), or Ctrl-C (130).
enum Failure {
    Input(String),
    Run(String),
    Interrupted(String),
}

/// One variant to run: the scenario, its name in progress and errors, and its file.
struct Job<'a> {
    scenario: &'a Scenario,
    name: String,
    file: &'a Path,
}

/// How `run_variants` runs its jobs.
struct RunSettings {
    check: bool,
    quiet: bool,
    allow_long: bool,
    /// `--set duration=...` was given: the user chose the virtual time.
    set_duration: bool,
}

impl RunSettings {
    fn of(c: &Common) -> Self {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        Command::Calibrate { .. } | Command::Report { .. }
    ) {
        progress::install_ctrlc();
    }
    let result = match &cli.command {
        Command::Run { common, variant } => run(common, variant.as_deref()),
        Command::Fio { common, memory } => fio(common, memory),
        Command::Compare {
            common,
            sensitivity,
        } => compare(common, sensitivity),
        Command::Sweep {
            common,
            keys,
            values,
            ray,
        } => sweep(common, keys, values, ray.as_deref()),
        Command::Validate {
            scenarios,
            seed,
            json,
            sensitivity,
            runs,
        } => validate(scenarios, *seed, json.as_deref(), sensitivity, runs),
        Command::Report { results, out } => report_cmd(results, out),
        Command::Bench { json } => bench(json.as_deref()),
        Command::Trace(args) => trace::trace(args),
        Command::Calibrate { out, quick, name } => calibrate(out, *quick, name.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(e)) => {
            eprintln!("interrupted: {e}; nothing written");
            ExitCode::from(progress::EXIT_INTERRUPTED)
        }
    }
}

fn run(c: &Common, variant: Option<&str>) -> Result<(), Failure> {
    run_loaded(c, &load(c)?, variant)
}

/// `reclaimsim fio`: the job file (`c.scenario`) on a machine of `memory`.
fn fio(c: &Common, memory: &str) -> Result<(), Failure> {
    let loaded = scenario::load_jobfile(&c.scenario, memory, &c.sets, c.seed)
        .map_err(|e| input_error(&e, &c.sets))?;
    check_outputs(c)?;
    run_loaded(c, &loaded, None)
}

/// Runs the base of a loaded scenario, or one variant, and prints its results.
fn run_loaded(c: &Common, loaded: &LoadedScenario, variant: Option<&str>) -> Result<(), Failure> {
    let (name, scenario) = match variant {
        None => ("base", &loaded.base),
        Some(name) => loaded
            .variants
            .iter()
            .find(|(n, _)| n == name)
            .map(|(n, s)| (n.as_str(), s))
            .ok_or_else(|| {
                let names: Vec<&str> = loaded.variants.iter().map(|(n, _)| n.as_str()).collect();
                Failure::Input(format!(
                    "{}: no variant \"{name}\" (there are: {})",
                    loaded.path.display(),
                    names.join(", ")
                ))
            })?,
    };
    let job = Job {
        scenario,
        name: name.to_string(),
        file: &loaded.path,
    };
    let result = run_variants(&[job], &RunSettings::of(c))?.remove(0);
    let run = RunResult {
        scenario: loaded.base.name.clone(),
        description: loaded.base.description.clone(),
        seed: scenario.seed,
        variants: vec![result],
        sensitivity: None,
    };
    write_json(c, &run)?;
    write_html(c, || reclaimsim_html::run_report(&run))?;
    print!("{}", report::table(&run.variants[0], c.verbose));
    oom_outcome(&run.variants, c.fail_on_oom)
}

fn bench(json: Option<&std::path::Path>) -> Result<(), Failure> {
    let results = reclaimsim::output::bench::run_all().map_err(Failure::Run)?;
    println!(
        "{:<22} {:>8} {:>7} {:>10} {:>14} {:>10} {:>10} {:>11} {:>9}",
        "bench",
        "wall s",
        "CPU s",
        "virtual s",
        "page accesses",
        "acc/wall s",
        "acc/CPU s",
        "bytes/frame",
        "RSS/frame"
    );
    let opt = |v: Option<f64>, scale: f64, unit: &str| {
        v.map_or("-".to_string(), |v| format!("{:.2}{unit}", v / scale))
    };
    for r in &results.cases {
        println!(
            "{:<22} {:>8.2} {:>7} {:>10.3} {:>14} {:>9.2}M {:>10} {:>11.1} {:>9}",
            r.name,
            r.wall_s,
            opt(r.cpu_s, 1.0, ""),
            r.virtual_s,
            r.page_accesses,
            r.accesses_per_wall_s / 1e6,
            opt(r.accesses_per_cpu_s, 1e6, "M"),
            r.bytes_per_frame,
            opt(r.rss_bytes_per_frame, 1.0, "")
        );
    }
    println!("task switch at a sync point: {:.1} ns", results.switch_ns);
    if let Some(path) = json {
        let text =
            serde_json::to_string_pretty(&results).map_err(|e| Failure::Run(e.to_string()))?;
        std::fs::write(path, text).map_err(|e| Failure::Run(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

fn compare(c: &Common, sa: &SensitivityArgs) -> Result<(), Failure> {
    let loaded = load(c)?;
    let variants: Vec<&(String, Scenario)> = loaded.variants.iter().collect();
    let plan = sensitivity_plan(&variants, sa)?;
    let jobs: Vec<_> = variants
        .iter()
        .map(|(n, s)| Job {
            scenario: s,
            name: n.clone(),
            file: &loaded.path,
        })
        .collect();
    let settings = RunSettings::of(c);
    let base = run_variants(&jobs, &settings)?;
    let sensitivity = match &plan {
        Some(plan) => Some(bands_of(
            &variants,
            plan,
            &base,
            &settings,
            &loaded.path,
            sensitivity::compare_headlines,
        )?),
        None => None,
    };
    let run = RunResult {
        scenario: loaded.base.name.clone(),
        description: loaded.base.description.clone(),
        seed: loaded.base.seed,
        variants: base,
        sensitivity,
    };
    write_json(c, &run)?;
    write_html(c, || reclaimsim_html::run_report(&run))?;
    print!("{}", report::compare(&run, c.verbose));
    if let Some(s) = &run.sensitivity {
        print!("{}", sensitivity::table(s));
    }
    oom_outcome(&run.variants, c.fail_on_oom)
}

/// The sensitivity plan `--sensitivity` asks for over these variants (None without it);
/// an unknown `--sensitivity-costs` name is bad input.
fn sensitivity_plan(
    variants: &[&(String, Scenario)],
    sa: &SensitivityArgs,
) -> Result<Option<sensitivity::Plan>, Failure> {
    if !sa.sensitivity {
        return Ok(None);
    }
    let scenarios: Vec<&Scenario> = variants.iter().map(|(_, s)| s).collect();
    let costs = sensitivity::varied(&scenarios, &sa.sensitivity_costs).map_err(Failure::Input)?;
    Ok(Some(sensitivity::plan(
        costs,
        sa.sensitivity_points,
        sensitivity::DESIGN_SEED,
    )))
}

/// Runs `variants` at every point of `plan` but the base (whose runs are `base`), on every
/// core, and gives each headline `headlines` finds in a point's results its band. A point
/// whose costs equal the base's in every variant reuses the base's runs.
fn bands_of(
    variants: &[&(String, Scenario)],
    plan: &sensitivity::Plan,
    base: &[VariantResult],
    settings: &RunSettings,
    file: &Path,
    headlines: impl Fn(&[VariantResult]) -> Vec<(String, Option<f64>)>,
) -> Result<sensitivity::Sensitivity, Failure> {
    let moved: Vec<Option<Vec<Scenario>>> = plan
        .points
        .iter()
        .map(|p| {
            let at: Vec<Scenario> = variants
                .iter()
                .map(|(_, s)| sensitivity::apply(s, plan, p))
                .collect();
            let same = at
                .iter()
                .zip(variants)
                .all(|(a, (_, s))| a.costs == s.costs);
            (!same).then_some(at)
        })
        .collect();
    let jobs: Vec<Job> = plan
        .points
        .iter()
        .zip(&moved)
        .filter_map(|(p, at)| Some((p, at.as_ref()?)))
        .flat_map(|(p, at)| {
            at.iter().zip(variants).map(move |(s, (name, _))| Job {
                scenario: s,
                name: format!("{name} @ {}", p.label()),
                file,
            })
        })
        .collect();
    let mut runs = run_variants(&jobs, settings)?.into_iter();
    let at_points: Vec<Vec<(String, Option<f64>)>> = moved
        .iter()
        .map(|at| match at {
            None => headlines(base),
            Some(_) => {
                let vs: Vec<VariantResult> = base
                    .iter()
                    .zip(runs.by_ref())
                    .map(|(b, mut v)| {
                        v.name = b.name.clone();
                        v
                    })
                    .collect();
                headlines(&vs)
            }
        })
        .collect();
    Ok(sensitivity::Sensitivity {
        costs: plan
            .costs
            .iter()
            .filter_map(|c| Some((c.clone(), *variants.first()?.1.cost_ranges.get(c)?)))
            .collect(),
        random_points: plan.random,
        seed: plan.seed,
        runs: jobs.len(),
        bands: sensitivity::bands(plan, &at_points),
    })
}

/// Every variant at each value; all values are loaded (and checked) before any runs,
/// here or (`--ray`) on a Ray cluster.
fn sweep(c: &Common, keys: &[String], values: &[String], ray: Option<&str>) -> Result<(), Failure> {
    let mut loaded = Vec::new();
    for v in values {
        loaded.push((v.clone(), load_point(c, keys, v)?));
    }
    let jobs: Vec<_> = loaded
        .iter()
        .flat_map(|(value, l)| {
            l.variants.iter().map(move |(n, s)| Job {
                scenario: s,
                name: format!("{n} @ {value}"),
                file: &l.path,
            })
        })
        .collect();
    let settings = RunSettings::of(c);
    guard(&jobs, &settings)?;
    let r = match ray {
        Some(address) => ray_sweep(c, keys, values, address),
        None => local_sweep(keys, &loaded, &jobs, &settings),
    };
    // Ctrl-C reaches the Ray driver too, which then fails: say what happened.
    let r = match r {
        Err(Failure::Run(_)) | Ok(_) if progress::stopped() => {
            return Err(Failure::Interrupted("the sweep was stopped".into()))
        }
        r => r?,
    };
    if let Some(path) = &c.json {
        report::write_json(&r, path)
            .map_err(|e| Failure::Run(format!("--json {}: {e}", path.display())))?;
    }
    write_html(c, || reclaimsim_html::sweep_report(&r))?;
    print!("{}", reclaimsim::output::sweep::table(&r));
    let all: Vec<VariantResult> = (r.points.iter())
        .flat_map(|p| {
            p.variants.iter().map(|v| VariantResult {
                name: format!("{} @ {}", v.name, p.value),
                ..v.clone()
            })
        })
        .collect();
    oom_outcome(&all, c.fail_on_oom)
}

/// One point of a sweep: the scenario with every key set to `value`. An error from
/// the value names `--values`, the flag the user wrote it in.
fn load_point(c: &Common, keys: &[String], value: &str) -> Result<LoadedScenario, Failure> {
    if value.trim().is_empty() {
        return Err(Failure::Input(
            "--values: an empty value: give comma-separated values, such as 2,4,16".into(),
        ));
    }
    let mut sets = c.sets.clone();
    sets.extend(keys.iter().map(|k| format!("{k}={value}")));
    let loaded = scenario::load(&c.scenario, &sets, c.seed).map_err(|e| {
        let from_value = e.from_set
            && keys.iter().any(|k| k.trim() == e.field)
            && !c.sets.iter().any(|s| set_key(s) == e.field);
        if from_value {
            Failure::Input(format!(
                "--values {value} (for --key {}): {}",
                e.field, e.message
            ))
        } else {
            input_error(&e, &sets)
        }
    })?;
    check_outputs(c)?;
    Ok(loaded)
}

/// The sweep's runs on this machine's cores.
fn local_sweep(
    keys: &[String],
    loaded: &[(String, LoadedScenario)],
    jobs: &[Job],
    settings: &RunSettings,
) -> Result<reclaimsim::output::sweep::SweepResult, Failure> {
    let mut runs = run_variants(jobs, settings)?.into_iter();
    let mut points = Vec::new();
    for (value, l) in loaded {
        let variants = runs
            .by_ref()
            .take(l.variants.len())
            .map(|mut v| {
                v.name = v.name.split(" @ ").next().unwrap_or_default().to_string();
                v
            })
            .collect();
        points.push(reclaimsim::output::sweep::SweepPoint {
            value: value.clone(),
            variants,
        });
    }
    let first = &loaded[0].1.base;
    Ok(reclaimsim::output::sweep::SweepResult {
        scenario: first.name.clone(),
        seed: first.seed,
        keys: keys.to_vec(),
        points,
    })
}

/// The sweep's runs as Ray tasks, through the Python package (`reclaimsim._ray_cli`): a
/// request on its stdin, the sweep's JSON in a temporary file. Its stderr is ours.
fn ray_sweep(
    c: &Common,
    keys: &[String],
    values: &[String],
    address: &str,
) -> Result<reclaimsim::output::sweep::SweepResult, Failure> {
    let out = std::env::temp_dir().join(format!(
        "reclaimsim-ray-{}-{}.json",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let request = serde_json::json!({
        "scenario": c.scenario.display().to_string(),
        "sets": c.sets,
        "keys": keys,
        "values": values,
        "seed": c.seed,
        "check": c.check,
        "address": (!address.is_empty()).then_some(address),
        "out": out.display().to_string(),
    });
    let python = std::env::var("RECLAIMSIM_PYTHON").unwrap_or_else(|_| "python3".into());
    let status = run_python(&python, &request.to_string())?;
    let text = std::fs::read_to_string(&out);
    let _ = std::fs::remove_file(&out);
    match status.code() {
        Some(0) => {}
        Some(2) => return Err(Failure::Input("sweep --ray: bad input (above)".into())),
        _ => {
            return Err(Failure::Run(format!(
                "sweep --ray: {python} -m reclaimsim._ray_cli failed ({status}; above); it needs \
                 the Python package and Ray: pip install ./crates/reclaimsim-py ray"
            )))
        }
    }
    let text = text.map_err(|e| Failure::Run(format!("sweep --ray: no results: {e}")))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::Run(format!("sweep --ray: results not understood: {e}")))
}

/// Run `PYTHON -m reclaimsim._ray_cli` with `request` on its stdin.
fn run_python(python: &str, request: &str) -> Result<std::process::ExitStatus, Failure> {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .args(["-m", "reclaimsim._ray_cli"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Failure::Run(format!("sweep --ray: cannot start {python}: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(request.as_bytes())
            .map_err(|e| Failure::Run(format!("sweep --ray: writing to {python}: {e}")))?;
    }
    child
        .wait()
        .map_err(|e| Failure::Run(format!("sweep --ray: waiting for {python}: {e}")))
}

/// Load the scenario, and refuse a `--json` or `--html` path that cannot be written
/// before running.
fn load(c: &Common) -> Result<LoadedScenario, Failure> {
    let loaded =
        scenario::load(&c.scenario, &c.sets, c.seed).map_err(|e| input_error(&e, &c.sets))?;
    check_outputs(c)?;
    Ok(loaded)
}

/// Refuse a `--json` or `--html` path that cannot be written.
fn check_outputs(c: &Common) -> Result<(), Failure> {
    check_json_path(c.json.as_deref())?;
    if let Some(html) = &c.html {
        check_out("--html", html)?;
    }
    Ok(())
}

/// The key of a `KEY=VALUE`, as `scenario::parse` reports it.
fn set_key(set: &str) -> &str {
    set.split_once('=').map_or(set, |(k, _)| k.trim())
}

/// A scenario error as the user wrote its cause: `--set KEY=VALUE: ...` for a value
/// from `--set` (every `--set` given, when several together caused it).
fn input_error(e: &ScenarioError, sets: &[String]) -> Failure {
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
fn check_json_path(json: Option<&Path>) -> Result<(), Failure> {
    if let Some(json) = json {
        check_out("--json", json)?;
    }
    Ok(())
}

/// Where `validate` looks without arguments, relative to the working directory.
const SEED_SCENARIOS: &str = "scenarios/seeds";

/// Every scenario is loaded (and checked) before any runs; then each runs the variants
/// its expectations compare, once each, in file order; with `--sensitivity`, then each
/// scenario's variants again at every point of its plan.
fn validate(
    files: &[PathBuf],
    seed: Option<u64>,
    json: Option<&Path>,
    sa: &SensitivityArgs,
    flags: &RunFlags,
) -> Result<(), Failure> {
    let loaded = load_expecting(files, seed)?;
    check_json_path(json)?;
    let plans = loaded
        .iter()
        .map(|l| sensitivity_plan(&l.expected_variants(), sa))
        .collect::<Result<Vec<_>, _>>()?;
    let settings = RunSettings {
        check: false,
        quiet: flags.quiet,
        allow_long: flags.allow_long,
        set_duration: false,
    };
    let mut runs = run_variants(&expected_jobs(&loaded), &settings)?.into_iter();
    let mut scenarios = Vec::new();
    for (l, plan) in loaded.iter().zip(&plans) {
        let variants = l
            .expected_variants()
            .into_iter()
            .zip(runs.by_ref())
            .map(|((name, _), mut v)| {
                v.name = name.clone();
                v
            })
            .collect();
        let run = RunResult {
            scenario: l.base.name.clone(),
            description: l.base.description.clone(),
            seed: l.base.seed,
            variants,
            sensitivity: None,
        };
        let file = l.path.display().to_string();
        let mut checked = validate::check_scenario(&file, run, &l.expects);
        if let Some(plan) = plan {
            let s = bands_of(
                &l.expected_variants(),
                plan,
                &checked.run.variants,
                &settings,
                &l.path,
                |vs| expectation_changes(l, vs),
            )?;
            checked.run.sensitivity = Some(s);
        }
        scenarios.push(checked);
    }
    let r = validate::ValidateResult { scenarios };
    if let Some(path) = json {
        report::write_json(&r, path)
            .map_err(|e| Failure::Run(format!("--json {}: {e}", path.display())))?;
    }
    print!("{}", validate::table(&r));
    Ok(())
}

/// One job per variant that the scenarios' expectations compare, named by scenario.
fn expected_jobs(loaded: &[LoadedScenario]) -> Vec<Job<'_>> {
    (loaded.iter())
        .flat_map(|l| {
            let scenario = &l.base.name;
            l.expected_variants().into_iter().map(move |(n, s)| Job {
                scenario: s,
                name: format!("{scenario} {n}"),
                file: &l.path,
            })
        })
        .collect()
}

/// The scenarios `validate` names (default: the seeds'), loaded and checked, without
/// those that have no `[[expect]]` (a note on stderr says so).
fn load_expecting(files: &[PathBuf], seed: Option<u64>) -> Result<Vec<LoadedScenario>, Failure> {
    let files = if files.is_empty() {
        seed_scenarios()?
    } else {
        files.to_vec()
    };
    let mut loaded = Vec::new();
    for f in &files {
        loaded.push(scenario::load(f, &[], seed).map_err(|e| Failure::Input(e.to_string()))?);
    }
    for l in loaded.iter().filter(|l| l.expects.is_empty()) {
        eprintln!("{}: no [[expect]], nothing to validate", l.path.display());
    }
    loaded.retain(|l| !l.expects.is_empty());
    Ok(loaded)
}

/// Each expectation of `l` as a headline: its model change on the variants `vs`.
fn expectation_changes(l: &LoadedScenario, vs: &[VariantResult]) -> Vec<(String, Option<f64>)> {
    let run = RunResult {
        variants: vs.to_vec(),
        ..RunResult::default()
    };
    validate::check_scenario("", run, &l.expects)
        .expectations
        .into_iter()
        .map(|c| (format!("{} {} -> {}", c.short, c.from, c.to), c.change))
        .collect()
}

/// The `*.toml` files of `SEED_SCENARIOS`, sorted.
fn seed_scenarios() -> Result<Vec<PathBuf>, Failure> {
    let entries = std::fs::read_dir(SEED_SCENARIOS).map_err(|e| {
        Failure::Input(format!(
            "no SCENARIO given and {SEED_SCENARIOS}/ cannot be read ({e}): run from the checkout or name the files"
        ))
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Failure::Input(format!(
            "no SCENARIO given and no *.toml in {SEED_SCENARIOS}/"
        )));
    }
    Ok(files)
}

/// Refuse an output path that cannot be written, before any work.
fn check_out(flag: &str, path: &Path) -> Result<(), Failure> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if dir.is_some_and(|d| !d.is_dir()) || path.is_dir() {
        return Err(Failure::Input(format!(
            "{flag} {}: not a file in an existing directory",
            path.display()
        )));
    }
    Ok(())
}

/// Measure this host and write the machine profile, whole or not at all; progress on
/// stderr, the cost-table fields it sets against the defaults on stdout.
fn calibrate(out: &Path, quick: bool, name: Option<&str>) -> Result<(), Failure> {
    check_out("--out", out)?;
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = name
        .map(str::to_string)
        .or(stem)
        .unwrap_or_else(|| "host".into());
    let scale = reclaimsim_calibrate::Scale { quick };
    let profile = reclaimsim_calibrate::calibrate(&name, scale, &mut |line| eprintln!("{line}"));
    let body = profile
        .to_toml()
        .map_err(|e| Failure::Run(format!("--out: {e}")))?;
    let text = format!(
        "# Machine profile written by `reclaimsim calibrate{}`: {}.\n\
         # Load it with `[machine] profile = \"PATH\"` in a scenario or `--set machine.profile=PATH`;\n\
         # only [costs.*].value reaches the cost table (the scenario's [costs] still win).\n\n{body}",
        if quick { " --quick" } else { "" },
        profile.profile.measured
    );
    report::write_atomic(out, text.as_bytes())
        .map_err(|e| Failure::Run(format!("--out {}: {e}", out.display())))?;
    print!("{}", calibration_table(&profile));
    println!("written to {}", out.display());
    Ok(())
}

/// The fields a profile sets, against the defaults, and what it skipped.
fn calibration_table(p: &reclaimsim::scenario::profile::MachineProfile) -> String {
    let mut s = format!(
        "{:<20} {:>9} {:>21} {:>17} {:>9}\n",
        "field", "value ns", "p10..p90", "range", "default"
    );
    for (field, e) in &p.costs {
        let spread = e
            .spread
            .map_or(String::new(), |[a, b]| format!("{a:.1}..{b:.1}"));
        let range = e.range.map_or(String::new(), |[a, b]| format!("{a}..{b}"));
        let default = e.default.map_or(String::new(), |d| d.to_string());
        s += &format!(
            "{field:<20} {:>9} {spread:>21} {range:>17} {default:>9}\n",
            e.value
        );
    }
    s += &format!("{} measurements under [measured]\n", p.measured.len());
    for (what, why) in &p.skipped {
        s += &format!("skipped {what}: {why}\n");
    }
    s
}

/// Write `--html`'s report, whole or not at all.
fn write_html(c: &Common, page: impl FnOnce() -> String) -> Result<(), Failure> {
    match &c.html {
        Some(path) => report::write_atomic(path, page().as_bytes())
            .map_err(|e| Failure::Run(format!("--html {}: {e}", path.display()))),
        None => Ok(()),
    }
}

/// `report`: the HTML report of a results file; a file that is not results is bad input.
fn report_cmd(results: &Path, out: &Path) -> Result<(), Failure> {
    check_out("--out", out)?;
    let name = results.display().to_string();
    let text = std::fs::read_to_string(results)
        .map_err(|e| Failure::Input(format!("{name}: cannot read: {e}")))?;
    let page = reclaimsim_html::report_from_json(&text, &name).map_err(Failure::Input)?;
    report::write_atomic(out, page.as_bytes())
        .map_err(|e| Failure::Run(format!("--out {}: {e}", out.display())))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

fn write_json(c: &Common, run: &RunResult) -> Result<(), Failure> {
    match &c.json {
        Some(path) => report::write_json(run, path)
            .map_err(|e| Failure::Run(format!("--json {}: {e}", path.display()))),
        None => Ok(()),
    }
}

/// Exit 1 with `--fail-on-oom` when a workload was OOM-killed; else a note. The kills
/// are results (the model's OOM killer did its job), written and printed either way.
fn oom_outcome(variants: &[VariantResult], fail: bool) -> Result<(), Failure> {
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
fn guard(jobs: &[Job], settings: &RunSettings) -> Result<(), Failure> {
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

/// Runs independent variants on every core (rayon), each with its progress on stderr
/// (`progress`); results in the order given. Each run is single-threaded and
/// deterministic, so how the runs are spread over threads changes nothing but the wall
/// time. Refuses runs over the limits first (`guard`); after Ctrl-C, says where each
/// run was.
fn run_variants(jobs: &[Job], settings: &RunSettings) -> Result<Vec<VariantResult>, Failure> {
    guard(jobs, settings)?;
    let display = progress::Display::new(settings.quiet);
    let results: Vec<Result<VariantResult, Failure>> = jobs
        .par_iter()
        .map(|job| run_variant(job, settings.check, &display))
        .collect();
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

/// Run one variant, showing its progress.
fn run_variant(
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
