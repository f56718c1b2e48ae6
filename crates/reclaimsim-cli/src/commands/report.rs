//! `reclaimsim report`: the HTML report of a results JSON file.

use crate::common::*;
use reclaimsim::output::report;
use std::path::Path;

/// `report`: the HTML report of a results file; a file that is not results is bad input.
pub(crate) fn report_cmd(results: &Path, out: &Path) -> Result<(), Failure> {
    let flag = typed_flag(std::env::args().skip(1), "out", 'o');
    check_out(&flag, out)?;
    let name = results.display().to_string();
    let text = std::fs::read_to_string(results)
        .map_err(|e| Failure::Input(format!("{name}: cannot read: {e}")))?;
    let page = reclaimsim_html::report_from_json(&text, &name).map_err(Failure::Input)?;
    report::write_atomic(out, page.as_bytes())
        .map_err(|e| Failure::Run(format!("{flag} {}: {e}", out.display())))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
