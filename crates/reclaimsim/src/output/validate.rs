//! `reclaimsim validate`: each scenario's `[[expect]]` beside the model's change, so the
//! distance between the model and a published measurement shows at a glance.

use crate::output::report::Grid;
use crate::output::sensitivity::{self, Band};
use crate::results::{RunResult, VariantResult};
use crate::scenario::expect::Expectation;
use schemars::JsonSchema;
use serde::Serialize;

/// Every scenario validated, in the order given.
#[derive(Serialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct ValidateResult {
    pub scenarios: Vec<ScenarioCheck>,
}

/// One scenario: its file, the runs of the variants its expectations need (as `compare
/// --json` writes them) and each expectation against them.
#[derive(Serialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct ScenarioCheck {
    pub file: String,
    #[serde(flatten)]
    pub run: RunResult,
    pub expectations: Vec<Check>,
}

impl ScenarioCheck {
    /// The band of expectation `i` (`validate --sensitivity`): the run's sensitivity holds
    /// one band per expectation, in order.
    pub fn band(&self, i: usize) -> Option<&Band> {
        self.run.sensitivity.as_ref()?.bands.get(i)
    }
}

/// One expectation and what the model gives. Without a model change (`note` says why),
/// `change`, `same_sign`, `in_range` and `ratio` are null.
#[derive(Serialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct Check {
    pub metric: String,
    pub from: String,
    pub to: String,
    /// The expected change `to / from - 1`: [low, high].
    pub expected: [f64; 2],
    pub source: String,
    /// The expectation's caveat (`[[expect]] caveat`), a footnote of the table.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub caveat: String,
    pub from_value: Option<f64>,
    pub to_value: Option<f64>,
    /// The model's change, `to_value / from_value - 1`.
    pub change: Option<f64>,
    pub same_sign: Option<bool>,
    pub in_range: Option<bool>,
    /// The model's change over the middle of the expected range (null when that is 0).
    pub ratio: Option<f64>,
    /// Why there is no change: "no such metric", "not a number", "divides by 0", "from is 0".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The seeds the change was measured on (`validate --seeds N`): the scenario's seed,
    /// on which `change`, `same_sign`, `in_range` and `ratio` are judged, then the next
    /// N-1.
    pub seeds: Vec<u64>,
    /// The least and greatest model change over `seeds` (null when no seed gave one).
    pub spread: Option<[f64; 2]>,
    /// The model change on each of `seeds`, in order.
    pub seed_changes: Vec<Option<f64>>,
    /// For the table: the metric without its section.
    #[serde(skip)]
    pub short: String,
}

/// Evaluate each expectation on `run`, which holds the variants they name
/// (`LoadedScenario::expected_variants`).
pub fn check_scenario(file: &str, run: RunResult, expects: &[Expectation]) -> ScenarioCheck {
    let json: Vec<(&str, serde_json::Value)> = run
        .variants
        .iter()
        .map(|v| (v.name.as_str(), to_json(v)))
        .collect();
    // A variant that did not run has no metrics at all.
    let find = |name: &str| {
        json.iter()
            .find(|(n, _)| *n == name)
            .map_or(&serde_json::Value::Null, |(_, j)| j)
    };
    let expectations = expects
        .iter()
        .map(|e| {
            let mut c = evaluate(e, find(&e.from), find(&e.to));
            c.seeds = vec![run.seed];
            c.seed_changes = vec![c.change];
            c.spread = spread_of(&c.seed_changes);
            c
        })
        .collect();
    ScenarioCheck {
        file: file.to_string(),
        run,
        expectations,
    }
}

/// Widens each expectation's spread by its model change on one more seed: `changes`
/// holds one change per expectation, in order (`validate --seeds`).
pub fn add_seed(check: &mut ScenarioCheck, seed: u64, changes: &[Option<f64>]) {
    for (c, &x) in check.expectations.iter_mut().zip(changes) {
        c.seeds.push(seed);
        c.seed_changes.push(x);
        c.spread = spread_of(&c.seed_changes);
    }
}

/// The least and greatest of the changes there are (`Check::spread`).
fn spread_of(changes: &[Option<f64>]) -> Option<[f64; 2]> {
    changes.iter().flatten().fold(None, |s, &x| match s {
        Some([lo, hi]) => Some([f64::min(lo, x), f64::max(hi, x)]),
        None => Some([x, x]),
    })
}

/// A result as the JSON `--json` writes, which metric paths address.
fn to_json(v: &VariantResult) -> serde_json::Value {
    // Serializing plain maps and numbers cannot fail; a Null would only make every
    // metric "no such metric".
    serde_json::to_value(v).unwrap_or_default()
}

/// The expectation alone, nothing evaluated.
fn blank(e: &Expectation) -> Check {
    Check {
        metric: e.metric.text.clone(),
        from: e.from.clone(),
        to: e.to.clone(),
        expected: [e.change.low, e.change.high],
        source: e.source.clone(),
        caveat: e.caveat.clone(),
        short: e.metric.short(),
        ..Check::default()
    }
}

