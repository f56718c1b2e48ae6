//! Progress while variants run, and Ctrl-C.
//!
//! On a terminal each variant has a bar: virtual time reached / expected, the running
//! workloads' phases, wall time and an estimate of the wall time left. When stderr is
//! not a terminal (a log, CI) each variant prints that as one plain line every
//! `LINE_EVERY` of wall time instead ($RECLAIMSIM_PROGRESS_SECS changes it), and a last
//! line when it ends if it printed any. `--quiet` shows nothing.
//!
//! The first Ctrl-C (SIGINT) asks every run to stop at its next look at the clock (the
//! engine's watcher, every few milliseconds); a second one exits at once.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use reclaimsim::engine::Progress;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Default wall time between two plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Wall time between two redraws of a bar's text.
const BAR_EVERY: Duration = Duration::from_millis(100);

/// Set by the first Ctrl-C.
static STOP: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C asked the runs to stop.
pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Handle SIGINT: the first asks the runs to stop (they return where they were, and
/// nothing is written), a second exits at once.
pub fn install_ctrlc() {
    let installed = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted again: exiting now");
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        eprintln!("\ninterrupted: stopping the runs (Ctrl-C again to exit at once)");
    });
    if let Err(e) = installed {
        eprintln!("note: Ctrl-C will not stop cleanly: {e}");
    }
}

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Bars,
    Lines(Duration),
    Quiet,
}

/// Progress for a set of variants run together.
pub struct Display {
    mode: Mode,
    bars: MultiProgress,
}

impl Display {
    pub fn new(quiet: bool) -> Self {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bars
        } else {
            Mode::Lines(line_every())
        };
        let target = if mode == Mode::Bars {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Display {
            mode,
            bars: MultiProgress::with_draw_target(target),
        }
    }

