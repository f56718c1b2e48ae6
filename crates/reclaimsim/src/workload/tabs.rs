//! Chrome OS's memory-pressure tab test (tast `platform.MemoryPressure`, the
//! `mempressure` package of chromiumos/tast-tests, 2019-2022), as a stream of memory
//! touches: one renderer process per tab, tabs opened one after another while the test
//! switches among them, until `tabs` are open; then the cold tabs and the first tabs
//! once more. Seed 002's client profiles (MGLRU look-around) came from this test on a
//! Snapdragon 7c Chromebook with zram.
//!
//! What the test does, and what each step touches here:
//! - open 5 tabs, each loaded (`load`: every page of its renderer's memory written once,
//!   evenly over `load_time`) and scrolled (`scroll`: 50 steps 50 ms apart, each touching part of what the tab
//!   shows);
//! - switch through those 5 once with a 1 s pause, then 10 times with 200 ms (`switch`:
//!   the tab's visible set, the pages rendering one frame reads);
//! - until `tabs` are open: switch to and scroll each of the 5 newest tabs, switch
//!   through the first 5 without a pause, open the next tab;
//! - after 10 s, switch through the next 10 tabs after the first 5 (the cold tabs);
//!   after 20 s, switch through the first 5 once with a 1 s pause and 10 times with
//!   200 ms.
//!
//! With `code`, every renderer also maps one shared file, the browser's code (the
//! binary's text the zygote maps before forking renderers): a load reads `code_load`
//! percent of it and every frame `code_frame` percent, the same 64 KiB runs in every
//! renderer, so reclaim's rmap walk of a code page visits every renderer's mapping.
//!
//! The test opens tabs until Chrome discards one: a `chromeos` agent (engine::chromeos)
//! discards the tab `discard_order` ranks first, and the script then leaves its loop at
//! the next pass (`process_killed`). Without one, `tabs` tabs open.
//!
//! Departs: a discarded tab is not reloaded when the script switches to it.
//! A renderer's memory is one anonymous region, written once when its tab loads and
//! read in runs of `run` bytes afterwards; background tabs touch nothing; Chrome's
//! browser and GPU processes, the page loads' other file reads and the renderers' own
//! CPU work are not modelled; a step starts
//! when the one before it has finished, so pauses add to switch times rather than
//! overlapping them.

use super::{stream_rng, FileSpec, Layout, ProcessSpec, RegionSpec, Rng, Step, Touch, Workload};
use crate::units::{ByteSize, Duration, PAGE_SIZE};
use rand::seq::SliceRandom;
use serde::Deserialize;

/// The tab test's parameters (`[workload.tabs]`).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TabsOptions {
    /// Tabs opened in all (the test's first 5 included).
    pub tabs: u64,
    /// Anonymous memory of one tab's renderer process.
    pub tab_size: ByteSize,
    /// Percent of a renderer's memory one frame of the tab reads. Default 20.
    #[serde(default = "twenty")]
    pub visible: f64,
    /// Contiguous bytes a read of the visible set covers at a time. Default 64KiB.
    #[serde(default = "run")]
    pub run: ByteSize,
    /// Percent of the visible set one scroll step reads. Default 10.
    #[serde(default = "ten")]
    pub scroll: f64,
    /// The test's first tabs, switched through between new tabs (`initialTabSetSize`).
    /// Default 5.
    #[serde(default = "five")]
    pub initial: u64,
    /// The newest tabs switched to and scrolled before each new tab
    /// (`recentTabSetSize`). Default 5.
    #[serde(default = "five")]
    pub recent: u64,
    /// Tabs after the first switched to in the cold phase (`coldTabSetSize`). Default 10.
    #[serde(default = "ten_u")]
    pub cold: u64,
    /// Switch cycles through the first tabs at 200 ms (`tabSwitchRepeatCount`). Default 10.
    #[serde(default = "ten_u")]
    pub repeats: u64,
    /// How long a tab's page takes to load: its renderer's memory is written evenly
    /// over this time (the test waits up to 20 s for a load to quiesce). Default 5s.
    #[serde(default = "load_time")]
    pub load_time: Duration,
    /// The test's waits for the system to settle (10 s each). Default 10s.
    #[serde(default = "settle")]
    pub settle: Duration,
    /// The browser's code the renderers share: one file every renderer maps (the text of
    /// Chrome's binary, which the zygote maps before it forks them). Default 0: none;
    /// its size is the build's (Debian's Chromium 148 for x86-64: 225 MiB), so a
    /// scenario that models it says which.
    #[serde(default)]
    pub code: ByteSize,
    /// Percent of `code` a renderer runs while its tab loads: the same pages in every
    /// renderer, read over the load. Default 34 (measured: a renderer that has loaded a
    /// page maps 32-38% of Chromium's text; docs/workloads.md).
    #[serde(default = "code_load")]
    pub code_load: f64,
    /// Percent of `code` one frame runs (a switch, or a scroll step): a part of the
    /// load's code. Default 3.5 (measured: a renderer drawing 60 frames a second
    /// touched 3.5% of the text in one second).
    #[serde(default = "code_frame")]
    pub code_frame: f64,
}

