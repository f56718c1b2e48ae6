//! Reclaim shared by both policies (mm/vmscan.c): scan_control, shrink_folio_list,
//! shrink_node and its memcg walk, direct reclaim and memcg limit reclaim. kswapd's
//! balance_pgdat lives in `kswapd`.

use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::lru::{Policy, Verdict};
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::pagecache::Slot;
use crate::kernel::rmap;
use crate::kernel::stats::{Cat, StallKind, Vm};
use crate::kernel::swap::SwapSlot;
use crate::kernel::throttle::{self, Reason};
use crate::kernel::Kernel;
use crate::sim::lock::{LockRef, LockSite};

pub const SWAP_CLUSTER_MAX: u64 = 32;
pub const DEF_PRIORITY: i32 = 12;
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// Writeback statistics of one shrink_node pass (sc->nr).
#[derive(Clone, Copy, Debug, Default)]
pub struct NrStats {
    pub dirty: u64,
    pub unqueued_dirty: u64,
    pub congested: u64,
    pub writeback: u64,
    pub immediate: u64,
    pub file_taken: u64,
    pub taken: u64,
}

/// struct scan_control: one reclaim invocation.
#[derive(Clone, Debug)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    /// None: global reclaim. Some(memcg): cgroup (limit or proactive) reclaim.
    pub target: Option<MemcgId>,
    pub priority: i32,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    /// Bits: 1 = anon, 2 = file.
    pub may_deactivate: u8,
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub memcg_low_reclaim: bool,
    pub memcg_low_skipped: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub nr: NrStats,
    /// current_is_kswapd().
    pub kswapd: bool,
    /// MGLRU V61: kswapd's memcgs_need_aging and last_reclaimed (v11 has the first).
    pub memcgs_need_aging: bool,
    pub last_reclaimed: u64,
    /// MGLRU V11 (patch 09/14 of May 2022): no memcg met its scan budget without
    /// taking anon since kswapd's last lru_gen_age_node (cleared when one did).
    pub memcgs_need_swapping: bool,
    /// MGLRU V11: set by lru_gen_age_node; lru_gen_shrink_lruvec then leaves a memcg
    /// after its first eviction that took anon.
    pub memcgs_avoid_swapping: bool,
    /// sc->proactive: memory.reclaim's reclaim (MEMCG_RECLAIM_PROACTIVE). 6.1 keys only
    /// vmpressure on it: proactive reclaim queues no vmpressure work.
    pub proactive: bool,
    /// sc->proactive_swappiness (6.13+): memory.reclaim's `swappiness=`, used instead of
    /// vm.swappiness by this reclaim (sc_swappiness()).
    pub swappiness: Option<u32>,
    /// sc->nodemask: the nodes direct reclaim may shrink, those the allocation may use (a
    /// bit per node); 0 (NULL) for every node, as kswapd and memcg reclaim have it.
    pub nodemask: u64,
}

impl ScanControl {
    pub fn new(nr_to_reclaim: u64, target: Option<MemcgId>, kswapd: bool) -> Self {
        ScanControl {
            nr_to_reclaim,
            target,
            priority: DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            file_is_tiny: false,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            anon_cost: 0,
            file_cost: 0,
            nr_scanned: 0,
            nr_reclaimed: 0,
            nr: NrStats::default(),
            kswapd,
            memcgs_need_aging: false,
            last_reclaimed: 0,
            memcgs_need_swapping: false,
            memcgs_avoid_swapping: false,
            proactive: false,
            swappiness: None,
            nodemask: 0,
        }
    }

    /// Models sc_swappiness() (6.13+): memory.reclaim's `swappiness=` if given, else
    /// vm.swappiness (on cgroup v2, mem_cgroup_swappiness() is the global value).
    pub fn swappiness(&self, k: &Kernel) -> u32 {
        self.swappiness.unwrap_or(k.cfg.swappiness)
    }

    /// cgroup_reclaim(): reclaim on behalf of a memcg's limit.
    pub fn cgroup_reclaim(&self) -> bool {
        self.target.is_some()
    }

    /// The reclaim root (target_mem_cgroup, or the root memcg for global reclaim).
    pub fn root(&self) -> MemcgId {
        self.target.unwrap_or(ROOT)
    }

