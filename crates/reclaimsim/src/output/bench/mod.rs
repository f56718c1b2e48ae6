//! Benchmarks of the model itself (`reclaimsim bench`): simulated page accesses per wall
//! and per CPU second, host bytes per simulated frame (model state, and the growth of
//! the process's peak RSS), and the host time of one task switch at a sync point.
//! Targets: (issue 2) >= 15 M accesses/s on a hit-heavy workload, demo < 10 s; (issue 9)
//! tens of ns per switch; (issue 12) on one core, >= 5.5 M accesses/s under Zipf 0.99
//! with 10% of the pages fitting and >= 2.5 M/s under uniform misses, both policies,
//! and <= 40 B of peak RSS per frame with swap twice memory.

use crate::engine::RunOptions;
use crate::scenario;

/// One benchmark's figures.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct BenchResult {
    pub name: String,
    pub wall_s: f64,
    /// CPU time of the run's thread (user + system), where the host reports it.
    pub cpu_s: Option<f64>,
    pub virtual_s: f64,
    pub page_accesses: u64,
    pub accesses_per_wall_s: f64,
    pub accesses_per_cpu_s: Option<f64>,
    pub frames: u64,
    /// The model's own count of its state (`model_bytes`) per frame.
    pub bytes_per_frame: f64,
    /// Growth of the process's peak RSS over the run, per frame, where the host reports it.
    pub rss_bytes_per_frame: Option<f64>,
}

/// A benchmark: a scenario, and whether it runs once per reclaim policy.
struct Case {
    name: &'static str,
    text: &'static str,
    sets: &'static [&'static str],
    per_policy: bool,
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

/// The demo scenario (scenarios/demo.toml).
pub const DEMO: &str = include_str!("../../../../../scenarios/demo.toml");

/// A case without `--set`s.
const fn case(name: &'static str, text: &'static str, per_policy: bool) -> Case {
    Case {
        name,
        text,
        sets: &[],
        per_policy,
    }
}

/// The cases, in the order they run. `zipf-1` is `zipf` with one touch an operation,
/// the default a user's scenario gets (each operation an engine step). Seed 004's
/// readtwice (104 CPUs, 104 memcgs) runs with its containers' 32 MiB limits (the
/// analysis scenario; the seed's has none, and in 40 ms would barely reclaim) for 40 ms
/// of virtual time rather than 200.
const CASES: [Case; 7] = [
    case("hit-heavy", HIT_HEAVY, false),
    case("zipf", include_str!("zipf.toml"), true),
    Case {
        sets: &["workload.anon.anon.ops_per_step=1"],
        ..case("zipf-1", include_str!("zipf.toml"), true)
    },
    case("uniform", include_str!("uniform.toml"), true),
    case("mixed-memcgs", include_str!("mixed-memcgs.toml"), true),
    Case {
        sets: &["workload.\"dd{i}\".dd.runtime=\"40ms\""],
        ..case(
            "readtwice-104",
            include_str!("../../../../../scenarios/analysis/004-readtwice-limits.toml"),
            true,
        )
    },
    case("demo", DEMO, false),
];

/// The benchmarks' figures, and the engine's cost of switching tasks at a sync point:
/// between two tasks, and among 108 (seed 000's threads), its queue then as deep as
/// there.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Bench {
    pub cases: Vec<BenchResult>,
    pub switch_ns: f64,
    pub switch_ns_108: f64,
}

/// Runs the benchmarks, each once (they are deterministic; host time is what varies).
pub fn run_all() -> Result<Bench, String> {
    let mut cases = Vec::new();
    for (name, text, sets) in runs() {
        cases.push(bench_one(&name, text, &sets)?);
    }
    let switch_ns = crate::sim::sched::switch_cost_ns(2, 2_000_000);
    let switch_ns_108 = crate::sim::sched::switch_cost_ns(108, 40_000);
    Ok(Bench {
        cases,
        switch_ns,
        switch_ns_108,
    })
}

