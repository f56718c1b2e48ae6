//! The virtual-time engine. Simulated CPUs run tasks (workload threads, one kswapd per
//! node, the flusher, debugfs writes), each a coroutine (`sched`). The engine always
//! resumes the task due earliest (ties by task id), so a run is deterministic. A task
//! takes its CPU for a step (one operation of a workload thread, one balance_pgdat
//! priority iteration of kswapd); within a step it yields wherever it meets shared state
//! (`Kernel::sync`, lru locks, sleeps), so tasks on different CPUs interleave exactly
//! there. Every action's cost advances the running task's clock; a CPU runs one task at
//! a time, and tasks sharing a CPU take turns between steps in CFS order.

mod agent;
mod cfs;
pub mod check;
mod chromeos;
mod clients;
mod oomd;
mod prefetch;
mod progress;
mod record;
mod samples;
mod setup;

use crate::kernel::control::{self, Outcome, Write};
use crate::kernel::fault;
use crate::kernel::kswapd::{Kswapd, KswapdState, Next};
use crate::kernel::lru::plugin::PluginFactory;
pub use crate::kernel::lru::plugin::{EvictCtx, FolioRef, ReclaimPlugin, Reclaimer};
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::stats::{Cat, Histogram};
use crate::kernel::Kernel;
use crate::scenario::config::{Scenario, WorkloadConfig};
use crate::sim::sched::{self, TaskYielder, Yield};
use crate::workload::{Step, Touch, Workload};
pub use agent::{AgentView, ControlWrite, Controller, ExternalAgent, MemcgFiles};
use corosensei::{Coroutine, CoroutineResult};
use prefetch::{prefetch_ahead, prefetch_touches};
pub use record::{
    AgentKill, AgentResult, AgentWrite, CpuUse, EventResult, LruGenView, Profile, Sample, SchedUse,
    TaskUse,
};
use std::collections::BTreeSet;

/// How to run one variant.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Run the invariant checker (the model's CONFIG_DEBUG_VM) every few thousand steps
    /// and at the end.
    pub check: bool,
    /// Shown where the run is every `WATCH_EVERY` steps (a few milliseconds of wall
    /// time); when it returns false the run stops with `SimError::Stopped` (Ctrl-C).
    pub watch: Option<&'a mut dyn FnMut(&Progress) -> bool>,
    /// A controller from outside the library, run as one more agent task (the Python
    /// package's `agent=fn`).
    pub agent: Option<ExternalAgent>,
    /// The plugins of a scenario whose `kernel.plugin.name` is "python" (the Python
    /// package's `policy=`): one is made per governed memcg.
    pub plugin: Option<PluginFactory>,
}

/// A failure while running (an invariant violation found by `--check`, or a workload that
/// cannot be set up).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invariant violated at {time_s:.6} s: {what}")]
    Invariant { time_s: f64, what: String },
    #[error("{0}")]
    Setup(String),
    /// A controller (`RunOptions::agent`) failed, or asked for a write that cannot be
    /// made: which, and why.
    #[error("{0}")]
    Agent(String),
    /// A reclaim plugin's hook failed (or proposed a folio not resident in its memcg):
    /// the hook and why.
    #[error("{0}")]
    Policy(String),
    /// The watcher (`RunOptions::watch`) asked to stop (Ctrl-C).
    #[error("stopped at {time_s:.3} s of virtual time ({phase})")]
    Stopped { time_s: f64, phase: String },
}

/// Where a run is: what `RunOptions::watch` is shown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Virtual time reached (ns): the earliest clock of the tasks still to run.
    pub now_ns: u64,
    /// The scenario's `duration` (ns), if it has one.
    pub end_ns: Option<u64>,
    /// The fraction of the run done (0.0..=1.0).
    pub fraction: f64,
    /// The running workloads and their phases (`memcached:populate, fio:run`),
    /// `starting` before any has started and `finishing` after all have ended.
    pub phase: String,
    /// Task steps run so far.
    pub steps: u64,
}

/// Steps between invariant checks under `check`.
const CHECK_EVERY: u64 = 4096;

/// With no `sample_interval`, the time series starts at this interval (100 µs) and
/// doubles whenever it reaches `2 * AUTO_SAMPLES` samples (`Engine::thin_samples`): a
/// run ends with 100 to 200 samples whatever its length (fewer if it lasts under 10 ms).
const AUTO_FIRST_INTERVAL_NS: u64 = 100_000;
const AUTO_SAMPLES: usize = 100;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    /// Not started (waiting for a start time or another workload).
    Waiting,
    Runnable,
    /// Parked at a phase barrier.
    Barrier,
    Done,
}

