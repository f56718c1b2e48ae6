//! From measurements to a machine profile: which measurement stands for which field of
//! the cost table, and what the model charges beside it on the same path.
//!
//! Where a measurement covers a whole path that the model splits into several costs (an
//! anonymous fault is `fault` + `page_alloc` + `charge` + `page_zero` + ... in
//! `kernel/fault.rs`), the field gets the measured total less the other costs, so the
//! model's total for the path equals the measured one. The other costs are this
//! profile's values where it has them (fields earlier in `MAPPINGS`), else the defaults.

use crate::stats::Summary;
use crate::{Measurement, Outcome};
use reclaimsim::scenario::profile::{Entry, MachineProfile, ProfileInfo};
use reclaimsim::sim::cost::CostTable;
use std::collections::BTreeMap;

/// How one cost-table field is made.
pub struct Mapping {
    pub field: &'static str,
    /// The measurement that stands for it.
    pub from: &'static str,
    /// Other cost-table fields the model charges on the measured path, with their counts.
    pub minus: &'static [(&'static str, u32)],
    /// Measurements that could equally stand for the field; they widen its range.
    pub alternatives: &'static [&'static str],
}

const fn direct(field: &'static str, from: &'static str) -> Mapping {
    Mapping {
        field,
        from,
        minus: &[],
        alternatives: &[],
    }
}

/// The fields calibrate sets, in the order they are made (a derivation uses only fields
/// made before it).
pub const MAPPINGS: [Mapping; 23] = [
    direct("access_hit", "l1_hit"),
    direct("page_zero", "page_zero"),
    direct("page_copy", "page_copy"),
    direct("lru_scan_miss", "dram_miss"),
    Mapping {
        alternatives: &["l3_hit"],
        ..direct("lru_scan_prefetched", "l2_hit")
    },
    direct("lru_flag_atomic", "atomic_rmw"),
    direct("lock_acquire", "spinlock"),
    direct("lock_bounce", "cacheline_transfer"),
    // The seeds' memcached runs store 2000-byte values (seed 003: 1024).
    Mapping {
        alternatives: &["lzo_compress_items32"],
        ..direct("zram_compress", "lzo_compress_items2000")
    },
    Mapping {
        alternatives: &["lzo_decompress_items32"],
        ..direct("zram_decompress", "lzo_decompress_items2000")
    },
    // The seeds measure GETs (R:R) of 2000-byte values at --pipeline 8: a connection's
    // network work once per batch, the rest per request, and the wait for the client.
    direct("memcached_batch", "memcached_batch_get_2000"),
    Mapping {
        minus: &[("memcached_batch", 1)],
        alternatives: &["memcached_get_32", "memcached_set_32", "memcached_set_2000"],
        ..direct("memcached_request", "memcached_get_2000")
    },
    Mapping {
        minus: &[("memcached_batch", 1)],
        alternatives: &["tcp_rtt_blocking"],
        ..direct("loopback_wait", "tcp_rtt_epoll")
    },
    // The client side of the same runs: our memtier-like client threads' CPU time.
    direct("memtier_batch", "memtier_client_batch_get_2000"),
    Mapping {
        minus: &[("memtier_batch", 1)],
        alternatives: &[
            "memtier_client_get_32",
            "memtier_client_set_32",
            "memtier_client_set_2000",
        ],
        ..direct("memtier_request", "memtier_client_get_2000")
    },
    // lat_ctx-like: the pipe syscalls are already subtracted in the measurement.
    direct("context_switch", "context_switch_pipe"),
    // Per mille, measured only where the host has SMT siblings.
    direct("smt_compute", "smt_compute"),
    direct("smt_memory", "smt_memory"),
    // filemap_read charges read_syscall, the xarray lookup and the copy.
    Mapping {
        minus: &[("page_copy", 1), ("xarray", 1)],
        ..direct("read_syscall", "pread")
    },
    // A fio read in the model is the engine's per-I/O cost plus filemap_read.
    Mapping {
        minus: &[("read_syscall", 1), ("xarray", 1), ("page_copy", 1)],
        ..direct("fio_io", "fio_io_uring")
    },
    Mapping {
        minus: &[("read_syscall", 1), ("xarray", 1), ("page_copy", 1)],
        ..direct("fio_psync_io", "fio_psync")
    },
    // dd's write of each block to /dev/null; its read is filemap_read's.
    direct("dd_block", "write_devnull"),
    // handle_mm_fault of an untouched anonymous page and zap_vma's unmap of it (classic,
    // lruvec lock): alloc_folio, page_zero, folio_add_lru's batch and its share of the
    // flush, unmap, release_folio under the lock, free_folio.
    Mapping {
        minus: &[
            ("page_alloc", 1),
            ("charge", 1),
            ("page_zero", 1),
            ("batch_add", 1),
            ("lru_flag_atomic", 2),
            ("list_op", 1),
            ("lock_acquire", 1),
            ("unmap", 1),
            ("page_free", 1),
        ],
        ..direct("fault", "anon_fault")
    },
];

