//! fio jobs doing buffered 4 KiB I/O through the page cache (`rw`, `rwmixread`), with
//! read(2)/write(2) engines or through a shared mapping (`ioengine = "mmap"`).

use super::distribution::{Distribution, Sampler};
use super::{
    check_count, stream_rng, FileSpec, Layout, ProcessSpec, RegionSpec, Rng, Step, Touch, Workload,
};
use crate::engine::cost::CostTable;
use crate::scenario::units::{ByteSize, Duration, PAGE_SIZE};
use rand::{Rng as _, RngCore};
use serde::Deserialize;

/// An fio job section (`--name=... --numjobs=N --size=S --buffered=1`): `numjobs` clones,
/// each doing I/O on its own `nrfiles` files through the page cache. Option names,
/// meanings and defaults are fio's; sizes are bytes or strings ("4g", fio's base 1024).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FioOptions {
    /// `read`, `write`, `randread`, `randwrite`, `rw` / `readwrite` (sequential mix) or
    /// `randrw`. Default `read`.
    #[serde(default = "default_rw", alias = "readwrite")]
    pub rw: String,
    /// Percent of a mixed job's I/Os that are reads. Default 50.
    pub rwmixread: Option<u64>,
    /// Percent of a mixed job's I/Os that are writes (100 - rwmixread).
    pub rwmixwrite: Option<u64>,
    /// Total size of each clone's I/O region, split evenly over its files. Default:
    /// `filesize × nrfiles`.
    pub size: Option<ByteSize>,
    /// Size of each file. Default: `offset + size / nrfiles`.
    pub filesize: Option<ByteSize>,
    /// Where in each file the I/O region starts. Default 0.
    #[serde(default)]
    pub offset: ByteSize,
    /// Files per clone. Default 1.
    #[serde(default = "one")]
    pub nrfiles: u64,
    /// With several files, which one the next I/O goes to: `roundrobin` (default),
    /// `sequential` (one file's region after the other) or `random`.
    #[serde(default = "default_service")]
    pub file_service_type: String,
    /// Bytes of I/O per loop (fio's io_size, alias io_limit). Default `size`.
    #[serde(alias = "io_limit")]
    pub io_size: Option<ByteSize>,
    /// Repetitions of `io_size`. Default 1.
    #[serde(default = "one")]
    pub loops: u64,
    /// Stop after this many I/Os, whatever else is left.
    pub number_ios: Option<u64>,
    /// Number of clones of the job, each with its own files. Default 1.
    #[serde(default = "one")]
    pub numjobs: u64,
    /// Block size; only 4k is modelled. Default 4k.
    #[serde(default = "default_bs")]
    pub bs: ByteSize,
    /// `random`, `zipf[:θ[:c]]`, `pareto[:h[:c]]`, `normal[:dev[:c]]`, `zoned:A/S:...`
    /// or `zoned_abs:A/SIZE:...` (`distribution::Distribution`). Default `random`.
    #[serde(default = "default_distribution")]
    pub random_distribution: String,
    /// Draw uniform offsets with replacement instead of covering every block once per
    /// pass (fio's random map; the other distributions never use one).
    #[serde(default)]
    pub norandommap: bool,
    /// `tausworthe`, `tausworthe64` (the model's own PRNG either way) or `lfsr` (every
    /// block once per pass, with or without `norandommap`). Default `tausworthe`.
    #[serde(default = "default_generator")]
    pub random_generator: String,
    /// Keep going over the files until `ramp_time + runtime`.
    #[serde(default)]
    pub time_based: bool,
    /// Warm-up excluded from the results. Default 0.
    #[serde(default)]
    pub ramp_time: Duration,
    /// Measured run time after the ramp (required with `time_based`).
    pub runtime: Option<Duration>,
    /// Sleep this long after each I/O (fio's thinktime, off the CPU). Default 0.
    #[serde(default)]
    pub thinktime: Duration,
    /// `psync` (default), `sync`, `mmap`, `io_uring` or `libaio`.
    #[serde(default)]
    pub ioengine: IoEngine,
    /// I/Os in flight (io_uring and libaio; the others run at depth 1). Default 1.
    #[serde(default = "one")]
    pub iodepth: u64,
    /// I/Os submitted per io_uring_enter / io_submit. Default 1.
    #[serde(default = "one", alias = "iodepth_batch")]
    pub iodepth_batch_submit: u64,
    /// Completions reaped at least per io_uring_enter / io_getevents. Default 1.
    #[serde(default = "one", alias = "iodepth_batch_complete_min")]
    pub iodepth_batch_complete: u64,
}

