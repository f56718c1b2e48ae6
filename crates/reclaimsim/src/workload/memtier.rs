//! memcached serving memtier_benchmark runs: memtier's key patterns and SET:GET ratio, and
//! memcached's slab allocator, which decides the anonymous pages each item lives in.

use super::mcitems::{Chains, Segmented};
use super::{
    check_count, splitmix64, stream_rng, Layout, ProcessSpec, RegionSpec, Rng, Step, Touch,
    Workload,
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
    clients: u64,
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
    /// comes next.
    answered: bool,
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
            active: None,
            chains: o.hash_chains.then(|| Chains::new(buckets, keys)),
            lru: (o.lru == LruMode::Segmented).then(|| Segmented::new(slabs.classes.len(), keys)),
            slabs,
            bucket_mask: buckets - 1,
        })
    }

    /// The connection thread `thread` serves next in run `run`, if any has requests left.
    fn pick_client(&mut self, thread: usize) -> Option<usize> {
        let (t, threads) = (thread as u64, self.servers.len() as u64);
        let total = self.runs[self.servers[thread].run].clients;
        let mine = if t < total {
            (total - t).div_ceil(threads)
        } else {
            0
        };
        let cur = self.servers[thread].cur;
        let k = (0..mine)
            .map(|step| (cur + step) % mine)
            .find(|k| self.clients[(t + k * threads) as usize].left > 0)?;
        self.servers[thread].cur = k;
        Some((t + k * threads) as usize)
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

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        if std::mem::take(&mut self.servers[thread].answered) {
            return Step::RoundTrip;
        }
        let r = self.servers[thread].run;
        let Some(run) = self.runs.get(r) else {
            return Step::Done;
        };
        // The barrier guarantees every thread has finished run r - 1 here.
        if self.active.is_none_or(|(active, _)| active != r) {
            self.clients = (0..run.clients).map(|c| run.new_client(c)).collect();
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
        }
        Step::Op { phase, bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::mcitems::Lru;

    fn options(text: &str) -> MemcachedOptions {
        toml::from_str(text).unwrap()
    }

    fn run(text: &str) -> Run {
        let o: MemtierOptions = toml::from_str(text).unwrap();
        Run::parse(&o, 0, 1).unwrap()
    }

    /// All steps of all threads, taking turns, until every thread is done.
    fn trace(w: &mut Memcached) -> Vec<(usize, Step, Vec<Touch>)> {
        let threads = w.layout().threads();
        let mut parked = vec![None; threads];
        let mut steps = Vec::new();
        while steps.len() < 1_000_000 {
            for (t, parked) in parked.iter_mut().enumerate().filter(|(_, p)| p.is_none()) {
                let mut out = Vec::new();
                let step = w.next(t, 0, &mut out);
                if !matches!(step, Step::Op { .. } | Step::RoundTrip) {
                    *parked = Some(step);
                }
                steps.push((t, step, out));
            }
            if parked.iter().all(|p| *p == Some(Step::Done)) {
                return steps;
            }
            if parked.iter().all(|p| *p == Some(Step::Barrier)) {
                parked.fill(None);
            }
        }
        panic!("workload did not finish");
    }

    /// Each connection's pipeline of requests is answered in one round trip: a thread's
    /// requests come in runs of `pipeline` (a client's last run may be shorter), each
    /// followed by a RoundTrip.
    #[test]
    fn a_round_trip_follows_each_pipeline_batch() {
        let mut w = Memcached::new(
            &options(
                r#"
threads = 2
[[phase]]
key-pattern = "P:P"
ratio = "1:0"
key-maximum = 100
requests = "allkeys"
clients = 3
threads = 1
pipeline = 4
"#,
            ),
            1,
        )
        .unwrap();
        let steps = trace(&mut w);
        for t in 0..2 {
            let mine: Vec<Step> = steps.iter().filter(|s| s.0 == t).map(|s| s.1).collect();
            let runs: Vec<usize> = mine
                .split(|s| *s == Step::RoundTrip)
                .map(|run| run.iter().filter(|s| matches!(s, Step::Op { .. })).count())
                .collect();
            let (last, full) = runs.split_last().unwrap();
            assert_eq!(*last, 0, "the thread ends right after a round trip");
            assert!(full.iter().all(|&n| (1..=4).contains(&n)), "{runs:?}");
            assert!(
                full.iter().filter(|&&n| n == 4).count() >= full.len() - 2,
                "{runs:?}"
            );
        }
    }

    #[test]
    fn slab_classes_match_memcached() {
        let classes = slab_classes();
        assert_eq!(
            classes[..15],
            [96, 120, 152, 192, 240, 304, 384, 480, 600, 752, 944, 1184, 1480, 1856, 2320]
        );
        let slabs = Slabs::new(0, 1);
        let chunk = |data| classes[slabs.class_of(item_size(8, digits(16_000_000), data))];
        assert_eq!(chunk(2000), 2320);
        assert_eq!(chunk(1024), 1184);
        assert_eq!(chunk(1000), 1184);
    }

    #[test]
    fn parallel_subranges() {
        assert_eq!(parallel_range(1, 65_000_000, 36, 0), Some((1, 1_805_556)));
        assert_eq!(
            parallel_range(1, 65_000_000, 36, 1),
            Some((1_805_557, 3_611_112))
        );
        assert_eq!(
            parallel_range(1, 65_000_000, 36, 35),
            Some((63_194_461, 65_000_000))
        );
        assert_eq!(parallel_range(0, 10, 3, 2), Some((8, 10)));
        assert_eq!(parallel_range(1, 10, 6, 5), None);
        let r = run("key-pattern='P:P'\nrequests='allkeys'\nkey-minimum=1\nkey-maximum=10\nclients=1\nthreads=3");
        assert_eq!(r.requests, 4);
        let mut last = r.new_client(2);
        assert_eq!(
            (0..4).map(|_| last.key(&r, true)).collect::<Vec<_>>(),
            [9, 10, 9, 10]
        );
        let r = run("key-pattern='R:R'\nrequests='allkeys'\nkey-minimum=1\nkey-maximum=10");
        assert_eq!(r.requests, 9);
    }

    #[test]
    fn random_keys_stay_in_range() {
        let r = run("key-pattern='R:R'\nkey-minimum=5\nkey-maximum=14\nrandomize=true");
        let mut c = r.new_client(0);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[(c.key(&r, false) - 5) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
    }

    #[test]
    fn gaussian_central_third_gets_two_thirds() {
        let r = run("key-pattern='G:G'\nkey-minimum=0\nkey-maximum=29999");
        let mut c = r.new_client(0);
        let n = 100_000;
        let central = (0..n)
            .filter(|_| (10_000..20_000).contains(&c.key(&r, false)))
            .count();
        let share = central as f64 / n as f64;
        assert!((0.66..0.70).contains(&share), "central third got {share}");
    }

    #[test]
    fn zipf_keys_favour_small_keys() {
        let r = run("key-pattern='Z:Z'\nkey-minimum=1\nkey-maximum=1000");
        let mut c = r.new_client(0);
        let n = 100_000;
        let keys: Vec<u64> = (0..n).map(|_| c.key(&r, false)).collect();
        assert!(keys.iter().all(|k| (1..=1000).contains(k)));
        // P(1) = 1 / H(1000) ≈ 0.134 for exponent 1.
        let ones = keys.iter().filter(|&&k| k == 1).count() as f64 / n as f64;
        assert!((0.12..0.15).contains(&ones), "P(1) = {ones}");
    }

    #[test]
    fn consecutive_sets_fill_adjacent_chunks() {
        let o = options(
            "threads=1\nlru='none'\n[[phase]]\nkey-pattern='P:P'\nratio='1:0'\nrequests='allkeys'\ndata-size=2000\n\
             key-minimum=10000001\nkey-maximum=10000004\nclients=1\nthreads=1",
        );
        let mut w = Memcached::new(&o, 0).unwrap();
        let slab_pages = |steps: Vec<(usize, Step, Vec<Touch>)>| -> Vec<Vec<u64>> {
            steps
                .into_iter()
                .filter(|s| matches!(s.1, Step::Op { .. }))
                .map(|s| {
                    s.2.iter()
                        .filter_map(|t| match *t {
                            Touch::Mem {
                                region: 0,
                                page,
                                write: true,
                            } => Some(page),
                            _ => None,
                        })
                        .collect()
                })
                .collect()
        };
        // 2075-byte items in 2320-byte chunks: [0, 2075), [2320, 4395), [4640, 6715), [6960, 9035).
        assert_eq!(
            slab_pages(trace(&mut w)),
            [vec![0], vec![0, 1], vec![1], vec![1, 2]]
        );
        assert_eq!(
            w.layout().processes[0].regions[0],
            RegionSpec::Anon { pages: 256 }
        );
    }

    #[test]
    fn gets_touch_bucket_and_item() {
        let o = options(
            "threads=1\n[[phase]]\nkey-pattern='S:S'\nratio='1:1'\nrequests=4\ndata-size=32\n\
             key-minimum=1\nkey-maximum=3\nclients=1\nthreads=1",
        );
        let mut w = Memcached::new(&o, 0).unwrap();
        let mut steps = trace(&mut w);
        steps.retain(|s| s.1 != Step::RoundTrip);
        let get = &steps[1].2;
        assert_eq!(get.len(), 2);
        assert!(matches!(
            get[0],
            Touch::Mem {
                region: 1,
                write: false,
                ..
            }
        ));
        assert_eq!(
            get[1],
            Touch::Mem {
                region: 0,
                page: 0,
                write: true
            }
        );
        assert_eq!(
            steps[1].1,
            Step::Op {
                phase: 0,
                bytes: 32
            }
        );
    }

    /// Keys `a < b` of 1..=n in the same bucket of a 2^16-bucket table.
    fn same_bucket(n: u64) -> (u64, u64) {
        let bucket = |k: u64| splitmix64(k) & 0xffff;
        (1..=n)
            .flat_map(|b| (1..b).map(move |a| (a, b)))
            .find(|&(a, b)| bucket(a) == bucket(b))
            .unwrap()
    }

    /// SETs of keys 1..=n in order, then one GET of `get`; the GET's touches.
    fn get_after_sets(extra: &str, n: u64, get: u64) -> (Memcached, Vec<Touch>) {
        let o = options(&format!(
            "threads=1\n{extra}\n[[phase]]\nkey-pattern='S:S'\nratio='1:0'\nrequests={n}\n\
             key-minimum=1\nkey-maximum={n}\nclients=1\nthreads=1\ndata-size=2000\n\
             [[phase]]\nkey-pattern='S:S'\nratio='0:1'\nrequests=1\nkey-minimum={get}\n\
             key-maximum={get}\nclients=1\nthreads=1\ndata-size=2000"
        ));
        let mut w = Memcached::new(&o, 0).unwrap();
        let steps = trace(&mut w);
        let get = steps
            .into_iter()
            .rfind(|s| matches!(s.1, Step::Op { phase: 1, .. }))
            .unwrap();
        (w, get.2)
    }

    /// The bucket's page, then the item's (2075 bytes, 1 or 2 pages, the first written).
    fn bucket_and_item(w: &Memcached, key: u64) -> Vec<Touch> {
        let mut out = vec![Touch::Mem {
            region: 1,
            page: (splitmix64(key) & w.bucket_mask) * 8 / PAGE_SIZE,
            write: false,
        }];
        let (offset, _) = w.slabs.get(key).unwrap();
        item_pages(offset, 2075, false, &mut out);
        out
    }

    #[test]
    fn a_get_reads_the_items_ahead_in_its_chain() {
        let (a, b) = same_bucket(2000);
        let (w, touches) = get_after_sets("", b, a);
        let bucket = splitmix64(a) & w.bucket_mask;
        let chain = w.chains.as_ref().unwrap().chain(bucket);
        let ahead = &chain[..chain.iter().position(|&k| u64::from(k) + 1 == a).unwrap()];
        assert!(
            ahead.contains(&((b - 1) as u32)),
            "b was set later: ahead of a"
        );
        let mut want = bucket_and_item(&w, a);
        let reads = ahead.iter().map(|&k| Touch::Mem {
            region: 0,
            page: w.slabs.first_page(k),
            write: false,
        });
        want.splice(1..1, reads);
        // The first GET of a COLD item sets ITEM_FETCHED only: no LRU move.
        assert_eq!(touches, want);
        // b is at its chain's head: nothing ahead.
        let (w, touches) = get_after_sets("", b, b);
        assert_eq!(touches, bucket_and_item(&w, b));
    }

    #[test]
    fn without_chains_and_lru_a_get_touches_its_bucket_and_item_only() {
        let (a, b) = same_bucket(2000);
        let (w, touches) = get_after_sets("lru='none'\nhash_chains=false", b, a);
        assert!(w.chains.is_none() && w.lru.is_none());
        assert_eq!(touches, bucket_and_item(&w, a));
    }

    #[test]
    fn sets_link_into_hot_and_the_maintainer_keeps_it_to_a_fifth() {
        let (w, _) = get_after_sets("", 1000, 1);
        let lru = w.lru.as_ref().unwrap();
        let class = w.slabs.class_of(2075);
        assert_eq!(lru.count(class, Lru::Hot), 200);
        assert_eq!(lru.count(class, Lru::Cold), 800);
    }

    #[test]
    fn item_links_take_host_memory_for_the_keys_stored_not_the_key_range() {
        let o = options(
            "threads=1\n[[phase]]\nkey-pattern='S:S'\nratio='1:0'\nrequests=1000\n\
             key-minimum=1\nkey-maximum=1000000\nclients=1\nthreads=1\ndata-size=2000",
        );
        let mut w = Memcached::new(&o, 0).unwrap();
        let heads = (w.bucket_mask + 1) * 4;
        let chains = |w: &Memcached| w.chains.as_ref().unwrap().host_bytes() - heads;
        assert_eq!(chains(&w) + w.lru.as_ref().unwrap().host_bytes(), 0);
        trace(&mut w);
        // 1,000 keys stored of 1,000,000: the arrays (17 B a key) hold their first chunk
        // of 4,096 keys (and the chunks' tables, 16 B a chunk).
        let bytes = chains(&w) + w.lru.as_ref().unwrap().host_bytes();
        assert!((17 * 4096..=17 * 4096 + 5 * 64).contains(&bytes), "{bytes}");
    }

    #[test]
    fn a_set_links_into_hot_and_the_maintainer_moves_it_to_cold() {
        let o = options(
            "threads=1\nhash_chains=false\n[[phase]]\nkey-pattern='S:S'\nratio='1:0'\n\
             requests=2\nkey-minimum=1\nkey-maximum=2\nclients=1\nthreads=1\ndata-size=2000",
        );
        let mut w = Memcached::new(&o, 0).unwrap();
        let ops: Vec<Vec<Touch>> = trace(&mut w)
            .into_iter()
            .filter(|s| matches!(s.1, Step::Op { .. }))
            .map(|s| s.2)
            .collect();
        let write0 = Touch::Mem {
            region: 0,
            page: 0,
            write: true,
        };
        // Key 1 (page 0) went to COLD after its SET (HOT may hold 20% of 1 item: none).
        // Key 2 (pages 0-1): its bucket and item, then the juggle moves it from HOT to
        // COLD: its own header (page 0), then COLD's old head's prev, key 1's (page 0).
        assert_eq!(ops[1].len(), 1 + 2 + 2);
        assert_eq!(ops[1][3..], [write0, write0]);
        let lru = w.lru.as_ref().unwrap();
        assert_eq!(lru.list(w.slabs.class_of(2075), Lru::Cold), [1, 0]);
    }

    /// The progress line's share: requests served over all runs' requests, when every
    /// run is a count.
    #[test]
    fn the_share_done_counts_requests_of_counted_runs() {
        let text = "threads=2\n[[phase]]\nname='load'\nkey-pattern='P:P'\nratio='1:0'\n\
                    requests='allkeys'\nkey-minimum=1\nkey-maximum=100\nclients=1\nthreads=4\n\
                    [[phase]]\nname='run'\nkey-pattern='R:R'\nratio='0:1'\nrequests=50\n\
                    key-minimum=1\nkey-maximum=100\nclients=1\nthreads=4";
        let mut w = Memcached::new(&options(text), 0).unwrap();
        assert_eq!(w.done_fraction(), Some(0.0));
        let mut out = Vec::new();
        while !matches!(w.next(0, 0, &mut out), Step::Op { .. }) {}
        assert_eq!(
            w.done_fraction(),
            Some(1.0 / 300.0),
            "100 SETs and 200 GETs"
        );
        trace(&mut w);
        assert_eq!(w.done_fraction(), Some(1.0));
        let timed = text.replace("requests=50", "test-time='1s'");
        let w = Memcached::new(&options(&timed), 0).unwrap();
        assert_eq!(w.done_fraction(), None, "a run of test-time has no count");
    }

    #[test]
    fn phases_run_in_order_with_barriers() {
        let o = options(
            "threads=2\n[[phase]]\nname='load'\nkey-pattern='P:P'\nratio='1:0'\nrequests='allkeys'\n\
             key-minimum=1\nkey-maximum=100\nclients=1\nthreads=4\npipeline=8\nmeasure=false\n\
             [[phase]]\nname='run'\nkey-pattern='G:G'\nratio='0:1'\nrequests=50\nkey-minimum=1\n\
             key-maximum=100\nclients=1\nthreads=4\nrandomize=true\ndistinct-client-seed=true",
        );
        let mut w = Memcached::new(&o, 0).unwrap();
        assert_eq!(w.phases(), ["load", "run"]);
        assert!(!w.measured(0, 0) && w.measured(1, 0));
        let steps = trace(&mut w);
        let ops = |phase| {
            steps
                .iter()
                .filter(|s| matches!(s.1, Step::Op { phase: p, .. } if p == phase))
                .count()
        };
        assert_eq!((ops(0), ops(1)), (100, 200));
        assert_eq!(steps.iter().filter(|s| s.1 == Step::Barrier).count(), 2);
        // Every GET of the run phase hits an item set by the load phase.
        assert!(steps.iter().all(|s| s.1 != Step::Op { phase: 1, bytes: 0 }));
    }

    #[test]
    fn a_delayed_run_sleeps_from_its_start_then_serves() {
        let o = options(
            "threads=2\n[[phase]]\nkey-pattern='P:P'\nratio='1:0'\nrequests='allkeys'\n\
             key-minimum=1\nkey-maximum=10\nclients=1\nthreads=2\n\
             [[phase]]\nkey-pattern='R:R'\nratio='0:1'\nrequests=3\nkey-minimum=1\n\
             key-maximum=10\nclients=1\nthreads=2\ndelay='200ms'",
        );
        let mut w = Memcached::new(&o, 0).unwrap();
        let mut out = Vec::new();
        for t in 0..2 {
            while matches!(w.next(t, 0, &mut out), Step::Op { .. } | Step::RoundTrip) {
                out.clear();
            }
        }
        // The barrier is released at 5 ms: both threads sleep until 205 ms.
        for t in 0..2 {
            assert_eq!(
                w.next(t, 5_000_000, &mut out),
                Step::Sleep {
                    until_ns: 205_000_000
                }
            );
            assert!(out.is_empty());
        }
        assert_eq!(
            w.next(1, 100_000_000, &mut out),
            Step::Sleep {
                until_ns: 205_000_000
            }
        );
        assert!(matches!(
            w.next(0, 205_000_000, &mut out),
            Step::Op { phase: 1, .. }
        ));
    }

    #[test]
    fn deterministic_per_seed() {
        let text = "threads=3\n[[phase]]\nkey-pattern='R:R'\nratio='1:3'\nrequests=300\n\
                    key-minimum=1\nkey-maximum=5000\nclients=2\nthreads=2\nrandomize=true\n\
                    distinct-client-seed=true";
        let stream = |seed| trace(&mut Memcached::new(&options(text), seed).unwrap());
        assert_eq!(stream(9), stream(9));
        assert_ne!(stream(9), stream(10));
    }

    #[test]
    fn rejects_bad_options() {
        let err = |phase: &str| {
            Memcached::new(&options(&format!("[[phase]]\n{phase}")), 0)
                .err()
                .unwrap()
        };
        assert!(err("key-minimum=10\nkey-maximum=5").contains("key-maximum"));
        assert!(err("key-pattern='P:R'").contains("key-pattern"));
        assert!(err("key-pattern='X:R'").contains("key-pattern"));
        assert!(err("ratio='0:0'").contains("ratio"));
        assert!(err("requests='some'").contains("requests"));
        assert!(err("requests=5\ntest-time=3").contains("exclusive"));
        assert!(err("clients=0").contains("clients"));
        assert!(err("data-size='1m'").contains("data-size"));
        assert!(err("key-pattern='Z:Z'\nkey-zipf-exp=6").contains("key-zipf-exp"));
        assert!(err("key-pattern='G:G'\nkey-median=-3").contains("key-median"));
        assert!(err("key-pattern='G:G'\nkey-stddev=1e300").contains("key-stddev"));
        assert!(Memcached::new(&options("phase=[]"), 0).is_err());
    }
}
