//! `[[event]]` writes to memcg files and sysctls (`kernel::control`): each write's 6.1
//! semantics driven directly on a kernel, a few end to end through the engine, and the
//! errors a bad event gets.

mod common;

use common::{memcg_event, memcg_stat, run_checked, Sys};
use reclaimsim::kernel::control::{self, MemcgFile, Outcome, Sysctl, Write};
use reclaimsim::kernel::memcg::MemcgId;
use reclaimsim::kernel::node::WMARK_LOW;
use reclaimsim::kernel::stats::{StallKind, Vm};
use reclaimsim::scenario;

/// 64 MiB (16384 pages), no swap, a memcg /a without limits.
const NO_SWAP: &str = r#"
[machine]
memory = "64MiB"
cpus = 2
[[memcg]]
path = "/a"
"#;

/// The same with 64 MiB of zram.
const WITH_SWAP: &str = r#"
[machine]
memory = "64MiB"
cpus = 2
swap = { device = "zram", size = "64MiB" }
[[memcg]]
path = "/a"
"#;

/// `pages` pages of a new file read into the page cache by `memcg`, on the LRU.
fn cache(s: &mut Sys, memcg: MemcgId, pages: u64) {
    let f = s.file(pages);
    for i in 0..pages {
        s.read(memcg, f, i);
    }
    s.drain_all();
}

/// A process of `memcg` that has stored to each of `pages` anonymous pages.
fn anon(s: &mut Sys, memcg: MemcgId, pages: u64) -> u32 {
    let (mm, start) = s.process(memcg, None, pages);
    for v in start..start + pages {
        s.fault(mm, v, true);
    }
    s.drain_all();
    mm
}

fn write(s: &mut Sys, memcg: MemcgId, file: MemcgFile) -> Outcome {
    control::write(&mut s.k, &mut s.p, &Write::Memcg(memcg, file))
}

fn usage(s: &Sys, memcg: MemcgId) -> u64 {
    s.k.memcgs.cgs[memcg as usize].usage
}

/// memory_max_write(): lowering memory.max below the usage reclaims the memcg down to
/// it in the writing task, here from clean page cache: no OOM.
#[test]
fn memory_max_reclaims_down_to_the_new_limit() {
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    cache(&mut s, a, 4096);
    assert_eq!(usage(&s, a), 4096);
    assert_eq!(write(&mut s, a, MemcgFile::Max(1024)), Outcome::Ok);
    assert!(usage(&s, a) <= 1024, "usage {}", usage(&s, a));
    assert_eq!(s.k.memcgs.cgs[a as usize].max, 1024);
    assert_eq!(s.k.memcgs.cgs[a as usize].events.oom, 0);
    assert!(s.k.oom_kills.is_empty());
    assert!(s.memcg_vm(a, Vm::PgstealDirect) >= 3072);
    s.check();
}

/// memory_max_write(): with the usage anon and no swap, reclaim gets nothing; after
/// MAX_RECLAIM_RETRIES fruitless rounds a memcg OOM event and a kill in the memcg, whose
/// reaping brings it under the limit.
#[test]
fn memory_max_below_unreclaimable_use_oom_kills() {
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    let mm = anon(&mut s, a, 2048);
    let r = write(&mut s, a, MemcgFile::Max(256));
    assert_eq!(
        r,
        Outcome::Oom {
            kills: 1,
            no_victim: false
        }
    );
    assert_eq!(s.k.memcgs.cgs[a as usize].events.oom, 1);
    assert_eq!(s.k.memcgs.cgs[a as usize].events.oom_kill, 1);
    assert_eq!(s.k.oom_kills.len(), 1);
    assert_eq!(s.k.oom_kills[0].scope, Some(a));
    assert!(s.k.mms[mm as usize].dead);
    assert!(usage(&s, a) <= 256);
}

