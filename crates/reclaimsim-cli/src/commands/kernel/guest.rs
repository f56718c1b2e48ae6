//! The guest's parts on the host: the kernel (Debian's package, fetched with apt-get
//! and unpacked into a cache, never installed; or the user's bzImage), the modules the
//! plan needs with their dependencies, the workload programs (compiled statically with
//! the host's gcc, cached), the initramfs (busybox-static, mke2fs, the programs, init,
//! the plan, a trace's replay and the host programs the plan copies in with their
//! libraries: memcached), and QEMU.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The guest's sources, compiled into the command.
const INIT: &str = include_str!("../../../guest/init.sh");
const COMMON_H: &str = include_str!("../../../guest/common.h");
const ANON_C: &str = include_str!("../../../guest/anon.c");
const FILEREAD_C: &str = include_str!("../../../guest/fileread.c");
const PAGEFAULT_C: &str = include_str!("../../../guest/pagefault.c");
const DDREAD_C: &str = include_str!("../../../guest/ddread.c");
const TRACE_C: &str = include_str!("../../../guest/trace.c");
const MEMTIER_C: &str = include_str!("../../../guest/memtier.c");
const FIORUN: &str = include_str!("../../../guest/fiorun.sh");
const BALLAST_C: &str = include_str!("../../../guest/ballast.c");

/// The workload programs: their names in the guest's /bin and their sources.
const PROGRAMS: [(&str, &str); 7] = [
    ("anon", ANON_C),
    ("fileread", FILEREAD_C),
    ("pagefault", PAGEFAULT_C),
    ("ddread", DDREAD_C),
    ("trace", TRACE_C),
    ("memtier", MEMTIER_C),
    ("ballast", BALLAST_C),
];

/// A kernel to boot: its image and where its modules are (none: built in).
#[derive(Debug, Clone)]
pub(crate) struct Kernel {
    pub(crate) image: PathBuf,
    pub(crate) modules: Option<PathBuf>,
    /// What it is, for messages: the package name or the image's path.
    pub(crate) what: String,
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out =
        (cmd.output()).map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last: Vec<&str> = err.lines().rev().take(3).collect();
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            last.into_iter().rev().collect::<Vec<_>>().join("; ")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `$XDG_CACHE_HOME/reclaimsim/SUB`, or `~/.cache/reclaimsim/SUB`.
pub(crate) fn cache_dir(sub: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("reclaimsim").join(sub)
}

/// Debian's 6.1 image packages (`linux-image-6.1.0-N-amd64`), newest ABI first.
fn debian_61_packages(names: &str) -> Vec<String> {
    let mut found: Vec<(u64, String)> = (names.lines())
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|n| {
            let abi = n
                .strip_prefix("linux-image-6.1.0-")?
                .strip_suffix("-amd64")?;
            Some((abi.parse().ok()?, n.to_string()))
        })
        .collect();
    found.sort();
    found.into_iter().rev().map(|(_, n)| n).collect()
}

/// The default kernel: the newest Debian 6.1 image already unpacked in the cache, else
/// the newest the package lists know (after `apt-get update` if they know none).
pub(crate) fn default_package() -> Result<String, String> {
    let cache = cache_dir("kernels");
    let cached: String = (std::fs::read_dir(&cache).into_iter().flatten().flatten())
        .filter(|e| e.path().join("unpacked").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned() + "\n")
        .collect();
    if let Some(name) = debian_61_packages(&cached).into_iter().next() {
        return Ok(name);
    }
    let search = || {
        run(
            Command::new("apt-cache").args([
                "search",
                "--names-only",
                r"^linux-image-6\.1\.0-[0-9]+-amd64$",
            ]),
            "apt-cache search",
        )
    };
    let mut names = debian_61_packages(&search()?);
    if names.is_empty() {
        run(Command::new("apt-get").arg("update"), "apt-get update")?;
        names = debian_61_packages(&search()?);
    }
    names.into_iter().next().ok_or_else(|| {
        "no linux-image-6.1.0-*-amd64 package in the package lists (give --kernel or --kernel-package)".into()
    })
}

