//! A fio job in the guest: the guest's own `fileread` (buffered `read`/`randread` with
//! `pread`, as fio's psync engine) when it can run the job, or the host's fio, copied
//! into the guest with its libraries and started by `guest/fiorun.sh` from a job file
//! written from the scenario's options (`job_file`), which `--fio-program` chooses.

use super::plan::{fail, guest_pattern, wl, Files, HostCopy, HostProgram, PlanError};
use reclaimsim::scenario::config::WorkloadConfig;
use reclaimsim::units::Duration;
use reclaimsim::workload::fio::{FioOptions, IoEngine};
use reclaimsim::workload::WorkloadOptions;

/// Where the host's fio sits in the guest.
pub(crate) const FIO: &str = "/bin/fio";

/// Which program runs a fio job in the guest (`--fio-program`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FioProgram {
    /// `fileread` when it can run the job, else the host's fio when installed.
    #[default]
    Auto,
    /// The host's fio for every job (an error without one).
    Fio,
    /// `fileread` for every job (a job it cannot run is an error).
    Fileread,
}

/// A fio job as the guest runs it: the program's arguments, the files laid out for it,
/// and, with the host's fio, its job file (a path in the guest and its text) and the
/// copy of fio.
pub(crate) struct FioJob {
    pub(crate) command: Vec<String>,
    pub(crate) files: Files,
    pub(crate) job_file: Option<(String, Vec<u8>)>,
    pub(crate) copy: Option<HostCopy>,
}

/// `[[workload]]` `i`'s fio job: `fileread` or the host's fio (`host`, none when the host
/// has no fio) as `choice` says.
pub(crate) fn fio(
    i: usize,
    w: &WorkloadConfig,
    o: &FioOptions,
    seed: u64,
    host: Option<HostProgram>,
    choice: FioProgram,
) -> Result<FioJob, PlanError> {
    let own = fileread_unsupported(i, o);
    match (choice, own, host) {
        (FioProgram::Fileread, Err(e), _) => Err(e),
        (FioProgram::Fileread | FioProgram::Auto, Ok(()), _) => {
            let (command, files) = fileread(i, w, o, seed)?;
            Ok(FioJob {
                command,
                files,
                job_file: None,
                copy: None,
            })
        }
        (FioProgram::Fio | FioProgram::Auto, _, Some(h)) => host_fio(i, w, o, seed, h),
        (FioProgram::Fio, _, None) => fail(
            wl(i, "fio"),
            "--fio-program fio: the host has no fio (apt-get install fio)",
        ),
        (FioProgram::Auto, Err(e), None) => Err(PlanError {
            message: format!(
                "{}; the host's fio could run it: install fio (apt-get install fio)",
                e.message
            ),
            ..e
        }),
    }
}

/// The host's fio on the job: `fiorun` with the job file `/etc/fio/NAME.fio`, the files
/// laid out as the model lays them out (one a clone, `NAME.<clone>`).
fn host_fio(
    i: usize,
    w: &WorkloadConfig,
    o: &FioOptions,
    seed: u64,
    host: HostProgram,
) -> Result<FioJob, PlanError> {
    let refused = [
        (
            "fio.phase",
            !o.phase.is_empty(),
            "the host's fio runs the job's own I/O only (no later phases)",
        ),
        (
            "fio.nrfiles",
            o.nrfiles != 1,
            "the guest lays out one file a clone for the host's fio",
        ),
    ];
    if let Some((field, _, why)) = refused.iter().find(|r| r.1) {
        return fail(wl(i, field), *why);
    }
    let model = (WorkloadOptions::Fio(o.clone()).build(seed)).or_else(|e| fail(wl(i, "fio"), e))?;
    let pages = model.layout().files.first().map_or(0, |f| f.pages);
    let path = format!("/etc/fio/{}.fio", w.name);
    let command = ["/bin/fiorun", "-n", &w.name, "-c", &path]
        .map(String::from)
        .to_vec();
    Ok(FioJob {
        command,
        files: Files {
            name: w.name.clone(),
            memcg: w.memcg.clone(),
            count: o.numjobs,
            bytes: pages * 4096,
            sparse: false,
            blocks: true,
        },
        job_file: Some((path, job_file(&w.name, o, seed).into_bytes())),
        copy: Some(HostCopy {
            host: host.path,
            guest: FIO.to_string(),
            bytes: host.bytes,
        }),
    })
}

