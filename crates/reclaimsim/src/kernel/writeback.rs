//! Dirty page cache and its writeback: dirtying through shared mappings, NR_FILE_DIRTY /
//! NR_WRITEBACK accounting, the flusher (one `bdi_writeback` for the machine's file
//! system), writeback of a page with its asynchronous completion, and the rotation of
//! folios reclaim wanted once their write completes (mm/page-writeback.c,
//! fs/fs-writeback.c, mm/filemap.c, mm/swap.c).
//!
//! The file system is ext4 on a brd ramdisk, as the seeds' scripts used: a write copies
//! the page into the ramdisk in the submitter's context (`page_copy`), and the page's
//! PG_writeback ends `writeback_latency` later, when ext4's end_io work item runs
//! (`folio_end_writeback`). Completions run on the CPU that submitted the write, in
//! interrupt-like context: they cost CPU time and may flush that CPU's `lru_move_tail`
//! batch (taking lru locks) but do not displace the task running there.
//!
//! Not modelled: balance_dirty_pages' throttling of dirtiers (only its kick of
//! background writeback), per-memcg writeback domains and cgroup writeback (one wb for
//! the device), the write bandwidth estimator (writeback_chunk_size uses the initial
//! 100 MB/s), and ext4's refusal to write delayed-allocation pages from reclaim
//! (reclaim's pageout writes, docs/model/writeback-throttles.md).

use crate::kernel::batch;
use crate::kernel::config::KernelConfig;
use crate::kernel::folio::lru::{ACTIVE_FILE, INACTIVE_FILE};
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::rmap;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::{Exec, Kernel};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// MIN_WRITEBACK_PAGES: writeback chunks are rounded to 4 MiB.
pub const MIN_WRITEBACK_PAGES: i64 = 1024;
/// DIRTY_SCOPE: a chunk is at most an eighth of the dirty limit.
const DIRTY_SCOPE: i64 = 8;
/// wb->avg_write_bandwidth / 2 at its initial value (INIT_BW, 100 MB/s), in pages.
const INIT_BW_HALF_PAGES: i64 = (100 << 20) / 4096 / 2;
/// Pages write_cache_pages looks up per tag lookup (a folio batch).
const WRITE_BATCH: usize = 15;
/// balance_dirty_pages_ratelimited() looks at the limits once per this many dirtied
/// pages (the initial current->nr_dirtied_pause).
const RATELIMIT_PAGES: u32 = 32;

/// Which writeback list of the wb an inode is on (i_io_list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum IoList {
    /// Clean: on no list (attached).
    #[default]
    None,
    Dirty,
    Io,
    MoreIo,
}

/// Writeback state of one file (struct inode's dirtied_when, i_io_list and the
/// mapping's writeback_index and dirty tag count).
#[derive(Clone, Debug, Default)]
pub struct Inode {
    /// Dirty pages (PAGECACHE_TAG_DIRTY count).
    pub nr_dirty: u64,
    /// When the inode went from clean to dirty (or was redirtied to the tail).
    pub dirtied_when: u64,
    /// mapping->writeback_index: where the next cyclic writeback starts.
    pub writeback_index: u64,
    list: IoList,
    /// Bumped on every list move, so stale queue entries are skipped.
    gen: u32,
}

/// Why a writeback work item runs (enum wb_reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WbReason {
    /// wakeup_flusher_threads(WB_REASON_VMSCAN) from reclaim: write everything dirty.
    Vmscan,
    /// wb_check_old_data_flush(): inodes dirtied more than dirty_expire ago.
    Periodic,
    /// wb_check_background_flush(): above the background threshold.
    Background,
}

/// struct wb_writeback_work, and the loop state of wb_writeback() running it.
#[derive(Clone, Debug)]
struct Work {
    reason: WbReason,
    nr_pages: i64,
    /// Inodes dirtied after this are not queued (queue_io's dirtied_before).
    dirtied_before: u64,
    /// Pages written since the last queue_io.
    progress: bool,
    queued: bool,
}

/// The inode being written (writeback_sb_inodes' current inode).
#[derive(Clone, Debug)]
struct Cur {
    file: u32,
    /// wbc.nr_to_write left of this inode's chunk.
    nr_to_write: i64,
    /// Next page index to look at.
    pos: u64,
}