#[derive(Clone, Copy, Debug, Default)]
enum Kind {
    /// The writeback flusher (the wb's kworker, wb_workfn).
    #[default]
    Flusher,
    Thread {
        w: usize,
        t: usize,
    },
    Kswapd {
        node: usize,
    },
    /// A scenario `[[event]]`: one write to lru_gen, a memcg file or a sysctl.
    Event {
        e: usize,
    },
    /// A scenario `[[agent]]`: a user-space controller (`agent`).
    Agent {
        a: usize,
    },
    /// Benchmark client thread `t` of workload `w`, driving its workers (`clients`).
    Client {
        w: usize,
        t: usize,
    },
    /// The per-CPU workqueue's worker of `cpu` (kworker/N), running the work items
    /// queued there (`kernel::vmpressure`).
    Kworker {
        cpu: u32,
    },
}

#[derive(Default)]
struct Task {
    clock: u64,
    /// The CPU it runs on, or last ran on, or waits for.
    cpu: u32,
    /// Its allowed CPUs (`Engine::cpusets`): its workload's cpuset, or one CPU if pinned.
    cpuset: u32,
    kind: Kind,
    state: State,
    /// CPU time used, the CFS virtual runtime that orders tasks sharing a CPU.
    vruntime: u64,
    /// Waits in its CPU's queue (`cfs::Cpu::queue`), since `enqueued_at`.
    queued: bool,
    enqueued_at: u64,
    /// Virtual ns spent runnable in a queue, waiting for a CPU.
    wait_ns: u64,
    /// Moves to another CPU (at wake-up or pulled by an idle CPU).
    migrations: u64,
    /// Has run at least once: a new task is placed and given its vruntime differently.
    ran: bool,
    /// Took a CPU whose last task was another: the context switch is charged when it
    /// resumes.
    switch_due: bool,
    /// Woken by another task (`Engine::wake`): landing on an idle CPU costs
    /// `wakeup_latency`, charged when it resumes (`wake_latency`).
    wake_due: bool,
    wake_latency: bool,
    /// Virtual ns it ran.
    run_ns: u64,
    /// The CPUs it ran on, a bit each.
    ran_on: Vec<u64>,
    /// Inside a step (its coroutine suspended within it), on its CPU or sleeping.
    in_step: bool,
    /// Holds its CPU, since `ran_from`.
    on_cpu: bool,
    ran_from: u64,
    /// Its kernel context while another task runs.
    exec: crate::kernel::Exec,
    /// The touches of its current operation.
    touches: Vec<Touch>,
    /// A workload thread's start after its workload's (`machine.start_jitter`).
    start_offset: u64,
    /// The file and page of its last buffered read or write: the next one at the page
    /// after finds its lookup's lines warm (`fault::filemap_read`'s `cold`).
    last_io: Option<(u32, u64)>,
}

/// A task's CPU is taken until its step ends.
const CPU_RUNNING: u64 = u64::MAX;

/// Per workload phase measurements.
#[derive(Default)]
pub(crate) struct PhaseStats {
    pub(crate) ops: u64,
    pub(crate) bytes: u64,
    pub(crate) first_ns: Option<u64>,
    pub(crate) last_ns: u64,
    pub(crate) latency: Histogram,
}

pub(crate) struct Wl {
    pub(crate) name: String,
    gen: Box<dyn Workload>,
    memcg: MemcgId,
    /// Fixed CPU cost of one operation (request handling, I/O submission).
    op_cost: u64,
    /// First file id and first mm id of this workload in the kernel.
    file_base: u32,
    pub(crate) mms: Vec<u32>,
    /// Its `mems` as a nodemask (0: every node), the threads' `Exec::mems`.
    mems: u64,
    thread_mm: Vec<Option<u32>>,
    tasks: Vec<usize>,
    /// Its client tasks and their connections' batches, when simulated (`client_cpus`).
    clients: clients::Clients,
    /// Per worker: requests served since its last round trip.
    batch_ops: Vec<u32>,
    pub(crate) phases: Vec<String>,
    /// Barriers its threads have passed (a phase may span several: memtier's runs).
    barriers: usize,
    start_ns: u64,
    started: bool,
    done: bool,
    pub(crate) stats: Vec<PhaseStats>,
    cfg: WorkloadConfig,
}

