//! The guest plans of the workloads beyond anon and fio: page_fault3 (`guest/pagefault.c`),
//! dd (`guest/ddread.c`), trace replay (`guest/trace.c`, with the model's own replay of
//! the trace written into the initramfs), and memcached (the host's, with the guest's
//! memtier-like client, `guest/memtier.c`). What a program cannot do is a located error
//! (`PlanError`).

use super::locate::Step;
use super::plan::{fail, finish_name, key, safe_char, wl, Files, PlanError};
use reclaimsim::scenario::config::{Scenario, WorkloadConfig};
use reclaimsim::units::Duration;
use reclaimsim::workload::dd::DdOptions;
use reclaimsim::workload::memtier::{LruMode, MemcachedOptions, MemtierOptions, Requests};
use reclaimsim::workload::pagefault::PageFault3Options;
use reclaimsim::workload::phase::RepeatPhase;
use reclaimsim::workload::trace::TraceOptions;
use reclaimsim::workload::{Layout, RegionSpec, Step as WlStep, Touch, Workload, WorkloadOptions};
use std::path::Path;

/// The most threads or processes a guest program runs (its `MAXW`).
const MAX_WORKERS: u64 = 64;

/// The most touches a trace's replay may hold in the initramfs: 8 bytes each, kept in
/// the guest's RAM (8 MiB at most).
pub(crate) const MAX_REPLAY_TOUCHES: u64 = 1 << 20;

/// The most files a trace may touch (`trace.c`'s `MAXF`).
const MAX_TRACE_FILES: usize = 64;

/// Where the guest's programs find a trace's replay, in the initramfs.
const REPLAY_DIR: &str = "/trace";

/// A workload's `[[workload.KIND.phase]]` (dd, page_fault3: the model's `RepeatPhase`)
/// as the program's `-H NAME,SLEEP,WAIT,RUNTIME` arguments: the name as the model
/// gives it (`phase<N>`), the sleep in seconds after the workload's start, what it
/// waits for as `finish_name` names its file, and its runtime (`runtime`, else
/// `default`; 0: to the work's end). Names the guest cannot carry and more phases than
/// the programs run (`MAXPH`) are errors at their field.
fn repeat_phases(
    s: &Scenario,
    i: usize,
    kind: &str,
    phases: &[RepeatPhase],
    default: Option<Duration>,
) -> Result<Vec<String>, PlanError> {
    let field = |n: usize, f: &str| {
        let mut p = wl(i, &format!("{kind}.phase"));
        p.push(Step::Index(n));
        p.push(key(f));
        p
    };
    if phases.len() > MAX_LATER_PHASES {
        let mut p = wl(i, kind);
        p.push(key("phase"));
        return fail(
            p,
            format!("the guest's {kind} runs at most {MAX_LATER_PHASES} later phases"),
        );
    }
    let mut args = Vec::new();
    for (n, ph) in phases.iter().enumerate() {
        let name = ph.name.clone().unwrap_or(format!("phase{}", n + 1));
        if !name.chars().all(|c| safe_char(c) && c != '/') {
            return fail(
                field(n, "name"),
                "the guest takes phase names of letters, digits, '-', '_' and '.'",
            );
        }
        let wait = (ph.wait_for.as_deref())
            .map(|t| finish_name(s, t, field(n, "wait_for")))
            .transpose()?
            .unwrap_or_default();
        let secs = |d: Option<Duration>| d.map_or(0.0, |d| d.secs_f64());
        let (sleep, runtime) = (secs(ph.sleep_until), secs(ph.runtime.or(default)));
        args.extend(["-H".into(), format!("{name},{sleep},{wait},{runtime}")]);
    }
    Ok(args)
}

/// The most later phases a guest program runs (`MAXPH` in `guest/common.h`, less `run`).
const MAX_LATER_PHASES: usize = 15;