/// A kernel package, downloaded (`apt-get download`, after `apt-get update` if that
/// fails) and unpacked (`dpkg-deb -x`) into the cache once.
pub(crate) fn package(name: &str, say: &dyn Fn(&str)) -> Result<Kernel, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.+_".contains(c))
    {
        return Err(format!("--kernel-package {name:?}: not a package name"));
    }
    let dir = cache_dir("kernels").join(name);
    let unpacked = dir.join("unpacked");
    if !unpacked.is_dir() {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        say(&format!(
            "fetching {name} (apt-get download) into {}",
            dir.display()
        ));
        let download = || {
            run(
                Command::new("apt-get")
                    .arg("download")
                    .arg(name)
                    .current_dir(&dir),
                "apt-get download",
            )
        };
        if download().is_err() {
            run(Command::new("apt-get").arg("update"), "apt-get update")?;
            download()?;
        }
        let deb = (std::fs::read_dir(&dir)
            .map_err(|e| e.to_string())?
            .flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or_else(|| format!("apt-get download {name}: no .deb in {}", dir.display()))?;
        let tmp = dir.join("unpacking");
        let _ = std::fs::remove_dir_all(&tmp);
        run(
            Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tmp),
            "dpkg-deb -x",
        )?;
        std::fs::rename(&tmp, &unpacked).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&deb);
    }
    let image = (std::fs::read_dir(unpacked.join("boot"))
        .map_err(|e| format!("{name}: no boot/: {e}"))?
        .flatten())
    .map(|e| e.path())
    .find(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz"))
    })
    .ok_or_else(|| format!("{name}: no boot/vmlinuz* in the package"))?;
    let modules = (std::fs::read_dir(unpacked.join("lib/modules"))
        .into_iter()
        .flatten()
        .flatten())
    .map(|e| e.path())
    .find(|p| p.join("kernel").is_dir());
    Ok(Kernel {
        image,
        modules,
        what: name.to_string(),
    })
}

/// Every `.ko` (or `.ko.xz`, `.ko.zst`) under `dir`, by module name (`-` as `_`).
fn module_index(dir: &Path, out: &mut BTreeMap<String, PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            module_index(&p, out);
            continue;
        }
        let file = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = [".ko", ".ko.xz", ".ko.zst"]
            .iter()
            .find_map(|x| file.strip_suffix(x));
        if let Some(stem) = stem {
            out.insert(stem.replace('-', "_"), p);
        }
    }
}

/// A module's `.modinfo` entry `key=` values (`depends`, `softdep`), split on commas
/// and spaces.
fn modinfo(bytes: &[u8], key: &str) -> Vec<String> {
    let pat = format!("\0{key}=");
    let mut out = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    let mut rest = text.as_ref();
    while let Some(at) = rest.find(&pat) {
        let tail = &rest[at + pat.len()..];
        let value = tail.split('\0').next().unwrap_or("");
        out.extend(
            value
                .split([',', ' '])
                .filter(|s| !s.is_empty() && !s.ends_with(':'))
                .map(|s| s.replace('-', "_")),
        );
        rest = tail;
    }
    out
}

fn module_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        Some("xz")
    } else if name.ends_with(".zst") {
        Some("zstd")
    } else {
        None
    };
    match tool {
        None => std::fs::read(path).map_err(|e| format!("{name}: {e}")),
        Some(t) => (Command::new(t).arg("-dc").arg(path).output())
            .map_err(|e| format!("{name}: cannot run {t}: {e}"))
            .map(|o| o.stdout),
    }
}

