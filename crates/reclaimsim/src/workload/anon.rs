//! usemem-like anonymous memory touching: sequential passes, picks from fio's
//! `random_distribution` language, or a weighted mixture of them over page ranges.

use super::distribution::{Distribution, MixPart, Sampler};
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
    /// `seq`, or a fio `random_distribution` (`random`, `zipf:θ`, `pareto:h`,
    /// `normal:dev`, `zoned:A/S:...`, `zoned_abs:A/SIZE:...`). Default `seq`.
    #[serde(default = "seq")]
    pub pattern: String,
    /// A weighted mixture of random patterns, each over its own range of the region
    /// (`[[workload.anon.mix]]`), instead of `pattern`.
    #[serde(default)]
    pub mix: Vec<MixOptions>,
    /// Passes over the region (a random pass is as many touches as the region has pages).
    /// Default 1 unless `runtime` or `accesses` is given.
    pub passes: Option<u64>,
    /// Stop each worker after this many touches, its first touches (and `populate`'s)
    /// included.
    pub accesses: Option<u64>,
    /// Stop after this long.
    pub runtime: Option<Duration>,
    /// Stores (dirtying the pages) rather than loads. Default true.
    #[serde(default = "yes")]
    pub write: bool,
    /// Percent of the touches that are loads, the rest stores (fio's rwmixread); replaces
    /// `write`.
    pub rwmixread: Option<u64>,
    /// Store to every page once, in order, before the pattern: a `populate` phase
    /// (usemem's prefault, MAP_POPULATE). Default false.
    #[serde(default)]
    pub populate: bool,
    /// Touches per operation. Default 1.
    #[serde(default = "one")]
    pub ops_per_step: u64,
}

/// One pattern of a mixture: `weight` parts of the touches go to `pattern` over the pages
/// from `from` to `to` percent of the region.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MixOptions {
    pub weight: u64,
    /// A `random_distribution` over the range. Default `random`.
    #[serde(default = "random")]
    pub pattern: String,
    /// Start of the range, in percent of the region. Default 0.
    #[serde(default)]
    pub from: f64,
    /// End of the range, in percent of the region. Default 100.
    #[serde(default = "hundred")]
    pub to: f64,
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
fn random() -> String {
    "random".into()
}
fn hundred() -> f64 {
    100.0
}

#[derive(Clone, Debug)]
struct Worker {
    rng: Rng,
    /// `None`: sequential over `first..first + len`.
    sampler: Option<Sampler>,
    /// Pages of the region this worker walks sequentially (and populates).
    first: u64,
    len: u64,
    /// Touches done in the populate phase, and in the run.
    populated: u64,
    done: u64,
    /// Touches allowed in the run, and in all.
    limit: u64,
    budget: u64,
}

/// The anon generator: worker `t` is thread `t`.
pub struct Anon {
    pages: u64,
    shared: bool,
    read_percent: u64,
    populate: bool,
    per_op: u64,
    end_ns: Option<u64>,
    workers: Vec<Worker>,
}