/// The flusher's scheduling state (the wb's delayed work).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FlusherState {
    /// Not queued: sleeps until woken or its timer fires.
    #[default]
    Idle,
    /// Inside wb_workfn.
    Running,
}

/// What the engine should do with the flusher after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlusherNext {
    Run,
    SleepUntil(u64),
    Sleep,
}

/// A pending I/O completion: (time, sequence, folio, CPU).
type Completion = Reverse<(u64, u64, Pfn, u32)>;

/// The machine's dirty-page and writeback state (one struct bdi_writeback) plus the
/// NR_FILE_DIRTY / NR_WRITEBACK gauges.
#[derive(Clone, Debug)]
pub struct Writeback {
    /// NR_FILE_DIRTY (vmstat `nr_dirty`).
    pub nr_dirty: u64,
    /// NR_WRITEBACK (vmstat `nr_writeback`).
    pub nr_writeback: u64,
    /// memory.stat `file_dirty` / `file_writeback` of each memcg alone, in pages.
    pub memcg_dirty: Vec<u64>,
    pub memcg_writeback: Vec<u64>,
    /// Per file id.
    pub inodes: Vec<Inode>,
    b_dirty: VecDeque<(u32, u32)>,
    b_io: VecDeque<(u32, u32)>,
    b_more_io: VecDeque<(u32, u32)>,
    /// Inodes on one of the lists (wb_has_dirty_io()).
    nr_listed: usize,
    /// WB_start_all: reclaim asked for everything to be written.
    start_all: bool,
    last_old_flush: u64,
    pub state: FlusherState,
    /// Next stage of the current wb_do_writeback() pass (start_all, kupdate,
    /// background); None between passes.
    stage: Option<u8>,
    /// Woken while running: run another pass (mod_delayed_work(dwork, 0)).
    rerun: bool,
    work: Option<Work>,
    cur: Option<Cur>,
    /// When the flusher is due to run next (its timer or a wakeup), if at all.
    scheduled: Option<u64>,
    /// A new, earlier run time the engine has not picked up yet.
    pending: Option<u64>,
    completions: BinaryHeap<Completion>,
    seq: u64,
    ratelimit: u32,
    dirty_background_ratio: u64,
    dirty_ratio: u64,
    interval: u64,
    expire: u64,
}

impl Writeback {
    pub fn new(cfg: &KernelConfig, nr_memcgs: usize) -> Self {
        Writeback {
            nr_dirty: 0,
            nr_writeback: 0,
            memcg_dirty: vec![0; nr_memcgs],
            memcg_writeback: vec![0; nr_memcgs],
            inodes: Vec::new(),
            b_dirty: VecDeque::new(),
            b_io: VecDeque::new(),
            b_more_io: VecDeque::new(),
            nr_listed: 0,
            start_all: false,
            last_old_flush: 0,
            state: FlusherState::Idle,
            stage: None,
            rerun: false,
            work: None,
            cur: None,
            scheduled: None,
            pending: None,
            completions: BinaryHeap::new(),
            seq: 0,
            ratelimit: 0,
            dirty_background_ratio: cfg.dirty_background_ratio as u64,
            dirty_ratio: cfg.dirty_ratio as u64,
            interval: cfg.dirty_writeback_interval.0,
            expire: cfg.dirty_expire_interval.0,
        }
    }

    fn inode(&mut self, file: u32) -> &mut Inode {
        let i = file as usize;
        if i >= self.inodes.len() {
            self.inodes.resize(i + 1, Inode::default());
        }
        &mut self.inodes[i]
    }

    /// Moves an inode to a list's tail (inode_io_list_move_locked) or off the lists.
    /// Returns whether the wb had no dirty inodes before (wb_io_lists_populated()).
    fn move_to(&mut self, file: u32, list: IoList) -> bool {
        let was_empty = self.nr_listed == 0;
        let ino = self.inode(file);
        let before = ino.list;
        ino.list = list;
        ino.gen = ino.gen.wrapping_add(1);
        let entry = (file, ino.gen);
        match list {
            IoList::None => {}
            IoList::Dirty => self.b_dirty.push_back(entry),
            IoList::Io => self.b_io.push_back(entry),
            IoList::MoreIo => self.b_more_io.push_back(entry),
        }
        match (before, list) {
            (IoList::None, IoList::None) => {}
            (IoList::None, _) => self.nr_listed += 1,
            (_, IoList::None) => self.nr_listed -= 1,
            _ => {}
        }
        was_empty && list != IoList::None
    }

