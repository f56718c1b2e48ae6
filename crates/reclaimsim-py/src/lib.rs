//! `reclaimsim._core`: the Rust side of the Python package. It loads scenarios, runs them
//! (without the GIL) and hands back the library's own results JSON, which the package's
//! Python layer turns into pandas DataFrames. No model logic lives here.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rayon::prelude::*;
use reclaimsim::engine::{
    AgentView, ControlWrite, Controller, EvictCtx, ExternalAgent, FolioRef, ReclaimPlugin,
    RunOptions, SimError,
};
use reclaimsim::kernel::config::{PluginConfig, PluginPages, PolicyKind};
use reclaimsim::kernel::lru::plugin::{Lists, PluginFactory};
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
    /// A policy's hook raised (the exception, with the hook's name), or proposed a folio
    /// not resident in its memcg (`SimError::Policy`).
    Policy(String, Option<PyErr>),
}

impl Failure {
    fn into_py(self, py: Python<'_>) -> PyErr {
        let made = match self {
            Failure::Scenario(e) => scenario_error(py, &e),
            Failure::Run(msg) => error_class(py, "RunError").and_then(|c| c.call1((msg,))),
            Failure::Agent(msg) => error_class(py, "AgentError").and_then(|c| c.call1((msg,))),
            Failure::Raised(e) => return e,
            Failure::Policy(msg, cause) => {
                let made = error_class(py, "PolicyError").and_then(|c| c.call1((msg,)));
                if let (Ok(exc), Some(cause)) = (&made, cause) {
                    let _ = exc.setattr("__cause__", cause.value(py));
                }
                made
            }
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
    scenario::parse_python(text, file, sets, seed).map_err(Failure::Scenario)
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
#[pyo3(signature = (text, file, sets, seed=None, variant=None, check=false, agent=None, policy=None))]
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
    policy: Option<(Py<PyAny>, Option<String>, String)>,
) -> PyResult<String> {
    let policy = policy.map(policy_arg).transpose()?;
    py.detach(|| {
        let loaded = load(text, file, &sets, seed)?;
        let (name, s) = pick(&loaded, file, variant)?;
        let agent = agent_of(agent)?;
        // policy=: the picked scenario runs it, in its kernel.plugin's memcg if it names
        // "python", else in the class's `memcg` (None: every memcg).
        let with = policy.as_ref().map(|(_, spec)| with_python(s, spec));
        let s = with.as_ref().unwrap_or(s);
        let result = run_all(&[(s, name)], check, agent.as_ref(), policy.as_ref())?.remove(0);
        let run = RunResult::of(&loaded.base, s.seed, vec![result]);
        to_json(&run)
    })
    .map_err(|f| f.into_py(py))
}

/// Why the package does not run a kernel variant.
const KERNEL_VARIANT: &str = "the Python package runs the model only: run it with the \
     command, `reclaimsim kernel FILE --variant NAME` or `reclaimsim compare FILE`";

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
        Some((n, _)) if loaded.is_kernel(n) => Err(Failure::Scenario(
            loaded.kernel_variant_error(n, KERNEL_VARIANT),
        )),
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
#[pyo3(signature = (text, file, sets, seed=None, check=false, agent=None, policy=None))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    text: &str,
    file: &str,
    sets: Vec<String>,
    seed: Option<u64>,
    check: bool,
    agent: Option<(Py<PyAny>, String)>,
    policy: Option<(Py<PyAny>, Option<String>, String, String)>,
) -> PyResult<String> {
    let (policy, class) = match policy {
        Some((cls, memcg, pages, class)) => (Some(policy_arg((cls, memcg, pages))?), class),
        None => (None, String::new()),
    };
    py.detach(|| {
        let loaded = load(text, file, &sets, seed)?;
        if let Some(k) = loaded.kernel_variants.first() {
            let e = loaded.kernel_variant_error(&k.name, KERNEL_VARIANT);
            return Err(Failure::Scenario(e));
        }
        let agent = agent_of(agent)?;
        let mut jobs: Vec<(&Scenario, &str)> = loaded
            .variants
            .iter()
            .map(|(n, s)| (s, n.as_str()))
            .collect();
        // policy=: the variants that name "python" run it; when none does, one more
        // variant, named after the class, runs the base with it.
        let extra = policy.as_ref().and_then(|(_, spec)| {
            let named = jobs.iter().any(|(s, _)| is_python(s));
            (!named).then(|| with_python(&loaded.base, spec))
        });
        if let Some(s) = &extra {
            jobs.push((s, class.as_str()));
        }
        let variants = run_all(&jobs, check, agent.as_ref(), policy.as_ref())?;
        let run = RunResult::of(&loaded.base, loaded.base.seed, variants);
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
    policy: Option<&(Py<PyAny>, PolicySpec)>,
) -> Result<Vec<VariantResult>, Failure> {
    let one = |(s, name): &(&Scenario, &str)| {
        let raised = Arc::new(Mutex::new(None));
        let hook_raised: Arc<Mutex<Option<(String, PyErr)>>> = Arc::new(Mutex::new(None));
        let opts = RunOptions {
            plugin: policy.map(|(cls, _)| py_factory(cls, &hook_raised)),
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
        if let Some((hook, e)) = hook_raised.lock().ok().and_then(|mut g| g.take()) {
            let msg = Python::attach(|py| {
                format!(
                    "variant {name}: policy hook {hook} raised {}",
                    e.value(py)
                        .repr()
                        .map_or_else(|_| "?".into(), |r| r.to_string())
                )
            });
            return Err(Failure::Policy(msg, Some(e)));
        }
        r.map_err(|e| match e {
            SimError::Agent(why) => Failure::Agent(format!("variant {name}: {why}")),
            SimError::Policy(why) => Failure::Policy(format!("variant {name}: {why}"), None),
            e => Failure::Run(format!("variant {name}: {e}")),
        })
    };
    if agent.is_some() || policy.is_some() {
        jobs.iter().map(one).collect()
    } else {
        jobs.par_iter().map(one).collect()
    }
}

/// Whether a scenario runs the Python policy (`kernel.plugin.name = "python"`).
fn is_python(s: &Scenario) -> bool {
    s.kernel.policy == PolicyKind::Plugin
        && s.kernel.plugin.as_ref().is_some_and(|p| p.name == "python")
}

/// The policy class's `memcg` and `pages`, where the scenario names no plugin.
#[derive(Clone)]
struct PolicySpec {
    memcg: Option<String>,
    pages: PluginPages,
}

/// policy=: the class with its `memcg` and `pages` ("file" or "all") read.
fn policy_arg(
    (cls, memcg, pages): (Py<PyAny>, Option<String>, String),
) -> PyResult<(Py<PyAny>, PolicySpec)> {
    let pages = match pages.as_str() {
        "file" => PluginPages::File,
        "all" => PluginPages::All,
        other => {
            return Err(PyValueError::new_err(format!(
                "Policy.pages: \"{other}\": expected \"file\" or \"all\""
            )))
        }
    };
    Ok((cls, PolicySpec { memcg, pages }))
}

/// `s` running the Python policy: as it is if it names it, else with
/// `kernel.policy = "plugin"` and the plugin "python" on the class's memcg (None: every
/// memcg) and pages.
fn with_python(s: &Scenario, spec: &PolicySpec) -> Scenario {
    let mut s = s.clone();
    if !is_python(&s) {
        s.kernel.policy = PolicyKind::Plugin;
        s.kernel.plugin = Some(PluginConfig {
            name: "python".into(),
            memcg: spec.memcg.clone(),
            pages: spec.pages,
        });
    }
    s
}

/// One instance of the policy class per governed memcg; what a hook (or the class)
/// raises is kept in `raised` with the hook's name, and the run stops.
fn py_factory(cls: &Py<PyAny>, raised: &Arc<Mutex<Option<(String, PyErr)>>>) -> PluginFactory {
    let cls = Python::attach(|py| cls.clone_ref(py));
    let raised = raised.clone();
    Box::new(move || {
        let made = Python::attach(|py| cls.call0(py));
        let (obj, err) = match made {
            Ok(o) => (Some(o), None),
            Err(e) => (None, Some(e)),
        };
        let mut p = PyPolicy {
            obj,
            raised: raised.clone(),
        };
        if let Some(e) = err {
            p.keep("__init__", e);
        }
        Box::new(p)
    })
}

/// A `reclaimsim.Policy` instance as the kernel's `ReclaimPlugin`: folios are their
/// PFNs (ints), the eviction context a `reclaimsim.EvictCtx`.
struct PyPolicy {
    obj: Option<Py<PyAny>>,
    raised: Arc<Mutex<Option<(String, PyErr)>>>,
}

impl PyPolicy {
    fn keep(&mut self, hook: &str, e: PyErr) -> String {
        if let Ok(mut slot) = self.raised.lock() {
            slot.get_or_insert((hook.to_string(), e));
        }
        format!("{hook} raised")
    }

    fn folio_hook(&mut self, hook: &'static str, f: FolioRef) -> Result<(), String> {
        let Some(obj) = &self.obj else {
            return Err("the policy could not be made".into());
        };
        match Python::attach(|py| obj.call_method1(py, hook, (f.pfn,)).map(|_| ())) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.keep(hook, e)),
        }
    }
}

impl ReclaimPlugin for PyPolicy {
    fn init(&mut self, memcg: &str, _: &mut Lists) -> Result<(), String> {
        let Some(obj) = &self.obj else {
            return Err("the policy class raised".into());
        };
        match Python::attach(|py| obj.call_method1(py, "init", (memcg,)).map(|_| ())) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.keep("init", e)),
        }
    }
    fn folio_added(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.folio_hook("folio_added", f)
    }
    fn folio_accessed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.folio_hook("folio_accessed", f)
    }
    fn folio_removed(&mut self, f: FolioRef, _: &mut Lists) -> Result<(), String> {
        self.folio_hook("folio_removed", f)
    }
    fn evict_folios(
        &mut self,
        ctx: &EvictCtx,
        _: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        let Some(obj) = &self.obj else {
            return Err("the policy could not be made".into());
        };
        let got = Python::attach(|py| -> PyResult<Vec<u32>> {
            let c = py
                .import("reclaimsim._policy")?
                .getattr("EvictCtx")?
                .call1((
                    ctx.memcg.as_str(),
                    ctx.node,
                    ctx.nr_to_reclaim,
                    ctx.swappiness,
                    ctx.priority,
                    ctx.reclaimer.name(),
                ))?;
            let r = obj.call_method1(py, "evict_folios", (c,))?;
            if r.is_none(py) {
                return Ok(Vec::new());
            }
            r.bind(py)
                .try_iter()?
                .map(|x| x?.extract::<u32>())
                .collect()
        });
        match got {
            // Python names a folio by its PFN alone.
            Ok(pfns) => {
                let key = FolioRef::ANY_KEY;
                out.extend(pfns.into_iter().map(|pfn| FolioRef { pfn, key }));
                Ok(())
            }
            Err(e) => Err(self.keep("evict_folios", e)),
        }
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
