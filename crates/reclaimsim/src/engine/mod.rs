//! The virtual-time engine. Simulated CPUs run tasks (workload threads and one kswapd
//! per node); the engine always runs the runnable task with the earliest virtual clock
//! (ties by task id), so a run is deterministic. A step of a workload thread is one
//! operation (its touches turned into PTE hits, faults, reads and reclaim); a step of
//! kswapd is one balance_pgdat priority iteration. Every action's cost advances the
//! running task's clock; a CPU runs one task at a time.

pub mod check;
pub mod cost;
pub mod lock;

use crate::kernel::fault;
use crate::kernel::folio::lru;
use crate::kernel::kswapd::{Kswapd, KswapdState, Next};
use crate::kernel::lru::classic::Classic;
use crate::kernel::lru::mglru::{debugfs, debugfs::LruGenCmd, Mglru};
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::mm::{Mm, VmaKind};
use crate::kernel::pagecache::File;
use crate::kernel::stats::{Cat, Histogram, CAT_NAMES, VM_NAMES};
use crate::kernel::Kernel;
use crate::output::results::*;
use crate::scenario::config::{PolicyKind, Scenario, WorkloadConfig};
use crate::workload::{RegionSpec, Step, Touch, Workload, WorkloadOptions};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// How to run one variant.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Run the invariant checker (the model's CONFIG_DEBUG_VM) every few thousand steps
    /// and at the end.
    pub check: bool,
    /// Called now and then with the fraction of the run done (0.0..=1.0).
    pub progress: Option<&'a mut dyn FnMut(f64)>,
}

/// A failure while running (an invariant violation found by `--check`, or a workload that
/// cannot be set up).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invariant violated at {time_s:.6} s: {what}")]
    Invariant { time_s: f64, what: String },
    #[error("{0}")]
    Setup(String),
}

/// Steps between invariant checks under `check`.
const CHECK_EVERY: u64 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not started (waiting for a start time or another workload).
    Waiting,
    Runnable,
    /// Parked at a phase barrier.
    Barrier,
    Done,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Thread {
        w: usize,
        t: usize,
    },
    Kswapd {
        node: usize,
    },
    /// A scenario `[[event]]`: one write to lru_gen.
    Event {
        e: usize,
    },
    /// The writeback flusher (the wb's kworker, wb_workfn).
    Flusher,
}

struct Task {
    clock: u64,
    cpu: u32,
    kind: Kind,
    state: State,
    /// Bumped when the task is rescheduled, so stale heap entries can be skipped.
    gen: u64,
    /// CPU time used, the CFS virtual runtime that orders tasks sharing a CPU.
    vruntime: u64,
    /// The gen of the task's pending heap entry (u64::MAX once it has run): the entry is
    /// live while this equals `gen`.
    live_gen: u64,
}

/// Per workload phase measurements.
#[derive(Default)]
struct PhaseStats {
    ops: u64,
    bytes: u64,
    first_ns: Option<u64>,
    last_ns: u64,
    latency: Histogram,
}

struct Wl {
    name: String,
    gen: Box<dyn Workload>,
    memcg: MemcgId,
    /// Fixed CPU cost of one operation (request handling, I/O submission).
    op_cost: u64,
    /// First file id and first mm id of this workload in the kernel.
    file_base: u32,
    mms: Vec<u32>,
    thread_mm: Vec<Option<u32>>,
    tasks: Vec<usize>,
    phases: Vec<String>,
    phase: usize,
    start_ns: u64,
    started: bool,
    done: bool,
    stats: Vec<PhaseStats>,
    cfg: WorkloadConfig,
}

struct Engine {
    k: Kernel,
    p: Box<dyn Policy>,
    kswapd: Vec<Kswapd>,
    tasks: Vec<Task>,
    wls: Vec<Wl>,
    heap: BinaryHeap<Reverse<(u64, usize, u64)>>,
    cpu_free: Vec<u64>,
    end_ns: Option<u64>,
    steps: u64,
    samples: Vec<Sample>,
    sample_every: Option<u64>,
    next_sample: u64,
    touches: Vec<Touch>,
    accesses: u64,
    /// The `[[event]]` commands (as written, parsed) and how they ended.
    events: Vec<(String, Vec<LruGenCmd>)>,
    event_results: Vec<EventResult>,
    /// The flusher's task id.
    flusher: usize,
    /// Operations of threads blocked on writeback, by task id, to resume.
    resume: BTreeMap<usize, Resume>,
    /// Per CPU, the tasks waiting for it in arrival order: a CPU shared by several
    /// tasks runs their steps round-robin.
    cpu_queue: Vec<Vec<usize>>,
    /// Per CPU: the CFS min_vruntime, the least CPU time a queued task may start from.
    min_vruntime: Vec<u64>,
    /// When the flusher's last step ended.
    flusher_end: u64,
}

