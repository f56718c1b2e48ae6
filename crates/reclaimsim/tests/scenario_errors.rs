//! Every class of bad scenario gets an error naming the file, the line and the field.

use reclaimsim::scenario::{self, ScenarioError};

const GOOD: &str = r#"name = "small"
[machine]
memory = "64MiB"
cpus = 2

[[memcg]]
path = "/a"
max = "32MiB"

[[workload]]
name = "a"
memcg = "/a"
[workload.anon]
size = "8MiB"
"#;

/// `GOOD` with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{needle} not in text"))
}

fn error(text: &str, sets: &[&str]) -> ScenarioError {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match scenario::parse(text, "s.toml", &sets, None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// Assert the error is in `s.toml` at the line containing `needle`, about `field`.
fn assert_at(e: &ScenarioError, text: &str, needle: &str, field: &str) {
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_str()),
        ("s.toml", Some(line(text, needle)), field),
        "{e}"
    );
    assert!(!e.from_set, "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("s.toml:{}: {field}: ", line(text, needle))),
        "{e}"
    );
}

#[test]
fn good_scenario_loads() {
    let s = scenario::parse(GOOD, "s.toml", &[], None).unwrap();
    assert_eq!(s.base.machine.memory.0, 64 << 20);
    assert_eq!(s.variants.len(), 1);
    assert_eq!(s.variants[0].0, "base");
}

#[test]
fn syntax_error() {
    let text = edit("memory = \"64MiB\"", "memory = \"64MiB");
    let e = error(&text, &[]);
    assert_at(&e, &text, "memory = ", "memory");
    assert!(e.message.contains("TOML syntax"), "{e}");
}

#[test]
fn unknown_key() {
    let text = edit("cpus = 2", "cpus = 2\nmemroy = 3");
    let e = error(&text, &[]);
    assert_at(&e, &text, "memroy", "machine.memroy");
    assert!(e.message.contains("unknown field `memroy`"), "{e}");
}

#[test]
fn unknown_key_in_a_workload() {
    let text = edit("size = \"8MiB\"", "size = \"8MiB\"\nsise = 1");
    assert_at(&error(&text, &[]), &text, "sise", "workload[0].anon.sise");
}

#[test]
fn wrong_type() {
    let text = edit("cpus = 2", "cpus = \"two\"");
    assert_at(&error(&text, &[]), &text, "cpus = ", "machine.cpus");
}

#[test]
fn negative_size() {
    let text = edit("size = \"8MiB\"", "size = -1");
    let e = error(&text, &[]);
    assert_at(&e, &text, "size = -1", "workload[0].anon.size");
    assert!(e.message.contains("negative"), "{e}");
}

#[test]
fn absurd_size() {
    let text = edit("max = \"32MiB\"", "max = \"2000TiB\"");
    assert_at(&error(&text, &[]), &text, "max = ", "memcg[0].max");
}

#[test]
fn bad_swap_device_settings() {
    let swap = |inner: &str| {
        edit(
            "cpus = 2\n",
            &format!("cpus = 2\nswap = {{ size = \"64MiB\", {inner} }}\n"),
        )
    };
    for (inner, field, message) in [
        ("device = \"hdd\"", "machine.swap.device", "unknown variant"),
        (
            "device = \"ssd\", profile = \"usb\"",
            "machine.swap.profile",
            "unknown variant",
        ),
        ("device = \"ssd\", profile = 3", "machine.swap.profile", ""),
        (
            "device = \"ssd\", queue_depth = 3",
            "machine.swap.queue_depth",
            "unknown field",
        ),
        (
            "device = \"zram\", mem_limit = \"lots\"",
            "machine.swap.mem_limit",
            "not a size",
        ),
        (
            "device = \"zram\", mem_limit = -1",
            "machine.swap.mem_limit",
            "negative",
        ),
        (
            "device = \"zram\", mem_limit = \"2000TiB\"",
            "machine.swap.mem_limit",
            "absurd",
        ),
    ] {
        let text = swap(inner);
        let e = error(&text, &[]);
        assert_at(&e, &text, "swap = ", field);
        assert!(e.message.contains(message), "{e}");
    }
    for inner in [
        "device = \"ssd\"",
        "device = \"ssd\", profile = \"sata\"",
        "device = \"zram\", profile = \"sata\"",
        // Above RAM is fine: the kernel takes it.
        "device = \"zram\", mem_limit = \"1GiB\"",
        "device = \"zram\", mem_limit = \"0\"",
        // Unused with another device, so that a variant can switch devices.
        "device = \"ssd\", mem_limit = \"64MiB\"",
    ] {
        scenario::parse(&swap(inner), "s.toml", &[], None).unwrap();
    }
    // vm.page-cluster: 0 to 31.
    let text = format!("{GOOD}[kernel]\npage_cluster = 32\n");
    let e = error(&text, &[]);
    assert_at(&e, &text, "page_cluster", "kernel.page_cluster");
    assert!(e.message.contains("0 to 31"), "{e}");
    // The SSD's queue depth: at least one request.
    for (profile, field) in [("nvme", "nvme_queue_depth"), ("sata", "sata_queue_depth")] {
        let text = format!(
            "{}[costs]\n{field} = 0\n",
            swap(&format!("device = \"ssd\", profile = \"{profile}\""))
        );
        let e = error(&text, &[]);
        assert_at(&e, &text, field, &format!("costs.{field}"));
        assert!(e.message.contains("at least 1"), "{e}");
    }
}

