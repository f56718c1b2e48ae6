//! `reclaimsim compare`: every variant of a scenario side by side, with sensitivity bands.

use crate::cli::*;
use crate::commands::kernel::{self, GuestArgs};
use crate::common::*;
use reclaimsim::output::sensitivity;
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::{output::report, scenario::config::Scenario};
use std::path::Path;

pub(crate) fn compare(c: &Common, sa: &SensitivityArgs, g: &GuestArgs) -> Result<(), Failure> {
    let loaded = load(c)?;
    // Kernel variants boot in QEMU, one after another, after the model's have run;
    // --sensitivity moves the model's costs, so it bands the model's variants only.
    let variants: Vec<&(String, Scenario)> = (loaded.variants.iter())
        .filter(|(n, _)| !loaded.is_kernel(n))
        .collect();
    let plan = sensitivity_plan(&variants, sa)?;
    let names: Vec<&str> = loaded.variants.iter().map(|(n, _)| n.as_str()).collect();
    let planned = kernel::plan_variants(&loaded, &names, &c.sets, g, str::to_string)?;
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
    let shown = kernel::Shown {
        verbose: c.verbose,
        quiet: c.runs.quiet,
    };
    let on_kernel = kernel::run_variants(g, &planned, shown)?;
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
        sensitivity,
        ..RunResult::of(
            &loaded.base,
            loaded.base.seed,
            in_file_order(&names, base, on_kernel),
        )
    };
    write_json(c, &run)?;
    write_html(c, || reclaimsim_html::run_report(&run))?;
    print!("{}", report::compare(&run, c.verbose));
    if let Some(s) = &run.sensitivity {
        print!("{}", sensitivity::table(s));
    }
    oom_outcome(&run.variants, c.fail_on_oom)
}

/// The model's and the kernel's results of a scenario's variants, in the order of
/// `names` (the file's).
pub(crate) fn in_file_order(
    names: &[&str],
    model: Vec<VariantResult>,
    kernel: Vec<VariantResult>,
) -> Vec<VariantResult> {
    let mut all: Vec<VariantResult> = model.into_iter().chain(kernel).collect();
    let at = |v: &VariantResult| names.iter().position(|n| *n == v.name);
    all.sort_by_key(at);
    all
}

/// The sensitivity plan `--sensitivity` asks for over these variants (None without it);
/// an unknown `--sensitivity-costs` name is bad input.
pub(crate) fn sensitivity_plan(
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
pub(crate) fn bands_of(
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