/// The modules the guest loads, in load order (dependencies first), as (name, bytes):
/// `wanted` and what they depend on (`depends=`, and `softdep=` crypto modules such as
/// crc32c for ext4), those built in or absent left out.
pub(crate) fn modules(dir: &Path, wanted: &[&str]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut index = BTreeMap::new();
    module_index(dir, &mut index);
    let mut order: Vec<(String, Vec<u8>)> = Vec::new();
    let mut visiting = Vec::new();
    for w in wanted {
        add_module(w, &index, &mut order, &mut visiting)?;
    }
    Ok(order)
}

fn add_module(
    name: &str,
    index: &BTreeMap<String, PathBuf>,
    order: &mut Vec<(String, Vec<u8>)>,
    visiting: &mut Vec<String>,
) -> Result<(), String> {
    let name = name.replace('-', "_");
    // a softdep on the crypto API's alias: its generic implementation
    let name = match name.strip_prefix("crypto_") {
        Some(alg) if !index.contains_key(&name) => format!("{alg}_generic"),
        _ => name,
    };
    if order.iter().any(|(n, _)| *n == name) || visiting.contains(&name) {
        return Ok(());
    }
    let Some(path) = index.get(&name) else {
        return Ok(()); // built in, or not needed by this kernel
    };
    let bytes = module_bytes(path)?;
    visiting.push(name.clone());
    let mut deps = modinfo(&bytes, "softdep");
    deps.retain(|d| d != "pre" && d != "post");
    deps.extend(modinfo(&bytes, "depends"));
    for d in deps {
        add_module(&d, index, order, visiting)?;
    }
    visiting.pop();
    order.push((name, bytes));
    Ok(())
}

/// The workload programs, compiled statically with the host's gcc into the cache
/// (keyed by their sources), as (name, path).
pub(crate) fn programs() -> Result<Vec<(String, PathBuf)>, String> {
    programs_in(&cache_dir("guest"))
}

/// The workload programs compiled into `base/HASH/` (HASH of their sources), each once:
/// a program already there is complete (`compile` renames it into place).
fn programs_in(base: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (COMMON_H, PROGRAMS).hash(&mut h);
    let dir = base.join(format!("{:016x}", h.finish()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for (name, src) in PROGRAMS {
        let bin = dir.join(name);
        if !bin.is_file() {
            compile(&dir, name, src)?;
        }
        out.push((name.to_string(), bin));
    }
    Ok(out)
}

/// Compiles one program into `dir/NAME`: its sources and gcc's output in a directory of
/// this compile's own (the process id and a counter), the binary then renamed into place,
/// so that two `reclaimsim kernel`s compiling into one cache at once never write the
/// same file and a program in `dir` is always whole.
fn compile(dir: &Path, name: &str, src: &str) -> Result<(), String> {
    let n = COMPILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let own = dir.join(format!(".{name}.{}.{n}", std::process::id()));
    let result = compile_in(&own, name, src)
        .and_then(|bin| std::fs::rename(&bin, dir.join(name)).map_err(|e| e.to_string()));
    let _ = std::fs::remove_dir_all(&own);
    result
}

/// Compiles into `own` (created): `own/NAME` from `own/NAME.c` and `own/common.h`.
fn compile_in(own: &Path, name: &str, src: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(own).map_err(|e| format!("{}: {e}", own.display()))?;
    std::fs::write(own.join("common.h"), COMMON_H).map_err(|e| e.to_string())?;
    let c = own.join(format!("{name}.c"));
    std::fs::write(&c, src).map_err(|e| e.to_string())?;
    let bin = own.join(name);
    run(
        Command::new("gcc")
            .args(["-static", "-O2", "-pthread", "-o"])
            .arg(&bin)
            .arg(&c)
            .arg("-lm"),
        &format!("gcc (static) {name}.c"),
    )?;
    Ok(bin)
}

/// Programs this process has compiled, so that each compile has its own directory.
static COMPILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A host program by name on PATH or in the sbin directories.
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    (std::env::split_paths(&path)
        .chain(["/sbin", "/usr/sbin", "/bin", "/usr/bin"].map(PathBuf::from)))
    .map(|d| d.join(name))
    .find(|p| p.is_file())
}

/// A host program by name (`which`) with its bytes and its shared libraries' (`ldd`):
/// what a copy of it takes of the guest's RAM.
pub(crate) fn host_program(name: &str) -> Option<super::plan::HostProgram> {
    let path = which(name)?;
    let libs = shared_libraries(&path).unwrap_or_default();
    let bytes = (std::iter::once(&path).chain(&libs))
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    Some(super::plan::HostProgram { path, bytes })
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(d) = to.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))
}

