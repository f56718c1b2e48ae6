//! The generations of one lruvec (`struct lru_gen_struct`, Linux 6.1): sequence numbers,
//! per-generation lists and sizes, the PID controller's counters, and the transitions of a
//! folio's gen and refs fields (include/linux/mm_inline.h and the lru_gen part of
//! mm/vmscan.c).

use super::Mglru;
use crate::kernel::config::BatchAging;
use crate::kernel::debug::vm_warn_on;
use crate::kernel::folio::{pg, Folio, Pfn, NIL};
use crate::kernel::list::List;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;

pub const MIN_NR_GENS: u64 = 2;
pub const MAX_NR_GENS: u64 = 4;
pub const MAX_NR_TIERS: usize = 4;
/// NR_HIST_GENS without CONFIG_LRU_GEN_STATS.
pub const NR_HIST_GENS: usize = 1;
/// BITS_PER_LONG: isolation batch, refault floor of the PID controller, look-around window.
pub const MIN_LRU_BATCH: u64 = 64;
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// LRU_REFS_WIDTH.
pub const LRU_REFS_WIDTH: u32 = 2;

pub const ANON: usize = 0;
pub const FILE: usize = 1;

/// lru_gen_from_seq().
#[inline]
pub fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// lru_hist_from_seq().
#[inline]
pub fn lru_hist_from_seq(seq: u64) -> usize {
    (seq % NR_HIST_GENS as u64) as usize
}

/// order_base_2(): ceil(log2 n), 0 for n <= 1.
fn order_base_2(n: u32) -> usize {
    if n <= 1 {
        0
    } else {
        (32 - (n - 1).leading_zeros()) as usize
    }
}

/// Models lru_tier_from_refs(): tier = order_base_2(refs + 1).
#[inline]
pub fn lru_tier_from_refs(refs: u32) -> usize {
    order_base_2(refs + 1)
}

/// Models folio_lru_refs() (6.1): accesses through file descriptors beyond the first,
/// the refs counter plus PG_workingset.
#[inline]
pub fn folio_lru_refs(f: &Folio) -> u32 {
    f.refs_field() + u32::from(f.test(pg::WORKINGSET))
}

/// LRU_REFS_FLAGS (6.1).
pub const LRU_REFS_FLAGS: u32 = pg::REFERENCED | pg::WORKINGSET;

/// Models folio_inc_refs() (6.1, folio_mark_accessed with MGLRU): the first access sets
/// PG_referenced, the second PG_workingset, later ones count up to 3 in the refs field.
pub fn folio_inc_refs(f: &mut Folio) {
    if f.test(pg::UNEVICTABLE) {
        return;
    }
    if !f.test(pg::REFERENCED) {
        f.set(pg::REFERENCED);
    } else if !f.test(pg::WORKINGSET) {
        f.set(pg::WORKINGSET);
    } else if f.refs_field() < 3 {
        f.set_refs_field(f.refs_field() + 1);
    }
}

/// Models folio_update_gen() (6.1): the page-table path's promotion. An isolated folio
/// (no gen) only gets PG_referenced, for shrink_folio_list; otherwise the gen becomes
/// `gen` and the refs state is cleared. Returns the old gen (-1 if isolated). The caller
/// accounts the move; the folio stays on its list until the eviction scan sorts it.
pub fn folio_update_gen(f: &mut Folio, gen: usize) -> i32 {
    let old = f.lru_gen();
    if old < 0 {
        f.set(pg::REFERENCED);
        return old;
    }
    f.clear(LRU_REFS_FLAGS);
    f.set_refs_field(0);
    f.set_lru_gen(gen as i32);
    old
}

/// The classic list index the compat counters use for a type: inactive, +1 for active.
#[inline]
fn compat_lru(t: usize, active: bool) -> usize {
    2 * t + usize::from(active)
}

/// Adjusts a compat counter (NR_LRU_BASE + lru). Like the kernel's, a counter may go
/// transiently "negative" while deferred walk deltas are pending, so it wraps.
#[inline]
pub fn update_lru_size(k: &mut Kernel, lv: usize, lru: usize, delta: i64) {
    let n = &mut k.lruvecs[lv].nr[lru];
    *n = n.wrapping_add_signed(delta);
    k.memcg_rstat_updated(k.lruvecs[lv].memcg, delta.unsigned_abs());
}

