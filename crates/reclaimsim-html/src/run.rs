//! The report of a `run` or `compare` result: what the CLI's tables say, as charts.

use crate::chart::{self, Line, Series};
use crate::page::{Figure, Page, Section};
use reclaimsim::output::report::change;
use reclaimsim::results::{metrics, Profile, RunResult, VariantResult};
use std::collections::BTreeSet;

/// Charts per memcg (or workload) stop after this many; the note says how many are left out.
const MAX_ITEMS: usize = 16;
const MIB_PER_PAGE: f64 = 4096.0 / (1024.0 * 1024.0);
/// Labels of a sample's `lru` array, in its order.
const LRU_LISTS: [&str; 4] = [
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
];

/// The whole page.
pub fn page(r: &RunResult) -> Page {
    let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
    let mut facts = vec![format!("seed {}; variants: {}", r.seed, names.join(", "))];
    if r.variants.len() > 1 {
        facts.push(format!(
            "The text on a bar is the change against the first variant, {}.",
            names[0]
        ));
    }
    Page {
        title: format!("reclaimsim: {}", r.scenario),
        facts,
        description: r.description.clone(),
        summary: summary(&r.variants),
        sections: vec![
            memory(&r.variants),
            pressure(&r.variants),
            throughput(&r.variants),
            latency(&r.variants),
            stalls(&r.variants),
            locks(&r.variants),
            kswapd(&r.variants),
            reclaim_share(&r.variants),
            scheduling(&r.variants),
            events(&r.variants),
        ],
    }
}

/// The headline figures, as the text `compare` table leads with them: a row per
/// workload's throughput and per registry metric of `SUMMARY_METRICS` (its title and
/// unit), a column per variant, each later variant's cell with its change against the
/// first. The first row is the header.
fn summary(vs: &[VariantResult]) -> Vec<Vec<String>> {
    if vs.is_empty() {
        return Vec::new();
    }
    let mut rows: Vec<(String, String, Vec<f64>)> = workloads(vs)
        .into_iter()
        .map(|w| {
            let y = vs
                .iter()
                .map(|v| v.workloads.get(&w).map_or(0.0, |r| r.ops_per_sec));
            (format!("{w} throughput"), "ops/s".to_string(), y.collect())
        })
        .collect();
    for m in metrics::METRICS
        .iter()
        .filter(|m| SUMMARY_METRICS.contains(&m.key))
    {
        let (unit, scale) = m.shown;
        let y = vs.iter().map(|v| (m.value)(v) * scale).collect();
        rows.push((m.title.to_string(), unit.to_string(), y));
    }
    let mut header = vec!["".to_string(), "unit".to_string()];
    header.extend(vs.iter().map(|v| v.name.clone()));
    let body = rows.into_iter().map(|(title, unit, y)| {
        let cells = y.iter().enumerate().map(|(i, x)| match i {
            0 => short_number(*x),
            _ => format!("{} ({})", short_number(*x), change(y[0], *x)),
        });
        [title, unit].into_iter().chain(cells).collect()
    });
    std::iter::once(header).chain(body).collect()
}

/// The registry's metrics the summary gives beside each workload's throughput.
const SUMMARY_METRICS: [&str; 6] = [
    "pgscan",
    "pgsteal",
    "pswpin",
    "refaults",
    "alloc_stalls",
    "kswapd_ns",
];

/// 1234567 as `1.23M`, 5300 as `5.30k`, 89.26 as `89.3`: three significant digits.
fn short_number(x: f64) -> String {
    match x.abs() {
        a if a >= 1e9 => format!("{:.2}G", x / 1e9),
        a if a >= 1e6 => format!("{:.2}M", x / 1e6),
        a if a >= 1e3 => format!("{:.2}k", x / 1e3),
        a if a >= 100.0 || a == 0.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        _ => format!("{x:.2}"),
    }
}

/// The change of each variant against the first, as the text on its bars ("" for the first).
fn series(vs: &[VariantResult], y: impl Fn(&VariantResult) -> Vec<f64>) -> Vec<Series> {
    let base = vs.first().map(&y).unwrap_or_default();
    vs.iter()
        .enumerate()
        .map(|(i, v)| {
            let ys = y(v);
            let text = ys
                .iter()
                .zip(&base)
                .map(|(x, b)| {
                    if i == 0 {
                        String::new()
                    } else {
                        change(*b, *x)
                    }
                })
                .collect();
            Series {
                name: v.name.clone(),
                y: ys,
                text,
            }
        })
        .collect()
}

