//! The time series a run records (`Sample`): free memory, LRU sizes, MGLRU
//! generations and pressure, sampled at `sample_interval` or at an interval that
//! doubles as the run goes on.

use super::{Engine, LruGenView, Sample, AUTO_SAMPLES};
use crate::kernel::lru::mglru::debugfs::LruGenState;
use crate::kernel::memcg::MemcgId;
use std::collections::BTreeMap;

impl Engine {
    /// Per memcg path, the MGLRU state of its lruvec on each node, if the policy has one.
    pub(crate) fn lru_gen_states(&self, now: u64) -> BTreeMap<String, Vec<LruGenState>> {
        let mut out = BTreeMap::new();
        for (m, cg) in self.k.memcgs.cgs.iter().enumerate() {
            let states: Vec<LruGenState> = (0..self.k.nr_nodes())
                .filter_map(|n| {
                    let lv = self.k.lruvec(m as MemcgId, n);
                    self.p.lru_gen_state(&self.k, lv, now)
                })
                .collect();
            if !states.is_empty() {
                out.insert(cg.path.clone(), states);
            }
        }
        out
    }

    pub(super) fn take_samples(&mut self, clock: u64) {
        self.k.psi.tick(clock);
        while self.next_sample <= clock {
            let t = self.next_sample;
            self.next_sample += self.sample_every;
            let mut lru = BTreeMap::new();
            for (m, cg) in self.k.memcgs.cgs.iter().enumerate() {
                let mut v = [0u64; 4];
                for node in 0..self.k.nr_nodes() {
                    let lv = self.k.lruvec(m as MemcgId, node);
                    for (i, x) in v.iter_mut().enumerate() {
                        *x += self.k.lruvecs[lv].nr[i];
                    }
                }
                lru.insert(cg.path.clone(), v);
            }
            let lru_gen = Some(self.lru_gen_states(t))
                .filter(|m| !m.is_empty())
                .map(|m| {
                    m.into_iter()
                        .map(|(path, states)| {
                            let views = states
                                .into_iter()
                                .map(|st| LruGenView {
                                    node: st.node,
                                    gens: st.gens,
                                })
                                .collect();
                            (path, views)
                        })
                        .collect()
                });
            let pressure = (self.k.psi.sample(t).into_iter().enumerate())
                .map(|(m, p)| (self.k.memcgs.cgs[m].path.clone(), p))
                .collect();
            self.samples.push(Sample {
                time_s: t as f64 / 1e9,
                free_pages: self.k.free_pages(),
                lru,
                lru_gen,
                pressure,
            });
            if self.sample_auto && self.samples.len() > 2 * AUTO_SAMPLES {
                self.thin_samples();
            }
        }
    }

    /// Every other sample dropped and the interval doubled, so that a run of any length
    /// ends with `AUTO_SAMPLES` to twice as many, evenly spaced: with 2N+1 samples at
    /// 0, d, .., 2N*d, those at 0, 2d, .., 2N*d are kept and the next is at (2N+2)*d.
    pub(super) fn thin_samples(&mut self) {
        let mut keep = false;
        self.samples.retain(|_| {
            keep = !keep;
            keep
        });
        self.sample_every *= 2;
        self.next_sample = self.next_sample.next_multiple_of(self.sample_every);
    }
}
