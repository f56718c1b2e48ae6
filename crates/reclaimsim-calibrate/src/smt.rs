//! SMT siblings: how much of its speed a hardware thread keeps while its sibling (the
//! other hardware thread of the same core) is busy, on instruction-bound work (an
//! xorshift loop in registers) and on memory-latency-bound work (a pointer chase through
//! a buffer far larger than the last-level cache). Each is per mille: ns per step alone
//! over ns per step beside the sibling running the same loop, times 1000.

use crate::stats;
use crate::sync::{affinity, allowed_cpus, pin, set_affinity};
use crate::{Measurement, Outcome, Scale};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The CPUs of a sysfs CPU list such as `thread_siblings_list` ("0,36", "0-1",
/// "2-3,66-67"); None when it is malformed.
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if a > b {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// The first CPU of `allowed` with a sibling also in `allowed`, and that sibling;
/// `siblings(cpu)` is the CPU's `thread_siblings_list`.
pub fn sibling_pair(
    allowed: &[usize],
    siblings: impl Fn(usize) -> Option<String>,
) -> Option<[usize; 2]> {
    allowed.iter().find_map(|&cpu| {
        let list = parse_cpu_list(&siblings(cpu)?)?;
        let other = list
            .into_iter()
            .find(|&c| c != cpu && allowed.contains(&c))?;
        Some([cpu, other])
    })
}

/// Per mille of its speed alone that a thread keeps beside a busy sibling, from its ns
/// per step alone and beside it. At most 1000: faster beside a sibling is noise.
pub fn per_mille(alone_ns: f64, together_ns: f64) -> f64 {
    (alone_ns / together_ns * 1000.0).min(1000.0)
}

/// Work of `n` steps, shared by the measuring thread and its sibling.
type Work = Arc<dyn Fn(u64) + Send + Sync>;

/// Instruction-bound: xorshift64 and a multiply-add, all in registers.
fn compute() -> Work {
    Arc::new(|n| {
        let (mut x, mut acc) = (0x9E37_79B9_7F4A_7C15u64, 0u64);
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            acc = acc.wrapping_mul(31).wrapping_add(x);
        }
        black_box(acc);
    })
}

/// Memory-latency-bound: dependent loads along one random cycle through every 64-byte
/// line of a `bytes` buffer.
fn memory(bytes: usize) -> Work {
    const STRIDE: usize = 16; // u32s in a line
    let lines = bytes / 64;
    let mut order: Vec<u32> = (0..lines as u32).collect();
    order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(3));
    let mut next = vec![0u32; lines * STRIDE];
    for (k, &line) in order.iter().enumerate() {
        next[line as usize * STRIDE] = order[(k + 1) % lines];
    }
    let start = order[0] as usize;
    Arc::new(move |n| {
        let mut at = start;
        for _ in 0..n {
            at = next[at * STRIDE] as usize;
        }
        black_box(at);
    })
}

/// ns per step of `work` over `n` steps.
fn time(work: &Work, n: u64) -> f64 {
    let start = Instant::now();
    work(n);
    start.elapsed().as_nanos() as f64 / n.max(1) as f64
}

/// Per-round per-mille figures: `work` timed on `cpus[0]` alone, then again while a
/// thread pinned to `cpus[1]` runs it without pause; one warm-up round first.
fn rounds(s: &Scale, cpus: [usize; 2], work: &Work, n: u64) -> Result<Vec<f64>, String> {
    let mut samples = Vec::new();
    for round in 0..=s.rounds(9) {
        pin(cpus[0])?;
        let alone = time(work, n);
        let (stop, started) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (w, st, go) = (work.clone(), stop.clone(), started.clone());
        let sibling = std::thread::spawn(move || {
            let pinned = pin(cpus[1]);
            go.store(true, Ordering::Release);
            while !st.load(Ordering::Acquire) {
                w((n / 16).max(1));
            }
            pinned
        });
        while !started.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
        let together = time(work, n);
        stop.store(true, Ordering::Release);
        sibling
            .join()
            .map_err(|_| "the sibling thread panicked")??;
        if round > 0 {
            samples.push(per_mille(alone, together));
        }
    }
    Ok(samples)
}

