//! The page allocator's order-0 path (mm/page_alloc.c): each CPU keeps a list of free
//! pages per zone (struct per_cpu_pages) in front of the zone's buddy free list, which
//! only zone->lock guards. An allocation takes from its CPU's list and refills it a
//! batch at a time under the lock; a free goes to the list and, past `high`, a batch
//! goes back. Pages on the per-CPU lists are not in NR_FREE_PAGES, so the watermarks do
//! not see them until they are drained.

use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{pg, Folio, Link, Pfn, NIL};
use crate::kernel::node::{Node, WMARK_LOW};
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::Kernel;
use crate::sim::lock::{LockRef, LockSite};

/// struct per_cpu_pages of one CPU for one zone.
#[derive(Clone, Debug, Default)]
pub struct Pcp {
    /// The free pages, the most recently freed (hottest) last.
    pub list: Vec<Pfn>,
    pub high: u64,
    pub batch: u64,
    /// Doubles the bulk free after consecutive frees with no allocation between.
    free_factor: u32,
}

/// Models zone_batchsize() (6.1): about a quarter of a thousandth of the zone, at most
/// 64 pages before the last step, rounded to 2^n - 1 (63 for zones of 1 GiB and up).
pub fn zone_batchsize(managed: u64) -> u64 {
    let batch = ((managed >> 10).min(256) / 4).max(1);
    let b = batch + batch / 2;
    (1u64 << (63 - b.leading_zeros())) - 1
}

/// Models zone_highsize() (6.1, percpu_pagelist_high_fraction = 0): the zone's low
/// watermark split over the node's CPUs, at least four batches.
pub fn zone_highsize(low_wmark: u64, node_cpus: u64, batch: u64) -> u64 {
    (low_wmark / node_cpus.max(1)).max(batch << 2)
}

/// The per-CPU lists of every CPU for every node, indexed cpu * nodes + node;
/// `cpu_node` gives each CPU's node. zone_highsize() splits a zone's high over its
/// node's CPUs, or over every online CPU when the node has none (6.1).
pub fn pcp_lists(nodes: &[Node], cpu_node: &[u16]) -> Vec<Pcp> {
    let cpus = cpu_node.len();
    let node_cpus: Vec<u64> = (0..nodes.len())
        .map(|n| cpu_node.iter().filter(|&&c| c as usize == n).count() as u64)
        .map(|c| if c == 0 { cpus as u64 } else { c })
        .collect();
    (0..cpus)
        .flat_map(|_| nodes.iter().zip(&node_cpus))
        .map(|(n, &node_cpus)| {
            // zone_set_pageset_high_and_batch(): at least one page.
            let batch = zone_batchsize(n.zone.managed).max(1);
            let high = zone_highsize(n.zone.wmark[WMARK_LOW], node_cpus, batch);
            Pcp {
                list: Vec::new(),
                high,
                batch,
                free_factor: 0,
            }
        })
        .collect()
}

impl Kernel {
    fn pcp_index(&self, cpu: u32, node: usize) -> usize {
        cpu as usize * self.nodes.len() + node
    }

    /// Models rmqueue_pcplist() for order 0: a page from the running CPU's list for
    /// `node`, refilled from the buddy list when empty; None when the zone has none left
    /// (others took them between the caller's watermark check and now).
    pub fn take_free_page(&mut self, node: usize) -> Option<Pfn> {
        let i = self.pcp_index(self.cur.cpu, node);
        self.pcp[i].free_factor >>= 1;
        if self.pcp[i].list.is_empty() {
            self.rmqueue_bulk(node, i);
        }
        let pfn = self.pcp[i].list.pop()?;
        let f = &mut self.folios[pfn as usize];
        debug_assert!(f.flags == 0);
        f.flags = pg::ALLOCATED | pg::HELD;
        self.vm.add(Vm::Pgalloc, 1);
        self.spend(self.costs.page_alloc, Cat::Other);
        Some(pfn)
    }

