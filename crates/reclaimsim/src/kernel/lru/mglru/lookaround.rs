//! Look-around (Linux 6.1, "exploit locality in rmap"): when the rmap walk of a folio
//! being evicted finds its PTE young, scan the neighbouring PTEs of the same PTE table
//! and VMA (at most 64 including the trigger) under the PTE lock it already holds, and
//! promote the folios they map without any further page-table descents.

use super::aging::{get_pfn_folio, pmd_item, propagate_dirty, suitable_to_scan};
use super::gen::*;
use super::Mglru;
use crate::kernel::batch;
use crate::kernel::folio::Pfn;
use crate::kernel::mm::PTRS_PER_PTE;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;

/// The look-around window around page `addr` as pages [start, end): its PTE table
/// clamped to the VMA [vma_start, vma_end), then to MIN_LRU_BATCH pages, centred on
/// `addr` unless that would leave the table or VMA.
pub fn look_around_window(addr: u64, vma_start: u64, vma_end: u64) -> (u64, u64) {
    let start = (addr & !(PTRS_PER_PTE - 1)).max(vma_start);
    let end = (addr | (PTRS_PER_PTE - 1)).min(vma_end - 1) + 1;
    if end - start <= MIN_LRU_BATCH {
        (start, end)
    } else if addr - start < MIN_LRU_BATCH / 2 {
        (start, start + MIN_LRU_BATCH)
    } else if end - addr < MIN_LRU_BATCH / 2 {
        (end - MIN_LRU_BATCH, end)
    } else {
        (addr - MIN_LRU_BATCH / 2, addr + MIN_LRU_BATCH / 2)
    }
}

/// Host only: starts loading the PTE lines of the look-around window of anon folio
/// `pfn`, when it is isolated for eviction. The window is a random stretch of a large
/// page table, read first by folio_referenced and then by look-around; prefetched here,
/// the rest of the scan and the shrinking of the folios before it hide the misses.
pub(super) fn prefetch_window(k: &Kernel, pfn: Pfn) {
    let f = &k.folios[pfn as usize];
    if !f.test(crate::kernel::folio::pg::ANON) || !f.mapped() {
        return;
    }
    let mm = &k.mms[f.owner as usize];
    let Some(v) = mm.find_vma(f.index as u64) else {
        return;
    };
    let vma = &mm.vmas[v];
    let (start, end) = look_around_window(f.index as u64, vma.start, vma.end());
    let (s, e) = ((start - vma.start) as usize, (end - vma.start) as usize);
    // One prefetch per 64-byte line (16 PTEs), and the last PTE for the line it ends in.
    for i in (s..e).step_by(16).chain(std::iter::once(e - 1)) {
        crate::kernel::mm::prefetch(&vma.ptes[i]);
    }
}

