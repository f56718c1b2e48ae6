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
    /// Created as holes: a read of a page never written back zero-fills it without
    /// device I/O.
    pub sparse: bool,
    /// Of a sparse file, one bit a page: written back, so its block is allocated
    /// (ext4's delayed allocation at writeback) and a read goes to the device. Empty
    /// until the file's first writeback.
    written: Vec<u64>,
    pub slots: Vec<Slot>,
    /// VMAs mapping this file (i_mmap): (mm id, vma index).
    pub mappings: Vec<(u32, u32)>,
    pub nr_cached: u64,
    /// The page reclaim last took out of the cache (`vmscan::remove_mapping`): the
    /// next eviction beside it finds the xarray's node warm.
    pub last_evicted: Option<u64>,
    /// mapping->i_pages' lock (the xarray's), taken to insert and delete folios.
    pub i_pages: crate::sim::lock::Lock,
    /// mapping->i_mmap_rwsem, read-locked by rmap walks of the file's mapped folios.
    pub i_mmap: crate::sim::lock::Lock,
}

impl File {
    /// Whether a read of page `index` is a hole's zero-fill: the file was created
    /// sparse and the page was never written back.
    pub fn is_hole(&self, index: u64) -> bool {
        let i = index as usize;
        self.sparse
            && self
                .written
                .get(i / 64)
                .is_none_or(|w| w & (1 << (i % 64)) == 0)
    }

    /// A page of the file goes to the device (its block is allocated): a later read
    /// of it is a device read.
    pub fn mark_written(&mut self, index: u64) {
        if !self.sparse {
            return;
        }
        if self.written.is_empty() {
            self.written = vec![0; (self.pages as usize).div_ceil(64)];
        }
        let i = index as usize;
        self.written[i / 64] |= 1 << (i % 64);
    }

    /// Host bytes of the page bitmap.
    pub fn written_bytes(&self) -> usize {
        self.written.capacity() * 8
    }

    pub fn new(pages: u64, sparse: bool) -> Self {
        File {
            pages,
            sparse,
            written: Vec::new(),
            slots: vec![Slot::EMPTY; pages as usize],
            mappings: Vec::new(),
            nr_cached: 0,
            last_evicted: None,
            i_pages: Default::default(),
            i_mmap: Default::default(),
        }
    }
}
