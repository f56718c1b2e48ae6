//! The tables `run` prints for one variant: workloads, vmstat, memcgs, pressure, locks,
//! scheduling, the task groups' CPU profiles, stalls, kswapd's profile, events and OOM
//! kills.

use super::format::*;
use crate::results::VariantResult;
use crate::units::human_bytes;
use std::collections::{BTreeMap, BTreeSet};

/// Columns of `MEMCG_STAT` from here on are shown only when some memcg has a nonzero value.
const MEMCG_STAT_OPTIONAL: usize = 8;

/// memory.events entries shown per memcg (when any memcg has one).
const MEMCG_EVENTS: &[&str] = &["low", "high", "max", "oom", "oom_kill"];

/// A readable summary of one variant. `verbose` adds every other vmstat counter.
pub fn table(v: &VariantResult, verbose: bool) -> String {
    let mut out = format!(
        "{}: {:.3} s virtual, {:.2} s wall\n",
        v.name, v.virtual_time_s, v.wall_s
    );
    if !v.workloads.is_empty() {
        let mut t = Grid::new(&["workload", "ops", "ops/s", "MiB/s", "p50", "p99", "max"]);
        for (name, w) in &v.workloads {
            t.row(vec![
                name.clone(),
                w.ops.to_string(),
                format!("{:.1}", w.ops_per_sec),
                format!("{:.1}", w.mib_per_sec),
                human_ns(w.latency_ns.p50 as f64),
                human_ns(w.latency_ns.p99 as f64),
                human_ns(w.latency_ns.max as f64),
            ]);
        }
        section(&mut out, &t.render());
    }
    let names = vmstat_names(std::slice::from_ref(v), verbose);
    if !names.is_empty() {
        let mut t = Grid::new(&["vmstat", ""]);
        for name in names {
            t.row(vec![
                name.to_string(),
                v.counter(name).unwrap_or(0).to_string(),
            ]);
        }
        section(&mut out, &t.render());
    }
    if !v.memcgs.is_empty() {
        section(&mut out, &memcg_table(v));
    }
    if let Some(t) = pressure_table(v) {
        section(&mut out, &t);
    }
    if !v.locks.is_empty() {
        lock_tables(&mut out, v);
    }
    other_tables(&mut out, v);
    out
}

/// Per memcg, its memory.stat columns (the optional ones when some memcg has them) and
/// its memory.events.
fn memcg_table(v: &VariantResult) -> String {
    let stat: Vec<usize> = (0..MEMCG_STAT.len())
        .filter(|&c| {
            (v.memcgs.values())
                .any(|m| memcg_stat(m, c).is_some_and(|n| c < MEMCG_STAT_OPTIONAL || n > 0))
        })
        .collect();
    let events: Vec<&str> = (MEMCG_EVENTS.iter().copied())
        .filter(|k| (v.memcgs.values()).any(|m| m.events.get(*k).is_some_and(|&n| n > 0)))
        .collect();
    let mut header = vec!["memcg".to_string()];
    header.extend(stat.iter().map(|&c| MEMCG_STAT[c].0.to_string()));
    header.extend(events.iter().map(|e| format!("events.{e}")));
    let mut t = Grid::new(&header);
    for (path, m) in &v.memcgs {
        let mut row = vec![path.clone()];
        for &c in &stat {
            let n = memcg_stat(m, c).unwrap_or(0);
            row.push(if c < 4 { human_bytes(n) } else { n.to_string() });
        }
        row.extend((events.iter()).map(|k| m.events.get(*k).copied().unwrap_or(0).to_string()));
        t.row(row);
    }
    t.render()
}

/// The memory pressure of the system (/proc/pressure/memory) and of each memcg with
/// some: `some` and `full` totals and their share of the run's virtual time. None when
/// nothing stalled.
fn pressure_table(v: &VariantResult) -> Option<String> {
    let lines = pressure_lines(v);
    if lines.iter().all(|(_, p)| p.some.total == 0) {
        return None;
    }
    let run_us = v.virtual_time_s * 1e6;
    let mut t = Grid::new(&["pressure", "some", "some share", "full", "full share"]);
    for (name, p) in lines {
        let (some, full) = (p.some.total as f64, p.full.total as f64);
        t.row(vec![
            name,
            human_ns(some * 1e3),
            percent(some, run_us),
            human_ns(full * 1e3),
            percent(full, run_us),
        ]);
    }
    Some(t.render())
}

