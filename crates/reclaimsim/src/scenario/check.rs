//! The checks of a deserialized scenario that deserializing cannot make: ranges, the
//! machine, kernel, swap, memcgs, workloads (built once, and their waits without a
//! cycle), `[[event]]`s and `[[agent]]`s; each problem names its field.

use super::config::{self, MachineConfig, Scenario};
use super::host::{estimate_host_bytes, host_culprit};
use super::{agent, at, elem, event, fail, kind, oomd, scale, Problem, Seg};
use crate::kernel::config::MemcgReclaim;
use crate::units::{human_bytes, PAGE_SIZE};
use crate::workload::Workload;
use std::collections::HashMap;

const MIB: u64 = 1 << 20;
/// Sizes from here up are typos, not machines.
const ABSURD: u64 = 1 << 50;

/// Applies the scenario's `scale` (`scale::apply`) and checks the result; a problem only
/// the scaled scenario has says so, with the scale.
pub(super) fn scale_and_check(s: &mut Scenario, available: Option<u64>) -> Result<(), Problem> {
    let unscaled = (s.scale != 1.0).then(|| s.clone());
    scale::apply(s)?;
    let Err((path, msg)) = check(s, available) else {
        return Ok(());
    };
    match unscaled {
        Some(u) if check(&u, available).err() != Some((path.clone(), msg.clone())) => {
            let msg = format!("{msg} (after scale = {})", s.scale);
            Err((path, msg))
        }
        _ => Err((path, msg)),
    }
}

/// Check what deserializing cannot: ranges, references between tables, workloads that
/// build. `available` is the host memory the model may use.
fn check(s: &Scenario, available: Option<u64>) -> Result<(), Problem> {
    check_machine(s)?;
    let need = estimate_host_bytes(s);
    if let Some(available) = available.filter(|&a| need > a) {
        let (path, what) = host_culprit(s);
        return fail(
            path,
            format!(
                "simulating {what} needs about {} of host memory, more than the {} this host has available",
                human_bytes(need),
                human_bytes(available)
            ),
        );
    }
    check_kernel(s)?;
    check_plugin(s)?;
    for (name, d) in [
        ("duration", s.duration),
        ("sample_interval", s.sample_interval),
    ] {
        if d.is_some_and(|d| d.0 == 0) {
            return fail(at(name), "must be more than 0");
        }
    }
    check_zswap(s)?;
    check_swap_device(s)?;
    check_memcgs(s)?;
    check_page_content(s)?;
    check_workloads(s)?;
    check_events(s)?;
    check_agents(s)
}

/// `kernel.policy = "plugin"` and `kernel.plugin`: one with the other, a known plugin
/// on a declared memcg.
fn check_plugin(s: &Scenario) -> Result<(), Problem> {
    use crate::kernel::lru::plugin::examples::NAMES;
    let plugin = s.kernel.policy == crate::scenario::config::PolicyKind::Plugin;
    let Some(cfg) = &s.kernel.plugin else {
        if plugin {
            return fail(
                at("kernel.policy"),
                "\"plugin\" needs kernel.plugin = { name = \"...\" } (fifo, mru, lfu, s3fifo)",
            );
        }
        return Ok(());
    };
    if !plugin {
        return fail(at("kernel.plugin"), "needs kernel.policy = \"plugin\"");
    }
    if cfg.name != "python" && !NAMES.contains(&cfg.name.as_str()) {
        return fail(
            at("kernel.plugin.name"),
            format!(
                "no plugin \"{}\" (there are: {}; and \"python\" from the Python package)",
                cfg.name,
                NAMES.join(", ")
            ),
        );
    }
    match &cfg.memcg {
        Some(m) if m != "/" && !s.memcgs.iter().any(|c| &c.path == m) => fail(
            at("kernel.plugin.memcg"),
            format!("no [[memcg]] with path \"{m}\""),
        ),
        _ => Ok(()),
    }
}

/// `kernel.plugin.name = "python"` outside the Python package.
pub(super) fn check_python_policy(s: &Scenario, allowed: bool) -> Result<(), Problem> {
    match &s.kernel.plugin {
        Some(p) if p.name == "python" && !allowed => fail(
            at("kernel.plugin.name"),
            "a Python policy runs only from the Python package: reclaimsim.run(path, policy=MyPolicy) or reclaimsim.compare(path, policy=MyPolicy); the command line runs the Rust plugins (fifo, mru, lfu, s3fifo)",
        ),
        _ => Ok(()),
    }
}

