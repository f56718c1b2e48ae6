//! Machine profiles in scenarios: a profile replaces the cost table's defaults, the
//! scenario's `[costs]` win over it, and a bad profile is an error naming the profile
//! file, the line and the field.

use reclaimsim::scenario::{self, ScenarioError};
use reclaimsim::sim::cost::CostTable;
use std::path::{Path, PathBuf};

const SCENARIO: &str = r#"name = "small"
[machine]
memory = "64MiB"
cpus = 2
profile = "host.toml"

[[workload]]
name = "a"
[workload.anon]
size = "8MiB"
"#;

const PROFILE: &str = r#"[profile]
name = "host"
measured = "a test"

[costs.zram_compress]
value = 1234
median = 1234.4
spread = [1200.0, 1300.0]
range = [1200, 1300]
iterations = 1000
method = "by hand"

[costs.fault]
value = 700

[measured.tcp_rtt]
value = 20000
"#;

/// A fresh directory holding `s.toml` and `host.toml`.
fn setup(test: &str, scenario: &str, profile: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reclaimsim-profile-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("s.toml"), scenario).unwrap();
    std::fs::write(d.join("host.toml"), profile).unwrap();
    d
}

fn load(dir: &Path, sets: &[&str]) -> Result<scenario::LoadedScenario, ScenarioError> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    scenario::load(&dir.join("s.toml"), &sets, None)
}

