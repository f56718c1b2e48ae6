//! reclaimsim: a deterministic, virtual-time model of Linux page reclaim.

pub mod units;
pub mod workload;
