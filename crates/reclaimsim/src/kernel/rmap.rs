//! Reverse mapping: from a frame to the PTEs that map it (mm/rmap.c). Anon frames know
//! their (mm, vpn); file frames are found through the file's list of mapping VMAs.

use crate::kernel::folio::{pg, Pfn};
use crate::kernel::memcg::MemcgId;
use crate::kernel::mm::Pte;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;
use crate::sim::lock::{LockRef, LockSite};
use smallvec::SmallVec;

/// Every (mm, vma, pte index) mapping `pfn`, in i_mmap order. Inline up to four: an
/// anon folio has one, and an rmap walk per reclaimed folio must not cost a malloc.
pub fn mappings(k: &Kernel, pfn: Pfn) -> SmallVec<[(u32, usize, usize); 4]> {
    let mut it = Mappings::of(k, pfn);
    std::iter::from_fn(|| it.next(k)).collect()
}

/// The mappings `mappings` lists, one at a time, for the rmap walks of reclaim: they
/// run once per reclaimed folio and should not build and copy a list. The folio's
/// identity is read when the walk starts (as `mappings` reads it), and VMAs and file
/// mappings are fixed once the run has started, so the walk sees the same list.
#[derive(Clone, Copy)]
pub struct Mappings {
    /// Anon: its one mapping, until taken.
    anon: Option<(u32, usize, usize)>,
    /// File: the file, its page index, and the next of its mappings to look at.
    file: Option<(u32, u32, usize)>,
}

impl Mappings {
    pub fn of(k: &Kernel, pfn: Pfn) -> Self {
        let f = &k.folios[pfn as usize];
        if !f.test(pg::ANON) {
            return Mappings {
                anon: None,
                file: Some((f.owner, f.index, 0)),
            };
        }
        let mm = &k.mms[f.owner as usize];
        let anon = mm
            .find_vma(f.index as u64)
            .map(|v| (f.owner, v, (f.index as u64 - mm.vmas[v].start) as usize));
        Mappings { anon, file: None }
    }

    /// The next mapping, or None when the walk is over.
    #[inline]
    pub fn next(&mut self, k: &Kernel) -> Option<(u32, usize, usize)> {
        if self.anon.is_some() {
            return self.anon.take();
        }
        let (file, index, pos) = self.file.as_mut()?;
        let maps = &k.files[*file as usize].mappings;
        while let Some(&(mm, v)) = maps.get(*pos) {
            *pos += 1;
            if u64::from(*index) < k.mms[mm as usize].vmas[v as usize].pages {
                return Some((mm, v as usize, *index as usize));
            }
        }
        None
    }
}

/// Host only: starts loading the PTEs that rmap walks of these folios will read (the
/// anon ones: one PTE each) and their swap-slot entries, which add_to_swap writes and
/// try_to_unmap reads, so that their cache misses overlap.
pub fn prefetch_ptes(k: &Kernel, pfns: &[Pfn]) {
    for &pfn in pfns {
        let f = &k.folios[pfn as usize];
        if !f.test(pg::ANON) || !f.mapped() {
            continue;
        }
        crate::kernel::mm::prefetch(&k.folio_swap[pfn as usize]);
        let mm = &k.mms[f.owner as usize];
        if let Some(v) = mm.find_vma(f.index as u64) {
            let vma = &mm.vmas[v];
            crate::kernel::mm::prefetch(&vma.ptes[(f.index as u64 - vma.start) as usize]);
        }
    }
}

/// Host only: starts loading the frames that the young PTEs among `ptes` map, for a
/// page-table scan (MGLRU's walk or look-around) about to check each of them.
pub fn prefetch_young_folios(k: &Kernel, ptes: &[Pte]) {
    for pte in ptes {
        if let Some(pfn) = pte.pfn().filter(|_| pte.young()) {
            crate::kernel::mm::prefetch(&k.folios[pfn as usize]);
        }
    }
}

