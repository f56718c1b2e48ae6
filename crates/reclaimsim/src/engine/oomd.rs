//! oomd (facebookincubator/oomd, its core plugins as of v0.5 and later) as an agent
//! task: at each interval every ruleset runs each detector of each group (oomd's
//! DetectorGroup::check runs them all, so that each keeps its window), and, when a group
//! fired and the ruleset's actions are not paused, its action chain (Ruleset::runOnceImpl,
//! run_action_chain). A kill action ranks its cgroups (rankForKilling), kills the first
//! populated one with anon memory (BaseKillPlugin::resumeTryingToKillSomething): a
//! SIGKILL to each of its processes, through `fault::kill_memcg` (not a kernel OOM kill),
//! and pauses the ruleset's actions for its post_action_delay. What it reads it reads as
//! a process reads the files, each read after catching up with the other tasks and at
//! its CPU cost (`cgroup_read`; `cgroup_stat_read` for memory.stat and /proc/meminfo).

use crate::kernel::fault;
use crate::kernel::lru::Policy;
use crate::kernel::memcg::MemcgId;
use crate::kernel::psi::Pressure;
use crate::kernel::stats::{Cat, Vm};
use crate::kernel::Kernel;
use crate::scenario::oomd::{Action, Detector, OomdConf, Rank};
use crate::units::PAGE_SIZE;
use std::collections::BTreeMap;

/// oomd's OomdContext average_size_decay: memory growth's average of memory.current
/// takes 1/4 of each new reading (CgroupContext::getAverageUsage).
const AVERAGE_SIZE_DECAY: f64 = 4.0;

/// A detector's window: PressureAbove's and PressureRisingBeyond's hit_thres_at_ and
/// last_pressure_, MemoryReclaim's last_pgscan_ and last_reclaim_at_.
#[derive(Clone, Debug, Default)]
struct Window {
    hit_at: Option<u64>,
    last: [f64; 3],
    last_pgscan: u64,
    last_reclaim_at: Option<u64>,
}

/// An oomd agent's state: its config, each detector's window, each ruleset's pause, the
/// average memory.current of each cgroup a kill action ranks.
pub(crate) struct Oomd {
    conf: OomdConf,
    windows: Vec<Vec<Vec<Window>>>,
    paused_until: Vec<u64>,
    average: BTreeMap<MemcgId, f64>,
}

/// A kill oomd made (or, `dry`, would have made): the ruleset, the action, the cgroup and
/// the processes (mm ids) killed.
pub(crate) struct OomdKill {
    pub ruleset: String,
    pub action: &'static str,
    pub memcg: MemcgId,
    pub mms: Vec<u32>,
    pub dry: bool,
}

/// The cgroup files oomd reads, as a process reads them.
struct Files<'a> {
    k: &'a mut Kernel,
}

impl Files<'_> {
    fn now(&self) -> u64 {
        self.k.cur.clock
    }

    /// memory.pressure's `full` line: avg10, avg60, avg300 (oomd's mem_pressure()).
    fn pressure(&mut self, m: MemcgId) -> [f64; 3] {
        self.k.sync();
        // psi_show at the time the other tasks have reached, then the read's CPU time.
        let now = self.k.cur.clock;
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        let Pressure { full, .. } = self.k.psi.show(m, now);
        [full.avg10, full.avg60, full.avg300]
    }

    /// memory.current, bytes.
    fn current(&mut self, m: MemcgId) -> u64 {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        self.k.memcgs.cgs[m as usize].usage * PAGE_SIZE
    }

    /// memory.swap.current, bytes.
    fn swap_current(&mut self, m: MemcgId) -> u64 {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        self.k.memcgs.cgs[m as usize].swap_usage * PAGE_SIZE
    }

    /// memory.stat's `pgscan` (kswapd plus direct, hierarchical).
    fn pgscan(&mut self, m: MemcgId) -> u64 {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_stat_read, Cat::Other);
        let k = &*self.k;
        let c = |v: Vm| -> u64 {
            (k.memcgs.iter(m).iter())
                .map(|&x| k.memcgs.cgs[x as usize].stat.0[v as usize])
                .sum()
        };
        c(Vm::PgscanKswapd) + c(Vm::PgscanDirect)
    }

    /// memory.stat's anon (the anon LRU lists, hierarchical), bytes.
    fn anon(&mut self, m: MemcgId) -> u64 {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_stat_read, Cat::Other);
        let k = &*self.k;
        let pages: u64 = (k.memcgs.iter(m).iter())
            .flat_map(|&c| (0..k.nr_nodes()).map(move |n| k.lruvec(c, n)))
            .map(|lv| k.lruvecs[lv].nr[0] + k.lruvecs[lv].nr[1])
            .sum();
        pages * PAGE_SIZE
    }

    /// oomd's effective_usage for a top-level cgroup: memory.current less its
    /// protection, min(current, max(memory.min, memory.low)) (rawProtection).
    fn effective(&mut self, m: MemcgId) -> u64 {
        let cur = self.current(m);
        // memory.min and memory.low.
        self.k.spend(2 * self.k.costs.cgroup_read, Cat::Other);
        let cg = &self.k.memcgs.cgs[m as usize];
        let prot = cg.min.max(cg.low).saturating_mul(PAGE_SIZE);
        cur - cur.min(prot)
    }

    /// cgroup.events' populated: a live process in the subtree.
    fn populated(&mut self, m: MemcgId) -> bool {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_read, Cat::Other);
        let k = &*self.k;
        (k.mms.iter()).any(|mm| !mm.dead && k.memcgs.is_descendant(mm.memcg, m))
    }

    /// /proc/meminfo's SwapTotal and SwapFree, bytes (0 without swap).
    fn swap(&mut self) -> (u64, u64) {
        self.k.sync();
        self.k.spend(self.k.costs.cgroup_stat_read, Cat::Other);
        (self.k.swap.as_ref()).map_or((0, 0), |s| (s.total() * PAGE_SIZE, s.nr_free() * PAGE_SIZE))
    }
}