#[test]
fn bad_zswap_settings() {
    let swap = |zswap: &str| {
        edit(
            "cpus = 2\n",
            &format!("cpus = 2\nswap = {{ device = \"ramdisk\", size = \"64MiB\", zswap = {{ {zswap} }} }}\n"),
        )
    };
    for (zswap, field, message) in [
        (
            "compressor = \"lzma\"",
            "machine.swap.zswap.compressor",
            "unknown variant",
        ),
        (
            "zpool = \"zram\"",
            "machine.swap.zswap.zpool",
            "unknown variant",
        ),
        (
            "max_pool_percent = 101",
            "machine.swap.zswap.max_pool_percent",
            "0 to 100",
        ),
        (
            "accept_threshold_percent = 200",
            "machine.swap.zswap.accept_threshold_percent",
            "0 to 100",
        ),
        (
            "max_pool_percent = -1",
            "machine.swap.zswap.max_pool_percent",
            "",
        ),
        (
            "same_filled = true",
            "machine.swap.zswap.same_filled",
            "unknown field",
        ),
    ] {
        let text = swap(zswap);
        let e = error(&text, &[]);
        assert_at(&e, &text, "swap = ", field);
        assert!(e.message.contains(message), "{e}");
    }
    for zswap in [
        "",
        "compressor = \"lzo-rle\", zpool = \"zsmalloc\"",
        "compressor = \"zstd\"",
    ] {
        scenario::parse(&swap(zswap), "s.toml", &[], None).unwrap();
    }
    // page_content: known kinds, shares adding up to 100.
    for (content, message) in [
        ("{ zero = 50 }", "add up to 50"),
        ("{ text = 100 }", "unknown field"),
    ] {
        let text = edit(
            "memcg = \"/a\"\n",
            &format!("memcg = \"/a\"\npage_content = {content}\n"),
        );
        let e = error(&text, &[]);
        assert!(e.field.starts_with("workload[0].page_content"), "{e}");
        assert_eq!(e.line, Some(line(&text, "page_content")), "{e}");
        assert!(e.message.contains(message), "{e}");
    }
}

#[test]
fn bad_zswap_max() {
    for (value, message) in [
        ("\"lots\"", "not a size"),
        ("-4", "negative"),
        ("\"2000TiB\"", "absurd"),
    ] {
        let text = edit(
            "max = \"32MiB\"",
            &format!("max = \"32MiB\"\nzswap_max = {value}"),
        );
        let e = error(&text, &[]);
        assert_at(&e, &text, "zswap_max = ", "memcg[0].zswap_max");
        assert!(e.message.contains(message), "{e}");
    }
    for value in ["\"max\"", "\"0\"", "0", "\"16MiB\""] {
        let text = edit(
            "max = \"32MiB\"",
            &format!("max = \"32MiB\"\nzswap_max = {value}"),
        );
        scenario::parse(&text, "s.toml", &[], None).unwrap();
    }
}

#[test]
fn bad_swap_max() {
    for (value, message) in [
        ("\"lots\"", "not a size"),
        ("-4", "negative"),
        ("\"2000TiB\"", "absurd"),
    ] {
        let text = edit(
            "max = \"32MiB\"",
            &format!("max = \"32MiB\"\nswap_max = {value}"),
        );
        let e = error(&text, &[]);
        assert_at(&e, &text, "swap_max = ", "memcg[0].swap_max");
        assert!(e.message.contains(message), "{e}");
    }
    // "max" and "0" are what cgroup v2 takes.
    for value in ["\"max\"", "\"0\"", "0"] {
        let text = edit(
            "max = \"32MiB\"",
            &format!("max = \"32MiB\"\nswap_max = {value}"),
        );
        scenario::parse(&text, "s.toml", &[], None).unwrap();
    }
}

#[test]
fn missing_field_points_at_its_table() {
    let text = edit("memory = \"64MiB\"\n", "");
    let e = error(&text, &[]);
    assert_at(&e, &text, "[machine]", "machine.memory");
    assert!(e.message.contains("missing field"), "{e}");
}

