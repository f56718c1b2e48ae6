//! Ports of cache_ext's example policies (cache-ext/cache_ext `policies/`: the FIFO
//! test policy, `cache_ext_mru`, `cache_ext_sampling` (LFU by sampling) and
//! `cache_ext_s3fifo`), written again against `ReclaimPlugin`; selectable as
//! `kernel.plugin.name`.

use super::{EvictCtx, FolioRef, Iter, ListId, Lists, PluginFactory, ReclaimPlugin};
use std::collections::{HashMap, VecDeque};

/// The example policies by name.
pub const NAMES: [&str; 4] = ["fifo", "mru", "lfu", "s3fifo"];

/// The factory of the example named `name`.
pub fn by_name(name: &str) -> Option<PluginFactory> {
    let f: PluginFactory = match name {
        "fifo" => Box::new(|| Box::new(Fifo::default())),
        "mru" => Box::new(|| Box::new(Fifo::mru())),
        "lfu" => Box::new(|| Box::new(Lfu::default())),
        "s3fifo" => Box::new(|| Box::new(S3Fifo::default())),
        _ => return None,
    };
    Some(f)
}

fn list(l: Option<ListId>) -> Result<ListId, String> {
    l.ok_or_else(|| "init made no list".to_string())
}

/// One list, evicted from its head. First in, first out (`Fifo::default()`): folios
/// join at the tail and accesses change nothing. Most recently used first
/// (`Fifo::mru()`, cache_ext_mru): new and accessed folios go to the head, so the
/// newest leave first; good for a file read in loops larger than memory.
#[derive(Default)]
pub struct Fifo {
    list: Option<ListId>,
    mru: bool,
}

impl Fifo {
    pub fn mru() -> Self {
        Fifo {
            list: None,
            mru: true,
        }
    }
}

