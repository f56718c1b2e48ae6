//! Pressure stall information for memory, as Linux 6.1 computes it (kernel/sched/psi.c,
//! include/linux/psi_types.h): per psi group (one per memcg, the root's being the
//! system-wide /proc/pressure/memory) and per CPU, the tasks that are iowait, memstalled,
//! runnable, memstalled while runnable, and the one on the CPU; the time each CPU spends
//! in the states SOME (a task memstalled), FULL (every runnable task memstalled, or the
//! running one reclaiming) and NONIDLE; those times weighted across CPUs by non-idle
//! time into a `total`, and every 2 s the decaying averages of calc_load.
//!
//! The engine tells it when a task wakes, takes or leaves its CPU, moves or sleeps
//! (psi_enqueue, psi_dequeue, psi_task_switch, psi_ttwu_dequeue); the kernel's paths
//! tell it when the running task enters and leaves a memory stall
//! (psi_memstall_enter/leave) or sleeps in io (io_schedule's in_iowait). It only
//! observes: nothing in the model reads it.

use crate::kernel::memcg::{MemcgId, MemcgTree, ROOT};
use crate::kernel::throttle::JIFFY_NS;
use crate::sim::sched::TaskId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// PSI_FREQ (2 s, psi_period): the averages' sampling period.
pub const PSI_FREQ_NS: u64 = 2_000_000_000;
/// calc_load's fixed point (include/linux/sched/loadavg.h): FSHIFT bits of fraction.
pub const FSHIFT: u32 = 11;
pub const FIXED_1: u64 = 1 << FSHIFT;
/// 1/exp(2s/10s), 1/exp(2s/60s), 1/exp(2s/300s) in fixed point (psi.c's EXP_*).
pub const EXP_10S: u64 = 1677;
pub const EXP_60S: u64 = 1981;
pub const EXP_300S: u64 = 2034;

// The task counts of enum psi_task_count (6.1) and their TSK_* bits; TSK_ONCPU has no
// count, as in 6.1 (NR_ONCPU became the PSI_ONCPU bit of the state mask).
const NR_IOWAIT: usize = 0;
const NR_MEMSTALL: usize = 1;
const NR_RUNNING: usize = 2;
const NR_MEMSTALL_RUNNING: usize = 3;
const NR_COUNTS: usize = 4;
const TSK_IOWAIT: u8 = 1 << NR_IOWAIT;
const TSK_MEMSTALL: u8 = 1 << NR_MEMSTALL;
const TSK_RUNNING: u8 = 1 << NR_RUNNING;
const TSK_MEMSTALL_RUNNING: u8 = 1 << NR_MEMSTALL_RUNNING;
const TSK_ONCPU: u8 = 1 << NR_COUNTS;

// The states the model keeps of enum psi_states: memory's two and PSI_NONIDLE.
const SOME: usize = 0;
const FULL: usize = 1;
const NONIDLE: usize = 2;
const NR_STATES: usize = 3;

/// The aggregators: psi.c's PSI_AVGS (the averages and the reported `total`), and the
/// model's own for the sampled time series, with its own `times_prev` as PSI_POLL has,
/// so that sampling does not change what the averages see.
pub const AVGS: usize = 0;
pub const SAMPLES: usize = 1;

/// A task's psi state: the group it is charged to and where its flags are counted.
#[derive(Clone, Copy, Debug, Default)]
struct Task {
    group: MemcgId,
    cpu: u32,
    /// The TSK_* bits counted now.
    flags: u8,
    in_memstall: bool,
    in_iowait: bool,
    runnable: bool,
    oncpu: bool,
}

impl Task {
    /// The flags the task's state gives (what psi_enqueue, psi_dequeue,
    /// psi_task_switch and psi_memstall_enter/leave set and clear).
    fn want(&self) -> u8 {
        let mut f = 0;
        if self.runnable {
            f |= TSK_RUNNING;
            if self.in_memstall {
                f |= TSK_MEMSTALL_RUNNING;
            }
        } else if self.in_iowait {
            f |= TSK_IOWAIT;
        }
        if self.in_memstall {
            f |= TSK_MEMSTALL;
        }
        if self.oncpu {
            f |= TSK_ONCPU;
        }
        f
    }
}

