//! Expanding the merged document's templates before it is read: `instances = N` (and
//! `cpus_per_instance`) on `[[workload]]` and `[[memcg]]` tables, and a workload's fio
//! `jobfile` into one workload per job; `Expansion` maps each expanded element back to
//! the table of the file it came from, for errors.

use super::{
    elem, fail, named_by, named_path, show, Origins, Problem, ScenarioError, Seg, Source,
    FIO_COMMAND,
};
use crate::sim::topology::Topology;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// How `instances` expanded the arrays of tables: for each element of the expanded
/// `[[workload]]` and `[[memcg]]` arrays, the element of the file it came from and its
/// instance number.
#[derive(Default, Debug)]
pub(super) struct Expansion(BTreeMap<&'static str, Vec<(usize, Option<usize>)>>);

impl Expansion {
    /// An error found in the expanded document, about the template it came from:
    /// `workload[37].dd.size` becomes `workload[0].dd.size` "(instance 37)".
    pub(super) fn translate(&self, mut path: Vec<Seg>, message: String) -> (Vec<Seg>, String) {
        if let [Seg::Key(array), Seg::Index(i), ..] = path.as_slice() {
            if let Some(&(t, instance)) = self.0.get(array.as_str()).and_then(|m| m.get(*i)) {
                path[1] = Seg::Index(t);
                if let Some(n) = instance {
                    return (path, format!("{message} (instance {n})"));
                }
            }
        }
        (path, message)
    }
}

/// Most instances a template may have.
const MAX_INSTANCES: i64 = 4096;

/// Expands `instances = N` on `[[workload]]` and `[[memcg]]` tables into N copies, with
/// `{i}` in every string replaced by the instance number (0..N), so 104 containers need
/// one table each. `cpus_per_instance = K` on a workload gives instance i the K CPUs
/// `i*K .. i*K+K` of its `cpus` (a list or a cpulist), or of all the machine's CPUs,
/// those of its `node` only when it names one, wrapping around (so instances share CPUs
/// when there are fewer than N*K).
pub(super) fn expand_instances(doc: &mut Table) -> Result<Expansion, Problem> {
    let topology = raw_topology(doc);
    let mut expansion = Expansion::default();
    for (array, id_key) in [("memcg", "path"), ("workload", "name")] {
        let Some(Value::Array(elements)) = doc.get_mut(array) else {
            continue;
        };
        let mut out = Vec::with_capacity(elements.len());
        let mut map = Vec::with_capacity(elements.len());
        for (t, element) in std::mem::take(elements).into_iter().enumerate() {
            let Value::Table(table) = element else {
                out.push(element);
                map.push((t, None));
                continue;
            };
            let at = Element { array, id_key, t };
            match at.instances(table, topology.as_ref())? {
                Ok(copies) => {
                    map.extend((0..copies.len()).map(|i| (t, Some(i))));
                    out.extend(copies);
                }
                Err(table) => {
                    out.push(Value::Table(table));
                    map.push((t, None));
                }
            }
        }
        *elements = out;
        expansion.0.insert(array, map);
    }
    Ok(expansion)
}

/// The machine's topology as the merged document gives it, before it is read, for
/// `cpus_per_instance`: `None` when its keys are out of range (reported by check()).
fn raw_topology(doc: &Table) -> Option<Topology> {
    let machine = doc.get("machine").and_then(Value::as_table);
    let int = |k: &str| {
        machine
            .and_then(|m| m.get(k))
            .map(|v| v.as_integer().and_then(|n| u32::try_from(n).ok()))
    };
    let nodes = int("nodes").unwrap_or(Some(1))?;
    let keys = [
        int("sockets"),
        int("cores_per_socket"),
        int("threads_per_core"),
    ];
    let topology = match keys {
        [None, None, None] => Topology::flat(int("cpus").unwrap_or(Some(4))?, nodes),
        [sockets, Some(cores), threads] => Topology::new(
            sockets.unwrap_or(Some(1))?,
            cores?,
            threads.unwrap_or(Some(1))?,
            nodes,
        ),
        _ => return None,
    };
    let count = u64::from(topology.sockets)
        * u64::from(topology.cores_per_socket)
        * u64::from(topology.threads_per_core);
    let ok = (1..=64).contains(&nodes) && (1..=4096).contains(&count);
    match machine.and_then(|m| m.get("node")) {
        None => ok.then_some(topology),
        Some(tables) if ok => Some(topology.with_node_cpus(&raw_node_cpus(tables)?)),
        Some(_) => None,
    }
}

/// The CPUs of each `[[machine.node]]` as written, `None` when one does not read (the
/// check reports it).
fn raw_node_cpus(tables: &Value) -> Option<Vec<Vec<u32>>> {
    let list = |v: &Value| -> Option<Vec<u32>> {
        match v {
            Value::String(s) if s.trim().is_empty() => Some(Vec::new()),
            Value::String(s) => crate::sim::topology::parse_cpulist(s).ok(),
            Value::Array(a) => (a.iter())
                .map(|c| c.as_integer().and_then(|n| u32::try_from(n).ok()))
                .collect(),
            _ => None,
        }
    };
    let tables = tables.as_array()?;
    (1..=64).contains(&tables.len()).then_some(())?;
    tables.iter().map(|t| list(t.get("cpus")?)).collect()
}

/// Element `t` of the `[[array]]` tables, whose instances are told apart by `id_key`.
struct Element<'a> {
    array: &'a str,
    id_key: &'a str,
    t: usize,
}

