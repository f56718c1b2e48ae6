//! `reclaimsim kernel`: the scenario on a real kernel in QEMU. The scenario (after its
//! variant and `--set`) becomes a guest plan (`plan`; a field the guest cannot express
//! is an error located like a scenario error, `locate`), the guest is built and booted
//! (`guest`), and its console's counters become results in `run`'s schema (`parse`).

mod guest;
mod locate;
mod parse;
mod plan;

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
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Also write the HTML report to this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Keep the guest's files (plan, initramfs, console log) in this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) keep: Option<PathBuf>,
    /// Stop the guest after this many seconds of wall time.
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    pub(crate) timeout: u64,
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

/// The guest plan of a loaded scenario's variant, or the located error.
fn plan_of(
    a: &KernelArgs,
    loaded: &scenario::LoadedScenario,
    s: &Scenario,
) -> Result<plan::Plan, Failure> {
    plan::plan(s).map_err(|e| {
        let text = std::fs::read_to_string(&a.scenario).unwrap_or_default();
        let src = locate::Source {
            file: &loaded.path.display().to_string(),
            text: &text,
            variant: a.variant.as_deref(),
            sets: &a.sets,
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
    let plan = plan_of(a, &loaded, s)?;
    let say = |m: &str| {
        if !a.quiet {
            eprintln!("{m}");
        }
    };
    for n in &plan.notes {
        eprintln!("note: {n}");
    }
    let accel = guest::accelerator();
    if a.dry_run {
        print!(
            "{}",
            plan::render(&plan, &["(the kernel's modules)".into()])
        );
        println!(
            "# qemu: -accel {accel} -smp {} -m {}",
            plan.cpus,
            plan.guest_mib()
        );
        return Ok(());
    }
    let kernel = pick_kernel(a, &say)?;
    let dir = work_dir(a.keep.as_deref())?;
    let outcome = boot_and_read(a, &plan, &kernel, &dir, accel, name, &say);
    if a.keep.is_none() && outcome.is_ok() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let variant = outcome?;
    let run = RunResult {
        scenario: loaded.base.name.clone(),
        description: loaded.base.description.clone(),
        seed: s.seed,
        variants: vec![variant],
        sensitivity: None,
    };
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

/// `--kernel` with `--modules`, `--kernel-package`, or Debian's newest 6.1.
fn pick_kernel(a: &KernelArgs, say: &dyn Fn(&str)) -> Result<guest::Kernel, Failure> {
    match (&a.kernel, &a.kernel_package) {
        (Some(image), _) => {
            if !image.is_file() {
                return Err(Failure::Input(format!(
                    "--kernel {}: no such file",
                    image.display()
                )));
            }
            Ok(guest::Kernel {
                image: image.clone(),
                modules: a.modules.clone(),
                what: image.display().to_string(),
            })
        }
        (None, Some(p)) => guest::package(p, say).map_err(Failure::Run),
        (None, None) => {
            let p = guest::default_package().map_err(Failure::Run)?;
            guest::package(&p, say).map_err(Failure::Run)
        }
    }
}

fn work_dir(keep: Option<&Path>) -> Result<PathBuf, Failure> {
    let dir = match keep {
        Some(d) => d.to_path_buf(),
        None => std::env::temp_dir().join(format!("reclaimsim-kernel-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Input(format!("--keep {}: {e}", dir.display())))?;
    Ok(dir)
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

/// Builds the guest, boots it and reads its console into a variant's results.
fn boot_and_read(
    a: &KernelArgs,
    plan: &plan::Plan,
    kernel: &guest::Kernel,
    dir: &Path,
    accel: &str,
    name: &str,
    say: &dyn Fn(&str),
) -> Result<VariantResult, Failure> {
    let modules = match &kernel.modules {
        Some(m) => guest::modules(m, &wanted_modules(plan)).map_err(Failure::Run)?,
        None => Vec::new(),
    };
    let names: Vec<String> = modules.iter().map(|(n, _)| n.clone()).collect();
    let text = plan::render(plan, &names);
    let programs = guest::programs().map_err(Failure::Run)?;
    let initramfs = guest::initramfs(dir, &modules, &programs, &text).map_err(Failure::Run)?;
    let (brd_nr, brd_mib) = plan.brd();
    // no_timer_check: under TCG on a loaded host the IO-APIC timer check can fail and
    // panic the boot ("IO-APIC + timer doesn't work!"); QEMU's timer works.
    let append = format!(
        "console=ttyS0 panic=-1 loglevel=2 no_timer_check transparent_hugepage=never brd.rd_nr={brd_nr} brd.rd_size={}",
        brd_mib * 1024
    );
    let boot = guest::Boot {
        kernel,
        initramfs: &initramfs,
        cpus: plan.cpus,
        memory_mib: plan.guest_mib(),
        accel,
        append,
        timeout: Duration::from_secs(a.timeout),
    };
    say(&format!(
        "booting {} under QEMU ({accel}, -smp {}, -m {} MiB); console log {}",
        kernel.what,
        plan.cpus,
        plan.guest_mib(),
        dir.join("console.log").display()
    ));
    let verbose = a.verbose && !a.quiet;
    let progress = |line: &str| {
        let tag = line.split(' ').next().unwrap_or("");
        let shown = matches!(
            tag,
            "uname" | "begin" | "start" | "snap" | "exit" | "error" | "done" | "lru_gen"
        );
        if shown && (verbose || matches!(tag, "error" | "start" | "done")) && !a.quiet {
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
        "guest memory after setup: MemTotal {} MiB, MemFree {} MiB\n",
        g.mem_total >> 20,
        g.mem_free_after_setup >> 20
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
