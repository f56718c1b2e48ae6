//! `reclaimsim calibrate`: measures on this host, with real microbenchmarks, every cost
//! of the model's cost table that user space can measure, and makes a machine profile of
//! them (`reclaimsim::scenario::profile`). Kept out of the model library, which needs no
//! codecs, sockets or child processes.
//!
//! Each probe runs rounds of many operations and keeps one figure per round (ns per
//! operation); `stats` summarizes them. `mapping` turns the measurements into cost-table
//! values, subtracting what the model charges separately where a measurement covers a
//! whole path (a fault with its allocation, a read with its copy).

mod codec;
mod fio;
pub mod mapping;
mod memcached;
mod memory;
mod net;
mod smt;
pub mod stats;
mod sync;

use reclaimsim::scenario::profile::{MachineProfile, ProfileInfo};
use stats::Summary;
use std::time::Duration;

/// How hard to measure.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// Tiny iteration counts and buffers: seconds in all, for tests; the figures are rough.
    pub quick: bool,
}

impl Scale {
    fn rounds(&self, normal: usize) -> usize {
        if self.quick {
            2
        } else {
            normal
        }
    }

    fn iters(&self, normal: u64) -> u64 {
        if self.quick {
            (normal / 50).max(100)
        } else {
            normal
        }
    }

    fn bytes(&self, normal: usize, quick: usize) -> usize {
        if self.quick {
            quick
        } else {
            normal
        }
    }

    fn seconds(&self, normal: f64) -> Duration {
        Duration::from_secs_f64(if self.quick { normal / 10.0 } else { normal })
    }
}

/// One measurement: its summary in ns per operation (or, for a factor, per mille), and
/// how it was made.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub name: String,
    pub summary: Summary,
    pub method: String,
    /// What the figures count: "ns", or "per mille" for a factor.
    pub unit: &'static str,
}

impl Measurement {
    fn new(name: &str, summary: Summary, method: String) -> Measurement {
        Measurement {
            name: name.to_string(),
            summary,
            method,
            unit: "ns",
        }
    }

    /// A factor in per mille rather than a time.
    fn per_mille(name: &str, summary: Summary, method: String) -> Measurement {
        Measurement {
            unit: "per mille",
            ..Measurement::new(name, summary, method)
        }
    }
}

/// A measurement, or its name and why it could not be made here.
pub type Outcome = Result<Measurement, (String, String)>;

/// A probe: makes one or more measurements.
type Probe = fn(&Scale) -> Vec<Outcome>;

/// The probes in the order they run: a name for the progress lines, and the function.
const PROBES: [(&str, Probe); 12] = [
    ("minor faults", memory::faults),
    ("page zeroing and copying", memory::zero_copy),
    ("pread of a cached page", memory::pread),
    ("write(2) to /dev/null", memory::write_devnull),
    ("load latencies (pointer chasing)", memory::latencies),
    ("atomics", sync::atomics),
    ("cacheline transfer and futex wake-up", sync::handoffs),
    (
        "context switch (pipe ping-pong on one CPU)",
        sync::context_switch,
    ),
    ("SMT siblings (compute and pointer chase)", smt::smt),
    ("lzo1x-1 and LZ4 on 4 KiB pages", codec::codecs),
    ("loopback TCP round trips", net::tcp),
    ("memcached and fio", tools),
];

/// The workloads' own work, where the tools are installed.
fn tools(s: &Scale) -> Vec<Outcome> {
    let mut out = memcached::memcached(s);
    out.extend(fio::fio(s));
    out
}

/// A tool's version line (`memcached -V`, `fio --version`), or why it cannot be run.
fn tool_version(tool: &str, flag: &str) -> Result<String, String> {
    match std::process::Command::new(tool).arg(flag).output() {
        Ok(out) => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{tool} is not installed (not found in PATH)"))
        }
        Err(e) => Err(format!("cannot run {tool}: {e}")),
    }
}

/// Where and when: the date, the host name, the CPU model, the CPUs and the kernel.
fn host_description() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, m)| m.trim())
        })
        .unwrap_or("unknown CPU");
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{} on {} ({model}, {cpus} CPUs, Linux {})",
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()),
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/osrelease")
    )
}

/// Runs every probe, reporting each measurement (or skip) through `log` as it is made,
/// and makes the profile named `name`.
pub fn calibrate(name: &str, scale: Scale, log: &mut dyn FnMut(String)) -> MachineProfile {
    let mut found = Vec::new();
    for (i, (what, probe)) in PROBES.iter().enumerate() {
        log(format!("[{}/{}] {what}", i + 1, PROBES.len()));
        let start = std::time::Instant::now();
        for outcome in probe(&scale) {
            match &outcome {
                Ok(m) => {
                    let s = &m.summary;
                    let line = format!(
                        "{:<28} {:>10.1} {}   p10..p90 {:.1}..{:.1}",
                        m.name, s.median, m.unit, s.p10, s.p90
                    );
                    log(format!("      {line}"));
                }
                Err((name, why)) => log(format!("      {name:<28} skipped: {why}")),
            }
            found.push(outcome);
        }
        log(format!("      ({:.1} s)", start.elapsed().as_secs_f64()));
    }
    let info = ProfileInfo {
        name: name.to_string(),
        measured: host_description(),
        quick: scale.quick,
        about: String::new(),
    };
    mapping::profile(info, found)
}
