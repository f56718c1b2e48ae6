//! Synchronization costs: an uncontended atomic read-modify-write and spinlock, a
//! cacheline handed between two cores, a futex wake-up of a thread on another core, and a
//! context switch between two threads sharing one CPU.

use crate::stats::{self, Summary};
use crate::{Measurement, Outcome, Scale};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// One cacheline of its own, so nothing else shares (or falsely bounces) it.
#[repr(align(128))]
#[derive(Default)]
struct Line(AtomicU64);

/// A locked read-modify-write (`lock xadd`) on a line this core owns, back to back, and
/// a test-and-set spinlock taken and released uncontended.
pub fn atomics(s: &Scale) -> Vec<Outcome> {
    let line = Line::default();
    let rmw = stats::time_rounds(s.rounds(15), s.iters(1_000_000), |_| {
        black_box(line.0.fetch_add(1, Ordering::Relaxed));
    });
    let lock = Line::default();
    let spin = stats::time_rounds(s.rounds(15), s.iters(1_000_000), |_| {
        while lock
            .0
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {}
        lock.0.store(0, Ordering::Release);
    });
    vec![
        rmw.map(|sum| {
            let how = "AtomicU64::fetch_add (lock xadd) on a local cacheline, result used; \
                       ns per operation, back to back";
            Measurement::new("atomic_rmw", sum, how.into())
        })
        .ok_or(("atomic_rmw".into(), "no rounds".into())),
        spin.map(|sum| {
            let how = "uncontended test-and-set spinlock: compare_exchange(0 -> 1, Acquire) \
                       then store(0, Release), on a local cacheline; ns per lock and unlock";
            Measurement::new("spinlock", sum, how.into())
        })
        .ok_or(("spinlock".into(), "no rounds".into())),
    ]
}

