//! Reclaim policies as plugins, in the shape of cache_ext (Zussman et al., "cache_ext:
//! Customizing the Page Cache with eBPF", SOSP'25; cache-ext/linux-cache-ext, a patched
//! Linux 6.6): a plugin governs the page cache (file folios) of a memcg, or of every
//! memcg, through five hooks, `init`, `folio_added`, `folio_accessed`, `folio_removed`
//! and `evict_folios`, and keeps its folios on the list helpers of `lists`. With
//! `kernel.plugin.pages = "all"` it governs the memcg's anon folios too (cache_ext has
//! no such mode: its hooks see the page cache only).
//!
//! The kernel keeps its own classic LRU for every folio underneath (`Plugin` wraps
//! `Classic`): it is the fallback when a plugin proposes fewer folios than asked for,
//! and it alone governs the memcgs no plugin governs, and their anon folios unless
//! `pages = "all"`. The kernel's rules
//! stay its own: a proposed folio goes through shrink_folio_list (dirty, writeback,
//! mapped and referenced folios are kept as they would be), one that is isolated or
//! unevictable is skipped and counted, and one not resident in the governed memcg stops
//! the run with the hook's name. Each hook call costs `CostTable::policy_hook`, whatever
//! the plugin is written in.

pub mod examples;
pub mod lists;

use super::classic::{get_scan_count, Classic};
use super::{Policy, Verdict};
use crate::kernel::batch;
use crate::kernel::config::PluginPages;
use crate::kernel::folio::{lru, pg, Folio, Pfn};
use crate::kernel::lru::mglru::debugfs::LruGenCmd;
use crate::kernel::memcg::MemcgId;
use crate::kernel::stats::Cat;
use crate::kernel::vmscan::{ScanControl, SWAP_CLUSTER_MAX};
use crate::kernel::Kernel;
pub use lists::{Iter, ListId, Lists};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A folio as a plugin sees it. It compares and hashes equal across calls while the
/// folio is resident: `pfn` is its frame, which is reused only after the kernel has
/// called `folio_removed` for it (a frame leaves the memcg only by being freed, and the
/// kernel delivers the removal before any later hook of the plugin); `key` is the page
/// it holds, file id << 32 | page index, the same for the page's next folio after a
/// refault (what cache_ext's ghost entries key on: the mapping's host and the index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FolioRef {
    pub pfn: Pfn,
    pub key: u64,
}

impl FolioRef {
    /// The key of a candidate named by its frame alone (the Python package's folios are
    /// their PFNs): the kernel checks the frame, not the page.
    pub const ANY_KEY: u64 = u64::MAX;
}

fn fref(folios: &[Folio], pfn: Pfn) -> FolioRef {
    let f = &folios[pfn as usize];
    FolioRef {
        pfn,
        key: u64::from(f.owner) << 32 | u64::from(f.index),
    }
}

/// Who is reclaiming.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaimer {
    Kswapd,
    /// Direct reclaim of an allocation (try_to_free_pages()).
    Direct,
    /// A memcg over memory.max or memory.high (try_to_free_mem_cgroup_pages()).
    MemcgLimit,
    /// A write to memory.reclaim (MEMCG_RECLAIM_PROACTIVE).
    Proactive,
}

impl Reclaimer {
    pub fn name(self) -> &'static str {
        match self {
            Reclaimer::Kswapd => "kswapd",
            Reclaimer::Direct => "direct",
            Reclaimer::MemcgLimit => "memcg_limit",
            Reclaimer::Proactive => "proactive",
        }
    }

    fn of(sc: &ScanControl) -> Self {
        match (sc.kswapd, sc.target, sc.proactive) {
            (true, _, _) => Reclaimer::Kswapd,
            (false, None, _) => Reclaimer::Direct,
            (false, Some(_), false) => Reclaimer::MemcgLimit,
            (false, Some(_), true) => Reclaimer::Proactive,
        }
    }
}

/// What `evict_folios` is asked (cache_ext's `struct cache_ext_eviction_ctx` with the
/// reclaim's scan_control).
#[derive(Clone, Debug)]
pub struct EvictCtx {
    /// The governed memcg's path.
    pub memcg: String,
    pub node: usize,
    /// How many folios to propose (request_nr_folios_to_evict); more are ignored.
    pub nr_to_reclaim: u64,
    pub swappiness: u32,
    /// sc->priority: 12 on the first pass, lower as reclaim gets harder.
    pub priority: i32,
    pub reclaimer: Reclaimer,
}

