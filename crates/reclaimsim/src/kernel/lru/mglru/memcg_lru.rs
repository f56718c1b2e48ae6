//! The memcg LRU of Linux 6.3+ (docs/model/mglru-memcgs.md, `memcg_reclaim =
//! "memcg-lru"`): each node keeps its lruvecs in generations of memcgs, each a set of
//! FIFO bins; global reclaim walks the bins of the old generation (`shrink_many`), one
//! memcg at a time (`shrink_one`), and moves each memcg by what happened to it.
//!
//! The version modelled is the first one, 6.3, as it stood in
//! 6.4-6.5 and in the 6.1.y stable backports: MEMCG_NR_GENS = 2, `shrink_many` re-reads
//! the old generation at every restart, `shrink_one` checks the size before the
//! protection (which it computes itself), reclaim stops at `get_nr_to_reclaim` (the
//! 6.8 watermark form of `should_abort_scan` is not modelled), `get_nr_to_scan` and
//! `try_to_shrink_lruvec` of 6.3, kswapd zeroes `nr_reclaimed` around `shrink_many`
//! (the 6.4 replacement of `last_reclaimed`), and `lru_gen_age_node` only checks
//! min_ttl_ms. The per-folio algorithm stays 6.1's (placement, tiers, PID controller,
//! `should_run_aging`'s distribution test), kept apart from how memcgs are chosen, except
//! the mm list's iteration, which follows 6.4 here (aging.rs, `walk_mm_list_v64`).

use super::abort::get_nr_to_reclaim;
use super::gen::*;
use super::Mglru;
use crate::kernel::batch;
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::stats::Vm;
use crate::kernel::vmscan::{ScanControl, DEF_PRIORITY};
use crate::kernel::Kernel;
use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

/// MEMCG_NR_GENS in 6.3-6.7 (6.8 made it 3).
pub const MEMCG_NR_GENS: usize = 2;
pub const MEMCG_NR_BINS: usize = 8;

/// Where in its bin an lruvec was last put (lru_gen_folio.seg).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Seg {
    #[default]
    Default,
    Head,
    Tail,
}

/// lru_gen_rotate_memcg() operations (MEMCG_LRU_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgOp {
    Nop,
    /// Same generation, head of a random bin, segment HEAD (soft limit exceeded).
    Head,
    /// Same generation, tail of a random bin, segment TAIL (skip it this time).
    Tail,
    /// The old generation, head of a random bin (offline).
    Old,
    /// The young generation, tail of a random bin (aged, or below min).
    Young,
}

/// An lruvec's place in its node's memcg LRU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcgLruPos {
    pub gen: usize,
    pub bin: usize,
    pub seg: Seg,
    /// mem_cgroup_online(): cleared by lru_gen_offline_memcg.
    pub online: bool,
}

/// struct lru_gen_memcg (pgdat->memcg_lru): the memcg LRU of one node. Bins hold memcg
/// ids (the node's lruvec of each); the bin choice is the kernel's one random draw in
/// reclaim (get_random_u32_below(MEMCG_NR_BINS)), here from a PRNG the node owns,
/// seeded from the scenario seed.
#[derive(Clone, Debug)]
pub struct MemcgLru {
    /// The old generation is seq % MEMCG_NR_GENS, the young one (seq + 1) % ....
    pub seq: u64,
    pub nr_memcgs: [u64; MEMCG_NR_GENS],
    pub fifo: [[VecDeque<MemcgId>; MEMCG_NR_BINS]; MEMCG_NR_GENS],
    /// Each memcg's place, by memcg id (None: not on the list).
    pub pos: Vec<Option<MemcgLruPos>>,
    rng: Pcg64Mcg,
    /// When set, shrink_one appends (memcg, gen, bin) of every memcg it visits, with the
    /// shrink_many call number: for tests that check the visiting order.
    pub trace: Option<Vec<MemcgVisit>>,
    calls: u64,
}

/// One shrink_one() call, as `MemcgLru::trace` records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcgVisit {
    pub call: u64,
    pub memcg: MemcgId,
    pub gen: usize,
    pub bin: usize,
    pub first_bin: usize,
}