/// struct psi_group_cpu: one group's tasks and state times on one CPU.
#[derive(Clone, Debug, Default)]
struct GroupCpu {
    tasks: [u32; NR_COUNTS],
    /// PSI_ONCPU: the task on the CPU belongs to the group.
    oncpu: bool,
    /// The states (bits SOME, FULL, NONIDLE) since `state_start`.
    state_mask: u8,
    state_start: u64,
    /// ns spent in each state up to `state_start`.
    times: [u64; NR_STATES],
    /// Per aggregator, `times` at its last collection.
    times_prev: [[u64; NR_STATES]; 2],
}

/// struct psi_group: a memcg's (or the system's) pressure.
#[derive(Clone, Debug, Default)]
struct Group {
    cpus: Vec<GroupCpu>,
    /// Per aggregator, the stall time (SOME, FULL) in ns.
    total: [[u64; 2]; 2],
    /// The part of `total[AVGS]` the averages have seen.
    avg_total: [u64; 2],
    /// avg10, avg60, avg300 of SOME and FULL, in FIXED_1 units of percent.
    avg: [[u64; 3]; 2],
    avg_next_update: u64,
    avg_last_update: u64,
    /// When the pending psi_avgs_work runs, if one is queued.
    work_at: Option<u64>,
}

/// One line of a pressure file: the averages in percent (two decimals, as printed) and
/// the total stall time in µs.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, Default, PartialEq)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Stall time in µs since the group was made.
    pub total: u64,
}

/// A memory pressure file (`memory.pressure`, /proc/pressure/memory): its `some` and
/// `full` lines.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, Default, PartialEq)]
pub struct Pressure {
    pub some: PsiLine,
    pub full: PsiLine,
}

/// Every psi group and every task's psi state.
#[derive(Clone, Debug, Default)]
pub struct Psi {
    tasks: Vec<Task>,
    groups: Vec<Group>,
    /// Per memcg: it and its ancestors up to the root (the groups a task's change walks).
    chains: Vec<Vec<MemcgId>>,
    /// Per CPU, the task on it (cpu_curr), for FULL while the running task reclaims.
    curr: Vec<Option<TaskId>>,
    /// The earliest `work_at` of any group.
    next_work: u64,
}

impl Psi {
    /// A group per memcg of `tree`, made at time 0 (group_init: the first average
    /// update a period later), on `nr_cpus` CPUs.
    pub fn new(tree: &MemcgTree, nr_cpus: usize) -> Psi {
        let chains = (0..tree.cgs.len() as MemcgId)
            .map(|m| tree.ancestors(m).collect())
            .collect();
        let group = Group {
            cpus: vec![GroupCpu::default(); nr_cpus],
            avg_next_update: PSI_FREQ_NS,
            ..Default::default()
        };
        Psi {
            tasks: Vec::new(),
            groups: vec![group; tree.cgs.len()],
            chains,
            curr: vec![None; nr_cpus],
            next_work: u64::MAX,
        }
    }

    /// Task `id` (ids given in order) is charged to `memcg`'s group and its ancestors.
    pub fn add_task(&mut self, id: TaskId, memcg: MemcgId, cpu: u32) {
        if self.tasks.len() <= id {
            self.tasks.resize(id + 1, Task::default());
        }
        self.tasks[id] = Task {
            group: memcg,
            cpu,
            ..Default::default()
        };
    }

    fn known(&self, id: TaskId) -> bool {
        id < self.tasks.len() && !self.chains.is_empty()
    }

    /// psi_enqueue on a wake-up to `cpu` (psi_ttwu_dequeue first if it moved).
    pub fn wake(&mut self, id: TaskId, cpu: u32, now: u64) {
        if self.known(id) {
            self.tasks[id].runnable = true;
            self.change(id, cpu, now);
        }
    }

    /// psi_task_switch, next: `id` takes `cpu` (the task there before, if any still
    /// counted on it, leaves it first). Nothing when it kept the CPU between two steps.
    #[inline]
    pub fn switch_in(&mut self, id: TaskId, cpu: u32, now: u64) {
        if self.known(id) && !self.tasks[id].oncpu {
            self.take_cpu(id, cpu, now);
        }
    }

    fn take_cpu(&mut self, id: TaskId, cpu: u32, now: u64) {
        if let Some(prev) = self.curr[cpu as usize].filter(|&p| p != id) {
            if self.tasks[prev].oncpu {
                self.tasks[prev].oncpu = false;
                let c = self.tasks[prev].cpu;
                self.change(prev, c, now);
            }
        }
        self.curr[cpu as usize] = Some(id);
        self.tasks[id].oncpu = true;
        self.change(id, cpu, now);
    }

