//! Page frames and their flags: the model's `struct folio` (order 0 only). All frames
//! live in one arena indexed by PFN; LRU lists link them intrusively (`list`).

use crate::kernel::debug::vm_bug_on;

/// Page frame number: index into the frame arena.
pub type Pfn = u32;
/// No frame (list ends, empty slots).
pub const NIL: Pfn = u32::MAX;

/// Frame flag bits. The page-flag names follow include/linux/page-flags.h.
pub mod pg {
    /// On an LRU list; clearing it is the isolation token (`folio_test_clear_lru`).
    pub const LRU: u32 = 1 << 0;
    pub const ACTIVE: u32 = 1 << 1;
    pub const REFERENCED: u32 = 1 << 2;
    pub const WORKINGSET: u32 = 1 << 3;
    /// Clear means file LRU type.
    pub const SWAPBACKED: u32 = 1 << 4;
    pub const SWAPCACHE: u32 = 1 << 5;
    pub const DIRTY: u32 = 1 << 6;
    pub const WRITEBACK: u32 = 1 << 7;
    pub const RECLAIM: u32 = 1 << 8;
    pub const UNEVICTABLE: u32 = 1 << 9;
    /// The frame is owned by an anonymous mapping (owner = mm, index = vpn); otherwise
    /// by a file (owner = file, index = page index).
    pub const ANON: u32 = 1 << 10;
    /// Allocated (not on the free list).
    pub const ALLOCATED: u32 = 1 << 11;
    /// Sits in a CPU's lru_add batch (not yet on a list).
    pub const IN_LRU_ADD: u32 = 1 << 12;
    /// MGLRU generation field: gen + 1 while on a multi-gen list, 0 otherwise.
    pub const GEN_SHIFT: u32 = 13;
    pub const GEN_MASK: u32 = 0b111 << GEN_SHIFT;
    /// MGLRU refs counter (2 bits, LRU_REFS_WIDTH).
    pub const REFS_SHIFT: u32 = 16;
    pub const REFS_MASK: u32 = 0b11 << REFS_SHIFT;
    /// Model-only: the frame is on no list (free list, LRU list) and in no lru_add
    /// batch, because a task holds it (just allocated, isolated for reclaim, on its way
    /// back or out). Lists clear it when they take the frame and set it when they give it
    /// up, so the checker can tell a held frame from a lost one at any sync point.
    pub const HELD: u32 = 1 << 18;
    /// References held by per-CPU move batches (activate, move_tail): the 13 top bits.
    /// A folio may be queued once per batch slot, so the scenario loader keeps
    /// 2 * pagevec_size * cpus below MAX_PINS.
    pub const PINS_SHIFT: u32 = 19;
    pub const PINS_MASK: u32 = !0 << PINS_SHIFT;
    pub const MAX_PINS: u32 = PINS_MASK >> PINS_SHIFT;
}

/// A frame's place on a list (folio->lru), in `Kernel::links` beside the frame arena:
/// a scan from a list's tail chases `prev` from frame to frame, and a dense array of
/// links keeps that chase in fewer host cache lines than the 16-byte frames would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub prev: Pfn,
    pub next: Pfn,
}

impl Link {
    /// On no list.
    pub const NONE: Link = Link {
        prev: NIL,
        next: NIL,
    };
}

/// One page frame. 16 bytes; its list links and the swap slot of a swap-cache folio
/// live beside the arena.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Folio {
    /// Anon: the mm id. File: the file id.
    pub owner: u32,
    /// Anon: the virtual page number. File: the page index.
    pub index: u32,
    pub flags: u32,
    pub memcg: u16,
    pub mapcount: u16,
}

impl Folio {
    #[inline]
    pub fn test(&self, f: u32) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn set(&mut self, f: u32) {
        self.flags |= f;
    }
    #[inline]
    pub fn clear(&mut self, f: u32) {
        self.flags &= !f;
    }
    /// Models folio_test_clear_lru(): returns whether PG_lru was set.
    #[inline]
    pub fn test_clear(&mut self, f: u32) -> bool {
        let was = self.flags & f != 0;
        self.flags &= !f;
        was
    }
    /// Models folio_is_file_lru(): the LRU type, 0 = anon, 1 = file.
    #[inline]
    pub fn lru_type(&self) -> usize {
        if self.test(pg::SWAPBACKED) {
            0
        } else {
            1
        }
    }
    #[inline]
    pub fn mapped(&self) -> bool {
        self.mapcount > 0
    }
    /// Models folio_lru_gen(): the generation, or -1 when off the multi-gen lists.
    #[inline]
    pub fn lru_gen(&self) -> i32 {
        ((self.flags & pg::GEN_MASK) >> pg::GEN_SHIFT) as i32 - 1
    }
    #[inline]
    pub fn set_lru_gen(&mut self, gen: i32) {
        self.flags = (self.flags & !pg::GEN_MASK) | (((gen + 1) as u32) << pg::GEN_SHIFT);
    }
    #[inline]
    pub fn refs_field(&self) -> u32 {
        (self.flags & pg::REFS_MASK) >> pg::REFS_SHIFT
    }
    #[inline]
    pub fn set_refs_field(&mut self, r: u32) {
        self.flags = (self.flags & !pg::REFS_MASK) | (r.min(3) << pg::REFS_SHIFT);
    }
    #[inline]
    pub fn pins(&self) -> u32 {
        (self.flags & pg::PINS_MASK) >> pg::PINS_SHIFT
    }
    #[inline]
    pub fn pin(&mut self) {
        let p = self.pins();
        debug_assert!(p < pg::MAX_PINS, "folio batch pin count overflow");
        self.flags = (self.flags & !pg::PINS_MASK) | ((p + 1) << pg::PINS_SHIFT);
    }
    #[inline]
    pub fn unpin(&mut self) {
        let p = self.pins();
        debug_assert!(p > 0);
        self.flags = (self.flags & !pg::PINS_MASK) | ((p - 1) << pg::PINS_SHIFT);
    }
}

/// Classic LRU list indices (enum lru_list).
pub mod lru {
    pub const INACTIVE_ANON: usize = 0;
    pub const ACTIVE_ANON: usize = 1;
    pub const INACTIVE_FILE: usize = 2;
    pub const ACTIVE_FILE: usize = 3;
    pub const UNEVICTABLE: usize = 4;
    pub const NR_LRU_LISTS: usize = 5;
    pub const NAMES: [&str; 5] = [
        "inactive_anon",
        "active_anon",
        "inactive_file",
        "active_file",
        "unevictable",
    ];
}

/// Models folio_lru_list(): the classic list a folio belongs on.
pub fn folio_lru_list(f: &Folio) -> usize {
    // VM_BUG_ON_FOLIO(folio_test_active(folio) && folio_test_unevictable(folio), folio).
    vm_bug_on!(
        f.test(pg::ACTIVE) && f.test(pg::UNEVICTABLE),
        "active and unevictable"
    );
    if f.test(pg::UNEVICTABLE) {
        return lru::UNEVICTABLE;
    }
    2 * f.lru_type() + usize::from(f.test(pg::ACTIVE))
}
