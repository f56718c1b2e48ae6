//! The report of a `sweep` result: each metric against the swept value, a line per variant.

use crate::chart::{self, Series};
use crate::page::{Page, Section};
use reclaimsim::output::sweep::{spin_share, throughput, SweepResult};
use reclaimsim::results::VariantResult;

/// A metric of one run: its chart title, its unit, how to read it off the results.
type Metric = (&'static str, &'static str, fn(&VariantResult) -> f64);

fn vmstat(v: &VariantResult, keys: &[&str]) -> f64 {
    keys.iter()
        .map(|k| v.vmstat.get(*k).copied().unwrap_or(0) as f64)
        .sum()
}

const METRICS: &[Metric] = &[
    ("Throughput (all workloads)", "ops/s", |v| throughput(v).0),
    ("Bandwidth (all workloads)", "MiB/s", |v| throughput(v).1),
    ("Lock spin share", "% of CPU time", |v| {
        spin_share(v) * 100.0
    }),
    ("Allocation stalls", "try_to_free_pages calls", |v| {
        v.alloc_stall.calls as f64
    }),
    ("Allocation stall p99", "µs", |v| {
        v.alloc_stall.latency_ns.p99 as f64 / 1e3
    }),
    ("Pages scanned", "pgscan", |v| {
        vmstat(v, &["pgscan_kswapd", "pgscan_direct"])
    }),
    ("Pages reclaimed", "pgsteal", |v| {
        vmstat(v, &["pgsteal_kswapd", "pgsteal_direct"])
    }),
    ("Swap-ins", "pswpin", |v| vmstat(v, &["pswpin"])),
    ("Refaults", "workingset_refault_*", |v| {
        vmstat(v, &["workingset_refault_anon", "workingset_refault_file"])
    }),
    ("kswapd CPU time", "ms (virtual)", |v| {
        v.kswapd_profile.total_ns as f64 / 1e6
    }),
    ("Virtual time", "s", |v| v.virtual_time_s),
];

/// The whole page: a chart per metric that is not zero everywhere.
pub fn page(r: &SweepResult) -> Page {
    let names: Vec<String> = r
        .points
        .first()
        .map(|p| p.variants.iter().map(|v| v.name.clone()).collect())
        .unwrap_or_default();
    let x: Vec<String> = r.points.iter().map(|p| p.value.clone()).collect();
    let x_title = r.keys.join(", ");
    let mut figures = vec![];
    let mut zero = vec![];
    for (title, unit, get) in METRICS {
        let series: Vec<Series> = names
            .iter()
            .map(|name| Series {
                name: name.clone(),
                y: r.points
                    .iter()
                    .map(|p| {
                        p.variants
                            .iter()
                            .find(|v| &v.name == name)
                            .map_or(f64::NAN, get)
                    })
                    .collect(),
                text: vec![],
            })
            .collect();
        if series
            .iter()
            .all(|s| s.y.iter().all(|&y| y == 0.0 || y.is_nan()))
        {
            zero.push(*title);
            continue;
        }
        figures.push(chart::category_lines(title, &x_title, unit, &x, series));
    }
    let note = (!zero.is_empty()).then(|| format!("Zero at every point: {}.", zero.join(", ")));
    Page {
        title: format!("reclaimsim sweep: {}", r.scenario),
        facts: vec![
            format!("seed {}; variants: {}", r.seed, names.join(", ")),
            format!(
                "each value set to: {}; values: {}",
                r.keys.join(", "),
                x.join(", ")
            ),
        ],
        description: String::new(),
        sections: vec![Section {
            heading: "Metrics against the swept value".into(),
            note,
            figures,
        }],
    }
}
