//! The run queue in virtual time, and the points where tasks meet.
//!
//! Every task (workload thread, kswapd, flusher, debugfs event) is a stackful coroutine
//! running the kernel's paths as plain sequential code. A task runs on alone while what it
//! touches is its own (its PTEs on a hit, its private list of isolated folios, its scan
//! control); before it touches what another task can see or contend on (an lru lock, a
//! watermark, a memcg's usage, the free list) it calls `Kernel::sync`, which suspends it
//! if some other task is due earlier, so that shared state changes in virtual-time order
//! (ties by each task's place in the wake-up order, `Sched::set_order`; by default its
//! id). A task that must wait (a held lock, a throttle, a sleep) is parked and woken at
//! the virtual time its wait ends.

use super::due::DueQueue;
use corosensei::Yielder;

pub type TaskId = usize;

/// A sleep with no timeout: only a wake-up (another task queueing the sleeper) ends it.
pub const NEVER: u64 = u64::MAX;

/// Why a task's coroutine handed control back to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// At a sync point, another task was due earlier; the task stays on its CPU and is
    /// queued at its clock.
    Sync,
    /// Spinning on a lock another task holds: it stays on its CPU, and the holder queues
    /// it when it hands the lock over.
    Block,
    /// Sleeping off its CPU until this virtual time (a reclaim throttle).
    Sleep(u64),
    /// The task's step (one operation, one balance_pgdat iteration, ...) is over.
    StepDone,
}

pub type TaskYielder = Yielder<(), Yield>;

/// Tasks due to run, earliest virtual time first. Not `Unpin`: a suspended task's frames
/// hold `&mut` to the kernel that other tasks change meanwhile, so references to it must
/// not be marked noalias (see `Kernel`).
#[derive(Default)]
pub struct Sched {
    /// The tasks due, by (clock, place in the wake-up order, task).
    due: DueQueue,
    /// Per task: its place among tasks due at the same virtual time (default: its id).
    order: Vec<u64>,
    /// The task running now.
    pub current: TaskId,
    /// The running coroutine's yielder; null outside any task (the engine between
    /// resumes, tests that call kernel paths directly), where nothing runs concurrently.
    yielder: *const TaskYielder,
    /// Suspensions at sync points, lock hand-overs and sleeps: the engine's switches.
    pub switches: u64,
    /// What a busy SMT sibling does to a CPU's progress.
    smt: Smt,
    /// What a little core's lower speed does to it.
    little: Little,
    _pin: std::marker::PhantomPinned,
}

/// How a cost's work shares a core with a busy SMT sibling: instruction-bound work
/// slows to the profile's `smt_compute`, memory-latency-bound work (cache misses the
/// sibling's instructions fill) to `smt_memory`; time spent waiting (spinning on a
/// lock held elsewhere, whose length the holder decides) is not stretched. A little
/// core slows the same classes by `little_compute` and `little_memory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmtClass {
    Compute,
    Memory,
    Wait,
}

/// Per CPU, until when it is busy and which CPUs share its core.
#[derive(Default)]
struct Smt {
    /// Virtual time each CPU is busy until (u64::MAX while a step holds it).
    busy_until: Vec<u64>,
    /// Each CPU's siblings; empty on a machine without SMT or little cores.
    siblings: Vec<Vec<u32>>,
    /// Per mille of a core's speed left with a busy sibling, per class.
    compute: u64,
    memory: u64,
    /// Per CPU, what the division of the last stretched cost left over (in
    /// ns x 1000 / speed units), carried into the next so that short costs (a 2 ns
    /// access) stretch by the factor on average rather than rounding.
    carry: Vec<u64>,
}

/// Per CPU, whether it is a little core, and the per-mille speeds a little core keeps
/// against the big cores the cost table describes.
#[derive(Default)]
struct Little {
    /// Indexed by CPU; empty on a machine of alike cores.
    is: Vec<bool>,
    compute: u64,
    memory: u64,
}