/// Up to `MAX_ITEMS` of `all`, and a note when some are left out.
fn capped<T: Clone>(all: &[T], what: &str) -> (Vec<T>, Option<String>) {
    let note = (all.len() > MAX_ITEMS)
        .then(|| format!("The first {MAX_ITEMS} of {} {what} are shown.", all.len()));
    (all.iter().take(MAX_ITEMS).cloned().collect(), note)
}

/// Free memory, then each memcg's LRU lists and (MGLRU) generations, over virtual time.
fn memory(vs: &[VariantResult]) -> Section {
    let heading = "Memory over time".to_string();
    if vs.iter().all(|v| v.timeseries.is_empty()) {
        return Section::empty(heading, "No samples in these results.");
    }
    let free = vs
        .iter()
        .map(|v| Line {
            name: v.name.clone(),
            x: v.timeseries.iter().map(|s| s.time_s).collect(),
            y: v.timeseries
                .iter()
                .map(|s| s.free_pages as f64 * MIB_PER_PAGE)
                .collect(),
        })
        .collect::<Vec<Line>>();
    let zoom = chart::settled(&free);
    let mut figures = vec![chart::lines("Free memory", "virtual time (s)", "MiB", free)];
    if let Some(z) = &zoom {
        chart::y_range(&mut figures[0], "MiB", z.range);
    }
    let paths: BTreeSet<&String> = vs
        .iter()
        .flat_map(|v| v.timeseries.iter().flat_map(|s| s.lru.keys()))
        .collect();
    let paths: Vec<&String> = paths.into_iter().collect();
    let (paths, note) = capped(&paths, "memcgs");
    for path in &paths {
        figures.extend(vs.iter().filter_map(|v| lru_lists(v, path)));
    }
    for path in &paths {
        figures.extend(vs.iter().filter_map(|v| generations(v, path)));
    }
    // Variants end at different virtual times: every panel spans the longest run.
    let x_max = vs
        .iter()
        .filter_map(|v| v.timeseries.last().map(|s| s.time_s))
        .fold(0.0, f64::max);
    if x_max > 0.0 {
        for f in &mut figures {
            chart::x_range(f, "virtual time (s)", x_max);
        }
    }
    let zoom = zoom.map(|z| {
        format!(
            "Free memory is zoomed to {:.1}-{:.1} MiB, where every variant sits after its \
             first drop (by {:.3} s): the drop from {:.0} MiB runs off the top.",
            z.range[0], z.range[1], z.from_x, z.top
        )
    });
    let note = match (zoom, note) {
        (Some(z), Some(n)) => Some(format!("{z} {n}")),
        (z, n) => z.or(n),
    };
    Section {
        heading,
        note,
        figures,
    }
}

/// Memory pressure over time: per memcg that stalled ("/" is system-wide), the `some`
/// and `full` totals of the time series (ms so far), a line per variant.
fn pressure(vs: &[VariantResult]) -> Section {
    let heading = "Memory pressure over time".to_string();
    let stalled = |path: &String, i: usize| {
        (vs.iter())
            .any(|v| (v.timeseries.iter()).any(|s| s.pressure.get(path).is_some_and(|p| p[i] > 0)))
    };
    let paths: BTreeSet<&String> = (vs.iter())
        .flat_map(|v| v.timeseries.iter().flat_map(|s| s.pressure.keys()))
        .filter(|path| stalled(path, 0))
        .collect();
    if paths.is_empty() {
        return Section::empty(heading, "No task stalled on memory.");
    }
    let paths: Vec<&String> = paths.into_iter().collect();
    let (paths, note) = capped(&paths, "memcgs");
    let line = |v: &VariantResult, path: &str, i: usize| Line {
        name: v.name.clone(),
        x: v.timeseries.iter().map(|s| s.time_s).collect(),
        y: (v.timeseries.iter())
            .map(|s| s.pressure.get(path).map_or(0.0, |p| p[i] as f64 / 1e3))
            .collect(),
    };
    let mut figures = Vec::new();
    for path in paths {
        for (i, kind) in [(0, "some"), (1, "full")] {
            if i == 1 && !stalled(path, 1) {
                continue;
            }
            let lines = vs.iter().map(|v| line(v, path, i)).collect();
            let title = format!("{path}: pressure {kind}, total");
            figures.push(chart::lines(
                &title,
                "virtual time (s)",
                "stall (ms)",
                lines,
            ));
        }
    }
    let note = note.or_else(|| {
        Some("Stall time so far (memory.pressure's total; \"/\" is /proc/pressure/memory).".into())
    });
    Section {
        heading,
        note,
        figures,
    }
}

