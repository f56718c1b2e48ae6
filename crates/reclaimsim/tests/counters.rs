//! The counters where Linux 6.1 counts them (docs/model/statistics.md): swap I/O to zram
//! and brd goes through the device's ->rw_page, not submit_bio(), so it adds pswpin and
//! pswpout but no pgpgin or pgpgout; MGLRU's lru_gen_refault() counts a refault only
//! when the shadow's generation is still min_seq; memory.stat holds the keys 6.1 prints
//! and the model's own counters sit in `model_counters`.

mod common;

use common::{memcg_stat, run_checked, swap_reread, vmstat};
use reclaimsim::kernel::batch;
use reclaimsim::kernel::fault;
use reclaimsim::kernel::folio::pg;
use reclaimsim::kernel::lru::mglru::gen::LRU_REFS_WIDTH;
use reclaimsim::kernel::lru::mglru::Mglru;
use reclaimsim::kernel::lru::Policy;
use reclaimsim::kernel::pagecache::File;
use reclaimsim::kernel::stats::Vm;
use reclaimsim::kernel::workingset::{Shadow, EVICTION_MASK};
use reclaimsim::kernel::{Exec, Kernel};
use reclaimsim::results::MEMORY_STAT_KEYS;
use reclaimsim::scenario;

#[test]
fn swap_to_zram_or_brd_adds_pswpout_and_pswpin_but_no_pgpgout_or_pgpgin() {
    for policy in ["classic", "mglru"] {
        for device in ["zram", "ramdisk"] {
            let r = run_checked(&swap_reread(policy, device, Some("/a")));
            let at = format!("{policy} {device}");
            assert!(vmstat(&r, "pswpout") > 4096, "{at}");
            assert!(vmstat(&r, "pswpin") > 4096, "{at}");
            // Anon only: no file I/O goes through submit_bio() either.
            assert_eq!(vmstat(&r, "pgpgout"), 0, "{at}");
            assert_eq!(vmstat(&r, "pgpgin"), 0, "{at}");
        }
    }
}

#[test]
fn memory_stat_holds_what_6_1_prints_in_its_order_and_the_rest_is_apart() {
    let r = run_checked(&swap_reread("mglru", "zram", Some("/a")));
    for (path, m) in &r.memcgs {
        let keys: Vec<&str> = m.stat.keys().map(String::as_str).collect();
        assert_eq!(keys, MEMORY_STAT_KEYS, "{path}");
        // The JSON keeps that order, and memory.events' (low, high, max, oom, oom_kill).
        let json = serde_json::to_string(m).expect("serializes");
        let at = |k: &str| json.find(&format!("\"{k}\":")).expect(k);
        let order = |ks: &[&str]| ks.windows(2).all(|w| at(w[0]) < at(w[1]));
        assert!(order(&MEMORY_STAT_KEYS), "{path}: {json}");
        assert!(order(&["low", "high", "max", "oom", "oom_kill"]), "{json}");
        let get = |k: &str| m.stat[k];
        assert_eq!(get("pgscan"), get("pgscan_kswapd") + get("pgscan_direct"));
        assert_eq!(
            get("pgsteal"),
            get("pgsteal_kswapd") + get("pgsteal_direct")
        );
    }
    // pswpout is a global event in 6.1; the model's attribution to /a is outside
    // memory.stat, as are its own MGLRU counters.
    let a = &r.memcgs["/a"];
    assert!(memcg_stat(&r, "/a", "pgsteal") > 0);
    assert!(a.model_counters["pswpout"] > 0);
    assert!(a.model_counters["lru_gen_aging"] > 0);
    assert!(a.current > 0 && a.swap_current > 0);
    assert!(!r.vmstat.contains_key("lru_gen_aging"));
    assert!(r.model_counters["lru_gen_aging"] > 0);
    assert!(r.vmstat["pswpout"] > 0);
}

