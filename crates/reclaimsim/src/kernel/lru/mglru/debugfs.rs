//! /sys/kernel/debug/lru_gen (Linux 6.1): the aging and eviction commands, for
//! working-set estimation and proactive reclaim, and the per-generation view.
//!
//! Commands are written as in the kernel, `+ memcg node seq [swappiness [force_scan]]`
//! and `- memcg node seq [swappiness [nr_to_reclaim]]`, separated by `,`, `;` or newlines,
//! except that the memcg is named by its path (`/`, `/a/b`) instead of its id, and `seq`
//! may also be `max` (max_seq when the command runs) or `max-N`.

use super::aging::{MM_LEAF_OLD, MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_ADDED};
use super::aging::{MM_NONLEAF_FOUND, MM_NONLEAF_TOTAL};
use super::gen::*;
use super::Mglru;
use crate::kernel::vmscan::ScanControl;
use crate::kernel::Kernel;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A generation named by a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqSpec {
    Abs(u64),
    /// max_seq minus this, when the command runs.
    Max(u64),
}

/// `+` runs the aging, `-` the eviction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Aging,
    Eviction,
}

/// One command written to /sys/kernel/debug/lru_gen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LruGenCmd {
    pub op: Op,
    /// The memcg's path.
    pub memcg: String,
    pub node: u32,
    pub seq: SeqSpec,
    /// None: the memcg's swappiness (get_swappiness).
    pub swappiness: Option<u32>,
    /// force_scan for `+` (default 1), nr_to_reclaim for `-` (default unlimited).
    pub opt: Option<u64>,
}

/// Parses what a scenario writes to lru_gen: one or more commands. Errors name the bad
/// command and part.
pub fn parse_commands(text: &str) -> Result<Vec<LruGenCmd>, String> {
    let mut cmds = Vec::new();
    for cur in text.split([',', ';', '\n']).map(str::trim) {
        if cur.is_empty() {
            continue;
        }
        let w: Vec<&str> = cur.split_whitespace().collect();
        let bad = |what: &str| format!("`{cur}`: {what}");
        if !(4..=6).contains(&w.len()) {
            return Err(bad(
                "expected `+|- MEMCG NODE SEQ [SWAPPINESS [OPT]]` (SEQ a number, max or max-N)",
            ));
        }
        let op = match w[0] {
            "+" => Op::Aging,
            "-" => Op::Eviction,
            _ => return Err(bad("the command must be + (aging) or - (eviction)")),
        };
        if !w[1].starts_with('/') {
            return Err(bad("the memcg must be a path such as / or /a"));
        }
        let node = w[2]
            .parse()
            .map_err(|_| bad("NODE must be a node number"))?;
        let seq = match w[3].strip_prefix("max") {
            Some("") => SeqSpec::Max(0),
            Some(d) => SeqSpec::Max(
                d.strip_prefix('-')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| bad("SEQ must be a number, max or max-N"))?,
            ),
            None => SeqSpec::Abs(
                w[3].parse()
                    .map_err(|_| bad("SEQ must be a number, max or max-N"))?,
            ),
        };
        let swappiness = match w.get(4) {
            None => None,
            Some(s) => Some(
                s.parse::<u32>()
                    .ok()
                    .filter(|&s| s <= 200)
                    .ok_or_else(|| bad("SWAPPINESS must be 0 to 200"))?,
            ),
        };
        let opt = match w.get(5) {
            None => None,
            Some(s) => Some(
                s.parse()
                    .map_err(|_| bad("the last field must be a number"))?,
            ),
        };
        cmds.push(LruGenCmd {
            op,
            memcg: w[1].to_string(),
            node,
            seq,
            swappiness,
            opt,
        });
    }
    if cmds.is_empty() {
        return Err("no command".into());
    }
    Ok(cmds)
}

