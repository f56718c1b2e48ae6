//! Helpers the command-line tests share: a scratch directory and the built binary.
#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test, named after the test file and `test`.
pub fn dir(test: &str) -> PathBuf {
    let name = format!(
        "reclaimsim-{}-{test}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    );
    let d = std::env::temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs the `reclaimsim` binary with `args`.
pub fn reclaimsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs the `reclaimsim` binary with `args` in the directory `cwd`.
pub fn reclaimsim_in(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}
