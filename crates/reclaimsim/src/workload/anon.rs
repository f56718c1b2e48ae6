//! usemem-like anonymous memory touching: sequential passes, picks from fio's
//! `random_distribution` language, or a weighted mixture of them over page ranges.

use super::distribution::{Distribution, MixPart, Sampler};
use super::{check_count, stream_rng, Layout, ProcessSpec, RegionSpec, Rng, Step, Touch, Workload};
use crate::units::{ByteSize, Duration, PAGE_SIZE};
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
    /// Stop each worker after this many touches of this phase (its first touches
    /// included; `populate`'s are its own phase).
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
    /// Later phases over the same region, in order (`[[workload.anon.phase]]`).
    #[serde(default)]
    pub phase: Vec<AnonPhase>,
}

/// A later phase: the workers meet at a barrier after the phase before, sleep (holding
/// their memory) until `sleep_until` and until `wait_for` has finished, then touch the
/// region with this phase's pattern (how one measures what reclaim took from an idle
/// job: refaults on the second touch).
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AnonPhase {
    /// Name results are reported under. Default `phase<N>`, N counting from 1.
    pub name: Option<String>,
    /// Sleep until this long after the workload started.
    pub sleep_until: Option<Duration>,
    /// Wait until this workload (or `workload:phase`) has finished.
    pub wait_for: Option<String>,
    /// As the workload's `pattern`. Default `seq`.
    #[serde(default = "seq")]
    pub pattern: String,
    /// As the workload's `mix`.
    #[serde(default)]
    pub mix: Vec<MixOptions>,
    /// As the workload's `passes` (default 1 unless `accesses` is given).
    pub passes: Option<u64>,
    /// Touches in this phase.
    pub accesses: Option<u64>,
    /// As the workload's `write`. Default true.
    #[serde(default = "yes")]
    pub write: bool,
    /// As the workload's `rwmixread`.
    pub rwmixread: Option<u64>,
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

/// What one phase does (the populate pass, the workload's own touches, a `[[phase]]`).
#[derive(Clone, Debug)]
struct PhaseSpec {
    name: String,
    /// Store to the worker's slice once, in order.
    populate: bool,
    /// `None`: sequential over the worker's slice.
    sampler: Option<Sampler>,
    read_percent: u64,
    passes: u64,
    accesses: Option<u64>,
    sleep_until: Option<u64>,
    wait_for: Option<String>,
}

/// A phase's touches as the options give them: `field` names the options' table in
/// errors (`anon`, `anon.phase[0]`).
struct Touches<'a> {
    field: String,
    pattern: &'a str,
    mix: &'a [MixOptions],
    passes: Option<u64>,
    accesses: Option<u64>,
    write: bool,
    rwmixread: Option<u64>,
}

impl Touches<'_> {
    /// The phase named `name`; `unbounded` makes `passes` default to no limit.
    fn spec(&self, name: String, pages: u64, unbounded: bool) -> Result<PhaseSpec, String> {
        let f = &self.field;
        if self.passes == Some(0) || self.accesses == Some(0) {
            return Err(format!("{f}.passes, {f}.accesses: must be positive"));
        }
        let read_percent = match self.rwmixread {
            Some(r) if r > 100 => {
                return Err(format!("{f}.rwmixread: {r} is more than 100 (percent)"))
            }
            Some(r) => r,
            None if self.write => 0,
            None => 100,
        };
        let unbounded = unbounded || self.accesses.is_some();
        Ok(PhaseSpec {
            name,
            populate: false,
            sampler: sampler(f, self.pattern, self.mix, pages)?,
            read_percent,
            passes: self.passes.unwrap_or(if unbounded { u64::MAX } else { 1 }),
            accesses: self.accesses,
            sleep_until: None,
            wait_for: None,
        })
    }
}

