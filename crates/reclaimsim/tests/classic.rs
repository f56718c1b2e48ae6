//! Mechanism tests of the classic LRU against the kernel (docs/model/batches-locks.md and
//! docs/model/classic-lru.md): get_scan_count modes and arithmetic, refault distance,
//! per-CPU batch rules, the folio_mark_accessed state machine, and the invariant checker
//! itself. Each test drives kernel functions directly on a small machine and runs the
//! checker afterwards.

mod common;

use common::{flags, Sys};
use reclaimsim::kernel::folio::{lru, pg};
use reclaimsim::kernel::kswapd::{Kswapd, Next};
use reclaimsim::kernel::lru::classic::get_scan_count;
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::memcg::ROOT;
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::vmscan::{self, ScanControl};
use reclaimsim::kernel::Exec;

/// 64 MiB, 4 CPUs, no swap: watermarks [256, 320, 384] pages, far below what the tests use.
const MACHINE: &str = r#"
[machine]
memory = "64MiB"
cpus = 4
"#;

const MACHINE_SWAP: &str = r#"
[machine]
memory = "64MiB"
cpus = 4
swap = { device = "zram", size = "64MiB" }
"#;

const TWO_MEMCGS: &str = r#"
[[memcg]]
path = "/a"
[[memcg]]
path = "/b"
"#;

// ---------------------------------------------------------------------------------------
// get_scan_count (docs/model/classic-lru.md)
// ---------------------------------------------------------------------------------------

/// A machine for the pure get_scan_count arithmetic, with swap and the given swappiness,
/// and memcg /a.
fn scan_sys(swap: bool, swappiness: u32) -> Sys {
    let machine = if swap { MACHINE_SWAP } else { MACHINE };
    Sys::new(&format!(
        "{machine}\n[kernel]\nswappiness = {swappiness}\n[[memcg]]\npath = \"/a\"\n"
    ))
}

/// Sets the four evictable list sizes of an lruvec (the counters get_scan_count reads).
fn set_sizes(s: &mut Sys, lv: usize, sizes: [u64; 4]) {
    s.k.lruvecs[lv].nr[..4].copy_from_slice(&sizes);
}

/// Sizes that become [1000, 2000, 3000, 4000] after `>> DEF_PRIORITY`.
const SIZES_P12: [u64; 4] = [1000 << 12, 2000 << 12, 3000 << 12, 4000 << 12];

fn global_sc(priority: i32) -> ScanControl {
    let mut sc = ScanControl::new(32, None, false);
    sc.priority = priority;
    sc
}

#[test]
fn scan_count_file_only_without_swap() {
    let mut s = scan_sys(false, 60);
    let lv = s.lv(ROOT);
    set_sizes(&mut s, lv, SIZES_P12);
    // Mode 1 comes first: neither priority 0 nor file_is_tiny makes anon scannable.
    let mut sc = global_sc(12);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [0, 0, 3000, 4000]);
    let mut sc = global_sc(12);
    sc.file_is_tiny = true;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [0, 0, 3000, 4000]);
    let mut sc = global_sc(0);
    assert_eq!(
        get_scan_count(&s.k, lv, &mut sc),
        [0, 0, 3000 << 12, 4000 << 12]
    );
}

#[test]
fn scan_count_file_only_when_may_swap_is_false() {
    let mut s = scan_sys(true, 60);
    let lv = s.lv(ROOT);
    set_sizes(&mut s, lv, SIZES_P12);
    let mut sc = global_sc(12);
    sc.may_swap = false;
    sc.file_is_tiny = true;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [0, 0, 3000, 4000]);
    let mut sc = global_sc(0);
    sc.may_swap = false;
    assert_eq!(
        get_scan_count(&s.k, lv, &mut sc),
        [0, 0, 3000 << 12, 4000 << 12]
    );
    // With may_swap, the same lruvec at priority 0 is SCAN_EQUAL.
    let mut sc = global_sc(0);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), SIZES_P12);
}

#[test]
fn scan_count_cgroup_reclaim_with_swappiness_zero_is_file_only() {
    let mut s = scan_sys(true, 0);
    let a = s.memcg("/a");
    let lv = s.lv(a);
    set_sizes(&mut s, lv, SIZES_P12);
    for prio in [12, 0] {
        let mut sc = ScanControl::new(32, Some(a), false);
        sc.priority = prio;
        sc.file_is_tiny = true; // mode 2 wins over mode 4
        let shift = prio as u32;
        assert_eq!(
            get_scan_count(&s.k, lv, &mut sc),
            [0, 0, (3000 << 12) >> shift, (4000 << 12) >> shift],
            "priority {prio}"
        );
    }
}

#[test]
fn scan_count_equal_at_priority_zero_unless_swappiness_zero() {
    let mut s = scan_sys(true, 60);
    let lv = s.lv(ROOT);
    set_sizes(&mut s, lv, SIZES_P12);
    // SCAN_EQUAL beats file_is_tiny and cache_trim_mode.
    let mut sc = global_sc(0);
    sc.file_is_tiny = true;
    sc.cache_trim_mode = true;
    sc.anon_cost = 1000;
    sc.file_cost = 1;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), SIZES_P12);
    // Global reclaim with swappiness 0 at priority 0 is not SCAN_EQUAL but SCAN_FRACT with
    // ap = 0: anon is not scanned at all.
    s.k.cfg.swappiness = 0;
    let mut sc = global_sc(0);
    assert_eq!(
        get_scan_count(&s.k, lv, &mut sc),
        [0, 0, 3000 << 12, 4000 << 12]
    );
}

