//! A finished run's results: the kernel's counters as /proc/vmstat, memory.stat and
//! memory.events show them, per-workload throughput and latency, lock statistics,
//! kswapd's profile and OOM kills.

use super::*;
use crate::engine::{Engine, Finished, RunOptions, SimError, Wl};
use crate::kernel::folio::lru;
use crate::kernel::memcg::MemcgId;
use crate::kernel::stats::{memory_events, memory_stat, Vm, MEMCG_GLOBAL_ONLY};
use crate::kernel::stats::{NR_KERNEL_VM, VM_NAMES};
use crate::kernel::Kernel;
use crate::scenario::config::Scenario;
use crate::units::PAGE_SIZE;
use std::collections::BTreeMap;

/// Runs one scenario (a variant already merged into it) and gathers its results.
pub fn run(
    scenario: &Scenario,
    variant: &str,
    opts: RunOptions,
) -> Result<VariantResult, SimError> {
    let wall = std::time::Instant::now();
    let Finished(e) = crate::engine::run(scenario, opts)?;
    let mut r = e.results(variant);
    r.scale = (scenario.scale != 1.0).then_some(scenario.scale);
    r.wall_s = wall.elapsed().as_secs_f64();
    Ok(r)
}

impl Engine {
    fn results(&self, variant: &str) -> VariantResult {
        let k = &self.k;
        let mm_owner = |mm: u32| {
            (self.wls.iter())
                .find(|w| w.mms.contains(&mm))
                .map_or_else(|| format!("mm{mm}"), |w| w.name.clone())
        };
        let oom_kills = (k.oom_kills.iter())
            .map(|o| OomKill {
                time_s: o.time_ns as f64 / 1e9,
                scope: (o.scope).map_or("global".into(), |m| k.memcgs.cgs[m as usize].path.clone()),
                victim: mm_owner(o.victim_mm),
                victim_memcg: k.memcgs.cgs[k.mms[o.victim_mm as usize].memcg as usize]
                    .path
                    .clone(),
                stall_s: o.stall_ns.map(|ns| ns as f64 / 1e9),
            })
            .collect();
        VariantResult {
            name: variant.to_string(),
            // Set by `run`, which has the scenario.
            scale: None,
            virtual_time_s: self.run_end() as f64 / 1e9,
            wall_s: 0.0,
            vmstat: vmstat(k),
            model_counters: (VM_NAMES.iter().zip(k.vm.0.iter()))
                .skip(NR_KERNEL_VM)
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            memcgs: (0..k.memcgs.cgs.len())
                .map(|m| memcg(k, m as MemcgId))
                .collect(),
            workloads: workloads(&self.wls),
            locks: locks(k),
            kswapd_profile: self.kswapd_profile(),
            oom_kills,
            page_accesses: self.accesses,
            model_bytes: k.host_bytes() + self.p.host_bytes(),
            timeseries: self.samples.clone(),
            lru_gen: self.lru_gen_states(self.run_end()),
            events: self.event_results.clone(),
            zswap: zswap(k),
            swap_device: swap_device(k),
            zram: zram(k),
            agents: self.agents.iter().map(|a| a.result.clone()).collect(),
            nodes: nodes(k),
            alloc_stall: AllocStall::from(&k.alloc_stall),
            sched: self.sched_use(),
            pressure: k.psi.system(),
            backend: None,
            guest: None,
            plugin: self.p.plugin_stats(),
        }
    }
}

/// Each node's memory, CPUs, watermarks, LRU pages and numastat, on a machine of more
/// than one node.
fn nodes(k: &Kernel) -> Vec<crate::results::NodeResult> {
    if k.nr_nodes() < 2 {
        return Vec::new();
    }
    let cpulist = |node: usize| {
        let cpus: Vec<u32> = (0..k.cpu_node.len() as u32)
            .filter(|&c| k.cpu_node[c as usize] as usize == node)
            .collect();
        crate::sim::topology::format_cpulist(&cpus)
    };
    let lru = |node: usize, kinds: std::ops::Range<usize>| -> u64 {
        let lvs = k.lruvecs.iter().filter(|l| l.node as usize == node);
        lvs.map(|l| l.nr[kinds.clone()].iter().sum::<u64>()).sum()
    };
    (k.nodes.iter().enumerate())
        .map(|(i, n)| crate::results::NodeResult {
            mem_total: n.zone.managed * PAGE_SIZE,
            mem_free: n.zone.free * PAGE_SIZE,
            anon: lru(i, 0..2) * PAGE_SIZE,
            file: lru(i, 2..4) * PAGE_SIZE,
            cpus: cpulist(i),
            watermarks: n.zone.wmark,
            numa_hit: n.numa_hit,
            numa_miss: n.numa_miss,
            numa_foreign: n.numa_foreign,
        })
        .collect()
}

