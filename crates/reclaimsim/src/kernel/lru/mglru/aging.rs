//! Aging (Linux 6.1): the page-table walk over a memcg's mm list that finds young PTEs
//! and promotes their folios to the youngest generation, the two Bloom filters that tell
//! the walk which PTE tables are worth scanning, and the sequence counters: inc_max_seq,
//! inc_min_seq, try_to_inc_min_seq.
//!
//! Reclaimers share a round's mms (each mm to one walker), and only the last walker out
//! ages; the others wait for it (6.1, at high priority) or give up. Every
//! live mm counts as used since the last walk (the per-node bitmap is always set). The
//! non-leaf PMD accessed bit and THP PMD mappings are not modelled.

use super::gen::*;
use super::Mglru;
use crate::kernel::config::MemcgReclaim;
use crate::kernel::debug::vm_warn_on;
use crate::kernel::folio::{pg, Pfn, NIL};
use crate::kernel::memcg::MemcgId;
use crate::kernel::mm::PTRS_PER_PTE;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::vmscan::lru_scan_touch;
use crate::kernel::Kernel;
use crate::sim::sched::{TaskId, NEVER};

/// BLOOM_FILTER_SHIFT: m = 2^15 bits, two hashes.
const BLOOM_FILTER_SHIFT: u32 = 15;
const BLOOM_WORDS: usize = (1 << BLOOM_FILTER_SHIFT) / 64;

/// The mm walk statistics of 6.1 (enum lru_gen_mm_stats: NR_MM_STATS = 6).
pub const MM_LEAF_TOTAL: usize = 0;
pub const MM_LEAF_OLD: usize = 1;
pub const MM_LEAF_YOUNG: usize = 2;
pub const MM_NONLEAF_TOTAL: usize = 3;
pub const MM_NONLEAF_FOUND: usize = 4;
pub const MM_NONLEAF_ADDED: usize = 5;
pub const NR_MM_STATS: usize = 6;

/// The Bloom filter item of a PTE table: the mm and the PMD entry's index (the kernel
/// hashes the PMD entry's address).
pub fn pmd_item(mm: u32, vpn: u64) -> u64 {
    (u64::from(mm) << 40) | (vpn / PTRS_PER_PTE)
}

/// The two Bloom filters of an lruvec's mm_state (filters[NR_BLOOM_FILTERS]), allocated
/// on first reset. Filter `seq % 2` holds the PTE tables worth walking for generation seq.
#[derive(Clone, Debug, Default)]
pub struct BloomFilters {
    filters: [Option<Box<[u64]>>; 2],
}

impl BloomFilters {
    /// Host bytes of the allocated filters.
    pub fn host_bytes(&self) -> u64 {
        self.filters
            .iter()
            .flatten()
            .map(|f| f.len() as u64 * 8)
            .sum()
    }

    /// get_item_key(): two 15-bit keys from a 30-bit hash (hash_64 with GOLDEN_RATIO_64).
    fn keys(item: u64) -> [usize; 2] {
        let h = item.wrapping_mul(0x61C8_8646_80B5_83EB) >> (64 - 2 * BLOOM_FILTER_SHIFT);
        let mask = (1u64 << BLOOM_FILTER_SHIFT) - 1;
        [(h & mask) as usize, (h >> BLOOM_FILTER_SHIFT) as usize]
    }

    /// Models test_bloom_filter(): true if both bits are set, or the filter is not
    /// allocated yet (then everything is worth a look).
    pub fn test(&self, seq: u64, item: u64) -> bool {
        match &self.filters[(seq % 2) as usize] {
            None => true,
            Some(f) => Self::keys(item)
                .iter()
                .all(|&b| f[b / 64] & (1 << (b % 64)) != 0),
        }
    }

    /// Models update_bloom_filter(): sets both bits (nothing if not allocated).
    pub fn update(&mut self, seq: u64, item: u64) {
        if let Some(f) = &mut self.filters[(seq % 2) as usize] {
            for b in Self::keys(item) {
                f[b / 64] |= 1 << (b % 64);
            }
        }
    }

