//! Loading scenario files: `[variants.NAME]` tables, `--set` overrides, `--seed`, and
//! checks whose errors name the file, the line and the field.
//!
//! A variant or a `--set` is deep-merged into the document: tables merge key by key, a
//! scalar or an array replaces. An array of tables (`[[workload]]`, `[[memcg]]`) can be
//! addressed by an element's `name` or `path`: `workload.fio.fio.numjobs = 8` changes the
//! workload named "fio", `memcg."/a".max = "1GiB"` the memcg with path "/a".

pub mod agent;
mod check;
pub mod config;
pub mod event;
mod expand;
pub mod expect;
mod host;
mod merge;
pub mod oomd;
pub mod profile;
mod scale;
mod source;

use check::{check_python_policy, scale_and_check};
use expand::{expand_instances, expand_jobfiles, Expansion};
pub use host::estimate_host_bytes;
use host::host_available;
use merge::{parse_set, Merger, Origin, Origins};
use source::{serde_path, syntax, Source};

use crate::scenario::config::Scenario;
use crate::scenario::expect::Expectation;
use crate::workload::WorkloadOptions;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::{Table, Value};
use toml_edit::Item;

/// A scenario file, loaded and checked.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    pub path: PathBuf,
    /// The file without its `[variants]`, with `--set` and `--seed` applied.
    pub base: Scenario,
    /// Each `[variants.NAME]` in file order, merged into the base (then `--set` and
    /// `--seed`); `[("base", base)]` when the file has no variants.
    pub variants: Vec<(String, Scenario)>,
    /// The `[[expect]]` tables: changes between variants a measurement found.
    pub expects: Vec<Expectation>,
    /// The variants whose `backend = "kernel"`: the CLI runs them on a real kernel in
    /// QEMU (`reclaimsim kernel`), never on the model. Their `Scenario` is merged and
    /// checked as any variant's; the model never sees the key.
    pub kernel_variants: Vec<KernelVariant>,
}

/// A variant with `backend = "kernel"`, and where the file says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelVariant {
    pub name: String,
    /// The line of its `backend` key.
    pub line: usize,
}

/// A bad scenario: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    /// The field as a path (`machine.memory`, `workload[0].anon.size`); for a value that
    /// came from `--set`, the key as given there.
    pub field: String,
    pub message: String,
    /// The bad value came from `--set`, not from the file.
    pub from_set: bool,
}

impl LoadedScenario {
    /// The variants the expectations compare, in file order: all `validate` must run.
    pub fn expected_variants(&self) -> Vec<&(String, Scenario)> {
        self.variants
            .iter()
            .filter(|(n, _)| self.expects.iter().any(|e| e.from == *n || e.to == *n))
            .collect()
    }

    /// Whether the variant `name` runs on a real kernel (`backend = "kernel"`).
    pub fn is_kernel(&self, name: &str) -> bool {
        self.kernel_variants.iter().any(|k| k.name == name)
    }

    /// The error for a command that cannot run the kernel variant `name` (`what` says
    /// which, and what to do instead), located at its `backend` key.
    pub fn kernel_variant_error(&self, name: &str, what: &str) -> ScenarioError {
        let line = (self.kernel_variants.iter())
            .find(|k| k.name == name)
            .map(|k| k.line);
        ScenarioError {
            file: self.path.display().to_string(),
            line,
            field: format!("variants.{}.backend", show(&[key(name)])),
            message: format!(
                "variant \"{name}\" runs on a real kernel (backend = \"kernel\"): {what}"
            ),
            from_set: false,
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.from_set {
            return write!(f, "--set {}: {}", self.field, self.message);
        }
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Read, merge and check a scenario file.
pub fn load(
    path: &Path,
    sets: &[String],
    seed: Option<u64>,
) -> Result<LoadedScenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: None,
        field: String::new(),
        message: format!("cannot read: {e}"),
        from_set: false,
    })?;
    let mut loaded = parse(&text, &file, sets, seed)?;
    loaded.path = path.to_path_buf();
    Ok(loaded)
}