    /// The pgscan/pgsteal counter pair for this reclaimer.
    pub fn scan_steal(&self) -> (Vm, Vm) {
        if self.kswapd {
            (Vm::PgscanKswapd, Vm::PgstealKswapd)
        } else {
            (Vm::PgscanDirect, Vm::PgstealDirect)
        }
    }

    /// Counts a reclaimer event: globally unless this is cgroup reclaim, always in the memcg.
    pub fn count(&self, k: &mut Kernel, c: Vm, memcg: MemcgId, n: u64) {
        if self.cgroup_reclaim() {
            k.count_memcg(c, memcg, n);
        } else {
            k.count(c, memcg, n);
        }
    }
}

/// What shrink_folio_list reports back (struct reclaim_stat).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReclaimStat {
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
    pub nr_pageout: u64,
    pub nr_activate: [u64; 2],
    pub nr_ref_keep: u64,
    pub nr_unmap_fail: u64,
}

/// Models shrink_folio_list(): decides the fate of each isolated folio. Reclaimed
/// folios are freed; survivors stay in `list` (those to activate have PG_active set) for
/// the caller to put back. Returns the number reclaimed.
pub fn shrink_folio_list(
    k: &mut Kernel,
    p: &mut dyn Policy,
    list: &mut Vec<Pfn>,
    sc: &mut ScanControl,
    stat: &mut ReclaimStat,
) -> u64 {
    let mut reclaimed = 0;
    let mut survivors = Vec::with_capacity(list.len());
    crate::kernel::rmap::prefetch_ptes(k, list);
    for &pfn in list.iter() {
        k.spend(k.costs.folio_check, Cat::ListOps);
        sc.nr_scanned += 1;
        let f = k.folios[pfn as usize];
        // VM_BUG_ON_FOLIO(folio_test_active(folio), folio) at the head of the loop.
        vm_bug_on!(f.test(pg::ACTIVE), "folio {pfn} isolated with PG_active");
        let file_lru = f.lru_type() == 1;
        match shrink_one(k, p, pfn, sc, stat, file_lru) {
            Fate::Freed => reclaimed += 1,
            Fate::Keep => survivors.push(pfn),
            Fate::Activate => {
                activate_free_swap(k, pfn);
                let f = &mut k.folios[pfn as usize];
                f.set(pg::ACTIVE);
                let (t, memcg) = (f.lru_type(), f.memcg);
                stat.nr_activate[t] += 1;
                k.count_memcg(Vm::Pgactivate, memcg, 1);
                survivors.push(pfn);
            }
        }
        // keep: VM_BUG_ON_FOLIO(folio_test_lru(folio) || folio_test_unevictable(folio)).
        let f = &k.folios[pfn as usize];
        vm_bug_on!(
            survivors.last() == Some(&pfn) && (f.test(pg::LRU) || f.test(pg::UNEVICTABLE)),
            "folio {pfn} kept with PG_lru or PG_unevictable"
        );
    }
    crate::kernel::tlb::try_to_unmap_flush(k);
    k.vm.add(Vm::Pgactivate, stat.nr_activate[0] + stat.nr_activate[1]);
    *list = survivors;
    reclaimed
}

/// move_folios_to_lru()'s checks (6.1) of a folio going back on lruvec `lv`:
/// VM_BUG_ON_FOLIO(folio_test_lru(folio), folio) and
/// VM_BUG_ON_FOLIO(!folio_matches_lruvec(folio, lruvec), folio).
pub fn check_putback(k: &Kernel, lv: usize, pfn: Pfn) {
    vm_bug_on!(
        k.folios[pfn as usize].test(pg::LRU),
        "folio {pfn} put back twice"
    );
    vm_bug_on!(
        k.folio_lruvec(pfn) != lv,
        "folio {pfn} put back on another lruvec"
    );
}

/// shrink_folio_list()'s activate_locked (Linux 6.1): a swap-cache folio that is not a
/// candidate for swapping gives back its swap space when mem_cgroup_swap_full() (free
/// swap below half, or the memcg at half its memory.swap.max; no mlock in the model). folio_free_swap() then
/// refuses a folio under writeback or one a PTE still references by its swap entry
/// (folio_swapped(): with one mapping per page, an unmapped folio).
fn activate_free_swap(k: &mut Kernel, pfn: Pfn) {
    let f = k.folios[pfn as usize];
    if f.test(pg::SWAPCACHE) && k.swap_full(f.memcg) && f.mapped() && !f.test(pg::WRITEBACK) {
        crate::kernel::fault::folio_free_swap(k, pfn);
    }
}