fn code_load() -> f64 {
    34.0
}
fn code_frame() -> f64 {
    3.5
}

fn twenty() -> f64 {
    20.0
}
fn ten() -> f64 {
    10.0
}
fn ten_u() -> u64 {
    10
}
fn five() -> u64 {
    5
}
fn run() -> ByteSize {
    ByteSize(64 * 1024)
}
fn load_time() -> Duration {
    Duration(5_000_000_000)
}
fn settle() -> Duration {
    Duration(10_000_000_000)
}

/// What one step of the test does to one tab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    /// The tab loads: its renderer writes all its memory once.
    Load,
    /// The tab is brought to the front: one frame reads its visible set.
    Switch,
    /// wiggleTab: 50 scroll steps 50 ms apart, each reading part of the visible set.
    Scroll,
    /// Nothing (the test's waits for the system to settle).
    Wait,
}

/// One step of the script: `act` on tab `tab`, then a pause before the next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    tab: u32,
    act: Act,
    pause_ns: u64,
}

const MS: u64 = 1_000_000;
const SCROLL_STEPS: u64 = 50;
const SCROLL_DELAY: u64 = 50 * MS;

/// The test's script (mempressure.go's Run) as events, in order.
fn script(o: &TabsOptions) -> Vec<Event> {
    script_and_loop(o).0
}

/// The script, and where each pass of its loop that opens tabs begins, with the event
/// after the loop last (where the test goes once a tab has gone).
fn script_and_loop(o: &TabsOptions) -> (Vec<Event>, Vec<usize>) {
    let ev = |tab: u64, act, pause_ns| Event {
        tab: tab as u32,
        act,
        pause_ns,
    };
    let initial = o.initial.min(o.tabs);
    let mut s = Vec::new();
    let cycle = |s: &mut Vec<Event>, tabs: std::ops::Range<u64>, pause| {
        s.extend(tabs.map(|t| ev(t, Act::Switch, pause)));
    };
    for t in 0..initial {
        s.push(ev(t, Act::Load, 0));
        s.push(ev(t, Act::Scroll, 0));
    }
    let switches = |s: &mut Vec<Event>| {
        cycle(s, 0..initial, 1000 * MS);
        for _ in 0..o.repeats {
            cycle(s, 0..initial, 200 * MS);
        }
    };
    switches(&mut s);
    let mut passes = Vec::new();
    for new in initial..o.tabs {
        passes.push(s.len());
        for t in new.saturating_sub(o.recent)..new {
            s.push(ev(t, Act::Switch, 0));
            s.push(ev(t, Act::Scroll, 0));
        }
        cycle(&mut s, 0..initial, 0);
        s.push(ev(new, Act::Load, 0));
    }
    passes.push(s.len());
    s.push(ev(0, Act::Wait, o.settle.0));
    cycle(&mut s, initial..(initial + o.cold).min(o.tabs), 0);
    s.push(ev(0, Act::Wait, 2 * o.settle.0));
    switches(&mut s);
    (s, passes)
}

