//! A scenario as the guest runs it: the guest plan. Every field of the scenario either
//! maps to something the guest sets up (QEMU's `-m` and `-smp`, swap on zram or brd,
//! files on ext4 on brd, memcgs and their limits, lru_gen and sysctls, workloads run by
//! the guest's programs in `crates/reclaimsim-cli/guest/`), is noted (the guest does it
//! its own way), or is an error naming the field (`PlanError`, located by `locate`).

use super::fiojob::{self, FioProgram};
use super::locate::Step;
use super::programs;
use reclaimsim::kernel::config::{KernelConfig, PolicyKind, SwapDevice};
use reclaimsim::scenario::config::{Scenario, WorkloadConfig};
use reclaimsim::sim::cost::CostTable;
use reclaimsim::workload::anon::{AnonOptions, AnonPhase};
use reclaimsim::workload::WorkloadOptions;

pub(crate) const MIB: u64 = 1 << 20;

/// The most vCPUs `-smp` gets: TCG runs each vCPU on a host thread, and the machine this
/// runs on is shared (two cores here).
pub(crate) const MAX_CPUS: u32 = 2;

/// Guest memory beyond the scenario's machine memory and the ramdisks: the kernel's
/// image, page tables of the direct map, slab, the unpacked initramfs and the guest's
/// own processes. Measured: Debian's 6.1.0-48 with a 512 MiB guest has MemTotal 455 MiB
/// and about 30 MiB used after setup (see docs/guide/kernel.md).
pub(crate) const GUEST_OVERHEAD_MIB: u64 = 96;

/// A program of the host's the guest runs: its path and its bytes with the shared
/// libraries `ldd` lists (memcached 1.6.18 with its libraries 9.0 MiB, fio 3.33 with its
/// 63 libraries 80 MiB; Debian 12, 2026-11-27).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostProgram {
    pub(crate) path: std::path::PathBuf,
    pub(crate) bytes: u64,
}

/// A host program copied into the initramfs with its libraries, at `guest`; the copy
/// stays in the guest's RAM, so `-m` grows by its `bytes`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostCopy {
    pub(crate) host: std::path::PathBuf,
    pub(crate) guest: String,
    pub(crate) bytes: u64,
}

/// A field the guest cannot express, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlanError {
    pub(crate) field: Vec<Step>,
    pub(crate) message: String,
}

/// The swap device the guest sets up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Swap {
    Zram,
    Brd,
}

/// Files laid out before the run: `count` files of `bytes` each, `/mnt/NAME.<i>`,
/// written from `memcg`, or holes (`sparse`: made with `truncate`, no block written).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Files {
    pub(crate) name: String,
    pub(crate) memcg: String,
    pub(crate) count: u64,
    pub(crate) bytes: u64,
    pub(crate) sparse: bool,
    /// The file system needs room for the bytes: written at layout, or written by the
    /// workload (page_fault3's holes, dirtied through its mappings).
    pub(crate) blocks: bool,
}

/// One workload as the guest starts it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GuestWorkload {
    pub(crate) name: String,
    pub(crate) memcg: String,
    pub(crate) start_s: f64,
    /// Start when this workload has finished its work.
    pub(crate) after: Option<String>,
    /// The program and its arguments.
    pub(crate) command: Vec<String>,
}

/// What the guest does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    /// The scenario's machine memory; QEMU's `-m` is this plus the ramdisks and
    /// `GUEST_OVERHEAD_MIB` (`guest_mib`).
    pub(crate) memory: u64,
    pub(crate) cpus: u32,
    /// NUMA nodes: the machine's memory and CPUs split evenly over them, as the model
    /// splits them.
    pub(crate) nodes: u32,
    pub(crate) swap: Option<(Swap, u64)>,
    /// Bytes of the ext4 file system on brd (0: none).
    pub(crate) fs_bytes: u64,
    /// `/sys/kernel/mm/lru_gen/enabled` (`0` classic, `0x0007` or `0x0005` MGLRU) and
    /// `min_ttl_ms`.
    pub(crate) lru_gen: String,
    pub(crate) min_ttl_ms: u64,
    /// sysctl name (dotted) and value.
    pub(crate) sysctls: Vec<(String, String)>,
    /// Memcg paths, parents first.
    pub(crate) memcgs: Vec<String>,
    /// (memcg path, file, value).
    pub(crate) memcg_files: Vec<(String, String, String)>,
    pub(crate) files: Vec<Files>,
    pub(crate) workloads: Vec<GuestWorkload>,
    /// Files the initramfs carries besides the programs (a trace's replay), by path.
    pub(crate) extra: Vec<(String, Vec<u8>)>,
    /// Host programs copied into the guest with the libraries `ldd` lists (the host's
    /// memcached and fio); each adds its bytes to `-m`.
    pub(crate) host_copies: Vec<HostCopy>,
    /// Stop every workload after this long (0: no limit).
    pub(crate) duration_s: f64,
    /// Take a `sample` snapshot this often, in guest seconds (0: never).
    pub(crate) sample_s: f64,
    /// What maps with a difference the user should know of.
    pub(crate) notes: Vec<String>,
}

pub(super) fn key(k: &str) -> Step {
    Step::Key(k.to_string())
}

fn at(keys: &str) -> Vec<Step> {
    keys.split('.').map(key).collect()
}

/// `workload[i].rest`.
pub(super) fn wl(i: usize, rest: &str) -> Vec<Step> {
    let mut p = vec![key("workload"), Step::Index(i)];
    p.extend(rest.split('.').filter(|k| !k.is_empty()).map(key));
    p
}

pub(super) fn fail<T>(field: Vec<Step>, message: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError {
        field,
        message: message.into(),
    })
}

impl Plan {
    /// QEMU's `-m`, in MiB: the machine's memory, the ramdisks (brd keeps every written
    /// sector in RAM), what the initramfs carries besides the programs (it stays in RAM),
    /// and the guest kernel's own; with NUMA nodes, each node gets its share of the
    /// machine's memory and all of the rest (`node_mib`).
    pub(crate) fn guest_mib(&self) -> u64 {
        self.node_mib().iter().sum()
    }

    /// `-m` for one node.
    fn one_node_mib(&self) -> u64 {
        let brd = match self.swap {
            Some((Swap::Brd, b)) => b,
            _ => 0,
        };
        let extra: u64 = self.extra.iter().map(|(_, b)| b.len() as u64).sum::<u64>()
            + self.host_copies.iter().map(|c| c.bytes).sum::<u64>();
        (self.memory + brd + self.fs_bytes + extra).div_ceil(MIB) + GUEST_OVERHEAD_MIB
    }

    /// Each NUMA node's MiB for QEMU's `-numa`: its share of the scenario's memory, and
    /// on every node all of the rest of one node's `-m` (ramdisks, host programs, the
    /// guest's own), since the guest kernel may place any of it on any node (a second
    /// node of 64 MiB had 12 to 30 MiB of the initramfs and slab after setup, Debian's
    /// 6.1.0-56, 2026-11-28); the ballast then locks what each has beyond its share.
    pub(crate) fn node_mib(&self) -> Vec<u64> {
        let n = u64::from(self.nodes.max(1));
        let share = self.memory / n / MIB;
        let rest = self.one_node_mib() - self.memory / MIB;
        vec![share + rest; n as usize]
    }

    /// The brd ramdisks: how many, and their one size in MiB (swap on ram0 when on brd,
    /// the file system on the next).
    pub(crate) fn brd(&self) -> (u32, u64) {
        let swap = match self.swap {
            Some((Swap::Brd, b)) => Some(b),
            _ => None,
        };
        let fs = (self.fs_bytes > 0).then_some(self.fs_bytes);
        let sizes: Vec<u64> = [swap, fs].into_iter().flatten().collect();
        let mib = sizes.iter().max().map_or(0, |b| b.div_ceil(MIB));
        (sizes.len() as u32, mib)
    }
}

