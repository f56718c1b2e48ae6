//! The classic active/inactive LRU (mm/vmscan.c and mm/workingset.c without
//! CONFIG_LRU_GEN), as in Linux 6.1.

use super::{Policy, Verdict};
use crate::kernel::batch;
use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{folio_lru_list, lru, pg, Pfn};
use crate::kernel::list::List;
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::rmap;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::throttle;
use crate::kernel::vmscan::{self, ReclaimStat, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::kernel::workingset::{Shadow, EVICTION_MASK};
use crate::kernel::Kernel;

const ANON: usize = 0;
const FILE: usize = 1;

/// Scan balance modes of get_scan_count().
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    Equal,
    Fract,
    Anon,
    File,
}

pub struct Classic {
    /// Per lruvec: the five lists, head newest.
    lists: Vec<[List; lru::NR_LRU_LISTS]>,
    _pin: std::marker::PhantomPinned,
}

impl Classic {
    pub fn new(k: &Kernel) -> Self {
        Classic {
            lists: vec![Default::default(); k.lruvecs.len()],
            _pin: std::marker::PhantomPinned,
        }
    }
}

/// Sum of a list's size over the memcg subtree of `lv` on its node (lruvec_page_state
/// of a memcg lruvec is hierarchical).
fn lru_size_hier(k: &Kernel, lv: usize, list: usize) -> u64 {
    let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
    if memcg == ROOT {
        return (0..k.memcgs.cgs.len())
            .map(|m| k.lruvecs[k.lruvec(m as MemcgId, node)].nr[list])
            .sum();
    }
    k.memcgs
        .subtree(memcg)
        .iter()
        .map(|&m| k.lruvecs[k.lruvec(m, node)].nr[list])
        .sum()
}

fn workingset_activate_hier(k: &Kernel, lv: usize, t: usize) -> u64 {
    let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
    k.memcgs
        .subtree(memcg)
        .iter()
        .map(|&m| k.lruvecs[k.lruvec(m, node)].workingset_activate[t])
        .sum()
}

/// Models inactive_is_low(): the inactive list is smaller than active / sqrt(10 * GiB).
pub fn inactive_is_low(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { (10 * gb).isqrt() } else { 1 };
    inactive * ratio < active
}

/// Models workingset_age_nonresident(): advance the clock of the lruvec and ancestors.
fn workingset_age_nonresident(k: &mut Kernel, lv: usize, nr: u64) {
    let node = k.lruvecs[lv].node as usize;
    let memcg = k.lruvecs[lv].memcg;
    for m in k.memcgs.ancestors(memcg).collect::<Vec<_>>() {
        let l = k.lruvec(m, node);
        k.lruvecs[l].nonresident_age += nr;
    }
}

/// Models lru_note_cost() (6.1: the cost is the pages written out), applied to the
/// lruvec and its ancestors, halving both costs when they exceed a quarter of the LRU.
/// Locking follows the protocol: with per-lruvec locks (5.11+, "mm/lru: move lock into
/// lru_note_cost") each ancestor's lruvec lock is taken in turn, so every memcg's
/// reclaim takes the root lruvec's lock here; with the node lock (<= 5.10) the caller
/// already holds the node lock, or it is taken once (lru_note_cost_page()).
fn lru_note_cost(k: &mut Kernel, lv: usize, file: bool, nr: u64) {
    let node = k.lruvecs[lv].node as usize;
    let memcg = k.lruvecs[lv].memcg;
    let per_lruvec = k.lru_clear_before_lock();
    let held = k.holds_lock_of(lv);
    if !per_lruvec && !held {
        k.lock_site = crate::sim::lock::LockSite::NoteCost;
        k.lock_lruvec(lv);
    }
    for m in k.memcgs.ancestors(memcg).collect::<Vec<_>>() {
        let l = k.lruvec(m, node);
        if per_lruvec {
            k.unlock_if_held();
            k.lock_site = crate::sim::lock::LockSite::NoteCost;
            k.lock_lruvec(l);
        }
        k.spend(k.costs.list_op, Cat::ListOps);
        let size: u64 = (0..4).map(|i| lru_size_hier(k, l, i)).sum();
        let v = &mut k.lruvecs[l];
        if file {
            v.file_cost += nr;
        } else {
            v.anon_cost += nr;
        }
        if v.file_cost + v.anon_cost > size / 4 {
            v.file_cost /= 2;
            v.anon_cost /= 2;
        }
    }
    if per_lruvec || !held {
        k.unlock_if_held();
    }
}

