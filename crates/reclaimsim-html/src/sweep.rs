//! The report of a `sweep` result: each metric against the swept value, a line per variant.

use crate::chart::{self, Series};
use crate::page::{Page, Section};
use reclaimsim::output::sweep::SweepResult;
use reclaimsim::results::metrics::METRICS;

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
    for m in METRICS {
        let (unit, scale) = m.shown;
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
                            .map_or(f64::NAN, |v| (m.value)(v) * scale)
                    })
                    .collect(),
                text: vec![],
            })
            .collect();
        if series
            .iter()
            .all(|s| s.y.iter().all(|&y| y == 0.0 || y.is_nan()))
        {
            zero.push(m.title);
            continue;
        }
        figures.push(chart::category_lines(m.title, &x_title, unit, &x, series));
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
        summary: Vec::new(),
        sections: vec![Section {
            heading: "Metrics against the swept value".into(),
            note,
            figures,
        }],
    }
}