/// One memcg's four LRU lists stacked over time, in one variant; None if all empty.
fn lru_lists(v: &VariantResult, path: &str) -> Option<Figure> {
    let x: Vec<f64> = v.timeseries.iter().map(|s| s.time_s).collect();
    let series: Vec<Series> = LRU_LISTS
        .iter()
        .enumerate()
        .map(|(i, list)| Series {
            name: list.to_string(),
            y: v.timeseries
                .iter()
                .map(|s| s.lru.get(path).map_or(0.0, |l| l[i] as f64 * MIB_PER_PAGE))
                .collect(),
            text: vec![],
        })
        .collect();
    if series.iter().all(|s| s.y.iter().all(|&y| y == 0.0)) {
        return None;
    }
    let title = format!("{path}: LRU lists ({})", v.name);
    Some(chart::stacked_areas(
        &title,
        "virtual time (s)",
        "MiB",
        &x,
        series,
    ))
}

/// One memcg's MGLRU generations stacked over time, youngest (max_seq) first, summed
/// over nodes, in one variant; None without generations.
fn generations(v: &VariantResult, path: &str) -> Option<Figure> {
    let samples: Vec<_> = v
        .timeseries
        .iter()
        .filter_map(|s| Some((s.time_s, s.lru_gen.as_ref()?.get(path)?)))
        .collect();
    let mut ranks: Vec<Vec<f64>> = vec![Vec::new(); 4];
    for (_, views) in &samples {
        let mut sums = [0.0; 4];
        for view in views.iter() {
            let max = view.gens.iter().map(|g| g.seq).max().unwrap_or(0);
            for g in &view.gens {
                let rank = (max - g.seq) as usize;
                if rank < 4 {
                    sums[rank] += (g.anon + g.file) as f64 * MIB_PER_PAGE;
                }
            }
        }
        for (r, s) in ranks.iter_mut().zip(sums) {
            r.push(s);
        }
    }
    if ranks.iter().all(|r| r.iter().all(|&y| y == 0.0)) {
        return None;
    }
    let x: Vec<f64> = samples.iter().map(|(t, _)| *t).collect();
    let series = ranks
        .into_iter()
        .enumerate()
        .map(|(i, y)| Series {
            name: if i == 0 {
                "max_seq".into()
            } else {
                format!("max_seq-{i}")
            },
            y,
            text: vec![],
        })
        .collect();
    let title = format!("{path}: MGLRU generations ({})", v.name);
    Some(chart::stacked_areas(
        &title,
        "virtual time (s)",
        "MiB",
        &x,
        series,
    ))
}

/// The workloads of any variant, by name.
fn workloads(vs: &[VariantResult]) -> Vec<String> {
    let names: BTreeSet<&String> = vs.iter().flat_map(|v| v.workloads.keys()).collect();
    names.into_iter().cloned().collect()
}

/// Ops/s (and MiB/s where a workload moves data) per workload and variant.
fn throughput(vs: &[VariantResult]) -> Section {
    let names = workloads(vs);
    type Metric = fn(&reclaimsim::results::WorkloadResult) -> f64;
    let metrics: [(&str, &str, Metric); 2] = [
        ("Throughput", "ops/s", |w| w.ops_per_sec),
        ("Bandwidth", "MiB/s", |w| w.mib_per_sec),
    ];
    let mut figures = vec![];
    for (title, unit, f) in metrics {
        let s = series(vs, |v| {
            let per_workload = names.iter().map(|n| v.workloads.get(n).map_or(0.0, f));
            per_workload.collect()
        });
        if has_data(&s) {
            figures.push(chart::grouped_bars(title, unit, &names, s, false));
        }
    }
    let note = figures
        .is_empty()
        .then(|| "No workload measured any operations.".to_string());
    Section {
        heading: "Throughput".into(),
        note,
        figures,
    }
}

/// Whether any bar of `s` is above zero (a chart of zeros is left out).
fn has_data(s: &[chart::Series]) -> bool {
    s.iter().any(|s| s.y.iter().any(|&y| y > 0.0))
}

/// p50, p99 and max latency per workload, a bar per variant (log scale).
fn latency(vs: &[VariantResult]) -> Section {
    let (names, note) = capped(&workloads(vs), "workloads");
    let x: Vec<String> = ["p50", "p99", "max"].map(String::from).to_vec();
    let mut figures = vec![];
    for name in &names {
        let s = series(vs, |v| {
            v.workloads.get(name).map_or(vec![0.0; 3], |w| {
                let l = &w.latency_ns;
                vec![l.p50 as f64 / 1e3, l.p99 as f64 / 1e3, l.max as f64 / 1e3]
            })
        });
        if has_data(&s) {
            let title = format!("{name}: latency");
            figures.push(chart::grouped_bars(&title, "µs (log)", &x, s, true));
        }
    }
    Section {
        heading: "Latency".into(),
        note,
        figures,
    }
}

