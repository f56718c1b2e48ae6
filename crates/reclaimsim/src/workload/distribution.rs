//! fio's `random_distribution` language, shared by the fio and anon workloads: which
//! block of `n` a random access picks (fio's io_u.c get_next_rand_offset, lib/zipf.c,
//! lib/gauss.c; the syntax of options.c str_random_distribution_cb and
//! parse_zoned_distribution), and weighted mixtures of them over ranges of blocks.

use super::Rng;
use crate::units::parse_size;
use rand::{Rng as _, RngCore};
use std::sync::Arc;

/// fio's `__hash_u64` (GOLDEN_RATIO_64): scatters popularity ranks over the file.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// One `access/size` pair of a zoned distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    /// Percent of accesses.
    pub access: u32,
    /// Percent of the file (`zoned`) or bytes (`zoned_abs`).
    pub size: u64,
}

/// A `random_distribution` value.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    /// `random`: uniform.
    Uniform,
    /// `zipf[:θ[:center]]`.
    Zipf { theta: f64, center: Option<f64> },
    /// `pareto[:h[:center]]`.
    Pareto { h: f64, center: Option<f64> },
    /// `normal[:dev[:center]]` (fio's gauss; dev in percent of the file).
    Normal { dev: f64, center: Option<f64> },
    /// `zoned:A/S:...` (sizes in percent) or `zoned_abs:A/SIZE:...` (sizes in bytes).
    Zoned { zones: Vec<Zone>, absolute: bool },
}

impl Distribution {
    /// Parses a `random_distribution` value with fio's defaults (zipf θ 1.1, pareto h 0.2,
    /// normal dev 0) and checks (zipf θ ≠ 1, 0 < h < 1, 0 ≤ dev < 100, center in [0, 1],
    /// zone accesses adding up to 100 and sizes to at most 100%).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        match kind {
            "random" if rest.is_empty() => Ok(Self::Uniform),
            "zoned" | "zoned_abs" => parse_zones(rest, kind == "zoned_abs"),
            "zipf" | "pareto" | "normal" => {
                let (value, center) = parse_value_center(s, rest)?;
                match kind {
                    "zipf" => {
                        let theta = value.unwrap_or(1.1);
                        if theta <= 0.0 || theta == 1.0 {
                            return Err(format!(
                                "zipf theta must be > 0 and different from 1.0 (got {theta})"
                            ));
                        }
                        Ok(Self::Zipf { theta, center })
                    }
                    "pareto" => {
                        let h = value.unwrap_or(0.2);
                        if !(h > 0.0 && h < 1.0) {
                            return Err(format!("pareto h must be in (0, 1) (got {h})"));
                        }
                        Ok(Self::Pareto { h, center })
                    }
                    _ => {
                        let dev = value.unwrap_or(0.0);
                        if !(0.0..100.0).contains(&dev) {
                            return Err(format!(
                                "normal deviation must be in [0, 100) (got {dev})"
                            ));
                        }
                        Ok(Self::Normal { dev, center })
                    }
                }
            }
            _ => Err(format!(
                "`{s}` is not a distribution (random, zipf:θ, pareto:h, normal:dev, \
                 zoned:A/S:..., zoned_abs:A/SIZE:...)"
            )),
        }
    }

    /// Parses fio's `random_distribution` per direction, as str_split_parse reads a
    /// zoned list: `zoned:R` (or `zoned_abs:R`) is every direction's, `zoned:R,W` gives
    /// writes (and trims) their own list, `zoned:R,W,T` trims theirs. An empty list is
    /// uniform for its direction (fio's __get_next_rand_offset_zoned falls back to
    /// __get_next_rand_offset when a direction has no zones). The trim list is checked, as
    /// fio checks it, and dropped: trims are not modelled (`rw` has no trim). Only zoned
    /// distributions have per-direction values in fio (zipf's θ, pareto's h and normal's
    /// deviation are one per job). Returns the read and the write distribution.
    pub fn parse_directions(s: &str) -> Result<(Self, Self), String> {
        let s = s.trim();
        let Some((_, lists)) = s.split_once(':').filter(|_| s.contains(',')) else {
            let d = Self::parse(s)?;
            return Ok((d.clone(), d));
        };
        let absolute = match s.split_once(':').map(|(kind, _)| kind) {
            Some("zoned") => false,
            Some("zoned_abs") => true,
            _ => {
                return Err(format!(
                    "`{s}`: per-direction values (`,`) are only for zoned and zoned_abs, as \
                     in fio"
                ))
            }
        };
        let parts: Vec<&str> = lists.split(',').collect();
        if parts.len() > 3 {
            return Err(format!(
                "`{s}`: at most three zone lists (reads, writes, trims)"
            ));
        }
        let list = |part: &str, dir: &str| match part.trim() {
            "" => Ok(Self::Uniform),
            p => parse_zones(p, absolute).map_err(|e| format!("{dir} zones of `{s}`: {e}")),
        };
        let (read, write) = (list(parts[0], "read")?, list(parts[1], "write")?);
        if let Some(trim) = parts.get(2) {
            list(trim, "trim")?;
        }
        Ok((read, write))
    }

    /// The sampler of this distribution over `n` blocks; per-stream state (fio's
    /// `rand_off`) is drawn by `Sampler::seeded`.
    pub fn sampler(&self, n: u64) -> Result<Sampler, String> {
        debug_assert!(n > 0, "a distribution needs at least one block");
        Ok(match *self {
            Self::Uniform => Sampler::Uniform { n },
            Self::Zipf { theta, center } => Sampler::Zipf {
                zipf: Zipf::new(n, theta),
                center,
                offset: 0,
            },
            Self::Pareto { h, center } => Sampler::Pareto {
                n,
                pow: h.ln() / (1.0 - h).ln(),
                center,
                offset: 0,
            },
            Self::Normal { dev, center } => Sampler::Normal {
                n,
                // gauss_init: ceil(n × dev / 100), at most n / 2.
                stddev: ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2),
                // rand_off = n × (center - 0.5); 0 without a center.
                offset: center.map_or(0, |c| (n as f64 * (c - 0.5)) as i64),
            },
            Self::Zoned {
                ref zones,
                absolute,
            } => Sampler::Zoned {
                table: zone_table(zones, absolute, n)?,
            },
        })
    }
}