/// The scenario `reclaimsim fio JOBFILE --memory SIZE` runs: a machine of `memory`
/// (the model's defaults otherwise) running the job file's jobs, one workload each
/// (`expand_jobfiles`), with `--set` and `--seed` applied as for a scenario file.
pub fn load_jobfile(
    jobfile: &Path,
    memory: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<LoadedScenario, ScenarioError> {
    crate::units::parse_size(memory).map_err(|message| ScenarioError {
        file: format!("--memory {memory}"),
        line: None,
        field: String::new(),
        message,
        from_set: false,
    })?;
    let quote = |s: &str| Value::String(s.to_string()).to_string();
    let stem = jobfile
        .file_stem()
        .map_or("fio".into(), |s| s.to_string_lossy());
    let text = format!(
        "name = {}\n[machine]\nmemory = {}\n[[workload]]\nname = \"fio\"\n\
         fio = {{ jobfile = {} }}\n",
        quote(&stem),
        quote(memory),
        quote(&jobfile.to_string_lossy())
    );
    // A name without a directory: the job file's path is taken as given.
    let mut loaded =
        parse(&text, FIO_COMMAND, sets, seed).map_err(|e| blame_fio_command(e, jobfile, memory))?;
    loaded.path = jobfile.to_path_buf();
    Ok(loaded)
}

/// The name of the scenario text `load_jobfile` writes: no file, so not for errors.
const FIO_COMMAND: &str = "reclaimsim-fio";

/// An error `load_jobfile`'s scenario text has is about what the command line gave:
/// `machine.memory` about `--memory SIZE`, the rest about the job file.
fn blame_fio_command(mut e: ScenarioError, jobfile: &Path, memory: &str) -> ScenarioError {
    if e.file != FIO_COMMAND || e.from_set {
        return e;
    }
    e.file = match e.field.as_str() {
        "machine.memory" => format!("--memory {memory}"),
        _ => jobfile.display().to_string(),
    };
    e.line = None;
    e.field = String::new();
    e
}

/// Merge and check a scenario given as text; `file_name` is what errors call it.
pub fn parse(
    text: &str,
    file_name: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<LoadedScenario, ScenarioError> {
    parse_with(text, file_name, sets, seed, false)
}

/// `parse` for the Python package, whose `policy=` runs a scenario's
/// `kernel.plugin.name = "python"` (which `parse`, the command line's, refuses).
pub fn parse_python(
    text: &str,
    file_name: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<LoadedScenario, ScenarioError> {
    parse_with(text, file_name, sets, seed, true)
}

fn parse_with(
    text: &str,
    file_name: &str,
    sets: &[String],
    seed: Option<u64>,
    python_policy: bool,
) -> Result<LoadedScenario, ScenarioError> {
    let src = Source::parse(file_name, text)?;
    let mut root: Table =
        toml::from_str(text).map_err(|e| syntax(file_name, text, e.span(), e.message()))?;
    // Expectations are about variants, not part of one: checked once, after them.
    let expect = root.remove("expect");
    let mut variants = variant_tables(&src, root.remove("variants"))?;
    let kernel_variants = take_backends(&src, &root, &mut variants)?;
    let sets = sets
        .iter()
        .map(|s| parse_set(file_name, s))
        .collect::<Result<Vec<_>, _>>()?;
    let builder = Builder {
        src: &src,
        root: &root,
        seed,
        available: host_available(),
        python_policy,
    };
    // An error the file alone does not have comes from the `--set`s that cause it.
    let build = |variant: Option<(&str, &Table)>| {
        builder.build(variant, &sets).map_err(|e| {
            blame_sets(e, file_name, &sets, |without| {
                builder.build(variant, without).is_ok()
            })
        })
    };
    let base = build(None)?;
    let variants = if variants.is_empty() {
        vec![("base".to_string(), base.clone())]
    } else {
        variants
            .iter()
            .map(|(name, t)| Ok((name.clone(), build(Some((name, t)))?)))
            .collect::<Result<_, ScenarioError>>()?
    };
    let expects = load_expects(&src, expect, &variants)?;
    Ok(LoadedScenario {
        path: PathBuf::from(file_name),
        base,
        variants,
        expects,
        kernel_variants,
    })
}

/// Takes each variant's `backend` key out of its table (the model never sees it): "model"
/// (the default) or "kernel"; the variants on a kernel, with the line of their key. A
/// `backend` outside a variant, or another value, is an error at the key.
fn take_backends(
    src: &Source,
    root: &Table,
    variants: &mut [(String, Table)],
) -> Result<Vec<KernelVariant>, ScenarioError> {
    if root.contains_key("backend") {
        return Err(src.error(
            &Origin::Doc(vec![key("backend")]),
            "backend".into(),
            "belongs in a [variants.NAME] table (the base runs on the model; \
             `reclaimsim kernel` runs any variant on a kernel)",
        ));
    }
    let mut out = Vec::new();
    for (name, table) in variants.iter_mut() {
        let path = vec![key("variants"), key(name), key("backend")];
        match table.remove("backend") {
            None => {}
            Some(Value::String(b)) if b == "model" => {}
            Some(Value::String(b)) if b == "kernel" => {
                let e = src.error(&Origin::Doc(path), String::new(), "");
                out.push(KernelVariant {
                    name: name.clone(),
                    line: e.line.unwrap_or(1),
                });
            }
            Some(v) => {
                let message = format!("{v}: must be \"model\" (the default) or \"kernel\"");
                return Err(src.error(&Origin::Doc(path.clone()), show(&path), &message));
            }
        }
    }
    Ok(out)
}

/// The `[variants.NAME]` tables, in the file's order.
fn variant_tables(
    src: &Source,
    variants: Option<Value>,
) -> Result<Vec<(String, Table)>, ScenarioError> {
    let mut table = match variants {
        None => return Ok(Vec::new()),
        Some(Value::Table(table)) => table,
        Some(_) => {
            return Err(src.error(
                &Origin::Doc(vec![key("variants")]),
                "variants".into(),
                "must be a table of variant tables",
            ))
        }
    };
    // toml::Table is sorted; the file order comes from the span-keeping document.
    let names: Vec<String> = (src.doc.get("variants"))
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for name in names {
        match table.remove(&name) {
            Some(Value::Table(t)) => out.push((name, t)),
            _ => {
                let path = [key("variants"), key(&name)];
                return Err(src.error(
                    &Origin::Doc(path.to_vec()),
                    show(&path),
                    "a variant must be a table",
                ));
            }
        }
    }
    Ok(out)
}

/// Builds a scenario from the file's tables, a variant's and `--set`s.
struct Builder<'a> {
    src: &'a Source<'a>,
    root: &'a Table,
    seed: Option<u64>,
    available: Option<u64>,
    /// Whether `kernel.plugin.name = "python"` may run (the Python package's loads).
    python_policy: bool,
}

impl Builder<'_> {
    /// The file with `variant` and `sets` merged over it, its profile applied, its
    /// instances and job files expanded, read and checked; errors name where the field
    /// came from.
    fn build(
        &self,
        variant: Option<(&str, &Table)>,
        sets: &[(String, Table)],
    ) -> Result<Scenario, ScenarioError> {
        let src = self.src;
        let mut doc = self.root.clone();
        let mut origins = Origins::default();
        if let Some((name, table)) = variant {
            let mut from = vec![key("variants"), key(name)];
            Merger {
                origins: &mut origins,
                set: None,
            }
            .merge(&mut doc, table, &mut Vec::new(), &mut from)
            .map_err(|(origin, field, msg)| src.error(&origin, field, &msg))?;
        }
        for (set_key, table) in sets {
            Merger {
                origins: &mut origins,
                set: Some(set_key),
            }
            .merge(&mut doc, table, &mut Vec::new(), &mut Vec::new())
            .map_err(|(origin, field, msg)| src.error(&origin, field, &msg))?;
        }
        let in_variant = |mut e: ScenarioError| {
            if let Some((name, _)) = variant {
                e.message = format!("{} (in variant \"{name}\")", e.message);
            }
            e
        };
        let (profile, pinned) = apply_profile(&mut doc, &origins, src).map_err(in_variant)?;
        let mut expansion = expand_instances(&mut doc)
            .map_err(|(path, msg)| in_variant(src.error(&origins.of(&path), show(&path), &msg)))?;
        expand_jobfiles(&mut doc, &origins, src, &mut expansion).map_err(in_variant)?;
        let mut scenario: Scenario =
            (src.deserialize(doc, &origins, &expansion)).map_err(in_variant)?;
        if let Some(seed) = self.seed {
            scenario.seed = seed;
        }
        resolve_trace_paths(&mut scenario, src.file, |i| {
            let path = (expansion.translate(elem("workload", i, "trace.path"), String::new())).0;
            matches!(origins.of(&path), Origin::Set(_))
        });
        scenario.cost_ranges =
            profile::cost_ranges(&scenario.costs, profile.as_ref(), &pinned).map_err(in_variant)?;
        let checked = scale_and_check(&mut scenario, self.available);
        let checked = checked.and_then(|()| check_python_policy(&scenario, self.python_policy));
        checked.map_err(|(path, msg)| {
            let (path, msg) = expansion.translate(path, msg);
            in_variant(src.error(&origins.of(&path), show(&path), &msg))
        })?;
        Ok(scenario)
    }
}

/// An error about a field of the file (`machine.cpus`) that the `--set`s cause (the file
/// alone, `passes(&[])`, has none: `--set machine.nodes=8` with `cpus = 4`) is about
/// those `--set`s: the ones without which it passes, or all of them. Its `field` names
/// their keys (`, `-separated), its message the field and line it was found at. An
/// error in another file (a machine profile) stays as it is.
fn blame_sets(
    e: ScenarioError,
    file: &str,
    sets: &[(String, Table)],
    passes: impl Fn(&[(String, Table)]) -> bool,
) -> ScenarioError {
    if e.from_set || e.file != file || sets.is_empty() || !passes(&[]) {
        return e;
    }
    let mut culprits: Vec<&str> = (0..sets.len())
        .filter(|&i| {
            let others: Vec<_> = (sets.iter().enumerate())
                .filter(|&(j, _)| j != i)
                .map(|(_, s)| s.clone())
                .collect();
            passes(&others)
        })
        .map(|i| sets[i].0.as_str())
        .collect();
    if culprits.is_empty() {
        culprits = sets.iter().map(|(k, _)| k.as_str()).collect();
    }
    let at = match e.line {
        Some(line) => format!("{}:{line}", e.file),
        None => e.file.clone(),
    };
    let message = match e.field.as_str() {
        "" => format!("{} (at {at})", e.message),
        field => format!("{field}: {} (at {at})", e.message),
    };
    ScenarioError {
        file: e.file,
        line: None,
        field: culprits.join(", "),
        message,
        from_set: true,
    }
}

/// The file's `[[expect]]` tables (the `expect` value), checked against the variants.
fn load_expects(
    src: &Source,
    expect: Option<Value>,
    variants: &[(String, Scenario)],
) -> Result<Vec<Expectation>, ScenarioError> {
    let Some(expect) = expect else {
        return Ok(Vec::new());
    };
    let doc = Table::from_iter([("expect".to_string(), expect)]);
    let file = src.deserialize(doc, &Origins::default(), &Expansion::default())?;
    let names: Vec<&str> = variants.iter().map(|(n, _)| n.as_str()).collect();
    expect::check(file, &names)
        .map_err(|(path, msg)| src.error(&Origin::Doc(path.clone()), show(&path), &msg))
}

/// Loads the `[machine] profile` the merged document names and puts its `[costs]` values
/// under the document's `[costs]` where the scenario sets none, so a profile replaces the
/// defaults and the scenario's own `[costs]` still win. Returns the profile (None without
/// one) and the `[costs]` fields the scenario set itself, which `profile::cost_ranges`
/// holds fixed. A value that is not a string is left for deserializing to report.
fn apply_profile(
    doc: &mut Table,
    origins: &Origins,
    src: &Source,
) -> Result<(Option<profile::MachineProfile>, Vec<String>), ScenarioError> {
    let pinned: Vec<String> = match doc.get("costs") {
        Some(Value::Table(t)) => t.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let Some(Value::String(name)) = doc.get("machine").and_then(|m| m.get("profile")) else {
        return Ok((None, pinned));
    };
    let profile = read_profile(name, origins, src)?;
    let costs = doc
        .entry("costs")
        .or_insert_with(|| Value::Table(Table::new()));
    if let Value::Table(costs) = costs {
        for (k, v) in profile.cost_values() {
            costs.entry(k).or_insert(v);
        }
    }
    Ok((Some(profile), pinned))
}

/// The profile `machine.profile = name` names: a shipped one (`profile::is_name`), or a
/// file. A path written in the scenario is relative to the scenario file; one given with
/// `--set` is relative to the current directory, as any path on a command line. An
/// unknown name is reported at `machine.profile` with the names there are.
fn read_profile(
    name: &str,
    origins: &Origins,
    src: &Source,
) -> Result<profile::MachineProfile, ScenarioError> {
    let field = at("machine.profile");
    let origin = origins.of(&field);
    let by = named_by(&origin, src);
    let named = |mut e: ScenarioError| {
        e.message = format!("{} (the machine profile named by {by})", e.message);
        e
    };
    if profile::is_name(name) {
        return match profile::builtin(name) {
            Some(p) => p.map_err(named),
            None => {
                let message = format!(
                    "no machine profile named \"{name}\" (there are: {}; a path to a profile \
                     file has a '/' or ends in .toml)",
                    profile::names().join(", ")
                );
                Err(src.error(&origin, show(&field), &message))
            }
        };
    }
    let path = named_path(name, &origin, src);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let message = format!("cannot read machine profile {}: {e}", path.display());
        src.error(&origin, show(&field), &message)
    })?;
    profile::parse(&text, &path.display().to_string()).map_err(named)
}

