//! `reclaimsim._core`: the Rust side of the Python package. It loads scenarios, runs them
//! (without the GIL) and hands back the library's own results JSON, which the package's
//! Python layer turns into pandas DataFrames. No model logic lives here.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rayon::prelude::*;
use reclaimsim::engine::{
    AgentView, ControlWrite, Controller, ExternalAgent, RunOptions, SimError,
};
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario::config::Scenario;
use reclaimsim::scenario::{self, LoadedScenario, ScenarioError};
use std::sync::{Arc, Mutex};
use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value};

/// Why a call failed, before it becomes a Python exception (made with the GIL held).
enum Failure {
    Scenario(ScenarioError),
    Run(String),
    /// An agent's write that cannot be made (`SimError::Agent`).
    Agent(String),
    /// The agent function raised: its exception, raised again as it was.
    Raised(PyErr),
}

impl Failure {
    fn into_py(self, py: Python<'_>) -> PyErr {
        let made = match self {
            Failure::Scenario(e) => scenario_error(py, &e),
            Failure::Run(msg) => error_class(py, "RunError").and_then(|c| c.call1((msg,))),
            Failure::Agent(msg) => error_class(py, "AgentError").and_then(|c| c.call1((msg,))),
            Failure::Raised(e) => return e,
        };
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    }
}

/// A class of `reclaimsim._errors`.
fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("reclaimsim._errors")?.getattr(name)
}

/// `reclaimsim.ScenarioError(message, file=, line=, field=, detail=, from_set=)`.
fn scenario_error<'py>(py: Python<'py>, e: &ScenarioError) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("file", &e.file)?;
    kwargs.set_item("line", e.line)?;
    kwargs.set_item("field", &e.field)?;
    kwargs.set_item("detail", &e.message)?;
    kwargs.set_item("from_set", e.from_set)?;
    error_class(py, "ScenarioError")?.call((e.to_string(),), Some(&kwargs))
}

fn load(
    text: &str,
    file: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<LoadedScenario, Failure> {
    scenario::parse(text, file, sets, seed).map_err(Failure::Scenario)
}

/// Load and check a scenario: its name, seed and variant names (`["base"]` without
/// variants). Nothing runs.
#[pyfunction]
#[pyo3(signature = (text, file, sets, seed=None))]
fn inspect(
    py: Python<'_>,
    text: &str,
    file: &str,
    sets: Vec<String>,
    seed: Option<u64>,
) -> PyResult<(String, u64, Vec<String>)> {
    let loaded = py
        .detach(|| load(text, file, &sets, seed))
        .map_err(|f| f.into_py(py))?;
    let names = loaded.variants.iter().map(|(n, _)| n.clone()).collect();
    Ok((loaded.base.name, loaded.base.seed, names))
}

/// Run the base scenario, or one variant, as `reclaimsim run` does: its results JSON.
#[pyfunction]
#[pyo3(signature = (text, file, sets, seed=None, variant=None, check=false, agent=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: &str,
    file: &str,
    sets: Vec<String>,
    seed: Option<u64>,
    variant: Option<&str>,
    check: bool,
    agent: Option<(Py<PyAny>, String)>,
) -> PyResult<String> {
    py.detach(|| {
        let loaded = load(text, file, &sets, seed)?;
        let (name, s) = pick(&loaded, file, variant)?;
        let agent = agent_of(agent)?;
        let result = run_all(&[(s, name)], check, agent.as_ref())?.remove(0);
        let run = RunResult {
            scenario: loaded.base.name.clone(),
            description: loaded.base.description.clone(),
            seed: s.seed,
            variants: vec![result],
            sensitivity: None,
        };
        to_json(&run)
    })
    .map_err(|f| f.into_py(py))
}

/// The scenario to run: the base (`None`), or the named variant.
fn pick<'a>(
    loaded: &'a LoadedScenario,
    file: &str,
    variant: Option<&'a str>,
) -> Result<(&'a str, &'a Scenario), Failure> {
    let Some(name) = variant else {
        return Ok(("base", &loaded.base));
    };
    match loaded.variants.iter().find(|(n, _)| n == name) {
        Some((n, s)) => Ok((n.as_str(), s)),
        None => {
            let names: Vec<&str> = loaded.variants.iter().map(|(n, _)| n.as_str()).collect();
            Err(Failure::Scenario(ScenarioError {
                file: file.to_string(),
                line: None,
                field: String::new(),
                message: format!("no variant \"{name}\" (there are: {})", names.join(", ")),
                from_set: false,
            }))
        }
    }
}

