//! The side-by-side table `compare` prints: a row per metric, a column per variant, each
//! after the first followed by its change from the first.

use super::format::*;
use crate::results::{RunResult, VariantResult, WorkloadResult};
use std::collections::BTreeSet;

/// Per-memcg rows of `compare` (memory.stat keys, hierarchical); each memcg's share of
/// pgsteal is shown after the pgsteal row.
const MEMCG_COMPARE: &[&str] = &[
    "pgscan",
    "pgsteal",
    "lru_gen_aging",
    "pswpout",
    "pswpin",
    "refault_anon",
    "refault_file",
];
/// The rows of `compare`: one per metric, a column per variant, each after the first
/// followed by its change from the first.
struct Rows<'a> {
    vs: &'a [VariantResult],
    grid: Grid,
    /// The rows being added are of what only the model measures (its locks, its
    /// kswapd profile, MiB/s of anon touches): a kernel variant's cells are `n/a`.
    model_only: bool,
}

impl Rows<'_> {
    fn row(
        &mut self,
        metric: String,
        get: &dyn Fn(&VariantResult) -> f64,
        show: &dyn Fn(f64) -> String,
    ) {
        self.cells(metric, get, show, false);
    }

    /// A row of counts.
    fn count(&mut self, metric: String, get: &dyn Fn(&VariantResult) -> f64) {
        self.row(metric, get, &|x| format!("{x:.0}"));
    }

    /// A row of durations.
    fn time(&mut self, metric: String, get: &dyn Fn(&VariantResult) -> f64) {
        self.timed(metric, get, &human_ns);
    }

    /// A row of rates or shares, one decimal.
    fn rate(&mut self, metric: String, get: &dyn Fn(&VariantResult) -> f64) {
        self.timed(metric, get, &|x| format!("{x:.1}"));
    }

    /// A row of figures measured in time (durations, rates): a kernel variant's under
    /// TCG are in guest time, marked `(g)`, and their change from a variant whose are
    /// not is `-`, since the two clocks are not the same machine's.
    fn timed(
        &mut self,
        metric: String,
        get: &dyn Fn(&VariantResult) -> f64,
        show: &dyn Fn(f64) -> String,
    ) {
        self.cells(metric, get, show, true);
    }

    fn cells(
        &mut self,
        metric: String,
        get: &dyn Fn(&VariantResult) -> f64,
        show: &dyn Fn(f64) -> String,
        timed: bool,
    ) {
        // What only the model measures, or a value the kernel's files did not have (NaN).
        let missing = |v: &VariantResult| v.guest.is_some() && (self.model_only || get(v).is_nan());
        let clock = |v: &VariantResult| timed && guest_timed(v);
        let cell = |v: &VariantResult, x: f64| match (missing(v), clock(v)) {
            (true, _) => "n/a".to_string(),
            (false, true) => format!("{} (g)", show(x)),
            (false, false) => show(x),
        };
        let first = &self.vs[0];
        let base = get(first);
        let mut cells = vec![metric, cell(first, base)];
        for v in &self.vs[1..] {
            let x = get(v);
            let comparable = clock(v) == clock(first) && !missing(v) && !missing(first);
            let change = match comparable {
                true => change(base, x),
                false => "-".into(),
            };
            cells.extend([cell(v, x), change]);
        }
        self.grid.row(cells);
    }
}

/// What `(g)` and `n/a` mean, when a variant ran on a kernel.
fn kernel_legend(vs: &[VariantResult]) -> String {
    let mut out = String::new();
    if vs.iter().any(|v| v.guest.is_some()) {
        out.push_str("n/a: what only the model measures (its locks, its kswapd profile, MiB/s)\n");
    }
    if vs.iter().any(guest_timed) {
        out.push_str(
            "(g): guest time on a kernel under QEMU's TCG, many times slower than the \
             machine the scenario describes: compare counts, not times or rates\n",
        );
    }
    out
}

/// Whether a variant ran on a kernel under TCG, whose clock is the guest's, many times
/// slower than the machine the scenario describes.
fn guest_timed(v: &VariantResult) -> bool {
    v.guest.as_ref().is_some_and(|g| g.accelerator == "tcg")
}