/// `smt_compute` and `smt_memory` on the first pair of sibling hardware threads this
/// process may use; both "not measured" where there is none.
pub fn smt(s: &Scale) -> Vec<Outcome> {
    let names = ["smt_compute", "smt_memory"];
    let skip = |why: String| {
        names
            .iter()
            .map(|n| Err((n.to_string(), why.clone())))
            .collect()
    };
    let allowed = match allowed_cpus() {
        Ok(a) => a,
        Err(e) => return skip(e),
    };
    let siblings = |cpu: usize| {
        let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list");
        std::fs::read_to_string(path).ok()
    };
    let Some(cpus) = sibling_pair(&allowed, siblings) else {
        return skip(
            "not measured: the host has no SMT siblings (each allowed CPU's \
             topology/thread_siblings_list names only itself); the field keeps its default"
                .into(),
        );
    };
    let bytes = s.bytes(256 << 20, 16 << 20);
    let works = [
        (
            compute(),
            s.iters(20_000_000),
            "an xorshift64 and multiply-add loop in registers",
        ),
        (
            memory(bytes),
            s.iters(1_000_000),
            "a pointer chase along one random cycle through every 64-byte line of a buffer",
        ),
    ];
    let saved = match affinity() {
        Ok(a) => a,
        Err(e) => return skip(e),
    };
    let out = names
        .into_iter()
        .zip(works)
        .map(|(name, (work, n, what))| {
            let samples = rounds(s, cpus, &work, n).map_err(|e| (name.to_string(), e))?;
            let sum = stats::summarize(&samples, n * samples.len() as u64)
                .ok_or((name.to_string(), "no rounds".to_string()))?;
            let how = format!(
                "per mille: {what} ({} MiB for the chase), ns per step on CPU {} alone over ns \
                 per step while its SMT sibling CPU {} runs the same loop, x 1000 (at most 1000)",
                bytes >> 20,
                cpus[0],
                cpus[1]
            );
            Ok(Measurement::per_mille(name, sum, how))
        })
        .collect();
    let _ = set_affinity(&saved);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cpu_list("0\n"), Some(vec![0]));
        assert_eq!(parse_cpu_list("0,36"), Some(vec![0, 36]));
        assert_eq!(parse_cpu_list("0-1"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("2-3,66-67\n"), Some(vec![2, 3, 66, 67]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn a_sibling_pair_needs_both_cpus_allowed() {
        let lists = |cpu: usize| Some(format!("{},{}", cpu % 4, cpu % 4 + 4));
        assert_eq!(sibling_pair(&[0, 1, 4], lists), Some([0, 4]));
        assert_eq!(sibling_pair(&[0, 1, 2], lists), None, "no sibling allowed");
        let alone = |cpu: usize| Some(format!("{cpu}\n"));
        assert_eq!(sibling_pair(&[0, 1], alone), None, "no SMT: each CPU alone");
        assert_eq!(sibling_pair(&[0, 1], |_| None), None, "no sysfs");
    }

    #[test]
    fn per_mille_is_the_speed_kept_and_at_most_1000() {
        assert_eq!(per_mille(1.0, 1.6), 625.0);
        assert_eq!(per_mille(100.0, 100.0), 1000.0);
        assert_eq!(
            per_mille(100.0, 90.0),
            1000.0,
            "faster beside a sibling is noise"
        );
    }

    /// The loops and their pairing run on any two CPUs (siblings or not: this project's
    /// VM has none), give per mille figures and leave the affinity as it was.
    #[test]
    fn the_loops_run_alone_and_in_pairs() {
        let allowed = allowed_cpus().unwrap();
        let [a, b] = match allowed[..] {
            [a, b, ..] => [a, b],
            _ => return eprintln!("skipped: needs two CPUs"),
        };
        let saved = affinity().unwrap();
        let s = Scale { quick: true };
        for (work, n) in [(compute(), 100_000), (memory(1 << 20), 10_000)] {
            let r = rounds(&s, [a, b], &work, n).unwrap();
            assert_eq!(r.len(), 2);
            assert!(r.iter().all(|&x| x > 0.0 && x <= 1000.0), "{r:?}");
        }
        set_affinity(&saved).unwrap();
        assert_eq!(allowed_cpus().unwrap(), allowed);
    }

    /// Where this host has siblings the figures are per mille; where not, both fields
    /// say why they were not measured.
    #[test]
    fn smt_measures_or_says_why_not() {
        for outcome in smt(&Scale { quick: true }) {
            match outcome {
                Ok(m) => assert!((0.0..=1000.0).contains(&m.summary.median), "{m:?}"),
                Err((name, why)) => {
                    assert!(name.starts_with("smt_"), "{name}");
                    assert!(why.contains("not measured") || !why.is_empty(), "{why}");
                }
            }
        }
    }
}