enum Fate {
    Freed,
    Keep,
    Activate,
}

/// The body of shrink_folio_list()'s loop for one folio: where it goes next.
fn shrink_one(
    k: &mut Kernel,
    p: &mut dyn Policy,
    pfn: Pfn,
    sc: &mut ScanControl,
    stat: &mut ReclaimStat,
    file_lru: bool,
) -> Fate {
    if orphaned(k, pfn) {
        k.free_folio(pfn);
        return Fate::Freed;
    }
    if crate::kernel::swap_io::has_ssd(k) {
        // folio_trylock() fails on a folio whose read is in flight: keep_locked.
        if crate::kernel::swap_io::read_pending(k, pfn).is_some() {
            return Fate::Keep;
        }
        if unreferenced_swapcache(k, pfn) {
            crate::kernel::fault::folio_free_swap(k, pfn);
            k.free_folio(pfn);
            return Fate::Freed;
        }
    }
    let f = k.folios[pfn as usize];
    if f.test(pg::UNEVICTABLE) {
        return Fate::Activate;
    }
    if !sc.may_unmap && f.mapped() {
        return Fate::Keep;
    }
    if file_lru {
        if f.test(pg::DIRTY) || f.test(pg::WRITEBACK) {
            stat.nr_dirty += 1;
        }
        if f.test(pg::DIRTY) && !f.test(pg::WRITEBACK) {
            stat.nr_unqueued_dirty += 1;
        }
        if f.test(pg::WRITEBACK) && f.test(pg::RECLAIM) {
            stat.nr_congested += 1;
        }
    }
    if f.test(pg::WRITEBACK) {
        let node = k.node_of(pfn);
        if sc.kswapd && f.test(pg::RECLAIM) && k.nodes[node].writeback {
            stat.nr_immediate += 1;
        } else {
            k.folios[pfn as usize].set(pg::RECLAIM);
            stat.nr_writeback += 1;
        }
        return Fate::Activate;
    }
    let verdict = p.check_references(k, pfn, sc);
    // Its process may have exited while the rmap walk waited for a lock.
    if orphaned(k, pfn) {
        k.free_folio(pfn);
        return Fate::Freed;
    }
    match verdict {
        Verdict::Activate => return Fate::Activate,
        Verdict::Keep => {
            stat.nr_ref_keep += 1;
            return Fate::Keep;
        }
        Verdict::Reclaim | Verdict::ReclaimClean => {}
    }
    let f = k.folios[pfn as usize];
    if f.test(pg::ANON) && f.test(pg::SWAPBACKED) && !f.test(pg::SWAPCACHE) {
        if !add_to_swap(k, pfn) {
            return Fate::Activate;
        }
        // Its process may have exited while the slot allocation waited for si->lock.
        if orphaned_swapcache(k, pfn) {
            crate::kernel::fault::folio_free_swap(k, pfn);
            k.free_folio(pfn);
            return Fate::Freed;
        }
    }
    if k.folios[pfn as usize].mapped() {
        rmap::try_to_unmap(k, pfn);
        // Its process may have exited while the walk waited for a lock, its exit taking
        // the swap entry and the swap cache's copy: the isolator's reference is the last.
        if orphaned(k, pfn) {
            k.free_folio(pfn);
            return Fate::Freed;
        }
        if k.folios[pfn as usize].mapped() {
            stat.nr_unmap_fail += 1;
            return Fate::Activate;
        }
    }
    if k.folios[pfn as usize].test(pg::DIRTY) {
        // Reclaim writes file pages only from kswapd, once the node is known to be
        // congested with dirty pages (PGDAT_DIRTY) and the folio was seen before.
        let node = k.node_of(pfn);
        if file_lru
            && (!sc.kswapd || !k.folios[pfn as usize].test(pg::RECLAIM) || !k.nodes[node].dirty)
        {
            k.vm.add(Vm::NrVmscanImmediateReclaim, 1);
            k.folios[pfn as usize].set(pg::RECLAIM);
            return Fate::Activate;
        }
        if verdict == Verdict::ReclaimClean || !sc.may_writepage {
            return Fate::Keep;
        }
        crate::kernel::tlb::try_to_unmap_flush_dirty(k);
        pageout(k, pfn);
        stat.nr_pageout += 1;
        // A page-cache write completes later: keep the folio (PG_reclaim is set, so
        // folio_end_writeback rotates it to the inactive tail).
        let f = k.folios[pfn as usize];
        if f.test(pg::WRITEBACK) || f.test(pg::DIRTY) {
            return Fate::Keep;
        }
    }
    // A per-CPU batch or a new mapping holds a reference: the refcount freeze fails.
    if !remove_mapping(k, p, pfn, sc.root()) {
        return Fate::Keep;
    }
    k.free_folio(pfn);
    Fate::Freed
}