/// `[machine]`: memory, nodes, CPUs (by count or by sockets, cores and SMT threads) and
/// swap within range, CPUs and memory split evenly enough over the nodes.
fn check_machine(s: &Scenario) -> Result<(), Problem> {
    let m = &s.machine;
    let memory = m.memory.0;
    if m.memory_key.is_none() && m.node.is_empty() {
        return fail(
            at("machine.memory"),
            "missing field `memory` (or a memory on each [[machine.node]])",
        );
    }
    if !m.node.is_empty() {
        check_nodes(m)?;
    }
    if !(16 * MIB..ABSURD).contains(&memory) {
        return fail(
            at("machine.memory"),
            format!(
                "{} is out of range: at least 16 MiB, less than 1 PiB",
                human_bytes(memory)
            ),
        );
    }
    if !(1..=64).contains(&m.nodes) {
        return fail(
            at("machine.nodes"),
            format!("{} nodes: must be 1 to 64", m.nodes),
        );
    }
    if memory / u64::from(m.nodes) < 16 * MIB {
        return fail(
            at("machine.nodes"),
            format!(
                "{} over {} nodes leaves less than 16 MiB per node",
                human_bytes(memory),
                m.nodes
            ),
        );
    }
    check_machine_cpus(m)?;
    match &m.swap {
        Some(swap) if swap.size.0 == 0 || swap.size.0 >= ABSURD => fail(
            at("machine.swap.size"),
            format!(
                "{} is out of range: more than 0, less than 1 PiB",
                human_bytes(swap.size.0)
            ),
        ),
        _ => Ok(()),
    }
}

/// The CPUs, by count or by topology, and their nodes: those of `[[machine.node]]`, or
/// an even split.
fn check_machine_cpus(m: &MachineConfig) -> Result<(), Problem> {
    if m.has_topology_keys() {
        check_topology(m)?;
    } else if !(1..=4096).contains(&m.cpus) {
        return fail(
            at("machine.cpus"),
            format!("{} CPUs: must be 1 to 4096", m.cpus),
        );
    }
    check_little_cpus(m)?;
    if !m.node.is_empty() {
        check_node_cpus(m)
    } else if m.has_topology_keys() {
        check_topology_nodes(m)
    } else if m.cpus % m.nodes != 0 {
        fail(
            at("machine.cpus"),
            format!(
                "{} CPUs cannot be split evenly over {} nodes (a multiple of machine.nodes)",
                m.cpus, m.nodes
            ),
        )
    } else {
        Ok(())
    }
}

/// `machine.little_cpus`: each a CPU of the machine.
fn check_little_cpus(m: &MachineConfig) -> Result<(), Problem> {
    match m.little_cpus.iter().find(|&&c| c >= m.cpus) {
        Some(c) => fail(
            at("machine.little_cpus"),
            format!("CPU {c} does not exist (the machine has {} CPUs)", m.cpus),
        ),
        None => Ok(()),
    }
}

/// `machine.swap.zswap`: its percentages within 0 to 100, as zswap's parameter handlers
/// take them (6.1 checks neither; the model refuses a limit past the machine).
fn check_zswap(s: &Scenario) -> Result<(), Problem> {
    let Some(z) = s.machine.swap.as_ref().and_then(|sw| sw.zswap) else {
        return Ok(());
    };
    for (key, v) in [
        ("max_pool_percent", z.max_pool_percent),
        ("accept_threshold_percent", z.accept_threshold_percent),
    ] {
        if v > 100 {
            return fail(
                at(&format!("machine.swap.zswap.{key}")),
                format!("{v}: a percentage, 0 to 100"),
            );
        }
    }
    Ok(())
}

/// `kernel.page_cluster` within 0 to 31 (6.1's page_cluster_max); an SSD's queue depth
/// in the cost table at least one request.
fn check_swap_device(s: &Scenario) -> Result<(), Problem> {
    use crate::kernel::config::SwapDevice;
    if s.kernel.page_cluster > 31 {
        return fail(
            at("kernel.page_cluster"),
            format!("{}: must be 0 to 31", s.kernel.page_cluster),
        );
    }
    let Some(sw) = &s.machine.swap else {
        return Ok(());
    };
    // zram's mem_limit is unused with another device, as `profile` without an SSD, so
    // that a variant can switch devices.
    if let Some(limit) = sw.mem_limit {
        if limit.0 >= ABSURD {
            return fail(
                at("machine.swap.mem_limit"),
                format!("{} is absurd (1 PiB or more)", human_bytes(limit.0)),
            );
        }
    }
    check_backing_dev(s, sw)?;
    // A profile with another device is unused, so that a variant can switch devices.
    if sw.device != SwapDevice::Ssd {
        return Ok(());
    }
    check_queue_depth(s, sw.profile.unwrap_or_default())
}

/// The cost table's queue depth of an SSD of `profile`: at least one request.
fn check_queue_depth(
    s: &Scenario,
    profile: crate::kernel::config::SsdProfile,
) -> Result<(), Problem> {
    use crate::kernel::config::SsdProfile;
    let (field, depth) = match profile {
        SsdProfile::Nvme => ("nvme_queue_depth", s.costs.nvme_queue_depth),
        SsdProfile::Sata => ("sata_queue_depth", s.costs.sata_queue_depth),
    };
    if depth == 0 {
        return fail(
            at(&format!("costs.{field}")),
            "0: the SSD's queue depth must be at least 1",
        );
    }
    Ok(())
}

