//! Shadow entries: what an evicted page leaves in its page-cache or swap slot so that a
//! refault can be recognised (mm/workingset.c pack_shadow / unpack_shadow).

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