/// Direct reclaim: how many try_to_free_pages() calls, and their p50/p99/max.
fn stalls(vs: &[VariantResult]) -> Section {
    let heading = "Allocation stalls (direct reclaim)".to_string();
    if vs.iter().all(|v| v.alloc_stall.calls == 0) {
        return Section::empty(heading, "No variant entered direct reclaim.");
    }
    let calls = series(vs, |v| vec![v.alloc_stall.calls as f64]);
    let dist = series(vs, |v| {
        let l = &v.alloc_stall.latency_ns;
        vec![l.p50 as f64 / 1e3, l.p99 as f64 / 1e3, l.max as f64 / 1e3]
    });
    let x: Vec<String> = ["p50", "p99", "max"].map(String::from).to_vec();
    let figures = vec![
        chart::grouped_bars(
            "Stalls",
            "try_to_free_pages calls",
            &["calls".into()],
            calls,
            false,
        ),
        chart::grouped_bars("Time per stall", "µs (log)", &x, dist, true),
    ];
    let note = Some("The virtual time each try_to_free_pages() call took.".into());
    Section {
        heading,
        note,
        figures,
    }
}

/// Lock sites shown: the ones with the most wait in any variant.
const MAX_LOCK_SITES: usize = 8;

/// Wait time per lock class and call site: the sites that waited most in any variant, as
/// horizontal bars (the site names stay readable) on a log axis (waits span orders of
/// magnitude), without per-bar labels.
fn locks(vs: &[VariantResult]) -> Section {
    let wait = |v: &VariantResult, c: &str, s: &str| {
        let site = v.locks.get(c).and_then(|l| l.sites.get(s));
        site.map_or(0.0, |s| s.wait_ns as f64 / 1e6)
    };
    let all: BTreeSet<(&String, &String)> = (vs.iter())
        .flat_map(|v| v.locks.iter())
        .flat_map(|(class, l)| {
            l.sites
                .iter()
                .filter(|(_, s)| s.wait_ns > 0)
                .map(move |(s, _)| (class, s))
        })
        .collect();
    let heading = "Lock wait per call site".to_string();
    if all.is_empty() {
        return Section::empty(heading, "No lock acquisition waited in any variant.");
    }
    let most = |(c, s): &(&String, &String)| vs.iter().map(|v| wait(v, c, s)).fold(0.0, f64::max);
    let mut sites: Vec<(&String, &String)> = all.into_iter().collect();
    // Most wait first; ties by name, so the page is the same every time.
    sites.sort_by(|a, b| most(b).total_cmp(&most(a)).then(a.cmp(b)));
    let note = (sites.len() > MAX_LOCK_SITES).then(|| {
        format!(
            "The {MAX_LOCK_SITES} of {} sites that waited most are shown.",
            sites.len()
        )
    });
    sites.truncate(MAX_LOCK_SITES);
    let x: Vec<String> = sites.iter().map(|(c, s)| format!("{c}/{s}")).collect();
    let s = vs
        .iter()
        .map(|v| Series {
            name: v.name.clone(),
            y: sites.iter().map(|(c, s)| wait(v, c, s)).collect(),
            text: vec![],
        })
        .collect();
    let figure = chart::grouped_hbars("Lock wait", "ms (virtual, all CPUs; log)", &x, s, true);
    Section {
        heading,
        note,
        figures: vec![figure],
    }
}

/// The run's timeline of writes: each `[[event]]`'s and each agent's (senpai's
/// memory.high or memory.reclaim, the Python agent's, oomd's kills), a row per variant
/// over the longest run's virtual time, the command and its result on hover.
fn events(vs: &[VariantResult]) -> Section {
    let heading = "Events and agents' actions".to_string();
    if vs.iter().all(|v| v.events.is_empty()) {
        let why = "No [[event]] write or agent action in any variant.";
        return Section::empty(heading, why);
    }
    let names: Vec<String> = vs.iter().map(|v| v.name.clone()).collect();
    let rows = (vs.iter())
        .map(|v| {
            (v.events.iter())
                .map(|e| (e.time_s, format!("{}: {}", e.command, e.result)))
                .collect()
        })
        .collect();
    let mut figure = chart::marks("Writes over time", "virtual time (s)", &names, rows);
    let end = vs.iter().map(|v| v.virtual_time_s).fold(0.0, f64::max);
    chart::x_range(&mut figure, "virtual time (s)", end);
    let note = "Each mark is one write at its virtual time: an [[event]]'s, an agent's \
                (a memory.high or memory.reclaim write, the Python agent's writes) or \
                an oomd kill; hover over it for the command and its result.";
    Section {
        heading,
        note: Some(note.to_string()),
        figures: vec![figure],
    }
}