    fn valid(&self, (file, gen): (u32, u32), list: IoList) -> bool {
        let ino = &self.inodes[file as usize];
        ino.gen == gen && ino.list == list
    }

    /// Whether a file's inode is on one of the writeback lists (or being written).
    pub fn is_listed(&self, file: u32) -> bool {
        self.inodes
            .get(file as usize)
            .is_some_and(|i| i.list != IoList::None)
    }

    /// wb_has_dirty_io(): some inode is on a writeback list.
    pub fn has_dirty_io(&self) -> bool {
        self.nr_listed > 0
    }

    /// Writes submitted and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.completions.len()
    }

    /// The frames whose write is in flight (for the invariant checker).
    pub fn in_flight_folios(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.completions.iter().map(|Reverse((_, _, pfn, _))| *pfn)
    }

    /// The time of the earliest pending completion.
    pub fn next_completion(&self) -> Option<u64> {
        self.completions.peek().map(|Reverse((t, _, _, _))| *t)
    }

    /// A run time for the flusher the engine must schedule (taken once).
    pub fn take_pending(&mut self) -> Option<u64> {
        self.pending.take()
    }

    /// Stop the flusher for good (the engine parks it when the run is over).
    pub fn park(&mut self) {
        self.state = FlusherState::Idle;
        self.scheduled = None;
        self.pending = None;
    }

    /// Models wb_wakeup(): run the flusher now, or once more if it is running.
    fn wakeup(&mut self, now: u64) {
        if self.state == FlusherState::Running {
            self.rerun = true;
        } else if self.scheduled.is_none_or(|s| s > now) {
            self.scheduled = Some(now);
            self.pending = Some(now);
        }
    }

    /// Models wb_wakeup_delayed(): run the flusher one dirty_writeback_interval from now
    /// (never, when the interval is 0: periodic writeback is off).
    fn wakeup_delayed(&mut self, now: u64) {
        if self.interval > 0 && self.state == FlusherState::Idle && self.scheduled.is_none() {
            let t = now + self.interval;
            self.scheduled = Some(t);
            self.pending = Some(t);
        }
    }
}

/// Models folio_mark_dirty() of a page-cache folio (filemap_dirty_folio:
/// __folio_mark_dirty, folio_account_dirtied, __mark_inode_dirty): sets PG_dirty,
/// counts NR_FILE_DIRTY in the node and memcg, and puts a clean inode on the wb's dirty
/// list, arming the flusher's periodic timer if it had nothing to do. Anon and swap
/// cache folios are only flagged (swap's address space does no dirty accounting).
/// Returns whether the folio was clean before.
pub fn folio_mark_dirty(k: &mut Kernel, pfn: Pfn) -> bool {
    let f = &mut k.folios[pfn as usize];
    if f.test(pg::DIRTY) {
        return false;
    }
    f.set(pg::DIRTY);
    if f.test(pg::ANON) {
        return true;
    }
    let (file, memcg) = (f.owner, f.memcg);
    k.spend(k.costs.mark_dirty, Cat::Other);
    k.count(Vm::NrDirtied, memcg, 1);
    let now = k.cur.clock;
    let wb = &mut k.wb;
    wb.nr_dirty += 1;
    wb.memcg_dirty[memcg as usize] += 1;
    let ino = wb.inode(file);
    ino.nr_dirty += 1;
    if ino.list == IoList::None && wb.cur.as_ref().is_none_or(|c| c.file != file) {
        wb.inodes[file as usize].dirtied_when = now;
        if wb.move_to(file, IoList::Dirty) {
            wb.wakeup_delayed(now);
        }
    }
    true
}

/// Models folio_account_cleaned() / the NR_FILE_DIRTY side of folio_clear_dirty_for_io().
fn account_cleaned(k: &mut Kernel, file: u32, memcg: MemcgId) {
    let wb = &mut k.wb;
    wb.nr_dirty -= 1;
    wb.memcg_dirty[memcg as usize] -= 1;
    wb.inodes[file as usize].nr_dirty -= 1;
}

