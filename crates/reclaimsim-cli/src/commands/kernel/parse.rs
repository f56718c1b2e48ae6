//! The guest's console log: its `@RS` lines (written by `guest/init.sh` and the
//! workload programs) read into snapshots and workload results, and those into the
//! results `run` writes.

use indexmap::IndexMap;
use reclaimsim::results::{
    GuestRun, GuestSnapshot, Latency, LruGenGen, LruGenState, MemcgResult, OomKill, Pressure,
    VariantResult, WorkloadResult,
};
use std::collections::BTreeMap;

/// One memcg's files at a snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cgroup {
    /// memory.stat, memory.events, memory.events.local, memory.swap.events by file,
    /// each in the kernel's order.
    pub(crate) files: BTreeMap<String, Vec<(String, u64)>>,
    pub(crate) pressure: Pressure,
    pub(crate) current: u64,
    pub(crate) swap_current: u64,
}

/// The counters at one snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) label: String,
    pub(crate) uptime: f64,
    pub(crate) vmstat: Vec<(String, u64)>,
    pub(crate) memcgs: BTreeMap<String, Cgroup>,
    pub(crate) psi: Pressure,
    pub(crate) meminfo: BTreeMap<String, u64>,
    /// /sys/kernel/debug/lru_gen, line by line (MGLRU only).
    pub(crate) lru_gen: Vec<String>,
    pub(crate) complete: bool,
}

/// A workload's result line.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WorkloadLine {
    pub(crate) name: String,
    pub(crate) ops: u64,
    pub(crate) secs: f64,
    pub(crate) p50: u64,
    pub(crate) p99: u64,
    pub(crate) max: u64,
    /// The bytes the workload moved, when its program says (dd).
    pub(crate) bytes: u64,
}

/// Everything the console said.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Console {
    pub(crate) uname: Option<String>,
    /// lru_gen/enabled as init read it back.
    pub(crate) lru_gen: String,
    /// What init locked after setup (its `ballast`; 0 or less: nothing).
    pub(crate) ballast: i64,
    /// The NUMA nodes the guest found.
    pub(crate) nodes: u32,
    pub(crate) snapshots: Vec<Snapshot>,
    pub(crate) workloads: Vec<WorkloadLine>,
    /// Workload name, exit status, guest uptime at exit.
    pub(crate) exits: Vec<(String, i32, f64)>,
    pub(crate) errors: Vec<String>,
    /// The host fio's JSON result, by workload, line by line (`@RS fio NAME LINE`).
    pub(crate) fio: Vec<(String, String)>,
    /// Lines a program printed besides its result (its errors), by workload.
    pub(crate) logs: Vec<(String, String)>,
    /// Workload name and the memcg it started in.
    pub(crate) starts: Vec<(String, String)>,
    /// `NAME:PHASE` and the guest uptime when the phase ended (`@RS phase`).
    pub(crate) phase_ends: Vec<(String, f64)>,
    pub(crate) done: bool,
}

/// A `some`/`full` pressure line: `some avg10=0.00 avg60=0.00 avg300=0.00 total=0`.
fn psi_line(p: &mut Pressure, line: &str) {
    let mut words = line.split_whitespace();
    let target = match words.next() {
        Some("some") => &mut p.some,
        Some("full") => &mut p.full,
        _ => return,
    };
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            continue;
        };
        match k {
            "avg10" => target.avg10 = v.parse().unwrap_or(0.0),
            "avg60" => target.avg60 = v.parse().unwrap_or(0.0),
            "avg300" => target.avg300 = v.parse().unwrap_or(0.0),
            "total" => target.total = v.parse().unwrap_or(0),
            _ => {}
        }
    }
}

fn kv(rest: &str) -> Option<(String, u64)> {
    let (k, v) = rest.split_once(' ')?;
    Some((k.to_string(), v.trim().parse().ok()?))
}