/// An MGLRU machine with one page of a file read into memcg /t, on the LRU.
fn mglru_with_a_page() -> (Kernel, Mglru, u32, usize) {
    let text = r#"name = "refault"
[machine]
memory = "64MiB"
cpus = 2
[kernel]
policy = "mglru"
[[memcg]]
path = "/t"
[[workload]]
name = "idle"
[workload.anon]
size = "4KiB"
"#;
    let s = scenario::parse(text, "test.toml", &[], None)
        .unwrap_or_else(|e| panic!("bad test scenario: {e}"))
        .base;
    let mut k = Kernel::new(&s.kernel_setup());
    let mut p = Mglru::new(&k);
    k.cur = Exec::new(0, 0, false, None);
    let memcg = k.memcgs.by_path("/t").unwrap();
    k.files.push(File::new(1, false));
    let file = (k.files.len() - 1) as u32;
    fault::filemap_read(&mut k, &mut p, memcg, file, 0, false).expect("read");
    batch::lru_add_drain(&mut k, &mut p);
    let pfn = k.files[file as usize].slots[0].as_page().expect("page 0");
    let lv = k.lruvec(memcg, 0);
    (k, p, pfn, lv)
}

/// A shadow of the page's memcg and node with generation `seq` and `refs` accesses
/// through file descriptors (refs - 1 in the token, as lru_gen_eviction() packs it).
fn shadow(k: &Kernel, pfn: u32, seq: u64, refs: u64) -> u64 {
    Shadow {
        memcg: k.folios[pfn as usize].memcg,
        node: 0,
        eviction: ((seq << LRU_REFS_WIDTH) | refs.saturating_sub(1)) & EVICTION_MASK,
        workingset: refs > 0,
    }
    .pack()
}

fn refaulted(p: &Mglru, lv: usize) -> u64 {
    (p.lrugen[lv].refaulted.iter())
        .flat_map(|h| h.iter().flat_map(|t| t.iter()))
        .sum()
}

#[test]
fn mglru_counts_a_refault_only_when_the_shadow_generation_is_min_seq() {
    let (mut k, mut p, pfn, lv) = mglru_with_a_page();
    let min_seq = p.lrugen[lv].min_seq[1];
    // A generation that is not min_seq (older, wrapped): nothing, not even the PID
    // controller's refaulted[].
    let old = shadow(&k, pfn, min_seq.wrapping_sub(1), 1);
    p.refault(&mut k, pfn, old, true);
    assert_eq!(k.vm.get(Vm::WorkingsetRefaultFile), 0);
    assert_eq!(k.vm.get(Vm::WorkingsetRestoreFile), 0);
    assert_eq!(refaulted(&p, lv), 0);
    assert!(!k.folios[pfn as usize].test(pg::WORKINGSET));
    // min_seq's generation, outside a fault, below the top tier: a refault, no restore.
    let s = shadow(&k, pfn, min_seq, 1);
    p.refault(&mut k, pfn, s, false);
    assert_eq!(k.vm.get(Vm::WorkingsetRefaultFile), 1);
    assert_eq!(k.vm.get(Vm::WorkingsetRestoreFile), 0);
    assert_eq!(refaulted(&p, lv), 1);
    // In a fault: restore too. With refs at the top (1 << LRU_REFS_WIDTH): restore too.
    let s = shadow(&k, pfn, min_seq, 1);
    p.refault(&mut k, pfn, s, true);
    let top = 1 << LRU_REFS_WIDTH;
    let s = shadow(&k, pfn, min_seq, top);
    p.refault(&mut k, pfn, s, false);
    assert_eq!(k.vm.get(Vm::WorkingsetRefaultFile), 3);
    assert_eq!(k.vm.get(Vm::WorkingsetRestoreFile), 2);
    // workingset_activate is sort_folio()'s (a protected tier), never the refault's.
    assert_eq!(k.vm.get(Vm::WorkingsetActivateFile), 0);
}

