//! The reference pages that the code defines: the JSON Schemas of what the commands
//! write with `--json` (docs/reference/results-schema.json for `run` and `compare`,
//! validate-schema.json, sweep-schema.json and bench-schema.json), derived from their
//! types, must be what the types give (`RECLAIMSIM_BLESS=1` rewrites them), and a real
//! run's and a real validate's JSON must validate against theirs; the cost table's page
//! (docs/reference/costs.md) is what profiles/default.toml gives, rewritten the same way;
//! docs/reference/scenario.md must have an entry for every key the scenario parser
//! accepts, and no entry for a key it does not.

use reclaimsim::engine::RunOptions;
use reclaimsim::output::bench::Bench;
use reclaimsim::output::sweep::SweepResult;
use reclaimsim::output::validate::{self, ValidateResult};
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

const SCHEMA: &str = "docs/reference/results-schema.json";

const VALIDATE_SCHEMA: &str = "docs/reference/validate-schema.json";

const REGENERATE_SCHEMA: &str =
    "RECLAIMSIM_BLESS=1 cargo test --profile checked -p reclaimsim --test reference schemas";

/// Each JSON Schema file and the schema its type gives, pretty-printed, ending in a
/// newline.
fn schemas() -> Vec<(&'static str, String)> {
    let pretty = |s: schemars::Schema| serde_json::to_string_pretty(&s).unwrap() + "\n";
    vec![
        (SCHEMA, pretty(schemars::schema_for!(RunResult))),
        (
            VALIDATE_SCHEMA,
            pretty(schemars::schema_for!(ValidateResult)),
        ),
        (
            "docs/reference/sweep-schema.json",
            pretty(schemars::schema_for!(SweepResult)),
        ),
        (
            "docs/reference/bench-schema.json",
            pretty(schemars::schema_for!(Bench)),
        ),
        (COSTS, cost_reference()),
    ]
}

const COSTS: &str = "docs/reference/costs.md";

/// docs/reference/costs.md: every field of the cost table with its default, plausible
/// range and source, as crates/reclaimsim/profiles/default.toml gives them.
fn cost_reference() -> String {
    let profile = "crates/reclaimsim/profiles/default.toml";
    let text = fs::read_to_string(workspace().join(profile)).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let costs = doc["costs"].as_table().unwrap();
    let mut out = format!(
        "# The cost table\n\n\
         <!-- Generated from {profile} by tests/reference.rs: {REGENERATE_SCHEMA} -->\n\n\
         What each kernel action, device transfer and workload operation costs in virtual \
         time: the {n} fields of the cost table (`crates/reclaimsim/src/sim/cost.rs`), \
         with the built-in default, the range the value is plausible in (what \
         [sensitivity bands](../guide/sensitivity.md) sweep) and where the value comes \
         from. Values are virtual nanoseconds unless the source says otherwise (`smt_*` \
         and `little_*` are per mille, `*_queue_depth` counts). A scenario's `[costs]` or a [machine \
         profile](../guide/profiles.md) overrides any of them; the fields by group are in \
         [the engine](../model/engine.md).\n\n\
         | field | default | range | source |\n|---|---|---|---|\n",
        n = costs.len()
    );
    for (name, entry) in costs {
        let field = |k: &str| entry.get(k).unwrap_or_else(|| panic!("{name}: no {k}"));
        let range = field("range").as_array().unwrap();
        let method = field("method").as_str().unwrap();
        out += &format!(
            "| `{name}` | {} | {} .. {} | {} |\n",
            field("value"),
            range[0],
            range[1],
            method.replace('|', "\\|").replace('\n', " ")
        );
    }
    out
}

#[test]
fn schemas_are_current() {
    let bless = std::env::var_os("RECLAIMSIM_BLESS").is_some_and(|v| v == "1");
    for (file, want) in schemas() {
        let path = workspace().join(file);
        if bless {
            fs::write(&path, &want).unwrap();
            continue;
        }
        let have = fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{file} is not what the code generates (its type's schema, or the cost table); regenerate it: {REGENERATE_SCHEMA}"
        );
    }
}

/// A small MGLRU run that fills every part of the results: two memcgs, an anon and an fio
/// workload, a debugfs event, the time series with its lru_gen views.
const SMALL_RUN: &str = r#"
name = "schema"
description = "every part of the results"
duration = "300ms"
sample_interval = "100ms"

[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }

[kernel]
policy = "mglru"

[[memcg]]
path = "/a"
max = "24MiB"

[[memcg]]
path = "/b"

[[event]]
at = "150ms"
command = "+ /a 0 max"