/// `machine.swap.backing_dev`, when enabled: on a zram device only (`enabled = false`
/// lets a variant switch devices), a size more than a block (block 0 is never used)
/// and less than 1 PiB, and its profile's queue depth at least one request.
fn check_backing_dev(s: &Scenario, sw: &config::SwapConfig) -> Result<(), Problem> {
    use crate::kernel::config::SwapDevice;
    let Some(b) = sw.backing_dev.filter(|b| b.enabled) else {
        return Ok(());
    };
    if sw.device != SwapDevice::Zram {
        return fail(
            at("machine.swap.backing_dev"),
            "a backing device is zram's (device = \"zram\"); `enabled = false` turns it \
             off for another device",
        );
    }
    if let Some(size) = b.size {
        if size.0 < 2 * PAGE_SIZE || size.0 >= ABSURD {
            return fail(
                at("machine.swap.backing_dev.size"),
                format!(
                    "{} is out of range: at least 8KiB (two blocks), less than 1 PiB",
                    human_bytes(size.0)
                ),
            );
        }
    }
    check_queue_depth(s, b.profile)
}

/// Each workload's `page_content`: shares in percent that add up to 100.
fn check_page_content(s: &Scenario) -> Result<(), Problem> {
    for (i, w) in s.workloads.iter().enumerate() {
        let Some(c) = w.page_content else { continue };
        let sum =
            u64::from(c.items2000) + u64::from(c.items32) + u64::from(c.zero) + u64::from(c.random);
        if sum != 100 {
            return fail(
                elem("workload", i, "page_content"),
                format!("the shares add up to {sum}, not 100"),
            );
        }
    }
    Ok(())
}

/// `machine.sockets`, `cores_per_socket` and `threads_per_core`: cores_per_socket given,
/// each at least 1, at most 4096 CPUs in all, `cpus` (if given) their product, and the
/// nodes one per socket, or all on one, or an even split of one socket's cores (SNC).
fn check_topology(m: &MachineConfig) -> Result<(), Problem> {
    let Some(cores) = m.cores_per_socket else {
        return fail(
            at("machine.cores_per_socket"),
            "required when machine.sockets or machine.threads_per_core is given",
        );
    };
    let (sockets, threads) = (m.sockets.unwrap_or(1), m.threads_per_core.unwrap_or(1));
    for (key, n) in [
        ("sockets", sockets),
        ("cores_per_socket", cores),
        ("threads_per_core", threads),
    ] {
        if n == 0 {
            return fail(at(&format!("machine.{key}")), "must be at least 1");
        }
    }
    let product = u64::from(sockets) * u64::from(cores) * u64::from(threads);
    let shape = format!("{sockets} sockets x {cores} cores x {threads} threads = {product} CPUs");
    if product > 4096 {
        return fail(
            at("machine.cores_per_socket"),
            format!("{shape}: must be 1 to 4096"),
        );
    }
    if let Some(cpus) = m.cpus_key.filter(|&c| u64::from(c) != product) {
        return fail(
            at("machine.cpus"),
            format!("{cpus} CPUs, but the topology has {shape} (leave machine.cpus out)"),
        );
    }
    Ok(())
}

/// `machine.nodes` on a topology: one per socket, or all on one, or an even split of
/// one socket's cores (SNC).
fn check_topology_nodes(m: &MachineConfig) -> Result<(), Problem> {
    let (sockets, cores) = (m.sockets.unwrap_or(1), m.cores_per_socket.unwrap_or(1));
    if sockets > 1 && m.nodes != 1 && m.nodes != sockets {
        return fail(
            at("machine.nodes"),
            format!(
                "{} nodes on {sockets} sockets: must be 1 or one per socket",
                m.nodes
            ),
        );
    }
    let all = sockets * cores;
    if all % m.nodes != 0 {
        return fail(
            at("machine.nodes"),
            format!("{} nodes cannot split the {all} cores evenly", m.nodes),
        );
    }
    Ok(())
}

/// `[[machine.node]]`: 1 to 64 of them, `machine.nodes` (if given) their count,
/// `machine.memory` (if given) their sum, each at least 16 MiB.
fn check_nodes(m: &MachineConfig) -> Result<(), Problem> {
    let count = m.node.len();
    if count > 64 {
        return fail(
            at("machine.node"),
            format!("{count} nodes: must be 1 to 64"),
        );
    }
    if let Some(n) = m.nodes_key.filter(|&n| n as usize != count) {
        return fail(
            at("machine.nodes"),
            format!("{n}, but there are {count} [[machine.node]] tables (leave machine.nodes out)"),
        );
    }
    for (i, n) in m.node.iter().enumerate() {
        if !(16 * MIB..ABSURD).contains(&n.memory.0) {
            return fail(
                node_at(i, "memory"),
                format!(
                    "{} is out of range: at least 16 MiB, less than 1 PiB",
                    human_bytes(n.memory.0)
                ),
            );
        }
    }
    let sum: u64 = m.node.iter().map(|n| n.memory.0).sum();
    match m.memory_key {
        Some(total) if total.0 != sum => fail(
            at("machine.memory"),
            format!(
                "{} differs from the sum of the [[machine.node]] memories, {} (leave machine.memory out)",
                human_bytes(total.0),
                human_bytes(sum)
            ),
        ),
        _ => Ok(()),
    }
}