/// The memcgs a `cgroup` list names: each path, or `PATH/*`'s children, in order, once.
fn resolve(k: &Kernel, cgroups: &[String]) -> Vec<MemcgId> {
    let mut out = Vec::new();
    for c in cgroups {
        let base = crate::scenario::oomd::base(c);
        let Some(m) = k.memcgs.by_path(base) else {
            continue;
        };
        let ms = match c.ends_with("/*") {
            true => k.memcgs.cgs[m as usize].children.clone(),
            false => vec![m],
        };
        out.extend(
            ms.into_iter()
                .filter(|m| !out.contains(m))
                .collect::<Vec<_>>(),
        );
    }
    out
}

/// The pressure of the cgroup with the highest 3 * avg10 + 2 * avg60 + avg300 (zeros
/// if none is above zero), as PressureAbove::run and PressureRisingBeyond::run pick it.
fn worst(f: &mut Files, ms: &[MemcgId]) -> [f64; 3] {
    let w = |p: &[f64; 3]| p[0] * 3.0 + p[1] * 2.0 + p[2];
    let mut cur = [0.0; 3];
    for &m in ms {
        let p = f.pressure(m);
        if w(&p) > w(&cur) {
            cur = p;
        }
    }
    cur
}

/// `hit_at` kept while `above`, reset otherwise; whether it has lasted `duration_ns`.
fn lasted(win: &mut Window, above: bool, now: u64, duration_ns: u64) -> bool {
    if !above {
        win.hit_at = None;
        return false;
    }
    let since = *win.hit_at.get_or_insert(now);
    now - since >= duration_ns
}

/// One detector's run: CONTINUE (true) or STOP.
fn detect(f: &mut Files, d: &Detector, win: &mut Window) -> bool {
    let now = f.now();
    match d {
        Detector::PressureAbove {
            cgroups,
            threshold,
            duration_ns,
        } => {
            let ms = resolve(f.k, cgroups);
            let p = worst(f, &ms);
            pressure_above(win, p, *threshold, *duration_ns, now)
        }
        Detector::PressureRisingBeyond {
            cgroups,
            threshold,
            duration_ns,
            fast_fall_ratio,
        } => {
            let ms = resolve(f.k, cgroups);
            let p = worst(f, &ms);
            rising_beyond(win, p, (*threshold, *duration_ns, *fast_fall_ratio), now)
        }
        Detector::SwapFree { threshold_pct } => {
            let (total, free) = f.swap();
            swap_free(total, free, *threshold_pct)
        }
        Detector::MemoryReclaim {
            cgroups,
            duration_ns,
        } => {
            let ms = resolve(f.k, cgroups);
            let pgscan: u64 = ms.iter().map(|&m| f.pgscan(m)).sum();
            memory_reclaim(win, pgscan, *duration_ns, now)
        }
    }
}

/// PressureAbove::run: avg10 above `threshold` since at least `duration_ns`.
fn pressure_above(
    win: &mut Window,
    p: [f64; 3],
    threshold: f64,
    duration_ns: u64,
    now: u64,
) -> bool {
    win.last = p;
    lasted(win, p[0] > threshold, now, duration_ns)
}