impl Mglru {
    /// Models lru_gen_seq_write(): run the commands in order with a fresh scan_control
    /// and walk, stopping at the first error (an errno name).
    pub(super) fn run_cmds(
        &mut self,
        k: &mut Kernel,
        cmds: &[LruGenCmd],
    ) -> Result<(), &'static str> {
        let mut sc = ScanControl::new(u64::MAX, None, false);
        sc.priority = 0;
        self.alloc_mm_walk();
        let r = cmds.iter().try_for_each(|c| self.run_cmd(k, c, &mut sc));
        self.clear_mm_walk();
        r
    }

    /// Models run_cmd(): find the lruvec, default the swappiness, run the command.
    fn run_cmd(
        &mut self,
        k: &mut Kernel,
        c: &LruGenCmd,
        sc: &mut ScanControl,
    ) -> Result<(), &'static str> {
        let memcg = k.memcgs.by_path(&c.memcg).ok_or("EINVAL")?;
        if c.node as usize >= k.nr_nodes() {
            return Err("EINVAL");
        }
        let lv = k.lruvec(memcg, c.node as usize);
        let max_seq = self.lrugen[lv].max_seq;
        let seq = match c.seq {
            SeqSpec::Abs(s) => s,
            SeqSpec::Max(d) => max_seq.checked_sub(d).ok_or("EINVAL")?,
        };
        let swappiness = c.swappiness.unwrap_or_else(|| Self::get_swappiness(k, lv));
        match c.op {
            Op::Aging => self.run_aging(k, lv, seq, swappiness != 0, c.opt.is_none_or(|o| o != 0)),
            Op::Eviction => {
                self.run_eviction(k, lv, seq, sc, swappiness, c.opt.unwrap_or(u64::MAX))
            }
        }
    }

    /// Models run_aging() (6.1): only for seq == max_seq (older is a no-op, newer
    /// EINVAL); without force_scan, ERANGE if the generations are already full.
    fn run_aging(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        seq: u64,
        can_swap: bool,
        force_scan: bool,
    ) -> Result<(), &'static str> {
        let g = &self.lrugen[lv];
        let max_seq = g.max_seq;
        if seq < max_seq {
            return Ok(());
        }
        if seq > max_seq {
            return Err("EINVAL");
        }
        if !force_scan && g.min_seq[usize::from(!can_swap)] + MAX_NR_GENS - 1 <= max_seq {
            return Err("ERANGE");
        }
        self.try_to_inc_max_seq(k, lv, max_seq, can_swap, force_scan, false);
        Ok(())
    }

    /// Models run_eviction() (6.1): evict (no aging) until generation `seq` is gone,
    /// nr_to_reclaim pages are reclaimed, or nothing more can be. The two youngest
    /// generations cannot be evicted (EINVAL).
    fn run_eviction(
        &mut self,
        k: &mut Kernel,
        lv: usize,
        seq: u64,
        sc: &mut ScanControl,
        swappiness: u32,
        nr_to_reclaim: u64,
    ) -> Result<(), &'static str> {
        if seq + MIN_NR_GENS > self.lrugen[lv].max_seq {
            return Err("EINVAL");
        }
        sc.nr_reclaimed = 0;
        while seq >= self.lrugen[lv].min_seq[usize::from(swappiness == 0)]
            && sc.nr_reclaimed < nr_to_reclaim
            && self.evict_folios(k, lv, sc, swappiness) > 0
        {}
        Ok(())
    }

    /// The lruvec's MGLRU state for the results (what lru_gen_full shows).
    pub(super) fn state(&self, k: &Kernel, lv: usize, now: u64) -> LruGenState {
        let g = &self.lrugen[lv];
        let hist = |seq: u64| lru_hist_from_seq(seq);
        let by_type = |f: &dyn Fn(usize) -> [u64; MAX_NR_TIERS]| [f(ANON), f(FILE)];
        let st = &self.mm_state[lv];
        let s = &st.stats[lru_hist_from_seq(st.seq)];
        LruGenState {
            node: k.lruvecs[lv].node as u32,
            max_seq: g.max_seq,
            min_seq: g.min_seq,
            gens: self.gens_view(lv, now),
            avg_refaulted: g.avg_refaulted,
            avg_total: g.avg_total,
            refaulted: by_type(&|t| g.refaulted[hist(g.min_seq[t])][t]),
            evicted: by_type(&|t| g.evicted[hist(g.min_seq[t])][t]),
            protected: [
                g.protected[hist(g.min_seq[ANON])][ANON],
                g.protected[hist(g.min_seq[FILE])][FILE],
            ],
            mm_walk: MmWalkStats {
                seq: st.seq,
                leaf_total: s[MM_LEAF_TOTAL],
                leaf_old: s[MM_LEAF_OLD],
                leaf_young: s[MM_LEAF_YOUNG],
                nonleaf_total: s[MM_NONLEAF_TOTAL],
                nonleaf_found: s[MM_NONLEAF_FOUND],
                nonleaf_added: s[MM_NONLEAF_ADDED],
            },
        }
    }
}

/// One generation as /sys/kernel/debug/lru_gen prints it.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct LruGenGen {
    pub seq: u64,
    /// Milliseconds since the generation was born (virtual time).
    pub age_ms: u64,
    /// Pages of each type; 0 for a type whose min_seq is past this generation.
    pub anon: u64,
    pub file: u64,
}

/// The MGLRU state of one lruvec (struct lru_gen_struct and its mm walk state).
/// Per-type arrays are [anon, file]; per-tier arrays are tiers 0..=3, except
/// `protected`, tiers 1..=3 (tier 0 is never protected).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct LruGenState {
    pub node: u32,
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    pub gens: Vec<LruGenGen>,
    /// PID controller: the running averages, halved each time min_seq advances.
    pub avg_refaulted: [[u64; 4]; 2],
    pub avg_total: [[u64; 4]; 2],
    /// PID controller: the counters of the current oldest generation.
    pub refaulted: [[u64; 4]; 2],
    pub evicted: [[u64; 4]; 2],
    pub protected: [[u64; 3]; 2],
    pub mm_walk: MmWalkStats,
}

/// The page-table walk's mm_state: the last completed round and the 6.1 mm stats.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Default, PartialEq)]
pub struct MmWalkStats {
    pub seq: u64,
    pub leaf_total: u64,
    pub leaf_old: u64,
    pub leaf_young: u64,
    pub nonleaf_total: u64,
    pub nonleaf_found: u64,
    pub nonleaf_added: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_as_the_kernel_reads_them() {
        let c = parse_commands("+ /a 0 max; - / 1 max-2 0 1000\n").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0],
            LruGenCmd {
                op: Op::Aging,
                memcg: "/a".into(),
                node: 0,
                seq: SeqSpec::Max(0),
                swappiness: None,
                opt: None
            }
        );
        assert_eq!(c[1].seq, SeqSpec::Max(2));
        assert_eq!((c[1].swappiness, c[1].opt), (Some(0), Some(1000)));
        assert_eq!(
            parse_commands("- /a 0 17").unwrap()[0].seq,
            SeqSpec::Abs(17)
        );
        for bad in [
            "",
            "* /a 0 3",
            "+ a 0 3",
            "+ /a x 3",
            "+ /a 0 max+1",
            "+ /a 0 3 201",
            "+ /a 0 3 1 1 1",
        ] {
            assert!(parse_commands(bad).is_err(), "{bad}");
        }
    }
}
