//! The run-away guard: an estimate of a scenario's work before it runs, and a refusal
//! above the limits unless the user says `--allow-long`.
//!
//! The work is counted three ways: simulated memory (frames the model keeps), virtual
//! CPU time (the run's virtual duration times the machine's CPUs) and operations (the
//! requests, reads and touches the workloads are told to do when they stop after a
//! count rather than a time). A run with neither a `duration` nor an end of every
//! workload (a count, a runtime, or an `until` on one that ends) has no end at all.

use reclaimsim::scenario::config::{Scenario, WorkloadConfig};
use reclaimsim::workload::anon::AnonOptions;
use reclaimsim::workload::fio::FioOptions;
use reclaimsim::workload::memtier::{MemcachedOptions, Requests};
use reclaimsim::workload::WorkloadOptions;

/// Most simulated memory without `--allow-long`: 64 GiB (16 M frames).
pub const MAX_MEMORY: u64 = 64 << 30;
/// Most virtual CPU time without `--allow-long`: the run's virtual duration times the
/// machine's CPUs, in virtual CPU-seconds.
pub const MAX_CPU_SECONDS: f64 = 3600.0;
/// Most workload operations (requests, reads, touches) without `--allow-long`.
pub const MAX_OPS: u128 = 1_000_000_000;

/// When one workload ends: after `time_ns` of virtual time and `ops` operations (both
/// parts add up: a memtier run of test-time phases and request-count phases), or never
/// on its own (`open`, with the reason).
#[derive(Clone, Debug, Default, PartialEq)]
struct End {
    time_ns: u128,
    ops: u128,
    open: Option<String>,
}

impl End {
    fn time(ns: u64) -> Self {
        End {
            time_ns: ns.into(),
            ..End::default()
        }
    }
    fn ops(n: u128) -> Self {
        End {
            ops: n,
            ..End::default()
        }
    }
    fn then(&self, next: &End) -> End {
        End {
            time_ns: self.time_ns + next.time_ns,
            ops: self.ops + next.ops,
            open: self.open.clone().or_else(|| next.open.clone()),
        }
    }
}

/// The estimate of a scenario's work.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    /// Virtual time the run lasts at least (its `duration` when it has one), ns.
    pub virtual_ns: u128,
    /// Whether `virtual_ns` is the whole run (a duration, or only timed workloads).
    pub virtual_exact: bool,
    pub cpus: u32,
    pub memory: u64,
    pub ops: u128,
    /// Why the run has no end, naming the workload.
    pub open: Option<String>,
    /// The workload that lasts longest in virtual time (when it is not the `duration`).
    pub longest: Option<String>,
}

impl Work {
    pub fn cpu_seconds(&self) -> f64 {
        self.virtual_ns as f64 / 1e9 * f64::from(self.cpus)
    }
}

/// A workload's own end, from its options.
fn own_end(w: &WorkloadConfig) -> End {
    // A workload with no table or two was refused when the scenario was checked.
    let Ok(options) = w.options() else {
        return End::default();
    };
    match &options {
        WorkloadOptions::Fio(f) => fio_end(&w.name, f),
        WorkloadOptions::Memcached(m) => memtier_end(m),
        WorkloadOptions::Dd(d) => match d.runtime {
            Some(r) => End::time(r.0),
            None => {
                End::ops(u128::from(d.files) * u128::from(d.size.pages()) * u128::from(d.readers))
            }
        },
        WorkloadOptions::PageFault3(p) => End::time(p.runtime.0),
        WorkloadOptions::Anon(a) => anon_end(a),
        // Its script's operations; its pauses make most of its time.
        WorkloadOptions::Tabs(t) => End::ops(reclaimsim::workload::tabs::operations(t).into()),
        // The trace's first pass, already done when the scenario was checked.
        WorkloadOptions::Trace(t) => End::ops(t.summary().map_or(0, |s| u128::from(s.requests))),
    }
}

