//! Reverse mapping: from a frame to the PTEs that map it (mm/rmap.c). Anon frames know
//! their (mm, vpn); file frames are found through the file's list of mapping VMAs.

use crate::kernel::folio::{pg, Pfn};
use crate::kernel::memcg::MemcgId;
use crate::kernel::mm::Pte;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;

/// Every (mm, vma, pte index) mapping `pfn`, in i_mmap order.
pub fn mappings(k: &Kernel, pfn: Pfn) -> Vec<(u32, usize, usize)> {
    let f = &k.folios[pfn as usize];
    let mut out = Vec::new();
    if f.test(pg::ANON) {
        let mm = &k.mms[f.owner as usize];
        if let Some(v) = mm.find_vma(f.index as u64) {
            out.push((f.owner, v, (f.index as u64 - mm.vmas[v].start) as usize));
        }
    } else {
        for &(mm, v) in &k.files[f.owner as usize].mappings {
            let vma = &k.mms[mm as usize].vmas[v as usize];
            if (f.index as u64) < vma.pages {
                out.push((mm, v as usize, f.index as usize));
            }
        }
    }
    out
}

/// The MGLRU look-around folio_referenced_one() runs on a young PTE (6.1), given the
/// mm, the VMA index and the PTE index in the VMA.
pub type LookAround<'a> = &'a mut dyn FnMut(&mut Kernel, u32, usize, usize);

/// Models folio_referenced(): clears the accessed bit of every PTE mapping the folio and
/// returns how many of them were young. Each VMA costs a page_vma_mapped_walk descent.
/// Under memcg reclaim, VMAs of mms outside the target memcg are skipped. With
/// `look_around` (MGLRU), a young PTE counts once for the look-around it triggers, and
/// again if it is still young afterwards.
pub fn folio_referenced(
    k: &mut Kernel,
    pfn: Pfn,
    target: Option<MemcgId>,
    mut look_around: Option<LookAround>,
) -> u32 {
    if !k.folios[pfn as usize].mapped() {
        return 0;
    }
    k.spend(k.costs.rmap_lookup, Cat::RmapWalk);
    let mut referenced = 0;
    for (mm, v, i) in mappings(k, pfn) {
        if let Some(t) = target {
            if !k.memcgs.is_descendant(k.mms[mm as usize].memcg, t) {
                continue;
            }
        }
        k.spend(k.costs.pvmw_descent, Cat::RmapWalk);
        let pte = k.mms[mm as usize].vmas[v].ptes[i];
        if let Some(f) = look_around
            .as_mut()
            .filter(|_| pte.pfn() == Some(pfn) && pte.young())
        {
            f(k, mm, v, i);
            referenced += 1;
        }
        let pte = &mut k.mms[mm as usize].vmas[v].ptes[i];
        if pte.pfn() == Some(pfn) && pte.young() {
            pte.mkold();
            referenced += 1;
            k.spend(k.costs.pte_clear_young, Cat::RmapWalk);
        }
    }
    referenced
}

/// Models try_to_unmap(): replaces every PTE mapping the folio with a swap entry (anon)
/// or nothing (file, refaulted through the page cache), moving dirty bits to the folio.
pub fn try_to_unmap(k: &mut Kernel, pfn: Pfn) {
    k.spend(k.costs.rmap_lookup, Cat::RmapWalk);
    let anon = k.folios[pfn as usize].test(pg::ANON);
    let slot = k.folio_swap[pfn as usize];
    for (mm, v, i) in mappings(k, pfn) {
        k.spend(k.costs.pvmw_descent + k.costs.unmap, Cat::RmapWalk);
        let m = &mut k.mms[mm as usize];
        let pte = &mut m.vmas[v].ptes[i];
        if pte.pfn() != Some(pfn) {
            continue;
        }
        let dirty = pte.dirty();
        *pte = if anon { Pte::swap(slot) } else { Pte::NONE };
        if anon {
            m.anon_rss -= 1;
            m.swap_ents += 1;
        }
        let f = &mut k.folios[pfn as usize];
        if dirty {
            f.set(pg::DIRTY);
        }
        f.mapcount -= 1;
    }
}