impl Sched {
    /// Orders tasks due at the same virtual time by `order[id]` (lower first) rather
    /// than by id; tasks past its end keep their id. Set before any task is queued.
    pub fn set_order(&mut self, order: Vec<u64>) {
        debug_assert!(self.due.is_empty(), "wake-up order set with tasks queued");
        self.order = order;
    }

    /// The machine's SMT siblings (per CPU, the others of its core) and the per-mille
    /// speeds a busy sibling leaves (`CostTable::smt_compute`, `smt_memory`).
    pub fn set_smt(&mut self, siblings: Vec<Vec<u32>>, compute: u64, memory: u64) {
        let smt = siblings.iter().any(|s| !s.is_empty());
        let n = siblings.len();
        self.smt = Smt {
            busy_until: vec![0; siblings.len()],
            siblings: if smt { siblings } else { Vec::new() },
            compute: compute.clamp(1, 1000),
            memory: memory.clamp(1, 1000),
            carry: vec![0; n],
        };
    }

    /// `cpu` is busy until `until` (u64::MAX: a step holds it).
    #[inline]
    pub fn smt_busy(&mut self, cpu: usize, until: u64) {
        if let Some(b) = self.smt.busy_until.get_mut(cpu) {
            *b = until;
        }
    }

    /// The machine's little cores (per CPU, whether it is one) and the per-mille speeds
    /// they keep against the big ones (`CostTable::little_compute`, `little_memory`): the
    /// cost table's figures are a big core's, as the kernel's CPU capacity is 1024 on the
    /// biggest (arch_scale_cpu_capacity).
    pub fn set_little(&mut self, is: Vec<bool>, compute: u64, memory: u64) {
        if self.smt.carry.len() < is.len() {
            self.smt.carry.resize(is.len(), 0);
        }
        let any = is.iter().any(|&l| l);
        if any && self.smt.siblings.is_empty() {
            self.smt.siblings = vec![Vec::new(); is.len()];
            self.smt.busy_until.resize(is.len(), 0);
        }
        self.little = Little {
            is: if any { is } else { Vec::new() },
            compute: compute.clamp(1, 1000),
            memory: memory.clamp(1, 1000),
        };
    }

    /// `ns` of work of `class` on `cpu` at `clock`, stretched when a sibling is busy
    /// and, on a machine with little cores, on a little one (`little_stretch`).
    #[inline]
    pub fn smt_stretch(&mut self, cpu: u32, clock: u64, ns: u64, class: SmtClass) -> u64 {
        // Without SMT and little cores `siblings` is empty: nothing to stretch. With
        // little cores it has an entry (maybe empty) for every CPU.
        let Some(sibs) = self.smt.siblings.get(cpu as usize) else {
            return ns;
        };
        if !self.little.is.is_empty() {
            return self.little_stretch(cpu, clock, ns, class);
        }
        if !sibs
            .iter()
            .any(|&s| self.smt.busy_until[s as usize] > clock)
        {
            return ns;
        }
        let speed = match class {
            SmtClass::Compute => self.smt.compute,
            SmtClass::Memory => self.smt.memory,
            SmtClass::Wait => return ns,
        };
        let carry = &mut self.smt.carry[cpu as usize];
        let total = ns * 1000 + *carry;
        *carry = total % speed;
        total / speed
    }

    /// `smt_stretch` on a machine with little cores, out of line (and marked cold, which
    /// keeps `Kernel::spend` inlined at its call sites) so that the common machine's path
    /// stays as small as it was: a big CPU's work as there, a little CPU's slowed by its
    /// class's factor and by a busy sibling's, both when both apply.
    #[cold]
    #[inline(never)]
    fn little_stretch(&mut self, cpu: u32, clock: u64, ns: u64, class: SmtClass) -> u64 {
        let busy = self.sibling_busy(cpu, clock);
        let little = self.little.is.get(cpu as usize).copied().unwrap_or(false);
        if !busy && !little {
            return ns;
        }
        let (smt, slow) = match class {
            SmtClass::Compute => (self.smt.compute, self.little.compute),
            SmtClass::Memory => (self.smt.memory, self.little.memory),
            SmtClass::Wait => return ns,
        };
        let smt = if busy { smt } else { 1000 };
        let carry = &mut self.smt.carry[cpu as usize];
        if !little {
            let total = ns * 1000 + *carry;
            *carry = total % smt;
            return total / smt;
        }
        // On a little core, in millionths: its speed times the SMT share, the carry
        // kept in the same unit (a CPU is little or not for the whole run).
        let speed = u128::from(smt * slow);
        let total = u128::from(ns) * 1_000_000 + u128::from(*carry);
        *carry = (total % speed) as u64;
        u64::try_from(total / speed).unwrap_or(u64::MAX)
    }

