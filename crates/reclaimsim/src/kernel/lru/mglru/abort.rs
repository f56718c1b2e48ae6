//! When a proportional MGLRU scan stops early: Linux 6.1's `should_abort_scan` (the
//! backoff of "optimize multiple memcgs", seeds 000/001, docs/model/mglru-memcgs.md) and the 6.3
//! memcg LRU's `get_nr_to_reclaim` (ibid.).

use super::gen::MIN_LRU_BATCH;
use crate::kernel::memcg::ROOT;
use crate::kernel::node::{Zone, WMARK_HIGH, WMARK_LOW};
use crate::kernel::vmscan::{ScanControl, DEF_PRIORITY};

/// Why `should_abort_scan` (6.1) stopped a scan, for tests and counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abort {
    /// Direct or memcg reclaim aged this memcg more than once in this call.
    AgedTwice,
    /// Direct or memcg reclaim met its target while swapping.
    Swapping,
    /// The reclaiming task has a fatal signal (it was OOM-killed): 64 pages are
    /// credited so the caller stops.
    FatalSignal,
    /// Global reclaim at priority <= DEF_PRIORITY - 2 with every eligible zone above its
    /// watermark (high for kswapd, low for direct reclaim): 64 pages are credited.
    Watermarks,
}

/// Models should_abort_scan() (Linux 6.1, "optimize multiple memcgs"). `aged` is
/// max_seq - seq, the generations this lruvec gained since lru_gen_shrink_lruvec began;
/// `need_swapping` is whether an eviction of this call took anon; `fatal_signal` is
/// fatal_signal_pending(current); `zones` are the node's zones 0..=reclaim_idx.
///
/// Direct and memcg reclaim stop when they aged this memcg more than once (aging
/// fairness), when they met their target while swapping (latency), or on a fatal
/// signal (crediting MIN_LRU_BATCH); memcg reclaim never stops otherwise. kswapd goes
/// on until it reclaimed nr_to_reclaim since lru_gen_age_node's snapshot
/// (last_reclaimed). Nobody stops at priorities 11 and 12 (fairness). Then, if every
/// zone is at or above its watermark (high for kswapd, low for direct reclaim), the scan
/// stops with MIN_LRU_BATCH credited to nr_reclaimed so the caller stops too.
pub fn should_abort_scan_v61(
    sc: &mut ScanControl,
    aged: u64,
    need_swapping: bool,
    fatal_signal: bool,
    zones: &[Zone],
) -> Option<Abort> {
    if !sc.kswapd {
        if aged > 1 {
            return Some(Abort::AgedTwice);
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim && need_swapping {
            return Some(Abort::Swapping);
        }
        if fatal_signal {
            sc.nr_reclaimed += MIN_LRU_BATCH;
            return Some(Abort::FatalSignal);
        }
        if sc.cgroup_reclaim() {
            return None;
        }
    } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
        return None;
    }
    if sc.priority > DEF_PRIORITY - 2 {
        return None;
    }
    let mark = if sc.kswapd { WMARK_HIGH } else { WMARK_LOW };
    if zones
        .iter()
        .any(|z| z.managed > 0 && z.wmark[mark] > z.free)
    {
        return None;
    }
    sc.nr_reclaimed += MIN_LRU_BATCH;
    Some(Abort::Watermarks)
}

/// global_reclaim(): reclaim for the whole machine (no target, or the root memcg).
pub fn global_reclaim(sc: &ScanControl) -> bool {
    sc.target.is_none_or(|m| m == ROOT)
}

/// compact_gap(order): 2 << order.
pub fn compact_gap(order: u32) -> u64 {
    2 << order
}

