//! zswap: a compressed pool in front of the swap device (mm/zswap.c through
//! mm/frontswap.c, Linux 6.1), with its zpool allocators modelled by their packing
//! (mm/zbud.c, mm/z3fold.c, mm/zsmalloc.c). Only built when the scenario configures
//! zswap: without it the kernel holds no zswap state at all.
//!
//! What a page holds decides how it compresses: each process has a `PageContent` mix
//! (its workload's `page_content`), and a page's kind is drawn from it by a hash of its
//! process and address, so no per-page state is kept for it.

use crate::kernel::config::{Compressor, PageContent, Zpool, ZswapConfig};
use crate::kernel::folio::Pfn;
use crate::kernel::memcg::{MemcgId, ROOT};
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::zsmalloc::{self, ZsPool};
use crate::kernel::Kernel;
use smallvec::SmallVec;
use std::collections::{BTreeMap, BTreeSet};

const PAGE_SIZE: u32 = 4096;
/// zbud's and z3fold's allocation unit: PAGE_SIZE >> NCHUNKS_ORDER (6), 64 bytes.
const CHUNK: u32 = 64;
/// The chunks of a zbud or z3fold page left after its header (ZHDR_SIZE_ALIGNED, one
/// chunk): 63.
const PAGE_CHUNKS: u32 = (PAGE_SIZE - CHUNK) / CHUNK;
/// struct zswap_header: the swap entry 6.1 stores in front of each object of an
/// evictable pool (zbud, z3fold), so that eviction can find the entry.
const ZSWAP_HEADER: u32 = 8;
/// zbud_reclaim_page()'s retries, as zswap's shrink path passes them (zpool_shrink ->
/// zbud_zpool_shrink: 8).
const RECLAIM_RETRIES: usize = 8;

/// What a page holds: the kinds of page `reclaimsim calibrate` compresses (codec.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// memcached slab pages of items with 2000-byte values of 'x' (memtier -d 2000).
    Items2000,
    /// memcached slab pages with memtier's default 32-byte values.
    Items32,
    /// Zero-filled (same-filled) pages.
    Zero,
    /// Pseudo-random bytes: incompressible.
    Random,
}

impl Content {
    /// The compressed size in bytes: LZ4's (lz4_flex's block format) mean on calibrate's
    /// corpus of each kind, measured on this project's VM on 2026-11-27 (`reclaimsim
    /// calibrate`: 119, 984, 27 and 4114 bytes). The model uses it for every compressor:
    /// lzo needs the calibrate crate's GPL feature and zstd is not measured, and on these
    /// pages (runs of one byte, or random bytes) the codecs' sizes are close.
    pub fn compressed_len(self, _c: Compressor) -> u32 {
        match self {
            Content::Items2000 => 119,
            Content::Items32 => 984,
            Content::Zero => 27,
            Content::Random => 4114,
        }
    }

    /// The kind of page `index` of process `mm` holds under `mix`: a hash of the two
    /// (splitmix64) picks a percentile, and the mix's shares (in its fields' order)
    /// divide the percentiles.
    pub fn of(mix: PageContent, mm: u32, index: u32) -> Content {
        let mut x = (u64::from(mm) << 32 | u64::from(index)).wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let p = ((x ^ (x >> 31)) % 100) as u32;
        let kinds = [
            (mix.items2000, Content::Items2000),
            (mix.items32, Content::Items32),
            (mix.zero, Content::Zero),
            (mix.random, Content::Random),
        ];
        let mut upto = 0;
        for (share, kind) in kinds {
            upto += share;
            if p < upto {
                return kind;
            }
        }
        Content::Items2000
    }
}

/// Where a slot's entry lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Home {
    /// A same-filled entry: the repeated word only (entry->length 0).
    Same,
    /// An object in zbud or z3fold page `id`.
    Page(u32),
    /// An object of zsmalloc (only its size class is modelled).
    Zs,
}

/// One stored page: zswap_entry's handle and length.
#[derive(Clone, Copy, Debug)]
struct Entry {
    home: Home,
    /// The compressed length (0 for a same-filled page).
    len: u32,
    /// The bytes it takes in its zpool: chunks (zbud, z3fold) or its size class
    /// (zsmalloc).
    footprint: u32,
}

