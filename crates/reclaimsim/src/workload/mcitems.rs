//! memcached's own links between items (memcached 1.6): the hash table's chains
//! (`assoc.c`) and the segmented LRU (`items.c`), kept per key as `u32` indexes, and the
//! item pages that following and rewriting those links touches. Only a scenario that
//! turns them on pays for the per-key arrays, and only for the keys it stores: they grow
//! as keys are first linked.

use super::Touch;

/// No item: the end of a chain or of a list.
pub const NONE: u32 = u32::MAX;

/// The first page of an item (its header and key), by key index.
pub type FirstPage<'a> = &'a dyn Fn(u32) -> u64;

/// A store to the header of item `key` (its `h_next`, `prev`, `next`, flags or time).
fn write(out: &mut Vec<Touch>, page: FirstPage, key: u32) {
    out.push(Touch::Mem {
        region: 0,
        page: page(key),
        write: true,
    });
}

/// Keys a chunk of a per-key array holds.
const CHUNK: usize = 4096;

/// A per-key array for keys `0..cap`, in chunks of `CHUNK` keys allocated when a key of
/// theirs is first linked (never moved or grown after): a key in a chunk not allocated
/// reads as `fill` (not linked). The last chunk ends at `cap`.
#[derive(Clone, Debug)]
struct PerKey<T> {
    chunks: Vec<Option<Box<[T]>>>,
    fill: T,
    cap: usize,
}

impl<T: Copy> PerKey<T> {
    fn new(fill: T, cap: u64) -> Self {
        PerKey {
            chunks: Vec::new(),
            fill,
            cap: cap as usize,
        }
    }

    fn get(&self, key: u32) -> T {
        let k = key as usize;
        match self.chunks.get(k / CHUNK) {
            Some(Some(c)) => c[k % CHUNK],
            _ => self.fill,
        }
    }

    /// The slot of `key`, allocating its chunk.
    fn at(&mut self, key: u32) -> &mut T {
        let (k, c) = (key as usize, key as usize / CHUNK);
        if c >= self.chunks.len() {
            self.chunks.resize_with(c + 1, || None);
        }
        let len = CHUNK
            .min(self.cap.saturating_sub(c * CHUNK))
            .max(k % CHUNK + 1);
        let fill = self.fill;
        let chunk = self.chunks[c].get_or_insert_with(|| vec![fill; len].into_boxed_slice());
        &mut chunk[k % CHUNK]
    }

    /// Bytes the chunks and their table hold.
    #[cfg(test)]
    fn bytes(&self) -> u64 {
        let items: usize = self.chunks.iter().flatten().map(|c| c.len()).sum();
        let table = self.chunks.capacity() * std::mem::size_of::<Option<Box<[T]>>>();
        (items * std::mem::size_of::<T>() + table) as u64
    }
}

/// The hash table's chains: per bucket its first item, per item the next (`h_next`).
/// The table's size is fixed (the one `assoc_expand` reaches for the scenario's keys).
#[derive(Clone, Debug)]
pub struct Chains {
    head: Vec<u32>,
    h_next: PerKey<u32>,
}

impl Chains {
    /// A table of `buckets` empty chains with room for up to `keys` items, taken as
    /// they are inserted.
    pub fn new(buckets: u64, keys: u64) -> Self {
        Chains {
            head: vec![NONE; buckets as usize],
            h_next: PerKey::new(NONE, keys),
        }
    }

    /// Host bytes of the bucket heads and the per-key links.
    #[cfg(test)]
    pub fn host_bytes(&self) -> u64 {
        (self.head.capacity() * 4) as u64 + self.h_next.bytes()
    }

    /// assoc_find(): walks `bucket`'s chain up to `key`, reading the header and key of
    /// every item ahead of it (the `nkey` and `memcmp` checks); the whole chain when
    /// `key` is not in it. Returns whether it was found.
    pub fn find(&self, bucket: u64, key: u32, page: FirstPage, out: &mut Vec<Touch>) -> bool {
        let mut it = self.head[bucket as usize];
        while it != NONE && it != key {
            out.push(Touch::Mem {
                region: 0,
                page: page(it),
                write: false,
            });
            it = self.h_next.get(it);
        }
        it == key
    }