    /// Models reset_bloom_filter(): allocates or clears the filter of `seq`.
    pub fn reset(&mut self, seq: u64) {
        match &mut self.filters[(seq % 2) as usize] {
            Some(f) => f.fill(0),
            slot => *slot = Some(vec![0; BLOOM_WORDS].into_boxed_slice()),
        }
    }
}

/// struct lru_gen_mm_state of one lruvec.
#[derive(Clone, Debug)]
pub struct MmState {
    /// The last max_seq whose mm-list round completed.
    pub seq: u64,
    /// Position in the memcg's mm list where the previous round ended: mms from there
    /// on are new since then and force-scanned. None before the first round.
    tail: Option<usize>,
    pub filters: BloomFilters,
    pub stats: [[u64; NR_MM_STATS]; NR_HIST_GENS],
    /// The last mm handed to a walker in the round for max_seq = seq + 1 (None: the
    /// round has not started), and how many the round has handed out.
    head: Option<u32>,
    pos: usize,
    /// Walkers holding an mm of the current round (mm_state->nr_walkers).
    nr_walkers: u32,
    /// Tasks waiting for max_seq to grow (mm_state->wait, 6.1's wait_event_killable).
    pub waiters: Vec<TaskId>,
}

impl MmState {
    /// The walker count of iterate_mm_list() (6.1) for one walker's turn: whether the
    /// round had `ended` before it, whether it `had` an mm from its last turn and `got`
    /// one now. Returns whether it is the last walker out, the one to run inc_max_seq: no
    /// walker holds an mm, and it took part (a walker arriving after the end did not).
    fn walker_turn(&mut self, ended: bool, had: bool, got: bool) -> bool {
        match (had, got) {
            (true, false) => self.nr_walkers -= 1,
            (false, true) => self.nr_walkers += 1,
            _ => {}
        }
        self.nr_walkers == 0 && (had || !ended)
    }
}

/// The memcg's first live mm at or after `from` (its mm_list from there).
fn live_mm_from(k: &Kernel, memcg: MemcgId, from: u32) -> Option<u32> {
    (from..k.mms.len() as u32)
        .find(|&m| k.mms[m as usize].memcg == memcg && !k.mms[m as usize].dead)
}

impl MmState {
    /// The list walk both iterate_mm_list() versions share (mm_list->lock held): the
    /// next live mm of `memcg` after `head` that should_skip_mm() does not skip, head
    /// moving past the skipped ones; an mm at or past the previous round's end is
    /// force-scanned (every mm on the first round).
    fn advance(&mut self, k: &Kernel, memcg: MemcgId, walk: &mut MmWalk) -> Option<u32> {
        loop {
            let mm = live_mm_from(k, memcg, self.head.map_or(0, |h| h + 1))?;
            self.head = Some(mm);
            if self.tail.is_none() || self.tail == Some(self.pos) {
                self.tail = Some(self.pos + 1);
                walk.force_scan = true;
            }
            self.pos += 1;
            if !should_skip_mm(k, mm, walk) {
                return Some(mm);
            }
        }
    }

    /// A walker leaves the mm list (iterate_mm_list() with no mm to give): its walk's
    /// counts join mm_state->stats of its generation's histogram slot.
    fn fold_walk_stats(&mut self, walk: &mut MmWalk) {
        let hist = lru_hist_from_seq(walk.max_seq);
        for (s, w) in self.stats[hist].iter_mut().zip(walk.mm_stats.iter_mut()) {
            *s += std::mem::take(w);
        }
    }

    /// The round is over: mm_state->seq moves on and the next starts at the list's head.
    fn end_round(&mut self) {
        self.head = None;
        self.pos = 0;
        self.seq += 1;
    }
}

impl Default for MmState {
    fn default() -> Self {
        MmState {
            seq: MIN_NR_GENS,
            tail: None,
            filters: BloomFilters::default(),
            head: None,
            pos: 0,
            nr_walkers: 0,
            waiters: Vec::new(),
            stats: [[0; NR_MM_STATS]; NR_HIST_GENS],
        }
    }
}