/// A zbud or z3fold page: its frame, the slots of its objects and their chunks.
#[derive(Clone, Debug)]
struct ZPage {
    pfn: Pfn,
    objs: SmallVec<[u32; 3]>,
    chunks: u32,
    /// Its place in the pool's LRU: the latest allocation into it (zbud_alloc and
    /// z3fold_alloc move a page to the LRU's head).
    stamp: u64,
}

/// zswap's debugfs counters (/sys/kernel/debug/zswap in 6.1).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub pool_limit_hit: u64,
    pub reject_reclaim_fail: u64,
    pub reject_alloc_fail: u64,
    pub reject_compress_poor: u64,
    pub written_back_pages: u64,
    pub duplicate_entry: u64,
}

/// The zswap pool and its entries (one zswap_tree for the one swap device).
#[derive(Clone, Debug)]
pub struct Zswap {
    pub cfg: ZswapConfig,
    /// The entry of each swap slot, if stored.
    entries: Vec<Option<Entry>>,
    /// zbud / z3fold pages by id; None: a freed id, reused first.
    pages: Vec<Option<ZPage>>,
    free_ids: Vec<u32>,
    /// Pages that can take another object: (free chunks, id), the smallest fit first
    /// (zbud's unbuddied lists, searched upward from the chunks needed).
    unbuddied: BTreeSet<(u32, u32)>,
    /// The pool's LRU: stamp to page id, oldest first.
    lru: BTreeMap<u64, u32>,
    stamp: u64,
    /// zsmalloc: its objects' size classes and the frames backing them.
    zs: ZsPool,
    /// zswap_pool_reached_full: set when a store found the pool full, cleared when one
    /// finds it below the accept threshold.
    pub reached_full: bool,
    pub stored_pages: u64,
    pub same_filled_pages: u64,
    pub counters: Counters,
    /// Per memcg (the slot's owner): stored pages (memory.stat `zswapped`) and their
    /// compressed bytes (`zswap`).
    pub memcg_pages: Vec<u64>,
    pub memcg_bytes: Vec<u64>,
    /// Per memcg: the pages its own compressed bytes hold charged to its memory counter
    /// (obj_cgroup_charge_zswap), the bytes rounded up to whole pages.
    pub memcg_charged: Vec<u64>,
}

impl Zswap {
    pub fn new(cfg: ZswapConfig, slots: usize, memcgs: usize) -> Zswap {
        Zswap {
            cfg,
            entries: vec![None; slots],
            pages: Vec::new(),
            free_ids: Vec::new(),
            unbuddied: BTreeSet::new(),
            lru: BTreeMap::new(),
            stamp: 0,
            zs: ZsPool::default(),
            reached_full: false,
            stored_pages: 0,
            same_filled_pages: 0,
            counters: Counters::default(),
            memcg_pages: vec![0; memcgs],
            memcg_bytes: vec![0; memcgs],
            memcg_charged: vec![0; memcgs],
        }
    }

    /// The pool's pages (zpool_get_total_size() / PAGE_SIZE).
    pub fn pool_pages(&self) -> u64 {
        match self.cfg.zpool {
            Zpool::Zbud | Zpool::Z3fold => (self.pages.len() - self.free_ids.len()) as u64,
            Zpool::Zsmalloc => self.zs.pages(),
        }
    }

    /// The frames the pool holds (for the invariant checker).
    pub fn frames(&self) -> Vec<Pfn> {
        let pages = self.pages.iter().flatten().map(|p| p.pfn);
        pages.chain(self.zs.frames.iter().copied()).collect()
    }

    pub fn has_entry(&self, slot: u32) -> bool {
        self.entries[slot as usize].is_some()
    }

    /// Host bytes of the entries and pages.
    pub fn host_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Option<Entry>>()
            + self.pages.capacity() * std::mem::size_of::<Option<ZPage>>()
    }

    /// Objects a page of this zpool holds at most.
    fn max_objs(&self) -> usize {
        match self.cfg.zpool {
            Zpool::Zbud => 2,
            _ => 3,
        }
    }
}

/// Models zswap_is_full() (6.1): the pool's pages above max_pool_percent of RAM.
fn is_full(z: &Zswap, totalram: u64) -> bool {
    totalram * u64::from(z.cfg.max_pool_percent) / 100 < z.pool_pages()
}

