//! Swap on an SSD (docs/model/page-cache-swap.md): no SWP_SYNCHRONOUS_IO, so a
//! swap-out leaves the folio under writeback until the device completes it, a swap-in
//! goes through the swap cache and keeps its slot (the opposite of swap_bypass.rs's
//! zram and brd), the faulting task sleeps until its read completes, swap readahead
//! reads the fault's neighbours (by VMA, 6.1's default, or by slot cluster) and counts
//! swap_ra and swap_ra_hit, and the device's queue depth bounds the requests in flight.
//! The first tests drive kernel functions on a small classic-LRU machine and run the
//! checker; the last run whole scenarios with the checker on.

mod common;

use common::{run_checked, swap_reread, vmstat, Sys};
use reclaimsim::kernel::folio::{pg, Pfn};
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::memcg::ROOT;
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::vmscan::{self, ReclaimStat, ScanControl};
use reclaimsim::kernel::writeback;

/// 64 MiB, 2 CPUs, a 64 MiB NVMe SSD, with `kernel` and `costs` as the inside of those
/// tables; one process of `pages` anon pages, each written once.
fn machine(kernel: &str, costs: &str, pages: u64) -> (Sys, u32, u64) {
    let mut s = Sys::new(&format!(
        "[machine]\nmemory = \"64MiB\"\ncpus = 2\n\
         swap = {{ device = \"ssd\", profile = \"nvme\", size = \"64MiB\" }}\n\
         [kernel]\n{kernel}\n[costs]\n{costs}\n"
    ));
    let (mm, start) = s.process(ROOT, None, pages);
    for i in 0..pages {
        s.fault(mm, start + i, true);
    }
    s.drain();
    (s, mm, start)
}

/// The frame mapped at `vpn`, if any.
fn mapped(s: &Sys, mm: u32, vpn: u64) -> Option<Pfn> {
    let m = &s.k.mms[mm as usize];
    let v = m.find_vma(vpn).unwrap();
    m.vmas[v].ptes[(vpn - m.vmas[v].start) as usize].pfn()
}

/// One shrink_folio_list pass over the given pages' folios (PTEs made old, isolated
/// from their list); survivors go back to the LRU. Returns the number freed.
fn shrink(s: &mut Sys, mm: u32, vpns: &[u64]) -> u64 {
    let mut list: Vec<Pfn> = Vec::new();
    for &vpn in vpns {
        let Some(pfn) = mapped(s, mm, vpn).or_else(|| {
            let slot = s.k.mms[mm as usize].pte_mut(vpn)?.swap_slot()?;
            s.k.swap.as_ref().unwrap().slots[slot as usize].as_cached()
        }) else {
            continue;
        };
        if let Some(pte) = s.k.mms[mm as usize].pte_mut(vpn) {
            pte.mkold();
        }
        let lv = s.k.folio_lruvec(pfn);
        s.k.lock_lruvec(lv);
        s.p.del_folio(&mut s.k, pfn);
        assert!(s.k.isolate_lru_flag(pfn));
        s.k.unlock();
        list.push(pfn);
    }
    let mut sc = ScanControl::new(32, None, false);
    let mut stat = ReclaimStat::default();
    let freed = vmscan::shrink_folio_list(&mut s.k, &mut s.p, &mut list, &mut sc, &mut stat);
    for pfn in list {
        let lv = s.k.folio_lruvec(pfn);
        s.k.lock_lruvec(lv);
        s.k.folios[pfn as usize].set(pg::LRU);
        s.p.add_folio(&mut s.k, pfn, false);
        s.k.unlock();
    }
    freed
}