impl Mglru {
    /// Models lru_gen_look_around() (6.1), called by folio_referenced on the young PTE
    /// `pte` of `vma` in `mm`, whose folio is isolated. Each young PTE in the window
    /// whose folio is of this lruvec is made old and its dirty bit passed on; an
    /// isolated folio (the trigger among them) gets PG_referenced, others not in the
    /// youngest generation are promoted: with a walk, folio_update_gen with deferred
    /// sizes; without one, folio_activate if fewer than PAGEVEC_SIZE, else
    /// folio_update_gen under the lru lock. A window worth it feeds the Bloom filter.
    pub(super) fn lru_gen_look_around(&mut self, k: &mut Kernel, mm: u32, vma: usize, pte: usize) {
        let v = &k.mms[mm as usize].vmas[vma];
        let trigger = v.ptes[pte].pfn().expect("look-around on a mapped PTE");
        let (vstart, vend) = (v.start, v.end());
        let memcg = k.folios[trigger as usize].memcg;
        let node = k.node_of(trigger);
        let lv = k.lruvec(memcg, node);
        let max_seq = self.lrugen[lv].max_seq;
        let new_gen = lru_gen_from_seq(max_seq);
        // v11 (May 2022, under `v11*`) promotes anon here whatever the walk can swap.
        let can_swap = self.v11_folios() || self.walk.as_ref().is_none_or(|w| w.can_swap);
        let addr = vstart + pte as u64;
        let (start, end) = look_around_window(addr, vstart, vend);
        let mut young = 0;
        let mut promote = Vec::new();
        let window = (start - vstart) as usize..(end - vstart) as usize;
        crate::kernel::rmap::prefetch_young_folios(k, &k.mms[mm as usize].vmas[vma].ptes[window]);
        for vpn in start..end {
            let i = (vpn - vstart) as usize;
            k.spend(k.costs.pte_scan, Cat::PteScan);
            let p = k.mms[mm as usize].vmas[vma].ptes[i];
            let Some(pfn) = p.pfn() else { continue };
            if !p.young() || !get_pfn_folio(k, pfn, memcg, node, can_swap) {
                continue;
            }
            k.mms[mm as usize].vmas[vma].ptes[i].mkold();
            young += 1;
            k.spend(k.costs.folio_check, Cat::PteScan);
            if p.dirty() {
                propagate_dirty(k, pfn);
            }
            let f = &mut k.folios[pfn as usize];
            let old_gen = f.lru_gen();
            if old_gen < 0 {
                f.set(crate::kernel::folio::pg::REFERENCED);
            } else if old_gen as usize != new_gen {
                promote.push((i, pfn));
            }
        }
        if suitable_to_scan(end - start, young) {
            self.mm_state[lv]
                .filters
                .update(max_seq, pmd_item(mm, addr));
        }
        // The kernel holds the PTE table's lock throughout, so the folios its PTEs map
        // stay; here a lock or a batch flush lets other tasks run, so a folio counts only
        // while its PTE still maps it.
        let still_mapped = |k: &Kernel, i: usize, pfn: Pfn| {
            k.mms[mm as usize].vmas[vma].ptes[i].pfn() == Some(pfn)
                && get_pfn_folio(k, pfn, memcg, node, can_swap)
        };
        if self.walk.is_none() && (promote.len() as u64) < u64::from(k.cfg.pagevec_size) {
            for (i, pfn) in promote {
                if still_mapped(k, i, pfn) {
                    batch::folio_activate(k, self, pfn);
                }
            }
            return;
        }
        let locked = self.walk.is_none();
        let new_gen = if locked {
            k.lock_lruvec(lv);
            lru_gen_from_seq(self.lrugen[lv].max_seq)
        } else {
            new_gen
        };
        for (i, pfn) in promote {
            if !still_mapped(k, i, pfn) {
                continue;
            }
            let f = &mut k.folios[pfn as usize];
            let t = f.lru_type();
            let old = folio_update_gen(f, new_gen);
            if old < 0 || old as usize == new_gen {
                continue;
            }
            match self.walk.as_mut() {
                Some(w) => {
                    w.lruvec = lv;
                    w.update_batch_size(t, old as usize, new_gen);
                }
                None => self.lrugen[lv].update_size(k, lv, t, old, new_gen as i32),
            }
        }
        if locked {
            k.unlock();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_64_ptes_centred_on_the_trigger() {
        // A whole PTE table in a large VMA: centred.
        assert_eq!(
            look_around_window(1024 + 200, 0, 1 << 20),
            (1024 + 168, 1024 + 232)
        );
        // Near the start of the table: the first 64.
        assert_eq!(look_around_window(1024 + 10, 0, 1 << 20), (1024, 1088));
        // Near its end: the last 64.
        assert_eq!(look_around_window(1024 + 500, 0, 1 << 20), (1472, 1536));
    }

    #[test]
    fn window_stays_in_the_pmd_and_the_vma() {
        // The VMA ends inside the table: clamp to the VMA, then to 64.
        assert_eq!(look_around_window(1030, 1024, 1050), (1024, 1050));
        assert_eq!(look_around_window(1100, 1024, 1120), (1056, 1120));
        // The VMA starts inside the table.
        assert_eq!(look_around_window(1500, 1490, 4096), (1490, 1536));
        // A one-page VMA: only the trigger.
        assert_eq!(look_around_window(2000, 2000, 2001), (2000, 2001));
        for addr in (700..4096).step_by(37) {
            let vma_end = 3000.max(addr + 1);
            let (s, e) = look_around_window(addr, 700, vma_end);
            assert!(
                s <= addr && addr < e && e - s <= MIN_LRU_BATCH,
                "{addr}: {s}..{e}"
            );
            assert_eq!(s / PTRS_PER_PTE, (e - 1) / PTRS_PER_PTE, "one PTE table");
            assert!(s >= 700 && e <= vma_end);
        }
    }
}