/// page_fault3 as `pagefault`'s arguments, and its files: a hole of `size` per task on
/// the guest's ext4, as the model's files are page-cache files on ext4 on brd (its
/// writeback writes them), not tmpfs. The tasks write every page, so the file system
/// needs room for all of them.
pub(crate) fn page_fault3(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
    o: &PageFault3Options,
) -> Result<(Vec<String>, Files), PlanError> {
    let phases = repeat_phases(s, i, "page_fault3", &o.phase, Some(o.runtime))?;
    if o.tasks > MAX_WORKERS {
        return fail(
            wl(i, "page_fault3.tasks"),
            format!("the guest's page_fault3 runs 1 to {MAX_WORKERS} tasks"),
        );
    }
    let bytes = o.size.pages() * 4096;
    let mut cmd: Vec<String> = [
        "/bin/pagefault",
        "-n",
        &w.name,
        "-d",
        "/mnt",
        "-t",
        &o.tasks.to_string(),
        "-s",
        &bytes.to_string(),
        "-M",
        &o.mode,
        "-T",
        &o.runtime.secs_f64().to_string(),
    ]
    .map(String::from)
    .to_vec();
    cmd.extend(phases);
    let files = Files {
        name: w.name.clone(),
        memcg: w.memcg.clone(),
        count: o.tasks,
        bytes,
        sparse: true,
        blocks: true,
    };
    Ok((cmd, files))
}

/// dd readers as `ddread`'s arguments (4 KiB reads, as the model's dd), and their files:
/// holes when `sparse` (reads zero-fill without a device read), else written at layout
/// and dropped from the page cache.
pub(crate) fn dd(
    s: &Scenario,
    i: usize,
    w: &WorkloadConfig,
    o: &DdOptions,
) -> Result<(Vec<String>, Files), PlanError> {
    let phases = repeat_phases(s, i, "dd", &o.phase, None)?;
    if o.files.saturating_mul(o.readers) > MAX_WORKERS {
        return fail(
            wl(i, "dd.readers"),
            format!("the guest's dd runs at most {MAX_WORKERS} readers (files × readers)"),
        );
    }
    let bytes = o.size.pages() * 4096;
    let mut cmd: Vec<String> = [
        "/bin/ddread",
        "-n",
        &w.name,
        "-d",
        "/mnt",
        "-F",
        &o.files.to_string(),
        "-r",
        &o.readers.to_string(),
        "-b",
        "4096",
    ]
    .map(String::from)
    .to_vec();
    if let Some(r) = o.runtime {
        cmd.extend(["-T".into(), r.secs_f64().to_string()]);
    }
    cmd.extend(phases);
    let files = Files {
        name: w.name.clone(),
        memcg: w.memcg.clone(),
        count: o.files,
        bytes,
        sparse: o.sparse,
        blocks: !o.sparse,
    };
    Ok((cmd, files))
}

/// memcached as `memtier`'s arguments: the host's memcached (`host`, copied into the
/// guest with its libraries; none: an error saying to install it) with the model's
/// server threads, and each `[[workload.memcached.phase]]` as a run of the guest's
/// memtier-like client. `memory` is memcached's `-m`: the machine's memory and swap.
pub(crate) fn memcached(
    i: usize,
    w: &WorkloadConfig,
    o: &MemcachedOptions,
    seed: u64,
    memory: u64,
    host: Option<&Path>,
) -> Result<Vec<String>, PlanError> {
    if host.is_none() {
        return fail(
            wl(i, "memcached"),
            "the guest runs memcached only when the host has it: install memcached \
             (apt-get install memcached)",
        );
    }
    // The real memcached keeps its hash chains and segmented LRU (its defaults).
    if o.lru != LruMode::Segmented || !o.hash_chains {
        let field = if o.hash_chains { "lru" } else { "hash_chains" };
        return fail(
            wl(i, &format!("memcached.{field}")),
            "the guest's memcached keeps its hash chains and segmented LRU: \
             the model's switches to leave them out have no counterpart there",
        );
    }
    let names = (WorkloadOptions::Memcached(o.clone()).build(seed))
        .map(|g| g.phases())
        .or_else(|e| fail(wl(i, "memcached"), e))?;
    let mut cmd: Vec<String> = [
        "/bin/memtier",
        "-n",
        &w.name,
        "-m",
        MEMCACHED,
        "-s",
        &o.threads.to_string(),
        "-M",
        &(memory >> 20).max(64).to_string(),
        "-e",
        &seed.to_string(),
    ]
    .map(String::from)
    .to_vec();
    for (k, run) in o.phase.iter().enumerate() {
        let label = if names.len() > 1 {
            names[k].as_str()
        } else {
            ""
        };
        cmd.extend(["-H".into(), memtier_run(i, k, run, label, seed)?]);
    }
    Ok(cmd)
}