/// The seed of node `node`'s memcg-LRU PRNG, from the scenario seed (a SplitMix64 step
/// over the seed, a stream constant and the node).
pub fn node_seed(seed: u64, node: usize) -> u64 {
    let mut z =
        (seed ^ 0x6d65_6d63_675f_6c72 ^ ((node as u64) << 32)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// get_memcg_gen().
pub fn get_memcg_gen(seq: u64) -> usize {
    (seq % MEMCG_NR_GENS as u64) as usize
}

/// get_memcg_bin().
pub fn get_memcg_bin(bin: usize) -> usize {
    bin % MEMCG_NR_BINS
}

impl MemcgLru {
    /// Models lru_gen_init_pgdat(): empty lists, seq 0; the node's PRNG from `seed`.
    pub fn new(nr_memcgs: usize, seed: u64) -> Self {
        MemcgLru {
            seq: 0,
            nr_memcgs: [0; MEMCG_NR_GENS],
            fifo: Default::default(),
            pos: vec![None; nr_memcgs],
            rng: Pcg64Mcg::seed_from_u64(seed),
            trace: None,
            calls: 0,
        }
    }

    /// get_random_u32_below(MEMCG_NR_BINS).
    pub fn random_bin(&mut self) -> usize {
        (self.rng.next_u32() % MEMCG_NR_BINS as u32) as usize
    }

    /// The place of `memcg`; it must be on the list.
    pub fn pos_of(&self, memcg: MemcgId) -> MemcgLruPos {
        self.pos[memcg as usize].expect("memcg not on the memcg LRU")
    }

    fn unlink(&mut self, memcg: MemcgId) -> MemcgLruPos {
        let p = self.pos_of(memcg);
        let bin = &mut self.fifo[p.gen][p.bin];
        let i = bin
            .iter()
            .position(|&m| m == memcg)
            .expect("memcg in its bin");
        bin.remove(i);
        p
    }

    /// The node half of lru_gen_online_memcg(): the tail of bin `bin` of the old
    /// generation.
    pub fn online(&mut self, memcg: MemcgId, bin: usize) {
        assert!(self.pos[memcg as usize].is_none(), "memcg onlined twice");
        let gen = get_memcg_gen(self.seq);
        self.fifo[gen][bin].push_back(memcg);
        self.nr_memcgs[gen] += 1;
        self.pos[memcg as usize] = Some(MemcgLruPos {
            gen,
            bin,
            seg: Seg::Default,
            online: true,
        });
    }

    /// Models lru_gen_rotate_memcg() for this node's lruvec of `memcg`: HEAD and TAIL keep
    /// the generation and set the segment, OLD moves to the old generation's head, YOUNG
    /// to the young generation's tail, each in a random bin. When the old generation
    /// empties, seq++ (the young generation becomes the old one).
    pub fn rotate(&mut self, memcg: MemcgId, op: MemcgOp) {
        let bin = self.random_bin();
        let p = self.unlink(memcg);
        let old = p.gen;
        let (new, seg) = match op {
            MemcgOp::Head => (old, Seg::Head),
            MemcgOp::Tail => (old, Seg::Tail),
            MemcgOp::Old => (get_memcg_gen(self.seq), Seg::Default),
            MemcgOp::Young => (get_memcg_gen(self.seq + 1), Seg::Default),
            MemcgOp::Nop => panic!("lru_gen_rotate_memcg without an operation"),
        };
        if matches!(op, MemcgOp::Head | MemcgOp::Old) {
            self.fifo[new][bin].push_front(memcg);
        } else {
            self.fifo[new][bin].push_back(memcg);
        }
        self.nr_memcgs[old] -= 1;
        self.nr_memcgs[new] += 1;
        self.pos[memcg as usize] = Some(MemcgLruPos {
            gen: new,
            bin,
            seg,
            online: p.online,
        });
        if self.nr_memcgs[old] == 0 && old == get_memcg_gen(self.seq) {
            self.seq += 1;
        }
    }

    /// The node half of lru_gen_release_memcg(): off the list, with the same seq++ rule.
    pub fn release(&mut self, memcg: MemcgId) {
        let p = self.unlink(memcg);
        self.pos[memcg as usize] = None;
        self.nr_memcgs[p.gen] -= 1;
        if self.nr_memcgs[p.gen] == 0 && p.gen == get_memcg_gen(self.seq) {
            self.seq += 1;
        }
    }

    /// The entry after `memcg` in its bin (hlist_nulls_next_rcu), if any.
    fn next_in_bin(&self, memcg: MemcgId) -> Option<MemcgId> {
        let p = self.pos_of(memcg);
        let bin = &self.fifo[p.gen][p.bin];
        let i = bin.iter().position(|&m| m == memcg)?;
        bin.get(i + 1).copied()
    }

    /// Consistency of the lists and counters (for the invariant checker): every memcg on
    /// the list is in exactly the bin its place says, nr_memcgs counts each generation,
    /// and the old generation is empty only if every generation is.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = vec![0u32; self.pos.len()];
        for (gen, bins) in self.fifo.iter().enumerate() {
            let n: usize = bins.iter().map(VecDeque::len).sum();
            if n as u64 != self.nr_memcgs[gen] {
                return Err(format!(
                    "memcg LRU gen {gen}: {n} memcgs listed but nr_memcgs {}",
                    self.nr_memcgs[gen]
                ));
            }
            for (bin, list) in bins.iter().enumerate() {
                for &m in list {
                    seen[m as usize] += 1;
                    match self.pos[m as usize] {
                        Some(p) if p.gen == gen && p.bin == bin => {}
                        p => {
                            return Err(format!(
                                "memcg {m} listed in gen {gen} bin {bin} but recorded at {p:?}"
                            ))
                        }
                    }
                }
            }
        }
        for (m, &n) in seen.iter().enumerate() {
            if n != u32::from(self.pos[m].is_some()) {
                return Err(format!("memcg {m} is listed {n} times in the memcg LRU"));
            }
        }
        let total: u64 = self.nr_memcgs.iter().sum();
        if total > 0 && self.nr_memcgs[get_memcg_gen(self.seq)] == 0 {
            return Err(format!(
                "memcg LRU seq {}: the old generation is empty",
                self.seq
            ));
        }
        Ok(())
    }
}

impl Mglru {
    /// Models lru_gen_online_memcg(): on every node, the tail of one random bin (the
    /// same on all nodes; drawn from the first node's PRNG) of the old generation.
    pub fn lru_gen_online_memcg(&mut self, memcg: MemcgId) {
        let bin = self.memcg_lru[0].random_bin();
        for lru in &mut self.memcg_lru {
            lru.online(memcg, bin);
        }
    }

    /// Models lru_gen_offline_memcg(): OLD on every node (scraped first).
    pub fn lru_gen_offline_memcg(&mut self, memcg: MemcgId) {
        for lru in &mut self.memcg_lru {
            lru.rotate(memcg, MemcgOp::Old);
            if let Some(p) = lru.pos[memcg as usize].as_mut() {
                p.online = false;
            }
        }
    }

    /// Models lru_gen_release_memcg(): off the list on every node.
    pub fn lru_gen_release_memcg(&mut self, memcg: MemcgId) {
        for lru in &mut self.memcg_lru {
            lru.release(memcg);
        }
    }

    /// Models lru_gen_rotate_memcg() for lruvec `lv`.
    pub fn lru_gen_rotate_memcg(&mut self, k: &Kernel, lv: usize, op: MemcgOp) {
        let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
        self.memcg_lru[node].rotate(memcg, op);
    }

    fn memcg_online(&self, k: &Kernel, lv: usize) -> bool {
        let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
        self.memcg_lru
            .get(node)
            .and_then(|l| l.pos[memcg as usize])
            .is_none_or(|p| p.online)
    }

    /// Models get_swappiness() (6.3): 0 when the reclaim may not swap, else 6.1's.
    fn get_swappiness_v63(k: &Kernel, lv: usize, sc: &ScanControl) -> u32 {
        if !sc.may_swap {
            0
        } else {
            Self::get_swappiness_sc(k, lv, sc)
        }
    }

    /// Models lruvec_is_sizable() (6.3): the evictable pages, shifted by the priority
    /// unless the memcg is offline, are not zero.
    pub fn lruvec_is_sizable(&self, k: &Kernel, lv: usize, sc: &ScanControl) -> bool {
        let can_swap = Self::get_swappiness_v63(k, lv, sc) != 0;
        let g = &self.lrugen[lv];
        let mut total = 0u64;
        for t in usize::from(!can_swap)..2 {
            for seq in g.min_seq[t]..=g.max_seq {
                total += g.nr_pages[lru_gen_from_seq(seq)][t].max(0) as u64;
            }
        }
        if self.memcg_online(k, lv) {
            total >> sc.priority != 0
        } else {
            total != 0
        }
    }

    /// Models lruvec_is_reclaimable() (6.3): the oldest file generation is older than
    /// min_ttl, the lruvec is sizable and not below memory.min (protection computed
    /// here, against the root).
    fn lruvec_is_reclaimable(&self, k: &mut Kernel, lv: usize, sc: &ScanControl) -> bool {
        let g = &self.lrugen[lv];
        let birth = g.timestamps[lru_gen_from_seq(g.min_seq[FILE])];
        if birth + self.min_ttl_ns > k.cur.clock {
            return false;
        }
        if !self.lruvec_is_sizable(k, lv, sc) {
            return false;
        }
        let memcg = k.lruvecs[lv].memcg;
        k.memcgs.calculate_protection(ROOT, memcg);
        !k.memcgs.below_min(ROOT, memcg)
    }

    /// Models lru_gen_age_node() (6.3): no aging (the eviction path ages); with
    /// min_ttl_ms set, below the default priority, OOM-kill unless some memcg is
    /// reclaimable (thrashing protection).
    pub(super) fn lru_gen_age_node_v63(&mut self, k: &mut Kernel, node: usize, sc: &ScanControl) {
        if self.min_ttl_ns == 0 || sc.priority == DEF_PRIORITY {
            return;
        }
        for memcg in k.memcgs.iter(ROOT) {
            let lv = k.lruvec(memcg, node);
            if self.lruvec_is_reclaimable(k, lv, sc) {
                return;
            }
        }
        crate::kernel::fault::out_of_memory(k, self, None, None);
    }

    /// Models get_nr_to_scan() (6.3): 0 below memory.min; the scan size if no aging is
    /// due or at the default priority (0 with fewer than MIN_NR_GENS + 1 generations);
    /// otherwise age here, every reclaimer alike, and return -1 (rotate this memcg to
    /// the young generation) if that worked.
    fn get_nr_to_scan_v63(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &ScanControl,
        swappiness: u32,
    ) -> i64 {
        let memcg = k.lruvecs[lv].memcg;
        if k.memcgs.below_min(sc.root(), memcg) {
            return 0;
        }
        let can_swap = swappiness != 0;
        let g = &self.lrugen[lv];
        let max_seq = g.max_seq;
        let out_of_cold = g.min_seq[usize::from(!can_swap)] + MIN_NR_GENS > max_seq;
        let (need_aging, nr) = self.should_run_aging(lv, sc.priority, can_swap);
        let nr_to_scan = if out_of_cold { 0 } else { nr as i64 };
        if !need_aging || sc.priority == DEF_PRIORITY {
            return nr_to_scan;
        }
        if self.try_to_inc_max_seq(k, lv, max_seq, can_swap, false, false) {
            -1
        } else {
            0
        }
    }

    /// Models try_to_shrink_lruvec() (6.3): evict until the scan size, nothing more, or
    /// (global reclaim) the reclaim target. True if get_nr_to_scan aged the lruvec.
    fn try_to_shrink_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) -> bool {
        let nr_to_reclaim = get_nr_to_reclaim(sc);
        // No __GFP_IO-less reclaim in the model, so swappiness is never forced to 1.
        let swappiness = Self::get_swappiness_v63(k, lv, sc);
        let mut scanned = 0u64;
        let mut nr_to_scan;
        loop {
            nr_to_scan = self.get_nr_to_scan_v63(k, lv, sc, swappiness);
            if nr_to_scan <= 0 {
                break;
            }
            let delta = self.evict_folios(k, lv, sc, swappiness);
            if delta == 0 {
                break;
            }
            scanned += delta;
            if scanned >= nr_to_scan as u64 {
                break;
            }
            if sc.nr_reclaimed >= nr_to_reclaim {
                let memcg = k.lruvecs[lv].memcg;
                sc.count(k, Vm::LruGenAbortScan, memcg, 1);
                break;
            }
        }
        nr_to_scan < 0
    }

    /// Models shrink_one() (6.3): a memcg too small to matter goes to the tail of its
    /// generation (the second time, to the young one); protection is computed here
    /// (against the root); below memory.min: young; below memory.low: the tail once,
    /// then reclaimed with a `low` event. Returns the move for shrink_many to make.
    fn shrink_one(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) -> MemcgOp {
        let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
        let seg = self.memcg_lru[node].pos_of(memcg).seg;
        let not_tail = if seg != Seg::Tail {
            MemcgOp::Tail
        } else {
            MemcgOp::Young
        };
        if !self.lruvec_is_sizable(k, lv, sc) {
            return not_tail;
        }
        k.memcgs.calculate_protection(ROOT, memcg);
        if k.memcgs.below_min(ROOT, memcg) {
            return MemcgOp::Young;
        }
        if k.memcgs.below_low(ROOT, memcg) {
            if seg != Seg::Tail {
                return MemcgOp::Tail;
            }
            k.memcgs.cgs[memcg as usize].events.low += 1;
        }
        let success = self.try_to_shrink_lruvec(k, lv, sc);
        // shrink_slab() and vmpressure(): no slab, no pressure listeners in the model.
        if success {
            MemcgOp::Young
        } else {
            MemcgOp::Nop
        }
    }

    /// Models shrink_many() (6.3): from a random bin of the old generation, visit each
    /// memcg of the bin head to tail (shrink_one), making the move shrink_one asked for
    /// when the walk has passed it (so a memcg sent to the tail of the same bin is met
    /// again: its second attempt), until the reclaim target is met; then the next bin,
    /// re-reading the old generation, until every bin was tried once. The kernel
    /// restarts a bin whose walk ended on another generation's end marker (a concurrent
    /// rotation); here a memcg rotated by another task while this one waited at a sync
    /// point is followed to its new bin (next_in_bin) instead.
    fn shrink_many(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        let nr_to_reclaim = get_nr_to_reclaim(sc);
        let lru = &mut self.memcg_lru[node];
        lru.calls += 1;
        let call = lru.calls;
        let first_bin = lru.random_bin();
        let mut bin = first_bin;
        loop {
            let gen = get_memcg_gen(self.memcg_lru[node].seq);
            let mut pending: Option<(MemcgId, MemcgOp)> = None;
            let mut cur = self.memcg_lru[node].fifo[gen][bin].front().copied();
            let mut reached = false;
            while let Some(memcg) = cur {
                if let Some((m, op)) = pending.take().filter(|&(_, op)| op != MemcgOp::Nop) {
                    self.memcg_lru[node].rotate(m, op);
                }
                // mem_cgroup_tryget() cannot fail: no memcg of the model is dying.
                if let Some(t) = self.memcg_lru[node].trace.as_mut() {
                    t.push(MemcgVisit {
                        call,
                        memcg,
                        gen,
                        bin,
                        first_bin,
                    });
                }
                let lv = k.lruvec(memcg, node);
                let op = self.shrink_one(k, lv, sc);
                pending = Some((memcg, op));
                if sc.nr_reclaimed >= nr_to_reclaim {
                    reached = true;
                    break;
                }
                cur = self.memcg_lru[node].next_in_bin(memcg);
            }
            if let Some((m, op)) = pending.filter(|&(_, op)| op != MemcgOp::Nop) {
                self.memcg_lru[node].rotate(m, op);
            }
            if reached {
                return;
            }
            bin = get_memcg_bin(bin + 1);
            if bin == first_bin {
                return;
            }
        }
    }

    /// Models set_initial_priority() (6.3): at the default priority, for a target of at
    /// least MIN_LRU_BATCH, start where (reclaimable / MEMCG_NR_GENS) >> priority is
    /// about nr_to_reclaim: reclaimable is the node's inactive file (plus inactive anon
    /// if it can swap), the compat counters (all but the two youngest generations).
    pub fn set_initial_priority(k: &Kernel, node: usize, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let lvs = (0..k.memcgs.cgs.len()).map(|m| k.lruvec(m as MemcgId, node));
        let (mut file, mut anon) = (0u64, 0u64);
        for lv in lvs {
            anon += k.lruvecs[lv].nr[crate::kernel::folio::lru::INACTIVE_ANON];
            file += k.lruvecs[lv].nr[crate::kernel::folio::lru::INACTIVE_FILE];
        }
        let mut reclaimable = file;
        // 6.3 asks for the root memcg's lruvec (mem_cgroup_lruvec(NULL, pgdat)).
        if Self::get_swappiness_v63(k, k.lruvec(ROOT, node), sc) != 0 {
            reclaimable += anon;
        }
        reclaimable /= MEMCG_NR_GENS as u64;
        let fls = |x: u64| (64 - x.leading_zeros()) as i32;
        let priority = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = priority.clamp(0, DEF_PRIORITY);
    }

    /// Models lru_gen_shrink_node() (6.3, with 6.4's kswapd accounting): global reclaim
    /// with MGLRU bypasses shrink_node_memcgs. Nothing without may_writepage and
    /// may_unmap (unmapped clean folios are already preferred); else drain, kswapd takes
    /// its node's walk, set_initial_priority, kswapd counts from zero so the target
    /// applies to this pass, shrink_many; kswapd never fails (6.3-6.11 reset
    /// kswapd_failures unconditionally).
    pub(super) fn lru_gen_shrink_node(
        &mut self,
        k: &mut Kernel,
        node: usize,
        sc: &mut ScanControl,
    ) {
        let reclaimed = sc.nr_reclaimed;
        if sc.may_writepage && sc.may_unmap {
            batch::lru_add_drain(k, self);
            if sc.kswapd {
                self.set_kswapd_walk(node);
            }
            Self::set_initial_priority(k, node, sc);
            if sc.kswapd {
                sc.nr_reclaimed = 0;
            }
            self.shrink_many(k, node, sc);
            if sc.kswapd {
                sc.nr_reclaimed += reclaimed;
            }
            self.clear_mm_walk();
        }
        k.nodes[node].kswapd_failures = 0;
    }

    /// Models lru_gen_shrink_lruvec() (6.3) for memcg reclaim under the memcg LRU: drain,
    /// try_to_shrink_lruvec, and a memcg that had to be aged goes to the young generation.
    pub(super) fn lru_gen_shrink_lruvec_v63(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
    ) {
        batch::lru_add_drain(k, self);
        if self.try_to_shrink_lruvec(k, lv, sc) {
            self.lru_gen_rotate_memcg(k, lv, MemcgOp::Young);
        }
        self.clear_mm_walk();
    }

    /// Checks the memcg LRU of `lv`'s node (once per node, at its root lruvec).
    pub(super) fn check_memcg_lru(&self, k: &Kernel, lv: usize) -> Result<(), String> {
        let (memcg, node) = (k.lruvecs[lv].memcg, k.lruvecs[lv].node as usize);
        let Some(lru) = self.memcg_lru.get(node) else {
            return Ok(());
        };
        if memcg == ROOT {
            lru.check().map_err(|e| format!("node {node}: {e}"))?;
        }
        if lru.pos[memcg as usize].is_none() {
            return Err(format!(
                "lruvec {lv}: memcg {memcg} is not on node {node}'s memcg LRU"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lru_with(memcgs: &[(MemcgId, usize)]) -> MemcgLru {
        let mut l = MemcgLru::new(8, 1);
        for &(m, bin) in memcgs {
            l.online(m, bin);
        }
        l
    }

    fn bin(l: &MemcgLru, gen: usize, bin: usize) -> Vec<MemcgId> {
        l.fifo[gen][bin].iter().copied().collect()
    }

    #[test]
    fn online_goes_to_the_tail_of_the_old_generation() {
        let mut l = lru_with(&[(1, 3), (2, 3), (3, 5)]);
        assert_eq!(bin(&l, 0, 3), [1, 2]);
        assert_eq!(bin(&l, 0, 5), [3]);
        assert_eq!(l.nr_memcgs, [3, 0]);
        l.check().unwrap();
        // After seq moved on, the old generation is the other slot.
        l.seq = 1;
        l.online(4, 0);
        assert_eq!(l.pos_of(4).gen, 1);
        assert!(l.pos_of(4).online);
    }

    #[test]
    fn head_and_tail_keep_the_generation_and_set_the_segment() {
        let mut l = lru_with(&[(1, 0), (2, 0)]);
        l.rotate(1, MemcgOp::Tail);
        let p = l.pos_of(1);
        assert_eq!((p.gen, p.seg), (0, Seg::Tail));
        assert_eq!(
            l.fifo[0][p.bin].back(),
            Some(&1),
            "at the tail of its new bin"
        );
        l.rotate(2, MemcgOp::Head);
        let p = l.pos_of(2);
        assert_eq!((p.gen, p.seg), (0, Seg::Head));
        assert_eq!(
            l.fifo[0][p.bin].front(),
            Some(&2),
            "at the head of its new bin"
        );
        assert_eq!((l.seq, l.nr_memcgs), (0, [2, 0]), "no generation change");
        l.check().unwrap();
    }

    #[test]
    fn young_goes_to_the_tail_of_the_young_generation_and_old_to_the_head_of_the_old() {
        let mut l = lru_with(&[(1, 0), (2, 0), (3, 1)]);
        l.rotate(1, MemcgOp::Young);
        let p = l.pos_of(1);
        assert_eq!((p.gen, p.seg), (1, Seg::Default));
        assert_eq!(l.fifo[1][p.bin].back(), Some(&1));
        assert_eq!(l.nr_memcgs, [2, 1]);
        l.rotate(3, MemcgOp::Tail);
        l.rotate(3, MemcgOp::Old);
        let p = l.pos_of(3);
        assert_eq!((p.gen, p.seg), (0, Seg::Default), "OLD clears the segment");
        assert_eq!(l.fifo[0][p.bin].front(), Some(&3));
        // A young memcg sent OLD joins the old generation at the head.
        l.rotate(1, MemcgOp::Old);
        assert_eq!(l.pos_of(1).gen, 0);
        assert_eq!(l.nr_memcgs, [3, 0]);
        assert_eq!(
            l.seq, 0,
            "the young generation emptying does not advance seq"
        );
        l.check().unwrap();
    }

    #[test]
    fn seq_advances_when_the_old_generation_empties() {
        let mut l = lru_with(&[(1, 0), (2, 4)]);
        l.rotate(1, MemcgOp::Young);
        assert_eq!(l.seq, 0);
        l.rotate(2, MemcgOp::Young);
        assert_eq!(l.seq, 1, "old gen 0 emptied: gen 1 is old now");
        assert_eq!(get_memcg_gen(l.seq), 1);
        assert_eq!(l.nr_memcgs, [0, 2]);
        l.check().unwrap();
        // YOUNG now means slot 0 again.
        l.rotate(1, MemcgOp::Young);
        assert_eq!(l.pos_of(1).gen, 0);
        assert_eq!(l.seq, 1);
        l.rotate(2, MemcgOp::Young);
        assert_eq!((l.seq, l.nr_memcgs), (2, [2, 0]));
        // A single memcg aging over and over advances seq each time.
        let mut l = lru_with(&[(5, 2)]);
        for i in 1..=4 {
            l.rotate(5, MemcgOp::Young);
            assert_eq!(l.seq, i);
            assert_eq!(l.pos_of(5).gen, get_memcg_gen(l.seq));
        }
    }

    #[test]
    fn offline_and_release() {
        let mut l = lru_with(&[(1, 0), (2, 0)]);
        l.rotate(2, MemcgOp::Young);
        // Offline: OLD (the kernel's lru_gen_offline_memcg).
        l.rotate(2, MemcgOp::Old);
        l.pos[2].as_mut().unwrap().online = false;
        assert_eq!(l.pos_of(2).gen, 0);
        assert_eq!(l.fifo[0][l.pos_of(2).bin].front(), Some(&2));
        l.release(2);
        assert!(l.pos[2].is_none());
        assert_eq!((l.seq, l.nr_memcgs), (0, [1, 0]));
        // Releasing the last old memcg advances seq.
        l.rotate(1, MemcgOp::Tail);
        l.release(1);
        assert_eq!((l.seq, l.nr_memcgs), (1, [0, 0]));
        l.check().unwrap();
    }

    #[test]
    fn next_in_bin_follows_the_fifo() {
        let l = lru_with(&[(1, 2), (2, 2), (3, 2)]);
        assert_eq!(l.next_in_bin(1), Some(2));
        assert_eq!(l.next_in_bin(3), None);
    }

    #[test]
    fn bins_are_drawn_from_the_seeded_stream() {
        let mut a = MemcgLru::new(1, 42);
        let mut b = MemcgLru::new(1, 42);
        let xs: Vec<usize> = (0..64).map(|_| a.random_bin()).collect();
        let ys: Vec<usize> = (0..64).map(|_| b.random_bin()).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|&x| x < MEMCG_NR_BINS));
        assert!((0..MEMCG_NR_BINS).all(|x| xs.contains(&x)), "{xs:?}");
    }

    #[test]
    fn the_checker_catches_a_miscount() {
        let mut l = lru_with(&[(1, 0)]);
        l.nr_memcgs[0] = 2;
        assert!(l.check().is_err());
        let mut l = lru_with(&[(1, 0)]);
        l.fifo[0][1].push_back(1);
        assert!(l.check().is_err());
    }
}
