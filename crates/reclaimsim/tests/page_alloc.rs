//! The locks behind the lru_lock: zone->lock under the per-CPU page lists, and the page
//! cache's i_pages lock.

mod common;

use common::Sys;
use reclaimsim::sim::lock::LockSite;

const MACHINE: &str = "[machine]\nmemory = \"256MiB\"\ncpus = 2\n";

/// A page from the allocator, charged to the root memcg as alloc_folio would.
fn take(s: &mut Sys) -> u32 {
    let pfn = s.k.take_free_page(0).expect("free pages");
    s.k.memcgs.charge(0, 1);
    pfn
}

fn site(s: &Sys, name: &str, site: LockSite) -> u64 {
    s.k.all_locks()
        .filter(|(n, _)| *n == name)
        .map(|(_, l)| l.sites[site as usize].acquisitions)
        .sum()
}

/// An allocation refills its CPU's list a batch at a time under zone->lock; the pages on
/// the list are not free for the watermarks; frees go back to the list until it passes
/// its high mark, then a batch returns to the buddy list; drain_all_pages empties them.
#[test]
fn per_cpu_lists_refill_and_drain_a_batch_at_a_time_under_the_zone_lock() {
    let mut s = Sys::new(MACHINE);
    let batch = s.k.pcp[0].batch;
    let high = s.k.pcp[0].high;
    assert_eq!(batch, 15, "zone_batchsize of a 256 MiB zone");
    let free0 = s.k.free_pages();
    let pfn = take(&mut s);
    assert_eq!(site(&s, "zone_lock", LockSite::RmqueueBulk), 1);
    assert_eq!(s.k.pcp[0].list.len() as u64, batch - 1);
    assert_eq!(
        s.k.free_pages(),
        free0 - batch,
        "the list's pages left NR_FREE_PAGES"
    );
    let more: Vec<_> = (0..batch - 1).map(|_| take(&mut s)).collect();
    assert_eq!(
        site(&s, "zone_lock", LockSite::RmqueueBulk),
        1,
        "served from the list"
    );
    s.k.free_folio(pfn);
    for p in more {
        s.k.free_folio(p);
    }
    assert_eq!(s.k.pcp[0].list.len() as u64, batch);
    assert_eq!(
        site(&s, "zone_lock", LockSite::FreePcpBulk),
        0,
        "below high"
    );
    // Fill the list to its high mark: one bulk free of a batch.
    let taken: Vec<_> = (0..high).map(|_| take(&mut s)).collect();
    for p in taken {
        s.k.free_folio(p);
    }
    assert_eq!(site(&s, "zone_lock", LockSite::FreePcpBulk), 1);
    assert!(s.k.pcp[0].list.len() as u64 >= high - batch);
    s.check();
    s.k.drain_all_pages();
    assert!(s.k.pcp.iter().all(|p| p.list.is_empty()));
    assert_eq!(s.k.free_pages(), free0);
    s.check();
}

/// Reading a page into the page cache inserts it under the mapping's i_pages lock.
#[test]
fn page_cache_inserts_take_the_i_pages_lock() {
    let mut s = Sys::new(MACHINE);
    let memcg = s.memcg("/");
    let file = s.file(64);
    for index in 0..8 {
        s.read(memcg, file, index);
    }
    s.read(memcg, file, 0);
    assert_eq!(
        site(&s, "i_pages", LockSite::FilemapAdd),
        8,
        "hits take no lock"
    );
    assert_eq!(s.k.files[file as usize].i_pages.acquisitions, 8);
}