[[workload]]
name = "anon"
memcg = "/a"
[workload.anon]
size = "32MiB"
passes = 2

[[workload]]
name = "fio"
memcg = "/b"
[workload.fio]
rw = "randread"
size = "48MiB"
time_based = true
runtime = "300ms"
"#;

/// `schema` with `additionalProperties: false` on every object that lists its
/// properties, so that a key the schema does not name fails validation too.
fn closed(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(closed);
        }
        Value::Array(items) => items.iter_mut().for_each(closed),
        _ => {}
    }
}

/// The errors of `json` against the committed schema `file`, closed (`closed`).
fn schema_errors(file: &str, json: &Value) -> Vec<String> {
    let text = fs::read_to_string(workspace().join(file)).expect(file);
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    closed(&mut schema);
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    (validator.iter_errors(json))
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// SMALL_RUN's base run, and the scenario as parsed from `text`.
fn small_run(text: &str) -> (scenario::LoadedScenario, VariantResult) {
    let loaded = scenario::parse(text, "schema.toml", &[], None).unwrap();
    let variant = reclaimsim::results::run(&loaded.base, "base", RunOptions::default()).unwrap();
    (loaded, variant)
}

fn run_result(loaded: &scenario::LoadedScenario, variants: Vec<VariantResult>) -> RunResult {
    RunResult::of(&loaded.base, loaded.base.seed, variants)
}

#[test]
fn a_runs_json_validates_against_the_committed_schema() {
    let (loaded, variant) = small_run(SMALL_RUN);
    assert!(!variant.lru_gen.is_empty() && !variant.events.is_empty());
    assert!(variant.timeseries.iter().any(|s| s.lru_gen.is_some()));
    let json = serde_json::to_value(run_result(&loaded, vec![variant])).unwrap();
    let errors = schema_errors(SCHEMA, &json);
    assert!(
        errors.is_empty(),
        "a run's JSON does not validate against {SCHEMA}:\n{}",
        errors.join("\n")
    );
}

/// `validate --json` of a scenario with an expectation: the schema covers the runs it
/// carries and each row, met or not (a metric the run lacks gives a row with a note).
#[test]
fn a_validates_json_validates_against_the_committed_schema() {
    let text = format!(
        "{SMALL_RUN}\n[variants.one]\nkernel.swappiness = 60\n[variants.other]\nkernel.swappiness = 100\n\n\
         [[expect]]\nmetric = \"workloads.fio.ops_per_sec\"\nfrom = \"one\"\nto = \"other\"\n\
         change = \"+1%\"\nsource = \"a test\"\n\n\
         [[expect]]\nmetric = \"vmstat.no_such_counter\"\nfrom = \"one\"\nto = \"other\"\n\
         change = \"+1%\"\nsource = \"a test\"\n"
    );
    let (loaded, mut variant) = small_run(&text);
    let mut other = variant.clone();
    variant.name = "one".into();
    other.name = "other".into();
    let run = run_result(&loaded, vec![variant, other]);
    let result = ValidateResult {
        scenarios: vec![validate::check_scenario(
            "schema.toml",
            run,
            &loaded.expects,
        )],
    };
    let checks = &result.scenarios[0].expectations;
    assert!(checks[0].change.is_some() && checks[1].note.is_some());
    let json = serde_json::to_value(&result).unwrap();
    let errors = schema_errors(VALIDATE_SCHEMA, &json);
    assert!(
        errors.is_empty(),
        "validate's JSON does not validate against {VALIDATE_SCHEMA}:\n{}",
        errors.join("\n")
    );
}

/// The key no table has, put in each table to make the parser list the keys it accepts.
const PROBE: &str = "zz_probe";

/// A valid scenario around `{P}`, where the probe goes: each table whose keys the parser
/// checks, as the reference names it ("" for the top level). Not here: `[costs]`, whose
/// keys are the cost table's fields, each with its entry in profiles/default.toml (which
/// `every_shipped_profile_is_complete_with_sources_and_ranges` checks), a phase's `mix`
/// (the same keys as `workload.anon.mix`), and the tables whose keys are names
/// (`[variants]`, `trace.tenants`).
const PROBES: [(&str, &str); 26] = [
    ("", "{P}\n[machine]\nmemory = \"64MiB\"\n"),
    ("machine", "[machine]\nmemory = \"64MiB\"\n{P}\n"),
    (
        "machine.node",
        "[machine]\nmemory = \"64MiB\"\n[[machine.node]]\nmemory = \"64MiB\"\ncpus = \"0-3\"\n{P}\n",
    ),
    (
        "machine.swap",
        "[machine]\nmemory = \"64MiB\"\n[machine.swap]\ndevice = \"zram\"\nsize = \"1MiB\"\n{P}\n",
    ),
    (
        "machine.swap.zswap",
        "[machine]\nmemory = \"64MiB\"\n[machine.swap]\ndevice = \"zram\"\nsize = \"1MiB\"\n[machine.swap.zswap]\n{P}\n",
    ),
    (
        "machine.swap.backing_dev",
        "[machine]\nmemory = \"64MiB\"\n[machine.swap]\ndevice = \"zram\"\nsize = \"1MiB\"\n[machine.swap.backing_dev]\n{P}\n",
    ),
    ("kernel", "[machine]\nmemory = \"64MiB\"\n[kernel]\n{P}\n"),
    (
        "kernel.plugin",
        "[machine]\nmemory = \"64MiB\"\n[kernel]\npolicy = \"plugin\"\n[kernel.plugin]\nname = \"fifo\"\n{P}\n",
    ),
    (
        "event",
        "[machine]\nmemory = \"64MiB\"\n[kernel]\npolicy = \"mglru\"\n[[event]]\nat = \"1ms\"\ncommand = \"+ / 0 max\"\n{P}\n",
    ),
    (
        "agent",
        "[machine]\nmemory = \"64MiB\"\n[[memcg]]\npath = \"/a\"\n[[agent]]\nkind = \"senpai\"\nmemcg = \"/a\"\n{P}\n",
    ),
    ("memcg", "[machine]\nmemory = \"64MiB\"\n[[memcg]]\npath = \"/a\"\n{P}\n"),
    ("workload", "[machine]\nmemory = \"64MiB\"\n[[workload]]\nname = \"w\"\n{P}\nanon = { size = \"1MiB\" }\n"),
    ("workload.fio", "{W}[workload.fio]\nsize = \"1MiB\"\n{P}\n"),
    ("workload.fio.phase", "{W}[workload.fio]\nsize = \"1MiB\"\n[[workload.fio.phase]]\n{P}\n"),
    ("workload.memcached", "{W}[workload.memcached]\n{P}\n[[workload.memcached.phase]]\n"),
    ("workload.memcached.phase", "{W}[workload.memcached]\n[[workload.memcached.phase]]\n{P}\n"),
    ("workload.dd", "{W}[workload.dd]\nsize = \"1MiB\"\n{P}\n"),
    ("workload.dd.phase", "{W}[workload.dd]\nsize = \"1MiB\"\n[[workload.dd.phase]]\n{P}\n"),
    ("workload.page_fault3", "{W}[workload.page_fault3]\nruntime = \"1ms\"\n{P}\n"),
    (
        "workload.page_fault3.phase",
        "{W}[workload.page_fault3]\nruntime = \"1ms\"\n[[workload.page_fault3.phase]]\n{P}\n",
    ),
    ("workload.anon", "{W}[workload.anon]\nsize = \"1MiB\"\n{P}\n"),
    ("workload.anon.phase", "{W}[workload.anon]\nsize = \"1MiB\"\n[[workload.anon.phase]]\n{P}\n"),
    ("workload.anon.mix", "{W}[workload.anon]\nsize = \"1MiB\"\n[[workload.anon.mix]]\nweight = 1\n{P}\n"),
    ("workload.tabs", "{W}[workload.tabs]\ntabs = 1\ntab_size = \"1MiB\"\n{P}\n"),
    ("workload.trace", "{W}[workload.trace]\npath = \"t.csv\"\n{P}\n"),
    (
        "expect",
        "[machine]\nmemory = \"64MiB\"\n[variants.a]\n[variants.b]\n[[expect]]\nmetric = \"page_accesses\"\nfrom = \"a\"\nto = \"b\"\nchange = \"+1%\"\n{P}\n",
    ),
];

/// The head of a scenario whose one workload's table follows.
const WORKLOAD_HEAD: &str = "[machine]\nmemory = \"64MiB\"\n[[workload]]\nname = \"w\"\n";

/// An idle workload, for the probes of tables outside `[[workload]]`.
const IDLE: &str = "[[workload]]\nname = \"idle\"\nanon = { size = \"4KiB\" }\n";

/// The probe scenario of a template with `line` where the probe goes.
fn probe_scenario(template: &str, line: &str) -> String {
    let body = template.replace("{W}", WORKLOAD_HEAD).replace("{P}", line);
    let idle = if body.contains("[[workload]]") {
        ""
    } else {
        IDLE
    };
    format!("name = \"probe\"\n{body}{idle}")
}

/// The keys serde names after "expected" in an unknown-field error: `expected one of
/// `a`, `b``, `expected `a` or `b``, `expected `a``.
fn expected_keys(message: &str) -> Option<BTreeSet<String>> {
    let (_, list) = message.split_once("unknown field")?;
    let (_, list) = list.split_once("expected")?;
    Some(
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

/// The field an error names, with array indexes dropped (`workload[0].fio.x` ->
/// `workload.fio.x`).
fn unindexed(field: &str) -> String {
    let mut out = String::new();
    let mut skip = false;
    for c in field.chars() {
        match c {
            '[' => skip = true,
            ']' => skip = false,
            c if !skip => out.push(c),
            _ => {}
        }
    }
    out
}

/// Each table's keys as the parser accepts them: serde's list of the struct's fields
/// (aliases included), from the error a probe key gets.
fn accepted_keys() -> BTreeMap<&'static str, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (table, template) in PROBES {
        let text = probe_scenario(template, &format!("{PROBE} = 1"));
        let e = scenario::parse(&text, "probe.toml", &[], None)
            .err()
            .unwrap_or_else(|| panic!("{table}: the probe key was accepted:\n{text}"));
        let want = if table.is_empty() {
            PROBE.to_string()
        } else {
            format!("{table}.{PROBE}")
        };
        assert_eq!(unindexed(&e.field), want, "{table}: {e}\n{text}");
        let keys = expected_keys(&e.to_string())
            .unwrap_or_else(|| panic!("{table}: not serde's unknown-field error: {e}"));
        out.insert(table, keys);
    }
    out
}

const SCENARIO_MD: &str = "docs/reference/scenario.md";

/// The entries of scenario.md's "Every key": per table (its `### ` heading's first code
/// span, "" for the top level), the names in each row's first cell (a key and its
/// aliases) with the row's line.
fn reference_entries() -> BTreeMap<String, Vec<(usize, Vec<String>)>> {
    let text = fs::read_to_string(workspace().join(SCENARIO_MD)).expect(SCENARIO_MD);
    let mut out: BTreeMap<String, Vec<(usize, Vec<String>)>> = BTreeMap::new();
    let mut table: Option<String> = None;
    let mut inside = false;
    for (n, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim() == "Every key";
            table = None;
        } else if let Some(h) = line.strip_prefix("### ").filter(|_| inside) {
            let name = h.split('`').nth(1).unwrap_or("").to_string();
            out.entry(name.clone()).or_default();
            table = Some(name);
        } else if let (Some(t), Some(row)) = (&table, line.strip_prefix("| `")) {
            let cell = row.split('|').next().unwrap_or("");
            let names = format!("`{cell}")
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            out.get_mut(t).unwrap().push((n + 1, names));
        }
    }
    out
}

