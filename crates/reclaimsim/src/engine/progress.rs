//! Where a run is, as `RunOptions::watch` is shown it: the virtual time reached, the
//! running workloads' phases, and an estimate of the share done.

use super::{Engine, Kind, Progress, State};

impl Engine {
    /// Where the run is, for `RunOptions::watch`.
    pub(super) fn where_now(&self) -> Progress {
        let running: Vec<String> = (self.wls.iter())
            .filter(|w| w.started && !w.done)
            .map(|w| match w.phases.get(w.gen.phase_after(w.barriers)) {
                Some(p) => format!("{}:{p}", w.name),
                None => w.name.clone(),
            })
            .collect();
        let phase = if running.len() > 3 {
            format!(
                "{}, ... ({} running)",
                running[..2].join(", "),
                running.len()
            )
        } else if !running.is_empty() {
            running.join(", ")
        } else if self.wls.iter().all(|w| w.done) {
            "finishing".into()
        } else {
            "starting".into()
        };
        Progress {
            now_ns: self.k.sched.min_clock().unwrap_or(0),
            end_ns: self.end_ns,
            fraction: self.progress(),
            phase,
            steps: self.steps,
        }
    }

    pub(super) fn progress(&self) -> f64 {
        let now = self.k.sched.min_clock().unwrap_or(0);
        if let Some(end) = self.end_ns {
            return (now as f64 / end as f64).min(1.0);
        }
        // A workload whose end is a count says how far it is; one ended by another's
        // end (`until`) follows that one.
        let counted = (self.wls.iter())
            .filter(|w| w.cfg.until.is_none())
            .filter_map(|w| w.gen.done_fraction());
        if let Some(f) = counted.reduce(f64::min) {
            return f.min(1.0);
        }
        let threads: Vec<_> = self
            .tasks
            .iter()
            .filter(|t| matches!(t.kind, Kind::Thread { .. }))
            .collect();
        threads.iter().filter(|t| t.state == State::Done).count() as f64
            / threads.len().max(1) as f64
    }
}
