//! reclaimsim: a deterministic, virtual-time model of Linux page reclaim.
//!
//! - `kernel`: the model of the kernel's mm/ (memory, memcgs, address spaces and rmap,
//!   page cache and swap, folio batches, vmscan and kswapd, writeback, the LRU policies);
//! - `engine`: the virtual-time multi-CPU engine that runs it (tasks, locks, costs, the
//!   invariant checker);
//! - `scenario`: the scenario language (TOML, overrides, units, expectations);
//! - `workload`: the programs that drive it (fio, memcached under memtier, dd, ...);
//! - `output`: results, the report tables, sweeps, expectations checked and the benchmark.

pub mod engine;
pub mod kernel;
pub mod output;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod units;
pub mod workload;
