//! kswapd (mm/vmscan.c kswapd, balance_pgdat, kswapd_try_to_sleep). Each node's kswapd
//! is a task of the engine; one `step` runs one iteration of balance_pgdat's priority
//! loop, so workload tasks interleave with it in virtual time.

use crate::kernel::lru::Policy;
use crate::kernel::memcg::ROOT;
use crate::kernel::stats::Vm;
use crate::kernel::throttle;
use crate::kernel::vmscan::{
    self, ScanControl, DEF_PRIORITY, MAX_RECLAIM_RETRIES, SWAP_CLUSTER_MAX,
};
use crate::kernel::Kernel;

/// The short nap before kswapd sleeps for good (HZ/10).
pub const NAP_NS: u64 = 100_000_000;

#[derive(Clone, Debug)]
pub enum KswapdState {
    /// Waiting for wakeup_kswapd().
    Sleeping,
    /// Balanced; napping until this time, then sleeps if still balanced.
    Napping { until: u64 },
    /// Inside balance_pgdat.
    Balancing { sc: ScanControl },
}

/// What the engine should do with kswapd after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Run again as soon as its CPU allows.
    Run,
    /// Sleep until this virtual time (or a wakeup).
    NapUntil(u64),
    /// Sleep until woken.
    Sleep,
}

pub struct Kswapd {
    pub node: usize,
    pub state: KswapdState,
}

impl Kswapd {
    pub fn new(node: usize) -> Self {
        Kswapd {
            node,
            state: KswapdState::Sleeping,
        }
    }

    /// A wakeup_kswapd() reached this kswapd while it slept or napped.
    pub fn wake(&mut self, k: &mut Kernel) {
        match self.state {
            KswapdState::Napping { .. } => {
                k.vm.add(Vm::KswapdLowWmarkHitQuickly, 1);
                self.start(k);
            }
            KswapdState::Sleeping => self.start(k),
            KswapdState::Balancing { .. } => {}
        }
    }

    /// The nap ran out.
    pub fn nap_over(&mut self, k: &mut Kernel) -> Next {
        let n = &k.nodes[self.node];
        if n.balanced() || n.kswapd_failures >= MAX_RECLAIM_RETRIES {
            self.state = KswapdState::Sleeping;
            k.nodes[self.node].kswapd_waiting = true;
            return Next::Sleep;
        }
        k.vm.add(Vm::KswapdHighWmarkHitQuickly, 1);
        self.start(k);
        Next::Run
    }

    /// balance_pgdat() begins: kswapd is in a memory stall until it ends (kswapd is in
    /// the root cgroup, so the stall counts system-wide only). A balance that follows
    /// another at once stays in the one stall.
    fn start(&mut self, k: &mut Kernel) {
        k.memstall_enter();
        k.vm.add(Vm::Pageoutrun, 1);
        k.nodes[self.node].kswapd_wake = false;
        k.nodes[self.node].kswapd_waiting = false;
        let mut sc = ScanControl::new(0, None, true);
        sc.priority = DEF_PRIORITY;
        self.state = KswapdState::Balancing { sc };
    }

    /// One iteration of balance_pgdat(): age, then kswapd_shrink_node() at the
    /// current priority; lower the priority when the pass scanned less than its target
    /// or reclaimed nothing.
    pub fn step(&mut self, k: &mut Kernel, p: &mut dyn Policy) -> Next {
        let node = self.node;
        let KswapdState::Balancing { sc } = &mut self.state else {
            return Next::Sleep;
        };
        if k.nodes[node].balanced() {
            return self.finish(k, p, true);
        }
        p.age_node(k, node, sc);
        if sc.priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        let zone = &k.nodes[node].zone;
        sc.nr_to_reclaim = zone.wmark[crate::kernel::node::WMARK_HIGH].max(SWAP_CLUSTER_MAX);
        sc.nr_scanned = 0;
        let reclaimed0 = sc.nr_reclaimed;
        vmscan::shrink_node(k, p, node, sc);
        throttle::wake_pfmemalloc(k, node, false);
        let enough_scanned = sc.nr_scanned >= sc.nr_to_reclaim;
        if !enough_scanned || sc.nr_reclaimed == reclaimed0 {
            sc.priority -= 1;
        }
        if sc.priority < 1 {
            return self.finish(k, p, false);
        }
        Next::Run
    }

    /// End of balance_pgdat() and kswapd_try_to_sleep(): when the priority loop ran out
    /// (not when the node became balanced: that path skips to `out`) and nothing was
    /// reclaimed, count a failure; snapshot refaults; then nap if balanced or run again.
    fn finish(&mut self, k: &mut Kernel, p: &mut dyn Policy, balanced: bool) -> Next {
        let node = self.node;
        if let KswapdState::Balancing { sc } = &self.state {
            if !balanced && sc.nr_reclaimed == 0 {
                k.nodes[node].kswapd_failures += 1;
            }
        }
        p.snapshot_refaults(k, ROOT, node);
        let n = &mut k.nodes[node];
        if n.balanced() || n.kswapd_failures >= MAX_RECLAIM_RETRIES {
            n.dirty = false;
            n.writeback = false;
            n.kswapd_waiting = true;
            let root = k.lruvec(ROOT, node);
            k.lruvecs[root].congested = false;
            throttle::wake_pfmemalloc(k, node, true);
            let until = k.cur.clock + NAP_NS;
            // balance_pgdat()'s end: psi_memstall_leave().
            k.memstall_leave(false);
            self.state = KswapdState::Napping { until };
            return Next::NapUntil(until);
        }
        self.start(k);
        Next::Run
    }
}
