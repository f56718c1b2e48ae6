//! What a run gives back: the results (JSON), the tables `run` and `compare` print,
//! sweeps over a key, the benchmark, expectations checked (`validate`), and sensitivity
//! bands over the costs' ranges.

pub mod bench;
pub mod report;
pub mod sensitivity;
pub mod sweep;
pub mod validate;
