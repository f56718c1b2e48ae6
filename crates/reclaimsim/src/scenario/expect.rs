//! Expectations (`[[expect]]`): what a published measurement says the change from one
//! variant to another was, so that `reclaimsim validate` can set the model's change
//! beside it.
//!
//! A metric is a dotted path into one variant's results as `--json` writes them
//! (`VariantResult`): `workloads."memcached:run".ops_per_sec`. Segments are bare keys
//! (letters, digits, `_`, `-`), `"quoted keys"` (for names with dots, colons or slashes;
//! `\"` and `\\` escape) or `*`, which sums over every key (or array element) under which
//! the rest of the path exists: `workloads.*.ops_per_sec` is the throughput of all 104 dd;
//! `{a,b}` sums over the keys listed (`kswapd_profile.categories.{rmap_walk,unmap}`).
//! A key that is a number indexes an array. `A / B` divides one path by another, for a
//! share: `kswapd_profile.categories.rmap_walk / kswapd_profile.total_ns`.

use super::{elem, fail, Problem, Seg};
use serde::Deserialize;
use serde_json::Value as Json;
use std::fmt;
use toml::Value;

/// The `[[expect]]` tables of a file, as deserialized (field errors are located by the
/// scenario loader).
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(super) struct ExpectFile {
    #[serde(default)]
    expect: Vec<ExpectConfig>,
}

/// One `[[expect]]` as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ExpectConfig {
    metric: String,
    from: String,
    to: String,
    /// A change string or an array of one or two; checked by `parse_range`.
    change: Value,
    #[serde(default)]
    source: String,
    #[serde(default)]
    caveat: String,
}

/// One checked expectation: `metric` should change by `change` from variant `from` to
/// variant `to`.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    pub metric: Metric,
    pub from: String,
    pub to: String,
    pub change: ChangeRange,
    /// Where the figure comes from (mail and table), free text.
    pub source: String,
    /// What a reader must know about this comparison (e.g. that the link between the
    /// figure and the variants is the scenario's hypothesis, not the source's): printed
    /// as a footnote under `validate`'s table. Empty for none.
    pub caveat: String,
}

/// An expected relative change `to / from - 1` as a closed range; `low == high` when
/// the source gives one figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeRange {
    pub low: f64,
    pub high: f64,
}

impl ChangeRange {
    pub fn middle(&self) -> f64 {
        (self.low + self.high) / 2.0
    }

    pub fn contains(&self, change: f64) -> bool {
        (self.low..=self.high).contains(&change)
    }
}

/// Check the file's `[[expect]]` tables: metrics that parse, changes that parse into a
/// range, `from` and `to` naming two different `variants`.
pub(super) fn check(file: ExpectFile, variants: &[&str]) -> Result<Vec<Expectation>, Problem> {
    let mut out = Vec::with_capacity(file.expect.len());
    for (i, e) in file.expect.into_iter().enumerate() {
        let metric = Metric::parse(&e.metric).map_err(|m| (elem("expect", i, "metric"), m))?;
        for (field, name) in [("from", &e.from), ("to", &e.to)] {
            if !variants.contains(&name.as_str()) {
                return fail(
                    elem("expect", i, field),
                    format!("no variant \"{name}\" (there are: {})", variants.join(", ")),
                );
            }
        }
        if e.from == e.to {
            return fail(
                elem("expect", i, "to"),
                format!("\"{}\" is also `from`: the change would always be 0", e.to),
            );
        }
        let change = parse_range(&e.change).map_err(|(sub, m)| {
            let mut path = elem("expect", i, "change");
            path.extend(sub.map(Seg::Index));
            (path, m)
        })?;
        out.push(Expectation {
            metric,
            from: e.from,
            to: e.to,
            change,
            source: e.source,
            caveat: e.caveat,
        });
    }
    Ok(out)
}

/// `change`: one change string, or an array of one or two (low, high). An error names
/// the array element at fault, if any.
fn parse_range(v: &Value) -> Result<ChangeRange, (Option<usize>, String)> {
    const FORMS: &str =
        "a change such as \"+80%\", \"-23.5%\" or \"3.0x\", or a range [\"+101%\", \"+105%\"]";
    let items: Vec<&Value> = match v {
        Value::String(_) => vec![v],
        Value::Array(a) if (1..=2).contains(&a.len()) => a.iter().collect(),
        _ => return Err((None, format!("must be {FORMS}"))),
    };
    let mut bounds = Vec::with_capacity(2);
    for (j, item) in items.iter().enumerate() {
        let at = matches!(v, Value::Array(_)).then_some(j);
        let s = item
            .as_str()
            .ok_or_else(|| (at, format!("{item}: must be a string, {FORMS}")))?;
        bounds.push(parse_change(s).map_err(|m| (at, m))?);
    }
    let (low, high) = (bounds[0], bounds[bounds.len() - 1]);
    if low > high {
        return Err((None, "the range must go from low to high".into()));
    }
    Ok(ChangeRange { low, high })
}