/// A tab's runs of `run` pages, those its frame reads, and those a scroll step reads.
fn sizes(o: &TabsOptions) -> (u64, u64, u64) {
    let runs = (o.tab_size.pages() / o.run.pages().max(1)).max(1);
    let shown = ((runs as f64 * o.visible / 100.0).ceil() as u64).clamp(1, runs);
    let scroll_runs = ((shown as f64 * o.scroll / 100.0).ceil() as u64).clamp(1, shown);
    (runs, shown, scroll_runs)
}

/// The operations the whole script makes (for estimates of a run's length).
pub fn operations(o: &TabsOptions) -> u64 {
    let (_, shown, _) = sizes(o);
    let load = o.tab_size.pages().div_ceil(o.run.pages().max(1));
    script(o).iter().map(|e| act_ops(e.act, load, shown)).sum()
}

/// Operations `act` takes: a load's runs of `run` pages (`load`), a switch's visible
/// runs (`shown`), a scroll's steps.
fn act_ops(act: Act, load: u64, shown: u64) -> u64 {
    match act {
        Act::Load => load,
        Act::Switch => shown,
        Act::Scroll => SCROLL_STEPS,
        Act::Wait => 0,
    }
}

/// Pages of the shared code read at a time: fault-around's window (fault_around_bytes,
/// 64 KiB), so the runs a renderer maps are whole windows.
const CODE_RUN: u64 = 16;

/// The shared code's runs of [`CODE_RUN`] pages that a load runs and that a frame runs
/// (a part of the load's), chosen once for all renderers: they run the same code.
fn code_runs(o: &TabsOptions, rng: &mut Rng) -> (Vec<u64>, Vec<u64>) {
    let runs = o.code.pages().div_ceil(CODE_RUN);
    let pick = |pct: f64| ((runs as f64 * pct / 100.0).ceil() as u64).min(runs) as usize;
    let mut all: Vec<u64> = (0..runs).collect();
    all.shuffle(rng);
    all.truncate(pick(o.code_load));
    let mut frame = all.clone();
    frame.truncate(pick(o.code_frame).min(all.len()));
    all.sort_unstable();
    frame.sort_unstable();
    (all, frame)
}

/// The part of `runs` operation `i` of `ops` takes: an even share, in order.
fn share(runs: &[u64], i: u64, ops: u64) -> &[u64] {
    let n = runs.len() as u64;
    let (from, to) = (i * n / ops.max(1), ((i + 1) * n / ops.max(1)).min(n));
    &runs[from as usize..to as usize]
}

/// A tab's renderer: the runs of its memory a frame reads, chosen once.
struct Tab {
    rng: Rng,
    visible: Vec<u64>,
}

/// Where a thread is in the script.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    /// The event the thread is at (every thread passes every event's barrier).
    event: usize,
    /// Operations of it done.
    done: u64,
    /// The event's touches are done and its pause has been taken.
    paused: bool,
    /// When the current scroll step may start.
    next_ns: u64,
}

/// The generator: thread `t` is tab `t`'s renderer; all threads meet at a barrier after
/// every step of the script, so one tab acts at a time.
pub struct Tabs {
    pages: u64,
    run: u64,
    scroll_runs: u64,
    /// Time between the starts of two runs of a load.
    load_pace: u64,
    events: Vec<Event>,
    /// Where each pass of the loop opening tabs begins; last, the event after the loop.
    passes: Vec<usize>,
    /// The test's first tabs, which it pins (pinTabs): Chrome discards them last.
    pinned: usize,
    tabs: Vec<Tab>,
    /// Pages of the shared code (0: none), and its runs a load and a frame read.
    code_pages: u64,
    code_load: Vec<u64>,
    code_frame: Vec<u64>,
    at: Vec<Cursor>,
    /// Tabs an agent discarded (their renderers killed).
    discarded: Vec<bool>,
    /// Once a tab has gone: the pass of the loop at which the test stops opening tabs
    /// (the next to begin), and the event it goes on from instead.
    cut: Option<(usize, usize)>,
}