/// The model's change of `e.metric` from the result `from` to the result `to` (each a
/// `VariantResult` as JSON), against the expected range.
pub fn evaluate(e: &Expectation, from: &serde_json::Value, to: &serde_json::Value) -> Check {
    let mut c = blank(e);
    let (f, t) = (e.metric.value(from), e.metric.value(to));
    c.from_value = f.ok();
    c.to_value = t.ok();
    let (f, t) = match (f, t) {
        (Ok(f), Ok(t)) => (f, t),
        (Err(m), _) | (_, Err(m)) => {
            c.note = Some(m.to_string());
            return c;
        }
    };
    if f == 0.0 {
        c.note = Some("from is 0".into());
        return c;
    }
    let change = t / f - 1.0;
    let middle = e.change.middle();
    c.change = Some(change);
    c.same_sign = Some(sign(change) == sign(middle));
    c.in_range = Some(e.change.contains(change));
    c.ratio = (middle != 0.0).then(|| change / middle);
    c
}

/// -1, 0 or 1: a change of 0 has a sign of its own, matching only an expected 0.
fn sign(x: f64) -> i8 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// One table over all scenarios: per expectation the scenario, the metric (short), the
/// variants, the expected range, the model's change, whether its sign and its value
/// agree, and its ratio to the middle of the range; with `--sensitivity`, also the band
/// of the model's change, whether its sign changes inside it, and the costs it depends on
/// most. Over several seeds (`validate --seeds`), the spread of the model's change
/// follows the ratio.
pub fn table(r: &ValidateResult) -> String {
    let banded = r.scenarios.iter().any(|s| s.run.sensitivity.is_some());
    let mut header = vec![
        "scenario",
        "metric",
        "from -> to",
        "expected",
        "model",
        "same sign",
        "in range",
        "model/expected",
    ];
    let seeds = (r.scenarios.iter())
        .flat_map(|s| &s.expectations)
        .map(|c| c.seeds.len())
        .max()
        .unwrap_or(1);
    let spread_header = format!("spread ({seeds} seeds)");
    if seeds > 1 {
        header.push(&spread_header);
    }
    if banded {
        header.extend(["band", "sign in band", "depends most on (pp)"]);
    }
    let mut t = Grid::new(&header);
    let mut notes = String::new();
    for s in &r.scenarios {
        for (i, c) in s.expectations.iter().enumerate() {
            let mut row = row(s, c);
            if !c.caveat.is_empty() {
                let n = notes.lines().count() + 1;
                row[1] = format!("{} [{n}]", row[1]);
                notes.push_str(&format!("[{n}] {}: {}\n", s.run.scenario, c.caveat));
            }
            if seeds > 1 {
                row.push(spread(c.spread));
            }
            if banded {
                row.extend(band_cells(s.band(i)));
            }
            t.row(row);
        }
    }
    t.render() + &notes
}

/// An expectation's cells, up to `model/expected`.
fn row(s: &ScenarioCheck, c: &Check) -> Vec<String> {
    let yes_no = |b: Option<bool>| match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    let model = match (c.change, &c.note) {
        (Some(x), _) => format!("{:+.1}%", x * 100.0),
        (None, note) => format!("n/a ({})", note.as_deref().unwrap_or("?")),
    };
    vec![
        s.run.scenario.clone(),
        c.short.clone(),
        format!("{} -> {}", c.from, c.to),
        expected(c.expected),
        model,
        yes_no(c.same_sign).into(),
        yes_no(c.in_range).into(),
        c.ratio.map_or("-".into(), |x| format!("{x:.2}")),
    ]
}

/// The band, whether the sign changes inside it, the drivers; `-` without a band.
fn band_cells(b: Option<&Band>) -> [String; 3] {
    match b {
        Some(b) if b.value.is_some() => [
            sensitivity::show_band(b)
                .split_once(' ')
                .map_or(String::new(), |(_, band)| band.to_string()),
            if b.sign_changes { "changes" } else { "holds" }.into(),
            sensitivity::show_drivers(b),
        ],
        _ => ["-".into(), "-".into(), "-".into()],
    }
}

/// The model change's least..greatest over the seeds (`-3.1..+2.0%`), `-` without one.
fn spread(s: Option<[f64; 2]>) -> String {
    s.map_or("-".into(), |[lo, hi]| {
        format!("{:+.1}..{:+.1}%", lo * 100.0, hi * 100.0)
    })
}

