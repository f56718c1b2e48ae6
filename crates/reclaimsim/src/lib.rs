//! reclaimsim: a deterministic, virtual-time model of Linux page reclaim.

pub mod batch;
pub mod check;
pub mod config;
pub mod cost;
pub mod fault;
pub mod folio;
pub mod kernel;
pub mod kswapd;
pub mod list;
pub mod lock;
pub mod lru;
pub mod memcg;
pub mod mm;
pub mod node;
pub mod pagecache;
pub mod report;
pub mod results;
pub mod rmap;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod swap;
pub mod units;
pub mod vmscan;
pub mod workingset;
pub mod workload;
