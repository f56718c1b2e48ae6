//! zram as a swap device (drivers/block/zram/zram_drv.c, Linux 6.1): each page written
//! is kept compressed (by `comp_algorithm`, lzo-rle by default) in a zsmalloc pool taken
//! from RAM and charged to no memcg; a same-filled page as its word, with no pool memory;
//! a page that compresses to zsmalloc's huge class size or more, whole (ZRAM_HUGE).
//! `mem_limit` fails a write that would take the pool past it. With a backing device
//! (CONFIG_ZRAM_WRITEBACK), slots marked idle or huge are written back to it and read
//! from it. Built for every zram swap device; the kernel holds none of it otherwise, and
//! no per-slot flag or block unless the scenario marks slots idle or has a backing device.

use crate::kernel::config::{BackingDev, ZramConfig};
use crate::kernel::debug::vm_warn_on;
use crate::kernel::folio::Pfn;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::swap_io::Ssd;
use crate::kernel::zsmalloc::{self, ZsPool, PAGE_SIZE};
use crate::kernel::zswap::{codec_cost, folio_content, Content};
use crate::kernel::Kernel;
use crate::sim::cost::CostTable;

/// A slot's entry in zram's table (zram->table[index]): its compressed length, or one of
/// these marks.
const NONE: u16 = 0;
const SAME: u16 = u16::MAX;
/// ZRAM_WB: the page is on the backing device, at the slot's block.
const WB: u16 = u16::MAX - 1;

/// zram's table of slot entries, one byte a slot on the host: the marks, or an index
/// into the compressed lengths seen so far (few: a length follows from a page's kind
/// of content and the codec). Reads and writes whole entries (`NONE`, `SAME`, `WB` or
/// a length).
#[derive(Clone, Debug)]
struct Table {
    codes: Vec<u8>,
    lens: Vec<u16>,
}

/// `Table`'s codes for the marks; 1..=`MAX_LENS` index `lens` from 1.
const CODE_NONE: u8 = 0;
const CODE_SAME: u8 = u8::MAX;
const CODE_WB: u8 = u8::MAX - 1;
const MAX_LENS: usize = CODE_WB as usize - 1;

impl Table {
    fn new(slots: usize) -> Table {
        Table {
            codes: vec![CODE_NONE; slots],
            lens: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.codes.len()
    }

    fn decode(&self, code: u8) -> u16 {
        match code {
            CODE_NONE => NONE,
            CODE_SAME => SAME,
            CODE_WB => WB,
            c => self.lens[usize::from(c) - 1],
        }
    }

    fn get(&self, slot: usize) -> u16 {
        self.decode(self.codes[slot])
    }

    fn set(&mut self, slot: usize, entry: u16) {
        self.codes[slot] = match entry {
            NONE => CODE_NONE,
            SAME => CODE_SAME,
            WB => CODE_WB,
            len => match self.lens.iter().position(|&l| l == len) {
                Some(i) => i as u8 + 1,
                None => {
                    assert!(self.lens.len() < MAX_LENS, "zram: too many lengths");
                    self.lens.push(len);
                    self.lens.len() as u8
                }
            },
        };
    }

    /// Every entry, in slot order.
    fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        self.codes.iter().map(|&c| self.decode(c))
    }
}

/// A slot's flags (zram->table[index].flags): ZRAM_IDLE and ZRAM_UNDER_WB.
const IDLE: u8 = 1;
const UNDER_WB: u8 = 2;

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

/// bd_stat (/sys/block/zram0/bd_stat in 6.1, in 4 KiB pages) and io_stat's
/// failed_reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct BdStats {
    /// Blocks of the backing device in use.
    pub bd_count: u64,
    /// Pages read from the backing device.
    pub bd_reads: u64,
    /// Pages written to the backing device.
    pub bd_writes: u64,
    /// io_stat failed_reads: ->rw_page reads of a written-back slot, which 6.1 fails
    /// (-EOPNOTSUPP) so that swap_readpage retries them as a bio.
    pub failed_reads: u64,
}

/// The backing device (zram->bdev, zram->bitmap): an SSD and its blocks in use.
#[derive(Clone, Debug)]
pub struct Backing {
    pub ssd: Ssd,
    /// One bit per block; block 0 is never handed out (alloc_block_bdev skips it).
    bitmap: Vec<u64>,
    nr_pages: u64,
    /// The block each written-back slot's page is at (its element), 0 for none.
    block: Vec<u32>,
    pub stats: BdStats,
}