/// fio's name of an engine.
fn engine(e: IoEngine) -> &'static str {
    match e {
        IoEngine::Psync => "psync",
        IoEngine::Sync => "sync",
        IoEngine::Mmap => "mmap",
        IoEngine::IoUring => "io_uring",
        IoEngine::Libaio => "libaio",
    }
}

/// The job file: the scenario's options under their fio names, and what the guest
/// needs: the files the guest laid out (`NAME.<clone>` in /mnt, none created, their
/// pages not dropped: they are cold already), clones as threads as the model's are,
/// one result for the job, latency percentiles from submission to completion.
pub(crate) fn job_file(name: &str, o: &FioOptions, seed: u64) -> String {
    let us = |d: Duration| format!("{}us", d.0 / 1000);
    let mut lines = vec![
        format!("[{name}]"),
        "directory=/mnt".into(),
        format!("filename_format={name}.$jobnum"),
        "allow_file_create=0".into(),
        "invalidate=0".into(),
        "thread=1".into(),
        "group_reporting=1".into(),
        "lat_percentiles=1".into(),
        format!("randseed={seed}"),
        format!("rw={}", o.rw),
        format!("offset={}", o.offset.0),
        format!("loops={}", o.loops),
        format!("numjobs={}", o.numjobs),
        format!("bs={}", o.bs.0),
        format!("random_distribution={}", o.random_distribution.trim()),
        format!("norandommap={}", u8::from(o.norandommap)),
        format!("random_generator={}", o.random_generator),
        format!("time_based={}", u8::from(o.time_based)),
        format!("ramp_time={}", us(o.ramp_time)),
        format!("thinktime={}", us(o.thinktime)),
        format!("ioengine={}", engine(o.ioengine)),
        format!("iodepth={}", o.iodepth),
        format!("iodepth_batch_submit={}", o.iodepth_batch_submit),
        format!("iodepth_batch_complete={}", o.iodepth_batch_complete),
    ];
    let optional = [
        ("rwmixread", o.rwmixread),
        ("rwmixwrite", o.rwmixwrite),
        ("size", o.size.map(|b| b.0)),
        ("filesize", o.filesize.map(|b| b.0)),
        ("io_size", o.io_size.map(|b| b.0)),
        ("number_ios", o.number_ios),
    ];
    for (k, v) in optional {
        lines.extend(v.map(|v| format!("{k}={v}")));
    }
    lines.extend(o.runtime.map(|r| format!("runtime={}", us(r))));
    lines.push(String::new());
    lines.join("\n")
}

/// A fio job of buffered `read`/`randread` as `fileread`'s arguments, and its files.
fn fileread(
    i: usize,
    w: &WorkloadConfig,
    o: &FioOptions,
    seed: u64,
) -> Result<(Vec<String>, Files), PlanError> {
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
        sparse: false,
        blocks: true,
    };
    Ok((cmd, files))
}