    /// assoc_insert(): `key` becomes the chain's head (the bucket's store is the bucket
    /// touch the request already made).
    pub fn insert(&mut self, bucket: u64, key: u32) {
        let b = bucket as usize;
        *self.h_next.at(key) = self.head[b];
        self.head[b] = key;
    }

    /// assoc_delete(): takes `key` out of its chain, storing into the `h_next` of the
    /// item before it (`_hashitem_before` repeats the walk `find` made: same pages).
    pub fn delete(&mut self, bucket: u64, key: u32, page: FirstPage, out: &mut Vec<Touch>) {
        let b = bucket as usize;
        let next = self.h_next.get(key);
        *self.h_next.at(key) = NONE;
        if self.head[b] == key {
            self.head[b] = next;
            return;
        }
        let mut before = self.head[b];
        while before != NONE && self.h_next.get(before) != key {
            before = self.h_next.get(before);
        }
        // assert(*before != 0) in assoc_delete(): callers delete only what they found.
        debug_assert!(before != NONE, "assoc_delete of an item not in its chain");
        *self.h_next.at(before) = next;
        write(out, page, before);
    }

    /// Items in `bucket`'s chain, head first (for tests).
    #[cfg(test)]
    pub fn chain(&self, bucket: u64) -> Vec<u32> {
        let mut v = Vec::new();
        let mut it = self.head[bucket as usize];
        while it != NONE {
            v.push(it);
            it = self.h_next.get(it);
        }
        v
    }
}

/// items.c's per-class LRUs: HOT_LRU, WARM_LRU, COLD_LRU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lru {
    Hot = 0,
    Warm = 1,
    Cold = 2,
}

/// Flag bits beside the list an item is on: ITEM_FETCHED, ITEM_ACTIVE, ITEM_LINKED.
const LRU_BITS: u8 = 3;
const FETCHED: u8 = 4;
const ACTIVE: u8 = 8;
const LINKED: u8 = 16;

/// memcached's defaults: `hot_lru_pct`, `warm_lru_pct`, `hot_max_factor`,
/// `warm_max_factor` (memcached.c `settings_init`).
const HOT_LRU_PCT: u64 = 20;
const WARM_LRU_PCT: u64 = 40;
const HOT_MAX_FACTOR: f64 = 0.2;
const WARM_MAX_FACTOR: f64 = 2.0;
/// lru_maintainer_juggle()'s bound on moves per call.
const JUGGLE_LOOPS: u32 = 500;

/// One doubly linked list (`heads[id]`, `tails[id]`, `sizes[id]`).
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    count: u64,
}

const EMPTY: List = List {
    head: NONE,
    tail: NONE,
    count: 0,
};

/// The segmented LRU of memcached 1.5+ (`lru_segmented`, on by default): per slab class
/// HOT, WARM and COLD lists linked through the items' `prev` and `next`, and per item its
/// flags and last access time (`it->time`, seconds). The maintainer thread's work
/// (`lru_maintainer_juggle`, `lru_maintainer_bumps`) is done at once by the worker
/// thread whose request made it due.
#[derive(Clone, Debug)]
pub struct Segmented {
    lists: Vec<[List; 3]>,
    prev: PerKey<u32>,
    next: PerKey<u32>,
    time: PerKey<u32>,
    flags: PerKey<u8>,
}

impl Segmented {
    /// Lists for `classes` slab classes and room for up to `keys` items, taken as they
    /// are linked.
    pub fn new(classes: usize, keys: u64) -> Self {
        Segmented {
            lists: vec![[EMPTY; 3]; classes],
            prev: PerKey::new(NONE, keys),
            next: PerKey::new(NONE, keys),
            time: PerKey::new(0, keys),
            flags: PerKey::new(0, keys),
        }
    }

    /// Host bytes of the per-key arrays.
    #[cfg(test)]
    pub fn host_bytes(&self) -> u64 {
        self.prev.bytes() + self.next.bytes() + self.time.bytes() + self.flags.bytes()
    }