/// `machine.node[i].FIELD`.
fn node_at(i: usize, field: &str) -> Vec<Seg> {
    let mut path = at("machine.node");
    path.push(Seg::Index(i));
    path.extend(at(field));
    path
}

/// Every CPU of the machine on exactly one `[[machine.node]]`, and no node naming a CPU
/// the machine does not have.
fn check_node_cpus(m: &MachineConfig) -> Result<(), Problem> {
    let mut owner: Vec<Option<usize>> = vec![None; m.cpus as usize];
    for (i, n) in m.node.iter().enumerate() {
        for &c in &n.cpus {
            match owner.get_mut(c as usize) {
                None => {
                    return fail(
                        node_at(i, "cpus"),
                        format!("CPU {c} does not exist (the machine has {} CPUs)", m.cpus),
                    )
                }
                Some(Some(j)) => {
                    return fail(
                        node_at(i, "cpus"),
                        format!("CPU {c} is on node {j} already: a CPU belongs to one node"),
                    )
                }
                Some(slot) => *slot = Some(i),
            }
        }
    }
    match owner.iter().position(Option::is_none) {
        Some(c) => fail(
            node_at(m.node.len() - 1, "cpus"),
            format!(
                "CPU {c} is on no node: every CPU of the machine belongs to one [[machine.node]] ({} CPUs)",
                m.cpus
            ),
        ),
        None => Ok(()),
    }
}

fn check_kernel(s: &Scenario) -> Result<(), Problem> {
    let (k, m) = (&s.kernel, &s.machine);
    if !(1..=100).contains(&k.dirty_ratio) {
        return fail(
            at("kernel.dirty_ratio"),
            format!("{}: must be 1 to 100 (percent)", k.dirty_ratio),
        );
    }
    if k.dirty_background_ratio > 100 {
        return fail(
            at("kernel.dirty_background_ratio"),
            format!("{}: must be 0 to 100 (percent)", k.dirty_background_ratio),
        );
    }
    if k.swappiness > 200 {
        return fail(
            at("kernel.swappiness"),
            format!("{}: must be 0 to 200", k.swappiness),
        );
    }
    if !(1..=255).contains(&k.pagevec_size) {
        return fail(
            at("kernel.pagevec_size"),
            format!("{}: must be 1 to 255", k.pagevec_size),
        );
    }
    // Every slot of every CPU's two move batches may hold the same folio (folio_get per
    // queueing): the pin count must fit its flag bits.
    if 2 * k.pagevec_size as u64 * m.cpus as u64 > crate::kernel::folio::pg::MAX_PINS as u64 {
        return fail(
            at("kernel.pagevec_size"),
            format!(
                "{} with {} CPUs: 2 x pagevec_size x cpus must be at most {}",
                k.pagevec_size,
                m.cpus,
                crate::kernel::folio::pg::MAX_PINS
            ),
        );
    }
    if !(1..=3000).contains(&k.watermark_scale_factor) {
        return fail(
            at("kernel.watermark_scale_factor"),
            format!("{}: must be 1 to 3000", k.watermark_scale_factor),
        );
    }
    if let Some(kb) = k.min_free_kbytes {
        if kb.saturating_mul(1024) >= m.memory.0 {
            return fail(
                at("kernel.min_free_kbytes"),
                format!(
                    "{kb} KiB is not less than machine.memory ({})",
                    human_bytes(m.memory.0)
                ),
            );
        }
    }
    check_kernel_v11(s)?;
    check_kernel_cpus(s)
}

/// `memcg_reclaim = "v11"` or `"v11-patch1-8"`: patches 01-09 of the May 2022 posting
/// have no min_ttl_ms (patch 11 added it), so a non-zero value has nothing to drive.
fn check_kernel_v11(s: &Scenario) -> Result<(), Problem> {
    let k = &s.kernel;
    let name = match k.memcg_reclaim {
        MemcgReclaim::V11 => "v11",
        MemcgReclaim::V11Patch1to8 => "v11-patch1-8",
        MemcgReclaim::None | MemcgReclaim::V61 | MemcgReclaim::MemcgLru => return Ok(()),
    };
    if k.min_ttl_ms > 0 {
        return fail(
            at("kernel.min_ttl_ms"),
            format!(
                "{}: memcg_reclaim = \"{name}\" models patches 01-09 of the May 2022 \
                 MGLRU posting, which have no min_ttl_ms (patch 11 added it); use 0",
                k.min_ttl_ms
            ),
        );
    }
    Ok(())
}