/// What of a fio job the guest's `fileread` cannot do.
fn fileread_unsupported(i: usize, o: &FioOptions) -> Result<(), PlanError> {
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

#[cfg(test)]
mod tests {
    use super::super::plan::{plan_full, Plan, MIB};
    use super::*;
    use reclaimsim::scenario;

    const DEMO: &str = include_str!("../../../../../scenarios/demo-small.toml");

    /// The demo with `sets`, planned with `host`'s fio (bytes) or none, by `choice`.
    fn planned(sets: &[&str], host: Option<u64>, choice: FioProgram) -> Result<Plan, PlanError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let l = scenario::parse(DEMO, "t.toml", &sets, None).unwrap();
        let lookup = |name: &str| {
            (name == "fio").then_some(())?;
            host.map(|bytes| HostProgram {
                path: "/usr/bin/fio".into(),
                bytes,
            })
        };
        plan_full(&l.base, &lookup, choice)
    }

    const URING: &[&str] = &[
        "workload.fio.fio.ioengine=\"io_uring\"",
        "workload.fio.fio.iodepth=32",
    ];

    #[test]
    fn a_job_fileread_cannot_run_goes_to_the_hosts_fio() {
        let e = planned(URING, None, FioProgram::Auto).unwrap_err();
        assert_eq!(e.field, wl(1, "fio.ioengine"));
        assert!(
            e.message.ends_with("install fio (apt-get install fio)"),
            "{}",
            e.message
        );
        let e = planned(URING, None, FioProgram::Fileread).unwrap_err();
        assert!(!e.message.contains("install"), "{}", e.message);
        let p = planned(URING, Some(80 * MIB), FioProgram::Auto).unwrap();
        let cmd = p.workloads[1].command.join(" ");
        assert!(
            cmd.starts_with("/bin/fiorun -n fio -c /etc/fio/fio.fio -x "),
            "{cmd}"
        );
        assert_eq!(p.extra.len(), 1);
        assert_eq!(p.extra[0].0, "/etc/fio/fio.fio");
        assert_eq!(p.host_copies.len(), 1);
        assert_eq!(p.host_copies[0].guest, FIO);
        let own = planned(&[], Some(80 * MIB), FioProgram::Auto).unwrap();
        // fio's 80 MiB, and the job file's few bytes round up to one more
        assert_eq!(p.guest_mib(), own.guest_mib() + 81);
        // a job fileread runs stays with fileread under auto, goes to fio when asked
        assert!(own.workloads[1].command[0] == "/bin/fileread");
        assert!(own.host_copies.is_empty());
        let forced = planned(&[], Some(80 * MIB), FioProgram::Fio).unwrap();
        assert_eq!(forced.workloads[1].command[0], "/bin/fiorun");
        let e = planned(&[], None, FioProgram::Fio).unwrap_err();
        assert_eq!(e.field, wl(1, "fio"));
        // the files are the model's: one a clone of the model's size
        assert_eq!(forced.files[0].bytes, own.files[0].bytes);
        assert_eq!(forced.files[0].count, 2);
    }

    #[test]
    fn what_the_hosts_fio_cannot_run_is_located() {
        let phase = "workload.fio.fio.phase=[{rw = \"read\"}]";
        let e = planned(&[URING[0], phase], Some(MIB), FioProgram::Auto).unwrap_err();
        assert_eq!(e.field, wl(1, "fio.phase"));
        let e = planned(
            &[URING[0], "workload.fio.fio.nrfiles=2"],
            Some(MIB),
            FioProgram::Fio,
        )
        .unwrap_err();
        assert_eq!(e.field, wl(1, "fio.nrfiles"));
    }

    #[test]
    fn the_job_file_says_what_the_scenario_says() {
        let sets = [
            URING[0],
            URING[1],
            "workload.fio.fio.iodepth_batch_submit=8",
            "workload.fio.fio.random_distribution=\"zipf:1.2\"",
            "workload.fio.fio.time_based=true",
            "workload.fio.fio.ramp_time=\"300ms\"",
            "workload.fio.fio.runtime=\"2s\"",
        ];
        let p = planned(&sets, Some(MIB), FioProgram::Auto).unwrap();
        let text = String::from_utf8(p.extra[0].1.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for want in [
            "[fio]",
            "filename_format=fio.$jobnum",
            "allow_file_create=0",
            "thread=1",
            "randseed=1",
            "rw=randread",
            "numjobs=2",
            "bs=4096",
            "ioengine=io_uring",
            "iodepth=32",
            "iodepth_batch_submit=8",
            "iodepth_batch_complete=1",
            "random_distribution=zipf:1.2",
            "time_based=1",
            "ramp_time=300000us",
            "runtime=2000000us",
            "size=33554432",
        ] {
            assert!(lines.contains(&want), "{want} not in\n{text}");
        }
    }
}
