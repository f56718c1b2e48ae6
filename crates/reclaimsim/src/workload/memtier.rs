//! memcached serving memtier_benchmark runs: memtier's key patterns and SET:GET ratio, and
//! memcached's slab allocator, which decides the anonymous pages each item lives in.

use super::mcitems::{Chains, Segmented};
use super::{
    check_count, splitmix64, stream_rng, Connections, Layout, ProcessSpec, RegionSpec, Rng, Step,
    Touch, Workload,
};
use crate::units::{ByteSize, Duration, PAGE_SIZE};
use rand::{Rng as _, RngCore};
use serde::Deserialize;

/// A memcached server (`memcached -t threads`) and the memtier_benchmark runs made against
/// it, in order (`[[workload.memcached.phase]]`). Every worker thread reaches a barrier
/// between runs.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MemcachedOptions {
    /// memcached worker threads (`-t`), the simulated threads. Default 4.
    #[serde(default = "four")]
    pub threads: u64,
    /// The memtier_benchmark runs, in order.
    pub phase: Vec<MemtierOptions>,
    /// memcached's LRU of items (`-o lru_segmented`, `no_lru_segmented`): `segmented`,
    /// memcached 1.5+'s HOT, WARM and COLD lists with their maintainer's moves, or `none`:
    /// no LRU links touched. Default `segmented`.
    #[serde(default)]
    pub lru: LruMode,
    /// Whether a lookup walks its hash bucket's chain, reading the items ahead of the
    /// match (`assoc_find`). Default true.
    #[serde(default = "yes")]
    pub hash_chains: bool,
}

/// `[workload.memcached] lru`: which of memcached's item LRUs the model keeps.
#[derive(Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LruMode {
    /// memcached 1.6's default: per slab class HOT, WARM and COLD lists (items.c).
    #[default]
    Segmented,
    /// No LRU links: a request touches its bucket and its item only.
    None,
}

/// One memtier_benchmark command line against the server (`-P memcache_binary`), with
/// memtier's long option names and defaults.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MemtierOptions {
    /// Name results are reported under. Default `phase<index>`.
    pub name: Option<String>,
    /// `SET:GET` patterns, each of S, R, G, Z, P (P on both sides). Default `R:R`.
    #[serde(default = "default_pattern")]
    pub key_pattern: String,
    /// `SET:GET` request ratio. Default `1:10`.
    #[serde(default = "default_ratio")]
    pub ratio: String,
    /// Value size. Default 32 bytes.
    #[serde(default = "default_data_size")]
    pub data_size: ByteSize,
    /// Default 0.
    #[serde(default)]
    pub key_minimum: u64,
    /// Default 10,000,000.
    #[serde(default = "default_key_maximum")]
    pub key_maximum: u64,
    /// Default `memtier-`.
    #[serde(default = "default_prefix")]
    pub key_prefix: String,
    /// G's standard deviation; 0 = (max - min) / 6. Default 0.
    #[serde(default)]
    pub key_stddev: f64,
    /// G's median; 0 = the middle of the range. Default 0.
    #[serde(default)]
    pub key_median: f64,
    /// Z's exponent, in (0, 5). Default 1.
    #[serde(default = "default_zipf_exp")]
    pub key_zipf_exp: f64,
    /// Requests per client, or `allkeys`. Default 10000 unless `test-time` is given.
    pub requests: Option<Requests>,
    /// Run for this long instead of a number of requests.
    pub test_time: Option<Duration>,
    /// Connections per memtier thread (`-c`). Default 50.
    #[serde(default = "default_clients")]
    pub clients: u64,
    /// memtier threads (`-t`). Default 4.
    #[serde(default = "four")]
    pub threads: u64,
    /// Requests a connection has outstanding (`--pipeline`); memcached serves that many
    /// from one connection before turning to the next. Default 1.
    #[serde(default = "one")]
    pub pipeline: u64,
    /// Repeat the run this many times (`-x`). Default 1.
    #[serde(default = "one")]
    pub run_count: u64,
    /// Seed the key streams from the scenario seed; without it every memtier run draws the
    /// same keys, as memtier does. Default false.
    #[serde(default)]
    pub randomize: bool,
    /// Give each client its own key stream; without it all clients draw the same keys.
    /// Default false.
    #[serde(default)]
    pub distinct_client_seed: bool,
    /// Count this run's requests in the results. Default true.
    #[serde(default = "yes")]
    pub measure: bool,
    /// Not a memtier option: how long the benchmark script sleeps before this run
    /// starts (seed 000's mixed.sh sleeps 200 s between starting fio and the R:R run).
    /// Default 0.
    #[serde(default)]
    pub delay: Duration,
    /// Not a memtier option: the script waits until this workload (or `workload:phase`)
    /// has finished before this run (and its `delay`) starts; not for the first run,
    /// which the workload's `after` places.
    #[serde(alias = "wait_for")]
    pub wait_for: Option<String>,
}