/// Builds `dir/initramfs.cpio.gz` from `dir/root`: busybox-static, mke2fs with its
/// shared libraries, the modules, the programs, init, the plan (`text`), the plan's
/// `extra` files (by absolute path in the guest: a trace's replay) and its host programs
/// with their shared libraries (the host's memcached). `dir` may be relative (`--keep
/// keep`): it is made absolute first, as the archive is written from inside `root`.
pub(crate) fn initramfs(
    dir: &Path,
    modules: &[(String, Vec<u8>)],
    programs: &[(String, PathBuf)],
    text: &str,
    plan: &super::plan::Plan,
) -> Result<PathBuf, String> {
    let dir = &std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let root = dir.join("root");
    let _ = std::fs::remove_dir_all(&root);
    for d in [
        "bin",
        "sbin",
        "lib/modules",
        "proc",
        "sys",
        "dev",
        "tmp",
        "mnt",
        "etc",
    ] {
        std::fs::create_dir_all(root.join(d)).map_err(|e| e.to_string())?;
    }
    let busybox =
        which("busybox").ok_or("no busybox on the host (apt-get install busybox-static)")?;
    let ldd = Command::new("ldd")
        .arg(&busybox)
        .output()
        .map(|o| o.status.success());
    if matches!(ldd, Ok(true)) {
        return Err(format!("{} is dynamically linked: the guest needs busybox-static (apt-get install busybox-static)", busybox.display()));
    }
    copy(&busybox, &root.join("bin/busybox"))?;
    let applets = run(Command::new(&busybox).arg("--list"), "busybox --list")?;
    for a in applets.lines().filter(|a| *a != "busybox" && !a.is_empty()) {
        let _ = std::os::unix::fs::symlink("busybox", root.join("bin").join(a));
    }
    let mke2fs = which("mke2fs").ok_or("no mke2fs on the host (apt-get install e2fsprogs)")?;
    let _ = std::fs::remove_file(root.join("bin/mke2fs"));
    copy(&mke2fs, &root.join("sbin/mke2fs"))?;
    for lib in shared_libraries(&mke2fs)? {
        copy(&lib, &root.join(lib.strip_prefix("/").unwrap_or(&lib)))?;
    }
    let _ = std::os::unix::fs::symlink("lib", root.join("lib64"));
    for (name, bytes) in modules {
        std::fs::write(root.join(format!("lib/modules/{name}.ko")), bytes)
            .map_err(|e| e.to_string())?;
    }
    for (name, path) in programs {
        copy(path, &root.join("bin").join(name))?;
    }
    write_plan_files(&root, text, plan)?;
    let out = dir.join("initramfs.cpio.gz");
    let script = "cd \"$1\" && find . | \"$2\" cpio -o -H newc 2>/dev/null | gzip -1 > \"$3\"";
    run(
        Command::new("sh")
            .args(["-c", script, "sh"])
            .arg(&root)
            .arg(&busybox)
            .arg(&out),
        "making the initramfs (busybox cpio, gzip)",
    )?;
    Ok(out)
}

/// init, the plan, what the plan carries (`extra`, host programs) and /etc/passwd.
fn write_plan_files(root: &Path, text: &str, plan: &super::plan::Plan) -> Result<(), String> {
    // memcached, started as root, looks root up to switch to (-u root)
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/:/bin/sh\n")
        .map_err(|e| e.to_string())?;
    write_exec(&root.join("init"), INIT)?;
    write_exec(&root.join("bin/fiorun"), FIORUN)?;
    std::fs::write(root.join("plan"), text).map_err(|e| e.to_string())?;
    write_extra(root, &plan.extra)?;
    for c in &plan.host_copies {
        copy_with_libraries(root, &c.host, &c.guest)?;
    }
    Ok(())
}