impl Tabs {
    pub fn new(o: &TabsOptions, seed: u64) -> Result<Self, String> {
        let n = super::check_count("tabs.tabs", o.tabs)?;
        let pages = o.tab_size.pages();
        let run = o.run.pages();
        if pages == 0 {
            return Err("tabs.tab_size: must be at least one page".into());
        }
        if run == 0 || run > pages {
            return Err(format!(
                "tabs.run: must be between {PAGE_SIZE} bytes and tab_size"
            ));
        }
        let shares = [
            ("visible", o.visible),
            ("scroll", o.scroll),
            ("code_load", o.code_load),
            ("code_frame", o.code_frame),
        ];
        for (name, v) in shares {
            if !(v > 0.0 && v <= 100.0) {
                return Err(format!("tabs.{name}: must be above 0 and at most 100"));
            }
        }
        let (runs, shown, scroll_runs) = sizes(o);
        let tabs = (0..n)
            .map(|t| {
                let mut rng = stream_rng(seed, t as u64);
                let mut all: Vec<u64> = (0..runs).collect();
                all.shuffle(&mut rng);
                all.truncate(shown as usize);
                all.sort_unstable();
                Tab { rng, visible: all }
            })
            .collect();
        if o.code_frame > o.code_load {
            return Err("tabs.code_frame: a frame runs part of the load's code, \
                        so at most code_load"
                .into());
        }
        let (code_load, code_frame) = code_runs(o, &mut stream_rng(seed, u64::MAX));
        let load_pace = o.load_time.0 / pages.div_ceil(run);
        let (events, passes) = script_and_loop(o);
        Ok(Tabs {
            pages,
            run,
            scroll_runs,
            load_pace,
            events,
            passes,
            pinned: o.initial.min(o.tabs) as usize,
            tabs,
            code_pages: o.code.pages(),
            code_load,
            code_frame,
            at: vec![Cursor::default(); n],
            discarded: vec![false; n],
            cut: None,
        })
    }

    /// The event after `event`: the next, or, once a tab has gone and the test reaches
    /// the next pass of its loop, the event after the loop ("Ending allocation because
    /// one or more targets (tabs) have gone").
    fn after(&self, event: usize) -> usize {
        match self.cut {
            Some((at, to)) if event + 1 == at => to,
            _ => event + 1,
        }
    }

    /// The event the script is at: the furthest any renderer has reached.
    fn now_event(&self) -> usize {
        self.at.iter().map(|c| c.event).max().unwrap_or(0)
    }

    /// Operations `act` takes: runs of `run` pages.
    fn ops(&self, act: Act) -> u64 {
        let shown = self.tabs[0].visible.len() as u64;
        act_ops(act, self.pages.div_ceil(self.run), shown)
    }

    /// Operation `i` of `act` on tab `t`: its touches into `out`.
    fn touches(&mut self, t: usize, act: Act, i: u64, out: &mut Vec<Touch>) {
        let run = self.run;
        let read = |out: &mut Vec<Touch>, first: u64, write: bool| {
            let end = (first + run).min(self.pages);
            out.extend((first..end).map(|page| Touch::Mem {
                region: 0,
                page,
                write,
            }));
        };
        let ops = self.ops(act);
        self.code(act, i, ops, out);
        let tab = &mut self.tabs[t];
        match act {
            Act::Load => read(out, i * run, true),
            Act::Switch => read(out, tab.visible[i as usize] * run, false),
            Act::Scroll => {
                let picks: Vec<u64> = (tab.visible)
                    .choose_multiple(&mut tab.rng, self.scroll_runs as usize)
                    .copied()
                    .collect();
                for r in picks {
                    read(out, r * run, false);
                }
            }
            Act::Wait => {}
        }
    }

    /// The shared code operation `i` of `ops` of `act` reads, into `out`: a load's code
    /// spread over its operations, a frame's over a switch's, and the whole frame's code
    /// at every scroll step (each step draws a frame).
    fn code(&self, act: Act, i: u64, ops: u64, out: &mut Vec<Touch>) {
        let part: &[u64] = match act {
            Act::Load => share(&self.code_load, i, ops),
            Act::Switch => share(&self.code_frame, i, ops),
            Act::Scroll => &self.code_frame,
            Act::Wait => &[],
        };
        for &r in part {
            let end = ((r + 1) * CODE_RUN).min(self.code_pages);
            out.extend((r * CODE_RUN..end).map(|page| Touch::Mem {
                region: 1,
                page,
                write: false,
            }));
        }
    }
}