/// Models get_scan_count(): how many pages of each list to scan at this priority.
pub fn get_scan_count(k: &Kernel, lv: usize, sc: &mut ScanControl) -> [u64; 4] {
    let memcg = k.lruvecs[lv].memcg;
    let swappiness = u64::from(sc.swappiness(k));
    // No swap, or cgroup reclaim with swappiness 0: file only.
    let (balance, fraction, denominator) =
        if !sc.may_swap || !k.can_swap(memcg) || (sc.cgroup_reclaim() && swappiness == 0) {
            (ScanBalance::File, [0, 0], 1)
        } else if sc.priority == 0 && swappiness != 0 {
            (ScanBalance::Equal, [0, 0], 1)
        } else if sc.file_is_tiny {
            (ScanBalance::Anon, [0, 0], 1)
        } else if sc.cache_trim_mode {
            (ScanBalance::File, [0, 0], 1)
        } else {
            let (ac, fc) = (sc.anon_cost, sc.file_cost);
            let total = ac + fc;
            let a = total + ac;
            let f = total + fc;
            let t = a + f;
            let ap = swappiness * (t + 1) / (a + 1);
            let fp = (200 - swappiness) * (t + 1) / (f + 1);
            (ScanBalance::Fract, [ap, fp], ap + fp)
        };
    let root = sc.root();
    let mut nr = [0u64; 4];
    for (l, out) in nr.iter_mut().enumerate() {
        let file = l >= lru::INACTIVE_FILE;
        let size = k.lruvecs[lv].nr[l];
        let (min, low) = k.memcgs.protection(root, memcg);
        let mut scan = if min > 0 || low > 0 {
            let prot = if !sc.memcg_low_reclaim && low > min {
                sc.memcg_low_skipped = true;
                low
            } else {
                min
            };
            let cg = k.memcgs.cgs[memcg as usize].usage.max(prot);
            (size - (size as u128 * prot as u128 / (cg as u128 + 1)) as u64).max(SWAP_CLUSTER_MAX)
        } else {
            size
        };
        scan >>= sc.priority;
        *out = match balance {
            ScanBalance::Equal => scan,
            ScanBalance::Fract => scan * fraction[file as usize] / denominator.max(1),
            ScanBalance::File => {
                if file {
                    scan
                } else {
                    0
                }
            }
            ScanBalance::Anon => {
                if file {
                    0
                } else {
                    scan
                }
            }
        };
    }
    nr
}

impl Classic {
    /// Models isolate_lru_folios(): take up to `nr_to_scan` folios from the tail of a
    /// list (lruvec lock held). Returns (isolated folios oldest first, pages scanned).
    fn isolate_lru_folios(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        nr_to_scan: u64,
        list: usize,
    ) -> (Vec<Pfn>, u64) {
        let mut taken = Vec::new();
        let mut scan = 0;
        while scan < nr_to_scan {
            let Some(pfn) = self.lists[lv][list].pop_tail(&mut k.links, &mut k.folios) else {
                break;
            };
            // The folio's line, prefetched by the previous iteration except for the
            // first (prefetchw_prev_lru_folio).
            crate::kernel::vmscan::lru_scan_touch(k, scan > 0);
            k.spend(k.costs.list_op, Cat::ListOps);
            scan += 1;
            // lruvec_del_folio's check (lruvec_memcg_debug): a folio on this lruvec's list
            // belongs to it.
            vm_bug_on!(
                k.folio_lruvec(pfn) != lv,
                "folio {pfn} on another lruvec's list"
            );
            // lruvec_del_folio() takes a folio off folio_lru_list(folio), and
            // update_lru_sizes() debits the scanned list: they are one list
            // (mem_cgroup_update_lru_size() warns when a size goes negative).
            vm_bug_on!(
                folio_lru_list(&k.folios[pfn as usize]) != list,
                "folio {pfn} on a list its flags do not name"
            );
            // Someone else owns it (a batch flush won PG_lru): rotate it to the head.
            if !k.isolate_lru_flag(pfn) {
                self.lists[lv][list].push_head(&mut k.links, &mut k.folios, pfn);
                continue;
            }
            taken.push(pfn);
        }
        k.update_lru_size(lv, list, -(taken.len() as i64));
        (taken, scan)
    }

