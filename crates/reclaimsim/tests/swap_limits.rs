//! memory.swap.max (docs/model/page-cache-swap.md): 6.1's swap charge in
//! folio_alloc_swap fails at the limit of the folio's memcg or an ancestor (counting
//! memory.swap.events `max` and `fail`) and the folio is activated; reclaim stops scanning
//! anon where mem_cgroup_get_nr_swap_pages says nothing is left (classic's
//! can_reclaim_anon_pages, MGLRU's get_swappiness below MIN_LRU_BATCH); an `[[event]]`
//! writes the limit during a run.

mod common;

use common::{memcg_stat, run_checked, Sys};
use reclaimsim::kernel::folio::pg;
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::vmscan::{self, ReclaimStat, ScanControl};

/// A memcg /a under a memory.max of 16 MiB with 20 MiB of anon and a 12 MiB file read
/// through it: reclaim in /a has both kinds to choose from, and cannot do without
/// swapping some anon. `swap_max` is /a's memory.swap.max (None: no limit); `events` is
/// appended.
fn mixed(policy: &str, swap_max: Option<&str>, events: &str) -> String {
    let limit = swap_max.map_or(String::new(), |v| format!("swap_max = \"{v}\"\n"));
    format!(
        r#"
name = "swap-max"
[machine]
memory = "64MiB"
cpus = 2
swap = {{ device = "ramdisk", size = "64MiB" }}
[kernel]
policy = "{policy}"
[[memcg]]
path = "/a"
max = "16MiB"
{limit}
[[workload]]
name = "anon"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "20MiB"
populate = true
pattern = "random"
accesses = 20000
[[workload]]
name = "dd"
memcg = "/a"
cpus = [1]
[workload.dd]
size = "12MiB"
readers = 1
sparse = true
{events}
"#
    )
}

fn memcg_oom_kills(r: &reclaimsim::results::VariantResult) -> u64 {
    r.memcgs["/a"].events["oom_kill"]
}

#[test]
fn a_memcg_at_swap_max_zero_reclaims_only_file_pages() {
    for policy in ["classic", "mglru"] {
        let free = run_checked(&mixed(policy, None, ""));
        assert!(
            memcg_stat(&free, "/a", "pswpout") > 1000,
            "{policy}: without a limit /a swaps"
        );
        assert_eq!(memcg_oom_kills(&free), 0, "{policy}");
        let r = run_checked(&mixed(policy, Some("0"), ""));
        assert!(memcg_stat(&r, "/a", "pgsteal_file") > 1000, "{policy}");
        for key in ["pswpout", "pgscan_anon", "pgsteal_anon"] {
            assert_eq!(memcg_stat(&r, "/a", key), 0, "{policy}: {key}");
        }
        // No swap-out was even tried (anon was never scanned); file alone was not
        // enough, so the memcg OOM killer ran.
        assert_eq!(r.memcgs["/a"].swap_events["fail"], 0, "{policy}");
        assert_eq!(memcg_oom_kills(&r), 1, "{policy}");
    }
}

#[test]
fn swap_stops_at_swap_max_and_the_charges_beyond_fail() {
    // 1 MiB is 256 pages, above MGLRU's MIN_LRU_BATCH (64): both policies scan anon
    // while the margin lasts, and swap exactly up to the limit.
    for policy in ["classic", "mglru"] {
        let r = run_checked(&mixed(policy, Some("1MiB"), ""));
        assert_eq!(memcg_stat(&r, "/a", "pswpout"), 256, "{policy}");
        let a = &r.memcgs["/a"];
        assert_eq!(a.swap_events["max"], a.swap_events["fail"], "{policy}");
        // Hierarchical: the root's file sums /a's.
        assert_eq!(r.memcgs["/"].swap_events["max"], a.swap_events["max"]);
    }
    // Classic isolates anon in batches of 32 while one slot is left: with a limit of 250
    // pages, not a multiple of 32, some batch meets the limit part way (whether a
    // 256-page limit is met exactly at a batch's end depends on the run's timing).
    let r = run_checked(&mixed("classic", Some("1000KiB"), ""));
    assert_eq!(memcg_stat(&r, "/a", "pswpout"), 250);
    let a = &r.memcgs["/a"];
    assert!(a.swap_events["max"] > 0);
    assert_eq!(a.swap_events["max"], a.swap_events["fail"]);
}