/// memtier's `--requests`: a count, or `allkeys`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Requests {
    Count(u64),
    Keyword(String),
}

fn four() -> u64 {
    4
}
fn one() -> u64 {
    1
}
fn yes() -> bool {
    true
}
fn default_pattern() -> String {
    "R:R".into()
}
fn default_ratio() -> String {
    "1:10".into()
}
fn default_data_size() -> ByteSize {
    ByteSize(32)
}
fn default_key_maximum() -> u64 {
    10_000_000
}
fn default_prefix() -> String {
    "memtier-".into()
}
fn default_clients() -> u64 {
    50
}
fn default_zipf_exp() -> f64 {
    1.0
}

/// memcached's slab page (`-I` default), and its largest chunk (`slab_chunk_max`); larger
/// items are chained across chunks, which is not modelled.
const SLAB_PAGE: u64 = 1 << 20;
const CHUNK_MAX: u32 = (SLAB_PAGE / 2) as u32;
const PAGES_PER_SLAB: u64 = SLAB_PAGE / PAGE_SIZE;
/// Most keys one scenario may use (chunk numbers are `u32`).
const MAX_KEYS: u64 = u32::MAX as u64;
const NO_CHUNK: u32 = u32::MAX;

/// memcached's slab class chunk sizes: 96 B (48-byte item header + 48-byte minimum
/// chunk), each class 1.25 × the previous (truncated) rounded up to 8 bytes, until the
/// next would pass `slab_chunk_max / 1.25`; the last class is `slab_chunk_max`.
fn slab_classes() -> Vec<u32> {
    let mut sizes = Vec::new();
    let mut size = 96u32;
    while f64::from(size) < f64::from(CHUNK_MAX) / 1.25 {
        size = size.next_multiple_of(8);
        sizes.push(size);
        size = size * 5 / 4;
    }
    sizes.push(CHUNK_MAX);
    sizes
}

/// The chunk size of the slab class memcached stores an item of `bytes` in (the smallest
/// class that holds it), or `None` past the largest chunk. `reclaimsim calibrate` lays
/// out its memcached-like pages with it.
pub fn slab_chunk_size(bytes: u64) -> Option<u32> {
    slab_classes().into_iter().find(|&c| u64::from(c) >= bytes)
}

