//! Later phases of a workload that does its own work again: dd reads its files again,
//! page_fault3 loops again (`[[workload.dd.phase]]`, `[[workload.page_fault3.phase]]`).

use super::Step;
use crate::units::Duration;
use serde::Deserialize;

/// A later phase: the threads meet at a barrier after the phase before, sleep (holding
/// their files and mappings) until `sleep_until` and until `wait_for` has finished, then
/// do the workload's work again from its start. What reclaim took from them while they
/// were idle shows as refaults in this phase.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RepeatPhase {
    /// Name results are reported under. Default `phase<N>`, N counting from 1.
    pub name: Option<String>,
    /// Sleep until this long after the workload started.
    pub sleep_until: Option<Duration>,
    /// Wait until this workload (or `workload:phase`) has finished.
    pub wait_for: Option<String>,
    /// Stop the phase this long after it starts (after its sleep).
    pub runtime: Option<Duration>,
}

/// One phase, checked.
#[derive(Debug, Clone)]
struct Planned {
    name: String,
    sleep_until_ns: Option<u64>,
    wait_for: Option<String>,
    runtime_ns: Option<u64>,
}

/// A thread's place: its phase and when it started the phase (`None`: not yet, it may
/// still have to sleep).
#[derive(Debug, Clone, Copy)]
struct Cursor {
    phase: usize,
    start_ns: Option<u64>,
}

/// The phases of a repeating workload: `run` (the workload's own, from time 0), then
/// each `[[phase]]`; and where each thread is in them.
#[derive(Debug, Clone)]
pub struct Repeats {
    phases: Vec<Planned>,
    threads: Vec<Cursor>,
}

impl Repeats {
    /// `kind` names the options' table in errors (`dd`); `runtime` is the workload's own,
    /// `phase_runtime` a phase's when it gives none.
    pub fn new(
        kind: &str,
        runtime: Option<Duration>,
        phase_runtime: Option<Duration>,
        later: &[RepeatPhase],
        threads: usize,
    ) -> Result<Self, String> {
        let mut phases = vec![Planned {
            name: "run".into(),
            sleep_until_ns: None,
            wait_for: None,
            runtime_ns: runtime.map(|r| r.0),
        }];
        for (i, p) in later.iter().enumerate() {
            let name = p.name.clone().unwrap_or(format!("phase{}", i + 1));
            if name.is_empty() || name.contains(':') || phases.iter().any(|q| q.name == name) {
                return Err(format!(
                    "{kind}.phase[{i}].name: `{name}` is empty, has ':' or is used twice"
                ));
            }
            let runtime = p.runtime.or(phase_runtime);
            if runtime == Some(Duration(0)) {
                return Err(format!("{kind}.phase[{i}].runtime: must be positive"));
            }
            phases.push(Planned {
                name,
                sleep_until_ns: p.sleep_until.map(|d| d.0),
                wait_for: p.wait_for.clone(),
                runtime_ns: runtime.map(|r| r.0),
            });
        }
        if phases.len() > usize::from(u8::MAX) {
            return Err(format!("{kind}.phase: at most {} phases", u8::MAX - 1));
        }
        let first = Cursor {
            phase: 0,
            start_ns: Some(0),
        };
        Ok(Repeats {
            phases,
            threads: vec![first; threads],
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.phases.iter().map(|p| p.name.clone()).collect()
    }

    pub fn waits_for(&self, phase: usize) -> Option<&str> {
        self.phases.get(phase)?.wait_for.as_deref()
    }

    /// Where thread `t` stands at `now_ns`: `Ok((phase, fresh))` to do the phase's work
    /// (`fresh`: its first operation, to start from the beginning), or the step to take
    /// instead (the phase's sleep, or its end once its runtime is over).
    pub fn begin(&mut self, t: usize, now_ns: u64) -> Result<(u8, bool), Step> {
        let c = &mut self.threads[t];
        let p = &self.phases[c.phase];
        let (start, fresh) = match c.start_ns {
            Some(s) => (s, false),
            None => {
                if let Some(until_ns) = p.sleep_until_ns.filter(|&u| u > now_ns) {
                    return Err(Step::Sleep { until_ns });
                }
                c.start_ns = Some(now_ns);
                (now_ns, true)
            }
        };
        if p.runtime_ns
            .is_some_and(|r| now_ns >= start.saturating_add(r))
        {
            return Err(self.end(t));
        }
        Ok((c.phase as u8, fresh))
    }

    /// Thread `t` has done its phase's work: it waits at the barrier for the next phase,
    /// or is done after the last.
    pub fn end(&mut self, t: usize) -> Step {
        let c = &mut self.threads[t];
        assert!(c.start_ns.is_some(), "a phase ends after it has begun");
        if c.phase + 1 == self.phases.len() {
            return Step::Done;
        }
        *c = Cursor {
            phase: c.phase + 1,
            start_ns: None,
        };
        Step::Barrier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeats(text: &str, threads: usize) -> Result<Repeats, String> {
        #[derive(Deserialize)]
        struct T {
            #[serde(default)]
            phase: Vec<RepeatPhase>,
        }
        let t: T = toml::from_str(text).unwrap();
        Repeats::new("dd", Some(Duration(100)), None, &t.phase, threads)
    }

    #[test]
    fn a_phase_sleeps_then_runs_for_its_runtime_from_its_start() {
        let text = "[[phase]]\nsleep_until = '500ns'\nruntime = '50ns'\nwait_for = 'hog'";
        let mut r = repeats(text, 2).unwrap();
        assert_eq!(r.names(), ["run", "phase1"]);
        assert_eq!(r.waits_for(1), Some("hog"));
        assert_eq!(r.begin(0, 10), Ok((0, false)));
        assert_eq!(r.begin(0, 100), Err(Step::Barrier));
        assert_eq!(r.begin(0, 200), Err(Step::Sleep { until_ns: 500 }));
        assert_eq!(r.begin(0, 600), Ok((1, true)));
        assert_eq!(r.begin(0, 649), Ok((1, false)));
        assert_eq!(r.begin(0, 650), Err(Step::Done));
        assert_eq!(r.end(1), Step::Barrier);
        assert_eq!(r.begin(1, 700), Ok((1, true)));
    }

    #[test]
    fn phase_names_and_runtimes_are_checked() {
        let e = repeats("[[phase]]\nname = 'run'", 1).err().unwrap();
        assert!(e.starts_with("dd.phase[0].name: `run`"), "{e}");
        let e = repeats("[[phase]]\n[[phase]]\nname = 'a:b'", 1)
            .err()
            .unwrap();
        assert!(e.starts_with("dd.phase[1].name"), "{e}");
        let e = repeats("[[phase]]\nruntime = 0", 1).err().unwrap();
        assert_eq!(e, "dd.phase[0].runtime: must be positive");
    }
}