/// kswapd's CPU time: the total per variant, and the profile by category side by side.
fn kswapd(vs: &[VariantResult]) -> Section {
    let heading = "kswapd profile".to_string();
    if vs.iter().all(|v| v.kswapd_profile.total_ns == 0) {
        return Section::empty(heading, "kswapd did not run in any variant.");
    }
    let total = series(vs, |v| vec![v.kswapd_profile.total_ns as f64 / 1e6]);
    let cats: BTreeSet<&String> = vs
        .iter()
        .flat_map(|v| v.kswapd_profile.categories.keys())
        .collect();
    let rows: Vec<String> = vs.iter().map(|v| v.name.clone()).collect();
    let profile = share_series(cats.iter().map(|c| c.as_str()), |c| {
        vs.iter().map(|v| share_of(&v.kswapd_profile, c)).collect()
    });
    let figures = vec![
        chart::stacked_hbars(
            "kswapd CPU by category",
            "% of kswapd's CPU time",
            &rows,
            profile,
        ),
        chart::grouped_bars(
            "kswapd CPU time",
            "ms (virtual)",
            &["kswapd".into()],
            total,
            false,
        ),
    ];
    Section {
        heading,
        note: None,
        figures,
    }
}

/// A category's share of a profile's time, in percent (0 for an empty profile).
fn share_of(p: &Profile, category: &str) -> f64 {
    match p.total_ns {
        0 => 0.0,
        t => p.categories.get(category).copied().unwrap_or(0) as f64 / t as f64 * 100.0,
    }
}

/// A stacked bar chart's series, one a category with its bars' shares (`y`, percent),
/// each share printed on its bar when 3% or more.
fn share_series<'a>(
    cats: impl IntoIterator<Item = &'a str>,
    y: impl Fn(&str) -> Vec<f64>,
) -> Vec<Series> {
    (cats.into_iter())
        .map(|c| {
            let y = y(c);
            let text = (y.iter())
                .map(|s| match *s >= 3.0 {
                    true => format!("{s:.1}%"),
                    false => String::new(),
                })
                .collect();
            Series {
                name: c.to_string(),
                y,
                text,
            }
        })
        .collect()
}

/// Each memcg's pgsteal as a share of all reclaim (the root's hierarchical pgsteal).
fn reclaim_share(vs: &[VariantResult]) -> Section {
    let heading = "Reclaim share per memcg".to_string();
    let pgsteal = |v: &VariantResult, path: &str| {
        v.memcgs.get(path).map_or(0.0, |m| {
            let get = |k: &str| m.stat.get(k).copied().unwrap_or(0) as f64;
            get("pgsteal_kswapd") + get("pgsteal_direct")
        })
    };
    let paths: BTreeSet<&String> = vs
        .iter()
        .flat_map(|v| v.memcgs.keys())
        .filter(|p| *p != "/")
        .collect();
    if paths.is_empty() || vs.iter().all(|v| pgsteal(v, "/") == 0.0) {
        return Section::empty(
            heading,
            "No reclaim from a memcg below the root in any variant.",
        );
    }
    let paths: Vec<String> = paths.into_iter().cloned().collect();
    let (paths, note) = capped(&paths, "memcgs");
    let s = series(vs, |v| {
        let all = pgsteal(v, "/");
        paths
            .iter()
            .map(|p| {
                if all > 0.0 {
                    pgsteal(v, p) / all * 100.0
                } else {
                    0.0
                }
            })
            .collect()
    });
    let figures = vec![chart::grouped_bars(
        "Share of pgsteal",
        "% of all pages reclaimed",
        &paths,
        s,
        false,
    )];
    Section {
        heading,
        note,
        figures,
    }
}

/// The task groups of any variant that ran, by name.
fn task_groups(vs: &[VariantResult]) -> Vec<String> {
    let groups: BTreeSet<String> = (vs.iter())
        .flat_map(|v| v.sched.tasks.iter().filter(|t| t.cpu_s > 0.0))
        .map(|t| t.group())
        .collect();
    groups.into_iter().collect()
}

