//! `reclaimsim kernel`: the scenario on a real kernel in QEMU. The scenario (after its
//! variant and `--set`) becomes a guest plan (`plan`; a field the guest cannot express
//! is an error located like a scenario error, `locate`), the guest is built and booted
//! (`guest`), and its console's counters become results in `run`'s schema (`parse`).

mod accel;
mod fiojob;
mod guest;
mod locate;
mod parse;
mod plan;
mod programs;

use crate::common::{check_json_path, check_out, input_error, pick_variant, Failure};
use clap::Args;
use reclaimsim::output::report;
use reclaimsim::results::{GuestRun, RunResult, VariantResult};
use reclaimsim::scenario::{self, config::Scenario};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `reclaimsim kernel`'s options.
#[derive(Args)]
pub(crate) struct KernelArgs {
    /// The scenario file (TOML).
    pub(crate) scenario: PathBuf,
    /// Run this variant instead of the base scenario.
    #[arg(long, value_name = "NAME")]
    pub(crate) variant: Option<String>,
    /// Override a field, as `run --set` does.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
    /// Override the scenario's seed (the guest programs' random draws).
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    #[command(flatten)]
    pub(crate) guest: GuestArgs,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Also write the HTML report to this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Print the guest plan and the QEMU command, and boot nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print every vmstat counter, and the guest's progress lines.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Show no progress on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// How a kernel boots: the options of `kernel`, and of `compare` and `validate` for a
/// scenario's kernel variants (`[variants.NAME] backend = "kernel"`).
#[derive(Args, Clone, Default)]
pub(crate) struct GuestArgs {
    /// Boot this kernel image (a bzImage) instead of Debian's 6.1 package.
    #[arg(long, value_name = "PATH", conflicts_with = "kernel_package")]
    pub(crate) kernel: Option<PathBuf>,
    /// With --kernel: the modules (a directory searched for *.ko, such as
    /// lib/modules/VERSION); without it zram, brd and ext4 must be built in.
    #[arg(long, value_name = "DIR", requires = "kernel")]
    pub(crate) modules: Option<PathBuf>,
    /// Boot this Debian kernel package (fetched with apt-get download and unpacked into
    /// the cache, never installed); default the newest linux-image-6.1.0-*-amd64.
    #[arg(long, value_name = "NAME")]
    pub(crate) kernel_package: Option<String>,
    /// Keep the guest's files (plan, initramfs, console log) in this directory (for
    /// `compare` and `validate`, a directory per kernel variant under it).
    #[arg(long, value_name = "DIR")]
    pub(crate) keep: Option<PathBuf>,
    /// Which program runs a fio job in the guest: `auto` (the guest's own fileread when
    /// it can run the job, else the host's fio), `fio` (the host's fio for every job,
    /// copied in with its libraries) or `fileread`.
    #[arg(long, value_enum, value_name = "PROGRAM", default_value = "auto")]
    pub(crate) fio_program: fiojob::FioProgram,
    /// Stop a guest after this many seconds of wall time.
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    pub(crate) timeout: u64,
    /// QEMU's accelerator: `auto` (KVM where a probe boot of the kernel reaches its
    /// root mount within 30 s, kept per host boot; else TCG), `kvm` or `tcg`.
    #[arg(long, value_enum, value_name = "ACCEL", default_value = "auto")]
    pub(crate) accel: accel::Accel,
}

/// What a kernel run shows on stderr: every counter and the guest's progress lines
/// (`verbose`), or nothing (`quiet`).
#[derive(Clone, Copy)]
pub(crate) struct Shown {
    pub(crate) verbose: bool,
    pub(crate) quiet: bool,
}

impl Shown {
    fn say(self, m: &str) {
        if !self.quiet {
            eprintln!("{m}");
        }
    }
}

/// The guest plan of the variant `name` (`base`: the base scenario) of a loaded
/// scenario, or the located error; `sets` are the `--set`s it was loaded with.
pub(crate) fn plan_of(
    loaded: &scenario::LoadedScenario,
    name: &str,
    s: &Scenario,
    sets: &[String],
    fio: fiojob::FioProgram,
) -> Result<plan::Plan, Failure> {
    plan::plan_for(s, fio).map_err(|e| {
        let text = std::fs::read_to_string(&loaded.path).unwrap_or_default();
        let src = locate::Source {
            file: &loaded.path.display().to_string(),
            text: &text,
            variant: (name != "base").then_some(name),
            sets,
            scenario: s,
        };
        Failure::Input(format!(
            "{} (reclaimsim kernel)",
            src.error(&e.field, &e.message)
        ))
    })
}

pub(crate) fn kernel(a: &KernelArgs) -> Result<(), Failure> {
    let loaded =
        scenario::load(&a.scenario, &a.sets, a.seed).map_err(|e| input_error(&e, &a.sets))?;
    check_json_path(a.json.as_deref())?;
    if let Some(html) = &a.html {
        check_out("--html", html)?;
    }
    let (name, s) = pick_variant(&loaded, a.variant.as_deref())?;
    let plan = plan_of(&loaded, name, s, &a.sets, a.guest.fio_program)?;
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    if a.dry_run {
        print!(
            "{}",
            plan::render(&plan, &["(the kernel's modules)".into()])
        );
        println!(
            "# qemu: -accel {} -smp {} -m {}",
            accel::unprobed(a.guest.accel),
            plan.cpus,
            plan.guest_mib()
        );
        return Ok(());
    }
    let shown = Shown {
        verbose: a.verbose,
        quiet: a.quiet,
    };
    let kernel = pick_kernel(&a.guest, shown)?;
    let variant = run_planned(&a.guest, &kernel, &plan, name, a.guest.keep.clone(), shown)?;
    let run = RunResult::of(&loaded.base, s.seed, vec![variant]);
    if let Some(path) = &a.json {
        report::write_json(&run, path)
            .map_err(|e| Failure::Run(format!("--json {}: {e}", path.display())))?;
    }
    if let Some(path) = &a.html {
        report::write_atomic(path, reclaimsim_html::run_report(&run).as_bytes())
            .map_err(|e| Failure::Run(format!("--html {}: {e}", path.display())))?;
    }
    print!("{}", table(&run.variants[0], a.verbose));
    Ok(())
}

/// Runs a planned variant on `kernel` (`pick_kernel`): builds the guest in `keep` (or a
/// temporary directory, removed after a good run), boots it and reads its console into
/// the variant's results, named `name`. `kernel`, `compare` and `validate` all run a
/// kernel variant through here.
pub(crate) fn run_planned(
    g: &GuestArgs,
    kernel: &guest::Kernel,
    plan: &plan::Plan,
    name: &str,
    keep: Option<PathBuf>,
    shown: Shown,
) -> Result<VariantResult, Failure> {
    let dir = work_dir(keep.as_deref())?;
    let outcome = boot_and_read(g, plan, kernel, &dir, name, shown);
    if keep.is_none() && outcome.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    outcome
}

/// `--kernel` with `--modules`, `--kernel-package`, or Debian's newest 6.1.
pub(crate) fn pick_kernel(g: &GuestArgs, shown: Shown) -> Result<guest::Kernel, Failure> {
    let say = |m: &str| shown.say(m);
    match (&g.kernel, &g.kernel_package) {
        (Some(image), _) => {
            if !image.is_file() {
                return Err(Failure::Input(format!(
                    "--kernel {}: no such file",
                    image.display()
                )));
            }
            Ok(guest::Kernel {
                image: image.clone(),
                modules: g.modules.clone(),
                what: image.display().to_string(),
            })
        }
        (None, Some(p)) => guest::package(p, &say).map_err(Failure::Run),
        (None, None) => {
            let p = guest::default_package().map_err(Failure::Run)?;
            guest::package(&p, &say).map_err(Failure::Run)
        }
    }
}

/// The directory of a guest's files: `keep` (made absolute), or a new temporary one.
fn work_dir(keep: Option<&Path>) -> Result<PathBuf, Failure> {
    let dir = match keep {
        Some(d) => d.to_path_buf(),
        None => std::env::temp_dir().join(format!(
            "reclaimsim-kernel-{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        )),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Input(format!("--keep {}: {e}", dir.display())))?;
    // a relative --keep, absolute: the guest's files are written from other directories
    std::path::absolute(&dir).map_err(|e| Failure::Input(format!("--keep {}: {e}", dir.display())))
}

/// Guests built by this process, so that each gets its own temporary directory.
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A scenario's kernel variant with its guest plan, made before anything runs.
pub(crate) struct Planned {
    pub(crate) name: String,
    plan: plan::Plan,
    /// Where `--keep` keeps its guest's files, under the `--keep` directory.
    keep_as: String,
}

/// The guest plans of the kernel variants among `names` (in that order), each refused
/// with a located error when the guest cannot express it; `keep_as` names each one's
/// directory under `--keep`.
pub(crate) fn plan_variants(
    loaded: &scenario::LoadedScenario,
    names: &[&str],
    sets: &[String],
    g: &GuestArgs,
    keep_as: impl Fn(&str) -> String,
) -> Result<Vec<Planned>, Failure> {
    let mut out = Vec::new();
    for name in names.iter().filter(|n| loaded.is_kernel(n)) {
        let (_, s) = pick_variant(loaded, Some(name))?;
        let plan = plan_of(loaded, name, s, sets, g.fio_program)?;
        for n in &plan.notes {
            eprintln!("note: variant {name}: {n}");
        }
        out.push(Planned {
            name: name.to_string(),
            plan,
            keep_as: keep_as(name),
        });
    }
    Ok(out)
}

/// Boots each planned kernel variant in turn, on one kernel (`pick_kernel`, fetched
/// once): their results, in order.
pub(crate) fn run_variants(
    g: &GuestArgs,
    planned: &[Planned],
    shown: Shown,
) -> Result<Vec<VariantResult>, Failure> {
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let kernel = pick_kernel(g, shown)?;
    let mut out = Vec::new();
    for p in planned {
        shown.say(&format!("variant {}: on a real kernel", p.name));
        let keep = g.keep.as_ref().map(|d| d.join(&p.keep_as));
        out.push(run_planned(g, &kernel, &p.plan, &p.name, keep, shown)?);
    }
    Ok(out)
}

/// The modules the plan needs.
fn wanted_modules(p: &plan::Plan) -> Vec<&'static str> {
    let mut m = Vec::new();
    if p.fs_bytes > 0 {
        m.push("ext4");
    }
    if p.brd().0 > 0 {
        m.push("brd");
    }
    if matches!(p.swap, Some((plan::Swap::Zram, _))) {
        m.push("zram");
    }
    m
}

/// The guest kernel's command line for `plan`.
fn command_line(plan: &plan::Plan) -> String {
    let (brd_nr, brd_mib) = plan.brd();
    // no_timer_check: under TCG on a loaded host the IO-APIC timer check can fail and
    // panic the boot ("IO-APIC + timer doesn't work!"); QEMU's timer works.
    // rootfstype=ramfs: the initramfs's files (the programs, a host program's
    // libraries) stay in RAM as unevictable pages; on the default tmpfs reclaim would
    // swap them out, and they would stand as memory the scenario does not have.
    format!(
        "console=ttyS0 panic=-1 loglevel=2 no_timer_check transparent_hugepage=never rootfstype=ramfs brd.rd_nr={brd_nr} brd.rd_size={}",
        brd_mib * 1024
    )
}

/// Builds the guest, boots it and reads its console into a variant's results.
fn boot_and_read(
    g: &GuestArgs,
    plan: &plan::Plan,
    kernel: &guest::Kernel,
    dir: &Path,
    name: &str,
    shown: Shown,
) -> Result<VariantResult, Failure> {
    let accel = accel::chosen(g.accel, kernel);
    let modules = match &kernel.modules {
        Some(m) => guest::modules(m, &wanted_modules(plan)).map_err(Failure::Run)?,
        None => Vec::new(),
    };
    let names: Vec<String> = modules.iter().map(|(n, _)| n.clone()).collect();
    let text = plan::render(plan, &names);
    let programs = guest::programs().map_err(Failure::Run)?;
    let initramfs =
        guest::initramfs(dir, &modules, &programs, &text, plan).map_err(Failure::Run)?;
    let append = command_line(plan);
    let boot = guest::Boot {
        kernel,
        initramfs: &initramfs,
        cpus: plan.cpus,
        memory_mib: plan.guest_mib(),
        nodes: plan.node_mib(),
        accel,
        append,
        timeout: Duration::from_secs(g.timeout),
    };
    shown.say(&format!(
        "booting {} under QEMU ({accel}, -smp {}, -m {} MiB); console log {}",
        kernel.what,
        plan.cpus,
        plan.guest_mib(),
        dir.join("console.log").display()
    ));
    let (verbose, quiet) = (shown.verbose && !shown.quiet, shown.quiet);
    let progress = |line: &str| {
        let tag = line.split(' ').next().unwrap_or("");
        let shown = matches!(
            tag,
            "uname" | "begin" | "start" | "snap" | "exit" | "error" | "done" | "lru_gen"
        );
        if shown && (verbose || matches!(tag, "error" | "start" | "done")) && !quiet {
            eprintln!("guest: {line}");
        }
    };
    let log = dir.join("console.log");
    let (console, wall) = guest::boot(&boot, &log, &progress).map_err(Failure::Run)?;
    let c = parse::parse(&console);
    parse::check(&c).map_err(|e| Failure::Run(format!("{e}; console log: {}", log.display())))?;
    for e in &c.errors {
        eprintln!("guest error: {e}");
    }
    let info = GuestRun {
        kernel: c.uname.clone().unwrap_or_default(),
        accelerator: accel.to_string(),
        cpus: plan.cpus,
        memory_mib: plan.guest_mib(),
        ..Default::default()
    };
    let mut v = parse::results(&c, name, info);
    v.wall_s = wall;
    Ok(v)
}

/// The table: the guest, the workloads' counts and latencies as the programs measured
/// them (guest time), then `run`'s tables of counters.
pub(crate) fn table(v: &VariantResult, verbose: bool) -> String {
    let g = v.guest.clone().unwrap_or_default();
    let mut out = format!(
        "{}: kernel {} under QEMU ({}, -smp {}, -m {} MiB), {:.1} s guest time, {:.1} s wall\n",
        v.name, g.kernel, g.accelerator, g.cpus, g.memory_mib, v.virtual_time_s, v.wall_s
    );
    if g.accelerator == "tcg" {
        out.push_str(
            "note: under TCG the guest runs many times slower than the machine the scenario \
             describes: compare counts, not rates or times\n",
        );
    }
    out.push_str(&format!(
        "guest memory after setup: MemTotal {} MiB, MemFree {} MiB (after locking {} MiB \
         the scenario's machine does not have)\n",
        g.mem_total >> 20,
        g.mem_free_after_setup >> 20,
        g.ballast >> 20
    ));
    out.push_str(&format!(
        "\n{:<24} {:>12} {:>10} {:>10} {:>10} {:>10}\n",
        "workload", "ops", "guest s", "p50", "p99", "max"
    ));
    for (name, w) in &v.workloads {
        let us = |ns: u64| format!("{:.1}us", ns as f64 / 1e3);
        out.push_str(&format!(
            "{:<24} {:>12} {:>10.2} {:>10} {:>10} {:>10}\n",
            name,
            w.ops,
            w.measured_s,
            us(w.latency_ns.p50),
            us(w.latency_ns.p99),
            us(w.latency_ns.max)
        ));
    }
    for k in &v.oom_kills {
        out.push_str(&format!("OOM kill: {} ({})\n", k.victim, k.scope));
    }
    let rest = VariantResult {
        workloads: Default::default(),
        oom_kills: Vec::new(),
        ..v.clone()
    };
    let t = report::table(&rest, verbose);
    out.push_str(t.split_once('\n').map_or("", |(_, r)| r));
    out
}

#[cfg(test)]
mod tests {
    /// `--keep keep` gives the guest's files an absolute directory.
    #[test]
    fn a_relative_keep_becomes_absolute() {
        let abs = std::env::temp_dir().join(format!("reclaimsim-keep-rel-{}", std::process::id()));
        let rel = super::guest::relative_from_here(&abs);
        let dir = super::work_dir(Some(&rel)).ok().unwrap();
        assert!(dir.is_absolute() && dir.is_dir(), "{}", dir.display());
        assert_eq!(dir.canonicalize().unwrap(), abs.canonicalize().unwrap());
        let _ = std::fs::remove_dir_all(&abs);
    }
}