/// The rest of an operation that blocked (reclaim throttled on writeback): its
/// touches from the one that blocked, and its accounting.
struct Resume {
    touches: Vec<Touch>,
    phase: u8,
    bytes: u32,
    start: u64,
    rel: u64,
}

/// Run one scenario (a variant already merged into it) and collect its results.
pub fn run(
    scenario: &Scenario,
    variant: &str,
    mut opts: RunOptions,
) -> Result<VariantResult, SimError> {
    let wall = std::time::Instant::now();
    let mut e = Engine::new(scenario)?;
    let mut last_progress = 0.0;
    while let Some(Reverse((clock, id, gen))) = e.heap.pop() {
        if gen != e.tasks[id].gen {
            continue;
        }
        e.tasks[id].live_gen = u64::MAX;
        if e.end_ns.is_some_and(|end| clock >= end) {
            break;
        }
        e.step(id, clock);
        e.steps += 1;
        if opts.check && e.steps % CHECK_EVERY == 0 {
            e.check()?;
        }
        if e.steps % 1024 == 0 {
            e.prune_locks();
            if let Some(f) = opts.progress.as_deref_mut() {
                let frac = e.progress();
                if frac - last_progress >= 0.01 {
                    last_progress = frac;
                    f(frac);
                }
            }
        }
    }
    // Writes whose completion falls inside the run complete.
    let end = e.end_ns.unwrap_or_else(|| e.now());
    crate::kernel::writeback::complete_until(&mut e.k, e.p.as_mut(), end);
    if opts.check {
        e.check()?;
    }
    if let Some(f) = opts.progress.as_deref_mut() {
        f(1.0);
    }
    let mut r = e.results(variant);
    r.wall_s = wall.elapsed().as_secs_f64();
    Ok(r)
}

/// Host bytes a scenario will need, for refusing machines larger than this host: the
/// frame arena and swap-slot map (28 B/frame, plus 1 B for MGLRU's list bookkeeping),
/// the swap map (14 B/slot), page tables (4 B per mapped page), page-cache slots
/// (8 B/page) and MGLRU's Bloom filters (8 KiB per lruvec).
pub fn estimate_host_bytes(scenario: &Scenario) -> u64 {
    let frames = scenario.machine.memory.pages();
    let swap = scenario.machine.swap.as_ref().map_or(0, |s| s.size.pages());
    let lruvecs = (scenario.memcgs.len() as u64 + 1) * scenario.machine.nodes as u64;
    let mut virt = 0u64;
    for w in &scenario.workloads {
        if let Ok(Ok(g)) = w.options().map(|o| o.build(scenario.seed)) {
            let l = g.layout();
            virt += l.files.iter().map(|f| f.pages * 8).sum::<u64>();
            for r in l.processes.iter().flat_map(|p| &p.regions) {
                virt += 4 * match *r {
                    RegionSpec::Anon { pages } => pages,
                    RegionSpec::File { file } => l.files[file].pages,
                };
            }
        }
    }
    frames * 29 + swap * 14 + lruvecs * 8192 + virt
}