/// struct lru_gen_mm_walk: a reclaimer's page-table walk and its deferred size deltas.
#[derive(Clone, Debug, Default)]
pub struct MmWalk {
    /// The lruvec the deferred deltas belong to.
    pub lruvec: usize,
    pub max_seq: u64,
    pub can_swap: bool,
    pub force_scan: bool,
    /// Deferred nr_pages deltas [gen][type] (update_batch_size), applied under the lru
    /// lock by reset_batch_size.
    pub nr_pages: [[i64; 2]; MAX_NR_GENS as usize],
    pub batched: u64,
    pub mm_stats: [u64; NR_MM_STATS],
}

impl MmWalk {
    /// Models update_batch_size(): defer a promotion's size change.
    pub fn update_batch_size(&mut self, t: usize, old_gen: usize, new_gen: usize) {
        self.batched += 1;
        self.nr_pages[old_gen][t] -= 1;
        self.nr_pages[new_gen][t] += 1;
    }
}

/// Models suitable_to_scan(): at least one young PTE per cache line of PTEs (8).
pub fn suitable_to_scan(total: u64, young: u64) -> bool {
    young * 8 >= total
}

/// Models get_pfn_folio(): the folio of a young PTE is worth updating only if it is on
/// the walk's node and in its memcg, and anon only when anon can be swapped.
pub fn get_pfn_folio(k: &Kernel, pfn: Pfn, memcg: MemcgId, node: usize, can_swap: bool) -> bool {
    let f = &k.folios[pfn as usize];
    k.node_of(pfn) == node && f.memcg == memcg && (f.lru_type() == FILE || can_swap)
}

/// A dirty PTE's folio is marked dirty (folio_mark_dirty), except anon not in the swap
/// cache, which is dirty by nature.
pub fn propagate_dirty(k: &mut Kernel, pfn: Pfn) {
    let f = &k.folios[pfn as usize];
    let unbacked_anon = f.test(pg::ANON) && f.test(pg::SWAPBACKED) && !f.test(pg::SWAPCACHE);
    if !f.test(pg::DIRTY) && !unbacked_anon {
        crate::kernel::writeback::folio_mark_dirty(k, pfn);
    }
}

/// Models should_skip_mm() (6.1): an mm with fewer than MIN_LRU_BATCH pages of the
/// types the walk can evict is not worth walking.
fn should_skip_mm(k: &Kernel, mm: u32, walk: &MmWalk) -> bool {
    let m = &k.mms[mm as usize];
    let mut size = if walk.can_swap { m.anon_rss } else { 0 };
    if size < MIN_LRU_BATCH {
        size += m
            .vmas
            .iter()
            .filter(|v| v.kind != crate::kernel::mm::VmaKind::Anon)
            .flat_map(|v| &v.ptes)
            .filter(|p| p.pfn().is_some())
            .count() as u64;
    }
    size < MIN_LRU_BATCH
}

