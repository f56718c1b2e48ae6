//! zswap as Linux 6.1 has it (docs/model/page-cache-swap.md): stores before the device
//! write, same-filled pages kept as their word, incompressible pages rejected to the
//! device, the pool's limit with its accept threshold, the shrink worker writing back the
//! oldest zpool page (zbud, z3fold; never with zsmalloc), loads before the device read,
//! and the pool's pages taken from RAM. The first tests drive kernel functions on a small
//! classic-LRU machine and run the checker; the others run whole scenarios.

mod common;

use common::{run_checked, vmstat, Sys};
use reclaimsim::kernel::memcg::{MemcgId, ROOT};
use reclaimsim::kernel::stats::Vm;

/// 64 MiB, 2 CPUs, a 64 MiB ramdisk with zswap `zswap` (the inside of its table) and one
/// process of `pages` anon pages holding `content` (the inside of a page_content table).
fn machine(zswap: &str, content: &str, pages: u64) -> (Sys, u32, u64) {
    machine_in("", ROOT, zswap, content, pages)
}

/// `machine`, with the `[[memcg]]` tables `memcgs` and the process in memcg `memcg`.
fn machine_in(
    memcgs: &str,
    memcg: MemcgId,
    zswap: &str,
    content: &str,
    pages: u64,
) -> (Sys, u32, u64) {
    let mut s = Sys::new(&format!(
        "[machine]\nmemory = \"64MiB\"\ncpus = 2\n\
         swap = {{ device = \"ramdisk\", size = \"64MiB\", zswap = {{ {zswap} }} }}\n{memcgs}"
    ));
    let (mm, start) = s.process(memcg, None, pages);
    s.k.mms[mm as usize].content = common::page_content(content);
    for i in 0..pages {
        s.fault(mm, start + i, true);
    }
    s.drain();
    (s, mm, start)
}

/// Frames allocated (anon, page cache, zpool).
fn allocated(s: &Sys) -> usize {
    let a = reclaimsim::kernel::folio::pg::ALLOCATED;
    s.k.folios.iter().filter(|f| f.test(a)).count()
}

fn z(s: &Sys) -> &reclaimsim::kernel::zswap::Zswap {
    s.k.swap.as_ref().unwrap().zswap.as_deref().unwrap()
}

#[test]
fn compressible_pages_go_to_the_pool_and_not_to_the_device() {
    let (mut s, mm, start) = machine("", "items2000 = 100", 16);
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    assert_eq!((s.vm(Vm::Zswpout), s.vm(Vm::Pswpout)), (16, 0));
    // 119 bytes and the 8-byte header: 2 chunks, two objects a zbud page.
    assert_eq!(z(&s).stored_pages, 16);
    assert_eq!(z(&s).pool_pages(), 8);
    // Swapping them in decompresses: zswpin, no pswpin; a major fault all the same.
    for i in 0..16 {
        s.fault(mm, start + i, false);
    }
    assert_eq!((s.vm(Vm::Zswpin), s.vm(Vm::Pswpin)), (16, 0));
    assert_eq!(s.vm(Vm::Pgmajfault), 16);
    s.drain();
    s.check();
}

#[test]
fn an_incompressible_page_is_rejected_and_goes_to_the_device() {
    for zpool in ["zbud", "z3fold", "zsmalloc"] {
        let (mut s, mm, start) = machine(&format!("zpool = \"{zpool}\""), "random = 100", 8);
        assert_eq!(s.reclaim_range(mm, start, 8), 8);
        assert_eq!((s.vm(Vm::Zswpout), s.vm(Vm::Pswpout)), (0, 8), "{zpool}");
        let c = z(&s).counters;
        // zbud and z3fold refuse it (-ENOSPC); zsmalloc's zs_malloc fails above a page.
        let rejected = c.reject_compress_poor + c.reject_alloc_fail;
        assert_eq!(rejected, 8, "{zpool}");
        assert_eq!(z(&s).pool_pages(), 0, "{zpool}");
        s.check();
    }
}

