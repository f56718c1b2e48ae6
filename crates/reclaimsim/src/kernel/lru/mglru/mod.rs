//! The multi-generational LRU as merged in Linux 6.1 (CONFIG_LRU_GEN: mm/vmscan.c,
//! mm/workingset.c, include/linux/mm_inline.h; docs/model/mglru.md).
//!
//! How reclaim spreads over many memcgs is the scenario switch `memcg_reclaim`
//! (docs/model/mglru-memcgs.md), orthogonal to the per-folio algorithm, which is 6.1's in all three:
//! - `none`, the series before "optimize multiple memcgs" (the seeds' "patch1-8"):
//!   kswapd ages every memcg on each balance_pgdat iteration (`lru_gen_age_node`) and
//!   `lru_gen_shrink_lruvec` scans each memcg in turn with no feedback and no backoff;
//! - `v6.1`, Linux 6.1 as released (seeds 000/001): the memcgs_need_aging feedback
//!   between `lru_gen_shrink_lruvec` and `lru_gen_age_node`, and `should_abort_scan`
//!   (module `abort`);
//! - `memcg-lru`, Linux 6.3+: the per-node LRU of memcgs with `shrink_many` and
//!   `shrink_one` for global reclaim (module `memcg_lru`);
//! - `v11` and `v11-patch1-8`, the May 2022 posting's patch 09/14 and its baseline in
//!   that posting's shapes (seed 000; module `v11`).
//!
//! Modules: `gen` (lru_gen_struct, placement, sizes), `aging` (page-table walks, Bloom
//! filters, inc_max_seq / inc_min_seq), `evict` (scan, sort, isolate, evict, PID
//! controller), `workingset` (refault tokens), `lookaround` (rmap look-around), `debugfs`
//! (/sys/kernel/debug/lru_gen commands and view), `abort` (should_abort_scan,
//! get_nr_to_reclaim), `memcg_lru` (the memcg LRU, shrink_many, shrink_one), `v11`
//! (the v11 posting's memcg reclaim).

pub mod abort;
pub mod aging;
pub mod debugfs;
pub mod evict;
pub mod gen;
pub mod lookaround;
pub mod memcg_lru;
pub mod v11;
pub mod workingset;

use self::abort::{global_reclaim, should_abort_scan_v61};
use self::aging::{MmState, MmWalk};
use self::debugfs::LruGenCmd;
use self::gen::*;
use self::memcg_lru::MemcgLru;
use super::{Policy, Verdict};
use crate::kernel::batch;
use crate::kernel::config::MemcgReclaim;
use crate::kernel::debug::{vm_bug_on, vm_warn_on};
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::list::List;
use crate::kernel::lru::classic::check_references_table;
use crate::kernel::lru::mglru::debugfs::LruGenState;
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::rmap;
use crate::kernel::stats::Vm;
use crate::kernel::vmscan::{ScanControl, DEF_PRIORITY};
use crate::kernel::Kernel;

/// The MGLRU policy: the lru_gen state of every lruvec plus the reclaimer's walk.
pub struct Mglru {
    pub lrugen: Vec<LruGen>,
    pub mm_state: Vec<MmState>,
    /// The generation list each frame is linked on. The gen field can be younger: the
    /// page-table paths promote without moving (folio_update_gen), sort_folio moves later.
    list_gen: Vec<u8>,
    /// The unevictable list of each lruvec (lru_gen_add_folio refuses those folios).
    unevictable: Vec<List>,
    /// current->reclaim_state->mm_walk of the reclaimer running now.
    walk: Option<MmWalk>,
    /// Which kswapd's static walk `walk` is (pgdat->mm_walk), if it is one.
    walk_node: Option<usize>,
    /// kswapd's static walk of each node, kept between uses as the kernel keeps it.
    kswapd_walks: Vec<MmWalk>,
    look_around: bool,
    /// `kernel.page_cache_fix` (6.8's "fix underprotected page cache").
    page_cache_fix: bool,
    /// Page-table walks during aging (lru_gen/enabled 0x2).
    walks: bool,
    /// lru_gen_min_ttl in virtual ns (0: off).
    min_ttl_ns: u64,
    /// How global reclaim spreads over memcgs (`kernel.memcg_reclaim`).
    pub memcg_reclaim: MemcgReclaim,
    /// memcg-lru: each node's memcg LRU (pgdat->memcg_lru); empty otherwise.
    pub memcg_lru: Vec<MemcgLru>,
    /// evict_folios()'s need_swapping (6.1): set when an eviction took anon folios.
    need_swapping: bool,
    /// Per task: `walk`, `walk_node` and `need_swapping` while the task is switched out.
    parked: Vec<(Option<MmWalk>, Option<usize>, bool)>,
    _pin: std::marker::PhantomPinned,
}

