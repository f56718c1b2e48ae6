//! Intrusive doubly linked lists of frames (`struct list_head` on folio->lru). Head is the
//! newest end, tail the reclaim end, as on the kernel's LRU lists.

use crate::kernel::folio::{pg, Folio, Link, Pfn, NIL};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    pub head: Pfn,
    pub tail: Pfn,
    pub len: u32,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push_head(&mut self, l: &mut [Link], a: &mut [Folio], p: Pfn) {
        a[p as usize].clear(pg::HELD);
        l[p as usize].prev = NIL;
        l[p as usize].next = self.head;
        if self.head != NIL {
            l[self.head as usize].prev = p;
        } else {
            self.tail = p;
        }
        self.head = p;
        self.len += 1;
    }

    pub fn push_tail(&mut self, l: &mut [Link], a: &mut [Folio], p: Pfn) {
        a[p as usize].clear(pg::HELD);
        l[p as usize].next = NIL;
        l[p as usize].prev = self.tail;
        if self.tail != NIL {
            l[self.tail as usize].next = p;
        } else {
            self.head = p;
        }
        self.tail = p;
        self.len += 1;
    }

    pub fn remove(&mut self, l: &mut [Link], a: &mut [Folio], p: Pfn) {
        let Link { prev, next } = l[p as usize];
        if prev != NIL {
            l[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            l[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
        l[p as usize] = Link::NONE;
        a[p as usize].set(pg::HELD);
        self.len -= 1;
    }

    /// Takes the tail off, and starts loading the new tail's link and frame (host only:
    /// a scan from the tail reads them next).
    pub fn pop_tail(&mut self, l: &mut [Link], a: &mut [Folio]) -> Option<Pfn> {
        let t = self.tail;
        if t == NIL {
            return None;
        }
        self.remove(l, a, t);
        if let (Some(link), Some(next)) = (l.get(self.tail as usize), a.get(self.tail as usize)) {
            crate::kernel::mm::prefetch(link);
            crate::kernel::mm::prefetch(next);
        }
        Some(t)
    }

    pub fn pop_head(&mut self, l: &mut [Link], a: &mut [Folio]) -> Option<Pfn> {
        let h = self.head;
        if h == NIL {
            return None;
        }
        self.remove(l, a, h);
        Some(h)
    }

    /// Moves all of `other` to the head of `self`, keeping `other`'s order (list_splice).
    pub fn splice_head(&mut self, a: &mut [Link], other: &mut List) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = *other;
        } else {
            a[other.tail as usize].next = self.head;
            a[self.head as usize].prev = other.tail;
            self.head = other.head;
            self.len += other.len;
        }
        *other = List::default();
    }

    /// Moves all of `other` to the tail of `self`, keeping `other`'s order (list_splice_tail).
    pub fn splice_tail(&mut self, a: &mut [Link], other: &mut List) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = *other;
        } else {
            a[self.tail as usize].next = other.head;
            a[other.head as usize].prev = self.tail;
            self.tail = other.tail;
            self.len += other.len;
        }
        *other = List::default();
    }

    /// Moves the run `first..=last` of `self` (`first` nearer the head, `n` frames) to the
    /// tail of `dst`, keeping its order (list_bulk_move_tail).
    pub fn bulk_move_tail(
        &mut self,
        a: &mut [Link],
        dst: &mut List,
        first: Pfn,
        last: Pfn,
        n: u32,
    ) {
        let (before, after) = (a[first as usize].prev, a[last as usize].next);
        if before != NIL {
            a[before as usize].next = after;
        } else {
            self.head = after;
        }
        if after != NIL {
            a[after as usize].prev = before;
        } else {
            self.tail = before;
        }
        self.len -= n;
        a[first as usize].prev = dst.tail;
        a[last as usize].next = NIL;
        if dst.tail != NIL {
            a[dst.tail as usize].next = first;
        } else {
            dst.head = first;
        }
        dst.tail = last;
        dst.len += n;
    }

    /// The frames from head to tail (for checks and tests; allocates).
    pub fn to_vec(&self, a: &[Link]) -> Vec<Pfn> {
        let mut v = Vec::with_capacity(self.len as usize);
        let mut p = self.head;
        while p != NIL {
            v.push(p);
            p = a[p as usize].next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_remove_splice_keep_order() {
        let (mut a, mut k) = (vec![Folio::default(); 8], vec![Link::NONE; 8]);
        let mut l = List::default();
        for p in 0..4 {
            l.push_head(&mut k, &mut a, p);
        }
        assert_eq!(l.to_vec(&k), vec![3, 2, 1, 0]);
        l.remove(&mut k, &mut a, 2);
        assert_eq!(l.to_vec(&k), vec![3, 1, 0]);
        assert_eq!(l.pop_tail(&mut k, &mut a), Some(0));
        let mut m = List::default();
        m.push_tail(&mut k, &mut a, 5);
        m.push_tail(&mut k, &mut a, 6);
        l.splice_tail(&mut k, &mut m);
        assert_eq!(l.to_vec(&k), vec![3, 1, 5, 6]);
        assert!(m.is_empty());
        let mut n = List::default();
        n.push_tail(&mut k, &mut a, 7);
        l.splice_head(&mut k, &mut n);
        assert_eq!(l.to_vec(&k), vec![7, 3, 1, 5, 6]);
        assert_eq!(l.len, 5);
        assert_eq!(l.tail, 6);
    }

    #[test]
    fn bulk_move_tail_moves_a_run_in_order() {
        let (mut a, mut k) = (vec![Folio::default(); 8], vec![Link::NONE; 8]);
        let (mut l, mut d) = (List::default(), List::default());
        for p in 0..5 {
            l.push_tail(&mut k, &mut a, p);
        }
        d.push_tail(&mut k, &mut a, 7);
        l.bulk_move_tail(&mut k, &mut d, 1, 3, 3);
        assert_eq!(l.to_vec(&k), vec![0, 4]);
        assert_eq!(d.to_vec(&k), vec![7, 1, 2, 3]);
        assert_eq!((l.len, d.len, d.tail, l.tail), (2, 4, 3, 4));
        let mut e = List::default();
        l.bulk_move_tail(&mut k, &mut e, 0, 4, 2);
        assert!(l.is_empty() && l.head == NIL && l.tail == NIL);
        assert_eq!(e.to_vec(&k), vec![0, 4]);
    }
}