#[test]
fn scan_count_anon_only_when_file_is_tiny() {
    let mut s = scan_sys(true, 60);
    let lv = s.lv(ROOT);
    set_sizes(&mut s, lv, SIZES_P12);
    let mut sc = global_sc(12);
    sc.file_is_tiny = true;
    sc.cache_trim_mode = true; // mode 4 comes before mode 5
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [1000, 2000, 0, 0]);
}

#[test]
fn scan_count_file_only_in_cache_trim_mode() {
    let mut s = scan_sys(true, 60);
    let lv = s.lv(ROOT);
    set_sizes(&mut s, lv, SIZES_P12);
    let mut sc = global_sc(12);
    sc.cache_trim_mode = true;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [0, 0, 3000, 4000]);
}

/// Spec 5.4 step 6 and "apply the mode" for an online memcg, written out independently.
fn spec_fract(swappiness: u64, ac: u64, fc: u64, scan: [u64; 4]) -> [u64; 4] {
    let total = ac + fc;
    let a = total + ac;
    let f = total + fc;
    let t = a + f;
    let ap = swappiness * (t + 1) / (a + 1);
    let fp = (200 - swappiness) * (t + 1) / (f + 1);
    let d = ap + fp;
    [
        scan[0] * ap / d,
        scan[1] * ap / d,
        scan[2] * fp / d,
        scan[3] * fp / d,
    ]
}

#[test]
fn scan_count_fract_integer_arithmetic() {
    let mut s = scan_sys(true, 60);
    let lv = s.lv(ROOT);
    set_sizes(&mut s, lv, SIZES_P12);
    // anon_cost 100, file_cost 300, swappiness 60: total 400, A 500, F 700, T 1200;
    // ap = 60*1201/501 = 143, fp = 140*1201/701 = 239, denominator 382.
    let mut sc = global_sc(12);
    sc.anon_cost = 100;
    sc.file_cost = 300;
    assert_eq!(
        get_scan_count(&s.k, lv, &mut sc),
        [
            1000 * 143 / 382,
            2000 * 143 / 382,
            3000 * 239 / 382,
            4000 * 239 / 382
        ]
    );
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [374, 748, 1876, 2502]);
    // No cost history, swappiness 100: equal shares, truncated.
    s.k.cfg.swappiness = 100;
    set_sizes(&mut s, lv, [1001 << 12, 3 << 12, 1001 << 12, 1 << 12]);
    let mut sc = global_sc(12);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [500, 1, 500, 0]);
    // Swappiness 200 (MAX_SWAPPINESS): fp = 0, file gets nothing.
    s.k.cfg.swappiness = 200;
    set_sizes(&mut s, lv, SIZES_P12);
    let mut sc = global_sc(12);
    sc.anon_cost = 7;
    sc.file_cost = 9;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [1000, 2000, 0, 0]);
    // A sweep against get_scan_count's formula.
    for swappiness in [1u64, 10, 60, 100, 133, 199] {
        for (ac, fc) in [
            (0, 0),
            (1, 0),
            (0, 1),
            (5, 3),
            (1000, 10),
            (10, 1000),
            (123456, 654321),
        ] {
            for prio in [12, 7, 3, 1] {
                s.k.cfg.swappiness = swappiness as u32;
                let sizes = [123_457u64, 98_765, 4_000_000, 77_777];
                set_sizes(&mut s, lv, sizes);
                let mut sc = global_sc(prio);
                sc.anon_cost = ac;
                sc.file_cost = fc;
                let scan = sizes.map(|x| x >> prio);
                assert_eq!(
                    get_scan_count(&s.k, lv, &mut sc),
                    spec_fract(swappiness, ac, fc, scan),
                    "swappiness {swappiness} costs ({ac}, {fc}) priority {prio}"
                );
            }
        }
    }
}