/// Models folio_mkclean(): write-protects and cleans every PTE mapping the folio, so the
/// next write to it takes a write-protect fault and dirties the folio again. Returns
/// whether a PTE was dirty.
pub fn folio_mkclean(k: &mut Kernel, pfn: Pfn) -> bool {
    if !k.folios[pfn as usize].mapped() {
        return false;
    }
    k.spend(k.costs.rmap_lookup, Cat::RmapWalk);
    let mut dirty = false;
    for (mm, v, i) in rmap::mappings(k, pfn) {
        k.spend(k.costs.pvmw_descent, Cat::RmapWalk);
        let pte = &mut k.mms[mm as usize].vmas[v].ptes[i];
        if pte.pfn() == Some(pfn) && pte.dirty() {
            pte.mkclean();
            dirty = true;
            k.spend(k.costs.pte_clear_young, Cat::RmapWalk);
        }
    }
    dirty
}

/// Models folio_clear_dirty_for_io(): write-protect the mappings (folio_mkclean), then
/// clear PG_dirty and its accounting. Returns whether the folio was dirty.
pub fn folio_clear_dirty_for_io(k: &mut Kernel, pfn: Pfn) -> bool {
    folio_mkclean(k, pfn);
    let f = &mut k.folios[pfn as usize];
    if !f.test_clear(pg::DIRTY) {
        return false;
    }
    if !f.test(pg::ANON) {
        let (file, memcg) = (f.owner, f.memcg);
        account_cleaned(k, file, memcg);
    }
    true
}

/// Models folio_start_writeback() and the ext4/brd submission of one page: the block's
/// allocation, PG_writeback and NR_WRITEBACK, the copy into the ramdisk, and the
/// completion queued `writeback_latency` later on this CPU.
fn submit_write(k: &mut Kernel, pfn: Pfn) {
    debug_assert!(!k.folios[pfn as usize].test(pg::ANON));
    // ext4 allocates the page's block at writeback (delayed allocation): a hole of a
    // sparse file is a hole no more.
    let (file, index) = (k.folios[pfn as usize].owner, k.folios[pfn as usize].index);
    k.files[file as usize].mark_written(u64::from(index));
    folio_start_writeback(k, pfn);
    k.spend(k.costs.writeback_page, Cat::Io);
    k.spend(k.costs.page_copy, Cat::Io);
    k.vm.add(Vm::Pgpgout, 4);
    let at = k.cur.clock + k.costs.writeback_latency;
    queue_completion(k, pfn, at);
}

/// Models folio_start_writeback(): PG_writeback and NR_WRITEBACK (anon folios count
/// there too, and in memory.stat's `file_writeback`, as in 6.1).
fn folio_start_writeback(k: &mut Kernel, pfn: Pfn) {
    let f = &mut k.folios[pfn as usize];
    debug_assert!(!f.test(pg::WRITEBACK));
    f.set(pg::WRITEBACK);
    let memcg = f.memcg;
    k.wb.nr_writeback += 1;
    k.wb.memcg_writeback[memcg as usize] += 1;
}

/// The completion of `pfn`'s write at `at`, on this CPU.
fn queue_completion(k: &mut Kernel, pfn: Pfn, at: u64) {
    let wb = &mut k.wb;
    wb.seq += 1;
    wb.completions.push(Reverse((at, wb.seq, pfn, k.cur.cpu)));
}

/// A swap-cache folio's write to an SSD (`swap_io::write_folio`): under writeback until
/// end_swap_bio_write, at `done` on this CPU, runs folio_end_writeback (which rotates
/// the folio to the inactive tail if reclaim set PG_reclaim).
pub fn start_swap_writeback(k: &mut Kernel, pfn: Pfn, done: u64) {
    debug_assert!(k.folios[pfn as usize].test(pg::SWAPCACHE));
    folio_start_writeback(k, pfn);
    queue_completion(k, pfn, done);
}

