//! User-space agents (`[[agent]]`) as tasks: each wakes at its tick on its CPU, reads a
//! memcg's files as a process reads them (memory.pressure through psi_show,
//! memory.current, memory.high) and writes memory.high through `control::write`, so a
//! write's reclaim runs in the agent's task. Each read and write costs the agent's task
//! CPU time (`cgroup_read`, `cgroup_stat_read` for memory.stat, `cgroup_write`). An
//! agent stops when every workload is done (it does not keep the run alive).
//!
//! Kinds: senpai, as facebookincubator/senpai's senpai.py (Senpai.tick, Senpai.adjust,
//! Cgroup.scale_limit, Cgroup.import_limit); and a `Controller` from outside the library
//! (`RunOptions::agent`: the Python package's `agent=fn`), which is shown every memcg's
//! files and the system's pressure at its interval (`AgentView`) and returns writes,
//! parsed as an `[[event]]`'s and run through the same `control::write`.

use super::record::{AgentKill, AgentResult, AgentWrite};
use super::SimError;
use super::{new_task, outcome_text, Engine, EventResult, Kind, State};
use crate::kernel::control::{self, MemcgFile, Outcome, Write};
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::psi::Pressure;
use crate::kernel::stats::{self, Cat};
use crate::kernel::Kernel;
use crate::scenario::agent::{self, AgentKind, SenpaiConf, SenpaiMode};
use crate::scenario::config::Scenario;
use crate::scenario::config::{EventConfig, EventValue};
use crate::scenario::event::{self, EventWrite};
use crate::units::PAGE_SIZE;
use indexmap::IndexMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// A controller outside the library: called at each interval of virtual time with what
/// the kernel exposes, it returns the writes to make. The engine knows nothing of what
/// implements it (the Python package's `agent=fn`); a deterministic controller gives a
/// deterministic run.
pub trait Controller {
    /// One read of the files; the writes to make now, or why the controller failed (the
    /// run stops with `SimError::Agent`).
    fn tick(&mut self, view: &AgentView) -> Result<Vec<ControlWrite>, String>;
}

/// A write a controller asks for: a memcg's file (`memcg` its path, `file` one of
/// `scenario::event::FILES`) or, without `memcg`, a sysctl (`scenario::event::SYSCTLS`);
/// `value` as an `[[event]]`'s (`"80M"`, `"max"`, `"32M swappiness=0"`, `"60"`).
#[derive(Clone, Debug, PartialEq)]
pub struct ControlWrite {
    pub memcg: Option<String>,
    pub file: String,
    pub value: String,
}

impl std::fmt::Display for ControlWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.memcg {
            Some(m) => write!(f, "({m:?}, {:?}, {:?})", self.file, self.value),
            None => write!(f, "({:?}, {:?})", self.file, self.value),
        }
    }
}

/// A controller run as an agent task (`RunOptions::agent`): `kind` names it in the
/// results' `agents`; it is called at `start_ns`, then `interval_ns` after each call's
/// work ends, on node 0's kswapd's CPUs.
pub struct ExternalAgent {
    pub kind: String,
    pub controller: Box<dyn Controller>,
    pub interval_ns: u64,
    pub start_ns: u64,
}

/// What a controller is shown at a call: the files as a process reading them now would
/// see them, and how its last call's writes ended.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct AgentView {
    /// Virtual time of the call, s.
    pub now: f64,
    /// /proc/pressure/memory.
    pub pressure: Pressure,
    /// Per memcg path, the root's (`/`) included, its files.
    pub memcgs: BTreeMap<String, MemcgFiles>,
    /// The last call's writes as run: the command, and "ok", an errno or the OOM kills.
    pub last_writes: Vec<EventResult>,
}

/// A memcg's memory files under their names; sizes in bytes, a limit of "max" as None.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct MemcgFiles {
    #[serde(rename = "memory.current")]
    pub current: u64,
    #[serde(rename = "memory.swap.current")]
    pub swap_current: u64,
    #[serde(rename = "memory.high")]
    pub high: Option<u64>,
    #[serde(rename = "memory.max")]
    pub max: Option<u64>,
    #[serde(rename = "memory.low")]
    pub low: u64,
    #[serde(rename = "memory.min")]
    pub min: u64,
    #[serde(rename = "memory.pressure")]
    pub pressure: Pressure,
    #[serde(rename = "memory.stat")]
    pub stat: IndexMap<String, u64>,
    #[serde(rename = "memory.events")]
    pub events: IndexMap<String, u64>,
    #[serde(rename = "memory.events.local")]
    pub events_local: IndexMap<String, u64>,
}

