//! The engine's queue of tasks due to run: an indexed 4-ary min-heap with one entry per
//! task, ordered by (virtual time, place in the wake-up order, id). Queueing a task that
//! is already queued moves its entry (no stale entries to skip, so the heap never holds
//! more than the tasks); the order is total, so the pops are the same whatever the
//! heap's shape. Not a kernel structure: the kernel's tasks really run at once.

/// Where a task not queued keeps its position.
const NONE: u32 = u32::MAX;

/// One entry: its virtual time in the high 64 bits, its tie-breaker `place << 32 | id`
/// (both below 2^32) in the low, so that one integer comparison orders entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(u128);

/// The tie-breaker of task `id` at wake-up place `place`, as entries order it among
/// those due at the same virtual time (`peek`'s second field).
#[inline]
pub fn tie(place: u64, id: usize) -> u64 {
    place << 32 | id as u64
}

impl Key {
    fn new(clock: u64, tie: u64) -> Key {
        Key(u128::from(clock) << 64 | u128::from(tie))
    }

    fn clock(self) -> u64 {
        (self.0 >> 64) as u64
    }

    fn tie(self) -> u64 {
        self.0 as u64
    }

    fn id(self) -> usize {
        (self.0 & 0xFFFF_FFFF) as usize
    }
}

#[derive(Default)]
pub struct DueQueue {
    heap: Vec<Key>,
    /// Per task: its index in `heap`, or NONE.
    pos: Vec<u32>,
}

impl DueQueue {
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn contains(&self, id: usize) -> bool {
        self.pos.get(id).is_some_and(|&p| p != NONE)
    }

    /// The earliest entry as (clock, its `tie`).
    #[inline]
    pub fn peek(&self) -> Option<(u64, u64)> {
        self.heap.first().map(|k| (k.clock(), k.tie()))
    }

    /// The earliest entry as (clock, id).
    pub fn peek_task(&self) -> Option<(u64, usize)> {
        self.heap.first().map(|k| (k.clock(), k.id()))
    }

    /// Queues `id` at `clock` with tie-breaker `place`, moving its entry if it has one.
    pub fn push(&mut self, id: usize, place: u64, clock: u64) {
        debug_assert!(
            id < NONE as usize && place < 1 << 32,
            "task {id} place {place}"
        );
        if id >= self.pos.len() {
            self.pos.resize(id + 1, NONE);
        }
        let key = Key::new(clock, tie(place, id));
        match self.pos[id] {
            NONE => {
                self.heap.push(key);
                self.sift_up(self.heap.len() - 1);
            }
            p => {
                let p = p as usize;
                let old = std::mem::replace(&mut self.heap[p], key);
                if key < old {
                    self.sift_up(p);
                } else {
                    self.sift_down(p);
                }
            }
        }
    }

    /// Takes the earliest entry as (clock, id).
    pub fn pop(&mut self) -> Option<(u64, usize)> {
        let top = *self.heap.first()?;
        self.remove_at(0);
        Some((top.clock(), top.id()))
    }

    /// Drops `id`'s entry, if it has one.
    pub fn remove(&mut self, id: usize) {
        if let Some(&p) = self.pos.get(id) {
            if p != NONE {
                self.remove_at(p as usize);
            }
        }
    }

    fn remove_at(&mut self, p: usize) {
        let gone = self.heap.swap_remove(p);
        self.pos[gone.id()] = NONE;
        if p < self.heap.len() {
            let moved = self.heap[p];
            self.pos[moved.id()] = p as u32;
            if p > 0 && moved < self.heap[(p - 1) / 4] {
                self.sift_up(p);
            } else {
                self.sift_down(p);
            }
        }
    }

    fn sift_up(&mut self, mut p: usize) {
        let key = self.heap[p];
        while p > 0 {
            let parent = (p - 1) / 4;
            let above = self.heap[parent];
            if above <= key {
                break;
            }
            self.heap[p] = above;
            self.pos[above.id()] = p as u32;
            p = parent;
        }
        self.heap[p] = key;
        self.pos[key.id()] = p as u32;
    }

    /// The least of the up to four children from `first`, chosen without branching
    /// on the keys when all four exist.
    #[inline]
    fn least_child(&self, first: usize, n: usize) -> usize {
        let h = &self.heap;
        if first + 4 <= n {
            let a = first + usize::from(h[first + 1] < h[first]);
            let b = first + 2 + usize::from(h[first + 3] < h[first + 2]);
            return if h[b] < h[a] { b } else { a };
        }
        (first..n).min_by_key(|&c| h[c]).unwrap_or(first)
    }

    fn sift_down(&mut self, mut p: usize) {
        let key = self.heap[p];
        let n = self.heap.len();
        loop {
            let first = 4 * p + 1;
            if first >= n {
                break;
            }
            let least = self.least_child(first, n);
            let below = self.heap[least];
            if key <= below {
                break;
            }
            self.heap[p] = below;
            self.pos[below.id()] = p as u32;
            p = least;
        }
        self.heap[p] = key;
        self.pos[key.id()] = p as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Under random pushes (new and moved), removals and pops with ties in virtual
    /// time, the queue pops what a sorted set of the live entries would, and peeks it.
    #[test]
    fn pops_in_the_order_a_sorted_set_gives() {
        let mut q = DueQueue::default();
        let mut set: BTreeSet<(u64, u64, usize)> = BTreeSet::new();
        let mut at: Vec<Option<u64>> = vec![None; 40];
        let place = |id: usize| (id as u64 * 7) % 40;
        let mut next = crate::sim::test_draws();
        let mut pops = 0;
        for _ in 0..100_000 {
            let id = next(40) as usize;
            match next(3) {
                0 => {
                    let clock = next(60);
                    if let Some(c) = at[id].replace(clock) {
                        set.remove(&(c, place(id), id));
                    }
                    set.insert((clock, place(id), id));
                    q.push(id, place(id), clock);
                }
                1 => {
                    if let Some(c) = at[id].take() {
                        set.remove(&(c, place(id), id));
                    }
                    q.remove(id);
                }
                _ => {
                    let want = set.pop_first();
                    if let Some((_, _, got)) = want {
                        at[got] = None;
                        pops += 1;
                    }
                    assert_eq!(q.pop(), want.map(|(c, _, id)| (c, id)));
                }
            }
            let top = set.first().map(|&(c, p, id)| (c, tie(p, id)));
            assert_eq!(q.peek(), top);
            assert_eq!(q.peek_task(), set.first().map(|&(c, _, id)| (c, id)));
            assert_eq!(q.heap.len(), set.len());
            assert!((0..40).all(|id| q.contains(id) == at[id].is_some()));
        }
        assert!(pops > 10_000, "{pops}");
    }
}
