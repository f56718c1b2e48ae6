//! Seed 003, Kairui Song's "mm, lru_gen: batch update pages when aging" (three parts,
//! `kernel.batch_aging*`), driven directly on a small MGLRU kernel: bulk moves keep the
//! LRU order of the folios aging moves (6.1 reverses it), batched counters end where the
//! per-folio updates end, prefetch only changes the cost, and the seed scenarios run
//! clean under the invariant checker with each part on.

use reclaimsim::engine::check;
use reclaimsim::engine::RunOptions;
use reclaimsim::kernel::batch;
use reclaimsim::kernel::fault;
use reclaimsim::kernel::folio::Pfn;
use reclaimsim::kernel::lru::mglru::debugfs::parse_commands;
use reclaimsim::kernel::lru::mglru::gen::{FILE, MAX_NR_GENS};
use reclaimsim::kernel::lru::mglru::Mglru;
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::memcg::MemcgId;
use reclaimsim::kernel::pagecache::File;
use reclaimsim::kernel::vmscan::ScanControl;
use reclaimsim::kernel::{Exec, Kernel};
use reclaimsim::results::VariantResult;
use reclaimsim::scenario;
use std::path::PathBuf;

/// A 64 MiB machine without swap running MGLRU, one memcg `/test`, a file of `pages`
/// pages, with `kernel` lines added to `[kernel]` (the batch-aging switches).
struct Sys {
    k: Kernel,
    p: Mglru,
    memcg: MemcgId,
    lv: usize,
    file: u32,
}

impl Sys {
    fn new(kernel: &str, pages: u64) -> Sys {
        let text = format!(
            r#"name = "batch-aging"
[machine]
memory = "64MiB"
cpus = 2
[kernel]
policy = "mglru"
{kernel}
[[memcg]]
path = "/test"
[[workload]]
name = "idle"
[workload.anon]
size = "4KiB"
"#
        );
        let s = scenario::parse(&text, "test.toml", &[], None)
            .unwrap_or_else(|e| panic!("bad test scenario: {e}"))
            .base;
        let mut k = Kernel::new(&s.kernel_setup());
        let p = Mglru::new(&k);
        k.cur = Exec::new(0, 0, false, None);
        let memcg = k.memcgs.by_path("/test").unwrap();
        let lv = k.lruvec(memcg, 0);
        k.files.push(File::new(pages, false));
        let file = (k.files.len() - 1) as u32;
        Sys {
            k,
            p,
            memcg,
            lv,
            file,
        }
    }

    fn read(&mut self, index: u64) {
        fault::filemap_read(
            &mut self.k,
            &mut self.p,
            self.memcg,
            self.file,
            index,
            false,
        )
        .expect("read was OOM-killed");
    }

    /// Reads pages `0..n` in order and puts them on the LRU: read(2) places them in the
    /// oldest generation (6.1), newest at the head, so page 0 is at the tail.
    fn read_all(&mut self, n: u64) {
        for i in 0..n {
            self.read(i);
        }
        batch::lru_add_drain(&mut self.k, &mut self.p);
    }

    fn page_of(&self, pfn: Pfn) -> u64 {
        let slots = &self.k.files[self.file as usize].slots;
        (0..slots.len() as u64)
            .find(|&i| slots[i as usize].as_page() == Some(pfn))
            .expect("a page of the file")
    }

    /// The file pages on generation `gen`'s list, tail (next to evict) first.
    fn gen_tail_first(&self, gen: usize) -> Vec<u64> {
        let mut v: Vec<u64> = self.p.lrugen[self.lv].lists[gen][FILE]
            .to_vec(&self.k.links)
            .into_iter()
            .map(|pfn| self.page_of(pfn))
            .collect();
        v.reverse();
        v
    }

    /// Makes the PID controller protect every tier above 0 for file: tier 1 and up
    /// refault at 100% against tier 0's 0% (get_tier_idx returns 0).
    fn protect_tiers_above_0(&mut self) {
        let g = &mut self.p.lrugen[self.lv];
        g.avg_refaulted[FILE] = [0, 1000, 1000, 1000];
        g.avg_total[FILE] = [1000, 1000, 1000, 1000];
        assert_eq!(g.get_tier_idx(FILE), 0);
    }

    /// One evict_folios() of memcg reclaim at swappiness 0 (file only).
    fn evict_once(&mut self) -> u64 {
        let mut sc = ScanControl::new(u64::MAX, Some(self.memcg), false);
        self.p.evict_folios(&mut self.k, self.lv, &mut sc, 0)
    }