/// Models folio_end_writeback(): a folio reclaim marked PG_reclaim is first rotated to
/// the tail of its inactive list (folio_rotate_reclaimable, through this CPU's
/// lru_move_tail batch), then PG_writeback and NR_WRITEBACK are cleared.
pub fn folio_end_writeback(k: &mut Kernel, p: &mut dyn Policy, pfn: Pfn) {
    k.spend(k.costs.end_writeback, Cat::Io);
    if k.folios[pfn as usize].test_clear(pg::RECLAIM) {
        batch::folio_rotate_reclaimable(k, p, pfn);
    }
    let f = &mut k.folios[pfn as usize];
    debug_assert!(f.test(pg::WRITEBACK));
    f.clear(pg::WRITEBACK);
    let memcg = f.memcg;
    k.wb.nr_writeback -= 1;
    k.wb.memcg_writeback[memcg as usize] -= 1;
    k.count(Vm::NrWritten, memcg, 1);
    let node = k.node_of(pfn);
    crate::kernel::throttle::acct_reclaim_writeback(k, node);
}

/// Runs every I/O completion due at or before `t`, each at its own time on the CPU that
/// submitted the write (the bio end_io / ext4 end_io work).
pub fn complete_until(k: &mut Kernel, p: &mut dyn Policy, t: u64) {
    while let Some(&Reverse((at, _, pfn, cpu))) = k.wb.completions.peek() {
        if at > t {
            break;
        }
        k.wb.completions.pop();
        let saved = std::mem::replace(&mut k.cur, Exec::new(at, cpu, false, None));
        folio_end_writeback(k, p, pfn);
        k.cur = saved;
    }
}

/// Models pageout() of a dirty page-cache folio by kswapd (6.1 shrink_folio_list): PG_reclaim
/// is set and the page written asynchronously; the folio stays isolated-then-kept with
/// PG_writeback, and its completion rotates it to the inactive tail.
pub fn pageout_file(k: &mut Kernel, pfn: Pfn) {
    k.folios[pfn as usize].set(pg::RECLAIM);
    if folio_clear_dirty_for_io(k, pfn) {
        submit_write(k, pfn);
    }
}

/// Models wakeup_flusher_threads(WB_REASON_VMSCAN) -> wb_start_writeback(): ask the
/// flusher to write everything dirty, unless it has no dirty inodes or was asked already.
pub fn wakeup_flusher_threads(k: &mut Kernel) {
    let now = k.cur.clock;
    let wb = &mut k.wb;
    if !wb.has_dirty_io() || wb.start_all {
        return;
    }
    wb.start_all = true;
    wb.wakeup(now);
}

/// global_dirtyable_memory() and domain_dirty_limits(): the background threshold and the
/// dirty limit, in pages, from free pages above the reserves plus the file LRU pages.
pub fn dirty_limits(k: &Kernel) -> (u64, u64) {
    let free = k.free_pages();
    let reserve = k.totalreserve_pages();
    let lru = k.lru_pages();
    let file = lru[INACTIVE_FILE] + lru[ACTIVE_FILE];
    let avail = free - free.min(reserve) + file + 1;
    let thresh = avail * k.wb.dirty_ratio / 100;
    let mut bg = avail * k.wb.dirty_background_ratio / 100;
    if bg >= thresh {
        bg = thresh / 2;
    }
    (bg, thresh)
}

/// Models wb_over_bg_thresh() for the global domain.
fn over_bg_thresh(k: &Kernel) -> bool {
    k.wb.nr_dirty > dirty_limits(k).0
}