/// The pattern's sampler over `pages`, or `None` for `seq`; `field` names the options'
/// table in errors.
fn sampler(
    field: &str,
    pattern: &str,
    mix: &[MixOptions],
    pages: u64,
) -> Result<Option<Sampler>, String> {
    let dist = |name: &str, p: &str, n: u64| {
        Distribution::parse(p)
            .and_then(|d| d.sampler(n))
            .map_err(|e| format!("{field}.{name}: {e}"))
    };
    if mix.is_empty() {
        return match pattern {
            "seq" => Ok(None),
            p => dist("pattern", p, pages).map(Some),
        };
    }
    if pattern != "seq" {
        return Err(format!("{field}.pattern: give either pattern or mix"));
    }
    let mut parts = Vec::new();
    for (i, m) in mix.iter().enumerate() {
        if !(0.0 <= m.from && m.from < m.to && m.to <= 100.0) {
            return Err(format!(
                "{field}.mix[{i}].to: needs 0 <= from < to <= 100 (percent; got {} to {})",
                m.from, m.to
            ));
        }
        if m.weight == 0 {
            return Err(format!("{field}.mix[{i}].weight: must be positive"));
        }
        let first = (pages as f64 * m.from / 100.0) as u64;
        let end = ((pages as f64 * m.to / 100.0) as u64)
            .max(first + 1)
            .min(pages);
        parts.push(MixPart {
            weight: m.weight,
            first,
            sampler: dist(&format!("mix[{i}].pattern"), &m.pattern, end - first)?,
        });
    }
    Ok(Some(Sampler::Mix(parts)))
}

/// The phases in order: `populate` (if asked), `run` (the workload's own touches), then
/// each `[[phase]]`.
fn phases(o: &AnonOptions, pages: u64) -> Result<Vec<PhaseSpec>, String> {
    let run = Touches {
        field: "anon".into(),
        pattern: &o.pattern,
        mix: &o.mix,
        passes: o.passes,
        accesses: o.accesses,
        write: o.write,
        rwmixread: o.rwmixread,
    };
    let mut phases = Vec::new();
    if o.populate {
        let mut populate = run.spec("populate".into(), pages, false)?;
        (populate.populate, populate.sampler) = (true, None);
        phases.push(populate);
    }
    phases.push(run.spec("run".into(), pages, o.runtime.is_some())?);
    for (i, p) in o.phase.iter().enumerate() {
        let touches = Touches {
            field: format!("anon.phase[{i}]"),
            pattern: &p.pattern,
            mix: &p.mix,
            passes: p.passes,
            accesses: p.accesses,
            write: p.write,
            rwmixread: p.rwmixread,
        };
        let name = p.name.clone().unwrap_or(format!("phase{}", i + 1));
        if name.is_empty() || name.contains(':') || phases.iter().any(|q| q.name == name) {
            return Err(format!(
                "anon.phase[{i}].name: `{name}` is empty, has ':' or is used twice"
            ));
        }
        let mut spec = touches.spec(name, pages, o.runtime.is_some())?;
        spec.sleep_until = p.sleep_until.map(|d| d.0);
        spec.wait_for = p.wait_for.clone();
        phases.push(spec);
    }
    if phases.len() > usize::from(u8::MAX) {
        return Err(format!("anon.phase: at most {} phases", u8::MAX - 2));
    }
    Ok(phases)
}

#[derive(Clone, Debug)]
struct Worker {
    rng: Rng,
    /// Per phase, the worker's own seeded sampler (`None`: sequential).
    samplers: Vec<Option<Sampler>>,
    /// The slice of the region this worker walks sequentially and populates.
    first: u64,
    len: u64,
    /// The phase it is in, and the touches done in it.
    phase: usize,
    done: u64,
    /// The phase's sleep was looked at.
    slept: bool,
    /// Touches of this phase already drawn, in order, from index `done` on: drawn a few
    /// ahead so the engine can start loading their PTEs a step early (host speed only;
    /// the draws are the same, in the same order).
    ahead: std::collections::VecDeque<(u64, bool)>,
}