/// The cost table's defaults by field name.
pub fn defaults() -> BTreeMap<String, u64> {
    let table = toml::Table::try_from(CostTable::default()).unwrap_or_default();
    table
        .into_iter()
        .filter_map(|(k, v)| Some((k, u64::try_from(v.as_integer()?).ok()?)))
        .collect()
}

/// A profile entry for a summary: value the rounded median, range `[lo, hi]` widened to
/// whole nanoseconds (and not below 0).
fn entry(s: &Summary, lo: f64, hi: f64, method: String, default: Option<u64>) -> Entry {
    Entry {
        value: s.median.round().max(0.0) as u64,
        median: Some(round2(s.median)),
        spread: Some([round2(s.p10), round2(s.p90)]),
        mad: Some(round2(s.mad)),
        range: Some([lo.floor().max(0.0) as u64, hi.ceil().max(0.0) as u64]),
        rounds: Some(s.rounds),
        iterations: Some(s.iterations),
        method: Some(method),
        default,
    }
}

/// Two decimals are all the precision a timing has.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The `[costs]` entry for `m`, or why it cannot be made from these measurements.
fn derive(
    m: &Mapping,
    measured: &BTreeMap<String, Measurement>,
    costs: &BTreeMap<String, Entry>,
    defaults: &BTreeMap<String, u64>,
) -> Option<Result<Entry, String>> {
    let from = measured.get(m.from)?;
    let cost = |f: &str| {
        costs
            .get(f)
            .map(|e| e.value)
            .or(defaults.get(f).copied())
            .unwrap_or(0)
    };
    let charged: u64 = m.minus.iter().map(|&(f, n)| u64::from(n) * cost(f)).sum();
    let s = from.summary.minus(charged as f64);
    if s.median < 1.0 {
        return Some(Err(format!(
            "measured.{} ({:.0} ns) is not above the {charged} ns the model charges beside {} on that path; {} keeps its default",
            m.from, from.summary.median, m.field, m.field
        )));
    }
    let alts = m
        .alternatives
        .iter()
        .filter_map(|a| measured.get(*a))
        .map(|a| a.summary.minus(charged as f64));
    let (lo, hi) = alts.fold((s.p10, s.p90), |(lo, hi), a| (lo.min(a.p10), hi.max(a.p90)));
    let minus: String = m
        .minus
        .iter()
        .map(|&(f, n)| match n {
            1 => format!(" - {f} ({})", cost(f)),
            n => format!(" - {n} x {f} ({})", cost(f)),
        })
        .collect();
    let mut method = format!("measured.{}{minus}", m.from);
    if !m.alternatives.is_empty() {
        method += &format!(
            "; range spans measured.{}",
            m.alternatives.join(", measured.")
        );
    }
    method += &format!(". {}", from.method);
    Some(Ok(entry(
        &s,
        lo,
        hi,
        method,
        defaults.get(m.field).copied(),
    )))
}