/// A host program into `root` at `guest` (an absolute path), with the shared libraries
/// `ldd` lists at their own paths.
fn copy_with_libraries(root: &Path, host: &Path, guest: &str) -> Result<(), String> {
    copy(host, &root.join(guest.trim_start_matches('/')))?;
    for lib in shared_libraries(host)? {
        copy(&lib, &root.join(lib.strip_prefix("/").unwrap_or(&lib)))?;
    }
    Ok(())
}

/// The plan's extra files under `root`, by their absolute paths in the guest.
fn write_extra(root: &Path, extra: &[(String, Vec<u8>)]) -> Result<(), String> {
    for (path, bytes) in extra {
        let to = root.join(path.trim_start_matches('/'));
        if let Some(d) = to.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(&to, bytes).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    Ok(())
}

fn write_exec(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).map_err(|e| e.to_string())?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| e.to_string())
}

/// The shared libraries `ldd` lists for a program, its loader included.
fn shared_libraries(program: &Path) -> Result<Vec<PathBuf>, String> {
    let out = run(Command::new("ldd").arg(program), "ldd")?;
    Ok((out.lines())
        .filter_map(|l| {
            let l = l.trim();
            let path = match l.split_once("=>") {
                Some((_, right)) => right.split_whitespace().next()?,
                None => l.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect())
}

/// One boot: the QEMU command line.
pub(crate) struct Boot<'a> {
    pub(crate) kernel: &'a Kernel,
    pub(crate) initramfs: &'a Path,
    pub(crate) cpus: u32,
    pub(crate) memory_mib: u64,
    /// NUMA nodes and the MiB of each (their sum is `memory_mib`); one node: no `-numa`.
    pub(crate) nodes: Vec<u64>,
    pub(crate) accel: &'a str,
    pub(crate) append: String,
    pub(crate) timeout: Duration,
}

/// QEMU's `-cpu` for an accelerator: the host's CPU under KVM, QEMU's fullest model
/// under TCG.
pub(crate) fn qemu_cpu(accel: &str) -> &'static str {
    if accel == "kvm" {
        "host"
    } else {
        "max"
    }
}

/// QEMU under `nice`, its console on stdout.
fn qemu_command(b: &Boot, qemu: &Path) -> Command {
    let cpu = qemu_cpu(b.accel);
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "10"]).arg(qemu);
    cmd.args([
        "-machine",
        "q35",
        "-accel",
        b.accel,
        "-cpu",
        cpu,
        "-nographic",
        "-no-reboot",
    ]);
    cmd.args(["-smp", &b.cpus.to_string(), "-m", &b.memory_mib.to_string()]);
    cmd.args(numa_args(b.cpus, &b.nodes));
    cmd.arg("-kernel")
        .arg(&b.kernel.image)
        .arg("-initrd")
        .arg(b.initramfs);
    cmd.args(["-append", &b.append]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// QEMU's NUMA nodes: node i with `mib[i]` MiB of RAM of its own and an even share of
/// the `cpus` vCPUs in order (CPU c on node c x nodes / cpus, as the model places them);
/// nothing for one node.
pub(crate) fn numa_args(cpus: u32, mib: &[u64]) -> Vec<String> {
    if mib.len() < 2 {
        return Vec::new();
    }
    let per = cpus / mib.len() as u32;
    let mut args = Vec::new();
    for (i, m) in mib.iter().enumerate() {
        let first = i as u32 * per;
        args.extend([
            "-object".to_string(),
            format!("memory-backend-ram,id=ram{i},size={m}M"),
            "-numa".to_string(),
            format!(
                "node,nodeid={i},cpus={first}-{},memdev=ram{i}",
                first + per - 1
            ),
        ]);
    }
    args
}

/// Ends this run's QEMU (process `pid`, which `nice` became) after `timeout`; the
/// thread's value says whether it had to.
pub(crate) fn watchdog(pid: u32, timeout: Duration) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(200));
            if std::fs::metadata(format!("/proc/{pid}")).is_err() {
                return false;
            }
        }
        let _ = Command::new("kill").arg(pid.to_string()).status();
        true
    })
}