fn digits(key: u64) -> u64 {
    key.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Bytes memcached stores for an item whose key number has `digits` digits:
/// 48 (header) + 8 (CAS) + key (`prefix` + digits) + 1 (NUL) + data-size + 2 (`\r\n`)
/// (binary protocol, flags 0: no suffix).
pub fn item_size(prefix_len: u64, digits: u64, data: u32) -> u64 {
    48 + 8 + prefix_len + digits + 1 + u64::from(data) + 2
}

/// memtier's `P` subrange of client `i` of `total`: `range = (max - min) / total + 1`,
/// `[min + range·i, min + range·(i+1) - 1]`, the last client ending at `max`. `None` when
/// the subrange starts past `max` (more clients than keys).
fn parallel_range(min: u64, max: u64, total: u64, i: u64) -> Option<(u64, u64)> {
    let range = (max - min) / total + 1;
    let lo = min.checked_add(range.checked_mul(i)?)?;
    let hi = if i + 1 == total {
        max
    } else {
        (lo + range - 1).min(max)
    };
    (lo <= max).then_some((lo, hi))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum KeyPattern {
    Sequential,
    Random,
    Gaussian,
    Zipf,
    Parallel,
}

impl KeyPattern {
    fn parse(c: char) -> Option<Self> {
        Some(match c {
            'S' => Self::Sequential,
            'R' => Self::Random,
            'G' => Self::Gaussian,
            'Z' => Self::Zipf,
            'P' => Self::Parallel,
            _ => return None,
        })
    }
}

/// memtier's Zipf key sampler: rejection-inversion (Hörmann & Derflinger 1996) over
/// `[max(min, 1), max]`, P(k) ∝ k^-exp, with H(x) = (x^(1-q) - 1)/(1-q) (ln x for q = 1)
/// the integral of the hat h(x) = x^-q.
#[derive(Clone, Copy, Debug)]
struct KeyZipf {
    min: f64,
    max: f64,
    q: f64,
    h_min: f64,
    h_max: f64,
    s: f64,
}

impl KeyZipf {
    fn new(min: u64, max: u64, q: f64) -> Self {
        let (min, max) = (min.max(1) as f64, max.max(min.max(1)) as f64);
        // memtier treats exponents within 1e-4 of 1 as 1 and below 1e-4 as uniform.
        let q = if (q - 1.0).abs() < 1e-4 {
            1.0
        } else if q < 1e-4 {
            0.0
        } else {
            q
        };
        let mut z = KeyZipf {
            min,
            max,
            q,
            h_min: 0.0,
            h_max: 0.0,
            s: 0.0,
        };
        z.h_min = z.big_h(min + 0.5) - z.h(min);
        z.h_max = z.big_h(max + 0.5);
        z.s = min + 1.0 - z.big_h_inv(z.big_h(min + 1.5) - z.h(min + 1.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        x.powf(-self.q)
    }

    fn big_h(&self, x: f64) -> f64 {
        if self.q == 1.0 {
            x.ln()
        } else {
            (x.powf(1.0 - self.q) - 1.0) / (1.0 - self.q)
        }
    }

    fn big_h_inv(&self, u: f64) -> f64 {
        if self.q == 1.0 {
            u.exp()
        } else {
            (1.0 + (1.0 - self.q) * u).powf(1.0 / (1.0 - self.q))
        }
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        if self.q == 0.0 {
            return rng.gen_range(self.min as u64..=self.max as u64);
        }
        loop {
            let u = self.h_min + rng.gen::<f64>() * (self.h_max - self.h_min);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(self.min, self.max);
            if k - x <= self.s || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// A validated memtier run.
#[derive(Clone, Debug)]
struct Run {
    phase: u8,
    set_pattern: KeyPattern,
    get_pattern: KeyPattern,
    sets: u64,
    gets: u64,
    data: u32,
    prefix_len: u64,
    min: u64,
    max: u64,
    /// Requests per client; `u64::MAX` when `test-time` bounds the run instead.
    requests: u64,
    test_time_ns: Option<u64>,
    /// The script's sleep before the run.
    delay_ns: u64,
    /// Connections in all (`clients` × `threads`), numbered thread by thread: memtier
    /// thread `c / per_thread` owns connection `c`.
    clients: u64,
    per_thread: u64,
    pipeline: u64,
    stddev: f64,
    median: f64,
    zipf: KeyZipf,
    seed: u64,
    distinct: bool,
}

/// `at(option, message)` locates an error in a phase's options.
type At<'a> = &'a dyn Fn(&str, String) -> String;

impl MemtierOptions {
    /// key-pattern's SET and GET patterns.
    fn patterns(&self, at: At) -> Result<(KeyPattern, KeyPattern), String> {
        let chars: Vec<char> = self.key_pattern.chars().collect();
        let (set, get) = match chars[..] {
            [s, ':', g] => KeyPattern::parse(s).zip(KeyPattern::parse(g)),
            _ => None,
        }
        .ok_or_else(|| {
            at(
                "key-pattern",
                format!(
                    "`{}` is not X:Y with X, Y in S, R, G, Z, P",
                    self.key_pattern
                ),
            )
        })?;
        if (set == KeyPattern::Parallel) != (get == KeyPattern::Parallel) {
            return Err(at(
                "key-pattern",
                "P must be used on both sides (P:P)".into(),
            ));
        }
        Ok((set, get))
    }

    /// ratio's SET and GET parts.
    fn ratio_parts(&self, at: At) -> Result<(u64, u64), String> {
        let ratio: Vec<Option<u64>> = (self.ratio.split(':'))
            .map(|n| n.trim().parse().ok())
            .collect();
        match ratio[..] {
            [Some(s), Some(g)] if s.checked_add(g).is_some_and(|n| n > 0) => Ok((s, g)),
            _ => Err(at(
                "ratio",
                format!("`{}` is not SET:GET with a nonzero sum", self.ratio),
            )),
        }
    }

    /// Requests per client (`u64::MAX` when test-time bounds the run); `allkeys` covers
    /// the key range, split over the `total` clients under P:P.
    fn requests_per_client(&self, at: At, parallel: bool, total: u64) -> Result<u64, String> {
        let keys = self.key_maximum - self.key_minimum;
        Ok(match (&self.requests, self.test_time) {
            (Some(_), Some(_)) => {
                return Err(at(
                    "requests",
                    "requests and test-time are mutually exclusive".into(),
                ))
            }
            (None, Some(t)) if t.0 == 0 => return Err(at("test-time", "must be positive".into())),
            (None, Some(_)) => u64::MAX,
            (None, None) => 10_000,
            (Some(Requests::Count(0)), _) => return Err(at("requests", "must be positive".into())),
            (Some(Requests::Count(n)), _) => *n,
            (Some(Requests::Keyword(k)), _) if k == "allkeys" && parallel => keys / total + 1,
            (Some(Requests::Keyword(k)), _) if k == "allkeys" => keys,
            (Some(Requests::Keyword(k)), _) => {
                return Err(at(
                    "requests",
                    format!("`{k}` is neither a number nor allkeys"),
                ))
            }
        })
    }

    /// Checks the options of the key distributions the phase `uses`; gives G's median.
    fn key_median(&self, at: At, uses: &dyn Fn(KeyPattern) -> bool) -> Result<f64, String> {
        let (min, max) = (self.key_minimum, self.key_maximum);
        let zipf = self.key_zipf_exp;
        if uses(KeyPattern::Zipf) && !(zipf > 0.0 && zipf < 5.0) {
            return Err(at("key-zipf-exp", format!("{zipf} is not in (0, 5)")));
        }
        if uses(KeyPattern::Zipf) && max == 0 {
            return Err(at(
                "key-maximum",
                "Z draws keys from 1: key-maximum must be at least 1".into(),
            ));
        }
        let stddev = self.key_stddev;
        if !(stddev.is_finite() && stddev >= 0.0) {
            return Err(at(
                "key-stddev",
                format!("{stddev} is not a nonnegative number"),
            ));
        }
        let len = (max - min) as f64;
        // Keys are redrawn until they fall in the range: keep that from taking forever.
        if uses(KeyPattern::Gaussian) && stddev > 100.0 * (len + 1.0) {
            return Err(at(
                "key-stddev",
                format!("{stddev} is over 100 × the key range"),
            ));
        }
        let median = if self.key_median == 0.0 {
            len / 2.0 + min as f64 + 0.5
        } else {
            self.key_median
        };
        if uses(KeyPattern::Gaussian) && min < max && !(median > min as f64 && median < max as f64)
        {
            return Err(at(
                "key-median",
                format!("{median} is not inside ({min}, {max})"),
            ));
        }
        Ok(median)
    }
}

impl Run {
    /// Validates phase `index` (< 255) of the options.
    fn parse(o: &MemtierOptions, index: usize, seed: u64) -> Result<Self, String> {
        let at = |opt: &str, msg: String| format!("memcached.phase[{index}].{opt}: {msg}");
        let (set_pattern, get_pattern) = o.patterns(&at)?;
        let (sets, gets) = o.ratio_parts(&at)?;
        let (min, max) = (o.key_minimum, o.key_maximum);
        if max < min {
            return Err(at(
                "key-maximum",
                format!("{max} is below key-minimum {min}"),
            ));
        }
        if max - min >= MAX_KEYS {
            return Err(at(
                "key-maximum",
                format!("at most {MAX_KEYS} keys are supported"),
            ));
        }
        let clients = check_count(&format!("memcached.phase[{index}].clients"), o.clients)? as u64;
        let threads = check_count(&format!("memcached.phase[{index}].threads"), o.threads)? as u64;
        let total = check_count(
            &format!("memcached.phase[{index}].clients × threads"),
            clients * threads,
        )? as u64;
        check_count(&format!("memcached.phase[{index}].pipeline"), o.pipeline)?;
        let parallel = set_pattern == KeyPattern::Parallel;
        let requests = o.requests_per_client(&at, parallel, total)?;
        let data = u32::try_from(o.data_size.0).unwrap_or(u32::MAX);
        let prefix_len = o.key_prefix.len() as u64;
        if data == 0 || item_size(prefix_len, digits(max), data) > u64::from(CHUNK_MAX) {
            return Err(at(
                "data-size",
                format!("items must be 1 byte to {CHUNK_MAX} bytes with their header (memcached's largest slab chunk)"),
            ));
        }
        let median = o.key_median(&at, &|p| set_pattern == p || get_pattern == p)?;
        let len = (max - min) as f64;
        Ok(Run {
            phase: index as u8,
            set_pattern,
            get_pattern,
            sets,
            gets,
            data,
            prefix_len,
            min,
            max,
            requests,
            test_time_ns: o.test_time.map(|t| t.0),
            delay_ns: o.delay.0,
            clients: total,
            per_thread: clients,
            pipeline: o.pipeline,
            stddev: if o.key_stddev == 0.0 {
                len / 6.0
            } else {
                o.key_stddev
            },
            median,
            zipf: KeyZipf::new(min, max, o.key_zipf_exp),
            seed: if o.randomize {
                splitmix64(seed) ^ index as u64
            } else {
                0
            },
            distinct: o.distinct_client_seed,
        })
    }

    fn new_client(&self, c: u64) -> Client {
        let parallel = self.set_pattern == KeyPattern::Parallel;
        let range = if parallel {
            parallel_range(self.min, self.max, self.clients, c)
        } else {
            Some((self.min, self.max))
        };
        let (lo, hi) = range.unwrap_or((self.min, self.max));
        Client {
            rng: stream_rng(self.seed, if self.distinct { c + 1 } else { 0 }),
            lo,
            hi,
            left: if range.is_some() { self.requests } else { 0 },
            cycle: 0,
            next_set: lo,
            next_get: lo,
            spare: None,
        }
    }
}

/// One memtier connection: its key generator and progress.
#[derive(Clone, Debug)]
struct Client {
    rng: Rng,
    /// Key range of the S and P iterators.
    lo: u64,
    hi: u64,
    /// Requests still to send.
    left: u64,
    /// Requests sent (position in the SET:GET cycle).
    cycle: u64,
    next_set: u64,
    next_get: u64,
    /// The second normal deviate of the last polar-method draw.
    spare: Option<f64>,
}

impl Client {
    fn key(&mut self, run: &Run, set: bool) -> u64 {
        match if set {
            run.set_pattern
        } else {
            run.get_pattern
        } {
            KeyPattern::Sequential | KeyPattern::Parallel => {
                let next = if set {
                    &mut self.next_set
                } else {
                    &mut self.next_get
                };
                let key = *next;
                *next = if key >= self.hi { self.lo } else { key + 1 };
                key
            }
            // memtier's random_range: a 63-bit draw modulo the range size.
            KeyPattern::Random => (self.rng.next_u64() >> 1) % (run.max - run.min + 1) + run.min,
            KeyPattern::Gaussian => self.gaussian_key(run),
            KeyPattern::Zipf => run.zipf.sample(&mut self.rng),
        }
    }

    /// A normal deviate by Marsaglia's polar method (which yields two).
    fn normal(&mut self) -> f64 {
        if let Some(spare) = self.spare.take() {
            return spare;
        }
        loop {
            let u = self.rng.gen::<f64>() * 2.0 - 1.0;
            let v = self.rng.gen::<f64>() * 2.0 - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * f);
                return u * f;
            }
        }
    }

    /// memtier's Gaussian key: redraw until `min <= x <= max + 1`, then truncate.
    fn gaussian_key(&mut self, run: &Run) -> u64 {
        if run.min == run.max {
            return run.min;
        }
        loop {
            let x = self.normal() * run.stddev + run.median;
            if x >= run.min as f64 && x <= run.max as f64 + 1.0 {
                return (x as u64).min(run.max);
            }
        }
    }
}

/// A slab class: its chunk size, the slab pages it got (in order) and its free chunks.
#[derive(Clone, Debug)]
struct SlabClass {
    size: u32,
    perslab: u32,
    slabs: Vec<u64>,
    used: u32,
    free: Vec<u32>,
}

/// memcached's item memory: slab classes carving 1 MiB slab pages, handed out to classes
/// in the order they need them, from one anonymous region; and where each key's item is.
#[derive(Clone, Debug)]
struct Slabs {
    classes: Vec<SlabClass>,
    next_slab: u64,
    /// Lowest key of the scenario; per key: its chunk number in its class and the class.
    base: u64,
    chunk: Vec<u32>,
    class: Vec<u8>,
}

impl Slabs {
    fn new(base: u64, keys: u64) -> Self {
        let classes = slab_classes()
            .into_iter()
            .map(|size| SlabClass {
                size,
                perslab: (SLAB_PAGE / u64::from(size)) as u32,
                slabs: Vec::new(),
                used: 0,
                free: Vec::new(),
            })
            .collect();
        Slabs {
            classes,
            next_slab: 0,
            base,
            chunk: vec![NO_CHUNK; keys as usize],
            class: vec![0; keys as usize],
        }
    }

    /// The class whose chunks hold `size` bytes (the caller checked it fits).
    fn class_of(&self, size: u64) -> usize {
        self.classes.partition_point(|c| u64::from(c.size) < size)
    }

    /// Byte offset in the slab region of chunk `chunk` of class `class`.
    fn offset(&self, class: usize, chunk: u32) -> u64 {
        let c = &self.classes[class];
        let slab = c.slabs[(chunk / c.perslab) as usize];
        slab * SLAB_PAGE + u64::from(chunk % c.perslab) * u64::from(c.size)
    }

    /// Stores `key` in class `class`: in place if it already lives there, else in a freed
    /// chunk of the class or the next unused one (taking a new slab page if needed); a
    /// chunk in another class is freed. Returns the item's offset.
    fn set(&mut self, key: u64, class: usize) -> u64 {
        let i = (key - self.base) as usize;
        let (old, old_class) = (self.chunk[i], usize::from(self.class[i]));
        if old != NO_CHUNK && old_class == class {
            return self.offset(class, old);
        }
        if old != NO_CHUNK {
            self.classes[old_class].free.push(old);
        }
        let c = &mut self.classes[class];
        let chunk = c.free.pop().unwrap_or_else(|| {
            if c.used % c.perslab == 0 {
                c.slabs.push(self.next_slab);
                self.next_slab += 1;
            }
            c.used += 1;
            c.used - 1
        });
        self.chunk[i] = chunk;
        self.class[i] = class as u8;
        self.offset(class, chunk)
    }

    /// The first page (header and key) of the item of key index `index`, stored.
    fn first_page(&self, index: u32) -> u64 {
        let i = index as usize;
        self.offset(usize::from(self.class[i]), self.chunk[i]) / PAGE_SIZE
    }

    /// Where `key`'s item is and its class, if it was ever stored.
    fn get(&self, key: u64) -> Option<(u64, usize)> {
        let i = (key - self.base) as usize;
        let class = usize::from(self.class[i]);
        (self.chunk[i] != NO_CHUNK).then(|| (self.offset(class, self.chunk[i]), class))
    }

    /// Slab pages enough for every SET of `runs`: per class, all the keys whose items can
    /// fall in it.
    fn pages_needed(&self, runs: &[Run], min: u64, max: u64) -> u64 {
        let mut keys = vec![0u64; self.classes.len()];
        let mut counted = std::collections::BTreeSet::new();
        for run in runs.iter().filter(|r| r.sets > 0) {
            for d in digits(run.min)..=digits(run.max) {
                let first = if d == 1 { 0 } else { 10u64.pow(d as u32 - 1) };
                let last = 10u64.checked_pow(d as u32).map_or(u64::MAX, |p| p - 1);
                let class = self.class_of(item_size(run.prefix_len, d, run.data));
                if counted.insert((class, d)) {
                    keys[class] += last.min(max) - first.max(min) + 1;
                }
            }
        }
        let slabs: u64 = keys
            .iter()
            .zip(&self.classes)
            .map(|(&k, c)| k.div_ceil(u64::from(c.perslab)))
            .sum();
        slabs.max(1) * PAGES_PER_SLAB
    }
}

/// Touches the pages of an item of `len` bytes at `offset`: all written by a SET, the
/// first written by a GET (memcached updates the item header on access), the rest read.
fn item_pages(offset: u64, len: u64, set: bool, out: &mut Vec<Touch>) {
    for page in offset / PAGE_SIZE..=(offset + len - 1) / PAGE_SIZE {
        let write = set || page == offset / PAGE_SIZE;
        out.push(Touch::Mem {
            region: 0,
            page,
            write,
        });
    }
}

/// A memcached worker thread: the run it is in and which of its connections it serves.
#[derive(Clone, Debug, Default)]
struct Server {
    run: usize,
    /// Index into this thread's connections, and requests served from it in a row.
    cur: u64,
    batch: u64,
    /// The last request answered a connection's whole pipeline batch: its round trip
    /// comes next, for connection `conn`.
    answered: bool,
    conn: u32,
}

/// The memcached generator. Thread `t` serves memtier connections `t, t + threads, ...`
/// (memcached hands new connections to its workers round-robin), `pipeline` requests from
/// one connection before turning to the next. Region 0 holds the slabs, region 1 the hash
/// table; a SET writes the bucket and the whole item, a GET reads the bucket and the item
/// (writing its first page: memcached updates the item header on access); a GET of a key
/// never set reads only the bucket. After each connection's pipeline batch the thread
/// takes a round trip (Step::RoundTrip): the batch's network work and the wait for the
/// client's next batch.
pub struct Memcached {
    runs: Vec<Run>,
    /// Per phase (a `[[phase]]`, which `run-count` repeats as runs).
    names: Vec<String>,
    measure: Vec<bool>,
    wait_for: Vec<Option<String>>,
    servers: Vec<Server>,
    clients: Vec<Client>,
    /// Per connection of the run under way, when its clients run as tasks (`gate`):
    /// whether its client has its batch (answered, the next not sent yet).
    with_client: Vec<bool>,
    gated: bool,
    /// The run whose clients exist, and when it started.
    active: Option<(usize, u64)>,
    slabs: Slabs,
    slab_pages: u64,
    bucket_mask: u64,
    /// The hash chains and the segmented LRU, when the scenario keeps them.
    chains: Option<Chains>,
    lru: Option<Segmented>,
    /// Requests of all runs when every run is a count (no `test-time`), and those
    /// served so far: the progress line's share.
    total: Option<u64>,
    served: u64,
}

impl Memcached {
    pub fn new(o: &MemcachedOptions, seed: u64) -> Result<Self, String> {
        let threads = check_count("memcached.threads", o.threads)?;
        if o.phase.is_empty() || o.phase.len() > usize::from(u8::MAX) {
            return Err(format!(
                "memcached.phase: give 1 to {} memtier runs",
                u8::MAX
            ));
        }
        let (mut runs, mut names, mut measure) = (Vec::new(), Vec::<String>::new(), Vec::new());
        let mut wait_for = Vec::new();
        for (i, p) in o.phase.iter().enumerate() {
            let name = p.name.clone().unwrap_or_else(|| format!("phase{i}"));
            if names.contains(&name) {
                return Err(format!("memcached.phase[{i}].name: `{name}` is used twice"));
            }
            if i == 0 && p.wait_for.is_some() {
                return Err(
                    "memcached.phase[0].wait-for: the first run starts with the workload \
                     (use the workload's `after`)"
                        .into(),
                );
            }
            let run = Run::parse(p, i, seed)?;
            let repeats = check_count(&format!("memcached.phase[{i}].run-count"), p.run_count)?;
            runs.extend(std::iter::repeat_n(run, repeats));
            names.push(name);
            measure.push(p.measure);
            wait_for.push(p.wait_for.clone());
        }
        let min = runs.iter().map(|r| r.min).min().unwrap_or(0);
        let max = runs.iter().map(|r| r.max).max().unwrap_or(0);
        if max - min >= MAX_KEYS {
            return Err(format!(
                "memcached.phase: the runs' key ranges span more than {MAX_KEYS} keys"
            ));
        }
        let keys = max - min + 1;
        let slabs = Slabs::new(min, keys);
        // memcached doubles its hash table (from 2^16 buckets) when items exceed 1.5 × buckets.
        let buckets = (keys * 2).div_ceil(3).next_power_of_two().max(1 << 16);
        let counted = |r: &Run| (0..r.clients).map(|c| r.new_client(c).left).sum::<u64>();
        let total =
            (runs.iter().all(|r| r.test_time_ns.is_none())).then(|| runs.iter().map(counted).sum());
        Ok(Memcached {
            total,
            served: 0,
            slab_pages: slabs.pages_needed(&runs, min, max),
            runs,
            names,
            measure,
            wait_for,
            servers: vec![Server::default(); threads],
            clients: Vec::new(),
            with_client: Vec::new(),
            gated: false,
            active: None,
            chains: o.hash_chains.then(|| Chains::new(buckets, keys)),
            lru: (o.lru == LruMode::Segmented).then(|| Segmented::new(slabs.classes.len(), keys)),
            slabs,
            bucket_mask: buckets - 1,
        })
    }

    /// The connections thread `thread` serves in the run under way: `t, t + threads, ...`.
    fn mine(&self, thread: usize) -> impl Iterator<Item = usize> {
        let total = self.runs[self.servers[thread].run].clients as usize;
        (thread..total).step_by(self.servers.len())
    }

    /// The connection thread `thread` serves next, if any has requests left and (with
    /// clients as tasks) its batch sent: round robin from the last served.
    fn pick_client(&mut self, thread: usize) -> Option<usize> {
        let (t, threads) = (thread as u64, self.servers.len() as u64);
        let total = self.runs[self.servers[thread].run].clients;
        let mine = if t < total {
            (total - t).div_ceil(threads)
        } else {
            0
        };
        let cur = self.servers[thread].cur;
        let k = (0..mine).map(|step| (cur + step) % mine).find(|k| {
            let c = (t + k * threads) as usize;
            self.clients[c].left > 0 && !(self.gated && self.with_client[c])
        })?;
        self.servers[thread].cur = k;
        Some((t + k * threads) as usize)
    }

    /// With clients as tasks, a thread with no batch to serve waits in epoll while a
    /// client holds one of its connections: its run ends only when all are back.
    fn wait_for_batch(&self, thread: usize) -> Option<Step> {
        let waiting = self.gated && (self.mine(thread)).any(|c| self.with_client[c]);
        waiting.then_some(Step::Idle)
    }

    /// One request of client `c` in run `r` at `now_ns`; returns the bytes of value
    /// transferred.
    fn serve(&mut self, r: usize, c: usize, now_ns: u64, out: &mut Vec<Touch>) -> u32 {
        let run = &self.runs[r];
        let client = &mut self.clients[c];
        client.left -= 1;
        self.served += 1;
        let set = client.cycle % (run.sets + run.gets) < run.sets;
        client.cycle += 1;
        let key = client.key(run, set);
        let bucket = splitmix64(key) & self.bucket_mask;
        out.push(Touch::Mem {
            region: 1,
            page: bucket * 8 / PAGE_SIZE,
            write: set,
        });
        let size = item_size(run.prefix_len, digits(key), run.data);
        let class = self.slabs.class_of(size);
        let data = run.data;
        let index = (key - self.slabs.base) as u32;
        // memcached's current_time: whole seconds (since the workload started).
        let now = u32::try_from(now_ns / 1_000_000_000).unwrap_or(u32::MAX);
        if set {
            let old = self.slabs.get(key).map(|(_, stored)| stored);
            let offset = self.slabs.set(key, class);
            item_pages(offset, size, true, out);
            self.store(bucket, index, old, class, now, out);
            return data;
        }
        self.lookup(bucket, index, out);
        let (offset, len, stored) = match self.slabs.get(key) {
            // An item set with another data size: its exact length is not kept.
            Some((offset, stored)) if stored != class => {
                (offset, u64::from(self.slabs.classes[stored].size), stored)
            }
            Some((offset, _)) => (offset, size, class),
            None => return 0,
        };
        item_pages(offset, len, false, out);
        if let Some(lru) = &mut self.lru {
            let slabs = &self.slabs;
            let page = |k: u32| slabs.first_page(k);
            lru.bump(stored, index, now, &page, out);
            lru.juggle(stored, now, &page, out);
        }
        data
    }

    /// assoc_find() for a GET: the items ahead of `index` in its bucket's chain (all of
    /// it for a key never set).
    fn lookup(&self, bucket: u64, index: u32, out: &mut Vec<Touch>) {
        if let Some(chains) = &self.chains {
            let page = |k: u32| self.slabs.first_page(k);
            chains.find(bucket, index, &page, out);
        }
    }

    /// do_store_item() for a SET of `index`, whose old item (if any) was in class `old`:
    /// do_item_get() finds the old item in the chain, do_item_replace() unlinks it
    /// (assoc_delete, item_unlink_q) and links the new one (assoc_insert at the chain's
    /// head, item_link_q at HOT's head); then the maintainer juggles the class.
    fn store(
        &mut self,
        bucket: u64,
        index: u32,
        old: Option<usize>,
        class: usize,
        now: u32,
        out: &mut Vec<Touch>,
    ) {
        let slabs = &self.slabs;
        let page = |k: u32| slabs.first_page(k);
        if let Some(chains) = &mut self.chains {
            let found = chains.find(bucket, index, &page, out);
            debug_assert_eq!(found, old.is_some());
            if found {
                chains.delete(bucket, index, &page, out);
            }
            chains.insert(bucket, index);
        }
        if let Some(lru) = &mut self.lru {
            if let Some(old) = old {
                lru.unlink(old, index, &page, out);
            }
            lru.link(class, index, now, &page, out);
            lru.juggle(class, now, &page, out);
        }
    }
}

impl Connections for Memcached {
    fn client_threads(&self) -> usize {
        let threads = |r: &Run| (r.clients / r.per_thread) as usize;
        self.runs.iter().map(threads).max().unwrap_or(0)
    }

    fn owner(&self, conn: u32) -> usize {
        let r = self.active.map_or(0, |a| a.0);
        (u64::from(conn) / self.runs[r].per_thread) as usize
    }

    fn server(&self, conn: u32) -> usize {
        conn as usize % self.servers.len()
    }

    fn gate(&mut self) {
        self.gated = true;
    }

    fn batch_sent(&mut self, conn: u32) {
        self.with_client[conn as usize] = false;
    }

    fn has_work(&self, thread: usize) -> bool {
        (self.mine(thread)).any(|c| self.clients[c].left > 0 && !self.with_client[c])
    }
}

impl Workload for Memcached {
    fn layout(&self) -> Layout {
        let table_pages = ((self.bucket_mask + 1) * 8).div_ceil(PAGE_SIZE);
        let regions = vec![
            RegionSpec::Anon {
                pages: self.slab_pages,
            },
            RegionSpec::Anon { pages: table_pages },
        ];
        Layout {
            files: Vec::new(),
            processes: vec![ProcessSpec { regions }],
            thread_process: vec![Some(0); self.servers.len()],
        }
    }

    fn phases(&self) -> Vec<String> {
        self.names.clone()
    }

    fn waits_for(&self, phase: usize) -> Option<&str> {
        self.wait_for.get(phase)?.as_deref()
    }

    /// Each run ends at a barrier; a phase's `run-count` runs share its name.
    fn phase_after(&self, barriers: usize) -> usize {
        self.runs
            .get(barriers)
            .map_or(self.names.len() - 1, |r| usize::from(r.phase))
    }

    fn done_fraction(&self) -> Option<f64> {
        self.total.map(|t| self.served as f64 / t.max(1) as f64)
    }

    fn measured(&self, phase: u8, _now_ns: u64) -> bool {
        self.measure
            .get(usize::from(phase))
            .copied()
            .unwrap_or(false)
    }

    fn connections(&mut self) -> Option<&mut dyn Connections> {
        Some(self)
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        if std::mem::take(&mut self.servers[thread].answered) {
            let conn = self.servers[thread].conn;
            return Step::RoundTrip { conn };
        }
        let r = self.servers[thread].run;
        let Some(run) = self.runs.get(r) else {
            return Step::Done;
        };
        // The barrier guarantees every thread has finished run r - 1 here.
        if self.active.is_none_or(|(active, _)| active != r) {
            self.clients = (0..run.clients).map(|c| run.new_client(c)).collect();
            self.with_client = vec![false; self.clients.len()];
            self.active = Some((r, now_ns));
        }
        let start = self.active.map_or(now_ns, |a| a.1) + run.delay_ns;
        if now_ns < start {
            return Step::Sleep { until_ns: start };
        }
        let time_up = run
            .test_time_ns
            .is_some_and(|t| now_ns >= start.saturating_add(t));
        let (phase, pipeline) = (run.phase, run.pipeline);
        let client = if time_up {
            None
        } else {
            self.pick_client(thread)
        };
        let Some(c) = client else {
            if let Some(wait) = self.wait_for_batch(thread) {
                return wait;
            }
            let s = &mut self.servers[thread];
            *s = Server {
                run: r + 1,
                ..Server::default()
            };
            return if s.run == self.runs.len() {
                Step::Done
            } else {
                Step::Barrier
            };
        };
        let bytes = self.serve(r, c, now_ns, out);
        let left = self.clients[c].left;
        let s = &mut self.servers[thread];
        s.batch += 1;
        if s.batch == pipeline || left == 0 {
            s.batch = 0;
            s.cur += 1;
            s.answered = true;
            s.conn = c as u32;
            if self.gated {
                self.with_client[c] = true;
            }
        }
        Step::Op { phase, bytes }
    }
}

#[cfg(test)]
mod tests;