/// What of a memtier run the guest's client cannot do, as an error at its field.
fn memtier_unsupported(i: usize, k: usize, r: &MemtierOptions) -> Result<(), PlanError> {
    let field = |f: &str| {
        let mut p = wl(i, "memcached.phase");
        p.push(Step::Index(k));
        p.push(key(f));
        p
    };
    let prefix_ok = r
        .key_prefix
        .chars()
        .all(|c| c.is_ascii_graphic() && c != ',');
    let unsupported = [
        (
            "pipeline",
            r.pipeline > MAX_PIPELINE || r.pipeline * one_request(r) > PIPELINE_BYTES,
            "keeps at most 1024 requests of at most 64 KiB in all in flight a connection \
             (pipeline × (data-size + 128 bytes))",
        ),
        (
            "key-prefix",
            !prefix_ok,
            "takes key prefixes of printable characters but ','",
        ),
        (
            "clients",
            r.clients > 256,
            "opens at most 256 connections a thread",
        ),
    ];
    if let Some((f, _, what)) = unsupported.iter().find(|u| u.1) {
        return fail(field(f), format!("the guest's memtier-like client {what}"));
    }
    Ok(())
}

/// The most requests a connection of the memtier-like client keeps in flight
/// (`memtier.c`'s `MAXPIPE`).
const MAX_PIPELINE: u64 = 1024;

/// The most bytes of requests (or of replies) a connection keeps in flight: the client
/// sends with a blocking `send`, which must not wait on memcached while memcached waits
/// to send its replies; 64 KiB stays within loopback TCP's socket buffers (`tcp_rmem`'s
/// default of 128 KiB on 6.1) in each direction.
const PIPELINE_BYTES: u64 = 64 << 10;

/// The bytes of one request or reply, at most: the value, the key and a line of protocol
/// (`memtier.c`'s own bound).
fn one_request(r: &MemtierOptions) -> u64 {
    r.data_size.0 + r.key_prefix.len() as u64 + 128
}

/// Where the guest has the host's memcached.
pub(crate) const MEMCACHED: &str = "/bin/memcached";

/// One memtier run as `memtier -H`'s argument: LABEL,SETPAT,GETPAT,SETS,GETS,DATA,MIN,
/// MAX,PREFIX,REQUESTS,SECONDS,CLIENTS,THREADS,MEASURE,STREAM,DISTINCT,PIPELINE,STDDEV,
/// MEDIAN,ZIPFEXP,DELAY,COUNT,WAIT: G's standard deviation and median as the model
/// resolves them (`Run::parse`: 0 is a sixth of the key range and its middle), Z's
/// exponent, the seconds the run waits after the one before (`delay`), its `run-count`,
/// and the workload or phase it waits for first (`wait-for`, checked by the plan's
/// `memtier_waits`; empty: none).
fn memtier_run(
    i: usize,
    k: usize,
    r: &MemtierOptions,
    label: &str,
    seed: u64,
) -> Result<String, PlanError> {
    memtier_unsupported(i, k, r)?;
    let pattern = r.key_pattern.replace(':', "");
    let (sets, gets) = r.ratio.split_once(':').unwrap_or(("1", "10"));
    let (min, max) = (r.key_minimum, r.key_maximum);
    let total = r.clients * r.threads;
    let requests = match (&r.requests, r.test_time) {
        (Some(Requests::Count(n)), _) => *n,
        (Some(Requests::Keyword(_)), _) if pattern == "PP" => (max - min) / total + 1,
        (Some(Requests::Keyword(_)), _) => max - min,
        (None, Some(_)) => 0,
        (None, None) => 10_000,
    };
    let seconds = r.test_time.map_or(0.0, |t| t.secs_f64());
    let stream = if r.randomize { seed ^ k as u64 } else { 0 };
    let mut b = pattern.bytes().map(char::from);
    let (sp, gp) = (b.next().unwrap_or('R'), b.next().unwrap_or('R'));
    let len = (max - min) as f64;
    let stddev = match r.key_stddev {
        0.0 => len / 6.0,
        s => s,
    };
    let median = match r.key_median {
        0.0 => len / 2.0 + min as f64 + 0.5,
        m => m,
    };
    Ok(format!(
        "{label},{sp},{gp},{},{},{},{min},{max},{},{requests},{seconds},{},{},{},{stream},{},{},\
         {stddev},{median},{},{},{},{}",
        sets.trim(),
        gets.trim(),
        r.data_size.0,
        r.key_prefix,
        r.clients,
        r.threads,
        u8::from(r.measure),
        u8::from(r.distinct_client_seed),
        r.pipeline,
        r.key_zipf_exp,
        r.delay.secs_f64(),
        r.run_count,
        r.wait_for.as_deref().unwrap_or(""),
    ))
}

