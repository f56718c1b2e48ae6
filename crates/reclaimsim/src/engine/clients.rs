//! Benchmark clients as tasks: memtier_benchmark's threads beside the memcached
//! workers they drive. A client thread owns `clients` connections (memtier `-c`), each
//! served by one memcached worker (memcached hands new connections to its workers round
//! robin: connection c to worker c mod `-t`). A connection has one pipeline batch in
//! flight: the worker answers it (`Step::RoundTrip`: its epoll wake-up, the read and the
//! sends, `memcached_batch`) and hands it to the client; the client reads the replies
//! and sends the next batch (`memtier_batch` plus `memtier_request` a request), and the
//! worker may serve it from then on. A worker goes on with another connection whose
//! batch is waiting and sleeps in epoll_wait when none is (`Step::Idle`); a client goes
//! on with another connection whose replies are waiting and sleeps when none is. Each
//! wake-up of a sleeper is a try_to_wake_up across CPUs, placed by the scheduler
//! (`cfs`), paying `wakeup_latency` where it lands on an idle CPU. With `-t N -c 1`
//! against `memcached -t N`, as the seeds ran it, each worker and client pair ping-pong
//! one connection. Without `client_cpus` the clients are not simulated and a worker
//! waits `loopback_wait` after each batch instead.

use super::{new_task, Engine, Kind, State, Task};
use crate::kernel::stats::Cat;
use crate::workload::Workload;
use std::collections::VecDeque;

/// The client tasks of one workload and the batches between them and its workers.
#[derive(Default)]
pub(super) struct Clients {
    /// The task of each client thread.
    tasks: Vec<usize>,
    /// Per connection: the requests of the batch its client reads next.
    batch: Vec<u32>,
    /// Per client: the connections whose replies wait for it, oldest first.
    replies: Vec<VecDeque<u32>>,
    /// Per client and per worker: asleep until a batch wakes it.
    client_asleep: Vec<bool>,
    worker_asleep: Vec<bool>,
}

/// The client tasks of workload `wi` (appended to `tasks`), allowed on `set`: one per
/// memtier thread of its busiest run. From now on its connections wait for them.
pub(super) fn client_tasks(
    wi: usize,
    gen: &mut dyn Workload,
    workers: usize,
    set: &[u32],
    tasks: &mut Vec<Task>,
    cpusets: &mut Vec<Vec<u32>>,
) -> Clients {
    let Some(conns) = gen.connections() else {
        return Clients::default();
    };
    conns.gate();
    let threads = conns.client_threads();
    let ids = (0..threads)
        .map(|t| {
            let kind = Kind::Client { w: wi, t };
            tasks.push(new_task(cpusets, set.to_vec(), kind, State::Waiting));
            tasks.len() - 1
        })
        .collect();
    Clients {
        tasks: ids,
        batch: Vec::new(),
        replies: vec![VecDeque::new(); threads],
        client_asleep: vec![true; threads],
        worker_asleep: vec![false; workers],
    }
}

impl Engine {
    /// Worker `t` (task `id`) of workload `wi` answered connection `conn`'s batch:
    /// without clients it waits `loopback_wait` for the next; with them it hands the
    /// replies to the connection's client, waking it if asleep, and goes on with
    /// another batch if one waits, else sleeps until a client's next batch wakes it.
    pub(super) fn round_trip(&mut self, id: usize, wi: usize, t: usize, conn: u32) {
        let costs = &self.k.costs;
        let (batch, wait) = (costs.memcached_batch, costs.loopback_wait);
        self.k.spend(batch, Cat::Work);
        let end = self.k.cur.clock;
        let w = &mut self.wls[wi];
        let Some(conns) = w.gen.connections().filter(|_| !w.clients.tasks.is_empty()) else {
            self.schedule(id, end + wait);
            return;
        };
        let (owner, more) = (conns.owner(conn), conns.has_work(t));
        let n = std::mem::take(&mut w.batch_ops[t]);
        let c = &mut w.clients;
        if c.batch.len() <= conn as usize {
            c.batch.resize(conn as usize + 1, 0);
        }
        c.batch[conn as usize] = n;
        c.replies[owner].push_back(conn);
        c.worker_asleep[t] = !more;
        let client = c.tasks[owner];
        let wake = std::mem::take(&mut c.client_asleep[owner]);
        self.go_on_and_wake(id, end, more, wake.then_some(client));
    }

    /// Task `id` goes on at `end` if it has more to do, else sleeps until woken; then
    /// `other`, asleep until now, is woken at `end`.
    fn go_on_and_wake(&mut self, id: usize, end: u64, more: bool, other: Option<usize>) {
        if more {
            self.schedule(id, end);
        } else {
            self.sleep_at(id, end);
        }
        if let Some(other) = other {
            self.wake(other, end);
        }
    }

    /// Worker `t` (task `id`) of workload `wi` has no batch to serve: it sleeps in
    /// epoll_wait until a client's next batch wakes it.
    pub(super) fn worker_idle(&mut self, id: usize, wi: usize, t: usize, clock: u64) {
        self.wls[wi].clients.worker_asleep[t] = true;
        self.sleep_at(id, clock);
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

    /// One step of client `t` (task `id`) of workload `wi`: the replies of its oldest
    /// answered connection read, that connection's next batch sent, its worker woken if
    /// asleep. A connection whose worker has stopped (killed, or its workload's `until`)
    /// is dropped. A client left with nothing to read sleeps.
    pub(super) fn client_step(&mut self, id: usize, wi: usize, t: usize, clock: u64) {
        let Some(conn) = self.wls[wi].clients.replies[t].pop_front() else {
            self.wls[wi].clients.client_asleep[t] = true;
            self.sleep_at(id, clock);
            return;
        };
        let w = &mut self.wls[wi];
        let server = w.gen.connections().map_or(0, |c| c.server(conn));
        let worker = w.tasks[server];
        if self.tasks[worker].state == State::Done {
            let more = !w.clients.replies[t].is_empty();
            w.clients.client_asleep[t] = !more;
            self.go_on_and_wake(id, clock, more, None);
            return;
        }
        let cpu = self.tasks[id].cpu;
        self.k.cur = crate::kernel::Exec::new(clock, cpu, false, None);
        let n = u64::from(self.wls[wi].clients.batch[conn as usize]);
        let costs = &self.k.costs;
        let work = costs.memtier_batch + n * costs.memtier_request;
        self.k.spend(work, Cat::Work);
        let end = self.k.cur.clock;
        let w = &mut self.wls[wi];
        if let Some(conns) = w.gen.connections() {
            conns.batch_sent(conn);
        }
        let c = &mut w.clients;
        let more = !c.replies[t].is_empty();
        c.client_asleep[t] = !more;
        let wake = std::mem::take(&mut c.worker_asleep[server]);
        self.go_on_and_wake(id, end, more, wake.then_some(worker));
    }
}