#[test]
fn same_filled_pages_are_kept_without_compression_and_take_no_pool_memory() {
    let (mut s, mm, start) = machine("", "zero = 100", 8);
    let before = allocated(&s);
    assert_eq!(s.reclaim_range(mm, start, 8), 8);
    assert_eq!(z(&s).same_filled_pages, 8);
    assert_eq!(z(&s).pool_pages(), 0);
    assert_eq!(allocated(&s) + 8, before);
    // Turned off, they are compressed like any page (27 bytes: two a zbud page).
    let (mut s, mm, start) = machine("same_filled_pages = false", "zero = 100", 8);
    assert_eq!(s.reclaim_range(mm, start, 8), 8);
    assert_eq!(z(&s).same_filled_pages, 0);
    assert_eq!(z(&s).pool_pages(), 4);
    s.check();
}

#[test]
fn the_pool_takes_its_pages_from_ram_and_gives_them_back() {
    let (mut s, mm, start) = machine("zpool = \"z3fold\"", "items32 = 100", 70);
    let before = allocated(&s);
    assert_eq!(s.reclaim_range(mm, start, 70), 70);
    // 984 + 8 bytes: 16 chunks; three a z3fold page.
    assert_eq!(z(&s).pool_pages(), 24);
    assert_eq!(
        allocated(&s) + 70,
        before + 24,
        "the pool's pages came from RAM"
    );
    s.check();
    // Swap-in keeps the entry (6.1's load is not exclusive), and freeing a slot does not
    // drop it at once either: the slot waits in the CPU's return cache, and its return
    // to the swap map (swap_range_free, 64 slots at a time) invalidates the entry.
    for i in 0..63 {
        s.fault(mm, start + i, false);
    }
    assert_eq!(z(&s).stored_pages, 70);
    s.fault(mm, start + 63, false);
    assert_eq!(z(&s).stored_pages, 6);
    assert!(z(&s).pool_pages() <= 3);
    s.drain();
    s.check();
}

/// A machine whose zswap pool may hold `percent` of its 16 MiB, filled with pages that
/// compress to 984 bytes, in `zpool`.
fn filling(zpool: &str, percent: u32) -> (Sys, u32, u64) {
    let (mut s, mm, start) = machine(
        &format!("zpool = \"{zpool}\", max_pool_percent = {percent}"),
        "items32 = 100",
        1024,
    );
    // The pool's limit: 64 MiB (16384 pages) x percent / 100.
    s.reclaim_range(mm, start, 1024);
    (s, mm, start)
}

#[test]
fn a_full_pool_rejects_stores_and_writes_back_its_oldest_page() {
    // 1% of 16384 pages is 163 zbud pages: 326 objects, the rest goes to the device.
    let (s, mm, start) = filling("zbud", 1);
    let c = z(&s).counters;
    assert!(c.pool_limit_hit > 0);
    assert!(c.written_back_pages > 0, "the shrink worker wrote back");
    // One zbud page of two objects a worker run.
    assert_eq!(
        c.written_back_pages,
        2 * (c.pool_limit_hit - c.reject_reclaim_fail)
    );
    assert_eq!(s.vm(Vm::Zswpwb), c.written_back_pages);
    // Every page reclaimed went somewhere: the pool, or the device (rejected or written
    // back later).
    assert_eq!(s.vm(Vm::Zswpout), z(&s).stored_pages + c.written_back_pages);
    assert!(z(&s).pool_pages() <= 164);
    // The oldest pages went: the first two pages stored (one zbud page) are on the
    // device now, the last one stored is still in the pool.
    for i in 0..2 {
        assert!(!z(&s).has_entry(s.slot_of(mm, start + i)), "page {i}");
    }
    let stored_last = (0..1024)
        .rev()
        .find(|&i| z(&s).has_entry(s.slot_of(mm, start + i)));
    assert!(stored_last.is_some());
    s.check();
}

