//! MGLRU with many memcgs (`kernel.memcg_reclaim`): the three variants end to end with
//! the invariant checker on, and their mechanisms driven directly: 6.1's aging feedback
//! and backoff (`v6.1` against `none`, the seeds' patch1-8) and the 6.3 memcg LRU's
//! walk of its bins (`memcg-lru`).

use reclaimsim::engine::RunOptions;
use reclaimsim::kernel::fault;
use reclaimsim::kernel::lru::mglru::memcg_lru::{MemcgVisit, MEMCG_NR_BINS};
use reclaimsim::kernel::lru::mglru::Mglru;
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::memcg::MemcgId;
use reclaimsim::kernel::mm::{Mm, VmaKind};
use reclaimsim::kernel::pagecache::File;
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::vmscan::{self, ScanControl};
use reclaimsim::kernel::{Exec, Kernel};
use reclaimsim::results::VariantResult;
use reclaimsim::scenario;

/// Seed 000's mixed workload at 64 MiB: memcached (anon) and fio (page cache) in two
/// memcgs with working sets at 123% of memory; fio starts after the populate, the R:R
/// run 100 ms later.
const MIXED: &str = r#"
name = "mixed"
seed = 5
[machine]
memory = "64MiB"
cpus = 5
swap = { device = "ramdisk", size = "27MiB" }
[kernel]
policy = "mglru"
[[memcg]]
path = "/kv"
[[memcg]]
path = "/io"
[[workload]]
name = "kv"
memcg = "/kv"
cpus = [0, 1]
[workload.memcached]
threads = 2
[[workload.memcached.phase]]
name = "populate"
key-pattern = "P:P"
ratio = "1:0"
data-size = 2000
key-minimum = 1
key-maximum = 24400
requests = "allkeys"
clients = 1
threads = 2
pipeline = 8
measure = false
[[workload.memcached.phase]]
name = "run"
key-pattern = "R:R"
ratio = "0:1"
data-size = 2000
key-minimum = 1
key-maximum = 24400
requests = "allkeys"
clients = 1
threads = 2
pipeline = 8
randomize = true
distinct-client-seed = true
delay = "100ms"
[[workload]]
name = "io"
memcg = "/io"
cpus = [2, 3]
after = "kv:populate"
until = "kv"
[workload.fio]
rw = "randread"
numjobs = 2
size = "12672KiB"
random_distribution = "random"
norandommap = true
time_based = true
ramp_time = "100ms"
runtime = "100s"
"#;

