//! Merging a variant or a `--set` into the scenario document: a deep merge (tables key
//! by key, an array of tables by its elements' `name` or `path`), `parse_set` for
//! `KEY=VALUE`, and `Origins`, which records where each merged value came from.

use super::{key, show, ScenarioError, Seg};
use std::collections::BTreeMap;
use toml::{Table, Value};

/// Where a value of the merged document came from.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Origin {
    /// This path in the file.
    Doc(Vec<Seg>),
    /// The `--set` with this key.
    Set(String),
}

/// Where the values of a merged document came from: the values a variant or a `--set`
/// put in, by merged path; everything else is at the same path in the file.
#[derive(Default, Debug)]
pub(super) struct Origins(BTreeMap<Vec<Seg>, Origin>);

impl Origins {
    fn record(&mut self, at: &[Seg], origin: Origin) {
        self.0.retain(|k, _| !k.starts_with(at));
        self.0.insert(at.to_vec(), origin);
    }

    /// The origin of the value at `path`: the nearest override at or above it, else the file.
    pub(super) fn of(&self, path: &[Seg]) -> Origin {
        for n in (0..=path.len()).rev() {
            match self.0.get(&path[..n]) {
                Some(Origin::Doc(p)) => {
                    return Origin::Doc(p.iter().chain(&path[n..]).cloned().collect())
                }
                Some(set) => return set.clone(),
                None => {}
            }
        }
        Origin::Doc(path.to_vec())
    }
}

/// A merge failure: where the offending value came from, the field, the message.
pub(super) type MergeError = (Origin, String, String);

/// Deep-merges one overlay (a variant table or a `--set`) into a document.
pub(super) struct Merger<'a> {
    pub(super) origins: &'a mut Origins,
    /// The `--set` key, when the overlay is one.
    pub(super) set: Option<&'a str>,
}

impl Merger<'_> {
    fn origin(&self, from: &[Seg]) -> Origin {
        match self.set {
            Some(k) => Origin::Set(k.to_string()),
            None => Origin::Doc(from.to_vec()),
        }
    }

    /// Merge `src` into `dst`; `at` is the merged path, `from` the overlay's path in the file.
    pub(super) fn merge(
        &mut self,
        dst: &mut Table,
        src: &Table,
        at: &mut Vec<Seg>,
        from: &mut Vec<Seg>,
    ) -> Result<(), MergeError> {
        for (k, value) in src {
            at.push(key(k));
            from.push(key(k));
            match (dst.get_mut(k), value) {
                (Some(Value::Table(d)), Value::Table(s)) => self.merge(d, s, at, from)?,
                (Some(Value::Array(d)), Value::Table(s)) => {
                    self.merge_elements(k, d, s, at, from)?
                }
                _ => {
                    dst.insert(k.clone(), value.clone());
                    self.origins.record(at, self.origin(from));
                }
            }
            at.pop();
            from.pop();
        }
        Ok(())
    }

    /// Merge `{ NAME = table }` entries into the elements of an array of tables named
    /// `array` whose `name` (or `path`) is NAME.
    fn merge_elements(
        &mut self,
        array: &str,
        dst: &mut [Value],
        src: &Table,
        at: &mut Vec<Seg>,
        from: &mut Vec<Seg>,
    ) -> Result<(), MergeError> {
        for (id, value) in src {
            from.push(key(id));
            let fail = |this: &Self, msg: String| (this.origin(from), show(from), msg);
            let found = dst.iter_mut().enumerate().find_map(|(i, e)| match e {
                Value::Table(t)
                    if t.get("name")
                        .or_else(|| t.get("path"))
                        .and_then(Value::as_str)
                        == Some(id) =>
                {
                    Some((i, t))
                }
                _ => None,
            });
            let Some((i, element)) = found else {
                return Err(fail(self, format!("no [[{array}]] named \"{id}\"")));
            };
            let Value::Table(s) = value else {
                return Err(fail(
                    self,
                    format!(
                        "must be a table of fields to change in the [[{array}]] named \"{id}\""
                    ),
                ));
            };
            at.push(Seg::Index(i));
            self.merge(element, s, at, from)?;
            at.pop();
            from.pop();
        }
        Ok(())
    }
}