impl Mglru {
    /// Models try_to_inc_max_seq() (6.1): unless another walker has finished this round,
    /// walk the memcg's mm list with any other walkers; the one that completes the round
    /// runs inc_max_seq and wakes the tasks waiting for it. A caller that did not get the
    /// round waits for max_seq to grow when `wait` (6.1 at priority <= DEF_PRIORITY - 2;
    /// 6.4 dropped the wait, with the walker count: see walk_mm_list_v64). Returns
    /// whether max_seq moved past `max_seq`.
    pub fn try_to_inc_max_seq(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        max_seq: u64,
        can_swap: bool,
        force_scan: bool,
        wait: bool,
    ) -> bool {
        debug_assert!(max_seq <= self.lrugen[lv].max_seq);
        let st = &mut self.mm_state[lv];
        let success = if max_seq <= st.seq {
            false
        } else if !self.walks {
            // iterate_mm_list_nowalk(), under mm_list->lock: the round completes
            // without walking any mm, unless walkers are inside it or another task
            // completed it while this one came to the lock.
            k.sync();
            let v64 = self.mm_list_v64();
            let st = &mut self.mm_state[lv];
            let ours = max_seq > st.seq && (v64 || st.nr_walkers == 0);
            st.seq += u64::from(ours);
            if ours && v64 {
                // 6.4 also starts the next round from the list's head.
                (st.head, st.pos, st.tail) = (None, 0, None);
            }
            ours
        } else {
            self.alloc_mm_walk();
            let mut walk = self.walk.take().expect("just allocated");
            walk.lruvec = lv;
            walk.max_seq = max_seq;
            walk.can_swap = can_swap;
            walk.force_scan = force_scan;
            let success = if self.mm_list_v64() {
                self.walk_mm_list_v64(k, lv, &mut walk)
            } else {
                self.walk_mm_list(k, lv, &mut walk)
            };
            self.walk = Some(walk);
            success
        };
        if !success {
            while wait && k.sched.in_task() && max_seq >= self.lrugen[lv].max_seq {
                self.mm_state[lv].waiters.push(k.sched.current);
                crate::kernel::throttle::sleep(k, crate::kernel::throttle::Sleep::Aging, NEVER);
            }
            return max_seq < self.lrugen[lv].max_seq;
        }
        self.inc_max_seq(k, lv, can_swap);
        let now = k.cur.clock;
        for t in std::mem::take(&mut self.mm_state[lv].waiters) {
            k.sched.push(t, now);
        }
        self.wake_flushers_after_aging(k);
        true
    }

    /// Models iterate_mm_list() + walk_mm() for one walker: take the round's next mm
    /// (live, of the lruvec's memcg, not should_skip_mm) and walk it, until the round
    /// has no mm left. Walkers share the round: each mm goes to one of them, and the
    /// walker that hands out the last mm ends the round (mm_state->seq). Mms at or past
    /// the previous round's tail are force-scanned (every mm on the first round); the
    /// first mm of a round clears the next generation's Bloom filter. Returns whether
    /// this walker was the last one out (nr_walkers back to 0): only it may run
    /// inc_max_seq, so no walk is still promoting to a max_seq that has moved on.
    fn walk_mm_list(&mut self, k: &mut Kernel, lv: usize, walk: &mut MmWalk) -> bool {
        let mut iter: Option<u32> = None;
        loop {
            // The round is shared under mm_list->lock.
            k.sync();
            // Another walker ended the round: a walker that had no mm is not the last.
            let ended = walk.max_seq <= self.mm_state[lv].seq;
            let mm = if ended {
                None
            } else {
                self.next_mm(k, lv, walk)
            };
            let st = &mut self.mm_state[lv];
            let last = st.walker_turn(ended, iter.is_some(), mm.is_some());
            iter = mm;
            let Some(mm) = mm else {
                st.fold_walk_stats(walk);
                return last;
            };
            self.walk_mm(k, lv, mm, walk);
        }
    }

    /// The mm-list part of iterate_mm_list() (6.1, mm_list->lock held): the round's
    /// next mm worth walking, if any; handing out the last one ends the round.
    fn next_mm(&mut self, k: &Kernel, lv: usize, walk: &mut MmWalk) -> Option<u32> {
        let memcg = k.lruvecs[lv].memcg;
        let st = &mut self.mm_state[lv];
        debug_assert!(
            st.head.is_none() || st.nr_walkers > 0,
            "a round left half done"
        );
        if st.head.is_none() {
            st.filters.reset(walk.max_seq + 1);
        }
        let found = st.advance(k, memcg, walk);
        if live_mm_from(k, memcg, st.head.map_or(0, |h| h + 1)).is_none() {
            st.end_round();
        }
        found
    }

    /// Whether the mm list is iterated as from 6.4 on ("mm: Multi-gen LRU: remove
    /// wait_event_killable()", April 2023, in the memcg LRU's kernels and the January
    /// 2024 base of seed 003): no walker count and no wait.
    pub(super) fn mm_list_v64(&self) -> bool {
        self.memcg_reclaim == MemcgReclaim::MemcgLru
    }