const LIST_NAMES: [[&str; 2]; MAX_NR_GENS as usize] = [
    ["gen0 anon", "gen0 file"],
    ["gen1 anon", "gen1 file"],
    ["gen2 anon", "gen2 file"],
    ["gen3 anon", "gen3 file"],
];

impl Mglru {
    /// Models lru_gen_init_lruvec() for every lruvec, at boot (time 0), with the memcg
    /// LRU's PRNG seeded from 0 (`with_seed` takes the scenario's seed).
    pub fn new(k: &Kernel) -> Self {
        Self::with_seed(k, 0)
    }

    /// Models lru_gen_init_lruvec() for every lruvec, at boot (time 0); under
    /// `memcg-lru`, also lru_gen_init_pgdat() for every node, each with a PRNG derived
    /// from `seed`, and lru_gen_online_memcg() for every memcg in creation order.
    pub fn with_seed(k: &Kernel, seed: u64) -> Self {
        let n = k.lruvecs.len();
        let mut p = Mglru {
            lrugen: vec![LruGen::new(0); n],
            mm_state: (0..n).map(|_| MmState::default()).collect(),
            list_gen: vec![0; k.folios.len()],
            unevictable: vec![List::default(); n],
            walk: None,
            walk_node: None,
            kswapd_walks: vec![MmWalk::default(); k.nr_nodes()],
            look_around: k.cfg.look_around,
            page_cache_fix: k.cfg.page_cache_fix,
            walks: k.cfg.lru_gen_walks,
            min_ttl_ns: k.cfg.min_ttl_ms.saturating_mul(1_000_000),
            memcg_reclaim: k.cfg.memcg_reclaim,
            memcg_lru: Vec::new(),
            need_swapping: false,
            parked: Vec::new(),
            _pin: std::marker::PhantomPinned,
        };
        if p.memcg_reclaim == MemcgReclaim::MemcgLru {
            let nr = k.memcgs.cgs.len();
            p.memcg_lru = (0..k.nr_nodes())
                .map(|node| MemcgLru::new(nr, memcg_lru::node_seed(seed, node)))
                .collect();
            // mem_cgroup_css_online() runs as memcgs are created: parents first, in the
            // scenario's order (memcg ids).
            for memcg in 0..k.memcgs.cgs.len() {
                p.lru_gen_online_memcg(memcg as MemcgId);
            }
        }
        p
    }

    /// list_add (or list_add_tail) onto lists[gen][type] of `lv`.
    fn link(&mut self, k: &mut Kernel, lv: usize, pfn: Pfn, gen: usize, tail: bool) {
        let t = k.folios[pfn as usize].lru_type();
        let l = &mut self.lrugen[lv].lists[gen][t];
        if tail {
            l.push_tail(&mut k.links, &mut k.folios, pfn);
        } else {
            l.push_head(&mut k.links, &mut k.folios, pfn);
        }
        self.list_gen[pfn as usize] = gen as u8;
    }

    /// list_del from the generation list the folio is linked on.
    fn unlink(&mut self, k: &mut Kernel, lv: usize, pfn: Pfn) {
        let t = k.folios[pfn as usize].lru_type();
        let gen = self.list_gen[pfn as usize] as usize;
        self.lrugen[lv].lists[gen][t].remove(&mut k.links, &mut k.folios, pfn);
    }

    /// list_move (head) or list_move_tail to lists[gen][type].
    fn relink(&mut self, k: &mut Kernel, lv: usize, pfn: Pfn, gen: usize, tail: bool) {
        self.unlink(k, lv, pfn);
        self.link(k, lv, pfn, gen, tail);
    }

    /// Models lru_gen_add_folio() (6.1) for an evictable folio: place it by the 6.1 rules,
    /// clear PG_active, account it, and add it at the head (tail when `reclaiming`).
    fn lru_gen_add_folio(&mut self, k: &mut Kernel, lv: usize, pfn: Pfn, reclaiming: bool) {
        // lruvec_memcg_debug(): VM_BUG_ON_FOLIO(lruvec_memcg(lruvec) != memcg, folio).
        vm_bug_on!(
            k.folio_lruvec(pfn) != lv,
            "folio {pfn} added to another lruvec"
        );
        let f = &k.folios[pfn as usize];
        // VM_WARN_ON_ONCE_FOLIO(gen != -1, folio) in lru_gen_add_folio().
        vm_warn_on!(
            f.lru_gen() != -1,
            "folio {pfn} added with gen {}",
            f.lru_gen()
        );
        // lru_gen_add_folio() leaves an unevictable folio to LRU_UNEVICTABLE; the
        // model has none (no mlock), so none reaches a generation list.
        vm_bug_on!(
            f.test(pg::UNEVICTABLE),
            "unevictable folio {pfn} on a gen list"
        );
        let t = f.lru_type();
        let seq = self.lrugen[lv].add_seq(f, reclaiming, self.page_cache_fix);
        let gen = lru_gen_from_seq(seq);
        let f = &mut k.folios[pfn as usize];
        f.set_lru_gen(gen as i32);
        f.clear(pg::ACTIVE);
        self.lrugen[lv].update_size(k, lv, t, -1, gen as i32);
        self.link(k, lv, pfn, gen, reclaiming);
    }

