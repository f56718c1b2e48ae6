//! zram's writeback to a backing device as Linux 6.1 has it (docs/model/page-cache-swap.md):
//! idle marking and what clears it, "idle" and "huge" writeback moving pages from the
//! pool to the device, swap-ins of written-back pages reading from it at its latency,
//! freed slots freeing their blocks, writeback_limit; and zram's comp_algorithm. The
//! tests drive kernel functions on a small classic-LRU machine and run the checker.

mod common;

use common::Sys;
use reclaimsim::kernel::control::{self, Outcome, Sysctl, Write};
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::zram::{WritebackMode, Zram};

/// `Sys::zram_process` with its pages all swapped out to zram.
fn machine(zram: &str, content: &str, pages: u64) -> (Sys, u32, u64) {
    let (mut s, mm, start) = Sys::zram_process(zram, content, pages);
    assert_eq!(s.reclaim_range(mm, start, pages), pages);
    (s, mm, start)
}

const NVME: &str = ", backing_dev = { profile = \"nvme\" }";

fn z(s: &Sys) -> &Zram {
    s.k.swap.as_ref().unwrap().zram.as_deref().unwrap()
}

/// bd_stat's bd_count, bd_reads, bd_writes.
fn bd(s: &Sys) -> (u64, u64, u64) {
    let b = &z(s).backing.as_ref().unwrap().stats;
    (b.bd_count, b.bd_reads, b.bd_writes)
}

fn write(s: &mut Sys, w: Sysctl) -> Outcome {
    control::write(&mut s.k, &mut s.p, &Write::Sysctl(w))
}

#[test]
fn idle_writeback_moves_the_idle_slots_to_the_device() {
    let (mut s, _, _) = machine(NVME, "items2000 = 100", 32);
    assert!(z(&s).pool_pages() > 0);
    // Nothing is idle yet: "idle" writes nothing back.
    assert_eq!(
        write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle)),
        Outcome::Ok
    );
    assert_eq!(bd(&s), (0, 0, 0));
    assert_eq!(write(&mut s, Sysctl::ZramIdle), Outcome::Ok);
    let t = s.k.cur.clock;
    assert_eq!(
        write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle)),
        Outcome::Ok
    );
    assert_eq!(bd(&s), (32, 0, 32));
    // One page at a time, each waiting for its write (submit_bio_wait).
    let c = &s.k.costs;
    assert!(s.k.cur.clock - t >= 32 * (c.nvme_write_latency + c.nvme_write_page));
    // The pool is empty, the pages still stored (orig_data_size), none compressed.
    assert_eq!(z(&s).pool_pages(), 0);
    assert_eq!(z(&s).stats.pages_stored, 32);
    assert_eq!(z(&s).stats.compr_data_size, 0);
    let dev = z(&s).backing.as_ref().unwrap().ssd.stats;
    assert_eq!((dev.writes, dev.bytes_written), (32, 32 * 4096));
    assert_eq!(s.vm(Vm::Pgpgout), 32 * 4);
    s.check();
}

#[test]
fn a_swap_in_of_a_written_back_slot_reads_the_device_at_its_latency() {
    let (mut s, mm, start) = machine(NVME, "items2000 = 100", 8);
    write(&mut s, Sysctl::ZramIdle);
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!(bd(&s), (8, 0, 8));
    let t = s.k.cur.clock;
    s.fault(mm, start, false);
    let took = s.k.cur.clock - t;
    let c = &s.k.costs;
    assert!(took >= c.nvme_read_latency + c.nvme_read_page, "{took} ns");
    // Read once from the device; the skip-swapcache swap-in then frees the slot, which
    // waits in the CPU's return cache (the block with it).
    assert_eq!(bd(&s), (8, 1, 8));
    assert_eq!(z(&s).backing.as_ref().unwrap().stats.failed_reads, 1);
    assert_eq!((s.vm(Vm::Pswpin), s.vm(Vm::Pgmajfault)), (1, 1));
    // A page still in the pool costs its decompression only.
    let (mut s2, mm2, start2) = machine(NVME, "items2000 = 100", 8);
    let t = s2.k.cur.clock;
    s2.fault(mm2, start2, false);
    assert!(s2.k.cur.clock - t < c.nvme_read_latency);
    assert_eq!(bd(&s2), (0, 0, 0));
    s.drain();
    s.check();
}

