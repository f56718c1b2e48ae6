//! The SSD swap device, built only when the scenario swaps to one: its block queue
//! (`queue_depth` tags in front of the device's transfer path), the asynchronous swap
//! write and read (mm/page_io.c: swap_writepage_bdev_async, swap_readpage_bdev_async),
//! the fault's wait on a read in flight, and swap readahead by the faulting address's
//! neighbours in its VMA or by the neighbouring swap slots (mm/swap_state.c:
//! swapin_readahead, swap_vma_readahead, swap_cluster_readahead; Linux 6.1). zram and
//! brd keep their synchronous paths (SWP_SYNCHRONOUS_IO: `fault::swapin_skip_swapcache`).

use crate::kernel::config::SsdProfile;
use crate::kernel::fault::Killed;
use crate::kernel::folio::{pg, Pfn};
use crate::kernel::lru::Policy;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::Kernel;
use crate::sim::cost::CostTable;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// SWAP_RA_ORDER_CEILING on 64-bit: the VMA readahead window is at most 2^5 pages.
const SWAP_RA_ORDER_CEILING: u32 = 5;
/// SWAP_RA_HITS_MAX (SWAP_RA_HITS_MASK: PAGE_SHIFT / 2 bits): a VMA counts at most 63
/// readahead hits.
const SWAP_RA_HITS_MAX: u32 = 63;
/// Pages a PMD maps: the VMA readahead window stays inside the faulting page's PMD.
const PMD_PAGES: u64 = 512;
/// In-flight reads kept before the completed ones are dropped from `reading`.
const READING_PRUNE: usize = 256;

/// One direction of the device: a request's fixed time and its time on the transfer
/// path (its page's share of the bandwidth).
#[derive(Clone, Copy, Debug)]
struct DeviceTimes {
    latency: u64,
    page: u64,
}

/// The device's own counts (the results' `swap_device`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SsdStats {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Time requests waited for a free tag (the queue was full), summed.
    pub queue_wait_ns: u64,
}

/// A VMA's swap_readahead_info: the last faulting page, the window it read and the
/// readahead hits since.
#[derive(Clone, Copy, Debug, Default)]
struct VmaRa {
    vpn: u64,
    win: u32,
    hits: u32,
}

/// swap_cluster_readahead's globals: swapin_readahead_hits, prev_offset and
/// last_readahead_pages.
#[derive(Clone, Copy, Debug, Default)]
struct ClusterRa {
    hits: u32,
    prev_offset: u32,
    last_pages: u32,
}

/// The SSD: its queue, its counts and the state of the reads and readahead over it.
#[derive(Clone, Debug)]
pub struct Ssd {
    read: DeviceTimes,
    write: DeviceTimes,
    depth: usize,
    /// When each tag in use frees: a min-heap of at most `depth` completion times.
    tags: BinaryHeap<Reverse<u64>>,
    /// When the transfer path is next free.
    link_free: u64,
    pub stats: SsdStats,
    /// Swap-cache folios whose read is in flight (PG_locked, not PG_uptodate): when it
    /// completes, and the slot it reads.
    reading: BTreeMap<Pfn, (u64, u32)>,
    cluster_ra: ClusterRa,
    /// Per (process, VMA index), with VMA readahead.
    vma_ra: BTreeMap<(u32, u32), VmaRa>,
    /// With slot-cluster readahead only: the process and page each slot's entry
    /// belongs to (the kernel finds no PTE for a neighbouring slot; the model's folio
    /// needs its owner), set when add_to_swap gives a folio the slot.
    pub slot_owner: Vec<(u32, u32)>,
}