    /// Models iterate_mm_list() + walk_mm() as 6.4 has them: walkers share a round as in
    /// 6.1, but the round ends when a walker, coming back for an mm, finds none left,
    /// and that walker alone runs inc_max_seq, whether or not others are still walking
    /// the mms they got (they stop at their next yield, walk_mm's max_seq check). A
    /// walker that arrives after the end has nothing to do. Returns whether this walker
    /// ended the round.
    fn walk_mm_list_v64(&mut self, k: &mut Kernel, lv: usize, walk: &mut MmWalk) -> bool {
        loop {
            // The round is shared under mm_list->lock.
            k.sync();
            let stale = walk.max_seq <= self.mm_state[lv].seq;
            let mm = if stale {
                None
            } else {
                self.next_mm_v64(k, lv, walk)
            };
            let Some(mm) = mm else {
                self.mm_state[lv].fold_walk_stats(walk);
                return !stale;
            };
            self.walk_mm(k, lv, mm, walk);
        }
    }

    /// The mm-list part of iterate_mm_list() (6.4, mm_list->lock held): the round's next
    /// mm worth walking; when none is left the round ends here (mm_state->seq) and the
    /// next starts from the list's head. The first mm of a round clears the next
    /// generation's Bloom filter.
    fn next_mm_v64(&mut self, k: &Kernel, lv: usize, walk: &mut MmWalk) -> Option<u32> {
        let memcg = k.lruvecs[lv].memcg;
        let st = &mut self.mm_state[lv];
        let first = st.head.is_none();
        let found = st.advance(k, memcg, walk);
        match found {
            Some(_) if first => st.filters.reset(walk.max_seq + 1),
            Some(_) => {}
            None => st.end_round(),
        }
        found
    }

    /// Models walk_mm() with walk_pmd_range() for one mm: each PTE table of each VMA the
    /// walk may use (should_skip_vma: anon needs swap) is scanned if force_scan or the
    /// Bloom filter of this generation has it; a table worth it goes into the next
    /// generation's filter. The deferred sizes are applied every MAX_LRU_BATCH
    /// promotions (the walker's yield; v11's 8192 under `v11*`) and at the end.
    fn walk_mm(&mut self, k: &mut Kernel, lv: usize, mm: u32, walk: &mut MmWalk) {
        for v in 0..k.mms[mm as usize].vmas.len() {
            let vma = &k.mms[mm as usize].vmas[v];
            if vma.kind == crate::kernel::mm::VmaKind::Anon && !walk.can_swap {
                continue;
            }
            let (start, pages) = (vma.start, vma.pages);
            // The descent from the pgd to the VMA's first PMD.
            k.spend(k.costs.pvmw_descent, Cat::PteScan);
            let mut lo = 0;
            while lo < pages {
                let hi = (lo + PTRS_PER_PTE - (start + lo) % PTRS_PER_PTE).min(pages);
                let item = pmd_item(mm, start + lo);
                walk.mm_stats[MM_NONLEAF_TOTAL] += 1;
                k.spend(k.costs.pte_scan, Cat::PteScan);
                let filters = &self.mm_state[lv].filters;
                if walk.force_scan || filters.test(walk.max_seq, item) {
                    walk.mm_stats[MM_NONLEAF_FOUND] += 1;
                    if self.walk_pte_range(k, lv, mm, v, lo as usize..hi as usize, walk) {
                        walk.mm_stats[MM_NONLEAF_ADDED] += 1;
                        self.mm_state[lv].filters.update(walk.max_seq + 1, item);
                    }
                }
                if walk.batched >= self.max_lru_batch() {
                    self.reset_batch_size_locked(k, lv, walk);
                    // 6.4's walk_mm, at the walker's yield: another walker may have
                    // ended the round and run inc_max_seq meanwhile.
                    if self.mm_list_v64() && walk.max_seq != self.lrugen[lv].max_seq {
                        return;
                    }
                }
                lo = hi;
            }
        }
        if walk.batched > 0 {
            self.reset_batch_size_locked(k, lv, walk);
        }
    }

