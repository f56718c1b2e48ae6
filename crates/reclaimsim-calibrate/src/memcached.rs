//! memcached's own work per request: the server's CPU time per GET and per SET of the
//! seeds' value sizes, over loopback with no memory pressure, driven by a small
//! memtier-like client speaking the text protocol (several connections, one request in
//! flight on each: memtier's `--pipeline 1`). The client threads' own CPU time is
//! measured the same way, for the model's memtier client.

use crate::stats::{self, Summary};
use crate::{tool_version, Measurement, Outcome, Scale};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Client connections, each with one request in flight.
const CONNS: u64 = 4;
/// memcached worker threads (`-t`, memcached's default).
const THREADS: u32 = 4;
/// Seconds per round: a few hundred ticks of the server's CPU time (100 per second).
const ROUND_S: f64 = 0.4;

/// A memcached server of ours on a loopback port, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts memcached on a free loopback port and waits until it accepts connections.
fn start() -> Result<Server, String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free loopback port: {e}"))?
        .port();
    let mut cmd = Command::new("memcached");
    cmd.args(["-l", "127.0.0.1", "-U", "0", "-m", "1024", "-c", "1024"])
        .args(["-p", &port.to_string(), "-t", &THREADS.to_string()]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.args(["-u", "root"]); // memcached refuses to run as root without it
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start memcached: {e}"))?;
    let mut server = Server { child, port };
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(format!("memcached exited at start ({status})"));
        }
        if Instant::now() > deadline {
            return Err("memcached did not accept connections within 5 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(server)
}

/// The process's CPU time so far (utime + stime of /proc/PID/stat), in ns.
fn cpu_ns(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    // Fields after the command name, which is in parentheses and may hold spaces:
    // state is field 3, utime 14, stime 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    let (Some(utime), Some(stime)) = (ticks(11), ticks(12)) else {
        return Err(format!("/proc/{pid}/stat: no utime and stime"));
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Ok((utime + stime) * 1e9 / hz)
}

/// The calling thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID), in ns.
fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec, which ts is.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// One text-protocol connection.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    line: String,
}

impl Conn {
    fn open(port: u16) -> io::Result<Conn> {
        let writer = TcpStream::connect(("127.0.0.1", port))?;
        writer.set_nodelay(true)?;
        let reader = BufReader::new(writer.try_clone()?);
        Ok(Conn {
            reader,
            writer,
            line: String::new(),
        })
    }

    fn expect_line(&mut self, want: &str) -> io::Result<()> {
        self.line.clear();
        self.reader.read_line(&mut self.line)?;
        if self.line != want {
            let got = self.line.trim_end();
            return Err(io::Error::other(format!(
                "memcached answered {got:?}, not {:?}",
                want.trim_end()
            )));
        }
        Ok(())
    }

    /// Sends the requests for `keys` in one write (memtier's pipeline) and reads their
    /// answers: STORED for a SET, the value for a GET.
    fn batch(
        &mut self,
        load: &Load,
        keys: &[u64],
        value: &[u8],
        data: &mut Vec<u8>,
    ) -> io::Result<()> {
        let mut req = Vec::new();
        for key in keys {
            if load.get {
                write!(req, "get memtier-{key}\r\n")?;
            } else {
                write!(req, "set memtier-{key} 0 0 {}\r\n", value.len())?;
                req.extend_from_slice(value);
                req.extend_from_slice(b"\r\n");
            }
        }
        self.writer.write_all(&req)?;
        for key in keys {
            if !load.get {
                self.expect_line("STORED\r\n")?;
                continue;
            }
            self.expect_line(&format!("VALUE memtier-{key} 0 {}\r\n", load.value))?;
            data.resize(load.value + 2, 0);
            self.reader.read_exact(data)?;
            self.expect_line("END\r\n")?;
        }
        Ok(())
    }
}

/// What one round asks for: SETs or GETs of `value` bytes over keys `keys`, `pipeline`
/// at a time on each connection.
#[derive(Clone)]
struct Load {
    get: bool,
    value: usize,
    keys: std::ops::Range<u64>,
    pipeline: u64,
}

