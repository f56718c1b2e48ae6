//! Memcg reclaim of the MGLRU v11 posting (17 May 2022; v10 of 7 April is the same in
//! these functions), `memcg_reclaim = "v11"` and its baseline `"v11-patch1-8"`
//! (docs/model/mglru-memcgs.md). Patch 09/14, "mm: multi-gen LRU: optimize multiple
//! memcgs" (Message-Id <20220518014632.922072-10-yuzhao@google.com>), is what seed 000
//! measured as patch1-9 against patch1-8.
//!
//! What patch 09 adds, kswapd only: `lru_gen_age_node` skips aging while some memcg
//! met its scan budget without needing aging since its last call (memcgs_need_aging,
//! cleared in `get_nr_to_scan`); after such a skip it also tells `lru_gen_shrink_lruvec`
//! to leave a memcg once one of its evictions took anon (memcgs_avoid_swapping), unless
//! no memcg met its budget without anon since the last call (memcgs_need_swapping).
//! `patch09 = false` keeps the v11 shapes of patches 01-08 with those lines off.
//!
//! The shapes that differ from 6.1 whichever value: no should_abort_scan, aging
//! decided on the unshifted evictable size (`get_nr_evictable`), the scan budget
//! shifted by DEF_PRIORITY once the target is met, kswapd never ages from the eviction
//! path, global direct reclaim ages only in do_try_to_free_pages' force_deactivate
//! retry, waiting for another walker's aging only outside kswapd at priority 0, and the
//! flusher woken after each aging (`wake_flushers_after_aging`). min_ttl_ms does not
//! exist in patches 01-09 (the scenario layer rejects it with these values).
//!
//! The per-folio code of patches 01-08 that this experiment reaches, for both values
//! (`v11_folios`): MAX_LRU_BATCH 8192 (`max_lru_batch`), isolate_folio keeping the refs
//! state (evict.rs), the putback without 6.1's retry (`putback_flags`), inc_max_seq's
//! anon-then-file order with a non-moving inc_min_seq (`inc_min_seq_v11`), and
//! look-around without the can_swap filter (lookaround.rs).

use super::gen::*;
use super::Mglru;
use crate::kernel::batch;
use crate::kernel::config::MemcgReclaim;
use crate::kernel::folio::{pg, Folio};
use crate::kernel::memcg::ROOT;
use crate::kernel::stats::Vm;
use crate::kernel::vmscan::{ScanControl, DEF_PRIORITY};
use crate::kernel::Kernel;

/// MAX_LRU_BATCH in v11 (May 2022): MIN_LRU_BATCH * 128.
pub const MAX_LRU_BATCH_V11: u64 = MIN_LRU_BATCH * 128;

impl Mglru {
    /// Models get_nr_evictable(), v11 (May 2022): the evictable pages of the lruvec,
    /// unshifted, and whether it needs aging (the 6.1 should_run_aging test). Sizes are
    /// summed signed (pending walk deltas may make one negative) and only the total is
    /// clamped at 0.
    pub fn get_nr_evictable(&self, lv: usize, can_swap: bool) -> (u64, bool) {
        let g = &self.lrugen[lv];
        let sizes = super::gen_sizes(g, can_swap, |size| size);
        (
            sizes.2.max(0) as u64,
            super::needs_aging(g, can_swap, sizes),
        )
    }

