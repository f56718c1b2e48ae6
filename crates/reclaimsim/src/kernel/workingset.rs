//! Shadow entries: what an evicted page leaves in its page-cache or swap slot so that a
//! refault can be recognised (mm/workingset.c pack_shadow / unpack_shadow).

use crate::kernel::debug::vm_bug_on;
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::Kernel;

/// Bits for the eviction value (the kernel keeps what fits beside the ids; 38 bits
/// needs no bucket_order shift for any run this model makes).
pub const EVICTION_BITS: u32 = 38;
pub const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    pub memcg: u16,
    pub node: u16,
    /// Classic: nonresident_age at eviction. MGLRU: the (min_seq, refs) token.
    pub eviction: u64,
    pub workingset: bool,
}

impl Shadow {
    /// pack_shadow(): never 0, so a slot can tell "no shadow" from a shadow.
    pub fn pack(self) -> u64 {
        (1 << 61)
            | ((self.workingset as u64) << 60)
            | ((self.node as u64 & 0x3f) << 54)
            | ((self.memcg as u64) << EVICTION_BITS)
            | (self.eviction & EVICTION_MASK)
    }

    pub fn unpack(v: u64) -> Shadow {
        Shadow {
            workingset: (v >> 60) & 1 == 1,
            node: ((v >> 54) & 0x3f) as u16,
            memcg: ((v >> EVICTION_BITS) & 0xffff) as u16,
            eviction: v & EVICTION_MASK,
        }
    }
}

/// workingset_eviction()'s checks (6.1) of the folio whose shadow is made:
/// VM_BUG_ON_FOLIO(folio_test_lru(folio), folio) and VM_BUG_ON_FOLIO(folio_ref_count(folio),
/// folio), the refcount frozen by __remove_mapping (nothing maps or pins the folio).
pub fn check_eviction(k: &Kernel, pfn: Pfn) {
    let f = &k.folios[pfn as usize];
    vm_bug_on!(f.test(pg::LRU), "folio {pfn} evicted on the LRU");
    vm_bug_on!(
        f.mapped() || f.pins() > 0,
        "folio {pfn} evicted while referenced"
    );
}

/// A shadow at refault names a memcg and a node that exist. No kernel check: 6.1 looks
/// the memcg up by id and copes with one deleted since (mem_cgroup_from_id() may find
/// none); the model never deletes a memcg, so an id out of range is a packing bug.
pub fn check_shadow(k: &Kernel, s: &Shadow) {
    vm_bug_on!(
        s.memcg as usize >= k.memcgs.cgs.len() || s.node as usize >= k.nr_nodes(),
        "shadow of memcg {} node {}: no such lruvec",
        s.memcg,
        s.node
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_round_trips() {
        let s = Shadow {
            memcg: 103,
            node: 1,
            eviction: EVICTION_MASK - 5,
            workingset: true,
        };
        assert_eq!(Shadow::unpack(s.pack()), s);
        assert_ne!(
            Shadow {
                memcg: 0,
                node: 0,
                eviction: 0,
                workingset: false
            }
            .pack(),
            0
        );
    }
}