/// The scheduler: each CPU's busy share, and per task group the mean share of the run
/// its tasks waited in a run queue and the migrations per task.
fn scheduling(vs: &[VariantResult]) -> Section {
    let heading = "CPUs and scheduling".to_string();
    let nr_cpus = vs.iter().map(|v| v.sched.cpus.len()).max().unwrap_or(0);
    if nr_cpus == 0 {
        return Section::empty(heading, "No scheduler data in these results.");
    }
    // A little core of an asymmetric machine is labelled so (`machine.little_cpus`).
    let little = |c: usize| (vs.iter()).any(|v| v.sched.cpus.get(c).is_some_and(|u| u.little));
    let cpus: Vec<String> = (0..nr_cpus)
        .map(|c| match little(c) {
            true => format!("{c} little"),
            false => c.to_string(),
        })
        .collect();
    let busy = series(vs, |v| {
        let busy = |c: usize| v.sched.cpus.get(c).map_or(0.0, |u| 100.0 * u.busy_fraction);
        (0..nr_cpus).map(busy).collect()
    });
    let mut figures = vec![chart::grouped_bars(
        "Busy share per CPU",
        "%",
        &cpus,
        busy,
        false,
    )];
    figures[0].wide = true;
    let groups = task_groups(vs);
    let per_group = |v: &VariantResult, f: &dyn Fn(&reclaimsim::results::TaskUse) -> f64| {
        (groups.iter())
            .map(|g| {
                let ts: Vec<_> = (v.sched.tasks.iter()).filter(|t| t.group() == *g).collect();
                ts.iter().map(|t| f(t)).sum::<f64>() / ts.len().max(1) as f64
            })
            .collect::<Vec<f64>>()
    };
    let wait = series(vs, |v| {
        let run = v.virtual_time_s.max(1e-12);
        per_group(v, &|t| 100.0 * t.runqueue_wait_s / run)
    });
    figures.push(chart::grouped_bars(
        "Run-queue wait (share of the run, mean per task)",
        "%",
        &groups,
        wait,
        false,
    ));
    let moves = series(vs, |v| per_group(v, &|t| t.migrations as f64));
    figures.push(chart::grouped_bars(
        "Migrations per task",
        "migrations",
        &groups,
        moves,
        false,
    ));
    figures.extend(group_profiles(vs, &groups));
    Section {
        heading,
        note: None,
        figures,
    }
}