/// Boots the guest under `nice`, writes its console to `log`, and passes each `@RS`
/// progress line (a snapshot, a start, an error) to `progress`; returns the console and
/// the wall time.
pub(crate) fn boot(b: &Boot, log: &Path, progress: &dyn Fn(&str)) -> Result<(String, f64), String> {
    let qemu = which("qemu-system-x86_64")
        .ok_or("no qemu-system-x86_64 on the host (apt-get install qemu-system-x86)")?;
    let start = Instant::now();
    let mut child = (qemu_command(b, &qemu).spawn())
        .map_err(|e| format!("cannot start {}: {e}", qemu.display()))?;
    let watchdog = watchdog(child.id(), b.timeout);
    let mut file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut console = String::new();
    let stdout = child.stdout.take().ok_or("no console pipe")?;
    for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
        let line = String::from_utf8_lossy(&line).replace('\r', "");
        let _ = writeln!(file, "{line}");
        if let Some(at) = line.find("@RS ") {
            progress(&line[at + 4..]);
        }
        console.push_str(&line);
        console.push('\n');
    }
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let timed_out = watchdog.join().unwrap_or(false);
    let wall = start.elapsed().as_secs_f64();
    if timed_out {
        return Err(format!(
            "the guest ran past --timeout ({} s); console log: {}",
            b.timeout.as_secs(),
            log.display()
        ));
    }
    if !status.success() && !console.contains("@RS done") {
        return Err(format!("qemu exited with {status}: {}", stderr.trim()));
    }
    Ok((console, wall))
}

