//! QEMU's accelerator: KVM only where it boots the kernel.
//!
//! A `/dev/kvm` that opens, and even a paused KVM machine that starts, do not show that
//! KVM runs a kernel: on the project's VMs (nested, no `vmx` flag in the guest's
//! cpuinfo) a KVM guest stops after the boot loader's "Probing EDD" and spins at 100%
//! CPU until the run's timeout, while TCG boots the same 6.1 image to its root mount in
//! 9.7 s (2026-11-28, 2-core VM). So the probe boots the kernel that will run, with no
//! initramfs, under KVM: the kernel reaches its root mount, finds none and panics
//! (`panic=-1`, `-no-reboot`: QEMU exits). A panic within [`PROBE`] means KVM works;
//! anything else means TCG. The answer is kept per host boot and kernel image in the
//! cache (`~/.cache/reclaimsim/guest/accel`), so one host boot probes once.

use super::guest::{cache_dir, qemu_cpu, watchdog, which, Kernel};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a KVM probe boot may take to reach the kernel's root mount. A working KVM
/// gets there in 1-3 s; TCG took 9.7 s on the 2-core VM, so a KVM that has not got
/// there in 30 s, loaded host or not, is no faster than TCG would be.
const PROBE: Duration = Duration::from_secs(30);

/// What the kernel prints when it reaches the root mount and finds no root.
const NO_ROOT: &str = "VFS: Unable to mount root fs";

/// The accelerator `--accel` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Accel {
    /// KVM where it boots the kernel (the probe), else TCG.
    #[default]
    Auto,
    /// KVM, unprobed (QEMU fails if /dev/kvm does not work).
    Kvm,
    /// TCG, QEMU's emulation.
    Tcg,
}

/// QEMU's `-accel` for `kernel` as `--accel` asks: as given, or probed.
pub(crate) fn chosen(asked: Accel, kernel: &Kernel) -> &'static str {
    match asked {
        Accel::Auto => accelerator(kernel),
        Accel::Kvm => "kvm",
        Accel::Tcg => "tcg",
    }
}

/// `kvm` when KVM boots `kernel` (probed once per host boot), else `tcg`.
fn accelerator(kernel: &Kernel) -> &'static str {
    let Some(qemu) = kvm_qemu() else {
        return "tcg";
    };
    let key = boot_id().map(|b| format!("{b} {}", kernel.image.display()));
    let file = cache_dir("guest").join("accel");
    if let Some(found) = key.as_deref().and_then(|k| cached(&file, k)) {
        return found;
    }
    let accel = if boots(&qemu, &kernel.image, "kvm", PROBE) {
        "kvm"
    } else {
        "tcg"
    };
    if let Some(k) = &key {
        remember(&file, k, accel);
    }
    accel
}

/// What `kernel --dry-run` can say without booting: the accelerator asked for, or with
/// `auto`, `tcg` without a usable `/dev/kvm` and otherwise what a probe would decide.
pub(crate) fn unprobed(asked: Accel) -> &'static str {
    match asked {
        Accel::Kvm => "kvm",
        Accel::Tcg => "tcg",
        Accel::Auto if kvm_qemu().is_some() => {
            "kvm if a probe boot reaches the root mount, else tcg"
        }
        Accel::Auto => "tcg",
    }
}

/// QEMU, where `/dev/kvm` also opens: what a KVM probe needs.
fn kvm_qemu() -> Option<PathBuf> {
    let opens = (std::fs::OpenOptions::new().read(true).write(true))
        .open("/dev/kvm")
        .is_ok();
    which("qemu-system-x86_64").filter(|_| opens)
}

/// The key a cache line records its answer for.
fn key_of(line: &str) -> Option<&str> {
    line.split_once('\t').map(|x| x.0)
}

/// The host's boot id: a new one after every host reboot.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|s| !s.is_empty())
}

