//! Swap-in around the swap cache (docs/model/page-cache-swap.md): 6.1's do_swap_page skips the
//! swap cache for a SWP_SYNCHRONOUS_IO device (zram, brd) when the entry has one
//! reference, so the swapped-in page holds no slot and its next eviction writes it again;
//! a swap-cache hit frees the slot by should_try_to_free_swap's rules. Each test drives
//! kernel functions on a small classic-LRU machine and runs the checker afterwards; the
//! last runs whole scenarios with the checker on.

mod common;

use common::{run_checked, swap_reread, vmstat, Sys};
use reclaimsim::kernel::batch;
use reclaimsim::kernel::folio::{pg, Pfn, NIL};
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::memcg::ROOT;
use reclaimsim::kernel::rmap;
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::vmscan::{self, ReclaimStat, ScanControl};

/// 64 MiB, 4 CPUs, swap on `device` (64 MiB): swap is never near half full here.
fn machine(device: &str) -> Sys {
    Sys::new(&format!(
        "[machine]\nmemory = \"64MiB\"\ncpus = 4\nswap = {{ device = \"{device}\", size = \"64MiB\" }}\n"
    ))
}

/// A process of 8 anon pages, each written once (dirty, on the inactive anon list).
fn populated(s: &mut Sys) -> (u32, u64) {
    let (mm, start) = s.process(ROOT, None, 8);
    for i in 0..8 {
        s.fault(mm, start + i, true);
    }
    s.drain();
    (mm, start)
}

/// The frame mapped at `vpn`.
fn mapped(s: &Sys, mm: u32, vpn: u64) -> Pfn {
    let m = &s.k.mms[mm as usize];
    let v = m.find_vma(vpn).unwrap();
    m.vmas[v].ptes[(vpn - m.vmas[v].start) as usize]
        .pfn()
        .expect("page is resident")
}

/// The swap slot the PTE at `vpn` names, if it is a swap entry.
fn swap_entry(s: &Sys, mm: u32, vpn: u64) -> Option<u32> {
    let m = &s.k.mms[mm as usize];
    let v = m.find_vma(vpn).unwrap();
    m.vmas[v].ptes[(vpn - m.vmas[v].start) as usize].swap_slot()
}

/// Slots that are not free (data, shadow or swap cache): the device's usage.
fn slots_in_use(s: &Sys) -> usize {
    let sw = s.k.swap.as_ref().unwrap();
    sw.slots.iter().filter(|x| !x.is_free()).count()
}

/// Reclaims the page at `vpn` as shrink_inactive_list would: its PTE made old (no
/// reference), the folio isolated from its list and handed to shrink_folio_list, which
/// must free it.
fn reclaim(s: &mut Sys, mm: u32, vpn: u64) {
    let pfn = mapped(s, mm, vpn);
    s.k.mms[mm as usize].pte_mut(vpn).unwrap().mkold();
    s.k.folios[pfn as usize].clear(pg::REFERENCED);
    let lv = s.k.folio_lruvec(pfn);
    s.k.lock_lruvec(lv);
    s.p.del_folio(&mut s.k, pfn);
    assert!(s.k.isolate_lru_flag(pfn));
    s.k.unlock();
    let mut sc = ScanControl::new(32, None, false);
    let mut stat = ReclaimStat::default();
    let mut list = vec![pfn];
    let freed = vmscan::shrink_folio_list(&mut s.k, &mut s.p, &mut list, &mut sc, &mut stat);
    assert_eq!(freed, 1, "page {vpn} was not reclaimed");
    assert!(swap_entry(s, mm, vpn).is_some());
}

#[test]
fn zram_swapin_skips_the_swap_cache_and_frees_the_slot() {
    let mut s = machine("zram");
    let (mm, start) = populated(&mut s);
    reclaim(&mut s, mm, start);
    assert_eq!(s.vm(Vm::Pswpout), 1);
    assert_eq!(slots_in_use(&s), 1);
    assert_eq!(s.k.memcgs.cgs[ROOT as usize].swap_usage, 1);
    let slot = swap_entry(&s, mm, start).unwrap();
    s.check();

    // A load: the major fault reads the page into a new folio, not the swap cache.
    s.fault(mm, start, false);
    assert_eq!(s.vm(Vm::Pswpin), 1);
    assert_eq!(s.vm(Vm::Pgmajfault), 1);
    let pfn = mapped(&s, mm, start);
    assert!(
        !s.test(pfn, pg::SWAPCACHE),
        "the folio skipped the swap cache"
    );
    assert_eq!(s.k.folio_swap[pfn as usize], NIL);
    assert!(s.k.swap.as_ref().unwrap().slots[slot as usize].is_free());
    assert_eq!(slots_in_use(&s), 0, "swap usage drops on swap-in");
    assert_eq!(s.k.memcgs.cgs[ROOT as usize].swap_usage, 0);
    assert_eq!(s.k.mms[mm as usize].swap_ents, 0);
    s.check();

    // Re-evicting it needs a slot and a compression again (add_to_swap, pageout),
    // every time.
    for round in 2..=4 {
        s.drain();
        reclaim(&mut s, mm, start);
        assert_eq!(s.vm(Vm::Pswpout), round, "one write per eviction");
        assert_eq!(slots_in_use(&s), 1);
        s.check();
        s.fault(mm, start, false);
        assert_eq!(s.vm(Vm::Pswpin), round);
        assert_eq!(slots_in_use(&s), 0);
        s.check();
    }
}