/// struct lru_gen_struct of one lruvec. One zone per node in this model, so the kernel's
/// `[zone]` dimension is dropped.
#[derive(Clone, Debug)]
pub struct LruGen {
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    /// Birth time (virtual ns) of each generation slot.
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// lists[gen][type]; head newest, the eviction scan starts at the tail.
    pub lists: [[List; 2]; MAX_NR_GENS as usize],
    /// nr_pages[gen][type], by the gen field of the folios (signed, as in the kernel).
    pub nr_pages: [[i64; 2]; MAX_NR_GENS as usize],
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// protected[hist][type][tier - 1]: tier 0 is never protected.
    pub protected: [[[u64; MAX_NR_TIERS - 1]; 2]; NR_HIST_GENS],
    pub evicted: [[[u64; MAX_NR_TIERS]; 2]; NR_HIST_GENS],
    pub refaulted: [[[u64; MAX_NR_TIERS]; 2]; NR_HIST_GENS],
    /// An oldest generation of this type was reused as the youngest without moving its
    /// folios (inc_min_seq for anon that cannot be swapped; v11's inc_min_seq for both
    /// types): their promoted gen fields may since be older than their list's. Only the
    /// invariant checker reads it.
    pub reused: [bool; 2],
}

impl LruGen {
    /// Models lru_gen_init_lruvec(): max_seq = MIN_NR_GENS + 1, every slot born now.
    pub fn new(now: u64) -> Self {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0; 2],
            timestamps: [now; MAX_NR_GENS as usize],
            lists: Default::default(),
            nr_pages: [[0; 2]; MAX_NR_GENS as usize],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            protected: [[[0; MAX_NR_TIERS - 1]; 2]; NR_HIST_GENS],
            evicted: [[[0; MAX_NR_TIERS]; 2]; NR_HIST_GENS],
            refaulted: [[[0; MAX_NR_TIERS]; 2]; NR_HIST_GENS],
            reused: [false; 2],
        }
    }

    /// get_nr_gens().
    #[inline]
    pub fn nr_gens(&self, t: usize) -> u64 {
        self.max_seq - self.min_seq[t] + 1
    }

    /// Models seq_is_valid() (6.1): 2 <= nr_gens(file) <= nr_gens(anon) <= 4.
    pub fn seq_is_valid(&self) -> bool {
        self.min_seq[ANON] <= self.min_seq[FILE]
            && self.nr_gens(FILE) >= MIN_NR_GENS
            && self.nr_gens(ANON) <= MAX_NR_GENS
    }

    /// Models lru_gen_is_active(): the two youngest generations count as active.
    #[inline]
    pub fn is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }

    /// The seq of generation slot `gen` within `[min_seq[t], max_seq]`, if it is in use.
    pub fn seq_of(&self, t: usize, gen: usize) -> Option<u64> {
        (self.min_seq[t]..=self.max_seq).find(|&s| lru_gen_from_seq(s) == gen)
    }

    /// Models the placement of lru_gen_add_folio() in Linux 6.1: an active hint goes to
    /// max_seq; anon not in the swap cache, or a folio waiting on writeback for reclaim,
    /// to min_seq + 1; everything else to min_seq. With `page_cache_fix` (6.8), the
    /// former go to max_seq - 1 and the rest to min_seq + 1 unless reclaiming or only
    /// MIN_NR_GENS + 1 generations are in use.
    pub fn add_seq(&self, f: &Folio, reclaiming: bool, page_cache_fix: bool) -> u64 {
        let t = f.lru_type();
        let pending = (t == ANON && !f.test(pg::SWAPCACHE))
            || (f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)));
        if f.test(pg::ACTIVE) {
            self.max_seq
        } else if !page_cache_fix {
            self.min_seq[t] + u64::from(pending)
        } else if pending {
            // 6.8: the second youngest generation.
            self.max_seq - 1
        } else if reclaiming || self.min_seq[t] + MIN_NR_GENS >= self.max_seq {
            self.min_seq[t]
        } else {
            // 6.8: not at the very tail, so a surge of refaults has time to show.
            self.min_seq[t] + 1
        }
    }

    /// Models lru_gen_update_size(): move one page between generations (-1: none) in
    /// nr_pages and in the active/inactive compat counters. Demotion (active to inactive)
    /// needs isolation and never comes here.
    pub fn update_size(&mut self, k: &mut Kernel, lv: usize, t: usize, old: i32, new: i32) {
        // VM_WARN_ON_ONCE(old_gen != -1 && old_gen >= MAX_NR_GENS), the same of new_gen,
        // and VM_WARN_ON_ONCE(old_gen == -1 && new_gen == -1) in lru_gen_update_size().
        let gen_ok = |g: i32| (-1..MAX_NR_GENS as i32).contains(&g);
        vm_warn_on!(!gen_ok(old) || !gen_ok(new) || (old == -1 && new == -1));
        if old >= 0 {
            self.nr_pages[old as usize][t] -= 1;
        }
        if new >= 0 {
            self.nr_pages[new as usize][t] += 1;
        }
        match (old, new) {
            (-1, n) => update_lru_size(k, lv, compat_lru(t, self.is_active(n as usize)), 1),
            (o, -1) => update_lru_size(k, lv, compat_lru(t, self.is_active(o as usize)), -1),
            (o, n) => {
                let (o, n) = (self.is_active(o as usize), self.is_active(n as usize));
                // VM_WARN_ON_ONCE(lru_gen_is_active(lruvec, old_gen) &&
                // !lru_gen_is_active(lruvec, new_gen)): demotion requires isolation.
                vm_warn_on!(o && !n, "demotion without isolation");
                if !o && n {
                    update_lru_size(k, lv, compat_lru(t, false), -1);
                    update_lru_size(k, lv, compat_lru(t, true), 1);
                }
            }
        }
    }

    /// Applies deferred per-generation deltas (reset_batch_size()): sizes and the compat
    /// counter of each generation as it is now.
    pub fn apply_deltas(&mut self, k: &mut Kernel, lv: usize, nr: &mut [[i64; 2]; 4]) {
        for (gen, row) in nr.iter_mut().enumerate() {
            for t in [ANON, FILE] {
                let d = std::mem::take(&mut row[t]);
                if d != 0 {
                    self.nr_pages[gen][t] += d;
                    update_lru_size(k, lv, compat_lru(t, self.is_active(gen)), d);
                }
            }
        }
    }
}