    /// psi_task_switch, prev: `id` leaves its CPU, still runnable (preempted) or asleep
    /// (psi_dequeue's sleep half).
    pub fn switch_out(&mut self, id: TaskId, runnable: bool, now: u64) {
        if !self.known(id) {
            return;
        }
        let t = &mut self.tasks[id];
        t.oncpu = false;
        t.runnable = runnable;
        let cpu = t.cpu;
        if self.curr[cpu as usize] == Some(id) {
            self.curr[cpu as usize] = None;
        }
        self.change(id, cpu, now);
    }

    /// psi_dequeue without a sleep: a task stopped while it waited (or kept its CPU
    /// between steps) leaves the run queues.
    pub fn dequeue(&mut self, id: TaskId, now: u64) {
        if !self.known(id) {
            return;
        }
        let t = &mut self.tasks[id];
        t.runnable = false;
        t.oncpu = false;
        let cpu = t.cpu;
        if self.curr[cpu as usize] == Some(id) {
            self.curr[cpu as usize] = None;
        }
        self.change(id, cpu, now);
    }

    /// A waiting task moved to `cpu` (load balancing: dequeue there, enqueue here).
    pub fn migrate(&mut self, id: TaskId, cpu: u32, now: u64) {
        if self.known(id) {
            self.change(id, cpu, now);
        }
    }

    /// Whether task `id` is in a memory stall (its PF_MEMSTALL).
    #[inline]
    pub fn in_memstall(&self, id: TaskId) -> bool {
        self.tasks.get(id).is_some_and(|t| t.in_memstall)
    }

    /// psi_memstall_enter() for the running task; returns its previous in_memstall,
    /// which `memstall_leave` takes (the kernel's pflags: nested stalls count once).
    pub fn memstall_enter(&mut self, id: TaskId, now: u64) -> bool {
        if !self.known(id) {
            return true;
        }
        let was = self.tasks[id].in_memstall;
        if !was {
            self.tasks[id].in_memstall = true;
            let cpu = self.tasks[id].cpu;
            self.change(id, cpu, now);
        }
        was
    }

    /// psi_memstall_leave() with what `memstall_enter` returned.
    pub fn memstall_leave(&mut self, id: TaskId, was: bool, now: u64) {
        if was || !self.known(id) {
            return;
        }
        self.tasks[id].in_memstall = false;
        let cpu = self.tasks[id].cpu;
        self.change(id, cpu, now);
    }

    /// current->in_iowait around io_schedule(): the sleep that follows counts as iowait.
    pub fn set_iowait(&mut self, id: TaskId, on: bool, now: u64) {
        if self.known(id) {
            self.tasks[id].in_iowait = on;
            let cpu = self.tasks[id].cpu;
            self.change(id, cpu, now);
        }
    }

    /// psi_task_change: brings the counts of `id`'s groups in line with its state, on
    /// `cpu` (moving them there first if they were counted on another CPU).
    fn change(&mut self, id: TaskId, cpu: u32, now: u64) {
        let t = self.tasks[id];
        let want = t.want();
        if t.cpu != cpu && t.flags != 0 {
            self.change_groups(t.group, t.cpu, t.flags, 0, now);
            self.tasks[id].flags = 0;
        }
        self.tasks[id].cpu = cpu;
        let have = self.tasks[id].flags;
        let (clear, set) = (have & !want, want & !have);
        if clear | set != 0 {
            self.tasks[id].flags = want;
            self.change_groups(t.group, cpu, clear, set, now);
        }
    }

    /// psi_group_change for each group from `memcg` up to the root.
    fn change_groups(&mut self, memcg: MemcgId, cpu: u32, clear: u8, set: u8, now: u64) {
        // A task going to sleep does not restart the averaging clock (wake_clock).
        let wake_clock = !(set == 0 && clear & TSK_RUNNING != 0);
        let curr_stalled = (self.curr[cpu as usize]).is_some_and(|c| self.tasks[c].in_memstall);
        for i in 0..self.chains[memcg as usize].len() {
            let g = self.chains[memcg as usize][i] as usize;
            let gc = &mut self.groups[g].cpus[cpu as usize];
            group_change(gc, clear, set, now, curr_stalled);
            if wake_clock && self.groups[g].work_at.is_none() {
                let at = now + PSI_FREQ_NS;
                self.groups[g].work_at = Some(at);
                self.next_work = self.next_work.min(at);
            }
        }
    }
}