/// fio's `ioengine`: how a job issues its I/O. A buffered read or write runs
/// filemap_read / generic_perform_write in the job's own context: a page-cache hit copies
/// at once, and a miss on the model's devices (brd, the page cache) completes inside the
/// submission, so psync, sync, io_uring and libaio differ in their per-I/O CPU cost
/// (`fio_psync_io`, `fio_io`), not in waits. `mmap` maps each file `MAP_SHARED` and
/// copies to or from the mapping: page faults, mapped file pages, young bits.
#[derive(Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    #[default]
    Psync,
    Sync,
    Mmap,
    IoUring,
    Libaio,
}

impl IoEngine {
    /// Whether the engine queues I/Os (`iodepth` above 1 is meaningful).
    fn is_async(self) -> bool {
        matches!(self, Self::IoUring | Self::Libaio)
    }

    /// fio's own CPU time per I/O apart from what the kernel charges: the async engines'
    /// submission and reaping (`fio_io`), the sync engines' and mmap's loop around one
    /// I/O (`fio_psync_io`; mmap's memcpy replaces the syscall).
    pub fn op_cost(self, costs: &CostTable) -> u64 {
        if self.is_async() {
            costs.fio_io
        } else {
            costs.fio_psync_io
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
fn default_service() -> String {
    "roundrobin".into()
}
fn default_generator() -> String {
    "tausworthe".into()
}

/// Which file of a clone the next I/O goes to (fio's `file_service_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Service {
    RoundRobin,
    Sequential,
    Random,
}

/// Where a clone's I/O goes: `nrfiles` files of `file_pages`, each with the I/O region
/// `[first, first + blocks)`.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    nrfiles: usize,
    file_pages: u64,
    first: u64,
    blocks: u64,
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
        if !self.ioengine.is_async() {
            if let Some((name, _)) = [("iodepth", self.iodepth)]
                .into_iter()
                .chain(batches)
                .find(|&(_, v)| v != 1)
            {
                return Err(format!(
                    "fio.{name}: {:?} is synchronous (depth 1); use ioengine = \"io_uring\" \
                     or \"libaio\"",
                    self.ioengine
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

    /// `rw` and the mix: whether offsets are random, and the percent of reads.
    fn mode(&self) -> Result<(bool, u64), String> {
        let over = [
            ("rwmixread", self.rwmixread),
            ("rwmixwrite", self.rwmixwrite),
        ]
        .into_iter()
        .find_map(|(name, v)| v.filter(|&v| v > 100).map(|v| (name, v)));
        if let Some((name, v)) = over {
            return Err(format!("fio.{name}: {v} is more than 100 (percent)"));
        }
        let mix = match (self.rwmixread, self.rwmixwrite) {
            (Some(r), Some(w)) if r + w != 100 => {
                return Err(format!("fio.rwmixread: {r} + rwmixwrite {w} is not 100"))
            }
            (Some(r), _) => r,
            (None, Some(w)) => 100 - w,
            (None, None) => 50,
        };
        Ok(match self.rw.as_str() {
            "read" => (false, 100),
            "write" => (false, 0),
            "randread" => (true, 100),
            "randwrite" => (true, 0),
            "rw" | "readwrite" => (false, mix),
            "randrw" => (true, mix),
            rw => {
                return Err(format!(
                    "fio.rw: `{rw}` is not supported (read, write, randread, randwrite, rw, \
                     readwrite, randrw; trim is not modelled)"
                ))
            }
        })
    }

    /// Files and I/O regions as fio lays them out: `size / nrfiles` per file (rounded up
    /// to a block, as the model always has) or what `filesize` leaves after `offset`, in
    /// files of `filesize` (or just long enough).
    fn geometry(&self) -> Result<Geometry, String> {
        let nrfiles = check_count("fio.nrfiles", self.nrfiles)?;
        if self.offset.0 % PAGE_SIZE != 0 {
            return Err("fio.offset: must be a multiple of the 4k block size".into());
        }
        let first = self.offset.0 / PAGE_SIZE;
        let room = self
            .filesize
            .map(|f| (f.0 / PAGE_SIZE).saturating_sub(first));
        let blocks = match (self.size, room) {
            (Some(s), room) => (s.0 / nrfiles as u64)
                .div_ceil(PAGE_SIZE)
                .min(room.unwrap_or(u64::MAX)),
            (None, Some(room)) => room,
            (None, None) => return Err("fio.size: give size or filesize".into()),
        };
        if blocks == 0 {
            return Err(format!(
                "fio.size: leaves no 4k block of I/O per file (size {}, filesize {}, offset {}, \
                 nrfiles {nrfiles})",
                show(self.size),
                show(self.filesize),
                self.offset.0
            ));
        }
        Ok(Geometry {
            nrfiles,
            file_pages: self.filesize.map_or(first + blocks, |f| f.0 / PAGE_SIZE),
            first,
            blocks,
        })
    }

    /// I/Os each clone does before it stops (`u64::MAX` when time_based without
    /// number_ios).
    pub fn ios_per_clone(&self) -> Result<u64, String> {
        self.io_limit(&self.geometry()?)
    }

    /// I/Os a clone does before it stops (fio's total_io_size = io_size × loops, capped
    /// by number_ios); unbounded but for number_ios when time_based.
    fn io_limit(&self, g: &Geometry) -> Result<u64, String> {
        if self.loops == 0 || self.number_ios == Some(0) {
            return Err("fio.loops, fio.number_ios: must be positive".into());
        }
        let per_loop = match self.io_size {
            Some(b) if b.0 < PAGE_SIZE => return Err("fio.io_size: less than one 4k block".into()),
            Some(b) => b.0 / PAGE_SIZE,
            None => g.blocks * g.nrfiles as u64,
        };
        let total = if self.time_based {
            u64::MAX
        } else {
            per_loop.saturating_mul(self.loops)
        };
        Ok(total.min(self.number_ios.unwrap_or(u64::MAX)))
    }
}

/// "1048576" or "-".
fn show(b: Option<ByteSize>) -> String {
    b.map_or("-".into(), |b| b.0.to_string())
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
    /// Blocks handed out in this pass.
    done: u64,
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
            done: 0,
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

    /// The next block of the pass; a new order once all `n` were handed out.
    fn next(&mut self, rng: &mut Rng) -> u64 {
        if self.done == self.n {
            *self = Permutation::new(self.n, rng);
        }
        self.done += 1;
        loop {
            let x = self.mix(self.counter);
            self.counter += 1;
            if x < self.n {
                return x;
            }
        }
    }
}

/// How a file's random offsets are picked.
#[derive(Clone, Debug)]
enum Order {
    /// The random map (uniform, each block once per pass).
    Map(Permutation),
    /// Draws from a distribution, with replacement.
    Draw(Sampler),
}

/// One file of a clone: the sequential position per direction (fio's last_pos[ddir])
/// and, for random jobs, how offsets are picked.
#[derive(Clone, Debug)]
struct FileState {
    pos: [u64; 2],
    order: Option<Order>,
}

#[derive(Clone, Debug)]
struct Job {
    rng: Rng,
    files: Vec<FileState>,
    /// I/Os issued.
    issued: u64,
    /// A thinktime sleep is due before the next I/O.
    think: bool,
}

/// The fio generator: thread `j` is clone `j`, doing I/O on files
/// `j × nrfiles .. (j + 1) × nrfiles`.
pub struct Fio {
    jobs: Vec<Job>,
    geometry: Geometry,
    read_percent: u64,
    service: Service,
    engine: IoEngine,
    limit: u64,
    think_ns: u64,
    ramp_ns: u64,
    end_ns: Option<u64>,
}

impl Fio {
    pub fn new(o: &FioOptions, seed: u64) -> Result<Self, String> {
        let clones = check_count("fio.numjobs", o.numjobs)?;
        o.check_engine()?;
        if o.bs.0 != PAGE_SIZE {
            return Err(format!(
                "fio.bs: only 4k blocks are modelled (got {} bytes; large folios are not)",
                o.bs.0
            ));
        }
        let (random, read_percent) = o.mode()?;
        let geometry = o.geometry()?;
        let limit = o.io_limit(&geometry)?;
        let service = match o.file_service_type.as_str() {
            "roundrobin" => Service::RoundRobin,
            "sequential" => Service::Sequential,
            "random" => Service::Random,
            s => {
                return Err(format!(
                    "fio.file_service_type: `{s}` is not supported (roundrobin, sequential, \
                     random)"
                ))
            }
        };
        if o.runtime == Some(Duration(0)) {
            return Err("fio.runtime: must be positive".into());
        }
        if o.time_based && o.runtime.is_none() {
            return Err("fio.runtime: time_based needs a runtime".into());
        }
        let jobs = (0..clones)
            .map(|j| Job::new(o, &geometry, random, stream_rng(seed, j as u64)))
            .collect::<Result<_, _>>()?;
        Ok(Fio {
            jobs,
            geometry,
            read_percent,
            service,
            engine: o.ioengine,
            limit,
            think_ns: o.thinktime.0,
            ramp_ns: o.ramp_time.0,
            end_ns: o.runtime.map(|r| o.ramp_time.0.saturating_add(r.0)),
        })
    }

    /// The file (of the clone's) and block of the clone's next I/O in direction `dir`
    /// (0 read, 1 write).
    fn pick(&mut self, thread: usize, dir: usize) -> (usize, u64) {
        let g = self.geometry;
        let job = &mut self.jobs[thread];
        let f = match self.service {
            _ if g.nrfiles == 1 => 0,
            Service::RoundRobin => (job.issued % g.nrfiles as u64) as usize,
            Service::Sequential => ((job.issued / g.blocks) % g.nrfiles as u64) as usize,
            Service::Random => job.rng.gen_range(0..g.nrfiles),
        };
        let file = &mut job.files[f];
        let block = match &mut file.order {
            None => {
                let b = file.pos[dir] % g.blocks;
                file.pos[dir] += 1;
                b
            }
            Some(Order::Map(p)) => p.next(&mut job.rng),
            Some(Order::Draw(s)) => s.sample(&mut job.rng),
        };
        (f, g.first + block)
    }
}

impl Job {
    /// Clone state: per file, fio's random map or a seeded distribution (non-uniform
    /// distributions and `norandommap` go without the map, as in fio; `lfsr` never
    /// repeats a block within a pass, like the map).
    fn new(o: &FioOptions, g: &Geometry, random: bool, mut rng: Rng) -> Result<Self, String> {
        let dist = Distribution::parse(&o.random_distribution)
            .map_err(|e| format!("fio.random_distribution: {e}"))?;
        let lfsr = match o.random_generator.as_str() {
            "tausworthe" | "tausworthe64" => false,
            "lfsr" => true,
            s => {
                return Err(format!(
                    "fio.random_generator: `{s}` is not one of tausworthe, tausworthe64, lfsr"
                ))
            }
        };
        let map = dist == Distribution::Uniform && (lfsr || !o.norandommap);
        let sampler = dist
            .sampler(g.blocks)
            .map_err(|e| format!("fio.random_distribution: {e}"))?;
        let files = (0..g.nrfiles)
            .map(|_| FileState {
                pos: [0; 2],
                order: match () {
                    _ if !random => None,
                    _ if map => Some(Order::Map(Permutation::new(g.blocks, &mut rng))),
                    _ => Some(Order::Draw(sampler.seeded(&mut rng))),
                },
            })
            .collect();
        Ok(Job {
            rng,
            files,
            issued: 0,
            think: false,
        })
    }
}

impl Workload for Fio {
    fn layout(&self) -> Layout {
        let g = self.geometry;
        let clones = self.jobs.len();
        let files = vec![
            FileSpec {
                pages: g.file_pages,
                sparse: false,
            };
            clones * g.nrfiles
        ];
        if self.engine != IoEngine::Mmap {
            return Layout {
                files,
                processes: Vec::new(),
                thread_process: vec![None; clones],
            };
        }
        // fio's mmap engine: each clone maps its files MAP_SHARED.
        let processes = (0..clones)
            .map(|j| ProcessSpec {
                regions: (0..g.nrfiles)
                    .map(|f| RegionSpec::File {
                        file: j * g.nrfiles + f,
                    })
                    .collect(),
            })
            .collect();
        Layout {
            files,
            processes,
            thread_process: (0..clones).map(Some).collect(),
        }
    }

    fn phases(&self) -> Vec<String> {
        vec!["run".into()]
    }

    fn measured(&self, _phase: u8, now_ns: u64) -> bool {
        now_ns >= self.ramp_ns
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        let job = &mut self.jobs[thread];
        if self.end_ns.is_some_and(|end| now_ns >= end) || job.issued >= self.limit {
            return Step::Done;
        }
        if std::mem::take(&mut job.think) {
            return Step::Sleep {
                until_ns: now_ns + self.think_ns,
            };
        }
        // fio's get_rand_ddir: a draw in 1..=100 against rwmixread, for mixed jobs only.
        let write = match self.read_percent {
            100 => false,
            0 => true,
            p => job.rng.gen_range(1..=100) > p,
        };
        let (f, index) = self.pick(thread, usize::from(write));
        let job = &mut self.jobs[thread];
        job.issued += 1;
        job.think = self.think_ns > 0;
        let file = (thread * self.geometry.nrfiles + f) as u32;
        out.push(match (self.engine, write) {
            (IoEngine::Mmap, write) => Touch::Mem {
                region: f as u32,
                page: index,
                write,
            },
            (_, false) => Touch::Read { file, index },
            (_, true) => Touch::Write { file, index },
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

    fn build(toml_text: &str) -> Fio {
        Fio::new(&options(toml_text), 3).unwrap()
    }

    /// The next `n` touches of `thread` (one per operation).
    fn touches(w: &mut Fio, thread: usize, n: usize) -> Vec<Touch> {
        let mut out = Vec::new();
        for _ in 0..n {
            assert!(matches!(w.next(thread, 0, &mut out), Step::Op { .. }));
        }
        out
    }

    fn reads(w: &mut Fio, thread: usize, n: usize) -> Vec<u64> {
        touches(w, thread, n)
            .into_iter()
            .map(|t| match t {
                Touch::Read { index, .. } => index,
                _ => panic!("unexpected touch {t:?}"),
            })
            .collect()
    }

    #[test]
    fn randread_map_reads_every_block_once_per_pass() {
        let mut w = build("rw='randread'\nsize=4004000\ntime_based=true\nruntime=1");
        let n = w.geometry.blocks as usize;
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
        let mut w = build("size='16k'\nnumjobs=2");
        assert_eq!(reads(&mut w, 1, 4), vec![0, 1, 2, 3]);
        assert_eq!(w.next(1, 0, &mut Vec::new()), Step::Done);
        let mut w = build("size='8k'\ntime_based=true\nramp_time=1\nruntime=2");
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
    fn rwmixread_splits_reads_and_writes() {
        let mut w = build("rw='randrw'\nrwmixread=70\nsize='4m'\nnorandommap=true");
        let t = touches(&mut w, 0, 1000);
        let reads = t.iter().filter(|t| matches!(t, Touch::Read { .. })).count();
        assert!((650..750).contains(&reads), "{reads} reads of 1000");
        assert!(t
            .iter()
            .all(|t| matches!(t, Touch::Read { .. } | Touch::Write { .. })));
        // A sequential mix keeps one position per direction, as fio's last_pos[ddir].
        let mut w = build("rw='rw'\nsize='4m'");
        let t = touches(&mut w, 0, 6);
        let next = |pick: fn(&Touch) -> Option<u64>| t.iter().filter_map(pick).collect::<Vec<_>>();
        let r = next(|t| {
            if let Touch::Read { index, .. } = *t {
                Some(index)
            } else {
                None
            }
        });
        let wr = next(|t| {
            if let Touch::Write { index, .. } = *t {
                Some(index)
            } else {
                None
            }
        });
        assert_eq!(r, (0..r.len() as u64).collect::<Vec<_>>());
        assert_eq!(wr, (0..wr.len() as u64).collect::<Vec<_>>());
        assert_eq!(
            touches(&mut build("rw='write'\nsize='4k'"), 0, 1),
            [Touch::Write { file: 0, index: 0 }]
        );
    }

    #[test]
    fn mmap_maps_each_file_and_touches_it() {
        let mut w = build("rw='randwrite'\nioengine='mmap'\nsize='64k'\nnrfiles=2\nnumjobs=2");
        let l = w.layout();
        assert_eq!(l.files.len(), 4);
        assert_eq!(
            l.processes[1].regions,
            [RegionSpec::File { file: 2 }, RegionSpec::File { file: 3 }]
        );
        assert_eq!(l.thread_process, [Some(0), Some(1)]);
        for t in touches(&mut w, 1, 16) {
            assert!(
                matches!(
                    t,
                    Touch::Mem {
                        region: 0 | 1,
                        page: 0..8,
                        write: true
                    }
                ),
                "{t:?}"
            );
        }
        assert_eq!(w.next(1, 0, &mut Vec::new()), Step::Done);
    }

    #[test]
    fn files_offset_and_service_types() {
        // Two files of 12 pages, I/O in pages 4..8 of each, one file after the other.
        let text =
            "size='32k'\nnrfiles=2\nfilesize='48k'\noffset='16k'\nfile_service_type='sequential'";
        let mut w = build(text);
        assert_eq!(w.layout().files[1].pages, 12);
        let t = touches(&mut w, 0, 8);
        let want: Vec<Touch> = (0..2)
            .flat_map(|file| (4..8).map(move |index| Touch::Read { file, index }))
            .collect();
        assert_eq!(t, want);
        let mut w = build("size='32k'\nnrfiles=2");
        let files: Vec<u32> = touches(&mut w, 0, 4)
            .iter()
            .map(|t| {
                if let Touch::Read { file, .. } = *t {
                    file
                } else {
                    9
                }
            })
            .collect();
        assert_eq!(files, [0, 1, 0, 1], "roundrobin");
    }

    #[test]
    fn io_size_loops_and_number_ios_bound_the_job() {
        let count = |text: &str| {
            let mut w = build(text);
            let mut n = 0;
            while let Step::Op { .. } = w.next(0, 0, &mut Vec::new()) {
                n += 1;
            }
            n
        };
        assert_eq!(count("size='64k'"), 16);
        assert_eq!(count("size='64k'\nio_size='32k'"), 8);
        assert_eq!(count("size='64k'\nio_limit='32k'\nloops=3"), 24);
        assert_eq!(count("size='64k'\nloops=2\nnumber_ios=20"), 20);
        assert_eq!(
            count("size='64k'\ntime_based=true\nruntime=1\nnumber_ios=100"),
            100
        );
    }

    #[test]
    fn thinktime_sleeps_between_ios() {
        let mut w = build("size='64k'\nthinktime='50us'");
        let mut out = Vec::new();
        assert!(matches!(w.next(0, 0, &mut out), Step::Op { .. }));
        assert_eq!(w.next(0, 1000, &mut out), Step::Sleep { until_ns: 51_000 });
        assert!(matches!(w.next(0, 51_000, &mut out), Step::Op { .. }));
    }

    #[test]
    fn distributions_and_lfsr() {
        let mut w = build("rw='randread'\nsize='400k'\nrandom_distribution='zoned:100/10'");
        assert!(reads(&mut w, 0, 100).iter().all(|&b| b < 10));
        // lfsr covers every block once per pass even with norandommap.
        let mut w = build("rw='randread'\nsize='40k'\nnorandommap=true\nrandom_generator='lfsr'");
        let mut seen = reads(&mut w, 0, 10);
        seen.sort_unstable();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn rejects_bad_options() {
        let err = |t: &str| Fio::new(&options(t), 0).err().unwrap();
        assert!(err("size='1m'\nbs='8k'").starts_with("fio.bs:"));
        assert!(err("size=0").starts_with("fio.size:"));
        assert!(err("rw='read'").starts_with("fio.size:"));
        assert!(err("size='1m'\nnumjobs=0").starts_with("fio.numjobs:"));
        assert!(err("size='1m'\nrw='randtrim'").starts_with("fio.rw:"));
        assert!(err("size='1m'\nrwmixread=70\nrwmixwrite=20").starts_with("fio.rwmixread:"));
        assert!(err("size='1m'\nrwmixwrite=120").starts_with("fio.rwmixwrite:"));
        assert!(err("size='1m'\nrandom_distribution='zipf:1'").contains("theta"));
        assert!(err("size='1m'\nrandom_distribution='zipf:0.5:2'").contains("center"));
        assert!(err("size='1m'\nrandom_distribution='zoned_abs:100/2m'").starts_with("fio.random_"));
        assert!(err("size='1m'\nrandom_generator='mt'").starts_with("fio.random_generator:"));
        assert!(err("size='1m'\nfile_service_type='gauss'").starts_with("fio.file_service"));
        assert!(err("size='1m'\noffset='1k'").starts_with("fio.offset:"));
        assert!(err("size='1m'\nfilesize='8k'\noffset='8k'").starts_with("fio.size:"));
        assert!(err("size='1m'\nloops=0").starts_with("fio.loops"));
        assert!(err("size='1m'\ntime_based=true").starts_with("fio.runtime:"));
        assert!(err("size='1m'\niodepth=4").starts_with("fio.iodepth: Psync"));
        assert!(err("size='1m'\nioengine='mmap'\niodepth=4").starts_with("fio.iodepth: Mmap"));
        let uring = "size='1m'\nioengine='io_uring'\niodepth=128\n";
        assert!(Fio::new(&options(&format!("{uring}iodepth_batch_submit=32")), 0).is_ok());
        assert!(Fio::new(&options("size='1m'\nioengine='libaio'\niodepth=32"), 0).is_ok());
        assert!(err(&format!("{uring}iodepth_batch_complete=129")).contains("between 1 and"));
        assert!(err("size='1m'\nioengine='io_uring'\niodepth=0").starts_with("fio.iodepth:"));
        assert!(toml::from_str::<FioOptions>("size='1m'\nioengine='posixaio'").is_err());
    }
}
