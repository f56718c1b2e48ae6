use super::*;
use crate::kernel::config::{MemcgSetup, Setup};

/// A kernel of `cpus` CPUs with memcgs /a and /a/b below the root.
fn kernel(cpus: u32) -> Kernel {
    let mut s = Setup::small(1024, cpus);
    s.memcgs = vec![MemcgSetup::unlimited("/a"), MemcgSetup::unlimited("/a/b")];
    let mut k = Kernel::new(&s);
    k.costs.memcg_flush_cpu = 200;
    k.costs.memcg_flush_memcg = 1500;
    k.costs.lock_acquire = 0;
    k
}

/// Updates count towards a flush in batches of 64 per CPU; the flush waits until more
/// than one batch per online CPU has built up, then visits every CPU and every memcg on
/// each CPU's updated tree (with its ancestors), with interrupts masked throughout, and
/// starts counting again from zero.
#[test]
fn a_flush_comes_after_a_batch_per_cpu_and_visits_the_updated_memcgs() {
    let mut k = kernel(2);
    let b = k.memcgs.by_path("/a/b").unwrap();
    // 2 online CPUs: the flush needs 3 batches. CPU 0 adds one (65 updates of /a/b).
    k.cur.cpu = 0;
    k.memcg_rstat_updated(b, 65);
    mem_cgroup_flush_stats(&mut k);
    assert_eq!((k.cur.clock, k.vm.get(Vm::MemcgFlush)), (0, 0), "one batch");
    // CPU 1 adds two in one update of 130: both CPUs' trees hold /a/b, /a and the root.
    k.cur.cpu = 1;
    k.memcg_rstat_updated(b, 130);
    assert_eq!(k.stats_flush.pairs(), 6);
    mem_cgroup_flush_stats(&mut k);
    assert_eq!(
        k.cur.clock,
        2 * 200 + 6 * 1500,
        "2 CPUs and 6 (CPU, memcg) pairs"
    );
    assert_eq!(k.vm.get(Vm::MemcgFlush), 1);
    assert_eq!(k.vm.get(Vm::MemcgFlushNs), 9400);
    let w = k.irq_window[1];
    assert_eq!(
        (w.masked_since, w.masked_until),
        (0, 9400),
        "masked throughout"
    );
    assert_eq!(k.stats_flush.pairs(), 0);
    // The threshold starts again: one more batch flushes nothing.
    k.memcg_rstat_updated(b, 65);
    mem_cgroup_flush_stats(&mut k);
    assert_eq!(k.vm.get(Vm::MemcgFlush), 1);
}

/// A caller that finds another CPU flushing (stats_flush_lock held, or released only
/// later in virtual time) returns at once without flushing.
#[test]
fn a_flush_that_finds_another_under_way_returns_at_once() {
    let mut k = kernel(1);
    let a = k.memcgs.by_path("/a").unwrap();
    k.memcg_rstat_updated(a, 200);
    k.stats_flush.lock.free_at = 5000;
    mem_cgroup_flush_stats(&mut k);
    assert_eq!(k.cur.clock, 0);
    assert_eq!(k.vm.get(Vm::MemcgFlushBusy), 1);
    assert_eq!(k.vm.get(Vm::MemcgFlush), 0);
    k.cur.clock = 5000;
    mem_cgroup_flush_stats(&mut k);
    assert_eq!(k.vm.get(Vm::MemcgFlush), 1, "free again at 5000");
    assert_eq!(k.cur.clock, 5000 + 200 + 2 * 1500);
}

/// Counting an event is a memcg stat update only for the events 6.1 keeps per memcg: not
/// for those it keeps only globally, nor for the model's own counters.
#[test]
fn only_the_events_kept_per_memcg_count_towards_a_flush() {
    use crate::kernel::stats::kept_per_memcg;
    assert!(kept_per_memcg(Vm::Pgfault) && kept_per_memcg(Vm::PgscanDirect));
    assert!(!kept_per_memcg(Vm::Pswpout) && !kept_per_memcg(Vm::PgscanAnon));
    assert!(!kept_per_memcg(Vm::LruGenAging) && !kept_per_memcg(Vm::MemcgFlush));
    let mut k = kernel(1);
    let a = k.memcgs.by_path("/a").unwrap();
    k.count(Vm::Pswpout, a, 1000);
    assert_eq!(k.stats_flush.pairs(), 0);
    k.count(Vm::Pgfault, a, 1);
    assert_eq!(k.stats_flush.pairs(), 2, "/a and the root");
}

/// The classic refault's flush by version: 5.15-rc3 to 5.18-rc3 flush at a refault as
/// reclaim does; 6.1 does not (its delayed flush waits for a late periodic worker); and
/// before rstat (`none`) nothing flushes, from either caller.
#[test]
fn the_refault_flushes_only_in_the_versions_that_had_it() {
    use crate::kernel::config::MemcgStatsFlush as F;
    for (version, refault, reclaim) in [(F::V515, 1, 1), (F::V61, 0, 1), (F::None, 0, 0)] {
        let mut k = kernel(1);
        k.cfg.memcg_stats_flush = version;
        let a = k.memcgs.by_path("/a").unwrap();
        k.memcg_rstat_updated(a, 200);
        workingset_refault_flush(&mut k);
        assert_eq!(k.vm.get(Vm::MemcgFlush), refault, "{version:?}: refault");
        assert_eq!(k.vm.get(Vm::MemcgFlushRefault), refault);
        mem_cgroup_flush_stats(&mut k);
        assert_eq!(
            k.vm.get(Vm::MemcgFlush),
            reclaim,
            "{version:?}: then reclaim"
        );
    }
}
