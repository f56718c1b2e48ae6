//! Benchmark clients as tasks: memtier_benchmark's threads beside the memcached
//! workers they drive. Each client thread owns one connection, served by one memcached
//! worker (memtier `-t N -c 1` against `memcached -t N`, as the seeds ran it): the worker
//! answers the connection's pipeline batch (`Step::RoundTrip`: its epoll wake-up, the
//! read and the sends, `memcached_batch`) and wakes the client; the client reads the
//! replies and sends the next batch (`memtier_batch` plus `memtier_request` a request)
//! and wakes the worker. Each wake-up is a try_to_wake_up across CPUs, placed by the
//! scheduler (`cfs`), paying `wakeup_latency` where it lands on an idle CPU. Without
//! `client_cpus` the clients are not simulated and a worker waits `loopback_wait` for
//! each next batch instead.

use super::{new_task, Engine, Kind, State, Task};
use crate::kernel::stats::Cat;

/// The client tasks of workload `wi`, one per worker thread, allowed on `set`
/// (appended to `tasks`).
pub(super) fn client_tasks(
    wi: usize,
    threads: usize,
    set: &[u32],
    tasks: &mut Vec<Task>,
    cpusets: &mut Vec<Vec<u32>>,
) -> Vec<usize> {
    (0..threads)
        .map(|t| {
            tasks.push(new_task(
                cpusets,
                set.to_vec(),
                Kind::Client { w: wi, t },
                State::Waiting,
            ));
            tasks.len() - 1
        })
        .collect()
}

impl Engine {
    /// Worker `t` of workload `wi` answered a batch of `n` requests at `clock`: without
    /// clients it waits `loopback_wait` for the next; with them it wakes its client and
    /// sleeps until the client's next batch wakes it.
    pub(super) fn round_trip(&mut self, id: usize, wi: usize, t: usize) {
        let costs = &self.k.costs;
        let (batch, wait) = (costs.memcached_batch, costs.loopback_wait);
        self.k.spend(batch, Cat::Other);
        let end = self.k.cur.clock;
        let Some(&client) = self.wls[wi].clients.get(t) else {
            self.schedule(id, end + wait);
            return;
        };
        let n = std::mem::take(&mut self.wls[wi].batch_ops[t]);
        self.wls[wi].client_batch[t] = n;
        self.sleep_at(id, end);
        self.wake(client, end);
    }

    /// A woken task runs from `at`; where it lands on an idle CPU it pays the wake-up.
    /// It is queued at once (`try_to_wake_up`), before its waker goes to sleep.
    pub(super) fn wake(&mut self, id: usize, at: u64) {
        let t = &mut self.tasks[id];
        t.state = State::Runnable;
        t.wake_due = true;
        self.try_to_wake_up(id, at);
        self.schedule(id, at);
    }

    /// One step of client `t` of workload `wi`: the replies of its last batch read,
    /// the next batch sent, its worker woken. A client whose worker has stopped stops.
    pub(super) fn client_step(&mut self, id: usize, wi: usize, t: usize, clock: u64) {
        let worker = self.wls[wi].tasks[t];
        if self.tasks[worker].state == State::Done {
            self.tasks[id].state = State::Done;
            self.sleep_at(id, clock);
            return;
        }
        let cpu = self.tasks[id].cpu;
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let n = u64::from(self.wls[wi].client_batch[t]);
        let costs = &self.k.costs;
        let work = costs.memtier_batch + n * costs.memtier_request;
        self.k.spend(work, Cat::Other);
        let end = self.k.cur.clock;
        self.sleep_at(id, end);
        self.wake(worker, end);
    }
}