/// PressureRisingBeyond::run: avg60 above the threshold for the duration, avg10 above
/// it too and not below `fast_fall_ratio` of the last reading's avg10.
fn rising_beyond(
    win: &mut Window,
    p: [f64; 3],
    (threshold, duration_ns, ratio): (f64, u64, f64),
    now: u64,
) -> bool {
    let met_60 = lasted(win, p[1] > threshold, now, duration_ns);
    let falling = p[0] < win.last[0] * ratio;
    win.last = p;
    met_60 && p[0] > threshold && !falling
}

/// SwapFree::run: free swap below `threshold_pct` % of the total (swapout_bps_threshold
/// at its default, 0).
fn swap_free(total: u64, free: u64, threshold_pct: u64) -> bool {
    free < total * threshold_pct / 100
}

/// MemoryReclaim::run: pgscan grew at a reading no longer than `duration_ns` ago.
fn memory_reclaim(win: &mut Window, pgscan: u64, duration_ns: u64, now: u64) -> bool {
    if pgscan > win.last_pgscan {
        win.last_reclaim_at = Some(now);
    }
    win.last_pgscan = pgscan;
    win.last_reclaim_at
        .is_some_and(|at| now - at <= duration_ns)
}

/// KillPressure's key of a candidate whose `full` averages are [avg10, avg60, avg300]:
/// avg10's and avg60's half-sum, truncated to an int as oomd's sort key is.
fn pressure_key(p: [f64; 3]) -> Key {
    ((p[0] / 2.0 + p[1] / 2.0) as u64, 0.0, 0)
}

/// The candidates' order for killing: by key, descending; ties in the order given
/// (oomd's std::sort leaves them unspecified).
fn ranked(keys: &[Key]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&x, &y| {
        keys[y]
            .partial_cmp(&keys[x])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    order
}

/// KillMemoryGrowth::get_ranking_fn over candidates with memory.current `cur`,
/// effective usage `eff` and average usage `avg`: the size phase takes those with
/// memory.current at least `size_threshold` % of the candidates' total, ranked by
/// effective usage; the growth phase those growing (current / average) by at least
/// `min_growth_ratio` among the largest (100 - `growing_size_percentile`) %; then the
/// rest by effective usage.
fn size_or_growth(
    cur: &[u64],
    eff: &[u64],
    avg: &[f64],
    (size_threshold, min_growth, pct): (u64, f64, u64),
) -> Vec<Key> {
    let total: u64 = cur.iter().sum();
    let size_bytes = (total as f64 * (size_threshold as f64 / 100.0)) as u64;
    let mut growth_min = 0;
    if !cur.is_empty() && pct > 0 {
        let share = (100 - pct) as f64 / 100.0;
        let nth = ((cur.len() as f64 * share).ceil() as usize).saturating_sub(1);
        let mut sorted = eff.to_vec();
        sorted.sort_unstable_by(|x, y| y.cmp(x));
        growth_min = sorted[nth];
    }
    (0..cur.len())
        .map(|i| {
            let growth = if avg[i] == 0.0 {
                0.0
            } else {
                cur[i] as f64 / avg[i]
            };
            let size_ok = cur[i] >= size_bytes;
            let growth_ok = growth >= min_growth && eff[i] >= growth_min;
            let g = if growth_ok { growth } else { 0.0 };
            (if size_ok { eff[i] } else { 0 }, g, eff[i])
        })
        .collect()
}

/// An action's name in oomd's config.
fn action_name(a: &Action) -> &'static str {
    match a.rank {
        Rank::SizeOrGrowth { .. } => "kill_by_memory_size_or_growth",
        Rank::Pressure => "kill_by_pressure",
        Rank::SwapUsage { .. } => "kill_by_swap_usage",
    }
}

/// A candidate's ranking key, compared in descending order.
type Key = (u64, f64, u64);

impl Oomd {
    pub(crate) fn new(conf: OomdConf) -> Self {
        let windows = (conf.rulesets.iter())
            .map(|r| {
                r.groups
                    .iter()
                    .map(|g| vec![Window::default(); g.len()])
                    .collect()
            })
            .collect();
        Oomd {
            paused_until: vec![0; conf.rulesets.len()],
            windows,
            conf,
            average: BTreeMap::new(),
        }
    }

    pub(crate) fn interval_ns(&self) -> u64 {
        self.conf.interval_ns
    }