/// Models balance_dirty_pages_ratelimited() and balance_dirty_pages() for one writeback
/// device (no memcg domain, no strictlimit), every RATELIMIT_PAGES dirtied pages. At or
/// below the freerun point (halfway between the background threshold and the limit) the
/// dirtier runs free. Above it, background writeback is started if the flusher is idle,
/// and the dirtier is paced at task_ratelimit = write bandwidth * pos_ratio pages/s,
/// with pos_ratio = 1 + ((setpoint - dirty) / (limit - setpoint))^3 (the global control
/// line of wb_position_ratio; the per-wb line is 1 for one device): it sleeps
/// RATELIMIT_PAGES / task_ratelimit, at most MAX_PAUSE, and at the limit (pos_ratio 0)
/// sleeps MAX_PAUSE until dirty pages fall below it. The write bandwidth is the
/// flusher's CPU-bound rate here, standing for wb->avg_write_bandwidth, and the dirty
/// ratelimit is taken equal to it (one dirtier).
pub fn balance_dirty_pages_ratelimited(k: &mut Kernel) {
    k.wb.ratelimit += 1;
    if k.wb.ratelimit < RATELIMIT_PAGES {
        return;
    }
    k.wb.ratelimit = 0;
    loop {
        // The dirty and writeback counts are every CPU's.
        k.sync();
        let (bg, limit) = dirty_limits(k);
        let dirty = k.wb.nr_dirty + k.wb.nr_writeback;
        let freerun = (bg + limit) / 2;
        if dirty <= freerun {
            return;
        }
        if k.wb.state != FlusherState::Running {
            let now = k.cur.clock;
            k.wb.wakeup(now);
        }
        let setpoint = (freerun + limit) / 2;
        let pos_ratio = if dirty >= limit {
            0.0
        } else {
            let x = (setpoint as f64 - dirty as f64) / (limit - setpoint).max(1) as f64;
            (1.0 + x * x * x).clamp(0.0, 2.0)
        };
        let ns_per_page = (k.costs.writeback_page + k.costs.page_copy).max(1) as f64;
        let task_ratelimit = pos_ratio / ns_per_page; // pages per ns
        let pause = if task_ratelimit > 0.0 {
            (f64::from(RATELIMIT_PAGES) / task_ratelimit) as u64
        } else {
            MAX_PAUSE_NS
        }
        .min(MAX_PAUSE_NS);
        let until = k.cur.clock + pause;
        crate::kernel::throttle::sleep(k, crate::kernel::throttle::Sleep::Dirty, until);
        if pos_ratio > 0.0 {
            return;
        }
    }
}

/// MAX_PAUSE: the longest balance_dirty_pages() sleep (HZ/5).
const MAX_PAUSE_NS: u64 = 200_000_000;
/// reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)'s timeout (HZ/10).
const THROTTLE_WRITEBACK_NS: u64 = 100_000_000;

/// Reclaim made no progress: if pages of the reclaim scope (a memcg, or the machine)
/// are dirty or under writeback, the allocating task sleeps until SWAP_CLUSTER_MAX of
/// the writes in flight complete (acct_reclaim_writeback() wakes it), or for
/// reclaim_throttle's 100 ms timeout when none is in flight, and then retries, instead
/// of counting the attempt towards OOM. This stands for reclaim_throttle(WRITEBACK) and
/// the pre-5.16 congestion_wait() in should_reclaim_retry(). Returns the wake-up time.
pub fn throttle_on_writeback(k: &mut Kernel, memcg: Option<MemcgId>) -> Option<u64> {
    let pending = match memcg {
        None => k.wb.nr_dirty + k.wb.nr_writeback,
        Some(m) => k
            .memcgs
            .subtree(m)
            .iter()
            .map(|&c| k.wb.memcg_dirty[c as usize] + k.wb.memcg_writeback[c as usize])
            .sum(),
    };
    if pending == 0 {
        return None;
    }
    let now = k.cur.clock;
    let mut times: Vec<u64> = k.wb.completions.iter().map(|Reverse((t, ..))| *t).collect();
    let until = if times.is_empty() {
        now + THROTTLE_WRITEBACK_NS
    } else {
        let n = times
            .len()
            .min(crate::kernel::vmscan::SWAP_CLUSTER_MAX as usize);
        let (_, nth, _) = times.select_nth_unstable(n - 1);
        (*nth).clamp(now + 1, now + THROTTLE_WRITEBACK_NS)
    };
    Some(until)
}