impl Backing {
    fn new(dev: BackingDev, c: &CostTable, slots: usize) -> Backing {
        let nr_pages = dev.pages.min(u64::from(u32::MAX));
        Backing {
            ssd: Ssd::new(dev.profile, c, 0, false),
            bitmap: vec![0; nr_pages.div_ceil(64) as usize],
            nr_pages,
            block: vec![0; slots],
            stats: BdStats::default(),
        }
    }

    /// Models alloc_block_bdev() (6.1): the lowest free block from 1, 0 when none is.
    fn alloc_block(&mut self) -> u32 {
        for (w, word) in self.bitmap.iter_mut().enumerate() {
            // Bit 0 of word 0 stays clear: treat it as taken.
            let taken = if w == 0 { *word | 1 } else { *word };
            if taken == u64::MAX {
                continue;
            }
            let blk = w as u64 * 64 + u64::from(taken.trailing_ones());
            if blk >= self.nr_pages {
                return 0;
            }
            *word |= 1 << (blk % 64);
            self.stats.bd_count += 1;
            return blk as u32;
        }
        0
    }

    /// Models free_block_bdev() (6.1).
    fn free_block(&mut self, blk: u32) {
        let (w, bit) = (blk as usize / 64, 1u64 << (blk % 64));
        // WARN_ON_ONCE(!was_set) in free_block_bdev().
        vm_warn_on!(self.bitmap[w] & bit == 0, "free_block_bdev of a free block");
        self.bitmap[w] &= !bit;
        self.stats.bd_count -= 1;
    }
}

#[derive(Clone, Debug)]
pub struct Zram {
    pub cfg: ZramConfig,
    /// Each slot's stored length (NONE, SAME, WB, or the compressed bytes).
    table: Table,
    /// Each slot's IDLE and UNDER_WB flags: empty until a slot is marked idle or with a
    /// backing device.
    flags: Vec<u8>,
    pool: ZsPool,
    /// zs_huge_class_size() of the pool.
    huge_class_size: u32,
    pub stats: Stats,
    /// The backing device, when configured.
    pub backing: Option<Box<Backing>>,
    /// writeback_limit_enable and writeback_limit (bd_wb_limit, in 4 KiB pages).
    pub wb_limit_enable: bool,
    pub bd_wb_limit: u64,
}

