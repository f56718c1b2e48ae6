//! `scale = K`: one knob that makes a scenario K times bigger (or smaller) without
//! editing it. Every size that grows with the experiment is multiplied: the machine's
//! memory and swap, the memcgs' limits, the workloads' regions and files, memtier's key
//! range. What is an amount of work or time stays: durations, thread and job counts,
//! request and I/O counts (`io_size`), object sizes (memcached's `data-size`), kernel
//! tunables written out (`min_free_kbytes`; the kernel's default follows the memory by
//! itself), `[[event]]` commands and the costs. A trace's objects are what the trace
//! says: trace workloads are not scaled.
//!
//! Applied to the typed `Scenario` after it is read and before it is checked, so the
//! kernel model knows nothing of it. `scale_exempt` names sizes that keep their value,
//! by their paths as `--set` writes them (`machine.swap.size`, `memcg."/a".max`,
//! `workload.fio.fio.size`, `workload.mc.memcached.phase.run.key-maximum`).

use super::{at, fail, key, show, Problem, Seg};
use crate::scenario::config::{Scenario, WorkloadConfig};
use crate::units::{ByteSize, Duration, PAGE_SIZE};

/// A value `scale` multiplies.
enum Size<'a> {
    /// Bytes: whole pages, at least one (0 stays 0).
    Bytes(&'a mut ByteSize),
    /// memtier's key range: `key-minimum` (the first value) stays, the number of keys
    /// scales (at least one) and `key-maximum` follows.
    Keys(u64, &'a mut u64),
}

/// Multiplies every size `fields` finds by `s.scale`, except those `s.scale_exempt`
/// names. With scale 1 nothing is touched; the scale and the exemptions are checked
/// whatever it is.
pub(super) fn apply(s: &mut Scenario) -> Result<(), Problem> {
    let k = s.scale;
    if !(k.is_finite() && k > 0.0) {
        return fail(
            at("scale"),
            format!("{k}: must be a positive number (1, the default, changes nothing)"),
        );
    }
    let exempt = std::mem::take(&mut s.scale_exempt);
    let m = &s.machine;
    let node_sum = |m: &crate::scenario::config::MachineConfig| -> u64 {
        m.node.iter().map(|n| n.memory.0).sum()
    };
    // With [[machine.node]] tables the nodes scale and the memory is their sum again,
    // unless it was not their sum to begin with (which check() then reports).
    let follows = !m.node.is_empty() && m.memory.0 == node_sum(m);
    let result = scale_fields(fields(s), &exempt, k);
    s.scale_exempt = exempt;
    result?;
    if follows {
        s.machine.memory = ByteSize(node_sum(&s.machine));
    }
    let named = std::mem::take(&mut s.scale_durations);
    let result = scale_durations(durations(s), &named, k);
    s.scale_durations = named;
    result
}

/// Multiplies by `k` (to the nearest ns) the durations of `fields` that `named` names.
fn scale_durations(
    fields: Vec<(String, &mut Duration)>,
    named: &[String],
    k: f64,
) -> Result<(), Problem> {
    let paths: Vec<&str> = fields.iter().map(|(p, _)| p.as_str()).collect();
    let named = Named::check(
        &paths,
        named,
        "scale_durations",
        "a duration of this scenario that scale can multiply",
    )?;
    if k == 1.0 {
        return Ok(());
    }
    for (path, d) in fields {
        if named.names(&path) {
            d.0 = (d.0 as f64 * k).round() as u64;
        }
    }
    Ok(())
}

/// The entries of a list of `--set` paths (`scale_exempt`, `scale_durations`), each
/// checked to name at least one of the paths it chooses from.
struct Named(Vec<String>);

impl Named {
    /// `entries`, the list `list` of the scenario, each as `path` writes it; an error at
    /// the first that names none of `paths` ("is not WHAT; those are: ...").
    fn check(paths: &[&str], entries: &[String], list: &str, what: &str) -> Result<Named, Problem> {
        let mut out = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            match written(entry).filter(|n| paths.iter().any(|p| matches(n, p))) {
                Some(n) => out.push(n),
                None => {
                    return fail(
                        vec![key(list), Seg::Index(i)],
                        format!("{entry:?} is not {what}; those are: {}", listed(paths)),
                    )
                }
            }
        }
        Ok(Named(out))
    }

    fn names(&self, path: &str) -> bool {
        self.0.iter().any(|n| matches(n, path))
    }
}