/// Models get_nr_to_reclaim() (Linux 6.3-6.7): memcg reclaim never stops early (for
/// fairness among the memcgs below the target); global reclaim stops at nr_to_reclaim
/// (at least compact_gap(order); the model's allocations are order 0).
pub fn get_nr_to_reclaim(sc: &ScanControl) -> u64 {
    if !global_reclaim(sc) {
        return u64::MAX;
    }
    sc.nr_to_reclaim.max(compact_gap(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zone of 10000 pages with watermarks min 100, low 200, high 300.
    fn zone(free: u64) -> Zone {
        Zone {
            managed: 10_000,
            free,
            wmark: [100, 200, 300],
        }
    }

    fn direct(priority: i32, reclaimed: u64) -> ScanControl {
        let mut sc = ScanControl::new(32, None, false);
        sc.priority = priority;
        sc.nr_reclaimed = reclaimed;
        sc
    }

    #[test]
    fn direct_reclaim_stops_after_aging_a_memcg_twice() {
        let z = [zone(0)];
        let mut sc = direct(DEF_PRIORITY, 0);
        assert_eq!(should_abort_scan_v61(&mut sc, 1, false, false, &z), None);
        assert_eq!(
            should_abort_scan_v61(&mut sc, 2, false, false, &z),
            Some(Abort::AgedTwice)
        );
        // Memcg reclaim keeps the fairness rule.
        let mut sc = ScanControl::new(32, Some(1), false);
        assert_eq!(
            should_abort_scan_v61(&mut sc, 2, false, false, &z),
            Some(Abort::AgedTwice)
        );
        // kswapd does not age here (lru_gen_age_node does): the rule is not checked.
        let mut sc = ScanControl::new(1000, None, true);
        assert_eq!(should_abort_scan_v61(&mut sc, 3, false, false, &z), None);
        assert_eq!(sc.nr_reclaimed, 0);
    }

    #[test]
    fn direct_reclaim_stops_swapping_once_the_target_is_met() {
        let z = [zone(0)];
        let mut sc = direct(DEF_PRIORITY, 31);
        assert_eq!(should_abort_scan_v61(&mut sc, 0, true, false, &z), None);
        sc.nr_reclaimed = 32;
        assert_eq!(
            should_abort_scan_v61(&mut sc, 0, false, false, &z),
            None,
            "file only"
        );
        assert_eq!(
            should_abort_scan_v61(&mut sc, 0, true, false, &z),
            Some(Abort::Swapping)
        );
        assert_eq!(sc.nr_reclaimed, 32, "no credit");
    }

    #[test]
    fn a_fatal_signal_stops_direct_reclaim_with_a_credit() {
        let z = [zone(0)];
        let mut sc = direct(DEF_PRIORITY, 5);
        assert_eq!(
            should_abort_scan_v61(&mut sc, 0, false, true, &z),
            Some(Abort::FatalSignal)
        );
        assert_eq!(sc.nr_reclaimed, 5 + MIN_LRU_BATCH);
        // kswapd has no signals to take.
        let mut sc = ScanControl::new(1000, None, true);
        assert_eq!(should_abort_scan_v61(&mut sc, 0, false, true, &z), None);
    }

    #[test]
    fn memcg_reclaim_never_stops_on_watermarks() {
        let z = [zone(10_000)];
        let mut sc = ScanControl::new(32, Some(1), false);
        sc.priority = 0;
        sc.nr_reclaimed = 1_000;
        assert_eq!(should_abort_scan_v61(&mut sc, 0, false, false, &z), None);
        let mut sc = direct(0, 1_000);
        assert_eq!(
            should_abort_scan_v61(&mut sc, 0, false, false, &z),
            Some(Abort::Watermarks),
            "global direct reclaim does"
        );
    }

    #[test]
    fn kswapd_goes_on_until_it_reclaimed_its_target_since_the_snapshot() {
        let z = [zone(10_000)];
        let mut sc = ScanControl::new(1000, None, true);
        sc.priority = DEF_PRIORITY - 2;
        sc.last_reclaimed = 5_000;
        sc.nr_reclaimed = 5_999;
        assert_eq!(should_abort_scan_v61(&mut sc, 0, false, false, &z), None);
        sc.nr_reclaimed = 6_000;
        assert_eq!(
            should_abort_scan_v61(&mut sc, 0, false, false, &z),
            Some(Abort::Watermarks)
        );
        assert_eq!(sc.nr_reclaimed, 6_000 + MIN_LRU_BATCH, "the artificial +64");
    }

    #[test]
    fn low_priority_numbers_keep_scanning_for_fairness() {
        let z = [zone(10_000)];
        for (priority, stops) in [
            (DEF_PRIORITY, false),
            (DEF_PRIORITY - 1, false),
            (DEF_PRIORITY - 2, true),
        ] {
            let mut sc = direct(priority, 100);
            assert_eq!(
                should_abort_scan_v61(&mut sc, 0, false, false, &z).is_some(),
                stops,
                "priority {priority}"
            );
        }
    }

    #[test]
    fn watermarks_high_for_kswapd_low_for_direct_reclaim() {
        // Free 250: above low (200), below high (300).
        let z = [zone(250)];
        let mut sc = direct(DEF_PRIORITY - 2, 100);
        assert_eq!(
            should_abort_scan_v61(&mut sc, 0, false, false, &z),
            Some(Abort::Watermarks)
        );
        let mut sc = ScanControl::new(32, None, true);
        sc.priority = DEF_PRIORITY - 2;
        sc.nr_reclaimed = 100;
        assert_eq!(should_abort_scan_v61(&mut sc, 0, false, false, &z), None);
        assert_eq!(sc.nr_reclaimed, 100);
        // Every eligible zone must be safe; an unmanaged zone does not count.
        let zs = [zone(250), zone(150)];
        let mut sc = direct(DEF_PRIORITY - 2, 100);
        assert_eq!(should_abort_scan_v61(&mut sc, 0, false, false, &zs), None);
        let empty = Zone {
            managed: 0,
            free: 0,
            wmark: [100, 200, 300],
        };
        let zs = [zone(250), empty];
        assert!(should_abort_scan_v61(&mut sc, 0, false, false, &zs).is_some());
        // The mark is compared with >: free equal to the mark is safe.
        let mut sc = direct(DEF_PRIORITY - 2, 100);
        assert!(should_abort_scan_v61(&mut sc, 0, false, false, &[zone(200)]).is_some());
    }

    #[test]
    fn get_nr_to_reclaim_never_stops_memcg_reclaim() {
        let sc = ScanControl::new(32, Some(2), false);
        assert_eq!(get_nr_to_reclaim(&sc), u64::MAX);
        let sc = ScanControl::new(1, None, false);
        assert_eq!(get_nr_to_reclaim(&sc), compact_gap(0));
        let sc = ScanControl::new(1000, None, true);
        assert_eq!(get_nr_to_reclaim(&sc), 1000);
    }
}