/// Not `Unpin`, like `Kernel`: suspended tasks hold `&mut Engine` in their frames.
pub(crate) struct Engine {
    pub(crate) k: Kernel,
    pub(crate) p: Box<dyn Policy>,
    kswapd: Vec<Kswapd>,
    tasks: Vec<Task>,
    pub(crate) wls: Vec<Wl>,
    /// Per CPU, its run queue (`cfs`).
    cpus: Vec<cfs::Cpu>,
    /// The distinct cpusets of the tasks, each ascending (`Task::cpuset` indexes it).
    cpusets: Vec<Vec<u32>>,
    tunables: cfs::Tunables,
    /// The next scheduler tick at which a CPU with a task waiting kicks the idle CPUs
    /// to balance (`cfs`, nohz.next_balance).
    nohz_next: u64,
    end_ns: Option<u64>,
    /// Whether `end_ns` cut the run short (a task was still due at or after it).
    capped: bool,
    steps: u64,
    pub(crate) samples: Vec<Sample>,
    /// The time series' interval (ns): the scenario's `sample_interval`, or
    /// `AUTO_FIRST_INTERVAL_NS` doubled as the run goes on (`thin_samples`).
    sample_every: u64,
    /// No `sample_interval` given: keep between `AUTO_SAMPLES` and twice as many samples.
    sample_auto: bool,
    next_sample: u64,
    pub(crate) accesses: u64,
    /// The `[[event]]` writes (as a user would type them, and as the kernel runs them).
    events: Vec<(String, Write)>,
    pub(crate) event_results: Vec<EventResult>,
    /// The `[[agent]]`s, in the scenario's order.
    pub(crate) agents: Vec<agent::Agent>,
    /// Why an agent stopped the run (`SimError::Agent`), set in its step.
    failure: Option<String>,
    /// The workloads and `workload:phase`s that have finished (what `trigger` was given).
    finished: BTreeSet<String>,
    /// The flusher's task id.
    flusher: usize,
    /// When the flusher's last step ended.
    flusher_end: u64,
    _pin: std::marker::PhantomPinned,
}

type TaskCoroutine = Coroutine<(), Yield, ()>;

/// Runs one scenario (a variant already merged into it) to its end.
pub fn run(scenario: &Scenario, mut opts: RunOptions) -> Result<Finished, SimError> {
    let engine = Engine::new(scenario, opts.agent.take(), opts.plugin.take())?;
    let engine = Box::into_raw(Box::new(engine));
    // SAFETY: just made; no task runs yet.
    let nr_tasks = unsafe { (*engine).tasks.len() };
    let mut coros: Vec<TaskCoroutine> =
        (0..nr_tasks).map(|id| task_coroutine(engine, id)).collect();
    let ran = drive(engine, &mut coros, &mut opts);
    // Tasks still inside a step unwind before the engine they point to goes.
    drop(coros);
    // SAFETY: from Box::into_raw above, and no coroutine refers to it any more.
    let e = unsafe { Box::from_raw(engine) };
    ran?;
    if let Some((w, why)) = e
        .wls
        .iter()
        .find_map(|w| w.gen.failure().map(|f| (&w.name, f)))
    {
        return Err(SimError::Setup(format!("workload {w}: {why}")));
    }
    Ok(Finished(e))
}

/// A run that ended: the engine with every task done or stopped, for the results
/// layer (`crate::results`) to read its counters from.
pub struct Finished(pub(crate) Box<Engine>);

/// A task's coroutine: its steps one after another, each begun when the engine resumes
/// it with the CPU (`Engine::admit`).
fn task_coroutine(engine: *mut Engine, id: usize) -> TaskCoroutine {
    Coroutine::new(move |y: &TaskYielder, ()| loop {
        // SAFETY: the engine outlives every task's coroutine (`run` drops them first) and
        // only the running coroutine, or the engine between resumes, touches it.
        let e = unsafe { &mut *engine };
        e.k.sched.set_yielder(y);
        let clock = e.k.cur.clock;
        e.step(id, clock);
        e.k.sched.suspend(Yield::StepDone);
    })
}

/// Steps between calls of `RunOptions::watch`.
pub const WATCH_EVERY: u64 = 4096;

/// Resumes the task due earliest until none is left, the scenario's duration ends or
/// the watcher says stop.
fn drive(
    engine: *mut Engine,
    coros: &mut [TaskCoroutine],
    opts: &mut RunOptions,
) -> Result<(), SimError> {
    loop {
        // SAFETY: between resumes no task runs; see task_coroutine.
        let e = unsafe { &mut *engine };
        let Some((clock, id)) = e.k.sched.pop() else {
            break;
        };
        if e.end_ns.is_some_and(|end| clock >= end) {
            e.capped = true;
            break;
        }
        if !e.tasks[id].on_cpu && !e.admit(id, clock) {
            continue;
        }
        e.load_task(id, clock);
        let why = match coros[id].resume(()) {
            CoroutineResult::Yield(why) => why,
            CoroutineResult::Return(()) => unreachable!("a task's coroutine never returns"),
        };
        // SAFETY: as above; the task is suspended again.
        let e = unsafe { &mut *engine };
        e.k.sched.set_yielder(std::ptr::null());
        e.switched(id, why);
        e.wake_flusher();
        if why != Yield::StepDone {
            continue;
        }
        e.agent_failed()?;
        // Counted in steps; other tasks may be inside theirs, so the checks also see
        // the state between tasks' sync points.
        e.steps += 1;
        if opts.check && e.steps % CHECK_EVERY == 0 {
            e.check()?;
        }
        if e.steps % WATCH_EVERY == 0 {
            if let Some(w) = opts.watch.as_deref_mut() {
                let p = e.where_now();
                if !w(&p) {
                    return Err(SimError::Stopped {
                        time_s: p.now_ns as f64 / 1e9,
                        phase: p.phase,
                    });
                }
            }
        }
    }
    // SAFETY: as above.
    let e = unsafe { &mut *engine };
    if e.end_ns.is_none() {
        e.check_no_deadlock()?;
    }
    // Writes whose completion falls inside the run complete; a run the duration cut
    // short while its tasks slept is sampled up to its end.
    let end = e.end_ns.unwrap_or_else(|| e.now());
    if e.capped {
        e.take_samples(end);
    }
    crate::kernel::writeback::complete_until(&mut e.k, e.p.as_mut(), end);
    // The pressure files read at the end (psi_show).
    e.k.psi.show_all(end);
    if opts.check {
        e.check()?;
    }
    Ok(())
}