/// An anon folio whose process exited (OOM kill) while this reclaimer held it: the
/// reclaimer's is the last reference, so the folio is freed without I/O, as
/// __remove_mapping frees a folio only its isolator still references.
fn orphaned(k: &Kernel, pfn: Pfn) -> bool {
    let f = &k.folios[pfn as usize];
    f.test(pg::ANON)
        && !f.mapped()
        && !f.test(pg::SWAPCACHE)
        && f.pins() == 0
        && k.mms[f.owner as usize].dead
}

/// A swap-cache folio of an exited process that nothing maps: orphaned but for its
/// swap-cache copy.
fn orphaned_swapcache(k: &Kernel, pfn: Pfn) -> bool {
    let f = &k.folios[pfn as usize];
    f.test(pg::SWAPCACHE) && !f.mapped() && f.pins() == 0 && k.mms[f.owner as usize].dead
}

/// A swap-cache folio that nothing maps and whose entry no PTE holds any more: its
/// process exited or unmapped the page while an SSD's I/O on it was in flight
/// (`fault::free_swap_entry` leaves it). Once the I/O is done, reclaim frees the slot
/// and the folio, as the kernel's reclaim of a swap-cache folio with no swap count
/// left (folio_swapped() false, so folio_free_swap() succeeds). Not under writeback.
fn unreferenced_swapcache(k: &Kernel, pfn: Pfn) -> bool {
    let f = &k.folios[pfn as usize];
    if !f.test(pg::SWAPCACHE) || f.mapped() || f.pins() > 0 || f.test(pg::WRITEBACK) {
        return false;
    }
    let m = &k.mms[f.owner as usize];
    let slot = k.folio_swap[pfn as usize];
    let vpn = u64::from(f.index);
    let held = m.find_vma(vpn).is_some_and(|v| {
        let pte = m.vmas[v].ptes[(vpn - m.vmas[v].start) as usize];
        pte.swap_slot() == Some(slot)
    });
    m.dead || !held
}

/// Models add_to_swap() and its folio_alloc_swap() (6.1): gives an anon folio a swap
/// slot and puts it in the swap cache. The slot's charge is
/// mem_cgroup_try_charge_swap(): without a slot (no device, or none free) it counts
/// memory.swap.events `fail`; at memory.swap.max of the folio's memcg or an ancestor it
/// counts `max` and `fail` and the slot goes back (put_swap_folio). Either way
/// shrink_folio_list activates the folio (activate_locked_split).
fn add_to_swap(k: &mut Kernel, pfn: Pfn) -> bool {
    let memcg = k.folios[pfn as usize].memcg;
    let slot = if k.swap.is_some() {
        k.get_swap_slot(memcg)
    } else {
        None
    };
    let Some(slot) = slot else {
        k.memcgs.cgs[memcg as usize].events.swap_fail += 1;
        return false;
    };
    if !k.memcgs.try_charge_swap(memcg) {
        // The slot was taken from the map: put_swap_folio() hands it back.
        k.swap.as_mut().unwrap().slots[slot as usize] = SwapSlot::used(0);
        k.put_swap_slot(slot);
        return false;
    }
    k.spend(k.costs.swap_slot, Cat::Other);
    let (owner, index) = (k.folios[pfn as usize].owner, k.folios[pfn as usize].index);
    let sw = k.swap.as_mut().unwrap();
    sw.slots[slot as usize] = SwapSlot::cached(pfn);
    if let Some(o) = sw
        .ssd
        .as_mut()
        .and_then(|d| d.slot_owner.get_mut(slot as usize))
    {
        *o = (owner, index);
    }
    k.folio_swap[pfn as usize] = slot;
    let f = &mut k.folios[pfn as usize];
    f.set(pg::SWAPCACHE | pg::DIRTY);
    // __mem_cgroup_try_charge_swap(): MEMCG_SWAP; add_to_swap_cache(): NR_SWAPCACHE.
    k.memcg_rstat_updated(memcg, 2);
    true
}