/// The guest plan of `s` (a loaded scenario, after variants and `--set`), with the
/// host's programs (memcached, fio) found on its PATH, fio jobs run as `--fio-program
/// auto` does.
#[cfg(test)]
pub(crate) fn plan(s: &Scenario) -> Result<Plan, PlanError> {
    plan_for(s, FioProgram::Auto)
}

/// The guest plan of `s` with fio jobs run by `fio`'s choice of program.
pub(crate) fn plan_for(s: &Scenario, fio: FioProgram) -> Result<Plan, PlanError> {
    plan_full(s, &super::guest::host_program, fio)
}

/// Host program lookup by name.
type HostLookup<'a> = &'a dyn Fn(&str) -> Option<HostProgram>;

/// The guest plan of `s`, with the host's programs as `host` finds them.
#[cfg(test)]
pub(crate) fn plan_with(s: &Scenario, host: HostLookup) -> Result<Plan, PlanError> {
    plan_full(s, host, FioProgram::Auto)
}

/// The guest plan of `s`, with the host's programs as `host` finds them and fio jobs run
/// as `fio` says.
pub(crate) fn plan_full(
    s: &Scenario,
    host: HostLookup,
    fio: FioProgram,
) -> Result<Plan, PlanError> {
    let mut notes = Vec::new();
    let (cpus, nodes) = machine(s, &mut notes)?;
    check_costs(s)?;
    let (lru_gen, sysctls) = kernel(&s.kernel, s)?;
    if !s.events.is_empty() {
        return fail(
            vec![key("event"), Step::Index(0)],
            "the guest runs no [[event]] writes yet",
        );
    }
    if !s.agents.is_empty() {
        return fail(
            vec![key("agent"), Step::Index(0)],
            "the guest runs no [[agent]] yet",
        );
    }
    if s.sample_interval.is_some() {
        notes.push("sample_interval: the guest samples its counters at that interval of guest time, which under TCG runs many times slower than the model's virtual time".into());
    }
    let (memcgs, memcg_files) = memcgs(s)?;
    let mut files = Vec::new();
    let mut extra = Vec::new();
    let mut host_copies = Vec::new();
    let mut workloads = Vec::new();
    for (i, w) in s.workloads.iter().enumerate() {
        let out = (&mut files, &mut extra, &mut host_copies);
        workloads.push(workload(s, i, w, out, (host, fio))?);
    }
    let fs_bytes = fs_size(&files);
    let mut seen = std::collections::BTreeSet::new();
    host_copies.retain(|c| seen.insert(c.guest.clone()));
    Ok(Plan {
        memory: s.machine.memory.0,
        cpus,
        nodes,
        swap: swap_device(s)?,
        fs_bytes,
        lru_gen,
        min_ttl_ms: s.kernel.min_ttl_ms,
        sysctls,
        memcgs,
        memcg_files,
        files,
        workloads,
        extra,
        host_copies,
        duration_s: s.duration.map_or(0.0, |d| d.secs_f64()),
        sample_s: s.sample_interval.map_or(0.0, |d| d.secs_f64()),
        notes,
    })
}

/// The ext4 file system for `files`: the bytes of those that need blocks, an eighth more
/// for metadata, and 16 MiB for the journal; 0 without files.
fn fs_size(files: &[Files]) -> u64 {
    if files.is_empty() {
        return 0;
    }
    let data: u64 = (files.iter().filter(|f| f.blocks))
        .map(|f| f.count * f.bytes)
        .sum();
    (data + data / 8 + 16 * MIB).next_multiple_of(MIB)
}

/// `[machine]`: memory and swap map as they are; CPUs become `-smp` (at most
/// `MAX_CPUS`, noted), nodes QEMU's `-numa` nodes (each needs a vCPU); what QEMU here
/// cannot give is an error.
fn machine(s: &Scenario, notes: &mut Vec<String>) -> Result<(u32, u32), PlanError> {
    let m = &s.machine;
    if m.nodes > MAX_CPUS {
        return fail(
            at("machine.nodes"),
            format!("the guest has at most {MAX_CPUS} NUMA nodes (one vCPU each)"),
        );
    }
    if m.has_topology_keys() {
        return fail(
            at("machine.cores_per_socket"),
            "the guest's CPUs are a flat -smp count: give machine.cpus",
        );
    }
    if m.profile.is_some() {
        return fail(
            at("machine.profile"),
            "a cost profile is the model's; the guest's costs are its own",
        );
    }
    if m.start_jitter.is_some() {
        return fail(
            at("machine.start_jitter"),
            "the model's start offsets; the guest's threads start when they start",
        );
    }
    if let Some(sw) = &m.swap {
        if sw.zswap.is_some_and(|z| z.enabled) {
            return fail(at("machine.swap.zswap"), "the guest sets up no zswap yet");
        }
        if sw.mem_limit.is_some_and(|b| b.0 > 0) {
            return fail(
                at("machine.swap.mem_limit"),
                "the guest sets up no zram mem_limit yet",
            );
        }
    }
    let cpus = m.cpus.min(MAX_CPUS);
    if cpus < m.cpus {
        notes.push(format!(
            "machine.cpus = {}: the guest gets -smp {cpus} (TCG on a shared host; at most {MAX_CPUS})",
            m.cpus
        ));
    }
    Ok((cpus, m.nodes.max(1)))
}

/// `[costs]`: the model's virtual-time costs have no meaning in the guest; any value
/// other than the default is an error naming it.
fn check_costs(s: &Scenario) -> Result<(), PlanError> {
    let given = serde_json::to_value(&s.costs).unwrap_or_default();
    let default = serde_json::to_value(CostTable::default()).unwrap_or_default();
    let (Some(given), Some(default)) = (given.as_object(), default.as_object()) else {
        return Ok(());
    };
    match given.iter().find(|(k, v)| default.get(*k) != Some(v)) {
        Some((k, _)) => fail(
            vec![key("costs"), key(k)],
            "a cost of the model; the guest's costs are the host's under QEMU",
        ),
        None => Ok(()),
    }
}

/// `[kernel]`: the policy and its knobs to lru_gen, the sysctls the model has; the
/// model's own switches and code versions are errors unless at their defaults.
fn kernel(k: &KernelConfig, s: &Scenario) -> Result<(String, Vec<(String, String)>), PlanError> {
    let d = KernelConfig::default();
    let KernelConfig {
        policy,
        swappiness: _,
        lru_lock,
        min_free_kbytes: _,
        watermark_scale_factor: _,
        pagevec_size,
        kswapd_cpu,
        dirty_background_ratio: _,
        dirty_ratio: _,
        dirty_writeback_interval: _,
        dirty_expire_interval: _,
        flusher_cpu,
        look_around,
        lru_gen_walks,
        page_cache_fix: _,
        min_ttl_ms: _,
        memcg_reclaim,
        batch_aging,
        batch_aging_counters,
        batch_aging_bulk_move,
        batch_aging_prefetch,
        plugin,
        page_cluster: _,
        vma_ra_enabled,
    } = k;
    let model_only = [
        ("lru_lock", *lru_lock != d.lru_lock),
        ("pagevec_size", *pagevec_size != d.pagevec_size),
        ("kswapd_cpu", kswapd_cpu.is_some()),
        ("flusher_cpu", flusher_cpu.is_some()),
        ("look_around", *look_around != d.look_around),
        ("memcg_reclaim", *memcg_reclaim != d.memcg_reclaim),
        ("batch_aging", *batch_aging),
        ("batch_aging_counters", batch_aging_counters.is_some()),
        ("batch_aging_bulk_move", batch_aging_bulk_move.is_some()),
        ("batch_aging_prefetch", batch_aging_prefetch.is_some()),
        ("plugin", plugin.is_some()),
        ("vma_ra_enabled", *vma_ra_enabled != d.vma_ra_enabled),
    ];
    model_only_kernel(&model_only)?;
    let lru_gen =
        match (policy, lru_gen_walks) {
            (PolicyKind::Classic, _) => "0",
            (PolicyKind::Mglru, true) => "0x0007",
            (PolicyKind::Mglru, false) => "0x0005",
            (PolicyKind::Plugin, _) => return fail(
                vec![key("kernel"), key("policy")],
                "a reclaim plugin runs in the model only; the guest's kernel has classic or MGLRU",
            ),
        };
    Ok((lru_gen.to_string(), sysctls(k, s)))
}

