//! Benchmarks of the model itself (`reclaimsim bench`): simulated page accesses per wall
//! second, host bytes per simulated frame, wall time of the demo scenario, and the host
//! time of one task switch at a sync point. Targets (issue 2): >= 15 M accesses/s on a
//! hit-heavy workload, <= 32 B per frame, demo < 10 s; (issue 9) tens of ns per switch.

use crate::engine::{self, RunOptions};
use crate::scenario;

/// One benchmark's figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchResult {
    pub name: String,
    pub wall_s: f64,
    pub virtual_s: f64,
    pub page_accesses: u64,
    pub accesses_per_wall_s: f64,
    pub frames: u64,
    pub bytes_per_frame: f64,
}

/// Hit-heavy: one thread touching random pages of a 512 MiB anonymous region on a 1 GiB
/// machine, 64 touches per step. After the first touches every access is a PTE hit that
/// only sets the accessed bit: this measures the engine's hot path.
pub const HIT_HEAVY: &str = r#"
name = "bench-hit-heavy"
[machine]
memory = "1GiB"
cpus = 1
[[workload]]
name = "anon"
[workload.anon]
size = "512MiB"
pattern = "random"
passes = 400
ops_per_step = 64
"#;

/// The README's demo scenario.
pub const DEMO: &str = include_str!("../../../../scenarios/demo.toml");

/// The benchmarks' figures, and the engine's cost of switching tasks at a sync point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Bench {
    pub cases: Vec<BenchResult>,
    pub switch_ns: f64,
}

/// Runs the benchmarks, each once (they are deterministic; wall time is what varies).
pub fn run_all() -> Result<Bench, String> {
    let cases = [("hit-heavy", HIT_HEAVY), ("demo", DEMO)]
        .into_iter()
        .map(|(name, text)| bench_one(name, text))
        .collect::<Result<_, _>>()?;
    let switch_ns = crate::engine::sched::switch_cost_ns(2_000_000);
    Ok(Bench { cases, switch_ns })
}

fn bench_one(name: &str, text: &str) -> Result<BenchResult, String> {
    let loaded = scenario::parse(text, name, &[], None).map_err(|e| e.to_string())?;
    let s = &loaded.base;
    let t = std::time::Instant::now();
    let r = engine::run(s, name, RunOptions::default()).map_err(|e| e.to_string())?;
    let wall_s = t.elapsed().as_secs_f64();
    let frames = s.machine.memory.pages();
    Ok(BenchResult {
        name: name.to_string(),
        wall_s,
        virtual_s: r.virtual_time_s,
        page_accesses: r.page_accesses,
        accesses_per_wall_s: r.page_accesses as f64 / wall_s,
        frames,
        bytes_per_frame: r.model_bytes as f64 / frames as f64,
    })
}