#[test]
fn missing_memcg() {
    let text = edit("memcg = \"/a\"", "memcg = \"/nope\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "memcg = ", "workload[0].memcg");
    assert!(e.message.contains("/nope"), "{e}");
}

#[test]
fn undeclared_parent_memcg() {
    let text = edit("path = \"/a\"", "path = \"/b/a\"");
    assert_at(&error(&text, &[]), &text, "path = ", "memcg[0].path");
}

#[test]
fn machine_too_big() {
    let text = edit("memory = \"64MiB\"", "memory = \"512TiB\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "memory = ", "machine.memory");
    assert!(e.message.contains("host memory"), "{e}");
}

/// A workload too big for this host is blamed, not the machine's memory (issue 22).
#[test]
fn workload_too_big_for_the_host() {
    let text = edit("size = \"8MiB\"", "size = \"1000TiB\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "size = ", "workload[0].anon.size");
    assert!(e.message.contains("workload \"a\"'s 1000.0 TiB"), "{e}");
    assert!(e.message.contains("host memory"), "{e}");
}

/// The memory range's message states the limit `1PiB` and `1024TiB` are refused at.
#[test]
fn machine_memory_range_states_the_limit_it_refuses_at() {
    for (memory, shown) in [
        ("1024TiB", "1.0 PiB"),
        ("1PiB", "1.0 PiB"),
        ("1MiB", "1.0 MiB"),
    ] {
        let text = edit("memory = \"64MiB\"", &format!("memory = \"{memory}\""));
        let e = error(&text, &[]);
        assert_at(&e, &text, "memory = ", "machine.memory");
        let want = format!("{shown} is out of range: at least 16 MiB, less than 1 PiB");
        assert_eq!(e.message, want, "{e}");
    }
}

#[test]
fn cpu_out_of_range() {
    let text = edit("memcg = \"/a\"", "memcg = \"/a\"\ncpus = [0, 5]");
    assert_at(
        &error(&text, &[]),
        &text,
        "cpus = [0, 5]",
        "workload[0].cpus[1]",
    );
}

#[test]
fn workload_that_does_not_build() {
    let text = edit("size = \"8MiB\"", "size = 0");
    assert_at(
        &error(&text, &[]),
        &text,
        "size = 0",
        "workload[0].anon.size",
    );
    // An option left at its default is reported at its table.
    let text = edit(
        "size = \"8MiB\"",
        "size = \"8MiB\"\n[[workload.anon.mix]]\nweight = 0",
    );
    assert_at(
        &error(&text, &[]),
        &text,
        "[workload.anon]",
        "workload[0].anon",
    );
    let text = edit(
        "[workload.anon]\nsize = \"8MiB\"",
        "fio = { size = \"1m\", rw = \"trim\" }",
    );
    assert_at(&error(&text, &[]), &text, "fio = {", "workload[0].fio.rw");
}

#[test]
fn wait_for_names_a_missing_workload() {
    let text = edit(
        "size = \"8MiB\"",
        "size = \"8MiB\"\n[[workload.anon.phase]]\nwait_for = \"b\"",
    );
    let e = error(&text, &[]);
    assert_at(&e, &text, "[workload.anon]", "workload[0].anon");
    assert!(
        e.message
            .contains("phase `phase1`: wait_for: no [[workload]] named \"b\""),
        "{e}"
    );
}

/// Two workloads each waiting for a phase of the other that comes after the wait.
#[test]
fn waits_that_never_end_are_errors() {
    let two = |a_phase: &str, b: &str| {
        edit(
            "size = \"8MiB\"\n",
            &format!(
                "size = \"8MiB\"\n[[workload.anon.phase]]\nname = \"again\"\n{a_phase}\n\
                 [[workload]]\nname = \"b\"\n{b}\nanon = {{ size = \"1MiB\" }}\n"
            ),
        )
    };
    let text = two("wait_for = \"b\"", "after = \"a:again\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "[workload.anon]", "workload[0].anon");
    assert!(
        e.message.contains(
            "a:again waits for b:run, b:run starts after a:again: a wait that never ends"
        ),
        "{e}"
    );
    let b =
        "after = \"b2\"\nanon = { size = \"1MiB\" }\n[[workload]]\nname = \"b2\"\nafter = \"b\"";
    let text = two("", b);
    let e = error(&text, &[]);
    assert_at(&e, &text, "after = \"b2\"", "workload[1].after");
    // Each waiting for the other's first phase is fine.
    let ok = two("wait_for = \"b:run\"", "after = \"a:run\"");
    scenario::parse(&ok, "s.toml", &[], None).unwrap();
}

#[test]
fn after_names_a_missing_workload() {
    let text = edit("memcg = \"/a\"", "memcg = \"/a\"\nafter = \"b\"");
    assert_at(&error(&text, &[]), &text, "after = ", "workload[0].after");
    let text = edit("memcg = \"/a\"", "memcg = \"/a\"\nafter = \"a\"");
    assert!(error(&text, &[]).message.contains("itself"));
}

#[test]
fn bad_set_key() {
    let e = error(GOOD, &["machine.memroy=8GiB"]);
    assert_eq!(
        (e.line, e.field.as_str(), e.from_set),
        (None, "machine.memroy", true),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("--set machine.memroy: unknown field `memroy`"),
        "{e}"
    );
    let e = error(GOOD, &["machine.memory"]);
    assert_eq!(
        (e.field.as_str(), e.from_set),
        ("machine.memory", true),
        "{e}"
    );
}

#[test]
fn bad_set_value() {
    let e = error(GOOD, &["machine.memory=1KiB"]);
    assert_eq!(
        (e.field.as_str(), e.from_set),
        ("machine.memory", true),
        "{e}"
    );
    let e = error(GOOD, &["workload.b.anon.size=1"]);
    assert_eq!(
        (e.field.as_str(), e.from_set),
        ("workload.b.anon.size", true),
        "{e}"
    );
    assert!(e.message.contains("\"b\""), "{e}");
}

#[test]
fn variant_addressing_a_missing_workload() {
    let text = format!("{GOOD}\n[variants.big.workload.b.anon]\nsize = \"16MiB\"\n");
    assert_at(
        &error(&text, &[]),
        &text,
        "[variants.big",
        "variants.big.workload.b",
    );
}

#[test]
fn bad_variant_value_points_at_the_variant() {
    let text = format!("{GOOD}\n[variants.small]\nmachine.cpus = 0\n");
    let e = error(&text, &[]);
    assert_at(&e, &text, "machine.cpus = 0", "machine.cpus");
    assert!(e.message.contains("(in variant \"small\")"), "{e}");
}

#[test]
fn variants_merge_in_file_order_and_set_wins() {
    let text = format!(
        "{GOOD}\n[variants.zeta]\nmachine.cpus = 4\n[variants.alpha.workload.a.anon]\nsize = \"16MiB\"\n[variants.alpha.memcg.\"/a\"]\nmax = \"48MiB\"\n"
    );
    let sets = ["machine.cpus=3".to_string()];
    let s = scenario::parse(&text, "s.toml", &sets, Some(9)).unwrap();
    let names: Vec<&str> = s.variants.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);
    let (zeta, alpha) = (&s.variants[0].1, &s.variants[1].1);
    assert_eq!(
        (s.base.machine.cpus, zeta.machine.cpus, alpha.machine.cpus),
        (3, 3, 3)
    );
    assert_eq!(
        alpha.workloads[0].anon.as_ref().map(|a| a.size.0),
        Some(16 << 20)
    );
    assert_eq!(alpha.memcgs[0].max.map(|m| m.0), Some(48 << 20));
    assert_eq!(
        zeta.workloads[0].anon.as_ref().map(|a| a.size.0),
        Some(8 << 20)
    );
    assert!([s.base.seed, zeta.seed, alpha.seed]
        .iter()
        .all(|&seed| seed == 9));
}

#[test]
fn load_names_the_file() {
    let dir = std::env::temp_dir().join(format!("reclaimsim-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, edit("cpus = 2", "cpus = -2")).unwrap();
    let e = scenario::load(&path, &[], None).unwrap_err();
    assert_eq!((e.file, e.line), (path.display().to_string(), Some(4)));
    assert!(scenario::load(&dir.join("missing.toml"), &[], None).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A good `[[expect]]` comparing `GOOD`'s two variants below.
const EXPECT: &str = r#"metric = "workloads.a.ops_per_sec"
from = "small"
to = "large"
change = ["+1%", "+3%"]
source = "a mail, its table"
"#;

/// `GOOD` with variants "small" and "large" and `[[expect]]` tables of `EXPECT`, the
/// last one edited from `from` to `to`.
fn expecting(tables: usize, from: &str, to: &str) -> String {
    assert!(EXPECT.contains(from), "{from}");
    let mut text = format!(
        "{GOOD}\n[variants.small]\nmachine.cpus = 2\n\n[variants.large]\nmachine.cpus = 3\n"
    );
    for i in 0..tables {
        let body = if i + 1 == tables {
            EXPECT.replacen(from, to, 1)
        } else {
            EXPECT.to_string()
        };
        text.push_str(&format!("\n[[expect]]\n{body}"));
    }
    text
}

/// Assert the error is about `field` on the last line of `text` containing `needle`
/// (the last `[[expect]]` is the edited one).
fn assert_last_at(e: &ScenarioError, text: &str, needle: &str, field: &str) {
    let line = text
        .lines()
        .collect::<Vec<_>>()
        .iter()
        .rposition(|l| l.contains(needle))
        .unwrap()
        + 1;
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_str()),
        ("s.toml", Some(line), field),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("s.toml:{line}: {field}: ")),
        "{e}"
    );
}

#[test]
fn expectations_load() {
    let text = expecting(2, "source", "source");
    let s = scenario::parse(&text, "s.toml", &[], None).unwrap();
    assert_eq!(s.expects.len(), 2);
    let e = &s.expects[1];
    assert_eq!(
        (e.metric.text.as_str(), e.from.as_str(), e.to.as_str()),
        ("workloads.a.ops_per_sec", "small", "large")
    );
    assert_eq!((e.change.low, e.change.high), (0.01, 0.03));
    assert_eq!(e.source, "a mail, its table");
    let needed: Vec<&str> = s
        .expected_variants()
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(needed, ["small", "large"]);
    let one = expecting(1, "change = [\"+1%\", \"+3%\"]", "change = \"3.0x\"");
    let s = scenario::parse(&one, "s.toml", &[], None).unwrap();
    assert_eq!(
        (s.expects[0].change.low, s.expects[0].change.high),
        (2.0, 2.0)
    );
}

#[test]
fn expect_names_a_missing_variant() {
    let text = expecting(2, "from = \"small\"", "from = \"tiny\"");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "from = ", "expect[1].from");
    assert!(
        e.message
            .contains("no variant \"tiny\" (there are: small, large)"),
        "{e}"
    );
    let text = expecting(1, "to = \"large\"", "to = \"huge\"");
    assert_last_at(&error(&text, &[]), &text, "to = ", "expect[0].to");
    let text = expecting(1, "to = \"large\"", "to = \"small\"");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "to = ", "expect[0].to");
    assert!(e.message.contains("always be 0"), "{e}");
}

#[test]
fn expect_with_a_bad_change() {
    let text = expecting(1, "\"+3%\"", "\"+3\"");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "change = ", "expect[0].change[1]");
    assert!(e.message.contains("\"+3\": not a change"), "{e}");
    for bad in [
        "\"fast\"",
        "3",
        "[]",
        "[\"+1%\", \"+2%\", \"+3%\"]",
        "[\"+3%\", \"+1%\"]",
    ] {
        let text = expecting(1, "[\"+1%\", \"+3%\"]", bad);
        assert_last_at(&error(&text, &[]), &text, "change = ", "expect[0].change");
    }
}

#[test]
fn expect_with_an_empty_or_bad_metric() {
    let text = expecting(1, "\"workloads.a.ops_per_sec\"", "\"\"");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "metric = ", "expect[0].metric");
    assert!(e.message.starts_with("empty"), "{e}");
    let text = expecting(1, "workloads.a.", "workloads..");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "metric = ", "expect[0].metric");
    assert!(e.message.contains("expected a key"), "{e}");
}

