//! fio's own CPU time per 4 KiB buffered read of a file in the page cache, with the
//! psync and io_uring engines (the seeds ran io_uring at iodepth 128 with batches of 32).

use crate::stats::{self, Summary};
use crate::{tool_version, Measurement, Outcome, Scale};
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// The engines, their queue depths and any extra options.
const ENGINES: [(&str, u32, &[&str]); 2] = [
    ("psync", 1, &[]),
    (
        "io_uring",
        128,
        &["--iodepth_batch_submit=32", "--iodepth_batch_complete=32"],
    ),
];

/// CPU ns per I/O from one fio run's JSON: (usr_cpu + sys_cpu) percent of the job's
/// runtime, over the reads it completed; and how many it completed.
pub fn cpu_per_io(json: &str) -> Result<(f64, u64), String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("fio's JSON output: {e}"))?;
    let job = &v["jobs"][0];
    if let Some(err) = job["error"].as_i64().filter(|&e| e != 0) {
        return Err(format!("fio's job failed with error {err}"));
    }
    let number = |x: &serde_json::Value, what: &str| {
        x.as_f64().ok_or(format!("fio's JSON output has no {what}"))
    };
    let cpu = number(&job["usr_cpu"], "usr_cpu")? + number(&job["sys_cpu"], "sys_cpu")?;
    let runtime_ms = number(&job["job_runtime"], "job_runtime")?;
    let ios = number(&job["read"]["total_ios"], "read.total_ios")?;
    if ios < 1.0 {
        return Err("fio completed no reads".into());
    }
    Ok((cpu / 100.0 * runtime_ms * 1e6 / ios, ios as u64))
}

/// One fio run of `engine` over `file`; its CPU ns per read and its reads.
fn run(
    s: &Scale,
    file: &Path,
    size: usize,
    (engine, depth, extra): (&str, u32, &[&str]),
) -> Result<(f64, u64), String> {
    let runtime = format!("--runtime={}ms", s.seconds(1.0).as_millis());
    let out = Command::new("fio")
        .args([
            "--name=calibrate",
            "--bs=4k",
            "--rw=randread",
            "--norandommap",
        ])
        .args([
            "--invalidate=0",
            "--time_based",
            &runtime,
            "--output-format=json",
        ])
        .arg(format!("--filename={}", file.display()))
        .arg(format!("--size={size}"))
        .arg(format!("--ioengine={engine}"))
        .arg(format!("--iodepth={depth}"))
        .args(extra)
        .output()
        .map_err(|e| format!("cannot run fio: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "fio {engine} failed ({}): {}",
            out.status,
            err.trim()
        ));
    }
    cpu_per_io(&String::from_utf8_lossy(&out.stdout))
}

/// A temporary file of `size` bytes, written so that its pages are in the page cache.
fn cached_file(size: usize) -> Result<tempfile::NamedTempFile, String> {
    let mut f = tempfile::NamedTempFile::new().map_err(|e| format!("temporary file: {e}"))?;
    let chunk = vec![0xa5u8; 1 << 20];
    for _ in 0..size.div_ceil(chunk.len()) {
        f.write_all(&chunk)
            .map_err(|e| format!("writing the temporary file: {e}"))?;
    }
    Ok(f)
}

/// fio's CPU time per 4 KiB read from a cached file, psync and io_uring.
pub fn fio(s: &Scale) -> Vec<Outcome> {
    let version = match tool_version("fio", "--version") {
        Ok(v) => v,
        Err(e) => return vec![Err(("fio".into(), e))],
    };
    let size = s.bytes(64 << 20, 8 << 20);
    let file = match cached_file(size) {
        Ok(f) => f,
        Err(e) => return vec![Err(("fio".into(), e))],
    };
    ENGINES
        .into_iter()
        .map(|engine| {
            let name = format!("fio_{}", engine.0);
            let runs: Result<Vec<(f64, u64)>, String> = (0..s.rounds(3))
                .map(|_| run(s, file.path(), size, engine))
                .collect();
            let sum: Result<Summary, String> = runs.and_then(|runs| {
                let (ns, ios): (Vec<f64>, Vec<u64>) = runs.into_iter().unzip();
                stats::summarize(&ns, ios.iter().sum()).ok_or("no runs".into())
            });
            let how = format!(
                "{version} --rw=randread --bs=4k --ioengine={} --iodepth={} {}--norandommap on a \
                 {} MiB file in the page cache (--invalidate=0), {:.1} s runs; CPU ns per read = \
                 (usr_cpu + sys_cpu) x job_runtime / read.total_ios of --output-format=json; \
                 rounds are fio runs",
                engine.0,
                engine.1,
                engine.2.iter().map(|o| format!("{o} ")).collect::<String>(),
                size >> 20,
                s.seconds(1.0).as_secs_f64()
            );
            sum.map(|sum| Measurement::new(&name, sum, how))
                .map_err(|e| (name, e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_per_io_reads_fios_json() {
        let json = r#"{"jobs": [{"error": 0, "usr_cpu": 20.0, "sys_cpu": 30.0,
            "job_runtime": 1000, "read": {"total_ios": 500000}}]}"#;
        // Half of 1 s of CPU over 500k reads: 1000 ns each.
        assert_eq!(cpu_per_io(json), Ok((1000.0, 500_000)));
        let failed = json.replace("\"error\": 0", "\"error\": 95");
        assert!(cpu_per_io(&failed).unwrap_err().contains("error 95"));
        assert!(cpu_per_io("{}").unwrap_err().contains("usr_cpu"));
        assert!(cpu_per_io("not json").is_err());
    }
}