    /// Models get_nr_to_scan(), v11 (May 2022): nothing for protected memcgs; the
    /// budget is the evictable size >> priority, >> DEF_PRIORITY once the reclaimer met
    /// its target. Without aging due: the budget, and (patch 09) clear
    /// sc->memcgs_need_aging. Otherwise kswapd leaves the memcg to lru_gen_age_node,
    /// global direct reclaim marks skipped_deactivate and ages only on the
    /// force_deactivate retry, memcg reclaim ages here (waiting only at priority 0).
    pub fn get_nr_to_scan_v11(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u32,
        patch09: bool,
    ) -> u64 {
        let memcg = k.lruvecs[lv].memcg;
        let root = sc.root();
        if k.memcgs.below_min(root, memcg)
            || (k.memcgs.below_low(root, memcg) && !sc.memcg_low_reclaim)
        {
            return 0;
        }
        let can_swap = swappiness != 0;
        let (max_seq, min_seq) = (self.lrugen[lv].max_seq, self.lrugen[lv].min_seq);
        let (total, need_aging) = self.get_nr_evictable(lv, can_swap);
        let shift = if sc.nr_reclaimed < sc.nr_to_reclaim {
            sc.priority
        } else {
            DEF_PRIORITY
        };
        // Memcgs are never offline in this model: no "+ 1" for an offline one.
        let nr = total >> shift;
        if nr == 0 {
            return 0;
        }
        if !need_aging {
            if patch09 {
                sc.memcgs_need_aging = false;
            }
            return nr;
        }
        if sc.kswapd {
            return 0;
        }
        if !sc.cgroup_reclaim() && !sc.force_deactivate {
            sc.skipped_deactivate = true;
            return 0;
        }
        if self.try_to_inc_max_seq_v11(k, lv, max_seq, can_swap, sc.priority == 0) {
            return nr;
        }
        if min_seq[usize::from(!can_swap)] + MIN_NR_GENS <= max_seq {
            nr
        } else {
            0
        }
    }

    /// try_to_inc_max_seq() as v11 (May 2022) calls it: a reclaimer other than kswapd
    /// allocates its walk for this call and frees it at the end (so the rest of its
    /// eviction runs look-around without one). The flusher wake-up after aging is in
    /// `wake_flushers_after_aging`.
    pub(super) fn try_to_inc_max_seq_v11(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        max_seq: u64,
        can_swap: bool,
        wait: bool,
    ) -> bool {
        let had_walk = self.walk.is_some();
        let aged = self.try_to_inc_max_seq(k, lv, max_seq, can_swap, false, wait);
        if !had_walk {
            self.clear_mm_walk();
        }
        aged
    }

    /// The wakeup_flusher_threads(WB_REASON_VMSCAN) that v11's try_to_inc_max_seq
    /// (May 2022) makes after its inc_max_seq; 6.1 and later do not.
    pub(super) fn wake_flushers_after_aging(&self, k: &mut Kernel) {
        if self.v11_folios() {
            crate::kernel::writeback::wakeup_flusher_threads(k);
        }
    }

    /// Whether the per-folio code is the May 2022 posting's patches 01-08, as both v11
    /// values run it (docs/model/mglru-memcgs.md); the other values run 6.1's.
    pub(super) fn v11_folios(&self) -> bool {
        match self.memcg_reclaim {
            MemcgReclaim::V11 | MemcgReclaim::V11Patch1to8 => true,
            MemcgReclaim::None | MemcgReclaim::V61 | MemcgReclaim::MemcgLru => false,
        }
    }

    /// MAX_LRU_BATCH: the eviction scan's budget per call and the page-table walk's
    /// batch of deferred sizes. v11 (May 2022) has 64 x 128 = 8192; 6.1 has 64 x 64.
    pub(super) fn max_lru_batch(&self) -> u64 {
        if self.v11_folios() {
            MAX_LRU_BATCH_V11
        } else {
            MAX_LRU_BATCH
        }
    }

    /// Models inc_min_seq(), v11 (May 2022, lru lock held): retire the oldest generation
    /// of type `t` by advancing min_seq alone. Its folios stay in their slot, which
    /// inc_max_seq then makes the youngest: cold folios become the hottest.
    pub(super) fn inc_min_seq_v11(&mut self, lv: usize, t: usize) {
        let g = &mut self.lrugen[lv];
        let old_gen = lru_gen_from_seq(g.min_seq[t]);
        g.reused[t] |= !g.lists[old_gen][t].is_empty();
        g.reset_ctrl_pos(t, true);
        g.min_seq[t] += 1;
    }