/// Models zswap_can_accept() (6.1): the pool's pages below accept_threshold_percent of
/// its limit.
fn can_accept(z: &Zswap, totalram: u64) -> bool {
    let limit = totalram * u64::from(z.cfg.max_pool_percent) / 100;
    limit * u64::from(z.cfg.accept_threshold_percent) / 100 > z.pool_pages()
}

fn zswap(k: &mut Kernel) -> &mut Zswap {
    (k.swap.as_mut().and_then(|s| s.zswap.as_deref_mut())).expect("zswap configured")
}

/// The CPU cost of compressing or decompressing one page with `c`.
pub(crate) fn codec_cost(k: &Kernel, c: Compressor, compress: bool) -> u64 {
    let t = &k.costs;
    match (c, compress) {
        // lzo and lzo-rle run lzo1x_1's compressor and lzo1x's decompressor, as zram.
        (Compressor::Lzo | Compressor::LzoRle, true) => t.zram_compress,
        (Compressor::Lzo | Compressor::LzoRle, false) => t.zram_decompress,
        (Compressor::Lz4, true) => t.lz4_compress,
        (Compressor::Lz4, false) => t.lz4_decompress,
        (Compressor::Zstd, true) => t.zstd_compress,
        (Compressor::Zstd, false) => t.zstd_decompress,
    }
}

/// The content of anon folio `pfn`, from its process's mix.
pub(crate) fn folio_content(k: &Kernel, pfn: Pfn) -> Content {
    let f = &k.folios[pfn as usize];
    let mix = k
        .mms
        .get(f.owner as usize)
        .map_or_else(PageContent::default, |m| m.content);
    Content::of(mix, f.owner, f.index)
}

/// Models zswap_frontswap_store() (6.1) of swap-cache folio `pfn` for `slot`, called
/// from swap_writepage() before the device write: false when zswap rejects the page
/// (it then goes to the device). A folio whose memcg or an ancestor is at its
/// memory.zswap.max (obj_cgroup_may_zswap) is refused and, as 6.1 does (5.19's "zswap:
/// memcg accounting", until 6.5), queues the shrink worker, which writes back whatever
/// the pool's LRU holds, another memcg's entries included. A full pool (zswap_is_full) counts pool_limit_hit,
/// sets zswap_pool_reached_full and queues the shrink worker; while reached_full, stores
/// are refused until the pool is below the accept threshold. A same-filled page is kept
/// as its word; any other is compressed and allocated from the zpool, which refuses an
/// object too large for it (reject_compress_poor) or a page it cannot get
/// (reject_alloc_fail). A store over an existing entry drops the old one
/// (duplicate_entry). Counts zswpout (global and in the memcg, memcg_vm_event_stat).
pub fn store(k: &mut Kernel, pfn: Pfn, slot: u32) -> bool {
    let totalram = k.memory_pages();
    if !may_zswap(k, k.folios[pfn as usize].memcg) {
        // 6.1 goes to `shrink`: the pool's shrink worker is queued, the store refused.
        shrink_worker(k);
        return false;
    }
    let z = zswap(k);
    if is_full(z, totalram) {
        z.counters.pool_limit_hit += 1;
        z.reached_full = true;
        shrink_worker(k);
        return false;
    }
    if z.reached_full {
        if !can_accept(z, totalram) {
            return false;
        }
        z.reached_full = false;
    }
    if z.entries[slot as usize].is_some() {
        z.counters.duplicate_entry += 1;
        invalidate(k, slot);
    }
    let content = folio_content(k, pfn);
    let cfg = zswap(k).cfg;
    let entry = if cfg.same_filled_pages && content == Content::Zero {
        // zswap_is_page_same_filled() reads the whole page.
        k.spend(k.costs.page_zero, Cat::Compression);
        Entry {
            home: Home::Same,
            len: 0,
            footprint: 0,
        }
    } else {
        k.spend(codec_cost(k, cfg.compressor, true), Cat::Compression);
        let len = content.compressed_len(cfg.compressor);
        match zpool_malloc(k, len, slot) {
            Ok(e) => e,
            Err(()) => return false,
        }
    };
    insert(k, slot, entry);
    let memcg = k.folios[pfn as usize].memcg;
    k.count(Vm::Zswpout, memcg, 1);
    true
}

