//! Machine profiles: cost-table values for one machine, measured on a host (`reclaimsim
//! calibrate` writes them) or taken from published figures (the profiles shipped in
//! `crates/reclaimsim/profiles/`), that a scenario loads with `[machine] profile = "NAME"`
//! or `"PATH"`. A value with a '/' or ending in `.toml` is a path; anything else names a
//! shipped profile (`BUILTIN`).
//!
//! A profile is TOML: `[profile]` says where and when it was measured, `[costs.FIELD]`
//! holds a value for a field of the cost table with the statistics and method behind it,
//! `[measured.NAME]` records measurements that stand for no field, and `[skipped]` says
//! what could not be measured and why. Only `[costs.*].value` reaches the cost table:
//! above the defaults, below the scenario's own `[costs]`. The rest is for the reader.

use super::{key, show, Origin, ScenarioError, Seg, Source};
use crate::sim::cost::CostTable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// A machine profile as written by `reclaimsim calibrate` (or by hand: an entry needs
/// only its `value`).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    pub profile: ProfileInfo,
    /// Values for cost-table fields, by field name.
    #[serde(default)]
    pub costs: BTreeMap<String, Entry>,
    /// Measurements that stand for no cost-table field (or that a cost was derived
    /// from), by their own names.
    #[serde(default)]
    pub measured: BTreeMap<String, Entry>,
    /// Measurements that could not be made on this host, with the reason.
    #[serde(default)]
    pub skipped: BTreeMap<String, String>,
}

/// Which machine a profile describes.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileInfo {
    pub name: String,
    /// When and where: the date, the host name, the CPU model, CPUs and kernel.
    #[serde(default)]
    pub measured: String,
    /// Measured with `--quick`'s tiny iteration counts: figures for tests, not for use.
    #[serde(default)]
    pub quick: bool,
    /// What the machine is and which choices made the profile (the shipped profiles say
    /// which seed's machine they stand for, and what its mail leaves unsaid).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub about: String,
}

/// One measured (or derived) cost, in nanoseconds.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// What the cost table gets (for `[costs]`): the median, rounded, after any derivation.
    pub value: u64,
    /// Median over the rounds, in ns per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    /// The 10th and 90th percentiles over the rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<[f64; 2]>,
    /// Median absolute deviation over the rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mad: Option<f64>,
    /// Values the field may plausibly take on this host: the lowest 10th and highest
    /// 90th percentile of this and of the other measurements that could stand for it.
    /// `value` must lie inside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[u64; 2]>,
    /// Timed rounds (their medians make the statistics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
    /// Operations timed over all rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    /// How it was measured, and derived from what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The cost table's default for the field when this was measured, for comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<u64>,
}

impl MachineProfile {
    /// The profile as TOML, `[profile]` first, then `[costs.*]`, `[measured.*]`, `[skipped]`.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }

    /// The `[costs]` values as a table of integers, ready to merge under a scenario's
    /// `[costs]`. Values past i64 cannot come from a TOML file; they saturate.
    pub fn cost_values(&self) -> Table {
        self.costs
            .iter()
            .map(|(k, e)| {
                (
                    k.clone(),
                    Value::Integer(i64::try_from(e.value).unwrap_or(i64::MAX)),
                )
            })
            .collect()
    }
}

/// The profiles shipped with the library, by name: the built-in cost table and the seeds'
/// machines. Each field of each has a value, a range and its source (`method`); a test
/// checks all of them.
pub const BUILTIN: [(&str, &str); 5] = [
    ("default", include_str!("../../profiles/default.toml")),
    (
        "epyc-7k62-2s",
        include_str!("../../profiles/epyc-7k62-2s.toml"),
    ),
    (
        "xeon-gold-6154-2s",
        include_str!("../../profiles/xeon-gold-6154-2s.toml"),
    ),
    (
        "xeon-sp-26c-2s",
        include_str!("../../profiles/xeon-sp-26c-2s.toml"),
    ),
    (
        "snapdragon-7c",
        include_str!("../../profiles/snapdragon-7c.toml"),
    ),
];

/// Whether `profile = "S"` names a shipped profile rather than a file: a path has a '/'
/// (or a backslash) or ends in `.toml`.
pub fn is_name(s: &str) -> bool {
    !s.contains('/') && !s.contains('\\') && !s.ends_with(".toml")
}

