//! The CPU scheduler: a CFS run queue per CPU as Linux 6.1 keeps them
//! (kernel/sched/fair.c), at the granularity of the engine's steps.
//!
//! A task that wants to run and holds no CPU is either woken (a start, the end of a
//! sleep: `select_cpu` places it as select_task_rq_fair does, then `enqueue` gives it its
//! vruntime as place_entity does and checks wake-up preemption as check_preempt_wakeup
//! does) or already waits in a CPU's queue. A CPU runs one task's step at a time; when the
//! step ends (`off_cpu`) the task keeps the CPU while its slice lasts (check_preempt_tick
//! at the scheduler tick) and no wake-up asked it to yield, else the queued task with the
//! least vruntime goes next (pick_next_entity). A CPU left with nothing to run pulls a
//! waiting task from the busiest CPU whose cpuset allows it (newidle_balance); at its
//! ticks a busy CPU balances its scheduling domains (rebalance_domains) and, with a task
//! waiting, kicks the idle CPUs to balance (nohz_balancer_kick).
//! Preemption happens at step ends: a step is one operation (microseconds) or one
//! balance_pgdat priority pass, shorter than a tick. Every tie goes by the wake-up order
//! (`Sched::place`), then by task id.

use super::{Engine, Kind, State, CPU_RUNNING};
use crate::kernel::throttle::JIFFY_NS;

/// The CFS tunables of 6.1, scaled as sched_init_granularity does under the default
/// SCHED_TUNABLESCALING_LOG: by 1 + ilog2(min(online CPUs, 8)).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tunables {
    /// sysctl_sched_latency (6 ms unscaled): the period in which each runnable task runs.
    pub latency: u64,
    /// sysctl_sched_min_granularity (0.75 ms unscaled): the shortest slice.
    pub min_granularity: u64,
    /// sysctl_sched_wakeup_granularity (1 ms unscaled): how far a woken task's vruntime
    /// must be behind the running task's for it to preempt.
    pub wakeup_granularity: u64,
}

impl Tunables {
    pub(crate) fn for_cpus(cpus: u32) -> Self {
        let factor = 1 + cpus.clamp(1, 8).ilog2() as u64;
        Tunables {
            latency: 6_000_000 * factor,
            min_granularity: 750_000 * factor,
            wakeup_granularity: 1_000_000 * factor,
        }
    }

    /// sched_slice of one of `nr` equal-weight tasks: __sched_period(nr) / nr, the
    /// period stretching to nr x min_granularity past sched_nr_latency (8) tasks.
    pub(crate) fn slice(&self, nr: usize) -> u64 {
        let nr = nr.max(1) as u64;
        let period = if nr > self.latency / self.min_granularity {
            nr * self.min_granularity
        } else {
            self.latency
        };
        period / nr
    }
}

/// One CPU's run queue (struct rq with its cfs_rq).
#[derive(Clone, Debug, Default)]
pub(crate) struct Cpu {
    /// When it is free, or CPU_RUNNING while a task's step holds it.
    pub free_at: u64,
    /// The task whose step holds it.
    pub curr: Option<usize>,
    /// Runnable tasks waiting for it (the rbtree, as a list picked by vruntime).
    pub queue: Vec<usize>,
    /// The queued task chosen to run when it is free, queued in `Sched` at that time.
    pub next: Option<usize>,
    /// cfs_rq->min_vruntime: never decreases; a woken task starts no lower than it
    /// (less the sleeper credit).
    pub min_vruntime: u64,
    /// The task that ran last: another one starting pays a context switch.
    pub last: Option<usize>,
    /// When the current slice of `last` began.
    pub slice_from: u64,
    /// A wake-up asked the running task to yield at its step's end (resched_curr).
    pub resched: bool,
    /// Virtual ns it ran tasks.
    pub busy_ns: u64,
    /// Context switches: a task started that was not the last to run.
    pub switches: u64,
    /// When this CPU next balances each of its scheduling domains (`Domain`, smallest
    /// first: rq->next_balance per sched_domain's last_balance + interval).
    pub next_balance: [u64; 3],
    /// When this CPU, idle, next balances for nohz (its MC domain's interval).
    pub idle_balance_at: u64,
}

impl Cpu {
    /// An idle CPU whose domains are all due for balancing, except the levels the
    /// topology leaves out (`Domain::levels`), which never are.
    pub(crate) fn new(t: &crate::sim::topology::Topology) -> Cpu {
        let mut next_balance = [u64::MAX; 3];
        for (i, _) in Domain::levels(t) {
            next_balance[i] = 0;
        }
        Cpu {
            next_balance,
            ..Cpu::default()
        }
    }
}

/// busy_factor of 6.1's sd_init: a busy CPU balances a domain 16 times less often than
/// its interval when idle (sd->min_interval, the domain's weight in milliseconds).
const BUSY_FACTOR: u64 = 16;