/// Run every variant, as `reclaimsim compare` does (in parallel, one per core): the
/// results JSON.
#[pyfunction]
#[pyo3(signature = (text, file, sets, seed=None, check=false, agent=None))]
fn compare(
    py: Python<'_>,
    text: &str,
    file: &str,
    sets: Vec<String>,
    seed: Option<u64>,
    check: bool,
    agent: Option<(Py<PyAny>, String)>,
) -> PyResult<String> {
    py.detach(|| {
        let loaded = load(text, file, &sets, seed)?;
        let agent = agent_of(agent)?;
        let jobs: Vec<(&Scenario, &str)> = loaded
            .variants
            .iter()
            .map(|(n, s)| (s, n.as_str()))
            .collect();
        let run = RunResult {
            scenario: loaded.base.name.clone(),
            description: loaded.base.description.clone(),
            seed: loaded.base.seed,
            variants: run_all(&jobs, check, agent.as_ref())?,
            sensitivity: None,
        };
        to_json(&run)
    })
    .map_err(|f| f.into_py(py))
}

/// The agent function and its interval, the interval read as a scenario's durations.
fn agent_of(agent: Option<(Py<PyAny>, String)>) -> Result<Option<(Py<PyAny>, u64)>, Failure> {
    let Some((f, interval)) = agent else {
        return Ok(None);
    };
    match reclaimsim::units::parse_duration(&interval) {
        Ok(0) => Err(Failure::Agent("agent_interval: must be more than 0".into())),
        Ok(ns) => Ok(Some((f, ns))),
        Err(e) => Err(Failure::Agent(format!("agent_interval: {e}"))),
    }
}

/// Independent runs on every core (rayon), results in the order given. Each run is
/// single-threaded and deterministic, so the spread over threads changes only wall time.
/// With an agent function the runs go one after another, so that a function with state
/// sees the variants in order, each run's calls together.
fn run_all(
    jobs: &[(&Scenario, &str)],
    check: bool,
    agent: Option<&(Py<PyAny>, u64)>,
) -> Result<Vec<VariantResult>, Failure> {
    let one = |(s, name): &(&Scenario, &str)| {
        let raised = Arc::new(Mutex::new(None));
        let opts = RunOptions {
            check,
            watch: None,
            agent: agent.map(|(f, interval_ns)| ExternalAgent {
                kind: "python".into(),
                controller: Box::new(PyController {
                    fun: Python::attach(|py| f.clone_ref(py)),
                    raised: raised.clone(),
                }),
                interval_ns: *interval_ns,
                start_ns: 0,
            }),
        };
        let r = reclaimsim::results::run(s, name, opts);
        if let Some(e) = raised.lock().ok().and_then(|mut g| g.take()) {
            return Err(Failure::Raised(e));
        }
        r.map_err(|e| match e {
            SimError::Agent(why) => Failure::Agent(format!("variant {name}: {why}")),
            e => Failure::Run(format!("variant {name}: {e}")),
        })
    };
    if agent.is_some() {
        jobs.iter().map(one).collect()
    } else {
        jobs.par_iter().map(one).collect()
    }
}

/// The agent function as the engine's `Controller`: the state as JSON to the package's
/// wrapper (`reclaimsim._agent`), which calls the user's function and hands back its
/// writes as `(memcg or None, file, value)` triples. What it raises is kept in `raised`
/// and raised again when the run has stopped.
struct PyController {
    fun: Py<PyAny>,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl Controller for PyController {
    fn tick(&mut self, view: &AgentView) -> Result<Vec<ControlWrite>, String> {
        let json = serde_json::to_string(view).map_err(|e| format!("agent state: {e}"))?;
        Python::attach(|py| {
            let got = (self.fun.call1(py, (json,)))
                .and_then(|r| r.extract::<Vec<(Option<String>, String, String)>>(py));
            match got {
                Ok(ws) => Ok(ws
                    .into_iter()
                    .map(|(memcg, file, value)| ControlWrite { memcg, file, value })
                    .collect()),
                Err(e) => {
                    if let Ok(mut slot) = self.raised.lock() {
                        *slot = Some(e);
                    }
                    Err("the agent function raised".into())
                }
            }
        })
    }
}

fn to_json(run: &RunResult) -> Result<String, Failure> {
    serde_json::to_string(run).map_err(|e| Failure::Run(format!("results to JSON: {e}")))
}

/// The HTML report (self-contained, charts) of results JSON from `run`, `compare` or a
/// sweep.
#[pyfunction]
fn html_report(py: Python<'_>, results_json: &str) -> PyResult<String> {
    py.detach(|| reclaimsim_html::report_from_json(results_json, "<results>"))
        .map_err(PyValueError::new_err)
}

/// A scenario given as a dict, as TOML text (keys in the dict's order, so variants keep
/// theirs). A value TOML cannot hold raises `ScenarioError` naming its field.
#[pyfunction]
fn scenario_toml(py: Python<'_>, scenario: &Bound<'_, PyDict>) -> PyResult<String> {
    let table = to_table(scenario, "").map_err(|(field, message)| {
        Failure::Scenario(ScenarioError {
            file: "<dict>".into(),
            line: None,
            field,
            message,
            from_set: false,
        })
        .into_py(py)
    })?;
    let mut doc = DocumentMut::new();
    *doc.as_table_mut() = table;
    Ok(doc.to_string())
}

/// A field's place and what is wrong with it.
type Bad = (String, String);

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn to_table(d: &Bound<'_, PyDict>, path: &str) -> Result<Table, Bad> {
    let mut t = Table::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| (path.to_string(), format!("key {k} is not a string")))?;
        let item = to_item(&v, &join(path, &key))?;
        t.insert(&key, item);
    }
    Ok(t)
}