/// The names of the shipped profiles, in `BUILTIN` order.
pub fn names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// The shipped profile `name`, parsed; None for a name that is not shipped. Errors call
/// the file `profiles/NAME.toml`.
pub fn builtin(name: &str) -> Option<Result<MachineProfile, ScenarioError>> {
    let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
    Some(parse(text, &format!("profiles/{name}.toml")))
}

/// Each cost field's plausible range `[low, high]` for a scenario whose cost table is
/// `costs`: the `default` profile's, replaced by `profile`'s where it has the field (an
/// entry without its own range keeps the default's, stretched to reach its value), and
/// held at the value for each field in `pinned` (set by the scenario's own `[costs]`).
/// Every range holds the table's value.
pub fn cost_ranges(
    costs: &CostTable,
    profile: Option<&MachineProfile>,
    pinned: &[String],
) -> Result<BTreeMap<String, [u64; 2]>, ScenarioError> {
    let default = builtin("default").expect("the default profile is shipped")?;
    let values = Table::try_from(costs).unwrap_or_default();
    let mut ranges = BTreeMap::new();
    for (field, value) in values {
        let Some(value) = value.as_integer().and_then(|v| u64::try_from(v).ok()) else {
            continue;
        };
        let from = |p: &MachineProfile| p.costs.get(&field).and_then(|e| e.range);
        let [lo, hi] = profile
            .and_then(from)
            .or_else(|| from(&default))
            .unwrap_or([value, value]);
        let range = if pinned.contains(&field) {
            [value, value]
        } else {
            [lo.min(value), hi.max(value)]
        };
        ranges.insert(field, range);
    }
    Ok(ranges)
}

/// Parse and check a profile given as text; `file` is what errors call it. Every error
/// names the file, the line and the field: TOML syntax, an unknown table or key, a value
/// of the wrong type, a `[costs]` name that is not a cost-table field, a range that does
/// not hold its value.
pub fn parse(text: &str, file: &str) -> Result<MachineProfile, ScenarioError> {
    let src = Source::parse(file, text)?;
    let root: Table =
        toml::from_str(text).map_err(|e| super::syntax(file, text, e.span(), e.message()))?;
    let profile: MachineProfile =
        serde_path_to_error::deserialize(Value::Table(root)).map_err(|e| {
            let mut path = super::serde_path(e.path());
            let message = e.inner().message().trim().to_string();
            if let Some(missing) = message
                .strip_prefix("missing field `")
                .and_then(|m| m.strip_suffix('`'))
            {
                path.push(key(missing));
            }
            src.error(&Origin::Doc(path.clone()), show(&path), &message)
        })?;
    check_fields(&profile, &src)?;
    for (table, entries) in [("costs", &profile.costs), ("measured", &profile.measured)] {
        check_ranges(table, entries, &src)?;
    }
    Ok(profile)
}

/// Every `[costs]` name must be a field of the cost table: deserializing the values into
/// one says so in serde's words, as an unknown `[costs]` key in a scenario does.
fn check_fields(profile: &MachineProfile, src: &Source) -> Result<(), ScenarioError> {
    let values = Value::Table(profile.cost_values());
    serde_path_to_error::deserialize::<_, CostTable>(values).map_err(|e| {
        let mut path = vec![key("costs")];
        path.extend(super::serde_path(e.path()));
        let message = e.inner().message().trim().to_string();
        src.error(&Origin::Doc(path.clone()), show(&path), &message)
    })?;
    Ok(())
}