    /// Models lru_gen_del_folio(): take a folio off its generation list. Outside reclaim
    /// a folio of an active generation gets PG_active (for whoever adds it back).
    fn lru_gen_del_folio(&mut self, k: &mut Kernel, lv: usize, pfn: Pfn, reclaiming: bool) {
        let f = k.folios[pfn as usize];
        let (gen, t) = (f.lru_gen(), f.lru_type());
        // 6.1 returns false for gen < 0; every caller here has a folio on a gen list.
        vm_bug_on!(gen < 0, "folio {pfn} deleted from no generation");
        // VM_WARN_ON_ONCE_FOLIO(folio_test_active(folio), folio) and
        // VM_WARN_ON_ONCE_FOLIO(folio_test_unevictable(folio), folio) in
        // lru_gen_del_folio().
        vm_warn_on!(
            f.test(pg::ACTIVE),
            "folio {pfn} on a gen list with PG_active"
        );
        vm_warn_on!(
            f.test(pg::UNEVICTABLE),
            "unevictable folio {pfn} on a gen list"
        );
        let f = &mut k.folios[pfn as usize];
        if !reclaiming && self.lrugen[lv].is_active(gen as usize) {
            f.set(pg::ACTIVE);
        }
        f.set_lru_gen(-1);
        self.lrugen[lv].update_size(k, lv, t, gen, -1);
        self.unlink(k, lv, pfn);
    }

    /// The checks 6.1 makes of each folio scan_folios() and inc_min_seq() meet on
    /// lists[gen][type]: VM_WARN_ON_ONCE_FOLIO of folio_test_unevictable,
    /// folio_test_active, folio_is_file_lru(folio) != type and folio_zonenum(folio) !=
    /// zone (one zone per node: the folio's node is the lruvec's, which
    /// lruvec_memcg_debug() checks for its memcg). Its generation is one in use,
    /// [min_seq, max_seq]: sort_folio()'s VM_WARN_ON_ONCE_FOLIO(gen >= MAX_NR_GENS,
    /// folio), as the model can state it.
    fn check_gen_list_folio(&self, k: &Kernel, lv: usize, pfn: Pfn, t: usize) {
        let f = &k.folios[pfn as usize];
        vm_warn_on!(f.test(pg::UNEVICTABLE), "unevictable folio {pfn} scanned");
        vm_warn_on!(f.test(pg::ACTIVE), "folio {pfn} scanned with PG_active");
        vm_warn_on!(f.lru_type() != t, "folio {pfn} on the other type's list");
        vm_bug_on!(
            k.folio_lruvec(pfn) != lv,
            "folio {pfn} on another lruvec's list"
        );
        let gen = f.lru_gen();
        vm_warn_on!(
            gen < 0 || (self.lrugen[lv].seq_of(t, gen as usize).is_none() && !self.mm_list_v64()),
            "folio {pfn}: gen {gen} outside [min_seq, max_seq]"
        );
    }

    /// Models set_mm_walk(pgdat) for kswapd: its node's static walk becomes current.
    fn set_kswapd_walk(&mut self, node: usize) {
        debug_assert!(self.walk.is_none());
        self.walk = Some(std::mem::take(&mut self.kswapd_walks[node]));
        self.walk_node = Some(node);
    }

    /// Models set_mm_walk(NULL): the current walk, or a new one for a reclaimer that
    /// has none (direct reclaim about to age, debugfs).
    fn alloc_mm_walk(&mut self) {
        if self.walk.is_none() {
            self.walk = Some(MmWalk::default());
        }
    }

    /// Models clear_mm_walk(): kswapd's walk goes back to its node, others are freed.
    fn clear_mm_walk(&mut self) {
        if let Some(w) = self.walk.take() {
            debug_assert_eq!(w.batched, 0, "deferred walk deltas left behind");
            if let Some(node) = self.walk_node.take() {
                self.kswapd_walks[node] = w;
            }
        }
    }