/// The rwsem an rmap walk of `pfn` read-locks: its VMA's anon_vma (anon) or its file's
/// i_mmap_rwsem. None for an anon folio whose VMA is gone.
fn rmap_lock(k: &Kernel, pfn: Pfn) -> Option<LockRef> {
    let f = &k.folios[pfn as usize];
    if !f.test(pg::ANON) {
        return Some(LockRef::IMmap(f.owner));
    }
    let v = k.mms[f.owner as usize].find_vma(f.index as u64)?;
    Some(LockRef::AnonVma {
        mm: f.owner,
        vma: v as u32,
    })
}

/// Models rmap_walk's read side of the anon_vma / i_mmap rwsem (down_read before the
/// walk, up_read after): with no writer (no fork or mmap while reclaim runs), readers
/// only contend for the count's cacheline.
fn rmap_rwsem(k: &mut Kernel, lock: Option<LockRef>, site: LockSite) {
    if let Some(l) = lock {
        k.line_rmw(l, site);
    }
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
    let lock = rmap_lock(k, pfn);
    rmap_rwsem(k, lock, LockSite::FolioReferenced);
    k.spend(k.costs.rmap_lookup, Cat::RmapWalk);
    let mut referenced = 0;
    let mut maps = Mappings::of(k, pfn);
    while let Some((mm, v, i)) = maps.next(k) {
        if let Some(t) = target {
            if !k.memcgs.is_descendant(k.mms[mm as usize].memcg, t) {
                continue;
            }
        }
        k.spend(k.costs.pvmw_descent, Cat::RmapWalk);
        // page_vma_mapped_walk() reads the PTE under its lock at this time.
        k.sync();
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
    rmap_rwsem(k, lock, LockSite::FolioReferenced);
    if referenced > 0 {
        // The young bits are how a plugin hears of a mapped folio's accesses.
        crate::kernel::lru::plugin::note_young(k, pfn);
    }
    referenced
}

impl Kernel {
    /// page_add_new_anon_rmap(), page_add_anon_rmap() and page_add_file_rmap() (6.1):
    /// one more PTE maps the folio; its first mapping counts in its memcg's
    /// NR_ANON_MAPPED or NR_FILE_MAPPED.
    pub(crate) fn page_add_rmap(&mut self, pfn: Pfn) {
        let f = &mut self.folios[pfn as usize];
        f.mapcount += 1;
        if f.mapcount == 1 {
            self.folio_stat_updated(pfn);
        }
    }

    /// page_remove_rmap() (6.1): one PTE fewer maps the folio; its last unmapping counts
    /// in its memcg's NR_ANON_MAPPED or NR_FILE_MAPPED.
    pub(crate) fn page_remove_rmap(&mut self, pfn: Pfn) {
        let f = &mut self.folios[pfn as usize];
        f.mapcount -= 1;
        if f.mapcount == 0 {
            self.folio_stat_updated(pfn);
        }
    }
}

/// Models try_to_unmap(): replaces every PTE mapping the folio with a swap entry (anon)
/// or nothing (file, refaulted through the page cache), moving dirty bits to the folio.
pub fn try_to_unmap(k: &mut Kernel, pfn: Pfn) {
    let lock = rmap_lock(k, pfn);
    rmap_rwsem(k, lock, LockSite::TryToUnmap);
    k.spend(k.costs.rmap_lookup, Cat::Unmap);
    let anon = k.folios[pfn as usize].test(pg::ANON);
    let slot = k.folio_swap[pfn as usize];
    let mut maps = Mappings::of(k, pfn);
    while let Some((mm, v, i)) = maps.next(k) {
        k.spend(k.costs.pvmw_descent + k.costs.unmap, Cat::Unmap);
        k.sync();
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
        if dirty {
            k.folios[pfn as usize].set(pg::DIRTY);
        }
        k.page_remove_rmap(pfn);
        crate::kernel::tlb::set_flush_pending(k, mm, dirty);
    }
    rmap_rwsem(k, lock, LockSite::TryToUnmap);
}