/// The phase results are reported under, per act.
fn phase_of(act: Act) -> u8 {
    match act {
        Act::Load => 0,
        Act::Switch | Act::Wait => 1,
        Act::Scroll => 2,
    }
}

impl Workload for Tabs {
    /// One renderer a tab: its anonymous memory, and the shared code's file if any.
    fn layout(&self) -> Layout {
        let mut regions = vec![RegionSpec::Anon { pages: self.pages }];
        let mut files = Vec::new();
        if self.code_pages > 0 {
            regions.push(RegionSpec::File { file: 0 });
            files.push(FileSpec {
                pages: self.code_pages,
                sparse: false,
            });
        }
        let region = ProcessSpec { regions };
        let n = self.tabs.len();
        Layout {
            files,
            processes: vec![region; n],
            thread_process: (0..n).map(Some).collect(),
        }
    }

    fn phases(&self) -> Vec<String> {
        ["load", "switch", "scroll"].map(String::from).to_vec()
    }

    fn measured(&self, _phase: u8, _now_ns: u64) -> bool {
        true
    }

    /// The phase of the event after `barriers` barriers, for the progress line.
    fn phase_after(&self, barriers: usize) -> usize {
        let last = self.events.len().saturating_sub(1);
        let event = match self.cut {
            Some((at, to)) if barriers >= at => barriers - at + to,
            _ => barriers,
        };
        self.events
            .get(event.min(last))
            .map_or(0, |e| phase_of(e.act) as usize)
    }

    /// Chrome's choice of tab to discard (TabManagerDelegate on Chrome OS): never the
    /// tab in front, not a tab not yet opened or already gone; unpinned tabs before the
    /// pinned, each the least recently in front first.
    fn discard_order(&self) -> Vec<usize> {
        let now = self.now_event().min(self.events.len().saturating_sub(1));
        let mut last: Vec<Option<usize>> = vec![None; self.tabs.len()];
        let mut front = None;
        for (i, e) in self.events[..=now].iter().enumerate() {
            if e.act != Act::Wait {
                last[e.tab as usize] = Some(i);
                front = Some(e.tab as usize);
            }
        }
        let mut order: Vec<usize> = (0..self.tabs.len())
            .filter(|&t| last[t].is_some() && !self.discarded[t] && Some(t) != front)
            .collect();
        order.sort_by_key(|&t| (t < self.pinned, last[t]));
        order
    }

    /// A tab's renderer was killed: the test stops opening tabs at its loop's next pass.
    fn process_killed(&mut self, process: usize) {
        self.discarded[process] = true;
        let now = self.now_event();
        let end = *self.passes.last().expect("the loop's end");
        if self.cut.is_none() {
            if let Some(&at) = self.passes.iter().find(|&&p| p > now && p < end) {
                self.cut = Some((at, end));
            }
        }
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        let c = self.at[thread];
        let Some(&e) = self.events.get(c.event) else {
            return Step::Done;
        };
        let mine = e.tab as usize == thread;
        if mine && c.done < self.ops(e.act) {
            if now_ns < c.next_ns {
                return Step::Sleep {
                    until_ns: c.next_ns,
                };
            }
            self.touches(thread, e.act, c.done, out);
            let pace = match e.act {
                Act::Load => self.load_pace,
                Act::Scroll => SCROLL_DELAY,
                Act::Switch | Act::Wait => 0,
            };
            let c = &mut self.at[thread];
            c.done += 1;
            c.next_ns = now_ns + pace;
            let bytes = (out.len() as u64 * PAGE_SIZE).min(u32::MAX as u64) as u32;
            return Step::Op {
                phase: phase_of(e.act),
                bytes,
            };
        }
        if mine && !c.paused && e.pause_ns > 0 {
            self.at[thread].paused = true;
            return Step::Sleep {
                until_ns: now_ns + e.pause_ns,
            };
        }
        self.at[thread] = Cursor {
            event: self.after(c.event),
            ..Cursor::default()
        };
        Step::Barrier
    }
}

#[cfg(test)]
mod tests;