#[test]
fn scan_count_memory_low_and_min_scaling() {
    // Priority 0 with swap and swappiness 60 is SCAN_EQUAL: the protected scan sizes show
    // unchanged.
    let mut s = scan_sys(true, 60);
    let a = s.memcg("/a");
    let lv = s.lv(a);
    let sizes = [1000, 2000, 3000, 4000];
    set_sizes(&mut s, lv, sizes);
    let protect = |s: &mut Sys, usage: u64, min: u64, low: u64| {
        let cg = &mut s.k.memcgs.cgs[a as usize];
        cg.usage = usage;
        cg.min = min;
        cg.low = low;
        s.k.memcgs.calculate_protection(ROOT, ROOT);
        s.k.memcgs.calculate_protection(ROOT, a);
    };

    // memory.low 6000 of usage 10000: scan = size - size*6000/10001, at least 32.
    protect(&mut s, 10_000, 0, 6000);
    let mut sc = global_sc(0);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [401, 801, 1201, 1601]);
    assert!(
        sc.memcg_low_skipped,
        "the low branch sets memcg_low_skipped"
    );
    // Tiny and empty lists still get SWAP_CLUSTER_MAX.
    set_sizes(&mut s, lv, [10, 0, 3000, 4000]);
    let mut sc = global_sc(0);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [32, 32, 1201, 1601]);
    set_sizes(&mut s, lv, sizes);

    // Under memcg_low_reclaim the low protection is ignored: prot = min = 0, so the full
    // size (still at least 32) is scanned.
    let mut sc = global_sc(0);
    sc.memcg_low_reclaim = true;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [1000, 2000, 3000, 4000]);
    assert!(!sc.memcg_low_skipped);

    // memory.min 8000: prot = 8000 and memcg_low_skipped stays clear.
    protect(&mut s, 10_000, 8000, 0);
    let mut sc = global_sc(0);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [201, 401, 601, 801]);
    assert!(!sc.memcg_low_skipped);

    // Both: low (6000) > min (2000) is used unless memcg_low_reclaim, then min.
    protect(&mut s, 10_000, 2000, 6000);
    let mut sc = global_sc(0);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [401, 801, 1201, 1601]);
    assert!(sc.memcg_low_skipped);
    let mut sc = global_sc(0);
    sc.memcg_low_reclaim = true;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [801, 1601, 2401, 3201]);

    // Usage below the protection: cgroup_size = max(usage, prot) = 6000.
    protect(&mut s, 3000, 0, 6000);
    set_sizes(&mut s, lv, [1_000_000, 3_000_000, 1000, 0]);
    let mut sc = global_sc(0);
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), [167, 500, 32, 32]);

    // At priority 12 the protected size is shifted, then weighted (SCAN_FRACT, no costs,
    // swappiness 60: ap = 60, fp = 140).
    protect(&mut s, 10_000, 0, 6000);
    set_sizes(&mut s, lv, SIZES_P12);
    let mut sc = global_sc(12);
    let protected = SIZES_P12.map(|x| x - x * 6000 / 10_001);
    assert_eq!(
        get_scan_count(&s.k, lv, &mut sc),
        spec_fract(60, 0, 0, protected.map(|x| x >> 12))
    );

    // The reclaim target itself is never protected.
    let mut sc = ScanControl::new(32, Some(a), false);
    sc.priority = 0;
    assert_eq!(get_scan_count(&s.k, lv, &mut sc), SIZES_P12);
    assert!(!sc.memcg_low_skipped);
}

// ---------------------------------------------------------------------------------------
// Refault distance (docs/model/workingset.md)
// ---------------------------------------------------------------------------------------

#[test]
fn refault_distance_decides_activation() {
    let mut s = Sys::new(&format!("{MACHINE}{TWO_MEMCGS}"));
    let a = s.memcg("/a");
    let (lv_a, lv_root) = (s.lv(a), s.lv(ROOT));
    // A hot file of 20 pages read twice: activated by folio_mark_accessed, which ages
    // nonresident_age by one per page in /a and in the root.
    let hot = s.file(20);
    for _pass in 0..2 {
        for i in 0..20 {
            s.read(a, hot, i);
        }
        s.drain();
    }
    assert_eq!(s.list(lv_a, "active_file").len(), 20);
    assert_eq!(s.k.lruvecs[lv_a].nonresident_age, 20);
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 20);
    // A cold file of 300 pages read once: inactive, referenced.
    let cold = s.file(300);
    for i in 0..300 {
        s.read(a, cold, i);
    }
    s.drain();
    assert_eq!(s.list(lv_a, "inactive_file").len(), 300);
    s.check();

    // Direct reclaim (no swap: SCAN_FILE, active file untouched because neither refaults
    // nor inactive_is_low ask for deactivation) at priorities 12, 11, ... scans
    // inactive_file >> priority: 0,0,0,0, then 300>>8 = 1, 299>>7 = 2, 297>>6 = 4,
    // 293>>5 = 9, 284>>4 = 17: 33 >= 32 pages reclaimed after priority 4. The oldest go
    // first: cold pages 0..33.
    let reclaimed = vmscan::try_to_free_pages(&mut s.k, &mut s.p, 0);
    assert_eq!(reclaimed, 33);
    let n = 33u64;
    for i in 0..300 {
        assert_eq!(s.has_shadow(cold, i), i < n, "cold page {i}");
    }
    assert_eq!(s.vm(Vm::PgstealDirect), n);
    assert_eq!(s.vm(Vm::PgscanDirect), n);
    // Global reclaim: the shadows record the root lruvec's clock (20 + i for cold page
    // i), and each eviction ages the root lruvec (and its ancestors), not /a.
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 20 + n);
    assert_eq!(s.k.lruvecs[lv_a].nonresident_age, 20);
    s.check();

    // Refault distance of cold page i = 53 - (20 + i) = 33 - i; the workingset size is
    // the root's (hierarchical) NR_ACTIVE_FILE = 20 (no swap: no anon terms).
    // Page 12: distance 21 > 20: not activated, the clock does not move.
    s.read(a, cold, 12);
    let p12 = s.page(cold, 12);
    assert!(!s.test(p12, pg::ACTIVE), "distance 21: {}", flags(&s, p12));
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 20 + n);
    // Page 13: distance 20 <= 20: activated; the activation ages /a and the root.
    s.read(a, cold, 13);
    let p13 = s.page(cold, 13);
    assert!(s.test(p13, pg::ACTIVE), "distance 20: {}", flags(&s, p13));
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 20 + n + 1);
    assert_eq!(s.k.lruvecs[lv_a].nonresident_age, 21);
    // Page 32: distance 54 - 52 = 2: activated. Page 0: distance 55 - 20 = 35: not.
    s.read(a, cold, 32);
    s.read(a, cold, 0);
    let (p32, p0) = (s.page(cold, 32), s.page(cold, 0));
    assert!(s.test(p32, pg::ACTIVE), "distance 2: {}", flags(&s, p32));
    assert!(!s.test(p0, pg::ACTIVE), "distance 35: {}", flags(&s, p0));
    // No shadow had the workingset bit (the cold pages were never deactivated).
    assert_eq!(s.vm(Vm::WorkingsetRefaultFile), 4);
    assert_eq!(s.vm(Vm::WorkingsetActivateFile), 2);
    assert_eq!(s.vm(Vm::WorkingsetRestoreFile), 0);
    assert_eq!(s.memcg_vm(a, Vm::WorkingsetRefaultFile), 4);
    assert_eq!(s.memcg_vm(a, Vm::WorkingsetActivateFile), 2);
    assert_eq!(s.k.lruvecs[lv_a].workingset_activate, [0, 2]);
    // Activated refaults land on the active list when the batch is drained.
    s.drain();
    assert_eq!(s.list_of(p13).as_deref(), Some("active_file"));
    assert_eq!(s.list_of(p32).as_deref(), Some("active_file"));
    assert_eq!(s.list_of(p12).as_deref(), Some("inactive_file"));
    assert_eq!(s.list_of(p0).as_deref(), Some("inactive_file"));
    s.check();
}