/// Models folio_inc_gen() (6.1): move a folio of the oldest generation to the next one,
/// clearing its refs state (and setting PG_reclaim when `reclaiming`). A folio promoted
/// meanwhile keeps its gen. Returns the new gen; the caller moves it between lists.
///
/// The size change is lru_gen_update_size() at once (6.1), or with seed 003's batched
/// counters ("mm, lru_gen: batch update counters on aging") a delta recorded in `batch`
/// for lru_gen_update_batch().
pub fn folio_inc_gen(
    g: &mut LruGen,
    k: &mut Kernel,
    lv: usize,
    pfn: Pfn,
    reclaiming: bool,
    batch: &mut GenBatch,
) -> usize {
    let f = &mut k.folios[pfn as usize];
    let t = f.lru_type();
    let old_gen = lru_gen_from_seq(g.min_seq[t]);
    let gen = f.lru_gen();
    debug_assert!(gen >= 0);
    if gen as usize != old_gen {
        return gen as usize;
    }
    let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
    f.clear(LRU_REFS_FLAGS);
    f.set_refs_field(0);
    f.set_lru_gen(new_gen as i32);
    if reclaiming {
        f.set(pg::RECLAIM);
    }
    if batch.parts.counters {
        batch.delta[old_gen] -= 1;
        batch.delta[new_gen] += 1;
    } else {
        k.spend(k.costs.gen_size_update, Cat::ListOps);
        if !g.is_active(old_gen) && g.is_active(new_gen) {
            k.spend(2 * k.costs.lru_stat_update, Cat::ListOps);
        }
        g.update_size(k, lv, t, old_gen as i32, new_gen as i32);
    }
    new_gen
}

/// Seed 003's per-list aging batch (`struct gen_update_batch` of v2, "mm, lru_gen: batch
/// update pages when aging"), one per generation list scanned by scan_folios or
/// inc_min_seq, applied by lru_gen_update_batch() when the list is done or the scan
/// stops. With neither part on it stays empty and the scan is 6.1's.
#[derive(Clone, Debug)]
pub struct GenBatch {
    pub parts: BatchAging,
    /// `old_gen + 1`: where folio_inc_gen sends the folios of this list.
    pub bulk_gen: usize,
    /// delta[gen]: pages folio_inc_gen moved into (+) or out of (-) each generation and
    /// not yet in nr_pages (batched counters).
    delta: [i64; MAX_NR_GENS as usize],
    /// The run of folios bound for `bulk_gen` left in place on the scanned list: `head`
    /// is the latest found (nearest the list head), `tail` the first (bulk moves).
    head: Pfn,
    tail: Pfn,
    len: u32,
}