/// zswap's debugfs view, when configured.
fn zswap(k: &Kernel) -> Option<crate::results::ZswapResult> {
    let z = k.swap.as_ref()?.zswap.as_ref()?;
    let c = z.counters;
    Some(crate::results::ZswapResult {
        pool_total_size: z.pool_pages() * 4096,
        stored_pages: z.stored_pages,
        same_filled_pages: z.same_filled_pages,
        written_back_pages: c.written_back_pages,
        pool_limit_hit: c.pool_limit_hit,
        reject_reclaim_fail: c.reject_reclaim_fail,
        reject_alloc_fail: c.reject_alloc_fail,
        reject_compress_poor: c.reject_compress_poor,
        duplicate_entry: c.duplicate_entry,
    })
}

/// zram's mm_stat, when the swap device is zram.
fn zram(k: &Kernel) -> Option<crate::results::ZramResult> {
    let z = k.swap.as_ref()?.zram.as_ref()?;
    let s = z.stats;
    Some(crate::results::ZramResult {
        orig_data_size: s.pages_stored * 4096,
        compr_data_size: s.compr_data_size,
        mem_used_total: z.pool_pages() * 4096,
        mem_limit: z.cfg.mem_limit * 4096,
        mem_used_max: s.max_used_pages * 4096,
        same_pages: s.same_pages,
        huge_pages: s.huge_pages,
        failed_writes: s.failed_writes,
        bd_stat: z.backing.as_ref().map(|b| crate::results::ZramBdResult {
            bd_count: b.stats.bd_count,
            bd_reads: b.stats.bd_reads,
            bd_writes: b.stats.bd_writes,
            failed_reads: b.stats.failed_reads,
            device: device_result(&b.ssd.stats),
        }),
    })
}

fn device_result(d: &crate::kernel::swap_io::SsdStats) -> crate::results::SwapDeviceResult {
    crate::results::SwapDeviceResult {
        reads: d.reads,
        writes: d.writes,
        bytes_read: d.bytes_read,
        bytes_written: d.bytes_written,
        queue_wait_ns: d.queue_wait_ns,
    }
}

/// The SSD's own counts, when the swap device is one.
fn swap_device(k: &Kernel) -> Option<crate::results::SwapDeviceResult> {
    let d = k.swap.as_ref()?.ssd.as_ref()?.stats;
    Some(device_result(&d))
}

/// Whether zswap is configured: its counters are shown only then.
fn has_zswap(k: &Kernel) -> bool {
    k.swap.as_ref().is_some_and(|s| s.zswap.is_some())
}

/// /proc/vmstat: the kernel's event counters, free, dirty and writeback pages, LRU list
/// sizes.
fn vmstat(k: &Kernel) -> BTreeMap<String, u64> {
    let mut vmstat: BTreeMap<String, u64> = (VM_NAMES.iter().zip(k.vm.0.iter()))
        .take(NR_KERNEL_VM)
        .map(|(n, v)| (n.to_string(), *v))
        .collect();
    if !has_zswap(k) {
        for c in [Vm::Zswpin, Vm::Zswpout, Vm::Zswpwb] {
            vmstat.remove(VM_NAMES[c as usize]);
        }
    }
    if !crate::kernel::swap_io::has_ssd(k) {
        for c in [Vm::SwapRa, Vm::SwapRaHit] {
            vmstat.remove(VM_NAMES[c as usize]);
        }
    }
    if k.costs.tlb_ipi == 0 {
        for c in [Vm::NrTlbRemoteFlush, Vm::NrTlbRemoteFlushReceived] {
            vmstat.remove(VM_NAMES[c as usize]);
        }
    }
    if k.nr_nodes() < 2 {
        for c in [Vm::NumaHit, Vm::NumaMiss] {
            vmstat.remove(VM_NAMES[c as usize]);
        }
    }
    vmstat.insert("nr_free_pages".into(), k.free_pages());
    vmstat.insert("nr_dirty".into(), k.wb.nr_dirty);
    vmstat.insert("nr_writeback".into(), k.wb.nr_writeback);
    for (i, name) in lru::NAMES.iter().enumerate() {
        vmstat.insert(
            format!("nr_{name}"),
            k.lruvecs.iter().map(|l| l.nr[i]).sum(),
        );
    }
    vmstat
}

