//! Where a field the guest cannot express was written: a `--set`, the variant's table,
//! or the scenario file's own line, so that a plan error reads like a scenario error
//! (`FILE:LINE: FIELD: MESSAGE`, or `--set KEY=VALUE: FIELD: MESSAGE`).

use reclaimsim::scenario::config::Scenario;
use std::ops::Range;
use toml_edit::{ImDocument, Item, TableLike};

/// One step of a field's path in the loaded scenario.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// What a field's location is found from.
pub(crate) struct Source<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
    pub(crate) variant: Option<&'a str>,
    pub(crate) sets: &'a [String],
    pub(crate) scenario: &'a Scenario,
}

/// A dotted key part, quoted when it is not a bare TOML key.
fn show_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// `workload[0].anon.pattern`, as scenario errors name fields.
pub(crate) fn show(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Index(i) => s.push_str(&format!("[{i}]")),
            Step::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(&show_key(k));
            }
        }
    }
    s
}

impl Source<'_> {
    /// The path as `--set` and variants address it: an array element by its `name`
    /// (workloads) or `path` (memcgs).
    fn named(&self, path: &[Step]) -> Vec<String> {
        let mut out = Vec::new();
        let mut array = "";
        for step in path {
            match step {
                Step::Key(k) => {
                    array = k.as_str();
                    out.push(k.clone());
                }
                Step::Index(i) => out.push(match array {
                    "workload" => {
                        (self.scenario.workloads.get(*i)).map_or(i.to_string(), |w| w.name.clone())
                    }
                    "memcg" => {
                        (self.scenario.memcgs.get(*i)).map_or(i.to_string(), |m| m.path.clone())
                    }
                    _ => i.to_string(),
                }),
            }
        }
        out
    }

    /// The error about `path`, located.
    pub(crate) fn error(&self, path: &[Step], message: &str) -> String {
        let field = show(path);
        let named = self.named(path);
        for set in self.sets.iter().rev() {
            let k = set.split_once('=').map_or(set.as_str(), |(k, _)| k.trim());
            let Ok(keys) = toml_edit::Key::parse(k) else {
                continue;
            };
            let keys: Vec<&str> = keys.iter().map(|k| k.get()).collect();
            let n = keys.len().min(named.len());
            if keys[..n] == named.iter().map(String::as_str).collect::<Vec<_>>()[..n] {
                return format!("--set {set}: {field}: {message}");
            }
        }
        let line = self.line(path, &named).unwrap_or(1);
        format!("{}:{line}: {field}: {message}", self.file)
    }

    /// The line of the field: in the variant's table when the variant sets it, else in
    /// the file's own tables, at the deepest part of the path written there.
    fn line(&self, path: &[Step], named: &[String]) -> Option<usize> {
        let doc = ImDocument::parse(self.text).ok()?;
        let line_of = |span: Range<usize>| self.text[..span.start].matches('\n').count() + 1;
        if let Some(v) = self.variant {
            let table = doc.get("variants").and_then(|t| t.get(v));
            if let Some(span) = table.and_then(|t| walk_variant(t, named)) {
                return Some(line_of(span));
            }
        }
        walk_file(doc.as_item(), path, named).map(line_of)
    }
}

/// The span of `keys` in a variant table, when the variant writes the field (the whole
/// path, or a value that replaces a part of it).
fn walk_variant(table: &Item, keys: &[String]) -> Option<Range<usize>> {
    let mut node: &dyn TableLike = table.as_table_like()?;
    for (n, k) in keys.iter().enumerate() {
        let (key, item) = node.get_key_value(k)?;
        let span = key.span().or_else(|| item.span());
        match item.as_table_like() {
            Some(t) if n + 1 < keys.len() => node = t,
            _ => return span,
        }
    }
    None
}

/// A place in the file: an item, or an element of an array of tables.
#[derive(Clone, Copy)]
enum Node<'d> {
    Item(&'d Item),
    Table(&'d toml_edit::Table),
}

impl<'d> Node<'d> {
    fn table(self) -> Option<&'d dyn TableLike> {
        match self {
            Node::Item(i) => i.as_table_like(),
            Node::Table(t) => Some(t),
        }
    }
}

/// The span of the deepest part of `path` in the file's own tables (array elements by
/// name, or by index when instances renumbered them).
fn walk_file(root: &Item, path: &[Step], named: &[String]) -> Option<Range<usize>> {
    let mut node = Node::Item(root);
    let mut span = None;
    for (n, step) in path.iter().enumerate() {
        let next = match (step, node) {
            (Step::Key(k), _) => (node.table().and_then(|t| t.get_key_value(k)))
                .map(|(key, i)| (Node::Item(i), key.span().or_else(|| i.span()))),
            (Step::Index(i), Node::Item(Item::ArrayOfTables(arr))) => {
                let by_name = arr.iter().position(|t| {
                    let id = t.get("name").or_else(|| t.get("path"));
                    id.and_then(Item::as_str) == Some(named[n].as_str())
                });
                (arr.get(by_name.unwrap_or(*i))).map(|t| (Node::Table(t), t.span()))
            }
            _ => None,
        };
        let Some((next, s)) = next else { break };
        span = s.or(span);
        node = next;
    }
    span
}