/// The scheduling domains 6.1 builds on an x86 machine like the model's, smallest
/// first: SMT (a core's hardware threads), MC (the CPUs sharing a last-level cache, one
/// socket here) and the machine (the NUMA level across sockets). A level that spans no
/// more CPUs than the one below it is degenerate and left out, as the kernel does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Domain {
    Smt,
    Mc,
    Machine,
}

impl Domain {
    const ALL: [Domain; 3] = [Domain::Smt, Domain::Mc, Domain::Machine];

    /// CPUs the domain spans around one CPU (sd->span_weight).
    fn weight(self, t: &crate::sim::topology::Topology) -> u32 {
        match self {
            Domain::Smt => t.threads_per_core,
            Domain::Mc => t.cores_per_socket * t.threads_per_core,
            Domain::Machine => t.nr_cpus(),
        }
    }

    /// Whether the domain of `cpu` spans `other`.
    fn spans(self, t: &crate::sim::topology::Topology, cpu: u32, other: u32) -> bool {
        match self {
            Domain::Smt => t.core_of(cpu) == t.core_of(other),
            Domain::Mc => t.socket_of(cpu) == t.socket_of(other),
            Domain::Machine => true,
        }
    }

    /// The domains of the topology that are not degenerate, smallest first.
    fn levels(t: &crate::sim::topology::Topology) -> impl Iterator<Item = (usize, Domain)> + '_ {
        let mut below = 1;
        Domain::ALL.into_iter().enumerate().filter(move |&(_, d)| {
            let w = d.weight(t);
            let keep = w > below;
            below = below.max(w);
            keep
        })
    }
}

impl Engine {
    /// try_to_wake_up from a running task (a client's or server's socket wake-up): the
    /// woken `id` is placed and queued at `at`, while its waker still holds its CPU, so
    /// the waker's vruntime counts in min_vruntime and a busy waker's CPU is not idle.
    pub(super) fn try_to_wake_up(&mut self, id: usize, at: u64) {
        if !self.tasks[id].queued && !self.tasks[id].on_cpu {
            let cpu = self.select_cpu(id, at);
            self.enqueue(id, cpu, at);
        }
    }

    /// Whether `id`, due at `clock` and holding no CPU, may take one now; if not, it
    /// waits in a CPU's queue and the CPU schedules it when its turn comes.
    pub(super) fn admit(&mut self, id: usize, clock: u64) -> bool {
        debug_assert!(!self.tasks[id].on_cpu);
        if self.stopped_while_waiting(id) {
            self.drop_waiting(id, clock);
            return false;
        }
        if !self.tasks[id].queued {
            let cpu = self.select_cpu(id, clock);
            self.enqueue(id, cpu, clock);
        }
        let cpu = self.tasks[id].cpu as usize;
        let c = &self.cpus[cpu];
        if c.free_at == CPU_RUNNING {
            // The running step's end picks who goes next.
            return false;
        }
        let turn = match c.next {
            Some(n) => n == id,
            None => self.pick_next(cpu) == id,
        };
        if c.free_at > clock || !turn {
            let at = c.free_at.max(clock);
            match self.cpus[cpu].next {
                None => {
                    let n = self.pick_next(cpu);
                    self.cpus[cpu].next = Some(n);
                    self.schedule(n, at);
                    self.sync_busy(cpu);
                }
                // The CPU's chosen next, due before the CPU is free: a wake-up moved its
                // entry earlier (wake() on a task already queued here). It still runs
                // when the CPU frees; without its entry nothing would run it again.
                Some(n) if n == id => self.schedule(id, at),
                Some(_) => {}
            }
            return false;
        }
        self.start(id, cpu, clock);
        true
    }

    /// A thread stopped or parked while it waited in a queue does not run.
    fn stopped_while_waiting(&self, id: usize) -> bool {
        let t = &self.tasks[id];
        !t.in_step && matches!(t.kind, Kind::Thread { .. }) && t.state != State::Runnable
    }

    /// Takes a stopped task out of its queue; its CPU picks another if it was free.
    pub(super) fn drop_waiting(&mut self, id: usize, clock: u64) {
        let cpu = self.tasks[id].cpu as usize;
        if self.tasks[id].queued {
            self.cpus[cpu].queue.retain(|&t| t != id);
            self.tasks[id].queued = false;
        }
        self.k.psi.dequeue(id, clock);
        let c = &mut self.cpus[cpu];
        if c.next == Some(id) {
            c.next = None;
        }
        if c.free_at != CPU_RUNNING && c.next.is_none() && !c.queue.is_empty() {
            let n = self.pick_next(cpu);
            self.cpus[cpu].next = Some(n);
            let at = self.cpus[cpu].free_at.max(clock);
            self.schedule(n, at);
        }
        self.sync_busy(cpu);
    }