/// How many touches a worker draws ahead of the one it does.
const AHEAD: usize = 4;

/// The anon generator: worker `t` is thread `t`.
pub struct Anon {
    pages: u64,
    shared: bool,
    per_op: u64,
    end_ns: Option<u64>,
    phases: Vec<PhaseSpec>,
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
        if o.runtime == Some(Duration(0)) {
            return Err("anon.runtime: must be positive".into());
        }
        let phases = phases(o, pages)?;
        let workers = (0..threads)
            .map(|t| {
                let mut rng = stream_rng(seed, t as u64);
                let samplers = (phases.iter())
                    .map(|p| p.sampler.as_ref().map(|s| s.seeded(&mut rng)))
                    .collect();
                // A shared region is split into equal slices for sequential walks and
                // populating.
                let slice = |t: usize| pages * t as u64 / threads as u64;
                let (first, len) = if o.shared {
                    (slice(t), slice(t + 1) - slice(t))
                } else {
                    (0, pages)
                };
                Worker {
                    rng,
                    samplers,
                    first,
                    len,
                    phase: 0,
                    done: 0,
                    slept: false,
                    ahead: Default::default(),
                }
            })
            .collect();
        Ok(Anon {
            pages,
            shared: o.shared,
            per_op: o.ops_per_step,
            end_ns: o.runtime.map(|r| r.0),
            phases,
            workers,
        })
    }

    /// Touches worker `w` does in phase `p`.
    fn limit(&self, w: &Worker, p: usize) -> u64 {
        let spec = &self.phases[p];
        let pass = match (spec.populate, &w.samplers[p]) {
            (true, _) => return w.len,
            (false, None) => w.len,
            (false, Some(_)) => self.pages,
        };
        spec.passes
            .saturating_mul(pass)
            .min(spec.accesses.unwrap_or(u64::MAX))
    }
}