#[test]
fn refault_of_a_deactivated_page_restores_the_workingset() {
    let mut s = Sys::new(&format!("{MACHINE}{TWO_MEMCGS}"));
    let (a, b) = (s.memcg("/a"), s.memcg("/b"));
    let (lv_a, lv_b, lv_root) = (s.lv(a), s.lv(b), s.lv(ROOT));
    // 100 hot pages active in /b (the workingset size the refault is compared to), 40
    // pages active in /a.
    let hot = s.file(100);
    let w = s.file(40);
    for (m, f, n) in [(b, hot, 100), (a, w, 40)] {
        for _pass in 0..2 {
            for i in 0..n {
                s.read(m, f, i);
            }
            s.drain();
        }
    }
    assert_eq!(s.k.lruvecs[lv_b].nr[lru::ACTIVE_FILE], 100);
    assert_eq!(s.k.lruvecs[lv_a].nr[lru::ACTIVE_FILE], 40);
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 140);
    s.check();

    // Deactivate /a's active list (no swap: SCAN_FILE; the FILE bit of may_deactivate):
    // shrink_active_list clears PG_active and sets PG_workingset, in chunks of 32 + 8.
    let mut sc = ScanControl::new(1000, None, false);
    sc.priority = 0;
    sc.may_deactivate = 2;
    s.p.shrink_lruvec(&mut s.k, lv_a, &mut sc);
    assert_eq!(sc.nr_reclaimed, 0);
    assert_eq!(s.vm(Vm::Pgdeactivate), 40);
    assert_eq!(s.vm(Vm::Pgrefill), 40);
    assert_eq!(s.k.lruvecs[lv_a].nr[..4], [0, 0, 40, 0]);
    for i in 0..40 {
        let x = s.page(w, i);
        assert!(
            s.test(x, pg::WORKINGSET) && !s.test(x, pg::ACTIVE),
            "{}",
            flags(&s, x)
        );
    }
    // Inactive putback does not age the clock.
    assert_eq!(s.k.lruvecs[lv_a].nonresident_age, 40);
    s.check();

    // Evict them all: unreferenced and clean, so RECLAIM. The shadows keep the workingset
    // bit; each eviction ages the root (global reclaim) to 180.
    let mut sc = ScanControl::new(1000, None, false);
    sc.priority = 0;
    sc.may_deactivate = 0;
    s.p.shrink_lruvec(&mut s.k, lv_a, &mut sc);
    assert_eq!(sc.nr_reclaimed, 40);
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 180);
    assert_eq!(s.k.lruvecs[lv_a].nonresident_age, 40);
    // No pages were written, so lru_note_cost added nothing.
    assert_eq!(
        [s.k.lruvecs[lv_a].file_cost, s.k.lruvecs[lv_root].file_cost],
        [0, 0]
    );
    s.check();

    // The refault distance is at most 40 <= 100: activated, and the shadow's workingset
    // bit restores PG_workingset and notes a refault cost of one page on /a and the
    // root. /a's lists are now empty, so its costs decay at once (1 > 0/4: halved to 0);
    // the root's (100 pages) keep it.
    s.read(a, w, 7);
    let x = s.page(w, 7);
    assert!(
        s.test(x, pg::ACTIVE) && s.test(x, pg::WORKINGSET),
        "{}",
        flags(&s, x)
    );
    assert_eq!(s.vm(Vm::WorkingsetRefaultFile), 1);
    assert_eq!(s.vm(Vm::WorkingsetActivateFile), 1);
    assert_eq!(s.vm(Vm::WorkingsetRestoreFile), 1);
    assert_eq!(s.memcg_vm(a, Vm::WorkingsetRestoreFile), 1);
    assert_eq!(s.k.lruvecs[lv_a].file_cost, 0);
    assert_eq!(s.k.lruvecs[lv_root].file_cost, 1);
    assert_eq!(s.k.lruvecs[lv_root].anon_cost, 0);
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 181);
    s.drain();
    assert_eq!(s.list(lv_a, "active_file"), vec![x]);
    s.check();
}

// ---------------------------------------------------------------------------------------
// Per-CPU batches (docs/model/batches-locks.md)
// ---------------------------------------------------------------------------------------