impl Engine {
    fn new(s: &Scenario) -> Result<Self, SimError> {
        let mut k = Kernel::new(s);
        let p: Box<dyn Policy> = match s.kernel.policy {
            PolicyKind::Classic => Box::new(Classic::new(&k)),
            PolicyKind::Mglru => Box::new(Mglru::with_seed(&k, s.seed)),
        };
        let cpus = s.machine.cpus.max(1);
        let mut tasks = Vec::new();
        let mut kswapd = Vec::new();
        for node in 0..k.nr_nodes() {
            let cpu = match &s.kernel.kswapd_cpu {
                Some(v) => v[node],
                None => {
                    // The node's last CPU.
                    (0..cpus)
                        .rev()
                        .find(|&c| k.cpu_node[c as usize] as usize == node)
                        .unwrap_or(cpus - 1)
                }
            };
            tasks.push(Task {
                clock: 0,
                cpu,
                kind: Kind::Kswapd { node },
                state: State::Waiting,
                gen: 0,
                vruntime: 0,
                live_gen: u64::MAX,
            });
            kswapd.push(Kswapd::new(node));
        }
        let mut wls = Vec::new();
        for (wi, wc) in s.workloads.iter().enumerate() {
            let opts = wc
                .options()
                .map_err(|e| SimError::Setup(format!("workload {}: {e}", wc.name)))?;
            let seed = s.seed ^ (0x5851_F42D_4C95_7F2D_u64.wrapping_mul(wi as u64 + 1));
            let gen = opts
                .build(seed)
                .map_err(|e| SimError::Setup(format!("workload {}: {e}", wc.name)))?;
            let op_cost = match opts {
                WorkloadOptions::Fio(_) => s.costs.fio_io,
                WorkloadOptions::Memcached(_) => s.costs.memcached_request,
                _ => 0,
            };
            let memcg = k.memcgs.by_path(&wc.memcg).ok_or_else(|| {
                SimError::Setup(format!("workload {}: no memcg {}", wc.name, wc.memcg))
            })?;
            let layout = gen.layout();
            let file_base = k.files.len() as u32;
            for f in &layout.files {
                k.files.push(File::new(f.pages, f.sparse));
            }
            let mut mms = Vec::new();
            for proc_ in &layout.processes {
                let id = k.mms.len() as u32;
                let mut mm = Mm {
                    memcg,
                    ..Default::default()
                };
                for r in &proc_.regions {
                    let v = match *r {
                        RegionSpec::Anon { pages } => mm.add_vma(pages, VmaKind::Anon),
                        RegionSpec::File { file } => {
                            let fid = file_base + file as u32;
                            let pages = k.files[fid as usize].pages;
                            let v = mm.add_vma(pages, VmaKind::File { file: fid });
                            k.files[fid as usize].mappings.push((id, v as u32));
                            v
                        }
                    };
                    debug_assert_eq!(v, mm.vmas.len() - 1);
                }
                k.mms.push(mm);
                mms.push(id);
            }
            let cpu_list: Vec<u32> = wc.cpus.clone().unwrap_or_else(|| (0..cpus).collect());
            let mut tids = Vec::new();
            for t in 0..layout.threads() {
                tids.push(tasks.len());
                tasks.push(Task {
                    clock: 0,
                    cpu: cpu_list[t % cpu_list.len()],
                    kind: Kind::Thread { w: wi, t },
                    state: State::Waiting,
                    gen: 0,
                    vruntime: 0,
                    live_gen: u64::MAX,
                });
            }
            let phases = gen.phases();
            wls.push(Wl {
                name: wc.name.clone(),
                thread_mm: layout
                    .thread_process
                    .iter()
                    .map(|p| p.map(|i| mms[i]))
                    .collect(),
                gen,
                memcg,
                op_cost,
                file_base,
                mms,
                tasks: tids,
                stats: phases.iter().map(|_| PhaseStats::default()).collect(),
                phases,
                phase: 0,
                start_ns: 0,
                started: false,
                done: false,
                cfg: wc.clone(),
            });
        }
        let mut events = Vec::new();
        for (i, ev) in s.events.iter().enumerate() {
            let cmds = debugfs::parse_commands(&ev.command)
                .map_err(|e| SimError::Setup(format!("event[{i}].command: {e}")))?;
            // kswapd tasks are the first ids, one per node.
            let node = (cmds[0].node as usize).min(k.nr_nodes() - 1);
            tasks.push(Task {
                clock: ev.at.0,
                cpu: ev.cpu.unwrap_or(tasks[node].cpu),
                kind: Kind::Event { e: i },
                state: State::Runnable,
                gen: 0,
                vruntime: 0,
                live_gen: u64::MAX,
            });
            events.push((ev.command.clone(), cmds));
        }
        let sample_every = s.sample_interval.map(|d| d.0.max(1));
        let mut e = Engine {
            k,
            p,
            kswapd,
            tasks,
            wls,
            heap: BinaryHeap::new(),
            cpu_free: vec![0; cpus as usize],
            end_ns: s.duration.map(|d| d.0),
            steps: 0,
            samples: Vec::new(),
            sample_every,
            next_sample: 0,
            touches: Vec::new(),
            accesses: 0,
            events,
            event_results: Vec::new(),
            flusher: usize::MAX,
            resume: BTreeMap::new(),
            cpu_queue: vec![Vec::new(); cpus as usize],
            min_vruntime: vec![0; cpus as usize],
            flusher_end: 0,
        };
        e.add_flusher(s);
        for id in 0..e.tasks.len() {
            if let Kind::Event { .. } = e.tasks[id].kind {
                let at = e.tasks[id].clock;
                e.schedule(id, at);
            }
        }
        for wi in 0..e.wls.len() {
            if e.wls[wi].cfg.after.is_none() {
                let t = e.wls[wi].cfg.start.0;
                e.start_workload(wi, t);
            }
        }
        Ok(e)
    }