/// Memcg `m`'s path with its memory.stat (hierarchical, as cgroup v2 shows it, with the
/// keys 6.1 prints that the model keeps; sizes in bytes), memory.events, memory.current,
/// memory.swap.current and the model's own per-memcg counts.
fn memcg(k: &Kernel, m: MemcgId) -> (String, MemcgResult) {
    let cg = &k.memcgs.cgs[m as usize];
    let sub = k.memcgs.iter(m);
    let raw = |i: usize| -> u64 {
        sub.iter()
            .map(|&c| k.memcgs.cgs[c as usize].stat.0[i])
            .sum()
    };
    let count = |c: Vm| raw(c as usize);
    let named = |c: Vm| (VM_NAMES[c as usize].to_string(), count(c));
    let model_counters = (MEMCG_GLOBAL_ONLY.into_iter().map(named))
        .chain((NR_KERNEL_VM..VM_NAMES.len()).map(|i| (VM_NAMES[i].to_string(), raw(i))))
        .collect();
    let result = MemcgResult {
        stat: memory_stat(k, m),
        events: memory_events(k, &sub),
        events_local: memory_events(k, &[m]),
        reclaim_stalls: reclaim_stalls(k, m),
        current: cg.usage * 4096,
        swap_current: cg.swap_usage * 4096,
        swap_events: swap_events(k, &sub),
        model_counters,
        pressure: k.psi.pressure(m),
    };
    (cg.path.clone(), result)
}

/// memory.swap.events over the memcgs `sub` (6.1's order less `high`), summed as
/// memory.events is.
fn swap_events(k: &Kernel, sub: &[MemcgId]) -> indexmap::IndexMap<String, u64> {
    let events = sub.iter().map(|&c| &k.memcgs.cgs[c as usize].events);
    let (max, fail) = events.fold((0, 0), |(m, f), e| (m + e.swap_max, f + e.swap_fail));
    [("max", max), ("fail", fail)]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect()
}

/// The reclaim stalls of memcg `m`'s tasks, one entry per cause (`StallKind`).
fn reclaim_stalls(k: &Kernel, m: MemcgId) -> indexmap::IndexMap<String, AllocStall> {
    let none = crate::kernel::stats::Histogram::default();
    (crate::kernel::stats::StallKind::ALL.into_iter())
        .map(|kind| {
            let h = k.memcg_stalls.get(&(m, kind)).unwrap_or(&none);
            (kind.name().to_string(), AllocStall::from(h))
        })
        .collect()
}

/// Per workload, or per `workload:phase` when it has several (phases without operations
/// left out): operations, rates over the measured span, latency.
fn workloads(wls: &[Wl]) -> BTreeMap<String, WorkloadResult> {
    let mut workloads = BTreeMap::new();
    for w in wls {
        for (i, s) in w.stats.iter().enumerate() {
            if w.phases.len() > 1 && s.ops == 0 {
                continue;
            }
            let name = if w.phases.len() > 1 {
                format!("{}:{}", w.name, w.phases[i])
            } else {
                w.name.clone()
            };
            let secs = s.first_ns.map_or(0.0, |f| (s.last_ns - f) as f64 / 1e9);
            let per = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
            workloads.insert(
                name,
                WorkloadResult {
                    ops: s.ops,
                    ops_per_sec: per(s.ops as f64),
                    mib_per_sec: per(s.bytes as f64 / (1 << 20) as f64),
                    measured_s: secs,
                    latency_ns: Latency::from(&s.latency),
                },
            );
        }
    }
    workloads
}

/// Per lock class, summed over its instances, with its call sites; a class never taken
/// is left out, except the lru_lock.
fn locks(k: &Kernel) -> BTreeMap<String, LockResult> {
    let mut locks: BTreeMap<String, LockResult> = BTreeMap::new();
    for (name, l) in k.all_locks() {
        let r = locks.entry(name.to_string()).or_default();
        r.instances += 1;
        r.acquisitions += l.acquisitions;
        r.contended += l.contended;
        r.wait_ns += l.wait_ns;
        r.hold_ns += l.hold_ns;
        r.relocks += l.relocks;
        r.max_wait_ns = r.max_wait_ns.max(l.wait_ns);
        for (site, st) in crate::sim::lock::SITE_NAMES.iter().zip(&l.sites) {
            if st.acquisitions > 0 {
                let s = r.sites.entry(site.to_string()).or_default();
                s.acquisitions += st.acquisitions;
                s.wait_ns += st.wait_ns;
                s.hold_ns += st.hold_ns;
            }
        }
    }
    locks.retain(|name, r| name == "lru_lock" || r.acquisitions > 0);
    for r in locks.values_mut() {
        r.spin_share = if k.cpu_time > 0 {
            r.wait_ns as f64 / k.cpu_time as f64
        } else {
            0.0
        };
    }
    locks
}