    /// Models move_folios_to_lru(): put survivors back on the lists their flags name.
    fn move_folios_to_lru(&mut self, k: &mut Kernel, folios: &[Pfn]) -> u64 {
        let mut moved = 0;
        for &pfn in folios {
            // move_folios_to_lru: an isolated folio has no PG_lru until it is put back.
            vm_bug_on!(
                k.folios[pfn as usize].test(pg::LRU),
                "folio {pfn} put back twice"
            );
            k.folios[pfn as usize].set(pg::LRU);
            let lv = k.folio_lruvec(pfn);
            self.add_folio(k, pfn, false);
            k.spend(k.costs.list_op, Cat::ListOps);
            if k.folios[pfn as usize].test(pg::ACTIVE) {
                workingset_age_nonresident(k, lv, 1);
            }
            moved += 1;
        }
        moved
    }

    /// Models shrink_active_list(): deactivate folios from the tail of an active list;
    /// only referenced executable file folios get another trip.
    fn shrink_active_list(
        &mut self,
        k: &mut Kernel,
        nr_to_scan: u64,
        lv: usize,
        sc: &mut ScanControl,
        list: usize,
    ) {
        batch::lru_add_drain(k, self);
        let t = list / 2;
        let memcg = k.lruvecs[lv].memcg;
        k.lock_site = crate::sim::lock::LockSite::Isolate;
        k.lock_lruvec(lv);
        let (taken, scanned) = self.isolate_lru_folios(k, lv, nr_to_scan, list);
        let node = k.lruvecs[lv].node as usize;
        k.nodes[node].nr_isolated[t] += taken.len() as u64;
        sc.count(k, Vm::Pgrefill, memcg, scanned);
        k.unlock();
        let mut deactivate = Vec::with_capacity(taken.len());
        rmap::prefetch_ptes(k, &taken);
        for &pfn in &taken {
            // folio_referenced() clears the young bits; anon and non-exec file folios
            // are deactivated whether referenced or not.
            rmap::folio_referenced(k, pfn, sc.target, None);
            let f = &mut k.folios[pfn as usize];
            f.clear(pg::ACTIVE);
            f.set(pg::WORKINGSET);
            deactivate.push(pfn);
        }
        k.lock_site = crate::sim::lock::LockSite::Putback;
        k.lock_lruvec(lv);
        let n = self.move_folios_to_lru(k, &deactivate);
        k.count(Vm::Pgdeactivate, memcg, n);
        k.nodes[node].nr_isolated[t] -= taken.len() as u64;
        k.unlock();
    }

    /// Models shrink_inactive_list(): isolate, shrink_folio_list, put back survivors.
    fn shrink_inactive_list(
        &mut self,
        k: &mut Kernel,
        nr_to_scan: u64,
        lv: usize,
        sc: &mut ScanControl,
        list: usize,
    ) -> u64 {
        let t = list / 2;
        let node = k.lruvecs[lv].node as usize;
        // Too many folios isolated on the node already: wait once, then give up.
        let mut stalled = false;
        while throttle::too_many_isolated(k, node, t == FILE, sc) {
            if stalled {
                return 0;
            }
            stalled = true;
            throttle::reclaim_throttle(k, node, throttle::Reason::Isolated);
            if crate::kernel::fault::current_killed(k) {
                return vmscan::SWAP_CLUSTER_MAX;
            }
        }
        batch::lru_add_drain(k, self);
        k.lock_site = crate::sim::lock::LockSite::Isolate;
        k.lock_lruvec(lv);
        let (taken, scanned) = self.isolate_lru_folios(k, lv, nr_to_scan, list);
        self.reclaim_isolated(k, lv, sc, t, taken, scanned)
    }