/// An event's result as the results show it: "ok", the errno name, or "ok" with what
/// the memcg OOM killer did.
fn outcome_text(r: Outcome) -> String {
    match r {
        Outcome::Ok => "ok".into(),
        Outcome::Err(errno) => errno.into(),
        Outcome::Oom { kills, no_victim } => {
            let plural = if kills == 1 { "" } else { "s" };
            let left = if no_victim {
                ", then no process left to kill"
            } else {
                ""
            };
            format!("ok (memcg OOM: {kills} kill{plural}{left})")
        }
    }
}

/// The id of `set` (made ascending) in `cpusets`, added if new.
fn cpuset_id(cpusets: &mut Vec<Vec<u32>>, mut set: Vec<u32>) -> u32 {
    set.sort_unstable();
    set.dedup();
    assert!(!set.is_empty(), "an empty cpuset");
    match cpusets.iter().position(|s| *s == set) {
        Some(i) => i as u32,
        None => {
            cpusets.push(set);
            (cpusets.len() - 1) as u32
        }
    }
}

/// A task allowed on `set`, not started, first placed on its first CPU. Every task's
/// first wake-up is placed as a new task's (find_idlest_cpu, START_DEBIT), kernel
/// threads' too, though the kernel's kswapd and flusher sleep from boot: a departure
/// limited to their first run.
fn new_task(cpusets: &mut Vec<Vec<u32>>, set: Vec<u32>, kind: Kind, state: State) -> Task {
    let cpuset = cpuset_id(cpusets, set);
    Task {
        cpu: cpusets[cpuset as usize][0],
        cpuset,
        kind,
        state,
        ..Default::default()
    }
}

impl Engine {
    /// An agent's failure (`Engine::failure`), once, as the run's error; or the
    /// policy's (a plugin's hook).
    fn agent_failed(&mut self) -> Result<(), SimError> {
        if let Some(why) = self.p.failure() {
            return Err(SimError::Policy(why));
        }
        self.failure
            .take()
            .map_or(Ok(()), |why| Err(SimError::Agent(why)))
    }

    fn schedule(&mut self, id: usize, clock: u64) {
        self.tasks[id].clock = clock;
        self.k.sched.push(id, clock);
    }

    /// `id` stops at `clock` with nothing queued: it runs again only when woken.
    fn sleep_at(&mut self, id: usize, clock: u64) {
        self.tasks[id].clock = clock;
        self.k.sched.cancel(id);
    }

    fn start_workload(&mut self, wi: usize, at: u64) {
        let w = &mut self.wls[wi];
        if w.started {
            return;
        }
        w.started = true;
        w.start_ns = at;
        for i in 0..w.tasks.len() {
            let id = self.wls[wi].tasks[i];
            self.tasks[id].state = State::Runnable;
            self.schedule(id, at + self.tasks[id].start_offset);
        }
    }

    /// What a real machine leaves to chance, drawn from the scenario's seed (the same
    /// seed, the same draws): each workload thread's start within `machine.start_jitter`
    /// (where its first run falls within a scheduler tick: fork, exec and the wake-up
    /// of a benchmark's threads do not land on the same ns) and the order in which tasks
    /// due at the same virtual time run (which CPU's wake-up or lock attempt comes first;
    /// a permutation of the tasks instead of their ids). `start_jitter = "0"` draws
    /// nothing: threads start together, ties by id.
    fn draw_phases(&mut self, s: &Scenario) {
        use rand::seq::SliceRandom;
        use rand::{Rng, SeedableRng};
        let jitter = s.machine.start_jitter_ns();
        if jitter == 0 {
            return;
        }
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(s.seed ^ 0x9E37_79B9_7F4A_7C15);
        for t in &mut self.tasks {
            t.start_offset = match t.kind {
                Kind::Thread { .. } => rng.gen_range(0..jitter),
                Kind::Flusher
                | Kind::Kswapd { .. }
                | Kind::Event { .. }
                | Kind::Agent { .. }
                | Kind::Client { .. }
                | Kind::Kworker { .. } => 0,
            };
        }
        // The kworkers come last and keep their ids as their places, so that the order
        // drawn for the other tasks does not depend on how many CPUs there are.
        let drawn = (self.tasks.iter())
            .take_while(|t| !matches!(t.kind, Kind::Kworker { .. }))
            .count();
        let mut order: Vec<u64> = (0..drawn as u64).collect();
        order.shuffle(&mut rng);
        self.k.sched.set_order(order);
    }