/// Whether `path` is the one `pattern` names, where a part `"*"` stands for any one name
/// (`workload."*".dd.runtime`: every instance of an `instances` workload).
fn matches(pattern: &str, path: &str) -> bool {
    match pattern.split_once(&show(&[key("*")])) {
        None => pattern == path,
        Some((head, tail)) => {
            path.len() > head.len() + tail.len() && path.starts_with(head) && path.ends_with(tail)
        }
    }
}

/// The run lengths of `s` that `scale_durations` may name, each with its `--set` path:
/// the run's `duration`, each workload's `start`, and its tables' ramps, runtimes,
/// phase sleeps and delays. Per-operation times (fio's `thinktime`) are not among them.
fn durations(s: &mut Scenario) -> Vec<(String, &mut Duration)> {
    let mut out = Vec::new();
    if let Some(d) = &mut s.duration {
        out.push((path(&["duration"]), d));
    }
    for w in &mut s.workloads {
        workload_durations(w, &mut out);
    }
    out
}

/// A workload's run lengths: one arm per workload table, as `workload_fields`.
fn workload_durations<'a>(w: &'a mut WorkloadConfig, out: &mut Vec<(String, &'a mut Duration)>) {
    let WorkloadConfig {
        name,
        fio,
        memcached,
        dd,
        page_fault3,
        anon,
        tabs,
        // A trace's times are the trace's.
        trace: _,
        start,
        memcg: _,
        cpus: _,
        client_cpus: _,
        node: _,
        mems: _,
        pin: _,
        after: _,
        until: _,
        page_content: _,
    } = w;
    let at = |rest: &[&str]| path(&[&["workload", name.as_str()], rest].concat());
    out.push((at(&["start"]), start));
    if let Some(o) = fio {
        out.extend(o.runtime.as_mut().map(|d| (at(&["fio", "runtime"]), d)));
        out.push((at(&["fio", "ramp_time"]), &mut o.ramp_time));
        for (i, p) in o.phase.iter_mut().enumerate() {
            let n = phase_name(i, &p.name);
            out.extend(phase_durations(
                &at(&["fio", "phase", &n]),
                &mut p.sleep_until,
                p.runtime.as_mut(),
            ));
        }
    }
    if let Some(o) = memcached {
        memtier_durations(&at(&["memcached"]), o, out);
    }
    let repeats = [
        dd.as_mut()
            .map(|o| ("dd", o.runtime.as_mut(), &mut o.phase)),
        page_fault3
            .as_mut()
            .map(|o| ("page_fault3", Some(&mut o.runtime), &mut o.phase)),
    ];
    for (table, runtime, phases) in repeats.into_iter().flatten() {
        out.extend(runtime.map(|d| (at(&[table, "runtime"]), d)));
        for (i, p) in phases.iter_mut().enumerate() {
            let n = phase_name(i, &p.name);
            out.extend(phase_durations(
                &at(&[table, "phase", &n]),
                &mut p.sleep_until,
                p.runtime.as_mut(),
            ));
        }
    }
    if let Some(o) = anon {
        out.extend(o.runtime.as_mut().map(|d| (at(&["anon", "runtime"]), d)));
        for (i, p) in o.phase.iter_mut().enumerate() {
            let n = phase_name(i, &p.name);
            out.extend(phase_durations(
                &at(&["anon", "phase", &n]),
                &mut p.sleep_until,
                None,
            ));
        }
    }
    out.extend((tabs.as_mut()).map(|o| (at(&["tabs", "settle"]), &mut o.settle)));
}