/// memory_reclaim(): N MiB from a memcg with plenty of clean page cache reclaims at
/// least N MiB and succeeds.
#[test]
fn memory_reclaim_takes_what_was_asked() {
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    cache(&mut s, a, 4096);
    let r = write(
        &mut s,
        a,
        MemcgFile::Reclaim {
            pages: 2048,
            swappiness: None,
        },
    );
    assert_eq!(r, Outcome::Ok);
    assert!(usage(&s, a) <= 4096 - 2048, "usage {}", usage(&s, a));
    // The writer's time shows as /a's proactive reclaim, once.
    let proactive = &s.k.memcg_stalls[&(a, StallKind::Proactive)];
    assert_eq!(proactive.count(), 1);
    assert!(proactive.max() > 0);
    // Not a limit: nothing else changed.
    assert_eq!(s.k.memcgs.cgs[a as usize].max, u64::MAX);
    // The root has memory.reclaim too: reclaim from the whole tree.
    let before = usage(&s, a);
    let root = s.memcg("/");
    let r = write(
        &mut s,
        root,
        MemcgFile::Reclaim {
            pages: 512,
            swappiness: None,
        },
    );
    assert_eq!(r, Outcome::Ok);
    assert!(usage(&s, a) <= before - 512);
    s.check();
}

/// memory_reclaim(): nothing reclaimable (anon, no swap): EAGAIN after the retries,
/// and no OOM.
#[test]
fn memory_reclaim_of_unreclaimable_memory_fails_with_eagain() {
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    anon(&mut s, a, 1024);
    let r = write(
        &mut s,
        a,
        MemcgFile::Reclaim {
            pages: 256,
            swappiness: None,
        },
    );
    assert_eq!(r, Outcome::Err("EAGAIN"));
    assert_eq!(usage(&s, a), 1024);
    assert!(s.k.oom_kills.is_empty());
}

/// memory_high_write(): lowering memory.high reclaims down to it, without OOM; over
/// unreclaimable memory it gives up after the retries, still without OOM.
#[test]
fn memory_high_reclaims_down_to_it_without_oom() {
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    cache(&mut s, a, 4096);
    assert_eq!(write(&mut s, a, MemcgFile::High(1024)), Outcome::Ok);
    assert!(usage(&s, a) <= 1024, "usage {}", usage(&s, a));
    assert_eq!(s.k.memcgs.cgs[a as usize].high, 1024);
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    anon(&mut s, a, 1024);
    assert_eq!(write(&mut s, a, MemcgFile::High(256)), Outcome::Ok);
    assert_eq!(usage(&s, a), 1024);
    assert!(s.k.oom_kills.is_empty());
    assert_eq!(s.k.memcgs.cgs[a as usize].events.oom, 0);
}

/// memory.low and memory.min: the value is set, nothing else happens.
#[test]
fn memory_low_and_min_only_set_the_value() {
    let mut s = Sys::new(NO_SWAP);
    let a = s.memcg("/a");
    cache(&mut s, a, 1024);
    assert_eq!(write(&mut s, a, MemcgFile::Low(512)), Outcome::Ok);
    assert_eq!(write(&mut s, a, MemcgFile::Min(128)), Outcome::Ok);
    let cg = &s.k.memcgs.cgs[a as usize];
    assert_eq!((cg.low, cg.min, cg.usage), (512, 128, 1024));
}

/// vm.swappiness = 0: on cgroup v2, 6.1's mem_cgroup_swappiness() is vm_swappiness for
/// every memcg (memcg->swappiness, copied from the parent at creation, is cgroup v1's),
/// so a memcg that existed before the write reclaims with 0 too: its memory.reclaim
/// takes no anon (cgroup reclaim at swappiness 0 scans file only) and, with only anon
/// to take, fails. Before the write the same reclaim swaps. memory.reclaim's
/// `swappiness=60` (6.13+) swaps again for that write only.
#[test]
fn vm_swappiness_zero_stops_memcg_swapping() {
    let reclaim = |swappiness| MemcgFile::Reclaim {
        pages: 256,
        swappiness,
    };
    let mut s = Sys::new(WITH_SWAP);
    let a = s.memcg("/a");
    anon(&mut s, a, 1024);
    assert_eq!(write(&mut s, a, reclaim(None)), Outcome::Ok);
    assert!(s.vm(Vm::Pswpout) >= 256, "pswpout {}", s.vm(Vm::Pswpout));

    let mut s = Sys::new(WITH_SWAP);
    let a = s.memcg("/a");
    anon(&mut s, a, 1024);
    let r = control::write(&mut s.k, &mut s.p, &Write::Sysctl(Sysctl::Swappiness(0)));
    assert_eq!(r, Outcome::Ok);
    assert_eq!(write(&mut s, a, reclaim(None)), Outcome::Err("EAGAIN"));
    assert_eq!(s.vm(Vm::Pswpout), 0);
    assert_eq!(write(&mut s, a, reclaim(Some(60))), Outcome::Ok);
    assert!(s.vm(Vm::Pswpout) >= 256, "pswpout {}", s.vm(Vm::Pswpout));
    assert_eq!(s.k.cfg.swappiness, 0);
}