/// One change: a percentage (`+80%`, `-23.5%`, `80%`) or the ratio to/from (`3.0x`),
/// as the fraction `to / from - 1`. Below -100% a count or a rate cannot go.
pub fn parse_change(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let parsed = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map(|p| p / 100.0)
    } else if let Some(r) = t.strip_suffix('x') {
        r.trim().parse::<f64>().map(|r| r - 1.0)
    } else {
        return Err(format!(
            "\"{s}\": not a change: write a percentage (\"+80%\", \"-23.5%\") or a ratio to/from (\"3.0x\")"
        ));
    };
    match parsed {
        Ok(c) if c.is_finite() && c >= -1.0 => Ok(c),
        Ok(_) => Err(format!(
            "\"{s}\": a change must be finite and at least -100% (a ratio of 0x)"
        )),
        Err(_) => Err(format!("\"{s}\": not a number before the % or x")),
    }
}

/// A path into a variant's results, or the quotient of two.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// As written in the scenario.
    pub text: String,
    path: Vec<Step>,
    per: Option<Vec<Step>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    /// `*`: every key or element.
    Any,
    /// `{a,b}`: the keys listed.
    AnyOf(Vec<String>),
}

/// Why a metric has no value in a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    NoSuchMetric,
    /// The path ends at a table, an array or a string.
    NotANumber,
    /// The divisor of `A / B` is 0.
    DividesByZero,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Missing::NoSuchMetric => "no such metric",
            Missing::NotANumber => "not a number",
            Missing::DividesByZero => "divides by 0",
        })
    }
}

impl Metric {
    /// Parse `PATH` or `PATH / PATH`.
    pub fn parse(text: &str) -> Result<Metric, String> {
        if text.trim().is_empty() {
            return Err(
                "empty: name a path into the results, such as workloads.fio.ops_per_sec".into(),
            );
        }
        let bad = |rest: &str| {
            let at = if rest.is_empty() { "the end" } else { rest };
            format!("\"{text}\": expected a key, \"*\" or a \"quoted key\" at {at}")
        };
        let (path, rest) = parse_path(text).map_err(bad)?;
        let rest = rest.trim_start();
        let (per, rest) = match rest.strip_prefix('/') {
            Some(r) => {
                let (per, r) = parse_path(r).map_err(bad)?;
                (Some(per), r.trim_start())
            }
            None => (None, rest),
        };
        if !rest.is_empty() {
            return Err(format!(
                "\"{text}\": unexpected {rest} (segments are joined by `.`, and `/` divides two paths)"
            ));
        }
        Ok(Metric {
            text: text.to_string(),
            path,
            per,
        })
    }

    /// The metric's value in one variant's results (`VariantResult` as JSON).
    pub fn value(&self, result: &Json) -> Result<f64, Missing> {
        let x = resolve(result, &self.path)?;
        match &self.per {
            None => Ok(x),
            Some(per) => {
                let d = resolve(result, per)?;
                if d == 0.0 {
                    Err(Missing::DividesByZero)
                } else {
                    Ok(x / d)
                }
            }
        }
    }

    /// A short name for tables: each path without its first segment (the results'
    /// section: workloads, vmstat, kswapd_profile), unquoted.
    pub fn short(&self) -> String {
        let show = |p: &[Step]| {
            let p = if p.len() > 1 { &p[1..] } else { p };
            p.iter()
                .map(|s| match s {
                    Step::Key(k) => k.clone(),
                    Step::Any => "*".into(),
                    Step::AnyOf(keys) => format!("{{{}}}", keys.join(",")),
                })
                .collect::<Vec<_>>()
                .join(".")
        };
        match &self.per {
            None => show(&self.path),
            Some(per) => format!("{} / {}", show(&self.path), show(per)),
        }
    }
}

