//! What a run gives back: the results (JSON), the tables `run` and `compare` print,
//! sweeps over a key, and the benchmark.

pub mod bench;
pub mod report;
pub mod results;
pub mod sweep;
