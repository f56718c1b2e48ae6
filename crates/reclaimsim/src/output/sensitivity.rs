//! Sensitivity bands: how much a headline change (a compare's throughput change between
//! variants, a validate expectation's metric change) moves when the costs move across
//! their plausible ranges (`Scenario::cost_ranges`, from the machine profile).
//!
//! A plan is the base point, each varied cost alone at the low and at the high end of its
//! range (the others at the scenario's values), and a few random points where every
//! varied cost is drawn uniformly in its range from a fixed seed, so the same scenario
//! gives the same bands. Each point runs every variant; a headline's band is the lowest
//! and highest value it takes over all points, and the costs it depends on most are those
//! whose one-at-a-time runs move it furthest.

use crate::output::report::Grid;
use crate::results::VariantResult;
pub use crate::results::{Band, Driver, Sensitivity};
use crate::scenario::config::Scenario;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

/// The random design's seed: fixed, so bands are deterministic.
pub const DESIGN_SEED: u64 = 0x5e45_2026;

/// How many costs a band names as the ones it depends on most.
pub const DRIVERS: usize = 3;

/// One set of costs to run the variants at.
#[derive(Debug, Clone, PartialEq)]
pub enum Point {
    /// The scenario's own costs.
    Base,
    /// One cost at the low (`high: false`) or high end of its range, the others as given.
    End { cost: String, high: bool },
    /// Every varied cost at a fraction in [0, 1) of its range (in `Plan::costs` order).
    Random { index: usize, fractions: Vec<f64> },
}

impl Point {
    /// A short name for progress bars: `base`, `fault=low`, `random 3`.
    pub fn label(&self) -> String {
        match self {
            Point::Base => "base".into(),
            Point::End { cost, high } => format!("{cost}={}", if *high { "high" } else { "low" }),
            Point::Random { index, .. } => format!("random {index}"),
        }
    }
}

/// The costs varied and the points to run, the base first.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub costs: Vec<String>,
    pub random: usize,
    pub seed: u64,
    pub points: Vec<Point>,
}

/// The plan for `costs`: base, each cost low and high, then `random` points drawn from
/// `seed`.
pub fn plan(costs: Vec<String>, random: usize, seed: u64) -> Plan {
    let mut points = vec![Point::Base];
    for cost in &costs {
        for high in [false, true] {
            points.push(Point::End {
                cost: cost.clone(),
                high,
            });
        }
    }
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    for index in 1..=random {
        let fractions = costs.iter().map(|_| rng.gen::<f64>()).collect();
        points.push(Point::Random { index, fractions });
    }
    Plan {
        costs,
        random,
        seed,
        points,
    }
}

/// The costs to vary: those of `only` (every name must be a cost field), or else every
/// field whose range is more than a point in some variant, in field order.
pub fn varied(variants: &[&Scenario], only: &[String]) -> Result<Vec<String>, String> {
    let mut wide = BTreeSet::new();
    let mut fields = BTreeSet::new();
    for s in variants {
        for (field, [lo, hi]) in &s.cost_ranges {
            fields.insert(field.clone());
            if lo < hi {
                wide.insert(field.clone());
            }
        }
    }
    if only.is_empty() {
        return Ok(wide.into_iter().collect());
    }
    let mut costs = Vec::new();
    for name in only {
        if !fields.contains(name) {
            let all: Vec<&str> = fields.iter().map(String::as_str).collect();
            return Err(format!(
                "--sensitivity-costs: no cost \"{name}\" (the costs are: {})",
                all.join(", ")
            ));
        }
        if !costs.contains(name) {
            costs.push(name.clone());
        }
    }
    Ok(costs)
}

/// `s` with its costs moved to `point`: each cost to its own range's end or fraction.
pub fn apply(s: &Scenario, plan: &Plan, point: &Point) -> Scenario {
    let mut out = s.clone();
    let mut set = |cost: &str, pick: &dyn Fn(u64, u64) -> u64| {
        if let Some(&[lo, hi]) = s.cost_ranges.get(cost) {
            if let Some(c) = out.costs.with(cost, pick(lo, hi)) {
                out.costs = c;
            }
        }
    };
    match point {
        Point::Base => {}
        Point::End { cost, high } => set(cost, &|lo, hi| if *high { hi } else { lo }),
        Point::Random { fractions, .. } => {
            for (cost, u) in plan.costs.iter().zip(fractions) {
                set(cost, &|lo, hi| {
                    let span = (hi - lo + 1) as f64;
                    (lo + (u * span).floor() as u64).min(hi)
                });
            }
        }
    }
    out
}