    /// `+ /test 0 max 0 1`: age the memcg once (force_scan), at swappiness 0.
    fn age(&mut self) {
        let cmds = parse_commands("+ /test 0 max 0 1").unwrap();
        self.p.lru_gen_write(&mut self.k, &cmds).unwrap();
    }

    #[track_caller]
    fn check(&self) {
        if let Err(e) = check::check(&self.k, &self.p) {
            panic!("invariant violated: {e}");
        }
    }

    /// nr_pages of every generation and the five compat counters.
    fn sizes(&self) -> ([[i64; 2]; MAX_NR_GENS as usize], [u64; 5]) {
        (self.p.lrugen[self.lv].nr_pages, self.k.lruvecs[self.lv].nr)
    }
}

const BULK_ON: &str = "batch_aging_bulk_move = true";
const BULK_OFF: &str = "batch_aging_bulk_move = false";

/// Reads 300 pages, re-reads every third (tier 1, protected), evicts once: the first 64
/// unprotected pages from the tail are isolated and freed, the 32 protected ones met on
/// the way (pages 0, 3, ..., 93) go to the next generation.
fn protect_one_pass(kernel: &str) -> Sys {
    let mut s = Sys::new(kernel, 300);
    s.read_all(300);
    for i in (0..300).step_by(3) {
        s.read(i);
    }
    s.protect_tiers_above_0();
    assert!(s.evict_once() > 0);
    s.check();
    s
}

#[test]
fn protected_folios_keep_their_order_with_bulk_moves() {
    let protected: Vec<u64> = (0..96).step_by(3).collect();
    let s = protect_one_pass(BULK_ON);
    assert_eq!(
        s.gen_tail_first(1),
        protected,
        "bulk move: the oldest protected folio stays next to evict"
    );
    assert_eq!(
        s.gen_tail_first(0).first(),
        Some(&96),
        "page 95 was the 64th isolated, the scan stopped there"
    );
    let s = protect_one_pass(BULK_OFF);
    let reversed: Vec<u64> = protected.iter().rev().copied().collect();
    assert_eq!(
        s.gen_tail_first(1),
        reversed,
        "6.1: per-folio list_move_tail from the tail reverses them"
    );
}

#[test]
fn inc_min_seq_keeps_order_with_bulk_moves_and_reverses_without() {
    // Generation 0 holds pages 0..1000 (0 at the tail); aging with four generations
    // retires it through inc_min_seq, which moves every folio to generation 1.
    for (kernel, want_reversed) in [(BULK_ON, false), (BULK_OFF, true)] {
        let mut s = Sys::new(kernel, 1000);
        s.read_all(1000);
        assert_eq!(s.gen_tail_first(0), (0..1000).collect::<Vec<_>>());
        s.age();
        s.check();
        assert!(s.gen_tail_first(0).is_empty());
        let mut want: Vec<u64> = (0..1000).collect();
        if want_reversed {
            want.reverse();
        }
        assert_eq!(s.gen_tail_first(1), want, "{kernel}");
    }
}

#[test]
fn bulk_order_is_kept_within_one_max_lru_batch() {
    // inc_min_seq moves at most MAX_LRU_BATCH (4096) folios per call: each call's run
    // keeps its order, but the second run lands behind the first ("only in a small
    // scope", as the cover letter says).
    let mut s = Sys::new(BULK_ON, 5000);
    s.read_all(5000);
    s.age();
    s.check();
    let want: Vec<u64> = (4096..5000).chain(0..4096).collect();
    assert_eq!(s.gen_tail_first(1), want);
}

