//! Eviction (Linux 6.1): pick a type and tier with the PID controller, scan the oldest
//! generation from its tail (sort the folios that must not go, isolate the rest), shrink
//! the isolated folios, and put the survivors back, retrying clean ones once.

use super::gen::*;
use super::Mglru;
use crate::kernel::debug::vm_warn_on;
use crate::kernel::folio::{pg, Pfn, NIL};
use crate::kernel::list::List;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::vmscan::{self, lru_scan_touch, ReclaimStat, ScanControl};
use crate::kernel::Kernel;
use crate::sim::lock::LockSite;

/// struct ctrl_pos: a PID controller position, refaults over (evicted + protected).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

impl LruGen {
    /// Models read_ctrl_pos() (6.1): the running averages plus the current generation's
    /// counters; a tier's total includes what it protected (indexed tier - 1).
    pub fn read_ctrl_pos(&self, t: usize, tier: usize, gain: u64) -> CtrlPos {
        let hist = lru_hist_from_seq(self.min_seq[t]);
        let mut total = self.avg_total[t][tier] + self.evicted[hist][t][tier];
        if tier > 0 {
            total += self.protected[hist][t][tier - 1];
        }
        CtrlPos {
            refaulted: self.avg_refaulted[t][tier] + self.refaulted[hist][t][tier],
            total,
            gain,
        }
    }

    /// Models reset_ctrl_pos() (6.1): when min_seq advances (carryover) fold the
    /// generation's counters into the averages, halving them (the integral term), and
    /// with NR_HIST_GENS = 1 clear them; on inc_max_seq there is nothing to do.
    pub fn reset_ctrl_pos(&mut self, t: usize, carryover: bool) {
        let clear = if carryover {
            NR_HIST_GENS == 1
        } else {
            NR_HIST_GENS > 1
        };
        if !carryover && !clear {
            return;
        }
        let seq = if carryover {
            self.min_seq[t]
        } else {
            self.max_seq + 1
        };
        let hist = lru_hist_from_seq(seq);
        for tier in 0..MAX_NR_TIERS {
            if carryover {
                self.avg_refaulted[t][tier] =
                    (self.avg_refaulted[t][tier] + self.refaulted[hist][t][tier]) / 2;
                let mut sum = self.avg_total[t][tier] + self.evicted[hist][t][tier];
                if tier > 0 {
                    sum += self.protected[hist][t][tier - 1];
                }
                self.avg_total[t][tier] = sum / 2;
            }
            if clear {
                self.refaulted[hist][t][tier] = 0;
                self.evicted[hist][t][tier] = 0;
                if tier > 0 {
                    self.protected[hist][t][tier - 1] = 0;
                }
            }
        }
    }

    /// Models get_tier_idx() (6.1): the last tier whose refault rate is within twice
    /// tier 0's (gains 1:2); tiers above it are protected.
    pub fn get_tier_idx(&self, t: usize) -> usize {
        let sp = self.read_ctrl_pos(t, 0, 1);
        let mut tier = 1;
        while tier < MAX_NR_TIERS && positive_ctrl_err(&sp, &self.read_ctrl_pos(t, tier, 2)) {
            tier += 1;
        }
        tier - 1
    }

    /// Models get_type_to_scan() (6.1): file if its tier 0 refaults no more than anon's,
    /// weighted by swappiness : 200 - swappiness; then the tier of that type to evict
    /// up to, against tier 0 of the other type.
    pub fn get_type_to_scan(&self, swappiness: u32) -> (usize, usize) {
        let gain = [u64::from(swappiness), 200 - u64::from(swappiness)];
        let sp = self.read_ctrl_pos(ANON, 0, gain[ANON]);
        let pv = self.read_ctrl_pos(FILE, 0, gain[FILE]);
        let t = usize::from(positive_ctrl_err(&sp, &pv));
        let sp = self.read_ctrl_pos(1 - t, 0, gain[1 - t]);
        let mut tier = 1;
        while tier < MAX_NR_TIERS && positive_ctrl_err(&sp, &self.read_ctrl_pos(t, tier, gain[t])) {
            tier += 1;
        }
        (t, tier - 1)
    }
}

/// Models positive_ctrl_err(): the process variable refaults no more than the setpoint,
/// relative to their gains: pv.refaulted < 64, or pv.refaulted * (sp.total + 64) *
/// sp.gain <= (sp.refaulted + 1) * pv.total * pv.gain (unsigned long arithmetic).
pub fn positive_ctrl_err(sp: &CtrlPos, pv: &CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv
            .refaulted
            .wrapping_mul(sp.total + MIN_LRU_BATCH)
            .wrapping_mul(sp.gain)
            <= (sp.refaulted + 1)
                .wrapping_mul(pv.total)
                .wrapping_mul(pv.gain)
}