    /// Models get_swappiness() (6.1): 0 when the lruvec's memcg has fewer than
    /// MIN_LRU_BATCH swap slots left (mem_cgroup_get_nr_swap_pages: free slots, capped by
    /// memory.swap.max up the tree; no demotion in this model), else vm.swappiness
    /// (cgroup v2: one value for all).
    fn get_swappiness(k: &Kernel, lv: usize) -> u32 {
        let free = k.nr_swap_pages(k.lruvecs[lv].memcg);
        if free < MIN_LRU_BATCH {
            0
        } else {
            k.cfg.swappiness
        }
    }

    /// get_swappiness() of 6.13 for a reclaim: as 6.1's, with sc_swappiness() (the
    /// swappiness memory.reclaim was given, if any) in place of vm.swappiness.
    fn get_swappiness_sc(k: &Kernel, lv: usize, sc: &ScanControl) -> u32 {
        let free = k.nr_swap_pages(k.lruvecs[lv].memcg);
        if free < MIN_LRU_BATCH {
            0
        } else {
            sc.swappiness(k)
        }
    }

    /// The swappiness lru_gen_shrink_lruvec() evicts with (6.1 and v11 alike): the
    /// memcg's without may_swap only for global reclaim, and then 1 (file first).
    fn shrink_swappiness(k: &Kernel, lv: usize, sc: &ScanControl) -> u32 {
        if sc.may_swap {
            Self::get_swappiness_sc(k, lv, sc)
        } else if !sc.cgroup_reclaim() && Self::get_swappiness(k, lv) != 0 {
            1
        } else {
            0
        }
    }

    /// Models should_run_aging() (6.1): whether to age, and how much to scan (the
    /// evictable pages of the lruvec >> priority). Aging is needed with fewer than
    /// MIN_NR_GENS + 1 generations, not with more; with exactly that many, when the
    /// youngest holds more than half of the pages or the oldest less than a quarter.
    pub fn should_run_aging(&self, lv: usize, priority: i32, can_swap: bool) -> (bool, u64) {
        let g = &self.lrugen[lv];
        let sizes = gen_sizes(g, can_swap, |size| size.max(0));
        let nr_to_scan = (sizes.2 as u64) >> priority;
        (needs_aging(g, can_swap, sizes), nr_to_scan)
    }

    /// Models get_nr_to_scan() (6.1): nothing for protected memcgs; the scan size when
    /// no aging is due; kswapd leaves aging to lru_gen_age_node; others age here, and
    /// scan only if there are more than MIN_NR_GENS generations. Also returns
    /// should_run_aging()'s verdict (the `need_aging` out-parameter), unless the memcg
    /// was skipped for its protection before it was asked.
    fn get_nr_to_scan(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &ScanControl,
        swappiness: u32,
    ) -> (u64, Option<bool>) {
        let memcg = k.lruvecs[lv].memcg;
        let root = sc.root();
        if k.memcgs.below_min(root, memcg)
            || (k.memcgs.below_low(root, memcg) && !sc.memcg_low_reclaim)
        {
            return (0, None);
        }
        let can_swap = swappiness != 0;
        let (max_seq, min_seq) = (self.lrugen[lv].max_seq, self.lrugen[lv].min_seq);
        let (need_aging, nr_to_scan) = self.should_run_aging(lv, sc.priority, can_swap);
        if !need_aging {
            return (nr_to_scan, Some(false));
        }
        if sc.priority != DEF_PRIORITY {
            if sc.kswapd {
                return (0, Some(true));
            }
            let wait = sc.priority <= DEF_PRIORITY - 2;
            if self.try_to_inc_max_seq(k, lv, max_seq, can_swap, false, wait) {
                return (nr_to_scan, Some(true));
            }
        }
        if min_seq[usize::from(!can_swap)] + MIN_NR_GENS <= max_seq {
            (nr_to_scan, Some(true))
        } else {
            (0, Some(true))
        }
    }