/// The touch of one folio met in a tail-first LRU scan (classic isolate_lru_folios,
/// MGLRU scan_folios and inc_min_seq): a DRAM miss, unless the previous iteration issued
/// a `prefetchw` of it (classic's prefetchw_prev_lru_folio; MGLRU with seed 003's
/// prefetch part). A prefetch hides only the part of the miss that elapsed since it was
/// issued: the rest of the latency stalls, down to a cache hit. The first folio of a
/// scan is never prefetched. Cost only.
pub fn lru_scan_touch(k: &mut Kernel, prefetched: bool) {
    let miss = k.costs.lru_scan_miss;
    let ns = if prefetched {
        let elapsed = k.cur.clock - k.cur.prefetch_at;
        miss.saturating_sub(elapsed)
            .max(k.costs.lru_scan_prefetched)
    } else {
        miss
    };
    k.spend(ns, Cat::ListOps);
    k.cur.prefetch_at = k.cur.clock;
}

/// Models pageout(): writes a dirty folio. A swap-cache folio goes to zswap if it takes
/// it (swap_writepage's frontswap_store), else to zram or brd, which
/// complete in the submitter's context, so it comes back clean at once, or to an SSD,
/// from which it comes back with PG_writeback and PG_reclaim; a page-cache
/// folio gets PG_reclaim and an asynchronous write (ext4 on brd completes through its
/// end_io work), so it comes back with PG_writeback. 6.1's __swap_writepage() hands the
/// page to zram's or brd's ->rw_page (bdev_write_page), which skips submit_bio(): the
/// write counts pswpout (count_swpout_vm_event, global only) but no pgpgout.
fn pageout(k: &mut Kernel, pfn: Pfn) {
    use crate::kernel::swap::Written;
    let f = k.folios[pfn as usize];
    k.vm.add(Vm::NrVmscanWrite, 1);
    if !f.test(pg::SWAPCACHE) {
        crate::kernel::writeback::pageout_file(k, pfn);
        return;
    }
    // The swap cache's and the memcg's swap bookkeeping of this swap-out, beyond what
    // the model charges apart.
    k.spend(k.costs.swap_out_rest, Cat::Other);
    // swap_writepage(): frontswap_store() first; a page zswap took is not written.
    let slot = k.folio_swap[pfn as usize];
    let zswap = k.swap.as_ref().is_some_and(|s| s.zswap.is_some());
    if !(zswap && crate::kernel::zswap::store(k, pfn, slot)) {
        let device = k.swap.as_ref().unwrap().device;
        // Per memcg too: the model's attribution, shown outside memory.stat.
        k.count(Vm::Pswpout, f.memcg, 1);
        match crate::kernel::swap::swap_writepage(k, pfn, device) {
            Written::Done => {}
            Written::Writeback => {
                // An SSD's write: PG_reclaim stays, so its completion rotates the folio.
                k.folios[pfn as usize].clear(pg::DIRTY);
                k.folios[pfn as usize].set(pg::RECLAIM);
                return;
            }
            Written::Failed => {
                // end_swap_bio_write(): set_page_dirty(), ClearPageReclaim().
                k.folios[pfn as usize].clear(pg::RECLAIM);
                return;
            }
        }
    }
    k.folios[pfn as usize].clear(pg::DIRTY | pg::RECLAIM);
}

