//! The host memory a scenario needs and the host has: `estimate_host_bytes`, its parts
//! and the largest of them (which a too-large scenario's error names), and MemAvailable.

use super::config::{Scenario, WorkloadConfig};
use super::kind;
use super::{at, elem, Seg};
use crate::units::{human_bytes, PAGE_SIZE};

/// Host memory available to a run (MemAvailable), when known.
pub(super) fn host_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Host bytes a scenario will need, for refusing machines larger than this host: the
/// frame arena and swap-slot map (28 B/frame, plus 1 B for MGLRU's list bookkeeping),
/// the swap map (10 B/slot, and 4 B for each slot given back), page tables (4 B per mapped page), page-cache slots
/// (8 B/page) and MGLRU's Bloom filters (8 KiB per lruvec).
pub fn estimate_host_bytes(scenario: &Scenario) -> u64 {
    let lruvecs = (scenario.memcgs.len() as u64 + 1) * scenario.machine.nodes as u64;
    let parts: u64 = host_parts(scenario).iter().map(|p| p.0).sum();
    parts + lruvecs * 8192
}

/// The parts of `estimate_host_bytes` that grow with the scenario, each with the field
/// that sets it and what it asks to simulate: the machine's frames, its swap slots, and
/// each workload's page tables and page-cache slots (the field its `size` where that
/// alone sets it: anon, dd, page_fault3; else its table).
fn host_parts(s: &Scenario) -> Vec<(u64, Vec<Seg>, String)> {
    let memory = human_bytes(s.machine.memory.0);
    let mut parts = vec![(s.machine.memory.pages() * 29, at("machine.memory"), memory)];
    if let Some(swap) = &s.machine.swap {
        let what = format!("{} of swap", human_bytes(swap.size.0));
        parts.push((swap.size.pages() * 14, at("machine.swap.size"), what));
    }
    for (i, w) in s.workloads.iter().enumerate() {
        let (host, mapped) = workload_host_bytes(s, w);
        let table = w.options().map_or("", |o| kind(&o));
        let field = match table {
            "anon" | "dd" | "page_fault3" => format!("{table}.size"),
            _ => table.to_string(),
        };
        let what = format!("workload \"{}\"'s {}", w.name, human_bytes(mapped));
        parts.push((host, elem("workload", i, &field), what));
    }
    parts
}

/// Host bytes workload `w`'s page tables and page-cache slots need (its share of
/// `estimate_host_bytes`), and the bytes it maps (anon regions and files).
fn workload_host_bytes(scenario: &Scenario, w: &WorkloadConfig) -> (u64, u64) {
    let (mut host, mut mapped) = (0u64, 0u64);
    if let Ok(Ok(g)) = w.options().map(|o| o.build(scenario.seed)) {
        let l = g.layout();
        host += l.files.iter().map(|f| f.pages * 8).sum::<u64>();
        mapped += l.files.iter().map(|f| f.pages).sum::<u64>();
        for r in l.processes.iter().flat_map(|p| &p.regions) {
            host += 4 * match *r {
                crate::workload::RegionSpec::Anon { pages } => {
                    mapped += pages;
                    pages
                }
                crate::workload::RegionSpec::File { file } => l.files[file].pages,
            };
        }
    }
    (host, mapped * PAGE_SIZE)
}

/// The largest part of `estimate_host_bytes` (the first of equals): its field and what
/// it asks to simulate.
pub(super) fn host_culprit(s: &Scenario) -> (Vec<Seg>, String) {
    let largest = (host_parts(s).into_iter())
        .reduce(|a, b| if b.0 > a.0 { b } else { a })
        .expect("the machine's memory is always a part");
    (largest.1, largest.2)
}