/// Who named a file: the scenario file, or `--set KEY`.
fn named_by(origin: &Origin, src: &Source) -> String {
    match origin {
        Origin::Set(key) => format!("--set {key}"),
        Origin::Doc(_) => src.file.to_string(),
    }
}

/// The path of a file a field names: relative to the scenario file when written in it,
/// to the current directory when given with `--set` (as any path on a command line).
fn named_path(name: &str, origin: &Origin, src: &Source) -> PathBuf {
    match origin {
        Origin::Set(_) => PathBuf::from(name),
        Origin::Doc(_) => Path::new(src.file)
            .parent()
            .unwrap_or(Path::new(""))
            .join(name),
    }
}

/// Makes the `trace.path`s the file writes relative to the file's directory; one given
/// with `--set` stays relative to the current directory, as `machine.profile` does.
fn resolve_trace_paths(s: &mut Scenario, file: &str, from_set: impl Fn(usize) -> bool) {
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    for (i, w) in s.workloads.iter_mut().enumerate() {
        if let Some(t) = &mut w.trace {
            if t.path.is_relative() && !from_set(i) {
                t.path = dir.join(&t.path);
            }
        }
    }
}

/// One step of a path through a document.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Seg {
    Key(String),
    Index(usize),
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// `machine.memory`, `workload[0].cpus[1]`, `variants.big.memcg."/a"`.
fn show(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                if !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    s.push_str(k);
                } else {
                    s.push_str(&format!("{k:?}"));
                }
            }
        }
    }
    s
}