/// A range must be ordered and hold its entry's value.
fn check_ranges(
    table: &str,
    entries: &BTreeMap<String, Entry>,
    src: &Source,
) -> Result<(), ScenarioError> {
    for (name, e) in entries {
        let Some([lo, hi]) = e.range else { continue };
        let fail = |field: &str, message: String| {
            let path: Vec<Seg> = [table, name, field].into_iter().map(key).collect();
            Err(src.error(&Origin::Doc(path.clone()), show(&path), &message))
        };
        if lo > hi {
            return fail(
                "range",
                format!("[{lo}, {hi}]: the low end is above the high end"),
            );
        }
        if !(lo..=hi).contains(&e.value) {
            return fail(
                "value",
                format!("{} is outside the entry's range [{lo}, {hi}]", e.value),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The `default` profile is this table: same fields, same values.
    #[test]
    fn the_default_profile_is_the_default_table() {
        let p = builtin("default").unwrap().unwrap();
        let values: crate::sim::cost::CostTable =
            toml::Value::Table(p.cost_values()).try_into().unwrap();
        assert_eq!(values, crate::sim::cost::CostTable::default());
        let fields = toml::Table::try_from(crate::sim::cost::CostTable::default()).unwrap();
        assert_eq!(p.costs.len(), fields.len());
    }

    fn entry(value: u64) -> Entry {
        Entry {
            value,
            median: Some(value as f64 + 0.25),
            spread: Some([value as f64 - 1.0, value as f64 + 2.0]),
            mad: Some(0.5),
            range: Some([value - 1, value + 2]),
            rounds: Some(11),
            iterations: Some(11_000),
            method: Some("a test".into()),
            default: Some(4500),
        }
    }

    #[test]
    fn a_profile_survives_writing_and_reading() {
        let p = MachineProfile {
            profile: ProfileInfo {
                name: "host".into(),
                measured: "today on here".into(),
                quick: true,
                about: "a test host".into(),
            },
            costs: BTreeMap::from([("zram_compress".to_string(), entry(1234))]),
            measured: BTreeMap::from([("tcp_rtt".to_string(), entry(20_000))]),
            skipped: BTreeMap::from([("fio".to_string(), "not installed".to_string())]),
        };
        let text = p.to_toml().unwrap();
        assert!(text.contains("[costs.zram_compress]"), "{text}");
        assert_eq!(parse(&text, "p.toml").unwrap(), p);
    }

    #[test]
    fn an_entry_needs_only_its_value() {
        let p = parse(
            "[profile]\nname = \"h\"\n[costs.fault]\nvalue = 700\n",
            "p.toml",
        )
        .unwrap();
        assert_eq!(p.costs["fault"].value, 700);
        assert_eq!(p.cost_values()["fault"].as_integer(), Some(700));
    }

    /// Every shipped profile parses, is called by its name, says which machine it is,
    /// and gives every cost field a value, a range holding it and a source.
    #[test]
    fn every_shipped_profile_is_complete_with_sources_and_ranges() {
        let fields = Table::try_from(CostTable::default()).unwrap();
        for name in names() {
            let p = builtin(name)
                .unwrap()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.profile.name, name);
            assert!(!p.profile.about.is_empty(), "{name}: no about");
            for field in fields.keys() {
                let e = p.costs.get(field);
                let e = e.unwrap_or_else(|| panic!("{name}: no {field}"));
                let [lo, hi] = e
                    .range
                    .unwrap_or_else(|| panic!("{name}.{field}: no range"));
                assert!(lo <= e.value && e.value <= hi, "{name}.{field}");
                let source = e.method.as_deref().unwrap_or_default();
                assert!(source.len() > 20, "{name}.{field}: no source");
            }
            assert_eq!(p.costs.len(), fields.len(), "{name}: a field too many");
        }
    }

    #[test]
    fn names_and_paths() {
        assert!(is_name("epyc-7k62-2s") && is_name("host"));
        assert!(!is_name("host.toml") && !is_name("./host") && !is_name("/tmp/h"));
        assert!(builtin("default").is_some() && builtin("nope").is_none());
    }

    /// A profile's range replaces the default's; a field the scenario set is held; a
    /// profile entry without a range keeps the default's, stretched to its value.
    #[test]
    fn cost_ranges_come_from_the_profile_the_defaults_and_the_scenario() {
        let p = parse(
            "[profile]\nname = \"h\"\n[costs.fault]\nvalue = 700\nrange = [600, 800]\n\
             [costs.xarray]\nvalue = 400\n",
            "p.toml",
        )
        .unwrap();
        let costs = CostTable {
            fault: 700,
            xarray: 400,
            list_op: 33,
            ..CostTable::default()
        };
        let r = cost_ranges(&costs, Some(&p), &["list_op".to_string()]).unwrap();
        assert_eq!(r["fault"], [600, 800]);
        assert_eq!(r["xarray"], [20, 400]);
        assert_eq!(r["list_op"], [33, 33]);
        assert_eq!(r["lru_scan_prefetched"], [5, 40]);
        let none = cost_ranges(&CostTable::default(), None, &[]).unwrap();
        assert_eq!(none["fault"], [500, 2000]);
    }
}
