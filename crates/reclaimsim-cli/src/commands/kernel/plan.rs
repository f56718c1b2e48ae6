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
    if !m.node.is_empty() {
        return fail(
            at("machine.node"),
            "the guest's NUMA nodes are an even split: give machine.nodes",
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
        vmpressure,
        min_ttl_ms: _,
        memcg_reclaim,
        memcg_stats_flush,
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
        (
            "memcg_stats_flush",
            *memcg_stats_flush != d.memcg_stats_flush,
        ),
        ("batch_aging", *batch_aging),
        ("batch_aging_counters", batch_aging_counters.is_some()),
        ("batch_aging_bulk_move", batch_aging_bulk_move.is_some()),
        ("batch_aging_prefetch", batch_aging_prefetch.is_some()),
        ("plugin", plugin.is_some()),
        ("vma_ra_enabled", *vma_ra_enabled != d.vma_ra_enabled),
        ("vmpressure", *vmpressure != d.vmpressure),
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
        WorkloadOptions::Tabs(_) => {
            return fail(
                wl(i, "tabs"),
                "the guest has no Chrome: the tab test runs on the model only",
            )
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
        ("mems", w.mems.is_some()),
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
        | WorkloadOptions::PageFault3(_)
        | WorkloadOptions::Tabs(_) => None,
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
mod tests;
