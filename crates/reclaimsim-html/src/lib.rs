//! Self-contained HTML reports of reclaimsim results: one file with plotly.js and the
//! data inline, so it opens with no network.
//!
//! - [`run_report`]: a `run` or `compare` result (free pages and LRU / generation sizes
//!   over time per memcg, throughput and latency per variant with the change against the
//!   first, allocation stalls, lock wait per call site, kswapd profiles side by side, each
//!   memcg's share of reclaim);
//! - [`sweep_report`]: a `sweep` result (each metric against the swept value, a line per
//!   variant);
//! - [`report_from_json`]: either, from the JSON `--json` wrote.
//!
//! The charts are Plotly figures built with the `plotly` crate; this crate only chooses
//! what to plot. Output is deterministic: the same results give the same bytes.

mod chart;
mod page;
mod run;
mod sweep;

pub use page::{Figure, Page, Section};

use reclaimsim::output::sweep::SweepResult;
use reclaimsim::results::RunResult;

/// The report of a `run` or `compare` result.
pub fn run_report(r: &RunResult) -> String {
    run::page(r).render()
}

/// The report of a `sweep` result.
pub fn sweep_report(r: &SweepResult) -> String {
    sweep::page(r).render()
}

/// The report of a results file's text (`run`/`compare --json`, or `sweep --json`: told
/// apart by its `points`). `file` names the file in errors, which say where the text is
/// wrong: `FILE:LINE:COLUMN: FIELD: MESSAGE`.
pub fn report_from_json(text: &str, file: &str) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("{file}:{}:{}: not JSON: {e}", e.line(), e.column()))?;
    let is_sweep = value.get("points").is_some();
    if !is_sweep && value.get("variants").is_none() {
        return Err(format!(
            "{file}: not reclaimsim results (neither \"variants\" of run/compare nor \"points\" of sweep)"
        ));
    }
    if is_sweep {
        Ok(sweep_report(&parse::<SweepResult>(text, file)?))
    } else {
        Ok(run_report(&parse::<RunResult>(text, file)?))
    }
}

/// Deserialize results, naming the field and position of the first error.
fn parse<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T, String> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let inner = e.inner();
        format!(
            "{file}:{}:{}: {}: {}",
            inner.line(),
            inner.column(),
            e.path(),
            strip_position(&inner.to_string())
        )
    })
}

/// serde_json's message without its trailing " at line L column C" (said in front).
fn strip_position(msg: &str) -> &str {
    msg.rfind(" at line ").map_or(msg, |i| &msg[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_json_is_located() {
        let e = report_from_json("{\n  \"variants\": [1,\n", "r.json").unwrap_err();
        assert!(e.starts_with("r.json:3:"), "{e}");
        let e = report_from_json(
            "{\"scenario\": \"s\", \"seed\": 1, \"variants\": [{\"name\": 3}]}",
            "r.json",
        )
        .unwrap_err();
        assert!(e.contains("variants[0].name: invalid type"), "{e}");
        let e = report_from_json("{\"a\": 1}", "r.json").unwrap_err();
        assert!(e.contains("not reclaimsim results"), "{e}");
    }
}