/// A trace replay as `trace`'s arguments, its files (one per file the trace touches,
/// `/mnt/NAME+K.0`, written at layout) and the replay of each thread
/// (`/trace/NAME.T`): the model's own replay (`Trace`'s first pass and its `next`),
/// run here, so the guest touches the same pages of the same regions and files in the
/// same order.
#[allow(clippy::type_complexity)]
pub(crate) fn trace(
    i: usize,
    w: &WorkloadConfig,
    o: &TraceOptions,
) -> Result<(Vec<String>, Vec<Files>, Vec<(String, Vec<u8>)>), PlanError> {
    let path = || wl(i, "trace.path");
    let mut gen = WorkloadOptions::Trace(o.clone())
        .build(0)
        .or_else(|e| fail(path(), e))?;
    let layout = gen.layout();
    if layout.files.len() > MAX_TRACE_FILES {
        return fail(
            path(),
            format!(
                "the trace touches {} files; the guest replays at most {MAX_TRACE_FILES}",
                layout.files.len()
            ),
        );
    }
    let threads = layout.threads();
    if threads as u64 > MAX_WORKERS {
        return fail(
            wl(i, "trace.tenants"),
            format!("the guest replays at most {MAX_WORKERS} tenants"),
        );
    }
    let replays = thread_replays(gen.as_mut(), &layout, &w.name).or_else(|e| fail(path(), e))?;
    let files = (layout.files.iter().enumerate())
        .map(|(k, f)| Files {
            name: format!("{}+{k}", w.name),
            memcg: w.memcg.clone(),
            count: 1,
            bytes: f.pages * 4096,
            sparse: false,
            blocks: true,
        })
        .collect();
    let mut cmd: Vec<String> = [
        "/bin/trace",
        "-n",
        &w.name,
        "-d",
        "/mnt",
        "-R",
        REPLAY_DIR,
        "-t",
        &threads.to_string(),
        "-F",
        &layout.files.len().to_string(),
    ]
    .map(String::from)
    .to_vec();
    for p in 0..threads {
        let memcg = gen.process_memcg(p).unwrap_or(&w.memcg);
        cmd.extend(["-c".into(), memcg.to_string()]);
    }
    Ok((cmd, files, replays))
}

/// Each thread's replay as `(path in the guest, bytes)`.
fn thread_replays(
    gen: &mut dyn Workload,
    layout: &Layout,
    name: &str,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut budget = MAX_REPLAY_TOUCHES;
    let mut replays = Vec::new();
    for t in 0..layout.threads() {
        let anon = layout.thread_process[t]
            .and_then(|p| layout.processes.get(p))
            .and_then(|p| p.regions.first())
            .map_or(0, |r| match r {
                RegionSpec::Anon { pages } => *pages,
                RegionSpec::File { .. } => 0,
            });
        let records = replay(gen, t, anon, &mut budget)?;
        let bytes: Vec<u8> = records.iter().flat_map(|r| r.to_le_bytes()).collect();
        replays.push((format!("{REPLAY_DIR}/{name}.{t}"), bytes));
    }
    match gen.failure() {
        Some(e) => Err(e),
        None => Ok(replays),
    }
}

