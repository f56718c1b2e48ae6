//! fio jobs doing buffered 4 KiB reads (`rw=read|randread`), one file per job.

use super::{check_count, stream_rng, FileSpec, Layout, Rng, Step, Touch, Workload};
use crate::scenario::units::{ByteSize, Duration, PAGE_SIZE};
use rand::{Rng as _, RngCore};
use serde::Deserialize;

/// An fio job section (`--name=... --numjobs=N --size=S --buffered=1`): `numjobs` clones,
/// each reading its own file of `size` through the page cache. Option names and
/// defaults are fio's.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FioOptions {
    /// `read` (sequential) or `randread`. Default `read`.
    #[serde(default = "default_rw")]
    pub rw: String,
    /// File size of each job.
    pub size: ByteSize,
    /// Number of clones of the job, each with its own file. Default 1.
    #[serde(default = "one")]
    pub numjobs: u64,
    /// Block size; only 4k is modelled. Default 4k.
    #[serde(default = "default_bs")]
    pub bs: ByteSize,
    /// `random` (uniform) or `zipf[:θ[:center]]` (θ defaults to 1.1). Default `random`.
    #[serde(default = "default_distribution")]
    pub random_distribution: String,
    /// Draw random offsets with replacement instead of covering every block once per pass.
    #[serde(default)]
    pub norandommap: bool,
    /// Keep going over the file until `ramp_time + runtime` instead of stopping after one
    /// pass of `size` bytes.
    #[serde(default)]
    pub time_based: bool,
    /// Warm-up excluded from the results. Default 0.
    #[serde(default)]
    pub ramp_time: Duration,
    /// Measured run time after the ramp (required with `time_based`).
    pub runtime: Option<Duration>,
    /// `psync` (fio's default on Linux: one pread(2) per I/O) or `io_uring`. Default psync.
    #[serde(default)]
    pub ioengine: IoEngine,
    /// I/Os in flight (io_uring only; a sync engine runs at depth 1). Default 1.
    #[serde(default = "one")]
    pub iodepth: u64,
    /// I/Os submitted per io_uring_enter (io_uring only). Default 1.
    #[serde(default = "one")]
    pub iodepth_batch_submit: u64,
    /// Completions reaped at least per io_uring_enter (io_uring only). Default 1.
    #[serde(default = "one")]
    pub iodepth_batch_complete: u64,
}

/// fio's `ioengine`: how a job issues its reads. Either way a buffered read runs
/// filemap_read in the job's own context: a page-cache hit copies at once, and a miss on
/// the model's devices (brd, the page cache) completes inside the submission, so the
/// engines differ in their per-I/O CPU cost (`fio_psync_io`, `fio_io`), not in waits.
#[derive(Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    #[default]
    Psync,
    IoUring,
}

impl FioOptions {
    /// The engine options fio itself would reject or ignore: depths for a sync engine,
    /// batches larger than the depth.
    fn check_engine(&self) -> Result<(), String> {
        if self.iodepth == 0 {
            return Err("fio.iodepth: must be at least 1".into());
        }
        let batches = [
            ("iodepth_batch_submit", self.iodepth_batch_submit),
            ("iodepth_batch_complete", self.iodepth_batch_complete),
        ];
        if self.ioengine == IoEngine::Psync {
            if let Some((name, _)) = [("iodepth", self.iodepth)]
                .into_iter()
                .chain(batches)
                .find(|&(_, v)| v != 1)
            {
                return Err(format!(
                    "fio.{name}: psync is synchronous (depth 1); use ioengine = \"io_uring\""
                ));
            }
        }
        match batches
            .into_iter()
            .find(|&(_, v)| v == 0 || v > self.iodepth)
        {
            Some((name, v)) => Err(format!(
                "fio.{name}: {v} must be between 1 and iodepth ({})",
                self.iodepth
            )),
            None => Ok(()),
        }
    }
}

fn default_rw() -> String {
    "read".into()
}
fn one() -> u64 {
    1
}
fn default_bs() -> ByteSize {
    ByteSize(PAGE_SIZE)
}
fn default_distribution() -> String {
    "random".into()
}

/// fio's `random_distribution` (also the anon workload's random patterns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Distribution {
    Uniform,
    Zipf { theta: f64, center: Option<f64> },
}