impl Zram {
    pub fn new(cfg: ZramConfig, slots: usize, c: &CostTable) -> Zram {
        let backing = cfg.backing_dev.map(|d| Box::new(Backing::new(d, c, slots)));
        Zram {
            cfg,
            table: Table::new(slots),
            flags: if backing.is_some() {
                vec![0; slots]
            } else {
                Vec::new()
            },
            pool: ZsPool::default(),
            huge_class_size: zsmalloc::huge_class_size(),
            stats: Stats::default(),
            backing,
            wb_limit_enable: false,
            bd_wb_limit: 0,
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
        if let Some(e) = self.table.codes.get(slot as usize) {
            crate::kernel::mm::prefetch(e);
        }
    }

    /// Host bytes of the table.
    pub fn host_bytes(&self) -> usize {
        let b =
            (self.backing.as_ref()).map_or(0, |b| b.bitmap.capacity() * 8 + b.block.capacity() * 4);
        self.table.codes.capacity() + self.table.lens.capacity() * 2 + self.flags.capacity() + b
    }

    /// The backing device's blocks agree with the table: each written-back slot holds
    /// its own block, set in the bitmap, and bd_count counts them (and the blocks a
    /// writeback in progress holds for its next page).
    pub fn check(&self) -> Result<(), String> {
        let Some(b) = self.backing.as_deref() else {
            return Ok(());
        };
        let mut seen = vec![0u64; b.bitmap.len()];
        let mut wb = 0;
        for (slot, len) in self.table.iter().enumerate() {
            let blk = b.block[slot];
            if (len == WB) != (blk != 0) {
                return Err(format!(
                    "zram slot {slot}: ZRAM_WB {} with block {blk}",
                    len == WB
                ));
            }
            if len != WB {
                continue;
            }
            let (w, bit) = (blk as usize / 64, 1u64 << (blk % 64));
            if b.bitmap[w] & bit == 0 || seen[w] & bit != 0 {
                return Err(format!("zram slot {slot}: block {blk} free or shared"));
            }
            seen[w] |= bit;
            wb += 1;
        }
        let set: u64 = b.bitmap.iter().map(|w| u64::from(w.count_ones())).sum();
        if set != b.stats.bd_count || b.stats.bd_count < wb {
            return Err(format!(
                "zram bd_count {} with {set} blocks set and {wb} slots written back",
                b.stats.bd_count
            ));
        }
        Ok(())
    }

    /// zram_allocated() (6.1): the slot holds data (in the pool, same-filled or on the
    /// backing device).
    pub fn allocated(&self, slot: u32) -> bool {
        self.table.get(slot as usize) != NONE
    }

    /// Whether the slot's page is on the backing device (ZRAM_WB).
    pub fn written_back(&self, slot: u32) -> bool {
        self.table.get(slot as usize) == WB
    }

    /// Whether the slot is marked ZRAM_IDLE.
    pub fn idle(&self, slot: u32) -> bool {
        self.flags.get(slot as usize).is_some_and(|f| f & IDLE != 0)
    }

    /// zram_accessed() (6.1): a read or write of the slot clears ZRAM_IDLE.
    fn accessed(&mut self, slot: u32) {
        if let Some(f) = self.flags.get_mut(slot as usize) {
            *f &= !IDLE;
        }
    }
}

/// The zram swap device's state.
pub fn zram(k: &mut Kernel) -> &mut Zram {
    (k.swap.as_mut().and_then(|s| s.zram.as_deref_mut())).expect("zram swap device")
}

fn pool(k: &mut Kernel) -> &mut ZsPool {
    &mut zram(k).pool
}

/// Models zram_write_page() (6.1's __zram_bvec_write) of swap-cache folio `pfn` to
/// `slot`, through ->rw_page: the slot's old data is freed (zram_free_page); a
/// same-filled page is kept as its word (same_pages); any other is compressed with
/// comp_algorithm, stored whole when it compresses to zs_huge_class_size() or more
/// (huge_pages), and allocated from the zsmalloc pool. Past mem_limit (zs_get_total_pages
/// above it) the object is freed again and the write fails with -ENOMEM: false. 6.1's
/// __swap_writepage() then resubmits the page as a bio, which fails the same way
/// (failed_writes counts both); end_swap_bio_write() redirties the folio and clears
/// PG_reclaim, so reclaim keeps it in the swap cache, and a later reclaim writes it
/// again. zram_bvec_rw() marks the slot accessed (not idle) either way.
pub fn write_page(k: &mut Kernel, pfn: Pfn, slot: u32) -> bool {
    free_page(k, slot);
    let content = folio_content(k, pfn);
    if content == Content::Zero {
        // page_same_filled() reads the whole page.
        k.spend(k.costs.page_zero, Cat::Compression);
        let z = zram(k);
        z.table.set(slot as usize, SAME);
        z.stats.same_pages += 1;
        z.stats.pages_stored += 1;
        return true;
    }
    let codec = zram(k).cfg.comp_algorithm;
    let mut len = content.compressed_len(codec);
    let z = zram(k);
    if len >= z.huge_class_size {
        len = PAGE_SIZE;
    }
    let limit = z.cfg.mem_limit;
    for _ in 0..2 {
        k.spend(codec_cost(k, codec, true), Cat::Compression);
        if alloc(k, len, limit) {
            let z = zram(k);
            z.table.set(slot as usize, len as u16);
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
/// (zram_slot_free_notify) when the slot returns to the swap map, before a new write,
/// or when writeback moves it to the backing device. ZRAM_IDLE goes with it; a
/// written-back page's block is freed (free_block_bdev).
pub fn free_page(k: &mut Kernel, slot: u32) {
    let z = zram(k);
    if let Some(f) = z.flags.get_mut(slot as usize) {
        *f &= !IDLE;
        // WARN_ON_ONCE(flags & ~(ZRAM_LOCK | ZRAM_UNDER_WB)) at zram_free_page()'s end.
        vm_warn_on!(*f & !UNDER_WB != 0, "zram_free_page left a flag");
    }
    let len = z.table.get(slot as usize);
    z.table.set(slot as usize, NONE);
    match len {
        NONE => return,
        SAME => z.stats.same_pages -= 1,
        WB => {
            let b = z
                .backing
                .as_deref_mut()
                .expect("ZRAM_WB without a backing device");
            let blk = std::mem::take(&mut b.block[slot as usize]);
            b.free_block(blk);
        }
        len => {
            z.stats.compr_data_size -= u64::from(len);
            z.stats.huge_pages -= u64::from(u32::from(len) == PAGE_SIZE);
            z.pool.bytes -= u64::from(zsmalloc::class_size(u32::from(len)));
            zsmalloc::fit_frames(k, pool);
        }
    }
    zram(k).stats.pages_stored -= 1;
}

/// Models zram_read_page() (6.1's zram_bvec_read through zram_bvec_rw) of `slot`: a
/// same-filled (or never written) slot is filled with its word, a huge one copied, any
/// other decompressed, in the caller's context; a written-back one is read from the
/// backing device (`read_from_bdev`). The slot is accessed: no longer idle. Returns
/// when the page's data is in place.
pub fn read_page(k: &mut Kernel, slot: u32) -> u64 {
    zram(k).accessed(slot);
    let len = zram(k).table.get(slot as usize);
    if len == WB {
        return read_from_bdev(k);
    }
    let ns = decompress_cost(k, len);
    k.spend(ns, Cat::Compression);
    k.cur.clock
}

/// What __zram_bvec_read() spends on a slot in RAM: filling a same-filled page, copying
/// a huge one, decompressing any other with comp_algorithm.
fn decompress_cost(k: &mut Kernel, len: u16) -> u64 {
    match len {
        NONE | SAME => k.costs.page_zero,
        len if u32::from(len) == PAGE_SIZE => k.costs.page_copy,
        _ => comp_cost(k, false),
    }
}

/// The CPU time of comp_algorithm's compression (`compress`) or decompression of one
/// page (zcomp_compress, zcomp_decompress).
pub fn comp_cost(k: &mut Kernel, compress: bool) -> u64 {
    let codec = zram(k).cfg.comp_algorithm;
    codec_cost(k, codec, compress)
}

/// Models 6.1's read of a ZRAM_WB slot in a swap-in: zram_rw_page()'s read fails with
/// -EOPNOTSUPP (a null bio: __zram_bvec_read cannot chain a bio to it), which counts
/// failed_reads; swap_readpage() then submits a bio to zram, whose zram_bvec_read
/// chains a read to the backing device (read_from_bdev_async: bd_reads) and waits for
/// it (the swap-in's synchronous bio polls, then sleeps). Both bios count pgpgin; the
/// block layer's CPU time is charged once, for the device's request. Returns when the
/// read completes; the caller waits for it.
fn read_from_bdev(k: &mut Kernel) -> u64 {
    k.spend(k.costs.block_io, Cat::Io);
    k.vm.add(Vm::Pgpgin, 8);
    let now = k.cur.clock;
    let b = backing(k);
    b.stats.failed_reads += 1;
    b.stats.bd_reads += 1;
    let (start, done) = b.ssd.submit(now, false);
    // blk_mq_get_tag's io_schedule when every tag is in use.
    k.sleep_through(start);
    done
}

fn backing(k: &mut Kernel) -> &mut Backing {
    zram(k)
        .backing
        .as_deref_mut()
        .expect("a zram backing device")
}

/// Models mark_idle() from idle_store("all") (6.1): every allocated slot not under
/// writeback gets ZRAM_IDLE. Each slot visited takes and drops its bit_spin_lock: two
/// LOCK-prefixed bit operations (`lru_flag_atomic` each), charged in one sum after the
/// marks.
pub fn mark_idle(k: &mut Kernel) {
    let z = zram(k);
    if z.flags.is_empty() {
        z.flags = vec![0; z.table.len()];
    }
    for (f, len) in z.flags.iter_mut().zip(z.table.iter()) {
        if len != NONE && *f & UNDER_WB == 0 {
            *f |= IDLE;
        }
    }
    let n = z.table.len() as u64;
    k.spend(n * 2 * k.costs.lru_flag_atomic, Cat::Other);
}

/// The modes writeback_store() accepts in 6.1 (its "page_index=" form aside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritebackMode {
    /// "idle": slots marked ZRAM_IDLE.
    Idle,
    /// "huge": slots stored whole (ZRAM_HUGE).
    Huge,
    /// "huge_idle": slots both.
    HugeIdle,
}

/// Whether writeback_store() in `mode` takes the slot of entry `len` and `flags`: held
/// in the pool (not same-filled, not written back already, not under writeback), and
/// idle and huge as the mode asks.
fn wb_candidate(mode: WritebackMode, len: u16, flags: u8) -> bool {
    if matches!(len, NONE | SAME | WB) || flags & UNDER_WB != 0 {
        return false;
    }
    let idle = flags & IDLE != 0;
    let huge = u32::from(len) == PAGE_SIZE;
    match mode {
        WritebackMode::Idle => idle,
        WritebackMode::Huge => huge,
        WritebackMode::HugeIdle => idle && huge,
    }
}

/// Models writeback_store() (6.1) in `mode`, in the writing task: -ENODEV without a
/// backing device. For each slot in turn (its slot lock and the wb_limit_lock taken and
/// dropped: `lru_flag_atomic` twice and `lock_acquire`): stop with -EIO once
/// writeback_limit_enable is set and writeback_limit is spent, and with -ENOSPC when no
/// block is free for the next page (a block is taken before the slot is looked at and
/// kept for the next one when unused). A candidate (`wb_candidate`) is marked
/// ZRAM_UNDER_WB and ZRAM_IDLE, decompressed (zram_bvec_read), and written
/// synchronously to the block (submit_bio_wait: the task sleeps until the device
/// completes it; bd_writes). Slots are freed, rewritten or read while it sleeps: if the
/// slot is no longer allocated or no longer idle, the page is dropped from writeback;
/// else its pool object is freed and the slot becomes ZRAM_WB at the block
/// (pages_stored unchanged), and the limit drops by one page.
pub fn writeback(k: &mut Kernel, mode: WritebackMode) -> Result<(), &'static str> {
    if zram(k).backing.is_none() {
        return Err("ENODEV");
    }
    let visit = 2 * k.costs.lru_flag_atomic + k.costs.lock_acquire;
    let (mut blk, mut ret) = (0, Ok(()));
    for slot in 0..zram(k).table.len() {
        k.spend(visit, Cat::Other);
        let z = zram(k);
        if z.wb_limit_enable && z.bd_wb_limit == 0 {
            ret = Err("EIO");
            break;
        }
        if blk == 0 {
            blk = backing(k).alloc_block();
            if blk == 0 {
                ret = Err("ENOSPC");
                break;
            }
        }
        let z = zram(k);
        if wb_candidate(mode, z.table.get(slot), z.flags[slot]) && write_one(k, slot as u32, blk) {
            blk = 0;
        }
    }
    if blk != 0 {
        backing(k).free_block(blk);
    }
    ret
}

/// writeback_store()'s work on one candidate slot: true when the slot went to `blk`.
fn write_one(k: &mut Kernel, slot: u32, blk: u32) -> bool {
    let i = slot as usize;
    zram(k).flags[i] |= UNDER_WB | IDLE;
    let len = zram(k).table.get(i);
    let ns = decompress_cost(k, len);
    k.spend(ns, Cat::Compression);
    // submit_bio_wait() of a REQ_OP_WRITE | REQ_SYNC bio: submit_bio counts pgpgout.
    k.spend(k.costs.block_io, Cat::Io);
    k.vm.add(Vm::Pgpgout, 4);
    let now = k.cur.clock;
    let (_, done) = backing(k).ssd.submit(now, true);
    k.sleep_through(done);
    backing(k).stats.bd_writes += 1;
    let z = zram(k);
    if z.table.get(i) == NONE || z.flags[i] & IDLE == 0 {
        z.flags[i] &= !(UNDER_WB | IDLE);
        return false;
    }
    free_page(k, slot);
    let z = zram(k);
    z.flags[i] &= !UNDER_WB;
    z.table.set(i, WB);
    z.stats.pages_stored += 1;
    z.backing.as_deref_mut().unwrap().block[i] = blk;
    if z.wb_limit_enable && z.bd_wb_limit > 0 {
        z.bd_wb_limit -= 1;
    }
    true
}
