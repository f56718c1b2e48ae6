//! Workload generators: the programs the seeds ran (fio, memcached under memtier, dd
//! readtwice, will-it-scale page_fault3, usemem-like anon touch), as streams of memory
//! touches per simulated thread. A generator only decides *what* is touched; the engine
//! (`sim`) turns each touch into page-table hits, faults, reads and reclaim, and charges
//! virtual time for them.

use rand_pcg::Pcg64Mcg;

/// The PRNG every stream uses: one per workload thread, seeded from the scenario seed.
pub type Rng = Pcg64Mcg;

/// A file the workload needs before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSpec {
    /// Size in 4 KiB pages.
    pub pages: u64,
    /// A sparse file (all holes): reading it zero-fills page-cache pages without device I/O
    /// (vm-scalability's readtwice files).
    pub sparse: bool,
}

/// One region of a process's address space.
#[derive(Clone, Debug, PartialEq)]
pub enum RegionSpec {
    /// Private anonymous memory of this many pages.
    Anon { pages: u64 },
    /// A `MAP_SHARED` mapping of a whole file (index into `Layout::files`).
    File { file: usize },
}

/// A process: an address space (mm) made of regions.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ProcessSpec {
    pub regions: Vec<RegionSpec>,
}

/// Everything a workload needs created before its threads start.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Layout {
    pub files: Vec<FileSpec>,
    pub processes: Vec<ProcessSpec>,
    /// `thread_process[t]` is the process (index into `processes`) thread `t` runs in, or
    /// `None` for a thread with no address space of interest (fio, dd: buffered I/O only).
    pub thread_process: Vec<Option<usize>>,
}

impl Layout {
    pub fn threads(&self) -> usize {
        self.thread_process.len()
    }
}

/// One thing a thread does to memory. Indices refer to the workload's `Layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// Load or store to one page of a region of the thread's process: a PTE hit, or a fault.
    Mem { region: u32, page: u64, write: bool },
    /// A buffered `read(2)` of one 4 KiB page of a file (`filemap_read`).
    Read { file: u32, index: u64 },
    /// A buffered `write(2)` of one whole 4 KiB page of a file (`generic_perform_write`).
    Write { file: u32, index: u64 },
    /// `munmap` of a whole region (it is mapped again on the next touch, as page_fault3 does).
    Unmap { region: u32 },
    /// CPU time spent outside the memory model (request parsing, syscall entry, copying).
    Cpu { ns: u64 },
}

/// What a thread's next step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// One operation (request, read, iteration) made of the touches pushed to `out`.
    /// `phase` indexes `Workload::phases()`; `bytes` is what the operation transferred.
    Op { phase: u8, bytes: u32 },
    /// Connection `conn`'s pipeline batch is answered: the server thread does the batch's
    /// network work (epoll wake-up, read, send) on its CPU; then, without simulated
    /// clients, it waits off its CPU for the client's next batch (the rest of a loopback
    /// TCP round trip); with them, the connection waits for its client (`Connections`).
    RoundTrip { conn: u32 },
    /// Every connection this server thread serves that has requests left is with its
    /// client: the thread sleeps in epoll_wait until a client's next batch wakes it.
    Idle,
    /// Nothing to do until every thread of this workload has reached the barrier
    /// (end of a memtier phase): the engine parks the thread until then.
    Barrier,
    /// Nothing to do until `until_ns` (since the workload started): the thread sleeps
    /// off its CPU (a benchmark script's `sleep` between two runs).
    Sleep { until_ns: u64 },
    /// The thread has finished.
    Done,
}