    fn lru_of(&self, key: u32) -> Lru {
        match self.flags.get(key) & LRU_BITS {
            0 => Lru::Hot,
            1 => Lru::Warm,
            _ => Lru::Cold,
        }
    }

    /// Items on list `lru` of `class` (for tests and checks).
    pub fn count(&self, class: usize, lru: Lru) -> u64 {
        self.lists[class][lru as usize].count
    }

    /// Items of `class` on `lru`, head first (for tests).
    #[cfg(test)]
    pub fn list(&self, class: usize, lru: Lru) -> Vec<u32> {
        let mut v = Vec::new();
        let mut it = self.lists[class][lru as usize].head;
        while it != NONE {
            v.push(it);
            it = self.next.get(it);
        }
        v
    }

    #[cfg(test)]
    pub fn lru(&self, key: u32) -> Option<Lru> {
        (self.flags.get(key) & LINKED != 0).then(|| self.lru_of(key))
    }

    /// do_item_link_q(): `key` becomes the head of `lru`, storing into the old head's
    /// `prev`.
    fn link_q(&mut self, class: usize, lru: Lru, key: u32, page: FirstPage, out: &mut Vec<Touch>) {
        *self.flags.at(key) = (self.flags.get(key) & !LRU_BITS) | lru as u8;
        let l = &mut self.lists[class][lru as usize];
        // assert(it != *head) in do_item_link_q().
        debug_assert!(l.head != key);
        *self.prev.at(key) = NONE;
        *self.next.at(key) = l.head;
        if l.head != NONE {
            *self.prev.at(l.head) = key;
            write(out, page, l.head);
        }
        l.head = key;
        if l.tail == NONE {
            l.tail = key;
        }
        l.count += 1;
    }

    /// do_item_unlink_q(): takes `key` off its list, storing into its neighbours'
    /// `next` and `prev`.
    fn unlink_q(&mut self, class: usize, key: u32, page: FirstPage, out: &mut Vec<Touch>) {
        let (prev, next) = (self.prev.get(key), self.next.get(key));
        let lru = self.lru_of(key);
        let l = &mut self.lists[class][lru as usize];
        if l.head == key {
            l.head = next;
        }
        if l.tail == key {
            l.tail = prev;
        }
        l.count -= 1;
        if next != NONE {
            *self.prev.at(next) = prev;
            write(out, page, next);
        }
        if prev != NONE {
            *self.next.at(prev) = next;
            write(out, page, prev);
        }
    }

    /// do_item_link()'s LRU half: a new item, its flags cleared and its time now, at
    /// the head of HOT (`item_link_q`).
    pub fn link(
        &mut self,
        class: usize,
        key: u32,
        now: u32,
        page: FirstPage,
        out: &mut Vec<Touch>,
    ) {
        *self.flags.at(key) = LINKED;
        *self.time.at(key) = now;
        self.link_q(class, Lru::Hot, key, page, out);
    }

    /// do_item_unlink()'s LRU half (`item_unlink_q`); nothing for an item not linked.
    pub fn unlink(&mut self, class: usize, key: u32, page: FirstPage, out: &mut Vec<Touch>) {
        if self.flags.get(key) & LINKED != 0 {
            self.unlink_q(class, key, page, out);
            *self.flags.at(key) = 0;
        }
    }

    /// do_item_bump() on a hit: the first hit sets ITEM_FETCHED, the next ITEM_ACTIVE; an
    /// item in HOT or WARM only gets its time, one in COLD is queued for the maintainer
    /// (`lru_bump_async`), which moves it to WARM (`do_item_update`): done here at once.
    pub fn bump(
        &mut self,
        class: usize,
        key: u32,
        now: u32,
        page: FirstPage,
        out: &mut Vec<Touch>,
    ) {
        let f = self.flags.get(key);
        if f & ACTIVE != 0 {
            return;
        }
        if f & FETCHED == 0 {
            *self.flags.at(key) |= FETCHED;
            return;
        }
        *self.flags.at(key) |= ACTIVE;
        *self.time.at(key) = now;
        if self.lru_of(key) == Lru::Cold {
            // do_item_update(): a COLD item that is still ACTIVE moves to WARM.
            self.unlink_q(class, key, page, out);
            *self.flags.at(key) &= !ACTIVE;
            self.link_q(class, Lru::Warm, key, page, out);
        }
    }