    /// One interval: the kill actions' prerun (each ranked cgroup's average usage), then
    /// each ruleset's run. The kills made.
    pub(crate) fn step(&mut self, k: &mut Kernel, p: &mut dyn Policy) -> Vec<OomdKill> {
        self.prerun(k);
        let mut kills = Vec::new();
        for r in 0..self.conf.rulesets.len() {
            kills.extend(self.run_ruleset(k, p, r));
        }
        kills
    }

    /// KillMemoryGrowth::prerun: the decaying average of memory.current of every cgroup
    /// a memory-growth action may rank.
    fn prerun(&mut self, k: &mut Kernel) {
        let mut f = Files { k };
        let acts = self.conf.rulesets.iter().flat_map(|r| r.actions.iter());
        let ranked: Vec<MemcgId> = acts
            .filter(|a| matches!(a.rank, Rank::SizeOrGrowth { .. }))
            .flat_map(|a| resolve(f.k, &a.cgroups))
            .collect();
        for m in ranked {
            let cur = f.current(m) as f64;
            let avg = self.average.entry(m).or_insert(0.0);
            *avg =
                *avg * ((AVERAGE_SIZE_DECAY - 1.0) / AVERAGE_SIZE_DECAY) + cur / AVERAGE_SIZE_DECAY;
        }
    }

    /// Ruleset::runOnceImpl: every detector group checked; the action chain if one
    /// fired and the actions are not paused: an action that kills nothing says
    /// CONTINUE (the next one runs), one that kills says STOP and pauses the ruleset's
    /// actions for its post_action_delay, unless `always_continue`.
    fn run_ruleset(&mut self, k: &mut Kernel, p: &mut dyn Policy, r: usize) -> Vec<OomdKill> {
        let mut f = Files { k };
        let rs = &self.conf.rulesets[r];
        let mut fired = false;
        for (g, group) in rs.groups.iter().enumerate() {
            let mut all = true;
            for (d, det) in group.iter().enumerate() {
                all &= detect(&mut f, det, &mut self.windows[r][g][d]);
            }
            fired |= all;
        }
        if !fired || f.now() < self.paused_until[r] {
            return Vec::new();
        }
        let mut kills = Vec::new();
        for a in &rs.actions {
            let Some(victim) = self.pick(&mut f, a) else {
                continue;
            };
            // The kill lands after the reads' time: the tasks due before it go first.
            f.k.sync();
            let now = f.now();
            let mms = if a.dry {
                Vec::new()
            } else {
                fault::kill_memcg(f.k, p, victim)
            };
            kills.push(OomdKill {
                ruleset: rs.name.clone(),
                action: action_name(a),
                memcg: victim,
                mms,
                dry: a.dry,
            });
            if !a.always_continue {
                self.paused_until[r] = now + a.post_action_delay_ns;
                break;
            }
        }
        kills
    }

    /// The victim: the action's cgroups sorted by its key, descending (ties in the
    /// order given: oomd's std::sort leaves them unspecified), the first populated one
    /// with anon memory.
    fn pick(&self, f: &mut Files, a: &Action) -> Option<MemcgId> {
        let mut ms = resolve(f.k, &a.cgroups);
        if let Rank::SwapUsage { threshold } = a.rank {
            ms.retain(|&m| f.swap_current(m) > threshold);
        }
        let keys = self.keys(f, a, &ms);
        ranked(&keys)
            .into_iter()
            .map(|i| ms[i])
            .find(|&m| f.populated(m) && f.anon(m) > 0)
    }