    /// Models lru_gen_shrink_lruvec() (6.1): evict until `total >> priority` folios have
    /// been scanned, the lruvec needs aging, or nothing can be evicted. With
    /// `memcg_reclaim = "v6.1"` (6.1 as released), also stop when should_abort_scan()
    /// says so, and, if this memcg gave back at least MIN_LRU_BATCH pages without needing
    /// aging, clear sc->memcgs_need_aging so kswapd skips its next aging pass. With
    /// `none` (the seeds' patch1-8) neither.
    fn lru_gen_shrink_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) {
        let v61 = self.memcg_reclaim == MemcgReclaim::V61;
        batch::lru_add_drain(k, self);
        if sc.kswapd {
            self.set_kswapd_walk(k.lruvecs[lv].node as usize);
        }
        let mut need_aging = false;
        self.need_swapping = false;
        let mut scanned = 0;
        let reclaimed = sc.nr_reclaimed;
        let seq = self.lrugen[lv].max_seq;
        let completed = loop {
            let swappiness = Self::shrink_swappiness(k, lv, sc);
            let (nr_to_scan, need) = self.get_nr_to_scan(k, lv, sc, swappiness);
            if let Some(need) = need {
                need_aging = need;
            }
            if nr_to_scan == 0 {
                break false;
            }
            let delta = self.evict_folios(k, lv, sc, swappiness);
            if delta == 0 {
                break false;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break true;
            }
            if v61 && self.should_abort_scan(k, lv, seq, sc) {
                break true;
            }
        };
        if v61 && completed && sc.nr_reclaimed - reclaimed >= MIN_LRU_BATCH && !need_aging {
            sc.memcgs_need_aging = false;
        }
        self.clear_mm_walk();
    }

    /// should_abort_scan() (6.1) for lruvec `lv` whose scan began at max_seq `seq`: the
    /// node's zone, current's fatal signal (an OOM-killed task), evict_folios()'s
    /// need_swapping. Counts `lru_gen_abort_scan` when it stops the scan.
    fn should_abort_scan(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        seq: u64,
        sc: &mut ScanControl,
    ) -> bool {
        let node = k.lruvecs[lv].node as usize;
        let aged = self.lrugen[lv].max_seq - seq;
        let fatal = k.cur.mm.is_some_and(|m| k.mms[m as usize].dead);
        let zones = std::slice::from_ref(&k.nodes[node].zone);
        let abort = should_abort_scan_v61(sc, aged, self.need_swapping, fatal, zones).is_some();
        if abort {
            sc.count(k, Vm::LruGenAbortScan, k.lruvecs[lv].memcg, 1);
        }
        abort
    }

    /// Models age_lruvec() (6.1): age an lruvec that needs it, unless it is below
    /// memory.min or, with min_ttl_ms, its oldest file generation is younger than
    /// min_ttl or it is too small at this priority. True if it is usable for reclaim.
    fn age_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &ScanControl) -> bool {
        let swappiness = Self::get_swappiness(k, lv);
        let memcg = k.lruvecs[lv].memcg;
        let (max_seq, min_seq) = (self.lrugen[lv].max_seq, self.lrugen[lv].min_seq);
        k.memcgs.calculate_protection(ROOT, memcg);
        if k.memcgs.below_min(ROOT, memcg) {
            return false;
        }
        let (need_aging, nr_to_scan) = self.should_run_aging(lv, sc.priority, swappiness != 0);
        if self.min_ttl_ns > 0 {
            let birth = self.lrugen[lv].timestamps[lru_gen_from_seq(min_seq[FILE])];
            if birth + self.min_ttl_ns > k.cur.clock {
                return false;
            }
            if nr_to_scan == 0 && sc.priority != DEF_PRIORITY {
                return false;
            }
        }
        if need_aging {
            let wait = sc.priority <= DEF_PRIORITY - 2;
            self.try_to_inc_max_seq(k, lv, max_seq, swappiness != 0, false, wait);
        }
        true
    }

    /// Models lru_gen_age_node() (6.1): kswapd ages every memcg of the node; with
    /// min_ttl_ms set, if none is usable, the OOM killer runs (thrashing protection).
    /// With `memcg_reclaim = "v6.1"`, the memcgs_need_aging gate first: take the
    /// last_reclaimed snapshot, and skip this round (setting the flag for the next) when
    /// the flag is clear, as it is on balance_pgdat's first round and after a memcg gave
    /// back pages without needing aging. `none` (patch1-8) ages every round.
    fn lru_gen_age_node(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        sc.last_reclaimed = sc.nr_reclaimed;
        if self.memcg_reclaim == MemcgReclaim::V61 && !sc.memcgs_need_aging {
            sc.memcgs_need_aging = true;
            k.vm.add(Vm::LruGenAgingSkipped, 1);
            return;
        }
        self.set_kswapd_walk(node);
        let mut success = false;
        for memcg in k.memcgs.iter(ROOT) {
            let lv = k.lruvec(memcg, node);
            success |= self.age_lruvec(k, lv, sc);
        }
        self.clear_mm_walk();
        if success || self.min_ttl_ns == 0 {
            return;
        }
        crate::kernel::fault::out_of_memory(k, self, None, None);
    }

    /// The debugfs view of an lruvec's generations, oldest first (lru_gen_seq_show).
    fn gens_view(&self, lv: usize, now: u64) -> Vec<debugfs::LruGenGen> {
        let g = &self.lrugen[lv];
        (g.min_seq[ANON].min(g.min_seq[FILE])..=g.max_seq)
            .map(|seq| {
                let gen = lru_gen_from_seq(seq);
                let size = |t: usize| {
                    if seq < g.min_seq[t] {
                        0
                    } else {
                        g.nr_pages[gen][t].max(0) as u64
                    }
                };
                debugfs::LruGenGen {
                    seq,
                    age_ms: now.saturating_sub(g.timestamps[gen]) / 1_000_000,
                    anon: size(ANON),
                    file: size(FILE),
                }
            })
            .collect()
    }
}