/// memtier's runs' `delay` and `test-time`, under the workload's `memcached` path. Its
/// runs are all phases, named from phase0 (as `workload_fields` names them).
fn memtier_durations<'a>(
    table: &str,
    o: &'a mut crate::workload::memtier::MemcachedOptions,
    out: &mut Vec<(String, &'a mut Duration)>,
) {
    for (i, p) in o.phase.iter_mut().enumerate() {
        let n = p.name.clone().unwrap_or_else(|| format!("phase{i}"));
        let run = format!("{table}.phase.{}", key_text(&n));
        out.push((format!("{run}.delay"), &mut p.delay));
        out.extend(
            p.test_time
                .as_mut()
                .map(|d| (format!("{run}.test-time"), d)),
        );
    }
}

/// A later phase's name as results give it: its own, or `phase<N>` counting from 1.
fn phase_name(i: usize, name: &Option<String>) -> String {
    name.clone().unwrap_or_else(|| format!("phase{}", i + 1))
}

/// A later phase's `sleep_until` and `runtime`, where given, under the phase's path.
fn phase_durations<'a>(
    phase: &str,
    sleep_until: &'a mut Option<Duration>,
    runtime: Option<&'a mut Duration>,
) -> Vec<(String, &'a mut Duration)> {
    [("sleep_until", sleep_until.as_mut()), ("runtime", runtime)]
        .into_iter()
        .filter_map(|(f, d)| Some((format!("{phase}.{}", key_text(f)), d?)))
        .collect()
}

/// One more dotted part as `path` writes it.
fn key_text(part: &str) -> String {
    show(&[key(part)])
}

/// Checks that each of `exempt` names one of `fields`, then multiplies the others by `k`.
fn scale_fields(fields: Vec<(String, Size)>, exempt: &[String], k: f64) -> Result<(), Problem> {
    let paths: Vec<&str> = fields.iter().map(|(p, _)| p.as_str()).collect();
    let exempt = Named::check(
        &paths,
        exempt,
        "scale_exempt",
        "a size that scale multiplies",
    )?;
    if k == 1.0 {
        return Ok(());
    }
    for (path, size) in fields {
        if !exempt.names(&path) {
            multiply(size, k);
        }
    }
    Ok(())
}

fn multiply(size: Size, k: f64) {
    match size {
        Size::Bytes(b) if b.0 == 0 => {}
        Size::Bytes(b) => {
            let pages = (b.0 as f64 * k / PAGE_SIZE as f64).round().max(1.0);
            b.0 = (pages as u64).saturating_mul(PAGE_SIZE);
        }
        // A range that is already wrong (max below min) is left for check() to name.
        Size::Keys(min, max) if *max < min => {}
        Size::Keys(min, max) => {
            let keys = (*max - min) as f64 + 1.0;
            let scaled = (keys * k).round().max(1.0) as u64;
            *max = min.saturating_add(scaled - 1);
        }
    }
}

/// The sizes of `s` that scale multiplies, each with its `--set` path.
fn fields(s: &mut Scenario) -> Vec<(String, Size<'_>)> {
    let m = &mut s.machine;
    let mut out = Vec::new();
    if m.node.is_empty() {
        out.push((path(&["machine", "memory"]), Size::Bytes(&mut m.memory)));
    }
    for (i, n) in m.node.iter_mut().enumerate() {
        let at = path(&["machine", "node", &i.to_string(), "memory"]);
        out.push((at, Size::Bytes(&mut n.memory)));
    }
    if let Some(swap) = &mut m.swap {
        out.push((
            path(&["machine", "swap", "size"]),
            Size::Bytes(&mut swap.size),
        ));
    }
    for c in &mut s.memcgs {
        let limits = [
            ("max", &mut c.max),
            ("high", &mut c.high),
            ("low", &mut c.low),
            ("min", &mut c.min),
            ("swap_max", &mut c.swap_max),
            ("zswap_max", &mut c.zswap_max),
        ];
        for (name, limit) in limits {
            if let Some(b) = limit {
                out.push((path(&["memcg", &c.path, name]), Size::Bytes(b)));
            }
        }
    }
    for w in &mut s.workloads {
        workload_fields(w, &mut out);
    }
    out
}

