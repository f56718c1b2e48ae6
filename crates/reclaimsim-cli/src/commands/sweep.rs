//! `reclaimsim sweep`: one scenario over a grid of `--set` values, locally or on Ray.

use crate::cli::*;
use crate::common::*;
use crate::progress;
use reclaimsim::output::report;
use reclaimsim::results::VariantResult;
use reclaimsim::scenario::{self, LoadedScenario};

/// Every variant at each value; all values are loaded (and checked) before any runs,
/// here or (`--ray`) on a Ray cluster.
pub(crate) fn sweep(
    c: &Common,
    keys: &[String],
    values: &[String],
    ray: Option<&str>,
) -> Result<(), Failure> {
    let mut loaded = Vec::new();
    for v in values {
        loaded.push((v.clone(), load_point(c, keys, v)?));
    }
    if let Some((_, l)) = loaded.first() {
        if let (Some(k), Some(_)) = (l.kernel_variants.first(), ray) {
            let what = "`sweep --ray` runs the model's variants on Ray: leave it out there";
            return Err(Failure::Input(
                l.kernel_variant_error(&k.name, what).to_string(),
            ));
        }
        for k in &l.kernel_variants {
            eprintln!(
                "note: variant {} runs on a real kernel (backend = \"kernel\"): sweep runs the model's variants only",
                k.name
            );
        }
    }
    let jobs: Vec<_> = loaded
        .iter()
        .flat_map(|(value, l)| {
            let model = l.variants.iter().filter(|(n, _)| !l.is_kernel(n));
            model.map(move |(n, s)| Job {
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
pub(crate) fn load_point(
    c: &Common,
    keys: &[String],
    value: &str,
) -> Result<LoadedScenario, Failure> {
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
pub(crate) fn local_sweep(
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
            .take(l.variants.len() - l.kernel_variants.len())
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
pub(crate) fn ray_sweep(
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
pub(crate) fn run_python(python: &str, request: &str) -> Result<std::process::ExitStatus, Failure> {
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
