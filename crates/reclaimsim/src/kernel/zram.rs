//! zram as a swap device (drivers/block/zram/zram_drv.c, Linux 6.1): each page written
//! is kept compressed (lzo-rle, zram's default) in a zsmalloc pool taken from RAM and
//! charged to no memcg; a same-filled page as its word, with no pool memory; a page that
//! compresses to zsmalloc's huge class size or more, whole (ZRAM_HUGE). `mem_limit`
//! fails a write that would take the pool past it. Built for every zram swap device;
//! the kernel holds none of it otherwise.

use crate::kernel::config::{Compressor, ZramConfig};
use crate::kernel::folio::Pfn;
use crate::kernel::stats::Cat;
use crate::kernel::zsmalloc::{self, ZsPool, PAGE_SIZE};
use crate::kernel::zswap::{codec_cost, folio_content, Content};
use crate::kernel::Kernel;

/// A slot's entry in zram's table (zram->table[index]): its compressed length, or one of
/// these marks.
const NONE: u16 = 0;
const SAME: u16 = u16::MAX;

/// zram's mm_stat and io_stat counters (/sys/block/zram0/{mm,io}_stat in 6.1).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Pages stored (orig_data_size / PAGE_SIZE).
    pub pages_stored: u64,
    /// compr_data_size: the compressed bytes stored (a huge page counts PAGE_SIZE).
    pub compr_data_size: u64,
    /// max_used_pages (mem_used_max / PAGE_SIZE).
    pub max_used_pages: u64,
    pub same_pages: u64,
    pub huge_pages: u64,
    /// io_stat failed_writes: writes that failed (past mem_limit).
    pub failed_writes: u64,
}

#[derive(Clone, Debug)]
pub struct Zram {
    pub cfg: ZramConfig,
    /// Each slot's stored length (NONE, SAME, or the compressed bytes).
    table: Vec<u16>,
    pool: ZsPool,
    /// zs_huge_class_size() of the pool.
    huge_class_size: u32,
    pub stats: Stats,
}

impl Zram {
    pub fn new(cfg: ZramConfig, slots: usize) -> Zram {
        Zram {
            cfg,
            table: vec![NONE; slots],
            pool: ZsPool::default(),
            huge_class_size: zsmalloc::huge_class_size(),
            stats: Stats::default(),
        }
    }

    /// mem_used_total in pages: the pool's (zs_get_total_pages).
    pub fn pool_pages(&self) -> u64 {
        self.pool.pages()
    }

    /// The frames the pool holds (for the invariant checker).
    pub fn frames(&self) -> &[Pfn] {
        &self.pool.frames
    }

    /// Host only: starts loading `slot`'s table entry, which a swap-in will read.
    pub fn prefetch(&self, slot: u32) {
        if let Some(e) = self.table.get(slot as usize) {
            crate::kernel::mm::prefetch(e);
        }
    }

    /// Host bytes of the table.
    pub fn host_bytes(&self) -> usize {
        self.table.capacity() * 2
    }
}

fn zram(k: &mut Kernel) -> &mut Zram {
    (k.swap.as_mut().and_then(|s| s.zram.as_deref_mut())).expect("zram swap device")
}

fn pool(k: &mut Kernel) -> &mut ZsPool {
    &mut zram(k).pool
}

/// Models zram_write_page() (6.1's __zram_bvec_write) of swap-cache folio `pfn` to
/// `slot`, through ->rw_page: the slot's old data is freed (zram_free_page); a
/// same-filled page is kept as its word (same_pages); any other is compressed, stored
/// whole when it compresses to zs_huge_class_size() or more (huge_pages), and allocated
/// from the zsmalloc pool. Past mem_limit (zs_get_total_pages above it) the object is
/// freed again and the write fails with -ENOMEM: false. 6.1's __swap_writepage() then
/// resubmits the page as a bio, which fails the same way (failed_writes counts both);
/// end_swap_bio_write() redirties the folio and clears PG_reclaim, so reclaim keeps it in
/// the swap cache, and a later reclaim writes it again.
pub fn write_page(k: &mut Kernel, pfn: Pfn, slot: u32) -> bool {
    free_page(k, slot);
    let content = folio_content(k, pfn);
    if content == Content::Zero {
        // page_same_filled() reads the whole page.
        k.spend(k.costs.page_zero, Cat::Compression);
        let z = zram(k);
        z.table[slot as usize] = SAME;
        z.stats.same_pages += 1;
        z.stats.pages_stored += 1;
        return true;
    }
    let mut len = content.compressed_len(Compressor::LzoRle);
    let z = zram(k);
    if len >= z.huge_class_size {
        len = PAGE_SIZE;
    }
    let limit = z.cfg.mem_limit;
    for _ in 0..2 {
        k.spend(codec_cost(k, Compressor::LzoRle, true), Cat::Compression);
        if alloc(k, len, limit) {
            let z = zram(k);
            z.table[slot as usize] = len as u16;
            z.stats.pages_stored += 1;
            z.stats.compr_data_size += u64::from(len);
            z.stats.huge_pages += u64::from(len == PAGE_SIZE);
            return true;
        }
        // The ->rw_page write, then the bio's.
        zram(k).stats.failed_writes += 1;
    }
    false
}

/// zs_malloc() of an object of `len` bytes, update_used_max() and the mem_limit check
/// after them: false (and the object freed) when the pool's pages went past `limit` (0:
/// none) or no frame was free.
fn alloc(k: &mut Kernel, len: u32, limit: u64) -> bool {
    let class = u64::from(zsmalloc::class_size(len));
    pool(k).bytes += class;
    let got = zsmalloc::fit_frames(k, pool);
    let z = zram(k);
    z.stats.max_used_pages = z.stats.max_used_pages.max(z.pool.pages());
    let fits = got && (limit == 0 || z.pool.pages() <= limit);
    if !fits {
        pool(k).bytes -= class;
        zsmalloc::fit_frames(k, pool);
    }
    fits
}

/// Models zram_free_page() (6.1): the slot's data goes, from swap_slot_free_notify()
/// (zram_slot_free_notify) when the slot returns to the swap map, or before a new write.
pub fn free_page(k: &mut Kernel, slot: u32) {
    let z = zram(k);
    let len = std::mem::replace(&mut z.table[slot as usize], NONE);
    match len {
        NONE => return,
        SAME => z.stats.same_pages -= 1,
        len => {
            z.stats.compr_data_size -= u64::from(len);
            z.stats.huge_pages -= u64::from(u32::from(len) == PAGE_SIZE);
            z.pool.bytes -= u64::from(zsmalloc::class_size(u32::from(len)));
            zsmalloc::fit_frames(k, pool);
        }
    }
    zram(k).stats.pages_stored -= 1;
}

/// Models zram_read_page() (6.1's __zram_bvec_read) of `slot`: a same-filled (or never
/// written) slot is filled with its word, a huge one copied, any other decompressed.
pub fn read_page(k: &mut Kernel, slot: u32) {
    let len = zram(k).table[slot as usize];
    let ns = match len {
        NONE | SAME => k.costs.page_zero,
        len if u32::from(len) == PAGE_SIZE => k.costs.page_copy,
        _ => codec_cost(k, Compressor::LzoRle, false),
    };
    k.spend(ns, Cat::Compression);
}