/// Parse `KEY=VALUE` into its key and the one-key overlay it stands for. VALUE is a TOML
/// value, or else a string.
pub(super) fn parse_set(file: &str, set: &str) -> Result<(String, Table), ScenarioError> {
    let err = |field: &str, message: String| ScenarioError {
        file: file.to_string(),
        line: None,
        field: field.to_string(),
        message,
        from_set: true,
    };
    // The argument as written names a --set without a key (quoted when blank).
    let written = if set.trim().is_empty() {
        format!("{set:?}")
    } else {
        set.to_string()
    };
    let Some((k, v)) = set.split_once('=') else {
        return Err(err(&written, "expected KEY=VALUE".into()));
    };
    let k = k.trim();
    if k.is_empty() {
        return Err(err(
            &written,
            "no KEY before the `=` (expected KEY=VALUE)".into(),
        ));
    }
    let keys = toml_edit::Key::parse(k).map_err(|_| {
        err(
            k,
            "not a dotted key (quote parts that contain dots or slashes: memcg.\"/a\".max)".into(),
        )
    })?;
    let v = v.trim();
    let value = toml::from_str::<Table>(&format!("v = {v}"))
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(v.to_string()));
    let Some((last, parents)) = keys.split_last() else {
        return Err(err(k, "empty key".into()));
    };
    let mut table = Table::from_iter([(last.get().to_string(), value)]);
    for part in parents.iter().rev() {
        table = Table::from_iter([(part.get().to_string(), Value::Table(table))]);
    }
    Ok((k.to_string(), table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::at;

    fn table(text: &str) -> Table {
        toml::from_str(text).expect("test TOML")
    }

    fn merge(base: &str, overlay: &str) -> Result<(Table, Origins), MergeError> {
        let mut doc = table(base);
        let mut origins = Origins::default();
        let mut from = vec![key("variants"), key("v")];
        Merger {
            origins: &mut origins,
            set: None,
        }
        .merge(&mut doc, &table(overlay), &mut Vec::new(), &mut from)?;
        Ok((doc, origins))
    }

    const BASE: &str = r#"
        name = "t"
        [machine]
        memory = "1GiB"
        cpus = 4
        [[memcg]]
        path = "/a"
        max = "512MiB"
        [[workload]]
        name = "fio"
        cpus = [0, 1]
        fio = { numjobs = 1, rw = "randread" }
        [[workload]]
        name = "kv"
        memcached = { threads = 2 }
    "#;

    #[test]
    fn tables_merge_and_scalars_replace() {
        let (doc, _) = merge(BASE, "machine.cpus = 8\nworkload.fio.cpus = [3]").unwrap();
        assert_eq!(doc["machine"]["memory"].as_str(), Some("1GiB"));
        assert_eq!(doc["machine"]["cpus"].as_integer(), Some(8));
        assert_eq!(doc["workload"][0]["cpus"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn arrays_of_tables_are_addressed_by_name_or_path() {
        let (doc, origins) = merge(
            BASE,
            "[workload.kv.memcached]\nthreads = 8\n[memcg.\"/a\"]\nmax = \"1GiB\"",
        )
        .unwrap();
        assert_eq!(
            doc["workload"][1]["memcached"]["threads"].as_integer(),
            Some(8)
        );
        assert_eq!(doc["workload"][0]["fio"]["rw"].as_str(), Some("randread"));
        assert_eq!(doc["memcg"][0]["max"].as_str(), Some("1GiB"));
        let path = [
            key("workload"),
            Seg::Index(1),
            key("memcached"),
            key("threads"),
        ];
        assert_eq!(
            origins.of(&path),
            Origin::Doc(at("variants.v.workload.kv.memcached.threads"))
        );
        let untouched = [key("workload"), Seg::Index(0), key("fio"), key("rw")];
        assert_eq!(origins.of(&untouched), Origin::Doc(untouched.to_vec()));
    }

    #[test]
    fn an_array_given_replaces_the_array() {
        let (doc, origins) = merge(BASE, "[[workload]]\nname = \"only\"").unwrap();
        assert_eq!(doc["workload"].as_array().map(Vec::len), Some(1));
        let path = [key("workload"), Seg::Index(0), key("name")];
        assert_eq!(
            origins.of(&path),
            Origin::Doc(vec![
                key("variants"),
                key("v"),
                key("workload"),
                Seg::Index(0),
                key("name")
            ])
        );
    }

    #[test]
    fn a_missing_element_is_named() {
        let (origin, field, message) = merge(BASE, "workload.nope.fio.numjobs = 2").unwrap_err();
        assert_eq!(origin, Origin::Doc(at("variants.v.workload.nope")));
        assert_eq!(field, "variants.v.workload.nope");
        assert!(message.contains("\"nope\""), "{message}");
    }

    #[test]
    fn a_later_override_replaces_the_origins_below_it() {
        let mut origins = Origins::default();
        origins.record(
            &at("machine.cpus"),
            Origin::Doc(at("variants.v.machine.cpus")),
        );
        origins.record(&at("machine"), Origin::Set("machine".into()));
        assert_eq!(
            origins.of(&at("machine.cpus")),
            Origin::Set("machine".into())
        );
    }

    #[test]
    fn set_values_are_toml_or_strings() {
        let (k, t) = parse_set("f", "workload.fio.fio.numjobs=8").unwrap();
        assert_eq!(k, "workload.fio.fio.numjobs");
        assert_eq!(t["workload"]["fio"]["fio"]["numjobs"].as_integer(), Some(8));
        let (_, t) = parse_set("f", "machine.memory = 8GiB").unwrap();
        assert_eq!(t["machine"]["memory"].as_str(), Some("8GiB"));
        let (_, t) = parse_set("f", "memcg.\"/a\".max=\"1GiB\"").unwrap();
        assert_eq!(t["memcg"]["/a"]["max"].as_str(), Some("1GiB"));
        assert!(parse_set("f", "no-equals").unwrap_err().from_set);
        assert!(parse_set("f", "a..b=1").is_err());
    }
}