#[test]
fn expect_with_an_unknown_key_a_wrong_type_or_a_missing_field() {
    let text = expecting(1, "source", "sauce");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "sauce", "expect[0].sauce");
    assert!(e.message.contains("unknown field `sauce`"), "{e}");
    let text = expecting(1, "from = \"small\"", "from = 1");
    assert_last_at(&error(&text, &[]), &text, "from = 1", "expect[0].from");
    let text = expecting(1, "to = \"large\"\n", "");
    let e = error(&text, &[]);
    assert_last_at(&e, &text, "[[expect]]", "expect[0].to");
    assert!(e.message.contains("missing field"), "{e}");
}

#[test]
fn seed_scenarios_state_their_expectations() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seeds");
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let s = scenario::load(&path, &[], None).unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.expects.is_empty(), "{}: no [[expect]]", path.display());
        assert!(
            s.expects.iter().all(|e| !e.source.is_empty()),
            "{}",
            path.display()
        );
        files += 1;
    }
    assert_eq!(files, 9);
}

/// CPUs are split evenly over the nodes: 4 CPUs on 8 nodes, or on 3, are refused.
#[test]
fn cpus_must_split_evenly_over_nodes() {
    for nodes in [8, 3] {
        let text = edit("cpus = 2", &format!("cpus = 4\nnodes = {nodes}"));
        let text = text.replace("memory = \"64MiB\"", "memory = \"1GiB\"");
        let e = error(&text, &[]);
        assert_at(&e, &text, "cpus = 4", "machine.cpus");
        assert!(e.to_string().contains("split evenly"), "{e}");
    }
}