/// psi_group_change on one CPU: close the current state's time (record_times), update
/// the counts, and compute the new states (test_state; FULL also while the task on the
/// CPU, of this group, is memstalled). Changes the model's tasks make out of order on a
/// CPU (a task's clock runs ahead between sync points) count from the CPU's latest.
fn group_change(gc: &mut GroupCpu, clear: u8, set: u8, now: u64, curr_stalled: bool) {
    let now = now.max(gc.state_start);
    record_times(gc, now);
    if clear & TSK_ONCPU != 0 {
        gc.oncpu = false;
    } else if set & TSK_ONCPU != 0 {
        gc.oncpu = true;
    }
    for t in 0..NR_COUNTS {
        if clear & (1 << t) != 0 {
            debug_assert!(gc.tasks[t] > 0, "psi: task count {t} underflow");
            gc.tasks[t] = gc.tasks[t].saturating_sub(1);
        }
        if set & (1 << t) != 0 {
            gc.tasks[t] += 1;
        }
    }
    gc.state_mask = test_states(&gc.tasks, gc.oncpu && curr_stalled);
}

/// test_state for PSI_MEM_SOME, PSI_MEM_FULL and PSI_NONIDLE, as a mask.
fn test_states(tasks: &[u32; NR_COUNTS], oncpu_stalled: bool) -> u8 {
    let mut mask = 0;
    if tasks[NR_MEMSTALL] > 0 {
        mask |= 1 << SOME;
        if tasks[NR_RUNNING] == tasks[NR_MEMSTALL_RUNNING] || oncpu_stalled {
            mask |= 1 << FULL;
        }
    }
    if tasks[NR_IOWAIT] > 0 || tasks[NR_MEMSTALL] > 0 || tasks[NR_RUNNING] > 0 {
        mask |= 1 << NONIDLE;
    }
    mask
}

/// record_times: the time since `state_start` goes to each state the CPU was in.
fn record_times(gc: &mut GroupCpu, now: u64) {
    let delta = now - gc.state_start;
    gc.state_start = now;
    for s in 0..NR_STATES {
        if gc.state_mask & (1 << s) != 0 {
            gc.times[s] += delta;
        }
    }
}

/// get_recent_times: a CPU's time in each state since the aggregator's last look,
/// counting the current state up to `now`.
fn recent_times(gc: &mut GroupCpu, agg: usize, now: u64) -> [u64; NR_STATES] {
    let mut times = gc.times;
    let live = now.saturating_sub(gc.state_start);
    let mut delta = [0; NR_STATES];
    for s in 0..NR_STATES {
        if gc.state_mask & (1 << s) != 0 {
            times[s] += live;
        }
        delta[s] = times[s] - gc.times_prev[agg][s];
        gc.times_prev[agg][s] = times[s];
    }
    delta
}

impl Group {
    /// psi_show's work on one group: a collection up to `now`, and the averages updated
    /// if their 2 s period is over.
    fn show(&mut self, now: u64) {
        self.collect(AVGS, now);
        if now >= self.avg_next_update {
            self.avg_next_update = self.update_averages(now);
        }
    }

    /// collect_percpu_times: each CPU's SOME and FULL time weighted by its non-idle
    /// time, over the non-idle time of all CPUs, added to the aggregator's total;
    /// whether any CPU was non-idle since the last look. The kernel weights by
    /// non-idle jiffies (nsecs_to_jiffies); the model by ns, which is the same but for
    /// the rounding, and keeps a CPU non-idle for less than a jiffy between two looks.
    fn collect(&mut self, agg: usize, now: u64) -> bool {
        let mut deltas = [0u128; 2];
        let mut nonidle_total = 0u128;
        for gc in &mut self.cpus {
            let times = recent_times(gc, agg, now);
            let nonidle = times[NONIDLE] as u128;
            nonidle_total += nonidle;
            deltas[SOME] += times[SOME] as u128 * nonidle;
            deltas[FULL] += times[FULL] as u128 * nonidle;
        }
        for s in [SOME, FULL] {
            self.total[agg][s] += (deltas[s] / nonidle_total.max(1)) as u64;
        }
        nonidle_total > 0
    }