/// When an fio job ends: its phases one after the other (`run`, then each
/// `[[phase]]` with the job's options it overrides), each after its I/Os (a count) or
/// its runtime (time_based). A later phase's `sleep_until` and `wait_for` are not
/// counted: the estimate is a lower bound, as memtier's without its delays would be.
fn fio_end(name: &str, f: &FioOptions) -> End {
    let phase = |o: &FioOptions, ramp: u64| {
        if let (false, Ok(ios)) = (o.time_based, o.ios_per_clone()) {
            return End::ops(u128::from(ios) * u128::from(o.numjobs));
        }
        match o.runtime {
            Some(r) => End::time(ramp.saturating_add(r.0)),
            None => End {
                open: Some(format!(
                    "workload \"{name}\": fio time_based without runtime"
                )),
                ..End::default()
            },
        }
    };
    (f.phase.iter()).fold(phase(f, f.ramp_time.0), |end, p| {
        end.then(&phase(&f.with_phase(p), 0))
    })
}

/// When memtier's phases end: each phase's delay, then its test time or its requests.
fn memtier_end(m: &MemcachedOptions) -> End {
    m.phase.iter().fold(End::default(), |end, p| {
        let runs = u128::from(p.run_count.max(1));
        let per_client = match (&p.requests, p.test_time) {
            (_, Some(t)) => return end.then(&End::time(p.delay.0.saturating_add(t.0))),
            (Some(Requests::Count(n)), _) => u128::from(*n),
            (Some(Requests::Keyword(_)), _) => {
                let keys = u128::from(p.key_maximum.saturating_sub(p.key_minimum)) + 1;
                return end.then(&End {
                    time_ns: p.delay.0.into(),
                    ops: keys * runs,
                    open: None,
                });
            }
            (None, None) => 10_000,
        };
        let clients = u128::from(p.clients) * u128::from(p.threads);
        end.then(&End {
            time_ns: p.delay.0.into(),
            ops: per_client * clients * runs,
            open: None,
        })
    })
}

/// When the anon workload ends: its runtime, or its touches (populate, the run bounded
/// by `passes` and `accesses`, then the later phases).
fn anon_end(a: &AnonOptions) -> End {
    let pages = u128::from(a.size.pages());
    let unbounded = a.accesses.map_or(pages, |_| u128::MAX);
    let run = a.passes.map_or(unbounded, |p| u128::from(p) * pages);
    let populate = if a.populate { pages } else { 0 };
    let later: u128 = (a.phase.iter())
        .map(|p| {
            p.accesses
                .map_or(u128::from(p.passes.unwrap_or(1)) * pages, u128::from)
        })
        .sum();
    let touches = run
        .min(a.accesses.map_or(u128::MAX, u128::from))
        .saturating_add(populate)
        .saturating_add(later);
    match a.runtime {
        Some(r) => End::time(r.0),
        None => End::ops(touches * u128::from(a.threads)),
    }
}

/// When workload `i` ends, counting its start (`start`, `after`) and `until`; `depth`
/// stops a cycle (the scenario check refuses those before).
fn end_of(s: &Scenario, i: usize, depth: usize) -> End {
    let w = &s.workloads[i];
    let find = |name: &str| {
        let name = name.split(':').next().unwrap_or(name);
        s.workloads.iter().position(|x| x.name == name)
    };
    let recurse = |j: usize| {
        if depth > s.workloads.len() {
            End::default()
        } else {
            end_of(s, j, depth + 1)
        }
    };
    let start = match w.after.as_deref().and_then(find) {
        Some(j) => recurse(j),
        None => End::time(w.start.0),
    };
    let own = start.then(&own_end(w));
    let Some(until) = w.until.as_deref().and_then(find).map(recurse) else {
        return own;
    };
    match (&own.open, &until.open) {
        (_, Some(_)) => own,
        (Some(_), None) => until,
        // Both end: it stops at whichever comes first, so the time it lasts at least is
        // the smaller of the two (a time-based job stopped by a counted workload is not
        // the run's length: seed 000's fio runs `until` memcached). Its own work is at
        // most its own count; the other's is counted with the other.
        (None, None) => End {
            time_ns: own.time_ns.min(until.time_ns),
            ops: own.ops,
            open: None,
        },
    }
}