/// Whether a task's reclaim state (its walk, kswapd's node, need_swapping) is empty.
fn is_empty(walk: &Option<MmWalk>, node: Option<usize>, need_swapping: bool) -> bool {
    walk.is_none() && node.is_none() && !need_swapping
}

impl Policy for Mglru {
    fn switch_task(&mut self, from: usize, to: usize) {
        let n = from.max(to) + 1;
        if self.parked.len() < n {
            self.parked.resize_with(n, Default::default);
        }
        // A task's parked state was emptied when it was switched in, so it is empty now.
        let (walk, node, swapping) = &self.parked[from];
        debug_assert!(
            is_empty(walk, *node, *swapping),
            "task {from} parked while running"
        );
        // Most switches are between tasks outside reclaim: nothing to park or restore,
        // and moving the (empty) walks would copy them for nothing.
        let (walk, node, swapping) = &self.parked[to];
        if is_empty(&self.walk, self.walk_node, self.need_swapping)
            && is_empty(walk, *node, *swapping)
        {
            return;
        }
        self.parked[from] = (self.walk.take(), self.walk_node.take(), self.need_swapping);
        (self.walk, self.walk_node, self.need_swapping) = std::mem::take(&mut self.parked[to]);
    }

    fn add_folio(&mut self, k: &mut Kernel, pfn: Pfn, tail: bool) {
        let lv = k.folio_lruvec(pfn);
        if k.folios[pfn as usize].test(pg::UNEVICTABLE) {
            self.unevictable[lv].push_head(&mut k.links, &mut k.folios, pfn);
            k.update_lru_size(lv, crate::kernel::folio::lru::UNEVICTABLE, 1);
            return;
        }
        self.lru_gen_add_folio(k, lv, pfn, tail);
    }

    fn del_folio(&mut self, k: &mut Kernel, pfn: Pfn) {
        let lv = k.folio_lruvec(pfn);
        if k.folios[pfn as usize].lru_gen() < 0 {
            self.unevictable[lv].remove(&mut k.links, &mut k.folios, pfn);
            k.update_lru_size(lv, crate::kernel::folio::lru::UNEVICTABLE, -1);
            return;
        }
        self.lru_gen_del_folio(k, lv, pfn, false);
    }

    /// folio_mark_accessed() with MGLRU: only the refs state moves (folio_inc_refs).
    fn mark_accessed(&mut self, k: &mut Kernel, pfn: Pfn) {
        folio_inc_refs(&mut k.folios[pfn as usize]);
    }

    /// prepare_scan_count() returns at once with MGLRU.
    fn prepare_scan_control(&mut self, _k: &mut Kernel, _node: usize, _sc: &mut ScanControl) {}

