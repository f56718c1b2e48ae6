//! What the tables of `run` and `compare` share: the counters shown, units (`human_ns`,
//! `percent`, `change`), kswapd profiles as perf prints them, and the plain-text `Grid`.

use crate::results::metrics;
use crate::results::{MemcgResult, Profile, VariantResult};
use std::collections::BTreeSet;

/// The vmstat counters shown first, in this order (when present), then the model's own
/// `lru_gen_*` counters (from `model_counters`).
pub(super) const VMSTAT: &[&str] = &[
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgactivate",
    "pgdeactivate",
    "pgrefill",
    "pgrotated",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "allocstall_normal",
    "oom_kill",
    "lru_gen_aging",
    "lru_gen_aging_skipped",
    "lru_gen_abort_scan",
];

/// memory.stat columns shown per memcg (when present): a key, or else the sum of the
/// keys listed with it; the first four are bytes.
pub(super) const MEMCG_STAT: &[(&str, &[&str])] = &[
    ("usage", &[]),
    ("anon", &["active_anon", "inactive_anon"]),
    ("file", &["active_file", "inactive_file"]),
    ("swap", &[]),
    ("pgscan", metrics::PGSCAN),
    ("pgsteal", metrics::PGSTEAL),
    ("refault_anon", &["workingset_refault_anon"]),
    ("refault_file", &["workingset_refault_file"]),
    ("pswpout", &[]),
    ("pswpin", &[]),
    ("lru_gen_aging", &[]),
];
/// Nanoseconds with a unit: `850ns`, `12.3us`, `4.56ms`, `1.234s`.
pub(super) fn human_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        format!("{:.1}us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.3}s", ns / 1e9)
    }
}

pub(super) fn percent(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.1}%", part / whole * 100.0)
    } else {
        "-".into()
    }
}

/// The change from `base` to `x`: `+47.0%` below a doubling, `2.19x` from there.
pub fn change(base: f64, x: f64) -> String {
    if base == 0.0 {
        return if x == 0.0 { "=".into() } else { "new".into() };
    }
    let ratio = x / base;
    if ratio < 2.0 {
        format!("{:+.1}%", (ratio - 1.0) * 100.0)
    } else {
        format!("{ratio:.2}x")
    }
}

/// The vmstat counters to show: those of `VMSTAT` present in any variant, then, if
/// `verbose`, all others alphabetically.
pub(super) fn vmstat_names(vs: &[VariantResult], verbose: bool) -> Vec<&str> {
    // The model's MGLRU counters only where they counted something.
    let present = |k: &str| {
        vs.iter().any(|v| {
            v.counter(k)
                .is_some_and(|n| n > 0 || !k.starts_with("lru_gen"))
        })
    };
    let mut names: Vec<&str> = VMSTAT.iter().copied().filter(|k| present(k)).collect();
    if verbose {
        let rest: BTreeSet<&str> = vs
            .iter()
            .flat_map(|v| v.vmstat.keys().chain(v.model_counters.keys()))
            .map(String::as_str)
            .filter(|k| !VMSTAT.contains(k))
            .collect();
        names.extend(rest);
    }
    names
}

/// Column `c` of `MEMCG_STAT` for one memcg.
pub(super) fn memcg_stat(m: &MemcgResult, c: usize) -> Option<u64> {
    let (key, parts) = MEMCG_STAT[c];
    m.get(key).or_else(|| {
        let present: Vec<u64> = parts.iter().filter_map(|p| m.get(p)).collect();
        (!present.is_empty()).then(|| present.iter().sum())
    })
}

/// A category's share of a profile, in percent.
pub(super) fn share(p: &Profile, category: &str) -> f64 {
    if p.total_ns == 0 {
        return 0.0;
    }
    p.categories.get(category).copied().unwrap_or(0) as f64 / p.total_ns as f64 * 100.0
}

/// A profile as perf prints one: `  45.12%  rmap_walk`, by share descending, ties by name;
/// a category with no time is left out, as perf leaves out symbols with no samples.
pub(super) fn perf_lines(p: &Profile) -> Vec<String> {
    let mut cats: Vec<(&String, &u64)> = p.categories.iter().filter(|c| *c.1 > 0).collect();
    cats.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    cats.iter()
        .map(|(name, _)| format!("{:>7.2}%  {name}", share(p, name)))
        .collect()
}

/// `system` (the root's pressure) and each memcg below the root with its pressure.
pub(super) fn pressure_lines(v: &VariantResult) -> Vec<(String, crate::results::Pressure)> {
    let memcgs = (v.memcgs.iter()).filter(|(path, _)| path.as_str() != "/");
    std::iter::once(("system".to_string(), v.pressure))
        .chain(memcgs.map(|(path, m)| (path.clone(), m.pressure)))
        .collect()
}

pub(super) fn section(out: &mut String, body: &str) {
    out.push('\n');
    out.push_str(body);
}

/// A plain-text table: numeric columns right-aligned, the others left-aligned.
pub(crate) struct Grid {
    rows: Vec<Vec<String>>,
}

impl Grid {
    pub(crate) fn new<S: ToString>(header: &[S]) -> Grid {
        Grid {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub(crate) fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width = |c: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..cols).map(width).collect();
        let numeric = |c: usize| {
            self.rows[1..].iter().filter_map(|r| r.get(c)).all(|s| {
                s.starts_with(|ch: char| ch.is_ascii_digit() || ch == '+' || ch == '-')
                    || s == "="
                    || s == "new"
            })
        };
        let right: Vec<bool> = (0..cols).map(|c| c > 0 && numeric(c)).collect();
        let mut out = String::new();
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .zip(widths.iter().zip(&right))
                .map(|(s, (&w, &right))| {
                    if right {
                        format!("{s:>w$}")
                    } else {
                        format!("{s:<w$}")
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_table_is_sorted_by_share_then_name() {
        let mut p = Profile {
            total_ns: 100,
            ..Default::default()
        };
        for (c, ns) in [("b", 25), ("a", 25), ("c", 50)] {
            p.categories.insert(c.into(), ns);
        }
        assert_eq!(
            perf_lines(&p),
            ["  50.00%  c", "  25.00%  a", "  25.00%  b"]
        );
    }

    #[test]
    fn change_formats() {
        assert_eq!(change(100.0, 147.0), "+47.0%");
        assert_eq!(change(100.0, 219.0), "2.19x");
        assert_eq!(change(0.0, 0.0), "=");
        assert_eq!(change(0.0, 3.0), "new");
    }
}