/// The kernel threads' CPUs (`flusher_cpu`, `kswapd_cpu`, one per node) exist.
fn check_kernel_cpus(s: &Scenario) -> Result<(), Problem> {
    let (k, m) = (&s.kernel, &s.machine);
    if let Some(cpu) = k.flusher_cpu.filter(|&c| c >= m.cpus) {
        return fail(
            at("kernel.flusher_cpu"),
            format!("CPU {cpu} does not exist (machine.cpus = {})", m.cpus),
        );
    }
    if let Some(cpus) = &k.kswapd_cpu {
        if cpus.len() != m.nodes as usize {
            return fail(
                at("kernel.kswapd_cpu"),
                format!(
                    "has {} entries: needs one per node ({})",
                    cpus.len(),
                    m.nodes
                ),
            );
        }
        if let Some(i) = cpus.iter().position(|&c| c >= m.cpus) {
            let mut path = at("kernel.kswapd_cpu");
            path.push(Seg::Index(i));
            return fail(
                path,
                format!("CPU {} does not exist (machine.cpus = {})", cpus[i], m.cpus),
            );
        }
    }
    Ok(())
}

/// `[[event]]`s: each one write that reads (`event::parse`): lru_gen commands and
/// min_ttl_ms for MGLRU (min_ttl_ms not for the v11 postings), naming declared memcgs
/// and existing nodes; memcg files of declared memcgs (the root only has
/// memory.reclaim); existing CPUs.
fn check_events(s: &Scenario) -> Result<(), Problem> {
    for (i, ev) in s.events.iter().enumerate() {
        let parsed = event::parse(ev).map_err(|(f, e)| (elem("event", i, f), e))?;
        match &parsed.write {
            event::EventWrite::LruGen(cmds) => check_lru_gen_event(s, i, cmds)?,
            event::EventWrite::Memcg { path, file } => check_memcg_event(s, i, path, file)?,
            event::EventWrite::Sysctl(sysctl) => check_sysctl_event(s, i, sysctl)?,
        }
        if let Some(cpu) = ev.cpu.filter(|&c| c >= s.machine.cpus) {
            return fail(
                elem("event", i, "cpu"),
                format!(
                    "CPU {cpu} does not exist (machine.cpus = {})",
                    s.machine.cpus
                ),
            );
        }
    }
    Ok(())
}

/// `[[agent]]`s: a known kind whose parameters read (`agent::parse`), a declared memcg
/// other than the root (which has no memory.high), an existing CPU.
fn check_agents(s: &Scenario) -> Result<(), Problem> {
    for (i, a) in s.agents.iter().enumerate() {
        let parsed = agent::parse(a).map_err(|(f, e)| (elem("agent", i, &f), e))?;
        let declared = |p: &str| p == "/" || s.memcgs.iter().any(|m| m.path == p);
        if let Some(memcg) = &a.memcg {
            if memcg == "/" || !declared(memcg) {
                let why = match memcg.as_str() {
                    "/" => "the root cgroup has no memory.high".to_string(),
                    p => format!("no [[memcg]] with path \"{p}\""),
                };
                return fail(elem("agent", i, "memcg"), why);
            }
        }
        if let agent::AgentKind::Oomd(conf) = &parsed.kind {
            if let Some((at, c)) = oomd::cgroups(conf).find(|(_, c)| !declared(oomd::base(c))) {
                return fail(
                    elem("agent", i, &at),
                    format!("no [[memcg]] with path \"{}\"", oomd::base(&c)),
                );
            }
        }
        if let agent::AgentKind::ChromeOs(conf) = &parsed.kind {
            match s.workloads.iter().find(|w| w.name == conf.workload) {
                None => {
                    let why = format!("no [[workload]] named \"{}\"", conf.workload);
                    return fail(elem("agent", i, "workload"), why);
                }
                Some(w) if w.tabs.is_none() => {
                    let why = format!(
                        "\"{}\" is not a tabs workload: a chromeos agent discards tabs",
                        conf.workload
                    );
                    return fail(elem("agent", i, "workload"), why);
                }
                Some(_) => {}
            }
        }
        if let Some(cpu) = a.cpu.filter(|&c| c >= s.machine.cpus) {
            return fail(
                elem("agent", i, "cpu"),
                format!(
                    "CPU {cpu} does not exist (machine.cpus = {})",
                    s.machine.cpus
                ),
            );
        }
    }
    Ok(())
}

/// An lru_gen `command`: MGLRU, declared memcgs, existing nodes.
fn check_lru_gen_event(
    s: &Scenario,
    i: usize,
    cmds: &[crate::kernel::lru::mglru::debugfs::LruGenCmd],
) -> Result<(), Problem> {
    if s.kernel.policy != crate::scenario::config::PolicyKind::Mglru {
        return fail(
            elem("event", i, "command"),
            "lru_gen commands need kernel.policy = \"mglru\"",
        );
    }
    for c in cmds {
        if c.memcg != "/" && !s.memcgs.iter().any(|m| m.path == c.memcg) {
            return fail(
                elem("event", i, "command"),
                format!("no [[memcg]] with path \"{}\"", c.memcg),
            );
        }
        if c.node >= s.machine.nodes {
            return fail(
                elem("event", i, "command"),
                format!(
                    "node {} does not exist (machine.nodes = {})",
                    c.node, s.machine.nodes
                ),
            );
        }
    }
    Ok(())
}