/// Parse `seg(.seg)*` from the start of `s`; on success the path and what follows it,
/// else the text where a segment was expected.
fn parse_path(s: &str) -> Result<(Vec<Step>, &str), &str> {
    let mut path = Vec::new();
    let mut rest = s.trim_start();
    loop {
        let (step, after) = parse_step(rest).ok_or(rest)?;
        path.push(step);
        match after.strip_prefix('.') {
            Some(r) => rest = r,
            None => return Ok((path, after)),
        }
    }
}

/// One segment: `*`, `{key,key...}`, a `"quoted key"` or a bare key.
fn parse_step(s: &str) -> Option<(Step, &str)> {
    if let Some(r) = s.strip_prefix('*') {
        return Some((Step::Any, r));
    }
    if let Some(r) = s.strip_prefix('{') {
        let (list, after) = r.split_once('}')?;
        let keys: Vec<String> = list.split(',').map(|k| k.trim().to_string()).collect();
        let bare = |k: &String| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        return keys.iter().all(bare).then_some((Step::AnyOf(keys), after));
    }
    if let Some(r) = s.strip_prefix('"') {
        let mut key = String::new();
        let mut chars = r.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((Step::Key(key), &r[i + 1..])),
                '\\' => key.push(chars.next().filter(|(_, e)| matches!(e, '"' | '\\'))?.1),
                _ => key.push(c),
            }
        }
        return None;
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(s.len());
    (end > 0).then(|| (Step::Key(s[..end].to_string()), &s[end..]))
}

/// The number at `path` under `v`. `*` sums over the children under which the rest of
/// the path exists (none: no such metric); `{a,b}` sums over the keys listed, each of
/// which must exist; a path that ends at anything but a number is not a number.
fn resolve(v: &Json, path: &[Step]) -> Result<f64, Missing> {
    let Some((step, rest)) = path.split_first() else {
        return v.as_f64().ok_or(Missing::NotANumber);
    };
    match step {
        Step::Key(k) => resolve(child(v, k)?, rest),
        Step::AnyOf(keys) => keys.iter().map(|k| resolve(child(v, k)?, rest)).sum(),
        Step::Any => {
            let children: Vec<&Json> = match v {
                Json::Object(m) => m.values().collect(),
                Json::Array(a) => a.iter().collect(),
                _ => return Err(Missing::NoSuchMetric),
            };
            let mut total = None;
            for c in children {
                match resolve(c, rest) {
                    Ok(x) => total = Some(total.unwrap_or(0.0) + x),
                    Err(Missing::NoSuchMetric) => {}
                    Err(e) => return Err(e),
                }
            }
            total.ok_or(Missing::NoSuchMetric)
        }
    }
}

