//! What a run gives back: the results (JSON), the tables `run` and `compare` print,
//! sweeps over a key, the benchmark, and expectations checked (`validate`).

pub mod bench;
pub mod report;
pub mod results;
pub mod sweep;
pub mod validate;