/// `+7.5%`, or `+101..+105%` for a range.
fn expected([low, high]: [f64; 2]) -> String {
    let pct = |x: f64| {
        let s = format!("{:+.2}", x * 100.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if low == high {
        format!("{}%", pct(low))
    } else {
        format!("{}..{}%", pct(low), pct(high))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::expect::{ChangeRange, Metric};
    use serde_json::json;

    fn expect(metric: &str, low: f64, high: f64) -> Expectation {
        Expectation {
            metric: Metric::parse(metric).unwrap(),
            from: "a".into(),
            to: "b".into(),
            change: ChangeRange { low, high },
            source: "a mail".into(),
            caveat: String::new(),
        }
    }

    fn ops(x: f64) -> serde_json::Value {
        json!({"workloads": {"w": {"ops_per_sec": x}}})
    }

    #[test]
    fn a_change_in_range_with_its_sign() {
        let c = evaluate(
            &expect("workloads.w.ops_per_sec", 0.4, 0.6),
            &ops(100.0),
            &ops(150.0),
        );
        assert_eq!(c.change, Some(0.5));
        assert_eq!((c.same_sign, c.in_range), (Some(true), Some(true)));
        assert_eq!(c.ratio, Some(1.0));
        assert_eq!(
            (c.from_value, c.to_value, c.note),
            (Some(100.0), Some(150.0), None)
        );
    }

    #[test]
    fn a_change_of_the_wrong_sign_or_size() {
        let e = expect("workloads.w.ops_per_sec", -0.235, -0.235);
        let c = evaluate(&e, &ops(100.0), &ops(110.0));
        assert_eq!((c.same_sign, c.in_range), (Some(false), Some(false)));
        assert!((c.ratio.unwrap() + 0.1 / 0.235).abs() < 1e-12);
        let c = evaluate(&e, &ops(100.0), &ops(90.0));
        assert_eq!((c.same_sign, c.in_range), (Some(true), Some(false)));
        let c = evaluate(&e, &ops(100.0), &ops(100.0));
        assert_eq!((c.change, c.same_sign), (Some(0.0), Some(false)));
    }

    #[test]
    fn a_caveat_is_a_footnote_of_its_row() {
        let mut e = expect("workloads.w.ops_per_sec", 0.4, 0.6);
        e.caveat = "the link is the scenario's hypothesis".into();
        let plain = expect("workloads.w.ops_per_sec", 0.4, 0.6);
        let mut run = RunResult::default();
        run.scenario = "s".into();
        let check = |es: Vec<Expectation>| ScenarioCheck {
            file: "s.toml".into(),
            run: run.clone(),
            expectations: es
                .iter()
                .map(|e| evaluate(e, &ops(1.0), &ops(1.5)))
                .collect(),
        };
        let t = table(&ValidateResult {
            scenarios: vec![check(vec![plain.clone(), e])],
        });
        assert!(t.contains("ops_per_sec [1]"), "{t}");
        assert!(
            t.ends_with("[1] s: the link is the scenario's hypothesis\n"),
            "{t}"
        );
        let t = table(&ValidateResult {
            scenarios: vec![check(vec![plain])],
        });
        assert!(!t.contains("[1]"), "{t}");
    }

    #[test]
    fn a_range_around_zero_has_no_ratio() {
        let c = evaluate(
            &expect("workloads.w.ops_per_sec", -0.1, 0.1),
            &ops(10.0),
            &ops(10.5),
        );
        assert_eq!((c.in_range, c.ratio), (Some(true), None));
    }

    #[test]
    fn no_change_without_both_values() {
        let e = expect("workloads.x.ops_per_sec", 0.1, 0.2);
        let c = evaluate(&e, &ops(1.0), &ops(2.0));
        assert_eq!(c.note.as_deref(), Some("no such metric"));
        assert_eq!(
            (c.change, c.same_sign, c.in_range, c.ratio),
            (None, None, None, None)
        );
        let e = expect("workloads.w.ops_per_sec", 0.1, 0.2);
        let c = evaluate(&e, &ops(0.0), &ops(2.0));
        assert_eq!((c.note.as_deref(), c.change), (Some("from is 0"), None));
    }

    #[test]
    fn the_table_shows_ranges_changes_and_missing_metrics() {
        let v = |name: &str, x: f64| {
            let mut v = VariantResult {
                name: name.into(),
                ..Default::default()
            };
            v.workloads.insert(
                "w".into(),
                crate::results::WorkloadResult {
                    ops_per_sec: x,
                    ..Default::default()
                },
            );
            v
        };
        let run = RunResult {
            scenario: "s".into(),
            variants: vec![v("a", 100.0), v("b", 203.0)],
            ..Default::default()
        };
        let expects = [
            expect("workloads.w.ops_per_sec", 1.01, 1.05),
            expect("workloads.*.ops_per_sec", 0.075, 0.075),
            expect("vmstat.nope", 0.1, 0.1),
        ];
        let r = ValidateResult {
            scenarios: vec![check_scenario("s.toml", run, &expects)],
        };
        let t = table(&r);
        let rows: Vec<Vec<&str>> = t
            .lines()
            .skip(1)
            .map(|l| {
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .collect()
            })
            .collect();
        assert_eq!(
            rows[0],
            [
                "s",
                "w.ops_per_sec",
                "a -> b",
                "+101..+105%",
                "+103.0%",
                "yes",
                "yes",
                "1.00"
            ]
        );
        assert_eq!(rows[1][1..4], ["*.ops_per_sec", "a -> b", "+7.5%"]);
        assert_eq!(rows[1][5..], ["yes", "no", "13.73"]);
        assert_eq!(rows[2][4..], ["n/a (no such metric)", "-", "-", "-"]);
    }
}