#[test]
fn a_slot_read_after_the_idle_mark_is_not_idle_and_stays_in_ram() {
    let (mut s, mm, start) = machine(NVME, "items2000 = 100", 8);
    write(&mut s, Sysctl::ZramIdle);
    let slot = s.slot_of(mm, start);
    assert!(z(&s).idle(slot));
    // Through the swap cache the read keeps the slot (a clean swap-cache folio): the
    // read (zram_accessed) clears ZRAM_IDLE.
    s.k.swap.as_mut().unwrap().synchronous_io = false;
    s.fault(mm, start, false);
    assert!(!z(&s).idle(slot));
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!(bd(&s).0, 7);
    assert!(!z(&s).written_back(slot));
    assert!(z(&s).written_back(s.slot_of(mm, start + 1)));
    // A page swapped in and out again is written afresh, not idle either.
    let (mut s, mm, start) = machine(NVME, "items2000 = 100", 8);
    write(&mut s, Sysctl::ZramIdle);
    s.fault(mm, start, true);
    s.drain();
    assert_eq!(s.reclaim_range(mm, start, 1), 1);
    assert!(!z(&s).idle(s.slot_of(mm, start)));
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!(bd(&s).0, 7);
    s.drain();
    s.check();
}

#[test]
fn huge_writeback_takes_only_the_huge_slots() {
    let (mut s, mm, start) = machine(NVME, "items2000 = 50, random = 50", 64);
    let huge = z(&s).stats.huge_pages;
    assert!(huge > 0 && huge < 64, "{huge}");
    let pool = z(&s).pool_pages();
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::Huge));
    assert_eq!(bd(&s).0, huge);
    assert_eq!(z(&s).stats.huge_pages, 0);
    assert!(z(&s).pool_pages() < pool && z(&s).pool_pages() > 0);
    for i in 0..64 {
        let slot = s.slot_of(mm, start + i);
        let is_huge = s.k.mms[mm as usize].content.random > 0
            && reclaimsim::kernel::zswap::Content::of(
                s.k.mms[mm as usize].content,
                mm,
                (start + i) as u32,
            ) == reclaimsim::kernel::zswap::Content::Random;
        assert_eq!(z(&s).written_back(slot), is_huge, "page {i}");
    }
    // huge_idle: nothing is idle, nothing more goes.
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::HugeIdle));
    assert_eq!(bd(&s).0, huge);
    s.check();
}

#[test]
fn freeing_a_written_back_slot_frees_its_block() {
    let (mut s, mm, start) = machine(NVME, "items2000 = 100", 64);
    write(&mut s, Sysctl::ZramIdle);
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!(bd(&s).0, 64);
    // Each skip-swapcache swap-in frees its slot into the CPU's return cache; when 64
    // go back to the swap map (swap_range_free), zram_slot_free_notify frees each
    // slot's data: its block.
    for i in 0..63 {
        s.fault(mm, start + i, false);
    }
    assert_eq!(bd(&s), (64, 63, 64));
    s.fault(mm, start + 63, false);
    assert_eq!(bd(&s), (0, 64, 64));
    assert_eq!(z(&s).stats.pages_stored, 0);
    // The blocks are taken again.
    s.drain();
    assert_eq!(s.reclaim_range(mm, start, 64), 64);
    write(&mut s, Sysctl::ZramIdle);
    write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!(bd(&s).0, 64);
    s.check();
}

