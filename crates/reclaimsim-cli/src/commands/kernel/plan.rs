//! A scenario as the guest runs it: the guest plan. Every field of the scenario either
//! maps to something the guest sets up (QEMU's `-m` and `-smp`, swap on zram or brd,
//! files on ext4 on brd, memcgs and their limits, lru_gen and sysctls, workloads run by
//! the guest's programs in `crates/reclaimsim-cli/guest/`), is noted (the guest does it
//! its own way), or is an error naming the field (`PlanError`, located by `locate`).

use super::locate::Step;
use reclaimsim::kernel::config::{KernelConfig, PolicyKind, SwapDevice};
use reclaimsim::scenario::config::{Scenario, WorkloadConfig};
use reclaimsim::sim::cost::CostTable;
use reclaimsim::workload::anon::AnonOptions;
use reclaimsim::workload::fio::{FioOptions, IoEngine};
use reclaimsim::workload::WorkloadOptions;

const MIB: u64 = 1 << 20;

/// The most vCPUs `-smp` gets: TCG runs each vCPU on a host thread, and the machine this
/// runs on is shared (two cores here).
pub(crate) const MAX_CPUS: u32 = 2;

/// Guest memory beyond the scenario's machine memory and the ramdisks: the kernel's
/// image, page tables of the direct map, slab, the unpacked initramfs and the guest's
/// own processes. Measured: Debian's 6.1.0-48 with a 512 MiB guest has MemTotal 455 MiB
/// and about 30 MiB used after setup (see docs/guide/kernel.md).
pub(crate) const GUEST_OVERHEAD_MIB: u64 = 96;

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
/// written from `memcg`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Files {
    pub(crate) name: String,
    pub(crate) memcg: String,
    pub(crate) count: u64,
    pub(crate) bytes: u64,
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
    /// Stop every workload after this long (0: no limit).
    pub(crate) duration_s: f64,
    /// What maps with a difference the user should know of.
    pub(crate) notes: Vec<String>,
}

fn key(k: &str) -> Step {
    Step::Key(k.to_string())
}

fn at(keys: &str) -> Vec<Step> {
    keys.split('.').map(key).collect()
}

/// `workload[i].rest`.
fn wl(i: usize, rest: &str) -> Vec<Step> {
    let mut p = vec![key("workload"), Step::Index(i)];
    p.extend(rest.split('.').filter(|k| !k.is_empty()).map(key));
    p
}

fn fail<T>(field: Vec<Step>, message: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError {
        field,
        message: message.into(),
    })
}

impl Plan {
    /// QEMU's `-m`, in MiB: the machine's memory, the ramdisks (brd keeps every written
    /// sector in RAM), and the guest kernel's own.
    pub(crate) fn guest_mib(&self) -> u64 {
        let brd = match self.swap {
            Some((Swap::Brd, b)) => b,
            _ => 0,
        };
        (self.memory + brd + self.fs_bytes).div_ceil(MIB) + GUEST_OVERHEAD_MIB
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

/// The guest plan of `s` (a loaded scenario, after variants and `--set`).
pub(crate) fn plan(s: &Scenario) -> Result<Plan, PlanError> {
    let mut notes = Vec::new();
    let cpus = machine(s, &mut notes)?;
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
        notes.push("sample_interval: the guest takes counters when each workload finishes and at the end, not at intervals".into());
    }
    let (memcgs, memcg_files) = memcgs(s)?;
    let mut files = Vec::new();
    let mut workloads = Vec::new();
    for (i, w) in s.workloads.iter().enumerate() {
        workloads.push(workload(s, i, w, &mut files)?);
    }
    let fs_bytes = fs_size(&files);
    Ok(Plan {
        memory: s.machine.memory.0,
        cpus,
        swap: (s.machine.swap.as_ref()).map(|sw| {
            let dev = match sw.device {
                SwapDevice::Zram => Swap::Zram,
                SwapDevice::Ramdisk => Swap::Brd,
            };
            (dev, sw.size.0)
        }),
        fs_bytes,
        lru_gen,
        min_ttl_ms: s.kernel.min_ttl_ms,
        sysctls,
        memcgs,
        memcg_files,
        files,
        workloads,
        duration_s: s.duration.map_or(0.0, |d| d.secs_f64()),
        notes,
    })
}

/// The ext4 file system for `files`: their bytes, an eighth more for metadata, and 16 MiB
/// for the journal; 0 without files.
fn fs_size(files: &[Files]) -> u64 {
    let data: u64 = files.iter().map(|f| f.count * f.bytes).sum();
    if data == 0 {
        return 0;
    }
    (data + data / 8 + 16 * MIB).next_multiple_of(MIB)
}

/// `[machine]`: memory and swap map as they are; CPUs become `-smp` (at most
/// `MAX_CPUS`, noted); what QEMU here cannot give is an error.
fn machine(s: &Scenario, notes: &mut Vec<String>) -> Result<u32, PlanError> {
    let m = &s.machine;
    if m.nodes != 1 {
        return fail(at("machine.nodes"), "the guest has one NUMA node");
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
    }
    let cpus = m.cpus.min(MAX_CPUS);
    if cpus < m.cpus {
        notes.push(format!(
            "machine.cpus = {}: the guest gets -smp {cpus} (TCG on a shared host; at most {MAX_CPUS})",
            m.cpus
        ));
    }
    Ok(cpus)
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
    ];
    model_only_kernel(&model_only)?;
    let lru_gen = match (policy, lru_gen_walks) {
        (PolicyKind::Classic, _) => "0",
        (PolicyKind::Mglru, true) => "0x0007",
        (PolicyKind::Mglru, false) => "0x0005",
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
        ];
        for (file, v) in limits {
            if let Some(b) = v {
                files.push((m.path.clone(), file.to_string(), b.0.to_string()));
            }
        }
    }
    Ok((paths, files))
}