fn lru_add_flushes_at(pagevec: u32) {
    let mut s = Sys::new(&format!("{MACHINE}[kernel]\npagevec_size = {pagevec}\n"));
    let lv = s.lv(ROOT);
    let f = s.file(200);
    let n = pagevec as u64;
    for i in 0..n - 1 {
        s.read(ROOT, f, i);
    }
    // One short of full: everything is still in the batch, off the lists.
    assert_eq!(s.k.batches[0].lru_add.len() as u64, n - 1);
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], 0);
    for i in 0..n - 1 {
        let pfn = s.page(f, i);
        assert!(
            !s.test(pfn, pg::LRU) && s.test(pfn, pg::IN_LRU_ADD),
            "{}",
            flags(&s, pfn)
        );
        assert_eq!(s.list_of(pfn), None);
    }
    s.check();
    // The pagevec_size-th add fills the batch and flushes it.
    s.read(ROOT, f, n - 1);
    assert!(s.k.batches[0].lru_add.is_empty());
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], n);
    // lru_add adds at the head in batch order: the newest page is at the head.
    let expect: Vec<_> = (0..n).rev().map(|i| s.page(f, i)).collect();
    assert_eq!(s.list(lv, "inactive_file"), expect);
    for i in 0..n {
        let pfn = s.page(f, i);
        assert!(s.test(pfn, pg::LRU) && !s.test(pfn, pg::IN_LRU_ADD));
    }
    s.check();
    // And again exactly one batch later.
    for i in n..2 * n - 1 {
        s.read(ROOT, f, i);
    }
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], n);
    s.read(ROOT, f, 2 * n - 1);
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], 2 * n);
    assert!(s.k.batches[0].lru_add.is_empty());
    s.check();
}

#[test]
fn lru_add_batch_flushes_exactly_when_full_15() {
    lru_add_flushes_at(15);
}

#[test]
fn lru_add_batch_flushes_exactly_when_full_31() {
    lru_add_flushes_at(31);
}

#[test]
fn folio_in_an_lru_add_batch_is_invisible_to_reclaim() {
    let mut s = Sys::new(MACHINE);
    let lv = s.lv(ROOT);
    let f = s.file(5);
    let g = s.file(40);
    // Five pages wait in CPU 1's lru_add batch.
    s.on(1);
    for i in 0..5 {
        s.read(ROOT, f, i);
    }
    s.on(0);
    for i in 0..40 {
        s.read(ROOT, g, i);
    }
    s.drain();
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], 40);
    s.check();
    // Reclaim on CPU 0 at priority 0 (no swap: SCAN_FILE, everything on inactive_file).
    let mut sc = ScanControl::new(1000, None, false);
    sc.priority = 0;
    sc.may_deactivate = 0;
    s.p.shrink_lruvec(&mut s.k, lv, &mut sc);
    assert_eq!(sc.nr_reclaimed, 40);
    assert_eq!(s.vm(Vm::PgscanDirect), 40, "only listed folios are scanned");
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], 0);
    for i in 0..40 {
        assert!(s.has_shadow(g, i));
    }
    for i in 0..5 {
        let pfn = s.page(f, i);
        assert!(s.test(pfn, pg::IN_LRU_ADD) && !s.test(pfn, pg::LRU));
    }
    s.check();
    // Draining CPU 1 puts them on the list.
    s.on(1);
    s.drain();
    assert_eq!(s.k.lruvecs[lv].nr[lru::INACTIVE_FILE], 5);
    for i in 0..5 {
        let pfn = s.page(f, i);
        assert!(s.test(pfn, pg::LRU) && !s.test(pfn, pg::IN_LRU_ADD));
        assert_eq!(s.list_of(pfn).as_deref(), Some("inactive_file"));
    }
    s.check();
}

#[test]
fn activate_batch_skips_a_folio_isolated_meanwhile() {
    let mut s = Sys::new(MACHINE);
    let lv = s.lv(ROOT);
    let f = s.file(1);
    s.read(ROOT, f, 0);
    s.drain();
    let x = s.page(f, 0);
    assert!(s.test(x, pg::REFERENCED) && s.test(x, pg::LRU));
    // Second access: queued for activation, with a batch reference.
    s.read(ROOT, f, 0);
    assert_eq!(s.k.batches[0].activate, vec![x]);
    assert_eq!(s.k.folios[x as usize].pins(), 1);
    assert!(!s.test(x, pg::ACTIVE) && !s.test(x, pg::REFERENCED));
    assert_eq!(s.list_of(x).as_deref(), Some("inactive_file"));
    s.check();
    // Someone isolates it (folio_isolate_lru): test-and-clear PG_lru wins, then unlink.
    assert!(s.k.folios[x as usize].test_clear(pg::LRU));
    s.k.lock_lruvec(lv);
    s.p.del_folio(&mut s.k, x);
    s.k.unlock();
    // The flush finds PG_lru clear: skipped, not activated, its reference dropped.
    s.drain();
    assert!(s.k.batches[0].activate.is_empty());
    assert_eq!(s.k.folios[x as usize].pins(), 0);
    assert!(
        !s.test(x, pg::ACTIVE) && !s.test(x, pg::LRU),
        "{}",
        flags(&s, x)
    );
    assert_eq!(s.list_of(x), None);
    assert_eq!(s.vm(Vm::Pgactivate), 0);
    // The isolator puts it back (folio_putback_lru): inactive.
    s.k.folios[x as usize].set(pg::LRU);
    s.k.lock_lruvec(lv);
    s.p.add_folio(&mut s.k, x, false);
    s.k.unlock();
    assert_eq!(s.list_of(x).as_deref(), Some("inactive_file"));
    s.check();
}