/// A replay record (see `guest/trace.c`): the kind in bits 63-62, the last touch of a
/// request in bit 61, a store in bit 60, the file in bits 59-40, the page in 39-0.
const END: u64 = 1 << 61;
const STORE: u64 = 1 << 60;
const SLEEP: u64 = 3 << 62;

fn record(t: &Touch) -> Result<u64, String> {
    let page = |p: u64| {
        (p < 1 << 40)
            .then_some(p)
            .ok_or("a page beyond the guest's replay (2^40 pages)")
    };
    Ok(match *t {
        Touch::Mem { page: p, write, .. } => page(p)? | if write { STORE } else { 0 },
        Touch::Read { file, index } => 1 << 62 | u64::from(file) << 40 | page(index)?,
        Touch::Write { file, index } => 2 << 62 | u64::from(file) << 40 | page(index)?,
        Touch::Unmap { .. } | Touch::Cpu { .. } => {
            return Err(format!("the guest's replay has no {t:?}"))
        }
    })
}

/// Thread `t`'s replay as the model makes it: a header (its anonymous pages), then its
/// touches, requests ended by `END`, and a sleep record before a request that waits
/// for its time. `budget` is what is left of `MAX_REPLAY_TOUCHES`.
fn replay(
    gen: &mut dyn Workload,
    t: usize,
    anon: u64,
    budget: &mut u64,
) -> Result<Vec<u64>, String> {
    let mut out = vec![anon];
    let (mut now, mut touches) = (0u64, Vec::new());
    loop {
        touches.clear();
        match gen.next(t, now, &mut touches) {
            WlStep::Op { .. } => {
                let n = touches.len() as u64;
                if n > *budget {
                    return Err(format!(
                        "the replay has more than {MAX_REPLAY_TOUCHES} page touches; the \
                         guest carries at most that many in its initramfs (8 bytes each): \
                         cut the trace"
                    ));
                }
                *budget -= n;
                for touch in &touches {
                    out.push(record(touch)?);
                }
                if let Some(last) = out.last_mut().filter(|_| n > 0) {
                    *last |= END;
                }
            }
            WlStep::Sleep { until_ns } => {
                out.push(SLEEP | until_ns.min((1 << 62) - 1));
                now = until_ns;
            }
            WlStep::Done => return Ok(out),
            s => return Err(format!("the guest's replay has no {s:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `requests = "allkeys"` under P:P is memtier's keys / connections + 1 each, as the
    /// model counts them (2 x 10,000 covers keys 1 to 20,000).
    #[test]
    fn a_memtier_run_maps_to_its_spec() {
        let run =
            |json: serde_json::Value| -> MemtierOptions { serde_json::from_value(json).unwrap() };
        let load = run(serde_json::json!({ "key-pattern": "P:P", "ratio": "1:0",
            "requests": "allkeys", "key-minimum": 1, "key-maximum": 20000, "clients": 1,
            "threads": 2, "data-size": 512, "measure": false }));
        assert_eq!(
            memtier_run(0, 0, &load, "load", 7).unwrap(),
            "load,P,P,1,0,512,1,20000,memtier-,10000,0,1,2,0,0,0,1,3333.1666666666665,10001,1,0,1,"
        );
        let timed = run(serde_json::json!({ "test-time": "2s", "randomize": true,
            "distinct-client-seed": true }));
        assert_eq!(
            memtier_run(0, 1, &timed, "", 6).unwrap(),
            ",R,R,1,10,32,0,10000000,memtier-,0,2,50,4,1,7,1,1,1666666.6666666667,5000000.5,1,0,1,"
        );
        // the seed's populate: 8 requests of 2,000 bytes in flight a connection
        let seed = run(serde_json::json!({ "key-pattern": "P:P", "ratio": "1:0",
            "data-size": 2000, "pipeline": 8, "requests": 100 }));
        let spec = memtier_run(0, 0, &seed, "populate", 1).unwrap();
        assert!(spec.contains(",1,0,0,8,"), "{spec}");
        let mut field = wl(0, "memcached.phase");
        field.extend([Step::Index(0), key("pipeline")]);
        // 32 x (2,000 + 8 + 128) bytes: past 64 KiB; 2,048 requests: past 1,024
        for (data, pipeline) in [(2000, 32), (32, 2048)] {
            let deep = run(serde_json::json!({ "data-size": data, "pipeline": pipeline }));
            assert_eq!(memtier_run(0, 0, &deep, "", 1).unwrap_err().field, field);
        }
        let ok = run(serde_json::json!({ "data-size": 2000, "pipeline": 30 }));
        assert!(memtier_run(0, 0, &ok, "", 1).is_ok());
        // G's and Z's parameters as given, or G's as the model resolves them
        let g = run(
            serde_json::json!({ "key-pattern": "G:Z", "key-minimum": 100,
            "key-maximum": 700, "key-zipf-exp": 0.8 }),
        );
        let spec = memtier_run(3, 1, &g, "", 0).unwrap();
        assert!(spec.starts_with(",G,Z,"), "{spec}");
        assert!(spec.ends_with(",1,100,400.5,0.8,0,1,"), "{spec}");
        let g = run(
            serde_json::json!({ "key-pattern": "G:G", "key-stddev": 12.5,
            "key-median": 300.25, "key-minimum": 100, "key-maximum": 700 }),
        );
        let spec = memtier_run(3, 1, &g, "", 0).unwrap();
        assert!(spec.ends_with(",1,12.5,300.25,1,0,1,"), "{spec}");
        // the script's sleep before each run, in seconds, and the runs of a phase
        let late = run(serde_json::json!({ "delay": "300ms", "run-count": 3 }));
        assert!(memtier_run(0, 1, &late, "run", 1)
            .unwrap()
            .ends_with(",1,0.3,3,"));
    }

    #[test]
    fn replay_records_say_what_trace_c_reads() {
        let r = |t| record(&t).unwrap();
        let mem = |page, write| Touch::Mem {
            region: 0,
            page,
            write,
        };
        assert_eq!(r(mem(5, false)), 5);
        assert_eq!(r(mem(5, true)), STORE | 5);
        assert_eq!(r(Touch::Read { file: 2, index: 7 }), 1 << 62 | 2 << 40 | 7);
        assert_eq!(r(Touch::Write { file: 1, index: 3 }), 2 << 62 | 1 << 40 | 3);
        assert!(record(&Touch::Unmap { region: 0 }).is_err());
        assert!(record(&mem(1 << 40, false)).is_err());
    }

    /// The replay stops at its budget of touches with an error saying so; a trace with
    /// `timing = "trace"` gets a sleep record before each request that waits.
    #[test]
    fn a_replay_past_its_budget_is_an_error_and_waits_are_sleeps() {
        let dir = std::env::temp_dir().join(format!("reclaimsim-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pagetrace");
        let text = "time,tenant,target,offset,op\n0,a,anon,0,r\n5,a,anon,4096,w\n9,a,anon,0,r\n";
        std::fs::write(&path, text).unwrap();
        let options = |timing: &str| -> TraceOptions {
            serde_json::from_value(serde_json::json!({ "path": path, "timing": timing })).unwrap()
        };
        let build = |timing| WorkloadOptions::Trace(options(timing)).build(0).unwrap();
        let mut budget = 2;
        let e = replay(build("fast").as_mut(), 0, 2, &mut budget).unwrap_err();
        assert!(e.contains("more than 1048576 page touches"), "{e}");
        let mut budget = 3;
        let fast = replay(build("fast").as_mut(), 0, 2, &mut budget).unwrap();
        assert_eq!(fast, [2, END, STORE | 1 | END, END]);
        assert_eq!(budget, 0);
        let mut budget = 10;
        let timed = replay(build("trace").as_mut(), 0, 2, &mut budget).unwrap();
        assert_eq!(timed, [2, END, SLEEP | 5, STORE | 1 | END, SLEEP | 9, END]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