/// Reads a console log. Lines without `@RS ` are the kernel's and the firmware's; a
/// line may carry terminal escapes before its `@RS`.
pub(crate) fn parse(log: &str) -> Console {
    let mut c = Console::default();
    let mut snap: Option<Snapshot> = None;
    for raw in log.lines() {
        let Some(at) = raw.find("@RS ") else { continue };
        let line = raw[at + 4..].trim_end_matches('\r');
        let (tag, rest) = line.split_once(' ').unwrap_or((line, ""));
        match (tag, snap.as_mut()) {
            ("snap", _) => {
                let (label, up) = rest.split_once(' ').unwrap_or((rest, "0"));
                snap = Some(Snapshot {
                    label: label.to_string(),
                    uptime: up.trim().parse().unwrap_or(0.0),
                    ..Default::default()
                });
            }
            ("endsnap", Some(s)) => {
                s.complete = true;
                c.snapshots.extend(snap.take());
            }
            ("vm", Some(s)) => s.vmstat.extend(kv(rest)),
            ("cg", Some(s)) => cgroup_line(s, rest),
            ("psi", Some(s)) => psi_line(&mut s.psi, rest),
            ("lrugen", Some(s)) => s.lru_gen.push(rest.to_string()),
            ("meminfo", Some(s)) => {
                let mut w = rest.split_whitespace();
                if let (Some(k), Some(Ok(v))) = (w.next(), w.next().map(str::parse::<u64>)) {
                    s.meminfo
                        .insert(k.trim_end_matches(':').to_string(), v * 1024);
                }
            }
            _ => other_line(&mut c, tag, rest),
        }
    }
    fio_results(&mut c);
    c
}

/// Each host fio's JSON (from its first line that opens an object, without fio's own
/// messages, which a signal puts before it or, rarely, inside) as the workload's
/// result line, or an error naming the workload.
fn fio_results(c: &mut Console) {
    let mut names: Vec<&str> = c.fio.iter().map(|(n, _)| n.as_str()).collect();
    names.dedup();
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for name in names {
        let text: Vec<&str> = (c.fio.iter())
            .filter(|(n, _)| n == name)
            .map(|(_, l)| l.as_str())
            .skip_while(|l| !l.starts_with('{'))
            .filter(|l| !l.starts_with("fio: "))
            .collect();
        match fio_line(name, &text.join("\n")) {
            Ok(w) => lines.push(w),
            Err(e) => errors.push(format!("{name}: fio's JSON result: {e}")),
        }
    }
    c.workloads.extend(lines);
    c.errors.extend(errors);
}

/// fio's JSON (`--output-format=json`, one job with `group_reporting`) as a result line:
/// its I/Os in every direction, the longest direction's run time, and the latency
/// (`lat_ns`, submission to completion) of the direction with the most I/Os.
fn fio_line(name: &str, json: &str) -> Result<WorkloadLine, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let jobs = v["jobs"].as_array().ok_or("no jobs")?;
    let mut w = WorkloadLine {
        name: name.to_string(),
        ..Default::default()
    };
    let mut most = 0;
    for dir in jobs
        .iter()
        .flat_map(|j| ["read", "write", "trim"].map(|d| &j[d]))
    {
        let ios = dir["total_ios"].as_u64().unwrap_or(0);
        w.ops += ios;
        w.secs = w.secs.max(dir["runtime"].as_f64().unwrap_or(0.0) / 1000.0);
        if ios > most {
            most = ios;
            let lat = &dir["lat_ns"];
            let pct = |p: &str| lat["percentile"][p].as_u64().unwrap_or(0);
            w.p50 = pct("50.000000");
            w.p99 = pct("99.000000");
            w.max = lat["max"].as_u64().unwrap_or(0);
        }
    }
    Ok(w)
}

