//! Address spaces: an mm is a list of VMAs, each with its page table entries. PTEs are
//! stored densely per VMA, and every VMA starts on a PMD boundary, so the 512 PTEs of a
//! PTE table are contiguous: a look-around or a page-table walk scans neighbours by
//! index. The rmap is implicit, as in the kernel: an anon folio records (mm, vpn); a
//! file folio records (file, index) and the file lists the VMAs that map it (i_mmap).

use crate::kernel::folio::Pfn;

/// PTEs per PTE table (PTRS_PER_PTE).
pub const PTRS_PER_PTE: u64 = 512;

/// Host only, no effect on the model: asks the host CPU to start loading the cache line
/// of `x`, so that a later read of it overlaps with other work instead of stalling.
#[inline]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults, even on an invalid address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast());
    }
}

/// A page table entry, 32 bits: present + frame, or a swap entry, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pte(pub u32);

impl Pte {
    const PRESENT: u32 = 1 << 31;
    const YOUNG: u32 = 1 << 30;
    const DIRTY: u32 = 1 << 29;
    const SWAP: u32 = 1 << 28;
    const VAL: u32 = (1 << 28) - 1;
    /// The shared zero page (a read fault on untouched anonymous memory).
    pub const ZERO: Pte = Pte(Self::PRESENT | Self::VAL);
    pub const NONE: Pte = Pte(0);
    /// Largest frame number or swap slot a PTE can hold.
    pub const MAX_VAL: u32 = Self::VAL - 1;

    pub fn present(pfn: Pfn, young: bool, dirty: bool) -> Pte {
        debug_assert!(pfn <= Self::MAX_VAL);
        Pte(Self::PRESENT
            | pfn
            | if young { Self::YOUNG } else { 0 }
            | if dirty { Self::DIRTY } else { 0 })
    }
    pub fn swap(slot: u32) -> Pte {
        Pte(Self::SWAP | slot)
    }
    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == 0
    }
    #[inline]
    pub fn is_present(self) -> bool {
        self.0 & Self::PRESENT != 0
    }
    #[inline]
    pub fn is_zero(self) -> bool {
        self.0 & (Self::PRESENT | Self::VAL) == Self::ZERO.0
    }
    /// The mapped frame of a present, non-zero-page PTE.
    #[inline]
    pub fn pfn(self) -> Option<Pfn> {
        (self.is_present() && !self.is_zero()).then_some(self.0 & Self::VAL)
    }
    #[inline]
    pub fn swap_slot(self) -> Option<u32> {
        (!self.is_present() && self.0 & Self::SWAP != 0).then_some(self.0 & Self::VAL)
    }
    #[inline]
    pub fn young(self) -> bool {
        self.0 & Self::YOUNG != 0
    }
    #[inline]
    pub fn dirty(self) -> bool {
        self.0 & Self::DIRTY != 0
    }
    #[inline]
    pub fn mkyoung(&mut self) {
        self.0 |= Self::YOUNG;
    }
    #[inline]
    pub fn mkdirty(&mut self) {
        self.0 |= Self::DIRTY;
    }
    #[inline]
    pub fn mkold(&mut self) {
        self.0 &= !Self::YOUNG;
    }
    #[inline]
    pub fn mkclean(&mut self) {
        self.0 &= !Self::DIRTY;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    Anon,
    /// A MAP_SHARED mapping of `file` starting at page 0.
    File {
        file: u32,
    },
}

#[derive(Clone, Debug)]
pub struct Vma {
    /// First virtual page number; a multiple of PTRS_PER_PTE.
    pub start: u64,
    pub pages: u64,
    pub kind: VmaKind,
    pub ptes: Vec<Pte>,
    /// The rwsem of this VMA's anon_vma (anonymous VMAs; each model VMA is created on
    /// its own, so the kernel would give each its own anon_vma).
    pub anon_vma: crate::sim::lock::Lock,
}

impl Vma {
    pub fn end(&self) -> u64 {
        self.start + self.pages
    }
}

/// An address space.
#[derive(Clone, Debug, Default)]
pub struct Mm {
    pub vmas: Vec<Vma>,
    /// The memcg the mm is charged to (its owner task's).
    pub memcg: u16,
    /// Set when the owner was killed: the mm is torn down and its threads stop.
    pub dead: bool,
    /// Resident anonymous pages, for OOM victim selection (get_mm_counter MM_ANONPAGES).
    pub anon_rss: u64,
    pub swap_ents: u64,
    /// What its anon pages hold (its workload's `page_content`), for zswap.
    pub content: crate::kernel::config::PageContent,
    /// Its tasks' MPOL_BIND nodemask, a bit per node; 0 for none (every node). The OOM
    /// killer reads it (mempolicy_in_oom_domain).
    pub mems: u64,
}

impl Mm {
    /// Adds a VMA after the last one, aligned to a PTE table; returns its index.
    pub fn add_vma(&mut self, pages: u64, kind: VmaKind) -> usize {
        let start = self.vmas.last().map_or(PTRS_PER_PTE, |v| {
            v.end().next_multiple_of(PTRS_PER_PTE) + PTRS_PER_PTE
        });
        self.vmas.push(Vma {
            start,
            pages,
            kind,
            ptes: vec![Pte::NONE; pages as usize],
            anon_vma: Default::default(),
        });
        self.vmas.len() - 1
    }

    /// The VMA containing `vpn` (find_vma).
    pub fn find_vma(&self, vpn: u64) -> Option<usize> {
        let i = self.vmas.partition_point(|v| v.end() <= vpn);
        (i < self.vmas.len() && self.vmas[i].start <= vpn).then_some(i)
    }

    pub fn pte_mut(&mut self, vpn: u64) -> Option<&mut Pte> {
        let i = self.find_vma(vpn)?;
        let v = &mut self.vmas[i];
        Some(&mut v.ptes[(vpn - v.start) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pte_encoding_round_trips() {
        let p = Pte::present(12345, true, false);
        assert_eq!(p.pfn(), Some(12345));
        assert!(p.young() && !p.dirty());
        let s = Pte::swap(77);
        assert_eq!(s.swap_slot(), Some(77));
        assert_eq!(s.pfn(), None);
        assert!(Pte::ZERO.is_present() && Pte::ZERO.pfn().is_none());
        assert!(Pte::NONE.is_none());
    }

    #[test]
    fn vmas_are_pmd_aligned_and_found() {
        let mut mm = Mm::default();
        let a = mm.add_vma(1000, VmaKind::Anon);
        let b = mm.add_vma(10, VmaKind::File { file: 0 });
        assert_eq!(mm.vmas[a].start % PTRS_PER_PTE, 0);
        assert_eq!(mm.vmas[b].start % PTRS_PER_PTE, 0);
        assert!(mm.vmas[b].start > mm.vmas[a].end());
        assert_eq!(mm.find_vma(mm.vmas[b].start + 3), Some(b));
        assert_eq!(mm.find_vma(mm.vmas[a].end()), None);
    }
}