/// Variants side by side: one row per metric, one column per variant, each after the
/// first followed by its change from the first. `verbose` adds every other vmstat counter.
pub fn compare(r: &RunResult, verbose: bool) -> String {
    let vs = &r.variants;
    let Some(first) = vs.first() else {
        return format!("{}: no variants\n", r.scenario);
    };
    let mut header = vec!["metric".to_string(), first.name.clone()];
    for v in &vs[1..] {
        header.extend([v.name.clone(), format!("vs {}", first.name)]);
    }
    let mut rows = Rows {
        vs,
        grid: Grid::new(&header),
        model_only: false,
    };
    rows.timed("virtual time".into(), &|v| v.virtual_time_s, &|x| {
        format!("{x:.3} s")
    });
    workload_rows(&mut rows, verbose);
    for name in vmstat_names(vs, verbose) {
        rows.count(name.to_string(), &|v| v.counter(name).unwrap_or(0) as f64);
    }
    if vs.iter().any(|v| v.alloc_stall.calls > 0) {
        rows.model_only = true;
        rows.count("alloc stalls".into(), &|v| v.alloc_stall.calls as f64);
        rows.time("alloc stall p50".into(), &|v| {
            v.alloc_stall.latency_ns.p50 as f64
        });
        rows.time("alloc stall p99".into(), &|v| {
            v.alloc_stall.latency_ns.p99 as f64
        });
        rows.time("alloc stall max".into(), &|v| {
            v.alloc_stall.latency_ns.max as f64
        });
        rows.model_only = false;
    }
    memcg_rows(&mut rows, verbose);
    pressure_rows(&mut rows);
    rows.model_only = true;
    lock_rows(&mut rows);
    let kswapd = |v: &VariantResult| v.kswapd_profile.total_ns as f64;
    if vs.iter().any(|v| kswapd(v) > 0.0) {
        rows.time("kswapd CPU".into(), &kswapd);
        let categories: BTreeSet<&String> = (vs.iter())
            .flat_map(|v| v.kswapd_profile.categories.iter())
            .filter(|c| *c.1 > 0)
            .map(|c| c.0)
            .collect();
        for c in categories {
            let share = |v: &VariantResult| share(&v.kswapd_profile, c);
            rows.row(format!("kswapd {c}"), &share, &|x| format!("{x:.2}%"));
        }
    }
    rows.model_only = false;
    rows.count("oom kills".into(), &|v| v.oom_kills.len() as f64);

    let mut out = format!("{} (seed {})\n", r.scenario, r.seed);
    if !r.description.is_empty() {
        out.push_str(r.description.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&rows.grid.render());
    out.push_str(&kernel_legend(vs));
    if vs.iter().any(|v| v.kswapd_profile.total_ns > 0) {
        out.push_str("\nkswapd profiles\n");
        out.push_str(&side_by_side(vs));
    }
    out
}

/// Throughput and latency per workload, and summed over workloads when there are several.
fn workload_rows(rows: &mut Rows, verbose: bool) {
    let vs = rows.vs;
    let workloads: BTreeSet<&String> = vs.iter().flat_map(|v| v.workloads.keys()).collect();
    if workloads.len() > 1 {
        // Throughput summed over workloads (vm-scalability reports the sum over its dd).
        let total = |v: &VariantResult, f: fn(&WorkloadResult) -> f64| {
            v.workloads.values().map(f).sum::<f64>()
        };
        rows.rate("total ops/s".into(), &|v| total(v, |w| w.ops_per_sec));
        rows.model_only = true;
        rows.rate("total MiB/s".into(), &|v| total(v, |w| w.mib_per_sec));
        rows.model_only = false;
    }
    // Past this many workloads (104 containers), only the totals are shown; --json and
    // -v have every workload.
    const MAX_WORKLOAD_ROWS: usize = 16;
    if workloads.len() > MAX_WORKLOAD_ROWS && !verbose {
        return;
    }
    let on_kernel = vs.iter().any(|v| v.guest.is_some());
    for w in workloads {
        let get = |v: &VariantResult| v.workloads.get(w).cloned().unwrap_or_default();
        if on_kernel {
            // Beside a kernel the counts compare; the rates need the same clock.
            rows.count(format!("{w} ops"), &|v| get(v).ops as f64);
        }
        rows.rate(format!("{w} ops/s"), &|v| get(v).ops_per_sec);
        if vs.iter().any(|v| get(v).mib_per_sec > 0.0) {
            rows.model_only = true;
            rows.rate(format!("{w} MiB/s"), &|v| get(v).mib_per_sec);
            rows.model_only = false;
        }
        rows.time(format!("{w} p50"), &|v| get(v).latency_ns.p50 as f64);
        rows.time(format!("{w} p99"), &|v| get(v).latency_ns.p99 as f64);
        rows.time(format!("{w} max"), &|v| get(v).latency_ns.max as f64);
    }
}

/// Per memcg, its memory.stat rows (with its share of all reclaim after pgsteal), then
/// the fairness of reclaim across them.
fn memcg_rows(rows: &mut Rows, verbose: bool) {
    let vs = rows.vs;
    let memcgs = compare_memcgs(vs, verbose);
    for &path in &memcgs {
        let stat = |v: &VariantResult, key: &str| {
            let c = MEMCG_STAT.iter().position(|(k, _)| *k == key);
            let x = (v.memcgs.get(path)).and_then(|m| match c {
                Some(c) => memcg_stat(m, c),
                None => m.get(key),
            });
            // A kernel's memory.stat without the key (6.1 has no pswpin there): n/a.
            match (x, v.guest.is_some() && v.memcgs.contains_key(path)) {
                (Some(x), _) => x as f64,
                (None, true) => f64::NAN,
                (None, false) => 0.0,
            }
        };
        for key in MEMCG_COMPARE {
            if !vs.iter().any(|v| stat(v, key) > 0.0) {
                continue;
            }
            rows.count(format!("{path} {key}"), &|v| stat(v, key));
            if *key == "pgsteal" {
                // The share of all reclaim (the root's hierarchical pgsteal).
                let share = |v: &VariantResult| {
                    let all = (v.memcgs.get("/"))
                        .and_then(|m| memcg_stat(m, pgsteal_col()))
                        .unwrap_or(0);
                    if all == 0 {
                        0.0
                    } else {
                        stat(v, "pgsteal") / all as f64 * 100.0
                    }
                };
                rows.row(format!("{path} pgsteal share"), &share, &|x| {
                    format!("{x:.1}%")
                });
            }
        }
    }
    if memcgs.len() > 1 && vs.iter().any(|v| pgsteal_jain(v, &memcgs) > 0.0) {
        rows.row(
            "pgsteal fairness (Jain)".into(),
            &|v| pgsteal_jain(v, &memcgs),
            &|x| format!("{x:.3}"),
        );
    }
}

/// The pressure of the system and of each memcg that stalled in some variant: the
/// `some` and `full` totals, each with its share of the variant's virtual time.
fn pressure_rows(rows: &mut Rows) {
    let vs = rows.vs;
    let names: BTreeSet<String> = (vs.iter())
        .flat_map(pressure_lines)
        .filter(|(_, p)| p.some.total > 0)
        .map(|(name, _)| name)
        .collect();
    for name in &names {
        let line = |v: &VariantResult, full: bool| {
            let p = (pressure_lines(v).into_iter())
                .find(|(n, _)| n == name)
                .map(|(_, p)| p)
                .unwrap_or_default();
            let total = if full { p.full.total } else { p.some.total };
            (total as f64 * 1e3, v.virtual_time_s * 1e9)
        };
        for (kind, full) in [("some", false), ("full", true)] {
            rows.time(format!("{name} pressure {kind}"), &|v| line(v, full).0);
            let share = |v: &VariantResult| {
                let (ns, run) = line(v, full);
                if run > 0.0 {
                    ns / run * 100.0
                } else {
                    0.0
                }
            };
            rows.row(format!("{name} pressure {kind} share"), &share, &|x| {
                format!("{x:.1}%")
            });
        }
    }
}

/// Per lock class, its acquisitions, contention and times, then per call site.
fn lock_rows(rows: &mut Rows) {
    let vs = rows.vs;
    let locks: BTreeSet<&String> = vs.iter().flat_map(|v| v.locks.keys()).collect();
    for l in locks {
        let get = |v: &VariantResult| v.locks.get(l).cloned().unwrap_or_default();
        rows.count(format!("{l} acquisitions"), &|v| get(v).acquisitions as f64);
        rows.count(format!("{l} contended"), &|v| get(v).contended as f64);
        rows.count(format!("{l} relocks"), &|v| get(v).relocks as f64);
        rows.time(format!("{l} wait"), &|v| get(v).wait_ns as f64);
        rows.time(format!("{l} wait, worst instance"), &|v| {
            get(v).max_wait_ns as f64
        });
        rows.time(format!("{l} hold"), &|v| get(v).hold_ns as f64);
        rows.row(
            format!("{l} spin share"),
            &|v| get(v).spin_share * 100.0,
            &|x| format!("{x:.2}%"),
        );
        let sites: BTreeSet<&String> = (vs.iter())
            .filter_map(|v| v.locks.get(l))
            .flat_map(|x| x.sites.keys())
            .collect();
        for site in sites {
            let st = |v: &VariantResult| get(v).sites.get(site).cloned().unwrap_or_default();
            rows.count(format!("{l} {site} acquisitions"), &|v| {
                st(v).acquisitions as f64
            });
            rows.time(format!("{l} {site} hold"), &|v| st(v).hold_ns as f64);
            rows.time(format!("{l} {site} wait"), &|v| st(v).wait_ns as f64);
        }
    }
}

/// The memcgs `compare` shows rows for: every memcg but the root (whose memory.stat
/// is the sum of all), or the root alone; none past 16 memcgs unless `verbose`.
fn compare_memcgs(vs: &[VariantResult], verbose: bool) -> Vec<&String> {
    let paths: BTreeSet<&String> = vs.iter().flat_map(|v| v.memcgs.keys()).collect();
    let children: Vec<&String> = paths
        .iter()
        .copied()
        .filter(|p| p.as_str() != "/")
        .collect();
    if children.is_empty() {
        return paths.into_iter().collect();
    }
    if children.len() > 16 && !verbose {
        return Vec::new();
    }
    children
}

/// Jain's fairness index of the memcgs' pgsteal, (sum x)^2 / (n sum x^2): 1 when all
/// reclaimed equally, 1/n when one memcg took it all; 0 when nothing was reclaimed.
fn pgsteal_jain(v: &VariantResult, memcgs: &[&String]) -> f64 {
    let c = pgsteal_col();
    let xs: Vec<f64> = memcgs
        .iter()
        .map(|p| v.memcgs.get(*p).and_then(|m| memcg_stat(m, c)).unwrap_or(0) as f64)
        .collect();
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        0.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

/// The pgsteal column of `MEMCG_STAT`.
fn pgsteal_col() -> usize {
    MEMCG_STAT
        .iter()
        .position(|(k, _)| *k == "pgsteal")
        .expect("MEMCG_STAT has pgsteal")
}

/// Each variant's perf table in a column of its own.
fn side_by_side(vs: &[VariantResult]) -> String {
    let columns: Vec<Vec<String>> = vs
        .iter()
        .map(|v| {
            std::iter::once(v.name.clone())
                .chain(perf_lines(&v.kswapd_profile))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| c.iter().map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = String::new();
    for i in 0..rows {
        let line: Vec<String> = columns
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{:<w$}", c.get(i).map_or("", String::as_str)))
            .collect();
        out.push_str(line.join("    ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::report::tests::variant;
    use crate::results::{Latency, MemcgResult};

    #[test]
    fn compare_shows_change_from_first_variant() {
        let r = RunResult {
            scenario: "s".into(),
            description: String::new(),
            seed: 1,
            variants: vec![variant("old", 100.0, 600), variant("new", 147.0, 300)],
            sensitivity: None,
        };
        let out = compare(&r, false);
        let ops = out
            .lines()
            .find(|l| l.starts_with("kv ops/s"))
            .unwrap_or_default();
        assert!(
            ops.contains("100.0") && ops.contains("147.0") && ops.contains("+47.0%"),
            "{out}"
        );
        let rmap = out
            .lines()
            .find(|l| l.starts_with("kswapd rmap_walk"))
            .unwrap_or_default();
        assert!(rmap.contains("60.00%") && rmap.contains("-50.0%"), "{out}");
        assert!(out.contains("kswapd profiles"));
    }

    #[test]
    fn compare_shows_stalls_memcg_shares_and_the_description() {
        let with = |name: &str, a: u64, b: u64, p99: u64| {
            let mut v = variant(name, 1.0, 1);
            for (path, steal) in [("/", a + b), ("/a", a), ("/b", b)] {
                let mut m = MemcgResult::default();
                m.stat.insert("pgsteal_kswapd".into(), steal);
                m.stat.insert("pgsteal_direct".into(), 0);
                m.model_counters.insert("lru_gen_aging".into(), 3);
                v.memcgs.insert(path.into(), m);
            }
            v.alloc_stall = crate::results::AllocStall {
                calls: 10,
                latency_ns: Latency {
                    p50: 1000,
                    p99,
                    max: p99,
                },
            };
            v
        };
        let r = RunResult {
            scenario: "s".into(),
            description: "seed: +119%".into(),
            seed: 1,
            variants: vec![with("x", 50, 50, 2_000_000), with("y", 100, 0, 1_000_000)],
            sensitivity: None,
        };
        let out = compare(&r, false);
        let line = |start: &str| {
            out.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no {start}: {out}"))
                .to_string()
        };
        assert!(out.lines().nth(1) == Some("seed: +119%"), "{out}");
        assert!(line("alloc stall p99").contains("2.00ms"));
        assert!(line("alloc stall p99").contains("-50.0%"));
        let share = line("/a pgsteal share");
        assert!(
            share.contains("50.0%") && share.contains("100.0%"),
            "{share}"
        );
        assert!(line("/a lru_gen_aging").contains('3'));
        let jain = line("pgsteal fairness (Jain)");
        assert!(jain.contains("1.000") && jain.contains("0.500"), "{jain}");
        assert!(
            !out.contains("\n/ pgsteal"),
            "the root is the total, not a row"
        );
    }

    /// Beside a kernel variant under TCG: its times and rates are marked guest time and
    /// their change from the model's is `-`; the counts compare, with each workload's
    /// operation count; what only the model measures is `n/a`. A run of the model alone
    /// shows none of it.
    #[test]
    fn a_kernel_variant_beside_the_model_compares_counts() {
        let model = variant("model", 50.0, 600);
        let mut linux = variant("linux", 5.0, 0);
        linux.backend = Some("kernel".into());
        linux.locks.clear();
        linux.kswapd_profile = Default::default();
        linux.vmstat.insert("pgscan_kswapd".into(), 1500);
        linux.guest = Some(crate::results::GuestRun {
            accelerator: "tcg".into(),
            ..Default::default()
        });
        // 6.1's memory.stat has no pswpin: n/a, not 0
        let mut model = model;
        let mut m = MemcgResult::default();
        m.stat.insert("pgscan".into(), 5);
        m.stat.insert("pswpin".into(), 3);
        model.memcgs.insert("/a".into(), m.clone());
        m.stat.shift_remove("pswpin");
        linux.memcgs.insert("/a".into(), m);
        let r = RunResult {
            scenario: "s".into(),
            variants: vec![model.clone(), linux],
            ..Default::default()
        };
        let c = compare(&r, false);
        let row = |name: &str| {
            let line = c.lines().find(|l| l.starts_with(name)).unwrap_or("");
            line.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            row("kv ops/s"),
            ["kv", "ops/s", "50.0", "5.0", "(g)", "-"],
            "{c}"
        );
        assert_eq!(row("/a pswpin"), ["/a", "pswpin", "3", "n/a", "-"], "{c}");
        assert_eq!(row("/a pgscan"), ["/a", "pgscan", "5", "5", "+0.0%"], "{c}");
        assert_eq!(row("kv ops "), ["kv", "ops", "100", "100", "+0.0%"], "{c}");
        assert_eq!(
            row("pgscan_kswapd"),
            ["pgscan_kswapd", "1000", "1500", "+50.0%"]
        );
        assert_eq!(
            row("virtual time"),
            ["virtual", "time", "2.000", "s", "2.000", "s", "(g)", "-"]
        );
        assert_eq!(
            row("lru_lock acquisitions"),
            ["lru_lock", "acquisitions", "10", "n/a", "-"]
        );
        assert!(
            c.contains("(g): guest time") && c.contains("n/a: what only the model"),
            "{c}"
        );
        let alone = RunResult {
            variants: vec![model.clone(), model],
            ..r
        };
        let c = compare(&alone, false);
        assert!(
            !c.contains("(g)") && !c.contains("n/a") && !c.contains("kv ops "),
            "{c}"
        );
    }
}