fn safe_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')
}

/// One `[[workload]]`: where and when it runs, and its program.
fn workload(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
    files: &mut Vec<Files>,
) -> Result<GuestWorkload, PlanError> {
    if w.name.is_empty() || !w.name.chars().all(|c| safe_char(c) && c != '/') {
        return fail(
            wl(i, "name"),
            "the guest takes workload names of letters, digits, '-', '_' and '.'",
        );
    }
    placement(i, w)?;
    let options = w.options().or_else(|e| fail(wl(i, ""), e))?;
    let mut command = match &options {
        WorkloadOptions::Anon(o) => anon(i, w, o, s.seed)?,
        WorkloadOptions::Fio(o) => {
            let (cmd, f) = fio(i, w, o, s.seed)?;
            files.push(f);
            cmd
        }
        WorkloadOptions::Memcached(_) => return no_program(i, "memcached"),
        WorkloadOptions::Dd(_) => return no_program(i, "dd"),
        WorkloadOptions::PageFault3(_) => return no_program(i, "page_fault3"),
        WorkloadOptions::Trace(_) => return no_program(i, "trace"),
    };
    command.extend(["-x".into(), "/tmp/stop.all".into()]);
    if let Some(u) = &w.until {
        command.extend([
            "-x".into(),
            format!("/tmp/fin.{u}"),
            "-x".into(),
            format!("/tmp/exit.{u}"),
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
        after: w.after.clone(),
        command,
    })
}

/// Where and when a workload runs: what the guest does not do yet is an error.
fn placement(i: usize, w: &WorkloadConfig) -> Result<(), PlanError> {
    let placement = [
        ("cpus", w.cpus.is_some()),
        ("client_cpus", w.client_cpus.is_some()),
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
    for (field, v) in [("after", &w.after), ("until", &w.until)] {
        if v.as_deref().is_some_and(|a| a.contains(':')) {
            return fail(
                wl(i, field),
                "the guest waits for whole workloads, not phases",
            );
        }
    }
    Ok(())
}

fn no_program<T>(i: usize, kind: &str) -> Result<T, PlanError> {
    fail(
        wl(i, kind),
        format!("the guest has no program for {kind} workloads yet (it runs anon and fio reads)"),
    )
}

/// The patterns the guest programs draw from: `seq`, `random`, `zipf[:θ]`.
fn guest_pattern(p: &str) -> bool {
    let p = p.trim();
    p == "seq"
        || p == "random"
        || p == "zipf"
        || p.strip_prefix("zipf:")
            .is_some_and(|t| t.parse::<f64>().is_ok())
}

/// An anon workload as `anon`'s arguments.
fn anon(
    i: usize,
    w: &WorkloadConfig,
    o: &AnonOptions,
    seed: u64,
) -> Result<Vec<String>, PlanError> {
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
    if !o.phase.is_empty() {
        return fail(
            wl(i, "anon.phase"),
            "the guest's anon has no later phases yet",
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
    Ok(cmd)
}

/// A fio job of buffered `read`/`randread` as `fileread`'s arguments, and its files.
fn fio(
    i: usize,
    w: &WorkloadConfig,
    o: &FioOptions,
    seed: u64,
) -> Result<(Vec<String>, Files), PlanError> {
    fio_unsupported(i, o)?;
    let file = match (o.filesize, o.size) {
        (Some(f), _) => f.0,
        (None, Some(s)) => s.0,
        (None, None) => return fail(wl(i, "fio.size"), "needs size or filesize"),
    };
    let region = o.size.map_or(file, |s| s.0.min(file));
    let bs = o.bs.0;
    let per_loop = o.io_size.map_or(region, |b| b.0) / bs;
    let ios = per_loop.saturating_mul(o.loops);
    let ios = o.number_ios.map_or(ios, |n| n.min(ios));
    let mut cmd: Vec<String> = vec![
        "/bin/fileread".into(),
        "-n".into(),
        w.name.clone(),
        "-d".into(),
        "/mnt".into(),
        "-j".into(),
        o.numjobs.to_string(),
        "-b".into(),
        bs.to_string(),
        "-R".into(),
        o.rw.clone(),
        "-p".into(),
        o.random_distribution.trim().to_string(),
        "-i".into(),
        ios.to_string(),
        "-e".into(),
        seed.to_string(),
    ];
    if o.norandommap {
        cmd.push("-N".into());
    }
    if o.time_based {
        cmd.push("-B".into());
    }
    if o.ramp_time.0 > 0 {
        cmd.extend(["-Q".into(), o.ramp_time.secs_f64().to_string()]);
    }
    if let Some(r) = o.runtime {
        cmd.extend(["-T".into(), r.secs_f64().to_string()]);
    }
    if o.thinktime.0 > 0 {
        cmd.extend(["-k".into(), (o.thinktime.0 / 1000).to_string()]);
    }
    let files = Files {
        name: w.name.clone(),
        memcg: w.memcg.clone(),
        count: o.numjobs,
        bytes: file.next_multiple_of(4096),
    };
    Ok((cmd, files))
}

/// What of a fio job the guest's `fileread` cannot do.
fn fio_unsupported(i: usize, o: &FioOptions) -> Result<(), PlanError> {
    if o.rw != "read" && o.rw != "randread" {
        return fail(
            wl(i, "fio.rw"),
            "the guest's fio-like reader does read and randread only",
        );
    }
    let checks = [
        ("fio.nrfiles", o.nrfiles != 1, "one file per clone"),
        ("fio.offset", o.offset.0 != 0, "I/O from the file's start"),
        ("fio.rwmixread", o.rwmixread.is_some(), "reads only"),
        ("fio.rwmixwrite", o.rwmixwrite.is_some(), "reads only"),
        (
            "fio.ioengine",
            !matches!(o.ioengine, IoEngine::Psync | IoEngine::Sync),
            "pread (psync) only",
        ),
        ("fio.iodepth", o.iodepth != 1, "one I/O in flight"),
        ("fio.phase", !o.phase.is_empty(), "no later phases yet"),
        (
            "fio.random_distribution",
            !guest_pattern(&o.random_distribution) || o.random_distribution.trim() == "seq",
            "random or zipf[:θ]",
        ),
        (
            "fio.random_generator",
            o.random_generator == "lfsr",
            "tausworthe-like draws (no lfsr)",
        ),
        ("fio.bs", o.bs.0 == 0 || o.bs.0 % 4096 != 0, "whole pages"),
        (
            "fio.numjobs",
            o.numjobs == 0 || o.numjobs > 64,
            "1 to 64 clones",
        ),
    ];
    match checks.iter().find(|c| c.1) {
        Some((field, _, what)) => fail(
            wl(i, field),
            format!("the guest's fio-like reader does {what}"),
        ),
        None => Ok(()),
    }
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
                .map(|f| format!("{}:{}:{}:{}", f.name, f.memcg, f.count, f.bytes))
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
    out
}