    /// Models walk_pte_range() (6.1): under the PTE lock, clear the accessed bit of each
    /// young PTE whose folio belongs to this lruvec, move the dirty bit to the folio, and
    /// promote the folio to the youngest generation (folio_update_gen, deferred sizes).
    /// Returns suitable_to_scan().
    fn walk_pte_range(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        mm: u32,
        v: usize,
        range: std::ops::Range<usize>,
        walk: &mut MmWalk,
    ) -> bool {
        k.spend(k.costs.lock_acquire, Cat::PteScan);
        // The PTE table is read under its lock at this time, not ahead of the tasks
        // that set its accessed bits.
        self.sync_walking(k, walk);
        let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
        let new_gen = lru_gen_from_seq(walk.max_seq);
        let (mut total, mut young) = (0, 0);
        crate::kernel::rmap::prefetch_young_folios(
            k,
            &k.mms[mm as usize].vmas[v].ptes[range.clone()],
        );
        for i in range {
            total += 1;
            walk.mm_stats[MM_LEAF_TOTAL] += 1;
            k.spend(k.costs.pte_scan, Cat::PteScan);
            let pte = k.mms[mm as usize].vmas[v].ptes[i];
            let Some(pfn) = pte.pfn() else { continue };
            if !pte.young() {
                walk.mm_stats[MM_LEAF_OLD] += 1;
                continue;
            }
            if !get_pfn_folio(k, pfn, memcg, node, walk.can_swap) {
                continue;
            }
            k.mms[mm as usize].vmas[v].ptes[i].mkold();
            young += 1;
            walk.mm_stats[MM_LEAF_YOUNG] += 1;
            k.spend(k.costs.folio_check, Cat::PteScan);
            if pte.dirty() {
                propagate_dirty(k, pfn);
            }
            let f = &mut k.folios[pfn as usize];
            let t = f.lru_type();
            let old = folio_update_gen(f, new_gen);
            if old >= 0 && old as usize != new_gen {
                walk.update_batch_size(t, old as usize, new_gen);
            }
        }
        suitable_to_scan(total, young)
    }

    /// A sync point inside a walk: while other tasks run, the walk goes back where a
    /// task switch parks it, so the checker counts its deferred sizes.
    fn sync_walking(&mut self, k: &mut Kernel, walk: &mut MmWalk) {
        debug_assert!(self.walk.is_none());
        self.walk = Some(std::mem::take(walk));
        k.sync();
        *walk = self.walk.take().expect("the running task's walk");
    }

    /// Models reset_batch_size() under the lru lock: apply the walk's deferred sizes.
    pub(super) fn reset_batch_size_locked(&mut self, k: &mut Kernel, lv: usize, walk: &mut MmWalk) {
        // While this task waits for the lock, its walk goes back where a task switch
        // parks it (and the checker counts its deferred sizes).
        debug_assert!(self.walk.is_none());
        self.walk = Some(std::mem::take(walk));
        k.lock_lruvec(lv);
        *walk = self.walk.take().expect("the running task's walk");
        walk.batched = 0;
        self.lrugen[lv].apply_deltas(k, lv, &mut walk.nr_pages);
        k.unlock();
    }