/// The child of an object by key, or of an array by index.
fn child<'a>(v: &'a Json, key: &str) -> Result<&'a Json, Missing> {
    let c = match v {
        Json::Object(m) => m.get(key),
        Json::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    };
    c.ok_or(Missing::NoSuchMetric)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn results() -> Json {
        json!({
            "workloads": {
                "memcached:run": {"ops_per_sec": 1000.0},
                "dd0": {"ops_per_sec": 10.0},
                "dd1": {"ops_per_sec": 32.5, "latency_ns": {"p50": 7}},
            },
            "kswapd_profile": {"total_ns": 400, "categories": {"rmap_walk": 100, "unmap": 60}},
            "memcgs": {"/a": {"memory.stat": {"pgscan": 5}}},
            "oom_kills": [{"time_s": 1.5}, {"time_s": 2.0}],
            "idle": {"total_ns": 0},
        })
    }

    fn value(metric: &str) -> Result<f64, Missing> {
        Metric::parse(metric).unwrap().value(&results())
    }

    #[test]
    fn quoted_segments_name_keys_with_dots_colons_and_slashes() {
        assert_eq!(value("workloads.\"memcached:run\".ops_per_sec"), Ok(1000.0));
        assert_eq!(value("memcgs.\"/a\".\"memory.stat\".pgscan"), Ok(5.0));
        assert_eq!(value("workloads.dd1.latency_ns.p50"), Ok(7.0));
        assert_eq!(value("oom_kills.1.time_s"), Ok(2.0));
    }

    #[test]
    fn a_wildcard_sums_where_the_rest_exists() {
        assert_eq!(value("workloads.*.ops_per_sec"), Ok(1042.5));
        assert_eq!(value("workloads.*.latency_ns.p50"), Ok(7.0));
        assert_eq!(value("oom_kills.*.time_s"), Ok(3.5));
        assert_eq!(value("workloads.*.nope"), Err(Missing::NoSuchMetric));
    }

    #[test]
    fn a_key_list_sums_the_keys_named_and_needs_each() {
        let both = "kswapd_profile.categories.{rmap_walk, unmap} / kswapd_profile.total_ns";
        assert_eq!(value(both), Ok(0.4));
        assert_eq!(
            value("kswapd_profile.categories.{rmap_walk,nope}"),
            Err(Missing::NoSuchMetric)
        );
        let m = Metric::parse("kswapd_profile.categories.{rmap_walk,unmap}").unwrap();
        assert_eq!(m.short(), "categories.{rmap_walk,unmap}");
        for bad in ["a.{}", "a.{b,}", "a.{b", "a.{b c}", "a.{\"b\"}"] {
            assert!(Metric::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_quotient_divides_two_paths() {
        let share = "kswapd_profile.categories.rmap_walk / kswapd_profile.total_ns";
        assert_eq!(value(share), Ok(0.25));
        assert_eq!(
            value("kswapd_profile.total_ns/idle.total_ns"),
            Err(Missing::DividesByZero)
        );
    }

    #[test]
    fn missing_paths_and_non_numbers_say_so() {
        assert_eq!(
            value("workloads.fio.ops_per_sec"),
            Err(Missing::NoSuchMetric)
        );
        assert_eq!(value("oom_kills.7.time_s"), Err(Missing::NoSuchMetric));
        assert_eq!(
            value("workloads.dd0.ops_per_sec.more"),
            Err(Missing::NoSuchMetric)
        );
        assert_eq!(value("workloads.dd1"), Err(Missing::NotANumber));
        assert_eq!(
            value("workloads.*.ops_per_sec / nope"),
            Err(Missing::NoSuchMetric)
        );
    }

    #[test]
    fn bad_metrics_are_refused() {
        for bad in [
            "",
            "  ",
            "workloads..x",
            "workloads.",
            ".x",
            "workloads.\"open",
            "workloads.\"bad\\escape\"",
            "a b",
            "a / ",
            "a / b / c",
            "*x",
        ] {
            assert!(Metric::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Metric::parse("")
            .unwrap_err()
            .starts_with("empty: name a path"));
    }

    #[test]
    fn short_names_drop_the_section() {
        let m = Metric::parse("workloads.\"memcached:run\".ops_per_sec").unwrap();
        assert_eq!(m.short(), "memcached:run.ops_per_sec");
        let m =
            Metric::parse("kswapd_profile.categories.rmap_walk / kswapd_profile.total_ns").unwrap();
        assert_eq!(m.short(), "categories.rmap_walk / total_ns");
        assert_eq!(
            Metric::parse("page_accesses").unwrap().short(),
            "page_accesses"
        );
    }

    #[test]
    fn changes_are_percentages_or_ratios() {
        assert_eq!(parse_change("+80%"), Ok(0.8));
        assert_eq!(parse_change("-23.5%"), Ok(-0.235));
        assert_eq!(parse_change("80 %"), Ok(0.8));
        assert_eq!(parse_change("3.0x"), Ok(2.0));
        assert_eq!(parse_change("0.5x"), Ok(-0.5));
        assert_eq!(parse_change("-100%"), Ok(-1.0));
        for bad in [
            "+80",
            "80 percent",
            "x",
            "%",
            "-150%",
            "-1x",
            "infx",
            "NaN%",
        ] {
            assert!(parse_change(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn ranges_are_one_change_or_low_and_high() {
        let s = |x: &str| Value::String(x.into());
        let r = parse_range(&s("+7.5%")).unwrap();
        assert_eq!((r.low, r.high), (0.075, 0.075));
        let r = parse_range(&Value::Array(vec![s("+101%"), s("+105%")])).unwrap();
        assert_eq!((r.low, r.high), (1.01, 1.05));
        assert!((r.middle() - 1.03).abs() < 1e-12 && r.contains(1.02) && !r.contains(1.06));
        let reversed = parse_range(&Value::Array(vec![s("+5%"), s("+3%")]));
        assert_eq!(reversed.unwrap_err().0, None);
        let bad = parse_range(&Value::Array(vec![s("+5%"), s("7")]));
        assert_eq!(bad.unwrap_err().0, Some(1));
        assert!(parse_range(&Value::Integer(3)).is_err());
        assert!(parse_range(&Value::Array(vec![])).is_err());
    }
}