/// Each task group's CPU time by category (`SchedUse::group_profiles`), a bar per
/// variant and group; none when no task has a profile.
fn group_profiles(vs: &[VariantResult], groups: &[String]) -> Option<Figure> {
    let mut rows = Vec::new();
    let mut profiles = Vec::new();
    for v in vs {
        let mut of = v.sched.group_profiles();
        for g in groups {
            if let Some((p, _)) = of.remove(g) {
                rows.push(format!("{}: {g}", v.name));
                profiles.push(p);
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let cats: BTreeSet<&str> = (profiles.iter())
        .flat_map(|p| p.categories.iter().filter(|c| *c.1 > 0))
        .map(|(c, _)| c.as_str())
        .collect();
    let series = share_series(cats, |c| profiles.iter().map(|p| share_of(p, c)).collect());
    Some(chart::stacked_hbars(
        "CPU by category per task group",
        "% of the group's CPU time",
        &rows,
        series,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reclaimsim::results::{EventResult, LockResult, LockSiteResult, Sample, WorkloadResult};
    use serde_json::Value;

    /// A variant whose samples end at `end_s`, whose kswapd ran, and whose lru_lock
    /// sites `s0`..`s9` waited `wait_ms * (i + 1)` ms each.
    fn variant(name: &str, end_s: f64, ops: f64, wait_ms: u64) -> VariantResult {
        let mut v = VariantResult {
            name: name.into(),
            ..Default::default()
        };
        v.timeseries = (0..=10)
            .map(|i| Sample {
                time_s: end_s * i as f64 / 10.0,
                free_pages: 1000 - 50 * i,
                lru: [("/a".to_string(), [1, 2, 3, 4])].into(),
                lru_gen: None,
                pressure: [("/a".to_string(), [100 * i, 0])].into(),
            })
            .collect();
        let w = WorkloadResult {
            ops_per_sec: ops,
            ..Default::default()
        };
        v.workloads.insert("fio".into(), w);
        v.vmstat = [
            ("pgscan_kswapd".to_string(), 100),
            ("pgscan_direct".into(), 50),
        ]
        .into();
        v.kswapd_profile.total_ns = 4_000_000;
        for (i, c) in ["io", "list_ops", "lock_wait", "rmap_walk"]
            .iter()
            .enumerate()
        {
            v.kswapd_profile
                .categories
                .insert(c.to_string(), 1_000_000 * (i as u64 % 2 + 1));
        }
        let sites = (0..10u64).map(|i| {
            let site = LockSiteResult {
                acquisitions: 1,
                wait_ns: wait_ms * (i + 1) * 1_000_000,
                ..Default::default()
            };
            (format!("s{i}"), site)
        });
        let lock = LockResult {
            sites: sites.collect(),
            ..Default::default()
        };
        v.locks.insert("lru_lock".into(), lock);
        v
    }

    fn json(f: &Figure) -> Value {
        serde_json::from_str(&f.plot.to_json()).unwrap()
    }

    fn two() -> Vec<VariantResult> {
        vec![
            variant("base", 0.5, 1000.0, 1),
            variant("new", 0.8, 1500.0, 2),
        ]
    }

    /// The task groups' profiles: a bar per variant and group that has one, a series per
    /// category used, as shares of the group's time (its tasks summed).
    #[test]
    fn each_task_groups_cpu_by_category() {
        use reclaimsim::results::{Profile, TaskUse};
        let task = |name: &str, cats: &[(&str, u64)]| TaskUse {
            task: name.into(),
            cpu_s: 1.0,
            profile: Profile {
                total_ns: cats.iter().map(|c| c.1).sum(),
                categories: cats.iter().map(|(c, ns)| (c.to_string(), *ns)).collect(),
            },
            ..Default::default()
        };
        let mut v = variant("base", 0.5, 1000.0, 1);
        v.sched.tasks = vec![
            task("fio/0", &[("work", 300), ("other", 100), ("irq", 0)]),
            task("fio/1", &[("work", 300), ("other", 100)]),
            task("kswapd0", &[("unmap", 50)]),
        ];
        let groups = task_groups(std::slice::from_ref(&v));
        let f = json(&group_profiles(&[v], &groups).expect("a chart"));
        let names: Vec<&str> = (f["data"].as_array().unwrap().iter())
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["other", "unmap", "work"], "irq unused");
        let work = &f["data"][2];
        // Rows are given bottom up: kswapd first.
        assert_eq!(work["y"], serde_json::json!(["base: kswapd", "base: fio"]));
        assert_eq!(work["x"], serde_json::json!([0.0, 75.0]));
        assert!(group_profiles(&[], &groups).is_none());
    }

    /// A chart of `some` per memcg that stalled (a line per variant), none for `full`
    /// when nothing was fully stalled.
    #[test]
    fn pressure_charts_the_stalled_memcgs_totals() {
        let s = pressure(&two());
        assert_eq!(s.figures.len(), 1, "some only");
        let f = json(&s.figures[0]);
        assert_eq!(
            f["data"].as_array().map(Vec::len),
            Some(2),
            "a line per variant"
        );
        assert_eq!(f["data"][0]["y"][10], 1.0, "1000 µs is 1 ms");
        assert!(pressure(&[]).figures.is_empty());
    }

    #[test]
    fn memory_panels_share_the_longest_runs_time_range() {
        let section = memory(&two());
        assert_eq!(
            section.figures.len(),
            3,
            "free memory, /a's lists in each variant"
        );
        for f in &section.figures {
            let range = &json(f)["layout"]["xaxis"]["range"];
            assert_eq!(range, &serde_json::json!([0.0, 0.8]), "{range}");
        }
    }

    /// Free memory that drops to a few MiB and stays there in every variant is shown
    /// zoomed to those MiB, and the note says so; a steady decline is not zoomed.
    #[test]
    fn free_memory_is_zoomed_to_where_it_settles() {
        let mut vs = two();
        for (n, v) in vs.iter_mut().enumerate() {
            for (i, s) in v.timeseries.iter_mut().enumerate() {
                s.free_pages = if i < 2 { 131072 } else { 1000 + 256 * n as u64 };
            }
        }
        let section = memory(&vs);
        let range = &json(&section.figures[0])["layout"]["yaxis"]["range"];
        let mib = |pages: f64| pages * MIB_PER_PAGE;
        let (lo, hi) = (mib(1000.0), mib(1256.0));
        let pad = 0.05 * (hi - lo);
        assert_eq!(range, &serde_json::json!([lo - pad, hi + pad]), "{range}");
        let note = section.note.unwrap();
        assert!(note.contains("zoomed to 3.9-5.0 MiB"), "{note}");
        assert!(note.contains("the drop from 512 MiB"), "{note}");
        let section = memory(&two());
        assert!(json(&section.figures[0])["layout"]["yaxis"]["range"].is_null());
        assert!(section.note.is_none());
    }

    #[test]
    fn lock_wait_shows_the_sites_that_waited_most_sorted_on_a_log_axis() {
        let section = locks(&two());
        assert_eq!(section.figures.len(), 1);
        let j = json(&section.figures[0]);
        assert_eq!(j["layout"]["xaxis"]["type"], "log");
        assert_eq!(j["data"][0]["orientation"], "h");
        // The traces go in bottom up too: the first variant is the last trace.
        assert_eq!(j["data"][1]["name"], "base");
        assert_eq!(j["layout"]["legend"]["traceorder"], "reversed");
        let rows: Vec<&str> = (j["data"][1]["y"].as_array().unwrap().iter())
            .map(|x| x.as_str().unwrap())
            .collect();
        // Plotly draws the first row at the bottom, so the most comes last.
        let want: Vec<String> = (2..10).map(|i| format!("lru_lock/s{i}")).collect();
        assert_eq!(rows, want, "the 8 most, most at the top");
        let x = j["data"][1]["x"].as_array().unwrap();
        assert_eq!((x[0].as_f64(), x[7].as_f64()), (Some(3.0), Some(10.0)));
        let text = j["data"][0]["text"].as_array();
        assert!(text.is_none_or(|t| t.is_empty()), "no labels to collide");
        assert!(section.note.unwrap().contains("8 of 10 sites"));
    }

    #[test]
    fn events_are_marked_per_variant_over_the_longest_run() {
        let mut vs = two();
        assert!(events(&vs).figures.is_empty(), "none: a note only");
        vs[1].virtual_time_s = 0.8;
        vs[1].events.push(EventResult {
            time_s: 0.25,
            command: "echo 1048576 > /a/memory.reclaim".into(),
            result: "ok".into(),
        });
        let section = events(&vs);
        let j = json(&section.figures[0]);
        assert_eq!(j["data"][1]["x"], serde_json::json!([0.25]));
        assert_eq!(j["data"][1]["y"], serde_json::json!(["new"]));
        let text = &j["data"][1]["text"][0];
        assert_eq!(text, "echo 1048576 > /a/memory.reclaim: ok");
        assert_eq!(j["data"][0]["x"], serde_json::json!([]));
        assert_eq!(j["layout"]["xaxis"]["range"], serde_json::json!([0.0, 0.8]));
    }

    #[test]
    fn bar_labels_never_overlap() {
        let section = throughput(&two());
        let j = json(&section.figures[0]);
        assert_eq!(j["data"][1]["text"], serde_json::json!(["+50.0%"]));
        let text = &j["layout"]["uniformtext"];
        assert_eq!(text["mode"], "hide");
        assert_eq!(text["minsize"], chart::LABEL_MIN_PX);
        // Labels are as wide as their bars at most: bars that touch would run their
        // labels together.
        let gap = j["layout"]["bargroupgap"].as_f64().unwrap_or(0.0);
        assert!(gap >= 0.1, "bars of a group need a gap between them: {gap}");
    }

    #[test]
    fn profile_categories_use_no_variant_colour() {
        let vs = two();
        let section = kswapd(&vs);
        let j = json(&section.figures[0]);
        let traces = j["data"].as_array().unwrap();
        assert_eq!(traces.len(), 4, "a trace per category");
        // Plotly draws the first row at the bottom: the first variant comes last, so
        // that the rows read top down in the scenario's order, as the lock chart's do.
        assert_eq!(traces[0]["y"], serde_json::json!(["new", "base"]));
        let variant_colours: Vec<&str> = (0..10).map(chart::color).collect();
        let mut seen = BTreeSet::new();
        for t in traces {
            let c = t["marker"]["color"].as_str().unwrap();
            assert!(!variant_colours.contains(&c), "{c} is a variant's colour");
            assert!(seen.insert(c), "{c} twice");
        }
    }

    #[test]
    fn summary_leads_with_throughput_and_the_registrys_counters() {
        let rows = summary(&two());
        assert_eq!(rows[0], ["", "unit", "base", "new"]);
        assert_eq!(
            rows[1],
            ["fio throughput", "ops/s", "1.00k", "1.50k (+50.0%)"]
        );
        let scanned = (rows.iter())
            .find(|r| r[0] == "Pages scanned")
            .expect("pgscan's row");
        assert_eq!(scanned[2..], ["150", "150 (+0.0%)"]);
        let page = page(&RunResult {
            scenario: "s".into(),
            variants: two(),
            ..Default::default()
        })
        .render();
        let table = page.find("<table class=\"summary\">").unwrap();
        assert!(
            table < page.find("id=\"plot-0\"").unwrap(),
            "before the charts"
        );
    }
}