    /// update_averages at `now`: the stall time since the last update (at most the
    /// period; any excess waits for the next), as a percentage of the period, into the
    /// three averages; periods the averaging clock missed (it stops while the group is
    /// idle) decay them as zeroes. Returns the next update's time.
    fn update_averages(&mut self, now: u64) -> u64 {
        let expires = self.avg_next_update;
        let missed = if now - expires >= PSI_FREQ_NS {
            (now - expires) / PSI_FREQ_NS
        } else {
            0
        };
        let next = expires + (1 + missed) * PSI_FREQ_NS;
        let period = now - (self.avg_last_update + missed * PSI_FREQ_NS);
        self.avg_last_update = now;
        for s in [SOME, FULL] {
            let sample = (self.total[AVGS][s] - self.avg_total[s]).min(period);
            self.avg_total[s] += sample;
            calc_avgs(&mut self.avg[s], missed, sample, period);
        }
        next
    }

    /// psi_avgs_work at `now`: collect, update the averages when due, and queue the
    /// next run for the next update (a jiffy after it) while the group was non-idle.
    fn avgs_work(&mut self, now: u64) {
        let nonidle = self.collect(AVGS, now);
        if now >= self.avg_next_update {
            self.avg_next_update = self.update_averages(now);
        }
        self.work_at = nonidle.then(|| {
            let wait = self.avg_next_update.saturating_sub(now) / JIFFY_NS + 1;
            now + wait * JIFFY_NS
        });
    }

    /// psi_show's line for SOME or FULL.
    fn line(&self, s: usize) -> PsiLine {
        let pct =
            |v: u64| (v >> FSHIFT) as f64 + (((v & (FIXED_1 - 1)) * 100) >> FSHIFT) as f64 / 100.0;
        PsiLine {
            avg10: pct(self.avg[s][0]),
            avg60: pct(self.avg[s][1]),
            avg300: pct(self.avg[s][2]),
            total: self.total[AVGS][s] / 1000,
        }
    }
}

impl Psi {
    /// Runs the averaging work that is due by `now`, in time order per group.
    #[inline]
    pub fn tick(&mut self, now: u64) {
        if now >= self.next_work {
            self.run_work(now);
        }
    }

    fn run_work(&mut self, now: u64) {
        let mut next = u64::MAX;
        for g in &mut self.groups {
            while let Some(at) = g.work_at.filter(|&at| at <= now) {
                g.avgs_work(at);
            }
            next = next.min(g.work_at.unwrap_or(u64::MAX));
        }
        self.next_work = next;
    }

    /// psi_show at `now` for every group: collect, and update the averages if due.
    pub fn show_all(&mut self, now: u64) {
        self.tick(now);
        for g in &mut self.groups {
            g.show(now);
        }
    }

    /// psi_show at `now` for `memcg`'s group alone (a read of its memory.pressure): the
    /// averaging work due by then, a collection, the averages updated if due; the file.
    pub fn show(&mut self, memcg: MemcgId, now: u64) -> Pressure {
        self.tick(now);
        self.groups[memcg as usize].show(now);
        self.pressure(memcg)
    }

    /// The pressure file of `memcg` (the root: /proc/pressure/memory) as last shown.
    pub fn pressure(&self, memcg: MemcgId) -> Pressure {
        let g = &self.groups[memcg as usize];
        Pressure {
            some: g.line(SOME),
            full: g.line(FULL),
        }
    }

    /// The system-wide pressure (the root group).
    pub fn system(&self) -> Pressure {
        self.pressure(ROOT)
    }

    /// For the time series: per memcg, the SOME and FULL totals (µs) at `now`, through
    /// the model's own aggregator.
    pub fn sample(&mut self, now: u64) -> Vec<[u64; 2]> {
        (self.groups.iter_mut())
            .map(|g| {
                g.collect(SAMPLES, now);
                [g.total[SAMPLES][SOME] / 1000, g.total[SAMPLES][FULL] / 1000]
            })
            .collect()
    }
}

/// calc_load (include/linux/sched/loadavg.h): one step of the exponential average in
/// fixed point, rounding up while it rises.
pub fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut new = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        new += FIXED_1 - 1;
    }
    new / FIXED_1
}