/// One client connection's requests: through its share of the keys once (`until` none:
/// populating), or random keys until `until`. The requests made, and the thread's CPU ns
/// spent making them (after connecting).
fn client(port: u16, c: u64, load: &Load, until: Option<Instant>) -> io::Result<(u64, f64)> {
    let mut conn = Conn::open(port)?;
    let cpu = thread_cpu_ns();
    let (value, mut data) = (vec![b'x'; load.value], Vec::new());
    let span = load.keys.end - load.keys.start;
    let mut x = (c + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let (mut n, mut keys) = (0u64, Vec::new());
    loop {
        keys.clear();
        for _ in 0..load.pipeline {
            keys.push(match until {
                None if c + (n + keys.len() as u64) * CONNS >= span => break,
                None => load.keys.start + c + (n + keys.len() as u64) * CONNS,
                Some(_) => {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    load.keys.start + x % span
                }
            });
        }
        if keys.is_empty() || until.is_some_and(|t| Instant::now() >= t) {
            return Ok((n, thread_cpu_ns() - cpu));
        }
        conn.batch(load, &keys, &value, &mut data)?;
        n += keys.len() as u64;
    }
}

/// Runs `CONNS` clients at once; the requests they made and their CPU ns.
fn drive(port: u16, load: &Load, until: Option<Instant>) -> Result<(u64, f64), String> {
    let threads: Vec<_> = (0..CONNS)
        .map(|c| {
            let load = load.clone();
            std::thread::spawn(move || client(port, c, &load, until))
        })
        .collect();
    let (mut total, mut cpu) = (0, 0.0);
    for t in threads {
        let r = t
            .join()
            .map_err(|_| "a client thread panicked".to_string())?;
        let (n, ns) = r.map_err(|e| e.to_string())?;
        (total, cpu) = (total + n, cpu + ns);
    }
    Ok((total, cpu))
}

/// Server and client CPU ns per request over timed rounds of `load` (after one untimed
/// round).
fn cpu_per_request(s: &Scale, server: &Server, load: &Load) -> Result<[Summary; 2], String> {
    let (mut samples, mut clients, mut requests) = (Vec::new(), Vec::new(), 0);
    for round in 0..=s.rounds(5) {
        let before = cpu_ns(server.child.id())?;
        let until = Instant::now() + s.seconds(ROUND_S);
        let (n, client_ns) = drive(server.port, load, Some(until))?;
        let used = cpu_ns(server.child.id())? - before;
        if round > 0 {
            samples.push(used / n.max(1) as f64);
            clients.push(client_ns / n.max(1) as f64);
            requests += n;
        }
    }
    let server = stats::summarize(&samples, requests).ok_or("no rounds")?;
    let client = stats::summarize(&clients, requests).ok_or("no rounds")?;
    Ok([server, client])
}

/// The cases measured: SET and GET of each size one request at a time, and GETs of
/// 2000-byte values eight at a time as the seeds' memtier ran (`--pipeline 8`).
const CASES: [(bool, usize, u64); 5] = [
    (false, 32, 1),
    (true, 32, 1),
    (false, 2000, 1),
    (true, 2000, 1),
    (true, 2000, 8),
];

/// memcached's CPU time per SET and per GET of 32-byte and 2000-byte values.
pub fn memcached(s: &Scale) -> Vec<Outcome> {
    let fail = |e: String| vec![Err(("memcached".to_string(), e))];
    let version = match tool_version("memcached", "-V") {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let server = match start() {
        Ok(server) => server,
        Err(e) => return fail(e),
    };
    let n = s.iters(20_000);
    // Each size its own keys, populated before its cases run.
    let keys = |value: usize| {
        if value == 32 {
            1..n + 1
        } else {
            n + 1..2 * n + 1
        }
    };
    for value in [32, 2000] {
        let populate = Load {
            get: false,
            value,
            keys: keys(value),
            pipeline: 1,
        };
        if let Err(e) = drive(server.port, &populate, None) {
            return fail(format!("populating: {e}"));
        }
    }
    let mut out: Vec<Outcome> = CASES
        .into_iter()
        .flat_map(|(get, value, pipeline)| {
            let load = Load {
                get,
                value,
                keys: keys(value),
                pipeline,
            };
            let setup = format!(
                "{version} (-t {THREADS}) on loopback TCP, text protocol, {CONNS} connections of \
                 ours with {pipeline} request(s) in flight each; {} of {value}-byte values over \
                 {n} populated keys memtier-N, no memory pressure",
                if get { "get" } else { "set" }
            );
            case(s, &server, &load, &setup)
        })
        .collect();
    out.push(batch_work(&out, "memcached"));
    out.push(batch_work(&out, "memtier_client"));
    out
}

/// One case's two measurements: the server's CPU per request (`memcached_OP_SIZE`) and
/// our client threads' (`memtier_client_OP_SIZE`), `_pipelineN` when N are in flight.
fn case(s: &Scale, server: &Server, load: &Load, setup: &str) -> [Outcome; 2] {
    let op = if load.get { "get" } else { "set" };
    let tail = match load.pipeline {
        1 => String::new(),
        p => format!("_pipeline{p}"),
    };
    let names = [
        format!("memcached_{op}_{}{tail}", load.value),
        format!("memtier_client_{op}_{}{tail}", load.value),
    ];
    let secs = s.seconds(ROUND_S).as_secs_f64();
    let hows = [
        format!(
            "{setup}; server CPU time (utime + stime of /proc/PID/stat) per request over \
             {secs:.1} s rounds"
        ),
        format!(
            "{setup}; CPU time of our memtier-like client threads (CLOCK_THREAD_CPUTIME_ID, \
             after connecting: building requests, the send and receive syscalls, parsing \
             replies; no latency statistics, so lighter than memtier) per request over \
             {secs:.1} s rounds"
        ),
    ];
    match cpu_per_request(s, server, load) {
        Ok(sums) => [0, 1].map(|i| Ok(Measurement::new(&names[i], sums[i], hows[i].clone()))),
        Err(e) => [0, 1].map(|i| Err((names[i].clone(), e.clone()))),
    }
}

/// The CPU time per pipeline batch of a connection (epoll wake-up, read, send), of the
/// server (`prefix` "memcached") or of the client ("memtier_client"): GETs one at a time
/// pay it per request, eight at a time an eighth of it, so it is 8/7 of the difference.
/// The spread pairs the extremes of the two.
fn batch_work(cases: &[Outcome], prefix: &str) -> Outcome {
    let name = format!("{prefix}_batch_get_2000");
    let find = |want: &str| {
        cases
            .iter()
            .flatten()
            .find(|m| m.name == want)
            .map(|m| m.summary)
            .ok_or_else(|| (name.clone(), format!("{want} was not measured")))
    };
    let (one, eight) = (
        find(&format!("{prefix}_get_2000"))?,
        find(&format!("{prefix}_get_2000_pipeline8"))?,
    );
    let of = |a: f64, b: f64| (a - b) * 8.0 / 7.0;
    let summary = Summary {
        median: of(one.median, eight.median),
        p10: of(one.p10, eight.p90),
        p90: of(one.p90, eight.p10),
        mad: (one.mad + eight.mad) * 8.0 / 7.0,
        rounds: one.rounds.min(eight.rounds),
        iterations: one.iterations + eight.iterations,
    };
    let how = format!(
        "8/7 x ({prefix}_get_2000 - {prefix}_get_2000_pipeline8): a batch's network work is \
         paid by each request one at a time and by one in eight at --pipeline 8"
    );
    Ok(Measurement::new(&name, summary, how))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_work_is_eight_sevenths_of_the_pipelining_saving() {
        let m = |name: &str, median: f64| {
            let summary = Summary {
                median,
                p10: median - 100.0,
                p90: median + 100.0,
                mad: 50.0,
                rounds: 5,
                iterations: 1000,
            };
            Ok(Measurement::new(name, summary, String::new()))
        };
        let cases = vec![
            m("memcached_get_2000", 9400.0),
            m("memcached_get_2000_pipeline8", 5400.0),
        ];
        let batch = batch_work(&cases, "memcached").unwrap();
        assert!((batch.summary.median - 4000.0 * 8.0 / 7.0).abs() < 1e-6);
        assert!(
            batch.summary.p10 < batch.summary.median && batch.summary.median < batch.summary.p90
        );
        let (name, why) = batch_work(&cases[..1], "memcached").unwrap_err();
        assert_eq!(name, "memcached_batch_get_2000");
        assert!(why.contains("pipeline8"), "{why}");
    }

    #[test]
    fn cpu_time_comes_from_proc_stat() {
        let ns = cpu_ns(std::process::id()).unwrap();
        assert!(ns >= 0.0 && ns.is_finite());
        assert!(cpu_ns(u32::MAX).is_err());
    }

    #[test]
    fn the_client_speaks_memcacheds_text_protocol() {
        if let Err(why) = tool_version("memcached", "-V") {
            eprintln!("skipped: {why}");
            return;
        }
        let server = start().unwrap();
        let set = Load {
            get: false,
            value: 100,
            keys: 1..41,
            pipeline: 1,
        };
        assert_eq!(
            drive(server.port, &set, None).map(|r| r.0),
            Ok(40),
            "each key once"
        );
        let get = Load {
            get: true,
            pipeline: 8,
            ..set
        };
        let until = Instant::now() + Duration::from_millis(50);
        let (n, cpu) = drive(server.port, &get, Some(until)).unwrap();
        assert!(cpu > 0.0, "the client threads used CPU time");
        assert!(n >= 8 * CONNS && n % 8 == 0, "{n}");
        let missing = Load {
            keys: 1000..1001,
            pipeline: 1,
            ..get
        };
        let until = Instant::now() + Duration::from_millis(50);
        let e = drive(server.port, &missing, Some(until)).unwrap_err();
        assert!(e.contains("memcached answered \"END\""), "{e}");
    }
}