/// A dict becomes a table, a non-empty list of dicts an array of tables (`[[memcg]]`).
fn to_item(v: &Bound<'_, PyAny>, path: &str) -> Result<Item, Bad> {
    if let Ok(d) = v.cast::<PyDict>() {
        return Ok(Item::Table(to_table(d, path)?));
    }
    if let Some(items) = sequence(v) {
        if !items.is_empty() && items.iter().all(|i| i.is_instance_of::<PyDict>()) {
            let mut array = ArrayOfTables::new();
            for (i, d) in items.iter().enumerate() {
                let d = d
                    .cast::<PyDict>()
                    .map_err(|e| (path.to_string(), e.to_string()))?;
                array.push(to_table(d, &format!("{path}[{i}]"))?);
            }
            return Ok(Item::ArrayOfTables(array));
        }
    }
    Ok(Item::Value(to_value(v, path)?))
}

/// The elements of a list or tuple; None for anything else.
fn sequence<'py>(v: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        v.try_iter().ok()?.collect::<PyResult<Vec<_>>>().ok()
    } else {
        None
    }
}

fn to_value(v: &Bound<'_, PyAny>, path: &str) -> Result<Value, Bad> {
    let bad = |what: String| (path.to_string(), what);
    if v.is_instance_of::<PyBool>() {
        return Ok(Value::from(
            v.extract::<bool>().map_err(|e| bad(e.to_string()))?,
        ));
    }
    if v.is_instance_of::<PyInt>() {
        let n: i64 = v
            .extract()
            .map_err(|_| bad(format!("{v} does not fit in a 64-bit integer")))?;
        return Ok(Value::from(n));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Value::from(
            v.extract::<f64>().map_err(|e| bad(e.to_string()))?,
        ));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::from(
            v.extract::<String>().map_err(|e| bad(e.to_string()))?,
        ));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = InlineTable::new();
        for (k, x) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| bad(format!("key {k} is not a string")))?;
            let x = to_value(&x, &join(path, &key))?;
            t.insert(&key, x);
        }
        return Ok(Value::InlineTable(t));
    }
    if let Some(items) = sequence(v) {
        let mut a = Array::new();
        for (i, x) in items.iter().enumerate() {
            a.push(to_value(x, &format!("{path}[{i}]"))?);
        }
        return Ok(Value::Array(a));
    }
    let type_name = v
        .get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string());
    Err(bad(format!("a {type_name} is not a TOML value")))
}

/// The module.
/// The metrics of `reclaimsim::results::metrics::METRICS` for one variant's results
/// (its JSON object), as (key, value) pairs in the registry's order.
#[pyfunction]
fn variant_metrics(variant_json: &str) -> PyResult<Vec<(&'static str, f64)>> {
    let v: VariantResult = serde_json::from_str(variant_json)
        .map_err(|e| PyValueError::new_err(format!("not a variant's results: {e}")))?;
    Ok(reclaimsim::results::metrics::METRICS
        .iter()
        .map(|m| (m.key, (m.value)(&v)))
        .collect())
}

/// The registry's metrics as (key, title, unit) triples.
#[pyfunction]
fn metric_info() -> Vec<(&'static str, &'static str, &'static str)> {
    reclaimsim::results::metrics::METRICS
        .iter()
        .map(|m| (m.key, m.title, m.unit))
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(html_report, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_toml, m)?)?;
    m.add_function(wrap_pyfunction!(variant_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(metric_info, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