impl Mglru {
    /// Models sort_folio() (6.1): keep a folio off the isolation list if it was promoted
    /// (to the head of its gen's list), its tier is protected (to the tail of the next
    /// generation, counted in protected[] and workingset_activate) or it is waiting for
    /// writeback (to the head of the next generation, with PG_reclaim). Dirty lazyfree
    /// and unevictable folios are not modelled (no MADV_FREE, no mlock).
    ///
    /// With seed 003 (`batch`): the size changes are batched, and with bulk moves a
    /// protected folio stays in place to move with the run (lru_gen_try_inc_bulk).
    fn sort_folio(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        pfn: Pfn,
        tier_idx: usize,
        batch: &mut GenBatch,
    ) -> bool {
        let f = k.folios[pfn as usize];
        let (gen, t) = (f.lru_gen() as usize, f.lru_type());
        let tier = lru_tier_from_refs(folio_lru_refs(&f));
        let min_seq = self.lrugen[lv].min_seq[t];
        if gen != lru_gen_from_seq(min_seq) {
            self.relink(k, lv, pfn, gen, false);
            k.spend(k.costs.list_op, Cat::ListOps);
            return true;
        }
        // 6.8's page-cache fix also protects folios whose refs saturated, whatever the
        // PID controller says, so they get another generation to show their refaults.
        let saturated = self.page_cache_fix && folio_lru_refs(&f) == 1 << LRU_REFS_WIDTH;
        if tier > tier_idx || saturated {
            let hist = lru_hist_from_seq(min_seq);
            let new_gen = folio_inc_gen(&mut self.lrugen[lv], k, lv, pfn, false, batch);
            if batch.parts.bulk_move {
                self.try_inc_bulk(k, lv, pfn, new_gen, batch);
            } else {
                self.relink(k, lv, pfn, new_gen, true);
                k.spend(k.costs.list_op, Cat::ListOps);
            }
            self.lrugen[lv].protected[hist][t][tier - 1] += 1;
            let c = if t == ANON {
                Vm::WorkingsetActivateAnon
            } else {
                Vm::WorkingsetActivateFile
            };
            k.count(c, f.memcg, 1);
            return true;
        }
        if f.test(pg::WRITEBACK) || (t == FILE && f.test(pg::DIRTY)) {
            let new_gen = folio_inc_gen(&mut self.lrugen[lv], k, lv, pfn, true, batch);
            self.relink(k, lv, pfn, new_gen, false);
            k.spend(k.costs.list_op, Cat::ListOps);
            return true;
        }
        false
    }

    /// Models isolate_folio() (6.1): take a folio off the LRU for shrink_folio_list
    /// unless unmapping or writing is not allowed, or someone else owns PG_lru. The refs
    /// state survives only if PG_referenced was set; PG_referenced and PG_reclaim are
    /// cleared for shrink_folio_list. v11 (May 2022, under `v11*`) keeps the refs field
    /// and PG_workingset whatever PG_referenced says.
    fn isolate_folio(&mut self, k: &mut Kernel, lv: usize, pfn: Pfn, sc: &ScanControl) -> bool {
        let f = &mut k.folios[pfn as usize];
        if !sc.may_unmap && f.mapped() {
            return false;
        }
        if !sc.may_writepage && (f.test(pg::DIRTY) || (f.test(pg::ANON) && !f.test(pg::SWAPCACHE)))
        {
            return false;
        }
        if !f.test_clear(pg::LRU) {
            return false;
        }
        if !f.test(pg::REFERENCED) && !self.v11_folios() {
            f.clear(LRU_REFS_FLAGS);
            f.set_refs_field(0);
        }
        f.clear(pg::RECLAIM | pg::REFERENCED);
        self.lru_gen_del_folio(k, lv, pfn, true);
        true
    }

