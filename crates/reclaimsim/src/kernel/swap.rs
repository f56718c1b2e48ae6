//! The swap device: slots, the swap cache, and the device cost model (mm/swapfile.c,
//! mm/swap_state.c, drivers/block/zram, drivers/block/brd).

use crate::kernel::folio::Pfn;
use crate::scenario::config::SwapDevice;

/// One swap slot: free, in use (data on the device, maybe with a shadow entry for
/// refault detection), or in the swap cache (a frame holds its data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SwapSlot(u64);

impl SwapSlot {
    const CACHED: u64 = 1 << 63;
    const USED: u64 = 1 << 62;
    const PAYLOAD: u64 = (1 << 62) - 1;
    pub const FREE: SwapSlot = SwapSlot(0);

    pub fn cached(pfn: Pfn) -> SwapSlot {
        SwapSlot(Self::CACHED | pfn as u64)
    }
    /// Data on the device; `shadow` is 0 when eviction left none.
    pub fn used(shadow: u64) -> SwapSlot {
        SwapSlot(Self::USED | (shadow & Self::PAYLOAD))
    }
    pub fn is_free(self) -> bool {
        self.0 == 0
    }
    pub fn as_cached(self) -> Option<Pfn> {
        (self.0 & Self::CACHED != 0).then_some(self.0 as u32)
    }
    pub fn shadow(self) -> Option<u64> {
        (self.0 & Self::USED != 0 && self.0 & Self::PAYLOAD != 0).then_some(self.0 & Self::PAYLOAD)
    }
}

#[derive(Clone, Debug)]
pub struct Swap {
    pub device: SwapDevice,
    pub slots: Vec<SwapSlot>,
    /// Owner memcg of each slot (for memory.swap.current).
    pub memcg: Vec<u16>,
    free: Vec<u32>,
}

impl Swap {
    pub fn new(device: SwapDevice, pages: u64) -> Self {
        let n = pages.min(crate::kernel::mm::Pte::MAX_VAL as u64) as u32;
        Swap {
            device,
            slots: vec![SwapSlot::FREE; n as usize],
            memcg: vec![0; n as usize],
            free: (0..n).rev().collect(),
        }
    }

    pub fn total(&self) -> u64 {
        self.slots.len() as u64
    }

    pub fn nr_free(&self) -> u64 {
        self.free.len() as u64
    }

    /// Models vm_swap_full(): more than half of swap in use.
    pub fn full(&self) -> bool {
        self.nr_free() * 2 < self.total()
    }

    /// Models folio_alloc_swap(): the lowest free slot.
    pub fn alloc(&mut self, memcg: u16) -> Option<u32> {
        let s = self.free.pop()?;
        self.memcg[s as usize] = memcg;
        Some(s)
    }

    /// Models swap_free() of the last reference: the slot returns to the free list.
    pub fn free(&mut self, slot: u32) -> u16 {
        debug_assert!(
            !self.slots[slot as usize].is_free() || self.slots[slot as usize] == SwapSlot::FREE
        );
        self.slots[slot as usize] = SwapSlot::FREE;
        self.free.push(slot);
        self.memcg[slot as usize]
    }
}