    /// The rest of shrink_inactive_list() after isolate_lru_folios(), lruvec lock held:
    /// count the scan, shrink_folio_list without the lock, put survivors back, count
    /// the steal, lru_note_cost. `taken` are folios of LRU type `t` off `lv`'s lists.
    pub(crate) fn reclaim_isolated(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        t: usize,
        mut taken: Vec<Pfn>,
        scanned: u64,
    ) -> u64 {
        let memcg = k.lruvecs[lv].memcg;
        let node = k.lruvecs[lv].node as usize;
        let nr_taken = taken.len() as u64;
        k.nodes[node].nr_isolated[t] += nr_taken;
        let (scan_c, steal_c) = sc.scan_steal();
        sc.count(k, scan_c, memcg, scanned);
        k.count(
            if t == ANON {
                Vm::PgscanAnon
            } else {
                Vm::PgscanFile
            },
            memcg,
            scanned,
        );
        k.unlock();
        if nr_taken == 0 {
            return 0;
        }
        let mut stat = ReclaimStat::default();
        let reclaimed = vmscan::shrink_folio_list(k, self, &mut taken, sc, &mut stat);
        k.lock_site = crate::sim::lock::LockSite::Putback;
        k.lock_lruvec(lv);
        self.move_folios_to_lru(k, &taken);
        k.nodes[node].nr_isolated[t] -= nr_taken;
        sc.count(k, steal_c, memcg, reclaimed);
        k.count(
            if t == ANON {
                Vm::PgstealAnon
            } else {
                Vm::PgstealFile
            },
            memcg,
            reclaimed,
        );
        if k.lru_clear_before_lock() {
            k.unlock();
            lru_note_cost(k, lv, t == FILE, stat.nr_pageout);
        } else {
            // <= 5.10: lru_note_cost() ran under the node lock still held here.
            lru_note_cost(k, lv, t == FILE, stat.nr_pageout);
            k.unlock();
        }
        // Dirty file folios that no one has queued for I/O: the flushers are behind;
        // nudge them (wakeup_flusher_threads(WB_REASON_VMSCAN)).
        if stat.nr_unqueued_dirty == nr_taken {
            crate::kernel::writeback::wakeup_flusher_threads(k);
        }
        sc.nr.dirty += stat.nr_dirty;
        sc.nr.congested += stat.nr_congested;
        sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
        sc.nr.writeback += stat.nr_writeback;
        sc.nr.immediate += stat.nr_immediate;
        sc.nr.taken += nr_taken;
        if t == FILE {
            sc.nr.file_taken += nr_taken;
        }
        reclaimed
    }

    /// shrink_lruvec() after get_scan_count(): `nr` pages to scan per list.
    pub(crate) fn shrink_lruvec_nr(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        mut nr: [u64; 4],
    ) {
        let targets = nr;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let mut reclaimed = 0;
        // Global direct reclaim at DEF_PRIORITY scans everything it planned (6.1).
        let mut scan_adjusted = !sc.cgroup_reclaim() && !sc.kswapd && sc.priority == DEF_PRIORITY;
        while nr[lru::INACTIVE_ANON] > 0 || nr[lru::ACTIVE_FILE] > 0 || nr[lru::INACTIVE_FILE] > 0 {
            for (l, n) in nr.iter_mut().enumerate() {
                let chunk = (*n).min(SWAP_CLUSTER_MAX);
                if chunk > 0 {
                    *n -= chunk;
                    reclaimed += self.shrink_list(k, l, chunk, lv, sc);
                }
            }
            if reclaimed < nr_to_reclaim || scan_adjusted {
                continue;
            }
            let nr_file = nr[lru::INACTIVE_FILE] + nr[lru::ACTIVE_FILE];
            let nr_anon = nr[lru::INACTIVE_ANON] + nr[lru::ACTIVE_ANON];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (small, big) = if nr_file > nr_anon {
                (ANON, FILE)
            } else {
                (FILE, ANON)
            };
            let target_small = targets[2 * small] + targets[2 * small + 1] + 1;
            let pct = (nr[2 * small] + nr[2 * small + 1]) * 100 / target_small;
            nr[2 * small] = 0;
            nr[2 * small + 1] = 0;
            for l in [2 * big, 2 * big + 1] {
                let scanned = targets[l] - nr[l];
                nr[l] = (targets[l] * (100 - pct) / 100)
                    .saturating_sub(scanned.min(targets[l] * (100 - pct) / 100));
            }
            scan_adjusted = true;
        }
        sc.nr_reclaimed += reclaimed;
        if k.can_age_anon()
            && inactive_is_low(
                lru_size_hier(k, lv, lru::INACTIVE_ANON),
                lru_size_hier(k, lv, lru::ACTIVE_ANON),
            )
        {
            self.shrink_active_list(k, SWAP_CLUSTER_MAX, lv, sc, lru::ACTIVE_ANON);
        }
    }