    /// Each task's psi group: a workload thread's process's memcg (its workload's when
    /// it has no process), the root for the kernel threads and the benchmark clients.
    fn psi_tasks(&mut self) {
        for id in 0..self.tasks.len() {
            let memcg = match self.tasks[id].kind {
                Kind::Thread { w, t } => (self.wls[w].thread_mm[t])
                    .map_or(self.wls[w].memcg, |m| self.k.mms[m as usize].memcg),
                _ => crate::kernel::memcg::ROOT,
            };
            let cpu = self.tasks[id].cpu;
            self.k.psi.add_task(id, memcg, cpu);
        }
    }

    /// The mm a task runs in, its CPU's place in mm_cpumask (`kernel::tlb`): a workload
    /// thread's process. Kernel threads run lazily in none; the benchmark clients',
    /// agents' and events' processes are not modelled as address spaces.
    fn task_mm(&self, id: usize) -> Option<u32> {
        match self.tasks[id].kind {
            Kind::Thread { w, t } => self.wls[w].thread_mm[t],
            Kind::Flusher
            | Kind::Kswapd { .. }
            | Kind::Event { .. }
            | Kind::Agent { .. }
            | Kind::Client { .. }
            | Kind::Kworker { .. } => None,
        }
    }

    /// Makes `id`, which holds its CPU from `clock`, the running task: its kernel context,
    /// the context switch and wake-up latency it owes (`cfs`).
    fn load_task(&mut self, id: usize, clock: u64) {
        self.k.cur = std::mem::take(&mut self.tasks[id].exec);
        self.k.cur.clock = clock;
        self.k.cur.cpu = self.tasks[id].cpu;
        if self.k.sched.current != id {
            self.p.switch_task(self.k.sched.current, id);
            self.k.sched.current = id;
        }
        if std::mem::take(&mut self.tasks[id].switch_due) {
            self.k.spend(self.k.costs.context_switch, Cat::Other);
        }
        if std::mem::take(&mut self.tasks[id].wake_latency) {
            // The IPI and the idle exit: time, not work.
            self.k.cur.clock += self.k.costs.wakeup_latency;
        }
        self.tasks[id].clock = self.k.cur.clock;
    }

    /// A task's coroutine handed back control.
    fn switched(&mut self, id: usize, why: Yield) {
        let end = self.k.cur.clock;
        match why {
            Yield::Sync | Yield::Block => {}
            Yield::Sleep(until) => {
                if until != sched::NEVER {
                    self.schedule(id, until);
                }
                self.off_cpu(id, end);
            }
            Yield::StepDone => {
                self.tasks[id].in_step = false;
                self.off_cpu(id, end);
            }
        }
        self.tasks[id].exec = std::mem::take(&mut self.k.cur);
    }

    /// One step of a task, on its CPU.
    fn step(&mut self, id: usize, clock: u64) {
        self.tasks[id].in_step = true;
        if let Kind::Agent { a } = self.tasks[id].kind {
            if self.agent_stops(id, a) {
                return;
            }
        }
        self.take_samples(clock);
        crate::kernel::writeback::complete_until(&mut self.k, self.p.as_mut(), clock);
        match self.tasks[id].kind {
            Kind::Kswapd { node } => self.kswapd_step(id, node, clock),
            Kind::Thread { w, t } => self.thread_step(id, w, t, clock),
            Kind::Event { e } => self.event_step(id, e, clock),
            Kind::Agent { a } => self.agent_step(id, a, clock),
            Kind::Flusher => self.flusher_step(id, clock),
            Kind::Client { w, t } => self.client_step(id, w, t, clock),
            Kind::Kworker { cpu } => self.kworker_step(id, cpu, clock),
        }
    }

    /// One kworker per CPU, pinned to it and asleep until a work item is queued there
    /// (`kernel::vmpressure`). Added after every other task (`draw_phases`).
    pub(super) fn add_kworkers(&mut self) {
        let mut ids = Vec::new();
        for cpu in 0..self.k.topology.nr_cpus() {
            ids.push(self.tasks.len());
            let kind = Kind::Kworker { cpu };
            let mut task = new_task(&mut self.cpusets, vec![cpu], kind, State::Waiting);
            // Created at boot and asleep since: a woken sleeper, not a new task
            // (no START_DEBIT at its first wake-up).
            task.ran = true;
            self.tasks.push(task);
        }
        self.k.vmpressure.set_kworkers(ids);
    }