    /// Whether an SMT sibling of `cpu` is busy at `clock`.
    #[inline]
    fn sibling_busy(&self, cpu: u32, clock: u64) -> bool {
        let Some(sibs) = self.smt.siblings.get(cpu as usize) else {
            return false;
        };
        sibs.iter()
            .any(|&s| self.smt.busy_until[s as usize] > clock)
    }

    /// `id`'s place among tasks due at the same time.
    pub fn place(&self, id: TaskId) -> u64 {
        self.order.get(id).copied().unwrap_or(id as u64)
    }

    /// Queues `id` to run at `clock`, replacing any entry it had.
    pub fn push(&mut self, id: TaskId, clock: u64) {
        self.due.push(id, self.place(id), clock);
    }

    /// Drops `id`'s entry, if it has one.
    pub fn cancel(&mut self, id: TaskId) {
        self.due.remove(id);
    }

    pub fn is_queued(&self, id: TaskId) -> bool {
        self.due.contains(id)
    }

    /// Takes the earliest entry.
    pub fn pop(&mut self) -> Option<(u64, TaskId)> {
        self.due.pop()
    }

    /// The earliest entry.
    pub fn peek(&self) -> Option<(u64, TaskId)> {
        self.due.peek_task()
    }

    /// Whether a queued task is due before `id` at `clock`: earlier, or at the same time
    /// and earlier in the wake-up order.
    #[inline]
    pub fn due_before(&self, clock: u64, id: TaskId) -> bool {
        match self.due.peek() {
            Some((c, _)) if c < clock => true,
            Some((c, t)) if c == clock => t < super::due::tie(self.place(id), id),
            _ => false,
        }
    }

    /// The earliest entry's virtual time (for progress reports).
    pub fn min_clock(&self) -> Option<u64> {
        self.due.peek().map(|(c, _)| c)
    }

    #[inline]
    pub fn in_task(&self) -> bool {
        !self.yielder.is_null()
    }

    /// Entering a task's coroutine (or leaving it, with null).
    pub fn set_yielder(&mut self, y: *const TaskYielder) {
        self.yielder = y;
    }

    /// Hands control back to the engine. Only from inside a task.
    pub fn suspend(&mut self, why: Yield) {
        let y = self.yielder;
        assert!(!y.is_null(), "suspend outside a task");
        self.switches += 1;
        // SAFETY: `y` is the running coroutine's yielder, set by the engine when it
        // resumed this coroutine; the coroutine outlives this call.
        unsafe { (*y).suspend(why) };
        // Other tasks ran meanwhile and left the engine's between-tasks null here.
        self.yielder = y;
    }
}