    /// shrink_lruvec() with MGLRU: 6.1's lru_gen_shrink_lruvec (memcg_reclaim `none` or
    /// `v6.1`), v11's (`v11`, `v11-patch1-8`), or, under the memcg LRU, 6.3's (only
    /// memcg reclaim comes here then).
    fn shrink_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) {
        match self.memcg_reclaim {
            MemcgReclaim::None | MemcgReclaim::V61 => self.lru_gen_shrink_lruvec(k, lv, sc),
            MemcgReclaim::V11 => self.lru_gen_shrink_lruvec_v11(k, lv, sc, true),
            MemcgReclaim::V11Patch1to8 => self.lru_gen_shrink_lruvec_v11(k, lv, sc, false),
            MemcgReclaim::MemcgLru => self.lru_gen_shrink_lruvec_v63(k, lv, sc),
        }
    }

    /// shrink_node() (6.3+): global reclaim under the memcg LRU goes to
    /// lru_gen_shrink_node; 6.1 (`none`, `v6.1`) keeps shrink_node_memcgs.
    fn shrink_node(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) -> bool {
        if self.memcg_reclaim != MemcgReclaim::MemcgLru || !global_reclaim(sc) {
            return false;
        }
        self.lru_gen_shrink_node(k, node, sc);
        true
    }

    fn age_node(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        match self.memcg_reclaim {
            MemcgReclaim::None | MemcgReclaim::V61 => self.lru_gen_age_node(k, node, sc),
            MemcgReclaim::V11 => self.lru_gen_age_node_v11(k, node, sc, true),
            MemcgReclaim::V11Patch1to8 => self.lru_gen_age_node_v11(k, node, sc, false),
            MemcgReclaim::MemcgLru => self.lru_gen_age_node_v63(k, node, sc),
        }
    }

    /// Models folio_check_references() with 6.1's MGLRU rule in shrink_folio_list before
    /// it: a mapped folio that a page-table walk or look-around tried to promote while it
    /// was isolated (PG_referenced) is kept without an rmap walk. Otherwise the classic
    /// table, with look-around run from the rmap walk on a young PTE.
    fn check_references(&mut self, k: &mut Kernel, pfn: Pfn, sc: &ScanControl) -> Verdict {
        let f = &k.folios[pfn as usize];
        if f.mapped() && f.test(pg::REFERENCED) {
            return Verdict::Keep;
        }
        let refs_pte = if self.look_around {
            let mut hook = |k: &mut Kernel, mm: u32, vma: usize, pte: usize| {
                self.lru_gen_look_around(k, mm, vma, pte)
            };
            rmap::folio_referenced(k, pfn, sc.target, Some(&mut hook))
        } else {
            rmap::folio_referenced(k, pfn, sc.target, None)
        };
        let f = &mut k.folios[pfn as usize];
        let ref_flag = f.test_clear(pg::REFERENCED);
        let file = f.lru_type() == FILE;
        check_references_table(refs_pte, ref_flag, file, f)
    }

    fn eviction(&mut self, k: &mut Kernel, pfn: Pfn, _target: MemcgId) -> u64 {
        self.lru_gen_eviction(k, pfn)
    }

    fn refault(&mut self, k: &mut Kernel, pfn: Pfn, shadow: u64, in_fault: bool) {
        self.lru_gen_refault(k, pfn, shadow, in_fault);
    }

    /// The classic refault snapshot is not used with MGLRU.
    fn snapshot_refaults(&mut self, _k: &mut Kernel, _target: MemcgId, _node: usize) {}

    fn lru_gen_write(&mut self, k: &mut Kernel, cmds: &[LruGenCmd]) -> Result<(), &'static str> {
        self.run_cmds(k, cmds)
    }

    /// Models store_min_ttl() (6.1): the new min_ttl for kswapd's aging from now on.
    fn set_min_ttl_ms(&mut self, ms: u64) -> Result<(), &'static str> {
        self.min_ttl_ns = ms.saturating_mul(1_000_000);
        Ok(())
    }

    fn lru_gen_state(&self, k: &Kernel, lv: usize, now: u64) -> Option<LruGenState> {
        Some(self.state(k, lv, now))
    }

    fn host_bytes(&self) -> u64 {
        use std::mem::size_of;
        let lists =
            self.lrugen.len() * size_of::<LruGen>() + self.unevictable.len() * size_of::<List>();
        let filters: u64 = self.mm_state.iter().map(|m| m.filters.host_bytes()).sum();
        (lists + self.list_gen.len()) as u64 + filters
    }

    /// Checks, for one lruvec: the seq window (6.1: 2 <= gens of file <= gens of anon
    /// <= 4); every folio on a gen list is of the list's type, not PG_active, and has a
    /// gen field inside [min_seq, max_seq], its list's or newer (a page-table promotion
    /// not yet sorted leaves it on an older list; a walk promoting to a max_seq that has
    /// moved on would demote it); nr_pages (with pending walk deltas) counts the folios
    /// by gen field; the compat counters match.
    fn check(
        &self,
        k: &Kernel,
        lv: usize,
        seen: &mut dyn FnMut(Pfn, &str) -> Result<(), String>,
    ) -> Result<(), String> {
        self.check_memcg_lru(k, lv)?;
        let g = &self.lrugen[lv];
        if !g.seq_is_valid() {
            return Err(format!(
                "lruvec {lv}: seq window max_seq {} min_seq {:?} is invalid",
                g.max_seq, g.min_seq
            ));
        }
        let mut by_field = [[0i64; 2]; MAX_NR_GENS as usize];
        for (gen, lists) in g.lists.iter().enumerate() {
            for (t, list) in lists.iter().enumerate() {
                let members = list.to_vec(&k.links);
                if members.len() != list.len as usize {
                    return Err(format!(
                        "lruvec {lv} {}: length {} but {} linked",
                        LIST_NAMES[gen][t],
                        list.len,
                        members.len()
                    ));
                }
                let list_seq = g.seq_of(t, gen);
                // From 6.4 a walker may still promote to the max_seq it started with
                // after another reclaimer aged (walk_mm_list_v64): a folio's gen can
                // then be older than its list's, or alias a slot outside the window,
                // as it can in the kernel (sort_folio moves it by its gen field).
                let reused = g.reused[t] || self.mm_list_v64();
                if list_seq.is_none() && !members.is_empty() && !reused {
                    return Err(format!(
                        "lruvec {lv} {}: outside the seq window but not empty",
                        LIST_NAMES[gen][t]
                    ));
                }
                for pfn in members {
                    let f = &k.folios[pfn as usize];
                    let field = f.lru_gen();
                    let field_seq = (field >= 0).then(|| g.seq_of(t, field as usize)).flatten();
                    let what = if field < 0 {
                        "without a gen"
                    } else if f.lru_type() != t {
                        "of the other type"
                    } else if f.test(pg::ACTIVE) {
                        "PG_active"
                    } else if self.list_gen[pfn as usize] as usize != gen {
                        "recorded on another list"
                    } else if field_seq.is_none() && !reused {
                        "with a gen outside [min_seq, max_seq]"
                    } else if field_seq < list_seq && !reused {
                        "with a gen older than its list's"
                    } else {
                        ""
                    };
                    if !what.is_empty() {
                        return Err(format!(
                            "pfn {pfn} on lruvec {lv} {} {what} (gen field {field})",
                            LIST_NAMES[gen][t]
                        ));
                    }
                    by_field[field as usize][t] += 1;
                    seen(pfn, LIST_NAMES[gen][t])?;
                }
            }
        }
        // Deltas that walks, the running one or parked ones, have not applied yet.
        let mut pending = [[0i64; 2]; MAX_NR_GENS as usize];
        let walks = self
            .walk
            .iter()
            .chain(self.parked.iter().filter_map(|p| p.0.as_ref()));
        for w in walks.filter(|w| w.lruvec == lv) {
            for (p, d) in pending
                .iter_mut()
                .flatten()
                .zip(w.nr_pages.iter().flatten())
            {
                *p += d;
            }
        }
        let mut compat = [0i64; 4];
        for gen in 0..MAX_NR_GENS as usize {
            for t in [ANON, FILE] {
                let want = g.nr_pages[gen][t] + pending[gen][t];
                if by_field[gen][t] != want {
                    return Err(format!(
                        "lruvec {lv} gen {gen} type {t}: {} folios but nr_pages {want}",
                        by_field[gen][t]
                    ));
                }
                // The compat counters follow nr_pages: a walk's deltas reach both later.
                compat[2 * t + usize::from(g.is_active(gen))] += g.nr_pages[gen][t];
            }
        }
        for (l, &n) in compat.iter().enumerate() {
            if k.lruvecs[lv].nr[l] as i64 != n {
                return Err(format!(
                    "lruvec {lv} {}: compat counter {} but {n} folios",
                    crate::kernel::folio::lru::NAMES[l],
                    k.lruvecs[lv].nr[l] as i64
                ));
            }
        }
        let unevictable = self.unevictable[lv].to_vec(&k.links);
        if unevictable.len() as u64 != k.lruvecs[lv].nr[crate::kernel::folio::lru::UNEVICTABLE] {
            return Err(format!("lruvec {lv} unevictable: counter off"));
        }
        for pfn in unevictable {
            seen(pfn, "unevictable")?;
        }
        Ok(())
    }
}

