//! Statistics over repeated rounds of a measurement, and the timing loop that makes them.
//!
//! A measurement runs several rounds of many operations each and keeps one figure per
//! round (ns per operation): one slow round (an interrupt, the other developer's build on
//! the shared core) moves the median little, and the percentiles show how much it moved.

use std::time::Instant;

/// A measurement's per-round figures, summarized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    /// 10th and 90th percentiles.
    pub p10: f64,
    pub p90: f64,
    /// Median absolute deviation from the median.
    pub mad: f64,
    pub rounds: u64,
    /// Operations over all rounds.
    pub iterations: u64,
}

/// The `q` quantile (0..=1) of sorted values, interpolating linearly between the closest
/// ranks (R's and numpy's default), so a few rounds still give distinct p10 and p90.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

/// Summarize per-round figures; `None` without any (or with a NaN, which no timing gives).
pub fn summarize(samples: &[f64], iterations: u64) -> Option<Summary> {
    if samples.iter().any(|s| s.is_nan()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = quantile(&sorted, 0.5)?;
    let mut deviations: Vec<f64> = sorted.iter().map(|s| (s - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    Some(Summary {
        median,
        p10: quantile(&sorted, 0.1)?,
        p90: quantile(&sorted, 0.9)?,
        mad: quantile(&deviations, 0.5)?,
        rounds: samples.len() as u64,
        iterations,
    })
}

impl Summary {
    /// The same figures less `ns` each (a derivation subtracting other costs); the spread
    /// is unchanged.
    pub fn minus(self, ns: f64) -> Summary {
        Summary {
            median: self.median - ns,
            p10: self.p10 - ns,
            p90: self.p90 - ns,
            ..self
        }
    }
}

/// Time `rounds` rounds of `iters` calls of `op(i)` after one untimed warm-up round
/// (caches, branch predictors, lazily mapped pages); each round gives ns per call.
pub fn time_rounds(rounds: usize, iters: u64, mut op: impl FnMut(u64)) -> Option<Summary> {
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..=rounds {
        let start = Instant::now();
        for i in 0..iters {
            op(i);
        }
        if round > 0 {
            samples.push(start.elapsed().as_nanos() as f64 / iters.max(1) as f64);
        }
    }
    summarize(&samples, rounds as u64 * iters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles_interpolate() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0], 50).unwrap();
        assert_eq!((s.median, s.p10, s.p90), (3.0, 1.4, 4.6));
        assert_eq!((s.rounds, s.iterations), (5, 50));
        let even = summarize(&[1.0, 2.0, 3.0, 10.0], 4).unwrap();
        assert_eq!(even.median, 2.5);
    }

    #[test]
    fn mad_ignores_an_outlier() {
        let s = summarize(&[10.0, 11.0, 9.0, 10.0, 1000.0], 5).unwrap();
        assert_eq!((s.median, s.mad), (10.0, 1.0));
        assert!(s.p90 > 500.0);
    }

    #[test]
    fn no_samples_no_summary() {
        assert_eq!(summarize(&[], 0), None);
        assert_eq!(summarize(&[1.0, f64::NAN], 2), None);
        let one = summarize(&[7.0], 1).unwrap();
        assert_eq!(
            (one.median, one.p10, one.p90, one.mad),
            (7.0, 7.0, 7.0, 0.0)
        );
    }

    #[test]
    fn minus_shifts_but_keeps_the_spread() {
        let s = summarize(&[100.0, 110.0, 120.0], 3).unwrap().minus(50.0);
        assert_eq!((s.median, s.p10, s.p90, s.mad), (60.0, 52.0, 68.0, 10.0));
    }

    #[test]
    fn time_rounds_times_every_call() {
        let mut calls = 0u64;
        let s = time_rounds(3, 10, |_| calls += 1).unwrap();
        assert_eq!(calls, 40, "a warm-up round and three timed ones");
        assert_eq!((s.rounds, s.iterations), (3, 30));
        assert!(s.median >= 0.0);
    }
}