/// vm.watermark_scale_factor: setup_per_zone_wmarks() again, and the per-CPU lists'
/// high follows the new low watermark (zone_pcp_update).
#[test]
fn watermark_scale_factor_recomputes_watermarks_and_pcp_high() {
    let mut s = Sys::new(NO_SWAP);
    let before = s.k.nodes[0].zone.wmark;
    let high_before = s.k.pcp[0].high;
    let w = Write::Sysctl(Sysctl::WatermarkScaleFactor(1000));
    assert_eq!(control::write(&mut s.k, &mut s.p, &w), Outcome::Ok);
    let after = s.k.nodes[0].zone.wmark;
    // min stays; low and high each add 10% of the zone (1638 pages).
    assert_eq!(after[0], before[0]);
    assert_eq!(after[1], after[0] + 16384 * 1000 / 10_000);
    assert_eq!(after[2], after[0] + 2 * (16384 * 1000 / 10_000));
    assert!(s.k.pcp[0].high > high_before);
    assert_eq!(s.k.pcp[0].high, after[WMARK_LOW] / 2);
}

/// lru_gen.min_ttl_ms has no file without MGLRU: ENOENT, as lru_gen commands.
#[test]
fn min_ttl_ms_needs_mglru() {
    let mut s = Sys::new(NO_SWAP);
    let w = Write::Sysctl(Sysctl::MinTtlMs(1000));
    assert_eq!(
        control::write(&mut s.k, &mut s.p, &w),
        Outcome::Err("ENOENT")
    );
}

/// A file reader in /a (about 11 ms for its 32 MiB); at 5 ms its memory.max drops to
/// 4 MiB, and reading on keeps it there.
const MAX_DURING_RUN: &str = r#"
name = "max-during-run"
[machine]
memory = "64MiB"
cpus = 2
[[memcg]]
path = "/a"
[[workload]]
name = "reader"
memcg = "/a"
cpus = [0]
[workload.dd]
size = "32MiB"
sparse = false
[[event]]
at = "5ms"
memcg = "/a"
file = "memory.max"
value = "4MiB"
cpu = 1
"#;

/// End to end: the write runs at its time, shows as the user would type it, and the
/// reader keeps under the new limit afterwards.
#[test]
fn memory_max_event_limits_a_running_workload() {
    let r = run_checked(MAX_DURING_RUN);
    assert_eq!(r.events.len(), 1);
    let e = &r.events[0];
    assert_eq!(
        (e.command.as_str(), e.result.as_str()),
        ("echo 4M > /a/memory.max", "ok")
    );
    assert!((e.time_s - 0.005).abs() < 1e-4, "{}", e.time_s);
    assert!(memcg_stat(&r, "/a", "usage") <= 4 << 20);
    // The reader went on past the write (its reclaim done well within a millisecond),
    // and each later sample is under the limit.
    let later: Vec<_> = r.timeseries.iter().filter(|s| s.time_s > 0.006).collect();
    assert!(later.len() > 5, "the reader ended before the write");
    let before = r.timeseries.iter().filter(|s| s.time_s < 0.005);
    assert!(before.map(|s| s.lru["/a"].iter().sum::<u64>()).max() > Some(1024));
    for s in later {
        let lru: u64 = s.lru["/a"].iter().sum();
        assert!(lru <= 1024, "{} pages on /a's LRU at {} s", lru, s.time_s);
    }
    assert_eq!(memcg_event(&r, "/a", "oom"), 0);
}

