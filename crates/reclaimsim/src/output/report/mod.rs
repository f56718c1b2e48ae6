//! Printing results: a table for one variant, a comparison of variants, and the JSON file.

mod comparison;
mod format;
mod variant;
mod write;

pub use comparison::compare;
pub use format::change;
pub(crate) use format::Grid;
pub use variant::table;
pub use write::{write_atomic, write_json};

#[cfg(test)]
mod tests {
    use crate::results::{Latency, LockResult, VariantResult, WorkloadResult};

    /// A variant with one workload, two counters, a lock and a kswapd profile, for the
    /// tests of the tables.
    pub(super) fn variant(name: &str, ops_per_sec: f64, rmap: u64) -> VariantResult {
        let mut v = VariantResult {
            name: name.into(),
            virtual_time_s: 2.0,
            ..Default::default()
        };
        v.workloads.insert(
            "kv".into(),
            WorkloadResult {
                ops: 100,
                ops_per_sec,
                mib_per_sec: 0.0,
                measured_s: 2.0,
                latency_ns: Latency {
                    p50: 900,
                    p99: 12_000,
                    max: 3_000_000,
                },
            },
        );
        v.vmstat.insert("pgscan_kswapd".into(), 1000);
        v.vmstat.insert("nr_free_pages".into(), 7);
        v.locks.insert(
            "lru_lock".into(),
            LockResult {
                instances: 2,
                acquisitions: 10,
                contended: 5,
                ..Default::default()
            },
        );
        v.kswapd_profile.total_ns = 1000;
        v.kswapd_profile.categories.insert("rmap_walk".into(), rmap);
        v.kswapd_profile
            .categories
            .insert("list_ops".into(), 1000 - rmap);
        v
    }
}
