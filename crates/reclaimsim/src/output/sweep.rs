//! Scaling sweeps: every variant of a scenario at each of several values of one or more
//! keys (each value sets every key), summarized as throughput and lock spin share.

use crate::output::report::{change, Grid};
use crate::results::metrics;
use crate::results::VariantResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The results of a sweep: per value, every variant's full result.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct SweepResult {
    pub scenario: String,
    pub seed: u64,
    /// The keys each value was given to (`--key`).
    pub keys: Vec<String>,
    pub points: Vec<SweepPoint>,
}

#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct SweepPoint {
    pub value: String,
    pub variants: Vec<VariantResult>,
}

/// Throughput of a variant: the sum over its workloads of (ops/s, MiB/s).
pub fn throughput(v: &VariantResult) -> (f64, f64) {
    (metrics::ops_per_sec(v), metrics::mib_per_sec(v))
}

pub use crate::results::metrics::spin_share;

/// The sweep as a table: one row per value; per variant its throughput (ops/s and
/// MiB/s summed over workloads) and lock spin share; after the first variant, its
/// throughput relative to the first.
pub fn table(r: &SweepResult) -> String {
    let names: Vec<&str> = r
        .points
        .first()
        .map(|p| p.variants.iter().map(|v| v.name.as_str()).collect())
        .unwrap_or_default();
    let mut header = vec!["value".to_string()];
    for (i, n) in names.iter().enumerate() {
        header.push(format!("{n} ops/s"));
        header.push("MiB/s".into());
        header.push("spin".into());
        if i > 0 {
            header.push(format!("vs {}", names[0]));
        }
    }
    let mut grid = Grid::new(&header);
    for p in &r.points {
        let mut row = vec![p.value.clone()];
        let base = p.variants.first().map(throughput);
        for (i, v) in p.variants.iter().enumerate() {
            let (ops, mib) = throughput(v);
            row.push(format!("{ops:.0}"));
            row.push(format!("{mib:.1}"));
            row.push(format!("{:.2}%", spin_share(v) * 100.0));
            if let (true, Some(b)) = (i > 0, base) {
                // Compare ops/s when the first variant has any, else MiB/s.
                row.push(if b.0 > 0.0 {
                    change(b.0, ops)
                } else {
                    change(b.1, mib)
                });
            }
        }
        grid.row(row);
    }
    format!(
        "{} (seed {}), each value set to: {}\n\n{}",
        r.scenario,
        r.seed,
        r.keys.join(", "),
        grid.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{LockResult, WorkloadResult};

    fn variant(name: &str, ops: f64, spin: f64) -> VariantResult {
        let mut v = VariantResult {
            name: name.into(),
            ..Default::default()
        };
        for w in ["a", "b"] {
            v.workloads.insert(
                w.into(),
                WorkloadResult {
                    ops_per_sec: ops,
                    mib_per_sec: ops / 256.0,
                    ..Default::default()
                },
            );
        }
        v.locks.insert(
            "lru_lock".into(),
            LockResult {
                spin_share: spin,
                ..Default::default()
            },
        );
        v
    }

    #[test]
    fn table_sums_workloads_and_compares_to_the_first_variant() {
        let r = SweepResult {
            scenario: "s".into(),
            seed: 1,
            keys: vec!["machine.cpus".into()],
            points: vec![SweepPoint {
                value: "4".into(),
                variants: vec![
                    variant("node", 1000.0, 0.5),
                    variant("lruvec", 1500.0, 0.01),
                ],
            }],
        };
        let t = table(&r);
        assert!(
            t.starts_with("s (seed 1), each value set to: machine.cpus\n"),
            "{t}"
        );
        let row = t.lines().last().unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            ["4", "2000", "7.8", "50.00%", "3000", "11.7", "1.00%", "+50.0%"]
        );
    }
}