/// `@RS cg PATH FILE KEY VALUE`, `@RS cg PATH pressure LINE`, `@RS cg PATH current V`.
fn cgroup_line(s: &mut Snapshot, rest: &str) {
    let mut parts = rest.splitn(3, ' ');
    let (Some(path), Some(file), Some(tail)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let cg = s.memcgs.entry(path.to_string()).or_default();
    match file {
        "pressure" => psi_line(&mut cg.pressure, tail),
        "current" => cg.current = tail.trim().parse().unwrap_or(0),
        "swap.current" => cg.swap_current = tail.trim().parse().unwrap_or(0),
        f => cg.files.entry(f.to_string()).or_default().extend(kv(tail)),
    }
}

/// The lines outside snapshots.
fn other_line(c: &mut Console, tag: &str, rest: &str) {
    match tag {
        "uname" => c.uname = Some(rest.trim().to_string()),
        "lru_gen" => c.lru_gen = rest.trim().to_string(),
        "ballast" => c.ballast = rest.trim().parse().unwrap_or(0),
        "nodes" => c.nodes = rest.trim().parse().unwrap_or(0),
        "error" => c.errors.push(rest.trim().to_string()),
        "done" => c.done = true,
        "log" => {
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            c.logs.push((name.to_string(), text.to_string()));
        }
        "exit" => {
            let w: Vec<&str> = rest.split_whitespace().collect();
            if let [name, status, rest @ ..] = w.as_slice() {
                let at = rest.first().and_then(|t| t.parse().ok()).unwrap_or(0.0);
                c.exits
                    .push((name.to_string(), status.parse().unwrap_or(-1), at));
            }
        }
        "wl" => c.workloads.extend(workload_line(rest)),
        "phase" => {
            let (name, at) = rest.split_once(' ').unwrap_or((rest, ""));
            if let Ok(at) = at.trim().parse() {
                c.phase_ends.push((name.to_string(), at));
            }
        }
        "fio" => {
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            c.fio.push((name.to_string(), text.to_string()));
        }
        "start" => {
            let w: Vec<&str> = rest.split_whitespace().collect();
            if let [name, _, memcg, ..] = w.as_slice() {
                c.starts.push((name.to_string(), memcg.to_string()));
            }
        }
        _ => {}
    }
}

/// `NAME ops=N secs=S p50=NS p99=NS max=NS [bytes=B]`.
fn workload_line(rest: &str) -> Option<WorkloadLine> {
    let mut words = rest.split_whitespace();
    let mut w = WorkloadLine {
        name: words.next()?.to_string(),
        ..Default::default()
    };
    for word in words {
        let (k, v) = word.split_once('=')?;
        match k {
            "ops" => w.ops = v.parse().ok()?,
            "secs" => w.secs = v.parse().ok()?,
            "p50" => w.p50 = v.parse().ok()?,
            "p99" => w.p99 = v.parse().ok()?,
            "max" => w.max = v.parse().ok()?,
            "bytes" => w.bytes = v.parse().ok()?,
            _ => {}
        }
    }
    Some(w)
}

/// A vmstat key that counts events (and so is reported since setup), not a level.
pub(crate) fn vmstat_counts(key: &str) -> bool {
    !key.starts_with("nr_") || matches!(key, "nr_dirtied" | "nr_written")
}

/// A memory.stat key that counts events, not bytes held.
pub(crate) fn memory_stat_counts(key: &str) -> bool {
    [
        "pg",
        "workingset_refault",
        "workingset_activate",
        "workingset_restore",
        "workingset_nodereclaim",
        "thp_",
        "zswp",
    ]
    .iter()
    .any(|p| key.starts_with(p))
}

fn since<'a>(
    now: &'a [(String, u64)],
    then: Option<&'a Vec<(String, u64)>>,
) -> impl Iterator<Item = (String, u64)> + 'a {
    now.iter().map(move |(k, v)| {
        let before = then
            .and_then(|t| t.iter().find(|(tk, _)| tk == k))
            .map_or(0, |x| x.1);
        (k.clone(), v.saturating_sub(before))
    })
}

