//! The command line: the subcommands and their options (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// A deterministic model of Linux page reclaim (classic LRU and MGLRU).
#[derive(Parser)]
#[command(name = "reclaimsim", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a scenario (its base, or one variant) and print its results.
    Run {
        #[command(flatten)]
        common: Common,
        /// Run this variant instead of the base scenario.
        #[arg(long, value_name = "NAME")]
        variant: Option<String>,
    },
    /// Run an fio job file (INI, `[global]` and job sections) on a machine of --memory and
    /// print its results; set the rest with --set (machine.cpus=8, kernel.policy=mglru).
    Fio {
        #[command(flatten)]
        common: Common,
        /// The machine's memory (4GiB, 960m).
        #[arg(long, value_name = "SIZE")]
        memory: String,
    },
    /// Run every variant of a scenario in order and compare them; a variant with
    /// `backend = "kernel"` boots a real kernel in QEMU, as `reclaimsim kernel` does.
    Compare {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        sensitivity: SensitivityArgs,
        #[command(flatten)]
        guest: crate::commands::kernel::GuestArgs,
    },
    /// Run every variant at each value of one or more keys (each value sets every key)
    /// and print throughput and lock spin share per variant.
    Sweep {
        #[command(flatten)]
        common: Common,
        /// A field to set to each value (dotted, as --set takes it); repeatable.
        #[arg(long = "key", value_name = "KEY", required = true)]
        keys: Vec<String>,
        /// The values, comma-separated: 2,4,16,52,104.
        #[arg(long, value_name = "V,V,...", value_delimiter = ',', required = true)]
        values: Vec<String>,
        /// Run every (value, variant) as a task on a Ray cluster: the one at ADDRESS, or a
        /// local one started for the sweep. Needs the Python package and Ray
        /// (`python3 -m reclaimsim._ray_cli`; $RECLAIMSIM_PYTHON names another python).
        #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "")]
        ray: Option<String>,
    },
    /// Run the variants each scenario's `[[expect]]` tables compare and print, per
    /// expectation, the expected change beside the model's (a report: exit 0 either way).
    Validate {
        /// Scenario files (default: every scenarios/seeds/*.toml, sorted).
        #[arg(value_name = "SCENARIO")]
        scenarios: Vec<PathBuf>,
        /// Override every scenario's seed.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Run each headline on N seeds (the scenario's seed and the next N-1) and show
        /// the spread of the model's change beside it; signs and ratios are judged on the
        /// scenario's seed.
        #[arg(long, value_name = "N", default_value_t = 1,
              value_parser = clap::value_parser!(u64).range(1..))]
        seeds: u64,
        /// Override a field of every scenario (as `run --set` does): `scale=4` runs every
        /// headline at four times its sizes.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Also write the expectations, their outcomes and the runs as JSON to this file.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        #[command(flatten)]
        sensitivity: SensitivityArgs,
        #[command(flatten)]
        runs: RunFlags,
        /// Also boot the kernel variants (`backend = "kernel"`) the expectations name,
        /// one after another, on the scenario's seed; without it their rows are n/a.
        #[arg(long)]
        with_kernel: bool,
        #[command(flatten)]
        guest: crate::commands::kernel::GuestArgs,
    },
    /// Measure this host's costs (faults, page copies, cache and DRAM latency, atomics,
    /// lzo and LZ4, loopback TCP, memcached and fio where installed) and write them as a
    /// machine profile for `[machine] profile = PATH`.
    Calibrate {
        /// The profile to write (TOML).
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
        /// Tiny iteration counts and buffers: a few seconds, rough figures (for tests).
        #[arg(long)]
        quick: bool,
        /// The profile's name (default: the file name without its extension).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Write the HTML report (charts, self-contained) of a results file that `run`,
    /// `compare` or `sweep` wrote with --json.
    Report {
        /// The results (JSON).
        #[arg(value_name = "RESULTS.json")]
        results: PathBuf,
        /// The report to write (HTML).
        #[arg(long, short, value_name = "PATH")]
        out: PathBuf,
    },
    /// Replay a trace in a memcg of --cache-size under classic LRU and MGLRU and print
    /// the miss ratios, beside libCacheSim's policies when its Python package is there.
    Trace(crate::commands::trace::TraceArgs),
    /// Run the scenario (its base, or one variant) on a real kernel in QEMU (Debian's
    /// 6.1 by default, or --kernel) and print its counters as `run` prints the model's.
    Kernel(crate::commands::kernel::KernelArgs),
    /// Measure the model: simulated page accesses per wall second, host bytes per
    /// simulated frame, and the demo scenario's wall time.
    Bench {
        /// Also write the figures as JSON to this file.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
    },
}

/// Options every subcommand that runs a scenario takes.
#[derive(Args)]
pub(crate) struct Common {
    /// The scenario file (TOML; for `fio`, the fio job file).
    pub(crate) scenario: PathBuf,
    /// Override the scenario's seed.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Override a field: machine.memory=8GiB, kernel.policy=mglru, workload.NAME.fio.numjobs=8.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) json: Option<PathBuf>,
    /// Also write the HTML report (charts; one self-contained file) to this file.
    #[arg(long, value_name = "PATH")]
    pub(crate) html: Option<PathBuf>,
    /// Run the invariant checker while running (slower).
    #[arg(long)]
    pub(crate) check: bool,
    /// Print every vmstat counter.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Exit 1 when any workload was OOM-killed (the results are written all the same).
    #[arg(long)]
    pub(crate) fail_on_oom: bool,
    #[command(flatten)]
    pub(crate) runs: RunFlags,
}

/// `--sensitivity` and its options (compare, validate).
#[derive(Args)]
pub(crate) struct SensitivityArgs {
    /// Also rerun the variants with the costs moved across their ranges (each cost alone
    /// to its low and high end, then random points) and print each headline change as a
    /// band with the costs it depends on most.
    #[arg(long)]
    pub(crate) sensitivity: bool,
    /// Vary only these costs (cost-table fields, comma-separated); default: every cost
    /// whose range is more than a point.
    #[arg(
        long,
        value_name = "COST,...",
        value_delimiter = ',',
        requires = "sensitivity"
    )]
    pub(crate) sensitivity_costs: Vec<String>,
    /// Random points, every varied cost drawn uniformly in its range (fixed seed).
    #[arg(long, value_name = "N", default_value_t = 8, requires = "sensitivity")]
    pub(crate) sensitivity_points: usize,
}

/// How runs go: progress and the run-away guard.
#[derive(Args)]
pub(crate) struct RunFlags {
    /// Show no progress on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Run even when the estimated work is over the limits (64 GiB of memory, 3600
    /// virtual CPU-seconds, 10^9 workload operations; see docs/guide/commands.md).
    #[arg(long)]
    pub(crate) allow_long: bool,
}