    /// Each candidate's key: KillMemoryGrowth's (size-phase effective usage, growth-phase
    /// growth ratio, effective usage), KillPressure's int(avg10 / 2 + avg60 / 2),
    /// KillSwapUsage's memory.swap.current.
    fn keys(&self, f: &mut Files, a: &Action, ms: &[MemcgId]) -> Vec<Key> {
        match a.rank {
            Rank::SizeOrGrowth {
                size_threshold,
                min_growth_ratio,
                growing_size_percentile,
            } => {
                let cur: Vec<u64> = ms.iter().map(|&m| f.current(m)).collect();
                let eff: Vec<u64> = ms.iter().map(|&m| f.effective(m)).collect();
                let avg: Vec<f64> = (ms.iter())
                    .map(|m| self.average.get(m).copied().unwrap_or(0.0))
                    .collect();
                let params = (size_threshold, min_growth_ratio, growing_size_percentile);
                size_or_growth(&cur, &eff, &avg, params)
            }
            Rank::Pressure => ms.iter().map(|&m| pressure_key(f.pressure(m))).collect(),
            Rank::SwapUsage { .. } => ms.iter().map(|&m| (f.swap_current(m), 0.0, 0)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// KillPressure ranks by int(avg10 / 2 + avg60 / 2): a half-point apart is a tie,
    /// and a tie keeps the order the candidates were listed in.
    #[test]
    fn kill_by_pressure_ranks_by_the_truncated_half_sum_and_keeps_ties_in_order() {
        let web = pressure_key([7.9, 2.3, 0.5]);
        let batch = pressure_key([8.5, 2.5, 0.5]);
        assert_eq!((web.0, batch.0), (5, 5));
        assert_eq!(ranked(&[web, batch]), vec![0, 1]);
        assert_eq!(ranked(&[batch, web]), vec![0, 1]);
        let hot = pressure_key([14.0, 3.5, 0.8]);
        assert_eq!(ranked(&[web, hot]), vec![1, 0]);
    }

    #[test]
    fn pressure_above_needs_the_threshold_exceeded_for_the_duration() {
        let mut w = Window::default();
        assert!(!pressure_above(&mut w, [20.0, 0.0, 0.0], 10.0, 2 * S, 0));
        assert!(!pressure_above(&mut w, [20.0, 0.0, 0.0], 10.0, 2 * S, S));
        assert!(pressure_above(&mut w, [20.0, 0.0, 0.0], 10.0, 2 * S, 2 * S));
        // At the threshold is not above it; the window starts over.
        assert!(!pressure_above(
            &mut w,
            [10.0, 50.0, 50.0],
            10.0,
            2 * S,
            3 * S
        ));
        assert!(!pressure_above(
            &mut w,
            [11.0, 0.0, 0.0],
            10.0,
            2 * S,
            4 * S
        ));
        assert!(pressure_above(&mut w, [11.0, 0.0, 0.0], 10.0, 0, 4 * S));
    }

    #[test]
    fn rising_beyond_reads_avg60_for_the_duration_and_a_steady_avg10() {
        let mut w = Window::default();
        let args = (10.0, S, 0.85);
        assert!(!rising_beyond(&mut w, [20.0, 20.0, 0.0], args, 0));
        assert!(rising_beyond(&mut w, [20.0, 20.0, 0.0], args, S));
        // avg10 falling fast (below 0.85 of the last reading): no.
        assert!(!rising_beyond(&mut w, [16.0, 20.0, 0.0], args, 2 * S));
        assert!(rising_beyond(&mut w, [15.0, 20.0, 0.0], args, 3 * S));
        // avg10 under the threshold: no, though avg60 has been above long enough.
        assert!(!rising_beyond(
            &mut w,
            [13.0, 20.0, 0.0],
            (14.0, S, 0.0),
            4 * S
        ));
    }

    #[test]
    fn swap_free_and_memory_reclaim() {
        assert!(swap_free(100, 9, 10) && !swap_free(100, 10, 10));
        let mut w = Window::default();
        assert!(!memory_reclaim(&mut w, 0, S, 0));
        assert!(memory_reclaim(&mut w, 5, S, S));
        assert!(memory_reclaim(&mut w, 5, S, 2 * S));
        assert!(!memory_reclaim(&mut w, 5, S, 2 * S + 1));
    }

    #[test]
    fn size_or_growth_takes_the_big_one_then_the_growing_one() {
        let p = (50, 1.25, 80);
        // One cgroup holds at least half: it ranks first.
        let keys = size_or_growth(&[60, 30, 10], &[60, 30, 10], &[60.0, 10.0, 10.0], p);
        assert_eq!(ranked(&keys), vec![0, 1, 2]);
        // None holds half: the one growing fastest among the largest 20% (of three
        // candidates: the largest one) ... is not growing; the rest by effective size,
        // where protection (a smaller effective usage) moves one down.
        let keys = size_or_growth(&[40, 35, 25], &[10, 35, 25], &[40.0, 35.0, 5.0], p);
        assert_eq!(ranked(&keys), vec![1, 2, 0]);
        // Growth: with every candidate eligible (percentile 0 takes all), the fastest
        // grower (3x its average) before a bigger one growing less than 1.25x.
        let keys = size_or_growth(
            &[40, 35, 25],
            &[40, 35, 25],
            &[40.0, 35.0, 8.0],
            (50, 1.25, 0),
        );
        assert_eq!(ranked(&keys), vec![2, 0, 1]);
        // Ties keep the order given.
        assert_eq!(ranked(&[(0, 0.0, 5), (0, 0.0, 5)]), vec![0, 1]);
    }
}