#[test]
fn a_promoted_folio_goes_alone_to_the_head_of_its_generation() {
    // A folio whose gen field was promoted (as a page-table walk or look-around does,
    // folio_update_gen) while it sits on the oldest list: inc_min_seq moves it to the
    // head of its own generation (6.1: the tail) and keeps it out of the run.
    for (kernel, at_head) in [(BULK_ON, true), (BULK_OFF, false)] {
        let mut s = Sys::new(kernel, 100);
        s.read_all(100);
        let pfn = s.k.files[s.file as usize].slots[50].as_page().unwrap();
        let g = &mut s.p.lrugen[s.lv];
        let max_gen = (g.max_seq % MAX_NR_GENS) as usize;
        assert_eq!(
            reclaimsim::kernel::lru::mglru::gen::folio_update_gen(
                &mut s.k.folios[pfn as usize],
                max_gen
            ),
            0
        );
        g.nr_pages[0][FILE] -= 1;
        g.nr_pages[max_gen][FILE] += 1;
        s.k.lruvecs[s.lv].nr[2] -= 1;
        s.k.lruvecs[s.lv].nr[3] += 1;
        s.check();
        s.age();
        s.check();
        let on_max = s.gen_tail_first(max_gen);
        assert_eq!(on_max.len(), 1);
        let want: Vec<u64> = (0..100).filter(|&i| i != 50).collect();
        let got = s.gen_tail_first(1);
        if at_head {
            assert_eq!(got, want);
        } else {
            assert_eq!(got, want.iter().rev().copied().collect::<Vec<_>>());
        }
    }
}