#[test]
fn a_fio_phase_cannot_change_the_files_and_its_errors_name_it() {
    let fio = "[workload.fio]\nsize = \"8MiB\"\n[[workload.fio.phase]]\n";
    let text = edit(
        "[workload.anon]\nsize = \"8MiB\"",
        &format!("{fio}size = \"16MiB\""),
    );
    let e = error(&text, &[]);
    assert_at(
        &e,
        &text,
        "size = \"16MiB\"",
        "workload[0].fio.phase[0].size",
    );
    assert!(e.message.contains("unknown field `size`"), "{e}");
    let text = edit(
        "[workload.anon]\nsize = \"8MiB\"",
        &format!("{fio}rw = \"trim\""),
    );
    let e = error(&text, &[]);
    assert_at(&e, &text, "[workload.fio]", "workload[0].fio");
    assert!(e.message.starts_with("fio.phase[0].rw: `trim`"), "{e}");
}

#[test]
fn min_ttl_with_the_v11_posting_is_an_error() {
    for value in ["v11", "v11-patch1-8"] {
        let text = format!(
            "{GOOD}\n[kernel]\npolicy = \"mglru\"\nmemcg_reclaim = \"{value}\"\nmin_ttl_ms = 1000\n"
        );
        let e = error(&text, &[]);
        assert_at(&e, &text, "min_ttl_ms", "kernel.min_ttl_ms");
        assert!(e.to_string().contains("no min_ttl_ms"), "{e}");
    }
    let text = format!("{GOOD}\n[kernel]\npolicy = \"mglru\"\nmin_ttl_ms = 1000\n");
    scenario::parse(&text, "s.toml", &[], None).expect("6.1 has min_ttl_ms");
}

/// `GOOD` on a machine given by its topology keys instead of `cpus = 2`.
fn with_machine(keys: &str) -> String {
    edit("cpus = 2", keys)
}

#[test]
fn topology_needs_cores_per_socket() {
    let text = with_machine("sockets = 2\nthreads_per_core = 2");
    let e = error(&text, &[]);
    assert_eq!(e.field, "machine.cores_per_socket", "{e}");
    assert!(e.message.contains("required"), "{e}");
}

#[test]
fn topology_keys_at_least_one() {
    for key in ["sockets", "cores_per_socket", "threads_per_core"] {
        let keys = format!("cores_per_socket = 2\n{key} = 0").replacen(
            "cores_per_socket = 2\ncores_per_socket = 0",
            "cores_per_socket = 0",
            1,
        );
        let text = with_machine(&keys);
        let needle = format!("{key} = 0");
        assert_at(
            &error(&text, &[]),
            &text,
            &needle,
            &format!("machine.{key}"),
        );
    }
}

#[test]
fn topology_cpus_must_match() {
    let text = with_machine("cpus = 8\nsockets = 1\ncores_per_socket = 2\nthreads_per_core = 2");
    let e = error(&text, &[]);
    assert_at(&e, &text, "cpus = 8", "machine.cpus");
    assert!(
        e.message.contains("8 CPUs") && e.message.contains("= 4 CPUs"),
        "{e}"
    );
}

#[test]
fn topology_too_many_cpus() {
    let text = with_machine("sockets = 8\ncores_per_socket = 300\nthreads_per_core = 2");
    let e = error(&text, &[]);
    assert_at(&e, &text, "cores_per_socket", "machine.cores_per_socket");
    assert!(e.message.contains("4800 CPUs: must be 1 to 4096"), "{e}");
}

#[test]
fn topology_nodes_per_socket() {
    let text =
        with_machine("nodes = 4\nsockets = 2\ncores_per_socket = 4").replace("64MiB", "256MiB");
    let e = error(&text, &[]);
    assert_at(&e, &text, "nodes = 4", "machine.nodes");
    assert!(e.message.contains("1 or one per socket"), "{e}");
    let text = with_machine("nodes = 4\ncores_per_socket = 6\nthreads_per_core = 2")
        .replace("64MiB", "256MiB");
    let e = error(&text, &[]);
    assert_at(&e, &text, "nodes = 4", "machine.nodes");
    assert!(e.message.contains("cannot split the 6 cores"), "{e}");
}

#[test]
fn cpulist_syntax_error() {
    let text = edit("memcg = \"/a\"", "memcg = \"/a\"\ncpus = \"0-x\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "cpus = \"0-x\"", "workload[0].cpus");
    assert!(
        e.message.starts_with("\"0-x\": \"x\" is not a CPU number"),
        "{e}"
    );
}

#[test]
fn cpulist_out_of_range() {
    let text = edit("memcg = \"/a\"", "memcg = \"/a\"\ncpus = \"0-2\"");
    let e = error(&text, &[]);
    assert_eq!(e.line, Some(line(&text, "cpus = \"0-2\"")), "{e}");
    assert!(e.field.starts_with("workload[0].cpus"), "{e}");
    assert!(e.message.contains("CPU 2 does not exist"), "{e}");
}

