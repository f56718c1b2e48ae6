//! `reclaimsim validate`: the scenarios' `[[expect]]` rows against their runs.

use super::compare::{bands_of, sensitivity_plan};
use crate::cli::*;
use crate::common::*;
use reclaimsim::output::report;
use reclaimsim::output::validate;
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario::{self, LoadedScenario};
use std::path::{Path, PathBuf};

/// Where `validate` looks without arguments, relative to the working directory.
pub(crate) const SEED_SCENARIOS: &str = "scenarios/seeds";

/// Every scenario is loaded (and checked) before any runs; then each runs the variants
/// its expectations compare, once each, in file order; with `--sensitivity`, then each
/// scenario's variants again at every point of its plan. `seeds` is `--seed` and
/// `--seeds`: with N > 1 seeds the variants also run on the next N-1 seeds, for the
/// spread of each change; `sets` (`--set`) apply to every scenario.
pub(crate) fn validate(
    files: &[PathBuf],
    (seed, seeds, sets): (Option<u64>, u64, &[String]),
    json: Option<&Path>,
    sa: &SensitivityArgs,
    flags: &RunFlags,
) -> Result<(), Failure> {
    let loaded = load_expecting(files, seed, sets)?;
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
    let reseeded = reseed(&loaded, seeds, sets)?;
    let mut extra = run_variants(&expected_jobs(&reseeded), &settings)?.into_iter();
    let mut reseeded = reseeded.iter();
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
        for r in reseeded.by_ref().take(seeds as usize - 1) {
            add_seed(&mut checked, r, &mut extra);
        }
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
pub(crate) fn expected_jobs(loaded: &[LoadedScenario]) -> Vec<Job<'_>> {
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

/// The changes of `r` (a scenario on another seed) on its variants' runs, the next ones
/// of `runs`, added to the spread of `checked`.
fn add_seed(
    checked: &mut validate::ScenarioCheck,
    r: &LoadedScenario,
    runs: &mut impl Iterator<Item = VariantResult>,
) {
    let vs: Vec<VariantResult> = (r.expected_variants().into_iter())
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