    /// Models scan_folios() (6.1, lru lock held): from the tail of the oldest generation
    /// of type `t`, sort or isolate folios until 64 are isolated (or 64 could not be) or
    /// MAX_LRU_BATCH were looked at (4096; v11's 8192 under `v11*`). Returns the folios
    /// scanned, or 0 if none could be isolated with budget left (nothing eligible). Each
    /// folio costs its touch (lru_scan_touch) and the list operation that moves it.
    ///
    /// Seed 003 ("mm, lru_gen: batch update pages when aging", switch `batch_aging*`):
    /// prefetch of the next folio, size changes batched per list, protected folios moved
    /// in one run (GenBatch, applied by lru_gen_update_batch when the list is done).
    fn scan_folios(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &ScanControl,
        t: usize,
        tier: usize,
        list: &mut Vec<Pfn>,
    ) -> u64 {
        vm_warn_on!(!list.is_empty()); // VM_WARN_ON_ONCE(!list_empty(list)) in scan_folios()
        if self.lrugen[lv].nr_gens(t) == MIN_NR_GENS {
            return 0;
        }
        let gen = lru_gen_from_seq(self.lrugen[lv].min_seq[t]);
        let (mut scanned, mut sorted, mut isolated, mut skipped) = (0, 0, 0, 0);
        let mut remaining = self.max_lru_batch();
        let mut moved = List::default();
        let mut batch = GenBatch::new(k.cfg.batch_aging_parts(), gen);
        // Tail first through a saved `prev`, as the series does: with bulk moves the
        // folios of the run stay on the list behind the scan.
        let mut next = self.lrugen[lv].lists[gen][t].tail;
        while next != NIL {
            let pfn = next;
            next = k.links[pfn as usize].prev;
            // The next folio's link (the next hop of this chase) and frame.
            if let (Some(l), Some(f)) = (k.links.get(next as usize), k.folios.get(next as usize)) {
                crate::kernel::mm::prefetch(l);
                crate::kernel::mm::prefetch(f);
            }
            lru_scan_touch(k, batch.parts.prefetch && scanned > 0);
            self.check_gen_list_folio(k, lv, pfn, t);
            scanned += 1;
            if self.sort_folio(k, lv, pfn, tier, &mut batch) {
                sorted += 1;
            } else if self.isolate_folio(k, lv, pfn, sc) {
                if self.look_around {
                    super::lookaround::prefetch_window(k, pfn);
                }
                list.push(pfn);
                isolated += 1;
                k.spend(k.costs.list_op, Cat::ListOps);
            } else {
                self.lrugen[lv].lists[gen][t].remove(&mut k.links, &mut k.folios, pfn);
                moved.push_head(&mut k.links, &mut k.folios, pfn);
                skipped += 1;
                k.spend(k.costs.list_op, Cat::ListOps);
            }
            remaining -= 1;
            if remaining == 0 || isolated.max(skipped) >= MIN_LRU_BATCH {
                break;
            }
        }
        if skipped > 0 {
            self.lrugen[lv].lists[gen][t].splice_head(&mut k.links, &mut moved);
            k.vm.add(Vm::PgskipNormal, skipped);
        }
        self.lru_gen_update_batch(k, lv, t, gen, &mut batch);
        let memcg = k.lruvecs[lv].memcg;
        let (scan_c, _) = sc.scan_steal();
        sc.count(k, scan_c, memcg, isolated);
        sc.count(k, Vm::Pgrefill, memcg, sorted);
        let c = if t == ANON {
            Vm::PgscanAnon
        } else {
            Vm::PgscanFile
        };
        k.count(c, memcg, isolated);
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// Models isolate_folios() (6.1): the obvious type first (file at swappiness 0, anon
    /// if it has an older generation, file at 1, anon at 200), else the PID controller's
    /// choice; the other evictable type if the first yields nothing. Returns (scanned,
    /// type scanned).
    fn isolate_folios(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &ScanControl,
        swappiness: u32,
        list: &mut Vec<Pfn>,
    ) -> (u64, usize) {
        let g = &self.lrugen[lv];
        let (mut t, mut tier) = if swappiness == 0 {
            (FILE, None)
        } else if g.min_seq[ANON] < g.min_seq[FILE] {
            (ANON, None)
        } else if swappiness == 1 {
            (FILE, None)
        } else if swappiness == 200 {
            (ANON, None)
        } else {
            let (t, tier) = g.get_type_to_scan(swappiness);
            (t, Some(tier))
        };
        let mut scanned = 0;
        for _ in usize::from(swappiness == 0)..2 {
            let tier_idx = tier.unwrap_or_else(|| self.lrugen[lv].get_tier_idx(t));
            scanned = self.scan_folios(k, lv, sc, t, tier_idx, list);
            if scanned > 0 {
                break;
            }
            t = 1 - t;
            tier = None;
        }
        (scanned, t)
    }

    /// Models evict_folios() (6.1, with "retry folios written back while isolated"):
    /// isolate up to 64 folios, try to advance min_seq, shrink the list, and put the
    /// survivors back: one waiting on writeback keeps its flags (restored
    /// PG_referenced if workingset), a clean unmapped unreferenced one is retried once,
    /// the rest go to the youngest generation (PG_active, refs cleared). Under `v11*`
    /// the May 2022 putback instead (`v11::putback_flags`, no retry). Returns the
    /// folios scanned, 0 when the type is down to MIN_NR_GENS generations.
    pub fn evict_folios(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u32,
    ) -> u64 {
        let memcg = k.lruvecs[lv].memcg;
        let mut list = Vec::with_capacity(MIN_LRU_BATCH as usize);
        k.lock_site = LockSite::Isolate;
        k.lock_lruvec(lv);
        let (mut scanned, t) = self.isolate_folios(k, lv, sc, swappiness, &mut list);
        scanned += u64::from(self.try_to_inc_min_seq(lv, swappiness != 0));
        if self.lrugen[lv].nr_gens(usize::from(swappiness == 0)) == MIN_NR_GENS {
            scanned = 0;
        }
        k.unlock();
        if list.is_empty() {
            return scanned;
        }
        self.need_swapping |= t == ANON; // evict_folios()'s need_swapping (6.1, seed 000)
        let mut skip_retry = false;
        let v11 = self.v11_folios();
        loop {
            let mut stat = ReclaimStat::default();
            let reclaimed = vmscan::shrink_folio_list(k, self, &mut list, sc, &mut stat);
            sc.nr_reclaimed += reclaimed;
            let mut clean = Vec::new();
            list.retain(|&pfn| {
                let f = &mut k.folios[pfn as usize];
                if v11 {
                    super::v11::putback_flags(f);
                    return true;
                }
                if f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)) {
                    if f.test(pg::WORKINGSET) {
                        f.set(pg::REFERENCED);
                    }
                    return true;
                }
                if skip_retry
                    || f.test(pg::ACTIVE)
                    || f.test(pg::REFERENCED)
                    || f.mapped()
                    || f.test(pg::DIRTY)
                    || f.test(pg::WRITEBACK)
                {
                    f.clear(LRU_REFS_FLAGS);
                    f.set_refs_field(0);
                    f.set(pg::ACTIVE);
                    return true;
                }
                clean.push(pfn);
                false
            });
            sc.nr_scanned -= clean.len() as u64;
            k.lock_site = LockSite::Putback;
            k.lock_lruvec(lv);
            for &pfn in &list {
                vmscan::check_putback(k, lv, pfn);
                k.folios[pfn as usize].set(pg::LRU);
                self.lru_gen_add_folio(k, lv, pfn, false);
                k.spend(k.costs.list_op, Cat::ListOps);
            }
            if let Some(w) = self.walk.as_mut().filter(|w| w.batched > 0) {
                w.batched = 0;
                self.lrugen[lv].apply_deltas(k, lv, &mut w.nr_pages);
            }
            let (_, steal_c) = sc.scan_steal();
            sc.count(k, steal_c, memcg, reclaimed);
            let c = if t == ANON {
                Vm::PgstealAnon
            } else {
                Vm::PgstealFile
            };
            k.count(c, memcg, reclaimed);
            k.unlock();
            if clean.is_empty() {
                return scanned;
            }
            list = clean;
            skip_retry = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::config::Setup;
    use crate::kernel::lru::Policy;

    /// 16 MiB on one node and 2 CPUs, no swap, the root memcg only; one file folio
    /// taken from the allocator and added to the LRU (generation lists of lruvec 0).
    fn one_folio_on_the_lru() -> (Kernel, Box<Mglru>, Pfn) {
        let mut k = Kernel::new(&Setup::small(4096, 2));
        let mut m = Box::new(Mglru::new(&k));
        let pfn = k.take_free_page(0).expect("a free page");
        k.folios[pfn as usize].set(pg::LRU);
        m.add_folio(&mut k, pfn, false);
        (k, m, pfn)
    }

    #[test]
    fn a_folio_added_to_a_generation_passes_the_scan_checks() {
        let (k, m, pfn) = one_folio_on_the_lru();
        assert!(k.folios[pfn as usize].lru_gen() >= 0);
        m.check_gen_list_folio(&k, 0, pfn, FILE);
    }

    /// sort_folio()'s VM_WARN_ON_ONCE_FOLIO(gen >= MAX_NR_GENS) in the model's form: a
    /// folio whose generation min_seq has passed.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "outside [min_seq, max_seq]")]
    fn a_folio_in_a_retired_generation_fails_the_scan_checks() {
        let (k, mut m, pfn) = one_folio_on_the_lru();
        let g = &mut m.lrugen[0];
        let gen = k.folios[pfn as usize].lru_gen() as u64;
        // Retire the folio's generation: min_seq one past it, max_seq at min_seq + 1.
        let seq = g.seq_of(FILE, gen as usize).unwrap();
        g.min_seq = [seq + 1; 2];
        g.max_seq = seq + 2;
        m.check_gen_list_folio(&k, 0, pfn, FILE);
    }

    /// VM_WARN_ON_ONCE_FOLIO(folio_test_active(folio), folio) in lru_gen_del_folio().
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "on a gen list with PG_active")]
    fn pg_active_with_a_generation_fails_lru_gen_del_folio() {
        let (mut k, mut m, pfn) = one_folio_on_the_lru();
        k.folios[pfn as usize].set(pg::ACTIVE);
        m.del_folio(&mut k, pfn);
    }

    /// move_folios_to_lru()'s VM_BUG_ON_FOLIO(folio_test_lru(folio), folio): a folio
    /// still on the LRU is not put back.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "put back twice")]
    fn putting_back_a_folio_on_the_lru_fails() {
        let (k, _m, pfn) = one_folio_on_the_lru();
        vmscan::check_putback(&k, 0, pfn);
    }

    fn pos(refaulted: u64, total: u64, gain: u64) -> CtrlPos {
        CtrlPos {
            refaulted,
            total,
            gain,
        }
    }

    #[test]
    fn positive_ctrl_err_integer_arithmetic() {
        // Fewer than MIN_LRU_BATCH refaults always pass.
        assert!(positive_ctrl_err(&pos(1000, 1000, 1), &pos(63, 64, 2)));
        // 64 * (1000 + 64) * 1 = 68096 <= (100 + 1) * 400 * 2 = 80800.
        assert!(positive_ctrl_err(&pos(100, 1000, 1), &pos(64, 400, 2)));
        // 64 * 1064 = 68096 > 101 * 300 * 2 = 60600.
        assert!(!positive_ctrl_err(&pos(100, 1000, 1), &pos(64, 300, 2)));
        // The +1 lets a setpoint without refaults still be compared:
        // 64 * (0 + 64) * 1 = 4096 <= 1 * 2048 * 2 = 4096.
        assert!(positive_ctrl_err(&pos(0, 0, 1), &pos(64, 2048, 2)));
        assert!(!positive_ctrl_err(&pos(0, 0, 1), &pos(64, 2047, 2)));
    }

    #[test]
    fn tier_and_type_selection() {
        let mut g = LruGen::new(0);
        // File tier 0 refaults 100 of 1000 (gain 1); tier 1: 80 of 500 at gain 2 passes
        // (80 * 1064 * 1 <= 101 * 500 * 2), tier 2: 200 of 400 fails: evict tiers
        // 0..=1, protect 2 and 3.
        g.avg_refaulted[FILE] = [100, 80, 200, 0];
        g.avg_total[FILE] = [1000, 500, 400, 0];
        assert_eq!(g.get_tier_idx(FILE), 1);
        g.avg_refaulted[FILE] = [100, 10, 10, 10];
        assert_eq!(g.get_tier_idx(FILE), 3, "nothing protected");
        // Anon tier 0 refaults far more than file's: scan file.
        g.avg_refaulted[ANON] = [500, 0, 0, 0];
        g.avg_total[ANON] = [1000, 0, 0, 0];
        assert_eq!(g.get_type_to_scan(60).0, FILE);
        g.avg_refaulted[ANON] = [0; 4];
        g.avg_refaulted[FILE] = [500, 0, 0, 0];
        assert_eq!(g.get_type_to_scan(60).0, ANON);
    }

    #[test]
    fn reset_ctrl_pos_halves_into_the_averages_and_clears() {
        let mut g = LruGen::new(0);
        g.avg_refaulted[ANON][1] = 10;
        g.avg_total[ANON][1] = 100;
        g.refaulted[0][ANON][1] = 31;
        g.evicted[0][ANON][1] = 50;
        g.protected[0][ANON][0] = 25;
        g.reset_ctrl_pos(ANON, false);
        assert_eq!(
            g.refaulted[0][ANON][1], 31,
            "inc_max_seq keeps them with one hist gen"
        );
        g.reset_ctrl_pos(ANON, true);
        assert_eq!(g.avg_refaulted[ANON][1], 20, "(10 + 31) / 2");
        assert_eq!(g.avg_total[ANON][1], 87, "(100 + 50 + 25) / 2");
        assert_eq!(
            (
                g.refaulted[0][ANON][1],
                g.evicted[0][ANON][1],
                g.protected[0][ANON][0]
            ),
            (0, 0, 0)
        );
    }
}