#[test]
fn writeback_stops_at_its_limit_and_on_a_full_device() {
    let (mut s, _, _) = machine(NVME, "items2000 = 100", 16);
    write(&mut s, Sysctl::ZramIdle);
    write(&mut s, Sysctl::ZramWritebackLimitEnable(true));
    write(&mut s, Sysctl::ZramWritebackLimit(5));
    let r = write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!((r, bd(&s).0), (Outcome::Err("EIO"), 5));
    assert_eq!(z(&s).bd_wb_limit, 0);
    // Off again: the rest go.
    write(&mut s, Sysctl::ZramWritebackLimitEnable(false));
    assert_eq!(
        write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle)),
        Outcome::Ok
    );
    assert_eq!(bd(&s).0, 16);
    // A device of 8 blocks holds 7 pages (block 0 is never used): then -ENOSPC.
    let (mut s, _, _) = machine(
        ", backing_dev = { profile = \"sata\", size = \"32KiB\" }",
        "items2000 = 100",
        16,
    );
    write(&mut s, Sysctl::ZramIdle);
    let r = write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!((r, bd(&s).0), (Outcome::Err("ENOSPC"), 7));
    s.check();
}

#[test]
fn without_a_backing_device_writeback_fails_with_enodev_and_keeps_no_slot_state() {
    let (mut s, _, _) = machine("", "items2000 = 100", 8);
    assert!(z(&s).backing.is_none());
    let bytes = z(&s).host_bytes();
    let r = write(&mut s, Sysctl::ZramWriteback(WritebackMode::Idle));
    assert_eq!(r, Outcome::Err("ENODEV"));
    assert_eq!(z(&s).host_bytes(), bytes, "no per-slot flags");
    // Marking idle works (6.1's idle_store needs no backing device) and then keeps
    // the flags.
    write(&mut s, Sysctl::ZramIdle);
    assert!(z(&s).host_bytes() > bytes);
}

#[test]
fn zram_compresses_with_its_comp_algorithm() {
    let spent = |algo: &str| {
        let (s, _, _) = machine(
            &format!(", comp_algorithm = \"{algo}\""),
            "items2000 = 100",
            16,
        );
        (s.k.cur.clock, s.k.costs.clone())
    };
    let (lzo_rle, c) = spent("lzo-rle");
    let (zstd, _) = spent("zstd");
    let (lz4, _) = spent("lz4");
    assert_eq!(zstd - lzo_rle, 16 * (c.zstd_compress - c.zram_compress));
    assert_eq!(lzo_rle - lz4, 16 * (c.zram_compress - c.lz4_compress));
    // The default is lzo-rle.
    let (s, _, _) = machine("", "items2000 = 100", 16);
    assert_eq!(s.k.cur.clock, lzo_rle);
}

/// The writeback runs in its event's task while the process faults its pages back and
/// reclaim writes others: slots freed, rewritten or read while their write is in
/// flight are dropped from writeback (checked: zram holds data only for slots in use,
/// its blocks agree with its table), and the pages written back are read from the
/// device.
#[test]
fn writeback_while_the_process_runs_keeps_the_invariants() {
    let r = common::run_checked(
        r#"name = "concurrent"
seed = 1
[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "128MiB", backing_dev = { profile = "sata" } }
[[workload]]
name = "app"
page_content = { items32 = 70, zero = 10, random = 20 }
[workload.anon]
size = "80MiB"
populate = true
pattern = "zipf:0.8"
accesses = 150000
[[event]]
at = "60ms"
sysctl = "zram.idle"
value = "all"
[[event]]
at = "70ms"
sysctl = "zram.writeback"
value = "idle"
"#,
    );
    assert!(r.events.iter().all(|e| e.result == "ok"), "{:?}", r.events);
    let bd = r.zram.unwrap().bd_stat.unwrap();
    assert!(bd.bd_writes > 1000 && bd.bd_reads > 0, "{bd:?}");
    assert!(bd.bd_count < bd.bd_writes);
    assert_eq!(bd.device.bytes_written, bd.bd_writes * 4096);
}
