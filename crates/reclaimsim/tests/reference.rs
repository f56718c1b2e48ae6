//! The reference pages that the code defines: docs/reference/results-schema.json, the
//! JSON Schema of the results (`run --json`, `compare --json`) derived from the
//! `results` types, must be what the types give (`RECLAIMSIM_BLESS=1` rewrites it), and a
//! real run's JSON must validate against it.

use reclaimsim::engine::RunOptions;
use reclaimsim::results::{RunResult, VariantResult};
use reclaimsim::scenario;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

const SCHEMA: &str = "docs/reference/results-schema.json";

const REGENERATE_SCHEMA: &str =
    "RECLAIMSIM_BLESS=1 cargo test --profile checked -p reclaimsim --test reference results_schema";

/// The results' JSON Schema as the types give it, pretty-printed, ending in a newline.
fn results_schema() -> String {
    let schema = schemars::schema_for!(RunResult);
    serde_json::to_string_pretty(&schema).unwrap() + "\n"
}

#[test]
fn results_schema_is_current() {
    let path = workspace().join(SCHEMA);
    let want = results_schema();
    if std::env::var_os("RECLAIMSIM_BLESS").is_some_and(|v| v == "1") {
        fs::write(&path, &want).unwrap();
        return;
    }
    let have = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{SCHEMA} is not the schema the results types give; regenerate it: {REGENERATE_SCHEMA}"
    );
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

#[test]
fn a_runs_json_validates_against_the_committed_schema() {
    let text = fs::read_to_string(workspace().join(SCHEMA)).expect(SCHEMA);
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    closed(&mut schema);
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let loaded = scenario::parse(SMALL_RUN, "schema.toml", &[], None).unwrap();
    let variant: VariantResult =
        reclaimsim::results::run(&loaded.base, "base", RunOptions::default()).unwrap();
    assert!(!variant.lru_gen.is_empty() && !variant.events.is_empty());
    assert!(variant.timeseries.iter().any(|s| s.lru_gen.is_some()));
    let result = RunResult {
        scenario: loaded.base.name.clone(),
        description: loaded.base.description.clone(),
        seed: loaded.base.seed,
        variants: vec![variant],
        sensitivity: None,
    };
    let json = serde_json::to_value(&result).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "a run's JSON does not validate against {SCHEMA}:\n{}",
        errors.join("\n")
    );
}