/// Every run's name, scenario and `--set`s: one per case, or one per policy.
fn runs() -> Vec<(String, &'static str, Vec<String>)> {
    let mut out = Vec::new();
    for c in &CASES {
        let sets: Vec<String> = c.sets.iter().map(|s| s.to_string()).collect();
        if !c.per_policy {
            out.push((c.name.to_string(), c.text, sets));
            continue;
        }
        for policy in ["classic", "mglru"] {
            let mut sets = sets.clone();
            sets.push(format!("kernel.policy=\"{policy}\""));
            out.push((format!("{}/{policy}", c.name), c.text, sets));
        }
    }
    out
}

fn bench_one(name: &str, text: &str, sets: &[String]) -> Result<BenchResult, String> {
    let loaded = scenario::parse(text, name, sets, None).map_err(|e| e.to_string())?;
    let s = &loaded.base;
    let rss_before = host::reset_peak_rss();
    let cpu_before = host::thread_cpu_s();
    let t = std::time::Instant::now();
    let r = crate::results::run(s, name, RunOptions::default()).map_err(|e| e.to_string())?;
    let wall_s = t.elapsed().as_secs_f64();
    let cpu_s = cpu_before.zip(host::thread_cpu_s()).map(|(a, b)| b - a);
    let rss_growth = rss_before
        .zip(host::peak_rss())
        .map(|(a, b)| b.saturating_sub(a));
    let frames = s.machine.memory.pages();
    Ok(BenchResult {
        name: name.to_string(),
        wall_s,
        cpu_s,
        virtual_s: r.virtual_time_s,
        page_accesses: r.page_accesses,
        accesses_per_wall_s: r.page_accesses as f64 / wall_s,
        accesses_per_cpu_s: cpu_s.map(|c| r.page_accesses as f64 / c),
        frames,
        bytes_per_frame: r.model_bytes as f64 / frames as f64,
        rss_bytes_per_frame: rss_growth.map(|g| g as f64 / frames as f64),
    })
}

/// The host's accounting of this process: Linux only; elsewhere every figure is None.
mod host {
    /// Resets the peak RSS to the current RSS (clear_refs 5) and returns it, in bytes.
    /// First gives the heap's free memory back, so that what an earlier run freed is
    /// not counted as this one's baseline.
    pub fn reset_peak_rss() -> Option<u64> {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free heap memory.
        unsafe {
            libc::malloc_trim(0);
        }
        std::fs::write("/proc/self/clear_refs", "5").ok()?;
        status_kib("VmRSS:").map(|k| k * 1024)
    }

    /// Peak RSS since the last reset, in bytes.
    pub fn peak_rss() -> Option<u64> {
        status_kib("VmHWM:").map(|k| k * 1024)
    }

    fn status_kib(field: &str) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
        line[field.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    }

    /// CPU time of the calling thread, user + system (getrusage RUSAGE_THREAD).
    #[cfg(target_os = "linux")]
    pub fn thread_cpu_s() -> Option<f64> {
        // SAFETY: getrusage only writes the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
            return None;
        }
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Some(s(ru.ru_utime) + s(ru.ru_stime))
    }

    #[cfg(not(target_os = "linux"))]
    pub fn thread_cpu_s() -> Option<f64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_parses() {
        let runs = runs();
        assert_eq!(runs.len(), 12);
        for (name, text, sets) in &runs {
            scenario::parse(text, name, sets, None).unwrap();
        }
    }

    #[test]
    fn anon_cases_run_a_tiny_version() {
        let anon = |n: &str| n.starts_with("zipf") || n.starts_with("uniform");
        for (name, text, mut sets) in runs().into_iter().filter(|r| anon(&r.0)) {
            sets.push("workload.anon.anon.passes=1".into());
            sets.push("workload.anon.anon.size=\"4MiB\"".into());
            sets.push("memcg.\"/a\".max=\"1MiB\"".into());
            let r = bench_one(&name, text, &sets).unwrap();
            assert_eq!(r.page_accesses, 1024, "{name}");
        }
    }
}