fn run(text: &str, sets: &[&str], check: bool) -> VariantResult {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let s = scenario::parse(text, "test.toml", &sets, None)
        .unwrap_or_else(|e| panic!("bad test scenario: {e}"))
        .base;
    reclaimsim::results::run(
        &s,
        "base",
        RunOptions {
            check,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{sets:?}: {e}"))
}

fn vm(r: &VariantResult, name: &str) -> u64 {
    r.counter(name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

fn stat(r: &VariantResult, memcg: &str, key: &str) -> u64 {
    (r.memcgs[memcg].get(key)).unwrap_or_else(|| panic!("no {key} in {memcg}"))
}

#[test]
fn the_three_variants_keep_every_invariant_and_show_their_mechanism() {
    let none = run(MIXED, &["kernel.memcg_reclaim=none"], true);
    let v61 = run(MIXED, &["kernel.memcg_reclaim=v6.1"], true);
    let lru = run(MIXED, &["kernel.memcg_reclaim=memcg-lru"], true);
    // memcg-lru is left out here: since only the last walker out of an mm-list round
    // may age (iterate_mm_list's nr_walkers), the two memcached threads reclaiming
    // while kswapd walks their mm (0.9 ms) get no aging, and 6.3 neither waits for it
    // nor throttles MGLRU's global reclaim on no progress (its shrink_node returns
    // before consider_reclaim_throttle): they use up their retries and one is
    // OOM-killed during the populate. Whether a 6.3+ kernel does the same here is open.
    for r in [&none, &v61] {
        assert!(r.workloads["kv:run"].ops > 40_000, "{:?}", r.workloads);
        assert!(r.workloads["io"].ops > 0);
        assert!(vm(r, "pgsteal_kswapd") > 1000, "kswapd reclaimed");
        assert!(r.oom_kills.is_empty());
    }
    // patch1-8: kswapd ages every memcg each round; no feedback, no backoff.
    assert_eq!(vm(&none, "lru_gen_aging_skipped"), 0);
    assert_eq!(vm(&none, "lru_gen_abort_scan"), 0);
    assert!(
        stat(&none, "/kv", "lru_gen_aging") > 0,
        "memcached was aged"
    );
    // 6.1: while fio gives back clean pages without aging, kswapd skips aging, so the
    // idle memcached is aged (and swapped) less.
    assert!(vm(&v61, "lru_gen_aging_skipped") > 0);
    assert!(
        stat(&v61, "/kv", "lru_gen_aging") < stat(&none, "/kv", "lru_gen_aging"),
        "v6.1 {} vs none {}",
        stat(&v61, "/kv", "lru_gen_aging"),
        stat(&none, "/kv", "lru_gen_aging")
    );
    assert!(stat(&v61, "/kv", "pswpin") < stat(&none, "/kv", "pswpin"));
    assert!(stat(&v61, "/io", "pgsteal_kswapd") > stat(&none, "/io", "pgsteal_kswapd"));
    // 6.3: no memcgs_need_aging gate; reclaim goes through shrink_many.
    assert_eq!(vm(&lru, "lru_gen_aging_skipped"), 0);
    // Every direct reclaim call was timed.
    for r in [&none, &v61, &lru] {
        assert_eq!(r.alloc_stall.calls, vm(r, "allocstall_normal"));
        if r.alloc_stall.calls > 0 {
            let s = &r.alloc_stall.latency_ns;
            assert!(s.p50 <= s.p99 && s.p99 <= s.max, "{s:?}");
        }
    }
}

#[test]
fn the_memcg_lru_is_deterministic_per_seed() {
    let sets = ["kernel.memcg_reclaim=memcg-lru", "duration=300ms"];
    let a = run(MIXED, &sets, false);
    let b = run(MIXED, &sets, false);
    assert_eq!(a.without_wall_time(), b.without_wall_time());
}

/// A kernel and an MGLRU policy built from a scenario's machine, kernel and memcgs.
fn system(text: &str, memcg_reclaim: &str, seed: u64) -> (Kernel, Mglru) {
    let full = format!(
        "name = \"t\"\nseed = {seed}\n{text}\n[[workload]]\nname = \"idle\"\n[workload.anon]\nsize = \"4KiB\"\n"
    );
    let sets = vec![format!("kernel.memcg_reclaim={memcg_reclaim}")];
    let s = scenario::parse(&full, "t.toml", &sets, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .base;
    let mut k = Kernel::new(&s.kernel_setup());
    let p = Mglru::with_seed(&k, s.seed);
    k.cur = Exec::new(0, 0, false, None);
    (k, p)
}

/// Reads `pages` pages of a new file as a task of `memcg` (they go to the oldest
/// generation: evictable at once).
fn read_file(k: &mut Kernel, p: &mut Mglru, memcg: MemcgId, pages: u64) {
    k.files.push(File::new(pages, false));
    let f = (k.files.len() - 1) as u32;
    for i in 0..pages {
        fault::filemap_read(k, p, memcg, f, i, false).expect("read");
    }
}

/// Faults in `pages` pages of anonymous memory of a new process of `memcg` (writes).
fn fault_anon(k: &mut Kernel, p: &mut Mglru, memcg: MemcgId, pages: u64) {
    let id = k.mms.len() as u32;
    let mut mm = Mm {
        memcg,
        ..Default::default()
    };
    let v = mm.add_vma(pages, VmaKind::Anon);
    let start = mm.vmas[v].start;
    k.mms.push(mm);
    k.cur.mm = Some(id);
    for i in 0..pages {
        fault::handle_mm_fault(k, p, id, start + i, true).expect("fault");
    }
    k.cur.mm = None;
}

const ANON_MACHINE: &str = r#"
[machine]
memory = "256MiB"
cpus = 2
swap = { device = "ramdisk", size = "256MiB" }
[kernel]
policy = "mglru"
[[memcg]]
path = "/a"
"#;

/// 20,000 pages of anon in /a, aged three times (forced walks) so that they sit in the
/// oldest of three generations, ready for eviction without aging.
fn aged_anon(memcg_reclaim: &str) -> (Kernel, Mglru, usize) {
    let (mut k, mut p) = system(ANON_MACHINE, memcg_reclaim, 1);
    let a = k.memcgs.by_path("/a").unwrap();
    fault_anon(&mut k, &mut p, a, 20_000);
    let age = reclaimsim::kernel::lru::mglru::debugfs::parse_commands(
        "+ /a 0 max 60 1; + /a 0 max 60 1; + /a 0 max 60 1",
    )
    .unwrap();
    p.lru_gen_write(&mut k, &age).expect("aging");
    let lv = k.lruvec(a, 0);
    (k, p, lv)
}

#[test]
fn backoff_stops_a_direct_reclaim_scan_once_it_met_its_target_while_swapping() {
    // Direct reclaim at priority 6: this memcg's share is 20000 >> 6 = 312 folios.
    let mut reclaimed = Vec::new();
    for variant in ["none", "v6.1"] {
        let (mut k, mut p, lv) = aged_anon(variant);
        let mut sc = ScanControl::new(32, None, false);
        sc.priority = 6;
        p.shrink_lruvec(&mut k, lv, &mut sc);
        reclaimed.push(sc.nr_reclaimed);
    }
    let (none, v61) = (reclaimed[0], reclaimed[1]);
    assert!(none >= 312, "without backoff the whole share: {none}");
    assert!(
        (32..=64).contains(&v61),
        "with backoff one batch of 64 isolated folios: {v61}"
    );
}

#[test]
fn a_memcg_that_gave_back_pages_without_aging_lets_kswapd_skip_aging() {
    for variant in ["none", "v6.1"] {
        let (mut k, mut p, lv) = aged_anon(variant);
        k.cur = Exec::new(k.cur.clock, 1, true, None);
        let mut sc = ScanControl::new(1000, None, true);
        sc.priority = 7;
        // balance_pgdat's first round: memcgs_need_aging starts clear.
        p.age_node(&mut k, 0, &mut sc);
        if variant == "v6.1" {
            assert!(sc.memcgs_need_aging, "the skip sets the flag for next time");
            assert_eq!(k.vm.get(Vm::LruGenAgingSkipped), 1);
        } else {
            assert_eq!(k.vm.get(Vm::LruGenAgingSkipped), 0);
        }
        sc.memcgs_need_aging = true;
        p.shrink_lruvec(&mut k, lv, &mut sc);
        assert!(sc.nr_reclaimed >= 64, "{variant}: {}", sc.nr_reclaimed);
        // 6.1 clears the flag: this memcg evicted 64+ pages and needed no aging.
        assert_eq!(sc.memcgs_need_aging, variant == "none", "{variant}");
        assert_eq!(sc.last_reclaimed, 0, "snapshot taken by lru_gen_age_node");
        let skipped0 = k.vm.get(Vm::LruGenAgingSkipped);
        p.age_node(&mut k, 0, &mut sc);
        let skipped = k.vm.get(Vm::LruGenAgingSkipped) - skipped0;
        assert_eq!(skipped, u64::from(variant == "v6.1"), "{variant}");
        assert_eq!(sc.last_reclaimed, sc.nr_reclaimed);
    }
}

const MANY: &str = r#"
[machine]
memory = "256MiB"
cpus = 2
[kernel]
policy = "mglru"
[[memcg]]
path = "/m{i}"
instances = 6
"#;

/// The visits of each shrink_many call must follow the bins from the random first one,
/// in order, each in the old generation as it was when the walk reached the bin.
fn check_bin_order(visits: &[MemcgVisit]) {
    let mut i = 0;
    while i < visits.len() {
        let call = visits[i].call;
        let mut last = 0;
        while i < visits.len() && visits[i].call == call {
            let v = visits[i];
            let step = (v.bin + MEMCG_NR_BINS - v.first_bin) % MEMCG_NR_BINS;
            assert!(
                step >= last,
                "call {call}: bin {} after step {last}: {visits:?}",
                v.bin
            );
            last = step;
            i += 1;
        }
    }
}

#[test]
fn the_memcg_lru_walks_bins_in_order_and_reaches_every_memcg() {
    let (mut k, mut p) = system(MANY, "memcg-lru", 7);
    let memcgs: Vec<MemcgId> = (1..=6).collect();
    for &m in &memcgs {
        read_file(&mut k, &mut p, m, 5_000);
    }
    for lru in &p.memcg_lru {
        lru.check().unwrap();
    }
    // Every memcg (and the root) was onlined into the old generation.
    assert_eq!(p.memcg_lru[0].nr_memcgs.iter().sum::<u64>(), 7);
    p.memcg_lru[0].trace = Some(Vec::new());
    let before: Vec<u64> = k.memcgs.cgs.iter().map(|c| c.usage).collect();
    for _ in 0..200 {
        let got = vmscan::try_to_free_pages(&mut k, &mut p, 0);
        assert!(got >= 32, "direct reclaim met its target: {got}");
    }
    let visits = p.memcg_lru[0].trace.take().unwrap();
    check_bin_order(&visits);
    // Eventual fairness: every memcg gave back pages.
    for &m in &memcgs {
        assert!(
            k.memcgs.cgs[m as usize].usage < before[m as usize],
            "memcg {m} untouched"
        );
    }
    for lru in &p.memcg_lru {
        lru.check().unwrap();
    }
    let check = reclaimsim::engine::check::check(&k, &p);
    assert!(check.is_ok(), "{check:?}");
}

#[test]
fn memcg_limit_reclaim_keeps_shrink_node_memcgs_under_the_memcg_lru() {
    let (mut k, mut p) = system(MANY, "memcg-lru", 3);
    read_file(&mut k, &mut p, 2, 3_000);
    p.memcg_lru[0].trace = Some(Vec::new());
    let got = vmscan::try_to_free_mem_cgroup_pages(&mut k, &mut p, 2, 64);
    assert!(got >= 64, "{got}");
    assert_eq!(
        p.memcg_lru[0].trace.as_ref().unwrap().len(),
        0,
        "no shrink_many for a memcg's own limit"
    );
    assert_eq!(
        k.vm.get(Vm::PgstealDirect),
        0,
        "cgroup reclaim counts in the memcg only"
    );
    assert!(k.memcgs.cgs[2].stat.get(Vm::PgstealDirect) >= 64);
    for lru in &p.memcg_lru {
        lru.check().unwrap();
    }
}

// v11 (the May 2022 posting, seed 000): patch 09/14 ("v11") against its patch1-8
// baseline ("v11-patch1-8"), both in the posting's shapes (docs/model/mglru-memcgs.md).

/// kswapd's scan_control at `priority` with patch 09's three flags as given.
fn kswapd_sc(priority: i32, need_aging: bool, need_swapping: bool, avoid: bool) -> ScanControl {
    let mut sc = ScanControl::new(1000, None, true);
    sc.priority = priority;
    sc.memcgs_need_aging = need_aging;
    sc.memcgs_need_swapping = need_swapping;
    sc.memcgs_avoid_swapping = avoid;
    sc
}

fn flags(sc: &ScanControl) -> (bool, bool, bool) {
    (
        sc.memcgs_need_aging,
        sc.memcgs_need_swapping,
        sc.memcgs_avoid_swapping,
    )
}

#[test]
fn v11_lru_gen_age_node_gate_follows_the_flag_sequence() {
    let (mut k, mut p, _) = aged_anon("v11");
    k.cur = Exec::new(k.cur.clock, 1, true, None);
    let skipped = |k: &Kernel| k.vm.get(Vm::LruGenAgingSkipped);
    // balance_pgdat's first iteration: every flag clear, so skip and re-arm all three.
    let mut sc = kswapd_sc(12, false, false, false);
    p.age_node(&mut k, 0, &mut sc);
    assert_eq!(skipped(&k), 1);
    assert_eq!(
        flags(&sc),
        (true, true, true),
        "need_aging, need_swapping, avoid"
    );
    // No memcg cleared need_aging: age, and avoid swapping after it.
    let mut sc = kswapd_sc(12, true, false, false);
    p.age_node(&mut k, 0, &mut sc);
    assert_eq!(skipped(&k), 1, "aged, not skipped");
    assert_eq!(flags(&sc), (true, true, true));
    // Some memcg met its budget without aging, but every such one took anon
    // (need_swapping still set): skip, and swap freely until the next call.
    let mut sc = kswapd_sc(12, false, true, true);
    p.age_node(&mut k, 0, &mut sc);
    assert_eq!(skipped(&k), 2);
    assert_eq!(flags(&sc), (true, true, false));
    // Some memcg met its budget without anon too: skip and avoid swapping.
    let mut sc = kswapd_sc(12, false, false, false);
    p.age_node(&mut k, 0, &mut sc);
    assert_eq!(skipped(&k), 3);
    assert_eq!(flags(&sc), (true, true, true));
    // patch1-8 has no gate: it never skips and leaves the flags alone.
    let (mut k, mut p, _) = aged_anon("v11-patch1-8");
    k.cur = Exec::new(k.cur.clock, 1, true, None);
    for (a, s, v) in [
        (false, false, false),
        (false, true, false),
        (true, false, true),
    ] {
        let mut sc = kswapd_sc(12, a, s, v);
        p.age_node(&mut k, 0, &mut sc);
        assert_eq!(flags(&sc), (a, s, v));
    }
    assert_eq!(skipped(&k), 0);
}

#[test]
fn v11_a_memcg_that_met_its_budget_on_file_clears_need_aging_and_need_swapping() {
    for (variant, patch09) in [("v11", true), ("v11-patch1-8", false)] {
        let (mut k, mut p) = system(ANON_MACHINE, variant, 1);
        let a = k.memcgs.by_path("/a").unwrap();
        read_file(&mut k, &mut p, a, 20_000);
        let lv = k.lruvec(a, 0);
        k.cur = Exec::new(k.cur.clock, 1, true, None);
        // Four generations of clean page cache: no aging due; budget 20000 >> 7.
        let mut sc = kswapd_sc(7, true, true, true);
        p.shrink_lruvec(&mut k, lv, &mut sc);
        assert!(sc.nr_reclaimed >= 156, "{variant}: {}", sc.nr_reclaimed);
        assert_eq!(k.vm.get(Vm::PgstealAnon), 0);
        assert_eq!(
            (sc.memcgs_need_aging, sc.memcgs_need_swapping),
            (!patch09, !patch09),
            "{variant}"
        );
        assert_eq!(k.vm.get(Vm::LruGenAvoidSwapping), 0, "took no anon");
    }
}

#[test]
fn v11_avoid_swapping_leaves_a_memcg_after_one_anon_batch() {
    // kswapd at priority 7: the memcg's budget is 20000 >> 7 = 156 folios.
    for (variant, avoid, breaks) in [
        ("v11", true, true),
        ("v11", false, false),
        ("v11-patch1-8", true, false),
    ] {
        let (mut k, mut p, lv) = aged_anon(variant);
        k.cur = Exec::new(k.cur.clock, 1, true, None);
        let mut sc = kswapd_sc(7, true, true, avoid);
        p.shrink_lruvec(&mut k, lv, &mut sc);
        let r = sc.nr_reclaimed;
        let stops = k.vm.get(Vm::LruGenAvoidSwapping);
        if breaks {
            assert!((1..=64).contains(&r), "{variant}: one batch of 64, {r}");
            assert_eq!(stops, 1);
            assert!(
                sc.memcgs_need_swapping,
                "a memcg that broke off never clears it"
            );
        } else {
            assert!(r >= 156, "{variant} avoid={avoid}: the whole budget, {r}");
            assert_eq!(stops, 0);
        }
    }
}

/// Anon of /a in exactly three generations: 1,000 pages in the oldest, 20,000 faulted
/// after the first aging in the middle one: aging is due (the oldest holds less than a
/// quarter of the pages) and eviction possible without it.
fn three_gens_needing_aging(variant: &str) -> (Kernel, Mglru, usize) {
    let (mut k, mut p) = system(ANON_MACHINE, variant, 1);
    let a = k.memcgs.by_path("/a").unwrap();
    let debugfs = reclaimsim::kernel::lru::mglru::debugfs::parse_commands;
    // Faulted folios go to max_seq; each forced walk clears their young bits.
    for pages in [1_000, 20_000] {
        fault_anon(&mut k, &mut p, a, pages);
        reclaimsim::kernel::batch::lru_add_drain(&mut k, &mut p);
        p.lru_gen_write(&mut k, &debugfs("+ /a 0 max 60 1").unwrap())
            .expect("aging");
    }
    // Retire the empty oldest generation: three are left.
    p.lru_gen_write(&mut k, &debugfs("- /a 0 max-3 60").unwrap())
        .expect("eviction");
    let lv = k.lruvec(a, 0);
    let g = &p.lrugen[lv];
    assert_eq!(
        g.max_seq - g.min_seq[0] + 1,
        3,
        "{:?} {} {:?}",
        g.min_seq,
        g.max_seq,
        g.nr_pages
    );
    assert!(p.should_run_aging(lv, 12, true).0, "aging is due");
    (k, p, lv)
}

#[test]
fn v11_kswapd_leaves_aging_to_lru_gen_age_node_even_at_priority_12() {
    let (mut k, mut p, lv) = three_gens_needing_aging("v11");
    k.cur = Exec::new(k.cur.clock, 1, true, None);
    let mut sc = kswapd_sc(12, true, true, false);
    assert_eq!(p.get_nr_to_scan_v11(&mut k, lv, &mut sc, 60, true), 0);
    p.shrink_lruvec(&mut k, lv, &mut sc);
    assert_eq!(sc.nr_scanned, 0, "v11 kswapd scans nothing");
    // 6.1 at priority 12 does not age either, but scans with three generations.
    let (mut k, mut p, lv) = three_gens_needing_aging("v6.1");
    k.cur = Exec::new(k.cur.clock, 1, true, None);
    let mut sc = kswapd_sc(12, true, false, false);
    p.shrink_lruvec(&mut k, lv, &mut sc);
    assert!(sc.nr_scanned > 0, "v6.1 kswapd scans at priority 12");
}

#[test]
fn v11_global_direct_reclaim_ages_only_on_the_force_deactivate_retry() {
    let (mut k, mut p, lv) = three_gens_needing_aging("v11");
    let max_seq = p.lrugen[lv].max_seq;
    let mut sc = ScanControl::new(32, None, false);
    sc.priority = 6;
    assert_eq!(p.get_nr_to_scan_v11(&mut k, lv, &mut sc, 60, true), 0);
    assert!(sc.skipped_deactivate);
    assert_eq!(p.lrugen[lv].max_seq, max_seq, "no aging");
    sc.force_deactivate = true;
    let nr = p.get_nr_to_scan_v11(&mut k, lv, &mut sc, 60, true);
    let total = p.get_nr_evictable(lv, true).0;
    assert!(total >= 20_000, "{total}");
    assert_eq!(nr, total >> 6, "the evictable size >> priority");
    assert_eq!(p.lrugen[lv].max_seq, max_seq + 1, "aged on the retry");
}

#[test]
fn v11_patch09_swaps_less_than_its_baseline_in_the_mixed_workload() {
    let base = run(MIXED, &["kernel.memcg_reclaim=v11-patch1-8"], true);
    let v11 = run(MIXED, &["kernel.memcg_reclaim=v11"], true);
    for r in [&base, &v11] {
        assert!(r.workloads["kv:run"].ops > 40_000, "{:?}", r.workloads);
        assert!(r.workloads["io"].ops > 0);
        assert!(r.oom_kills.is_empty());
        assert_eq!(
            vm(r, "lru_gen_abort_scan"),
            0,
            "v11 has no should_abort_scan"
        );
    }
    assert_eq!(vm(&base, "lru_gen_aging_skipped"), 0);
    assert_eq!(vm(&base, "lru_gen_avoid_swapping"), 0);
    assert!(vm(&v11, "lru_gen_aging_skipped") > 0);
    assert!(vm(&v11, "lru_gen_avoid_swapping") > 0);
    let (b, p) = (stat(&base, "/kv", "pswpout"), stat(&v11, "/kv", "pswpout"));
    assert!(
        p < b,
        "memcached swapped out {p} pages with patch 09, {b} without"
    );
    let (b, p) = (stat(&base, "/kv", "pswpin"), stat(&v11, "/kv", "pswpin"));
    assert!(
        p < b,
        "memcached swapped in {p} pages with patch 09, {b} without"
    );
}

#[test]
fn v11_inc_max_seq_turns_the_oldest_generation_into_the_youngest() {
    for (variant, v11) in [("v11", true), ("v11-patch1-8", true), ("v6.1", false)] {
        let (mut k, mut p) = system(ANON_MACHINE, variant, 1);
        let a = k.memcgs.by_path("/a").unwrap();
        read_file(&mut k, &mut p, a, 1_000);
        reclaimsim::kernel::batch::lru_add_drain(&mut k, &mut p);
        let lv = k.lruvec(a, 0);
        let file_in = |p: &Mglru, seq: u64| p.lrugen[lv].nr_pages[(seq % 4) as usize][1];
        assert_eq!(
            file_in(&p, p.lrugen[lv].min_seq[1]),
            1_000,
            "read into the oldest"
        );
        // Four generations: a forced aging must retire the oldest to make room.
        let cmds = reclaimsim::kernel::lru::mglru::debugfs::parse_commands("+ /a 0 max 0 1");
        p.lru_gen_write(&mut k, &cmds.unwrap()).expect("aging");
        let g = &p.lrugen[lv];
        // 6.1 moves the folios into the next generation, still the oldest; v11 only
        // advances min_seq, and their slot is now max_seq's.
        let (oldest, youngest) = (file_in(&p, g.min_seq[1]), file_in(&p, g.max_seq));
        assert_eq!(
            (oldest, youngest),
            if v11 { (0, 1_000) } else { (1_000, 0) },
            "{variant}"
        );
        p.check(&k, lv, &mut |_, _| Ok(()))
            .unwrap_or_else(|e| panic!("{variant}: {e}"));
    }
}

/// Seed 003's memtier populate under the memcg LRU (16 memcached threads charging a
/// memcg a quarter of their data): from 6.4 a reclaimer that finds the mm list's round
/// used up ends it and ages while another still walks memcached's only mm, so the other
/// threads find a cold generation to evict. Under 6.1's walker count (only the last
/// walker out may age) with the memcg LRU's no-wait get_nr_to_scan, their charges
/// failed every retry during the first walk and memcached was OOM-killed at 22.5 ms.
#[test]
fn memcg_lru_ages_while_another_reclaimer_still_walks() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/seeds/003-batch-aging-memtier.toml");
    let sets = [
        "duration=60ms".to_string(),
        "kernel.memcg_reclaim=\"memcg-lru\"".to_string(),
    ];
    let loaded = scenario::load(&path, &sets, None).unwrap();
    let (name, s) = loaded.variants.iter().find(|(n, _)| n == "on").unwrap();
    let opts = RunOptions {
        check: true,
        ..Default::default()
    };
    let r = reclaimsim::results::run(s, name, opts).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.oom_kills.is_empty(), "no OOM kill: {:?}", r.oom_kills);
    assert!(r.virtual_time_s >= 0.06, "ran its 60 ms");
    let g = &r.lru_gen["/test"][0];
    assert!(g.max_seq > 6, "aged several times: max_seq {}", g.max_seq);
    assert!(
        r.vmstat["pgsteal_anon"] > 10_000,
        "memcached's pages were swapped"
    );
}