/// `VALUE[:CENTER]` after `zipf:`, `pareto:` or `normal:` (fio's split_parse_distr).
fn parse_value_center(s: &str, rest: &str) -> Result<(Option<f64>, Option<f64>), String> {
    let float = |p: &str| -> Result<f64, String> {
        p.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("`{p}` is not a number in `{s}`"))
    };
    let mut parts = rest.split(':').filter(|p| !p.is_empty());
    let value = parts.next().map(float).transpose()?;
    let center = parts.next().map(float).transpose()?;
    if parts.next().is_some() {
        return Err(format!("`{s}`: expected at most a value and a center"));
    }
    if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
        return Err(format!("the center must be in [0, 1] in `{s}`"));
    }
    Ok((value, center))
}

/// `A/S:A/S:...`: accesses in percent, sizes in percent or (absolute) bytes, as fio's
/// zone_split_ddir checks them.
fn parse_zones(list: &str, absolute: bool) -> Result<Distribution, String> {
    if list.contains(',') {
        return Err(
            "per-direction zone lists (`,`) are fio's random_distribution only: give one list"
                .into(),
        );
    }
    let mut zones = Vec::new();
    for part in list.split(':').filter(|p| !p.trim().is_empty()) {
        let (a, s) = part
            .split_once('/')
            .ok_or_else(|| format!("`{part}` is not ACCESS/SIZE"))?;
        let access = a
            .trim()
            .parse::<u32>()
            .map_err(|_| format!("`{a}` is not a percentage in `{part}`"))?;
        let size = if absolute {
            parse_size(s)?
        } else {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}` is not a percentage in `{part}`"))?
        };
        zones.push(Zone { access, size });
    }
    let accesses: u32 = zones.iter().map(|z| z.access).sum();
    if accesses != 100 {
        return Err(format!(
            "zone access percentages add up to {accesses}, not 100"
        ));
    }
    let sizes: u64 = zones.iter().map(|z| z.size).sum();
    if !absolute && sizes > 100 {
        return Err(format!(
            "zone size percentages add up to {sizes}, more than 100"
        ));
    }
    Ok(Distribution::Zoned { zones, absolute })
}

/// For each access percentile 1..=100, the zone's first block and length (fio's
/// zone_state_index and the offsets __get_next_rand_offset_zoned{,_abs} derive from it).
fn zone_table(zones: &[Zone], absolute: bool, n: u64) -> Result<Vec<(u64, u64)>, String> {
    let mut table = Vec::with_capacity(100);
    let mut start = 0;
    for z in zones {
        // zoned: percents of the blocks, floored as fio does; zoned_abs: bytes in blocks.
        let (first, end) = if absolute {
            (start, start + z.size / crate::units::PAGE_SIZE)
        } else {
            (start * n / 100, start * n / 100 + z.size * n / 100)
        };
        if end > n {
            return Err(format!(
                "zoned_abs sizes add up to more than the {n} blocks"
            ));
        }
        table.extend((0..z.access).map(|_| (first, end - first)));
        start = if absolute { end } else { start + z.size };
    }
    debug_assert_eq!(table.len(), 100, "accesses add up to 100");
    Ok(table)
}

/// A distribution over `n` blocks, ready to draw from.
#[derive(Clone, Debug)]
pub enum Sampler {
    Uniform {
        n: u64,
    },
    Zipf {
        zipf: Zipf,
        center: Option<f64>,
        offset: u64,
    },
    Pareto {
        n: u64,
        pow: f64,
        center: Option<f64>,
        offset: u64,
    },
    Normal {
        n: u64,
        stddev: u64,
        offset: i64,
    },
    Zoned {
        /// First block and length per access percentile.
        table: Vec<(u64, u64)>,
    },
    /// Weighted parts, each a sampler over its own range of blocks.
    Mix(Vec<MixPart>),
}

/// One pattern of a mixture: its weight, its range's first block, its sampler.
#[derive(Clone, Debug)]
pub struct MixPart {
    pub weight: u64,
    pub first: u64,
    pub sampler: Sampler,
}

impl Sampler {
    /// A copy for one stream, with fio's per-file random offset (`rand_off`) drawn from
    /// `rng` for zipf and pareto without a center (shared_rand_init), or `n × center`.
    pub fn seeded(&self, rng: &mut Rng) -> Sampler {
        let mut s = self.clone();
        match &mut s {
            Self::Zipf {
                zipf,
                center,
                offset,
            } => *offset = rand_off(zipf.n, *center, rng),
            Self::Pareto {
                n, center, offset, ..
            } => *offset = rand_off(*n, *center, rng),
            Self::Mix(parts) => {
                for p in parts {
                    p.sampler = p.sampler.seeded(rng);
                }
            }
            _ => {}
        }
        s
    }

    /// The next block. A uniform draw, the default pattern's, is made inline; the
    /// other kinds out of line (`draw`), so that the common call saves no registers
    /// for arms it does not take. Either way the same draws, in the same order.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            Self::Uniform { n } => rng.gen_range(0..*n),
            _ => self.draw(rng),
        }
    }

    #[inline(never)]
    fn draw(&self, rng: &mut Rng) -> u64 {
        match self {
            Self::Uniform { n } => rng.gen_range(0..*n),
            Self::Zipf { zipf, offset, .. } => zipf.sample(*offset, rng),
            Self::Pareto { n, pow, offset, .. } => {
                // pareto_next: hash(⌊(n - 1) × u^pow⌋) + rand_off, mod n.
                let u = f64::from(rng.next_u32()) / f64::from(u32::MAX);
                let rank = ((n - 1) as f64 * u.powf(*pow)) as u64;
                rank.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(*offset) % n
            }
            Self::Normal { n, stddev, offset } => gauss_next(*n, *stddev, *offset, rng),
            Self::Zoned { table } => {
                let (first, len) = table[rng.gen_range(0..100)];
                first + rng.gen_range(0..len.max(1))
            }
            Self::Mix(parts) => {
                let total: u64 = parts.iter().map(|p| p.weight).sum();
                let mut w = rng.gen_range(0..total);
                let part = parts
                    .iter()
                    .find(|p| {
                        let hit = w < p.weight;
                        w = w.saturating_sub(p.weight);
                        hit
                    })
                    .expect("weights add up to total");
                part.first + part.sampler.sample(rng)
            }
        }
    }
}

/// fio's per-file random offset of zipf and pareto: a 32-bit draw, or `n × center`.
fn rand_off(n: u64, center: Option<f64>, rng: &mut Rng) -> u64 {
    center.map_or(u64::from(rng.next_u32()), |c| (n as f64 * c) as u64)
}

/// fio's gauss_next: the rounded-up mean of 12 uniform draws in [0, n], moved by a
/// uniform deviation in [-stddev/2, stddev/2) halved until it stays inside the file,
/// then hashed and offset (so the popular blocks are scattered, as in fio).
fn gauss_next(n: u64, stddev: u64, offset: i64, rng: &mut Rng) -> u64 {
    const ITERS: u64 = 12;
    let sum: u64 = (0..ITERS)
        .map(|_| u64::from(rng.next_u32()) % (n + 1))
        .sum();
    let mut mean = sum.div_ceil(ITERS);
    if stddev > 0 {
        let r = f64::from(rng.next_u32()) / (f64::from(u32::MAX) + 1.0);
        let mut dev = (stddev as f64 * r) as i64 - (stddev / 2) as i64;
        // fio halves until mean + dev is in the file; stop at 0 so it cannot spin.
        while dev != 0 && !(0..n as i64).contains(&(mean as i64 + dev)) {
            dev /= 2;
        }
        mean = (mean as i64 + dev) as u64;
    }
    // fio's offset n × (center - 0.5) may be negative: add it modulo n.
    let hashed = i128::from(mean.wrapping_mul(GOLDEN_RATIO_64));
    (hashed + i128::from(offset)).rem_euclid(i128::from(n)) as u64
}

/// fio's zipf offset generator (`lib/zipf.c`, Gray et al.'s method as used by YCSB): a
/// popularity rank from the closed-form approximation of the inverse CDF, scattered over
/// the file by a multiplicative hash and a per-job offset.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: u64,
    /// ζ(2, θ) = 1 + 0.5^θ, the bound of rank 2 (kept rather than recomputed per draw).
    zeta2: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    /// `n - 1` when `n` is a power of two: `% n` as a mask (the same value, no division).
    mask: Option<u64>,
    /// Per range of draws (the draw's top `BUCKET_BITS` bits), the rank every draw of
    /// the range gets, or 0 when they may differ: a known rank skips the `powf`. Shared
    /// by the streams' copies.
    bucket_rank: Option<Arc<[u32]>>,
}

/// fio sums at most this many terms of ζ(n, θ).
const ZETA_MAX_TERMS: u64 = 10_000_000;

/// Draws are 32-bit; `bucket_rank` has one entry per range of 2^(32 - BUCKET_BITS) draws.
const BUCKET_BITS: u32 = 16;

impl Zipf {
    pub fn new(n: u64, theta: f64) -> Self {
        let zetan: f64 = (1..=n.min(ZETA_MAX_TERMS))
            .map(|i| (1.0 / i as f64).powf(theta))
            .sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        let mut z = Zipf {
            n,
            zeta2,
            zetan,
            alpha: 1.0 / (1.0 - theta),
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
            mask: n.is_power_of_two().then(|| n - 1),
            bucket_rank: None,
        };
        z.bucket_rank = z.bucket_ranks();
        z
    }

    /// The `bucket_rank` table, when the closed form is sure to be monotone in the draw.
    /// Every step of `rank`'s powf branch is a correctly rounded, monotone operation
    /// except powf itself, whose error (glibc: under 0.52 ulp; below 1 ulp assumed) is
    /// far smaller than the step between x^α and (x + 1 ulp)^α (α ulps) when α ≥ 8 (θ
    /// in [0.875, 1)) and x > 0: there the rank cannot decrease as the draw grows, so a
    /// range whose first and last draws take that branch with the same rank (ranks fit
    /// u32 as n < 2^32) gives it to every draw.
    fn bucket_ranks(&self) -> Option<Arc<[u32]>> {
        if !(self.alpha >= 8.0 && self.eta > 0.0 && self.n < u64::from(u32::MAX)) {
            return None;
        }
        let span = 1u64 << (32 - BUCKET_BITS);
        let table = (0..1u64 << BUCKET_BITS).map(|b| {
            let (lo, hi) = ((b * span) as u32, (b * span + span - 1) as u32);
            let (ulo, uhi) = (Self::unit(lo), Self::unit(hi));
            let closed_form = |u: f64| u * self.zetan >= self.zeta2;
            let positive = self.eta * ulo - self.eta + 1.0 > 0.0;
            let rank = self.rank(ulo);
            let same = positive && closed_form(ulo) && closed_form(uhi) && self.rank(uhi) == rank;
            if same {
                rank as u32
            } else {
                0
            }
        });
        Some(table.collect())
    }

    /// fio's uniform draw in [0, 1] from 32 random bits.
    #[inline]
    fn unit(r: u32) -> f64 {
        f64::from(r) / f64::from(u32::MAX)
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
    fn sample(&self, offset: u64, rng: &mut Rng) -> u64 {
        let r = rng.next_u32();
        let known = self
            .bucket_rank
            .as_ref()
            .map_or(0, |t| t[(r >> (32 - BUCKET_BITS)) as usize]);
        let rank = if known != 0 {
            u64::from(known)
        } else {
            self.rank(Self::unit(r))
        };
        let x = (rank - 1)
            .wrapping_mul(GOLDEN_RATIO_64)
            .wrapping_add(offset);
        match self.mask {
            Some(m) => x & m,
            None => x % self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::stream_rng;

    /// `draws` samples of `spec` over `n` blocks, counted per block.
    fn histogram(spec: &str, n: u64, draws: usize) -> Vec<u32> {
        let mut rng = stream_rng(7, 0);
        let s = Distribution::parse(spec).unwrap().sampler(n).unwrap();
        let s = s.seeded(&mut rng);
        let mut counts = vec![0u32; n as usize];
        for _ in 0..draws {
            counts[s.sample(&mut rng) as usize] += 1;
        }
        counts
    }

    /// The share of draws that fell on the `top` most drawn blocks.
    fn top_share(counts: &[u32], top: usize) -> f64 {
        let mut c = counts.to_vec();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let total: u32 = c.iter().sum();
        f64::from(c[..top].iter().sum::<u32>()) / f64::from(total)
    }

    #[test]
    fn zoned_sends_each_share_of_accesses_to_its_zone() {
        let c = histogram("zoned:60/10:30/20:10/70", 1000, 200_000);
        let share = |r: std::ops::Range<usize>| f64::from(c[r].iter().sum::<u32>()) / 200_000.0;
        for (range, want) in [(0..100, 0.6), (100..300, 0.3), (300..1000, 0.1)] {
            let got = share(range.clone());
            assert!((got - want).abs() < 0.01, "{range:?}: {got}");
        }
    }

    #[test]
    fn zoned_abs_zones_are_bytes_and_must_fit() {
        let c = histogram("zoned_abs:50/40k:50/400k", 1000, 100_000);
        let first: u32 = c[..10].iter().sum();
        assert!((48_000..52_000).contains(&first), "{first}");
        assert!(c[110..].iter().all(|&x| x == 0));
        let d = Distribution::parse("zoned_abs:100/8m").unwrap();
        assert!(d.sampler(1000).unwrap_err().contains("more than"));
    }

    #[test]
    fn skewed_distributions_concentrate_on_few_blocks() {
        // zipf: θ = 1.2 puts most accesses on the top 1% of ranks; pareto 0.2 is the
        // 80/20 rule; normal spreads less the smaller dev is, and random not at all.
        let n = 10_000;
        let zipf = top_share(&histogram("zipf:1.2", n, 100_000), 100);
        assert!(zipf > 0.6, "zipf {zipf}");
        let pareto = top_share(&histogram("pareto:0.2", n, 100_000), 2000);
        assert!((0.7..0.9).contains(&pareto), "pareto {pareto}");
        let narrow = top_share(&histogram("normal:5", n, 100_000), 2000);
        let uniform = top_share(&histogram("random", n, 100_000), 2000);
        assert!(
            narrow > 0.6 && uniform < 0.35,
            "normal {narrow} random {uniform}"
        );
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
            let block = rank.wrapping_mul(GOLDEN_RATIO_64) % n;
            tenths[(block * 10 / n) as usize] += 1;
        }
        assert!(tenths.iter().all(|&c| (50..150).contains(&c)), "{tenths:?}");
    }

    /// The rank `Zipf::sample` takes for draw `r`: the bucket table's, or the closed
    /// form's.
    fn table_rank(z: &Zipf, r: u32) -> u64 {
        let t = z.bucket_rank.as_ref().expect("a table for this θ");
        match t[(r >> (32 - BUCKET_BITS)) as usize] {
            0 => z.rank(Zipf::unit(r)),
            known => u64::from(known),
        }
    }

    #[test]
    fn zipf_bucket_ranks_are_the_closed_forms() {
        for (n, theta) in [(1 << 20, 0.99), (1_000_003, 0.9), (4096, 0.95)] {
            let z = Zipf::new(n, theta);
            let mut rng = stream_rng(11, 0);
            let edges = (0..1u32 << BUCKET_BITS).flat_map(|b| {
                let lo = b << (32 - BUCKET_BITS);
                [lo, lo | ((1 << (32 - BUCKET_BITS)) - 1)]
            });
            for r in edges.chain((0..1_000_000).map(|_| rng.next_u32())) {
                assert_eq!(
                    table_rank(&z, r),
                    z.rank(Zipf::unit(r)),
                    "n {n} θ {theta} r {r}"
                );
            }
        }
        assert!(
            Zipf::new(1000, 0.5).bucket_rank.is_none(),
            "α < 8: no table"
        );
    }

    /// Every one of the 2^32 draws (minutes of CPU: `cargo test --release -- --ignored`).
    #[test]
    #[ignore]
    fn zipf_bucket_ranks_are_the_closed_forms_for_every_draw() {
        let z = Zipf::new(1 << 20, 0.99);
        let known = z.bucket_rank.as_ref().unwrap();
        for r in 0..=u32::MAX {
            let k = known[(r >> (32 - BUCKET_BITS)) as usize];
            assert!(k == 0 || u64::from(k) == z.rank(Zipf::unit(r)), "draw {r}");
        }
    }

    #[test]
    fn a_center_rotates_the_hashed_blocks() {
        // fio's rand_off: n × (center - 0.5) for normal, n × center for zipf.
        let n = 1000;
        let draw = |spec: &str| {
            let mut rng = stream_rng(3, 0);
            let s = Distribution::parse(spec).unwrap().sampler(n).unwrap();
            let s = s.seeded(&mut rng);
            (0..50).map(|_| s.sample(&mut rng)).collect::<Vec<_>>()
        };
        let (low, high) = (draw("normal:5:0.25"), draw("normal:5:0.75"));
        assert!(low.iter().zip(&high).all(|(l, h)| (l + n / 2) % n == *h));
        let (z0, z1) = (draw("zipf:1.2:0"), draw("zipf:1.2:0.1"));
        assert!(z0.iter().zip(&z1).all(|(a, b)| (a + n / 10) % n == *b));
    }

    #[test]
    fn mixture_draws_by_weight_from_each_range() {
        let part = |weight, first, n| MixPart {
            weight,
            first,
            sampler: Sampler::Uniform { n },
        };
        let s = Sampler::Mix(vec![part(80, 0, 200), part(20, 200, 800)]);
        let mut rng = stream_rng(1, 0);
        let hot = (0..100_000).filter(|_| s.sample(&mut rng) < 200).count();
        assert!((79_000..81_000).contains(&hot), "{hot}");
    }

    #[test]
    fn parses_fio_syntax_and_rejects_what_fio_rejects() {
        let ok = |s| Distribution::parse(s).unwrap();
        assert_eq!(
            ok("zipf"),
            Distribution::Zipf {
                theta: 1.1,
                center: None
            }
        );
        assert_eq!(
            ok("pareto:0.3:0.5"),
            Distribution::Pareto {
                h: 0.3,
                center: Some(0.5)
            }
        );
        assert_eq!(
            ok("normal"),
            Distribution::Normal {
                dev: 0.0,
                center: None
            }
        );
        let err = |s| Distribution::parse(s).unwrap_err();
        assert!(err("zipf:1").contains("theta"));
        assert!(err("zipf:0.5:2").contains("center"));
        assert!(err("pareto:1.5").contains("pareto h"));
        assert!(err("normal:100").contains("deviation"));
        assert!(err("zoned:60/10:30/20").contains("add up to 90"));
        assert!(err("zoned:50/60:50/60").contains("more than 100"));
        assert!(err("zoned:50/10:50/10,100/100").contains("per-direction"));
        assert!(err("zoned:50:50/10").contains("ACCESS/SIZE"));
        assert!(err("hot").contains("not a distribution"));
    }

    #[test]
    fn zone_lists_per_direction_as_fio_splits_them() {
        let d = |s| Distribution::parse_directions(s).unwrap();
        let zoned = |access: &[u32], size: &[u64]| Distribution::Zoned {
            zones: (access.iter().zip(size))
                .map(|(&access, &size)| Zone { access, size })
                .collect(),
            absolute: false,
        };
        let hot = zoned(&[90, 10], &[10, 90]);
        let all = zoned(&[100], &[100]);
        // One list: every direction; two: reads, then writes; a third is the trims'.
        assert_eq!(d("zoned:90/10:10/90"), (hot.clone(), hot.clone()));
        assert_eq!(d("zoned:90/10:10/90,100/100"), (hot.clone(), all.clone()));
        assert_eq!(
            d("zoned:100/100, 90/10:10/90, 50/50:50/50"),
            (all, hot.clone())
        );
        // An empty list is uniform for its direction, as fio's fallback.
        assert_eq!(d("zoned:,90/10:10/90"), (Distribution::Uniform, hot));
        assert_eq!(d("zipf:0.8").0, d("zipf:0.8").1);
        let (r, w) = d("zoned_abs:100/4k,100/8k");
        assert!(matches!(
            (r, w),
            (
                Distribution::Zoned { absolute: true, .. },
                Distribution::Zoned { .. }
            )
        ));
        let err = |s| Distribution::parse_directions(s).unwrap_err();
        assert!(err("zipf:1.2,0.8").contains("only for zoned"));
        assert!(err("zoned:100/10,100/10,100/10,100/10").contains("at most three"));
        assert!(err("zoned:100/10,50/10").starts_with("write zones of"));
        assert!(err("zoned:100/10,100/10,60/10").starts_with("trim zones of"));
    }

    #[test]
    fn samples_stay_in_range_and_follow_the_seed() {
        for spec in [
            "random",
            "zipf:0.9",
            "pareto:0.1",
            "normal:10:0.2",
            "zoned:90/10:10/90",
        ] {
            let a = histogram(spec, 97, 5000);
            assert_eq!(a.iter().sum::<u32>(), 5000, "{spec}");
            assert_eq!(a, histogram(spec, 97, 5000), "{spec}");
        }
    }
}