/// Touch `i` of phase `p` for worker `w`: its page (sequential from the worker's slice,
/// or from the phase's sampler) and whether it writes.
fn draw(w: &mut Worker, spec: &PhaseSpec, p: usize, i: u64) -> (u64, bool) {
    let page = match &w.samplers[p] {
        None => w.first + i % w.len,
        Some(s) => s.sample(&mut w.rng),
    };
    // fio's get_rand_ddir: a draw in 1..=100 against rwmixread, if mixed.
    let write = match spec.read_percent {
        _ if spec.populate => true,
        100 => false,
        0 => true,
        r => w.rng.gen_range(1..=100) > r,
    };
    (page, write)
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
        self.phases.iter().map(|p| p.name.clone()).collect()
    }

    fn measured(&self, _phase: u8, _now_ns: u64) -> bool {
        true
    }

    fn waits_for(&self, phase: usize) -> Option<&str> {
        self.phases.get(phase)?.wait_for.as_deref()
    }

    fn ahead(&self, thread: usize, d: usize) -> Option<Touch> {
        let &(page, write) = self.workers[thread].ahead.get(d)?;
        Some(Touch::Mem {
            region: 0,
            page,
            write,
        })
    }

    fn next(&mut self, thread: usize, now_ns: u64, out: &mut Vec<Touch>) -> Step {
        if self.end_ns.is_some_and(|e| now_ns >= e) {
            return Step::Done;
        }
        let p = self.workers[thread].phase;
        let limit = self.limit(&self.workers[thread], p);
        let spec = &self.phases[p];
        let w = &mut self.workers[thread];
        if w.done >= limit {
            if p + 1 == self.phases.len() {
                return Step::Done;
            }
            // The next phase starts when every worker has finished this one.
            (w.phase, w.done, w.slept) = (p + 1, 0, false);
            return Step::Barrier;
        }
        if !std::mem::replace(&mut w.slept, true) {
            if let Some(until_ns) = spec.sleep_until.filter(|&t| t > now_ns) {
                return Step::Sleep { until_ns };
            }
        }
        let n = self.per_op.min(limit - w.done);
        for i in w.done..w.done + n {
            let (page, write) = match w.ahead.pop_front() {
                Some(t) => t,
                None => draw(w, spec, p, i),
            };
            out.push(Touch::Mem {
                region: 0,
                page,
                write,
            });
        }
        // Never past the phase's end: the next phase draws from the same stream.
        while w.ahead.len() < AHEAD && w.done + n + (w.ahead.len() as u64) < limit {
            let i = w.done + n + w.ahead.len() as u64;
            let t = draw(w, spec, p, i);
            w.ahead.push_back(t);
        }
        w.done += n;
        Step::Op {
            phase: p as u8,
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
        loop {
            let phase = match w.next(thread, 0, &mut out) {
                Step::Op { phase, .. } => phase,
                Step::Barrier | Step::Sleep { .. } => continue,
                _ => return all,
            };
            for t in out.drain(..) {
                match t {
                    Touch::Mem { page, write, .. } => all.push((phase, page, write)),
                    _ => panic!("unexpected touch {t:?}"),
                }
            }
        }
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
        let text = "size='40k'\npopulate=true\npattern='random'\naccesses=15\nrwmixread=100";
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
    fn phases_meet_at_barriers_sleep_and_wait() {
        let text = "size='16k'\n[[phase]]\nname='idle'\nsleep_until='1s'\nwait_for='other'\n\
                    pattern='random'\naccesses=3\nwrite=false";
        let mut w = build(text, 0);
        assert_eq!(w.phases(), ["run", "idle"]);
        assert_eq!((w.waits_for(0), w.waits_for(1)), (None, Some("other")));
        let mut out = Vec::new();
        let mut steps = Vec::new();
        for now in [0, 0, 0, 0, 0, 0, 1_000_000_000] {
            steps.push(w.next(0, now, &mut out));
        }
        let op = |phase| Step::Op { phase, bytes: 4096 };
        let barrier_sleep = [
            Step::Barrier,
            Step::Sleep {
                until_ns: 1_000_000_000,
            },
        ];
        assert_eq!(steps[..4], [op(0); 4]);
        assert_eq!(steps[4..6], barrier_sleep);
        assert_eq!(steps[6], op(1));
        assert!(matches!(out[4..], [Touch::Mem { write: false, .. }]));
    }

    #[test]
    fn rejects_bad_options() {
        let err = |t: &str| Anon::new(&toml::from_str(t).unwrap(), 0).err().unwrap();
        let phase = "size='1m'\n[[phase]]\n";
        assert!(err(&format!("{phase}name='run'")).starts_with("anon.phase[0].name:"));
        assert!(err(&format!("{phase}pattern='hot'")).starts_with("anon.phase[0].pattern:"));
        assert!(err(&format!("{phase}accesses=0")).starts_with("anon.phase[0].passes"));
        assert!(err("size='1m'\npattern='hot'").starts_with("anon.pattern:"));
        assert!(err("size='1m'\nthreads=0").starts_with("anon.threads:"));
        assert!(err("size=0").starts_with("anon.size:"));
        assert!(err("size='1m'\naccesses=0").contains("anon.accesses"));
        assert!(err("size='1m'\nruntime=0").starts_with("anon.runtime:"));
        assert!(err("size='1m'\nrwmixread=101").starts_with("anon.rwmixread:"));
        let mix = "size='1m'\n[[mix]]\nweight=1\n";
        assert!(err(&format!("{mix}from=50\nto=40")).starts_with("anon.mix[0].to:"));
        assert!(err(&format!("{mix}pattern='zipf:1'")).starts_with("anon.mix[0].pattern:"));
        assert!(err(&format!("pattern='random'\n{mix}")).starts_with("anon.pattern:"));
    }
}