#[test]
fn batched_counters_end_where_per_folio_updates_end() {
    // With three generations the next one is active, so the compat counters move too.
    let setup = |kernel: &str| {
        let mut s = Sys::new(kernel, 300);
        s.p.lrugen[s.lv].min_seq = [1, 1];
        s.read_all(300);
        for i in (0..300).step_by(3) {
            s.read(i);
        }
        s.protect_tiers_above_0();
        s
    };
    let mut results = Vec::new();
    for counters in [false, true] {
        for bulk in [false, true] {
            let kernel =
                format!("batch_aging_counters = {counters}\nbatch_aging_bulk_move = {bulk}");
            let mut s = setup(&kernel);
            s.evict_once();
            s.check();
            let (nr_pages, compat) = s.sizes();
            assert_eq!(nr_pages[2][FILE], 32, "the protected folios are in gen 2");
            assert_eq!(compat[3], 32, "and count as active file");
            assert_eq!(compat[2], 300 - 64 - 32, "the rest inactive");
            // Two agings: the second retires generation 1 through inc_min_seq.
            s.age();
            s.age();
            s.check();
            results.push(s.sizes());
        }
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
}

#[test]
fn prefetch_only_changes_the_cost() {
    let run = |prefetch: bool| {
        let mut s = protect_one_pass(&format!("batch_aging_prefetch = {prefetch}"));
        let state: Vec<Vec<u64>> = (0..MAX_NR_GENS as usize)
            .map(|g| s.gen_tail_first(g))
            .collect();
        let clock = s.k.cur.clock;
        s.age();
        (
            state,
            s.sizes(),
            clock,
            s.k.cur.clock - clock,
            s.k.costs.clone(),
        )
    };
    let (state0, sizes0, clock0, age0, c) = run(false);
    let (state1, sizes1, clock1, age1, _) = run(true);
    assert_eq!((state0, sizes0), (state1, sizes1));
    // evict_folios scanned 96 folios and inc_min_seq walked gen 0's 204: all but the
    // first of each come prefetched, which hides part of each miss, never more.
    let most = |n: u64| n * (c.lru_scan_miss - c.lru_scan_prefetched);
    assert!(clock0 > clock1 && clock0 - clock1 < most(95));
    assert!(age0 > age1 && age0 - age1 < most(203));
}

/// A prefetch hides the miss latency that has elapsed since it was issued (at the
/// previous folio's touch): the rest stalls, down to a cache hit.
#[test]
fn a_prefetch_hides_only_the_latency_elapsed_since_it_was_issued() {
    use reclaimsim::kernel::vmscan::lru_scan_touch;
    let mut s = protect_one_pass("batch_aging_prefetch = true");
    let (miss, hit) = (s.k.costs.lru_scan_miss, s.k.costs.lru_scan_prefetched);
    assert!(miss > hit + 40);
    let spent = |s: &mut Sys, prefetched: bool, gap: u64| {
        s.k.cur.clock += gap;
        let t = s.k.cur.clock;
        lru_scan_touch(&mut s.k, prefetched);
        s.k.cur.clock - t
    };
    assert_eq!(spent(&mut s, false, 0), miss, "the first folio of a scan");
    assert_eq!(
        spent(&mut s, true, 40),
        miss - 40,
        "40 ns of work since the prefetch"
    );
    assert_eq!(spent(&mut s, true, miss), hit, "the line has arrived");
    assert_eq!(spent(&mut s, false, miss), miss, "no prefetch, no help");
}

#[test]
fn counters_and_bulk_moves_cost_less() {
    let run = |kernel: &str| {
        let mut s = Sys::new(kernel, 1000);
        s.read_all(1000);
        let t = s.k.cur.clock;
        s.age();
        s.k.cur.clock - t
    };
    let c = reclaimsim::sim::cost::CostTable::default();
    let off = run("");
    // One size update per folio moved by inc_min_seq (no compat change: gen 1 is
    // inactive with four generations) against one for the whole list.
    assert_eq!(
        off - run("batch_aging_counters = true"),
        999 * c.gen_size_update
    );
    // One list operation per folio against one splice.
    assert_eq!(off - run(BULK_ON), 999 * c.list_op);
}

/// The text of a seed scenario of the repository.
fn seed_text(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/seeds")
        .join(name);
    std::fs::read_to_string(path).expect("seed scenario")
}

/// Every variant of a scenario with `sets` applied, run with the invariant checker on.
fn run_checked(text: &str, sets: &[&str]) -> Vec<VariantResult> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = scenario::parse(text, "seed.toml", &sets, None).unwrap_or_else(|e| panic!("{e}"));
    loaded
        .variants
        .iter()
        .map(|(n, s)| {
            reclaimsim::results::run(
                s,
                n,
                RunOptions {
                    check: true,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{n}: {e}"))
        })
        .collect()
}

#[test]
fn fio_seed_scenario_runs_clean_with_each_part() {
    // Scaled down 4x more (the same ratio of files to memcg). In 6.1 read(2) folios
    // enter the oldest generation, which then never empties, so this workload never ages
    // by itself: proactive aging every 4 ms (debugfs `+`, four generations each time)
    // makes inc_min_seq move the whole oldest generation while fio runs.
    let mut text = seed_text("003-batch-aging.toml");
    for ms in (12..80).step_by(4) {
        text += &format!("\n[[event]]\nat = \"{ms}ms\"\ncommand = \"+ /test 0 max 0 1\"\n");
    }
    let r = run_checked(
        &text,
        &[
            "machine.memory=128MiB",
            "memcg.\"/test\".max=16MiB",
            "workload.fio.fio.size=3840KiB",
            "workload.fio.fio.ramp_time=20ms",
            "workload.fio.fio.runtime=60ms",
        ],
    );
    let names: Vec<&str> = r.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["off", "counters", "bulk_move", "prefetch", "on"]);
    for v in &r {
        assert!(v.workloads["fio"].ops > 0, "{}", v.name);
        assert!(v.lru_gen["/test"][0].max_seq >= 3 + 17, "{}: aged", v.name);
    }
}

#[test]
fn memtier_seed_scenario_runs_clean_with_each_part() {
    let r = run_checked(
        &seed_text("003-batch-aging-memtier.toml"),
        &[
            "memcg.\"/test\".max=16MiB",
            "workload.memcached.memcached.phase.populate.key-maximum=62500",
            "workload.memcached.memcached.phase.populate.run-count=2",
        ],
    );
    assert_eq!(r.len(), 2);
    for v in &r {
        assert!(v.workloads["memcached"].ops > 0, "{}", v.name);
        assert!(v.vmstat["pswpout"] > 0, "{}: under pressure", v.name);
    }
}

/// 6.8's page-cache fix (`page_cache_fix`): a folio whose refs saturated (six reads) is
/// protected by sort_folio even when the PID controller protects no tier; in 6.1 it is
/// evicted with the rest of the tail.
#[test]
fn the_page_cache_fix_protects_saturated_folios() {
    let kept = |fix: bool| {
        let mut s = Sys::new(&format!("page_cache_fix = {fix}"), 300);
        s.read_all(300);
        for _ in 0..5 {
            for i in 0..10 {
                s.read(i);
            }
        }
        let g = &mut s.p.lrugen[s.lv];
        g.avg_refaulted[FILE] = [1000, 0, 0, 0];
        g.avg_total[FILE] = [1000; 4];
        assert_eq!(
            g.get_tier_idx(FILE),
            3,
            "no tier protected by the controller"
        );
        while s.k.files[s.file as usize].nr_cached > 200 {
            assert!(s.evict_once() > 0);
        }
        s.check();
        let slots = &s.k.files[s.file as usize].slots;
        (0..10).filter(|&i| slots[i].as_page().is_some()).count()
    };
    assert_eq!(kept(false), 0, "6.1: evicted with the tail");
    assert_eq!(kept(true), 10, "6.8: protected, one generation up");
}
