//! The map from a trace's ids (objects, offsets) to the packed page ranges the first pass
//! gave them. Replay looks up every request here, and a large trace's map is far bigger
//! than the host's caches, so a lookup is a cache miss: the map keeps each key beside its
//! value (one line per lookup, where a SwissTable reads a control byte and then the slot)
//! and lets a batch of lookups prefetch their lines first, which hashbrown offers no way
//! to do.

use crate::kernel::mm::prefetch;

/// Open addressing with linear probing over one array of (id, value) slots; a value of 0
/// marks an empty slot (a packed range always counts at least one page).
#[derive(Debug, Clone)]
pub struct IdMap {
    slots: Vec<(u64, u64)>,
    len: usize,
}

/// Slots in a new map (a power of two, as every size is).
const FIRST_SLOTS: usize = 16;

impl Default for IdMap {
    fn default() -> Self {
        IdMap {
            slots: vec![(0, 0); FIRST_SLOTS],
            len: 0,
        }
    }
}

impl IdMap {
    /// Where `id`'s probe starts: Fibonacci hashing, the top bits of a multiply.
    fn home(&self, id: u64) -> usize {
        debug_assert!(self.slots.len().is_power_of_two());
        let bits = self.slots.len().trailing_zeros();
        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// Starts loading the line of `id`'s slot (host only, no effect on results).
    pub fn prefetch(&self, id: u64) {
        prefetch(&self.slots[self.home(id)]);
    }

    /// The slot holding `id`, or the empty slot where it would go.
    fn find(&self, id: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(id);
        while self.slots[i].1 != 0 && self.slots[i].0 != id {
            i = (i + 1) & mask;
        }
        i
    }

    pub fn get(&self, id: u64) -> Option<u64> {
        match self.slots[self.find(id)] {
            (_, 0) => None,
            (_, v) => Some(v),
        }
    }

    /// `id`'s value, inserting `value()` (never 0) first if it has none.
    pub fn get_or_insert_with(&mut self, id: u64, value: impl FnOnce() -> u64) -> u64 {
        let i = self.find(id);
        if self.slots[i].1 != 0 {
            return self.slots[i].1;
        }
        let v = value();
        assert_ne!(v, 0, "0 marks an empty slot");
        self.slots[i] = (id, v);
        self.len += 1;
        // At most 3/4 full, so probes stay short.
        if self.len * 4 > self.slots.len() * 3 {
            self.grow();
        }
        v
    }

    fn grow(&mut self) {
        let bigger = vec![(0, 0); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for (id, v) in old.into_iter().filter(|s| s.1 != 0) {
            let i = self.find(id);
            self.slots[i] = (id, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_keep_their_first_value_and_survive_growth() {
        let mut m = IdMap::default();
        let ids: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0x1234_5678_9abc))
            .collect();
        for (n, &id) in ids.iter().enumerate() {
            assert_eq!(m.get_or_insert_with(id, || n as u64 + 1), n as u64 + 1);
        }
        assert_eq!(m.get_or_insert_with(ids[7], || 99), 8);
        for (n, &id) in ids.iter().enumerate() {
            assert_eq!(m.get(id), Some(n as u64 + 1));
        }
        assert_eq!(m.get(1), None);
        assert_eq!(m.len, ids.len());
        assert!(m.slots.len() >= ids.len() * 4 / 3);
    }
}