    /// `id` takes `cpu` at `clock`.
    fn start(&mut self, id: usize, cpu: usize, clock: u64) {
        // An entry a wake-up queued for it at this same time is spent.
        self.k.sched.cancel(id);
        let c = &mut self.cpus[cpu];
        let was_idle = c.free_at < clock;
        c.queue.retain(|&t| t != id);
        c.next = None;
        c.curr = Some(id);
        c.free_at = CPU_RUNNING;
        if c.last != Some(id) {
            c.last = Some(id);
            c.slice_from = clock;
            c.switches += 1;
            self.tasks[id].switch_due = true;
        }
        self.k.psi.switch_in(id, cpu as u32, clock);
        self.sync_busy(cpu);
        let t = &mut self.tasks[id];
        t.wake_latency = std::mem::take(&mut t.wake_due) && was_idle;
        t.queued = false;
        t.wait_ns += clock.saturating_sub(t.enqueued_at);
        t.on_cpu = true;
        t.ran = true;
        t.ran_from = clock;
        debug_assert!(
            self.cpusets[t.cpuset as usize]
                .binary_search(&(cpu as u32))
                .is_ok(),
            "task {id} runs on CPU {cpu}, outside its cpuset"
        );
        let word = cpu / 64;
        if t.ran_on.len() <= word {
            t.ran_on.resize(word + 1, 0);
        }
        t.ran_on[word] |= 1 << (cpu % 64);
    }

    /// `id` leaves its CPU at `end` (its step ended, or it went to sleep). A task
    /// runnable at once keeps the CPU while its slice lasts; otherwise the queued task
    /// with the least vruntime goes next, or an idle CPU pulls work.
    pub(super) fn off_cpu(&mut self, id: usize, end: u64) {
        let cpu = self.tasks[id].cpu as usize;
        let now = end.max(self.tasks[id].ran_from);
        self.rebalance_domains(cpu, now);
        self.nohz_balance_kick(cpu, now);
        self.leave_cpu(id, end);
        self.sync_busy(cpu);
    }

    fn leave_cpu(&mut self, id: usize, end: u64) {
        let cpu = self.tasks[id].cpu as usize;
        let t = &mut self.tasks[id];
        debug_assert!(t.on_cpu);
        t.on_cpu = false;
        let free = end.max(t.ran_from);
        t.vruntime += free - t.ran_from;
        let ran = free - t.ran_from;
        t.run_ns += ran;
        let continuing = self.k.sched.is_queued(id) && t.clock <= free;
        let c = &mut self.cpus[cpu];
        c.free_at = free;
        c.curr = None;
        c.busy_ns += ran;
        if continuing {
            self.tasks[id].queued = true;
            self.tasks[id].enqueued_at = free;
            self.cpus[cpu].queue.push(id);
            if !self.cpus[cpu].resched && !self.slice_over(cpu, free) {
                // It keeps the CPU: for psi it never left.
                self.cpus[cpu].next = Some(id);
                self.update_min_vruntime(cpu, free);
                return;
            }
            self.k.sched.cancel(id);
        }
        self.k.psi.switch_out(id, continuing, free);
        self.cpus[cpu].resched = false;
        self.update_min_vruntime(cpu, free);
        if self.cpus[cpu].queue.is_empty() {
            self.cpus[cpu].next = None;
            self.idle_balance(cpu, free);
            return;
        }
        let n = self.pick_next(cpu);
        if n == id {
            self.cpus[cpu].slice_from = free;
        }
        self.cpus[cpu].next = Some(n);
        self.schedule(n, free);
    }

    /// Tells the SMT model (`Sched::smt_busy`) whether `cpu` is busy: running a task, or
    /// about to run the one it chose; otherwise idle since it was last free.
    fn sync_busy(&mut self, cpu: usize) {
        let c = &self.cpus[cpu];
        let until = if c.curr.is_some() || c.next.is_some() {
            CPU_RUNNING
        } else {
            c.free_at
        };
        let mm = c.curr.and_then(|id| self.task_mm(id));
        self.k.sched.smt_busy(cpu, until);
        self.k.cpu_mm[cpu] = mm;
    }

    /// check_preempt_tick: the last task's slice is over at the first tick after it has
    /// run its ideal share (sched_slice) with others waiting.
    fn slice_over(&self, cpu: usize, now: u64) -> bool {
        let c = &self.cpus[cpu];
        if c.queue.len() < 2 {
            return false;
        }
        let ideal = self.tunables.slice(c.queue.len());
        let tick = (c.slice_from + ideal) / JIFFY_NS * JIFFY_NS + JIFFY_NS;
        now >= tick
    }

    /// update_curr and update_min_vruntime: the least vruntime of the running task (as of
    /// `now`) and the queued ones, never decreasing.
    fn update_min_vruntime(&mut self, cpu: usize, now: u64) {
        let c = &self.cpus[cpu];
        let curr = c.curr.map(|id| {
            let t = &self.tasks[id];
            t.vruntime + now.saturating_sub(t.ran_from)
        });
        let least = (c.queue.iter())
            .map(|&t| self.tasks[t].vruntime)
            .chain(curr)
            .min();
        if let Some(v) = least {
            let c = &mut self.cpus[cpu];
            c.min_vruntime = c.min_vruntime.max(v);
        }
    }