/// A reclaim policy for one memcg's page cache. One value is made per governed memcg
/// and `init` called once before the run; every other hook runs inside the kernel task
/// that caused it, at the fixed virtual cost `CostTable::policy_hook`. An `Err` stops
/// the run with the hook's name and the message (the kernel falls back to its LRU
/// until the current step ends).
pub trait ReclaimPlugin {
    /// cache_ext's `init(memcg)`: make the lists.
    fn init(&mut self, memcg: &str, lists: &mut Lists) -> Result<(), String>;
    /// A folio of the memcg's page cache joined the LRU (lru_add()).
    fn folio_added(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String>;
    /// An access the kernel saw: at once for read(2) (folio_mark_accessed()), through
    /// the young bits a reference check or active-list scan reads for a mapped folio.
    fn folio_accessed(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String>;
    /// The folio left the memcg (evicted, or freed by truncation or a kill); the kernel
    /// takes it off its list afterwards.
    fn folio_removed(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String>;
    /// Propose up to `ctx.nr_to_reclaim` folios to evict, in `out`.
    fn evict_folios(
        &mut self,
        ctx: &EvictCtx,
        lists: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String>;
}

/// Makes one plugin value per governed memcg.
pub type PluginFactory = Box<dyn FnMut() -> Box<dyn ReclaimPlugin>>;

/// What the plugin layer did in a run (results' `plugin`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct PluginStats {
    /// The plugin (`kernel.plugin.name`).
    pub name: String,
    /// The memcgs it governed, by path.
    pub memcgs: Vec<String>,
    /// Hook calls, each charged `policy_hook`.
    pub folio_added: u64,
    pub folio_accessed: u64,
    pub folio_removed: u64,
    pub evict_folios: u64,
    /// Folios evict_folios proposed (up to the number asked for).
    pub proposed: u64,
    /// Proposed folios the kernel isolated and ran through shrink_folio_list.
    pub isolated: u64,
    /// Proposed folios skipped: already isolated, in a batch, unevictable or on
    /// another node.
    pub skipped: u64,
    /// evict_folios calls that gave fewer evictable folios than asked for, after which
    /// the kernel scanned its own file LRU for the rest.
    pub fallbacks: u64,
    /// The pages those fallbacks asked the built-in LRU for.
    pub fallback_pages: u64,
}

/// A change the kernel saw, delivered to the plugin at its next call (before any other
/// hook, so a removal always precedes the frame's next `folio_added`).
#[derive(Clone, Copy, Debug)]
enum Event {
    Added(FolioRef, MemcgId),
    Young(FolioRef, MemcgId),
    Removed(FolioRef, MemcgId),
}

/// The kernel's side of a plugin (`Kernel::plugin`, made only when a scenario runs
/// one): which memcgs are governed, which frames their plugin knows of, and the
/// events not yet delivered.
pub struct Tracking {
    governed: Vec<bool>,
    /// `pages = "all"`: anon folios are tracked too.
    all: bool,
    tracked: Vec<bool>,
    pending: Vec<Event>,
}

impl Tracking {
    pub fn host_bytes(&self) -> u64 {
        (self.governed.len() + self.tracked.len() + self.pending.capacity() * 12) as u64
    }
}

/// Called from lru_add(): a file folio (any folio, with `pages = "all"`) of a governed
/// memcg reaches the LRU for the first time since it was allocated.
pub fn note_added(k: &mut Kernel, pfn: Pfn) {
    let Some(t) = k.plugin.as_deref_mut() else {
        return;
    };
    let f = k.folios[pfn as usize];
    let kind = f.lru_type() == 1 || t.all;
    if !t.governed[f.memcg as usize] || !kind || t.tracked[pfn as usize] {
        return;
    }
    t.tracked[pfn as usize] = true;
    t.pending.push(Event::Added(fref(&k.folios, pfn), f.memcg));
    k.spend(k.costs.policy_hook, Cat::Other);
}

/// Called from folio_referenced() when it cleared young bits of a tracked folio.
pub fn note_young(k: &mut Kernel, pfn: Pfn) {
    let Some(t) = k.plugin.as_deref_mut() else {
        return;
    };
    if !t.tracked[pfn as usize] {
        return;
    }
    let f = k.folios[pfn as usize];
    t.pending.push(Event::Young(fref(&k.folios, pfn), f.memcg));
    k.spend(k.costs.policy_hook, Cat::Other);
}

/// Called from free_folio(): a tracked folio leaves its memcg.
pub fn note_removed(k: &mut Kernel, pfn: Pfn) {
    let Some(t) = k.plugin.as_deref_mut() else {
        return;
    };
    if !std::mem::take(&mut t.tracked[pfn as usize]) {
        return;
    }
    let f = k.folios[pfn as usize];
    t.pending
        .push(Event::Removed(fref(&k.folios, pfn), f.memcg));
    k.spend(k.costs.policy_hook, Cat::Other);
}

/// The plugin policy: the classic LRU underneath, a plugin per governed memcg above.
pub struct Plugin {
    inner: Classic,
    /// Per memcg id: its plugin, if governed.
    plugins: Vec<Option<Box<dyn ReclaimPlugin>>>,
    paths: Vec<String>,
    lists: Lists,
    stats: PluginStats,
    failure: Option<String>,
}

impl Plugin {
    /// Sets up the plugin `name` (made by `make`) on `memcg` (a path; None: every
    /// memcg), governing `pages`, and calls each value's `init`.
    pub fn new(
        k: &mut Kernel,
        name: &str,
        memcg: Option<MemcgId>,
        pages: PluginPages,
        mut make: PluginFactory,
    ) -> Self {
        let n = k.memcgs.cgs.len();
        let governed: Vec<bool> = (0..n)
            .map(|m| memcg.is_none_or(|g| g as usize == m))
            .collect();
        let paths: Vec<String> = k.memcgs.cgs.iter().map(|c| c.path.clone()).collect();
        let mut p = Plugin {
            inner: Classic::new(k),
            plugins: (0..n).map(|_| None).collect(),
            lists: Lists::new(k.folios.len()),
            stats: PluginStats {
                name: name.to_string(),
                memcgs: (0..n)
                    .filter(|&m| governed[m])
                    .map(|m| paths[m].clone())
                    .collect(),
                ..Default::default()
            },
            paths,
            failure: None,
        };
        for m in (0..n).filter(|&m| governed[m]) {
            let mut plugin = make();
            if let Err(e) = plugin.init(&p.paths[m], &mut p.lists) {
                p.fail("init", e);
            }
            p.plugins[m] = Some(plugin);
        }
        k.plugin = Some(Box::new(Tracking {
            governed,
            all: pages == PluginPages::All,
            tracked: vec![false; k.folios.len()],
            pending: Vec::new(),
        }));
        p
    }

    fn fail(&mut self, hook: &str, why: String) {
        if self.failure.is_none() {
            self.failure = Some(format!("policy hook {hook}: {why}"));
        }
    }

    /// Delivers the kernel's pending events, in the order they happened (the plugin
    /// policy does at each of its calls; public for tests that drive the kernel).
    pub fn deliver(&mut self, k: &mut Kernel) {
        let Some(t) = k.plugin.as_deref_mut() else {
            return;
        };
        if t.pending.is_empty() {
            return;
        }
        let events = std::mem::take(&mut t.pending);
        for ev in &events {
            let (hook, pfn, m) = match *ev {
                Event::Added(p, m) => ("folio_added", p, m),
                Event::Young(p, m) => ("folio_accessed", p, m),
                Event::Removed(p, m) => ("folio_removed", p, m),
            };
            self.call(hook, pfn, m);
            if let Event::Removed(..) = ev {
                self.lists.del(pfn);
            }
        }
        if let Some(t) = k.plugin.as_deref_mut() {
            // Keep the buffer: events arrive all run long.
            if t.pending.is_empty() {
                t.pending = events;
                t.pending.clear();
            }
        }
    }

    /// Calls a folio hook of memcg `m`'s plugin (its cost was charged where the kernel
    /// saw the event).
    fn call(&mut self, hook: &'static str, f: FolioRef, m: MemcgId) {
        let Some(plugin) = self.plugins[m as usize].as_mut() else {
            return;
        };
        let r = match hook {
            "folio_added" => {
                self.stats.folio_added += 1;
                plugin.folio_added(f, &mut self.lists)
            }
            "folio_accessed" => {
                self.stats.folio_accessed += 1;
                plugin.folio_accessed(f, &mut self.lists)
            }
            _ => {
                self.stats.folio_removed += 1;
                plugin.folio_removed(f, &mut self.lists)
            }
        };
        if let Err(e) = r {
            self.fail(hook, e);
        }
    }

    fn governed(&self, m: MemcgId) -> bool {
        self.plugins[m as usize].is_some()
    }

    /// shrink_lruvec() of a governed memcg: the page cache (every list with `pages =
    /// "all"`) through the plugin, in SWAP_CLUSTER_MAX requests up to get_scan_count()'s
    /// budget for those lists, the rest through the classic lists.
    fn shrink_governed(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) {
        let mut nr = get_scan_count(k, lv, sc);
        let all = k.plugin.as_deref().is_some_and(|t| t.all);
        let mut budget = [0u64; 4];
        for l in 0..4 {
            if all || l >= lru::INACTIVE_FILE {
                budget[l] = std::mem::take(&mut nr[l]);
            }
        }
        let mut left: u64 = budget.iter().sum();
        let start = sc.nr_reclaimed;
        while left > 0 && sc.nr_reclaimed - start < sc.nr_to_reclaim {
            let chunk = left.min(SWAP_CLUSTER_MAX);
            left -= chunk;
            let got = self.evict_chunk(k, lv, sc, chunk, &budget);
            sc.nr_reclaimed += got;
        }
        if sc.nr_reclaimed - start >= sc.nr_to_reclaim {
            nr = [0; 4];
        }
        self.inner.shrink_lruvec_nr(k, lv, sc, nr);
        self.deliver(k);
    }

    /// One evict_folios request for `chunk` folios: check and isolate what the plugin
    /// proposes, reclaim it as shrink_inactive_list() would (file, then anon), and ask
    /// the built-in lists the plugin governs for what it did not give, in proportion to
    /// `budget`, get_scan_count()'s scan targets for them. Anon proposals are skipped
    /// when the budget has no anon (no swap left, or swappiness 0 for cgroup reclaim).
    fn evict_chunk(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        chunk: u64,
        budget: &[u64; 4],
    ) -> u64 {
        let cands = self.propose(k, lv, sc, chunk);
        batch::lru_add_drain(k, self);
        let may_anon = budget[lru::INACTIVE_ANON] + budget[lru::ACTIVE_ANON] > 0;
        let (mut reclaimed, file) = self.isolate_and_reclaim(k, lv, sc, &cands, 1, true);
        let anon_cands = cands
            .iter()
            .any(|c| k.folios[c.pfn as usize].lru_type() == 0);
        let mut n = file;
        if anon_cands {
            let (got, anon) = self.isolate_and_reclaim(k, lv, sc, &cands, 0, may_anon);
            reclaimed += got;
            n += anon;
        }
        if n < chunk {
            self.stats.fallbacks += 1;
            self.stats.fallback_pages += chunk - n;
            reclaimed += self.fallback(k, lv, sc, chunk - n, budget);
        }
        self.deliver(k);
        reclaimed
    }

    /// Under the lruvec lock, isolates the candidates of LRU type `t` (1 file, 0 anon;
    /// skipped and counted when `allowed` is false, or on another node, unevictable or
    /// already isolated), and reclaims them; returns what was reclaimed and isolated.
    fn isolate_and_reclaim(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        cands: &[FolioRef],
        t: usize,
        allowed: bool,
    ) -> (u64, u64) {
        k.lock_site = crate::sim::lock::LockSite::Isolate;
        k.lock_lruvec(lv);
        let node = k.lruvecs[lv].node as usize;
        let mut taken = Vec::with_capacity(cands.len());
        let of_type: Vec<Pfn> = cands
            .iter()
            .map(|c| c.pfn)
            .filter(|&pfn| k.folios[pfn as usize].lru_type() == t)
            .collect();
        for pfn in of_type {
            k.spend(k.costs.list_op, Cat::ListOps);
            let f = k.folios[pfn as usize];
            if !allowed
                || k.node_of(pfn) != node
                || f.test(pg::UNEVICTABLE)
                || !k.isolate_lru_flag(pfn)
            {
                self.stats.skipped += 1;
                continue;
            }
            // Off the built-in lists it is also on; the plugin chose it, so it goes to
            // shrink_folio_list as an inactive folio.
            self.inner.del_folio(k, pfn);
            k.folios[pfn as usize].clear(pg::ACTIVE);
            taken.push(pfn);
        }
        let n = taken.len() as u64;
        self.stats.isolated += n;
        (self.inner.reclaim_isolated(k, lv, sc, t, taken, n), n)
    }

    /// The built-in lists the plugin governs take over `short` folios it did not
    /// propose: the file lists alone (`pages = "file"`), or each type's lists for its
    /// share of `budget`.
    fn fallback(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &mut ScanControl,
        short: u64,
        budget: &[u64; 4],
    ) -> u64 {
        let total: u64 = budget.iter().sum();
        let mut reclaimed = 0;
        for t in [1, 0] {
            let share = (budget[2 * t] + budget[2 * t + 1]) * short / total.max(1);
            if share == 0 {
                continue;
            }
            for l in [2 * t + 1, 2 * t] {
                reclaimed += self.inner.shrink_list(k, l, share, lv, sc);
            }
        }
        reclaimed
    }

    /// Asks lruvec `lv`'s plugin for `chunk` folios. A folio not resident in the memcg
    /// (never added, or already removed) fails the run.
    fn propose(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        sc: &ScanControl,
        chunk: u64,
    ) -> Vec<FolioRef> {
        self.deliver(k);
        let m = k.lruvecs[lv].memcg;
        let ctx = EvictCtx {
            memcg: self.paths[m as usize].clone(),
            node: k.lruvecs[lv].node as usize,
            nr_to_reclaim: chunk,
            swappiness: sc.swappiness(k),
            priority: sc.priority,
            reclaimer: Reclaimer::of(sc),
        };
        let mut out = Vec::new();
        if self.failure.is_some() {
            return out;
        }
        let Some(plugin) = self.plugins[m as usize].as_mut() else {
            return out;
        };
        k.spend(k.costs.policy_hook, Cat::Other);
        self.stats.evict_folios += 1;
        if let Err(e) = plugin.evict_folios(&ctx, &mut self.lists, &mut out) {
            self.fail("evict_folios", e);
            out.clear();
        }
        out.truncate(chunk as usize);
        self.stats.proposed += out.len() as u64;
        let tracked = k.plugin.as_deref().map(|t| &t.tracked);
        let resident = |c: &FolioRef| {
            tracked.is_some_and(|t| t.get(c.pfn as usize) == Some(&true))
                && k.folios[c.pfn as usize].memcg == m
                && (c.key == FolioRef::ANY_KEY || fref(&k.folios, c.pfn) == *c)
        };
        if let Some(bad) = out.iter().find(|c| !resident(c)) {
            let why = format!("folio {} is not resident in memcg {}", bad.pfn, ctx.memcg);
            self.fail("evict_folios", why);
            out.clear();
        }
        out
    }
}

impl Policy for Plugin {
    fn add_folio(&mut self, k: &mut Kernel, pfn: Pfn, tail: bool) {
        self.inner.add_folio(k, pfn, tail);
    }

    fn del_folio(&mut self, k: &mut Kernel, pfn: Pfn) {
        self.inner.del_folio(k, pfn);
    }

    /// folio_mark_accessed(): the plugin's `folio_accessed` at once, then the classic
    /// LRU's own marking.
    fn mark_accessed(&mut self, k: &mut Kernel, pfn: Pfn) {
        self.deliver(k);
        let m = k.folios[pfn as usize].memcg;
        let tracked = k.plugin.as_deref().is_some_and(|t| t.tracked[pfn as usize]);
        if tracked && self.governed(m) && self.failure.is_none() {
            k.spend(k.costs.policy_hook, Cat::Other);
            self.call("folio_accessed", fref(&k.folios, pfn), m);
        }
        self.inner.mark_accessed(k, pfn);
    }

    fn prepare_scan_control(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        self.inner.prepare_scan_control(k, node, sc);
    }

    fn shrink_lruvec(&mut self, k: &mut Kernel, lv: usize, sc: &mut ScanControl) {
        self.deliver(k);
        if self.governed(k.lruvecs[lv].memcg) {
            self.shrink_governed(k, lv, sc);
        } else {
            self.inner.shrink_lruvec(k, lv, sc);
            self.deliver(k);
        }
    }

    fn age_node(&mut self, k: &mut Kernel, node: usize, sc: &mut ScanControl) {
        self.inner.age_node(k, node, sc);
    }

    fn check_references(&mut self, k: &mut Kernel, pfn: Pfn, sc: &ScanControl) -> Verdict {
        self.inner.check_references(k, pfn, sc)
    }

    fn eviction(&mut self, k: &mut Kernel, pfn: Pfn, target: MemcgId) -> u64 {
        self.inner.eviction(k, pfn, target)
    }

    fn refault(&mut self, k: &mut Kernel, pfn: Pfn, shadow: u64, in_fault: bool) {
        self.inner.refault(k, pfn, shadow, in_fault);
    }

    fn snapshot_refaults(&mut self, k: &mut Kernel, target: MemcgId, node: usize) {
        self.inner.snapshot_refaults(k, target, node);
    }

    fn lru_gen_write(&mut self, k: &mut Kernel, cmds: &[LruGenCmd]) -> Result<(), &'static str> {
        self.inner.lru_gen_write(k, cmds)
    }

    fn host_bytes(&self) -> u64 {
        self.inner.host_bytes() + self.lists.host_bytes()
    }

    fn check(
        &self,
        k: &Kernel,
        lv: usize,
        seen: &mut dyn FnMut(Pfn, &str) -> Result<(), String>,
    ) -> Result<(), String> {
        self.inner.check(k, lv, seen)
    }

    fn failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    fn plugin_stats(&self) -> Option<PluginStats> {
        Some(self.stats.clone())
    }
}