impl ReclaimPlugin for Fifo {
    fn init(&mut self, _memcg: &str, lists: &mut Lists) -> Result<(), String> {
        self.list = Some(lists.new_list());
        Ok(())
    }
    fn folio_added(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String> {
        lists.add(list(self.list)?, folio, !self.mru);
        Ok(())
    }
    fn folio_accessed(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String> {
        if self.mru {
            lists.move_to(list(self.list)?, folio, false);
        }
        Ok(())
    }
    fn folio_removed(&mut self, _folio: FolioRef, _lists: &mut Lists) -> Result<(), String> {
        Ok(())
    }
    fn evict_folios(
        &mut self,
        ctx: &EvictCtx,
        lists: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        let n = ctx.nr_to_reclaim as usize;
        lists.iterate(list(self.list)?, n, out, |_, _| Iter::Evict);
        Ok(())
    }
}

/// Folios sampled per proposal by `Lfu` (cache_ext_sampling's sample size).
pub const LFU_SAMPLE: usize = 10;

/// Least frequently used, by sampling (cache_ext_sampling): each proposal is the folio
/// with the fewest accesses among `LFU_SAMPLE` taken from the list's head.
#[derive(Default)]
pub struct Lfu {
    list: Option<ListId>,
    freq: HashMap<u32, u64>,
}

impl ReclaimPlugin for Lfu {
    fn init(&mut self, _memcg: &str, lists: &mut Lists) -> Result<(), String> {
        self.list = Some(lists.new_list());
        Ok(())
    }
    fn folio_added(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String> {
        self.freq.insert(folio.pfn, 1);
        lists.add(list(self.list)?, folio, true);
        Ok(())
    }
    fn folio_accessed(&mut self, folio: FolioRef, _lists: &mut Lists) -> Result<(), String> {
        if let Some(n) = self.freq.get_mut(&folio.pfn) {
            *n += 1;
        }
        Ok(())
    }
    fn folio_removed(&mut self, folio: FolioRef, _lists: &mut Lists) -> Result<(), String> {
        self.freq.remove(&folio.pfn);
        Ok(())
    }
    fn evict_folios(
        &mut self,
        ctx: &EvictCtx,
        lists: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        let n = ctx.nr_to_reclaim as usize;
        let freq = &self.freq;
        lists.sample(list(self.list)?, n, LFU_SAMPLE, out, |f| {
            freq.get(&f.pfn).map_or(0, |&c| c as i64)
        });
        Ok(())
    }
}

/// S3-FIFO (Yang et al., SOSP'23; cache_ext_s3fifo): new folios enter a small FIFO (a
/// tenth of the cache); one accessed more than once there moves to the main FIFO on
/// its way out, the others leave and are remembered in a ghost FIFO of pages, whose
/// refaults enter main directly. Main gives an accessed folio another trip (its count
/// decremented) and evicts the rest.
#[derive(Default)]
pub struct S3Fifo {
    small: Option<ListId>,
    main: Option<ListId>,
    /// Accesses per resident folio, capped at 3.
    freq: HashMap<u32, u8>,
    /// The ghost FIFO: page keys in the order they were remembered, each with the
    /// number it was given. A key that refaulted leaves `in_ghost` at once and its entry
    /// here is dropped when it reaches the front (a stale number), so a refault costs
    /// O(1), not a search of the FIFO.
    ghost: VecDeque<(u64, u64)>,
    /// The ghost's live keys and their numbers: its length is the ghost's.
    in_ghost: HashMap<u64, u64>,
    remembered: u64,
}

impl S3Fifo {
    fn remember(&mut self, key: u64, cap: usize) {
        if !self.in_ghost.contains_key(&key) {
            self.remembered += 1;
            self.in_ghost.insert(key, self.remembered);
            self.ghost.push_back((key, self.remembered));
        }
        while self.in_ghost.len() > cap.max(1) {
            let Some((old, n)) = self.ghost.pop_front() else {
                break;
            };
            if self.in_ghost.get(&old) == Some(&n) {
                self.in_ghost.remove(&old);
            }
        }
    }

    /// One step from the small FIFO's head: promote it, or propose it. False when
    /// the head was proposed already (the list has gone round).
    fn from_small(
        &mut self,
        lists: &mut Lists,
        s: ListId,
        m: ListId,
        out: &mut Vec<FolioRef>,
    ) -> bool {
        let Some(f) = lists.first(s).filter(|f| !out.contains(f)) else {
            return false;
        };
        if self.freq.get(&f.pfn).copied().unwrap_or(0) > 1 {
            self.freq.insert(f.pfn, 0);
            lists.add(m, f, true);
        } else {
            out.push(f);
            lists.add(s, f, true);
        }
        true
    }

    /// One step from the main FIFO's head: another trip if accessed, else propose it.
    fn from_main(&mut self, lists: &mut Lists, m: ListId, out: &mut Vec<FolioRef>) -> bool {
        let Some(f) = lists.first(m).filter(|f| !out.contains(f)) else {
            return false;
        };
        let c = self.freq.entry(f.pfn).or_insert(0);
        if *c > 0 {
            *c -= 1;
        } else {
            out.push(f);
        }
        lists.add(m, f, true);
        true
    }
}

impl ReclaimPlugin for S3Fifo {
    fn init(&mut self, _memcg: &str, lists: &mut Lists) -> Result<(), String> {
        self.small = Some(lists.new_list());
        self.main = Some(lists.new_list());
        Ok(())
    }
    fn folio_added(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String> {
        self.freq.insert(folio.pfn, 0);
        if self.in_ghost.remove(&folio.key).is_some() {
            lists.add(list(self.main)?, folio, true);
        } else {
            lists.add(list(self.small)?, folio, true);
        }
        Ok(())
    }
    fn folio_accessed(&mut self, folio: FolioRef, _lists: &mut Lists) -> Result<(), String> {
        if let Some(c) = self.freq.get_mut(&folio.pfn) {
            *c = (*c + 1).min(3);
        }
        Ok(())
    }
    fn folio_removed(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String> {
        self.freq.remove(&folio.pfn);
        if lists.list_of(folio) == self.small {
            let cap = lists.len(list(self.main)?) as usize;
            self.remember(folio.key, cap);
        }
        Ok(())
    }
    fn evict_folios(
        &mut self,
        ctx: &EvictCtx,
        lists: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        let (s, m) = (list(self.small)?, list(self.main)?);
        let n = ctx.nr_to_reclaim as usize;
        // Each folio is looked at a few times at most: main's counts reach 0 in three
        // trips.
        let mut steps = 4 * (lists.len(s) + lists.len(m)) as usize + n;
        while out.len() < n && steps > 0 && !(lists.is_empty(s) && lists.is_empty(m)) {
            steps -= 1;
            let total = lists.len(s) + lists.len(m);
            let went = if lists.len(s) > total / 10 || lists.is_empty(m) {
                self.from_small(lists, s, m, out)
            } else {
                self.from_main(lists, m, out)
            };
            if !went {
                break;
            }
        }
        Ok(())
    }
}