#[test]
fn zsmalloc_never_writes_back() {
    let (s, ..) = filling("zsmalloc", 1);
    let c = z(&s).counters;
    assert!(c.pool_limit_hit > 0);
    assert_eq!(c.written_back_pages, 0);
    assert_eq!(c.reject_reclaim_fail, c.pool_limit_hit);
    s.check();
}

#[test]
fn after_filling_the_pool_refuses_stores_until_below_the_accept_threshold() {
    let (mut s, mm, start) = filling("zbud", 1);
    let c = z(&s).counters;
    // The shrink worker took the pool below its limit (163 pages), but not below 90%
    // of it: zswap_pool_reached_full stays set, and the stores after a limit hit were
    // refused without counting one.
    assert!(z(&s).reached_full);
    assert!(z(&s).pool_pages() <= 163);
    assert!(1024 - s.vm(Vm::Zswpout) - c.pool_limit_hit > 0);
    // Swap everything in: the entries go as the slots return to the swap map, and the
    // pool is empty.
    for i in 0..1024 {
        s.fault(mm, start + i, false);
    }
    s.drain();
    assert_eq!((z(&s).stored_pages, z(&s).pool_pages()), (0, 0));
    // Below the threshold, the next store is taken and clears reached_full.
    let before = s.vm(Vm::Zswpout);
    assert_eq!(s.reclaim_range(mm, start, 100), 100);
    assert_eq!(s.vm(Vm::Zswpout), before + 100);
    assert!(!z(&s).reached_full);
    s.check();
}

const SCENARIO: &str = r#"
name = "zswap"
[machine]
memory = "32MiB"
cpus = 2
swap = { device = "ramdisk", size = "64MiB", zswap = { max_pool_percent = 10 } }
[kernel]
policy = "POLICY"
[[workload]]
name = "anon"
page_content = { items32 = 80, zero = 10, random = 10 }
[workload.anon]
size = "40MiB"
populate = true
pattern = "random"
accesses = 30000
"#;

#[test]
fn a_run_with_zswap_fills_the_pool_and_writes_back_under_both_policies() {
    for policy in ["classic", "mglru"] {
        let r = run_checked(&SCENARIO.replace("POLICY", policy));
        let z = r.zswap.as_ref().expect("zswap results");
        assert!(vmstat(&r, "zswpout") > 0, "{policy}");
        assert!(z.written_back_pages > 0, "{policy}");
        assert_eq!(vmstat(&r, "zswpwb"), z.written_back_pages, "{policy}");
        assert!(z.same_filled_pages > 0, "{policy}");
        assert!(z.reject_compress_poor > 0, "{policy}: the random pages");
        assert!(vmstat(&r, "pswpout") > 0, "{policy}");
        let root = &r.memcgs["/"].stat;
        assert_eq!(root["zswapped"], z.stored_pages * 4096, "{policy}");
        assert!(root["zswap"] > 0, "{policy}");
    }
    // Without zswap the results have none of it.
    let text = SCENARIO
        .replace("POLICY", "classic")
        .replace(", zswap = { max_pool_percent = 10 }", "");
    let r = run_checked(&text);
    assert!(r.zswap.is_none());
    assert!(!r.vmstat.contains_key("zswpout"));
    assert!(!r.memcgs["/"].stat.contains_key("zswap"));
}

/// memory.zswap.max (6.1's obj_cgroup_may_zswap and obj_cgroup_charge_zswap): /a/b's
/// pages under the memcgs `memcgs` (TOML), 16 of them compressing to 984 bytes.
fn in_memcg(memcgs: &str) -> (Sys, u32, u64) {
    let tables = format!("[[memcg]]\npath = \"/a\"\n{memcgs}\n[[memcg]]\npath = \"/a/b\"\n");
    machine_in(&tables, 2, "", "items32 = 100", 16)
}