/// A bad event's error names the event and its field.
fn event_error(event: &str, kernel: &str) -> (String, String) {
    let text = format!(
        "name = \"e\"\n[machine]\nmemory = \"64MiB\"\ncpus = 2\n{kernel}\
         [[memcg]]\npath = \"/a\"\n[[workload]]\nname = \"w\"\n[workload.anon]\n\
         size = \"1MiB\"\n[[event]]\nat = \"1s\"\n{event}"
    );
    match scenario::parse(&text, "s.toml", &[], None) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            assert!(e.line.is_some(), "{e}");
            (e.field.clone(), e.to_string())
        }
    }
}

#[test]
fn bad_events_name_the_field() {
    let memcg = |file: &str, value: &str| {
        format!("memcg = \"/a\"\nfile = \"{file}\"\nvalue = \"{value}\"\n")
    };
    let sysctl = |name: &str, value: &str| format!("sysctl = \"{name}\"\nvalue = \"{value}\"\n");
    let cases = [
        (
            memcg("memory.max", "64XB"),
            "",
            "event[0].value",
            "unknown size unit",
        ),
        (
            memcg("memory.foo", "1MiB"),
            "",
            "event[0].file",
            "unknown file",
        ),
        (
            memcg("memory.reclaim", "max"),
            "",
            "event[0].value",
            "not \"max\"",
        ),
        (
            memcg("memory.reclaim", "1MiB swappiness=201"),
            "",
            "event[0].value",
            "swappiness=N",
        ),
        (
            "memcg = \"/nope\"\nfile = \"memory.max\"\nvalue = \"1MiB\"\n".into(),
            "",
            "event[0].memcg",
            "no [[memcg]]",
        ),
        (
            "memcg = \"/\"\nfile = \"memory.max\"\nvalue = \"1MiB\"\n".into(),
            "",
            "event[0].file",
            "root",
        ),
        (
            "file = \"memory.max\"\nvalue = \"1MiB\"\n".into(),
            "",
            "event[0].memcg",
            "needs the `memcg`",
        ),
        (
            "memcg = \"/a\"\nfile = \"memory.max\"\n".into(),
            "",
            "event[0].value",
            "needs a `value`",
        ),
        (
            sysctl("vm.swappiness", "201"),
            "",
            "event[0].value",
            "0 to 200",
        ),
        (
            sysctl("vm.swappiness", "-1"),
            "",
            "event[0].value",
            "0 to 200",
        ),
        (
            "sysctl = \"vm.swappiness\"\nvalue = -1\n".into(),
            "",
            "event[0].value",
            "a string or a non-negative integer",
        ),
        (
            sysctl("vm.watermark_scale_factor", "0"),
            "",
            "event[0].value",
            "1 to 3000",
        ),
        (
            sysctl("vm.dirty_ratio", "10"),
            "",
            "event[0].sysctl",
            "unknown sysctl",
        ),
        (
            sysctl("lru_gen.min_ttl_ms", "1000"),
            "",
            "event[0].sysctl",
            "mglru",
        ),
        (
            "command = \"+ /a 0 max\"\nsysctl = \"vm.swappiness\"\nvalue = \"1\"\n".into(),
            "[kernel]\npolicy = \"mglru\"\n",
            "event[0].sysctl",
            "exactly one",
        ),
        (String::new(), "", "event[0].command", "exactly one"),
        (
            "sysctl = \"vm.swappiness\"\nvalue = \"1\"\nmemcg = \"/a\"\n".into(),
            "",
            "event[0].memcg",
            "with `file` only",
        ),
    ];
    for (event, kernel, field, words) in cases {
        let (f, message) = event_error(&event, kernel);
        assert_eq!(f, field, "{message}\n{event}");
        assert!(message.contains(words), "{message}\n{event}");
    }
}

/// Good events of each kind load, and the results show them as typed.
#[test]
fn good_events_load() {
    let text = r#"
name = "e"
[machine]
memory = "64MiB"
cpus = 2
[kernel]
policy = "mglru"
[[memcg]]
path = "/a"
[[workload]]
name = "w"
memcg = "/a"
[workload.anon]
size = "1MiB"
[[event]]
at = "1ms"
memcg = "/a"
file = "memory.reclaim"
value = "32MiB swappiness=0"
[[event]]
at = "2ms"
sysctl = "vm.swappiness"
value = 10
[[event]]
at = "3ms"
sysctl = "lru_gen.min_ttl_ms"
value = "1000"
[[event]]
at = "4ms"
memcg = "/a"
file = "memory.high"
value = "max"
"#;
    let r = run_checked(text);
    let shown: Vec<(&str, &str)> = (r.events.iter())
        .map(|e| (e.command.as_str(), e.result.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("echo \"32M swappiness=0\" > /a/memory.reclaim", "EAGAIN"),
            ("sysctl vm.swappiness=10", "ok"),
            ("echo 1000 > /sys/kernel/mm/lru_gen/min_ttl_ms", "ok"),
            ("echo max > /a/memory.high", "ok"),
        ]
    );
}

