//! `reclaimsim run` and `reclaimsim fio`: one scenario (or an fio job file), its table.

use crate::cli::*;
use crate::common::*;
use reclaimsim::output::report;
use reclaimsim::results::RunResult;
use reclaimsim::scenario::{self, LoadedScenario};

pub(crate) fn run(c: &Common, variant: Option<&str>) -> Result<(), Failure> {
    run_loaded(c, &load(c)?, variant)
}

/// `reclaimsim fio`: the job file (`c.scenario`) on a machine of `memory`.
pub(crate) fn fio(c: &Common, memory: &str) -> Result<(), Failure> {
    let loaded = scenario::load_jobfile(&c.scenario, memory, &c.sets, c.seed)
        .map_err(|e| input_error(&e, &c.sets))?;
    check_outputs(c)?;
    run_loaded(c, &loaded, None)
}

/// Runs the base of a loaded scenario, or one variant, and prints its results.
pub(crate) fn run_loaded(
    c: &Common,
    loaded: &LoadedScenario,
    variant: Option<&str>,
) -> Result<(), Failure> {
    let (name, scenario) = pick_variant(loaded, variant)?;
    if loaded.is_kernel(name) {
        let what = format!(
            "`run` runs the model: boot it with `reclaimsim kernel {} --variant {name}`, or set \
             it beside the model's variants with `reclaimsim compare`",
            loaded.path.display()
        );
        return Err(Failure::Input(
            loaded.kernel_variant_error(name, &what).to_string(),
        ));
    }
    let job = Job {
        scenario,
        name: name.to_string(),
        file: &loaded.path,
    };
    let result = run_variants(&[job], &RunSettings::of(c))?.remove(0);
    let run = RunResult::of(&loaded.base, scenario.seed, vec![result]);
    write_json(c, &run)?;
    write_html(c, || reclaimsim_html::run_report(&run))?;
    print!("{}", report::table(&run.variants[0], c.verbose));
    oom_outcome(&run.variants, c.fail_on_oom)
}