/// Errors that make a console log no result.
pub(crate) fn check(c: &Console) -> Result<(), String> {
    if c.uname.is_none() {
        return Err("the guest never reached its init (no `@RS uname` line)".into());
    }
    let labels: Vec<&str> = c.snapshots.iter().map(|s| s.label.as_str()).collect();
    for want in ["setup", "end"] {
        if !labels.contains(&want) {
            return Err(format!("the guest printed no complete `{want}` snapshot"));
        }
    }
    if !c.done {
        return Err("the guest did not finish (no `@RS done` line)".into());
    }
    Ok(())
}

/// The results of a checked console log: counters since the `setup` snapshot at `end`;
/// levels (memory.stat's sizes, memory.current) at the last `end:NAME` snapshot
/// (`end:all`, when every workload had finished and still held its memory).
pub(crate) fn results(c: &Console, name: &str, guest: GuestRun) -> VariantResult {
    let setup = c.snapshots.iter().find(|s| s.label == "setup");
    let end = c.snapshots.iter().rev().find(|s| s.label == "end");
    let (Some(setup), Some(end)) = (setup, end) else {
        return VariantResult::default();
    };
    let held = (c.snapshots.iter().rev())
        .find(|s| s.label.starts_with("end:"))
        .unwrap_or(end);
    let vmstat = (end.vmstat.iter())
        .map(|(k, v)| {
            let level = !vmstat_counts(k);
            let from = |s: &Snapshot| s.vmstat.iter().find(|(x, _)| x == k).map_or(0, |x| x.1);
            (
                k.clone(),
                if level {
                    from(held)
                } else {
                    v.saturating_sub(from(setup))
                },
            )
        })
        .collect();
    let memcgs = (end.memcgs.iter())
        .map(|(path, cg)| {
            (
                path.clone(),
                memcg(cg, setup.memcgs.get(path), held.memcgs.get(path)),
            )
        })
        .collect();
    let mut workloads = BTreeMap::new();
    for w in &c.workloads {
        workloads.insert(w.name.clone(), workload(w));
    }
    let mut pressure = end.psi;
    pressure.some.total -= setup.psi.some.total.min(pressure.some.total);
    pressure.full.total -= setup.psi.full.total.min(pressure.full.total);
    VariantResult {
        name: name.to_string(),
        virtual_time_s: end.uptime - setup.uptime,
        vmstat,
        memcgs,
        workloads,
        oom_kills: oom_kills(c, end, setup.uptime),
        lru_gen: lru_gen_view(&held.lru_gen),
        pressure,
        backend: Some("kernel".into()),
        guest: Some(GuestRun {
            snapshots: snapshots(c, setup),
            phase_ends: (c.phase_ends.iter())
                .map(|(name, at)| (name.clone(), at - setup.uptime))
                .collect(),
            errors: c.errors.clone(),
            mem_total: setup.meminfo.get("MemTotal").copied().unwrap_or(0),
            mem_free_after_setup: setup.meminfo.get("MemFree").copied().unwrap_or(0),
            setup_s: setup.uptime,
            lru_gen_enabled: c.lru_gen.clone(),
            ballast: c.ballast.max(0) as u64,
            nodes: c.nodes,
            ..guest
        }),
        ..Default::default()
    }
}