/// The pattern's sampler over `pages`, or `None` for `seq`.
fn sampler(o: &AnonOptions, pages: u64) -> Result<Option<Sampler>, String> {
    let dist = |field: &str, p: &str, n: u64| {
        Distribution::parse(p)
            .and_then(|d| d.sampler(n))
            .map_err(|e| format!("anon.{field}: {e}"))
    };
    if o.mix.is_empty() {
        return match o.pattern.as_str() {
            "seq" => Ok(None),
            p => dist("pattern", p, pages).map(Some),
        };
    }
    if o.pattern != "seq" {
        return Err("anon.pattern: give either pattern or mix".into());
    }
    let mut parts = Vec::new();
    for (i, m) in o.mix.iter().enumerate() {
        if !(0.0 <= m.from && m.from < m.to && m.to <= 100.0) {
            return Err(format!(
                "anon.mix[{i}].to: needs 0 <= from < to <= 100 (percent; got {} to {})",
                m.from, m.to
            ));
        }
        if m.weight == 0 {
            return Err(format!("anon.mix[{i}].weight: must be positive"));
        }
        let first = (pages as f64 * m.from / 100.0) as u64;
        let end = ((pages as f64 * m.to / 100.0) as u64)
            .max(first + 1)
            .min(pages);
        let field = format!("mix[{i}].pattern");
        parts.push(MixPart {
            weight: m.weight,
            first,
            sampler: dist(&field, &m.pattern, end - first)?,
        });
    }
    Ok(Some(Sampler::Mix(parts)))
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
        if o.passes == Some(0) || o.runtime == Some(Duration(0)) || o.accesses == Some(0) {
            return Err("anon.passes, anon.runtime, anon.accesses: must be positive".into());
        }
        let read_percent = match o.rwmixread {
            Some(r) if r > 100 => {
                return Err(format!("anon.rwmixread: {r} is more than 100 (percent)"))
            }
            Some(r) => r,
            None if o.write => 0,
            None => 100,
        };
        let sampler = sampler(o, pages)?;
        let passes = o
            .passes
            .unwrap_or(if o.runtime.is_some() || o.accesses.is_some() {
                u64::MAX
            } else {
                1
            });
        let workers = (0..threads)
            .map(|t| {
                let mut rng = stream_rng(seed, t as u64);
                let sampler = sampler.as_ref().map(|s| s.seeded(&mut rng));
                // A shared region is split into equal slices for sequential walks and
                // populating.
                let (first, len) = if o.shared && (sampler.is_none() || o.populate) {
                    let slice = |t: usize| pages * t as u64 / threads as u64;
                    (slice(t), slice(t + 1) - slice(t))
                } else {
                    (0, pages)
                };
                let run_len = if sampler.is_some() { pages } else { len };
                Worker {
                    rng,
                    sampler,
                    first,
                    len,
                    populated: 0,
                    done: 0,
                    limit: passes.saturating_mul(run_len),
                    budget: o.accesses.unwrap_or(u64::MAX),
                }
            })
            .collect();
        Ok(Anon {
            pages,
            shared: o.shared,
            read_percent,
            populate: o.populate,
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
        if self.populate {
            vec!["populate".into(), "run".into()]
        } else {
            vec!["run".into()]
        }
    }

    fn measured(&self, _phase: u8, _now_ns: u64) -> bool {
        true
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        let w = &mut self.workers[thread];
        let total = w.populated + w.done;
        if w.done >= w.limit || total >= w.budget || self.end_ns.is_some_and(|e| now_ns >= e) {
            return Step::Done;
        }
        let populating = self.populate && w.populated < w.len;
        let left = if populating {
            w.len - w.populated
        } else {
            w.limit - w.done
        };
        let n = self.per_op.min(left).min(w.budget - total);
        for i in 0..n {
            let (page, write) = if populating {
                (w.first + w.populated + i, true)
            } else {
                let page = match &w.sampler {
                    None => w.first + (w.done + i) % w.len,
                    Some(s) => s.sample(&mut w.rng),
                };
                // fio's get_rand_ddir: a draw in 1..=100 against rwmixread, if mixed.
                let write = match self.read_percent {
                    100 => false,
                    0 => true,
                    p => w.rng.gen_range(1..=100) > p,
                };
                (page, write)
            };
            out.push(Touch::Mem {
                region: 0,
                page,
                write,
            });
        }
        if populating {
            w.populated += n;
        } else {
            w.done += n;
        }
        Step::Op {
            phase: u8::from(self.populate && !populating),
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

    /// Every touch of `thread` until it is done, with the phase of its operation.
    fn run(w: &mut Anon, thread: usize) -> Vec<(u8, u64, bool)> {
        let mut all = Vec::new();
        let mut out = Vec::new();
        while let Step::Op { phase, .. } = w.next(thread, 0, &mut out) {
            for t in out.drain(..) {
                match t {
                    Touch::Mem { page, write, .. } => all.push((phase, page, write)),
                    _ => panic!("unexpected touch {t:?}"),
                }
            }
        }
        all
    }

    fn pages(w: &mut Anon, thread: usize) -> Vec<u64> {
        run(w, thread).into_iter().map(|(_, p, _)| p).collect()
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
        for pattern in [
            "random",
            "zipf:0.9",
            "pareto:0.3",
            "normal:10",
            "zoned:50/10:50/90",
        ] {
            let text = format!("size='400k'\nthreads=2\npattern='{pattern}'\npasses=3");
            let a = pages(&mut build(&text, 1), 1);
            assert_eq!(a.len(), 300);
            assert!(a.iter().all(|&p| p < 100));
            assert_eq!(a, pages(&mut build(&text, 1), 1));
            assert_ne!(a, pages(&mut build(&text, 2), 1));
        }
    }

    #[test]
    fn mix_sends_each_weight_to_its_range() {
        let text = "size='4000k'\naccesses=10000\n\
                    [[mix]]\nweight=80\nto=20\n[[mix]]\nweight=20\nfrom=20";
        let p = pages(&mut build(text, 3), 0);
        assert_eq!(p.len(), 10_000);
        let hot = p.iter().filter(|&&p| p < 200).count();
        assert!((7_800..8_200).contains(&hot), "{hot}");
        assert!(p.iter().all(|&p| p < 1000));
    }

    #[test]
    fn accesses_count_populate_and_rwmixread_mixes() {
        let text = "size='40k'\npopulate=true\npattern='random'\naccesses=25\nrwmixread=100";
        let mut w = build(text, 0);
        assert_eq!(w.phases(), ["populate", "run"]);
        let t = run(&mut w, 0);
        assert_eq!(t.len(), 25);
        let (populate, rest) = t.split_at(10);
        assert_eq!(
            populate.iter().map(|x| x.1).collect::<Vec<_>>(),
            (0..10).collect::<Vec<_>>()
        );
        assert!(populate.iter().all(|&(ph, _, wr)| ph == 0 && wr));
        assert!(rest.iter().all(|&(ph, _, wr)| ph == 1 && !wr));
        let t = run(&mut build("size='4000k'\npasses=1\nrwmixread=25", 0), 0);
        let stores = t.iter().filter(|x| x.2).count();
        assert!((700..800).contains(&stores), "{stores} stores of 1000");
    }

    #[test]
    fn rejects_bad_options() {
        let err = |t: &str| Anon::new(&toml::from_str(t).unwrap(), 0).err().unwrap();
        assert!(err("size='1m'\npattern='hot'").starts_with("anon.pattern:"));
        assert!(err("size='1m'\nthreads=0").starts_with("anon.threads:"));
        assert!(err("size=0").starts_with("anon.size:"));
        assert!(err("size='1m'\naccesses=0").contains("anon.accesses"));
        assert!(err("size='1m'\nrwmixread=101").starts_with("anon.rwmixread:"));
        let mix = "size='1m'\n[[mix]]\nweight=1\n";
        assert!(err(&format!("{mix}from=50\nto=40")).starts_with("anon.mix[0].to:"));
        assert!(err(&format!("{mix}pattern='zipf:1'")).starts_with("anon.mix[0].pattern:"));
        assert!(err(&format!("pattern='random'\n{mix}")).starts_with("anon.pattern:"));
    }
}