/// The (old, young, total) evictable pages that should_run_aging (6.1) and
/// get_nr_evictable (v11) weigh: every generation from min_seq to max_seq of the types
/// that can be evicted, each generation's size read through `size` (6.1 clamps each at
/// 0; v11 sums them signed).
pub(super) fn gen_sizes(g: &LruGen, can_swap: bool, size: impl Fn(i64) -> i64) -> (i64, i64, i64) {
    let (mut old, mut young, mut total) = (0i64, 0i64, 0i64);
    for t in usize::from(!can_swap)..2 {
        for seq in g.min_seq[t]..=g.max_seq {
            let n = size(g.nr_pages[lru_gen_from_seq(seq)][t]);
            total += n;
            if seq == g.max_seq {
                young += n;
            } else if seq + MIN_NR_GENS == g.max_seq {
                old += n;
            }
        }
    }
    (old, young, total)
}

/// The aging test both versions share: aging is needed with fewer than MIN_NR_GENS + 1
/// generations, not with more; with exactly that many, when the youngest holds more
/// than half of the pages or the oldest less than a quarter.
pub(super) fn needs_aging(
    g: &LruGen,
    can_swap: bool,
    (old, young, total): (i64, i64, i64),
) -> bool {
    let min = g.min_seq[usize::from(!can_swap)];
    if min + MIN_NR_GENS > g.max_seq {
        true
    } else if min + MIN_NR_GENS < g.max_seq {
        false
    } else {
        young * MIN_NR_GENS as i64 > total || old * (MIN_NR_GENS as i64 + 2) < total
    }
}