/// The estimate of a scenario's work.
pub fn estimate(s: &Scenario) -> Work {
    let ends: Vec<End> = (0..s.workloads.len()).map(|i| end_of(s, i, 0)).collect();
    let mut work = Work {
        virtual_ns: ends.iter().map(|e| e.time_ns).max().unwrap_or(0),
        virtual_exact: ends.iter().all(|e| e.ops == 0 && e.open.is_none()),
        cpus: s.machine.cpus,
        memory: s.machine.memory.0,
        ops: ends.iter().map(|e| e.ops).sum(),
        open: ends.iter().find_map(|e| e.open.clone()),
        longest: (s.workloads.iter().zip(&ends))
            .filter(|(_, e)| e.time_ns > 0)
            .max_by_key(|(_, e)| e.time_ns)
            .map(|(w, _)| w.name.clone()),
    };
    if let Some(d) = s.duration {
        if work.open.is_some() || !work.virtual_exact || u128::from(d.0) < work.virtual_ns {
            work.virtual_ns = d.0.into();
            work.virtual_exact = true;
            work.longest = None;
        }
        work.open = None;
    }
    work
}

/// Why a run is refused, or `None`. `set_duration`: the user gave `--set duration=...`,
/// which bounds the virtual time as they asked.
pub fn refuse(w: &Work, set_duration: bool) -> Option<String> {
    let fix = "set `duration` (--set duration=10s) or pass --allow-long";
    if let Some(why) = &w.open {
        return Some(format!(
            "the run has no end ({why}, and no `duration`): set `duration` (--set \
             duration=10s), or an `until` on the workload, or a runtime or count"
        ));
    }
    if w.memory > MAX_MEMORY {
        return Some(format!(
            "machine.memory: {} GiB is more than the {} GiB a run may simulate without \
             --allow-long (the model keeps every frame)",
            w.memory >> 30,
            MAX_MEMORY >> 30
        ));
    }
    let cpu_s = w.cpu_seconds();
    if cpu_s > MAX_CPU_SECONDS && !set_duration {
        let (lasts, until) = match &w.longest {
            Some(name) => (
                format!("workload \"{name}\" lasts"),
                format!(", an `until` on \"{name}\""),
            ),
            None => ("the run lasts".to_string(), String::new()),
        };
        return Some(format!(
            "a long run: {lasts} {} of virtual time x {} CPUs = {cpu_s:.0} virtual \
             CPU-seconds, over the limit of {MAX_CPU_SECONDS:.0}: set `duration` (--set \
             duration=10s){until} or pass --allow-long",
            seconds(w.virtual_ns),
            w.cpus
        ));
    }
    if w.ops > MAX_OPS && !w.virtual_exact {
        return Some(format!(
            "a long run: the workloads are told to do {} operations (requests, reads, \
             touches), over the limit of {MAX_OPS}: {fix}",
            w.ops
        ));
    }
    None
}