/// -1, 0 or 1.
fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// One headline's band: `values[i]` is its value at `plan.points[i]`.
pub fn band(headline: &str, plan: &Plan, values: &[Option<f64>]) -> Band {
    let value = values.first().copied().flatten();
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let low = present.iter().copied().reduce(f64::min);
    let high = present.iter().copied().reduce(f64::max);
    let sign_changes = value.is_some_and(|v| present.iter().any(|x| sign(*x) != sign(v)));
    let at = |cost: &str, end: bool| {
        let i = plan
            .points
            .iter()
            .position(|p| matches!(p, Point::End { cost: c, high } if c == cost && *high == end))?;
        values.get(i).copied().flatten()
    };
    let mut drivers: Vec<Driver> = plan
        .costs
        .iter()
        .map(|cost| {
            let (at_low, at_high) = (at(cost, false), at(cost, true));
            let swing = match (at_low, at_high) {
                (Some(a), Some(b)) => (b - a).abs(),
                _ => 0.0,
            };
            Driver {
                cost: cost.clone(),
                at_low,
                at_high,
                swing,
            }
        })
        .filter(|d| d.swing > 0.0)
        .collect();
    drivers.sort_by(|a, b| b.swing.total_cmp(&a.swing).then(a.cost.cmp(&b.cost)));
    drivers.truncate(DRIVERS);
    Band {
        headline: headline.to_string(),
        value,
        low,
        high,
        sign_changes,
        drivers,
    }
}

/// The bands of headlines measured at every point: `at_points[i]` holds the
/// (headline, value) pairs at `plan.points[i]`; the base point's names are the headlines.
pub fn bands(plan: &Plan, at_points: &[Vec<(String, Option<f64>)>]) -> Vec<Band> {
    let Some(base) = at_points.first() else {
        return Vec::new();
    };
    base.iter()
        .map(|(name, _)| {
            let values: Vec<Option<f64>> = at_points
                .iter()
                .map(|hs| hs.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v))
                .collect();
            band(name, plan, &values)
        })
        .collect()
}

/// A compare's headlines: each later variant's throughput change against the first, per
/// workload (up to 16 workloads, as compare's table shows them) and summed when there
/// are several, as fractions.
pub fn compare_headlines(vs: &[VariantResult]) -> Vec<(String, Option<f64>)> {
    let Some(first) = vs.first() else {
        return Vec::new();
    };
    let workloads: BTreeSet<&String> = vs.iter().flat_map(|v| v.workloads.keys()).collect();
    let ops = |v: &VariantResult, w: &str| v.workloads.get(w).map_or(0.0, |r| r.ops_per_sec);
    let total = |v: &VariantResult| v.workloads.values().map(|r| r.ops_per_sec).sum::<f64>();
    let change = |from: f64, to: f64| (from != 0.0).then(|| to / from - 1.0);
    let mut out = Vec::new();
    for v in &vs[1..] {
        let vs_first = format!("{} vs {}", v.name, first.name);
        if workloads.len() > 1 {
            out.push((
                format!("total ops/s {vs_first}"),
                change(total(first), total(v)),
            ));
        }
        if workloads.len() <= 16 {
            for w in &workloads {
                let c = change(ops(first, w), ops(v, w));
                out.push((format!("{w} ops/s {vs_first}"), c));
            }
        }
    }
    out
}

/// `+8.2% [+5.5, +8.4]`; `n/a` without a value.
pub fn show_band(b: &Band) -> String {
    let pct = |x: f64| format!("{:+.1}", x * 100.0);
    match (b.value, b.low, b.high) {
        (Some(v), Some(lo), Some(hi)) => format!("{}% [{}, {}]", pct(v), pct(lo), pct(hi)),
        _ => "n/a".into(),
    }
}