/// One step of the flusher (wb_workfn): continue the current wb_do_writeback() pass,
/// writing up to one tag lookup's worth of pages (a folio batch) of the current inode.
/// A pass runs, in order, the start-all work reclaim asked for (wb_check_start_all),
/// the periodic flush of expired inodes if dirty_writeback_interval has passed since
/// the last one (wb_check_old_data_flush), and background writeback while above the
/// background threshold (wb_check_background_flush). After a pass the flusher sleeps:
/// for dirty_writeback_interval if inodes are still dirty (wb_wakeup_delayed), else
/// until woken.
pub fn flusher_step(k: &mut Kernel, p: &mut dyn Policy) -> FlusherNext {
    let now = k.cur.clock;
    k.wb.state = FlusherState::Running;
    k.wb.scheduled = None;
    k.wb.pending = None;
    k.spend(k.costs.xarray, Cat::Other);
    if k.wb.stage.is_none() {
        k.wb.stage = Some(0);
    }
    loop {
        if k.wb.work.is_none() {
            match next_work(k) {
                Some(w) => k.wb.work = Some(w),
                None => {
                    k.wb.stage = None;
                    if std::mem::take(&mut k.wb.rerun) {
                        k.wb.stage = Some(0);
                        return FlusherNext::Run;
                    }
                    k.wb.state = FlusherState::Idle;
                    if k.wb.has_dirty_io() && k.wb.interval > 0 {
                        let t = now.max(k.cur.clock) + k.wb.interval;
                        k.wb.scheduled = Some(t);
                        return FlusherNext::SleepUntil(t);
                    }
                    return FlusherNext::Sleep;
                }
            }
        }
        if write_some(k, p) {
            return FlusherNext::Run;
        }
        k.wb.work = None;
    }
}

/// The next work of the current pass, in wb_do_writeback()'s order.
fn next_work(k: &mut Kernel) -> Option<Work> {
    let now = k.cur.clock;
    loop {
        let stage = k.wb.stage?;
        k.wb.stage = Some(stage + 1);
        let work = |reason, nr_pages| Work {
            reason,
            nr_pages,
            dirtied_before: now,
            progress: false,
            queued: false,
        };
        match stage {
            0 => {
                if std::mem::take(&mut k.wb.start_all) && k.wb.nr_dirty > 0 {
                    return Some(work(WbReason::Vmscan, k.wb.nr_dirty as i64));
                }
            }
            1 => {
                if k.wb.interval > 0 && now >= k.wb.last_old_flush + k.wb.interval {
                    k.wb.last_old_flush = now;
                    if k.wb.nr_dirty > 0 {
                        return Some(work(WbReason::Periodic, k.wb.nr_dirty as i64));
                    }
                }
            }
            2 => {
                if over_bg_thresh(k) {
                    return Some(work(WbReason::Background, i64::MAX));
                }
            }
            _ => {
                k.wb.stage = None;
                return None;
            }
        }
    }
}

