//! usemem-like anonymous memory touching: sequential passes or random/zipf page picks.

use super::fio::{Distribution, Zipf};
use super::{check_count, stream_rng, Layout, ProcessSpec, RegionSpec, Rng, Step, Touch, Workload};
use crate::scenario::units::{ByteSize, Duration, PAGE_SIZE};
use rand::Rng as _;
use serde::Deserialize;

/// vm-scalability's `usemem`-style anonymous memory users: `threads` workers, each with
/// its own process and region of `size` (or all in one shared region), touching one page
/// at a time.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AnonOptions {
    /// Region size: per thread, or of the one shared region.
    pub size: ByteSize,
    /// Number of workers. Default 1.
    #[serde(default = "one")]
    pub threads: u64,
    /// All workers in one process touching one region. Default false.
    #[serde(default)]
    pub shared: bool,
    /// `seq`, `random` or `zipf:θ[:center]` (fio's zipf generator). Default `seq`.
    #[serde(default = "seq")]
    pub pattern: String,
    /// Passes over the region (a random pass is as many touches as the region has pages).
    /// Default 1 unless `runtime` is given.
    pub passes: Option<u64>,
    /// Stop after this long.
    pub runtime: Option<Duration>,
    /// Stores (dirtying the pages) rather than loads. Default true.
    #[serde(default = "yes")]
    pub write: bool,
    /// Touches per operation. Default 1.
    #[serde(default = "one")]
    pub ops_per_step: u64,
}

/// Most touches per operation (keeps `bytes` within `u32`).
const MAX_PER_OP: u64 = 1 << 16;

fn one() -> u64 {
    1
}
fn yes() -> bool {
    true
}
fn seq() -> String {
    "seq".into()
}

/// How a worker picks pages.
#[derive(Clone, Debug)]
enum Pattern {
    Sequential,
    Uniform,
    Zipf { zipf: Zipf, offset: u64 },
}

#[derive(Clone, Debug)]
struct Worker {
    rng: Rng,
    pattern: Pattern,
    /// Pages of the region this worker walks sequentially.
    first: u64,
    len: u64,
    /// Touches done so far, and in total.
    done: u64,
    limit: u64,
}

/// The anon generator: worker `t` is thread `t`.
pub struct Anon {
    pages: u64,
    shared: bool,
    write: bool,
    per_op: u64,
    end_ns: Option<u64>,
    workers: Vec<Worker>,
}

impl Anon {
    pub fn new(o: &AnonOptions, seed: u64) -> Result<Self, String> {
        let threads = check_count("anon.threads", o.threads)?;
        let pages = o.size.pages();
        if pages == 0 {
            return Err("anon.size: must be positive".into());
        }
        if o.ops_per_step == 0 || o.ops_per_step > MAX_PER_OP {
            return Err(format!(
                "anon.ops_per_step: must be between 1 and {MAX_PER_OP}"
            ));
        }
        if o.passes == Some(0) || o.runtime == Some(Duration(0)) {
            return Err("anon.passes, anon.runtime: must be positive".into());
        }
        let dist = match o.pattern.as_str() {
            "seq" => None,
            p => Some(Distribution::parse(p).map_err(|e| format!("anon.pattern: {e} (or seq)"))?),
        };
        let zipf = match dist {
            Some(Distribution::Zipf { theta, center }) => Some((Zipf::new(pages, theta), center)),
            _ => None,
        };
        let passes = o
            .passes
            .unwrap_or(if o.runtime.is_some() { u64::MAX } else { 1 });
        let workers = (0..threads)
            .map(|t| {
                let mut rng = stream_rng(seed, t as u64);
                let pattern = match (&dist, &zipf) {
                    (None, _) => Pattern::Sequential,
                    (_, Some((zipf, center))) => Pattern::Zipf {
                        offset: zipf.offset(*center, &mut rng),
                        zipf: zipf.clone(),
                    },
                    (Some(_), None) => Pattern::Uniform,
                };
                // A shared region is split into equal slices for sequential walkers.
                let (first, len) = match pattern {
                    Pattern::Sequential if o.shared => {
                        let slice = |t: usize| pages * t as u64 / threads as u64;
                        (slice(t), slice(t + 1) - slice(t))
                    }
                    _ => (0, pages),
                };
                let limit = passes.saturating_mul(len);
                Worker {
                    rng,
                    pattern,
                    first,
                    len,
                    done: 0,
                    limit,
                }
            })
            .collect();
        Ok(Anon {
            pages,
            shared: o.shared,
            write: o.write,
            per_op: o.ops_per_step,
            end_ns: o.runtime.map(|r| r.0),
            workers,
        })
    }
}