/// Models __remove_mapping(): takes the folio out of the page cache (under the mapping's
/// i_pages lock) or the swap cache and leaves a shadow entry (workingset_eviction) in its
/// slot. False when a fault mapped the folio while this task waited for the lock: the
/// kernel's refcount freeze fails and the folio is kept.
fn remove_mapping(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn, target: MemcgId) -> bool {
    let f = k.folios[pfn as usize];
    let lock = (!f.test(pg::ANON) && !f.test(pg::SWAPCACHE)).then_some(LockRef::IPages(f.owner));
    if let Some(l) = lock {
        k.spin_lock(l, LockSite::RemoveMapping);
    }
    let f = k.folios[pfn as usize];
    let frozen = !f.mapped() && f.pins() == 0;
    if frozen {
        crate::kernel::workingset::check_eviction(k, pfn);
        let shadow = p.eviction(k, pfn, target);
        k.spend(k.costs.xarray, Cat::Other);
        if f.test(pg::SWAPCACHE) {
            let slot = k.folio_swap[pfn as usize];
            k.swap.as_mut().unwrap().slots[slot as usize] = SwapSlot::used(shadow);
            k.folios[pfn as usize].clear(pg::SWAPCACHE);
        } else {
            let index = u64::from(f.index);
            let file = &mut k.files[f.owner as usize];
            file.slots[f.index as usize] = Slot::shadow(shadow);
            file.nr_cached -= 1;
            let near = file.last_evicted.is_some_and(|i| i.abs_diff(index) <= 1);
            file.last_evicted = Some(index);
            // __filemap_remove_folio() -> page_cache_delete()'s store of the shadow into
            // the folio's xarray node, cold unless the file's last eviction shared it
            // (`evict_cold`; nothing at 0, so that 0 runs the model without it).
            if !near && k.costs.evict_cold > 0 {
                k.spend(k.costs.evict_cold, Cat::Other);
            }
        }
        // __delete_from_swap_cache(): NR_SWAPCACHE, or __filemap_remove_folio():
        // NR_FILE_PAGES.
        k.folio_stat_updated(pfn);
    }
    if let Some(l) = lock {
        k.spin_unlock(l);
    }
    frozen
}

/// Models shrink_node(): one pass over the memcgs of the reclaim root on a node.
pub fn shrink_node(k: &mut Kernel, p: &mut dyn Policy, node: usize, sc: &mut ScanControl) {
    if p.shrink_node(k, node, sc) {
        return; // lru_gen_shrink_node() (MGLRU's memcg LRU, 6.3+)
    }
    sc.nr = NrStats::default();
    let (reclaimed0, scanned0) = (sc.nr_reclaimed, sc.nr_scanned);
    p.prepare_scan_control(k, node, sc);
    shrink_node_memcgs(k, p, node, sc);
    if !sc.proactive {
        let scanned = sc.nr_scanned.saturating_sub(scanned0);
        crate::kernel::vmpressure::vmpressure_tree(k, sc.root(), scanned);
    }
    let reclaimable = sc.nr_reclaimed > reclaimed0;
    if sc.kswapd {
        let n = &mut k.nodes[node];
        if sc.nr.writeback > 0 && sc.nr.writeback == sc.nr.taken {
            n.writeback = true;
        }
        // 6.1 sets PGDAT_DIRTY also when no file folio was taken (0 == 0).
        if sc.nr.unqueued_dirty == sc.nr.file_taken {
            n.dirty = true;
        }
        // Folios under writeback for reclaim came back: wait for some of it to finish.
        if sc.nr.immediate > 0 {
            throttle::reclaim_throttle(k, node, Reason::Writeback);
        }
    }
    // LRUVEC_CONGESTED: every dirty folio met was already queued for I/O and marked for
    // reclaim; then direct and cgroup reclaim on this lruvec wait a jiffy.
    let target = k.lruvec(sc.root(), node);
    if (sc.kswapd || sc.cgroup_reclaim()) && sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
        k.lruvecs[target].congested = true;
    }
    if !sc.kswapd && k.lruvecs[target].congested {
        throttle::reclaim_throttle(k, node, Reason::Congested);
    }
    if reclaimable {
        k.nodes[node].kswapd_failures = 0;
    }
}

/// Models shrink_node_memcgs(): every memcg below the root, in pre-order, with
/// memory.min / memory.low protection.
fn shrink_node_memcgs(k: &mut Kernel, p: &mut dyn Policy, node: usize, sc: &mut ScanControl) {
    let root = sc.root();
    for memcg in k.memcgs.iter(root) {
        k.memcgs.calculate_protection(root, memcg);
        if k.memcgs.below_min(root, memcg) {
            continue;
        }
        if k.memcgs.below_low(root, memcg) {
            if !sc.memcg_low_reclaim {
                sc.memcg_low_skipped = true;
                continue;
            }
            k.memcgs.cgs[memcg as usize].events.low += 1;
        }
        let lv = k.lruvec(memcg, node);
        p.shrink_lruvec(k, lv, sc);
    }
}