/// `abs` (an absolute path) as a path relative to the current directory, by `..` up to
/// `/`: a relative path to a temporary directory, without changing directory.
#[cfg(test)]
pub(super) fn relative_from_here(abs: &Path) -> PathBuf {
    let here = std::env::current_dir().unwrap();
    let ups = here.components().count() - 1;
    let up: PathBuf = std::iter::repeat_n("..", ups).collect();
    up.join(abs.strip_prefix("/").unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--keep keep`: the initramfs is built in a relative directory, though the archive
    /// is written from inside its root (needs busybox-static and mke2fs, as a boot does).
    #[test]
    fn the_initramfs_builds_in_a_relative_directory() {
        let static_busybox = which("busybox").is_some_and(|b| {
            !(Command::new("ldd").arg(b).output()).is_ok_and(|o| o.status.success())
        });
        if !static_busybox || which("mke2fs").is_none() {
            eprintln!("skipped: no busybox-static or no mke2fs on the host");
            return;
        }
        let abs = std::env::temp_dir().join(format!("reclaimsim-keep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&abs);
        // deeper than the `..`s climb, so that inside `root` they do not lead back
        let depth = std::env::current_dir().unwrap().components().count();
        let keep: PathBuf = (abs.iter())
            .chain(std::iter::repeat_n("d".as_ref(), depth))
            .chain(["keep".as_ref()])
            .collect();
        let rel = relative_from_here(&keep);
        assert!(rel.is_relative());
        std::fs::create_dir_all(&rel).unwrap();
        let plan = super::super::plan::Plan {
            memory: 64 << 20,
            cpus: 1,
            nodes: 1,
            swap: None,
            fs_bytes: 0,
            lru_gen: "0".into(),
            min_ttl_ms: 0,
            sysctls: Vec::new(),
            memcgs: Vec::new(),
            memcg_files: Vec::new(),
            files: Vec::new(),
            workloads: Vec::new(),
            extra: Vec::new(),
            host_copies: Vec::new(),
            duration_s: 0.0,
            sample_s: 0.0,
            notes: Vec::new(),
        };
        let out = initramfs(&rel, &[], &[], "plan\n", &plan).unwrap();
        assert!(out.is_absolute(), "{}", out.display());
        let gz = std::fs::read(keep.join("initramfs.cpio.gz")).unwrap();
        assert!(
            gz.len() > 1000 && gz[..2] == [0x1f, 0x8b],
            "{} bytes",
            gz.len()
        );
        let _ = std::fs::remove_dir_all(&abs);
    }

    #[test]
    fn modules_come_with_their_dependencies_first() {
        let d = std::env::temp_dir().join(format!("reclaimsim-kernel-mods-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("fs/ext4")).unwrap();
        std::fs::create_dir_all(d.join("crypto")).unwrap();
        let ko = |path: &str, info: &str| {
            std::fs::write(d.join(path), format!("ELF\0{info}\0license=GPL\0")).unwrap()
        };
        ko(
            "fs/ext4/ext4.ko",
            "softdep=pre: crypto-crc32c\0depends=jbd2,mbcache,crc16",
        );
        ko("fs/jbd2.ko", "softdep=pre: crypto-crc32c\0depends=");
        ko("fs/mbcache.ko", "depends=");
        ko("crypto/crc32c_generic.ko", "depends=");
        ko("zsmalloc.ko", "depends=");
        ko("zram.ko", "depends=zsmalloc");
        // crc16 is built in: not there, and left out
        let got = modules(&d, &["ext4", "zram", "brd"]).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "crc32c_generic",
                "jbd2",
                "mbcache",
                "ext4",
                "zsmalloc",
                "zram"
            ]
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// An ELF file whose section headers (which GNU ld writes last) end where the file
    /// ends: written to its end.
    fn complete_elf(path: &Path) -> bool {
        let b = std::fs::read(path).unwrap_or_default();
        if b.len() < 64 || &b[..4] != b"\x7fELF" {
            return false;
        }
        let u16_at = |at: usize| u16::from_le_bytes([b[at], b[at + 1]]) as u64;
        let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap());
        shoff + u16_at(0x3a) * u16_at(0x3c) == b.len() as u64
    }

    /// Two `reclaimsim kernel`s compiling the programs into one fresh cache at once
    /// (here two threads): both succeed, and every program is a complete binary.
    #[test]
    fn two_compiles_into_one_cache_at_once_both_succeed() {
        if which("gcc").is_none() {
            eprintln!("skipped: no gcc on the host");
            return;
        }
        let base = std::env::temp_dir().join(format!("reclaimsim-programs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let compiles: Vec<_> = (0..2)
            .map(|_| {
                let (base, barrier) = (base.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    programs_in(&base)
                })
            })
            .collect();
        for c in compiles {
            let got = c.join().unwrap().unwrap();
            assert_eq!(got.len(), PROGRAMS.len());
            for (name, path) in got {
                assert!(complete_elf(&path), "{name}: {} incomplete", path.display());
            }
        }
        // nothing of either compile left beside the programs
        let dir = std::fs::read_dir(&base)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut left: Vec<String> = (std::fs::read_dir(&dir).unwrap().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want: Vec<String> = PROGRAMS.iter().map(|(n, _)| n.to_string()).collect();
        want.sort();
        assert_eq!(left, want);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn the_newest_debian_61_image_first() {
        let names = "linux-image-6.1.0-9-amd64 - Linux\nlinux-image-6.1.0-48-amd64 - x\n\
                     linux-image-6.1.0-48-amd64-dbg - y\nlinux-image-6.1.0-10-cloud-amd64 - z\n";
        assert_eq!(
            debian_61_packages(names),
            ["linux-image-6.1.0-48-amd64", "linux-image-6.1.0-9-amd64"]
        );
    }
}