/// The profile: every measurement under `[measured]`, the fields `MAPPINGS` can make
/// under `[costs]`, and what could not be measured (or derived) under `[skipped]`.
pub fn profile(info: ProfileInfo, found: Vec<Outcome>) -> MachineProfile {
    let mut measured = BTreeMap::new();
    let mut skipped = BTreeMap::new();
    for outcome in found {
        match outcome {
            Ok(m) => {
                measured.insert(m.name.clone(), m);
            }
            Err((name, why)) => {
                skipped.insert(name, why);
            }
        }
    }
    let defaults = defaults();
    let mut costs = BTreeMap::new();
    for m in &MAPPINGS {
        match derive(m, &measured, &costs, &defaults) {
            Some(Ok(e)) => {
                costs.insert(m.field.to_string(), e);
            }
            Some(Err(why)) => {
                skipped.insert(m.field.to_string(), why);
            }
            None => {}
        }
    }
    let measured = measured
        .into_iter()
        .map(|(k, m)| {
            let s = &m.summary;
            (k, entry(s, s.p10, s.p90, m.method, None))
        })
        .collect();
    MachineProfile {
        profile: info,
        costs,
        measured,
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn m(name: &str, samples: &[f64]) -> Outcome {
        let summary = summarize(samples, 100).unwrap();
        Ok(Measurement::new(name, summary, format!("{name} by test")))
    }

    fn info() -> ProfileInfo {
        ProfileInfo {
            name: "t".into(),
            measured: "now".into(),
            quick: true,
            about: String::new(),
        }
    }

    #[test]
    fn every_mapping_names_cost_table_fields() {
        let d = defaults();
        assert_eq!(
            d.len(),
            reclaimsim::scenario::profile::builtin("default")
                .unwrap()
                .unwrap()
                .costs
                .len(),
            "the cost table's fields, each with its source in the default profile"
        );
        for m in &MAPPINGS {
            assert!(d.contains_key(m.field), "{}", m.field);
            for (f, _) in m.minus {
                assert!(d.contains_key(*f), "{f}");
            }
        }
    }

    #[test]
    fn direct_fields_take_the_median_and_alternatives_widen_the_range() {
        let found = vec![
            m("lzo_compress_items2000", &[900.0, 1000.0, 1100.0]),
            m("lzo_compress_items32", &[1500.0, 1600.0, 1700.0]),
            Err(("fio".into(), "fio is not installed".into())),
        ];
        let p = profile(info(), found);
        let e = &p.costs["zram_compress"];
        assert_eq!(
            (e.value, e.range, e.default),
            (1000, Some([920, 1680]), Some(1800))
        );
        assert!(e
            .method
            .as_deref()
            .unwrap()
            .contains("lzo_compress_items2000 by test"));
        assert_eq!(p.measured["lzo_compress_items32"].value, 1600);
        assert_eq!(p.skipped["fio"], "fio is not installed");
        assert!(!p.costs.contains_key("fio_io"), "nothing measured it");
    }

    #[test]
    fn derived_fields_subtract_what_the_model_charges_beside_them() {
        let found = vec![m("page_copy", &[300.0; 3]), m("pread", &[900.0; 3])];
        let p = profile(info(), found);
        // pread - page_copy (this profile's) - xarray (the default, 50).
        assert_eq!(p.costs["read_syscall"].value, 550);
        assert!(p.costs["read_syscall"]
            .method
            .as_deref()
            .unwrap()
            .starts_with("measured.pread - page_copy (300) - xarray (50)"));
        let too_small = profile(info(), vec![m("pread", &[400.0; 3])]);
        assert!(!too_small.costs.contains_key("read_syscall"));
        assert!(too_small.skipped["read_syscall"].contains("keeps its default"));
    }

    #[test]
    fn the_client_and_the_scheduler_fields_come_from_their_measurements() {
        let found = vec![
            m("memtier_client_batch_get_2000", &[3000.0; 3]),
            m("memtier_client_get_2000", &[7000.0; 3]),
            m("memtier_client_set_32", &[6000.0, 8000.0, 9000.0]),
            m("context_switch_pipe", &[1200.0, 1300.0, 1400.0]),
            Err(("smt_compute".into(), "not measured: no SMT siblings".into())),
        ];
        let p = profile(info(), found);
        assert_eq!(p.costs["memtier_batch"].value, 3000);
        // memtier_client_get_2000 - memtier_batch; SETs of 32 bytes widen the range.
        assert_eq!(p.costs["memtier_request"].value, 4000);
        assert_eq!(p.costs["memtier_request"].range, Some([3400, 5800]));
        assert_eq!(p.costs["context_switch"].value, 1300);
        assert!(!p.costs.contains_key("smt_compute"), "keeps its default");
        assert!(p.skipped["smt_compute"].starts_with("not measured"));
    }

    #[test]
    fn a_made_profile_loads_back() {
        let found = vec![
            m("dram_miss", &[95.0, 100.0, 120.0]),
            m("tcp_rtt_epoll", &[20_000.0; 2]),
        ];
        let p = profile(info(), found);
        let text = p.to_toml().unwrap();
        let back = reclaimsim::scenario::profile::parse(&text, "p.toml").unwrap();
        assert_eq!(back.costs["lru_scan_miss"].value, 100);
        assert_eq!(back, p);
    }
}