impl Ssd {
    /// The device of `profile` with the cost table's figures; `slots` sizes
    /// `slot_owner` when readahead goes by slot clusters (`cluster_ra`).
    pub fn new(profile: SsdProfile, c: &CostTable, slots: usize, cluster_ra: bool) -> Ssd {
        let t = |latency, page| DeviceTimes { latency, page };
        let (read, write, depth) = match profile {
            SsdProfile::Nvme => (
                t(c.nvme_read_latency, c.nvme_read_page),
                t(c.nvme_write_latency, c.nvme_write_page),
                c.nvme_queue_depth,
            ),
            SsdProfile::Sata => (
                t(c.sata_read_latency, c.sata_read_page),
                t(c.sata_write_latency, c.sata_write_page),
                c.sata_queue_depth,
            ),
        };
        Ssd {
            read,
            write,
            depth: depth.max(1) as usize,
            tags: BinaryHeap::new(),
            link_free: 0,
            stats: SsdStats::default(),
            reading: BTreeMap::new(),
            cluster_ra: ClusterRa::default(),
            vma_ra: BTreeMap::new(),
            slot_owner: if cluster_ra {
                vec![(0, 0); slots]
            } else {
                Vec::new()
            },
        }
    }

    /// A 4 KiB request submitted at `now`, in submission order (blk-mq's tag
    /// allocation, FIFO when the tags run out): it waits for one of `depth` tags, then
    /// for the transfer path, which it holds for its page time, and completes its fixed
    /// latency after the transfer; its tag frees then. Returns when it started (got a
    /// tag) and when it completes.
    pub fn submit(&mut self, now: u64, write: bool) -> (u64, u64) {
        let d = if write { self.write } else { self.read };
        let start = if self.tags.len() < self.depth {
            now
        } else {
            let Reverse(free) = self.tags.pop().expect("a full queue has tags");
            free.max(now)
        };
        let xfer = start.max(self.link_free);
        self.link_free = xfer + d.page;
        let done = xfer + d.page + d.latency;
        self.tags.push(Reverse(done));
        let s = &mut self.stats;
        s.queue_wait_ns += start - now;
        if write {
            s.writes += 1;
            s.bytes_written += 4096;
        } else {
            s.reads += 1;
            s.bytes_read += 4096;
        }
        (start, done)
    }

    /// Host bytes of the device's state.
    pub fn host_bytes(&self) -> usize {
        self.slot_owner.capacity() * 8 + (self.reading.len() + self.vma_ra.len()) * 32
    }
}

fn ssd(k: &mut Kernel) -> &mut Ssd {
    (k.swap.as_mut().and_then(|s| s.ssd.as_deref_mut())).expect("an SSD swap device")
}

/// Whether the swap device is an SSD.
pub fn has_ssd(k: &Kernel) -> bool {
    k.swap.as_ref().is_some_and(|s| s.ssd.is_some())
}

/// Submits one request on the running CPU's behalf (the bio's CPU time, `block_io`) and
/// returns its completion time. With every tag in use, the submitter sleeps until its
/// request gets one (blk_mq_get_tag's io_schedule), so a writer cannot queue more
/// than the device takes.
fn submit_bio(k: &mut Kernel, write: bool) -> u64 {
    k.spend(k.costs.block_io, Cat::Io);
    let now = k.cur.clock;
    let (start, done) = ssd(k).submit(now, write);
    k.sleep_through(start);
    let (c, kib) = if write {
        (Vm::Pgpgout, 4)
    } else {
        (Vm::Pgpgin, 4)
    };
    k.vm.add(c, kib);
    done
}

/// Models __swap_writepage()'s bio path to an SSD (swap_writepage_bdev_async, 6.1):
/// bdev_write_page finds no ->rw_page, so a bio is built and submitted (submit_bio
/// counts pgpgout); the folio is under writeback until end_swap_bio_write runs at the
/// device's completion time (`writeback::start_swap_writeback`).
pub fn write_folio(k: &mut Kernel, pfn: Pfn) {
    let done = submit_bio(k, true);
    crate::kernel::writeback::start_swap_writeback(k, pfn, done);
}

/// A device write with no folio the model keeps: zswap's writeback of an entry, whose
/// page 6.1 writes through the swap cache and frees when the write completes.
pub fn write_page(k: &mut Kernel) {
    submit_bio(k, true);
}

/// Models swap_readpage()'s bio path from an SSD (swap_readpage_bdev_async, 6.1) into
/// swap-cache folio `pfn`: submitted now, it completes (end_swap_bio_read: uptodate,
/// unlocked) at the returned time; until then the folio is locked.
pub fn read_folio(k: &mut Kernel, pfn: Pfn, slot: u32) -> u64 {
    let done = submit_bio(k, false);
    let now = k.cur.clock;
    let s = ssd(k);
    if s.reading.len() >= READING_PRUNE {
        s.reading.retain(|_, (t, _)| *t > now);
    }
    s.reading.insert(pfn, (done, slot));
    done
}