    /// lru_maintainer_juggle() for `class` at `now`: pull the tails of HOT and WARM to
    /// their limits (20% and 40% of the class's items) and ages (0.2 and 2 × the age of
    /// COLD's tail), and move an ACTIVE tail of COLD to WARM, until nothing moves.
    pub fn juggle(&mut self, class: usize, now: u32, page: FirstPage, out: &mut Vec<Touch>) {
        let lists = &self.lists[class];
        let total: u64 = lists.iter().map(|l| l.count).sum();
        let cold_tail = lists[Lru::Cold as usize].tail;
        let cold_age = if cold_tail == NONE {
            0
        } else {
            now.saturating_sub(self.time.get(cold_tail))
        };
        // rel_time_t (unsigned) times a double, truncated.
        let hot_age = (f64::from(cold_age) * HOT_MAX_FACTOR) as u32;
        let warm_age = (f64::from(cold_age) * WARM_MAX_FACTOR) as u32;
        for _ in 0..JUGGLE_LOOPS {
            let mut more = self.pull_tail(class, Lru::Hot, total, hot_age, now, page, out)
                || self.pull_tail(class, Lru::Warm, total, warm_age, now, page, out);
            more |= self.pull_cold_tail(class, page, out);
            if !more {
                break;
            }
        }
    }

    /// lru_pull_tail() on HOT or WARM (no expiry, no eviction): from the tail, an ACTIVE
    /// item loses the flag and goes to WARM's head (HOT's, then stop; WARM's, then look at
    /// the next, up to 5); otherwise the tail goes to COLD if the list is over `pct` of
    /// `total` items or the item is older than `max_age`. Returns whether it moved any.
    #[allow(clippy::too_many_arguments)]
    fn pull_tail(
        &mut self,
        class: usize,
        lru: Lru,
        total: u64,
        max_age: u32,
        now: u32,
        page: FirstPage,
        out: &mut Vec<Touch>,
    ) -> bool {
        let pct = if lru == Lru::Hot {
            HOT_LRU_PCT
        } else {
            WARM_LRU_PCT
        };
        let limit = total * pct / 100;
        let mut search = self.lists[class][lru as usize].tail;
        let mut moved = false;
        for _ in 0..5 {
            if search == NONE {
                break;
            }
            let s = search;
            search = self.prev.get(s);
            if self.flags.get(s) & ACTIVE != 0 {
                // Rescue ACTIVE items: HOT's flow to WARM, WARM's go back to its head.
                *self.flags.at(s) &= !ACTIVE;
                write(out, page, s);
                self.unlink_q(class, s, page, out);
                self.link_q(class, Lru::Warm, s, page, out);
                moved = true;
                if lru == Lru::Warm {
                    continue;
                }
            } else if self.lists[class][lru as usize].count > limit
                || now.saturating_sub(self.time.get(s)) > max_age
            {
                write(out, page, s);
                self.unlink_q(class, s, page, out);
                self.link_q(class, Lru::Cold, s, page, out);
                moved = true;
            }
            break;
        }
        moved
    }

