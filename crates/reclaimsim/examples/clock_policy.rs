//! A reclaim policy of one's own in one Rust file: CLOCK (second chance) as a
//! `ReclaimPlugin`, run on a scenario whose `kernel.plugin.name` is "python" (the name
//! the library gives a plugin supplied by its caller):
//!
//!     cargo run --release -p reclaimsim --example clock_policy -- SCENARIO.toml
//!
//! It prints each variant's fio throughput and the plugin's counters.

use reclaimsim::engine::{EvictCtx, FolioRef, ReclaimPlugin, RunOptions};
use reclaimsim::kernel::lru::plugin::{Iter, ListId, Lists};
use std::collections::HashSet;

/// CLOCK: folios on a ring in the order they came; an accessed folio has its bit set,
/// and the hand, going round from the oldest, clears a set bit and passes on, or
/// proposes the folio when the bit is clear.
#[derive(Default)]
struct Clock {
    ring: Option<ListId>,
    referenced: HashSet<u32>,
}

impl ReclaimPlugin for Clock {
    fn init(&mut self, _memcg: &str, lists: &mut Lists) -> Result<(), String> {
        self.ring = Some(lists.new_list());
        Ok(())
    }

    fn folio_added(&mut self, folio: FolioRef, lists: &mut Lists) -> Result<(), String> {
        let ring = self.ring.ok_or("no ring")?;
        lists.add(ring, folio, true);
        Ok(())
    }

    fn folio_accessed(&mut self, folio: FolioRef, _lists: &mut Lists) -> Result<(), String> {
        self.referenced.insert(folio.pfn);
        Ok(())
    }

    fn folio_removed(&mut self, folio: FolioRef, _lists: &mut Lists) -> Result<(), String> {
        // The kernel takes it off the ring itself.
        self.referenced.remove(&folio.pfn);
        Ok(())
    }

    fn evict_folios(
        &mut self,
        ctx: &EvictCtx,
        lists: &mut Lists,
        out: &mut Vec<FolioRef>,
    ) -> Result<(), String> {
        let ring = self.ring.ok_or("no ring")?;
        let want = ctx.nr_to_reclaim as usize;
        // Twice round at most: the first pass may only clear bits.
        for _ in 0..2 {
            let mut passed = Vec::new();
            lists.iterate(ring, want, out, |_, f| {
                if self.referenced.remove(&f.pfn) {
                    passed.push(f);
                    Iter::Continue
                } else {
                    Iter::Evict
                }
            });
            // The hand passed these: behind it, at the ring's tail.
            for f in passed {
                lists.move_to(ring, f, true);
            }
            if out.len() >= want {
                break;
            }
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: clock_policy SCENARIO.toml")?;
    let text = std::fs::read_to_string(&path)?;
    let loaded = reclaimsim::scenario::parse_python(&text, &path, &[], None)?;
    for (name, s) in &loaded.variants {
        let opts = RunOptions {
            plugin: Some(Box::new(|| Box::new(Clock::default()))),
            ..Default::default()
        };
        let r = reclaimsim::results::run(s, name, opts)?;
        let ops: f64 = r.workloads.values().map(|w| w.ops_per_sec).sum();
        println!("{name}: {ops:.0} ops/s, plugin {:?}", r.plugin);
    }
    Ok(())
}