/// `12.5 s`, `3600000 s`.
fn seconds(ns: u128) -> String {
    let s = ns as f64 / 1e9;
    if s >= 100.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.3} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(text: &str, sets: &[&str]) -> Work {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let l = reclaimsim::scenario::parse(text, "t.toml", &sets, None).unwrap();
        estimate(&l.base)
    }

    const FIO: &str = "name = \"t\"\n[machine]\nmemory = \"64MiB\"\ncpus = 4\n\
        [[workload]]\nname = \"fio\"\n[workload.fio]\nsize = \"8MiB\"\n";

    #[test]
    fn a_single_pass_counts_its_reads() {
        let w = work(FIO, &[]);
        assert_eq!(
            (w.ops, w.virtual_exact, w.open.clone()),
            (2048, false, None)
        );
        assert_eq!(refuse(&w, false), None);
    }

    #[test]
    fn fio_phases_add_their_reads_and_runtimes() {
        let text = format!(
            "{FIO}numjobs = 2\n[[workload.fio.phase]]\nnumber_ios = 100\n\
             [[workload.fio.phase]]\ntime_based = true\nruntime = \"3s\"\n"
        );
        let w = work(&text, &[]);
        assert_eq!((w.ops, w.virtual_ns), (2 * (2048 + 100), 3_000_000_000));
    }

    #[test]
    fn a_thousand_hours_is_refused_saying_what_to_set() {
        let text = format!("{FIO}time_based = true\nruntime = \"1000h\"\n");
        let w = work(&text, &[]);
        assert_eq!(w.virtual_ns, 3_600_000_000_000_000);
        let why = refuse(&w, false).unwrap();
        assert!(why.contains("workload \"fio\" lasts 3600000 s"), "{why}");
        assert!(why.contains("14400000 virtual CPU-seconds"), "{why}");
        assert!(why.contains("an `until` on \"fio\""), "{why}");
        assert!(
            why.contains("--set duration=") && why.contains("--allow-long"),
            "{why}"
        );
        // A duration bounds it; one given with --set is the user's word.
        assert_eq!(refuse(&work(&text, &["duration=2s"]), false), None);
        let long = work(&text, &["duration=2000s"]);
        assert!(refuse(&long, false).is_some());
        assert_eq!(refuse(&long, true), None);
    }

    #[test]
    fn until_a_workload_that_ends_bounds_a_long_one() {
        let text = format!(
            "{FIO}time_based = true\nruntime = \"1000h\"\nuntil = \"b\"\n\
             [[workload]]\nname = \"b\"\nanon = {{ size = \"1MiB\", runtime = \"3s\" }}\n"
        );
        // `until` sits in [workload.fio] above; put it on the workload instead.
        let text = text
            .replace("until = \"b\"\n", "")
            .replace("name = \"fio\"\n", "name = \"fio\"\nuntil = \"b\"\n");
        let w = work(&text, &[]);
        assert_eq!(w.virtual_ns, 3_000_000_000);
        assert!(w.virtual_exact);
        assert_eq!(refuse(&w, false), None);
    }

    /// Seed 000's shape: a time-based fio `until` a workload that ends by its count; the
    /// run lasts until the count is done, not the fio runtime (it used to say "at least
    /// 100 s" of a run that ends at 1.2 s).
    #[test]
    fn until_a_counted_workload_does_not_stretch_the_run_to_the_runtime() {
        let text = format!(
            "{FIO}time_based = true\nruntime = \"100s\"\n\
             [[workload]]\nname = \"b\"\nanon = {{ size = \"1MiB\", passes = 2 }}\n"
        )
        .replace("name = \"fio\"\n", "name = \"fio\"\nuntil = \"b\"\n");
        let w = work(&text, &[]);
        assert_eq!(w.virtual_ns, 0, "no time bound: both end by counts");
        assert!(!w.virtual_exact);
        assert_eq!(refuse(&w, false), None);
    }

    #[test]
    fn memory_and_counts_over_the_limits_are_refused() {
        let w = work(&FIO.replace("64MiB", "128GiB"), &[]);
        assert!(refuse(&w, false)
            .unwrap()
            .starts_with("machine.memory: 128 GiB"));
        let text = FIO.replace(
            "[workload.fio]\nsize = \"8MiB\"",
            "anon = { size = \"1MiB\", passes = 10000000 }",
        );
        let why = refuse(&work(&text, &[]), false).unwrap();
        assert!(why.contains("2560000000 operations"), "{why}");
    }
}