/// Models obj_cgroup_may_zswap() (6.1): false when `m` or an ancestor below the root has
/// a memory.zswap.max of 0, or holds (its subtree's MEMCG_ZSWAP_B, the compressed bytes)
/// at least that many pages. The root has no limit; without a limit anywhere the check
/// costs a walk up the tree only.
fn may_zswap(k: &Kernel, m: MemcgId) -> bool {
    let z = k.swap.as_ref().and_then(|s| s.zswap.as_deref()).unwrap();
    (k.memcgs.ancestors(m).take_while(|&c| c != ROOT)).all(|c| {
        let max = k.memcgs.cgs[c as usize].zswap_max;
        if max == u64::MAX {
            return true;
        }
        let bytes: u64 = (k.memcgs.subtree(c).iter())
            .map(|&d| z.memcg_bytes[d as usize])
            .sum();
        max != 0 && bytes / u64::from(PAGE_SIZE) < max
    })
}

/// Records `entry` for `slot`: the stored pages, same-filled pages and the memcg's
/// zswap and zswapped, and charges the compressed bytes (`recharge`).
fn insert(k: &mut Kernel, slot: u32, entry: Entry) {
    let memcg = k.swap.as_ref().unwrap().memcg[slot as usize];
    let z = zswap(k);
    z.entries[slot as usize] = Some(entry);
    z.stored_pages += 1;
    z.same_filled_pages += u64::from(entry.home == Home::Same);
    z.memcg_pages[memcg as usize] += 1;
    z.memcg_bytes[memcg as usize] += u64::from(entry.len);
    recharge(k, memcg);
}

/// Models obj_cgroup_charge_zswap() / obj_cgroup_uncharge_zswap() (6.1) on the memory
/// counter: an entry's compressed length (entry->length: 0 for a same-filled page, and
/// not the zpool's chunks or size class) is charged to the stored page's memcg, so
/// memory.current and memory.max count a memcg's zswap. obj_cgroup_charge() charges
/// whole pages and keeps the rest of a page as a per-CPU byte stock; the model keeps
/// the memcg's charged pages at its bytes rounded up to a page. The store runs under
/// PF_MEMALLOC, so the charge is forced past memory.max (try_charge_memcg's `force`).
/// The root's pages have no objcg: nothing charged.
fn recharge(k: &mut Kernel, m: MemcgId) {
    if m == ROOT {
        return;
    }
    let z = zswap(k);
    let want = z.memcg_bytes[m as usize].div_ceil(u64::from(PAGE_SIZE));
    let have = std::mem::replace(&mut z.memcg_charged[m as usize], want);
    if want > have {
        k.memcgs.charge(m, want - have);
    } else if have > want {
        k.memcgs.uncharge(m, have - want);
    }
}

/// Models zpool_malloc() of an object of `len` bytes (plus zswap's header in an
/// evictable pool): zbud_alloc / z3fold_alloc (-ENOSPC above PAGE_SIZE less a header and
/// a chunk: reject_compress_poor) or zs_malloc (an error above PAGE_SIZE:
/// reject_alloc_fail); a new page when none fits, which fails without a free frame
/// (reject_alloc_fail).
fn zpool_malloc(k: &mut Kernel, len: u32, slot: u32) -> Result<Entry, ()> {
    match zswap(k).cfg.zpool {
        Zpool::Zbud | Zpool::Z3fold => buddy_alloc(k, len, slot),
        Zpool::Zsmalloc => {
            if len > PAGE_SIZE {
                zswap(k).counters.reject_alloc_fail += 1;
                return Err(());
            }
            let class = zsmalloc::class_size(len);
            zswap(k).zs.bytes += u64::from(class);
            if !zsmalloc::fit_frames(k, zs_pool) {
                zswap(k).zs.bytes -= u64::from(class);
                zswap(k).counters.reject_alloc_fail += 1;
                return Err(());
            }
            Ok(Entry {
                home: Home::Zs,
                len,
                footprint: class,
            })
        }
    }
}