#[test]
fn a_memcg_at_zswap_max_zero_never_stores_and_queues_the_shrink_worker() {
    let (mut s, mm, start) = in_memcg("zswap_max = \"0\"");
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    // The limit of /a holds for /a/b below it: every page went to the device.
    assert_eq!((s.vm(Vm::Zswpout), s.vm(Vm::Pswpout)), (0, 16));
    assert_eq!(s.memcg_vm(2, Vm::Zswpout), 0);
    assert_eq!(s.memcg_vm(2, Vm::Pswpout), 16);
    // 6.1 goes to `shrink` on the memcg's limit: each refusal runs the shrink worker,
    // which found an empty pool.
    assert_eq!(z(&s).counters.reject_reclaim_fail, 16);
    assert_eq!(z(&s).stored_pages, 0);
    s.check();
}

#[test]
fn a_memcg_stores_until_its_subtree_holds_zswap_max() {
    // 8 KiB: two pages. Eight entries of 984 bytes are 7872 bytes (one page, rounded
    // down as obj_cgroup_may_zswap divides), the ninth takes it to 8856 (two): the
    // tenth is refused, and its refusal runs the shrink worker, which writes back the
    // pool's oldest zbud page (two entries), so the next store fits again.
    let (mut s, mm, start) = in_memcg("zswap_max = \"8KiB\"");
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    let (zswpout, pswpout, wb) = (s.vm(Vm::Zswpout), s.vm(Vm::Pswpout), s.vm(Vm::Zswpwb));
    assert_eq!((zswpout, pswpout, wb), (13, 9, 6));
    assert_eq!(z(&s).stored_pages, zswpout - wb);
    assert_eq!(
        pswpout,
        (16 - zswpout) + wb,
        "the refused and the written back"
    );
    assert!(z(&s).memcg_bytes[2] / 4096 <= 2);
    // "max" (no limit, as when absent): all sixteen stored.
    let (mut s, mm, start) = in_memcg("zswap_max = \"max\"");
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    assert_eq!((s.vm(Vm::Zswpout), s.vm(Vm::Pswpout)), (16, 0));
    s.check();
}

#[test]
fn a_memcgs_compressed_bytes_count_in_its_memory_current() {
    let (mut s, mm, start) = in_memcg("");
    let usage = |s: &Sys, m: usize| s.k.memcgs.cgs[m].usage;
    let (a, b, root) = (usage(&s, 1), usage(&s, 2), usage(&s, 0));
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    // 16 frames freed, 16 x 984 bytes charged: 15744 bytes, four pages rounded up; the
    // pool's own pages (zbud's eight, two objects each) are charged to no memcg.
    assert_eq!(z(&s).memcg_charged[2], 4);
    assert_eq!(usage(&s, 2), b - 16 + 4);
    assert_eq!(
        usage(&s, 1),
        a - 16 + 4,
        "hierarchical, as page_counter's charge"
    );
    assert_eq!(usage(&s, 0), root - 16 + 4);
    assert_eq!(z(&s).pool_pages(), 8);
    s.check();
    // Swap-in frees the slots into the CPU's return cache; their return to the swap map
    // (swap_range_free's invalidation, called here for each) uncharges.
    let slots: Vec<u32> = (0..16).map(|i| s.slot_of(mm, start + i)).collect();
    for i in 0..16 {
        s.fault(mm, start + i, false);
    }
    s.drain();
    for slot in slots {
        reclaimsim::kernel::zswap::invalidate(&mut s.k, slot);
    }
    assert_eq!(z(&s).memcg_charged[2], 0);
    assert_eq!(usage(&s, 2), b);
    s.check();
}