/// Swaps the pages out: a first pass writes them (kept under writeback), the writes
/// complete, a second pass frees them.
fn swap_out(s: &mut Sys, mm: u32, vpns: &[u64]) {
    assert_eq!(shrink(s, mm, vpns), 0, "an SSD's write is asynchronous");
    let wb = s.k.wb.in_flight();
    assert_eq!(wb, vpns.len(), "each page under writeback");
    let later = s.k.cur.clock + 10_000_000;
    writeback::complete_until(&mut s.k, &mut s.p, later);
    s.k.cur.clock = later;
    s.drain();
    assert_eq!(shrink(s, mm, vpns), vpns.len() as u64);
    for &vpn in vpns {
        s.slot_of(mm, vpn);
    }
}

#[test]
fn an_ssd_swapin_goes_through_the_swap_cache_and_keeps_its_slot() {
    let (mut s, mm, start) = machine("", "", 8);
    swap_out(&mut s, mm, &[start]);
    assert_eq!(s.vm(Vm::Pswpout), 1);
    let slot = s.slot_of(mm, start);
    s.check();

    let before = s.k.cur.clock;
    s.fault(mm, start, false);
    let pfn = mapped(&s, mm, start).expect("swapped in");
    assert_eq!((s.vm(Vm::Pswpin), s.vm(Vm::Pgmajfault)), (1, 1));
    assert!(s.test(pfn, pg::SWAPCACHE), "the folio is in the swap cache");
    assert_eq!(s.k.folio_swap[pfn as usize], slot);
    let sw = s.k.swap.as_ref().unwrap();
    assert_eq!(
        sw.slots[slot as usize].as_cached(),
        Some(pfn),
        "the slot stays"
    );
    assert_eq!(s.k.memcgs.cgs[ROOT as usize].swap_usage, 1);
    // The fault slept until the read completed: at least the device's read time.
    let c = &s.k.costs;
    assert!(s.k.cur.clock - before >= c.nvme_read_latency + c.nvme_read_page);
    s.check();

    // Clean and still on the device: reclaim drops it again without a write.
    s.drain();
    assert_eq!(shrink(&mut s, mm, &[start]), 1);
    assert_eq!(s.vm(Vm::Pswpout), 1, "no second write");
    assert_eq!(s.slot_of(mm, start), slot);
    s.check();
}

#[test]
fn vma_readahead_brings_in_neighbours_and_counts_hits() {
    let (mut s, mm, start) = machine("", "", 8);
    let all: Vec<u64> = (start..start + 8).collect();
    swap_out(&mut s, mm, &all);
    let ra = |s: &Sys| (s.vm(Vm::SwapRa), s.vm(Vm::SwapRaHit));
    // First fault: no history, a window of one.
    s.fault(mm, start, false);
    assert_eq!(ra(&s), (0, 0));
    // The next page: adjacent, a window of two forward, the neighbour read ahead.
    s.fault(mm, start + 1, false);
    assert_eq!(ra(&s), (1, 0));
    let ahead = s.k.swap.as_ref().unwrap().slots[s.slot_of(mm, start + 2) as usize];
    let pfn = ahead.as_cached().expect("read ahead into the swap cache");
    assert!(s.test(pfn, pg::RECLAIM), "PG_readahead");
    assert_eq!(s.k.folios[pfn as usize].index as u64, start + 2);
    assert_eq!(s.vm(Vm::Pgmajfault), 2);
    // A hit: a minor fault, swap_ra_hit.
    s.fault(mm, start + 2, false);
    assert_eq!(ra(&s), (1, 1));
    assert_eq!(s.vm(Vm::Pgmajfault), 2);
    // One hit makes the next window 4: pages 3 to 6 read, 3 of them ahead.
    s.fault(mm, start + 3, false);
    assert_eq!(ra(&s), (4, 1));
    for i in 4..7 {
        s.fault(mm, start + i, false);
    }
    assert_eq!(ra(&s), (4, 4));
    assert_eq!(s.vm(Vm::Pswpin), 7);
    s.drain();
    s.check();
}