/// Global pressure from anon in /a (random passes over 26 MiB of 32 MiB, with zram)
/// and a file reader; kswapd pinned to CPU 0, so that CPU 2 is free for an event at
/// exactly its time. The reader's file is sparse (its holes are zero-filled, with no
/// device read), which keeps its pace, and so the swap-outs by 15 ms, from depending
/// on what a page-cache miss's read costs; for the same reason dd's own cost per block
/// (its write to /dev/null) is left out.
const SWAPPINESS_DURING_RUN: &str = r#"
name = "swappiness-during-run"
seed = 3
duration = "DURATION"
[costs]
dd_block = 0
[machine]
memory = "32MiB"
cpus = 3
swap = { device = "zram", size = "64MiB" }
[kernel]
kswapd_cpu = [0]
[[memcg]]
path = "/a"
[[workload]]
name = "anon"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "26MiB"
pattern = "random"
populate = true
runtime = "1s"
[[workload]]
name = "reader"
cpus = [1]
[workload.dd]
size = "16MiB"
sparse = true
[[workload.dd.phase]]
name = "again"
[[workload.dd.phase]]
name = "again2"
"#;

/// End to end: vm.swappiness = 0 written at 15 ms stops swap-outs from then on (but for
/// the batch of a reclaim pass under way), the
/// root's (global reclaim, kswapd and direct) and /a's alike, though /a existed before
/// the write: on cgroup v2, 6.1 reclaims every memcg with vm_swappiness
/// (mem_cgroup_swappiness() ignores the memcg's own copy, a cgroup v1 setting). A run
/// of 15 ms is the same run up to the write; without the write, swapping goes on.
#[test]
fn vm_swappiness_event_stops_swap_outs_from_its_time() {
    let run = |duration: &str, event: bool| {
        let mut text = SWAPPINESS_DURING_RUN.replace("DURATION", duration);
        if event {
            text += "[[event]]\nat = \"15ms\"\nsysctl = \"vm.swappiness\"\nvalue = 0\ncpu = 2\n";
        }
        run_checked(&text)
    };
    let until_write = run("15ms", false);
    let with_write = run("30ms", true);
    let without = run("30ms", false);
    let e = &with_write.events[0];
    assert_eq!(
        (e.command.as_str(), e.result.as_str()),
        ("sysctl vm.swappiness=0", "ok")
    );
    assert!((e.time_s - 0.015).abs() < 1e-5, "{}", e.time_s);
    let out = |r: &reclaimsim::results::VariantResult| common::vmstat(r, "pswpout");
    assert!(out(&until_write) > 0);
    // A reclaim pass under way at the write keeps the scan targets it set at its start
    // (get_scan_count in shrink_lruvec), so its batch of anon pages may still go out:
    // at most SWAP_CLUSTER_MAX more.
    assert!(out(&with_write) >= out(&until_write));
    assert!(
        out(&with_write) <= out(&until_write) + 32,
        "{}",
        out(&with_write)
    );
    assert_eq!(memcg_stat(&with_write, "/a", "pswpout"), out(&with_write));
    assert!(out(&without) > 2 * out(&until_write), "{}", out(&without));
}

/// An anon worker in /a with no swap, and an event lowering /a's memory.max under its
/// use at 5 ms.
const MAX_UNDER_ANON: &str = r#"
name = "max-under-anon"
[machine]
memory = "64MiB"
cpus = 2
[[memcg]]
path = "/a"
[[workload]]
name = "anon"
memcg = "/a"
cpus = [0]
[workload.anon]
size = "16MiB"
populate = true
runtime = "50ms"
[[event]]
at = "5ms"
memcg = "/a"
file = "memory.max"
value = "4MiB"
cpu = 1
"#;

