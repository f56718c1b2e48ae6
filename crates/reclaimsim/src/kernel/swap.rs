//! The swap device: slots, the swap cache, and the device cost model (mm/swapfile.c,
//! mm/swap_state.c, drivers/block/zram, drivers/block/brd). An SSD's queue and
//! asynchronous I/O are `swap_io`.

use crate::kernel::config::SwapDevice;
use crate::kernel::folio::Pfn;
use crate::kernel::stats::Cat;
use crate::kernel::Kernel;
use crate::sim::lock::{LockRef, LockSite};

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
    /// Slots given back to the swap map (the latest last), not counting the per-CPU
    /// caches'. They are taken before any slot never used yet.
    free: Vec<u32>,
    /// Slots `fresh..` have never been used, so they need no place in `free`: the same
    /// order as a free stack holding them below the given-back ones, at 4 B less a slot.
    fresh: u32,
    /// si->lock, guarding the swap map.
    pub lock: crate::sim::lock::Lock,
    /// SWP_SYNCHRONOUS_IO in si->flags: swapon sets it for a device whose queue is
    /// synchronous (QUEUE_FLAG_SYNCHRONOUS), which zram and brd both are and an SSD is
    /// not. Then do_swap_page skips the swap cache for an entry with one reference.
    /// Tests clear it to take the swap-cache path.
    pub synchronous_io: bool,
    /// zswap in front of the device, when the scenario configures it.
    pub zswap: Option<Box<crate::kernel::zswap::Zswap>>,
    /// The SSD's queue and I/O state, when the device is an SSD.
    pub ssd: Option<Box<crate::kernel::swap_io::Ssd>>,
    /// zram's table and pool, when the device is zram.
    pub zram: Option<Box<crate::kernel::zram::Zram>>,
}

impl Swap {
    pub fn new(device: SwapDevice, pages: u64) -> Self {
        let n = pages.min(crate::kernel::mm::Pte::MAX_VAL as u64) as u32;
        Swap {
            device,
            slots: vec![SwapSlot::FREE; n as usize],
            memcg: vec![0; n as usize],
            free: Vec::new(),
            fresh: 0,
            lock: Default::default(),
            synchronous_io: match device {
                SwapDevice::Zram | SwapDevice::Ramdisk => true,
                SwapDevice::Ssd => false,
            },
            zswap: None,
            ssd: None,
            zram: None,
        }
    }

    pub fn total(&self) -> u64 {
        self.slots.len() as u64
    }

    pub fn nr_free(&self) -> u64 {
        self.free.len() as u64 + self.total() - self.fresh as u64
    }

    /// Host bytes of the free slots' stack.
    pub fn free_bytes(&self) -> usize {
        self.free.capacity() * 4
    }

    /// Models vm_swap_full(): more than half of swap in use (free swap below half).
    pub fn full(&self) -> bool {
        self.nr_free() * 2 < self.total()
    }

    /// Takes the lowest free slot of the swap map (scan_swap_map_slots), si->lock held.
    fn take(&mut self) -> Option<u32> {
        self.free.pop().or_else(|| {
            let s = self.fresh;
            (u64::from(s) < self.total()).then(|| {
                self.fresh += 1;
                s
            })
        })
    }
}

/// The write of one page with no folio under writeback after it (zswap's writeback of
/// an entry): zram's compression (its comp_algorithm) or brd's copy in the submitter's
/// context, or a request on the SSD's queue.
pub fn device_write_cost(k: &mut Kernel, device: SwapDevice) {
    match device {
        SwapDevice::Zram => {
            let ns = crate::kernel::zram::comp_cost(k, true);
            k.spend(ns, Cat::Compression)
        }
        SwapDevice::Ramdisk => k.spend(k.costs.page_copy, Cat::Io),
        SwapDevice::Ssd => crate::kernel::swap_io::write_page(k),
    }
}

/// How a swap write left its folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// Written in the submitter's context: the folio is clean.
    Done,
    /// Under writeback until the device completes it.
    Writeback,
    /// The write failed (zram past its mem_limit): the folio is redirtied.
    Failed,
}