/// Models writeback_chunk_size() for WB_SYNC_NONE work.
fn chunk_size(k: &Kernel, nr_pages: i64) -> i64 {
    let limit = dirty_limits(k).1 as i64;
    let pages = INIT_BW_HALF_PAGES.min(limit / DIRTY_SCOPE).min(nr_pages);
    (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
}

/// Models queue_io(): b_more_io, then the inodes of b_dirty dirtied at or before
/// `dirtied_before` (oldest first), go to b_io.
fn queue_io(wb: &mut Writeback, dirtied_before: u64) {
    while let Some(e) = wb.b_more_io.pop_front() {
        if wb.valid(e, IoList::MoreIo) {
            wb.move_to(e.0, IoList::Io);
        }
    }
    while let Some(&e) = wb.b_dirty.front() {
        if !wb.valid(e, IoList::Dirty) {
            wb.b_dirty.pop_front();
            continue;
        }
        if wb.inodes[e.0 as usize].dirtied_when > dirtied_before {
            break;
        }
        wb.b_dirty.pop_front();
        wb.move_to(e.0, IoList::Io);
    }
}

/// Models requeue_inode() after writing an inode's chunk: still dirty and the chunk
/// used up -> b_more_io; still dirty otherwise -> back to b_dirty (redirty_tail, which
/// refreshes dirtied_when when it is older than the newest dirty inode's); clean -> off
/// the lists.
fn requeue_inode(k: &mut Kernel, file: u32, nr_to_write: i64) {
    let now = k.cur.clock;
    let wb = &mut k.wb;
    if wb.inodes[file as usize].nr_dirty == 0 {
        wb.move_to(file, IoList::None);
    } else if nr_to_write <= 0 {
        wb.move_to(file, IoList::MoreIo);
    } else {
        let newest = wb
            .b_dirty
            .iter()
            .rev()
            .find(|&&e| wb.valid(e, IoList::Dirty))
            .map(|&(f, _)| wb.inodes[f as usize].dirtied_when);
        if newest.is_some_and(|n| wb.inodes[file as usize].dirtied_when < n) {
            wb.inodes[file as usize].dirtied_when = now;
        }
        wb.move_to(file, IoList::Dirty);
    }
}

/// Continues wb_writeback() of the current work: picks inodes (writeback_sb_inodes)
/// and writes up to one folio batch of dirty pages. Returns false when the work is done.
fn write_some(k: &mut Kernel, p: &mut dyn Policy) -> bool {
    let _ = p;
    loop {
        if k.wb.cur.is_none() {
            let now = k.cur.clock;
            let w = k.wb.work.as_ref().expect("a work is running");
            if w.nr_pages <= 0 || (w.reason == WbReason::Background && !over_bg_thresh(k)) {
                return false;
            }
            let dirtied_before = match w.reason {
                WbReason::Periodic => now.saturating_sub(k.wb.expire),
                WbReason::Background => now,
                WbReason::Vmscan => w.dirtied_before,
            };
            let nr_pages = w.nr_pages;
            // Pick the next valid inode of b_io, queueing more when it runs dry.
            let file = loop {
                if let Some(e) = k.wb.b_io.pop_front() {
                    if k.wb.valid(e, IoList::Io) {
                        break Some(e.0);
                    }
                    continue;
                }
                let w = k.wb.work.as_mut().unwrap();
                if w.queued && !w.progress {
                    // No progress in the last round: stop unless b_more_io has
                    // inodes (wb_writeback() would wait on them; here they were all
                    // written this round, so it stops too).
                    break None;
                }
                w.queued = true;
                w.progress = false;
                queue_io(&mut k.wb, dirtied_before);
                if k.wb.b_io.is_empty() {
                    break None;
                }
            };
            let Some(file) = file else { return false };
            let chunk = chunk_size(k, nr_pages);
            let pos = k.wb.inodes[file as usize].writeback_index;
            k.wb.cur = Some(Cur {
                file,
                nr_to_write: chunk,
                pos,
            });
        }
        let wrote = write_batch(k);
        if wrote > 0 {
            k.wb.work.as_mut().unwrap().progress = true;
            return true;
        }
    }
}

/// write_cache_pages() for one tag lookup of the current inode: writes up to
/// WRITE_BATCH dirty pages from the cursor on, skipping pages already under writeback
/// (WB_SYNC_NONE). At the end of the file (or of the chunk) the inode is requeued.
/// Returns the pages written.
fn write_batch(k: &mut Kernel) -> usize {
    let Some(Cur {
        file,
        mut nr_to_write,
        mut pos,
    }) = k.wb.cur.take()
    else {
        return 0;
    };
    k.spend(k.costs.xarray, Cat::Other);
    let pages = k.files[file as usize].pages;
    let mut wrote = 0;
    let mut eof = false;
    while wrote < WRITE_BATCH && nr_to_write > 0 {
        if pos >= pages || k.wb.inodes[file as usize].nr_dirty == 0 {
            eof = true;
            break;
        }
        let slot = k.files[file as usize].slots[pos as usize];
        pos += 1;
        let Some(pfn) = slot.as_page() else { continue };
        let f = k.folios[pfn as usize];
        if !f.test(pg::DIRTY) || f.test(pg::WRITEBACK) {
            continue;
        }
        if folio_clear_dirty_for_io(k, pfn) {
            submit_write(k, pfn);
            wrote += 1;
            nr_to_write -= 1;
        }
    }
    if let Some(w) = k.wb.work.as_mut() {
        w.nr_pages -= wrote as i64;
    }
    // Range-cyclic writeback resumes where it stopped, or from 0 after the end.
    k.wb.inodes[file as usize].writeback_index = if eof { 0 } else { pos };
    if eof || nr_to_write <= 0 {
        requeue_inode(k, file, nr_to_write);
    } else {
        k.wb.cur = Some(Cur {
            file,
            nr_to_write,
            pos,
        });
    }
    wrote
}