/// `lru_scan_prefetched 2.9, fault 0.4`: each driver's swing in percentage points.
pub fn show_drivers(b: &Band) -> String {
    let parts: Vec<String> = b
        .drivers
        .iter()
        .map(|d| format!("{} {:.1}", d.cost, d.swing * 100.0))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// The bands as a table, with a line saying what was varied.
pub fn table(s: &Sensitivity) -> String {
    let mut t = Grid::new(&["headline", "change [band]", "sign", "depends most on (pp)"]);
    for b in &s.bands {
        t.row(vec![
            b.headline.clone(),
            show_band(b),
            if b.sign_changes { "changes" } else { "holds" }.into(),
            show_drivers(b),
        ]);
    }
    format!(
        "\nsensitivity: {} costs each at the low and high end of its range, and {} random \
         points (seed {:#x}); {} runs\n{}",
        s.costs.len(),
        s.random_points,
        s.seed,
        s.runs,
        t.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costs() -> Vec<String> {
        vec!["fault".into(), "xarray".into()]
    }

    #[test]
    fn a_plan_is_base_then_each_end_then_seeded_random_points() {
        let p = plan(costs(), 3, DESIGN_SEED);
        let labels: Vec<String> = p.points.iter().map(Point::label).collect();
        assert_eq!(
            labels,
            [
                "base",
                "fault=low",
                "fault=high",
                "xarray=low",
                "xarray=high",
                "random 1",
                "random 2",
                "random 3"
            ]
        );
        assert_eq!(
            p,
            plan(costs(), 3, DESIGN_SEED),
            "the same seed, the same plan"
        );
        assert_ne!(p, plan(costs(), 3, DESIGN_SEED + 1));
    }

    #[test]
    fn apply_moves_each_cost_within_its_own_range() {
        let text = "name = \"t\"\n[machine]\nmemory = \"64MiB\"\n[[workload]]\nname = \"a\"\n\
                    [workload.anon]\nsize = \"8MiB\"\n";
        let s = crate::scenario::parse(text, "t.toml", &[], None)
            .unwrap()
            .base;
        let p = plan(costs(), 16, 7);
        let at = |i: usize| apply(&s, &p, &p.points[i]).costs;
        assert_eq!((at(1).fault, at(2).fault), (500, 2000));
        assert_eq!((at(1).xarray, at(2).fault), (s.costs.xarray, 2000));
        assert_eq!(at(0), s.costs);
        for i in 5..p.points.len() {
            let c = at(i);
            assert!((500..=2000).contains(&c.fault) && (20..=150).contains(&c.xarray));
            assert_eq!(c.page_zero, s.costs.page_zero, "an unvaried cost stays");
        }
    }

    #[test]
    fn a_band_spans_every_point_and_names_the_widest_swings() {
        let p = plan(costs(), 2, 1);
        // base, fault low/high, xarray low/high, two random points.
        let values = [0.05, 0.01, 0.09, 0.04, 0.05, -0.02, 0.06].map(Some);
        let b = band("h", &p, &values);
        assert_eq!(
            (b.value, b.low, b.high),
            (Some(0.05), Some(-0.02), Some(0.09))
        );
        assert!(b.sign_changes);
        let names: Vec<&str> = b.drivers.iter().map(|d| d.cost.as_str()).collect();
        assert_eq!(names, ["fault", "xarray"]);
        assert!((b.drivers[0].swing - 0.08).abs() < 1e-12);
        assert_eq!(show_band(&b), "+5.0% [-2.0, +9.0]");
        let b = band(
            "h",
            &p,
            &[0.05, 0.05, 0.05, 0.05, 0.05, 0.04, 0.06].map(Some),
        );
        assert!(!b.sign_changes && b.drivers.is_empty());
        assert_eq!(show_drivers(&b), "-");
    }

    #[test]
    fn compare_headlines_are_each_workloads_change_and_the_total() {
        let v = |name: &str, a: f64, b: f64| {
            let mut v = VariantResult {
                name: name.into(),
                ..Default::default()
            };
            for (w, x) in [("a", a), ("b", b)] {
                let r = crate::results::WorkloadResult {
                    ops_per_sec: x,
                    ..Default::default()
                };
                v.workloads.insert(w.into(), r);
            }
            v
        };
        let h = compare_headlines(&[v("old", 100.0, 0.0), v("new", 150.0, 50.0)]);
        assert_eq!(
            h,
            [
                ("total ops/s new vs old".to_string(), Some(1.0)),
                ("a ops/s new vs old".to_string(), Some(0.5)),
                ("b ops/s new vs old".to_string(), None),
            ]
        );
    }
}