    /// The watcher of one variant. `expected_ns` is the virtual time it reaches when
    /// known before it runs (its `duration`, or its timed workloads'), `at_least_ns` what
    /// its timed phases alone last when some end after a count instead.
    pub fn watcher(&self, name: &str, expected_ns: Option<u128>, at_least_ns: u128) -> Watcher {
        let bar = (self.mode == Mode::Bars).then(|| {
            let bar = self.bars.add(ProgressBar::new(1000));
            if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {msg}") {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(name.to_string());
            bar.set_message("setting up");
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        let now = Instant::now();
        Watcher {
            name: name.to_string(),
            mode: self.mode,
            bar,
            expected_ns,
            at_least_ns,
            started: now,
            shown: now,
            lines: 0,
        }
    }
}

/// `$RECLAIMSIM_PROGRESS_SECS`, or `LINE_EVERY`.
fn line_every() -> Duration {
    std::env::var("RECLAIMSIM_PROGRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(LINE_EVERY, Duration::from_secs_f64)
}

/// Shows one variant's progress; its `watch` is the engine's watcher.
pub struct Watcher {
    name: String,
    mode: Mode,
    bar: Option<ProgressBar>,
    expected_ns: Option<u128>,
    at_least_ns: u128,
    started: Instant,
    shown: Instant,
    lines: u32,
}

impl Watcher {
    /// Show `p` if it is time to; false when Ctrl-C asked to stop.
    pub fn watch(&mut self, p: &Progress) -> bool {
        let now = Instant::now();
        match self.mode {
            Mode::Bars if now - self.shown >= BAR_EVERY => {
                self.shown = now;
                if let Some(bar) = &self.bar {
                    bar.set_position((self.fraction(p) * 1000.0) as u64);
                    bar.set_message(self.describe(p, now));
                }
            }
            Mode::Lines(every) if now - self.shown >= every => {
                self.shown = now;
                self.lines += 1;
                eprintln!("{}: {}", self.name, self.describe(p, now));
            }
            _ => {}
        }
        !stopped()
    }

    /// The run has ended (`virtual_s` reached, or stopped).
    pub fn finish(self, virtual_s: Option<f64>) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if let (Some(v), true) = (virtual_s, self.lines > 0) {
            let wall = self.started.elapsed().as_secs_f64();
            eprintln!("{}: done, {v:.3} s virtual in {wall:.1} s wall", self.name);
        }
    }

    /// The fraction done: virtual time over the expected when that is known, else the
    /// engine's (workload threads finished).
    fn fraction(&self, p: &Progress) -> f64 {
        let expected = p.end_ns.map(u128::from).or(self.expected_ns);
        let f = match expected {
            Some(e) if e > 0 => p.now_ns as f64 / e as f64,
            _ => p.fraction,
        };
        f.clamp(0.0, 1.0)
    }

    /// `1.234 s / 2.000 s virtual (61%), memcached:run, 5 s wall, about 3 s left`.
    fn describe(&self, p: &Progress, now: Instant) -> String {
        let wall = (now - self.started).as_secs_f64();
        let expected = p.end_ns.map(u128::from).or(self.expected_ns);
        let f = self.fraction(p);
        let mut s = match expected {
            Some(e) => format!(
                "{:.3} s / {:.3} s virtual ({:.0}%)",
                p.now_ns as f64 / 1e9,
                e as f64 / 1e9,
                f * 100.0
            ),
            None if u128::from(p.now_ns) < self.at_least_ns => format!(
                "{:.3} s of at least {:.3} s virtual",
                p.now_ns as f64 / 1e9,
                self.at_least_ns as f64 / 1e9
            ),
            None => format!("{:.3} s virtual", p.now_ns as f64 / 1e9),
        };
        s += &format!(", {}, {} wall", p.phase, clock(wall));
        if (0.01..1.0).contains(&f) {
            s += &format!(", about {} left", clock(wall * (1.0 - f) / f));
        }
        s
    }
}

/// `4.2 s`, `42 s`, `3m05s`, `2h01m`.
fn clock(s: f64) -> String {
    if s < 9.95 {
        return format!("{:.1} s", s.max(0.0));
    }
    let s = s.round() as u64;
    match s {
        0..=99 => format!("{s} s"),
        100..=5999 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watcher(expected: Option<u128>) -> Watcher {
        let now = Instant::now();
        Watcher {
            name: "v".into(),
            mode: Mode::Quiet,
            bar: None,
            expected_ns: expected,
            at_least_ns: 0,
            started: now,
            shown: now,
            lines: 0,
        }
    }

    fn at(now_ns: u64, end_ns: Option<u64>, fraction: f64) -> Progress {
        Progress {
            now_ns,
            end_ns,
            fraction,
            phase: "memcached:run".into(),
            steps: 0,
        }
    }

    #[test]
    fn describes_virtual_time_phase_wall_and_estimate() {
        let w = watcher(None);
        let later = w.started + Duration::from_secs(10);
        let d = w.describe(&at(500_000_000, Some(2_000_000_000), 0.25), later);
        assert_eq!(
            d,
            "0.500 s / 2.000 s virtual (25%), memcached:run, 10 s wall, about 30 s left"
        );
        // No duration: the estimate before the run, else the engine's fraction.
        let w = watcher(Some(1_000_000_000));
        let d = w.describe(&at(500_000_000, None, 0.0), later);
        assert!(d.starts_with("0.500 s / 1.000 s virtual (50%)"), "{d}");
        let mut w = watcher(None);
        let d = w.describe(&at(500_000_000, None, 0.5), later);
        assert_eq!(
            d,
            "0.500 s virtual, memcached:run, 10 s wall, about 10 s left"
        );
        w.at_least_ns = 2_000_000_000;
        let d = w.describe(&at(500_000_000, None, 0.0), later);
        assert_eq!(
            d,
            "0.500 s of at least 2.000 s virtual, memcached:run, 10 s wall"
        );
    }

    #[test]
    fn clock_reads_as_seconds_minutes_hours() {
        assert_eq!(clock(4.44), "4.4 s");
        assert_eq!(clock(42.4), "42 s");
        assert_eq!(clock(185.0), "3m05s");
        assert_eq!(clock(7260.0), "2h01m");
    }
}