    /// Models rmqueue_bulk(): a batch of buddy pages to per-CPU list `i`, under
    /// zone->lock.
    fn rmqueue_bulk(&mut self, node: usize, i: usize) {
        self.spin_lock(LockRef::Zone(node), LockSite::RmqueueBulk);
        for _ in 0..self.pcp[i].batch {
            let Some(pfn) = self.nodes[node]
                .free_list
                .pop_head(&mut self.links, &mut self.folios)
            else {
                break;
            };
            self.nodes[node].zone.free -= 1;
            self.folios[pfn as usize].clear(pg::HELD);
            self.pcp[i].list.push(pfn);
            self.spend(self.costs.list_op, Cat::ListOps);
        }
        self.spin_unlock(LockRef::Zone(node));
    }

    /// Models free_unref_page() for a frame that is on no list, unmapped and
    /// unreferenced: uncharge it and put it on the running CPU's list; past the list's
    /// high mark, give a batch back to the buddy list.
    pub fn free_folio(&mut self, pfn: Pfn) {
        self.free_frame(pfn, true);
    }

    /// __free_page() of a frame charged to no memcg: a compressed pool's page (zswap's
    /// zpool, zram's zsmalloc), which alloc_page without __GFP_ACCOUNT took.
    pub fn free_unaccounted(&mut self, pfn: Pfn) {
        self.free_frame(pfn, false);
    }

    fn free_frame(&mut self, pfn: Pfn, charged: bool) {
        // The memcg's usage is every CPU's: it drops from now on. An unaccounted frame
        // changes no usage; its pool has let it go already, so no other task may see it
        // between the pool and the free list.
        if charged {
            self.sync();
        }
        let f = self.folios[pfn as usize];
        // uncharge_folio(): VM_BUG_ON_FOLIO(folio_test_lru(folio), folio); the model's
        // lru_add batch is the LRU too, and nothing maps or pins a freed frame.
        vm_bug_on!(
            f.test(pg::LRU | pg::IN_LRU_ADD),
            "folio {pfn} freed on the LRU"
        );
        vm_bug_on!(
            f.pins() > 0 || f.mapped(),
            "folio {pfn} freed while referenced"
        );
        // Only an allocated (so charged) frame is uncharged and freed: free_page_is_bad()
        // in free_pages_prepare() would catch a second free.
        vm_bug_on!(!f.test(pg::ALLOCATED), "frame {pfn} freed twice");
        // The folio leaves its memcg: a plugin governing it hears of it.
        crate::kernel::lru::plugin::note_removed(self, pfn);
        if charged {
            self.memcgs.uncharge(f.memcg, 1);
            // uncharge_batch(): the PGPGOUT event.
            self.memcg_rstat_updated(f.memcg, 1);
        }
        self.folios[pfn as usize] = Folio::default();
        self.links[pfn as usize] = Link::NONE;
        self.folio_swap[pfn as usize] = NIL;
        let node = self.node_of(pfn);
        let i = self.pcp_index(self.cur.cpu, node);
        self.pcp[i].list.push(pfn);
        self.vm.add(Vm::Pgfree, 1);
        self.spend(self.costs.page_free, Cat::Other);
        let high = self.pcp_high(node, i);
        if self.pcp[i].list.len() as u64 >= high {
            let n = self.nr_pcp_free(i, high);
            self.free_pcppages_bulk(node, i, n);
        }
    }

    /// Models nr_pcp_high() (6.1): while kswapd reclaims the zone (ZONE_RECLAIM_ACTIVE),
    /// a list keeps at most four batches, so freed pages reach the buddy list sooner.
    fn pcp_high(&self, node: usize, i: usize) -> u64 {
        let p = &self.pcp[i];
        if self.nodes[node].kswapd_waiting {
            p.high
        } else {
            p.high.min(p.batch << 2)
        }
    }

    /// Models nr_pcp_free() (6.1): a batch, doubled for each further free that found the
    /// list full with no allocation between, between one batch and high - batch.
    fn nr_pcp_free(&mut self, i: usize, high: u64) -> u64 {
        let p = &mut self.pcp[i];
        if high < p.batch {
            return 1;
        }
        let (min, max) = (p.batch, high - p.batch);
        let batch = p.batch << p.free_factor;
        if batch < max {
            p.free_factor += 1;
        }
        batch.clamp(min, max.max(min))
    }