/// Models do_try_to_free_pages(): priorities 12 down to 0 over every node, then the
/// retries with memcg_low_reclaim / force_deactivate when nothing was reclaimed.
fn do_try_to_free_pages(k: &mut Kernel, p: &mut dyn Policy, sc: &mut ScanControl) -> u64 {
    loop {
        if !sc.cgroup_reclaim() {
            k.vm.add(Vm::AllocstallNormal, 1);
        }
        sc.priority = DEF_PRIORITY;
        while sc.priority >= 0 {
            if !sc.proactive {
                crate::kernel::vmpressure::vmpressure_prio(k, sc.root(), sc.priority);
            }
            sc.nr_scanned = 0;
            // shrink_zones(): the zonelist from the local node, within the nodemask.
            let local = k.cpu_node[k.cur.cpu as usize] as usize;
            let mut first = None;
            for node in crate::kernel::fault::zonelist_nodemask(k, sc.nodemask) {
                first.get_or_insert(node);
                shrink_node(k, p, node, sc);
            }
            throttle::consider_reclaim_throttle(k, first.unwrap_or(local), sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            sc.priority -= 1;
        }
        for node in crate::kernel::fault::zonelist_nodemask(k, sc.nodemask) {
            p.snapshot_refaults(k, sc.root(), node);
            if sc.cgroup_reclaim() {
                let lv = k.lruvec(sc.root(), node);
                k.lruvecs[lv].congested = false;
            }
        }
        if sc.nr_reclaimed > 0 {
            return sc.nr_reclaimed;
        }
        if sc.skipped_deactivate && !sc.force_deactivate {
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
            continue;
        }
        if sc.memcg_low_skipped && !sc.memcg_low_reclaim {
            sc.force_deactivate = false;
            sc.memcg_low_reclaim = true;
            sc.memcg_low_skipped = false;
            continue;
        }
        return 0;
    }
}

/// Models try_to_free_pages(): direct reclaim by an allocating task, for a page charged
/// to `memcg`. Records the time it took in `k.alloc_stall` and as a `direct` stall of
/// `memcg`'s tasks.
pub fn try_to_free_pages(k: &mut Kernel, p: &mut dyn Policy, memcg: MemcgId) -> u64 {
    let start = k.cur.clock;
    // throttle_direct_reclaim() looks at the first node of the zonelist in the nodemask.
    if throttle::throttle_direct_reclaim(k, crate::kernel::fault::preferred_node(k)) {
        // Killed while throttled: report progress so the allocation does not OOM.
        k.alloc_stall.record(k.cur.clock - start);
        k.record_stall(memcg, StallKind::Direct, k.cur.clock - start);
        return 1;
    }
    let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, None, false);
    sc.nodemask = k.cur.mems;
    let reclaimed = do_try_to_free_pages(k, p, &mut sc);
    k.alloc_stall.record(k.cur.clock - start);
    k.record_stall(memcg, StallKind::Direct, k.cur.clock - start);
    reclaimed
}

/// Models try_to_free_mem_cgroup_pages(): reclaim for a memcg over its limit.
pub fn try_to_free_mem_cgroup_pages(
    k: &mut Kernel,
    p: &mut dyn Policy,
    memcg: MemcgId,
    nr: u64,
) -> u64 {
    let mut sc = ScanControl::new(nr.max(SWAP_CLUSTER_MAX), Some(memcg), false);
    do_try_to_free_pages(k, p, &mut sc)
}

/// Models try_to_free_mem_cgroup_pages() with MEMCG_RECLAIM_PROACTIVE (memory.reclaim),
/// and 6.13's proactive swappiness when `swappiness` is given.
pub fn try_to_free_mem_cgroup_pages_proactive(
    k: &mut Kernel,
    p: &mut dyn Policy,
    memcg: MemcgId,
    nr: u64,
    swappiness: Option<u32>,
) -> u64 {
    let mut sc = ScanControl::new(nr.max(SWAP_CLUSTER_MAX), Some(memcg), false);
    sc.proactive = true;
    sc.swappiness = swappiness;
    do_try_to_free_pages(k, p, &mut sc)
}