impl Element<'_> {
    /// The table's `instances` copies, each with `{i}` replaced by its index and, for
    /// `cpus_per_instance`, its own slice of the CPUs (round-robin over `cpus`, or over
    /// the machine's); the table back, unchanged, when it asks for neither.
    fn instances(
        &self,
        mut table: Table,
        topology: Option<&Topology>,
    ) -> Result<Result<Vec<Value>, Table>, Problem> {
        let instances = self.count(&mut table, "instances")?;
        let per = match self.array {
            "workload" => self.count(&mut table, "cpus_per_instance")?,
            _ => None,
        };
        if instances.is_none() && per.is_none() {
            return Ok(Err(table));
        }
        let n = instances.unwrap_or(1);
        let named = (table.get(self.id_key))
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("{i}"));
        if n > 1 && !named {
            return fail(
                elem(self.array, self.t, "instances"),
                format!(
                    "{n} instances need `{{i}}` in `{}` to tell them apart",
                    self.id_key
                ),
            );
        }
        let base = self.instance_cpus(&table, topology)?;
        let mut copies = Vec::new();
        for i in 0..n {
            let mut copy = Value::Table(table.clone());
            substitute(&mut copy, &i.to_string());
            if let (Some(k), Value::Table(c), false) = (per, &mut copy, base.is_empty()) {
                let cpus = (0..k)
                    .map(|j| base[((i * k + j) as usize) % base.len()].clone())
                    .collect();
                c.insert("cpus".into(), Value::Array(cpus));
            }
            copies.push(copy);
        }
        Ok(Ok(copies))
    }

    /// The CPUs `cpus_per_instance` deals out: the workload's `cpus` (a list in its order,
    /// or a cpulist), or all the machine's CPUs, keeping those on its `node` if it has one.
    /// Nothing when the machine is out of range, which check() reports.
    fn instance_cpus(
        &self,
        table: &Table,
        topology: Option<&Topology>,
    ) -> Result<Vec<Value>, Problem> {
        let base: Vec<Value> = match (table.get("cpus"), topology) {
            (Some(Value::Array(a)), _) if !a.is_empty() => a.clone(),
            (Some(Value::String(text)), _) => crate::sim::topology::parse_cpulist(text)
                .map_err(|e| (elem(self.array, self.t, "cpus"), format!("{text:?}: {e}")))?
                .into_iter()
                .map(|c| Value::Integer(c.into()))
                .collect(),
            (_, Some(t)) => (0..t.nr_cpus()).map(|c| Value::Integer(c.into())).collect(),
            (_, None) => Vec::new(),
        };
        let node = table.get("node").and_then(Value::as_integer);
        let (Some(t), Some(node)) = (topology, node) else {
            return Ok(base);
        };
        let on_node = |v: &Value| {
            v.as_integer()
                .and_then(|c| u32::try_from(c).ok())
                .is_none_or(|c| c >= t.nr_cpus() || i64::from(t.node_of(c)) == node)
        };
        Ok(base.into_iter().filter(on_node).collect())
    }

    /// A count option, taken out of the table: 1 to MAX_INSTANCES.
    fn count(&self, table: &mut Table, field: &str) -> Result<Option<i64>, Problem> {
        match table.remove(field) {
            None => Ok(None),
            Some(Value::Integer(n)) if (1..=MAX_INSTANCES).contains(&n) => Ok(Some(n)),
            Some(v) => fail(
                elem(self.array, self.t, field),
                format!("{v}: must be an integer from 1 to {MAX_INSTANCES}"),
            ),
        }
    }
}