/// End to end: memory.max below what /a's anon needs, with no swap, OOM-kills the
/// worker from the writing task; the write itself succeeds.
#[test]
fn memory_max_event_oom_kills_in_the_memcg() {
    let r = run_checked(MAX_UNDER_ANON);
    let e = &r.events[0];
    assert_eq!(e.result, "ok (memcg OOM: 1 kill)");
    assert_eq!(r.oom_kills.len(), 1);
    assert_eq!(r.oom_kills[0].scope, "/a");
    assert!((r.oom_kills[0].time_s - 0.005).abs() < 1e-3);
    // The OOM timeline: the victim's memcg, and the stall before the kill, the write's
    // reclaim from its start (5 ms and a context switch) to the kill.
    let k = &r.oom_kills[0];
    assert_eq!((k.victim.as_str(), k.victim_memcg.as_str()), ("anon", "/a"));
    let stall = k.stall_s.expect("a write's OOM has a stall");
    assert!(stall > 0.0 && stall <= k.time_s - 0.005, "{k:?}");
    assert!(stall > k.time_s - 0.005 - 10e-6, "{k:?}");
    // The worker's own charges may meet the limit too (another `oom` event), but the
    // one kill is the write's.
    assert!(memcg_event(&r, "/a", "oom") >= 1);
    assert_eq!(memcg_event(&r, "/a", "oom_kill"), 1);
    assert!(memcg_stat(&r, "/a", "usage") <= 4 << 20);
}

/// End to end under MGLRU (6.1 and the 6.3 memcg LRU): memory.reclaim of 2 MiB from /a's
/// page cache (about 5 MiB at 3 ms) succeeds and takes at least that; memory.max then
/// brings /a down.
#[test]
fn memcg_writes_under_mglru() {
    for memcg_reclaim in ["v6.1", "memcg-lru"] {
        let text = MAX_DURING_RUN
            .replace(
                "[[memcg]]",
                &format!("[kernel]\npolicy = \"mglru\"\nmemcg_reclaim = \"{memcg_reclaim}\"\n[[memcg]]"),
            )
            .replace(
                "[[event]]",
                "[[event]]\nat = \"3ms\"\nmemcg = \"/a\"\nfile = \"memory.reclaim\"\nvalue = \"2MiB\"\ncpu = 1\n[[event]]",
            );
        let r = run_checked(&text);
        let results: Vec<&str> = r.events.iter().map(|e| e.result.as_str()).collect();
        assert_eq!(results, ["ok", "ok"], "{memcg_reclaim}");
        assert!(
            memcg_stat(&r, "/a", "pgsteal_direct") >= 512,
            "{memcg_reclaim}"
        );
        assert!(memcg_stat(&r, "/a", "usage") <= 4 << 20, "{memcg_reclaim}");
    }
}

/// The OOM timeline of a charge's memcg OOM: a worker storing 8 MiB under a 4 MiB
/// memory.max without swap OOMs in its own charge; the stall before the kill is its
/// limit reclaim for that charge, from its first round to the kill.
#[test]
fn a_charge_oom_records_the_stall_before_the_kill() {
    let text = MAX_UNDER_ANON
        .replace("[[event]]\nat = \"5ms\"\nmemcg = \"/a\"\nfile = \"memory.max\"\nvalue = \"4MiB\"\ncpu = 1\n", "")
        .replace("path = \"/a\"", "path = \"/a\"\nmax = \"4MiB\"");
    assert!(
        !text.contains("[[event]]") && text.contains("max = \"4MiB\""),
        "{text}"
    );
    let r = run_checked(&text);
    assert_eq!(r.oom_kills.len(), 1, "{:?}", r.oom_kills);
    let k = &r.oom_kills[0];
    assert_eq!(
        (k.scope.as_str(), k.victim.as_str(), k.victim_memcg.as_str()),
        ("/a", "anon", "/a")
    );
    let stall = k.stall_s.expect("a charge's OOM has a stall");
    // At least the MAX_RECLAIM_RETRIES rounds of reclaim before it, well under the run.
    assert!(stall > 1e-6 && stall < k.time_s, "{k:?}");
}