/// zbud_alloc() / z3fold_alloc() as their packing: the page with the fewest free chunks
/// that fit and room for another object, else a new page; the page goes to the LRU's
/// head.
fn buddy_alloc(k: &mut Kernel, len: u32, slot: u32) -> Result<Entry, ()> {
    let size = len + ZSWAP_HEADER;
    if size > PAGE_SIZE - 2 * CHUNK {
        zswap(k).counters.reject_compress_poor += 1;
        return Err(());
    }
    let chunks = size.div_ceil(CHUNK);
    let fit = (zswap(k).unbuddied.range((chunks, 0)..).next()).map(|&(_, id)| id);
    let id = match fit {
        Some(id) => id,
        None => new_zpage(k).ok_or(())?,
    };
    let z = zswap(k);
    let max_objs = z.max_objs();
    z.stamp += 1;
    let stamp = z.stamp;
    let p = z.pages[id as usize].as_mut().unwrap();
    z.unbuddied.remove(&(PAGE_CHUNKS - p.chunks, id));
    z.lru.remove(&p.stamp);
    p.chunks += chunks;
    p.objs.push(slot);
    p.stamp = stamp;
    z.lru.insert(stamp, id);
    if p.objs.len() < max_objs && p.chunks < PAGE_CHUNKS {
        z.unbuddied.insert((PAGE_CHUNKS - p.chunks, id));
    }
    Ok(Entry {
        home: Home::Page(id),
        len,
        footprint: chunks,
    })
}

/// A new zbud or z3fold page from the page allocator (alloc_page with zswap's
/// __GFP_NORETRY | __GFP_KSWAPD_RECLAIM: no reclaim of its own; a reclaimer's
/// PF_MEMALLOC lets it below the watermarks). The frame is charged to no memcg.
fn new_zpage(k: &mut Kernel) -> Option<u32> {
    let Some(pfn) = take_pool_frame(k) else {
        zswap(k).counters.reject_alloc_fail += 1;
        return None;
    };
    let z = zswap(k);
    let page = ZPage {
        pfn,
        objs: SmallVec::new(),
        chunks: 0,
        stamp: 0,
    };
    Some(match z.free_ids.pop() {
        Some(id) => {
            z.pages[id as usize] = Some(page);
            id
        }
        None => {
            z.pages.push(Some(page));
            (z.pages.len() - 1) as u32
        }
    })
}

/// A frame for the pool, from the running task's preferred node (its CPU's, unless its
/// nodemask leaves that out), charged to no memcg (zpool's alloc_page has no
/// __GFP_ACCOUNT).
fn take_pool_frame(k: &mut Kernel) -> Option<Pfn> {
    let node = crate::kernel::fault::preferred_node(k);
    k.take_free_page(node)
}

fn zs_pool(k: &mut Kernel) -> &mut ZsPool {
    &mut zswap(k).zs
}

/// Models zswap_frontswap_load() (6.1) of `slot`, called from swap_readpage() before
/// the device read: true if zswap held the page, which it then decompresses (or fills
/// with its word, memset_l); counts zswpin. 6.1's load keeps the entry: it goes when the
/// slot is freed (`invalidate`).
pub fn load(k: &mut Kernel, slot: u32, memcg: MemcgId) -> bool {
    let Some(z) = k.swap.as_ref().and_then(|s| s.zswap.as_deref()) else {
        return false;
    };
    let Some(e) = z.entries[slot as usize] else {
        return false;
    };
    let ns = match e.home {
        Home::Same => k.costs.page_zero,
        Home::Page(_) | Home::Zs => codec_cost(k, z.cfg.compressor, false),
    };
    k.spend(ns, Cat::Compression);
    k.count(Vm::Zswpin, memcg, 1);
    true
}

/// Models zswap_frontswap_invalidate_page() (6.1): the entry of a slot whose last
/// reference went (swap_range_free, when the slot returns to the swap map) is freed,
/// and its zpool object with it (zpool_free; an emptied page goes back to the page
/// allocator).
pub fn invalidate(k: &mut Kernel, slot: u32) {
    let memcg = k.swap.as_ref().unwrap().memcg[slot as usize];
    let z = zswap(k);
    let Some(e) = z.entries[slot as usize].take() else {
        return;
    };
    z.stored_pages -= 1;
    z.same_filled_pages -= u64::from(e.home == Home::Same);
    z.memcg_pages[memcg as usize] -= 1;
    z.memcg_bytes[memcg as usize] -= u64::from(e.len);
    recharge(k, memcg);
    let z = zswap(k);
    match e.home {
        Home::Same => {}
        Home::Zs => {
            z.zs.bytes -= u64::from(e.footprint);
            zsmalloc::fit_frames(k, zs_pool);
        }
        Home::Page(id) => buddy_free(k, id, slot, e.footprint),
    }
}