impl GenBatch {
    pub fn new(parts: BatchAging, old_gen: usize) -> Self {
        GenBatch {
            parts,
            bulk_gen: (old_gen + 1) % MAX_NR_GENS as usize,
            delta: [0; MAX_NR_GENS as usize],
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl Mglru {
    /// Models lru_gen_try_inc_bulk() (seed 003, "mm, lru_gen: move pages in bulk when
    /// aging"): a folio that folio_inc_gen sent to `bulk_gen` stays where it is and joins
    /// the run at the tail of the scanned list (everything else scanned leaves the list,
    /// so the run is contiguous); it moves with the run in lru_gen_inc_bulk_finish. A
    /// folio whose gen was promoted meanwhile goes alone to the head of its own gen.
    ///
    /// The posted patch (v1-v3) also makes such a promoted folio the run's head after
    /// moving it, which would splice across two lists (the list corruption review asked
    /// about); this models the intent, the folio stays out of the run.
    pub(super) fn try_inc_bulk(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        pfn: Pfn,
        gen: usize,
        b: &mut GenBatch,
    ) {
        if gen != b.bulk_gen {
            self.relink(k, lv, pfn, gen, false);
            k.spend(k.costs.list_op, Cat::ListOps);
            return;
        }
        if b.head == NIL {
            b.tail = pfn;
        }
        b.head = pfn;
        b.len += 1;
    }

    /// Models lru_gen_inc_bulk_finish(): list_bulk_move_tail of the run to the tail of
    /// lists[bulk_gen]: one list operation for the whole run, its order kept.
    fn lru_gen_inc_bulk_finish(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        t: usize,
        old_gen: usize,
        b: &mut GenBatch,
    ) {
        if b.head == NIL {
            return;
        }
        let mut dst = self.lrugen[lv].lists[b.bulk_gen][t];
        self.lrugen[lv].lists[old_gen][t].bulk_move_tail(
            &mut k.links,
            &mut dst,
            b.head,
            b.tail,
            b.len,
        );
        self.lrugen[lv].lists[b.bulk_gen][t] = dst;
        let mut p = b.head;
        loop {
            self.list_gen[p as usize] = b.bulk_gen as u8;
            if p == b.tail {
                break;
            }
            p = k.links[p as usize].next;
        }
        k.spend(k.costs.list_op, Cat::ListOps);
        (b.head, b.tail, b.len) = (NIL, NIL, 0);
    }

    /// Models lru_gen_update_batch() (seed 003, v2) at the end of a list's scan: finish
    /// the bulk move, then apply the batched size deltas (one lru_gen_update_size's worth
    /// of stores for the batch) and move the pages that entered active generations from
    /// the inactive compat counter to the active one in one step.
    pub(super) fn lru_gen_update_batch(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        t: usize,
        old_gen: usize,
        b: &mut GenBatch,
    ) {
        self.lru_gen_inc_bulk_finish(k, lv, t, old_gen, b);
        let g = &mut self.lrugen[lv];
        if b.delta.iter().all(|&d| d == 0) {
            return;
        }
        k.spend(k.costs.gen_size_update, Cat::ListOps);
        let mut promoted = 0;
        for gen in 0..MAX_NR_GENS as usize {
            let d = std::mem::take(&mut b.delta[gen]);
            g.nr_pages[gen][t] += d;
            if g.is_active(gen) {
                promoted += d;
            }
        }
        if promoted != 0 {
            // lru_gen_update_size()'s check, for the batch: no demotion without isolation.
            vm_warn_on!(promoted < 0, "demotion without isolation");
            update_lru_size(k, lv, compat_lru(t, false), -promoted);
            update_lru_size(k, lv, compat_lru(t, true), promoted);
            k.spend(2 * k.costs.lru_stat_update, Cat::ListOps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_from_refs_is_order_base_2_of_accesses() {
        // refs = accesses beyond the first: N = 0..1 -> tier 0, 2 -> 1, 3..4 -> 2, 5 -> 3.
        let tiers: Vec<usize> = (0..=4).map(lru_tier_from_refs).collect();
        assert_eq!(tiers, [0, 1, 2, 2, 3]);
        let mut f = Folio::default();
        let mut by_access = Vec::new();
        for _ in 0..6 {
            folio_inc_refs(&mut f);
            by_access.push(lru_tier_from_refs(folio_lru_refs(&f)));
        }
        // After N accesses (N = 1..6): PG_referenced, +workingset, then the counter.
        assert_eq!(by_access, [0, 1, 2, 2, 3, 3]);
        assert_eq!(folio_lru_refs(&f), 4, "the counter saturates at 3");
    }

    fn folio(flags: u32) -> Folio {
        Folio {
            flags,
            ..Default::default()
        }
    }

    #[test]
    fn placement_follows_the_6_1_rules() {
        let mut g = LruGen::new(0);
        g.max_seq = 7;
        g.min_seq = [4, 5];
        let anon = pg::ANON | pg::SWAPBACKED;
        // Active hint (faults, activation): the youngest generation.
        assert_eq!(g.add_seq(&folio(anon | pg::ACTIVE), false, false), 7);
        assert_eq!(g.add_seq(&folio(pg::ACTIVE), false, false), 7);
        // Anon without a swap slot cannot be evicted at once: second oldest.
        assert_eq!(g.add_seq(&folio(anon), false, false), 5);
        // Anon in the swap cache is as cold as clean file: the oldest.
        assert_eq!(g.add_seq(&folio(anon | pg::SWAPCACHE), false, false), 4);
        assert_eq!(g.add_seq(&folio(0), false, false), 5);
        // Reclaim waiting on a dirty file folio: second oldest of its type.
        assert_eq!(g.add_seq(&folio(pg::RECLAIM | pg::DIRTY), false, false), 6);
        assert_eq!(g.add_seq(&folio(pg::RECLAIM), false, false), 5);
    }

    #[test]
    fn placement_with_the_6_8_page_cache_fix() {
        let mut g = LruGen::new(0);
        g.max_seq = 7;
        g.min_seq = [4, 5];
        let anon = pg::ANON | pg::SWAPBACKED;
        let add =
            |g: &LruGen, flags: u32, reclaiming: bool| g.add_seq(&folio(flags), reclaiming, true);
        assert_eq!(add(&g, anon | pg::ACTIVE, false), 7);
        // What cannot be evicted at once: the second youngest generation.
        assert_eq!(add(&g, anon, false), 6);
        assert_eq!(add(&g, pg::RECLAIM | pg::DIRTY, false), 6);
        // Cold anon (four generations in use): one above the oldest.
        assert_eq!(add(&g, anon | pg::SWAPCACHE, false), 5);
        assert_eq!(
            add(&g, anon | pg::SWAPCACHE, true),
            4,
            "reclaim puts it back at the tail"
        );
        // Clean file with only three generations in use: the oldest, as in 6.1.
        assert_eq!(add(&g, 0, false), 5);
        g.min_seq[1] = 4;
        assert_eq!(add(&g, 0, false), 5, "four in use: one above the oldest");
    }

    #[test]
    fn update_gen_and_inc_gen_transitions() {
        let mut f = folio(pg::REFERENCED | pg::WORKINGSET);
        f.set_refs_field(2);
        assert_eq!(folio_update_gen(&mut f, 1), -1);
        assert!(
            f.test(pg::REFERENCED),
            "isolated: marked for shrink_folio_list"
        );
        f.set_lru_gen(3);
        assert_eq!(folio_update_gen(&mut f, 1), 3);
        assert_eq!(f.lru_gen(), 1);
        assert_eq!(folio_lru_refs(&f), 0);
        assert!(!f.test(pg::REFERENCED));
    }

    #[test]
    fn active_gens_are_the_two_youngest() {
        let mut g = LruGen::new(0);
        g.max_seq = 5;
        let active: Vec<bool> = (0..4).map(|gen| g.is_active(gen)).collect();
        assert_eq!(active, [true, true, false, false]);
        g.min_seq = [3, 3];
        assert_eq!(g.seq_of(ANON, 2), None, "slot 2 would be seq 6");
        g.min_seq = [2, 3];
        assert_eq!(g.seq_of(ANON, 2), Some(2));
    }

    #[test]
    fn seq_window_invariant() {
        let mut g = LruGen::new(0);
        assert!(g.seq_is_valid(), "initial: 4 gens of each type");
        g.min_seq = [1, 2];
        assert!(g.seq_is_valid());
        g.min_seq = [2, 2];
        assert!(g.seq_is_valid(), "MIN_NR_GENS of each");
        g.min_seq = [2, 3];
        assert!(!g.seq_is_valid(), "file below MIN_NR_GENS");
        g.min_seq = [2, 1];
        assert!(!g.seq_is_valid(), "anon ahead of file");
        g.max_seq = 6;
        g.min_seq = [2, 2];
        assert!(!g.seq_is_valid(), "five generations");
    }
}
