//! Host only: prefetching the page-table entries and swap-map entries that the next
//! touches of a task will read, so that their cache misses overlap. Nothing here
//! changes what the model computes, only how fast the host computes it.

use crate::kernel::Kernel;
use crate::workload::{Touch, Workload};

/// Host only: starts loading the PTEs of a step's memory touches, then the swap-map
/// entries of those that are swap entries, so that their cache misses overlap rather
/// than follow one another.
pub(super) fn prefetch_touches(k: &Kernel, mm: u32, touches: &[Touch]) {
    let ptes = || touches.iter().filter_map(|t| touch_pte(k, mm, t));
    ptes().for_each(crate::kernel::mm::prefetch);
    let Some(swap) = &k.swap else { return };
    for slot in ptes().filter_map(|p| p.swap_slot()) {
        prefetch_slot(swap, slot);
    }
}

/// Host only: the swap map's entries for `slot`.
pub(super) fn prefetch_slot(swap: &crate::kernel::swap::Swap, slot: u32) {
    crate::kernel::mm::prefetch(&swap.slots[slot as usize]);
    crate::kernel::mm::prefetch(&swap.memcg[slot as usize]);
    if let Some(z) = &swap.zram {
        z.prefetch(slot);
    }
}

/// The PTE a memory touch of `mm` reads, if it has one (host only, for prefetching).
pub(super) fn touch_pte<'k>(
    k: &'k Kernel,
    mm: u32,
    touch: &Touch,
) -> Option<&'k crate::kernel::mm::Pte> {
    match *touch {
        Touch::Mem { region, page, .. } => {
            let vma = k.mms[mm as usize].vmas.get(region as usize)?;
            vma.ptes.get(page as usize)
        }
        _ => None,
    }
}

/// Host only: the PTE of the touch a few operations ahead of this one, and the swap-map
/// entries of the one just after this, whose PTE an earlier step started loading. With
/// one touch an operation, `prefetch_touches` alone finds nothing to overlap.
pub(super) fn prefetch_ahead(k: &Kernel, mm: u32, gen: &dyn Workload, thread: usize) {
    let pte = |d| touch_pte(k, mm, &gen.ahead(thread, d)?);
    if let Some(p) = pte(PREFETCH_PTE_AHEAD) {
        crate::kernel::mm::prefetch(p);
    }
    if let (Some(swap), Some(slot)) = (&k.swap, pte(0).and_then(|p| p.swap_slot())) {
        prefetch_slot(swap, slot);
    }
}

/// How many touches ahead `prefetch_ahead` starts loading a PTE.
const PREFETCH_PTE_AHEAD: usize = 2;