#[test]
fn a_memory_zswap_max_event_stops_the_memcgs_stores() {
    // The base scenario's process in /a, and at 0 s a write of 0 to its memory.zswap.max.
    let text = SCENARIO.replace("POLICY", "classic")
        + "[[memcg]]\npath = \"/a\"\n\
           [[event]]\nat = \"0s\"\nmemcg = \"/a\"\nfile = \"memory.zswap.max\"\nvalue = \"0\"\n";
    let text = text.replacen("[workload.anon]", "memcg = \"/a\"\n[workload.anon]", 1);
    let r = run_checked(&text);
    assert_eq!(r.events[0].command, "echo 0 > /a/memory.zswap.max");
    assert_eq!(r.memcgs["/a"].stat["zswpout"], 0);
    assert!(vmstat(&r, "pswpout") > 0);
    assert_eq!(r.zswap.as_ref().unwrap().stored_pages, 0);
}

fn zr(s: &Sys) -> &reclaimsim::kernel::zram::Zram {
    s.k.swap.as_ref().unwrap().zram.as_deref().unwrap()
}

#[test]
fn zram_keeps_pages_compressed_in_ram_charged_to_no_memcg() {
    let (mut s, mm, start) = Sys::zram_process("", "items2000 = 100", 64);
    let (before, usage) = (allocated(&s), s.k.memcgs.cgs[0].usage);
    assert_eq!(s.reclaim_range(mm, start, 64), 64);
    // 119 bytes: the 128-byte class, 32 a page: two pages for 64.
    assert_eq!(zr(&s).pool_pages(), 2);
    assert_eq!(
        allocated(&s) + 64,
        before + 2,
        "the pool's pages came from RAM"
    );
    assert_eq!(
        s.k.memcgs.cgs[0].usage + 64,
        usage,
        "and are charged to no memcg"
    );
    let st = zr(&s).stats;
    assert_eq!((st.pages_stored, st.compr_data_size), (64, 64 * 119));
    s.check();
    // Swap-in frees the slots; their return to the swap map frees zram's data
    // (zram_slot_free_notify), and the pool's pages go back.
    for i in 0..64 {
        s.fault(mm, start + i, false);
    }
    assert_eq!(zr(&s).stats.pages_stored, 0);
    assert_eq!(zr(&s).pool_pages(), 0);
    s.drain();
    s.check();
}

#[test]
fn zram_keeps_same_filled_pages_as_a_word_and_incompressible_ones_whole() {
    let (mut s, mm, start) = Sys::zram_process("", "zero = 100", 16);
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    assert_eq!((zr(&s).stats.same_pages, zr(&s).pool_pages()), (16, 0));
    let (mut s, mm, start) = Sys::zram_process("", "random = 100", 16);
    assert_eq!(s.reclaim_range(mm, start, 16), 16);
    // 4114 bytes is past zs_huge_class_size (3257): stored whole, a page each.
    let st = zr(&s).stats;
    assert_eq!((st.huge_pages, st.compr_data_size), (16, 16 * 4096));
    assert_eq!(zr(&s).pool_pages(), 16);
    s.check();
}

#[test]
fn a_write_past_zrams_mem_limit_fails_and_the_folio_stays() {
    // 16 KiB: four pages, four incompressible pages.
    let (mut s, mm, start) = Sys::zram_process(", mem_limit = \"16KiB\"", "random = 100", 8);
    assert_eq!(s.reclaim_range(mm, start, 8), 4);
    let st = zr(&s).stats;
    assert_eq!((st.pages_stored, zr(&s).pool_pages()), (4, 4));
    // Each failed swap-out tried twice (->rw_page, then the bio).
    assert_eq!(st.failed_writes, 8);
    // The four kept are in the swap cache, dirty again, back on the LRU.
    let dirty = (s.k.folios.iter())
        .filter(|f| f.test(reclaimsim::kernel::folio::pg::SWAPCACHE))
        .filter(|f| f.test(reclaimsim::kernel::folio::pg::DIRTY))
        .count();
    assert_eq!(dirty, 4);
    s.check();
}
