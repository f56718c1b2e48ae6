//! `reclaimsim bench`: the model's own speed and memory on fixed cases.

use crate::common::*;

pub(crate) fn bench(json: Option<&std::path::Path>) -> Result<(), Failure> {
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
    println!(
        "task switch among 108 tasks: {:.1} ns",
        results.switch_ns_108
    );
    if let Some(path) = json {
        let text =
            serde_json::to_string_pretty(&results).map_err(|e| Failure::Run(e.to_string()))?;
        std::fs::write(path, text).map_err(|e| Failure::Run(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}