/// Per lock class its acquisitions, contention and times; then per call site.
fn lock_tables(out: &mut String, v: &VariantResult) {
    let mut t = Grid::new(&[
        "lock",
        "instances",
        "acquisitions",
        "contended",
        "wait",
        "hold",
        "spin share",
    ]);
    for (name, l) in &v.locks {
        t.row(vec![
            name.clone(),
            l.instances.to_string(),
            l.acquisitions.to_string(),
            format!(
                "{} ({})",
                l.contended,
                percent(l.contended as f64, l.acquisitions as f64)
            ),
            human_ns(l.wait_ns as f64),
            human_ns(l.hold_ns as f64),
            format!("{:.2}%", l.spin_share * 100.0),
        ]);
    }
    section(out, &t.render());
    let mut t = Grid::new(&["lock site", "acquisitions", "wait", "hold"]);
    for (name, l) in &v.locks {
        for (site, st) in &l.sites {
            t.row(vec![
                format!("{name} {site}"),
                st.acquisitions.to_string(),
                human_ns(st.wait_ns as f64),
                human_ns(st.hold_ns as f64),
            ]);
        }
    }
    if v.locks.values().any(|l| !l.sites.is_empty()) {
        section(out, &t.render());
    }
}

/// Allocation stalls, kswapd's profile and OOM kills, when there are any.
/// The scheduler per task group: tasks, CPU time, mean run-queue wait per task and
/// migrations, under a line on the CPUs' busy share and context switches.
fn sched_table(out: &mut String, v: &VariantResult) {
    let s = &v.sched;
    if s.cpus.is_empty() {
        return;
    }
    let mut groups: BTreeMap<String, (u64, f64, f64, u64)> = BTreeMap::new();
    for t in s.tasks.iter().filter(|t| t.cpu_s > 0.0) {
        let g = groups.entry(t.group()).or_default();
        *g = (
            g.0 + 1,
            g.1 + t.cpu_s,
            g.2 + t.runqueue_wait_s,
            g.3 + t.migrations,
        );
    }
    let busy = s.cpus.iter().map(|c| c.busy_fraction).sum::<f64>() / s.cpus.len() as f64;
    let switches: u64 = s.cpus.iter().map(|c| c.context_switches).sum();
    let mut t = Grid::new(&["tasks", "n", "CPU", "run-queue wait/task", "migrations"]);
    for (name, (n, cpu, wait, moves)) in &groups {
        t.row(vec![
            name.clone(),
            n.to_string(),
            human_ns(cpu * 1e9),
            human_ns(wait * 1e9 / *n as f64),
            moves.to_string(),
        ]);
    }
    let little: Vec<u32> = (s.cpus.iter())
        .filter(|c| c.little)
        .map(|c| c.cpu)
        .collect();
    let little = match little.is_empty() {
        true => String::new(),
        false => format!(
            " (little: {})",
            crate::sim::topology::format_cpulist(&little)
        ),
    };
    let head = format!(
        "CPUs: {}{little}, busy {:.1}% on average, {switches} context switches",
        s.cpus.len(),
        100.0 * busy
    );
    section(out, &format!("{head}\n{}", t.render()));
}

/// Where each task group's CPU time went: its share in each category that any group
/// spent time in, and the share spent in a memory stall.
fn profile_table(out: &mut String, v: &VariantResult) {
    let groups = v.sched.group_profiles();
    if groups.is_empty() {
        return;
    }
    let cats: BTreeSet<&str> = (groups.values())
        .flat_map(|(p, _)| p.categories.iter().filter(|c| *c.1 > 0))
        .map(|(c, _)| c.as_str())
        .collect();
    let mut head = vec!["CPU profile", "CPU", "memstall"];
    head.extend(&cats);
    let mut t = Grid::new(&head);
    for (name, (p, stalled)) in &groups {
        let pct = |c: &str| format!("{:.1}%", share(p, c));
        let stall = format!(
            "{:.1}%",
            100.0 * stalled.total_ns as f64 / p.total_ns as f64
        );
        let mut row = vec![name.clone(), human_ns(p.total_ns as f64), stall];
        row.extend(cats.iter().map(|c| pct(c)));
        t.row(row);
    }
    section(out, &t.render());
}