/// An external controller and the results of its last call's writes.
struct External {
    controller: Box<dyn Controller>,
    interval_ns: u64,
    last: Vec<EventResult>,
}

/// The files of every memcg and the system's pressure, read now (each pressure file
/// through psi_show, as a read brings its averages up to date), at the CPU cost of
/// reading them all: per memcg nine small files and memory.stat, and
/// /proc/pressure/memory.
fn read_all(k: &mut Kernel, last: &[EventResult]) -> AgentView {
    k.sync();
    // Read at the time the other tasks have reached; the reads' CPU time after.
    let now = k.cur.clock;
    let nr = k.memcgs.cgs.len() as u64;
    k.spend(
        k.costs.cgroup_read * (9 * nr + 1) + k.costs.cgroup_stat_read * nr,
        Cat::Other,
    );
    let bytes = |pages: u64| (pages != u64::MAX).then(|| pages.saturating_mul(PAGE_SIZE));
    let mut memcgs = BTreeMap::new();
    for m in 0..k.memcgs.cgs.len() as MemcgId {
        let pressure = k.psi.show(m, now);
        let sub = k.memcgs.iter(m);
        let cg = &k.memcgs.cgs[m as usize];
        let files = MemcgFiles {
            current: cg.usage * PAGE_SIZE,
            swap_current: cg.swap_usage * PAGE_SIZE,
            high: bytes(cg.high),
            max: bytes(cg.max),
            low: cg.low.saturating_mul(PAGE_SIZE),
            min: cg.min.saturating_mul(PAGE_SIZE),
            pressure,
            stat: stats::memory_stat(k, m),
            events: stats::memory_events(k, &sub),
            events_local: stats::memory_events(k, &[m]),
        };
        memcgs.insert(cg.path.clone(), files);
    }
    AgentView {
        now: now as f64 / 1e9,
        pressure: k.psi.system(),
        memcgs,
        last_writes: last.to_vec(),
    }
}

/// A controller's write as the kernel runs it, with the command a user would type, read
/// as an `[[event]]` with the checks `scenario::check_events` makes (a declared memcg,
/// the root only memory.reclaim; lru_gen commands are not offered); why not, naming it.
fn resolve(k: &Kernel, w: &ControlWrite) -> Result<(String, Write), String> {
    let ev = EventConfig {
        at: crate::units::Duration(0),
        command: None,
        file: w.memcg.as_ref().map(|_| w.file.clone()),
        sysctl: w.memcg.is_none().then(|| w.file.clone()),
        memcg: w.memcg.clone(),
        value: Some(EventValue::Text(w.value.clone())),
        cpu: None,
    };
    let bad = |e: String| format!("agent write {w}: {e}");
    let parsed = event::parse(&ev).map_err(|(f, e)| bad(format!("{f}: {e}")))?;
    let write = match parsed.write {
        EventWrite::Memcg { path, file } => {
            let m = (k.memcgs.by_path(&path)).ok_or_else(|| bad(format!("no memcg \"{path}\"")))?;
            if m == crate::kernel::memcg::ROOT && !matches!(file, MemcgFile::Reclaim { .. }) {
                return Err(bad(
                    "the root cgroup has only memory.reclaim of these files".into(),
                ));
            }
            Write::Memcg(m, file)
        }
        EventWrite::Sysctl(s) => Write::Sysctl(s),
        EventWrite::LruGen(_) => return Err(bad("lru_gen commands are not offered".into())),
    };
    Ok((parsed.shown, write))
}

impl External {
    /// One call: the files read, the controller's writes resolved (all before any runs:
    /// a bad one stops the run with none made) and run in order, each recorded.
    fn step(&mut self, k: &mut Kernel, p: &mut dyn Policy) -> Result<Vec<EventResult>, String> {
        let view = read_all(k, &self.last);
        let asked = self.controller.tick(&view)?;
        let writes = (asked.iter())
            .map(|w| resolve(k, w))
            .collect::<Result<Vec<_>, _>>()?;
        self.last.clear();
        for (command, w) in writes {
            let at = k.cur.clock;
            k.spend(k.costs.cgroup_write, Cat::Other);
            // The write lands after its syscall's time: the tasks due before it go first.
            k.sync();
            let r = control::write(k, p, &w);
            self.last.push(EventResult {
                time_s: at as f64 / 1e9,
                command,
                result: outcome_text(r),
            });
        }
        Ok(self.last.clone())
    }
}