/// /sys/kernel/debug/lru_gen (6.1's lru_gen_seq_show, not verbose) as the model's view:
/// `memcg ID PATH`, then ` node NID` and a line `SEQ AGE_MS ANON FILE` for each
/// generation from the anon min_seq to max_seq. The file min_seq is taken as the first
/// generation with file pages (the plain view does not print it).
fn lru_gen_view(lines: &[String]) -> BTreeMap<String, Vec<LruGenState>> {
    let mut out: BTreeMap<String, Vec<LruGenState>> = BTreeMap::new();
    let mut path = String::new();
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["memcg", _, p] => path = p.to_string(),
            ["memcg", _] => path = "/".into(),
            ["node", n] => out.entry(path.clone()).or_default().push(LruGenState {
                node: n.parse().unwrap_or(0),
                ..Default::default()
            }),
            [seq, age, anon, file] => {
                let Some(s) = out.get_mut(&path).and_then(|v| v.last_mut()) else {
                    continue;
                };
                let n = |w: &str| w.parse::<u64>().unwrap_or(0);
                s.gens.push(LruGenGen {
                    seq: n(seq),
                    age_ms: n(age),
                    anon: n(anon),
                    file: n(file),
                });
            }
            _ => {}
        }
    }
    for s in out.values_mut().flatten() {
        s.max_seq = s.gens.last().map_or(0, |g| g.seq);
        let first = |pages: fn(&LruGenGen) -> u64| {
            (s.gens.iter().find(|g| pages(g) > 0)).map_or(s.max_seq, |g| g.seq)
        };
        s.min_seq = [s.gens.first().map_or(0, |g| g.seq), first(|g| g.file)];
    }
    out
}

fn workload(w: &WorkloadLine) -> WorkloadResult {
    let per = |x: f64| if w.secs > 0.0 { x / w.secs } else { 0.0 };
    WorkloadResult {
        ops: w.ops,
        ops_per_sec: per(w.ops as f64),
        mib_per_sec: per(w.bytes as f64 / (1 << 20) as f64),
        measured_s: w.secs,
        latency_ns: Latency {
            p50: w.p50,
            p99: w.p99,
            max: w.max,
        },
    }
}

/// One memcg's result: counters since setup, levels while memory was held.
fn memcg(end: &Cgroup, setup: Option<&Cgroup>, held: Option<&Cgroup>) -> MemcgResult {
    let file = |cg: Option<&Cgroup>, f: &str| cg.and_then(|c| c.files.get(f)).cloned();
    let stat_end = end.files.get("stat").cloned().unwrap_or_default();
    let stat_setup = file(setup, "stat");
    let stat_held = file(held, "stat");
    let stat: IndexMap<String, u64> = since(&stat_end, stat_setup.as_ref())
        .map(|(k, v)| {
            if memory_stat_counts(&k) {
                (k, v)
            } else {
                let level = stat_held
                    .as_ref()
                    .and_then(|h| h.iter().find(|(x, _)| *x == k));
                (k, level.map_or(0, |x| x.1))
            }
        })
        .collect();
    let events = |f: &str| -> IndexMap<String, u64> {
        let now = end.files.get(f).cloned().unwrap_or_default();
        since(&now, file(setup, f).as_ref()).collect()
    };
    let mut pressure = end.pressure;
    if let Some(s) = setup {
        pressure.some.total -= s.pressure.some.total.min(pressure.some.total);
        pressure.full.total -= s.pressure.full.total.min(pressure.full.total);
    }
    MemcgResult {
        stat,
        events: events("events"),
        events_local: events("events.local"),
        swap_events: events("swap.events"),
        current: held.map_or(end.current, |h| h.current),
        swap_current: held.map_or(end.swap_current, |h| h.swap_current),
        pressure,
        ..Default::default()
    }
}

/// Workloads that died of SIGKILL (status 137), with the memcg whose oom_kill count
/// rose, or global.
fn oom_kills(c: &Console, end: &Snapshot, t0: f64) -> Vec<OomKill> {
    let killed_in = |path: &str| {
        let events = end
            .memcgs
            .get(path)
            .and_then(|cg| cg.files.get("events.local"));
        events.is_some_and(|e| e.iter().any(|(k, v)| k == "oom_kill" && *v > 0))
    };
    (c.exits.iter())
        .filter(|(_, status, _)| *status == 137)
        .map(|(name, _, at)| {
            let memcg = c.workload_memcg(name);
            OomKill {
                time_s: (at - t0).max(0.0),
                scope: if killed_in(&memcg) && memcg != "/" {
                    memcg.clone()
                } else {
                    "global".into()
                },
                victim: name.clone(),
                victim_memcg: memcg,
                stall_s: None,
            }
        })
        .collect()
}

