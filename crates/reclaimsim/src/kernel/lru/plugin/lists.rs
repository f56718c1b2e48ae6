//! The list helpers a plugin keeps its folios on, as cache_ext's kernel-side lists
//! (cache-ext/linux-cache-ext `mm/cache_ext_ds.c`: `bpf_cache_ext_ds_registry_new_list`,
//! `bpf_cache_ext_list_add`/`_add_tail`/`_move`/`_del`, `bpf_cache_ext_list_iterate` and
//! `bpf_cache_ext_list_sample`). A folio is on at most one list; the kernel takes it off
//! when it leaves the memcg (after `folio_removed`). Host-side bookkeeping only: list
//! operations charge no virtual time (the hook that makes them is charged).

use super::FolioRef;
use crate::kernel::folio::{Pfn, NIL};

/// A list made by `Lists::new_list`; only the plugin instance that made it holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListId(u32);

/// What an `iterate` callback says of the folio it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iter {
    /// Not this one: go on to the next.
    Continue,
    /// Propose it for eviction (it moves to the list's tail) and go on.
    Evict,
    /// End the walk.
    Stop,
}

#[derive(Clone, Copy, Debug)]
struct Head {
    head: Pfn,
    tail: Pfn,
    len: u32,
}

/// Every plugin list of a run, linked through per-frame links (made only when a
/// scenario runs a plugin).
pub struct Lists {
    prev: Vec<Pfn>,
    next: Vec<Pfn>,
    /// Per frame: the list it is on, plus one (0: none).
    on: Vec<u32>,
    /// Per frame: the key of the folio on it (`FolioRef::key`).
    keys: Vec<u64>,
    heads: Vec<Head>,
}

impl Lists {
    pub fn new(nr_frames: usize) -> Self {
        Lists {
            prev: vec![NIL; nr_frames],
            next: vec![NIL; nr_frames],
            on: vec![0; nr_frames],
            keys: vec![0; nr_frames],
            heads: Vec::new(),
        }
    }

    /// A new empty list (bpf_cache_ext_ds_registry_new_list()).
    pub fn new_list(&mut self) -> ListId {
        self.heads.push(Head {
            head: NIL,
            tail: NIL,
            len: 0,
        });
        ListId(self.heads.len() as u32 - 1)
    }

    /// Puts `f` on `l`, at its head (`tail` false) or tail, taking it off the list it
    /// was on, if any (bpf_cache_ext_list_add / _add_tail / _move).
    pub fn add(&mut self, l: ListId, f: FolioRef, tail: bool) {
        self.del(f);
        self.keys[f.pfn as usize] = f.key;
        let (p, h) = (f.pfn, &mut self.heads[l.0 as usize]);
        if tail {
            self.prev[p as usize] = h.tail;
            self.next[p as usize] = NIL;
            if h.tail != NIL {
                self.next[h.tail as usize] = p;
            } else {
                h.head = p;
            }
            h.tail = p;
        } else {
            self.next[p as usize] = h.head;
            self.prev[p as usize] = NIL;
            if h.head != NIL {
                self.prev[h.head as usize] = p;
            } else {
                h.tail = p;
            }
            h.head = p;
        }
        h.len += 1;
        self.on[p as usize] = l.0 + 1;
    }

    /// The same as `add`: moves `f` to `l`'s head or tail.
    pub fn move_to(&mut self, l: ListId, f: FolioRef, tail: bool) {
        self.add(l, f, tail);
    }

    /// Takes `f` off its list; false when it was on none (bpf_cache_ext_list_del).
    pub fn del(&mut self, f: FolioRef) -> bool {
        let p = f.pfn as usize;
        let Some(l) = self.list_of(f) else {
            return false;
        };
        let (prev, next) = (self.prev[p], self.next[p]);
        let h = &mut self.heads[l.0 as usize];
        if prev != NIL {
            self.next[prev as usize] = next;
        } else {
            h.head = next;
        }
        if next != NIL {
            self.prev[next as usize] = prev;
        } else {
            h.tail = prev;
        }
        h.len -= 1;
        self.on[p] = 0;
        self.prev[p] = NIL;
        self.next[p] = NIL;
        true
    }

    /// The list `f` is on.
    pub fn list_of(&self, f: FolioRef) -> Option<ListId> {
        match self.on.get(f.pfn as usize) {
            Some(&n) if n > 0 => Some(ListId(n - 1)),
            _ => None,
        }
    }

    pub fn len(&self, l: ListId) -> u32 {
        self.heads[l.0 as usize].len
    }

    pub fn is_empty(&self, l: ListId) -> bool {
        self.len(l) == 0
    }

    /// The folio at the head of `l`.
    pub fn first(&self, l: ListId) -> Option<FolioRef> {
        let h = self.heads[l.0 as usize].head;
        (h != NIL).then(|| self.fref(h))
    }

    /// The folio at the tail of `l`.
    pub fn last(&self, l: ListId) -> Option<FolioRef> {
        let t = self.heads[l.0 as usize].tail;
        (t != NIL).then(|| self.fref(t))
    }