    /// shrink_list(): an active list is deactivated (when sc allows), an inactive one
    /// reclaimed from.
    pub(crate) fn shrink_list(
        &mut self,
        k: &mut Kernel,
        list: usize,
        nr: u64,
        lv: usize,
        sc: &mut ScanControl,
    ) -> u64 {
        if list % 2 == 1 {
            if sc.may_deactivate & (1 << (list / 2)) != 0 {
                self.shrink_active_list(k, nr, lv, sc, list);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(k, nr, lv, sc, list)
    }
}

impl Policy for Classic {
    fn add_folio(&mut self, k: &mut Kernel, pfn: Pfn, tail: bool) {
        let lv = k.folio_lruvec(pfn);
        let l = folio_lru_list(&k.folios[pfn as usize]);
        if tail {
            self.lists[lv][l].push_tail(&mut k.links, &mut k.folios, pfn);
        } else {
            self.lists[lv][l].push_head(&mut k.links, &mut k.folios, pfn);
        }
        k.update_lru_size(lv, l, 1);
    }

    fn del_folio(&mut self, k: &mut Kernel, pfn: Pfn) {
        let lv = k.folio_lruvec(pfn);
        let l = folio_lru_list(&k.folios[pfn as usize]);
        self.lists[lv][l].remove(&mut k.links, &mut k.folios, pfn);
        k.update_lru_size(lv, l, -1);
    }

    /// folio_mark_accessed(): inactive unreferenced -> referenced -> active.
    fn mark_accessed(&mut self, k: &mut Kernel, pfn: Pfn) {
        let f = k.folios[pfn as usize];
        if !f.test(pg::REFERENCED) {
            k.folios[pfn as usize].set(pg::REFERENCED);
        } else if f.test(pg::UNEVICTABLE) {
        } else if !f.test(pg::ACTIVE) {
            if f.test(pg::LRU) {
                batch::folio_activate(k, self, pfn);
            } else {
                batch::lru_cache_activate_folio(k, pfn);
            }
            k.folios[pfn as usize].clear(pg::REFERENCED);
            // workingset_activation()
            let lv = k.folio_lruvec(pfn);
            workingset_age_nonresident(k, lv, 1);
        }
    }

    /// Models prepare_scan_count() (6.1), which first flushes the memcg stats
    /// (`memcg_stats::mem_cgroup_flush_stats`).
    fn prepare_scan_control(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        let _ = crate::kernel::memcg_stats::mem_cgroup_flush_stats(k);
        let target = k.lruvec(sc.root(), node);
        // The cost snapshot is taken under the target lruvec's lock.
        k.lock_lruvec(target);
        sc.anon_cost = k.lruvecs[target].anon_cost;
        sc.file_cost = k.lruvecs[target].file_cost;
        k.unlock();
        if sc.force_deactivate {
            sc.may_deactivate = 3;
        } else {
            sc.may_deactivate = 0;
            for t in [ANON, FILE] {
                let refaults = workingset_activate_hier(k, target, t);
                let low = inactive_is_low(
                    lru_size_hier(k, target, 2 * t),
                    lru_size_hier(k, target, 2 * t + 1),
                );
                if refaults != k.lruvecs[target].refaults[t] || low {
                    sc.may_deactivate |= 1 << t;
                }
            }
        }
        sc.cache_trim_mode = (lru_size_hier(k, target, lru::INACTIVE_FILE) >> sc.priority) != 0
            && sc.may_deactivate & 2 == 0;
        sc.file_is_tiny = false;
        if !sc.cgroup_reclaim() {
            let file = lru_size_hier(k, target, lru::INACTIVE_FILE)
                + lru_size_hier(k, target, lru::ACTIVE_FILE);
            let n = &k.nodes[node];
            sc.file_is_tiny = file + n.zone.free <= n.zone.wmark[crate::kernel::node::WMARK_HIGH]
                && sc.may_deactivate & 1 == 0
                && (lru_size_hier(k, target, lru::INACTIVE_ANON) >> sc.priority) != 0;
        }
    }

    /// Models shrink_lruvec(): scan the lists in SWAP_CLUSTER_MAX chunks; once the
    /// target is met (except in global direct reclaim at the first priority), scale the
    /// remaining scan down proportionally, once.
    fn shrink_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) {
        let nr = get_scan_count(k, lv, sc);
        self.shrink_lruvec_nr(k, lv, sc, nr);
    }

    /// Models kswapd_age_node() for the classic LRU: deactivate anon when the node's
    /// inactive anon list is low.
    fn age_node(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        if !k.can_age_anon() {
            return;
        }
        let root = k.lruvec(ROOT, node);
        if !inactive_is_low(
            lru_size_hier(k, root, lru::INACTIVE_ANON),
            lru_size_hier(k, root, lru::ACTIVE_ANON),
        ) {
            return;
        }
        for m in k.memcgs.iter(ROOT) {
            let lv = k.lruvec(m, node);
            self.shrink_active_list(k, SWAP_CLUSTER_MAX, lv, sc, lru::ACTIVE_ANON);
        }
    }

    /// Models folio_check_references().
    fn check_references(&mut self, k: &mut Kernel, pfn: Pfn, sc: &ScanControl) -> Verdict {
        let refs_pte = rmap::folio_referenced(k, pfn, sc.target, None);
        let f = &mut k.folios[pfn as usize];
        let ref_flag = f.test_clear(pg::REFERENCED);
        check_references_table(refs_pte, ref_flag, f.lru_type() == FILE, f)
    }

    /// Models workingset_eviction(): the target lruvec's nonresident_age, then age it.
    fn eviction(&mut self, k: &mut Kernel, pfn: Pfn, target: MemcgId) -> u64 {
        let node = k.node_of(pfn);
        let lv = k.lruvec(target, node);
        let eviction = k.lruvecs[lv].nonresident_age & EVICTION_MASK;
        workingset_age_nonresident(k, lv, 1);
        k.spend(k.costs.xarray, Cat::Other);
        Shadow {
            memcg: target,
            node: node as u16,
            eviction,
            workingset: k.folios[pfn as usize].test(pg::WORKINGSET),
        }
        .pack()
    }

    /// Models workingset_refault(): count the refault, flush the memcg stats as the
    /// configured version does (`memcg_stats::workingset_refault_flush`), and activate if
    /// the refault distance fits in the workingset the eviction lruvec could have kept.
    fn refault(&mut self, k: &mut Kernel, pfn: Pfn, shadow: u64, _in_fault: bool) {
        let s = Shadow::unpack(shadow);
        let f = k.folios[pfn as usize];
        let t = f.lru_type();
        let file = t == FILE;
        k.count(
            if file {
                Vm::WorkingsetRefaultFile
            } else {
                Vm::WorkingsetRefaultAnon
            },
            f.memcg,
            1,
        );
        crate::kernel::workingset::check_shadow(k, &s);
        if s.memcg as usize >= k.memcgs.cgs.len() || s.node as usize >= k.nr_nodes() {
            return;
        }
        crate::kernel::memcg_stats::workingset_refault_flush(k);
        let elv = k.lruvec(s.memcg, s.node as usize);
        // The eviction stamp is from this lruvec's clock, which only grows. 6.1 masks the
        // distance (EVICTION_MASK) and has no check; the model's 38 bits never wrap.
        vm_bug_on!(
            s.eviction > k.lruvecs[elv].nonresident_age,
            "shadow from the future"
        );
        let distance = k.lruvecs[elv].nonresident_age.wrapping_sub(s.eviction) & EVICTION_MASK;
        let mut ws = lru_size_hier(k, elv, lru::ACTIVE_FILE);
        if !file {
            ws += lru_size_hier(k, elv, lru::INACTIVE_FILE);
        }
        // 6.1 asks mem_cgroup_get_nr_swap_pages(eviction_memcg).
        if k.can_swap(s.memcg) {
            ws += lru_size_hier(k, elv, lru::ACTIVE_ANON);
            if file {
                ws += lru_size_hier(k, elv, lru::INACTIVE_ANON);
            }
        }
        if distance > ws {
            return;
        }
        let lv = k.folio_lruvec(pfn);
        k.folios[pfn as usize].set(pg::ACTIVE);
        workingset_age_nonresident(k, lv, 1);
        k.lruvecs[lv].workingset_activate[t] += 1;
        k.count(
            if file {
                Vm::WorkingsetActivateFile
            } else {
                Vm::WorkingsetActivateAnon
            },
            f.memcg,
            1,
        );
        if s.workingset {
            k.folios[pfn as usize].set(pg::WORKINGSET);
            lru_note_cost(k, lv, file, 1);
            k.count(
                if file {
                    Vm::WorkingsetRestoreFile
                } else {
                    Vm::WorkingsetRestoreAnon
                },
                f.memcg,
                1,
            );
        }
    }

    fn snapshot_refaults(&mut self, k: &mut Kernel, target: MemcgId, node: usize) {
        let lv = k.lruvec(target, node);
        for t in [ANON, FILE] {
            k.lruvecs[lv].refaults[t] = workingset_activate_hier(k, lv, t);
        }
    }

    fn host_bytes(&self) -> u64 {
        (self.lists.len() * std::mem::size_of::<[List; lru::NR_LRU_LISTS]>()) as u64
    }

    fn check(
        &self,
        k: &Kernel,
        lv: usize,
        seen: &mut dyn FnMut(Pfn, &str) -> Result<(), String>,
    ) -> Result<(), String> {
        for (l, list) in self.lists[lv].iter().enumerate() {
            let members = list.to_vec(&k.links);
            if members.len() as u64 != k.lruvecs[lv].nr[l] || list.len as usize != members.len() {
                return Err(format!(
                    "lruvec {lv} {}: {} linked, counter {}",
                    lru::NAMES[l],
                    members.len(),
                    k.lruvecs[lv].nr[l]
                ));
            }
            for pfn in members {
                if folio_lru_list(&k.folios[pfn as usize]) != l {
                    return Err(format!(
                        "pfn {pfn} on {} but its flags say {}",
                        lru::NAMES[l],
                        lru::NAMES[folio_lru_list(&k.folios[pfn as usize])]
                    ));
                }
                seen(pfn, lru::NAMES[l])?;
            }
        }
        Ok(())
    }
}

/// The folio_check_references() decision table, after the rmap walk and the
/// test-and-clear of PG_referenced.
pub fn check_references_table(
    refs_pte: u32,
    ref_flag: bool,
    file: bool,
    f: &mut crate::kernel::folio::Folio,
) -> Verdict {
    if refs_pte > 0 {
        f.set(pg::REFERENCED);
        if ref_flag || refs_pte > 1 {
            return Verdict::Activate;
        }
        return Verdict::Keep;
    }
    if ref_flag && file {
        return Verdict::ReclaimClean;
    }
    Verdict::Reclaim
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::folio::Folio;

    #[test]
    fn inactive_is_low_ratios() {
        // < 1 GiB: ratio 1.
        assert!(inactive_is_low(100, 101));
        assert!(!inactive_is_low(100, 100));
        // 10 GiB in the pair: ratio 10.
        let gib = 1u64 << 18;
        assert!(inactive_is_low(gib, 9 * gib + 1) == (gib * 10 < 9 * gib + 1));
        assert!(!inactive_is_low(gib, 9 * gib));
        // 1 GiB: ratio isqrt(10) = 3.
        assert!(inactive_is_low(gib / 4 - 1, 3 * gib / 4 + 1));
    }

    #[test]
    fn check_references_decision_table() {
        let mut f = Folio::default();
        assert_eq!(
            check_references_table(2, false, false, &mut f),
            Verdict::Activate
        );
        assert!(f.test(pg::REFERENCED));
        let mut f = Folio::default();
        assert_eq!(
            check_references_table(1, true, false, &mut f),
            Verdict::Activate
        );
        let mut f = Folio::default();
        assert_eq!(
            check_references_table(1, false, true, &mut f),
            Verdict::Keep
        );
        assert!(f.test(pg::REFERENCED), "one more trip on the inactive list");
        let mut f = Folio::default();
        assert_eq!(
            check_references_table(0, true, true, &mut f),
            Verdict::ReclaimClean
        );
        assert_eq!(
            check_references_table(0, true, false, &mut f),
            Verdict::Reclaim
        );
        assert_eq!(
            check_references_table(0, false, true, &mut f),
            Verdict::Reclaim
        );
    }
}