/// `machine.little_cpus`: each CPU must exist; its syntax is a cpulist's; with `--set`.
#[test]
fn little_cpus_out_of_range() {
    let text = edit("cpus = 2", "cpus = 2\nlittle_cpus = \"0-2\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "little_cpus", "machine.little_cpus");
    assert_eq!(
        e.message, "CPU 2 does not exist (the machine has 2 CPUs)",
        "{e}"
    );
    let text = edit("cpus = 2", "cpus = 2\nlittle_cpus = [1, 7]");
    let e = error(&text, &[]);
    assert_at(&e, &text, "little_cpus", "machine.little_cpus");
    assert!(e.message.starts_with("CPU 7 does not exist"), "{e}");
    let text = edit("cpus = 2", "cpus = 2\nlittle_cpus = \"0-x\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "little_cpus", "machine.little_cpus");
    assert!(e.message.contains("\"x\" is not a CPU number"), "{e}");
    let e = error(GOOD, &["machine.little_cpus=\"1-3\""]);
    assert!(e.from_set && e.field == "machine.little_cpus", "{e}");
    assert!(e.message.starts_with("CPU 2 does not exist"), "{e}");
    let ok = edit("cpus = 2", "cpus = 2\nlittle_cpus = \"1\"");
    assert!(scenario::parse(&ok, "s.toml", &[], None).is_ok());
}

#[test]
fn cpulist_in_instances_names_the_template() {
    let text = edit(
        "memcg = \"/a\"",
        "memcg = \"/a\"\ncpus = \"1-\"\ncpus_per_instance = 1",
    );
    let e = error(&text, &[]);
    assert_at(&e, &text, "cpus = \"1-\"", "workload[0].cpus");
}

#[test]
fn workload_node_must_exist() {
    let text = edit("memcg = \"/a\"", "memcg = \"/a\"\nnode = 1");
    let e = error(&text, &[]);
    assert_at(&e, &text, "node = 1", "workload[0].node");
    assert!(e.message.contains("node 1 does not exist"), "{e}");
}

#[test]
fn workload_node_and_cpus_must_meet() {
    let text = edit("cpus = 2", "cpus = 2\nnodes = 2")
        .replace("64MiB", "128MiB")
        .replacen(
            "memcg = \"/a\"\n[",
            "memcg = \"/a\"\ncpus = [0]\nnode = 1\n[",
            1,
        );
    let e = error(&text, &[]);
    assert_at(&e, &text, "node = 1", "workload[0].node");
    assert!(e.message.contains("none of the workload's cpus"), "{e}");
}

/// `GOOD` with one `[[event]]` of these lines at the end.
fn with_event(lines: &str) -> String {
    format!("{GOOD}[[event]]\nat = \"1s\"\n{lines}")
}

#[test]
fn event_values_are_checked_where_written() {
    let cases = [
        (
            "memcg = \"/a\"\nfile = \"memory.max\"\nvalue = \"64XB\"\n",
            "value = \"64XB\"",
            "event[0].value",
        ),
        (
            "memcg = \"/a\"\nfile = \"memory.foo\"\nvalue = \"1MiB\"\n",
            "file = \"memory.foo\"",
            "event[0].file",
        ),
        (
            "memcg = \"/b\"\nfile = \"memory.high\"\nvalue = \"1MiB\"\n",
            "memcg = \"/b\"",
            "event[0].memcg",
        ),
        (
            "memcg = \"/a\"\nfile = \"memory.swap.max\"\nvalue = \"lots\"\n",
            "value = \"lots\"",
            "event[0].value",
        ),
        (
            "memcg = \"/\"\nfile = \"memory.swap.max\"\nvalue = \"max\"\n",
            "file = \"memory.swap.max\"",
            "event[0].file",
        ),
        (
            "memcg = \"/a\"\nfile = \"memory.zswap.max\"\nvalue = \"-1\"\n",
            "value = \"-1\"",
            "event[0].value",
        ),
        (
            "memcg = \"/\"\nfile = \"memory.zswap.max\"\nvalue = \"0\"\n",
            "file = \"memory.zswap.max\"",
            "event[0].file",
        ),
        (
            "sysctl = \"vm.swappiness\"\nvalue = 201\n",
            "value = 201",
            "event[0].value",
        ),
        (
            "sysctl = \"vm.swappiness\"\nvalue = 1\ncommand = \"+ /a 0 max\"\n",
            "sysctl = ",
            "event[0].sysctl",
        ),
    ];
    for (lines, needle, field) in cases {
        let text = with_event(lines);
        let e = error(&text, &[]);
        assert_at(&e, &text, needle, field);
    }
    // Neither command, file nor sysctl: the event's table.
    let text = with_event("");
    let e = error(&text, &[]);
    assert_at(&e, &text, "[[event]]", "event[0].command");
    assert!(e.message.contains("exactly one of"), "{e}");
}

#[test]
fn bad_plugins_name_their_key() {
    let with = |kernel: &str| edit("cpus = 2\n", &format!("cpus = 2\n[kernel]\n{kernel}\n"));
    // A plugin without its table, and a table without the plugin policy.
    let text = with("policy = \"plugin\"");
    let e = error(&text, &[]);
    assert_at(&e, &text, "policy = ", "kernel.policy");
    assert!(e.message.contains("kernel.plugin"), "{e}");
    let text = with("plugin = { name = \"fifo\" }");
    let e = error(&text, &[]);
    assert_at(&e, &text, "plugin = ", "kernel.plugin");
    assert!(e.message.contains("policy = \"plugin\""), "{e}");
    // An unknown plugin lists the ones there are.
    let text = with("policy = \"plugin\"\nplugin = { name = \"clock\" }");
    let e = error(&text, &[]);
    assert_at(&e, &text, "plugin = ", "kernel.plugin.name");
    assert!(e.message.contains("fifo, mru, lfu, s3fifo"), "{e}");
    // An undeclared memcg, and an unknown key.
    let text = with("policy = \"plugin\"\nplugin = { name = \"fifo\", memcg = \"/b\" }");
    let e = error(&text, &[]);
    assert_at(&e, &text, "plugin = ", "kernel.plugin.memcg");
    assert!(e.message.contains("/b"), "{e}");
    let text = with("policy = \"plugin\"\nplugin = { name = \"fifo\", memcgs = \"/a\" }");
    let e = error(&text, &[]);
    assert_at(&e, &text, "plugin = ", "kernel.plugin.memcgs");
    // A Python policy from the command line's parse points to the Python API.
    let text = with("policy = \"plugin\"\nplugin = { name = \"python\", memcg = \"/a\" }");
    let e = error(&text, &[]);
    assert_at(&e, &text, "plugin = ", "kernel.plugin.name");
    assert!(e.message.contains("policy=MyPolicy"), "{e}");
    assert!(scenario::parse_python(&text, "s.toml", &[], None).is_ok());
    // `pages` is "file" or "all".
    let text = with("policy = \"plugin\"\nplugin = { name = \"fifo\", pages = \"anon\" }");
    let e = error(&text, &[]);
    assert_at(&e, &text, "plugin = ", "kernel.plugin.pages");
    assert!(e.message.contains("all"), "{e}");
    // And good ones load.
    let text = with("policy = \"plugin\"\nplugin = { name = \"s3fifo\", memcg = \"/a\" }");
    scenario::parse(&text, "s.toml", &[], None).unwrap();
    let text = with("policy = \"plugin\"\nplugin = { name = \"fifo\", pages = \"all\" }");
    scenario::parse(&text, "s.toml", &[], None).unwrap();
}

#[test]
fn a_kernel_variant_is_recorded_and_its_scenario_has_no_backend() {
    let text = format!(
        "{GOOD}\n[variants.model]\n\n[variants.linux]\nbackend = \"kernel\"\nkernel.policy = \"classic\"\n"
    );
    let l = scenario::parse(&text, "s.toml", &[], None).unwrap();
    let names: Vec<&str> = l.variants.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["model", "linux"]);
    assert_eq!(l.kernel_variants.len(), 1);
    assert_eq!(l.kernel_variants[0].name, "linux");
    assert_eq!(l.kernel_variants[0].line, line(&text, "backend"));
    assert!(l.is_kernel("linux") && !l.is_kernel("model"));
    // The rest of the variant merges as any variant's does.
    let linux = &l.variants[1].1;
    assert_eq!(format!("{:?}", linux.kernel.policy), "Classic");
    let e = l.kernel_variant_error("linux", "use `reclaimsim kernel`");
    assert_eq!(e.line, Some(line(&text, "backend")), "{e}");
    assert_eq!(e.field, "variants.linux.backend");
    // `backend = "model"` is the default, said out loud.
    let model = text.replace(
        "[variants.model]\n",
        "[variants.model]\nbackend = \"model\"\n",
    );
    let l = scenario::parse(&model, "s.toml", &[], None).unwrap();
    assert_eq!(l.kernel_variants.len(), 1);
}

#[test]
fn a_bad_backend_is_located() {
    let text = format!("{GOOD}\n[variants.linux]\nbackend = \"qemu\"\n");
    let e = error(&text, &[]);
    assert_at(&e, &text, "backend", "variants.linux.backend");
    assert!(
        e.message.contains("\"model\"") && e.message.contains("\"kernel\""),
        "{e}"
    );
    let text = format!("backend = \"kernel\"\n{GOOD}");
    let e = error(&text, &[]);
    assert_at(&e, &text, "backend", "backend");
    assert!(e.message.contains("[variants.NAME]"), "{e}");
    let e = error(GOOD, &["backend=kernel"]);
    assert!(e.from_set, "{e}");
}

#[test]
fn bad_zram_writeback_settings() {
    let swap = |inner: &str| {
        edit(
            "cpus = 2\n",
            &format!("cpus = 2\nswap = {{ size = \"64MiB\", {inner} }}\n"),
        )
    };
    for (inner, field, message) in [
        (
            "device = \"ssd\", backing_dev = { profile = \"nvme\" }",
            "machine.swap.backing_dev",
            "zram's",
        ),
        (
            "device = \"zram\", backing_dev = { profile = \"usb\" }",
            "machine.swap.backing_dev.profile",
            "unknown variant",
        ),
        (
            "device = \"zram\", backing_dev = { profil = \"nvme\" }",
            "machine.swap.backing_dev.profil",
            "unknown field",
        ),
        (
            "device = \"zram\", backing_dev = { size = \"4KiB\" }",
            "machine.swap.backing_dev.size",
            "at least 8KiB",
        ),
        (
            "device = \"zram\", comp_algorithm = \"deflate\"",
            "machine.swap.comp_algorithm",
            "unknown variant",
        ),
    ] {
        let text = swap(inner);
        let e = error(&text, &[]);
        assert_at(&e, &text, "swap = ", field);
        assert!(e.message.contains(message), "{e}");
    }
    // The backing device's queue depth: at least one request.
    let text = format!(
        "{}[costs]\nsata_queue_depth = 0\n",
        swap("device = \"zram\", backing_dev = { profile = \"sata\" }")
    );
    let e = error(&text, &[]);
    assert_at(&e, &text, "sata_queue_depth", "costs.sata_queue_depth");
    // Accepted: every compressor; a backing device turned off on another device.
    for inner in [
        "device = \"zram\", comp_algorithm = \"lzo\"",
        "device = \"zram\", comp_algorithm = \"lz4\"",
        "device = \"zram\", comp_algorithm = \"zstd\", backing_dev = { size = \"1GiB\" }",
        "device = \"ssd\", backing_dev = { enabled = false }",
    ] {
        scenario::parse(&swap(inner), "s.toml", &[], None).unwrap();
    }
    // zram's files: on zram only; writeback needs a backing device; the values 6.1
    // takes.
    let zram = |inner: &str, lines: &str| format!("{}[[event]]\nat = \"1s\"\n{lines}", swap(inner));
    let with_bd = "device = \"zram\", backing_dev = { profile = \"nvme\" }";
    for (inner, lines, needle, field, message) in [
        (
            "device = \"ssd\"",
            "sysctl = \"zram.idle\"\nvalue = \"all\"\n",
            "sysctl = ",
            "event[0].sysctl",
            "device = \"zram\"",
        ),
        (
            "device = \"zram\"",
            "sysctl = \"zram.writeback\"\nvalue = \"idle\"\n",
            "sysctl = ",
            "event[0].sysctl",
            "backing_dev",
        ),
        (
            with_bd,
            "sysctl = \"zram.writeback\"\nvalue = \"incompressible\"\n",
            "value = ",
            "event[0].value",
            "idle, huge, huge_idle",
        ),
        (
            with_bd,
            "sysctl = \"zram.idle\"\nvalue = \"60\"\n",
            "value = ",
            "event[0].value",
            "\"all\"",
        ),
        (
            with_bd,
            "sysctl = \"zram.writeback_limit_enable\"\nvalue = 2\n",
            "value = ",
            "event[0].value",
            "0 or 1",
        ),
        (
            with_bd,
            "sysctl = \"zram.writeback_limit\"\nvalue = \"lots\"\n",
            "value = ",
            "event[0].value",
            "4 KiB pages",
        ),
        (
            with_bd,
            "sysctl = \"zram.compact\"\nvalue = 1\n",
            "sysctl = ",
            "event[0].sysctl",
            "zram.writeback",
        ),
    ] {
        let text = zram(inner, lines);
        let e = error(&text, &[]);
        assert_at(&e, &text, needle, field);
        assert!(e.message.contains(message), "{e}");
    }
    // With the device turned off (as a variant would), the write runs to 6.1's ENODEV.
    let text = zram(
        "device = \"zram\", backing_dev = { enabled = false }",
        "sysctl = \"zram.writeback\"\nvalue = \"huge_idle\"\n",
    );
    scenario::parse(&text, "s.toml", &[], None).unwrap();
}

#[test]
fn bad_memcached_lru() {
    let text = edit(
        "[workload.anon]\nsize = \"8MiB\"",
        "[workload.memcached]\nlru = \"lifo\"\n[[workload.memcached.phase]]\nkey-maximum = 10",
    );
    let e = error(&text, &[]);
    assert_at(&e, &text, "lru = ", "workload[0].memcached.lru");
    assert!(e.message.contains("segmented"), "{e}");
    let text = edit(
        "[workload.anon]\nsize = \"8MiB\"",
        "[workload.memcached]\nhash_chains = 1\n[[workload.memcached.phase]]\nkey-maximum = 10",
    );
    let e = error(&text, &[]);
    assert_at(
        &e,
        &text,
        "hash_chains = ",
        "workload[0].memcached.hash_chains",
    );
}

/// `GOOD`'s machine as two `[[machine.node]]` tables of `mem0` and `mem1` with CPUs
/// `cpus0` and `cpus1` (`memory = "64MiB"` stays, `extra` is added to `[machine]`).
fn with_nodes(extra: &str, nodes: [(&str, &str); 2]) -> String {
    let tables: String = nodes
        .iter()
        .map(|(mem, cpus)| format!("[[machine.node]]\nmemory = \"{mem}\"\ncpus = {cpus}\n"))
        .collect();
    edit("cpus = 2\n", &format!("cpus = 2\n{extra}{tables}"))
}

/// `[[machine.node]]`: the memory is their sum, `nodes` their count, each at least 16
/// MiB; every CPU on exactly one node, none past the machine's; the cpulist reads.
#[test]
fn machine_node_tables_are_checked() {
    let good = with_nodes("", [("48MiB", "\"0\""), ("16MiB", "\"1\"")]);
    let s = scenario::parse(&good, "s.toml", &[], None).unwrap().base;
    assert_eq!(
        (s.machine.nodes, s.machine.node_pages()),
        (2, vec![12288, 4096])
    );
    let cases = [
        (
            with_nodes("", [("48MiB", "\"0\""), ("32MiB", "\"1\"")]),
            "memory = \"64MiB\"",
            "machine.memory",
            "differs from the sum",
        ),
        (
            with_nodes("nodes = 3\n", [("48MiB", "\"0\""), ("16MiB", "\"1\"")]),
            "nodes = 3",
            "machine.nodes",
            "2 [[machine.node]] tables",
        ),
        (
            with_nodes("", [("56MiB", "\"0\""), ("8MiB", "\"1\"")]),
            "\"8MiB\"",
            "machine.node[1].memory",
            "at least 16 MiB",
        ),
        (
            with_nodes("", [("48MiB", "\"0-1\""), ("16MiB", "\"1\"")]),
            "cpus = \"1\"",
            "machine.node[1].cpus",
            "CPU 1 is on node 0 already",
        ),
        (
            with_nodes("", [("48MiB", "\"0\""), ("16MiB", "\"\"")]),
            "cpus = \"\"",
            "machine.node[1].cpus",
            "CPU 1 is on no node",
        ),
        (
            with_nodes("", [("48MiB", "\"0\""), ("16MiB", "\"1-2\"")]),
            "cpus = \"1-2\"",
            "machine.node[1].cpus",
            "CPU 2 does not exist",
        ),
        (
            with_nodes("", [("48MiB", "\"0\""), ("16MiB", "\"1-x\"")]),
            "cpus = \"1-x\"",
            "machine.node[1].cpus",
            "\"x\" is not a CPU number",
        ),
    ];
    for (text, needle, field, why) in cases {
        let e = error(&text, &[]);
        assert_at(&e, &text, needle, field);
        assert!(e.to_string().contains(why), "{e}");
    }
    // A workload's `node` must have CPUs to run on.
    let text = with_nodes("", [("48MiB", "\"0-1\""), ("16MiB", "\"\"")])
        .replace("memcg = \"/a\"\n", "memcg = \"/a\"\nnode = 1\n");
    let e = error(&text, &[]);
    assert_at(&e, &text, "node = 1", "workload[0].node");
    assert!(e.to_string().contains("memory-only"), "{e}");
}

/// A workload's `mems`: nodes that exist, at least one, in the node list format.
#[test]
fn bad_mems_are_located() {
    let two = |mems: &str| {
        edit("cpus = 2", "cpus = 2\nnodes = 2").replace(
            "memcg = \"/a\"\n",
            &format!("memcg = \"/a\"\nmems = {mems}\n"),
        )
    };
    let s = scenario::parse(&two("\"1,0-1\""), "s.toml", &[], None)
        .unwrap()
        .base;
    assert_eq!(
        (s.workloads[0].mems.clone(), s.workloads[0].mems_mask()),
        (Some(vec![0, 1]), 3)
    );
    for (mems, why) in [
        ("\"2\"", "node 2 does not exist (the machine has 2 nodes)"),
        ("[0, 5]", "node 5 does not exist"),
        ("[]", "must list at least one node"),
        ("\"0-x\"", "\"x\" is not a node number"),
        ("\"\"", "an empty entry"),
        ("3", "a list of node numbers or a node list string"),
    ] {
        let text = two(mems);
        let e = error(&text, &[]);
        assert_at(&e, &text, "mems = ", "workload[0].mems");
        assert!(e.to_string().contains(why), "{mems}: {e}");
    }
}