/// Models __swap_writepage() (6.1) of swap-cache folio `pfn`: zram (`zram::write_page`)
/// and brd complete in the submitter's context through ->rw_page; an SSD takes a bio and
/// the folio stays under writeback until it completes.
pub fn swap_writepage(k: &mut Kernel, pfn: Pfn, device: SwapDevice) -> Written {
    match device {
        SwapDevice::Zram => {
            let slot = k.folio_swap[pfn as usize];
            if crate::kernel::zram::write_page(k, pfn, slot) {
                Written::Done
            } else {
                Written::Failed
            }
        }
        SwapDevice::Ramdisk => {
            device_write_cost(k, device);
            Written::Done
        }
        SwapDevice::Ssd => {
            crate::kernel::swap_io::write_folio(k, pfn);
            Written::Writeback
        }
    }
}

/// SWAP_SLOTS_CACHE_SIZE: slots a CPU takes from, or gives back to, the swap map at once.
pub const SWAP_SLOTS_CACHE_SIZE: usize = 64;

/// struct swap_slots_cache of one CPU: slots taken from the swap map for this CPU's
/// next swap-outs, and freed slots waiting to go back.
#[derive(Clone, Debug, Default)]
pub struct SwapSlotsCache {
    pub slots: Vec<u32>,
    pub slots_ret: Vec<u32>,
}

impl Kernel {
    /// Whether the per-CPU caches are in use (check_cache_active(): while the swap map
    /// has more than five cache refills per CPU free; 6.1 turns them off again below
    /// one, which the model does not distinguish).
    fn swap_slots_cache_active(&self) -> bool {
        let sw = self.swap.as_ref().expect("swap");
        sw.nr_free() > (self.batches.len() * 5 * SWAP_SLOTS_CACHE_SIZE) as u64
    }

    /// Models folio_alloc_swap() through get_swap_page(): a slot from this CPU's cache,
    /// refilled from the swap map under si->lock (get_swap_pages); straight from the map
    /// under the lock when the caches are off. None when swap is full.
    pub fn get_swap_slot(&mut self, memcg: u16) -> Option<u32> {
        let cpu = self.cur.cpu as usize;
        let cached = self.swap_slots_cache_active();
        if !cached || self.swap_slots[cpu].slots.is_empty() {
            let n = if cached { SWAP_SLOTS_CACHE_SIZE } else { 1 };
            self.spin_lock(LockRef::SwapInfo, LockSite::GetSwapPages);
            for _ in 0..n {
                let Some(s) = self.swap.as_mut().unwrap().take() else {
                    break;
                };
                self.swap_slots[cpu].slots.push(s);
                self.spend(self.costs.swap_slot, Cat::Other);
            }
            self.spin_unlock(LockRef::SwapInfo);
        }
        let slot = self.swap_slots[cpu].slots.pop()?;
        self.swap.as_mut().unwrap().memcg[slot as usize] = memcg;
        Some(slot)
    }

    /// Models put_swap_folio() / free_swap_slot() of a slot's last reference: its data
    /// goes, and the slot waits in this CPU's return cache until a cacheful goes back to
    /// the swap map under si->lock (swapcache_free_entries). Returns the slot's memcg.
    pub fn put_swap_slot(&mut self, slot: u32) -> u16 {
        let sw = self.swap.as_mut().unwrap();
        debug_assert!(!sw.slots[slot as usize].is_free());
        sw.slots[slot as usize] = SwapSlot::FREE;
        let memcg = sw.memcg[slot as usize];
        let cpu = self.cur.cpu as usize;
        self.swap_slots[cpu].slots_ret.push(slot);
        if !self.swap_slots_cache_active()
            || self.swap_slots[cpu].slots_ret.len() >= SWAP_SLOTS_CACHE_SIZE
        {
            self.spin_lock(LockRef::SwapInfo, LockSite::SwapcacheFreeEntries);
            let ret = std::mem::take(&mut self.swap_slots[cpu].slots_ret);
            for s in ret {
                // swap_range_free(): frontswap_invalidate_page() of the slot, and the
                // device's swap_slot_free_notify (zram_slot_free_notify).
                if self.swap.as_ref().unwrap().zswap.is_some() {
                    crate::kernel::zswap::invalidate(self, s);
                }
                if self.swap.as_ref().unwrap().zram.is_some() {
                    crate::kernel::zram::free_page(self, s);
                }
                self.swap.as_mut().unwrap().free.push(s);
            }
            self.spend(self.costs.swap_slot, Cat::Other);
            self.spin_unlock(LockRef::SwapInfo);
        }
        memcg
    }
}
