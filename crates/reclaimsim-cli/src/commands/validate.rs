//! `reclaimsim validate`: the scenarios' `[[expect]]` rows against their runs.

use super::compare::{bands_of, in_file_order, sensitivity_plan};
use super::kernel::{self, GuestArgs};
use crate::cli::*;
use crate::common::*;
use reclaimsim::output::report;
use reclaimsim::output::validate;
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario::{self, config::Scenario, LoadedScenario};
use std::path::{Path, PathBuf};

/// Where `validate` looks without arguments, relative to the working directory.
pub(crate) const SEED_SCENARIOS: &str = "scenarios/seeds";

/// Every scenario is loaded (and checked) before any runs; then each runs the variants
/// its expectations compare, once each, in file order; with `--sensitivity`, then each
/// scenario's variants again at every point of its plan. `seeds` is `--seed` and
/// `--seeds`: with N > 1 seeds the variants also run on the next N-1 seeds, for the
/// spread of each change; `sets` (`--set`) apply to every scenario.
///
/// A variant with `backend = "kernel"` boots a real kernel only with `kernel` (`validate
/// --with-kernel`), once, on the scenario's seed, after the model's runs; without it the
/// rows that name it say so and have no change.
pub(crate) fn validate(
    files: &[PathBuf],
    (seed, seeds, sets): (Option<u64>, u64, &[String]),
    json: Option<&Path>,
    sa: &SensitivityArgs,
    (flags, kernel): (&RunFlags, Option<&GuestArgs>),
) -> Result<(), Failure> {
    let loaded = load_expecting(files, seed, sets)?;
    check_json_path(json)?;
    let plans = loaded
        .iter()
        .map(|l| sensitivity_plan(&model_expected(l), sa))
        .collect::<Result<Vec<_>, _>>()?;
    let planned = match kernel {
        Some(g) => plan_kernel_variants(&loaded, sets, g)?,
        None => Vec::new(),
    };
    let settings = RunSettings {
        check: false,
        quiet: flags.quiet,
        allow_long: flags.allow_long,
        set_duration: false,
    };
    let mut runs = run_variants(&expected_jobs(&loaded), &settings)?.into_iter();
    let reseeded = reseed(&loaded, seeds, sets)?;
    let mut extra = run_variants(&expected_jobs(&reseeded), &settings)?.into_iter();
    let mut reseeded = reseeded.iter();
    let mut on_kernel = run_kernel_variants(&planned, kernel, flags.quiet)?.into_iter();
    let mut scenarios = Vec::new();
    for (l, plan) in loaded.iter().zip(&plans) {
        let variants = expected_runs(l, &mut runs, on_kernel.next().unwrap_or_default());
        let run = RunResult {
            scenario: l.base.name.clone(),
            description: l.base.description.clone(),
            seed: l.base.seed,
            variants,
            sensitivity: None,
        };
        let file = l.path.display().to_string();
        let mut checked = validate::check_scenario(&file, run, &l.expects);
        mark_kernel_rows(l, &mut checked, kernel.is_some());
        for r in reseeded.by_ref().take(seeds as usize - 1) {
            add_seed(&mut checked, r, &mut extra);
        }
        if let Some(plan) = plan {
            let model: Vec<VariantResult> = (checked.run.variants.iter())
                .filter(|v| !l.is_kernel(&v.name))
                .cloned()
                .collect();
            let s = bands_of(&model_expected(l), plan, &model, &settings, &l.path, |vs| {
                expectation_changes(l, vs)
            })?;
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

/// The runs of the variants the expectations of `l` compare, in file order: the model's
/// the next of `runs`, named by variant, and the kernel's, `on_kernel`.
fn expected_runs(
    l: &LoadedScenario,
    runs: &mut impl Iterator<Item = VariantResult>,
    on_kernel: Vec<VariantResult>,
) -> Vec<VariantResult> {
    let model: Vec<VariantResult> = (model_expected(l).into_iter())
        .zip(runs)
        .map(|((name, _), mut v)| {
            v.name = name.clone();
            v
        })
        .collect();
    let expected = l.expected_variants();
    let names: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
    in_file_order(&names, model, on_kernel)
}

/// The guest plans of each scenario's kernel variants that its expectations name, each
/// kept (`--keep`) under SCENARIO-VARIANT.
fn plan_kernel_variants(
    loaded: &[LoadedScenario],
    sets: &[String],
    g: &GuestArgs,
) -> Result<Vec<Vec<kernel::Planned>>, Failure> {
    (loaded.iter())
        .map(|l| {
            let expected = l.expected_variants();
            let names: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
            kernel::plan_variants(l, &names, sets, g, |n| format!("{}-{n}", l.base.name))
        })
        .collect()
}

/// Boots each scenario's planned kernel variants, one after another: their results,
/// per scenario.
fn run_kernel_variants(
    planned: &[Vec<kernel::Planned>],
    kernel: Option<&GuestArgs>,
    quiet: bool,
) -> Result<Vec<Vec<VariantResult>>, Failure> {
    let shown = kernel::Shown {
        verbose: false,
        quiet,
    };
    let g = kernel.cloned().unwrap_or_default();
    (planned.iter())
        .map(|p| kernel::run_variants(&g, p, shown))
        .collect()
}

/// The variants the expectations of `l` compare that run on the model (the others boot
/// a kernel, `backend = "kernel"`).
pub(crate) fn model_expected(l: &LoadedScenario) -> Vec<&(String, Scenario)> {
    (l.expected_variants().into_iter())
        .filter(|(n, _)| !l.is_kernel(n))
        .collect()
}

/// The rows that name a kernel variant: without `--with-kernel` (`booted` false) they
/// have no change and say why; with it, a row that sets a rate or a time of a guest
/// under TCG beside the model's gets a warning, since the two clocks differ.
fn mark_kernel_rows(l: &LoadedScenario, checked: &mut validate::ScenarioCheck, booted: bool) {
    let tcg = |name: &str| {
        (checked.run.variants.iter())
            .find(|v| v.name == name)
            .and_then(|v| v.guest.as_ref())
            .is_some_and(|g| g.accelerator == "tcg")
    };
    let timed: Vec<bool> = (checked.expectations.iter())
        .map(|c| tcg(&c.from) != tcg(&c.to))
        .collect();
    for (c, mixed) in checked.expectations.iter_mut().zip(timed) {
        if !(l.is_kernel(&c.from) || l.is_kernel(&c.to)) {
            continue;
        }
        if !booted {
            // It did not run: the row has no values, whatever the note said.
            c.note = Some("kernel variant: validate --with-kernel boots it".into());
        } else if mixed && TIMED.iter().any(|t| c.metric.contains(t)) {
            eprintln!(
                "warning: {}: {} from {} to {}: a rate or a time of a guest under TCG is in guest time, not the machine's: compare counts",
                l.path.display(), c.metric, c.from, c.to
            );
        }
    }
}

/// Parts of a metric's path that make it a rate or a time.
const TIMED: [&str; 5] = ["per_sec", "latency", "_ns", "_s", "time"];

/// One job per variant on the model that the scenarios' expectations compare, named by
/// scenario.
pub(crate) fn expected_jobs(loaded: &[LoadedScenario]) -> Vec<Job<'_>> {
    (loaded.iter())
        .flat_map(|l| {
            let scenario = &l.base.name;
            model_expected(l).into_iter().map(move |(n, s)| Job {
                scenario: s,
                name: format!("{scenario} {n}"),
                file: &l.path,
            })
        })
        .collect()
}

/// The changes of `r` (a scenario on another seed) on its variants' runs, the next ones
/// of `runs`, added to the spread of `checked`.
fn add_seed(
    checked: &mut validate::ScenarioCheck,
    r: &LoadedScenario,
    runs: &mut impl Iterator<Item = VariantResult>,
) {
    let vs: Vec<VariantResult> = (model_expected(r).into_iter())
        .zip(runs)
        .map(|((name, _), mut v)| {
            v.name = name.clone();
            v
        })
        .collect();
    let changes: Vec<Option<f64>> = (expectation_changes(r, &vs).into_iter())
        .map(|(_, x)| x)
        .collect();
    validate::add_seed(checked, r.base.seed, &changes);
}

/// Each scenario again on the N-1 seeds after its own (`--seeds N`), in order: the
/// scenario's, then the next scenario's.
fn reseed(
    loaded: &[LoadedScenario],
    seeds: u64,
    sets: &[String],
) -> Result<Vec<LoadedScenario>, Failure> {
    let mut out = Vec::new();
    for l in loaded {
        for k in 1..seeds {
            let seed = Some(l.base.seed.wrapping_add(k));
            out.push(
                scenario::load(&l.path, sets, seed).map_err(|e| Failure::Input(e.to_string()))?,
            );
        }
    }
    Ok(out)
}

/// The scenarios `validate` names (default: the seeds'), loaded and checked, without
/// those that have no `[[expect]]` (a note on stderr says so).
pub(crate) fn load_expecting(
    files: &[PathBuf],
    seed: Option<u64>,
    sets: &[String],
) -> Result<Vec<LoadedScenario>, Failure> {
    let files = if files.is_empty() {
        seed_scenarios()?
    } else {
        files.to_vec()
    };
    let mut loaded = Vec::new();
    for f in &files {
        loaded.push(scenario::load(f, sets, seed).map_err(|e| Failure::Input(e.to_string()))?);
    }
    for l in loaded.iter().filter(|l| l.expects.is_empty()) {
        eprintln!("{}: no [[expect]], nothing to validate", l.path.display());
    }
    loaded.retain(|l| !l.expects.is_empty());
    Ok(loaded)
}

/// Each expectation of `l` as a headline: its model change on the variants `vs`.
pub(crate) fn expectation_changes(
    l: &LoadedScenario,
    vs: &[VariantResult],
) -> Vec<(String, Option<f64>)> {
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
pub(crate) fn seed_scenarios() -> Result<Vec<PathBuf>, Failure> {
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