/// An agent's task state.
pub(crate) struct Agent {
    memcg: MemcgId,
    path: String,
    kind: AgentState,
    /// When its last step ended: its clock once it has stopped.
    last_end: u64,
    pub(crate) result: AgentResult,
}

/// Per kind, what the agent keeps between its steps.
enum AgentState {
    Senpai(Senpai),
    Oomd(super::oomd::Oomd),
    ChromeOs(agent::ChromeOsConf),
    External(External),
}

/// A memcg's files as a user-space process reads and writes them (senpai.py's Cgroup
/// IO), each read after catching up with the other tasks; the writes it made.
struct Cgroup<'a> {
    k: &'a mut Kernel,
    p: &'a mut dyn Policy,
    m: MemcgId,
    path: &'a str,
    /// When, the bytes written, whether to memory.reclaim (else memory.high), the
    /// command, the result.
    writes: Vec<(u64, u64, bool, String, Outcome)>,
}

impl Cgroup<'_> {
    /// memory.pressure's `some` total (µs), as psi_show brings it up to now.
    fn total(&mut self) -> u64 {
        self.k.sync();
        // psi_show at the time the other tasks have reached, then the read's CPU time.
        let now = self.k.cur.clock;
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        self.k.psi.show(self.m, now).some.total
    }

    /// memory.high in bytes, "max" as senpai.py reads it ((1 << 64) - 1).
    fn read_limit(&mut self) -> u64 {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        match self.k.memcgs.cgs[self.m as usize].high {
            u64::MAX => u64::MAX,
            pages => pages.saturating_mul(PAGE_SIZE),
        }
    }

    /// memory.current in bytes.
    fn read_current(&mut self) -> u64 {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        self.k.memcgs.cgs[self.m as usize].usage * PAGE_SIZE
    }

    /// memory.pressure's `some` avg10 and avg60 (percent), as psi_show brings them up
    /// to now.
    fn some_avgs(&mut self) -> (f64, f64) {
        self.k.sync();
        let now = self.k.cur.clock;
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        let some = self.k.psi.show(self.m, now).some;
        (some.avg10, some.avg60)
    }

    /// Models oomd Senpai's getLimitMinBytes(): `min_size` plus what cannot be
    /// reclaimed (memory.current less the file LRUs and the anon that fits the memcg's
    /// swap, when there is swap and swappiness), at least memory.min. Reads
    /// memory.current, memory.stat, the swap's total and free (/proc/meminfo,
    /// memory.swap.*) and memory.min.
    /// Returns it with memory.current, read once as oomd's cgroup context caches it.
    fn limit_min(&mut self, min_size: u64) -> (u64, u64) {
        let current = self.read_current();
        self.k.spend(self.k.costs.cgroup_stat_read, Cat::Other);
        let st = stats::memory_stat(self.k, self.m);
        let get = |key: &str| st.get(key).copied().unwrap_or(0);
        let file = get("active_file") + get("inactive_file");
        let anon = get("active_anon") + get("inactive_anon");
        self.k.spend(2 * self.k.costs.cgroup_read, Cat::Other);
        let has_swap = self.k.swap.as_ref().is_some_and(|s| s.total() > 0);
        let swappable = match has_swap && self.k.cfg.swappiness > 0 {
            true => anon.min(self.k.nr_swap_pages(self.m) * PAGE_SIZE),
            false => 0,
        };
        let unreclaimable = current.saturating_sub(file + swappable);
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        let min = self.k.memcgs.cgs[self.m as usize].min * PAGE_SIZE;
        ((min_size + unreclaimable).max(min), current)
    }

    /// `echo BYTES > memory.reclaim` (`reclaim`) or `> memory.high`, as 6.1 runs it
    /// (`control::write`).
    fn write(&mut self, bytes: u64, reclaim: bool) {
        let at = self.k.cur.clock;
        self.k.spend(self.k.costs.cgroup_write, Cat::Other);
        // The write lands after its syscall's time: the tasks due before it go first.
        self.k.sync();
        let pages = bytes / PAGE_SIZE;
        let (file, name) = match reclaim {
            true => (
                MemcgFile::Reclaim {
                    pages,
                    swappiness: None,
                },
                "memory.reclaim",
            ),
            false => (MemcgFile::High(pages), "memory.high"),
        };
        let r = control::write(self.k, self.p, &Write::Memcg(self.m, file));
        let shown = format!("echo {bytes} > {}/{name}", self.path);
        self.writes.push((at, bytes, reclaim, shown, r));
    }
}