    /// The queued task with the least vruntime (pick_next_entity), ties in the wake-up
    /// order.
    pub(super) fn pick_next(&self, cpu: usize) -> usize {
        *(self.cpus[cpu].queue.iter())
            .min_by_key(|&&t| (self.tasks[t].vruntime, self.k.sched.place(t), t))
            .expect("queue not empty")
    }

    /// Queues the woken `id` on `cpu` (enqueue_entity): a task that moved keeps its lag
    /// behind min_vruntime (migrate_task_rq_fair); a new one starts a slice after
    /// min_vruntime (START_DEBIT), a sleeper no earlier than half a latency before it
    /// (GENTLE_FAIR_SLEEPERS); then check_preempt_wakeup.
    fn enqueue(&mut self, id: usize, cpu: usize, clock: u64) {
        let old = self.tasks[id].cpu as usize;
        self.update_min_vruntime(cpu, clock);
        let floor = self.cpus[cpu].min_vruntime;
        let t = &mut self.tasks[id];
        if !t.ran {
            t.vruntime = floor + self.tunables.slice(self.cpus[cpu].queue.len() + 1);
        } else {
            if old != cpu {
                t.migrations += 1;
                t.vruntime = t.vruntime.saturating_sub(self.cpus[old].min_vruntime) + floor;
            }
            let credit = floor.saturating_sub(self.tunables.latency / 2);
            t.vruntime = t.vruntime.max(credit);
        }
        t.cpu = cpu as u32;
        t.queued = true;
        t.enqueued_at = clock;
        self.cpus[cpu].queue.push(id);
        self.k.psi.wake(id, cpu as u32, clock);
        self.check_preempt_wakeup(id, cpu, clock);
    }

    /// check_preempt_wakeup: the woken task preempts the running one (at its step's end)
    /// when it is more than wakeup_granularity of vruntime behind it. A CPU between two
    /// steps of a task keeping it counts that task as running; one about to start
    /// another task takes the woken one instead if it is further behind.
    fn check_preempt_wakeup(&mut self, id: usize, cpu: usize, clock: u64) {
        let woken = self.tasks[id].vruntime;
        let gran = self.tunables.wakeup_granularity;
        let c = &self.cpus[cpu];
        if let Some(curr) = c.curr {
            let t = &self.tasks[curr];
            let now = t.vruntime + clock.saturating_sub(t.ran_from);
            if now > woken + gran {
                self.cpus[cpu].resched = true;
            }
            return;
        }
        let Some(n) = c.next else { return };
        let kept = c.last == Some(n);
        let behind = if kept { woken + gran } else { woken };
        let order = |t: usize| (self.k.sched.place(t), t);
        let first = self.tasks[n].vruntime > behind
            || (self.tasks[n].vruntime == behind && !kept && order(id) < order(n));
        if first {
            self.cpus[cpu].next = Some(id);
            let at = self.cpus[cpu].free_at.max(clock);
            self.schedule(id, at);
            self.sync_busy(cpu);
        }
    }

    /// select_task_rq_fair for a woken task: its only CPU if pinned; its previous CPU
    /// if idle (select_idle_sibling); else an idle core in that CPU's LLC, then an idle
    /// CPU there (select_idle_core, select_idle_cpu, scanning from the previous CPU
    /// on); else the previous CPU. A task that never ran goes to the least loaded CPU of
    /// its cpuset (find_idlest_cpu). A task asleep inside a step wakes where it slept.
    fn select_cpu(&self, id: usize, clock: u64) -> usize {
        let t = &self.tasks[id];
        let set = &self.cpusets[t.cpuset as usize];
        if t.in_step && t.ran {
            return t.cpu as usize;
        }
        if set.len() == 1 {
            return set[0] as usize;
        }
        if !t.ran || set.binary_search(&t.cpu).is_err() {
            return self.idlest(set, clock);
        }
        let prev = t.cpu;
        if self.idle(prev as usize, clock) {
            return prev as usize;
        }
        let llc = self.k.topology.socket_of(prev);
        let start = set.partition_point(|&c| c <= prev);
        let scan = set[start..].iter().chain(&set[..start]).copied();
        let in_llc = || {
            scan.clone()
                .filter(|&c| self.k.topology.socket_of(c) == llc)
        };
        if let Some(c) = in_llc().find(|&c| self.idle_core(c, clock)) {
            return c as usize;
        }
        in_llc()
            .find(|&c| self.idle(c as usize, clock))
            .unwrap_or(prev) as usize
    }

    /// Nothing runs on `cpu` at `clock` and nothing waits for it.
    fn idle(&self, cpu: usize, clock: u64) -> bool {
        let c = &self.cpus[cpu];
        c.free_at <= clock && c.queue.is_empty() && c.next.is_none()
    }

    /// `cpu` and its SMT siblings are all idle.
    fn idle_core(&self, cpu: u32, clock: u64) -> bool {
        self.idle(cpu as usize, clock)
            && (self.k.topology)
                .siblings(cpu)
                .all(|s| self.idle(s as usize, clock))
    }