/// The calling thread's CPU affinity mask.
pub(crate) fn affinity() -> Result<libc::cpu_set_t, String> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it within its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return Err(format!(
            "sched_getaffinity: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(set)
}

pub(crate) fn set_affinity(set: &libc::cpu_set_t) -> Result<(), String> {
    // SAFETY: set is a valid cpu_set_t; 0 is the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc != 0 {
        return Err(format!(
            "sched_setaffinity: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: plain data, and CPU_SET writes within the set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set_affinity(&set)
}

/// The CPUs this process may run on, in order.
pub(crate) fn allowed_cpus() -> Result<Vec<usize>, String> {
    let set = affinity()?;
    // SAFETY: CPU_ISSET reads the set within its size.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// The first two CPUs this process may run on.
fn two_cpus() -> Result<[usize; 2], String> {
    let cpus = allowed_cpus()?;
    match cpus[..] {
        [a, b, ..] => Ok([a, b]),
        _ => Err(format!(
            "needs two CPUs, this process may use {}",
            cpus.len()
        )),
    }
}

/// Runs `partner` pinned to one CPU while `main` runs pinned to the other and is given
/// the partner's thread (to unpark it); `main`'s summary is the result. `stop` tells the
/// partner to end, and it is unparked in case it sleeps. The partner runs even if it
/// could not be pinned, so `main` never waits for nobody; the failure is reported after.
fn on_two_cpus(
    cpus: [usize; 2],
    stop: Arc<AtomicBool>,
    partner: impl FnOnce() + Send + 'static,
    main: impl FnOnce(&std::thread::Thread) -> Option<Summary>,
) -> Result<Summary, String> {
    let saved = affinity()?;
    pin(cpus[0])?;
    let other = std::thread::spawn(move || {
        let pinned = pin(cpus[1]);
        partner();
        pinned
    });
    let sum = main(other.thread());
    stop.store(true, Ordering::Release);
    other.thread().unpark();
    let partner_ok = other
        .join()
        .map_err(|_| "the partner thread panicked".to_string());
    set_affinity(&saved)?;
    partner_ok??;
    sum.ok_or("no rounds".into())
}

/// A cacheline written alternately by two threads pinned to two CPUs: each waits for the
/// other's value, then writes the next. Half a round trip is one transfer of the line.
fn cacheline(s: &Scale, cpus: [usize; 2]) -> Result<Summary, String> {
    let line = Arc::new(Line::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (l, st) = (line.clone(), stop.clone());
    let partner = move || {
        // Answers odd values with the next even one until told to stop.
        while !st.load(Ordering::Acquire) {
            let v = l.0.load(Ordering::Acquire);
            if v % 2 == 1 {
                l.0.store(v + 1, Ordering::Release);
            }
            std::hint::spin_loop();
        }
    };
    let mut next = 1u64;
    on_two_cpus(cpus, stop, partner, |_| {
        stats::time_rounds(s.rounds(15), s.iters(100_000), |_| {
            line.0.store(next, Ordering::Release);
            while line.0.load(Ordering::Acquire) != next + 1 {
                std::hint::spin_loop();
            }
            next += 2;
        })
        .map(halve)
    })
}

/// One way of a round trip.
fn halve(s: Summary) -> Summary {
    Summary {
        median: s.median / 2.0,
        p10: s.p10 / 2.0,
        p90: s.p90 / 2.0,
        mad: s.mad / 2.0,
        ..s
    }
}

/// Two threads on two CPUs handing a turn back and forth with park/unpark (futex wait
/// and wake on Linux): half a round trip is one wake-up of a sleeping thread.
fn futex(s: &Scale, cpus: [usize; 2]) -> Result<Summary, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let turn = Arc::new(AtomicU64::new(0));
    let main_thread = std::thread::current();
    let (st, t) = (stop.clone(), turn.clone());
    let partner = move || {
        // Makes an odd turn even and wakes the main thread, until told to stop.
        while !st.load(Ordering::Acquire) {
            if t.load(Ordering::Acquire) % 2 == 1 {
                t.fetch_add(1, Ordering::AcqRel);
                main_thread.unpark();
            } else {
                std::thread::park();
            }
        }
    };
    on_two_cpus(cpus, stop, partner, |other| {
        stats::time_rounds(s.rounds(11), s.iters(2_000), |_| {
            let mine = turn.fetch_add(1, Ordering::AcqRel) + 1;
            other.unpark();
            while turn.load(Ordering::Acquire) == mine {
                std::thread::park();
            }
        })
        .map(halve)
    })
}

/// A cacheline handed between the first two CPUs, and a futex wake-up across them.
pub fn handoffs(s: &Scale) -> Vec<Outcome> {
    let cpus = match two_cpus() {
        Ok(c) => c,
        Err(e) => {
            return vec![
                Err(("cacheline_transfer".into(), e.clone())),
                Err(("futex_wake".into(), e)),
            ]
        }
    };
    let line = cacheline(s, cpus).map(|sum| {
        let how = format!(
            "two threads pinned to CPUs {} and {} alternately write one cacheline, each \
             spinning until it sees the other's value; half the round trip",
            cpus[0], cpus[1]
        );
        Measurement::new("cacheline_transfer", sum, how)
    });
    let wake = futex(s, cpus).map(|sum| {
        let how = format!(
            "two threads pinned to CPUs {} and {} hand a turn back and forth, each sleeping \
             in park() (futex wait) until the other's unpark() (futex wake); half the round trip",
            cpus[0], cpus[1]
        );
        Measurement::new("futex_wake", sum, how)
    });
    vec![
        line.map_err(|e| ("cacheline_transfer".into(), e)),
        wake.map_err(|e| ("futex_wake".into(), e)),
    ]
}

/// A pipe's two ends, closed when dropped.
fn pipe() -> Result<(std::fs::File, std::fs::File), String> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into the array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors are fresh and owned by nothing else.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}

/// ns per call of `op`, `n` calls.
fn time_n(n: u64, mut op: impl FnMut() -> std::io::Result<()>) -> Result<f64, String> {
    let start = std::time::Instant::now();
    for _ in 0..n {
        op().map_err(|e| format!("pipe: {e}"))?;
    }
    Ok(start.elapsed().as_nanos() as f64 / n.max(1) as f64)
}

/// lmbench lat_ctx's 2-process ring with threads: two threads pinned to one CPU pass a
/// byte back and forth through two pipes, so each pass is a write, a read and a switch.
/// Each round also times a write and a read of one pipe by one thread (no switch); the
/// switch is half the round trip less that. Per-round figures, after a warm-up round.
fn switch_rounds(s: &Scale, cpu: usize) -> Result<Vec<f64>, String> {
    use std::io::{Read, Write};
    let ((to_r, mut to_w), (mut back_r, back_w)) = (pipe()?, pipe()?);
    let (mut self_r, mut self_w) = pipe()?;
    // Spawned by a thread pinned to `cpu`, the partner inherits the pinning; it answers
    // even if pinning it again fails, so the main thread never waits for nobody.
    let partner = std::thread::spawn(move || -> Result<(), String> {
        let pinned = pin(cpu);
        let (mut to_r, mut back_w, mut b) = (to_r, back_w, [0u8]);
        while to_r.read_exact(&mut b).is_ok() && b[0] != 0 {
            if back_w.write_all(&b).is_err() {
                break;
            }
        }
        pinned
    });
    let mut b = [1u8];
    let mut samples = Vec::new();
    for round in 0..=s.rounds(11) {
        let n = s.iters(20_000);
        let base = time_n(n, || {
            self_w.write_all(&[1])?;
            self_r.read_exact(&mut b)
        })?;
        let trip = time_n(n, || {
            to_w.write_all(&[1])?;
            back_r.read_exact(&mut b)
        })?;
        if round > 0 {
            samples.push(trip / 2.0 - base);
        }
    }
    let _ = to_w.write_all(&[0]);
    partner
        .join()
        .map_err(|_| "the partner thread panicked")??;
    Ok(samples)
}

/// The direct cost of a context switch between two threads on one CPU (`switch_rounds`).
pub fn context_switch(s: &Scale) -> Vec<Outcome> {
    let name = "context_switch_pipe";
    let measure = || -> Result<Measurement, String> {
        let cpu = *allowed_cpus()?.first().ok_or("no CPU allowed")?;
        let saved = affinity()?;
        pin(cpu)?;
        let samples = switch_rounds(s, cpu);
        set_affinity(&saved)?;
        let samples = samples?;
        let n = samples.len() as u64 * s.iters(20_000);
        let sum = stats::summarize(&samples, n).ok_or("no rounds")?;
        let how = format!(
            "lmbench lat_ctx-like: two threads pinned to CPU {cpu} pass a byte back and forth \
             through two pipes; half the round trip less one thread's write and read of a \
             pipe (the same syscalls without a switch), timed in the same round"
        );
        Ok(Measurement::new(name, sum, how))
    };
    vec![measure().map_err(|e| (name.to_string(), e))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_switch_is_measured_and_the_affinity_restored() {
        let before = allowed_cpus().unwrap();
        let out = context_switch(&Scale { quick: true });
        let m = out[0].as_ref().expect("pipes and one CPU are always there");
        assert_eq!(m.name, "context_switch_pipe");
        assert!(
            m.summary.median.is_finite() && m.summary.rounds == 2,
            "{m:?}"
        );
        assert_eq!(allowed_cpus().unwrap(), before);
    }
}