/// memory.events counts an event in the memcg where it happened and in each ancestor
/// (memcg_memory_event(), 6.1); memory.events.local only where it happened. /p/c hits
/// its memory.max, so /p's memory.events.max equals /p/c's, and /p's local one is 0.
#[test]
fn memory_events_are_hierarchical_and_local_events_are_not() {
    let text = r#"
name = "events"
[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }
[[memcg]]
path = "/p"
[[memcg]]
path = "/p/c"
max = "8MiB"
[[workload]]
name = "anon"
memcg = "/p/c"
[workload.anon]
size = "16MiB"
passes = 2
"#;
    let r = run_checked(text);
    let (p, c) = (&r.memcgs["/p"], &r.memcgs["/p/c"]);
    assert!(c.events["max"] > 0, "{:?}", c.events);
    assert_eq!(c.events, c.events_local);
    assert_eq!(p.events["max"], c.events["max"]);
    assert_eq!(p.events_local["max"], 0);
    assert_eq!(r.memcgs["/"].events["max"], c.events["max"]);
    // The stalls at memory.max are /p/c's tasks', counted in /p/c only.
    assert!(c.reclaim_stalls["max"].calls > 0, "{:?}", c.reclaim_stalls);
    assert!(c.reclaim_stalls["max"].latency_ns.max > 0);
    assert_eq!(p.reclaim_stalls["max"].calls, 0);
    assert_eq!(c.reclaim_stalls["high"].calls, 0);
}

/// An OOM kill counts once in the victim's memcg's memory.events.local and once in each
/// ancestor's memory.events: /p/c is limited below what its anon needs, without swap.
#[test]
fn an_oom_kill_counts_once_in_each_ancestor() {
    let text = r#"
name = "oom"
[machine]
memory = "64MiB"
cpus = 1
[[memcg]]
path = "/p"
[[memcg]]
path = "/p/c"
max = "4MiB"
[[workload]]
name = "anon"
memcg = "/p/c"
[workload.anon]
size = "16MiB"
passes = 1
"#;
    let r = run_checked(text);
    let (p, c) = (&r.memcgs["/p"], &r.memcgs["/p/c"]);
    assert_eq!(r.vmstat["oom_kill"], 1);
    assert_eq!((c.events["oom_kill"], c.events_local["oom_kill"]), (1, 1));
    assert_eq!((p.events["oom_kill"], p.events_local["oom_kill"]), (1, 0));
    assert_eq!(r.memcgs["/"].events["oom_kill"], 1);
}

/// Each memcg's reclaim stalls by cause: a memcg above memory.high stalls in its
/// reclaim and penalty (`high`), one that makes the machine reclaim stalls in global
/// direct reclaim (`direct`), each counted for the memcg whose task stalled.
#[test]
fn reclaim_stalls_are_split_by_cause_per_memcg() {
    let text = r#"
name = "stalls"
[machine]
memory = "32MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }
[[memcg]]
path = "/high"
high = "4MiB"
[[memcg]]
path = "/big"
[[workload]]
name = "capped"
memcg = "/high"
[workload.anon]
size = "8MiB"
passes = 2
[[workload]]
name = "big"
memcg = "/big"
[workload.anon]
size = "48MiB"
passes = 2
"#;
    let r = run_checked(text);
    let (high, big) = (
        &r.memcgs["/high"].reclaim_stalls,
        &r.memcgs["/big"].reclaim_stalls,
    );
    assert!(high["high"].calls > 0, "{high:?}");
    assert!(big["direct"].calls > 0, "{big:?}");
    assert_eq!(big["high"].calls, 0);
    assert_eq!(big["max"].calls + high["max"].calls, 0);
    let direct: u64 = r
        .memcgs
        .values()
        .map(|m| m.reclaim_stalls["direct"].calls)
        .sum();
    assert_eq!(
        direct, r.alloc_stall.calls,
        "every direct stall is some memcg's"
    );
}