/// When the read into swap-cache folio `pfn` completes, if it is still in flight (the
/// folio is locked: folio_trylock fails).
pub fn read_pending(k: &Kernel, pfn: Pfn) -> Option<u64> {
    let s = k.swap.as_ref()?.ssd.as_deref()?;
    let &(done, slot) = s.reading.get(&pfn)?;
    let ours = k.folios[pfn as usize].test(pg::SWAPCACHE) && k.folio_swap[pfn as usize] == slot;
    (ours && done > k.cur.clock).then_some(done)
}

/// Models do_swap_page()'s folio_lock_or_retry() on a folio whose read is in flight: the
/// task sleeps until the read completes; for a workingset folio folio_wait_bit_common
/// counts the sleep as a memory stall (psi_memstall_enter). True if it slept.
pub fn wait_on_read(k: &mut Kernel, pfn: Pfn) -> bool {
    let Some(done) = read_pending(k, pfn) else {
        return false;
    };
    let start = k.cur.clock;
    k.sleep_through(done);
    k.workingset_read_stall(pfn, start, k.cur.clock);
    true
}

/// Models lookup_swap_cache()'s readahead accounting (6.1) when a fault finds `pfn` in
/// the swap cache: TestClearPageReadahead (PG_readahead is PG_reclaim's bit, so a folio
/// under writeback with PG_reclaim counts too, as in the kernel); a hit counts
/// swap_ra_hit and, for the next window, a hit in the VMA's readahead info (VMA
/// readahead, which also records the faulting page there) or in swapin_readahead_hits.
pub fn lookup_hit(k: &mut Kernel, pfn: Pfn, mm: u32, v: usize, idx: usize) {
    if !has_ssd(k) {
        return;
    }
    let readahead = k.folios[pfn as usize].test_clear(pg::RECLAIM);
    let vpn = k.mms[mm as usize].vmas[v].start + idx as u64;
    let vma_ra = k.cfg.vma_ra_enabled;
    let s = ssd(k);
    if vma_ra {
        let ra = s.vma_ra.entry((mm, v as u32)).or_default();
        ra.vpn = vpn;
        if readahead {
            ra.hits = (ra.hits + 1).min(SWAP_RA_HITS_MAX);
        }
    } else if readahead {
        s.cluster_ra.hits += 1;
    }
    if readahead {
        k.vm.add(Vm::SwapRaHit, 1);
    }
}

/// Models __swapin_nr_pages() (6.1): the next readahead window from the hits since the
/// last one (hits + 2, rounded up to a power of two from 4), or 2 for a fault next to
/// the last one, else 1; at most `max_pages`, and at least half the previous window.
fn swapin_nr_pages(prev: u64, offset: u64, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if offset != prev + 1 && offset.wrapping_add(1) != prev {
            pages = 1;
        }
    } else {
        pages = pages.next_power_of_two().max(4);
    }
    pages.min(max_pages).max(prev_win / 2)
}

/// A swap entry to read: its slot and the process and page whose PTE holds it.
type Target = (u32, u32, u64);