    /// The CPU of `set` with the fewest tasks, counting its core's (find_idlest_cpu
    /// within find_idlest_group), ties by id.
    fn idlest(&self, set: &[u32], clock: u64) -> usize {
        let load = |c: u32| {
            let cpu = &self.cpus[c as usize];
            cpu.queue.len() + usize::from(!self.idle(c as usize, clock) && cpu.queue.is_empty())
        };
        let core = |c: u32| load(c) + self.k.topology.siblings(c).map(load).sum::<usize>();
        set.iter()
            .copied()
            .min_by_key(|&c| (load(c), core(c), c))
            .expect("a cpuset is never empty") as usize
    }

    /// The tasks waiting on `from` at `now` that may move to `to`: allowed there, not
    /// the task `from` has chosen to run next, and woken by `now` (a wake-up a step
    /// already made for a later time is not on a run queue yet at `now`).
    fn movable(&self, from: usize, to: usize, now: u64) -> impl Iterator<Item = usize> + '_ {
        let c = &self.cpus[from];
        (c.queue.iter().copied()).filter(move |&t| {
            c.next != Some(t)
                && self.tasks[t].enqueued_at <= now
                && (self.cpusets[self.tasks[t].cpuset as usize])
                    .binary_search(&(to as u32))
                    .is_ok()
        })
    }

    /// newidle_balance: `cpu`, left idle at `now`, pulls a waiting task from the CPU
    /// with the most waiting (its own LLC first), one whose cpuset allows `cpu` and that
    /// is not that CPU's next; the one furthest from running (largest vruntime).
    fn idle_balance(&mut self, cpu: usize, now: u64) {
        let llc = self.k.topology.socket_of(cpu as u32);
        let busiest = (0..self.cpus.len())
            .filter(|&c| c != cpu && self.movable(c, cpu, now).next().is_some())
            .max_by_key(|&c| {
                let same = self.k.topology.socket_of(c as u32) == llc;
                (same, self.cpus[c].queue.len(), std::cmp::Reverse(c))
            });
        let Some(from) = busiest else { return };
        let pick = self.detach_task(from, cpu, now);
        self.cpus[cpu].queue.push(pick);
        self.cpus[cpu].next = Some(pick);
        self.schedule(pick, now);
        self.sync_busy(cpu);
        self.sync_busy(from);
    }
}

impl Engine {
    /// rebalance_domains at the scheduler tick of the busy `cpu` (its step ends at
    /// `now`): for each of its domains whose interval (weight ms x BUSY_FACTOR) is over,
    /// load_balance pulls one waiting task to it from the busiest CPU of the domain, if
    /// that CPU has at least two tasks more than this one (running and queued: equal
    /// weights, so the imbalance is in tasks); then the next balance of the domain.
    fn rebalance_domains(&mut self, cpu: usize, now: u64) {
        if self.cpus[cpu].next_balance.iter().all(|&at| now < at) {
            return;
        }
        // A level the topology leaves out is never due (`Cpu::new`).
        for (i, d) in Domain::ALL.into_iter().enumerate() {
            if now < self.cpus[cpu].next_balance[i] {
                continue;
            }
            let ms = u64::from(d.weight(&self.k.topology)) * BUSY_FACTOR;
            self.cpus[cpu].next_balance[i] = now + ms * 1_000_000;
            if self.load_balance(cpu, d, now) {
                break;
            }
        }
    }

    /// The tasks on a CPU: the one running or kept between its steps, and those queued.
    fn nr_running(&self, cpu: usize) -> usize {
        let c = &self.cpus[cpu];
        c.queue.len() + usize::from(c.curr.is_some())
    }

    /// load_balance of domain `d` for `cpu`: whether it pulled a task (to its queue;
    /// who runs next is decided when its step ends). The busiest CPU is the one with the
    /// most tasks among those with a task movable here (ties: the lowest CPU).
    fn load_balance(&mut self, cpu: usize, d: Domain, now: u64) -> bool {
        let t = &self.k.topology;
        let busiest = (0..self.cpus.len())
            .filter(|&c| c != cpu && d.spans(t, cpu as u32, c as u32))
            .filter(|&c| self.movable(c, cpu, now).next().is_some())
            .max_by_key(|&c| (self.nr_running(c), std::cmp::Reverse(c)));
        let Some(from) = busiest else { return false };
        if self.nr_running(from) < self.nr_running(cpu) + 2 {
            return false;
        }
        let pick = self.detach_task(from, cpu, now);
        self.cpus[cpu].queue.push(pick);
        self.sync_busy(from);
        true
    }