#[test]
fn mark_accessed_activates_in_this_cpus_lru_add_batch_only() {
    let mut s = Sys::new(&format!("{MACHINE}{TWO_MEMCGS}"));
    let a = s.memcg("/a");
    let lv = s.lv(a);
    let f = s.file(2);
    // Page 0 in CPU 0's lru_add batch, accessed twice on CPU 0: activated in place.
    s.read(a, f, 0);
    let x = s.page(f, 0);
    assert!(s.test(x, pg::REFERENCED) && !s.test(x, pg::ACTIVE));
    s.read(a, f, 0);
    assert!(
        s.test(x, pg::ACTIVE) && !s.test(x, pg::REFERENCED),
        "{}",
        flags(&s, x)
    );
    assert!(s.test(x, pg::IN_LRU_ADD) && !s.test(x, pg::LRU));
    assert!(
        s.k.batches[0].activate.is_empty(),
        "not queued for activation"
    );
    assert_eq!(s.k.lruvecs[lv].nonresident_age, 1, "workingset_activation");
    // Page 1 in CPU 1's batch, accessed again from CPU 0: not found, not activated
    // (PG_referenced is still cleared and workingset_activation still runs).
    s.on(1);
    s.read(a, f, 1);
    let y = s.page(f, 1);
    s.on(0);
    s.read(a, f, 1);
    assert!(
        !s.test(y, pg::ACTIVE) && !s.test(y, pg::REFERENCED),
        "{}",
        flags(&s, y)
    );
    assert!(s.test(y, pg::IN_LRU_ADD));
    assert_eq!(s.k.lruvecs[lv].nonresident_age, 2);
    s.check();
    s.drain_all();
    assert_eq!(s.list(lv, "active_file"), vec![x]);
    assert_eq!(s.list(lv, "inactive_file"), vec![y]);
    // lru_add does not count an activation.
    assert_eq!(s.vm(Vm::Pgactivate), 0);
    s.check();
}

#[test]
fn a_folio_may_sit_in_the_activate_batch_many_times() {
    // Spec 3.1: folio_activate takes a reference and appends, with no check for a folio
    // already queued; folio_mark_accessed queues an inactive, referenced folio again after
    // every second access until the batch flushes.
    let mut s = Sys::new(&format!("{MACHINE}[kernel]\npagevec_size = 255\n"));
    let lv = s.lv(ROOT);
    let f = s.file(1);
    s.read(ROOT, f, 0);
    s.drain();
    let x = s.page(f, 0);
    for _ in 0..100 {
        s.read(ROOT, f, 0); // referenced -> queued, PG_referenced cleared
        s.read(ROOT, f, 0); // PG_referenced set again
    }
    assert_eq!(s.k.batches[0].activate.len(), 100);
    assert_eq!(s.k.folios[x as usize].pins(), 100);
    s.check();
    s.drain();
    assert_eq!(s.list(lv, "active_file"), vec![x]);
    assert_eq!(s.k.folios[x as usize].pins(), 0);
    assert_eq!(s.vm(Vm::Pgactivate), 1);
    s.check();
}

/// Reads 15 pages on CPU 0 whose memcgs follow `pattern` ('a' or 'b'), the 15th of which
/// flushes the lru_add batch; returns the lru_lock acquisitions of that flush.
fn flush_acquisitions(lock: &str, pattern: &str) -> u64 {
    let mut s = Sys::new(&format!(
        "{MACHINE}[kernel]\nlru_lock = \"{lock}\"\npagevec_size = 15\n{TWO_MEMCGS}"
    ));
    assert_eq!(pattern.len(), 15);
    let (a, b) = (s.memcg("/a"), s.memcg("/b"));
    let expect_locks = if lock == "node" { 1 } else { 3 };
    assert_eq!(s.k.locks.len(), expect_locks);
    let (fa, fb) = (s.file(15), s.file(15));
    let before = s.lock_acquisitions();
    for (i, c) in pattern.chars().enumerate() {
        let (m, f) = if c == 'a' { (a, fa) } else { (b, fb) };
        if i == 14 {
            assert!(s.k.batches[0].lru_add.len() == 14);
            assert_eq!(
                s.lock_acquisitions(),
                before,
                "no lock taken before the flush"
            );
        }
        s.read(m, f, i as u64);
    }
    assert!(s.k.batches[0].lru_add.is_empty());
    let na = pattern.matches('a').count() as u64;
    assert_eq!(s.k.lruvecs[s.lv(a)].nr[lru::INACTIVE_FILE], na);
    assert_eq!(s.k.lruvecs[s.lv(b)].nr[lru::INACTIVE_FILE], 15 - na);
    s.check();
    s.lock_acquisitions() - before
}

#[test]
fn batch_flush_relocks_per_lruvec_only_with_lruvec_locks() {
    // Alternating memcgs: every folio needs the other lruvec's lock.
    assert_eq!(flush_acquisitions("lruvec", "abababababababa"), 15);
    assert_eq!(flush_acquisitions("node", "abababababababa"), 1);
    // Runs of one memcg keep the lock: three runs, three acquisitions.
    assert_eq!(flush_acquisitions("lruvec", "aaaaabbbbbaaaaa"), 3);
    assert_eq!(flush_acquisitions("node", "aaaaabbbbbaaaaa"), 1);
    assert_eq!(flush_acquisitions("lruvec", "aaaaaaaaaaaaaaa"), 1);
}