/// Models swap_ra_info() (6.1): the VMA readahead window around page `idx` of VMA `v`,
/// 2^min(page-cluster, 5) pages at most, sized by swapin_nr_pages() from the VMA's
/// hits; it runs forward or backward from a fault next to the last one, else centred
/// on the fault, and stays inside the VMA and the faulting page's PMD. The entries of
/// the window's swap PTEs, in address order; the VMA's readahead info records the
/// fault and the window with no hits.
fn vma_window(k: &mut Kernel, mm: u32, v: usize, idx: usize) -> Vec<Target> {
    let max_win = 1u32 << k.cfg.page_cluster.min(SWAP_RA_ORDER_CEILING);
    let vma = &k.mms[mm as usize].vmas[v];
    let (vstart, vend) = (vma.start, vma.start + vma.ptes.len() as u64);
    let fpfn = vstart + idx as u64;
    let fault_only = || vec![(vma.ptes[idx].swap_slot().unwrap(), mm, fpfn)];
    if max_win == 1 {
        return fault_only();
    }
    let s = k.swap.as_mut().unwrap().ssd.as_deref_mut().unwrap();
    let ra = s.vma_ra.entry((mm, v as u32)).or_default();
    let win = swapin_nr_pages(ra.vpn, fpfn, ra.hits, max_win, ra.win);
    let prev = ra.vpn;
    *ra = VmaRa {
        vpn: fpfn,
        win,
        hits: 0,
    };
    let vma = &k.mms[mm as usize].vmas[v];
    if win == 1 {
        return vec![(vma.ptes[idx].swap_slot().unwrap(), mm, fpfn)];
    }
    let w = u64::from(win);
    let (lo, hi) = if fpfn == prev + 1 {
        (fpfn, fpfn + w)
    } else if prev == fpfn + 1 {
        ((fpfn + 1).saturating_sub(w), fpfn + 1)
    } else {
        let left = (w - 1) / 2;
        (fpfn.saturating_sub(left), fpfn + w - left)
    };
    let pmd = fpfn & !(PMD_PAGES - 1);
    let (lo, hi) = (lo.max(vstart).max(pmd), hi.min(vend).min(pmd + PMD_PAGES));
    (lo..hi)
        .filter_map(|vpn| {
            let slot = vma.ptes[(vpn - vstart) as usize].swap_slot()?;
            Some((slot, mm, vpn))
        })
        .collect()
}

/// Models swap_cluster_readahead()'s window (6.1): swapin_nr_pages() of the global hits
/// (prev_offset moves only when there were none), then the aligned cluster of that
/// many slots around the faulting `slot`, within the device. The model's slot 0 holds
/// data (it has no swap header to skip). Each slot in use and not in the swap cache,
/// with its owner.
fn cluster_window(k: &mut Kernel, fault: Target) -> Vec<Target> {
    let max_pages = 1u64 << k.cfg.page_cluster.min(31);
    let (slot, total) = (fault.0, k.swap.as_ref().unwrap().total());
    let s = ssd(k);
    let ra = &mut s.cluster_ra;
    if max_pages <= 1 {
        return vec![fault];
    }
    let hits = std::mem::take(&mut ra.hits);
    let max = max_pages.min(1 << 30) as u32;
    let pages = swapin_nr_pages(ra.prev_offset.into(), slot.into(), hits, max, ra.last_pages);
    if hits == 0 {
        ra.prev_offset = slot;
    }
    ra.last_pages = pages;
    let mask = u64::from(pages) - 1;
    let lo = u64::from(slot) & !mask;
    let hi = (u64::from(slot) | mask).min(total - 1);
    let sw = k.swap.as_ref().unwrap();
    let owners = &sw.ssd.as_deref().unwrap().slot_owner;
    (lo..=hi)
        .filter_map(|sl| {
            let sl = sl as u32;
            if sl == slot {
                return Some(fault);
            }
            let st = sw.slots[sl as usize];
            let (mm, vpn) = owners[sl as usize];
            (!st.is_free() && st.as_cached().is_none()).then_some((sl, mm, u64::from(vpn)))
        })
        .collect()
}

/// Models swapin_readahead() (6.1) for a fault on page `idx` of VMA `v` of `mm` whose
/// entry missed the swap cache: swap_vma_readahead when vma_ra_enabled (6.1's default
/// for a device that is not rotational), else swap_cluster_readahead. Each entry of
/// the window not in the swap cache and still in use is read into a new swap-cache
/// folio (__read_swap_cache_async, then an asynchronous swap_readpage); those besides
/// the fault's get PG_readahead and count swap_ra. Returns the faulting entry's folio,
/// None when its entry went while the reads were set up.
pub fn swapin_readahead(
    k: &mut Kernel,
    p: &mut dyn Policy,
    mm: u32,
    v: usize,
    idx: usize,
) -> Result<Option<Pfn>, Killed> {
    let vpn = k.mms[mm as usize].vmas[v].start + idx as u64;
    let slot = k.mms[mm as usize].vmas[v].ptes[idx]
        .swap_slot()
        .expect("a swap PTE");
    let window = if !has_ssd(k) {
        vec![(slot, mm, vpn)]
    } else if k.cfg.vma_ra_enabled {
        vma_window(k, mm, v, idx)
    } else {
        cluster_window(k, (slot, mm, vpn))
    };
    for t in window {
        read_swap_cache_async(k, p, t, t.0 != slot)?;
    }
    let sw = k.swap.as_ref().unwrap();
    Ok(sw.slots[slot as usize].as_cached())
}