/// zbud_free() / z3fold_free(): the object leaves its page; an empty page is freed.
fn buddy_free(k: &mut Kernel, id: u32, slot: u32, chunks: u32) {
    let z = zswap(k);
    let max_objs = z.max_objs();
    let p = z.pages[id as usize].as_mut().unwrap();
    z.unbuddied.remove(&(PAGE_CHUNKS - p.chunks, id));
    p.objs.retain(|s| *s != slot);
    p.chunks -= chunks;
    if !p.objs.is_empty() {
        if p.objs.len() < max_objs {
            z.unbuddied.insert((PAGE_CHUNKS - p.chunks, id));
        }
        return;
    }
    z.lru.remove(&p.stamp);
    let pfn = p.pfn;
    z.pages[id as usize] = None;
    z.free_ids.push(id);
    k.free_unaccounted(pfn);
}

/// Models shrink_worker() (6.1): one zpool_shrink() of one page. zsmalloc has no shrink
/// in 6.1 (reject_reclaim_fail). zbud_reclaim_page() / z3fold_reclaim_page(): from the
/// LRU's tail, evict every object of a page (zswap_writeback_entry); a page that keeps
/// one goes back to the LRU's head, and the next tail is tried, up to 8 times. The
/// kernel runs the worker on an unbound kworker; the model runs it at once in the task
/// whose store found the pool full, which its CPU time is charged to.
fn shrink_worker(k: &mut Kernel) {
    if zswap(k).cfg.zpool == Zpool::Zsmalloc {
        zswap(k).counters.reject_reclaim_fail += 1;
        return;
    }
    for _ in 0..RECLAIM_RETRIES {
        let z = zswap(k);
        let Some((&stamp, &id)) = z.lru.iter().next() else {
            break;
        };
        let objs = z.pages[id as usize].as_ref().unwrap().objs.clone();
        for slot in objs {
            writeback_entry(k, slot);
        }
        let z = zswap(k);
        if z.pages[id as usize]
            .as_ref()
            .is_none_or(|p| p.stamp != stamp)
        {
            return; // the page was freed (its id may already be reused)
        }
        z.stamp += 1;
        let new = z.stamp;
        z.lru.remove(&stamp);
        z.lru.insert(new, id);
        z.pages[id as usize].as_mut().unwrap().stamp = new;
    }
    zswap(k).counters.reject_reclaim_fail += 1;
}

/// Models zswap_writeback_entry() (6.1) of `slot`'s entry: when no swap-cache folio holds
/// the slot (-EEXIST otherwise, and the entry stays) and the slot is still in use (a
/// slot freed into a CPU's return cache keeps its entry until it goes back to the swap
/// map, but __read_swap_cache_async finds no swap count: the entry stays), decompress
/// into a new page, write
/// it to the device (__swap_writepage: pswpout) and free the entry; counts
/// written_back_pages (6.8's zswpwb). The page 6.1 allocates goes through the swap cache
/// and the LRU until reclaim frees it; the model charges its allocation and free only.
fn writeback_entry(k: &mut Kernel, slot: u32) {
    let sw = k.swap.as_ref().unwrap();
    let s = sw.slots[slot as usize];
    if s.as_cached().is_some() || s.is_free() {
        return;
    }
    let memcg = sw.memcg[slot as usize];
    let device = sw.device;
    let c = zswap(k).cfg.compressor;
    k.spend(
        k.costs.page_alloc + codec_cost(k, c, false),
        Cat::Compression,
    );
    crate::kernel::swap::device_write_cost(k, device);
    k.spend(k.costs.page_free, Cat::Other);
    k.count(Vm::Pswpout, memcg, 1);
    k.count(Vm::Zswpwb, memcg, 1);
    zswap(k).counters.written_back_pages += 1;
    invalidate(k, slot);
}