// ---------------------------------------------------------------------------------------
// folio_mark_accessed (docs/model/classic-lru.md)
// ---------------------------------------------------------------------------------------

#[test]
fn mark_accessed_state_machine() {
    let mut s = Sys::new(&format!("{MACHINE}{TWO_MEMCGS}"));
    let a = s.memcg("/a");
    let (lv, lv_root) = (s.lv(a), s.lv(ROOT));
    let f = s.file(4);
    // A page brought in by a fault of a shared file mapping is inactive and unreferenced.
    let (mm, start) = s.process(a, Some(f), 0);
    s.fault(mm, start + 2, false);
    s.drain();
    let x = s.page(f, 2);
    assert_eq!(s.list_of(x).as_deref(), Some("inactive_file"));
    assert!(
        !s.test(x, pg::REFERENCED) && !s.test(x, pg::ACTIVE),
        "{}",
        flags(&s, x)
    );
    s.check();

    // inactive, unreferenced -> inactive, referenced.
    s.p.mark_accessed(&mut s.k, x);
    assert!(s.test(x, pg::REFERENCED) && !s.test(x, pg::ACTIVE));
    assert!(s.k.batches[0].activate.is_empty());
    assert_eq!(s.k.lruvecs[lv].nonresident_age, 0);
    s.check();

    // inactive, referenced -> queued on the activate batch, PG_referenced cleared,
    // workingset_activation ages /a and the root; still inactive until the drain.
    s.p.mark_accessed(&mut s.k, x);
    assert_eq!(s.k.batches[0].activate, vec![x]);
    assert!(!s.test(x, pg::REFERENCED) && !s.test(x, pg::ACTIVE));
    assert_eq!(s.list_of(x).as_deref(), Some("inactive_file"));
    assert_eq!(s.k.lruvecs[lv].nonresident_age, 1);
    assert_eq!(s.k.lruvecs[lv_root].nonresident_age, 1);
    assert_eq!(s.vm(Vm::Pgactivate), 0);
    s.check();
    s.drain();
    assert_eq!(s.list_of(x).as_deref(), Some("active_file"));
    assert!(s.test(x, pg::ACTIVE) && s.test(x, pg::LRU) && !s.test(x, pg::REFERENCED));
    assert_eq!(s.k.folios[x as usize].pins(), 0);
    assert_eq!(s.vm(Vm::Pgactivate), 1);
    assert_eq!(s.memcg_vm(a, Vm::Pgactivate), 1);
    s.check();

    // active, unreferenced -> active, referenced; then it stays so.
    for _ in 0..2 {
        s.p.mark_accessed(&mut s.k, x);
        assert!(s.test(x, pg::ACTIVE) && s.test(x, pg::REFERENCED));
        assert!(s.k.batches[0].activate.is_empty());
        assert_eq!(s.list_of(x).as_deref(), Some("active_file"));
        assert_eq!(s.k.lruvecs[lv].nonresident_age, 1);
        s.check();
    }
    assert_eq!(s.vm(Vm::Pgactivate), 1);
}

// ---------------------------------------------------------------------------------------
// Reclaim drivers (docs/model/reclaim-drivers.md)
// ---------------------------------------------------------------------------------------

/// 200 anon pages of one process, 150 of them made active (as reclaim's activate path
/// would), on a machine with 16 pages of swap; `fill_swap` uses every slot up.
fn anon_lists(fill_swap: bool) -> Sys {
    let mut s = Sys::new(
        r#"
[machine]
memory = "64MiB"
cpus = 4
swap = { device = "zram", size = "64KiB" }
"#,
    );
    let lv = s.lv(ROOT);
    let (mm, start) = s.process(ROOT, None, 200);
    for i in 0..200 {
        s.fault(mm, start + i, true);
    }
    s.drain();
    for i in 0..150 {
        let x = s.k.mms[mm as usize].vmas[0].ptes[i]
            .pfn()
            .expect("faulted in");
        s.k.lock_lruvec(lv);
        s.p.del_folio(&mut s.k, x);
        s.k.folios[x as usize].set(pg::ACTIVE);
        s.p.add_folio(&mut s.k, x, false);
        s.k.unlock();
    }
    assert_eq!(s.k.lruvecs[lv].nr[..4], [50, 150, 0, 0]);
    if fill_swap {
        while let Some(slot) = s.k.get_swap_slot(ROOT) {
            s.k.swap.as_mut().unwrap().slots[slot as usize] =
                reclaimsim::kernel::swap::SwapSlot::used(0);
        }
        assert!(!s.k.can_swap(ROOT));
    }
    s.check();
    s
}

#[test]
fn shrink_lruvec_ages_anon_when_inactive_anon_is_low() {
    let mut s = anon_lists(false);
    let lv = s.lv(ROOT);
    // Priority 12: every list >> 12 is 0, nothing is scanned; then, swap being present
    // and 50 * 1 < 150, one shrink_active_list(SWAP_CLUSTER_MAX) of active anon.
    let mut sc = ScanControl::new(32, None, false);
    s.p.shrink_lruvec(&mut s.k, lv, &mut sc);
    assert_eq!(sc.nr_reclaimed, 0);
    assert_eq!(s.vm(Vm::Pgdeactivate), 32);
    assert_eq!(s.vm(Vm::Pgrefill), 32);
    assert_eq!(s.k.lruvecs[lv].nr[..4], [82, 118, 0, 0]);
    s.check();
}