/// The sysctls the model has, as the guest sets them; vm.min_free_kbytes as the model
/// computes it from the scenario's memory when not given (the guest's own default would
/// follow its larger `-m`).
fn sysctls(k: &KernelConfig, s: &Scenario) -> Vec<(String, String)> {
    let centisecs = |d: reclaimsim::units::Duration| (d.0 / 10_000_000).to_string();
    let min_free = k.min_free_kbytes.unwrap_or_else(|| {
        reclaimsim::kernel::node::default_min_free_kbytes(s.machine.memory.pages())
    });
    let sysctls = [
        ("vm.swappiness", k.swappiness.to_string()),
        ("vm.min_free_kbytes", min_free.to_string()),
        (
            "vm.watermark_scale_factor",
            k.watermark_scale_factor.to_string(),
        ),
        (
            "vm.dirty_background_ratio",
            k.dirty_background_ratio.to_string(),
        ),
        ("vm.dirty_ratio", k.dirty_ratio.to_string()),
        ("vm.page-cluster", k.page_cluster.to_string()),
        (
            "vm.dirty_writeback_centisecs",
            centisecs(k.dirty_writeback_interval),
        ),
        (
            "vm.dirty_expire_centisecs",
            centisecs(k.dirty_expire_interval),
        ),
    ];
    sysctls
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// `machine.swap`: zram or brd as the model has them; the model's SSD has no device in
/// the guest.
fn swap_device(s: &Scenario) -> Result<Option<(Swap, u64)>, PlanError> {
    let Some(sw) = s.machine.swap.as_ref() else {
        return Ok(None);
    };
    let dev = match sw.device {
        SwapDevice::Zram => Swap::Zram,
        SwapDevice::Ramdisk => Swap::Brd,
        SwapDevice::Ssd => {
            return fail(
                vec![key("machine"), key("swap"), key("device")],
                "the model's SSD; the guest swaps to zram or a brd ramdisk",
            )
        }
    };
    Ok(Some((dev, sw.size.0)))
}

/// The first `kernel.NAME` set away from its default, if any, as an error.
fn model_only_kernel(fields: &[(&str, bool)]) -> Result<(), PlanError> {
    match fields.iter().find(|(_, set)| *set) {
        Some((name, _)) => fail(
            vec![key("kernel"), key(name)],
            "the model's variant of the kernel's code; the guest runs the kernel as built \
             (boot one with the change: --kernel)",
        ),
        None => Ok(()),
    }
}

/// `[[memcg]]`: the tree (parents first, as the scenario checks them) and each limit as
/// the cgroup file it is.
#[allow(clippy::type_complexity)]
fn memcgs(s: &Scenario) -> Result<(Vec<String>, Vec<(String, String, String)>), PlanError> {
    let mut paths = Vec::new();
    let mut files = Vec::new();
    for (i, m) in s.memcgs.iter().enumerate() {
        if m.path == "/" {
            continue;
        }
        if !m.path.chars().all(safe_char) {
            return fail(
                vec![key("memcg"), Step::Index(i), key("path")],
                "the guest takes memcg paths of letters, digits, '-', '_', '.' and '/'",
            );
        }
        paths.push(m.path.clone());
        let limits = [
            ("memory.min", m.min),
            ("memory.low", m.low),
            ("memory.high", m.high),
            ("memory.max", m.max),
            ("memory.swap.max", m.swap_max),
            ("memory.zswap.max", m.zswap_max),
        ];
        for (file, v) in limits {
            if let Some(b) = v {
                files.push((m.path.clone(), file.to_string(), b.0.to_string()));
            }
        }
    }
    Ok((paths, files))
}

pub(super) fn safe_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

/// What planning a workload adds besides its program: files, initramfs files, host
/// programs to copy in.
type Outputs<'a> = (
    &'a mut Vec<Files>,
    &'a mut Vec<(String, Vec<u8>)>,
    &'a mut Vec<HostCopy>,
);

/// One `[[workload]]`: where and when it runs, and its program.
fn workload(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
    out: Outputs,
    host: (HostLookup, FioProgram),
) -> Result<GuestWorkload, PlanError> {
    if w.name.is_empty() || !w.name.chars().all(|c| safe_char(c) && c != '/') {
        return fail(
            wl(i, "name"),
            "the guest takes workload names of letters, digits, '-', '_' and '.'",
        );
    }
    let (after, until) = placement(s, i, w)?;
    let options = w.options().or_else(|e| fail(wl(i, ""), e))?;
    let mut command = program(s, i, w, &options, out, host)?;
    command.extend(["-x".into(), "/tmp/stop.all".into()]);
    if let Some(u) = &until {
        let workload = u.split(':').next().unwrap_or(u);
        command.extend([
            "-x".into(),
            format!("/tmp/fin.{u}"),
            "-x".into(),
            format!("/tmp/exit.{workload}"),
        ]);
    }
    command.extend([
        "-f".into(),
        format!("/tmp/fin.{}", w.name),
        "-g".into(),
        format!("/tmp/go.{}", w.name),
    ]);
    Ok(GuestWorkload {
        name: w.name.clone(),
        memcg: w.memcg.clone(),
        start_s: w.start.secs_f64(),
        after,
        command,
    })
}

/// The program that runs workload `i` in the guest, and what it needs besides.
fn program(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
    options: &WorkloadOptions,
    (files, extra, host_copies): Outputs,
    (host, fio_program): (HostLookup, FioProgram),
) -> Result<Vec<String>, PlanError> {
    let command = match options {
        WorkloadOptions::Anon(o) => anon(s, i, w, o)?,
        WorkloadOptions::Fio(o) => {
            let job = fiojob::fio(i, w, o, s.seed, host("fio"), fio_program)?;
            files.push(job.files);
            extra.extend(job.job_file);
            host_copies.extend(job.copy);
            job.command
        }
        WorkloadOptions::Memcached(o) => {
            let host = host("memcached");
            // memcached's -m: all it could hold, memory and swap, so that it never
            // evicts an item itself, as the model's memcached never does (the seeds
            // gave it more than the node: `-m 184320` on 128 GiB).
            let swap = s.machine.swap.as_ref().map_or(0, |sw| sw.size.0);
            let memory = s.machine.memory.0 + swap;
            let path = host.as_ref().map(|h| h.path.as_path());
            let cmd = programs::memcached(i, w, o, s.seed, memory, path)?;
            host_copies.extend(host.map(|h| HostCopy {
                host: h.path,
                guest: programs::MEMCACHED.to_string(),
                bytes: h.bytes,
            }));
            cmd
        }
        WorkloadOptions::Dd(o) => {
            let (cmd, f) = programs::dd(s, i, w, o)?;
            files.push(f);
            cmd
        }
        WorkloadOptions::PageFault3(o) => {
            let (cmd, f) = programs::page_fault3(s, i, w, o)?;
            files.push(f);
            cmd
        }
        WorkloadOptions::Trace(o) => {
            let (cmd, f, replay) = programs::trace(i, w, o)?;
            files.extend(f);
            extra.extend(replay);
            cmd
        }
    };
    Ok(command)
}

