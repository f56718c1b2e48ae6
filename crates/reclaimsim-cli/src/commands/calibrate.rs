//! `reclaimsim calibrate`: measure this host and write a machine profile.

use crate::common::*;
use reclaimsim::output::report;
use std::path::Path;

/// Measure this host and write the machine profile, whole or not at all; progress on
/// stderr, the cost-table fields it sets against the defaults on stdout.
pub(crate) fn calibrate(out: &Path, quick: bool, name: Option<&str>) -> Result<(), Failure> {
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
pub(crate) fn calibration_table(p: &reclaimsim::scenario::profile::MachineProfile) -> String {
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
        let per_mille = reclaimsim::sim::cost::PER_MILLE.contains(&field.as_str());
        let value = format!("{}{}", e.value, if per_mille { " ‰" } else { "" });
        s += &format!("{field:<20} {value:>9} {spread:>21} {range:>17} {default:>9}\n");
    }
    if p.costs
        .keys()
        .any(|f| reclaimsim::sim::cost::PER_MILLE.contains(&f.as_str()))
    {
        s += "‰: a factor in per mille, not ns\n";
    }
    s += &format!("{} measurements under [measured]\n", p.measured.len());
    for (what, why) in &p.skipped {
        s += &format!("skipped {what}: {why}\n");
    }
    s
}