    /// Models lru_gen_shrink_lruvec(), v11 (May 2022): evict until the budget of
    /// get_nr_to_scan is scanned or nothing can be evicted; no should_abort_scan. With
    /// patch 09, leave the memcg after an eviction that took anon while
    /// sc->memcgs_avoid_swapping (counting `lru_gen_avoid_swapping`), and clear
    /// sc->memcgs_need_swapping when the budget was met without anon and with at
    /// least MIN_LRU_BATCH pages reclaimed.
    pub(super) fn lru_gen_shrink_lruvec_v11(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        patch09: bool,
    ) {
        batch::lru_add_drain(k, self);
        if sc.kswapd {
            self.set_kswapd_walk(k.lruvecs[lv].node as usize);
        }
        self.need_swapping = false;
        let mut scanned = 0;
        let reclaimed = sc.nr_reclaimed;
        loop {
            let swappiness = Self::shrink_swappiness(k, lv, sc);
            let nr_to_scan = self.get_nr_to_scan_v11(k, lv, sc, swappiness, patch09);
            if nr_to_scan == 0 {
                break;
            }
            let delta = self.evict_folios(k, lv, sc, swappiness);
            if delta == 0 {
                break;
            }
            if patch09 && sc.memcgs_avoid_swapping && swappiness < 200 && self.need_swapping {
                sc.count(k, Vm::LruGenAvoidSwapping, k.lruvecs[lv].memcg, 1);
                break;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                let enough = sc.nr_reclaimed - reclaimed >= MIN_LRU_BATCH;
                if patch09 && !self.need_swapping && enough {
                    sc.memcgs_need_swapping = false;
                }
                break;
            }
        }
        self.clear_mm_walk();
    }

    /// Models age_lruvec(), v11 (May 2022): below memory.min (against the root) or
    /// empty, nothing; otherwise age when aging is due and the lruvec is not too small
    /// at this priority. kswapd does not wait for other walkers.
    fn age_lruvec_v11(&mut self, k: &mut Kernel, lv: usize, sc: &ScanControl) {
        let swappiness = Self::get_swappiness(k, lv);
        let memcg = k.lruvecs[lv].memcg;
        let max_seq = self.lrugen[lv].max_seq;
        k.memcgs.calculate_protection(ROOT, memcg);
        if k.memcgs.below_min(ROOT, memcg) {
            return;
        }
        let (total, need_aging) = self.get_nr_evictable(lv, swappiness != 0);
        if total >> sc.priority != 0 && need_aging {
            self.try_to_inc_max_seq_v11(k, lv, max_seq, swappiness != 0, false);
        }
    }

    /// Models lru_gen_age_node(), v11 (May 2022), kswapd's aging pass over every memcg
    /// of the node. With patch 09 the gate first: if some memcg met its budget without
    /// needing aging since the last call (memcgs_need_aging clear, as on
    /// balance_pgdat's first iteration), skip aging this iteration (counting
    /// `lru_gen_aging_skipped`), re-arm both flags, and avoid swapping unless no memcg
    /// met its budget without anon; when aging, avoid swapping. No min_ttl, no OOM.
    pub(super) fn lru_gen_age_node_v11(
        &mut self,
        k: &mut Kernel,
        node: usize,
        sc: &mut ScanControl,
        patch09: bool,
    ) {
        if patch09 {
            if !sc.memcgs_need_aging {
                sc.memcgs_need_aging = true;
                sc.memcgs_avoid_swapping = !sc.memcgs_need_swapping;
                sc.memcgs_need_swapping = true;
                k.vm.add(Vm::LruGenAgingSkipped, 1);
                return;
            }
            sc.memcgs_need_swapping = true;
            sc.memcgs_avoid_swapping = true;
        }
        self.set_kswapd_walk(node);
        for memcg in k.memcgs.iter(ROOT) {
            let lv = k.lruvec(memcg, node);
            self.age_lruvec_v11(k, lv, sc);
        }
        self.clear_mm_walk();
    }
}

/// The putback flags of a folio shrink_folio_list kept, in evict_folios() of v11 (May
/// 2022): PG_referenced and PG_workingset cleared, the refs field kept; one marked for
/// reclaim that is dirty or under writeback goes back inactive (to min_seq + 1), every
/// other one active (to max_seq). No folio is retried.
pub(super) fn putback_flags(f: &mut Folio) {
    f.clear(LRU_REFS_FLAGS);
    if f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)) {
        f.clear(pg::ACTIVE);
    } else {
        f.set(pg::ACTIVE);
    }
}