/// The 1-based line of `text` holding `needle`.
fn line(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn a_profile_replaces_the_defaults() {
    let d = setup("defaults", SCENARIO, PROFILE);
    let costs = load(&d, &[]).unwrap().base.costs;
    let defaults = CostTable::default();
    assert_eq!(costs.zram_compress, 1234);
    assert_eq!(costs.fault, 700);
    assert_eq!(costs.page_zero, defaults.page_zero);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_scenarios_costs_win_over_the_profile() {
    let scenario = SCENARIO.replace("[[workload]]", "[costs]\nfault = 900\n\n[[workload]]");
    let d = setup("costs", &scenario, PROFILE);
    let costs = load(&d, &[]).unwrap().base.costs;
    assert_eq!((costs.fault, costs.zram_compress), (900, 1234));
    let costs = load(&d, &["costs.zram_compress=5"]).unwrap().base.costs;
    assert_eq!(costs.zram_compress, 5);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn without_a_profile_the_costs_are_the_defaults() {
    let d = setup(
        "none",
        &SCENARIO.replace("profile = \"host.toml\"\n", ""),
        PROFILE,
    );
    assert_eq!(load(&d, &[]).unwrap().base.costs, CostTable::default());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn set_names_a_profile_relative_to_the_current_directory() {
    let d = setup(
        "set",
        &SCENARIO.replace("profile = \"host.toml\"\n", ""),
        PROFILE,
    );
    let abs = d.join("host.toml");
    let set = format!("machine.profile={}", abs.display());
    assert_eq!(load(&d, &[&set]).unwrap().base.costs.fault, 700);
    // Relative to the current directory (the crate's, in tests), not the scenario's.
    let e = load(&d, &["machine.profile=host.toml"]).unwrap_err();
    assert!(e.from_set, "{e}");
    assert!(
        e.to_string()
            .starts_with("--set machine.profile: cannot read machine profile host.toml"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_missing_profile_is_reported_at_machine_profile() {
    let d = setup(
        "missing",
        &SCENARIO.replace("host.toml", "nope.toml"),
        PROFILE,
    );
    let e = load(&d, &[]).unwrap_err();
    assert_eq!(e.line, Some(5), "{e}");
    assert_eq!(e.field, "machine.profile");
    assert!(e.message.contains("cannot read machine profile"), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The error a profile edited from `from` to `to` gives: it names the profile file.
fn profile_error(test: &str, from: &str, to: &str) -> (ScenarioError, String) {
    assert!(PROFILE.contains(from), "{from}");
    let text = PROFILE.replacen(from, to, 1);
    let d = setup(test, SCENARIO, &text);
    let e = load(&d, &[]).unwrap_err();
    assert_eq!(e.file, d.join("host.toml").display().to_string(), "{e}");
    assert!(!e.from_set);
    assert!(
        e.message.ends_with(&format!(
            "(the machine profile named by {})",
            d.join("s.toml").display()
        )),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
    (e, text)
}

#[test]
fn an_unknown_cost_field_is_located() {
    let (e, text) = profile_error("unknown", "[costs.fault]", "[costs.fualt]");
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(line(&text, "fualt")), "costs.fualt"),
        "{e}"
    );
    assert!(e.message.contains("unknown field `fualt`"), "{e}");
}

#[test]
fn a_bad_value_is_located() {
    let (e, text) = profile_error("negative", "value = 700", "value = -7");
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(line(&text, "-7")), "costs.fault.value"),
        "{e}"
    );
    let (e, text) = profile_error("string", "value = 700", "value = \"fast\"");
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(line(&text, "fast")), "costs.fault.value"),
        "{e}"
    );
    assert!(e.message.contains("invalid type"), "{e}");
}

#[test]
fn a_value_outside_its_range_is_located() {
    let (e, text) = profile_error("range", "value = 1234", "value = 4321");
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(line(&text, "4321")), "costs.zram_compress.value"),
        "{e}"
    );
    assert!(e.message.contains("outside"), "{e}");
}

#[test]
fn unknown_keys_and_syntax_errors_are_located() {
    let (e, text) = profile_error("key", "iterations = 1000", "iterationz = 1000");
    assert_eq!(
        (e.line, e.field.as_str()),
        (
            Some(line(&text, "iterationz")),
            "costs.zram_compress.iterationz"
        ),
        "{e}"
    );
    let (e, text) = profile_error("syntax", "value = 700", "value = 700 700");
    assert_eq!(e.line, Some(line(&text, "700 700")), "{e}");
    assert!(e.message.contains("TOML syntax"), "{e}");
    let (e, _) = profile_error(
        "no-info",
        "[profile]\nname = \"host\"\nmeasured = \"a test\"\n",
        "",
    );
    assert_eq!(e.field, "profile", "{e}");
}

/// `profile = "NAME"` loads a shipped profile, in the file or with `--set`; "default" is
/// the built-in table itself.
#[test]
fn a_name_loads_a_shipped_profile() {
    let named = |name: &str| SCENARIO.replace("\"host.toml\"", &format!("\"{name}\""));
    let d = setup("named", &named("epyc-7k62-2s"), PROFILE);
    let epyc = reclaimsim::scenario::profile::builtin("epyc-7k62-2s")
        .unwrap()
        .unwrap();
    let s = load(&d, &[]).unwrap().base;
    assert_eq!(s.costs.lru_scan_miss, epyc.costs["lru_scan_miss"].value);
    assert_eq!(s.costs.lru_scan_miss, 115);
    assert_eq!(s.cost_ranges["lru_scan_miss"], [90, 200]);
    let xeon = load(&d, &["machine.profile=xeon-gold-6154-2s"])
        .unwrap()
        .base;
    assert_eq!(xeon.costs.memcached_request, 3046);
    std::fs::remove_dir_all(&d).unwrap();
    let d = setup("default", &named("default"), PROFILE);
    assert_eq!(load(&d, &[]).unwrap().base.costs, CostTable::default());
    std::fs::remove_dir_all(&d).unwrap();
}

/// An unknown name is an error at `machine.profile` listing the names there are; a name
/// with a '/' or a `.toml` ending is a file.
#[test]
fn an_unknown_name_lists_the_known_ones() {
    let scenario = SCENARIO.replace("\"host.toml\"", "\"epyc\"");
    let d = setup("unknown-name", &scenario, PROFILE);
    let e = load(&d, &[]).unwrap_err();
    assert_eq!(
        (e.line, e.field.as_str()),
        (Some(5), "machine.profile"),
        "{e}"
    );
    assert!(
        e.message.contains("no machine profile named \"epyc\""),
        "{e}"
    );
    for name in reclaimsim::scenario::profile::names() {
        assert!(e.message.contains(name), "{e}");
    }
    let e = load(&d, &["machine.profile=xeon"]).unwrap_err();
    assert!(e.from_set && e.message.contains("default, "), "{e}");
    let e = load(&d, &["machine.profile=./epyc"]).unwrap_err();
    assert!(
        e.message.contains("cannot read machine profile ./epyc"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Every seed scenario names its seed's shipped profile.
#[test]
fn every_seed_scenario_sets_its_machines_profile() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seeds");
    let expected = [
        ("000", "xeon-gold-6154-2s"),
        // The kswapd profile rows ran on the series' client Chromebook, the server row on
        // its server (shared/design/seed-setups.md).
        ("002-look-around-client", "snapdragon-7c"),
        ("002", "xeon-gold-6154-2s"),
        ("003", "epyc-7k62-2s"),
        ("004", "xeon-sp-26c-2s"),
        ("mglru-vs-classic", "xeon-gold-6154-2s"),
    ];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let (_, name) = expected.iter().find(|(p, _)| file.starts_with(p)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(&format!("profile = \"{name}\"")), "{file}");
    }
}