    /// Moves the waiting task of `from` that is furthest from running (largest
    /// vruntime; ties in wake-up order, then id) to `to`, keeping its lag behind
    /// min_vruntime; returns it. The caller queues it on `to`.
    fn detach_task(&mut self, from: usize, to: usize, now: u64) -> usize {
        let pick = (self.movable(from, to, now))
            .max_by_key(|&t| (self.tasks[t].vruntime, self.k.sched.place(t), t))
            .expect("a movable task");
        self.cpus[from].queue.retain(|&t| t != pick);
        let t = &mut self.tasks[pick];
        t.vruntime =
            t.vruntime.saturating_sub(self.cpus[from].min_vruntime) + self.cpus[to].min_vruntime;
        t.cpu = to as u32;
        t.migrations += 1;
        self.k.psi.migrate(pick, to as u32, now);
        pick
    }

    /// nohz_balancer_kick and _nohz_idle_balance: at the tick of a CPU with a task
    /// waiting, the idle CPUs (lowest first) each balance as newidle does, those whose
    /// own interval (their MC domain's weight in ms, no busy factor) is over. The
    /// kernel's idle CPUs have no tick; the first one is kicked to do this for all.
    fn nohz_balance_kick(&mut self, cpu: usize, now: u64) {
        if now < self.nohz_next || self.cpus[cpu].queue.is_empty() {
            return;
        }
        self.nohz_next = (now / JIFFY_NS + 1) * JIFFY_NS;
        let ms = u64::from(Domain::Mc.weight(&self.k.topology));
        for c in 0..self.cpus.len() {
            if !self.idle(c, now) || now < self.cpus[c].idle_balance_at {
                continue;
            }
            self.cpus[c].idle_balance_at = now + ms * 1_000_000;
            self.idle_balance(c, now);
        }
    }
}

impl Engine {
    /// What the scheduler did, for the results.
    pub(crate) fn sched_use(&self) -> super::SchedUse {
        let end = self.run_end().max(1);
        let cpus = (self.cpus.iter().enumerate())
            .map(|(i, c)| super::CpuUse {
                cpu: i as u32,
                // A step that began before a `duration` cut may end after it.
                busy_fraction: c.busy_ns.min(end) as f64 / end as f64,
                context_switches: c.switches,
                little: self.k.topology.is_little(i as u32),
            })
            .collect();
        // A kworker that never ran (no work was queued on its CPU) is left out.
        let shown = |id: &usize| {
            let t = &self.tasks[*id];
            !matches!(t.kind, Kind::Kworker { .. }) || t.run_ns > 0
        };
        let tasks = (0..self.tasks.len())
            .filter(shown)
            .map(|id| {
                let t = &self.tasks[id];
                let [calm, stalled] = self.k.profiles.get(id).copied().unwrap_or_default();
                let all: Vec<u64> = calm.iter().zip(stalled).map(|(a, b)| a + b).collect();
                super::TaskUse {
                    task: self.task_name(id),
                    cpu_s: t.run_ns as f64 / 1e9,
                    runqueue_wait_s: t.wait_ns as f64 / 1e9,
                    migrations: t.migrations,
                    cpus: (0..self.cpus.len() as u32)
                        .filter(|&c| {
                            let w = (c / 64) as usize;
                            t.ran_on.get(w).is_some_and(|b| b & (1 << (c % 64)) != 0)
                        })
                        .collect(),
                    profile: super::Profile::of(&all),
                    memstall: super::Profile::of(&stalled),
                }
            })
            .collect();
        super::SchedUse { cpus, tasks }
    }

    /// kswapd's CPU time by category: its threads' profiles, both halves, summed (the
    /// context switches that load them included).
    pub(crate) fn kswapd_profile(&self) -> super::Profile {
        let mut ns = [0u64; crate::kernel::stats::NR_CAT];
        let kswapds =
            (0..self.tasks.len()).filter(|&id| matches!(self.tasks[id].kind, Kind::Kswapd { .. }));
        for half in kswapds.filter_map(|id| self.k.profiles.get(id)).flatten() {
            for (sum, v) in ns.iter_mut().zip(half) {
                *sum += v;
            }
        }
        super::Profile::of(&ns)
    }