/// A semantic problem: the field (merged path) and what is wrong with it.
type Problem = (Vec<Seg>, String);

/// A workload's table name (`fio`, `memcached`, ...), as errors and estimates name it.
fn kind(o: &WorkloadOptions) -> &'static str {
    match o {
        WorkloadOptions::Fio(_) => "fio",
        WorkloadOptions::Memcached(_) => "memcached",
        WorkloadOptions::Dd(_) => "dd",
        WorkloadOptions::PageFault3(_) => "page_fault3",
        WorkloadOptions::Anon(_) => "anon",
        WorkloadOptions::Tabs(_) => "tabs",
        WorkloadOptions::Trace(_) => "trace",
    }
}

fn at(fields: &str) -> Vec<Seg> {
    fields.split('.').map(key).collect()
}

/// `array[i].fields`, the fields dotted keys, each with any `[n]` indices after it
/// (`ruleset[0].detectors[1][0].threshold`).
fn elem(array: &str, i: usize, fields: &str) -> Vec<Seg> {
    let mut p = vec![key(array), Seg::Index(i)];
    for f in fields.split('.').filter(|f| !f.is_empty()) {
        let mut parts = f.split('[');
        p.push(key(parts.next().unwrap_or_default()));
        for n in parts {
            match n.trim_end_matches(']').parse() {
                Ok(n) => p.push(Seg::Index(n)),
                Err(_) => p.push(key(n)),
            }
        }
    }
    p
}

fn fail<T>(path: Vec<Seg>, message: impl Into<String>) -> Result<T, Problem> {
    Err((path, message.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_show_as_written() {
        assert_eq!(
            show(&[key("workload"), Seg::Index(2), key("cpus"), Seg::Index(0)]),
            "workload[2].cpus[0]"
        );
        assert_eq!(
            show(&[key("memcg"), key("/a"), key("max")]),
            "memcg.\"/a\".max"
        );
    }
}