    /// The folios of `l` from head to tail (allocates).
    pub fn to_vec(&self, l: ListId) -> Vec<FolioRef> {
        let mut v = Vec::with_capacity(self.len(l) as usize);
        let mut p = self.heads[l.0 as usize].head;
        while p != NIL {
            v.push(self.fref(p));
            p = self.next[p as usize];
        }
        v
    }

    /// bpf_cache_ext_list_iterate(): shows `f` each folio of `l` from the head, with its
    /// index, once each, until `out` holds `max` folios or `f` says `Stop`. A folio `f`
    /// proposes (`Evict`) is pushed on `out` and moved to the tail, so that one the
    /// kernel keeps comes round again last.
    pub fn iterate(
        &mut self,
        l: ListId,
        max: usize,
        out: &mut Vec<FolioRef>,
        mut f: impl FnMut(usize, FolioRef) -> Iter,
    ) {
        let n = self.len(l) as usize;
        let mut p = self.heads[l.0 as usize].head;
        for idx in 0..n {
            if out.len() >= max || p == NIL {
                return;
            }
            let next = self.next[p as usize];
            let fr = self.fref(p);
            match f(idx, fr) {
                Iter::Continue => {}
                Iter::Evict => {
                    out.push(fr);
                    self.add(l, fr, true);
                }
                Iter::Stop => return,
            }
            p = next;
        }
    }

    /// bpf_cache_ext_list_sample(): takes `n * sample_size` folios off the head of `l`
    /// (fewer if it is shorter), proposes from each consecutive group of `sample_size`
    /// the one with the lowest `score` (the first on a tie), and puts every sampled folio
    /// back at the tail in the order taken.
    pub fn sample(
        &mut self,
        l: ListId,
        n: usize,
        sample_size: usize,
        out: &mut Vec<FolioRef>,
        mut score: impl FnMut(FolioRef) -> i64,
    ) {
        let sample_size = sample_size.max(1);
        let mut taken = Vec::with_capacity(n * sample_size);
        while taken.len() < n * sample_size {
            let Some(f) = self.first(l) else { break };
            self.del(f);
            taken.push(f);
        }
        for group in taken.chunks(sample_size) {
            let best = group
                .iter()
                .map(|&f| (score(f), f))
                .reduce(|a, b| if b.0 < a.0 { b } else { a });
            if let Some((_, f)) = best {
                out.push(f);
            }
        }
        for f in taken {
            self.add(l, f, true);
        }
    }

    fn fref(&self, pfn: Pfn) -> FolioRef {
        FolioRef {
            pfn,
            key: self.keys[pfn as usize],
        }
    }

    /// Host bytes of the lists and their per-frame links.
    pub fn host_bytes(&self) -> u64 {
        (self.on.len() * 20 + self.heads.len() * std::mem::size_of::<Head>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &[u32]) -> Vec<FolioRef> {
        v.iter().map(|&p| f(p)).collect()
    }

    fn f(pfn: u32) -> FolioRef {
        FolioRef { pfn, key: 0 }
    }

    #[test]
    fn add_move_del_keep_order() {
        let mut ls = Lists::new(8);
        let (a, b) = (ls.new_list(), ls.new_list());
        for p in 0..4 {
            ls.add(a, f(p), true);
        }
        ls.add(a, f(5), false);
        assert_eq!(ls.to_vec(a), refs(&[5, 0, 1, 2, 3]));
        ls.move_to(b, f(1), true);
        assert_eq!(ls.to_vec(a), refs(&[5, 0, 2, 3]));
        assert_eq!(ls.to_vec(b), refs(&[1]));
        assert_eq!(ls.list_of(f(1)), Some(b));
        assert!(ls.del(f(3)));
        assert!(!ls.del(f(3)));
        assert_eq!((ls.len(a), ls.last(a)), (3, Some(f(2))));
    }

    #[test]
    fn iterate_proposes_and_rotates() {
        let mut ls = Lists::new(8);
        let a = ls.new_list();
        for p in 0..6 {
            ls.add(a, f(p), true);
        }
        let mut out = Vec::new();
        ls.iterate(a, 2, &mut out, |_, x| {
            if x.pfn % 2 == 1 {
                Iter::Evict
            } else {
                Iter::Continue
            }
        });
        assert_eq!(out, refs(&[1, 3]));
        assert_eq!(ls.to_vec(a), refs(&[0, 2, 4, 5, 1, 3]));
    }

    #[test]
    fn sample_picks_the_lowest_score_per_group() {
        let mut ls = Lists::new(8);
        let a = ls.new_list();
        for p in 0..7 {
            ls.add(a, f(p), true);
        }
        let mut out = Vec::new();
        ls.sample(a, 2, 3, &mut out, |x| [5, 1, 3, 2, 2, 9, 0][x.pfn as usize]);
        assert_eq!(out, refs(&[1, 3]));
        assert_eq!(ls.to_vec(a), refs(&[6, 0, 1, 2, 3, 4, 5]));
    }
}