    fn schedule(&mut self, id: usize, clock: u64) {
        let t = &mut self.tasks[id];
        t.clock = clock;
        t.gen += 1;
        t.live_gen = t.gen;
        self.heap.push(Reverse((clock, id, t.gen)));
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
            self.schedule(id, at);
        }
    }

    fn step(&mut self, id: usize, clock: u64) {
        let cpu = self.tasks[id].cpu as usize;
        // A thread stopped or parked while it waited in its CPU's queue does not run.
        if matches!(self.tasks[id].kind, Kind::Thread { .. })
            && self.tasks[id].state != State::Runnable
        {
            self.cpu_queue[cpu].retain(|&t| t != id);
            if !self.cpu_queue[cpu].is_empty() {
                let next = self.pick_next(cpu);
                let t = self.cpu_free[cpu].max(clock);
                self.schedule(next, t);
            }
            return;
        }
        // A CPU runs one task at a time. Tasks waiting for it run in order of the CPU
        // time they have used, as CFS picks the smallest vruntime (ties by id); a task
        // joining the queue starts no lower than the CPU's min_vruntime (place_entity).
        let floor = self.min_vruntime[cpu];
        let t = &mut self.tasks[id];
        t.vruntime = t.vruntime.max(floor);
        let busy = self.cpu_free[cpu] > clock;
        if busy || !self.cpu_queue[cpu].is_empty() {
            if !self.cpu_queue[cpu].contains(&id) {
                self.cpu_queue[cpu].push(id);
            }
            let best = self.pick_next(cpu);
            if best != id || busy {
                self.tasks[id].gen += 1;
                let t = self.cpu_free[cpu].max(clock);
                self.schedule(best, t);
                return;
            }
            self.cpu_queue[cpu].retain(|&t| t != id);
        }
        self.take_samples(clock);
        crate::kernel::writeback::complete_until(&mut self.k, self.p.as_mut(), clock);
        match self.tasks[id].kind {
            Kind::Kswapd { node } => self.kswapd_step(id, node, clock),
            Kind::Thread { w, t } => self.thread_step(id, w, t, clock),
            Kind::Event { e } => self.event_step(id, e, clock),
            Kind::Flusher => self.flusher_step(id, clock),
        }
        self.wake_kswapds(clock);
        self.wake_flusher();
        let free = self.cpu_free[cpu].max(clock);
        let t = &mut self.tasks[id];
        t.vruntime += free - clock;
        // When this step ends, the task (if it runs on at once) and those waiting for
        // the CPU compete: the least vruntime goes next.
        let continuing = t.live_gen == t.gen && t.clock <= free;
        if continuing {
            self.cpu_queue[cpu].push(id);
        }
        if !self.cpu_queue[cpu].is_empty() {
            let next = self.pick_next(cpu);
            self.min_vruntime[cpu] = self.min_vruntime[cpu].max(self.tasks[next].vruntime);
            if next == id {
                self.cpu_queue[cpu].retain(|&t| t != id);
            } else {
                if continuing {
                    self.tasks[id].gen += 1;
                }
                self.schedule(next, free);
            }
        } else {
            self.min_vruntime[cpu] = self.min_vruntime[cpu].max(self.tasks[id].vruntime);
        }
    }

    /// The waiting task with the least CPU time (pick_next_entity), ties by id.
    fn pick_next(&self, cpu: usize) -> usize {
        *self.cpu_queue[cpu]
            .iter()
            .min_by_key(|&&t| (self.tasks[t].vruntime, t))
            .expect("queue not empty")
    }

    /// The flusher task, sleeping until a page is dirtied (it runs on
    /// `kernel.flusher_cpu`, default CPU 0).
    fn add_flusher(&mut self, s: &Scenario) {
        self.flusher = self.tasks.len();
        self.tasks.push(Task {
            clock: 0,
            cpu: s.kernel.flusher_cpu.unwrap_or(0),
            kind: Kind::Flusher,
            state: State::Waiting,
            gen: 0,
            vruntime: 0,
            live_gen: u64::MAX,
        });
    }

    /// One step of the flusher (writeback::flusher_step). Once every workload is done
    /// and the scenario has no `duration`, it stops, so it does not keep the run alive.
    fn flusher_step(&mut self, id: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        if self.end_ns.is_none() && self.wls.iter().all(|w| w.done) {
            self.k.wb.park();
            self.tasks[id].gen += 1;
            return;
        }
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let next = crate::kernel::writeback::flusher_step(&mut self.k, self.p.as_mut());
        let end = self.k.cur.clock;
        self.cpu_free[cpu as usize] = end;
        self.flusher_end = end;
        match next {
            crate::kernel::writeback::FlusherNext::Run => self.schedule(id, end),
            crate::kernel::writeback::FlusherNext::SleepUntil(t) => self.schedule(id, t.max(end)),
            crate::kernel::writeback::FlusherNext::Sleep => {
                self.tasks[id].clock = end;
                self.tasks[id].gen += 1;
            }
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
        let next = match self.kswapd[node].state {
            KswapdState::Napping { until } if clock >= until => {
                self.kswapd[node].nap_over(&mut self.k)
            }
            KswapdState::Napping { until } => Next::NapUntil(until),
            KswapdState::Sleeping => Next::Sleep,
            KswapdState::Balancing { .. } => self.kswapd[node].step(&mut self.k, self.p.as_mut()),
        };
        let end = self.k.cur.clock;
        self.cpu_free[cpu as usize] = end;
        match next {
            Next::Run => self.schedule(id, end),
            Next::NapUntil(t) => self.schedule(id, t.max(end)),
            Next::Sleep => {
                self.tasks[id].clock = end;
                self.tasks[id].gen += 1;
            }
        }
    }

    /// Runs an `[[event]]`: its commands are one write to /sys/kernel/debug/lru_gen.
    fn event_step(&mut self, id: usize, e: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let r = self.p.lru_gen_write(&mut self.k, &self.events[e].1);
        let end = self.k.cur.clock;
        self.cpu_free[cpu as usize] = end;
        self.event_results.push(EventResult {
            time_s: clock as f64 / 1e9,
            command: self.events[e].0.clone(),
            result: r.err().unwrap_or("ok").to_string(),
        });
        let t = &mut self.tasks[id];
        t.state = State::Done;
        t.clock = end;
        t.gen += 1;
    }

    /// Per memcg path, the MGLRU state of its lruvec on each node, if the policy has one.
    fn lru_gen_states(&self, now: u64) -> BTreeMap<String, Vec<LruGenState>> {
        let mut out = BTreeMap::new();
        for (m, cg) in self.k.memcgs.cgs.iter().enumerate() {
            let states: Vec<LruGenState> = (0..self.k.nr_nodes())
                .filter_map(|n| {
                    let lv = self.k.lruvec(m as MemcgId, n);
                    self.p.lru_gen_state(&self.k, lv, now)
                })
                .collect();
            if !states.is_empty() {
                out.insert(cg.path.clone(), states);
            }
        }
        out
    }

    /// Wakes the kswapd of every node an allocation asked for (wakeup_kswapd).
    fn wake_kswapds(&mut self, clock: u64) {
        for node in 0..self.k.nr_nodes() {
            if !self.k.nodes[node].kswapd_wake {
                continue;
            }
            self.k.nodes[node].kswapd_wake = false;
            if matches!(self.kswapd[node].state, KswapdState::Balancing { .. }) {
                continue;
            }
            // kswapd tasks are the first ids, one per node. A napping kswapd's clock is
            // its nap's end; the wakeup happens now.
            let id = node;
            let at = clock;
            self.k.cur.clock = at;
            self.kswapd[node].wake(&mut self.k);
            self.schedule(id, at);
        }
    }

    fn thread_step(&mut self, id: usize, wi: usize, t: usize, clock: u64) {
        let cpu = self.tasks[id].cpu;
        let mm = self.wls[wi].thread_mm[t];
        if mm.is_some_and(|m| self.k.mms[m as usize].dead) {
            self.thread_done(id, wi, clock);
            return;
        }
        let mut touches = std::mem::take(&mut self.touches);
        touches.clear();
        // An operation that blocked on writeback resumes at the touch that blocked.
        let (step, op_start, rel, resumed) = match self.resume.remove(&id) {
            Some(r) => {
                touches.extend_from_slice(&r.touches);
                let step = Step::Op {
                    phase: r.phase,
                    bytes: r.bytes,
                };
                (step, r.start, r.rel, true)
            }
            None => {
                let rel = clock - self.wls[wi].start_ns;
                (
                    self.wls[wi].gen.next(t, rel, &mut touches),
                    clock,
                    rel,
                    false,
                )
            }
        };
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, mm);
        match step {
            Step::Op { phase, bytes } => {
                if !resumed {
                    self.accesses += touches
                        .iter()
                        .filter(|t| !matches!(t, Touch::Cpu { .. } | Touch::Unmap { .. }))
                        .count() as u64;
                }
                let res = self.run_touches(wi, mm, &touches, !resumed);
                let end = self.k.cur.clock;
                self.cpu_free[cpu as usize] = end;
                if let (Err(i), Some(until)) = (res, self.k.cur.blocked_until) {
                    self.resume.insert(
                        id,
                        Resume {
                            touches: touches[i..].to_vec(),
                            phase,
                            bytes,
                            start: op_start,
                            rel,
                        },
                    );
                    self.schedule(id, until.max(end));
                    self.touches = touches;
                    return;
                }
                let killed = res.is_err();
                // balance_dirty_pages() may pause the task after its work, off the CPU.
                let done = end + self.k.cur.sleep;
                let w = &mut self.wls[wi];
                if w.gen.measured(phase, rel) {
                    let s = &mut w.stats[phase as usize];
                    s.ops += 1;
                    s.bytes += bytes as u64;
                    s.first_ns.get_or_insert(op_start);
                    s.last_ns = s.last_ns.max(done);
                    s.latency.record(done - op_start);
                }
                if killed {
                    self.thread_done(id, wi, end);
                } else {
                    self.schedule(id, done);
                }
            }
            Step::Barrier => {
                self.tasks[id].state = State::Barrier;
                self.tasks[id].clock = clock;
                self.tasks[id].gen += 1;
                self.maybe_release_barrier(wi);
            }
            Step::Sleep { until_ns } => {
                let at = self.wls[wi].start_ns + until_ns;
                self.schedule(id, at.max(clock));
            }
            Step::Done => self.thread_done(id, wi, clock),
        }
        self.touches = touches;
    }

    /// Runs an operation's touches; `Err(i)` when touch `i` failed (the task was killed,
    /// or it blocked and will retry from touch `i`).
    fn run_touches(
        &mut self,
        wi: usize,
        mm: Option<u32>,
        touches: &[Touch],
        first: bool,
    ) -> Result<(), usize> {
        let (k, p) = (&mut self.k, self.p.as_mut());
        let w = &self.wls[wi];
        if first {
            k.spend(w.op_cost, Cat::Other);
        }
        for (i, &touch) in touches.iter().enumerate() {
            match touch {
                Touch::Mem {
                    region,
                    page,
                    write,
                } => {
                    let m = mm.expect("a memory touch needs a process");
                    let vma = &mut k.mms[m as usize].vmas[region as usize];
                    let pte = &mut vma.ptes[page as usize];
                    if pte.pfn().is_some() {
                        if write && !pte.dirty() && matches!(vma.kind, VmaKind::File { .. }) {
                            // A clean shared file PTE is write-protected (folio_mkclean).
                            let vpn = vma.start + page;
                            fault::do_wp_page(k, m, vpn);
                            continue;
                        }
                        // The hardware sets the accessed (and dirty) bit.
                        pte.mkyoung();
                        if write {
                            pte.mkdirty();
                        }
                        k.spend(k.costs.access_hit, Cat::Other);
                    } else if pte.is_zero() && !write {
                        k.spend(k.costs.access_hit, Cat::Other);
                    } else {
                        let vpn = vma.start + page;
                        fault::handle_mm_fault(k, p, m, vpn, write).map_err(|_| i)?;
                    }
                }
                Touch::Read { file, index } => {
                    fault::filemap_read(k, p, w.memcg, w.file_base + file, index).map_err(|_| i)?
                }
                Touch::Unmap { region } => {
                    fault::zap_vma(k, p, mm.expect("unmap needs a process"), region as usize)
                }
                Touch::Cpu { ns } => k.spend(ns, Cat::Other),
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
        let finished_phase = format!(
            "{}:{}",
            w.name,
            w.phases.get(w.phase).cloned().unwrap_or_default()
        );
        self.wls[wi].phase += 1;
        for i in 0..self.wls[wi].tasks.len() {
            let id = self.wls[wi].tasks[i];
            if self.tasks[id].state == State::Barrier {
                self.tasks[id].state = State::Runnable;
                self.schedule(id, at);
            }
        }
        self.trigger(&finished_phase, at);
    }

    fn thread_done(&mut self, id: usize, wi: usize, clock: u64) {
        self.tasks[id].state = State::Done;
        self.tasks[id].clock = clock;
        self.tasks[id].gen += 1;
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
        for wi in 0..self.wls.len() {
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

    fn prune_locks(&mut self) {
        let min = self
            .heap
            .iter()
            .map(|Reverse((c, _, _))| *c)
            .min()
            .unwrap_or(0);
        for l in &mut self.k.locks {
            l.prune(min);
        }
    }

    fn progress(&self) -> f64 {
        let now = self.heap.peek().map_or(0, |Reverse((c, _, _))| *c);
        if let Some(end) = self.end_ns {
            return (now as f64 / end as f64).min(1.0);
        }
        let threads: Vec<_> = self
            .tasks
            .iter()
            .filter(|t| matches!(t.kind, Kind::Thread { .. }))
            .collect();
        threads.iter().filter(|t| t.state == State::Done).count() as f64
            / threads.len().max(1) as f64
    }

    fn check(&self) -> Result<(), SimError> {
        check::check(&self.k, self.p.as_ref()).map_err(|what| SimError::Invariant {
            time_s: self.now() as f64 / 1e9,
            what,
        })
    }

    fn now(&self) -> u64 {
        // The flusher's clock may be a timer that never fired: count its last work.
        let others = self
            .tasks
            .iter()
            .enumerate()
            .filter(|&(id, _)| id != self.flusher)
            .map(|(_, t)| t.clock);
        others.chain([self.flusher_end]).max().unwrap_or(0)
    }

    fn take_samples(&mut self, clock: u64) {
        let Some(every) = self.sample_every else {
            return;
        };
        while self.next_sample <= clock {
            let t = self.next_sample;
            self.next_sample += every;
            let mut lru = BTreeMap::new();
            for (m, cg) in self.k.memcgs.cgs.iter().enumerate() {
                let mut v = [0u64; 4];
                for node in 0..self.k.nr_nodes() {
                    let lv = self.k.lruvec(m as MemcgId, node);
                    for (i, x) in v.iter_mut().enumerate() {
                        *x += self.k.lruvecs[lv].nr[i];
                    }
                }
                lru.insert(cg.path.clone(), v);
            }
            let lru_gen = Some(self.lru_gen_states(t))
                .filter(|m| !m.is_empty())
                .map(|m| {
                    m.into_iter()
                        .map(|(path, states)| {
                            let views = states
                                .into_iter()
                                .map(|st| LruGenView {
                                    node: st.node,
                                    gens: st.gens,
                                })
                                .collect();
                            (path, views)
                        })
                        .collect()
                });
            self.samples.push(Sample {
                time_s: t as f64 / 1e9,
                free_pages: self.k.free_pages(),
                lru,
                lru_gen,
            });
        }
    }

    fn results(&self, variant: &str) -> VariantResult {
        let k = &self.k;
        let mut vmstat: BTreeMap<String, u64> = VM_NAMES
            .iter()
            .zip(k.vm.0.iter())
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        vmstat.insert("nr_free_pages".into(), k.free_pages());
        vmstat.insert("nr_dirty".into(), k.wb.nr_dirty);
        vmstat.insert("nr_writeback".into(), k.wb.nr_writeback);
        for (i, name) in lru::NAMES.iter().enumerate() {
            vmstat.insert(
                format!("nr_{name}"),
                k.lruvecs.iter().map(|l| l.nr[i]).sum(),
            );
        }
        let mut memcgs = BTreeMap::new();
        for (m, cg) in k.memcgs.cgs.iter().enumerate() {
            let sub = k.memcgs.iter(m as MemcgId);
            let mut stat: BTreeMap<String, u64> = BTreeMap::new();
            for (i, name) in VM_NAMES.iter().enumerate() {
                stat.insert(
                    name.to_string(),
                    sub.iter()
                        .map(|&c| k.memcgs.cgs[c as usize].stat.0[i])
                        .sum(),
                );
            }
            for (i, name) in lru::NAMES.iter().enumerate() {
                let pages: u64 = sub
                    .iter()
                    .flat_map(|&c| (0..k.nr_nodes()).map(move |n| (c, n)))
                    .map(|(c, n)| k.lruvecs[k.lruvec(c, n)].nr[i])
                    .sum();
                stat.insert(name.to_string(), pages * 4096);
            }
            stat.insert("usage".into(), cg.usage * 4096);
            let gauge = |v: &[u64]| sub.iter().map(|&c| v[c as usize]).sum::<u64>() * 4096;
            stat.insert("file_dirty".into(), gauge(&k.wb.memcg_dirty));
            stat.insert("file_writeback".into(), gauge(&k.wb.memcg_writeback));
            stat.insert("swap".into(), cg.swap_usage * 4096);
            let ev = &cg.events;
            let events = [
                ("low", ev.low),
                ("high", ev.high),
                ("max", ev.max),
                ("oom", ev.oom),
                ("oom_kill", ev.oom_kill),
            ]
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect();
            memcgs.insert(cg.path.clone(), MemcgResult { stat, events });
        }
        let mut workloads = BTreeMap::new();
        for w in &self.wls {
            for (i, s) in w.stats.iter().enumerate() {
                if w.phases.len() > 1 && s.ops == 0 {
                    continue;
                }
                let name = if w.phases.len() > 1 {
                    format!("{}:{}", w.name, w.phases[i])
                } else {
                    w.name.clone()
                };
                let secs = s.first_ns.map_or(0.0, |f| (s.last_ns - f) as f64 / 1e9);
                let per = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
                workloads.insert(
                    name,
                    WorkloadResult {
                        ops: s.ops,
                        ops_per_sec: per(s.ops as f64),
                        mib_per_sec: per(s.bytes as f64 / (1 << 20) as f64),
                        measured_s: secs,
                        latency_ns: Latency::from(&s.latency),
                    },
                );
            }
        }
        let mut lock = LockResult {
            instances: k.locks.len() as u64,
            ..Default::default()
        };
        for l in &k.locks {
            lock.acquisitions += l.acquisitions;
            lock.contended += l.contended;
            lock.wait_ns += l.wait_ns;
            lock.hold_ns += l.hold_ns;
            lock.relocks += l.relocks;
            lock.max_wait_ns = lock.max_wait_ns.max(l.wait_ns);
            for (name, st) in crate::engine::lock::SITE_NAMES.iter().zip(&l.sites) {
                if st.acquisitions > 0 {
                    let r = lock.sites.entry(name.to_string()).or_default();
                    r.acquisitions += st.acquisitions;
                    r.wait_ns += st.wait_ns;
                    r.hold_ns += st.hold_ns;
                }
            }
        }
        lock.spin_share = if k.cpu_time > 0 {
            lock.wait_ns as f64 / k.cpu_time as f64
        } else {
            0.0
        };
        let profile = Profile {
            total_ns: k.kswapd_profile.iter().sum(),
            categories: CAT_NAMES
                .iter()
                .zip(k.kswapd_profile.iter())
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
        };
        let mm_owner = |mm: u32| {
            self.wls
                .iter()
                .find(|w| w.mms.contains(&mm))
                .map_or_else(|| format!("mm{mm}"), |w| w.name.clone())
        };
        let oom_kills = k
            .oom_kills
            .iter()
            .map(|o| OomKill {
                time_s: o.time_ns as f64 / 1e9,
                scope: o
                    .scope
                    .map_or("global".into(), |m| k.memcgs.cgs[m as usize].path.clone()),
                victim: mm_owner(o.victim_mm),
            })
            .collect();
        VariantResult {
            name: variant.to_string(),
            virtual_time_s: self.now() as f64 / 1e9,
            wall_s: 0.0,
            vmstat,
            memcgs,
            workloads,
            locks: BTreeMap::from([("lru_lock".to_string(), lock)]),
            kswapd_profile: profile,
            oom_kills,
            page_accesses: self.accesses,
            model_bytes: k.host_bytes() + self.p.host_bytes(),
            timeseries: self.samples.clone(),
            lru_gen: self.lru_gen_states(self.now()),
            events: self.event_results.clone(),
            alloc_stall: AllocStall::from(&k.alloc_stall),
        }
    }
}