/// senpai.py's state: Cgroup.limit, Senpai.last_total, .integral and .grace_ticks;
/// `started` once Senpai.__init__ has run.
struct Senpai {
    conf: SenpaiConf,
    started: bool,
    limit: Option<u64>,
    last_total: u64,
    integral: u64,
    grace_ticks: u64,
}

impl Senpai {
    fn new(conf: SenpaiConf) -> Self {
        Senpai {
            grace_ticks: conf.interval,
            conf,
            started: false,
            limit: None,
            last_total: 0,
            integral: 0,
        }
    }

    /// One step: the first is Cgroup.__init__ and Senpai.__init__ (psi read, the limit
    /// reset to memory.current and written, the total read), each next one
    /// Senpai.tick. Returns the stall integral that decided a write, if it wrote.
    fn step(&mut self, cg: &mut Cgroup) -> Option<u64> {
        if self.conf.mode == SenpaiMode::Reclaim {
            return self.step_reclaim(cg);
        }
        if !self.started {
            self.started = true;
            cg.total();
            self.set_limit(cg, None);
            self.last_total = cg.total();
            self.integral = 0;
            self.grace_ticks = self.conf.interval;
            return Some(0);
        }
        self.tick(cg)
    }

    /// Models Senpai.tick: the `some` total's delta since the last tick added to the
    /// integral; above the target, back off (raise the limit by up to max_backoff,
    /// quadratically in integral / pressure / coeff_backoff) and wait a full interval
    /// before probing; otherwise, once the interval's grace ticks are spent, probe
    /// (lower by up to max_probe, quadratically in pressure / integral / coeff_probe).
    fn tick(&mut self, cg: &mut Cgroup) -> Option<u64> {
        let total = cg.total();
        let delta = total.saturating_sub(self.last_total);
        self.last_total = total;
        self.integral += delta;
        let (c, integral) = (&self.conf, self.integral);
        let target = c.pressure as f64;
        if integral > c.pressure {
            let err = integral as f64 / target;
            let adj = (err / c.coeff_backoff).powi(2);
            let adj = (adj * c.max_backoff).min(c.max_backoff);
            self.adjust(cg, adj);
            self.grace_ticks = self.conf.interval - 1;
            return Some(integral);
        }
        if self.grace_ticks > 0 {
            self.grace_ticks -= 1;
            return None;
        }
        let err = target / integral.max(1) as f64;
        let adj = (err / c.coeff_probe).powi(2);
        let adj = (adj * c.max_probe).min(c.max_probe);
        self.adjust(cg, -adj);
        self.grace_ticks = self.conf.interval - 1;
        Some(integral)
    }

    /// Models oomd's Senpai::initializeCgroup() and tick_immediate_backoff() (commit
    /// 88c28fd): the first step reads the `some` total and waits `interval` ticks; then,
    /// once the ticks are spent, while avg10 and avg60 are both under
    /// `mem_pressure_pct` (oomd also asks the same of I/O pressure, which the model has
    /// none of), reclaim `max_probe` of memory.current above limit_min, in whole pages,
    /// and wait `interval` ticks again. Pressure too high: look again next tick.
    fn step_reclaim(&mut self, cg: &mut Cgroup) -> Option<u64> {
        if !self.started {
            self.started = true;
            self.last_total = cg.total();
            self.grace_ticks = self.conf.interval;
            return None;
        }
        if self.grace_ticks > 0 {
            self.grace_ticks -= 1;
            return None;
        }
        let (avg10, avg60) = cg.some_avgs();
        if avg10.max(avg60) >= self.conf.mem_pressure_pct {
            return None;
        }
        let (floor, current) = cg.limit_min(self.conf.min_size);
        if current <= floor {
            return None;
        }
        let size = ((current - floor) as f64 * self.conf.max_probe) as u64 & !4095;
        cg.write(size, true);
        self.grace_ticks = self.conf.interval;
        Some(0)
    }

    /// Models Senpai.adjust and Cgroup.scale_limit: memory.high read, scaled by
    /// 1 + factor (Python's int(): toward zero), written; the integral starts over.
    fn adjust(&mut self, cg: &mut Cgroup, factor: f64) {
        let x = cg.read_limit() as f64;
        let scaled = (x + x * factor).trunc().max(0.0) as u64;
        self.set_limit(cg, Some(scaled));
        self.integral = 0;
    }