impl Distribution {
    /// Parses `random` or `zipf[:θ[:center]]` as fio does (θ > 0, θ ≠ 1, default 1.1;
    /// center in [0, 1]).
    pub(crate) fn parse(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let float = |p: &str| -> Result<f64, String> {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{p}` is not a number in `{s}`"))
        };
        match parts[..] {
            ["random"] => Ok(Self::Uniform),
            ["zipf", ref rest @ ..] if rest.len() <= 2 => {
                let theta = rest.first().map_or(Ok(1.1), |t| float(t))?;
                if theta <= 0.0 || theta == 1.0 {
                    return Err(format!(
                        "zipf theta must be > 0 and different from 1.0 (got {theta})"
                    ));
                }
                let center = rest.get(1).map(|c| float(c)).transpose()?;
                if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
                    return Err(format!("zipf center must be in [0, 1] in `{s}`"));
                }
                Ok(Self::Zipf { theta, center })
            }
            _ => Err(format!("`{s}` is not supported (use random or zipf:θ)")),
        }
    }
}

/// fio's zipf offset generator (`lib/zipf.c`, Gray et al.'s method as used by YCSB): a
/// popularity rank from the closed-form approximation of the inverse CDF, scattered over
/// the file by a multiplicative hash and a per-job offset.
#[derive(Clone, Debug)]
pub(crate) struct Zipf {
    n: u64,
    /// ζ(2, θ) = 1 + 0.5^θ, the bound of rank 2 (kept rather than recomputed per draw).
    zeta2: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

/// fio sums at most this many terms of ζ(n, θ).
const ZETA_MAX_TERMS: u64 = 10_000_000;

impl Zipf {
    pub(crate) fn new(n: u64, theta: f64) -> Self {
        let zetan: f64 = (1..=n.min(ZETA_MAX_TERMS))
            .map(|i| (1.0 / i as f64).powf(theta))
            .sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        Zipf {
            n,
            zeta2,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    /// The per-job offset fio adds to every hashed rank: random, or `center × n`.
    pub(crate) fn offset(&self, center: Option<f64>, rng: &mut Rng) -> u64 {
        center.map_or(u64::from(rng.next_u32()), |c| (self.n as f64 * c) as u64)
    }

    /// The 1-based popularity rank for a uniform draw `u` in [0, 1].
    fn rank(&self, u: f64) -> u64 {
        let z = u * self.zetan;
        if z < 1.0 {
            1
        } else if z < self.zeta2 {
            2
        } else {
            // `as` saturates (and maps NaN to 0), so extreme θ cannot overflow.
            let x = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
            x.saturating_add(1)
        }
    }

    /// The next block: `(hash64(rank - 1) + offset) mod n`, with fio's 32-bit uniform draw.
    pub(crate) fn sample(&self, offset: u64, rng: &mut Rng) -> u64 {
        let u = f64::from(rng.next_u32()) / f64::from(u32::MAX);
        let hashed = (self.rank(u) - 1).wrapping_mul(0x61C8_8646_80B5_83EB);
        hashed.wrapping_add(offset) % self.n
    }
}

/// A random bijection of `0..n` (fio's random map: every block once per pass), walked by
/// feeding a counter through a keyed mix on the next power of two and skipping values
/// `>= n` (cycle-walking).
#[derive(Clone, Debug)]
struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; 3],
    counter: u64,
}

impl Permutation {
    fn new(n: u64, rng: &mut Rng) -> Self {
        let bits = n.next_power_of_two().trailing_zeros();
        Permutation {
            n,
            mask: n.next_power_of_two() - 1,
            shift: bits / 2 + 1,
            keys: [rng.next_u64(), rng.next_u64(), rng.next_u64()],
            counter: 0,
        }
    }

    /// Each step (odd multiply, add, xor-shift right) is a bijection modulo 2^bits.
    fn mix(&self, mut x: u64) -> u64 {
        for k in self.keys {
            x = (x.wrapping_mul(k | 1).wrapping_add(k >> 32)) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The next block of the pass; call at most `n` times.
    fn next(&mut self) -> u64 {
        loop {
            let x = self.mix(self.counter);
            self.counter += 1;
            if x < self.n {
                return x;
            }
        }
    }
}

/// How a job picks its next block.
#[derive(Clone, Debug)]
enum Order {
    Sequential,
    Map(Permutation),
    Uniform,
    Zipf { zipf: Zipf, offset: u64 },
}

#[derive(Clone, Debug)]
struct Job {
    rng: Rng,
    order: Order,
    /// Blocks read in the current pass.
    done: u64,
}

/// The fio generator: thread `j` is job `j` reading file `j`.
pub struct Fio {
    jobs: Vec<Job>,
    blocks: u64,
    time_based: bool,
    ramp_ns: u64,
    end_ns: Option<u64>,
}

impl Fio {
    pub fn new(o: &FioOptions, seed: u64) -> Result<Self, String> {
        let jobs = check_count("fio.numjobs", o.numjobs)?;
        o.check_engine()?;
        if o.size.0 == 0 {
            return Err("fio.size: must be positive".into());
        }
        if o.bs.0 != PAGE_SIZE {
            return Err(format!(
                "fio.bs: only 4k blocks are modelled (got {} bytes)",
                o.bs.0
            ));
        }
        let random = match o.rw.as_str() {
            "read" => false,
            "randread" => true,
            rw => {
                return Err(format!(
                    "fio.rw: `{rw}` is not supported (use read or randread)"
                ))
            }
        };
        let dist = Distribution::parse(&o.random_distribution)
            .map_err(|e| format!("fio.random_distribution: {e}"))?;
        if o.runtime == Some(Duration(0)) {
            return Err("fio.runtime: must be positive".into());
        }
        if o.time_based && o.runtime.is_none() {
            return Err("fio.runtime: time_based needs a runtime".into());
        }
        let blocks = o.size.pages();
        // Non-uniform distributions do without the random map, as in fio.
        let zipf = match dist {
            Distribution::Zipf { theta, center } if random => {
                Some((Zipf::new(blocks, theta), center))
            }
            _ => None,
        };
        let jobs = (0..jobs)
            .map(|j| {
                let mut rng = stream_rng(seed, j as u64);
                let order = match &zipf {
                    _ if !random => Order::Sequential,
                    Some((zipf, center)) => Order::Zipf {
                        offset: zipf.offset(*center, &mut rng),
                        zipf: zipf.clone(),
                    },
                    None if o.norandommap => Order::Uniform,
                    None => Order::Map(Permutation::new(blocks, &mut rng)),
                };
                Job {
                    rng,
                    order,
                    done: 0,
                }
            })
            .collect();
        Ok(Fio {
            jobs,
            blocks,
            time_based: o.time_based,
            ramp_ns: o.ramp_time.0,
            end_ns: o.runtime.map(|r| o.ramp_time.0.saturating_add(r.0)),
        })
    }
}

impl Workload for Fio {
    fn layout(&self) -> Layout {
        Layout {
            files: vec![
                FileSpec {
                    pages: self.blocks,
                    sparse: false
                };
                self.jobs.len()
            ],
            processes: Vec::new(),
            thread_process: vec![None; self.jobs.len()],
        }
    }

    fn phases(&self) -> Vec<String> {
        vec!["run".into()]
    }

    fn measured(&self, _phase: u8, now_ns: u64) -> bool {
        now_ns >= self.ramp_ns
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        if self.end_ns.is_some_and(|end| now_ns >= end) {
            return Step::Done;
        }
        let blocks = self.blocks;
        let job = &mut self.jobs[thread];
        if job.done == blocks {
            if !self.time_based {
                return Step::Done;
            }
            job.done = 0;
            if let Order::Map(p) = &mut job.order {
                *p = Permutation::new(blocks, &mut job.rng);
            }
        }
        let index = match &mut job.order {
            Order::Sequential => job.done,
            Order::Map(p) => p.next(),
            Order::Uniform => job.rng.gen_range(0..blocks),
            Order::Zipf { zipf, offset } => zipf.sample(*offset, &mut job.rng),
        };
        job.done += 1;
        out.push(Touch::Read {
            file: thread as u32,
            index,
        });
        Step::Op {
            phase: 0,
            bytes: PAGE_SIZE as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(toml_text: &str) -> FioOptions {
        toml::from_str(toml_text).unwrap()
    }

    fn reads(w: &mut Fio, thread: usize, n: usize) -> Vec<u64> {
        let mut out = Vec::new();
        (0..n)
            .map(|_| {
                out.clear();
                assert!(matches!(w.next(thread, 0, &mut out), Step::Op { .. }));
                match out[..] {
                    [Touch::Read { index, .. }] => index,
                    _ => panic!("unexpected touches {out:?}"),
                }
            })
            .collect()
    }

    #[test]
    fn zipf_half_is_skewed_and_scattered() {
        let n = 100_000;
        let z = Zipf::new(n, 0.5);
        let mut rng = stream_rng(7, 0);
        let draws = 200_000;
        let top = (0..draws)
            .filter(|_| z.rank(f64::from(rng.next_u32()) / f64::from(u32::MAX)) <= n / 100)
            .count();
        let share = top as f64 / draws as f64;
        assert!((0.08..0.12).contains(&share), "top 1% of ranks got {share}");
        // The hottest 1% of ranks land in every tenth of the file.
        let mut tenths = [0u32; 10];
        for rank in 0..n / 100 {
            let block = rank.wrapping_mul(0x61C8_8646_80B5_83EB) % n;
            tenths[(block * 10 / n) as usize] += 1;
        }
        assert!(tenths.iter().all(|&c| (50..150).contains(&c)), "{tenths:?}");
    }

    #[test]
    fn randread_map_reads_every_block_once_per_pass() {
        let o = options("rw='randread'\nsize=4004000\ntime_based=true\nruntime=1");
        let mut w = Fio::new(&o, 3).unwrap();
        let n = w.blocks as usize;
        assert_eq!(n, 978);
        let mut passes = Vec::new();
        for _ in 0..2 {
            let mut seen = reads(&mut w, 0, n);
            passes.push(seen.clone());
            seen.sort_unstable();
            assert_eq!(seen, (0..n as u64).collect::<Vec<_>>());
        }
        assert_ne!(passes[0], passes[1], "each pass has its own order");
    }

    #[test]
    fn sequential_stops_after_one_pass_unless_time_based() {
        let mut w = Fio::new(&options("size='16k'\nnumjobs=2"), 1).unwrap();
        assert_eq!(reads(&mut w, 1, 4), vec![0, 1, 2, 3]);
        assert_eq!(w.next(1, 0, &mut Vec::new()), Step::Done);
        let o = options("size='8k'\ntime_based=true\nramp_time=1\nruntime=2");
        let mut w = Fio::new(&o, 1).unwrap();
        assert_eq!(reads(&mut w, 0, 4), vec![0, 1, 0, 1]);
        assert!(!w.measured(0, 999_999_999) && w.measured(0, 1_000_000_000));
        assert_eq!(w.next(0, 3_000_000_000, &mut Vec::new()), Step::Done);
    }

    #[test]
    fn deterministic_per_seed() {
        let o = options("rw='randread'\nsize='1m'\nnumjobs=2\nrandom_distribution='zipf:0.5'");
        let stream = |seed| reads(&mut Fio::new(&o, seed).unwrap(), 1, 200);
        assert_eq!(stream(5), stream(5));
        assert_ne!(stream(5), stream(6));
    }

    #[test]
    fn rejects_bad_options() {
        let err = |t: &str| Fio::new(&options(t), 0).err().unwrap();
        assert!(err("size='1m'\nbs='8k'").starts_with("fio.bs:"));
        assert!(err("size=0").starts_with("fio.size:"));
        assert!(err("size='1m'\nnumjobs=0").starts_with("fio.numjobs:"));
        assert!(err("size='1m'\nrw='randwrite'").starts_with("fio.rw:"));
        assert!(err("size='1m'\nrandom_distribution='zipf:1'").contains("theta"));
        assert!(err("size='1m'\nrandom_distribution='zipf:0.5:2'").contains("center"));
        assert!(err("size='1m'\nrandom_distribution='pareto:0.2'").starts_with("fio.random_"));
        assert!(err("size='1m'\ntime_based=true").starts_with("fio.runtime:"));
        assert!(err("size='1m'\niodepth=4").starts_with("fio.iodepth: psync"));
        let uring = "size='1m'\nioengine='io_uring'\niodepth=128\n";
        assert!(Fio::new(&options(&format!("{uring}iodepth_batch_submit=32")), 0).is_ok());
        assert!(err(&format!("{uring}iodepth_batch_complete=129")).contains("between 1 and"));
        assert!(err("size='1m'\nioengine='io_uring'\niodepth=0").starts_with("fio.iodepth:"));
        assert!(toml::from_str::<FioOptions>("size='1m'\nioengine='libaio'").is_err());
    }
}