/// A memcg `file` event: a declared memcg; the root only for memory.reclaim (cgroup v2
/// has no memory.max, .high, .low or .min in the root).
fn check_memcg_event(
    s: &Scenario,
    i: usize,
    path: &str,
    file: &crate::kernel::control::MemcgFile,
) -> Result<(), Problem> {
    use crate::kernel::control::MemcgFile;
    if path == "/" {
        if !matches!(file, MemcgFile::Reclaim { .. }) {
            return fail(
                elem("event", i, "file"),
                "the root cgroup has only memory.reclaim of these files",
            );
        }
    } else if !s.memcgs.iter().any(|m| m.path == path) {
        return fail(
            elem("event", i, "memcg"),
            format!("no [[memcg]] with path \"{path}\""),
        );
    }
    Ok(())
}

/// A `sysctl` event: lru_gen.min_ttl_ms needs MGLRU, and not the v11 postings (which
/// have no min_ttl_ms).
fn check_sysctl_event(
    s: &Scenario,
    i: usize,
    sysctl: &crate::kernel::control::Sysctl,
) -> Result<(), Problem> {
    use crate::kernel::control::Sysctl;
    match sysctl {
        Sysctl::MinTtlMs(_) => {}
        Sysctl::ZramIdle
        | Sysctl::ZramWriteback(_)
        | Sysctl::ZramWritebackLimit(_)
        | Sysctl::ZramWritebackLimitEnable(_) => return check_zram_event(s, i, sysctl),
        _ => return Ok(()),
    }
    if s.kernel.policy != crate::scenario::config::PolicyKind::Mglru {
        return fail(
            elem("event", i, "sysctl"),
            "lru_gen.min_ttl_ms needs kernel.policy = \"mglru\"",
        );
    }
    if matches!(
        s.kernel.memcg_reclaim,
        MemcgReclaim::V11 | MemcgReclaim::V11Patch1to8
    ) {
        return fail(
            elem("event", i, "sysctl"),
            "the v11 postings of MGLRU have no min_ttl_ms",
        );
    }
    Ok(())
}

/// A write to zram's files needs a zram swap device; zram.writeback needs
/// `backing_dev` (6.1's writeback_store fails with -ENODEV without one: the model
/// refuses the scenario rather than run a write that cannot do anything; a backing_dev
/// with `enabled = false`, which a variant sets, runs it to that ENODEV).
fn check_zram_event(
    s: &Scenario,
    i: usize,
    sysctl: &crate::kernel::control::Sysctl,
) -> Result<(), Problem> {
    use crate::kernel::config::SwapDevice;
    let Some(sw) = s
        .machine
        .swap
        .as_ref()
        .filter(|sw| sw.device == SwapDevice::Zram)
    else {
        return fail(
            elem("event", i, "sysctl"),
            "zram's files need machine.swap.device = \"zram\"",
        );
    };
    let writeback = matches!(sysctl, crate::kernel::control::Sysctl::ZramWriteback(_));
    if writeback && sw.backing_dev.is_none() {
        return fail(
            elem("event", i, "sysctl"),
            "zram.writeback needs machine.swap.backing_dev (6.1's writeback_store fails \
             with ENODEV without one)",
        );
    }
    Ok(())
}

fn check_memcgs(s: &Scenario) -> Result<(), Problem> {
    for (i, c) in s.memcgs.iter().enumerate() {
        let p = &c.path;
        if p == "/" {
            return fail(
                elem("memcg", i, "path"),
                "the root \"/\" always exists and cannot be declared",
            );
        }
        if !p.starts_with('/') || p[1..].split('/').any(str::is_empty) {
            return fail(
                elem("memcg", i, "path"),
                format!("\"{p}\" is not a cgroup path such as \"/a\" or \"/a/b\""),
            );
        }
        if s.memcgs[..i].iter().any(|o| o.path == *p) {
            return fail(
                elem("memcg", i, "path"),
                format!("\"{p}\" is declared twice"),
            );
        }
        let parent = &p[..p.rfind('/').unwrap_or(0)];
        if !parent.is_empty() && !s.memcgs.iter().any(|o| o.path == parent) {
            return fail(
                elem("memcg", i, "path"),
                format!("parent \"{parent}\" is not declared"),
            );
        }
        for (name, size) in [
            ("max", c.max),
            ("high", c.high),
            ("low", c.low),
            ("min", c.min),
            ("swap_max", c.swap_max),
            ("zswap_max", c.zswap_max),
        ] {
            if let Some(size) = size.filter(|b| b.0 >= ABSURD) {
                return fail(
                    elem("memcg", i, name),
                    format!("{} is absurd (1 PiB or more)", human_bytes(size.0)),
                );
            }
        }
    }
    Ok(())
}