/// Per memcg and cause, the reclaim stalls of its tasks (the causes that stalled).
fn reclaim_stall_table(out: &mut String, v: &VariantResult) {
    let mut t = Grid::new(&["reclaim stalls", "cause", "n", "p50", "p99", "max"]);
    let mut any = false;
    for (path, m) in &v.memcgs {
        for (cause, s) in m.reclaim_stalls.iter().filter(|(_, s)| s.calls > 0) {
            any = true;
            t.row(vec![
                path.clone(),
                cause.clone(),
                s.calls.to_string(),
                human_ns(s.latency_ns.p50 as f64),
                human_ns(s.latency_ns.p99 as f64),
                human_ns(s.latency_ns.max as f64),
            ]);
        }
    }
    if any {
        section(out, &t.render());
    }
}

fn other_tables(out: &mut String, v: &VariantResult) {
    sched_table(out, v);
    profile_table(out, v);
    if v.alloc_stall.calls > 0 {
        let s = &v.alloc_stall;
        let mut t = Grid::new(&["alloc stalls", "p50", "p99", "max"]);
        t.row(vec![
            s.calls.to_string(),
            human_ns(s.latency_ns.p50 as f64),
            human_ns(s.latency_ns.p99 as f64),
            human_ns(s.latency_ns.max as f64),
        ]);
        section(out, &t.render());
    }
    reclaim_stall_table(out, v);
    if v.kswapd_profile.total_ns > 0 {
        let head = format!(
            "kswapd profile ({} of CPU)",
            human_ns(v.kswapd_profile.total_ns as f64)
        );
        section(
            out,
            &format!("{head}\n{}\n", perf_lines(&v.kswapd_profile).join("\n")),
        );
    }
    if !v.events.is_empty() {
        let mut t = Grid::new(&["event at", "command", "result"]);
        for e in &v.events {
            let at = format!("{:.3} s", e.time_s);
            t.row(vec![at, e.command.clone(), e.result.clone()]);
        }
        section(out, &t.render());
    }
    if !v.oom_kills.is_empty() {
        let mut t = Grid::new(&[
            "oom kill at",
            "scope",
            "victim",
            "victim memcg",
            "stall before",
        ]);
        for k in &v.oom_kills {
            let stall = k
                .stall_s
                .map_or_else(|| "kswapd".into(), |s| format!("{:.3} ms", s * 1e3));
            t.row(vec![
                format!("{:.3} s", k.time_s),
                k.scope.clone(),
                k.victim.clone(),
                k.victim_memcg.clone(),
                stall,
            ]);
        }
        section(out, &t.render());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::report::compare;
    use crate::output::report::tests::variant;
    use crate::results::{MemcgResult, RunResult};

    /// The pressure table and rows: `system` and each memcg that stalled, totals with
    /// their share of the run (2 s here); nothing when nothing stalled.
    #[test]
    fn pressure_shows_totals_and_shares_of_the_run() {
        let mut v = variant("base", 50.0, 600);
        assert!(!table(&v, false).contains("pressure"), "no stall, no table");
        v.pressure.some.total = 500_000;
        v.pressure.full.total = 100_000;
        let mut m = MemcgResult::default();
        m.pressure.some.total = 1_000_000;
        v.memcgs.insert("/a".into(), m);
        let t = table(&v, false);
        let section = &t[t.find("pressure").expect("a pressure table")..];
        let row =
            |name: &str| (section.lines().find(|l| l.starts_with(name)).unwrap_or("")).to_string();
        let system = row("system");
        assert!(
            system.contains("500.00ms") && system.contains("25.0%"),
            "{t}"
        );
        assert!(
            system.contains("100.00ms") && system.contains("5.0%"),
            "{t}"
        );
        assert!(
            row("/a ").contains("1.000s") && row("/a ").contains("50.0%"),
            "{t}"
        );
        let r = RunResult {
            scenario: "s".into(),
            variants: vec![v.clone(), v],
            ..Default::default()
        };
        let c = compare(&r, false);
        assert!(
            c.contains("/a pressure some share") && c.contains("50.0%"),
            "{c}"
        );
    }

    #[test]
    fn table_shows_known_counters_and_the_rest_when_verbose() {
        let v = variant("base", 50.0, 600);
        let quiet = table(&v, false);
        assert!(
            quiet.contains("pgscan_kswapd") && !quiet.contains("nr_free_pages"),
            "{quiet}"
        );
        assert!(table(&v, true).contains("nr_free_pages"));
        assert!(
            quiet.contains("900ns") && quiet.contains("12.0us") && quiet.contains("3.00ms"),
            "{quiet}"
        );
        assert!(quiet.contains("5 (50.0%)"), "{quiet}");
    }
}