/// fixed_power_int (kernel/sched/loadavg.c): x^n in fixed point with `frac_bits` bits.
pub fn fixed_power_int(mut x: u64, frac_bits: u32, mut n: u64) -> u64 {
    let mut result = 1u64 << frac_bits;
    let half = 1u64 << (frac_bits - 1);
    while n > 0 {
        if n & 1 != 0 {
            result = (result * x + half) >> frac_bits;
        }
        n >>= 1;
        if n > 0 {
            x = (x * x + half) >> frac_bits;
        }
    }
    result
}

/// calc_load_n: `n` steps of calc_load with the same `active`.
pub fn calc_load_n(load: u64, exp: u64, active: u64, n: u64) -> u64 {
    calc_load(load, fixed_power_int(exp, FSHIFT, n), active)
}

/// calc_avgs: decay the averages over `missed` empty periods, then fold in `time` of
/// stall over `period` as a percentage.
pub fn calc_avgs(avg: &mut [u64; 3], missed: u64, time: u64, period: u64) {
    let exps = [EXP_10S, EXP_60S, EXP_300S];
    if missed > 0 {
        for (a, e) in avg.iter_mut().zip(exps) {
            *a = calc_load_n(*a, e, 0, missed);
        }
    }
    let pct = time * 100 / period.max(1) * FIXED_1;
    for (a, e) in avg.iter_mut().zip(exps) {
        *a = calc_load(*a, e, pct);
    }
}

impl crate::kernel::Kernel {
    /// psi_memstall_enter() for the running task (nothing outside a task); what
    /// `memstall_leave` takes.
    pub fn memstall_enter(&mut self) -> bool {
        if !self.sched.in_task() {
            return true;
        }
        let id = self.sched.current;
        self.psi.memstall_enter(id, self.cur.clock)
    }

    /// psi_memstall_leave() for the running task.
    pub fn memstall_leave(&mut self, was: bool) {
        if self.sched.in_task() {
            let id = self.sched.current;
            self.psi.memstall_leave(id, was, self.cur.clock);
        }
    }