    /// A kworker's step: the work queued on its CPU (worker_thread), then sleep.
    fn kworker_step(&mut self, id: usize, cpu: u32, clock: u64) {
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        crate::kernel::vmpressure::run_work(&mut self.k, cpu);
        let end = self.k.cur.clock;
        self.sleep_at(id, end);
    }

    /// The flusher task, sleeping until a page is dirtied: the wb's work item on an
    /// unbound workqueue, allowed on every CPU, or pinned to `kernel.flusher_cpu`.
    fn add_flusher(&mut self, s: &Scenario) {
        self.flusher = self.tasks.len();
        let set = match s.kernel.flusher_cpu {
            Some(cpu) => vec![cpu],
            None => (0..self.k.topology.nr_cpus()).collect(),
        };
        let task = new_task(&mut self.cpusets, set, Kind::Flusher, State::Waiting);
        self.tasks.push(task);
    }

    /// One step of the flusher (writeback::flusher_step). Once every workload is done
    /// and the scenario has no `duration`, it stops, so it does not keep the run alive.
    fn flusher_step(&mut self, id: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        if self.end_ns.is_none() && self.wls.iter().all(|w| w.done) {
            self.k.wb.park();
            self.k.sched.cancel(id);
            return;
        }
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let next = crate::kernel::writeback::flusher_step(&mut self.k, self.p.as_mut());
        let end = self.k.cur.clock;
        self.flusher_end = end;
        match next {
            crate::kernel::writeback::FlusherNext::Run => self.schedule(id, end),
            crate::kernel::writeback::FlusherNext::SleepUntil(t) => self.schedule(id, t.max(end)),
            crate::kernel::writeback::FlusherNext::Sleep => self.sleep_at(id, end),
        }
    }

    /// Runs the flusher when a wakeup (wb_wakeup) or its timer asked for it.
    fn wake_flusher(&mut self) {
        if let Some(t) = self.k.wb.take_pending() {
            let id = self.flusher;
            self.tasks[id].state = State::Runnable;
            self.schedule(id, t);
        }
    }

    fn kswapd_step(&mut self, id: usize, node: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        self.k.cur = crate::kernel::Exec::new(clock, cpu, true, None);
        if self.k.nodes[node].kswapd_wake {
            // wakeup_kswapd() queued it now.
            self.kswapd[node].wake(&mut self.k);
        }
        let next = match self.kswapd[node].state {
            KswapdState::Napping { until } if clock >= until => {
                self.kswapd[node].nap_over(&mut self.k)
            }
            KswapdState::Napping { until } => Next::NapUntil(until),
            KswapdState::Sleeping => Next::Sleep,
            KswapdState::Balancing { .. } => self.kswapd[node].step(&mut self.k, self.p.as_mut()),
        };
        let end = self.k.cur.clock;
        match next {
            Next::Run => self.schedule(id, end),
            Next::NapUntil(t) => self.schedule(id, t.max(end)),
            Next::Sleep => self.sleep_at(id, end),
        }
    }

    /// Runs an `[[event]]`: one write (`kernel::control`), by a task of its own.
    fn event_step(&mut self, id: usize, e: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let r = control::write(&mut self.k, self.p.as_mut(), &self.events[e].1);
        let end = self.k.cur.clock;
        self.event_results.push(EventResult {
            time_s: clock as f64 / 1e9,
            command: self.events[e].0.clone(),
            result: outcome_text(r),
        });
        let t = &mut self.tasks[id];
        t.state = State::Done;
        t.clock = end;
        self.k.sched.cancel(id);
    }

