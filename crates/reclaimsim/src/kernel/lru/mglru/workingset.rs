//! Refault detection with MGLRU (mm/workingset.c, Linux 6.1): the shadow entry of an
//! evicted folio carries a token of (min_seq, refs); a refault is counted only while that
//! generation is still the oldest, and feeds the PID controller's refaulted[] counters.

use super::gen::*;
use super::Mglru;
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::stats::Vm;
use crate::kernel::workingset::{Shadow, EVICTION_MASK};
use crate::kernel::Kernel;

/// The token's refs bits.
const REFS_MASK: u64 = (1 << LRU_REFS_WIDTH) - 1;

impl Mglru {
    /// Models lru_gen_eviction() (6.1): token = min_seq << LRU_REFS_WIDTH | (refs - 1),
    /// in the folio's own memcg lruvec; counts the folio in evicted[] of its tier. The
    /// shadow's workingset bit says whether refs was nonzero.
    pub(super) fn lru_gen_eviction(&mut self, k: &mut Kernel, pfn: Pfn) -> u64 {
        let f = k.folios[pfn as usize];
        let t = f.lru_type();
        let refs = folio_lru_refs(&f);
        let tier = lru_tier_from_refs(refs);
        let node = k.node_of(pfn);
        let g = &mut self.lrugen[k.lruvec(f.memcg, node)];
        let min_seq = g.min_seq[t];
        let token = (min_seq << LRU_REFS_WIDTH) | u64::from(refs.saturating_sub(1));
        g.evicted[lru_hist_from_seq(min_seq)][t][tier] += 1;
        Shadow {
            memcg: f.memcg,
            node: node as u16,
            eviction: token & EVICTION_MASK,
            workingset: refs != 0,
        }
        .pack()
    }

    /// Models lru_gen_refault() (6.1): only a refault into the same memcg and node whose
    /// token's generation is still min_seq counts (refaulted[] of its tier,
    /// workingset_refault). In a page fault, or with saturated refs, the folio gets
    /// PG_workingset (workingset_restore). With `page_cache_fix` (6.8), refs one short of
    /// saturation are enough, and the folio gets every refs bit as well.
    pub(super) fn lru_gen_refault(
        &mut self,
        k: &mut Kernel,
        pfn: Pfn,
        shadow: u64,
        in_fault: bool,
    ) {
        let s = Shadow::unpack(shadow);
        crate::kernel::workingset::check_shadow(k, &s);
        let f = k.folios[pfn as usize];
        let node = k.node_of(pfn);
        if s.node as usize != node || s.memcg != f.memcg {
            return;
        }
        let t = f.lru_type();
        let g = &mut self.lrugen[k.lruvec(f.memcg, node)];
        let min_seq = g.min_seq[t];
        if s.eviction >> LRU_REFS_WIDTH != min_seq & (EVICTION_MASK >> LRU_REFS_WIDTH) {
            return;
        }
        let refs = (s.eviction & REFS_MASK) as u32 + u32::from(s.workingset);
        let tier = lru_tier_from_refs(refs);
        g.refaulted[lru_hist_from_seq(min_seq)][t][tier] += 1;
        let (refault, restore) = if t == ANON {
            (Vm::WorkingsetRefaultAnon, Vm::WorkingsetRestoreAnon)
        } else {
            (Vm::WorkingsetRefaultFile, Vm::WorkingsetRestoreFile)
        };
        k.count(refault, f.memcg, 1);
        let saturated = 1u32 << LRU_REFS_WIDTH;
        // 6.8 restores one access short of saturation, and saturates the refs too.
        let needed = if self.page_cache_fix {
            saturated - 1
        } else {
            saturated
        };
        if in_fault || refs >= needed {
            let folio = &mut k.folios[pfn as usize];
            if self.page_cache_fix {
                folio.set_refs_field(saturated - 1);
            }
            folio.set(pg::WORKINGSET);
            k.count(restore, f.memcg, 1);
        }
    }
}
