//! The metrics derived from a variant's results, defined once: the sums of kernel
//! counters that tables show (`pgscan` is `pgscan_kswapd + pgscan_direct`, as
//! /proc/vmstat has no `pgscan` of its own in 6.1), and the per-variant figures that
//! sweeps plot and the Python package tabulates. The report, the HTML report and the
//! Python package all read them from here.

use super::VariantResult;
use std::collections::BTreeMap;

/// Sums of counters: a derived name and the vmstat (or memory.stat) keys it adds up.
pub const SUMS: &[(&str, &[&str])] = &[
    ("pgscan", PGSCAN),
    ("pgsteal", PGSTEAL),
    ("refaults", REFAULTS),
];

/// Pages scanned by reclaim, kswapd's and direct reclaimers'.
pub const PGSCAN: &[&str] = &["pgscan_kswapd", "pgscan_direct"];
/// Pages reclaimed, kswapd's and direct reclaimers'.
pub const PGSTEAL: &[&str] = &["pgsteal_kswapd", "pgsteal_direct"];
/// Refaults of evicted pages, anon and file.
pub const REFAULTS: &[&str] = &["workingset_refault_anon", "workingset_refault_file"];

/// The keys a derived name adds up (`None` for a name that is not a sum).
pub fn sum_keys(name: &str) -> Option<&'static [&'static str]> {
    SUMS.iter().find(|(n, _)| *n == name).map(|(_, keys)| *keys)
}

/// The sum of `keys` in a counter map; a missing key counts 0.
pub fn sum_of(counters: &BTreeMap<String, u64>, keys: &[&str]) -> u64 {
    keys.iter()
        .map(|k| counters.get(*k).copied().unwrap_or(0))
        .sum()
}

/// One figure of a variant: its key (a column of the Python package's sweep frame),
/// what a chart calls it, its unit, how to read it off the results, and how a chart
/// shows it (its axis unit and the factor from `unit`).
pub struct Metric {
    pub key: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    pub value: fn(&VariantResult) -> f64,
    pub shown: (&'static str, f64),
}

fn vmstat_sum(v: &VariantResult, name: &str) -> f64 {
    sum_of(&v.vmstat, sum_keys(name).expect("a sum in SUMS")) as f64
}

/// Operations a second, summed over the variant's workloads.
pub fn ops_per_sec(v: &VariantResult) -> f64 {
    v.workloads.values().map(|w| w.ops_per_sec).sum()
}

/// MiB a second, summed over the variant's workloads.
pub fn mib_per_sec(v: &VariantResult) -> f64 {
    v.workloads.values().map(|w| w.mib_per_sec).sum()
}

/// Share of CPU time spent spinning on locks, over every lock class.
pub fn spin_share(v: &VariantResult) -> f64 {
    v.locks.values().map(|l| l.spin_share).sum()
}

/// The per-variant metrics of a sweep, in the order they are shown.
pub const METRICS: &[Metric] = &[
    Metric {
        key: "ops_per_sec",
        title: "Throughput (all workloads)",
        unit: "ops/s",
        value: ops_per_sec,
        shown: ("ops/s", 1.0),
    },
    Metric {
        key: "mib_per_sec",
        title: "Bandwidth (all workloads)",
        unit: "MiB/s",
        value: mib_per_sec,
        shown: ("MiB/s", 1.0),
    },
    Metric {
        key: "spin_share",
        title: "Lock spin share",
        unit: "fraction of CPU time",
        value: spin_share,
        shown: ("% of CPU time", 100.0),
    },
    Metric {
        key: "alloc_stalls",
        title: "Allocation stalls",
        unit: "try_to_free_pages calls",
        value: |v| v.alloc_stall.calls as f64,
        shown: ("try_to_free_pages calls", 1.0),
    },
    Metric {
        key: "alloc_stall_p99_ns",
        title: "Allocation stall p99",
        unit: "ns",
        value: |v| v.alloc_stall.latency_ns.p99 as f64,
        shown: ("µs", 1e-3),
    },
    Metric {
        key: "pgscan",
        title: "Pages scanned",
        unit: "pgscan_kswapd + pgscan_direct",
        value: |v| vmstat_sum(v, "pgscan"),
        shown: ("pgscan_kswapd + pgscan_direct", 1.0),
    },
    Metric {
        key: "pgsteal",
        title: "Pages reclaimed",
        unit: "pgsteal_kswapd + pgsteal_direct",
        value: |v| vmstat_sum(v, "pgsteal"),
        shown: ("pgsteal_kswapd + pgsteal_direct", 1.0),
    },
    Metric {
        key: "pswpin",
        title: "Swap-ins",
        unit: "pswpin",
        value: |v| v.vmstat.get("pswpin").copied().unwrap_or(0) as f64,
        shown: ("pswpin", 1.0),
    },
    Metric {
        key: "refaults",
        title: "Refaults",
        unit: "workingset_refault_anon + _file",
        value: |v| vmstat_sum(v, "refaults"),
        shown: ("workingset_refault_anon + _file", 1.0),
    },
    Metric {
        key: "kswapd_ns",
        title: "kswapd CPU time",
        unit: "ns (virtual)",
        value: |v| v.kswapd_profile.total_ns as f64,
        shown: ("ms (virtual)", 1e-6),
    },
    Metric {
        key: "virtual_time_s",
        title: "Virtual time",
        unit: "s",
        value: |v| v.virtual_time_s,
        shown: ("s", 1.0),
    },
];

/// Every metric of `METRICS` for one variant, by key.
pub fn of(v: &VariantResult) -> BTreeMap<&'static str, f64> {
    METRICS.iter().map(|m| (m.key, (m.value)(v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_add_their_keys_and_metrics_read_them() {
        let mut v = VariantResult::default();
        v.vmstat.insert("pgscan_kswapd".into(), 7);
        v.vmstat.insert("pgscan_direct".into(), 5);
        v.vmstat.insert("workingset_refault_file".into(), 3);
        let m = of(&v);
        assert_eq!(m["pgscan"], 12.0);
        assert_eq!(m["refaults"], 3.0);
        assert_eq!(m["pgsteal"], 0.0);
        assert_eq!(sum_keys("nope"), None);
        let keys: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        let unique: std::collections::BTreeSet<&str> = keys.iter().copied().collect();
        assert_eq!(keys.len(), unique.len(), "metric keys are unique");
    }
}