/// Models __read_swap_cache_async() and its swap_readpage() (6.1) for one entry: nothing
/// when the slot is in the swap cache already or no longer in use (swapcache_prepare
/// fails); else a new folio charged to the owner's memcg, put in the swap cache and
/// read (`fault::swap_read_folio`), marked PG_readahead when it is not the fault's.
fn read_swap_cache_async(
    k: &mut Kernel,
    p: &mut dyn Policy,
    (slot, mm, vpn): Target,
    readahead: bool,
) -> Result<(), Killed> {
    let busy = |k: &Kernel| {
        let st = k.swap.as_ref().unwrap().slots[slot as usize];
        st.is_free() || st.as_cached().is_some()
    };
    if busy(k) || k.mms[mm as usize].dead {
        return Ok(());
    }
    let memcg = k.mms[mm as usize].memcg;
    let new = crate::kernel::fault::alloc_folio(k, p, memcg)?;
    // Another task read the entry in, or freed it, while this one allocated.
    if busy(k) || k.mms[mm as usize].dead {
        k.free_folio(new);
        return Ok(());
    }
    crate::kernel::fault::swap_read_folio(k, p, mm, vpn, slot, new);
    if readahead {
        k.folios[new as usize].set(pg::RECLAIM);
        k.vm.add(Vm::SwapRa, 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` reads submitted at time 0 on a device of queue depth `depth`: no more than
    /// `depth` are ever in flight, and they start in submission order.
    #[test]
    fn the_queue_depth_bounds_the_requests_in_flight() {
        let mut c = CostTable::default();
        c.nvme_queue_depth = 4;
        let mut d = Ssd::new(SsdProfile::Nvme, &c, 0, false);
        let ios: Vec<(u64, u64)> = (0..40).map(|_| d.submit(0, false)).collect();
        for &(start, _) in &ios {
            let in_flight = ios
                .iter()
                .filter(|(s, e)| *s <= start && start < *e)
                .count();
            assert!(in_flight <= 4, "{in_flight} in flight at {start}");
        }
        assert!(ios.windows(2).all(|w| w[0].0 <= w[1].0), "FIFO");
        // The fifth waits for the first's tag: latency plus one page.
        assert_eq!(ios[4].0, ios[0].1);
        assert!(d.stats.queue_wait_ns > 0);
        assert_eq!(d.stats.bytes_read, 40 * 4096);
    }

    #[test]
    fn the_transfer_path_serializes_the_pages() {
        let c = CostTable::default();
        let mut d = Ssd::new(SsdProfile::Sata, &c, 0, false);
        let a = d.submit(0, true);
        let b = d.submit(0, true);
        assert_eq!(a.1, c.sata_write_page + c.sata_write_latency);
        assert_eq!(b.1, a.1 + c.sata_write_page);
    }

    #[test]
    fn the_window_grows_with_hits_and_shrinks_by_halves() {
        // No hits, not adjacent: one page; adjacent: two.
        assert_eq!(swapin_nr_pages(100, 7, 0, 8, 0), 1);
        assert_eq!(swapin_nr_pages(6, 7, 0, 8, 0), 2);
        assert_eq!(swapin_nr_pages(8, 7, 0, 8, 0), 2);
        // Hits: hits + 2 rounded up to a power of two from 4, capped.
        assert_eq!(swapin_nr_pages(0, 7, 1, 8, 0), 4);
        assert_eq!(swapin_nr_pages(0, 7, 3, 8, 0), 8);
        assert_eq!(swapin_nr_pages(0, 7, 30, 8, 0), 8);
        // Not below half the last window.
        assert_eq!(swapin_nr_pages(100, 7, 0, 8, 8), 4);
    }
}