/// Host ns per switch between tasks at sync points (queue push and pop, suspend and
/// resume): `tasks` tasks that each suspend `rounds` times, taking turns, so that the
/// queue holds all of them. For `bench` (2 tasks: the switch alone; 108: 000's
/// threads, the queue's depth included).
pub fn switch_cost_ns(tasks: usize, rounds: u64) -> f64 {
    let sched: *mut Sched = Box::into_raw(Box::default());
    let n = tasks as u64;
    let mut coros: Vec<corosensei::Coroutine<(), Yield, ()>> = (0..tasks)
        .map(|id: TaskId| {
            corosensei::Coroutine::new(move |y: &TaskYielder, ()| {
                // SAFETY: the Sched outlives the coroutines; one of them runs at a time.
                let s = unsafe { &mut *sched };
                s.set_yielder(y);
                for i in 1..=rounds {
                    s.push(id, n * i + id as u64);
                    s.suspend(Yield::Sync);
                }
            })
        })
        .collect();
    // SAFETY: as above; no coroutine runs while the driver uses it.
    let s = unsafe { &mut *sched };
    for id in 0..tasks {
        s.push(id, id as u64);
    }
    let start = std::time::Instant::now();
    while let Some((_, id)) = unsafe { &mut *sched }.pop() {
        unsafe { &mut *sched }.current = id;
        let _ = coros[id].resume(());
        unsafe { &mut *sched }.set_yielder(std::ptr::null());
    }
    let ns = start.elapsed().as_nanos() as f64 / (n * rounds) as f64;
    drop(coros);
    // SAFETY: from Box::into_raw above; the coroutines are gone.
    drop(unsafe { Box::from_raw(sched) });
    ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A little core stretches compute-bound work by `little_compute`, memory-bound work
    /// by `little_memory` and a lock wait not at all; with a busy SMT sibling by the
    /// product of both speeds; a big core only by its sibling; short costs by the factor
    /// on average (the carry).
    #[test]
    fn a_little_core_stretches_by_class_and_composes_with_smt() {
        let mut s = Sched::default();
        // Cores {0, 1} and {2, 3} of two SMT threads each; CPUs 0 and 1 little.
        s.set_smt(vec![vec![1], vec![0], vec![3], vec![2]], 600, 900);
        s.set_little(vec![true, true, false, false], 400, 800);
        let n = 1_000_000;
        assert_eq!(s.smt_stretch(0, 0, n, SmtClass::Compute), 2_500_000);
        assert_eq!(s.smt_stretch(0, 0, n, SmtClass::Memory), 1_250_000);
        assert_eq!(s.smt_stretch(0, 0, n, SmtClass::Wait), n);
        assert_eq!(s.smt_stretch(2, 0, n, SmtClass::Compute), n);
        s.smt_busy(1, 100);
        s.smt_busy(3, 100);
        // 0.6 x 0.4 of a big core's speed alone; 0.9 x 0.8.
        assert_eq!(s.smt_stretch(0, 0, 1_200_000, SmtClass::Compute), 5_000_000);
        assert_eq!(s.smt_stretch(0, 0, 720_000, SmtClass::Memory), 1_000_000);
        assert_eq!(s.smt_stretch(0, 0, n, SmtClass::Wait), n);
        assert_eq!(s.smt_stretch(2, 0, 600, SmtClass::Compute), 1000);
        assert_eq!(s.smt_stretch(2, 0, 900, SmtClass::Memory), 1000);
        // Past the siblings' busy time: 3 ns at 0.4 is 7.5 ns, on average.
        let total: u64 = (0..1000)
            .map(|_| s.smt_stretch(0, 200, 3, SmtClass::Compute))
            .sum();
        assert_eq!(total, 7500);
    }

    /// `due_before` answers from the queue's top: its answer must be the one the live
    /// entries give, under random pushes, cancels and pops with ties in virtual time.
    #[test]
    fn due_before_answers_as_the_live_entries_do() {
        let mut s = Sched::default();
        s.set_order(vec![3, 1, 2, 0, 5, 4]);
        let mut live: BTreeMap<TaskId, u64> = BTreeMap::new();
        let mut next = crate::sim::test_draws();
        let (mut yes, mut no) = (0, 0);
        for _ in 0..50_000 {
            let id = next(8) as TaskId;
            let clock = next(40);
            match next(4) {
                0 => {
                    s.push(id, clock);
                    live.insert(id, clock);
                }
                1 => {
                    s.cancel(id);
                    live.remove(&id);
                }
                2 => {
                    if let Some((_, got)) = s.pop() {
                        live.remove(&got);
                    }
                }
                _ => {
                    let me = (clock, s.place(id), id);
                    let want = (live.iter()).any(|(&o, &c)| (c, s.place(o), o) < me);
                    assert_eq!(s.due_before(clock, id), want, "task {id} at {clock}");
                    if want {
                        yes += 1;
                    } else {
                        no += 1;
                    }
                }
            }
        }
        assert!(
            yes > 1000 && no > 1000,
            "both answers exercised: {yes} / {no}"
        );
    }
}