/// Where and when a workload runs: what the guest does not do yet is an error. Gives
/// what its `after` and `until` wait for, as the guest's finish files name it
/// (`finish_name`).
fn placement(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
) -> Result<(Option<String>, Option<String>), PlanError> {
    // A CPU list naming every CPU of the machine places nothing: the guest's programs
    // (memtier's client threads too) run on all its vCPUs.
    let every_cpu = |c: &Option<Vec<u32>>| {
        c.as_ref()
            .is_none_or(|v| (0..s.machine.cpus).all(|k| v.contains(&k)))
    };
    for (field, cpus) in [("cpus", &w.cpus), ("client_cpus", &w.client_cpus)] {
        if !every_cpu(cpus) {
            return fail(
                wl(i, field),
                "the guest runs every workload on all its vCPUs: list every CPU or none",
            );
        }
    }
    let placement = [
        ("node", w.node.is_some()),
        ("pin", w.pin),
        ("page_content", w.page_content.is_some()),
    ];
    if let Some((field, _)) = placement.iter().find(|(_, set)| *set) {
        return fail(
            wl(i, field),
            "the guest does not place or shape workloads this way yet",
        );
    }
    memtier_waits(s, i, w)?;
    let wait = |field: &str, v: &Option<String>| {
        v.as_deref()
            .map(|t| finish_name(s, t, wl(i, field)))
            .transpose()
    };
    Ok((wait("after", &w.after)?, wait("until", &w.until)?))
}

/// A memtier run's `wait-for`: the guest's client waits for `/tmp/fin.TARGET` or the
/// target workload's end (`guest/memtier.c`), which is right where `finish_name` finds
/// the target's program signals the phase; an error at the field otherwise, or for a
/// target the client's `-H` list cannot carry.
fn memtier_waits(s: &Scenario, i: usize, w: &WorkloadConfig) -> Result<(), PlanError> {
    let Ok(WorkloadOptions::Memcached(o)) = w.options() else {
        return Ok(());
    };
    for (k, run) in o.phase.iter().enumerate() {
        let Some(target) = &run.wait_for else {
            continue;
        };
        let mut field = wl(i, "memcached.phase");
        field.extend([Step::Index(k), key("wait-for")]);
        if !target
            .chars()
            .all(|c| c == ':' || (safe_char(c) && c != '/'))
        {
            return fail(
                field,
                "the guest waits for workloads and phases named with letters, digits, \
                 '-', '_' and '.'",
            );
        }
        finish_name(s, target, field)?;
    }
    Ok(())
}

/// What the guest's programs call `target` (a workload, or `workload:phase` as the
/// model names its phases) in the file they create when it has finished:
/// `/tmp/fin.NAME` when the workload has finished its work, `/tmp/fin.NAME:PHASE` when
/// every worker has finished the phase (the model's barrier after it, where the engine
/// triggers `NAME:PHASE`; `phase_done` in guest/common.h). The last phase ends when the
/// workload does, as in the model (`thread_done` triggers both); only anon and the
/// memtier-like client, dd and page_fault3 signal earlier phases. An error at `field`
/// otherwise.
pub(super) fn finish_name(
    s: &Scenario,
    target: &str,
    field: Vec<Step>,
) -> Result<String, PlanError> {
    let Some((name, phase)) = target.split_once(':') else {
        return Ok(target.to_string());
    };
    let Some(w) = s.workloads.iter().find(|w| w.name == name) else {
        return fail(field, format!("no [[workload]] named \"{name}\""));
    };
    let options = w.options().or_else(|e| fail(field.clone(), e))?;
    let phases = (options.build(s.seed))
        .map(|g| g.phases())
        .or_else(|e| fail(field.clone(), e))?;
    if phases.last().is_some_and(|p| p == phase) {
        return Ok(name.to_string());
    }
    let kind = match options {
        WorkloadOptions::Anon(_)
        | WorkloadOptions::Memcached(_)
        | WorkloadOptions::Dd(_)
        | WorkloadOptions::PageFault3(_) => None,
        WorkloadOptions::Fio(_) => Some("fio"),
        WorkloadOptions::Trace(_) => Some("trace"),
    };
    if let Some(kind) = kind {
        return fail(
            field,
            format!("the guest's {kind} signals only its end, not its phase `{phase}`"),
        );
    }
    if !phase.chars().all(|c| safe_char(c) && c != '/') {
        return fail(
            field,
            "the guest waits for phases named with letters, digits, '-', '_' and '.'",
        );
    }
    Ok(target.to_string())
}

/// The patterns the guest programs draw from: `seq`, `random`, `zipf[:θ]`.
pub(super) fn guest_pattern(p: &str) -> bool {
    let p = p.trim();
    p == "seq"
        || p == "random"
        || p == "zipf"
        || p.strip_prefix("zipf:")
            .is_some_and(|t| t.parse::<f64>().is_ok())
}

/// An anon workload as `anon`'s arguments.
fn anon(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
    o: &AnonOptions,
) -> Result<Vec<String>, PlanError> {
    let seed = s.seed;
    if !o.mix.is_empty() {
        return fail(
            wl(i, "anon.mix"),
            "the guest's anon draws from one pattern (no mix yet)",
        );
    }
    if o.rwmixread.is_some() {
        return fail(
            wl(i, "anon.rwmixread"),
            "the guest's anon only loads or only stores",
        );
    }
    if o.ops_per_step != 1 {
        return fail(
            wl(i, "anon.ops_per_step"),
            "the guest's anon counts single touches",
        );
    }
    if !guest_pattern(&o.pattern) {
        return fail(
            wl(i, "anon.pattern"),
            "the guest's anon draws seq, random or zipf[:θ]",
        );
    }
    let mut cmd: Vec<String> = vec![
        "/bin/anon".into(),
        "-n".into(),
        w.name.clone(),
        "-s".into(),
        o.size.0.to_string(),
        "-t".into(),
        o.threads.to_string(),
        "-p".into(),
        o.pattern.trim().to_string(),
        "-w".into(),
        u8::from(o.write).to_string(),
        "-e".into(),
        seed.to_string(),
    ];
    if o.shared {
        cmd.push("-S".into());
    }
    if o.populate {
        cmd.push("-P".into());
    }
    let optional = [
        ("-r", o.passes.map(|p| p.to_string())),
        ("-a", o.accesses.map(|a| a.to_string())),
        ("-T", o.runtime.map(|r| r.secs_f64().to_string())),
    ];
    for (flag, v) in optional {
        if let Some(v) = v {
            cmd.extend([flag.to_string(), v]);
        }
    }
    for (n, phase) in o.phase.iter().enumerate() {
        cmd.extend(["-H".into(), anon_phase(s, i, n, phase)?]);
    }
    Ok(cmd)
}

/// A later anon phase (`[[workload.anon.phase]]`) as `anon -H`'s argument:
/// `NAME,PATTERN,WRITE,PASSES,ACCESSES,SLEEP,WAIT` (0 and empty: not given; WAIT as
/// `finish_name` gives it).
fn anon_phase(s: &Scenario, i: usize, n: usize, ph: &AnonPhase) -> Result<String, PlanError> {
    let field = |f: &str| {
        let mut p = wl(i, "anon.phase");
        p.push(Step::Index(n));
        p.push(key(f));
        p
    };
    let name = ph.name.clone().unwrap_or(format!("phase{}", n + 1));
    if !name.chars().all(|c| safe_char(c) && c != '/') {
        return fail(
            field("name"),
            "the guest takes phase names of letters, digits, '-', '_' and '.'",
        );
    }
    let unsupported = [
        (
            "mix",
            !ph.mix.is_empty(),
            "draws from one pattern (no mix yet)",
        ),
        (
            "rwmixread",
            ph.rwmixread.is_some(),
            "only loads or only stores",
        ),
        (
            "pattern",
            !guest_pattern(&ph.pattern),
            "draws seq, random or zipf[:θ]",
        ),
    ];
    if let Some((f, _, what)) = unsupported.iter().find(|u| u.1) {
        return fail(field(f), format!("the guest's anon {what}"));
    }
    let wait = (ph.wait_for.as_deref())
        .map(|t| finish_name(s, t, field("wait_for")))
        .transpose()?
        .unwrap_or_default();
    Ok(format!(
        "{name},{},{},{},{},{},{wait}",
        ph.pattern.trim(),
        u8::from(ph.write),
        ph.passes.unwrap_or(0),
        ph.accesses.unwrap_or(0),
        ph.sleep_until.map_or(0.0, |d| d.secs_f64()),
    ))
}