    /// Models inc_max_seq() (6.1), lru lock taken here: make room by inc_min_seq for a
    /// type with MAX_NR_GENS generations (file first), turn max_seq - 1 inactive and the
    /// new slot active in the compat counters, stamp the new generation's birth time.
    /// Under `v11*` the May 2022 form: anon first, and inc_min_seq_v11 moves no folio.
    fn inc_max_seq(&mut self, k: &mut Kernel, lv: usize, can_swap: bool) {
        k.lock_lruvec(lv);
        // VM_WARN_ON_ONCE(!seq_is_valid(lruvec)) in inc_max_seq().
        vm_warn_on!(
            !self.lrugen[lv].seq_is_valid(),
            "lruvec {lv}: seqs out of order"
        );
        let v11 = self.v11_folios();
        let order = if v11 { [ANON, FILE] } else { [FILE, ANON] };
        for t in order {
            if self.lrugen[lv].nr_gens(t) != MAX_NR_GENS {
                continue;
            }
            if v11 {
                self.inc_min_seq_v11(lv, t);
                continue;
            }
            while !self.inc_min_seq(k, lv, t, can_swap) {
                k.unlock();
                k.lock_lruvec(lv);
            }
        }
        let g = &mut self.lrugen[lv];
        let prev = lru_gen_from_seq(g.max_seq - 1);
        let next = lru_gen_from_seq(g.max_seq + 1);
        for t in [ANON, FILE] {
            let delta = g.nr_pages[prev][t] - g.nr_pages[next][t];
            if delta != 0 {
                update_lru_size(k, lv, 2 * t, delta);
                update_lru_size(k, lv, 2 * t + 1, -delta);
            }
        }
        for t in [ANON, FILE] {
            g.reset_ctrl_pos(t, false);
        }
        g.timestamps[next] = k.cur.clock;
        g.max_seq += 1;
        // One more generation: an aging pass, in vmstat and the memcg's memory.stat.
        let memcg = k.lruvecs[lv].memcg;
        k.count(Vm::LruGenAging, memcg, 1);
        k.unlock();
    }

    /// Models inc_min_seq() (6.1, lru lock held): retire the oldest generation of a type.
    /// An evictable type's folios move to the tail of the next generation (a promoted one
    /// to the tail of its own), at most MAX_LRU_BATCH per call (false: call again); anon
    /// that cannot be swapped just stays in its slot, which becomes the youngest
    /// generation. 6.1 moves them one by one from the tail, which reverses their order.
    ///
    /// Seed 003 (`batch_aging*`): the next folio is prefetched, the size changes are
    /// applied once per call (lru_gen_update_batch), and with bulk moves the folios go to
    /// the next generation in one run that keeps their order; a promoted folio goes alone
    /// to the head of its own generation.
    pub(super) fn inc_min_seq(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        t: usize,
        can_swap: bool,
    ) -> bool {
        if t == FILE || can_swap {
            let old_gen = lru_gen_from_seq(self.lrugen[lv].min_seq[t]);
            let mut remaining = MAX_LRU_BATCH;
            let mut batch = GenBatch::new(k.cfg.batch_aging_parts(), old_gen);
            let mut next = self.lrugen[lv].lists[old_gen][t].tail;
            while next != NIL {
                let pfn = next;
                next = k.links[pfn as usize].prev;
                lru_scan_touch(k, batch.parts.prefetch && remaining < MAX_LRU_BATCH);
                self.check_gen_list_folio(k, lv, pfn, t);
                let new_gen = folio_inc_gen(&mut self.lrugen[lv], k, lv, pfn, false, &mut batch);
                if batch.parts.bulk_move {
                    self.try_inc_bulk(k, lv, pfn, new_gen, &mut batch);
                } else {
                    self.relink(k, lv, pfn, new_gen, true);
                    k.spend(k.costs.list_op, Cat::ListOps);
                }
                remaining -= 1;
                if remaining == 0 {
                    self.lru_gen_update_batch(k, lv, t, old_gen, &mut batch);
                    return false;
                }
            }
            self.lru_gen_update_batch(k, lv, t, old_gen, &mut batch);
        }
        let g = &mut self.lrugen[lv];
        let old_gen = lru_gen_from_seq(g.min_seq[t]);
        g.reused[ANON] |= t == ANON && !can_swap && !g.lists[old_gen][ANON].is_empty();
        g.reset_ctrl_pos(t, true);
        g.min_seq[t] += 1;
        true
    }

