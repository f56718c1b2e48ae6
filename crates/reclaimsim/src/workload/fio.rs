//! fio jobs doing buffered 4 KiB I/O through the page cache (`rw`, `rwmixread`), with
//! read(2)/write(2) engines or through a shared mapping (`ioengine = "mmap"`).

use super::distribution::{Distribution, Sampler};
use super::{
    check_count, stream_rng, FileSpec, Layout, ProcessSpec, RegionSpec, Rng, Step, Touch, Workload,
};
use crate::sim::cost::CostTable;
use crate::units::{ByteSize, Duration, PAGE_SIZE};
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
    /// Later phases of the same clones on the same files, in order
    /// (`[[workload.fio.phase]]`); the job's own I/O is the first phase, `run`.
    #[serde(default)]
    pub phase: Vec<FioPhase>,
}

/// A later phase of a job: its clones meet at a barrier after the phase before, sleep
/// (their files held in the page cache, mapped with `mmap`) until `sleep_until` and until
/// `wait_for` has finished, then do this phase's I/O. The rest of the options override
/// the job's I/O pattern (an option not given keeps the job's value); the files, their
/// sizes, `numjobs`, `offset`, `ioengine` stay the job's, which is the point: what
/// reclaim took from an idle job shows as refaults when the next phase reads again.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct FioPhase {
    /// Name results are reported under. Default `phase<N>`, N counting from 1.
    pub name: Option<String>,
    /// Sleep until this long after the workload started.
    pub sleep_until: Option<Duration>,
    /// Wait until this workload (or `workload:phase`) has finished.
    pub wait_for: Option<String>,
    #[serde(alias = "readwrite")]
    pub rw: Option<String>,
    /// With `rwmixwrite`, replaces both of the job's.
    pub rwmixread: Option<u64>,
    pub rwmixwrite: Option<u64>,
    pub random_distribution: Option<String>,
    pub norandommap: Option<bool>,
    pub random_generator: Option<String>,
    #[serde(alias = "io_limit")]
    pub io_size: Option<ByteSize>,
    pub loops: Option<u64>,
    pub number_ios: Option<u64>,
    /// With `runtime`, counted from when the phase starts (after its sleep) for each
    /// clone; the job's `ramp_time` is the first phase's only.
    pub time_based: Option<bool>,
    pub runtime: Option<Duration>,
    pub thinktime: Option<Duration>,
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

    /// `rw` and the mix: whether offsets are random, and the percent of reads; `f` names
    /// the options' table in errors (`fio`, `fio.phase[0]`).
    fn mode(&self, f: &str) -> Result<(bool, u64), String> {
        let over = [
            ("rwmixread", self.rwmixread),
            ("rwmixwrite", self.rwmixwrite),
        ]
        .into_iter()
        .find_map(|(name, v)| v.filter(|&v| v > 100).map(|v| (name, v)));
        if let Some((name, v)) = over {
            return Err(format!("{f}.{name}: {v} is more than 100 (percent)"));
        }
        let mix = match (self.rwmixread, self.rwmixwrite) {
            (Some(r), Some(w)) if r + w != 100 => {
                return Err(format!("{f}.rwmixread: {r} + rwmixwrite {w} is not 100"))
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
                    "{f}.rw: `{rw}` is not supported (read, write, randread, randwrite, rw, \
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

    /// I/Os each clone does in the job's own (first) phase before it stops (`u64::MAX`
    /// when time_based without number_ios).
    pub fn ios_per_clone(&self) -> Result<u64, String> {
        self.io_limit("fio", &self.geometry()?)
    }

    /// I/Os a clone does before it stops (fio's total_io_size = io_size × loops, capped
    /// by number_ios); unbounded but for number_ios when time_based.
    fn io_limit(&self, f: &str, g: &Geometry) -> Result<u64, String> {
        if self.loops == 0 || self.number_ios == Some(0) {
            return Err(format!("{f}.loops, {f}.number_ios: must be positive"));
        }
        let per_loop = match self.io_size {
            Some(b) if b.0 < PAGE_SIZE => {
                return Err(format!("{f}.io_size: less than one 4k block"))
            }
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

    /// The job's options with phase `p`'s overrides of the I/O pattern (no phases).
    pub fn with_phase(&self, p: &FioPhase) -> FioOptions {
        let mut o = FioOptions {
            phase: Vec::new(),
            ..self.clone()
        };
        // rwmixread and rwmixwrite say one thing: a phase giving either replaces both.
        if p.rwmixread.is_some() || p.rwmixwrite.is_some() {
            (o.rwmixread, o.rwmixwrite) = (p.rwmixread, p.rwmixwrite);
        }
        o.rw = p.rw.clone().unwrap_or(o.rw);
        o.random_distribution = (p.random_distribution.clone()).unwrap_or(o.random_distribution);
        o.norandommap = p.norandommap.unwrap_or(o.norandommap);
        o.random_generator = p.random_generator.clone().unwrap_or(o.random_generator);
        o.io_size = p.io_size.or(o.io_size);
        o.loops = p.loops.unwrap_or(o.loops);
        o.number_ios = p.number_ios.or(o.number_ios);
        o.time_based = p.time_based.unwrap_or(o.time_based);
        o.runtime = p.runtime.or(o.runtime);
        o.thinktime = p.thinktime.unwrap_or(o.thinktime);
        o
    }

    /// The phases in order: `run` (the job's own I/O), then each `[[phase]]`.
    fn phases(&self, g: &Geometry) -> Result<Vec<PhaseSpec>, String> {
        let mut phases = vec![self.phase_spec("fio", "run".into(), g)?];
        for (i, p) in self.phase.iter().enumerate() {
            let f = format!("fio.phase[{i}]");
            let name = p.name.clone().unwrap_or(format!("phase{}", i + 1));
            if name.is_empty() || name.contains(':') || phases.iter().any(|q| q.name == name) {
                return Err(format!(
                    "{f}.name: `{name}` is empty, has ':' or is used twice (the job's own \
                     phase is `run`)"
                ));
            }
            let mut spec = self.with_phase(p).phase_spec(&f, name, g)?;
            spec.sleep_until = p.sleep_until.map(|d| d.0);
            spec.wait_for = p.wait_for.clone();
            phases.push(spec);
        }
        // Step::Op numbers a phase in a u8.
        if phases.len() > usize::from(u8::MAX) {
            return Err(format!("fio.phase: at most {} phases", u8::MAX - 1));
        }
        Ok(phases)
    }

    /// The I/O pattern of a phase named `name` (these options, a phase's applied); `f`
    /// names the options' table in errors.
    fn phase_spec(&self, f: &str, name: String, g: &Geometry) -> Result<PhaseSpec, String> {
        let (random, read_percent) = self.mode(f)?;
        let limit = self.io_limit(f, g)?;
        if self.runtime == Some(Duration(0)) {
            return Err(format!("{f}.runtime: must be positive"));
        }
        if self.time_based && self.runtime.is_none() {
            return Err(format!("{f}.runtime: time_based needs a runtime"));
        }
        let field = |e| format!("{f}.random_distribution: {e}");
        let (read, write) =
            Distribution::parse_directions(&self.random_distribution).map_err(field)?;
        let lfsr = match self.random_generator.as_str() {
            "tausworthe" | "tausworthe64" => false,
            "lfsr" => true,
            s => {
                return Err(format!(
                    "{f}.random_generator: `{s}` is not one of tausworthe, tausworthe64, lfsr"
                ))
            }
        };
        // One distribution for both directions shares each file's order (fio's one
        // random map and zipf state per file); separate zone lists draw apart.
        let mut samplers = vec![read.sampler(g.blocks).map_err(field)?];
        if write != read {
            samplers.push(write.sampler(g.blocks).map_err(field)?);
        }
        Ok(PhaseSpec {
            name,
            random,
            read_percent,
            // `random` only: per-direction lists are zoned even where one is empty
            // (uniform draws), and fio keeps its map for the uniform distribution alone.
            map: read == Distribution::Uniform
                && !self.random_distribution.contains(',')
                && (lfsr || !self.norandommap),
            samplers,
            limit,
            runtime_ns: self.runtime.map(|r| r.0),
            think_ns: self.thinktime.0,
            sleep_until: None,
            wait_for: None,
        })
    }
}

/// What one phase of a job does (the job's own I/O, `run`, or a `[[phase]]`), checked.
#[derive(Clone, Debug)]
struct PhaseSpec {
    name: String,
    /// Random offsets (`randread`, `randwrite`, `randrw`).
    random: bool,
    read_percent: u64,
    /// Uniform offsets from fio's random map (each block once per pass; `lfsr` too).
    map: bool,
    /// Without the map, the distribution over a file's region: one for both directions,
    /// or the reads' and the writes' (`zoned:R,W`).
    samplers: Vec<Sampler>,
    /// I/Os per clone.
    limit: u64,
    /// fio's runtime: how long the phase's I/O lasts (the first phase's after ramp_time).
    runtime_ns: Option<u64>,
    think_ns: u64,
    sleep_until: Option<u64>,
    wait_for: Option<String>,
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
/// and, for random jobs, how offsets are picked: none (sequential), one order for both
/// directions, or the reads' and the writes'.
#[derive(Clone, Debug)]
struct FileState {
    pos: [u64; 2],
    orders: Vec<Order>,
}

/// The direction of a mixed job's next I/O, as fio's get_rw_ddir picks it: when the
/// current direction has issued `until` I/Os, a draw in 1..=100 against rwmixread
/// (get_rand_ddir) picks the direction again; a switch sets `until` to what the old
/// direction has issued × the new one's share (set_rwmix_bytes, counted in I/Os as fio
/// counts io_issues). So a direction behind its share keeps going until it has caught
/// up (a run of I/Os), and one at its share draws again at every I/O; the long-run share
/// of reads is rwmixread.
#[derive(Clone, Debug, Default)]
struct Rwmix {
    /// The current direction (fio's rwmix_ddir, reads first).
    write: bool,
    /// I/Os issued per direction in the phase (fio's io_issues).
    issues: [u64; 2],
    /// Draw again once the current direction has issued this many (fio's rwmix_issues).
    until: u64,
}

impl Rwmix {
    /// The direction of the next I/O (true: a write) of a job with `read_percent` reads.
    fn next(&mut self, read_percent: u64, rng: &mut Rng) -> bool {
        let dir = usize::from(self.write);
        if self.issues[dir] >= self.until {
            let write = rng.gen_range(1..=100) > read_percent;
            if write != self.write {
                let share = if write {
                    100 - read_percent
                } else {
                    read_percent
                };
                self.until = self.issues[dir] * share / 100;
                self.write = write;
            }
        }
        self.issues[usize::from(self.write)] += 1;
        self.write
    }
}

/// One clone's state in its phase: per file, the positions and how offsets are picked.
#[derive(Clone, Debug)]
struct Job {
    rng: Rng,
    files: Vec<FileState>,
    /// The phase the clone is in.
    phase: usize,
    /// I/Os issued in the phase.
    issued: u64,
    /// A thinktime sleep is due before the next I/O.
    think: bool,
    /// A mixed job's direction.
    rwmix: Rwmix,
    /// The phase's I/O has started (after its sleep), and when it stops (since the
    /// workload started; fio's runtime).
    started: bool,
    end_ns: Option<u64>,
}

/// The fio generator: thread `j` is clone `j`, doing I/O on files
/// `j × nrfiles .. (j + 1) × nrfiles`, phase after phase.
pub struct Fio {
    jobs: Vec<Job>,
    geometry: Geometry,
    phases: Vec<PhaseSpec>,
    service: Service,
    engine: IoEngine,
    ramp_ns: u64,
    seed: u64,
}

/// The random stream of clone `clone` in phase `phase`: the first phase's is the
/// clone's own stream (as before phases existed), each later phase has its own.
fn phase_stream(clone: usize, phase: usize) -> u64 {
    clone as u64 | (phase as u64) << 32
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
        let geometry = o.geometry()?;
        let phases = o.phases(&geometry)?;
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
        let jobs = (0..clones)
            .map(|j| {
                Job::new(
                    &phases[0],
                    &geometry,
                    stream_rng(seed, phase_stream(j, 0)),
                    0,
                )
            })
            .collect();
        Ok(Fio {
            jobs,
            geometry,
            phases,
            service,
            engine: o.ioengine,
            ramp_ns: o.ramp_time.0,
            seed,
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
        let last = file.orders.len().saturating_sub(1);
        let block = match file.orders.get_mut(dir.min(last)) {
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

    /// Clone `thread` has finished its phase: done after the last one, else it waits at
    /// the barrier holding the next phase's fresh state (positions back at the start of
    /// the region, a new random map, the phase's own random stream), as a new fio job
    /// on the same files would.
    fn end_phase(&mut self, thread: usize) -> Step {
        let p = self.jobs[thread].phase + 1;
        if p == self.phases.len() {
            return Step::Done;
        }
        let rng = stream_rng(self.seed, phase_stream(thread, p));
        self.jobs[thread] = Job::new(&self.phases[p], &self.geometry, rng, p);
        Step::Barrier
    }
}

impl Job {
    /// Clone state for phase `phase`: per file, fio's random map or a seeded
    /// distribution (non-uniform distributions and `norandommap` go without the map, as
    /// in fio; `lfsr` never repeats a block within a pass, like the map).
    fn new(spec: &PhaseSpec, g: &Geometry, mut rng: Rng, phase: usize) -> Self {
        let files = (0..g.nrfiles)
            .map(|_| FileState {
                pos: [0; 2],
                orders: match () {
                    _ if !spec.random => Vec::new(),
                    _ if spec.map => vec![Order::Map(Permutation::new(g.blocks, &mut rng))],
                    _ => (spec.samplers.iter())
                        .map(|s| Order::Draw(s.seeded(&mut rng)))
                        .collect(),
                },
            })
            .collect();
        Job {
            rng,
            files,
            phase,
            issued: 0,
            think: false,
            rwmix: Rwmix::default(),
            started: false,
            end_ns: None,
        }
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
        self.phases.iter().map(|p| p.name.clone()).collect()
    }

    /// fio's ramp_time: the first phase's first I/Os are not measured.
    fn measured(&self, phase: u8, now_ns: u64) -> bool {
        phase > 0 || now_ns >= self.ramp_ns
    }

    fn waits_for(&self, phase: usize) -> Option<&str> {
        self.phases.get(phase)?.wait_for.as_deref()
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        let p = self.jobs[thread].phase;
        let spec = &self.phases[p];
        let job = &mut self.jobs[thread];
        if !job.started {
            // A later phase sleeps first; its runtime counts from when its I/O starts,
            // the first phase's from the end of ramp_time.
            if let Some(until_ns) = spec.sleep_until.filter(|&t| t > now_ns) {
                return Step::Sleep { until_ns };
            }
            let start = if p == 0 { self.ramp_ns } else { now_ns };
            job.started = true;
            job.end_ns = spec.runtime_ns.map(|r| start.saturating_add(r));
        }
        if job.end_ns.is_some_and(|end| now_ns >= end) || job.issued >= spec.limit {
            return self.end_phase(thread);
        }
        if std::mem::take(&mut job.think) {
            return Step::Sleep {
                until_ns: now_ns + spec.think_ns,
            };
        }
        let write = match spec.read_percent {
            100 => false,
            0 => true,
            r => job.rwmix.next(r, &mut job.rng),
        };
        let think = spec.think_ns > 0;
        let (f, index) = self.pick(thread, usize::from(write));
        let job = &mut self.jobs[thread];
        job.issued += 1;
        job.think = think;
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
            phase: p as u8,
            bytes: PAGE_SIZE as u32,
        }
    }
}

#[cfg(test)]
mod tests;