    /// lru_pull_tail() on COLD without eviction: an ACTIVE tail (a bump not yet made)
    /// goes to WARM. Bumps are made at once here, so this only keeps memcached's rule.
    fn pull_cold_tail(&mut self, class: usize, page: FirstPage, out: &mut Vec<Touch>) -> bool {
        let tail = self.lists[class][Lru::Cold as usize].tail;
        if tail == NONE || self.flags.get(tail) & ACTIVE == 0 {
            return false;
        }
        *self.flags.at(tail) &= !ACTIVE;
        write(out, page, tail);
        self.unlink_q(class, tail, page, out);
        self.link_q(class, Lru::Warm, tail, page, out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Item k's first page is page k.
    fn page(k: u32) -> u64 {
        u64::from(k)
    }

    fn pages(out: &[Touch]) -> Vec<u64> {
        out.iter()
            .map(|t| match *t {
                Touch::Mem { page, .. } => page,
                _ => unreachable!(),
            })
            .collect()
    }

    /// Links and counts agree on every list of class 0.
    fn check(s: &Segmented) {
        for lru in [Lru::Hot, Lru::Warm, Lru::Cold] {
            let items = s.list(0, lru);
            assert_eq!(items.len() as u64, s.count(0, lru));
            let l = s.lists[0][lru as usize];
            assert_eq!(l.tail, items.last().copied().unwrap_or(NONE));
            for w in items.windows(2) {
                assert_eq!(s.prev.get(w[1]), w[0]);
            }
            assert!(items.iter().all(|&k| s.lru(k) == Some(lru)));
        }
    }

    #[test]
    fn per_key_arrays_take_a_chunk_when_a_key_of_it_is_first_linked() {
        let mut a = PerKey::new(NONE, 10_000);
        assert_eq!((a.get(7), a.bytes()), (NONE, 0), "no chunk: not linked");
        *a.at(5000) = 5;
        assert_eq!((a.get(5000), a.get(4999), a.get(100)), (5, NONE, NONE));
        let table = |a: &PerKey<u32>| (a.chunks.capacity() * 16) as u64;
        assert_eq!(
            a.bytes() - table(&a),
            4 * 4096,
            "only keys 4096..8191's chunk"
        );
        *a.at(9999) = 7;
        assert_eq!(
            a.chunks[2].as_ref().unwrap().len(),
            10_000 - 8192,
            "up to cap"
        );
        assert_eq!((a.get(9999), a.get(8192), a.get(5000)), (7, NONE, 5));
        let mut c = Chains::new(4, 10);
        c.insert(1, 5);
        c.insert(1, 9);
        assert_eq!(c.chain(1), [9, 5]);
        assert_eq!(c.host_bytes() - table(&c.h_next), 4 * 4 + 4 * 10);
    }

    #[test]
    fn chain_insert_at_head_find_reads_items_ahead_delete_writes_before() {
        let mut c = Chains::new(4, 10);
        for k in [3, 5, 7] {
            c.insert(1, k);
        }
        assert_eq!(c.chain(1), [7, 5, 3]);
        let mut out = Vec::new();
        assert!(c.find(1, 3, &page, &mut out));
        assert_eq!(pages(&out), [7, 5]);
        assert!(out
            .iter()
            .all(|t| matches!(t, Touch::Mem { write: false, .. })));
        out.clear();
        assert!(!c.find(1, 9, &page, &mut out));
        assert_eq!(pages(&out), [7, 5, 3], "a miss reads the whole chain");
        out.clear();
        assert!(c.find(1, 7, &page, &mut out) && out.is_empty());
        c.delete(1, 3, &page, &mut out);
        assert_eq!(pages(&out), [5], "the h_next of the item before is written");
        assert_eq!(c.chain(1), [7, 5]);
        out.clear();
        c.delete(1, 7, &page, &mut out);
        assert!(out.is_empty(), "the head's predecessor is the bucket");
        assert_eq!(c.chain(1), [5]);
    }

    /// Ten items linked at time 0 and juggled: HOT keeps 20% (the two newest), COLD the
    /// rest in link order, oldest at the tail.
    fn ten_items() -> Segmented {
        let mut s = Segmented::new(1, 10);
        let mut out = Vec::new();
        for k in 0..10 {
            s.link(0, k, 0, &page, &mut out);
            s.juggle(0, 0, &page, &mut out);
        }
        check(&s);
        s
    }

    #[test]
    fn new_items_go_to_hot_and_overflow_to_cold() {
        let s = ten_items();
        assert_eq!(s.list(0, Lru::Hot), [9, 8]);
        assert_eq!(s.list(0, Lru::Cold), [7, 6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(s.count(0, Lru::Warm), 0);
    }

    #[test]
    fn a_cold_item_moves_to_warm_on_its_second_hit_only() {
        let mut s = ten_items();
        let mut out = Vec::new();
        s.bump(0, 4, 1, &page, &mut out);
        assert_eq!(s.lru(4), Some(Lru::Cold), "the first hit only sets FETCHED");
        assert!(out.is_empty());
        s.bump(0, 4, 1, &page, &mut out);
        assert_eq!(
            s.lru(4),
            Some(Lru::Warm),
            "the second sets ACTIVE: bumped to WARM"
        );
        // Unlinked from between 5 and 3 (their next and prev written); WARM was empty.
        assert_eq!(pages(&out), [3, 5]);
        check(&s);
        out.clear();
        s.bump(0, 4, 2, &page, &mut out);
        s.bump(0, 4, 3, &page, &mut out);
        assert!(out.is_empty(), "a WARM item only gets the flag");
        assert_eq!(s.list(0, Lru::Warm), [4]);
        assert_eq!(s.time.get(4), 2, "the time of the hit that set ACTIVE");
    }

    #[test]
    fn hot_items_older_than_a_fifth_of_colds_age_go_to_cold() {
        let mut s = Segmented::new(1, 11);
        let mut out = Vec::new();
        for k in 0..10 {
            s.link(0, k, 0, &page, &mut out);
            s.juggle(0, 0, &page, &mut out);
        }
        s.link(0, 10, 8, &page, &mut out);
        // At 8 s COLD's tail is 8 s old: HOT keeps items up to 1 s old (8 × 0.2,
        // truncated); 8 left over the limit, 9 by its age.
        s.juggle(0, 8, &page, &mut out);
        assert_eq!(s.list(0, Lru::Hot), [10]);
        s.juggle(0, 10, &page, &mut out);
        assert_eq!(s.list(0, Lru::Hot), [10], "2 s old, not over 10 × 0.2");
        s.juggle(0, 11, &page, &mut out);
        assert_eq!(s.count(0, Lru::Hot), 0, "3 s old, over 11 × 0.2");
        assert_eq!(s.list(0, Lru::Cold)[..3], [10, 9, 8]);
        check(&s);
    }

    #[test]
    fn active_warm_tail_is_kept_in_warm() {
        let mut s = ten_items();
        let mut out = Vec::new();
        for k in [0, 1, 2, 3, 4] {
            s.bump(0, k, 0, &page, &mut out);
            s.bump(0, k, 0, &page, &mut out);
        }
        // WARM holds 5 of 10, over its 40%: its tail went back to COLD.
        s.juggle(0, 0, &page, &mut out);
        assert_eq!(s.list(0, Lru::Warm), [4, 3, 2, 1]);
        s.bump(0, 1, 0, &page, &mut out);
        s.bump(0, 5, 0, &page, &mut out);
        s.bump(0, 5, 0, &page, &mut out);
        // 5 joins WARM (5 items): the tail 1 is ACTIVE, so it goes to WARM's head and
        // loses the flag, and the next tail, 2, goes to COLD.
        s.juggle(0, 0, &page, &mut out);
        assert_eq!(s.list(0, Lru::Warm), [1, 5, 4, 3]);
        assert_eq!(s.flags.get(1) & ACTIVE, 0);
        check(&s);
    }

    #[test]
    fn hot_and_warm_stay_within_their_limits() {
        let n = 2000u32;
        let mut s = Segmented::new(1, u64::from(n));
        let mut out = Vec::new();
        let mut x = 12345u64;
        let mut linked = 0;
        for step in 0..50_000u32 {
            x = super::super::splitmix64(x);
            let now = step / 1000;
            if linked < n && x % 4 == 0 {
                s.link(0, linked, now, &page, &mut out);
                linked += 1;
            } else if linked > 0 {
                s.bump(0, (x >> 8) as u32 % linked, now, &page, &mut out);
            }
            s.juggle(0, now, &page, &mut out);
            let total = u64::from(linked);
            assert!(s.count(0, Lru::Hot) <= total * HOT_LRU_PCT / 100);
            assert!(s.count(0, Lru::Warm) <= total * WARM_LRU_PCT / 100);
        }
        check(&s);
        assert!(s.count(0, Lru::Warm) > 0);
    }
}