impl Workload for Anon {
    fn layout(&self) -> Layout {
        let region = ProcessSpec {
            regions: vec![RegionSpec::Anon { pages: self.pages }],
        };
        let threads = self.workers.len();
        if self.shared {
            Layout {
                files: Vec::new(),
                processes: vec![region],
                thread_process: vec![Some(0); threads],
            }
        } else {
            Layout {
                files: Vec::new(),
                processes: vec![region; threads],
                thread_process: (0..threads).map(Some).collect(),
            }
        }
    }

    fn phases(&self) -> Vec<String> {
        vec!["run".into()]
    }

    fn measured(&self, _phase: u8, _now_ns: u64) -> bool {
        true
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        let w = &mut self.workers[thread];
        if w.done >= w.limit || self.end_ns.is_some_and(|end| now_ns >= end) {
            return Step::Done;
        }
        let n = self.per_op.min(w.limit - w.done);
        for i in w.done..w.done + n {
            let page = match &w.pattern {
                Pattern::Sequential => w.first + i % w.len,
                Pattern::Uniform => w.rng.gen_range(0..self.pages),
                Pattern::Zipf { zipf, offset } => zipf.sample(*offset, &mut w.rng),
            };
            out.push(Touch::Mem {
                region: 0,
                page,
                write: self.write,
            });
        }
        w.done += n;
        Step::Op {
            phase: 0,
            bytes: (n * PAGE_SIZE) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(text: &str, seed: u64) -> Anon {
        Anon::new(&toml::from_str(text).unwrap(), seed).unwrap()
    }

    fn pages(w: &mut Anon, thread: usize) -> Vec<u64> {
        let mut out = Vec::new();
        while let Step::Op { .. } = w.next(thread, 0, &mut out) {}
        out.iter()
            .map(|t| match t {
                Touch::Mem { page, .. } => *page,
                _ => panic!("unexpected touch {t:?}"),
            })
            .collect()
    }

    #[test]
    fn sequential_passes_in_batches() {
        let mut w = build("size='12k'\npasses=2\nops_per_step=4", 0);
        let mut out = Vec::new();
        assert_eq!(
            w.next(0, 0, &mut out),
            Step::Op {
                phase: 0,
                bytes: 16384
            }
        );
        assert_eq!(pages(&mut w, 0), vec![1, 2]);
        let mut w = build("size='16k'\nthreads=2\nshared=true", 0);
        assert_eq!(pages(&mut w, 1), vec![2, 3]);
        assert_eq!(w.layout().processes.len(), 1);
    }

    #[test]
    fn random_patterns_stay_in_range_and_are_deterministic() {
        for pattern in ["random", "zipf:0.9"] {
            let text = format!("size='400k'\nthreads=2\npattern='{pattern}'\npasses=3");
            let a = pages(&mut build(&text, 1), 1);
            assert_eq!(a.len(), 300);
            assert!(a.iter().all(|&p| p < 100));
            assert_eq!(a, pages(&mut build(&text, 1), 1));
            assert_ne!(a, pages(&mut build(&text, 2), 1));
        }
    }

    #[test]
    fn rejects_bad_options() {
        let err = |t: &str| Anon::new(&toml::from_str(t).unwrap(), 0).err().unwrap();
        assert!(err("size='1m'\npattern='hot'").starts_with("anon.pattern:"));
        assert!(err("size='1m'\nthreads=0").starts_with("anon.threads:"));
        assert!(err("size=0").starts_with("anon.size:"));
    }
}