    /// Models Cgroup.set_limit and import_limit: when memory.high is not the limit it
    /// last wrote (its start, or another writer), start from memory.current instead;
    /// clamp to [min_size, max_size], round down to 4 KiB, write memory.high.
    fn set_limit(&mut self, cg: &mut Cgroup, limit: Option<u64>) {
        let mut limit = limit;
        if Some(cg.read_limit()) != self.limit || limit.is_none() {
            limit = Some(cg.read_current());
        }
        let l = limit.unwrap_or(0);
        let l = l.min(self.conf.max_size).max(self.conf.min_size) & !4095;
        self.limit = Some(l);
        cg.write(l, false);
    }

    fn tick_ns(&self) -> u64 {
        self.conf.tick_ns
    }
}

impl Engine {
    /// The scenario's `[[agent]]`s, each a task (appended to `tasks`) due at its start,
    /// on its `cpu` or node 0's kswapd's CPUs.
    pub(super) fn add_agents(&mut self, s: &Scenario) -> Result<(), SimError> {
        for (i, a) in s.agents.iter().enumerate() {
            let bad = |f: &str, e: String| SimError::Setup(format!("agent[{i}].{f}: {e}"));
            let parsed = agent::parse(a).map_err(|(f, e)| bad(&f, e))?;
            let path = parsed.memcg.clone().unwrap_or_else(|| "/".into());
            let m = (self.k.memcgs.by_path(&path))
                .ok_or_else(|| bad("memcg", format!("no memcg \"{path}\"")))?;
            let set = match a.cpu {
                Some(cpu) => vec![cpu],
                None => self.cpusets[self.tasks[0].cpuset as usize].clone(),
            };
            let mut task = new_task(
                &mut self.cpusets,
                set,
                Kind::Agent { a: i },
                State::Runnable,
            );
            task.clock = parsed.start_ns;
            self.tasks.push(task);
            let kind = match parsed.kind {
                AgentKind::Senpai(conf) => AgentState::Senpai(Senpai::new(conf)),
                AgentKind::Oomd(conf) => AgentState::Oomd(super::oomd::Oomd::new(conf)),
                AgentKind::ChromeOs(conf) => AgentState::ChromeOs(conf),
            };
            self.agents.push(Agent {
                memcg: m,
                path: path.trim_end_matches('/').to_string(),
                kind,
                last_end: parsed.start_ns,
                result: AgentResult {
                    kind: a.kind.clone(),
                    memcg: path,
                    writes: Vec::new(),
                    kills: Vec::new(),
                },
            });
        }
        Ok(())
    }

    /// Stops agent task `id` if every workload is done and the scenario has no
    /// `duration`, its clock back at its last step's end; whether it stopped.
    pub(super) fn agent_stops(&mut self, id: usize, a: usize) -> bool {
        if self.end_ns.is_some() || !self.wls.iter().all(|w| w.done) {
            return false;
        }
        let t = &mut self.tasks[id];
        t.state = State::Done;
        t.clock = self.agents[a].last_end;
        self.k.sched.cancel(id);
        true
    }

    /// The controller of `RunOptions::agent`, as an agent task due at its start, on node
    /// 0's kswapd's CPUs.
    pub(super) fn add_external(&mut self, x: ExternalAgent) {
        let set = self.cpusets[self.tasks[0].cpuset as usize].clone();
        let a = self.agents.len();
        let mut task = new_task(&mut self.cpusets, set, Kind::Agent { a }, State::Runnable);
        task.clock = x.start_ns;
        self.tasks.push(task);
        self.agents.push(Agent {
            memcg: crate::kernel::memcg::ROOT,
            path: String::new(),
            kind: AgentState::External(External {
                controller: x.controller,
                interval_ns: x.interval_ns.max(1),
                last: Vec::new(),
            }),
            last_end: x.start_ns,
            result: AgentResult {
                kind: x.kind,
                memcg: "/".into(),
                writes: Vec::new(),
                kills: Vec::new(),
            },
        });
    }