    /// Models try_to_inc_min_seq() (6.1, lru lock held): advance each evictable type's
    /// min_seq past empty generations (keeping MIN_NR_GENS), with the 6.1 coupling when
    /// anon is evictable: anon never passes file, and file does not pass anon.
    pub(super) fn try_to_inc_min_seq(&mut self, lv: usize, can_swap: bool) -> bool {
        let g = &mut self.lrugen[lv];
        let mut min_seq = g.min_seq;
        for (t, seq) in min_seq.iter_mut().enumerate().skip(usize::from(!can_swap)) {
            while *seq + MIN_NR_GENS <= g.max_seq && g.lists[lru_gen_from_seq(*seq)][t].is_empty() {
                *seq += 1;
            }
        }
        if can_swap {
            min_seq = couple_min_seq(min_seq, g.min_seq[FILE]);
        }
        let mut success = false;
        for (t, &seq) in min_seq.iter().enumerate().skip(usize::from(!can_swap)) {
            if seq != g.min_seq[t] {
                g.reset_ctrl_pos(t, true);
                g.min_seq[t] = seq;
                success = true;
            }
        }
        success
    }
}

/// The 6.1 coupling of try_to_inc_min_seq() when both types are evictable: anon is
/// held at file's, and file does not move past anon (unless it already was ahead).
pub fn couple_min_seq(found: [u64; 2], old_file: u64) -> [u64; 2] {
    let anon = found[ANON].min(found[FILE]);
    [anon, anon.max(old_file)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bloom_filter_has_no_false_negatives_and_resets() {
        let mut b = BloomFilters::default();
        assert!(b.test(4, pmd_item(1, 0)), "unallocated: everything passes");
        b.update(4, pmd_item(1, 0));
        b.reset(4);
        let items: Vec<u64> = (0..2000u32)
            .map(|i| pmd_item(i % 7, u64::from(i) * 512))
            .collect();
        for &it in &items {
            b.update(4, it);
        }
        assert!(items.iter().all(|&it| b.test(4, it)), "no false negatives");
        assert!(
            b.test(5, pmd_item(99, 0)),
            "the other filter is still unallocated"
        );
        let absent = (0..2000u64)
            .filter(|i| !b.test(4, pmd_item(1000 + *i as u32, 0)))
            .count();
        assert!(absent > 1800, "few false positives at this load: {absent}");
        b.reset(4);
        assert!(items.iter().all(|&it| !b.test(4, it)), "reset clears");
        b.reset(5);
        b.update(5, items[0]);
        assert!(
            b.test(5, items[0]) && !b.test(4, items[0]),
            "seq % 2 picks the filter"
        );
    }

    #[test]
    fn only_the_last_walker_out_ends_a_round() {
        let mut st = MmState::default();
        // A takes the round's only mm, which ends the round.
        assert!(!st.walker_turn(false, false, true));
        // B arrives after the end: not the last, whatever the count.
        assert!(!st.walker_turn(true, false, false));
        // A comes back with nothing more to walk: the last one out.
        assert!(st.walker_turn(true, true, false));
        assert_eq!(st.nr_walkers, 0);
        // Two walkers on two mms: the first back is not the last.
        assert!(!st.walker_turn(false, false, true));
        assert!(!st.walker_turn(false, false, true));
        assert!(!st.walker_turn(true, true, false));
        assert!(st.walker_turn(true, true, false));
        // A round with no mm worth walking ends with the walker that found none.
        assert!(st.walker_turn(false, false, false));
    }

    #[test]
    fn min_seq_coupling_of_6_1() {
        // File found an empty generation but anon did not: neither moves.
        assert_eq!(couple_min_seq([3, 4], 3), [3, 3]);
        // Both can move: both do, anon no further than file.
        assert_eq!(couple_min_seq([5, 4], 3), [4, 4]);
        // File already ahead stays where it was.
        assert_eq!(couple_min_seq([4, 5], 5), [4, 5]);
        assert_eq!(couple_min_seq([4, 6], 5), [4, 5]);
    }

    #[test]
    fn suitable_to_scan_needs_one_young_in_eight() {
        assert!(suitable_to_scan(64, 8));
        assert!(!suitable_to_scan(64, 7));
        assert!(suitable_to_scan(1, 1));
    }
}
