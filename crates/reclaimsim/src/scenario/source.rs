//! The scenario text kept with its spans, to locate errors: `Source` finds the line of a
//! field and makes a located `ScenarioError` (from a value's origin, or a failed
//! deserialization), and `syntax` reports a TOML syntax error at its line.

use super::expand::Expansion;
use super::{key, show, Origin, Origins, ScenarioError, Seg};
use std::ops::Range;
use toml::{Table, Value};
use toml_edit::{ImDocument, Item, TableLike};

/// The scenario text, parsed keeping spans, to find the line of a field.
pub(super) struct Source<'a> {
    pub(super) file: &'a str,
    text: &'a str,
    pub(super) doc: ImDocument<&'a str>,
}

impl<'a> Source<'a> {
    pub(super) fn parse(file: &'a str, text: &'a str) -> Result<Self, ScenarioError> {
        let doc = ImDocument::parse(text).map_err(|e| syntax(file, text, e.span(), e.message()))?;
        Ok(Source { file, text, doc })
    }

    /// An error about the value from `origin`, called `field`.
    pub(super) fn error(&self, origin: &Origin, field: String, message: &str) -> ScenarioError {
        match origin {
            Origin::Set(k) => ScenarioError {
                file: self.file.to_string(),
                line: None,
                field: k.clone(),
                message: message.to_string(),
                from_set: true,
            },
            Origin::Doc(path) => ScenarioError {
                file: self.file.to_string(),
                line: Some(self.span(path).map_or(1, |s| line_of(self.text, s.start))),
                field,
                message: message.to_string(),
                from_set: false,
            },
        }
    }

    /// The span of the deepest part of `path` present in the file (a key, a table header,
    /// an array element).
    fn span(&self, path: &[Seg]) -> Option<Range<usize>> {
        let mut node = Node::Item(self.doc.as_item());
        let mut span = None;
        for seg in path {
            let Some((next, s)) = node.child(seg) else {
                break;
            };
            node = next;
            span = s.or(span);
        }
        span
    }

    /// Deserialize a merged document (a scenario, or the `[[expect]]` tables alone),
    /// locating a bad field by where its value came from.
    pub(super) fn deserialize<T: serde::de::DeserializeOwned>(
        &self,
        doc: Table,
        origins: &Origins,
        expansion: &Expansion,
    ) -> Result<T, ScenarioError> {
        serde_path_to_error::deserialize(Value::Table(doc)).map_err(|e| {
            let path = serde_path(e.path());
            let message = e.inner().message().trim().to_string();
            let (mut path, message) = expansion.translate(path, message);
            let origin = origins.of(&path);
            // A missing field has no line of its own: point at the table that lacks it.
            if let Some(missing) = message
                .strip_prefix("missing field `")
                .and_then(|m| m.strip_suffix('`'))
            {
                path.push(key(missing));
            }
            self.error(&origin, show(&path), &message)
        })
    }
}

/// A deserialization error's path as document segments.
pub(super) fn serde_path(path: &serde_path_to_error::Path) -> Vec<Seg> {
    path.iter()
        .filter_map(|s| match s {
            serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
            _ => None,
        })
        .collect()
}

/// A TOML syntax error; the field is the key or table header on the bad line, if any.
pub(super) fn syntax(
    file: &str,
    text: &str,
    span: Option<Range<usize>>,
    message: &str,
) -> ScenarioError {
    let line = span.map_or(1, |s| line_of(text, s.start));
    let source = text.lines().nth(line - 1).unwrap_or("").trim();
    let field = if let Some(header) = source.strip_prefix('[') {
        header.trim_matches(|c| c == '[' || c == ']' || c == ' ')
    } else {
        source.split_once('=').map_or("", |(k, _)| k.trim())
    };
    ScenarioError {
        file: file.to_string(),
        line: Some(line),
        field: field.to_string(),
        message: format!("TOML syntax: {}", message.trim().replace('\n', "; ")),
        from_set: false,
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A place in a span-keeping document.
enum Node<'d> {
    Item(&'d Item),
    Table(&'d toml_edit::Table),
    Value(&'d toml_edit::Value),
}

impl<'d> Node<'d> {
    fn table_like(&self) -> Option<&'d dyn TableLike> {
        match *self {
            Node::Item(i) => i.as_table_like(),
            Node::Table(t) => Some(t),
            Node::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
        }
    }

    /// The child at `seg` and its span (of its key, when it has one).
    fn child(&self, seg: &Seg) -> Option<(Node<'d>, Option<Range<usize>>)> {
        match seg {
            Seg::Key(k) => {
                let (k, item) = self.table_like()?.get_key_value(k)?;
                Some((Node::Item(item), k.span().or_else(|| item.span())))
            }
            Seg::Index(i) => match *self {
                Node::Item(Item::ArrayOfTables(a)) => a.get(*i).map(|t| (Node::Table(t), t.span())),
                Node::Item(Item::Value(v)) | Node::Value(v) => {
                    let v = v.as_array()?.get(*i)?;
                    Some((Node::Value(v), v.span()))
                }
                _ => None,
            },
        }
    }
}
