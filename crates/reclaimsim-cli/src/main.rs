//! The `reclaimsim` command: each subcommand in its own file under `commands/`, the
//! options in `cli.rs`, what they share in `common.rs`.

mod cli;
#[cfg(test)]
mod clidoc;
mod commands;
mod common;
mod guard;
mod progress;

use clap::Parser;
use cli::{Cli, Command};
use commands::*;
use common::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        Command::Calibrate { .. } | Command::Report { .. } | Command::Kernel(_)
    ) {
        progress::install_ctrlc();
    }
    let result = match &cli.command {
        Command::Run { common, variant } => run(common, variant.as_deref()),
        Command::Fio { common, memory } => fio(common, memory),
        Command::Compare {
            common,
            sensitivity,
            guest,
        } => compare(common, sensitivity, guest),
        Command::Sweep {
            common,
            keys,
            values,
            ray,
        } => sweep(common, keys, values, ray.as_deref()),
        Command::Validate {
            scenarios,
            seed,
            seeds,
            sets,
            json,
            sensitivity,
            runs,
            with_kernel,
            guest,
        } => validate(
            scenarios,
            (*seed, *seeds, sets),
            json.as_deref(),
            sensitivity,
            (runs, with_kernel.then_some(guest)),
        ),
        Command::Report { results, out } => report_cmd(results, out),
        Command::Bench { json } => bench(json.as_deref()),
        Command::Trace(args) => commands::trace::trace(args),
        Command::Kernel(args) => commands::kernel::kernel(args),
        Command::Calibrate { out, quick, name } => calibrate(out, *quick, name.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted(e)) => {
            eprintln!("interrupted: {e}; nothing written");
            ExitCode::from(progress::EXIT_INTERRUPTED)
        }
    }
}