    /// Models free_pcppages_bulk(): the `n` oldest pages of per-CPU list `i` go back to
    /// the buddy list under zone->lock, and count as free for the watermarks.
    fn free_pcppages_bulk(&mut self, node: usize, i: usize, n: u64) {
        self.spin_lock(LockRef::Zone(node), LockSite::FreePcpBulk);
        let n = (n as usize).min(self.pcp[i].list.len());
        let pages: Vec<Pfn> = self.pcp[i].list.drain(..n).collect();
        for pfn in pages {
            self.nodes[node]
                .free_list
                .push_head(&mut self.links, &mut self.folios, pfn);
            self.nodes[node].zone.free += 1;
            self.spend(self.costs.list_op, Cat::ListOps);
        }
        self.spin_unlock(LockRef::Zone(node));
    }

    /// Models drain_all_pages(NULL) (__drain_all_pages, 6.1): every CPU's lists back to
    /// the buddy lists, the caller doing the work (6.0+ drains remote lists under their
    /// pcp->lock; 5.18's queued a work item on each CPU and waited). One drain at a time:
    /// a caller that finds pcpu_drain_mutex taken (mutex_trylock) returns at once
    /// without draining, and its allocation retries the free lists.
    pub fn drain_all_pages(&mut self) {
        if !self.spin_trylock(LockRef::PcpDrain, LockSite::Other) {
            self.vm.add(Vm::DrainAllPagesBusy, 1);
            return;
        }
        self.vm.add(Vm::DrainAllPages, 1);
        for i in 0..self.pcp.len() {
            let n = self.pcp[i].list.len() as u64;
            if n > 0 {
                self.free_pcppages_bulk(i % self.nodes.len(), i, n);
            }
        }
        self.spin_unlock(LockRef::PcpDrain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_and_high_follow_6_1() {
        // 4 GiB zone: 1M pages >> 10 = 1024, capped 256, / 4 = 64, 96 -> 64 - 1.
        assert_eq!(zone_batchsize(1 << 20), 63);
        // 256 MiB: 64 / 4 = 16, 24 -> 16 - 1.
        assert_eq!(zone_batchsize(1 << 16), 15);
        // Tiny zones keep one page.
        assert_eq!(zone_batchsize(1000), 0);
        assert_eq!(zone_highsize(10_000, 4, 63), 2500);
        assert_eq!(zone_highsize(1000, 104, 63), 252);
    }

    /// One drain at a time: a caller that finds pcpu_drain_mutex taken (here released
    /// only later in virtual time) returns at once with every list as it was; once it
    /// is free, a drain empties every CPU's lists into the buddy lists.
    #[test]
    fn a_drain_that_finds_another_under_way_returns_at_once() {
        let mut k = Kernel::new(&crate::kernel::config::Setup::small(1 << 16, 2));
        k.costs.lock_acquire = 0;
        k.cur.cpu = 1;
        k.take_free_page(0).expect("a free page");
        let free = k.nodes[0].zone.free;
        let listed = |k: &Kernel| k.pcp.iter().map(|p| p.list.len()).sum::<usize>();
        let before = listed(&k);
        assert!(
            before > 0,
            "the refill left the rest of a batch on CPU 1's list"
        );
        let t = k.cur.clock;
        k.pcp_drain.free_at = t + 5000;
        k.drain_all_pages();
        assert_eq!(listed(&k), before, "nothing drained");
        assert_eq!(k.vm.get(Vm::DrainAllPagesBusy), 1);
        assert_eq!((k.vm.get(Vm::DrainAllPages), k.cur.clock), (0, t));
        k.cur.clock = t + 5000;
        k.drain_all_pages();
        assert_eq!(listed(&k), 0, "every list drained");
        assert_eq!(k.nodes[0].zone.free, free + before as u64);
        assert_eq!(k.vm.get(Vm::DrainAllPages), 1);
        assert!(k.pcp_drain.owner.is_none(), "the mutex is let go");
    }
}