fn check_workloads(s: &Scenario) -> Result<(), Problem> {
    if s.workloads.is_empty() {
        return fail(at("workload"), "a scenario needs at least one [[workload]]");
    }
    let mut built: Vec<Box<dyn Workload>> = Vec::new();
    for i in 0..s.workloads.len() {
        check_placement(s, i)?;
        built.push(build_workload(s, i)?);
    }
    for (i, w) in s.workloads.iter().enumerate() {
        for (field, target) in [("after", &w.after), ("until", &w.until)] {
            if let Some(target) = target {
                check_reference(s, &built, i, target)
                    .map_err(|e| (elem("workload", i, field), e))?;
            }
        }
        for (p, name) in built[i].phases().iter().enumerate() {
            if let Some(target) = built[i].waits_for(p) {
                check_reference(s, &built, i, target).map_err(|e| {
                    let table = w.options().map_or("", |o| kind(&o));
                    (
                        elem("workload", i, table),
                        format!("phase `{name}`: wait_for: {e}"),
                    )
                })?;
            }
        }
    }
    match wait_cycle(s, &built) {
        Some((i, field, chain)) => fail(
            elem("workload", i, field),
            format!("{chain}: a wait that never ends"),
        ),
        None => Ok(()),
    }
}

/// Workload `i`'s name (unique, no ':'), memcg and CPUs.
fn check_placement(s: &Scenario, i: usize) -> Result<(), Problem> {
    let w = &s.workloads[i];
    if w.name.is_empty() || w.name.contains(':') {
        return fail(
            elem("workload", i, "name"),
            format!("\"{}\": a name must be non-empty, without ':'", w.name),
        );
    }
    if s.workloads[..i].iter().any(|o| o.name == w.name) {
        return fail(
            elem("workload", i, "name"),
            format!("\"{}\" is used twice", w.name),
        );
    }
    if w.memcg != "/" && !s.memcgs.iter().any(|c| c.path == w.memcg) {
        return fail(
            elem("workload", i, "memcg"),
            format!("no [[memcg]] with path \"{}\"", w.memcg),
        );
    }
    check_mems(s, i)?;
    check_cpuset(s, i)
}

/// Workload `i`'s `mems`: at least one node, each existing.
fn check_mems(s: &Scenario, i: usize) -> Result<(), Problem> {
    let Some(mems) = &s.workloads[i].mems else {
        return Ok(());
    };
    if mems.is_empty() {
        return fail(elem("workload", i, "mems"), "must list at least one node");
    }
    match mems.iter().find(|&&n| n >= s.machine.nodes) {
        Some(n) => fail(
            elem("workload", i, "mems"),
            format!(
                "node {n} does not exist (the machine has {} nodes)",
                s.machine.nodes
            ),
        ),
        None => Ok(()),
    }
}

/// Workload `i`'s `cpus` on the machine and `node` existing, with some CPU in common.
fn check_cpuset(s: &Scenario, i: usize) -> Result<(), Problem> {
    let (w, topology) = (&s.workloads[i], s.machine.topology());
    if let Some(node) = w.node.filter(|&n| n >= s.machine.nodes) {
        return fail(
            elem("workload", i, "node"),
            format!(
                "node {node} does not exist (machine.nodes = {})",
                s.machine.nodes
            ),
        );
    }
    if let Some(node) = w
        .node
        .filter(|_| w.cpus.is_none() && w.cpuset(&topology).is_empty())
    {
        return fail(
            elem("workload", i, "node"),
            format!("node {node} has no CPUs (a memory-only node): its memory is bound with mems"),
        );
    }
    let Some(cpus) = &w.cpus else {
        return Ok(());
    };
    if cpus.is_empty() {
        return fail(elem("workload", i, "cpus"), "must list at least one CPU");
    }
    if let Some(j) = cpus.iter().position(|&c| c >= s.machine.cpus) {
        let mut path = elem("workload", i, "cpus");
        path.push(Seg::Index(j));
        return fail(
            path,
            format!(
                "CPU {} does not exist (machine.cpus = {})",
                cpus[j], s.machine.cpus
            ),
        );
    }
    match w.node {
        Some(node) if w.cpuset(&topology).is_empty() => fail(
            elem("workload", i, "node"),
            format!("none of the workload's cpus is on node {node}"),
        ),
        _ => Ok(()),
    }
}

/// Builds workload `i`'s generator, which checks its options, and checks that each of its
/// processes' memcgs (a trace's tenants) exists.
fn build_workload(s: &Scenario, i: usize) -> Result<Box<dyn Workload>, Problem> {
    let options = s.workloads[i]
        .options()
        .map_err(|e| (elem("workload", i, ""), e))?;
    let gen = options
        .build(s.seed)
        .map_err(|e| build_problem(i, kind(&options), e))?;
    for p in 0..gen.layout().processes.len() {
        match gen.process_memcg(p) {
            Some(path) if path != "/" && !s.memcgs.iter().any(|c| c.path == path) => {
                return fail(
                    elem("workload", i, kind(&options)),
                    format!("no [[memcg]] with path \"{path}\" (a tenant's memcg)"),
                );
            }
            _ => {}
        }
    }
    Ok(gen)
}