/// The accelerator recorded for `key`, if any.
fn cached(file: &Path, key: &str) -> Option<&'static str> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| key_of(l) == Some(key))?;
    match line.rsplit('\t').next() {
        Some("kvm") => Some("kvm"),
        Some("tcg") => Some("tcg"),
        _ => None,
    }
}

/// Records `accel` for `key` (written aside and renamed, so that a concurrent reader
/// sees the old file or the new one); failing to record costs only another probe.
fn remember(file: &Path, key: &str, accel: &str) {
    let old = std::fs::read_to_string(file).unwrap_or_default();
    let mut text: String = (old.lines())
        .filter(|l| key_of(l) != Some(key))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str(&format!("{key}\t{accel}\n"));
    let aside = file.with_extension(format!("{}", std::process::id()));
    let _ = std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")));
    if std::fs::write(&aside, text).is_ok() && std::fs::rename(&aside, file).is_err() {
        let _ = std::fs::remove_file(&aside);
    }
}

/// Boots `image` under `accel` with no initramfs and reports whether it reached the
/// root mount within `limit`.
fn boots(qemu: &Path, image: &Path, accel: &str, limit: Duration) -> bool {
    let log = std::env::temp_dir().join(format!("reclaimsim-{accel}-probe-{}", std::process::id()));
    let Ok(out) = std::fs::File::create(&log) else {
        return false;
    };
    let child = Command::new(qemu)
        .args(["-machine", "q35", "-accel", accel, "-cpu", qemu_cpu(accel)])
        .args(["-m", "256"])
        .args(["-display", "none", "-monitor", "none", "-nodefaults"])
        .args(["-no-reboot", "-serial", "stdio", "-kernel"])
        .arg(image)
        .args(["-append", "console=ttyS0 panic=-1 loglevel=1"])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn();
    let ok = child.is_ok_and(|mut c| {
        let stop = watchdog(c.id(), limit);
        let _ = c.wait();
        let _ = stop.join();
        std::fs::read(&log).is_ok_and(|t| String::from_utf8_lossy(&t).contains(NO_ROOT))
    });
    let _ = std::fs::remove_file(&log);
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe's boot, under TCG where KVM may not work: a cached kernel (the kernel
    /// tests fetch Debian's 6.1) reaches its root mount given two minutes, and not in
    /// half a second.
    #[test]
    fn the_probe_boot_reaches_the_root_mount() {
        let image = (std::fs::read_dir(cache_dir("kernels"))
            .into_iter()
            .flatten())
        .flatten()
        .filter_map(|d| std::fs::read_dir(d.path().join("unpacked/boot")).ok())
        .flatten()
        .flatten()
        .map(|f| f.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz"))
        });
        let (Some(qemu), Some(image)) = (which("qemu-system-x86_64"), image) else {
            eprintln!("skipped: no QEMU or no cached kernel");
            return;
        };
        assert!(!boots(&qemu, &image, "tcg", Duration::from_millis(500)));
        assert!(boots(&qemu, &image, "tcg", Duration::from_secs(120)));
    }

    /// The cache keeps one answer per key: a new answer replaces its key's line only.
    #[test]
    fn the_cache_keeps_one_answer_per_boot_and_image() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-accel-{}", std::process::id()));
        let file = dir.join("accel");
        assert_eq!(cached(&file, "b1 /k/vmlinuz"), None);
        remember(&file, "b1 /k/vmlinuz", "kvm");
        remember(&file, "b1 /k/other", "tcg");
        assert_eq!(cached(&file, "b1 /k/vmlinuz"), Some("kvm"));
        assert_eq!(cached(&file, "b1 /k/other"), Some("tcg"));
        remember(&file, "b1 /k/vmlinuz", "tcg");
        assert_eq!(cached(&file, "b1 /k/vmlinuz"), Some("tcg"));
        assert_eq!(cached(&file, "b2 /k/vmlinuz"), None);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        std::fs::write(&file, "b3 /k/vmlinuz\tfast\n").unwrap();
        assert_eq!(cached(&file, "b3 /k/vmlinuz"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
