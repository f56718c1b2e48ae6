//! Files and the page cache (`struct address_space` and its xarray): per page index, the
//! cached frame or the shadow entry left by eviction.

use crate::kernel::folio::Pfn;

/// One xarray slot: empty, a cached frame, or a shadow entry (workingset::Shadow bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Slot(u64);

impl Slot {
    const PAGE: u64 = 1 << 63;
    const SHADOW: u64 = 1 << 62;
    const PAYLOAD: u64 = (1 << 62) - 1;
    pub const EMPTY: Slot = Slot(0);

    pub fn page(pfn: Pfn) -> Slot {
        Slot(Self::PAGE | pfn as u64)
    }
    pub fn shadow(bits: u64) -> Slot {
        Slot(Self::SHADOW | (bits & Self::PAYLOAD))
    }
    #[inline]
    pub fn as_page(self) -> Option<Pfn> {
        (self.0 & Self::PAGE != 0).then_some(self.0 as u32)
    }
    #[inline]
    pub fn as_shadow(self) -> Option<u64> {
        (self.0 & Self::SHADOW != 0).then_some(self.0 & Self::PAYLOAD)
    }
}

#[derive(Clone, Debug)]
pub struct File {
    pub pages: u64,
    /// All holes: a read zero-fills the page without device I/O.
    pub sparse: bool,
    pub slots: Vec<Slot>,
    /// VMAs mapping this file (i_mmap): (mm id, vma index).
    pub mappings: Vec<(u32, u32)>,
    pub nr_cached: u64,
    /// mapping->i_pages' lock (the xarray's), taken to insert and delete folios.
    pub i_pages: crate::sim::lock::Lock,
    /// mapping->i_mmap_rwsem, read-locked by rmap walks of the file's mapped folios.
    pub i_mmap: crate::sim::lock::Lock,
}

impl File {
    pub fn new(pages: u64, sparse: bool) -> Self {
        File {
            pages,
            sparse,
            slots: vec![Slot::EMPTY; pages as usize],
            mappings: Vec::new(),
            nr_cached: 0,
            i_pages: Default::default(),
            i_mmap: Default::default(),
        }
    }
}