/// The plan as `/plan` in the initramfs: shell variables that `guest/init.sh` sources.
/// `modules` are loaded in order (brd apart: init loads it with its sizes).
pub(crate) fn render(p: &Plan, modules: &[String]) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let (brd_nr, brd_mib) = p.brd();
    let (swap, swap_bytes) = match p.swap {
        None => ("none", 0),
        Some((Swap::Zram, b)) => ("zram", b),
        Some((Swap::Brd, b)) => ("brd", b),
    };
    let fs_dev = match (p.fs_bytes, p.swap) {
        (0, _) => String::new(),
        (_, Some((Swap::Brd, _))) => "ram1".into(),
        _ => "ram0".into(),
    };
    let join = |v: Vec<String>| q(&v.join(" "));
    let mut out = String::new();
    let mut var = |k: &str, v: String| out.push_str(&format!("RS_{k}={v}\n"));
    var(
        "MODULES",
        join(modules.iter().filter(|m| *m != "brd").cloned().collect()),
    );
    var("MEMORY", p.memory.to_string());
    var("NODES", p.nodes.to_string());
    var("BRD_NR", brd_nr.to_string());
    var("BRD_MB", brd_mib.to_string());
    var("SWAP", swap.into());
    var("SWAP_BYTES", swap_bytes.to_string());
    var("FS_DEV", q(&fs_dev));
    var(
        "SYSCTLS",
        join(p.sysctls.iter().map(|(k, v)| format!("{k}={v}")).collect()),
    );
    var("LRU_GEN", q(&p.lru_gen));
    var("MIN_TTL_MS", p.min_ttl_ms.to_string());
    var("MEMCGS", join(p.memcgs.clone()));
    var(
        "MEMCG_FILES",
        join(
            p.memcg_files
                .iter()
                .map(|(g, f, v)| format!("{g}:{f}:{v}"))
                .collect(),
        ),
    );
    var(
        "FILES",
        join(
            p.files
                .iter()
                .map(|f| {
                    let sparse = u8::from(f.sparse);
                    format!("{}:{}:{}:{}:{sparse}", f.name, f.memcg, f.count, f.bytes)
                })
                .collect(),
        ),
    );
    var("NWL", p.workloads.len().to_string());
    for (i, w) in p.workloads.iter().enumerate() {
        var(&format!("WL_{i}_NAME"), q(&w.name));
        var(&format!("WL_{i}_MEMCG"), q(&w.memcg));
        var(&format!("WL_{i}_START"), w.start_s.to_string());
        var(
            &format!("WL_{i}_AFTER"),
            q(w.after.as_deref().unwrap_or("")),
        );
        var(&format!("WL_{i}_CMD"), q(&w.command.join(" ")));
    }
    var("DURATION", p.duration_s.to_string());
    var("SAMPLE", p.sample_s.to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::kernel::locate::Source;
    use reclaimsim::scenario::{self, LoadedScenario};

    const DEMO: &str = include_str!("../../../../../scenarios/demo-small.toml");

    fn load(text: &str, sets: &[&str]) -> LoadedScenario {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        scenario::parse(text, "t.toml", &sets, None).unwrap()
    }

    fn variant<'a>(l: &'a LoadedScenario, name: &str) -> &'a Scenario {
        &l.variants.iter().find(|(n, _)| n == name).unwrap().1
    }

    /// The located error of `text` (its variant `v`, or the base) with `sets`.
    fn error(text: &str, sets: &[&str], v: Option<&str>) -> String {
        let loaded = load(text, sets);
        let s = v.map_or(&loaded.base, |v| variant(&loaded, v));
        let e = plan_with(s, &|_| None).expect_err("an error");
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let src = Source {
            file: "t.toml",
            text,
            variant: v,
            sets: &sets,
            scenario: s,
        };
        src.error(&e.field, &e.message)
    }

    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.contains(needle)).unwrap() + 1
    }

    #[test]
    fn demo_small_maps_to_the_guest() {
        let l = load(DEMO, &[]);
        let p = plan(variant(&l, "mglru")).unwrap();
        assert_eq!((p.memory, p.cpus), (384 * MIB, 2));
        assert_eq!(p.swap, Some((Swap::Zram, 256 * MIB)));
        assert_eq!(p.lru_gen, "0x0007");
        assert_eq!(p.memcgs, ["/app"]);
        let max = ("/app".into(), "memory.max".into(), (160 * MIB).to_string());
        assert_eq!(p.memcg_files, [max]);
        let files = Files {
            name: "fio".into(),
            memcg: "/app".into(),
            count: 2,
            bytes: 32 * MIB,
            sparse: false,
            blocks: true,
        };
        assert_eq!(p.files, [files]);
        // 64 MiB of files, an eighth for metadata, 16 MiB of journal
        assert_eq!(p.fs_bytes, 88 * MIB);
        assert_eq!(p.guest_mib(), 384 + 88 + GUEST_OVERHEAD_MIB);
        assert_eq!(p.brd(), (1, 88));
        let anon = p.workloads[0].command.join(" ");
        assert!(
            anon.starts_with("/bin/anon -n anon -s 134217728 -t 2 -p random -w 1 -e 1 -S -P -r 2 "),
            "{anon}"
        );
        // two loops over 8192 blocks
        let fio = p.workloads[1].command.join(" ");
        assert!(fio.contains(" -R randread -p random -i 16384 "), "{fio}");
        assert!(p
            .sysctls
            .contains(&("vm.min_free_kbytes".into(), "2508".into())));
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(plan(variant(&l, "classic")).unwrap().lru_gen, "0");
        let walks = load(DEMO, &["kernel.lru_gen_walks=false"]);
        assert_eq!(plan(&walks.base).unwrap().lru_gen, "0x0005");
    }

    #[test]
    fn the_plan_file_has_what_init_reads() {
        let sampled = load(DEMO, &["sample_interval=\"2500ms\""]);
        let p = plan(&sampled.base).unwrap();
        assert!(render(&p, &[]).contains("RS_SAMPLE=2.5\n"));
        let l = load(DEMO, &["machine.swap.device=\"ramdisk\"", "machine.cpus=8"]);
        let p = plan(&l.base).unwrap();
        assert_eq!(p.cpus, MAX_CPUS);
        assert!(p.notes[0].contains("-smp 2"), "{:?}", p.notes);
        let text = render(&p, &["jbd2".into(), "ext4".into(), "brd".into()]);
        for want in [
            "RS_MODULES='jbd2 ext4'\n",
            "RS_MEMORY=402653184\nRS_NODES=1\nRS_BRD_NR=2\nRS_BRD_MB=256\n",
            "RS_SWAP=brd\n",
            "RS_FS_DEV='ram1'\n",
            "RS_MEMCG_FILES='/app:memory.max:167772160'\n",
            "RS_FILES='fio:/app:2:33554432:0'\n",
            "RS_NWL=2\n",
            "RS_WL_1_NAME='fio'\n",
            "RS_DURATION=0\nRS_SAMPLE=0\n",
        ] {
            assert!(text.contains(want), "{want} not in\n{text}");
        }
        assert_eq!(p.guest_mib(), 384 + 256 + 88 + GUEST_OVERHEAD_MIB);
    }

    #[test]
    fn what_the_guest_cannot_do_is_a_located_error() {
        let with = |extra: &str| format!("{DEMO}\n{extra}\n");
        let costs = with("[costs]\naccess_hit = 100");
        assert_eq!(
            error(&costs, &[], None),
            format!("t.toml:{}: costs.access_hit: a cost of the model; the guest's costs are the host's under QEMU", line_of(&costs, "access_hit"))
        );
        let e = error(DEMO, &["kernel.lru_lock=node"], None);
        assert!(
            e.starts_with("--set kernel.lru_lock=node: kernel.lru_lock: the model's variant"),
            "{e}"
        );
        let v = with("[variants.v11]\nkernel.memcg_reclaim = \"v11\"");
        let e = error(&v, &[], Some("v11"));
        assert!(
            e.starts_with(&format!(
                "t.toml:{}: kernel.memcg_reclaim:",
                line_of(&v, "\"v11\"")
            )),
            "{e}"
        );
    }

    #[test]
    fn workloads_the_guest_cannot_run_are_located_errors() {
        let with = |extra: &str| format!("{DEMO}\n{extra}\n");
        let e = error(DEMO, &["workload.fio.fio.rw=randwrite"], None);
        assert!(
            e.starts_with("--set workload.fio.fio.rw=randwrite: workload[1].fio.rw:"),
            "{e}"
        );
        let zipf = DEMO.replace("pattern = \"random\"", "pattern = \"pareto:0.2\"");
        let e = error(&zipf, &[], None);
        assert!(
            e.starts_with(&format!(
                "t.toml:{}: workload[0].anon.pattern:",
                line_of(&zipf, "pareto")
            )),
            "{e}"
        );
        let ev = with("[[event]]\nat = \"1s\"\nsysctl = \"vm.swappiness\"\nvalue = 10");
        let e = error(&ev, &[], None);
        assert!(
            e.starts_with(&format!("t.toml:{}: event[0]:", line_of(&ev, "[[event]]"))),
            "{e}"
        );
        let e = error(DEMO, &["machine.swap.mem_limit=\"8MiB\""], None);
        assert!(
            e.starts_with("--set machine.swap.mem_limit=\"8MiB\": machine.swap.mem_limit:"),
            "{e}"
        );
        let e = error(DEMO, &["machine.nodes=4", "machine.cpus=4"], None);
        assert!(
            e.starts_with(
                "--set machine.nodes=4: machine.nodes: the guest has at most 2 NUMA nodes"
            ),
            "{e}"
        );
        // two nodes: the memory split evenly, the guest's own on node 0
        let two = plan(&load(DEMO, &["machine.nodes=2"]).base).unwrap();
        assert_eq!(two.nodes, 2);
        let mib = two.node_mib();
        let one = plan(&load(DEMO, &[]).base).unwrap().guest_mib();
        assert_eq!(mib, [one - 192, one - 192]);
        assert_eq!(mib.iter().sum::<u64>(), two.guest_mib());
        assert!(render(&two, &[]).contains("RS_NODES=2\n"));
        let numa = super::super::guest::numa_args(2, &mib).join(" ");
        let want = format!(
            "-object memory-backend-ram,id=ram0,size={}M -numa node,nodeid=0,cpus=0-0,memdev=ram0 \
             -object memory-backend-ram,id=ram1,size={}M -numa node,nodeid=1,cpus=1-1,memdev=ram1",
            mib[0], mib[1]
        );
        assert_eq!(numa, want);
        assert!(super::super::guest::numa_args(2, &[100]).is_empty());
        let pin = DEMO.replace(
            "name = \"anon\"\nmemcg",
            "name = \"anon\"\npin = true\nmemcg",
        );
        let e = error(&pin, &[], None);
        assert!(
            e.starts_with(&format!(
                "t.toml:{}: workload[0].pin:",
                line_of(&pin, "pin = true")
            )),
            "{e}"
        );
    }

    /// More later phases of page_fault3 than the program runs, a dd phase name the guest
    /// cannot carry, dd's readers past the programs' 64, and memcached (whether the host
    /// has it or not) are located errors.
    #[test]
    fn page_fault3_dd_and_memcached_errors_are_located() {
        let with = |extra: &str| format!("{DEMO}\n{extra}\n");
        let pf = with(&format!(
            "[[workload]]\nname = \"pf\"\n[workload.page_fault3]\ntasks = 2\nsize = \"1MiB\"\nruntime = \"1s\"\n{}",
            "[[workload.page_fault3.phase]]\nsleep_until = \"2s\"\n".repeat(16)
        ));
        let e = error(&pf, &[], None);
        assert!(
            e.starts_with(&format!(
                "t.toml:{}: workload[2].page_fault3.phase: the guest's page_fault3 runs at most 15 later phases",
                line_of(&pf, "[[workload.page_fault3.phase]]")
            )),
            "{e}"
        );
        let dd = with("[[workload]]\nname = \"dd\"\n[workload.dd]\nsize = \"1MiB\"\n[[workload.dd.phase]]\nname = \"re read\"");
        let e = error(&dd, &[], None);
        assert!(
            e.starts_with(&format!(
                "t.toml:{}: workload[2].dd.phase[0].name: the guest takes phase names",
                line_of(&dd, "re read")
            )),
            "{e}"
        );
        let dd = with(
            "[[workload]]\nname = \"dd\"\n[workload.dd]\nfiles = 33\nsize = \"1MiB\"\nreaders = 2",
        );
        let e = error(&dd, &[], None);
        assert!(
            e.starts_with(&format!(
                "t.toml:{}: workload[2].dd.readers: the guest's dd runs at most 64 readers",
                line_of(&dd, "readers = 2")
            )),
            "{e}"
        );
        let mc = with("[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n[[workload.memcached.phase]]\nrequests = 10");
        let e = error(&mc, &[], None);
        let want = format!(
            "t.toml:{}: workload[2].memcached: the guest runs memcached only when the host has it: install memcached",
            line_of(&mc, "[workload.memcached]")
        );
        assert!(e.starts_with(&want), "{e}");
        // with the host's memcached: a run the guest's client cannot make
        let host = |_: &str| {
            Some(HostProgram {
                path: "/usr/bin/memcached".into(),
                bytes: 9 * MIB + 1,
            })
        };
        let many = format!("{mc}\nclients = 300");
        let e = plan_with(&load(&many, &[]).base, &host).unwrap_err();
        let mut field = wl(2, "memcached.phase");
        field.extend([Step::Index(0), key("clients")]);
        assert_eq!(e.field, field, "{}", e.message);
        let p = plan_with(&load(&mc, &[]).base, &host).unwrap();
        let cmd = p.workloads[2].command.join(" ");
        // -M: memory and swap (384 + 256 MiB), so memcached never evicts an item
        let want = "/bin/memtier -n mc -m /bin/memcached -s 2 -M 640 -e 1 \
                    -H ,R,R,1,10,32,0,10000000,memtier-,10,0,50,4,1,0,0,1,\
                    1666666.6666666667,5000000.5,1,0,1, -x";
        assert!(cmd.starts_with(want), "{cmd}");
        let copy = HostCopy {
            host: "/usr/bin/memcached".into(),
            guest: "/bin/memcached".into(),
            bytes: 9 * MIB + 1,
        };
        assert_eq!(p.host_copies, [copy]);
        let without = plan_with(&load(DEMO, &[]).base, &host).unwrap();
        assert_eq!(p.guest_mib(), without.guest_mib() + 10);
    }

    /// The guest's memcached keeps its hash chains and segmented LRU (memcached 1.6's
    /// defaults): a scenario or `--set` that turns either of the model's off is refused
    /// at that key, before anything boots.
    #[test]
    fn memcached_without_its_item_links_is_a_located_error() {
        let host = |_: &str| {
            Some(HostProgram {
                path: "/usr/bin/memcached".into(),
                bytes: 9 * MIB,
            })
        };
        let mc = |keys: &str| {
            format!(
                "{DEMO}\n[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n\
                 {keys}[[workload.memcached.phase]]\nrequests = 10\n"
            )
        };
        let located = |text: &str, sets: &[&str]| {
            let l = load(text, sets);
            let e = plan_with(&l.base, &host).expect_err("refused");
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let src = Source {
                file: "t.toml",
                text,
                variant: None,
                sets: &sets,
                scenario: &l.base,
            };
            (e.field.clone(), src.error(&e.field, &e.message))
        };
        let why = "the guest's memcached keeps its hash chains and segmented LRU";
        for (keys, field, needle) in [
            ("lru = \"none\"\n", "lru", "lru = \"none\""),
            ("hash_chains = false\n", "hash_chains", "hash_chains"),
            (
                "lru = \"none\"\nhash_chains = false\n",
                "hash_chains",
                "hash_chains",
            ),
        ] {
            let text = mc(keys);
            let (f, e) = located(&text, &[]);
            assert_eq!(f, wl(2, &format!("memcached.{field}")), "{e}");
            let line = line_of(&text, needle);
            let want = format!("t.toml:{line}: workload[2].memcached.{field}: {why}");
            assert!(e.starts_with(&want), "{e}");
        }
        let set = "workload.mc.memcached.lru=\"none\"";
        let (f, e) = located(&mc(""), &[set]);
        assert_eq!(f, wl(2, "memcached.lru"), "{e}");
        assert!(e.contains(set) && e.contains(why), "{e}");
        // memcached's defaults, given or not, plan
        for keys in ["", "lru = \"segmented\"\nhash_chains = true\n"] {
            assert!(
                plan_with(&load(&mc(keys), &[]).base, &host).is_ok(),
                "{keys}"
            );
        }
    }

    /// `[[workload.anon.phase]]` goes to the guest's anon as `-H` (waiting for a whole
    /// workload, sleeping, its own pattern and counts); what it cannot do is located.
    #[test]
    fn anon_phases_map_to_the_guest_or_are_located_errors() {
        let phases = |extra: &str| {
            DEMO.replace(
                "passes = 2\n",
                &format!("passes = 2\n\n[[workload.anon.phase]]\nwait_for = \"fio\"\n{extra}\n"),
            )
        };
        let two = phases(
            "accesses = 500\n[[workload.anon.phase]]\nname = \"again\"\n\
             pattern = \"zipf:1.2\"\nwrite = false\npasses = 3\nsleep_until = \"2s\"",
        );
        let anon = plan(&load(&two, &[]).base).unwrap().workloads[0]
            .command
            .join(" ");
        assert!(
            anon.ends_with(
                " -H phase1,seq,1,0,500,0,fio -H again,zipf:1.2,0,3,0,2, \
                 -x /tmp/stop.all -f /tmp/fin.anon -g /tmp/go.anon"
            ),
            "{anon}"
        );
        let cases = [
            ("mix = [{ weight = 1 }]", "mix", "mix = "),
            ("rwmixread = 50", "rwmixread", "rwmixread"),
            ("pattern = \"pareto:0.2\"", "pattern", "pareto"),
            ("name = \"a,b\"", "name", "a,b"),
        ];
        for (extra, field, needle) in cases {
            let text = phases(extra);
            let e = error(&text, &[], None);
            let want = format!(
                "t.toml:{}: workload[0].anon.phase[0].{field}:",
                line_of(&text, needle)
            );
            assert!(e.starts_with(&want), "{e}");
        }
    }

    /// `after`, `until` and a phase's `wait_for` naming a phase wait for the file the
    /// guest's program creates when the phase ends (`/tmp/fin.NAME:PHASE`); the last
    /// phase is the workload's end (`/tmp/fin.NAME`), as the model triggers both at once;
    /// a phase of a program that signals only its end is a located error.
    #[test]
    fn waits_for_phases_name_the_files_their_programs_create() {
        let fio = |extra: &str| {
            DEMO.replace(
                "name = \"fio\"\nmemcg",
                &format!("name = \"fio\"\n{extra}\nmemcg"),
            )
        };
        let text = fio("after = \"anon:populate\"\nuntil = \"anon:run\"");
        let p = plan(&load(&text, &[]).base).unwrap();
        assert_eq!(p.workloads[1].after.as_deref(), Some("anon:populate"));
        let cmd = p.workloads[1].command.join(" ");
        assert!(
            cmd.contains(" -x /tmp/stop.all -x /tmp/fin.anon -x /tmp/exit.anon -f "),
            "{cmd}"
        );
        let text = fio("until = \"anon:populate\"");
        let cmd = plan(&load(&text, &[]).base).unwrap().workloads[1]
            .command
            .join(" ");
        assert!(
            cmd.contains(" -x /tmp/fin.anon:populate -x /tmp/exit.anon -f "),
            "{cmd}"
        );
        let waits = |target: &str| {
            let text = DEMO.replace(
                "passes = 2\n",
                &format!("passes = 2\n[[workload.anon.phase]]\nwait_for = \"{target}\"\n"),
            );
            plan(&load(&text, &[]).base).map(|p| p.workloads[0].command.join(" "))
        };
        assert!(waits("fio:run")
            .unwrap()
            .contains(" -H phase1,seq,1,0,0,0,fio "));
        // fio with a later phase: its `run` is not its end, and fileread signals no phase
        let text = DEMO.replace(
            "name = \"anon\"\nmemcg",
            "name = \"anon\"\nafter = \"fio:run\"\nmemcg",
        ) + "[[workload.fio.phase]]\nname = \"again\"\n";
        let e = error(&text, &[], None);
        let want = format!(
            "t.toml:{}: workload[0].after: the guest's fio signals only its end, not its phase `run`",
            line_of(&text, "fio:run")
        );
        assert!(e.starts_with(&want), "{e}");
    }

    /// A workload's `cpus` or `client_cpus` naming every CPU of the machine is no
    /// placement; naming fewer is a located error.
    #[test]
    fn cpu_lists_of_every_cpu_place_nothing() {
        let anon = |cpus: &str| {
            let text = DEMO.replace(
                "name = \"anon\"\nmemcg",
                &format!("name = \"anon\"\ncpus = {cpus}\nmemcg"),
            );
            (plan_with(&load(&text, &[]).base, &|_| None), text)
        };
        let (every, _) = anon("\"0-1\"");
        let (repeated, _) = anon("[1, 0, 1]");
        assert_eq!(every.unwrap(), plan(&load(DEMO, &[]).base).unwrap());
        assert!(repeated.is_ok());
        let (one, text) = anon("[1]");
        let e = one.unwrap_err();
        assert_eq!(e.field, wl(0, "cpus"), "{}", e.message);
        let e = error(&text, &[], None);
        let want = format!(
            "t.toml:{}: workload[0].cpus: the guest runs",
            line_of(&text, "[1]")
        );
        assert!(e.starts_with(&want), "{e}");
    }

    /// The memtier-like client signals each named run; one run is the workload's end.
    #[test]
    fn waits_for_memcached_phases() {
        let host = |_: &str| {
            Some(HostProgram {
                path: "/usr/bin/memcached".into(),
                bytes: 9 * MIB,
            })
        };
        let mc = |after: &str, runs: &[&str]| {
            let runs: String = (runs.iter())
                .map(|r| format!("[[workload.memcached.phase]]\nname = \"{r}\"\nrequests = 10\n"))
                .collect();
            let text = DEMO.replace(
                "name = \"fio\"\nmemcg",
                &format!("name = \"fio\"\nafter = \"{after}\"\nmemcg"),
            );
            let text = format!(
                "{text}\n[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n{runs}"
            );
            plan_with(&load(&text, &[]).base, &host).map(|p| p.workloads[1].after.clone())
        };
        let after = mc("mc:load", &["load", "get"]).unwrap();
        // a memtier run waiting for another's phase: checked as `after` is
        let text = DEMO.replace(
            "passes = 2\n",
            "passes = 2\n[[workload.anon.phase]]\nname = \"again\"\n",
        );
        let waits = |target: &str| {
            let text = format!(
                "{text}\n[[workload]]\nname = \"mc\"\n[workload.memcached]\nthreads = 2\n\
                 [[workload.memcached.phase]]\nrequests = 10\n\
                 [[workload.memcached.phase]]\nrequests = 10\nwait-for = \"{target}\"\n"
            );
            let p = plan_with(&load(&text, &[]).base, &host);
            (p.map(|p| p.workloads[2].command.join(" ")), text)
        };
        let (cmd, _) = waits("anon:run");
        assert!(cmd.unwrap().contains(",1,anon:run -x "));
        let (cmd, _) = waits("fio");
        assert!(cmd.unwrap().contains(",1,fio -x "));
        let (e, text) = waits("fio:run");
        assert!(e.is_ok(), "fio's only phase is its end");
        let fio_phase = text.replace("loops = 2\n", "loops = 2\n[[workload.fio.phase]]\n");
        // (planned in order, fio's own phase would be the first error)
        let l = load(&fio_phase, &[]);
        let e = memtier_waits(&l.base, 2, &l.base.workloads[2]).unwrap_err();
        let mut field = wl(2, "memcached.phase");
        field.extend([Step::Index(1), key("wait-for")]);
        assert_eq!(e.field, field, "{}", e.message);
        assert_eq!(after.as_deref(), Some("mc:load"));
        assert_eq!(
            mc("mc:get", &["load", "get"]).unwrap().as_deref(),
            Some("mc")
        );
        assert_eq!(mc("mc:only", &["only"]).unwrap().as_deref(), Some("mc"));
    }

    /// A scenario with page_fault3, dd and a page trace of two tenants, the trace at
    /// `trace` (its first lines `lines`), in `dir`.
    fn three_programs(dir: &std::path::Path, lines: &str) -> String {
        let trace = dir.join("t.pagetrace");
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(&trace, format!("time,tenant,target,offset,op\n{lines}")).unwrap();
        format!(
            "name = 'p'\nseed = 1\n[machine]\nmemory = '256MiB'\ncpus = 2\n\
             [[memcg]]\npath = '/a'\n[[memcg]]\npath = '/b'\n\
             [[workload]]\nname = 'pf'\nmemcg = '/a'\n[workload.page_fault3]\ntasks = 2\n\
             size = '8MiB'\nruntime = '2s'\nmode = 'thread'\n\
             [[workload]]\nname = 'dd'\nmemcg = '/a'\n[workload.dd]\nfiles = 2\n\
             size = '4MiB'\nreaders = 2\n\
             [[workload]]\nname = 'tr'\nmemcg = '/a'\n[workload.trace]\npath = '{}'\n\
             tenants = {{ a = '/a', b = '/b' }}\n",
            trace.display()
        )
    }

    #[test]
    fn page_fault3_dd_and_trace_map_to_their_programs() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-plan-{}", std::process::id()));
        let text = three_programs(
            &dir,
            "0,a,anon,0,w\n0,a,data,8192,r\n0,b,anon,4096,r\n0,a,data,0,w\n",
        );
        let p = plan(&load(&text, &[]).base).unwrap();
        let cmd = |i: usize| p.workloads[i].command.join(" ");
        assert!(
            cmd(0).starts_with("/bin/pagefault -n pf -d /mnt -t 2 -s 8388608 -M thread -T 2 -x"),
            "{}",
            cmd(0)
        );
        assert!(
            cmd(1).starts_with("/bin/ddread -n dd -d /mnt -F 2 -r 2 -b 4096 -x"),
            "{}",
            cmd(1)
        );
        assert!(
            cmd(2).starts_with("/bin/trace -n tr -d /mnt -R /trace -t 2 -F 1 -c /a -c /b -x"),
            "{}",
            cmd(2)
        );
        let f = |name: &str, count, bytes, sparse, blocks| Files {
            name: name.into(),
            memcg: "/a".into(),
            count,
            bytes,
            sparse,
            blocks,
        };
        // page_fault3's holes are written through its mappings; dd's are only read;
        // the trace's file has the two pages it touches, numbered as the model numbers them
        let want = [
            f("pf", 2, 8 * MIB, true, true),
            f("dd", 2, 4 * MIB, true, false),
            f("tr+0", 1, 8192, false, true),
        ];
        assert_eq!(p.files, want);
        let data = 16 * MIB + 8192;
        assert_eq!(
            p.fs_bytes,
            (data + data / 8 + 16 * MIB).next_multiple_of(MIB)
        );
        let words = |b: &[u8]| -> Vec<u64> {
            b.chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        let (end, store) = (1 << 61, 1 << 60);
        assert_eq!(p.extra[0].0, "/trace/tr.0");
        assert_eq!(
            words(&p.extra[0].1),
            [1, store | end, 1 << 62 | end, 2 << 62 | 1 | end]
        );
        assert_eq!(
            (p.extra[1].0.as_str(), words(&p.extra[1].1)),
            ("/trace/tr.1", vec![1, end])
        );
        assert_eq!(
            p.guest_mib(),
            256 + p.fs_bytes / MIB + 1 + GUEST_OVERHEAD_MIB
        );
        let text = render(&p, &[]);
        assert!(
            text.contains("RS_FILES='pf:/a:2:8388608:1 dd:/a:2:4194304:1 tr+0:/a:1:8192:0'\n"),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `[[workload.dd.phase]]` and `[[workload.page_fault3.phase]]` go to their programs
    /// as `-H NAME,SLEEP,WAIT,RUNTIME`: the model's default names, page_fault3's runtime
    /// for a phase that gives none (dd's: none, 0), and `wait_for` as `finish_name` names
    /// the file: a whole workload, a phase, or a last phase as the workload's end; an
    /// anon phase may wait for a dd phase.
    #[test]
    fn dd_and_page_fault3_phases_map_to_their_programs() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-plan-ph-{}", std::process::id()));
        let text = three_programs(&dir, "0,a,anon,0,w\n")
            .replace(
                "mode = 'thread'\n",
                "mode = 'thread'\n\
                 [[workload.page_fault3.phase]]\nname = 'again'\nsleep_until = '4s'\n\
                 [[workload.page_fault3.phase]]\nruntime = '500ms'\nwait_for = 'dd:run'\n",
            )
            .replace(
                "readers = 2\n",
                "readers = 2\n\
                 [[workload.dd.phase]]\nwait_for = 'pf'\nruntime = '1s'\n\
                 [[workload.dd.phase]]\nname = 'last'\nwait_for = 'pf:again'\n\
                 [[workload.dd.phase]]\nwait_for = 'pf:phase2'\nsleep_until = '2.5s'\n",
            )
            + "[[workload]]\nname = 'an'\n[workload.anon]\nsize = '1MiB'\n\
               [[workload.anon.phase]]\nwait_for = 'dd:last'\n";
        let p = plan(&load(&text, &[]).base).unwrap();
        let cmd = |i: usize| p.workloads[i].command.join(" ");
        assert!(
            cmd(0).starts_with(
                "/bin/pagefault -n pf -d /mnt -t 2 -s 8388608 -M thread -T 2 \
                 -H again,4,,2 -H phase2,0,dd:run,0.5 -x"
            ),
            "{}",
            cmd(0)
        );
        assert!(
            cmd(1).starts_with(
                "/bin/ddread -n dd -d /mnt -F 2 -r 2 -b 4096 \
                 -H phase1,0,pf,1 -H last,0,pf:again,0 -H phase3,2.5,pf,0 -x"
            ),
            "{}",
            cmd(1)
        );
        assert!(
            cmd(3).contains(" -H phase1,seq,1,0,0,0,dd:last "),
            "{}",
            cmd(3)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_trace_the_guest_cannot_replay_is_a_located_error() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-plan-e-{}", std::process::id()));
        let lines: String = (0..65).map(|k| format!("0,a,f{k},0,r\n")).collect();
        let text = three_programs(&dir, &lines);
        let e = error(&text, &[], None);
        let want = format!(
            "t.toml:{}: workload[2].trace.path: the trace touches 65 files; the guest replays at most 64",
            line_of(&text, "t.pagetrace")
        );
        assert!(e.starts_with(&want), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn fio_io_counts_follow_fio() {
        let l = load(DEMO, &["workload.fio.fio.number_ios=100"]);
        let fio = plan(&l.base).unwrap().workloads[1].command.join(" ");
        assert!(fio.contains(" -i 100 "), "{fio}");
        let l = load(
            DEMO,
            &[
                "workload.fio.fio.io_size=\"8MiB\"",
                "workload.fio.fio.loops=3",
            ],
        );
        let fio = plan(&l.base).unwrap().workloads[1].command.join(" ");
        assert!(fio.contains(" -i 6144 "), "{fio}");
        let l = load(
            DEMO,
            &[
                "workload.fio.fio.norandommap=true",
                "workload.fio.fio.time_based=true",
                "workload.fio.fio.runtime=\"2s\"",
            ],
        );
        let fio = plan(&l.base).unwrap().workloads[1].command.join(" ");
        assert!(fio.contains(" -N -B -T 2 "), "{fio}");
    }
}