/// Whether the parser reads `key` in `table` although serde does not list it (keys read
/// before serde: `variants`, `expect`, `instances`, `cpus_per_instance`, `jobfile`): a
/// value it cannot take gets an error other than an unknown key.
fn read_before_serde(template: &str, table: &str, key: &str) -> bool {
    let text = probe_scenario(template, &format!("{key} = {{ {PROBE} = 1 }}"));
    match scenario::parse(&text, "probe.toml", &[], None) {
        Ok(_) => true,
        Err(e) => {
            let field = [table, key].join(".");
            let field = field.trim_start_matches('.');
            !(e.message.contains("unknown field") && unindexed(&e.field) == field)
        }
    }
}

#[test]
fn every_scenario_key_has_a_reference_entry() {
    let accepted = accepted_keys();
    let entries = reference_entries();
    let mut bad = Vec::new();
    for (table, template) in PROBES {
        let shown = if table.is_empty() {
            "the top level"
        } else {
            table
        };
        let Some(rows) = entries.get(table) else {
            bad.push(format!("{SCENARIO_MD}: no `### ` section for {shown}"));
            continue;
        };
        let documented: BTreeSet<&String> = rows.iter().flat_map(|(_, n)| n).collect();
        for key in &accepted[table] {
            if !documented.contains(key) {
                bad.push(format!(
                    "{shown}: the parser accepts `{key}`, which has no entry"
                ));
            }
        }
        for (line, names) in rows {
            for name in names {
                if !accepted[table].contains(name) && !read_before_serde(template, table, name) {
                    bad.push(format!(
                        "{SCENARIO_MD}:{line}: {shown}: an entry for `{name}`, which the parser does not accept"
                    ));
                }
            }
        }
    }
    for table in entries.keys() {
        if !PROBES.iter().any(|(t, _)| t == table) {
            bad.push(format!(
                "{SCENARIO_MD}: a section for `{table}`, a table this test does not know (add it to PROBES)"
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "the scenario reference's entries:\n{}",
        bad.join("\n")
    );
}