/// A workload's build error, about the field its message starts with (`fio.rw: ...`,
/// the generators' convention) when that is one plain field, else about its table.
fn build_problem(i: usize, kind: &str, e: String) -> Problem {
    let field = e
        .strip_prefix(kind)
        .and_then(|r| r.strip_prefix('.'))
        .and_then(|r| r.split_once(": "))
        .filter(|(f, _)| f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    match field {
        Some((f, message)) => (elem("workload", i, &format!("{kind}.{f}")), message.into()),
        None => (elem("workload", i, kind), e),
    }
}

/// Check that `target` (`workload` or `workload:phase`) names another workload (and one of its phases).
fn check_reference(
    s: &Scenario,
    built: &[Box<dyn Workload>],
    i: usize,
    target: &str,
) -> Result<(), String> {
    let (name, phase) = match target.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (target, None),
    };
    let j = s
        .workloads
        .iter()
        .position(|w| w.name == name)
        .ok_or_else(|| format!("no [[workload]] named \"{name}\""))?;
    if j == i {
        return Err(format!("\"{name}\" cannot refer to itself"));
    }
    if let Some(phase) = phase {
        let phases = built[j].phases();
        if !phases.iter().any(|p| p == phase) {
            return Err(format!(
                "workload \"{name}\" has no phase \"{phase}\" (it has: {})",
                phases.join(", ")
            ));
        }
    }
    Ok(())
}

/// A phase of a workload: (workload, phase index).
type PhaseNode = (usize, usize);

/// What phase `(i, p)` waits for before it can start, and why (for the error): its own
/// phase before, the target of the workload's `after` (phase 0), or of the phase's
/// `wait_for`. A target without a phase is its workload's last phase. Targets were
/// checked before (`check_reference`).
fn waits(
    s: &Scenario,
    built: &[Box<dyn Workload>],
    (i, p): PhaseNode,
) -> Vec<(PhaseNode, &'static str)> {
    let resolve = |target: &str| {
        let (name, phase) = target.split_once(':').unwrap_or((target, ""));
        let j = s.workloads.iter().position(|w| w.name == name)?;
        let phases = built[j].phases();
        let q = match phase {
            "" => phases.len() - 1,
            _ => phases.iter().position(|x| x == phase)?,
        };
        Some((j, q))
    };
    let mut out = Vec::new();
    if p > 0 {
        out.push(((i, p - 1), "follows"));
    } else if let Some(t) = s.workloads[i].after.as_deref().and_then(resolve) {
        out.push((t, "starts after"));
    }
    if let Some(t) = built[i].waits_for(p).and_then(resolve) {
        out.push((t, "waits for"));
    }
    out
}

/// A chain of waits (`after`, `wait_for`, phases in order) that comes back to where it
/// began: none of its phases could ever start. Gives the workload to blame, its field
/// and the chain in words.
fn wait_cycle(s: &Scenario, built: &[Box<dyn Workload>]) -> Option<(usize, &'static str, String)> {
    // Depth-first search; `path` holds the phases being explored and how each waits for
    // the next.
    fn visit(
        s: &Scenario,
        built: &[Box<dyn Workload>],
        node: PhaseNode,
        state: &mut HashMap<PhaseNode, bool>,
        path: &mut Vec<(PhaseNode, &'static str)>,
    ) -> Option<usize> {
        match state.get(&node) {
            Some(true) => return path.iter().position(|(n, _)| *n == node),
            Some(false) => return None,
            None => {}
        }
        state.insert(node, true);
        for (next, why) in waits(s, built, node) {
            path.push((node, why));
            if let Some(start) = visit(s, built, next, state, path) {
                return Some(start);
            }
            path.pop();
        }
        state.insert(node, false);
        None
    }
    let name = |(i, p): PhaseNode| format!("{}:{}", s.workloads[i].name, built[i].phases()[p]);
    let mut state = HashMap::new();
    for i in 0..built.len() {
        let mut path = Vec::new();
        let last = (i, built[i].phases().len() - 1);
        let Some(start) = visit(s, built, last, &mut state, &mut path) else {
            continue;
        };
        let cycle = &path[start..];
        let words: Vec<String> = (cycle.iter().enumerate())
            .map(|(k, &(n, why))| {
                let next = cycle.get(k + 1).map_or(cycle[0].0, |c| c.0);
                format!("{} {why} {}", name(n), name(next))
            })
            .collect();
        let ((w, _), why) = cycle[0];
        let field = match why {
            "starts after" => "after",
            _ => s.workloads[w].options().map_or("", |o| kind(&o)),
        };
        return Some((w, field, words.join(", ")));
    }
    None
}