#[test]
fn ramdisk_swapin_skips_the_swap_cache_too() {
    let mut s = machine("ramdisk");
    let (mm, start) = populated(&mut s);
    for i in 0..8 {
        reclaim(&mut s, mm, start + i);
    }
    assert_eq!(slots_in_use(&s), 8);
    for i in 0..4 {
        s.fault(mm, start + i, i % 2 == 0);
    }
    assert_eq!(s.vm(Vm::Pswpin), 4);
    assert_eq!(slots_in_use(&s), 4);
    assert_eq!(s.k.mms[mm as usize].swap_ents, 4);
    s.check();
    s.drain();
    for i in 0..4 {
        reclaim(&mut s, mm, start + i);
    }
    assert_eq!(s.vm(Vm::Pswpout), 12);
    s.check();
}

#[test]
fn without_synchronous_io_a_swapped_in_page_stays_in_the_swap_cache() {
    // The path a device without SWP_SYNCHRONOUS_IO takes (swapin_readahead): what the
    // model did for zram before the skip. The clean swap-cache folio keeps its slot and
    // is dropped again without a write.
    let mut s = machine("zram");
    s.k.swap.as_mut().unwrap().synchronous_io = false;
    let (mm, start) = populated(&mut s);
    reclaim(&mut s, mm, start);
    let slot = swap_entry(&s, mm, start).unwrap();
    s.fault(mm, start, false);
    let pfn = mapped(&s, mm, start);
    assert!(s.test(pfn, pg::SWAPCACHE));
    assert_eq!(s.k.folio_swap[pfn as usize], slot);
    assert_eq!(slots_in_use(&s), 1);
    s.check();
    s.drain();
    reclaim(&mut s, mm, start);
    assert_eq!(
        s.vm(Vm::Pswpout),
        1,
        "a clean swap-cache folio needs no write"
    );
    s.check();
}

#[test]
fn the_skip_path_consumes_the_shadow_and_counts_the_refault() {
    let mut s = machine("zram");
    let (mm, start) = populated(&mut s);
    // The other seven pages active: the refault distance (1) is within the workingset.
    let lv = s.lv(ROOT);
    for i in 1..8 {
        let x = mapped(&s, mm, start + i);
        s.k.lock_lruvec(lv);
        s.p.del_folio(&mut s.k, x);
        s.k.folios[x as usize].set(pg::ACTIVE);
        s.p.add_folio(&mut s.k, x, false);
        s.k.unlock();
    }
    // A folio with PG_workingset leaves a shadow that says so.
    let pfn = mapped(&s, mm, start);
    s.k.folios[pfn as usize].set(pg::WORKINGSET);
    reclaim(&mut s, mm, start);
    let slot = swap_entry(&s, mm, start).unwrap();
    assert!(s.k.swap.as_ref().unwrap().slots[slot as usize]
        .shadow()
        .is_some());
    s.fault(mm, start, false);
    // workingset_refault with the slot's shadow: the distance is 1, so it is activated
    // and, with the workingset bit, restored.
    assert_eq!(s.vm(Vm::WorkingsetRefaultAnon), 1);
    assert_eq!(s.vm(Vm::WorkingsetActivateAnon), 1);
    assert_eq!(s.vm(Vm::WorkingsetRestoreAnon), 1);
    let pfn = mapped(&s, mm, start);
    assert!(s.test(pfn, pg::ACTIVE) && s.test(pfn, pg::WORKINGSET));
    // The shadow went with the slot.
    assert!(s.k.swap.as_ref().unwrap().slots[slot as usize].is_free());
    s.check();
}

/// A page in the swap cache whose PTE is a swap entry: swapped in on a device without
/// SWP_SYNCHRONOUS_IO, then unmapped (as reclaim does before it frees a folio).
fn swapcache_hit_setup(s: &mut Sys) -> (u32, u64, Pfn) {
    s.k.swap.as_mut().unwrap().synchronous_io = false;
    let (mm, start) = populated(s);
    reclaim(s, mm, start);
    s.fault(mm, start, false);
    s.drain();
    s.k.swap.as_mut().unwrap().synchronous_io = true;
    let pfn = mapped(s, mm, start);
    rmap::try_to_unmap(&mut s.k, pfn);
    assert!(swap_entry(s, mm, start).is_some());
    assert!(s.test(pfn, pg::SWAPCACHE));
    s.check();
    (mm, start, pfn)
}