#[test]
fn shrink_lruvec_ages_anon_while_swap_exists_even_when_full() {
    let mut s = anon_lists(true);
    let lv = s.lv(ROOT);
    // No free swap: get_scan_count is SCAN_FILE (nothing to scan), but anon can still be
    // aged (total_swap_pages > 0), so active anon is deactivated as with free swap.
    let mut sc = ScanControl::new(32, None, false);
    s.p.shrink_lruvec(&mut s.k, lv, &mut sc);
    assert_eq!(s.vm(Vm::Pgdeactivate), 32);
    assert_eq!(s.k.lruvecs[lv].nr[..4], [82, 118, 0, 0]);
    // kswapd's aging before each shrink_node pass likewise (kswapd_age_node).
    let mut s = anon_lists(true);
    s.k.cur = Exec::new(0, 3, true, None);
    let mut sc = ScanControl::new(32, None, true);
    s.p.age_node(&mut s.k, 0, &mut sc);
    assert_eq!(s.vm(Vm::Pgdeactivate), 32);
    s.check();
}

#[test]
fn kswapd_that_finds_its_node_balanced_counts_no_failure() {
    let mut s = Sys::new(MACHINE);
    // Woken (the node was below low when an allocation asked), but by the time kswapd
    // runs the node is balanced again: balance_pgdat goes straight to `out`.
    assert!(s.k.nodes[0].balanced());
    let mut kd = Kswapd::new(0);
    s.k.cur = Exec::new(0, 3, true, None);
    kd.wake(&mut s.k);
    assert_eq!(s.vm(Vm::Pageoutrun), 1);
    let next = kd.step(&mut s.k, &mut s.p);
    assert!(matches!(next, Next::NapUntil(_)), "{next:?}");
    assert_eq!(s.k.nodes[0].kswapd_failures, 0);
    s.check();
}

// ---------------------------------------------------------------------------------------
// The invariant checker can fail
// ---------------------------------------------------------------------------------------

/// A machine with file pages on the LRU and in a batch, and a process with anon pages.
fn populated() -> (Sys, u32, u32) {
    let mut s = Sys::new(&format!("{MACHINE}{TWO_MEMCGS}"));
    let a = s.memcg("/a");
    let f = s.file(40);
    for i in 0..40 {
        s.read(a, f, i);
    }
    let (mm, start) = s.process(a, None, 8);
    for i in 0..8 {
        s.fault(mm, start + i, true);
    }
    s.check();
    (s, f, mm)
}

#[track_caller]
fn corrupted(what: &str, corrupt: impl FnOnce(&mut Sys, u32, u32), expect: &str) {
    let (mut s, f, mm) = populated();
    corrupt(&mut s, f, mm);
    match s.check_result() {
        Ok(()) => panic!("{what}: the checker found nothing"),
        Err(e) => assert!(
            e.contains(expect),
            "{what}: expected an error mentioning {expect:?}, got {e:?}"
        ),
    }
}

#[test]
fn invariant_checker_detects_corruption() {
    corrupted(
        "lruvec counter bumped",
        |s, _, _| {
            let lv = s.lv(s.memcg("/a"));
            s.k.lruvecs[lv].nr[lru::INACTIVE_FILE] += 1;
        },
        "inactive_file",
    );
    corrupted(
        "PG_lru cleared on a listed folio",
        |s, f, _| {
            let x = s.page(f, 0);
            s.k.folios[x as usize].clear(pg::LRU);
        },
        "without PG_lru",
    );
    corrupted(
        "PG_active set on an inactive-listed folio",
        |s, f, _| {
            let x = s.page(f, 0);
            s.k.folios[x as usize].set(pg::ACTIVE);
        },
        "flags say",
    );
    corrupted(
        "memcg usage changed",
        |s, _, _| {
            let a = s.memcg("/a");
            s.k.memcgs.cgs[a as usize].usage += 1;
        },
        "usage",
    );
    corrupted(
        "listed folio also in a batch",
        |s, f, _| {
            let x = s.page(f, 0);
            s.k.batches[2].lru_add.push(x);
        },
        "two places",
    );
    corrupted(
        "isolated folio never put back",
        |s, f, _| {
            let x = s.page(f, 0);
            s.k.folios[x as usize].clear(pg::LRU);
            s.k.lock_lruvec(s.k.folio_lruvec(x));
            s.p.del_folio(&mut s.k, x);
            s.k.unlock();
        },
        "on no list",
    );
    corrupted(
        "batch pin without a batch",
        |s, f, _| {
            let x = s.page(f, 1);
            s.k.folios[x as usize].pin();
        },
        "batch pins",
    );
    corrupted(
        "mapcount off",
        |s, _, mm| {
            let x = s.k.mms[mm as usize].vmas[0].ptes[0]
                .pfn()
                .expect("faulted in");
            s.k.folios[x as usize].mapcount += 1;
        },
        "mapcount",
    );
    corrupted(
        "page-cache count off",
        |s, f, _| {
            s.k.files[f as usize].nr_cached += 1;
        },
        "caches",
    );
}