/// A workload's sizes: one arm per workload table, every field named so that a new
/// table or field is a compile error here until it is decided whether it scales.
fn workload_fields<'a>(w: &'a mut WorkloadConfig, out: &mut Vec<(String, Size<'a>)>) {
    let WorkloadConfig {
        name,
        fio,
        memcached,
        dd,
        page_fault3,
        anon,
        tabs,
        // A trace's objects are the trace's: not scaled.
        trace: _,
        memcg: _,
        cpus: _,
        client_cpus: _,
        node: _,
        mems: _,
        pin: _,
        start: _,
        after: _,
        until: _,
        page_content: _,
    } = w;
    let field = |rest: &[&str]| path(&[&["workload", name.as_str()], rest].concat());
    if let Some(o) = fio {
        // io_size is an amount of work; offset is where in the file, which grows with it.
        for (f, b) in [("size", &mut o.size), ("filesize", &mut o.filesize)] {
            if let Some(b) = b {
                out.push((field(&["fio", f]), Size::Bytes(b)));
            }
        }
        if o.offset.0 != 0 {
            out.push((field(&["fio", "offset"]), Size::Bytes(&mut o.offset)));
        }
    }
    if let Some(o) = memcached {
        for (i, p) in o.phase.iter_mut().enumerate() {
            let phase = p.name.clone().unwrap_or_else(|| format!("phase{i}"));
            let key_maximum = field(&["memcached", "phase", &phase, "key-maximum"]);
            out.push((key_maximum, Size::Keys(p.key_minimum, &mut p.key_maximum)));
        }
    }
    if let Some(o) = dd {
        out.push((field(&["dd", "size"]), Size::Bytes(&mut o.size)));
    }
    if let Some(o) = page_fault3 {
        out.push((field(&["page_fault3", "size"]), Size::Bytes(&mut o.size)));
    }
    if let Some(o) = anon {
        // `mix` ranges are percentages of the region: they follow it.
        out.push((field(&["anon", "size"]), Size::Bytes(&mut o.size)));
    }
    if let Some(o) = tabs {
        // `run` is how the renderer's memory is laid out, not how much of it there is.
        out.push((field(&["tabs", "tab_size"]), Size::Bytes(&mut o.tab_size)));
        out.push((field(&["tabs", "code"]), Size::Bytes(&mut o.code)));
    }
}

/// `parts` as `--set` writes a path (quoted where a part needs it).
fn path(parts: &[&str]) -> String {
    show(&parts.iter().map(|p| key(p)).collect::<Vec<_>>())
}

/// A `scale_exempt` entry in the form `path` writes, or `None` when it is not a dotted key.
fn written(entry: &str) -> Option<String> {
    let keys = toml_edit::Key::parse(entry.trim()).ok()?;
    Some(show(&keys.iter().map(|k| key(k.get())).collect::<Vec<_>>()))
}