/// A workload: a layout and, per thread, a stream of operations.
pub trait Workload {
    /// Files, processes and threads to create.
    fn layout(&self) -> Layout;
    /// Names of the phases results are reported under ("run", or "populate" and "run"...).
    fn phases(&self) -> Vec<String>;
    /// Whether a phase's operations count in the results (fio's ramp_time does not).
    fn measured(&self, phase: u8, now_ns: u64) -> bool;
    /// The next step of thread `thread` at virtual time `now_ns` (since the workload
    /// started); touches go to `out`, which the caller has cleared.
    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step;
    /// Host speed only: the touch `d` places after those the last `next` gave thread
    /// `thread`, if the workload has drawn it already (the engine loads its PTE early).
    /// Nothing a task observes may depend on it.
    fn ahead(&self, _thread: usize, _d: usize) -> Option<Touch> {
        None
    }
    /// What phase `phase` waits for, after the barrier ending the phase before it: a
    /// workload or `workload:phase` that must have finished.
    fn waits_for(&self, _phase: usize) -> Option<&str> {
        None
    }
    /// The phase the threads are in once they have passed `barriers` barriers (one per
    /// phase, unless a phase repeats: memtier's `run-count`).
    fn phase_after(&self, barriers: usize) -> usize {
        barriers
    }
    /// The memcg (path) process `process` runs in, when not the workload's own (a
    /// trace's tenants).
    fn process_memcg(&self, _process: usize) -> Option<&str> {
        None
    }
    /// Why the workload stopped early, if it failed (a trace that changed under it): the
    /// run is then an error, not results.
    fn failure(&self) -> Option<String> {
        None
    }
    /// For the progress line only: the share of its work done, when its end is a count
    /// of operations (memtier runs of `requests`); None when time or something else
    /// ends it. Nothing a task observes may depend on it.
    fn done_fraction(&self) -> Option<f64> {
        None
    }
    /// Its connections, when it is a server whose clients the engine can run as tasks
    /// (memcached driven by memtier).
    fn connections(&mut self) -> Option<&mut dyn Connections> {
        None
    }
    /// For a low-memory killer that asks the application which process to give up (the
    /// `chromeos` agent: Chrome's tab discarding): the processes it may kill now, the
    /// first to go first. Empty when it has none to offer.
    fn discard_order(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Process `process` was killed by an agent; its threads are gone.
    fn process_killed(&mut self, _process: usize) {}
}

/// A server workload's client connections, for the engine that runs the clients as
/// tasks: which client thread owns a connection, which server thread serves it, and
/// the hand-over of each pipeline batch between them.
pub trait Connections {
    /// Client threads to run as tasks: the most any run uses (memtier's `threads`).
    fn client_threads(&self) -> usize;
    /// The client thread that owns connection `conn` in the run under way.
    fn owner(&self, conn: u32) -> usize;
    /// The server thread that serves connection `conn`.
    fn server(&self, conn: u32) -> usize;
    /// From now on a connection whose batch was answered is not served again until its
    /// client sends the next (`batch_sent`); before, a server assumes it at once.
    fn gate(&mut self);
    /// Connection `conn`'s client sent its next batch.
    fn batch_sent(&mut self, conn: u32);
    /// Whether server thread `thread` has a connection with requests left whose batch
    /// has been sent: it goes on serving rather than waiting in epoll.
    fn has_work(&self, thread: usize) -> bool;
}

pub mod anon;
pub mod dd;
pub mod distribution;
pub mod fio;
pub mod jobfile;
pub mod mcitems;
pub mod memtier;
pub mod pagefault;
pub mod phase;
pub mod tabs;
pub mod trace;

/// The options of one workload, by the tool it models.
#[derive(Debug, Clone)]
pub enum WorkloadOptions {
    Fio(fio::FioOptions),
    Memcached(memtier::MemcachedOptions),
    Dd(dd::DdOptions),
    PageFault3(pagefault::PageFault3Options),
    Anon(anon::AnonOptions),
    Tabs(tabs::TabsOptions),
    Trace(trace::TraceOptions),
}

impl WorkloadOptions {
    /// Validates the options and creates the generator; `seed` selects the random streams.
    pub fn build(&self, seed: u64) -> Result<Box<dyn Workload>, String> {
        Ok(match self {
            Self::Fio(o) => Box::new(fio::Fio::new(o, seed)?),
            Self::Memcached(o) => Box::new(memtier::Memcached::new(o, seed)?),
            Self::Dd(o) => Box::new(dd::Dd::new(o)?),
            Self::PageFault3(o) => Box::new(pagefault::PageFault3::new(o)?),
            Self::Anon(o) => Box::new(anon::Anon::new(o, seed)?),
            Self::Tabs(o) => Box::new(tabs::Tabs::new(o, seed)?),
            Self::Trace(o) => Box::new(trace::Trace::new(o)?),
        })
    }
}

/// Largest count option accepted (threads, processes, files, clients, pipeline depth...).
const MAX_COUNT: u64 = 1 << 16;

/// Checks a count option: at least 1, at most `MAX_COUNT`.
fn check_count(option: &str, n: u64) -> Result<usize, String> {
    if n == 0 || n > MAX_COUNT {
        return Err(format!(
            "{option}: must be between 1 and {MAX_COUNT} (got {n})"
        ));
    }
    Ok(n as usize)
}

/// One SplitMix64 step: a bijective 64-bit mix.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream number `stream` of a workload seeded with `seed`.
fn stream_rng(seed: u64, stream: u64) -> Rng {
    rand::SeedableRng::seed_from_u64(seed ^ splitmix64(stream + 1))
}