#[test]
fn cluster_readahead_reads_neighbouring_slots_for_their_owners() {
    let (mut s, mm, start) = machine("vma_ra_enabled = false", "", 8);
    let all: Vec<u64> = (start..start + 8).collect();
    swap_out(&mut s, mm, &all);
    for i in 0..8 {
        s.fault(mm, start + i, false);
    }
    assert!(s.vm(Vm::SwapRa) > 0, "slot neighbours were read ahead");
    assert!(s.vm(Vm::SwapRaHit) > 0);
    assert_eq!(s.vm(Vm::Pswpin), 8);
    // Every page came back to its own address: each read-ahead folio had the owner
    // of its slot.
    for i in 0..8 {
        let pfn = mapped(&s, mm, start + i).unwrap();
        assert_eq!(s.k.folios[pfn as usize].index as u64, start + i);
    }
    s.drain();
    s.check();
}

#[test]
fn page_cluster_zero_turns_readahead_off() {
    let (mut s, mm, start) = machine("page_cluster = 0", "", 8);
    let all: Vec<u64> = (start..start + 8).collect();
    swap_out(&mut s, mm, &all);
    for i in 0..8 {
        s.fault(mm, start + i, false);
    }
    assert_eq!((s.vm(Vm::SwapRa), s.vm(Vm::Pswpin)), (0, 8));
    s.check();
}

#[test]
fn the_queue_depth_bounds_the_writes_in_flight() {
    let (mut s, mm, start) = machine("", "nvme_queue_depth = 2", 16);
    let all: Vec<u64> = (start..start + 16).collect();
    assert_eq!(shrink(&mut s, mm, &all), 0);
    assert_eq!(s.k.wb.in_flight(), 16);
    // The reclaimer slept for tags: when it is done, at most two are still in flight.
    let now = s.k.cur.clock;
    writeback::complete_until(&mut s.k, &mut s.p, now);
    assert!(s.k.wb.in_flight() <= 2, "{} in flight", s.k.wb.in_flight());
    let d = s.k.swap.as_ref().unwrap().ssd.as_ref().unwrap().stats;
    assert_eq!(d.writes, 16);
    // Sixteen writes two at a time: the submitter waited for seven rounds of the first.
    let c = &s.k.costs;
    assert!(
        now >= 7 * (c.nvme_write_latency + c.nvme_write_page),
        "{now}"
    );
    assert!(d.queue_wait_ns > 0);
    s.check();
}

#[test]
fn bytes_written_are_pswpout_pages_on_the_ssd_alone() {
    for policy in ["classic", "mglru"] {
        let text = swap_reread(policy, "ssd", None);
        let r = run_checked(&text);
        let d = r.swap_device.as_ref().expect("the SSD's counts");
        let pswpout = vmstat(&r, "pswpout");
        assert!(pswpout > 0, "{policy}");
        assert_eq!(d.bytes_written, pswpout * 4096, "{policy}");
        assert_eq!(d.bytes_read, vmstat(&r, "pswpin") * 4096, "{policy}");
        assert!(
            vmstat(&r, "swap_ra") > 0,
            "{policy}: a sequential reread reads ahead"
        );
        assert!(vmstat(&r, "swap_ra_hit") > 0, "{policy}");
    }
}

#[test]
fn zswap_in_front_of_an_ssd_writes_back_to_it() {
    let text = swap_reread("classic", "ssd", None).replace(
        "size = \"128MiB\" }",
        "size = \"128MiB\", zswap = { max_pool_percent = 5 } }",
    );
    let r = run_checked(&text);
    let d = r.swap_device.as_ref().unwrap();
    let (pswpout, zswpwb) = (vmstat(&r, "pswpout"), vmstat(&r, "zswpwb"));
    assert!(zswpwb > 0, "the pool filled and wrote back");
    // zswap's writeback is a device write too (it counts pswpout).
    assert_eq!(d.bytes_written, pswpout * 4096);
    assert!(d.writes >= zswpwb);
}