    fn task_name(&self, id: usize) -> String {
        match self.tasks[id].kind {
            Kind::Thread { w, t } => format!("{}/{t}", self.wls[w].name),
            Kind::Client { w, t } => format!("{}/client{t}", self.wls[w].name),
            Kind::Kswapd { node } => format!("kswapd{node}"),
            Kind::Flusher => "flusher".into(),
            Kind::Event { e } => format!("event{e}"),
            Kind::Agent { a } => format!("agent{a}"),
            Kind::Kworker { cpu } => format!("kworker/{cpu}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Domain, Engine, Tunables, CPU_RUNNING};

    /// An engine for `machine` with one workload of `threads` threads allowed on every
    /// CPU, none started.
    fn engine(machine: &str, threads: u32) -> Box<Engine> {
        let text = format!(
            "name = \"t\"\n[machine]\nmemory = \"16MiB\"\n{machine}\n[[workload]]\n\
             name = \"w\"\n[workload.anon]\nsize = \"4KiB\"\nthreads = {threads}\n"
        );
        let s = crate::scenario::parse(&text, "t.toml", &[], Some(1))
            .unwrap()
            .base;
        Box::new(Engine::new(&s, None, None).unwrap())
    }

    /// The id of thread `t` of the workload.
    fn thread(e: &Engine, t: usize) -> usize {
        e.wls[0].tasks[t]
    }

    /// Marks `cpu` as running `task` from time 0.
    fn busy(e: &mut Engine, cpu: usize, task: usize) {
        e.cpus[cpu].free_at = CPU_RUNNING;
        e.cpus[cpu].curr = Some(task);
    }

    /// select_idle_sibling: a thread woken while its previous CPU is busy goes to an
    /// idle CPU of its cpuset; with its previous CPU idle, it stays.
    #[test]
    fn a_woken_thread_moves_from_a_busy_cpu_to_an_idle_one() {
        let mut e = engine("cpus = 4", 2);
        let (a, b) = (thread(&e, 0), thread(&e, 1));
        e.tasks[a].ran = true;
        e.tasks[a].cpu = 2;
        assert_eq!(e.select_cpu(a, 10), 2, "its idle previous CPU");
        busy(&mut e, 2, b);
        let to = e.select_cpu(a, 10);
        assert!(to != 2, "stayed on its busy previous CPU");
        assert_eq!(to, 3, "scans on from the previous CPU");
        for c in 0..4 {
            busy(&mut e, c, b);
        }
        assert_eq!(e.select_cpu(a, 10), 2, "no idle CPU: its previous one");
    }

    /// select_idle_core before select_idle_cpu: on 2 cores x 2 threads with CPU 0 busy,
    /// a thread woken there goes to the idle core (CPU 1 or its sibling 3), not to
    /// CPU 0's sibling (2).
    #[test]
    fn an_idle_core_is_preferred_to_a_busy_cores_sibling() {
        let mut e = engine("sockets = 1\ncores_per_socket = 2\nthreads_per_core = 2", 2);
        let (a, b) = (thread(&e, 0), thread(&e, 1));
        e.tasks[a].ran = true;
        e.tasks[a].cpu = 0;
        busy(&mut e, 0, b);
        let to = e.select_cpu(a, 10);
        assert!(to == 1 || to == 3, "went to CPU {to}");
    }

    /// A task chosen as a busy CPU's next whose entry a wake-up moved earlier (wake()
    /// on a task already queued there, as a memtier client woken by its server) is
    /// refused at that earlier time and queued again for when the CPU frees, not lost
    /// (it was, and a 2x MGLRU run of mglru-vs-classic-memcached stopped in its populate).
    #[test]
    fn the_cpus_next_woken_early_still_runs_when_the_cpu_frees() {
        let mut e = engine("cpus = 1", 2);
        let a = thread(&e, 0);
        e.tasks[a].state = super::State::Runnable;
        e.cpus[0].free_at = 1000;
        e.cpus[0].last = Some(thread(&e, 1));
        assert!(!e.admit(a, 0), "the CPU is not free before 1000");
        assert_eq!(e.cpus[0].next, Some(a));
        assert_eq!(e.k.sched.peek(), Some((1000, a)));
        e.schedule(a, 500);
        assert_eq!(e.k.sched.pop(), Some((500, a)));
        assert!(!e.admit(a, 500), "still not free at 500");
        assert_eq!(e.k.sched.pop(), Some((1000, a)), "queued again for 1000");
        assert!(e.admit(a, 1000));
    }

    /// A thread stopped (its workload's `until`) while it was a busy CPU's next leaves
    /// the queue and the CPU picks the next waiting task; it kept the CPU's next before,
    /// so that no task queued there ran again.
    #[test]
    fn a_thread_stopped_as_the_cpus_next_hands_the_cpu_on() {
        let mut e = engine("cpus = 1", 3);
        let (a, b) = (thread(&e, 0), thread(&e, 1));
        for t in [a, b] {
            e.tasks[t].state = super::State::Runnable;
        }
        e.cpus[0].free_at = 1000;
        e.cpus[0].last = Some(thread(&e, 2));
        assert!(!e.admit(a, 0));
        assert!(!e.admit(b, 0));
        assert_eq!(e.cpus[0].next, Some(a));
        e.thread_done(a, 0, 10);
        assert_eq!(e.cpus[0].next, Some(b), "the CPU's next after a");
        assert_eq!(e.k.sched.pop(), Some((1000, b)));
    }

    /// 6.1's defaults on a machine of 8 or more CPUs: 24 ms, 3 ms, 4 ms; on 2 CPUs
    /// (factor 2): 12 ms, 1.5 ms, 2 ms.
    #[test]
    fn tunables_scale_with_log_of_cpus() {
        let t = Tunables::for_cpus(36);
        assert_eq!(
            (t.latency, t.min_granularity, t.wakeup_granularity),
            (24_000_000, 3_000_000, 4_000_000)
        );
        let t = Tunables::for_cpus(2);
        assert_eq!(t.latency, 12_000_000);
        assert_eq!(t.slice(2), 6_000_000);
        // Past sched_nr_latency the period grows and each slice is min_granularity.
        assert_eq!(t.slice(16), 1_500_000);
    }

    /// The domains 6.1 builds: SMT, MC and the machine on 2 sockets x 2 cores x 2
    /// threads; on one socket of single-threaded cores only MC (SMT spans one CPU, the
    /// machine no more than MC).
    #[test]
    fn domains_leave_out_the_degenerate_levels() {
        let e = engine("sockets = 2\ncores_per_socket = 2\nthreads_per_core = 2", 1);
        let t = &e.k.topology;
        let levels: Vec<Domain> = Domain::levels(t).map(|(_, d)| d).collect();
        assert_eq!(levels, [Domain::Smt, Domain::Mc, Domain::Machine]);
        // CPU 0's sibling is 4 (2 x 2 cores, then the second threads); 1 shares its L3.
        assert!(Domain::Smt.spans(t, 0, 4) && !Domain::Smt.spans(t, 0, 1));
        assert!(Domain::Mc.spans(t, 0, 5) && !Domain::Mc.spans(t, 0, 2));
        let e = engine("cpus = 4", 1);
        let levels: Vec<Domain> = Domain::levels(&e.k.topology).map(|(_, d)| d).collect();
        assert_eq!(levels, [Domain::Mc]);
    }

    /// load_balance: a busy CPU whose domain has a CPU with two more tasks pulls one
    /// (the queued task with the largest vruntime), then waits its busy interval (the
    /// domain's weight in ms x 16) before balancing again; a difference of one task is
    /// left alone.
    #[test]
    fn a_busy_cpu_pulls_from_one_with_two_more_tasks() {
        let mut e = engine("cpus = 2", 4);
        let ids: Vec<usize> = (0..4).map(|t| thread(&e, t)).collect();
        busy(&mut e, 0, ids[0]);
        busy(&mut e, 1, ids[1]);
        for (i, &id) in ids[1..].iter().enumerate() {
            e.tasks[id].cpu = 1;
            e.tasks[id].ran = true;
            e.tasks[id].vruntime = 10 * i as u64;
        }
        e.cpus[1].queue = vec![ids[2], ids[3]];
        e.rebalance_domains(0, 5);
        assert_eq!(
            e.cpus[0].queue,
            [ids[3]],
            "the task furthest from running moved"
        );
        assert_eq!((e.tasks[ids[3]].cpu, e.tasks[ids[3]].migrations), (0, 1));
        assert_eq!(e.cpus[0].next_balance[1], 5 + 2 * 16 * 1_000_000);
        // Now 2 against 2: nothing moves, at the next interval either.
        e.cpus[0].next_balance[1] = 0;
        e.rebalance_domains(0, 10);
        assert_eq!((e.cpus[0].queue.len(), e.cpus[1].queue.len()), (1, 1));
    }

    /// nohz idle balance: at the tick of a CPU with a task waiting, an idle CPU on the
    /// other socket (which select_idle_sibling, scanning the LLC, never offers) pulls
    /// it and runs it next; not again within the same tick.
    #[test]
    fn an_idle_cpu_on_another_socket_pulls_a_waiting_task() {
        let mut e = engine("sockets = 2\ncores_per_socket = 1", 3);
        let ids: Vec<usize> = (0..3).map(|t| thread(&e, t)).collect();
        busy(&mut e, 0, ids[0]);
        e.tasks[ids[1]].cpu = 0;
        e.tasks[ids[1]].ran = true;
        e.cpus[0].queue = vec![ids[1]];
        e.nohz_balance_kick(0, 7);
        assert_eq!(e.cpus[1].next, Some(ids[1]));
        assert_eq!(e.tasks[ids[1]].cpu, 1);
        assert!(e.cpus[0].queue.is_empty());
        assert_eq!(
            e.nohz_next,
            super::JIFFY_NS,
            "the next kick at the next tick"
        );
    }

    /// newidle_balance at `now` does not pull a task whose wake-up (made by a step
    /// already run, for a later time) is after `now`: it is not on a run queue yet, and
    /// pulled it would run before it was woken (a memcached worker did, 2.5 us before
    /// its client sent the batch it served). Woken by `now`, it is pulled.
    #[test]
    fn an_idle_cpu_does_not_pull_a_task_woken_later() {
        let mut e = engine("cpus = 2", 3);
        let ids: Vec<usize> = (0..3).map(|t| thread(&e, t)).collect();
        busy(&mut e, 0, ids[0]);
        e.tasks[ids[1]].cpu = 0;
        e.tasks[ids[1]].ran = true;
        e.tasks[ids[1]].enqueued_at = 2000;
        e.cpus[0].queue = vec![ids[1]];
        e.idle_balance(1, 1000);
        assert_eq!(e.cpus[1].next, None, "pulled a task woken at 2000 at 1000");
        assert_eq!(e.cpus[0].queue, [ids[1]]);
        e.idle_balance(1, 2000);
        assert_eq!(e.cpus[1].next, Some(ids[1]));
        assert_eq!(e.k.sched.pop(), Some((2000, ids[1])));
    }
}