impl Console {
    /// The memcg a workload ran in, as init reported it at its start (`/` if unknown).
    fn workload_memcg(&self, name: &str) -> String {
        (self.starts.iter())
            .find(|(n, _)| n == name)
            .map_or("/".into(), |(_, m)| m.clone())
    }
}

/// Every snapshot's counters since setup.
fn snapshots(c: &Console, setup: &Snapshot) -> Vec<GuestSnapshot> {
    (c.snapshots.iter())
        .filter(|s| s.label != "setup")
        .map(|s| GuestSnapshot {
            label: s.label.clone(),
            time_s: s.uptime - setup.uptime,
            vmstat: (since(&s.vmstat, Some(&setup.vmstat)))
                .filter(|(k, _)| vmstat_counts(k))
                .collect(),
            memcgs: (s.memcgs.iter())
                .map(|(path, cg)| {
                    let stat = cg.files.get("stat").cloned().unwrap_or_default();
                    let before = setup.memcgs.get(path).and_then(|c| c.files.get("stat"));
                    let mut m: BTreeMap<String, u64> = since(&stat, before)
                        .filter(|(k, _)| memory_stat_counts(k))
                        .collect();
                    m.insert("memory.current".into(), cg.current);
                    (path.clone(), m)
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host fio's JSON as fiorun prints it (its message on SIGINT first), read as
    /// the workload's result: I/Os of both directions, the longer run time, the
    /// latency of the direction with more I/Os; a broken one is an error naming it.
    #[test]
    fn the_hosts_fio_json_becomes_the_result_line() {
        let json = r#"fio: terminating on signal 2
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "fio",
      "read" : { "total_ios" : 3000, "runtime" : 1500,
        "lat_ns" : { "max" : 90000, "percentile" : { "50.000000" : 2000, "99.000000" : 40000 } } },
      "write" : { "total_ios" : 1000, "runtime" : 2000,
        "lat_ns" : { "max" : 7, "percentile" : { "50.000000" : 5, "99.000000" : 6 } } },
      "trim" : { "total_ios" : 0, "runtime" : 0 }
    }
  ]
}"#;
        let log: String = (json.lines())
            .map(|l| format!("@RS fio fio {l}\r\n"))
            .chain(["@RS fio bad {\n".to_string()])
            .collect();
        let c = parse(&log);
        let w = &c.workloads[0];
        assert_eq!((w.name.as_str(), w.ops, w.secs), ("fio", 4000, 2.0));
        assert_eq!((w.p50, w.p99, w.max), (2000, 40000, 90000));
        assert_eq!(c.workloads.len(), 1);
        assert!(
            c.errors[0].starts_with("bad: fio's JSON result: "),
            "{:?}",
            c.errors
        );
    }

    /// A console log as the guest prints it: firmware noise, a terminal escape before
    /// the first `@RS`, kernel lines between, carriage returns.
    const LOG: &str = "SeaBIOS (version 1.16)\r
\x1b[?7l\x1b[2J@RS uname 6.1.0-48-amd64\r
@RS lru_gen 0x0000
@RS ballast 1048576
@RS nodes 2
@RS snap setup 10.00
@RS vm nr_free_pages 90000
@RS vm pgscan_anon 5
@RS vm pgfault 1000
@RS cg /app stat anon 4096
@RS cg /app stat pgscan 2
@RS cg /app events max 1
@RS cg /app events.local oom_kill 0
@RS cg /app pressure some avg10=0.00 avg60=0.00 avg300=0.00 total=100
@RS cg /app current 8192
@RS psi some avg10=0.00 avg60=0.00 avg300=0.00 total=50
@RS psi full avg10=0.00 avg60=0.00 avg300=0.00 total=40
@RS meminfo MemTotal:  465000 kB
@RS meminfo MemFree:   400000 kB
@RS endsnap setup
@RS start anon 10.50 /app
[   12.0] some kernel line
@RS snap end:anon 14.00
@RS vm nr_free_pages 1000
@RS vm pgscan_anon 705
@RS vm pgfault 51000
@RS cg /app stat anon 134217728
@RS cg /app stat pgscan 902
@RS cg /app current 160000000
@RS lrugen memcg     1 /
@RS lrugen  node     0
@RS lrugen           2       5000          0         10 
@RS lrugen           3        100          0          0 
@RS lrugen memcg     2 /app
@RS lrugen  node     0
@RS lrugen           7       3000         40          0 
@RS lrugen           8       2000          0        300 
@RS lrugen           9         10      32000          5 
@RS endsnap end:anon
@RS snap end 15.5
@RS vm nr_free_pages 80000
@RS vm pgscan_anon 905
@RS vm pgfault 52000
@RS cg /app stat anon 0
@RS cg /app stat pgscan 1002
@RS cg /app events max 31
@RS cg /app events.local oom_kill 1
@RS cg /app pressure some avg10=1.50 avg60=0.30 avg300=0.06 total=900
@RS cg /app current 4096
@RS psi some avg10=2.00 avg60=0.40 avg300=0.08 total=1050
@RS psi full avg10=1.00 avg60=0.20 avg300=0.04 total=540
@RS endsnap end
@RS phase anon:populate 12.25
@RS phase anon:run 13.50\r
@RS phase broken
@RS wl anon:populate ops=32768 secs=2.500 p50=1024 p99=65536 max=900000
@RS wl anon:run ops=65536 secs=1.000 p50=512 p99=4096 max=100000
@RS wl dd ops=512 secs=2.000 p50=512 p99=4096 max=100000 bytes=2097152
@RS exit anon 137 15.00
@RS error sysctl vm.x=1 failed
@RS done 15.9
";

    /// init's settled snapshot when every workload has finished (`end:all`, after 6.1's
    /// periodic memcg stats flush) is the last `end:` one, so levels come from it and
    /// not from the unsettled `end:NAME` before it; counters still come from `end`.
    #[test]
    fn levels_come_from_the_settled_end_all_snapshot() {
        let settled = "@RS snap end:all 14.10\n@RS vm nr_free_pages 900\n\
            @RS cg /app stat anon 134221824\n@RS cg /app current 160004096\n\
            @RS endsnap end:all\n@RS snap end 15.5";
        let log = LOG.replacen("@RS snap end 15.5", settled, 1);
        let c = parse(&log);
        assert_eq!(check(&c), Ok(()));
        let labels: Vec<&str> = c.snapshots.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["setup", "end:anon", "end:all", "end"]);
        let v = results(&c, "classic", GuestRun::default());
        let app = &v.memcgs["/app"];
        assert_eq!((app.stat["anon"], app.current), (134221824, 160004096));
        assert_eq!(v.vmstat["nr_free_pages"], 900);
        assert_eq!(v.vmstat["pgscan_anon"], 900, "counters still from `end`");
    }

    #[test]
    fn the_console_reads_into_results() {
        let c = parse(LOG);
        assert_eq!(check(&c), Ok(()));
        assert_eq!(c.uname.as_deref(), Some("6.1.0-48-amd64"));
        let labels: Vec<&str> = c.snapshots.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["setup", "end:anon", "end"]);
        let v = results(&c, "classic", GuestRun::default());
        assert_eq!(v.backend.as_deref(), Some("kernel"));
        // lru_gen's view while the workload held its memory, in the model's shape
        let app = &v.lru_gen["/app"][0];
        assert_eq!((app.max_seq, app.min_seq), (9, [7, 8]));
        let last = &app.gens[2];
        assert_eq!(
            (last.seq, last.age_ms, last.anon, last.file),
            (9, 10, 32000, 5)
        );
        assert_eq!(v.lru_gen["/"][0].gens.len(), 2);
        assert_eq!(v.virtual_time_s, 5.5);
        // counters since setup at the end; levels while the workload held its memory
        assert_eq!(v.vmstat["pgscan_anon"], 900);
        assert_eq!(v.vmstat["pgfault"], 51000);
        assert_eq!(v.vmstat["nr_free_pages"], 1000);
        let app = &v.memcgs["/app"];
        assert_eq!(app.stat["pgscan"], 1000);
        assert_eq!(app.stat["anon"], 134217728);
        assert_eq!(app.current, 160000000);
        assert_eq!(app.events["max"], 30);
        assert_eq!(app.pressure.some.total, 800);
        assert_eq!(app.pressure.some.avg10, 1.5);
        assert_eq!((v.pressure.some.total, v.pressure.full.total), (1000, 500));
        let run = &v.workloads["anon:run"];
        assert_eq!(
            (run.ops, run.ops_per_sec, run.latency_ns.p99),
            (65536, 65536.0, 4096)
        );
        assert_eq!(v.workloads["anon:populate"].measured_s, 2.5);
        assert_eq!(v.workloads["dd"].mib_per_sec, 1.0);
        assert_eq!(v.workloads["anon:run"].mib_per_sec, 0.0);
        let kill = &v.oom_kills[0];
        assert_eq!(
            (kill.victim.as_str(), kill.scope.as_str(), kill.time_s),
            ("anon", "/app", 5.0)
        );
        let g = v.guest.unwrap();
        assert_eq!(
            (g.mem_total, g.mem_free_after_setup, g.setup_s),
            (465000 * 1024, 400000 * 1024, 10.0)
        );
        assert_eq!(g.errors, ["sysctl vm.x=1 failed"]);
        assert_eq!(g.lru_gen_enabled, "0x0000");
        assert_eq!(g.ballast, 1 << 20);
        assert_eq!(g.nodes, 2);
        // phase ends in seconds since setup, as the snapshots' times
        let ends: Vec<(&str, f64)> = (g.phase_ends.iter())
            .map(|(n, t)| (n.as_str(), *t))
            .collect();
        assert_eq!(ends, [("anon:populate", 2.25), ("anon:run", 3.5)]);
        assert_eq!(g.snapshots[0].label, "end:anon");
        assert_eq!(g.snapshots[0].vmstat["pgscan_anon"], 700);
        assert!(!g.snapshots[0].vmstat.contains_key("nr_free_pages"));
        assert_eq!(g.snapshots[0].memcgs["/app"]["pgscan"], 900);
        assert_eq!(g.snapshots[0].memcgs["/app"]["memory.current"], 160000000);
    }

    #[test]
    fn an_unfinished_console_is_an_error() {
        let cut = &LOG[..LOG.find("@RS snap end 15.5").unwrap()];
        let e = check(&parse(cut)).unwrap_err();
        assert!(e.contains("no complete `end` snapshot"), "{e}");
        let no_done = LOG.replace("@RS done 15.9", "");
        assert!(check(&parse(&no_done))
            .unwrap_err()
            .contains("did not finish"));
        let e = check(&parse("SeaBIOS\nKernel panic - not syncing")).unwrap_err();
        assert!(e.contains("never reached its init"), "{e}");
    }

    #[test]
    fn counters_and_levels_are_told_apart() {
        assert!(vmstat_counts("pgscan_anon") && vmstat_counts("nr_dirtied"));
        assert!(!vmstat_counts("nr_free_pages") && !vmstat_counts("nr_zram"));
        assert!(memory_stat_counts("workingset_refault_file") && memory_stat_counts("pgmajfault"));
        assert!(!memory_stat_counts("workingset_nodes") && !memory_stat_counts("anon"));
    }
}