    /// One step of agent `a` (task `id`): its kind's step, its writes into the results'
    /// events (and, for senpai, its own series), then sleep a tick from where the step
    /// ended. A controller's failure or bad write stops the run (`Engine::failure`).
    pub(super) fn agent_step(&mut self, id: usize, a: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let ag = &mut self.agents[a];
        let tick = match &mut ag.kind {
            AgentState::Senpai(s) => {
                let mut cg = Cgroup {
                    k: &mut self.k,
                    p: self.p.as_mut(),
                    m: ag.memcg,
                    path: &ag.path,
                    writes: Vec::new(),
                };
                let decided = s.step(&mut cg);
                let writes = std::mem::take(&mut cg.writes);
                for (at, bytes, reclaim, command, r) in writes {
                    ag.result.writes.push(AgentWrite {
                        time_s: at as f64 / 1e9,
                        pressure_us: decided.unwrap_or(0),
                        memory_high: if reclaim { 0 } else { bytes },
                        memory_reclaim: reclaim.then_some(bytes),
                    });
                    self.event_results.push(EventResult {
                        time_s: at as f64 / 1e9,
                        command,
                        result: outcome_text(r),
                    });
                }
                s.tick_ns()
            }
            AgentState::Oomd(o) => {
                let kills = o.step(&mut self.k, self.p.as_mut());
                for kill in kills {
                    let k = self.record_kill(kill);
                    self.agents[a].result.kills.push(k);
                }
                let AgentState::Oomd(o) = &self.agents[a].kind else {
                    unreachable!()
                };
                o.interval_ns()
            }
            AgentState::ChromeOs(conf) => {
                let (critical, avail) = super::chromeos::critical(&mut self.k, conf);
                let (workload, interval_ns) = (conf.workload.clone(), conf.interval_ns);
                if critical {
                    if let Some(kill) = self.discard_tab(&workload, avail) {
                        self.agents[a].result.kills.push(kill);
                    }
                }
                interval_ns
            }
            AgentState::External(x) => {
                match x.step(&mut self.k, self.p.as_mut()) {
                    Ok(done) => self.event_results.extend(done),
                    Err(why) => self.failure = Some(why),
                }
                x.interval_ns
            }
        };
        let end = self.k.cur.clock;
        self.agents[a].last_end = end;
        self.schedule(id, end + tick);
    }

    /// Chrome's discard of one tab of workload `name` (the first its tab manager ranks
    /// that is still alive): its renderer killed, the workload told, the kill in the
    /// results and the run's events. None when it has no tab to give.
    fn discard_tab(&mut self, name: &str, avail_pages: u64) -> Option<AgentKill> {
        let wi = self.wls.iter().position(|w| w.name == name)?;
        let w = &self.wls[wi];
        let process = (w.gen.discard_order().into_iter()).find(|&p| {
            w.mms
                .get(p)
                .is_some_and(|&mm| !self.k.mms[mm as usize].dead)
        })?;
        let mm = self.wls[wi].mms[process];
        crate::kernel::fault::kill_process(&mut self.k, self.p.as_mut(), mm);
        self.wls[wi].gen.process_killed(process);
        let time_s = self.k.cur.clock as f64 / 1e9;
        let victim = format!("{name} tab {process}");
        self.event_results.push(EventResult {
            time_s,
            command: format!(
                "chromeos: critical pressure, {} MiB available",
                (avail_pages * PAGE_SIZE) >> 20
            ),
            result: format!("discarded {victim}"),
        });
        Some(AgentKill {
            time_s,
            ruleset: "critical".into(),
            action: "discard_tab".into(),
            memcg: self.k.memcgs.cgs[self.wls[wi].memcg as usize].path.clone(),
            victims: vec![victim],
            dry: false,
        })
    }

    /// An oomd kill as the results show it, also in the run's events (its command
    /// oomd's action on the cgroup, its result the processes killed).
    fn record_kill(&mut self, kill: super::oomd::OomdKill) -> AgentKill {
        let time_s = self.k.cur.clock as f64 / 1e9;
        let memcg = self.k.memcgs.cgs[kill.memcg as usize].path.clone();
        let victims: Vec<String> = (kill.mms.iter())
            .map(|&mm| {
                (self.wls.iter())
                    .find(|w| w.mms.contains(&mm))
                    .map_or_else(|| format!("mm{mm}"), |w| w.name.clone())
            })
            .collect();
        let result = match kill.dry {
            true => "dry: no kill".to_string(),
            false => format!("killed {}", victims.join(", ")),
        };
        self.event_results.push(EventResult {
            time_s,
            command: format!("oomd {}: {} {memcg}", kill.ruleset, kill.action),
            result,
        });
        AgentKill {
            time_s,
            ruleset: kill.ruleset,
            action: kill.action.to_string(),
            memcg,
            victims,
            dry: kill.dry,
        }
    }
}