/// The paths, the first dozen of them when there are more.
fn listed(paths: &[&str]) -> String {
    const SHOWN: usize = 12;
    match paths.len() {
        0 => "none in this scenario".into(),
        n if n <= SHOWN => paths.join(", "),
        n => format!("{}, and {} more", paths[..SHOWN].join(", "), n - SHOWN),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse, LoadedScenario, ScenarioError};

    const MIB: u64 = 1 << 20;

    /// One of each workload table with a size, a memcg with every limit, swap.
    const ALL: &str = r#"
name = "t"
scale = 4
[machine]
memory = "256MiB"
swap = { device = "zram", size = "64MiB" }
[[memcg]]
path = "/a"
max = "100MiB"
high = "90MiB"
low = "10MiB"
min = "1MiB"
[[workload]]
name = "anon"
memcg = "/a"
anon = { size = "8MiB", threads = 2 }
[[workload]]
name = "fio"
fio = { size = "16MiB", filesize = "20MiB", offset = "4MiB", io_size = "2MiB" }
[[workload]]
name = "dd"
dd = { size = "3MiB" }
[[workload]]
name = "pf"
page_fault3 = { size = "2MiB", runtime = "1s" }
[[workload]]
name = "mc"
[workload.memcached]
threads = 1
[[workload.memcached.phase]]
name = "load"
key-minimum = 11
key-maximum = 110
data-size = 2000
requests = "allkeys"
[[workload.memcached.phase]]
key-maximum = 999
requests = 7
"#;

    fn load(text: &str, sets: &[&str]) -> Result<LoadedScenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        parse(text, "t.toml", &sets, None)
    }

    fn seed_text(name: &str) -> String {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/seeds/");
        std::fs::read_to_string(format!("{dir}{name}")).unwrap()
    }

    #[test]
    fn scale_multiplies_every_size() {
        let s = load(ALL, &[]).unwrap().base;
        assert_eq!(s.machine.memory.0, 1024 * MIB);
        assert_eq!(s.machine.swap.as_ref().unwrap().size.0, 256 * MIB);
        let c = &s.memcgs[0];
        let limits = [c.max, c.high, c.low, c.min].map(|b| b.unwrap().0 / MIB);
        assert_eq!(limits, [400, 360, 40, 4]);
        let w = |i: usize| &s.workloads[i];
        let anon = w(0).anon.as_ref().unwrap();
        assert_eq!((anon.size.0, anon.threads), (32 * MIB, 2));
        let fio = w(1).fio.as_ref().unwrap();
        assert_eq!(fio.size.unwrap().0, 64 * MIB);
        assert_eq!(fio.filesize.unwrap().0, 80 * MIB);
        assert_eq!(fio.offset.0, 16 * MIB);
        assert_eq!(fio.io_size.unwrap().0, 2 * MIB, "an amount of work stays");
        assert_eq!(w(2).dd.as_ref().unwrap().size.0, 12 * MIB);
        let pf = w(3).page_fault3.as_ref().unwrap();
        assert_eq!((pf.size.0, pf.runtime.0), (8 * MIB, 1_000_000_000));
        let phases = &w(4).memcached.as_ref().unwrap().phase;
        // 100 keys from 11 become 400 keys from 11; 1000 keys from 0 become 4000.
        assert_eq!((phases[0].key_minimum, phases[0].key_maximum), (11, 410));
        assert_eq!((phases[1].key_minimum, phases[1].key_maximum), (0, 3999));
        assert_eq!(phases[0].data_size.0, 2000, "an object's size stays");
        assert_eq!(
            phases[1].requests,
            Some(crate::workload::memtier::Requests::Count(7))
        );
    }

    #[test]
    fn fractional_scales_round_to_pages() {
        let s = load(ALL, &["scale=0.1"]).unwrap().base;
        // 25.6 MiB is 6553.6 pages: 6554.
        assert_eq!(s.machine.memory.0, 6554 * 4096);
        // 1 MiB x 0.1 = 25.6 pages: 26.
        assert_eq!(s.memcgs[0].min.unwrap().0, 26 * 4096);
        let phases = &s.workloads[4].memcached.as_ref().unwrap().phase;
        assert_eq!(phases[0].key_maximum, 20);
        let tiny = "name = \"t\"\nscale = 0.0001\n[machine]\nmemory = \"256MiB\"\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"8KiB\" }\n";
        let err = load(tiny, &[]).unwrap_err();
        assert_eq!(err.field, "machine.memory", "{err}");
        let s = load(tiny, &["scale=0.1"]).unwrap().base;
        assert_eq!(
            s.workloads[0].anon.as_ref().unwrap().size.0,
            4096,
            "at least a page"
        );
    }

    #[test]
    fn scale_one_changes_nothing() {
        for seed in ["000-mixed-memcgs.toml", "004-page-fault3.toml"] {
            let text = seed_text(seed);
            let plain = load(&text, &[]).unwrap();
            let one = load(&text, &["scale=1.0"]).unwrap();
            assert_eq!(
                format!("{:?}", plain.base),
                format!("{:?}", one.base),
                "{seed}"
            );
            assert_eq!(plain.base.scale, 1.0);
            let exempt = load(&text, &["scale_exempt=[\"machine.memory\"]"]).unwrap();
            let again = format!("{:?}", exempt.base).replace("[\"machine.memory\"]", "[]");
            assert_eq!(format!("{:?}", plain.base), again, "{seed}");
        }
    }

    #[test]
    fn set_scale_overrides_the_files() {
        let s = load(ALL, &["scale=2"]).unwrap().base;
        assert_eq!((s.scale, s.machine.memory.0), (2.0, 512 * MIB));
        let s = load(ALL, &["machine.memory=128MiB", "scale=0.5"])
            .unwrap()
            .base;
        assert_eq!(s.machine.memory.0, 64 * MIB);
        let text = format!("{ALL}[variants.big]\nscale = 8\n[variants.same]\n");
        let loaded = load(&text, &[]).unwrap();
        let memory: Vec<u64> = (loaded.variants.iter())
            .map(|(_, s)| s.machine.memory.0 / MIB)
            .collect();
        assert_eq!(memory, [2048, 1024]);
    }

    #[test]
    fn exempt_fields_keep_their_values() {
        let exempt = r#"scale_exempt=["machine.swap.size", 'memcg."/a".max', "workload.fio.fio.size",
                        "workload.mc.memcached.phase.phase1.key-maximum"]"#;
        let s = load(ALL, &[exempt]).unwrap().base;
        assert_eq!(s.machine.memory.0, 1024 * MIB);
        assert_eq!(s.machine.swap.as_ref().unwrap().size.0, 64 * MIB);
        assert_eq!(s.memcgs[0].max.unwrap().0, 100 * MIB);
        assert_eq!(s.memcgs[0].high.unwrap().0, 360 * MIB);
        let fio = s.workloads[1].fio.as_ref().unwrap();
        assert_eq!(
            (fio.size.unwrap().0, fio.filesize.unwrap().0),
            (16 * MIB, 80 * MIB)
        );
        let phases = &s.workloads[4].memcached.as_ref().unwrap().phase;
        assert_eq!((phases[0].key_maximum, phases[1].key_maximum), (410, 999));
    }

    #[test]
    fn a_bad_exempt_entry_is_named() {
        let text = ALL.replace(
            "scale = 4\n",
            "scale = 4\nscale_exempt = [\"machine.memory\", \"workload.fio.fio.io_size\"]\n",
        );
        let err = load(&text, &[]).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.line),
            ("scale_exempt[1]", Some(4)),
            "{err}"
        );
        assert!(err.message.starts_with("\"workload.fio.fio.io_size\" is not a size that scale multiplies; those are: machine.memory, machine.swap.size, memcg.\"/a\".max,"), "{err}");
        assert!(err.message.ends_with("and 2 more"), "{err}");
        // Checked at scale 1 as well, so that a sweep's first point finds it.
        let err = load(ALL, &["scale=1", "scale_exempt=['memcg.\"/b\".max']"]).unwrap_err();
        assert_eq!(
            err.to_string().split(':').next(),
            Some("--set scale_exempt"),
            "{err}"
        );
    }

    #[test]
    fn named_durations_scale_and_the_others_stay() {
        let text = ALL.replace(
            "page_fault3 = { size = \"2MiB\", runtime = \"1s\" }",
            "page_fault3 = { size = \"2MiB\", runtime = \"1s\" }\nstart = \"10ms\"",
        ) + "[[workload]]\nname = \"f2\"\n[workload.fio]\nsize = \"1MiB\"\n\
             time_based = true\nramp_time = \"300ms\"\nruntime = \"1s\"\n\
             [[workload.fio.phase]]\nsleep_until = \"2s\"\nruntime = \"500ms\"\n";
        let sets = [
            r#"scale_durations=["workload.pf.page_fault3.runtime", "workload.f2.fio.ramp_time",
                        "workload.f2.fio.phase.phase1.runtime", "workload.mc.memcached.phase.load.delay"]"#,
        ];
        let s = load(&text, &sets).unwrap().base;
        let ms = 1_000_000;
        let pf = &s.workloads[3];
        assert_eq!(pf.page_fault3.as_ref().unwrap().runtime.0, 4000 * ms);
        assert_eq!(pf.start.0, 10 * ms, "start is not named: it stays");
        let f2 = s.workloads[5].fio.as_ref().unwrap();
        assert_eq!(
            (f2.ramp_time.0, f2.runtime.unwrap().0),
            (1200 * ms, 1000 * ms)
        );
        let p = &f2.phase[0];
        assert_eq!(
            (p.sleep_until.unwrap().0, p.runtime.unwrap().0),
            (2000 * ms, 2000 * ms)
        );
        // `*` stands for any workload's name.
        let all = load(&text, &["scale_durations=['workload.\"*\".start']"])
            .unwrap()
            .base;
        let starts: Vec<u64> = all.workloads.iter().map(|w| w.start.0 / ms).collect();
        assert_eq!(starts, [0, 0, 0, 40, 0, 0]);
        // At scale 1 a named duration keeps its value.
        let one = load(&text, &[sets[0], "scale=1"]).unwrap().base;
        assert_eq!(one.workloads[5].fio.as_ref().unwrap().ramp_time.0, 300 * ms);
    }

    #[test]
    fn a_bad_duration_entry_is_named() {
        let text = ALL.replace(
            "scale = 4\n",
            "scale = 4\nscale_durations = [\"workload.pf.page_fault3.runtime\", \"workload.fio.fio.thinktime\"]\n",
        );
        let err = load(&text, &[]).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.line),
            ("scale_durations[1]", Some(4)),
            "{err}"
        );
        assert!(
            err.message.starts_with("\"workload.fio.fio.thinktime\" is not a duration of this scenario that scale can multiply; those are: workload.anon.start, "),
            "{err}"
        );
        assert!(
            err.message.contains("workload.pf.page_fault3.runtime"),
            "{err}"
        );
    }

    #[test]
    fn bad_scales_are_named() {
        for bad in ["0", "-2", "nan", "inf"] {
            let text = ALL.replace("scale = 4", &format!("scale = {bad}"));
            let err = load(&text, &[]).unwrap_err();
            assert_eq!(
                (err.field.as_str(), err.line),
                ("scale", Some(3)),
                "{bad}: {err}"
            );
            assert!(err.message.contains("must be a positive number"), "{err}");
            let err = load(ALL, &[&format!("scale={bad}")]).unwrap_err();
            assert!(err.to_string().starts_with("--set scale: "), "{bad}: {err}");
        }
        let err = load(ALL, &["scale=big"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--set scale: invalid type: string"),
            "{err}"
        );
    }

    #[test]
    fn scaling_below_the_machine_names_memory() {
        let text = ALL.replace("scale = 4", "scale = 0.01");
        let err = load(&text, &[]).unwrap_err();
        assert_eq!(err.field, "machine.memory", "{err}");
        assert!(err.message.ends_with("(after scale = 0.01)"), "{err}");
        let err = load(ALL, &["scale=0.01"]).unwrap_err().to_string();
        assert!(err.starts_with("--set scale: machine.memory: "), "{err}");
        assert!(err.contains("(after scale = 0.01)"), "{err}");
    }
}