    fn thread_step(&mut self, id: usize, wi: usize, t: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        let mm = self.wls[wi].thread_mm[t];
        if mm.is_some_and(|m| self.k.mms[m as usize].dead) {
            self.thread_done(id, wi, clock);
            return;
        }
        let mut touches = std::mem::take(&mut self.tasks[id].touches);
        touches.clear();
        let rel = clock - self.wls[wi].start_ns;
        let step = self.wls[wi].gen.next(t, rel, &mut touches);
        if let Some(m) = mm {
            prefetch_ahead(&self.k, m, self.wls[wi].gen.as_ref(), t);
        }
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, mm);
        self.k.cur.mems = self.wls[wi].mems;
        match step {
            Step::Op { phase, bytes } => {
                self.accesses += touches
                    .iter()
                    .filter(|t| !matches!(t, Touch::Cpu { .. } | Touch::Unmap { .. }))
                    .count() as u64;
                if let Some(n) = self.wls[wi].batch_ops.get_mut(t) {
                    *n += 1;
                }
                let killed = self.run_touches(id, wi, mm, &touches).is_err();
                let end = self.k.cur.clock;
                let w = &mut self.wls[wi];
                if w.gen.measured(phase, rel) {
                    let s = &mut w.stats[phase as usize];
                    s.ops += 1;
                    s.bytes += bytes as u64;
                    s.first_ns.get_or_insert(clock);
                    s.last_ns = s.last_ns.max(end);
                    s.latency.record(end - clock);
                }
                if killed {
                    self.thread_done(id, wi, end);
                } else {
                    self.schedule(id, end);
                }
            }
            Step::RoundTrip { conn } => self.round_trip(id, wi, t, conn),
            Step::Idle => self.worker_idle(id, wi, t, clock),
            Step::Barrier => {
                self.tasks[id].state = State::Barrier;
                self.sleep_at(id, clock);
                self.maybe_release_barrier(wi);
            }
            Step::Sleep { until_ns } => {
                let at = self.wls[wi].start_ns + until_ns;
                self.schedule(id, at.max(clock));
            }
            Step::Done => self.thread_done(id, wi, clock),
        }
        self.tasks[id].touches = touches;
    }

    /// Runs task `id`'s operation's touches; an error when the task was killed.
    fn run_touches(
        &mut self,
        id: usize,
        wi: usize,
        mm: Option<u32>,
        touches: &[Touch],
    ) -> Result<(), fault::Killed> {
        let (k, p) = (&mut self.k, self.p.as_mut());
        let w = &self.wls[wi];
        let last_io = &mut self.tasks[id].last_io;
        // A read or write at the page after the task's last one is a sequential
        // stream's: its xarray slot, struct page and data lines are warm.
        let mut cold = |file: u32, index: u64| {
            let warm = last_io.is_some_and(|(f, i)| f == file && i + 1 == index);
            *last_io = Some((file, index));
            !warm
        };
        // A thread's reads are charged to its process's memcg (a trace's tenant).
        let memcg = mm.map_or(w.memcg, |m| k.mms[m as usize].memcg);
        k.spend(w.op_cost, Cat::Work);
        if let Some(m) = mm {
            prefetch_touches(k, m, touches);
        }
        for &touch in touches {
            match touch {
                Touch::Mem {
                    region,
                    page,
                    write,
                } => {
                    let m = mm.expect("a memory touch needs a process");
                    fault::access_page(k, p, m, region as usize, page, write)?
                }
                Touch::Read { file, index } => {
                    let file = w.file_base + file;
                    fault::filemap_read(k, p, memcg, file, index, cold(file, index))?
                }
                Touch::Write { file, index } => {
                    let file = w.file_base + file;
                    fault::generic_perform_write(k, p, memcg, file, index, cold(file, index))?
                }
                Touch::Unmap { region } => {
                    fault::zap_vma(k, p, mm.expect("unmap needs a process"), region as usize)
                }
                Touch::Cpu { ns } => k.spend(ns, Cat::Work),
            }
        }
        Ok(())
    }

    fn maybe_release_barrier(&mut self, wi: usize) {
        let w = &self.wls[wi];
        let waiting = w
            .tasks
            .iter()
            .all(|&id| matches!(self.tasks[id].state, State::Barrier | State::Done));
        if !waiting {
            return;
        }
        let at = w
            .tasks
            .iter()
            .map(|&id| self.tasks[id].clock)
            .max()
            .unwrap_or(0);
        let (phase, next) = (
            w.gen.phase_after(w.barriers),
            w.gen.phase_after(w.barriers + 1),
        );
        // A generator may also stop at a barrier after its last phase (memtier's runs).
        let name = w.phases.get(phase).map_or("", String::as_str);
        let finished_phase = format!("{}:{name}", w.name);
        // The phase has finished; the next may wait for another workload (or phase).
        let wait = (w.gen.waits_for(next)).filter(|_| next != phase);
        if wait.is_some_and(|what| !self.finished.contains(what)) {
            if !self.finished.contains(&finished_phase) {
                self.trigger(&finished_phase, at);
            }
            return;
        }
        self.wls[wi].barriers += 1;
        for i in 0..self.wls[wi].tasks.len() {
            let id = self.wls[wi].tasks[i];
            if self.tasks[id].state == State::Barrier {
                self.tasks[id].state = State::Runnable;
                self.schedule(id, at);
            }
        }
        if next != phase && !self.finished.contains(&finished_phase) {
            self.trigger(&finished_phase, at);
        }
    }

    fn thread_done(&mut self, id: usize, wi: usize, clock: u64) {
        self.tasks[id].state = State::Done;
        self.tasks[id].clock = clock;
        // A thread stopped inside a step finishes it (it may hold a lock or isolated
        // folios) and then runs no more. One stopped while it waited in a CPU's queue
        // leaves it, so that the CPU picks another (it may have been the CPU's next).
        if !self.tasks[id].in_step {
            if self.tasks[id].queued && !self.tasks[id].on_cpu {
                self.drop_waiting(id, clock);
            }
            self.k.sched.cancel(id);
        }
        let w = &self.wls[wi];
        if w.done || !w.tasks.iter().all(|&t| self.tasks[t].state == State::Done) {
            // Others may be waiting at a barrier for this one.
            if !w.done
                && w.tasks
                    .iter()
                    .any(|&t| self.tasks[t].state == State::Barrier)
            {
                self.maybe_release_barrier(wi);
            }
            return;
        }
        self.wls[wi].done = true;
        let name = self.wls[wi].name.clone();
        let last_phase = format!(
            "{}:{}",
            name,
            self.wls[wi].phases.last().cloned().unwrap_or_default()
        );
        self.trigger(&name, clock);
        self.trigger(&last_phase, clock);
    }

    /// A workload (or `workload:phase`) finished at `at`: start those waiting on it and
    /// stop those running `until` it.
    fn trigger(&mut self, what: &str, at: u64) {
        self.finished.insert(what.to_string());
        for wi in 0..self.wls.len() {
            let w = &self.wls[wi];
            let next = w.gen.phase_after(w.barriers + 1);
            if next != w.gen.phase_after(w.barriers) && w.gen.waits_for(next) == Some(what) {
                // Threads parked at the barrier resume no earlier than now.
                let parked: Vec<usize> = (w.tasks.iter().copied())
                    .filter(|&id| self.tasks[id].state == State::Barrier)
                    .collect();
                for &id in &parked {
                    self.tasks[id].clock = self.tasks[id].clock.max(at);
                }
                if !parked.is_empty() {
                    self.maybe_release_barrier(wi);
                }
            }
            let cfg = &self.wls[wi].cfg;
            if cfg.after.as_deref() == Some(what) {
                let t = at + cfg.start.0;
                self.start_workload(wi, t);
            }
            if self.wls[wi].cfg.until.as_deref() == Some(what) && !self.wls[wi].done {
                for i in 0..self.wls[wi].tasks.len() {
                    let id = self.wls[wi].tasks[i];
                    if self.tasks[id].state != State::Done {
                        self.thread_done(id, wi, at.max(self.tasks[id].clock));
                    }
                }
                self.wls[wi].started = true;
            }
        }
    }

    /// With nothing left to run, no task may still be inside a step, or be a CPU's
    /// chosen next (waiting for its turn on that CPU): one waiting for a lock, a
    /// wake-up or a CPU that never comes is a bug of the model.
    fn check_no_deadlock(&self) -> Result<(), SimError> {
        let lost = |id: usize| self.cpus.iter().any(|c| c.next == Some(id));
        let stuck: Vec<String> = (0..self.tasks.len())
            .filter(|&id| self.tasks[id].in_step || lost(id))
            .map(|id| {
                let owns: Vec<&str> = (self.k.all_locks())
                    .filter(|(_, l)| l.owner == Some(id))
                    .map(|(name, _)| name)
                    .collect();
                let waits: Vec<&str> = (self.k.all_locks())
                    .filter(|(_, l)| l.waiters.contains(&id))
                    .map(|(name, _)| name)
                    .collect();
                format!(
                    "task {id} ({:?}) holds {owns:?}, waits for {waits:?}",
                    self.tasks[id].kind
                )
            })
            .collect();
        if stuck.is_empty() {
            return Ok(());
        }
        Err(SimError::Invariant {
            time_s: self.now() as f64 / 1e9,
            what: format!(
                "tasks stuck inside a step or waiting for a CPU: {}",
                stuck.join("; ")
            ),
        })
    }

    fn check(&self) -> Result<(), SimError> {
        let checked = if self.tasks.iter().any(|t| t.in_step) {
            check::check_running(&self.k, self.p.as_ref())
        } else {
            check::check(&self.k, self.p.as_ref())
        };
        checked.map_err(|what| SimError::Invariant {
            time_s: self.now() as f64 / 1e9,
            what,
        })
    }

    /// Where the run ended: its `duration` when that cut it short (tasks asleep past
    /// it included), else the last task's clock (`now`).
    pub(crate) fn run_end(&self) -> u64 {
        match self.end_ns {
            Some(end) if self.capped => end,
            _ => self.now(),
        }
    }

    pub(crate) fn now(&self) -> u64 {
        // The flusher's clock may be a timer that never fired: count its last work.
        let others = self
            .tasks
            .iter()
            .enumerate()
            .filter(|&(id, _)| id != self.flusher)
            .map(|(_, t)| t.clock);
        others.chain([self.flusher_end]).max().unwrap_or(0)
    }
}