/// Replaces `{i}` in every string of a value.
fn substitute(v: &mut Value, i: &str) {
    match v {
        Value::String(s) if s.contains("{i}") => *s = s.replace("{i}", i),
        Value::Array(a) => a.iter_mut().for_each(|x| substitute(x, i)),
        Value::Table(t) => t.iter_mut().for_each(|(_, x)| substitute(x, i)),
        _ => {}
    }
}

/// Replaces each workload whose `fio` table is `{ jobfile = "PATH" }` by one workload
/// per job of that fio job file (`workload::jobfile`): named as the workload when the file
/// has one job, `NAME.JOB` otherwise, with the job's options as its `fio` table, and
/// `after` the previous job's workload for a job with `stonewall`. Errors in the job
/// file name it, the line and the option.
pub(super) fn expand_jobfiles(
    doc: &mut Table,
    origins: &Origins,
    src: &Source,
    expansion: &mut Expansion,
) -> Result<(), ScenarioError> {
    let Some(Value::Array(elements)) = doc.get_mut("workload") else {
        return Ok(());
    };
    let templates = expansion.0.get("workload").cloned().unwrap_or_default();
    let (mut out, mut map) = (Vec::new(), Vec::new());
    for (i, element) in std::mem::take(elements).into_iter().enumerate() {
        let entry = templates.get(i).copied().unwrap_or((i, None));
        let Some(fio) = element.get("fio").and_then(Value::as_table) else {
            out.push(element);
            map.push(entry);
            continue;
        };
        let Some(jobfile) = fio.get("jobfile") else {
            out.push(element);
            map.push(entry);
            continue;
        };
        let field = |f: &str| expansion.translate(elem("workload", i, f), String::new()).0;
        let fail = |f: &str, message: &str| {
            let path = field(f);
            src.error(&origins.of(&path), show(&path), message)
        };
        if let Some(other) = fio.keys().find(|k| *k != "jobfile") {
            let message = "with jobfile, the job's options go in the job file";
            return Err(fail(&format!("fio.{other}"), message));
        }
        let Value::String(name) = jobfile else {
            return Err(fail(
                "fio.jobfile",
                "must be the job file's path (a string)",
            ));
        };
        let jobs = read_jobfile(name, &field("fio.jobfile"), origins, src)?;
        let base = element.get("name").and_then(Value::as_str).unwrap_or("");
        let names: Vec<String> = match jobs.len() {
            1 => vec![base.to_string()],
            _ => jobs.iter().map(|j| format!("{base}.{}", j.name)).collect(),
        };
        for (k, job) in jobs.iter().enumerate() {
            let mut copy = element.clone();
            if let Value::Table(t) = &mut copy {
                t.insert("fio".into(), Value::Table(job.options.clone()));
                t.insert("name".into(), Value::String(names[k].clone()));
                if job.stonewall && k > 0 {
                    t.insert("after".into(), Value::String(names[k - 1].clone()));
                }
            }
            out.push(copy);
            map.push(entry);
        }
    }
    *elements = out;
    expansion.0.insert("workload", map);
    Ok(())
}

/// The jobs of the job file `name` that the field at `field` gives (see `named_path`).
fn read_jobfile(
    name: &str,
    field: &[Seg],
    origins: &Origins,
    src: &Source,
) -> Result<Vec<crate::workload::jobfile::Job>, ScenarioError> {
    let origin = origins.of(field);
    let path = named_path(name, &origin, src);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        let message = format!("cannot read fio job file {}: {e}", path.display());
        src.error(&origin, show(field), &message)
    })?;
    // `reclaimsim fio JOBFILE` names the job file on its command line, not in a file.
    let by = match named_by(&origin, src) {
        by if by == FIO_COMMAND => String::new(),
        by => format!(" (the fio job file named by {by})"),
    };
    crate::workload::jobfile::parse(&text).map_err(|e| ScenarioError {
        file: path.display().to_string(),
        line: Some(e.line),
        field: e.option,
        message: format!("{}{by}", e.message),
        from_set: false,
    })
}