/// Swap slots come from a CPU's cache, refilled 64 at a time under si->lock, and go back
/// 64 at a time; when swap runs low the cache is bypassed, one slot per lock hold.
#[test]
fn swap_slots_move_a_cacheful_at_a_time_under_si_lock() {
    let mut s = Sys::new(
        "[machine]\nmemory = \"64MiB\"\ncpus = 2\nswap = { device = \"zram\", size = \"256MiB\" }\n",
    );
    let slots: Vec<u32> = (0..64).map(|_| s.k.get_swap_slot(0).unwrap()).collect();
    assert_eq!(site(&s, "swap_info", LockSite::GetSwapPages), 1);
    for &slot in &slots {
        s.k.swap.as_mut().unwrap().slots[slot as usize] =
            reclaimsim::kernel::swap::SwapSlot::used(0);
    }
    let total = s.k.swap.as_ref().unwrap().total();
    assert_eq!(s.k.swap.as_ref().unwrap().nr_free(), total - 64);
    for &slot in &slots[..63] {
        s.k.put_swap_slot(slot);
    }
    assert_eq!(site(&s, "swap_info", LockSite::SwapcacheFreeEntries), 0);
    assert_eq!(
        s.k.swap.as_ref().unwrap().nr_free(),
        total - 64,
        "cached, not free"
    );
    s.k.put_swap_slot(slots[63]);
    assert_eq!(site(&s, "swap_info", LockSite::SwapcacheFreeEntries), 1);
    assert_eq!(s.k.swap.as_ref().unwrap().nr_free(), total);
    // Nearly full swap: no caching.
    while s.k.swap.as_ref().unwrap().nr_free() > 2 * 5 * 64 {
        let slot = s.k.get_swap_slot(0).unwrap();
        s.k.swap.as_mut().unwrap().slots[slot as usize] =
            reclaimsim::kernel::swap::SwapSlot::used(0);
    }
    let before = site(&s, "swap_info", LockSite::GetSwapPages);
    let cached = s.k.swap_slots[0].slots.len();
    for _ in 0..cached + 3 {
        s.k.get_swap_slot(0).unwrap();
    }
    assert_eq!(
        site(&s, "swap_info", LockSite::GetSwapPages),
        before + cached as u64 + 3
    );
}

/// An rmap walk read-locks its folio's anon_vma (anon) or the file's i_mmap_rwsem:
/// down_read and up_read are one atomic each on the rwsem's count, so each walk costs
/// two acquisitions of the line and, when another CPU touched it last, a transfer.
#[test]
fn rmap_walks_take_the_rwsem_line_twice_and_pay_its_transfer() {
    use reclaimsim::kernel::rmap;
    let mut s = Sys::new(MACHINE);
    let memcg = s.memcg("/");
    let (mm, start) = s.process(memcg, None, 16);
    s.fault(mm, start, true);
    let pfn = s.k.mms[mm as usize].vmas[0].ptes[0].pfn().unwrap();
    assert_eq!(rmap::folio_referenced(&mut s.k, pfn, None, None), 1);
    assert_eq!(site(&s, "anon_vma", LockSite::FolioReferenced), 2);
    // Same CPU: the line is local, the walk costs no transfer.
    let line = |s: &Sys| s.k.mms[mm as usize].vmas[0].anon_vma.hold_ns;
    let local = line(&s);
    assert_eq!(local, 2 * s.k.costs.lru_flag_atomic);
    // Another CPU pays one transfer for down_read; up_read finds the line local again.
    s.on(1);
    rmap::folio_referenced(&mut s.k, pfn, None, None);
    let remote = line(&s) - local;
    assert_eq!(
        remote,
        2 * s.k.costs.lru_flag_atomic + s.k.costs.lock_bounce
    );
    rmap::try_to_unmap(&mut s.k, pfn);
    assert_eq!(site(&s, "anon_vma", LockSite::TryToUnmap), 2);
    // An unmapped folio needs no walk; a mapped file folio locks the file's i_mmap.
    assert_eq!(rmap::folio_referenced(&mut s.k, pfn, None, None), 0);
    assert_eq!(site(&s, "anon_vma", LockSite::FolioReferenced), 4);
    let file = s.file(8);
    let (fmm, fstart) = s.process(memcg, Some(file), 0);
    s.fault(fmm, fstart, false);
    let fpfn = s.page(file, 0);
    rmap::folio_referenced(&mut s.k, fpfn, None, None);
    assert_eq!(site(&s, "i_mmap", LockSite::FolioReferenced), 2);
    s.check();
}