    /// The read of folio `pfn` from `start` to now was a stall if the folio is
    /// PG_workingset (swap_readpage, filemap_read_folio). For the paths where the model
    /// checks the refault after the read (the kernel checks it before), the stall is
    /// counted once the refault is known, from the read's start.
    pub fn workingset_read_stall(&mut self, pfn: crate::kernel::folio::Pfn, start: u64, end: u64) {
        use crate::kernel::folio::pg;
        if !self.sched.in_task() || !self.folios[pfn as usize].test(pg::WORKINGSET) {
            return;
        }
        let id = self.sched.current;
        let was = self.psi.memstall_enter(id, start);
        self.psi.memstall_leave(id, was, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// A root with two children, `/a` (1) and `/b` (2), on `cpus` CPUs; tasks 0..4
    /// in `/a`, task 4 in `/b`.
    fn psi(cpus: usize) -> Psi {
        let mut tree = MemcgTree::default();
        tree.add("/a", ROOT);
        tree.add("/b", ROOT);
        let mut p = Psi::new(&tree, cpus);
        for id in 0..4 {
            p.add_task(id, 1, 0);
        }
        p.add_task(4, 2, 0);
        p
    }

    /// Task `id` wakes on `cpu` and runs there from `t`.
    fn run(p: &mut Psi, id: TaskId, cpu: u32, t: u64) {
        p.wake(id, cpu, t);
        p.switch_in(id, cpu, t);
    }

    /// One task on one CPU memstalled for the first half of every 2 s period: each
    /// update samples 50%, and after five updates avg10 is what five steps of calc_load
    /// give: by hand, 0 -> 18550 -> 33740 -> 46178 -> 56363 -> 64703 in FIXED_1 units
    /// (64703 / 2048 = 31.59%; the continuous 50 x (1 - e^-1) is 31.61). The updates
    /// run at 2 s, then a jiffy after each later period's end (the work is queued for
    /// nsecs_to_jiffies(avg_next_update - now) + 1). The stall is the only non-idle
    /// task's, so full equals some.
    #[test]
    fn half_stalled_task_gives_calc_loads_avg10() {
        let mut p = psi(1);
        run(&mut p, 0, 0, 0);
        for period in 0..6 {
            let t = period * 2 * S;
            p.tick(t);
            let was = p.memstall_enter(0, t);
            p.tick(t + S);
            p.memstall_leave(0, was, t + S);
        }
        assert_eq!(p.groups[1].avg_last_update, 10 * S + JIFFY_NS);
        assert_eq!(p.groups[1].avg[SOME][0], 64703);
        let a = p.pressure(1);
        assert_eq!(a.some.avg10, 31.59);
        assert_eq!(a.some, a.full);
        // Stall time up to the last collection, at 10 s + 4 ms: 5 s and 4 ms.
        assert_eq!(a.some.total, (5 * S + JIFFY_NS) / 1000);
        assert_eq!(p.system(), a, "the root group sees its child's task");
        assert_eq!(p.pressure(2), Pressure::default(), "a sibling sees nothing");
    }

    /// A task memstalled asleep (a throttle) while another task of its group runs on
    /// the CPU: some, not full. With the stalled task on the CPU reclaiming and the
    /// other runnable behind it: full too (the running task is in_memstall).
    #[test]
    fn full_only_when_nothing_productive_runs() {
        let mut p = psi(1);
        run(&mut p, 0, 0, 0);
        p.memstall_enter(0, 0);
        p.switch_out(0, false, 0);
        run(&mut p, 1, 0, 0);
        p.show_all(S);
        let a = p.pressure(1);
        assert_eq!((a.some.total, a.full.total), (S / 1000, 0));
        // Task 0 wakes and takes the CPU, still stalled; task 1 waits.
        p.switch_out(1, true, S);
        run(&mut p, 0, 0, S);
        p.show_all(2 * S);
        let a = p.pressure(1);
        assert_eq!((a.some.total, a.full.total), (2 * S / 1000, S / 1000));
    }

    /// Two CPUs, a stalled task on one and nothing on the other: the idle CPU has no
    /// weight, so some (and full) is 100%. With a busy, not stalled task of the same
    /// group on the other CPU instead: some = full = 50% (each CPU weighted by its
    /// non-idle time).
    #[test]
    fn cpus_are_weighted_by_non_idle_time() {
        let mut p = psi(2);
        run(&mut p, 0, 0, 0);
        p.memstall_enter(0, 0);
        p.show_all(2 * S);
        let a = p.pressure(1);
        assert_eq!((a.some.total, a.full.total), (2 * S / 1000, 2 * S / 1000));
        assert_eq!(
            a.some.avg10,
            100.0 - 81.89,
            "one sample of 100%: 100 x (1 - 1677/2048)"
        );
        let mut p = psi(2);
        run(&mut p, 0, 0, 0);
        p.memstall_enter(0, 0);
        run(&mut p, 1, 1, 0);
        p.show_all(2 * S);
        let a = p.pressure(1);
        assert_eq!((a.some.total, a.full.total), (S / 1000, S / 1000));
    }

    /// Periods the averaging clock misses while the group is idle decay the averages
    /// as zeroes (calc_load_n): one sample of 100% (at 2 s), a zero at 4.004 s when the
    /// work finds the group idle and stops, then at 20 s seven missed periods and a
    /// zero: avg10 is 100% x (1 - r) x r^9 with r = 1677/2048, within rounding.
    #[test]
    fn missed_periods_decay_the_averages() {
        let mut p = psi(1);
        run(&mut p, 0, 0, 0);
        p.memstall_enter(0, 0);
        p.switch_out(0, false, 2 * S);
        p.memstall_leave(0, false, 2 * S);
        p.tick(5 * S);
        assert!(p.groups[1].work_at.is_none(), "the clock stops once idle");
        p.show_all(20 * S);
        let avg10 = p.pressure(1).some.avg10;
        let r = 1677.0f64 / 2048.0;
        let expect = 100.0 * (1.0 - r) * r.powi(9);
        assert!((avg10 - expect).abs() < 0.2, "{avg10} vs {expect}");
        assert_eq!(
            fixed_power_int(EXP_10S, FSHIFT, 2),
            1373,
            "(1677^2 + 1024) >> 11"
        );
    }

    /// An io sleep is non-idle without being a stall: it gives a stalled task's CPU
    /// weight but no pressure of its own.
    #[test]
    fn iowait_is_non_idle_but_no_stall() {
        let mut p = psi(2);
        run(&mut p, 0, 0, 0);
        p.set_iowait(0, true, 0);
        p.switch_out(0, false, 0);
        run(&mut p, 1, 1, 0);
        p.memstall_enter(1, 0);
        p.show_all(S);
        let a = p.pressure(1);
        assert_eq!(a.some.total, S / 2 / 1000);
    }
}