#[test]
fn mglru_does_not_swap_below_min_lru_batch_slots_of_swap_max() {
    // 63 pages: get_swappiness() is 0 from the start, so MGLRU never scans anon.
    let r = run_checked(&mixed("mglru", Some("252KiB"), ""));
    assert_eq!(memcg_stat(&r, "/a", "pswpout"), 0);
    assert_eq!(memcg_stat(&r, "/a", "pgscan_anon"), 0);
    // Classic scans anon while any slot is left, and fills the limit.
    let r = run_checked(&mixed("classic", Some("252KiB"), ""));
    assert_eq!(memcg_stat(&r, "/a", "pswpout"), 63);
}

#[test]
fn a_failed_swap_charge_activates_the_folio_and_gives_the_slot_back() {
    let mut s = Sys::new(
        "[machine]\nmemory = \"64MiB\"\ncpus = 2\nswap = { device = \"ramdisk\", size = \"64MiB\" }\n\
         [[memcg]]\npath = \"/a\"\nswap_max = \"8KiB\"\n",
    );
    let a = s.memcg("/a");
    let (mm, start) = s.process(a, None, 4);
    for i in 0..4 {
        s.fault(mm, start + i, true);
    }
    s.drain();
    let lv = s.lv(a);
    let pfns = s.list(lv, "inactive_anon");
    assert_eq!(pfns.len(), 4);
    s.k.lock_lruvec(lv);
    for &pfn in &pfns {
        s.p.del_folio(&mut s.k, pfn);
        assert!(s.k.isolate_lru_flag(pfn));
    }
    s.k.unlock();
    for &pfn in &pfns {
        let vpn = u64::from(s.k.folios[pfn as usize].index);
        s.k.mms[mm as usize].pte_mut(vpn).unwrap().mkold();
    }
    let mut sc = ScanControl::new(32, None, false);
    let mut stat = ReclaimStat::default();
    let mut list = pfns.clone();
    let freed = vmscan::shrink_folio_list(&mut s.k, &mut s.p, &mut list, &mut sc, &mut stat);
    assert_eq!(freed, 2, "two pages fit in 8 KiB of swap");
    assert_eq!(s.k.memcgs.cgs[a as usize].swap_usage, 2);
    assert_eq!(list.len(), 2);
    for &pfn in &list {
        assert!(s.test(pfn, pg::ACTIVE), "kept and activated");
        assert!(!s.test(pfn, pg::SWAPCACHE));
    }
    let e = &s.k.memcgs.cgs[a as usize].events;
    assert_eq!((e.swap_max, e.swap_fail), (2, 2));
    let sw = s.k.swap.as_ref().unwrap();
    assert_eq!(sw.slots.iter().filter(|x| !x.is_free()).count(), 2);
    // Put the survivors back where shrink_inactive_list would, for the checker.
    s.k.lock_lruvec(lv);
    for pfn in list {
        s.k.folios[pfn as usize].set(pg::LRU);
        s.p.add_folio(&mut s.k, pfn, false);
    }
    s.k.unlock();
    s.check();
}

#[test]
fn a_memory_swap_max_event_stops_swapping_from_then_on() {
    let ev = "[[event]]\nat = \"0s\"\nmemcg = \"/a\"\nfile = \"memory.swap.max\"\nvalue = \"0\"\n";
    let r = run_checked(&mixed("classic", None, ev));
    assert_eq!(memcg_stat(&r, "/a", "pswpout"), 0);
    assert_eq!(memcg_stat(&r, "/a", "pgscan_anon"), 0, "anon never scanned");
    assert_eq!(r.events[0].command, "echo 0 > /a/memory.swap.max");
    assert_eq!(r.events[0].result, "ok");
}