#[test]
fn a_swap_cache_hit_keeps_the_slot_on_a_load_and_frees_it_on_a_lone_write() {
    let mut s = machine("zram");
    let (mm, start, pfn) = swapcache_hit_setup(&mut s);
    let majfault = s.vm(Vm::Pgmajfault);
    s.fault(mm, start, false);
    assert_eq!(
        s.vm(Vm::Pgmajfault),
        majfault,
        "a swap-cache hit is a minor fault"
    );
    assert_eq!(mapped(&s, mm, start), pfn);
    assert!(
        s.test(pfn, pg::SWAPCACHE),
        "swap not full, no write: slot kept"
    );
    s.check();

    let mut s = machine("zram");
    let (mm, start, pfn) = swapcache_hit_setup(&mut s);
    s.fault(mm, start, true);
    assert!(
        !s.test(pfn, pg::SWAPCACHE),
        "a write with the only reference frees it"
    );
    assert!(s.test(pfn, pg::DIRTY));
    assert_eq!(slots_in_use(&s), 0);
    s.check();

    // The same write while a per-CPU batch holds a reference (folio_ref_count() > 2).
    let mut s = machine("zram");
    let (mm, start, pfn) = swapcache_hit_setup(&mut s);
    batch::folio_activate(&mut s.k, &mut s.p, pfn);
    assert_eq!(s.k.folios[pfn as usize].pins(), 1);
    s.fault(mm, start, true);
    assert!(s.test(pfn, pg::SWAPCACHE), "another reference: slot kept");
    s.check();
}

#[test]
fn a_swap_cache_hit_frees_the_slot_when_swap_is_over_half_full() {
    let mut s = Sys::new(
        "[machine]\nmemory = \"64MiB\"\ncpus = 4\nswap = { device = \"zram\", size = \"64KiB\" }\n",
    );
    let (mm, start, pfn) = swapcache_hit_setup(&mut s);
    // Take slots until fewer than half are free (vm_swap_full).
    while !s.k.swap.as_ref().unwrap().full() {
        s.k.get_swap_slot(ROOT).expect("a free slot");
    }
    s.fault(mm, start, false);
    assert!(
        !s.test(pfn, pg::SWAPCACHE),
        "a load frees it when swap is full"
    );
    s.check();
}

#[test]
fn rereading_swapped_pages_writes_them_out_again() {
    for policy in ["classic", "mglru"] {
        for device in ["zram", "ramdisk"] {
            let r = run_checked(&swap_reread(policy, device, None));
            let (pswpin, pswpout) = (vmstat(&r, "pswpin"), vmstat(&r, "pswpout"));
            assert!(pswpin > 4096, "{policy} {device}: pswpin {pswpin}");
            // Every page swapped in and evicted again is written again; with the swap
            // cache kept, only the first eviction of each page wrote it.
            assert!(
                pswpout >= pswpin,
                "{policy} {device}: pswpout {pswpout} < pswpin {pswpin}"
            );
        }
    }
}

#[test]
fn the_checker_knows_who_owns_a_slot() {
    let mut s = machine("zram");
    let (mm, start) = populated(&mut s);
    reclaim(&mut s, mm, start);
    s.fault(mm, start, false);
    s.check();
    let pfn = mapped(&s, mm, start);
    // A folio out of the swap cache that still names a slot.
    s.k.folio_swap[pfn as usize] = 0;
    assert!(s.check_result().is_err());
    s.k.folio_swap[pfn as usize] = NIL;
    // A slot cached by a folio that is not in the swap cache.
    let slot = s.k.get_swap_slot(ROOT).unwrap();
    s.k.swap.as_mut().unwrap().slots[slot as usize] =
        reclaimsim::kernel::swap::SwapSlot::cached(pfn);
    let e = s.check_result().unwrap_err();
    assert!(e.contains("is cached by"), "{e}");
    // Two PTEs naming one slot (a swap count of 2, which the model never makes).
    s.k.swap.as_mut().unwrap().slots[slot as usize] = reclaimsim::kernel::swap::SwapSlot::used(0);
    reclaim(&mut s, mm, start + 1);
    let other = swap_entry(&s, mm, start + 1).unwrap();
    *s.k.mms[mm as usize].pte_mut(start + 2).unwrap() = reclaimsim::kernel::mm::Pte::swap(other);
    let e = s.check_result().unwrap_err();
    assert!(
        e.contains("named by 2 PTEs") || e.contains("mapcount"),
        "{e}"
    );
}
